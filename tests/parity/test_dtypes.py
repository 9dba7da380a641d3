"""dtype parity with PyTorch 2.13 (spec §2: DTY-01..30; §1: CRE-01..08, CRE-63..65).

The dtype table, finfo/iinfo, every cast row of §2.2 and the default-dtype rules, each run on
real torch and on functorch_lite and compared (values, dtype, shape, or exception and message).
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable, Iterator

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import run

TABLE = ("float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
         "float8_e5m2fnuz", "float8_e8m0fnu", "int8", "uint8", "int16", "int32", "int64", "uint16", "uint32",
         "uint64", "int4", "uint4", "bool", "complex64", "complex128", "complex32")
ALIASES = {"float": "float32", "double": "float64", "half": "float16", "short": "int16", "int": "int32",
           "long": "int64", "cfloat": "complex64", "cdouble": "complex128", "chalf": "complex32"}
FLOATS = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
          "float8_e5m2fnuz", "float8_e8m0fnu", "complex64", "complex128")
INTS = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
NAN, INF = float("nan"), float("inf")


# ---- helpers ------------------------------------------------------------------------------------
def assert_same(ours: Any, theirs: Any) -> None:
    """Tensors: same dtype, shape, values (NaN == NaN); tuples element-wise; else equal reprs."""
    if isinstance(theirs, torch.Tensor):
        assert str(ours.dtype) == str(theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(np.array(ours.tolist()), np.array(theirs.tolist()))
    elif isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t)
    else:
        assert repr(ours) == repr(theirs)


def parity(fn: Callable[[Any], Any]) -> None:
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same result or the same exception and message."""
    theirs, t_err = run(fn, torch)
    if t_err is not None:
        with pytest.raises(type(t_err), match=re.escape(str(t_err))):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(ft)
        return
    ours, o_err = run(fn, ft)
    if o_err is not None:
        raise AssertionError(f"torch gives {theirs!r} but functorch_lite raises {o_err!r}") from o_err
    assert_same(ours, theirs)


@pytest.fixture
def restore_default_dtype() -> Iterator[None]:
    """Tests that change the default dtype put float32 back on both sides."""
    yield
    torch.set_default_dtype(torch.float32)
    ft.set_default_dtype(ft.float32)


# ---- DTY-01/02/30: the dtype table ------------------------------------------------------------------
@pytest.mark.parametrize("name", TABLE)
def test_dty01_dtype_attributes(name: str) -> None:
    """itemsize, is_floating_point (False for complex), is_complex, is_signed, repr and str."""
    ours, theirs = getattr(ft, name), getattr(torch, name)
    assert ours.itemsize == theirs.itemsize
    assert ours.is_floating_point is theirs.is_floating_point
    assert ours.is_complex is theirs.is_complex
    assert ours.is_signed is theirs.is_signed
    assert repr(ours) == repr(theirs) == f"torch.{name}"
    assert str(ours) == str(theirs)
    assert ours == ours and ours is getattr(ft, name)


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_dty30_aliases_are_the_same_objects(alias: str) -> None:
    """``torch.float is torch.float32`` etc. (DTY-30)."""
    assert getattr(ft, alias) is getattr(ft, ALIASES[alias])
    assert getattr(torch, alias) is getattr(torch, ALIASES[alias])
    assert repr(getattr(ft, alias)) == repr(getattr(torch, alias))


def test_dty30_tensor_dtype_equals_alias() -> None:
    """A tensor's dtype compares equal to (and is) the alias object."""
    x = ft.tensor([1.5, -2.7, 3.9])
    assert x.dtype == ft.float and x.dtype is ft.float32
    assert ft.tensor([1]).dtype is ft.long


def test_dtypes_are_distinct() -> None:
    """Each table entry is its own object."""
    objs = [getattr(ft, n) for n in TABLE]
    assert len({id(o) for o in objs}) == len(TABLE)
    assert ft.float32 != ft.float64 and ft.int32 != ft.int64


