"""Fixes from the low-bit dtypes red team (float8, the wide unsigned ints, torch's int8 / fake-quantization ops), each
against real torch 2.13: F.pad of float8, float8 reductions with ``dtype=``, ``torch._scaled_mm``'s out= / bias /
scaling-recipe checks / argument parser / NotImplemented grad_fn, ``torch._int_mm``, the fake-quantization ops, float8
kernels torch lacks (a 0-dim ``other``, count_nonzero, equal) and uint16/32/64 neg / abs / matmul."""
import math
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.quantization import int8 as Q8

F8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]


def _fn(m, name):
    """``m.<name>`` (the top-level functions are the quantization module's)."""
    assert m is torch or getattr(m, name) is getattr(Q8, name)
    return getattr(m, name)


def _plain(r):
    """A result as plain data: a tensor (either library's) as its dtype, shape and exact values (floats of every
    width as float64, float8 included); tuples / lists element by element."""
    if isinstance(r, (torch.Tensor, ft.Tensor)):
        v = r.detach()
        vals = (v.double() if v.dtype.is_floating_point else v).tolist()
        return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), vals)
    if isinstance(r, (tuple, list)):
        return [_plain(x) for x in r]
    return r


def _outcome(fn, m):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", _plain(fn(m)))
    except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
        return (type(e).__name__, str(e))


