"""Normalisation, embedding and misc nn ops/modules against real PyTorch 2.13: forward values, gradients,
grad_fn names, running statistics (in place, momentum and cumulative), eval mode, state_dict, errors,
reprs and default initialisation."""
import re

import numpy as np
import pytest
import torch

import functorch_lite as ft

TF = torch.nn.functional
FF = ft.nn.functional
RNG = np.random.default_rng(3)


def rnd(*s):
    return RNG.standard_normal(s)


def _np(t):
    return t.detach().numpy()


def run_both(fn, arrays, dtype="float64", grad=True, tol=None):
    """Run ``fn(mod, F, *tensors)`` in torch and here; compare output, dtype, grads and grad_fn name."""
    outs = []
    for mod, F in ((torch, TF), (ft, FF)):
        dt = getattr(mod, dtype)
        ts = [mod.tensor(a, dtype=dt, requires_grad=grad) for a in arrays]
        y = fn(mod, F, *ts)
        if grad:
            w = mod.tensor(np.random.default_rng(0).standard_normal(tuple(y.shape)), dtype=y.dtype)
            (y * w).sum().backward()
        outs.append((y, ts))
    (ty, tts), (fy, fts) = outs
    tol = tol or (1e-10 if dtype == "float64" else 2e-5)
    assert str(fy.dtype) == str(ty.dtype) and tuple(fy.shape) == tuple(ty.shape)
    np.testing.assert_allclose(_np(fy), _np(ty), rtol=tol, atol=tol)
    if grad:
        assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__
        for a, b in zip(tts, fts):
            if a.grad is None:
                assert b.grad is None or not np.any(b.grad.numpy())
            else:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=tol, atol=tol)
    return ty, fy


def same_error(fn):
    """``fn(mod)`` raises the same exception type and message in torch and here."""
    with pytest.raises(Exception) as ti:
        fn(torch)
    with pytest.raises(type(ti.value), match=re.escape(str(ti.value))):
        fn(ft)


# ---- functional ops: values, gradients, grad_fn ------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_functional(dtype, training):
    def f(m, F, x, w, b):
        rm = m.tensor([0.2, -0.1, 0.4], dtype=x.dtype)
        rv = m.tensor([1.5, 0.7, 1.1], dtype=x.dtype)
        return F.batch_norm(x, rm, rv, w, b, training, 0.3, 1e-3)
    run_both(f, [rnd(5, 3, 4, 2), rnd(3), rnd(3)], dtype)


def test_batch_norm_no_affine_no_stats():
    run_both(lambda m, F, x: F.batch_norm(x, None, None, training=True), [rnd(6, 4)])


