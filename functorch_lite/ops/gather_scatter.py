"""The gather/scatter family (spec §9.8 IDX-01..05): ``gather``, ``scatter*``, ``index_select``,
``index_add``/``index_copy``/``index_fill``, ``take``, ``take_along_dim``, and the data-dependent
``masked_select``/``masked_scatter``/``nonzero``/``argwhere``/``where(cond)``.

Each public wrapper dispatches one op (defined here once); its in-place ``op_`` twin writes into ``self``.
Index values are bounds-checked on the host when not traced (JAX would clamp, IDX-05); boolean masks are
turned into flat integer positions on the host first, so the jitted ops never see data-dependent shapes.

Example::

    >>> x = torch.zeros(3, 4)
    >>> x.scatter_(1, torch.tensor([[0], [2], [3]]), 1.0)   # one 1 per row
    >>> torch.gather(x, 1, torch.tensor([[0], [2], [3]]))  # tensor([[1.], [1.], [1.]])
"""
from __future__ import annotations

import functools
import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._promotion import no_kernel
from .._warn import user_stacklevel as _user_stacklevel, warn_once
from . import grad_overrides as _go
from .._tensor.tensor import Tensor, _wrap_dim, with_memory_order
from ._dispatch import (_I64, _big_int, _type_name, broadcast_shapes, data_dependent_error, dispatch, inplace,
                        scalar_arg, stored_half, write_out)
from ._registry import OPS, _not_bool, defop
from .reduction import _rule_int64_narrow
from .fft_ops import tensor_arg
from .indexing import (_INT_INDEX, _Tracer, _at_index, _bounds, _dim_size, _host_tensor, _no_overlap, _oob, _out,
                       _rule_cast, _twin, _view, set_at)


# ---- gather / scatter / index_* / take ------------------------------------------------------------------
_SOURCE = {"scatter": 2, "scatter_reduce": 2, "index_add": 2, "index_copy": 2}  # checked for overlap in place


# out=: the tensor arguments (positions) ``out`` may share no memory with at all (torch's assert_no_overlap); the
# others (self, which the kernels copy into ``out`` first) only all of it, exactly. Else: the index and the source.
_OUT_APART = {"gather": (0,), "index_select": (0, 1)}


def _out_name(name: str, sargs: tuple) -> str:
    """The op name torch's out= checks word their errors with: scatter_add and scatter's ``reduce=`` overload run
    the scatter op (its reduce argument tells them apart)."""
    if name != "scatter":
        return name
    return "scatter" if sargs[1] is None else "scatter_add" if sargs[1] == "sum" else "scatter.reduce"


def _run(name: str, targs: tuple, sargs: tuple, out=None, in_place: bool = False):
    if in_place:
        if name in _SOURCE:
            _no_overlap(targs[0], targs[_SOURCE[name]])
        return inplace(OPS[name], targs, sargs)
    r = dispatch(OPS[name], targs, sargs)
    if out is None:
        return r
    apart = _OUT_APART.get(name, (1, 2))
    return _out(r, out, _out_name(name, sargs), tuple(a for k, a in enumerate(targs) if k not in apart),
                tuple(targs[k] for k in apart))


def _dim(d, fname: str):
    """A ``dim`` argument of ``fname``: a 0-d integer tensor is its int (torch's parser's ``operator.index``); a
    tensor with dims is the parser's TypeError (it reads no one-element 1-d tensor as an int)."""
    if isinstance(d, Tensor):
        if d._shape:
            raise TypeError(f"{fname}(): argument 'dim' (position 1) must be int, not Tensor")
        return operator.index(d)
    return d


def _tensor_arg(fname: str, name: str, pos: int, a, in_place: bool) -> None:
    """torch's argument-parser TypeError for a non-tensor ``a`` where ``fname``'s Tensor ``name`` goes (a Python
    number as index_add's source or gather's index; ``scatter_(dim, index, value)`` is scatter's own overload).
    The in-place form, a method, numbers it at ``pos``; the out-of-place one may be a call or a method (numbered
    differently), so its message names the argument only."""
    tensor_arg(fname + "_" if in_place else fname, name, a, pos if in_place else None)


def _need(t, allowed, msg, exc=RuntimeError):
    if t.dtype not in allowed:
        raise exc(msg)


_NO_KERNEL = D.UNSIGNED_WIDE | D.FLOAT8  # (torch's CPU gather/scatter/index kernels: none for these)


def _gather_kernel(x) -> str:
    """The kernel torch's gather refuses ``x``'s dtype with: a float8 1-d gather takes the expanded-index path."""
    return "gather_expanded_index" if x.ndim == 1 and x.dtype in D.FLOAT8 else "scatter_gather_tensor_cpu"


def _scatter_kernel(x, src, reduce, include_self) -> str | None:
    """The kernel torch's scatter / scatter_add / scatter_reduce (non-empty index) refuses ``x``'s dtype with, or
    None: no uint16/32/64 nor float8 kernel; amax / amin none for complex either, mean none for bool."""
    dt = x.dtype
    if dt in _NO_KERNEL and not include_self:
        return "scatter_reduce_exclude_input_init"
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce in ("amax", "amin", "mean"):
        if dt in _NO_KERNEL or dt is D.bool and reduce == "mean" or dt.is_complex and reduce != "mean":
            return f"scatter_gather_tensor_cpu_reduce_{reduce}"
        return None
    if dt in _NO_KERNEL:
        return "scatter_gather_tensor_cpu" if isinstance(src, Tensor) else "scatter_gather_scalar_cpu"
    return None


