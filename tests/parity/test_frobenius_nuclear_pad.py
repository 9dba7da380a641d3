"""``torch.frobenius_norm``, ``torch.nuclear_norm`` and ``torch.constant_pad_nd`` (ATen's torch.* forms): values,
gradients (frobenius: zero at zero), result shapes and dtypes, grad_fn names and the argument errors of torch's.
Against torch eager."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import close

X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)

CALLS = {
    "frobenius two dims": lambda L, x: L.frobenius_norm(x, (1, 2)),
    "frobenius keepdim": lambda L, x: L.frobenius_norm(x, [0], True),
    "frobenius all": lambda L, x: L.frobenius_norm(x, ()),
    "frobenius int dim": lambda L, x: L.frobenius_norm(x, 1),
    "nuclear default dims": lambda L, x: L.nuclear_norm(x),
    "nuclear dims keepdim": lambda L, x: L.nuclear_norm(x, (0, 2), keepdim=True),
    "nuclear keepdim overload": lambda L, x: L.nuclear_norm(x[0], True),
    "norm nuc keepdim": lambda L, x: L.norm(x, "nuc", dim=(0, 2), keepdim=True),
    "constant_pad_nd crop and pad": lambda L, x: L.constant_pad_nd(x, [-1, 1, 1, 0], 2.5),
    "constant_pad_nd default value": lambda L, x: L.constant_pad_nd(x, [1, 2]),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_values_grads_and_grad_fn(name):
    def run(L):
        x = L.tensor(X, requires_grad=True)
        y = CALLS[name](L, x)
        g, = L.autograd.grad((y * y).sum(), x)
        return tuple(y.shape), str(y.dtype), type(y.grad_fn).__name__, y.detach().numpy().tolist(), g.numpy().tolist()
    assert close(run(ft), run(torch), rel=1e-5, abs=1e-6)


ERRORS = {
    "frobenius without dim": lambda L: L.frobenius_norm(L.ones(2, 3)),
    "frobenius repeated dim": lambda L: L.frobenius_norm(L.ones(2, 3), (0, 0)),
    "frobenius dim out of range": lambda L: L.frobenius_norm(L.ones(2, 3, 4), (0, 5)),
    "frobenius three dims": lambda L: L.frobenius_norm(L.ones(2, 3, 4), (0, 1, 2)),
    "frobenius integer": lambda L: L.frobenius_norm(L.ones(3, 3, dtype=L.int64), (0, 1)),
    "nuclear of a vector": lambda L: L.nuclear_norm(L.ones(3)),
    "nuclear one dim": lambda L: L.nuclear_norm(L.ones(2, 3), (0,)),
    "constant_pad_nd odd pad": lambda L: L.constant_pad_nd(L.ones(2), [1]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    def run(L):
        try:
            ERRORS[name](L)
        except Exception as e:  # noqa: BLE001  (the error is what is compared)
            return type(e).__name__, str(e)
        return None
    assert run(ft) == run(torch) is not None


def test_frobenius_dtypes_and_zero_gradient():
    def run(L):
        xg = L.zeros(2, 2, requires_grad=True)
        L.frobenius_norm(xg, (0, 1)).backward()
        return (str(L.frobenius_norm(L.ones(3, dtype=L.complex64), (0,)).dtype),
                str(L.frobenius_norm(L.ones(3, 3, dtype=L.bfloat16), (0, 1)).dtype), xg.grad.tolist())
    assert run(ft) == run(torch)
