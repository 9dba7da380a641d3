"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``, ``ParameterDict``."""
from __future__ import annotations

from collections import OrderedDict
from collections import abc as container_abcs
from itertools import chain, islice
import operator
from typing import Any, Iterable, Iterator

from ..._tensor.tensor import Tensor

from ..parameter import Parameter
from .module import Module, _addindent


def _torch_class(cls: type) -> str:
    """``str(cls)`` as PyTorch's messages print it: the facade's own classes under their ``torch`` path
    (``<class 'torch.nn.modules.container.Sequential'>``), anything else as Python prints it."""
    if cls is Tensor:
        return "<class 'torch.Tensor'>"
    mod = cls.__module__ or ""
    if mod == "functorch_lite" or mod.startswith("functorch_lite."):
        return f"<class 'torch{mod[len('functorch_lite'):]}.{cls.__qualname__}'>"
    return str(cls)


def _abs_index(n: int, idx) -> int:
    """``idx`` (any ``__index__`` object; negative counts from the end) as a position in ``range(n)``; PyTorch's
    TypeError for a non-integer, its IndexError out of range."""
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


def _renumber(module: Module) -> None:
    """Rename the submodules '0', '1', ... in their order (after a deletion, as PyTorch does). The registry is
    rewritten in place, through its own (epoch-bumping) methods, so its identity is kept."""
    mods = module._modules
    values = list(mods.values())
    if list(mods) == [str(i) for i in range(len(values))]:
        return
    mods.clear()
    for i, m in enumerate(values):
        mods[str(i)] = m


def _no_digits(names: list) -> list:
    return [k for k in names if not k.isdigit()]



def _pairs(seq, owner: str):
    """The (key, value) pairs of ``ModuleDict.update`` / ``ParameterDict.update``'s iterable, with torch's errors
    for an element that is not an iterable pair."""
    for j, e in enumerate(seq):
        if not isinstance(e, container_abcs.Iterable):
            raise TypeError(f"{owner} update sequence element #{j} should be Iterable; is" + type(e).__name__)
        if not len(e) == 2:
            raise ValueError(f"{owner} update sequence element #{j} has length {len(e)}; 2 is required")
        yield e[0], e[1]

