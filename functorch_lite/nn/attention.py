"""``torch.nn.attention``: ``SDPBackend`` and ``sdpa_kernel``, which choose the backends
``F.scaled_dot_product_attention`` may use.

The facade computes attention with one XLA program; what the switches decide is what PyTorch's do on the device:
on a CPU, the fused flash kernel (where PyTorch's would take it: its ``grad_fn`` name and checks) or the math
path, and PyTorch's "No viable backend" error when neither is enabled (the memory-efficient and cuDNN kernels are
GPU kernels); on a GPU any enabled backend runs the XLA program.
"""
from __future__ import annotations

import contextlib
import enum

from ..backends import SDP_ENABLED, set_sdp

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_backend_names = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION", "mem_efficient": "EFFICIENT_ATTENTION",
                  "math": "MATH", "overrideable": "OVERRIDEABLE"}
_PRIORITY = [list(SDPBackend)[1:]]  # (the priority order set_priority records)


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list:
    backends = [getattr(SDPBackend, val) for name, val in _backend_names.items() if SDP_ENABLED[name]]
    if with_priority:
        backends.sort(key=_PRIORITY[0].index)
    return backends


def _sdpa_kernel(backends, set_priority: bool = False) -> None:
    for name, val in _backend_names.items():
        set_sdp(name, getattr(SDPBackend, val) in backends)
    if set_priority:
        order = list(backends)
        _PRIORITY[0] = order + [b for b in _PRIORITY[0] if b not in order]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Inside the block only ``backends`` (one ``SDPBackend`` or a list) are enabled; the previous set after it.
    ``set_priority`` records their order as the priority order (XLA runs one program, so it decides nothing
    here)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    previous_priority = list(_PRIORITY[0])
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, False)
        _PRIORITY[0] = previous_priority
