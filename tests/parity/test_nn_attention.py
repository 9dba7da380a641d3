"""F.scaled_dot_product_attention, F.multi_head_attention_forward and nn.MultiheadAttention against
real PyTorch 2.13 (CPU): values, dtypes, shapes, gradients, grad_fn names, errors, state_dict."""
import re
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import functorch_lite as ft
import functorch_lite.nn.functional as F

R = np.random.default_rng(3)


def rnd(*s):
    return R.standard_normal(s)


def _both(arrays, dtype, grad=True):
    t = [None if a is None else torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=grad) for a in arrays]
    f = [None if a is None else ft.tensor(a, dtype=getattr(ft, dtype), requires_grad=grad) for a in arrays]
    return t, f


def _close(ours, theirs, tol):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().float().numpy() if ours.dtype in (ft.float16, ft.bfloat16)
                               else ours.detach().numpy(),
                               theirs.detach().float().numpy() if theirs.dtype in (torch.float16, torch.bfloat16)
                               else theirs.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)


# ---- scaled_dot_product_attention: values, gradients, grad_fn -------------------------------------------
def _bool(*s, p=0.7):
    m = R.random(s) < p
    m[..., 0] = True  # no fully masked row (tested separately)
    return m


SDPA = {
    "plain4d": ([rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 8)], None, {}),
    "causal_L<S": ([rnd(2, 3, 4, 8), rnd(2, 3, 6, 8), rnd(2, 3, 6, 8)], None, dict(is_causal=True)),
    "causal_L>S": ([rnd(1, 2, 6, 8), rnd(1, 2, 3, 8), rnd(1, 2, 3, 8)], None, dict(is_causal=True)),
    "causal_3d": ([rnd(3, 5, 4), rnd(3, 5, 4), rnd(3, 5, 4)], None, dict(is_causal=True)),
    "bool_mask_2d": ([rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 8)], _bool(4, 5), {}),
    "bool_mask_4d_bcast": ([rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 8)], _bool(2, 1, 4, 5), {}),
    "float_mask_2d": ([rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 8)], rnd(4, 5), {}),
    "float_mask_3d_math": ([rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 8)], rnd(3, 4, 5), {}),
    "causal_and_mask_flash": ([rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 8)], rnd(4, 5), dict(is_causal=True)),
    "scale": ([rnd(2, 2, 4, 8), rnd(2, 2, 5, 8), rnd(2, 2, 5, 8)], None, dict(scale=0.37)),
    "gqa_flash": ([rnd(2, 4, 3, 8), rnd(2, 2, 5, 8), rnd(2, 2, 5, 8)], None, dict(enable_gqa=True)),
    "gqa_kv_heads_differ": ([rnd(2, 4, 3, 8), rnd(2, 2, 5, 8), rnd(2, 1, 5, 8)], None, dict(enable_gqa=True)),
    "gqa_5d": ([rnd(2, 2, 4, 3, 8), rnd(2, 2, 2, 5, 8), rnd(2, 2, 2, 5, 8)], None, dict(enable_gqa=True)),
    "unbatched_2d": ([rnd(4, 8), rnd(5, 8), rnd(5, 8)], _bool(4, 5), {}),
    "batch_3d": ([rnd(3, 4, 8), rnd(3, 5, 8), rnd(3, 5, 8)], None, {}),
    "broadcast_batch": ([rnd(2, 3, 4, 8), rnd(1, 3, 5, 8), rnd(1, 3, 5, 8)], None, {}),
    "value_dim_differs": ([rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 6)], None, {}),
    "q2d_k3d": ([rnd(4, 8), rnd(3, 5, 8), rnd(3, 5, 8)], None, {}),
    "empty_keys": ([rnd(2, 3, 4, 8), rnd(2, 3, 0, 8), rnd(2, 3, 0, 8)], None, {}),
}


_F32 = ("plain4d", "bool_mask_2d", "gqa_flash", "float_mask_3d_math")