def _gather_prep(targs, sargs):
    x, index = targs
    d = _wrap_dim(_dim(sargs[0], "gather"), len(x._shape))
    _need(index, _INT_INDEX, "gather(): Expected dtype int32/int64 for index")
    if index.numel() == 0:
        return (d, False)
    if max(index.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k, (a, b) in enumerate(zip(index._shape, x._shape)):
        if k != d and a > b:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index._shape)} to be no "
                               f"larger than self {list(x._shape)} apart from dimension {d}")
    if x.dtype in _NO_KERNEL:
        raise no_kernel(_gather_kernel(x), x.dtype)
    return (d, False)


@defop("gather", kernel="scatter_gather_tensor_cpu", promote="index", grad_fn="GatherBackward0", tensors=2,
       method=False, function=False, saves=(0, 1), float8=True,  # (prep refuses a non-empty one: _NO_KERNEL)  # (torch's GatherBackward0 saves self: a change to it raises)
       half_grad=True,  # (its backward, a scatter_add, sums float16 / bfloat16 in float32)
       prep=_gather_prep, check=_bounds(1, _dim_size, False, _oob(RuntimeError)))
def _gather(input, index, dim, sparse_grad):
    """``out[i][j] = input[i][index[i][j]]`` along ``dim``."""
    if index.size == 0:
        return jnp.zeros(index.shape, input.dtype)
    x, i = jnp.atleast_1d(input), jnp.atleast_1d(index)
    src = x[tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(i.shape))]
    return jnp.take_along_axis(src, i, axis=dim).reshape(index.shape)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False, out=None) -> Tensor:
    """``torch.gather(x, 1, idx)``: ``out[i][j] = x[i][idx[i][j]]`` (GatherBackward0; idx int32/int64)."""
    _tensor_arg("gather", "index", 2, index, False)
    return _run("gather", (input, index), (dim, sparse_grad), out)


_SCATTER_NAME = {None: "scatter", "add": "scatter", "multiply": "scatter", "sum": "scatter_add"}  # (by reduce)


def _scatter_prep(targs, sargs):
    x, index, src = targs
    d = _wrap_dim(_dim(sargs[0], _SCATTER_NAME.get(sargs[1], "scatter_reduce")), len(x._shape))
    _need(index, _INT_INDEX, "scatter(): Expected dtype int32/int64 for index")
    is_t = isinstance(src, Tensor)
    if is_t and src.dtype is not x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.numel() == 0:
        if sargs[1] == "mean" and (x.dtype in _NO_KERNEL or x.dtype is D.bool):  # (torch divides by the counts)
            raise no_kernel("div_floor_cpu" if x.dtype is D.bool else "masked_fill", x.dtype)
        return (d,) + sargs[1:]
    nd = max(x.ndim, 1)
    if max(index.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if is_t and max(src.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    xs, ss = x._shape or (1,), (src._shape or (1,)) if is_t else None  # (a 0-d tensor: one element along dim 0)
    for k, a in enumerate(index._shape):
        if (k != d and a > xs[k]) or (is_t and a > ss[k]):
            tail = f" and to be no larger size than src {list(src._shape)}" if is_t else ""
            raise RuntimeError(f"Expected index {list(index._shape)} to be no larger than self {list(x._shape)} apart "
                               f"from dimension {d}{tail}")
    if not is_t:  # (a Python value, as the kernel converts it: checked as masked_fill's / index_fill's; a complex
        if type(src) is int and not -_I64 <= src < _I64:  # one into a real type must have no imaginary part)
            _big_int(src)  # (past uint64: the argument parser's OverflowError first)
        D.check_fits(src, x.dtype)
    kernel = _scatter_kernel(x, src, sargs[1], sargs[2])
    if kernel is not None:
        raise no_kernel(kernel, x.dtype)
    return (d,) + sargs[1:]


def _identity(reduce, dt):
    if reduce in ("sum", "mean", "prod"):
        return (jnp.ones if reduce == "prod" else jnp.zeros)((), dt)
    if jnp.issubdtype(dt, jnp.inexact):
        v = -jnp.inf if reduce == "amax" else jnp.inf
    elif dt == jnp.bool_:
        v = reduce == "amin"
    else:
        v = jnp.iinfo(dt).min if reduce == "amax" else jnp.iinfo(dt).max
    return jnp.asarray(v, dt)


_REDUCES = ("sum", "prod", "mean", "amax", "amin", "max", "min")  # (max / min: amax / amin without a derivative)


def _scatter_name(targs, sargs):
    if sargs[1] == "sum":
        return "ScatterAddBackward0"
    if sargs[1] is not None:  # scatter(..., reduce='add' | 'multiply'): PyTorch has no derivative
        return "NotImplemented"
    return "ScatterBackward0" if isinstance(targs[2], Tensor) else "ScatterBackward1"


_SCATTER_NO_GRAD = _go.aten_no_derivative("scatter")


def _positions(i, dim):
    """The scatter positions of index array ``i`` along ``dim`` (an index tuple for ``x.at[...]``)."""
    return tuple(i if k == dim else jax.lax.broadcasted_iota(i.dtype, i.shape, k) for k in range(i.ndim))


def _reduce_at(x, idx, v, how: str):
    """``x.at[idx].add(v)`` / ``.multiply(v)`` accumulated as PyTorch's CPU scatter kernels do: float16 / bfloat16
    in float32 (opmath), rounded once (``v``, a scalar too, is first converted to ``x``'s dtype)."""
    acc = D.opmath(x.dtype)
    if acc == x.dtype:
        return getattr(x.at[idx], how)(v)
    return getattr(x.astype(acc).at[idx], how)(jnp.asarray(v, x.dtype).astype(acc)).astype(x.dtype)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _scatter_prod(x, i, v, dim, include_self):
    """``scatter_reduce(x, dim, i, v, 'prod', include_self)`` (``v`` of ``i``'s shape), with PyTorch's gradient:
    exclusive products that are exact where ``x`` or ``v`` hold zeros (one or several per target), not JAX's
    (which has none for repeated indices)."""
    idx = _positions(i, dim)
    if not include_self:
        x = x.at[idx].set(jnp.ones((), x.dtype))
    return _reduce_at(x, idx, v, "multiply")


def _scatter_prod_fwd(x, i, v, dim, include_self):
    r = _scatter_prod(x, i, v, dim, include_self)
    return r, (x, i, v, r)


def _scatter_prod_bwd(dim, include_self, res, g):
    """PyTorch's ``scatter_reduce_backward`` for 'prod' (itself differentiable: it scatters with this op)."""
    x, i, v, r = res
    idx = _positions(i, dim)
    one = jnp.ones((), x.dtype)
    masked_self = jnp.where(x == 0, one, x)
    grad_self = g * _scatter_prod(masked_self, i, v, dim, include_self) / masked_self
    src_zero = v == 0
    n_zeros = jnp.zeros(x.shape, x.dtype).at[idx].add(src_zero.astype(x.dtype))[idx]
    single_zero = src_zero & (n_zeros == 1)
    masked_src_result = _scatter_prod(x, i, jnp.where(single_zero, one, v), dim, include_self)
    grad_src = jnp.where(single_zero, (g * masked_src_result)[idx], (g * r)[idx] / jnp.where(src_zero, one, v))
    if not include_self:
        grad_self = grad_self.at[idx].set(jnp.zeros((), x.dtype))
    return grad_self, None, grad_src


_scatter_prod.defvjp(_scatter_prod_fwd, _scatter_prod_bwd)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1, 2))
def _extreme_at(spec, reduce, include_self, x, v, *arrays):
    idx = _at_index(spec, arrays)
    if not include_self:
        x = x.at[idx].set(_identity(reduce, x.dtype))
    return x.at[idx].max(v) if reduce == "amax" else x.at[idx].min(v)


