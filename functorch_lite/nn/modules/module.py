"""``nn.Module``: registration of parameters, buffers and submodules, traversal, hooks, repr; the state-dict
protocol is ``_state_dict.StateDictMixin``."""
from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Callable, Iterator, TypeVar

from ..._tensor.legacy import typename as _typename
from ..._tensor.tensor import Tensor, preserve_format, zero_grads
from ..._tensor.storage import META_NO_DATA
from ..parameter import Buffer, Parameter
from ._state_dict import StateDictMixin, _IncompatibleKeys  # noqa: F401  (re-exported)
from ..._warn import user_stacklevel as _user_stacklevel
from ..._hooks import RemovableHandle


# ---- global hooks (torch.nn.modules.module.register_module_*): they run before every module's own hooks -----------
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = {}
_global_forward_hooks_always_called: dict = {}
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()
_global_is_full_backward_hook: list = [None]  # set by the first global backward hook, full or not (as PyTorch)
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()
# every global forward/backward hook's id: ``_call_impl``'s one check for "any global hook" (each handle removes its
# id from here too)
_global_call_hooks: dict = {}


def _global_hook(table: dict, hook: Callable, *extra) -> RemovableHandle:
    Module._hook_id += 1
    table[Module._hook_id] = hook
    for t in extra:
        t[Module._hook_id] = True
    return RemovableHandle(table, Module._hook_id, *extra)


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward, before the module's own pre-hooks; a non-None result
    replaces args (a non-tuple is wrapped in one)."""
    return _global_hook(_global_forward_pre_hooks, hook, _global_call_hooks)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args, kwargs, output)``) after every module's
    forward, before the module's own forward hooks; a non-None result replaces the output. ``always_call``: it also
    runs, as ``hook(module, args, None)``, when forward raises."""
    extra = (_global_forward_hooks_with_kwargs,) * with_kwargs + (_global_forward_hooks_always_called,) * always_call
    return _global_hook(_global_forward_hooks, hook, _global_call_hooks, *extra)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """``Module.register_full_backward_pre_hook`` for every module, run before the module's own."""
    return _global_hook(_global_backward_pre_hooks, hook, _global_call_hooks)


