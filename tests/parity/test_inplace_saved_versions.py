"""What an in-place op saved for backward, against torch: the value of ``self`` it read before writing is its own
(torch saves a copy), so a later write to the tensor is no error; what it saved of its output is the tensor after
the write, so a later write is torch's "modified by an inplace operation" error."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

CASES = {
    # mul_ saves the original self for w's gradient; exp_ then writes y again
    "mul_then_exp_": lambda m, x, w: _chain(x * 1, ("mul_", w), ("exp_",)),
    "mul_then_add_": lambda m, x, w: _chain(x * 1, ("mul_", w), ("add_", 1.0)),
    "div_then_sin_": lambda m, x, w: _chain(x * 1, ("div_", w), ("sin_",)),
    "mul_mul_sin_": lambda m, x, w: _chain(x * 1, ("mul_", w), ("mul_", w), ("sin_",)),
    "lerp_then_exp_": lambda m, x, w: _chain(x * 1, ("lerp_", w, 0.25), ("exp_",)),
    # exp_ saves its result: a later write to it is torch's error
    "exp_then_add_": lambda m, x, w: _chain(x * 1, ("exp_",), ("add_", 1.0)),
    "sigmoid_then_mul_": lambda m, x, w: _chain(x * 1, ("sigmoid_",), ("mul_", 2.0)),
    "saved_input_then_write": lambda m, x, w: _saved_input(x),
}


def _chain(y, *steps):
    for name, *args in steps:
        getattr(y, name)(*args)
    return y


def _saved_input(x):
    y = x * 1
    z = y * y
    y.add_(1)
    return z


def _run(lib, name):
    x = lib.tensor([0.5, -1.25, 2.0], requires_grad=True)
    w = lib.tensor([1.5, 2.0, -0.75], requires_grad=True)
    try:
        CASES[name](lib, x, w).sum().backward()
    except RuntimeError as e:
        return str(e)
    return x.grad.numpy(), (None if w.grad is None else w.grad.numpy())


@pytest.mark.parametrize("name", list(CASES))
def test_saved_versions_after_inplace_ops_as_torch(name):
    want, got = _run(torch, name), _run(ft, name)
    if isinstance(want, str):
        assert got == want
    else:
        assert not isinstance(got, str), got
        for a, b in zip(got, want):
            if b is None:
                assert a is None
            else:
                np.testing.assert_allclose(a, b, rtol=1e-6)
