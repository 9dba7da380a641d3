"""Table-driven parity sweep of every elementwise op in the op table against PyTorch 2.13.

The op list comes from ``functorch_lite.ops._registry.OPS`` (ops defined in
``functorch_lite.ops.elementwise``); ``test_every_elementwise_op_has_a_case`` fails when an op is
added without a row in ``CASES``. Each row runs with broadcasting inputs over float32/float64/
float16/bfloat16/int32/int64/bool: values, dtype and shape must match torch, and where torch raises
for a dtype we must raise the same exception type. Also: reflected operators, in-place forms,
broadcasting errors (BC-01..08) and float64 gradients, including the edge points where PyTorch's
derivative convention differs from JAX's (functorch_lite/ops/grad_overrides.py, issue 3).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.ops._registry import OPS

ELEMENTWISE = sorted(n for n, op in OPS.items() if op.impl.__module__ == "functorch_lite.ops.elementwise")
# Runtime budget (one XLA compile per op and dtype, ~30 ms, file < 30 s): rows run in float32, int64 and
# bool, two rows in three also in a half-precision dtype (bfloat16 / float16); the ~30 unary float
# ops (int/bool -> float32 by one shared rule) run in float32 plus one rotating dtype; float64 forwards are
# compared in the gradient sweep, int32 in the operator sweep; 'op/variant' rows run in float32 (and int64
# where integers take another path).
DTYPES = ["float32", "int64", "bool"]
_ROTATE = ["bfloat16", "float16", "int64", "bool"]
_INT_VARIANTS = ("div/", "round/", "pow/", "clamp/", "masked_fill/", "eq/", "add/", "sub/", "where/")

# ---- inputs --------------------------------------------------------------------------------------------
# 'A' (3, 4), 'B' (4,) and 'C' (3, 1) tensors in the test dtype; 'K' a (3, 1) bool condition, 'M' a (4,)
# bool mask. Domains keep functions defined (log: 'pos', asin: 'unit', acosh: 'ge1').
_FLOAT_A = {
    "any": [[-2.5, -1.0, -0.5, 0.0], [0.25, 0.5, 1.0, 1.5], [2.0, 2.75, -3.0, 3.5]],
    "pos": [[0.1, 0.5, 1.0, 1.5], [2.0, 2.5, 3.0, 3.5], [4.0, 0.25, 0.75, 5.0]],
    "unit": np.linspace(-0.9, 0.9, 12).reshape(3, 4),
    "ge1": 1.1 + 0.4 * np.arange(12.).reshape(3, 4),
    "special": [[np.nan, np.inf, -np.inf, 0.0], [-0.0, 1.5, -2.5, 1e30], [3.0, 7.0, 2.0, -1e-30]],
}
_FLOAT_B = {"any": [-1.5, 0.5, 2.0, -3.0], "pos": [0.5, 1.5, 2.0, 3.0], "small": [0.0, 1.0, 2.0, 3.0],
            "unit": [-0.5, 0.25, 0.75, -0.9]}
_INT_A = {"any": np.arange(-6, 6).reshape(3, 4), "pos": np.arange(1, 13).reshape(3, 4),
          "unit": [[-1, 0, 1, 0], [1, -1, 0, 1], [0, 0, -1, 1]], "ge1": np.arange(2, 14).reshape(3, 4)}
_INT_B = {"any": [-3, -1, 2, 5], "pos": [1, 2, 3, 5], "small": [0, 1, 2, 3], "unit": [-1, 0, 1, 1]}
_BOOL_A = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]
_BOOL_B = {"any": [True, False, True, True], "pos": [True] * 4, "small": [False, True, True, False],
           "unit": [True, False, False, True]}


def _values(spec: str, dtype: str, grad_offset: bool = False) -> Any:
    kind, _, dom = spec.partition(":")
    dom = dom or "any"
    if kind == "K":
        return np.array([[True], [False], [True]])
    if kind == "M":
        return np.array([True, False, False, True])
    if dtype == "bool":
        v = {"A": _BOOL_A, "B": _BOOL_B.get(dom, _BOOL_B["any"]), "C": [[True], [False], [True]]}[kind]
        return np.array(v)
    if dtype.startswith("int"):
        v = {"A": _INT_A.get(dom, _INT_A["any"]), "B": _INT_B.get(dom, _INT_B["any"]),
             "C": [[1], [2], [3]] if dom == "pos" else [[1], [-1], [2]]}[kind]
        return np.array(v, dtype=np.int64)
    v = {"A": _FLOAT_A[dom] if kind == "A" else None, "B": _FLOAT_B.get(dom),
         "C": [[1.0], [1.5], [2.5]] if dom == "pos" else [[0.5], [-1.0], [2.0]]}[kind]
    v = np.array(v, dtype=np.float64)
    if grad_offset and dom != "special":  # away from 0 and from A/B ties (edge points are tested apart)
        v = v + {"A": 0.0137, "B": -0.0071, "C": 0.0029}[kind]
    return v


def _make(m: Any, spec: Any, dtype: str, requires_grad: bool = False, grad_offset: bool = False) -> Any:
    if not isinstance(spec, str):
        return spec  # a Python scalar argument
    v = _values(spec, dtype, grad_offset)
    dt = m.bool if spec[0] in "KM" else getattr(m, dtype)
    return m.tensor(v, dtype=dt, requires_grad=requires_grad and spec[0] in "ABC")


# ---- the table ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """Argument specs (tensor specs like 'A:pos' or Python scalars) and an optional call ``fn(m, *args)``."""
    args: tuple
    fn: Callable[..., Any] | None = None


def _nnf(m: Any) -> Any:
    """Where ``gelu``/``silu``/``mish`` live: ``torch.nn.functional`` or the facade namespace."""
    return torch.nn.functional if m is torch else m


def U(dom: str = "any", fn: Callable[..., Any] | None = None) -> Case:
    return Case(("A:" + dom,), fn)


def B(a: str = "any", b: str = "any", fn: Callable[..., Any] | None = None) -> Case:
    return Case(("A:" + a, "B:" + b), fn)


CASES: dict[str, Case] = {
    "abs": U(), "acos": U("unit"), "acosh": U("ge1"), "asin": U("unit"), "asinh": U(), "atan": U(),
    "atanh": U("unit"), "ceil": U(), "cos": U(), "cosh": U(), "digamma": U("pos"), "digamma/zero": U("special"),
    "erf": U(), "erfc": U(),
    "erfinv": U("unit"), "exp": U(), "exp2": U(), "expm1": U(), "floor": U(), "frac": U(), "lgamma": U("pos"),
    "log": U("pos"), "log10": U("pos"), "log1p": U("unit"), "log2": U("pos"), "neg": U(), "positive": U(),
    "reciprocal": U("pos"), "relu": U(), "round": U(), "round/decimals": U(fn=lambda m, a: m.round(a, decimals=1)),
    "rsqrt": U("pos"), "sgn": U(), "sigmoid": U(), "sign": U(), "sin": U(), "sinh": U(), "sqrt": U("pos"),
    "square": U(), "tan": U("unit"), "tanh": U(), "trunc": U(),
    "gelu": U(fn=lambda m, a: _nnf(m).gelu(a)),
    "gelu/tanh": U(fn=lambda m, a: _nnf(m).gelu(a, approximate="tanh")),
    "silu": U(fn=lambda m, a: _nnf(m).silu(a)), "mish": U(fn=lambda m, a: _nnf(m).mish(a)),
    "isnan": U("special"), "isinf": U("special"), "isfinite": U("special"), "isposinf": U("special"),
    "isneginf": U("special"), "signbit": U("special"), "nan_to_num": U("special"),
    "nan_to_num/args": U("special", lambda m, a: m.nan_to_num(a, nan=1.5, posinf=9.0, neginf=-9.0)),
    "logical_not": U(), "bitwise_not": U(),
    "add": B(), "add/alpha": B(fn=lambda m, a, b: m.add(a, b, alpha=2)), "sub": B(),
    "sub/alpha": B(fn=lambda m, a, b: m.sub(a, b, alpha=2)), "rsub": B(), "mul": B(),
    "div": B("any", "any"), "div/trunc": B(fn=lambda m, a, b: m.div(a, b, rounding_mode="trunc")),
    "div/floor": B(fn=lambda m, a, b: m.div(a, b, rounding_mode="floor")), "true_divide": B(),
    "floor_divide": B(), "remainder": B(), "fmod": B(), "pow": B("any", "small"), "pow/pos_base": B("pos", "any"),
    "pow/scalar_exponent": Case(("A:any", 2)), "pow/scalar_base": Case((2, "B:small")),
    "pow/float_exponent": Case(("A:pos", 0.5)),
    "maximum": B(), "minimum": B(), "fmax": B(), "fmin": B(), "atan2": B(), "hypot": B(), "copysign": B(),
    "xlogy": B("any", "pos"), "eq": B(), "ne": B(), "lt": B(), "le": B(), "gt": B(), "ge": B(),
    "eq/scalar": Case(("A:any", 1)), "isclose": B(), "logical_and": B(), "logical_or": B(), "logical_xor": B(),
    "bitwise_and": B(), "bitwise_or": B(), "bitwise_xor": B(), "bitwise_left_shift": B("any", "small"),
    "bitwise_right_shift": B("any", "small"),
    "lerp": Case(("A:any", "B:any", 0.3)), "lerp/tensor_weight": Case(("A:any", "B:any", "C:unit")),
    "clamp": Case(("A:any", -1, 2)), "clamp/float_bounds": Case(("A:any", -1.25, 2.5)),
    "clamp/tensor_bounds": Case(("A:any", "B:unit", "C:pos")),
    "clamp/min_only": Case(("A:any",), lambda m, a: m.clamp(a, min=0.5)),
    "clamp/max_only": Case(("A:any",), lambda m, a: m.clamp(a, max=0)),
    "clamp_min": Case(("A:any", 0.5)), "clamp_max": Case(("A:any", 1)),
    "clamp_min/tensor": B(), "clamp_max/tensor": B(),
    "where": Case(("K", "A:any", "B:any")), "where/scalar": Case(("K", "A:any", 0.5)),
    "masked_fill": Case(("A:any", "M", 2.5)), "masked_fill/int_value": Case(("A:any", "M", -7)),
    "addcmul": Case(("A:any", "B:any", "C:any")),
    "addcmul/value": Case(("A:any", "B:any", "C:any"), lambda m, a, b, c: m.addcmul(a, b, c, value=2)),
    "addcdiv": Case(("A:any", "B:any", "C:pos")),
    "addcdiv/value": Case(("A:any", "B:any", "C:pos"), lambda m, a, b, c: m.addcdiv(a, b, c, value=-0.5)),
    "isin": B(), "isin/scalar": Case(("A:any", 1)),
    "isin/invert": B(fn=lambda m, a, b: m.isin(a, b, invert=True)),
}


def _op_of(key: str) -> str:
    return key.split("/")[0]


def _call(key: str, m: Any, args: list) -> Any:
    fn = CASES[key].fn
    return fn(m, *args) if fn is not None else getattr(m, _op_of(key))(*args)


def test_every_elementwise_op_has_a_case() -> None:
    """A new elementwise op without a row in CASES fails here (and unknown rows too)."""
    assert len(ELEMENTWISE) > 50
    assert sorted(set(ELEMENTWISE) - {_op_of(k) for k in CASES}) == []
    assert sorted({_op_of(k) for k in CASES} - set(ELEMENTWISE)) == []


_TOL = {"float32": (1e-5, 1e-6), "float64": (1e-9, 1e-12), "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2),
        "complex64": (1e-5, 1e-6)}


def _np(t: Any) -> np.ndarray:
    t = t.detach()
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
    return np.asarray(t.numpy(force=True) if isinstance(t, torch.Tensor) else t.numpy())  # force: ZeroTensor grads


def assert_close(ours: Any, theirs: torch.Tensor) -> None:
    """Same type, dtype, shape; values equal (integers/bools) or close for the result's float dtype."""
    assert isinstance(ours, ft.Tensor), type(ours)
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    a, b = _np(ours), _np(theirs)
    tol = _TOL.get(str(theirs.dtype).removeprefix("torch."))
    if tol is None:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=tol[0], atol=tol[1], equal_nan=True)


