"""Conv, pooling, upsampling and padding modules (``torch.nn`` twins, same reprs and default init)."""
from __future__ import annotations


from ..._tensor.tensor import Tensor
from .. import functional as F
from ..parameter import Parameter
from .module import Module
from .utils import _ntuple

__all__: list = ["Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Upsample",
                 "UpsamplingNearest2d", "UpsamplingBilinear2d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
                 "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
                 "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
                 "CircularPad2d", "CircularPad3d",
                 "Conv3d", "MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d",
                 "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """Shared state of Conv1d / Conv2d / ConvTranspose2d (PyTorch's ``_ConvNd``)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride, padding, dilation,
                 transposed: bool, output_padding, groups: int, bias: bool, padding_mode: str, nd: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(nd)(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(nd)(kernel_size)
        self.stride = _ntuple(nd)(stride)
        self.padding = padding if isinstance(padding, str) else _ntuple(nd)(padding)
        self.dilation = _ntuple(nd)(dilation)
        self.transposed = transposed
        self.output_padding = _ntuple(nd)(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            rev = [0, 0] * nd
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i] = total // 2
                    rev[2 * i + 1] = total - total // 2
        else:
            rev = [p for p in reversed(self.padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = tuple(rev)
        from ... import empty
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(shape + self.kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
        from .. import init
        init._default_layer_init(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv(self, fn, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(input, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L) or (C_in, L) input."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, 1, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv(F.conv1d, input, self.weight, self.bias)


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W) input.

    >>> Conv2d(3, 8, 3, padding=1)
    Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, 2, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv(F.conv2d, input, self.weight, self.bias)


class _ConvTransposeNd(_ConvNd):
    """ConvTranspose1d / 2d / 3d (``_nd`` spatial dims); ``forward(input, output_size)`` picks the output padding
    for a size."""
    _nd = 1
    _fn = "conv_transpose1d"

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, self._nd, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        if output_size is None:
            return self.output_padding
        nd = self._nd
        output_size = output_size if isinstance(output_size, (tuple, list)) else list(output_size)
        has_batch = input.dim() == nd + 2
        if len(output_size) == nd + 2 or (len(output_size) == nd + 1 and not has_batch):
            output_size = output_size[-nd:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or "
                             f"{nd + (2 if has_batch else 1)} elements (got {len(output_size)})")
        mins, maxs = [], []
        for d in range(nd):
            n = input.shape[input.dim() - nd + d]
            m = (n - 1) * self.stride[d] - 2 * self.padding[d] + self.dilation[d] * (self.kernel_size[d] - 1) + 1
            mins.append(m)
            maxs.append(m + self.stride[d] - 1)
        for d in range(nd):
            if not mins[d] <= output_size[d] <= maxs[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {mins} to "
                                 f"{maxs} (for an input of {input.shape[2:]})")
        return tuple(o - m for o, m in zip(output_size, mins))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        op = self._output_padding(input, output_size)
        return getattr(F, self._fn)(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                    self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution over (N, C_in, H, W) or (C_in, H, W)."""
    _nd = 2
    _fn = "conv_transpose2d"


class _MaxPoolNd(Module):
    """MaxPool1d / 2d / 3d's state (PyTorch's ``_MaxPoolNd``; ``stride`` defaults to ``kernel_size``)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling over (N, C, H, W) or (C, H, W)."""

    def forward(self, input: Tensor):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    """AvgPool1d / 2d / 3d's repr (PyTorch's ``_AvgPoolNd``)."""

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-d average pooling."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output size (``None`` keeps that input size)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)


# ---- 1-d / 3-d convolution and pooling, and adaptive max pooling (the same ops over 1 or 3 spatial dims) ----
class Conv3d(_ConvNd):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, 3, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv(F.conv3d, input, self.weight, self.bias)


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling over (N, C, L) or (C, L) (``stride`` defaults to ``kernel_size``)."""

    def forward(self, input: Tensor):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W)."""

    def forward(self, input: Tensor):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(_AvgPoolNd):
    """1-d average pooling (its sizes kept as 1-tuples, as PyTorch's)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _ntuple(1)(kernel_size)
        self.stride = _ntuple(1)(stride if stride is not None else kernel_size)
        self.padding = _ntuple(1)(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool3d(_AvgPoolNd):
    """3-d average pooling."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, L) / (C, L) to a fixed length."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, D, H, W) / (C, D, H, W) to a fixed size (``None`` keeps that input size)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output size (``None`` keeps that input size); ``return_indices`` as MaxPool2d."""

    def forward(self, input: Tensor):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) / (C, L) to a fixed length."""

    def forward(self, input: Tensor):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class Upsample(Module):
    """``F.interpolate`` as a module (size or scale_factor; nearest, linear, bilinear...)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _PadNd(Module):
    """Pads the last ``_nd`` dims with ``F.pad``'s ``_mode`` (``padding``: one int for every side, or the
    ``2 * _nd`` sizes)."""
    _mode, _nd = "constant", 2

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (list, tuple)) else (padding,) * (2 * self._nd)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _Zeros:
    """ZeroPadNd: its ConstantPadNd (a subclass, as torch's) with value 0 and the plain repr."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant ``value``."""
    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with a constant ``value``."""


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with a constant ``value``."""
    _nd = 3


class ZeroPad1d(_Zeros, ConstantPad1d):
    """Pad the last dim with zeros."""


class ZeroPad2d(_Zeros, ConstantPad2d):
    """Pad the last two dims with zeros."""


class ZeroPad3d(_Zeros, ConstantPad3d):
    """Pad the last three dims with zeros."""


class ReflectionPad1d(_PadNd):
    _mode, _nd = "reflect", 1


class ReflectionPad2d(_PadNd):
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    _mode, _nd = "reflect", 3


class ReplicationPad1d(_PadNd):
    _mode, _nd = "replicate", 1


class ReplicationPad2d(_PadNd):
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    _mode, _nd = "replicate", 3


class CircularPad1d(_PadNd):
    _mode, _nd = "circular", 1


class CircularPad2d(_PadNd):
    _mode = "circular"


class CircularPad3d(_PadNd):
    _mode, _nd = "circular", 3
