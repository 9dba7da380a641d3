"""Parity of the NumPy / Python bridge with PyTorch 2.13 (spec §1.2 CRE-51..62, §10 CONV-01..29).

Documented deviations (JAX arrays are immutable, see README "NumPy bridge"): ``from_numpy`` copies,
so later writes to the NumPy array are not seen by the tensor (CRE-52), and ``.numpy()`` returns a
read-only array (CRE-62). Tests below pin those deviations down so a change is noticed.
"""
from __future__ import annotations

import math
import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

Case = Callable[[Any], Any]


def _run(case: Case, m: Any) -> tuple[Any, list[str]]:
    """``case(m)`` and the warning messages it issued."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = case(m)
    return r, [str(x.message) for x in w]


def assert_raises_like(case: Case) -> None:
    """``case(ft)`` raises ``case(torch)``'s exception type and message."""
    with pytest.raises(Exception) as theirs:
        case(torch)
    with pytest.raises(type(theirs.value), match="^" + re.escape(str(theirs.value)) + "$"):
        case(ft)


def assert_same_python(ours: Any, theirs: Any) -> None:
    """Same Python type and value (recursively for lists); NaN equals NaN."""
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, list):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same_python(a, b)
    elif isinstance(theirs, float) and math.isnan(theirs):
        assert math.isnan(ours)
    else:
        assert ours == theirs, (ours, theirs)


# ---- from_numpy (CRE-51..60) -------------------------------------------------------------------------
FROM_NUMPY: dict[str, Case] = {
    "CRE-51_f64": lambda m: m.from_numpy(np.array([1., 2., 3.])),
    "CRE-55_i32": lambda m: m.from_numpy(np.array([1, 2], np.int32)),
    "CRE-55_u16": lambda m: m.from_numpy(np.array([1, 2], np.uint16)),
    "u32": lambda m: m.from_numpy(np.array([1, 2], np.uint32)),
    "u64": lambda m: m.from_numpy(np.array([1, 2], np.uint64)),
    "i8": lambda m: m.from_numpy(np.array([-1, 2], np.int8)),
    "u8": lambda m: m.from_numpy(np.array([1, 255], np.uint8)),
    "i16": lambda m: m.from_numpy(np.array([1, 2], np.int16)),
    "i64": lambda m: m.from_numpy(np.array([1, 2], np.int64)),
    "f16": lambda m: m.from_numpy(np.array([1.5, 2.], np.float16)),
    "f32": lambda m: m.from_numpy(np.array([1.5, 2.], np.float32)),
    "c64": lambda m: m.from_numpy(np.array([1 + 2j], np.complex64)),
    "c128": lambda m: m.from_numpy(np.array([1j], np.complex128)),
    "bool": lambda m: m.from_numpy(np.array([True, False])),
    "0d": lambda m: m.from_numpy(np.array(3.)),
    "2d": lambda m: m.from_numpy(np.arange(6.).reshape(2, 3)),
    "empty": lambda m: m.from_numpy(np.zeros((0, 3), np.float32)),
}


@pytest.mark.parametrize("name", list(FROM_NUMPY))
def test_CRE_55_from_numpy_keeps_dtype(name: str) -> None:
    """CRE-51/55: ``from_numpy`` keeps the NumPy dtype, shape and values."""
    o, t = FROM_NUMPY[name](ft), FROM_NUMPY[name](torch)
    assert str(o.dtype) == str(t.dtype) and o.shape == t.shape
    assert not o.requires_grad and o.is_leaf and o.device == ft.device("cpu")
    np.testing.assert_array_equal(o.numpy(), t.numpy())


FROM_NUMPY_ERRORS: dict[str, Case] = {
    "CRE-56_negative_stride": lambda m: m.from_numpy(np.arange(4)[::-1]),
    "CRE-57_list": lambda m: m.from_numpy([1, 2]),
    "CRE-58_str": lambda m: m.from_numpy(np.array(["a"])),
    "object": lambda m: m.from_numpy(np.array([1, None], dtype=object)),
    "longdouble": lambda m: m.from_numpy(np.array([1.], dtype=np.longdouble)),
}


