"""Parity of ``functorch_lite.autograd.functional`` with ``torch.autograd.functional``: vjp, jvp, jacobian,
hessian, vhp, hvp on the same functions and float64 inputs; values (1e-10), result structure (Tensor vs tuple,
nesting), dtypes, shapes, requires_grad / grad_fn presence, create_graph higher derivatives, strict-mode and
argument errors (type and message), and the inputs' state afterwards."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(0)


def _np(*shape):
    return RNG.uniform(0.5, 1.5, shape)  # float64, away from 0


X3, Y3, A23, B32, S1 = _np(3), _np(3), _np(2, 3), _np(3, 2), _np(1)


def _to(lib, v, rg=False):
    if isinstance(v, np.ndarray):
        t = lib.tensor(v)
        return t.requires_grad_() if rg else t
    if isinstance(v, tuple):
        return tuple(_to(lib, x, rg) for x in v)
    return v


def _cmp(ours, theirs, path="res", names=False, graph=True):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ft.Tensor), f"{path}: {type(ours)}"
        assert str(ours.dtype) == str(theirs.dtype), f"{path}: {ours.dtype} vs {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {tuple(ours.shape)} vs {tuple(theirs.shape)}"
        if graph:
            assert ours.requires_grad == theirs.requires_grad, f"{path}: requires_grad"
            assert (ours.grad_fn is None) == (theirs.grad_fn is None), \
                f"{path}: grad_fn {ours.grad_fn} vs {theirs.grad_fn}"
        if names and theirs.grad_fn is not None:
            assert ours.grad_fn.name() == theirs.grad_fn.name(), path
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-10,
                                   err_msg=path)
    else:
        assert type(theirs) in (tuple, list), f"{path}: unexpected {type(theirs)}"
        assert type(ours) is type(theirs) and len(ours) == len(theirs), f"{path}: {type(ours)} vs {type(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _cmp(a, b, f"{path}[{i}]", names, graph)


def both(fn, *args, rg=False, names=False, graph=True):
    """``fn(lib, *args as lib tensors)`` in torch and here (inputs require grad with ``rg``); compared."""
    theirs = fn(torch, *_to(torch, args, rg))
    ours = fn(ft, *_to(ft, args, rg))
    _cmp(ours, theirs, names=names, graph=graph)
    return ours


def both_raise(fn, *args, rg=False):
    with pytest.raises(Exception) as te:
        fn(torch, *_to(torch, args, rg))
    with pytest.raises(Exception) as fe:
        fn(ft, *_to(ft, args, rg))
    assert type(fe.value) is type(te.value), (te.value, fe.value)
    assert str(fe.value) == str(te.value)
    return str(te.value)


# the functions: elementwise, matmul, multi-input/multi-output, scalar-valued ----------------------------------------
def f_elem(x):
    return x.sin() * x.exp()


def f_mm(a, b):
    return (a @ b).tanh()


def f_multi(x, y):
    return x * y.sum(), (x ** 2).sum() + y.cos()


def f_scal(x, y):
    return (x.sin() * y.exp()).sum() + (x * x * y).sum()


def f_scal1(x):
    return (x ** 3).sum() + x[0] * x[1] * x[2]


AF = lambda lib: lib.autograd.functional  # noqa: E731

# (function, inputs, v for vjp (output-shaped), v for jvp (input-shaped))
CASES = {
    "elem": (f_elem, X3, Y3, Y3),
    "mm": (f_mm, (A23, B32), _np(2, 2), (_np(2, 3), _np(3, 2))),
    "multi": (f_multi, (X3, Y3), (_np(3), _np(3)), (_np(3), _np(3))),
    "scalar": (f_scal, (X3, Y3), np.array(0.7), (_np(3), _np(3))),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", list(CASES))
def test_vjp_jvp(case, create_graph):
    f, inp, v_out, v_in = CASES[case]
    both(lambda lib, i, v: AF(lib).vjp(f, i, v, create_graph=create_graph), inp, v_out, rg=create_graph)
    both(lambda lib, i, v: AF(lib).jvp(f, i, v, create_graph=create_graph), inp, v_in, rg=create_graph)


def test_v_none_single_element():
    both(lambda lib, x: AF(lib).vjp(lambda t: (t * t).sum(), x), X3)   # v=None: scalar output
    both(lambda lib, x: AF(lib).jvp(lambda t: t.exp() * 2, x), S1)     # v=None: one-element input
    both(lambda lib, x: AF(lib).vhp(lambda t: (t ** 3).sum(), x), S1)
    both(lambda lib, x: AF(lib).hvp(lambda t: (t ** 3).sum(), x), S1)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("case", ["elem", "mm", "multi"])
def test_jacobian(case, vectorize):
    f, inp = CASES[case][:2]
    both(lambda lib, i: AF(lib).jacobian(f, i, vectorize=vectorize), inp)
    # create_graph: the Jacobian keeps a graph (ViewBackward0 from the final view, as torch)
    both(lambda lib, i: AF(lib).jacobian(f, i, vectorize=vectorize, create_graph=True), inp, rg=True, names=True)


@pytest.mark.parametrize("case", ["elem", "mm", "multi"])
def test_jacobian_forward_mode(case):
    f, inp = CASES[case][:2]
    both(lambda lib, i: AF(lib).jacobian(f, i, vectorize=True, strategy="forward-mode"), inp)


def test_jacobian_forward_mode_dtype_is_the_outputs():
    fn = lambda lib, x: AF(lib).jacobian(lambda t: t.sin().float(), x, vectorize=True, strategy="forward-mode")  # noqa
    assert str(both(fn, X3).dtype) == "torch.float32"
    fn = lambda lib, x: AF(lib).jacobian(lambda t: t.sin().float(), x)  # noqa: E731  (reverse: the input's)
    assert str(both(fn, X3).dtype) == "torch.float64"


@pytest.mark.parametrize("opts", [{}, {"vectorize": True}])
def test_hessian(opts):
    both(lambda lib, x: AF(lib).hessian(f_scal1, x, **opts), X3)
    both(lambda lib, i: AF(lib).hessian(f_scal, i, **opts), (X3, Y3))   # tuple of tuples


def test_hessian_forward_over_reverse():
    def prog(lib, x, y):
        x.requires_grad_()                  # one input requires grad: the result is differentiable further
        H = AF(lib).hessian(f_scal, (x, y), vectorize=True, outer_jacobian_strategy="forward-mode")
        return H, lib.autograd.grad(H[0][0].sum() + H[0][1].sum() + H[1][1].sum(), x)
    both(prog, X3, Y3)


def test_hessian_matrix_input_and_create_graph():
    r = both(lambda lib, a: AF(lib).hessian(lambda t: (t.exp() @ t.T).sum(), a), A23)
    assert tuple(r.shape) == (2, 3, 2, 3)
    both(lambda lib, i: AF(lib).hessian(f_scal, i, create_graph=True), (X3, Y3), rg=True, names=True)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_vhp_hvp(name, create_graph):
    both(lambda lib, x, v: getattr(AF(lib), name)(f_scal1, x, v, create_graph=create_graph), X3, Y3,
         rg=create_graph)
    both(lambda lib, i, v: getattr(AF(lib), name)(f_scal, i, v, create_graph=create_graph), (X3, Y3),
         (_np(3), _np(3)), rg=create_graph)


def test_create_graph_higher_derivatives():
    def prog(lib, x, y):
        F = AF(lib)
        _, g = F.vjp(f_elem, x, y, create_graph=True)
        (g * g).sum().backward()
        gx = x.grad.clone()
        x.grad = None
        _, t = F.jvp(f_multi, (x, y), (y, x), create_graph=True)
        (t[0].sum() + t[1].sum()).backward()
        gx2, gy2 = x.grad.clone(), y.grad.clone()
        x.grad = y.grad = None
        H = F.hessian(f_scal1, x, create_graph=True)       # third derivatives
        (H * H).sum().backward()
        gx3 = x.grad.clone()
        x.grad = None
        J = F.jacobian(f_multi, (x, y), create_graph=True, vectorize=True)
        d = lib.autograd.grad(J[0][0].pow(2).sum() + J[1][1].sum(), (x, y))
        return gx, gx2, gy2, gx3, d
    both(prog, X3, Y3, rg=True)


def test_closure_and_no_grad_inside():
    def prog(lib, x, w):
        def f(t):
            with lib.no_grad():
                c = (t * w).exp()           # a constant for the derivative
            return t.sin() * w + c * t
        J = AF(lib).jacobian(f, x, create_graph=True)
        J.sum().backward()                  # reaches the closed-over w (and x through the graph)
        J2 = AF(lib).jacobian(f, x)
        return J, J2, w.grad, x.grad, AF(lib).vjp(f, x, w)[1]
    both(prog, X3, Y3, rg=True)


def test_inputs_state_untouched():
    for lib in (torch, ft):
        x, y = lib.tensor(X3), lib.tensor(Y3, requires_grad=True)
        F = AF(lib)
        F.jacobian(f_multi, (x, y))
        F.hessian(f_scal, (x, y), vectorize=True)
        F.vjp(f_multi, (x, y), (x, y), create_graph=True)
        F.hvp(f_scal, (x, y), (x, y))
        assert (x.requires_grad, y.requires_grad, x.grad, y.grad, y.is_leaf) == (False, True, None, None, True)


def test_no_grad_mode_results_and_detach():
    def prog(lib, x):
        with lib.no_grad():
            r = AF(lib).vjp(f_elem, x, x)
        r2 = AF(lib).jacobian(f_elem, x)           # create_graph=False: detached
        return r, r2
    both(prog, X3, rg=True)


def test_strict_mode_errors():
    def indep(x, y):
        return x.sin()
    F = AF
    both_raise(lambda lib, i: F(lib).vjp(indep, i, lib.ones(3, dtype=lib.float64), strict=True), (X3, Y3))
    both_raise(lambda lib, i: F(lib).jvp(indep, i, i, strict=True), (X3, Y3))
    both_raise(lambda lib, i: F(lib).jacobian(indep, i, strict=True), (X3, Y3))
    both_raise(lambda lib, x: F(lib).jacobian(lambda t: lib.ones(3, dtype=lib.float64), x, strict=True), X3)
    both_raise(lambda lib, x: F(lib).vjp(lambda t: lib.ones(3, dtype=lib.float64), x, x, strict=True), X3)
    both_raise(lambda lib, i: F(lib).hessian(lambda a, b: (a * a).sum(), i, strict=True), (X3, Y3))
    both_raise(lambda lib, i: F(lib).vhp(lambda a, b: (a * a).sum(), i, i, strict=True), (X3, Y3))
    both_raise(lambda lib, i: F(lib).hvp(lambda a, b: (a * a).sum(), i, i, strict=True), (X3, Y3))
    both_raise(lambda lib, x: F(lib).jacobian(f_elem, x, strict=True, vectorize=True), X3)
    both_raise(lambda lib, x: F(lib).jacobian(f_elem, x, strict=True, vectorize=True, strategy="forward-mode"), X3)
    msg = both_raise(lambda lib, i: F(lib).vjp(indep, i, lib.ones(3, dtype=lib.float64), strict=True), (X3, Y3))
    assert msg == ("The output of the user-provided function is independent of input 1. This is not allowed in "
                   "strict mode.")
    # not strict: zeros for the independent input
    both(lambda lib, i: F(lib).vjp(indep, i, lib.ones(3, dtype=lib.float64)), (X3, Y3))


def test_strict_mode_linear_functions():
    """A linear function's create_graph derivatives do not depend on the input: torch's strict errors, and a
    result without grad_fn when not strict (the engine records no edge to an input its backward does not read)."""
    F = AF
    both_raise(lambda lib, x: F(lib).jacobian(lambda t: 2 * t, x, create_graph=True, strict=True), X3)
    both_raise(lambda lib, x: F(lib).vjp(lambda t: 3 * t, x, lib.ones(3, dtype=lib.float64), create_graph=True,
                                         strict=True), X3)
    both_raise(lambda lib, x: F(lib).hessian(lambda t: (2 * t).sum(), x, strict=True), X3)
    both_raise(lambda lib, x: F(lib).hvp(lambda t: (t * 2).sum(), x, lib.ones(3, dtype=lib.float64), strict=True),
               X3)
    both(lambda lib, x: F(lib).jacobian(lambda t: 2 * t + 1, x, create_graph=True), X3)
    both(lambda lib, x: F(lib).hessian(lambda t: (t * 2).sum() + (t * t).sum(), x, create_graph=True), X3)


def test_argument_errors():
    F = AF
    both_raise(lambda lib, x: F(lib).jacobian(f_elem, 3), X3)
    both_raise(lambda lib, x: F(lib).jacobian(f_multi, (x, 3)), X3)
    both_raise(lambda lib, x: F(lib).jacobian(f_elem, [x]), X3)
    both_raise(lambda lib, x: F(lib).jacobian(lambda t: [t], x), X3)
    both_raise(lambda lib, x: F(lib).vjp(lambda t: 3, x), X3)
    both_raise(lambda lib, x: F(lib).vjp(f_elem, x, (x, x)), X3)
    both_raise(lambda lib, i: F(lib).vjp(f_multi, i, (i[0],)), (X3, Y3))
    both_raise(lambda lib, i: F(lib).vjp(f_multi, i, (i[0], i[0][:2])), (X3, Y3))
    both_raise(lambda lib, x: F(lib).vjp(f_elem, x, x[:2]), X3)
    both_raise(lambda lib, x: F(lib).vjp(f_elem, x), X3)               # v=None, 3 outputs
    both_raise(lambda lib, x: F(lib).jvp(f_elem, x), X3)
    both_raise(lambda lib, x: F(lib).jvp(f_elem, x, 1.0), X3)
    both_raise(lambda lib, x: F(lib).vhp(f_scal1, x), X3)
    both_raise(lambda lib, x: F(lib).hvp(f_elem, x, x), X3)            # not a single element
    both_raise(lambda lib, x: F(lib).vhp(lambda t: (t.sum(), t.sum()), x, x), X3)
    both_raise(lambda lib, x: F(lib).hessian(f_elem, x), X3)
    both_raise(lambda lib, x: F(lib).hessian(lambda t: (t.sum(),), x), X3)
    both_raise(lambda lib, x: F(lib).hessian(f_scal1, x, outer_jacobian_strategy="fwd"), X3)
    both_raise(lambda lib, x: F(lib).jacobian(f_elem, x, strategy="forward"), X3)
    both_raise(lambda lib, x: F(lib).jacobian(f_elem, x, strategy="forward-mode"), X3)   # vectorize=False
    both_raise(lambda lib, x: F(lib).jacobian(f_elem, x, strategy="forward-mode", vectorize=True,
                                              create_graph=True), X3)
    both_raise(lambda lib, x: F(lib).hessian(f_scal1, x, outer_jacobian_strategy="forward-mode"), X3)
