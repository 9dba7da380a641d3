"""``torch.__future__``: the two switches for how ``nn.Module`` conversions (``.to()``, ``.double()``, ``.cpu()``,
``._apply(fn)``...) and ``load_state_dict`` change a module's parameters. Both are off by default, as in PyTorch:
then a conversion sets each parameter's ``.data`` (and its ``.grad``'s ``.data``), keeping the objects.

>>> import functorch_lite as torch
>>> torch.__future__.get_overwrite_module_params_on_conversion()
False
"""

__all__ = ["set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether converting an ``nn.Module`` assigns new Parameters (and new ``.grad`` tensors) instead of changing
    the existing ones in place through ``.data``."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """See :func:`set_overwrite_module_params_on_conversion` (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether converting an ``nn.Module`` (and ``load_state_dict``) uses ``torch.utils.swap_tensors`` to change
    the existing parameters (and their ``.grad``) in place: each object stays, with the new contents. It takes
    precedence over :func:`set_overwrite_module_params_on_conversion`."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """See :func:`set_swap_module_params_on_conversion` (default False)."""
    return _swap_module_params_on_conversion
