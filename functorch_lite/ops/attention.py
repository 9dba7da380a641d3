"""Attention ops: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Each is ONE ``@defop`` with a pure jax body (one dispatch, one autograd Node). The Python wrappers
validate arguments with PyTorch 2.13's exact errors and pick the path PyTorch's CPU dispatcher would
take (its fused "flash" kernel or the math composite), because the two differ in observable ways:
the grad_fn name, whether ``attn_mask`` may be combined with ``is_causal``, and what a negative
``dropout_p`` does. Both paths give 0 (not NaN) for query rows whose keys are all masked out, and
compute the softmax in float32 for float16/bfloat16 inputs (as PyTorch's math path does).
"""
from __future__ import annotations

import math
import warnings

import jax

import jax.numpy as jnp

from .. import _promotion, dtypes as D
from ..backends import SDP_ENABLED as _SDP_ENABLED
from .._tensor.tensor import Tensor, preserve_format
from ._registry import _not_bool, defop
from .movement import lay_out as _lay_out
from .nn_ops import _on_device_of, check_linear_dtypes
from .._promotion import _cname, no_kernel
from .._warn import user_stacklevel as _user_stacklevel
from ..autograd.grad_mode import is_grad_enabled

__all__: list = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"
_FLOATS = ("float32", "float64", "float16", "bfloat16")


def _random_key(like: Tensor) -> Tensor:
    """A fresh PRNG key from the default generator, as a uint32 tensor on ``like``'s device."""
    from .. import random as _random
    key = jax.random.key_data(_random.default_generator.next_key())
    return Tensor._from_array(_on_device_of(key, like._array), D.uint32, like.device)


def _compute_dtype(dt):
    return jnp.float32 if dt in (jnp.float16, jnp.bfloat16) else dt


def _attend(q, k, v, mask, causal, scale, dropout_p, key, safe):
    """softmax(q @ k^T * scale + mask) @ v over the last two dims (leading dims broadcast).

    ``mask``: None, bool (True = take part) or additive float. ``safe``: fully masked rows give 0
    (PyTorch's SDPA) instead of NaN (plain softmax). Returns (output, attention probabilities)."""
    ct = _compute_dtype(q.dtype)
    q, k, v = q.astype(ct), k.astype(ct), v.astype(ct)
    s = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) * jnp.asarray(scale, ct)
    ninf = jnp.asarray(-jnp.inf, ct)
    if mask is not None:
        s = jnp.where(mask, s, ninf) if mask.dtype == jnp.bool_ else s + mask.astype(ct)
    if causal:
        L, S = s.shape[-2], s.shape[-1]
        s = jnp.where(jnp.tril(jnp.ones((L, S), jnp.bool_)), s, ninf)
    if safe:
        dead = jnp.all(s == ninf, axis=-1, keepdims=True)
        p = jax.nn.softmax(jnp.where(dead, jnp.zeros_like(s), s), axis=-1)
        p = jnp.where(dead, jnp.zeros_like(p), p)
    else:
        p = jax.nn.softmax(s, axis=-1)
    if dropout_p > 0.0:
        keep = jax.random.bernoulli(jax.random.wrap_key_data(key), max(0.0, 1.0 - dropout_p), p.shape)
        mul = 0.0 if dropout_p >= 1.0 else 1.0 / (1.0 - dropout_p)
        p = jnp.where(keep, p * jnp.asarray(mul, ct), jnp.zeros_like(p))
    return jnp.matmul(p, v), p


# ---- scaled_dot_product_attention ----------------------------------------------------------------
def _sdpa_rule(op, sig, sargs):
    """Output has the query's dtype; nothing is cast (the kernel upcasts half types itself)."""
    return (None,) * len(sig), (sig[0][1],)


def _sdpa_name(targs, sargs):
    q, k = targs[0], targs[1]
    if sargs[-1]:  # the flash flag
        return _FLASH
    if q._shape[-2] == 0 or k._shape[-2] == 0:
        return "AddBackward0"
    nd = max(len(t._shape) for t in targs[:3])
    return "MmBackward0" if nd == 2 else "UnsafeViewBackward0"


@defop("scaled_dot_product_attention", promote=_sdpa_rule, grad_fn=_sdpa_name, tensors=5, method=False,
       function=False, autocast="lower", kernel="scaled_dot_product_attention", broadcast=False)
