"""Op-table sweep cases for functorch_lite/quantization (float8 ``_scaled_mm``, int8, NF4, torch's ``_int_mm`` and
fake quantization); merged into _op_cases.py by its ``_merge`` and also run directly by test_float8.py.
``GRAD_CASES``: the differentiable ops other than NF4's (``_scaled_mm``, whose node's backward raises, and fake
quantization's straight-through gradients), merged into _op_cases.CASES apart from ``CASES`` (test_float8 checks
the NF4 node's name on every case of ``CASES``).

``FORWARD_ONLY[name] = (input arrays, fn(mod, *tensors))`` (``CASES`` likewise, for ``nf4_linear``, the one
differentiable op, whose gradient the gradient sweep checks); ``mod`` is torch or functorch_lite. For torch the
quantization ops are written out here with torch ops (the reference: same math, float64 where the op uses
it); ``_scaled_mm`` is torch's own. Each fn casts its inputs so that every sweep dtype (float16, bfloat16,
int64, bool) exercises the op, and returns one tensor (several outputs are concatenated).
"""
import numpy as np
import torch

import functorch_lite.quantization as Q
from functorch_lite.quantization import int8 as Q8

R = np.random.default_rng(13)
NF4 = torch.tensor(Q.NF4_CODE)
MIDS = (NF4[1:].double() + NF4[:-1].double()) / 2
# name -> (input arrays (each requires grad in the gradient sweep), fn(mod, *tensors))
CASES = {}


def _rnd(*s):
    return R.standard_normal(s)


def _bytes(*s):
    return R.integers(0, 256, s).astype(np.float64)


def _is_torch(m):
    return m is torch


def _f(x):
    """Floating inputs keep their dtype; integer/bool ones become float32."""
    return x if x.is_floating_point() else x.float()


# ---- torch references ---------------------------------------------------------------------------------------
def ref_int8_weight_quantize(w):
    w64 = w.double()
    amax = w64.abs().amax(dim=1, keepdim=True)
    scale = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax)).float()
    q = torch.round(w64 / scale.double()).clamp(-127, 127).to(torch.int8)
    return q, scale.squeeze(1)


def ref_int8_linear(x, q, s, b=None):
    xf = x.float()
    amax = xf.abs().amax(dim=-1, keepdim=True)
    sx = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
    xq = torch.round(xf / sx).clamp(-127, 127)
    acc = (xq.double() @ q.double().T).float()  # exact: int32 accumulation of int8 products
    out = acc * sx * s.float()
    if b is not None:
        out = out + b.float()
    return out.to(x.dtype)


def _blocks(flat, bs):
    pad = (-flat.numel()) % bs
    if pad:
        flat = torch.cat([flat, flat.new_zeros(pad)])
    return flat.view(-1, bs)


def ref_nf4_quantize(w, bs=64):
    blocks = _blocks(w.double().reshape(-1), bs)
    absmax = blocks.abs().amax(dim=1).float()
    c = torch.where(absmax > 0, absmax, torch.ones_like(absmax)).double()
    idx = torch.searchsorted(MIDS, (blocks / c[:, None]).reshape(-1).contiguous()).to(torch.uint8)
    return (idx[0::2] << 4) | idx[1::2], absmax


def ref_blockwise_int8_quantize(x, bs=256):
    x64 = x.reshape(-1).double()
    offset = x64.mean().float()
    blocks = _blocks(x64 - offset.double(), bs)
    amax = blocks.abs().amax(dim=1, keepdim=True)
    scale = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax)).float()
    q = torch.round(blocks / scale.double()).clamp(-127, 127).to(torch.int8)
    return q.reshape(-1)[:x64.numel()], scale.reshape(-1), offset


def ref_nf4_dequantize(packed, absmax, scale=None, offset=None, shape=(), bs=64):
    idx = torch.stack([packed >> 4, packed & 15], dim=-1).reshape(-1).long()
    codes = NF4[idx].reshape(-1, bs)
    if scale is None:
        c = absmax.float()
    else:
        c = absmax.float() * scale.float().repeat_interleave(256)[:absmax.numel()] + offset.float()
    n = int(np.prod(shape))
    return (codes * c[:, None]).reshape(-1)[:n].reshape(shape)


# ---- cases ----------------------------------------------------------------------------------------------------
def _smm(m, a, b, bias):
    f8 = m.float8_e4m3fn
    fa, fb = a.float().to(f8), b.float().to(m.float8_e5m2).t()
    sa, sb = m.tensor(0.5), m.tensor(2.0)
    fn = torch._scaled_mm if _is_torch(m) else Q._scaled_mm
    return fn(fa, fb, sa, sb, bias=bias.float(), out_dtype=m.float32)


