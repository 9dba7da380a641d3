"""Stride bookkeeping for views (spec §5).

A view tensor is (storage, sizes, strides, offset, view function). Strides and offsets are in
elements of the base tensor's logical, contiguous layout; they reproduce PyTorch's ``stride()``,
``storage_offset()``, ``is_contiguous()`` and decide when ``view()`` is legal. The view function
(a composition of jnp reshapes/slices/transposes) materialises the view from the base array; the
strides give the flat index map used to write through the view in one scatter.
"""
from __future__ import annotations

import math

import numpy as np


def contiguous_strides(shape) -> tuple:
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def is_contiguous(shape, strides) -> bool:
    expected = 1
    for size, st in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if size == 0:
            return True
        if st != expected:
            return False
        expected *= size
    return True


def view_strides(oldshape, oldstride, newshape):
    """PyTorch's ``computeStride``: strides for viewing (oldshape, oldstride) as newshape, or None."""
    numel = math.prod(oldshape)
    if numel == 0:
        return contiguous_strides(newshape) if tuple(oldshape) != tuple(newshape) else tuple(oldstride)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1] if oldstride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def infer_shape(shape, numel: int) -> tuple:
    """Resolve one -1 in a requested shape with PyTorch's errors (VIEW-16..21)."""
    shape = tuple(shape)
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if infer is not None:
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                                   "unspecified dimension size -1 can be any value and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def index_map(shape, strides, offset) -> np.ndarray:
    """Flat base indices of every element of a view, in the view's shape (int64 numpy)."""
    idx = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (size, st) in enumerate(zip(shape, strides)):
        r = np.arange(size, dtype=np.int64) * st
        idx = idx + r.reshape((size,) + (1,) * (len(shape) - d - 1))
    return idx


def has_internal_overlap(shape, strides) -> bool:
    """True when two elements share one memory location (an expanded view, VIEW-40)."""
    return any(st == 0 and size > 1 for size, st in zip(shape, strides))
