"""Parity of RMSprop and Adagrad (and of the optimizer API around every optimizer) with torch.optim.

Training parity reuses test_optim.py's harness: the same MLP from the same weights on the same batches
for 20 steps, losses and parameters equal to 1e-5, plus the per-parameter state in PyTorch's layout.
Spec IDs (spec/torch-semantics.md §14) are tested by name.
"""
import copy
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.optim as optim
from test_optim import _compare_run, _loss, _np, _params, _train_step


@pytest.fixture
def exact_rounding(monkeypatch):
    """_config.OPTIM_ROUNDING = "exact": PyTorch's CPU rounding bit for bit (the default "fast" mode computes
    in the parameter dtype, within a few ulps)."""
    from functorch_lite import _config
    monkeypatch.setattr(_config, "OPTIM_ROUNDING", "exact")

LIBS = ((torch, torch.optim), (ft, optim))


def _close_state(ours, ref, err_msg=""):
    """State tensors are accumulated sums: absolute error relative to the tensor's scale (float32 rounding)."""
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6 * max(1.0, float(np.abs(ref).max())), err_msg=err_msg)


def _assert_state_equal(fopt, topt, fp, tp):
    for a, b in zip(fp, tp):
        fs, ts = fopt.state[a], topt.state[b]
        assert list(fs) == list(ts)  # same keys in PyTorch's order
        for k in ts:
            assert str(fs[k].dtype) == str(ts[k].dtype) and tuple(fs[k].shape) == tuple(ts[k].shape), k
            _close_state(_np(fs[k]), _np(ts[k]), err_msg=k)


RMSPROP_CASES = {
    "plain": dict(lr=0.01),
    "alpha-eps": dict(lr=0.01, alpha=0.9, eps=1e-4),
    "weight_decay": dict(lr=0.01, weight_decay=0.1),
    "momentum": dict(lr=0.005, momentum=0.9),
    "centered": dict(lr=0.005, centered=True),
    "centered-momentum-wd": dict(lr=0.003, centered=True, momentum=0.5, weight_decay=0.05, alpha=0.95),
    "maximize": dict(lr=0.001, maximize=True, momentum=0.3),
}


@pytest.mark.parametrize("case", list(RMSPROP_CASES))
def test_rmsprop_matches_torch(case):
    kw = RMSPROP_CASES[case]
    topt, fopt, tp, fp = _compare_run(lambda m, ps: m.RMSprop(ps, **kw))
    _assert_state_equal(fopt, topt, fp, tp)


ADAGRAD_CASES = {
    "plain": dict(lr=0.05),
    "lr_decay": dict(lr=0.1, lr_decay=0.05),
    "weight_decay": dict(lr=0.05, weight_decay=0.2),
    "initial_accumulator_value": dict(lr=0.1, initial_accumulator_value=0.5),
    "eps": dict(lr=0.05, eps=1e-3),
    "maximize": dict(lr=0.01, maximize=True, lr_decay=0.01),
}


@pytest.mark.parametrize("case", list(ADAGRAD_CASES))
def test_adagrad_matches_torch(case):
    kw = ADAGRAD_CASES[case]
    topt, fopt, tp, fp = _compare_run(lambda m, ps: m.Adagrad(ps, **kw))
    _assert_state_equal(fopt, topt, fp, tp)


def test_param_groups_with_their_own_hyperparameters():
    topt, fopt, _, _ = _compare_run(
        lambda m, ps: m.RMSprop(ps, lr=0.01), steps=10,
        groups=lambda ps: [{"params": ps[:2], "momentum": 0.9, "centered": True}, {"params": ps[2:], "alpha": 0.8}])
    assert fopt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]
    topt, fopt, _, _ = _compare_run(
        lambda m, ps: m.Adagrad(ps, lr=0.05), steps=10,
        groups=lambda ps: [{"params": ps[:2], "lr_decay": 0.1}, {"params": ps[2:], "lr": 0.2, "weight_decay": 0.1}])
    assert fopt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