@_extreme_at.defjvp
def _extreme_at_jvp(spec, reduce, include_self, primals, tangents):
    """PyTorch's amax / amin backward (scatter_reduce, index_reduce): the gradient split evenly over the elements
    equal to the result, ``self``'s counted as one of them even where ``include_self=False`` (which then gives
    it no gradient)."""
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    idx = _at_index(spec, arrays)
    r = _extreme_at(spec, reduce, include_self, x, v, *arrays)
    self_is = (x == r).astype(x.dtype)
    src_is = (v == r[idx]).astype(x.dtype)
    n = self_is.at[idx].add(src_is)
    if not include_self:
        self_is = self_is.at[idx].set(jnp.zeros((), x.dtype))
    return r, (self_is * tx).at[idx].add(src_is * tv) / n


def extreme_at(x, idx: tuple, v, reduce: str, include_self: bool):
    """``x.at[idx].max(v)`` (``reduce`` 'amax') or ``.min(v)`` ('amin'; ``idx``: index arrays and full slices,
    ``v`` of ``x[idx]``'s shape; ``include_self=False``: ``x``'s values there left out) with PyTorch's gradient."""
    spec = tuple(not isinstance(i, slice) for i in idx)
    return _extreme_at(spec, reduce, include_self, x, v, *[i for i in idx if not isinstance(i, slice)])


_scatter_check = _bounds(1, _dim_size, False, _oob(RuntimeError))


