"""``torch.mps``: JAX has no Metal backend here, so this is torch's build without MPS: ``is_available()`` False,
``device_count()`` 0, ``manual_seed`` ignored, and every call that needs the device raises its
``RuntimeError: Cannot execute ...() without MPS backend.``"""
from __future__ import annotations

__all__ = ["Event", "current_allocated_memory", "device_count", "driver_allocated_memory", "empty_cache",
           "get_rng_state", "is_available", "manual_seed", "recommended_max_memory", "seed",
           "set_per_process_memory_fraction", "set_rng_state", "synchronize"]


def _no_mps(what: str):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def synchronize() -> None:
    raise _no_mps("deviceSynchronize")


def manual_seed(seed) -> None:
    """Ignored without an MPS device, as torch's."""


def seed() -> None:
    raise _no_mps("getDefaultGenerator")


def get_rng_state(device="mps"):
    raise _no_mps("getDefaultGenerator")


def set_rng_state(new_state, device="mps") -> None:
    raise _no_mps("getDefaultGenerator")


def empty_cache() -> None:
    raise _no_mps("emptyCache")


def set_per_process_memory_fraction(fraction) -> None:
    raise _no_mps("setMemoryFraction")


def current_allocated_memory() -> int:
    raise _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    raise _no_mps("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    raise _no_mps("getRecommendedMaxMemory")


class Event:
    def __init__(self, enable_timing: bool = False):
        raise _no_mps("acquireEvent")
