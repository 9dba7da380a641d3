"""What a compiled function reaches beyond closures, globals and objects' own attributes — class attributes, a
user module's attributes, deques and ``__slots__`` objects — and which of its outputs carry gradients: against
torch.compile (``backend="aot_eager"``) and eager."""
import collections

import numpy as np
import pytest
import torch

import _compile_user_cfg as cfg
import functorch_lite as ft


def _kw(lib):
    return {"backend": "aot_eager"} if lib is torch else {}


def _class_and_module_reads(lib):
    class Cfg:
        mult = 2

    class M(lib.nn.Module):
        scale = 2.0

        def forward(self, x):
            return x * self.scale

    class C:
        t = lib.ones(2)
    f = lib.compile(lambda x: x * Cfg.mult, **_kw(lib))
    g = lib.compile(lambda x: x * cfg.SCALE, **_kw(lib))
    cm = lib.compile(M(), **_kw(lib))
    h = lib.compile(lambda x: x * C.t, **_kw(lib))
    x, out = lib.ones(1), []
    cfg.SCALE = 2.0
    try:
        for step in range(6):
            if step == 3:  # rebind each, between calls
                Cfg.mult, cfg.SCALE, M.scale, C.t = 100, 100.0, 100.0, lib.full((2,), 7.0)
            out.append((f(x).item(), g(x).item(), cm(x).item(), h(lib.ones(2)).tolist()))
        C.t.mul_(2)  # (in place: the slot's new value)
        out.append(h(lib.ones(2)).tolist())
    finally:
        cfg.SCALE = 2.0
    return out, (f, g, cm, h)


def test_class_attributes_and_user_module_attributes_are_guards_not_stale_constants():
    want, _ = _class_and_module_reads(torch)
    got, fns = _class_and_module_reads(ft)
    assert got == want
    assert got[3] == (100.0, 100.0, 100.0, [7.0, 7.0])  # (they read 2.0 before the fix: baked, never re-checked)
    f, g, cm, h = fns
    assert f.stats["traces"] == 2 and g.stats["traces"] == 2 and h.stats["traces"] == 1  # (C.t: a slot)


def test_library_modules_and_classes_are_not_walked():
    def f(x):
        return x * np.pi + ft.float32.itemsize
    cf = ft.compile(f)
    for _ in range(3):
        np.testing.assert_allclose(cf(ft.ones(2)).numpy(), np.full(2, np.pi + 4), rtol=1e-6)
    assert cf.stats["traces"] == 1


def _deque_and_slots(lib):
    dq = collections.deque(maxlen=2)

    class Box:
        __slots__ = ("v", "n", "k")

        def __init__(self):
            self.n, self.k = 0, 3.0
    box = Box()

    def f(x):
        y = x * box.k
        dq.append(y)
        box.v = y
        box.n += 1
        return y

    def g(x):
        box.v = x + 1
        box.n += 1
        return x * 2
    cf, cg = lib.compile(f, **_kw(lib)), lib.compile(g, **_kw(lib))
    for i in range(4):
        cf(lib.ones(1) * i)
    out = [[t.item() for t in dq], box.v.item(), box.n]
    box.k = 5.0
    out += [cf(lib.ones(1)).item(), box.n]
    for i in range(3):
        cg(lib.ones(1) * i)
    return out + [box.v.item(), box.n], cg


def test_a_deque_and_a_slots_object_written_inside_hold_real_tensors():
    want, _ = _deque_and_slots(torch)
    with pytest.warns(UserWarning, match="changing the deque dq"):  # (a deque's append: a graph break, eager)
        got, cg = _deque_and_slots(ft)
    assert got == want == [[6.0, 9.0], 9.0, 4, 5.0, 5, 3.0, 8]
    assert cg.stats["eager_calls"] == 0  # the slots object's writes are replayed, compiled


