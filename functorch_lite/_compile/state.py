"""What a compiled function can read and write, found before each call (design.md §3, "functionalised state").

A jitted function sees only its arguments and changes only what it returns. ``discover`` walks the compiled
function's roots — its arguments, the cells of its closure, the globals its code names (and the closures and
globals of the functions found there and of the user classes' methods the code calls, at any depth), a bound
method's ``self`` — and lists *slots*: places where
facade state lives (``slots.py``: storages, ``.grad`` fields, optimizer states and hyperparameters, RNG keys).

The walk also lists the *guards*: what a trace bakes into the program as constants — Python scalars in what it
reaches (for objects, only the attributes the walked code and the methods it calls read by name, or every one
where it calls ``getattr``), Enum members and other immutable values by value, NumPy values by content, the
functions (with their code), builtins and classes it finds by identity, each module's class — and the lists and
dicts it went through (a compiled call must not change them).
"""
from __future__ import annotations

import collections
import collections.abc
import dis
import functools
import logging
import os
import random
import sys
import types
from itertools import islice, repeat
from operator import is_

import numpy as np

from .._tensor.tensor import Tensor
from .effects import slot_names
from .guards import (ANY_ATTR, SCALARS as _SCALARS, _class_methods, _code_names, _NUMPY_CHECKED, numpy_guard,
                     scalar_guard)
from .slots import ArgViewSlot, GradSlot, HyperSlot, OptSlot, RngSlot, ScalarArgSlot, StorageSlot  # noqa: F401,E501

# How far the walk goes: every entry of a container or object down to _MAX_DEPTH; below it, down to _DEEP, only
# what the walked code names (an attribute it reads, a dict key among its string constants: ``cfg["model"]["rope"]
# ["scale"]``) and the functions it reaches (a chain of helpers)
_MAX_DEPTH, _DEEP = 3, 16
_DICT_ITEMS, _ATTR_ITEMS = 256, 64  # a dict's / an object's first entries are walked (a vocabulary is not), and
                                    # after them those the walked code names


def _hyper_keys(opt, group) -> tuple:
    """A group's numeric options (lr, betas, momentum...): traced inputs, never constants. What selects the
    optimizer's program from them (SGD's ``momentum != 0``) is a guard of its own (``group_statics``)."""
    return tuple(k for k, v in group.items() if k not in ("params", "param_names") and _numeric(v) or (
        isinstance(v, tuple) and v and all(_numeric(x) for x in v)))


def _numeric(v) -> bool:
    """A number, or a 0-d floating tensor (torch's way to change an LR without recompiling)."""
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) or (
        isinstance(v, Tensor) and v.ndim == 0 and v.is_floating_point())


def group_statics(opt, group, traced) -> tuple:
    """The group options that are not traced, and the optimizer's static key (what its traced options select):
    constants of the compiled program, hence guards."""
    return tuple((k, repr(v)) for k, v in group.items() if k not in ("params", "param_names") and k not in traced) \
        + (("static key", opt._key_of(group)),)


