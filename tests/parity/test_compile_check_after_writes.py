"""A compiled step whose data-dependent check (cross-entropy's target range) fails after the step has written
state: after a first backward (gradient accumulation over two micro-batches, the second one's target out of
range) or after ``optimizer.step()`` (a loss computed after the update). Eagerly the writes before the error are
made: the .grad fields hold the first micro-batch's gradients, as new tensors where ``zero_grad()`` had emptied
them, the parameters are updated and their version counters count it. The compiled call leaves the same state
(``runner._with_checks``/``_check_failed``). Against torch eager: values, version counters, which .grad objects
are new; the optimizer state's views' version counters against the facade's eager ones (torch counts one per
in-place op of its update: two for Adam's ``exp_avg_sq``)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import call_with_bad_target, close, seeded_mlp


def _run(L, comp, where, zero, opt_name, bad_at, n=6):
    rng = np.random.default_rng(3)
    lin1, lin2, params = seeded_mlp(L, rng)
    if opt_name == "adam":
        opt = L.optim.Adam(params, lr=0.05)
    else:
        opt = L.optim.SGD(params, lr=0.1, momentum=0.9)
    x1 = L.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    x2 = L.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    lab1 = L.tensor([0, 1, 2, 0, 1, 2])
    lab2 = L.tensor([2, 1, 0, 0, 1, 2])  # (the target made out of range: read after the first micro-batch's write)
    F = L.nn.functional

    def fwd(x):
        return lin2(L.relu(lin1(x)))

    def step():
        if zero == "start":
            opt.zero_grad()
        if where == "accumulate":
            loss = F.cross_entropy(fwd(x1), lab1)
            loss.backward()
            loss2 = F.cross_entropy(fwd(x2), lab2)
            loss2.backward()
            loss = loss + loss2
            opt.step()
        else:  # the check after the update
            loss = F.mse_loss(fwd(x1), L.zeros(6, 3))
            loss.backward()
            opt.step()
            loss = loss + F.cross_entropy(fwd(x2), lab2).detach()
        if zero == "end":
            opt.zero_grad(set_to_none=False)
        return loss.detach()
    step = comp(step)
    out, views = [], []
    held = None
    for k in range(n):
        if k == 2:
            held = [None if p.grad is None else p.grad for p in params]
        out += call_with_bad_target(step, params, lab2, 5, 7, 2, k == bad_at)
        out.append([p._version for p in params])
        out.append([p.detach().numpy().tolist() for p in params])
        out.append([None if p.grad is None else (p.grad.numpy().tolist(), p.grad._version) for p in params])
        views.append([{name: t._version for name, t in opt.state[p].items()} if p in opt.state else None
                      for p in params])
    out.append([None if g is None else g.numpy().tolist() for g in held])  # (the caller's old .grad objects)
    for p in params:
        out.append([[name, np.asarray(t.numpy()).tolist()] for name, t in sorted(opt.state[p].items())])
    return out, views


@pytest.mark.parametrize("opt_name", ["adam", "sgd_momentum"])
@pytest.mark.parametrize("zero", ["start", "end"])
@pytest.mark.parametrize("where", ["accumulate", "after_step"])
@pytest.mark.parametrize("bad_at", [0, 4])
def test_failed_check_after_writes_leaves_eagers_state(where, zero, opt_name, bad_at):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, _ = _run(torch, lambda f: f, where, zero, opt_name, bad_at)
        e, ev = _run(ft, lambda f: f, where, zero, opt_name, bad_at)
        f, fv = _run(ft, ft.compile, where, zero, opt_name, bad_at)
    assert close(f, t, rel=1e-5, abs=1e-6)  # (the grads' last bits: a CPU matmul's)
    assert close(f, e, rel=1e-6)
    assert fv == ev


def test_the_accumulated_failure_keeps_the_first_micro_batchs_grads():
    """Known numbers: the .grad after the failed call is the first micro-batch's gradient alone, in a new tensor
    (version 0), and the caller's old .grad keeps the previous step's values."""
    lin = ft.nn.Linear(2, 2, bias=False)
    with ft.no_grad():
        lin.weight.copy_(ft.tensor([[1.0, 0.0], [0.0, 1.0]]))
    opt = ft.optim.SGD(lin.parameters(), lr=0.0)
    x = ft.tensor([[1.0, 2.0]])
    lab1, lab2 = ft.tensor([0]), ft.tensor([1])

    @ft.compile
    def step():
        opt.zero_grad()
        ft.nn.functional.cross_entropy(lin(x), lab1).backward()
        ft.nn.functional.cross_entropy(lin(x), lab2).backward()
        opt.step()

    for _ in range(3):
        step()
    old = lin.weight.grad
    old_vals = old.numpy().copy()
    lab2[0] = 5
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        step()
    g = lin.weight.grad
    assert g is not old and g._version == 0
    # softmax([1, 2]) = [a, b]; d/dlogits of CE with target 0 = [a - 1, b]; times x = [1, 2]
    a, b = np.exp(1) / (np.exp(1) + np.exp(2)), np.exp(2) / (np.exp(1) + np.exp(2))
    np.testing.assert_allclose(g.numpy(), [[a - 1, 2 * (a - 1)], [b, 2 * b]], rtol=1e-6)
    np.testing.assert_allclose(old.numpy(), old_vals)
    np.testing.assert_allclose(old_vals, [[2 * a - 1, 2 * (2 * a - 1)], [2 * b - 1, 2 * (2 * b - 1)]], rtol=1e-6)