# ---- DTY-14/15: finfo / iinfo --------------------------------------------------------------------------
@pytest.mark.parametrize("name", FLOATS)
def test_dty14_finfo(name: str) -> None:
    """bits, eps, max, min, tiny, smallest_normal, resolution, dtype and repr match torch."""
    ours, theirs = ft.finfo(getattr(ft, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_dty14_finfo_spec_values() -> None:
    """The values quoted in spec DTY-14."""
    f16, bf16, f8 = ft.finfo(ft.float16), ft.finfo(ft.bfloat16), ft.finfo(ft.float8_e4m3fn)
    assert (f16.eps, f16.max, f16.tiny) == (0.0009765625, 65504.0, 6.103515625e-05)
    assert (bf16.eps, bf16.tiny) == (0.0078125, 1.1754943508222875e-38)
    assert (f8.eps, f8.max, f8.tiny) == (0.125, 448.0, 0.015625)
    assert ft.finfo(ft.float8_e5m2).max == 57344.0
    assert ft.finfo().dtype == "float32"  # the default dtype


def test_dty14_finfo_follows_default_dtype(restore_default_dtype: None) -> None:
    """``finfo()`` describes the default dtype."""
    ft.set_default_dtype(ft.float64)
    assert ft.finfo().dtype == "float64" and ft.finfo().eps == torch.finfo(torch.float64).eps


@pytest.mark.parametrize("name", INTS)
def test_dty15_iinfo(name: str) -> None:
    """bits, min, max, dtype and repr match torch (DTY-15)."""
    ours, theirs = ft.iinfo(getattr(ft, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "min", "max", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_dty15_iinfo_spec_values() -> None:
    """The values quoted in spec DTY-15."""
    assert (ft.iinfo(ft.int8).min, ft.iinfo(ft.int8).max) == (-128, 127)
    assert (ft.iinfo(ft.uint8).min, ft.iinfo(ft.uint8).max) == (0, 255)


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.finfo(lib.int32), id="finfo-int32"),
    pytest.param(lambda lib: lib.iinfo(lib.float32), id="iinfo-float32"),
    pytest.param(lambda lib: lib.iinfo(lib.complex64), id="iinfo-complex64"),
    pytest.param(lambda lib: lib.iinfo(lib.bool), id="iinfo-bool"),
    pytest.param(lambda lib: lib.iinfo(lib.int4), id="iinfo-int4"),
])
def test_finfo_iinfo_errors(expr: Callable[[Any], Any]) -> None:
    """finfo of an int / iinfo of a float, bool or int4 raise PyTorch's TypeError."""
    parity(expr)


# ---- DTY-03..08, DTY-12/13: casting with .to() and the shorthand methods ----------------------------
def _x(lib: Any) -> Any:
    """The spec's ``x = tensor([1.5, -2.7, 3.9])``."""
    return lib.tensor([1.5, -2.7, 3.9])


@pytest.mark.parametrize("method", ["float", "half", "bfloat16", "long", "int", "double", "bool", "short", "char",
                                    "byte", "cfloat", "cdouble"])
def test_dty03_shorthand_casts(method: str) -> None:
    """DTY-03/04: truncation toward zero, -2.7 -> 254 for byte, half/bf16 rounding."""
    parity(lambda lib: getattr(_x(lib), method)())


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: _x(lib).to(lib.bfloat16), id="DTY-04-to-bf16"),
    pytest.param(lambda lib: _x(lib).to(lib.float8_e4m3fn).float(), id="DTY-05-e4m3fn"),
    pytest.param(lambda lib: _x(lib).to(lib.float8_e5m2).float(), id="DTY-06-e5m2"),
    pytest.param(lambda lib: lib.tensor([1000.0, 448.0, 500.0]).to(lib.float8_e4m3fn).float(), id="DTY-07"),
    pytest.param(lambda lib: lib.tensor([1e5, 57344.0]).to(lib.float8_e5m2).float(), id="DTY-08"),
    pytest.param(lambda lib: lib.tensor([-1000.0, -500.0, NAN]).to(lib.float8_e4m3fn).float(),
                 id="e4m3fn-negative-saturation"),
    pytest.param(lambda lib: lib.tensor([INF, -INF]).to(lib.float8_e4m3fn).float(), id="e4m3fn-inf-saturates"),
    pytest.param(lambda lib: lib.tensor([1000, -1000, 300]).to(lib.float8_e4m3fn).float(), id="int-to-e4m3fn"),
    pytest.param(lambda lib: lib.tensor([1e5]).to(lib.float8_e5m2).to(lib.float8_e4m3fn).float(),
                 id="e5m2-inf-to-e4m3fn"),
    pytest.param(lambda lib: lib.tensor([1.0, -1e6, INF]).to(lib.float8_e5m2).float(), id="e5m2-overflow-inf"),
    pytest.param(lambda lib: lib.tensor([1.0, 1000.0]).to(lib.float8_e4m3fnuz).float(), id="e4m3fnuz-overflow"),
    pytest.param(lambda lib: lib.tensor([70000.0]).half(), id="DTY-12-half-overflow"),
    pytest.param(lambda lib: lib.tensor([1e-8]).half(), id="DTY-12-half-underflow"),
    pytest.param(lambda lib: lib.tensor([70000.0, 1e-8, 1.001, 257.0]).bfloat16(), id="DTY-13-bf16"),
    pytest.param(lambda lib: lib.tensor([1.5, 2.5], dtype=lib.float16).to(lib.bfloat16), id="f16-to-bf16"),
    pytest.param(lambda lib: lib.tensor([True, False]).float(), id="bool-to-float"),
    pytest.param(lambda lib: lib.tensor([1 + 2j, -2.5j]).float(), id="complex-to-float"),
])
def test_dty05_to_13_float_casts(expr: Callable[[Any], Any]) -> None:
    """float8 saturation (e4m3fn) and overflow (e5m2 -> inf), half/bf16 range (DTY-05..13)."""
    parity(expr)


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: lib.tensor([-1.7, 1.7, 2.5]).long(), id="DTY-19-trunc"),
    pytest.param(lambda lib: lib.tensor([200.0, -200.0, 300.0]).to(lib.int8), id="DTY-20-f32-to-i8-wraps"),
    pytest.param(lambda lib: lib.tensor([-1.0, 256.0, 3.7]).to(lib.uint8), id="DTY-21-f32-to-u8"),
    pytest.param(lambda lib: lib.tensor([-1, 256, 300]).to(lib.uint8), id="DTY-22-int-to-u8"),
    pytest.param(lambda lib: lib.tensor([NAN, INF]).long(), id="DTY-23-nan-inf-to-int64"),
    pytest.param(lambda lib: lib.tensor([-INF, 1e20, -1e20]).long(), id="out-of-range-to-int64"),
    pytest.param(lambda lib: lib.tensor([0.0, 0.1, -0.0, NAN]).bool(), id="DTY-24-to-bool"),
    pytest.param(lambda lib: lib.tensor([2, 0, -1]).bool(), id="int-to-bool"),
    pytest.param(lambda lib: lib.tensor([1 + 2j, 0j]).bool(), id="complex-to-bool"),
    pytest.param(lambda lib: lib.tensor([1.5 + 2j, -2.5j]).long(), id="complex-to-int64"),
    pytest.param(lambda lib: lib.tensor([300]).to(lib.uint8).to(lib.int8), id="u8-to-i8"),
    pytest.param(lambda lib: lib.tensor([2 ** 40 + 3]).int(), id="i64-to-i32-wraps"),
    pytest.param(lambda lib: lib.tensor([NAN, INF]).int(), id="nan-inf-to-int32"),
    pytest.param(lambda lib: lib.tensor([3e9, -3e9, 200.0, 70000.0]).int(), id="out-of-range-to-int32"),
    pytest.param(lambda lib: lib.tensor([3e9, NAN, 200.0, 70000.0]).to(lib.int8), id="out-of-range-to-int8"),
    pytest.param(lambda lib: lib.tensor([3e9, NAN, 200.0, 70000.0]).to(lib.int16), id="out-of-range-to-int16"),
    pytest.param(lambda lib: lib.tensor([3e9, 70000.0]).double().to(lib.int32), id="f64-to-int32"),
    pytest.param(lambda lib: lib.tensor([70000.0]).bfloat16().to(lib.int16), id="bf16-to-int16"),
])
def test_dty19_to_24_integer_casts(expr: Callable[[Any], Any]) -> None:
    """float -> int truncates then wraps; NaN/inf/out-of-range give INT_MIN of int32/int64 (DTY-19..24)."""
    parity(expr)