@pytest.mark.parametrize("name,dtype", [(n, "float64") for n in sorted(SDPA)] + [(n, "float32") for n in _F32])
def test_sdpa_values_grads_grad_fn(name, dtype):
    arrays, mask, kw = SDPA[name]
    (tq, tk, tv), (fq, fk, fv) = _both(arrays, dtype)
    tm = fm = None
    if mask is not None:
        mdt = "bool" if mask.dtype == bool else dtype
        tm, fm = torch.tensor(mask, dtype=getattr(torch, mdt)), ft.tensor(mask, dtype=getattr(ft, mdt))
    t_out = TF.scaled_dot_product_attention(tq, tk, tv, tm, **kw)
    f_out = F.scaled_dot_product_attention(fq, fk, fv, fm, **kw)
    tol = 1e-10 if dtype == "float64" else 2e-5
    _close(f_out, t_out, tol)
    assert type(f_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    w = rnd(*t_out.shape)
    (t_out * torch.tensor(w, dtype=t_out.dtype)).sum().backward()
    (f_out * ft.tensor(w, dtype=f_out.dtype)).sum().backward()
    for a, b in ((fq, tq), (fk, tk), (fv, tv)):
        _close(a.grad, b.grad, tol * 10)


def test_sdpa_float_mask_gradient():
    (tq, tk, tv, tm), (fq, fk, fv, fm) = _both([rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 8), rnd(4, 5)],
                                                "float64")
    t_out, f_out = TF.scaled_dot_product_attention(tq, tk, tv, tm), F.scaled_dot_product_attention(fq, fk, fv, fm)
    assert type(f_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "UnsafeViewBackward0"
    (t_out ** 2).sum().backward()
    (f_out ** 2).sum().backward()
    _close(fm.grad, tm.grad, 1e-10)
    _close(fq.grad, tq.grad, 1e-10)


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (2, 3, 4)])
def test_sdpa_fully_masked_rows_give_zeros(mask_kind, shape):
    L = shape[-2]
    m = np.ones((L, L), bool)
    m[1] = False
    mask = m if mask_kind == "bool" else np.where(m, 0.0, -np.inf)
    (tq, tk, tv), (fq, fk, fv) = _both([rnd(*shape), rnd(*shape), rnd(*shape)], "float32")
    mdt = "bool" if mask_kind == "bool" else "float32"
    t_out = TF.scaled_dot_product_attention(tq, tk, tv, torch.tensor(mask, dtype=getattr(torch, mdt)))
    f_out = F.scaled_dot_product_attention(fq, fk, fv, ft.tensor(mask, dtype=getattr(ft, mdt)))
    _close(f_out, t_out, 2e-5)
    assert not np.any(f_out.detach().numpy()[..., 1, :])
    t_out.sum().backward()
    f_out.sum().backward()
    for a, b in ((fq, tq), (fk, tk), (fv, tv)):
        _close(a.grad, b.grad, 1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 2, 4, 8), (2, 4, 8)])
def test_sdpa_half_precision(dtype, shape):
    (tq, tk, tv), (fq, fk, fv) = _both([rnd(*shape), rnd(*shape), rnd(*shape)], dtype, grad=False)
    t_out = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    f_out = F.scaled_dot_product_attention(fq, fk, fv, is_causal=True)
    _close(f_out, t_out, 1e-2 if dtype == "float16" else 2e-2)
    if len(shape) == 3:  # PyTorch's math path: softmax in float32, one rounding at the end
        ref = TF.scaled_dot_product_attention(tq.float(), tk.float(), tv.float(), is_causal=True).to(tq.dtype)
        np.testing.assert_array_equal(f_out.float().numpy(), ref.float().numpy())


