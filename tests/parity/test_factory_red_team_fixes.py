"""Parity with PyTorch 2.13 for the factory differences a red team found (2026-12-07): torch.range / arange with an
integer dtype (bounds converted to int64 first) and their argument and range errors; from_numpy / frombuffer on
the CPU under a default device; the default generator's non-deterministic seed; Generator.clone_state and its
offset / graphsafe methods; is_storage; tensor() of a bytearray, of ``[[], [1]]``, of NumPy bools; the argument
errors of randint, full, can_cast, promote_types, is_floating_point, numel, tril_indices; tensor()'s warnings.

Every case runs the same code under real torch and functorch_lite and compares results, or exception types and
messages (``_parity.same``), or the warnings given."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same, warnings_of

pytestmark = pytest.mark.filterwarnings("ignore:torch.range is deprecated:UserWarning",
                                        "ignore:Casting complex values:UserWarning")
INT_DTYPES = ("int64", "int32", "int16", "uint8")

RANGES = {
    **{f"range_{a}_{b}_{c}_{d}": (lambda a, b, c, d: lambda t: t.range(a, b, c, dtype=getattr(t, d)))(a, b, c, d)
       for (a, b, c) in ((0, 5.5, 1.5), (1, 10, 2.5), (-2.5, 2.5, 1.5), (0.5, 4.7, 1.5), (0.5, -2, -1))
       for d in INT_DTYPES},
    **{f"arange_{a}_{b}_{c}_{d}": (lambda a, b, c, d: lambda t: t.arange(a, b, c, dtype=getattr(t, d)))(a, b, c, d)
       for (a, b, c) in ((0, 5.5, 1.5), (1, 10, 2.5), (-2.5, 2.5, 1.5), (0.5, 4.7, 1.5), (-0.5, 0.7, 1),
                         (0.7, -0.5, -1), (0, 5, 0.5))
       for d in INT_DTYPES},
    "range_float": lambda t: t.range(0, 1, 0.25),
    "range_down": lambda t: t.range(5, 0, -1),
    "range_0d_tensors": lambda t: t.range(t.tensor(1), t.tensor(3.5)),
    "range_inconsistent": lambda t: t.range(5, 0),
    "range_inconsistent_truncated": lambda t: t.range(0.5, 0.2, 1, dtype=t.int64),
    "range_inf": lambda t: t.range(0, float("inf")),
    "range_nan": lambda t: t.range(0, float("nan")),
    "range_inf_int": lambda t: t.range(0, float("inf"), dtype=t.int64),
    "range_overflow_int": lambda t: t.range(0, 1e20, 1e19, dtype=t.int32),
    "range_zero_step": lambda t: t.range(0, 5, 0),
    "range_complex": lambda t: t.range(1 + 1j, 3),
    "range_one_arg": lambda t: t.range(5),
    "range_tensor_start": lambda t: t.range(t.tensor([5]), 6),
    "range_tensor_end": lambda t: t.range(0, t.tensor([5])),
    "arange_inf": lambda t: t.arange(float("inf")),
    "arange_nan": lambda t: t.arange(0, float("nan")),
    "arange_inf_int": lambda t: t.arange(0, float("inf"), dtype=t.int32),
    "arange_overflow_int": lambda t: t.arange(0, 1e20, 1e19, dtype=t.int64),
    "arange_overflow_int32": lambda t: t.arange(0, 1e20, 1e19, dtype=t.int32),
    "arange_overflow_half": lambda t: t.arange(0, 1e300, 1e299, dtype=t.float16),
    "arange_size_overflow": lambda t: t.arange(0.5, 1e300, dtype=t.float16),
    "arange_complex": lambda t: t.arange(1 + 1j),
    "arange_complex_real": lambda t: t.arange(3 + 0j),
    "arange_0d_tensor": lambda t: t.arange(t.tensor(5)),
    "arange_1d_tensor": lambda t: t.arange(t.tensor([5])),
    "arange_1d_tensor_end": lambda t: t.arange(0, t.tensor([5])),
    "arange_1d_tensor_step": lambda t: t.arange(0, 5, t.tensor([1])),
    "arange_kw_end_tensor": lambda t: t.arange(end=t.tensor([5])),
    "arange_none": lambda t: t.arange(None),
    "arange_inconsistent": lambda t: t.arange(5, 0, 1),
    "arange_inconsistent_truncated": lambda t: t.arange(0.5, 0.2, 1, dtype=t.int64),
    "arange_zero_step": lambda t: t.arange(0, 5, 0),
    "arange_int8": lambda t: t.arange(0, 2.5, dtype=t.int8),
    "arange_float": lambda t: t.arange(0, 1, 0.25),
}


@pytest.mark.parametrize("case", sorted(RANGES))
def test_range_arange(case):
    """range / arange: the bounds converted to the dtype's accumulate type (an integer dtype: int64, truncated),
    checked in double, with PyTorch's errors."""
    same(RANGES[case])


