"""Tensor and top-level gaps (PyTorch names and behaviour): the in-place view ops (``unsqueeze_``, ``squeeze_``,
``t_``, ``transpose_``/``swapaxes_``/``swapdims_``), the ``*_copy`` functions (a view op followed by a copy),
``narrow_copy``, ``unsafe_split``/``unsafe_chunk``/``unsafe_split_with_sizes``, the scatter variants
(``slice_scatter``, ``select_scatter``, ``diagonal_scatter``, ``index_reduce``, ``put``, top-level ``index_put_``),
``renorm``, ``sum_to_size``, ``ldexp``, ``frexp``, ``nextafter``, ``fix``, ``isreal``, ``Tensor.new``,
``scalar_tensor`` and top-level ``zero_``/``detach``/``detach_``. ``histogram``, ``unravel_index`` and
``gradient`` live in ``tensor_math.py``; the random in-place fills in ``random_fill.py``.

An in-place view op changes the tensor's own view metadata (shape, strides, view chain) and keeps its identity
and storage: ``x.t_() is x``, ``_version`` + 1. Its autograd node is the out-of-place view's node under PyTorch's
in-place name (``TBackward1``, ``UnsqueezeBackward1``, ``SqueezeBackward3/4/5``, ``TransposeBackward1``).

Example::

    >>> x = torch.zeros(3, 4)
    >>> x.t_().shape, x.stride()
    (torch.Size([4, 3]), (1, 4))
"""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp

from .. import _promotion as P
from .. import dtypes as D
from .._tensor import views as V
from .._tensor.storage import SET_LOG as _SET_LOG, log_attrs as _log_attrs
from .._tensor.tensor import DATA_FIELDS, Tensor, _wrap_dim
from ..autograd import grad_mode as _gm
from ..autograd import graph as _graph
from . import _dispatch
from . import strided as _strided
from . import view_ops as VO
from ._dispatch import _type_name, dispatch
from ._registry import OPS, defop
from .gather_scatter import check_index_source, extreme_at
from .grad_overrides import aten_no_derivative
from .elementwise import _tensors_only
from .indexing import _bounds, _dim_size, _rule_cast, _tp_name, _twin, index_put, set_at
from .reduction import _structseq, return_types as RT

RT.frexp = _structseq("frexp", ("mantissa", "exponent"))
RT.frexp._out_type = RT.frexp_out = _structseq("frexp_out", ("mantissa", "exponent"))


# ---- in-place view ops -------------------------------------------------------------------------------------------
def _inplace_view(self, op_name, sargs, grad_fn):
    """``self`` becomes its own view ``op_name(self, *sargs)``: same storage, new shape/strides/chain."""
    if not isinstance(self, Tensor):
        raise TypeError(f"{op_name}_(): argument 'input' (position 1) must be Tensor, not {_type_name(self)}")
    _graph.check_inplace(self)
    v = dispatch(OPS[op_name], (self,), sargs)
    if _SET_LOG[0] is not None:  # compile tracks header changes as it does ``.data =``
        _log_attrs(self, DATA_FIELDS)
    if v is not self:
        self._shape, self._strides, self._offset, self._chain = v._shape, v._strides, v._offset, v._chain
        self._cache = None
        self._idx = None
    self._storage.version += 1
    node = v._grad_fn  # (as recorded: the version bump above is this op's own, not a write ``regraph`` redoes)
    if node is not None and v is not self:
        node.__class__ = _graph.node_class(grad_fn)  # PyTorch names the in-place view's node apart
        self.grad_fn = node
        self._requires_grad = True
        self._out_nr = 0
    return self


def unsqueeze_(self, dim):
    """``x.unsqueeze_(d)``: a size-1 dim inserted in place (UnsqueezeBackward1)."""
    return _inplace_view(self, "unsqueeze", (dim,), "UnsqueezeBackward1")


def squeeze_(self, dim=None):
    """``x.squeeze_()`` / ``x.squeeze_(d)`` / ``x.squeeze_((d0, d1))``: size-1 dims dropped in place
    (SqueezeBackward3 / 4 / 5)."""
    name = "SqueezeBackward3" if dim is None else ("SqueezeBackward5" if isinstance(dim, (tuple, list))
                                                   else "SqueezeBackward4")
    return _inplace_view(self, "squeeze", (dim,), name)


def t_(self):
    """``x.t_()``: transposed in place (0-d, 1-d and 2-d tensors; TBackward1)."""
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _inplace_view(self, "t", (), "TBackward1")


def as_strided_(self, size, stride, storage_offset=None):
    """``x.as_strided_(size, stride, offset)``: ``x`` becomes that view of its storage (AsStridedBackward1)."""
    return _inplace_view(self, "as_strided", (size, stride, storage_offset), "AsStridedBackward1")


def transpose_(self, dim0, dim1):
    """``x.transpose_(d0, d1)`` (also ``swapaxes_`` / ``swapdims_``): two dims swapped in place
    (TransposeBackward1)."""
    return _inplace_view(self, "transpose", (dim0, dim1), "TransposeBackward1")