@pytest.mark.parametrize("name", list(FROM_NUMPY_ERRORS))
def test_CRE_56_from_numpy_errors(name: str) -> None:
    assert_raises_like(FROM_NUMPY_ERRORS[name])


FROM_NUMPY_LAYOUTS: dict[str, Callable[[], np.ndarray]] = {
    "CRE-60_transposed": lambda: np.ones((2, 3)).T,
    "strided": lambda: np.arange(6.)[::2],
    "strided_2d": lambda: np.arange(24.).reshape(4, 6)[::2, ::3],
    "offset_slice": lambda: np.arange(24.).reshape(4, 6)[1:, 2:],
    "size1_transposed": lambda: np.ones((3, 1)).T,
    "empty": lambda: np.ones((2, 0, 3)),
    "permuted_3d_int": lambda: np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1),
    "strided_permuted": lambda: np.arange(24.).reshape(2, 3, 4)[:, ::2].transpose(1, 2, 0),
}


@pytest.mark.parametrize("name", list(FROM_NUMPY_LAYOUTS))
def test_CRE_60_from_numpy_keeps_numpy_strides(name: str) -> None:
    """CRE-60: element strides of the NumPy layout are kept (``from_numpy(arr.T).stride() == (1, 3)``); the
    tensor's ``.numpy()`` has the same layout, and in-place writes / contiguous copies give torch's values."""
    make = FROM_NUMPY_LAYOUTS[name]
    o, t = ft.from_numpy(make()), torch.from_numpy(make())
    assert o.stride() == t.stride() and o.storage_offset() == t.storage_offset() == 0
    np.testing.assert_array_equal(o.numpy(), t.numpy())
    assert o.numpy().strides == t.numpy().strides
    assert o.clone().stride() == t.clone().stride()
    o.mul_(2).add_(1)
    t.mul_(2).add_(1)
    np.testing.assert_array_equal(o.numpy(), t.numpy())
    np.testing.assert_array_equal(o.contiguous().numpy(), t.contiguous().numpy())


def test_CRE_59_read_only_array_warns() -> None:
    """CRE-59: a non-writable array is accepted with PyTorch's UserWarning (torch warns once per process,
    so its side is checked for the value only)."""
    for m in (torch, ft):
        a = np.ones(2)
        a.setflags(write=False)
        t, msgs = _run(lambda mm: mm.from_numpy(a), m)
        assert t.tolist() == [1., 1.] and str(t.dtype) == "torch.float64"
    assert any(s.startswith("The given NumPy array is not writable, and PyTorch does not support non-writable "
                            "tensors.") for s in msgs), msgs


def test_CRE_52_deviation_from_numpy_is_a_copy() -> None:
    """Deviation (documented): later writes to the NumPy array are NOT seen by the tensor (torch: seen)."""
    a = np.array([1., 2., 3.])
    t = ft.from_numpy(a)
    a[0] = 100.
    assert t.tolist() == [1., 2., 3.]
    t.add_(1)
    assert a.tolist() == [100., 2., 3.]  # and tensor writes do not reach the array (CRE-53 deviation)
    ta = torch.from_numpy(a)  # what PyTorch does
    a[1] = -1.
    assert ta.tolist() == [100., -1., 3.]


def test_CRE_61_tensor_and_as_tensor_copy_numpy() -> None:
    """CRE-61: ``tensor(arr)`` copies in both; ``as_tensor(arr)`` shares in torch, copies here (deviation)."""
    a = np.array([1., 2.])
    t, at = ft.tensor(a), ft.as_tensor(a)
    a[0] = 9.
    assert t.tolist() == [1., 2.] and at.tolist() == [1., 2.] and at.dtype is ft.float64