def _eq(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return a == b


def _same(fn):
    """``fn(torch)`` and ``fn(functorch_lite)``: the same values exactly (dtype, shape, every value; NaN equal to
    NaN), or the same exception type and message."""
    t, f = _outcome(fn, torch), _outcome(fn, ft)
    assert _eq(t, f), (t, f)
    return t


def _x(m, dt="float32"):
    return m.tensor([[[1.0, -2.5, 3.0], [0.1, 7.0, -0.0]]]).to(getattr(m, dt))


# ---- 1. F.pad of float8 ------------------------------------------------------------------------------------------
PAD = {
    "constant": lambda m, x: m.nn.functional.pad(x, (1, 1)),
    "constant_value": lambda m, x: m.nn.functional.pad(x, (1, 2), value=2.0),
    "constant_2d": lambda m, x: m.nn.functional.pad(x, (1, 1, 1, 0, 0, 1)),
    "constant_crop": lambda m, x: m.nn.functional.pad(x, (-1, 1, 1, 0)),
    "constant_nan": lambda m, x: m.nn.functional.pad(x, (1, 0), value=float("nan")),
    "constant_overflow": lambda m, x: m.nn.functional.pad(x, (1, 0), value=1000.0),
    "constant_inf": lambda m, x: m.nn.functional.pad(x, (1, 0), value=float("inf")),
    "constant_one_element": lambda m, x: m.nn.functional.pad(x[:, :0, :1].reshape(0), (1, 0), value=1000.0),
    "constant_no_pad": lambda m, x: m.nn.functional.pad(x, (0, 0), value=1000.0),
    "constant_pad_nd": lambda m, x: m.constant_pad_nd(x, (1, 1), 3.0),
    "circular": lambda m, x: m.nn.functional.pad(x, (1, 1), mode="circular"),
    "circular_2d": lambda m, x: m.nn.functional.pad(x[None], (1, 1, 1, 1), mode="circular"),
    "reflect": lambda m, x: m.nn.functional.pad(x, (1, 1), mode="reflect"),
    "replicate_2d": lambda m, x: m.nn.functional.pad(x[None], (1, 1, 1, 1), mode="replicate"),
}


@pytest.mark.parametrize("dt", F8)
@pytest.mark.parametrize("case", sorted(PAD))
def test_pad_float8(case, dt):
    """constant (with torch's fill_ check of the value) and circular pads copy float8 values; reflect / replicate
    have no float8 kernel."""
    _same(lambda m: PAD[case](m, _x(m, dt)))


@pytest.mark.parametrize("case", ["e8m0_zero", "e8m0_value", "f16_overflow", "f16_one_element", "i8_overflow",
                                  "i8_float", "u8_constant_pad_nd_negative"])
def test_pad_fill_value_checks(case):
    """F.pad's value goes through fill_'s checked conversion (a one-element small float is unchecked)."""
    F = {
        "e8m0_zero": lambda m: m.nn.functional.pad(m.ones(2).to(m.float8_e8m0fnu), (1, 1)),
        "e8m0_value": lambda m: m.nn.functional.pad(m.ones(2).to(m.float8_e8m0fnu), (1, 1), value=4.0),
        "f16_overflow": lambda m: m.nn.functional.pad(m.ones(2, dtype=m.float16), (1, 1), value=1e6),
        "f16_one_element": lambda m: m.nn.functional.pad(m.ones(0, dtype=m.float16), (1, 0), value=1e6),
        "i8_overflow": lambda m: m.nn.functional.pad(m.ones(2, dtype=m.int8), (1, 1), value=300),
        "i8_float": lambda m: m.nn.functional.pad(m.ones(2, dtype=m.int8), (1, 1), value=2.7),
        "u8_constant_pad_nd_negative": lambda m: m.constant_pad_nd(m.ones(2, dtype=m.uint8), (1, 1), -1),
    }[case]
    with np.errstate(over="ignore"):
        _same(F)


# ---- 2. float8 reductions with dtype= ------------------------------------------------------------------------------
RED = {
    "sum": lambda m, x: x.sum(),
    "sum_f32": lambda m, x: x.sum(dtype=m.float32),
    "sum_f64_dim": lambda m, x: x.sum(2, dtype=m.float64),
    "sum_bf16": lambda m, x: x.sum(dtype=m.bfloat16),
    "sum_i64": lambda m, x: x.sum(dtype=m.int64),
    "sum_bool": lambda m, x: x.sum(dtype=m.bool),
    "sum_f8": lambda m, x: x.sum(dtype=x.dtype),
    "sum_out": lambda m, x: m.sum(x, 1, out=m.empty(1, 3)),
    "sum_keepdim": lambda m, x: m.sum(x, 1, keepdim=True, dtype=m.float32),
    "mean": lambda m, x: x.mean(),
    "mean_f32": lambda m, x: x.mean(dtype=m.float32),
    "mean_f64_dim": lambda m, x: x.mean(2, dtype=m.float64),
    "mean_i64": lambda m, x: x.mean(dtype=m.int64),
    "prod": lambda m, x: x.prod(),
    "prod_f32": lambda m, x: x.prod(dtype=m.float32),
    "prod_dim_f32": lambda m, x: x.prod(2, dtype=m.float32),
    "prod_i64": lambda m, x: x.prod(dtype=m.int64),
    "f32_sum_to_f8": lambda m, x: x.float().sum(dtype=x.dtype),
}


@pytest.mark.parametrize("dt", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz"])
@pytest.mark.parametrize("case", sorted(RED))
def test_float8_reductions_with_dtype(case, dt):
    """sum / mean / prod of a float8 tensor cast to ``dtype=`` (or out='s dtype) first; without one torch refuses."""
    _same(lambda m: RED[case](m, _x(m, dt)))


def test_float8_sum_dtype_records_sum_backward():
    _same(lambda m: (lambda y: (y, y.requires_grad, type(y.grad_fn).__name__))(
        m.tensor([1.0, 2.5, -3.0], requires_grad=True).to(m.float8_e4m3fn).sum(dtype=m.float32)))


# ---- 3. torch._scaled_mm ------------------------------------------------------------------------------------------
def _smm_args(m):
    a8 = (m.arange(12.0).reshape(3, 4) / 4 - 1).to(m.float8_e4m3fn)
    b8 = (m.arange(8.0).reshape(2, 4) / 3 - 1).to(m.float8_e4m3fn).t()
    return a8, b8, m.tensor(1.0)


SMM = {
    # out=
    "out": lambda m, a, b, one: (lambda o: (m._scaled_mm(a, b, one, one, out_dtype=m.float32, out=o) is o, o))(
        m.empty(3, 2)),
    "out_sets_out_dtype": lambda m, a, b, one: m._scaled_mm(a, b, one, one, out=m.empty(3, 2, dtype=m.bfloat16)),
    "out_f8": lambda m, a, b, one: m._scaled_mm(a, b, one, one, out=m.empty(3, 2).to(m.float8_e4m3fn)),
    "out_int": lambda m, a, b, one: m._scaled_mm(a, b, one, one, out=m.empty(3, 2, dtype=m.int64)),
    "out_dtype_mismatch": lambda m, a, b, one: m._scaled_mm(a, b, one, one, out_dtype=m.float32,
                                                           out=m.empty(3, 2, dtype=m.float64)),
    "out_dtype_mismatch_first": lambda m, a, b, one: m._scaled_mm(a, b, m.ones(2), one, out_dtype=m.float32,
                                                                 out=m.empty(3, 2).bfloat16()),
    "out_resized": lambda m, a, b, one: m._scaled_mm(a, b, one, one, out_dtype=m.float32, out=m.empty(0)),
    "out_transposed": lambda m, a, b, one: (lambda o: (o.stride(), o))(
        m._scaled_mm(a, b, one, one, out_dtype=m.float32, out=m.empty(2, 3).t())),
    "out_requires_grad": lambda m, a, b, one: m._scaled_mm(a, b, one, one, out_dtype=m.float32,
                                                          out=m.empty(3, 2, requires_grad=True)),
    "out_not_tensor": lambda m, a, b, one: m._scaled_mm(a, b, one, one, out=1.0),
    # bias
    "bias_row": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=m.ones(1, 2), out_dtype=m.float32),
    "bias_column_shape": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=m.ones(2, 1), out_dtype=m.float32),
    "bias_column_broadcasts": lambda m, a, b, one: m._scaled_mm(a[:2], b, one, one, bias=m.tensor([[1.0], [2.0]]),
                                                               out_dtype=m.float32),
    "bias_3d": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=m.ones(1, 1, 2), out_dtype=m.float32),
    "bias_float8": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=m.ones(2).to(m.float8_e4m3fn),
                                                    out_dtype=m.float32),
    "bias_e5m2_bf16_out": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=m.ones(2).to(m.float8_e5m2),
                                                           out_dtype=m.bfloat16),
    "bias_float8_size_first": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=m.ones(3).to(m.float8_e5m2)),
    "bias_complex": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=m.ones(2, dtype=m.complex64),
                                                     out_dtype=m.float32),
    "bias_uint16": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=m.ones(2, dtype=m.uint16),
                                                    out_dtype=m.float32),
    # scaling recipe
    "rowwise_noncontiguous_a": lambda m, a, b, one: m._scaled_mm(a, b, m.ones(3, 2)[:, :1], m.ones(1, 2),
                                                                out_dtype=m.float32),
    "rowwise_noncontiguous_b": lambda m, a, b, one: m._scaled_mm(a, b, m.ones(3, 1), m.ones(1, 4)[:, ::2],
                                                                out_dtype=m.float32),
    "rowwise_transposed_b": lambda m, a, b, one: m._scaled_mm(a, b, m.ones(3, 1), m.tensor([[2.0], [3.0]]).t(),
                                                             out_dtype=m.float32),
    "rowwise_stride_a": lambda m, a, b, one: m._scaled_mm(a, b, m.ones(1, 3).t(), m.ones(1, 2), out_dtype=m.float32),
    "rowwise_m1": lambda m, a, b, one: m._scaled_mm(a[:1], b, m.tensor([[2.0]]), m.tensor([[1.0, 2.0]]),
                                                   out_dtype=m.float32),
    "scale_b_3d": lambda m, a, b, one: m._scaled_mm(a, b, one, m.ones(1, 1, 1), out_dtype=m.float32),
    "scale_b_4d_bf16": lambda m, a, b, one: m._scaled_mm(a, b, one, m.ones(1, 1, 1, 1).bfloat16()),
    "scale_b_3d_rowwise_a": lambda m, a, b, one: m._scaled_mm(a, b, m.ones(3, 1), m.ones(1, 1, 2)),
    "scale_a_3d": lambda m, a, b, one: m._scaled_mm(a, b, m.ones(1, 1, 1), one, out_dtype=m.float32),
    "scale_b_3d_a_float": lambda m, a, b, one: m._scaled_mm(a.float(), b, one, m.ones(1, 1, 1)),
    "b_3d_a_float": lambda m, a, b, one: m._scaled_mm(a.float(), b[None], one, one),
    "b_3d": lambda m, a, b, one: m._scaled_mm(a, b[None], one, one),
    # argument parser
    "scale_a_float": lambda m, a, b, one: m._scaled_mm(a, b, 1.0, one),
    "scale_b_none": lambda m, a, b, one: m._scaled_mm(a, b, one, None),
    "input_float": lambda m, a, b, one: m._scaled_mm(1.0, b, one, one),
    "mat2_list": lambda m, a, b, one: m._scaled_mm(a, [1.0], one, one),
    "bias_float_positional": lambda m, a, b, one: m._scaled_mm(a, b, one, one, 1.0),
    "bias_float_keyword": lambda m, a, b, one: m._scaled_mm(a, b, one, one, bias=1.0),
    "out_dtype_str": lambda m, a, b, one: m._scaled_mm(a, b, one, one, out_dtype="float32"),
    "out_dtype_int_positional": lambda m, a, b, one: m._scaled_mm(a, b, one, one, None, None, 3),
    "fast_accum_int": lambda m, a, b, one: m._scaled_mm(a, b, one, one, use_fast_accum=1),
    "fast_accum_none": lambda m, a, b, one: m._scaled_mm(a, b, one, one, use_fast_accum=None),
    "fast_accum_np_bool": lambda m, a, b, one: m._scaled_mm(a, b, one, one, use_fast_accum=np.bool_(True)),
    "positional_all": lambda m, a, b, one: m._scaled_mm(a, b, one, one, None, None, m.bfloat16, True),
    "keywords": lambda m, a, b, one: m._scaled_mm(input=a, mat2=b, scale_a=one, scale_b=one),
    "no_args": lambda m, a, b, one: m._scaled_mm(),
    "missing_two": lambda m, a, b, one: m._scaled_mm(a, b),
    "missing_scale_b": lambda m, a, b, one: m._scaled_mm(a, b, one),
    "self_keyword": lambda m, a, b, one: m._scaled_mm(self=a, mat2=b, scale_a=one, scale_b=one),
    "self_keyword_extra": lambda m, a, b, one: m._scaled_mm(a, b, one, one, self=a),
    "unexpected_keyword": lambda m, a, b, one: m._scaled_mm(a, b, one, one, foo=1),
    "twice": lambda m, a, b, one: m._scaled_mm(a, b, one, one, scale_a=one),
    "too_many": lambda m, a, b, one: m._scaled_mm(a, b, one, one, None, None, None, False, m.empty(3, 2)),
}


