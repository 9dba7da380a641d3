"""Type promotion parity with PyTorch 2.13 (spec §3: PRO-01..41, DTY-09..11).

Every case runs the same expression on real torch and on functorch_lite and compares the result
dtype, shape and values, or the exception type and message.
"""
from __future__ import annotations

import itertools
import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import run

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128")
SHAPE_PAIRS = (((2,), (2,)), ((2,), ()), ((), (2,)), ((), ()))
SCALARS = (True, 2, 2.5, 1j)

# PRO-38 / PRO-02 / PRO-03: PyTorch gives torch.complex32 (ComplexHalf), which JAX cannot store.
# These are all the sweep cases that do; functorch_lite raises a clear RuntimeError for them.
COMPLEX32_CASES = frozenset({
    ("float16", (2,), "complex64", ()),
    ("float16", (2,), "complex128", ()),
    ("complex64", (), "float16", (2,)),
    ("complex128", (), "float16", (2,)),
    ("float16", (2,), 1j),
    ("float16", (), 1j),
})


# ---- helpers ------------------------------------------------------------------------------------
def sample(name: str) -> list:
    """Two exactly representable values of dtype ``name`` (sums stay exact in every dtype)."""
    if name == "bool":
        return [True, False]
    if name.startswith(("int", "uint")):
        return [1, 2]
    if name.startswith("complex"):
        return [1 + 1j, 2 - 0.5j]
    return [0.5, 1.5]


def make(lib: Any, name: str, shape: tuple, data: list | None = None) -> Any:
    """A tensor of ``lib`` (torch or functorch_lite) with dtype ``name`` and shape () or (2,)."""
    data = sample(name) if data is None else data
    return lib.tensor(data if shape else data[0], dtype=getattr(lib, name))


def values(t: Any) -> np.ndarray:
    """Host values of a torch or functorch_lite tensor (bfloat16 via tolist)."""
    return np.array(t.tolist())


def assert_same(ours: Any, theirs: Any) -> None:
    """Same dtype, shape and values (NaN == NaN)."""
    if isinstance(theirs, torch.Tensor):
        assert str(ours.dtype) == str(theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-6, equal_nan=True)
    else:
        assert ours == theirs if not isinstance(theirs, torch.dtype) else str(ours) == str(theirs)


def parity(fn: Callable[[Any], Any], message: bool = True) -> None:
    """Run ``fn(torch)`` and ``fn(functorch_lite)``: same result, or same exception (type, message)."""
    theirs, t_err = run(fn, torch)
    if t_err is not None:
        with pytest.raises(type(t_err), match=re.escape(str(t_err)) if message else None):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(ft)
        return
    ours, o_err = run(fn, ft)
    if o_err is not None:
        raise AssertionError(f"torch gives {theirs!r} but functorch_lite raises {o_err!r}") from o_err
    assert_same(ours, theirs)


# ---- PRO-41: the exhaustive sweep ---------------------------------------------------------------
def _sweep_cases() -> list:
    """The 672 PRO-41 cases as pytest params: (a, shape_a, b, shape_b) or (a, shape_a, scalar)."""
    cases = []
    for a, b in itertools.product(DTYPES, DTYPES):
        for sa, sb in SHAPE_PAIRS:
            cases.append(pytest.param((a, sa, b, sb), id=f"{a}{list(sa)}+{b}{list(sb)}"))
    for a in DTYPES:
        for s in SCALARS:
            for sa in ((2,), ()):
                cases.append(pytest.param((a, sa, s), id=f"{a}{list(sa)}+{s!r}"))
    return cases


SWEEP = _sweep_cases()


def test_sweep_has_672_cases() -> None:
    """12 x 12 dtypes x 4 shape pairs + 12 dtypes x 4 scalars x 2 shapes (PRO-41)."""
    assert len(SWEEP) == 672
    assert len({p.id for p in SWEEP}) == 672


