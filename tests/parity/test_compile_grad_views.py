""".grad fields that are views of one flat gradient buffer (DDP's ``gradient_as_bucket_view``, a fused all-reduce
over one buffer): a compiled training step writes the new gradients through those views, so the buffer holds them
and the views stay its views, as eager's accumulation does; the shared version counter counts every write. Against
torch eager (and the facade's eager), with the step zeroing the gradients in place at its start or at its end,
dropping them (``set_to_none``: the new .grad fields are plain tensors, as torch's backward makes them) or
accumulating across calls."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import call_with_bad_target, close


def _run(L, comp, zero, bad_at=None, n=4):
    lin1, lin2 = L.nn.Linear(4, 3), L.nn.Linear(3, 2)
    params = list(lin1.parameters()) + list(lin2.parameters())
    rng = np.random.default_rng(5)
    with L.no_grad():
        for p in params:
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
    sizes = [p.numel() for p in params]
    flat = L.zeros(sum(sizes))
    off = 0
    for p, k in zip(params, sizes):
        p.grad = flat[off:off + k].view(p.shape)
        off += k
    opt = L.optim.SGD(params, lr=0.1, momentum=0.9)
    x = L.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    lab = L.tensor([0, 1, 1, 0, 1])

    def step():
        if zero == "start":
            opt.zero_grad(set_to_none=False)
        elif zero == "start_none":
            opt.zero_grad()
        loss = L.nn.functional.cross_entropy(lin2(L.tanh(lin1(x))), lab)
        loss.backward()
        opt.step()
        if zero == "end":
            opt.zero_grad(set_to_none=False)
        return loss.detach()
    step = comp(step)
    out = []
    for k in range(n):
        out += call_with_bad_target(step, params, lab, 4, 9, 1, k == bad_at)
        out.append([p.grad is not None and p.grad._base is flat for p in params])
        out.append([None if p.grad is None else (p.grad.numpy().tolist(), p.grad._version) for p in params])
        out.append((flat.numpy().tolist(), flat._version))
        out.append([(p.detach().numpy().tolist(), p._version) for p in params])
    return out


@pytest.mark.parametrize("zero", ["start", "end", "start_none", "accumulate"])
def test_grads_viewing_a_flat_buffer_stay_its_views(zero):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _run(torch, lambda f: f, zero)
        e = _run(ft, lambda f: f, zero)
        f = _run(ft, ft.compile, zero)
    assert close(f, t, rel=1e-5, abs=1e-6)
    assert close(f, e, rel=1e-6)


@pytest.mark.parametrize("zero", ["start", "end"])
def test_a_failed_check_leaves_the_flat_buffer_as_eager(zero):
    """The check (the target range) fails in the forward of the third call: the buffer keeps what the calls before
    wrote, through the views."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _run(torch, lambda f: f, zero, bad_at=2)
        f = _run(ft, ft.compile, zero, bad_at=2)
    assert close(f, t, rel=1e-5, abs=1e-6)


def test_the_buffer_holds_the_step_gradient():
    """Known numbers: d(sum(w * x))/dw = x, written into the buffer through the view."""
    w = ft.zeros(3, requires_grad=True)
    flat = ft.zeros(4)
    w.grad = flat[1:]

    @ft.compile
    def step(x):
        w.grad.zero_()
        (w * x).sum().backward()

    for x in ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]):
        step(ft.tensor(x))
        assert w.grad._base is flat
        np.testing.assert_array_equal(flat.numpy(), [0.0] + x)