def run_both(f: Callable[[Any], Any]) -> None:
    """Compare ``f(ft)`` with ``f(torch)``; when torch raises, ours raises the same exception type."""
    try:
        theirs = f(torch)
    except Exception as e:  # noqa: BLE001  (any torch error must be mirrored)
        with pytest.raises(type(e)):
            f(ft)
        return
    assert_close(f(ft), theirs)


def _dtypes_for(key: str) -> list:
    """Dtypes a row runs in (see the runtime budget note at the top)."""
    if "/" in key:
        return ["float32", "int64"] if key.startswith(_INT_VARIANTS) else ["float32"]
    i = ELEMENTWISE.index(key)
    op = OPS[key]
    if op.promote == "float" and op.tensors == 1:
        return ["float32", _ROTATE[i % 4]]
    return DTYPES + ([_ROTATE[i % 3]] if i % 3 < 2 else [])


_PARITY = [(k, d) for k in CASES for d in _dtypes_for(k)]


@pytest.mark.parametrize(("key", "dtype"), _PARITY, ids=[f"{k}-{d}" for k, d in _PARITY])
def test_elementwise_parity(key: str, dtype: str) -> None:
    """Values/dtype/shape of every table row, broadcasting (3,4) with (4,)/(3,1), per dtype."""
    run_both(lambda m: _call(key, m, [_make(m, s, dtype) for s in CASES[key].args]))