def test_dty16_to_same_dtype_returns_self() -> None:
    """``x.to(float32) is x``, ``x.float() is x``; a real change or ``copy=True`` gives a new tensor."""
    def fn(lib):
        x = _x(lib)
        return (x.to(lib.float32) is x, x.float() is x, x.to(lib.float64) is x, x.to(lib.float32, copy=True) is x,
                x.to("cpu") is x, x.to("cpu", lib.float32) is x, x.to(dtype=lib.float32) is x)
    assert run(fn, ft)[0] == (True, True, False, False, True, True, True)
    parity(fn)


@pytest.mark.parametrize("expr", [
    pytest.param(lambda lib: _x(lib).to("cpu", lib.float64), id="DTY-17-device-and-dtype"),
    pytest.param(lambda lib: _x(lib).to(lib.tensor([1], dtype=lib.int32)), id="DTY-18-to-other"),
    pytest.param(lambda lib: _x(lib).to(dtype=lib.float16), id="to-dtype-kw"),
    pytest.param(lambda lib: _x(lib).to(lib.float64).to(lib.float32), id="round-trip"),
    pytest.param(lambda lib: _x(lib).type(lib.int32), id="DTY-27-type(int32)"),
    pytest.param(lambda lib: _x(lib).type("torch.DoubleTensor"), id="DTY-27-type(str)"),
])
def test_dty17_18_27_to_forms(expr: Callable[[Any], Any]) -> None:
    """``.to(device, dtype)``, ``.to(other)``, ``.type(dtype)`` (DTY-17/18/27)."""
    parity(expr)


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32",
                                  "int64", "bool", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2",
                                  "uint16", "uint32", "uint64"])