def test_sdpa_path_choice_matches_torch():
    """The flash/math choice (it decides grad_fn names and errors) agrees with torch._fused_sdp_choice."""
    from functorch_lite.ops.attention import _uses_flash
    cases = [((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), None, 0.0, False),
             ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), (4, 5), 0.1, False),
             ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), (1, 5), 0.0, False),
             ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), (4, 1), 0.0, False),
             ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), (3, 4, 5), 0.0, False),
             ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), (1, 3, 4, 5), 0.0, False),
             ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), (2, 2, 4, 5), 0.0, False),
             ((2, 4, 4, 8), (2, 2, 5, 8), (2, 2, 5, 8), None, 0.0, True),
             ((2, 4, 4, 8), (2, 2, 5, 8), (2, 1, 5, 8), None, 0.0, True),
             ((2, 3, 4, 8), (1, 3, 5, 8), (1, 3, 5, 8), None, 0.0, False),
             ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), None, 0.0, False),
             ((2, 3, 0, 8), (2, 3, 5, 8), (2, 3, 5, 8), None, 0.0, False),
             ((3, 4, 8), (3, 5, 8), (3, 5, 8), None, 0.0, False)]
    for qs, ks, vs, ms, p, gqa in cases:
        t = [torch.zeros(s) for s in (qs, ks, vs)]
        f = [ft.zeros(s) for s in (qs, ks, vs)]
        tm = None if ms is None else torch.zeros(ms)
        fm = None if ms is None else ft.zeros(ms)
        want = torch._fused_sdp_choice(*t, tm, p, False, scale=None, enable_gqa=gqa) == 1
        assert _uses_flash(*f, fm, p, gqa) == want, (qs, ks, vs, ms, p, gqa)


# ---- dropout ----------------------------------------------------------------------------------------------
def _uniform_attention(S=200, L=16, p=0.3):
    q = ft.zeros(1, 1, L, 4)
    k = ft.zeros(1, 1, S, 4)
    v = ft.eye(S).reshape(1, 1, S, S).requires_grad_()
    return q, k, v, F.scaled_dot_product_attention(q, k, v, dropout_p=p)


def test_sdpa_dropout_statistics_and_gradient():
    ft.manual_seed(0)
    S, p = 200, 0.3
    _, _, v, out = _uniform_attention(S, p=p)
    o = out.detach().numpy()
    zero_frac = np.mean(o == 0)
    assert abs(zero_frac - p) < 0.03, zero_frac
    np.testing.assert_allclose(o[o != 0], 1.0 / (S * (1 - p)), rtol=1e-5)
    assert type(out.grad_fn).__name__ == "UnsafeViewBackward0"  # PyTorch's math path, as with dropout there
    out.sum().backward()  # the backward reuses the forward's dropout mask
    np.testing.assert_allclose(v.grad.numpy()[0, 0], np.broadcast_to(o[0, 0].sum(0)[:, None], (S, S)), rtol=1e-5)


def test_sdpa_dropout_reproducible_and_fresh():
    ft.manual_seed(123)
    a = _uniform_attention()[3].detach().numpy()
    b = _uniform_attention()[3].detach().numpy()
    ft.manual_seed(123)
    c = _uniform_attention()[3].detach().numpy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)


def test_sdpa_dropout_one_and_zero():
    (tq, tk, tv), (fq, fk, fv) = _both([rnd(2, 2, 3, 4), rnd(2, 2, 5, 4), rnd(2, 2, 5, 4)], "float32", grad=False)
    _close(F.scaled_dot_product_attention(fq, fk, fv, dropout_p=1.0),
           TF.scaled_dot_product_attention(tq, tk, tv, dropout_p=1.0), 0)
    _close(F.scaled_dot_product_attention(fq, fk, fv, dropout_p=0.0),
           TF.scaled_dot_product_attention(tq, tk, tv, dropout_p=0.0), 2e-5)