# ---- .numpy() (CRE-62, CONV-12..23) ------------------------------------------------------------------------
NUMPY_CASES: dict[str, Case] = {
    "CONV-12_f32": lambda m: m.tensor([1., 2.]).numpy(),
    "CONV-15_force": lambda m: m.ones(1, requires_grad=True).numpy(force=True),
    "CONV-17_detach_cpu": lambda m: m.tensor([1., 2.], requires_grad=True).detach().cpu().numpy(),
    "CONV-21_f16": lambda m: m.ones(2, dtype=m.float16).numpy(),
    "CONV-21_bool": lambda m: m.tensor([True, False]).numpy(),
    "CONV-21_0d": lambda m: m.tensor(3.).numpy(),
    "i64": lambda m: m.arange(3).numpy(),
    "c64": lambda m: m.tensor([1 + 2j]).numpy(),
    "u8": lambda m: m.tensor([1, 2], dtype=m.uint8).numpy(),
    "transposed": lambda m: m.arange(6.).view(2, 3).t().numpy(),
    "np_asarray": lambda m: np.asarray(m.tensor([1., 2.])),
    "np_asarray_dtype": lambda m: np.asarray(m.tensor([1., 2.]), dtype=np.float64),
    "np_array_int": lambda m: np.array(m.tensor([[1, 2]], dtype=m.int32)),
}