class Discovery:
    """The slots reachable from a call's roots, each storage/tensor/optimizer once, in a fixed order.

    With ``plan`` (a ``Plan``), the walk also notes everything it read that could change between calls, so a
    later call can check those few things instead of walking again."""

    def __init__(self, plan=None):
        self.slots: list = []
        self.modules: list = []      # (name, module): their ``training`` flags are guards
        self.schedulers: list = []   # LR schedulers: their step() runs after the compiled call
        self.statics: list = []      # optimizer groups' untraced options (guards read again on every call)
        self.guards: list = []       # (name, value) what the program bakes in, fixed while the walk is reused
        self.frozen = None           # the guards as one hashable key component (``_Guards``)
        self._seen: set = set()
        self._storages: set = set()
        self._slot_of: dict = {}     # id(root storage) -> its StorageSlot
        self.reads: set = set()      # attribute names the walked code reads: those attributes' scalars are guards
        self.calls: set = set()      # method names the walked code calls (their code's reads count too)
        self.containers: list = []   # (name, list, dict or set) walked: a compiled call must not change them
        self.objects: list = []      # the user's plain objects walked: attributes a call sets are replayed (runner)
        self.metas: list = []        # the meta tensors reached (guards, not inputs): ``return x`` gives x itself
        self.gexprs = ()             # the compiled function's branches on dynamic arguments (runner._branches)
        self.pystate: list = []      # (name, iterator or Python/NumPy random generator) reached (runner._pystate)
        self.view_pos: tuple = ()    # the positions (ints, keyword names) of the arguments that are ArgViewSlots
                                     # or ScalarArgSlots (their values are inputs: no constant of the key)
        self._view_roots: set = set()  # their storages' roots
        self.sched_reads: list = []  # indices of the schedulers whose state the walked code reads
        self.scalers: list = []      # GradScalers: what a step inside leaves for an update() outside (runner)
        self.bw_hooks = None         # a module with full backward (pre-)hooks, by name: a graph break (runner)
        self._own = False            # True while walking a library object's attributes or function's closure
        self.plan = plan
        self.base = None             # the reused discovery whose slots this one's follow (discover_cached)
        self._classes: dict = {}     # the user classes whose methods the walk reads: {class: name} (``settle``)

    def tensor(self, t, name, grads=True):
        if self.plan is not None:
            self.plan.tensors.append((t, t._storage, t._requires_grad, t.grad_fn is None, t._grad is None,
                                      t._shape, t._strides))
        if t._storage.device.type == "meta":
            # no values: not an input of the program; what the function computes with it stays meta, as eagerly
            # (the ensembling tutorial's ``copy.deepcopy(model).to("meta")`` base under functional_call)
            self.guards.append((name, ("meta", t._shape, t.stride(), t.dtype, t._requires_grad)))
            self.metas.append(t)
            return
        r = t._storage.root()
        if t._chain is not None or r is not t._storage or t._shape != getattr(r.array, "shape", t._shape):
            # a view: which part of its storage it reads is baked into the program (a window ``pe_full[a:b]``
            # rebound, ``P.t_()``, ``tab.resize_(2)`` between calls: a new program)
            self.guards.append((name, ("layout", t._shape, t.stride(), t._offset)))
        if id(r) not in self._storages:
            self._storages.add(id(r))
            b = t._base
            if b is not None and t.grad_fn is not None and b._requires_grad and b._chain is None:
                # a view with a graph to its base (``b.view(2, 3)``, ``W[i:j]``, ``(x * 2)[1:4]``): the slot
                # differentiates the base, so what the function reads of it through any alias (the view, the base
                # itself, another view) reaches the base's gradient, as torch's graph does
                t, view = b, t
            else:
                view = None
            slot = self._slot_of[id(r)] = StorageSlot(t, name)
            if view is not None:
                slot.aliases = (view,)
            self.slots.append(slot)
        else:
            slot = self._slot_of.get(id(r))
            # a storage reached again: which slot it is, is part of what the program computes (``f(a, a, b)`` then
            # ``f(c, b, c)``, a closure tensor passed as one argument then as another: the same slot sigs), a guard
            self.guards.append((name, ("alias", name, None if slot is None else slot.name)))
            if t._base is not None and t._requires_grad and slot is not None and t._base is slot.tensor and \
                    t is not slot.tensor and all(a is not t for a in slot.aliases):
                # another tensor over a slot's storage with a graph to the slot's tensor (a view of a non-leaf
                # base): where the program's backward runs the function again with that tensor cut from its graph,
                # this view's node is pointed at it (runner._pure), so what the function reads through it reaches it
                slot.aliases += (t,)
        # (a frozen parameter's stale .grad too: ``zero_grad()`` clears it)
        if grads and (t._requires_grad or t._grad is not None) and t.grad_fn is None and id(t) not in self._seen:
            self._seen.add(id(t))
            self.slots.append(GradSlot(t, name + ".grad"))
            # its hooks run in the program's backward: which ones is a guard (registering or removing one bumps
            # STRUCTURE_EPOCH: a reused walk sees it), and what they reach is walked
            for table, hooks in (("hooks", t._hooks), ("post_accumulate_grad_hooks", t._post_hooks)):
                if hooks:
                    self.guards.append((f"{name}.{table}", ("keys", tuple(hooks))))
                    for k, h in hooks.items():
                        self.visit(h, f"{name}.{table}[{k}]", 1)

    def argument(self, a, name, pos, views: bool) -> None:
        """A top-level argument: an int or float at a dynamic position (``discover``'s ``dyn``) is a
        ``ScalarArgSlot``; with ``views``, a view that needs no gradient is an ``ArgViewSlot`` (its values the input,
        not its storage's: a batch sliced from a dataset); anything else is walked."""
        if dynamic_scalar(a):  # (only for the positions ``dyn`` names: discover)
            self.slots.append(ScalarArgSlot(a, name, pos))
            self.view_pos += (pos,)
        elif views and isinstance(a, Tensor) and ArgViewSlot.eligible(a):
            self.slots.append(ArgViewSlot(a, name, pos))
            self._view_roots.add(id(a._storage.root()))
            self.view_pos += (pos,)
        else:
            self.visit(a, name)

    def views_alias(self) -> bool:
        """A view argument's storage is reached another way too (``f(X, X[:5])``, a closure holding the
        dataset): its values and that storage's must be one input (``discover(views=False)``)."""
        return bool(self._view_roots) and not self._view_roots.isdisjoint(self._storages)

    def visit(self, obj, name, depth=0, guard=True):
        """``guard``: what the program bakes in from here is a guard — a Python scalar's value, a function's or
        class's identity, an object's class (not for attributes the walked code never reads, nor below them)."""
        if isinstance(obj, Tensor):
            self.tensor(obj, name)
            return
        if obj is None:  # (a guard: a variable that goes from None to an object the program uses is a recompile)
            if guard:
                self.guards.append((name, ("is", None)))
            return
        if isinstance(obj, _NOT_STATE):  # (a logger's level cache is no state of the program: replay.py)
            return
        if isinstance(obj, types.ModuleType):
            if guard and depth <= _MAX_DEPTH and _user_module(obj) and id(obj) not in self._seen:
                self._seen.add(id(obj))
                self.user_module(obj, name, depth)
            return
        if isinstance(obj, _SCALARS):
            if guard:
                self.guards.append((name, scalar_guard(obj)))
            return
        if isinstance(obj, _values()):  # (a torch.dtype / device / memory_format / layout the program bakes in)
            if guard:
                self.guards.append((name, ("value", obj)))
            return
        if isinstance(obj, (np.ndarray, np.generic)):
            # NumPy values the function reads are constants of the program: guarded by content (an in-place
            # change to an array is seen by the reused walk's check, for arrays up to _NUMPY_CHECKED bytes)
            if guard:
                self.guards.append((name, numpy_guard(obj)))
                if self.plan is not None and isinstance(obj, np.ndarray):
                    self.plan.arrays.append((obj, self.guards[-1][1]))
            return
        if isinstance(obj, (type, types.BuiltinFunctionType)) and guard:
            self.guards.append((name, ("is", obj)))  # the object itself: compared by identity, kept alive
        if isinstance(obj, type):
            if guard and depth <= _MAX_DEPTH and id(obj) not in self._seen:
                self._seen.add(id(obj))
                # (``Cfg.scale(x)``: a static or class method's globals, and the attributes its code reads, first:
                # those are then guarded among the class's)
                self.methods(obj, name)
                self.class_attrs(obj, name, depth)
            return
        if isinstance(obj, types.FunctionType):
            if guard:  # (its code too: ``f.__code__ = ...`` keeps the function)
                self.guards.append((name, ("is", obj, obj.__code__)))
            if id(obj) not in self._seen and depth < _DEEP:  # (a chain of helpers, each calling the next)
                self._seen.add(id(obj))
                self.function(obj, name, depth + 1)
            return
        if id(obj) in self._seen or depth > _DEEP:
            return
        self._seen.add(id(obj))
        if isinstance(obj, (collections.abc.Iterator, random.Random, np.random.RandomState, np.random.Generator)):
            self.pystate.append((name, obj))  # (``next(it)``, ``rng.random()``: Python state, not the program's)
            return
        Module, Optimizer, LRScheduler, Generator, Compiled, Scaler, Sparse = _CLASSES or _classes()
        if type(obj) is Sparse:
            # a sparse COO tensor: its indices and values (and a sparse leaf's dense-gradient tensor) are the program's
            # tensors; its size and flags are guards (its ops that read the indices on the host break the graph)
            if guard:
                self.guards.append((f"{name}.__class__", ("is", type(obj))))
                self.guards.append((f"{name}.size()", ("value", (obj._size, obj._coalesced, obj._leaf))))
            for k in ("_i", "_v", "_dense_grad"):
                v = getattr(obj, k)
                if self.plan is not None:
                    self.plan.seqs.append((_ATTR, obj, k, v))
                if v is not None:
                    self.visit(v, f"{name}.{k}", depth + 1)
            return
        if isinstance(obj, Module):
            self.modules.append((name, obj))
            self.module(obj, name)
            return
        if isinstance(obj, Optimizer) and not obj._custom():  # (a custom one is walked as any object: its
            plan = self.plan                                   # state tensors in ``state`` are slots)
            if plan is not None:
                plan.seqs.append((_ATTR, obj, "param_groups", obj.param_groups))
                plan.seqs.append((_LIST, obj.param_groups, None, tuple(obj.param_groups)))
            for gi, group in enumerate(obj.param_groups):
                if plan is not None:
                    plan.seqs.append((_ITEM, group, "params", group["params"]))
                    plan.seqs.append((_LIST, group["params"], None, tuple(group["params"])))
                listed = set()  # (a parameter listed twice in a group has one state: one slot)
                for pi, p in enumerate(group["params"]):
                    self.tensor(p, f"{name}.param_groups[{gi}].params[{pi}]")
                    if id(p) not in listed:
                        listed.add(id(p))
                        self.slots.append(OptSlot(obj, p, group, f"{name}.state[{gi}][{pi}]"))
                keys = _hyper_keys(obj, group)
                if keys:
                    self.slots.append(HyperSlot(group, keys, f"{name}.param_groups[{gi}]"))
                if plan is not None:
                    plan.groups.append([len(self.statics), obj, group, keys, tuple(group), tuple(group.values()),
                                        False])
                self.statics.append((f"{name}.param_groups[{gi}]", group_statics(obj, group, keys)))
            return
        if isinstance(obj, LRScheduler):
            # which schedulers the code reaches selects the program (their steps are its deferred calls): a
            # guard, so a variable that goes from None to a scheduler is a recompile
            self.guards.append((f"{name}.__class__", ("is", type(obj))))
            if self.plan is not None:
                self.plan.seqs.append((_ATTR, obj, "optimizer", obj.optimizer))
            self.schedulers.append(obj)
            self.visit(obj.optimizer, f"{name}.optimizer", depth + 1)
            # its state the walked code reads by name (``sched.last_epoch``): a guard (read while tracing, a
            # constant); and a function that also steps it cannot be one program (runner: its step is deferred)
            read = [k for k in vars(obj) if k in self.reads and k != "optimizer"]
            if read:
                self.sched_reads.append(len(self.schedulers) - 1)
            for k in read:
                if self.plan is not None:
                    self.plan.seqs.append((_ATTR, obj, k, getattr(obj, k)))
                self.visit(getattr(obj, k), f"{name}.{k}", depth + 1)
            return
        if isinstance(obj, Generator):
            self.slots.append(RngSlot(obj, name))
            return
        deep = depth > _MAX_DEPTH  # below _MAX_DEPTH: only the entries the walked code names
        if isinstance(obj, (list, tuple, collections.deque, set, frozenset)) and deep:
            if isinstance(obj, (list, collections.deque)) and not self._own:
                # (a list the code names below _MAX_DEPTH, ``hist["a"]["b"]["loss"].append(v)``: its entries are not
                # walked, but a change to it is replayed after every call as a shallower list's, not lost after the
                # trace's)
                self.containers.append((name, obj))
                if self.plan is not None:
                    self.plan.seqs.append((_LIST, obj, None, tuple(obj)))
                for i, v in enumerate(islice(obj, _DICT_ITEMS)):  # (and the containers in it: ``l[0].append``)
                    if type(v) in (list, dict, collections.deque):
                        self.visit(v, f"{name}[{i}]", depth + 1, False)
            return
        if isinstance(obj, (list, tuple, collections.deque)):
            if not isinstance(obj, tuple):
                if not self._own:
                    self.containers.append((name, obj))
                if self.plan is not None:
                    self.plan.seqs.append((_LIST, obj, None, tuple(obj)))
            for i, v in enumerate(obj):
                if i == _DICT_ITEMS and guard:  # a long list's scalars past its first entries: one guard for all
                    self.guards.append((f"{name}[{i}:]", ("scalars", len(obj), hash(tuple(
                        scalar_guard(x) for x in obj[i:] if isinstance(x, _SCALARS))))))
                self.visit(v, f"{name}[{i}]", depth + 1, guard and i < _DICT_ITEMS)
            return
        if isinstance(obj, (set, frozenset)):
            # (``if k in seen:`` is a constant of the program: the contents are a guard; a change to a set inside
            # is a graph break, ``effects._container_effects``)
            if isinstance(obj, set) and not self._own:
                self.containers.append((name, obj))
            if self.plan is not None and isinstance(obj, set):
                self.plan.seqs.append((_LIST, obj, None, tuple(obj)))
            if guard:
                self.guards.append((name, ("set", frozenset(scalar_guard(x) if isinstance(x, _SCALARS) else
                                                              (type(x).__qualname__, id(x)) for x in obj))))
            return
        if isinstance(obj, dict):
            if not self._own:
                self.containers.append((name, obj))
            items = () if deep else tuple(islice(obj.items(), _DICT_ITEMS))
            named = self._named(obj, items) if deep or len(obj) > _DICT_ITEMS else ()
            if self.plan is not None:
                if not deep:
                    self.plan.seqs.append((_DICT, obj, None, items))
                self.plan.seqs.extend([(_ITEM, obj, k, v) for k, v in named])
            if guard:  # which keys hold the values (``{'min': 0.}`` and ``{'max': 0.}`` differ)
                self.guards.append((f"{name}.keys()", ("keys", tuple(k for k, _ in items),
                                                       tuple(k for k, _ in named))))
            for k, v in items + named:
                self.visit(v, f"{name}[{k!r}]", depth + 1, guard)
            return
        if isinstance(obj, types.MethodType):
            # (its function first: the attributes its code reads are then known, and guarded on its object)
            self.visit(obj.__func__, name, depth)
            self.visit(obj.__self__, f"{name}.__self__", depth)
            return
        if isinstance(obj, Compiled):  # called inside a compiled region it runs inline: what it reaches counts
            self.visit(obj.fn, name, depth)  # (its caches and counters are not state of the program)
            return
        if isinstance(obj, functools.partial):
            self.visit(obj.func, f"{name}.func", depth + 1, guard)
            self.visit(obj.args, f"{name}.args", depth + 1, guard)
            self.visit(obj.keywords, f"{name}.keywords", depth + 1, guard)
            return
        if isinstance(obj, Scaler):
            self.scalers.append(obj)
        if hasattr(obj, "__dict__"):
            if guard:
                self.guards.append((f"{name}.__class__", ("is", type(obj))))
            user = not (type(obj).__module__ or "").startswith(_OWN)
            if not self._own and user:
                self.objects.append(obj)
            self.learn_methods(type(obj))
            if user and _user_class(type(obj)):  # the methods the walked code calls on it: their globals
                self.methods(type(obj), name)
            attrs = vars(obj)
            items = () if deep else tuple(islice(attrs.items(), _ATTR_ITEMS))
            named = self._named(attrs, items) if deep or len(attrs) > _ATTR_ITEMS else ()
            if self.plan is not None:
                self.plan.seqs.append((_ATTR, obj, "__class__", type(obj)))
                if not deep:
                    self.plan.seqs.append((_VARS, obj, None, items))
                self.plan.seqs.extend([(_ITEM, attrs, k, v) for k, v in named])
            reads = self.reads
            own = self._own
            self._own = own or not user  # a library object (GradScaler): its lists and dicts are its own
            every = ANY_ATTR in reads
            for k, v in items + named:
                self.visit(v, f"{name}.{k}", depth + 1, guard and (every or k in reads))
            self._own = own
            if guard:
                self.class_attrs(type(obj), name, depth + 1, attrs)
        elif slot_names(type(obj)) and _user_class(type(obj)):
            # a user's __slots__ object: its slots are walked (and its writes replayed) as an object's attributes
            if guard:
                self.guards.append((f"{name}.__class__", ("is", type(obj))))
            self.objects.append(obj)
            self.learn_methods(type(obj))
            self.methods(type(obj), name)
            reads = self.reads
            for k in slot_names(type(obj)):
                v = getattr(obj, k, _EMPTY)
                if self.plan is not None:
                    self.plan.seqs.append((_ATTR, obj, k, v))
                if v is not _EMPTY:
                    self.visit(v, f"{name}.{k}", depth + 1, guard and k in reads)
            if guard:
                self.class_attrs(type(obj), name, depth + 1, slot_names(type(obj)))

    def _named(self, mapping, walked) -> tuple:
        """The (key, value) entries of ``mapping`` (a dict, an object's attributes) that the walked code names and
        ``walked`` (its first entries) does not hold."""
        if not mapping:
            return ()
        first = {k for k, _ in walked}
        return tuple([(k, mapping[k]) for k in sorted(self.reads) if k in mapping and k not in first])

    def class_attrs(self, cls, name, depth, shadow=()):
        """The data attributes of a user class (and its user-written bases) that the walked code reads by name
        (``Cfg.mult``, a module's ``self.scale`` set on its class): what the program bakes in from them is a guard,
        a tensor there a slot, as an object's own attributes are; one an instance sets itself (``shadow``) hides
        it. Methods, properties and other descriptors are code, not state (``learn_methods`` reads them)."""
        reads = self.reads | self.calls  # (``Holder.model(x)``: a module in a class attribute, called)
        plan = self.plan
        seen = set(shadow)
        for klass in cls.__mro__:
            if not _user_class(klass):
                continue
            for k, v in list(vars(klass).items()):
                if k in seen or k not in reads or k.startswith("__") or hasattr(type(v), "__get__"):
                    continue
                seen.add(k)
                if plan is not None:
                    plan.seqs.append((_ATTR, cls, k, v))
                self.visit(v, f"{name}.{k}", depth + 1)

    def user_module(self, mod, name, depth):
        """A Python module of the user's (``import config``; not a library's): the attributes the walked code
        reads by name (``config.SCALE``) are walked as the globals a function names are."""
        g = vars(mod)
        names = sorted(k for k in self.reads | self.calls  # (a set: its order varies; ``md.NET(x)``, a call)
                       if k in g and not k.startswith("__"))
        if self.plan is not None:
            self.plan.globs.append((g, tuple(names), tuple(g[k] for k in names)))
        for k in names:
            self.visit(g[k], f"{name}.{k}", depth + 1)

    def learn(self, code) -> None:
        """Note what ``code`` reads and calls."""
        r, c = _code_names(code)
        self.reads |= r
        self.calls |= c

    def learn_methods(self, cls) -> None:
        """The methods (and properties) of ``cls`` that the walked code may run on an object of it — those it
        calls or reads by name, ``__call__``, and those these call in turn — count as read code: an attribute
        that ``sc.__call__`` reads (``return x * self.s``) is a guard like one the function reads itself."""
        methods = _class_methods(cls)
        todo = [n for n in methods if n == "__call__" or n in self.calls or n in self.reads]
        done: set = set()
        while todo:
            n = todo.pop()
            if n in done:
                continue
            done.add(n)
            r, c = methods[n]
            self.reads |= r
            self.calls |= c
            todo.extend(m for m in methods if m not in done and (m in c or m in r))

    def module(self, m, prefix):
        """A module's parameters and buffers, its other attributes (tensors in them are slots; Python scalars,
        like Dropout's ``p``, are guards), then its submodules' (each module once), in one walk. A module's
        attribute assignments bump STRUCTURE_EPOCH (nn.modules.module), so a reused walk sees them."""
        d = m.__dict__
        self.guards.append((f"{prefix}.__class__", ("is", type(m))))
        for n, p in d["_parameters"].items():
            if p is not None:
                self.tensor(p, f"{prefix}.{n}")
        for n, b in d["_buffers"].items():
            if b is not None:
                self.tensor(b, f"{prefix}.{n}", grads=False)
        self.learn(getattr(type(m).forward, "__code__", None))
        self.methods(type(m), prefix)
        first = tuple(islice(d.items(), _ATTR_ITEMS))
        for n, v in first + (self._named(d, first) if len(d) > _ATTR_ITEMS else ()):
            if n not in _MODULE_OWN:
                self.visit(v, f"{prefix}.{n}", 1)
        self.class_attrs(type(m), prefix, 1, d)
        for table in ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks"):
            # (registries too: a change bumps the epoch)
            hooks = d.get(table)
            if hooks:
                if table.startswith("_backward"):
                    self.bw_hooks = self.bw_hooks or prefix
                self.guards.append((f"{prefix}.{table}", ("keys", tuple(hooks))))
                for k, h in hooks.items():
                    self.visit(h, f"{prefix}.{table}[{k}]", 1)
        for n, c in d["_modules"].items():
            if c is not None and id(c) not in self._seen:
                self._seen.add(id(c))
                self.modules.append((f"{prefix}.{n}", c))
                self.module(c, f"{prefix}.{n}")

    def methods(self, cls, prefix) -> None:
        """A user-written class (a module's, a helper object's, one whose static methods the code calls): the
        methods the walked code may run on it (a module's ``forward``, those it names) read their globals and
        closure like the compiled function's own code (``x * SCALE``, a closure variable of a class defined in a
        function): walked as functions, once per discovery; each one's identity and code are guards (a method
        patched on the class). Names the walk learns later are matched at its end (``settle``)."""
        if (cls.__module__ or "").startswith(_OWN) or cls in self._classes:
            return
        self._classes[cls] = prefix
        self.learn_methods(cls)
        self._methods(cls, prefix)

    def _methods(self, cls, prefix) -> None:
        plan = self.plan
        for klass in cls.__mro__:
            if klass is object or (klass.__module__ or "").startswith(_OWN):
                continue
            attrs = vars(klass)
            for n, raw in attrs.items():
                f = getattr(raw, "__func__", raw)  # (static and class methods)
                if isinstance(f, types.FunctionType) and (n in _ALWAYS or n in self.calls or n in self.reads) \
                        and id(f) not in self._seen:
                    self._seen.add(id(f))
                    self.guards.append((f"{prefix}.{n}", ("is", f, f.__code__)))
                    if plan is not None:
                        plan.seqs.append((_ITEM, attrs, n, raw))
                    self.function(f, f"{prefix}.{n}", 1)

    def settle(self) -> None:
        """Walk the methods of the classes met that the code walked after them calls (``a.run(x)`` where ``a``'s
        class came first), until the walk names nothing new."""
        while True:
            n = len(self._seen)
            for cls, prefix in list(self._classes.items()):
                self._methods(cls, prefix)
            if len(self._seen) == n:
                return

    def function(self, fn, name, depth=0):
        """A function's closure cells, default values, and the globals its code (and nested code) names. A
        library function's globals are the library's own state (caches), not walked; its closure (a wrapper
        around the user's function, ``func.grad(f)``) is, its containers left to it."""
        own, self._own = self._own, (fn.__module__ or "").startswith(_OWN)
        try:
            self._function(fn, name, depth, not self._own)
        finally:
            self._own = own

    def _function(self, fn, name, depth, with_globals):
        code = fn.__code__
        self.learn(code)
        plan = self.plan
        if plan is not None:
            plan.seqs.append((_ATTR, fn, "__code__", code))
        if fn.__closure__:
            for var, cell in zip(code.co_freevars, fn.__closure__):
                try:
                    v = cell.cell_contents
                except ValueError:  # an empty cell
                    v = _EMPTY
                if plan is not None:
                    plan.cells.append((cell, v))
                if v is not _EMPTY:
                    self.visit(v, var, depth)
        # default values (``def step(x, model=model)``): the function's own attributes, replaceable
        defaults, kwdefaults = fn.__defaults__, fn.__kwdefaults__
        if plan is not None:
            plan.seqs.append((_ATTR, fn, "__defaults__", defaults))
            plan.seqs.append((_ATTR, fn, "__kwdefaults__", kwdefaults))
        if defaults:
            for var, v in zip(code.co_varnames[code.co_argcount - len(defaults):code.co_argcount], defaults):
                self.visit(v, var, depth)
        if kwdefaults:
            self.visit(kwdefaults, "keyword defaults", depth)
        if not with_globals:
            return
        g = fn.__globals__
        names = _names(code)
        if plan is not None:
            plan.globs.append((g, names, tuple(map(g.get, names, repeat(_EMPTY, len(names))))))
        for n in names:
            if n in g:
                self.visit(g[n], n, depth)