def _scatter(input, index, src, dim, reduce, include_self):
    """Scatter ``src`` (tensor or scalar) into ``input`` at ``index`` along ``dim``, combining with ``reduce``:
    None (overwrite), 'add'/'sum', 'multiply'/'prod', 'amax', 'amin', 'mean' (``include_self``: keep input)."""
    if index.size == 0:
        return input
    if reduce in ("max", "min"):  # scatter_reduce's aliases of amax / amin: PyTorch's backward refuses them
        r = _scatter(jax.lax.stop_gradient(input), index, jax.lax.stop_gradient(src), dim, "a" + reduce, include_self)
        return _go.no_derivative("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got "
                                 f"{reduce}.")(r, input, src) if jnp.issubdtype(r.dtype, jnp.inexact) else r
    if input.dtype == jnp.bool_ and reduce not in (None, "mean"):
        # bool add is logical or, multiply logical and: run as uint8 max/min (jax has no bool scatter-add)
        r = _scatter(input.astype(jnp.uint8), index, jnp.asarray(src).astype(jnp.uint8), dim,
                     {"add": "amax", "sum": "amax", "multiply": "amin", "prod": "amin"}.get(reduce, reduce),
                     include_self)
        return r != 0
    x, i = jnp.atleast_1d(input), jnp.atleast_1d(index)
    idx = _positions(i, dim)
    v = src if jnp.ndim(src) == 0 else jnp.atleast_1d(src)[tuple(slice(0, n) for n in i.shape)]
    if reduce == "prod" and jnp.issubdtype(x.dtype, jnp.floating):
        return _scatter_prod(x, i, jnp.broadcast_to(v, i.shape), dim, include_self).reshape(input.shape)
    if reduce in ("amax", "amin") and jnp.issubdtype(x.dtype, jnp.floating):
        return extreme_at(x, idx, v, reduce, include_self).reshape(input.shape)
    no_grad = reduce in ("add", "multiply") and jnp.issubdtype(x.dtype, jnp.inexact)  # scatter's reduce: PyTorch
    if no_grad:  # has no derivative (and JAX's scatter-multiply has none for repeated indices)
        x, v = jax.lax.stop_gradient(x), jax.lax.stop_gradient(v)
    if not include_self:
        x = x.at[idx].set(_identity(reduce, x.dtype))
    at = x.at[idx]
    if reduce is None:
        r = set_at(x, idx, v)
    elif reduce in ("add", "sum"):
        r = _reduce_at(x, idx, v, "add")
    elif reduce in ("multiply", "prod"):
        r = _reduce_at(x, idx, v, "multiply")
    elif reduce in ("amax", "amin"):
        r = at.max(v) if reduce == "amax" else at.min(v)
    else:
        cnt = _reduce_at((jnp.ones if include_self else jnp.zeros)(x.shape, x.dtype), idx, jnp.ones(i.shape, x.dtype),
                         "add")
        safe = jnp.where(cnt == 0, jnp.ones((), x.dtype), cnt)
        total = _reduce_at(x, idx, v, "add")  # (rounded to x's dtype before the division, as PyTorch's)
        r = jnp.where(cnt == 0, x, total / safe if jnp.issubdtype(x.dtype, jnp.inexact) else total // safe)
    r = r.reshape(input.shape)
    if no_grad:
        return _SCATTER_NO_GRAD(r, *[a for a in (input, src) if isinstance(a, jax.Array)])
    return r


defop("scatter", kernel="scatter_gather_tensor_cpu", promote=_rule_cast(2), grad_fn=_scatter_name, tensors=3,
      method=False, function=False, saves=(1,), float8=True,  # (prep refuses: _scatter_kernel)
      prep=_scatter_prep, check=_scatter_check)(_scatter)
defop("scatter_reduce", kernel="scatter_gather_tensor_cpu", promote=_rule_cast(2), grad_fn="ScatterReduceBackward0",
      tensors=3, method=False, float8=True,
      function=False, saves=("all", "result"), prep=_scatter_prep, check=_scatter_check)(_scatter)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, value=None, *, reduce=None, out=None,
            _in_place: bool = False) -> Tensor:
    """``torch.scatter(x, dim, idx, src)``: ``out[i][idx[i][j]] = src[i][j]`` (a scalar ``value`` works too;
    ``reduce='add' | 'multiply'``)."""
    if reduce is not None and isinstance(src, Tensor):  # (PyTorch's TORCH_WARN_ONCE, ahead of its checks)
        warn_once("scatter_reduce_src", "The reduce argument of torch.scatter with Tensor src is deprecated and will "
                  "be removed in a future PyTorch release. Use torch.scatter_reduce instead for more reduction options. "
                  "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:225.)")
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    return _run("scatter", (input, index, value if src is None else src), (dim, reduce, True), out, _in_place)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor, *, out=None, _in_place: bool = False) -> Tensor:
    """``out[i][idx[i][j]] += src[i][j]`` (ScatterAddBackward0)."""
    _tensor_arg("scatter_add", "src", 3, src, _in_place)  # (scatter's machinery takes a value: scatter_'s)
    return _run("scatter", (input, index, src), (dim, "sum", True), out, _in_place)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str = None, *,
                   include_self: bool = True, out=None, _in_place: bool = False) -> Tensor:
    """``torch.scatter_reduce(x, 0, idx, src, 'amax', include_self=False)`` (sum/prod/mean/amax/amin)."""
    if reduce is None:  # (torch's argument parser, naming the in-place form too)
        raise TypeError(f'scatter_reduce{"_" if _in_place else ""}() missing 1 required positional arguments: '
                        '"reduce"')
    _tensor_arg("scatter_reduce", "src", 3, src, _in_place)
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _run("scatter_reduce", (input, index, src), (dim, reduce, bool(include_self)), out, _in_place)


def _index_select_prep(targs, sargs):
    x, index = targs
    d = _wrap_dim(_dim(sargs[0], "index_select"), len(x._shape))
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    _need(index, _INT_INDEX, "index_select(): Expected dtype int32 or int64 for index")
    if not x._shape and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    return (d,)


def _index_add_f32(nd: int, dim: int, alpha=1) -> bool:
    """Whether torch's ``index_add_`` into an ``nd``-dim ``self`` takes its scatter_add path, which sums float16 /
    bfloat16 in float32 and rounds once (a 2-d+ ``self``, dim 0 or the last, alpha 1); its 1-d kernel and its
    ``add_stub`` (another dim, alpha != 1) add in half, step by step. ``index_select``'s backward is this
    ``index_add_`` into zeros (its ``half_grad``)."""
    return nd > 1 and dim in (0, nd - 1) and alpha == 1


