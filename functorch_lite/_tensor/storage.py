"""Storage: one jax.Array (the base tensor's values, in its logical shape) + a version counter.

JAX arrays are immutable, so "writing into a storage" means replacing ``array`` with a new array
(one jitted scatter for views, see views.py) and bumping ``version``. Every tensor that shares the
storage (views, ``detach()``) sees the new values on its next read and shares its version counter.

``.data`` shares the values but not the version counter (as PyTorch, VIEW-53): it gets a
:class:`SharedStorage`, a second header over the same values with its own ``version``.
"""
from __future__ import annotations

import itertools
import weakref

_ids = itertools.count(1)


# While ``compile`` traces a function, ``WRITE_LOG[0]`` is a dict {id(root storage): (storage, array, version)}
# of every storage written, recorded before its first write (so the trace can be undone and checked).
WRITE_LOG: list = [None]


def log_write(storage) -> None:
    r = storage.root()
    log = WRITE_LOG[0]
    if id(r) not in log:
        log[id(r)] = (r, r.array, r.version)


# While ``compile`` traces a function, ``SET_LOG[0]`` is a dict of the facade state that changes by assignment
# rather than by a storage write: a tensor's ``.grad`` and ``.data`` (its header fields), an optimizer's
# per-parameter state. Each entry, recorded before the first change, is ``(object, attribute names, old values)``
# or ``(dict, key, old value or MISSING)``: the trace puts them back and checks what it may not change.
SET_LOG: list = [None]
MISSING = object()


def log_attrs(obj, names: tuple) -> None:
    log = SET_LOG[0]
    k = (id(obj), names)
    if k not in log:
        log[k] = (obj, names, tuple([getattr(obj, n) for n in names]))


def log_item(d: dict, key) -> None:
    log = SET_LOG[0]
    k = (id(d), id(key))
    if k not in log:
        log[k] = (d, key, dict.get(d, key, MISSING))


def undo_sets(log: dict) -> None:
    for obj, key, old in log.values():
        if isinstance(obj, dict):
            if old is MISSING:
                dict.pop(obj, key, None)
            else:
                dict.__setitem__(obj, key, old)
        else:
            for n, v in zip(key, old):
                setattr(obj, n, v)


META_NO_DATA = "Cannot copy out of meta tensor; no data!"  # (PyTorch's error for reading a meta tensor's values)


def meta_array(shape, jdtype):
    """A meta tensor's "array": shape and dtype only (``jax.ShapeDtypeStruct``), no memory."""
    import jax
    return jax.ShapeDtypeStruct(tuple(shape), jdtype)


def mark_zeros(storage, arr) -> None:
    """``arr``, now the storage's array, is zeros (``zero_()`` wrote it): while ``storage.zeros()`` is its
    array, the values are known zeros (``compile`` then neither passes nor returns them: a zeroed .grad costs the
    program nothing). A weak reference: a storage written since does not keep the old zeros alive."""
    try:
        storage.zeros = weakref.ref(arr)
    except TypeError:  # (a meta tensor's ShapeDtypeStruct)
        storage.zeros = None


class Storage:
    __slots__ = ("array", "version", "device", "uid", "inference", "zeros", "flat", "__weakref__")

    def __init__(self, array, device, inference=False):
        self.array = array        # jax.Array (or a tracer under compile), shape = base tensor's shape
        self.version = 0          # PyTorch's _version (shared by every tensor on this storage)
        self.device = device      # facade device (canonical)
        self.uid = next(_ids)     # stands in for data_ptr()'s base address
        self.inference = inference
        self.zeros = None         # a weak reference to the array ``zero_()`` last wrote (``mark_zeros``)
        self.flat = False         # ``resize``d: ``array`` is the flat buffer, read by each tensor's strides

    def resize(self, n: int) -> None:
        """``resize_`` past the end (or ``untyped_storage().resize_``): ``array`` becomes a flat buffer of ``n``
        elements, the old ones first at their (row-major) positions, zeros after. The view chains of the tensors
        already on this storage were built against the old shape: once ``flat``, every tensor reads and writes it
        through its strides and offset (``Tensor._array``), so old views keep their elements, as PyTorch's do."""
        import jax.numpy as jnp
        old = self.array.reshape(-1)
        k = old.shape[0]
        self.array = old[:n] if n <= k else jnp.concatenate([old, jnp.zeros((n - k,), old.dtype)])
        self.flat = True

    def nbytes(self) -> int:
        return int(self.array.size) * self.array.dtype.itemsize

    def root(self) -> "Storage":
        """The storage that holds the values (self, except for a SharedStorage)."""
        return self

    def with_new_counter(self) -> "Storage":
        """A header over the same values with a fresh version counter (``.data``)."""
        return SharedStorage(self.root())


class SharedStorage(Storage):
    """Values (array, device, uid, inference) read from and written to ``owner``; ``version`` is its own."""
    __slots__ = ("owner",)

    def __init__(self, owner: Storage):  # noqa: super().__init__ not called: the values live in owner
        self.owner = owner
        self.version = 0

    array = property(lambda s: s.owner.array, lambda s, v: setattr(s.owner, "array", v))
    device = property(lambda s: s.owner.device, lambda s, v: setattr(s.owner, "device", v))
    uid = property(lambda s: s.owner.uid)
    inference = property(lambda s: s.owner.inference)
    flat = property(lambda s: s.owner.flat)

    def resize(self, n: int) -> None:
        self.owner.resize(n)

    def root(self) -> Storage:
        return self.owner
