"""``functorch_lite.accelerator``: torch 2.6+'s device-generic API (``torch.accelerator``), over the facade's one
accelerator kind, CUDA (JAX's GPU backend: ``functorch_lite.cuda``). Scripts pick their device with it::

    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

Without a GPU it answers as torch's CPU build does: not available, no current accelerator, 0 devices, and
every call that needs one raises ``RuntimeError: Cannot access accelerator device when none is available.``"""
from __future__ import annotations

from . import _device as _dev
from . import cuda as _cuda

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream", "device_count",
           "device_index", "empty_cache", "is_available", "max_memory_allocated", "max_memory_reserved",
           "memory_allocated", "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "set_stream", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device('cuda')`` where JAX has a GPU, else None (``check_available`` changes nothing here: the one
    accelerator kind is the available one)."""
    return _dev.device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    return _cuda.device_count()


def _require() -> None:
    if not _cuda.is_available():
        raise RuntimeError(_NONE)


def _index(device) -> int | None:
    if device is None:
        return None
    if isinstance(device, int):
        return device
    d = _dev.device(device) if isinstance(device, str) else device
    if d.type != "cuda":
        raise ValueError(f"{d.type} doesn't match the current accelerator cuda.")
    return d.index


def current_device_index() -> int:
    _require()
    return _cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device, /) -> None:
    _require()
    idx = _index(device)
    if idx is not None:
        _cuda.set_device(idx)


set_device_idx = set_device_index


class device_index:
    """``with torch.accelerator.device_index(i):`` the current device is ``i`` inside (None: unchanged)."""

    def __init__(self, device, /) -> None:
        self.idx = _index(device)
        self.prev = None

    def __enter__(self) -> None:
        if self.idx is not None:
            _require()
            self.prev = _cuda.current_device()
            _cuda.set_device(self.idx)

    def __exit__(self, *exc) -> None:
        if self.prev is not None:
            _cuda.set_device(self.prev)


def current_stream(device=None, /):
    _require()
    return _cuda.current_stream(_index(device))


def set_stream(stream) -> None:
    _require()
    _cuda.set_stream(stream)


def synchronize(device=None, /) -> None:
    _require()
    _cuda.synchronize(_index(device))


def _mem(name):
    def f(device_index=None, /):
        _require()
        return getattr(_cuda, name)(_index(device_index))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.accelerator.{name}``: ``cuda.{name}`` of the current (or given) device."
    return f


memory_allocated = _mem("memory_allocated")
max_memory_allocated = _mem("max_memory_allocated")
memory_reserved = _mem("memory_reserved")
max_memory_reserved = _mem("max_memory_reserved")
memory_stats = _mem("memory_stats")
reset_peak_memory_stats = _mem("reset_peak_memory_stats")


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    """JAX's allocator keeps no accumulated counters (allocation counts, freed bytes): nothing to reset."""
    _require()
    _index(device_index)


def empty_cache() -> None:
    _require()
    _cuda.empty_cache()