@defop("index_select", float8=True, promote="index", grad_fn="IndexSelectBackward0", tensors=2, method=False,
       function=False, half_grad=lambda sargs, sig: _index_add_f32(sig[0][0], sargs[0]),
       saves=(1,), prep=_index_select_prep,
       check=_bounds(1, _dim_size, False, lambda v, t, s, n: RuntimeError(
           f"INDICES element is out of DATA bounds, id={v} axis_dim={n}") if s[0] == 1 else  # (torch's dim-1 kernel)
           IndexError("index out of range in self")))
def _index_select(input, index, dim):
    """Whole slices of ``input`` along ``dim`` at the 0-d / 1-d ``index``."""
    return jnp.take(jnp.atleast_1d(input), index.reshape(-1), axis=dim).reshape(
        input.shape[:dim] + (index.size,) + input.shape[dim + 1:] if input.ndim else ())


def index_select(input: Tensor, dim: int, index: Tensor, *, out=None) -> Tensor:
    """``x.index_select(0, idx)`` (IndexSelectBackward0); ``idx`` int32/int64, 0-d or 1-d."""
    return _run("index_select", (input, index), (dim,), out)


def _src_dim(src, d):
    return src._shape[d] if src._shape else 1


def check_index_source(name, x, index, src, dim) -> int:
    """PyTorch's checks of ``name(self, dim, index, source)`` (index_add_, index_reduce_): the wrapped dim."""
    d = _wrap_dim(_dim(dim, name.rstrip("_")), len(x._shape))
    _need(index, _INT_INDEX, f"{name}(): Expected dtype int32/int64 for index but got: {index.dtype.short}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{index.dtype.short} and size: {list(index._shape)}")
    if src.dtype is not x.dtype:
        raise RuntimeError(f"{name}(): self ({x.dtype.short}) and source ({src.dtype.short}) must have the same "
                           "scalar type")
    n, m = index.numel(), _src_dim(src, d)
    if n != m:
        raise RuntimeError(f"{name}(): Number of indices ({n}) should be equal to source.size(dim): ({m}), for "
                           f"dim: {d}")
    if src.ndim != x.ndim or any(a != b for k, (a, b) in enumerate(zip(src._shape, x._shape)) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(x._shape)} source.shape = {list(src._shape)}")
    return d


def _index_add_prep(targs, sargs):
    x, index = targs[:2]
    d = check_index_source("index_add_", *targs, sargs[0])
    D.check_fits(sargs[2], x.dtype)  # (alpha, converted to self's dtype: torch's checked conversion)
    if x.dtype in _NO_KERNEL and (x.ndim <= 1 or index.numel()):  # (torch's kernel: per rank and dim)
        raise no_kernel("index_add_" if x.ndim <= 1 else "scatter_gather_tensor_cpu" if d in (0, x.ndim - 1) and
                        sargs[2] == 1 else "add_stub", x.dtype)  # (alpha 1: its scatter_add path)
    return (d,) + sargs[1:]


def _index_fill_prep(targs, sargs):
    x, index, value = targs
    if not isinstance(value, Tensor) and not isinstance(value, complex):
        D.check_fits(value, x.dtype)
    d = _wrap_dim(_dim(sargs[0], "index_fill"), len(x._shape))
    _need(index, (D.int64,), "index_fill_(): Expected dtype int64 for index.", IndexError)
    if x.dtype.category < D.COMPLEX and (isinstance(value, complex) or (
            isinstance(value, Tensor) and value.dtype.category == D.COMPLEX)):
        # (any complex number, even 1+0j, and a complex 0-d value tensor: torch takes its item)
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                           "dimension(s).")
    if x.dtype in D.UNSIGNED_WIDE:
        raise no_kernel("index_fill_cpu", x.dtype)
    return (d,) + sargs[1:]


def _index_copy_prep(targs, sargs):
    x, index, src = targs
    d = _wrap_dim(_dim(sargs[0], "index_copy"), len(x._shape))
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    _need(index, (D.int64,), f"index_copy_(): Expected a long tensor for index, but got {index.dtype.short}")
    if x.dtype in D.UNSIGNED_WIDE:
        raise no_kernel("index_copy_cpu", x.dtype)
    if src.dtype is not x.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{x.dtype.short} and (source) {src.dtype.short}")
    n, m = index.numel(), _src_dim(src, d)
    if n != m:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) ({m})")
    xs = [s for k, s in enumerate(x._shape) if k != d]
    ss = [s for k, s in enumerate(src._shape) if k != d]
    if xs != ss:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, xs))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, ss))} at dimension 0.")
    return (d,) + sargs[1:]


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _times_alpha(src, alpha):
    """``src * alpha`` of a float16 / bfloat16 ``src`` (alpha converted to its dtype: index_add's kernels), whose
    gradient is torch's IndexAddBackward0 ``grad.index_select(...) * alpha``: a half tensor times the number, in
    float32, rounded once (JAX's transpose would multiply by the rounded alpha)."""
    return src * jnp.asarray(alpha, src.dtype)


@_times_alpha.defjvp
def _times_alpha_jvp(alpha, primals, tangents):
    (src,), (t,) = primals, tangents
    return _times_alpha(src, alpha), (t.astype(jnp.float32) * jnp.asarray(alpha, jnp.float32)).astype(src.dtype)


