"""Copying shape ops (spec §5, §9.7) and the non-op helpers that call ops (flatten, split, T, ...).

The view ops (view, reshape, transpose, permute, expand, squeeze, slice, select, ...) live in
``view_ops.py``; everything defined here copies into a new storage or just calls ops.
"""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor import views as V
from .._tensor.tensor import Size, _wrap_dim, contiguous_format, preserve_format, with_memory_order
from ._registry import defop
from .view_ops import _dims_arg, _shape_arg, expand, narrow, permute, reshape, transpose, view



# ---- copying shape ops -------------------------------------------------------------------------------------
@defop("clone", float8=True, grad_fn="CloneBackward0", method=False, function=False, saves=())
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


@defop(kernel="flip_cpu", grad_fn="FlipBackward0", prep=_flip_prep, saves=())
def flip(input, *dims):
    (dims,) = dims
    return jnp.flip(input, dims) if dims else input


@defop(float8=True, grad_fn="RollBackward0", saves=())
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


@defop(float8=True, grad_fn="RepeatBackward0", prep=_repeat_prep, saves=())
def repeat(input, *repeats):
    (reps,) = repeats
    x = input.reshape((1,) * (len(reps) - input.ndim) + input.shape)
    return jnp.tile(x, reps)


@defop(float8=True, grad_fn="RepeatBackward0", prep=lambda targs, sargs: (_shape_arg(sargs[0], "tile", "dims"),),
       saves=())
def tile(input, *dims):
    (dims,) = dims
    return jnp.tile(input, dims)


@defop(kernel="tril", grad_fn="TrilBackward0", inplace=True, saves=())
def tril(input, diagonal=0):
    return jnp.tril(input, diagonal)


@defop(kernel="triu", grad_fn="TriuBackward0", inplace=True, saves=())
def triu(input, diagonal=0):
    return jnp.triu(input, diagonal)


def _diag_prep(targs, sargs):
    nd = len(targs[0]._shape)
    if nd not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return sargs


@defop(float8=True, grad_fn=lambda t, s: "DiagEmbedBackward0" if len(t[0]._shape) == 1 else "DiagonalBackward0_copy",
       prep=_diag_prep, saves=())
def diag(input, diagonal=0):
    """1-D: a square matrix with ``input`` on diagonal ``diagonal``; 2-D: a copy of that diagonal."""
    return jnp.diag(input, diagonal)


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


@defop(float8=True, promote="cat", grad_fn="CatBackward0", tensors="list", prep=_cat_prep, method=False,
       aliases=("concat", "concatenate"), device_check="cat", saves=(),
       autocast={"cpu": "promote"})
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


@defop(float8=True, promote="cat", grad_fn="StackBackward0", tensors="list", prep=_stack_prep, method=False,
       device_check="cat", saves=(), autocast={"cpu": "promote"})
def stack(tensors, dim=0):
    return jnp.stack(tensors, axis=dim)


@defop(float8=True, grad_fn="ExpandBackward0", method=False, saves=())
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


# ---- split / chunk / unbind: views of one input, ONE autograd node -----------------------------------------
def _split_rule(op, sig, sargs):
    return (None,), (sig[0][1],) * len(sargs[1])


def _split_name(targs, sargs):
    return {"split": "SplitBackward0", "split_with_sizes": "SplitWithSizesBackward0",
            "unbind": "UnbindBackward0"}[sargs[2]]


@defop("split_with_sizes", float8=True, promote=_split_rule, grad_fn=_split_name, nout=0, method=False,
       function=False, saves=())
def _split(input, dim, sizes, kind):
    """The pieces of ``input`` along ``dim`` (squeezed for unbind); its gradient is one concatenate of the
    pieces' gradients (``lax.split``'s transpose), not one padded copy of the input per piece."""
    parts = jax.lax.split(input, sizes, axis=dim)
    return tuple(jnp.squeeze(p, dim) for p in parts) if kind == "unbind" else tuple(parts)


def _multi_view(t, d, sizes, kind):
    """PyTorch's multi-output view functions: each piece is a view of ``t`` (narrow / select metadata), and
    all of them share one grad_fn (SplitBackward0, SplitWithSizesBackward0, UnbindBackward0), so the backward
    concatenates. As in PyTorch, such views may not be modified in place while they require grad."""
    from ._dispatch import record_views
    from ._registry import OPS
    if kind == "unbind":
        vop, args = OPS["select"], [(d, i) for i in range(len(sizes))]
    else:
        vop, args, start = OPS["narrow"], [], 0
        for n in sizes:
            args.append((d, start, n))
            start += n
    outs = []
    for a in args:
        shape, strides, offset = vop.view(t, a)[:3]
        outs.append(t._view_of(shape, strides, offset, (vop, a)))
    outs = tuple(outs)
    record_views(OPS["split_with_sizes"], t, outs, (d, tuple(sizes), kind))
    return outs


def unbind(input, dim=0):
    d = _wrap_dim(dim, input.dim())
    return _multi_view(input, d, [1] * input._shape[d], "unbind")