@pytest.mark.parametrize("case", sorted(SMM))
def test_scaled_mm(case):
    _same(lambda m: SMM[case](m, *_smm_args(m)))


@pytest.mark.parametrize("which", ["scale_a", "bias", "scale_result", "a", "int_out"])
def test_scaled_mm_requires_grad_records_not_implemented(which):
    """Any input requiring grad (a floating result): torch's NotImplemented grad_fn, whose backward raises."""
    def run(m):
        a, b, one = _smm_args(m)
        kw = dict(out_dtype=m.float8_e4m3fn if which == "scale_result" else m.float32)
        sa = m.tensor(1.0, requires_grad=which == "scale_a")
        if which == "bias":
            kw["bias"] = m.ones(2, requires_grad=True)
        if which == "scale_result":
            kw["scale_result"] = m.tensor(2.0, requires_grad=True)
        if which == "a":
            a = a.float().requires_grad_().to(m.float8_e4m3fn)
        if which == "int_out":
            kw["out_dtype"] = m.int32
            sa.requires_grad_()
        r = m._scaled_mm(a, b, sa, one, **kw)
        out = [r.float(), r.requires_grad, type(r.grad_fn).__name__,
               r.grad_fn.name() if r.grad_fn is not None else None]
        if r.requires_grad:
            try:
                r.float().sum().backward()
            except RuntimeError as e:
                out.append(str(e))
        with m.no_grad():
            out.append(m._scaled_mm(a, b, sa, one, **kw).requires_grad)
        return out
    _same(run)


