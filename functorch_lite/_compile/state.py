"""What a compiled function can read and write, found before each call (design.md §3, "functionalised state").

A jitted function sees only its arguments and changes only what it returns. ``discover`` walks the compiled
function's roots — its arguments, the cells of its closure, the globals its code names (and, one level down,
the closures/globals of functions found there), a bound method's ``self`` — and lists *slots*: places where
facade state lives.

- ``StorageSlot``: a tensor's storage (parameters, buffers, argument and closure tensors).
- ``GradSlot``: the ``.grad`` field of a tensor that requires grad (None or an array).
- ``OptSlot``: an optimizer's optax state for one parameter (None before its first step).
- ``HyperSlot``: an optimizer group's numeric hyperparameters (lr, betas...), so a changed LR is an input,
  never a recompile.
- ``RngSlot``: a generator's PRNG key (the default one always), so random ops draw fresh values per call.

Each slot reads its value as a pytree of arrays, and can put a (traced) value in place and take it back.
"""
from __future__ import annotations

import types

import jax
import numpy as np

from .._tensor.tensor import Tensor

_MAX_DEPTH = 3


class StorageSlot:
    __slots__ = ("tensor", "storage", "name")

    def __init__(self, tensor, name):
        self.tensor, self.storage, self.name = tensor, tensor._storage.root(), name

    def get(self):
        return self.storage.array

    def put(self, v):
        self.storage.array = v

    def snap(self):
        return self.storage.array

    def restore(self, token):
        self.storage.array = token

    def sig(self):
        a = self.storage.array
        return ("s", a.shape, a.dtype, self.storage.device, self.tensor._requires_grad)


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
        return g._storage.array

    def put(self, v):
        """Trace time: a fresh grad tensor over ``v`` (the original grad object is never written)."""
        self.tensor._grad = None if v is None else Tensor._from_array(v, self.tensor.dtype, self.tensor.device)

    def snap(self):
        return self.tensor._grad

    def restore(self, token):
        self.tensor._grad = token

    def write(self, v, dtype):
        t = self.tensor
        cur = t._grad
        if v is None:
            t._grad = None
        elif cur is not None and cur._chain is None and tuple(cur._shape) == tuple(v.shape) and cur.dtype is dtype:
            cur._storage.array = v  # the existing .grad tensor keeps its identity, as an accumulation would
            cur._storage.version += 1
        else:
            t._grad = Tensor._from_array(v, dtype, t.device)

    def sig(self):
        g = self.tensor._grad
        return ("g", None if g is None else (g._shape, g.dtype))


class OptSlot:
    __slots__ = ("opt", "param", "name")

    def __init__(self, opt, param, name):
        self.opt, self.param, self.name = opt, param, name

    def get(self):
        if self.param in self.opt._ostate:
            self.opt._sync_from_views(self.param)
        return self.opt._ostate.get(self.param)

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
            group = next(g for g in self.opt.param_groups if any(q is self.param for q in g["params"]))
            self.opt._refresh_views(self.param, group)

    def snap(self):
        return self.opt._ostate.get(self.param), dict.get(self.opt.state, self.param)

    def restore(self, token):
        st, views = token
        self._set(st)
        if views is None:
            dict.pop(self.opt.state, self.param, None)
        else:
            dict.__setitem__(self.opt.state, self.param, views)

    def write(self, v):
        self._set(v)
        if v is not None:
            group = next(g for g in self.opt.param_groups if any(q is self.param for q in g["params"]))
            self.opt._refresh_views(self.param, group)

    def sig(self):
        st = self.opt._ostate.get(self.param)
        if st is None:
            return ("o", None)
        leaves, tree = jax.tree_util.tree_flatten(st)
        return ("o", tree, tuple((a.shape, a.dtype) for a in leaves))


class HyperSlot:
    """The numeric hyperparameters of one param group, traced (``group['lr']`` holds a tracer while tracing)."""
    __slots__ = ("group", "keys", "name")

    def __init__(self, group, keys, name):
        self.group, self.keys, self.name = group, keys, name

    def get(self):
        """NumPy float64 scalars (a jit argument without an eager device op per value)."""
        out = {}
        for k in self.keys:
            v = self.group[k]
            out[k] = tuple(np.float64(x) for x in v) if isinstance(v, tuple) else np.float64(v)
        return out

    def put(self, v):
        for k in self.keys:
            self.group[k] = v[k]

    def snap(self):
        return {k: self.group[k] for k in self.keys}

    def restore(self, token):
        self.group.update(token)

    def sig(self):
        return ("h", tuple(len(v) if isinstance(v, tuple) else -1 for v in (self.group[k] for k in self.keys)))


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

    def sig(self):
        return ("r",)


class _Recorder(dict):
    def __init__(self, group):
        super().__init__(group)
        self.read = set()

    def __getitem__(self, k):
        self.read.add(k)
        return dict.__getitem__(self, k)

    def get(self, k, default=None):
        self.read.add(k)
        return dict.get(self, k, default)


def _hyper_keys(opt, group) -> tuple:
    """Numeric group options that only feed the update as values (traced): those the optimizer's
    ``_static_key`` does not read (momentum != 0 selects SGD's transform, so it stays a guard)."""
    rec = _Recorder(group)
    opt._static_key(rec)
    return tuple(k for k, v in group.items() if k not in ("params", "param_names") and k not in rec.read
                 and not isinstance(v, bool)
                 and (isinstance(v, (int, float)) or (isinstance(v, tuple) and v
                                                      and all(isinstance(x, (int, float)) for x in v))))


