"""Parity with torch 2.13 for a red team's low-bit / integer-range findings: float -> uint32 / uint64 casts (torch's
x86 conversions, including the vectorised loop's rule for uint32), float64 -> uint8 through int64, NaN of the fnuz /
e8m0 float8 types to an integer is 0; linspace of an integer dtype converts start / end to it first (checked) and
interpolates in double; randint's bounds checks of the dtype (errors, float bounds moved onto representable values,
the precision warning); scatter's Python value is checked against the dtype; arange / range / linspace have no
uint16..64 (nor bool) kernel; ``tensor`` stores Python numbers into an integer dtype leaf by leaf (2**64 into uint64
is Python's OverflowError, a huge int into bool is True, 2.0**63 into int64 is INT64_MIN, big ints stay exact)."""
import random

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same, warnings_of

_NAN, _INF = float("nan"), float("inf")
_VALS = [3e9, -3e9, 1e19, 1e20, -1e20, _INF, -_INF, _NAN, 2.0 ** 31, 2.0 ** 32, 2.0 ** 32 - 1, 2.0 ** 63, 2.0 ** 64,
         -2.0 ** 31, -2.0 ** 31 - 1, -2.0 ** 63, -2.0 ** 63 - 5000, -1.5, 4294967296.0 * 3 + 5, 70000., -70000., 1.9e19,
         0.5, 7.9, 4e9, 255.9]


def _src(m, src, n):
    return m.tensor(_VALS[:n], dtype=m.float64).to(getattr(m, src))


# ---- float -> uint32 / uint64 / uint8 ----------------------------------------------------------------------------
@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 9, 26])
def test_float_to_uint32_is_torch_cast(src, n):
    # (a contiguous float32 / float64 / bfloat16 / complex source of 4+ values takes the vectorised loop's rule
    # but for its scalar tail: NaN, -inf, -3e9 give 2^31 there, 0 in the tail and in a one-value cast)
    same(lambda m: _src(m, src, n).to(m.uint32))
    same(lambda m: _src(m, src, 26)[26 - n:].to(m.uint32))


@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16", "complex128"])
@pytest.mark.parametrize("n", [1, 26])
def test_float_to_uint64_is_torch_cast(src, n):
    same(lambda m: _src(m, src, n).to(m.uint64))
    same(lambda m: _src(m, src, 26)[26 - n:].to(m.uint64))


def test_uint_cast_examples():
    same(lambda m: m.tensor([3e9, 4e9]).to(m.uint32))
    same(lambda m: m.tensor([3e9, 4294967295.0], dtype=m.float64).to(m.uint32))
    same(lambda m: m.tensor([1e19, 2.0 ** 63, 1.8e19], dtype=m.float64).to(m.uint64))
    same(lambda m: m.tensor(_NAN).to(m.uint32))
    same(lambda m: m.tensor([_NAN] * 5).to(m.uint32))
    same(lambda m: m.tensor([-_INF] * 7, dtype=m.bfloat16).to(m.uint32))
    same(lambda m: m.tensor([[3e9, -3e9, _NAN], [1e20, -1.5, 7.]]).to(m.uint32))


@pytest.mark.parametrize("src", ["float64", "complex128", "float32"])
def test_float64_to_uint8_goes_through_int64(src):
    same(lambda m: _src(m, src, 26).to(m.uint8))
    same(lambda m: _src(m, src, 26).to(m.int8))
    same(lambda m: _src(m, src, 26).to(m.int16))


@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("dst", ["int32", "int64"])
def test_common_float_to_int_casts_unchanged(src, dst):
    same(lambda m: _src(m, src, 26).to(getattr(m, dst)))


# ---- float8 NaN -> integer -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("f8", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                                "float8_e8m0fnu"])
@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "int32", "int64", "uint32", "uint64", "bool"])
def test_float8_every_value_to_integer(f8, dst):
    # (fnuz / e8m0fnu NaN gives 0; e4m3fn / e5m2 NaN the int minimum, as float32's)
    same(lambda m: m.arange(256).to(m.uint8).view(getattr(m, f8)).to(getattr(m, dst)))
    same(lambda m: m.tensor([128, 255, 127], dtype=m.uint8).view(getattr(m, f8))[:1].to(getattr(m, dst)))


