"""``pickle``, ``copy.copy`` and ``copy.deepcopy`` of a Tensor, as PyTorch's (``Tensor.__reduce_ex__`` /
``__copy__`` / ``__deepcopy__`` call these).

- pickle: the values of the tensor's whole storage, its size, strides and offset, ``requires_grad``, its class
  (a ``Parameter`` stays one) and its ``__dict__``; not ``.grad``. Each tensor is pickled with its own copy of its
  storage (PyTorch's plain pickle does not keep two views of one storage sharing it either).
- ``copy.copy``: a new tensor over the same storage (writes through either are seen by both), with
  ``requires_grad``, class and a shallow copy of ``__dict__``; its own version counter, no ``.grad``, no history.
- ``copy.deepcopy``: graph leaves only (PyTorch's error otherwise). The storage is copied once per deepcopy call
  (the memo is keyed by storage), so views of one storage stay views of one new storage; ``.grad`` and
  ``__dict__`` are deep-copied too.
"""
from __future__ import annotations

import copy as _copy

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from . import views as V
from .storage import Storage

_DEEPCOPY_MEMO_KEY = "functorch_lite.storage"  # memo[key]: {root storage uid: its copy} (uids are never reused)
_NON_LEAF_DEEPCOPY = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001")


def _traced(arr) -> None:
    if isinstance(arr, jax.core.Tracer):
        from ..ops._dispatch import data_dependent_error
        raise data_dependent_error("pickling a tensor")


def attrs(t) -> dict:
    """The ``__dict__`` a copy or a pickle carries: not ``grad_dtype`` (autograd metadata in torch, which copies,
    pickles and ``torch.save`` reset to the dtype)."""
    d = t.__dict__
    if "_grad_dtype" not in d:
        return dict(d)
    return {k: v for k, v in d.items() if k != "_grad_dtype"}


def reduce_ex(t):
    """``(rebuild, args)`` for pickle: the storage's values (host numpy; ``("meta", shape)`` for meta), layout."""
    root = t._storage.root()
    base = root.array
    _traced(base)
    dev = str(root.device)
    state = attrs(t)
    meta = type(base) is jax.ShapeDtypeStruct
    if t._chain is None:  # a base tensor: its storage array is its values
        vals = ("meta", tuple(base.shape)) if meta else np.asarray(base)
        layout = (tuple(t._shape), t._strides, 0, False)
    elif np.dtype(base.dtype) == t.dtype.np and not V.view_sign(t._chain):
        # a view that only selects elements: the whole storage, read through (size, stride, offset)
        vals = ("meta", (int(np.prod(base.shape)),)) if meta else np.asarray(base).reshape(-1)
        layout = (tuple(t._shape), tuple(t.stride()), t.storage_offset(), True)
    elif meta:
        vals = ("meta", tuple(t._shape))
        layout = (tuple(t._shape), None, 0, False)
    else:  # a view that reinterprets or negates its storage's values (view(dtype), conj()): its own values
        vals = np.ascontiguousarray(np.asarray(t._array))
        layout = (tuple(t._shape), None, 0, False)
    return rebuild, (vals, dev, t.dtype.name, layout, bool(t._requires_grad), type(t), state)


def rebuild(vals, device, dtype_name, layout, requires_grad, cls, state):
    """Inverse of :func:`reduce_ex` (the name pickles refer to: keep it)."""
    from .. import _device as _dev
    from .tensor import Tensor
    dt = D._NAME[dtype_name]
    dev = _dev.canonical(device)
    shape, strides, offset, strided = layout
    if isinstance(vals, tuple):  # ("meta", storage shape): a meta tensor has no values
        from .storage import meta_array
        arr = meta_array(vals[1], dt.jnp)
    else:
        arr = jax.device_put(np.asarray(vals), _dev.to_jax(dev))
    storage = Storage(arr, dev)
    if not issubclass(cls, Tensor):
        cls = Tensor
    if strided:
        strides = tuple(strides)
        t = cls._header(storage, tuple(shape), dt, ((V.STRIDED, (tuple(shape), strides, offset)),), strides, offset,
                        None)
    else:
        t = cls._header(storage, tuple(shape), dt, None, None if strides is None else tuple(strides), 0, None)
    t._requires_grad = requires_grad
    if state:
        t.__dict__.update(state)
    return t


def shallow_copy(t):
    """``copy.copy``: the same storage (its own version counter), layout, class, requires_grad, ``__dict__``."""
    cls = type(t)
    from .tensor import Tensor
    if cls.__reduce_ex__ is not Tensor.__reduce_ex__:  # (a subclass that pickles its own way: follow it)
        return _copy._reconstruct(t, None, *t.__reduce_ex__(4))
    r = cls._header(t._storage.with_new_counter(), t._shape, t.dtype, t._chain, t._strides, t._offset, None,
                    t._cache, t._idx)
    r._requires_grad = t._requires_grad
    if t.__dict__:
        r.__dict__.update(attrs(t))
    return r


def deep_copy(t, memo):
    """``copy.deepcopy``: one new storage per storage in this deepcopy call (views stay views of it)."""
    hit = memo.get(id(t))
    if hit is not None:
        return hit
    if not t.is_leaf:
        raise RuntimeError(_NON_LEAF_DEEPCOPY)
    root = t._storage.root()
    copies = memo.setdefault(_DEEPCOPY_MEMO_KEY, {})
    new = copies.get(root.uid)
    if new is None:
        arr = root.array
        # (a real copy: the arrays of a storage can be donated to a jitted update, which deletes them)
        new = Storage(arr if type(arr) is jax.ShapeDtypeStruct else jnp.copy(arr), root.device, root.inference)
        new.flat = root.flat  # (a storage grown by resize_: its tensors read it through their strides)
        copies[root.uid] = new
        memo.setdefault(id(memo), []).append(root)  # (keep the original storage alive while the memo lives)
    r = type(t)._header(new, t._shape, t.dtype, t._chain, t._strides, t._offset, None, None, t._idx)
    r._requires_grad = t._requires_grad
    memo[id(t)] = r
    if t._grad is not None:
        r._grad = _copy.deepcopy(t._grad, memo)
    if t.__dict__:
        r.__dict__.update(_copy.deepcopy(attrs(t), memo))
    return r