@pytest.mark.parametrize("case", SWEEP)
def test_pro41_add_promotion_sweep(case: tuple) -> None:
    """PRO-01/02/03/41: ``(x + y).dtype`` and values match torch; complex32 results raise here."""
    if len(case) == 4:
        a, sa, b, sb = case

        def fn(lib):
            return make(lib, a, sa) + make(lib, b, sb)
    else:
        a, sa, s = case

        def fn(lib):
            return make(lib, a, sa) + s

    theirs, _ = run(fn, torch)
    if case in COMPLEX32_CASES:
        assert theirs.dtype == torch.complex32
        with pytest.raises(RuntimeError, match="torch.complex32"):
            fn(ft)
        return
    assert theirs is None or theirs.dtype != torch.complex32, "complex32 case missing from COMPLEX32_CASES"
    parity(fn)
    if len(case) == 3 and case[1]:  # the reflected form (scalar + tensor) follows the same rule
        parity(lambda lib: case[2] + make(lib, case[0], case[1]))


@pytest.mark.parametrize("scalar", [np.float64(2.5), np.int64(2), np.float32(2.5), np.int8(3)],
                         ids=["np.float64", "np.int64", "np.float32", "np.int8"])
@pytest.mark.parametrize("name", ["uint8", "int32", "float16", "bfloat16", "float32"])
def test_pro03_numpy_scalars_are_wrapped_numbers(name: str, scalar: Any) -> None:
    """PRO-03 columns 5-6: NumPy scalars behave exactly like Python scalars."""
    parity(lambda lib: make(lib, name, (2,)) + scalar)


# ---- PRO-04..11: ordinary promotion facts -------------------------------------------------------
@pytest.mark.parametrize("a,b,expected", [("int32", "int64", "int64"), ("float16", "float32", "float32"),
                                          ("uint8", "int8", "int16"), ("int64", "float32", "float32"),
                                          ("bool", "bool", "bool")])
def test_pro04_zero_dim_plus_zero_dim(a: str, b: str, expected: str) -> None:
    """Two 0-d tensors promote like ordinary tensors (PRO-04)."""
    r = make(ft, a, ()) + make(ft, b, ())
    assert str(r.dtype) == f"torch.{expected}"
    parity(lambda lib: make(lib, a, ()) + make(lib, b, ()))


@pytest.mark.parametrize("a,b,expected", [("int64", "int64", "float32"), ("int32", "int32", "float32"),
                                          ("uint8", "uint8", "float32"), ("bool", "bool", "float32"),
                                          ("int32", "int64", "float32"), ("int64", "float16", "float16")])
def test_pro05_true_division(a: str, b: str, expected: str) -> None:
    """Integer/bool true division gives the default float (PRO-05)."""
    def fn(lib):
        return make(lib, a, (2,), [1, 3]) / make(lib, b, (2,), [2, 1])
    assert str(fn(ft).dtype) == f"torch.{expected}"
    parity(fn)


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.tensor([1, 2]) / 2, id="PRO-06-int/2"),
    pytest.param(lambda lib: lib.tensor([1, 2]) * 0.5, id="PRO-07-int*0.5"),
    pytest.param(lambda lib: lib.tensor([1, 2]) + 1.5, id="PRO-08-int+1.5"),
    pytest.param(lambda lib: lib.tensor([5, 7]) // 2, id="PRO-09-int//2"),
    pytest.param(lambda lib: lib.tensor([5, 7]) ** 2, id="PRO-09-int**2"),
    pytest.param(lambda lib: lib.tensor([4, 9]) ** 0.5, id="PRO-09-int**0.5"),
    pytest.param(lambda lib: lib.tensor([2]) ** -1, id="PRO-10-int**-1"),
    pytest.param(lambda lib: 2 ** lib.tensor([1, 2]), id="PRO-11-2**int"),
    pytest.param(lambda lib: 2.0 ** lib.tensor([1, 2]), id="PRO-11-2.0**int"),
    pytest.param(lambda lib: lib.tensor([2, -1, 1, 3]) ** lib.tensor([-1, -1, -2, 0]), id="int**negative-tensor"),
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.int32) / lib.tensor(2.0, dtype=lib.float64),
                 id="int32/f64-0d"),
])
def test_pro06_to_11_scalar_arithmetic(expr: Callable[[Any], Any]) -> None:
    """Python-scalar arithmetic on int tensors: /, *, +, //, ** (PRO-06..11)."""
    parity(expr)


