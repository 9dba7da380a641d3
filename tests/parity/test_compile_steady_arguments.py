"""A compiled training step called with tensor arguments (a batch) in its steady state takes them directly
(``steady.Steady.fast``: no discovery built per call). Each call of a sequence that leaves and re-enters that path
— a new batch, the same tensor twice, a tensor the step also reaches through its closure, a view, one that
requires grad or has a .grad, another shape or dtype, an in-place write to the batch, the batch returned — must
give eager's values (against real torch, eager)."""
import warnings

import numpy as np
import torch

import functorch_lite as ft
from _parity import close


def _run(L, C):
    lin = L.nn.Linear(3, 2)
    with L.no_grad():
        lin.weight.copy_(L.tensor([[0.5, -1., 0.25], [2., 0.25, -0.5]]))
        lin.bias.fill_(0.1)
    opt = L.optim.SGD(lin.parameters(), lr=0.005, momentum=0.5)  # (a stable run: tight tolerance)
    scale = L.tensor([1., 2., 3.])

    def step(x, y):
        opt.zero_grad()
        loss = ((lin(x * scale) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    def write(x, y):  # an in-place write to the batch, and the batch returned
        x.mul_(0.5)
        return (lin(x) - y).sum(), x
    s, w = C(step), C(write)
    base = L.arange(12.).view(4, 3).sin()
    tgt = L.arange(8.).view(4, 2).cos()
    out = []
    batches = [(base + i, tgt * i) for i in range(4)]
    batches += [(base, base[:, :2]), (scale.expand(4, 3) * 1, tgt), (base[1:], tgt[1:]), (base + 9, tgt),
                (base.double().float(), tgt), (base * 2, tgt)]
    for x, y in batches:
        out.append(s(x, y).item())
    x = base.clone()
    out.append(s(scale.view(1, 3).repeat(4, 1), tgt).item())
    out.append(s(x, x[:, :2].clone()).item())
    out.append(s(x, tgt).item())
    r = L.tensor(np.ones((4, 3), np.float32), requires_grad=True)
    out.append(s(r, tgt).item())
    out.append(r.grad.tolist())
    out.append(s(r.detach(), tgt).item())
    for i in range(3):
        xi = base + i
        v, back = w(xi, tgt)
        out.append([v.item(), back is xi, xi.tolist()])
    x64 = base.double()
    try:
        out.append(s(x64, tgt.double()).item())
    except RuntimeError as e:
        out.append(type(e).__name__)
    out.append(s(scale.expand(4, 3), tgt).item())  # (the closure's tensor as the batch, a view of it)
    out.append([p.tolist() for p in lin.parameters()])
    return out




def test_calls_leaving_and_reentering_the_argument_fast_path():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _run(torch, lambda f: f)
        got = _run(ft, ft.compile)
    assert close(got, ref, rel=1e-5, abs=1e-6), (got, ref)


def test_the_fast_path_is_taken():
    from functorch_lite._compile.runner import COUNTERS
    lin = ft.nn.Linear(3, 2)
    opt = ft.optim.SGD(lin.parameters(), lr=0.05)

    @ft.compile
    def step(x, y):
        opt.zero_grad()
        loss = ((lin(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    xs = [ft.randn(4, 3) for _ in range(8)]
    for x in xs[:3]:
        step(x, x[:, :2] * 1)
    before = COUNTERS["steady_calls"]
    for x in xs[3:]:
        step(x, x[:, :2] * 1)
    assert COUNTERS["steady_calls"] - before == 5
    assert step._steady is not None and step._steady.fast is not None


def _aliases(L, C):
    """Which slot a tensor is, when it is reached twice, is part of the program: a closure tensor passed as one
    argument then as another, the same tensor at other argument positions (the slot sigs alone were equal, and
    the first program ran on the second call: silently wrong losses)."""
    lin = L.nn.Linear(3, 1)
    with L.no_grad():
        lin.weight.copy_(L.tensor([[0.5, -1., 0.25]]))
        lin.bias.fill_(0.1)
    opt = L.optim.SGD(lin.parameters(), lr=0.1)
    scale = L.tensor([1., 2., 3.])

    def two(x, y):
        opt.zero_grad()
        loss = (lin(x * scale) - y.sum()).pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    def three(x, y, z):
        return (x * 2 + y * 3 - z).sum()
    f, g = C(two), C(three)
    a, b, c, p = L.tensor([1., 2., 3.]), L.tensor([4., 5., 6.]), L.tensor([.5, .25, 2.]), L.tensor([3., 1., 2.])
    out = [f(scale, p).item(), f(p, scale).item(), f(a, b).item(), f(scale, scale).item(), f(b, a).item(),
           f(a, a).item(), f(a, b).item()]
    out += [g(a, a, b).item(), g(c, b, c).item(), g(a, b, c).item(), g(b, b, b).item(), g(a, b, a).item()]
    return out + [lin.weight.tolist()]


def test_the_same_tensor_reached_twice_is_part_of_the_key():
    ref = _aliases(torch, lambda f: f)
    got = _aliases(ft, ft.compile)
    assert close(got, ref, rel=1e-5, abs=1e-6), (got, ref)


def test_an_inference_tensor_argument_raises_as_eagerly():
    def run(L, C):
        lin = L.nn.Linear(3, 1)
        f = C(lambda x: lin(x).sum())
        out = []
        for i in range(3):
            f(L.ones(2, 3) * i).backward()
        with L.inference_mode():
            x = L.ones(2, 3)
        try:
            f(x).backward()
            out.append("ok")
        except RuntimeError as e:
            out.append(str(e).split(".")[0])
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(ft, ft.compile) == run(torch, lambda f: f) == ["Inference tensors cannot be saved for backward"]
