"""Fixes of this file's session (2026-12-07, third sitting), each against real torch 2.13."""
import warnings

import pytest
import torch

import functorch_lite as ft


def _outcome(fn, m):
    """``fn(m)``'s values (or its exception's type and message) and the warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(m)
            out = ("ok", r.tolist() if hasattr(r, "tolist") else r)
        except Exception as e:  # noqa: BLE001 (the outcome compared is the exception)
            out = (type(e).__name__, str(e))
    return out, [(x.category.__name__, str(x.message)) for x in w]


def _expanded(m):
    return m.arange(3.0).expand(2, 3)


_EXPANDED_FILLS = {
    "masked_fill_": lambda m: _expanded(m).masked_fill_(m.tensor([[True, False, False], [False, False, True]]), -1.0),
    "masked_fill_row_mask": lambda m: _expanded(m).masked_fill_(m.tensor([True, False, False]), m.tensor(-1.0)),
    "masked_fill_0d_mask": lambda m: _expanded(m).masked_fill_(m.tensor(True), 5.0),
    "masked_fill_none_true": lambda m: _expanded(m).masked_fill_(m.tensor([False, False, False]), 5.0),
    "index_fill_dim1": lambda m: _expanded(m).index_fill_(1, m.tensor([0, 2]), -1.0),
    "index_fill_dim0": lambda m: _expanded(m).index_fill_(0, m.tensor([0]), m.tensor(-1.0)),
    "index_fill_neg_dim": lambda m: _expanded(m).index_fill_(-1, m.tensor([-1]), 7.0),
    "int_masked_fill_": lambda m: m.arange(3).expand(2, 2, 3).masked_fill_(m.tensor([[[True, False, True]]]), 9),
    # (the memory the expanded tensor shares: its base)
    "base_written": lambda m: (lambda b: (b.expand(2, 3).masked_fill_(m.tensor([[True, False, False],
                                                                                [False, False, True]]), -1.0), b)[1])(
        m.arange(3.0)),
    "base_of_index_fill": lambda m: (lambda b: (b.expand(4, 3).index_fill_(1, m.tensor([1]), 0.5), b)[1])(
        m.ones(3)),
    # (what stays refused: ops whose values differ per element, and an overlap through a transpose of an expand)
    "masked_scatter_": lambda m: _expanded(m).masked_scatter_(m.tensor([True, False, False]), m.tensor([7.0, 8.0])),
    "index_copy_": lambda m: _expanded(m).index_copy_(1, m.tensor([0]), m.ones(2, 1)),
    "scatter_": lambda m: _expanded(m).scatter_(1, m.tensor([[0], [1]]), -1.0),
    "add_": lambda m: _expanded(m).add_(1.0),
}


@pytest.mark.parametrize("case", sorted(_EXPANDED_FILLS))
def test_fill_through_an_expanded_tensor_writes_and_warns_as_torch(case):
    # masked_fill_ / index_fill_ on an expanded tensor raised the internal-overlap error: torch warns (deprecated) and
    # writes each shared memory location a filled element refers to
    fn = _EXPANDED_FILLS[case]
    assert _outcome(fn, ft) == _outcome(fn, torch)


def test_expanded_fill_warning_points_at_the_callers_line():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _expanded(ft).masked_fill_(ft.tensor([True, False, False]), 1.0)
    assert [x.filename for x in w] == [__file__]