def _outputs(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(2, 3)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]]))
        m.bias.copy_(lib.tensor([0.1, -0.2, 0.3]))
    f = lib.compile(lambda x: (m(x), m(x).detach(), x * 2, m(x).argmax(-1).float(), m(x).softmax(-1).detach()),
                    **_kw(lib))
    rows = []
    for _ in range(2):
        outs = f(lib.ones(4, 2))
        rows.append(([t.requires_grad for t in outs], [t.is_leaf for t in outs],
                     [type(t.grad_fn).__name__ for t in outs]))
    a, b, _, _, p = f(lib.ones(4, 2))
    a.sum().backward()
    try:
        b.sum().backward()
        err = None
    except RuntimeError as e:
        err = str(e)
    return rows, p.numpy(), m.weight.grad.numpy(), err


def test_detached_and_no_grad_outputs_come_back_without_a_graph():
    want, got = _outputs(torch), _outputs(ft)
    assert got[0] == want[0]
    assert got[0][0][0] == [True, False, False, False, False]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)  # (.numpy() raised: it required grad)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
    assert got[3] == want[3] == "element 0 of tensors does not require grad and does not have a grad_fn"


def _backward_inside(lib):
    """A compiled step that runs backward() inside and returns a tensor whose graph that backward did not free
    (a GAN's D step returning G's output): the result keeps its graph, as torch.compile's does; a result whose
    graph the inner backward freed (the loss) needs no node of its own."""
    nn = lib.nn
    w, v = nn.Parameter(lib.tensor([2.0])), nn.Parameter(lib.tensor([3.0]))

    def d_step(x):
        (v * v).sum().backward()
        return x * w
    step = lib.compile(d_step, **_kw(lib))
    out = []
    for k in (1.0, 2.0):
        y = step(lib.tensor([k]))
        out.append((y.requires_grad, v.grad.tolist()))
        y.sum().backward()
        out.append(w.grad.tolist())
    a, b = nn.Parameter(lib.tensor([1.0, 2.0])), nn.Parameter(lib.tensor([0.5]))
    opt = lib.optim.SGD([a], lr=0.1)

    def train(x):  # the output read after the update: its gradient is w.r.t. the updated leaf, as in eager
        opt.zero_grad()
        loss = (a * x).pow(2).sum()
        loss.backward()
        opt.step()
        return loss, (a * b * x).sum()
    step2 = lib.compile(train, **_kw(lib))
    for _ in range(3):
        loss, o = step2(lib.tensor([1.0, -1.0]))
        o.backward()
        out.append((round(loss.item(), 5), o.requires_grad, np.round(a.detach().numpy(), 6).tolist(),
                    np.round(b.grad.numpy(), 6).tolist(), np.round(a.grad.numpy(), 6).tolist()))
    return out


def test_backward_inside_keeps_intact_outputs_graph():
    assert _backward_inside(ft) == _backward_inside(torch)


def test_training_step_returning_loss_stays_one_program():
    """The usual step (zero_grad, backward, step, return loss): no node, so its donating steady program runs."""
    ft.manual_seed(0)  # (its weights: not whatever the tests before left the generator at)
    lin = ft.nn.Linear(3, 1)
    opt = ft.optim.SGD(lin.parameters(), lr=0.1)
    x, y = ft.ones(4, 3), ft.zeros(4, 1)

    @ft.compile
    def step():
        opt.zero_grad()
        loss = ((lin(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    lin2 = torch.nn.Linear(3, 1)  # (the same step in torch, from the same weights)
    with torch.no_grad():
        lin2.weight.copy_(torch.tensor(lin.weight.detach().numpy()))
        lin2.bias.copy_(torch.tensor(lin.bias.detach().numpy()))
    before = ft._compile.runner.COUNTERS["steady_calls"]
    losses = [step().item() for _ in range(4)]
    assert step.stats["traces"] <= 2 and step.stats["eager_calls"] == 0
    assert ft._compile.runner.COUNTERS["steady_calls"] - before >= 2
    opt2 = torch.optim.SGD(lin2.parameters(), lr=0.1)
    expect = []
    for _ in range(4):
        opt2.zero_grad()
        loss = ((lin2(torch.ones(4, 3)) - torch.zeros(4, 1)) ** 2).mean()
        loss.backward()
        opt2.step()
        expect.append(loss.item())
    np.testing.assert_allclose(losses, expect, rtol=1e-5)
