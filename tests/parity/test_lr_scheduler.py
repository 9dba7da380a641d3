"""Parity of functorch_lite.optim.lr_scheduler with torch.optim.lr_scheduler.

Each scheduler runs the same configuration in both libraries (``optimizer.step(); scheduler.step()``
for ~30 steps) and the learning-rate sequences must be equal as Python floats (same recursive
formulas, same operation order), not just close.
"""
import math
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.optim as optim
from functorch_lite.optim.optimizer import TRACES

LIBS = ((torch, torch.optim), (ft, optim))


def _opt(lib, m, name="SGD", groups=1, **kw):
    ps = [lib.tensor([1.0, -2.0], requires_grad=True) for _ in range(groups)]
    if groups == 1:
        return getattr(m, name)(ps, **kw)
    return getattr(m, name)([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], **kw)


SCHEDS = {
    "StepLR": (dict(lr=0.1), "StepLR", dict(step_size=7, gamma=0.5)),
    "MultiStepLR": (dict(lr=0.1), "MultiStepLR", dict(milestones=[3, 10, 10, 21], gamma=0.3)),
    "ExponentialLR": (dict(lr=0.1), "ExponentialLR", dict(gamma=0.9)),
    "CosineAnnealingLR": (dict(lr=0.1), "CosineAnnealingLR", dict(T_max=10, eta_min=0.001)),
    "CosineAnnealingLR-restart": (dict(lr=0.5), "CosineAnnealingLR", dict(T_max=7)),
    "LinearLR": (dict(lr=0.1), "LinearLR", dict(start_factor=0.25, end_factor=0.9, total_iters=12)),
    "LinearLR-default": (dict(lr=0.05), "LinearLR", dict()),
    "ConstantLR": (dict(lr=0.1), "ConstantLR", dict(factor=0.5, total_iters=4)),
    "LambdaLR": (dict(lr=0.1), "LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e + 0.01 * (e % 3))),
    "MultiplicativeLR": (dict(lr=0.1), "MultiplicativeLR", dict(lr_lambda=lambda e: 0.97)),
    "OneCycleLR-cos": (dict(lr=0.1, momentum=0.9), "OneCycleLR", dict(max_lr=0.5, total_steps=31)),
    "OneCycleLR-linear": (dict(lr=0.1, momentum=0.9), "OneCycleLR",
                          dict(max_lr=0.5, total_steps=31, anneal_strategy="linear", pct_start=0.25)),
    "OneCycleLR-three_phase": (dict(lr=0.1, momentum=0.9), "OneCycleLR",
                               dict(max_lr=1.0, epochs=3, steps_per_epoch=11, three_phase=True, div_factor=10.0)),
    "OneCycleLR-no-momentum": (dict(lr=0.1), "OneCycleLR", dict(max_lr=0.3, total_steps=40, cycle_momentum=False)),
}


def _run(lib, m, opt_kw, name, kw, steps=30, opt_name="SGD", groups=1):
    opt = _opt(lib, m, opt_name, groups, **opt_kw)
    sched = getattr(m.lr_scheduler, name)(opt, **kw)
    out = [(sched.get_last_lr(), [g["lr"] for g in opt.param_groups], [g.get("momentum") for g in opt.param_groups],
            [g["betas"] for g in opt.param_groups] if opt_name == "Adam" else None)]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups],
                    [g.get("momentum") for g in opt.param_groups],
                    [g["betas"] for g in opt.param_groups] if opt_name == "Adam" else None))
    return out, opt, sched


@pytest.mark.parametrize("case", list(SCHEDS))
def test_lr_sequence_equals_torch(case):
    opt_kw, name, kw = SCHEDS[case]
    theirs, topt, tsched = _run(torch, torch.optim, opt_kw, name, kw)
    ours, fopt, fsched = _run(ft, optim, opt_kw, name, kw)
    assert ours == theirs  # exact float equality: same formulas, same order
    assert fsched.base_lrs == tsched.base_lrs and fsched.last_epoch == tsched.last_epoch == 30
    assert [g["initial_lr"] for g in fopt.param_groups] == [g["initial_lr"] for g in topt.param_groups]
    assert len(set(x[1][0] for x in ours)) > 1  # the schedule actually moves


