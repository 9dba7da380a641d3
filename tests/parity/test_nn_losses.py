"""Parity of the losses of ops/losses.py and nn/modules/loss.py (and CrossEntropyLoss's extras) against
real PyTorch 2.13: values, dtype, shape, grad_fn name, gradients of input and target, warnings and
errors (type and message)."""
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(3)
REDS = ["none", "mean", "sum"]


def _t(mod, a, dtype=None, grad=False):
    x = mod.tensor(np.asarray(a))
    if dtype is not None:
        x = x.to(getattr(mod, dtype))
    return x.requires_grad_(True) if grad else x


def _gname(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def compare(fn, arrays, dtype="float32", grad=(0,), tol=None, name=True):
    """Run ``fn(mod, F, *tensors)`` in both libraries; compare value, dtype, shape, grad_fn and gradients."""
    tol = tol or (1e-10 if dtype == "float64" else 2e-5)
    res = {}
    for mod in (torch, ft):
        ts = [_t(mod, a, dtype, i in grad) for i, a in enumerate(arrays)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(mod, mod.nn.functional, *ts)
        w = mod.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)), dtype=out.dtype)
        names = _gname(out)
        if grad:
            (out * w).sum().backward()
        res[mod] = (out, names, [ts[i].grad for i in grad])
    (to, tn, tg), (fo, fn_, fg) = res[torch], res[ft]
    assert str(fo.dtype) == str(to.dtype) and tuple(fo.shape) == tuple(to.shape)
    if name:
        assert fn_ == tn, (fn_, tn)
    np.testing.assert_allclose(fo.detach().double().numpy(), to.detach().double().numpy(), rtol=tol, atol=tol)
    for a, b in zip(fg, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)
    return fo, to


def same_error(fn, exc=None):
    """Both libraries raise the same exception type with the same message."""
    errs = []
    for mod in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as ei:
                fn(mod, mod.nn.functional)
        errs.append(ei.value)
    assert type(errs[1]) is type(errs[0]), errs
    assert str(errs[1]) == str(errs[0]), errs
    if exc is not None:
        assert isinstance(errs[0], exc)


def same_warnings(fn):
    msgs = []
    for mod in (torch, ft):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                fn(mod, mod.nn.functional)
            except Exception:  # noqa: BLE001 - the warning is what is compared
                pass
        msgs.append([(x.category, str(x.message)) for x in w])
    assert msgs[1] == msgs[0]
    return msgs[0]


def rnd(*s):
    return RNG.standard_normal(s)


def prob(*s):
    return RNG.uniform(0.02, 0.98, s)


# ---- values, dtypes, grad_fn names, gradients ---------------------------------------------------------
DT_RED = [("float64", "none"), ("float64", "mean"), ("float64", "sum"), ("float32", "mean")]


@pytest.mark.parametrize("dtype,red", DT_RED)
def test_l1_smooth_huber(red, dtype):
    a, b = rnd(4, 5), rnd(4, 5)
    compare(lambda m, F, x, y: F.l1_loss(x, y, reduction=red), [a, b], dtype, grad=(0, 1))
    for beta in (0.0, 0.5):
        compare(lambda m, F, x, y: F.smooth_l1_loss(x, y, reduction=red, beta=beta), [a, b], dtype, grad=(0, 1))
    for delta in (0.7,):
        compare(lambda m, F, x, y: F.huber_loss(x, y, reduction=red, delta=delta), [a, b], dtype, grad=(0, 1))


@pytest.mark.parametrize("red", REDS)
def test_weighted_l1_and_huber(red):
    a, b, w = rnd(3, 4), rnd(3, 4), RNG.uniform(0.1, 2, (3, 4))
    compare(lambda m, F, x, y, wt: F.l1_loss(x, y, reduction=red, weight=wt), [a, b, w], "float64", grad=(0, 1))
    compare(lambda m, F, x, y, wt: F.huber_loss(x, y, reduction=red, weight=wt, delta=0.8), [a, b, w], "float64",
            grad=(0, 1))


