"""Lazy modules (``torch.nn.LazyLinear``, ``LazyConv*``, ``LazyConvTranspose*``, ``LazyBatchNorm*``,
``LazyInstanceNorm*``): one mechanism, PyTorch's ``LazyModuleMixin``.

A lazy module is its regular class built with zero sizes whose parameters (and running statistics) are then
replaced by ``UninitializedParameter`` / ``UninitializedBuffer``. A forward pre-hook reads the missing size from
the first input, materializes them in place (same objects: references taken before stay valid), runs the
regular ``reset_parameters`` (the same draws, in the same order, as the regular module's constructor, so a seeded
lazy module equals the regular one built at the same RNG state), then swaps the instance's class to
``cls_to_become`` (``LazyLinear`` -> ``Linear``). ``load_state_dict`` into a lazy module materializes the
uninitialized tensors to the loaded shapes first. Create optimizers after the first forward (dry run).

Example::

    >>> import functorch_lite as torch
    >>> m = torch.nn.LazyLinear(4)
    >>> _ = m(torch.ones(2, 3))
    >>> m
    Linear(in_features=3, out_features=4, bias=True)
"""
from __future__ import annotations

import itertools

from ..._tensor.tensor import Tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose2d
from .extra import BatchNorm3d, ConvTranspose1d, ConvTranspose3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .layers import Linear
from .normalization import BatchNorm1d, BatchNorm2d, _NormBase, _no_grad

__all__: list = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
                 "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
                 "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
                 "UninitializedParameter", "UninitializedBuffer"]


class LazyModuleMixin:
    """Shape inference at the first call (``torch.nn.modules.lazy.LazyModuleMixin``). Subclasses define
    ``initialize_parameters(*args, **kwargs)`` and ``cls_to_become``; list the mixin first among the bases."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._register_lazy_hook()

    def _register_lazy_hook(self) -> None:
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer still has no shape."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        """As torch's: parameters and persistent buffers, an uninitialized one itself (not detached)."""
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            if t is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = t if keep_vars or is_lazy(t) else t.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs) -> None:
        """Before loading: each uninitialized tensor found in ``state_dict`` takes the loaded tensor's shape."""
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and t is not None and is_lazy(t) and not is_lazy(state_dict[key]):
                with _no_grad():
                    t.materialize(tuple(state_dict[key]._shape))

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook, module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


# ---- LazyLinear ---------------------------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is read from the first input; it then becomes a ``Linear``."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with _no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # (materialized by load_state_dict)
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# ---- convolutions ---------------------------------------------------------------------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    _spatial = 1

    def _lazy_init(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups) + tuple(self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups) + tuple(self.kernel_size)
            with _no_grad():
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        no_batch = self._spatial + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]


def _lazy_conv(name: str, base: type, nd: int):
    """``LazyConv{nd}d`` over ``base``: PyTorch's constructor (no ``in_channels``; bias made lazily)."""
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                                 device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)
    return type(name, (_LazyConvXdMixin, base), {
        "__init__": __init__, "cls_to_become": base, "_spatial": nd, "__module__": __name__,
        "__doc__": f"``{base.__name__}`` whose ``in_channels`` is read from the first input."})


def _lazy_conv_transpose(name: str, base: type, nd: int):
    """``LazyConvTranspose{nd}d`` over ``base``."""
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                                 padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)
    return type(name, (_LazyConvXdMixin, base), {
        "__init__": __init__, "cls_to_become": base, "_spatial": nd, "__module__": __name__,
        "__doc__": f"``{base.__name__}`` whose ``in_channels`` is read from the first input."})


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, 1)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, 2)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose("LazyConvTranspose1d", ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose("LazyConvTranspose2d", ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose("LazyConvTranspose3d", ConvTranspose3d, 3)


# ---- normalization --------------------------------------------------------------------------------------------------
class _LazyNormBase(LazyModuleMixin, _NormBase):
    """Lazy BatchNorm / InstanceNorm: ``num_features`` is the first input's dim 1 (as PyTorch, batched or not)."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        from ... import int64, tensor
        _NormBase.__init__(self, 0, eps, momentum, False, False, device, dtype, bias=False)  # (InstanceNorm's
        self._register_lazy_hook()  # constructor here takes no ``bias``: the shared base directly, then the hook)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with _no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if t is not None and is_lazy(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


def _lazy_norm(name: str, base: type):
    return type(name, (_LazyNormBase, base), {
        "cls_to_become": base, "__module__": __name__,
        "__doc__": f"``{base.__name__}`` whose ``num_features`` is read from the first input."})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d)
