"""``as_strided`` (a view of the input's storage, ``AsStridedBackward0``), ``empty_strided`` and
``new_empty_strided`` against real torch: values, strides, storage offsets, writes through the view, gradients,
and exception types and messages (the facade's own refusals are checked by their text)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import same


CASES = {
    "windows": lambda L: L.arange(10.0).as_strided((3, 4), (2, 1)),
    "offset": lambda L: L.arange(10.0).as_strided((2, 2), (1, 2), 3),
    "function form": lambda L: L.as_strided(L.arange(10.0), (2,), (2,)),
    "keywords": lambda L: L.arange(10.0).as_strided(size=(2, 2), stride=(3, 1), storage_offset=2),
    "of a slice keeps its offset": lambda L: L.arange(10.0)[2:].as_strided((3,), (2,)),
    "of a transposed view reads storage": lambda L: L.arange(6.0).reshape(2, 3).t().as_strided((3,), (1,)),
    "of a column": lambda L: L.arange(12.0).reshape(3, 4)[:, 1].as_strided((2,), (8,)),
    "zero stride": lambda L: L.arange(4.0).as_strided((2, 3), (1, 0)),
    "empty": lambda L: L.arange(4.0).as_strided((0, 3), (1, 1)),
    "scalar": lambda L: L.arange(4.0).as_strided((), (), 2),
    "int dtype": lambda L: L.arange(8).as_strided((2, 2), (4, 1)),
    "sliding window sums": lambda L: L.arange(8.0).as_strided((6, 3), (1, 1)).sum(1),
    "out of bounds": lambda L: L.arange(10.0).as_strided((4, 4), (3, 1)),
    "negative stride": lambda L: L.arange(10.0).as_strided((2,), (-1,)),
    "length mismatch": lambda L: L.arange(10.0).as_strided((2, 2), (1,)),
    "negative offset": lambda L: L.arange(10.0).as_strided((1,), (1,), -1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_as_strided(case):
    same(CASES[case])


def test_writes_through_the_view_reach_the_storage():
    def f(L):
        a = L.arange(6.0)
        v = a.as_strided((2,), (3,))
        v.fill_(-1.0)
        w = a.as_strided((2, 2), (1, 2), 1)
        w.mul_(10.0)
        a[0] = 7.0  # and the view sees later writes to its base
        return a, v, w
    same(f)


def test_gradients():
    def f(L):
        a = L.tensor(np.linspace(-1.0, 1.0, 12), requires_grad=True)
        m = a.reshape(3, 4).t()
        s = m.as_strided((3, 4), (2, 1), 1)  # overlapping windows over a transposed view
        w = L.tensor(np.arange(12.0).reshape(3, 4))
        (s * w).sum().backward()
        return s, a.grad
    same(f)


def test_inside_compile():
    def step(x):
        return (x.as_strided((3, 3), (1, 1)) ** 2).sum()
    x = ft.arange(6.0, requires_grad=True)
    got = ft.compile(step, fullgraph=True)(x)
    got.backward()
    t = torch.arange(6.0, requires_grad=True)
    want = step(t)
    want.backward()
    assert got.item() == want.item() and x.grad.tolist() == t.grad.tolist()


@pytest.mark.parametrize("fn,msg", [
    (lambda: ft.arange(10.0)[2:].as_strided((2,), (1,), 0), "reads storage elements that are not elements"),
    (lambda: ft.ones(3).expand(2, 3).as_strided((2,), (1,)), "overlap in memory"),
    (lambda: ft.empty_strided((2, 3), (4, 1)), "not a dense layout"),
])
def test_unsupported_cases_are_refused_by_name(fn, msg):
    with pytest.raises(RuntimeError, match=msg):
        fn()


@pytest.mark.parametrize("size,stride", [((2, 3), (3, 1)), ((2, 3), (1, 2)), ((2, 3, 4), (1, 8, 2)), ((0, 3), (3, 1)),
                                         ((1, 3), (7, 1))])
def test_empty_strided(size, stride):
    def f(L):
        e = L.empty_strided(size, stride, dtype=L.float64)
        n = L.ones(2, dtype=L.int32).new_empty_strided(size, stride)
        return tuple(e.shape), e.stride(), e.dtype == L.float64, n.stride(), n.dtype == L.int32, \
            e.is_contiguous(), e.fill_(2.0).sum().item(), e.t().stride()
    same(f)
