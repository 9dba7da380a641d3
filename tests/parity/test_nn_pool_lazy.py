"""Pooling with indices, max unpooling, RReLU, the small nn modules (Softmax2d, ChannelShuffle, CrossMapLRN2d),
``nn.Buffer`` and the lazy modules against real PyTorch: values, index dtypes, grad_fn names, gradients, reprs and
PyTorch's errors (type and message)."""
import copy
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

R = np.random.default_rng(5)
X1 = R.standard_normal((2, 3, 8)).astype(np.float32)
X2 = R.standard_normal((2, 3, 4, 6)).astype(np.float32)
X3 = R.standard_normal((1, 2, 4, 4, 6)).astype(np.float32)


def F(m):
    return m.nn.functional


def _np(t):
    return t.detach().numpy()


def _both(fn, *arrays, grad=True):
    """``fn(mod, *tensors)`` in both libraries: (output(s), input gradients for a random output gradient)."""
    res = {}
    for m in (torch, ft):
        xs = [m.tensor(a, requires_grad=grad) for a in arrays]
        out = fn(m, *xs)
        first = out[0] if isinstance(out, tuple) else out
        gs = None
        if grad:
            w = np.random.default_rng(1).standard_normal(tuple(first.shape))
            first.backward(m.tensor(w, dtype=first.dtype))
            gs = [x.grad for x in xs]
        res[m] = (out, gs)
    return res


def _same(res, tol=1e-6):
    (t_out, t_g), (f_out, f_g) = res[torch], res[ft]
    t_out = t_out if isinstance(t_out, tuple) else (t_out,)
    f_out = f_out if isinstance(f_out, tuple) else (f_out,)
    for a, b in zip(t_out, f_out):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(b), _np(a), rtol=tol, atol=tol)
    assert (t_out[0].grad_fn is None) == (f_out[0].grad_fn is None)
    if t_out[0].grad_fn is not None:
        assert f_out[0].grad_fn.name() == t_out[0].grad_fn.name()
    for a, b in zip(t_g or (), f_g or ()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=tol, atol=tol)


def _raises_like(fn):
    """Same exception type and message as PyTorch."""
    with pytest.raises(Exception) as t_err:
        fn(torch)
    with pytest.raises(type(t_err.value)) as f_err:
        fn(ft)
    assert str(f_err.value) == str(t_err.value)


# ---- pooling with indices and unpooling ---------------------------------------------------------------------------
def test_pool_with_indices_and_unpool_round_trip():
    # per dimension: the *_with_indices spelling (int64 flat indices within each (N, C) plane, as PyTorch's), then
    # unpooling puts each maximum back at its index (MaxUnpool*Backward0; 1-d: PyTorch's squeeze composite); the
    # gradient flows through both
    _same(_both(lambda m, x: F(m).max_unpool1d(*F(m).max_pool1d_with_indices(x, 3, 2, 1), 3, 2, 1,
                                               output_size=[8]), X1))
    _same(_both(lambda m, x: F(m).max_unpool2d(*F(m).max_pool2d_with_indices(x, 2), 2), X2))
    _same(_both(lambda m, x: F(m).max_unpool3d(*F(m).max_pool3d_with_indices(x, 2, return_indices=False), 2), X3))
    _same(_both(lambda m, x: F(m).adaptive_max_pool3d_with_indices(x, (3, None, 4)), X3))
    # the same programs (compiled once) through the other spellings and the modules
    _same(_both(lambda m, x: m.max_pool1d_with_indices(x, 3, 2, 1), X1))
    _same(_both(lambda m, x: F(m).max_pool3d_with_indices(x, 2), X3))
    _same(_both(lambda m, x: m.nn.AdaptiveMaxPool3d((3, None, 4), return_indices=True)(x), X3))
    _same(_both(lambda m, x: m.nn.MaxUnpool2d(2)(*m.nn.MaxPool2d(2, return_indices=True)(x)), X2))
    _same(_both(lambda m, x: m.nn.MaxUnpool1d(3, 2, 1)(*m.nn.MaxPool1d(3, 2, 1, return_indices=True)(x),
                                                         output_size=[2, 3, 8]), X1))
    _same(_both(lambda m, x: F(m).max_unpool2d(*F(m).max_pool2d(x, 2, return_indices=True), 2, output_size=(2, 3, 5, 7)),
                X2, grad=False))
    _same(_both(lambda m, x: m.adaptive_max_pool1d(x, 3), X1, grad=False))
    _same(_both(lambda m, x: F(m).adaptive_max_pool1d_with_indices(x, 3), X1, grad=False))
    _same(_both(lambda m, x: F(m).adaptive_max_pool2d_with_indices(x, (3, 4)), X2, grad=False))
    for ctor in (lambda n: n.AdaptiveMaxPool3d((2, None, 3)), lambda n: n.MaxUnpool1d(3, 2, 1),
                 lambda n: n.MaxUnpool2d(2), lambda n: n.MaxUnpool3d((2, 1, 2), padding=1)):
        assert repr(ctor(ft.nn)) == repr(ctor(torch.nn))


