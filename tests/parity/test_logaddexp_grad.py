"""logaddexp / logaddexp2 gradients at infinities, against torch: PyTorch's formula ``grad / (1 + exp(other -
self))``. JAX's rule gave the other operand of ``logaddexp(inf, 3.)`` a gradient of exp(3) = 20.09 (torch: 0) and
1 where both are the same infinity (torch: nan)."""
import math

import pytest
import torch

import functorch_lite as ft
from _parity import close

INF = math.inf
POINTS = [(INF, INF), (-INF, 1.0), (-INF, -INF), (2.0, -1.5), (1e30, 1.0), (INF, 3.0), (3.0, INF), (-200.0, 5.0)]


def _grads(T, name, dtype, a, b, second):
    x = T.tensor([a], requires_grad=True, dtype=dtype)
    y = T.tensor([b], requires_grad=True, dtype=dtype)
    out = getattr(T, name)(x, y)
    gx, gy = T.autograd.grad(out.sum(), (x, y), create_graph=second)
    res = [out.tolist(), gx.tolist(), gy.tolist()]
    if second:
        hx, = T.autograd.grad(gx.sum(), x)
        res.append(hx.tolist())
    return res


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a,b", POINTS)
def test_first_order(name, dtype, a, b):
    assert close(_grads(ft, name, getattr(ft, dtype), a, b, False),
                 _grads(torch, name, getattr(torch, dtype), a, b, False))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("a,b", [(2.0, -1.5), (0.3, 0.3), (-4.0, 7.0)])
def test_second_order_finite(name, a, b):
    got = _grads(ft, name, ft.float64, a, b, True)
    want = _grads(torch, name, torch.float64, a, b, True)
    assert close(got, want, rel=1e-12)