# ---- reflected operators and scalar operands -------------------------------------------------------------------
REFLECTED: dict[str, Callable[[Any], Any]] = {
    "2-x": lambda x: 2 - x, "2/x": lambda x: 2 / x, "2**x": lambda x: 2 ** x, "x**2": lambda x: x ** 2,
    "2.5**x": lambda x: 2.5 ** x, "x**0.5": lambda x: x ** 0.5, "x**-1": lambda x: x ** -1,
    "2+x": lambda x: 2 + x, "1.5*x": lambda x: 1.5 * x, "x/2": lambda x: x / 2,
    "x-2.5": lambda x: x - 2.5, "True+x": lambda x: True + x, "7//x": lambda x: 7 // x, "7%x": lambda x: 7 % x,
    "-x": lambda x: -x, "+x": lambda x: +x,
    "abs(x)": lambda x: abs(x), "~x": lambda x: ~x, "x&1": lambda x: x & 1, "1|x": lambda x: 1 | x,
    "x<<1": lambda x: x << 1, "2<x": lambda x: 2 < x, "x==1": lambda x: x == 1, "1.5>=x": lambda x: 1.5 >= x,
    "np_f64*x": lambda x: np.float64(2.5) * x if isinstance(x, torch.Tensor) else x * np.float64(2.5),
    "x*np_i64": lambda x: x * np.int64(3),
}
_REFLECT_DTYPES = ["float32", "int32", "bool"]


