"""int8 post-training quantization of linear layers (the seed's "int8: 4x smaller, slight accuracy hit").

Weights: per-output-channel absmax, ``scale[o] = max|W[o, :]| / 127`` (float32), ``q = round(W / scale)``
in ``[-127, 127]`` (symmetric; -128 unused), so ``|W - q * scale| <= scale / 2`` for every element (the
division runs in float64 so the rounding is exact). Activations: quantized dynamically per token (per
row of the flattened input) the same way, then ``x_q @ q.T`` runs on int8 operands with int32
accumulation and is rescaled by ``scale_x * scale_w`` in float32 — all of it one jitted kernel
(:func:`int8_linear`, an op of the op table).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._tensor.tensor import Tensor
from ..ops._registry import defop
from .._promotion import no_kernel

__all__ = ["int8_weight_quantize", "int8_linear", "int8_dequantize"]


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