@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=4, gamma=0.5)),
                                     ("CosineAnnealingLR", dict(T_max=9)),
                                     ("OneCycleLR", dict(max_lr=[0.5, 0.9], total_steps=30))])
def test_two_groups_and_adam(name, kw):
    theirs = _run(torch, torch.optim, dict(lr=0.01), name, kw, steps=29, opt_name="Adam", groups=2)[0]
    ours = _run(ft, optim, dict(lr=0.01), name, kw, steps=29, opt_name="Adam", groups=2)[0]
    assert ours == theirs
    if name == "OneCycleLR":  # beta1 cycles between max_momentum and base_momentum
        assert ours[0][3][0] == (0.95, 0.999) and min(b[3][0][0] for b in ours) == 0.85


def test_sequential_lr():
    def run(lib, m):
        opt = _opt(lib, m, lr=0.2)
        s1 = m.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=4)
        s2 = m.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        s3 = m.lr_scheduler.CosineAnnealingLR(opt, T_max=6)
        sched = m.lr_scheduler.SequentialLR(opt, [s1, s2, s3], milestones=[5, 15])
        out = [sched.get_last_lr()]
        for _ in range(30):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr() + [opt.param_groups[0]["lr"]])
        return out, sched

    (ours, fs), (theirs, ts) = run(ft, optim), run(torch, torch.optim)
    assert ours == theirs
    assert fs.last_epoch == ts.last_epoch and [s.last_epoch for s in fs._schedulers] == [
        s.last_epoch for s in ts._schedulers]


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.1),
                                dict(patience=1, threshold_mode="abs", threshold=0.05, cooldown=2, min_lr=0.004),
                                dict(mode="max", threshold_mode="abs", patience=0, factor=0.3, min_lr=[1e-3], eps=1e-3)])
def test_reduce_lr_on_plateau(kw):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 1.2, 1.3, 1.31, 1.3,
               1.3, 0.5, 0.5, 0.5, 0.49, 0.49, 0.49, 0.49, 0.49, 0.49, 0.49, 0.49]

    def run(lib, m):
        opt = _opt(lib, m, lr=0.1)
        sched = m.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        out = []
        for x in metrics:
            opt.step()
            sched.step(lib.tensor(x))
            out.append((sched.get_last_lr(), sched.best, sched.num_bad_epochs, sched.cooldown_counter))
        return out, sched

    (ours, fs), (theirs, ts) = run(ft, optim), run(torch, torch.optim)
    assert ours == theirs
    assert fs.state_dict().keys() == ts.state_dict().keys()
    assert "initial_lr" not in fs.optimizer.param_groups[0]


def test_scheduler_steps_never_recompile():
    def train(sched_factory, steps):
        ps = [ft.tensor(np.ones((3, 2), np.float32), requires_grad=True)]
        opt = optim.SGD(ps, lr=0.1, momentum=0.9)
        sched = sched_factory(opt)
        lrs = []
        for _ in range(steps):
            opt.zero_grad()
            (ps[0] * ps[0]).sum().backward()
            opt.step()
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
        return lrs

    train(lambda o: optim.lr_scheduler.StepLR(o, 5), 2)  # warm the cache for this structure
    before, compiles = TRACES["count"], ft.cache_info()["compiles"]
    lrs = train(lambda o: optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=50), 50)
    lrs += train(lambda o: optim.lr_scheduler.CosineAnnealingLR(o, T_max=10), 50)
    assert len(set(lrs)) > 50  # lr (and momentum for OneCycleLR) changed at every step
    assert TRACES["count"] == before
    assert ft.cache_info()["compiles"] == compiles


def test_lr_change_reaches_the_update():
    out = []
    for lib, m in LIBS:
        p = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = m.Adam([p], lr=0.1)
        sched = m.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=10)
        for _ in range(10):
            opt.zero_grad()
            ((p - lib.tensor([0.5, 1.0])) ** 2).sum().backward()
            opt.step()
            sched.step()
        out.append(p.detach().numpy().copy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)


