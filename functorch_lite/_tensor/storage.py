"""Storage: one jax.Array (the base tensor's values, in its logical shape) + a version counter.

JAX arrays are immutable, so "writing into a storage" means replacing ``array`` with a new array
(one jitted scatter for views, see views.py) and bumping ``version``. Every tensor that shares the
storage (views, ``detach()``, ``.data``) sees the new values on its next read.
"""
from __future__ import annotations

import itertools

_ids = itertools.count(1)


class Storage:
    __slots__ = ("array", "version", "device", "uid", "inference", "__weakref__")

    def __init__(self, array, device, inference=False):
        self.array = array        # jax.Array (or a tracer under compile), shape = base tensor's shape
        self.version = 0          # PyTorch's _version (shared by every tensor on this storage)
        self.device = device      # facade device (canonical)
        self.uid = next(_ids)     # stands in for data_ptr()'s base address
        self.inference = inference

    def nbytes(self) -> int:
        return int(self.array.size) * self.array.dtype.itemsize
