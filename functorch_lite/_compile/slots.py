"""The slots of a compiled call (state.discover lists them): places where facade state lives, each read as a
pytree of arrays, put in place (traced) while tracing, taken back, written after the call, and described by a
guard sig (``sig()``) that is part of the compiled program's key.

- ``StorageSlot``: a tensor's storage (parameters, buffers, argument and closure tensors).
- ``ArgViewSlot``: an argument that views another tensor's storage and needs no gradient (a batch sliced from a
  dataset): its own values.
- ``ScalarArgSlot``: an int or float argument made dynamic (``_symbolic.py``): its value, traced.
- ``GradSlot``: the ``.grad`` field of a tensor that requires grad (None or an array).
- ``OptSlot``: an optimizer's optax state for one parameter (None before its first step).
- ``HyperSlot``: an optimizer group's numeric hyperparameters (lr, betas...), so a changed LR is an input,
  never a recompile.
- ``RngSlot``: a generator's PRNG key (the default one always), so random ops draw fresh values per call.
"""
from __future__ import annotations

import jax
import numpy as np

from .._tensor.tensor import Tensor
from .._device import to_jax
from .._tensor.storage import mark_zeros
from ..optim.optimizer import CONCRETE
from .._symbolic import SymNumber


def _donated(a) -> bool:
    return isinstance(a, jax.Array) and not isinstance(a, jax.core.Tracer) and a.is_deleted()


class StorageSlot:
    __slots__ = ("tensor", "storage", "name", "aliases")

    def __init__(self, tensor, name):
        self.tensor, self.storage, self.name = tensor, tensor._storage.root(), name
        self.aliases = ()  # the views of ``tensor`` that the walk reached too (state.Discovery.tensor)

    def get(self):
        return self.storage.array

    def put(self, v):
        self.storage.array = v

    def snap(self):
        return self.storage.array

    def restore(self, token):
        self.storage.array = token

    def rollback(self, v):
        """A data-dependent check failed in the program (``ops/_deferred``): ``v`` is the array it had when
        that check was made, which the program returns (its buffer may have been donated)."""
        self.storage.array = v

    def sig(self):
        a = self.storage.array
        st = self.storage  # (an inference tensor: its program is another, whose trace raises where torch does)
        return ("s", a.shape, a.dtype, st.device, self.tensor._requires_grad, st.inference)


class ArgViewSlot:
    """An argument that views another tensor's storage and needs no gradient: a batch sliced from a dataset
    (``f(X[i:i + b])``, ``X.split(b)``, ``X[i]``). Its values are the program's input, as a plain tensor's are,
    so the next slice (another offset into the same storage) runs the same program; read through its storage,
    the view's offsets were constants of the program, a recompile per batch (``arg 0 changed: a view
    (slice(0, 5, 10, 1)) -> a view (slice(0, 10, 15, 1))``) until the cache limit sent every call to eager.

    While tracing, the function gets a fresh tensor over the traced values in the argument's place (``_sub``,
    ``runner._with_subs``): a view the function takes of it views the input, not the dataset's storage (whose
    array would be a constant of the program). The function must not write to it, nor make it require grad
    (``changed``): such a call is traced again with its view arguments read through their storages
    (``CompiledFunction._views``). Its sig leaves the offset out: the strides are in it."""
    __slots__ = ("tensor", "name", "pos", "_sub", "_st")

    def __init__(self, tensor, name, pos):
        self.tensor, self.name, self.pos = tensor, name, pos
        self._sub = self._st = None

    @staticmethod
    def eligible(t) -> bool:
        """A contiguous view that needs no gradient. (A non-contiguous one, ``x.t()``, a strided slice, an
        ``expand``, is read through its storage: the function sees its strides, as eager's does -- ``view(-1)`` of
        a transpose raises, ``is_contiguous()`` is False -- where a fresh tensor over its values would not.)"""
        return t._chain is not None and not t._requires_grad and t.grad_fn is None and t.is_contiguous()

    def get(self):
        return self.tensor._array

    def put(self, v):
        t = self.tensor
        self._sub = Tensor._from_array(v, t.dtype, t.device)
        self._st = self._sub._storage

    def snap(self):
        return None

    def restore(self, token):
        self._sub = self._st = None

    def changed(self) -> bool:
        """The function wrote to its argument (in place, ``.data =``) or made it require grad."""
        s = self._sub
        return s._storage is not self._st or self._st.version != 0 or s._requires_grad

    def sig(self):
        t = self.tensor
        return ("v", t._shape, t.dtype, t._storage.device, t._strides)


