"""Shape and movement ops (spec §5, §9.7): views share storage; the rest copy.

A view op's ``view=`` function returns ``(shape, strides, offset)`` of the result from the input's
metadata (or ``None`` when the result cannot be a view, e.g. ``reshape`` of a transposed tensor);
its jax body is what replays the view from the base and what autograd differentiates.
"""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._tensor import views as V
from .._tensor.tensor import (Size, _wrap_dim, channels_last, contiguous_format, preserve_format,  # noqa: F401
                              with_memory_order)
from ._registry import defop


def _shape_arg(shape, name: str = "empty", arg: str = "size", overloads: tuple = ()) -> tuple:
    """Accept varargs ints, one tuple/list/Size, or 0-d integer Tensors, with PyTorch's argument-parser
    errors for ``name(...)`` (``overloads``: the signatures listed when no overload matches, e.g. view)."""
    packed = len(shape) == 1 and isinstance(shape[0], (tuple, list))
    items = tuple(shape[0]) if packed else tuple(shape)
    out = []
    for i, s in enumerate(items):
        try:
            if isinstance(s, bool):
                raise TypeError
            out.append(s.__index__())
            continue
        except (AttributeError, TypeError):
            pass
        tn = type(s).__name__
        if i:
            raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                            f'"type must be tuple of ints,but got {tn}"') from None
        if overloads:
            if packed:
                inner = ", ".join(type(x).__name__ for x in items)
                kind = type(shape[0]).__name__
                got, bad = kind, f"{kind} of ({inner})" if kind == "tuple" else f"{kind} of [{inner}]"
            else:
                got, bad = ", ".join(type(x).__name__ for x in items), tn
            why = f"\n      didn't match because some of the arguments have invalid types: (!{bad}!)" \
                if packed or len(items) == 1 else ""
            lines = "".join(f"\n * ({o}){why}" for o in overloads)
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected "
                            f"one of:{lines}\n") from None
        if packed:
            raise TypeError(f"{name}(): argument '{arg}' (position 1) must be tuple of ints, but found element of "
                            f"type {tn} at pos 0") from None
        if len(items) > 1:
            raise TypeError(f"{name}() takes 1 positional argument but {len(items)} were given") from None
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be tuple of ints, not {tn}") from None
    return tuple(out)