_ALWAYS = ("forward", "__call__")  # the methods of a user class walked whether or not the code names them
_VALUES: list = []


def _values() -> tuple:
    """The facade's value classes a function reads as constants (dtype, device, memory_format, layout): guards by
    value, as scalars (bound on first use: the package is imported by then)."""
    if not _VALUES:
        import functorch_lite as _ft
        from .. import dtypes as _D
        from .._device import device as _device
        from .._tensor.views import memory_format as _mf
        _VALUES.append((_D.dtype, _device, _mf, type(_ft.strided)))
    return _VALUES[0]


_NOT_STATE = (logging.Logger, logging.LoggerAdapter, logging.Handler, logging.Formatter, logging.Filter)
_USER_MODULES: dict = {}


def _user_module(mod) -> bool:
    """A module of the user's own code: one with a source file outside the standard library and installed packages
    (and not this library's)."""
    hit = _USER_MODULES.get(mod.__name__)
    if hit is None:
        import sysconfig
        f = getattr(mod, "__file__", None)
        roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        hit = bool(f) and not mod.__name__.startswith(_OWN.rstrip(".")) and not any(
            os.path.abspath(f).startswith(os.path.abspath(r) + os.sep) for r in roots)
        _USER_MODULES[mod.__name__] = hit
    return hit