# ---- 4. torch._int_mm ---------------------------------------------------------------------------------------------
def _out(m, f, o):
    """``_int_mm`` of int8 (3, 4) and (4, 2) ones into ``o``."""
    return f(m.ones(3, 4, dtype=m.int8), m.ones(4, 2, dtype=m.int8), out=o)


INT_MM = {
    "values": lambda m, f: f((m.arange(12).reshape(3, 4) - 5).to(m.int8),
                             (m.arange(8).reshape(4, 2) * 3 - 7).to(m.int8)),
    "wraps": lambda m, f: f(m.full((1, 140000), -128, dtype=m.int8), m.full((140000, 1), 127, dtype=m.int8)),
    "uint8_self": lambda m, f: f((m.arange(12).reshape(3, 4) - 5).to(m.int8).to(m.uint8), m.ones(4, 2, dtype=m.int8)),
    "transposed": lambda m, f: f(m.ones(4, 3, dtype=m.int8).t(), (m.arange(8).reshape(2, 4) - 3).to(m.int8).t()),
    "empty_k": lambda m, f: f(m.ones(3, 0, dtype=m.int8), m.ones(0, 2, dtype=m.int8)),
    "empty_m": lambda m, f: f(m.ones(0, 4, dtype=m.int8), m.ones(4, 2, dtype=m.int8)),
    "mat2_uint8": lambda m, f: f(m.ones(3, 4, dtype=m.int8), m.ones(4, 2, dtype=m.uint8)),
    "self_float": lambda m, f: f(m.ones(3, 4), m.ones(4, 2, dtype=m.int8)),
    "self_int16": lambda m, f: f(m.ones(3, 4, dtype=m.int16), m.ones(4, 2, dtype=m.int8)),
    "self_float8": lambda m, f: f(m.ones(3, 4).to(m.float8_e4m3fn), m.ones(4, 2, dtype=m.int8)),
    "mat2_int32": lambda m, f: f(m.ones(3, 4, dtype=m.int8), m.ones(4, 2, dtype=m.int32)),
    "self_3d": lambda m, f: f(m.ones(3, 4, 1, dtype=m.int8), m.ones(4, 2, dtype=m.int8)),
    "mat2_3d": lambda m, f: f(m.ones(3, 4, dtype=m.int8), m.ones(4, 2, 1, dtype=m.int8)),
    "self_1d": lambda m, f: f(m.ones(3, dtype=m.int8), m.ones(4, 2, dtype=m.int8)),
    "mat2_1d": lambda m, f: f(m.ones(3, 4, dtype=m.int8), m.ones(4, dtype=m.int8)),
    "self_0d": lambda m, f: f(m.ones((), dtype=m.int8), m.ones(4, 2, dtype=m.int8)),
    "mismatch": lambda m, f: f(m.ones(4, 16, dtype=m.int8), m.ones(32, 4, dtype=m.int8)),
    "mismatch_before_dtype": lambda m, f: f(m.ones(3, 4), m.ones(5, 2)),
    "out": lambda m, f: (lambda o: (_out(m, f, o) is o, o))(m.empty(3, 2, dtype=m.int32)),
    "out_int64": lambda m, f: _out(m, f, m.empty(3, 2, dtype=m.int64)),
    "out_rows": lambda m, f: _out(m, f, m.empty(2, 2, dtype=m.int32)),
    "out_cols": lambda m, f: _out(m, f, m.empty(3, 3, dtype=m.int32)),
    "out_empty": lambda m, f: _out(m, f, m.empty(0, dtype=m.int32)),
    "out_3d": lambda m, f: _out(m, f, m.empty(3, 2, 1, dtype=m.int32)),
    "out_noncontiguous": lambda m, f: _out(m, f, m.empty(2, 3, dtype=m.int32).t()),
    "out_1d_mat2": lambda m, f: f(m.ones(3, 4, dtype=m.int8), m.ones(4, dtype=m.int8),
                                  out=m.empty(3, 2, dtype=m.int32)),
    "none": lambda m, f: f(None, m.ones(4, 2, dtype=m.int8)),
    "float_arg": lambda m, f: f(m.ones(3, 4, dtype=m.int8), 1.0),
    "missing": lambda m, f: f(m.ones(3, 4, dtype=m.int8)),
    "keywords": lambda m, f: f(input=m.ones(3, 4, dtype=m.int8), mat2=m.ones(4, 2, dtype=m.int8)),
    "self_keyword": lambda m, f: f(self=m.ones(3, 4, dtype=m.int8), mat2=m.ones(4, 2, dtype=m.int8)),
    "too_many": lambda m, f: f(m.ones(3, 4, dtype=m.int8), m.ones(4, 2, dtype=m.int8), m.ones(1)),
}


@pytest.mark.parametrize("case", sorted(INT_MM))
def test_int_mm(case):
    """int8 (or uint8) @ int8 -> int32, wrapping on overflow as torch's CPU kernel; its checks in its order."""
    _same(lambda m: INT_MM[case](m, _fn(m, "_int_mm")))


def test_int_mm_random_matches_exactly():
    rng = np.random.default_rng(1)
    for M, K, N in ((1, 1, 1), (5, 7, 3), (17, 64, 9)):
        a = rng.integers(-128, 128, (M, K)).astype(np.int8)
        b = rng.integers(-128, 128, (K, N)).astype(np.int8)
        for src in (a, a.view(np.uint8)):
            np.testing.assert_array_equal(Q8._int_mm(ft.tensor(src), ft.tensor(b)).numpy(),
                                          torch._int_mm(torch.tensor(src), torch.tensor(b)).numpy())