ERRORS = {
    "randint_float_high": lambda t: t.randint(3.5, (2,)),
    "randint_bool_high": lambda t: t.randint(True, (2,)),
    "randint_float_tensor_high": lambda t: t.randint(t.tensor(3.0), (2,)),
    "randint_int_tensor_high": lambda t: t.randint(t.tensor(3), (2,)).shape,
    "randint_kw_float_high": lambda t: t.randint(high=3.5, size=(2,)),
    "randint_float_low_high": lambda t: t.randint(0.5, 3.5, (2,)),
    "randint_float_high_gen": lambda t: t.randint(0, 3.5, (2,), generator=t.Generator()),
    "randint_float_low_dtype": lambda t: t.randint(0.5, 3, (2,), dtype=t.float32),
    "full_grad_tensor": lambda t: t.full((2,), t.tensor(1.5, requires_grad=True)),
    "full_1d_tensor": lambda t: t.full((2,), t.tensor([1., 2.])),
    "full_0d_tensor": lambda t: t.full((2,), t.tensor(1.5)),
    "full_0d_int_tensor": lambda t: t.full((2,), t.tensor(2)),
    "full_none": lambda t: t.full((2,), None),
    "full_str": lambda t: t.full((2,), "a"),
    "full_ndarray": lambda t: t.full((2,), np.array(1.5)),
    "full_below_int64": lambda t: t.full((2,), -2 ** 63 - 1),
    "full_past_uint64": lambda t: t.full((2,), 2 ** 64),
    "full_past_int64": lambda t: t.full((2,), 2 ** 63),
    "full_below_int64_float": lambda t: t.full((2,), -2 ** 63 - 1, dtype=t.float32),
    "can_cast_int": lambda t: t.can_cast(1, t.float32),
    "can_cast_str": lambda t: t.can_cast(t.float32, "float"),
    "promote_types_str": lambda t: t.promote_types(t.float32, "float"),
    "promote_types_int": lambda t: t.promote_types(1, t.float32),
    "is_floating_point_float": lambda t: t.is_floating_point(1.0),
    "numel_list": lambda t: t.numel([1, 2]),
    "numel_none": lambda t: t.numel(None),
    "from_numpy_scalar": lambda t: t.from_numpy(np.float32(3)),
    "from_numpy_list": lambda t: t.from_numpy([1]),
    "tril_indices_no_col": lambda t: t.tril_indices(3),
    "triu_indices_no_col": lambda t: t.triu_indices(3),
    "tril_indices_none": lambda t: t.tril_indices(),
    "tensor_np_bool_int": lambda t: t.tensor([np.bool_(True), 2]),
    "tensor_int_np_bool": lambda t: t.tensor([[2], [np.bool_(True)]]),
    "tensor_np_bool_float": lambda t: t.tensor([np.bool_(True), 2.5]),
    "tensor_np_bool_bool": lambda t: t.tensor([np.bool_(True), True]),
    "tensor_np_bool_float_dtype": lambda t: t.tensor([np.bool_(True), 2], dtype=t.float32),
    "tensor_scalar_then_list": lambda t: t.tensor([1, [2]]),
    "tensor_scalar_then_list_float": lambda t: t.tensor([1.5, [2]]),
    "tensor_bytearray": lambda t: t.tensor(bytearray(b"ab")),
    "tensor_bytearray_float": lambda t: t.tensor(bytearray(b"ab"), dtype=t.float32),
    "tensor_bytes": lambda t: t.tensor(b"ab"),
    "tensor_empty_then_int": lambda t: t.tensor([[], [1]]),
    "tensor_empty_then_two": lambda t: t.tensor([[], [1, 2]]),
    "tensor_empty_then_scalar": lambda t: t.tensor([[], 1]),
    "tensor_empty_deep": lambda t: t.tensor([[[]], [[1]]]),
    "tensor_int_then_empty": lambda t: t.tensor([[1], []]),
    "generator_meta": lambda t: t.Generator(device="meta"),
    "is_storage": lambda t: [t.is_storage(x) for x in (t.ones(2).untyped_storage(), t.ones(2), 3, [1])],
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_argument_errors_and_tensor_data(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(ERRORS[case])


def test_is_storage_typed():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (TypedStorage's deprecation)
        assert ft.is_storage(ft.ones(2).storage()) and torch.is_storage(torch.ones(2).storage())


def test_bfloat16_default_complex():
    """A Python complex's dtype from a bfloat16 default: PyTorch has no complex bfloat16 (an explicit dtype, a NumPy
    complex and ``full`` are unaffected)."""
    cases = [lambda t: t.tensor([1j]), lambda t: t.tensor(1j), lambda t: t.tensor([1j], dtype=t.complex64),
             lambda t: t.tensor(np.complex64(1j)), lambda t: t.full((1,), 1j), lambda t: t.tensor([1.5])]
    for case in cases:
        for lib in (torch, ft):
            lib.set_default_dtype(lib.bfloat16)
        try:
            same(case)
        finally:
            for lib in (torch, ft):
                lib.set_default_dtype(lib.float32)


def test_from_numpy_frombuffer_on_cpu_under_default_device():
    """from_numpy / frombuffer make CPU tensors whatever the default device; tensor / as_tensor / asarray of an
    array follow it."""
    def devices(t):
        t.set_default_device("meta")
        try:
            a = np.zeros(2)
            return [str(x.device) for x in (t.from_numpy(a), t.frombuffer(bytearray(4), dtype=t.uint8),
                                            t.as_tensor(a), t.tensor(a), t.asarray(a),
                                            t.as_tensor(a, dtype=t.float32))]
        finally:
            # (None, not "cpu": torch keeps a device mode active for "cpu", which changes later tests)
            t.set_default_device(None)
    assert devices(ft) == devices(torch) == ["cpu", "cpu", "meta", "meta", "meta", "meta"]


def test_generator_methods():
    """clone_state: a separate generator in the same state; a CPU generator has no offset and no graph-safe
    state (PyTorch's errors)."""
    for case in (lambda t: t.Generator().get_offset(), lambda t: t.Generator().set_offset(3),
                 lambda t: t.Generator().graphsafe_get_state(),
                 lambda t: t.Generator().graphsafe_set_state(t.Generator())):
        same(case)

    def clone(t):
        g = t.Generator().manual_seed(3)
        t.rand(2, generator=g)
        c = g.clone_state()
        return c is not g, c.initial_seed(), t.equal(t.rand(4, generator=g), t.rand(4, generator=c))
    assert clone(ft) == clone(torch) == (True, 3, True)


def test_default_generator_seed_is_nondeterministic():
    """Each process starts its default generator at a random seed (a new ``Generator()`` at the fixed one)."""
    code = ("import functorch_lite as t; print(t.initial_seed(), t.rand(2).tolist(), t.Generator().initial_seed(), "
            "t.default_generator.initial_seed() == t.initial_seed())")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
            for _ in range(2)]
    assert outs[0][0] != outs[1][0] and outs[0][1:3] != outs[1][1:3]
    assert all(o[-2:] == ["67280421310721", "True"] for o in outs)
    assert all(0 <= int(o[0]) < 2 ** 64 for o in outs)


WARNINGS = {
    "ndarray_list": lambda t: t.tensor([np.array([1, 2]), np.array([3, 4])]),
    "ndarray_0d_list": lambda t: t.tensor([np.array(1.5), np.array(2.)]),
    "complex_array_to_float": lambda t: t.tensor(np.array([1 + 1j]), dtype=t.float32),
    "complex_array_to_int": lambda t: t.tensor(np.array([1 + 1j]), dtype=t.int64),
    "complex_array_to_bool": lambda t: t.tensor(np.array([1 + 1j]), dtype=t.bool),
    "complex_as_tensor": lambda t: t.as_tensor(np.array([1 + 1j]), dtype=t.float32),
    "complex_asarray": lambda t: t.asarray(np.array([1 + 1j]), dtype=t.float32),
    "logspace_negative_base": lambda t: t.logspace(1, 2, 3, base=-2),
    "logspace_negative_base_double": lambda t: t.logspace(1, 2, 3, base=-2, dtype=t.float64),
}


@pytest.mark.parametrize("case", sorted(WARNINGS))
def test_warnings(case):
    def run(t):
        try:
            WARNINGS[case](t)
        except TypeError:
            pass
    # (as sets: with set_warn_always(True) torch gives its list-of-ndarrays warning twice, from two places)
    assert set(warnings_of(ft, run)) == set(warnings_of(torch, run))
    same(lambda t: WARNINGS[case](t) if case != "ndarray_0d_list" else None)
