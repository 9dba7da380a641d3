"""``optim.Muon`` (torch 2.9+) against torch.optim.Muon: parameters and momentum buffers over 6 steps for its
options, the state dict, torch's argument errors, and a compiled training step equal to eager."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(0)
SHAPES = [(8, 5), (4, 6), (3, 3)]
P0 = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
GRADS = [[RNG.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(6)]


def _run(lib, **kw):
    ws = [lib.tensor(p, requires_grad=True) for p in P0]
    opt = lib.optim.Muon(ws, **kw)
    for gs in GRADS:
        for w, g in zip(ws, gs):
            w.grad = lib.tensor(g)
        opt.step()
    return ws, opt


@pytest.mark.parametrize("kw", [dict(lr=0.02), dict(lr=0.02, nesterov=False, weight_decay=0.0),
                                dict(lr=0.02, adjust_lr_fn="match_rms_adamw", momentum=0.9),
                                dict(lr=0.05, ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5), eps=1e-5)],
                         ids=["default", "no-nesterov", "match-rms-adamw", "coefficients"])
def test_muon_steps_match_torch(kw):
    """(The orthogonalisation runs in bfloat16, as torch's: XLA's and oneDNN's float32 accumulations round an
    element of it to the neighbouring bfloat16 now and then, an update of ~1e-4 here.)"""
    (tw, topt), (fw, fopt) = _run(torch, **kw), _run(ft, **kw)
    for a, b in zip(fw, tw):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=2e-4)
        np.testing.assert_allclose(fopt.state[a]["momentum_buffer"].numpy(), topt.state[b]["momentum_buffer"].numpy(),
                                   rtol=1e-6, atol=1e-7)
    ts, fs = topt.state_dict(), fopt.state_dict()
    assert [sorted(v) for v in fs["state"].values()] == [sorted(v) for v in ts["state"].values()]
    assert fs["param_groups"] == ts["param_groups"]


@pytest.mark.parametrize("call", [
    lambda lib: lib.optim.Muon([lib.ones(3, requires_grad=True)]),
    lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], adjust_lr_fn="other"),
    lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], lr=-1.0),
    lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], momentum=-0.5),
], ids=["1-d", "adjust-lr-fn", "negative-lr", "negative-momentum"])
def test_muon_argument_errors_match_torch(call):
    out = []
    for lib in (torch, ft):
        with pytest.raises(ValueError) as e:
            call(lib)
        out.append(str(e.value))
    assert out[1] == out[0]


def test_compiled_muon_step_equals_eager():
    runs = []
    for compiled in (False, True):
        ft.manual_seed(0)
        lin = ft.nn.Linear(5, 4, bias=False)
        with ft.no_grad():
            lin.weight.copy_(ft.tensor(P0[0][:4].copy()))
        opt = ft.optim.Muon(lin.parameters(), lr=0.02)
        x = ft.tensor(RNG.standard_normal((6, 5)).astype(np.float32)) if not runs else runs[0][2]

        def step():
            opt.zero_grad()
            loss = (lin(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            losses = [f().item() for _ in range(5)]
        runs.append((losses, lin.weight.detach().numpy(), x))
        if compiled:
            assert f.stats["eager_calls"] == 0
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-6)
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=1e-6, atol=1e-7)
