"""``repr`` of facade tensors equals PyTorch's (spec §1.1 CRE-66..75): dtype suffixes, autograd
suffixes, multi-line and summarised tensors, ``torch.Size`` and ``Tensor.type()``.

(The numpy-level printer is covered by test_printing_format.py; this file goes through real Tensors.)
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

Case = Callable[[Any], Any]
_rng = np.random.default_rng(0)
RANDN_100x100 = _rng.standard_normal((100, 100)).astype(np.float32)
RANDN_7 = _rng.standard_normal(7).astype(np.float32)
RANDN_3x25 = (_rng.standard_normal((3, 25)) * 1e-6).astype(np.float32)

REPRS: dict[str, Case] = {
    "CRE-66_float": lambda m: m.tensor([1.0, 2.5, 3.0]),
    "CRE-66_0d": lambda m: m.tensor(6.),
    "CRE-66_int64": lambda m: m.tensor([1, 2]),
    "CRE-66_int32": lambda m: m.tensor([1, 2], dtype=m.int32),
    "CRE-66_float64": lambda m: m.tensor([1., 2.], dtype=m.float64),
    "CRE-66_bf16": lambda m: m.tensor([1., 2.], dtype=m.bfloat16),
    "CRE-66_bool": lambda m: m.tensor([True, False]),
    "int8": lambda m: m.tensor([-1, 2], dtype=m.int8),
    "uint8": lambda m: m.tensor([1, 255], dtype=m.uint8),
    "int16": lambda m: m.tensor([3], dtype=m.int16),
    "float16": lambda m: m.tensor([0.1, 1 / 3], dtype=m.float16),
    "bf16_rounding": lambda m: m.tensor([0.1, 1 / 3, 3.14159, 100.7], dtype=m.bfloat16),
    "0d_int": lambda m: m.tensor(5),
    "0d_int32": lambda m: m.tensor(5, dtype=m.int32),
    "0d_f64": lambda m: m.tensor(3.0, dtype=m.float64),
    "0d_bool": lambda m: m.tensor(False),
    "complex64": lambda m: m.tensor([1 + 2j, -0.5j]),
    "complex128": lambda m: m.tensor([1 + 2j], dtype=m.complex128),
    "empty": lambda m: m.tensor([]),
    "empty_2x0": lambda m: m.zeros(2, 0),
    "empty_int64": lambda m: m.zeros(0, dtype=m.int64),
    "empty_f64": lambda m: m.zeros(0, dtype=m.float64),
    "negative_mix": lambda m: m.tensor([-1.5, 2.25, -0.125]),
    "nan_inf": lambda m: m.tensor([float("nan"), float("inf"), -float("inf"), 2.0]),
    "sci_large": lambda m: m.tensor([1e9, 2e9]),
    "sci_small": lambda m: m.tensor([1e-5, 3e-5]),
    "randn_7": lambda m: m.tensor(RANDN_7),
    "CRE-68_2d": lambda m: m.arange(6.).reshape(2, 3),
    "3d": lambda m: m.arange(24.).reshape(2, 3, 4) / 7,
    "int_2d": lambda m: m.arange(12).view(3, 4),
    "transposed_view": lambda m: m.arange(6.).view(2, 3).t(),
    "wrapped_line": lambda m: m.arange(40.) / 3,
    "wrapped_2d_sci": lambda m: m.tensor(RANDN_3x25),
    "CRE-69_summarised": lambda m: m.arange(2000.),
    "summarised_int": lambda m: m.arange(5000),
    "summarised_2d": lambda m: m.tensor(RANDN_100x100),
    "summarised_3d": lambda m: m.arange(2 * 30 * 30.).reshape(2, 30, 30),
    "summarised_bool": lambda m: m.arange(2000) % 3 == 0,
    "CRE-67_requires_grad": lambda m: m.tensor([1., 2.], requires_grad=True),
    "requires_grad_f64": lambda m: m.tensor([1., 2.], dtype=m.float64, requires_grad=True),
    "requires_grad_0d": lambda m: m.tensor(2., requires_grad=True),
    "CRE-67_grad_fn_mul": lambda m: m.tensor([1., 2.], requires_grad=True) * 2,
    "grad_fn_add": lambda m: m.tensor([1., 2.], requires_grad=True) + 1,
    "grad_fn_sub_f64": lambda m: m.tensor([1., 2.], dtype=m.float64, requires_grad=True) - 1,
    "grad_fn_rsub": lambda m: 1 - m.tensor([1., 2.], requires_grad=True),
    "grad_fn_pow": lambda m: m.tensor([1., 2.], requires_grad=True) ** 2,
    "grad_fn_sum": lambda m: (m.tensor([1., 2.], requires_grad=True) * 2).sum(),
    "grad_fn_mean": lambda m: m.tensor([1., 2.], requires_grad=True).mean(),
    "grad_fn_view": lambda m: m.tensor([1., 2.], requires_grad=True).view(2, 1),
    "grad_fn_t": lambda m: m.ones(2, 2, requires_grad=True).t(),
    "grad_fn_exp": lambda m: m.zeros(2, requires_grad=True).exp(),
    "grad_fn_neg": lambda m: -m.ones(2, requires_grad=True),
    "grad_fn_div_scalar": lambda m: m.ones(2, requires_grad=True) / 2,
    "grad_fn_rdiv": lambda m: 2 / m.ones(2, requires_grad=True),
    "grad_fn_to_f64": lambda m: m.ones(2, requires_grad=True).double(),
    "grad_fn_clone": lambda m: m.ones(2, requires_grad=True).clone(),
    "grad_fn_relu": lambda m: m.tensor([-1., 2.], requires_grad=True).relu(),
    "grad_fn_summarised": lambda m: m.arange(2000., requires_grad=True) * 1,
    "no_grad_result": lambda m: _no_grad(m, lambda: m.ones(2, requires_grad=True) * 2),
    "detached": lambda m: (m.ones(2, requires_grad=True) * 2).detach(),
}


def _no_grad(m: Any, f: Callable[[], Any]) -> Any:
    with m.no_grad():
        return f()


@pytest.mark.parametrize("name", list(REPRS))
def test_repr_matches_torch(name: str) -> None:
    """CRE-66..69: ``repr(t)`` and ``str(t)`` are PyTorch's."""
    o, t = REPRS[name](ft), REPRS[name](torch)
    assert repr(o) == repr(t)
    assert str(o) == str(t)


