"""``torch.cuda.memory``: the GPU allocator's statistics, from the JAX device's allocator (``memory_stats()`` of the
jax device: ``bytes_in_use``, ``peak_bytes_in_use``, ``bytes_limit``...).

Without a GPU (JAX has no GPU backend: what a CPU-only torch build is) each function does what torch's CPU build
does: the counters are 0 and ``memory_stats`` is empty, the calls that need the CUDA runtime raise its
``AssertionError: Torch not compiled with CUDA enabled``, and those that reach a missing CUDA binding raise its
``AttributeError: module 'torch._C' has no attribute ...``.
"""
from __future__ import annotations

import collections
import warnings

from .. import _device as _dev
from .._warn import user_stacklevel as _user_stacklevel
# (cuda/__init__.py imports this module after defining these)
from . import _device_index, _require, is_available

__all__ = ["caching_allocator_alloc", "caching_allocator_delete", "empty_cache", "get_allocator_backend",
           "list_gpu_processes", "max_memory_allocated", "max_memory_cached", "max_memory_reserved", "mem_get_info",
           "memory_allocated", "memory_cached", "memory_reserved", "memory_snapshot", "memory_stats",
           "memory_stats_as_nested_dict", "memory_summary", "reset_accumulated_memory_stats",
           "reset_max_memory_allocated", "reset_max_memory_cached", "reset_peak_memory_stats",
           "set_per_process_memory_fraction"]


def _no_binding(name: str):
    """The error torch's CPU build raises where a function reaches a CUDA binding it was built without."""
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def _unsupported(what: str, why: str):
    return RuntimeError(f"torch.cuda.{what} is not supported by functorch_lite: {why}")


_PEAK_BASE: dict = {}


def _stats(device=None):
    devs = _dev.jax_devices("cuda")
    if not devs:
        return {}
    idx = _device_index(device, optional=True)
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
    """JAX's allocator cannot reset its peak: later peaks below the old one report current usage instead.
    Without a GPU: torch's CPU-build ``AttributeError``."""
    s = _stats(device)
    if not s:
        raise _no_binding("_cuda_resetPeakMemoryStats")
    _PEAK_BASE[s[1]] = int(s[0].get("peak_bytes_in_use", 0))


def reset_accumulated_memory_stats(device=None) -> None:
    """Nothing to reset: the JAX allocator's statistics here are current and peak values only (no accumulated
    allocation counts). Without a GPU: torch's CPU-build ``AttributeError``."""
    if not _stats(device):
        raise _no_binding("_cuda_resetAccumulatedMemoryStats")


def memory_reserved(device=None) -> int:
    s = _stats(device)
    return int(s[0].get("bytes_reserved", s[0].get("pool_bytes", 0))) if s else 0


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of the GPU, from its allocator's limit. Without a GPU: torch's CPU-build
    ``AssertionError: Torch not compiled with CUDA enabled``."""
    s = _stats(device)
    if not s:
        _require()
    total = int(s[0].get("bytes_limit", 0))
    return total - int(s[0].get("bytes_in_use", 0)), total


def max_memory_reserved(device=None) -> int:
    """Peak bytes the allocator has held (``peak_pool_bytes``, else the current pool); 0 without a GPU."""
    s = _stats(device)
    if not s:
        return 0
    return int(s[0].get("peak_pool_bytes", s[0].get("peak_bytes_reserved", memory_reserved(device))))


def memory_stats(device=None) -> dict:
    """PyTorch's ``memory_stats`` keys filled from the JAX device's allocator statistics; an empty ``OrderedDict``
    without a GPU (as a CPU-only torch returns)."""
    s = _stats(device)
    if not s:
        return collections.OrderedDict()
    st = s[0]
    return collections.OrderedDict([("allocated_bytes.all.current", int(st.get("bytes_in_use", 0))),
                                    ("allocated_bytes.all.peak", max_memory_allocated(device)),
                                    ("reserved_bytes.all.current", memory_reserved(device)),
                                    ("reserved_bytes.all.peak", max_memory_reserved(device))])


def memory_stats_as_nested_dict(device=None) -> dict:
    """``memory_stats`` with its dotted keys nested (``{"allocated_bytes": {"all": {"current": ...}}}``); ``{}``
    without a GPU."""
    out: dict = {}
    for key, value in memory_stats(device).items():
        node = out
        *path, last = key.split(".")
        for p in path:
            node = node.setdefault(p, {})
        node[last] = value
    return out


def reset_max_memory_allocated(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=_user_stacklevel())
    return reset_peak_memory_stats(device=device)


def reset_max_memory_cached(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=_user_stacklevel())
    return reset_peak_memory_stats(device=device)


def memory_cached(device=None) -> int:
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=_user_stacklevel())
    return memory_reserved(device=device)


def max_memory_cached(device=None) -> int:
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=_user_stacklevel())
    return max_memory_reserved(device=device)


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A table of ``memory_stats``: current and peak bytes allocated and reserved (the JAX allocator keeps no
    per-pool or per-size breakdown). Without a GPU ``memory_stats`` is empty and this raises the ``KeyError``
    PyTorch's CPU build raises."""
    stats = memory_stats(device)

    def mb(n):
        return f"{n / (1024 * 1024):10.1f} MiB"
    rows = [("Allocated memory", stats["allocated_bytes.all.current"], stats["allocated_bytes.all.peak"]),
            ("Reserved memory", stats["reserved_bytes.all.current"], stats["reserved_bytes.all.peak"])]
    bar = "|" + "=" * 63 + "|"
    lines = [bar, f"|{'functorch_lite CUDA memory summary, device ID ' + str(_device_index(device, True)):^63}|",
             "|" + "-" * 63 + "|", f"| {'Metric':<25}| {'Cur Usage':>16} | {'Peak Usage':>16} |",
             "|" + "-" * 63 + "|"]
    lines += [f"| {name:<25}| {mb(cur):>16} | {mb(peak):>16} |" for name, cur, peak in rows]
    return "\n".join(lines + [bar]) + "\n"


