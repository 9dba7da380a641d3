"""The torch.* forms of the normalizations (``torch.layer_norm``, ``group_norm``, ``batch_norm``, ``rms_norm``):
ATen's signatures (batch_norm's weight and bias before the running statistics, every argument required), the
values, gradients, grad_fn names and running-statistics updates of torch's. Against torch eager."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import close

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6, 5)).astype(np.float32)
W6, B6 = RNG.standard_normal(6).astype(np.float32), RNG.standard_normal(6).astype(np.float32)
W5, B5 = RNG.standard_normal(5).astype(np.float32), RNG.standard_normal(5).astype(np.float32)

CALLS = {
    "layer_norm": lambda L, x, t: L.layer_norm(x, [5], t(W5), t(B5), 1e-3),
    "layer_norm defaults": lambda L, x, t: L.layer_norm(x, (6, 5)),
    "layer_norm cudnn_enable": lambda L, x, t: L.layer_norm(x, [5], None, t(B5), eps=1e-5, cudnn_enable=False),
    "group_norm": lambda L, x, t: L.group_norm(x, 3, t(W6), t(B6), 1e-4, True),
    "group_norm defaults": lambda L, x, t: L.group_norm(x, 2),
    "rms_norm": lambda L, x, t: L.rms_norm(x, [5], t(W5), 1e-6),
    "rms_norm eps None": lambda L, x, t: L.rms_norm(x, (6, 5)),
    "batch_norm train": lambda L, x, t: L.batch_norm(x, t(W6), t(B6), None, None, True, 0.1, 1e-5, False),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_values_grads_and_grad_fn(name):
    def run(L):
        x = L.tensor(X, requires_grad=True)
        y = CALLS[name](L, x, L.tensor)
        (y * L.tensor(np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape)) / 10)).sum().backward()
        return y.detach().numpy().tolist(), x.grad.numpy().tolist(), type(y.grad_fn).__name__
    assert close(run(ft), run(torch), rel=1e-4, abs=1e-5)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_running_statistics(training):
    def run(L):
        rm, rv = L.tensor(B6), L.tensor(np.abs(W6) + 0.5)
        y = L.batch_norm(L.tensor(X), L.tensor(W6), L.tensor(B6), rm, rv, training, 0.3, 1e-3, True)
        return y.numpy().tolist(), rm.numpy().tolist(), rv.numpy().tolist()
    assert close(run(ft), run(torch), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("call", [
    lambda L: L.layer_norm(L.ones(2, 3), 3),
    lambda L: L.layer_norm(L.ones(2, 3), [4]),
    lambda L: L.batch_norm(L.ones(2, 3), L.ones(4), None, None, None, True, 0.1, 1e-5, False),
])
def test_errors(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(type(te.value)) as fe:
        call(ft)
    assert str(fe.value) == str(te.value)


def test_batch_norm_arguments_are_required():
    """(Python's wording of the missing argument, torch's argument parser's differs: the type and the name match.)"""
    for L in (torch, ft):
        with pytest.raises(TypeError, match="batch_norm.*missing 1 required positional argument.*cudnn_enabled"):
            L.batch_norm(L.ones(2, 3), None, None, None, None, True, 0.1, 1e-5)
