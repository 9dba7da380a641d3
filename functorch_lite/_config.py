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
- ``FUNCTORCH_LITE_COMPILATION_CACHE``: where XLA's compiled programs are kept between runs (JAX's persistent
  compilation cache; ``compilation_cache``): a folder, "1" (the default: ``$XDG_CACHE_HOME/functorch_lite/xla``,
  else ``~/.cache/functorch_lite/xla``) or "0" (off).
"""
from __future__ import annotations

import os

import jax

jax.config.update("jax_enable_x64", True)


# XLA's options for the facade's programs of many ops (a compiled function's, a whole-graph backward's). XLA may keep a
# half-precision intermediate in float32 across ops (its "excess precision"), which drops the rounding of every
# bfloat16 / float16 result the program computes: ``(x.bfloat16() + 1e-3).float()`` came back as a value no bfloat16
# holds, an autocast step's loss moved from eager's, and a bfloat16 tensor's gradients summed over its uses kept
# float32 sums (w.bfloat16() used twice: 1 + 2**-8 for torch's 1.0). Off, each op's result is rounded to its dtype as
# eagerly (and in torch), where every op is its own kernel.
PROGRAM_OPTIONS = {"xla_allow_excess_precision": False}


class Program:
    """``jax.jit(fn)`` for the facade's programs of many ops, with ``PROGRAM_OPTIONS`` where it is compiled on its
    own; called inside another JAX trace (a func transform over a compiled function, a backward inside a compiled
    step) it is part of that trace's program, where JAX takes no compiler options."""
    __slots__ = ("top", "nested", "__weakref__")  # (JAX keeps weak references to what it traces: eval_shape)

    def __init__(self, fn, **kw):
        self.top = jax.jit(fn, compiler_options=PROGRAM_OPTIONS, **kw)
        self.nested = jax.jit(fn, **kw)

    def __call__(self, *args):
        return (self.top if _top_level() else self.nested)(*args)

    def trace(self, *args):
        return (self.top if _top_level() else self.nested).trace(*args)

    def lower(self, *args):
        return (self.top if _top_level() else self.nested).lower(*args)


from jax._src import core as _jax_core  # noqa: E402

_top_level = _jax_core.trace_ctx.is_top_level  # (False inside another JAX trace)


def compilation_cache(setting: str | None = None) -> str | None:
    """JAX's persistent compilation cache, on (as torch.compile's inductor keeps its kernels in a cache folder): each
    eager op's kernels and each compiled function's program are compiled once per machine, not once per run (a
    small GPT's first eager training step, 7.5 s of XLA compiles in a fresh process, took 1.4 s the next run).
    ``setting``: ``FUNCTORCH_LITE_COMPILATION_CACHE``'s value. Left alone where the process set a cache folder of
    its own (``jax_compilation_cache_dir``), or where the folder cannot be written. Every program is kept, however
    fast it compiled (``jax_persistent_cache_min_compile_time_secs`` 0, where it was JAX's default): an op's kernel
    compiles in milliseconds, and there are hundreds. Returns the folder in use (None: off)."""
    if setting is None:
        setting = os.environ.get("FUNCTORCH_LITE_COMPILATION_CACHE", "1")
    if setting.strip().lower() in ("0", "", "false", "off", "no") or jax.config.jax_compilation_cache_dir:
        return jax.config.jax_compilation_cache_dir
    path = setting
    if setting.strip().lower() in ("1", "true", "on", "yes"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "functorch_lite", "xla")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    if not os.access(path, os.W_OK):
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    if jax.config.jax_persistent_cache_min_compile_time_secs == 1.0:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return path