FRESH = {"SGD": dict(lr=0.05, momentum=0.9, nesterov=True), "Adam": dict(lr=0.01, amsgrad=True),
         "AdamW": dict(lr=0.01, weight_decay=0.1), "RMSprop": dict(lr=0.01, momentum=0.5, centered=True),
         "Adagrad": dict(lr=0.05, lr_decay=0.01, initial_accumulator_value=0.1)}


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_add_param_group_mid_training(name):
    kw = FRESH[name]
    tp, fp = _params(torch), _params(ft)
    topt, fopt = getattr(torch.optim, name)(tp[:2], **kw), getattr(optim, name)(fp[:2], **kw)
    for i in range(12):
        if i == 4:
            topt.add_param_group({"params": tp[2:], "lr": 0.02})
            fopt.add_param_group({"params": fp[2:], "lr": 0.02})
            assert list(fopt.param_groups[1]) == list(topt.param_groups[1])
        _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
        for a, b in zip(fp, tp):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)
    _assert_state_equal(fopt, topt, fp, tp)


@pytest.mark.parametrize("name", list(FRESH))
def test_state_dict_structure_and_round_trip(name):
    kw = FRESH[name]
    tp, fp = _params(torch), _params(ft)
    topt, fopt = getattr(torch.optim, name)(tp, **kw), getattr(optim, name)(fp, **kw)
    tsd0, fsd0 = topt.state_dict(), fopt.state_dict()  # before any step (Adagrad's state is eager)
    assert sorted(fsd0["state"]) == sorted(tsd0["state"])
    for i in range(4):
        _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
    tsd, fsd = topt.state_dict(), fopt.state_dict()
    assert [list(g) for g in fsd["param_groups"]] == [list(g) for g in tsd["param_groups"]]  # keys, in order
    assert fsd["param_groups"] == tsd["param_groups"]
    assert list(fsd["state"]) == list(tsd["state"])
    for k in tsd["state"]:
        assert list(fsd["state"][k]) == list(tsd["state"][k])
        for n, v in tsd["state"][k].items():
            assert str(fsd["state"][k][n].dtype) == str(v.dtype)
            _close_state(_np(fsd["state"][k][n]), _np(v), err_msg=n)
    # ours -> a fresh optimizer (other hyperparameters) over copies of the params: continues identically;
    # torch's state dict converted to ft tensors -> another fresh optimizer: continues like torch
    fp2 = [ft.tensor(_np(p).copy(), requires_grad=True) for p in fp]
    fp3 = [ft.tensor(_np(p).copy(), requires_grad=True) for p in tp]
    fopt2, fopt3 = getattr(optim, name)(fp2, lr=7.0), getattr(optim, name)(fp3, lr=7.0)
    fopt2.load_state_dict(copy.deepcopy(fsd))  # (a live state dict would share its tensors, as torch's)
    fopt3.load_state_dict({"state": {k: {n: ft.tensor(_np(v)) for n, v in s.items()} for k, s in tsd["state"].items()},
                           "param_groups": tsd["param_groups"]})
    assert fopt2.param_groups[0]["lr"] == fopt3.param_groups[0]["lr"] == kw["lr"]
    for i in range(4, 10):
        for lib, o, ps in ((ft, fopt, fp), (ft, fopt2, fp2), (ft, fopt3, fp3), (torch, topt, tp)):
            _train_step(lib, o, ps, i)
        for a, b, c, d in zip(fp, fp2, fp3, tp):
            np.testing.assert_array_equal(_np(a), _np(b))
            np.testing.assert_allclose(_np(c), _np(d), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(_np(a), _np(d), rtol=1e-5, atol=1e-6)


def test_adagrad_state_is_created_eagerly():
    for lib, m in LIBS:
        ps = _params(lib)
        opt = m.Adagrad(ps, initial_accumulator_value=0.25)
        s = opt.state[ps[1]]
        assert list(s) == ["step", "sum"] and float(s["step"]) == 0.0 and str(s["step"].dtype).endswith("float32")
        np.testing.assert_array_equal(_np(s["sum"]), np.full(8, 0.25, np.float32))
        # a group's own initial_accumulator_value is ignored: PyTorch reads the constructor's value
        opt.add_param_group({"params": [lib.tensor([1.0], requires_grad=True)], "initial_accumulator_value": 3.0})
        q = opt.param_groups[1]["params"][0]
        (q * q).sum().backward()
        opt.step()
        np.testing.assert_allclose(_np(opt.state[q]["sum"]), [4.25])


def test_zero_grad_set_to_none_false_keeps_training_in_step():
    for kw in (dict(set_to_none=False), dict()):
        out = []
        for lib, m in LIBS:
            ps = _params(lib)
            opt = m.RMSprop(ps, lr=0.01, momentum=0.9)
            for i in range(3):
                opt.zero_grad(**kw)
                _loss(lib, ps, i).backward()
                opt.step()
            opt.zero_grad(**kw)
            out.append(([p.grad is None for p in ps], [_np(p).copy() for p in ps]))
        assert out[0][0] == out[1][0] == [not kw] * 4
        for a, b in zip(out[1][1], out[0][1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make,exc,msg", [
    (lambda m, p: m.RMSprop(p, lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda m, p: m.RMSprop(p, eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (lambda m, p: m.RMSprop(p, momentum=-0.1), ValueError, "Invalid momentum value: -0.1"),
    (lambda m, p: m.RMSprop(p, weight_decay=-2), ValueError, "Invalid weight_decay value: -2"),
    (lambda m, p: m.RMSprop(p, alpha=-0.5), ValueError, "Invalid alpha value: -0.5"),
    (lambda m, p: m.Adagrad(p, lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda m, p: m.Adagrad(p, lr_decay=-1), ValueError, "Invalid lr_decay value: -1"),
    (lambda m, p: m.Adagrad(p, weight_decay=-1e-3), ValueError, "Invalid weight_decay value: -0.001"),
    (lambda m, p: m.Adagrad(p, initial_accumulator_value=-1.0), ValueError,
     "Invalid initial_accumulator_value value: -1.0"),
    (lambda m, p: m.Adagrad(p, eps=-1e-10), ValueError, "Invalid epsilon value: -1e-10"),
    (lambda m, p: m.Adagrad(p, fused=True, differentiable=True), RuntimeError,
     "`fused` does not support `differentiable`"),
    (lambda m, p: m.SGD(p, lr=0.1, momentum=0.9, dampening=0.5, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda m, p: m.SGD([{"params": set(p)}], lr=0.1), TypeError,
     "optimizer parameters need to be organized in ordered collections, but the ordering of tensors in sets will "
     "change between runs. Please use a list instead."),
    (lambda m, p: m.SGD(p, lr=0.1).add_param_group({"params": p[:1]}), ValueError,
     "some parameters appear in more than one parameter group"),
    (lambda m, p: m.Adam(p).add_param_group([p[0]]), TypeError, "param_group must be a dict, but got <class 'list'>"),
])
def test_errors_match_torch(make, exc, msg):
    for lib, m in LIBS:
        with pytest.raises(exc, match=re.escape(msg)):
            make(m, _params(lib))


# ---- spec/torch-semantics.md §14, by ID ----------------------------------------------------------------------------

OPT_02 = [
    ("SGD", dict(lr=0.1), [[0.9, -1.4], [0.82, -0.92], [0.756, -0.536]]),
    ("SGD", dict(lr=0.1, momentum=0.9), [[0.9, -1.4], [0.73, -0.38], [0.531, 0.814]]),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True), [[0.81, -0.86], [0.6112, 0.3327999], [0.445824, 1.325056]]),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5), [[0.9, -1.4], [0.77, -0.62], [0.626, 0.2439999]]),
    ("SGD", dict(lr=0.1, weight_decay=0.1), [[0.89, -1.38], [0.8031, -0.8902], [0.734449, -0.503258]]),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1), [[0.89, -1.38], [0.7041, -0.3322], [0.488929, 0.880582]]),
    ("Adam", dict(lr=0.1), [[0.9, -1.9], [0.8011875, -1.8001027], [0.7048713, -1.7003815]]),
    ("Adam", dict(lr=0.1, weight_decay=0.1), [[0.9, -1.9], [0.8010994, -1.8001046], [0.7044826, -1.7003888]]),
    ("Adam", dict(lr=0.1, amsgrad=True), [[0.9, -1.9], [0.8011875, -1.8001027], [0.7048713, -1.7003815]]),
    ("Adam", dict(lr=0.1, betas=(0.5, 0.9), eps=1e-3),
     [[0.9000999, -1.9000167], [0.8039368, -1.8005239], [0.7147416, -1.7018151]]),
    ("AdamW", dict(lr=0.1), [[0.899, -1.898], [0.7993083, -1.7962072], [0.7022583, -1.6946963]]),
    ("AdamW", dict(lr=0.1, weight_decay=0.1), [[0.89, -1.88], [0.7824948, -1.7613271], [0.6790402, -1.6440586]]),
    ("AdamW", dict(lr=0.1, weight_decay=0.0), [[0.9, -1.9], [0.8011875, -1.8001027], [0.7048713, -1.7003815]]),
]


