"""``requires_grad`` / ``grad_fn`` of ``torch.func`` results when an input (or a captured tensor) requires grad,
against real torch on the same inputs. torch connects a transform's outputs to the outer graph only through the
ops applied to the outer tensors: ``grad`` of a linear function is a constant (``requires_grad=False``, no
grad_fn), ``grad`` of a quadratic one requires grad. Ours gave every floating result the call's node
(``func/_tape.py``); it now gives it only to the results that depend differentiably on a tensor requiring grad,
and an edge only to the tensors they depend on (``autograd.grad(..., allow_unused=True)`` gives None for the
others, as torch's). Backward values through the results that require grad are compared too."""

import numpy as np
import pytest
import torch

import functorch_lite as ft

XV = [1.0, 2.0]
YV = [0.5, -1.0]
WV = [[0.5, -1.0], [1.5, 0.3]]


def _leaves(r):
    if isinstance(r, dict):
        return [v for k in r for v in _leaves(r[k])]
    if isinstance(r, (tuple, list)):
        return [v for x in r for v in _leaves(x)]
    return [r]


def _meta(r):
    return [(t.requires_grad, t.grad_fn is None) for t in _leaves(r)]


def _backward(L, r, inputs):
    """Gradients of a scalar made from every result that requires grad (None: unused, as torch's)."""
    used = [t for t in _leaves(r) if t.requires_grad]
    if not used:
        return None
    tot = sum((t * (i + 1.5)).sin().sum() for i, t in enumerate(used))
    gs = L.autograd.grad(tot, inputs, allow_unused=True)
    return [None if g is None else np.asarray(g.detach().tolist(), np.float64) for g in gs]


def _run(case):
    out = {}
    for L in (torch, ft):
        F = L.func
        x = L.tensor(XV, requires_grad=True)
        y = L.tensor(YV, requires_grad=True)
        xn = L.tensor(XV)
        r, inputs = case(L, F, x, y, xn)
        out[L] = (_meta(r), _backward(L, r, inputs), r)
    return out


def _check(case):
    out = _run(case)
    (tm, tb, tr), (fm, fb, fr) = out[torch], out[ft]
    assert fm == tm
    if tb is None:
        assert fb is None
    else:
        assert len(fb) == len(tb)
        for a, b in zip(fb, tb):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(_leaves(fr), _leaves(tr)):
        np.testing.assert_allclose(np.asarray(a.detach().tolist()), np.asarray(b.detach().tolist()), rtol=1e-5,
                                   atol=1e-6)
    return out


SCALAR_FNS = {
    "sum": lambda L: lambda a: a.sum(),
    "x3sum": lambda L: lambda a: (a * 3).sum(),
    "mean": lambda L: lambda a: a.mean(),
    "times_zero": lambda L: lambda a: (a * 0).sum(),
    "detach": lambda L: lambda a: (a.detach() * a).sum(),
    "sqsum": lambda L: lambda a: (a ** 2).sum(),
    "sinsum": lambda L: lambda a: a.sin().sum(),
    "dot": lambda L: lambda a: a @ a,
}


@pytest.mark.parametrize("fn", list(SCALAR_FNS))
@pytest.mark.parametrize("api", ["grad", "grad_and_value", "grad_aux", "grad_const_aux"])
def test_grad_results(fn, api):
    def case(L, F, x, y, xn):
        f = SCALAR_FNS[fn](L)
        if api == "grad":
            return F.grad(f)(x), (x,)
        if api == "grad_and_value":
            return F.grad_and_value(f)(x), (x,)
        if api == "grad_aux":
            return F.grad(lambda a: (f(a), a * 2), has_aux=True)(x), (x,)
        return F.grad(lambda a: (f(a), L.ones(2)), has_aux=True)(x), (x,)
    _check(case)


def test_issue_example_linear_grad_is_constant():
    for L in (torch, ft):
        x = L.tensor([1., 2.], requires_grad=True)
        for f in (lambda a: a.sum(), lambda a: (a * 3).sum()):
            g = L.func.grad(f)(x)
            assert not g.requires_grad and g.grad_fn is None
            assert g.tolist() == ([1., 1.] if f(L.ones(1)).item() == 1 else [3., 3.])
        j = L.func.jacrev(lambda a: a * 3)(x)
        assert not j.requires_grad and j.grad_fn is None


VEC_FNS = {
    "x2": lambda L: lambda a: a * 2,
    "sum": lambda L: lambda a: a.sum(),
    "sq": lambda L: lambda a: a ** 2,
    "sin": lambda L: lambda a: a.sin(),
    "const": lambda L: lambda a: L.ones(2),
    "mix": lambda L: lambda a: a * 3 + a.sin(),
}


