"""``nn.Module``: registration of parameters, buffers and submodules, traversal, hooks, repr; the state-dict
protocol is ``_state_dict.StateDictMixin``."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterator

from ..._tensor.legacy import typename as _typename
from ..._tensor.tensor import Tensor
from ..parameter import Buffer, Parameter
from ._state_dict import StateDictMixin, _IncompatibleKeys  # noqa: F401  (re-exported)
from ...autograd.grad_mode import is_grad_enabled as _grad_enabled


class RemovableHandle:
    """Removes a registered hook (``handle.remove()``)."""

    def __init__(self, hooks: dict, key: int):
        self._hooks, self._key = hooks, key
        self.id = key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


# Bumped by every change to any module's parameter/buffer/submodule registry (and by creating one): compiled
# functions reuse what they discovered about a module tree while this is unchanged (_compile/state.py).
STRUCTURE_EPOCH = [0]
# while compile traces a function: {(module, name): value before} of the plain attributes it sets (put back
# after the trace, and the rebinding replayed after every call: _compile.runner)
SETATTR_LOG: list = [None]
_UNSET = object()


class _Registry(OrderedDict):
    """A module's ``_parameters``/``_buffers``/``_modules`` (and hook) table: an OrderedDict whose every change
    (also a direct ``module._parameters[name] = p``) bumps ``STRUCTURE_EPOCH``."""

    def __init__(self, *args, **kwargs):
        STRUCTURE_EPOCH[0] += 1
        super().__init__(*args, **kwargs)

    def __setitem__(self, key, value):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.__setitem__(self, key, value)

    def __delitem__(self, key):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.__delitem__(self, key)

    def pop(self, *args):
        STRUCTURE_EPOCH[0] += 1
        return OrderedDict.pop(self, *args)

    def popitem(self, last=True):
        STRUCTURE_EPOCH[0] += 1
        return OrderedDict.popitem(self, last)

    def clear(self):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.clear(self)

    def setdefault(self, key, default=None):
        STRUCTURE_EPOCH[0] += 1
        return OrderedDict.setdefault(self, key, default)

    def update(self, *args, **kwargs):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.update(self, *args, **kwargs)

    def move_to_end(self, key, last=True):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.move_to_end(self, key, last)

    def __ior__(self, other):
        STRUCTURE_EPOCH[0] += 1
        return OrderedDict.__ior__(self, other)


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + ln for ln in lines[1:])


class Module(StateDictMixin):
    """Base class for all neural network modules (``torch.nn.Module``)."""

    _hook_id = 0

    def __init__(self) -> None:
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = _Registry()
        d["_buffers"] = _Registry()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = _Registry()
        d["_forward_hooks"] = _Registry()
        d["_forward_pre_hooks"] = _Registry()
        d["_backward_hooks"] = _Registry()
        d["_backward_pre_hooks"] = _Registry()
        d["_hooks_with_kwargs"] = set()   # ids of forward (pre-)hooks registered with_kwargs=True

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
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a non-parameter tensor (saved in state_dict unless ``persistent=False``)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
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
            d["_modules"][name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            d["_modules"][name] = None
        elif ("_buffers" in d and name in d["_buffers"]) or isinstance(value, Buffer):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer "
                                f"'{name}' (torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):  # nn.Buffer(t): registered, with its own persistence
                self.register_buffer(name, value, value.persistent)
            else:
                d["_buffers"][name] = value
        else:
            if name != "training":  # (a guard read on every call) compiled functions walk attributes again
                STRUCTURE_EPOCH[0] += 1
            log = SETATTR_LOG[0]  # (``training`` too: ``model.eval()`` inside a compiled function is replayed)
            if log is not None and (self, name) not in log:
                log[(self, name)] = d.get(name, _UNSET)
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
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            if name in d.get(k, ()):
                del d[k][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        STRUCTURE_EPOCH[0] += 1
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
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad.detach()
                    g.zero_()
                    p.grad = g

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
        if recurse:
            for m in self.children():
                m._apply(fn)
        for k, p in self._parameters.items():
            if p is not None:
                with _no_grad():
                    new = fn(p)
                p.data = new
                if p.grad is not None:
                    p.grad = fn(p.grad)
        for k, b in self._buffers.items():
            if b is not None:
                self._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """Move/cast parameters and buffers in place (floating ones only for a dtype), keeping identities."""
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        from ... import dtypes as D
        for a in args:
            if isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a

        def conv(t: Tensor) -> Tensor:
            dt = dtype if (dtype is not None and t.is_floating_point()) else None
            return t.to(device=device, dtype=dt) if (dt or device is not None) else t
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

    def _new_hook(self, table: dict, hook: Callable, prepend: bool = False, with_kwargs: bool = False
                  ) -> RemovableHandle:
        Module._hook_id += 1
        table[Module._hook_id] = hook
        if prepend:
            table.move_to_end(Module._hook_id, last=False)
        if with_kwargs:
            self.__dict__.setdefault("_hooks_with_kwargs", set()).add(Module._hook_id)
        return RemovableHandle(table, Module._hook_id)

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` before forward; a non-None result replaces args. ``with_kwargs``:
        ``hook(module, args, kwargs)``, returning None or ``(args, kwargs)``."""
        return self._new_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` after forward; a non-None result replaces the output. ``with_kwargs``:
        ``hook(module, args, kwargs, output)``. ``always_call``: it also runs (with output None) when forward
        raises, before the exception propagates."""
        handle = self._new_hook(self._forward_hooks, hook, prepend, with_kwargs)
        if always_call:
            self.__dict__.setdefault("_hooks_always_called", set()).add(handle.id)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradients of the module's outputs are computed; a non-None
        result (a tuple as long as ``grad_output``) replaces them."""
        return self._new_hook(self.__dict__.setdefault("_backward_pre_hooks", _Registry()), hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of the module's tensor inputs are
        computed (None for an input that is not a tensor or does not require grad); a non-None result replaces
        ``grad_input``. With no input requiring grad it fires with the output gradients (and warns), as torch."""
        self._backward_hook_kind(True)
        return self._new_hook(self.__dict__.setdefault("_backward_hooks", _Registry()), hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated (PyTorch's non-full hook): ``hook(module, grad_input, grad_output)`` on the autograd node
        that made the module's output, so ``grad_input`` is that node's input gradients (``_backward_hook.py``)."""
        self._backward_hook_kind(False)
        return self._new_hook(self.__dict__.setdefault("_non_full_backward_hooks", _Registry()), hook)

    def _backward_hook_kind(self, full: bool) -> None:
        if self.__dict__.get("_is_full_backward_hook", full) is not full:
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
        if cc is not None:
            return cc(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        d = self.__dict__
        kw_ids = d.get("_hooks_with_kwargs")
        for k, h in list(self._forward_pre_hooks.items()):
            if kw_ids and k in kw_ids:
                r = h(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {r}.")
                    args, kwargs = r
                continue
            r = h(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        bw = None
        if (d.get("_backward_hooks") or d.get("_backward_pre_hooks")) and _grad_enabled():
            from ._backward_hook import BackwardHook
            bw = BackwardHook(self, list(d.get("_backward_hooks", {}).values()),
                              list(d.get("_backward_pre_hooks", {}).values()))
            args = bw.setup_input_hook(args)
        done = set()
        try:
            out = self.forward(*args, **kwargs)
            for k, h in list(self._forward_hooks.items()):
                done.add(k)
                r = h(self, args, kwargs, out) if kw_ids and k in kw_ids else h(self, args, out)
                if r is not None:
                    out = r
        except BaseException:
            for k in d.get("_hooks_always_called") or ():
                h = self._forward_hooks.get(k)
                if h is not None and k not in done:
                    try:
                        h(self, args, kwargs, None) if kw_ids and k in kw_ids else h(self, args, None)
                    except Exception as e:
                        import warnings
                        warnings.warn(f"forward hook with ``always_call=True`` raised an exception that was silenced "
                                      f"as another error was raised in forward: {e}")
            raise
        if bw is not None:
            out = bw.setup_output_hook(out)
        if d.get("_non_full_backward_hooks"):
            from ._backward_hook import attach_non_full
            attach_non_full(self, list(d["_non_full_backward_hooks"].values()), args, out)
        return out

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


def _no_grad():
    from ...autograd.grad_mode import no_grad
    return no_grad()