class ScalarArgSlot:
    """An int or float argument the program takes as an input (torch.compile's automatic dynamic: its value
    changed between calls; ``_symbolic.py``). While tracing, the function gets a ``SymNumber`` in its place
    (``_sub``, ``runner._with_subs``). Its sig is its type: a new value is no new program."""
    __slots__ = ("value", "name", "pos", "_sub", "tensor")

    def __init__(self, value, name, pos):
        self.value, self.name, self.pos = value, name, pos
        self._sub = self.tensor = None

    def get(self):
        return np.int64(self.value) if type(self.value) is int else np.float64(self.value)

    def put(self, v):
        self._sub = SymNumber(v, type(self.value), frozenset((self.pos,)), ("a", self.pos))

    def snap(self):
        return None

    def restore(self, token):
        self._sub = None

    def sig(self):
        return ("n", type(self.value).__name__)


class KnownZero:
    """A ``.grad`` whose values are known zeros (``zero_()`` wrote them: ``Storage.zeros``): a pytree with no
    leaves, so the program takes no input for it and traces constant zeros (XLA folds the accumulation into them).
    One instance per (shape, dtype): a slot's value compares by identity."""
    __slots__ = ("shape", "dtype")
    _cache: dict = {}

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    @classmethod
    def of(cls, shape, dtype) -> "KnownZero":
        z = cls._cache.get((shape, dtype))
        if z is None:
            z = cls._cache[(shape, dtype)] = cls(shape, dtype)
        return z


jax.tree_util.register_pytree_node(KnownZero, lambda z: ((), (z.shape, z.dtype)), lambda aux, _: KnownZero.of(*aux))


def _known_zero(g):
    """``g``'s values as a KnownZero when ``zero_()`` wrote them last (a plain base tensor), else None."""
    st = g._storage
    z = st.zeros
    if z is not None and g._chain is None and z() is st.array and st.root() is st:
        return KnownZero.of(g._shape, st.array.dtype)
    return None


class GradSlot:
    __slots__ = ("tensor", "name")

    def __init__(self, tensor, name):
        self.tensor, self.name = tensor, name

    def get(self):
        g = self.tensor._grad
        if g is None:
            return None
        if g._chain is not None or g._storage.root() is not g._storage:
            return g._array
        z = _known_zero(g)
        return g._storage.array if z is None else z

    def put(self, v):
        """Trace time: a fresh grad tensor over ``v`` (the original grad object is never written)."""
        if type(v) is KnownZero:
            arr = jax.numpy.zeros(v.shape, v.dtype)
            self.tensor._grad = Tensor._from_array(arr, self.tensor.dtype, self.tensor.device)
            mark_zeros(self.tensor._grad._storage, arr)
            return
        self.tensor._grad = None if v is None else Tensor._from_array(v, self.tensor.dtype, self.tensor.device)

    def snap(self):
        return self.tensor._grad

    def restore(self, token):
        self.tensor._grad = token

    def write(self, v, dtype, bump=1):
        """After the program: the new .grad values; ``bump``: the in-place writes the function made to the
        .grad it left (0 for one a backward created: a new .grad starts at version 0, as PyTorch's)."""
        t = self.tensor
        cur = t._grad
        if v is None:
            t._grad = None
        elif cur is not None and tuple(cur._shape) == tuple(v.shape) and cur.dtype is dtype:
            # the existing .grad tensor keeps its identity, as an accumulation would; a view's (a flat gradient
            # buffer's slice) is written through: the buffer holds the values
            _write_kept(cur, v, max(1, bump))  # (its values changed)
        else:
            t._grad = Tensor._from_array(v, dtype, t.device)
            t._grad._storage.version = bump

    def rollback(self, v):
        """As ``StorageSlot.rollback``, for the .grad's buffer."""
        g = self.tensor._grad
        if g is not None and v is not None and tuple(g._shape) == tuple(v.shape):
            _write_kept(g, v, 0)

    def write_zero(self, z: KnownZero, dtype, bump):
        """After the program: the function left this .grad zeroed (``zero_()``): its storage takes the zeros
        array it had (made again only when it was written since), as an in-place write would (``bump``: the
        writes made)."""
        t = self.tensor
        cur = t._grad
        if cur is not None and cur._chain is None and cur._shape == z.shape and cur.dtype is dtype and \
                cur._storage.root() is cur._storage:
            st = cur._storage
            arr = None if st.zeros is None else st.zeros()
            if arr is not None and st.array is arr:  # (known zeros in and out: the steady state)
                st.version += bump
                return
            if arr is None or isinstance(arr, jax.core.Tracer) or arr.is_deleted() or arr.dtype != z.dtype:
                arr = jax.device_put(np.zeros(z.shape, z.dtype), to_jax(t.device))
            st.array = arr
            mark_zeros(st, arr)
            st.version += bump
        elif cur is not None and cur._chain is not None and cur._shape == z.shape and cur.dtype is dtype:
            _write_kept(cur, jax.device_put(np.zeros(z.shape, z.dtype), to_jax(t.device)), bump)  # (a view)
        else:
            arr = jax.device_put(np.zeros(z.shape, z.dtype), to_jax(t.device))
            t._grad = Tensor._from_array(arr, dtype, t.device)
            mark_zeros(t._grad._storage, arr)
            t._grad._storage.version = bump

    def sig(self):
        t = self.tensor
        g = t._grad
        sig = ("g", None if g is None else (g._shape, g.dtype, _known_zero(g) is not None))
        # (a grad_dtype set: the dtype the backward inside casts its gradients to)
        return sig + (t.__dict__["_grad_dtype"],) if t.__dict__ and "_grad_dtype" in t.__dict__ else sig