def _index_along(input, index, src, dim, mode, alpha):
    """index_add / index_copy / index_fill: write (or add ``alpha * src``) into slices ``index`` along ``dim``."""
    if mode == "add" and input.dtype == jnp.bool_:  # bool add is logical or
        return _index_along(input.astype(jnp.uint8), index, jnp.asarray(src).astype(jnp.uint8), dim, "max",
                            alpha) != 0
    at = jnp.atleast_1d(input).at[(slice(None),) * dim + (index.reshape(-1),)]
    if mode == "max":
        r = at.max(src)
    elif mode == "add" and _index_add_f32(input.ndim, dim, alpha):  # torch's scatter_add path
        r = _reduce_at(input, (slice(None),) * dim + (index.reshape(-1),), src, "add")
    elif mode == "add":
        r = at.add(src if alpha == 1 else _times_alpha(src, alpha) if src.dtype in (jnp.float16, jnp.bfloat16)
                   else src * jnp.asarray(alpha, src.dtype))
    elif mode == "copy":  # (PyTorch's gradient: every source slice gets its destination's, repeated or not)
        r = set_at(jnp.atleast_1d(input), (slice(None),) * dim + (index.reshape(-1),), src)
    else:  # index_fill: JAX's gradient is PyTorch's (the value gets each distinct position's once)
        r = at.set(src)
    return r.reshape(input.shape)


defop("index_add", kernel="add_stub", promote=_rule_cast(2), grad_fn="IndexAddBackward0", tensors=3, method=False,
      function=False, float8=True,
      saves=(1,), prep=_index_add_prep, check=_bounds(1, _dim_size, False, lambda v, t, s, n: (
          IndexError("index out of range in self") if len(t[0]._shape) <= 1 else _oob(RuntimeError)(v, t, s, n))))(
    _index_along)
defop("index_copy", kernel="index_copy_cpu", promote=_rule_cast(2), grad_fn="IndexCopyBackward0", tensors=3,
      method=False, function=False,
      saves=(1,), prep=_index_copy_prep, autocast={"cpu": "promote"},
      check=_bounds(1, _dim_size, False, _oob(IndexError, "index_copy_(): ")))(_index_along)
defop("index_fill", kernel="index_fill_cpu", promote=_rule_cast(2), tensors=3, method=False, function=False, saves=(1,),
      grad_fn=lambda targs, sargs: "IndexFillBackward1" if isinstance(targs[2], Tensor) else "IndexFillBackward0",
      prep=_index_fill_prep, check=_bounds(1, _dim_size, True, _oob(IndexError)),
      aliased_write_ok=(lambda targs, sargs: _index_along(jnp.zeros(targs[0]._shape, jnp.bool_), targs[1]._array,
                                                          True, sargs[0], "fill", 1), 1913))(_index_along)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1, out=None,
              _in_place: bool = False) -> Tensor:
    """``x.index_add(0, idx, src)``: ``x[idx[i]] += alpha * src[i]`` along ``dim`` (IndexAddBackward0)."""
    _tensor_arg("index_add", "source", 3, source, _in_place)
    if isinstance(alpha, Tensor):  # (a 0-d tensor: its number, which the kernel branches on)
        alpha = scalar_arg(alpha, "index_add_" if _in_place else "index_add", "alpha")
    return _run("index_add", (input, index, source), (dim, "add", alpha), out, _in_place)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor, *, out=None, _in_place: bool = False) -> Tensor:
    """``x.index_copy(0, idx, src)``: ``x[idx[i]] = src[i]`` along ``dim`` (IndexCopyBackward0)."""
    _tensor_arg("index_copy", "source", 3, source, _in_place)
    return _run("index_copy", (input, index, source), (dim, "copy", 1), out, _in_place)


def index_fill(input: Tensor, dim: int, index: Tensor, value, *, _in_place: bool = False) -> Tensor:
    """``x.index_fill(1, idx, -1.)``: fill slices along ``dim`` (value: a number or a 0-d tensor)."""
    return _run("index_fill", (input, index, value), (dim, "fill", 1), None, _in_place)


def _take_prep(targs, sargs):
    _need(targs[1], (D.int64,), f"take(): Expected a long tensor for index, but got {targs[1].dtype.short}")
    if targs[0].dtype in _NO_KERNEL and targs[1].numel():
        raise no_kernel("take_cpu", targs[0].dtype)
    return sargs


@defop(required=True, kernel="take_cpu", promote="index", grad_fn="TakeBackward0", tensors=2, saves=(0, 1),
       prep=_take_prep, float8=True,
       check=_bounds(1, lambda targs, sargs: targs[0].numel(), True, lambda v, t, s, n: IndexError(
           f"out of range: tried to access index {v} on a tensor of {n} elements.")))
def take(input, index):
    """``torch.take(x, idx)``: ``x.flatten()[idx]`` in ``idx``'s shape (negative indices count from the end)."""
    return input.reshape(-1)[index]


def _take_along_prep(targs, sargs):
    x, idx = targs
    if idx.dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {idx.dtype.short}")
    if sargs[0] is None:
        if x.dtype in _NO_KERNEL and idx.numel():  # (a gather of the flattened input)
            raise no_kernel("gather_expanded_index" if x.dtype in D.FLOAT8 else "scatter_gather_tensor_cpu", x.dtype)
        return sargs
    if not x._shape:
        raise IndexError(f"Dimension specified as {_dim(sargs[0], 'take_along_dim')} but tensor has no dimensions")
    d = _wrap_dim(_dim(sargs[0], "take_along_dim"), len(x._shape))
    if x.ndim != idx.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, but "
                           f"got {x.ndim} dimensions for input, and {idx.ndim} dimensions for indices")
    broadcast_shapes(x._shape[:d] + idx._shape[d:d + 1] + x._shape[d + 1:], idx._shape)
    if x.dtype in _NO_KERNEL and idx.numel():
        raise no_kernel(_gather_kernel(x), x.dtype)
    return (d,)


