"""Higher derivatives at branch points (PINN red team, findings 1 and 4): ``x ** 0`` / ``x ** 1`` at 0 (the where
trap of pow's derivative gave NaN one order up), the ELU family at 0, softsign at 0 and softplus at
``beta * x == threshold`` (torch's double backward masks strictly). 1st, 2nd and 3rd derivatives and their
``requires_grad`` against real PyTorch, at the branch points and away from them."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

XS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0]
DTYPES = ["float32", "float64"]


def _np(t):
    return np.array(t.detach().double().tolist())


def _derivatives(lib, f, xs, dtype, upto=3):
    """[(d_k values, d_k.requires_grad)] for k = 1.. while the previous one requires grad (torch raises past it)."""
    x = lib.tensor(xs, dtype=getattr(lib, dtype), requires_grad=True)
    out = []
    y = f(lib, x)
    for _ in range(upto):
        if not y.requires_grad:
            break
        d, = lib.autograd.grad(y.sum(), x, create_graph=True)
        out.append((_np(d), d.requires_grad))
        y = d
    return out


def _compare(f, dtype, xs=XS, rtol=1e-6, requires_grad=True):
    """Every order torch computes matches (NaNs included); where torch's stops (its derivative requires no grad),
    functorch_lite's next ones, if any, are exact zeros (never NaN). ``requires_grad=False``: that flag is compared
    below torch's last order only (which of pow's derivatives require grad follows the traced data flow here, with
    the exponent a runtime value: x ** 0's 1st, x ** k's (k+1)-th require grad, where torch's build no graph)."""
    want = _derivatives(torch, f, xs, dtype)
    got = _derivatives(ft, f, xs, dtype)
    assert len(got) >= len(want)
    for k, ((w, wr), (g, gr)) in enumerate(zip(want, got), 1):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6 if dtype == "float32" else 1e-12, equal_nan=True,
                                   err_msg=f"order {k}")
        if requires_grad or k < len(want):
            assert gr == wr, f"order {k} requires_grad"
    for k, (g, _) in enumerate(got[len(want):], len(want) + 1):
        np.testing.assert_array_equal(g, np.zeros_like(g), err_msg=f"order {k}")
    return got


# ---- finding 1: pow at 0 ------------------------------------------------------------------------------------------
POW_SCALAR = {
    "x**0": lambda lib, x: x ** 0, "pow(0.0)": lambda lib, x: x.pow(0.0), "x**1": lambda lib, x: x ** 1,
    "pow(1.0)": lambda lib, x: x.pow(1.0),
}


@pytest.mark.parametrize("case", list(POW_SCALAR))
def test_pow_scalar_exponent_higher_orders(case):
    for dtype in DTYPES:
        _compare(POW_SCALAR[case], dtype, requires_grad=False)


@pytest.mark.parametrize("e", [1.0, 2.0])
def test_pow_tensor_exponent_higher_orders(e):
    # torch's pow_backward_self recurses into pow: the 2nd derivative of x ** tensor(1.) at 0 is 0 (it was NaN here),
    # and torch's own where trap keeps its NaN at the 3rd (and at x ** tensor(0.)'s 2nd): the same orders here
    for dtype in DTYPES:
        _compare(lambda lib, x: lib.pow(x, lib.tensor(e, dtype=x.dtype)), dtype)


def test_polynomial_derivatives_at_zero():
    """A PINN's polynomial: u_xx at 0 is 6 and u_xxx 24 (were NaN); its x ** 2, x ** 2.5, x ** 3 terms and the
    other points as torch's."""
    f = lambda lib, x: sum(c * x ** k for k, c in enumerate([1.0, 2.0, 3.0, 4.0])) + x ** 2.5  # noqa: E731
    for dtype in DTYPES:
        got = _compare(f, dtype, xs=[0.0, 1.0, 0.25], requires_grad=False)
        np.testing.assert_allclose(got[1][0][:2], [6.0, 30.0 + 3.75])  # u_xx = 6 + 24 x (+ 3.75 x ** 0.5)
        np.testing.assert_array_equal(got[2][0][0], 24.0 + np.inf)  # u_xxx at 0: x ** 2.5's is inf, as torch's
        _compare(lambda lib, x: sum(c * x ** k for k, c in enumerate([1.0, 2.0, 3.0, 4.0])), dtype,
                 xs=[0.0, -1.0, 0.5], requires_grad=False)


# ---- finding 4: ELU family, softsign, softplus at their branch points ---------------------------------------------
F_CASES = {
    "elu": lambda lib, x: lib.nn.functional.elu(x),
    "elu_inplace": lambda lib, x: lib.nn.functional.elu(x * 1, inplace=True),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "celu_alpha2": lambda lib, x: lib.nn.functional.celu(x, 2.0),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "softplus_b2_t2": lambda lib, x: lib.nn.functional.softplus(x, beta=2.0, threshold=2.0),  # (at x = 1)
    "softplus_b3_t1.5": lambda lib, x: lib.nn.functional.softplus(x, beta=3.0, threshold=1.5),  # (at x = 0.5)
    "softplus_t20": lambda lib, x: lib.nn.functional.softplus(x),  # (at x = 20)
}
BRANCH_POINTS = {"softplus_b2_t2": [1.0], "softplus_b3_t1.5": [0.5], "softplus_t20": [20.0]}


@pytest.mark.parametrize("case", list(F_CASES))
def test_activation_higher_orders_at_branch_points(case):
    f, at = F_CASES[case], BRANCH_POINTS.get(case, [0.0, -0.0])
    for dtype in DTYPES:
        got = _compare(f, dtype, xs=XS + at, rtol=1e-5)
        # at the branch point itself torch's 2nd and 3rd derivatives are exact zeros
        for d, _ in got[1:]:
            np.testing.assert_array_equal(d[len(XS):], np.zeros(len(at)))
    # the value and first derivative there stay torch's to the bit, low precision included, under a gradient that is
    # not 1 (the rounding order of softplus's ``grad * z / (z + 1)``)
    for dtype in DTYPES + ["float16", "bfloat16"]:
        res = []
        for lib in (torch, ft):
            x = lib.tensor(at, dtype=getattr(lib, dtype), requires_grad=True)
            y = f(lib, x)
            y.backward(lib.full_like(y, 0.7))
            res.append((_np(y), _np(x.grad)))
        np.testing.assert_array_equal(res[1][0], res[0][0], err_msg=dtype)
        np.testing.assert_array_equal(res[1][1], res[0][1], err_msg=dtype)


def test_second_derivative_at_branch_points_red_team_repro():
    """The red team's repro: torch 0, 0, 0, -0, 0 (was 1, 1.758, 1, -2, 0.21)."""
    out = []
    for lib in (torch, ft):
        F = lib.nn.functional
        x = lib.tensor([0.0], dtype=lib.float64, requires_grad=True)
        row = []
        for f in [F.elu, F.selu, F.celu, F.softsign]:
            d1, = lib.autograd.grad(f(x).sum(), x, create_graph=True)
            row.append(lib.autograd.grad(d1.sum(), x)[0].item())
        y = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        d1, = lib.autograd.grad(F.softplus(y, beta=2.0, threshold=2.0).sum(), y, create_graph=True)
        row.append(lib.autograd.grad(d1.sum(), y)[0].item())
        out.append(row)
    assert out[1] == out[0] == [0.0] * 5
