"""``torch.as_strided`` / ``Tensor.as_strided`` (a view, ``AsStridedBackward0``) and ``torch.empty_strided`` /
``Tensor.new_empty_strided``.

PyTorch's ``as_strided(size, stride, storage_offset)`` reads the input's *storage*: element ``j`` of the result is
storage element ``storage_offset + sum(j_k * stride_k)`` (``storage_offset`` defaults to the input's). Here the
result is a view whose strides and offset are exactly those (so writes through it, ``stride()`` and
``storage_offset()`` are PyTorch's), and whose values are gathered from the input: each storage element the view
reads is matched, at trace time, to the input element that sits on it. So the gradient flows to the input as
PyTorch's does (elements read twice get both gradients). Not supported, each with an error that says so: a view
reaching storage elements that are not elements of the input (``x[2:].as_strided(..., storage_offset=0)``), an
input whose own elements overlap (an expanded view), and an input that reinterprets its storage's dtype.
``empty_strided`` makes a tensor with the given strides when they lay the elements out densely in some order
(as PyTorch's allocator would); other strides (gaps, overlaps) are refused by name.
"""
from __future__ import annotations

import functools
import math

import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._tensor import views as V
from ._registry import defop


def _ints(v):
    if isinstance(v, int):
        v = (v,)
    return tuple(int(x) for x in v)


@functools.lru_cache(maxsize=256)
def _gather_index(size, stride, offset, in_shape, in_strides, in_offset):
    """Input flat (row-major) index of each element of the view, in its shape; None where some element of the view
    is not an element of the input."""
    pos = V.index_map(in_shape, in_strides, in_offset).reshape(-1)
    want = V.index_map(size, stride, offset)
    top = int(max(pos.max(initial=-1), want.max(initial=-1))) + 1
    lut = np.full(top, -1, dtype=np.int64)
    lut[pos] = np.arange(pos.size, dtype=np.int64)
    idx = lut[want]
    return None if (idx < 0).any() else idx


def _as_strided_prep(targs, sargs):
    t = targs[0]
    size, stride, offset = sargs
    size, stride = _ints(size), _ints(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    offset = t._offset if offset is None else int(offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    store = t._storage.array
    if np.dtype(store.dtype) != np.dtype(t.dtype.jnp):
        raise RuntimeError(f"as_strided of a view that reads its {np.dtype(store.dtype).name} storage as "
                           f"{t.dtype.short} is not supported by functorch_lite")
    n_store = math.prod(store.shape)
    isz = t.dtype.itemsize
    need = 0 if 0 in size else offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1
    if need > n_store:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {isz} requiring a storage size of {need * isz} are out of bounds for storage "
                           f"of size {n_store * isz}")
    geom = (t._shape, t.stride(), t._offset)
    if V.has_internal_overlap(t._shape, geom[1]):
        raise RuntimeError("as_strided of a tensor whose elements overlap in memory (an expanded view) is not "
                           "supported by functorch_lite: call .contiguous() on it first")
    if 0 not in size and _gather_index(size, stride, offset, *geom) is None:
        raise RuntimeError(f"as_strided: the view (sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{offset}) reads storage elements that are not elements of the input tensor (sizes "
                           f"{list(t._shape)}, strides {list(geom[1])}, storage offset {t._offset}): functorch_lite "
                           "gathers a view from its input; take as_strided of the tensor that owns the storage")
    return size, stride, (offset, geom)  # (the kernel sees arrays only: the input's geometry travels here)


def _as_strided_meta(t, sargs):
    size, stride, (offset, _) = sargs
    return size, stride, offset


@defop("as_strided", float8=True, grad_fn="AsStridedBackward0", view=_as_strided_meta, prep=_as_strided_prep,
       saves=())
def _as_strided(input, size, stride, storage_offset=None):
    """``input.as_strided(size, stride, storage_offset)``: a view of the input's storage with these strides
    (``storage_offset`` arrives from ``_as_strided_prep`` as (offset, the input's geometry))."""
    offset, geom = storage_offset
    if 0 in size:
        return jnp.zeros(size, input.dtype)
    return input.reshape(-1)[_gather_index(size, stride, offset, *geom)]


def _dense_order(size, stride):
    """The memory order (outermost dim first) in which ``stride`` lays ``size`` out densely, or None."""
    order = sorted(range(len(size)), key=lambda d: (-stride[d], -d))
    expect = 1
    for d in reversed(order):
        if size[d] != 1 and stride[d] != expect:
            return None
        expect *= size[d]
    return tuple(order)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """``torch.empty_strided``: zeros (JAX has no uninitialised memory) laid out with ``stride``."""
    from .. import empty
    from .._tensor.tensor import with_memory_order
    size, stride = _ints(size), _ints(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    t = empty(size, dtype=dtype, device=device)
    if 0 in size:
        t._strides = stride  # (no elements: torch reports the strides asked for)
    elif stride == V.contiguous_strides(size):
        pass
    else:
        order = _dense_order(size, stride)
        if order is None:
            raise RuntimeError(f"empty_strided with strides {list(stride)} for sizes {list(size)} (not a dense "
                               "layout: gaps or overlapping elements) is not supported by functorch_lite")
        t = with_memory_order(t, order, stride)
        if t.stride() != stride:  # (differing only at size-1 dims, which a layout ignores: PyTorch reports them)
            t._strides = stride
    t.requires_grad_(requires_grad)
    return t


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else D.as_dtype(dtype),
                         device=self.device if device is None else device, requires_grad=requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """``torch.empty_permuted``: zeros laid out densely in ``physical_layout``'s order (outermost dim first)."""
    size, order = _ints(size), _ints(physical_layout)
    if len(size) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    for i, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {len(size) - 1}, but got {d} "
                               f"at index {i}).  NB: negative dims not currently supported; file an issue if you "
                               "want it.")
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    stride, n = [0] * len(size), 1
    for d in reversed(order):
        stride[d] = n
        n *= max(size[d], 1)
    stride = tuple(stride)
    t = empty_strided(size, stride, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
                      pin_memory=pin_memory)
    if 0 in size:  # (no elements: torch reports the layout's strides all the same)
        t._strides = stride
    return t


FUNCTIONS = {"empty_strided": empty_strided, "empty_permuted": empty_permuted}
METHODS = {"new_empty_strided": new_empty_strided}
