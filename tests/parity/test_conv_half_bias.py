"""Half-precision convolutions with a bias, against torch: accumulated and biased in float32, rounded once (the
facade rounded the convolution, then the sum with the bias: 30 of 288 bfloat16 outputs of a 3x3 conv2d differed,
and an autocast conv net's loss and gradients moved)."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
W = (RNG.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)


def _run(T, dt, case):
    F = T.nn.functional
    x, w, b = (T.tensor(a).to(getattr(T, dt)).requires_grad_() for a in (X, W, B))
    if case == "conv2d":
        y = F.conv2d(x, w, b, padding=1)
    elif case == "conv2d_stride2":
        y = F.conv2d(x, w, b, stride=2)
    elif case == "conv1d":
        y = F.conv1d(x[:, :, 0], w[:, :, 0], b)
    else:
        y = F.conv_transpose2d(x, w.permute(1, 0, 2, 3)[:, :3].contiguous(), b[:3], stride=2)
    y.float().pow(2).sum().backward()
    return y.float().detach().numpy(), x.grad.float().numpy(), w.grad.float().numpy(), b.grad.float().numpy()


@pytest.mark.parametrize("case", ["conv2d", "conv2d_stride2", "conv1d", "conv_transpose2d"])
def test_bfloat16_conv_with_bias_bit_exact(case):
    got, want = _run(ft, "bfloat16", case), _run(torch, "bfloat16", case)
    np.testing.assert_array_equal(got[0], want[0])
    for a, b in zip(got[1:], want[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("case", ["conv2d", "conv2d_stride2", "conv1d"])
def test_float16_conv_with_bias_forward_bit_exact(case):
    np.testing.assert_array_equal(_run(ft, "float16", case)[0], _run(torch, "float16", case)[0])


def test_autocast_conv_bias_bit_exact():
    outs = []
    for T in (ft, torch):
        x, w, b = T.tensor(X), T.tensor(W), T.tensor(B)
        with T.autocast("cpu", dtype=T.bfloat16):
            y = T.nn.functional.conv2d(x, w, b)
        outs.append(y.float().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
