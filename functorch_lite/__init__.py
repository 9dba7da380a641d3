"""functorch_lite: PyTorch's API on JAX.

``import functorch_lite as torch`` gives tensors, dtypes, devices and ops with PyTorch's
semantics, running on jax arrays (CPU, GPU or TPU). Importing it enables JAX's x64 mode
(PyTorch needs int64/float64); every facade op still produces PyTorch's dtypes.
"""
from __future__ import annotations

import math as _math

from . import _config  # noqa: F401  (x64 on, first)
from ._config import (set_float32_matmul_precision, get_float32_matmul_precision,  # noqa: F401
                      use_deterministic_algorithms, are_deterministic_algorithms_enabled,
                      is_deterministic_algorithms_warn_only_enabled, set_num_threads, get_num_threads,
                      set_num_interop_threads, get_num_interop_threads, set_deterministic_debug_mode,
                      get_deterministic_debug_mode, set_warn_always, is_warn_always_enabled, set_flush_denormal)
from . import dtypes as _dtypes
from .dtypes import (  # noqa: F401
    dtype, float32, float64, float16, bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,
    float8_e8m0fnu, int8, uint8, int16, int32, int64, uint16, uint32, uint64, int4, uint4, bool, complex64,
    complex128, complex32, float, double, half, short, int, long, cfloat, cdouble, chalf, finfo, iinfo,
    get_default_dtype, set_default_dtype,
)
from ._device import device, get_default_device, set_default_device, DeviceUnavailableError  # noqa: F401
from ._tensor.tensor import Tensor, Size, TypedStorage, UntypedStorage  # noqa: F401
from ._tensor.tensor import has_compatible_shallow_copy_type as _has_compatible_shallow_copy_type  # noqa: F401
from ._tensor.legacy import set_default_tensor_type, tensortype, typename  # noqa: F401  (torch.FloatTensor & co below)
from ._tensor import legacy as _legacy
globals().update(_legacy.CPU_TYPES)
globals().update(_legacy.CONSTANTS)  # torch.pi, e, inf, nan, newaxis
for _k, _v in _legacy.METHODS.items():  # is_sparse, is_quantized, ... (False), to_dense, is_set_to, output_nr
    setattr(Tensor, _k, _v)
from ._tensor.tensor import memory_format, contiguous_format, preserve_format, channels_last, channels_last_3d  # noqa: F401,E501
from ._promotion import promote_types, result_type, can_cast  # noqa: F401
from ._stats import cache_info, reset_cache_info  # noqa: F401
from ._symbolic import (SymInt, SymFloat, SymBool, sym_int, sym_float, sym_max, sym_min, sym_not,  # noqa: F401
                        sym_sqrt, sym_sum, sym_ite)
from .random import manual_seed, seed, initial_seed, Generator, default_generator, get_rng_state, set_rng_state  # noqa: F401,E501
from .autograd.grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled,
)

from .ops import _registry, _dispatch
from .ops import elementwise as _elementwise  # noqa: F401  (registers ops)
from .ops import view_ops as _view_ops
from .ops import movement as _movement
from .ops import linalg as _linalg
from .ops import reduction as _reduction  # noqa: F401
from .ops import indexing as _indexing
from .ops import gather_scatter as _gather_scatter
from .ops import conversion as _conversion
from .ops import creation as _creation
from .ops import nn_ops as _nn_ops  # noqa: F401  (registers the composite nn ops)
from .ops import conv as _conv_ops, resample as _resample_ops, norm as _norm_ops  # noqa: F401
from .ops import attention as _attn_ops, losses as _loss_ops  # noqa: F401
from .ops import activation as _activation, distance as _distance_ops  # noqa: F401
from .ops import operators as _operators
from .ops import complex_ops as _complex_ops
from .ops import math_extra as _math_extra  # noqa: F401
from .ops import special_ops as _special_ops  # noqa: F401
from .ops import fft_ops as _fft_ops  # noqa: F401
from .ops import nn_extra as _nn_extra  # noqa: F401
from .ops import tensor_more as _tensor_more, tensor_math as _tensor_math, random_fill as _random_fill  # noqa: E501  (tensor/top-level gaps)
from .ops import pool_more as _pool_more  # noqa: F401  (unpooling, adaptive_max_pool3d, rrelu, channel_shuffle)
from .ops import pool_fractional as _pool_fractional  # noqa: F401,E402  (fractional_max_pool2d/3d)
from .ops import weight_norm_ops as _weight_norm_ops  # noqa: F401  (registers _weight_norm_interface)
from .ops import nn_sampling as _nn_sampling, ctc as _ctc_ops  # noqa: F401  (grid_sampler, embedding_bag, _ctc_loss)
from .ops import strided as _strided  # noqa: F401  (as_strided, empty_strided, new_empty_strided)

