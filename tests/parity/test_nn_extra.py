"""Parity of functorch_lite/ops/nn_extra.py and nn/modules/extra.py against real PyTorch 2.13: values, dtypes,
shapes, grad_fn names, gradients through ``.backward()``, the three reductions, module reprs / state_dict keys /
running statistics, and errors (type and message)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

R = np.random.default_rng(5)
REDS = ["none", "mean", "sum"]


def _t(mod, a, dtype, grad):
    a = np.asarray(a)
    x = mod.tensor(a)
    if dtype is not None and a.dtype.kind == "f":
        x = x.to(getattr(mod, dtype))
    return x.requires_grad_(True) if grad else x


def _gname(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def compare(fn, arrays, dtype="float64", grad=(0,), tol=None, name=True):
    """Run ``fn(mod, F, *tensors)`` in both libraries; compare value, dtype, shape, grad_fn and gradients."""
    tol = tol or (1e-9 if dtype == "float64" else 2e-5)
    res = {}
    for mod in (torch, ft):
        ts = [_t(mod, a, dtype, i in grad) for i, a in enumerate(arrays)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(mod, mod.nn.functional, *ts)
        names = _gname(out)
        if grad and out.requires_grad:
            w = mod.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)), dtype=out.dtype)
            (out * w).sum().backward()
        res[mod] = (out, names, [ts[i].grad for i in grad])
    (to, tn, tg), (fo, fn_, fg) = res[torch], res[ft]
    assert str(fo.dtype) == str(to.dtype) and tuple(fo.shape) == tuple(to.shape), (fo.dtype, to.dtype, fo.shape,
                                                                                     to.shape)
    if name:
        assert fn_ == tn, (fn_, tn)
    np.testing.assert_allclose(fo.detach().double().numpy(), to.detach().double().numpy(), rtol=tol, atol=tol)
    for a, b in zip(fg, tg):
        if b is None:
            assert a is None or not np.any(a.numpy())
            continue
        np.testing.assert_allclose(a.double().numpy(), b.double().numpy(), rtol=tol, atol=tol)
    return fo, to


def same_error(fn):
    """Both libraries raise the same exception type with the same message."""
    errs = []
    for mod in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as ei:
                fn(mod, mod.nn.functional)
        errs.append(ei.value)
    assert type(errs[1]) is type(errs[0]), errs
    assert str(errs[1]) == str(errs[0]), errs


def _n(*shape, scale=1.0):
    return R.standard_normal(shape) * scale


# ---- shape ops -----------------------------------------------------------------------------------------------
def test_pixel_shuffle_unshuffle_roundtrip_and_unbatched():
    compare(lambda m, F, x: F.pixel_shuffle(x, 3), [_n(9, 2, 2)])
    compare(lambda m, F, x: m.pixel_unshuffle(x, 2), [_n(1, 3, 2, 4, 2)])
    compare(lambda m, F, x: m.nn.PixelUnshuffle(2)(m.nn.PixelShuffle(2)(x)), [_n(2, 4, 3, 3)], name=False)


@pytest.mark.parametrize("case", [
    lambda m, F: F.pixel_shuffle(m.randn(4, 4), 2),
    lambda m, F: F.pixel_shuffle(m.randn(1, 3, 2, 2), 2),
    lambda m, F: F.pixel_shuffle(m.randn(1, 4, 2, 2), 0),
    lambda m, F: F.pixel_unshuffle(m.randn(1, 1, 3, 4), 2),
    lambda m, F: F.pixel_unshuffle(m.randn(1, 1, 4, 3), 2),
    lambda m, F: F.unfold(m.randn(1, 1, 3, 3), 4),
    lambda m, F: F.unfold(m.randn(1, 1, 3, 3), 2, stride=0),
    lambda m, F: F.unfold(m.randn(1, 1, 3, 3), (1, 1, 1)),
    lambda m, F: F.fold(m.randn(1, 4, 4, 1), (3, 3), 2),
    lambda m, F: F.fold(m.randn(1, 7, 4), (3, 3), 2),
    lambda m, F: F.fold(m.randn(1, 8, 4), (3, 3), 2, stride=2),
])
def test_shape_op_errors(case):
    same_error(case)


def test_unfold_fold_modules_and_unbatched():
    compare(lambda m, F, x: m.nn.Unfold((2, 3), dilation=2, padding=1, stride=2)(x), [_n(2, 3, 6, 7)])
    compare(lambda m, F, x: m.nn.Fold((4, 5), 2)(x), [_n(2, 8, 12)])
    compare(lambda m, F, x: F.fold(x, (3, 3), 2, padding=1, stride=2), [_n(8, 4)])
    a = np.arange(2 * 1 * 4 * 4, dtype=np.float32).reshape(2, 1, 4, 4)
    x = ft.tensor(a)  # non-overlapping blocks: fold inverts unfold exactly
    assert ft.equal(ft.nn.functional.fold(ft.nn.functional.unfold(x, 2, stride=2), (4, 4), 2, stride=2), x)
    assert repr(ft.nn.Unfold((2, 3), dilation=2, padding=1, stride=2)) == \
        repr(torch.nn.Unfold((2, 3), dilation=2, padding=1, stride=2))
    assert repr(ft.nn.Fold((4, 5), 2)) == repr(torch.nn.Fold((4, 5), 2))


# ---- activations -----------------------------------------------------------------------------------------------
def test_threshold_and_inplace_forms():
    compare(lambda m, F, x: F.threshold(x, 0.2, -3.0), [_n(3, 4)])
    compare(lambda m, F, x: m.threshold(x, 0.2, 5.0), [_n(3, 4)], dtype="float32")
    compare(lambda m, F, x: F.threshold(x * 1, 0.2, -3.0, inplace=True), [_n(3, 4)])
    compare(lambda m, F, x: F.threshold_(x * 1, 0.2, -3.0), [_n(3, 4)])
    compare(lambda m, F, x: m.nn.Threshold(0.1, 20.0)(x), [_n(5)])
    compare(lambda m, F, x: m.threshold(x, -0.5, 9.7), [np.array([-1, 0, 1, 2])], grad=())  # int: bounds truncated
    compare(lambda m, F, x: F.relu_(x * 1), [_n(6)])
    compare(lambda m, F, x: F.hardtanh_(x * 1, -0.5, 0.7), [_n(6)])
    compare(lambda m, F, x: F.elu_(x * 1), [_n(6)])
    compare(lambda m, F, x: F.leaky_relu_(x * 1, 0.3), [_n(6)])
    assert repr(ft.nn.Threshold(0.1, 2, inplace=True)) == repr(torch.nn.Threshold(0.1, 2, inplace=True))


def test_shrinks_softmin_logsigmoid():
    x = [_n(4, 5, scale=2)]  # (float32 gradients of the table ops: test_grad_sweep)
    compare(lambda m, F, x: F.softshrink(x, 0.7), x)
    compare(lambda m, F, x: m.hardshrink(x, 0.7) + x.hardshrink(), x)
    compare(lambda m, F, x: F.tanhshrink(x), x)
    compare(lambda m, F, x: F.softmin(x, 1), x)
    compare(lambda m, F, x: m.nn.Softmin(0)(x) + m.nn.LogSigmoid()(x), x)
    compare(lambda m, F, x: m.nn.Softshrink(0.3)(x) + m.nn.Hardshrink(0.3)(x) + m.nn.Tanhshrink()(x), x)


def test_activation_errors_and_reprs():
    same_error(lambda m, F: F.softshrink(m.randn(3), -1.0))
    same_error(lambda m, F: F.softshrink(m.randn(3, dtype=m.float64), -0.5))
    same_error(lambda m, F: F.threshold(m.tensor([True, False]), 0.5, 1.0))
    same_error(lambda m, F: F.hardshrink(m.tensor([1, 2])))
    for ctor in (lambda n: n.Softshrink(), lambda n: n.Hardshrink(0.3), lambda n: n.Tanhshrink(),
                 lambda n: n.Softmin(1), lambda n: n.LogSigmoid(), lambda n: n.Threshold(0.1, 20.0)):
        assert repr(ctor(ft.nn)) == repr(ctor(torch.nn))


def test_softmin_implicit_dim_warns():
    for mod in (torch, ft):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            mod.nn.functional.softmin(mod.randn(2, 3))


# ---- pdist ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf"), 0.0])
def test_pdist(p):
    x = _n(5, 3)
    x[3] = x[1]  # a zero distance: PyTorch's gradient there is 0
    compare(lambda m, F, x: F.pdist(x, p), [x])


def test_pdist_errors():
    same_error(lambda m, F: F.pdist(m.randn(2, 3, 4)))
    same_error(lambda m, F: F.pdist(m.randn(3, 4), -1))
    same_error(lambda m, F: F.pdist(m.ones(3, 4, dtype=m.int64)))
    same_error(lambda m, F: F.pdist(m.randn(3, 4).half()))
    compare(lambda m, F, x: m.pdist(x), [_n(1, 4)], grad=())


# ---- losses with their own kernels -------------------------------------------------------------------------------
def test_soft_margin_and_multi_margin():
    x, y = _n(4, 5), np.sign(_n(4, 5))
    t = np.array([0, 4, 2, 2])
    w = np.array([0.5, 1.0, 2.0, 1.5, 0.7])
    t2 = np.array([[3, 0, -1, 1, 1], [1, 2, 3, 0, 4], [-1, 0, 0, 0, 0], [4, -1, 2, 2, 2]])
    for red in REDS:
        compare(lambda m, F, x, y: F.soft_margin_loss(x, y, reduction=red), [x, y])
        compare(lambda m, F, x, t, w: F.multi_margin_loss(x, t, p=2, margin=0.6, weight=w, reduction=red), [x, t, w])
        compare(lambda m, F, x, t: F.multilabel_margin_loss(x, t, reduction=red), [x, t2])
    compare(lambda m, F, x, y: m.nn.SoftMarginLoss()(x, y), [x, y], dtype="float32")
    compare(lambda m, F, x, t: m.nn.MultiMarginLoss()(x, t), [x, t])
    compare(lambda m, F, x, t: m.nn.MultiMarginLoss(reduction="none")(x, t), [x[0], np.array(3)])  # unbatched
    compare(lambda m, F, x, t: m.nn.MultiLabelMarginLoss(reduction="none")(x, t), [x[0], t2[0]])


@pytest.mark.parametrize("case", [
    lambda m, F: F.soft_margin_loss(m.randn(3), m.randn(3, requires_grad=True)).backward(),
    lambda m, F: F.multi_margin_loss(m.randn(2, 3), m.tensor([0, 1]), p=3),
    lambda m, F: F.multi_margin_loss(m.randn(2, 3, 1), m.tensor([0, 1])),
    lambda m, F: F.multi_margin_loss(m.randn(2, 3), m.tensor([0, 1, 2])),
    lambda m, F: F.multi_margin_loss(m.randn(2, 3), m.tensor([0, 3])),
    lambda m, F: F.multi_margin_loss(m.randn(2, 3), m.tensor([0, 1]), weight=m.ones(1, 3)),
    lambda m, F: F.multi_margin_loss(m.randn(2, 3), m.tensor([0.0, 1.0])),
    lambda m, F: F.multi_margin_loss(m.randn(2, 3).half(), m.tensor([0, 1])),
    lambda m, F: F.multilabel_margin_loss(m.randn(2, 3), m.tensor([0, 1])),
    lambda m, F: F.multilabel_margin_loss(m.randn(2, 3), m.tensor([[0, 3, -1], [0, 1, 2]])),
    lambda m, F: F.multilabel_margin_loss(m.randn(2, 3), m.tensor([[0, 1, -1], [0, 1, 2]]), reduction="bad"),
    lambda m, F: m.nn.MultiMarginLoss(p=3),
    lambda m, F: m.nn.MultiMarginLoss(weight=m.ones(2, 2)),
])
def test_margin_kernel_errors(case):
    same_error(case)


# ---- composite losses ------------------------------------------------------------------------------------------
def test_ranking_and_embedding_losses():
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    a, b, a2, b2 = _n(5), _n(5), _n(5, 3), _n(5, 3)
    x, p = _n(4, 5), R.uniform(0, 1, (4, 5))
    for red in REDS:
        compare(lambda m, F, a, b, y: F.margin_ranking_loss(a, b, y, margin=0.3, reduction=red), [a, b, y],
                grad=(0, 1))
        compare(lambda m, F, a, y: F.hinge_embedding_loss(a, y, margin=0.8, reduction=red), [a, y])
        compare(lambda m, F, a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.2, reduction=red), [a2, b2, y],
                grad=(0, 1))
        compare(lambda m, F, a, y: F.multilabel_soft_margin_loss(a, y, reduction=red), [x, p])
    compare(lambda m, F, a, b, y: m.nn.MarginRankingLoss(0.1)(a, b, y), [a, b, y], grad=(0, 1))
    compare(lambda m, F, a, y: m.nn.HingeEmbeddingLoss()(a, y), [a, y])
    compare(lambda m, F, a, b, y: m.nn.CosineEmbeddingLoss(reduction="none")(a, b, y), [b2[0], a2[0], np.array(-1.0)],
            grad=(0, 1))
    compare(lambda m, F, a, y, w: m.nn.MultiLabelSoftMarginLoss(w)(a, y), [x, p, R.uniform(0.5, 2, 5)])


def test_triplet_losses():
    a, p, n = _n(4, 6), _n(4, 6), _n(4, 6)
    for red in REDS:
        compare(lambda m, F, a, p, n: F.triplet_margin_loss(a, p, n, reduction=red), [a, p, n], grad=(0, 1, 2))
        compare(lambda m, F, a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=0.5, swap=True,
            reduction=red), [a, p, n], grad=(0, 1, 2))
    compare(lambda m, F, a, p, n: m.nn.TripletMarginLoss(margin=2.0, p=1, swap=True)(a, p, n), [a, p, n],
            grad=(0, 1, 2))
    compare(lambda m, F, a, p, n: m.nn.TripletMarginWithDistanceLoss(reduction="none")(a, p, n), [a, p, n],
            grad=(0, 1, 2))


def test_poisson_and_gaussian_nll():
    x, x2, t = _n(4, 5), _n(4, 5), R.poisson(2.0, (4, 5)).astype(np.float64)
    v = R.uniform(0.5, 2, (4, 5))
    v[0, 0] = 1e-9  # clamped to eps (no gradient through the clamp)
    for red in REDS:
        compare(lambda m, F, x, t: F.poisson_nll_loss(x, t, reduction=red), [x, t])
        compare(lambda m, F, x, t, v: F.gaussian_nll_loss(x, t, v, reduction=red), [x, x2, v], grad=(0, 1, 2))
    compare(lambda m, F, x, t: F.poisson_nll_loss(x, t, log_input=False), [np.abs(x) + 0.1, t])
    compare(lambda m, F, x, t: m.nn.PoissonNLLLoss(full=True, reduction="none")(x, t), [x, t])
    compare(lambda m, F, x, t, v: m.nn.GaussianNLLLoss(full=True, reduction="none")(x, t, v),
            [x, x2, R.uniform(0.5, 2, (4, 1))], grad=(0, 1, 2))
    compare(lambda m, F, x, t, v: F.gaussian_nll_loss(x, t, v), [x, x2, R.uniform(0.5, 2, 4)], grad=(0, 2))
    compare(lambda m, F, x, t: F.gaussian_nll_loss(x, t, 0.7), [x, x2], grad=(0, 1))


def test_torch_namespace_loss_spellings():
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])  # (the shapes of the F tests above: their kernels are reused)
    compare(lambda m, F, a, b, y: m.margin_ranking_loss(a, b, y, 0.2, 2), [_n(5), _n(5), y], grad=(0, 1))
    compare(lambda m, F, a, y: m.hinge_embedding_loss(a, y, 1.0, 0), [_n(5), y])
    compare(lambda m, F, a, b, y: m.cosine_embedding_loss(a, b, y, 0.0, 1), [_n(5, 3), _n(5, 3), y], grad=(0, 1))
    compare(lambda m, F, a, y: m.poisson_nll_loss(a, y, True, False, 1e-8, 1), [_n(4, 5), np.abs(_n(4, 5))])
    compare(lambda m, F, a, b, c: m.triplet_margin_loss(a, b, c, 1.0, 2, 1e-6, False, 2), [_n(4, 6)] * 3,
            grad=(0, 1, 2))


@pytest.mark.parametrize("case", [
    lambda m, F: F.margin_ranking_loss(m.randn(3), m.randn(3), m.randn(1, 3)),
    lambda m, F: F.margin_ranking_loss(m.randn(3), m.randn(3), m.randn(3), reduction="bad"),
    lambda m, F: F.cosine_embedding_loss(m.randn(3, 2), m.randn(3, 2), m.randn(3, 1)),
    lambda m, F: F.cosine_embedding_loss(m.randn(3), m.randn(3), m.randn(3)),
    lambda m, F: F.cosine_embedding_loss(m.randn(3, 2), m.randn(3, 2), m.tensor(1.0)),
    lambda m, F: F.triplet_margin_loss(m.randn(3, 2), m.randn(3, 2), m.randn(3, 2), margin=0),
    lambda m, F: F.triplet_margin_loss(m.randn(3, 2), m.randn(3, 2), m.randn(2)),
    lambda m, F: F.triplet_margin_with_distance_loss(m.randn(3, 2), m.randn(3, 2), m.randn(2)),
    lambda m, F: F.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2), -m.ones(3, 2)),
    lambda m, F: F.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2), m.ones(2, 2)),
    lambda m, F: F.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2), m.ones(3, 2), reduction="bad"),
    lambda m, F: F.poisson_nll_loss(m.randn(4), m.ones(4), reduction="bad"),
    lambda m, F: F.multilabel_soft_margin_loss(m.randn(4, 6), m.ones(4, 6), reduction="bad"),
    lambda m, F: m.nn.TripletMarginLoss(margin=0),
    lambda m, F: m.nn.TripletMarginWithDistanceLoss(margin=-1.0),
])
def test_composite_loss_errors(case):
    same_error(case)


def test_loss_module_reprs_and_legacy_args():
    for ctor in (lambda n: n.MarginRankingLoss(), lambda n: n.TripletMarginLoss(), lambda n: n.CosineEmbeddingLoss(),
                 lambda n: n.HingeEmbeddingLoss(), lambda n: n.SoftMarginLoss(), lambda n: n.MultiLabelSoftMarginLoss(),
                 lambda n: n.MultiMarginLoss(), lambda n: n.MultiLabelMarginLoss(), lambda n: n.PoissonNLLLoss(),
                 lambda n: n.GaussianNLLLoss(), lambda n: n.TripletMarginWithDistanceLoss()):
        f, t = ctor(ft.nn), ctor(torch.nn)
        assert repr(f) == repr(t)
        assert list(f.state_dict()) == list(t.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ft.nn.SoftMarginLoss(size_average=False).reduction == torch.nn.SoftMarginLoss(size_average=False).reduction
    w = np.array([1.0, 2.0, 3.0])
    assert list(ft.nn.MultiLabelSoftMarginLoss(ft.tensor(w)).state_dict()) == ["weight"]


# ---- instance norm / batch norm 3d / LRN / LP pooling -------------------------------------------------------------
@pytest.mark.parametrize("nd, kw", [(1, {}), (3, {}), (2, {"affine": True, "track_running_stats": True,
                                                          "momentum": 0.3})])
def test_instance_norm_modules_train_and_eval(nd, kw):
    shape = (2, 3) + (4, 3, 2)[:nd]
    x = _n(*shape, scale=2) + 1
    if True:
        mods = {}
        for mod in (torch, ft):
            mods[mod] = getattr(mod.nn, f"InstanceNorm{nd}d")(3, **kw).double()
        assert repr(mods[ft]) == repr(mods[torch])
        assert list(mods[ft].state_dict()) == list(mods[torch].state_dict())
        compare(lambda m, F, x: mods[m](x), [x])
        compare(lambda m, F, x: mods[m](x), [x[0]])  # unbatched
        if kw:
            for k in ("running_mean", "running_var", "num_batches_tracked"):
                np.testing.assert_allclose(getattr(mods[ft], k).numpy(), getattr(mods[torch], k).numpy(), atol=1e-12)
            for mod in (torch, ft):
                mods[mod].eval()
            compare(lambda m, F, x: mods[m](x), [x])
            np.testing.assert_allclose(mods[ft].weight.grad.numpy(), mods[torch].weight.grad.numpy(), atol=1e-9)


def test_instance_norm_functional_and_errors():
    rm, rv = R.standard_normal(3), R.uniform(0.5, 2, 3)
    compare(lambda m, F, x, rm, rv, w, b: F.instance_norm(x, rm, rv, w, b, use_input_stats=False),
            [_n(2, 3, 5), rm, rv, _n(3), _n(3)], grad=(0, 3, 4))
    compare(lambda m, F, x: m.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False), [_n(2, 3, 5)])
    same_error(lambda m, F: F.instance_norm(m.randn(3, 2, 1)))
    same_error(lambda m, F: F.instance_norm(m.randn(3, 2, 4), use_input_stats=False))
    same_error(lambda m, F: m.nn.InstanceNorm1d(3, affine=True)(m.randn(2, 4, 5)))
    same_error(lambda m, F: m.nn.InstanceNorm2d(3)(m.randn(3, 5)))
    for mod in (torch, ft):
        with pytest.warns(UserWarning, match="does not match num_features"):
            mod.nn.InstanceNorm1d(3)(mod.randn(2, 4, 5))


def test_batchnorm3d():
    x = _n(3, 2, 2, 3, 2)
    mods = {mod: mod.nn.BatchNorm3d(2, momentum=0.2).double() for mod in (torch, ft)}
    assert repr(mods[ft]) == repr(mods[torch]) and list(mods[ft].state_dict()) == list(mods[torch].state_dict())
    compare(lambda m, F, x: mods[m](x), [x])
    for k in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(mods[ft], k).numpy(), getattr(mods[torch], k).numpy(), atol=1e-12)
    for mod in (torch, ft):
        mods[mod].eval()
    compare(lambda m, F, x: mods[m](x), [x])
    same_error(lambda m, F: m.nn.BatchNorm3d(2)(m.randn(2, 2, 3)))


def test_local_response_norm():
    compare(lambda m, F, x: F.local_response_norm(x, 3, alpha=0.1, beta=0.6, k=1.5), [_n(2, 5, 4)])
    compare(lambda m, F, x: m.nn.LocalResponseNorm(2)(x), [_n(2, 4, 3, 3)])
    assert repr(ft.nn.LocalResponseNorm(2)) == repr(torch.nn.LocalResponseNorm(2))
    same_error(lambda m, F: F.local_response_norm(m.randn(3, 2), 2))


def test_lp_pool():
    x = np.abs(_n(2, 3, 6, 7)) + 0.1
    compare(lambda m, F, x: F.lp_pool2d(x, 1.5, (2, 3), ceil_mode=True), [x])
    compare(lambda m, F, x: F.lp_pool2d(x, float("inf"), 2), [x])
    compare(lambda m, F, x: m.nn.LPPool1d(3, 2)(x), [x[0]])
    compare(lambda m, F, x: m.nn.LPPool3d(2, 2)(x), [x[:1, :, None].repeat(2, 2)])
    for ctor in (lambda n: n.LPPool1d(2, 3), lambda n: n.LPPool2d(2, 3, stride=2)):
        assert repr(ctor(ft.nn)) == repr(ctor(torch.nn))


# ---- gumbel_softmax (random: shapes, one-hot, straight-through gradient, reproducibility) -------------------------
def test_gumbel_softmax():
    logits = ft.tensor(R.standard_normal((4, 6)), requires_grad=True)
    ft.manual_seed(3)
    soft = ft.nn.functional.gumbel_softmax(logits, tau=0.5)
    ft.manual_seed(3)
    again = ft.nn.functional.gumbel_softmax(logits, tau=0.5)
    assert ft.equal(soft, again) and type(soft.grad_fn).__name__ == "SoftmaxBackward0"
    np.testing.assert_allclose(soft.detach().sum(-1).numpy(), np.ones(4), atol=1e-12)
    assert (soft.detach().numpy() > 0).all()
    ft.manual_seed(3)
    hard = ft.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert type(hard.grad_fn).__name__ == "AddBackward0"
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    np.testing.assert_array_equal(h.argmax(-1), soft.detach().numpy().argmax(-1))  # same noise: same winner
    w = ft.tensor(R.standard_normal((4, 6)))
    (hard * w).sum().backward()
    g_hard = logits.grad.numpy().copy()
    logits.grad = None
    (soft * w).sum().backward()
    np.testing.assert_allclose(g_hard, logits.grad.numpy(), atol=1e-12)  # straight-through: the soft gradient
    d = ft.nn.functional.gumbel_softmax(logits.detach(), dim=0)
    assert d.shape == (4, 6) and not ft.equal(d, soft)  # fresh noise
    np.testing.assert_allclose(d.sum(0).numpy(), np.ones(6), atol=1e-12)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        ft.nn.functional.gumbel_softmax(logits, eps=1e-3)


# ---- transposed convolutions ------------------------------------------------------------------------------------------
def test_conv_transpose1d_3d():
    compare(lambda m, F, x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1, dilation=1),
            [_n(2, 4, 5), _n(4, 3, 3), _n(3)], grad=(0, 1, 2))
    compare(lambda m, F, x, w: F.conv_transpose3d(x, w, stride=(2, 1, 1)), [_n(1, 2, 2, 3, 2), _n(2, 2, 2, 2, 2)],
            grad=(0, 1))
    same_error(lambda m, F: F.conv_transpose1d(m.randn(1, 2, 4), m.randn(2, 3, 2), stride=2, output_padding=2))
    same_error(lambda m, F: F.conv_transpose3d(m.randn(1, 2, 3, 3, 3), m.randn(2, 2, 2, 2, 2), output_padding=1))
    mods = {}
    for mod in (torch, ft):
        mod.manual_seed(0)
        mods[mod] = mod.nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1).double()
    assert repr(mods[ft]) == repr(mods[torch])
    assert list(mods[ft].state_dict()) == list(mods[torch].state_dict())
    with torch.no_grad():
        mods[torch].weight.copy_(torch.tensor(mods[ft].weight.detach().numpy()))
        mods[torch].bias.copy_(torch.tensor(mods[ft].bias.detach().numpy()))
    compare(lambda m, F, x: mods[m](x, output_size=[10]), [_n(2, 3, 5)])
    assert repr(ft.nn.ConvTranspose3d(2, 3, 2)) == repr(torch.nn.ConvTranspose3d(2, 3, 2))


# ---- LazyLinear / padding modules -----------------------------------------------------------------------------------
def test_lazy_linear_materialises_on_first_call():
    m = ft.nn.LazyLinear(3)
    assert repr(m) == repr(torch.nn.LazyLinear(3))
    w = m.weight
    opt_params = list(m.parameters())
    y = m(ft.randn(2, 5))
    assert type(m) is ft.nn.Linear and m.in_features == 5 and tuple(y.shape) == (2, 3)
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert m.weight is w and type(w) is ft.nn.Parameter and tuple(w.shape) == (3, 5) and w.requires_grad
    assert opt_params[0] is w and list(m.state_dict()) == ["weight", "bias"]
    y.sum().backward()
    np.testing.assert_allclose(m.bias.grad.numpy(), np.full(3, 2.0))
    bound = 1 / np.sqrt(5)
    assert np.abs(w.detach().numpy()).max() <= bound
    m2 = ft.nn.LazyLinear(2, bias=False)
    m2(ft.randn(4, 7))
    assert m2.bias is None and tuple(m2.weight.shape) == (2, 7)


@pytest.mark.parametrize("ctor", [
    lambda n: n.ZeroPad1d(2), lambda n: n.ZeroPad1d((1, 2)), lambda n: n.ConstantPad1d((0, 3), 1.5),
    lambda n: n.ReflectionPad1d((2, 1)), lambda n: n.ReplicationPad1d(2), lambda n: n.CircularPad1d((1, 2)),
    lambda n: n.ZeroPad3d(1), lambda n: n.ConstantPad3d((1, 0, 0, 1, 2, 0), -1.0), lambda n: n.ReflectionPad3d(1),
    lambda n: n.ReplicationPad3d((1, 2, 0, 1, 1, 0)), lambda n: n.CircularPad3d(1),
])
def test_padding_modules(ctor):
    f, t = ctor(ft.nn), ctor(torch.nn)
    assert repr(f) == repr(t)
    mods = {ft: f, torch: t}
    shape = (2, 3, 5) if "1d" in type(t).__name__ else (1, 2, 3, 4, 3)
    compare(lambda m, F, x: mods[m](x), [_n(*shape)])
