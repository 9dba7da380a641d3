"""Convolution, pooling, padding and interpolation (F ops and nn modules) against real PyTorch 2.13:
forward values, dtype, shape and grad_fn name, gradients of every input, errors with their messages,
module reprs, default-init bounds, state_dict keys and a small CNN trained one step."""
import math
import re

import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(2024)


def _arr(*s):
    return RNG.standard_normal(s)


def _check(fn, arrays, dtype="float32", grad=True):
    """Run ``fn(module, *tensors)`` in torch and here; compare values, dtype, shape, grad_fn and gradients."""
    tol = 1e-10 if dtype == "float64" else 2e-5

    def run(mod):
        dt = getattr(mod, dtype)
        xs = [mod.tensor(a, dtype=dt, requires_grad=grad) for a in arrays]
        out = fn(mod, *xs)
        if isinstance(out, tuple):
            out = out[0]
        if grad:
            w = mod.tensor(np.random.default_rng(5).standard_normal(tuple(out.shape)), dtype=out.dtype)
            (out * w).sum().backward()
        return out, [x.grad for x in xs]
    t_out, t_g = run(torch)
    f_out, f_g = run(ft)
    assert str(f_out.dtype) == str(t_out.dtype)
    assert tuple(f_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(f_out.detach().numpy(), t_out.detach().numpy(), rtol=tol, atol=tol)
    if grad:
        assert type(f_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
        for tg, fg in zip(t_g, f_g):
            np.testing.assert_allclose(fg.numpy(), tg.numpy(), rtol=tol, atol=tol)


def _dt(i):
    """Alternate float32 / float64 over a grid (each config once, both dtypes covered)."""
    return "float64" if i % 2 else "float32"


def _same_error(fn):
    """``fn(module)`` raises in torch; we raise the same exception type with the same message."""
    with pytest.raises(Exception) as t_err:
        fn(torch)
    msg = str(t_err.value)
    with pytest.raises(type(t_err.value), match="^" + re.escape(msg) + "$"):
        fn(ft)


def F(m):
    return m.nn.functional


def _r(m, *shape, dtype=None):
    """A float32 (or ``dtype``) tensor of normal draws built from numpy (no per-shape RNG kernel compile)."""
    t = m.tensor(RNG.standard_normal(shape).astype(np.float32))
    return t if dtype is None else t.to(dtype)


# ---- convolution ------------------------------------------------------------------------------------------
CONV2D = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(0, 2), dilation=(2, 1)),
    dict(padding="same"),
    dict(padding="same", dilation=2),
    dict(padding="valid", stride=3),
    dict(groups=3),
    dict(groups=3, stride=2, padding=1, dilation=2),
]


