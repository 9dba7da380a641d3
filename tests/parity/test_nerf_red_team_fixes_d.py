"""Parity with PyTorch 2.13 for differences a red team found in NeRF / image-processing code (2026-12-07): the
integer dtypes avg_pool / lp_pool refuse; histogram's weight / bins dtype checks, its weight of another shape and its
results that require grad (no derivative); F.pad's double ``value`` (uint8 -1 raises) and its ``int[]`` ``pad``;
linspace / logspace of 1-d tensors; ``torch.flip(x, 1)``; the channels-last layout of roll and stack; the
from_numpy warning at the user's line.

Every case runs the same code under real torch and functorch_lite and compares results (shape, strides, dtype,
requires_grad, grad_fn name, values) or exception types and messages (``_parity.same``)."""
import warnings

import numpy as np
import pytest
import torch  # noqa: F401  (real torch is required: _parity.same runs each case under it)

import functorch_lite as ft
from _parity import same

INTS = ("uint8", "int8", "int16", "int32", "int64", "bool")


def _all_same(cases: dict):
    """``same`` for every case, naming the one that differs."""
    for name, fn in cases.items():
        try:
            same(fn)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


def _ones(t, dt, nd):
    return t.ones((1, 1) + (2,) * nd, dtype=getattr(t, dt))


