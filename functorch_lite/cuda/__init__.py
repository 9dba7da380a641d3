"""``functorch_lite.cuda``: availability and device count of JAX's GPU backend."""
from __future__ import annotations

from .. import _device as _dev


def is_available() -> bool:
    return bool(_dev.jax_devices("cuda"))


def device_count() -> int:
    return len(_dev.jax_devices("cuda"))


def current_device() -> int:
    if not is_available():
        raise _dev.DeviceUnavailableError("Torch not compiled with CUDA enabled: JAX has no GPU backend here. "
                                          f"Available devices: {_dev.available()}.")
    return 0


def synchronize(device=None) -> None:
    """Wait for all queued work on the device (JAX dispatches asynchronously)."""
    import jax
    jax.effects_barrier()