@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel lengths")
@pytest.mark.parametrize("i", range(2 * len(CONV2D)))
def test_conv2d(i):
    kw, bias, dtype = CONV2D[i // 2], bool(i % 2), _dt(i // 2)
    g = kw.get("groups", 1)
    arrays = [_arr(2, 3, 9, 8), _arr(6, 3 // g, 3, 2)] + ([_arr(6)] if bias else [])
    _check(lambda m, x, w, *b: F(m).conv2d(x, w, *b, **kw), arrays, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_unbatched_and_even_same(dtype):
    _check(lambda m, x, w, b: F(m).conv2d(x, w, b, padding=1), [_arr(3, 6, 5), _arr(4, 3, 3, 3), _arr(4)], dtype)
    with pytest.warns(UserWarning, match="even kernel lengths"):
        _check(lambda m, x, w: F(m).conv2d(x, w, padding="same"), [_arr(1, 2, 6, 5), _arr(3, 2, 2, 4)], dtype)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=2, dilation=2), dict(padding="same", groups=2),
                                dict(padding="valid")], ids=str)
def test_conv1d(kw):
    g = kw.get("groups", 1)
    _check(lambda m, x, w, b: F(m).conv1d(x, w, b, **kw), [_arr(2, 4, 11), _arr(6, 4 // g, 3), _arr(6)], "float64")
    _check(lambda m, x, w: F(m).conv1d(x, w, **kw), [_arr(4, 11), _arr(6, 4 // g, 3)], "float32")


CONVT = [dict(), dict(stride=2), dict(stride=2, padding=1, output_padding=1), dict(stride=3, output_padding=2),
         dict(groups=2, dilation=2, padding=2), dict(stride=(2, 3), padding=(1, 0), output_padding=(0, 1), groups=2)]


@pytest.mark.parametrize("i", range(len(CONVT)))
def test_conv_transpose2d(i):
    kw, dtype = CONVT[i], _dt(i)
    g = kw.get("groups", 1)
    _check(lambda m, x, w, b: F(m).conv_transpose2d(x, w, b, **kw), [_arr(2, 4, 5, 4), _arr(4, 6 // g, 3, 2),
                                                                       _arr(6)], dtype)


def test_conv_strided_dilated_gradients():
    """Configurations whose gradients abort XLA's CPU compiler when built the direct way (lhs dilation with a
    dilated kernel): the ops route around it, values and gradients still match."""
    _check(lambda m, x, w: F(m).conv2d(x, w, stride=2, padding=1, dilation=(1, 2), groups=2),
           [_arr(2, 2, 4, 8), _arr(2, 1, 2, 4)], "float64")
    _check(lambda m, x, w: F(m).conv_transpose2d(x, w, stride=2, padding=(3, 2), dilation=(1, 2), groups=2),
           [_arr(2, 2, 3, 5), _arr(2, 1, 4, 2)], "float64")


def test_conv_transpose2d_unbatched_and_no_bias():
    _check(lambda m, x, w: F(m).conv_transpose2d(x, w, stride=2), [_arr(4, 3, 3), _arr(4, 2, 3, 3)])


CONV_ERRORS = [
    lambda m: F(m).conv2d(_r(m, 2, 4, 6, 6), _r(m, 4, 3, 3, 3)),
    lambda m: F(m).conv2d(_r(m, 4, 6, 6), _r(m, 4, 3, 3, 3)),
    lambda m: F(m).conv2d(_r(m, 2, 4, 6, 6), _r(m, 4, 2, 3, 3), groups=3),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), groups=0),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), padding="same", stride=2),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), padding="foo"),
    lambda m: F(m).conv2d(_r(m, 1, 3, 2, 2), _r(m, 4, 3, 3, 3)),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3)),
    lambda m: F(m).conv2d(_r(m, 3, 6), _r(m, 4, 3, 3, 3)),
    lambda m: F(m).conv2d(_r(m, 1, 1, 3, 6, 6), _r(m, 4, 3, 3, 3)),
    lambda m: F(m).conv1d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3)),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), _r(m, 3)),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), stride=0),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), padding=-1),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), dilation=0),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), stride=(1, 1, 1)),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3, dtype=m.float64)),
    lambda m: F(m).conv2d(_r(m, 2, 3, 6, 6), _r(m, 4, 3, 3, 3), _r(m, 4, dtype=m.float64)),
    lambda m: F(m).conv2d(m.ones(1, 3, 6, 6, dtype=m.bool), m.ones(4, 3, 3, 3, dtype=m.bool)),
    lambda m: F(m).conv_transpose2d(_r(m, 2, 4, 5, 5), _r(m, 3, 4, 3, 3)),
    lambda m: F(m).conv_transpose2d(_r(m, 2, 3, 5, 5), _r(m, 3, 4, 3, 3), output_padding=1),
    lambda m: F(m).conv_transpose2d(_r(m, 2, 3, 5, 5), _r(m, 3, 2, 3, 3), groups=2),
    lambda m: F(m).conv_transpose2d(_r(m, 2, 3, 5, 5), _r(m, 3, 4, 3, 3), _r(m, 3)),
    lambda m: F(m).conv_transpose2d(_r(m, 2, 3, 5, 5), _r(m, 3, 4, 3, 3), padding="same"),
    lambda m: F(m).conv_transpose2d(_r(m, 1, 3, 3, 3), _r(m, 3, 2, 4, 1), stride=(3, 2), padding=(2, 3),
                                    output_padding=(2, 1), dilation=2),
]


