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