@pytest.mark.parametrize("dtype", _REFLECT_DTYPES)
@pytest.mark.parametrize("expr", list(REFLECTED))
def test_reflected_operators(expr: str, dtype: str) -> None:
    """Python operators with a scalar on either side (PRO-03/05/09/11/14..16 dtypes and errors)."""
    run_both(lambda m: REFLECTED[expr](_make(m, "A:pos", dtype)))


def test_scalar_operands_error_messages() -> None:
    """PRO-10/15/16/22/23: exact messages."""
    cases: list[Callable[[Any], Any]] = [
        lambda m: m.tensor([2]) ** -1, lambda m: m.tensor([True]) - m.tensor([False]),
        lambda m: -m.tensor([True]), lambda m: m.tensor([5]) // 0, lambda m: m.tensor([5]) % 0,
        lambda m: m.tensor([5]).fmod(0), lambda m: m.tensor([5, 0]).remainder(m.tensor([1, 0])),
        lambda m: m.div(m.tensor([1]), 2, rounding_mode="round"), lambda m: m.clamp(m.ones(2)),
    ]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            case(torch)
        with pytest.raises(type(theirs.value), match="^" + re.escape(str(theirs.value)) + "$"):
            case(ft)


# ---- in-place forms (INP-04..09, PRO-27..30) -------------------------------------------------------------
INPLACE: dict[str, Callable[[Any, Any, Any], Any]] = {
    "x+=y": lambda m, x, y: x.__iadd__(y), "x-=y": lambda m, x, y: x.__isub__(y),
    "x*=y": lambda m, x, y: x.__imul__(y), "x/=y": lambda m, x, y: x.__itruediv__(y),
    "x+=1.5": lambda m, x, y: x.__iadd__(1.5), "x*=2": lambda m, x, y: x.__imul__(2),
    "add_": lambda m, x, y: x.add_(y), "add_alpha": lambda m, x, y: x.add_(y, alpha=3),
    "sub_": lambda m, x, y: x.sub_(y), "mul_": lambda m, x, y: x.mul_(y), "div_": lambda m, x, y: x.div_(y),
    "div_floor": lambda m, x, y: x.div_(y, rounding_mode="floor"), "pow_": lambda m, x, y: x.pow_(2),
    "clamp_": lambda m, x, y: x.clamp_(0, 2), "clamp_float": lambda m, x, y: x.clamp_(min=0.5),
    "clamp_min_": lambda m, x, y: x.clamp_min_(1), "masked_fill_": lambda m, x, y: x.masked_fill_(x > 1, -1),
    "masked_fill_float": lambda m, x, y: x.masked_fill_(m.tensor([True, False, False, True]), 2.5),
    "abs_": lambda m, x, y: x.abs_(), "neg_": lambda m, x, y: x.neg_(), "exp_": lambda m, x, y: x.exp_(),
    "sqrt_": lambda m, x, y: x.sqrt_(), "floor_": lambda m, x, y: x.floor_(),
    "f32_add_i64": lambda m, x, y: x.add_(m.tensor([1, 2, 3, 4])),
    "add_f64_tensor": lambda m, x, y: x.add_(m.tensor([0.5, 1.5, 2.5, 3.5], dtype=m.float64)),
    "add_complex": lambda m, x, y: x.add_(m.tensor([1j, 1j, 1j, 1j])),
    "INP-09_broadcast_grows": lambda m, x, y: x.add_(m.ones(2, 3, 4, dtype=x.dtype)),
    "broadcast_other_ok": lambda m, x, y: x.mul_(m.ones(1, dtype=x.dtype) * 2),
    "eq_": lambda m, x, y: x.eq_(y), "lt_": lambda m, x, y: x.lt_(2),
    "logical_and_": lambda m, x, y: x.logical_and_(y), "bitwise_or_": lambda m, x, y: x.bitwise_or_(y),
}


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_forms(name: str, dtype: str) -> None:
    """In-place ops keep self's dtype (PRO-29), return self (INP-04), bump ``_version``, or raise
    PyTorch's exact error (PRO-27/28/30, INP-07/09)."""
    results = []
    for m in (torch, ft):
        x, y = _make(m, "A:pos", dtype), _make(m, "B:pos", dtype)  # the parity sweep's shapes: cached kernels
        try:
            r = INPLACE[name](m, x, y)
        except Exception as e:  # noqa: BLE001
            results.append(e)
            continue
        assert r is x and x._version == 1
        results.append(x)
    theirs, ours = results
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs) and str(ours) == str(theirs), (ours, theirs)
    else:
        assert not isinstance(ours, Exception), ours
        assert_close(ours, theirs)


