"""Parity of first and second derivatives at corner points with torch: ``logcumsumexp`` over -inf / +inf
(``grad_overrides.cumlogsumexp``: torch's ``logcumsumexp_backward``, NaN only where torch has it) and the
vector / Frobenius norms at (and near) zero (``grad_overrides.vnorm``: torch's ``norm_backward`` on x, whose
second derivative is NaN at 0 for p = 2)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import functorch_lite as ft

INF, NAN = math.inf, math.nan


def _derivs(lib, fn, xv, dtype, square):
    """(value, first derivative, second derivative) of ``fn`` at ``xv``, as numpy; the loss ``sum(y * w)``
    (or ``sum(y ** 2)`` where finite: a cotangent that depends on x), then ``sum(g * w)`` again."""
    dt = getattr(lib, dtype)
    x = lib.tensor(xv, dtype=dt, requires_grad=True)
    y = fn(lib, x)
    w = lib.arange(1, y.numel() + 1, dtype=dt).reshape(y.shape)
    loss = (y * y).sum() if square else (y * w).sum()
    g, = lib.autograd.grad(loss, x, create_graph=True)
    wx = lib.arange(1, x.numel() + 1, dtype=dt).reshape(x.shape)
    g2, = lib.autograd.grad((g * wx).sum(), x, allow_unused=True)
    g2 = lib.zeros_like(x) if g2 is None else g2 + 0  # (torch: a zero tensor for p = 1 / inf)
    return [t.detach().numpy() for t in (y, g, g2)]


def _check(fn, xv, dtype="float64", square=False):
    want = _derivs(torch, fn, xv, dtype, square)
    got = _derivs(ft, fn, xv, dtype, square)
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == "float32" else dict(rtol=1e-9, atol=1e-10)
    for k, (w, g) in enumerate(zip(want, got)):
        assert g.dtype == w.dtype and g.shape == w.shape, k
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"NaN pattern of order {k}")
        np.testing.assert_allclose(g, w, equal_nan=True, err_msg=f"order {k}", **tol)


LCSE = {
    "leading_ninf": [-INF, -INF, 1.0, 2.0],
    "all_ninf": [-INF, -INF, -INF],
    "one_ninf": [-INF],
    "one": [0.5],
    "inner_ninf": [1.0, -INF, -INF, 2.0, -INF, 0.5],
    "long_leading_ninf": [-INF] * 5 + [0.1, -1.0, 2.0, -INF, 3.0, 0.0],
    "pinf_inside": [1.0, INF, 2.0],
    "pinf_first": [INF, 1.0, 2.0],
    "ninf_then_pinf": [-INF, -INF, INF, 1.0],
    "nan": [1.0, NAN, 2.0],
    "wide_range": [-200.0, 0.0, 200.0, -50.0],
    "regular": [0.5, -1.0, 2.0, 3.0, -0.25],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(LCSE))
def test_logcumsumexp_first_and_second_derivative_match_torch(case, dtype):
    _check(lambda m, x: m.logcumsumexp(x, 0), LCSE[case], dtype)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logcumsumexp_2d_with_ninf_rows_matches_torch(dim, dtype):
    xv = [[-INF, -INF, 1.0, 0.0], [-INF, -INF, -INF, -INF], [0.0, -INF, 3.0, INF], [2.0, 1.0, -1.0, 0.5]]
    _check(lambda m, x: m.logcumsumexp(x, dim), xv, dtype)


def test_logcumsumexp_double_backward_with_an_x_dependent_cotangent():
    rng = np.random.default_rng(0)
    _check(lambda m, x: x.logcumsumexp(-1), rng.standard_normal((3, 7)).tolist(), square=True)
    _check(lambda m, x: m.logcumsumexp(x, 0), [-INF, -INF, 1.0, 2.0, -0.5], square=True)


def test_logcumsumexp_forward_ad_matches_torch_off_the_corners():
    import torch.autograd.forward_ad as tfw
    import functorch_lite.autograd.forward_ad as ffw
    got = []
    for lib, fw in ((torch, tfw), (ft, ffw)):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([[0.3, -1.0, 2.0, 0.5], [1.0, -INF, 2.0, 0.0]], dtype=lib.float64),
                             lib.tensor([[1.0, 2.0, -1.0, 0.5], [1.0, 2.0, 3.0, 4.0]], dtype=lib.float64))
            got.append(fw.unpack_dual(lib.logcumsumexp(x, 1)).tangent.numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-7)


NORMS = {
    "vector_norm": lambda m, x: m.linalg.vector_norm(x),
    "method_norm": lambda m, x: x.norm(),
    "torch_norm": lambda m, x: m.norm(x),
    "linalg_norm": lambda m, x: m.linalg.norm(x),
    "vector_norm_dim": lambda m, x: m.linalg.vector_norm(x.reshape(2, 2), dim=1),
    "vector_norm_keepdim": lambda m, x: m.linalg.vector_norm(x.reshape(2, 2), dim=0, keepdim=True),
    "p1": lambda m, x: m.linalg.vector_norm(x, 1),
    "pinf": lambda m, x: m.linalg.vector_norm(x, INF),
    "p3": lambda m, x: m.linalg.vector_norm(x, 3),
    "p1_5": lambda m, x: m.linalg.vector_norm(x.reshape(2, 2), 1.5, dim=1),
    "p2_5": lambda m, x: m.linalg.vector_norm(x, 2.5),
    "p0_5": lambda m, x: m.linalg.vector_norm(x.reshape(2, 2), 0.5, dim=1),
    "p_neg1": lambda m, x: m.linalg.vector_norm(x, -1),
    "matrix_fro": lambda m, x: m.linalg.matrix_norm(x.reshape(2, 2), "fro"),
    "norm_fro": lambda m, x: m.norm(x.reshape(2, 2), "fro"),
    "norm_fro_dim": lambda m, x: m.norm(x.reshape(2, 2), "fro", dim=(0, 1)),
    "frobenius_norm": lambda m, x: m.frobenius_norm(x.reshape(2, 2), (0, 1)),
    "dist": lambda m, x: m.dist(x, m.tensor([0.0, 0.0, 1.0, 0.0], dtype=x.dtype)),
    "dist_p3": lambda m, x: m.dist(x, m.tensor([0.0, 0.0, 1.0, 0.0], dtype=x.dtype), 3),
}
POINTS = {"zeros": [0.0, 0.0, 0.0, 0.0], "some_zeros": [0.0, 0.0, 1.0, -2.0], "regular": [1.0, -2.0, 0.5, 3.0],
          "nan": [NAN, 1.0, 0.0, 2.0]}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("point", sorted(POINTS))
@pytest.mark.parametrize("name", sorted(NORMS))
def test_norm_first_and_second_derivative_match_torch(name, point, dtype):
    _check(NORMS[name], POINTS[point], dtype)


def test_norm_double_backward_with_an_x_dependent_cotangent():
    _check(lambda m, x: m.linalg.vector_norm(x.reshape(2, 2), dim=1), [0.0, 0.0, 1.0, -2.0], square=True)
    _check(lambda m, x: m.linalg.vector_norm(x, 3), [0.0, 0.5, 1.0, -2.0], square=True)