def _sdpa(query, key, value, attn_mask, rng, dropout_p, is_causal, scale, enable_gqa, flash):
    """The SDPA kernel: one jitted body for every path (``rng``: uint32 key data when dropout is on)."""
    if enable_gqa:
        hq = query.shape[-3]
        key = jnp.repeat(key, hq // key.shape[-3], axis=-3)
        value = jnp.repeat(value, hq // value.shape[-3], axis=-3)
    out, _ = _attend(query, key, value, attn_mask, is_causal, scale, dropout_p, rng, True)
    return out


def _uses_flash(q: Tensor, k: Tensor, v: Tensor, mask, dropout_p: float, enable_gqa: bool) -> bool:
    """PyTorch 2.13's CPU backend choice (``torch._fused_sdp_choice``): True for the fused flash kernel. Its checks
    run in PyTorch's order (the dtype last); the mask-shape check reads the mask's dim -2, so a 0-D or 1-D mask
    raises PyTorch's IndexError here, while the math path (3-D or 2-D query...) broadcasts it."""
    if dropout_p > 0.0:
        return False
    if not (q.dim() == k.dim() == v.dim() == 4):
        return False
    qs, ks, vs = q._shape, k._shape, v._shape
    if not (qs[0] == ks[0] == vs[0]):
        return False
    if not (qs[1] == ks[1] == vs[1]):
        if not (enable_gqa and ks[1] == vs[1] and ks[1] > 0 and qs[1] % ks[1] == 0):
            return False
    if mask is not None:
        if mask._requires_grad:
            return False
        ms = mask._shape
        if len(ms) == 0:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions")
        if len(ms) == 1:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
        if ms[-2] not in (qs[2], 1) or ms[-1] not in (ks[2], 1):
            return False
        if len(ms) == 4:
            if ms[0] not in (1, qs[0]) or ms[1] not in (1, qs[1]):
                return False
        elif len(ms) != 2:
            return False
    if not (qs[3] == ks[3] == vs[3]) or qs[3] == 0:
        return False
    if qs[2] == 0 or ks[2] == 0:
        return False
    return all(t.stride(-1) == 1 for t in (q, k, v)) and q.dtype.name in _FLOATS


def _bc_error(a: tuple, b: tuple) -> None:
    """Raise PyTorch's broadcast error for shapes ``a`` and ``b`` if they do not broadcast."""
    from ._dispatch import broadcast_shapes
    broadcast_shapes(a, b)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, *, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``F.scaled_dot_product_attention``: ``softmax(q @ k^T * scale + mask) @ v``.

    A bool ``attn_mask`` marks with True the keys that take part; a float mask is added to the
    scores. ``is_causal`` masks with a top-left aligned lower triangle. Dropout (``dropout_p > 0``)
    draws a fresh mask from the default generator each call.

    >>> q = k = v = functorch_lite.randn(2, 4, 8, 16)
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
    functorch_lite.Size([2, 4, 8, 16])
    """
    from ._dispatch import autocast_args
    from ._registry import OPS
    if type(is_causal) is not bool or type(enable_gqa) is not bool:
        _not_bool("scaled_dot_product_attention", ("is_causal", "enable_gqa"), (is_causal, enable_gqa))
    q, k, v, m = autocast_args(OPS["scaled_dot_product_attention"], (query, key, value, attn_mask))
    if not (q.dtype is k.dtype and q.dtype is v.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cname(q.dtype)} key.dtype: {_cname(k.dtype)} and value.dtype: {_cname(v.dtype)} "
                           "instead.")
    if not (q.device == k.device == v.device):
        raise RuntimeError("Expected query, key, and value to have the same device type, but got query.device: "
                           f"{q.device} key.device: {k.device} and value.device: {v.device} instead.")
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{q.dim()} key.dim: {k.dim()} and value.dim: {v.dim()} instead.")
    if m is not None:
        if not (m.dtype is D.bool or m.dtype is D.float32 or m.dtype is q.dtype):
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_cname(m.dtype)} and  query.dtype: {_cname(q.dtype)} instead.")
    if enable_gqa:
        if q.dim() < 3:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{q.dim()}, {q.dim() - 1}], "
                             "but got -3)")
        hq, hk, hv = q._shape[-3], k._shape[-3], v._shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    sdp = _SDP_ENABLED
    flash = sdp["flash"] and _uses_flash(q, k, v, m, dropout_p, enable_gqa)
    if not flash and not sdp["math"] and (q.device.type != "cuda" or not (sdp["mem_efficient"] or sdp["cudnn"])):
        # (nn.attention.sdpa_kernel / backends.cuda.enable_*_sdp left no kernel PyTorch could run here: none enabled,
        # or only the flash kernel, which these inputs cannot take)
        if not sdp["flash"]:
            raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                               "turning off both the math kernel and the fused kernels.")
        raise RuntimeError("No available kernel.  Aborting execution.")
    if flash:
        if dropout_p != 0.0:
            raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0")
    else:
        if is_causal and m is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        if q.dtype in D.FLOAT8:  # PyTorch's math path first scales q, and has no float8 mul by a number
            raise no_kernel("mul_cpu_reduced_float", q.dtype)
        if q.dtype.name not in _FLOATS and not q.dtype.is_complex:
            # (torch's math path: its mm (2-D) / bmm of the scaled float query and key)
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: float != "
                               f"{_promotion._cname(q.dtype)}" if len(q._shape) == 2 else
                               f"expected scalar type Float but found {q.dtype.short}")
    _check_shapes(q, k, v, m, enable_gqa)
    if q.dtype.is_complex and 0 not in q._shape[:-1] and 0 not in k._shape[:-1]:
        # (the math path multiplies complex, then has no complex softmax; empty scores skip the softmax)
        raise no_kernel("softmax_lastdim_kernel_impl", q.dtype)
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    sc = float(scale) if scale is not None else 1.0 / math.sqrt(q._shape[-1]) if q._shape[-1] else math.inf
    p = float(dropout_p) if dropout_p > 0.0 else 0.0
    rng = _random_key(q) if p > 0.0 else None
    out = _sdpa(q, k, v, m, rng, p, bool(is_causal), sc, bool(enable_gqa), flash)
    # (PyTorch's CPU flash kernel allocates its output like the query, ``empty_like``: a (B, L, H, E) laid out
    # query -- nanoGPT's ``view(B, T, H, E).transpose(1, 2)`` -- gives an output that views back without a copy; an
    # empty output comes back contiguous)
    return _lay_out(out, query, preserve_format) if flash and 0 not in out._shape else out


def _check_shapes(q: Tensor, k: Tensor, v: Tensor, m, gqa: bool) -> None:
    """The math path's shape errors (from its batched matmuls and the in-place mask add)."""
    qs, ks, vs = q._shape, k._shape, v._shape
    kb, vb = ks[:-2], vs[:-2]
    if gqa:
        kb = kb[:-1] + qs[-3:-2]
        vb = vb[:-1] + qs[-3:-2]
    _bc_error(qs[:-2], kb)
    batch = _bshape(qs[:-2], kb)
    n = math.prod(batch)
    if qs[-1] != ks[-1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {qs[-1]}] "
                           f"but got: [{n}, {ks[-1]}].")
    _bc_error(batch, vb)
    batch = _bshape(batch, vb)
    n = math.prod(batch)
    if vs[-2] != ks[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {ks[-2]}] "
                           f"but got: [{n}, {vs[-2]}].")
    if m is not None:
        scores = _bshape(qs[:-2], kb) + (qs[-2], ks[-2])
        _bc_error(scores, m._shape)
        full = _bshape(scores, m._shape)
        if full != scores:
            raise RuntimeError(f"output with shape {list(scores)} doesn't match the broadcast shape {list(full)}")


