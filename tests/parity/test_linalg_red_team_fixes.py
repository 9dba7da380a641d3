"""Parity with torch 2.13 for linalg and special-function findings of a red-team (zeta and lgamma below): matrix_norm's ord +-1 / +-inf gradient is 0 at a zero
element (torch's abs gradient, sign(0); the facade's was 1) and its max over an empty matrix is 0 (it raised);
slogdet / logdet of a half matrix give torch's "Low precision dtypes" error (the facade gave lu_cpu's kernel
error); cumulative_trapezoid of an empty input is empty (it raised)."""
import math

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("ord", [1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("m", [[[1.0, 0.0], [0.0, -2.0]], [[1.0, 2.0], [3.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]])
def test_matrix_norm_gradient_at_zero_elements(ord, m):
    def run(L):
        X = L.tensor(m, requires_grad=True)
        return L.autograd.grad(L.linalg.matrix_norm(X, ord), X)[0].numpy()
    np.testing.assert_array_equal(run(ft), run(torch))


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3), (2, 0, 0)])
@pytest.mark.parametrize("ord", [1, math.inf])
def test_matrix_norm_of_an_empty_matrix(shape, ord):
    got, want = ft.linalg.matrix_norm(ft.ones(*shape), ord), torch.linalg.matrix_norm(torch.ones(*shape), ord)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("fn", ["linalg.slogdet", "slogdet", "logdet", "det", "linalg.det"])
@pytest.mark.parametrize("dt", ["half", "bfloat16"])
def test_half_determinants_give_torchs_error(fn, dt):
    def run(L):
        f = L
        for part in fn.split("."):
            f = getattr(f, part)
        return _err(lambda: f(L.eye(2).to(getattr(L, dt))))
    assert run(ft) == run(torch) is not None


@pytest.mark.parametrize("shape,dim", [((0,), -1), ((2, 0), -1), ((0, 3), 0), ((0, 3), -1)])
def test_cumulative_trapezoid_of_an_empty_input(shape, dim):
    got, want = ft.cumulative_trapezoid(ft.ones(*shape), dim=dim), torch.cumulative_trapezoid(torch.ones(*shape),
                                                                                                dim=dim)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype == ft.float32


ZX = [float("nan"), -math.inf, -10.0, -2.5, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0, 50.0, 1e3, 1e4, math.inf]
ZQ = [float("nan"), -3.0, -2.5, -1.0, 0.0, 0.5, 1.0, 2.0, 3.5, 10.0, math.inf]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_zeta_domain_and_large_x(dt):
    """special.zeta as torch's (cephes'): x < 1 NaN, x == 1 and a non-positive integer q poles (a NaN x too), and a
    large x its first term (JAX's series gave NaN: zeta(1e4, 1) is 1). (Not compared: x of 1e30 or inf with q > 1,
    where torch's series overflows to NaN and the facade gives the sum's value, 0; at x = inf the facade gives
    torch's NaN.)"""
    def run(L):
        X = L.tensor([[x] * len(ZQ) for x in ZX], dtype=getattr(L, dt))
        Q = L.tensor([ZQ] * len(ZX), dtype=getattr(L, dt))
        return L.special.zeta(X, Q).numpy()
    np.testing.assert_allclose(run(ft), run(torch), rtol=2e-6 if dt == "float32" else 1e-12, equal_nan=True)
    assert ft.special.zeta(ft.tensor([1e30]), ft.tensor([1.0])).item() == 1.0


def test_float32_lgamma_is_accurate_to_float32():
    """(JAX's float32 gammaln was 1e-3 off near 1 and 2: lgamma(1.) was 4.8e-7, a Poisson NLL's log k! term; now
    within an ulp of torch's)"""
    xs = [1.0, 2.0, 0.999, 0.99, 1.99, 1.001, 2.5, 0.5, 1e-3, 10.0, 100.0, -0.5, -2.5, 0.0, math.inf, -1.0]
    np.testing.assert_allclose(ft.lgamma(ft.tensor(xs)).numpy(), torch.lgamma(torch.tensor(xs)).numpy(), rtol=2e-7,
                               atol=0)
    np.testing.assert_array_equal(ft.special.gammaln(ft.tensor([1, 2, 3])).numpy(),
                                  torch.special.gammaln(torch.tensor([1, 2, 3])).numpy())


@pytest.mark.parametrize("dims", [1, ([1], [0]), -1])
@pytest.mark.parametrize("other", [(3, 2, "int64"), (3, 2, "float64"), (4, 2, "int64")])
def test_tensordot_of_two_dtypes(other, dims):
    def run(L):
        return _err(lambda: L.tensordot(L.ones(2, 3), L.ones(*other[:2], dtype=getattr(L, other[2])), dims=dims))
    assert run(ft) == run(torch) and run(ft)[0] == "RuntimeError"
