"""View ops (spec §5): the result shares the input's storage.

A view op's ``view=`` function returns ``(shape, strides, offset)`` of the result from the input's
metadata (or ``None`` when the result cannot be a view, e.g. ``reshape`` of a transposed tensor);
its jax body is what replays the view from the base and what autograd differentiates. The copying
shape ops and the non-op helpers built on these views live in ``movement.py``.
"""
from __future__ import annotations

import math
import operator

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._tensor import views as V
from .._tensor.tensor import Tensor, _wrap_dim
from ..autograd import graph as _graph
from ._registry import defop
from ._dispatch import _type_name

_tname = _type_name  # (the argument parser's type names: ``numpy.float64``, ``Tensor``, ``torch.dtype``)


def _shape_arg(shape, name: str = "empty", arg: str = "size", overloads: tuple = ()) -> tuple:
    """Accept varargs ints, one tuple/list/Size, or 0-d integer Tensors, with PyTorch's argument-parser
    errors for ``name(...)`` (``overloads``: the signatures listed when no overload matches, e.g. view)."""
    packed = len(shape) == 1 and isinstance(shape[0], (tuple, list))
    items = tuple(shape[0]) if packed else tuple(shape)
    out = []
    for i, s in enumerate(items):
        try:
            if isinstance(s, bool) and (packed or i == 0):  # a later vararg True counts as 1, as in PyTorch
                raise TypeError
            out.append(s.__index__())
            continue
        except (AttributeError, TypeError):
            pass
        tn = _tname(s)
        if packed and not overloads:
            raise TypeError(f"{name}(): argument '{arg}' (position 1) must be tuple of ints, but found element of "
                            f"type {tn} at pos {i}") from None
        if i:
            raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                            f'"type must be tuple of ints,but got {tn}"') from None
        if overloads:
            if packed:
                inner = ", ".join(_tname(x) for x in items)
                kind = type(shape[0]).__name__
                got, bad = kind, f"{kind} of ({inner})" if kind == "tuple" else f"{kind} of [{inner}]"
            else:
                got, bad = ", ".join(_tname(x) for x in items), tn
            why = f"\n      didn't match because some of the arguments have invalid types: (!{bad}!)" \
                if packed or len(items) == 1 else ""
            lines = "".join(f"\n * ({o}){why}" for o in overloads)
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected "
                            f"one of:{lines}\n") from None
        if len(items) > 1:
            raise TypeError(f"{name}() takes 1 positional argument but {len(items)} were given") from None
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be tuple of ints, not {tn}") from None
    return tuple(out)


