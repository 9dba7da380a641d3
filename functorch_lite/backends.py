"""``functorch_lite.backends``: ``backends.mps.is_available()`` (JAX has no Metal backend here),
``backends.cuda.matmul.allow_tf32`` / ``fp32_precision`` (JAX's default matmul precision: TF32 or float32, with
``set_float32_matmul_precision``, as PyTorch's: ``allow_tf32 = True`` means "high", ``False`` "highest"), and the
scaled-dot-product-attention backend switches (``backends.cuda.enable_flash_sdp`` ..., ``sdp_kernel``).

The namespaces are modules as PyTorch's: ``backends``, ``backends.cuda``, ``backends.cudnn``, ``backends.mkldnn``,
``backends.mps`` accept any new attribute; ``backends.cuda.matmul`` and ``backends.cudnn.conv`` / ``.rnn`` raise
``AttributeError: Unknown attribute ...`` for a name they do not know. The fp32 precision settings
(``backends.fp32_precision``, ``cuda.matmul.fp32_precision``, ``cudnn.conv.fp32_precision``...) and their legacy
spellings (``allow_tf32``, ``set_float32_matmul_precision``) live in ``_config`` with PyTorch's rules for mixing them.
On a machine without a GPU (a CPU-only torch build) cuDNN and cuFFT are absent as in torch's CPU build."""
from __future__ import annotations

import contextlib
import enum
import sys
import types
import warnings

from . import _config
from ._warn import user_stacklevel as _user_stacklevel


def _has_gpu() -> bool:
    from . import cuda as _cuda
    return _cuda.is_available()


def _check_bool(setter_name, value) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter_name} expects a bool, but got {type(value).__name__}")


def _prop(getter, setter):
    return property(lambda self: getter(), lambda self, value: setter(value))


def _flag(key, setter_name):
    """A recorded bool switch, type-checked as torch's setter."""
    def set_(value):
        _check_bool(setter_name, value)
        _FLAGS[key] = value
    return _prop(lambda: _FLAGS[key], set_)


_FLAGS = {"cudnn_enabled": True, "cudnn_benchmark": False, "cudnn_deterministic": False,
          "cudnn_depthwise_kernel": "auto", "cudnn_benchmark_limit": 10, "mkldnn_enabled": True,
          "mkldnn_deterministic": False, "fp16_reduction": (True, True), "bf16_reduction": (True, True),
          "fp16_accumulation": False, "fp16_bf16_reduction_math_sdp": False}
_FLAGS = _config.switch_table(_FLAGS)  # (compile's guard key holds their values: _config.SWITCH_STATE)


def _module(cls, name, doc):
    m = cls(f"{__name__}.{name}", doc)
    sys.modules[m.__name__] = m
    return m


class _FP32Precision:
    """``backends.cudnn.conv`` / ``.rnn``, ``backends.mkldnn.matmul`` ...: only ``fp32_precision``."""

    def __init__(self, backend, op):
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "op", op)

    def __setattr__(self, name, value):
        if name != "fp32_precision":
            raise AttributeError("Unknown attribute " + name)
        _config.set_fp32_precision(self.backend, self.op, value)

    def __getattr__(self, name):
        if name != "fp32_precision":
            raise AttributeError("Unknown attribute " + name)
        return _config.get_fp32_precision(self.backend, self.op)


