"""Parity of functorch_lite.optim (SGD, Adam, AdamW on optax) with torch.optim (design.md §3).

Each training test runs the same 2-layer MLP (plain leaf tensors), from the same initial weights on the
same fixed batches, for 20 steps in PyTorch and here, and compares loss and parameters at every step.
"""
import copy
import re

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.optim as optim
from functorch_lite.optim.optimizer import TRACES

STEPS = 20
RNG = np.random.default_rng(0)
INIT = [RNG.standard_normal((4, 8)).astype(np.float32) * 0.5, RNG.standard_normal(8).astype(np.float32) * 0.1,
        RNG.standard_normal((8, 3)).astype(np.float32) * 0.5, RNG.standard_normal(3).astype(np.float32) * 0.1]
BATCHES = [(RNG.standard_normal((5, 4)).astype(np.float32), RNG.standard_normal((5, 3)).astype(np.float32))
           for _ in range(STEPS)]


def _params(lib):
    return [lib.tensor(a.copy(), requires_grad=True) for a in INIT]


def _loss(lib, ps, i):
    w1, b1, w2, b2 = ps
    x, t = BATCHES[i % STEPS]
    y = (lib.tensor(x) @ w1 + b1).relu() @ w2 + b2
    return ((y - lib.tensor(t)) ** 2).mean()


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def _train_step(lib, opt, ps, i):
    opt.zero_grad()
    loss = _loss(lib, ps, i)
    loss.backward()
    opt.step()
    return float(loss.item())


def _compare_run(make, steps=STEPS, groups=None):
    tp, fp = _params(torch), _params(ft)
    topt = make(torch.optim, tp if groups is None else groups(tp))
    fopt = make(optim, fp if groups is None else groups(fp))
    for i in range(steps):
        lt, lf = _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
        np.testing.assert_allclose(lf, lt, rtol=1e-5, atol=1e-6, err_msg=f"loss at step {i}")
        for a, b in zip(fp, tp):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6, err_msg=f"param at step {i}")
    return topt, fopt, tp, fp


SGD_CASES = {
    "plain": dict(lr=0.1),
    "momentum": dict(lr=0.05, momentum=0.9),
    "dampening": dict(lr=0.05, momentum=0.9, dampening=0.3),
    "nesterov": dict(lr=0.05, momentum=0.9, nesterov=True),
    "weight_decay": dict(lr=0.05, momentum=0.5, weight_decay=0.1),
    "maximize": dict(lr=0.01, momentum=0.9, maximize=True),
    "weight_decay-no-momentum": dict(lr=0.05, weight_decay=0.2),
    "maximize-no-momentum": dict(lr=0.01, maximize=True),
    "nesterov-weight_decay": dict(lr=0.03, momentum=0.8, nesterov=True, weight_decay=0.05),
    "dampening-weight_decay": dict(lr=0.03, momentum=0.5, dampening=0.9, weight_decay=0.01),
}


@pytest.mark.parametrize("case", list(SGD_CASES))
def test_sgd_matches_torch(case):
    kw = SGD_CASES[case]
    topt, fopt, tp, fp = _compare_run(lambda m, ps: m.SGD(ps, **kw))
    if kw.get("momentum"):
        for a, b in zip(fp, tp):
            np.testing.assert_allclose(_np(fopt.state[a]["momentum_buffer"]),
                                       _np(topt.state[b]["momentum_buffer"]), rtol=1e-5, atol=1e-6)
    else:
        assert fopt.state[fp[0]] == {} and dict(topt.state[tp[0]]) == {}