@defop(required=True, kernel="scatter_gather_tensor_cpu", promote="index", grad_fn="GatherBackward0", tensors=2,
       saves=(0, 1), prep=_take_along_prep, float8=True, half_grad=False,  # (the body's own float32: below)
       check=lambda targs, sargs: None if sargs[0] is not None else _bounds(
           1, lambda targs, sargs: targs[0].numel(), False,
           lambda v, t, s, n: RuntimeError(f"index {v} is out of bounds for dimension 0 with size {n}"))(targs, sargs))
def take_along_dim(input, indices, dim=None):
    """``torch.take_along_dim(x, idx, dim)``: gather with broadcasting (``dim=None``: on the flattened input).

    float16 / bfloat16 gather in float32 (the same values), so that the gradient is torch's: its gather's backward,
    a scatter_add that sums in float32, rounded to half, then (a broadcast input) its expand's ``sum_to_size``, in
    float32 again."""
    half = input.dtype in (jnp.float16, jnp.bfloat16)
    x = input.astype(jnp.float32) if half else input
    if dim is None:
        r = jnp.take(x.reshape(-1), indices.reshape(-1))
    else:
        b = np.broadcast_shapes(input.shape[:dim] + indices.shape[dim:dim + 1] + input.shape[dim + 1:], indices.shape)
        xs = b[:dim] + input.shape[dim:dim + 1] + b[dim + 1:]
        n = input.shape[dim]
        if n:  # PyTorch takes the indices modulo the size of ``dim`` (-1 is the last, 4 of 4 the first)
            indices = jnp.remainder(indices, jnp.asarray(n, indices.dtype))
        x = jnp.broadcast_to(x, xs)
        if half and xs != input.shape:  # (the gradient rounded between the two sums)
            x = stored_half(x, input.dtype)
        r = jnp.take_along_axis(x, jnp.broadcast_to(indices, b), axis=dim)
    return r.astype(input.dtype) if half else r


# ---- data-dependent: masked_select / masked_scatter / nonzero / where(cond) --------------------------------
@defop("masked_select", float8=True, promote="index", grad_fn="MaskedSelectBackward0", tensors=2, method=False,
       function=False,
       saves=())
def _masked_select(input, flat, shape):
    """The elements of ``input`` (broadcast to ``shape``) at flat positions ``flat`` (host-computed)."""
    return jnp.broadcast_to(input, shape).reshape(-1)[flat]


def _check_mask(mask, name):
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool:
        raise RuntimeError(f"{name}: expected BoolTensor for mask")


def masked_select(input: Tensor, mask: Tensor, *, out=None) -> Tensor:
    """``x[mask]`` with broadcasting: a 1-d copy (its length depends on the mask's values)."""
    _check_mask(mask, "masked_select")
    shape = broadcast_shapes(mask._shape, input._shape)
    flat = np.flatnonzero(np.broadcast_to(mask._host(), shape))
    r = dispatch(OPS["masked_select"], (input, _host_tensor(flat, D.int64, input.device)), (shape,))
    return r if out is None else write_out(out, r, "masked_select")


@defop("masked_scatter", kernel="masked_scatter", promote=_rule_cast(1), grad_fn="MaskedScatterBackward0", tensors=3,
       method=False, function=False, saves=(), check=lambda targs, sargs: _masked_scatter_check(*targs[1:], *sargs))
def _masked_scatter(input, source, mask, shape):
    """``input`` (broadcast to ``shape``) with the positions where ``mask`` holds taken from ``source`` in row-major
    order: the k-th True reads ``source``'s k-th element (a running count, so no value decides a shape: it traces
    in compile and batches under vmap)."""
    m = jnp.broadcast_to(mask, shape).reshape(-1)
    base = jnp.broadcast_to(input, shape).reshape(-1)
    src = source.reshape(-1)
    if src.size == 0:
        return base.reshape(shape)  # (no True allowed: the check)
    k = jnp.clip(jnp.cumsum(m.astype(jnp.int64)) - 1, 0, src.size - 1)
    return jnp.where(m, src[k], base).reshape(shape)


def _masked_scatter_check(source, mask, shape):
    """torch's count check: fewer source elements than True entries raises (in a compiled function, the program
    checks it)."""
    arr = mask._array
    n = source.numel()
    if isinstance(arr, _Tracer):
        from . import _deferred
        total = jnp.sum(jnp.broadcast_to(arr, shape).astype(jnp.int64))
        _deferred.check(jnp.reshape(total > n, (1,)), jnp.reshape(total, (1,)),
                        lambda v, p: RuntimeError("Number of elements of source < number of ones in mask"))
        return
    if int(np.count_nonzero(np.broadcast_to(mask._host(), shape))) > n:
        raise RuntimeError("Number of elements of source < number of ones in mask")


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor, *, _in_place: bool = False) -> Tensor:
    """Copy ``source``'s leading elements into ``input`` where ``mask`` is True, in row-major order."""
    if mask.dtype is not D.bool:
        if mask.dtype is D.uint8:  # (torch warns of the deprecated uint8 mask, then refuses it)
            warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior is now deprecated,"
                          "please use a mask with dtype torch.bool instead. (Triggered internally at /__w/pytorch/"
                          "pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:3130.)", UserWarning,
                          stacklevel=_user_stacklevel())
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype.short}")
    if source.dtype is not input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{input.dtype.short} and {source.dtype.short}")
    shape = input._shape if _in_place else broadcast_shapes(input._shape, mask._shape)
    m = _view(mask, "expand", (shape,)) if _in_place else mask  # in place: the mask must expand to self
    return _run("masked_scatter", (input, source, m), (shape,), None, _in_place)