def _dims_arg(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


# ---- view / reshape -----------------------------------------------------------------------------
def _view_prep(targs, sargs):
    (shape,) = sargs
    if len(shape) == 1 and (isinstance(shape[0], D.dtype) or isinstance(shape[0], type)):
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
    if dt.itemsize != t.dtype.itemsize:
        what = f"view {t.dtype.short} as {dt.short} (different element sizes)"
        if not t._shape:
            raise RuntimeError(f"self.dim() cannot be 0 to {what}")
        if t.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to {what}, but got {t.stride(-1)}")
        ratio = t.dtype.itemsize / dt.itemsize
        last = t._shape[-1] * ratio
        if last != int(last):
            raise RuntimeError(f"self.size(-1) must be divisible by {int(1 / ratio)} to {what}, but got "
                               f"{t._shape[-1]}")
        if t._chain is not None or t._offset:
            raise RuntimeError("viewing a view as a dtype of a different element size is not supported")
        shape = t._shape[:-1] + (int(last),)
        return shape, V.contiguous_strides(shape), 0, dt
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
        if jnp.dtype(src).itemsize > shape.itemsize:
            r = V.bitcast(input, shape.jnp)
            return r.reshape(r.shape[:-2] + (r.shape[-2] * r.shape[-1],))
        k = shape.itemsize // jnp.dtype(src).itemsize
        return V.bitcast(input.reshape(input.shape[:-1] + (input.shape[-1] // k, k)), shape.jnp)
    return input.reshape(V.infer_shape(shape, input.size))


def _view_method(self, *shape, dtype=None):
    """``Tensor.view``: a shape view, or (``view(dtype)``) a bit reinterpretation that PyTorch does not
    record as an autograd view: no ``_base``, no gradient (VIEW-22)."""
    if dtype is not None and not shape:
        shape = (dtype,)
    if len(shape) == 1 and (isinstance(shape[0], D.dtype) or isinstance(shape[0], type)):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            r = view(self, shape[0])
        r._base = None
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
    return (_dims_arg(sargs[0]),)


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
    shape, strides = [], []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            shape.append(s)
            strides.append(0)
            continue
        cur = t._shape[i - lead]
        if s == -1:
            s = cur
        if cur == s:
            shape.append(s)
            strides.append(st[i - lead])
        elif cur == 1:
            shape.append(s)
            strides.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(t._shape)}")
    return tuple(shape), tuple(strides), t._offset


@defop(grad_fn="ExpandBackward0", prep=_expand_prep, view=_expand_meta, saves=())
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


@defop(grad_fn="UnsqueezeBackward0", view=_unsqueeze_meta, saves=())
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
    return tuple(sorted({_wrap_dim(d, nd) for d in dims if t._shape[_wrap_dim(d, nd)] == 1}))


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


@defop("slice", grad_fn="SliceBackward0", view=_slice_meta, method=False, function=False, saves=())
def _slice(input, dim, start, stop, step):
    """Basic slicing along one dim (start/stop already clamped, step > 0)."""
    idx = [slice(None)] * input.ndim
    idx[dim] = slice(start, stop, step)
    return input[tuple(idx)]


def _narrow_prep(targs, sargs):
    t = targs[0]
    dim, start, length = sargs
    d = _wrap_dim(dim, len(t._shape))
    size = t._shape[d]
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


@defop(grad_fn="SliceBackward0", view=_narrow_meta, prep=_narrow_prep, saves=())
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


@defop(grad_fn="SelectBackward0", view=_select_meta, prep=_select_prep, saves=())
def select(input, dim, index):
    return jax.lax.index_in_dim(input, index, axis=dim, keepdims=False)


def _diag_prep(targs, sargs):
    t = targs[0]
    offset, d1, d2 = sargs
    nd = len(t._shape)
    d1, d2 = _wrap_dim(d1, nd), _wrap_dim(d2, nd)
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


def _movedim_prep(targs, sargs):
    t = targs[0]
    src, dst = sargs
    src = (src,) if isinstance(src, int) else tuple(src)
    dst = (dst,) if isinstance(dst, int) else tuple(dst)
    nd = len(t._shape)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    raw = src, dst
    src = tuple(_wrap_dim(s, nd) for s in src)
    dst = tuple(_wrap_dim(s, nd) for s in dst)
    for name, wrapped, given in (("source", src, raw[0]), ("destination", dst, raw[1])):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order), None


@defop(grad_fn="PermuteBackward0", view=_permute_meta, prep=_movedim_prep, aliases=("moveaxis",), saves=())
def movedim(input, source, destination):
    """``source`` arrives as the full permutation (see _movedim_prep)."""
    return jnp.transpose(input, source)


# ---- copying shape ops -------------------------------------------------------------------------------------
@defop("clone", grad_fn="CloneBackward0", method=False, function=False, saves=())
def _clone(input):
    """A copy in a new storage (laid out by :func:`clone`)."""
    return jnp.array(input, copy=True)


def clone(input, *, memory_format=None):
    """``clone()``: ``preserve_format`` (default) keeps the strides of a dense tensor (VIEW-51); otherwise
    the copy is laid out per ``memory_format`` (contiguous, channels_last)."""
    fmt = preserve_format if memory_format is None else memory_format
    r = _clone(input)
    if fmt is contiguous_format or (fmt is preserve_format and input._strides is None):
        return r
    nd = len(input._shape)
    if fmt is preserve_format:
        st = input.stride()
        if not V.is_dense(input._shape, st):
            st, order = V.infer_dense_strides(input._shape, st)
            return r if st == V.contiguous_strides(input._shape) else with_memory_order(r, order, st)
        if V.is_contiguous(input._shape, st):
            r._strides = st if st != V.contiguous_strides(input._shape) else None  # size-1 dims' strides kept
            return r
        return with_memory_order(r, V.memory_order(input._shape, st), st)
    order = fmt._order(nd)
    if order is None:
        raise RuntimeError(f"required rank {fmt._rank} tensor to use {fmt.name} format")
    mst = V.contiguous_strides(tuple(input._shape[d] for d in order))
    st = [0] * nd
    for i, d in enumerate(order):
        st[d] = mst[i]
    return with_memory_order(r, order, tuple(st))


def _flip_prep(targs, sargs):
    dims = _dims_arg(sargs[0])
    nd = len(targs[0]._shape)
    return (tuple(_wrap_dim(d, nd) for d in dims),)


@defop(grad_fn="FlipBackward0", prep=_flip_prep, saves=())
def flip(input, *dims):
    (dims,) = dims
    return jnp.flip(input, dims) if dims else input


@defop(grad_fn="RollBackward0", saves=())
def roll(input, shifts, dims=None):
    if isinstance(shifts, list):
        shifts = tuple(shifts)
    if isinstance(dims, list):
        dims = tuple(dims)
    if dims is None:
        return jnp.roll(input.reshape(-1), shifts).reshape(input.shape)
    return jnp.roll(input, shifts, dims)


def _repeat_prep(targs, sargs):
    reps = _shape_arg(sargs[0], "repeat", "repeats")
    if len(reps) < len(targs[0]._shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    return (reps,)


@defop(grad_fn="RepeatBackward0", prep=_repeat_prep, saves=())
def repeat(input, *repeats):
    (reps,) = repeats
    x = input.reshape((1,) * (len(reps) - input.ndim) + input.shape)
    return jnp.tile(x, reps)


@defop(grad_fn="RepeatBackward0", prep=lambda targs, sargs: (_shape_arg(sargs[0], "tile", "dims"),), saves=())
def tile(input, *dims):
    (dims,) = dims
    return jnp.tile(input, dims)


@defop(grad_fn="TrilBackward0", inplace=True, saves=())
def tril(input, diagonal=0):
    return jnp.tril(input, diagonal)


@defop(grad_fn="TriuBackward0", inplace=True, saves=())
def triu(input, diagonal=0):
    return jnp.triu(input, diagonal)


def _cat_prep(targs, sargs):
    ts = list(targs[0])
    if not ts:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    dim = sargs[0]
    nonempty = [t for t in ts if not (t.dim() == 1 and t._shape[0] == 0)]
    ref = nonempty[0] if nonempty else ts[0]
    nd = len(ref._shape)
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, nd)
    for i, t in enumerate(ts):
        if t.dim() == 1 and t._shape[0] == 0:
            continue
        if len(t._shape) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(t._shape)}")
        for j in range(nd):
            if j != d and t._shape[j] != ref._shape[j]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref._shape[j]} but got size {t._shape[j]} for tensor number {i} in the list.")
    return (d,)