@pytest.mark.parametrize("dtype,red", DT_RED)
def test_binary_cross_entropy(red, dtype):
    x, y, w = prob(3, 4), RNG.uniform(0, 1, (3, 4)), RNG.uniform(0.5, 2, (4,))
    compare(lambda m, F, a, b: F.binary_cross_entropy(a, b, reduction=red), [x, y], dtype, grad=(0, 1))
    compare(lambda m, F, a, b, wt: F.binary_cross_entropy(a, b, weight=wt, reduction=red), [x, y, w], dtype,
            grad=(0, 1))
    compare(lambda m, F, a, b: m.nn.BCELoss(reduction=red)(a, b), [x, y], dtype, grad=(0, 1))


def test_binary_cross_entropy_clamps_log_and_edge_gradients():
    x = np.array([0.0, 1.0, 0.5, 1e-30, 1.0, 0.0])
    y = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    for dtype in ("float32", "float64"):
        res = []
        for mod in (torch, ft):
            a, b = _t(mod, x, dtype, True), _t(mod, y, dtype, True)
            out = mod.nn.functional.binary_cross_entropy(a, b, reduction="none")
            out.sum().backward()
            res.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
        for f, t in zip(res[1], res[0]):
            np.testing.assert_allclose(f, t, rtol=1e-6)  # loss 100 at log(0); grads 0, +-1e12, +-inf as torch


@pytest.mark.parametrize("dtype,red", DT_RED)
def test_bce_with_logits(red, dtype):
    x, y = rnd(3, 4) * 3, RNG.uniform(0, 1, (3, 4))
    w, pw = RNG.uniform(0.5, 2, (4,)), RNG.uniform(0.5, 3, (4,))
    F = "binary_cross_entropy_with_logits"
    compare(lambda m, Fn, a, b: getattr(Fn, F)(a, b, reduction=red), [x, y], dtype, grad=(0, 1))
    compare(lambda m, Fn, a, b, p: getattr(Fn, F)(a, b, reduction=red, pos_weight=p), [x, y, pw], dtype, grad=(0, 1))
    compare(lambda m, Fn, a, b, p, q: getattr(Fn, F)(a, b, p, reduction=red, pos_weight=q), [x, y, w, pw], dtype,
            grad=(0, 1))
    compare(lambda m, Fn, a, b, p: m.nn.BCEWithLogitsLoss(pos_weight=p, reduction=red)(a, b), [x, y, pw], dtype,
            grad=(0,))


def test_bce_with_logits_is_stable_for_large_logits():
    compare(lambda m, F, a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"),
            [np.array([100.0, -100.0, 0.0, 40.0, -40.0]), np.array([0.0, 1.0, 0.5, 1.0, 0.0])], grad=(0, 1))


@pytest.mark.parametrize("red,log_target", [("none", False), ("none", True), ("mean", False), ("sum", True),
                                            ("batchmean", False), ("batchmean", True)])
def test_kl_div(red, log_target):
    x = np.log(prob(3, 5))
    y = np.log(prob(3, 5)) if log_target else prob(3, 5)
    compare(lambda m, F, a, b: F.kl_div(a, b, reduction=red, log_target=log_target), [x, y], "float64", grad=(0, 1))
    compare(lambda m, F, a, b: m.nn.KLDivLoss(reduction=red, log_target=log_target)(a, b), [x, y], grad=(0,))
    compare(lambda m, F, a, b: F.kl_div(a, b, reduction=red, log_target=log_target), [x[0, 0], y[0, 0]],
            grad=(0,))  # 0-dim input: 'batchmean' is the plain sum


