"""Parity with PyTorch 2.13 of: ``torch.tensor`` on sequences holding tensors and NumPy arrays; a tensor meeting
a NumPy array or scalar in an operator; ``torch.Size``'s item checks; ``cat``/``stack``'s tensor-list errors;
``fill_`` with a tensor value; ``torch.__version__`` / ``torch.version`` / ``torch.torch_version``.

Each case is a function ``f(m)`` run with ``m = torch`` and ``m = functorch_lite``: result types, dtypes, shapes and
values, or exception types and messages, must agree.
"""
from __future__ import annotations

import operator
import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite import _warn

Case = Callable[[Any], Any]


def _outcome(case: Case, m) -> tuple:
    """What ``case(m)`` gives, comparable across the two libraries: a tensor as (dtype, shape, values); an
    exception as (type name, message); anything else as (type name, value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = case(m)
        except Exception as e:  # noqa: BLE001  (the exception is the outcome compared)
            return ("raises", type(e).__name__, str(e).split("\n")[0])
    return _value(r, m)


def _value(r, m) -> tuple:
    if isinstance(r, m.Tensor):
        return ("Tensor", str(r.dtype), tuple(r.shape), r.detach().tolist())
    if isinstance(r, tuple):
        return ("tuple",) + tuple(_value(x, m) for x in r)
    return (type(r).__name__, r)


def _check(case: Case) -> None:
    theirs, ours = _outcome(case, torch), _outcome(case, ft)
    assert ours == theirs


# ---- torch.tensor / as_tensor of sequences holding tensors or arrays -----------------------------------------
def T(m, *a, **k):
    return m.tensor(*a, **k)


NESTED: dict[str, Case] = {
    "one_elem_1d_tensors": lambda m: T(m, [T(m, [1.]), T(m, [2.])]),
    "mixed_nested": lambda m: T(m, [[T(m, 1.), 2.], [3, T(m, [4])]]),
    "multi_elem_tensors": lambda m: T(m, [T(m, [1., 2.]), T(m, [3., 4.])]),
    "one_multi_elem_tensor": lambda m: T(m, [T(m, [1., 2.])]),
    "empty_tensor": lambda m: T(m, [T(m, [])]),
    "f64_0d_and_float": lambda m: T(m, [T(m, 1., dtype=m.float64), 2.]),
    "f64_0d_and_int": lambda m: T(m, [T(m, 1., dtype=m.float64), 2]),
    "f64_precision_kept": lambda m: T(m, [T(m, 0.1, dtype=m.float64), 0.2]),
    "int_0d_and_float": lambda m: T(m, [T(m, 1), 2.5]),
    "int32_0d_and_int": lambda m: T(m, [T(m, 1, dtype=m.int32), 2]),
    "int32_0d_alone": lambda m: T(m, [T(m, 1, dtype=m.int32)]),
    "bool_0d_and_int": lambda m: T(m, [T(m, True), 2]),
    "bool_0d_alone": lambda m: T(m, [T(m, True), T(m, False)]),
    "bool_0d_and_float": lambda m: T(m, [T(m, True), 2.5]),
    "f16_and_float": lambda m: T(m, [T(m, 1., dtype=m.float16), 2.5]),
    "bf16_and_float": lambda m: T(m, [T(m, 1., dtype=m.bfloat16), 2.3]),
    "uint8_and_big_int": lambda m: T(m, [T(m, 1, dtype=m.uint8), 300]),
    "complex_and_float": lambda m: T(m, [T(m, 1 + 2j), 2.]),
    "2_levels_of_0d": lambda m: T(m, [[T(m, 1), T(m, 2)], [T(m, 3), T(m, 4)]]),
    "tuple_of_0d": lambda m: T(m, (T(m, 1.), T(m, 2.))),
    "explicit_int_from_float_tensor": lambda m: T(m, [T(m, 1.5)], dtype=m.int64),
    "explicit_int_from_1elem_float": lambda m: T(m, [T(m, [1.5])], dtype=m.int64),
    "explicit_bool_from_float": lambda m: T(m, [T(m, 1.5)], dtype=m.bool),
    "explicit_f32_from_int": lambda m: T(m, [T(m, 3), 1], dtype=m.float32),
    "explicit_f32_from_f64": lambda m: T(m, [T(m, 0.1, dtype=m.float64)], dtype=m.float32),
    "explicit_int32_overflow": lambda m: T(m, [T(m, 2 ** 40), 1], dtype=m.int32),
    "nan_into_int": lambda m: T(m, [T(m, float("nan"))], dtype=m.int64),
    # the shape is read along the first elements: deeper down a tensor is a sequence
    "tensor_after_list": lambda m: T(m, [[2.], T(m, [1.])]),
    "tensor_after_list_2": lambda m: T(m, [[2., 3.], T(m, [1., 2.])]),
    "float_tensor_row_int_list": lambda m: T(m, [[1, 2], T(m, [1., 2.])]),
    "bool_tensor_row": lambda m: T(m, [[1, 2], T(m, [True, False])]),
    "f32_tensor_row_in_f64": lambda m: T(m, [[0.1], T(m, [0.1])], dtype=m.float64),
    "empty_tensor_row": lambda m: T(m, [[], T(m, [])]),
    "list_after_tensor": lambda m: T(m, [T(m, 1.), [2.]]),
    "list_after_int_tensor": lambda m: T(m, [T(m, 1), [2]]),
    "tuple_after_bool_tensor": lambda m: T(m, [T(m, True), (2,)]),
    "0d_tensor_as_row": lambda m: T(m, [[1.], T(m, 2.)]),
    "row_too_long": lambda m: T(m, [[1., 2.], T(m, [1., 2., 3.])]),
    "row_too_deep": lambda m: T(m, [[1., 2.], T(m, [[1., 2.], [3., 4.]])]),
    # NumPy arrays in a list are sequences
    "ndarrays": lambda m: T(m, [np.array([1., 2.]), np.array([3., 4.])]),
    "0d_ndarrays": lambda m: T(m, [np.array(1.), np.array(2.)]),
    "1elem_ndarrays": lambda m: T(m, [np.array([1.]), np.array([2.])]),
    "int_ndarray_and_float_list": lambda m: T(m, [np.array([1, 2]), [3.5, 4]]),
    "ndarray_as_scalar": lambda m: T(m, [1., np.array([2.])]),
    # the other constructors that read data the same way
    "as_tensor": lambda m: m.as_tensor([T(m, [1.]), T(m, [2.])]),
    "as_tensor_multi_elem": lambda m: m.as_tensor([T(m, [1., 2.]), T(m, [3., 4.])]),
    "legacy_Tensor": lambda m: m.Tensor([T(m, [1.]), T(m, [2.])]),
}


@pytest.mark.parametrize("name", list(NESTED))
def test_tensor_of_nested_tensors(name):
    _check(NESTED[name])


def test_list_of_ndarrays_warns_once():
    """PyTorch's TORCH_WARN_ONCE about a list of ndarrays (its first time in a process)."""
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.tensor([np.array([1.]), np.array([2.])])
    msg = "Creating a tensor from a list of numpy.ndarrays is extremely slow"
    assert not theirs or msg in str(theirs[0].message)  # (torch warns only once per process)
    _warn.WARNED.discard(ft.ops.creation._NDARRAY_LIST)
    for expect in (True, False):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            ft.tensor([[1., np.array(2.)], np.array([3., 4.])])
        assert any(msg in str(w.message) for w in ours) is expect
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        ft.tensor([ft.tensor(1.), 2.])
    assert not ours