def _opt02_run(lib, m, name, kw, steps=3):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = getattr(m, name)([w], **kw)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        ((w - lib.tensor([0.5, 1.0])) ** 2).sum().backward()
        opt.step()
        out.append(_np(w).copy())
    return out, opt, w


@pytest.mark.parametrize("name,kw,expected", OPT_02, ids=[f"{n}-{kw}" for n, kw, _ in OPT_02])
def test_OPT_02_exact_updates(name, kw, expected, exact_rounding):
    got, _, _ = _opt02_run(ft, optim, name, kw)
    # the spec rounds to 7 decimals; torch's float32 sqrt (MKL) is not correctly rounded: <= 2 ulp at |w| < 2
    np.testing.assert_allclose(np.array(got), np.array(expected, np.float32), rtol=0, atol=3e-7)
    if name == "SGD":  # no sqrt: every rounding is PyTorch's, so the values are torch's bit for bit
        np.testing.assert_array_equal(np.array(got), np.array(_opt02_run(torch, torch.optim, name, kw)[0]))


@pytest.mark.parametrize("kw", [dict(lr=0.1, momentum=0.9, dampening=0.5), dict(lr=0.05, weight_decay=0.3),
                                dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)])
def test_sgd_is_bit_exact_on_random_gradients(kw, exact_rounding):
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal(300).astype(np.float32)
    grads = [rng.standard_normal(300).astype(np.float32) for _ in range(6)]
    out = []
    for lib, m in LIBS:
        w = lib.tensor(p0.copy(), requires_grad=True)
        opt = m.SGD([w], **kw)
        for g in grads:
            w.grad = lib.tensor(g.copy())
            opt.step()
        out.append((_np(w).copy(), {k: _np(v).copy() for k, v in opt.state[w].items()}))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    for k in out[0][1]:
        np.testing.assert_array_equal(out[1][1][k], out[0][1][k])


