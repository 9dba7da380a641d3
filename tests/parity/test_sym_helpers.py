"""``torch.sym_int/sym_float/sym_max/sym_min/sym_not/sym_sqrt/sym_sum/sym_ite`` and ``SymInt/SymFloat/SymBool``:
on Python numbers torch's values, result types and AssertionErrors; on a compiled function's dynamic int/float
arguments (``_symbolic.SymNumber``) they stay in the program, so one trace serves every value."""
import math

import pytest
import torch

import functorch_lite as ft

CASES = {
    "int of float": lambda L: L.sym_int(3.7),
    "int of negative float": lambda L: L.sym_int(-3.7),
    "int of bool": lambda L: L.sym_int(True),
    "float of int": lambda L: L.sym_float(3),
    "max int float": lambda L: L.sym_max(2, 3.5),
    "max float wins type": lambda L: L.sym_max(3, 2.0),
    "max ints": lambda L: L.sym_max(7, -2),
    "min ints": lambda L: L.sym_min(2, 3),
    "min float": lambda L: L.sym_min(2.5, 3),
    "not": lambda L: L.sym_not(0),
    "not true": lambda L: L.sym_not(True),
    "sqrt": lambda L: L.sym_sqrt(4),
    "sum list": lambda L: L.sym_sum([1, 2, 3]),
    "sum args": lambda L: L.sym_sum(1, 2.5),
    "ite": lambda L: L.sym_ite(False, 1, 2),
    "SymInt of int": lambda L: isinstance(3, L.SymInt),
    "SymFloat of float": lambda L: isinstance(3.0, L.SymFloat),
    "min of str": lambda L: L.sym_min(2, "a"),
    "ite type mismatch": lambda L: L.sym_ite(True, 1, 2.0),
    "max of a tensor": lambda L: L.sym_max(L.tensor([1.0]), 2.0),
    "ite of a tensor": lambda L: L.sym_ite(L.tensor(True), 1, 2),
}


def _outcome(fn, L):
    try:
        r = fn(L)
        return (type(r).__name__, r)
    except AssertionError as e:  # (a tensor's class is named after its library)
        return ("AssertionError", str(e).replace("torch.Tensor", "functorch_lite._tensor.tensor.Tensor"))


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(name):
    assert _outcome(CASES[name], ft) == _outcome(CASES[name], torch)


def test_dynamic_arguments_stay_in_the_program():
    f = ft.compile(lambda x, n: x * ft.sym_max(n, 2) + ft.sym_sqrt(ft.sym_float(n)) + ft.sym_int(n / 3)
                   + ft.sym_min(n, 4.5) + ft.sym_sum([n, n, 1]), dynamic=True)
    for n in (1, 5, 9):
        want = 1.0 * max(n, 2) + math.sqrt(n) + int(n / 3) + min(n, 4.5) + (2 * n + 1)
        assert f(ft.ones(2), n).tolist() == pytest.approx([want, want], rel=1e-6)
    assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0


def test_symint_instances_of_dynamic_arguments():
    """What a dynamic argument is while traced (``_symbolic.SymNumber``) is a SymInt / SymFloat, a comparison of it a
    SymBool. (A compiled function that branches on that check is specialized again: ``_check_dynamic``.)"""
    from functorch_lite._symbolic import SymNumber
    n, r = SymNumber.of(3, int), SymNumber.of(0.5, float)
    assert isinstance(n, ft.SymInt) and not isinstance(n, ft.SymFloat) and not isinstance(3, ft.SymInt)
    assert isinstance(r, ft.SymFloat) and isinstance(n > 2, ft.SymBool) and not isinstance(True, ft.SymBool)
    assert isinstance(ft.sym_float(n), ft.SymFloat) and isinstance(ft.sym_int(r), ft.SymInt)
    assert isinstance(ft.sym_not(n > 2), ft.SymBool) and isinstance(ft.sym_max(n, r), ft.SymFloat)