def test_kl_div_zero_and_negative_targets_and_broadcast():
    compare(lambda m, F, a, b: F.kl_div(a, b, reduction="none"),
            [np.array([-1.0, -2.0, -0.5]), np.array([0.0, 0.5, -1.0])], grad=(0,), tol=1e-6)
    compare(lambda m, F, a, b: F.kl_div(a, b, reduction="sum"), [rnd(3, 4), prob(4)], grad=(0, 1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_forward(dtype):
    a, b, p = rnd(3, 4), rnd(3, 4), prob(3, 4)
    for f, arrs in [(lambda m, F, x, y: F.l1_loss(x, y), [a, b]), (lambda m, F, x, y: F.smooth_l1_loss(x, y), [a, b]),
                    (lambda m, F, x, y: F.huber_loss(x, y), [a, b]),
                    (lambda m, F, x, y: F.binary_cross_entropy(x, y), [p, p]),
                    (lambda m, F, x, y: F.binary_cross_entropy_with_logits(x, y), [a, p]),
                    (lambda m, F, x, y: F.kl_div(x, y, reduction="batchmean"), [a, p])]:
        compare(f, arrs, dtype, grad=(), tol=3e-2)


# ---- dtype rules (including PyTorch's kernel quirks) --------------------------------------------------
PAIRS = [("float32", "float64"), ("float64", "float32"), ("float16", "float32"), ("float32", "float16"),
         ("float32", "int64"), ("int64", "float32"), ("int64", "int64"), ("float32", "bool"), ("bool", "bool")]
LOSSES = {
    "l1": lambda F, a, b: F.l1_loss(a, b, reduction="none"),
    "l1_mean": lambda F, a, b: F.l1_loss(a, b),
    "l1_sum": lambda F, a, b: F.l1_loss(a, b, reduction="sum"),
    "smooth_l1": lambda F, a, b: F.smooth_l1_loss(a, b, reduction="none"),
    "huber": lambda F, a, b: F.huber_loss(a, b, reduction="none"),
    "bce": lambda F, a, b: F.binary_cross_entropy(a, b, reduction="none"),
    "bcel": lambda F, a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"),
    "kl": lambda F, a, b: F.kl_div(a, b, reduction="none"),
}


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_mixed_dtypes_match_torch(loss, pair):
    x, y = RNG.uniform(0.1, 0.9, (2, 3)), RNG.uniform(0.1, 0.9, (2, 3))
    outs = []
    for mod in (torch, ft):
        a = mod.tensor(x).to(getattr(mod, pair[0]))
        b = mod.tensor(y).to(getattr(mod, pair[1]))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outs.append(LOSSES[loss](mod.nn.functional, a, b))
        except Exception as e:  # noqa: BLE001 - compared below
            outs.append(e)
    t, f = outs
    if isinstance(t, Exception):
        assert type(f) is type(t) and str(f) == str(t), (t, f)
        return
    assert not isinstance(f, Exception), f
    assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape)
    np.testing.assert_allclose(f.double().numpy(), t.double().numpy(), rtol=2e-3, atol=2e-3)


# ---- errors and warnings ----------------------------------------------------------------------------
def test_bce_value_checks():
    a = prob(3, 4)
    same_error(lambda m, F: F.binary_cross_entropy(_t(m, a + 1), _t(m, a)), RuntimeError)
    same_error(lambda m, F: F.binary_cross_entropy(_t(m, a - 1), _t(m, a)), RuntimeError)
    same_error(lambda m, F: F.binary_cross_entropy(_t(m, [float("nan")]), _t(m, [0.5])), RuntimeError)
    same_error(lambda m, F: F.binary_cross_entropy(_t(m, a), _t(m, a + 1)), RuntimeError)
    with pytest.raises(RuntimeError, match=re.escape("all elements of input should be between 0 and 1")):
        ft.nn.functional.binary_cross_entropy(ft.tensor([1.5]), ft.tensor([0.5]))


def test_size_errors_and_warnings():
    a, b3, b4 = rnd(3, 4), rnd(3), rnd(4)
    same_error(lambda m, F: F.binary_cross_entropy(_t(m, prob(3, 4)), _t(m, prob(4))), ValueError)
    same_error(lambda m, F: F.binary_cross_entropy_with_logits(_t(m, a), _t(m, prob(4))), ValueError)
    same_error(lambda m, F: F.binary_cross_entropy(_t(m, prob(3, 4)), _t(m, prob(3, 4)), weight=_t(m, b3)),
               RuntimeError)
    same_error(lambda m, F: F.binary_cross_entropy_with_logits(_t(m, a), _t(m, a), pos_weight=_t(m, b3)),
               RuntimeError)
    same_error(lambda m, F: F.binary_cross_entropy_with_logits(_t(m, a), _t(m, a), weight=_t(m, b3)), RuntimeError)
    same_error(lambda m, F: F.l1_loss(_t(m, a), _t(m, a), weight=_t(m, b4)), ValueError)
    same_error(lambda m, F: F.huber_loss(_t(m, a), _t(m, a), weight=_t(m, b4)), ValueError)
    same_error(lambda m, F: F.kl_div(_t(m, a), _t(m, b3), reduction="sum"), RuntimeError)
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
        w = same_warnings(lambda m, F: getattr(F, name)(_t(m, a), _t(m, b4)))
        assert len(w) == 1 and "Using a target size (torch.Size([4]))" in w[0][1]
        w = same_warnings(lambda m, F: getattr(F, name)(_t(m, a), _t(m, b3)))
        assert len(w) == 1
        same_error(lambda m, F: getattr(F, name)(_t(m, a), _t(m, b3)), RuntimeError)
        compare(lambda m, F, x, y: getattr(F, name)(x, y, reduction="none"), [a, b4], grad=(0, 1))
    assert same_warnings(lambda m, F: F.kl_div(_t(m, a), _t(m, b4), reduction="sum")) == []


def test_parameter_errors():
    a = rnd(3, 4)
    same_error(lambda m, F: F.smooth_l1_loss(_t(m, a), _t(m, a), beta=-1.0), RuntimeError)
    same_error(lambda m, F: F.huber_loss(_t(m, a), _t(m, a), delta=0.0), RuntimeError)
    same_error(lambda m, F: F.huber_loss(_t(m, a), _t(m, a), delta=-2.0), RuntimeError)
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                 "kl_div"):
        same_error(lambda m, F: getattr(F, name)(_t(m, prob(2)), _t(m, prob(2)), reduction="foo"), ValueError)


