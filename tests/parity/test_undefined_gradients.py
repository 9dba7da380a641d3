"""Where torch's derivative formula returns an undefined gradient (vector_norm of ord 0; a real slogdet's sign
without its log|det|), its engine gives the input none: ``.grad`` stays None, ``autograd.grad`` calls the input
unused. The facade's nodes answer None there (``OpDef.undefined_grad``), node by node, in the whole-graph backward
program, with create_graph and inside a compiled step; other paths through the same input still count."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

X = [2.0, 0.0, -1.0]
A = [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, -4.0]]


def _grad(m, make, fn):
    x = m.tensor(make, requires_grad=True)
    fn(m, x).backward()
    return None if x.grad is None else x.grad.tolist()


CASES = {
    "vector_norm_ord0": (X, lambda m, x: m.linalg.vector_norm(x, 0)),
    "norm_p0_method": (X, lambda m, x: x.norm(0)),
    "vector_norm_ord0_scaled": (X, lambda m, x: m.linalg.vector_norm(x, 0) * 3),
    "vector_norm_ord0_plus_sum": (X, lambda m, x: m.linalg.vector_norm(x, 0) + x.sum()),
    "vector_norm_ord2": (X, lambda m, x: m.linalg.vector_norm(x, 2)),
    "slogdet_sign": (A, lambda m, x: m.linalg.slogdet(x)[0]),
    "slogdet_logabsdet": (A, lambda m, x: m.linalg.slogdet(x)[1]),
    "slogdet_both": (A, lambda m, x: m.linalg.slogdet(x)[0] * m.linalg.slogdet(x)[1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_as_torch(name):
    make, fn = CASES[name]
    want, got = _grad(torch, make, fn), _grad(ft, make, fn)
    if want is None:
        assert got is None
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("m", [torch, ft], ids=["torch", "ft"])
def test_autograd_grad_calls_the_input_unused(m):
    x = m.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        m.autograd.grad(m.linalg.vector_norm(x, 0), x)
    assert m.autograd.grad(m.linalg.vector_norm(x, 0), x, allow_unused=True) == (None,)
    z = m.autograd.grad(m.linalg.vector_norm(x, 0), x, allow_unused=True, materialize_grads=True)[0]
    assert z.tolist() == [0.0, 0.0, 0.0]
    g = m.autograd.grad(m.linalg.vector_norm(x, 0) * x.sum(), x, create_graph=True)[0]
    assert g.tolist() == [2.0, 2.0, 2.0]


def test_node_call_and_compiled_step():
    x = ft.tensor(X, requires_grad=True)
    assert ft.linalg.vector_norm(x, 0).grad_fn(ft.tensor(1.0)) is None

    @ft.compile
    def step():
        ft.linalg.vector_norm(x, 0).backward()
    step()
    assert x.grad is None
