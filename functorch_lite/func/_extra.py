"""``replace_all_batch_norm_modules_``, ``functionalize`` and ``debug_unwrap`` (``torch.func``'s utilities).

>>> torch.func.replace_all_batch_norm_modules_(net)     # then vmap(net) over a training-mode BatchNorm works
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import jax

from .._tensor.tensor import Tensor
from . import _core as C


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """``torch.func.replace_all_batch_norm_modules_``: in place, every BatchNorm in ``root`` stops tracking
    running statistics (``running_mean``/``running_var``/``num_batches_tracked`` None, ``track_running_stats``
    False), so it normalises with batch statistics under ``vmap``. Returns ``root``."""
    from ..nn.modules.normalization import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


_REMOVE_ERROR = ("functionalize(f, remove='mutations'): received invalid argument for remove={}. Valid options "
                 "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, "
                 "and replaced with their out-of-place equivalents.\n     remove='mutations_and_views': In "
                 "addition to the above, all aliasing operators {{view}} will be replaced with their non-aliasing "
                 "counterparts, {{view}}_copy.\n")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``torch.func.functionalize``: ``func`` with its mutations removed. Under JAX every program is already
    functional (an in-place op writes a new array into the tensor's storage), so the result is ``func`` itself,
    wrapped: same results, and mutations of the inputs still reach the inputs, as torch's applies them back."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_REMOVE_ERROR.format(remove))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """``torch.func.debug_unwrap``: inside ``vmap``, the batched tensor under the per-example one (batch
    dimension included, where the vmap holds it); inside ``grad``/``jvp``, the primal values. Outside a
    transform, ``tensor`` itself. ``recurse=False``: one level only."""
    if not isinstance(tensor, Tensor):
        raise TypeError("is_functorch_wrapped_tensor(): incompatible function arguments. The following argument "
                        f"types are supported:\n    1. (arg0: torch.Tensor) -> bool\n\nInvoked with: {tensor!r}")
    a = tensor._array
    if not isinstance(a, jax.core.Tracer):
        return tensor
    while True:
        if isinstance(getattr(a, "batch_dim", None), int) and hasattr(a, "val"):
            a = a.val
        elif hasattr(a, "primal"):
            a = a.primal
        else:
            break
        if not recurse or not isinstance(a, jax.core.Tracer):
            break
    if a is tensor._array:
        return tensor
    return C.wrap_array(a, tensor.dtype, tensor.device)