def test_kl_div_mean_warning_and_legacy_args():
    a, b = np.log(prob(2, 3)), prob(2, 3)
    w = same_warnings(lambda m, F: F.kl_div(_t(m, a), _t(m, b)))
    assert len(w) == 1 and "batchmean" in w[0][1]
    assert same_warnings(lambda m, F: F.kl_div(_t(m, a), _t(m, b), reduction="batchmean")) == []
    for sa, rd in [(True, None), (False, None), (None, False), (False, True)]:
        w = same_warnings(lambda m, F: F.kl_div(_t(m, a), _t(m, b), size_average=sa, reduce=rd))
        assert len(w) == 1 and "size_average and reduce" in w[0][1]
        for name in ("l1_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"):
            compare(lambda m, F, x, y: getattr(F, name)(x, y, size_average=sa, reduce=rd), [b, b], grad=(0,))
        compare(lambda m, F, x, y: F.kl_div(x, y, size_average=sa, reduce=rd), [a, b], grad=(0,))


def test_torch_level_functions():
    a, b = rnd(3, 4), prob(3, 4)
    compare(lambda m, F, x, y: m.binary_cross_entropy_with_logits(x, y), [a, b], grad=(0, 1))  # reduction: none
    compare(lambda m, F, x, y: m.binary_cross_entropy_with_logits(x, y, None, None, 2), [a, b], grad=(0, 1))
    compare(lambda m, F, x, y: m.kl_div(x, y), [a, b], grad=(0, 1))
    compare(lambda m, F, x, y: m.kl_div(x, y, 2, log_target=True), [a, np.log(b)], grad=(0, 1))


# ---- modules ---------------------------------------------------------------------------------------------
MODULES = [("L1Loss", {}), ("SmoothL1Loss", {"beta": 0.5}), ("HuberLoss", {"delta": 2.0}), ("BCELoss", {}),
           ("BCEWithLogitsLoss", {}), ("KLDivLoss", {"log_target": True, "reduction": "batchmean"})]