ADAM_CASES = {
    "Adam-plain": ("Adam", dict(lr=0.01)),
    "Adam-weight_decay": ("Adam", dict(lr=0.01, weight_decay=0.1)),
    "Adam-amsgrad": ("Adam", dict(lr=0.01, amsgrad=True, betas=(0.8, 0.99))),
    "Adam-maximize": ("Adam", dict(lr=0.001, maximize=True)),
    "AdamW": ("AdamW", dict(lr=0.01)),
    "AdamW-amsgrad-wd": ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True, eps=1e-6)),
    "Adam-amsgrad-maximize-wd": ("Adam", dict(lr=0.005, amsgrad=True, maximize=True, weight_decay=0.05)),
    "AdamW-maximize": ("AdamW", dict(lr=0.005, maximize=True, betas=(0.7, 0.9))),
    "Adam-decoupled_weight_decay": ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
}


@pytest.mark.parametrize("case", list(ADAM_CASES))
def test_adam_matches_torch(case):
    name, kw = ADAM_CASES[case]
    topt, fopt, tp, fp = _compare_run(lambda m, ps: getattr(m, name)(ps, **kw))
    for a, b in zip(fp, tp):
        fs, ts = fopt.state[a], topt.state[b]
        assert sorted(fs) == sorted(ts)
        for k in ts:
            assert str(fs[k].dtype) == str(ts[k].dtype) and tuple(fs[k].shape) == tuple(ts[k].shape)
            np.testing.assert_allclose(_np(fs[k]), _np(ts[k]), rtol=1e-5, atol=1e-7)


def test_step_is_inplace_on_the_leaf():
    fp = _params(ft)
    opt = optim.SGD(fp, lr=0.1)
    ids, versions = [id(p) for p in fp], [p._version for p in fp]
    _loss(ft, fp, 0).backward()
    opt.step()
    assert [id(p) for p in fp] == ids
    assert [p._version for p in fp] == [v + 1 for v in versions]
    assert all(p.is_leaf and p.requires_grad and p.grad_fn is None for p in fp)


def test_lr_change_changes_update_without_recompiling():
    def run(lib, m):
        ps = _params(lib)
        opt = m.Adam(ps, lr=0.01)
        out = []
        for i in range(6):
            if i == 3:
                opt.param_groups[0]["lr"] = 0.05
                opt.param_groups[0]["betas"] = (0.85, 0.995)
            _train_step(lib, opt, ps, i)
            out.append([_np(p).copy() for p in ps])
        return out

    run(ft, optim)  # warm the cache for this structure
    before_traces, before_compiles = TRACES["count"], ft.cache_info()["compiles"]
    ours = run(ft, optim)
    assert TRACES["count"] == before_traces
    theirs = run(torch, torch.optim)
    for a, b in zip(ours, theirs):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    # an lr change must move the parameters differently from keeping the old lr
    ps = _params(ft)
    opt = optim.Adam(ps, lr=0.01)
    for i in range(4):
        _train_step(ft, opt, ps, i)
    assert not np.allclose(_np(ps[0]), ours[3][0])
    compiles_during = ft.cache_info()["compiles"] - before_compiles
    assert TRACES["count"] == before_traces
    assert compiles_during == 0


def test_two_param_groups_with_different_lr():
    _compare_run(lambda m, ps: m.SGD(ps, lr=0.1, momentum=0.9), steps=8,
                 groups=lambda ps: [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.01, "momentum": 0.5}])
    topt, fopt, _, _ = _compare_run(lambda m, ps: m.Adam(ps, lr=0.01), steps=8,
                                    groups=lambda ps: [{"params": ps[:2], "lr": 0.05}, {"params": ps[2:]}])
    assert [g["lr"] for g in fopt.param_groups] == [g["lr"] for g in topt.param_groups]


def test_params_without_grad_are_skipped():
    for lib, m in ((torch, torch.optim), (ft, optim)):
        ps = _params(lib)
        opt = m.Adam(ps, lr=0.1)
        v = ps[3]._version
        loss = _loss(lib, ps, 0)
        loss.backward()
        ps[3].grad = None
        opt.step()
        assert ps[3]._version == v and len(opt.state[ps[3]]) == 0
        np.testing.assert_array_equal(_np(ps[3]), INIT[3])
        assert float(opt.state[ps[0]]["step"]) == 1.0


