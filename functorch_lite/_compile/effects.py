"""What a traced call did beyond its slots: the closure cells, globals and attributes (of modules and of the
user's plain objects) it rebound, and the lists/deques it appended to and the dicts whose keys it set or deleted
(all put back after the trace, replayed after every call, as torch.compile replays such side effects); any
other change of a list or dict (pop, insert, sort, item assignment) is a graph break."""
from __future__ import annotations

import dis
from collections import OrderedDict
from operator import is_

import jax

from .._tensor.tensor import Size as _Size, Tensor
from .._symbolic import SymNumber
from ..nn.modules import module as _module


class _UnreachableWrite(Exception):
    """What a single program cannot do (its message is the graph break's cause)."""


class _ViewArgWrite(_UnreachableWrite):
    """The function wrote to a view argument traced as its own values (slots.ArgViewSlot): traced again, reading
    it through its storage (not a graph break)."""


class Disabled(_UnreachableWrite):
    """A ``torch.compiler.disable``'d function called while tracing."""


class UserBreak(Disabled):
    """``torch._dynamo.graph_break()`` called while tracing; ``torch_msg``: the head of torch's ``Unsupported``
    message (the error under ``fullgraph=True``)."""
    torch_msg = ("Call to `torch._dynamo.graph_break()`\n  Explanation: User-inserted graph break. Message: None\n"
                 "  Hint: Remove the `torch._dynamo.graph_break()` call.\n\n  Developer debug context: Called "
                 "`torch._dynamo.graph_break()` with args `[]`, kwargs `{}`\n\n For more details about this graph "
                 "break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html")

    def __init__(self) -> None:
        super().__init__("a call to torch._dynamo.graph_break() (a user-inserted graph break)")


_UNSET = _module._UNSET  # an unset cell / global / attribute (one sentinel with the module attribute log)


def _bindings(fn) -> list:
    """The closure cells and globals ``fn``'s own code can rebind (``nonlocal``/``global`` names), with their
    values before the trace: [(kind, target, name, value)]."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    out = []
    stores = _stores(code)
    if fn.__closure__:
        for var, cell in zip(code.co_freevars, fn.__closure__):
            if var in stores:
                try:
                    out.append(("cell", cell, var, cell.cell_contents))
                except ValueError:
                    out.append(("cell", cell, var, _UNSET))
    g = fn.__globals__
    for n in stores:
        if n not in code.co_freevars:
            out.append(("global", g, n, g.get(n, _UNSET)))
    return out


_STORES: dict = {}


def _stores(code) -> frozenset:
    """Names ``code`` rebinds outside itself: STORE_GLOBAL, and STORE_DEREF of its free variables."""
    hit = _STORES.get(code)
    if hit is None:
        hit = _STORES[code] = frozenset(
            ins.argval for ins in dis.get_instructions(code)
            if ins.opname == "STORE_GLOBAL" or (ins.opname == "STORE_DEREF" and ins.argval in code.co_freevars))
    return hit


def _read(kind, target, name):
    if kind == "cell":
        try:
            return target.cell_contents
        except ValueError:
            return _UNSET
    return target.get(name, _UNSET)


def _effects(bindings, attrs) -> list:
    """What the traced call rebound: [(kind, target, name, new value)] — replayed after every call (a new tensor
    becomes an output of the program, as torch.compile replays a global's or a module attribute's rebinding)."""
    out = []
    for kind, target, name, old in bindings:
        new = _read(kind, target, name)
        if new is not old:
            if new is _UNSET:
                raise _UnreachableWrite(f"deleting the {'closure variable' if kind == 'cell' else 'global'} "
                                        f"{name!r} inside a compiled function")
            out.append((kind, target, name, new))
    for (module, name), old in attrs.items():
        new = attrs_of(module).get(name, _UNSET)
        if new is not old:
            # (``del self.flag``: replayed as a deletion)
            out.append(("delattr", module, name, None) if new is _UNSET else ("attr", module, name, new))
    return out


_SLOTS: dict = {}


def slot_names(cls) -> tuple:
    """The attribute names the ``__slots__`` of ``cls`` and its bases declare (an object without a ``__dict__``
    keeps its state there)."""
    hit = _SLOTS.get(cls)
    if hit is None:
        names = []
        for k in reversed(cls.__mro__):
            sl = k.__dict__.get("__slots__", ())
            for n in ((sl,) if isinstance(sl, str) else sl):
                if n not in ("__dict__", "__weakref__") and n not in names:
                    names.append(n)
        hit = _SLOTS[cls] = tuple(names)
    return hit


def attrs_of(o) -> dict:
    """An object's attributes: its ``__dict__`` itself, or (a ``__slots__`` object) a dict of its set slots."""
    d = getattr(o, "__dict__", None)
    if d is not None:
        return d
    return {k: v for k in slot_names(type(o)) if (v := getattr(o, k, _UNSET)) is not _UNSET}


