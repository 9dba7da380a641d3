"""int8 post-training quantization of linear layers (the seed's "int8: 4x smaller, slight accuracy hit").

Weights: per-output-channel absmax, ``scale[o] = max|W[o, :]| / 127`` (float32), ``q = round(W / scale)``
in ``[-127, 127]`` (symmetric; -128 unused), so ``|W - q * scale| <= scale / 2`` for every element (the
division runs in float64 so the rounding is exact). Activations: quantized dynamically per token (per
row of the flattened input) the same way, then ``x_q @ q.T`` runs on int8 operands with int32
accumulation and is rescaled by ``scale_x * scale_w`` in float32 — all of it one jitted kernel
(:func:`int8_linear`, an op of the op table).

Also torch's own int8 / fake-quantization ops, each an op of the op table: ``torch._int_mm`` (int8 @ int8 -> int32,
wrapping as the CPU kernel does) and ``torch.fake_quantize_per_tensor_affine`` /
``torch.fake_quantize_per_channel_affine`` (quantize-dequantize with torch's rounding, straight-through gradients
inside the quantization range), with torch's argument parsing and checks.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._tensor.tensor import Tensor
from ..autograd import grad_mode as _gm
from ..ops import _dispatch
from ..ops._registry import OPS, defop
from .._promotion import _cname, no_kernel
from .float8 import _REQUIRED, _fits, invalid_combination, parse_args

__all__ = ["int8_weight_quantize", "int8_linear", "int8_dequantize", "_int_mm", "fake_quantize_per_tensor_affine",
           "fake_quantize_per_channel_affine"]


def _float_input_rule(kernel: str, outs):
    """Rule for the quantization ops: the first tensor must be floating (else PyTorch's NotImplementedError;
    float8 is upcast like the other floats); ``outs(dtype) -> output dtypes``."""
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt.category != D.FLOAT:
            raise no_kernel(kernel, dt)
        return (None,) * len(sig), outs(dt)
    return rule


def _wq_check(targs, sargs):
    if len(targs[0]._shape) != 2:
        raise RuntimeError(f"int8_weight_quantize: expected a 2-D weight, got {len(targs[0]._shape)}-D")


def absmax_int8(x, axis: int):
    """``(q, scale)``: symmetric absmax int8 quantization of a jax array along ``axis`` (float32 scales,
    ``scale = 1`` for all-zero slices). The division runs in float64 so ``|x - q * scale| <= scale / 2``."""
    x64 = x.astype(jnp.float64)
    amax = jnp.max(jnp.abs(x64), axis=axis, keepdims=True)
    scale = jnp.where(amax > 0, amax / 127.0, 1.0).astype(jnp.float32)
    q = jnp.clip(jnp.round(x64 / scale.astype(jnp.float64)), -127, 127).astype(jnp.int8)
    return q, jnp.squeeze(scale, axis)


@defop("int8_weight_quantize", float8=True, promote=_float_input_rule("int8_weight_quantize", lambda dt: (D.int8,
       D.float32)),
       tensors=1, method=False, function=False, differentiable=False, nout=2, check=_wq_check, out=False)
def int8_weight_quantize(weight):
    """Per-output-channel absmax int8 quantization of a 2-D weight: ``(q int8 (out, in), scale float32 (out,))``.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import int8_weight_quantize
    >>> q, s = int8_weight_quantize(torch.tensor([[1.0, -0.5], [0.0, 0.0]]))
    >>> q.tolist(), s.tolist()
    ([[127, -64], [0, 0]], [0.007874015718698502, 1.0])
    """
    return absmax_int8(weight, 1)


def _lin_check(targs, sargs):
    x, q, s, b = targs
    if q.dtype is not D.int8 or len(q._shape) != 2:
        raise RuntimeError(f"int8_linear: weight must be a 2-D int8 tensor, got {q.dtype} {tuple(q._shape)}")
    if s._shape != (q._shape[0],):
        raise RuntimeError(f"int8_linear: weight_scale must have shape ({q._shape[0]},), got {tuple(s._shape)}")
    k = x._shape[-1] if x._shape else 1
    if k != q._shape[1]:
        rows = 1
        for d in x._shape[:-1]:
            rows *= d
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {q._shape[1]}x{q._shape[0]})")
    if b is not None and b._shape != (q._shape[0],):
        raise RuntimeError(f"int8_linear: bias must have shape ({q._shape[0]},), got {tuple(b._shape)}")


def _to_f32(a):
    return D.cast_array(a, D.from_numpy_dtype(a.dtype), D.float32)


@defop("int8_linear", float8=True, promote=_float_input_rule("int8_linear", lambda dt: (dt,)), tensors=4, method=False,
       function=False, differentiable=False, check=_lin_check, out=False)
def int8_linear(input, weight, weight_scale, bias=None):
    """``input @ dequant(weight).T + bias`` with dynamic per-token int8 activations and an int32-accumulated
    int8 matmul, rescaled in float32; the result has ``input``'s dtype. One jitted kernel.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import int8_weight_quantize, int8_linear
    >>> q, s = int8_weight_quantize(torch.tensor([[1.0, -1.0]]))
    >>> round(int8_linear(torch.tensor([[2.0, -2.0]]), q, s).item(), 4)
    4.0
    """
    x = _to_f32(input)
    amax = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    sx = jnp.where(amax > 0, amax / 127.0, jnp.float32(1.0))
    xq = jnp.clip(jnp.round(x / sx), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot_general(xq, weight, (((xq.ndim - 1,), (1,)), ((), ())), preferred_element_type=jnp.int32)
    out = acc.astype(jnp.float32) * sx * _to_f32(weight_scale)
    if bias is not None:
        out = out + _to_f32(bias)
    return out


def int8_dequantize(q: Tensor, scale: Tensor) -> Tensor:
    """``q.float() * scale[:, None]``: the float32 weight an int8 (q, per-row scale) pair stands for.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import int8_weight_quantize, int8_dequantize
    >>> int8_dequantize(*int8_weight_quantize(torch.tensor([[1.0, -0.5]]))).tolist()
    [[1.0, -0.5039370059967041]]
    """
    return q.to(D.float32) * scale.to(D.float32).unsqueeze(1)


# ---- torch._int_mm -------------------------------------------------------------------------------------------
_MM = "int_mm_out_cpu"


def _int_mm_rule(op, sig, sargs):
    """int32 results; the dtype checks are ``_int_mm_check``'s (torch checks the shapes first)."""
    return (None, None), (D.int32,)