def test_zero_grad_both_modes():
    for lib, m in ((torch, torch.optim), (ft, optim)):
        ps = _params(lib)
        opt = m.SGD(ps, lr=0.1)
        _loss(lib, ps, 0).backward()
        g = ps[0].grad
        opt.zero_grad(set_to_none=False)
        assert ps[0].grad is g and not g.requires_grad
        np.testing.assert_array_equal(_np(g), np.zeros_like(INIT[0]))
        _loss(lib, ps, 0).backward()
        opt.zero_grad()
        assert all(p.grad is None for p in ps)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.05, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("AdamW", dict(lr=0.01))])
def test_state_dict_round_trip(name, kw):
    tp, fp = _params(torch), _params(ft)
    topt, fopt = getattr(torch.optim, name)(tp, **kw), getattr(optim, name)(fp, **kw)
    for i in range(5):
        _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
    tsd, fsd = topt.state_dict(), fopt.state_dict()
    assert fsd["param_groups"] == tsd["param_groups"]
    assert sorted(fsd["state"]) == sorted(tsd["state"])
    for k in tsd["state"]:
        assert sorted(fsd["state"][k]) == sorted(tsd["state"][k])
        for n in tsd["state"][k]:
            np.testing.assert_allclose(_np(fsd["state"][k][n]), _np(tsd["state"][k][n]), rtol=1e-5, atol=1e-7)
    # a fresh optimizer over copies of the parameters, loaded from the state dict, continues identically
    fp2 = [ft.tensor(_np(p).copy(), requires_grad=True) for p in fp]
    fopt2 = getattr(optim, name)(fp2, lr=123.0)
    fopt2.load_state_dict(copy.deepcopy(fsd))  # (a live state dict would share its tensors, as torch's)
    assert fopt2.param_groups[0]["lr"] == kw["lr"]
    for i in range(5, 10):
        _train_step(ft, fopt, fp, i), _train_step(ft, fopt2, fp2, i), _train_step(torch, topt, tp, i)
        for a, b, c in zip(fp, fp2, tp):
            np.testing.assert_array_equal(_np(a), _np(b))
            np.testing.assert_allclose(_np(a), _np(c), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,on,off", [("SGD", dict(momentum=0.9), dict(momentum=0.0)),
                                          ("Adam", dict(amsgrad=True), dict(amsgrad=False)),
                                          ("RMSprop", dict(momentum=0.5, centered=True), dict(momentum=0.0))])
def test_state_of_an_option_that_is_off_is_kept_loaded_and_used_again(name, on, off):
    """torch keeps a state entry whose option is off (untouched), loads one into an optimizer with the option off,
    and uses the kept buffer when the option comes back on."""
    tp, fp = _params(torch), _params(ft)
    topt, fopt = (getattr(lib.optim, name)(ps, lr=0.01, **on) for lib, ps in ((torch, tp), (ft, fp)))
    for i in range(2):
        _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
    tsd, fsd = topt.state_dict(), fopt.state_dict()
    tp2, fp2 = ([lib.tensor(_np(p).copy(), requires_grad=True) for p in tp] for lib in (torch, ft))
    topt2, fopt2 = (getattr(lib.optim, name)(ps, lr=0.01, **{**on, **off}) for lib, ps in ((torch, tp2), (ft, fp2)))
    for opt, sd in ((topt2, tsd), (fopt2, fsd)):
        opt.load_state_dict(sd)  # (the saved groups come back: the option is set off again after it)
        opt.param_groups[0].update(off)
    for i in range(2, 6):
        if i == 4:  # the option back on: the kept buffer is used again
            topt2.param_groups[0].update(on)
            fopt2.param_groups[0].update(on)
        _train_step(torch, topt2, tp2, i), _train_step(ft, fopt2, fp2, i)
        tsd2, fsd2 = topt2.state_dict(), fopt2.state_dict()
        assert [list(fsd2["state"][k]) for k in fsd2["state"]] == [list(tsd2["state"][k]) for k in tsd2["state"]]
        for k in tsd2["state"]:
            for n in tsd2["state"][k]:
                want = _np(tsd2["state"][k][n])
                # (atol: two ulps of the state's largest element; a small element that is a difference of large
                # ones rounds by the CPU's kernels: 1 ulp of 12.6 apart on an AVX-512 host)
                np.testing.assert_allclose(_np(fsd2["state"][k][n]), want, rtol=1e-5,
                                           atol=1e-7 + 2.4e-7 * float(np.abs(want).max(initial=0)))
        for a, c in zip(fp2, tp2):
            np.testing.assert_allclose(_np(a), _np(c), rtol=1e-5, atol=1e-6)