# ---- 5. fake quantization -----------------------------------------------------------------------------------------
_FQ_X = [-1.0, 0.0, 0.25, 0.35, 0.45, 2.0, 30.0, -0.05, 0.15, -0.15, 1.25, 1.35, 0.5, 1.5, 2.5, -0.5, -2.5,
         float("nan"), float("inf"), float("-inf")]


def _fqx(m, dt="float32"):
    return m.tensor(_FQ_X).to(getattr(m, dt))


FQT = {
    "basic": lambda m, f, x: f(x, 0.1, 10, 0, 255),
    "ties": lambda m, f, x: f(x, 1.0, 0, -128, 127),
    "ties_zero_point": lambda m, f, x: f(x, 1.0, 3, -128, 127),
    "scale_odd": lambda m, f, x: f(x, 0.3, 2, -5, 5),
    "scale_int": lambda m, f, x: f(x, 1, 0, 0, 255),
    "scale_bool": lambda m, f, x: f(x, True, 1, 0, 255),
    "scale_zero": lambda m, f, x: f(x, 0.0, 0, 0, 255),
    "scale_negative": lambda m, f, x: f(x, -0.1, 0, 0, 255),
    "scale_tiny": lambda m, f, x: f(x, 1e-4, 0, -128, 127),
    "scale_numpy": lambda m, f, x: f(x, np.float32(0.1), 10, 0, 255),
    "wide_range": lambda m, f, x: f(x, 0.1, 0, -2 ** 31, 2 ** 31),
    "2d": lambda m, f, x: f(x.reshape(4, 5), 0.1, 10, 0, 255),
    "0d": lambda m, f, x: f(x[3], 0.1, 10, 0, 255),
    "tensor_qparams": lambda m, f, x: f(x, m.tensor(0.1), m.tensor(10), 0, 255),
    "tensor_qparams_int32_zp": lambda m, f, x: f(x, m.tensor([0.1]), m.tensor([10], dtype=m.int32), 0, 255),
    "tensor_qparams_float_zp": lambda m, f, x: f(x, m.tensor(0.1), m.tensor(10.6), 0, 255),
    "tensor_qparams_bool_zp": lambda m, f, x: f(x, m.tensor(0.1), m.tensor(True), 0, 255),
    "tensor_qparams_zp_out_of_range": lambda m, f, x: f(x, m.tensor(0.1), m.tensor(300), 0, 255),
    "tensor_qparams_scale_bf16": lambda m, f, x: f(x, m.tensor(0.1).bfloat16(), m.tensor(10), 0, 255),
    "tensor_qparams_scale_f64": lambda m, f, x: f(x, m.tensor(0.1, dtype=m.float64), m.tensor(10), 0, 255),
    "tensor_qparams_scale_1x1": lambda m, f, x: f(x, m.tensor([[0.1]]), m.tensor([[10]]), 0, 255),
    "tensor_qparams_two_elements": lambda m, f, x: f(x, m.tensor([0.1, 0.2]), m.tensor(10), 0, 255),
    "tensor_qparams_empty": lambda m, f, x: f(x, m.tensor([]), m.tensor([10]), 0, 255),
    "tensor_qparams_range_first": lambda m, f, x: f(x, m.tensor([0.1, 0.2]), m.tensor(10), 255, 0),
    "tensor_scale_int_zp": lambda m, f, x: f(x, m.tensor(0.1), 10, 0, 255),
    "float_scale_tensor_zp": lambda m, f, x: f(x, 0.1, m.tensor(10), 0, 255),
    "int_tensor_quant_min": lambda m, f, x: f(x, 0.1, 10, m.tensor(0), 255),
    "quant_min_above_max": lambda m, f, x: f(x, 0.1, 10, 255, 0),
    "zero_point_out_of_range": lambda m, f, x: f(x, 0.1, 300, 0, 255),
    "zero_point_negative": lambda m, f, x: f(x, 0.1, -1, 0, 255),
    "int64_input": lambda m, f, x: f(x.long(), 0.1, 10, 0, 255),
    "int64_input_range_first": lambda m, f, x: f(x.long(), 0.1, 10, 255, 0),
    "bool_input": lambda m, f, x: f(x.bool(), 0.1, 10, 0, 255),
    "float8_input": lambda m, f, x: f(x.to(m.float8_e4m3fn), 0.1, 10, 0, 255),
    "zero_point_float": lambda m, f, x: f(x, 0.1, 10.0, 0, 255),
    "zero_point_bool": lambda m, f, x: f(x, 0.1, True, 0, 255),
    "zero_point_float_tensor": lambda m, f, x: f(x, 0.1, m.tensor(2.0), 0, 255),
    "scale_1d_tensor_int_zp": lambda m, f, x: f(x, m.tensor([0.1]), 2, 0, 255),
    "quant_min_float": lambda m, f, x: f(x, 0.1, 10, 0.0, 255),
    "input_none": lambda m, f, x: f(None, 0.1, 10, 0, 255),
    "input_list": lambda m, f, x: f([1.0], 0.1, 10, 0, 255),
    "no_args": lambda m, f, x: f(),
    "four_args": lambda m, f, x: f(x, 0.1, 10, 0),
    "six_args": lambda m, f, x: f(x, 0.1, 10, 0, 255, 1),
    "out": lambda m, f, x: f(x, 0.1, 10, 0, 255, out=m.empty(20)),
    "keywords": lambda m, f, x: f(input=x, scale=m.tensor(0.1), zero_point=m.tensor(10), quant_min=0, quant_max=255),
    "keywords_scalar": lambda m, f, x: f(x, scale=0.1, zero_point=10, quant_min=0, quant_max=255),
    "keyword_typo": lambda m, f, x: f(x, 0.1, 10, 0, quant_mx=255),
}


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", sorted(FQT))
def test_fake_quantize_per_tensor(case, dt):
    """torch's rounding (nearbyint of x * (1 / scale), in float -- double for double --, NaN to quant_min), its
    two overloads (numbers; one-element tensors), its checks in its order and its parser's TypeErrors."""
    _same(lambda m: FQT[case](m, _fn(m, "fake_quantize_per_tensor_affine"), _fqx(m, dt)))


