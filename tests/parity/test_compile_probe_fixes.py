"""What probes of compiled training steps and forwards found to differ from torch, silently, now matches it (each
case run with real torch eager and with ``functorch_lite.compile``):

- an optimizer's ``lr`` read after ``scheduler.step()`` inside the step (``return loss, group['lr']``) was the
  value before the step; two ``opt.step(); sched.step()`` pairs in one call used the old lr for the second step.
  Both now run eagerly (a graph break), with torch's values;
- a ``.grad`` the caller kept from an earlier step (``zero_grad()`` inside: torch's backward makes a new tensor)
  was overwritten by the next step, or its donated buffer raised when read;
- ``x.detach()`` returned by a compiled function was a view of ``x`` (its ``_base``), and after an in-place
  update of ``x`` under no_grad took ``x``'s graph: a backward through it reached ``x.grad``;
- ``functional_call(compile(model), {"weight": ...})`` ignored the values (zero gradients): torch's TypeError.
"""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _linear(L, bias=False):
    m = L.nn.Linear(3, 1, bias=bias)
    with L.no_grad():
        m.weight.copy_(L.tensor([[0.5, -0.2, 0.1]]))
        if bias:
            m.bias.zero_()
    return m


def _sched_case(L, wrap, variant):
    m = _linear(L)
    opt = L.optim.SGD(m.parameters(), lr=1.0, momentum=0.9)
    if variant == "onecycle_two_steps":
        sch = L.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    else:
        sch = L.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)

    def step(x):
        if variant in ("onecycle_two_steps", "two_steps"):
            for xb in x.chunk(2):
                opt.zero_grad()
                loss = m(xb).sum()
                loss.backward()
                opt.step()
                sch.step()
            return loss.detach()
        opt.zero_grad()
        loss = m(x).sum()
        loss.backward()
        opt.step()
        sch.step()
        if variant == "return_lr":
            return loss.detach(), opt.param_groups[0]["lr"]
        if variant == "return_dict_lr":
            return {"loss": loss.detach(), "lr": opt.param_groups[0]["lr"]}
        if variant == "lr_times_loss":
            return loss.detach() * opt.param_groups[0]["lr"]
        return loss.detach()
    f = wrap(step)
    out = []
    for i in range(3):
        r = f(L.tensor([[1.0, 0.0, 0.0], [0.0, 1.0 + i, 0.0]]))
        r = tuple(r.values()) if isinstance(r, dict) else r if isinstance(r, tuple) else (r,)
        out.append([float(v) for v in r])
    return out, m.weight.detach().numpy().copy(), sch.get_last_lr()


@pytest.mark.parametrize("variant", ["return_lr", "return_dict_lr", "lr_times_loss", "two_steps",
                                     "onecycle_two_steps", "plain"])
def test_lr_read_after_a_scheduler_step_inside_matches_torch(variant):
    want = _sched_case(torch, lambda f: f, variant)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step = []
        got = _sched_case(ft, lambda f: step.append(ft.compile(f)) or step[0], variant)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12)
    breaks = [str(w.message) for w in caught if "graph break" in str(w.message)]
    if variant == "plain":  # (a step that reads no lr after the scheduler's step stays one program)
        assert not breaks and step[0].stats["eager_calls"] == 0
    else:
        assert breaks and "after scheduler.step()" in breaks[0]


def _held_grad_case(L, wrap, read_inside):
    m = _linear(L, bias=True)
    opt = L.optim.SGD(m.parameters(), lr=0.1)
    prev = [L.zeros(1, 3)]

    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).sum()
        loss.backward()
        diff = (m.weight.grad - prev[0]).abs().sum()
        opt.step()
        return diff if read_inside else loss.detach()
    f = wrap(step)
    kept, outs = [], []
    for i in range(4):
        outs.append(float(f(L.tensor([[1.0 + i, 2.0 - i, 3.0]]))))
        kept.append(m.weight.grad)
        prev[0] = m.weight.grad
    return outs, [k.numpy().copy() for k in kept], [k is m.weight.grad for k in kept], m.weight.detach().numpy()


@pytest.mark.parametrize("read_inside", [False, True])
def test_grad_kept_across_compiled_steps_keeps_its_values(read_inside):
    want = _held_grad_case(torch, lambda f: f, read_inside)
    got = _held_grad_case(ft, ft.compile, read_inside)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-5)
    assert got[2] == want[2] == [False, False, False, True]
    np.testing.assert_allclose(got[3], want[3], rtol=1e-5)


def test_grad_not_kept_stays_on_the_steady_program():
    m = _linear(ft, bias=True)
    opt = ft.optim.SGD(m.parameters(), lr=0.1)
    x = ft.tensor([[1.0, 2.0, 3.0]])

    @ft.compile
    def step():
        opt.zero_grad()
        loss = m(x).pow(2).sum()
        loss.backward()
        opt.step()
        return loss
    from functorch_lite._compile import runner
    for _ in range(3):
        step()
    before = runner.COUNTERS["steady_calls"]
    g = [m.weight.grad]
    for _ in range(3):
        step()
        assert m.weight.grad is not g[-1]  # (a new tensor each step, as torch's backward after zero_grad())
        g.append(m.weight.grad)
    assert runner.COUNTERS["steady_calls"] - before == 3 and step.stats["eager_calls"] == 0


def _detach_case(L, wrap):
    f = wrap(lambda x: x.detach())
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    rows = []
    for _ in range(3):
        d = f(x)
        with L.no_grad():
            x.mul_(1.5)
        rows.append((d._base is None, d.requires_grad, d.grad_fn is None, d.tolist()))
        with pytest.raises(RuntimeError, match="does not require grad"):
            (d * 2).sum().backward()
    return rows, x.grad


def test_detach_returned_from_compiled_function_is_no_view_of_its_input():
    want = _detach_case(torch, lambda f: f)
    got = _detach_case(ft, ft.compile)
    assert got[0] == want[0] and got[1] is None and want[1] is None


def test_functional_call_of_compiled_module_with_unprefixed_keys_raises_as_torch():
    msgs = []
    for L in (torch, ft):
        m = L.nn.Linear(3, 2)
        cm = L.compile(m, backend="eager") if L is torch else ft.compile(m)
        params = {k: v.detach().clone() for k, v in m.named_parameters()}
        with pytest.raises(TypeError) as e:
            L.func.grad(lambda p: L.func.functional_call(cm, p, (L.ones(1, 3),)).sum())(params)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == ("cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or "
                                  "None expected)")
    # (with the wrapper's own keys, the gradients are the module's)
    m = ft.nn.Linear(3, 2)
    cm = ft.compile(m)
    params = {"_orig_mod." + k: v.detach().clone() for k, v in m.named_parameters()}
    g = ft.func.grad(lambda p: ft.func.functional_call(cm, p, (ft.ones(1, 3),)).sum())(params)
    np.testing.assert_allclose(g["_orig_mod.weight"].numpy(), np.ones((2, 3)))
