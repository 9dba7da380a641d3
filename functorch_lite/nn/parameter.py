"""``nn.Parameter``: a Tensor subclass that modules register as a learnable parameter."""
from __future__ import annotations

from .._tensor.tensor import Tensor


class Parameter(Tensor):
    """A tensor that shares ``data``'s storage and requires grad by default (``torch.nn.Parameter``)."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from .. import empty
            data = empty(0)
        d = data.detach()
        p = cls._header(d._storage, d._shape, d.dtype, d._chain, d._strides, d._offset, None, d._cache, d._idx)
        p._requires_grad = bool(requires_grad)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        r = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = r
        return r
