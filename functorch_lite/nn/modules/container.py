"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``."""
from __future__ import annotations

from typing import Iterable, Iterator

from ..parameter import Parameter
from .module import Module, _addindent


def _key_at(modules: dict, idx: int) -> str:
    """The registered name at position ``idx`` (negative counts from the end), PyTorch's IndexError otherwise."""
    n = len(modules)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return list(modules)[idx % n]


class Sequential(Module):
    """Modules applied in order (``torch.nn.Sequential``)."""

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], dict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(dict(list(self._modules.items())[idx]))
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules.values())[idx % n]

    def __setitem__(self, idx: int, module: Module) -> None:
        """Replace the submodule at ``idx`` (registered under its existing name)."""
        setattr(self, _key_at(self._modules, idx), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):
        for m in self:
            input = m(input)
        return input


class ModuleList(Module):
    """A list of submodules, registered under '0', '1', ..."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        for m in modules or ():
            self.append(m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return list(self._modules.values())[idx]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, _key_at(self._modules, idx), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        for m in modules:
            self.append(m)
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
    """An ordered dict of submodules."""

    def __init__(self, modules: dict | None = None) -> None:
        super().__init__()
        for k, m in (modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


class ParameterList(Module):
    """A list of Parameters, registered under '0', '1', ..."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value) -> "ParameterList":
        if not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(str(len(self)), value)
        return self

    def __getitem__(self, idx: int) -> Parameter:
        return list(self._parameters.values())[idx]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def extra_repr(self) -> str:
        lines = []
        for k, p in self._parameters.items():
            size = "x".join(str(s) for s in p.shape)
            lines.append(f"  ({k}): Parameter containing: [{p.dtype} of size {size}]")
        return "\n".join(lines)
