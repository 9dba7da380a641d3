"""Against real PyTorch: behaviour that depends on which overload torch's argument parser picks, and casts.

- ``remainder``'s three overloads: Tensor-Tensor (``RemainderBackward1``), Tensor-Scalar (``RemainderBackward0``)
  and Scalar-Tensor (``7 % x``: ``NotImplemented``, whose backward raises ``derivative for aten::remainder is not
  implemented``; the gradient it used to compute silently is not torch's).
- ``clamp`` with one tensor bound and one number: a 0-d tensor not requiring grad is taken as a number (the
  Scalar overload, ``ClampBackward1``); any other tensor beside a number is a TypeError.
- ``lerp`` with a tensor weight is ``LerpBackward1``.
- uint16/uint32/uint64 with a floating dtype promote to the float (torch 2.13); with an integer, bool or complex
  dtype they still raise torch's error.
- a complex -> real cast warns once per process, as torch's ``TORCH_WARN_ONCE``.
"""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite import _warn

from _parity import run

LIBS = (torch, ft)


def _outcome(fn, lib):
    r, e = run(fn, lib)
    if e is not None:
        return type(e).__name__, str(e).split("\n")[0]
    if isinstance(r, lib.Tensor):
        a = r.detach()
        return (str(r.dtype), tuple(r.shape), (a if a.is_complex() else a.double()).numpy().round(6).tolist(),
                None if r.grad_fn is None else r.grad_fn.name())
    return repr(r)


def _backward(fn, lib):
    x = lib.tensor([1.5, 2.5, 3.5], requires_grad=True)
    y = fn(lib, x)
    name = y.grad_fn.name()
    try:
        y.sum().backward()
    except RuntimeError as e:
        return name, "RuntimeError", str(e)
    return name, x.grad.numpy().tolist()


REMAINDER = {
    "scalar % tensor": lambda L, x: 7 % x,
    "float scalar % tensor": lambda L, x: 7.5 % x,
    "remainder(scalar, tensor)": lambda L, x: L.remainder(7, x),
    "tensor % scalar": lambda L, x: x % 2.0,
    "remainder(tensor, tensor)": lambda L, x: L.remainder(x, L.tensor([1.0, 2.0, 2.0])),
    "tensor % grad tensor": lambda L, x: L.tensor([7.0, 7.0, 7.0]) % x,
    "0-d tensor % tensor": lambda L, x: L.tensor(7.0) % x,
    "in place": lambda L, x: (x * 1).remainder_(2.0),
}


@pytest.mark.parametrize("case", list(REMAINDER))
def test_remainder_overloads(case):
    fn = REMAINDER[case]
    assert _backward(fn, ft) == _backward(fn, torch)


def test_scalar_remainder_has_no_derivative():
    x = ft.tensor([1.5, 2.5, 3.5], requires_grad=True)
    y = 7 % x
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::NotImplemented"
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 2.0, 0.0])
    with pytest.raises(RuntimeError, match="^derivative for aten::remainder is not implemented$"):
        y.sum().backward()


def _bounds(L):
    t1 = L.tensor([2.0, 2.0, 2.0])
    return {
        "number, 0-d": dict(min=2.0, max=L.tensor(3.0)),
        "0-d, number": dict(min=L.tensor(2.0), max=3.0),
        "int 0-d, number": dict(min=L.tensor(2), max=3.0),
        "0-d requiring grad, number": dict(min=L.tensor(2.0, requires_grad=True), max=3.0),
        "1-d, number": dict(min=t1, max=3.0),
        "number, 1-d": dict(min=2.0, max=t1 + 1),
        "0-d, 0-d": dict(min=L.tensor(2.0), max=L.tensor(3.0)),
        "1-d, 1-d": dict(min=t1, max=t1 + 1),
        "0-d only": dict(min=L.tensor(2.0)),
        "number only": dict(max=3.0),
        "numbers": dict(min=2.0, max=3.0),
    }


