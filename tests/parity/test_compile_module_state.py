"""Module state a compiled forward changes by rebinding, and global module hooks, against real torch (each case:
torch eager, and ``functorch_lite.compile``; torch.compile gives torch eager's values in each). Before:

- rebinding a registered buffer inside a compiled forward (``self.ema = self.ema * 0.5 + m``,
  ``self.steps = self.steps + 1``, ``register_buffer`` / ``self._buffers[k] = t`` inside) left the trace's value
  in the module: silent on that call, every later read or call raised (a leaked tracer). The buffers tables'
  changes are now put back after the trace and replayed after every call, as an attribute's rebinding is;
- a parameter, submodule or hook registered inside is a graph break (the call runs eagerly);
- global module hooks (``register_module_forward_hook`` / ``_forward_pre_hook`` / ``_full_backward_hook``) ran
  twice on the first compiled call (the traces) and never after: the calls run eagerly while they are registered.
"""
import warnings

import pytest
import torch

import functorch_lite as ft
from _parity import close




def _both(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return case(torch, lambda f: f), case(ft, ft.compile)


def _linear(L):
    lin = L.nn.Linear(2, 2)
    with L.no_grad():
        lin.weight.copy_(L.tensor([[0.5, -1.], [2., 0.25]]))
        lin.bias.fill_(0.1)
    return lin


def _rebound_buffers(L, C):
    class M(L.nn.Module):
        def __init__(s):
            super().__init__()
            s.lin = _linear(L)
            s.register_buffer("ema", L.zeros(2))
            s.register_buffer("steps", L.tensor(0))
            s.register_buffer("gone", L.ones(1))

        def forward(s, x):
            h = s.lin(x)
            s.ema = s.ema * 0.5 + h.detach().mean(0)
            s.steps = s.steps + 1
            if not hasattr(s, "first"):
                s.register_buffer("first", x.sum(0), persistent=False)
            s._buffers["direct"] = x[0] * 3
            s.gone = None
            s.last = h
            return h.relu().sum() + s.first.sum()
    m = M()
    cm = C(m)
    opt = L.optim.SGD(m.parameters(), lr=0.1)
    out = []
    for i in range(4):
        loss = cm(L.arange(4.).view(2, 2) + i)
        loss.backward()
        opt.step()
        opt.zero_grad()
        out.append([loss.item(), m.ema.tolist(), m.steps.item(), str(m.steps.dtype), m.first.tolist(),
                    m.direct.tolist(), m.gone, sorted(m.state_dict()), m.last.requires_grad,
                    m.lin.weight.tolist()])
    sd = m.state_dict()
    out.append([sd["ema"].tolist(), sd["steps"].item()])
    try:
        m.last.sum().backward()  # (its graph was freed by the loop's backward, in torch's too)
    except RuntimeError as e:
        out.append(str(e).split(" (")[0])
    return out


def test_rebinding_buffers_inside_a_compiled_forward():
    ref, got = _both(_rebound_buffers)
    assert close(got, ref), (got, ref)


def test_rebinding_buffers_is_one_program_per_guard():
    ft._dynamo.utils.counters.clear()
    _rebound_buffers(ft, ft.compile)
    # two programs: the first call registers ``first`` (a new buffer), the later ones do not
    assert ft._dynamo.utils.counters["stats"]["unique_graphs"] == 2
    assert not ft._dynamo.utils.counters["graph_break"]


def test_a_rebound_buffer_in_a_whole_training_step():
    def run(L, C):
        class Norm(L.nn.Module):
            def __init__(s):
                super().__init__()
                s.lin = _linear(L)
                s.register_buffer("mean", L.zeros(2))

            def forward(s, x):
                s.mean = 0.9 * s.mean + 0.1 * x.mean(0)
                return s.lin(x - s.mean)
        m = Norm()
        opt = L.optim.AdamW(m.parameters(), lr=0.05)

        @C
        def step(x, y):
            opt.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        x = L.arange(16.).view(8, 2).sin()
        losses = [step(x + i, x.cos() * i).item() for i in range(5)]
        return losses, m.mean.tolist(), m.lin.weight.tolist()
    ref, got = run(torch, lambda f: f), run(ft, ft.compile)
    assert close(got, ref), (got, ref)


def test_registering_a_parameter_or_hook_inside_is_a_graph_break():
    def run(L, C):
        class M(L.nn.Module):
            def __init__(s):
                super().__init__()
                s.lin = _linear(L)
                s.calls = []

            def forward(s, x):
                if "scale" not in s._parameters:
                    s.register_parameter("scale", L.nn.Parameter(L.ones(2)))
                s.lin.register_forward_hook(lambda mod, a, o: s.calls.append(1))
                return (s.lin(x) * s.scale).sum()
        m = M()
        cm = C(m)
        out = []
        for i in range(3):
            y = cm(L.ones(1, 2) * i)
            y.backward()
            out.append([y.item(), len(m.calls), sorted(n for n, _ in m.named_parameters())])
        return out + [m.scale.grad.tolist()]
    ref, got = _both(run)
    assert close(got, ref), (got, ref)
    with pytest.raises(ft._dynamo.exc.Unsupported, match="registering or removing a module's parameter"):
        run(ft, lambda f: ft.compile(f, fullgraph=True))


def _global_hooks(L, C):
    seen = []
    lin = _linear(L)
    cm = C(lin)

    @C
    def step(x):
        return lin(x).sum()
    out = [cm(L.ones(1, 2) * i).tolist() for i in range(2)]
    mm = L.nn.modules.module
    handles = [mm.register_module_forward_hook(lambda m, a, o: (seen.append(("f", type(m).__name__)), o * 2)[1]),
               mm.register_module_forward_pre_hook(lambda m, a: seen.append("pre")),
               mm.register_module_full_backward_hook(lambda m, gi, go: seen.append("bw"))]
    try:
        for i in range(3):
            y = cm(L.ones(1, 2) * i)
            y.sum().backward()
            out += [y.tolist(), step(L.ones(1, 2) * i).item()]
    finally:
        for h in handles:
            h.remove()
    for i in range(2):
        out += [cm(L.ones(1, 2) * i).tolist(), step(L.ones(1, 2) * i).item()]
    return out + [lin.weight.grad.tolist()], seen


def test_global_module_hooks_run_on_every_call():
    ref, got = _both(_global_hooks)
    assert close(got, ref), (got, ref)


def test_global_module_hooks_under_fullgraph_name_the_cause():
    h = ft.nn.modules.module.register_module_forward_hook(lambda m, a, o: o)
    try:
        with pytest.raises(ft._dynamo.exc.Unsupported, match="global module hooks are registered"):
            ft.compile(_linear(ft), fullgraph=True)(ft.ones(2))
    finally:
        h.remove()
    assert ft.compile(_linear(ft), fullgraph=True)(ft.ones(2)).tolist() == pytest.approx([-0.4, 2.35])
