"""The Python operator methods PyTorch's Tensor defines beyond the arithmetic table: the in-place and reflected
shifts (``x <<= 1`` writes x in place: other references see it), ``reversed(x)`` (``x.flip(0)``, a tensor),
``del x[i]`` (refused), the Python 2 spellings torch still has (``__div__``, ``__idiv__``, ``__long__``,
``__nonzero__``) and ``const_data_ptr``. Each against real torch: values, identity, version counters, errors."""
import warnings

import pytest
import torch

import functorch_lite as ft


def _in_place_shift(L, op):
    x = L.tensor([1, 2, 3])
    y = x
    if op == "<<=":
        x <<= 1
    else:
        x >>= 1
    return x is y, y.tolist(), y._version


def _float_shift(L):
    f = L.tensor([1.5])
    f <<= 1
    return f


def _del(L):
    z = L.arange(3)
    del z[0]


def _idiv(L):
    z = L.tensor([2.0, 4.0])
    return z.__idiv__(2) is z, z.tolist()


CASES = {
    "ilshift": lambda L: _in_place_shift(L, "<<="),
    "irshift": lambda L: _in_place_shift(L, ">>="),
    "rlshift": lambda L: 1 << L.tensor([1, 2]),
    "rrshift": lambda L: 16 >> L.tensor([1, 2]),
    "rlshift float": lambda L: L.tensor([1.5]).__rlshift__(2),
    "ilshift float": _float_shift,
    "reversed": lambda L: reversed(L.arange(6.0).reshape(2, 3)),
    "reversed 0-d": lambda L: reversed(L.tensor(3.0)),
    "reversed grad_fn": lambda L: type(reversed(L.arange(3.0, requires_grad=True)).grad_fn).__name__,
    "del item": _del,
    "long": lambda L: L.tensor(3.7).__long__(),
    "nonzero": lambda L: L.tensor([0.0]).__nonzero__(),
    "nonzero ambiguous": lambda L: L.tensor([0.0, 1.0]).__nonzero__(),
    "div": lambda L: L.tensor([1, 2]).__div__(2),
    "rdiv": lambda L: L.tensor([1, 2]).__rdiv__(2),
    "idiv": _idiv,
    "const_data_ptr of a view": lambda L: (lambda a: a[1:].const_data_ptr() - a.const_data_ptr())(L.arange(4.0)),
}


def _outcome(fn, L):
    try:
        r = fn(L)
    except Exception as e:  # noqa: BLE001 (the error itself is compared)
        return type(e).__name__, str(e)
    return r.tolist() if hasattr(r, "tolist") else r


@pytest.mark.parametrize("name", sorted(CASES))
def test_python_operator(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _outcome(CASES[name], ft) == _outcome(CASES[name], torch)