def _int_mm_check(targs, sargs):
    """torch's ``_int_mm_out_cpu`` checks on ``self`` and ``mat2``, in its order."""
    a, b = targs
    if len(a._shape) != 2:
        raise RuntimeError(f"{_MM}: Expected self to be of dimension 2 but got {len(a._shape)}")
    if len(b._shape) != 2:
        raise RuntimeError(f"{_MM}: Expected mat2 to be of dimension 2 but got {len(b._shape)}")
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(f"{_MM}: self.size(1) needs to match mat2.size(0) but got {a._shape[1]} and {b._shape[0]}")
    if a.dtype is not D.int8 and a.dtype is not D.uint8:
        raise RuntimeError(f"{_MM}: Expected self dtype to be int8 or uint8 but got {_cname(a.dtype)}")
    if b.dtype is not D.int8:
        raise RuntimeError(f"{_MM}: Expected mat2 dtype to be of type int8 but got {_cname(b.dtype)}")


@defop("_int_mm", promote=_int_mm_rule, tensors=2, method=False, function=False, differentiable=False,
       check=_int_mm_check, float8=True, kernel=_MM, out=False)
def _int_mm_kernel(input, mat2):
    """The op of :func:`_int_mm` (its checks done): an int32 matmul, wrapping on overflow."""
    return jnp.matmul(input.astype(jnp.int32), mat2.astype(jnp.int32))


_INT_MM_PARAMS = (("input", "Tensor", _REQUIRED), ("mat2", "Tensor", _REQUIRED), ("*out", "Tensor?", None))


