"""A multi-output op whose other outputs nobody used: torch runs no backward for them, so the gradient through the
used one is finite where the unused one's formula divides by zero (eigh's / svd's eigenvector terms at a repeated
eigenvalue: 1 / (l_i - l_j)). The facade's pullback multiplied a zero cotangent into them: NaN everywhere. Eager
backward, autograd.grad, create_graph (and its second derivative), and compiled."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

CASES = {
    "eigh values": lambda L, X: L.linalg.eigh(X)[0].pow(2).sum(),
    "eigh values lower": lambda L, X: L.linalg.eigh(X, UPLO="U")[0].sum(),
    "svd values": lambda L, X: L.linalg.svd(X)[1].sum(),
    "svd values (torch.svd)": lambda L, X: L.svd(X)[1].pow(3).sum(),
    "eigh values and vectors, distinct": lambda L, X: (lambda w, v: w.sum() + v[:, 0].abs().sum())(
        *L.linalg.eigh(X + L.diag(L.tensor([0.0, 0.5, 1.5], dtype=X.dtype)))),
}


def _x(L):
    return L.diag(L.tensor([1.0, 1.0, 2.0], dtype=L.float64)).requires_grad_()


def _grads(L, name, mode):
    X = _x(L)
    f = CASES[name]
    if mode == "backward":
        f(L, X * 1).backward()
        return X.grad.numpy()
    if mode == "grad":
        return L.autograd.grad(f(L, X), X)[0].numpy()
    if mode == "create_graph":
        g, = L.autograd.grad(f(L, X), X, create_graph=True)
        return g.detach().numpy()
    L.compile(lambda X: f(L, X))(X).backward() if L is ft else f(L, X).backward()
    return X.grad.numpy()


@pytest.mark.parametrize("mode", ["backward", "grad", "create_graph", "compiled"])
@pytest.mark.parametrize("name", list(CASES))
def test_gradient_through_the_used_output_only(name, mode):
    want, got = _grads(torch, name, mode), _grads(ft, name, mode)
    assert not np.isnan(want).any()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_second_derivative_through_eigenvalues_at_a_repeated_one():
    def run(L):
        X = _x(L)
        g, = L.autograd.grad(L.linalg.eigvalsh(X).pow(3).sum(), X, create_graph=True)
        h, = L.autograd.grad(g.trace(), X)
        return h.numpy()
    np.testing.assert_allclose(run(ft), run(torch), rtol=1e-10, atol=1e-12)