def _snap_objects(objects) -> list:
    """The attributes of the user's plain objects before a trace (``_object_writes`` compares)."""
    return [(o, dict(attrs_of(o))) for o in objects]


def _object_writes(snaps, attrs: dict) -> None:
    """Log in ``attrs`` ((object, name) -> value before, as ``Module.__setattr__`` logs a module's) the attributes
    the trace set or deleted on the plain objects ``snaps`` holds: ``self.step += 1`` is put back after the trace
    and replayed after every call, not left done by the trace (and done again by the replay or an eager run)."""
    for o, before in snaps:
        now = attrs_of(o)
        if len(now) == len(before) and all(map(is_, now.values(), before.values())) and \
                all(map(is_, now, before)):
            continue
        for k, v in list(now.items()):
            key = _module.AttrKey((o, k))
            if before.get(k, _UNSET) is not v and key not in attrs:
                attrs[key] = before.get(k, _UNSET)
        for k, v in before.items():
            key = _module.AttrKey((o, k))
            if k not in now and key not in attrs:
                attrs[key] = v


def _contents(c) -> list:
    return list(c.items()) if isinstance(c, dict) else list(c)  # (a dict, list, deque or set)


def _identical_contents(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y or (type(x) is tuple and x[1] is y[1] and (
        x[0] is y[0] or (not isinstance(x[0], Tensor) and x[0] == y[0]))) for x, y in zip(a, b))


_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _replayable(v) -> bool:
    """A value a replayed container change can hold: a tensor (the trace's own ones are outputs of the program),
    a Python scalar or string (a constant of it), a traced number (a dynamic int argument's too), or a tuple /
    list / dict of those."""
    if isinstance(v, (Tensor, jax.core.Tracer, SymNumber) + _PLAIN):
        return True
    if type(v) in (tuple, list) or isinstance(v, tuple) and hasattr(v, "_fields") or type(v) is _Size:
        return all(map(_replayable, v))  # (a torch.Size, a named tuple: a pytree of its items, rebuilt as itself)
    if type(v) is dict:
        return all(_replayable(k) and not isinstance(k, Tensor) and _replayable(x) for k, x in v.items())
    return False


