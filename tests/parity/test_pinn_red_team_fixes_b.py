"""Red-team fixes (PINN note, findings 2 and 3): ``create_graph=True`` through ``torch.func`` results, and the
higher-order graph of ``square`` / ``relu``, against real PyTorch."""
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _np(t):
    return np.asarray(t.detach().tolist())


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _orders(lib, make, f, n):
    """Derivatives 1..n of ``f(x).sum()`` by chained ``autograd.grad(create_graph=True)``."""
    x = make(lib)
    out, y = [], f(lib, x).sum()
    for _ in range(n):
        y, = lib.autograd.grad(y, x, create_graph=True)
        out.append(y)
        y = y.sum()
    return out


def _x(lib):
    return lib.tensor([[0.1], [0.5], [-0.8]], dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize("name", ["vmap", "grad", "jacrev", "hessian"])
def test_create_graph_through_func_results(name):
    def f(lib, x):
        g = lambda t: (t.sin() * t.exp()).sum()  # noqa: E731
        if name == "vmap":
            return lib.func.vmap(lib.sin)(x)
        return getattr(lib.func, name)(g)(x)
    n = {"vmap": 3, "hessian": 1}.get(name, 2)  # (each order compiles the ops again: few orders keep it fast)
    want = _orders(torch, _x, f, n)
    got = _orders(ft, _x, f, n)
    for w, g in zip(want, got):
        _close(w, g)
        assert w.requires_grad == g.requires_grad


def test_create_graph_through_vjp_and_jvp():
    for lib in (torch, ft):
        x = _x(lib)
        _, fn = lib.func.vjp(lambda t: t.sin() ** 2, x)
        v, = fn(lib.ones(3, 1, dtype=lib.float64))
        _, t = lib.func.jvp(lambda t: t.sin() ** 2, (x,), (lib.ones(3, 1, dtype=lib.float64),))
        g, = lib.autograd.grad((v * t).sum(), x, create_graph=True)
        res = (g, lib.autograd.grad(g.sum(), x)[0])
        if lib is torch:
            want = res
    for w, g in zip(want, res):
        _close(w, g)


def _net(lib):
    net = lib.nn.Sequential(lib.nn.Linear(1, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1)).double()
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.linspace(-1, 1, p.numel(), dtype=lib.float64).reshape(p.shape) * (0.7 + 0.1 * i))
    return net


def test_pinn_gradient_penalty_through_vmap_grad():
    """``ux = vmap(grad(net))(xs)``; the loss's parameter gradients with create_graph, then their norm's."""
    res = {}
    for lib in (torch, ft):
        net = _net(lib)
        xs = lib.linspace(-1, 1, 5, dtype=lib.float64).reshape(5, 1)
        ux = lib.func.vmap(lib.func.grad(lambda x: net(x).squeeze()))(xs)
        params = list(net.parameters())
        with pytest.raises(RuntimeError, match="index 3 appears to not have been used"):
            lib.autograd.grad((ux ** 2).mean(), params, create_graph=True)
        gs = lib.autograd.grad((ux ** 2).mean(), params[:3], create_graph=True)
        sum((g ** 2).sum() for g in gs).backward()
        res[lib] = [*gs, *[p.grad for p in params[:3]], params[3].grad]
    assert all(g.requires_grad for g in res[ft][:3])
    assert res[ft][-1] is None and res[torch][-1] is None
    for w, g in zip(res[torch][:-1], res[ft][:-1]):
        _close(w, g)


def test_gradient_penalty_captured_weight_and_input():
    res = {}
    for lib in (torch, ft):
        W = lib.tensor([[0.5, -0.2], [0.1, 0.4]], dtype=lib.float64, requires_grad=True)
        xs = lib.tensor([[1., 2.], [0.5, -1.], [0.3, 0.3]], dtype=lib.float64, requires_grad=True)
        gx = lib.func.vmap(lib.func.grad(lambda xi: lib.tanh(xi @ W).sum()))(xs)
        a, b = lib.autograd.grad(gx.pow(2).sum(), (xs, W), create_graph=True)
        res[lib] = (a, b, *lib.autograd.grad(a.sum() + b.sum(), (xs, W)))
    for w, g in zip(res[torch], res[ft]):
        _close(w, g)


def test_create_graph_linear_func_result_is_constant():
    for lib in (torch, ft):
        x = _x(lib)
        g, = lib.autograd.grad(lib.func.vmap(lambda t: t * 3)(x).sum(), x, create_graph=True)
        assert not g.requires_grad
        assert g.tolist() == [[3.0]] * 3


def test_create_graph_replays_vmap_random_draws():
    """The differentiable backward runs the call again: with the forward's random draws, and the generator's
    state as before it."""
    ft.manual_seed(0)
    x = ft.linspace(-1, 1, 8, dtype=ft.float64).reshape(4, 2).requires_grad_()
    u = ft.func.vmap(lambda t: ft.nn.functional.dropout(t.sin(), 0.5), randomness="different")(x)
    mask = torch.tensor((_np(u) != 0) * 2.0)
    d1, = ft.autograd.grad(u.sum(), x, create_graph=True)
    state = ft.random.get_rng_state()
    d2, = ft.autograd.grad(d1.sum(), x)
    xt = torch.tensor(_np(x))
    _close(d1, mask * xt.cos())
    _close(d2, -mask * xt.sin())
    assert ft.equal(state, ft.random.get_rng_state())


def _third(lib, f):
    x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
    d1, = lib.autograd.grad(f(lib, x).sum(), x, create_graph=True)
    d2, = lib.autograd.grad(d1.sum(), x, create_graph=True)
    d3, = lib.autograd.grad(d2.sum(), x, create_graph=True)
    return d1, d2, d3


@pytest.mark.parametrize("name", ["square", "relu", "F.relu", "relu_"])
def test_third_derivative_square_relu(name):
    f = {"square": lambda lib, x: lib.square(x), "relu": lambda lib, x: lib.relu(x),
         "F.relu": lambda lib, x: lib.nn.functional.relu(x), "relu_": lambda lib, x: (x * 1).relu_()}[name]
    want, got = _third(torch, f), _third(ft, f)
    for w, g in zip(want, got):
        assert g.tolist() == w.tolist()
        assert g.requires_grad == w.requires_grad
    # what already matched stays so: ``x * x``'s and ``relu6``'s second derivatives are constants (torch's too),
    # ``x.max()``'s is (torch's first is)
    for g in (lambda x: x * x, ft.nn.functional.relu6, lambda x: x.max()):
        x = ft.tensor([0.5, -1.5, 2.0], requires_grad=True)
        d1, = ft.autograd.grad(g(x).sum(), x, create_graph=True)
        d2, = ft.autograd.grad(d1.sum(), x, create_graph=True)
        assert not d2.requires_grad