@defop(promote="cat", grad_fn="CatBackward0", tensors="list", prep=_cat_prep, method=False,
       aliases=("concat", "concatenate"), device_check="cat", saves=())
def cat(tensors, dim=0):
    """Concatenate (dtypes promote, BC-11; legacy empty 1-d tensors are skipped)."""
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or list(tensors[:1])
    return jnp.concatenate(parts, axis=dim)


def _stack_prep(targs, sargs):
    ts = list(targs[0])
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(ts[1:], 1):
        if t._shape != ts[0]._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ts[0]._shape)} at entry 0 "
                               f"and {list(t._shape)} at entry {i}")
    return (_wrap_dim(sargs[0], len(ts[0]._shape) + 1),)


@defop(promote="cat", grad_fn="StackBackward0", tensors="list", prep=_stack_prep, method=False,
       device_check="cat", saves=())
def stack(tensors, dim=0):
    return jnp.stack(tensors, axis=dim)


@defop(grad_fn="ExpandBackward0", method=False, saves=())
def broadcast_to(input, size):
    return jnp.broadcast_to(input, tuple(size))


# ---- helpers that are not ops (they call ops) -----------------------------------------------------
def contiguous(self, memory_format=None):
    """Self when already contiguous (VIEW-12), else a contiguous copy (CloneBackward0)."""
    fmt = contiguous_format if memory_format is None else memory_format
    if fmt is preserve_format:
        if self.is_contiguous():
            return self
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if self.is_contiguous(fmt):
        return self
    return clone(self, memory_format=fmt)


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.dim()
    if nd == 0:
        return reshape(input, (1,))
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._shape[:s] + (math.prod(input._shape[s:e + 1]),) + input._shape[e + 1:]
    return reshape(input, shape)