def _int_mm(*args, **kwargs) -> Tensor:
    """``torch._int_mm(input, mat2, *, out=None)``: int8 (or uint8) ``input`` @ int8 ``mat2`` -> int32, accumulated
    in int32 (wrapping on overflow, as torch's CPU kernel). ``out`` must be an int32, contiguous tensor of the
    result's shape (not resized).

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization.int8 import _int_mm
    >>> _int_mm(torch.full((1, 3), 100, dtype=torch.int8), torch.full((3, 1), -100, dtype=torch.int8)).tolist()
    [[-30000]]
    """
    a, b, out = parse_args("_int_mm", _INT_MM_PARAMS, args, kwargs)
    if out is None:  # (torch's functional form allocates its result first: at::empty({self.size(0), mat2.size(1)}))
        a.size(0)
        b.size(1)
    r = _dispatch.dispatch(OPS["_int_mm"], (a, b), ())
    if out is None:
        return r
    if out.dtype is not D.int32:
        raise RuntimeError(f"{_MM}: Expected result dtype to be of type kInt but got {_cname(out.dtype)}")
    for d, n in ((0, a._shape[0]), (1, b._shape[1])):
        if out.size(d) != n:
            raise RuntimeError(f"{_MM}: Expected result.size({d}) to be {n} but got {out.size(d)}")
    if len(out._shape) != 2:
        raise RuntimeError(f"{_MM}: Expected result to be of dimension 2 but got {len(out._shape)}")
    if not out.is_contiguous():
        raise RuntimeError(f"{_MM}: Expected result to be contiguous.")
    return _dispatch.write_out(out, r)


# ---- fake quantization ------------------------------------------------------------------------------------------
@jax.custom_vjp
def _straight_through(x, y, mask):
    """``y``, with torch's fake-quantization gradient ``grad * mask`` for ``x`` (straight through inside the
    quantization range, 0 outside: NaN gradients pass where the mask is set, as torch's product)."""
    return y


def _st_fwd(x, y, mask):
    return y, mask


def _st_bwd(mask, g):
    return g * mask.astype(g.dtype), None, None


_straight_through.defvjp(_st_fwd, _st_bwd)


def _opmath(x):
    """torch's kernels compute ``x * inv_scale`` in double for a double input, else in float."""
    return jnp.float64 if x.dtype == jnp.float64 else jnp.float32


def _as_int64(q):
    """C's ``static_cast<int64_t>`` of a float as torch's x86 CPU kernels get it: NaN, infinities and values out of
    range give INT64_MIN."""
    ok = jnp.isfinite(q) & (q >= -9.223372036854775808e18) & (q < 9.223372036854775808e18)
    return jnp.where(ok, q, jnp.asarray(-9.223372036854775808e18, q.dtype)).astype(jnp.int64)


_RANGE_MSG = "`quant_min` should be less than or         equal to `quant_max`."
_ZP_MSG = "`zero_point` must be between `quant_min` and `quant_max`."


def _not_differentiable(fname, targs, names):
    if _gm.is_grad_enabled():
        for t, n in zip(targs, names):
            if isinstance(t, Tensor) and t.requires_grad:
                raise RuntimeError(f"The function '{fname}' is not differentiable with respect to argument '{n}'. This "
                                   "input cannot have requires_grad True.")


def _float_input(kernel, x):
    """torch's kernels take float16, bfloat16, float32 and float64 inputs (checked after the arguments)."""
    if x.dtype.category != D.FLOAT or x.dtype in D.FLOAT8:
        raise no_kernel(kernel, x.dtype)


def _same_dtype_rule(op, sig, sargs):
    """The input's dtype; the dtype checks are the op's ``check`` (torch checks the arguments first)."""
    return (None,) * len(sig), (sig[0][1],)


_FQT_KERNEL = "fake_quantize_tensor_cachemask_kernel_type_handling"
_FQT_QPARAMS = "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams"


def _fqt_check(targs, sargs):
    x, scale, zp = targs
    qmin, qmax = sargs
    tensors = isinstance(scale, Tensor)
    if tensors:
        _not_differentiable(_FQT_QPARAMS, (scale, zp), ("scale", "zero_point"))
    if qmin > qmax:
        raise RuntimeError(_RANGE_MSG)
    if tensors:
        for t in (scale, zp):  # (torch reads each as one number: ``item()``)
            if t.numel() != 1:
                raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted to Scalar")
    elif not qmin <= zp <= qmax:
        raise RuntimeError(_ZP_MSG)
    _float_input(_FQT_KERNEL, x)


def _fqt_name(targs, sargs):
    return ("FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0" if isinstance(targs[1], Tensor) else
            "FakeQuantizePerTensorAffineCachemaskBackward0")


def _fqt_autocast(sargs, targs=()):
    """PyTorch's CPU autocast runs the number overload (scale and zero point Python numbers) in float32; the tensor
    overload is on no list."""
    return {"cpu": "fp32"} if not isinstance(targs[1], Tensor) else None


@defop("fake_quantize_per_tensor_affine", promote=_same_dtype_rule, tensors=3, method=False, function=False,
       grad_fn=_fqt_name, check=_fqt_check, float8=True, kernel=_FQT_KERNEL, out=False, saves=(),
       autocast=_fqt_autocast)
