"""More ``torch.nn`` modules: AdaptiveMaxPool3d, FractionalMaxPool2d/3d, MaxUnpool1d/2d/3d, RReLU, Softmax2d, ChannelShuffle and the
legacy CrossMapLRN2d (PyTorch's constructors, attributes and reprs)."""
from __future__ import annotations

import numpy as np

from ..._tensor.tensor import Tensor
from ...autograd.function import Function
from .. import functional as F
from .conv import _AdaptiveMaxPoolNd
from .module import Module
from .utils import _ntuple

__all__: list = ["AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "RReLU", "Softmax2d",
                 "ChannelShuffle", "CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, D, H, W) / (C, D, H, W) to a fixed size (``None`` keeps that input size)."""

    def forward(self, input: Tensor):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(self._nd)(kernel_size)
        self.stride = _ntuple(self._nd)(stride if stride is not None else kernel_size)
        self.padding = _ntuple(self._nd)(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        fn = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}[self._nd]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool1d(return_indices=True)``: maxima back at their positions, zeros elsewhere."""


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool2d(return_indices=True)``."""
    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool3d(return_indices=True)``."""
    _nd = 3


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn from U(lower, upper) in training, ``(lower + upper) / 2`` in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class ChannelShuffle(Module):
    """``F.channel_shuffle`` as a module."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


# ---- CrossMapLRN2d (PyTorch's legacy autograd.Function, vectorised) --------------------------------------------
def _lrn_windows(channels: int, size: int) -> tuple:
    """PyTorch's channel windows as 0/1 matrices: ``fwd[c, j]`` counts ``x[j]**2`` in channel c's scale (its running
    sum never drops channel 0, as the original loop), ``bwd[c, j]`` the ratio terms its backward adds up."""
    pre_pad = int((size - 1) / 2 + 1)
    fwd = np.zeros((channels, channels))
    fwd[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        fwd[c] = fwd[c - 1]
        if c < channels - pre_pad + 1:
            fwd[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            fwd[c, c - pre_pad] -= 1
    inverse_pre_pad = int(size - (size - 1) / 2)
    j = np.arange(channels)[None, :] + inverse_pre_pad
    c = np.arange(channels)[:, None]
    bwd = ((j >= c) & (j <= c + size - 1)).astype(np.float64)
    return fwd, bwd


class _CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        from ... import tensor
        fwd, bwd = _lrn_windows(input.shape[1], size)
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        ctx.bwd = tensor(bwd, dtype=input.dtype, device=input.device)
        sums = tensor(fwd, dtype=input.dtype, device=input.device)
        scale = (sums @ input.pow(2).flatten(2)).view_as(input) * (alpha / size) + k
        ctx.scale = scale
        output = scale.pow(-beta) * input
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        ratio = (grad_output * output / ctx.scale).flatten(2)
        accum = (ctx.bwd @ ratio).view_as(input)
        grad_input = ctx.scale.pow(-ctx.beta) * grad_output - (2 * ctx.alpha * ctx.beta / ctx.size) * input * accum
        return grad_input, None, None, None, None


_CrossMapLRN2d.__name__ = _CrossMapLRN2d.__qualname__ = "CrossMapLRN2d"  # grad_fn: CrossMapLRN2dBackward


class CrossMapLRN2d(Module):
    """Legacy cross-channel LRN over (N, C, H, W) with PyTorch's own forward and backward loops' windows."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return _CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _FractionalMaxPoolNd(Module):
    _nd = 2
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                 _random_samples=None) -> None:
        super().__init__()
        nd, name = self._nd, type(self).__name__
        tup = _ntuple(nd)
        if nd == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, H, W) / (C, H, W) (``F.fractional_max_pool2d``): pseudo-random windows
    of ``kernel_size`` to ``output_size`` (or ``output_ratio`` of the input size); ``_random_samples`` (N, C, 2)
    fixes the windows."""


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, T, H, W) / (C, T, H, W) (``F.fractional_max_pool3d``)."""
    _nd = 3
