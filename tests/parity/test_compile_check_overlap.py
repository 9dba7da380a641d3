"""A compiled step with a data-dependent check (cross-entropy's target range) writes its results back while the
program runs and reads the check's flag last (``Steady.snapshot``/``undo``): a check that fails in the steady state
puts back what the write-back changed, so the state after the error is eager's. Against torch eager: the values,
the version counters, which .grad tensors exist (and that a kept one is the same object), the optimizer state,
and the steps after the failed one."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import call_with_bad_target, close, seeded_mlp


def _run(L, comp, set_to_none, bad_at, n=7):
    rng = np.random.default_rng(1)
    lin1, lin2, params = seeded_mlp(L, rng)
    opt = L.optim.Adam(params, lr=0.05)
    x = L.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    lab = L.tensor([0, 1, 2, 0, 1, 2])

    def step():
        if set_to_none:
            opt.zero_grad()
        loss = L.nn.functional.cross_entropy(lin2(L.relu(lin1(x))), lab)
        loss.backward()
        opt.step()
        if not set_to_none:
            opt.zero_grad(set_to_none=False)
        return loss.detach()
    step = comp(step)
    out = []
    for k in range(n):
        # (the target written in place: the closure's tensor, re-read by the steady state)
        out += call_with_bad_target(step, params, lab, 5, 7, 2, k == bad_at)
        out.append([p._version for p in params])
        out.append([None if p.grad is None else (p.grad.numpy().tolist(), p.grad._version) for p in params])
    st = opt.state[lin1.weight]
    out.append([st["exp_avg"].numpy().tolist(), st["exp_avg_sq"].numpy().tolist(), float(st["step"])])
    out.append([p.detach().numpy().tolist() for p in params])
    return out


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("bad_at", [4, 5])
def test_failed_check_in_the_steady_state_leaves_eagers_state(set_to_none, bad_at):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _run(torch, lambda f: f, set_to_none, bad_at)
        e = _run(ft, lambda f: f, set_to_none, bad_at)
        f = _run(ft, ft.compile, set_to_none, bad_at)
    assert close(f, t, rel=1e-5, abs=1e-6)  # (the grads' last bits: a CPU matmul's)
    assert close(f, e, rel=1e-6)


def test_the_steady_state_writes_before_reading_the_flag():
    """The step runs in the steady state with its write-back before the flag read (else this test's premise, the
    overlap, is gone)."""
    lin = ft.nn.Linear(4, 3)
    opt = ft.optim.SGD(lin.parameters(), lr=0.1)
    x, lab = ft.ones(2, 4), ft.tensor([0, 2])

    def step():
        opt.zero_grad()
        loss = ft.nn.functional.cross_entropy(lin(x), lab)
        loss.backward()
        opt.step()
        return loss.detach()
    f = ft.compile(step)
    for _ in range(4):
        f()
    assert f._steady is not None and f._steady.undoable
