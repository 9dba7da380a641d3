"""Parity of the complex-number basics with PyTorch 2.13: real/imag/view_as_real/view_as_complex/conj (views,
with writes through them), conj_physical, resolve_conj/resolve_neg, is_conj/is_neg, angle, polar, complex.

Each case is a function ``f(m)`` run with ``m = torch`` and ``m = functorch_lite``; dtype, shape and values (or
exception type and message), grad_fn names and gradients must agree.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import run

Case = Callable[[Any], Any]

Z = np.array([[1 + 2j, -3 + 0.5j, 0.25 - 4j], [-1 - 1j, 2 + 0j, 0 + 3j]], dtype=np.complex64)
R = np.array([[-1.5, 0.0, 2.0], [3.0, -0.5, 1.0]], dtype=np.float32)


def z(m: Any, dtype: str = "complex64", **kw: Any) -> Any:
    return m.tensor(Z.astype(dtype), **kw)


def r(m: Any, dtype: str = "float32", **kw: Any) -> Any:
    return m.tensor(R.astype(dtype), **kw)


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().resolve_conj().resolve_neg().numpy())


def assert_same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs, (ours, theirs)
        return
    assert isinstance(ours, ft.Tensor), type(ours)
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6, atol=1e-6)


def assert_parity(case: Case) -> None:
    (t_out, t_err), (f_out, f_err) = run(case, torch), run(case, ft)
    if t_err is not None:
        assert f_err is not None, f"torch raised {t_err!r}; functorch_lite returned {f_out}"
        assert type(f_err) is type(t_err) and str(f_err) == str(t_err), (t_err, f_err)
        return
    assert f_err is None, f"functorch_lite raised {f_err!r}"
    assert_same(f_out, t_out)


# ---- values and dtypes ------------------------------------------------------------------------------------
VALUE_CASES: dict[str, Case] = {
    "real_c64": lambda m: z(m).real,
    "imag_c64": lambda m: z(m).imag,
    "real_c128": lambda m: z(m, "complex128").real,
    "imag_c128_fn": lambda m: m.imag(z(m, "complex128")),
    "real_fn": lambda m: m.real(z(m)),
    "real_of_float": lambda m: m.real(r(m)),
    "real_of_int": lambda m: m.arange(3).real,
    "real_of_transposed": lambda m: z(m).t().real,
    "imag_of_slice": lambda m: z(m)[:, 1:].imag,
    "imag_then_view": lambda m: z(m).imag.reshape(-1),
    "real_0d": lambda m: m.tensor(1 + 2j).real,
    "view_as_real": lambda m: m.view_as_real(z(m)),
    "view_as_real_c128": lambda m: m.view_as_real(z(m, "complex128")),
    "view_as_real_0d": lambda m: m.view_as_real(m.tensor(1 + 2j)),
    "view_as_real_of_transposed": lambda m: m.view_as_real(z(m).t()),
    "view_as_complex": lambda m: m.view_as_complex(m.arange(12.).view(3, 2, 2)),
    "view_as_complex_f64": lambda m: m.view_as_complex(m.arange(8, dtype=m.float64).view(4, 2)),
    "view_as_complex_strided": lambda m: m.view_as_complex(m.arange(12.).view(3, 4)[:, :2]),
    "view_as_complex_offset": lambda m: m.view_as_complex(m.arange(12.).view(3, 4)[:, 2:]),
    "roundtrip": lambda m: m.view_as_complex(m.view_as_real(z(m))),
    "conj": lambda m: z(m).conj(),
    "conj_fn": lambda m: m.conj(z(m, "complex128")),
    "conj_conj": lambda m: z(m).conj().conj(),
    "conj_of_float": lambda m: r(m).conj(),
    "conj_of_int": lambda m: m.arange(3).conj(),
    "conj_real": lambda m: z(m).conj().real,
    "conj_imag": lambda m: z(m).conj().imag,
    "conj_imag_resolve_neg": lambda m: z(m).conj().imag.resolve_neg(),
    "conj_index": lambda m: z(m).conj()[1],
    "conj_physical": lambda m: z(m).conj_physical(),
    "conj_physical_fn": lambda m: m.conj_physical(z(m)),
    "conj_physical_of_float": lambda m: m.conj_physical(r(m)),
    "conj_physical_": lambda m: z(m).conj_physical_(),
    "conj_physical_out": lambda m: m.conj_physical(z(m), out=m.empty(2, 3, dtype=m.complex64)),
    "resolve_conj": lambda m: z(m).conj().resolve_conj(),
    "resolve_conj_plain": lambda m: z(m).resolve_conj(),
    "conj_plus_one": lambda m: z(m).conj() + 1,
    "conj_matmul": lambda m: z(m).conj() @ z(m).t(),
    "angle_c64": lambda m: z(m).angle(),
    "angle_c128": lambda m: m.angle(z(m, "complex128")),
    "angle_f32": lambda m: r(m).angle(),
    "angle_f64": lambda m: m.angle(r(m, "float64")),
    "angle_int": lambda m: m.angle(m.tensor([-2, 0, 3])),
    "angle_bool": lambda m: m.angle(m.tensor([True, False])),
    "angle_nan": lambda m: m.angle(m.tensor([float("nan"), -float("inf")])),
    "angle_out": lambda m: m.angle(r(m), out=m.empty(2, 3)),
    "polar": lambda m: m.polar(m.tensor([1., 2.]), m.tensor([0.5, -1.])),
    "polar_f64_bcast": lambda m: m.polar(r(m, "float64").abs(), m.tensor([[0.5], [2.]], dtype=m.float64)),
    "complex": lambda m: m.complex(r(m), r(m) * 2),
    "complex_f64": lambda m: m.complex(r(m, "float64"), r(m, "float64")),
    "complex_bcast": lambda m: m.complex(m.ones(2, 1), m.arange(3.)),
    "complex_0d": lambda m: m.complex(m.tensor(1.), m.arange(3.)),
    "complex_out": lambda m: m.complex(m.ones(2), m.ones(2), out=m.empty(2, dtype=m.complex64)),
    "complex_abs": lambda m: m.complex(r(m), r(m)).abs(),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values(name: str) -> None:
    assert_parity(VALUE_CASES[name])


# ---- view metadata and the conjugate / negative bits --------------------------------------------------------
def _meta(t: Any) -> tuple:
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.is_contiguous(), t._is_view(), t.is_conj(),
            t.is_neg(), str(t.dtype))


META_CASES: dict[str, Case] = {
    "real": lambda m: z(m).real,
    "imag": lambda m: z(m).imag,
    "real_t": lambda m: z(m).t().real,
    "imag_row": lambda m: z(m)[1].imag,
    "imag_slice": lambda m: z(m)[:, 1:].imag,
    "view_as_real": lambda m: m.view_as_real(z(m)),
    "view_as_real_slice": lambda m: m.view_as_real(z(m)[:, 1:]),
    "view_as_complex": lambda m: m.view_as_complex(m.arange(24.).view(3, 4, 2)),
    "view_as_complex_slice": lambda m: m.view_as_complex(m.arange(12.).view(3, 4)[:, 2:]),
    "conj": lambda m: z(m).conj(),
    "conj_t": lambda m: z(m).conj().t(),
    "conj_row": lambda m: z(m).conj()[0],
    "conj_conj": lambda m: z(m).conj().conj(),
    "conj_clone": lambda m: z(m).conj().clone(),
    "conj_imag": lambda m: z(m).conj().imag,
    "conj_real": lambda m: z(m).conj().real,
    "conj_detach": lambda m: z(m).conj().detach(),
    "conj_physical": lambda m: z(m).conj_physical(),
    "resolve_conj": lambda m: z(m).conj().resolve_conj(),
    "resolve_neg": lambda m: z(m).conj().imag.resolve_neg(),
    "neg_resolve_conj": lambda m: z(m).conj().imag.resolve_conj(),
    "plain": lambda m: z(m),
    "float": lambda m: r(m),
}


@pytest.mark.parametrize("name", sorted(META_CASES))
def test_view_metadata(name: str) -> None:
    t, f = META_CASES[name](torch), META_CASES[name](ft)
    assert _meta(f) == _meta(t)
    if t._is_view():
        assert (f.data_ptr() - f._base.data_ptr()) == (t.data_ptr() - t._base.data_ptr())


def test_functions_and_identity() -> None:
    for m in (torch, ft):
        f = r(m)
        c = z(m)
        assert f.real is f and m.real(f) is f
        assert f.conj() is f and m.conj(f) is f and f.conj_physical() is f
        assert c.resolve_conj() is c and f.resolve_neg() is f
        assert c.conj()._base is c and c.real._base is c and m.view_as_real(c)._base is c
        assert m.is_conj(c.conj()) and not m.is_conj(c) and not m.is_neg(c.conj().real)
    assert not hasattr(ft.Tensor, "angle_") and not hasattr(torch.Tensor, "angle_")


# ---- errors ---------------------------------------------------------------------------------------------------
ERROR_CASES: dict[str, Case] = {
    "imag_of_float": lambda m: r(m).imag,
    "imag_fn_of_int": lambda m: m.imag(m.arange(3)),
    "real_of_number": lambda m: m.real(3.0),
    "real_out": lambda m: m.real(z(m), out=None),
    "view_as_real_float": lambda m: m.view_as_real(r(m)),
    "view_as_real_conj": lambda m: m.view_as_real(z(m).conj()),
    "vac_last_dim": lambda m: m.view_as_complex(m.randn(3, 3)),
    "vac_1d": lambda m: m.view_as_complex(m.randn(3)),
    "vac_0d": lambda m: m.view_as_complex(m.tensor(1.)),
    "vac_int": lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.int64)),
    "vac_int_0d": lambda m: m.view_as_complex(m.ones((), dtype=m.int64)),
    "vac_bf16": lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.bfloat16)),
    "vac_complex": lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.complex64)),
    "vac_last_stride": lambda m: m.view_as_complex(m.randn(2, 3).t()),
    "vac_stride_div": lambda m: m.view_as_complex(m.randn(3, 3)[:, :2]),
    "vac_offset": lambda m: m.view_as_complex(m.randn(7)[1:].view(3, 2)),
    "polar_dtype_mismatch": lambda m: m.polar(m.ones(2, dtype=m.float64), m.ones(2)),
    "polar_int": lambda m: m.polar(m.ones(2, dtype=m.int64), m.ones(2)),
    "polar_int2": lambda m: m.polar(m.ones(2), m.ones(2, dtype=m.int64)),
    "polar_scalar": lambda m: m.polar(m.ones(2), 1.0),
    "polar_scalar_first": lambda m: m.polar(1.0, m.ones(2)),
    "complex_dtype_mismatch": lambda m: m.complex(m.ones(2, dtype=m.float64), m.ones(2)),
    "complex_int": lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    "complex_bool": lambda m: m.complex(m.ones(2, dtype=m.bool), m.ones(2, dtype=m.bool)),
    "complex_complex": lambda m: m.complex(m.ones(2, dtype=m.complex64), m.ones(2, dtype=m.complex64)),
    "complex_bf16": lambda m: m.complex(m.ones(2, dtype=m.bfloat16), m.ones(2, dtype=m.bfloat16)),
    "complex_scalar": lambda m: m.complex(m.ones(2), 1.0),
    "complex_broadcast": lambda m: m.complex(m.ones(2), m.ones(3)),
    "set_imag_of_float": lambda m: setattr(r(m), "imag", r(m)),
    "set_real_bad_shape": lambda m: setattr(z(m), "real", m.ones(4)),
    "set_imag_not_broadcastable_to_self": lambda m: setattr(z(m)[0], "imag", m.ones(2, 3)),
    "copy_bad_shape": lambda m: m.zeros(2, 3).copy_(m.ones(4)),
    "set_real_of_leaf": lambda m: setattr(z(m, requires_grad=True), "real", m.ones(3)),
    "conj_physical__leaf": lambda m: z(m, requires_grad=True).conj_physical_(),
    "imag_mul__of_leaf": lambda m: z(m, requires_grad=True).imag.mul_(2),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors(name: str) -> None:
    (_, t_err), (f_out, f_err) = run(ERROR_CASES[name], torch), run(ERROR_CASES[name], ft)
    assert t_err is not None, "the case must raise in torch"
    assert f_err is not None, f"torch raised {t_err!r}; functorch_lite returned {f_out}"
    assert type(f_err) is type(t_err), (t_err, f_err)
    if name != "real_out":  # Python's own wording of an unexpected keyword
        assert str(f_err) == str(t_err), (t_err, f_err)


# ---- writes through the views land in the base ---------------------------------------------------------------
def _w_imag_index(m):
    x = z(m)
    x.imag[0, 1] = 5
    return x


def _w_real_mul(m):
    x = z(m)
    x.real.mul_(2)
    return x


def _w_real_t_slice(m):
    x = z(m)
    x.t().real[1:].fill_(-7)
    return x


def _w_imag_copy(m):
    x = z(m, "complex128")
    x.imag.copy_(m.arange(6, dtype=m.float64).view(2, 3))
    return x


def _w_view_as_real(m):
    x = z(m)
    m.view_as_real(x)[..., 1].add_(1)
    return x


def _w_view_as_real_row(m):
    x = z(m)
    v = m.view_as_real(x)
    v[1] = m.tensor([9., 8.])
    return x


def _w_view_as_complex(m):
    f = m.arange(12.).view(3, 4)
    m.view_as_complex(f[:, :2]).mul_(1j)
    return f


def _w_view_as_complex_odd_base(m):
    f = m.arange(5.)
    m.view_as_complex(f[:4].view(2, 2))[1] = 7 + 8j
    return f


def _w_roundtrip(m):
    x = z(m)
    m.view_as_complex(m.view_as_real(x))[0, 0] = 11 - 1j
    return x


def _w_conj(m):
    x = z(m)
    c = x.conj()
    c[0, 0] = 1 + 2j
    return x


def _w_conj_add(m):
    x = z(m)
    x.conj().add_(1j)
    return x


def _w_conj_imag(m):
    x = z(m)
    x.conj().imag.fill_(7)
    return x


def _w_conj_real(m):
    x = z(m)
    x.conj().real.fill_(7)
    return x


def _w_conj_conj(m):
    x = z(m)
    x.conj().conj()[1] = m.tensor([1j, 2j, 3j])
    return x


def _w_setters(m):
    y = m.zeros(3, dtype=m.complex64)
    y.imag = m.tensor([1., 2., 3.])
    y.real = 5
    return y


def _w_real_setter_float(m):
    g = m.zeros(3)
    g.real = m.ones(3)
    return g


def _w_base_seen_by_view(m):
    x = z(m)
    v = x.imag
    x.mul_(2)
    return v


def _w_conj_physical_(m):
    x = z(m)
    v = x[0]
    x.conj_physical_()
    return v


WRITE_CASES = {f.__name__[3:]: f for f in (
    _w_imag_index, _w_real_mul, _w_real_t_slice, _w_imag_copy, _w_view_as_real, _w_view_as_real_row,
    _w_view_as_complex, _w_view_as_complex_odd_base, _w_roundtrip, _w_conj, _w_conj_add, _w_conj_imag,
    _w_conj_real, _w_conj_conj, _w_setters, _w_real_setter_float, _w_base_seen_by_view, _w_conj_physical_)}


@pytest.mark.parametrize("name", sorted(WRITE_CASES))
def test_write_through_view(name: str) -> None:
    assert_parity(WRITE_CASES[name])


# ---- autograd: grad_fn names and gradients (PyTorch's conjugate convention) --------------------------------
def _leaf(m, kind):
    return z(m, requires_grad=True) if kind == "c" else r(m, requires_grad=True)


W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], dtype=np.float32)
WC = (W + 1j * W[::-1]).astype(np.complex64)

GRAD_CASES: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "real": ("c", lambda m, x: x.real),
    "imag": ("c", lambda m, x: x.imag),
    "real_fn": ("c", lambda m, x: m.real(x)),
    "imag_t": ("c", lambda m, x: x.t().imag.t()),
    "view_as_real": ("c", lambda m, x: m.view_as_real(x)[..., 0] * 2 + m.view_as_real(x)[..., 1]),
    "view_as_complex": ("r", lambda m, x: m.view_as_complex(x.view(3, 2)).abs()),
    "conj": ("c", lambda m, x: (x.conj() * m.tensor(WC)).real),
    "conj_imag": ("c", lambda m, x: x.conj().imag),
    "conj_physical": ("c", lambda m, x: (x.conj_physical() * m.tensor(WC)).imag),
    "resolve_conj": ("c", lambda m, x: (x.conj().resolve_conj() * m.tensor(WC)).real),
    "angle": ("c", lambda m, x: x.angle()),
    "angle_real": ("r", lambda m, x: x.angle()),
    "angle_at_zero": ("c", lambda m, x: (x * m.tensor([[0.], [1.]])).angle()),
    "polar": ("r", lambda m, x: m.polar(x.abs() + 0.5, x * 2).imag + m.polar(x, x).real),
    "complex": ("r", lambda m, x: (m.complex(x, x * x) * m.tensor(WC)).imag),
    "complex_abs": ("r", lambda m, x: m.complex(x, x.flip(0)).abs()),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients(name: str) -> None:
    kind, fn = GRAD_CASES[name]
    res = []
    for m in (torch, ft):
        x = _leaf(m, kind)
        y = fn(m, x)
        names = []
        node = y.grad_fn
        names.append(node.name() if node is not None else None)
        w = m.tensor(W) if not y.is_complex() else m.tensor(WC)
        (y * w).sum().real.backward() if y.is_complex() else (y * w).sum().backward()
        res.append((names, x.grad))
    (t_names, t_grad), (f_names, f_grad) = res
    assert f_names == t_names
    assert_same(f_grad, t_grad)


@pytest.mark.parametrize("op,name", [
    (lambda m, x: x.real, "SelectBackward0"), (lambda m, x: x.imag, "SelectBackward0"),
    (lambda m, x: m.view_as_real(x), "ViewAsRealBackward0"), (lambda m, x: x.conj(), "ConjBackward0"),
    (lambda m, x: x.conj_physical(), "ConjPhysicalBackward0"), (lambda m, x: x.conj().resolve_conj(), "CloneBackward0"),
    (lambda m, x: x.angle(), "AngleBackward0"), (lambda m, x: m.polar(x.real, x.imag), "PolarBackward0"),
    (lambda m, x: m.complex(x.real, x.imag), "ComplexBackward0"),
    (lambda m, x: m.view_as_complex(m.view_as_real(x)), "ViewAsComplexBackward0"),
])
def test_grad_fn_names(op: Callable, name: str) -> None:
    for m in (torch, ft):
        assert op(m, z(m, requires_grad=True)).grad_fn.name() == name


# ---- in-place through the views of a tensor in the graph (CopySlices) ---------------------------------------
def _ip_real_set(m, x):
    y = x * 1
    y.real = m.tensor([1., 2., 3.]) * x.imag[0]
    return y


def _ip_imag_mul(m, x):
    y = x * 2
    y.imag.mul_(3)
    return y


def _ip_view_as_real(m, x):
    y = x * 1
    m.view_as_real(y)[:, 1, 0].mul_(-4)
    return y


def _ip_conj(m, x):
    y = x * 1
    y.conj()[0].mul_(1 + 2j)
    return y


def _ip_conj_imag(m, x):
    y = x * 1
    y.conj().imag[1].mul_(5)
    return y


@pytest.mark.parametrize("fn", [_ip_real_set, _ip_imag_mul, _ip_view_as_real, _ip_conj, _ip_conj_imag],
                         ids=lambda f: f.__name__)
def test_inplace_through_view_gradients(fn: Callable) -> None:
    res = []
    for m in (torch, ft):
        x = z(m, requires_grad=True)
        y = fn(m, x)
        assert y.grad_fn.name().endswith("CopySlices")
        (y * m.tensor(WC)).sum().real.backward()
        res.append((y, x.grad))
    assert_same(res[1], res[0])


def test_grad_of_view_after_inplace() -> None:
    """The view written in place gets an AsStrided-style node whose gradient lands in the base's slots."""
    res = []
    for m in (torch, ft):
        x = z(m, requires_grad=True)
        y = x * 1
        v = y.imag
        v.mul_(2)
        (v * m.tensor(W)).sum().backward()
        res.append(x.grad)
    assert_same(res[1], res[0])