def test_PRO_29_inplace_keeps_narrow_float() -> None:
    """PRO-29: ``f16_t += f64_tensor`` stays float16; INP-08: ``f32.add_(int64)`` is allowed."""
    res = []
    for m in (torch, ft):
        h = m.tensor([1.0, 2.5], dtype=m.float16)
        h += m.tensor([0.1, 0.2], dtype=m.float64)
        f = m.ones(2)
        f.add_(m.tensor([1, 2]))
        res.append((h, f))
    assert_close(res[1][0], res[0][0])
    assert_close(res[1][1], res[0][1])


# ---- broadcasting (BC-01..08) ------------------------------------------------------------------------------
BROADCAST_ERRORS: dict[str, Callable[[Any], Any]] = {
    "BC-01": lambda m: m.ones(3) + m.ones(4),
    "BC-02": lambda m: m.ones(2, 3) + m.ones(2),
    "BC-03": lambda m: m.ones(32, 10) - m.ones(32),
    "BC-05": lambda m: m.ones(2, 3, 4) * m.ones(2, 4),
    "BC-07": lambda m: m.broadcast_shapes((3,), (4,)),
    "BC-07_int_argument": lambda m: m.broadcast_shapes((2, 1, 4), 3),
    "BC-08": lambda m: m.ones(3) == m.ones(4),
    "where": lambda m: m.where(m.ones(3, dtype=m.bool), m.ones(3), m.ones(4)),
    "where_cond": lambda m: m.where(m.ones(4, dtype=m.bool), m.ones(3), m.ones(3)),
    "lerp": lambda m: m.lerp(m.ones(3), m.ones(4), 0.5),
    "clamp_tensor_bounds": lambda m: m.clamp(m.ones(3), m.ones(4), None),
    "masked_fill_mask": lambda m: m.ones(3).masked_fill(m.ones(4, dtype=m.bool), 1.),
    "atan2": lambda m: m.atan2(m.ones(2, 3), m.ones(4)),
    "logical_and": lambda m: m.logical_and(m.ones(2), m.ones(3)),
    # two mismatched dims: torch names the rightmost (infer_size runs from the last dim)
    "two_dims": lambda m: m.ones(2, 3) + m.ones(3, 2),
    "two_dims_3d": lambda m: m.ones(2, 3, 4) - m.ones(3, 3, 5),
    "two_dims_inplace": lambda m: m.ones(2, 3).add_(m.ones(3, 2)),
    "two_dims_where": lambda m: m.where(m.ones(2, 3) > 0, m.ones(3, 2), m.ones(2, 3)),
}


@pytest.mark.parametrize("name", list(BROADCAST_ERRORS))
def test_broadcast_errors(name: str) -> None:
    """BC-01..08: RuntimeError with PyTorch's exact message."""
    with pytest.raises(RuntimeError) as theirs:
        BROADCAST_ERRORS[name](torch)
    with pytest.raises(RuntimeError, match="^" + re.escape(str(theirs.value)) + "$"):
        BROADCAST_ERRORS[name](ft)


_SHAPES = [((32, 10), (32, 1)), ((2, 3, 4), (3, 1)), ((1,), (5, 1, 3)), ((), (2, 2)), ((0, 3), (1, 3)),
           ((2, 1, 4), (3, 1))]


@pytest.mark.parametrize("shapes", _SHAPES)
def test_BC_04_06_broadcast_result_shapes(shapes: tuple) -> None:
    """BC-04/06: result shapes, including 0-d and empty operands."""
    run_both(lambda m: m.ones(*shapes[0]) - m.ones(*shapes[1]))


@pytest.mark.parametrize("shapes", _SHAPES + [((2, 1, 4), 4), (5,)])
def test_BC_07_broadcast_shapes_function(shapes: tuple) -> None:
    """BC-07: ``torch.broadcast_shapes`` (ints and tuples) returns a ``torch.Size``."""
    ours, theirs = ft.broadcast_shapes(*shapes), torch.broadcast_shapes(*shapes)
    assert repr(ours) == repr(theirs)


def test_broadcast_tensors_returns_an_already_broadcast_tensor_itself():
    """torch.broadcast_tensors expands only the tensors whose shape differs: one that has the common shape comes
    back as the same object (no ExpandBackward0 view)."""
    for m in (torch, ft):
        a, b = m.ones(3, requires_grad=True), m.ones(2, 3)
        ra, rb = m.broadcast_tensors(a, b)
        assert rb is b and ra is not a and tuple(ra.shape) == (2, 3) and ra.grad_fn.name() == "ExpandBackward0"
        x, y = m.ones(1, 3), m.ones(3, 1)
        rx, ry = m.broadcast_tensors(x, y)
        assert rx is not x and ry is not y and tuple(rx.shape) == tuple(ry.shape) == (3, 3)
        (only,) = m.broadcast_tensors(a)
        assert only is a


# ---- gradients (float64) ----------------------------------------------------------------------------------------
# (ops without a derivative record a NotImplemented grad_fn whose backward raises: test_amp_autograd_names.py)
GRAD_KEYS = [k for k in CASES if OPS[_op_of(k)].differentiable and "special" not in "".join(map(str, CASES[k].args))
             and ("/" not in k or k in ("pow/pos_base", "clamp/tensor_bounds"))
             and OPS[_op_of(k)].grad_fn != "NotImplemented"]