def ravel(input):
    return reshape(input, (-1,))


def view_as(self, other):
    return view(self, other._shape)


def reshape_as(self, other):
    return reshape(self, other._shape)


def expand_as(self, other):
    return expand(self, other._shape)


def unbind(input, dim=0):
    d = _wrap_dim(dim, input.dim())
    return tuple(select(input, d, i) for i in range(input._shape[d]))


def split(tensor, split_size_or_sections, dim=0):
    d = _wrap_dim(dim, tensor.dim())
    size = tensor._shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sizes = [min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
    out, start = [], 0
    for n in sizes:
        out.append(narrow(tensor, d, start, n))
        start += n
    return tuple(out)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d]
    step = -(-size // chunks) if size else 1
    return split(input, step, d)


def tensor_split(input, indices_or_sections, dim=0):
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        q, r = divmod(size, n)
        sizes = [q + 1] * r + [q] * (n - r)
    else:
        idx = [0] + [min(max(i, 0), size) for i in indices_or_sections] + [size]
        sizes = [max(b - a, 0) for a, b in zip(idx, idx[1:])]
    out, start = [], 0
    for n in sizes:
        out.append(narrow(input, d, start, n))
        start += n
    return tuple(out)


def T(self):
    nd = self.dim()
    if nd != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                      "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                      "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=2)
    return permute(self, tuple(range(nd - 1, -1, -1)))


def mT(self):
    if self.dim() < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(self, -2, -1)


def hstack(tensors):
    tensors = list(tensors)
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    return cat([t if t.dim() >= 2 else reshape(t, (1, -1)) for t in tensors], 0)


def broadcast_tensors(*tensors):
    from ._dispatch import broadcast_shapes
    shape = broadcast_shapes(*[t._shape for t in tensors])
    return tuple(expand(t, shape) for t in tensors)


def numel(input):
    return input.numel()


def broadcast_shapes(*shapes):
    """``torch.broadcast_shapes`` with PyTorch's error (BC-07)."""
    out = []
    for i, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        nd = max(len(out), len(s))
        a = [1] * (nd - len(out)) + list(out)
        b = [1] * (nd - len(s)) + list(s)
        for j in range(nd):
            if a[j] != b[j] and a[j] != 1 and b[j] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {b[j]} at {j - nd}! Mismatching "
                                   f"argument at index {i} had {tuple(s)}; but expected shape should be broadcastable "
                                   f"to {list(out)}")
            a[j] = b[j] if a[j] == 1 else a[j]
        out = a
    return Size(out)


METHODS = {"contiguous": contiguous, "clone": clone, "view": _view_method, "flatten": flatten, "ravel": ravel, "view_as": view_as,
           "reshape_as": reshape_as, "expand_as": expand_as, "unbind": unbind, "split": split, "chunk": chunk,
           "tensor_split": tensor_split, "T": property(T), "mT": property(mT)}
FUNCTIONS = {"clone": clone, "flatten": flatten, "ravel": ravel, "unbind": unbind, "split": split, "chunk": chunk,
             "tensor_split": tensor_split, "hstack": hstack, "vstack": vstack,
             "broadcast_tensors": broadcast_tensors, "numel": numel, "broadcast_shapes": broadcast_shapes}