def memory_snapshot(mempool_id=None) -> list:
    """Without a GPU: torch's CPU-build ``AttributeError``. With one: unsupported (XLA's allocator does not
    expose its segments), a clear ``RuntimeError``."""
    if not is_available():
        raise _no_binding("_cuda_memorySnapshot")
    raise _unsupported("memory_snapshot", "XLA's GPU allocator does not expose its segments and blocks; "
                                          "use torch.cuda.memory_stats() for current and peak bytes")


def empty_cache() -> None:
    """Nothing to release: XLA's GPU allocator keeps its pool for the process (``XLA_PYTHON_CLIENT_PREALLOCATE``
    and ``XLA_PYTHON_CLIENT_ALLOCATOR=platform`` decide how much it takes); a no-op, as on a CPU-only torch."""


def get_allocator_backend() -> str:
    """``"native"``: XLA's own caching (BFC) allocator. Without a GPU: torch's CPU-build ``AttributeError``."""
    if not is_available():
        raise _no_binding("_cuda_getAllocatorBackend")
    return "native"


def set_per_process_memory_fraction(fraction, device=None) -> None:
    """Without a GPU: torch's ``AssertionError``. With one, torch's argument checks, then a clear error: XLA sizes
    its GPU pool once, before the first allocation (set ``XLA_PYTHON_CLIENT_MEM_FRACTION`` before the process
    starts)."""
    _require()
    _device_index(device, optional=True)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    raise _unsupported("set_per_process_memory_fraction", "XLA sizes its GPU memory pool when the backend starts; "
                                                          "set XLA_PYTHON_CLIENT_MEM_FRACTION before the process "
                                                          "starts instead")


def caching_allocator_alloc(size, device=None, stream=None):
    """Without a GPU: torch's ``AssertionError``. With one: unsupported (JAX hands out arrays, not raw device
    pointers)."""
    _require()
    raise _unsupported("caching_allocator_alloc", "JAX's allocator hands out arrays, not raw device pointers")


def caching_allocator_delete(mem_ptr) -> None:
    if not is_available():
        raise _no_binding("_cuda_cudaCachingAllocator_raw_delete")
    raise _unsupported("caching_allocator_delete", "JAX's allocator hands out arrays, not raw device pointers")


# ---- NVML queries (torch reads them through pynvml, as here) --------------------------------------------------
def _nvml_index(device) -> int:
    idx = _device_index(device, optional=True)
    return 0 if idx is None else idx


def list_gpu_processes(device=None) -> str:
    """The processes using the GPU and their memory, from NVML (``pynvml``), as torch's."""
    try:
        import pynvml  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded:
        return "cuda driver can't be loaded, is cuda enabled?"
    device = _nvml_index(device)
    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(pynvml.nvmlDeviceGetHandleByIndex(device))
    lines = [f"GPU:{device}"]
    if len(procs) == 0:
        lines.append("no processes are running")
    for p in procs:
        lines.append(f"process {p.pid:>10d} uses {p.usedGpuMemory / (1024 * 1024):>12.3f} MB GPU memory")
    return "\n".join(lines)


def _nvml_handle(device):
    try:
        import pynvml  # type: ignore[import-not-found]
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.") from e
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded as e:
        raise RuntimeError("cuda driver can't be loaded, is cuda enabled?") from e
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(_nvml_index(device))


def utilization(device=None) -> int:
    """Percent of the last sample period a kernel ran on the GPU (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetUtilizationRates(h).gpu


def memory_usage(device=None) -> int:
    """Percent of the last sample period GPU memory was read or written (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetUtilizationRates(h).memory


def temperature(device=None) -> int:
    """The GPU sensor's temperature in degrees C (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetTemperature(h, 0)


def power_draw(device=None) -> int:
    """The GPU's power draw in milliwatts (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetPowerUsage(h)


def clock_rate(device=None) -> int:
    """The GPU's SM clock in MHz (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetClockInfo(h, 1)
