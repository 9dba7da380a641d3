"""Intermediates a compiled function keeps, against real torch (eager; torch.compile gives the same values):

- ``h.retain_grad()`` inside: ``h.grad`` after the backward outside (it was None, silently). torch.compile breaks
  the graph there; so does ours (a warning, the call eager);
- an intermediate stored in a global dict / list (``store['h'] = h``): from the second call on, the walk found the
  previous call's ``h`` (its graph freed by that call's backward) and the node took it as an input it never
  read, so every later ``loss.backward()`` raised "backward through the graph a second time";
- a parameter the compiled forward reaches but never uses, or reads only detached (``b.detach()``), gets no
  gradient (``.grad`` None, not zeros: AdamW's weight decay then moved it);
- an in-place write to a non-leaf input that requires grad (``h.mul_(2)``, h = W * 3) raised "a leaf Variable
  ... in-place" at backward: the call now runs eagerly (a graph break), with torch's values and history;
- ``enable_grad()`` inside a call made under ``no_grad()``: the result required grad but its backward raised
  "backward through the graph a second time"; now torch's gradients.
"""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _eager(f):
    return f


def _np(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=np.float64)


def _retain_case(L, wrap, returned):
    W = L.nn.Parameter(L.tensor([[1., 2.], [3., 4.]]))
    store = {}

    def f(x):
        h = x @ W
        h.retain_grad()
        store["h"] = h
        loss = (h ** 2).sum()
        return (loss, h) if returned else loss
    f = wrap(f)
    out = []
    for i in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f(L.tensor([[1., 1.]]) * (i + 1))
        loss, h = r if returned else (r, store["h"])
        loss.backward()
        out.append((_np(h.grad), _np(W.grad), h.requires_grad, h.is_leaf))
        W.grad = None
    return out


@pytest.mark.parametrize("returned", [False, True])
def test_retain_grad_inside(returned):
    ref = _retain_case(torch, _eager, returned)
    got = _retain_case(ft, ft.compile, returned)
    for r, g in zip(ref, got):
        assert g[2:] == r[2:]
        np.testing.assert_allclose(g[0], r[0])
        np.testing.assert_allclose(g[1], r[1])


def test_retain_grad_inside_is_a_graph_break():
    W = ft.nn.Parameter(ft.ones(2, 2))

    def f(x):
        h = x @ W
        h.retain_grad()
        return h.sum()
    with pytest.warns(UserWarning, match=r"graph break in f: Tensor.retain_grad\(\) on an intermediate"):
        ft.compile(f)(ft.ones(1, 2))
    with pytest.raises(Exception, match=r"retain_grad"):
        ft.compile(f, fullgraph=True)(ft.ones(1, 2))


def _store_case(L, wrap):
    W = L.nn.Parameter(L.tensor([[1., 2.], [3., 4.]]))
    unused = L.nn.Parameter(L.tensor([5.]))
    store, acts = {}, []

    def f(x):
        h = x @ W
        store["h"] = h
        acts.append(h)
        if False:
            return unused
        return (h ** 2).sum()
    f = wrap(f)
    out = []
    for i in range(3):
        loss = f(L.tensor([[1., 1.]]) * (i + 1))
        loss.backward()
        h = store["h"]
        out.append((_np(h), h.requires_grad, acts[-1] is h, len(acts), _np(W.grad), _np(unused.grad)))
        W.grad = None
    return out


def test_an_intermediate_kept_in_a_global_container():
    ref = _store_case(torch, _eager)
    got = _store_case(ft, ft.compile)
    for r, g in zip(ref, got):
        assert g[1:4] == r[1:4]
        np.testing.assert_allclose(g[0], r[0])
        np.testing.assert_allclose(g[4], r[4])
        assert g[5] is None and r[5] is None


def test_a_reached_parameter_the_forward_never_uses_gets_no_grad():
    def run(L, wrap):
        a = L.nn.Parameter(L.tensor([1., 2.]))
        b = L.nn.Parameter(L.tensor([3., 4.]))
        use_b = [False]

        def f(x):
            return (x * a).sum() + (b.sum() if use_b[0] else 0)
        f = wrap(f)
        f(L.tensor([1., 1.])).backward()
        return _np(a.grad), b.grad
    (ra, rb), (ga, gb) = run(torch, _eager), run(ft, ft.compile)
    np.testing.assert_allclose(ga, ra)
    assert rb is None and gb is None


def _inplace_nonleaf_case(L, wrap):
    W = L.nn.Parameter(L.tensor([1., 2.]))

    def f(h):
        h.mul_(2)
        return (h * W).sum()
    f = wrap(f)
    out = []
    for _ in range(2):
        h = W * 3
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss = f(h)
        loss.backward()
        out.append((loss.item(), _np(W.grad), _np(h), h._version, type(h.grad_fn).__name__ if L is torch else
                    h.grad_fn.name()))
        W.grad = None
    return out


def test_an_in_place_write_to_a_non_leaf_input():
    ref = _inplace_nonleaf_case(torch, _eager)
    got = _inplace_nonleaf_case(ft, ft.compile)
    for r, g in zip(ref, got):
        assert g[0] == pytest.approx(r[0]) and g[3:] == r[3:]
        np.testing.assert_allclose(g[1], r[1])
        np.testing.assert_allclose(g[2], r[2])
    W = ft.nn.Parameter(ft.tensor([1., 2.]))
    with pytest.warns(UserWarning, match="graph break in f: an in-place write, with grad enabled, to a tensor that "
                      "has a graph behind it"):
        def f(h):
            h.mul_(2)
            return (h * W).sum()
        ft.compile(f)(W * 3)


def _enable_grad_case(L, wrap):
    W = L.nn.Parameter(L.tensor([1., 2.]))

    def g(x):
        with L.enable_grad():
            y = (x * W).sum()
        return y, (x * W).sum()
    g = wrap(g)
    out = []
    for i in range(3):
        with L.no_grad():
            y, z = g(L.tensor([1., 1.]) * (i + 1))
        rec = [y.requires_grad, y.grad_fn is not None, z.requires_grad]
        y.backward()
        rec.append(_np(W.grad))
        W.grad = None
        out.append(rec)
    return out


def test_enable_grad_inside_a_call_made_under_no_grad():
    ref = _enable_grad_case(torch, _eager)
    got = _enable_grad_case(ft, ft.compile)
    for r, g in zip(ref, got):
        assert g[:3] == r[:3]
        np.testing.assert_allclose(g[3], r[3])


def _detached_case(L, wrap):
    w = L.nn.Parameter(L.tensor([1., 2.]))
    b = L.nn.Parameter(L.tensor([3., 4.]))
    f = wrap(lambda x: (x * w).sum() + b.detach().sum())
    opt = L.optim.AdamW([w, b], lr=0.1, weight_decay=0.1)
    out = []
    for _ in range(2):
        opt.zero_grad()
        f(L.ones(2)).backward()
        out.append((_np(w.grad), b.grad))
        opt.step()
    return out + [_np(w), _np(b)]


def test_a_parameter_read_only_detached_gets_no_grad():
    ref = _detached_case(torch, _eager)
    got = _detached_case(ft, ft.compile)
    for r, g in zip(ref[:2], got[:2]):
        np.testing.assert_allclose(g[0], r[0])
        assert r[1] is None and g[1] is None
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-6)
    np.testing.assert_allclose(got[3], ref[3], rtol=1e-6)  # (AdamW's decay moved b when its .grad was zeros)
