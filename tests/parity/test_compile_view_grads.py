"""Gradients through views reached by a compiled function (and a checkpointed one) equal torch's: a view argument of
a tensor that requires grad, a leaf view (``arange(8.).reshape(2, 4).requires_grad_()``), the base also read through
the closure, two views of one base, slices over several calls, a backward inside the compiled function. Before, the
compiled node skipped any view slot, so ``x.grad`` / ``b.grad`` silently stayed None. A non-leaf base read through
the base and a view (``f(h, h.view(2, 3))``, a closure's ``h`` beside ``f(h[1:4])``): before, only one of the reads
reached ``x.grad``."""
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
    if name == "nonleaf_base_and_view_args":  # f(h, h.view(2, 3)): both reads reach x through h's graph
        x = L.linspace(-1, 1, 6).requires_grad_()
        h = x * 2
        wrap(lambda a, v: (a * a).sum() + (v * 3).sum())(h, h.view(2, 3)).backward()
        return [x.grad]
    if name == "nonleaf_base_in_closure":  # a slice argument of h, h itself read from the closure
        x = L.linspace(-1, 1, 6).requires_grad_()
        h = x.exp()
        wrap(lambda v: (v * v).sum() + (h * 3).sin().sum())(h[1:4]).backward()
        return [x.grad]
    if name == "nonleaf_two_views":  # two overlapping views of a non-leaf, one an argument, one in the closure
        x = L.linspace(0, 1, 8).requires_grad_()
        h = x * x
        w = h.view(2, 4)[:, 1:3]
        wrap(lambda v: (v.cos() * 2).sum() + (w * v[:4].sum()).sum())(h[2:]).backward()
        return [x.grad]
    if name == "nonleaf_view_outlives":  # the views are read again eagerly after the compiled backward
        x = L.linspace(0.5, 1, 6).requires_grad_()
        h = x.log()
        v = h[::2]
        f = wrap(lambda a, b: (a * b.sum()).sum())
        f(h, v).backward(retain_graph=True)
        (v * 5).sum().backward()
        return [x.grad]
    if name == "leaf_view_of_frozen_base":  # a leaf view of a base needing no grad: its reads only
        base = L.linspace(-1, 1, 6)
        v = base[1:4].detach().requires_grad_()
        wrap(lambda a: (a * a).sum() + (base * 3).sum())(v).backward()
        return [v.grad]
    raise AssertionError(name)


CASES = ["view_arg", "leaf_view", "transposed_leaf_view", "base_in_closure", "two_views", "slices_over_calls",
         "view_of_view_of_nonleaf", "backward_inside", "nonleaf_base_and_view_args", "nonleaf_base_in_closure",
         "nonleaf_two_views", "nonleaf_view_outlives", "leaf_view_of_frozen_base"]


@pytest.mark.parametrize("name", CASES)
def test_compiled_view_gradients_match_torch(name):
    want = _case(torch, name, lambda f: f)
    got = _case(ft, name, ft.compile)
    for g, w in zip(got, want):
        assert g is not None
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,reentrant", [(n, r) for n in ("view_arg", "leaf_view", "base_in_closure",
                                                                "slices_over_calls") for r in (False, True)]
                         # (a non-leaf read from the closure: torch's reentrant backward runs into the caller's
                         # graph and frees it -- "Trying to backward through the graph a second time")
                         + [("nonleaf_base_and_view_args", False), ("nonleaf_base_and_view_args", True),
                            ("nonleaf_base_in_closure", False), ("nonleaf_two_views", False)])
def test_checkpointed_view_gradients_match_torch(name, reentrant):
    want = _case(torch, name, lambda f: (lambda *a: t_ck.checkpoint(f, *a, use_reentrant=reentrant)))
    got = _case(ft, name, lambda f: (lambda *a: ft_ck.checkpoint(f, *a, use_reentrant=reentrant)))
    for g, w in zip(got, want):
        assert g is not None
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)
