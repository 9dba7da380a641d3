"""A compiled step's steady calls run as one generated function (``steady.Steady.fuse``: the global switches, the
reused walk's checks, the slot checks, the program, the write-back and the result, inline). It must be the path a
plain training loop takes, with or without a batch argument, and every change between calls that the general path
notices — a parameter written in place, a closure variable rebound, grad mode off, a new learning rate, a .grad
dropped, a batch of another shape — must make it step aside, so each call still gives eager torch's values."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite._compile import runner


def _setup(L):
    lin = L.nn.Linear(3, 2)
    with L.no_grad():
        lin.weight.copy_(L.tensor([[0.5, -1., 0.25], [2., 0.25, -0.5]]))
        lin.bias.fill_(0.1)
    opt = L.optim.SGD(lin.parameters(), lr=0.01, momentum=0.5)
    return lin, opt


def _batches(L):
    x = L.arange(12.).view(4, 3).sin()
    y = L.arange(8.).view(4, 2).cos()
    return x, y


def _closure_run(L, C):
    """A step over its closure (no arguments), with changes between the calls."""
    lin, opt = _setup(L)
    x, y = _batches(L)
    env = {"x": x}

    def step():
        opt.zero_grad()
        loss = ((lin(env["x"]) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    s = C(step)
    out = []
    for i in range(18):
        if i == 5:
            with L.no_grad():
                lin.weight.mul_(0.5)  # a parameter written in place
        if i == 7:
            env["x"] = x * 2  # the batch rebound
        if i == 9:
            opt.param_groups[0]["lr"] = 0.02  # a new learning rate
        if i == 11:
            lin.weight.grad = None
        if i == 12:
            with L.no_grad():  # grad mode off around the call: its backward raises in both
                try:
                    s()
                    out.append("no error")
                except RuntimeError as e:
                    out.append(type(e).__name__)
            continue
        out.append(s().item())
    out += [lin.weight.detach().numpy().copy(), lin.bias.detach().numpy().copy()]
    return out, s


def _argument_run(L, C):
    """A step over a batch argument, with batches of new values, another shape and a repeated tensor."""
    lin, opt = _setup(L)
    x, y = _batches(L)

    def step(xb, yb):
        opt.zero_grad()
        loss = ((lin(xb) - yb) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    s = C(step)
    out = []
    batches = [(x + i, y * i) for i in range(6)] + [(x[1:], y[1:]), (x + 1, y), (x, y), (x, y), (x + 2, y), (x + 3, y)]
    for xb, yb in batches:
        out.append(s(xb, yb).item())
    out += [lin.weight.detach().numpy().copy(), lin.bias.detach().numpy().copy()]
    return out, s


def _compare(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        if isinstance(u, str):
            assert u == v
        else:
            np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("run", [_closure_run, _argument_run], ids=["closure", "argument"])
def test_steady_calls_through_the_fused_path_equal_eager_torch(run):
    ours, cf = run(ft, ft.compile)
    want, _ = run(torch, lambda f: f)
    _compare(ours, want)
    assert cf._steady is not None and callable(cf._steady.call)  # the loop ends in the fused steady state


def test_the_fused_call_counts_as_a_steady_call_and_a_miss_falls_back():
    lin, opt = _setup(ft)
    x, y = _batches(ft)

    def step():
        opt.zero_grad()
        loss = ((lin(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    s = ft.compile(step)
    for _ in range(3):
        s()
    assert callable(s._steady.call)
    before, calls = dict(runner.COUNTERS), s.stats["calls"]
    s()
    assert runner.COUNTERS["steady_calls"] == before["steady_calls"] + 1
    assert runner.COUNTERS["calls"] == before["calls"] + 1 and s.stats["calls"] == calls + 1
    # a call its checks refuse (a closure tensor given another shape): the general path, a new program
    x.data = ft.ones(5, 3)
    y.data = ft.zeros(5, 2)
    traces = s.stats["traces"]
    loss = s()
    assert s.stats["traces"] == traces + 1
    lt, ot = _setup(torch)
    # eager torch over the same sequence: three steps on the first batch, one more, then one on the new batch
    xt, yt = _batches(torch)
    for i in range(5):
        if i == 4:
            xt, yt = torch.ones(5, 3), torch.zeros(5, 2)
        ot.zero_grad()
        lt_loss = ((lt(xt) - yt) ** 2).mean()
        lt_loss.backward()
        ot.step()
    np.testing.assert_allclose(loss.item(), lt_loss.item(), rtol=1e-5)
    np.testing.assert_allclose(lin.weight.detach().numpy(), lt.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
