"""``functorch_lite.cuda``: availability and device count of JAX's GPU backend."""
from __future__ import annotations

from .. import _device as _dev
from .._check import OutOfMemoryError  # noqa: F401  (torch.cuda.OutOfMemoryError is torch.OutOfMemoryError)


def is_available() -> bool:
    return bool(_dev.jax_devices("cuda"))


def device_count() -> int:
    return len(_dev.jax_devices("cuda"))


def _require() -> None:
    if not is_available():
        raise _dev.DeviceUnavailableError("Torch not compiled with CUDA enabled: JAX has no GPU backend here. "
                                          f"Available devices: {_dev.available()}.")


def current_device() -> int:
    """The current CUDA device's index (``set_device``, ``with cuda.device(i)``): where a bare "cuda" goes."""
    _require()
    return _dev.CURRENT_CUDA[0]


def _device_index(device, optional: bool = False, allow_cpu: bool = False):
    """PyTorch's ``torch.cuda._utils._get_device_index``: an int as it is, a "cuda:i" string or device its index, a
    CPU device -1 (``allow_cpu``), a bare "cuda" or None the current device (``optional``; None without a GPU)."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _dev.device(device)
    if isinstance(device, _dev.device):
        if allow_cpu:
            if device.type not in ("cuda", "cpu"):
                raise ValueError(f"Expected a cuda or cpu device, but got: {device}")
        elif device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.type == "cpu":
            return -1
        if device.index is not None:
            return device.index
    elif isinstance(device, globals()["device"]):
        return device.idx
    if optional:
        return _dev.CURRENT_CUDA[0] if is_available() else None
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")


def set_device(device) -> None:
    """Make ``device`` the current CUDA device: a bare "cuda" (``.to('cuda')``, ``device='cuda'``, ``.cuda()``) goes
    there from now on. A negative index is ignored, as PyTorch's."""
    idx = _device_index(device)
    if idx < 0:
        return
    if not is_available():
        raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")  # (torch's CPU build)
    if idx >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    _dev.CURRENT_CUDA[0] = idx


def _exchange(idx):
    """Make ``idx`` current; the previous index (-1 for a negative or None ``idx``: nothing changes)."""
    if idx is None or idx < 0:
        return -1
    if not is_available():
        raise RuntimeError("PyTorch was compiled without CUDA support")
    prev = _dev.CURRENT_CUDA[0]
    set_device(idx)
    return prev


class device:
    """``with torch.cuda.device(i):`` makes CUDA device ``i`` current inside the block (a negative index: no
    change)."""

    def __init__(self, device):
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange(self.idx)

    def __exit__(self, exc_type, exc_value, traceback):
        self.idx = _exchange(self.prev_idx)
        return False