def _wq(m, w):
    q, s = (ref_int8_weight_quantize if _is_torch(m) else Q.int8_weight_quantize)(_f(w))
    return m.cat([q.float().reshape(-1), s])


def _lin8(m, x, w, b):
    if _is_torch(m):
        q, s = ref_int8_weight_quantize(w.float())
        return ref_int8_linear(_f(x), q, s, _f(b))
    q, s = Q.int8_weight_quantize(w.float())
    return Q.int8_linear(_f(x), q, s, _f(b))


def _nf4q(m, w):
    p, a = (ref_nf4_quantize if _is_torch(m) else Q.nf4_quantize)(_f(w), 64)
    return m.cat([p.float(), a])


def _bq(m, x):
    q, s, o = (ref_blockwise_int8_quantize if _is_torch(m) else Q.blockwise_int8_quantize)(_f(x), 256)
    return m.cat([q.float(), s, o.reshape(1)])


def _nf4dq(m, packed, a):
    p = packed.to(m.int64).remainder(256).to(m.uint8)
    a8 = (a.to(m.int64).remainder(255) - 127).to(m.int8)
    scale, offset = m.tensor([0.01, 0.02]), m.tensor(1.5)
    if _is_torch(m):
        return ref_nf4_dequantize(p, a8, scale, offset, (20, 32), 64)
    return Q.nf4_dequantize(p, a8, scale, offset, shape=(20, 32), block_size=64)


def _nf4lin(m, x, w, b):
    """Differentiable in x and b (float64 compute for float64 inputs); the quantized w gets no gradient."""
    x = _f(x)
    if _is_torch(m):
        p, a = ref_nf4_quantize(w.detach().float(), 64)
        cdt = torch.float64 if x.dtype == torch.float64 else torch.float32
        wd = ref_nf4_dequantize(p, a, shape=(6, 40), bs=64).to(cdt)
        return (x.to(cdt) @ wd.T + _f(b).to(cdt)).to(x.dtype)
    p, a = Q.nf4_quantize(w.detach().float(), 64)
    return Q.nf4_linear(x, p, a, None, None, _f(b), 6, 40, 64)


def _smm_times_bias(m, a, b, bias):
    """``_scaled_mm`` has no derivative (its NotImplemented node's backward raises, as torch's): its detached result
    times the bias, which gets the gradient."""
    return _smm(m, a.detach(), b.detach(), bias.detach()) * bias


def _i8(m, x):
    return x.float().mul(20).round().clamp(-128, 127).to(m.int8)


def _int_mm(m, a, b):
    return (torch._int_mm if _is_torch(m) else Q8._int_mm)(_i8(m, a), _i8(m, b))


def _fq_tensor(m, x):
    fn = torch.fake_quantize_per_tensor_affine if _is_torch(m) else Q8.fake_quantize_per_tensor_affine
    return fn(x, 0.1, 3, -20, 20)


def _fq_channel(m, x):
    fn = torch.fake_quantize_per_channel_affine if _is_torch(m) else Q8.fake_quantize_per_channel_affine
    return fn(x, m.tensor([0.1, 0.05, 0.2]), m.tensor([0, 3, -2], dtype=m.int32), 0, -20, 20)


_SMM_ARRAYS = [_rnd(4, 16), _rnd(6, 16), _rnd(6)]  # (drawn first, where the forward-only case drew them)
FORWARD_ONLY = {
    "int8_weight_quantize": ([_rnd(5, 12)], _wq),
    "int8_linear": ([_rnd(2, 3, 12), _rnd(5, 12), _rnd(5)], _lin8),
    "nf4_quantize": ([_rnd(7, 20)], _nf4q),
    "blockwise_int8_quantize": ([_rnd(300) + 2.0], _bq),
    "nf4_dequantize": ([_bytes(320), _bytes(10)], _nf4dq),
}
CASES["nf4_linear"] = ([_rnd(3, 40), _rnd(6, 40), _rnd(6)], _nf4lin)
FORWARD_ONLY["_int_mm"] = ([_rnd(5, 8), _rnd(8, 3)], _int_mm)
GRAD_CASES = {
    "_scaled_mm": (_SMM_ARRAYS, _smm_times_bias),
    "fake_quantize_per_tensor_affine": ([_rnd(3, 5) * 2], _fq_tensor),
    "fake_quantize_per_channel_affine": ([_rnd(3, 5) * 2], _fq_channel),
}
