"""nn.Transformer, TransformerEncoder/Decoder and their layers against real PyTorch 2.13 (CPU): torch's weights
copied in, then outputs and parameter/input gradients compared; masks, causal hints, train/eval, the eval fast
paths (NaN rows, nested-tensor zeros), state_dict keys, init, generate_square_subsequent_mask, errors."""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.nn as nn

import _parity

R = np.random.default_rng(7)
D, H, FF = 8, 2, 16
TOL, GTOL = 2e-5, 1e-4


def rnd(*s):
    return R.standard_normal(s).astype(np.float32)


def _both(build):
    """The same architecture from torch.nn and functorch_lite.nn, torch's weights copied into ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, fm = build(torch.nn), build(nn)
    assert list(fm.state_dict().keys()) == list(tm.state_dict().keys())
    r = fm.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    assert r.missing_keys == [] and r.unexpected_keys == []
    return tm, fm


def _t(a, grad=False):
    if a is None:
        return None, None
    if a.dtype == bool:
        return torch.tensor(a), ft.tensor(a)
    return torch.tensor(a, requires_grad=grad), ft.tensor(a, requires_grad=grad)


def _close(ours, theirs, tol=TOL, what=""):
    assert str(ours.dtype) == str(theirs.dtype), what
    assert tuple(ours.shape) == tuple(theirs.shape), what
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol, equal_nan=True,
                               err_msg=what)


def _fwd(tm, fm, arrays, kw_arrays=None, flags=None, what=""):
    """Outputs of both modules on the same inputs without autograd (cheap: no backward program to build)."""
    kws = {k: _t(a) for k, a in (kw_arrays or {}).items()}
    with torch.no_grad(), ft.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = tm(*[torch.tensor(a) for a in arrays], **{k: v[0] for k, v in kws.items()}, **(flags or {}))
        f_out = fm(*[ft.tensor(a) for a in arrays], **{k: v[1] for k, v in kws.items()}, **(flags or {}))
    _close(f_out, t_out, what=what)
    return t_out.numpy(), f_out.numpy()


def _fwd_bwd(tm, fm, arrays, kw_arrays=None, flags=None):
    """Call both modules on the same inputs (positional ``arrays`` need grad; ``kw_arrays`` are masks), compare
    the outputs, then backpropagate the same weighted sum and compare every parameter's and input's grad."""
    kw_arrays, flags = kw_arrays or {}, flags or {}
    pos = [_t(a, grad=True) for a in arrays]
    kws = {k: _t(a) for k, a in kw_arrays.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = tm(*[p[0] for p in pos], **{k: v[0] for k, v in kws.items()}, **flags)
        f_out = fm(*[p[1] for p in pos], **{k: v[1] for k, v in kws.items()}, **flags)
    _close(f_out, t_out)
    w = rnd(*t_out.shape)
    (t_out * torch.tensor(w)).sum().backward()
    (f_out * ft.tensor(w)).sum().backward()
    fp = dict(fm.named_parameters())
    for name, p in tm.named_parameters():
        assert (fp[name].grad is None) == (p.grad is None), name
        if p.grad is not None:
            _close(fp[name].grad, p.grad, GTOL)
    for tx, fx in pos:
        _close(fx.grad, tx.grad, GTOL)
    return t_out, f_out


def _causal(n):
    return np.triu(np.full((n, n), -np.inf, np.float32), 1)


def _kpm(n, s):
    m = np.zeros((n, s), bool)
    m[0, s - 2:] = True
    return m


def _act(spec):
    """activation argument for library ``m`` (torch.nn or functorch_lite.nn)."""
    return {"relu": lambda m: "relu", "gelu": lambda m: "gelu", "fn_silu": lambda m: m.functional.silu,
            "mod_gelu_tanh": lambda m: m.GELU(approximate="tanh"), "F.gelu": lambda m: m.functional.gelu}[spec]


def _seq_first(a, batch_first):
    return a if batch_first else np.swapaxes(a, 0, 1).copy()


# ---- TransformerEncoderLayer ----------------------------------------------------------------------------
ENC_MASKS = {
    "none": ({}, {}),
    "float_mask": ({"src_mask": rnd(5, 5)}, {}),
    "bool_mask": ({"src_mask": np.triu(np.ones((5, 5), bool), 2)}, {}),
    "causal_is_causal": ({"src_mask": _causal(5)}, {"is_causal": True}),
    "kpm_bool": ({"src_key_padding_mask": _kpm(2, 5)}, {}),
    "kpm_float_and_mask": ({"src_key_padding_mask": np.where(_kpm(2, 5), -np.inf, 0).astype(np.float32),
                            "src_mask": rnd(5, 5)}, {}),
    "mask_3d": ({"src_mask": rnd(2 * H, 5, 5)}, {}),
}


# every mask set is compared forward; gradients (one backward program per graph, slow to build) on one set
# per configuration
ENC_BWD = {(False, False): "kpm_float_and_mask", (False, True): "causal_is_causal", (True, False): "mask_3d",
           (True, True): "kpm_bool"}


@pytest.mark.parametrize("norm_first,batch_first", [(False, False), (True, True), (False, True)])
def test_encoder_layer_train(norm_first, batch_first):
    tm, fm = _both(lambda m: m.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=batch_first,
                                                       norm_first=norm_first))
    x = _seq_first(rnd(2, 5, D), batch_first)
    for name, (kw, flags) in ENC_MASKS.items():
        _fwd(tm, fm, [x], kw, flags, what=name)
    kw, flags = ENC_MASKS[ENC_BWD[norm_first, batch_first]]
    _fwd_bwd(tm, fm, [x], kw, flags)


def test_encoder_layer_activations():
    x = rnd(5, 2, D) * 3
    for act in ["relu", "gelu", "fn_silu", "mod_gelu_tanh", "F.gelu"]:
        tm, fm = _both(lambda m: m.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation=_act(act)(m)))
        assert fm.activation_relu_or_gelu == tm.activation_relu_or_gelu
        _fwd(tm, fm, [x], {"src_key_padding_mask": _kpm(2, 5)}, what=act)
    _fwd_bwd(tm, fm, [x], {"src_key_padding_mask": _kpm(2, 5)})  # the last: F.gelu


def test_encoder_layer_unbatched_and_bias_false_and_eps():
    tm, fm = _both(lambda m: m.TransformerEncoderLayer(D, H, FF, dropout=0.0, bias=False, layer_norm_eps=1e-3))
    _fwd_bwd(tm, fm, [rnd(5, D)], {"src_mask": _causal(5)})


def test_encoder_layer_repr_and_submodules():
    tm, fm = _both(lambda m: m.TransformerEncoderLayer(D, H, FF, activation=m.GELU()))
    assert repr(fm) == repr(tm)
    assert [n for n, _ in fm.named_modules()] == [n for n, _ in tm.named_modules()]


def test_encoder_layer_dropout_one_is_deterministic():
    tm, fm = _both(lambda m: m.TransformerEncoderLayer(D, H, FF, dropout=1.0))
    _fwd_bwd(tm, fm, [rnd(5, 2, D)])


# ---- TransformerDecoderLayer ----------------------------------------------------------------------------
DEC_MASKS = {
    "none": ({}, {}),
    "tgt_causal_mem_kpm": ({"tgt_mask": _causal(4), "memory_key_padding_mask": _kpm(2, 5)}, {}),
    "tgt_is_causal": ({"tgt_mask": _causal(4)}, {"tgt_is_causal": True}),
    "bool_tgt_mask_tgt_kpm": ({"tgt_mask": np.triu(np.ones((4, 4), bool), 1),
                               "tgt_key_padding_mask": _kpm(2, 4)}, {}),
    "float_memory_mask": ({"memory_mask": rnd(4, 5)}, {}),
}


DEC_BWD = {(False, False): "tgt_causal_mem_kpm", (False, True): "bool_tgt_mask_tgt_kpm", (True, False): "tgt_is_causal",
           (True, True): "float_memory_mask"}


@pytest.mark.parametrize("norm_first,batch_first", [(False, False), (True, True), (False, True)])
def test_decoder_layer_train(norm_first, batch_first):
    tm, fm = _both(lambda m: m.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=batch_first,
                                                       norm_first=norm_first))
    xs = [_seq_first(rnd(2, 4, D), batch_first), _seq_first(rnd(2, 5, D), batch_first)]
    for name, (kw, flags) in DEC_MASKS.items():
        _fwd(tm, fm, xs, kw, flags, what=name)
    kw, flags = DEC_MASKS[DEC_BWD[norm_first, batch_first]]
    _fwd_bwd(tm, fm, xs, kw, flags)


def test_decoder_layer_activations_unbatched():
    xs = [rnd(4, D) * 3, rnd(5, D)]
    for act in ["relu", "gelu", "fn_silu", "mod_gelu_tanh"]:
        tm, fm = _both(lambda m: m.TransformerDecoderLayer(D, H, FF, dropout=0.0, activation=_act(act)(m)))
        assert repr(fm) == repr(tm)
        _fwd(tm, fm, xs, {"tgt_mask": _causal(4)}, what=act)
    _fwd_bwd(tm, fm, xs, {"tgt_mask": _causal(4)})  # the last: GELU(approximate='tanh')


def test_decoder_layer_eval_matches():
    tm, fm = _both(lambda m: m.TransformerDecoderLayer(D, H, FF, batch_first=True).eval())
    xs = [rnd(2, 4, D), rnd(2, 5, D)]
    _fwd_bwd(tm, fm, xs, {"memory_key_padding_mask": _kpm(2, 5)})
    # without autograd the self-attention takes MultiheadAttention's fast path: a fully padded target is NaN
    kpm = np.zeros((2, 4), bool)
    kpm[0] = True
    t, _ = _fwd(tm, fm, xs, {"tgt_key_padding_mask": kpm})
    assert np.isnan(t[0]).all() and not np.isnan(t[1]).any()


# ---- TransformerEncoder / TransformerDecoder --------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_stack_with_norm(batch_first):
    def build(m):
        layer = m.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=batch_first)
        return m.TransformerEncoder(layer, 2, norm=m.LayerNorm(D))
    tm, fm = _both(build)
    assert tm.use_nested_tensor == fm.use_nested_tensor == batch_first
    x = _seq_first(rnd(2, 5, D), batch_first)
    _fwd_bwd(tm, fm, [x], {"mask": _causal(5), "src_key_padding_mask": _kpm(2, 5)})
    # is_causal=None detects the causal mask (bool or float); a non-causal mask is used as given
    for mask in (_causal(5), np.isinf(_causal(5)), rnd(5, 5)):
        _fwd(tm, fm, [x], {"mask": mask})


def test_decoder_stack_with_norm_detects_causal():
    def build(m):
        return m.TransformerDecoder(m.TransformerDecoderLayer(D, H, FF, dropout=0.0, norm_first=True), 2,
                                    norm=m.LayerNorm(D))
    tm, fm = _both(build)
    _fwd_bwd(tm, fm, [rnd(4, 2, D), rnd(5, 2, D)], {"tgt_mask": _causal(4), "memory_key_padding_mask": _kpm(2, 5)})


def test_clones_are_deep_copies():
    layer = nn.TransformerEncoderLayer(D, H, FF)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = nn.TransformerEncoder(layer, 2)
    assert isinstance(enc.layers, nn.ModuleList) and len(enc.layers) == 2 and enc.num_layers == 2
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert a is not b and a is not layer.linear1.weight
    np.testing.assert_array_equal(a.detach().numpy(), layer.linear1.weight.detach().numpy())
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, H, FF), 3)
    assert len({id(m.multihead_attn.in_proj_weight) for m in dec.layers}) == 3 and dec.norm is None


def test_encoder_nested_warning():
    for m in (torch.nn, nn):
        with pytest.warns(UserWarning) as rec:
            m.TransformerEncoder(m.TransformerEncoderLayer(D, 1, FF, batch_first=True), 1)
        assert str(rec[0].message) == ("enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                       "encoder_layer.self_attn.num_heads is odd")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, 1, FF), 1, enable_nested_tensor=False)
    assert enc.enable_nested_tensor is False and enc.use_nested_tensor is False and enc.mask_check is True


# ---- eval mode: the slow path, the encoder layer's fast path, the nested-tensor path ------------------------
def _eval_pair(build, x, **masks):
    """Fresh modules in eval mode, run without autograd (where PyTorch's fast paths apply)."""
    tm, fm = _both(build)
    tm.eval(), fm.eval()
    return _fwd(tm, fm, [x], masks)


def _layer(m, **kw):
    return m.TransformerEncoderLayer(D, H, FF, batch_first=True, **kw)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_eval_with_grad_is_the_slow_path(norm_first):
    tm, fm = _both(lambda m: _layer(m, norm_first=norm_first).eval())
    kpm = np.zeros((2, 5), bool)
    kpm[0] = True  # a fully padded sequence: zeros from attention on the slow path, not NaN
    t_out, _ = _fwd_bwd(tm, fm, [rnd(2, 5, D)], {"src_key_padding_mask": kpm})
    assert not torch.isnan(t_out).any()


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_fast_path_nan_rows(norm_first):
    kpm = np.zeros((2, 5), bool)
    kpm[0] = True
    t, _ = _eval_pair(lambda m: _layer(m, norm_first=norm_first), rnd(2, 5, D), src_key_padding_mask=kpm)
    assert np.isnan(t[0]).all() and not np.isnan(t[1]).any()
    dead = np.zeros((5, 5), np.float32)
    dead[2] = -np.inf
    t, _ = _eval_pair(lambda m: _layer(m, norm_first=norm_first), rnd(2, 5, D), src_mask=dead)
    assert np.isnan(t[:, 2]).all() and not np.isnan(np.delete(t, 2, axis=1)).any()


def test_encoder_layer_fast_path_reads_float_masks_as_bool():
    tm, fm = _both(lambda m: _layer(m, dropout=0.0).eval())
    x = rnd(2, 5, D)
    mask = np.zeros((5, 5), np.float32)
    mask[:, 3], mask[1, 0], mask[2, 1] = 0.5, -2.0, np.nan  # every nonzero entry masks its position
    kpm = np.zeros((2, 5), np.float32)
    kpm[0, 4] = 0.25
    _fwd(tm, fm, [x], {"src_mask": mask})
    _fwd(tm, fm, [x], {"src_mask": mask, "src_key_padding_mask": kpm})
    _fwd(tm, fm, [x], {"src_mask": np.where(rnd(2 * H, 5, 5) > 0.5, 1.0, 0.0).astype(np.float32)})
    t, _ = _fwd(tm, fm, [x], {"src_mask": rnd(5, 5)})  # no zero entry: every key masked, every row NaN
    assert np.isnan(t).all()
    tm.train(), fm.train()  # the slow path adds the float mask
    t, _ = _fwd(tm, fm, [x], {"src_mask": rnd(5, 5)})
    assert not np.isnan(t).any()


def test_encoder_layer_fast_path_ignores_is_causal_and_gelu_approximate():
    x = rnd(2, 5, D)
    # is_causal without a mask: the fast path runs without any mask (the slow path would raise)
    tm, fm = _both(lambda m: _layer(m).eval())
    t_c, _ = _fwd(tm, fm, [x], flags={"is_causal": True})
    t_n, _ = _fwd(tm, fm, [x])
    np.testing.assert_allclose(t_c, t_n, atol=1e-6)
    # with a non-causal mask and is_causal=True the mask is what counts
    mask = np.zeros((5, 5), bool)
    mask[0, 1:3] = mask[3, 4] = True
    t_m, _ = _fwd(tm, fm, [x], {"src_mask": mask}, {"is_causal": True})
    assert np.abs(t_m - t_n).max() > 1e-3 and not np.isnan(t_m).any()
    # GELU(approximate='tanh') runs as the exact GELU on the fast path
    tm, fm = _both(lambda m: _layer(m, activation=m.GELU(approximate="tanh")).eval())
    fast, _ = _fwd(tm, fm, [x * 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slow = fm(ft.tensor(x * 3)).detach().numpy()  # grad needed: the slow path, the real tanh GELU
    assert np.abs(slow - fast).max() > 1e-6


def test_encoder_layer_fast_path_off_with_hooks_odd_heads_seq_first_other_activation():
    """Where PyTorch skips the fused layer, a fully padded sequence gives finite values, not NaN."""
    kpm = np.zeros((2, 5), bool)
    kpm[0] = True

    def hooked(m):
        layer = _layer(m)
        layer.linear1.register_forward_hook(lambda *a: None)
        return layer
    cases = [(hooked, True), (lambda m: m.TransformerEncoderLayer(D, 1, FF, batch_first=True), True),
             (lambda m: m.TransformerEncoderLayer(D, H, FF), False),
             (lambda m: _layer(m, activation=m.functional.silu), True)]
    for build, batch_first in cases:
        t, _ = _eval_pair(build, _seq_first(rnd(2, 5, D), batch_first), src_key_padding_mask=kpm)
        assert not np.isnan(t).any()


@pytest.mark.parametrize("final_norm", [False, True])
def test_encoder_nested_tensor_zeros_padded(final_norm):
    def build(m):
        return m.TransformerEncoder(_layer(m), 2, norm=m.LayerNorm(D) if final_norm else None)
    kpm = np.zeros((2, 5), bool)
    kpm[0, 3:] = True
    t, _ = _eval_pair(build, rnd(2, 5, D), src_key_padding_mask=kpm)
    if not final_norm:
        assert (t[0, 3:] == 0).all() and (t[0, :3] != 0).all()
    # a fully padded sequence comes back as zeros (NaN on the layer fast path without nesting)
    kpm[0] = True
    t, _ = _eval_pair(build, rnd(2, 5, D), src_key_padding_mask=kpm)
    assert not np.isnan(t).any()
    # a float padding mask: nonzero entries are padding
    fk = np.zeros((2, 5), np.float32)
    fk[1, 2:] = [-1.0, -2.0, -np.inf]
    _eval_pair(build, rnd(2, 5, D), src_key_padding_mask=fk)


def test_encoder_nested_needs_left_aligned_mask_unless_mask_check_off():
    kpm = np.zeros((2, 5), bool)
    kpm[0, [0, 2]] = True  # not left aligned
    x = rnd(2, 5, D)
    t, _ = _eval_pair(lambda m: m.TransformerEncoder(_layer(m), 2), x, src_key_padding_mask=kpm)
    assert not (t == 0).all(-1).any()
    # mask_check=False: the first count(not padded) tokens are taken, the rest read as zeros
    t, _ = _eval_pair(lambda m: m.TransformerEncoder(_layer(m), 2, mask_check=False), x, src_key_padding_mask=kpm)
    assert (t[0, 3:] == 0).all()
    # nested and is_causal=True without a mask: the layers' fast path runs unmasked (no error)
    kpm_left = np.zeros((2, 5), bool)
    kpm_left[0, 3:] = True
    tm, fm = _both(lambda m: m.TransformerEncoder(_layer(m), 2))
    tm.eval(), fm.eval()
    _fwd(tm, fm, [x], {"src_key_padding_mask": kpm_left}, {"is_causal": True})
    # a mask together with the padding mask: no nesting
    _eval_pair(lambda m: m.TransformerEncoder(_layer(m), 2), x, mask=_causal(5), src_key_padding_mask=kpm)


# ---- nn.Transformer ---------------------------------------------------------------------------------------
def _transformer(batch_first=False, norm_first=False, layers=1, **kw):
    return lambda m: m.Transformer(D, H, layers, layers, FF, dropout=0.0, batch_first=batch_first,
                                   norm_first=norm_first, **kw)


@pytest.mark.parametrize("batch_first,norm_first", [(False, False), (True, True)])
def test_transformer_forward_backward(batch_first, norm_first):
    tm, fm = _both(_transformer(batch_first, norm_first))
    src, tgt = _seq_first(rnd(2, 5, D), batch_first), _seq_first(rnd(2, 4, D), batch_first)
    masks = {"tgt_mask": _causal(4), "src_key_padding_mask": _kpm(2, 5), "memory_key_padding_mask": _kpm(2, 5),
             "tgt_key_padding_mask": _kpm(2, 4)}
    _fwd_bwd(tm, fm, [src, tgt], masks)
    _fwd(tm, fm, [src, tgt], {"src_mask": rnd(5, 5), "memory_mask": rnd(4, 5), "tgt_mask": _causal(4)},
         {"tgt_is_causal": False, "src_is_causal": False, "memory_is_causal": False})
    tm, fm = _both(_transformer(batch_first, norm_first, layers=2))
    _fwd(tm, fm, [src, tgt], masks)


def test_transformer_unbatched_gelu_bias_false():
    tm, fm = _both(_transformer(activation="gelu", bias=False))
    _fwd_bwd(tm, fm, [rnd(5, D), rnd(4, D)], {"tgt_mask": _causal(4)})


def test_transformer_eval_with_padding():
    tm, fm = _both(_transformer(batch_first=True))
    tm.eval(), fm.eval()
    kpm = _kpm(2, 5)
    src, tgt = rnd(2, 5, D), rnd(2, 4, D)
    with torch.no_grad(), ft.no_grad():
        t_out = tm(torch.tensor(src), torch.tensor(tgt), src_key_padding_mask=torch.tensor(kpm),
                   memory_key_padding_mask=torch.tensor(kpm))
        f_out = fm(ft.tensor(src), ft.tensor(tgt), src_key_padding_mask=ft.tensor(kpm),
                   memory_key_padding_mask=ft.tensor(kpm))
    _close(f_out, t_out)


def test_transformer_state_dict_keys_and_structure():
    tm, fm = _both(_transformer(layers=2))
    assert list(fm.state_dict().keys()) == list(tm.state_dict().keys())
    assert "encoder.norm.weight" in tm.state_dict() and "decoder.layers.1.norm3.bias" in tm.state_dict()
    assert [n for n, _ in fm.named_modules()] == [n for n, _ in tm.named_modules()]
    assert (fm.d_model, fm.nhead, fm.batch_first) == (tm.d_model, tm.nhead, tm.batch_first)
    assert repr(fm) == repr(tm)


def test_transformer_xavier_init():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = nn.Transformer(16, 2, 1, 1, 64, dropout=0.0)
    for name, p in m.named_parameters():
        a = np.abs(p.detach().numpy())
        if p.dim() > 1:
            bound = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            assert a.max() <= bound and a.max() > 0.8 * bound, name
    # linear2 (16, 64): xavier's bound 0.27 is above Linear's default 1/8
    assert np.abs(m.encoder.layers[0].linear2.weight.detach().numpy()).max() > 0.2
    assert (m.encoder.layers[0].self_attn.in_proj_bias.detach().numpy() == 0).all()


def test_transformer_custom_encoder_decoder():
    def build(m):
        enc = m.TransformerEncoder(m.TransformerEncoderLayer(D, H, FF, dropout=0.0), 1)
        dec = m.TransformerDecoder(m.TransformerDecoderLayer(D, H, FF, dropout=0.0), 1)
        return m.Transformer(D, H, custom_encoder=enc, custom_decoder=dec)
    tm, fm = _both(build)
    assert fm.encoder.norm is None
    _fwd(tm, fm, [rnd(5, 2, D), rnd(4, 2, D)])


# ---- generate_square_subsequent_mask ---------------------------------------------------------------------
@pytest.mark.parametrize("sz,dtype", [(4, None), (1, None), (3, "float64"), (5, "bool"), (3, "float16"),
                                      (3, "int64"), (0, None)])
def test_generate_square_subsequent_mask(sz, dtype):
    _parity.assert_same_outcome(
        lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(
            sz, dtype=None if dtype is None else getattr(lib, dtype)), torch, ft)


def test_generate_square_subsequent_mask_device():
    m = nn.Transformer.generate_square_subsequent_mask(3, device="cpu")
    assert m.device == ft.device("cpu") and m.dtype is ft.float32


# ---- errors and warnings ------------------------------------------------------------------------------------
def _same_error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (_, t_err), (f_out, f_err) = _parity.run(fn, torch), _parity.run(fn, ft)
    assert t_err is not None, "torch did not raise"
    _parity.assert_same_error(t_err, f_err, f_out)


def _tx(lib):
    return lib.nn.Transformer(D, H, 1, 1, FF, dropout=0.0)


ERRORS = {
    "d_model_nhead": lambda lib: lib.nn.TransformerEncoderLayer(10, 3),
    "decoder_d_model_nhead": lambda lib: lib.nn.TransformerDecoderLayer(10, 4),
    "transformer_d_model_nhead": lambda lib: lib.nn.Transformer(10, 4, 1, 1, 8),
    "bad_activation": lambda lib: lib.nn.TransformerEncoderLayer(D, H, activation="tanh"),
    "bad_activation_decoder": lambda lib: lib.nn.TransformerDecoderLayer(D, H, activation="swish"),
    "batch_mismatch": lambda lib: _tx(lib)(lib.zeros(5, 2, D), lib.zeros(4, 3, D)),
    "batch_mismatch_batch_first": lambda lib: lib.nn.Transformer(D, H, 1, 1, FF, batch_first=True)(
        lib.zeros(2, 5, D), lib.zeros(3, 4, D)),
    "feature_mismatch_src": lambda lib: _tx(lib)(lib.zeros(5, 2, D + 1), lib.zeros(4, 2, D)),
    "feature_mismatch_tgt": lambda lib: _tx(lib)(lib.zeros(5, 2, D), lib.zeros(4, 2, D - 1)),
    "int_key_padding_mask": lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(
        lib.zeros(5, 2, D), src_key_padding_mask=lib.zeros(2, 5, dtype=lib.int64)),
    "int_src_mask": lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(
        lib.zeros(5, 2, D), src_mask=lib.zeros(5, 5, dtype=lib.int64)),
    "encoder_int_mask": lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, H, FF), 1)(
        lib.zeros(5, 2, D), mask=lib.zeros(5, 5, dtype=lib.int32)),
    "is_causal_without_mask": lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(lib.zeros(5, 2, D),
                                                                                  is_causal=True),
    "decoder_tgt_is_causal_without_mask": lambda lib: lib.nn.TransformerDecoderLayer(D, H, FF)(
        lib.zeros(4, 2, D), lib.zeros(5, 2, D), tgt_is_causal=True),
    "wrong_mask_shape": lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(lib.zeros(5, 2, D),
                                                                            src_mask=lib.zeros(4, 4)),
    "wrong_d_model_input": lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(lib.zeros(5, 2, D + 2)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    _same_error(ERRORS[case])


def test_mismatched_mask_types_warn():
    for lib in (torch, ft):
        layer = lib.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0)
        with pytest.warns(UserWarning, match="Support for mismatched src_key_padding_mask and src_mask is "
                                             "deprecated. Use same type for both instead."):
            layer(lib.zeros(5, 2, D), src_mask=lib.zeros(5, 5), src_key_padding_mask=lib.zeros(2, 5, dtype=lib.bool))


def test_deepcopy_of_layer_keeps_activation():
    layer = nn.TransformerEncoderLayer(D, H, FF, activation=nn.functional.gelu)
    c = copy.deepcopy(layer)
    assert c.activation is nn.functional.gelu and c.activation_relu_or_gelu == 2
