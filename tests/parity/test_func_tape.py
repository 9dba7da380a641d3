"""``.backward()`` through the results of ``func.grad`` / ``grad_and_value`` / ``vjp`` (and its ``vjp_fn``) /
``jvp`` / ``jacrev`` / ``jacfwd`` / ``hessian``, against real torch. torch's transforms compose with its
autograd; ours gave plain tensors: MAML's outer gradient silently lost its second-order term, and a gradient
penalty raised "element 0 of tensors does not require grad" (found by a helper's red-team; each case here
failed before). Each call is now one node on the tape (``func/_tape.py``), as a ``vmap`` call was."""

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import both as _both, close, grad_of as _g

S = np.array([0.3, -1.2, 2.0], np.float32)
W = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], np.float32)
B = np.array([0.1, -0.2], np.float32)
X = np.random.RandomState(0).randn(4, 3).astype(np.float32)
Y = np.random.RandomState(1).randn(4, 2).astype(np.float32)


def _maml(L, transform):
    m = L.nn.Linear(3, 2)
    with L.no_grad():
        m.weight.copy_(L.tensor(W))
        m.bias.copy_(L.tensor(B))
    x, y = L.tensor(X), L.tensor(Y)
    params = dict(m.named_parameters())

    def inner(p):
        return ((L.func.functional_call(m, p, (x,)) - y) ** 2).mean()
    if transform == "grad":
        g = L.func.grad(inner)(params)
    elif transform == "grad_and_value":
        g, _ = L.func.grad_and_value(inner)(params)
    else:  # vjp
        _, fn = L.func.vjp(inner, params)
        (g,) = fn(L.tensor(1.0))
    fast = {k: params[k] - 0.1 * g[k] for k in params}
    inner(fast).backward()
    return g["weight"].requires_grad, _g(m.weight), _g(m.bias)


@pytest.mark.parametrize("transform", ["grad", "grad_and_value", "vjp"])
def test_maml_second_order(transform):
    """The inner step's gradient depends on the parameters: the outer backward has the second-order term."""
    t, f = _both(lambda L: _maml(L, transform))
    assert t[0] is f[0] is True
    assert close(f[1:], t[1:], rel=1e-5)


