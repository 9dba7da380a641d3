"""``torch.nn.utils.stateless.functional_call`` (deprecated by PyTorch for ``torch.func.functional_call``, which it
forwards to: the module's named parameters and buffers are rebound to the given tensors for one call).

Example::

    >>> import functorch_lite as torch
    >>> m = torch.nn.Linear(2, 1)
    >>> out = torch.nn.utils.stateless.functional_call(m, {"weight": torch.ones(1, 2)}, (torch.ones(1, 2),))
"""
from __future__ import annotations

import warnings
from typing import Any

from ...func._functional_call import functional_call as _functional_call
from ..._warn import user_stacklevel as _user_stacklevel

__all__: list = ["functional_call"]


def functional_call(module, parameters_and_buffers: dict, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` (qualified names) in place of its own."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=_user_stacklevel())
    if not hasattr(parameters_and_buffers, "keys"):  # (torch's reads the mapping's keys: a tuple of dicts, as
        # torch.func's takes, is its AttributeError here)
        raise AttributeError(f"'{type(parameters_and_buffers).__name__}' object has no attribute 'keys'")
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