def _write_kept(g, v, bump) -> None:
    """``v`` into the .grad tensor ``g``, kept (its version counter: ``bump`` writes); a view (of a flat gradient
    buffer) is written through, into its base's storage, which shares its counter."""
    st = g._storage
    if g._chain is None:
        st.array = v
    else:
        g._write(v)
        st.version -= 1
    st.version += bump


class OptSlot:
    __slots__ = ("opt", "param", "group", "name", "_sig")

    def __init__(self, opt, param, group, name):
        self.opt, self.param, self.group, self.name = opt, param, group, name
        self._sig = (None, None)   # (state, its sig): optax states are immutable tuples of arrays

    def get(self):
        opt, p = self.opt, self.param
        # (the entries the step reads: one deleted is torch's KeyError or a restarted buffer; the dict emptied, a
        # fresh state, as the eager step's: Optimizer._group_step)
        if p in opt._ostate and opt._sync_from_views(p, opt._read_fields(self.group)):
            opt._put_state(p, opt._init_state(opt._prog_key(self.group), p._array))
        return opt._ostate.get(p)

    def _set(self, v):
        if v is None:
            self.opt._ostate.pop(self.param, None)
        else:
            self.opt._ostate[self.param] = v

    def put(self, v):
        """Install ``v`` and point the ``optimizer.state[p]`` tensors at it (else the optimizer would read the
        views' old arrays back as a user modification)."""
        self._set(v)
        if v is not None and dict.get(self.opt.state, self.param) is not None:
            self.opt._refresh_views(self.param, self.group)

    def drop(self):
        """No state at all (a GradScaler skipped this parameter's first step)."""
        self._set(None)
        dict.pop(self.opt.state, self.param, None)

    def snap(self):
        return self.opt._ostate.get(self.param), dict.get(self.opt.state, self.param)

    def restore(self, token):
        st, views = token
        self._set(st)
        if views is None:
            dict.pop(self.opt.state, self.param, None)
        else:
            dict.__setitem__(self.opt.state, self.param, views)

    def write(self, v, sig=None):
        """After the program: the new state (``sig``: its guard sig, when the caller knows it)."""
        self._set(v)
        if v is not None:
            self.opt._refresh_views(self.param, self.group)
            if sig is not None:
                self._sig = (v, sig)

    def rollback(self, v, bump=0):
        """As ``StorageSlot.rollback``, for the optimizer state; ``bump``: whether the ``state[p]`` tensors'
        versions count a write (a step made before the check), else they stay as they were."""
        if v is None:
            return
        views = dict.get(self.opt.state, self.param)
        before = [(t._storage, t._storage.version) for t in views.values()] if views and not bump else ()
        self.write(v)
        for st, ver in before:
            st.version = ver

    def sig(self):
        st = self.opt._ostate.get(self.param)
        if st is None:
            return ("o", None)
        old, sig = self._sig
        if old is st:
            return sig
        leaves, tree = jax.tree_util.tree_flatten(st)
        sig = ("o", tree, tuple((a.shape, a.dtype) for a in leaves))
        self._sig = (st, sig)
        return sig