@pytest.mark.parametrize("name,kw", MODULES, ids=[m[0] for m in MODULES])
def test_loss_modules(name, kw):
    x, y = prob(3, 4), prob(3, 4)
    if name == "KLDivLoss":
        x, y = np.log(x), np.log(y)
    tm, fm = getattr(torch.nn, name)(**kw), getattr(ft.nn, name)(**kw)
    assert repr(fm) == repr(tm)
    assert fm.reduction == tm.reduction
    for attr in ("beta", "delta", "log_target"):
        assert getattr(fm, attr, None) == getattr(tm, attr, None)
    compare(lambda m, F, a, b: getattr(m.nn, name)(**kw)(a, b), [x, y], grad=(0,))


@pytest.mark.parametrize("sa,rd", [(None, None), (True, None), (False, None), (None, False), (True, True),
                                   (False, True), (True, False), (False, False)])
def test_legacy_reduction_mapping(sa, rd):
    for name in ("L1Loss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"):
        w = same_warnings(lambda m, F: getattr(m.nn, name)(size_average=sa, reduce=rd, reduction="sum"))
        assert len(w) == (0 if sa is None and rd is None else 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert getattr(ft.nn, name)(size_average=sa, reduce=rd).reduction == \
                getattr(torch.nn, name)(size_average=sa, reduce=rd).reduction


def test_weight_buffers():
    w, pw = RNG.uniform(0.5, 2, (4,)), RNG.uniform(0.5, 2, (4,))
    for name, kw in [("BCELoss", {"weight": w}), ("BCEWithLogitsLoss", {"weight": w, "pos_weight": pw})]:
        tm = getattr(torch.nn, name)(**{k: torch.tensor(v) for k, v in kw.items()})
        fm = getattr(ft.nn, name)(**{k: ft.tensor(v) for k, v in kw.items()})
        assert [n for n, _ in fm.named_buffers()] == [n for n, _ in tm.named_buffers()]
        assert sorted(fm.state_dict()) == sorted(tm.state_dict())
        x, y = prob(3, 4), prob(3, 4)
        tx, fx = torch.tensor(x, requires_grad=True), ft.tensor(x, requires_grad=True)
        to, fo = tm(tx, torch.tensor(y)), fm(fx, ft.tensor(y))
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-10)
        to.backward()
        fo.backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)


# ---- CrossEntropyLoss extras (op in ops/nn_ops.py) ------------------------------------------------------
def ce_compare(x, target, dtype="float32", module=False, **kw):
    """cross_entropy in both libraries on logits ``x`` and class-index or probability ``target``."""
    tol = 1e-10 if dtype == "float64" else 2e-5
    res = []
    for mod in (torch, ft):
        tx = _t(mod, x, dtype, True)
        ty = _t(mod, target, dtype if target.dtype.kind == "f" else None)
        kws = dict(kw)
        if "weight" in kws:
            kws["weight"] = _t(mod, kws["weight"], dtype)
        out = mod.nn.CrossEntropyLoss(**kws)(tx, ty) if module else mod.nn.functional.cross_entropy(tx, ty, **kws)
        w = mod.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=out.dtype)
        (out * w).sum().backward()
        res.append((out, _gname(out), tx.grad))
    (to, tn, tg), (fo, fn_, fg) = res
    assert str(fo.dtype) == str(to.dtype) and tuple(fo.shape) == tuple(to.shape)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(fg.numpy(), tg.numpy(), rtol=tol, atol=tol)
    return fn_, tn


def _ce_name_known_bug(shape, kw):
    """grad_fn names nn_ops._ce_name gets wrong (reported): smoothing on class indices is AddBackward0 in
    PyTorch, K-dim class-index input is NllLoss2DBackward0 (ViewBackward0 for 'none' unless 4-D)."""
    return kw.get("label_smoothing", 0) > 0 or len(shape) > 2


