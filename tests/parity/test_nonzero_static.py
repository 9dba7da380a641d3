"""``torch.nonzero_static`` / ``Tensor.nonzero_static``: nonzero's coordinates in a fixed number of rows (truncated, or
padded with ``fill_value``), so a compiled function takes it without a graph break. Against torch eager: values,
dtype, shape, the argument errors; compiled (fullgraph) against eager."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import assert_same_outcome

CASES = {
    "1d padded": lambda L: L.nonzero_static(L.tensor([0, 3, 0, 4]), size=3),
    "1d truncated": lambda L: L.nonzero_static(L.tensor([1, 3, 0, 4]), size=2),
    "2d fill": lambda L: L.tensor([[0, 3], [1, 0]]).nonzero_static(size=3, fill_value=9),
    "2d size 0": lambda L: L.nonzero_static(L.tensor([[0, 3], [1, 0]]), size=0),
    "0-d": lambda L: L.nonzero_static(L.tensor(5), size=2),
    "0-d zero": lambda L: L.nonzero_static(L.tensor(0.0), size=1),
    "float nan": lambda L: L.nonzero_static(L.tensor([1.5, 0.0, float("nan")]), size=4),
    "bool 3d": lambda L: L.nonzero_static(L.tensor(np.arange(24).reshape(2, 3, 4) % 5 == 0), size=6, fill_value=-7),
    "size negative": lambda L: L.nonzero_static(L.tensor([1, 0]), size=-1),
    "size float": lambda L: L.nonzero_static(L.tensor([1, 0]), size=2.0),
    "size missing": lambda L: L.nonzero_static(L.tensor([1, 0])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(name):
    assert_same_outcome(CASES[name], torch, ft)


def test_compiles_without_a_graph_break():
    f = ft.compile(lambda a: ft.nonzero_static(a > 0, size=3), fullgraph=True)
    for v in ([1.0, -1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, 0.5, -3.0, -4.0]):
        x = ft.tensor(v)
        np.testing.assert_array_equal(f(x).numpy(), ft.nonzero_static(x > 0, size=3).numpy())
    assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0