@pytest.mark.parametrize("name", list(NUMPY_CASES))
def test_CONV_12_numpy(name: str) -> None:
    """CONV-12..21: dtype, shape and values of ``.numpy()`` / ``np.asarray(t)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch's __array__ lacks ``copy=``
        o, t = NUMPY_CASES[name](ft), NUMPY_CASES[name](torch)
    assert isinstance(o, np.ndarray) and o.dtype == t.dtype and o.shape == t.shape
    np.testing.assert_array_equal(o, t)


def test_CONV_22_numpy_of_transposed_keeps_strides() -> None:
    """CONV-22: ``ones(2,3).t().numpy().strides == (4, 12)`` (exported without a copy)."""
    assert ft.ones(2, 3).t().numpy().strides == torch.ones(2, 3).t().numpy().strides == (4, 12)


def test_CRE_62_deviation_numpy_is_read_only() -> None:
    """Deviation (documented): ``.numpy()`` is read-only here (torch: a writable alias, CRE-62)."""
    t = ft.ones(3)
    n = t.numpy()
    assert n.dtype == np.float32 and not n.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        n[0] = 5.
    assert torch.ones(3).numpy().flags.writeable


NUMPY_ERRORS: dict[str, Case] = {
    "CONV-13_leaf_requires_grad": lambda m: m.ones(1, requires_grad=True).numpy(),
    "CONV-14_nonleaf": lambda m: (m.ones(1, requires_grad=True) * 2).numpy(),
    "CONV-18_np_array_requires_grad": lambda m: np.array(m.ones(1, requires_grad=True)),
    "CONV-19_bf16": lambda m: m.ones(1, dtype=m.bfloat16).numpy(),
    "CONV-19_np_array_bf16": lambda m: np.array(m.ones(1, dtype=m.bfloat16)),
    "CONV-20_float8": lambda m: m.ones(1, dtype=m.float8_e4m3fn).numpy(),
    "CONV-20_float8_e5m2": lambda m: m.ones(1, dtype=m.float8_e5m2).numpy(),
    "bf16_force": lambda m: m.ones(1, dtype=m.bfloat16).numpy(force=True),
    "float8_force": lambda m: m.ones(1, dtype=m.float8_e4m3fn).numpy(force=True),
    "bf16_requires_grad": lambda m: m.ones(1, dtype=m.bfloat16, requires_grad=True).numpy(),
}


@pytest.mark.parametrize("name", list(NUMPY_ERRORS))
def test_CONV_13_numpy_errors(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert_raises_like(NUMPY_ERRORS[name])


def test_CONV_16_numpy_under_no_grad() -> None:
    """CONV-16: ``.numpy()`` of a requires-grad leaf works inside ``no_grad``."""
    for m in (torch, ft):
        w = m.ones(2, requires_grad=True)
        with m.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            assert w.numpy().tolist() == [1., 1.]
            assert np.asarray(w).tolist() == [1., 1.]


# ---- item / tolist / Python number protocols (CONV-01..11, 24..29) -------------------------------------------
PY_CASES: dict[str, Case] = {
    "CONV-01_item": lambda m: m.tensor(2.5).item(),
    "CONV-02_item_int": lambda m: m.tensor([7]).item(),
    "CONV-02_item_2d": lambda m: m.tensor([[7.]]).item(),
    "CONV-02_item_bool": lambda m: m.tensor(True).item(),
    "CONV-03_item_f32": lambda m: m.tensor(0.1).item(),
    "CONV-03_item_f16": lambda m: m.tensor(0.1, dtype=m.float16).item(),
    "CONV-03_item_bf16": lambda m: m.tensor(0.1, dtype=m.bfloat16).item(),
    "item_f64": lambda m: m.tensor(0.1, dtype=m.float64).item(),
    "item_c64": lambda m: m.tensor(1 + 2j).item(),
    "item_u8": lambda m: m.tensor(200, dtype=m.uint8).item(),
    "item_i8": lambda m: m.tensor(-5, dtype=m.int8).item(),
    "item_nan": lambda m: m.tensor(float("nan")).item(),
    "item_view": lambda m: m.arange(6.).view(2, 3).t().select(0, 2).select(0, 1).item(),
    "CONV-06_item_requires_grad": lambda m: m.tensor(3., requires_grad=True).item(),
    "CONV-11_tolist_2d": lambda m: m.tensor([[1., 2.], [3., 4.]]).tolist(),
    "CONV-11_tolist_0d": lambda m: m.tensor(3.).tolist(),
    "CONV-11_tolist_int": lambda m: m.tensor([1, 2]).tolist(),
    "CONV-11_tolist_bool": lambda m: m.tensor([True]).tolist(),
    "CONV-11_tolist_f32": lambda m: m.tensor([0.1]).tolist(),
    "CONV-11_tolist_bf16": lambda m: m.tensor([0.1], dtype=m.bfloat16).tolist(),
    "tolist_f16": lambda m: m.tensor([0.1], dtype=m.float16).tolist(),
    "CONV-11_tolist_requires_grad": lambda m: m.tensor([1.], requires_grad=True).tolist(),
    "tolist_c64": lambda m: m.tensor([1 + 2j]).tolist(),
    "tolist_empty": lambda m: m.zeros(2, 0).tolist(),
    "tolist_transposed": lambda m: m.arange(6).view(2, 3).t().tolist(),
    "CONV-08_float_1elem": lambda m: float(m.tensor([2.5])),
    "CONV-08_int": lambda m: int(m.tensor(2.7)),
    "int_negative_truncates": lambda m: int(m.tensor(-2.7)),
    "int_of_bool": lambda m: int(m.tensor(True)),
    "float_of_int": lambda m: float(m.tensor(3)),
    "float_bf16": lambda m: float(m.tensor(0.1, dtype=m.bfloat16)),
    "complex_of_complex": lambda m: complex(m.tensor(1 + 2j)),
    "complex_of_float": lambda m: complex(m.tensor(2.)),
    "float_of_real_complex": lambda m: float(m.tensor(2 + 0j)),
    "int_of_real_complex": lambda m: int(m.tensor(-2.5 + 0j)),
    "bool_zero": lambda m: bool(m.tensor([0.])),
    "bool_nan": lambda m: bool(m.tensor(float("nan"))),
    "bool_requires_grad": lambda m: bool(m.tensor(1., requires_grad=True)),
    "CONV-24_format_0d": lambda m: f"{m.tensor(2.5):.2f}",
    "format_int_0d": lambda m: f"{m.tensor(3):>4}",
    "format_no_spec_1d": lambda m: f"{m.tensor([2.5])}",
    "CONV-26_index_list": lambda m: [10, 20, 30][m.tensor(1)],
    "CONV-26_range": lambda m: list(range(m.tensor(3))),
    "index_1elem_1d": lambda m: [10, 20][m.tensor([1])],
    "index_bool": lambda m: [10, 20][m.tensor(True)],
    "hex": lambda m: hex(m.tensor(255)),
    "math_floor": lambda m: math.floor(m.tensor(2.5)),
    "np_float64_of": lambda m: float(np.float64(m.tensor(2.5))),
    "len": lambda m: len(m.zeros(4, 2)),
    "CONV-28_iter_1d": lambda m: [repr(x) for x in m.tensor([1., 2.])],
    "CONV-28_iter_2d": lambda m: [list(x.shape) for x in m.zeros(2, 3)],
}


@pytest.mark.parametrize("name", list(PY_CASES))
def test_CONV_python_values(name: str) -> None:
    """CONV-01..11, 24..29: same Python type and value (exact widened values for f16/bf16)."""
    (o, ow), (t, tw) = _run(PY_CASES[name], ft), _run(PY_CASES[name], torch)
    assert_same_python(o, t)
    assert not ow and not tw, (ow, tw)


PY_ERRORS: dict[str, Case] = {
    "CONV-04_item_2": lambda m: m.tensor([1., 2.]).item(),
    "CONV-05_item_empty": lambda m: m.tensor([]).item(),
    "CONV-09_float_2": lambda m: float(m.tensor([1., 2.])),
    "int_2": lambda m: int(m.tensor([1, 2])),
    "float_of_complex": lambda m: float(m.tensor(1 + 2j)),
    "int_of_complex": lambda m: int(m.tensor(1 + 2j)),
    "int_of_complex_too_large": lambda m: int(m.tensor(1e30 + 0j)),
    "float_of_complex_nan_imag": lambda m: float(m.tensor(complex(1., float("nan")))),
    "CONV-10_bool_2": lambda m: bool(m.tensor([1., 2.])),
    "bool_empty": lambda m: bool(m.tensor([])),
    "CONV-25_format_1d_spec": lambda m: f"{m.tensor([2.5]):.2f}",
    "CONV-27_index_float": lambda m: [10, 20][m.tensor(1.)],
    "index_2elem": lambda m: [10, 20][m.tensor([1, 0])],
    "CONV-29_iter_0d": lambda m: list(m.tensor(1.)),
    "CRE-72_len_0d": lambda m: len(m.tensor(1.)),
    "round_ndigits": lambda m: round(m.tensor(2.567), 2),
}


@pytest.mark.parametrize("name", list(PY_ERRORS))
def test_CONV_python_errors(name: str) -> None:
    assert_raises_like(PY_ERRORS[name])


def test_CONV_07_float_of_requires_grad_warns() -> None:
    """CONV-07: ``float(t)`` on a tensor requiring grad warns; ``int(t)`` and ``.item()`` (CONV-06) do not.
    PyTorch warns once per process (so only the values are compared on its side), and so does the facade."""
    prefix = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
              "Consider using tensor.detach() first.")
    from functorch_lite import _warn
    _warn.WARNED.discard("scalar of a tensor requiring grad")
    r, msgs = _run(lambda m: float(m.tensor(2., requires_grad=True)), ft)
    assert r == 2.0 and len(msgs) == 1 and msgs[0].startswith(prefix)
    r, msgs = _run(lambda m: float(m.tensor(3., requires_grad=True)), ft)
    assert r == 3.0 and not msgs  # (TORCH_WARN_ONCE: once per process, as torch)
    for conv in (int, lambda t: t.item()):
        r, msgs = _run(lambda m: conv(m.tensor(2., requires_grad=True)), ft)
        assert r == conv(torch.tensor(2., requires_grad=True)) and not msgs, msgs


def test_CONV_28_iteration_yields_views() -> None:
    """CONV-28: iterating yields 0-d tensors (views of the source)."""
    for m in (torch, ft):
        x = m.tensor([1., 2.])
        items = list(x)
        assert all(isinstance(i, m.Tensor) and i.shape == () for i in items)
        items[0].add_(10.)
        assert x.tolist() == [11., 2.]
