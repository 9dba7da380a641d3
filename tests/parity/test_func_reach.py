"""Eager autograd through ``func.vmap`` and ``utils.checkpoint``, against real torch: what the function cuts from
the graph and which tensors it reaches. Found by a helper's red-team (each case failed before):

- ``.detach()`` and ``no_grad`` inside a vmapped function did not stop the gradient of the recorded
  vmap call (``x.detach() * x`` gave 2x; a target network's no_grad output was differentiated);
- tensors the function reaches through a default argument, a class attribute, a user module's attribute
  called as ``md.NET(x)``, a ``__slots__`` object or a deque got no ``.grad`` (vmap), and a module in a class
  attribute or a user module's attribute none under checkpoint (the walk read called names only as calls);
- a parameter a checkpointed function does not use got a zero ``.grad`` (torch: None; AdamW's decay then moved it);
- ``counter[0] += 1`` inside a checkpointed function raised while its backward was traced.
"""
import collections
import importlib
import sys

import numpy as np
import pytest

from _parity import both as _both, close, grad_of as _g

XA = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], np.float32)


def _linear(L, out=1):
    m = L.nn.Linear(3, out)
    with L.no_grad():
        m.weight.copy_(L.tensor(np.linspace(-0.5, 0.5, 3 * out, dtype=np.float32).reshape(out, 3)))
        m.bias.fill_(0.1)
    return m


_MODULES: list = []


@pytest.fixture(autouse=True)
def _module_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _MODULES[:] = [tmp_path]
    yield
    for name in [n for n in sys.modules if n.startswith("_user_models_")]:
        del sys.modules[name]


def _user_module():
    """A fresh module of the user's own (a file outside the installed packages), as ``import model_def``."""
    name = f"_user_models_{len(sys.modules)}"
    (_MODULES[0] / f"{name}.py").write_text("NET = None\n")
    return importlib.import_module(name)


def _vmap_cuts(L):
    x = L.tensor(XA, requires_grad=True)
    L.func.vmap(lambda a: a.detach() * a)(x).sum().backward()
    m = _linear(L)

    def td(a):
        q = m(a)
        with L.no_grad():
            tgt = m(a * 0.5) + 1.0
        return (q - tgt).pow(2).sum()
    L.func.vmap(td)(L.tensor(XA)).sum().backward()
    return [_g(x), _g(m.weight), _g(m.bias)]


class _Slots:
    __slots__ = ("w",)


def _vmap_reach(L):
    w = L.tensor([0.5, 1., -1.], requires_grad=True)
    out = []
    L.func.vmap(lambda a, w=w: (a * w).sum())(L.tensor(XA)).sum().backward()
    out.append(_g(w))

    class Holder:
        scale = L.tensor([1., 2., 3.], requires_grad=True)
        model = _linear(L)
    L.func.vmap(lambda a: (a * Holder.scale).sum() + Holder.model(a).sum())(L.tensor(XA)).sum().backward()
    out += [_g(Holder.scale), _g(Holder.model.weight)]
    md = _user_module()
    md.NET = _linear(L, 2)
    L.func.vmap(lambda a: md.NET(a).sum())(L.tensor(XA)).sum().backward()
    out.append(_g(md.NET.weight))
    s = _Slots()
    s.w = L.tensor([1., 1., 2.], requires_grad=True)
    q = collections.deque([L.tensor([3., 1., 1.], requires_grad=True)])
    L.func.vmap(lambda a: (a * s.w).sum() + (a * q[0]).sum())(L.tensor(XA)).sum().backward()
    return out + [_g(s.w), _g(q[0])]


def _checkpoint_reach(L):
    x = L.tensor(XA, requires_grad=True)

    class Holder:
        model = _linear(L)
    md = _user_module()
    md.NET = _linear(L, 2)
    L.utils.checkpoint.checkpoint(lambda a: Holder.model(a).sum() + md.NET(a).sum(), x,
                                  use_reentrant=False).backward()
    return [_g(x), _g(Holder.model.weight), _g(md.NET.weight)]


def _checkpoint_unused(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.used = _linear(L, 3)
            self.unused = _linear(L, 3)

        def forward(self, x):
            return self.used(x)
    net = Net()
    opt = L.optim.AdamW(net.parameters(), lr=0.1, weight_decay=0.5)
    y = L.tensor(np.ones(3, np.float32), requires_grad=True)
    out = []
    for _ in range(2):
        x = L.tensor(XA, requires_grad=True)
        L.utils.checkpoint.checkpoint(lambda a, b: net(a), x, y, use_reentrant=False).sum().backward()
        out += [_g(net.unused.weight), _g(y), _g(net.used.bias)]
        opt.step()
        opt.zero_grad()
    return out + [net.unused.weight.detach().numpy().tolist()]


def _checkpoint_counter(L):
    cnt = [0]

    def f(a):
        cnt[0] += 1
        return a.sin().sum()
    x = L.tensor(XA, requires_grad=True)
    L.utils.checkpoint.checkpoint(f, x, use_reentrant=False).backward()
    return _g(x)  # (torch counts 2: it runs the function again in backward; functorch_lite runs it once)


@pytest.mark.parametrize("case", [_vmap_cuts, _vmap_reach, _checkpoint_reach, _checkpoint_unused,
                                  _checkpoint_counter], ids=lambda c: c.__name__.strip("_"))
def test_gradients_match_torch(case):
    t, f = _both(case)
    assert close(t, f, rel=1e-5, abs=1e-6), (t, f)
