"""Division and reduced-precision scalar arithmetic rounded as PyTorch's CPU kernels round them, bit for bit.

XLA rewrites ``A / broadcast(B)`` into ``A * broadcast(1/B)`` (two roundings): before ``ops/_rounding.py``
about a third of ``x / 3.`` came out one ulp from torch's (float16: 1e-3 near 1). torch's ``mul``/``div`` with a
float16/bfloat16 tensor and a Python scalar or 0-d tensor compute in float32 with the scalar rounded to float32
(``*_cpu_reduced_float``); ``add``/``sub`` round the scalar to the tensor's dtype.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(7)
X = RNG.standard_normal((40, 30)).astype(np.float32) * 4
ROW = (RNG.standard_normal((1, 30)) + 3).astype(np.float32)
COL = (RNG.standard_normal((40, 1)) - 3).astype(np.float32)
DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _np(t):
    return t.detach().float().numpy() if t.dtype in (torch.bfloat16, ft.bfloat16) else t.detach().numpy()


def _same(a, b):
    a, b = _np(a), _np(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)  # (exact: not a tolerance)


DIVISORS = {
    "python scalar": lambda L, dt: 3.0,
    "python scalar 0.1": lambda L, dt: 0.1,
    "0-d tensor": lambda L, dt: L.tensor(7.0, dtype=dt),
    "row": lambda L, dt: L.tensor(ROW).to(dt),
    "column": lambda L, dt: L.tensor(COL).to(dt),
    "full_like": lambda L, dt: L.full((40, 30), 3.0, dtype=dt),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("divisor", sorted(DIVISORS))
def test_division_by_a_broadcast_operand_is_rounded_once_as_torchs(dtype, divisor):
    def run(L):
        dt = getattr(L, dtype)
        x, d = L.tensor(X).to(dt), DIVISORS[divisor](L, dt)
        y = x.clone()
        y /= d
        return x / d, y, L.div(x, d, rounding_mode="trunc"), L.true_divide(x, d)
    for a, b in zip(run(ft), run(torch)):
        _same(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_division_inside_compile_is_rounded_as_eagerly(dtype):
    def f(x, row):
        return x / 3.0, x / row, x / ft.full_like(x, 6.0)
    x, row = ft.tensor(X).to(getattr(ft, dtype)), ft.tensor(ROW).to(getattr(ft, dtype))
    tx, trow = torch.tensor(X).to(getattr(torch, dtype)), torch.tensor(ROW).to(getattr(torch, dtype))
    want = (tx / 3.0, tx / trow, tx / 6.0)
    for got in (f(x, row), ft.compile(f)(x, row)):
        for a, b in zip(got, want):
            _same(a, b)


@pytest.mark.parametrize("n", [3, 7, 30, 45])
def test_mean_is_a_sum_divided_once(n):
    """Integer-valued floats: the sums are exact in any order, so only the division can differ."""
    v = RNG.integers(-50, 50, (9, n)).astype(np.float32)
    for dim in (None, 1, (0, 1)):
        _same(ft.tensor(v).mean(dim), torch.tensor(v).mean(dim))
    _same(ft.nn.functional.l1_loss(ft.tensor(v), ft.zeros(9, n)),
          torch.nn.functional.l1_loss(torch.tensor(v), torch.zeros(9, n)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("scalar", [0.1, 1 / 3, 3.3, 1e-3])
def test_reduced_float_mul_and_div_by_a_scalar_compute_in_float32_as_torchs(dtype, scalar):
    def run(L):
        dt = getattr(L, dtype)
        x = L.tensor(X).to(dt)
        y = x.clone()
        y.mul_(scalar)
        outs = [x * scalar, scalar * x, x / scalar, y, x * L.tensor(scalar, dtype=L.float64),
                x / L.tensor(scalar), L.tensor(scalar, dtype=L.float64) * x, x + scalar, x - scalar, scalar - x]
        w = L.tensor(X[::-1].copy()).to(dt)
        xg = x.clone().requires_grad_()
        (xg * scalar * w).sum().backward()
        return outs + [xg.grad]
    for a, b in zip(run(ft), run(torch)):
        _same(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_division_under_vmap_and_grad_is_rounded_as_torchs(dtype):
    """Under vmap an unbatched divisor is broadcast to the batch by vmap itself: still one rounding."""
    d = [1.0, 3.0, 7.0, 9.0]

    def run(L):
        x = L.tensor(X[:5, :4]).to(getattr(L, dtype))
        div = L.tensor(d, dtype=x.dtype)
        return (L.func.vmap(lambda r: r / 3.0)(x), L.func.vmap(lambda r: r / div)(x),
                L.func.grad(lambda r: (r / 3.0 * x).sum())(x))
    for a, b in zip(run(ft), run(torch)):
        _same(a, b)
