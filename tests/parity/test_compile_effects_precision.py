"""Compiled functions against torch 2.13 eager, for what a red-team found lost or changed by compiling:
- half-precision rounding: XLA kept bfloat16 intermediates in float32 across ops (its excess precision), so
  ``(x.bfloat16() + 1e-3).float()`` compiled gave values no bfloat16 holds (1000 of 1001 differed from eager);
- an append to a list the walk reaches below its depth limit (``hist["a"]["b"]["c"].append(v)``, a list in a
  list) happened on the trace only: every cached call skipped it;
- ``del self.flag`` of a plain attribute in a compiled module's forward was not replayed on cached calls (the
  module kept the attribute, and every later call took the wrong branch); a deletion is now replayed as a set
  is, on modules and plain objects alike (it was a graph break on a plain object)."""
import numpy as np
import torch

import functorch_lite as ft


def _x(L):
    return L.tensor(np.linspace(-2, 2, 1001, dtype=np.float32))


HALF = {
    "bf16 add": lambda L, t: (t.bfloat16() + 1e-3).float(),
    "bf16 affine": lambda L, t: (t.to(L.bfloat16) * 1.001 + 0.5).float(),
    "bf16 exp": lambda L, t: (t.to(L.bfloat16).exp() - 1).float(),
    "fp16 chain": lambda L, t: ((t.half() * 3.3).sin() * 1.7 + 0.1).float(),
    "bf16 tanh chain": lambda L, t: ((t.bfloat16() * 1.37).tanh() * 1.37).float(),
}


def test_compiled_half_precision_rounds_each_op_as_eager_and_torch():
    for name, g in HALF.items():
        want = g(torch, _x(torch)).numpy()
        eager = g(ft, _x(ft)).numpy()
        comp = ft.compile(lambda t, g=g: g(ft, t))(_x(ft)).numpy()
        assert np.array_equal(comp, eager), name
        assert np.array_equal(comp, want), name


def test_compiled_autocast_step_equals_eager():
    def run(compiled):
        ft.manual_seed(0)
        m = ft.nn.Sequential(ft.nn.Linear(8, 16), ft.nn.GELU(), ft.nn.Linear(16, 4))
        opt = ft.optim.SGD(m.parameters(), lr=0.1)
        x = ft.tensor(np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8))
        y = ft.tensor([0, 1, 2, 3])

        def step():
            opt.zero_grad()
            with ft.autocast("cpu", dtype=ft.bfloat16):
                loss = ft.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss
        if compiled:
            step = ft.compile(step)
        return [float(step()) for _ in range(3)], m[0].weight.detach().numpy()
    (a, wa), (b, wb) = run(False), run(True)
    assert a == b
    np.testing.assert_array_equal(wa, wb)


def _nested(L, compiled):
    d = {"a": {"b": {"c": []}}}
    deep = {"a": {"b": {"c": {"d": []}}}}
    st = {"nested": {"l": [[0]]}}

    def f(x):
        d["a"]["b"]["c"].append(1)
        deep["a"]["b"]["c"]["d"].append(2)
        st["nested"]["l"][0].append(3)
        inner = d["a"]["b"]["c"]
        inner.append(4)
        return x * 2
    g = L.compile(f) if compiled and L is ft else f
    for _ in range(4):
        g(L.ones(1))
    return d, deep, st


def test_appends_to_deeply_nested_lists_happen_on_every_call():
    want = _nested(torch, False)
    assert _nested(ft, True) == want == _nested(ft, False)


def _flag_module(L):
    class M(L.nn.Module):
        def forward(self, x):
            if hasattr(self, "flag"):
                del self.flag
                return x + 1
            self.flag = True
            return x - 1
    return M()


def test_del_of_a_module_attribute_is_replayed():
    want = []
    m = _flag_module(torch)
    for _ in range(5):
        want.append((m(torch.zeros(1)).item(), hasattr(m, "flag")))
    m = _flag_module(ft)
    cm = ft.compile(m)
    got = [(cm(ft.zeros(1)).item(), hasattr(m, "flag")) for _ in range(5)]
    assert got == want
    stats = cm._compiled.stats
    assert stats["eager_calls"] == 0 and stats["cache_hits"] >= 3


def test_del_of_a_plain_objects_attribute_is_replayed_without_a_break():
    def run(L, compiled):
        class O:
            pass
        o = O()

        def f(x):
            if hasattr(o, "flag"):
                del o.flag
                return x + 1
            o.flag = 5
            return x - 1
        g = L.compile(f) if compiled else f
        return [(g(L.zeros(1)).item(), hasattr(o, "flag")) for _ in range(5)], g
    want, _ = run(torch, False)
    got, g = run(ft, True)
    assert got == want
    assert g.stats["eager_calls"] == 0 and g.stats["cache_hits"] == 3
