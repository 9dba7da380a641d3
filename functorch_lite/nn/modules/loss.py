"""Loss modules beyond MSE/NLL/CrossEntropy: L1Loss, SmoothL1Loss, HuberLoss, BCELoss,
BCEWithLogitsLoss, KLDivLoss (``torch.nn``). The legacy ``size_average``/``reduce`` arguments map
to ``reduction`` as PyTorch's ``_Reduction.legacy_get_string`` does (with its warning)."""
from __future__ import annotations

from ..._tensor.tensor import Tensor
from ...ops.losses import (_legacy, binary_cross_entropy, binary_cross_entropy_with_logits, huber_loss, kl_div,
                           l1_loss, smooth_l1_loss)
from .layers import _Loss

__all__: list = ["L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"]


class L1Loss(_Loss):
    """Mean absolute error: ``nn.L1Loss(reduction='mean')``."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above: ``nn.SmoothL1Loss(beta=1.0)``."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, linear above: ``nn.HuberLoss(delta=1.0)``."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_Loss):
    """Binary cross entropy on probabilities; ``weight`` is a buffer."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy in one stable op; ``weight`` and ``pos_weight`` are buffers."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                reduction=self.reduction)


class KLDivLoss(_Loss):
    """KL divergence with log-probability inputs (``reduction='batchmean'`` is the true KL)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