@pytest.mark.parametrize("fn,api", [
    (fn, api) for fn in VEC_FNS
    for api in ["vjp_out", "vjp_fn", "vjp_fn_ct_requires_grad", "jacrev", "vmap", "vmap_grad", "linearize_out",
                "linearize_fn", "jvp_tangent_requires_grad"]
    if not (fn == "sum" and api.startswith("vjp_fn"))])  # (the cotangents below are 2-vectors)
def test_vector_results(fn, api):
    def case(L, F, x, y, xn):
        f = VEC_FNS[fn](L)
        if api == "vjp_out":
            return F.vjp(f, x)[0], (x,)
        if api == "vjp_fn":
            return F.vjp(f, x)[1](L.ones(2)), (x,)
        if api == "vjp_fn_ct_requires_grad":
            return F.vjp(f, x)[1](y * 1), (x, y)
        if api == "jacrev":
            return F.jacrev(f)(x), (x,)
        if api == "vmap":
            return F.vmap(f)(x.reshape(1, 2).expand(3, 2)), (x,)
        if api == "vmap_grad":
            return F.vmap(F.grad(lambda a: f(a).sum()))(x.reshape(1, 2).expand(3, 2)), (x,)
        if api == "linearize_out":
            return F.linearize(f, x)[0], (x,)
        if api == "linearize_fn":
            return F.linearize(f, x)[1](L.ones(2)), (x,)
        return F.jvp(f, (x.detach(),), (y,)), (y,)
    _check(case)


@pytest.mark.parametrize("fn", ["sum", "sq", "sin", "const", "mix"])
def test_jvp_results(fn):
    # (``a * 2`` is left out: torch's forward formula for mul keeps the primal in the tangent, see below)
    _check(lambda L, F, x, y, xn: (F.jvp(VEC_FNS[fn](L), (x,), (L.ones(2),)), (x,)))


@pytest.mark.parametrize("fn", ["sum", "sq", "sin", "const", "mix"])
def test_jacfwd_results(fn):
    _check(lambda L, F, x, y, xn: (F.jacfwd(VEC_FNS[fn](L))(x), (x,)))


@pytest.mark.parametrize("fn", ["sum", "x3sum", "mean", "detach", "sinsum"])
def test_hessian_results(fn):
    _check(lambda L, F, x, y, xn: (F.hessian(SCALAR_FNS[fn](L))(x), (x,)))


