"""tanh's backward as PyTorch's ``tanh_backward``: ``grad * (1 - y * y)`` in the op math type, over the result
rounded to its dtype. JAX's rule, ``t * (1 - y) * (1 + y)`` in the input's dtype, overflowed for a negative
input under a loss-scaled gradient (float16, 40000 at x = -1: NaN, where torch gives 16784), so GradScaler
skipped the step and halved its scale; bfloat16 used the unrounded result."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import close

X = [-88.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0]


def _grad(T, dt, up, module=False):
    h = T.tensor(X, dtype=getattr(T, dt), requires_grad=True)
    y = T.nn.Tanh()(h) if module else T.tanh(h)
    y.backward(T.full((len(X),), up, dtype=getattr(T, dt)))
    return h.grad.float().tolist()


@pytest.mark.parametrize("dt,up", [("float16", 1.0), ("float16", 20000.0), ("float16", 40000.0),
                                   ("bfloat16", 1.0), ("bfloat16", 40000.0), ("bfloat16", 2e38),
                                   ("float32", 2e38), ("float32", 1.0), ("float64", 1e300)])
def test_tanh_grad(dt, up):
    rel = 0 if dt in ("float16", "bfloat16") else 2e-5  # (float32: tanh(3) differs by an ulp, 1 - y*y by 1e-5)
    assert close(_grad(ft, dt, up), _grad(torch, dt, up), rel=rel)
    assert close(_grad(ft, dt, up, module=True), _grad(torch, dt, up, module=True), rel=rel)


def test_fp16_autocast_step_with_grad_scaler():
    """The red-team's end-to-end case: a float16 Linear -> tanh -> Linear under a GradScaler at 32768 with a
    saturated pre-activation: torch takes the step and keeps the scale; so does the facade (it skipped it)."""
    res = {}
    for T in (torch, ft):
        l1, l2 = T.nn.Linear(1, 1, bias=False), T.nn.Linear(1, 1, bias=False)
        with T.no_grad():
            l1.weight.fill_(-88.0)
            l2.weight.fill_(1.0)
        opt = T.optim.SGD(list(l1.parameters()) + list(l2.parameters()), lr=0.1)
        scaler = T.amp.GradScaler("cpu", init_scale=32768.0)
        x = T.ones(4, 1)
        with T.autocast("cpu", dtype=T.float16):
            loss = l2(T.tanh(l1(x))).float().sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        res[T] = (l1.weight.grad.tolist(), l2.weight.item(), scaler.get_scale())
    assert res[ft] == res[torch]
    assert not np.isnan(res[ft][0][0][0])


def test_second_order_float64():
    got = []
    for T in (ft, torch):
        x = T.tensor([0.3, -0.7, 2.0], dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(T.tanh(x).sum(), x, create_graph=True)
        h, = T.autograd.grad(g.sum(), x)
        got.append(g.tolist() + h.tolist())
    assert close(got[0], got[1], rel=1e-14)