_ns = globals()
_registry.install(Tensor, _ns)

for _mod in (_view_ops, _movement, _conversion, _operators, _indexing, _gather_scatter, _reduction, _creation,
             _complex_ops, _math_extra, _special_ops):
    for _k, _v in getattr(_mod, "METHODS", {}).items():
        setattr(Tensor, _k, _v)
for _mod in (_view_ops, _movement, _creation, _linalg, _indexing, _gather_scatter, _reduction, _complex_ops,
             _activation, _math_extra, _special_ops, _nn_extra):
    _ns.update(getattr(_mod, "FUNCTIONS", {}))
for _mod in (_tensor_more, _tensor_math, _random_fill, _strided):  # (in-place views, *_copy, scatters, fills...)
    for _k, _v in _mod.METHODS.items():
        setattr(Tensor, _k, _v)
    _ns.update(_mod.FUNCTIONS)
del _mod, _k, _v, _ns

from . import linalg  # noqa: E402  (torch.linalg; with the classic torch.det / torch.svd / ... forms below)
from .ops import set_ops as _set_ops  # noqa: E402  (unique, bincount, histc, quantile, searchsorted, fill_diagonal_)
from .ops import spectral as _spectral  # noqa: E402  (stft, istft)
for _mod in (linalg, _set_ops, _spectral):
    globals().update(_mod.FUNCTIONS)
    for _k, _v in _mod.METHODS.items():
        setattr(Tensor, _k, _v)
del _mod, _k, _v

from . import fft, special  # noqa: E402,F401  (torch.fft, torch.special)
from . import autograd  # noqa: E402,F401
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled, set_anomaly_enabled  # noqa: E402,F401,E501
from . import cuda, backends, tpu, optim, nn, utils, func, jit, distributed, hub, multiprocessing  # noqa: E402,F401,E501
from .utils.dlpack import from_dlpack, to_dlpack  # noqa: E402,F401  (and Tensor.__dlpack__, __dlpack_device__)
for _k, _v in utils.dlpack.METHODS.items():
    setattr(Tensor, _k, _v)
from .func import vmap  # noqa: E402,F401  (torch.vmap)
from ._higher_order import cond, while_loop  # noqa: E402,F401  (torch.cond, torch.while_loop)
from . import quantization, amp  # noqa: E402,F401
from .amp import (  # noqa: E402,F401
    autocast, is_autocast_enabled, get_autocast_dtype, set_autocast_enabled, set_autocast_dtype,
    is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache, GradScaler,
)
from .amp.autocast_mode import (  # noqa: E402,F401  (torch's deprecated per-device spellings)
    is_autocast_cpu_enabled, get_autocast_cpu_dtype, set_autocast_cpu_enabled, set_autocast_cpu_dtype,
    get_autocast_gpu_dtype, set_autocast_gpu_dtype, is_autocast_xla_enabled, is_autocast_ipu_enabled,
    set_autocast_xla_enabled, set_autocast_ipu_enabled, get_autocast_xla_dtype, get_autocast_ipu_dtype,
    set_autocast_xla_dtype, set_autocast_ipu_dtype, autocast_increment_nesting, autocast_decrement_nesting,
)
from ._check import (  # noqa: E402,F401
    OutOfMemoryError, _check, _check_index, _check_value, _check_type, _check_not_implemented, _check_with,
    _check_tensor_all,
)
from . import cpu, accelerator  # noqa: E402,F401
from . import mps, xpu, __config__  # noqa: E402,F401  (CPU-build behaviour: no Metal / Intel GPU backend in JAX here)
from . import __future__  # noqa: E402,F401  (torch.__future__: the module-conversion switches)
from ._device_modules import get_device_module  # noqa: E402,F401
from .utils import deterministic as _utils_deterministic  # noqa: E402,F401  (torch.utils.deterministic)
from .cuda import amp as _cuda_amp  # noqa: E402,F401  (torch.cuda.amp.autocast / GradScaler, deprecated spellings)
from .quantization import (  # noqa: E402,F401
    _scaled_mm, _int_mm, fake_quantize_per_tensor_affine, fake_quantize_per_channel_affine)
