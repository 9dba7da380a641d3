"""Gradients through views reached by a compiled function (and a checkpointed one) equal torch's: a view argument of
a tensor that requires grad, a leaf view (``arange(8.).reshape(2, 4).requires_grad_()``), the base also read through
the closure, two views of one base, slices over several calls, a backward inside the compiled function. Before, the
compiled node skipped any view slot, so ``x.grad`` / ``b.grad`` silently stayed None."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.utils import checkpoint as ft_ck
from torch.utils import checkpoint as t_ck


def _case(L, name, wrap):
    if name == "view_arg":
        b = L.arange(6.).requires_grad_()
        wrap(lambda a: (a.sin() * 3).sum())(b.view(2, 3)).backward()
        return [b.grad]
    if name == "leaf_view":
        x = L.arange(8.).reshape(2, 4).requires_grad_()
        wrap(lambda a: (a.sin() * 2).sum())(x).backward()
        return [x.grad]
    if name == "transposed_leaf_view":
        y = L.arange(6.).reshape(3, 2).t().requires_grad_()
        w = L.arange(6.).reshape(2, 3)
        wrap(lambda a: (a.exp() * w).sum())(y).backward()
        return [y.grad]
    if name == "base_in_closure":
        b = L.arange(6.).requires_grad_()
        wrap(lambda a: (a.sin() * 3).sum() + b.cos().sum())(b.view(2, 3)).backward()
        return [b.grad]
    if name == "two_views":
        b = L.linspace(0, 1, 8).requires_grad_()
        tail = b[4:]
        wrap(lambda a: (a * a).sum() + (tail.exp() * a).sum())(b[:4]).backward()
        return [b.grad]
    if name == "slices_over_calls":
        W = L.linspace(0, 1, 12).requires_grad_()
        f = wrap(lambda a: (a * a * a).sum())
        for i in range(3):
            f(W[i * 4:(i + 1) * 4]).backward()
        return [W.grad]
    if name == "view_of_view_of_nonleaf":
        p = L.linspace(-1, 1, 12).requires_grad_()
        b = p * 2
        v = b.view(3, 4)[1:]
        wrap(lambda a: a.tanh().sum())(v).backward()
        return [p.grad]
    if name == "backward_inside":
        b = L.linspace(0, 1, 6).requires_grad_()

        def step(a):
            loss = (a * a).sum()
            loss.backward()
            return loss.detach()
        wrap(step)(b.view(2, 3))
        wrap(step)(b.view(2, 3))
        return [b.grad]
    raise AssertionError(name)


CASES = ["view_arg", "leaf_view", "transposed_leaf_view", "base_in_closure", "two_views", "slices_over_calls",
         "view_of_view_of_nonleaf", "backward_inside"]


@pytest.mark.parametrize("name", CASES)
def test_compiled_view_gradients_match_torch(name):
    want = _case(torch, name, lambda f: f)
    got = _case(ft, name, ft.compile)
    for g, w in zip(got, want):
        assert g is not None
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("reentrant", [False, True])
@pytest.mark.parametrize("name", ["view_arg", "leaf_view", "base_in_closure", "slices_over_calls"])
def test_checkpointed_view_gradients_match_torch(name, reentrant):
    want = _case(torch, name, lambda f: (lambda a: t_ck.checkpoint(f, a, use_reentrant=reentrant)))
    got = _case(ft, name, lambda f: (lambda a: ft_ck.checkpoint(f, a, use_reentrant=reentrant)))
    for g, w in zip(got, want):
        assert g is not None
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)