_W = [[-1.0, 0.0, 0.25, 0.35], [0.45, 2.0, 30.0, -0.05], [0.15, -0.15, 1.25, float("nan")]]


def _qp(m, zp=(0, 10, -3), dtype="int32"):
    return m.tensor([0.1, 0.2, 0.5]), m.tensor(list(zp), dtype=getattr(m, dtype))


FQC = {
    "int_zero_point": lambda m, f, w: f(w, *_qp(m), 0, -128, 127),
    "float_zero_point": lambda m, f, w: f(w, *_qp(m, dtype="float32"), 0, -128, 127),
    "float_zero_point_fraction": lambda m, f, w: f(w, *_qp(m, (0.4, 10.6, -3.5), "float32"), 0, -128, 127),
    "half_zero_point": lambda m, f, w: f(w, *_qp(m, dtype="float16"), 0, -128, 127),
    "float_zero_point_out_of_range": lambda m, f, w: f(w, *_qp(m, (0, 1000, -300), "float32"), 0, -128, 127),
    "axis1": lambda m, f, w: f(w, m.tensor([0.1, 0.2, 0.5, 1.0]), m.tensor([0, 1, 2, 3], dtype=m.int32), 1, 0, 255),
    "axis_tensor": lambda m, f, w: f(w, *_qp(m), m.tensor(0), -128, 127),
    "3d": lambda m, f, w: f(w[None].expand(2, 3, 4), *_qp(m), 1, -128, 127),
    "1d": lambda m, f, w: f(w[0, :3], *_qp(m), 0, -128, 127),
    "empty": lambda m, f, w: f(w[:, :0], *_qp(m), 0, -128, 127),
    "inf": lambda m, f, w: f(m.tensor([[float("inf"), float("-inf")]]).to(w.dtype), m.tensor([0.1]),
                             m.tensor([1], dtype=m.int32), 0, -128, 127),
    "inf_float_zero_point": lambda m, f, w: f(m.tensor([[float("inf"), float("-inf")]]).to(w.dtype), m.tensor([0.1]),
                                              m.tensor([1.0]), 0, -128, 127),
    "scale_zero": lambda m, f, w: f(w, m.tensor([0.1, 0.0, 0.5]), _qp(m)[1], 0, -128, 127),
    "scale_negative": lambda m, f, w: f(w, m.tensor([0.1, -0.2, 0.5]), _qp(m)[1], 0, -128, 127),
    "scale_tiny": lambda m, f, w: f(w, m.tensor([1e-3, 1e-4, 1e-5]), _qp(m)[1], 0, -128, 127),
    "axis_negative": lambda m, f, w: f(w, m.tensor([0.1, 0.2, 0.5, 1.0]), m.tensor([0, 1, 2, 3], dtype=m.int32),
                                       -1, 0, 255),
    "axis_out_of_range": lambda m, f, w: f(w, *_qp(m), 2, -128, 127),
    "input_0d": lambda m, f, w: f(w[0, 0], m.tensor([0.1]), m.tensor([1], dtype=m.int32), 0, -128, 127),
    "wrong_length": lambda m, f, w: f(w, m.tensor([0.1, 0.2]), m.tensor([0, 1], dtype=m.int32), 0, -128, 127),
    "length_mismatch": lambda m, f, w: f(w, _qp(m)[0], m.tensor([0, 1], dtype=m.int32), 0, -128, 127),
    "scale_2d": lambda m, f, w: f(w, _qp(m)[0][None], _qp(m)[1][None], 0, -128, 127),
    "zero_point_2d": lambda m, f, w: f(w, _qp(m)[0], _qp(m)[1][None], 0, -128, 127),
    "scale_0d": lambda m, f, w: f(w, m.tensor(0.1), m.tensor(0, dtype=m.int32), 0, -128, 127),
    "scale_f64": lambda m, f, w: f(w, _qp(m)[0].double(), _qp(m)[1], 0, -128, 127),
    "scale_int64": lambda m, f, w: f(w, m.tensor([1, 2, 3]), _qp(m)[1], 0, -128, 127),
    "zero_point_int64": lambda m, f, w: f(w, *_qp(m, dtype="int64"), 0, -128, 127),
    "zero_point_uint8": lambda m, f, w: f(w, *_qp(m, (0, 1, 2), "uint8"), 0, -128, 127),
    "quant_min_above_max": lambda m, f, w: f(w, *_qp(m), 0, 127, -128),
    "zero_point_out_of_range": lambda m, f, w: f(w, *_qp(m, (0, 200, 0)), 0, -128, 127),
    "int64_input": lambda m, f, w: f(w.long(), *_qp(m), 0, -128, 127),
    "int64_input_range_first": lambda m, f, w: f(w.long(), *_qp(m), 0, 127, -128),
    "float8_input": lambda m, f, w: f(w.to(m.float8_e4m3fn), *_qp(m), 0, -128, 127),
    "scale_list": lambda m, f, w: f(w, [0.1, 0.2, 0.5], _qp(m)[1], 0, -128, 127),
    "axis_float": lambda m, f, w: f(w, *_qp(m), 0.0, -128, 127),
    "quant_min_bool": lambda m, f, w: f(w, *_qp(m), 0, True, 127),
    "missing": lambda m, f, w: f(w, *_qp(m), 0, -128),
    "too_many": lambda m, f, w: f(w, *_qp(m), 0, -128, 127, 1),
    "keywords": lambda m, f, w: f(w, *_qp(m), axis=0, quant_min=-128, quant_max=127),
}


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", sorted(FQC))
def test_fake_quantize_per_channel(case, dt):
    """Per-slice scales / zero points along ``axis`` (int32 zero points range-checked; float ones rounded with the
    product, in float), torch's checks in its order."""
    _same(lambda m: FQC[case](m, _fn(m, "fake_quantize_per_channel_affine"), m.tensor(_W).to(getattr(m, dt))))