# ---- linspace of an integer dtype ----------------------------------------------------------------------------------
_LIN_ARGS = [(-5, 5, 7), (0, 300, 4), (0.7, 10, 3), (-5.0, 5, 7), (255.5, 0, 3), (-128.5, 0, 3), (_NAN, 0, 3),
             (3, 7, 1), (3.7, 7, 1), (300, 7, 1), (0, 1e10, 3), (True, 5, 3), (0, 4, 13), (42, -24, 100), (10, 0, 0),
             (-3.9, 3.9, 9), (0, 2 ** 40, 5), (0, _INF, 3), (-1, 70000, 5), (-2 ** 40, 1, 3), (-3, 0, 1),
             (-3.5, 0, 1), (_NAN, 0, 1), (300, 0, 0)]


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "bool"])
@pytest.mark.parametrize("args", _LIN_ARGS, ids=[str(a) for a in _LIN_ARGS])
def test_linspace_integer_dtype(dt, args):
    same(lambda m: m.linspace(*args, dtype=getattr(m, dt)))


def test_linspace_integer_random_cases():
    rng = random.Random(0)
    for _ in range(60):
        dt = rng.choice(["int8", "uint8", "int16", "int32", "int64"])
        s, e = rng.randint(-128, 127), rng.randint(-128, 127)
        if rng.random() < 0.4:
            s += rng.random() * 0.99 * (1 if s >= 0 else -1)
        n = rng.choice([2, 3, 5, 13, 17, 33, 100, 129, 300])
        same(lambda m: m.linspace(s, e, n, dtype=getattr(m, dt)))


@pytest.mark.parametrize("case", [
    lambda m: m.linspace(0, 2 ** 63 - 1, 3, dtype=m.int64),
    lambda m: m.linspace(-2 ** 63, 2 ** 63 - 1, 5, dtype=m.int64),
    lambda m: m.linspace(m.tensor(-5), m.tensor(5), 7, dtype=m.uint8),
    lambda m: m.linspace(m.tensor(-5.5), m.tensor(5), 7, dtype=m.int8),
    lambda m: m.linspace(0, 300, 3, out=m.empty(3, dtype=m.int8)),
    lambda m: m.linspace(-2.5, 3, 4, out=m.empty(3, dtype=m.int8)),
    lambda m: m.linspace(0, 1000, 301, dtype=m.int16),
    lambda m: m.linspace(0, 1e6, 3, dtype=m.float16),
    lambda m: m.linspace(0, 1e6, 1, dtype=m.float16),
    lambda m: m.linspace(0, 1e39, 3),
    lambda m: m.linspace(1e39, 2, 2, dtype=m.complex64),
    lambda m: m.linspace(1e39, 2, 1, dtype=m.complex64),
    lambda m: m.linspace(1, 2, 1, dtype=m.float8_e4m3fn),
    lambda m: m.linspace(1, 2, 0, dtype=m.float8_e4m3fn),
    lambda m: m.linspace(1, 2, 2, dtype=m.float8_e4m3fn),
    lambda m: m.linspace(0.5, 0, 1, dtype=m.bool),
    lambda m: m.linspace(1, 2, 1, dtype=m.int8, requires_grad=True),
], ids=["i64_top", "i64_full", "tensor_ends", "tensor_float_end", "out_overflow", "out", "i16_301", "f16_end",
        "f16_one", "f32_end", "c64_end", "c64_one", "f8_one", "f8_none", "f8_two", "bool_one", "int_requires_grad"])
def test_linspace_checked_ends(case):
    same(case)


# ---- randint's bounds --------------------------------------------------------------------------------------------
_RANDINT_DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "bool", "float16",
                   "bfloat16", "float32", "float64", "complex64", "float8_e4m3fn"]