def test_OPT_03_04_adam_state_dict_after_one_step():
    _, opt, w = _opt02_run(ft, optim, "Adam", dict(lr=0.1), steps=1)
    sd = opt.state_dict()
    assert sd["param_groups"] == [{"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0,
                                   "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                                   "differentiable": False, "fused": None, "decoupled_weight_decay": False,
                                   "params": [0]}]
    st = sd["state"][0]
    assert list(st) == ["step", "exp_avg", "exp_avg_sq"]
    assert st["step"].dim() == 0 and st["step"].dtype == ft.float32 and float(st["step"]) == 1.0
    np.testing.assert_allclose(_np(st["exp_avg"]), [0.1, -0.6], rtol=1e-6)
    np.testing.assert_allclose(_np(st["exp_avg_sq"]), [0.001, 0.036], rtol=1e-6)


def test_OPT_05_06_sgd_state_dict():
    _, opt, _ = _opt02_run(ft, optim, "SGD", dict(lr=0.1, momentum=0.9), steps=1)
    sd = opt.state_dict()
    np.testing.assert_array_equal(_np(sd["state"][0]["momentum_buffer"]), [1.0, -6.0])
    assert sd["param_groups"] == [{"lr": 0.1, "momentum": 0.9, "dampening": 0, "weight_decay": 0, "nesterov": False,
                                   "maximize": False, "foreach": None, "differentiable": False, "fused": None,
                                   "params": [0]}]
    assert _opt02_run(ft, optim, "SGD", dict(lr=0.1), steps=1)[1].state_dict()["state"] == {}