def _fq_tensor_kernel(input, scale, zero_point, quant_min, quant_max):
    """The op of :func:`fake_quantize_per_tensor_affine`: ``scale`` and ``zero_point`` one number each (Python
    numbers, or one-element tensors: a float zero point truncates, as torch's ``item<int>``)."""
    ct = _opmath(input)
    sc = jnp.asarray(scale).reshape(()).astype(jnp.float32)
    zp = jnp.asarray(zero_point).reshape(())
    zp = zp.astype(jnp.int64) if not jnp.issubdtype(zp.dtype, jnp.floating) else jnp.trunc(zp).astype(jnp.int64)
    inv = jnp.float32(1) / sc
    qf = zp.astype(ct) + jnp.round(input.astype(ct) * inv.astype(ct))  # (round: nearbyint's ties to even)
    q = jnp.fmin(jnp.fmax(qf, jnp.asarray(quant_min, ct)), jnp.asarray(quant_max, ct)).astype(jnp.int64)
    y = (q - zp).astype(jnp.float32) * sc  # (torch: int64 * float, in float)
    mask = (qf >= quant_min) & (qf <= quant_max)
    return _straight_through(input, D.cast_array(y, D.float32, D.from_numpy_dtype(input.dtype)), mask)


_FQT_SIGS = ("(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max)",
             "(Tensor input, float scale, int zero_point, int quant_min, int quant_max)")
_FQT_KINDS = (("Tensor", "Tensor", "Tensor", "int", "int"), ("Tensor", "float", "int", "int", "int"))
_FQT_NAMES = ("input", "scale", "zero_point", "quant_min", "quant_max")


def fake_quantize_per_tensor_affine(*args, **kwargs) -> Tensor:
    """``torch.fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max)``: ``input``
    quantized and dequantized in its dtype, ``(clamp(zero_point + nearbyint(input / scale), quant_min, quant_max)
    - zero_point) * scale`` as torch's CPU kernel computes it (``input * (1 / scale)`` in float32, double for a
    double input; NaN goes to ``quant_min``). Gradient: straight through where ``zero_point + nearbyint(input /
    scale)`` is in ``[quant_min, quant_max]``, 0 elsewhere. ``scale`` / ``zero_point``: numbers, or one-element
    tensors (torch's other overload: no zero-point range check, its own grad_fn).

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization.int8 import fake_quantize_per_tensor_affine
    >>> fake_quantize_per_tensor_affine(torch.tensor([-1.0, 0.25, 0.35, 30.0]), 0.1, 10, 0, 255).tolist()
    [-1.0, 0.20000000298023224, 0.4000000059604645, 24.5]
    """
    vals = _overload_values(args, kwargs)
    x, scale, zp, qmin, qmax = vals
    if not all(isinstance(v, Tensor) for v in vals[:3]):
        scale = scale.item() if isinstance(scale, Tensor) else float(scale)
        zp = zp.item() if isinstance(zp, Tensor) else zp
    qmin, qmax = (v.item() if isinstance(v, Tensor) else v for v in (qmin, qmax))
    return _dispatch.dispatch(OPS["fake_quantize_per_tensor_affine"], (x, scale, zp), (qmin, qmax))


def _overload_values(args, kwargs):
    """The five arguments of the overload of ``fake_quantize_per_tensor_affine`` the call fits (torch tries the
    Tensor-qparams one first), else torch's invalid-combination TypeError."""
    if len(args) <= 5 and all(k in _FQT_NAMES[len(args):] for k in kwargs) and len(args) + len(kwargs) == 5:
        vals = list(args) + [kwargs[n] for n in _FQT_NAMES[len(args):]]
        for kinds in _FQT_KINDS:
            if all(_fits_overload(k, v) for k, v in zip(kinds, vals)):
                return vals
    raise invalid_combination("fake_quantize_per_tensor_affine", _FQT_SIGS, _FQT_NAMES, _FQT_KINDS, args, kwargs)


def _fits_overload(kind, v) -> bool:
    """torch's parser's checks: a ``float`` takes a number or a 0-d tensor (not requiring grad); an ``int`` an
    integer (not a bool) or an integral 0-d tensor."""
    if kind == "float":
        return (isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, Tensor)) or (
            isinstance(v, Tensor) and not v._shape and not v.requires_grad)
    return _fits(kind, v)


