"""``torch.utils.hooks``: the handle a hook registration returns, for code that keeps hooks of its own, and
``BackwardHook``, the class behind a module's full backward hooks."""
from __future__ import annotations

import warnings

from .._hooks import RemovableHandle
from ..nn.modules._backward_hook import BackwardHook  # noqa: F401

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not serialized with its tensor (torch's marker attribute)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor) -> None:
    """torch's warning for a tensor whose backward hooks are not all marked unserializable."""
    hooks = getattr(tensor, "_backward_hooks", None)
    for k in hooks or {}:
        hook = hooks[k]
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {repr(hook)} on tensor will not be serialized.  If this is expected, you "
                          "can decorate the function with @torch.utils.hooks.unserializable_hook to suppress this "
                          "warning", stacklevel=2)
