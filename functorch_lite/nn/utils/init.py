"""``torch.nn.utils.skip_init``: build a module without running its parameter initialisation.

The module is constructed on the ``meta`` device (shapes and dtypes only: the init functions compute nothing)
and then given uninitialised storage on the target device, as PyTorch's ``module.to_empty(device=...)`` does
(the facade's "uninitialised" memory holds zeros).

Example::

    >>> import functorch_lite as torch
    >>> m = torch.nn.utils.skip_init(torch.nn.Linear, 5, 1)
    >>> m.weight.shape, m.weight.device
    (torch.Size([1, 5]), device(type='cpu'))
"""
from __future__ import annotations

import inspect

__all__: list = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with parameters and buffers left uninitialised (``module_cls`` must take a
    ``device`` argument)."""
    from ... import empty_like
    from ..modules.module import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs)._apply(lambda t: empty_like(t, device=final_device))