def test_repr_of_second_device() -> None:
    """A tensor on a non-default device shows ``device=`` as PyTorch does for ``cuda:0``."""
    assert repr(ft.ones(2, device="cpu:1")) == "tensor([1., 1.], device='cpu:1')"
    assert repr(ft.ones(2, dtype=ft.int32, device="cpu:1")) == "tensor([1, 1], device='cpu:1', dtype=torch.int32)"


def test_set_printoptions_precision() -> None:
    """``set_printoptions(precision=2)`` then the default profile."""
    out = []
    for m in (ft, torch):
        m.set_printoptions(precision=2)
        try:
            out.append(repr(m.tensor([1 / 3, 2.5])))
        finally:
            m.set_printoptions(profile="default")
    assert out[0] == out[1]
    assert repr(ft.tensor([1 / 3])) == "tensor([0.3333])"


# ---- torch.Size (CRE-70/71) -------------------------------------------------------------------------
def test_CRE_70_size() -> None:
    for m in (torch, ft):
        s = m.zeros(64, 128).shape
        assert repr(s) == "torch.Size([64, 128])" and str(s) == "torch.Size([64, 128])"
        assert isinstance(s, tuple) and isinstance(s, m.Size) and s == (64, 128)
        assert repr(m.tensor(1.).shape) == "torch.Size([])"
        assert repr(s[1:]) == "torch.Size([128])" and isinstance(s[1:], m.Size) and s[0] == 64
        assert s.numel() == 8192 and m.Size([2, 3]) == (2, 3)


def test_CRE_71_size_methods() -> None:
    for m in (torch, ft):
        x = m.zeros(2, 3)
        assert repr(x.size()) == "torch.Size([2, 3])" and x.size(-1) == 3 and x.size(0) == 2
        assert x.numel() == 6 and x.dim() == 2 and x.ndim == 2 and len(x) == 2


# ---- Tensor.type() (CRE-75, DTY-27) -------------------------------------------------------------------
TYPES: dict[str, Case] = {
    "float32": lambda m: m.ones(1),
    "float64": lambda m: m.ones(1, dtype=m.float64),
    "float16": lambda m: m.ones(1, dtype=m.float16),
    "bfloat16": lambda m: m.ones(1, dtype=m.bfloat16),
    "int64": lambda m: m.ones(1, dtype=m.int64),
    "int32": lambda m: m.ones(1, dtype=m.int32),
    "int16": lambda m: m.ones(1, dtype=m.int16),
    "int8": lambda m: m.ones(1, dtype=m.int8),
    "uint8": lambda m: m.ones(1, dtype=m.uint8),
    "bool": lambda m: m.ones(1, dtype=m.bool),
    "complex64": lambda m: m.ones(1, dtype=m.complex64),
    "complex128": lambda m: m.ones(1, dtype=m.complex128),
}


@pytest.mark.parametrize("name", list(TYPES))
def test_CRE_75_type_string(name: str) -> None:
    """CRE-75: ``x.type()`` is the legacy class name ('torch.FloatTensor')."""
    assert TYPES[name](ft).type() == TYPES[name](torch).type()


def test_DTY_27_type_converts() -> None:
    """DTY-27: ``x.type(dtype)`` and ``x.type('torch.DoubleTensor')`` cast like ``.to``."""
    for m in (torch, ft):
        x = m.tensor([1.5, -2.7])
        assert repr(x.type(m.int32)) == "tensor([ 1, -2], dtype=torch.int32)"
        assert repr(x.type("torch.DoubleTensor")) == "tensor([ 1.5000, -2.7000], dtype=torch.float64)"
        assert x.type(m.float32) is x


def test_type_and_dtype_names() -> None:
    """CRE-75: ``type(x).__name__`` is 'Tensor'; dtype repr/str are 'torch.float32'."""
    assert type(ft.ones(1)).__name__ == type(torch.ones(1)).__name__ == "Tensor"
    for name in ("float32", "int64", "bfloat16", "bool", "complex64", "float8_e4m3fn"):
        assert repr(getattr(ft, name)) == repr(getattr(torch, name)) == str(getattr(ft, name))