def test_state_view_tracks_steps():
    fp = _params(ft)
    opt = optim.SGD(fp, lr=0.1, momentum=0.9)
    _train_step(ft, opt, fp, 0)
    buf = opt.state[fp[0]]["momentum_buffer"]
    _train_step(ft, opt, fp, 1)
    assert opt.state[fp[0]]["momentum_buffer"] is buf
    np.testing.assert_array_equal(_np(buf), _np(opt.state_dict()["state"][0]["momentum_buffer"]))


@pytest.mark.parametrize("make,exc,msg", [
    (lambda m, p: m.SGD(p, lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
    (lambda m, p: m.SGD(p, lr=0.1, momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (lambda m, p: m.SGD(p, lr=0.1, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (lambda m, p: m.SGD(p, lr=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda m, p: m.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda m, p: m.Adam(p, lr=-0.5), ValueError, "Invalid learning rate: -0.5"),
    (lambda m, p: m.Adam(p, eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
    (lambda m, p: m.Adam(p, betas=(1.0, 0.999)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    (lambda m, p: m.AdamW(p, betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
    (lambda m, p: m.AdamW(p, weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
    (lambda m, p: m.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda m, p: m.SGD([{"params": p[:1]}, {"params": p[:2]}], lr=0.1), ValueError,
     "some parameters appear in more than one parameter group"),
    (lambda m, p: m.SGD([p[0] * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda m, p: m.SGD(p[0], lr=0.1), TypeError,
     "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "),
    (lambda m, p: m.SGD([1.0], lr=0.1), TypeError, "optimizer can only optimize Tensors, but one of the params is "),
])
def test_errors_match_torch(make, exc, msg):
    for lib, m in ((torch, torch.optim), (ft, optim)):
        with pytest.raises(exc, match=re.escape(msg)):
            make(m, _params(lib))


def test_load_state_dict_errors():
    for lib, m in ((torch, torch.optim), (ft, optim)):
        ps = _params(lib)
        sd = m.SGD(ps, lr=0.1).state_dict()
        with pytest.raises(ValueError, match="different number of parameter groups"):
            m.SGD([{"params": ps[:2]}, {"params": ps[2:]}], lr=0.1).load_state_dict(sd)
        with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
            m.SGD(ps[:2], lr=0.1).load_state_dict(sd)


def test_writes_into_state_tensors_feed_the_next_step():
    tp, fp = _params(torch), _params(ft)
    topt, fopt = torch.optim.Adam(tp, lr=0.01), optim.Adam(fp, lr=0.01)
    for i in range(3):
        _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
    with torch.no_grad():
        topt.state[tp[0]]["exp_avg"].zero_()
    fopt.state[fp[0]]["exp_avg"].zero_()
    for i in range(3, 6):
        _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
        for a, b in zip(fp, tp):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)


def test_step_with_closure_returns_the_loss():
    out = []
    for lib, m in ((torch, torch.optim), (ft, optim)):
        ps = _params(lib)
        opt = m.SGD(ps, lr=0.1, momentum=0.9)

        def closure():
            opt.zero_grad()
            loss = _loss(lib, ps, 0)
            loss.backward()
            return loss

        losses = [float(opt.step(closure).item()) for _ in range(3)]
        out.append((losses, [_np(p).copy() for p in ps]))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5)
    for a, b in zip(out[1][1], out[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