# ---- a tensor meeting NumPy arrays and scalars in operators ----------------------------------------------------
_OPS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "eq", "ne", "lt", "le", "gt", "ge",
        "and_", "or_", "xor"]
_OPERANDS: dict[str, Case] = {
    "f32": lambda m: m.tensor([1., 2.]),
    "i64": lambda m: m.tensor([1, 2]),
}


def _binop(op, t, a, reflected):
    f = getattr(operator, op)
    return lambda m: f(a(), t(m)) if reflected else f(t(m), a())


BINOPS: dict[str, Case] = {}
for _op in _OPS:
    for _tn, _t in _OPERANDS.items():
        for _refl in (False, True):
            BINOPS[f"{'ndarray_' + _op + '_' + _tn if _refl else _tn + '_' + _op + '_ndarray'}"] = \
                _binop(_op, _t, lambda: np.array([1, 2]), _refl)

BINOPS.update({
    "f32_mul_f32_ndarray": lambda m: m.tensor([1., 2.]) * np.array([1., 2.], dtype=np.float32),
    "f32_add_0d_ndarray": lambda m: m.tensor([1., 2.]) + np.array(2.0),
    "0d_ndarray_add_f32": lambda m: np.array(2.0) + m.tensor([1., 2.]),
    "0d_tensor_mul_ndarray": lambda m: m.tensor(2.) * np.array([1, 2]),
    "2d": lambda m: m.ones(2, 2) * np.ones((2, 2)),
    "bool_mul_ndarray": lambda m: m.tensor([True, False]) * np.array([1, 2]),
    "bool_and_ndarray": lambda m: m.tensor([True, False]) & np.array([True, True]),
    "int_mul_int32_ndarray": lambda m: m.tensor([1, 2]) * np.array([1, 2], dtype=np.int32),
    "f16_mul_f32_ndarray": lambda m: m.tensor([1., 2.], dtype=m.float16) * np.array([1., 2.], dtype=np.float32),
    "bf16_mul_ndarray": lambda m: m.tensor([1., 2.], dtype=m.bfloat16) * np.array([1., 2.]),
    "complex_mul_ndarray": lambda m: m.tensor([1., 2.], dtype=m.complex64) * np.array([1., 2.]),
    "requires_grad_mul_ndarray": lambda m: m.tensor([1., 2.], requires_grad=True) * np.array([1, 2]),
    "ndarray_div_requires_grad": lambda m: np.array([1, 2]) / m.tensor([1., 2.], requires_grad=True),
    "object_ndarray_mul": lambda m: m.tensor([1., 2.]) * np.array([1, 2], dtype=object),
    "object_ndarray_div_tensor": lambda m: np.array([1, 2], dtype=object) / m.tensor([1., 2.]),
    "str_ndarray_div_tensor": lambda m: np.array(["a", "b"]) / m.tensor([1., 2.]),
    "list_div_tensor": lambda m: [1, 2] / m.tensor([1., 2.]),
    # ``==`` alone takes the array as a tensor (PyTorch's comparison, dtype promotion, broadcasting)
    "eq_f64_ndarray_promotes": lambda m: m.tensor([1., 2.]) == np.array([1.0000000001, 2.]),
    "eq_int_tensor_float_ndarray": lambda m: m.tensor([1, 2]) == np.array([1., 2.5]),
    "eq_broadcast": lambda m: m.tensor([1., 2.]) == np.array([[1], [2]]),
    "eq_bad_shape": lambda m: m.tensor([1., 2.]) == np.array([1, 2, 3]),
    "eq_0d_ndarray": lambda m: m.tensor([1, 2], dtype=m.int8) == np.array(2),
    "eq_bool_ndarray": lambda m: m.tensor([1., 2.]) == np.array([True, False]),
    "eq_bf16_tensor": lambda m: m.tensor([1., 2.], dtype=m.bfloat16) == np.array([1., 2.], dtype=np.float32),
    "eq_requires_grad": lambda m: m.tensor([1., 2.], requires_grad=True) == np.array([1, 2]),
    "eq_object_ndarray": lambda m: m.tensor([1., 2.]) == np.array([1, 2], dtype=object),
    "eq_str_ndarray": lambda m: m.tensor([1., 2.]) == np.array(["a", "b"]),
    "eq_negative_strides": lambda m: m.tensor([1., 2.]) == np.array([2., 1.])[::-1],
    # NumPy scalars are Python scalars to a tensor, on either side
    "np_f64_mul_tensor": lambda m: np.float64(2.0) * m.tensor([1., 2.]),
    "tensor_mul_np_f64": lambda m: m.tensor([1., 2.]) * np.float64(2.0),
    "np_f32_mul_tensor": lambda m: np.float32(2.0) * m.tensor([1., 2.]),
    "np_i64_mul_int_tensor": lambda m: np.int64(2) * m.tensor([1, 2]),
    "np_i64_add_tensor": lambda m: np.int64(2) + m.tensor([1., 2.]),
    "np_bool_mul_tensor": lambda m: np.bool_(True) * m.tensor([1., 2.]),
    "np_f64_mul_bf16": lambda m: np.float64(2.) * m.tensor([1.], dtype=m.bfloat16),
    "np_f64_sub_tensor": lambda m: np.float64(2.) - m.tensor([1., 2.]),
    "np_f64_div_tensor": lambda m: np.float64(1.) / m.tensor([1., 2.]),
    "np_f64_pow_tensor": lambda m: np.float64(2.) ** m.tensor([1., 2.]),
    "np_f64_eq_tensor": lambda m: np.float64(1.) == m.tensor([1., 2.]),
    "np_f64_lt_tensor": lambda m: np.float64(1.) < m.tensor([1., 2.]),
    "np_f64_matmul_tensor": lambda m: np.float64(1.) @ m.tensor([1., 2.]),
    # NumPy's ufuncs on a tensor: wrapped back as a tensor (bool results as uint8)
    "np_sqrt": lambda m: np.sqrt(m.tensor([1., 4.])),
    "np_exp_int": lambda m: np.exp(m.tensor([1, 2])),
    "np_equal": lambda m: np.equal(m.tensor([1., 2.]), m.tensor([1., 3.])),
    "np_greater_ndarray": lambda m: np.greater(m.tensor([1., 2.]), np.array([0, 5])),
    "np_maximum_ndarray": lambda m: np.maximum(m.tensor([1., 2.]), np.array([0, 5])),
    "np_add_0d": lambda m: np.add(m.tensor(1.), 1.0),
    "np_divmod": lambda m: np.divmod(m.tensor([1., 2.]), 2),
    "np_multiply_reduce": lambda m: np.multiply.reduce(m.tensor([1., 2.])),
})