def test_batch_norm_updates_buffers_in_place():
    x = rnd(8, 3, 5)
    res = []
    for mod, F in ((torch, TF), (ft, FF)):
        rm, rv = mod.zeros(3), mod.ones(3)
        ids = (id(rm), id(rv))
        v0 = rm._version
        for k in range(3):
            F.batch_norm(mod.tensor(x * (k + 1), dtype=mod.float32), rm, rv, training=True, momentum=0.2)
        assert (id(rm), id(rv)) == ids and rm._version == v0
        res.append((rm.numpy(), rv.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)


def test_batch_norm_half_input_float_stats():
    x = rnd(6, 3)
    outs = []
    for mod, F in ((torch, TF), (ft, FF)):
        rm, rv = mod.zeros(3), mod.ones(3)
        y = F.batch_norm(mod.tensor(x).to(mod.bfloat16), rm, rv, training=True)
        outs.append((y, rm, rv))
    assert str(outs[1][0].dtype) == "torch.bfloat16" and str(outs[1][1].dtype) == "torch.float32"
    np.testing.assert_allclose(outs[1][0].float().numpy(), outs[0][0].float().numpy(), atol=5e-2)
    np.testing.assert_allclose(outs[1][2].numpy(), outs[0][2].numpy(), rtol=1e-2)


@pytest.mark.parametrize("dtype", ["float64"])  # float32: test_grad_sweep.py
def test_layer_norm(dtype):
    run_both(lambda m, F, x, w, b: F.layer_norm(x, (3, 4), w, b, 1e-4), [rnd(2, 5, 3, 4), rnd(3, 4), rnd(3, 4)],
             dtype)
    run_both(lambda m, F, x: F.layer_norm(x, [4]), [rnd(3, 4)], dtype)


@pytest.mark.parametrize("dtype", ["float64"])  # float32: test_grad_sweep.py
def test_group_norm(dtype):
    run_both(lambda m, F, x, w, b: F.group_norm(x, 3, w, b, 1e-3), [rnd(2, 6, 4, 3), rnd(6), rnd(6)], dtype)
    run_both(lambda m, F, x: F.group_norm(x, 1), [rnd(3, 4)], dtype)


@pytest.mark.parametrize("dtype", ["float64"])  # float32: test_grad_sweep.py
def test_rms_norm(dtype):
    run_both(lambda m, F, x, w: F.rms_norm(x, (2, 5), w), [rnd(3, 2, 5), rnd(2, 5)], dtype)
    run_both(lambda m, F, x: F.rms_norm(x, [5], eps=1e-3), [rnd(4, 5)], dtype)


def test_rms_norm_default_eps_half():
    x = rnd(3, 4) * 1e-4
    t = TF.rms_norm(torch.tensor(x).half(), (4,))
    f = FF.rms_norm(ft.tensor(x).half(), (4,))
    assert str(f.dtype) == "torch.float16"
    np.testing.assert_allclose(f.float().numpy(), t.float().numpy(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding(padding_idx):
    def f(m, F, w):
        return F.embedding(m.tensor([[1, 2, 2], [0, 4, 1]]), w, padding_idx=padding_idx)
    run_both(f, [rnd(5, 3)])


def test_embedding_scale_grad_by_freq_and_top_level():
    run_both(lambda m, F, w: F.embedding(m.tensor([3, 1, 3, 3]), w, scale_grad_by_freq=True), [rnd(4, 2)])
    run_both(lambda m, F, w: m.embedding(w, m.tensor([[0, 1]], dtype=m.int32)), [rnd(3, 2)])


def test_embedding_max_norm_renormalises_weight():
    w0 = rnd(5, 3) * 3
    res = []
    for mod, F in ((torch, TF), (ft, FF)):
        w = mod.tensor(w0, requires_grad=True)
        y = F.embedding(mod.tensor([0, 2, 2]), w, max_norm=1.5)
        y.sum().backward()
        res.append((_np(y), _np(w), w.grad.numpy(), type(y.grad_fn).__name__))
    for a, b in zip(res[1][:3], res[0][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert res[1][3] == res[0][3]


@pytest.mark.parametrize("dtype", ["float64"])  # float32: test_grad_sweep.py
def test_leaky_relu_and_bilinear(dtype):
    run_both(lambda m, F, x: F.leaky_relu(x, 0.3), [rnd(4, 5)], dtype)
    run_both(lambda m, F, x: F.leaky_relu(x * 1, inplace=True), [rnd(7)], dtype)
    run_both(lambda m, F, a, b, w, c: F.bilinear(a, b, w, c), [rnd(2, 3, 4), rnd(2, 3, 5), rnd(6, 4, 5), rnd(6)],
             dtype)
    run_both(lambda m, F, a, b, w: m.bilinear(a, b, w), [rnd(4), rnd(5), rnd(2, 4, 5)], dtype)


def test_leaky_relu_zero_gradient_is_slope():
    run_both(lambda m, F, x: F.leaky_relu(x, 0.25), [np.array([-1.0, 0.0, 2.0])])


def test_normalize_and_activations():
    run_both(lambda m, F, x: F.normalize(x, p=2.0, dim=-1) + F.normalize(x, p=1.0, dim=0), [rnd(3, 4)])
    run_both(lambda m, F, x: F.normalize(x, p=3.0) + F.normalize(x, p=float("inf")), [rnd(3, 4)])
    x = [np.array([-30.0, -2.0, -1.0, -0.3, 0.0, 0.5, 1.0, 5.9, 6.0, 7.0, 25.0])]
    for f in (lambda m, F, x: F.softplus(x), lambda m, F, x: F.softplus(x, beta=2.0, threshold=3.0),
              lambda m, F, x: F.elu(x), lambda m, F, x: F.elu(x, alpha=0.5), lambda m, F, x: F.hardtanh(x),
              lambda m, F, x: F.relu6(x), lambda m, F, x: F.softsign(x), lambda m, F, x: F.logsigmoid(x)):
        run_both(f, x)


def test_hardtanh_softsign_integer_inputs():
    for dt in ("int64", "int32"):
        x = np.array([-3, 0, 2, 7])
        for fn in (lambda m: m.nn.functional.hardtanh(m.tensor(x, dtype=getattr(m, dt)), -1.5, 1.2),
                   lambda m: m.nn.functional.relu6(m.tensor(x, dtype=getattr(m, dt))),
                   lambda m: m.nn.functional.softsign(m.tensor(x, dtype=getattr(m, dt)))):
            t, f = fn(torch), fn(ft)
            assert str(f.dtype) == str(t.dtype)
            np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-6)


def test_one_hot():
    cases = [(np.array([[1, 3], [0, 2]]), -1), (np.array([1, 0]), 5), (np.zeros((0,), np.int64), 3)]
    for arr, nc in cases:
        t = TF.one_hot(torch.tensor(arr, dtype=torch.int64), nc)
        f = FF.one_hot(ft.tensor(arr, dtype=ft.int64), nc)
        assert str(f.dtype) == str(t.dtype) == "torch.int64" and tuple(f.shape) == tuple(t.shape)
        np.testing.assert_array_equal(f.numpy(), t.numpy())


def _t(m, *shape):
    """A float32 tensor of normal values (built from numpy: no per-shape RNG compile)."""
    return m.tensor(RNG.standard_normal(shape), dtype=m.float32)


# ---- errors -------------------------------------------------------------------------------------------
ERRORS = {
    "one_hot_big": lambda m: m.nn.functional.one_hot(m.tensor([1, 5]), 3),
    "one_hot_float": lambda m: m.nn.functional.one_hot(m.tensor([1.0, 2.0])),
    "one_hot_int32": lambda m: m.nn.functional.one_hot(m.tensor([1, 2], dtype=m.int32)),
    "one_hot_neg": lambda m: m.nn.functional.one_hot(m.tensor([-1, 2])),
    "one_hot_empty": lambda m: m.nn.functional.one_hot(m.tensor([], dtype=m.int64)),
    "bn_one_value": lambda m: m.nn.functional.batch_norm(_t(m, 1, 3), m.zeros(3), m.ones(3), training=True),
    "bn_one_value3d": lambda m: m.nn.functional.batch_norm(_t(m, 1, 3, 1), None, None, training=True),
    "bn_stats_size": lambda m: m.nn.functional.batch_norm(_t(m, 2, 4), m.zeros(3), m.ones(3)),
    "bn_weight_size": lambda m: m.nn.functional.batch_norm(_t(m, 2, 4), m.zeros(4), m.ones(4), m.ones(3)),
    "bn_eps": lambda m: m.nn.functional.batch_norm(_t(m, 2, 4), m.zeros(4), m.ones(4), eps=-1.0),
    "bn_eps_train": lambda m: m.nn.functional.batch_norm(_t(m, 2, 4), None, None, training=True, eps=0.0),
    "bn_mixed_f32_f64": lambda m: m.nn.functional.batch_norm(m.ones(2, 3), m.zeros(3, dtype=m.float64), m.ones(3)),
    "bn_momentum_none": lambda m: m.nn.functional.batch_norm(_t(m, 2, 3), m.zeros(3), m.ones(3), training=True,
                                                             momentum=None),
    "bn_eval_no_stats": lambda m: m.nn.functional.batch_norm(_t(m, 2, 4), None, None),
    "bn_long": lambda m: m.nn.functional.batch_norm(m.ones(2, 3, dtype=m.int64), None, None, training=True),
    "bn1d_4d": lambda m: m.nn.BatchNorm1d(3)(_t(m, 2, 3, 4, 5)),
    "bn2d_3d": lambda m: m.nn.BatchNorm2d(3)(_t(m, 2, 3, 4)),
    "bn1d_one": lambda m: m.nn.BatchNorm1d(3)(_t(m, 1, 3)),
    "ln_shape": lambda m: m.nn.functional.layer_norm(_t(m, 4, 3, 5), (4,)),
    "ln_shape2": lambda m: m.nn.functional.layer_norm(_t(m, 4, 5), (3, 5)),
    "ln_weight": lambda m: m.nn.functional.layer_norm(_t(m, 4, 5), (5,), m.ones(4)),
    "ln_bias": lambda m: m.nn.functional.layer_norm(_t(m, 4, 5), (5,), None, m.ones(4)),
    "ln_long": lambda m: m.nn.functional.layer_norm(m.ones(2, 3, dtype=m.int64), (3,)),
    "gn_groups": lambda m: m.nn.functional.group_norm(_t(m, 4, 3, 5), 2),
    "gn_dim": lambda m: m.nn.functional.group_norm(_t(m, 3), 1),
    "gn_one": lambda m: m.nn.functional.group_norm(_t(m, 1, 4), 4),
    "gn_weight": lambda m: m.nn.functional.group_norm(_t(m, 2, 4), 2, m.ones(3)),
    "gn_bias": lambda m: m.nn.functional.group_norm(_t(m, 2, 4), 2, None, m.ones(3)),
    "gn_module": lambda m: m.nn.GroupNorm(2, 3),
    "rms_shape": lambda m: m.nn.functional.rms_norm(_t(m, 4, 3, 5), (4,)),
    "rms_int_shape": lambda m: m.nn.functional.rms_norm(m.ones(4, 5), 5),
    "ln_int_shape": lambda m: m.nn.functional.layer_norm(m.ones(4, 5), 5),
    "ln_mixed": lambda m: m.nn.functional.layer_norm(m.ones(2, 3, dtype=m.float64), (3,), m.ones(3)),
    "ln_mixed2": lambda m: m.nn.functional.layer_norm(m.ones(2, 3), (3,), None, m.ones(3, dtype=m.float64)),
    "bn_mixed": lambda m: m.nn.functional.batch_norm(m.ones(2, 3, dtype=m.float64), m.zeros(3), m.ones(3)),
    "gn_mixed": lambda m: m.nn.functional.group_norm(m.ones(2, 4), 2, m.ones(4, dtype=m.float16)),
    "rms_weight": lambda m: m.nn.functional.rms_norm(_t(m, 4, 5), (5,), m.ones(4)),
    "emb_float_idx": lambda m: m.nn.functional.embedding(m.tensor([1.0, 2.0]), _t(m, 10, 3)),
    "emb_range": lambda m: m.nn.functional.embedding(m.tensor([11]), _t(m, 10, 3)),
    "emb_negative": lambda m: m.nn.functional.embedding(m.tensor([-1]), _t(m, 10, 3)),
    "emb_pad": lambda m: m.nn.functional.embedding(m.tensor([1]), _t(m, 10, 3), padding_idx=10),
    "emb_pad_neg": lambda m: m.nn.functional.embedding(m.tensor([1]), _t(m, 10, 3), padding_idx=-11),
    "emb_module_pad": lambda m: m.nn.Embedding(10, 3, padding_idx=10),
    "emb_pretrained_dim": lambda m: m.nn.Embedding.from_pretrained(_t(m, 3)),
    "leaky_long": lambda m: m.nn.functional.leaky_relu(m.tensor([1, 2])),
    "bil_in1": lambda m: m.nn.functional.bilinear(_t(m, 4, 5), _t(m, 4, 5), _t(m, 2, 4, 5)),
    "bil_in2": lambda m: m.nn.functional.bilinear(_t(m, 4, 5), _t(m, 4, 4), _t(m, 2, 5, 5)),
    "bil_batch": lambda m: m.nn.functional.bilinear(_t(m, 4, 5), _t(m, 3, 5), _t(m, 2, 5, 5)),
    "bil_dims": lambda m: m.nn.functional.bilinear(_t(m, 4, 5), _t(m, 5), _t(m, 2, 5, 5)),
    "bil_bias": lambda m: m.nn.functional.bilinear(_t(m, 4, 5), _t(m, 4, 5), _t(m, 2, 5, 5), _t(m, 3)),
    "hardtanh_bool": lambda m: m.nn.functional.hardtanh(m.tensor([True])),
    "hardtanh_uint8": lambda m: m.nn.functional.hardtanh(m.tensor([1], dtype=m.uint8)),
    "softsign_bool": lambda m: m.nn.functional.softsign(m.tensor([True])),
    "unflatten_type": lambda m: m.nn.Unflatten(1, 6),
    "unflatten_elem": lambda m: m.nn.Unflatten(1, (2, 3.0)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    same_error(ERRORS[name])


# ---- modules: running statistics, eval, state_dict -------------------------------------------------
def _copy_params(theirs, ours):
    with ft.no_grad():
        for (n, p), (n2, q) in zip(theirs.named_parameters(), ours.named_parameters()):
            assert n == n2
            q.copy_(ft.tensor(p.detach().numpy()))


@pytest.mark.parametrize("cls,shape,momentum", [
    ("BatchNorm1d", (6, 4), 0.1), ("BatchNorm1d", (5, 4, 3), None),
    ("BatchNorm2d", (3, 4, 2, 3), 0.5), ("BatchNorm2d", (3, 4, 2, 3), None)])
def test_batchnorm_module_training_eval_state_dict(cls, shape, momentum):
    t = getattr(torch.nn, cls)(4, momentum=momentum)
    f = getattr(ft.nn, cls)(4, momentum=momentum)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(rnd(4)))
        t.bias.copy_(torch.tensor(rnd(4)))
    _copy_params(t, f)
    for step in range(4):
        x = rnd(*shape) * (step + 1) + step
        tx, fx = torch.tensor(x, dtype=torch.float32, requires_grad=True), ft.tensor(x, dtype=ft.float32,
                                                                                     requires_grad=True)
        ty, fy = t(tx), f(fx)
        np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-4, atol=1e-4)
        (ty * ty).sum().backward()
        (fy * fy).sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(f.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(f.bias.grad.numpy(), t.bias.grad.numpy(), rtol=1e-4, atol=1e-3)
    ts, fs = t.state_dict(), f.state_dict()
    assert list(fs) == list(ts) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    for k in ts:
        assert str(fs[k].dtype) == str(ts[k].dtype)
        np.testing.assert_allclose(fs[k].numpy(), ts[k].numpy(), rtol=1e-5, atol=1e-5)
    t.eval(), f.eval()
    x = rnd(*shape)
    ty, fy = t(torch.tensor(x, dtype=torch.float32)), f(ft.tensor(x, dtype=ft.float32))
    np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-5, atol=1e-5)
    assert int(f.num_batches_tracked) == 4


@pytest.mark.parametrize("kw", [dict(affine=False), dict(track_running_stats=False), dict(bias=False),
                                dict(affine=False, track_running_stats=False, momentum=None)])
def test_batchnorm_module_options(kw):
    t, f = torch.nn.BatchNorm1d(3, **kw), ft.nn.BatchNorm1d(3, **kw)
    assert repr(f) == repr(t)
    assert list(f.state_dict()) == list(t.state_dict())
    for mode in ("train", "eval"):
        getattr(t, mode)(), getattr(f, mode)()
        x = rnd(5, 3)
        np.testing.assert_allclose(_np(f(ft.tensor(x, dtype=ft.float32))),
                                   _np(t(torch.tensor(x, dtype=torch.float32))), rtol=1e-5, atol=1e-5)
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(f.state_dict()[k].numpy(), v.numpy(), rtol=1e-6, atol=1e-6)


def test_batchnorm_load_state_dict_and_reset():
    t, f = torch.nn.BatchNorm2d(2), ft.nn.BatchNorm2d(2)
    t(torch.tensor(rnd(3, 2, 2, 2), dtype=torch.float32))
    f.load_state_dict({k: ft.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert str(f.num_batches_tracked.dtype) == "torch.int64" and int(f.num_batches_tracked) == 1
    np.testing.assert_allclose(f.running_var.numpy(), t.running_var.numpy())
    f.reset_running_stats()
    np.testing.assert_array_equal(f.running_mean.numpy(), np.zeros(2, np.float32))
    np.testing.assert_array_equal(f.running_var.numpy(), np.ones(2, np.float32))
    assert int(f.num_batches_tracked) == 0


def test_norm_modules_match_torch():
    x = rnd(2, 6, 3, 4)
    pairs = [(torch.nn.LayerNorm((3, 4)), ft.nn.LayerNorm((3, 4))),
             (torch.nn.LayerNorm(4, elementwise_affine=False), ft.nn.LayerNorm(4, elementwise_affine=False)),
             (torch.nn.LayerNorm(4, bias=False), ft.nn.LayerNorm(4, bias=False)),
             (torch.nn.GroupNorm(3, 6), ft.nn.GroupNorm(3, 6)),
             (torch.nn.GroupNorm(2, 6, affine=False), ft.nn.GroupNorm(2, 6, affine=False)),
             (torch.nn.RMSNorm([3, 4]), ft.nn.RMSNorm([3, 4])),
             (torch.nn.RMSNorm(4, eps=1e-3, elementwise_affine=False), ft.nn.RMSNorm(4, 1e-3, False))]
    for t, f in pairs:
        assert repr(f) == repr(t)
        assert list(f.state_dict()) == list(t.state_dict())
        for k, v in t.state_dict().items():
            np.testing.assert_array_equal(f.state_dict()[k].numpy(), v.numpy())  # ones / zeros init
        if not list(t.parameters()) or getattr(t, "bias", 0) is None:
            continue  # forward/backward of these variants: the functional tests above
        with torch.no_grad():
            for p in t.parameters():
                p.copy_(torch.tensor(rnd(*p.shape)))
        _copy_params(t, f)
        t.double(), f.double()
        tx, fx = torch.tensor(x, requires_grad=True), ft.tensor(x, requires_grad=True)
        ty, fy = t(tx), f(fx)
        np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-5, atol=1e-5)
        ty.pow(2).sum().backward()
        fy.pow(2).sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
        for p, q in zip(t.parameters(), f.parameters()):
            np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_reprs():
    pairs = [lambda m: m.nn.BatchNorm2d(8), lambda m: m.nn.BatchNorm1d(8, 1e-3, None, False, False),
             lambda m: m.nn.Embedding(400, 50), lambda m: m.nn.Embedding(400, 50, padding_idx=-2, max_norm=1.0,
                                                                         norm_type=1.0, scale_grad_by_freq=True),
             lambda m: m.nn.LeakyReLU(), lambda m: m.nn.LeakyReLU(0.2, True), lambda m: m.nn.Bilinear(16, 3, 40),
             lambda m: m.nn.Bilinear(16, 3, 40, bias=False), lambda m: m.nn.Unflatten(1, (2, 3)),
             lambda m: m.nn.Unflatten(-1, [2, 3]), lambda m: m.nn.GroupNorm(2, 4, bias=False)]
    for make in pairs:
        assert repr(make(ft)) == repr(make(torch))


# ---- Embedding, Bilinear, LeakyReLU, Unflatten modules -----------------------------------------------
def test_embedding_module_init_padding_and_grad():
    ft.manual_seed(0)
    e = ft.nn.Embedding(400, 50, padding_idx=-3)
    assert e.padding_idx == 397
    w = e.weight.detach().numpy()
    assert np.all(w[397] == 0)
    rest = np.delete(w, 397, axis=0)
    assert abs(rest.mean()) < 0.02 and abs(rest.std() - 1.0) < 0.02
    idx = ft.tensor([[397, 1, 397], [2, 1, 0]])
    y = e(idx)
    assert type(y.grad_fn).__name__ == "EmbeddingBackward0" and tuple(y.shape) == (2, 3, 50)
    y.sum().backward()
    g = e.weight.grad.numpy()
    assert np.all(g[397] == 0) and np.all(g[1] == 2) and np.all(g[0] == 1) and np.all(g[3] == 0)


def test_embedding_from_pretrained():
    w = rnd(4, 3)
    for freeze in (True, False):
        t = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=freeze, padding_idx=1)
        f = ft.nn.Embedding.from_pretrained(ft.tensor(w), freeze=freeze, padding_idx=1)
        assert f.weight.requires_grad == t.weight.requires_grad == (not freeze)
        assert repr(f) == repr(t)
        i = [[1, 3], [0, 1]]
        np.testing.assert_array_equal(_np(f(ft.tensor(i))), _np(t(torch.tensor(i))))


def test_bilinear_module_init_and_parity():
    ft.manual_seed(1)
    b = ft.nn.Bilinear(16, 3, 40)
    bound = 1 / np.sqrt(16)
    for p in (b.weight, b.bias):
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound and a.max() - a.min() > 1.5 * bound
    assert tuple(b.weight.shape) == (40, 16, 3)
    t = torch.nn.Bilinear(16, 3, 40)
    _copy_params(t, b)
    x1, x2 = rnd(5, 16), rnd(5, 3)
    np.testing.assert_allclose(_np(b(ft.tensor(x1, dtype=ft.float32), ft.tensor(x2, dtype=ft.float32))),
                               _np(t(torch.tensor(x1, dtype=torch.float32), torch.tensor(x2, dtype=torch.float32))),
                               rtol=1e-4, atol=1e-5)


def test_leaky_relu_and_unflatten_modules():
    x = rnd(2, 6)
    t = torch.nn.Sequential(torch.nn.LeakyReLU(0.2), torch.nn.Unflatten(1, (2, 3)))
    f = ft.nn.Sequential(ft.nn.LeakyReLU(0.2), ft.nn.Unflatten(1, (2, 3)))
    ty, fy = t(torch.tensor(x)), f(ft.tensor(x))
    assert tuple(fy.shape) == tuple(ty.shape) == (2, 2, 3)
    np.testing.assert_allclose(fy.numpy(), ty.numpy())
    fx = ft.tensor(x)
    r = ft.nn.LeakyReLU(0.1, inplace=True)(fx)
    assert r is fx
    np.testing.assert_allclose(fx.numpy(), np.where(x > 0, x, 0.1 * x))


def test_batchnorm_cumulative_average_does_not_recompile():
    from functorch_lite.ops._registry import OPS
    bn = ft.nn.BatchNorm1d(3, momentum=None)
    bn(_t(ft, 4, 3))
    n = len(OPS["_batch_norm"].cache)
    for _ in range(3):
        bn(_t(ft, 4, 3))
    assert len(OPS["_batch_norm"].cache) == n and int(bn.num_batches_tracked) == 4