class _CuBLAS:
    """``backends.cuda.matmul``: TF32 (``allow_tf32`` / ``fp32_precision``: JAX's default matmul precision) and
    cuBLAS's reduced-precision reduction permissions (recorded: XLA picks its GPU reductions itself)."""

    @staticmethod
    def _parse_reduction(value, attr):
        def ensure(obj, which):
            if isinstance(obj, bool):
                return obj
            raise TypeError(f"{attr} expects a bool for {which}, but got {type(obj)!r}")
        if isinstance(value, bool):
            return value, True
        if isinstance(value, (list, tuple)):
            if not value:
                raise TypeError(f"{attr} expects at least one boolean argument")
            if len(value) > 2:
                raise TypeError(f"{attr} expects at most two boolean arguments")
            return ensure(value[0], "allow_reduced_precision"), (ensure(value[1], "allow_splitk")
                                                                if len(value) == 2 else True)
        raise TypeError(f"{attr} expects a bool or a tuple/list of bools, but got {type(value)!r}")

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _config.get_cublas_allow_tf32()
        if name in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
            return _FLAGS[name[6:10] + "_reduction"][0]
        if name in ("allow_fp16_reduced_precision_reduction_split_k", "allow_bf16_reduced_precision_reduction_split_k"):
            return _FLAGS[name[6:10] + "_reduction"][1]
        if name == "allow_fp16_accumulation":
            return _FLAGS["fp16_accumulation"]
        if name == "fp32_precision":
            return _config.get_fp32_precision("cuda", "matmul")
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            return _config.set_cublas_allow_tf32(value)
        if name in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
            _FLAGS[name[6:10] + "_reduction"] = self._parse_reduction(value, name)
            return None
        if name == "allow_fp16_accumulation":
            _check_bool("set_allow_fp16_accumulation_cublas", value)
            _FLAGS["fp16_accumulation"] = value
            return None
        if name == "fp32_precision":
            return _config.set_fp32_precision("cuda", "matmul", value)
        raise AttributeError("Unknown attribute " + name)


class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