# ---- PRO-12/13: reductions ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["int64", "int32", "uint8", "bool"])
def test_pro12_mean_of_integers_raises(name: str) -> None:
    """``mean()`` cannot infer a dtype for integer/bool input (PRO-12 message)."""
    short = {"int64": "Long", "int32": "Int", "uint8": "Byte", "bool": "Bool"}[name]
    msg = ("mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
           f"Got: {short}")
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        make(ft, name, (2,)).mean()
    parity(lambda lib: make(lib, name, (2,)).mean())
    parity(lambda lib: make(lib, name, (2,)).mean(dim=0))


def test_pro12_mean_with_dtype() -> None:
    """``mean(dtype=float64)`` of ints works; an integer ``dtype=`` raises ('Optional dtype')."""
    parity(lambda lib: lib.tensor([1, 2]).mean(dtype=lib.float64))
    parity(lambda lib: lib.tensor([1.0, 2.0]).mean(dtype=lib.int64))


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "bool", "float16", "bfloat16",
                                  "float32", "complex64"])
def test_pro13_sum_accumulates_integers_in_int64(name: str) -> None:
    """Integer and bool sums give int64; floating sums keep their dtype (PRO-13)."""
    parity(lambda lib: make(lib, name, (2,)).sum())
    parity(lambda lib: make(lib, name, (2,)).sum(dim=0, keepdim=True))


@pytest.mark.parametrize("dtype", ["int8", "int32", "float64"])
def test_pro13_sum_with_dtype(dtype: str) -> None:
    """``sum(dtype=...)`` accumulates in the requested dtype."""
    parity(lambda lib: lib.tensor([100, 100, 100], dtype=lib.int32).sum(dtype=getattr(lib, dtype)))


def test_pro13_cumsum_prod_accumulate_in_int64() -> None:
    """``int32.cumsum(0)`` and ``int32.prod()`` are int64 (PRO-13)."""
    parity(lambda lib: lib.tensor([1, 2, 3], dtype=lib.int32).cumsum(0))
    parity(lambda lib: lib.tensor([1, 2, 3], dtype=lib.int32).prod())
    parity(lambda lib: lib.tensor([True, True]).cumsum(0))


# ---- PRO-14..17: bool arithmetic and comparisons --------------------------------------------------
@pytest.mark.parametrize("expr", [
    pytest.param(lambda b, c: b + c, id="bool+bool"),
    pytest.param(lambda b, c: b * c, id="bool*bool"),
    pytest.param(lambda b, c: b + True, id="bool+True"),
    pytest.param(lambda b, c: b + 1, id="bool+1"),
    pytest.param(lambda b, c: b * 2.5, id="bool*2.5"),
    pytest.param(lambda b, c: b / c, id="bool/bool"),
    pytest.param(lambda b, c: b & c, id="bool&bool"),
    pytest.param(lambda b, c: b | c, id="bool|bool"),
    pytest.param(lambda b, c: b ^ c, id="bool^bool"),
    pytest.param(lambda b, c: ~b, id="~bool"),
    pytest.param(lambda b, c: b - c, id="PRO-15-bool-bool"),
    pytest.param(lambda b, c: b - True, id="PRO-15-bool-True"),
    pytest.param(lambda b, c: True - b, id="PRO-15-True-bool"),
    pytest.param(lambda b, c: -b, id="PRO-16-neg-bool"),
    pytest.param(lambda b, c: b.neg(), id="PRO-16-bool.neg"),
])
def test_pro14_to_16_bool_arithmetic(expr: Callable[[Any, Any], Any]) -> None:
    """bool + bool is a logical or, bool - bool and -bool raise PyTorch's messages (PRO-14/15/16)."""
    parity(lambda lib: expr(lib.tensor([True, False]), lib.tensor([True, True])))