def _grads_both(f: Callable[..., Any], specs: tuple, grad_offset: bool) -> None:
    """Forward and backward on both libraries with the same upstream gradient; compare outputs and grads."""
    res = []
    for m in (torch, ft):
        args = [_make(m, s, "float64", requires_grad=True, grad_offset=grad_offset) if isinstance(s, str)
                else (m.tensor(s, dtype=m.float64, requires_grad=True) if isinstance(s, list) else s) for s in specs]
        out = f(m, *args)
        if out.requires_grad:
            g = m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
            out.backward(g)
        res.append((out, [a.grad for a in args if isinstance(a, m.Tensor) and a.requires_grad]))
    (tout, tgrads), (oout, ograds) = res
    assert_close(oout, tout)
    assert oout.requires_grad == tout.requires_grad
    assert len(ograds) == len(tgrads)
    for og, tg in zip(ograds, tgrads):
        assert (og is None) == (tg is None)
        if tg is not None:
            assert_close(og, tg)


@pytest.mark.parametrize("key", GRAD_KEYS)
def test_gradients_float64(key: str) -> None:
    """Gradients of every differentiable row (inputs nudged away from edge points)."""
    _grads_both(lambda m, *a: _call(key, m, list(a)), CASES[key].args, grad_offset=True)


EDGE: dict[str, tuple[Callable[..., Any], tuple]] = {
    "abs_at_0": (lambda m, x: m.abs(x), ([0.0, -1.0, 2.0],)),
    "relu_at_0": (lambda m, x: m.relu(x), ([0.0, -1.0, 2.0],)),
    "sqrt_at_0": (lambda m, x: m.sqrt(x), ([0.0, 1.0, 4.0],)),
    "rsqrt_at_0": (lambda m, x: m.rsqrt(x), ([0.0, 1.0, 4.0],)),
    "log_at_0": (lambda m, x: m.log(x), ([0.0, 1.0],)),
    "reciprocal_at_0": (lambda m, x: m.reciprocal(x), ([0.0, 2.0],)),
    "sign_at_0": (lambda m, x: m.sign(x), ([0.0, -2.0],)),
    "sgn_at_0": (lambda m, x: m.sgn(x), ([0.0, -2.0],)),
    "clamp_at_bounds": (lambda m, x: m.clamp(x, 0.0, 1.0), ([0.0, 1.0, 0.5, -1.0, 2.0],)),
    "clamp_min_at_bound": (lambda m, x: m.clamp(x, min=0.0), ([0.0, 1.0, -1.0],)),
    "clamp_max_at_bound": (lambda m, x: m.clamp(x, max=1.0), ([1.0, 0.0, 2.0],)),
    "clamp_min_op_at_bound": (lambda m, x: m.clamp_min(x, 0.0), ([0.0, 1.0, -1.0],)),
    "clamp_max_op_at_bound": (lambda m, x: m.clamp_max(x, 1.0), ([1.0, 0.0, 2.0],)),
    "clamp_tensor_bounds_at_bounds": (lambda m, x, lo, hi: m.clamp(x, lo, hi),
                                      ([0.0, 1.0, 0.5], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])),
    "clamp_crossed_bounds": (lambda m, x: m.clamp(x, 2.0, 1.0), ([0.0, 1.5, 3.0],)),
    "clamp_tensor_crossed_bounds": (lambda m, x, lo, hi: m.clamp(x, lo, hi),
                                    ([0.0, 1.5, 3.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0])),
    "maximum_tie": (lambda m, x, y: m.maximum(x, y), ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0])),
    "minimum_tie": (lambda m, x, y: m.minimum(x, y), ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0])),
    "fmax_tie": (lambda m, x, y: m.fmax(x, y), ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0])),
    "fmin_tie": (lambda m, x, y: m.fmin(x, y), ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0])),
    "pow2_at_0": (lambda m, x: x ** 2, ([0.0, -1.0],)),
    "pow0_at_0": (lambda m, x: x ** 0, ([0.0, 2.0],)),
    "pow_half_at_0": (lambda m, x: x ** 0.5, ([0.0, 4.0],)),
    "pow_tensor_zero_base": (lambda m, x, y: m.pow(x, y), ([0.0, 0.0, 2.0], [2.0, 0.0, 0.0])),
    "scalar_base_pow": (lambda m, x: 0.0 ** x, ([0.0, 1.0, 2.0],)),
    "hypot_at_origin": (lambda m, x, y: m.hypot(x, y), ([0.0, 3.0], [0.0, 4.0])),
    "atan2_at_origin": (lambda m, x, y: m.atan2(x, y), ([0.0, 1.0], [0.0, 1.0])),
    "xlogy_x0": (lambda m, x, y: m.xlogy(x, y), ([0.0, 0.0, 1.0], [0.0, 2.0, 3.0])),
    "copysign_at_0": (lambda m, x, y: m.copysign(x, y), ([0.0, 1.0, -2.0], [-1.0, 0.0, -0.0])),
    # the other operand does not require grad: its infinite partial must not leak in as inf * 0 = NaN
    "xlogy_y0_const": (lambda m, x: m.xlogy(x, m.tensor([0.0, 0.0, 2.0], dtype=m.float64)), ([1.0, 0.0, 0.0],)),
    "pow_zero_base_neg_exponent_const": (lambda m, x: m.pow(x, m.tensor([-1.0, 0.0, -0.5], dtype=m.float64)),
                                         ([0.0, 0.0, 4.0],)),
    "pow_tensor_neg_exponent": (lambda m, x, y: m.pow(x, y), ([0.0, 0.0, -1.0], [-1.0, -0.5, 0.5])),
    "fmax_nan": (lambda m, x, y: m.fmax(x, y), ([float("nan"), 1.0], [1.0, float("nan")])),
    "fmin_nan": (lambda m, x, y: m.fmin(x, y), ([float("nan"), 1.0], [1.0, float("nan")])),
    "clamp_tensor_equal_bounds": (lambda m, x, lo, hi: m.clamp(x, lo, hi),
                                  ([0.0, 1.0, 2.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])),
    "atan2_axes": (lambda m, x, y: m.atan2(x, y), ([0.0, 0.0, 2.0], [-1.0, 3.0, 0.0])),
    "round_half": (lambda m, x: m.round(x), ([0.5, 1.5, -2.5],)),
    "frac_at_int": (lambda m, x: m.frac(x), ([1.0, -2.0, 0.5],)),
    "nan_to_num_inf": (lambda m, x: m.nan_to_num(x), ([float("inf"), float("nan"), 1.0],)),
    "remainder_at_multiple": (lambda m, x, y: m.remainder(x, y), ([4.0, -3.0], [2.0, 1.5])),
    "div_by_zero": (lambda m, x, y: x / y, ([1.0, 0.0], [0.0, 0.0])),
    "where_both": (lambda m, x, y: m.where(x > 0, x, y), ([1.0, -1.0], [5.0, 6.0])),
    "masked_fill_input": (lambda m, x: x.masked_fill(x > 0, 0.5), ([1.0, -1.0],)),
    "lerp_weight_edges": (lambda m, x, y, w: m.lerp(x, y, w), ([1.0, 2.0], [3.0, 5.0], [0.0, 1.0])),
}