def _nonzero_check(targs, sargs):
    if isinstance(targs[0]._array, _Tracer):
        raise data_dependent_error("torch.nonzero (output shape depends on values)", targs[0]._array,
                                   vmap=_vmap_dynamic("aten::nonzero"))


def _vmap_dynamic(op: str) -> str:
    """torch's vmap refusal of an op whose output shape depends on values."""
    return (f"vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over {op}. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues if you need this feature.")


@defop("nonzero", kernel="nonzero_count_cpu", promote=_rule_int64_narrow, tensors=1, method=False, function=False,
       eager=True, differentiable=False, check=_nonzero_check)
def _nonzero(input):
    """(n, ndim) int64 coordinates of the non-zero elements (eager: n depends on the values)."""
    if input.ndim == 0:
        return jnp.zeros((int(input != 0), 0), jnp.int64)
    return jnp.stack(jnp.nonzero(input), axis=1)


_META_NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
                 "data-independent implementation does not exist. This implementation returns a fake value, assuming "
                 "all elements of the tensor are non-zero. To enable this registration, please set "
                 "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def _coords(input: Tensor) -> Tensor:
    """nonzero's (n, ndim) result laid out as PyTorch's CPU kernel writes it: dim by dim, strides (1, n) (so
    ``nonzero().view(-1)`` raises there, and ``as_tuple``'s parts are contiguous). A meta tensor has no values to
    count: torch's meta registration refuses it."""
    if input.device.type == "meta":
        raise NotImplementedError(_META_NONZERO)
    r = dispatch(OPS["nonzero"], (input,), ())
    return with_memory_order(r, (1, 0), (1, r._shape[0]))


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """``torch.nonzero(x)``: int64 (n, ndim); ``as_tuple=True``: one 1-d tensor per dim (0-d acts as 1-d)."""
    if type(as_tuple) is not bool:
        _not_bool("nonzero", ("as_tuple",), (as_tuple,))
    if not as_tuple:
        r = _coords(input)
        if out is None:
            return r
        resized = out._shape != r._shape
        write_out(out, r, "nonzero")
        return with_memory_order(out, (1, 0), r._strides) if resized else out  # (torch lays a resized out so too)
    src = input if input._shape else _view(input, "unsqueeze", (0,))
    r = _coords(src)
    return tuple(_view(r, "select", (1, j)) for j in range(src.ndim))


@defop("nonzero_static", kernel="nonzero_count_cpu", promote="int64", tensors=1, method=False, function=False,
       differentiable=False)
def _nonzero_static(input, size, fill_value):
    """(size, ndim) int64 coordinates of the first ``size`` non-zero elements, rows past them ``fill_value``."""
    if input.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    return jnp.stack(jnp.nonzero(input, size=size, fill_value=fill_value), axis=1).astype(jnp.int64)


def nonzero_static(input: Tensor, *, size: int = None, fill_value: int = -1) -> Tensor:
    """``torch.nonzero_static(x, size=n, fill_value=-1)``: ``nonzero`` with a fixed number of rows (truncated, or
    padded with ``fill_value``): its shape does not depend on the values, so it compiles without a graph break."""
    if size is None:
        raise TypeError('nonzero_static() missing 1 required positional arguments: "size"')
    for name, v in (("size", size), ("fill_value", fill_value)):
        if type(v) is not int and not (hasattr(v, "__index__") and not isinstance(v, (bool, Tensor))):
            raise TypeError(f"nonzero_static(): argument '{name}' must be int, not {_type_name(v)}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return dispatch(OPS["nonzero_static"], (input,), (int(size), int(fill_value)))


def argwhere(input: Tensor) -> Tensor:
    """``torch.argwhere(x)`` = ``torch.nonzero(x)``."""
    return _coords(input)


def where(condition: Tensor, input=None, other=None, *, out=None):
    """``torch.where(cond, x, y)`` (the ``where`` op) or ``torch.where(cond)`` = ``nonzero(cond, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() received an invalid combination of arguments - expected (Tensor condition) or "
                        "(Tensor condition, Tensor input, Tensor other)")
    r = dispatch(OPS["where"], (condition, input, other), ())
    return r if out is None else write_out(out, r, "where")


def _where_method(self: Tensor, condition: Tensor, other) -> Tensor:
    """``x.where(cond, y)`` = ``torch.where(cond, x, y)``."""
    return dispatch(OPS["where"], (condition, self, other), ())


_PUBLIC = (gather, scatter, scatter_add, scatter_reduce, index_select, index_add, index_fill, index_copy,
           masked_select, masked_scatter, nonzero, nonzero_static, argwhere)
_TWINS = (scatter, scatter_add, scatter_reduce, index_add, index_fill, index_copy, masked_scatter)
METHODS = {f.__name__: f for f in _PUBLIC}
METHODS.update({f.__name__ + "_": _twin(f) for f in _TWINS})
METHODS["where"] = _where_method
FUNCTIONS = {f.__name__: f for f in _PUBLIC}
FUNCTIONS["where"] = where
