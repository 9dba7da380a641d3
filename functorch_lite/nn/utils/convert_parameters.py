"""``torch.nn.utils.convert_parameters``: parameters <-> one flat vector."""
from __future__ import annotations

from typing import Iterable

from ..._tensor.tensor import Tensor

__all__: list = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param: Tensor, old: int | None) -> int:
    """PyTorch's rule: all parameters on one accelerator index, or all on the CPU (index -1)."""
    dev = param.device
    idx = -1 if dev.type == "cpu" else (dev.index or 0)
    if old is None:
        return idx
    if idx != old:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old


def _typename(obj) -> str:
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Flatten ``parameters`` into one vector (differentiable: a ``cat`` of flat views).

    >>> parameters_to_vector(model.parameters()).shape   # (number of parameters,)
    """
    from ... import cat
    dev = None
    vec = []
    for p in parameters:
        dev = _check_param_device(p, dev)
        # (0-dim: reshape, the same flat view; the facade's view(-1) of a 0-dim tensor raises, reported)
        vec.append(p.view(-1) if p._shape else p.reshape(1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into ``parameters`` (each parameter's ``.data`` is replaced)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    dev = None
    pointer = 0
    for p in parameters:
        dev = _check_param_device(p, dev)
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
