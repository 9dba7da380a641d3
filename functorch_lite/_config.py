"""The one place for flags and environment reads.

functorch_lite enables JAX's x64 mode once, at import: PyTorch needs real int64 and float64
tensors, and JAX only has them in x64 mode. Every creation and every op then passes an explicit
dtype, so JAX's x64 defaults (float64 literals) never leak into results.

Environment variables read here (and nowhere else):
- ``FUNCTORCH_LITE_JIT_CACHE_SIZE``: bound on cached jitted kernels per op (default 256).
- ``FUNCTORCH_LITE_OPTIM_ROUNDING``: "fast" (default) or "exact" (see OPTIM_ROUNDING).
- ``FUNCTORCH_LITE_DEBUG``: when "1", dispatch checks that every op result's jax dtype equals the
  facade dtype it was given and that its array sits on the facade device's jax device (costs time; off by
  default).
"""
from __future__ import annotations

import os

import jax

jax.config.update("jax_enable_x64", True)

JIT_CACHE_SIZE: int = int(os.environ.get("FUNCTORCH_LITE_JIT_CACHE_SIZE", "256"))
DEBUG: bool = os.environ.get("FUNCTORCH_LITE_DEBUG", "0") == "1"
# Optimizer arithmetic: "fast" computes each update in the parameter's dtype (one fused XLA kernel, as
# fast as optax; within a few ulps of PyTorch per step); "exact" reproduces PyTorch's CPU rounding bit for
# bit (float64 intermediates rounded where torch rounds; ~6x slower Adam). Read when a step is first traced.
OPTIM_ROUNDING: str = os.environ.get("FUNCTORCH_LITE_OPTIM_ROUNDING", "fast")
# Printing options (set_printoptions changes these).
PRINT_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


# ---- process-wide switches PyTorch scripts set (``torch.set_float32_matmul_precision``...) -----------------------
# torch's precision names -> JAX's jax_default_matmul_precision (TF32 / bf16 passes on GPUs and TPUs; CPU
# matmuls are float32 whatever the setting)
_MATMUL_PRECISION = {"highest": "float32", "high": "tensorfloat32", "medium": "bfloat16"}
_SWITCHES = {"matmul_precision": "highest", "deterministic": False, "deterministic_warn_only": False,
             "num_threads": os.cpu_count() or 1, "num_interop_threads": os.cpu_count() or 1, "warn_always": False}


# PyTorch computes float32 matmuls in float32 unless asked ("highest"); JAX's default lets GPUs use TF32 and TPUs
# bfloat16 passes, a silent loss of precision a PyTorch script does not expect. Set at import, unless the process
# already chose a precision (JAX_DEFAULT_MATMUL_PRECISION or a jax.config.update before the import).
if jax.config.jax_default_matmul_precision is None:
    jax.config.update("jax_default_matmul_precision", "float32")
else:
    _SWITCHES["matmul_precision"] = {v: k for k, v in _MATMUL_PRECISION.items()}.get(
        str(jax.config.jax_default_matmul_precision), "highest")


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"`` (float32 matmuls), ``"high"`` (TF32 allowed), ``"medium"`` (bfloat16 allowed): JAX's
    default matmul precision, for the programs traced from now on."""
    if precision not in _MATMUL_PRECISION:
        import warnings
        from ._warn import user_stacklevel as _user_stacklevel
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=_user_stacklevel())
        return
    jax.config.update("jax_default_matmul_precision", _MATMUL_PRECISION[precision])
    _SWITCHES["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _SWITCHES["matmul_precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded (``are_deterministic_algorithms_enabled``). XLA's CPU programs are deterministic; on a GPU,
    XLA needs ``XLA_FLAGS=--xla_gpu_deterministic_ops=true`` set before the process starts (warned if missing)."""
    _SWITCHES["deterministic"], _SWITCHES["deterministic_warn_only"] = bool(mode), bool(warn_only)
    if mode and "xla_gpu_deterministic_ops=true" not in os.environ.get("XLA_FLAGS", "") and \
            any(d.platform == "gpu" for d in jax.devices()):
        import warnings
        from ._warn import user_stacklevel as _user_stacklevel
        warnings.warn("use_deterministic_algorithms(True): XLA's GPU programs are deterministic only with "
                      "XLA_FLAGS=--xla_gpu_deterministic_ops=true set before the process starts",
                      stacklevel=_user_stacklevel())


def are_deterministic_algorithms_enabled() -> bool:
    return _SWITCHES["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _SWITCHES["deterministic_warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """0 / "default", 1 / "warn", 2 / "error": ``use_deterministic_algorithms`` off, on with ``warn_only``, on."""
    if not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in ("default", "warn", "error"):
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = ("default", "warn", "error").index(debug_mode)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _SWITCHES["deterministic"]:
        return 0
    return 1 if _SWITCHES["deterministic_warn_only"] else 2


def set_warn_always(b, /) -> None:
    """Warnings PyTorch shows once per process (``TORCH_WARN_ONCE``: ``_warn.warn_once``) show every time."""
    _SWITCHES["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _SWITCHES["warn_always"]


def set_flush_denormal(mode) -> bool:
    """False, as PyTorch returns where the CPU cannot switch denormal flushing: XLA fixes its CPU programs'
    handling when it compiles them (they keep denormals), so the setting cannot change here."""
    return False


def set_num_threads(n: int) -> None:
    """Recorded for ``get_num_threads``: XLA sizes its CPU thread pool when the backend starts (set
    ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` or the process's CPU affinity before start to limit it)."""
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _SWITCHES["num_threads"] = n


def get_num_threads() -> int:
    return _SWITCHES["num_threads"]


def set_num_interop_threads(n: int) -> None:
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _SWITCHES["num_interop_threads"] = n


def get_num_interop_threads() -> int:
    return _SWITCHES["num_interop_threads"]
