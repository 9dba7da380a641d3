"""Parity of CosineAnnealingWarmRestarts, CyclicLR, PolynomialLR and ChainedScheduler (and a regression run of
the other schedulers) with torch.optim.lr_scheduler: the lr (and cycled momentum / beta1) of every param group
after each of 35+ steps, ``get_last_lr()``, ``state_dict()`` / ``load_state_dict()``, the constructor errors,
and a compiled training step that steps a scheduler (== eager, no retrace when the lr changes)."""
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

STEPS = 36


def _opt(lib, kind="SGD"):
    p, q = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
    groups = [{"params": [p]}, {"params": [q], "lr": 0.05}]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    if kind == "SGD-nomomentum":
        return lib.optim.SGD(groups, lr=0.1)
    return getattr(lib.optim, kind)(groups, lr=0.1)


def _snapshot(sched, opt):
    return (list(sched.get_last_lr()),
            [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])


def _run(lib, make, kind="SGD", epochs=None, steps=STEPS):
    opt = _opt(lib, kind)
    sched = make(lib.optim.lr_scheduler, opt)
    out = [_snapshot(sched, opt)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the epoch-argument deprecation, in both libraries)
        for i in range(steps):
            opt.step()
            sched.step() if epochs is None else sched.step(epochs[i])
            out.append(_snapshot(sched, opt))
    return out, sched, opt


def _sd(sched):
    return {k: v for k, v in sched.state_dict().items()}


SCHEDULES = {
    "warm-restarts": (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001), "SGD"),
    "warm-restarts-Tmult1": (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5), "Adam"),
    "cyclic-triangular": (lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4), "SGD"),
    "cyclic-triangular2": (lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.2], step_size_up=3,
                                                     step_size_down=5, mode="triangular2"), "SGD"),
    "cyclic-exp_range-adam": (lambda m, o: m.CyclicLR(o, 1e-3, 1e-2, step_size_up=4, mode="exp_range", gamma=0.95,
                                                        base_momentum=0.7, max_momentum=0.95), "Adam"),
    "cyclic-nadam-no-momentum-cycle": (lambda m, o: m.CyclicLR(o, 1e-3, 1e-2, step_size_up=2, cycle_momentum=False),
                                       "NAdam"),
    "cyclic-scale_fn-iterations": (lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5,
                                                             scale_fn=lambda x: 1 / (1 + 0.1 * x),
                                                             scale_mode="iterations"), "RAdam"),
    "cyclic-sgd-without-momentum": (lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3), "SGD-nomomentum"),
    "polynomial": (lambda m, o: m.PolynomialLR(o, total_iters=10, power=2.0), "SGD"),
    "polynomial-linear": (lambda m, o: m.PolynomialLR(o), "Adamax"),
    "chained": (lambda m, o: m.ChainedScheduler([m.ConstantLR(o, factor=0.5, total_iters=4),
                                                 m.ExponentialLR(o, gamma=0.9)]), "SGD"),
    "chained-optimizer-arg": (lambda m, o: m.ChainedScheduler([m.StepLR(o, 3, 0.5), m.PolynomialLR(o, 20)],
                                                              optimizer=o), "ASGD"),
    # the schedulers that existed: one regression run each
    "sequential": (lambda m, o: m.SequentialLR(o, [m.LinearLR(o, 0.1, total_iters=4),
                                                   m.CosineAnnealingWarmRestarts(o, 4)], milestones=[5]), "SGD"),
    "lambda": (lambda m, o: m.LambdaLR(o, lambda e: 0.95 ** e), "SGD"),
    "multiplicative": (lambda m, o: m.MultiplicativeLR(o, lambda e: 0.97), "SGD"),
    "onecycle": (lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=STEPS), "Adamax"),
    "constant": (lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=7), "SGD"),
    "linear": (lambda m, o: m.LinearLR(o, start_factor=0.2, total_iters=9), "SGD"),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lr_sequence_and_state_dict_match_torch(name):
    make, kind = SCHEDULES[name]
    (t_seq, t_s, _), (f_seq, f_s, _) = (_run(lib, make, kind) for lib in (torch, ft))
    assert f_seq == t_seq  # exactly: the same float operations in the same order
    t_sd, f_sd = _sd(t_s), _sd(f_s)
    assert sorted(f_sd) == sorted(t_sd)
    for k, v in t_sd.items():
        if k not in ("_schedulers", "lr_lambdas", "_scale_fn_custom") and not callable(v):
            assert f_sd[k] == v, k


@pytest.mark.parametrize("make,epochs", [
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01), [i * 0.37 for i in range(STEPS)]),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4), [e + i / 5 for e in range(7) for i in range(5)] + [1.5]),
    (lambda m, o: m.PolynomialLR(o, total_iters=12, power=0.5), list(range(STEPS))),
], ids=["warm-restarts-Tmult2", "warm-restarts-per-batch", "polynomial-closed-form"])
def test_step_with_epoch_matches_torch(make, epochs):
    """``step(epoch)``: fractional epochs for the warm restarts (epoch + batch / iters), the closed form for
    PolynomialLR."""
    t_seq, f_seq = (_run(lib, make, epochs=epochs)[0] for lib in (torch, ft))
    assert f_seq == t_seq


