"""Parity with torch 2.13 for leftover dtype discrepancies: float8 ``floor_divide`` / ``div(rounding_mode=)``
kernel names (``div_floor_cpu`` / ``div_trunc_cpu``, ``*_reduced_float`` with a number or 0-d ``other``); the
uint16/uint32/uint64 kernels (sign/sgn, square, div's rounding modes, fmax/fmin, clamp with tensor bounds, the
logical ops, outer); maximum/minimum/atan2/fmax/fmin/hypot refusing a Python number with the argument parser's
TypeError; float8 inputs of cumsum/cumprod/softmax/log_softmax with a ``dtype=``. Each case runs the same code on
both libraries."""
import pytest
import torch

import functorch_lite as ftl

from _parity import assert_same_outcome, same_rounded

F8 = ("float8_e4m3fn", "float8_e5m2")
WIDE = ("uint16", "uint32", "uint64")


def _f8(L, name, vals=(1.5, -2.5, 3.0)):
    return L.tensor(list(vals)).to(getattr(L, name))


@pytest.mark.parametrize("dt", F8)
@pytest.mark.parametrize("case", [
    lambda L, a: L.floor_divide(a, a), lambda L, a: L.floor_divide(a, 2.0), lambda L, a: L.floor_divide(a, a[0]),
    lambda L, a: L.floor_divide(a[0], a), lambda L, a: a // a, lambda L, a: a // 2, lambda L, a: 2 // a,
    lambda L, a: a.clone().floor_divide_(a),
    lambda L, a: L.div(a, a, rounding_mode="floor"), lambda L, a: L.div(a, 2.0, rounding_mode="floor"),
    lambda L, a: L.div(a, a[0], rounding_mode="floor"), lambda L, a: L.div(a[0], a, rounding_mode="floor"),
    lambda L, a: L.div(a, 2, rounding_mode="trunc"), lambda L, a: L.div(a, a, rounding_mode="trunc"),
    lambda L, a: L.div(2, a, rounding_mode="trunc"), lambda L, a: a.clone().div_(a, rounding_mode="floor"),
    lambda L, a: a.clone().div_(2.0, rounding_mode="trunc"), lambda L, a: L.div(a, L.ones(3), rounding_mode="floor"),
    lambda L, a: L.div(a, a), lambda L, a: L.div(a, 2.0), lambda L, a: L.div(2, a), lambda L, a: a * 2,
    lambda L, a: 2 * a, lambda L, a: a[0] * a, lambda L, a: L.true_divide(a, 2),
])
def test_float8_division_kernels(dt, case):
    assert_same_outcome(lambda L: case(L, _f8(L, dt)), torch, ftl)


@pytest.mark.parametrize("dt", WIDE)
@pytest.mark.parametrize("case", [
    lambda L, a, b: L.sign(a), lambda L, a, b: L.sgn(a), lambda L, a, b: a.clone().sign_(),
    lambda L, a, b: L.square(a), lambda L, a, b: L.div(a, b, rounding_mode="floor"),
    lambda L, a, b: L.div(a, b, rounding_mode="trunc"), lambda L, a, b: L.div(a, b), lambda L, a, b: a * b,
    lambda L, a, b: L.fmax(a, b), lambda L, a, b: L.fmin(a, b), lambda L, a, b: L.maximum(a, b),
    lambda L, a, b: L.minimum(a, b), lambda L, a, b: L.clamp(a, b, b), lambda L, a, b: L.clamp(a, min=b),
    lambda L, a, b: L.clamp(a, max=b), lambda L, a, b: L.clamp(a, 1), lambda L, a, b: L.clamp(a, 1, 4),
    lambda L, a, b: L.clamp(a, max=4), lambda L, a, b: L.clamp_min(a, b), lambda L, a, b: L.clamp_max(a, b),
    lambda L, a, b: L.clamp_min(a, 2), lambda L, a, b: L.logical_and(a, b), lambda L, a, b: L.logical_or(a, b),
    lambda L, a, b: L.logical_xor(a, b), lambda L, a, b: L.logical_not(a), lambda L, a, b: L.logical_and(a, L.ones(3)),
    lambda L, a, b: L.logical_and(a, L.ones(3, dtype=L.int64)), lambda L, a, b: L.outer(a, b),
    lambda L, a, b: L.ger(a, b), lambda L, a, b: L.inner(a[0], b), lambda L, a, b: L.where(a > 2, a, b),
    lambda L, a, b: L.eq(a, b), lambda L, a, b: L.lt(a, b), lambda L, a, b: a & b, lambda L, a, b: a ^ b,
    lambda L, a, b: L.isnan(a), lambda L, a, b: L.isfinite(a),
])
def test_wide_unsigned_kernels(dt, case):
    def f(L):
        d = getattr(L, dt)
        return case(L, L.tensor([1, 5, 3]).to(d), L.tensor([2, 2, 4]).to(d))
    assert_same_outcome(f, torch, ftl)


