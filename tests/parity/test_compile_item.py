"""``.item()`` inside a compiled function is a traced Python number (``_symbolic.item``), as torch 2.13's
``torch.compile`` captures it (``x * x.sum().item()`` compiles with fullgraph=True there): a training step that
``return loss.item()`` was a graph break, so the whole step ran eagerly on every call; now it is one program and
each call returns a Python float. A use that needs the value on the host (a branch, ``float()``, formatting,
``math.sqrt``) is still a graph break, with the eager result. Values against the same steps run eagerly, and the
step's losses against torch 2.13."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _setup(L):
    L.manual_seed(0)
    m = L.nn.Linear(3, 2)
    with L.no_grad():
        m.weight.copy_(L.tensor(np.arange(6.0).reshape(2, 3) / 10, dtype=L.float32))
        m.bias.fill_(0.1)
    opt = L.optim.SGD(m.parameters(), lr=0.1)
    x = L.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=L.float32)
    y = L.tensor([0, 1, 1, 0])
    return m, opt, x, y


BODIES = {
    "return loss.item()": (lambda loss, out, y: loss.item(), True),
    "a dict of metrics": (lambda loss, out, y: {"loss": loss.item(), "correct": (out.argmax(1) == y).sum().item()},
                          True),
    "arithmetic on items": (lambda loss, out, y: (out * loss.item()).sum().item() * 2 + 1, True),
    "a bool item": (lambda loss, out, y: (loss > 0).item(), True),
    "an int item": (lambda loss, out, y: out.argmax(1).sum().item() - 1, True),
    "a branch on it": (lambda loss, out, y: 1 if loss.item() > 0.5 else 0, False),
    "formatting it": (lambda loss, out, y: f"{loss.item():.3f}", False),
    "float() of it": (lambda loss, out, y: float(loss.item()) * 2, False),
}


def _run(L, body, compiled):
    m, opt, x, y = _setup(L)

    def step():
        opt.zero_grad()
        out = m(x)
        loss = L.nn.functional.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return body(loss, out, y)
    f = ft.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [f() for _ in range(4)], f


def _close(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, str) or isinstance(a, bool) or isinstance(a, int) and not isinstance(a, float):
        return a == b and type(a) is type(b)
    return type(a) is type(b) and abs(a - b) <= 1e-6 * max(1.0, abs(b))


@pytest.mark.parametrize("name", sorted(BODIES))
def test_item_in_a_compiled_step(name):
    body, one_program = BODIES[name]
    eager, _ = _run(ft, body, False)
    comp, f = _run(ft, body, True)
    want, _ = _run(torch, body, False)
    assert all(_close(a, b) for a, b in zip(comp, eager)), (comp, eager)
    assert all(_close(a, b) for a, b in zip(comp, want)), (comp, want)
    if one_program:
        assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0
    else:
        assert f.stats["eager_calls"] == 4


def test_fullgraph_with_item_compiles_and_a_branch_on_it_raises():
    f = ft.compile(lambda x: x * x.sum().item(), fullgraph=True)
    assert f(ft.ones(3)).tolist() == [3.0, 3.0, 3.0]
    assert f(ft.ones(3) * 2).tolist() == [12.0, 12.0, 12.0] and f.stats["traces"] == 1
    g = ft.compile(lambda x: x * 2 if x.sum().item() > 0 else x, fullgraph=True)
    with pytest.raises(ft._compile.GraphBreak, match=r"\.item\(\)"):
        g(ft.ones(3))


def test_items_appended_to_a_list_each_call():
    losses = []
    m, opt, x, y = _setup(ft)

    @ft.compile
    def step():
        opt.zero_grad()
        loss = ft.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            step()
    want, _ = _run(ft, BODIES["return loss.item()"][0], False)
    assert len(losses) == 3 and all(type(v) is float for v in losses)
    np.testing.assert_allclose(losses, want[:3], rtol=1e-6)