def test_dty27_type_names(name: str) -> None:
    """``x.type()`` gives the legacy name ('torch.FloatTensor', 'torch.LongTensor'...; CRE-75)."""
    parity(lambda lib: lib.zeros(1, dtype=getattr(lib, name)).type())


@pytest.mark.parametrize("method,leaves", [("half", False), ("double", False), ("long", True)])
def test_dty25_26_casts_and_autograd(method: str, leaves: bool) -> None:
    """A float cast of a tensor that requires grad records ToCopyBackward0; an int cast leaves the graph."""
    def fn(lib):
        w = lib.tensor([1.5, 2.5], requires_grad=True)
        h = getattr(w, method)()
        return (h.requires_grad, h.is_leaf, None if h.grad_fn is None else type(h.grad_fn).__name__, h.dtype)
    r = run(fn, ft)[0]
    assert r[1] is leaves and r[2] == (None if leaves else "ToCopyBackward0")
    parity(fn)


def test_dty25_gradient_flows_back_through_cast() -> None:
    """d/dw sum(w.double() * 2) = 2 in w's dtype (float32)."""
    grads = []
    for lib in (torch, ft):
        w = lib.tensor([1.5, 2.5], requires_grad=True)
        (w.double() * 2).sum().backward()
        grads.append(w.grad)
    assert_same(grads[1], grads[0])


def test_dty28_29_metadata() -> None:
    """element_size/itemsize/nbytes and is_floating_point (DTY-28/29)."""
    def fn(lib):
        x = _x(lib)
        return (x.element_size(), x.itemsize, x.nbytes, x.is_floating_point(), lib.is_floating_point(x),
                x.long().is_floating_point(), x.cfloat().is_complex(), x.cfloat().is_floating_point(),
                x.half().element_size(), x.cdouble().nbytes)
    assert run(fn, ft)[0][:3] == (4, 4, 12)
    parity(fn)


# ---- CRE-01..08, CRE-63..65: default dtypes ---------------------------------------------------------------
@pytest.mark.parametrize("data", [
    pytest.param("[1., 2., 3.]", id="CRE-01-float"),
    pytest.param("[1, 2, 3]", id="CRE-02-int"),
    pytest.param("[True, False]", id="CRE-03-bool"),
    pytest.param("3.0", id="CRE-04-0d"),
    pytest.param("[1, 2.5]", id="CRE-05-mixed"),
    pytest.param("[1, True]", id="CRE-06-int-bool"),
    pytest.param("[1+2j]", id="CRE-07-complex"),
    pytest.param("[]", id="CRE-08-empty"),
    pytest.param("[True, 2.5]", id="bool-float"),
    pytest.param("[1, 1j]", id="int-complex"),
    pytest.param("[[1., 2.], [3., 4.]]", id="nested"),
    pytest.param("(1, 2)", id="tuple"),
    pytest.param("np.array([1., 2.])", id="CRE-10-numpy-f64"),
    pytest.param("np.float32(1.5)", id="CRE-11-np.float32"),
    pytest.param("np.float64(1.5)", id="CRE-11-np.float64"),
    pytest.param("np.array([1, 2], dtype=np.int32)", id="numpy-int32"),
    pytest.param("[np.float32(1.5), 2]", id="list-of-numpy-scalars"),
    pytest.param("[[1, 2], [3]]", id="CRE-09-ragged"),
    pytest.param("2**63", id="CRE-12-overflow"),
    pytest.param("-2**63", id="int64-min"),
])
def test_cre01_to_12_tensor_default_dtypes(data: str) -> None:
    """``torch.tensor(data)`` infers PyTorch's default dtypes (float32, int64, bool, complex64)."""
    parity(lambda lib: (lambda t: (t, t.dtype, t.shape, t.dim()))(lib.tensor(eval(data))))