CASES = {
    "grad wrt x": lambda L, x, w: L.func.grad(lambda v: (v.sin() * v).sum())(x).pow(2).sum(),
    "grad, captured w": lambda L, x, w: L.func.grad(lambda v: (v.sin() * w).sum())(x.detach()).pow(2).sum(),
    "grad_and_value value": lambda L, x, w: L.func.grad_and_value(lambda v: (v * w).sum())(x)[1] * 2,
    "grad has_aux": lambda L, x, w: sum(o.sum() for o in L.func.grad(
        lambda v: ((v * w).sum(), v * w * 3), has_aux=True)(x)),
    "jacrev, captured w": lambda L, x, w: L.func.jacrev(lambda v: v.sin() * w)(x.detach()).sum(),
    "jacfwd wrt x": lambda L, x, w: L.func.jacfwd(lambda v: v.sin() * w)(x).pow(2).sum(),
    "hessian wrt x": lambda L, x, w: L.func.hessian(lambda v: (v.sin() * w).sum())(x).sum(),
    "jvp, captured w": lambda L, x, w: sum(o.sum() for o in L.func.jvp(lambda v: v.sin() * w, (x.detach(),),
                                                                           (L.ones(3),))),
    "jvp, tangent requires grad": lambda L, x, w: L.func.jvp(lambda v: v.sin(), (L.ones(3),), (x,))[1].sum(),
    "vjp primal output": lambda L, x, w: L.func.vjp(lambda v: v.sin() * w, x)[0].sum(),
    "vjp_fn output, captured w": lambda L, x, w: L.func.vjp(lambda v: v.sin() * w, x.detach())[1](
        L.ones(3))[0].sum(),
    "vjp_fn output, cotangent requires grad": lambda L, x, w: L.func.vjp(lambda v: v.sin(), L.ones(3))[1](
        x * w)[0].sum(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_backward_through_results(name):
    """A gradient penalty's shape: a transform's result in a loss, ``.backward()``: torch's x.grad, w.grad."""
    def case(L):
        x = L.tensor(S, requires_grad=True)
        w = L.tensor(S * 2, requires_grad=True)
        CASES[name](L, x, w).backward()
        return _g(x), _g(w)
    t, f = _both(case)
    assert close(f, t, rel=1e-5)


def test_results_plain_without_grad():
    """Nothing requires grad (or grad mode off): the results stay plain tensors, as torch's."""
    x = ft.tensor(S)
    assert not ft.func.grad(lambda v: (v.sin()).sum())(x).requires_grad
    w = ft.tensor(S, requires_grad=True)
    with ft.no_grad():
        assert not ft.func.grad(lambda v: (v * w).sum())(x).requires_grad


def test_vjp_fn_rerun_draws_the_forward_mask():
    """vjp_fn on the tape runs the forward again (its residuals are the recording's): a dropout inside draws the
    forward's mask again, so the pullback and the output agree on which elements were dropped."""
    ft.manual_seed(0)
    w = ft.tensor(np.linspace(0.5, 1.5, 200, dtype=np.float32), requires_grad=True)
    v = ft.tensor(np.linspace(1.0, 2.0, 200, dtype=np.float32))
    out, fn = ft.func.vjp(lambda a: ft.nn.functional.dropout(a * w, 0.5, training=True), v)
    (res,) = fn(ft.ones(200))
    res.sum().backward()
    kept = out.detach().numpy() != 0
    assert 20 < kept.sum() < 180
    np.testing.assert_array_equal(res.detach().numpy() != 0, kept)
    np.testing.assert_array_equal(w.grad.numpy() != 0, kept)
    np.testing.assert_allclose(w.grad.numpy()[kept], 2.0, rtol=1e-6)


def _ensemble_losses(L, comp):
    import copy
    ms = [L.nn.Linear(4, 2) for _ in range(2)]
    for i, m in enumerate(ms):
        with L.no_grad():
            m.weight.fill_(0.1 * (i + 1))
            m.bias.fill_(0.5)
    p, b = L.func.stack_module_state(ms)
    base = copy.deepcopy(ms[0]).to("meta")

    def step(x):
        out = L.func.vmap(lambda p, b, x: L.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(p, b, x)
        loss = out.pow(2).mean()
        loss.backward()
        return loss.detach()
    step = comp(step)
    losses = [step(L.ones(3, 4) * (k + 1)).item() for k in range(3)]
    return losses, p["weight"].grad.numpy().tolist(), p["bias"].grad.numpy().tolist()


def test_compiled_ensemble_step_with_a_meta_base():
    """The ensembling tutorial's base model on the meta device (``copy.deepcopy(model).to("meta")``), trained in a
    compiled step: its meta parameters are not program inputs (the walk raised JAX's "not a valid JAX type")."""
    t = _ensemble_losses(torch, lambda f: torch.compile(f, backend="aot_eager"))
    f = _ensemble_losses(ft, ft.compile)
    assert close(f, t, rel=1e-6)
    assert close(_ensemble_losses(ft, lambda f: f), t, rel=1e-6)


def test_captured_read_after_a_call_that_did_not():
    """A call whose captured tensor was not read last time runs plainly first, and again on the tape when it is
    read after all: the same values and random draws as one run, and the node."""
    flag = [False]
    w = ft.tensor(S, requires_grad=True)
    x = ft.tensor(np.linspace(1.0, 2.0, 3, dtype=np.float32))

    def f(v):
        d = ft.nn.functional.dropout(v, 0.5, training=True)
        return (d * w).sum() if flag[0] else (d * 2).sum()
    g = ft.func.grad(f)
    assert not g(x).requires_grad
    flag[0] = True
    with ft.no_grad():
        ft.manual_seed(3)
        ref = g(x).numpy()
        after = ft.rand(4).numpy()
    ft.manual_seed(3)
    r = g(x)
    np.testing.assert_array_equal(ft.rand(4).numpy(), after)  # (the generator advanced as by one run)
    np.testing.assert_array_equal(r.detach().numpy(), ref)
    assert type(r.grad_fn).__name__ == "GradBackward0"
    r.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), (ref != 0) * 2.0, rtol=1e-6)