def _bshape(a: tuple, b: tuple) -> tuple:
    nd = max(len(a), len(b))
    a = (1,) * (nd - len(a)) + tuple(a)
    b = (1,) * (nd - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b))


# ---- multi_head_attention_forward ----------------------------------------------------------------
def _mha_rule(op, sig, sargs):
    """Outputs have the query's dtype; integer/bool inputs have no kernel (PyTorch's addmm error)."""
    from .._promotion import no_kernel
    dt = sig[0][1]
    if dt is D.bool or dt.category < D.FLOAT:
        raise no_kernel("addmm_impl_cpu_", dt)
    return (None,) * len(sig), (dt, dt)


def _mha_name(targs, sargs):
    """torch squeezes an unbatched output (and weights); a batched one is a view of the output projection (a
    batch_first one then transposed by the module: ``_mha_forward``), its weights a view of the softmax (averaged
    over heads by a separate ``mean``)."""
    return "ViewBackward0" if sargs[-2] else "SqueezeBackward1"


def _additive(mask, dt):
    """PyTorch's ``_canonical_mask``: bool True -> -inf, False -> 0 (in ``dt``); float masks as ``dt``."""
    if mask is None:
        return None
    if mask.dtype == jnp.bool_:
        return jnp.where(mask, jnp.asarray(-jnp.inf, dt), jnp.asarray(0, dt))
    return mask.astype(dt)


