"""``torch.xpu``: JAX has no Intel GPU backend here, so this is torch's build without XPU: ``is_available()`` False,
``device_count()`` 0, the counters 0, seeding ignored, and the calls that need the device raise its
``AssertionError: Torch not compiled with XPU enabled`` (or the other errors that build raises)."""
from __future__ import annotations

import collections

from ._device import DeviceUnavailableError


def _require():
    raise DeviceUnavailableError("Torch not compiled with XPU enabled")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def _raises(*_args, **_kwargs):
    _require()


current_device = synchronize = get_device_name = init = get_rng_state = initial_seed = set_device = _raises
get_device_properties = get_device_capability = mem_get_info = current_stream = default_stream = _raises


def _none(*_args, **_kwargs) -> None:
    return None


empty_cache = seed = seed_all = manual_seed = manual_seed_all = set_rng_state = _none


def _zero(device=None) -> int:
    return 0


memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _zero


def memory_stats(device=None) -> dict:
    return collections.OrderedDict()


def memory_stats_as_nested_dict(device=None) -> dict:
    return {}


def reset_peak_memory_stats(device=None) -> None:
    raise AttributeError("module 'torch._C' has no attribute '_xpu_resetPeakMemoryStats'")


def reset_accumulated_memory_stats(device=None) -> None:
    raise AttributeError("module 'torch._C' has no attribute '_xpu_resetAccumulatedMemoryStats'")


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    return False


def get_arch_list() -> list:
    return []


def get_gencode_flags() -> str:
    return ""


def get_rng_state_all() -> list:
    return []


def set_rng_state_all(new_states) -> None:
    return None


def is_current_stream_capturing() -> bool:
    raise RuntimeError("Tried to instantiate dummy base class _xpu_isCurrentStreamCapturing")


class Stream:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Stream")


class Event:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")


class device:
    """``with torch.xpu.device(i):`` raises, as torch's build without XPU (whatever the index)."""

    def __init__(self, device):
        self.idx = device if isinstance(device, int) else -1
        self.prev_idx = -1

    def __enter__(self):
        raise NotImplementedError("PyTorch was compiled without XPU support")

    def __exit__(self, exc_type, exc_value, traceback):
        return False


class device_of(device):
    def __init__(self, obj):
        super().__init__(-1)