@pytest.mark.parametrize("name", list(EDGE))
def test_gradient_edge_points(name: str) -> None:
    """PyTorch's derivative conventions at kinks, bounds, ties and zeros (design.md: grad_overrides)."""
    f, args = EDGE[name]
    _grads_both(f, args, grad_offset=False)


# ---- exact messages of dtype errors (kernel names from PyTorch 2.13's CPU kernels) ---------------------------
_b = [True, False, True]
DTYPE_ERRORS: dict[str, Callable[[Any], Any]] = {
    "abs_bool": lambda m: m.abs(m.tensor(_b)), "ceil_bool": lambda m: m.ceil(m.tensor(_b)),
    "floor_bool": lambda m: m.tensor(_b).floor_(), "trunc_bool": lambda m: m.trunc(m.tensor(_b)),
    "round_bool": lambda m: m.round(m.tensor(_b)), "round_bool_decimals": lambda m: m.round(m.tensor(_b), decimals=2),
    "round_int_decimals0": lambda m: m.round(m.tensor([1, 2]), decimals=0),
    "round_int_decimals": lambda m: m.round(m.tensor([15, 2]), decimals=-1),
    "frac_bool": lambda m: m.frac(m.tensor(_b)), "frac_int": lambda m: m.frac(m.tensor([1, 2])),
    "frac_uint8": lambda m: m.frac(m.tensor([1, 2], dtype=m.uint8)),
    "relu_bool": lambda m: m.relu(m.tensor(_b)), "pos_bool": lambda m: +m.tensor(_b),
    "positive_bool": lambda m: m.positive(m.tensor(_b)), "pow_bool": lambda m: m.pow(m.tensor(_b), m.tensor(_b)),
    "pow_True_base": lambda m: True ** m.tensor(_b),
    "pow_bool_0dim_exponent": lambda m: m.tensor(_b) ** m.tensor(True),
    "hypot_bool": lambda m: m.hypot(m.tensor(_b), m.tensor(_b)),
    "hypot_int": lambda m: m.hypot(m.tensor([3]), m.tensor([4])),
    "hypot_complex": lambda m: m.hypot(m.tensor([1j]), m.tensor([1.0])),
    "lshift_bool": lambda m: m.tensor(_b) << m.tensor(_b), "rshift_bool": lambda m: m.tensor(_b) >> True,
    "lerp_bool": lambda m: m.lerp(m.tensor(_b), m.tensor(_b), 0.5),
    "lerp_int": lambda m: m.lerp(m.tensor([1]), m.tensor([2]), 0.5),
    "lerp_int_tensor_weight": lambda m: m.lerp(m.tensor([1]), m.tensor([2]), m.tensor([1])),
    "lerp_end_dtype": lambda m: m.lerp(m.ones(2), m.ones(2, dtype=m.float64), 0.3),
    "lerp_weight_dtype": lambda m: m.lerp(m.tensor([1]), m.tensor([2]), m.ones(1)),
    "floor_divide_bool": lambda m: m.tensor(_b) // m.tensor(_b),
    "remainder_bool": lambda m: m.tensor(_b) % m.tensor(_b), "fmod_bool": lambda m: m.fmod(m.tensor(_b), True),
    "div_trunc_bool": lambda m: m.div(m.tensor(_b), m.tensor(_b), rounding_mode="trunc"),
    "div_floor_bool": lambda m: m.tensor(_b).div_(m.tensor(_b), rounding_mode="floor"),
    "PRO-15_bool_minus_scalar": lambda m: m.tensor(_b) - 2.5, "PRO-15_scalar_minus_bool": lambda m: 2 - m.tensor(_b),
    "PRO-15_bool_minus_True": lambda m: m.tensor(_b) - True,
    "PRO-15_float_minus_bool": lambda m: m.sub(m.ones(3), m.tensor(_b), alpha=2),
    "PRO-15_rsub_bool": lambda m: m.rsub(m.tensor(_b), m.tensor(_b)),
    "invert_float": lambda m: ~m.ones(2), "invert_complex": lambda m: ~m.tensor([1j]),
    "bitwise_not_float": lambda m: m.bitwise_not(m.ones(2)),
    "sign_complex": lambda m: m.sign(m.tensor([1 + 1j])),
    "clamp_bool_tensor_bounds": lambda m: m.clamp(m.tensor(_b), m.tensor(_b), m.tensor(_b)),
    "clamp_bool_bool_bounds": lambda m: m.clamp(m.tensor(_b), True, False),
    "clamp_inplace_long_float": lambda m: m.tensor([1, 2]).clamp_(min=0.5),
    "clamp_max_inplace_long_float": lambda m: m.tensor([1, 2]).clamp_max_(0.5),
    "clamp_inplace_tensor_bound": lambda m: m.tensor([1, 2]).clamp_(m.ones(2), None),
    "masked_fill_float_mask_broadcast": lambda m: m.ones(3).masked_fill(m.ones(4), 1.0),
    "masked_fill_bool_self_broadcast": lambda m: m.ones(2, dtype=m.bool).masked_fill(m.ones(3, dtype=m.bool), 1.0),
}