def test_cre_factories_default_dtypes() -> None:
    """zeros/ones/arange/linspace/eye/empty/full follow the default dtype or the fill value (CRE-14..29)."""
    parity(lambda lib: (lib.zeros(2, 3).dtype, lib.ones(3).dtype, lib.full((2, 2), 7).dtype,
                        lib.full((2, 2), 7.0).dtype, lib.full((2, 2), True).dtype, lib.arange(5).dtype,
                        lib.arange(0, 1, 0.25).dtype, lib.linspace(0, 10, 5).dtype, lib.eye(2).dtype,
                        lib.empty(1).dtype, lib.full((1,), 1j).dtype))


def test_cre63_get_default_dtype() -> None:
    """The default dtype is float32 (CRE-63)."""
    assert ft.get_default_dtype() is ft.float32
    parity(lambda lib: lib.get_default_dtype())


def test_cre64_set_default_dtype_float64(restore_default_dtype: None) -> None:
    """After ``set_default_dtype(float64)``: float literals, factories, complex and int true division follow it."""
    def fn(lib):
        warm = (lib.tensor([1]) / 2, lib.tensor([1]) * 0.5, lib.tensor([1], dtype=lib.int32) + 1.5)  # float32 kernels
        lib.set_default_dtype(lib.float64)
        try:
            assert str(warm[0].dtype) == "torch.float32"
            return (lib.tensor([1.0]).dtype, lib.tensor([1]).dtype, lib.zeros(1).dtype, lib.arange(3.0).dtype,
                    lib.tensor(1 + 1j).dtype, (lib.tensor([1]) / 2).dtype, lib.get_default_dtype(),
                    lib.tensor([1]) * 0.5, lib.tensor([1.0], dtype=lib.float32) + 2.5,
                    lib.linspace(0, 1, 3).dtype, lib.full((1,), 2.0).dtype, lib.eye(2).dtype,
                    lib.result_type(lib.tensor([1]), 1j), lib.tensor([1], dtype=lib.int32) + 1.5)
        finally:
            lib.set_default_dtype(lib.float32)
    ours = run(fn, ft)[0]
    assert ours[:6] == (ft.float64, ft.int64, ft.float64, ft.float64, ft.complex128, ft.float64)
    parity(fn)
    assert ft.get_default_dtype() is ft.float32 and ft.tensor([1.0]).dtype is ft.float32


def test_cre64_set_default_dtype_float16(restore_default_dtype: None) -> None:
    """A float16 default also drives float literals and int true division."""
    def fn(lib):
        lib.set_default_dtype(lib.float16)
        try:
            return lib.tensor([1.5]).dtype, lib.zeros(1).dtype, (lib.tensor([3]) / 2)
        finally:
            lib.set_default_dtype(lib.float32)
    parity(fn)


@pytest.mark.parametrize("name", ["int64", "int32", "complex64", "bool"])
def test_cre65_set_default_dtype_rejects_non_float(name: str, restore_default_dtype: None) -> None:
    """Only floating dtypes can be the default (CRE-65)."""
    with pytest.raises(TypeError, match=re.escape("only floating-point types are supported as the default type")):
        ft.set_default_dtype(getattr(ft, name))
    parity(lambda lib: lib.set_default_dtype(getattr(lib, name)))
    assert ft.get_default_dtype() is ft.float32


def test_finfo_iinfo_compare_by_fields():
    def run(L):
        out = [L.finfo(L.float32) == L.finfo(L.float32), L.finfo(L.float32) == L.finfo(L.float64),
               L.finfo(L.bfloat16) == L.finfo(L.bfloat16), L.iinfo(L.int8) == L.iinfo(L.int8),
               L.iinfo(L.int8) == L.iinfo(L.int16), L.finfo(L.float32) == 3]
        try:
            hash(L.finfo(L.float32))
        except TypeError:
            out.append("unhashable")
        return out
    assert run(ft) == run(torch)


def test_cpu_amp_grad_scaler_is_deprecated_alias():
    def run(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = L.cpu.amp.GradScaler(init_scale=8.0)
        return w[0].category.__name__, str(w[0].message), s.get_scale(), s._device, isinstance(s, L.amp.GradScaler)
    assert run(ft) == run(torch)