class _BlasBackend(enum.Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


_LINALG = {"default": _LinalgBackend.Default, "cusolver": _LinalgBackend.Cusolver, "magma": _LinalgBackend.Magma}
_BLAS = {"cublas": _BlasBackend.Cublas, "cublaslt": _BlasBackend.Cublaslt, "hipblaslt": _BlasBackend.Cublaslt,
         "ck": _BlasBackend.Ck, "default": _BlasBackend.Cublas}
_PREFERRED = {"linalg": _LinalgBackend.Default, "blas": _BlasBackend.Cublas}


def _backend_value(backend, names: dict, cls):
    """A preferred-library argument (a name from ``names`` or a ``cls`` member) as its member, torch's errors."""
    if isinstance(backend, str):
        if backend not in names:
            raise RuntimeError(f"Unknown input value. Choose from: {', '.join(names)}.")
        return names[backend]
    if not isinstance(backend, cls):
        raise RuntimeError("Unknown input value type.")
    return backend


def preferred_linalg_library(backend=None):
    """Recorded (XLA picks its GPU solvers). As torch's CPU build, naming cuSOLVER or MAGMA without a GPU records
    it and raises."""
    if backend is None:
        return _PREFERRED["linalg"]
    backend = _backend_value(backend, _LINALG, _LinalgBackend)
    _PREFERRED["linalg"] = backend
    if backend is not _LinalgBackend.Default and not _has_gpu():
        name = "cuSOLVER" if backend is _LinalgBackend.Cusolver else "MAGMA"
        raise RuntimeError(f"Cannot set preferred backend to {name} if PyTorch has not been compiled with {name}.")
    return backend


def preferred_blas_library(backend=None):
    """Recorded (XLA picks its GPU GEMM library)."""
    if backend is None:
        return _PREFERRED["blas"]
    backend = _backend_value(backend, _BLAS, _BlasBackend)
    if backend is _BlasBackend.Cublaslt and not _has_gpu():
        raise RuntimeError("Cannot set preferred backend to cuBLASLt if PyTorch has not been compiled with cuBLASLt.")
    _PREFERRED["blas"] = backend
    return backend


class _cuFFTPlanCache:
    """One device's cuFFT plan cache: XLA keeps its own FFT plans, so ``size`` is 0 and ``max_size`` recorded."""

    def __init__(self, device_index):
        self.device_index = device_index
        self._max_size = 4096

    @property
    def size(self) -> int:
        return 0

    @size.setter
    def size(self, value):
        raise RuntimeError(".size is a read-only property showing the number of plans currently in the cache. To "
                           "change the cache capacity, set cufft_plan_cache.max_size.")

    @property
    def max_size(self) -> int:
        return self._max_size

    @max_size.setter
    def max_size(self, value):
        self._max_size = int(value)

    def clear(self) -> None:
        """Nothing held here to clear (XLA's plans live with its compiled programs)."""


class _cuFFTPlanCacheManager:
    """``backends.cuda.cufft_plan_cache``: ``[i]`` is device i's cache; used directly, the current device's (torch's
    ``AssertionError`` without a GPU)."""

    def __init__(self):
        object.__setattr__(self, "caches", [])

    def __getitem__(self, device):
        from . import cuda as _cuda
        index = _cuda._device_index(device)
        if index < 0 or index >= _cuda.device_count():
            raise RuntimeError(f"cufft_plan_cache: expected 0 <= device index < {_cuda.device_count()}, but got "
                               f"device with index {index}")
        if not self.caches:
            self.caches.extend(_cuFFTPlanCache(i) for i in range(_cuda.device_count()))
        return self.caches[index]

    def __getattr__(self, name):
        from . import cuda as _cuda
        return getattr(self[_cuda.current_device()], name)

    def __setattr__(self, name, value):
        from . import cuda as _cuda
        return setattr(self[_cuda.current_device()], name, value)


def _cuda_is_built() -> bool:
    """Whether this JAX install has a CUDA (or ROCm) backend, whether or not a GPU is present: the GPU's devices, or
    an installed jax GPU plugin (``jax_cuda12_plugin``...). False on a CPU-only install, as torch's CPU build."""
    if _has_gpu():
        return True
    if _BUILT[0] is None:
        import importlib.metadata
        import importlib.util
        names = [ep.name for ep in importlib.metadata.entry_points(group="jax_plugins")]
        _BUILT[0] = any("cuda" in n or "rocm" in n for n in names) or any(
            importlib.util.find_spec(m) is not None for m in ("jax_cuda12_plugin", "jax_cuda13_plugin",
                                                             "jax_rocm60_plugin", "jax_rocm7_plugin"))
    return _BUILT[0]


_BUILT: list = [None]


# scaled_dot_product_attention's backend switches (PyTorch's global flags, for every device):
# ``nn.attention.sdpa_kernel`` sets them; F.scaled_dot_product_attention reads them (ops/attention.py)
SDP_ENABLED = {"cudnn": True, "flash": True, "mem_efficient": True, "math": True, "overrideable": True}
SDP_KEY = [tuple(SDP_ENABLED.values())]  # (the switches as one value: part of compile's guard key)


def set_sdp(name: str, enabled: bool) -> None:
    SDP_ENABLED[name] = bool(enabled)
    SDP_KEY[0] = tuple(SDP_ENABLED.values())


def _sdp_switch(name):
    def enable(enabled: bool) -> None:
        set_sdp(name, enabled)

    def is_enabled() -> bool:
        return SDP_ENABLED[name]
    return enable, is_enabled


def _sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """``torch.backends.cuda.sdp_kernel`` (deprecated): ``nn.attention.sdpa_kernel`` over the enabled backends. It
    warns when called, as PyTorch's, not when entered."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=_user_stacklevel())
    return _sdp_kernel_context(enable_flash, enable_math, enable_mem_efficient, enable_cudnn)


@contextlib.contextmanager
def _sdp_kernel_context(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    from .nn.attention import SDPBackend, sdpa_kernel
    chosen = [b for on, b in ((enable_flash, SDPBackend.FLASH_ATTENTION),
                              (enable_mem_efficient, SDPBackend.EFFICIENT_ATTENTION), (enable_math, SDPBackend.MATH),
                              (enable_cudnn, SDPBackend.CUDNN_ATTENTION)) if on]
    with sdpa_kernel(chosen) as context:
        yield context




# ---- the namespaces ------------------------------------------------------------------------------------------------
class _CudaModule(types.ModuleType):
    pass


cuda = _module(_CudaModule, "cuda", "torch.backends.cuda: cuBLAS / cuFFT / SDPA switches.")
cuda.matmul = object.__new__(_CuBLAS)
cuda.is_built = _cuda_is_built
cuda.sdp_kernel = _sdp_kernel
cuda.cufft_plan_cache = _cuFFTPlanCacheManager()
cuda.preferred_linalg_library = preferred_linalg_library
cuda.preferred_blas_library = preferred_blas_library
cuda.is_flash_attention_available = _has_gpu
for _name in ("flash", "mem_efficient", "math", "cudnn"):
    _enable, _enabled = _sdp_switch(_name)
    setattr(cuda, f"enable_{_name}_sdp", _enable)
    setattr(cuda, f"{_name}_sdp_enabled", _enabled)


def _allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    _check_bool("_set_math_sdp_allow_fp16_bf16_reduction", enabled)
    _FLAGS["fp16_bf16_reduction_math_sdp"] = enabled


cuda.allow_fp16_bf16_reduction_math_sdp = _allow_fp16_bf16_reduction_math_sdp
cuda.fp16_bf16_reduction_math_sdp_allowed = lambda: _FLAGS["fp16_bf16_reduction_math_sdp"]


def _cudnn_version():
    """cuDNN's version as torch reports it (e.g. 90300), where JAX's GPU backend carries one; None without a GPU."""
    if not _has_gpu():
        return None
    try:
        from jax._src.lib import cuda_versions
        return int(cuda_versions.cudnn_get_version())
    except Exception:  # noqa: BLE001  (a JAX without the query: unknown)
        return None


class _CudnnModule(types.ModuleType):
    enabled = _flag("cudnn_enabled", "set_enabled_cudnn")
    benchmark = _flag("cudnn_benchmark", "set_benchmark_cudnn")
    deterministic = _flag("cudnn_deterministic", "set_deterministic_cudnn")
    allow_tf32 = _prop(_config.get_cudnn_allow_tf32, _config.set_cudnn_allow_tf32)
    fp32_precision = _prop(lambda: _config.get_fp32_precision("cuda", "all"),
                           lambda v: _config.set_fp32_precision("cuda", "all", v))
    depthwise_kernel = _prop(lambda: _FLAGS["cudnn_depthwise_kernel"],
                             lambda v: _FLAGS.__setitem__("cudnn_depthwise_kernel", v))

    @property
    def benchmark_limit(self):
        return _FLAGS["cudnn_benchmark_limit"] if _has_gpu() else _FLAGS.get("cudnn_benchmark_limit_cpu")

    @benchmark_limit.setter
    def benchmark_limit(self, value):
        if not _has_gpu():  # (a plain attribute, None until set, in torch's CPU build)
            _FLAGS["cudnn_benchmark_limit_cpu"] = value
        else:
            _FLAGS["cudnn_benchmark_limit"] = int(value)


cudnn = _module(_CudnnModule, "cudnn", "torch.backends.cudnn: recorded switches (XLA picks its GPU convolutions; "
                                       "cuDNN is there only with a GPU).")
cudnn.conv = _FP32Precision("cuda", "conv")
cudnn.rnn = _FP32Precision("cuda", "rnn")
cudnn.is_available = _has_gpu
cudnn.version = _cudnn_version
cudnn.is_acceptable = lambda tensor: bool(_FLAGS["cudnn_enabled"] and tensor.device.type == "cuda" and _has_gpu()
                                          and str(tensor.dtype) in ("torch.float16", "torch.float32", "torch.float64"))


def _cudnn_set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None,
                     _fp32_precision="none", _depthwise_kernel=None):
    orig = (cudnn.enabled, cudnn.benchmark, cudnn.benchmark_limit if _has_gpu() else None, cudnn.deterministic,
            _legacy_cudnn_tf32(), _config.get_fp32_precision("cuda", "all"), cudnn.depthwise_kernel)
    if _enabled is not None:
        cudnn.enabled = _enabled
    if _benchmark is not None:
        cudnn.benchmark = _benchmark
    if _benchmark_limit is not None and _has_gpu():
        cudnn.benchmark_limit = _benchmark_limit
    if _deterministic is not None:
        cudnn.deterministic = _deterministic
    if _allow_tf32 is not None:
        _config.set_cudnn_allow_tf32(_allow_tf32)
    if _fp32_precision is not None:
        _config.set_fp32_precision("cuda", "all", _fp32_precision)
    if _depthwise_kernel is not None:
        cudnn.depthwise_kernel = _depthwise_kernel
    return orig


def _legacy_cudnn_tf32():
    return _config._SWITCHES["cudnn_allow_tf32"]  # (torch reads the legacy flag here, unchecked)


@contextlib.contextmanager
def _cudnn_flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
                 fp32_precision="none", depthwise_kernel="auto"):
    """``with torch.backends.cudnn.flags(enabled=..., ...):`` these switches inside the block (each argument's
    default included, as PyTorch's), the previous ones after."""
    orig = _cudnn_set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision,
                            depthwise_kernel)
    try:
        yield
    finally:
        _cudnn_set_flags(*orig)


cudnn.flags = _cudnn_flags
cudnn.set_flags = _cudnn_set_flags


class _MkldnnModule(types.ModuleType):
    enabled = _flag("mkldnn_enabled", "set_enabled_mkldnn")
    deterministic = _flag("mkldnn_deterministic", "set_deterministic_mkldnn")
    # (torch reads mkldnn's "all" but writes the generic one, as here)
    fp32_precision = _prop(lambda: _config.get_fp32_precision("mkldnn", "all"),
                           lambda v: _config.set_fp32_precision("generic", "all", v))


mkldnn = _module(_MkldnnModule, "mkldnn", "torch.backends.mkldnn: recorded switches (XLA compiles CPU programs).")
mkldnn.matmul = _FP32Precision("mkldnn", "matmul")
mkldnn.conv = _FP32Precision("mkldnn", "conv")
mkldnn.rnn = _FP32Precision("mkldnn", "rnn")
mkldnn.is_available = lambda: True  # (as torch's CPU wheel reports)

mkl = _module(types.ModuleType, "mkl", "torch.backends.mkl")
mkl.is_available = lambda: True
openmp = _module(types.ModuleType, "openmp", "torch.backends.openmp")
openmp.is_available = lambda: True

mps = _module(types.ModuleType, "mps", "torch.backends.mps: JAX has no Metal backend here.")
mps.is_available = lambda: False
mps.is_built = lambda: False


def _mps_macos(*args, **kwargs):
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


mps.is_macos13_or_newer = _mps_macos
mps.is_macos_or_newer = _mps_macos


def _cpu_capability() -> str:
    """The widest SIMD level of this CPU, in torch's names ("AVX512", "AVX2", "DEFAULT")."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return "DEFAULT"
    return "AVX512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "DEFAULT"


cpu = _module(types.ModuleType, "cpu", "torch.backends.cpu")
cpu.get_cpu_capability = _cpu_capability


def _opt_einsum_available() -> bool:
    import importlib.util
    return importlib.util.find_spec("opt_einsum") is not None


# backends.opt_einsum: recorded; jnp.einsum plans its contraction path with opt_einsum itself (the path changes only
# the rounding order). Torch's module takes any value here unchecked (its properties end up as module globals).
opt_einsum = _module(types.ModuleType, "opt_einsum", "torch.backends.opt_einsum")
opt_einsum.is_available = _opt_einsum_available
opt_einsum.enabled = True
opt_einsum.strategy = "auto"


class _BackendsModule(types.ModuleType):
    fp32_precision = _prop(lambda: _config.get_fp32_precision("generic", "all"),
                           lambda v: _config.set_fp32_precision("generic", "all", v))


@contextlib.contextmanager
def flags(fp32_precision="none"):
    """``with torch.backends.flags(fp32_precision=...):`` the generic fp32 precision inside the block."""
    orig = _config.get_fp32_precision("generic", "all")
    if fp32_precision is not None:
        _config.set_fp32_precision("generic", "all", fp32_precision)
    try:
        yield
    finally:
        _config.set_fp32_precision("generic", "all", orig)


sys.modules[__name__].__class__ = _BackendsModule