def _user_class(klass) -> bool:
    """A class of the user's code: defined in a user module (``_user_module``) or in one no longer imported
    (``exec``'d code)."""
    mod = sys.modules.get(klass.__module__ or "")
    return mod is None or _user_module(mod)


_CLASSES: list = []


def _classes():
    if not _CLASSES:
        from ..nn.modules.module import Module
        from ..optim.lr_scheduler import LRScheduler
        from ..optim.optimizer import Optimizer
        from ..random import Generator
        from ..amp.grad_scaler import GradScaler
        from .runner import CompiledFunction
        from ..sparse import SparseTensor
        _CLASSES.extend((Module, Optimizer, LRScheduler, Generator, CompiledFunction, GradScaler, SparseTensor))
    return _CLASSES


_OWN = __name__.split(".")[0] + "."  # "functorch_lite.": its functions' globals are the library's own state
# a module's own bookkeeping (its training flag is a guard of its own; its hook tables, registries that bump
# the structure epoch, are walked apart: a hook added after the first call, or its closure's tensors, are seen)
_MODULE_OWN = frozenset(("training", "_parameters", "_buffers", "_modules", "_non_persistent_buffers_set",
                         "_compiled_call", "_compiled", "_forward_pre_hooks", "_forward_hooks",
                         "_backward_hooks", "_backward_pre_hooks", "_hooks_with_kwargs", "_hooks_always_called"))