@pytest.mark.parametrize("form", ["function", "clip", "method", "positional"])
@pytest.mark.parametrize("case", list(_bounds(ft)))
def test_clamp_mixed_bounds(case, form):
    def fn(L):
        x = L.tensor([1.5, 2.5, 3.5], requires_grad=True)
        kw = _bounds(L)[case]
        if form == "function":
            return L.clamp(x, **kw)
        if form == "clip":
            return L.clip(x, **kw)
        if form == "method":
            return x.clamp(**kw)
        return L.clamp(x, kw.get("min"), kw.get("max"))
    t, f = _outcome(fn, torch), _outcome(fn, ft)
    if t[0] == "TypeError":  # (torch's message spells the call form out: its first words and overloads here)
        assert f[0] == "TypeError" and f[1].startswith("clamp() received an invalid combination of arguments"), f
        return
    assert f == t


def test_clamp_mixed_bounds_in_place():
    for L in LIBS:
        y = L.tensor([1.5, 2.5, 3.5])
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            y.clamp_(min=L.tensor([2.0, 2.0, 2.0]), max=3.0)
        y.clamp_(min=L.tensor(2.0), max=3.0)
        assert y.tolist() == [2.0, 2.5, 3.0]


@pytest.mark.parametrize("weight", ["number", "tensor", "0-d tensor"])
def test_lerp_names(weight):
    def fn(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = {"number": 0.25, "tensor": L.tensor([0.25, 0.5, 0.75]), "0-d tensor": L.tensor(0.25)}[weight]
        return L.lerp(x, x * 3, w)
    assert _outcome(fn, ft) == _outcome(fn, torch)


UNSIGNED_CASES = {
    "float32 tensor": lambda L, u: u + L.ones(3),
    "float16 tensor": lambda L, u: u + L.ones(3, dtype=L.float16),
    "bfloat16 tensor": lambda L, u: u * L.ones(3, dtype=L.bfloat16),
    "float64 tensor": lambda L, u: u - L.ones(3, dtype=L.float64),
    "float on the left": lambda L, u: L.ones(3) + u,
    "python float": lambda L, u: u + 1.5,
    "0-d float64": lambda L, u: u + L.tensor(1.5, dtype=L.float64),
    "python complex": lambda L, u: u + 1j,
    "complex64 tensor": lambda L, u: u * L.ones(3, dtype=L.complex64),
    "int64 tensor": lambda L, u: u + L.ones(3, dtype=L.int64),
    "bool tensor": lambda L, u: u + L.ones(3, dtype=L.bool),
    "where with float": lambda L, u: L.where(L.tensor([True, False, True]), u, L.ones(3)),
    "promote_types float16": lambda L, u: L.promote_types(u.dtype, L.float16),
    "promote_types uint8": lambda L, u: L.promote_types(u.dtype, L.uint8),
    "result_type float": lambda L, u: L.result_type(u, 1.0),
}


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("case", list(UNSIGNED_CASES))
def test_wide_unsigned_promotion(case, dt):
    def fn(L):
        return UNSIGNED_CASES[case](L, L.tensor([3, 1, 2], dtype=getattr(L, dt)))
    assert _outcome(fn, ft) == _outcome(fn, torch)


@pytest.mark.parametrize("how", ["float()", "to(float64)", "copy_"])
def test_complex_to_real_warns_once(how):
    def cast(L):
        z = L.tensor([1 + 2j, 3 - 1j])
        if how == "float()":
            return z.float()
        if how == "to(float64)":
            return z.to(L.float64)
        return L.zeros(2).copy_(z)
    _warn.WARNED.discard("complex to real cast")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r1 = cast(ft)
        r2 = cast(ft)
    msgs = [str(a.message) for a in w]
    assert msgs == ["Casting complex values to real discards the imaginary part (Triggered internally at "
                    "/__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)"], msgs
    assert w[0].filename == __file__  # (the user's line)
    assert r1.tolist() == r2.tolist() == cast(torch).tolist() == [1.0, 3.0]
    with warnings.catch_warnings(record=True) as w:  # real -> real, complex -> complex, .real: no warning
        warnings.simplefilter("always")
        _warn.WARNED.discard("complex to real cast")
        ft.ones(2).to(ft.float64)
        ft.tensor([1 + 2j]).to(ft.complex128)
        ft.tensor([1 + 2j]).real.clone()
    assert not w