def test_warning_scheduler_step_before_optimizer_step():
    msg = "Detected call of `lr_scheduler.step()` before `optimizer.step()`."
    for lib, m in LIBS:
        opt = _opt(lib, m, lr=0.1)
        sched = m.lr_scheduler.StepLR(opt, 3)
        with pytest.warns(UserWarning, match=re.escape(msg)):
            sched.step()
        opt2 = _opt(lib, m, lr=0.1)
        sched2 = m.lr_scheduler.StepLR(opt2, 3)
        opt2.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sched2.step()
        assert hasattr(opt2.step, "_wrapped_by_lr_sched") and opt2._opt_called
        opt3 = _opt(lib, m, lr=0.1)
        sched3 = m.lr_scheduler.ExponentialLR(opt3, 0.5)
        opt3.step = lambda: None  # overridden after the scheduler was created
        with pytest.warns(UserWarning, match=re.escape("Seems like `optimizer.step()` has been overridden")):
            sched3.step()


def test_get_lr_outside_step_and_epoch_argument_warn():
    for lib, m in LIBS:
        sched = m.lr_scheduler.StepLR(_opt(lib, m, lr=0.1), 3, gamma=0.5)
        with pytest.warns(UserWarning, match=re.escape("please use `get_last_lr()`")):
            sched.get_lr()
        sched.optimizer.step()
        with pytest.warns(UserWarning, match=re.escape("The epoch parameter in `scheduler.step()` was not necessary")):
            sched.step(7)  # closed form: 0.1 * 0.5 ** (7 // 3)
        assert sched.get_last_lr() == [0.1 * 0.5 ** 2] and sched.last_epoch == 7


@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=3)), ("CosineAnnealingLR", dict(T_max=5)),
                                     ("OneCycleLR", dict(max_lr=0.4, total_steps=20)),
                                     ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (e + 1)))])
def test_state_dict_round_trip(name, kw):
    sds, seqs = [], []
    for lib, m in LIBS:
        opt = _opt(lib, m, lr=0.1, momentum=0.9)
        sched = getattr(m.lr_scheduler, name)(opt, **kw)
        for _ in range(6):
            opt.step()
            sched.step()
        sd = sched.state_dict()
        sds.append(sd)
        # a fresh scheduler on a fresh optimizer, both loaded, continues identically
        opt2 = _opt(lib, m, lr=0.1, momentum=0.9)
        opt2.load_state_dict(opt.state_dict())
        sched2 = getattr(m.lr_scheduler, name)(opt2, **kw)
        sched2.load_state_dict(sd)
        opt2.load_state_dict(opt.state_dict())
        seq = []
        for _ in range(8):
            opt.step(), sched.step(), opt2.step(), sched2.step()
            assert sched2.get_last_lr() == sched.get_last_lr()
            seq.append(sched2.get_last_lr())
        seqs.append(seq)
    assert sds[1].keys() == sds[0].keys()
    for k in sds[0]:
        assert sds[1][k] == sds[0][k], k
    assert seqs[1] == seqs[0]


def test_initial_lr_and_resume():
    for lib, m in LIBS:
        opt = _opt(lib, m, lr=0.3)
        with pytest.raises(KeyError, match=re.escape("param 'initial_lr' is not specified in param_groups[0] when "
                                                     "resuming scheduler with last_epoch >= 0.")):
            m.lr_scheduler.StepLR(opt, 2, last_epoch=3)
        sched = m.lr_scheduler.StepLR(opt, 2)
        assert opt.param_groups[0]["initial_lr"] == 0.3 and sched.base_lrs == [0.3]
        assert opt.state_dict()["param_groups"][0]["initial_lr"] == 0.3
        opt.param_groups[0]["lr"] = 0.7
        resumed = m.lr_scheduler.StepLR(opt, 2, gamma=0.5, last_epoch=3)
        assert resumed.base_lrs == [0.3] and resumed.last_epoch == 4 and resumed.get_last_lr() == [0.35]


