"""Parity of tensor creation with PyTorch 2.13 (spec §1: CRE-01..50, CRE-63..65).

Each case is a function ``f(m)`` run with ``m = torch`` and ``m = functorch_lite``; values,
dtype and shape (or exception type and message) must agree. Random ops are compared on dtype,
shape, range and reproducibility only: the JAX PRNG stream differs from PyTorch's by design.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

Case = Callable[[Any], Any]


def _np(t: Any) -> np.ndarray:
    """Values of a torch or facade tensor as numpy (bf16/float8 widened to float32)."""
    t = t.detach()
    if str(t.dtype) in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2"):
        t = t.float()
    return np.asarray(t.numpy())


def assert_same(ours: Any, theirs: torch.Tensor, *, values: bool = True) -> None:
    """Facade tensor ``ours`` matches torch tensor ``theirs`` in type, dtype, shape (and values)."""
    assert isinstance(ours, ft.Tensor), type(ours)
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    if values:
        a, b = _np(ours), _np(theirs)
        if b.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def assert_raises_like(case: Case, *, first_line: bool = True) -> None:
    """``case(ft)`` raises what ``case(torch)`` raises: same type, same message (first line)."""
    with pytest.raises(Exception) as theirs:
        case(torch)
    msg = str(theirs.value)
    if first_line:
        msg = msg.split("\n")[0]
    with pytest.raises(type(theirs.value), match=re.escape(msg)):
        case(ft)


# ---- torch.tensor: default dtypes and inference (CRE-01..08, CRE-10/11) -------------------------------
TENSOR_CASES: dict[str, Case] = {
    "CRE-01_floats": lambda m: m.tensor([1., 2., 3.]),
    "CRE-02_ints": lambda m: m.tensor([1, 2, 3]),
    "CRE-03_bools": lambda m: m.tensor([True, False]),
    "CRE-04_0d": lambda m: m.tensor(3.0),
    "CRE-04_0d_int": lambda m: m.tensor(5),
    "CRE-05_int_float_mix": lambda m: m.tensor([1, 2.5]),
    "CRE-06_int_bool_mix": lambda m: m.tensor([1, True]),
    "CRE-06_bool_float_mix": lambda m: m.tensor([True, 2.5]),
    "CRE-07_complex": lambda m: m.tensor([1 + 2j]),
    "CRE-07_complex_int_mix": lambda m: m.tensor([1, 2j]),
    "CRE-08_empty": lambda m: m.tensor([]),
    "CRE-08_empty_nested": lambda m: m.tensor([[], []]),
    "nested_2d_mix": lambda m: m.tensor([[1, 2], [3.5, 4]]),
    "nested_3d": lambda m: m.tensor([[[1, 2]], [[3, 4]]]),
    "nested_tuples": lambda m: m.tensor(((1., 2.), (3., 4.))),
    "int64_min": lambda m: m.tensor(-2 ** 63),
    "CRE-10_np_f64": lambda m: m.tensor(np.array([1., 2.])),
    "CRE-10_np_f32": lambda m: m.tensor(np.array([1., 2.], np.float32)),
    "CRE-10_np_f16": lambda m: m.tensor(np.array([1., 2.], np.float16)),
    "CRE-10_np_i32": lambda m: m.tensor(np.array([1, 2], np.int32)),
    "CRE-10_np_u8": lambda m: m.tensor(np.array([1, 255], np.uint8)),
    "CRE-10_np_bool": lambda m: m.tensor(np.array([True, False])),
    "CRE-10_np_c64": lambda m: m.tensor(np.array([1 + 1j], np.complex64)),
    "CRE-10_np_2d_fortran": lambda m: m.tensor(np.asfortranarray(np.arange(6.).reshape(2, 3))),
    "CRE-11_np_f32_scalar": lambda m: m.tensor(np.float32(1.5)),
    "CRE-11_np_f64_scalar": lambda m: m.tensor(np.float64(1.5)),
    "CRE-11_np_i32_scalar": lambda m: m.tensor(np.int32(3)),
    "CRE-11_np_bool_scalar": lambda m: m.tensor(np.bool_(True)),
    "CRE-11_list_of_np_f64_scalars": lambda m: m.tensor([np.float64(1.), 2.]),
    "CRE-11_list_of_np_i32_scalars": lambda m: m.tensor([np.int32(1), np.int32(2)]),
    "CRE-11_list_np_i32_and_int": lambda m: m.tensor([np.int32(1), 2]),
    "CRE-11_list_np_i32_and_float": lambda m: m.tensor([np.int32(1), 2.5]),
    "CRE-11_list_np_f16_and_float": lambda m: m.tensor([np.float16(1), 2.5]),
    "CRE-11_list_np_f16_and_f64": lambda m: m.tensor([np.float16(1), np.float64(2.5)]),
    "CRE-11_list_np_i8_u8": lambda m: m.tensor([np.int8(1), np.uint8(200)]),
    "CRE-11_list_np_i16_and_bool": lambda m: m.tensor([np.int16(1), True]),
    "CRE-11_list_np_f64_and_complex": lambda m: m.tensor([np.float64(1), 1j]),
    "CRE-11_nested_np_f32_and_float": lambda m: m.tensor([[np.float32(1)], [2.]]),
    "list_of_0d_tensors": lambda m: m.tensor([m.tensor(1.), m.tensor(2.)]),
    "list_f64_0d_tensor_and_float": lambda m: m.tensor([m.tensor(2., dtype=m.float64), 1.]),
    "list_i32_0d_tensor_and_int": lambda m: m.tensor([m.tensor(2, dtype=m.int32), 1]),
    "tensor_of_range": lambda m: m.tensor(range(3)),
    "dtype_arg_bool_to_f32": lambda m: m.tensor([True, False], dtype=m.float32),
    "dtype_arg_f_to_i64_truncates": lambda m: m.tensor([1.7, -1.7], dtype=m.int64),
    "dtype_arg_np_to_i32": lambda m: m.tensor(np.array([1.5, 2.7]), dtype=m.int32),
    "dtype_arg_f64": lambda m: m.tensor([1, 2], dtype=m.float64),
    "dtype_arg_bf16": lambda m: m.tensor([0.1, 1 / 3], dtype=m.bfloat16),
    "device_arg_cpu": lambda m: m.tensor([1.], device="cpu"),
}


@pytest.mark.parametrize("name", list(TENSOR_CASES))
def test_tensor_inference(name: str) -> None:
    """``torch.tensor(data)``: dtype, shape and values (CRE-01..11)."""
    f = TENSOR_CASES[name]
    assert_same(f(ft), f(torch))


def test_tensor_overflowing_cast_is_silent() -> None:
    """Out-of-range values cast to float16 become inf without a warning (as in PyTorch, DTY-12)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = ft.tensor([1e30, 7e4, -1e5], dtype=ft.float16)
    assert_same(ours, torch.tensor([1e30, 7e4, -1e5], dtype=torch.float16))