POOLS = {
    "avg_pool1d": lambda t, dt: t.nn.functional.avg_pool1d(_ones(t, dt, 1), 2),
    "avg_pool2d": lambda t, dt: t.nn.functional.avg_pool2d(_ones(t, dt, 2), 2),
    "avg_pool3d": lambda t, dt: t.nn.functional.avg_pool3d(_ones(t, dt, 3), 2),
    "AvgPool2d": lambda t, dt: t.nn.AvgPool2d(2)(_ones(t, dt, 2)),
    "lp_pool1d": lambda t, dt: t.nn.functional.lp_pool1d(_ones(t, dt, 1), 2, 2),
    "lp_pool2d": lambda t, dt: t.nn.functional.lp_pool2d(_ones(t, dt, 2), 2, 2),
    "lp_pool3d": lambda t, dt: t.nn.functional.lp_pool3d(_ones(t, dt, 3), 2, 2),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_avg_lp_pool_integer_dtypes(name):
    """torch's avg_pool kernels cover Long only among the integer types (``"avg_pool2d" not implemented for
    'Byte'``, avg_pool3d's ``"avg_pool3d_out_frame"``); lp_pool goes through them."""
    _all_same({dt: (lambda dt: lambda t: POOLS[name](t, dt))(dt) for dt in INTS})


def test_avg_pool_uint8_message():
    with pytest.raises(NotImplementedError, match="\"avg_pool3d_out_frame\" not implemented for 'Byte'"):
        ft.nn.functional.avg_pool3d(ft.ones(1, 1, 2, 2, 2, dtype=ft.uint8), 2)


def _x(t):
    return t.tensor([1., 2.])


HISTOGRAMS = {
    "weight_int": lambda t: t.histogram(_x(t), bins=2, weight=t.tensor([1, 2])),
    "weight_f64": lambda t: t.histogram(_x(t), bins=2, weight=t.tensor([1., 2.], dtype=t.float64)),
    "weight_bool": lambda t: t.histogram(_x(t), bins=2, weight=t.tensor([True, False])),
    "bins_f64": lambda t: t.histogram(_x(t), t.tensor([0., 1.5, 3.], dtype=t.float64)),
    "bins_int": lambda t: t.histogram(_x(t), bins=t.tensor([0, 1, 3])),
    "bins_2d_f64": lambda t: t.histogram(_x(t), bins=t.tensor([[1., 2.]], dtype=t.float64)),
    "bins_2d": lambda t: t.histogram(_x(t), bins=t.tensor([[1., 2.]])),
    "bins_and_weight": lambda t: t.histogram(_x(t), t.tensor([0., 1.5, 3.], dtype=t.float64), weight=t.tensor([1, 2])),
    "long_bins_tensor_float_weight": lambda t: t.histogram(_x(t).long(), bins=t.tensor([0, 1, 3]),
                                                           weight=t.tensor([1., 2.])),
    "long_bins_tensor": lambda t: t.histogram(_x(t).long(), bins=t.tensor([1, 2]), weight=t.tensor([1, 2])),
    "long_int_bins": lambda t: t.histogram(_x(t).long(), bins=2, weight=t.tensor([1, 2])),
    "half_int_bins_weight": lambda t: t.histogram(_x(t).half(), bins=2, weight=t.tensor([1, 2, 3])),
    "half_bins_tensor": lambda t: t.histogram(_x(t).half(), bins=t.tensor([1., 2.]).half()),
    "weight_shape": lambda t: t.histogram(_x(t), bins=2, weight=t.tensor([1., 2., 3.])),
    "weight_other_shape_same_numel": lambda t: t.histogram(t.arange(6.).reshape(2, 3), bins=2,
                                                           weight=t.arange(6.).reshape(3, 2)),
    "weight_other_numel": lambda t: t.histogram(t.arange(6.).reshape(2, 3), bins=2, weight=t.arange(4.).reshape(2, 2)),
}


def test_histogram_weight_and_bins_checks():
    _all_same({k: (lambda f: lambda t: tuple(f(t)))(f) for k, f in HISTOGRAMS.items()})


@pytest.mark.parametrize("which", ["input", "weight", "bins"])
def test_histogram_requires_grad_without_derivative(which):
    """torch's histogram has no derivative: its results require grad (grad_fn NotImplemented) when an argument
    does, and backward raises ``derivative for aten::histogram is not implemented``."""
    def run(t):
        v = t.tensor([0.2, 0.4, 0.6], requires_grad=which == "input")
        w = t.ones(3, requires_grad=True) if which == "weight" else None
        b = t.tensor([0., 0.5, 1.], requires_grad=True) if which == "bins" else 3
        return t.histogram(v, bins=b, weight=w)
    same(lambda t: tuple(run(t)))
    for out in (0, 1):
        same(lambda t: run(t)[out].sum().backward())
    same(lambda t: tuple(t.histogram(t.tensor([0.2, 0.4, 0.6]), bins=3)))  # (nothing requires grad: plain results)


PAD_VALUES = (-1, -128, -0.5, 0.5, 255, 256, 2 ** 53 + 1, -2 ** 63, 2 ** 64, float("nan"), True, 2 + 0j, "a")


@pytest.mark.parametrize("dt", ("uint8", "int8", "int64", "float32"))
def test_pad_value_is_a_double(dt):
    """torch passes ``value`` as a double Scalar: uint8 -1 is an overflow error (torch's fill would wrap an int),
    int64 2**53 + 1 rounds, a complex or a string is the parser's TypeError."""
    _all_same({repr(v): (lambda v: lambda t: t.nn.functional.pad(t.zeros(1, 1, dtype=getattr(t, dt)), (1, 0),
                                                                 value=v))(v) for v in PAD_VALUES})
    # nothing filled: the value is never converted (values compared; a crop's strides are another matter)
    same(lambda t: t.nn.functional.pad(t.zeros(1, 3, dtype=getattr(t, dt)), (-1, 0), value=-1).tolist())
    same(lambda t: t.nn.functional.pad(t.zeros(1, 3, dtype=getattr(t, dt)), (0, 0), value=-1).tolist())
    # constant_pad_nd takes a Scalar: an int -1 wraps into uint8 as torch's fill does
    same(lambda t: t.constant_pad_nd(t.zeros(1, 1, dtype=getattr(t, dt)), (1, 0), -1))


PADS = {
    "tensor": lambda t: t.tensor([1, 1]), "float_first": (1.0, 1), "float_second": (1, 1.0), "str": (1, "a"),
    "bool_first": (True, 1), "bool_second": (1, True), "int": 1, "none": None, "ndarray": np.array([1, 1]),
    "range": range(2), "float_tensor_elem": lambda t: (t.tensor(1.), 1),
    "int_tensor_elem": lambda t: (t.tensor([1]), 1),
    "np_int": (np.int64(1), 1), "np_float": (np.float64(1), 1), "size": lambda t: t.Size([1, 1]), "list": [1, 1],
}


def test_pad_argument_is_tuple_of_ints():
    def run(p):
        return lambda t: t.nn.functional.pad(t.ones(1, 2), p(t) if callable(p) else p)
    _all_same({k: run(p) for k, p in PADS.items()})
    same(lambda t: t.nn.functional.pad(t.ones(1, 2, 3), (1.0, 1), mode="reflect"))


SPACES = {
    "lin_start_1d": lambda t: t.linspace(t.tensor([0.]), 1, 3),
    "lin_end_2d": lambda t: t.linspace(0, t.tensor([[1.]]), 3),
    "log_start_1d": lambda t: t.logspace(t.tensor([0.]), 1, 3),
    "log_end_1d": lambda t: t.logspace(0, t.tensor([1.]), 3),
    "lin_both_1d": lambda t: t.linspace(t.tensor([0.]), t.tensor([1.]), 3),
    "lin_0d_and_1d": lambda t: t.linspace(t.tensor(0.), t.tensor([1.]), 3),
    "lin_1d_negative_steps": lambda t: t.linspace(t.tensor([0.]), 1, -1),
    "lin_0d_ok": lambda t: t.linspace(t.tensor(0.), t.tensor(1.), 3),
}


def test_linspace_logspace_need_0d_tensors():
    _all_same(SPACES)


def _m(t):
    return t.arange(12).reshape(3, 4)


FLIPS = {
    "fn_int": lambda t: t.flip(_m(t), 1), "fn_tuple": lambda t: t.flip(_m(t), (1,)),
    "fn_two_ints": lambda t: t.flip(_m(t), 0, 1), "fn_kw_int": lambda t: t.flip(_m(t), dims=1),
    "fn_kw_list": lambda t: t.flip(_m(t), dims=[0, 1]), "fn_np_int": lambda t: t.flip(_m(t), np.int64(1)),
    "fn_tensor": lambda t: t.flip(_m(t), t.tensor(1)), "fn_missing": lambda t: t.flip(_m(t)),
    "fn_float": lambda t: t.flip(_m(t), 1.0), "fn_float_elem": lambda t: t.flip(_m(t), (1.0,)),
    "fn_second_float": lambda t: t.flip(_m(t), (0, 1.0)), "fn_none": lambda t: t.flip(_m(t), None),
    "m_int": lambda t: _m(t).flip(0), "m_ints": lambda t: _m(t).flip(0, 1), "m_tuple": lambda t: _m(t).flip((0, 1)),
    "m_kw_int": lambda t: _m(t).flip(dims=1), "m_missing": lambda t: _m(t).flip(), "m_float": lambda t: _m(t).flip(1.0),
    "m_bool": lambda t: _m(t).flip(True), "m_second_float": lambda t: _m(t).flip(0, 1.0),
    "m_tuple_then_int": lambda t: _m(t).flip((0,), 1), "m_both": lambda t: _m(t).flip(0, dims=1),
}


def test_flip_dims_argument():
    """``torch.flip(x, dims)`` takes a tuple / list of ints only; the method also takes varargs ints."""
    _all_same(FLIPS)


def _cl(t):
    return t.arange(120.).reshape(2, 3, 4, 5).to(memory_format=t.channels_last)


LAYOUTS = {
    "roll_23": lambda t: t.roll(_cl(t), (1, 1), (2, 3)), "roll_1": lambda t: t.roll(_cl(t), 1, 1),
    "roll_method": lambda t: _cl(t).roll(-1, 2), "roll_flat": lambda t: t.roll(_cl(t), 1),
    "roll_zero_shift": lambda t: t.roll(_cl(t), 4, 2), "roll_one_zero": lambda t: t.roll(_cl(t), (1, 5), (2, 3)),
    "roll_3d": lambda t: t.roll(t.arange(240.).reshape(2, 3, 2, 4, 5).to(memory_format=t.channels_last_3d), 1, 2),
    "roll_transposed": lambda t: t.roll(t.arange(12.).reshape(3, 4).t(), 1, 0),
    "stack_1": lambda t: t.stack([_cl(t), _cl(t)], 1), "stack_0": lambda t: t.stack([_cl(t), _cl(t)], 0),
    "stack_3": lambda t: t.stack([_cl(t), _cl(t)], dim=3), "stack_last": lambda t: t.stack([_cl(t), _cl(t)], -1),
    "stack_mixed": lambda t: t.stack([_cl(t), _cl(t).contiguous()], 1),
    "stack_single": lambda t: t.stack([_cl(t)], 1),
    "stack_transposed": lambda t: t.stack([t.arange(12.).reshape(3, 4).t()] * 2, 1),
}


@pytest.mark.parametrize("op", ["roll", "stack"])
def test_roll_stack_channels_last_layout(op):
    """torch's roll is a cat of narrows and stack a cat then a view: channels-last inputs keep that layout."""
    _all_same({k: f for k, f in LAYOUTS.items() if k.startswith(op)})


@pytest.mark.parametrize("op", ["roll", "stack"])
def test_roll_stack_channels_last_grad(op):
    def run(t):
        x = _cl(t).requires_grad_()
        y = t.roll(x, 1, 2) if op == "roll" else t.stack([x, x], 1)
        (y * t.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return y, x.grad
    same(run)


def test_from_numpy_read_only_warns_at_user_line():
    a = np.ones(2)
    a.setflags(write=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ft.from_numpy(a)
    assert [x.filename for x in w] == [__file__], [(x.filename, x.lineno) for x in w]
    assert str(w[0].message).startswith("The given NumPy array is not writable")