_RANDINT_BOUNDS = [(0, 300), (-5, 3), (0, 3), (0, 2), (-1, 1), (0, 70000), (0, 2 ** 31 + 1), (-2 ** 31 - 1, 0),
                   (0, 2 ** 33), (0, 2050), (2050, 2060), (-2060, -2050), (0, 2052), (0, 2 ** 24 + 3), (0, 2 ** 53 + 3),
                   (2 ** 62, 2 ** 63 - 1), (-2 ** 63, 0), (0, 65505), (0, 65520), (65504, 65600), (3, 3), (5, 2),
                   (2 ** 63, 2 ** 63 + 2), (0, 2 ** 64), (-2 ** 64, 0)]


def _draw_outcome(r, lo, hi):
    """A draw's dtype, shape and, for an integer dtype, whether its values lie in [lo, hi) (the values themselves are
    random; a floating dtype's rounding may reach hi)."""
    ok = r.numel() == 0 or r.dtype.is_floating_point or str(r.dtype).endswith("bool") or (
        r.double().min().item() >= lo and r.double().max().item() < hi)
    return str(r.dtype), tuple(r.shape), ok


def _oob_warnings(lib, lo, hi, dt):
    def draw(m):
        try:
            m.randint(lo, hi, (2,), dtype=getattr(m, dt))
        except (RuntimeError, ValueError, NotImplementedError):
            pass
    return [w for w in warnings_of(lib, draw) if "out of bounds" in w[1]]


@pytest.mark.parametrize("dt", _RANDINT_DTYPES)
def test_randint_bounds_of_dtype(dt):
    for lo, hi in _RANDINT_BOUNDS:
        same(lambda m: _draw_outcome(m.randint(lo, hi, (50,), dtype=getattr(m, dt)), lo, hi))
        same(lambda m: _draw_outcome(m.randint_like(m.zeros(3, dtype=getattr(m, dt)), lo, hi), lo, hi))
        # the precision warning past 2^digits (floating dtypes), "from" and "to - 1" each
        assert _oob_warnings(ft, lo, hi, dt) == _oob_warnings(torch, lo, hi, dt), (dt, lo, hi)


def test_randint_messages():
    same(lambda m: m.randint(0, 300, (3,), dtype=m.int8))
    same(lambda m: m.randint(-5, 3, (3,), dtype=m.uint8))
    same(lambda m: m.randint(0, 3, (3,), dtype=m.bool))
    same(lambda m: m.randint(2050, 2060, (3,), dtype=m.bfloat16))
    assert warnings_of(ft, lambda m: m.randint(0, 2050, (3,), dtype=m.float16)) == \
        warnings_of(torch, lambda m: m.randint(0, 2050, (3,), dtype=m.float16))


# ---- scatter with a Python value ---------------------------------------------------------------------------------
_SCATTER_VALUES = [1000, -1, -200, -1.0, 1e6, 1e39, _INF, _NAN, 2 ** 40, 2 ** 63, 5, 2.5, True, complex(1, 0),
                   complex(1, 1), 70000]


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32", "int64", "bool", "float16", "bfloat16", "float32",
                                "float64", "complex64"])
def test_scatter_value_is_checked(dt):
    for v in _SCATTER_VALUES:
        if dt == "complex64" and v in (_INF, _NAN):  # (inf * (1+0j) is inf+nanj in both: close() takes no complex NaN)
            continue
        same(lambda m: m.ones(2, dtype=getattr(m, dt)).scatter(0, m.tensor([0]), v))
        same(lambda m: m.ones(2, dtype=getattr(m, dt)).scatter_(0, m.tensor([0]), v, reduce="add"))
        same(lambda m: m.ones(2, dtype=getattr(m, dt)).scatter_(0, m.tensor([0]), v, reduce="multiply"))
        same(lambda m: m.ones(2, dtype=getattr(m, dt)).scatter(0, m.tensor([], dtype=m.long), v))  # (unchecked)
        same(lambda m: m.scatter(m.ones(2, dtype=getattr(m, dt)), 0, m.tensor([0]), value=v))


def test_scatter_value_shape_error_first():
    same(lambda m: m.ones(2, dtype=m.int8).scatter(0, m.tensor([[0]]), 1000))