def _pad1(m):
    return None if m is None else jnp.pad(m, [(0, 0)] * (m.ndim - 1) + [(0, 1)])


def _lin(x, w, b):
    r = jnp.matmul(x, w.T)
    return r if b is None else r + b


def _mha_check(targs, sargs):
    """The op's check: on the dtypes it sees, after autocast's casts (a bfloat16 query beside float32 weights is
    fine under autocast, as torch's)."""
    _check_mha_dtypes(targs[0], targs[3], targs[6], targs[11], targs[12], sargs[3], sargs[-2], sargs[-1])


@defop("multi_head_attention_forward", promote=_mha_rule, grad_fn=_mha_name, tensors=16, method=False,
       function=False, nout=2, kernel="addmm", broadcast=False, autocast="lower", check=_mha_check)
def _mha(query, key, value, w_in, w_k, w_v, b_in, bias_k, bias_v, w_o, b_o, attn_mask, kpm, static_k, static_v,
         rng, num_heads, add_zero_attn, dropout_p, need_weights, average, causal, safe, batched, batch_first):
    """Multi-head attention, time-first inside: projections, masks, attention, output projection."""
    dt = query.dtype
    if not batched:
        query, key, value = query[:, None], key[:, None], value[:, None]
        kpm = None if kpm is None else kpm[None]
    elif batch_first:
        query, key, value = (jnp.swapaxes(x, 0, 1) for x in (query, key, value))
    L, N, E = query.shape
    H = num_heads
    hd = E // H
    w_q = w_in
    if w_k is None:
        w_q, w_k, w_v = jnp.split(w_in, 3)
    b_q = b_k = b_v = None
    if b_in is not None:
        b_q, b_k, b_v = jnp.split(b_in, 3)
    q, k, v = _lin(query, w_q, b_q), _lin(key, w_k, b_k), _lin(value, w_v, b_v)
    am, km = _additive(attn_mask, dt), _additive(kpm, dt)
    if am is not None and am.ndim == 2:
        am = am[None]
    if bias_k is not None:
        k = jnp.concatenate([k, jnp.broadcast_to(bias_k.reshape(1, 1, E), (1, N, E))])
        v = jnp.concatenate([v, jnp.broadcast_to(bias_v.reshape(1, 1, E), (1, N, E))])
        am, km = _pad1(am), _pad1(km)
    q = jnp.swapaxes(q.reshape(L, N * H, hd), 0, 1)
    k = jnp.swapaxes(k.reshape(k.shape[0], N * H, hd), 0, 1) if static_k is None else static_k
    v = jnp.swapaxes(v.reshape(v.shape[0], N * H, hd), 0, 1) if static_v is None else static_v
    if add_zero_attn:
        k = jnp.concatenate([k, jnp.zeros((N * H, 1, hd), k.dtype)], axis=1)
        v = jnp.concatenate([v, jnp.zeros((N * H, 1, hd), v.dtype)], axis=1)
        am, km = _pad1(am), _pad1(km)
    S = k.shape[1]
    if km is not None:
        km = jnp.broadcast_to(km.reshape(N, 1, 1, S), (N, H, 1, S)).reshape(N * H, 1, S)
        am = km if am is None else am + km
    scale = 1.0 / math.sqrt(hd) if hd else math.inf
    if need_weights:
        o, p = _attend(q, k, v, am, False, scale, dropout_p, rng, False)
        w = p.astype(dt).reshape(N, H, L, S)
        if average:
            w = jnp.mean(w, axis=1)
        if not batched:
            w = w[0]
    else:
        if am is not None:
            am = am[None] if am.shape[0] == 1 else am.reshape(N, H, -1, S)
        o, _ = _attend(q.reshape(N, H, L, hd), k.reshape(N, H, S, hd), v.reshape(N, H, S, hd), am, causal,
                       scale, dropout_p, rng, safe)
        w = jnp.zeros((0,), dt)
    o = jnp.swapaxes(o.astype(dt).reshape(N * H, L, hd), 0, 1).reshape(L * N, E)
    o = _lin(o, w_o, b_o).reshape(L, N, E)
    if not batched:
        o = o[:, 0]
    elif batch_first and not safe:  # (PyTorch's fused inference path returns it batch-first, contiguous)
        o = jnp.swapaxes(o, 0, 1)
    return o, w