CASES = {
    # grad w.r.t. one of two arguments: the result reaches only what the gradient depends on (not the value's)
    "grad_argnums_both": lambda L, F, x, y, xn: (F.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y), (x, y)),
    "grad_other_arg": lambda L, F, x, y, xn: (F.grad(lambda a, b: (a * b).sum())(x, y), (x, y)),
    "grad_separate": lambda L, F, x, y, xn: (
        F.grad(lambda a, b: a.sum() + (b ** 2).sum(), argnums=(0, 1))(x, y), (x, y)),
    "jacrev_argnums": lambda L, F, x, y, xn: (
        F.jacrev(lambda a, b: a * b.sum(), argnums=(0, 1))(x, y), (x, y)),
    "jacrev_linear_in_one": lambda L, F, x, y, xn: (
        F.jacrev(lambda a, b: a.sin() + b * 2, argnums=(0, 1))(x, y), (x, y)),
    "jacrev_two_outputs": lambda L, F, x, y, xn: (
        F.jacrev(lambda a, b: (a * 2, b.sin()), argnums=(0, 1))(x, y), (x, y)),
    "jacrev_dict_one_jacobian": lambda L, F, x, y, xn: (
        F.jacrev(lambda a: {"u": a.sin(), "v": a * 2})(x), (x,)),
    "jacrev_aux": lambda L, F, x, y, xn: (F.jacrev(lambda a: (a * 2, a.exp()), has_aux=True)(x), (x,)),
    # captured tensors (a closure's) that require grad
    "captured": lambda L, F, x, y, xn: (F.grad(lambda a: (a * y).sum())(xn), (y,)),
    "captured_quadratic": lambda L, F, x, y, xn: (F.grad(lambda a: (a * a * y).sum())(xn), (y,)),
    "captured_in_value_only": lambda L, F, x, y, xn: (F.grad(lambda a: a.sum() + y.sum())(xn), (y,)),
    "captured_value": lambda L, F, x, y, xn: (F.grad_and_value(lambda a: a.sum() + y.sum())(xn), (y,)),
    "nested_grad_cube": lambda L, F, x, y, xn: (F.grad(F.grad(lambda a: a ** 3))(x[1]), (x,)),
    "vmap_nested_grad_cube": lambda L, F, x, y, xn: (F.vmap(F.grad(F.grad(lambda a: a ** 3)))(x), (x,)),
    "vmap_comparison": lambda L, F, x, y, xn: (F.vmap(lambda a: (a > 0).float())(x.reshape(1, 2)), (x,)),
    "vmap_outputs": lambda L, F, x, y, xn: (F.vmap(lambda a: (a * 2, a.sin(), L.zeros(())))(x), (x,)),
    "vjp_aux": lambda L, F, x, y, xn: (F.vjp(lambda a: (a.sin(), L.ones(2) * 3), x, has_aux=True)[2], (x,)),
    "jvp_aux": lambda L, F, x, y, xn: (
        F.jvp(lambda a: (a.sin(), a.exp()), (x,), (L.ones(2),), has_aux=True), (x,)),
    "jvp_of_linear_grad": lambda L, F, x, y, xn: (
        F.jvp(F.grad(lambda a: (a * 2).sum()), (x,), (L.ones(2),)), (x,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cases(name):
    _check(CASES[name])


def _linear(L):
    m = L.nn.Linear(2, 1)
    with L.no_grad():
        m.weight.copy_(L.tensor([[0.5, -1.0]]))
        m.bias.copy_(L.tensor([0.25]))
    return m


@pytest.mark.parametrize("what", ["grad_params", "grad_input", "grad_input_sq", "vmap"])
def test_functional_call(what):
    def case(L, F, x, y, xn):
        m = _linear(L)
        params = dict(m.named_parameters())
        inputs = tuple(params.values())
        if what == "grad_params":  # (linear in the parameters: a constant gradient)
            return F.grad(lambda p, a: F.functional_call(m, p, (a,)).sum())(params, xn), inputs
        if what == "grad_input":
            return F.grad(lambda a: F.functional_call(m, params, (a,)).sum())(xn), inputs
        if what == "grad_input_sq":
            return F.grad(lambda a: (F.functional_call(m, params, (a,)) ** 2).sum())(xn), inputs
        return F.vmap(lambda a: F.functional_call(m, params, (a,)))(xn.reshape(1, 2)), inputs
    _check(case)


def test_backward_through_results_accumulates():
    """``.backward()`` on a result that requires grad fills ``.grad`` of what it depends on, and only that."""
    res = {}
    for L in (torch, ft):
        x = L.tensor(XV, requires_grad=True)
        y = L.tensor(YV, requires_grad=True)
        g = L.func.grad(lambda a, b: (a ** 2 * b).sum() + b.sum())(x, y)  # 2 a b: depends on x and y
        h = L.func.grad(lambda a, b: (a * 3).sum() + (b ** 2).sum(), argnums=1)(x, y)  # 2 b: y only
        (g.sum() + h.sum()).backward(retain_graph=True)
        res[L] = (x.grad.tolist(), y.grad.tolist(), g.requires_grad, h.requires_grad)
        x.grad = None
        y.grad = None
        h.sum().backward()
        res[L] += (x.grad, y.grad.tolist())
    assert res[ft] == res[torch]


def test_no_grad_input_gives_plain_results():
    for L in (torch, ft):
        x = L.tensor(XV)
        assert not L.func.grad(lambda a: (a ** 2).sum())(x).requires_grad
        with L.no_grad():
            xr = L.tensor(XV, requires_grad=True)
            assert not L.func.grad(lambda a: (a ** 2).sum())(xr).requires_grad


@pytest.mark.parametrize("api", ["jacrev", "jacfwd", "hessian"])
def test_jacobian_grad_fn_is_a_view(api):
    """torch's jacrev / jacfwd / hessian results are views of the Jacobian they compute: ViewBackward0."""
    names = {}
    for L in (torch, ft):
        x = L.tensor(XV, requires_grad=True)
        f = (lambda a: a.sin() * a) if api != "hessian" else (lambda a: (a.sin() * a).sum())
        r = getattr(L.func, api)(f)(x)
        names[L] = type(r.grad_fn).__name__
    assert names[ft] == names[torch] == "ViewBackward0"


def test_linearize_jvp_fn_requires_grad_only_when_nonlinear():
    for L in (torch, ft):
        x = L.tensor(XV, requires_grad=True)
        assert not L.func.linearize(lambda a: a * 2, x)[1](L.ones(2)).requires_grad
        t = L.func.linearize(lambda a: a.sin(), x)[1](L.ones(2))
        assert t.requires_grad
        # (its gradient reaches nothing: the linearised program's constants)
        assert L.autograd.grad(t.sum(), x, allow_unused=True) == (None,)