_FQC_KERNEL = "fake_quantize_channel_cachemask_cpu_type_handling"
_FQC_PARAMS = (("input", "Tensor", _REQUIRED), ("scale", "Tensor", _REQUIRED), ("zero_point", "Tensor", _REQUIRED),
               ("axis", "int", _REQUIRED), ("quant_min", "int", _REQUIRED), ("quant_max", "int", _REQUIRED))


def _fqc_check(targs, sargs):
    """torch's ``fake_quantize_per_channel_affine`` checks, in its order (the integer zero points' range is a host
    read, as torch's ``min(zero_point).item()``)."""
    x, scale, zp = targs
    axis, qmin, qmax = sargs
    _not_differentiable("fake_quantize_per_channel_affine_cachemask", (scale, zp), ("scale", "zero_point"))
    if scale.dtype is not D.float32 and scale.dtype is not D.bfloat16:
        raise RuntimeError(f"Scale must be Float or BFloat16, found {scale.dtype.short}")
    if zp.dtype not in (D.int32, D.float32, D.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found {zp.dtype.short}")
    if len(scale._shape) != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if len(zp._shape) != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zp.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != x.size(axis):
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    if qmin > qmax:
        raise RuntimeError(_RANGE_MSG)
    if zp.dtype is D.int32 and zp.numel() and not (qmin <= zp.min().item() and zp.max().item() <= qmax):
        raise RuntimeError(_ZP_MSG)
    if not 0 <= axis <= len(x._shape):
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    _float_input(_FQC_KERNEL, x)


@defop("fake_quantize_per_channel_affine", promote=_same_dtype_rule, tensors=3, method=False, function=False,
       grad_fn="FakeQuantizePerChannelAffineCachemaskBackward0", check=_fqc_check, float8=True, kernel=_FQC_KERNEL,
       out=False, saves=())
def _fq_channel_kernel(input, scale, zero_point, axis, quant_min, quant_max):
    """The op of :func:`fake_quantize_per_channel_affine` (its checks done)."""
    shape = [1] * input.ndim
    shape[axis] = -1
    sc = scale.astype(jnp.float32).reshape(shape)
    inv = jnp.float32(1) / sc
    if jnp.issubdtype(zero_point.dtype, jnp.integer):  # zero_point + nearbyint(x * inv_scale), double for double
        ct = _opmath(input)
        qi = _as_int64(zero_point.astype(ct).reshape(shape) + jnp.round(input.astype(ct) * inv.astype(ct)))
    else:  # a float (or half) zero point: nearbyint(zero_point + x * inv_scale), in float for every input dtype
        qi = _as_int64(jnp.round(zero_point.astype(jnp.float32).reshape(shape) + input.astype(jnp.float32) * inv))
    q = jnp.clip(qi, quant_min, quant_max)
    # (torch: (fmin(fmax(q, qmin), qmax) - zero_point) * scale, in double, then the input's dtype)
    y = (q.astype(jnp.float64) - zero_point.astype(jnp.float64).reshape(shape)) * sc.astype(jnp.float64)
    mask = (qi >= quant_min) & (qi <= quant_max)
    return _straight_through(input, D.cast_array(y, D.float64, D.from_numpy_dtype(input.dtype)), mask)


def fake_quantize_per_channel_affine(*args, **kwargs) -> Tensor:
    """``torch.fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max)``: per-slice
    fake quantization along ``axis`` (``scale`` float32 or bfloat16, ``zero_point`` int32 -- range-checked -- or
    float / half, whose rounding adds it before rounding as torch's kernel). Gradient: straight through inside the
    range, 0 outside.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization.int8 import fake_quantize_per_channel_affine
    >>> w = torch.tensor([[0.25, 3.0], [0.3, -0.7]])
    >>> fake_quantize_per_channel_affine(w, torch.tensor([0.5, 0.1]), torch.tensor([0, 1], dtype=torch.int32),
    ...                                  0, -4, 4).tolist()
    [[0.0, 2.0], [0.30000001192092896, -0.5]]
    """
    x, scale, zp, axis, qmin, qmax = (v.item() if isinstance(v, Tensor) and k == "int" else v
                                      for v, (_, k, _d) in zip(parse_args("fake_quantize_per_channel_affine",
                                                                          _FQC_PARAMS, args, kwargs), _FQC_PARAMS))
    return _dispatch.dispatch(OPS["fake_quantize_per_channel_affine"], (x, scale, zp), (axis, qmin, qmax))
