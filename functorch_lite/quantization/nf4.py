"""NF4: QLoRA's 4-bit NormalFloat weight quantization (Dettmers et al. 2023; bitsandbytes' code table).

A weight is flattened (row-major), zero-padded to a multiple of ``block_size`` (64) and cut into blocks;
each block stores its absmax ``c`` (float32) and, per element, the index of the NF4 code nearest to
``w / c`` (16 codes in [-1, 1], quantiles of a normal distribution, exact zero included). Two 4-bit
indices are packed per uint8, the first element in the high nibble (bitsandbytes' layout). So
``|w - c * code| <= c * max_gap / 2`` where ``max_gap`` is the largest gap between adjacent codes.

Double quantization (QLoRA §3): the float32 absmax values are themselves quantized — their mean is
subtracted and the rest stored as int8 with one float32 absmax scale per block of 256 (QLoRA uses an
8-bit float there; symmetric int8 is used here, same size) — cutting the scale overhead from
32/64 = 0.5 to ~8.1/64 bits per weight.

Dequantization runs inside the forward: :func:`nf4_linear` unpacks, looks up the codes, scales them and
multiplies, all in one jitted kernel.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from ..ops._registry import defop
from .int8 import _float_input_rule, _to_f32

__all__ = ["NF4_CODE", "NF4_MAX_HALF_GAP", "nf4_quantize", "blockwise_int8_quantize", "nf4_dequantize",
           "nf4_linear"]

#: The 16 NF4 code values (bitsandbytes ``get_4bit_type('nf4')``, the QLoRA paper's Appendix E).
NF4_CODE = np.array([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
    0.7229568362236023, 1.0], dtype=np.float32)
#: Half the largest gap between adjacent codes (between -1 and -0.696...): the per-block error bound / absmax.
NF4_MAX_HALF_GAP = float(np.max(np.diff(NF4_CODE.astype(np.float64))) / 2)
_MIDS = (NF4_CODE[1:].astype(np.float64) + NF4_CODE[:-1].astype(np.float64)) / 2
DQ_BLOCK = 256


def _blocks(flat, block_size: int):
    pad = (-flat.shape[0]) % block_size
    if pad:
        flat = jnp.concatenate([flat, jnp.zeros((pad,), flat.dtype)])
    return flat.reshape(-1, block_size)


def _bs_prep(targs, sargs):
    bs = sargs[-1]
    if not isinstance(bs, int) or bs <= 0 or bs % 2:
        raise ValueError(f"block_size must be a positive even integer, got {bs!r}")
    return sargs


@defop("nf4_quantize", float8=True, promote=_float_input_rule("nf4_quantize", lambda dt: (D.uint8, D.float32)),
       tensors=1,
       method=False, function=False, differentiable=False, nout=2, prep=_bs_prep, out=False)
def nf4_quantize(weight, block_size=64):
    """Block-wise NF4: ``(packed uint8 (ceil(numel / block_size) * block_size / 2,), absmax float32 (blocks,))``.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import nf4_quantize
    >>> packed, absmax = nf4_quantize(torch.tensor([[1.0, -1.0, 0.0, 0.5]]), 4)
    >>> packed.tolist(), absmax.tolist()
    ([240, 124], [1.0])
    """
    blocks = _blocks(weight.reshape(-1).astype(jnp.float64), block_size)
    absmax = jnp.max(jnp.abs(blocks), axis=1).astype(jnp.float32)
    c = jnp.where(absmax > 0, absmax, jnp.float32(1)).astype(jnp.float64)
    idx = jnp.searchsorted(jnp.asarray(_MIDS), (blocks / c[:, None]).reshape(-1)).astype(jnp.uint8)
    packed = (idx[0::2] << jnp.uint8(4)) | idx[1::2]
    return packed, absmax


@defop("blockwise_int8_quantize",float8=True, 
       promote=_float_input_rule("blockwise_int8_quantize", lambda dt: (D.int8, D.float32, D.float32)), tensors=1,
       method=False, function=False, differentiable=False, nout=3, prep=_bs_prep, out=False)
def blockwise_int8_quantize(input, block_size=DQ_BLOCK):
    """Double quantization of a 1-D float tensor: ``(q int8, scale float32 (blocks,), offset float32 ())``,
    ``input ~= q * scale[block] + offset`` with ``offset = mean(input)`` and per-block absmax scales.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import blockwise_int8_quantize
    >>> q, s, m = blockwise_int8_quantize(torch.tensor([1.0, 3.0]), 2)
    >>> q.tolist(), s.tolist(), m.item()
    ([-127, 127], [0.007874015718698502], 2.0)
    """
    x = input.reshape(-1).astype(jnp.float64)
    offset = jnp.mean(x).astype(jnp.float32)
    n = x.shape[0]
    blocks = _blocks(x - offset.astype(jnp.float64), block_size)
    amax = jnp.max(jnp.abs(blocks), axis=1, keepdims=True)
    scale = jnp.where(amax > 0, amax / 127.0, 1.0).astype(jnp.float32)
    q = jnp.clip(jnp.round(blocks / scale.astype(jnp.float64)), -127, 127).astype(jnp.int8)
    return q.reshape(-1)[:n], scale.reshape(-1), offset


def dequant_absmax(absmax, absmax_scale, absmax_offset, dq_block: int = DQ_BLOCK):
    """float32 absmax values: as stored, or ``q * scale[block] + offset`` after double quantization."""
    if absmax_scale is None:
        return _to_f32(absmax)
    n = absmax.shape[0]
    per = jnp.repeat(_to_f32(absmax_scale), dq_block)[:n]
    return absmax.astype(jnp.float32) * per + _to_f32(absmax_offset).reshape(())


def dequant_nf4(packed, absmax, absmax_scale, absmax_offset, shape, block_size, dq_block=DQ_BLOCK):
    """jnp body shared by :func:`nf4_dequantize` and :func:`nf4_linear`: float32 weight of ``shape``."""
    idx = jnp.stack([packed >> jnp.uint8(4), packed & jnp.uint8(15)], axis=-1).reshape(-1)
    codes = jnp.take(jnp.asarray(NF4_CODE), idx.astype(jnp.int32), axis=0).reshape(-1, block_size)
    c = dequant_absmax(absmax, absmax_scale, absmax_offset, dq_block)
    numel = 1
    for s in shape:
        numel *= s
    return (codes * c[:, None]).reshape(-1)[:numel].reshape(shape)


def _dq_check(targs, sargs):
    packed, absmax, scale, offset = targs[:4]
    if packed.dtype is not D.uint8:
        raise RuntimeError(f"NF4 codes must be a uint8 tensor, got {packed.dtype}")
    if (scale is None) != (offset is None):
        raise RuntimeError("absmax_scale and absmax_offset go together (double quantization)")
    if scale is not None and absmax.dtype is not D.int8:
        raise RuntimeError(f"double-quantized absmax must be int8, got {absmax.dtype}")


def _dq_rule(op, sig, sargs):
    if sig[0][1] is not D.uint8:
        raise no_uint8(op, sig[0][1])
    return (None,) * len(sig), (D.float32,)


def no_uint8(op, dt):
    return RuntimeError(f"{op.name}: NF4 codes must be a uint8 tensor, got {dt}")


@defop("nf4_dequantize", float8=True, promote=_dq_rule, tensors=4, method=False, function=False, differentiable=False,
       check=_dq_check, out=False)
def nf4_dequantize(packed, absmax, absmax_scale=None, absmax_offset=None, shape=(), block_size=64):
    """The float32 weight of ``shape`` that NF4 ``(packed, absmax[, absmax_scale, absmax_offset])`` stands for.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import nf4_quantize, nf4_dequantize
    >>> nf4_dequantize(*nf4_quantize(torch.tensor([[1.0, -1.0, 0.0, 0.5]]), 4), shape=(1, 4), block_size=4).tolist()
    [[1.0, -1.0, 0.0, 0.44070982933044434]]
    """
    return dequant_nf4(packed, absmax, absmax_scale, absmax_offset, shape, block_size)


def _nf4_lin_check(targs, sargs):
    _dq_check(targs[1:5], sargs)
    x, bias = targs[0], targs[5]
    out_f, in_f = sargs[0], sargs[1]
    k = x._shape[-1] if x._shape else 1
    if k != in_f:
        rows = 1
        for d in x._shape[:-1]:
            rows *= d
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {in_f}x{out_f})")
    if bias is not None and bias._shape != (out_f,):
        raise RuntimeError(f"nf4_linear: bias must have shape ({out_f},), got {tuple(bias._shape)}")


@defop("nf4_linear", float8=True, promote=_float_input_rule("nf4_linear", lambda dt: (dt,)), tensors=6, method=False,
       function=False, check=_nf4_lin_check, out=False, grad_fn="MatMul4BitBackward")
def nf4_linear(input, packed, absmax, absmax_scale=None, absmax_offset=None, bias=None, out_features=1,
               in_features=1, block_size=64):
    """``input @ W.T + bias`` with ``W`` dequantized from NF4 on the fly (float32 compute, float64 for float64
    inputs; ``input``'s dtype out). Differentiable in ``input`` and ``bias`` (QLoRA trains adapters through the
    frozen 4-bit base), never in the quantized weight.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import nf4_quantize, nf4_linear
    >>> p, a = nf4_quantize(torch.tensor([[1.0, -1.0]]), 2)
    >>> nf4_linear(torch.tensor([[2.0, 1.0]]), p, a, out_features=1, in_features=2, block_size=2).item()
    1.0
    """
    cdt = D.float64 if input.dtype == jnp.float64 else D.float32
    w = dequant_nf4(packed, absmax, absmax_scale, absmax_offset, (out_features, in_features), block_size)
    out = jnp.matmul(D.cast_array(input, D.from_numpy_dtype(input.dtype), cdt), w.astype(cdt.jnp).T)
    if bias is not None:
        out = out + D.cast_array(bias, D.from_numpy_dtype(bias.dtype), cdt)
    return out