def group_statics(group, traced) -> tuple:
    """The group options that are not traced: constants of the compiled program, hence guards."""
    return tuple((k, repr(v)) for k, v in group.items() if k not in ("params", "param_names") and k not in traced)


class Discovery:
    """The slots reachable from a call's roots, each storage/tensor/optimizer once, in a fixed order."""

    def __init__(self):
        self.slots: list = []
        self.modules: list = []      # (name, module): their ``training`` flags are guards
        self.schedulers: list = []   # LR schedulers: their step() runs after the compiled call
        self.statics: list = []      # Python values the function may use as constants (guards)
        self._seen: set = set()
        self._storages: set = set()

    def tensor(self, t, name, grads=True):
        r = t._storage.root()
        if id(r) not in self._storages:
            self._storages.add(id(r))
            self.slots.append(StorageSlot(t, name))
        if grads and t._requires_grad and t.grad_fn is None and id(t) not in self._seen:
            self._seen.add(id(t))
            self.slots.append(GradSlot(t, name + ".grad"))

    def visit(self, obj, name, depth=0):
        if isinstance(obj, Tensor):
            self.tensor(obj, name)
            return
        if obj is None or isinstance(obj, (int, float, str, bool, complex, types.ModuleType, type)):
            return
        if id(obj) in self._seen or depth > _MAX_DEPTH:
            return
        self._seen.add(id(obj))
        Module, Optimizer, LRScheduler, Generator = _CLASSES or _classes()
        if isinstance(obj, Module):
            self.modules.append((name, obj))
            self.module(obj, name)
            return
        if isinstance(obj, Optimizer):
            for gi, group in enumerate(obj.param_groups):
                for pi, p in enumerate(group["params"]):
                    self.tensor(p, f"{name}.param_groups[{gi}].params[{pi}]")
                    self.slots.append(OptSlot(obj, p, f"{name}.state[{gi}][{pi}]"))
                keys = _hyper_keys(obj, group)
                if keys:
                    self.slots.append(HyperSlot(group, keys, f"{name}.param_groups[{gi}]"))
                self.statics.append((f"{name}.param_groups[{gi}]", group_statics(group, keys)))
            return
        if isinstance(obj, LRScheduler):
            self.schedulers.append(obj)
            self.visit(obj.optimizer, f"{name}.optimizer", depth + 1)
            return
        if isinstance(obj, Generator):
            self.slots.append(RngSlot(obj, name))
            return
        if isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                self.visit(v, f"{name}[{i}]", depth + 1)
            return
        if isinstance(obj, dict):
            for k, v in list(obj.items())[:256]:
                self.visit(v, f"{name}[{k!r}]", depth + 1)
            return
        if isinstance(obj, types.MethodType):
            self.visit(obj.__self__, f"{name}.__self__", depth)
            self.visit(obj.__func__, name, depth)
            return
        if isinstance(obj, types.FunctionType):
            self.function(obj, name, depth + 1)
            return
        if hasattr(obj, "__dict__") and not isinstance(obj, type):
            for k, v in list(vars(obj).items())[:64]:
                self.visit(v, f"{name}.{k}", depth + 1)

    def module(self, m, prefix):
        """A module's parameters and buffers, then its submodules' (each module once), in one walk."""
        d = m.__dict__
        for n, p in d["_parameters"].items():
            if p is not None:
                self.tensor(p, f"{prefix}.{n}")
        for n, b in d["_buffers"].items():
            if b is not None:
                self.tensor(b, f"{prefix}.{n}", grads=False)
        for n, c in d["_modules"].items():
            if c is not None and id(c) not in self._seen:
                self._seen.add(id(c))
                self.modules.append((f"{prefix}.{n}", c))
                self.module(c, f"{prefix}.{n}")

    def function(self, fn, name, depth=0):
        """A function's closure cells and the globals its code (and nested code) names."""
        code = fn.__code__
        if fn.__closure__:
            for var, cell in zip(code.co_freevars, fn.__closure__):
                try:
                    self.visit(cell.cell_contents, var, depth)
                except ValueError:  # an empty cell
                    pass
        g = fn.__globals__
        for n in _names(code):
            if n in g:
                self.visit(g[n], n, depth)


_CLASSES: list = []


def _classes():
    if not _CLASSES:
        from ..nn.modules.module import Module
        from ..optim.lr_scheduler import LRScheduler
        from ..optim.optimizer import Optimizer
        from ..random import Generator
        _CLASSES.extend((Module, Optimizer, LRScheduler, Generator))
    return _CLASSES


_NAMES: dict = {}


def _names(code) -> list:
    hit = _NAMES.get(code)
    if hit is not None:
        return hit
    _NAMES[code] = out = _names_uncached(code)
    return out


def _names_uncached(code) -> list:
    out = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out.extend(_names_uncached(c))
    return out


def discover(fn, args, kwargs) -> Discovery:
    from ..random import default_generator
    d = Discovery()
    for i, a in enumerate(args):
        d.visit(a, f"arg {i}")
    for k, a in kwargs.items():
        d.visit(a, f"argument {k!r}")
    d.visit(fn, getattr(fn, "__name__", "fn"))
    if id(default_generator) not in d._seen:
        d._seen.add(id(default_generator))
        d.slots.append(RngSlot(default_generator, "the default generator"))
    return d