def swapaxes_(self, axis0, axis1):
    return transpose_(self, axis0, axis1)


def swapdims_(self, dim0, dim1):
    return transpose_(self, dim0, dim1)


# ---- *_copy: a view op, then a copy (a fresh tensor; grad_fn "<ViewNode>_copy") ------------------------------------
def _copy_name(vop):
    def name(targs, sargs):
        g = vop.grad_fn
        if callable(g):
            g = g(targs, sargs)
        elif type(g) is tuple:
            g = g[0]
        return g + "_copy"
    return name


def _copy_prep(vop, validate=True):
    def prep(targs, sargs):
        if not isinstance(targs[0], Tensor):
            raise TypeError(f"{vop.name}_copy(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(targs[0]).__name__}")
        if vop.prep is not None:
            sargs = vop.prep(targs, sargs)
        if validate:
            vop.view(targs[0], sargs)  # the view's own errors (its metadata is not used)
        return sargs
    return prep


def _copy_op(view_name, grad_fn=None, name=None, prep=None, impl=None):
    vop = OPS[view_name]
    return defop(name or view_name + "_copy", promote=vop.promote, grad_fn=grad_fn or _copy_name(vop),
                 prep=prep or _copy_prep(vop), method=False, float8=True, saves=())(impl or vop.impl)


def _view_copy_prep(targs, sargs):
    t = targs[0]
    (shape,) = VO._view_prep(targs, sargs)
    if isinstance(shape, D.dtype):
        if t._chain is None and not t._offset:
            VO._view_dtype_meta(t, shape)
        return (shape,)
    V.infer_shape(shape, t.numel())  # view_copy reshapes: any layout may be copied
    return (shape,)


view_copy = _copy_op("view", prep=_view_copy_prep)
permute_copy = _copy_op("permute")
transpose_copy = _copy_op("transpose")
t_copy = _copy_op("t")
squeeze_copy = _copy_op("squeeze")
unsqueeze_copy = _copy_op("unsqueeze")
expand_copy = _copy_op("expand")
select_copy = _copy_op("select")
diagonal_copy = _copy_op("diagonal")
unfold_copy = _copy_op("tensor_unfold", name="unfold_copy")
view_as_real_copy = _copy_op("view_as_real")
narrow_copy = _copy_op("narrow", grad_fn="NarrowCopyBackward0")
as_strided_copy = _copy_op("as_strided")


def _vac_prep(targs, sargs):
    t = targs[0]
    if isinstance(t, Tensor) and t._requires_grad and _gm.is_grad_enabled():
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return _copy_prep(OPS["view_as_complex"])(targs, sargs)


view_as_complex_copy = _copy_op("view_as_complex", prep=_vac_prep)


def _slice_args(t, dim, start, end, step):
    """PyTorch's ``slice`` arguments normalised: (dim, start, stop, step) clamped into the dim, step > 0."""
    d = _wrap_dim(dim, t.dim())
    n = t._shape[d]
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start = 0 if start is None else start.__index__()
    end = n if end is None else end.__index__()
    start = min(max(start + n if start < 0 else start, 0), n)
    end = min(max(end + n if end < 0 else end, start), n)
    return d, start, end, step


def _slice_copy_prep(targs, sargs):
    return _slice_args(targs[0], *sargs)


def _slice_copy(input, dim=0, start=None, end=None, step=1):
    return OPS["slice"].impl(input, dim, start, end, step)


slice_copy = _copy_op("slice", prep=_slice_copy_prep, impl=_slice_copy)


def _alias_copy_impl(input):
    return input


alias_copy = defop("alias_copy", grad_fn="AliasBackward0_copy", method=False, float8=True, saves=())(_alias_copy_impl)


_DETACH_COPY_NO_GRAD = aten_no_derivative("detach_copy")


@defop(grad_fn="NotImplemented", method=False, float8=True, saves=())
def detach_copy(input):
    """``torch.detach_copy``: a copy whose grad_fn is PyTorch's ``NotImplemented`` (backward raises)."""
    return _DETACH_COPY_NO_GRAD(input) if jnp.issubdtype(input.dtype, jnp.inexact) else input


# ---- split copies: split_copy / split_with_sizes_copy / unbind_copy / unsafe_split* (one node, fresh tensors) --
_SPLIT_NAMES = {"split": "SplitBackward0_copy", "split_with_sizes": "SplitWithSizesBackward0_copy",
                "unbind": "UnbindBackward0_copy", "unsafe_split": "UnsafeSplitBackward0",
                "unsafe_split_with_sizes": "UnsafeSplitWithSizesBackward0"}
_split_rows = OPS["split_with_sizes"]
defop("split_with_sizes_copy", promote=_split_rows.promote, grad_fn=lambda targs, sargs: _SPLIT_NAMES[sargs[2]],
      nout=0, method=False, function=False, float8=True, saves=())(_split_rows.impl)