def test_OPT_07_08_adamw_defaults_and_group_keys():
    opt = optim.AdamW([ft.tensor([1.0], requires_grad=True)], lr=0.1)
    assert opt.defaults == {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0.01, "amsgrad": False,
                            "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                            "fused": None, "decoupled_weight_decay": True}
    adam = optim.Adam([ft.tensor([1.0], requires_grad=True)])
    assert sorted(adam.param_groups[0]) == ["amsgrad", "betas", "capturable", "decoupled_weight_decay",
                                            "differentiable", "eps", "foreach", "fused", "lr", "maximize", "params",
                                            "weight_decay"]


def test_OPT_09_10_zero_grad_and_skip():
    w = ft.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(_np(w.grad), [0.0, 0.0])
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # no grad: skipped
    np.testing.assert_array_equal(_np(w), [1.0, -2.0])


def test_OPT_13_14_15_16_17_defaults_and_errors():
    w = ft.tensor([1.0], requires_grad=True)
    assert optim.SGD([w]).param_groups[0]["lr"] == 0.001
    with pytest.raises(ValueError, match=re.escape("Invalid learning rate: -1")):
        optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match=re.escape("Nesterov momentum requires a momentum and zero dampening")):
        optim.SGD([w], nesterov=True)
    with pytest.raises(ValueError, match=re.escape("Invalid beta parameter at index 0: 1.0")):
        optim.Adam([w], betas=(1.0, 0.999))
    with pytest.raises(TypeError, match=re.escape("params argument given to the optimizer should be an iterable of "
                                                  "Tensors or dicts, but got torch.FloatTensor")):
        optim.SGD(w, lr=0.1)


def test_OPT_18_group_lrs():
    a, b = ft.tensor([1.0], requires_grad=True), ft.tensor([2.0], requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]


def test_OPT_19_duplicate_parameters_warn():
    msg = ("optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; "
           "see github.com/pytorch/pytorch/issues/40967 for more information")
    for lib, m in LIBS:
        w = lib.tensor([1.0], requires_grad=True)
        with pytest.warns(UserWarning, match=re.escape(msg)):
            opt = m.SGD([w, w], lr=0.1)
        assert len(opt.param_groups[0]["params"]) == 2
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m.SGD([w], lr=0.1)


def test_named_parameters_give_param_names():
    sds = []
    for lib, m in LIBS:
        ps = _params(lib)
        opt = m.Adam([("w1", ps[0]), ("b1", ps[1])], lr=0.01)
        opt.add_param_group({"params": [("w2", ps[2]), ("b2", ps[3])], "lr": 0.1})
        assert opt.param_groups[1]["param_names"] == ["w2", "b2"] and opt.param_groups[1]["params"][0] is ps[2]
        _train_step(lib, opt, ps, 0)
        sds.append(opt.state_dict())
        with pytest.raises(ValueError, match=re.escape("all optimizer param groups should be with/without names. "
                                                       "cannot add param group without names to the optimizer")):
            opt.add_param_group({"params": [lib.tensor([1.0], requires_grad=True)]})
        with pytest.raises(ValueError, match=re.escape("all optimizer params should be with/without names. "
                                                       "Some param names are missing")):
            m.SGD([("a", ps[0]), ps[1]], lr=0.1)
        fresh = m.Adam([("w1", ps[0]), ("b1", ps[1])], lr=0.01)
        fresh.add_param_group({"params": [("w2", ps[2]), ("b2", ps[3])]})
        fresh.load_state_dict(opt.state_dict())
        assert fresh.param_groups[1]["param_names"] == ["w2", "b2"] and fresh.param_groups[1]["lr"] == 0.1
    assert [list(g) for g in sds[1]["param_groups"]] == [list(g) for g in sds[0]["param_groups"]]
    assert sds[1]["param_groups"] == sds[0]["param_groups"]