_NAMES: dict = {}


def _names(code) -> list:
    hit = _NAMES.get(code)
    if hit is not None:
        return hit
    _NAMES[code] = out = _names_uncached(code)
    return out


def _names_uncached(code) -> list:
    """The globals ``code`` (and the code nested in it) loads. Not ``co_names``: it also holds attribute names,
    and ``opt.step()`` beside a module-level loop ``for step in range(n)`` would make the loop counter a guard."""
    out = []
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval not in out:
            out.append(ins.argval)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out.extend(n for n in _names_uncached(c) if n not in out)
    return out


def dynamic_scalar(a) -> bool:
    """An int or float (not a bool) that may be a program input. An int only within int32's range: the program
    computes with it in int64, which wraps where Python's ints do not (``n * n`` at 2**32 is 0), so a larger one
    stays a constant; products of two such, and ``i / n`` through float64, are Python's."""
    t = type(a)
    return t is float or t is int and -(1 << 31) <= a < (1 << 31)


def discover(fn, args, kwargs, plan=None, views=False, dyn=()) -> Discovery:
    """``views``: a view argument that needs no gradient is an ``ArgViewSlot`` (``CompiledFunction._views``);
    ``dyn``: the positions (ints, keyword names) whose int / float argument is a ``ScalarArgSlot``."""
    from ..random import default_generator
    d = Discovery(plan)
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    d.learn(code)  # before the arguments: their attributes the function reads are guards
    for i, a in enumerate(args):
        if a is not None and (not isinstance(a, _SCALARS) or i in dyn and dynamic_scalar(a)):
            d.argument(a, f"arg {i}", i, views)  # (a Python value's own value: a guard of its own, runner._key)
    for k, a in kwargs.items():
        if a is not None and (not isinstance(a, _SCALARS) or k in dyn and dynamic_scalar(a)):
            d.argument(a, f"argument {k!r}", k, views)
    d.visit(fn, getattr(fn, "__name__", "fn"))
    d.settle()
    if d.views_alias():
        return discover(fn, args, kwargs, plan, dyn=dyn)
    if id(default_generator) not in d._seen:
        d._seen.add(id(default_generator))
        d.slots.append(RngSlot(default_generator, "the default generator"))
    d.frozen = _Guards(d.guards)
    return d