# ---- errors -----------------------------------------------------------------------------------------------
def _sdpa_err_cases():
    q, k, v = rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 8)
    f32 = "float32"
    return {
        "dtype_mismatch": ([(q, f32), (k, "float64"), (v, f32)], {}),
        "int_inputs": ([(q, "int64"), (k, "int64"), (v, "int64")], {}),
        "bool_inputs": ([(q, "bool"), (k, "bool"), (v, "bool")], {}),
        "one_dim": ([(q[0, 0, 0], f32), (k[0, 0, 0], f32), (v[0, 0, 0], f32)], {}),
        "mask_dtype": ([(q, f32), (k, f32), (v, f32), (rnd(4, 5), "float64")], {}),
        "mask_int": ([(q, f32), (k, f32), (v, f32), (rnd(4, 5), "int64")], {}),
        "mask_1d": ([(q, f32), (k, f32), (v, f32), (rnd(5) > 0, "bool")], {}),
        "mask_shape": ([(q, f32), (k, f32), (v, f32), (rnd(4, 6) > 0, "bool")], {}),
        "mask_too_many_dims": ([(q, f32), (k, f32), (v, f32), (rnd(1, 2, 3, 4, 5) > 0, "bool")], {}),
        "causal_with_mask_math": ([(q[0], f32), (k[0], f32), (v[0], f32), (rnd(4, 5) > 0, "bool")],
                                  dict(is_causal=True)),
        "gqa_not_divisible": ([(rnd(2, 3, 4, 8), f32), (rnd(2, 2, 5, 8), f32), (rnd(2, 2, 5, 8), f32)],
                              dict(enable_gqa=True)),
        "heads_without_gqa": ([(rnd(2, 4, 4, 8), f32), (rnd(2, 2, 5, 8), f32), (rnd(2, 2, 5, 8), f32)], {}),
        "gqa_2d": ([(q[0, 0], f32), (k[0, 0], f32), (v[0, 0], f32)], dict(enable_gqa=True)),
        "qk_dim_mismatch": ([(q, f32), (k[..., :6], f32), (v, f32)], {}),
        "kv_len_mismatch_math": ([(q[0], f32), (k[0], f32), (v[0, :, :4], f32)], {}),
        "batch_mismatch": ([(q, f32), (rnd(3, 3, 5, 8), f32), (rnd(3, 3, 5, 8), f32)], {}),
        "dropout_above_one": ([(q, f32), (k, f32), (v, f32)], dict(dropout_p=1.5)),
        "negative_dropout_flash": ([(q, f32), (k, f32), (v, f32)], dict(dropout_p=-0.5)),
    }


@pytest.mark.parametrize("name", sorted(_sdpa_err_cases()))
def test_sdpa_errors_match_torch(name):
    args, kw = _sdpa_err_cases()[name]
    t_args = [torch.tensor(a).to(getattr(torch, d)) for a, d in args]
    f_args = [ft.tensor(a).to(getattr(ft, d)) for a, d in args]
    with pytest.raises(Exception) as t_err:
        TF.scaled_dot_product_attention(*t_args, **kw)
    with pytest.raises(type(t_err.value), match=re.escape(str(t_err.value))):
        F.scaled_dot_product_attention(*f_args, **kw)


def test_sdpa_negative_dropout_on_math_path_is_no_dropout():
    (tq, tk, tv), (fq, fk, fv) = _both([rnd(3, 4, 8), rnd(3, 5, 8), rnd(3, 5, 8)], "float32", grad=False)
    _close(F.scaled_dot_product_attention(fq, fk, fv, dropout_p=-0.5),
           TF.scaled_dot_product_attention(tq, tk, tv, dropout_p=-0.5), 2e-5)


# ---- MultiheadAttention ---------------------------------------------------------------------------------
def _pair(E=8, H=2, dtype="float32", **kw):
    """torch's module and ours with torch's state_dict loaded into ours (train mode: PyTorch's slow path)."""
    torch.manual_seed(0)
    th = torch.nn.MultiheadAttention(E, H, dtype=getattr(torch, dtype), **kw)
    ours = ft.nn.MultiheadAttention(E, H, dtype=getattr(ft, dtype), **kw)
    r = ours.load_state_dict({k: ft.tensor(v.numpy()) for k, v in th.state_dict().items()})
    assert not r.missing_keys and not r.unexpected_keys
    return th, ours