def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    """(``split_size=``: ``Tensor.split``'s name of the second argument.)"""
    if split_size is not None:
        if split_size_or_sections is not None:
            raise TypeError("split() got multiple values for argument 'split_size'")
        split_size_or_sections = split_size
    elif split_size_or_sections is None:
        raise TypeError("split() missing 1 required positional argument: 'split_size_or_sections'")
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
    return _multi_view(tensor, d, sizes, "split" if isinstance(split_size_or_sections, int) else "split_with_sizes")


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
    """``torch.broadcast_tensors``: each tensor expanded to the common shape; one that already has it is returned
    itself, as PyTorch's (no view, no ExpandBackward0)."""
    from ._dispatch import broadcast_shapes
    shape = broadcast_shapes(*[t._shape for t in tensors])
    return tuple(t if t._shape == shape else expand(t, shape) for t in tensors)


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


# ---- repeat_interleave / meshgrid (composites of the ops above, as in PyTorch) ------------------------------
def _repeat_index(repeats, output_size):
    """``torch.repeat_interleave(repeats)``: ``i`` repeated ``repeats[i]`` times (repeats' integer dtype)."""
    from ._dispatch import data_dependent_error
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dtype not in (D.int64, D.int32):
        raise no_kernel("repeat_interleave_cpu", repeats.dtype)
    flat = reshape(repeats, (-1,))
    arr = flat._array
    if isinstance(arr, jax.core.Tracer):
        if output_size is None:
            raise data_dependent_error("repeat_interleave with a tensor of repeats and no output_size", arr)
        out = jnp.repeat(jnp.arange(arr.shape[0], dtype=arr.dtype), arr, total_repeat_length=int(output_size))
        return type(repeats)._from_array(out, repeats.dtype, repeats.device)
    host = np.asarray(arr)
    if (host < 0).any():
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and int(output_size) != int(host.sum()):
        raise RuntimeError("allocated size does not match required size")
    out = np.repeat(np.arange(host.shape[0], dtype=host.dtype), host)
    from .indexing import _host_tensor
    return _host_tensor(out, repeats.dtype, repeats.device)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or each slice along ``dim``) ``repeats`` times: an int (a view chain, ViewBackward0)
    or a 0-d / 1-d integer tensor (``index_select``, IndexSelectBackward0). ``repeat_interleave(repeats)`` gives
    the indices ``i`` repeated ``repeats[i]`` times."""
    from .._tensor.tensor import Tensor
    if repeats is None:
        return _repeat_index(input, output_size)
    if dim is None:
        input, d = flatten(input), 0
    else:
        d = _wrap_dim(dim, input.dim())
    n = input._shape[d] if input._shape else 1
    if not isinstance(repeats, Tensor):
        repeats = int(repeats)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and int(output_size) != n * repeats:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * repeats} but got "
                               f"{output_size}")
        shape = input._shape
        big = shape[:d + 1] + (repeats,) + shape[d + 1:]
        from .view_ops import unsqueeze
        rep = expand(unsqueeze(input, d + 1), big)
        return view(contiguous(rep), shape[:d] + (n * repeats,) + shape[d + 1:])
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.numel() == 1:
        repeats = expand(reshape(repeats, (1,)), (n,))
    elif repeats._shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats._shape[0]} and input.size({d}) = {n}")
    from .gather_scatter import index_select
    return index_select(input, d, _repeat_index(repeats, output_size))


def _repeat_interleave_method(self, repeats, dim=None, *, output_size=None):
    """``Tensor.repeat_interleave``: ``repeats`` is required (the index form is ``torch.repeat_interleave(r)``)."""
    return repeat_interleave(self, repeats, dim, output_size=output_size)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d / 1-d tensors (each an expanded view: ExpandBackward0). ``indexing='ij'``
    (the default, with PyTorch's warning when not given) or ``'xy'`` (first two dims swapped)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    grid = tuple(t.numel() for t in ts)
    out = []
    for i, t in enumerate(ts):
        vshape = tuple(-1 if j == i else 1 for j in range(len(ts)))
        out.append(expand(view(t, vshape), grid))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


METHODS = {"contiguous": contiguous, "clone": clone, "flatten": flatten, "ravel": ravel, "view_as": view_as,
           "reshape_as": reshape_as, "expand_as": expand_as, "unbind": unbind, "split": split, "chunk": chunk,
           "tensor_split": tensor_split, "T": property(T), "mT": property(mT),
           "repeat_interleave": _repeat_interleave_method}
FUNCTIONS = {"clone": clone, "flatten": flatten, "ravel": ravel, "unbind": unbind, "split": split, "chunk": chunk,
             "tensor_split": tensor_split, "hstack": hstack, "vstack": vstack,
             "broadcast_tensors": broadcast_tensors, "numel": numel, "broadcast_shapes": broadcast_shapes,
             "repeat_interleave": repeat_interleave, "meshgrid": meshgrid}
