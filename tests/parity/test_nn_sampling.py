"""Parity of grid_sample / affine_grid (ops/nn_sampling.py), embedding_bag / nn.EmbeddingBag and ctc_loss /
nn.CTCLoss (ops/ctc.py, nn/modules/sampling.py) against real PyTorch 2.13: values, dtypes, shapes, grad_fn names,
gradients to every differentiable input (PyTorch's conventions: clipped grid coordinates, first maximum of a bag,
its ``scale_grad_by_freq`` indexing, the CTC gradient with respect to the logits, NaN / zero rows), autocast
dtypes, module reprs / state_dict keys, and errors (type and message)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

R = np.random.default_rng(31)
X4 = R.standard_normal((2, 2, 3, 4))
G4 = R.uniform(-1.3, 1.3, (2, 3, 2, 2))
X5 = R.standard_normal((1, 2, 2, 3, 4))
G5 = R.uniform(-1.3, 1.3, (1, 2, 2, 2, 3))
W = R.standard_normal((6, 3))
PSW = R.uniform(0.2, 1.5, 7)
IDX = [0, 2, 4, 5, 4, 3, 2]
LP = R.standard_normal((6, 3, 4))
TGT = np.array([[1, 2, 2], [3, 1, 0], [1, 1, 0]])


def _run(mod, fn, arrays, dtype):
    ts = [mod.tensor(a, dtype=getattr(mod, dtype), requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(mod, mod.nn.functional, *ts)
    name = None if out.grad_fn is None else type(out.grad_fn).__name__
    w = mod.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)), dtype=out.dtype)
    (out * w).sum().backward()
    return out, name, [t.grad for t in ts]


def compare(fn, arrays, dtype="float64", tol=1e-9):
    """``fn(mod, F, *tensors)`` in both libraries: value, dtype, shape, grad_fn and every input's gradient (NaN in
    the same places)."""
    (to, tn, tg), (fo, fn_, fg) = _run(torch, fn, arrays, dtype), _run(ft, fn, arrays, dtype)
    assert str(fo.dtype) == str(to.dtype) and tuple(fo.shape) == tuple(to.shape), (fo.dtype, to.dtype, fo.shape)
    assert fn_ == tn, (fn_, tn)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    for a, b in zip(fg, tg):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


def same_error(fn):
    """Both libraries raise the same exception type with the same message."""
    errs = []
    for mod in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as ei:
                fn(mod, mod.nn.functional)
        errs.append(ei.value)
    assert type(errs[1]) is type(errs[0]) and str(errs[1]) == str(errs[0]), (errs[0], errs[1])


# ---- grid_sample / affine_grid -------------------------------------------------------------------------------------
@pytest.mark.parametrize("x,g,mode,pad,align", [
    (X4, G4, "bicubic", "reflection", True),
    (X4, G4, "bilinear", "reflection", False),
    (X4, G4, "nearest", "border", True),
    (X5, G5, "bilinear", "zeros", True),
    (X5, G5, "nearest", "reflection", False),
])
def test_grid_sample_values_and_gradients(x, g, mode, pad, align):
    compare(lambda m, F, a, b: F.grid_sample(a, b, mode=mode, padding_mode=pad, align_corners=align), [x, g])


def test_grid_sampler_top_level_forms_and_dtypes():
    x, g = X4.astype(np.float32), G4.astype(np.float32)
    for mod in (torch, ft):
        a, b = mod.tensor(x), mod.tensor(g)
        ref = mod.nn.functional.grid_sample(a, b, mode="bicubic", padding_mode="reflection", align_corners=True)
        np.testing.assert_allclose(mod.grid_sampler(a, b, 2, 2, True).numpy(), ref.numpy())
        np.testing.assert_allclose(mod.grid_sampler_2d(a, b, 2, 2, True).numpy(), ref.numpy())
        assert mod.grid_sampler_3d(mod.tensor(X5).float(), mod.tensor(G5).float(), 0, 0, True).shape == (1, 2, 2, 2, 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = ft.nn.functional.grid_sample(ft.tensor(x), ft.tensor(g))  # align_corners defaults to False, warns
    assert "Default grid_sample and affine_grid behavior has changed" in str(w[0].message)
    ref = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), align_corners=False)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)
    for mod in (torch, ft):  # autocast: grid_sampler runs in float32 (bf16 or mixed inputs)
        with mod.autocast("cpu", dtype=mod.bfloat16) if mod is torch else ft.amp.autocast("cpu", dtype=ft.bfloat16):
            y = mod.nn.functional.grid_sample(mod.tensor(x).bfloat16(), mod.tensor(g), align_corners=False)
            th = mod.nn.functional.affine_grid(mod.tensor(W[:4].reshape(2, 2, 3)).float(), (2, 1, 2, 2), False)
        assert str(y.dtype) == "torch.float32" and str(th.dtype) == "torch.bfloat16"


def test_grid_sample_errors():
    same_error(lambda m, F: F.grid_sample(m.tensor(X4), m.tensor(G4), mode="foo"))
    same_error(lambda m, F: F.grid_sample(m.tensor(X4), m.tensor(G4), padding_mode="foo"))
    same_error(lambda m, F: F.grid_sample(m.zeros(2, 3, 4, 5), m.zeros(1, 3, 2, 2), align_corners=False))
    same_error(lambda m, F: F.grid_sample(m.zeros(2, 3, 4, 5), m.zeros(2, 3, 2, 3), align_corners=False))
    same_error(lambda m, F: F.grid_sample(m.zeros(2, 3, 4), m.zeros(2, 3, 2), align_corners=False))
    same_error(lambda m, F: F.grid_sample(m.zeros(2, 3, 0, 5), m.zeros(2, 3, 2, 2), align_corners=False))
    same_error(lambda m, F: F.grid_sample(m.zeros(1, 1, 2, 2, 2), m.zeros(1, 1, 1, 1, 3), mode="bicubic",
                                          align_corners=False))
    same_error(lambda m, F: F.grid_sample(m.zeros(2, 3, 4, 5).double(), m.zeros(2, 3, 2, 2), align_corners=False))
    same_error(lambda m, F: F.grid_sample(m.zeros(2, 3, 4, 5).long(), m.zeros(2, 3, 2, 2), align_corners=False))
    same_error(lambda m, F: F.grid_sample(m.zeros(1, 1, 2, 2, 2).long(), m.zeros(1, 1, 1, 1, 3).long(),
                                          align_corners=False))


@pytest.mark.parametrize("size,theta", [((2, 3, 4, 5), R.standard_normal((2, 2, 3))),
                                        ((1, 2, 2, 3, 4), R.standard_normal((1, 3, 4)))])
def test_affine_grid_values_gradients_and_errors(size, theta):
    compare(lambda m, F, t: F.affine_grid(t, size, align_corners=False), [theta])
    compare(lambda m, F, t: m.affine_grid_generator(t, list(size), True), [theta])
    same_error(lambda m, F: F.affine_grid(m.zeros(2, 3, 3), size, align_corners=False))
    same_error(lambda m, F: F.affine_grid(m.zeros(2, 2, 3, dtype=m.int64), size, align_corners=False))
    same_error(lambda m, F: F.affine_grid(m.zeros(2, 2, 3), (2, 3, 4), align_corners=False))
    same_error(lambda m, F: F.affine_grid(m.zeros(2, 2, 3), (2, 3, 0, 5), align_corners=False))
    same_error(lambda m, F: F.affine_grid(m.zeros(2, 2, 3), (3, 3, 4, 5), align_corners=False))
    for mod in (torch, ft):  # unit-size grids with align_corners warn (and give the centre, 0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            g = mod.nn.functional.affine_grid(mod.tensor([[[1., 0., 0.5], [0., 1., 0.]]]), (1, 1, 1, 2), True)
        assert "unit-size grids" in str(w[0].message) and g[0, 0, 0].tolist() == [-0.5, 0.0]


# ---- embedding_bag ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,offsets,use_psw", [
    (dict(mode="sum", scale_grad_by_freq=True, padding_idx=4), [0, 3, 3, 5], True),  # ATen's freq indexing
    (dict(mode="mean", include_last_offset=True, padding_idx=-2), [0, 3, 3, 5], False),  # last bag runs to the end
    (dict(mode="max", padding_idx=2), [0, 2, 7], False),  # the first maximum gets the gradient; empty bag -> 0
    (dict(mode="mean"), None, False),  # 2-d input: fixed-size bags
])
def test_embedding_bag_values_and_gradients(kw, offsets, use_psw):
    def fn(m, F, w, p):
        i = m.tensor(IDX)
        if offsets is None:
            return F.embedding_bag(i[:6].reshape(2, 3), w, **kw)
        return F.embedding_bag(i, w, m.tensor(offsets), per_sample_weights=p if use_psw else None, **kw)
    compare(fn, [W, PSW])


def test_embedding_bag_module_and_from_pretrained():
    ft.manual_seed(0)
    bag = ft.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-1)
    tb = torch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-1)
    assert repr(bag) == repr(tb) == "EmbeddingBag(10, 3, mode='sum', padding_idx=9)"
    assert list(bag.state_dict()) == list(tb.state_dict()) == ["weight"]
    assert bag.weight.requires_grad and not bag.weight[9].any() and bag.padding_idx == 9
    assert repr(ft.nn.EmbeddingBag(4, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)) == \
        repr(torch.nn.EmbeddingBag(4, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True))
    out = bag(ft.tensor([1, 2, 9, 5]), ft.tensor([0, 2]))
    assert tuple(out.shape) == (2, 3) and type(out.grad_fn).__name__ == "EmbeddingBagBackward0"
    for mod in (torch, ft):
        emb = mod.nn.EmbeddingBag.from_pretrained(mod.tensor(W), mode="max", include_last_offset=True)
        emb2 = mod.nn.EmbeddingBag.from_pretrained(mod.tensor(W), freeze=False)
        assert not emb.weight.requires_grad and emb2.weight.requires_grad and emb.include_last_offset
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        ft.nn.EmbeddingBag(3, 2, padding_idx=3)
    # max_norm renormalises the looked-up rows of the weight in place (no gradient)
    res = []
    for mod in (torch, ft):
        w = mod.tensor(W * 3)
        mod.nn.functional.embedding_bag(mod.tensor([0, 1, 1]), w, mod.tensor([0, 1]), max_norm=1.5, mode="sum")
        res.append(w.numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6)
    # dtypes: half weights compute and return half; under autocast nothing is cast (no policy)
    for mod in (torch, ft):
        o = mod.nn.functional.embedding_bag(mod.tensor(IDX), mod.tensor(W).half(), mod.tensor([0, 3]))
        assert str(o.dtype) == "torch.float16"


def test_embedding_bag_errors():
    i, off = IDX, [0, 3]

    def eb(*a, **k):
        return lambda m, F: F.embedding_bag(*[m.tensor(np.asarray(v)) if isinstance(v, (list, np.ndarray)) else v
                                             for v in a], **k)
    same_error(eb(i, W, [1, 3]))
    same_error(eb(i, W, [0, 4, 9], mode="sum"))
    same_error(eb(i, W.astype(np.float32), [0, 4, 3], mode="sum"))  # (float64 / max: PyTorch reads past the bag)
    same_error(eb(i, W, np.zeros(0, np.int64), mode="sum", include_last_offset=True))
    same_error(eb([0, 6], W, [0], padding_idx=1))
    same_error(eb(i, W, off, padding_idx=6, mode="sum"))
    same_error(eb(i, W, off, padding_idx=-7, mode="sum"))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W), m.tensor(off),
                                            per_sample_weights=m.tensor(PSW[:6])))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W), m.tensor(off), mode="mean",
                                            per_sample_weights=m.tensor(PSW)))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W).float(), m.tensor(off), mode="sum",
                                            per_sample_weights=m.tensor(PSW)))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W).bfloat16(), m.tensor(off), mode="sum",
                                            per_sample_weights=m.tensor(PSW).float()))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX[:6]).view(2, 3), m.tensor(W), m.tensor(off)))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX[:6]).view(1, 2, 3), m.tensor(W)))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W)))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W), m.tensor([off])))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W[0]), m.tensor(off)))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W), m.tensor(off), mode="foo"))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W), m.tensor(off), mode="max",
                                            scale_grad_by_freq=True))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W), m.tensor(off), mode="max", sparse=True))
    same_error(lambda m, F: F.embedding_bag(m.zeros(2, 0, dtype=m.int64), m.tensor(W)))
    for dt in ("int64", "bool"):
        same_error(lambda m, F: F.embedding_bag(m.tensor(IDX), m.tensor(W).to(getattr(m, dt)), m.tensor(off)))
    same_error(lambda m, F: F.embedding_bag(m.tensor(IDX).short(), m.tensor(W), m.tensor(off).short()))


# ---- ctc_loss ------------------------------------------------------------------------------------------------------
def test_ctc_loss_reductions_and_gradients():
    il, tl = [6, 5, 4], [3, 2, 2]
    # raw scores: PyTorch's gradient is the logits' one (exp(lp) - occupancy), not d(loss)/d(log_probs)
    compare(lambda m, F, x: F.ctc_loss(x, m.tensor(TGT), m.tensor(il), m.tensor(tl), reduction="none"), [LP])
    # mean: each loss over its target length, then MeanBackward0; int32 lengths
    compare(lambda m, F, x: F.ctc_loss(x.log_softmax(2), m.tensor(TGT), m.tensor(il).int(), m.tensor(tl).int()),
            [LP])
    # concatenated targets, lengths as tuples, sum
    compare(lambda m, F, x: F.ctc_loss(x, m.tensor([1, 2, 2, 3, 1, 1, 1]), tuple(il), tuple(tl), reduction="sum"),
            [LP])


def test_ctc_loss_infeasible_zero_infinity_and_unbatched():
    tg, il, tl = np.array([[1, 1, 1], [1, 1, 1], [2, 3, 1]]), [4, 5, 0], [3, 3, 0]  # 1 1 1 needs 5 steps
    # infeasible: inf loss and NaN gradient rows up to its input length (zero after); zero_infinity zeroes both
    compare(lambda m, F, x: F.ctc_loss(x, m.tensor(tg), m.tensor(il), m.tensor(tl), reduction="sum"), [LP])
    compare(lambda m, F, x: F.ctc_loss(x, m.tensor(tg), m.tensor(il), m.tensor(tl), reduction="none",
                                       zero_infinity=True), [LP])
    # unbatched (T, C) log_probs, 0-d length tensors: SqueezeBackward1
    compare(lambda m, F, x: F.ctc_loss(x, m.tensor([1, 2]), m.tensor(6), m.tensor(2), reduction="none"),
            [LP[:, 0]])
    res = []
    for mod in (torch, ft):  # CTCLoss module, torch.ctc_loss (reduction enum), autocast float32, float64 dtype
        loss = mod.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
        assert repr(loss) == "CTCLoss()" and loss.zero_infinity and loss.reduction == "sum"
        x = mod.tensor(LP).log_softmax(2)
        a = loss(x, mod.tensor(TGT), (6, 5, 4), (3, 2, 2))
        b = mod.ctc_loss(x, mod.tensor(TGT), [6, 5, 4], [3, 2, 2], 0, 2, True)
        assert str(a.dtype) == "torch.float64" and float(a) == pytest.approx(float(b), rel=1e-12)
        res.append(mod.ctc_loss(x, mod.tensor(TGT), [6, 5, 4], [3, 2, 2], 3, 0, False).tolist())  # another blank
        ac = torch.autocast("cpu", dtype=torch.bfloat16) if mod is torch else ft.amp.autocast("cpu")
        with ac:
            c = mod.nn.functional.ctc_loss(x.float().bfloat16(), mod.tensor(TGT), (6, 5, 4), (3, 2, 2))
        assert str(c.dtype) == "torch.float32"
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)


def test_ctc_loss_errors():
    lp = LP[:, :2]
    tg, il, tl = TGT[:2], [6, 5], [3, 2]

    def ctc(t=tg, i=il, l=tl, x=lp, **k):
        def f(m, F):
            a = [v if isinstance(v, tuple) or not isinstance(v, (list, np.ndarray)) else m.tensor(np.asarray(v))
                 for v in (t, i, l)]
            return F.ctc_loss(m.tensor(x), *a, **k)
        return f
    same_error(ctc(i=np.array([6., 5.])))
    same_error(ctc(l=np.array([3, 2]) > 0))
    same_error(lambda m, F: F.ctc_loss(m.tensor(lp).half(), m.tensor(tg), m.tensor(il), m.tensor(tl)))
    same_error(lambda m, F: F.ctc_loss(m.tensor(lp).long(), m.tensor(tg), m.tensor(il), m.tensor(tl)))
    same_error(ctc(blank=4))
    same_error(ctc(i=[6, 5, 4]))
    same_error(ctc(l=[3]))
    same_error(ctc(i=[7, 5]))
    same_error(ctc(i=[-1, 5]))
    same_error(ctc(l=[-1, 2]))
    same_error(ctc(l=[4, 2]))
    same_error(ctc(t=tg[:1]))
    same_error(ctc(t=[1, 2, 2, 3]))
    same_error(ctc(x=lp[:, 0, 0]))
    same_error(ctc(x=lp[None]))
    same_error(ctc(t=tg[None]))
    same_error(ctc(reduction="foo"))
    with pytest.raises(TypeError, match=r"ctc_loss\(\) received an invalid combination of arguments"):
        ft.nn.functional.ctc_loss(ft.tensor(lp), ft.tensor(tg), (6, 5), ft.tensor(tl))