@pytest.mark.parametrize("i", range(len(CONV_ERRORS)))
def test_conv_errors(i):
    _same_error(CONV_ERRORS[i])


def test_conv_integer_and_half_dtypes():
    x, w = np.round(_arr(2, 3, 6, 6) * 3), np.round(_arr(4, 3, 3, 3) * 3)
    for dt in ("int64", "float16", "bfloat16"):
        t = F(torch).conv2d(torch.tensor(x).to(getattr(torch, dt)), torch.tensor(w).to(getattr(torch, dt)))
        o = F(ft).conv2d(ft.tensor(x).to(getattr(ft, dt)), ft.tensor(w).to(getattr(ft, dt)))
        assert str(o.dtype) == str(t.dtype)
        np.testing.assert_allclose(o.float().numpy(), t.float().numpy(), rtol=1e-2, atol=1e-2)


# ---- pooling ----------------------------------------------------------------------------------------------
MAXPOOL = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=(3, 2), stride=(1, 2)),
           dict(kernel_size=3, stride=2, ceil_mode=True), dict(kernel_size=2, dilation=2, padding=1, ceil_mode=True),
           dict(kernel_size=(2, 3), stride=3, padding=(1, 1), dilation=(3, 1), ceil_mode=True)]


@pytest.mark.parametrize("i", range(len(MAXPOOL)))
def test_max_pool2d(i):
    kw, dtype = MAXPOOL[i], _dt(i)
    if i % 2:  # the values of the with-indices op (and its gradient), unbatched input
        _check(lambda m, x: F(m).max_pool2d(x, **kw, return_indices=True), [_arr(3, 9, 8)], dtype)
    else:
        _check(lambda m, x: F(m).max_pool2d(x, **kw), [_arr(2, 3, 9, 8)], dtype)
    x = _arr(2, 3, 9, 8)
    t_v, t_i = F(torch).max_pool2d(torch.tensor(x), **kw, return_indices=True)
    f_v, f_i = F(ft).max_pool2d(ft.tensor(x), **kw, return_indices=True)
    assert str(f_i.dtype) == "torch.int64" == str(t_i.dtype)
    np.testing.assert_array_equal(f_i.numpy(), t_i.numpy())


def test_max_pool2d_ties_and_int():
    x = np.zeros((1, 1, 4, 4))  # every window ties: PyTorch routes the gradient to the first element
    _check(lambda m, a: F(m).max_pool2d(a, 2), [x])
    xi = np.round(_arr(2, 2, 5, 5) * 3)
    t = F(torch).max_pool2d(torch.tensor(xi).long(), 3, 1, 1)
    o = F(ft).max_pool2d(ft.tensor(xi).long(), 3, 1, 1)
    assert str(o.dtype) == str(t.dtype)
    np.testing.assert_array_equal(o.numpy(), t.numpy())


AVGPOOL = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
           dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
           dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
           dict(kernel_size=(3, 2), stride=2, padding=(1, 1), ceil_mode=True, count_include_pad=False),
           dict(kernel_size=2, stride=1, divisor_override=3), dict(kernel_size=3, padding=1, divisor_override=2,
                                                                    ceil_mode=True)]


@pytest.mark.parametrize("i", range(len(AVGPOOL)))
def test_avg_pool2d(i):
    kw, dtype = AVGPOOL[i], _dt(i)
    shape = (3, 7, 8) if i % 3 == 1 else (2, 3, 9, 8)  # some unbatched
    _check(lambda m, x: F(m).avg_pool2d(x, **kw), [_arr(*shape)], dtype)


def test_avg_pool2d_integer_truncates():
    xi = np.round(_arr(2, 2, 5, 5) * 3)
    t = F(torch).avg_pool2d(torch.tensor(xi).long(), 2)
    o = F(ft).avg_pool2d(ft.tensor(xi).long(), 2)
    assert str(o.dtype) == str(t.dtype)
    np.testing.assert_array_equal(o.numpy(), t.numpy())


ADAPTIVE = [(3, 4), (5, 7), (7, 6), 1, (1, 1), 4, (None, 2), (2, None), (9, 13)]