@pytest.mark.parametrize("name", list(BINOPS))
def test_operator_with_numpy(name):
    _check(BINOPS[name])


@pytest.mark.parametrize("op", ["add", "mul", "sub"])
def test_inplace_operator_with_ndarray_rebinds(op):
    """``t += ndarray``: the in-place form declines, so Python rebinds ``t`` to NumPy's result (a new tensor)."""
    def case(m):
        t = u = m.tensor([1., 2.])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (NumPy's DeprecationWarning about PyTorch's __array_wrap__)
            t = getattr(operator, "i" + op)(t, np.array([1, 2]))
        return (t is u,) + _value(t, m) + _value(u, m)
    assert case(ft) == case(torch)


# ---- torch.Size ----------------------------------------------------------------------------------------------
SIZES: dict[str, Case] = {
    "float": lambda m: m.Size([1.5]),
    "integral_float": lambda m: m.Size([2.0]),
    "second_float": lambda m: m.Size([1, 2.5]),
    "0d_int_tensor": lambda m: m.Size([m.tensor(3)]),
    "0d_float_tensor": lambda m: m.Size([m.tensor(3.)]),
    "1elem_int_tensor": lambda m: m.Size([m.tensor([3])]),
    "int32_tensor": lambda m: m.Size([m.tensor(3, dtype=m.int32)]),
    "bool_tensor": lambda m: m.Size([m.tensor(True)]),
    "tensor_iterated": lambda m: m.Size(m.tensor([1, 2])),
    "np_int64": lambda m: m.Size([np.int64(3)]),
    "np_uint8": lambda m: m.Size([np.uint8(3)]),
    "np_float64": lambda m: m.Size([np.float64(3.)]),
    "np_bool": lambda m: m.Size([np.bool_(True)]),
    "np_0d_int_array": lambda m: m.Size([np.array(3)]),
    "np_array_iterated": lambda m: m.Size(np.array([1, 2])),
    "bool": lambda m: m.Size([True]),
    "negative": lambda m: m.Size([-1]),
    "None": lambda m: m.Size([None]),
    "str": lambda m: m.Size(["a"]),
    "complex": lambda m: m.Size([1j]),
    "nested_list": lambda m: m.Size([[1]]),
    "generator": lambda m: m.Size(x for x in [1, 2]),
    "empty": lambda m: m.Size(),
    "not_iterable": lambda m: m.Size(5),
    "two_arguments": lambda m: m.Size([1], [2]),
    "add_float_tuple": lambda m: m.Size([2, 3]) + (1.5,),
    "radd_float_tuple": lambda m: (1.5,) + m.Size([2, 3]),
    "add_tuple": lambda m: m.Size([2, 3]) + (4,),
    "slice": lambda m: m.Size([2, 3])[1:],
    "repeat": lambda m: m.Size([2, 3]) * 2,
}


