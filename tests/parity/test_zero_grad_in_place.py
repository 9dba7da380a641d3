"""``Module.zero_grad(set_to_none=False)`` zeroes each ``.grad`` in place, as torch's does (and as the facade's
``Optimizer.zero_grad`` did): it replaced it by a new tensor, so a reference held to the old one (a hook's, a
logger's) stopped following the gradient. Both now share one implementation (``_tensor.tensor.zero_grads``)."""
import torch

import functorch_lite as ft


def _run(L, zero):
    lin = L.nn.Linear(2, 1)
    opt = L.optim.SGD(lin.parameters(), lr=0.1)
    lin(L.ones(1, 2)).sum().backward()
    held = lin.weight.grad
    (lin if zero == "module" else opt).zero_grad(set_to_none=False)
    after_zero = held.tolist()
    lin(L.full((1, 2), 3.0)).sum().backward()
    return held is lin.weight.grad, after_zero, held.tolist(), lin.weight.grad.requires_grad


def test_zero_grad_set_to_none_false_keeps_the_grad_object():
    for zero in ("module", "optimizer"):
        assert _run(ft, zero) == _run(torch, zero) == (True, [[0.0, 0.0]], [[3.0, 3.0]], False)


def test_a_grad_with_a_graph_is_detached_in_place():
    for L in (torch, ft):
        w = L.ones(2, requires_grad=True)
        (w * w).sum().backward(create_graph=True)
        g = w.grad
        assert g.grad_fn is not None
        L.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)
        assert w.grad is g and g.grad_fn is None and not g.requires_grad and g.tolist() == [0.0, 0.0]