def test_pro15_pro16_messages() -> None:
    """The exact PRO-15/16 messages."""
    b = ft.tensor([True, False])
    with pytest.raises(RuntimeError, match=re.escape("Subtraction, the `-` operator, with two bool tensors is not "
                                                     "supported. Use the `^` or `logical_xor()` operator instead.")):
        b - b
    with pytest.raises(RuntimeError, match=re.escape("Negation, the `-` operator, on a bool tensor is not supported. "
                                                     "If you are trying to invert a mask, use the `~` or "
                                                     "`logical_not()` operator instead.")):
        -b


@pytest.mark.parametrize("op", ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"])
@pytest.mark.parametrize("a,b", [("int64", "int64"), ("int32", "float64"), ("uint8", "int8"), ("bool", "float32"),
                                 ("float16", "bfloat16"), ("int64", 1), ("float32", 0.5), ("uint8", 300)])
def test_pro17_comparisons_give_bool(op: str, a: str, b: Any) -> None:
    """Comparisons promote their operands and return bool (PRO-17)."""
    def fn(lib):
        x = lib.tensor([0, 1, 2], dtype=getattr(lib, a))
        y = lib.tensor([1, 1, 0], dtype=getattr(lib, b)) if isinstance(b, str) else b
        return getattr(x, op)(y)
    assert str(fn(ft).dtype) == "torch.bool"
    parity(fn)


# ---- PRO-18..26: integer wrap-around, division by zero, floor semantics, rounding modes ----------
@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.uint8) + 300, id="PRO-18-u8+300"),
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.int8) + 1000, id="PRO-19-i8+1000"),
    pytest.param(lambda lib: lib.tensor([1, 1], dtype=lib.uint8) + (-1), id="PRO-20-u8-1"),
    pytest.param(lambda lib: lib.tensor([250], dtype=lib.uint8) + lib.tensor([10], dtype=lib.uint8), id="PRO-21"),
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.uint8) - 3, id="u8-3"),
    pytest.param(lambda lib: lib.tensor([100, 100], dtype=lib.int8) * 2, id="i8*2"),
    pytest.param(lambda lib: lib.tensor([-128], dtype=lib.int8) - 1, id="i8-min-1"),
    pytest.param(lambda lib: -lib.tensor([-128], dtype=lib.int8), id="neg-i8-min"),
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.int16) + 40000, id="i16+40000"),
    pytest.param(lambda lib: lib.tensor([2 ** 62], dtype=lib.int64) * 4, id="i64-overflow"),
])
def test_pro18_to_21_integer_wraparound(expr: Callable[[Any], Any]) -> None:
    """Integer overflow wraps silently, in the tensor's dtype (PRO-18..21)."""
    parity(expr)


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.tensor([5]) // 0, id="PRO-22-int//0"),
    pytest.param(lambda lib: lib.tensor([5]) % 0, id="PRO-23-int%0"),
    pytest.param(lambda lib: lib.tensor([5]) // lib.tensor([0]), id="int//zero-tensor"),
    pytest.param(lambda lib: lib.tensor([5]) % lib.tensor([0, 1]), id="int%tensor-with-zero"),
    pytest.param(lambda lib: 5 // lib.tensor([0]), id="5//zero-tensor"),
    pytest.param(lambda lib: lib.tensor([5]).div(0, rounding_mode="trunc"), id="div-trunc-0"),
    pytest.param(lambda lib: lib.tensor([5]).div(0, rounding_mode="floor"), id="div-floor-0"),
    pytest.param(lambda lib: lib.fmod(lib.tensor([5]), 0), id="fmod-0"),
    pytest.param(lambda lib: lib.tensor([5, 0]) / 0, id="PRO-24-int/0"),
    pytest.param(lambda lib: lib.tensor([-5, 0]) / lib.tensor([0]), id="PRO-24-int/zero-tensor"),
    pytest.param(lambda lib: lib.tensor([5.0]) // 0, id="float//0"),
    pytest.param(lambda lib: lib.tensor([5.0]) % 0, id="float%0"),
])
def test_pro22_to_24_division_by_zero(expr: Callable[[Any], Any]) -> None:
    """Integer // 0 and % 0 raise ``RuntimeError: ZeroDivisionError``; float and true division do not."""
    parity(expr)


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.tensor([-7, 7]) // 2, id="int//2"),
    pytest.param(lambda lib: lib.tensor([-7, 7]) % 3, id="int%3"),
    pytest.param(lambda lib: lib.tensor([-7, 7]) % -3, id="int%-3"),
    pytest.param(lambda lib: lib.fmod(lib.tensor([-7, 7]), 3), id="fmod-int"),
    pytest.param(lambda lib: lib.tensor([-7.0, 7.0]) // 2, id="float//2"),
    pytest.param(lambda lib: lib.tensor([-7.0, 7.0]) % 3, id="float%3"),
    pytest.param(lambda lib: lib.fmod(lib.tensor([-7.0, 7.0]), 3), id="fmod-float"),
    pytest.param(lambda lib: lib.remainder(lib.tensor([-7, 7]), 3), id="remainder"),
    pytest.param(lambda lib: 7 % lib.tensor([-3, 3]), id="7%tensor"),
    pytest.param(lambda lib: -7 // lib.tensor([2, -2]), id="-7//tensor"),
])
def test_pro25_floor_semantics(expr: Callable[[Any], Any]) -> None:
    """``//`` and ``%`` follow Python's floor semantics; ``fmod`` truncates (PRO-25)."""
    parity(expr)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("a,b", [("int64", 2), ("int64", 2.0), ("float32", 2), ("int32", "int64"),
                                 ("float16", "float32")])
def test_pro26_div_rounding_modes(mode: str | None, a: str, b: Any) -> None:
    """``div`` with rounding_mode None/'trunc'/'floor' on ints and floats (PRO-26)."""
    def fn(lib):
        x = lib.tensor([-7, 7], dtype=getattr(lib, a))
        y = lib.tensor([2], dtype=getattr(lib, b)) if isinstance(b, str) else b
        return lib.div(x, y, rounding_mode=mode)
    parity(fn)


def test_pro26_bad_rounding_mode() -> None:
    """An unknown rounding mode raises PyTorch's RuntimeError."""
    parity(lambda lib: lib.div(lib.tensor([5]), 2, rounding_mode="round"))


# ---- PRO-27..30: in-place ops keep self's dtype ----------------------------------------------------
def _iadd(x: Any, y: Any) -> Any:
    """``x += y`` (returns x)."""
    x += y
    return x


def _imul(x: Any, y: Any) -> Any:
    """``x *= y`` (returns x)."""
    x *= y
    return x


def _idiv(x: Any, y: Any) -> Any:
    """``x /= y`` (returns x)."""
    x /= y
    return x


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: _iadd(lib.tensor([1, 2]), 1.5), id="PRO-27-int+=1.5"),
    pytest.param(lambda lib: lib.tensor([1, 2]).add_(lib.tensor([0.5, 1.5])), id="PRO-28-int.add_(float)"),
    pytest.param(lambda lib: _iadd(lib.tensor([1.0, 2.0], dtype=lib.float16), lib.tensor([0.5, 1.5],
                                                                                         dtype=lib.float64)),
                 id="PRO-29-f16+=f64"),
    pytest.param(lambda lib: lib.tensor([1.0, 2.0]).add_(lib.tensor([1j, 2j])), id="PRO-30-f32.add_(c64)"),
    pytest.param(lambda lib: _imul(lib.tensor([1, 2]), 1.5), id="int*=1.5"),
    pytest.param(lambda lib: _idiv(lib.tensor([1, 2]), 2), id="int/=2"),
    pytest.param(lambda lib: _iadd(lib.tensor([1, 2], dtype=lib.int8), lib.tensor([1, 2])), id="i8+=i64"),
    pytest.param(lambda lib: _iadd(lib.tensor([1, 2], dtype=lib.uint8), 300), id="u8+=300"),
    pytest.param(lambda lib: _iadd(lib.tensor([True, False]), lib.tensor([1, 2])), id="bool+=int"),
    pytest.param(lambda lib: _iadd(lib.tensor([1, 2]), lib.tensor(True)), id="int+=bool"),
    pytest.param(lambda lib: lib.tensor([1.0, 2.0]).mul_(lib.tensor(3, dtype=lib.int32)), id="f32.mul_(i32-0d)"),
])
def test_pro27_to_30_inplace_casts(expr: Callable[[Any], Any]) -> None:
    """In-place results are cast into self's dtype when the category fits, else PyTorch's error."""
    parity(expr)