@pytest.mark.parametrize("name", list(DTYPE_ERRORS))
def test_dtype_error_messages(name: str) -> None:
    """Ops PyTorch has no kernel for (bool/integer) raise its exact exception type and message."""
    with pytest.raises(Exception) as theirs:
        DTYPE_ERRORS[name](torch)
    with pytest.raises(type(theirs.value), match="^" + re.escape(str(theirs.value)) + "$"):
        DTYPE_ERRORS[name](ft)


FORWARD_EXTRAS: dict[str, Callable[[Any], Any]] = {
    "digamma_signed_zero_f16": lambda m: m.digamma(m.tensor([0.0, -0.0, -1.0, 1.0], dtype=m.float16)),
    "digamma_signed_zero_bf16": lambda m: m.digamma(m.tensor([0.0, -0.0, 2.0], dtype=m.bfloat16)),
    "round_int_default": lambda m: m.round(m.tensor([1, -2])),
    "round_float_decimals0": lambda m: m.round(m.tensor([1.25, 2.5]), decimals=0),
    "pow_bool_True": lambda m: m.tensor(_b) ** True, "pow_bool_False": lambda m: m.pow(m.tensor(_b), False),
    "square_int8": lambda m: m.square(m.tensor([3, -2], dtype=m.int8)),
    "clamp_bool_one_bound": lambda m: m.clamp(m.tensor(_b), m.tensor(_b), None),
    "clamp_bool_int_bounds": lambda m: m.clamp(m.tensor(_b), 0, 2),
    "lerp_int_weight_on_float": lambda m: m.lerp(m.ones(2), m.zeros(2), 1),
    "div_trunc_int_scalar": lambda m: m.div(m.tensor([[7], [-7]]), m.tensor([2, -3, 4]), rounding_mode="trunc"),
    "logical_and_complex": lambda m: m.logical_and(m.tensor([1j, 0j]), m.tensor([1.0, 1.0])),
    "logical_not_int": lambda m: m.logical_not(m.tensor([0, 3])),
    "sgn_complex": lambda m: m.sgn(m.tensor([3 + 4j, 0j])),
    "masked_fill_mask_grows": lambda m: m.ones(3).masked_fill(m.ones(2, 3, dtype=m.bool), 2.0),
}


@pytest.mark.parametrize("name", list(FORWARD_EXTRAS))
def test_forward_extras(name: str) -> None:
    """Values/dtypes at points the table sweep does not reach (signed zeros, explicit defaults)."""
    run_both(FORWARD_EXTRAS[name])