@pytest.mark.parametrize("name", list(SIZES))
def test_size_items(name):
    def case(m):
        s = SIZES[name](m)
        return type(s).__name__, repr(s), [type(d).__name__ for d in s]
    _check(case)


def test_shape_is_size_of_ints():
    for m in (torch, ft):
        s = m.ones(2, 3).shape
        assert type(s) is m.Size and s == (2, 3) and repr(s) == "torch.Size([2, 3])"
        assert type(m.ones(2, 3).size()) is m.Size


# ---- cat / stack and friends: the tensor-list argument ---------------------------------------------------------
LISTS: dict[str, Case] = {
    "stack_list": lambda m: m.stack([[1, 2]]),
    "stack_second_list": lambda m: m.stack([m.ones(2), [1, 2]]),
    "stack_tuple_item": lambda m: m.stack([m.ones(2), (1, 2)]),
    "stack_ndarray_item": lambda m: m.stack([np.ones(2)]),
    "stack_ints": lambda m: m.stack([1, 2]),
    "stack_None_item": lambda m: m.stack([m.ones(1), None]),
    "stack_np_scalar_item": lambda m: m.stack([m.ones(1), np.float64(1.)]),
    "stack_tensor": lambda m: m.stack(m.ones(2, 2)),
    "stack_int": lambda m: m.stack(5),
    "stack_generator": lambda m: m.stack(t for t in [m.ones(1)]),
    "stack_dim_keyword": lambda m: m.stack([[1, 2]], dim=0),
    "stack_empty": lambda m: m.stack([]),
    "cat_list": lambda m: m.cat([[1, 2]]),
    "cat_second_list": lambda m: m.cat([m.ones(2), [1, 2]]),
    "cat_int_item": lambda m: m.cat((m.ones(1), 3)),
    "cat_int": lambda m: m.cat(5),
    "cat_tensor": lambda m: m.cat(m.ones(2)),
    "cat_ndarray": lambda m: m.cat(np.ones((2, 2))),
    "cat_None": lambda m: m.cat(None),
    "cat_empty": lambda m: m.cat([]),
    "concat_list": lambda m: m.concat([[1, 2]]),
    "concatenate_list": lambda m: m.concatenate([[1, 2]]),
    "hstack_list": lambda m: m.hstack([[1, 2]]),
    "hstack_int": lambda m: m.hstack(5),
    "hstack_tensor": lambda m: m.hstack(m.ones(2)),
    "hstack_empty": lambda m: m.hstack([]),
    "vstack_list": lambda m: m.vstack([[1, 2]]),
    "vstack_int": lambda m: m.vstack(5),
    "vstack_empty": lambda m: m.vstack([]),
    "row_stack_list": lambda m: m.row_stack([[1, 2]]),
    "row_stack_int": lambda m: m.row_stack(5),
    "row_stack_empty": lambda m: m.row_stack([]),
    "dstack_list": lambda m: m.dstack([[1, 2]]),
    "dstack_int": lambda m: m.dstack(5),
    "dstack_empty": lambda m: m.dstack([]),
    "column_stack_list": lambda m: m.column_stack([[1, 2]]),
    "column_stack_int": lambda m: m.column_stack(5),
    "column_stack_empty": lambda m: m.column_stack([]),
    "stack_ok": lambda m: m.stack((m.ones(2), m.zeros(2)), 1),
    "cat_ok": lambda m: m.cat([m.ones(2), m.zeros(1)]),
    "hstack_ok": lambda m: m.hstack((m.ones(2), m.zeros(1))),
}