@pytest.mark.parametrize("name,kw,sq", [("Adam", dict(lr=0.1, weight_decay=0.1), "exp_avg_sq"),
                                        ("AdamW", dict(lr=0.1), "exp_avg_sq"),
                                        ("RMSprop", dict(lr=0.01, weight_decay=0.1), "square_avg"),
                                        ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.1), "sum")])
def test_rounding_differs_only_where_torch_sqrt_does(name, kw, sq, exact_rounding):
    """Every op rounds where torch's does; the only float32 difference left is torch's MKL sqrt, which is not
    correctly rounded (jnp.sqrt is): on one step, parameters differ only where sqrt(state) does."""
    rng = np.random.default_rng(2)
    p0, g = rng.standard_normal(2000).astype(np.float32), rng.standard_normal(2000).astype(np.float32)
    out = []
    for lib, m in LIBS:
        w = lib.tensor(p0.copy(), requires_grad=True)
        opt = getattr(m, name)([w], **kw)
        w.grad = lib.tensor(g.copy())
        opt.step()
        out.append((_np(w).copy(), _np(opt.state[w][sq]).copy()))
    np.testing.assert_array_equal(out[1][1], out[0][1])  # the state itself is bit-exact
    torch_sqrt_off = _np(torch.tensor(out[0][1]).sqrt()) != np.sqrt(out[0][1])
    differs = out[1][0] != out[0][0]
    assert not (differs & ~torch_sqrt_off).any()
    assert differs.any() or not torch_sqrt_off.any()  # the check can see a difference
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=0, atol=1e-6)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1)),
                                     ("AdamW", dict(lr=0.1, weight_decay=0.1))])
def test_fast_rounding_is_within_ulps_of_torch(name, kw):
    """The default arithmetic (parameter dtype, fused by XLA) stays within a few float32 ulps of torch per step."""
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(500).astype(np.float32)
    grads = [rng.standard_normal(500).astype(np.float32) for _ in range(5)]
    out = []
    for lib, m in LIBS:
        w = lib.tensor(p0.copy(), requires_grad=True)
        opt = getattr(m, name)([w], **kw)
        for g in grads:
            w.grad = lib.tensor(g.copy())
            opt.step()
        out.append(_np(w).copy())
    np.testing.assert_allclose(out[1], out[0], rtol=4e-7 * 5, atol=1e-7)


@pytest.mark.parametrize("rounding", ["fast", "exact"])
@pytest.mark.parametrize("name,kw", [("SGD", {}), ("SGD", {"momentum": 0.9, "nesterov": True}), ("RMSprop", {}),
                                     ("RMSprop", {"momentum": 0.5, "centered": True}), ("Adagrad", {}),
                                     ("Adam", {}), ("AdamW", {}), ("SGD", {"weight_decay": 0.1}),
                                     ("Adam", {"weight_decay": 0.1})])
def test_non_finite_parameters_keep_pytorchs_values(name, kw, rounding, monkeypatch):
    """An inf/nan parameter entry with a zero gradient stays what PyTorch's in-place update leaves (inf stays inf
    unless weight decay multiplies it into the gradient); it was nan: the update was applied as ``p + (new - p)``
    and ``weight_decay=0`` as ``g + 0 * p``."""
    from functorch_lite import _config
    monkeypatch.setattr(_config, "OPTIM_ROUNDING", rounding)
    out = []
    for lib, opt_mod in LIBS:
        p = lib.tensor([float("inf"), 1.0, float("-inf"), float("nan"), -2.0], requires_grad=True)
        opt = getattr(opt_mod, name)([p], lr=0.1, **kw)
        for _ in range(3):
            opt.zero_grad()
            (p * lib.tensor([0.0, 1.0, 0.0, 0.0, 0.5])).sum().backward()
            opt.step()
        out.append(_np(p))
    ref, ours = out
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(ours[np.isinf(ref)], ref[np.isinf(ref)])
    np.testing.assert_allclose(ours[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-6)
