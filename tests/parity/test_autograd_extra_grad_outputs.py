"""More gradients than outputs in ``autograd.grad`` / ``backward``: torch's engine zips them (the extra ones are
ignored) and refuses only fewer. The facade refused any count mismatch."""
import pytest
import torch

import functorch_lite as ft


def _run(T, case):
    x = T.tensor(2., requires_grad=True)
    try:
        if case == "grad_extra":
            return T.autograd.grad([x * 2], x, grad_outputs=[T.tensor(1.), T.tensor(2.)])[0].item()
        if case == "grad_extra_none":
            return T.autograd.grad([x * 2], x, grad_outputs=[T.tensor(3.), None])[0].item()
        if case == "backward_extra":
            T.autograd.backward([x * 2], grad_tensors=[T.tensor(1.), T.tensor(2.)])
            return x.grad.item()
        if case == "tensor_backward_list":
            (x * 3).backward(gradient=[T.tensor(1.), T.tensor(2.)])
            return x.grad.item()
        if case == "grad_fewer":
            return T.autograd.grad([x * 2, x * 3], x, grad_outputs=[T.tensor(1.)])
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("case", ["grad_extra", "grad_extra_none", "backward_extra", "tensor_backward_list",
                                  "grad_fewer"])
def test_grad_outputs_count(case):
    assert _run(ft, case) == _run(torch, case)
