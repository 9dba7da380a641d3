"""``torch.cpu``: the deprecated ``torch.cpu.amp.autocast`` spelling."""
from . import amp  # noqa: F401


def is_available() -> bool:
    return True


def synchronize(device=None) -> None:
    """Wait for all queued work on the CPU device(s) (JAX dispatches asynchronously)."""
    from .._device import synchronize as _sync
    _sync("cpu")