# (shape, kwargs) combinations: every option appears with every reduction and with K-dim inputs
CE_IDX = [((6, 4), {}, "mean"), ((6, 4), {}, "none"), ((6, 4), {"ignore_index": 1}, "mean"),
          ((6, 4), {"ignore_index": 1, "weight": True}, "sum"), ((6, 4), {"weight": True, "label_smoothing": 0.2}, "mean"),
          ((6, 4), {"weight": True, "ignore_index": 3, "label_smoothing": 0.2}, "none"),
          ((2, 4, 3, 2), {}, "mean"), ((2, 4, 3, 2), {"weight": True, "ignore_index": 2, "label_smoothing": 0.1}, "mean"),
          ((2, 4, 3, 2), {"weight": True, "ignore_index": 2, "label_smoothing": 0.1}, "sum"),
          ((2, 4, 3), {"ignore_index": 0, "weight": True}, "none"), ((2, 4, 3), {"ignore_index": 0, "weight": True}, "mean"),
          ((4,), {"label_smoothing": 0.3, "weight": True}, "mean"), ((4,), {}, "none")]


@pytest.mark.parametrize("shape,kw,red", CE_IDX, ids=[f"{len(s)}d-{r}-" + ",".join(sorted(k)) for s, k, r in CE_IDX])
def test_cross_entropy_class_indices_kdim(shape, kw, red):
    kw = dict(kw, reduction=red)
    if kw.pop("weight", False):
        kw["weight"] = np.array([0.5, 2.0, 1.0, 1.5])
    x = RNG.standard_normal(shape)
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = RNG.integers(0, 4, tshape).astype(np.int64)
    if t.ndim:
        t.reshape(-1)[0] = kw.get("ignore_index", 0)  # at least one ignored entry when ignore_index is set
    fn_, tn = ce_compare(x, t, "float64", **kw)
    if not _ce_name_known_bug(shape, kw):
        assert fn_ == tn, (fn_, tn)
    ce_compare(x, t, "float64", module=True, **kw)


CE_PROB = [((5, 3), {}, "mean"), ((5, 3), {}, "none"), ((5, 3), {"weight": True, "label_smoothing": 0.1}, "sum"),
           ((2, 3, 4), {"label_smoothing": 0.3, "weight": True}, "mean"), ((2, 3, 4), {}, "none"),
           ((3,), {"weight": True}, "mean")]


@pytest.mark.parametrize("shape,kw,red", CE_PROB, ids=[f"{len(s)}d-{r}-" + ",".join(sorted(k)) for s, k, r in CE_PROB])
def test_cross_entropy_probabilities_kdim(shape, kw, red):
    kw = dict(kw, reduction=red)
    if kw.pop("weight", False):
        kw["weight"] = np.array([0.5, 2.0, 1.5])
    x = RNG.standard_normal(shape)
    cdim = 1 if len(shape) > 1 else 0
    p = RNG.random(shape)
    p = p / p.sum(cdim, keepdims=True)
    fn_, tn = ce_compare(x, p, "float64", **kw)
    assert fn_ == tn, (fn_, tn)
    ce_compare(x, p, "float64", module=True, **kw)


def test_cross_entropy_float32():
    x, t = RNG.standard_normal((2, 4, 3)), RNG.integers(0, 4, (2, 3)).astype(np.int64)
    ce_compare(x, t, "float32", weight=np.array([0.5, 2.0, 1.0, 1.5]), label_smoothing=0.2)


def test_cross_entropy_all_ignored_and_errors():
    x = RNG.standard_normal((3, 4))
    res = [mod.nn.functional.cross_entropy(mod.tensor(x), mod.tensor(np.array([1, 1, 1])), ignore_index=1)
           for mod in (torch, ft)]
    assert np.isnan(res[0].item()) and np.isnan(res[1].item())
    same_error(lambda m, F: F.cross_entropy(_t(m, x), _t(m, np.array([0, 1]))), ValueError)
    same_error(lambda m, F: F.cross_entropy(_t(m, x), _t(m, np.array([0, 1, 2])), reduction="bad"), ValueError)