def _masks(kind, N, L, S, H):
    """(attn_mask, key_padding_mask) numpy arrays for a mask scenario (bool True = masked out)."""
    kpm = R.random((N, S)) < 0.3
    kpm[:, 0] = False
    am = R.random((L, S)) < 0.3
    am[:, 0] = False
    return {"none": (None, None), "attn_bool": (am, None), "attn_float_3d": (rnd(N * H, L, S), None),
            "kpm_bool": (None, kpm), "both_bool": (am, kpm), "kpm_float": (None, np.where(kpm, -np.inf, 0.0)),
            "attn_float_2d_kpm_float": (rnd(L, S), np.where(kpm, -1e9, 0.0))}[kind]


def _run_mha(th, ours, arrays, masks, dtype, **kw):
    (tq, tk, tv), (fq, fk, fv) = _both(arrays, dtype)
    tm = [None if m is None else torch.tensor(m) if m.dtype == bool else torch.tensor(m, dtype=getattr(torch, dtype))
          for m in masks]
    fm = [None if m is None else ft.tensor(m) if m.dtype == bool else ft.tensor(m, dtype=getattr(ft, dtype))
          for m in masks]
    t_out, t_w = th(tq, tk, tv, key_padding_mask=tm[1], attn_mask=tm[0], **kw)
    f_out, f_w = ours(fq, fk, fv, key_padding_mask=fm[1], attn_mask=fm[0], **kw)
    return (tq, tk, tv, t_out, t_w), (fq, fk, fv, f_out, f_w)