def _container_effects(boxes) -> list:
    """The changes the traced call made to the lists, deques and dicts it reached (``boxes``: (name, container,
    contents before)), as effects replayed after every call: ``("extend", c, name, added items)`` for appends to a
    list or deque, ``("dict", c, name, (deleted keys, [(key, value) set]))`` for a dict. What cannot be replayed
    that way raises (a graph break, as it always was)."""
    out = []
    for n, c, before in boxes:
        now = _contents(c)
        if _identical_contents(now, before):
            continue
        what = f"the {type(c).__name__} {n}"
        if isinstance(c, set):
            raise _UnreachableWrite(f"changing {what} (a compiled call replays appends to a list and the keys set "
                                    "in a dict, not set changes)")
        if isinstance(c, dict):
            old = dict(before)
            removed = tuple(k for k in old if k not in c)
            sets = [(k, v) for k, v in now if k not in old or old[k] is not v]
            sim = dict(old)
            for k in removed:
                del sim[k]
            sim.update(sets)
            if list(sim) != [k for k, _ in now]:
                raise _UnreachableWrite(f"changing {what} (its key order: only setting and deleting keys is "
                                        "replayed by a compiled call)")
            bad = next((v for k, v in sets if not _replayable(v) or not _replayable(k) or isinstance(k, Tensor)),
                       _UNSET)
            if bad is not _UNSET:
                raise _UnreachableWrite(f"putting a value of type {type(bad).__name__!r} into {what} (a compiled "
                                        "call replays tensors and Python scalars put into a dict, not other objects)")
            out.append(("dict", c, n, (removed, sets)))
            continue
        if len(now) < len(before) or not all(map(is_, now, before)):
            raise _UnreachableWrite(f"changing {what} (only appending to a list is replayed by a compiled call, "
                                    "not pop, insert, remove, sort or item assignment)")
        added = now[len(before):]
        bad = next((v for v in added if not _replayable(v)), _UNSET)
        if bad is not _UNSET:
            raise _UnreachableWrite(f"appending a value of type {type(bad).__name__!r} to {what} (a compiled call "
                                    "replays tensors and Python scalars appended, not other objects)")
        out.append(("extend", c, n, added))
    return out


def _table_effects(tables: dict) -> list:
    """The changes the traced call made to modules' tables (``tables``: nn.modules.module.REGISTRY_LOG's record):
    a buffers table's (``self.ema = self.ema * 0.5 + m``, ``register_buffer`` inside) as container effects,
    replayed after every call as torch.compile replays them; any other table's (a parameter, submodule or hook
    registered or removed) raises (a graph break)."""
    out = []
    for t, before in filter(None, tables.values()):
        if type(t) is _module._Buffers:
            out += _container_effects([("(a module's buffers)", t, before)])
        elif not _identical_contents(list(OrderedDict.items(t)), before):
            raise _UnreachableWrite("registering or removing a module's parameter, submodule or hook inside a "
                                    "compiled function")
    return out


def _restore_tables(tables: dict) -> None:
    """Put back the module tables the trace changed (no traced buffer stays in a module)."""
    for t, before in filter(None, tables.values()):
        if not _identical_contents(list(OrderedDict.items(t)), before):
            _module.STRUCTURE_EPOCH[0] += 1
            OrderedDict.clear(t)
            for k, v in before:
                OrderedDict.__setitem__(t, k, v)


def _replay_container(kind, c, v) -> None:
    """Do again, after a compiled call, what ``_container_effects`` found the trace did to ``c``."""
    if kind == "extend":
        c.extend(v)
    else:
        removed, sets = v
        for k in removed:
            c.pop(k, None)
        for k, x in sets:  # (item by item: a Counter's update() would add the counts)
            c[k] = x


def _set_contents(c, items: list):
    if isinstance(c, dict):
        dict.clear(c)
        dict.update(c, items)
    elif isinstance(c, list):
        c[:] = items
    elif isinstance(c, set):
        c.clear()
        c.update(items)
    else:  # a deque
        c.clear()
        c.extend(items)


def _restore(bindings, attrs):
    """Put back what the trace rebound (cells, globals, module attributes): nothing traced stays reachable."""
    for kind, target, name, old in bindings:
        if kind == "cell":
            if old is _UNSET:
                try:
                    del target.cell_contents
                except ValueError:
                    pass
            else:
                target.cell_contents = old
        elif old is _UNSET:
            target.pop(name, None)
        else:
            target[name] = old
    for (module, name), old in attrs.items():
        d = getattr(module, "__dict__", None)
        if d is None:  # (a __slots__ object)
            if old is _UNSET:
                if hasattr(module, name):
                    object.__delattr__(module, name)
            else:
                object.__setattr__(module, name, old)
        elif old is _UNSET:
            d.pop(name, None)
        else:
            d[name] = old
