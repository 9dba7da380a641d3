"""Loss modules beyond MSE/NLL/CrossEntropy: L1Loss, SmoothL1Loss, HuberLoss, BCELoss,
BCEWithLogitsLoss, KLDivLoss (``torch.nn``). The legacy ``size_average``/``reduce`` arguments map
to ``reduction`` as PyTorch's ``_Reduction.legacy_get_string`` does (with its warning)."""
from __future__ import annotations

import math

from ..._tensor.tensor import Tensor
from ...ops.losses import (binary_cross_entropy, binary_cross_entropy_with_logits, huber_loss, kl_div,
                           l1_loss, smooth_l1_loss)
from ...ops.linear_ce import LinearCrossEntropyOptions, linear_cross_entropy
from .layers import Linear, _Loss, _WeightedLoss

__all__: list = ["L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
                 "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class L1Loss(_Loss):
    """Mean absolute error: ``nn.L1Loss(reduction='mean')``."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above: ``nn.SmoothL1Loss(beta=1.0)``."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, linear above: ``nn.HuberLoss(delta=1.0)``."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    """Binary cross entropy on probabilities; ``weight`` is a buffer."""

    __constants__ = ["reduction"]

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)

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

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class LinearCrossEntropyLoss(_Loss):
    """``nn.LinearCrossEntropyLoss(in_features, num_classes, *, out_features=(), bias=False, ...)``: a ``Linear``
    to ``num_classes * prod(out_features)`` logits (``self.linear``, its weight flat as torch stores it) and the
    cross entropy of them (``F.linear_cross_entropy``, with ``options`` its chunked path)."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (), bias: bool = False,
                 device=None, dtype=None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(reduction=reduction)
        self.register_buffer("weight", weight)
        self.num_classes, self.out_features = num_classes, out_features
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return linear_cross_entropy(input, self.linear.weight.reshape((*shape, self.linear.in_features)), target,
                                    linear_bias=None if bias is None else bias.reshape(shape), weight=self.weight,
                                    reduction=self.reduction, ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