def test_pro27_message() -> None:
    """The exact PRO-27 message."""
    with pytest.raises(RuntimeError, match=re.escape("result type Float can't be cast to the desired output "
                                                     "type Long")):
        _iadd(ft.tensor([1, 2]), 1.5)


# ---- PRO-31: result_type / promote_types / can_cast ------------------------------------------------
@pytest.mark.parametrize("a", DTYPES)
def test_pro31_promote_types_and_can_cast_tables(a: str) -> None:
    """``promote_types`` and ``can_cast`` agree with torch on every pair of the 12 dtypes."""
    for b in DTYPES:
        ours = ft.promote_types(getattr(ft, a), getattr(ft, b))
        assert str(ours) == str(torch.promote_types(getattr(torch, a), getattr(torch, b))), (a, b)
        assert ft.can_cast(getattr(ft, a), getattr(ft, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.result_type(lib.tensor([1], dtype=lib.int32), 2.5), id="int32,2.5"),
    pytest.param(lambda lib: lib.result_type(lib.tensor([1], dtype=lib.uint8), 300), id="u8,300"),
    pytest.param(lambda lib: lib.result_type(lib.tensor(1.0), lib.tensor([1])), id="f32-0d,int64"),
    pytest.param(lambda lib: lib.result_type(lib.tensor([1.0], dtype=lib.float16), lib.tensor(1.0,
                                                                                              dtype=lib.float64)),
                 id="f16,f64-0d"),
    pytest.param(lambda lib: lib.result_type(lib.tensor([1]), 1j), id="int64,1j"),
    pytest.param(lambda lib: lib.result_type(2, 2.5), id="2,2.5"),
    pytest.param(lambda lib: lib.promote_types(lib.uint8, lib.int8), id="promote-u8-i8"),
    pytest.param(lambda lib: lib.can_cast(lib.float32, lib.int32), id="can_cast-f32-i32"),
    pytest.param(lambda lib: lib.can_cast(lib.int32, lib.float16), id="can_cast-i32-f16"),
])
def test_pro31_result_type(expr: Callable[[Any], Any]) -> None:
    """``result_type`` / ``promote_types`` / ``can_cast`` spot checks (PRO-31)."""
    parity(expr)