def _pieces(t, kind, d, sizes):
    return dispatch(OPS["split_with_sizes_copy"], (t,), (d, tuple(sizes), kind))


def _split_sizes(tensor, split_size_or_sections, dim):
    """The piece sizes ``tensor.split(...)`` makes (its own argument errors), without recording anything."""
    from .movement import split
    with _gm.no_grad():
        parts = split(tensor, split_size_or_sections, dim)
    d = _wrap_dim(dim, tensor.dim())
    return d, [p._shape[d] for p in parts]


def split_copy(tensor, split_size, dim=0):
    """``torch.split_copy``: the pieces of ``split`` as fresh tensors (SplitBackward0_copy)."""
    d, sizes = _split_sizes(tensor, split_size, dim)
    return _pieces(tensor, "split", d, sizes)


def split_with_sizes_copy(input, split_sizes, dim=0):
    d, sizes = _split_sizes(input, list(split_sizes), dim)
    return _pieces(input, "split_with_sizes", d, sizes)


def unbind_copy(input, dim=0):
    d = _wrap_dim(dim, input.dim())
    return _pieces(input, "unbind", d, [1] * input._shape[d])


def unsafe_split(tensor, split_size, dim=0):
    """``torch.unsafe_split``: ``split`` without view tracking (fresh tensors; UnsafeSplitBackward0)."""
    d, sizes = _split_sizes(tensor, split_size, dim)
    return _pieces(tensor, "unsafe_split", d, sizes)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    d, sizes = _split_sizes(input, list(split_sizes), dim)
    return _pieces(input, "unsafe_split_with_sizes", d, sizes)


def unsafe_chunk(input, chunks, dim=0):
    """``torch.unsafe_chunk``: ``chunk`` without view tracking (UnsafeSplitBackward0)."""
    from .movement import chunk
    d = _wrap_dim(dim, input.dim())
    with _gm.no_grad():
        sizes = [p._shape[d] for p in chunk(input, chunks, d)]
    return _pieces(input, "unsafe_split", d, sizes)


# ---- scatter variants ----------------------------------------------------------------------------------------------
def _check_src(src, shape):
    if tuple(src._shape) != tuple(shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{V.shape_str(src._shape)}, slice size = {V.shape_str(shape)}")


def _slice_scatter_prep(targs, sargs):
    t, src = targs
    d, start, stop, step = _slice_args(t, *sargs)
    shape = list(t._shape)
    shape[d] = len(range(start, stop, step))
    _check_src(src, shape)
    return d, start, stop, step


@defop(promote=_rule_cast(1), grad_fn="SliceScatterBackward0", tensors=2, prep=_slice_scatter_prep, saves=(),
       broadcast=False, float8=True)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``torch.slice_scatter(x, src, dim, start, end, step)``: a copy of ``x`` with ``x[.., start:end:step, ..]``
    (along ``dim``) replaced by ``src``."""
    idx = (slice(None),) * dim + (slice(start, end, step),)
    return input.at[idx].set(src)


def _select_scatter_prep(targs, sargs):
    t, src = targs
    d, index = VO._select_prep((t,), sargs)
    _check_src(src, t._shape[:d] + t._shape[d + 1:])
    return d, index


@defop(promote=_rule_cast(1), grad_fn="SelectScatterBackward0", tensors=2, prep=_select_scatter_prep, saves=(),
       broadcast=False, float8=True, out=False)
def select_scatter(input, src, dim, index):
    """``torch.select_scatter(x, src, dim, index)``: a copy of ``x`` with ``x.select(dim, index)`` = ``src``."""
    return input.at[(slice(None),) * dim + (index,)].set(src)


def _as_strided_scatter_prep(targs, sargs):
    """PyTorch's ``as_strided_scatter``: ``input.clone()`` (a dense input keeps its layout, another becomes
    contiguous), then ``.as_strided(size, stride, storage_offset).copy_(src)`` on the clone's storage."""
    t, src = targs
    size, stride, offset = sargs
    size, stride = _strided._ints(size), _strided._ints(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    offset = 0 if offset is None else int(offset)
    n, isz = t.numel(), t.dtype.itemsize
    need = 0 if 0 in size else offset + sum((k - 1) * st for k, st in zip(size, stride)) + 1
    if need > n:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {isz} requiring a storage size of {need * isz} are out of bounds for storage "
                           f"of size {n * isz}")
    _check_src(src, size)
    st = t.stride()
    if _strided._dense_order(t._shape, st) is None:
        st = V.contiguous_strides(t._shape)
    return size, stride, (offset, st)