# ---- arange / range kernels ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64", "bool", "complex64", "uint8", "float8_e5m2"])
@pytest.mark.parametrize("case", [
    lambda m, d: m.arange(3, dtype=d),
    lambda m, d: m.arange(0, dtype=d),
    lambda m, d: m.arange(0, 3, 0, dtype=d),
    lambda m, d: m.arange(0, 3, -1, dtype=d),
    lambda m, d: m.arange(3, out=m.empty(3, dtype=d)),
    lambda m, d: m.range(0, 3, dtype=d),
], ids=["arange", "empty", "step0", "bad_sign", "out", "range"])
def test_arange_kernel_dtypes(dt, case):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (range's deprecation)
        same(lambda m: case(m, getattr(m, dt)))


# ---- tensor(): Python numbers into integer / bool dtypes -----------------------------------------------------------
_BIG = [2 ** 64, 2 ** 63, 2 ** 63 - 1, -2 ** 63, -2 ** 63 - 1, 2 ** 64 - 1, -2 ** 64, 2 ** 100]


@pytest.mark.parametrize("v", _BIG, ids=[str(v) for v in _BIG])
@pytest.mark.parametrize("dt", [None, "int64", "uint64", "int32", "uint8", "uint32", "float32", "float64", "bool",
                                "complex64", "float16"])
def test_tensor_big_python_ints(v, dt):
    def d(m):
        return None if dt is None else getattr(m, dt)
    same(lambda m: m.tensor([v], dtype=d(m)))
    same(lambda m: m.tensor(v, dtype=d(m)))
    same(lambda m: m.tensor([1.5, v], dtype=d(m)))
    same(lambda m: m.tensor([v, 1], dtype=d(m)))


@pytest.mark.parametrize("case", [
    lambda m: m.tensor([2 ** 64], dtype=m.uint64),
    lambda m: m.tensor([-1, 2 ** 64], dtype=m.uint64),
    lambda m: m.tensor(2.0 ** 63, dtype=m.int64),
    lambda m: m.tensor([2.0 ** 63, 1.0], dtype=m.int64),
    lambda m: m.tensor([-0.5], dtype=m.uint8),
    lambda m: m.tensor([-0.0], dtype=m.uint8),
    lambda m: m.tensor([300, 2 ** 64], dtype=m.int8),
    lambda m: m.tensor([1.5, 300, 2 ** 64], dtype=m.int8),
    lambda m: m.tensor([2 ** 64, 300], dtype=m.int8),
    lambda m: m.tensor([1e20, 2 ** 64], dtype=m.int64),
    lambda m: m.tensor([1.5, 2 ** 53 + 1], dtype=m.int64),
    lambda m: m.tensor([[1.5, 2 ** 62 + 1], [3, -7.9]], dtype=m.int64),
    lambda m: m.tensor([True, 2.5], dtype=m.int8),
    lambda m: m.tensor([-5, 2.5], dtype=m.uint8),
    lambda m: m.tensor([-1, 2], dtype=m.uint8),
    lambda m: m.tensor([-257, 2], dtype=m.uint8),
    lambda m: m.tensor([2 ** 1100], dtype=m.float32),
    lambda m: m.tensor([1.5, 2 ** 1100], dtype=m.bool),
    lambda m: m.tensor([3e9, -1.0, _NAN, 1e20], dtype=m.uint32),
    lambda m: m.tensor([3e9] * 5, dtype=m.uint32),
    lambda m: m.tensor([_NAN, 1.0], dtype=m.int32),
    lambda m: m.tensor([1.5, m.tensor(300)], dtype=m.int8),
    lambda m: m.tensor([np.complex64(1 + 0j), 2], dtype=m.int8),
    lambda m: m.tensor([300, np.complex64(1 + 0j)], dtype=m.int8),
], ids=["u64_2_64", "u64_neg_first", "i64_2_63", "i64_2_63_list", "u8_neg_half", "u8_neg_zero", "i8_order",
        "i8_order2", "i8_order3", "i64_float_first", "i64_exact", "i64_nested", "i8_bool", "u8_wrap", "u8_wrap2",
        "u8_too_neg", "f32_huge_int", "bool_huge_int", "u32_floats", "u32_3e9", "i32_nan", "i8_tensor_leaf", "np_complex_leaf", "np_complex_leaf_late"])
def test_tensor_leaf_conversion(case):
    same(case)