def _check_mha_dtypes(query: Tensor, w: Tensor, b, attn_mask, kpm, need_weights: bool, batched: bool,
                      batch_first: bool) -> None:
    """PyTorch's dtype errors from the projections (``linear`` of the time-first query torch makes: a transposed
    view when batch_first, an unsqueezed one when unbatched) and the score matmul (``baddbmm``/SDPA)."""
    qd = query.dtype
    shape, st = query._shape, query.stride()
    if not batched:
        shape, st = (shape[0], 1, shape[1]), (st[0], st[1] * shape[1], st[1])
    elif batch_first:
        shape, st = (shape[1], shape[0]) + shape[2:], (st[1], st[0]) + st[2:]
    check_linear_dtypes(qd, shape, st, w, b)
    dts = [qd if m.dtype is D.bool else m.dtype for m in (attn_mask, kpm) if m is not None]
    if not dts:
        return
    from .._promotion import promote_types
    md = dts[0] if len(dts) == 1 else promote_types(dts[0], dts[1])
    if need_weights and md is not qd:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cname(md)}, batch1: {_cname(qd)}, "
                           f"batch2: {_cname(qd)}")
    if not need_weights and md is not qd and md is not D.float32:
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_cname(md)} and  query.dtype: {_cname(qd)} instead.")


def _check_mask_dtype(mask, name: str) -> None:
    if mask is not None and mask.dtype is not D.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")