from .serialization import *  # noqa: E402,F401,F403  (save, load)
from ._compile import compile  # noqa: E402,F401
from . import _dynamo, compiler  # noqa: E402,F401  (torch._dynamo / torch.compiler)
from . import _inductor, _logging  # noqa: E402,F401  (torch._inductor.config / torch._logging.set_logs)
from . import distributions  # noqa: E402,F401  (torch.distributions)
from .distributions._ops import standard_gamma as _standard_gamma  # noqa: E402,F401  (torch._standard_gamma)
from .distributions._ops import sample_dirichlet as _sample_dirichlet  # noqa: E402,F401  (torch._sample_dirichlet)
from . import _tensor_str  # noqa: E402,F401  (torch._tensor_str.PRINT_OPTS)
from . import profiler  # noqa: E402,F401  (torch.profiler)
from . import testing  # noqa: E402,F401  (torch.testing.assert_close)
from .ops.conv import conv1d, conv2d, conv_transpose2d  # noqa: E402,F401  (torch has them at top level)
from .ops.conv import conv3d, max_pool1d, avg_pool1d, adaptive_avg_pool1d  # noqa: E402,F401  (top level too)
globals().update(_pool_more.FUNCTIONS)  # max_pool1d_with_indices, adaptive_max_pool1d, rrelu(_), the dropout family
from .ops.weight_norm_ops import _weight_norm, _weight_norm_interface, norm_except_dim  # noqa: E402,F401
from .ops.nn_sampling import grid_sampler, grid_sampler_2d, grid_sampler_3d  # noqa: E402,F401  (top level)
from .ops.ctc import ctc_loss_aten as ctc_loss  # noqa: E402,F401  (torch.ctc_loss: reduction as ATen's enum)
from .ops.segment import segment_reduce  # noqa: E402,F401  (torch.segment_reduce)
from .ops.foreach import FUNCTIONS as _foreach_fns  # noqa: E402  (torch._foreach_*: maps of the ops)
globals().update(_foreach_fns)
from .autograd import tensor_hooks as _tensor_hooks  # noqa: E402

for _k, _v in _tensor_hooks.METHODS.items():
    setattr(Tensor, _k, _v)
del _k, _v


def get_device(input) -> int:
    return input.get_device()


def _assert(condition, message) -> None:
    """``torch._assert``: Python's ``assert`` as a call (model code uses it; a tensor condition is read)."""
    if not condition:
        raise AssertionError(message)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def _tensor_arg(name: str, input) -> None:
    """PyTorch's argument-parser TypeError for a non-tensor ``input`` of ``torch.<name>(input)``."""
    if not isinstance(input, Tensor):
        from .ops.view_ops import _tname
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {_tname(input)}")


def is_floating_point(input) -> bool:
    if type(input) is not Tensor:
        _tensor_arg("is_floating_point", input)
    return input.is_floating_point()


def is_complex(input) -> bool:
    return input.is_complex()


def is_inference(input) -> bool:
    return input.is_inference()


def numel(input) -> int:
    if type(input) is not Tensor:
        _tensor_arg("numel", input)
    return input.numel()


def is_storage(obj) -> bool:
    """``torch.is_storage``: an ``UntypedStorage`` or ``TypedStorage`` (legacy ``FloatStorage``... included)."""
    from ._tensor.tensor import _StorageBase
    return isinstance(obj, _StorageBase)


class layout:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        # torch pickles the layouts by name, so pickle / copy / deepcopy give back the singleton
        return self.name


strided = layout("strided")
# torch's other layouts, for code that compares a tensor's layout with them; every tensor here is strided (a
# factory given another layout refuses: ops/creation.py)
sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged = map(
    layout, ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"))
from . import signal  # noqa: E402,F401  (torch.signal: after strided, its windows' default layout)
from . import sparse  # noqa: E402  (torch.sparse: sparse COO tensors, after the layouts)
from .sparse import sparse_coo_tensor, smm, hspmm  # noqa: E402


def dequantize(tensor):
    """``torch.dequantize``: a dense tensor (every tensor here: no quantized ones) is its own value; a list, each."""
    return [t.dequantize() for t in tensor] if isinstance(tensor, (list, tuple)) else tensor.dequantize()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    o = _config.PRINT_OPTIONS
    if profile == "default":
        o.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        o.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        o.update(precision=4, threshold=_math.inf, edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            o[k] = v
    o["sci_mode"] = sci_mode


from . import version, torch_version  # noqa: E402,F401  (torch.version, torch.torch_version)
from .torch_version import __version__  # noqa: E402  (a TorchVersion: "2.13.0", the PyTorch API reproduced; the
# facade's own release is version.facade_version)
from . import functional  # noqa: E402,F401  (torch.functional: the top-level functions above, under their module)