# ---- PRO-32: cat / stack / where promote -----------------------------------------------------------
@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.cat([lib.tensor([1], dtype=lib.int32), lib.tensor([1.5])]), id="cat-i32-f32"),
    pytest.param(lambda lib: lib.cat([lib.tensor([1], dtype=lib.uint8), lib.tensor([-1], dtype=lib.int8)]),
                 id="cat-u8-i8"),
    pytest.param(lambda lib: lib.stack([lib.tensor([1], dtype=lib.uint8), lib.tensor([1], dtype=lib.int8)]),
                 id="stack-u8-i8"),
    pytest.param(lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2]), 2.5), id="where-i64-2.5"),
    pytest.param(lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2]),
                                       lib.tensor([1.5, 2.5], dtype=lib.float64)), id="where-i64-f64"),
    pytest.param(lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.int32),
                                       lib.tensor(7)), id="where-i32-i64-0d"),
])
def test_pro32_cat_where_promote(expr: Callable[[Any], Any]) -> None:
    """cat, stack and where promote their tensor arguments (PRO-32)."""
    parity(expr)


# ---- PRO-33..35: matmul does not promote -------------------------------------------------------------
@pytest.mark.parametrize("a,b,sa,sb", [
    ("int64", "float32", (2, 2), (2, 2)),     # PRO-33
    ("float16", "float32", (2, 2), (2, 2)),   # PRO-34
    ("int64", "int64", (2, 2), (2, 2)),       # PRO-35
    ("int32", "int64", (2, 2), (2, 2)),
    ("float32", "float64", (2, 2), (2, 2)),
    ("float32", "float64", (2,), (2,)),
    ("float32", "float64", (2, 2), (2,)),
    ("float32", "float64", (2, 2, 2), (2, 2, 2)),
    ("bool", "bool", (2, 2), (2, 2)),
])
def test_pro33_to_35_matmul_dtypes(a: str, b: str, sa: tuple, sb: tuple) -> None:
    """matmul requires one dtype; each shape family has PyTorch's own message."""
    parity(lambda lib: lib.ones(*sa, dtype=getattr(lib, a)) @ lib.ones(*sb, dtype=getattr(lib, b)))


