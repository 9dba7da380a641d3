"""``Module.register_backward_hook`` (PyTorch's deprecated non-full hook) against real torch: the hook runs on the
autograd node that made the module's output, with that node's input and output gradients (values and Nones), its
result replaces ``grad_input``; PyTorch's FutureWarnings; mixing it with full hooks is refused."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import same

X = np.linspace(-1.0, 1.0, 12).reshape(2, 1, 2, 3)


def _fill(L, m):
    with L.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(L.tensor(np.linspace(-0.5, 0.5 + i, p.numel()).reshape(tuple(p.shape)), dtype=p.dtype))
    return m


MODULES = {  # (ones whose output node has PyTorch's inputs: the facade's Linear is one AddmmBackward0 node over
             # (input, weight, bias), where PyTorch's is over (bias, input, weight.t()))
    "relu": lambda L: L.nn.ReLU(),
    "conv": lambda L: _fill(L, L.nn.Conv2d(1, 2, 2)),
    "sequential ending in tanh": lambda L: _fill(L, L.nn.Sequential(L.nn.Conv2d(1, 2, 2), L.nn.Tanh())),
}


def _arrays(g):
    return [None if t is None else t.detach().numpy().astype(np.float64) for t in g]


def _same_arrays(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.shape == y.shape
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_hook_sees_the_output_nodes_gradients(name):
    runs = []
    for L in (ft, torch):
        m = MODULES[name](L)
        seen = []
        h = m.register_backward_hook(lambda mod, gi, go: seen.append((mod is m, _arrays(gi), _arrays(go))))
        x = L.tensor(X, dtype=L.float32, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = m(x)
        (y * L.arange(float(y.numel())).reshape(tuple(y.shape))).sum().backward()
        h.remove()
        m(x).sum().backward()  # removed: not called again
        runs.append((seen, [(c.category.__name__, str(c.message)) for c in w], _arrays([x.grad])))
    (f_seen, f_warn, f_grad), (t_seen, t_warn, t_grad) = runs
    assert f_warn == t_warn and len(f_seen) == len(t_seen) == 1
    assert f_seen[0][0] and t_seen[0][0]
    _same_arrays(f_seen[0][1], t_seen[0][1])  # grad_input
    _same_arrays(f_seen[0][2], t_seen[0][2])  # grad_output
    _same_arrays(f_grad, t_grad)


def test_linear_hook_sees_torchs_addmm_node():
    """(bias, input, weight.t()): the node torch's F.linear records (test_composite_graph.py: every rank)"""
    def shapes(L):
        m = L.nn.Linear(3, 2)
        seen = []
        m.register_backward_hook(lambda mod, gi, go: seen.append([None if g is None else tuple(g.shape) for g in gi]))
        m(L.ones(4, 3, requires_grad=True)).sum().backward()
        return seen
    assert shapes(ft) == shapes(torch) == [[(2,), (4, 3), (3, 2)]]


def test_a_returned_grad_input_replaces_it():
    def f(L):
        m = L.nn.ReLU()
        m.register_backward_hook(lambda mod, gi, go: tuple(g * 10 for g in gi))
        x = L.tensor([-1.0, 2.0, 3.0], requires_grad=True)
        m(x).sum().backward()
        return x.grad
    same(f)


def test_non_tensor_output_warns():
    def f(L):
        class Pair(L.nn.Module):
            def forward(self, x):
                return {"a": x * 2, "b": x + 1}
        m = Pair()
        seen = []
        m.register_backward_hook(lambda mod, gi, go: seen.append([tuple(g.shape) for g in go]))
        x = L.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = m(x)
        out["a"].sum().backward()
        return seen, [str(c.message)[:60] for c in w]
    same(f)


@pytest.mark.parametrize("first", ["full", "regular"])
def test_mixing_full_and_regular_hooks_is_refused(first):
    def f(L):
        m = L.nn.ReLU()
        hook = lambda mod, gi, go: None  # noqa: E731
        if first == "full":
            m.register_full_backward_hook(hook)
            m.register_backward_hook(hook)
        else:
            m.register_backward_hook(hook)
            m.register_full_backward_hook(hook)
    same(f)


def test_grad_fn_hooks_run_with_tensors_in_torchs_order():
    def f(L):
        x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
        w = L.tensor([0.5, 0.25, 2.0])  # no grad: its slot is None
        y = x * w
        log = []
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go)))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi, go)))
        z = (x * 3).exp()
        z.grad_fn.register_prehook(lambda go: (go[0] * 0 + 1,))  # a returned tuple replaces grad_output
        z.grad_fn.register_hook(lambda gi, go: (gi[0] * 2,))  # and one replaces grad_input
        (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        z.sum().backward()
        return log, x.grad
    same(f)