class device_of(device):
    """``with torch.cuda.device_of(t):``: the device ``t`` lives on, when it is a CUDA tensor (else no change)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def is_initialized() -> bool:
    """Whether the GPU runtime is up: JAX starts its GPU backend when asked for its devices, so where there is one."""
    return is_available()


def init() -> None:
    _require()


def ipc_collect() -> None:
    """Nothing to collect: no CUDA IPC handles are made (one process drives every device)."""
    _require()


class _CudaDeviceProperties:
    """``torch.cuda.get_device_properties``: the GPU's name, compute capability, memory and SM count, from the JAX
    device (``device_kind``, ``compute_capability``, ``core_count``, its allocator's ``bytes_limit``)."""

    def __init__(self, jdev):
        self.name = jdev.device_kind
        cc = str(getattr(jdev, "compute_capability", "0.0")).split(".")
        self.major, self.minor = int(cc[0]), int(cc[1]) if len(cc) > 1 else 0
        self.multi_processor_count = int(getattr(jdev, "core_count", 0) or 0)
        self.total_memory = int((jdev.memory_stats() or {}).get("bytes_limit", 0))
        self.is_integrated = 0
        self.is_multi_gpu_board = 0

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    _require()
    idx = _device_index(device, optional=True)
    devs = _dev.jax_devices("cuda")
    if idx < 0 or idx >= len(devs):
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(devs[idx])


def get_device_capability(device=None) -> tuple:
    p = get_device_properties(device)
    return p.major, p.minor


def is_tf32_supported() -> bool:
    return is_available() and get_device_capability()[0] >= 8


def synchronize(device=None) -> None:
    """Wait for all queued work on the GPU (JAX dispatches asynchronously). Without a GPU: torch's CPU-build
    ``AssertionError: Torch not compiled with CUDA enabled``."""
    _require()
    idx = None if device is None else (device if isinstance(device, int) else (_dev.canonical(device).index or 0))
    _dev.synchronize("cuda", idx)


# ---- memory statistics and allocator (memory.py), NVML queries, CUDA graphs (graphs.py), nvtx -------------------
from . import memory, nvtx  # noqa: E402,F401
from .memory import (caching_allocator_alloc, caching_allocator_delete, clock_rate, empty_cache,  # noqa: E402,F401
                     get_allocator_backend, list_gpu_processes, max_memory_allocated, max_memory_cached,
                     max_memory_reserved, mem_get_info, memory_allocated, memory_cached, memory_reserved,
                     memory_snapshot, memory_stats, memory_stats_as_nested_dict, memory_summary, memory_usage,
                     power_draw, reset_accumulated_memory_stats, reset_max_memory_allocated, reset_max_memory_cached,
                     reset_peak_memory_stats, set_per_process_memory_fraction, temperature, utilization)
from .graphs import (CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing,  # noqa: E402,F401
                     make_graphed_callables)
from . import graphs  # noqa: E402,F401


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
    _require()
    from ..random import initial_seed as _initial
    return _initial()


def get_rng_state(device="cuda"):
    """The generator's state (the facade's one generator, which GPU tensors draw from too)."""
    _require()
    from ..random import get_rng_state as _get
    return _get()


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="cuda") -> None:
    """Restore ``get_rng_state``'s state; ignored without a GPU (PyTorch queues it until CUDA starts, which on a
    CPU-only build is never)."""
    if is_available():
        from ..random import set_rng_state as _set
        _set(new_state)


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def get_device_name(device=None) -> str:
    """The JAX device's kind (``"NVIDIA H200"``...)."""
    return get_device_properties(device).name


def get_arch_list() -> list:
    """The GPUs' architectures (``sm_90``...), from the JAX devices' compute capability; ``[]`` without a GPU (as
    torch's CPU build)."""
    if not is_available():
        return []
    return sorted({"sm_%d%d" % get_device_capability(i) for i in range(device_count())})


def get_gencode_flags() -> str:
    """``-gencode`` flags for ``get_arch_list``'s architectures; ``''`` without a GPU."""
    return " ".join(f"-gencode compute={a.replace('sm', 'compute')},code={a}" for a in get_arch_list())


_SYNC_DEBUG = [0]


def set_sync_debug_mode(debug_mode) -> None:
    """0 / "default" only: JAX does not report the host-device synchronizations that "warn" (1) and "error" (2)
    would flag, so those raise a clear error. Without a GPU: torch's ``AssertionError``."""
    _require()
    if isinstance(debug_mode, str):
        if debug_mode not in ("default", "warn", "error"):
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = ("default", "warn", "error").index(debug_mode)
    if debug_mode != 0:
        raise RuntimeError(f"torch.cuda.set_sync_debug_mode({debug_mode}) is not supported by functorch_lite: JAX "
                           "does not report the host-device synchronizations it would flag")
    _SYNC_DEBUG[0] = 0


def get_sync_debug_mode() -> int:
    _require()
    return _SYNC_DEBUG[0]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


# ---- legacy tensor types: torch.cuda.FloatTensor, ... (_tensor/legacy.py) ------------------------------------
from .._tensor.legacy import CUDA_TYPES as _CUDA_TYPES  # noqa: E402

globals().update(_CUDA_TYPES)


# ---- events and streams (streams.py) ------------------------------------------------------------------------------
from .streams import Event, Stream, StreamContext, current_stream, default_stream, set_stream, stream  # noqa: E402,F401