def _compare_mha(th, ours, t, f, tol):
    tq, tk, tv, t_out, t_w = t
    fq, fk, fv, f_out, f_w = f
    _close(f_out, t_out, tol)
    assert type(f_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    if t_w is None:
        assert f_w is None
    else:
        _close(f_w, t_w, tol)
    w = rnd(*t_out.shape)
    loss_t = (t_out * torch.tensor(w, dtype=t_out.dtype)).sum()
    loss_f = (f_out * ft.tensor(w, dtype=f_out.dtype)).sum()
    if t_w is not None and not torch.isnan(t_w).any():
        loss_t = loss_t + (t_w ** 2).sum()
        loss_f = loss_f + (f_w ** 2).sum()
    loss_t.backward()
    loss_f.backward()
    for a, b in ((fq, tq), (fk, tk), (fv, tv)):
        _close(a.grad, b.grad, tol * 10)
    t_params = dict(th.named_parameters())
    f_params = dict(ours.named_parameters())
    assert list(f_params) == list(t_params)
    for n, p in t_params.items():
        _close(f_params[n].grad, p.grad, tol * 10)


MHA_GRID = [("none", False, True, True), ("attn_bool", True, False, True), ("attn_float_3d", False, True, False),
            ("both_bool", False, False, True), ("kpm_float", False, True, True),
            ("attn_float_2d_kpm_float", True, True, False)]


@pytest.mark.parametrize("mask,batch_first,need_weights,average", MHA_GRID)
def test_mha_matches_torch(mask, batch_first, need_weights, average):
    E, H, N, L, S = 8, 2, 3, 4, 5
    th, ours = _pair(E, H, "float64", batch_first=batch_first)
    shp = (lambda n: (N, n, E)) if batch_first else (lambda n: (n, N, E))
    t, f = _run_mha(th, ours, [rnd(*shp(L)), rnd(*shp(S)), rnd(*shp(S))], _masks(mask, N, L, S, H), "float64",
                    need_weights=need_weights, average_attn_weights=average)
    _compare_mha(th, ours, t, f, 1e-10)


@pytest.mark.parametrize("variant", ["kdim_vdim", "bias_kv_zero_attn", "no_bias", "unbatched_masks",
                                     "self_attention_batch_first", "float32"])
def test_mha_variants_match_torch(variant):
    E, H, N, L, S = 8, 4, 2, 3, 5
    kw, dtype, tol = {}, "float64", 1e-10
    shapes = [(L, N, E), (S, N, E), (S, N, E)]
    masks = _masks("both_bool", N, L, S, H)
    if variant == "kdim_vdim":
        kw = dict(kdim=6, vdim=3)
        shapes = [(L, N, E), (S, N, 6), (S, N, 3)]
    elif variant == "bias_kv_zero_attn":
        kw = dict(add_bias_kv=True, add_zero_attn=True)
    elif variant == "no_bias":
        kw = dict(bias=False)
    elif variant.startswith("unbatched"):
        shapes = [(L, E), (S, E), (S, E)]
        am, kpm = R.random((H, L, S)) < 0.4, R.random(S) < 0.3
        am[..., 0] = kpm[0] = False
        masks = (am, kpm)
    elif variant == "self_attention_batch_first":
        kw = dict(batch_first=True)
        shapes = [(N, L, E)] * 3
        masks = (None, None)
    elif variant == "float32":
        dtype, tol = "float32", 2e-5
    th, ours = _pair(E, H, dtype, **kw)
    arrays = [rnd(*s) for s in shapes]
    if variant == "self_attention_batch_first":
        (tx,), (fx,) = _both(arrays[:1], dtype)
        t_out, t_w = th(tx, tx, tx)
        f_out, f_w = ours(fx, fx, fx)
        t, f = (tx, tx, tx, t_out, t_w), (fx, fx, fx, f_out, f_w)
    else:
        t, f = _run_mha(th, ours, arrays, masks, dtype)
    _compare_mha(th, ours, t, f, tol)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_is_causal_hint(need_weights):
    E, H, N, L = 8, 2, 2, 4
    th, ours = _pair(E, H, "float64")
    causal = np.triu(np.ones((L, L), bool), 1)
    t, f = _run_mha(th, ours, [rnd(L, N, E)] * 3, (causal, None), "float64", need_weights=need_weights,
                    is_causal=True)
    _compare_mha(th, ours, t, f, 1e-10)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fully_masked_rows(need_weights):
    """NaN rows with need_weights (plain softmax), zeros without (SDPA), as in PyTorch."""
    E, H, N, L, S = 8, 2, 2, 3, 4
    th, ours = _pair(E, H, "float64")
    kpm = np.zeros((N, S), bool)
    kpm[1] = True
    (tq, tk, tv), (fq, fk, fv) = _both([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)], "float64", grad=False)
    with torch.no_grad():
        t_out, t_w = th(tq, tk, tv, key_padding_mask=torch.tensor(kpm), need_weights=need_weights)
    f_out, f_w = ours(fq, fk, fv, key_padding_mask=ft.tensor(kpm), need_weights=need_weights)
    assert np.isnan(t_out.numpy()).any() == need_weights
    _close(f_out, t_out, 1e-10)


def test_mha_functional_matches_torch():
    E, H, L, N, S = 6, 3, 4, 2, 5
    arrays = [rnd(L, N, E), rnd(S, N, E), rnd(S, N, E), rnd(3 * E, E) * 0.4, rnd(3 * E) * 0.1, rnd(E, E) * 0.4,
              rnd(E) * 0.1, rnd(1, 1, E), rnd(1, 1, E)]
    t, f = _both(arrays, "float64")
    kpm = R.random((N, S)) < 0.3
    t_out, t_w = TF.multi_head_attention_forward(*t[:3], E, H, t[3], t[4], t[7], t[8], True, 0.0, t[5], t[6],
                                                 key_padding_mask=torch.tensor(kpm), average_attn_weights=False)
    f_out, f_w = F.multi_head_attention_forward(*f[:3], E, H, f[3], f[4], f[7], f[8], True, 0.0, f[5], f[6],
                                                key_padding_mask=ft.tensor(kpm), average_attn_weights=False)
    _close(f_out, t_out, 1e-10)
    _close(f_w, t_w, 1e-10)
    (t_out.sum() + t_w.sum()).backward()
    (f_out.sum() + f_w.sum()).backward()
    for a, b in zip(f, t):
        _close(a.grad, b.grad, 1e-9)


