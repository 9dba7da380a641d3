"""A compiled forward's node saves what torch's graph saves: a tensor the traced graph saved for backward, changed
in place before ``backward()``, makes it raise torch's "modified by an inplace operation" (before: no error, the
gradient of the forward that ran). What is saved follows the ops: ``w.sin()`` saves w, ``x * w`` saves only x
when only w requires grad, ``x + w`` saves nothing. Compared with real torch (eager; torch.compile's
CompiledFunction saves the same tensors and checks their versions the same way)."""
import re
import warnings

import pytest
import torch

import functorch_lite as ft

CASES = {
    "sin saves w": (lambda x, w, lin: w.sin(), lambda x, w, lin: w.add_(1)),
    "pow saves w": (lambda x, w, lin: w ** 2, lambda x, w, lin: w.mul_(3)),
    "mul saves x": (lambda x, w, lin: x * w, lambda x, w, lin: x.add_(1)),
    "mul does not save w": (lambda x, w, lin: x * w, lambda x, w, lin: w.add_(1)),
    "add saves nothing": (lambda x, w, lin: x + w, lambda x, w, lin: w.add_(1)),
    "relu saves its result": (lambda x, w, lin: (x * w).relu(), lambda x, w, lin: w.add_(1)),
    "chain saves x": (lambda x, w, lin: (x * w).sin(), lambda x, w, lin: x.mul_(2)),
    "linear saves its input": (lambda x, w, lin: lin(x * w), lambda x, w, lin: x.mul_(2)),
    "linear saves its weight": (lambda x, w, lin: lin(x * w), lambda x, w, lin: lin.weight.mul_(2)),
    "linear does not save its bias": (lambda x, w, lin: lin(x * w), lambda x, w, lin: lin.bias.mul_(2)),
    "a view of w written": (lambda x, w, lin: w[1:].exp(), lambda x, w, lin: w[0:1].mul_(2)),
}


def _run(L, C, op, change):
    w = L.tensor([1., 2.], requires_grad=True)
    x = L.tensor([3., 4.])
    lin = L.nn.Linear(2, 2)
    with L.no_grad():
        lin.weight.copy_(L.tensor([[0.5, -1.], [2., 0.25]]))
    f = C(lambda x: op(x, w, lin).sum())
    y = f(x)
    f(x)  # (a second call: the steady program's node saves the same)
    with L.no_grad():
        change(x, w, lin)
    try:
        y.backward()
    except RuntimeError as e:
        m = re.search(r"modified by an inplace operation: \[(\S+) \[([\d, ]*)\]\].* is at version (\d+); expected "
                      r"version (\d+) instead", str(e))
        assert m, str(e)
        return m.groups()
    return w.grad.tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_a_saved_input_changed_in_place_before_backward(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _run(torch, lambda f: f, *CASES[case])
        got = _run(ft, ft.compile, *CASES[case])
    assert got == ref