@pytest.mark.parametrize("i", range(len(ADAPTIVE)))
def test_adaptive_avg_pool2d(i):
    size, dtype = ADAPTIVE[i], _dt(i)
    shape = (3, 5, 6) if i % 3 == 1 else (2, 3, 7, 6)  # some unbatched
    _check(lambda m, x: F(m).adaptive_avg_pool2d(x, size), [_arr(*shape)], dtype)


POOL_ERRORS = [
    lambda m: F(m).max_pool2d(_r(m, 2, 3, 6, 6), 2, padding=2),
    lambda m: F(m).max_pool2d(_r(m, 2, 3, 6, 6), 0),
    lambda m: F(m).max_pool2d(_r(m, 2, 3, 6, 6), 2, stride=0),
    lambda m: F(m).max_pool2d(_r(m, 2, 3, 6, 6), 2, dilation=0),
    lambda m: F(m).max_pool2d(_r(m, 6, 6), 2),
    lambda m: F(m).max_pool2d(_r(m, 1, 2, 3, 6, 6), 2),
    lambda m: F(m).max_pool2d(_r(m, 1, 1, 2, 2), 3),
    lambda m: F(m).max_pool2d(_r(m, 2, 3, 6, 6), (2, 2, 2)),
    lambda m: F(m).max_pool2d(_r(m, 2, 3, 6, 6), 2, padding=-1),
    lambda m: F(m).max_pool2d(m.ones(2, 3, 6, 6, dtype=m.bool), 2),
    lambda m: F(m).max_pool2d(_r(m, 2, 3, 9, 9), 3, 2, padding=2, dilation=2),
    lambda m: F(m).avg_pool2d(_r(m, 2, 3, 6, 6), 2, padding=2),
    lambda m: F(m).avg_pool2d(_r(m, 1, 1, 2, 2), 3),
    lambda m: F(m).avg_pool2d(_r(m, 6, 6), 2),
    lambda m: F(m).avg_pool2d(_r(m, 2, 3, 6, 6), 2, divisor_override=0),
    lambda m: F(m).adaptive_avg_pool2d(_r(m, 6, 6), 2),
    lambda m: F(m).adaptive_avg_pool2d(_r(m, 2, 3, 6, 6), (2, 2, 2)),
    lambda m: F(m).adaptive_avg_pool2d(_r(m, 2, 3, 6, 6), (-1, 2)),
    lambda m: F(m).adaptive_avg_pool2d(_r(m, 2, 3, 0, 4), 2),
    lambda m: F(m).adaptive_avg_pool2d(m.ones(2, 3, 4, 4, dtype=m.int64), 2),
    lambda m: F(m).adaptive_avg_pool2d(m.ones(2, 3, 4, 4, dtype=m.int64), 1),
]


@pytest.mark.parametrize("i", range(len(POOL_ERRORS)))
def test_pool_errors(i):
    _same_error(POOL_ERRORS[i])


# ---- padding ----------------------------------------------------------------------------------------------
PADS = [("constant", (2, 3, 4), (1, 2)), ("constant", (2, 3, 4, 5), (1, 0, 2, 3)), ("constant", (2, 3, 4), (1, 1, 0, 2, 1, 0)),
        ("constant", (2, 3, 4, 5), (-1, 2, 1, -2)), ("reflect", (3, 5), (2, 3)), ("reflect", (2, 3, 6), (2, 5)),
        ("reflect", (2, 3, 4, 5), (1, 2, 3, 0)), ("reflect", (3, 4, 5), (4, 1, 2, 3)),
        ("reflect", (1, 2, 3, 4, 5), (1, 1, 2, 0, 2, 1)), ("reflect", (2, 3, 6), (-1, 2)),
        ("reflect", (2, 3, 4, 5), (-1, 4, 1, 2)), ("replicate", (2, 3, 5), (-2, 6)),
        ("replicate", (2, 3, 5), (4, 6)), ("replicate", (2, 3, 4, 5), (5, 0, 1, 3)),
        ("replicate", (2, 3, 4, 5), (-1, 2, 0, 1)), ("replicate", (2, 2, 3, 4, 5), (1, 1, 2, 0, 2, 1)),
        ("circular", (2, 3, 5), (2, 5)), ("circular", (2, 3, 4, 5), (1, 2, 4, 0)),
        ("circular", (2, 3, 4, 5), (-1, 2, 0, 1)), ("circular", (1, 2, 3, 4, 5), (1, 1, 2, 0, 2, 1))]