@pytest.mark.parametrize("name", list(LISTS))
def test_tensor_list_argument(name):
    _check(LISTS[name])


# ---- fill_ with a tensor value ---------------------------------------------------------------------------------
FILLS: dict[str, Case] = {
    "1d": lambda m: m.zeros(2).fill_(m.tensor([3., 4.])),
    "1elem_1d": lambda m: m.zeros(2).fill_(m.tensor([3.])),
    "2d": lambda m: m.zeros(2).fill_(m.ones(1, 1)),
    "function_1d": lambda m: m.fill(m.zeros(2), m.tensor([3., 4.])),
    "0d": lambda m: m.zeros(2).fill_(m.tensor(3.)),
    "0d_int_into_float": lambda m: m.zeros(2).fill_(m.tensor(3)),
}


@pytest.mark.parametrize("name", list(FILLS))
def test_fill_tensor_value(name):
    _check(FILLS[name])


# ---- torch.__version__, torch.version, torch.torch_version -----------------------------------------------------
def test_version_module():
    assert isinstance(ft.__version__, ft.torch_version.TorchVersion) and isinstance(ft.__version__, str)
    assert type(torch.__version__).__name__ == type(ft.__version__).__name__ == "TorchVersion"
    assert ft.__version__ == "2.13.0" and str(ft.__version__) == ft.version.__version__
    # the facade's value is PyTorch's without its build's local label ('+cpu')
    assert torch.__version__.split("+")[0] == ft.__version__
    assert type(ft.version.__version__) is type(torch.version.__version__) is str
    assert ft.version.__all__ == torch.version.__all__
    assert ft.torch_version.__all__ == torch.torch_version.__all__
    assert ft.version.hip is None and ft.version.rocm is None and ft.version.xpu is None
    assert ft.version.debug is False and isinstance(ft.version.git_version, str)
    assert ft.version.cuda is None or re.fullmatch(r"\d+\.\d+", ft.version.cuda)
    assert (ft.version.cuda is None) is (not ft.cuda.is_available())
    from pathlib import Path
    pyproject = (Path(ft.__file__).parent.parent / "pyproject.toml").read_text()
    assert re.search(r'^version = "(.*)"$', pyproject, re.M)[1] == ft.version.facade_version == "0.1.0"


