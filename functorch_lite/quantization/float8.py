"""float8 helpers: ``_scaled_mm`` (PyTorch's CPU emulation of the fp8 GEMM) and amax scaling.

float8 tensors are storage formats on CPU (spec §2: ``f8 + 1`` raises); the way to compute with them is
``torch._scaled_mm``, which upcasts both float8 operands to float32, multiplies each by its scale
(per tensor, or per row of ``a`` / per column of ``b``), runs one float32 matmul, adds the bias,
divides by ``scale_result`` when the output is float8, and casts to ``out_dtype`` (float8 outputs
saturate, as every cast to ``float8_e4m3fn`` does). Here it is one ``@defop`` (one jitted kernel),
with torch 2.13's argument checks and exception types.

``to_float8`` is the amax-scaling recipe of PyTorch's fp8 tutorials (activation/weight storage):
``scale = finfo(dtype).max / amax(x)``, ``x_f8 = clamp(x * scale).to(dtype)``, and it returns the
*inverse* scale, the form ``_scaled_mm`` takes: ``x ~= x_f8.float() * inv_scale``.
"""
from __future__ import annotations

import jax.numpy as jnp

from .. import dtypes as D
from .._tensor.tensor import Tensor
from .._tensor.views import shape_str as _shape_str
from ..ops._registry import defop

__all__ = ["_scaled_mm", "to_float8", "from_float8"]

_FP8_OUT = (D.float8_e4m3fn, D.float8_e5m2)


def _smm_rule(op, sig, sargs):
    """Output dtype: ``out_dtype``, else the dtype of ``self`` (torch's ``_scaled_mm_cpu``); no casts."""
    out_dtype = op.sarg(sargs, "out_dtype")
    out = D.as_dtype(out_dtype) if out_dtype is not None else sig[0][1]
    return (None,) * len(sig), (out,)


def _invalid_scaling(a: Tensor, b: Tensor, sa: Tensor, sb: Tensor) -> ValueError:
    m = a._shape[0] if a._shape else 1
    n = b._shape[1] if len(b._shape) > 1 else 1
    return ValueError(
        "Invalid scaling configuration.\n"
        "- For TensorWise scaling, a and b should be float8, scales should be float and singletons.\n"
        f"- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be ({m}, 1) "
        f"and scale_b should be (1, {n}), and both should be contiguous.\n"
        f"Got mat_a.dtype()={a.dtype.short}, scale_a.dtype()={sa.dtype.short}, scale_a.size()={_shape_str(sa._shape)}, "
        f"scale_a.stride()={_shape_str(sa.stride())}, mat_b.dtype()={b.dtype.short}, scale_b.dtype()="
        f"{sb.dtype.short}, scale_b.size()={_shape_str(sb._shape)} and scale_b.stride()={_shape_str(sb.stride())}")


def _is_fp8(t: Tensor) -> bool:
    return t.dtype in D.FLOAT8


