"""nn.init against torch.nn.init: gains and fans exactly, deterministic initialisers value for value, random
ones by bounds and statistics (the RNGs differ), errors with PyTorch's messages; Tensor.uniform_/normal_/
bernoulli_."""
import math
import re

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.nn import init


@pytest.mark.parametrize("nl,param", [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                                      ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
                                      ("leaky_relu", math.sqrt(5)), ("selu", None)])
def test_calculate_gain(nl, param):
    assert init.calculate_gain(nl, param) == pytest.approx(torch.nn.init.calculate_gain(nl, param), rel=1e-15)


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.nn.init.calculate_gain("foo"), ValueError),
    (lambda m: m.nn.init.calculate_gain("leaky_relu", True), ValueError),
    (lambda m: m.nn.init.xavier_uniform_(m.empty(3)), ValueError),
    (lambda m: m.nn.init.kaiming_uniform_(m.empty(3, 4), mode="fan_x"), ValueError),
    (lambda m: m.nn.init.eye_(m.empty(2, 3, 4)), ValueError),
    (lambda m: m.nn.init.dirac_(m.empty(2, 3)), ValueError),
    (lambda m: m.nn.init.orthogonal_(m.empty(3)), ValueError),
])
def test_errors_match_torch(call, exc):
    with pytest.raises(exc) as theirs:
        call(torch)
    with pytest.raises(exc, match=re.escape(str(theirs.value))):
        call(ft)


@pytest.mark.parametrize("shape", [(5, 3), (8, 4, 3, 3), (6, 2, 5)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(ft.empty(shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


@pytest.mark.parametrize("name,args", [("eye_", ()), ("ones_", ()), ("zeros_", ()), ("constant_", (0.25,))])
def test_deterministic_2d(name, args):
    ours, theirs = ft.empty(3, 5), torch.empty(3, 5)
    getattr(init, name)(ours, *args)
    getattr(torch.nn.init, name)(theirs, *args)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("shape,groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((4, 2, 3, 3, 3), 2)])
def test_dirac(shape, groups):
    ours, theirs = ft.empty(shape), torch.empty(shape)
    init.dirac_(ours, groups)
    torch.nn.init.dirac_(theirs, groups)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _bound_and_std(fn, shape, *args, **kw):
    ft.manual_seed(0)
    t = ft.empty(shape)
    out = fn(t, *args, **kw)
    assert out is t
    return t.numpy()


@pytest.mark.parametrize("shape", [(256, 128), (64, 32, 3, 3)])
def test_kaiming_uniform_default_linear_bound(shape):
    """a=sqrt(5) (nn.Linear/Conv default) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    v = _bound_and_std(init.kaiming_uniform_, shape, a=math.sqrt(5))
    fan_in = int(np.prod(shape[1:]))
    bound = 1 / math.sqrt(fan_in)
    assert v.min() >= -bound and v.max() <= bound
    assert v.max() > 0.98 * bound and v.min() < -0.98 * bound
    assert np.std(v) == pytest.approx(bound / math.sqrt(3), rel=0.03)


@pytest.mark.parametrize("fn,mode,expect_std", [
    (init.kaiming_normal_, "fan_in", math.sqrt(2) / math.sqrt(128)),
    (init.kaiming_normal_, "fan_out", math.sqrt(2) / math.sqrt(256)),
    (init.xavier_normal_, None, math.sqrt(2 / (128 + 256))),
    (init.xavier_uniform_, None, math.sqrt(2 / (128 + 256))),
    (init.kaiming_uniform_, "fan_in", math.sqrt(2) / math.sqrt(128)),
])
def test_random_init_statistics(fn, mode, expect_std):
    kw = {"mode": mode, "nonlinearity": "relu"} if mode else {}
    v = _bound_and_std(fn, (256, 128), **kw)
    assert np.std(v) == pytest.approx(expect_std, rel=0.03)
    assert abs(np.mean(v)) < 0.05 * expect_std * 4
    if fn is init.xavier_uniform_:
        a = math.sqrt(3) * expect_std
        assert v.min() >= -a and v.max() <= a


def test_trunc_normal_bounds_and_std():
    v = _bound_and_std(init.trunc_normal_, (200, 200), std=0.02, a=-0.04, b=0.04)
    assert v.min() >= -0.04 and v.max() <= 0.04
    theirs = torch.nn.init.trunc_normal_(torch.empty(200, 200), std=0.02, a=-0.04, b=0.04).numpy()
    assert np.std(v) == pytest.approx(np.std(theirs), rel=0.03)


@pytest.mark.parametrize("shape,gain", [((6, 10), 1.0), ((10, 6), 2.0), ((8, 2, 3), 1.0)])
def test_orthogonal(shape, gain):
    v = _bound_and_std(init.orthogonal_, shape, gain=gain).reshape(shape[0], -1)
    small = v @ v.T if v.shape[0] <= v.shape[1] else v.T @ v
    np.testing.assert_allclose(small, gain ** 2 * np.eye(small.shape[0]), atol=1e-5)


def test_sparse_zero_count_per_column():
    v = _bound_and_std(init.sparse_, (10, 7), 0.3)
    assert ((v == 0).sum(axis=0) == 3).all()


def test_reproducible_under_manual_seed_and_generator():
    a, b = _bound_and_std(init.normal_, (4, 4)), _bound_and_std(init.normal_, (4, 4))
    np.testing.assert_array_equal(a, b)
    g1, g2 = ft.Generator().manual_seed(3), ft.Generator().manual_seed(3)
    np.testing.assert_array_equal(init.uniform_(ft.empty(5), generator=g1).numpy(),
                                  init.uniform_(ft.empty(5), generator=g2).numpy())


def test_init_on_parameter_keeps_identity_and_grad_flag():
    p = ft.nn.Parameter(ft.zeros(3, 4))
    out = init.xavier_uniform_(p)
    assert out is p and p.requires_grad and isinstance(p, ft.nn.Parameter)
    assert p.grad_fn is None and p.is_leaf
    assert np.abs(p.detach().numpy()).max() > 0


def test_zero_element_kaiming_warns_and_is_noop():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(ft.empty(0, 3))