class Sequential(Module):
    """Modules applied in order (``torch.nn.Sequential``): built from modules (named '0', '1', ...) or from one
    ``OrderedDict`` of named modules. Deleting (``del seq[i]``, ``pop``) renames the remaining ones '0', '1', ...;
    ``insert`` shifts the later numbered entries up one."""

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def _key_at(self, idx) -> str:
        return next(islice(self._modules.keys(), _abs_index(len(self), idx), None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key_at(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        """Replace the submodule at ``idx`` (registered under its existing name)."""
        setattr(self, self._key_at(idx), module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key_at(idx)]
        for k in keys:
            delattr(self, k)
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __dir__(self):
        return _no_digits(super().__dir__())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        for m in sequential:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Put ``module`` at ``index`` (``-len <= index <= len``); the numbered entries from there move up one."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {_torch_class(Module)}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def pop(self, key):
        """Remove and return the module at ``key`` (a slice: a Sequential of those, under their old names)."""
        v = self[key]
        del self[key]
        return v

    def _check_sequential(self, other) -> None:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {str(type(other))} "
                             "is given.")

    def __add__(self, other) -> "Sequential":
        self._check_sequential(other)
        out = Sequential()
        for m in self:
            out.append(m)
        for m in other:
            out.append(m)
        return out

    def __iadd__(self, other) -> "Sequential":
        self._check_sequential(other)
        offset = len(self)
        for i, m in enumerate(other):
            self.add_module(str(i + offset), m)
        return self

    def _check_factor(self, other) -> None:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {_torch_class(type(self))} and "
                            f"{_torch_class(type(other))}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {_torch_class(type(self))}")

    def __mul__(self, other: int) -> "Sequential":
        """A new Sequential holding these same modules (not copies) ``other`` times over, numbered '0', '1', ..."""
        self._check_factor(other)
        out = Sequential()
        for _ in range(other):
            for m in self:
                out.add_module(str(len(out)), m)
        return out

    def __rmul__(self, other: int) -> "Sequential":
        return self.__mul__(other)

    def __imul__(self, other: int) -> "Sequential":
        self._check_factor(other)
        n = len(self)
        for r in range(1, other):
            for i in range(n):
                self.add_module(str(r * n + i), self._modules[str(i)])
        return self

    def forward(self, input):
        for m in self:
            input = m(input)
        return input


class ModuleList(Module):
    """A list of submodules, registered under '0', '1', ... (deleting renumbers the rest)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _get_abs_string_index(self, idx) -> str:
        return str(_abs_index(len(self), idx))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx) -> None:
        keys = ([str(k) for k in range(len(self._modules))[idx]] if isinstance(idx, slice)
                else [self._get_abs_string_index(idx)])
        for k in keys:
            delattr(self, k)
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        out = ModuleList()
        for i, m in enumerate(chain(self, other)):
            out.add_module(str(i), m)
        return out

    def __dir__(self):
        return _no_digits(super().__dir__())

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index``; the later entries move up one (PyTorch's loop, unchecked: a
        negative ``index`` is a KeyError, one past the end leaves a gap in the numbering)."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, m in enumerate(modules):
            self.add_module(str(offset + i), m)
        return self

    def __repr__(self) -> str:
        """Runs of identical entries print once, as ``(0-1): 2 x Block(...)`` (PyTorch)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = [[0, 0, reprs[0]]]
        for i, r in enumerate(reprs[1:], 1):
            if r == runs[-1][2]:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for a, b, r in runs:
            lines.append(_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of submodules (insertion order; ``update`` keeps the order of its argument)."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def update(self, modules) -> None:
        """Add (or replace) the entries of a mapping, a ModuleDict, or an iterable of (key, module) pairs."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, m in modules.items():
                self[key] = m
        else:
            for k, m in _pairs(modules, "ModuleDict"):
                self[k] = m


class ParameterList(Module):
    """A list of Parameters, registered under '0', '1', ...: a tensor put in it becomes a Parameter; any other
    object is kept as a plain attribute of that name (PyTorch)."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _get_abs_string_index(self, idx) -> str:
        return str(_abs_index(len(self), idx))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        name = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, name, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable) -> "ParameterList":
        return self.extend(parameters)

    def __dir__(self):
        return _no_digits(super().__dir__())

    def append(self, value: Any) -> "ParameterList":
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable) -> "ParameterList":
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                size = "x".join(str(s) for s in p.size())
                dev = f" ({p.device})" if p.device.type == "cuda" else ""
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.dtype} of size {size}{dev}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of Parameters (``torch.nn.ParameterDict``): a tensor stored in it is wrapped into a
    Parameter and registered under its key (so ``state_dict`` / ``named_parameters`` name it ``<key>``); other
    objects are kept as plain attributes. A plain ``dict`` given to the constructor or ``update`` is added in
    sorted key order, an ``OrderedDict`` / ``ParameterDict`` / sequence of pairs in its own order (PyTorch).

    >>> pd = ParameterDict({"b": Parameter(ft.ones(2)), "a": Parameter(ft.zeros(1))})
    >>> list(pd)
    ['a', 'b']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        # every way of adding an entry ends here: the one place a tensor becomes a Parameter
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def copy(self) -> "ParameterDict":
        """A new ParameterDict holding the same parameters, in the same order."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple:
        k, _ = self._keys.popitem()
        self._keys[k] = None  # (back, so that ``del self[k]`` finds it)
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any | None = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> "ParameterDict":
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Add the entries of a mapping or of an iterable of (key, value) pairs."""
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for k, p in _pairs(parameters, "ParameterDict"):
                self[k] = p

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                size = "x".join(str(s) for s in p.size())
                dev = f" ({p.device})" if p.device.type == "cuda" else ""
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.type()} of size {size}{dev}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: "ParameterDict") -> "ParameterDict":
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: "ParameterDict") -> "ParameterDict":
        self.update(other)
        return self