@pytest.mark.parametrize("i", range(len(PADS)))
def test_pad(i):
    (mode, shape, p), dtype = PADS[i], _dt(i)
    _check(lambda m, x: F(m).pad(x, p, mode=mode), [_arr(*shape)], dtype)


def test_pad_constant_value_and_dtypes():
    _check(lambda m, x: F(m).pad(x, [1, 2], value=-3.5), [_arr(2, 3)])
    for dt, v in (("int64", 2.7), ("int64", -2.7), ("bool", 0.5), ("float16", 1.25)):
        x = np.round(_arr(2, 3) * 3)
        t = F(torch).pad(torch.tensor(x).to(getattr(torch, dt)), (1, 1, 1, 0), value=v)
        o = F(ft).pad(ft.tensor(x).to(getattr(ft, dt)), (1, 1, 1, 0), value=v)
        assert str(o.dtype) == str(t.dtype)
        np.testing.assert_array_equal(o.numpy(), t.numpy())


PAD_ERRORS = [
    lambda m: F(m).pad(_r(m, 2, 3, 6, 6), (1, 2, 3)),
    lambda m: F(m).pad(_r(m, 2, 3, 6, 6), (1,) * 10),
    lambda m: F(m).pad(_r(m, 2, 3, 6, 6), (1, 1), mode="reflect"),
    lambda m: F(m).pad(_r(m, 4), (1, 1), mode="circular"),
    lambda m: F(m).pad(_r(m, 1, 2, 3, 4), (4, 4, 3, 3), mode="reflect"),
    lambda m: F(m).pad(_r(m, 1, 2, 3, 4), (1, 1, 6, 6), mode="reflect"),
    lambda m: F(m).pad(_r(m, 2, 3), (3, 0), mode="reflect"),
    lambda m: F(m).pad(_r(m, 1, 2, 3, 3, 3), (1, 1, 1, 1, 3, 3), mode="reflect"),
    lambda m: F(m).pad(_r(m, 1, 3), (4, 1), mode="circular"),
    lambda m: F(m).pad(_r(m, 2, 2, 3, 7), (0, 0, -2, -2), mode="circular"),
    lambda m: F(m).pad(_r(m, 2, 2, 3, 7), (-2, 0, -2, -2)),
    lambda m: F(m).pad(_r(m, 2, 3, 6), (1, 1), mode="foo"),
    lambda m: F(m).pad(_r(m, 2, 3, 6), (1, 1), mode="reflect", value=1.0),
    lambda m: F(m).pad(m.ones(2, 3, 6, dtype=m.bool), (1, 1), mode="reflect"),
    lambda m: F(m).pad(m.ones(2, 3, 6, 6, dtype=m.bool), (1, 1, 1, 1), mode="replicate"),
]


@pytest.mark.parametrize("i", range(len(PAD_ERRORS)))
def test_pad_errors(i):
    _same_error(PAD_ERRORS[i])


# ---- interpolation ----------------------------------------------------------------------------------------
INTERP4 = [dict(scale_factor=2), dict(scale_factor=(1.7, 0.6)), dict(size=(5, 9)), dict(size=4), dict(size=(7, 5)),
           dict(scale_factor=3, mode="nearest-exact"), dict(size=(4, 11), mode="nearest-exact"),
           dict(scale_factor=2, mode="bilinear"), dict(scale_factor=1.3, mode="bilinear"),
           dict(size=(13, 3), mode="bilinear"), dict(size=(13, 3), mode="bilinear", align_corners=True),
           dict(size=(1, 4), mode="bilinear", align_corners=True), dict(scale_factor=0.45, mode="bilinear"),
           dict(scale_factor=(2.3, 1.5), mode="bilinear", recompute_scale_factor=True),
           dict(scale_factor=1.7, recompute_scale_factor=True), dict(size=(3, 4), mode="area"),
           dict(size=(5, 9), mode="area"), dict(scale_factor=(1.12, 2.28), mode="bilinear")]