def _fq_grad(m, which, dt, tensor_qparams=False):
    x = m.tensor([-2.6, -2.5, -2.4, 0.3, 2.4, 2.5, 2.6, 1.0, float("nan")], dtype=getattr(m, dt), requires_grad=True)
    if which == "tensor":
        sc, zp = (m.tensor(1.0), m.tensor(0)) if tensor_qparams else (1.0, 0)
        y = _fn(m, "fake_quantize_per_tensor_affine")(x, sc, zp, -2, 2)
    else:
        y = _fn(m, "fake_quantize_per_channel_affine")(x.reshape(3, 3), m.tensor([1.0, 0.5, 2.0]),
                                                       m.tensor([0, 1, -1], dtype=m.int32), 0, -2, 2)
    y.backward(m.arange(1.0, 10.0, dtype=y.dtype).reshape(y.shape))
    return y, type(y.grad_fn).__name__, y.grad_fn.name(), x.grad


@pytest.mark.parametrize("dt", ["float32", "float64", "float16"])
@pytest.mark.parametrize("which", ["tensor", "tensor_qparams", "channel"])
def test_fake_quantize_straight_through_gradient(which, dt):
    """The gradient is the incoming one where the rounded value is inside [quant_min, quant_max], 0 elsewhere (and
    at NaN); grad_fn names as torch's, by overload."""
    _same(lambda m: _fq_grad(m, "channel" if which == "channel" else "tensor", dt,
                                    which == "tensor_qparams"))


@pytest.mark.parametrize("case", ["per_tensor_scale", "per_tensor_zero_point", "per_channel_scale",
                                  "per_channel_zero_point", "no_grad"])
def test_fake_quantize_qparams_requiring_grad(case):
    def run(m):
        x = m.ones(1, 3)
        s, z = m.tensor(0.1), m.tensor(1.0)
        fq, fc = _fn(m, "fake_quantize_per_tensor_affine"), _fn(m, "fake_quantize_per_channel_affine")
        if case == "per_tensor_scale":
            return fq(x, s.requires_grad_(), m.tensor(1), 0, 255)
        if case == "per_tensor_zero_point":
            return fq(x, s, z.requires_grad_(), 0, 255)
        if case == "per_channel_scale":
            return fc(x, m.tensor([0.1], requires_grad=True), m.tensor([1], dtype=m.int32), 0, 0, 255)
        if case == "per_channel_zero_point":
            return fc(x, m.tensor([0.1]), m.tensor([1.0], requires_grad=True), 0, 0, 255)
        with m.no_grad():
            return fq(x, s.requires_grad_(), m.tensor(1), 0, 255)
    _same(run)


def test_fake_quantize_random_values_bitwise():
    rng = np.random.default_rng(2)
    for _ in range(4):
        x = (rng.standard_normal(300) * 10.0 ** rng.uniform(-2, 2)).astype(np.float32)
        x[:40] = (rng.integers(-300, 300, 40) + 0.5) * np.float32(0.1)
        scale = float(rng.choice([0.1, 0.25, 0.3, 7.0, 0.0173]))
        qmin, qmax = sorted(rng.integers(-300, 300, 2).tolist())
        zp = int(rng.integers(qmin, qmax + 1))
        sc = rng.choice([0.1, 0.3, 1e-3, 7.0], 3).astype(np.float32)
        zpi = rng.integers(qmin, qmax + 1, 3).astype(np.int32)
        for dt in ("float32", "float64", "float16", "bfloat16"):
            _same(lambda m: _fn(m, "fake_quantize_per_tensor_affine")(m.tensor(x).to(getattr(m, dt)), scale, zp,
                                                                       qmin, qmax))
            for zpv in (zpi, zpi.astype(np.float32) + np.float32(0.25)):
                _same(lambda m: _fn(m, "fake_quantize_per_channel_affine")(
                    m.tensor(x.reshape(3, 100)).to(getattr(m, dt)), m.tensor(sc), m.tensor(zpv), 0, qmin, qmax))


# ---- 6. float8 kernels torch lacks ---------------------------------------------------------------------------------
def _f8x(m):
    return m.tensor([[1.0, -2.5, 3.0], [0.1, 7.0, -0.0]]).to(m.float8_e4m3fn)


