"""``torch.cpu``: the CPU device module (``device_count``, ``synchronize``...) and the deprecated
``torch.cpu.amp.autocast`` spelling."""
from . import amp  # noqa: F401


def is_available() -> bool:
    return True


def synchronize(device=None) -> None:
    """Wait for all queued work on the CPU device(s) (JAX dispatches asynchronously)."""
    from .._device import synchronize as _sync
    _sync("cpu")


def device_count() -> int:
    """1, as torch's: the CPU is one device (JAX's several host devices are ``cpu:i`` placements of it)."""
    return 1


def current_device() -> str:
    return "cpu"


def is_initialized() -> bool:
    return True


def set_device(device) -> None:
    """Nothing to select: there is one CPU device (as torch's, which ignores the argument)."""