class _Guards:
    """A walk's guard values as one key component, its hash computed once: a reused walk's key compares it
    by identity."""
    __slots__ = ("items", "_hash")

    def __init__(self, guards):
        self.items = tuple([v for _, v in guards])
        self._hash = hash(self.items)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self is other or (type(other) is _Guards and self._hash == other._hash and self.items == other.items)


# ---- reusing a discovery ----------------------------------------------------------------------------------
_EMPTY = object()                       # an empty closure cell / a global the code names but that is not set
_LIST, _DICT, _VARS, _ATTR, _ITEM = range(5)
_SIMPLE = (type(None),) + _SCALARS
_FIXED = {type(None), bool, int, float, str}  # option values whose guard values cannot change in place


class Plan:
    """What ``fn`` itself reaches (its closure, globals, and what they hold: the call's arguments aside), and
    everything that walk read that could change between calls: closure cells, the globals its code names, the
    lists/dicts/objects it went through, each tensor's storage and requires_grad, optimizers' param groups.
    ``valid()`` re-reads those (identity comparisons); modules' parameter/buffer/submodule tables are covered
    by one counter they bump on every change (nn.modules.module.STRUCTURE_EPOCH)."""
    __slots__ = ("d", "epoch", "cells", "globs", "seqs", "tensors", "groups", "arrays", "_check")

    def __init__(self):
        self._check = None        # the identity checks below, as one generated function (``check_lines``)
        self.arrays: list = []    # (NumPy array, its guard): its contents are checked on every call
        self.cells: list = []     # (cell, contents)
        self.globs: list = []     # (globals dict, names, values: _EMPTY where unset)
        self.seqs: list = []      # (kind, obj, attr/key, snapshot)
        self.tensors: list = []   # (tensor, its storage, requires_grad, is_leaf, .grad is None, shape, strides)
        self.groups: list = []    # [statics index, optimizer, group, hyper keys, group keys, group values]

    def valid(self) -> bool:
        check = self._check
        if check is None:  # (made on the first check: the walk has listed everything by then)
            lines, ns = self.check_lines()
            src = "\n".join(["def check():"] + lines + ["    return True"]) + "\n"
            exec(compile(src, "<functorch_lite.compile plan check>", "exec"), ns)
            check = self._check = ns["check"]
        return check() and self.rest()

    def rest(self) -> bool:
        """``valid()``'s checks after the generated identity checks: the NumPy arrays' contents and the optimizers'
        param groups (a group's guard values read afresh where its options changed)."""
        for a, g in self.arrays:
            if a.nbytes <= _NUMPY_CHECKED and numpy_guard(a) != g:
                return False
        statics = self.d.statics
        for rec in self.groups:
            si, opt, group, keys, gkeys, gvals, fixed = rec
            vals = tuple(group.values())
            if _identical(vals, gvals) and tuple(group) == gkeys:
                if fixed:  # the same immutable values: the same guard values
                    continue
            else:
                if _hyper_keys(opt, group) != keys:  # a HyperSlot appears, goes or changes: walk again
                    return False
                rec[4], rec[5] = tuple(group), vals
            # the guard values are read afresh (a value may be a list, or a tensor, changed in place)
            statics[si] = (statics[si][0], group_statics(opt, group, keys))
            rec[6] = all(type(v) in _FIXED or type(v) is tuple and all(type(x) in _FIXED for x in v)
                         for k, v in group.items() if k not in ("params", "param_names"))
        return True

    def check_lines(self, fail="False") -> tuple:
        """``valid()``'s identity checks (the structure epoch, closure cells, globals, the containers and
        attributes walked, each tensor's storage and autograd flags) as the source lines of one straight-line
        function over the recorded objects (each failed check a ``return {fail}``), and their namespace: a training
        step's reused walk is checked on every call (W2: 7 us as a loop over the records, 2 generated; the steady
        state's fused call inlines them: ``steady.Steady.fuse``)."""
        ns = {"_EMPTY": _EMPTY, "_S": _structure(), "_identical": _identical, "_same_items": _same_items,
              "islice": islice, "_DICT_ITEMS": _DICT_ITEMS, "_ATTR_ITEMS": _ATTR_ITEMS, "_cell_empty": _cell_empty}
        conds = [f"_S[0] != {self.epoch!r}"]

        def const(v):
            name = f"k{len(ns)}"
            ns[name] = v
            return name
        cells = []
        for cell, v in self.cells:
            if v is _EMPTY:
                conds.append(f"not _cell_empty({const(cell)})")
            else:
                cells.append(f"{const(cell)}.cell_contents is not {const(v)}")
        for g, names, vals in self.globs:
            gn = const(g)
            conds += [f"{gn}.get({n!r}, _EMPTY) is not {const(v)}" for n, v in zip(names, vals)]
        for kind, obj, k, snap in self.seqs:
            o = const(obj)
            if kind == _LIST:
                if type(obj) is list and len(snap) <= 8:
                    conds.append(f"len({o}) != {len(snap)}")
                    conds += [f"{o}[{j}] is not {const(x)}" for j, x in enumerate(snap)]
                else:
                    conds.append(f"not _identical(tuple({o}), {const(snap)})")
            elif kind == _ATTR:
                conds.append(f"getattr({o}, {const(k)}, _EMPTY) is not {const(snap)}")
            elif kind == _ITEM:
                conds.append(f"{o}.get({const(k)}, _EMPTY) is not {const(snap)}")
            else:
                items = f"{o}.items()" if kind == _DICT else f"vars({o}).items()"
                n = "_DICT_ITEMS" if kind == _DICT else "_ATTR_ITEMS"
                conds.append(f"not _same_items(tuple(islice({items}, {n})), {const(snap)})")
        for t, st, rg, leaf, nograd, shape, strides in self.tensors:
            tn = const(t)
            fn = f"{tn}._grad_fn" if t._base is None else f"{tn}.grad_fn"  # (a base tensor's property is the slot)
            # (its layout changed in place, ``t_()`` / ``resize_()``: the walk's layout guards are read again)
            conds.append(f"{tn}._storage is not {const(st)} or {tn}._requires_grad is not {rg!r} or "
                         f"({fn} is None) is not {leaf!r} or {tn}._shape is not {const(shape)} or "
                         f"{tn}._strides is not {const(strides)}" +
                         ("" if rg else f" or ({tn}._grad is None) is not {nograd!r}"))
        lines = [f"    if {c}:\n        return {fail}" for c in conds]
        if cells:  # (a cell emptied since (``del``) raises ValueError: changed)
            lines.append("    try:")
            lines += [f"        if {c}:\n            return {fail}" for c in cells]
            lines.append(f"    except ValueError:\n        return {fail}")
        return lines, ns