def test_tensor_default_device_and_metadata() -> None:
    """CRE-01/04: float32 on cpu; a 0-d tensor has shape Size([]) and dim 0."""
    t = ft.tensor(3.0)
    assert t.device == ft.device("cpu") and str(t.device) == "cpu"
    assert t.shape == () and t.dim() == 0 and repr(t.shape) == "torch.Size([])"


ERROR_CASES: dict[str, Case] = {
    "CRE-09_ragged": lambda m: m.tensor([[1, 2], [3]]),
    "CRE-09_ragged_dim0_first_short": lambda m: m.tensor([[1], [2, 3]]),
    "CRE-09_ragged_dim2": lambda m: m.tensor([[[1, 2], [3]]]),
    "CRE-09_seq_then_scalar": lambda m: m.tensor([[1, 2], 3]),
    "CRE-12_overflow": lambda m: m.tensor(2 ** 63),
    "CRE-12_overflow_in_list": lambda m: m.tensor([1, 2 ** 63]),
    "CRE-12_overflow_negative": lambda m: m.tensor(-2 ** 63 - 1),
    "tensor_of_str": lambda m: m.tensor("a"),
    "tensor_of_None": lambda m: m.tensor(None),
    "tensor_of_bytes": lambda m: m.tensor(b"a"),
    "tensor_list_with_str": lambda m: m.tensor([[1], "ab"]),
    "tensor_list_with_None": lambda m: m.tensor([None]),
    "tensor_of_dict": lambda m: m.tensor({}),
    "CRE-16_zeros_no_size": lambda m: m.zeros(),
    "CRE-16_ones_no_size": lambda m: m.ones(),
    "CRE-16_empty_no_size": lambda m: m.empty(),
    "rand_no_size": lambda m: m.rand(),
    "randn_no_size": lambda m: m.randn(),
    "zeros_negative_dim": lambda m: m.zeros(-1),
    "zeros_float_size": lambda m: m.zeros(2.5),
    "zeros_negative_second_dim": lambda m: m.zeros(2, -1),
    "ones_negative_dim": lambda m: m.ones(2, -1),
    "empty_negative_dim": lambda m: m.empty(-1),
    "full_negative_dim": lambda m: m.full((2, -3), 1.),
    "rand_negative_dim": lambda m: m.rand(-1),
    "randint_negative_dim": lambda m: m.randint(0, 3, (2, -3)),
    "normal_negative_dim": lambda m: m.normal(0., 1., (-1,)),
    "zeros_bool_size": lambda m: m.zeros(True),
    "zeros_tuple_with_float": lambda m: m.zeros([2.0]),
    "zeros_float_tensor_size": lambda m: m.zeros(m.tensor(2.5)),
    "zeros_varargs_with_float": lambda m: m.zeros(2, 2.5),
    "zeros_varargs_with_None": lambda m: m.zeros(2, None),
    "zeros_np_float_size": lambda m: m.zeros(np.float64(2.)),
    "rand_dtype_no_size": lambda m: m.rand(dtype=m.float64),
    "rand_float8": lambda m: m.rand(2, dtype=m.float8_e4m3fn),
    "randn_float8": lambda m: m.randn(2, dtype=m.float8_e4m3fn),
    "CRE-19_full_int_size": lambda m: m.full(2, 7),
    "CRE-23_arange_zero_step": lambda m: m.arange(0, 5, 0),
    "arange_wrong_sign": lambda m: m.arange(0, 5, -1),
    "arange_negative_end": lambda m: m.arange(-3),
    "arange_wrong_sign_int_dtype": lambda m: m.arange(0.5, 0.7, -0.5, dtype=m.int32),
    "arange_int64_step_truncates_to_zero": lambda m: m.arange(0, 3, 0.5, dtype=m.int64),
    "arange_bool": lambda m: m.arange(0, 3, dtype=m.bool),
    "arange_complex": lambda m: m.arange(0, 3, dtype=m.complex64),
    "CRE-26_linspace_no_steps": lambda m: m.linspace(0, 1),
    "linspace_negative_steps": lambda m: m.linspace(0, 1, -1),
    "linspace_float_steps": lambda m: m.linspace(0, 1, 2.5),
    "linspace_no_steps_kwargs": lambda m: m.linspace(0, 1, dtype=m.float64),
    "logspace_no_steps": lambda m: m.logspace(0, 2),
    "logspace_negative_steps": lambda m: m.logspace(0, 1, -1),
    "eye_negative": lambda m: m.eye(-1),
    "eye_negative_m": lambda m: m.eye(2, -1),
    "CRE-32_rand_int64": lambda m: m.rand(2, dtype=m.int64),
    "randn_int64": lambda m: m.randn(2, dtype=m.int64),
    "CRE-34_randint_int_size": lambda m: m.randint(0, 10, 3),
    "randint_low_ge_high": lambda m: m.randint(5, 2, (3,)),
    "randint_no_size": lambda m: m.randint(10),
    "randint_int_size_2args": lambda m: m.randint(0, 10),
    "randint_size_only_kw": lambda m: m.randint(size=(3,)),
    "CRE-43_rand_like_int32": lambda m: m.rand_like(m.zeros(2, dtype=m.int32)),
    "randn_like_int32": lambda m: m.randn_like(m.zeros(2, dtype=m.int32)),
    "normal_no_size": lambda m: m.normal(0., 1.),
    "normal_int_args": lambda m: m.normal(0, 1),
    "normal_no_size_generator": lambda m: m.normal(0., 1., generator=m.Generator()),
    "normal_np_scalar_mean": lambda m: m.normal(np.float64(0.), 1.),
    "normal_negative_std": lambda m: m.normal(0., -1., (2,)),
    "randperm_negative": lambda m: m.randperm(-1),
    "randperm_bool": lambda m: m.randperm(3, dtype=m.bool),
    "CRE-48_tensor_int_requires_grad": lambda m: m.tensor([1, 2], requires_grad=True),
    "CRE-48_zeros_int_requires_grad": lambda m: m.zeros(2, dtype=m.int64, requires_grad=True),
    "CRE-48_full_int_requires_grad": lambda m: m.full((2,), 1, requires_grad=True),
    "CRE-48_randint_requires_grad": lambda m: m.randint(0, 3, (2,), requires_grad=True),
    "CRE-48_arange_int_requires_grad": lambda m: m.arange(3, requires_grad=True),
    "CRE-65_set_default_int64": lambda m: m.set_default_dtype(m.int64),
}


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_creation_errors(name: str) -> None:
    """Same exception type and message as PyTorch (first line for multi-line messages)."""
    assert_raises_like(ERROR_CASES[name])