def _dims_arg(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


# ---- view / reshape -----------------------------------------------------------------------------
def _is_view_dtype(a) -> bool:
    """A ``view(dtype)`` argument: a torch dtype or Python's float / int / bool / complex (torch's parser reads them
    as dtypes); a NumPy scalar type is not one (torch refuses it rather than reinterpreting the bits)."""
    return isinstance(a, D.dtype) or (type(a) is type and a in (float, int, bool, complex))


def _view_prep(targs, sargs):
    (shape,) = sargs
    if len(shape) == 1 and _is_view_dtype(shape[0]):
        return (D.as_dtype(shape[0]),)
    return (_shape_arg(shape, "view", "size", ("torch.dtype dtype", "tuple of ints size")),)


def _view_meta(t, sargs):
    (shape,) = sargs
    if isinstance(shape, D.dtype):
        return _view_dtype_meta(t, shape)
    shape = V.infer_shape(shape, t.numel())
    st = V.view_strides(t._shape, t.stride(), shape)
    if st is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return shape, st, t._offset


def _view_dtype_meta(t, dt):
    """PyTorch's ``view_dtype``: to another element size, the last dim (stride 1) is split into / merged from
    pieces, the other strides and the offset counted in the new elements (reads replay the view chain, then
    reinterpret the bits; a write through such a view is refused in ``Tensor._write``)."""
    if dt.itemsize != t.dtype.itemsize:
        what = f"view {t.dtype.short} as {dt.short} (different element sizes)"
        if not t._shape:
            raise RuntimeError(f"self.dim() cannot be 0 to {what}")
        st = t.stride()
        if st[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to {what}, but got {st[-1]}")
        if t.dtype.itemsize > dt.itemsize:
            k = t.dtype.itemsize // dt.itemsize
            return (t._shape[:-1] + (t._shape[-1] * k,), tuple(s * k for s in st[:-1]) + (1,), t._offset * k, dt)
        k = dt.itemsize // t.dtype.itemsize
        if t._shape[-1] % k:
            raise RuntimeError(f"self.size(-1) must be divisible by {k} to {what}, but got {t._shape[-1]}")
        if t._offset % k:
            raise RuntimeError(f"self.storage_offset() must be divisible by {k} to {what}, but got {t._offset}")
        for i, s in enumerate(st[:-1]):
            if s % k:
                raise RuntimeError(f"self.stride({i}) must be divisible by {k} to {what}, but got {s}")
        return (t._shape[:-1] + (t._shape[-1] // k,), tuple(s // k for s in st[:-1]) + (1,), t._offset // k, dt)
    return t._shape, t.stride(), t._offset, dt


def _view_rule(op, sig, sargs):
    (shape,) = sargs
    dt = shape if isinstance(shape, D.dtype) else sig[0][1]
    return (None,), (dt,)


@defop(promote=_view_rule, grad_fn="ViewBackward0", prep=_view_prep, view=_view_meta, saves=())
def view(input, *shape):
    """``x.view(3, 4)`` / ``x.view(-1)`` / ``x.view(torch.int32)`` (bit reinterpretation)."""
    (shape,) = shape
    if isinstance(shape, D.dtype):
        src = input.dtype
        if jnp.dtype(src).itemsize == shape.itemsize:
            return V.bitcast(input, shape.jnp)
        # (a barrier between two size-changing bitcasts of a view chain: XLA's simplifier folds them into one with
        # a wrong shape, a verifier error)
        input = jax.lax.optimization_barrier(input)
        if jnp.dtype(src).itemsize > shape.itemsize:
            r = V.bitcast(input, shape.jnp)
            return r.reshape(r.shape[:-2] + (r.shape[-2] * r.shape[-1],))
        k = shape.itemsize // jnp.dtype(src).itemsize
        return V.bitcast(input.reshape(input.shape[:-1] + (input.shape[-1] // k, k)), shape.jnp)
    return input.reshape(V.infer_shape(shape, input.size))


def _view_method(self, *shape, dtype=None, size=None):
    """``Tensor.view``: a shape view, or (``view(dtype)``) a bit reinterpretation that PyTorch does not
    record as an autograd view: no ``_base``, no gradient (VIEW-22). ``size=``: the shape as a keyword."""
    if size is not None:
        if shape:
            raise TypeError("view() got multiple values for argument 'size'")
        shape = (size,)
    if dtype is not None and not shape:
        shape = (dtype,)
    if len(shape) == 1 and _is_view_dtype(shape[0]):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            r = view(self, shape[0])
        r._base = None
        _graph.not_an_autograd_view(r)
        return r
    return view(self, *shape)


def _reshape_prep(targs, sargs):
    return (_shape_arg(sargs[0], "reshape", "shape"),)


def _reshape_meta(t, sargs):
    shape = V.infer_shape(sargs[0], t.numel())
    st = V.view_strides(t._shape, t.stride(), shape)
    if st is None:
        return None  # not viewable: reshape copies (VIEW-13)
    return shape, st, t._offset


@defop(grad_fn=("ViewBackward0", "UnsafeViewBackward0"), prep=_reshape_prep, view=_reshape_meta, saves=())
def reshape(input, *shape):
    (shape,) = shape
    return input.reshape(V.infer_shape(shape, input.size))


# ---- transpose / permute ------------------------------------------------------------------------------
def _transpose_meta(t, sargs):
    d0, d1 = sargs
    nd = len(t._shape)
    d0, d1 = _wrap_dim(d0, nd), _wrap_dim(d1, nd)
    shape, st = list(t._shape), list(t.stride())
    if nd:
        shape[d0], shape[d1] = shape[d1], shape[d0]
        st[d0], st[d1] = st[d1], st[d0]
    return tuple(shape), tuple(st), t._offset


def _transpose_impl(input, dim0, dim1):
    return jnp.swapaxes(input, dim0, dim1) if input.ndim else input


@defop(grad_fn="TransposeBackward0", view=_transpose_meta, aliases=("swapaxes", "swapdims"), saves=())
def transpose(input, dim0, dim1):
    """Swap two dims (a view; PyTorch's meaning, not jnp.transpose's)."""
    return _transpose_impl(input, dim0, dim1)


def _t_meta(t, sargs):
    if len(t._shape) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(t._shape)}D")
    if len(t._shape) < 2:
        return t._shape, t.stride(), t._offset
    return _transpose_meta(t, (0, 1))


@defop(grad_fn="TBackward0", view=_t_meta, saves=())
def t(input):
    return input.T if input.ndim == 2 else input


def _permute_prep(targs, sargs):
    dims = sargs[0]
    if len(dims) == 1 and not isinstance(dims[0], (tuple, list)):  # one int, or torch's refusal (an ndarray, a Tensor)
        try:
            dims[0].__index__()
        except (AttributeError, TypeError):
            raise TypeError(f"permute(): argument 'dims' (position 1) must be tuple of ints, not {_tname(dims[0])}") \
                from None
    return (_dims_arg(dims),)


def _permute_meta(t, sargs):
    dims = sargs[0]
    nd = len(t._shape)
    if len(dims) != nd:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
                           f"the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    st = t.stride()
    return tuple(t._shape[d] for d in dims), tuple(st[d] for d in dims), t._offset


@defop(grad_fn="PermuteBackward0", prep=_permute_prep, view=_permute_meta, saves=())
def permute(input, *dims):
    (dims,) = dims
    return jnp.transpose(input, tuple(d % input.ndim for d in dims)) if input.ndim else input


def _expand_prep(targs, sargs):
    return (_shape_arg(sargs[0], "expand", "size"),)


def _expand_meta(t, sargs):
    sizes = sargs[0]
    nd = len(t._shape)
    if len(sizes) < nd:
        tname = "CPUBoolType" if t.dtype is D.bool else f"torch.{t.dtype.legacy}"
        raise RuntimeError(f"expand({tname}{{{list(t._shape)}}}, size=[{', '.join(map(str, sizes))}]): the "
                           "number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor ({nd})")
    lead = len(sizes) - nd
    st = t.stride()
    shape, strides = [0] * len(sizes), [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):  # from the last dim, as PyTorch's inferExpandGeometry (its errors)
        s = sizes[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            shape[i] = s
            if s == 1 and i + 1 < len(sizes):  # (a new size-1 dim: its stride as if it were there, as torch's)
                strides[i] = shape[i + 1] * strides[i + 1]
            continue
        cur = t._shape[i - lead]
        if s == -1:
            s = cur
        if cur == s:
            shape[i], strides[i] = s, st[i - lead]
        elif cur == 1:
            shape[i] = s
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(t._shape)}")
    return tuple(shape), tuple(strides), t._offset


# (half_grad: torch's ExpandBackward0 is ``sum_to_size``, a sum that accumulates float16 / bfloat16 in float32)
@defop(grad_fn="ExpandBackward0", prep=_expand_prep, view=_expand_meta, saves=(), half_grad=True)
def expand(input, *size):
    (size,) = size
    lead = len(size) - input.ndim
    target = tuple(input.shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(size))
    return jnp.broadcast_to(input, target)


def _unsqueeze_meta(t, sargs):
    nd = len(t._shape)
    d = _wrap_dim(sargs[0], nd + 1)
    st = t.stride()
    new_st = st[d] * t._shape[d] if d < nd else 1
    return t._shape[:d] + (1,) + t._shape[d:], st[:d] + (new_st,) + st[d:], t._offset


def _unsqueeze_prep(targs, sargs):
    d = sargs[0]
    if type(d) is int:
        return sargs
    if not hasattr(d, "__index__"):  # (a tuple, a list: torch's parser refuses them)
        from ._dispatch import _call_form
        from ._registry import OPS
        fname, where = _call_form(OPS["unsqueeze"], "dim")
        raise TypeError(f"{fname}(): argument 'dim'{where} must be int, not {_type_name(d)}")
    return (operator.index(d),)


@defop(grad_fn="UnsqueezeBackward0", view=_unsqueeze_meta, prep=_unsqueeze_prep, saves=())
def unsqueeze(input, dim):
    return jnp.expand_dims(input, dim % (input.ndim + 1))


def _squeeze_dims(t, dim):
    nd = len(t._shape)
    if dim is None:
        return tuple(i for i, s in enumerate(t._shape) if s == 1)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if nd == 0:  # a 0-d tensor: dim 0 / -1 are accepted and nothing is dropped
        for d in dims:
            _wrap_dim(d, 0)
        return ()
    wrapped = [_wrap_dim(d, nd) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        seen = set()
        for d in wrapped:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    return tuple(sorted(d for d in wrapped if t._shape[d] == 1))


def _squeeze_meta(t, sargs):
    dims = _squeeze_dims(t, sargs[0])
    st = t.stride()
    keep = [i for i in range(len(t._shape)) if i not in dims]
    return tuple(t._shape[i] for i in keep), tuple(st[i] for i in keep), t._offset


def _squeeze_prep(targs, sargs):
    d = sargs[0]
    t = targs[0]
    if d is None:
        return (None,)
    if isinstance(d, list):
        d = tuple(d)
    return (_squeeze_dims(t, d) if isinstance(d, tuple) else d,)


def _squeeze_name(targs, sargs):
    return "SqueezeBackward0" if sargs[0] is None else ("SqueezeBackward2" if isinstance(sargs[0], tuple)
                                                       else "SqueezeBackward1")


@defop(grad_fn=_squeeze_name, view=_squeeze_meta, prep=_squeeze_prep, saves=())
def squeeze(input, dim=None):
    """Drop size-1 dims; a dim that is not 1 is left alone (SHP-09)."""
    if dim is None:
        return jnp.squeeze(input)
    if isinstance(dim, tuple):
        return jnp.squeeze(input, dim) if dim else input
    d = dim % input.ndim if input.ndim else 0
    return jnp.squeeze(input, d) if input.ndim and input.shape[d] == 1 else input


def _unflatten_prep(targs, sargs):
    dim, sizes = sargs
    t = targs[0]
    sizes = tuple(sizes)
    d = _wrap_dim(dim, len(t._shape))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = t._shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    if (known != n if -1 not in sizes else (known == 0 or n % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} ({n}) "
                           "in the input tensor")
    return dim, sizes


def _unflatten_meta(t, sargs):
    dim, sizes = sargs
    d = _wrap_dim(dim, len(t._shape))
    sizes = V.infer_shape(sizes, t._shape[d])
    shape = t._shape[:d] + sizes + t._shape[d + 1:]
    return shape, V.view_strides(t._shape, t.stride(), shape), t._offset


@defop(grad_fn="ViewBackward0", view=_unflatten_meta, prep=_unflatten_prep, saves=())
def unflatten(input, dim, sizes):
    d = dim % input.ndim
    sizes = V.infer_shape(sizes, input.shape[d])
    return input.reshape(input.shape[:d] + sizes + input.shape[d + 1:])


# ---- slicing views ---------------------------------------------------------------------------------------
def _slice_meta(t, sargs):
    dim, start, stop, step = sargs
    st = list(t.stride())
    shape = list(t._shape)
    n = len(range(start, stop, step))
    off = t._offset + start * st[dim]
    shape[dim] = n
    st[dim] *= step
    return tuple(shape), tuple(st), off


def _slice_split(sargs):
    dim, start, stop, step = sargs
    return (dim, len(range(start, stop, step)), step), (start,)


def _slice_dyn(a, off, dim, n, step):
    span = (n - 1) * step + 1 if n else 0
    return jax.lax.slice_in_dim(jax.lax.dynamic_slice_in_dim(a, off[0], span, axis=dim), 0, span, step, axis=dim)


@defop("slice", grad_fn="SliceBackward0", view=_slice_meta, method=False, function=False, saves=(),
       dynamic=(_slice_split, _slice_dyn))
def _slice(input, dim, start, stop, step):
    """Basic slicing along one dim (start/stop already clamped, step > 0)."""
    idx = [slice(None)] * input.ndim
    idx[dim] = slice(start, stop, step)
    return input[tuple(idx)]


NARROW_NEGATIVE_LENGTH = "narrow(): length must be non-negative."  # (torch's; F.pad's negative padding says it too)


def _narrow_prep(targs, sargs):
    t = targs[0]
    dim, start, length = sargs
    if not t._shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError(NARROW_NEGATIVE_LENGTH)
    d = _wrap_dim(dim, len(t._shape))
    size = t._shape[d]
    if isinstance(start, Tensor) and (start._shape or start.dtype.category > D.INT or start.dtype is D.bool):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    if hasattr(start, "__index__") and not isinstance(start, int):
        start = start.__index__()
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return d, start, length


def _narrow_meta(t, sargs):
    d, start, length = sargs
    return _slice_meta(t, (d, start, start + length, 1))


@defop(grad_fn="SliceBackward0", view=_narrow_meta, prep=_narrow_prep, saves=(),
       dynamic=(lambda s: ((s[0], s[2]), (s[1],)),
                lambda a, off, dim, length: jax.lax.dynamic_slice_in_dim(a, off[0], length, axis=dim)))
def narrow(input, dim, start, length):
    return jax.lax.slice_in_dim(input, start, start + length, axis=dim)


def _select_prep(targs, sargs):
    t = targs[0]
    dim, index = sargs
    if not t._shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, len(t._shape))
    size = t._shape[d]
    index = index.__index__()
    if index < -size or index >= size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(t._shape)} at dimension "
                         f"{d}")
    return d, index % size


def _select_meta(t, sargs):
    d, index = sargs
    st = t.stride()
    return t._shape[:d] + t._shape[d + 1:], st[:d] + st[d + 1:], t._offset + index * st[d]


@defop(grad_fn="SelectBackward0", view=_select_meta, prep=_select_prep, saves=(),
       dynamic=(lambda s: ((s[0],), (s[1],)),
                lambda a, off, dim: jax.lax.dynamic_index_in_dim(a, off[0], axis=dim, keepdims=False)))
def select(input, dim, index):
    return jax.lax.index_in_dim(input, index, axis=dim, keepdims=False)


def _diag_prep(targs, sargs):
    t = targs[0]
    offset, d1, d2 = sargs
    nd = len(t._shape)
    offset, d1, d2 = operator.index(offset), _wrap_dim(d1, nd), _wrap_dim(d2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {sargs[1]}, {sargs[2]}")
    return offset, d1, d2


def _diag_meta(t, sargs):
    offset, d1, d2 = sargs
    st = t.stride()
    n1, n2 = t._shape[d1], t._shape[d2]
    if offset >= 0:
        size = max(0, min(n1, n2 - offset))
        off = t._offset + (offset * st[d2] if size else 0)
    else:
        size = max(0, min(n1 + offset, n2))
        off = t._offset + (-offset * st[d1] if size else 0)
    keep = [i for i in range(len(t._shape)) if i not in (d1, d2)]
    return (tuple(t._shape[i] for i in keep) + (size,), tuple(st[i] for i in keep) + (st[d1] + st[d2],), off)


@defop(grad_fn="DiagonalBackward0", view=_diag_meta, prep=_diag_prep, saves=())
def diagonal(input, offset=0, dim1=0, dim2=1):
    return jnp.diagonal(input, offset, dim1, dim2)


def _unfold_prep(targs, sargs):
    t = targs[0]
    dim, size, step = sargs
    nd = len(t._shape)
    d, size, step = _wrap_dim(dim, nd), operator.index(size), operator.index(step)
    n = t._shape[d] if nd else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return d, size, step


def _unfold_meta(t, sargs):
    d, size, step = sargs
    if not t._shape:
        return (size,), (1,), t._offset
    st = t.stride()
    count = (t._shape[d] - size) // step + 1
    return (t._shape[:d] + (count,) + t._shape[d + 1:] + (size,), st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],),
            t._offset)


@defop("tensor_unfold", float8=True, grad_fn="UnfoldBackward0", view=_unfold_meta, prep=_unfold_prep, method="unfold",
       function=False, saves=())
def _tensor_unfold(input, dimension, size, step):
    """``Tensor.unfold``: every ``size``-long window along ``dimension`` (``step`` apart) as a new last dim."""
    if input.ndim == 0:
        return input.reshape((1,))[:size]
    n = input.shape[dimension]
    count = (n - size) // step + 1
    idx = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    return jnp.moveaxis(jnp.take(input, idx, axis=dimension), dimension + 1, -1)


def _movedim_prep(targs, sargs):
    t = targs[0]
    src, dst = sargs
    src, dst = ((v,) if isinstance(v, (int, np.integer)) or isinstance(v, Tensor) and not v.dim() else v
                for v in (src, dst))
    src, dst = tuple(map(operator.index, src)), tuple(map(operator.index, dst))  # (0-d integer tensors too)
    nd = len(t._shape)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    raw = src, dst
    src = tuple(_wrap_dim(s, nd) for s in src)
    if nd == 0:  # a 0-d tensor: dims 0 / -1 name itself
        return (), None
    dst = tuple(_wrap_dim(s, nd) for s in dst)
    for name, wrapped, given in (("source", src, raw[0]), ("destination", dst, raw[1])):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order), None


@defop(grad_fn=lambda targs, sargs: "PermuteBackward0" if targs[0]._shape else "AliasBackward0",  # (0-d: alias)
       view=_permute_meta, prep=_movedim_prep, aliases=("moveaxis",), saves=())
def movedim(input, source, destination):
    """``source`` arrives as the full permutation (see _movedim_prep)."""
    return jnp.transpose(input, source)


METHODS = {"view": _view_method}