def test_unpool_duplicate_indices_gradient():
    # overlapping windows repeat indices: every occurrence gets the gradient at its index (PyTorch's)
    _same(_both(lambda m, v: F(m).max_unpool2d(v, m.tensor([[[[4, 4], [1, 4]]]]), 2),
                np.full((1, 1, 2, 2), 3.0, np.float32)))


def test_unpool_errors():
    v, i = (torch.tensor(a) for a in (np.ones((1, 2, 2, 2), np.float32), np.arange(8).reshape(1, 2, 2, 2)))
    fv, fi = ft.tensor(_np(v)), ft.tensor(i.numpy())
    cases = [
        lambda m, v, i: F(m).max_unpool2d(v, i.int(), 2),
        lambda m, v, i: F(m).max_unpool2d(v, i[:, :1], 2),
        lambda m, v, i: F(m).max_unpool2d(v[0, 0], i[0, 0], 2),
        lambda m, v, i: F(m).max_unpool2d(v, i, 2, output_size=(9, 9)),
        lambda m, v, i: F(m).max_unpool2d(v, i, 2, output_size=(1, 2, 3)),
        lambda m, v, i: F(m).max_unpool2d(v.long(), i, 2),
        lambda m, v, i: F(m).max_unpool2d(v[:, :1], i[:, :1] + 13, 2),  # (one bad index: PyTorch's threads race)
        lambda m, v, i: F(m).max_unpool1d(v[0, :1, 0], i[0, :1, 0] + 3, 2),
        lambda m, v, i: F(m).max_unpool3d(v, i.int(), 2),
        lambda m, v, i: F(m).max_unpool3d(v[0], i[0], 2),
        lambda m, v, i: F(m).max_unpool3d(v.unsqueeze(0), i.unsqueeze(0), 2, stride=0),
        lambda m, v, i: F(m).max_unpool3d(v.unsqueeze(0), i.unsqueeze(0)[..., :1], 2),
        lambda m, v, i: F(m).max_unpool3d(v.unsqueeze(0)[:, :1], i.unsqueeze(0)[:, :1] + 57, 2),
        lambda m, v, i: F(m).adaptive_max_pool3d(v, (2, 2)),
        lambda m, v, i: F(m).adaptive_max_pool3d(v[0], 2),
        lambda m, v, i: F(m).adaptive_max_pool3d(v.unsqueeze(0).long(), 2),
    ]
    for case in cases:
        _raises_like(lambda m: case(m, *((v, i) if m is torch else (fv, fi))))


# ---- RReLU ----------------------------------------------------------------------------------------------------------
def test_rrelu_eval_values_and_grad_fns():
    x = R.standard_normal((3, 5)).astype(np.float32)
    x[0, 0] = 0.0
    _same(_both(lambda m, x: F(m).rrelu(x), x))
    _same(_both(lambda m, x: m.rrelu(x, 0.1, 0.3), x))
    _same(_both(lambda m, x: m.nn.RReLU(0.2, 0.5).eval()(x), x))
    _same(_both(lambda m, x: F(m).rrelu(x * 1, 0.1, 0.3, inplace=True), x))  # RreluWithNoiseBackward1
    _same(_both(lambda m, x: m.rrelu_(x * 1, 0.1, 0.3), x))
    for ctor in (lambda n: n.RReLU(), lambda n: n.RReLU(0.1, 0.3, inplace=True)):
        assert repr(ctor(ft.nn)) == repr(ctor(torch.nn))
    _raises_like(lambda m: m.rrelu(m.ones(3), 0.5, 0.2))
    _raises_like(lambda m: F(m).rrelu(m.ones(3, dtype=m.float16), training=True))
    _raises_like(lambda m: F(m).rrelu(m.ones(3, dtype=m.int64)))


