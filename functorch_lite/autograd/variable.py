"""``torch.autograd.Variable``: PyTorch's deprecated alias of Tensor. ``Variable(t, requires_grad=True)`` returns a
new tensor sharing ``t``'s values (detached from its history), and every tensor is an instance of ``Variable``."""
from __future__ import annotations

import warnings


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from .._tensor.tensor import Tensor
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)`` -> a Tensor.

    >>> import functorch_lite as torch
    >>> v = torch.autograd.Variable(torch.ones(2), requires_grad=True)
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from .._tensor.tensor import Tensor
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))