@pytest.mark.parametrize("i", range(len(INTERP4)))
def test_interpolate_4d(i):
    kw, dtype = INTERP4[i], _dt(i)
    _check(lambda m, x: F(m).interpolate(x, **kw), [_arr(2, 3, 6, 7)], dtype)


INTERP3 = [dict(scale_factor=2), dict(size=9), dict(scale_factor=1.6, mode="nearest-exact"),
           dict(scale_factor=2.5, mode="linear"), dict(size=4, mode="linear", align_corners=True),
           dict(size=(11,), mode="linear"), dict(size=3, mode="area")]


@pytest.mark.parametrize("kw", INTERP3, ids=str)
def test_interpolate_3d(kw):
    _check(lambda m, x: F(m).interpolate(x, **kw), [_arr(2, 3, 7)])


INTERP_ERRORS = [
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), size=3, scale_factor=2),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6)),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), size=(3, 3, 3)),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), scale_factor=(2, 2, 2)),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), scale_factor=2, align_corners=True),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), scale_factor=2, mode="foo"),
    lambda m: F(m).interpolate(_r(m, 3, 4), scale_factor=2),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), size=0),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), scale_factor=-1.0),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), scale_factor=2, antialias=True),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6), scale_factor=2, mode="bilinear"),
    lambda m: F(m).interpolate(_r(m, 2, 3, 6, 6), scale_factor=2, mode="linear"),
    lambda m: F(m).interpolate(m.ones(2, 3, 6, 6, dtype=m.int64), scale_factor=2, mode="bilinear"),
    lambda m: F(m).interpolate(m.ones(2, 3, 6, dtype=m.int64), scale_factor=2),
]


@pytest.mark.parametrize("i", range(len(INTERP_ERRORS)))
def test_interpolate_errors(i):
    _same_error(INTERP_ERRORS[i])


# ---- modules ----------------------------------------------------------------------------------------------
MODULES = [
    lambda m: m.nn.Conv2d(3, 8, 3, padding=1),
    lambda m: m.nn.Conv2d(4, 8, (3, 2), stride=2, dilation=2, groups=2, bias=False, padding_mode="reflect"),
    lambda m: m.nn.Conv2d(3, 8, 3, padding="same"),
    lambda m: m.nn.Conv2d(3, 8, 3, padding="valid", padding_mode="circular"),
    lambda m: m.nn.Conv1d(3, 8, 5),
    lambda m: m.nn.Conv1d(4, 8, 3, padding=2, padding_mode="replicate", groups=4),
    lambda m: m.nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2),
    lambda m: m.nn.ConvTranspose2d(4, 6, (3, 2), padding=1, dilation=2, bias=False),
    lambda m: m.nn.MaxPool2d(2),
    lambda m: m.nn.MaxPool2d((3, 2), stride=1, padding=1, ceil_mode=True),
    lambda m: m.nn.AvgPool2d(3),
    lambda m: m.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda m: m.nn.AdaptiveAvgPool2d((None, 3)),
    lambda m: m.nn.AdaptiveAvgPool2d(1),
    lambda m: m.nn.Upsample(scale_factor=2),
    lambda m: m.nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
    lambda m: m.nn.UpsamplingBilinear2d(scale_factor=2),
    lambda m: m.nn.UpsamplingNearest2d(size=5),
    lambda m: m.nn.ZeroPad2d(2),
    lambda m: m.nn.ConstantPad2d((1, 2, 3, 4), 3.5),
    lambda m: m.nn.ReflectionPad2d(1),
    lambda m: m.nn.ReplicationPad2d((1, 0, 1, 0)),
    lambda m: m.nn.CircularPad2d(1),
]


