"""Results of a compiled function that alias something, as torch.compile returns them (each case run with real
torch: eager, and torch.compile where it differs from eager in nothing asserted here, against
``functorch_lite.compile``). Before, each came back as a new tensor holding a copy, silently:

- a view of an input that requires grad (``return h[1:]``, ``h.t()``): a view of ``h`` (``_base``), a write to it
  reaching ``h``, its grad_fn the view's (SliceBackward0 on h's history);
- results that alias each other (``return y, y[1:], y``): one object where the function returned one, views of a
  returned result viewing it (both with and without grad);
- ``return p.data`` / ``opt.state[p]['momentum_buffer']`` from a training step: p's values (a write to it reaches
  p; the next step shows through) and the optimizer's own state tensor.
"""
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _eager(f):
    return f


LIBS = [(torch, _eager), (ft, ft.compile)]


def _np(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def _input_view_case(L, wrap, view):
    h0 = L.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    f = wrap({"slice": lambda h: h[1:], "t": lambda h: h.t(), "view": lambda h: h.view(3, 2),
              "chain": lambda h: h[:, 1:].transpose(0, 1)[0]}[view])
    out = []
    for _ in range(2):  # (the second call: the cached program)
        h = h0 * 1
        v = f(h)
        rec = [v._base is h, v.requires_grad, type(v.grad_fn).__name__ if L is torch else v.grad_fn.name()]
        (v * L.arange(v.numel(), dtype=v.dtype).view(v.shape)).sum().backward()
        rec.append(_np(h0.grad))
        h0.grad = None
        with L.no_grad():
            v.mul_(10)
        rec.append(_np(h))
        out.append(rec)
    return out


@pytest.mark.parametrize("view", ["slice", "t", "view", "chain"])
def test_view_of_an_input_that_requires_grad(view):
    ref = _input_view_case(torch, _eager, view)
    got = _input_view_case(ft, ft.compile, view)
    for r, g in zip(ref, got):
        assert g[:3] == r[:3]
        np.testing.assert_allclose(g[3], r[3])
        np.testing.assert_allclose(g[4], r[4])


def _mutual_case(L, wrap, grad):
    def k(x):
        y = x * 2
        return y, y[1:], y, y.view(3, 1)
    f = wrap(k)
    out = []
    for _ in range(2):
        x0 = L.tensor([1., 2., 3.], requires_grad=grad)
        x = x0 * 1 if grad else x0
        a, b, c, e = f(x)
        rec = [a is c, b._base is a, e._base is a, b.requires_grad]
        if grad:
            rec.append(type(b.grad_fn).__name__ if L is torch else b.grad_fn.name())
            (b * L.tensor([10., 100.])).sum().backward(retain_graph=True)
            (a * L.tensor([1., 2., 3.])).sum().backward()
            rec.append(_np(x0.grad))
        else:
            a.add_(1)
            rec += [_np(a), _np(b), _np(c), _np(e)]
        out.append(rec)
    return out


@pytest.mark.parametrize("grad", [False, True])
def test_results_that_alias_each_other(grad):
    ref = _mutual_case(torch, _eager, grad)
    got = _mutual_case(ft, ft.compile, grad)
    for r, g in zip(ref, got):
        assert g[:4] == r[:4]
        if grad:
            assert g[4] == r[4]
        for x, y in zip(r[4 + grad:], g[4 + grad:]):
            np.testing.assert_allclose(y, x, rtol=1e-6)


def _state_case(L, wrap):
    p = L.nn.Parameter(L.tensor([1., 2.]))
    opt = L.optim.SGD([p], lr=0.1, momentum=0.9)

    def step():
        opt.zero_grad()
        (p ** 2).sum().backward()
        opt.step()
        return p.data, opt.state[p]["momentum_buffer"]
    f = wrap(step)
    outs = [f() for _ in range(3)]
    rec = [_np(outs[0][0]), _np(outs[0][1]), outs[1][1] is opt.state[p]["momentum_buffer"],
           outs[0][1] is outs[2][1], outs[0][0]._base is None, outs[0][0].requires_grad]
    with L.no_grad():
        outs[2][0].add_(100)
    rec.append(_np(p))
    return rec


def test_p_data_and_the_momentum_buffer_returned_from_a_step():
    ref = _state_case(torch, _eager)
    got = _state_case(ft, ft.compile)
    assert got[2:6] == ref[2:6]
    for x, y in zip(ref[:2] + ref[6:], got[:2] + got[6:]):
        np.testing.assert_allclose(y, x, rtol=1e-6)


def test_the_steady_step_returning_its_state_stays_one_program():
    p = ft.nn.Parameter(ft.tensor([1., 2.]))
    opt = ft.optim.SGD([p], lr=0.1, momentum=0.9)

    @ft.compile
    def step():
        opt.zero_grad()
        (p ** 2).sum().backward()
        opt.step()
        return p.data, opt.state[p]["momentum_buffer"]
    for _ in range(4):
        step()
    assert step.stats["eager_calls"] == 0 and step.stats["traces"] <= 2


@pytest.mark.parametrize("case", ["detach", "data", "detach and view", "view of detach"])
def test_detached_results_alias_their_result(case):
    """``return y, y.detach()`` (or ``y.data``, or a view of the detached): the same values as y's result, as eager's
    -- a write to y shows in it (before, a copy of that call's values); ``.data`` has a counter of its own."""
    fn = {"detach": lambda x: ((y := x * 2), y.detach()),
          "data": lambda x: ((y := x * 2), y.data),
          "detach and view": lambda x: ((y := x * 2), y.detach(), y[0]),
          "view of detach": lambda x: ((y := x * 2), y.detach()[1:])}[case]

    def run(L, wrap):
        f = wrap(fn)
        x = L.ones(3, requires_grad=True)
        out = []
        for _ in range(2):
            res = f(x)
            flags = [(r.requires_grad, r._base is not None) for r in res]
            with L.no_grad():
                res[0].mul_(3)
            out.append((flags, [r.tolist() for r in res[1:]], [r._version for r in res]))
        return out
    assert run(ft, ft.compile) == run(torch, lambda f: f)
