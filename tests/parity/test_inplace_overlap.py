"""A write that reads memory it writes, shifted (``x[1:].add_(x[:-1])``, ``torch.mul(x[1:], x[:-1], out=x[:-1])``,
``x.copy_(x.t())``): PyTorch refuses it (assert_no_partial_overlap), where a functional engine would compute the
result as if the source were cloned -- a value no PyTorch run gives. The same memory exactly, or a layout too
hard to tell (not dense), is allowed, as PyTorch's. Each case against real torch: its error message, or its
values and version counter."""
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _x(L):
    return L.arange(1.0, 9.0) / 8


CASES = {
    "add_ shifted": lambda L, x: x[1:].add_(x[:-1]),
    "sub_ alpha shifted": lambda L, x: x[1:].sub_(x[:-1], alpha=2),
    "mul_ shifted back": lambda L, x: x[:-1].mul_(x[1:]),
    "copy_ shifted": lambda L, x: x[1:].copy_(x[:-1]),
    "copy_ transposed square": lambda L, x: x[:4].view(2, 2).copy_(x[:4].view(2, 2).t()),
    "add_ transposed square": lambda L, x: x[:4].view(2, 2).add_(x[:4].view(2, 2).t()),
    "lerp_ shifted": lambda L, x: x[1:].lerp_(x[:-1], 0.5),
    "addcmul_ shifted": lambda L, x: x[2:].addcmul_(x[:-2], x[1:-1]),
    "clamp_ tensor min shifted": lambda L, x: x[1:].clamp_(min=x[:-1]),
    "pow_ shifted": lambda L, x: x[1:].pow_(x[:-1]),
    "add out shifted": lambda L, x: L.add(x[1:], 1, out=x[:-1]),
    "mul out shifted": lambda L, x: L.mul(x[1:], x[:-1], out=x[:-1]),
    # allowed: the same elements, disjoint ranges, an input that is not dense, a scalar operand
    "add_ same memory": lambda L, x: x[1:].add_(x[1:]),
    "add_ itself": lambda L, x: x.mul_(x),
    "copy_ disjoint": lambda L, x: x[:4].copy_(x[4:]),
    "add_ non-dense source": lambda L, x: x[:4].add_(x[::2]),
    "add out same": lambda L, x: L.add(x, 1, out=x),
    "add out non-dense": lambda L, x: L.add(x.view(2, 4)[:, 1:], 1, out=x.view(2, 4)[:, :3]),
    "add_ scalar": lambda L, x: x[1:].add_(2.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_partial_overlap(name):
    def run(L):
        x = _x(L)
        v = x._version
        try:
            CASES[name](L, x)
        except RuntimeError as e:
            return "raised", str(e), x.tolist(), x._version - v
        return "ok", None, x.tolist(), x._version - v
    got, want = run(ft), run(torch)
    assert got[0] == want[0] and got[1] == want[1] and got[3] == want[3]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_partial_overlap_message():
    x = ft.arange(4.0)
    with pytest.raises(RuntimeError, match=r"^unsupported operation: some elements of the input tensor and the "
                                           r"written-to tensor refer to a single memory location\. Please clone\(\)"):
        x[1:].copy_(x[:-1])
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]  # (nothing written)


def test_conj_physical_in_place_on_a_view_of_a_real_tensor():
    """A real tensor's conj_physical_ gives its input back: written into a view, the view's values, not the
    whole storage's (a ValueError before)."""
    def run(L):
        x = _x(L)
        y = x[1:]
        v = y._version
        r = y.conj_physical_()
        return r is y, y.tolist(), x.tolist(), y._version - v
    assert run(ft) == run(torch)
