"""utils.checkpoint: a tensor the checkpointed function returns unchanged (an argument passed through, a
closure tensor) or as a view of an argument, against torch.utils.checkpoint: output values, requires_grad,
the caller's tensors after the call, gradients."""
import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tck

import functorch_lite as ft
from functorch_lite.utils import checkpoint as fck

CK = ((torch, tck.checkpoint), (ft, fck.checkpoint))


def _np(t):
    return None if t is None else t.detach().numpy()


def _same(a, b):
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def _mask_passthrough(lib, ck):
    w = lib.ones(3, requires_grad=True)
    h = w * 2
    mask = lib.tensor([1., 0., 1.])
    out, m2 = ck(lambda h, mask: (h * 3 * mask, mask), h, mask, use_reentrant=False)
    state = (m2 is mask, m2.requires_grad, m2.grad_fn is None, mask.requires_grad, mask.grad_fn is None,
             out.requires_grad)
    (out.sum() + (h * m2).sum()).backward()
    return state, [_np(out), _np(m2), _np(w.grad)]


def _nonleaf_passthrough(lib, ck):
    w = lib.ones(3, requires_grad=True)
    h = w * 2
    hg = h.grad_fn
    s, h2 = ck(lambda h: (h.sin(), h), h, use_reentrant=False)
    state = (h2 is h, h.grad_fn is hg, h2.requires_grad, h.is_leaf, s.grad_fn.name())
    (s.sum() + (h2 * h2).sum()).backward()
    return state, [_np(s), _np(h2), _np(w.grad)]


def _leaf_identity(lib, ck):
    x = lib.ones(3, requires_grad=True)
    y = ck(lambda a: a, x, use_reentrant=False)
    state = (y is x, x.grad_fn is None, x.is_leaf, y.requires_grad)
    y.sum().backward()
    return state, [_np(y), _np(x.grad)]


def _closure_passthrough(lib, ck):
    c = lib.tensor([5., 6., 7.], requires_grad=True)
    k = lib.tensor([1., 2., 3.])
    x = lib.ones(3, requires_grad=True)
    a, b, k2 = ck(lambda a: (a * c * k, c, k), x, use_reentrant=False)
    state = (b is c, k2 is k, c.grad_fn is None, c.is_leaf, k.requires_grad, k2.grad_fn is None)
    (a.sum() + (b * 2).sum()).backward()
    return state, [_np(a), _np(x.grad), _np(c.grad)]


def _twice(lib, ck):
    x = lib.ones(3, requires_grad=True)
    y1, y2 = ck(lambda a: (a * 2, a), x, use_reentrant=False)
    state = (y2 is x, x.grad_fn is None, y1.grad_fn.name())
    (y1.sum() + (y2 * 3).sum()).backward()
    return state, [_np(y1), _np(x.grad)]


def _new_no_grad_output(lib, ck):
    x = lib.ones(3, requires_grad=True)
    m = lib.zeros(3)
    y, m2, m3 = ck(lambda a, m: (a.exp(), m, m + 1), x, m, use_reentrant=False)
    state = (m2 is m, m2.requires_grad, m3.requires_grad, m3.grad_fn is None, m.requires_grad)
    y.sum().backward()
    return state, [_np(y), _np(m3), _np(x.grad)]


@pytest.mark.parametrize("case", [_mask_passthrough, _nonleaf_passthrough, _leaf_identity, _closure_passthrough,
                                  _twice, _new_no_grad_output])
def test_passthrough_matches_torch(case):
    (ts, tv), (fs, fv) = (case(lib, ck) for lib, ck in CK)
    assert fs == ts
    for a, b in zip(fv, tv):
        _same(a, b)


@pytest.mark.parametrize("view", ["select", "view"])
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_view_of_input(view, use_reentrant):
    res = []
    for lib, ck in CK:
        x = lib.tensor(np.arange(6.).reshape(2, 3), requires_grad=True)
        fn = (lambda a: a[0]) if view == "select" else (lambda a: a.view(-1))
        y = ck(fn, x, use_reentrant=use_reentrant)
        g = lib.tensor(np.arange(1., 1. + y.numel()))
        state = (y is x, y.requires_grad, x.grad_fn is None, x.is_leaf)
        (y * g).sum().backward()
        res.append((state, y.grad_fn.name() if not use_reentrant else None, _np(y), _np(x.grad)))
    (ts, tn, ty, tg), (fs, fn_, fy, fg) = res
    assert fs == ts and fn_ == tn
    _same(fy, ty)
    _same(fg, tg)


def test_reentrant_passthrough_gradients_and_caller_untouched():
    """use_reentrant=True: torch returns an alias of a passed-through argument; the values, the gradients and the
    caller's tensors match (the returned object's identity is not compared)."""
    res = []
    for lib, ck in CK:
        w = lib.ones(3, requires_grad=True)
        h = w * 2
        hg = h.grad_fn
        mask = lib.tensor([1., 0., 1.])
        out, m2, h2 = ck(lambda h, mask: (h * 3 * mask, mask, h), h, mask, use_reentrant=True)
        state = (mask.requires_grad, mask.grad_fn is None, h.grad_fn is hg)
        (out.sum() + (h * m2).sum() + (h2 * h2).sum()).backward()
        res.append((state, _np(out), _np(m2), _np(w.grad)))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1:], res[1][1:]):
        _same(b, a)


def test_checkpoint_sequential_identity_segment():
    res = []
    for lib, cks in ((torch, tck.checkpoint_sequential), (ft, fck.checkpoint_sequential)):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.eye(3, dtype=np.float32) * 0.5 + 0.1))
            lin.bias.fill_(0.2)
        seq = lib.nn.Sequential(lib.nn.Identity(), lib.nn.Identity(), lin, lib.nn.Tanh())
        x = lib.tensor(np.arange(6., dtype=np.float32).reshape(2, 3) / 6, requires_grad=True)
        out = cks(seq, 2, x, use_reentrant=False)
        state = (x.grad_fn is None, x.is_leaf)
        out.sum().backward()
        res.append((state, _np(out), _np(x.grad), _np(lin.weight.grad)))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1:], res[1][1:]):
        _same(b, a)


def test_compiled_step_with_passthrough():
    """Inside a compiled training step: the passed-through tensor keeps its graph, gradients as eager."""
    def run(compiled):
        w = ft.tensor([1., 2., 3.], requires_grad=True)
        mask = ft.tensor([1., 0., 1.])

        def step(w, mask):
            h = w * 2
            out, m2 = fck.checkpoint(lambda h, mask: ((h * mask).sin(), mask), h, mask, use_reentrant=False)
            loss = out.sum() + (h * m2).sum()
            loss.backward()
            return loss
        f = ft.compile(step) if compiled else step
        for _ in range(2):
            w.grad = None
            loss = f(w, mask)
        assert not mask.requires_grad and mask.grad_fn is None
        return loss.item(), w.grad.numpy()
    eager, comp = run(False), run(True)
    tw = torch.tensor([1., 2., 3.], requires_grad=True)
    h = tw * 2
    tm = torch.tensor([1., 0., 1.])
    ((h * tm).sin().sum() + (h * tm).sum()).backward()
    np.testing.assert_allclose(eager[1], tw.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(comp[1], eager[1], rtol=1e-6)
    assert abs(comp[0] - eager[0]) < 1e-5
