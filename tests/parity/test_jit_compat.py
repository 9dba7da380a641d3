"""``torch.jit`` spellings and ``torch._assert`` against real torch: model code written to be scriptable runs
unchanged and computes torch's values; the TorchScript-only parts refuse by name."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import functorch_lite as ft

from _parity import same


def _net(L):
    class Block(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(3, 2)
            with L.no_grad():
                self.lin.weight.copy_(L.tensor([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]]))
                self.lin.bias.copy_(L.tensor([0.1, -0.2]))

        @L.jit.unused
        def debug(self, x):
            return x

        @L.jit.ignore
        def host_side(self, x):
            return float(x.sum())

        @L.jit.export
        def scaled(self, x):
            return 2 * self.forward(x)

        def forward(self, x):
            L._assert(x.dim() == 2, "expected a 2-d input")
            out = L.jit.annotate(list, [])
            if not L.jit.is_scripting() and not L.jit.is_tracing():
                out.append(self.lin(x).relu())
            return out[0]
    return Block()


X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)


def test_scriptable_module_runs_eagerly_with_torchs_values():
    same(lambda L: (_net(L)(L.tensor(X, dtype=L.float32)), _net(L).scaled(L.tensor(X, dtype=L.float32)),
                    _net(L).host_side(L.ones(2)), L.jit.is_scripting(), L.jit.is_tracing()))


def test_script_and_trace_compute_what_the_module_computes():
    def f(L):
        m = _net(L)
        x = L.tensor(X, dtype=L.float32)
        traced = L.jit.trace(lambda t: (t * 3).sum(1), (x,))
        return m(x), L.jit.script(L.nn.Sequential(L.nn.ReLU(), L.nn.Hardtanh(0.0, 0.5)))(x), traced(x)
    same(f)
    m = ft.nn.Linear(2, 2)
    assert ft.jit.script(m) is m


def test_assert():
    same(lambda L: L._assert(True, "fine"))
    same(lambda L: L._assert(False, "boom"))
    same(lambda L: L._assert(L.tensor(False), "boom on a tensor"))
    same(lambda L: _net(L)(L.ones(3)))


def test_ignore_forms_and_errors():
    def f(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            g = L.jit.ignore(drop=True)(lambda x: x + 1)
            h = L.jit.ignore(drop=False)(lambda x: x * 2)
        return g(1), h(2), [(x.category.__name__, str(x.message)) for x in w]
    same(f)
    same(lambda L: L.jit.ignore(3))


def test_torchscript_serialization_is_refused_by_name(tmp_path):
    with pytest.raises(RuntimeError, match="torch.jit.save: functorch_lite has no TorchScript"):
        ft.jit.save(ft.nn.Linear(1, 1), str(tmp_path / "m.pt"))
    with pytest.raises(RuntimeError, match="torch.jit.load: functorch_lite has no TorchScript"):
        ft.jit.load(str(tmp_path / "m.pt"))
    assert ft.jit.Final is __import__("typing").Final