def test_state_dict_round_trip_resumes_the_schedule():
    for make in (SCHEDULES["cyclic-triangular2"][0], SCHEDULES["warm-restarts"][0], SCHEDULES["chained"][0]):
        seqs = []
        for lib in (torch, ft):
            ref, _, _ = _run(lib, make, steps=20)
            _, s1, o1 = _run(lib, make, steps=8)
            o2 = _opt(lib)  # a resumed run: optimizer and scheduler built, then both state dicts loaded
            s2 = make(lib.optim.lr_scheduler, o2)
            o2.load_state_dict(o1.state_dict())
            s2.load_state_dict(s1.state_dict())
            seq = []
            for _ in range(12):
                o2.step()
                s2.step()
                seq.append(_snapshot(s2, o2))
            assert seq == ref[9:]
            seqs.append(seq)
        assert seqs[0] == seqs[1]
    # a callable scale_fn object's __dict__ travels (a function is saved as None), as torch's
    for lib in (torch, ft):
        class Scale:
            def __init__(self):
                self.k = 0.5

            def __call__(self, x):
                return self.k ** x
        o = _opt(lib)
        s = lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, scale_fn=Scale())
        sd = s.state_dict()
        assert sd["_scale_fn_custom"] == {"k": 0.5} and "_scale_fn_ref" not in sd
        s.load_state_dict(dict(sd, _scale_fn_custom={"k": 0.25}))
        assert s._scale_fn_custom.k == 0.25


@pytest.mark.parametrize("make", [
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.5),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda m, o: m.CyclicLR(o, 0.01, 0.1, mode="triangle"),
    lambda m, o: m.CyclicLR(o, [0.01], 0.1),
    lambda m, o: m.CyclicLR(m.CyclicLR, 0.01, 0.1),
    lambda m, o: m.ChainedScheduler([]),
    lambda m, o: m.ChainedScheduler([m.ReduceLROnPlateau(o)]),
    lambda m, o: m.ChainedScheduler([m.StepLR(o, 2), object()]),
    lambda m, o: m.PolynomialLR(o, last_epoch=3),
], ids=["T_0=0", "T_0-float", "T_mult=0", "eta_min-str", "negative-epoch", "bad-mode", "base_lr-list-length",
        "not-an-optimizer", "chained-empty", "chained-plateau", "chained-no-optimizer", "resume-without-initial_lr"])
def test_errors_match_torch(make):
    errs = []
    for lib in (torch, ft):
        try:
            make(lib.optim.lr_scheduler, _opt(lib))
            errs.append(None)
        except Exception as e:  # noqa: BLE001 - compared below
            errs.append(e)
    t_err, f_err = errs
    assert t_err is not None and type(f_err) is type(t_err), (t_err, f_err)
    assert str(f_err) == str(t_err)


def test_cyclic_momentum_needs_an_optimizer_with_momentum():
    seen = []
    for lib in (torch, ft):
        o = lib.optim.Adagrad([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        with pytest.raises(ValueError, match=re.escape("optimizer must support momentum or beta1 with "
                                                       "`cycle_momentum` option enabled")):
            lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1)
        lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, cycle_momentum=False)
        s = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 2)
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            s.get_lr()
        seen.append((s.T_cur, s.T_i, s.last_epoch, s.get_last_lr(), s.base_lrs))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("kind", ["cyclic-adam", "warm-restarts-sgd"])
def test_scheduler_stepped_inside_a_compiled_step_equals_eager(kind):
    """The new lr (and CyclicLR's beta1 / momentum) is an input of the program: one trace (the first call runs the
    later calls' program), the same losses and parameters as eager and torch."""
    rng = np.random.default_rng(1)
    w0, xs, ys = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((12, 5, 4)).astype(np.float32), \
        rng.standard_normal((12, 5, 3)).astype(np.float32)
    runs = []
    for lib, compiled in ((ft, False), (ft, True), (torch, False)):
        w = lib.tensor(w0.copy(), requires_grad=True)
        if kind == "cyclic-adam":
            opt = lib.optim.Adam([w], lr=0.01)
            sched = lib.optim.lr_scheduler.CyclicLR(opt, 0.001, 0.05, step_size_up=3, mode="triangular2")
        else:
            opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
            sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)

        def step(x, y):
            opt.zero_grad()
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
            return loss
        f = ft.compile(step) if compiled else step
        losses = [f(lib.tensor(x), lib.tensor(y)).item() for x, y in zip(xs, ys)]
        runs.append((losses, _np(w), sched.get_last_lr(), opt.param_groups[0].get("betas"), f))
    (le, we, lre, be, _), (lc, wc, lrc, bc, fc), (lt, wt, lrt, bt, _) = runs
    np.testing.assert_allclose(lc, le, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(lc, lt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wc, wt, rtol=1e-5, atol=1e-6)
    assert lrc == lre == lrt and bc == be == bt
    assert fc.stats["traces"] == 1 and fc.stats["eager_calls"] == 0


def _np(t):
    return t.detach().numpy()
