"""The graph torch records for ``F.linear`` and matmul (spec AG-56..59): the facade runs each as one fused node but
shows, in ``next_functions``, the nodes torch's decomposition records below the outermost one (``TBackward0`` of the
weight, the mm / addmm / mv / bmm, the views, expands and copies of matmul's folding); a legacy module backward
hook on a Linear then sees torch's grad_input (the bias's, the input's and the weight's transposed gradient, in
that order; the facade gave the input's, the weight's untransposed and the bias's), and what it returns replaces
them as torch's does."""
import warnings

import pytest
import torch

import functorch_lite as ft


def _shape(fn):
    if fn is None:
        return "None"
    if type(fn).__name__ == "AccumulateGrad":
        return "A"
    kids = [_shape(f) for f, _ in fn.next_functions]
    return type(fn).__name__ + ("(" + ",".join(kids) + ")" if kids else "")


def _cases(L):
    F = L.nn.functional

    def R(*s):
        return L.randn(*s, requires_grad=True)
    return {
        "AG-56 3@2": lambda: R(2, 3, 4) @ R(4, 5), "AG-57 4@4T": lambda: (lambda q: q @ q.transpose(-2, -1))(
            R(2, 2, 3, 4)), "AG-58 1@2": lambda: R(4) @ R(4, 5), "AG-59 linear": lambda: F.linear(R(3, 4), R(5, 4), R(5)),
        "3@3": lambda: R(2, 3, 4) @ R(2, 4, 5), "4@2": lambda: R(2, 2, 3, 4) @ R(4, 5), "3@1": lambda: R(2, 3, 4) @ R(4),
        "1@3": lambda: R(4) @ R(2, 4, 5), "4@3 broadcast": lambda: R(2, 2, 3, 4) @ R(2, 4, 5),
        "3@4 broadcast": lambda: R(2, 3, 4) @ R(2, 2, 4, 5), "3T@2": lambda: R(2, 4, 3).transpose(1, 2) @ R(4, 5),
        "3@3T": lambda: R(2, 3, 4) @ R(2, 5, 4).transpose(1, 2), "sliced 3@2": lambda: R(2, 3, 8)[:, :, :4] @ R(4, 5),
        "4 permuted @4": lambda: R(2, 2, 3, 4).permute(1, 0, 2, 3) @ R(2, 2, 4, 5), "2@2T": lambda: R(3, 4) @ R(5, 4).t(),
        "2@1": lambda: R(3, 4) @ R(4), "1@1": lambda: R(4) @ R(4),
        "linear no bias": lambda: F.linear(R(3, 4), R(5, 4)), "linear 1-D": lambda: F.linear(R(4), R(5, 4), R(5)),
        "linear 1-D no bias": lambda: F.linear(R(4), R(5, 4)), "linear 3-D": lambda: F.linear(R(2, 3, 4), R(5, 4), R(5)),
        "linear 3-D no bias": lambda: F.linear(R(2, 3, 4), R(5, 4)),
        "linear 4-D": lambda: F.linear(R(2, 2, 3, 4), R(5, 4), R(5)),
        "linear transposed 3-D": lambda: F.linear(R(2, 4, 3).transpose(1, 2), R(5, 4), R(5)),
        "linear sliced 1-D": lambda: F.linear(R(8)[::2], R(5, 4), R(5)),
        "linear frozen weight": lambda: F.linear(R(3, 4), R(5, 4).detach(), R(5)),
        "linear input without grad": lambda: F.linear(R(2, 3, 4).detach(), R(5, 4), R(5)),
    }


@pytest.mark.parametrize("name", list(_cases(torch)))
def test_composite_graph_is_torchs(name):
    assert _shape(_cases(ft)[name]().grad_fn) == _shape(_cases(torch)[name]().grad_fn)


def _legacy_hook(L, shape, xg, bias, replace):
    lin = L.nn.Linear(3, 2, bias=bias)
    with L.no_grad():
        lin.weight.copy_(L.arange(6.).reshape(2, 3))
        if bias:
            lin.bias.fill_(0.5)
    seen = []

    def hook(m, gi, go):
        seen.append([None if g is None else (tuple(g.shape), g.tolist()) for g in gi])
        if replace:
            return tuple(None if g is None else g * 2 for g in gi)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin.register_backward_hook(hook)
        x = L.arange(float(L.Size(shape).numel())).reshape(shape).requires_grad_(xg)
        lin(x).sum().backward()
    return (seen, lin.weight.grad.tolist(), None if x.grad is None else x.grad.tolist(),
            lin.bias.grad.tolist() if bias else None)


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("xg", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (3,), (2, 2, 3)])
def test_legacy_linear_backward_hook_sees_torchs_grad_input(shape, xg, bias, replace):
    assert _legacy_hook(ft, shape, xg, bias, replace) == _legacy_hook(torch, shape, xg, bias, replace)


def test_nodes_shown_inside_a_composite_refuse_hooks():
    y = ft.nn.functional.linear(ft.randn(3, 4, requires_grad=True), ft.randn(5, 4, requires_grad=True))
    t_node = y.grad_fn.next_functions[1][0]
    assert type(t_node).__name__ == "TBackward0"
    for register in (t_node.register_hook, t_node.register_prehook):
        with pytest.raises(RuntimeError, match="TBackward0 is part of a composite op's graph"):
            register(lambda *a: None)
    y.grad_fn.register_prehook(lambda g: None)  # (the outermost node takes them)