@defop(out=False, promote=_rule_cast(1), grad_fn="AsStridedScatterBackward0", tensors=2, prep=_as_strided_scatter_prep,
       saves=(), broadcast=False, float8=True)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``torch.as_strided_scatter(x, src, size, stride, offset)``: a copy of ``x`` whose ``as_strided`` view is
    ``src`` (``storage_offset`` arrives from the prep as (offset, the clone's strides))."""
    offset, st = storage_offset
    if 0 in size:
        return input
    pos = V.index_map(input.shape, st, 0).reshape(-1)
    store = jnp.zeros((input.size,), input.dtype).at[pos].set(input.reshape(-1))
    store = store.at[V.index_map(size, stride, offset).reshape(-1)].set(src.reshape(-1))
    return store[pos].reshape(input.shape)


def _diagonal_scatter_prep(targs, sargs):
    t, src = targs
    sargs = VO._diag_prep((t,), sargs)
    _check_src(src, VO._diag_meta(t, sargs)[0])
    return sargs


@defop(out=False, promote=_rule_cast(1), grad_fn="DiagonalScatterBackward0", tensors=2, prep=_diagonal_scatter_prep,
       saves=(), broadcast=False, float8=True)
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``torch.diagonal_scatter(x, src, offset, dim1, dim2)``: a copy of ``x`` with that diagonal = ``src``."""
    x = jnp.moveaxis(input, (dim1, dim2), (-2, -1))
    n = src.shape[-1]
    i = jnp.arange(n)
    x = x.at[..., i + max(-offset, 0), i + max(offset, 0)].set(src)
    return jnp.moveaxis(x, (-2, -1), (dim1, dim2))


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce_prep(targs, sargs):
    x, index, src = targs
    dim, reduce, include_self = sargs
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = check_index_source("index_reduce_", x, index, src, dim)
    dt = x.dtype
    if dt is D.bool or dt.is_complex or dt in D.FLOAT8:  # PyTorch's kernels for these: only its composite path
        if not include_self:
            raise P.no_kernel("index_reduce_func_exclude_input_init", dt)
        if x.ndim <= 1:
            raise P.no_kernel("index_func_", dt)
        if reduce == "mean" and not dt.is_complex:
            raise P.no_kernel("div_floor_cpu" if dt is D.bool else "add_stub", dt)
        if reduce in ("amax", "amin") and dt is not D.bool:
            raise P.no_kernel("maximum_cpu" if reduce == "amax" else "minimum_cpu", dt)
    return d, reduce, bool(include_self)


def _index_reduce_oob(v, targs, sargs, size):
    return IndexError("index out of range in self")


def _index_reduce(input, index, source, dim, reduce, include_self):
    """Slices ``source[i]`` (along ``dim``) combined into ``input[index[i]]`` by prod / mean / amax / amin.

    prod (and integer amax / amin) reduce over a (target, source) membership mask, so that JAX's gradients are
    PyTorch's (exact products with zeros); floating amax / amin are ``extreme_at``'s (ties share the gradient
    evenly, an excluded ``self`` counted among them as PyTorch's); mean is a scatter-add divided by the count
    (floor division for integers)."""
    if input.dtype.itemsize == 1 and jnp.issubdtype(input.dtype, jnp.floating):  # float8: in float32
        return _index_reduce(input.astype(jnp.float32), index, source.astype(jnp.float32), dim, reduce,
                             include_self).astype(input.dtype)
    x = jnp.moveaxis(jnp.atleast_1d(input), dim, 0)
    s = jnp.moveaxis(jnp.atleast_1d(source), dim, 0)
    idx = index.reshape(-1).astype(jnp.int64)
    m = x.shape[0]
    hit = jnp.zeros((m,), jnp.int64).at[idx].add(1)
    cnt = hit.reshape((m,) + (1,) * (x.ndim - 1))
    if reduce == "mean":
        total = (x if include_self else jnp.zeros_like(x)).at[idx].add(s)
        c = (cnt + (1 if include_self else 0)).astype(x.dtype)
        c = jnp.where(c == 0, jnp.ones((), x.dtype), c)
        r = total / c if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.floor_divide(total, c)
    elif reduce in ("amax", "amin") and jnp.issubdtype(x.dtype, jnp.floating):
        r = extreme_at(x, (idx,), s, reduce, include_self)
    else:
        member = (idx[None, :] == jnp.arange(m)[:, None]).reshape((m, idx.shape[0]) + (1,) * (x.ndim - 1))
        ident = _identity(reduce, x.dtype)
        vals = jnp.where(member, s[None], ident)  # (target, source, ...)
        if include_self:
            vals = jnp.concatenate([x[:, None], vals], axis=1)
        fn = {"prod": jnp.prod, "amax": jnp.max, "amin": jnp.min}[reduce]
        r = fn(vals, axis=1).astype(x.dtype)
    r = jnp.where(cnt > 0, r, x)
    return jnp.moveaxis(r, 0, dim).reshape(input.shape)


defop("index_reduce", promote=_rule_cast(2), grad_fn="IndexReduceBackward0", tensors=3, method=False,
       function=False, saves=("all", "result"), prep=_index_reduce_prep, kernel="index_func_", broadcast=False,
       float8=True,
       check=_bounds(1, _dim_size, False, _index_reduce_oob))(_index_reduce)


def _identity(reduce, dt):
    from .gather_scatter import _identity as ident
    return ident(reduce, dt)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None, _in_place=False):
    """``x.index_reduce(0, idx, src, 'amax', include_self=False)`` (prod / mean / amax / amin;
    IndexReduceBackward0)."""
    args = (input, index, source), (dim, reduce, include_self)
    if _in_place:
        r = _dispatch.inplace(OPS["index_reduce"], *args)
    else:
        r = dispatch(OPS["index_reduce"], *args)
    from .._warn import warn_once  # (PyTorch's TORCH_WARN_ONCE in its kernel, after the argument checks)
    warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time. (Triggered internally at "
              "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:1523.)")
    return r if out is None else _dispatch.write_out(out, r, "index_reduce", srcs=(input,), apart=(index, source))


def _put_prep(targs, sargs):
    x, index, src = targs
    if index.dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype.short}")
    if src.dtype is not x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{x.dtype.short} and source.dtype = {src.dtype.short}")
    if src.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {src.numel()}, index.numel() = {index.numel()}")
    return (bool(sargs[0]),)


def _put_oob(v, targs, sargs, size):
    return IndexError(f"out of range: tried to access index {v} on a tensor of {size} elements.")


@defop("put", promote=_rule_cast(2), grad_fn="PutBackward0", tensors=3, method=False, function=False, saves=(1,),
       prep=_put_prep, broadcast=False, kernel="take_put_cpu",
       check=_bounds(1, lambda targs, sargs: targs[0].numel(), True, _put_oob))
def _put(input, index, source, accumulate):
    """``input`` viewed flat (row-major) with ``input[index] = source`` (``+=`` with ``accumulate``)."""
    flat = input.reshape(-1)
    i = index.reshape(-1)
    i = jnp.where(i < 0, i + flat.shape[0], i)
    v = source.reshape(-1)
    if input.dtype == jnp.bool_ and accumulate:
        return flat.at[i].max(v).reshape(input.shape)
    return (flat.at[i].add(v) if accumulate else set_at(flat, (i,), v)).reshape(input.shape)


def put(input, index, source, accumulate=False, *, _in_place=False):
    """``torch.put(x, idx, src)``: a copy of ``x`` with ``x.view(-1)[idx] = src`` (PutBackward0)."""
    args = (input, index, source), (accumulate,)
    return (_dispatch.inplace if _in_place else dispatch)(OPS["put"], *args)


index_put_ = _twin(index_put)


# ---- renorm / sum_to_size ------------------------------------------------------------------------------------------
def _renorm_prep(targs, sargs):
    t = targs[0]
    p, dim, maxnorm = sargs
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if t.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {t.dim()} dimensions")
    if t.dtype.category < D.FLOAT:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{t.dtype.short}")
    return float(p), _wrap_dim(dim, t.dim()), float(maxnorm)


@defop(grad_fn="RenormBackward0", inplace=True, prep=_renorm_prep, kernel="renorm_cpu")
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled to norm ``maxnorm`` (PyTorch's
    ``maxnorm / (norm + 1e-7)``); float16/bfloat16 compute in float32."""
    acc = jnp.float32 if input.dtype in (jnp.float16, jnp.bfloat16) else input.dtype
    x = input.astype(acc)
    a = jnp.abs(x)
    axes = tuple(i for i in range(x.ndim) if i != dim)
    if p == math.inf:
        norm = jnp.max(a, axis=axes, keepdims=True)
    else:
        s = jnp.sum(a ** p if p != 2 else a * a, axis=axes, keepdims=True)
        pos = s > 0
        safe = jnp.where(pos, s, jnp.ones((), s.dtype))  # no NaN gradient through a zero norm
        norm = jnp.where(pos, jnp.sqrt(safe) if p == 2 else safe ** (1.0 / p), jnp.zeros((), s.dtype))
    big = norm > maxnorm
    denom = jnp.where(big, norm, jnp.ones((), norm.dtype)) + jnp.asarray(1e-7, norm.dtype)
    factor = jnp.where(big, jnp.asarray(maxnorm, norm.dtype) / denom, jnp.ones((), norm.dtype))
    if acc != input.dtype:  # PyTorch scales in the input's dtype by the factor rounded to it
        return input * factor.astype(input.dtype)
    return x * factor


def sum_to_size(self, *size):
    """``x.sum_to_size(*size)``: ``x`` summed down to ``size`` (to which it must be expandable): a sum over
    the leading and the size-1 dims (SumBackward1; ViewBackward0 when leading dims go); ``x`` itself when
    ``size`` is its shape."""
    shape = VO._shape_arg(size, "sum_to_size", "size")
    cur = tuple(self._shape)
    lead = len(cur) - len(shape)
    if lead < 0 or any(s != c and s != 1 for s, c in zip(shape, cur[lead:])):
        raise RuntimeError(f"size {{{V.shape_str(shape)}}} is not expandable to size {{{V.shape_str(cur)}}}.")
    if shape == cur:
        return self
    dims = tuple(range(lead)) + tuple(lead + i for i, (s, c) in enumerate(zip(shape, cur[lead:])) if s == 1 and c != 1)
    r = self.sum(dims, keepdim=True) if dims else self
    return r.view(shape) if lead else r


# ---- ldexp / frexp / nextafter / fix / isreal ----------------------------------------------------------------------
def _ldexp_rule(op, sig, sargs):
    """``float``'s rule; an integer or bool ``other`` stays as it is (the kernel's float32 ``pow(2.0, other)``)."""
    casts, outs = _tensors_only("float")(op, sig, sargs)
    if sig[1][1].category <= D.INT:
        casts = (casts[0], None) + tuple(casts[2:])
    return casts, outs


@defop(promote=_ldexp_rule, grad_fn="LdexpBackward0", tensors=2, kernel="mul_cpu",
       prep=lambda t, s: _ldexp_prep(t, s))
def ldexp(input, other):
    """``input * 2 ** other`` (int/bool inputs give the default float), as PyTorch computes it: an integer
    ``other``'s power is a float32 one (``pow(2.0, other)``), so a half input scales in float32 and rounds once
    (``0.9155 * 2 ** 16`` is 60000 in float16, not inf)."""
    if jnp.issubdtype(other.dtype, jnp.floating):
        return input * jnp.power(jnp.asarray(2, input.dtype), other)
    acc = D.opmath(input.dtype)
    p = jnp.ldexp(jnp.ones((), acc), jnp.clip(other.astype(jnp.int64), -4096, 4096).astype(jnp.int32))  # (exact)
    return (input.astype(acc) * p).astype(input.dtype)


def _ldexp_prep(targs, sargs):
    """float8 refused in the order of torch's ``input * pow(2, other)``: ``pow`` first, then the float8 promotion
    error (the dtype rule) or ``ldexp_cpu``. (A number: the dtype rule's TypeError.)"""
    a, b = targs
    if isinstance(b, Tensor) and b.dtype in D.FLOAT8:
        raise P.no_kernel("pow", b.dtype)
    if isinstance(a, Tensor) and a.dtype in D.FLOAT8 and not (isinstance(b, Tensor) and b.dtype.is_floating_point):
        raise P.no_kernel("ldexp_cpu", a.dtype)
    return sargs


def ldexp_(input, other):
    """In-place ``ldexp``: ``self`` must hold the floating result."""
    if isinstance(input, Tensor) and input.dtype.category < D.FLOAT:
        raise RuntimeError(f"ldexp can't be cast to the desired output type {input.dtype.short}")
    return _dispatch.inplace(OPS["ldexp"], (input, other), ())


_FREXP_BITS = {  # float dtype -> (int dtype of its bits, mantissa bits, exponent bias)
    "float16": (jnp.int16, 10, 15), "bfloat16": (jnp.int16, 7, 127), "float32": (jnp.int32, 23, 127),
    "float64": (jnp.int64, 52, 1023)}


def _frexp_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category != D.FLOAT:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return (None,), (dt, D.int32)


def _frexp_bits(x):
    """``frexp`` on the bit pattern: exact for subnormals too (XLA's CPU arithmetic flushes them to zero)."""
    it, nm, bias = _FREXP_BITS[jnp.dtype(x.dtype).name]
    nbits = jnp.iinfo(it).bits
    b = jax.lax.bitcast_convert_type(x, it)
    one = jnp.asarray(1, it)
    frac_mask = (one << nm) - one
    ebits = (b >> nm) & jnp.asarray((1 << (nbits - 1 - nm)) - 1, it)
    frac = b & frac_mask
    sign = b & ~((one << (nbits - 1)) - one)
    # a subnormal: frac * 2**(1 - bias - nm); p = floor(log2(frac))
    p = (nbits - 1 - jax.lax.clz(frac)).astype(it)
    sub = ebits == 0
    norm_frac = jnp.where(sub, (frac << jnp.maximum(nm - p, 0)) & frac_mask, frac)
    e = jnp.where(sub, p - nm - bias + 2, ebits - bias + 1)
    mant = jax.lax.bitcast_convert_type(sign | (jnp.asarray(bias - 1, it) << nm) | norm_frac, x.dtype)
    # zero, inf, nan, read on the bits too: XLA:CPU may run with denormals-are-zero, where ``x == 0`` holds for a
    # subnormal wherever the compare is not folded away (it depends on the compiler's optimisation level)
    special = ((b & ((one << (nbits - 1)) - one)) == 0) | (ebits == (1 << (nbits - 1 - nm)) - 1)
    return jnp.where(special, x, mant), jnp.where(special, 0, e).astype(jnp.int32)


@jax.custom_jvp
def _frexp(x):
    return _frexp_bits(x)


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    m, e = _frexp_bits(x)
    return (m, e), (t * jnp.exp2(-e.astype(x.dtype)), jnp.zeros(e.shape, jax.dtypes.float0))


@defop(promote=_frexp_rule, grad_fn="FrexpBackward0", nout=2, result_type=RT.frexp, kernel="frexp_cpu", out=True)
def frexp(input):
    """``torch.frexp``: (mantissa in [0.5, 1) with the input's sign, int32 exponent), ``input = m * 2**e``; the
    gradient of the mantissa is ``grad / 2**e``."""
    return _frexp(input)


def _float_kernel(op, dt):
    if dt.category != D.FLOAT:
        raise P.no_kernel(op.kernel, dt)


@jax.custom_jvp
def _nextafter(x, o):
    return jnp.nextafter(x, o)


# PyTorch's gradient: grad for self where it differs from other (0 where they are equal), 0 for other
_nextafter.defjvp(lambda p, t: (jnp.nextafter(*p), jnp.where(p[0] != p[1], t[0], jnp.zeros((), t[0].dtype))))


@defop(promote=_tensors_only("elementwise"), check_dtype=_float_kernel, grad_fn="NextafterBackward0", tensors=2,
       inplace=True, kernel="nextafter_cpu")
def nextafter(input, other):
    """The next floating value after ``input`` towards ``other``."""
    return _nextafter(input, other)


def isreal(input):
    """``torch.isreal``: True where the imaginary part is 0 (everywhere for a real tensor)."""
    if input.dtype.is_complex:
        return input.imag == 0
    return input.new_ones(input._shape, dtype=D.bool)


# ---- constructors and top-level spellings --------------------------------------------------------------------------
def _options(dt, dev):
    return (f"TensorOptions(dtype={P._cname(dt)}, device={dev}, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def new(self, *args, device=None, **kw):
    """``x.new(...)``, the legacy constructor in ``x``'s dtype and device: ``new()`` (empty), ``new(2, 3)`` or
    ``new(torch.Size)`` (uninitialised values: zeros here), ``new([1, 2])`` (data), ``new(tensor)`` (the same
    values, shared; its dtype must be ``x``'s)."""
    from .creation import empty, other_sequence, tensor
    from .._tensor.tensor import Size
    if kw:
        given = ", ".join(type(a).__name__ for a in args) + "".join(f", {k}={VO._tname(v)}" for k, v in kw.items())
        raise TypeError(f"new() received an invalid combination of arguments - got ({given.lstrip(', ')}), but "
                        "expected one of:\n * (*, torch.device device = None)\n      didn't match because some of the "
                        f"keywords were incorrect: {', '.join(kw)}\n * (torch.Storage storage)\n * (Tensor other)\n"
                        " * (tuple of ints size, *, torch.device device = None)\n * (object data, *, torch.device "
                        "device = None)\n")
    dev = self.device if device is None else device
    if not args:
        return empty((0,), dtype=self.dtype, device=dev)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if a.dtype is not self.dtype:
                raise TypeError(f"expected {_options(self.dtype, a.device)} (got {_options(a.dtype, a.device)})")
            return a.detach()
        if isinstance(a, Size):
            return empty(tuple(a), dtype=self.dtype, device=dev)
        if isinstance(a, (list, tuple, range)) or other_sequence(a):
            return tensor(a, dtype=self.dtype, device=dev)
        if not hasattr(a, "__index__"):
            raise TypeError(f"new(): data must be a sequence (got {_tp_name(a)})")
    return empty(VO._shape_arg(args, "new", "size"), dtype=self.dtype, device=dev)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """``torch.scalar_tensor(3)``: a 0-d tensor of the default float dtype (or ``dtype``)."""
    from .creation import full
    if isinstance(s, Tensor):
        s = s.item()
    return full((), s, dtype=dtype if dtype is not None else D.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def zero_(input):
    return input.zero_()


def detach(input):
    return input.detach()


def detach_(input):
    return input.detach_()


def fix(input, *, out=None):
    """``torch.fix``: ``trunc`` under its NumPy name (TruncBackward0)."""
    return OPS["trunc"].fn(input, out=out)


def fix_(input):
    return OPS["trunc"].fn_inplace(input)


def _put_method(self, index, source, accumulate=False):
    return put(self, index, source, accumulate)


def _put__method(self, index, source, accumulate=False):
    return put(self, index, source, accumulate, _in_place=True)


_index_reduce_ = _twin(index_reduce)
_index_reduce_.__name__ = "index_reduce_"


# ---- resize_ / resize_as_ / set_: a tensor's header changed in place ------------------------------------------
def resize_(self, *sizes, memory_format=None):
    """``x.resize_(2, 3)``: the new shape, contiguous (or in ``memory_format``); the storage's first elements keep
    their values, new ones are zeros here (uninitialised in PyTorch). A tensor requiring grad is refused, as
    PyTorch. A storage that grows keeps its old elements in place, for every tensor on it (``Storage.resize``)."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = VO._shape_arg(sizes, "resize_")
    if any(d < 0 for d in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    if shape == self._shape and memory_format is None:
        return self
    if memory_format is V.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    strides = (memory_format or V.contiguous_format)._strides(shape)
    n, st = math.prod(shape), self._storage
    if self.dtype.jnp != st.array.dtype:
        if self._offset + n > st.array.size:
            raise RuntimeError("resize_ beyond its storage of a view that reinterprets the storage's dtype is not "
                               "supported by functorch_lite: clone() it first")
    elif self._offset + n > st.array.size:
        st.resize(self._offset + n)  # PyTorch grows the storage in place: every tensor on it keeps its elements
    return set_(self, self, self._offset, shape, strides)


def resize(self, *sizes):
    """``x.resize(2, 3)`` (deprecated): torch's ``autograd._functions.Resize``, a reshape keeping the element
    count, from the values in row-major order."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    shape = VO._shape_arg(sizes, "resize")
    n = math.prod(shape)
    if n != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but the given "
                           f"tensor has a size of {'x'.join(map(str, self._shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements. ")
    return self.contiguous().view(shape)


def resize_as_(self, the_template, *, memory_format=None):
    """``x.resize_as_(y)``: ``x.resize_(y.shape)`` (the dtype stays); ``preserve_format``: ``y``'s layout."""
    if memory_format is V.preserve_format:
        nd = len(the_template._shape)
        fmt = V.channels_last if nd == 4 else V.channels_last_3d if nd == 5 else None
        memory_format = fmt if fmt is not None and not the_template.is_contiguous() and \
            the_template.is_contiguous(memory_format=fmt) else V.contiguous_format
    return resize_(self, the_template._shape, memory_format=memory_format)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """``x.set_(y)``: ``x`` now shares ``y``'s storage, shape, strides and offset; ``x.set_()``: an empty tensor;
    ``x.set_(storage_or_tensor, offset, size[, stride])``: a strided view of that storage. The dtypes must match."""
    from .._tensor.tensor import _UntypedStorage
    if self.requires_grad or (isinstance(source, Tensor) and source.requires_grad):
        _graph.check_inplace(self)
    if source is None:
        t = Tensor._from_array(jnp.zeros((0,), self.dtype.jnp), self.dtype, self.device)
    elif isinstance(source, (Tensor, _UntypedStorage)):
        if isinstance(source, Tensor) and source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {P._cname(source.dtype)} to a tensor of type "
                               f"{P._cname(self.dtype)}")
        t = source
        if size is not None or isinstance(source, _UntypedStorage):
            st = source._s if isinstance(source, _UntypedStorage) else source._storage
            base = Tensor._header(st, tuple(st.array.shape), self.dtype, None, None, 0, None)
            size = tuple(base._shape if size is None else VO._shape_arg((size,), "set_"))
            if stride is None:
                stride = tuple(math.prod(size[i + 1:]) for i in range(len(size)))
            with _gm.no_grad():
                t = OPS["as_strided"].fn(base, size, tuple(stride), storage_offset)
    else:
        raise TypeError(f"set_(): argument 'source' (position 1) must be Tensor, not {_type_name(source)}")
    if _SET_LOG[0] is not None:
        _log_attrs(self, DATA_FIELDS)
    own = self._storage
    for f in DATA_FIELDS:
        setattr(self, f, getattr(t, f))
    if self._storage.root() is not own.root():
        # PyTorch's version counter is the tensor's, not the storage's: it goes on counting here, the source's stays;
        # the old storage's counter (its views', and what autograd saved of it, share the tensor's in PyTorch) moves
        # with it: a saved copy of the old values is stale
        self._storage = self._storage.with_new_counter()
        self._storage.version = own.version
        own.version += 1
    self._storage.version += 1  # (PyTorch bumps the tensor's version: saved copies of its old values are stale)
    return self

METHODS = {"unsqueeze_": unsqueeze_, "squeeze_": squeeze_, "t_": t_, "transpose_": transpose_,
           "swapaxes_": swapaxes_, "swapdims_": swapdims_, "put": _put_method, "put_": _put__method,
           "index_reduce": index_reduce, "index_reduce_": _index_reduce_, "sum_to_size": sum_to_size,
           "ldexp_": ldexp_, "isreal": isreal, "new": new, "fix": fix, "fix_": fix_,
           "unsafe_split": unsafe_split, "unsafe_chunk": unsafe_chunk,
           "unsafe_split_with_sizes": unsafe_split_with_sizes, "narrow_copy": narrow_copy,
           "resize": resize, "resize_": resize_, "resize_as_": resize_as_, "set_": set_, "as_strided_": as_strided_}
FUNCTIONS = {f.__name__: f for f in (
    split_copy, split_with_sizes_copy, unbind_copy, unsafe_split, unsafe_split_with_sizes, unsafe_chunk,
    index_reduce, put, ldexp_, isreal, scalar_tensor, zero_, detach, detach_, fix, fix_, as_strided_, resize_as_)}
FUNCTIONS["index_put_"] = index_put_
