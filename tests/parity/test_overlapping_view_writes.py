"""In-place writes through a view whose elements share memory without a 0 stride (unfold with step < size, an
overlapping as_strided): torch updates a shared location once per element; the facade refuses them with a clear
error (it wrote each location once: silent wrong values), except the writes whose result does not depend on how
often a location is written (copies -- the last element wins, as in torch's loop -- fills, idempotent ops: clamp_,
relu_, abs_, floor_, masked_fill_...), which match torch. Non-overlapping views are unchanged."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

def _setitem(v, k, x):
    v[k] = x
    return v


SAME = {
    "unfold_fill": lambda m: m.zeros(5).unfold(0, 3, 1).fill_(2),
    "unfold_no_overlap": lambda m: m.zeros(5).unfold(0, 2, 2).add_(1),
    "unfold_step_eq_size": lambda m: m.zeros(6).unfold(0, 3, 3).mul_(2).add_(1),
    "as_strided_zero": lambda m: m.arange(6.).as_strided((2, 3), (1, 1)).zero_(),
    "as_strided_rows": lambda m: m.arange(6.).as_strided((2, 3), (3, 1)).add_(1),
    "as_strided_transposed": lambda m: m.arange(6.).as_strided((3, 2), (1, 3)).add_(1),
    "as_strided_gaps": lambda m: m.arange(8.).as_strided((2, 2), (3, 2)).add_(1),
    "unfold_row": lambda m: m.zeros(5).unfold(0, 3, 1)[0].add_(1),
    "unfold_copy": lambda m: (m.arange(5.) - 2).unfold(0, 3, 1).copy_(m.arange(9.).reshape(3, 3)),
    "unfold_setitem": lambda m: _setitem((m.arange(5.) - 2).unfold(0, 3, 1), slice(None), 1.),
    "unfold_setitem_row": lambda m: _setitem((m.arange(5.) - 2).unfold(0, 3, 1), 0, m.tensor([7., 8., 9.])),
    "unfold_clamp": lambda m: (m.arange(5.) - 2).unfold(0, 3, 1).clamp_(0, 2),
    "unfold_relu": lambda m: (m.arange(5.) - 2).unfold(0, 3, 1).relu_(),
    "unfold_abs": lambda m: (m.arange(5.) - 2).unfold(0, 3, 1).abs_(),
    "unfold_floor": lambda m: (m.arange(5.) / 3).unfold(0, 3, 1).floor_(),
    "unfold_masked_fill": lambda m: m.zeros(5).unfold(0, 3, 1).masked_fill_(
        m.tensor([[True, False, False], [False, False, False], [False, False, True]]), 4.),
}



@pytest.mark.parametrize("name", sorted(SAME))
def test_writes_as_torch(name):
    res = {}
    for m in (torch, ft):
        v = SAME[name](m)
        res[m] = (v.numpy().copy(), (v._base if v._base is not None else v).numpy().copy())
    np.testing.assert_array_equal(res[ft][0], res[torch][0])
    np.testing.assert_array_equal(res[ft][1], res[torch][1])


@pytest.mark.parametrize("write", [lambda v: v.add_(1), lambda v: v.mul_(2), lambda v: v.exp_(),
                                   lambda v: v.pow_(2), lambda v: v.sub_(ft.ones(3))])
def test_overlapping_window_writes_refused(write):
    a = ft.zeros(5)
    with pytest.raises(RuntimeError, match="overlap in memory .* not supported"):
        write(a.unfold(0, 3, 1))
    assert a.tolist() == [0.0] * 5


def test_expanded_write_keeps_torch_error():
    for m in (torch, ft):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            m.zeros(1, 5).expand(2, 5).add_(1)