@pytest.mark.parametrize("i", range(len(MODULES)))
def test_module_repr_state_and_forward(i):
    tm, fm = MODULES[i](torch), MODULES[i](ft)
    assert repr(fm) == repr(tm)
    assert list(fm.state_dict().keys()) == list(tm.state_dict().keys())
    with ft.no_grad():
        for name, p in tm.named_parameters():
            getattr(fm, name).copy_(ft.tensor(p.detach().numpy()))
    nd = 3 if isinstance(tm, torch.nn.Conv1d) else 4
    cin = getattr(tm, "in_channels", 4)
    x = _arr(*(2, cin, 7, 6)[:nd])
    _check(lambda m, a: (tm if m is torch else fm)(a), [x], grad=bool(list(tm.parameters())))


@pytest.mark.parametrize("make,fan_in", [(lambda m: m.nn.Conv2d(6, 64, (5, 4), groups=2), 3 * 20),
                                         (lambda m: m.nn.Conv1d(8, 256, 3), 24),
                                         (lambda m: m.nn.ConvTranspose2d(16, 32, 3), 32 * 9)])
def test_default_init_bounds(make, fan_in):
    ft.manual_seed(0)
    mod = make(ft)
    tmod = make(torch)
    assert mod.weight.shape == tmod.weight.shape and mod.bias.shape == tmod.bias.shape
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) and the bias rule give the same bound
    w, b = mod.weight.detach().numpy(), mod.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
    assert abs(w.mean()) < 0.1 * bound
    assert mod.weight.requires_grad and mod.weight.dtype == ft.float32


def test_module_dtype_and_errors():
    m = ft.nn.Conv2d(2, 4, 3, dtype=ft.float64)
    assert m.weight.dtype == ft.float64 and m.bias.dtype == ft.float64
    for make in (lambda n: n.Conv2d(3, 4, 3, groups=2), lambda n: n.Conv2d(4, 3, 3, groups=2),
                 lambda n: n.Conv2d(4, 4, 3, groups=0), lambda n: n.Conv2d(4, 4, 3, stride=2, padding="same"),
                 lambda n: n.ConvTranspose2d(4, 4, 3, padding_mode="reflect")):
        with pytest.raises(ValueError) as t_err:
            make(torch.nn)
        with pytest.raises(ValueError, match="^" + re.escape(str(t_err.value)) + "$"):
            make(ft.nn)


def test_conv_transpose2d_output_size():
    tm, fm = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1), ft.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    with ft.no_grad():
        fm.weight.copy_(ft.tensor(tm.weight.detach().numpy()))
        fm.bias.copy_(ft.tensor(tm.bias.detach().numpy()))
    x = _arr(1, 3, 4, 5)
    _check(lambda m, a: (tm if m is torch else fm)(a, output_size=[8, 10]), [x])
    with pytest.raises(ValueError, match="requested an output size of"):
        fm(ft.tensor(x, dtype=ft.float32), output_size=[12, 10])


def test_small_cnn_forward_backward_parity():
    def build(n):
        return n.Sequential(n.Conv2d(1, 4, 3, padding=1), n.ReLU(), n.MaxPool2d(2), n.Conv2d(4, 6, 3, stride=2),
                            n.ReLU(), n.Flatten(), n.Linear(6 * 3 * 3, 10))
    tnet, fnet = build(torch.nn), build(ft.nn)
    with ft.no_grad():
        for (n1, p1), (n2, p2) in zip(tnet.named_parameters(), fnet.named_parameters()):
            assert n1 == n2
            p2.copy_(ft.tensor(p1.detach().numpy()))
    x = _arr(5, 1, 14, 14).astype(np.float32)
    y = np.array([1, 0, 3, 9, 2])
    t_loss = torch.nn.functional.cross_entropy(tnet(torch.tensor(x)), torch.tensor(y))
    f_loss = ft.nn.functional.cross_entropy(fnet(ft.tensor(x)), ft.tensor(y))
    t_loss.backward()
    f_loss.backward()
    np.testing.assert_allclose(f_loss.item(), t_loss.item(), rtol=1e-5)
    for (name, p1), p2 in zip(tnet.named_parameters(), fnet.parameters()):
        np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)