class HyperSlot:
    """The numeric hyperparameters of one param group, traced (``group['lr']`` holds a tracer while tracing)."""
    __slots__ = ("group", "keys", "name", "_on_device")

    def __init__(self, group, keys, name):
        self.group, self.keys, self.name = group, keys, name
        self._on_device = {}  # key -> (the Python value, its float64 array on the parameters' device)

    def get(self):
        """float64 scalars on the group's device, each sent once per value (a Python float argument would be
        copied to the device on every call: on a GPU, a transfer per option per step); a tensor option (an LR
        given as a tensor, changed in place by a scheduler) is its array, read afresh."""
        out, cache = {}, self._on_device
        for k in self.keys:
            v = self.group[k]
            if isinstance(v, Tensor) or isinstance(v, tuple) and any(isinstance(x, Tensor) for x in v):
                out[k] = tuple(_value(x) for x in v) if isinstance(v, tuple) else v._array
                continue
            hit = cache.get(k)
            if hit is None or hit[0] != v or type(hit[0]) is not type(v):
                hit = cache[k] = (v, self._put(v))
            out[k] = hit[1]
        return out

    def _put(self, v):
        if isinstance(v, tuple):
            return tuple(self._put(x) for x in v)
        ps = self.group.get("params") or ()
        arr = ps[0]._storage.array if ps else None
        x = np.float64(v)
        if not isinstance(arr, jax.Array) or isinstance(arr, jax.core.Tracer):  # (no parameter, meta, a trace)
            return x
        return jax.device_put(x, next(iter(arr.devices())))

    def put(self, v):
        """Trace time: the options' tracers (a tensor option: a 0-d facade tensor over its tracer)."""
        concrete = CONCRETE.setdefault(id(self.group), dict(self.group))  # (as they are: what selects the program)
        for k in self.keys:
            old = concrete[k]
            self.group[k] = Tensor._from_array(v[k], old.dtype, old.device) if isinstance(old, Tensor) else v[k]

    def write(self, v):
        """After the program: the values the function assigned: into a tensor option in place, else as Python
        floats (a host read)."""
        for k, x in v.items():
            cur = self.group[k]
            if isinstance(cur, Tensor):
                cur._write(x.astype(cur._array.dtype))  # (an in-place write: the version bumps)
            else:
                self.group[k] = tuple(float(y) for y in x) if isinstance(x, tuple) else float(x)

    def snap(self):
        return {k: self.group[k] for k in self.keys}

    def restore(self, token):
        self.group.update(token)
        CONCRETE.pop(id(self.group), None)

    def sig(self):
        return ("h", tuple(_hyper_kind(self.group[k]) for k in self.keys))


def _hyper_kind(v):
    """An option's part of the guard: a Python number, or a tensor's dtype and shape (a float LR replaced by a
    float32 tensor between calls: a new program), per element of a tuple (betas)."""
    if isinstance(v, Tensor):
        return (v.dtype, v._shape)
    if isinstance(v, tuple):
        return tuple(_hyper_kind(x) for x in v)
    return -1


def _value(x):
    return x._array if isinstance(x, Tensor) else np.float64(x)


class RngSlot:
    __slots__ = ("gen", "name")

    def __init__(self, gen, name):
        self.gen, self.name = gen, name

    def get(self):
        return self.gen.key

    def put(self, v):
        self.gen._key = v

    def snap(self):
        return self.gen._key

    def restore(self, token):
        self.gen._key = token

    def rollback(self, v):
        """As ``StorageSlot.rollback``: the key as a failed check found it (the draws before it made)."""
        self.gen._key = v

    def sig(self):
        return ("r",)
