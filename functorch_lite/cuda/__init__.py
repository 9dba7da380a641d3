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
    """Wait for all queued work on the GPU (JAX dispatches asynchronously); a no-op without one."""
    idx = None if device is None else (device if isinstance(device, int) else (_dev.canonical(device).index or 0))
    _dev.synchronize("cuda", idx)


# ---- memory statistics, from the JAX device's allocator (0 where a backend keeps none, e.g. CPU) ------------
_PEAK_BASE: dict = {}


def _stats(device=None):
    devs = _dev.jax_devices("cuda")
    if not devs:
        return {}
    idx = 0
    if device is not None:
        idx = device if isinstance(device, int) else (_dev.canonical(device).index or 0)
    d = devs[idx]
    return d.memory_stats() or {}, idx


def memory_allocated(device=None) -> int:
    """Bytes currently held by tensors on the GPU (``bytes_in_use``); 0 without a GPU."""
    s = _stats(device)
    return int(s[0].get("bytes_in_use", 0)) if s else 0


def max_memory_allocated(device=None) -> int:
    """Peak bytes since start or the last ``reset_peak_memory_stats``; 0 without a GPU."""
    s = _stats(device)
    if not s:
        return 0
    peak = int(s[0].get("peak_bytes_in_use", 0))
    base = _PEAK_BASE.get(s[1])
    return peak if base is None or peak > base else max(int(s[0].get("bytes_in_use", 0)), 0)


def reset_peak_memory_stats(device=None) -> None:
    """JAX's allocator cannot reset its peak: later peaks below the old one report current usage instead."""
    s = _stats(device)
    if s:
        _PEAK_BASE[s[1]] = int(s[0].get("peak_bytes_in_use", 0))


def memory_reserved(device=None) -> int:
    s = _stats(device)
    return int(s[0].get("bytes_reserved", s[0].get("pool_bytes", 0))) if s else 0


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes; (0, 0) without a GPU."""
    s = _stats(device)
    if not s:
        return 0, 0
    total = int(s[0].get("bytes_limit", 0))
    return total - int(s[0].get("bytes_in_use", 0)), total



def max_memory_reserved(device=None) -> int:
    """Peak bytes the allocator has held (``peak_pool_bytes``, else the current pool); 0 without a GPU."""
    s = _stats(device)
    if not s:
        return 0
    return int(s[0].get("peak_pool_bytes", s[0].get("peak_bytes_reserved", memory_reserved(device))))


def memory_stats(device=None) -> dict:
    """PyTorch's ``memory_stats`` keys filled from the JAX device's allocator statistics; ``{}`` without a GPU
    (as a CPU-only torch returns)."""
    s = _stats(device)
    if not s:
        return {}
    st = s[0]
    return {"allocated_bytes.all.current": int(st.get("bytes_in_use", 0)),
            "allocated_bytes.all.peak": max_memory_allocated(device),
            "reserved_bytes.all.current": memory_reserved(device),
            "reserved_bytes.all.peak": max_memory_reserved(device)}


def empty_cache() -> None:
    """Nothing to release: XLA's GPU allocator keeps its pool for the process (``XLA_PYTHON_CLIENT_PREALLOCATE``
    and ``XLA_PYTHON_CLIENT_ALLOCATOR=platform`` decide how much it takes); a no-op, as on a CPU-only torch."""


# ---- seeding: the facade draws every device's random numbers from one generator (functorch_lite.random) ----------
def manual_seed(seed: int) -> None:
    """Seed the generator GPU tensors draw from; silently ignored without a GPU, as PyTorch's. The facade has one
    generator for all devices: on a GPU machine this reseeds ``default_generator`` (``manual_seed``)."""
    if is_available():
        from ..random import manual_seed as _seed
        _seed(seed)


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def seed() -> None:
    if is_available():
        from ..random import seed as _seed
        _seed()


def seed_all() -> None:
    seed()


def initial_seed() -> int:
    from ..random import initial_seed as _initial
    return _initial()


def get_device_name(device=None) -> str:
    """The JAX device's kind (``"NVIDIA H200"``...)."""
    devs = _dev.jax_devices("cuda")
    if not devs:
        current_device()  # raises PyTorch's "not compiled with CUDA" error
    idx = device if isinstance(device, int) else (0 if device is None else (_dev.canonical(device).index or 0))
    return devs[idx].device_kind


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


# ---- legacy tensor types: torch.cuda.FloatTensor, ... (_tensor/legacy.py) ------------------------------------
from .._tensor.legacy import CUDA_TYPES as _CUDA_TYPES  # noqa: E402

globals().update(_CUDA_TYPES)