_VERSION_OPERANDS = ["2.0", "2.9", "2.13", "2.13.0", "2.14", "3", "2.13.0a0", "2.13.0rc1", "2.13.0.post1",
                     "2.13.0.dev20240101", "1!0.1", "parrot", (2, 0), (2, 13), (2, 14), (3,), [2], (2, "x"), None, 1]


@pytest.mark.parametrize("op", ["lt", "le", "eq", "ne", "ge", "gt"])
@pytest.mark.parametrize("other", _VERSION_OPERANDS, ids=repr)
def test_version_comparisons(op, other):
    """Comparisons as PyTorch's, both ways round (on the same value: PyTorch's own is '2.13.0+cpu')."""
    def case(m):
        v = m.torch_version.TorchVersion("2.13.0")
        return getattr(operator, op)(v, other)
    _check(case)
    _check(lambda m: getattr(operator, op)(other, m.torch_version.TorchVersion("2.13.0")))


@pytest.mark.parametrize("a,b", [("1.10.0a", "1.2.1"), ("1.10.0a", (1, 2)), ("2.1.0.dev0", "2.1.0a0"),
                                 ("2.1.0+cu118", "2.1.0"), ("2.1.0+cu118", "2.1.0+CU118"), ("1!0.1", "2.0"),
                                 ("2.0.post1", "2.0"), ("2.0.post1.dev1", "2.0.post1"), ("2.0rc1", "2.0b9"),
                                 ("parrot", "2.0"), ("2.0.0.0", "2"), ("1.0+1", "1.0+abc"), ("1.0-1", "1.0.post1"),
                                 ("v1.0", "1.0"), ("1.0.dev", "1.0.dev0"), ("1.0a", "1.0alpha0"), ("1.0c1", "1.0rc1")])
@pytest.mark.parametrize("op", ["lt", "eq", "gt"])
def test_torch_version_order(a, b, op):
    _check(lambda m: getattr(operator, op)(m.torch_version.TorchVersion(a), b))


def test_version_gates_in_scripts():
    """How scripts read the version: as a str, split into ints, hashed, compared with packaging's Version."""
    from packaging.version import Version, parse
    for m in (torch, ft):
        v = m.__version__
        assert tuple(map(int, v.split(".")[:2])) == (2, 13)
        assert v >= "2.0" and v >= (2, 1) and v < (3,) and not v < "2"
        assert parse(v) >= Version("2.0")
        assert hash(v) == hash(str(v)) and {str(v): 1}[v] == 1
        assert type(v + "x") is str and type(v.split(".")[0]) is str
    for case in (lambda m: m.__version__ >= Version("2.0"), lambda m: m.__version__ == Version("2.13.0"),
                 lambda m: m.__version__ > None):
        _check(case)