def test_rrelu_training_draws():
    lower, upper = 0.1, 0.3
    x = ft.tensor(R.standard_normal((64, 32)).astype(np.float32), requires_grad=True)
    ft.manual_seed(3)
    y = ft.nn.RReLU(lower, upper)(x)  # a module is in training mode
    assert y.grad_fn.name() == "RreluWithNoiseBackward0"
    xv, yv = _np(x), _np(y)
    neg = xv <= 0
    np.testing.assert_array_equal(yv[~neg], xv[~neg])  # the positive part is untouched
    slopes = yv[neg] / xv[neg]
    assert slopes.min() >= lower - 1e-6 and slopes.max() <= upper + 1e-6
    assert np.unique(np.round(slopes, 5)).size > 100  # one draw per element
    assert abs(slopes.mean() - (lower + upper) / 2) < 0.01
    y.sum().backward()
    g = x.grad.numpy()
    np.testing.assert_allclose(g[neg], slopes, rtol=1e-5)  # the gradient is the drawn slope
    np.testing.assert_array_equal(g[~neg], 1.0)
    ft.manual_seed(3)
    np.testing.assert_array_equal(_np(F(ft).rrelu(x, lower, upper, training=True)), yv)  # reproducible


# ---- small modules and aliases ----------------------------------------------------------------------------------------
def test_softmax2d_channel_shuffle_crossmap_lrn():
    _same(_both(lambda m, x: m.nn.Softmax2d()(x), X2))
    _same(_both(lambda m, x: m.nn.Softmax2d()(x[0]), X2, grad=False))
    _raises_like(lambda m: m.nn.Softmax2d()(m.ones(2, 3)))
    _same(_both(lambda m, x: F(m).channel_shuffle(x, 3), X2))
    _same(_both(lambda m, x: m.nn.ChannelShuffle(3)(x), X2))
    _same(_both(lambda m, x: m.native_channel_shuffle(x, 3), X2, grad=False))
    assert repr(ft.nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))
    for bad in (lambda m: F(m).channel_shuffle(m.ones(2, 6, 2), 4), lambda m: F(m).channel_shuffle(m.ones(2, 6), 2),
                lambda m: F(m).channel_shuffle(m.ones(2, 6, 2), 0),
                lambda m: m.native_channel_shuffle(m.ones(2, 6, 2, requires_grad=True), 2).sum().backward()):
        _raises_like(bad)
    x = R.standard_normal((2, 6, 2, 3))
    for size in (3, 4):  # (its windows, forward and backward, differ for odd and even sizes)
        _same(_both(lambda m, x: m.nn.CrossMapLRN2d(size, 0.1, 0.75, 1.5)(x), x), tol=1e-9)  # CrossMapLRN2dBackward
    assert repr(ft.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    _raises_like(lambda m: m.nn.CrossMapLRN2d(3)(m.ones(2, 3, 4)))


def test_upsample_aliases_and_dropout_functions():
    x = X2[:1, :2, :3, :3]
    for name, kw in (("upsample", dict(scale_factor=2, mode="bilinear")), ("upsample_nearest", dict(size=(5, 4))),
                     ("upsample_bilinear", dict(scale_factor=2))):
        msgs = {}
        for m in (torch, ft):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                out = getattr(F(m), name)(m.tensor(x), **kw)
            msgs[m] = ([str(e.message) for e in w], _np(out))
        assert msgs[ft][0] == msgs[torch][0]
        np.testing.assert_allclose(msgs[ft][1], msgs[torch][1], rtol=1e-6, atol=1e-6)
    # torch.* dropout family (ATen's ``train`` positional): identity when not training, PyTorch's masks' shapes
    t = ft.tensor(X2)
    for name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
        assert getattr(ft, name)(t, 0.5, False) is t
    z = ft.feature_dropout(ft.ones(4, 8, 3), 0.5, True).numpy()
    assert set(np.unique(z)) <= {0.0, 2.0} and (z == z[:, :, :1]).all()  # whole channels
    y = ft.ones(3, 4)
    assert ft.dropout_(y, 1.0, True) is y and not y.numpy().any()
    _raises_like(lambda m: m.feature_alpha_dropout(m.ones(3), 0.5, True))


# ---- nn.Buffer ---------------------------------------------------------------------------------------------------
def test_buffer_assignment_registers():
    def run(m):
        mod, out = m.nn.Module(), []
        mod.register_buffer("b", m.ones(1))
        for bad in (lambda: setattr(mod, "b", 3), lambda: (setattr(mod, "x", 1), setattr(mod, "x", m.nn.Buffer(mod.b))),
                    lambda: (mod.register_parameter("w", m.nn.Parameter(m.ones(1))),
                             setattr(mod, "w", m.nn.Buffer(m.ones(2))))):
            try:
                bad()
            except Exception as e:  # noqa: BLE001 - compared below
                out.append((type(e).__name__, str(e)))
        mod.y = m.nn.Buffer(m.ones(2), persistent=False)
        out.append((list(dict(mod.named_buffers())), list(mod.state_dict())))
        mod.b = m.nn.Buffer(m.zeros(2), persistent=False)
        mod.c = m.nn.Buffer(m.zeros(2))
        mod.c = m.ones(3)  # a plain tensor keeps the buffer's persistence
        out.append(list(mod.state_dict()))
        p = m.ones(2, requires_grad=True)
        bb = m.nn.Buffer(p)
        out.append((bb.requires_grad, bb is p, bb.persistent, isinstance(bb, m.nn.Buffer),
                    isinstance(p, m.nn.Buffer), type(bb).__name__, tuple(m.nn.Buffer().shape)))
        return out
    assert run(ft) == run(torch)


# ---- lazy modules -----------------------------------------------------------------------------------------------------
LAZY = [  # (lazy, eager, input shape, run forward (else initialize_parameters only: no class swap, no compile))
    (lambda n: n.LazyLinear(3), lambda n: n.Linear(5, 3), (4, 5), True),
    (lambda n: n.LazyConv1d(4, 3, padding=1), lambda n: n.Conv1d(2, 4, 3, padding=1), (2, 2, 6), False),
    (lambda n: n.LazyConv2d(4, 3, groups=2, bias=False), lambda n: n.Conv2d(2, 4, 3, groups=2, bias=False),
     (2, 5, 5), True),
    (lambda n: n.LazyConv3d(2, 2), lambda n: n.Conv3d(3, 2, 2), (1, 3, 2, 2, 3), False),
    (lambda n: n.LazyConvTranspose1d(4, 3, stride=2), lambda n: n.ConvTranspose1d(2, 4, 3, stride=2), (2, 2, 6),
     False),
    (lambda n: n.LazyConvTranspose2d(4, 3, groups=2), lambda n: n.ConvTranspose2d(2, 4, 3, groups=2), (1, 2, 3, 3),
     False),
    (lambda n: n.LazyConvTranspose3d(2, 2), lambda n: n.ConvTranspose3d(3, 2, 2), (1, 3, 2, 2, 2), False),
    (lambda n: n.LazyBatchNorm1d(), lambda n: n.BatchNorm1d(3), (4, 3), True),
    (lambda n: n.LazyBatchNorm2d(momentum=None), lambda n: n.BatchNorm2d(3, momentum=None), (4, 3, 2, 2), False),
    (lambda n: n.LazyBatchNorm3d(affine=False), lambda n: n.BatchNorm3d(3, affine=False), (2, 3, 2, 2, 2), False),
    (lambda n: n.LazyInstanceNorm1d(), lambda n: n.InstanceNorm1d(3, affine=True, track_running_stats=True),
     (2, 3, 5), False),
    (lambda n: n.LazyInstanceNorm2d(affine=False, track_running_stats=False), lambda n: n.InstanceNorm2d(3),
     (2, 3, 4, 4), False),
    (lambda n: n.LazyInstanceNorm3d(), lambda n: n.InstanceNorm3d(3, affine=True, track_running_stats=True),
     (2, 3, 2, 2, 2), False),
]


def _lazy_run(m, lazy, eager, shape, forward):
    """(repr before, repr after, class, output shape, has_uninitialized_params, whether the materialized state
    equals the eager module's under the same seed)."""
    x = m.tensor(R.standard_normal(shape).astype(np.float32))
    before = lazy(m.nn)
    m.manual_seed(0)
    mod = lazy(m.nn)
    out = mod(x).shape if forward else mod.initialize_parameters(x)
    m.manual_seed(0)
    ref = eager(m.nn)
    if forward:
        ref(x)  # (the same training step: running statistics move alike)
    same = list(mod.state_dict()) == list(ref.state_dict()) and all(
        np.allclose(_np(a), _np(b)) for a, b in zip(mod.state_dict().values(), ref.state_dict().values()))
    lazy_left = mod.has_uninitialized_params() if hasattr(mod, "has_uninitialized_params") else None
    return repr(before), repr(mod), type(mod).__name__, None if out is None else tuple(out), lazy_left, same


def test_lazy_modules_materialise_like_torch():
    for lazy, eager, shape, forward in LAZY:
        t, f = _lazy_run(torch, lazy, eager, shape, forward), _lazy_run(ft, lazy, eager, shape, forward)
        assert f == t and f[-1], (f, t)  # seeded: the lazy module's init equals the eager module's own


def test_lazy_mechanism():
    m = ft.nn.LazyConv2d(4, 3)
    w = m.weight
    assert isinstance(w, ft.nn.parameter.UninitializedParameter) and m.has_uninitialized_params()
    assert ft.nn.parameter.is_lazy(w) and repr(w) == "<UninitializedParameter>" and w.requires_grad
    assert repr(ft.nn.LazyBatchNorm1d().running_mean) == "<UninitializedBuffer>"
    assert [(k, repr(v)) for k, v in ft.nn.LazyBatchNorm1d().state_dict().items()] == \
        [(k, repr(v)) for k, v in torch.nn.LazyBatchNorm1d().state_dict().items()]
    _raises_like(lambda mm: mm.nn.LazyConv2d(4, 3).weight.shape)
    _raises_like(lambda mm: mm.nn.LazyConv2d(4, 3)(mm.ones(3, 4)))
    _raises_like(lambda mm: mm.nn.LazyConv2d(4, 3, groups=2)(mm.ones(1, 3, 4, 4)))
    _raises_like(lambda mm: mm.nn.LazyInstanceNorm1d()(mm.ones(3, 5)))  # PyTorch reads dim 1 of unbatched input
    c = copy.deepcopy(m)
    m = ft.nn.LazyLinear(3)
    w = m.weight
    m(ft.ones(4, 5))
    assert type(m) is ft.nn.Linear and m.weight is w and tuple(w.shape) == (3, 5) and type(w) is ft.nn.Parameter
    assert not hasattr(m, "_initialize_hook") and type(c) is ft.nn.LazyConv2d  # the copy is still lazy
    opt = ft.optim.SGD(m.parameters(), lr=0.1)  # an optimizer made after the dry run
    before = _np(w).copy()
    m(ft.ones(4, 5)).backward(ft.ones(4, 3))
    opt.step()
    np.testing.assert_allclose(_np(w), before - 0.1 * w.grad.numpy(), rtol=1e-6)
    d = ft.nn.LazyLinear(3).double()  # a dtype set before materialising is kept
    d.initialize_parameters(ft.ones(2, 4, dtype=ft.float64))
    assert d.weight.dtype == ft.float64 and d.in_features == 4
    for mod in (torch, ft):  # loading a state dict materialises nested lazy modules to the loaded shapes
        s = mod.nn.Sequential(mod.nn.LazyLinear(3), mod.nn.LazyBatchNorm1d())
        src = mod.nn.Sequential(mod.nn.Linear(5, 3), mod.nn.BatchNorm1d(3))
        assert str(s.load_state_dict(src.state_dict())) == "<All keys matched successfully>"
        assert type(s[0]).__name__ == "LazyLinear" and not s[0].has_uninitialized_params()
        np.testing.assert_array_equal(_np(s[0].weight), _np(src[0].weight))
        s(mod.ones(4, 5))
        assert (type(s[0]).__name__, s[0].in_features, type(s[1]).__name__) == ("Linear", 5, "BatchNorm1d")