def _identical(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def _same_items(a: tuple, b: tuple) -> bool:
    """(key, value) pairs: equal keys, identical values."""
    return len(a) == len(b) and all(x[1] is y[1] and (x[0] is y[0] or type(x[0]) is str and x[0] == y[0])
                                    for x, y in zip(a, b))


_STRUCTURE: list = []


def _structure() -> list:
    """nn's structure epoch, a one-element list (``Plan``)."""
    if not _STRUCTURE:  # (nn imports this package: bound on first use)
        from ..nn.modules.module import STRUCTURE_EPOCH
        _STRUCTURE.append(STRUCTURE_EPOCH)
    return _STRUCTURE[0]


def _epoch() -> int:
    return _structure()[0]


def _cell_empty(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return True
    return False


def discover_cached(fn, args, kwargs, holder) -> Discovery:
    """``discover``, reusing ``holder._plan`` (the slots ``fn`` itself reaches) while its checks hold.

    Only for calls whose arguments are tensors and plain Python values (anything else: a full walk). The
    arguments' slots are built per call and go first, as ``discover`` orders them; a call whose argument shares a
    storage with what the function reaches takes the full walk (``discover`` would list that storage once)."""
    arg_tensors = None
    dyn = holder._dyn
    for a in args if not kwargs else (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            arg_tensors = True
        elif type(a) not in _SIMPLE:
            return discover(fn, args, kwargs, views=holder._views, dyn=dyn)
    if dyn:
        arg_tensors = True  # (a dynamic scalar argument's slot goes first, as discover's)
    plan = holder._plan
    if plan is None or not plan.valid():
        plan = Plan()
        plan.epoch = _epoch()
        plan.d = discover(fn, (), {}, plan)
        plan.d.plan = None
        holder._plan = plan
    if arg_tensors is None:
        return plan.d
    d = Discovery()
    views = holder._views
    for i, a in enumerate(args):
        if isinstance(a, Tensor) or i in dyn and dynamic_scalar(a):
            d.argument(a, f"arg {i}", i, views)
    for k, a in kwargs.items():
        if isinstance(a, Tensor) or k in dyn and dynamic_scalar(a):
            d.argument(a, f"argument {k!r}", k, views)
    if not plan.d._storages.isdisjoint(d._storages) or d.views_alias() or \
            not plan.d._storages.isdisjoint(d._view_roots):
        return discover(fn, args, kwargs, views=views, dyn=dyn)
    pd = plan.d
    d.slots.extend(pd.slots)
    d.base = pd
    if d.guards:  # (the arguments' own: ``f(a, a)``'s alias, an argument's .grad hooks)
        d.guards = d.guards + pd.guards
        d.frozen = _Guards(d.guards)
    else:
        d.guards, d.frozen = pd.guards, pd.frozen
    d.modules, d.schedulers, d.statics = pd.modules, pd.schedulers, pd.statics
    d.containers, d.sched_reads, d.bw_hooks, d.scalers = pd.containers, pd.sched_reads, pd.bw_hooks, pd.scalers
    d.objects, d.pystate = pd.objects, pd.pystate
    d.metas = d.metas + pd.metas if d.metas else pd.metas
    d.gexprs = pd.gexprs
    return d


def same_discovery(a: Discovery, b: Discovery) -> bool:
    """The same slots over the same objects, modules, schedulers and guard statics (a reused discovery's
    self-check: ``compile``'s ``config.verify_discovery``)."""
    def ident(s):
        return (type(s),) + tuple(tuple(map(id, v)) if type(v) is tuple else id(v)
                                  for v in [getattr(s, f) for f in type(s).__slots__
                                            if f not in ("name", "keys") and not f.startswith("_")]) + \
            (getattr(s, "keys", None),)
    return ([ident(s) for s in a.slots] == [ident(s) for s in b.slots]
            and [id(m) for _, m in a.modules] == [id(m) for _, m in b.modules]
            and [id(s) for s in a.schedulers] == [id(s) for s in b.schedulers]
            and [v for _, v in a.statics] == [v for _, v in b.statics] and a.frozen == b.frozen)