def test_mha_dropout_training():
    E, H, N, L, S = 8, 2, 2, 16, 64
    ours = ft.nn.MultiheadAttention(E, H, dropout=0.25)
    x, y = ft.tensor(rnd(L, N, E), dtype=ft.float32), ft.tensor(rnd(S, N, E), dtype=ft.float32)
    ft.manual_seed(5)
    o1, w1 = ours(x, y, y, average_attn_weights=False)
    o2, w2 = ours(x, y, y, average_attn_weights=False)
    ft.manual_seed(5)
    o3, w3 = ours(x, y, y, average_attn_weights=False)
    np.testing.assert_array_equal(o1.detach().numpy(), o3.detach().numpy())
    assert not np.array_equal(w1.detach().numpy(), w2.detach().numpy())
    assert abs(np.mean(w1.detach().numpy() == 0) - 0.25) < 0.04
    ours.eval()
    _, we = ours(x, y, y)
    np.testing.assert_allclose(we.detach().numpy().sum(-1), 1.0, rtol=1e-5)


def test_mha_init_state_dict_and_repr():
    for kw in [{}, dict(kdim=5, vdim=3), dict(add_bias_kv=True), dict(bias=False)]:
        th, ours = torch.nn.MultiheadAttention(8, 2, **kw), ft.nn.MultiheadAttention(8, 2, **kw)
        assert list(ours.state_dict()) == list(th.state_dict())
        assert [n for n, _ in ours.named_parameters()] == [n for n, _ in th.named_parameters()]
        assert repr(ours) == repr(th)
        assert type(ours.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    ft.manual_seed(0)
    m = ft.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    w = m.in_proj_weight.detach().numpy()
    bound = np.sqrt(6.0 / (64 + 3 * 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound
    assert not np.any(m.in_proj_bias.detach().numpy()) and not np.any(m.out_proj.bias.detach().numpy())
    ow = m.out_proj.weight.detach().numpy()
    assert np.abs(ow).max() <= 1 / 8 and np.abs(ow).max() > 0.9 / 8
    bk = np.concatenate([m.bias_k.detach().numpy().ravel(), m.bias_v.detach().numpy().ravel()])
    assert abs(bk.std() - 1 / 8) < 0.04  # xavier_normal_ on (1, 1, E): std = 1/sqrt(E)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        ft.nn.MultiheadAttention(10, 4)
    with pytest.raises(ValueError, match=re.escape("embed_dim and num_heads must be greater than 0, got "
                                                   "embed_dim=0 and num_heads=2 instead")):
        ft.nn.MultiheadAttention(0, 2)


def _mha_err_cases():
    L, N, S, E = 3, 2, 4, 8
    return {
        "query_4d": ([rnd(1, L, N, E), rnd(1, S, N, E), rnd(1, S, N, E)], {}),
        "key_2d_for_batched": ([rnd(L, N, E), rnd(S, E), rnd(S, E)], {}),
        "embed_mismatch": ([rnd(L, N, 6), rnd(S, N, 6), rnd(S, N, 6)], {}),
        "key_value_shape": ([rnd(L, N, E), rnd(S, N, E), rnd(S + 1, N, E)], {}),
        "attn_mask_2d_shape": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)], dict(attn_mask=R.random((L, L)) > 0)),
        "attn_mask_3d_shape": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)], dict(attn_mask=R.random((2, L, S)) > 0)),
        "attn_mask_4d": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)], dict(attn_mask=R.random((1, 1, L, S)) > 0)),
        "kpm_shape": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)], dict(key_padding_mask=R.random((N, S + 1)) > 0)),
        "kpm_batch": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)], dict(key_padding_mask=R.random((N + 1, S)) > 0)),
        "kpm_int": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)],
                    dict(key_padding_mask=np.zeros((N, S), np.int64))),
        "float32_mask_float64_query": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)],
                                       dict(attn_mask=rnd(L, S).astype(np.float32))),
        "float32_kpm_float64_query": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)],
                                      dict(key_padding_mask=rnd(N, S).astype(np.float32))),
        "query_dtype_vs_weights": ([rnd(L, N, E).astype(np.float32)] * 3, {}),
        "causal_without_mask": ([rnd(L, N, E), rnd(S, N, E), rnd(S, N, E)], dict(is_causal=True)),
        "unbatched_3d_mask_shape": ([rnd(L, E), rnd(S, E), rnd(S, E)], dict(attn_mask=R.random((3, L, S)) > 0)),
    }


