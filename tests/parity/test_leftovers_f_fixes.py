"""Fixes of this file's session (2026-12-07, second sitting), each against real torch 2.13."""
import pytest
import torch

import functorch_lite as ft


def _outcome(fn, m):
    try:
        r = fn(m)
    except Exception as e:  # noqa: BLE001 (the outcome compared is the exception)
        return type(e).__name__, str(e)
    return "ok", r.tolist()


_NUMBER_OPERANDS = {
    "mm": lambda m, a: m.mm(a, 2), "mm_first": lambda m, a: m.mm(2, a), "bmm": lambda m, a: m.bmm(a[None], 2.0),
    "matmul": lambda m, a: m.matmul(a, 2), "mv": lambda m, a: m.mv(a, 3), "dot": lambda m, a: m.dot(a[0], 1),
    "method": lambda m, a: a.mm(2), "keyword": lambda m, a: m.mm(a, mat2=2), "addmm": lambda m, a: m.addmm(a, a, 2),
    "linear": lambda m, a: m.nn.functional.linear(a, 2), "outer": lambda m, a: m.outer(a[0], 2),
    "baddbmm": lambda m, a: m.baddbmm(a[None], a[None], 2), "vdot": lambda m, a: m.vdot(a[0], 2),
    "inner": lambda m, a: m.inner(a, 2), "kron": lambda m, a: m.kron(a, 2), "kron_first": lambda m, a: m.kron(True, a),
    "take": lambda m, a: m.take(a, 1),
    "prelu": lambda m, a: m.nn.functional.prelu(a, 0.25), "cdist": lambda m, a: m.cdist(a, 1.0),
    # (and what stays valid: a number beside a tensor of an elementwise op)
    "mul_number": lambda m, a: m.mul(a, 2), "matmul_tensors": lambda m, a: m.matmul(a, a),
}


@pytest.mark.parametrize("case", sorted(_NUMBER_OPERANDS))
def test_number_as_a_matrix_products_operand_is_the_parsers_type_error(case):
    # torch's parser refuses a Python number where these ops take a Tensor (no Scalar overload): was an
    # AttributeError from the op's shape check, or (kron) a silently computed product
    fn = _NUMBER_OPERANDS[case]
    assert _outcome(lambda m: fn(m, m.ones(2, 2)), ft) == _outcome(lambda m: fn(m, m.ones(2, 2)), torch)


class _Opaque:  # (a class defined in Python: torch's parser prints its bare name)
    pass


_TYPE_NAMED = {
    "view_numpy_float": lambda m, x: x.view(__import__("numpy").float64(2.0), 3),
    "view_dtype_and_int": lambda m, x: x.view(m.float32, 2),
    "view_user_object": lambda m, x: x.view(_Opaque()),
    "view_packed_mixed": lambda m, x: x.view((2, m.float32)),
    "add_dtype": lambda m, x: m.add(x, m.float32),
    "add_device": lambda m, x: m.add(x, m.device("cpu")),
    "add_generator": lambda m, x: m.add(x, m.Generator()),
    "add_user_object": lambda m, x: m.add(x, _Opaque()),
    "index_user_object": lambda m, x: x[_Opaque()],
    "index_dtype": lambda m, x: x[m.float32],
    "legacy_new": lambda m, x: x.new(_Opaque()),
    "legacy_new_dtype": lambda m, x: x.new(m.float32),
    "zeros_user_object": lambda m, x: m.zeros(2, _Opaque()),
    "full_dtype_fill": lambda m, x: m.full((2,), m.float32),
    "ctc_bad": lambda m, x: m.nn.functional.ctc_loss(x, x, _Opaque(), [1]),
}


@pytest.mark.parametrize("case", sorted(_TYPE_NAMED))
def test_argument_type_names_as_torchs_parser(case):
    # one rule for the type names in the parser's messages (_dispatch._type_name): the facade's dtype, device and
    # Generator under torch's names, a NumPy scalar module-qualified, a Python class by its bare name
    fn = _TYPE_NAMED[case]
    assert _outcome(lambda m: fn(m, m.ones(2, 3)), ft) == _outcome(lambda m: fn(m, m.ones(2, 3)), torch)