def test_pro33_mm_message() -> None:
    """``torch.mm`` with mixed dtypes (PRO-33)."""
    parity(lambda lib: lib.mm(lib.ones(2, 2, dtype=lib.int64), lib.ones(2, 2)))


# ---- DTY-09..11, PRO-36/37: float8 and wide unsigned types -------------------------------------------
def _f8(lib: Any, name: str = "float8_e4m3fn") -> Any:
    """A float8 tensor [1., 2.] of ``lib``."""
    return lib.tensor([1.0, 2.0]).to(getattr(lib, name))


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: _f8(lib) + 1, id="DTY-09-f8+1"),
    pytest.param(lambda lib: _f8(lib) + _f8(lib), id="DTY-09-f8+f8"),
    pytest.param(lambda lib: _f8(lib) + lib.tensor([1.0, 2.0]), id="DTY-10-f8+f32"),
    pytest.param(lambda lib: _f8(lib, "float8_e5m2") + lib.tensor(1.0), id="DTY-10-e5m2+f32-0d"),
    pytest.param(lambda lib: _f8(lib) @ _f8(lib), id="DTY-11-f8@f8"),
    pytest.param(lambda lib: _f8(lib) == _f8(lib), id="f8==f8"),
    pytest.param(lambda lib: lib.promote_types(lib.float8_e4m3fn, lib.float32), id="promote-f8-f32"),
])
def test_dty09_to_11_float8_is_storage_only(expr: Callable[[Any], Any]) -> None:
    """float8 arithmetic raises on CPU; comparisons work (DTY-09..11)."""
    parity(expr)


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.uint32) + lib.tensor([1, 2], dtype=lib.int32),
                 id="PRO-36-u32+i32"),
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.uint16) + lib.tensor([1, 2], dtype=lib.uint8),
                 id="PRO-36-u16+u8"),
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.uint32) + 1, id="PRO-37-u32+1"),
    pytest.param(lambda lib: lib.tensor([1, 2], dtype=lib.uint32) + lib.tensor([1, 2], dtype=lib.uint32),
                 id="u32+u32"),
    pytest.param(lambda lib: lib.promote_types(lib.uint16, lib.int32), id="promote-u16-i32"),
    pytest.param(lambda lib: lib.promote_types(lib.uint32, lib.uint32), id="promote-u32-u32"),
])
def test_pro36_pro37_wide_unsigned(expr: Callable[[Any], Any]) -> None:
    """uint16/32/64 do not promote and have no add kernel (PRO-36/37)."""
    parity(expr)


# ---- PRO-39: comparing with a Python list -------------------------------------------------------------
def test_pro39_tensor_eq_list_is_false() -> None:
    """A list is not converted: ``tensor == [1, 2]`` is plain Python equality (False)."""
    assert (ft.tensor([1, 2]) == [1, 2]) is False
    assert (ft.tensor([1, 2]) != [1, 2]) is True
    assert (torch.tensor([1, 2]) == [1, 2]) is False