def _size(shape) -> str:
    return f"torch.Size({list(shape)})"


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, kpm, attn_mask, num_heads: int) -> bool:
    """PyTorch's ``_mha_shape_check``: validates dims and returns whether the input is batched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if kpm is not None and kpm.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                                 f" but found {kpm.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                                 f" but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if kpm is not None and kpm.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                                 f" but found {kpm.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                                     f" but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query._shape[0], key._shape[0])
                if attn_mask._shape != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{_size(attn_mask._shape)}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
        add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
        training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
        k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
        ) -> tuple[Tensor, Tensor | None]:
    """``F.multi_head_attention_forward`` (time-first ``(L, N, E)`` or unbatched ``(L, E)`` inputs).

    Returns ``(attn_output, attn_weights)``; weights are None unless ``need_weights``. One dispatch.
    """
    return _mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
                        bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
                        key_padding_mask, need_weights, attn_mask, use_separate_proj_weight, q_proj_weight,
                        k_proj_weight, v_proj_weight, static_k, static_v, average_attn_weights, is_causal, False)


def _mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                 add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
                 need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
                 static_k, static_v, average_attn_weights, is_causal, batch_first, fast_path=False):
    """Validation with PyTorch's errors (on time-first shapes), then the one ``_mha`` dispatch.

    ``fast_path``: PyTorch's module would take its fused inference path, whose softmax gives NaN (not 0)
    for fully masked rows also without weights."""
    kpm = key_padding_mask
    batched = _mha_shape_check(query, key, value, kpm, attn_mask, num_heads)

    def tf(t):  # the time-first shape PyTorch validates
        s = tuple(t._shape)
        if not batched:
            return (s[0], 1) + s[1:]
        return (s[1], s[0]) + s[2:] if batch_first else s
    qs, ks, vs = tf(query), tf(key), tf(value)
    tgt_len, bsz, embed_dim = qs
    src_len = ks[0]
    _check_mask_dtype(kpm, "key_padding_mask")
    if kpm is not None and attn_mask is not None and kpm.dtype is not attn_mask.dtype:
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for "
                      "both instead.", UserWarning, stacklevel=_user_stacklevel())
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and kpm is None and not need_weights:
        attn_mask = None
    else:
        _check_mask_dtype(attn_mask, "attn_mask")
        is_causal = False  # with weights or a padding mask the explicit mask is used
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if ks[:2] != vs[:2]:
            raise AssertionError(f"key's sequence and batch dims {_size(ks[:2])} do not match value's "
                                 f"{_size(vs[:2])}")
        for w, n in ((q_proj_weight, "q"), (k_proj_weight, "k"), (v_proj_weight, "v")):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {n}_proj_weight is None")
        E = embed_dim
        for w, shp, n in ((q_proj_weight, (E, E), "query"), (k_proj_weight, (E, ks[-1]), "key"),
                          (v_proj_weight, (E, vs[-1]), "value")):
            if w._shape != shp:
                raise AssertionError(f"expecting {n} weights shape of {shp}, but got {_size(w._shape)}")
        if in_proj_bias is not None and in_proj_bias._shape != (3 * E,):
            chunk = -(-in_proj_bias._shape[0] // 3)  # the first of ``in_proj_bias.chunk(3)``
            raise AssertionError(f"expecting query bias shape of {(E,)}, but got {_size((chunk,))}")
        w_in, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if ks != vs:
            raise AssertionError(f"key shape {_size(ks)} does not match value shape {_size(vs)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_in, w_k, w_v = in_proj_weight, None, None
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask._shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask._shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
        elif attn_mask.dim() == 3:
            if attn_mask._shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask._shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        if ks[1] != bsz:  # (torch's ``cat([k, bias_k.repeat(1, bsz, 1)])``)
            raise RuntimeError(f"Sizes of tensors must match except in dimension 0. Expected size {ks[1]} but got "
                               f"size {bsz} for tensor number 1 in the list.")
        src_len += 1
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    for st, n, shp in ((static_k, "static_k", ks), (static_v, "static_v", vs)):
        if st is None:  # (torch's ``k.view(k.shape[0], bsz * num_heads, head_dim)``: the key's batch must match)
            rows = shp[0] + (1 if bias_k is not None else 0)
            if rows * shp[1] != rows * bsz:
                raise RuntimeError(f"shape '[{rows}, {bsz * num_heads}, {head_dim}]' is invalid for input of size "
                                   f"{rows * shp[1] * embed_dim}")
        else:
            if st._shape[0] != bsz * num_heads:
                raise AssertionError(f"expecting {n}.size(0) of {bsz * num_heads}, but got {st._shape[0]}")
            if st._shape[2] != head_dim:
                raise AssertionError(f"expecting {n}.size(2) of {head_dim}, but got {st._shape[2]}")
    if static_k is not None:
        src_len = static_k._shape[1]
    if add_zero_attn:
        src_len += 1
    if kpm is not None:
        ksz = (1,) + kpm._shape if not batched else kpm._shape
        if ksz[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {ksz[0]}")
        kpm_len = ksz[1] + (1 if bias_k is not None else 0) + (1 if add_zero_attn else 0)
        if kpm_len != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got {kpm_len}")
    p = float(dropout_p) if training and dropout_p > 0.0 else 0.0
    if p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    rng = _random_key(query) if p > 0.0 else None
    # (torch averages batched weights over the heads with a ``mean`` (MeanBackward1): a second op when a graph may
    # be recorded, else in the kernel)
    mean = need_weights and average_attn_weights and batched and is_grad_enabled()
    out, w = _mha(query, key, value, w_in, w_k, w_v, in_proj_bias, bias_k, bias_v, out_proj_weight, out_proj_bias,
                  attn_mask, kpm, static_k, static_v, rng, int(num_heads), bool(add_zero_attn), p,
                  bool(need_weights), bool(average_attn_weights) and not mean, bool(is_causal), not fast_path, batched,
                  bool(batch_first))
    if batch_first and batched and not fast_path:
        out = out.transpose(1, 0)  # (torch's module returns ``attn_output.transpose(1, 0)``: a view)
    if not need_weights:
        return out, None
    return out, (w.mean(dim=1) if mean else w)
