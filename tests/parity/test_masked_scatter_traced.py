"""``masked_scatter`` without a host read: the k-th True takes source's k-th element by a running count, so it
batches under ``vmap`` (it raised torch's "calling .item()" error there) and stays in a compiled program (a graph
break before), with torch's count error checked by the program. Values and gradients against torch 2.13."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _x(L):
    return L.tensor([[1.0, -1.0], [-2.0, 2.0]])


def test_under_vmap_as_torch():
    def f(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch's "no batching rule" performance warning)
            return L.func.vmap(lambda a: a.masked_scatter(a > 0, a * 10))(_x(L)).numpy()
    np.testing.assert_array_equal(f(ft), f(torch))


CASES = {
    "2-d": lambda L: (_x(L), L.tensor([[True, False], [False, True]]), L.tensor([5.0, 6.0, 7.0, 8.0])),
    "broadcast mask": lambda L: (L.zeros(2, 3), L.tensor([True, False, True]), L.arange(6.0)),
    "no True, empty source": lambda L: (L.zeros(3), L.tensor([False, False, False]), L.zeros(0)),
    "all True": lambda L: (L.zeros(3), L.tensor([True, True, True]), L.tensor([1.0, 2.0, 3.0, 4.0])),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("compiled", [False, True])
def test_values_and_gradients_as_torch(name, compiled):
    def run(L, comp):
        x, m, s = CASES[name](L)
        x.requires_grad_()
        s.requires_grad_()
        f = (lambda x, m, s: x.masked_scatter(m, s))
        if comp:
            f = ft.compile(f, fullgraph=True)
        r = f(x, m, s)
        r.backward(L.ones_like(r) * L.arange(1.0, r.numel() + 1).reshape(r.shape))
        return r.detach().numpy(), x.grad.numpy(), s.grad.numpy()
    for a, b in zip(run(ft, compiled), run(torch, False)):
        np.testing.assert_array_equal(a, b)


def test_count_error_eager_and_compiled():
    for f in (lambda x, m, s: x.masked_scatter(m, s), ft.compile(lambda x, m, s: x.masked_scatter(m, s))):
        with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
            f(ft.zeros(3), ft.tensor([True, True, True]), ft.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
        torch.zeros(3).masked_scatter(torch.tensor([True, True, True]), torch.tensor([1.0, 2.0]))