def _global_backward_kind(full: bool) -> None:
    if _global_is_full_backward_hook[0] is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook[0] = full


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """``Module.register_full_backward_hook`` for every module, run before the module's own."""
    _global_backward_kind(True)
    return _global_hook(_global_backward_hooks, hook, _global_call_hooks)


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """Deprecated: ``Module.register_backward_hook`` (the non-full hook) for every module."""
    _global_backward_kind(False)
    return _global_hook(_global_backward_hooks, hook, _global_call_hooks)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, buffer)`` on every buffer registration (``register_buffer``, assigning a buffer); a
    non-None result is registered instead."""
    return _global_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, submodule)`` on every submodule registration (``add_module``, assigning a module or None
    to a module attribute); a non-None result is registered instead."""
    return _global_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, param)`` on every registration of a (non-None) parameter; a non-None result is
    registered instead."""
    return _global_hook(_global_parameter_registration_hooks, hook)


def _registration_hooks(table: dict, module, name: str, value):
    for hook in table.values():
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


# Bumped by every change to any module's parameter/buffer/submodule registry (and by creating one): compiled
# functions reuse what they discovered about a module tree while this is unchanged (_compile/state.py).
STRUCTURE_EPOCH = [0]
# while compile traces a function: {AttrKey((module, name)): value before} of the plain attributes it sets (put back
# after the trace, and the rebinding replayed after every call: _compile.runner)
SETATTR_LOG: list = [None]


class AttrKey(tuple):
    """``(object, attribute name)``, a key of SETATTR_LOG by the object's identity: a dataclass with ``eq=True``
    (or any class defining ``__eq__`` alone) is unhashable, and two equal objects are two places."""
    __slots__ = ()

    def __hash__(self):
        return hash((id(self[0]), self[1]))

    def __eq__(self, other):
        return type(other) is AttrKey and self[0] is other[0] and self[1] == other[1]

    def __ne__(self, other):
        return not self == other
# while compile traces a function: {id(table): (table, its items before)} of the _Registry tables it changes (a
# buffer rebound, ``register_buffer``, a hook added; None for a table made while tracing): put back after the
# trace; a buffers table's changes are replayed after every call, any other table's are a graph break
# (_compile.runner)
REGISTRY_LOG: list = [None]
_UNSET = object()


def _changing(table) -> None:
    """A _Registry is about to change: bump the epoch, and log its contents first while a trace runs."""
    STRUCTURE_EPOCH[0] += 1
    log = REGISTRY_LOG[0]
    if log is not None and id(table) not in log:
        log[id(table)] = (table, list(OrderedDict.items(table)))


class _Registry(OrderedDict):
    """A module's ``_parameters``/``_buffers``/``_modules`` table (and, as ``_Hooks``, its hook tables): an
    OrderedDict whose every change (also a direct ``module._parameters[name] = p``) bumps ``STRUCTURE_EPOCH``.
    Shown as torch's plain dicts (``{'lin': None}``, ``dict_keys([...])``: nothing reorders these tables, so the
    dict's own order is the OrderedDict's)."""

    keys, values, items = dict.keys, dict.values, dict.items

    def __init__(self, *args, **kwargs):
        STRUCTURE_EPOCH[0] += 1
        log = REGISTRY_LOG[0]
        if log is not None:  # (a table made while tracing, a new module's (``seq[0:5]``): its changes are its own)
            log[id(self)] = None
        super().__init__(*args, **kwargs)

    def __setitem__(self, key, value):
        _changing(self)
        OrderedDict.__setitem__(self, key, value)

    def __delitem__(self, key):
        _changing(self)
        OrderedDict.__delitem__(self, key)

    def pop(self, *args):
        _changing(self)
        return OrderedDict.pop(self, *args)

    def popitem(self, last=True):
        _changing(self)
        return OrderedDict.popitem(self, last)

    def clear(self):
        _changing(self)
        OrderedDict.clear(self)

    def setdefault(self, key, default=None):
        _changing(self)
        return OrderedDict.setdefault(self, key, default)

    def update(self, *args, **kwargs):
        _changing(self)
        OrderedDict.update(self, *args, **kwargs)

    def move_to_end(self, key, last=True):
        _changing(self)
        OrderedDict.move_to_end(self, key, last)

    def __ior__(self, other):
        _changing(self)
        return OrderedDict.__ior__(self, other)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.items()) + "}"


class _Hooks(_Registry):
    """A module's hook table: an OrderedDict in torch too (``prepend=True`` reorders it)."""

    keys, values, items = OrderedDict.keys, OrderedDict.values, OrderedDict.items

    def __repr__(self) -> str:
        return repr(OrderedDict(self))


class _Buffers(_Registry):
    """A module's ``_buffers`` table (a compiled call replays its changes: rebinding a buffer is common)."""


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + ln for ln in lines[1:])


# torch's other per-module hook tables, made on first use (a read too: ``module._forward_hooks_with_kwargs``), so a
# module that never has such a hook carries none (its construction, its compiled program's walk): the two that
# mark forward (pre-)hooks taking kwargs and the always-called forward hooks (``{hook id: True}``, registries: a
# change reaches a compiled call), and the state-dict hooks (``_state_dict._table`` reads them)
_LAZY_TABLES = {"_forward_hooks_with_kwargs": _Hooks, "_forward_pre_hooks_with_kwargs": _Hooks,
                "_forward_hooks_always_called": _Hooks, "_state_dict_hooks": OrderedDict,
                "_state_dict_pre_hooks": OrderedDict, "_load_state_dict_pre_hooks": OrderedDict,
                "_load_state_dict_post_hooks": OrderedDict}
_HOOK_TABLES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs", "_forward_hooks_always_called")
# a facade module's mark in its ``__dict__`` (so in its pickled state, a subclass's own ``__getstate__`` too):
# ``serialization`` rebuilds a state without it as a torch module's ``__dict__``. (It once held the ids of the
# hooks taking kwargs: ``__setstate__`` moves such a set to ``_forward_(pre_)hooks_with_kwargs``.)
_FACADE_STATE = "_hooks_with_kwargs"


