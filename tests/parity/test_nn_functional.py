"""Parity of ``functorch_lite.nn.functional`` (and the loss modules) with ``torch.nn.functional``: values,
dtypes, gradients and grad_fn names (spec §6.6 / AG-55: AddmmBackward0, MmBackward0, MseLossBackward0,
NllLossBackward0...), reductions, ignore_index, class weights, label smoothing, dropout under manual_seed,
the implicit-dim softmax warning (RED-13) and error messages."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import functorch_lite as ft
import functorch_lite.nn as nn
import functorch_lite.nn.functional as F

RNG = np.random.default_rng(0)


def _pair(a: np.ndarray, grad: bool = False):
    t = torch.tensor(a, requires_grad=grad)
    f = ft.tensor(a, requires_grad=grad)
    return t, f


def _close(f, t, rtol=1e-5, atol=1e-6):
    assert str(f.dtype) == str(t.dtype)
    assert tuple(f.shape) == tuple(t.shape)
    np.testing.assert_allclose(np.asarray(f.detach().numpy()), t.detach().numpy(), rtol=rtol, atol=atol)


def _grad_name(f, t):
    assert f.grad_fn.name() == type(t.grad_fn).__name__


# ---- linear ----------------------------------------------------------------------------------
@pytest.mark.parametrize("xshape", [(4, 3), (2, 4, 3), (3,)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_values_grads_grad_fn(xshape, bias, dtype):
    tx, fx = _pair(RNG.standard_normal(xshape).astype(dtype), grad=True)
    tw, fw = _pair(RNG.standard_normal((5, 3)).astype(dtype), grad=True)
    tb, fb = _pair(RNG.standard_normal(5).astype(dtype), grad=True) if bias else (None, None)
    to, fo = TF.linear(tx, tw, tb), F.linear(fx, fw, fb)
    _close(fo, to)
    _grad_name(fo, to)
    go = RNG.standard_normal(to.shape).astype(dtype)
    to.backward(torch.tensor(go))
    fo.backward(ft.tensor(go))
    for f, t in [(fx, tx), (fw, tw)] + ([(fb, tb)] if bias else []):
        _close(f.grad, t.grad, rtol=1e-4)


def test_linear_shape_error_message():
    tx, fx = _pair(np.zeros((4, 3), np.float32))
    tw, fw = _pair(np.zeros((5, 2), np.float32))
    with pytest.raises(RuntimeError) as te:
        TF.linear(tx, tw)
    with pytest.raises(RuntimeError, match=re.escape(str(te.value))):
        F.linear(fx, fw)


# ---- mse_loss ----------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    tx, fx = _pair(RNG.standard_normal((4, 3)).astype(np.float32), grad=True)
    ty, fy = _pair(RNG.standard_normal((4, 3)).astype(np.float32))
    to, fo = TF.mse_loss(tx, ty, reduction=reduction), F.mse_loss(fx, fy, reduction=reduction)
    _close(fo, to)
    _grad_name(fo, to)  # MseLossBackward0
    to.sum().backward()
    fo.sum().backward()
    _close(fx.grad, tx.grad)
    tm, fm = torch.nn.MSELoss(reduction=reduction), nn.MSELoss(reduction=reduction)
    _close(fm(fx, fy), tm(tx, ty))


def test_mse_loss_bad_reduction_and_size_warning():
    tx, fx = _pair(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError) as te:
        TF.mse_loss(tx, tx, reduction="avg")
    with pytest.raises(ValueError, match=re.escape(str(te.value))):
        F.mse_loss(fx, fx, reduction="avg")
    ty, fy = _pair(np.zeros((3,), np.float32))
    with pytest.warns(UserWarning) as tw:
        TF.mse_loss(tx, ty)
    with pytest.warns(UserWarning, match=re.escape(str(tw[0].message))):
        F.mse_loss(fx, fy)


def test_mse_loss_promotes_mixed_float():
    tx, fx = _pair(np.ones(3, np.float32))
    ty, fy = _pair(np.zeros(3, np.float64))
    _close(F.mse_loss(fx, fy), TF.mse_loss(tx, ty))


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("op", ["mse_loss", "cross_entropy", "nll_loss", "linear", "dropout"])
def test_no_kernel_errors_match_torch(op, dtype):
    tx, fx = _pair(np.ones((3, 4), dtype))
    ty, fy = _pair(np.array([0, 3, 1], np.int64))
    args = {"mse_loss": lambda m, x, y: (x, x), "cross_entropy": lambda m, x, y: (x, y),
            "nll_loss": lambda m, x, y: (x, y), "linear": lambda m, x, y: (x, x),
            "dropout": lambda m, x, y: (x, 0.5)}[op]
    try:
        to = getattr(TF, op)(*args(torch, tx, ty))
    except Exception as e:  # noqa: BLE001 - compared below
        with pytest.raises(type(e), match=re.escape(str(e))):
            getattr(F, op)(*args(ft, fx, fy))
    else:
        _close(getattr(F, op)(*args(ft, fx, fy)), to)


def test_linear_dtype_mismatch_messages():
    for w_dt, b_dt in [("float64", None), ("float32", "float64")]:
        tx, fx = _pair(np.ones((3, 4), np.float32))
        tw, fw = _pair(np.ones((5, 4), w_dt))
        tb, fb = _pair(np.ones(5, b_dt)) if b_dt else (None, None)
        with pytest.raises(RuntimeError) as te:
            TF.linear(tx, tw, tb)
        with pytest.raises(RuntimeError, match=re.escape(str(te.value))):
            F.linear(fx, fw, fb)


# ---- cross_entropy / nll_loss -------------------------------------------------------------------------
CE_CASES = [
    dict(),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(weight=True),
    dict(weight=True, reduction="none"),
    dict(ignore_index=1),
    dict(ignore_index=1, weight=True),
    dict(label_smoothing=0.1),
    dict(label_smoothing=0.2, weight=True),
    dict(label_smoothing=0.2, ignore_index=0, reduction="sum"),
]


def _ce_args(kw):
    kw = dict(kw)
    tw = fw = None
    if kw.pop("weight", False):
        tw, fw = _pair(np.array([0.5, 2.0, 1.0, 1.5], np.float32))
    return kw, tw, fw


@pytest.mark.parametrize("kw", CE_CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "default")
def test_cross_entropy_class_indices(kw):
    kw, tw, fw = _ce_args(kw)
    tx, fx = _pair(RNG.standard_normal((6, 4)).astype(np.float32), grad=True)
    tgt = np.array([0, 1, 3, 1, 2, 0], np.int64)
    ty, fy = _pair(tgt)
    to, fo = TF.cross_entropy(tx, ty, weight=tw, **kw), F.cross_entropy(fx, fy, weight=fw, **kw)
    _close(fo, to)
    if not kw.get("label_smoothing"):
        _grad_name(fo, to)  # NllLossBackward0
    to.sum().backward()
    fo.sum().backward()
    _close(fx.grad, tx.grad)
    tm = torch.nn.CrossEntropyLoss(weight=tw, **kw)
    fm = nn.CrossEntropyLoss(weight=fw, **kw)
    _close(fm(fx, fy), tm(tx, ty))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probability_targets(reduction, smoothing):
    tx, fx = _pair(RNG.standard_normal((5, 3)).astype(np.float32), grad=True)
    p = RNG.random((5, 3)).astype(np.float32)
    ty, fy = _pair(p / p.sum(1, keepdims=True))
    to = TF.cross_entropy(tx, ty, reduction=reduction, label_smoothing=smoothing)
    fo = F.cross_entropy(fx, fy, reduction=reduction, label_smoothing=smoothing)
    _close(fo, to)
    if smoothing == 0.0:
        _grad_name(fo, to)  # DivBackward1 (mean) / NegBackward0
    to.sum().backward()
    fo.sum().backward()
    _close(fx.grad, tx.grad)


def test_cross_entropy_unbatched_and_3d():
    tx, fx = _pair(RNG.standard_normal(4).astype(np.float64), grad=True)
    ty, fy = _pair(np.array(2, np.int64))
    _close(F.cross_entropy(fx, fy), TF.cross_entropy(tx, ty))
    tx, fx = _pair(RNG.standard_normal((2, 4, 3)).astype(np.float32), grad=True)
    ty, fy = _pair(np.array([[0, 1, 3], [2, 2, 0]], np.int64))
    to, fo = TF.cross_entropy(tx, ty), F.cross_entropy(fx, fy)
    _close(fo, to)
    to.backward()
    fo.backward()
    _close(fx.grad, tx.grad)


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=2),
                                dict(weight=True)], ids=str)
def test_nll_loss(kw):
    kw, tw, fw = _ce_args(kw)
    a = RNG.standard_normal((5, 4)).astype(np.float32)
    tx, fx = _pair(a - np.log(np.exp(a).sum(1, keepdims=True)), grad=True)
    ty, fy = _pair(np.array([0, 2, 3, 2, 1], np.int64))
    to, fo = TF.nll_loss(tx, ty, weight=tw, **kw), F.nll_loss(fx, fy, weight=fw, **kw)
    _close(fo, to)
    _grad_name(fo, to)
    to.sum().backward()
    fo.sum().backward()
    _close(fx.grad, tx.grad)
    _close(nn.NLLLoss(weight=fw, **kw)(fx, fy), torch.nn.NLLLoss(weight=tw, **kw)(tx, ty))


def test_nll_loss_batch_mismatch_message():
    tx, fx = _pair(np.zeros((3, 4), np.float32))
    ty, fy = _pair(np.zeros(2, np.int64))
    with pytest.raises(ValueError) as te:
        TF.nll_loss(tx, ty)
    with pytest.raises(ValueError, match=re.escape(str(te.value))):
        F.nll_loss(fx, fy)


def test_mlp_training_step_cross_entropy_matches_torch():
    def build(m):
        return m.Sequential(m.Linear(4, 16), m.ReLU(), m.Linear(16, 3))
    tm, fm = build(torch.nn), build(nn)
    fm.load_state_dict({k: ft.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = RNG.standard_normal((8, 4)).astype(np.float32)
    y = RNG.integers(0, 3, 8)
    tl = torch.nn.CrossEntropyLoss()(tm(torch.tensor(x)), torch.tensor(y))
    fl = nn.CrossEntropyLoss()(fm(ft.tensor(x)), ft.tensor(y))
    _close(fl, tl)
    tl.backward()
    fl.backward()
    for (n, tp), (_, fp) in zip(tm.named_parameters(), fm.named_parameters()):
        _close(fp.grad, tp.grad, rtol=1e-4)


# ---- dropout ------------------------------------------------------------------------------------------
def test_dropout_scaling_grad_and_reproducible():
    x = ft.ones(2000, requires_grad=True)
    ft.manual_seed(3)
    y = F.dropout(x, 0.25)
    ft.manual_seed(3)
    y2 = F.dropout(x, 0.25)
    yn = np.asarray(y.detach().numpy())
    np.testing.assert_array_equal(yn, np.asarray(y2.detach().numpy()))
    assert set(np.unique(yn)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (yn == 0).mean() < 0.3
    tx = torch.ones(3, requires_grad=True)
    _grad_name(y, TF.dropout(tx, 0.25))  # MulBackward0
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad.numpy()), yn)
    z = F.dropout(x, 0.25)
    assert not np.array_equal(np.asarray(z.detach().numpy()), yn)  # the generator advanced


def test_dropout_identity_cases_and_errors():
    x = ft.ones(4)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(np.asarray(F.dropout(x, 1.0).numpy()), np.zeros(4))
    with pytest.raises(ValueError) as te:
        TF.dropout(torch.ones(1), 1.5)
    with pytest.raises(ValueError, match=re.escape(str(te.value))):
        F.dropout(x, 1.5)


# ---- activation aliases and softmax -------------------------------------------------------------------
@pytest.mark.parametrize("name,kw", [("relu", {}), ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}),
                                     ("sigmoid", {}), ("tanh", {}), ("softmax", {"dim": 1}),
                                     ("log_softmax", {"dim": 0})])
def test_activation_aliases(name, kw):
    tx, fx = _pair(RNG.standard_normal((3, 4)).astype(np.float32), grad=True)
    to, fo = getattr(TF, name)(tx, **kw), getattr(F, name)(fx, **kw)
    _close(fo, to)
    _grad_name(fo, to)
    to.sum().backward() if name not in ("softmax",) else (to * to).sum().backward()
    fo.sum().backward() if name not in ("softmax",) else (fo * fo).sum().backward()
    _close(fx.grad, tx.grad)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax_implicit_dim_warns(name, shape):  # RED-13: torch needs a dim; the implicit choice warns
    tx, fx = _pair(RNG.standard_normal(shape).astype(np.float32))
    with pytest.warns(UserWarning) as tw:
        to = getattr(TF, name)(tx)
    with pytest.warns(UserWarning, match=re.escape(str(tw[0].message))):
        fo = getattr(F, name)(fx)
    _close(fo, to)


def test_activation_modules_match_torch():
    tx, fx = _pair(RNG.standard_normal((2, 3, 2)).astype(np.float32))
    for cls, kw in [("ReLU", {}), ("Tanh", {}), ("Sigmoid", {}), ("SiLU", {}), ("GELU", {}), ("Identity", {}),
                    ("Flatten", {}), ("Softmax", {"dim": -1}), ("LogSoftmax", {"dim": 1})]:
        _close(getattr(nn, cls)(**kw)(fx), getattr(torch.nn, cls)(**kw)(tx))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(nn.Softmax()(fx), torch.nn.Softmax()(tx))


def test_relu_inplace_and_softmax_dtype():
    a = RNG.standard_normal(5).astype(np.float32)
    tx, fx = _pair(a)
    tr, fr = TF.relu(tx, inplace=True), F.relu(fx, inplace=True)
    assert fr is fx and tr is tx
    _close(fx, tx)
    _close(F.softmax(fx, 0, dtype=ft.float64), TF.softmax(tx, 0, dtype=torch.float64))
    _close(F.log_softmax(fx, -1, dtype=ft.float64), TF.log_softmax(tx, -1, dtype=torch.float64))


_RNG = np.random.default_rng(11)
_X2, _T2 = _RNG.standard_normal((3, 4)), np.array([0, 3, 1])
_X3, _T3 = _RNG.standard_normal((3, 4, 5)), _RNG.integers(0, 4, (3, 5))
_X4, _T4 = _RNG.standard_normal((2, 3, 2, 2)), _RNG.integers(0, 3, (2, 2, 2))
_X5, _T5 = _RNG.standard_normal((2, 3, 2, 2, 2)), _RNG.integers(0, 3, (2, 2, 2, 2))


@pytest.mark.parametrize("red", ["mean", "none", "sum"])
@pytest.mark.parametrize("fn,x,t,kw", [
    ("cross_entropy", _X2, _T2, {"label_smoothing": 0.1}), ("cross_entropy", _X3, _T3, {}),
    ("nll_loss", _X3, _T3, {}), ("nll_loss", _X4, _T4, {}), ("nll_loss", _X5, _T5, {}),
    ("cross_entropy", _X5, _T5, {"label_smoothing": 0.2}), ("nll_loss", _X2, _T2, {}),
])
def test_class_index_losses_values_and_grad_fn_names(fn, x, t, kw, red):
    """NllLossBackward0 up to 2-D, NllLoss2DBackward0 beyond (ViewBackward0 for 'none' on 3-D / 5-D),
    AddBackward0 with label smoothing."""
    def run(m):
        xt = m.tensor(x, requires_grad=True)
        out = getattr(m.nn.functional, fn)(xt, m.tensor(t), reduction=red, **kw)
        out.sum().backward()
        return out.grad_fn.name(), out.detach().numpy(), xt.grad.numpy()
    (n1, v1, g1), (n2, v2, g2) = run(torch), run(ft)
    assert n1 == n2
    np.testing.assert_allclose(v2, v1, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.cross_entropy(m.tensor(_X2), m.tensor([0, 7, 1])),
    lambda m: m.nn.functional.nll_loss(m.tensor(_X2), m.tensor([0, -1, 1])),
    lambda m: m.nn.functional.cross_entropy(m.tensor(_X2), m.tensor([0, 1, 2], dtype=m.int16)),
    lambda m: m.nn.functional.cross_entropy(m.tensor(_X2), m.rand(3, 5)),
    lambda m: m.nn.functional.nll_loss(m.tensor(_X2), m.tensor([0.0, 1.0, 2.0])),
])
def test_class_index_target_errors(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
        call(ft)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.nll_loss(m.tensor(_X2), m.tensor([0, -100, 1])),
    lambda m: m.nn.functional.cross_entropy(m.tensor(_X2), m.tensor([0, 1, 2], dtype=m.uint8)),
    lambda m: m.nn.functional.cross_entropy(m.tensor(_X2, dtype=m.float64), m.full((3, 4), 0.25)),
    lambda m: m.nn.functional.cross_entropy(m.tensor(_X2, dtype=m.float32), m.full((3, 4), 0.25, dtype=m.float64)),
])
def test_ignored_byte_and_promoted_targets(call):
    theirs, ours = call(torch), call(ft)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_zero_dim_views_as_one_element():
    assert ft.tensor(1.5).view(-1).shape == torch.tensor(1.5).view(-1).shape
    assert ft.tensor(1.5).view(1, 1).tolist() == [[1.5]]