@pytest.mark.parametrize("make,exc,msg", [
    (lambda m, o: m.lr_scheduler.StepLR(object(), 2), TypeError, "object is not an Optimizer"),
    (lambda m, o: m.lr_scheduler.LinearLR(o, start_factor=0), ValueError,
     "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."),
    (lambda m, o: m.lr_scheduler.LinearLR(o, end_factor=1.5), ValueError,
     "Ending multiplicative factor expected to be between 0 and 1."),
    (lambda m, o: m.lr_scheduler.ConstantLR(o, factor=2.0), ValueError,
     "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda m, o: m.lr_scheduler.LambdaLR(o, [lambda e: 1.0] * 2), ValueError, "Expected 1 lr_lambdas, but got 2"),
    (lambda m, o: m.lr_scheduler.MultiplicativeLR(o, 0.5), TypeError, "lr_lambda should be a function, but got float"),
    (lambda m, o: m.lr_scheduler.OneCycleLR(o, 0.1), ValueError,
     "You must define either total_steps OR (epochs AND steps_per_epoch)"),
    (lambda m, o: m.lr_scheduler.OneCycleLR(o, 0.1, total_steps=0), ValueError,
     "Expected positive integer total_steps, but got 0"),
    (lambda m, o: m.lr_scheduler.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=-1), ValueError,
     "Expected positive integer steps_per_epoch, but got -1"),
    (lambda m, o: m.lr_scheduler.OneCycleLR(o, 0.1, total_steps=10, pct_start=1), ValueError,
     "Expected float between 0 and 1 pct_start, but got 1"),
    (lambda m, o: m.lr_scheduler.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="exp"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (lambda m, o: m.lr_scheduler.OneCycleLR(o, [0.1, 0.2], total_steps=10), ValueError,
     "max_lr must have the same length as optimizer.param_groups. max_lr has 2 values, param_groups has 1."),
    (lambda m, o: m.lr_scheduler.OneCycleLR(m.Adagrad(o.param_groups[0]["params"]), 0.1, total_steps=10),
     ValueError, "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"),
    (lambda m, o: m.lr_scheduler.ReduceLROnPlateau(o, factor=1.0), ValueError, "Factor should be < 1.0."),
    (lambda m, o: m.lr_scheduler.ReduceLROnPlateau(o, mode="avg"), ValueError, "mode avg is unknown!"),
    (lambda m, o: m.lr_scheduler.ReduceLROnPlateau(o, threshold_mode="x"), ValueError, "threshold mode x is unknown!"),
    (lambda m, o: m.lr_scheduler.ReduceLROnPlateau(o, min_lr=[0.1, 0.2]), ValueError, "expected 1 min_lrs, got 2"),
    (lambda m, o: m.lr_scheduler.SequentialLR(o, [], []), ValueError,
     "SequentialLR expects at least one scheduler, but got no scheduler."),
    (lambda m, o: m.lr_scheduler.SequentialLR(o, [m.lr_scheduler.StepLR(o, 2)], [3]), ValueError,
     "Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone "
     "points, but got number of schedulers 1 and the number of milestones to be equal to 1"),
    (lambda m, o: m.lr_scheduler.SequentialLR(o, [m.lr_scheduler.StepLR(o, 2), m.lr_scheduler.ReduceLROnPlateau(o)],
                                              [3]), ValueError,
     "SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be specified "
     "when calling `step`, but got one at index 1 in the given schedulers sequence."),
])
def test_errors_match_torch(make, exc, msg):
    for lib, m in LIBS:
        with pytest.raises(exc, match=re.escape(msg)):
            make(m, _opt(lib, m, lr=0.1, momentum=0.9))


def test_one_cycle_past_total_steps_raises():
    for lib, m in LIBS:
        opt = _opt(lib, m, lr=0.1, momentum=0.9)
        sched = m.lr_scheduler.OneCycleLR(opt, 0.5, total_steps=3)
        for _ in range(3):
            opt.step(), sched.step()
        with pytest.raises(ValueError, match=re.escape("Tried to step 4 times. The specified number of total steps "
                                                       "is 3")):
            sched.step()


def test_cosine_matches_closed_form_within_rounding():
    opt = _opt(ft, optim, lr=0.1)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12, eta_min=0.01)
    for e in range(1, 13):
        opt.step(), sched.step()
        assert math.isclose(sched.get_last_lr()[0], 0.01 + 0.09 * (1 + math.cos(math.pi * e / 12)) / 2,
                            rel_tol=1e-12, abs_tol=1e-15)