COMPILATION_CACHE: str | None = compilation_cache()

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
# ("matmul_precision": the JAX matmul precision in effect, by torch's name for it: part of compile's guard key;
# "float32_matmul_precision": torch's legacy setting, set_float32_matmul_precision / backends.cuda.matmul.allow_tf32)
class Switches(dict):
    """A table of process-wide switches: each change refreshes ``SWITCH_STATE``, the values of every such table,
    which compile's guard key holds (``torch.use_deterministic_algorithms(True)`` between two calls of a function
    that reads it recompiles it, as torch.compile's)."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        refresh_switches()


SWITCH_STATE: list = [()]
_SWITCH_TABLES: list = []  # (the Switches tables and other switch readers: callables giving a tuple)


def refresh_switches() -> None:
    SWITCH_STATE[0] = tuple(x for read in _SWITCH_TABLES for x in read())


def switch_table(d: dict) -> Switches:
    """``d`` as a Switches table whose values join ``SWITCH_STATE``."""
    t = Switches(d)
    _SWITCH_TABLES.append(lambda: tuple(t.values()))
    refresh_switches()
    return t


_SWITCHES = {"matmul_precision": "highest", "float32_matmul_precision": "highest", "deterministic": False,
             "deterministic_warn_only": False, "num_threads": os.cpu_count() or 1,
             "num_interop_threads": os.cpu_count() or 1, "interop_threads_set": False, "warn_always": False,
             "cudnn_allow_tf32": True, "fill_uninitialized_memory": True}
_SWITCHES = switch_table(_SWITCHES)
# torch's per-backend fp32 precisions (torch.backends.fp32_precision, backends.cuda.matmul.fp32_precision,
# backends.cudnn.conv.fp32_precision, backends.mkldnn.matmul.fp32_precision...): (backend, op) -> precision, None for
# cuDNN conv / rnn never set (they then follow the legacy cudnn.allow_tf32, as PyTorch's)
FP32_PRECISION = {("generic", "all"): "none",
                  ("cuda", "all"): "none", ("cuda", "conv"): None, ("cuda", "rnn"): None,
                  ("cuda", "matmul"): "none",
                  ("mkldnn", "all"): "none", ("mkldnn", "conv"): "none", ("mkldnn", "rnn"): "none",
                  ("mkldnn", "matmul"): "none"}
_FP32_NAMES = ("ieee", "tf32", "bf16", "none")


# PyTorch computes float32 matmuls in float32 unless asked ("highest"); JAX's default lets GPUs use TF32 and TPUs
# bfloat16 passes, a silent loss of precision a PyTorch script does not expect. Set at import, unless the process
# already chose a precision (JAX_DEFAULT_MATMUL_PRECISION or a jax.config.update before the import).
if jax.config.jax_default_matmul_precision is None:
    jax.config.update("jax_default_matmul_precision", "float32")
else:
    _SWITCHES["float32_matmul_precision"] = {v: k for k, v in _MATMUL_PRECISION.items()}.get(
        str(jax.config.jax_default_matmul_precision), "highest")
    _SWITCHES["matmul_precision"] = _SWITCHES["float32_matmul_precision"]
    if _SWITCHES["float32_matmul_precision"] != "highest":
        FP32_PRECISION[("cuda", "matmul")] = "tf32"
        FP32_PRECISION[("mkldnn", "matmul")] = "tf32" if _SWITCHES["float32_matmul_precision"] == "high" else "bf16"


_MIXED_MATMUL = ("PyTorch is checking the matmul precision without a specific backend name,Current status indicate that "
                 "you have used mix of the legacy and new APIs to set the matmul precision. We suggest only using the "
                 "new API for matmul precision. See also: "
                 "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices")
_MIXED_CUBLAS = ("PyTorch is checking whether allow_tf32_new is enabled for cuBlas matmul,Current status indicate that "
                 "you have used mix of the legacy and new APIs to set the TF32 status for cublas matmul. We suggest "
                 "only using the new API to set the TF32 flag. See also: "
                 "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices")
_MIXED_CUDNN = ("PyTorch is checking whether allow_tf32 is enabled for cuDNN without a specific operator name,but the "
                "current flag(s) indicate that cuDNN conv and cuDNN RNN have different TF32 flags.This combination "
                "indicates that you have used a mix of the legacy and new APIs to set the TF32 flags. We suggest only "
                "using the new API to set the TF32 flag(s). See also: "
                "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices")


def get_fp32_precision(backend: str, op: str) -> str:
    """torch's ``float32Precision(backend, op)``: the op's own setting, else its backend's "all", else the generic
    one, else (cuDNN conv / rnn never set) the legacy ``cudnn.allow_tf32``; "bf16" reads as "none" for cuda
    (cuBLAS/cuDNN have no bf16 mode for float32)."""
    p = FP32_PRECISION[(backend, op)]
    unset = p is None
    if unset or p == "none":
        p = FP32_PRECISION[(backend, "all")]
    if p == "none":
        p = FP32_PRECISION[("generic", "all")]
    if p == "none" and unset and _SWITCHES["cudnn_allow_tf32"]:
        return "tf32"
    return "none" if backend == "cuda" and p == "bf16" else p


def set_fp32_precision(backend: str, op: str, precision) -> None:
    """torch's ``setFloat32Precision`` (an op left at "none" follows its backend's "all", then the generic one)."""
    if not isinstance(precision, str):
        raise TypeError("_set_fp32_precision_setter(): incompatible function arguments. The following argument "
                        "types are supported:")
    if precision not in _FP32_NAMES:
        raise RuntimeError(f"Unknown precision: {precision}")
    if backend == "cuda" and precision == "bf16":
        raise RuntimeError("backend 'cuda' does not support precision 'bf16'")
    FP32_PRECISION[(backend, op)] = precision
    _apply_matmul_precision()


def _apply_matmul_precision() -> None:
    """JAX's default matmul precision from torch's settings: TF32 where cuBLAS matmuls may use it (bfloat16 passes
    under the legacy "medium"), float32 otherwise (CPU matmuls are float32 whatever the setting)."""
    tf32 = get_fp32_precision("cuda", "matmul") == "tf32"
    name = ("medium" if _SWITCHES["float32_matmul_precision"] == "medium" else "high") if tf32 else "highest"
    if _MATMUL_PRECISION[name] != jax.config.jax_default_matmul_precision:
        jax.config.update("jax_default_matmul_precision", _MATMUL_PRECISION[name])
    _SWITCHES["matmul_precision"] = name


def get_cublas_allow_tf32() -> bool:
    """``backends.cuda.matmul.allow_tf32``: torch's check that the legacy and the new setting agree."""
    new = get_fp32_precision("cuda", "matmul") == "tf32"
    if (_SWITCHES["float32_matmul_precision"] != "highest") != new:
        raise RuntimeError(_MIXED_CUBLAS)
    return new