class Module(StateDictMixin):
    """Base class for all neural network modules (``torch.nn.Module``)."""

    _hook_id = 0
    dump_patches: bool = False
    call_super_init: bool = False  # True: ``__init__``'s arguments go on to the next class's (cooperative classes)
    T_destination = TypeVar("T_destination", bound=dict[str, Any])
    # None until a backward hook is registered: True for full ones (``register_full_backward_hook``), False for the
    # deprecated ``register_backward_hook``; both kinds live in ``_backward_hooks``, as in PyTorch
    _is_full_backward_hook: bool | None = None

    def __init__(self, *args, **kwargs) -> None:
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = _Registry()
        d["_buffers"] = _Buffers()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = _Registry()
        d["_forward_hooks"] = _Hooks()
        d["_forward_pre_hooks"] = _Hooks()
        d["_backward_hooks"] = _Hooks()
        d["_backward_pre_hooks"] = _Hooks()
        d[_FACADE_STATE] = True
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def __getstate__(self) -> dict:
        """``__dict__`` with torch's types: ``_parameters``, ``_buffers`` and ``_modules`` plain dicts, the hook
        tables OrderedDicts (so ``load(weights_only=True)`` needs only the module classes allow-listed, as torch's;
        the facade's mark, a bool, tells ``load`` it is not a torch pickle), without the compiled program (an
        unpickled or deep-copied module runs eagerly, as in PyTorch). ``__setstate__`` makes the tables the
        facade's again."""
        state = self.__dict__.copy()
        state.pop("_compiled_call", None)
        for k, v in state.items():
            if isinstance(v, _Registry):
                state[k] = OrderedDict(v) if isinstance(v, _Hooks) else dict(v)
        return state

    def __setstate__(self, state: dict) -> None:
        """``__dict__`` from ``state`` (this facade's pickle, or torch's: its tables plain dicts, its lazy tables
        there even when empty); the tables become the facade's registries, those an older pickle lacks are made
        (PyTorch's list; the lazy hook tables are made on first use), and a pickle of this facade's older layout
        (kwargs / always-called hook ids in sets, non-full backward hooks apart) is moved to PyTorch's."""
        d = self.__dict__
        d.update(state)
        for k, kind in (("_parameters", _Registry), ("_modules", _Registry), ("_buffers", _Buffers)):
            if k in d and type(d[k]) is not kind:
                d[k] = kind(d[k])
        for k in _LAZY_TABLES:  # (torch's pickle holds them all: an empty one is made again on first use)
            if k in d and not d[k]:
                del d[k]
        if "_is_full_backward_hook" in d and d["_is_full_backward_hook"] is None:
            del d["_is_full_backward_hook"]  # (the class's default)
        old_kw = d.get(_FACADE_STATE)
        d[_FACADE_STATE] = True
        for name in ("_forward_pre_hooks", "_backward_pre_hooks"):
            if name not in d:
                d[name] = _Hooks()
        for name in _HOOK_TABLES:  # (OrderedDicts in a pickle; an older one's: a plain _Registry)
            if name in d and type(d[name]) is not _Hooks:
                d[name] = _Hooks(d[name])
        if "_non_persistent_buffers_set" not in d:
            d["_non_persistent_buffers_set"] = set()
        if isinstance(old_kw, set):  # (the older layout)
            for k in old_kw:
                for name in ("_forward_pre_hooks", "_forward_hooks"):
                    if k in d.get(name, ()):
                        self._hook_table(name + "_with_kwargs")[k] = True
            for k in d.pop("_hooks_always_called", None) or ():
                if k in d.get("_forward_hooks", ()):
                    self._hook_table("_forward_hooks_always_called")[k] = True
            non_full = d.pop("_non_full_backward_hooks", None)
            if non_full:
                d.setdefault("_backward_hooks", _Hooks()).update(non_full)

    # ---- registration ----------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param is not None and _global_parameter_registration_hooks:
            param = _registration_hooks(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a non-parameter tensor (saved in state_dict unless ``persistent=False``)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        if _global_buffer_registration_hooks:
            tensor = _registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Register a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if _global_module_registration_hooks:
            module = _registration_hooks(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._drop(name, "_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter "
                                f"'{name}' (torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._drop(name, "_modules")
            if _global_module_registration_hooks:
                value = _registration_hooks(_global_module_registration_hooks, self, name, value)
            d["_modules"][name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            if _global_module_registration_hooks:
                value = _registration_hooks(_global_module_registration_hooks, self, name, value)
            d["_modules"][name] = value
        elif ("_buffers" in d and name in d["_buffers"]) or isinstance(value, Buffer):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer "
                                f"'{name}' (torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):  # nn.Buffer(t): registered, with its own persistence
                self.register_buffer(name, value, value.persistent)
            else:
                if _global_buffer_registration_hooks:
                    value = _registration_hooks(_global_buffer_registration_hooks, self, name, value)
                d["_buffers"][name] = value
        else:
            if name != "training":  # (a guard read on every call) compiled functions walk attributes again
                STRUCTURE_EPOCH[0] += 1
            log = SETATTR_LOG[0]  # (``training`` too: ``model.eval()`` inside a compiled function is replayed)
            if log is not None and AttrKey((self, name)) not in log:
                log[AttrKey((self, name))] = d.get(name, _UNSET)
            object.__setattr__(self, name, value)

    def _drop(self, name: str, keep: str) -> None:
        """Forget ``name`` everywhere but the ``keep`` table (a replaced entry keeps its place, as in PyTorch)."""
        d = self.__dict__
        d.pop(name, None)
        for k in ("_parameters", "_buffers", "_modules"):
            if k != keep:
                d[k].pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            if k in d and name in d[k]:
                return d[k][name]
        if name in _LAZY_TABLES and "_parameters" in d:
            return self._hook_table(name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _hook_table(self, name: str) -> dict:
        """One of the ``_LAZY_TABLES``, made now if this module has none yet."""
        t = self.__dict__.get(name)
        if t is None:
            t = self.__dict__[name] = _LAZY_TABLES[name]()
        return t

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            if name in d.get(k, ()):
                del d[k][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        STRUCTURE_EPOCH[0] += 1
        log = SETATTR_LOG[0]  # (``del self.flag`` inside a compiled function: replayed as a set is)
        if log is not None and name in d and AttrKey((self, name)) not in log:
            log[AttrKey((self, name))] = d[name]
        object.__delattr__(self, name)

    # ---- traversal ---------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        """(name, module) for this module and all descendants, depth first, each once."""
        if memo is None:
            memo = set()
        if self in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, attr: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mp, m in mods:
            for k, v in getattr(m, attr).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mp + ("." if mp else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """(qualified name, Parameter) pairs in registration order, shared ones once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and in-place transforms -----------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def share_memory(self) -> "Module":
        """Every parameter's and buffer's ``share_memory_()``, which the facade refuses (see ``Tensor.share_memory_``):
        a module without tensors is returned as it is."""
        return self._apply(lambda t: t.share_memory_())

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """``fn`` applied to every parameter, its ``.grad`` and every buffer (children first), as PyTorch's: by
        default each parameter and gradient object stays, its ``.data`` set to the result;
        ``torch.__future__.set_overwrite_module_params_on_conversion(True)``: new Parameters (and gradients) are
        registered instead; ``set_swap_module_params_on_conversion(True)`` (which wins): each object stays, its
        contents swapped with the result's (``torch.utils.swap_tensors``). A buffer is replaced by ``fn``'s
        result. (A "compatible shallow-copy type" is what ``.data =`` takes: not a meta result for a real tensor, or
        the other way round; there a new Parameter / gradient is set, as torch's ``compute_should_use_set_data``.)"""
        from ... import __future__ as future
        from ..._tensor.tensor import has_compatible_shallow_copy_type as compatible
        if recurse:
            for m in self.children():
                m._apply(fn)
        overwrite = future._overwrite_module_params_on_conversion
        swap = future._swap_module_params_on_conversion
        for key, param in self._parameters.items():
            if param is None:
                continue
            with _no_grad():
                applied = fn(param)
            grad = param.grad
            if swap:
                from ...utils._swap import swap_tensors
                try:
                    if grad is not None:
                        param.grad = None
                    swap_tensors(param, Parameter(applied, requires_grad=param.requires_grad))
                except Exception as e:
                    if grad is not None:
                        param.grad = grad
                    raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") from e
                out = param
            elif not overwrite and compatible(param, applied):
                param.data = applied
                out = param
            else:
                out = self._parameters[key] = Parameter(applied, param.requires_grad)
            if grad is None:
                continue
            with _no_grad():
                grad_applied = fn(grad)
            if swap:
                grad_applied.requires_grad_(grad.requires_grad)
                try:
                    swap_tensors(grad, grad_applied)
                except Exception as e:
                    raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}.grad") from e
                out.grad = grad
            elif not overwrite and compatible(grad, grad_applied):
                out.grad.data = grad_applied
            else:
                out.grad = grad_applied.requires_grad_(grad.requires_grad)
        for k, b in self._buffers.items():
            if b is not None:
                self._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """Move/cast parameters and buffers in place, keeping identities: a dtype (floating or complex only) applies
        to the floating and complex ones; ``memory_format`` to the 4-D and 5-D ones (``Tensor.to``'s arguments)."""
        from ...ops.conversion import _parse_to
        dtype, device, copy, fmt = _parse_to(args, kwargs)
        if copy or "copy" in kwargs:  # (torch's ``_nn._parse_to``: any ``copy`` given, even False)
            raise RuntimeError(".to() does not accept copy argument")
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex "
                                f"dtypes, but got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers. Please file an issue at https://github.com/pytorch/pytorch/issues/new?"
                              "template=bug-report.yml if a complex module does not work as expected.",
                              stacklevel=_user_stacklevel())

        given_fmt = fmt is not preserve_format and fmt is not None

        def conv(t: Tensor) -> Tensor:
            dt = dtype if (t.is_floating_point() or t.is_complex()) else None
            try:
                # (torch asks a tensor's dim() only for a memory format given: not an uninitialized parameter's)
                return t.to(device=device, dtype=dt, memory_format=fmt if given_fmt and t.dim() in (4, 5) else None)
            except NotImplementedError as e:
                if str(e) == META_NO_DATA:
                    raise NotImplementedError(f"{e} Please use torch.nn.Module.to_empty() instead of "
                                              "torch.nn.Module.to() when moving module from meta to a different "
                                              "device.") from None
                raise
        return self._apply(conv)

    def to_empty(self, *, device=None, recurse: bool = True) -> "Module":
        """Parameters and buffers replaced by new uninitialized tensors of their shapes on ``device``."""
        from ... import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def type(self, dst_type) -> "Module":
        """Every parameter and buffer cast to ``dst_type`` (integer buffers too, as in PyTorch)."""
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> "Module":
        return self.to("cpu")

    def float(self) -> "Module":
        from ... import float32
        return self._apply(lambda t: t.to(float32) if t.is_floating_point() else t)

    def double(self) -> "Module":
        from ... import float64
        return self._apply(lambda t: t.to(float64) if t.is_floating_point() else t)

    def half(self) -> "Module":
        from ... import float16
        return self._apply(lambda t: t.to(float16) if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        from ... import bfloat16
        return self._apply(lambda t: t.to(bfloat16) if t.is_floating_point() else t)

    def cuda(self, device=None) -> "Module":
        return self.to("cuda" if device is None else device)

    def xpu(self, device=None) -> "Module":
        """Every parameter and buffer moved to the XPU: JAX has none, so torch's errors for a build without one
        (a module without tensors is returned as it is)."""
        return self._apply(lambda t: _absent_backend("xpu", device))

    def ipu(self, device=None) -> "Module":
        """Every parameter and buffer moved to the IPU: JAX has none (torch's errors, as :meth:`xpu`)."""
        return self._apply(lambda t: _absent_backend("ipu", device))

    def mtia(self, device=None) -> "Module":
        """Every parameter and buffer moved to the MTIA: JAX has none (torch's errors, as :meth:`xpu`)."""
        return self._apply(lambda t: _absent_backend("mtia", device))

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` (``""``: this module), with PyTorch's errors."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules and not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def _attr_at(self, target: str):
        """(owning module, attribute name) of the dotted path ``target``; the attribute must exist."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``, with PyTorch's errors."""
        mod, name = self._attr_at(target)
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return p

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``, with PyTorch's errors."""
        mod, name = self._attr_at(target)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target`` (``strict``: the attribute must exist already)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    # ---- call and hooks --------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def _new_hook(self, table: dict, hook: Callable, prepend: bool = False, extra: tuple = ()) -> RemovableHandle:
        """``hook`` under a new id in ``table`` (first with ``prepend``), and the id in each ``extra`` table (torch's
        ``{id: True}`` marks: with kwargs, always called): its handle removes it from all of them."""
        Module._hook_id += 1
        k = Module._hook_id
        table[k] = hook
        if prepend:
            table.move_to_end(k, last=False)
        for t in extra:
            t[k] = True
        return RemovableHandle(table, k, *extra)

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` before forward; a non-None result replaces args. ``with_kwargs``:
        ``hook(module, args, kwargs)``, returning None or ``(args, kwargs)``."""
        extra = (self._hook_table("_forward_pre_hooks_with_kwargs"),) if with_kwargs else ()
        return self._new_hook(self._forward_pre_hooks, hook, prepend, extra)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` after forward; a non-None result replaces the output. ``with_kwargs``:
        ``hook(module, args, kwargs, output)``. ``always_call``: it also runs (with output None) when forward
        raises, before the exception propagates."""
        extra = ((self._hook_table("_forward_hooks_with_kwargs"),) if with_kwargs else ()) + (
            (self._hook_table("_forward_hooks_always_called"),) if always_call else ())
        return self._new_hook(self._forward_hooks, hook, prepend, extra)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradients of the module's outputs are computed; a non-None
        result (a tuple as long as ``grad_output``) replaces them."""
        return self._new_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of the module's tensor inputs are
        computed (None for an input that is not a tensor or does not require grad); a non-None result replaces
        ``grad_input``. With no input requiring grad it fires with the output gradients (and warns), as torch."""
        self._backward_hook_kind(True)
        return self._new_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated (PyTorch's non-full hook): ``hook(module, grad_input, grad_output)`` on the autograd node
        that made the module's output, so ``grad_input`` is that node's input gradients (``_backward_hook.py``).
        It is kept in ``_backward_hooks`` with ``_is_full_backward_hook`` False, as in PyTorch."""
        self._backward_hook_kind(False)
        return self._new_hook(self._backward_hooks, hook)

    def _backward_hook_kind(self, full: bool) -> None:
        if self._is_full_backward_hook is (not full):
            from ._backward_hook import _MIXED_HOOKS
            raise RuntimeError(_MIXED_HOOKS)
        self.__dict__["_is_full_backward_hook"] = full

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's forward in place (``torch.nn.Module.compile``): later calls run one XLA
        program per guard key; ``state_dict`` keys are unchanged."""
        from ..._compile import CompiledFunction, compile as _compile
        _compile(lambda: None, *args, **kwargs)  # validates the options
        object.__setattr__(self, "_compiled_call", CompiledFunction(self._call_impl,
                                                                    fullgraph=kwargs.get("fullgraph", False)))

    def __call__(self, *args, **kwargs):
        cc = self.__dict__.get("_compiled_call")
        if cc is not None and not _global_call_hooks:  # (its program has no global hooks: they run eagerly)
            return cc(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        if _global_call_hooks:  # (the one check for global hooks: none is the common case)
            return self._call_with_hooks(args, kwargs, True)
        d = self.__dict__
        try:  # the hook tables are the module's own (clearing one, or deleting an entry, removes those hooks)
            hooked = d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"] or d["_backward_pre_hooks"]
        except KeyError:  # (a table an old pickle lacks: the hooked call raises PyTorch's AttributeError)
            hooked = True
        if not hooked:
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs, False)

    def _call_with_hooks(self, args: tuple, kwargs: dict, glob: bool):
        """``_call_impl`` with hooks, in PyTorch's order; ``glob``: the global hooks too, each before the module's
        own of its kind. Which forward (pre-)hooks take kwargs, and which forward hooks are always called, is read
        from ``_forward_pre_hooks_with_kwargs`` / ``_forward_hooks_with_kwargs`` / ``_forward_hooks_always_called``;
        the backward hooks are full or not by ``_is_full_backward_hook``."""
        bw_hooks, bw_pre = self._backward_hooks, self._backward_pre_hooks  # (PyTorch's order of reading them)
        fw_hooks, fw_pre = self._forward_hooks, self._forward_pre_hooks
        d = self.__dict__
        pre_kw = d.get("_forward_pre_hooks_with_kwargs") or ()
        kw = d.get("_forward_hooks_with_kwargs") or ()
        full = non_full = ()
        if bw_hooks:
            kind = self._is_full_backward_hook
            if kind is True:
                full = list(bw_hooks.values())
            elif kind is False:
                non_full = list(bw_hooks.values())
        pre = list(bw_pre.values())
        if glob:
            g_full = _global_is_full_backward_hook[0]
            if g_full is True:
                full = [*_global_backward_hooks.values(), *full]
            elif g_full is False:
                non_full = [*_global_backward_hooks.values(), *non_full]
            pre = [*_global_backward_pre_hooks.values(), *pre]
            pre_items = [*_global_forward_pre_hooks.items(), *fw_pre.items()]
        else:
            pre_items = list(fw_pre.items())
        result = None
        done = set()
        try:
            for k, h in pre_items:
                args, kwargs = _run_pre_hook(self, h, args, kwargs, k in pre_kw)
            bw = None
            if full or pre:  # (in no_grad mode too: nothing to hook then, but its warning for a dict output)
                from ._backward_hook import BackwardHook
                bw = BackwardHook(self, full, pre)
                args = bw.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for k, h in ([*_global_forward_hooks.items(), *fw_hooks.items()] if glob else list(fw_hooks.items())):
                done.add(k)
                r = (h(self, args, kwargs, result) if k in kw or k in _global_forward_hooks_with_kwargs
                     else h(self, args, result))
                if r is not None:
                    result = r
        except Exception:
            self._always_called(args, kwargs, result, done)
            raise
        if bw is not None:
            result = bw.setup_output_hook(result)
        if non_full:
            from ._backward_hook import attach_non_full
            attach_non_full(self, non_full, args, result)
        return result

    def _always_called(self, args, kwargs, result, done: set) -> None:
        """Forward raised (or a hook did): the ``always_call`` forward hooks that have not run yet run now -- the
        global ones (``register_module_forward_hook``; as PyTorch, without kwargs even when registered with_kwargs),
        then the module's own, in ``_forward_hooks`` order -- each with the result so far (None when forward
        raised); an exception of theirs becomes a warning."""
        d = self.__dict__
        always, kw = d.get("_forward_hooks_always_called") or (), d.get("_forward_hooks_with_kwargs") or ()
        hooks = [(k, h, False, "global module") for k, h in list(_global_forward_hooks.items())
                 if k in _global_forward_hooks_always_called]
        hooks += [(k, h, k in kw, "module") for k, h in list(d.get("_forward_hooks", {}).items()) if k in always]
        for k, h, with_kw, who in hooks:
            if k not in done:
                try:
                    r = h(self, args, kwargs, result) if with_kw else h(self, args, result)
                    if r is not None:
                        result = r
                except Exception as e:
                    warnings.warn(f"{who} forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {e}",
                                  stacklevel=_user_stacklevel())

    # ---- repr --------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for k, m in self._modules.items():
            lines.append("(" + k + "): " + _addindent(repr(m), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))


def _run_pre_hook(module, hook, args: tuple, kwargs: dict, with_kwargs) -> tuple:
    """One forward pre-hook: ``(args, kwargs)`` after it (PyTorch's replacement and error rules)."""
    if with_kwargs:
        r = hook(module, args, kwargs)
        if r is not None:
            if not (isinstance(r, tuple) and len(r) == 2):
                raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got "
                                   f"{r}.")
            args, kwargs = r
        return args, kwargs
    r = hook(module, args)
    if r is not None:
        args = r if isinstance(r, tuple) else (r,)
    return args, kwargs


_MTIA_MISSING = ("Torch not compiled with MTIA enabled. Ensure you have `import "
                 "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
                 "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")


def _absent_backend(kind: str, device) -> None:
    """``Tensor.xpu/ipu/mtia(device)`` in a torch build without that backend (JAX has none of them): torch's error
    for ``device`` (its type, its index, its device type), else the build's."""
    from ..._device import DeviceUnavailableError, accelerator_type, device as _device
    if device is not None:
        if not isinstance(device, (int, str, _device)):
            raise TypeError(f"{kind}(): argument 'device' (position 1) must be torch.device, not "
                            f"{type(device).__name__}")
        if isinstance(device, int):
            if device < 0:
                raise RuntimeError("Device index must not be negative")
            if accelerator_type() is None:  # (an index is the current accelerator's)
                raise RuntimeError("Cannot access accelerator device when none is available.")
        if isinstance(device, int) or _device(device).type != kind:
            raise RuntimeError(f"Invalid device, must be {'MTIA' if kind == 'mtia' else kind} device")
    if kind == "ipu":
        raise RuntimeError("PyTorch is not linked with support for ipu devices")
    raise DeviceUnavailableError("Torch not compiled with XPU enabled" if kind == "xpu" else _MTIA_MISSING)


def _no_grad():
    from ...autograd.grad_mode import no_grad
    return no_grad()