def test_CRE_50_cuda_unavailable() -> None:
    """CRE-50: ``randn(device='cuda')`` without CUDA is an AssertionError in both."""
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.randn(2, device="cuda")
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        ft.randn(2, device="cuda")


def test_CRE_13_tensor_of_tensor_warns_and_copies() -> None:
    """CRE-13: ``tensor(t)`` warns, copies (no shared storage) and drops requires_grad."""
    msg = ("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
           "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")
    for m in (torch, ft):
        src = m.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match=re.escape(msg)):
            c = m.tensor(src)
        assert not c.requires_grad and c.is_leaf
        with m.no_grad():
            src.add_(1)
        assert c.tolist() == [1.0, 1.0]
        assert c.data_ptr() != src.data_ptr()


def test_CRE_13_tensor_of_tensor_dtype() -> None:
    """CRE-13 with ``dtype=``: the copy is cast."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert_same(ft.tensor(ft.arange(3), dtype=ft.float64), torch.tensor(torch.arange(3), dtype=torch.float64))


# ---- as_tensor -------------------------------------------------------------------------------------
def test_as_tensor_returns_same_object() -> None:
    """``as_tensor(t)`` is ``t`` when dtype/device already match; converts otherwise."""
    for m in (torch, ft):
        t = m.ones(2)
        assert m.as_tensor(t) is t
        assert m.as_tensor(t, dtype=m.float32) is t
        assert m.as_tensor(t, dtype=m.float64) is not t
    assert_same(ft.as_tensor(ft.ones(2), dtype=ft.float64), torch.as_tensor(torch.ones(2), dtype=torch.float64))


AS_TENSOR_CASES: dict[str, Case] = {
    "list_int": lambda m: m.as_tensor([1, 2]),
    "list_float": lambda m: m.as_tensor([1., 2.]),
    "np_i32": lambda m: m.as_tensor(np.array([1, 2], np.int32)),
    "np_f64_to_f32": lambda m: m.as_tensor(np.array([1.5, 2.5]), dtype=m.float32),
    "np_scalar": lambda m: m.as_tensor(np.float16(2.5)),
    "asarray_list": lambda m: m.asarray([[1, 2], [3, 4]]),
}


@pytest.mark.parametrize("name", list(AS_TENSOR_CASES))
def test_as_tensor(name: str) -> None:
    """``as_tensor``/``asarray`` keep numpy dtypes and honour ``dtype=`` (CRE-61)."""
    f = AS_TENSOR_CASES[name]
    assert_same(f(ft), f(torch))


# ---- filled tensors, ranges, eye (CRE-14..29, CRE-41..46) -----------------------------------------------
FILL_CASES: dict[str, Case] = {
    "CRE-14_zeros_varargs": lambda m: m.zeros(2, 3),
    "CRE-14_zeros_tuple": lambda m: m.zeros((2, 3)),
    "CRE-14_zeros_list": lambda m: m.zeros([2, 3]),
    "CRE-14_zeros_size": lambda m: m.zeros(m.Size([2, 3])),
    "CRE-15_zeros_0d": lambda m: m.zeros(()),
    "zeros_0d_int_tensor_size": lambda m: m.zeros(m.tensor(2), 3),
    "zeros_np_int_size": lambda m: m.zeros(np.int64(2)),
    "zeros_bool_in_varargs": lambda m: m.zeros(2, True),
    "zeros_empty_dim": lambda m: m.zeros(2, 0),
    "zeros_0": lambda m: m.zeros(0),
    "zeros_complex": lambda m: m.zeros(2, dtype=m.complex64),
    "zeros_bf16": lambda m: m.zeros(2, 2, dtype=m.bfloat16),
    "CRE-17_ones": lambda m: m.ones(3),
    "ones_int8": lambda m: m.ones(2, dtype=m.int8),
    "ones_bool": lambda m: m.ones(2, dtype=m.bool),
    "ones_f16_tuple": lambda m: m.ones((1, 2, 3), dtype=m.float16),
    "CRE-18_full_int": lambda m: m.full((2, 2), 7),
    "CRE-18_full_float": lambda m: m.full((2, 2), 7.),
    "CRE-18_full_bool": lambda m: m.full((2, 2), True),
    "full_complex": lambda m: m.full((2,), 1j),
    "full_list_size": lambda m: m.full([2], 1.5),
    "full_0d_tensor_value": lambda m: m.full((2,), m.tensor(3)),
    "full_dtype": lambda m: m.full((2,), 2.7, dtype=m.int32),
    "CRE-20_arange_int": lambda m: m.arange(5),
    "CRE-21_arange_float_step": lambda m: m.arange(0, 1, 0.25),
    "CRE-21_arange_float_end": lambda m: m.arange(5.),
    "CRE-22_arange_start_end": lambda m: m.arange(1, 4),
    "CRE-22_arange_negative_step": lambda m: m.arange(5, 0, -1),
    "arange_tenths": lambda m: m.arange(0, 1, 0.1),
    "arange_half_steps": lambda m: m.arange(1, 2.5, 0.5),
    "arange_int_args_float_dtype": lambda m: m.arange(5, dtype=m.float32),
    "arange_float_args_int_dtype": lambda m: m.arange(0.5, 3.5, dtype=m.int64),
    "arange_float_step_int32_dtype": lambda m: m.arange(0, 3, 0.5, dtype=m.int32),
    "arange_float_step_int32_dtype_15": lambda m: m.arange(0, 3, 1.5, dtype=m.int32),
    "arange_float_args_int64_truncated": lambda m: m.arange(0.5, 3.7, 1.2, dtype=m.int64),
    "arange_int64_len_from_truncated": lambda m: m.arange(0, 5, 2.5, dtype=m.int64),
    "arange_int64_negative_start": lambda m: m.arange(-1.7, 5, 1.5, dtype=m.int64),
    "arange_int64_descending": lambda m: m.arange(5, 0, -1.5, dtype=m.int64),
    "arange_uint8_float_step": lambda m: m.arange(0, 10, 2.9, dtype=m.uint8),
    "arange_int32_negative_float_step": lambda m: m.arange(0, -3, -0.5, dtype=m.int32),
    "arange_int8": lambda m: m.arange(-7, 7, 3, dtype=m.int8),
    "arange_0d_tensor_end": lambda m: m.arange(m.tensor(3)),
    "arange_empty": lambda m: m.arange(3, 3),
    "CRE-24_linspace": lambda m: m.linspace(0, 1, 5),
    "CRE-25_linspace_int_ends": lambda m: m.linspace(0, 10, 5),
    "linspace_odd": lambda m: m.linspace(-1, 3, 7),
    "linspace_one": lambda m: m.linspace(0, 1, 1),
    "linspace_zero": lambda m: m.linspace(0, 1, 0),
    "linspace_one_f64": lambda m: m.linspace(3, 7, 1, dtype=m.float64),
    "linspace_one_int64": lambda m: m.linspace(3, 7, 1, dtype=m.int64),
    "logspace_one": lambda m: m.logspace(1, 2, 1),
    "linspace_int64": lambda m: m.linspace(0, 10, 4, dtype=m.int64),
    "linspace_f64": lambda m: m.linspace(0, 1, 7, dtype=m.float64),
    "linspace_tensor_ends": lambda m: m.linspace(m.tensor(0.), m.tensor(1.), 3),
    "logspace": lambda m: m.logspace(0, 2, 3),
    "logspace_base2": lambda m: m.logspace(0, 3, 4, base=2),
    "CRE-27_eye": lambda m: m.eye(3),
    "CRE-27_eye_rect": lambda m: m.eye(2, 3),
    "CRE-28_eye_int64": lambda m: m.eye(2, dtype=m.int64),
    "eye_bool": lambda m: m.eye(2, dtype=m.bool),
    "eye_0": lambda m: m.eye(0),
    "CRE-41_zeros_like_int32": lambda m: m.zeros_like(m.ones(2, 3, dtype=m.int32)),
    "CRE-41_ones_like_int32": lambda m: m.ones_like(m.zeros(2, 3, dtype=m.int32)),
    "CRE-42_full_like_truncates": lambda m: m.full_like(m.zeros(2, 3, dtype=m.int32), 2.7),
    "CRE-42_full_like_negative": lambda m: m.full_like(m.zeros(2, dtype=m.int32), -2.7),
    "CRE-45_zeros_like_dtype": lambda m: m.zeros_like(m.ones(2), dtype=m.float64),
    "ones_like_dtype_int16": lambda m: m.ones_like(m.zeros(2), dtype=m.int16),
    "full_like_bf16": lambda m: m.full_like(m.zeros(2, dtype=m.bfloat16), 0.1),
}


@pytest.mark.parametrize("name", list(FILL_CASES))
def test_filled_and_ranges(name: str) -> None:
    """zeros/ones/full/arange/linspace/logspace/eye/*_like: dtype, shape, values."""
    f = FILL_CASES[name]
    assert_same(f(ft), f(torch))


@pytest.mark.parametrize("name", ["CRE-29_empty", "empty_tuple_int32", "CRE-41_empty_like"])
def test_empty_shape_and_dtype(name: str) -> None:
    """CRE-29/41: ``empty`` values are unspecified; shape and dtype are not."""
    f = {"CRE-29_empty": lambda m: m.empty(2, 3),
         "empty_tuple_int32": lambda m: m.empty((4,), dtype=m.int32),
         "CRE-41_empty_like": lambda m: m.empty_like(m.zeros(2, 3, dtype=m.int32))}[name]
    assert_same(f(ft), f(torch), values=False)


def test_CRE_46_like_does_not_inherit_requires_grad() -> None:
    """CRE-46: ``zeros_like(w)`` of a grad-requiring w does not require grad; ``requires_grad=True`` works."""
    for m in (torch, ft):
        w = m.zeros(2, requires_grad=True)
        for fn in (m.zeros_like, m.ones_like, m.empty_like, m.rand_like, m.randn_like):
            assert fn(w).requires_grad is False
        assert m.zeros_like(w, requires_grad=True).requires_grad is True


# ---- default dtype (CRE-63..65) ---------------------------------------------------------------------
def test_CRE_63_default_dtype() -> None:
    assert str(ft.get_default_dtype()) == str(torch.get_default_dtype()) == "torch.float32"


DEFAULT_F64_CASES: dict[str, Case] = {
    "tensor_float": lambda m: m.tensor([1.]),
    "tensor_int": lambda m: m.tensor([1]),
    "zeros": lambda m: m.zeros(1),
    "arange_float": lambda m: m.arange(3.),
    "tensor_complex": lambda m: m.tensor(1 + 1j),
    "int_true_div": lambda m: m.tensor([1]) / 2,
    "linspace": lambda m: m.linspace(0, 1, 3),
    "full_float": lambda m: m.full((2,), 1.5),
    "eye": lambda m: m.eye(2),
    "np_f32_kept": lambda m: m.tensor(np.ones(2, np.float32)),
}


@pytest.mark.parametrize("name", list(DEFAULT_F64_CASES))
def test_CRE_64_set_default_dtype_float64(name: str) -> None:
    """CRE-64: after ``set_default_dtype(float64)`` Python floats (and int/int division) give float64."""
    f = DEFAULT_F64_CASES[name]
    results = []
    for m in (torch, ft):
        m.set_default_dtype(m.float64)
        try:
            results.append(f(m))
        finally:
            m.set_default_dtype(m.float32)
    assert_same(results[1], results[0])


def test_CRE_64_random_follows_default_dtype() -> None:
    for m in (torch, ft):
        m.set_default_dtype(m.float64)
        try:
            assert str(m.rand(2).dtype) == str(m.randn(2).dtype) == "torch.float64"
        finally:
            m.set_default_dtype(m.float32)


# ---- random sampling (CRE-30..40, CRE-44) ------------------------------------------------------------
RANDOM_CASES: dict[str, Case] = {
    "CRE-30_rand": lambda m: m.rand(1000),
    "CRE-31_randn": lambda m: m.randn(2, 3),
    "rand_tuple": lambda m: m.rand((2, 3)),
    "rand_list": lambda m: m.rand([2, 3]),
    "rand_f64": lambda m: m.rand(4, dtype=m.float64),
    "rand_f16": lambda m: m.rand(4, dtype=m.float16),
    "rand_bf16": lambda m: m.rand(4, dtype=m.bfloat16),
    "randn_f64": lambda m: m.randn(3, dtype=m.float64),
    "CRE-33_randint_low_high": lambda m: m.randint(0, 10, (3,)),
    "CRE-33_randint_high": lambda m: m.randint(10, (3,)),
    "randint_size_kw": lambda m: m.randint(3, 10, size=(2, 2)),
    "randint_all_kw": lambda m: m.randint(low=0, high=10, size=(3,)),
    "randint_high_size_kw": lambda m: m.randint(high=10, size=(3,)),
    "randint_low_pos_high_kw": lambda m: m.randint(3, high=10, size=(3,)),
    "normal_all_kw": lambda m: m.normal(mean=0., std=1., size=(2,)),
    "CRE-35_randint_float_dtype": lambda m: m.randint(0, 10, (3,), dtype=m.float32),
    "randint_bool_dtype": lambda m: m.randint(0, 2, (3,), dtype=m.bool),
    "CRE-44_rand_like": lambda m: m.rand_like(m.zeros(2, 3)),
    "CRE-44_randn_like": lambda m: m.randn_like(m.zeros(2, 3)),
    "CRE-44_randint_like_int32": lambda m: m.randint_like(m.zeros(2, dtype=m.int32), 10),
    "randint_like_float": lambda m: m.randint_like(m.zeros(2), 3, 10),
    "rand_like_f64": lambda m: m.rand_like(m.zeros(2, dtype=m.float64)),
    "normal_scalars": lambda m: m.normal(0., 1., (2, 3)),
    "normal_tensor_mean": lambda m: m.normal(m.zeros(3), 1.),
    "normal_tensor_std_f64": lambda m: m.normal(2.0, m.ones(3, dtype=m.float64)),
    "randperm": lambda m: m.randperm(5),
    "randperm_f32": lambda m: m.randperm(5, dtype=m.float32),
    "rand_complex64": lambda m: m.rand(4, dtype=m.complex64),
    "randn_complex128": lambda m: m.randn(2, 3, dtype=m.complex128),
    "randn_like_complex": lambda m: m.randn_like(m.zeros(2, dtype=m.complex64)),
    "normal__complex": lambda m: m.zeros(3, dtype=m.complex64).normal_(),
    "uniform__complex": lambda m: m.zeros(3, dtype=m.complex128).uniform_(),
}


@pytest.mark.parametrize("name", list(RANDOM_CASES))
def test_random_dtype_and_shape(name: str) -> None:
    """Random creation: dtype and shape as PyTorch (values differ by design)."""
    f = RANDOM_CASES[name]
    assert_same(f(ft), f(torch), values=False)


def test_random_ranges() -> None:
    """CRE-30: rand in [0, 1); randint in [low, high); randn/normal moments; randperm is a permutation."""
    ft.manual_seed(1)
    r = ft.rand(10000).numpy()
    assert r.min() >= 0.0 and r.max() < 1.0 and abs(r.mean() - 0.5) < 0.02
    ri = ft.randint(3, 7, (10000,)).numpy()
    assert ri.min() == 3 and ri.max() == 6
    n = ft.randn(20000).numpy()
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    g = ft.normal(2.0, 3.0, (20000,)).numpy()
    assert abs(g.mean() - 2) < 0.1 and abs(g.std() - 3) < 0.1
    p = ft.randperm(50).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(50))
    for dt in (ft.float16, ft.bfloat16):
        h = ft.rand(4000, dtype=dt).float().numpy()
        assert h.min() >= 0.0 and h.max() < 1.0 and abs(h.mean() - 0.5) < 0.05
    lo, hi = ft.randint(low=2, high=4, size=(2000,)).numpy(), ft.randint(high=3, size=(2000,)).numpy()
    assert (lo.min(), lo.max(), hi.min(), hi.max()) == (2, 3, 0, 2)


def test_complex_sampling_moments_as_torch() -> None:
    """Complex rand/randn/uniform_/normal_: real and imaginary parts drawn independently, each U(a, b) or
    N(mean, std^2 / 2) — the moments torch 2.13 gives (measured with 200k draws: both parts mean 1.0, std 1.41
    for normal_(1, 2); std 0.707 for randn)."""
    ft.manual_seed(0)
    torch.manual_seed(0)
    n = 100000
    for m in (ft, torch):
        c = m.randn(n, dtype=m.complex64).numpy()
        assert abs(c.real.std() - 0.7071) < 0.01 and abs(c.imag.std() - 0.7071) < 0.01
        assert abs(np.corrcoef(c.real, c.imag)[0, 1]) < 0.02
        c = m.empty(n, dtype=m.complex128).normal_(1.0, 2.0).numpy()
        assert abs(c.real.mean() - 1) < 0.03 and abs(c.imag.mean() - 1) < 0.03
        assert abs(c.real.std() - 1.4142) < 0.02 and abs(c.imag.std() - 1.4142) < 0.02
        c = m.empty(n, dtype=m.complex64).uniform_(1.0, 3.0).numpy()
        assert 1 <= c.real.min() and c.real.max() < 3 and 1 <= c.imag.min() and c.imag.max() < 3
        c = m.rand(n, dtype=m.complex64).numpy()
        assert abs(c.real.mean() - 0.5) < 0.01 and abs(c.imag.mean() - 0.5) < 0.01
    with pytest.raises(RuntimeError, match="complex32"):
        ft.randn(2, dtype=ft.complex32)


def _draws(m: Any, generator: Any = None) -> list:
    kw = {} if generator is None else {"generator": generator}
    return [m.rand(3, **kw).tolist(), m.randn(3, **kw).tolist(), m.randint(0, 10, (5,), **kw).tolist(),
            m.randperm(6, **kw).tolist(), m.normal(0., 1., (2,), **kw).tolist()]


def test_CRE_36_manual_seed_reproduces() -> None:
    """CRE-36..39: the same seed gives the same stream; successive draws differ."""
    ft.manual_seed(0)
    a = _draws(ft)
    ft.manual_seed(0)
    b = _draws(ft)
    assert a == b
    assert ft.rand(3).tolist() != ft.rand(3).tolist()
    ft.manual_seed(1)
    assert _draws(ft) != a


def test_CRE_40_generator_reproduces_global_stream() -> None:
    """CRE-40: ``Generator().manual_seed(0)`` gives the values ``manual_seed(0)`` gives (as in torch)."""
    for m in (torch, ft):
        m.manual_seed(0)
        glob = _draws(m)
        g = m.Generator().manual_seed(0)
        assert _draws(m, g) == glob
        # a generator does not advance the global stream
        m.manual_seed(0)
        m.rand(1, generator=m.Generator().manual_seed(5))
        assert m.rand(3).tolist() == glob[0]


def test_manual_seed_returns_generator() -> None:
    for m in (torch, ft):
        g = m.Generator()
        assert g.manual_seed(3) is g
        assert m.manual_seed(0).initial_seed() == 0


# ---- requires_grad at creation (CRE-47/48) -------------------------------------------------------------
GRAD_CASES: dict[str, Case] = {
    "CRE-47_zeros": lambda m: m.zeros(2, requires_grad=True),
    "ones": lambda m: m.ones(2, requires_grad=True),
    "full": lambda m: m.full((2,), 1.5, requires_grad=True),
    "arange": lambda m: m.arange(3., requires_grad=True),
    "linspace": lambda m: m.linspace(0, 1, 3, requires_grad=True),
    "eye": lambda m: m.eye(2, requires_grad=True),
    "tensor": lambda m: m.tensor([1., 2.], requires_grad=True),
    "tensor_f16": lambda m: m.tensor([1., 2.], dtype=m.float16, requires_grad=True),
    "tensor_complex": lambda m: m.tensor([1j], requires_grad=True),
    "zeros_like": lambda m: m.zeros_like(m.ones(2), requires_grad=True),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_CRE_47_requires_grad_at_creation(name: str) -> None:
    """CRE-47: a leaf that requires grad, no grad_fn, repr suffix ``requires_grad=True``."""
    f = GRAD_CASES[name]
    ours, theirs = f(ft), f(torch)
    assert_same(ours, theirs)
    assert ours.requires_grad and ours.is_leaf and ours.grad_fn is None and ours.grad is None
    assert repr(ours) == repr(theirs)


def test_random_requires_grad() -> None:
    for m in (torch, ft):
        for t in (m.rand(2, requires_grad=True), m.randn(2, requires_grad=True),
                  m.normal(0., 1., (2,), requires_grad=True)):
            assert t.requires_grad and t.is_leaf


def test_size_concatenation_and_repetition_stay_sizes():
    """``x.shape + (1,)``, ``(1,) + x.shape``, ``x.shape * 2``: torch.Size, as in PyTorch; a list is refused."""
    for L in (ft, torch):
        s = L.ones(2, 3).shape
        for r, want in ((s + (4,), [2, 3, 4]), ((4,) + s, [4, 2, 3]), (s * 2, [2, 3, 2, 3]), (2 * s, [2, 3, 2, 3]),
                        (s[1:] + s[:1], [3, 2])):
            assert type(r) is L.Size and list(r) == want and repr(r) == f"torch.Size({want})"
        with pytest.raises(TypeError, match="can only concatenate tuple"):
            s + [4]


_SEQ_CASES = {
    "deque": lambda m: m.tensor(__import__("collections").deque([1.0, 2.0])),
    "deque-int": lambda m: m.tensor(__import__("collections").deque([1, 2])),
    "array": lambda m: m.tensor(__import__("array").array("f", [1.0, 2.0])),
    "memoryview": lambda m: m.tensor(memoryview(np.arange(3.0))),
    "userlist": lambda m: m.tensor(__import__("collections").UserList([1.0, 2.0])),
    "list-of-deques": lambda m: m.tensor([__import__("collections").deque([1, 2]),
                                          __import__("collections").deque([3, 4])]),
    "as_tensor-deque": lambda m: m.as_tensor(__import__("collections").deque([1.0, 2.0])),
    "LongTensor-range": lambda m: m.LongTensor(range(3)),
    "Tensor-range": lambda m: m.Tensor(range(3)),
    "FloatTensor-deque": lambda m: m.FloatTensor(__import__("collections").deque([1, 2])),
    "new_tensor-range": lambda m: m.ones(2).new_tensor(range(2)),
    "dict-values": lambda m: m.tensor({"a": 1.0}.values()),
}


@pytest.mark.parametrize("name", list(_SEQ_CASES))
def test_tensor_from_other_sequences(name):
    """Any sequence torch reads element by element (PySequence_Check): a deque (the REINFORCE example's returns),
    an array.array, a memoryview, a UserList, a range in the legacy constructors; a dict view is refused."""
    out = []
    for m in (torch, ft):
        try:
            t = _SEQ_CASES[name](m)
            out.append((t.tolist(), str(t.dtype)))
        except Exception as e:  # noqa: BLE001 -- compared between the libraries
            out.append((type(e).__name__, str(e)))
    assert out[1] == out[0]