@pytest.mark.parametrize("case", [
    lambda L, x: L.clamp(x, x, x), lambda L, x: L.clamp(x, min=x), lambda L, x: L.clamp(x, max=x),
    lambda L, x: L.clamp(x, 1), lambda L, x: L.clamp(x, 1, 2), lambda L, x: L.clamp_min(x, x),
    lambda L, x: L.clamp_max(x, x), lambda L, x: L.clamp_min(x, 1), lambda L, x: L.logical_and(x, x),
    lambda L, x: L.logical_and(x, L.ones(2, dtype=L.int64)), lambda L, x: L.logical_not(x), lambda L, x: L.isnan(x),
])
def test_float8_bound_and_logical_kernels(case):
    assert_same_outcome(lambda L: case(L, _f8(L, "float8_e4m3fn", (1.0, 2.0))), torch, ftl)


@pytest.mark.parametrize("name", ["maximum", "minimum", "atan2", "fmax", "fmin", "hypot"])
@pytest.mark.parametrize("case", [
    lambda L, f, x: f(L)(x, 2.0), lambda L, f, x: f(L)(x, 2), lambda L, f, x: f(L)(x, other=2.0),
    lambda L, f, x: f(L)(2.0, x), lambda L, f, x: f(L)(x, x), lambda L, f, x: f(L)(x, L.tensor(2.0)),
])
def test_tensor_only_other(name, case):
    assert_same_outcome(lambda L: case(L, lambda M: getattr(M, name), L.tensor([1.0, -2.0, 3.0])), torch, ftl)


@pytest.mark.parametrize("name", ["maximum", "minimum", "atan2", "fmax", "fmin", "hypot"])
def test_tensor_only_other_method_forms(name):
    assert_same_outcome(lambda L: getattr(L.tensor([1.0, -2.0]), name)(2.0), torch, ftl)
    if name in ("atan2", "hypot"):
        assert_same_outcome(lambda L: getattr(L.tensor([1.0, -2.0]), name + "_")(2.0), torch, ftl)


def test_copysign_keeps_its_scalar_overload():
    assert_same_outcome(lambda L: L.copysign(L.tensor([1.0, -2.0]), -1.0), torch, ftl)


@pytest.mark.parametrize("dt", F8)
@pytest.mark.parametrize("out_dt", [None, "float32", "float64", "int64", "float8"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "softmax", "log_softmax", "F.softmax", "F.log_softmax",
                                "m.softmax", "m.cumsum"])
def test_float8_with_dtype(dt, out_dt, op):
    def f(L):
        x = _f8(L, dt, (1.0, 2.0, 0.5, -1.0)).reshape(2, 2)
        d = None if out_dt is None else getattr(L, dt if out_dt == "float8" else out_dt)
        if op.startswith("F."):
            return getattr(L.nn.functional, op[2:])(x, 1, dtype=d)
        if op.startswith("m."):
            return getattr(x, op[2:])(0, dtype=d)
        return getattr(L, op)(x, 1, dtype=d)
    same_rounded(f, torch, ftl)


@pytest.mark.parametrize("dt", F8)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_float8_softmax_result_dtype(dt, op):
    same_rounded(lambda L: getattr(L, op)(L.ones(2), 0, dtype=getattr(L, dt)), torch, ftl)
    same_rounded(lambda L: getattr(L, op)(L.ones(2, 3), 0, dtype=getattr(L, dt)), torch, ftl)


def test_float8_cumsum_grad_through_dtype():
    def f(L):
        x = L.tensor([1.0, 2.0, 3.0]).to(L.float8_e4m3fn)
        return L.cumsum(x, 0, dtype=L.float32).sum()
    same_rounded(f, torch, ftl)


NANSUM_INNER_HEAVISIDE = {
    "nansum f32": lambda L, f8, u: L.nansum(f8, dtype=L.float32),
    "nansum dim f64": lambda L, f8, u: L.nansum(f8, 0, dtype=L.float64),
    "nansum": lambda L, f8, u: L.nansum(f8),
    "nansum i64": lambda L, f8, u: L.nansum(f8, dtype=L.int64),
    "nansum to f8": lambda L, f8, u: L.nansum(f8.float(), dtype=L.float8_e4m3fn),
    "nanmean f32": lambda L, f8, u: L.nanmean(f8, dtype=L.float32),
    "inner u32": lambda L, f8, u: L.inner(u, u),
    "inner u16 2d": lambda L, f8, u: L.inner(u.to(L.uint16).reshape(1, 2), L.stack([u, u, u]).to(L.uint16)),
    "inner u32 0d": lambda L, f8, u: L.inner(u[0], u),
    "heaviside u32": lambda L, f8, u: L.heaviside(u, u),
    "heaviside u64": lambda L, f8, u: L.heaviside(u.to(L.uint64), u.to(L.uint64)),
}


@pytest.mark.parametrize("case", list(NANSUM_INNER_HEAVISIDE))
def test_nansum_float8_dtype_inner_heaviside_wide_unsigned(case):
    """float8 nansum / nanmean with a float ``dtype=`` compute (an integer one: torch's nan_to_num refusal); inner and
    heaviside have no uint16/32/64 kernel."""
    same_rounded(lambda L: NANSUM_INNER_HEAVISIDE[case](
        L, L.tensor([1.0, float("nan"), 2.0]).to(L.float8_e4m3fn), L.tensor([1, 2], dtype=L.uint32)), torch, ftl)
