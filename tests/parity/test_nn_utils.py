"""Parity of ``nn.utils`` (clip_grad, convert_parameters) against real PyTorch 2.13 on the same
gradients: the total norm (value, dtype), the clipped gradients, None grads, a single tensor, empty
inputs, errors and warnings; and that clip_grad_norm_ is one cached jitted call (no per-op dispatch)."""
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite._stats import COUNTS
from functorch_lite.nn.utils import clip_grad as CG

RNG = np.random.default_rng(5)
SHAPES = [(3, 4), (5,), (2, 2, 2), ()]


def make(mod, grads, dtypes=None, none=()):
    """Parameters (zeros) with the given gradients; indices in ``none`` have no grad."""
    ps = []
    for i, g in enumerate(grads):
        dt = getattr(mod, (dtypes or ["float32"] * len(grads))[i])
        p = mod.nn.Parameter(mod.zeros(g.shape, dtype=dt))
        if i not in none:
            p.grad = mod.tensor(g).to(dt)
        ps.append(p)
    return ps


def grads(scale=1.0):
    return [RNG.standard_normal(s) * scale for s in SHAPES]


def assert_same(fp, tp, tol=1e-6):
    for f, t in zip(fp, tp):
        if t.grad is None:
            assert f.grad is None
            continue
        assert str(f.grad.dtype) == str(t.grad.dtype)
        np.testing.assert_allclose(f.grad.double().numpy(), t.grad.double().numpy(), rtol=tol, atol=tol)


def assert_norm(fn, tn, tol=1e-6):
    assert str(fn.dtype) == str(tn.dtype) and tuple(fn.shape) == tuple(tn.shape) == ()
    np.testing.assert_allclose(fn.double().item(), tn.double().item(), rtol=tol, atol=tol)


@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), 3.5, "inf", 0.0, -float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    gs = grads(3.0)
    tp, fp = make(torch, gs), make(ft, gs)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=norm_type)
    fn = ft.nn.utils.clip_grad_norm_(fp, max_norm, norm_type=norm_type)
    assert_norm(fn, tn, 1e-5)
    assert_same(fp, tp, 1e-5)


def test_clip_grad_norm_none_grads_single_tensor_and_generator():
    gs = grads(2.0)
    tp, fp = make(torch, gs, none=(1, 3)), make(ft, gs, none=(1, 3))
    assert_norm(ft.nn.utils.clip_grad_norm_(iter(fp), 1.0), torch.nn.utils.clip_grad_norm_(iter(tp), 1.0))
    assert_same(fp, tp)
    assert fp[1].grad is None and fp[3].grad is None
    tp, fp = make(torch, gs[:1]), make(ft, gs[:1])
    assert_norm(ft.nn.utils.clip_grad_norm_(fp[0], 0.1, norm_type=1), torch.nn.utils.clip_grad_norm_(tp[0], 0.1,
                                                                                                    norm_type=1))
    assert_same(fp, tp)


def test_clip_grad_norm_empty():
    for args in ([],):
        tn, fn = torch.nn.utils.clip_grad_norm_(args, 1.0), ft.nn.utils.clip_grad_norm_(args, 1.0)
        assert_norm(fn, tn)
    tp, fp = make(torch, grads(), none=(0, 1, 2, 3)), make(ft, grads(), none=(0, 1, 2, 3))
    assert_norm(ft.nn.utils.clip_grad_norm_(fp, 1.0), torch.nn.utils.clip_grad_norm_(tp, 1.0))
    msgs = []
    for mod in (torch, ft):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            mod.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        msgs.append([(x.category, str(x.message)) for x in w])
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1


def test_error_if_nonfinite():
    for bad in (np.inf, np.nan):
        gs = grads()
        gs[1][2] = bad
        tp, fp = make(torch, gs), make(ft, gs)
        errs = []
        for mod, ps in ((torch, tp), (ft, fp)):
            with pytest.raises(RuntimeError) as ei:
                mod.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
            errs.append(str(ei.value))
        assert errs[0] == errs[1]
        assert_same(fp, tp)  # nothing was clipped
        with pytest.raises(RuntimeError, match=re.escape("The total norm of order 2.0 for gradients from")):
            ft.nn.utils.clip_grad_norm_(fp, 1.0, error_if_nonfinite=True)
        # without the flag, the non-finite norm is returned and the grads scaled by it, as PyTorch
        tn = torch.nn.utils.clip_grad_norm_(tp, 1.0)
        fn = ft.nn.utils.clip_grad_norm_(fp, 1.0)
        np.testing.assert_equal(fn.item(), tn.item())
        assert_same(fp, tp)


def test_mixed_and_half_dtypes():
    gs = grads()
    dts = ["float32", "float64", "float16", "bfloat16"]
    tp, fp = make(torch, gs, dts), make(ft, gs, dts)
    assert_norm(ft.nn.utils.clip_grad_norm_(fp, 0.5), torch.nn.utils.clip_grad_norm_(tp, 0.5), 1e-2)
    assert_same(fp, tp, 1e-2)
    tp, fp = make(torch, gs[:1], ["float16"]), make(ft, gs[:1], ["float16"])
    assert_norm(ft.nn.utils.clip_grad_norm_(fp, 0.5), torch.nn.utils.clip_grad_norm_(tp, 0.5), 1e-2)
    assert_same(fp, tp, 1e-2)