def _smm_check(targs, sargs):
    """torch 2.13's checks, in its order: scaling recipe (ValueError), then matrix shapes (RuntimeError)."""
    a, b, sa, sb, bias, sr = targs
    for name, t in (("self", a), ("mat2", b), ("scale_a", sa), ("scale_b", sb)):
        if not isinstance(t, Tensor):
            raise TypeError(f"_scaled_mm(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if len(b._shape) > 2:  # torch transposes mat_b while checking the scaling recipe
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(b._shape)}D")
    fp8 = _is_fp8(a) and _is_fp8(b)
    tensorwise = fp8 and sa.dtype is D.float32 and sb.dtype is D.float32 and sa.numel() == 1 and sb.numel() == 1
    m = a._shape[0] if a._shape else None
    n = b._shape[1] if len(b._shape) == 2 else None
    rowwise = (fp8 and sa.dtype is D.float32 and sb.dtype is D.float32 and sa._shape == (m, 1)
               and sb._shape == (1, n))
    if not (tensorwise or rowwise):
        raise _invalid_scaling(a, b, sa, sb)
    if len(a._shape) != 2:
        raise RuntimeError("mat1 must be a matrix")
    if len(b._shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(f"mat_a and mat_b shapes cannot be multiplied ({a._shape[0]}x{a._shape[1]} and "
                           f"{b._shape[0]}x{b._shape[1]})")
    if not tensorwise:
        if sa.stride(1) != 1:
            raise ValueError(f"expected scale_a.stride(1) to be 1, but got {sa.stride(1)}")
        if sb.stride(1) != 1:
            raise ValueError(f"expected scale_b.stride(1) to be 1, but got {sb.stride(1)}")
    if sr is not None and (sr.numel() != 1 or sr.dtype is not D.float32):
        raise RuntimeError("scale_result must be a float scalar")
    if bias is not None:
        if bias.numel() != b._shape[1]:
            raise RuntimeError(f"Bias must be size {b._shape[1]} but got {bias.numel()}")
        if bias.dtype.is_complex:
            raise RuntimeError(f"result type {bias.dtype.short} can't be cast to the desired output type Float")


@defop("_scaled_mm", float8=True, promote=_smm_rule, tensors=6, method=False, function=False, differentiable=False,
       check=_smm_check, kernel="_scaled_mm", out=False)
def _scaled_mm(input, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False):
    """``torch._scaled_mm``: float8 GEMM with per-tensor or row/column-wise float32 scales.

    ``out = cast((a.float() * scale_a) @ (b.float() * scale_b) + bias [/ scale_result], out_dtype)``;
    ``scale_result`` is used only when ``out_dtype`` is a float8 type, ``use_fast_accum`` is accepted and
    ignored (as on CPU). ``out_dtype`` defaults to ``input``'s dtype.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import _scaled_mm
    >>> a = torch.ones(2, 4).to(torch.float8_e4m3fn); b = torch.ones(3, 4).to(torch.float8_e4m3fn).t()
    >>> _scaled_mm(a, b, torch.tensor(0.5), torch.tensor(1.0), out_dtype=torch.float32)[0, 0].item()
    2.0
    """
    fa = input.astype(jnp.float32) * _scale(scale_a)
    fb = mat2.astype(jnp.float32) * _scale(scale_b)
    out = jnp.matmul(fa, fb)
    if bias is not None:
        out = out + D.cast_array(bias, D.from_numpy_dtype(bias.dtype), D.float32)
    dt = D.as_dtype(out_dtype) if out_dtype is not None else D.from_numpy_dtype(input.dtype)
    if scale_result is not None and out_dtype is not None and D.as_dtype(out_dtype) in _FP8_OUT:
        out = out * (jnp.float32(1) / scale_result.astype(jnp.float32).reshape(()))
    return D.cast_array(out, D.float32, dt)


def _scale(s):
    s = s.astype(jnp.float32)
    return s.reshape(()) if s.size == 1 else s


def to_float8(x: Tensor, dtype: D.dtype = D.float8_e4m3fn, *, dim: int | None = None) -> tuple[Tensor, Tensor]:
    """Amax-scale ``x`` into a float8 dtype; returns ``(x_f8, inv_scale)`` with ``x ~= x_f8.float() * inv_scale``.

    ``scale = finfo(dtype).max / max(amax(|x|), 1e-12)`` per tensor (``dim=None``, a 0-dim float32 scale) or per
    slice along ``dim`` (``keepdim`` shape, e.g. ``(M, 1)`` for rows: the row-wise form ``_scaled_mm`` takes);
    the scaled values are clamped to the dtype's range before the cast, so nothing overflows.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import to_float8
    >>> x_f8, inv = to_float8(torch.tensor([1.0, -2.0, 0.5]))
    >>> x_f8.dtype, round(inv.item() * 448, 6)
    (torch.float8_e4m3fn, 2.0)
    """
    from ..dtypes import finfo
    dtype = D.as_dtype(dtype)
    if dtype not in D.FLOAT8:
        raise ValueError(f"to_float8: dtype must be a float8 dtype, got {dtype}")
    fi = finfo(dtype)
    amax = x.abs().max() if dim is None else x.abs().amax(dim=dim, keepdim=True)
    scale = fi.max / amax.float().clamp(min=1e-12)
    x_scl_sat = (x.float() * scale).clamp(min=fi.min, max=fi.max)
    return x_scl_sat.to(dtype), scale.float().reciprocal()


def from_float8(x_f8: Tensor, inv_scale: Tensor, dtype: D.dtype = D.float32) -> Tensor:
    """Undo :func:`to_float8`: ``x_f8.to(dtype) * inv_scale`` (in ``dtype``, float32 by default).

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import to_float8, from_float8
    >>> from_float8(*to_float8(torch.tensor([1.0, -2.0]))).tolist()
    [1.0, -2.0]
    """
    return x_f8.to(dtype) * inv_scale.to(dtype)
