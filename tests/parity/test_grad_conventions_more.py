"""Gradients where torch's backward formula differs from JAX's derivative of the forward (found by a red-team run):
a mean loss over targets that are all ignored, norms and distances at zero / at ties, F.normalize of a zero
row, and a max pool whose window holds a NaN. Each against torch on the same inputs."""
import math

import numpy as np
import pytest
import torch

import functorch_lite as ft

nan = float("nan")


def _grads(fn, *arrays):
    """``fn(lib, *tensors)`` under both libraries, summed and backpropagated: (value, grads) per library."""
    out = []
    for lib in (torch, ft):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = fn(lib, *xs)
        y.sum().backward()
        out.append((y.detach().numpy(), [x.grad.numpy() for x in xs]))
    return out


def _check(fn, *arrays, rtol=1e-5, atol=1e-6):
    (ty, tg), (fy, fg) = _grads(fn, *arrays)
    np.testing.assert_allclose(fy, ty, rtol=rtol, atol=atol, equal_nan=True)
    for a, b in zip(fg, tg):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


Z = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([-100, -100])),
    lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([-100, -100])),
    lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([-100, -100]), label_smoothing=0.1),
    lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([-100, -100]), weight=lib.ones(3),
                                                   label_smoothing=0.1),
    lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([1, -100])),
], ids=["ce", "nll", "ce-smoothing", "ce-weight-smoothing", "ce-one-counted"])
def test_mean_loss_over_ignored_targets_has_zero_gradient(fn):
    _check(fn, Z)


def test_cross_entropy_2d_all_ignored():
    def fn(lib, x):
        return lib.nn.functional.cross_entropy(x, lib.full((2, 2), -100))
    _check(fn, np.zeros((2, 3, 2), np.float32))


def test_cdist_matmul_form_at_zero_distance():
    """(The diagonal is the matmul form's rounding, ~1e-4 in float32 here, 0 in torch's: compared loosely.)"""
    x = np.random.default_rng(0).standard_normal((30, 4)).astype(np.float32)
    _check(lambda lib, a: lib.cdist(a, a), x, rtol=1e-4, atol=1e-3)
    _check(lambda lib, a: lib.cdist(a, a), x.astype(np.float64), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("p", [1.0, 0.5, 3.0, math.inf, 2.0])
def test_cdist_direct_form_at_equal_coordinates(p):
    x = np.array([[0.0, 1.0], [2.0, 2.0]], np.float32)
    y = np.array([[0.0, 3.0], [2.0, 2.0]], np.float32)
    _check(lambda lib, a, b: lib.cdist(a, b, p=p), x, y)


@pytest.mark.parametrize("p", [2.0, 3.0, 0.5, 1.0, math.inf])
@pytest.mark.parametrize("dim", [1, 0])
def test_normalize_zero_row(p, dim):
    x = np.array([[0.0, 0.0], [3.0, -4.0]], np.float32)
    _check(lambda lib, a: lib.nn.functional.normalize(a, p=p, dim=dim), x, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("ord", [0.5, -1.0, 3.0, 1.0, 2.0])
def test_vector_norm_at_zero_entries(ord):
    for x in (np.zeros(3, np.float32), np.array([0.0, 2.0, -1.0], np.float32)):
        _check(lambda lib, a: lib.linalg.vector_norm(a, ord=ord), x)


@pytest.mark.parametrize("p", [0.5, 3.0, 1.0])
def test_pdist_and_dist_at_equal_coordinates(p):
    x = np.array([[0.0, 1.0], [0.0, 3.0], [0.0, 1.0]], np.float32)
    _check(lambda lib, a: lib.pdist(a, p=p), x)
    _check(lambda lib, a, b: lib.dist(a, b, p=p), x[0], x[1])


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.nn.functional.max_pool1d(x, 4),
    lambda lib, x: lib.nn.functional.max_pool1d(x, 2),
    lambda lib, x: lib.nn.functional.max_pool1d(x, 3, stride=1, padding=1),
], ids=["one-window", "two-windows", "overlapping"])
def test_max_pool_gives_a_nan_its_gradient(fn):
    _check(fn, np.array([[[1.0, nan, 0.5, 2.0]]], np.float32))


def test_max_pool2d_with_nan_and_inf():
    x = np.array([[[[1.0, nan, 3.0, -1.0], [0.5, 2.0, math.inf, 0.0]]]], np.float32)
    _check(lambda lib, a: lib.nn.MaxPool2d(2)(a), x)