def set_cublas_allow_tf32(value) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
    _SWITCHES["float32_matmul_precision"] = "high" if value else "highest"
    set_fp32_precision("cuda", "matmul", "tf32" if value else "ieee")


def get_cudnn_allow_tf32() -> bool:
    conv, rnn = get_fp32_precision("cuda", "conv") == "tf32", get_fp32_precision("cuda", "rnn") == "tf32"
    if not conv == rnn == _SWITCHES["cudnn_allow_tf32"]:
        raise RuntimeError(_MIXED_CUDNN)
    return _SWITCHES["cudnn_allow_tf32"]


def set_cudnn_allow_tf32(value) -> None:
    """Recorded: XLA's GPU convolutions follow JAX's matmul precision, not a separate switch."""
    if not isinstance(value, bool):
        # (torch's message names cuBLAS here too)
        raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
    FP32_PRECISION[("cuda", "rnn")] = FP32_PRECISION[("cuda", "conv")] = "tf32" if value else "none"
    _SWITCHES["cudnn_allow_tf32"] = value


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"`` (float32 matmuls), ``"high"`` (TF32 allowed), ``"medium"`` (bfloat16 allowed): JAX's
    default matmul precision, for the programs traced from now on."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _MATMUL_PRECISION:
        import warnings
        from ._warn import user_stacklevel as _user_stacklevel
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=_user_stacklevel())
        return
    _SWITCHES["float32_matmul_precision"] = precision
    FP32_PRECISION[("cuda", "matmul")] = "ieee" if precision == "highest" else "tf32"
    FP32_PRECISION[("mkldnn", "matmul")] = {"highest": "ieee", "high": "tf32", "medium": "bf16"}[precision]
    _apply_matmul_precision()


def get_float32_matmul_precision() -> str:
    legacy = _SWITCHES["float32_matmul_precision"]
    mkl = get_fp32_precision("mkldnn", "matmul")
    if (get_fp32_precision("cuda", "matmul") == "tf32" and legacy == "highest") or \
            (mkl == "bf16" and legacy != "medium") or (mkl == "tf32" and legacy != "high"):
        raise RuntimeError(_MIXED_MATMUL)
    return legacy


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded (``are_deterministic_algorithms_enabled``). XLA's CPU programs are deterministic; on a GPU,
    XLA needs ``XLA_FLAGS=--xla_gpu_deterministic_ops=true`` set before the process starts (warned if missing).
    While on, ``torch.empty`` / ``empty_like`` fill their memory (NaN, or an integer dtype's largest value) when
    ``torch.utils.deterministic.fill_uninitialized_memory`` is True, as PyTorch's."""
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
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
    _SWITCHES["num_threads"] = _check_threads("set_num_threads", n)


def get_num_threads() -> int:
    return _SWITCHES["num_threads"]


def set_num_interop_threads(n: int) -> None:
    n = _check_threads("set_num_interop_threads", n)
    if _SWITCHES["interop_threads_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _SWITCHES["num_interop_threads"], _SWITCHES["interop_threads_set"] = n, True


def _check_threads(name, n) -> int:
    """``n`` as a Python int: torch's ``THPUtils_checkLong`` takes an int or a NumPy integer (not a bool)."""
    import numpy as np
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        from .ops._dispatch import _type_name
        raise RuntimeError(f"{name} expects an int, but got {_type_name(n)}")
    n = int(n)
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def get_num_interop_threads() -> int:
    return _SWITCHES["num_interop_threads"]


def empty_fill_value(dt):
    """What ``torch.empty`` / ``empty_like`` of facade dtype ``dt`` hold: under ``use_deterministic_algorithms(True)``
    with ``torch.utils.deterministic.fill_uninitialized_memory`` (the default), PyTorch's known values (NaN for
    floating and complex dtypes, the largest value for integers, True for bool); else 0 (any content is valid
    for uninitialised memory)."""
    if not (_SWITCHES["deterministic"] and _SWITCHES["fill_uninitialized_memory"]):
        return 0
    if dt.is_floating_point or dt.is_complex:
        return float("nan")
    if dt.name == "bool":
        return True
    import numpy as np
    return int(np.iinfo(dt.np).max)
