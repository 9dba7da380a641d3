"""Activation and distance modules: thin wrappers over ``nn.functional`` with PyTorch's constructors,
attributes and reprs (ELU, SELU, CELU, Softplus, Hardtanh, ReLU6, Hardswish, Hardsigmoid, Mish, PReLU, GLU,
Softsign, CosineSimilarity, PairwiseDistance)."""
from __future__ import annotations

from ..._tensor.tensor import Tensor
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__: list = ["ELU", "SELU", "CELU", "Softplus", "Hardtanh", "ReLU6", "Hardswish", "Hardsigmoid", "Mish", "PReLU",
                 "GLU", "Softsign", "CosineSimilarity", "PairwiseDistance"]


def _inplace_str(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


def _alpha_init(self, alpha: float = 1.0, inplace: bool = False) -> None:
    Module.__init__(self)
    self.alpha, self.inplace = alpha, inplace


def _alpha_repr(self) -> str:
    return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


def _inplace_init(self, inplace: bool = False) -> None:
    Module.__init__(self)
    self.inplace = inplace


def _inplace_repr(self) -> str:
    return _inplace_str(self.inplace)


# (the shared constructors and reprs are functions, not a base class: torch's activations are unrelated classes, so
# ``isinstance(m, nn.ELU)`` is False for a CELU, and ``isinstance(m, nn.Hardswish)`` for a Hardsigmoid)
class ELU(Module):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    __init__, extra_repr = _alpha_init, _alpha_repr

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    __init__, extra_repr = _alpha_init, _alpha_repr

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    """``scale * elu(x, alpha)`` with PyTorch's fixed constants."""
    __init__, extra_repr = _inplace_init, _inplace_repr

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)


class Mish(Module):
    """``x * tanh(softplus(x))``."""
    __init__, extra_repr = _inplace_init, _inplace_repr

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, self.inplace)


class Hardswish(Module):
    """``x * relu6(x + 3) / 6``."""
    __init__ = _inplace_init

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``."""
    __init__ = _inplace_init

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class PReLU(Module):
    """``x`` for ``x > 0``, else ``weight * x``; ``weight`` (learnable) has ``num_parameters`` entries, all
    ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        from ... import empty
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        from .. import init
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class GLU(Module):
    """Gated linear unit: ``a * sigmoid(b)`` over the halves of ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` over the last dimension."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
