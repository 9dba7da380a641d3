"""``torch.nn.utils.convert_conv{2,3}d_weight_memory_format``: give every (transposed) convolution's weight in a
module tree the requested memory format (``torch.channels_last``...), in place (the same Parameter objects).

The facade's memory format is stride metadata (``stride()``, ``is_contiguous(memory_format=...)`` as PyTorch);
XLA chooses its own layouts, so this changes what those report, not the speed.

Example::

    >>> import functorch_lite as torch
    >>> m = torch.nn.utils.convert_conv2d_weight_memory_format(torch.nn.Conv2d(3, 4, 2), torch.channels_last)
    >>> m.weight.is_contiguous(memory_format=torch.channels_last)
    True
"""
from __future__ import annotations

__all__: list = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        # (PyTorch also calls resize_ with the format, a no-op on the clone's strides)
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Every ``Conv2d`` / ``ConvTranspose2d`` weight under ``module`` in ``memory_format``; returns ``module``."""
    from ..modules import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Every ``Conv3d`` / ``ConvTranspose3d`` weight under ``module`` in ``memory_format``; returns ``module``."""
    from ..modules import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