F8_OPS = {
    "mul_0d_f32": lambda m, x: x * m.tensor(2.0),
    "mul_0d_f32_first": lambda m, x: m.tensor(2.0) * x,
    "mul_0d_f8": lambda m, x: x * m.tensor(2.0).to(m.float8_e4m3fn),
    "mul_0d_f8_first": lambda m, x: m.tensor(2.0).to(m.float8_e4m3fn) * x,
    "mul_0d_both": lambda m, x: m.tensor(2.0).to(m.float8_e4m3fn) * m.tensor(3.0).to(m.float8_e4m3fn),
    "mul_0d_e5m2": lambda m, x: x * m.tensor(2.0).to(m.float8_e5m2),
    "mul_full": lambda m, x: x * x,
    "mul_broadcast_row": lambda m, x: x * x[:1],
    "mul_number": lambda m, x: x * 2.0,
    "mul_inplace_0d": lambda m, x: x.clone().mul_(m.tensor(2.0)),
    "mul_inplace_full": lambda m, x: x.clone().mul_(x),
    "mul_fn_0d": lambda m, x: m.mul(x, m.tensor(2.0)),
    "div_0d": lambda m, x: x / m.tensor(2.0),
    "div_0d_first": lambda m, x: m.tensor(2.0) / x,
    "div_full": lambda m, x: x / x,
    "true_divide_0d": lambda m, x: m.true_divide(x, m.tensor(2.0).to(m.float8_e4m3fn)),
    "add_0d": lambda m, x: x + m.tensor(2.0),
    "sub_0d": lambda m, x: x - m.tensor(2.0).to(m.float8_e4m3fn),
    "count_nonzero": lambda m, x: m.count_nonzero(x),
    "count_nonzero_method": lambda m, x: x.count_nonzero(),
    "count_nonzero_dim": lambda m, x: m.count_nonzero(x, dim=1),
    "count_nonzero_dims": lambda m, x: m.count_nonzero(x, dim=(0, 1)),
    "count_nonzero_empty_dims": lambda m, x: m.count_nonzero(x, dim=()),
    "count_nonzero_f32_empty_dims": lambda m, x: m.count_nonzero(x.float(), dim=()),
    "equal": lambda m, x: m.equal(x, x),
    "equal_method": lambda m, x: x.equal(x),
    "equal_0d": lambda m, x: m.equal(x[0, 0], x[0, 0]),
    "equal_empty": lambda m, x: m.equal(x[:0], x[:0]),
    "equal_shapes_differ": lambda m, x: m.equal(x, x[:1]),
    "equal_f32": lambda m, x: m.equal(x, x.float()),
    "equal_e5m2": lambda m, x: m.equal(x, x.to(m.float8_e5m2)),
    "nonzero": lambda m, x: x.nonzero(),
    "nonzero_tuple": lambda m, x: x.nonzero(as_tuple=True),
    "argwhere": lambda m, x: m.argwhere(x),
}


@pytest.mark.parametrize("case", sorted(F8_OPS))
def test_float8_kernels(case):
    """torch's mul/div take a one-element ``other`` as a scalar: its ``*_reduced_float`` kernel has no float8 case;
    count_nonzero's all-reduce and equal have none either."""
    _same(lambda m: F8_OPS[case](m, _f8x(m)))


# ---- 7. uint16 / uint32 / uint64 ------------------------------------------------------------------------------------
WIDE = {
    "neg": lambda m, a: -a,
    "neg_": lambda m, a: a.clone().neg_(),
    "negative": lambda m, a: m.negative(a),
    "neg_0d": lambda m, a: -a[0],
    "abs": lambda m, a: a.abs(),
    "abs_": lambda m, a: a.clone().abs_(),
    "absolute": lambda m, a: m.absolute(a),
    "mm": lambda m, a: a.reshape(2, 2) @ a.reshape(2, 2),
    "mm_fn": lambda m, a: m.mm(a.reshape(2, 2), a.reshape(2, 2)),
    "dot": lambda m, a: a @ a,
    "dot_fn": lambda m, a: m.dot(a, a),
    "vdot": lambda m, a: m.vdot(a, a),
    "mv": lambda m, a: a.reshape(2, 2) @ a[:2],
    "mv_fn": lambda m, a: m.mv(a.reshape(2, 2), a[:2]),
    "vm": lambda m, a: a[:2] @ a.reshape(2, 2),
    "nonzero": lambda m, a: a.nonzero(),
    "argwhere": lambda m, a: m.argwhere(a),
    "where_1arg": lambda m, a: m.where(a),
    "bmm": lambda m, a: a.reshape(1, 2, 2) @ a.reshape(1, 2, 2),
    "bmm_fn": lambda m, a: m.bmm(a.reshape(1, 2, 2), a.reshape(1, 2, 2)),
    "batch_matrix": lambda m, a: a.reshape(1, 2, 2) @ a.reshape(2, 2),
    "matrix_batch": lambda m, a: a.reshape(2, 2) @ a.reshape(1, 2, 2),
    "batch_vector": lambda m, a: a.reshape(1, 2, 2) @ a[:2],
    "vector_batch": lambda m, a: a[:2] @ a.reshape(1, 2, 2),
    "addmm": lambda m, a: m.addmm(a.reshape(2, 2), a.reshape(2, 2), a.reshape(2, 2)),
    "mul_still_works": lambda m, a: a * a,
}


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("case", sorted(WIDE))
def test_wide_unsigned_kernels(case, dt):
    """torch 2.13 has no uint16/32/64 neg_cpu / abs_cpu / matmul kernels (each product names the kernel it lowers
    to: dot, addmv_impl_cpu, addmm_impl_cpu_, bmm)."""
    _same(lambda m: WIDE[case](m, m.tensor([1, 2, 3, 0], dtype=getattr(m, dt))))