def test_get_total_norm_and_clip_grads_with_norm():
    gs = grads(2.0)
    for norm_type in (2.0, float("inf")):
        tn = torch.nn.utils.get_total_norm([torch.tensor(g) for g in gs], norm_type)
        fn = ft.nn.utils.get_total_norm([ft.tensor(g) for g in gs], norm_type)
        assert_norm(fn, tn)
        assert_norm(ft.nn.utils.get_total_norm(ft.tensor(gs[0])), torch.nn.utils.get_total_norm(torch.tensor(gs[0])))
        tp, fp = make(torch, gs, none=(2,)), make(ft, gs, none=(2,))
        torch.nn.utils.clip_grads_with_norm_(tp, 1.5, tn)
        ft.nn.utils.clip_grads_with_norm_(fp, 1.5, fn)
        assert_same(fp, tp)
    assert_norm(ft.nn.utils.get_total_norm([]), torch.nn.utils.get_total_norm([]))
    bad = [ft.tensor([1.0, float("inf")])]
    with pytest.raises(RuntimeError, match=re.escape("non-finite, so it cannot be clipped")):
        ft.nn.utils.get_total_norm(bad, error_if_nonfinite=True)


def test_clip_grad_value():
    gs = grads(2.0)
    tp, fp = make(torch, gs, none=(1,)), make(ft, gs, none=(1,))
    assert torch.nn.utils.clip_grad_value_(tp, 0.7) is None and ft.nn.utils.clip_grad_value_(fp, 0.7) is None
    assert_same(fp, tp)
    tp, fp = make(torch, gs[:1]), make(ft, gs[:1])
    torch.nn.utils.clip_grad_value_(tp[0], 0.1)
    ft.nn.utils.clip_grad_value_(fp[0], 0.1)
    assert_same(fp, tp)
    ft.nn.utils.clip_grad_value_([], 1.0)


def test_clip_is_one_cached_call_writing_grads_in_place():
    gs = grads(3.0)
    fp = make(ft, gs)
    before = [p.grad for p in fp]
    versions = [g._version for g in before]
    ft.nn.utils.clip_grad_norm_(fp, 1.0)
    fp2 = make(ft, grads(3.0))
    traces, calls = CG.TRACES["count"], COUNTS["calls"]
    ft.nn.utils.clip_grad_norm_(fp2, 0.25)  # same shapes, other max_norm: no retrace, no op dispatch
    assert CG.TRACES["count"] == traces and COUNTS["calls"] == calls
    assert all(p.grad is g for p, g in zip(fp, before))
    assert [g._version for g in before] == [v + 1 for v in versions]
    tp = make(torch, gs)
    torch.nn.utils.clip_grad_norm_(tp, 1.0)
    assert_same(fp, tp, 1e-5)


def test_clip_grad_norm_deprecated_alias():
    gs = grads()
    tp, fp = make(torch, gs), make(ft, gs)
    with pytest.warns(FutureWarning, match=re.escape("`torch.nn.utils.clip_grad_norm` is now deprecated")):
        fn = ft.nn.utils.clip_grad_norm(fp, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tn = torch.nn.utils.clip_grad_norm(tp, 0.5)
    assert_norm(fn, tn)
    assert_same(fp, tp)


def test_clip_after_backward_then_step():
    x = RNG.standard_normal((8, 3))
    res = []
    for mod in (torch, ft):
        mod.manual_seed(0)
        lin = mod.nn.Linear(3, 2)
        with mod.no_grad():
            lin.weight.copy_(mod.tensor(np.arange(6.0).reshape(2, 3) / 3, dtype=mod.float32))
            lin.bias.copy_(mod.tensor([0.5, -0.5], dtype=mod.float32))
        opt = mod.optim.SGD(lin.parameters(), lr=0.1)
        lin(mod.tensor(x, dtype=mod.float32)).pow(2).sum().backward()
        n = mod.nn.utils.clip_grad_norm_(lin.parameters(), 1.0)
        opt.step()
        res.append((n.item(), lin.weight.detach().numpy().copy(), lin.bias.detach().numpy().copy()))
    for f, t in zip(res[1], res[0]):
        np.testing.assert_allclose(f, t, rtol=1e-5, atol=1e-6)


# ---- convert_parameters ---------------------------------------------------------------------------------
def test_parameters_to_vector_and_back():
    vals = [RNG.standard_normal(s) for s in SHAPES]
    res = []
    for mod in (torch, ft):
        ps = [mod.nn.Parameter(mod.tensor(v)) for v in vals]
        vec = mod.nn.utils.parameters_to_vector(ps)
        assert type(vec.grad_fn).__name__ == "CatBackward0"
        (vec * mod.arange(vec.numel(), dtype=vec.dtype)).sum().backward()
        new = mod.arange(vec.numel(), dtype=mod.float64) * 0.5
        mod.nn.utils.vector_to_parameters(new, ps)
        res.append((vec.detach().numpy(), [p.grad.numpy() for p in ps], [p.detach().numpy() for p in ps],
                    [tuple(p.shape) for p in ps], [p.requires_grad for p in ps]))
    (tv, tg, tps, ts, tr), (fv, fg, fps, fs, fr) = res
    np.testing.assert_allclose(fv, tv)
    for a, b in zip(fg + fps, tg + tps):
        np.testing.assert_allclose(a, b)
    assert fs == ts and fr == tr
    errs = []
    for mod in (torch, ft):
        with pytest.raises(TypeError) as ei:
            mod.nn.utils.vector_to_parameters([1.0, 2.0], [])
        errs.append(str(ei.value))
    assert errs[0] == errs[1]
