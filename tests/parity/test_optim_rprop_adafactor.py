"""Parity of ``optim.Rprop`` and ``optim.Adafactor`` with torch.optim: parameters after 20 steps of a small model
(float64 within 1e-6; a 3-d, a matrix and vector parameters: Adafactor's factored and full moments), the state and
``state_dict()``, loading either library's state dict, a compiled step (== eager), the constructor errors."""
from __future__ import annotations

import copy
import re

import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(0)
INIT = [RNG.standard_normal((4, 6)) * 0.5, RNG.standard_normal(6) * 0.1, RNG.standard_normal((2, 6, 3)) * 0.5,
        RNG.standard_normal(3) * 0.1]
BATCHES = [(RNG.standard_normal((5, 4)), RNG.standard_normal((5, 3))) for _ in range(20)]
CASES = {
    "Rprop-options": ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    "Adafactor": ("Adafactor", {}),
    "Adafactor-options": ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=1.1, weight_decay=0.1,
                                            maximize=True)),
}


def _params(lib):
    return [lib.tensor(a, requires_grad=True) for a in INIT]


def _loss(lib, ps, x, y):
    w1, b1, w2, b2 = ps
    return (((x @ w1 + b1).tanh() @ w2.sum(0) + b2 - y) ** 2).mean() + (w2 ** 2).mean()


def _step(lib, opt, ps, i):
    opt.zero_grad()
    x, y = (lib.tensor(a) for a in BATCHES[i])
    loss = _loss(lib, ps, x, y)
    loss.backward()
    opt.step()
    return loss.item()


def _np(t):
    return t.detach().numpy()


def _same_state_dict(fsd, tsd, tol):
    assert fsd["param_groups"] == tsd["param_groups"]
    assert list(fsd["state"]) == list(tsd["state"])
    for k, ts in tsd["state"].items():
        fs = fsd["state"][k]
        assert list(fs) == list(ts)
        for n, v in ts.items():
            assert str(fs[n].dtype) == str(v.dtype) and tuple(fs[n].shape) == tuple(v.shape), n
            np.testing.assert_allclose(_np(fs[n]), _np(v), rtol=tol, atol=tol, err_msg=n)


@pytest.mark.parametrize("case", list(CASES))
def test_twenty_steps_state_and_state_dict_match_torch(case):
    name, kw = CASES[case]
    tp, fp = _params(torch), _params(ft)
    topt, fopt = getattr(torch.optim, name)(tp, **kw), getattr(ft.optim, name)(fp, **kw)
    assert fopt.defaults == topt.defaults
    for i in range(20):
        np.testing.assert_allclose(_step(ft, fopt, fp, i), _step(torch, topt, tp, i), rtol=1e-6, atol=1e-6)
    for a, b in zip(fp, tp):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-6)
        assert list(fopt.state[a]) == list(topt.state[b])
    _same_state_dict(fopt.state_dict(), topt.state_dict(), 1e-6)


@pytest.mark.parametrize("name", ["Rprop", "Adafactor"])
def test_state_dict_round_trip(name):
    """Ours -> a fresh optimizer (other lr, overwritten by the load) continues identically; torch's state dict
    loaded into ours continues like torch."""
    tp, fp = _params(torch), _params(ft)
    topt, fopt = getattr(torch.optim, name)(tp), getattr(ft.optim, name)(fp)
    for i in range(3):
        _step(torch, topt, tp, i), _step(ft, fopt, fp, i)
    fp2 = [ft.tensor(_np(p).copy(), requires_grad=True) for p in fp]
    fp3 = [ft.tensor(_np(p).copy(), requires_grad=True) for p in tp]
    fopt2, fopt3 = getattr(ft.optim, name)(fp2, lr=0.5), getattr(ft.optim, name)(fp3, lr=0.5)
    fopt2.load_state_dict(copy.deepcopy(fopt.state_dict()))  # (a live one would share its tensors, as torch's)
    tsd = topt.state_dict()
    fopt3.load_state_dict({"state": {k: {n: ft.tensor(_np(v)) for n, v in s.items()} for k, s in tsd["state"].items()},
                           "param_groups": tsd["param_groups"]})
    for i in range(3, 6):
        for lib, o, ps in ((ft, fopt, fp), (ft, fopt2, fp2), (ft, fopt3, fp3), (torch, topt, tp)):
            _step(lib, o, ps, i)
    for a, b, c, d in zip(fp, fp2, fp3, tp):
        np.testing.assert_array_equal(_np(a), _np(b))
        np.testing.assert_allclose(_np(c), _np(d), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name,kw", [("Rprop", dict(lr=0.02)), ("Adafactor", dict(lr=0.05, weight_decay=0.01))])
def test_compiled_step_equals_eager(name, kw):
    runs = {}
    for tag, compiled in (("eager", False), ("compiled", True)):
        ps = _params(ft)
        opt = getattr(ft.optim, name)(ps, **kw)

        def step(x, y):
            opt.zero_grad()
            loss = _loss(ft, ps, x, y)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        losses = []
        for i in range(6):
            if i == 4:
                opt.param_groups[0]["lr"] *= 0.5  # an input of the compiled step, no retrace
            losses.append(f(*(ft.tensor(a) for a in BATCHES[i])).item())
        runs[tag] = (losses, [_np(p).copy() for p in ps], f)
    np.testing.assert_allclose(runs["compiled"][0], runs["eager"][0], rtol=1e-10, atol=1e-12)
    for a, b in zip(runs["compiled"][1], runs["eager"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    stats = runs["compiled"][2].stats
    assert stats["traces"] == 1 and stats["eager_calls"] == 0  # (the first call runs with its state made first)


@pytest.mark.parametrize("make,msg", [
    (lambda m, p: m.Rprop(p, lr=-1), "Invalid learning rate: -1"),
    (lambda m, p: m.Rprop(p, etas=(1.2, 0.5)), "Invalid eta values: 1.2, 0.5"),
    (lambda m, p: m.Adafactor(p, lr=-0.1), "Learning rate should be >= 0 but is: -0.1"),
    (lambda m, p: m.Adafactor(p, beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    (lambda m, p: m.Adafactor(p, eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
    (lambda m, p: m.Adafactor(p, eps=(None, -1.0)), "epsilon2 should be >= 0 but is: -1.0"),
    (lambda m, p: m.Adafactor(p, d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (lambda m, p: m.Adafactor(p, weight_decay=-1.0), "weight_decay should be >= 0 but is: -1.0"),
])
def test_constructor_errors_match_torch(make, msg):
    for lib in (torch, ft):
        with pytest.raises(ValueError, match=re.escape(msg)):
            make(lib.optim, _params(lib))
    for lib in (torch, ft):  # a complex parameter: torch's error at the step
        w = lib.tensor([1 + 2j], requires_grad=True)
        opt = lib.optim.Adafactor([w])
        (w.abs() ** 2).sum().backward()
        with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
            opt.step()