@pytest.mark.parametrize("name", sorted(_mha_err_cases()))
def test_mha_errors_match_torch(name):
    arrays, kw = _mha_err_cases()[name]
    th, ours = _pair(8, 2, "float64")
    t_args = [torch.tensor(a) for a in arrays]
    f_args = [ft.tensor(a) for a in arrays]
    with pytest.raises(Exception) as t_err:
        th(*t_args, **{k: torch.tensor(v) for k, v in kw.items() if k != "is_causal"},
           **{k: v for k, v in kw.items() if k == "is_causal"})
    with pytest.raises(type(t_err.value), match=re.escape(str(t_err.value))):
        ours(*f_args, **{k: ft.tensor(v) for k, v in kw.items() if k != "is_causal"},
             **{k: v for k, v in kw.items() if k == "is_causal"})


def test_mha_mismatched_mask_types_warn():
    L, N, S, E = 3, 2, 4, 8
    th, ours = _pair(E, 2, "float64")
    am, kpm = rnd(L, S), R.random((N, S)) < 0.3
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        ours(*[ft.tensor(rnd(*s)) for s in ((L, N, E), (S, N, E), (S, N, E))], key_padding_mask=ft.tensor(kpm),
             attn_mask=ft.tensor(am))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours(*[ft.tensor(rnd(*s)) for s in ((L, N, E), (S, N, E), (S, N, E))], key_padding_mask=ft.tensor(kpm))


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_inference_fast_path_fully_masked_rows(need_weights):
    """PyTorch's fused inference path (eval, no grad, self-attention, batch_first) gives NaN rows also
    without weights; the same module with grad enabled gives zeros."""
    th, ours = _pair(8, 2, "float32", batch_first=True)
    th.eval()
    ours.eval()
    x = rnd(2, 5, 8)
    kpm = np.zeros((2, 5), bool)
    kpm[0, 3:] = True
    kpm[1] = True
    with torch.no_grad():
        tx = torch.tensor(x, dtype=torch.float32)
        t_out, t_w = th(tx, tx, tx, key_padding_mask=torch.tensor(kpm), need_weights=need_weights)
    with ft.no_grad():
        fx = ft.tensor(x, dtype=ft.float32)
        f_out, f_w = ours(fx, fx, fx, key_padding_mask=ft.tensor(kpm), need_weights=need_weights)
    assert np.isnan(t_out.numpy()[1]).all()
    _close(f_out, t_out, 2e-5)
    if need_weights:
        _close(f_w, t_w, 2e-5)
    tx = torch.tensor(x, dtype=torch.float32)
    fx = ft.tensor(x, dtype=ft.float32)
    t_slow, _ = th(tx, tx, tx, key_padding_mask=torch.tensor(kpm), need_weights=need_weights)
    f_slow, _ = ours(fx, fx, fx, key_padding_mask=ft.tensor(kpm), need_weights=need_weights)
    _close(f_slow, t_slow, 2e-5)
