"""torch's argument checks in nn that a red-team run found the facade lacked (or worded differently): each call
raises the same exception type and message under both libraries."""
import pytest
import torch

import functorch_lite as ft

CASES = {
    "register_buffer-empty-name": lambda L: L.nn.Module().register_buffer("", L.ones(1)),
    "register_buffer-int-name": lambda L: L.nn.Module().register_buffer(3, L.ones(1)),
    "linear-0d-input": lambda L: L.nn.Linear(1, 2)(L.tensor(1.0)),
    "linear-0d-weight": lambda L: L.nn.functional.linear(L.ones(3), L.tensor(2.0)),
    "multi-margin-weight-size": lambda L: L.nn.MultiMarginLoss(weight=L.ones(3))(L.zeros(2, 4), L.tensor([0, 1])),
    "batch-norm-channels": lambda L: L.nn.BatchNorm2d(3)(L.zeros(2, 4, 2, 2)),
    "batch-norm-eval-channels": lambda L: L.nn.BatchNorm1d(3).eval()(L.zeros(2, 4)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_error(name):
    out = []
    for lib in (torch, ft):
        try:
            CASES[name](lib)
            out.append("no error")
        except Exception as e:  # noqa: BLE001 -- compared between the libraries
            out.append((type(e).__name__, str(e)))
    assert out[0] != "no error" and out[1] == out[0]


def _hook_calls(lib, pre: bool):
    """A module of two inputs (one needing no grad) and two outputs (one unused): what its full backward hook (or
    pre-hook) is given."""
    class M(lib.nn.Module):
        def forward(self, a, b):
            return a * 2, (b * 3 if not pre else a * 3)

    def show(gs):
        return [None if g is None else g.tolist() for g in gs]
    calls = []
    m = M()
    if pre:
        m.register_full_backward_pre_hook(lambda mod, go: calls.append(show(go)))
    else:
        m.register_full_backward_hook(lambda mod, gi, go: calls.append((show(gi), show(go))))
    o1, _ = m(lib.ones(2, requires_grad=True), lib.ones(2))
    o1.sum().backward()
    return calls


@pytest.mark.parametrize("pre", [False, True], ids=["hook", "pre-hook"])
def test_full_backward_hook_none_and_zeros_as_torch(pre):
    """An output no gradient reached is None in grad_output; an input that needs no gradient is zeros in
    grad_input (beside one that does)."""
    assert _hook_calls(ft, pre) == _hook_calls(torch, pre)
