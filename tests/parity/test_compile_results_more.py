"""Compiled results beyond tensors and containers, view aliasing of view arguments, ``return p.grad``,
``memory_analysis`` of the program that runs, and ``utils.memory``'s rule of thumb: against real torch 2.13 (or
XLA's own figures, where the figure is XLA's)."""
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.utils import memory


@pytest.fixture(autouse=True)
def _fresh():
    ft._dynamo.reset()
    yield
    ft._dynamo.reset()


@dataclass
class ModelOutput:
    loss: object = None
    logits: object = None
    extra: list = field(default_factory=list)


@dataclass
class HFOutput(OrderedDict):
    """HF's ``ModelOutput`` pattern: a dataclass that is also an OrderedDict filled in ``__post_init__``."""
    loss: object = None
    logits: object = None

    def __post_init__(self):
        for k in ("loss", "logits"):
            v = getattr(self, k)
            if v is not None:
                self[k] = v


class Holder:
    def __init__(self, t):
        self.t = t
        self.n = 1


class SlotHolder:
    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


def _c(lib, fn):
    """``lib.compile(fn)`` with torch's aot_eager backend (inductor's C++ compile would dominate the run time)."""
    return lib.compile(fn, backend="aot_eager")


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().tolist())


def _linear(lib):
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.arange(6.).reshape(2, 3) / 10)
        m.bias.fill_(0.5)
    return m


def _dataclass_model(lib):
    m = _linear(lib)

    def fwd(x, y=None):
        lg = m(x)
        loss = None if y is None else lg.pow(2).mean()
        return ModelOutput(loss=loss, logits=lg, extra=[lg.sum(), 3])
    cf = _c(lib, fwd)
    x = lib.arange(12.).reshape(4, 3)
    o1, o2 = cf(x, 1), cf(x, 1)
    o2.loss.backward()
    o3 = cf(x)
    with lib.no_grad():
        o4 = cf(x, 1)
    return m, o1, o2, o3, o4


def test_dataclass_result_is_a_fresh_object_of_results_with_autograd():
    tm, *t = _dataclass_model(torch)
    fm, *f = _dataclass_model(ft)
    for to, fo in zip(t, f):
        assert type(fo) is ModelOutput
        np.testing.assert_allclose(_np(fo.logits), _np(to.logits), rtol=1e-6)
        assert fo.logits.requires_grad == to.logits.requires_grad
        assert (fo.logits.grad_fn is None) == (to.logits.grad_fn is None)
        assert (fo.loss is None) == (to.loss is None)
        if to.loss is not None:
            np.testing.assert_allclose(_np(fo.loss), _np(to.loss), rtol=1e-6)
            assert fo.loss.requires_grad == to.loss.requires_grad
            assert (fo.loss.grad_fn is None) == (to.loss.grad_fn is None)
        assert fo.extra[1] == 3 and abs(fo.extra[0].item() - to.extra[0].item()) < 1e-4
    assert (f[0] is f[1]) == (t[0] is t[1]) is False
    np.testing.assert_allclose(_np(fm.weight.grad), _np(tm.weight.grad), rtol=1e-5)
    np.testing.assert_allclose(_np(fm.bias.grad), _np(tm.bias.grad), rtol=1e-5)


def test_hf_style_ordereddict_dataclass_and_plain_object_results():
    def prog(lib):
        h = _c(lib, lambda x: HFOutput(loss=x.sum(), logits=x * 2))(lib.ones(2))
        f = _c(lib, lambda x: Holder(x * 2))
        a1, a2 = f(lib.ones(2)), f(lib.ones(2))
        return (type(h).__name__, list(h.keys()), h["loss"].item(), h.logits.tolist(), type(a1).__name__,
                a1 is a2, a1.t.tolist(), a1.n, a2.t.tolist())
    assert prog(ft) == prog(torch)


def test_dataclass_argument_returned_is_itself():
    def prog(lib):
        @dataclass
        class B:
            x: object
            y: object
        b = B(lib.ones(2), lib.zeros(2))
        same = _c(lib, lambda b: b)(b) is b
        r = _c(lib, lambda b: B(b.x + 1, b.y))(b)
        return same, r.x.tolist(), r.y is b.y
    assert prog(ft) == prog(torch) == (True, [2.0, 2.0], True)


def test_unrebuildable_object_holding_new_tensors_graph_breaks_not_leaks():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = ft.compile(lambda x: SlotHolder(x * 2))(ft.ones(2))
        s2 = ft.compile(lambda x: SlotHolder(x * 2))(ft.ones(2))
    t = SlotHolder(torch.ones(2) * 2)
    assert s.t.tolist() == s2.t.tolist() == t.t.tolist()
    assert any("graph break" in str(x.message) and "SlotHolder" in str(x.message) for x in w)


def _view_alias(lib):
    def view_ret(x):
        return x[1:], x.t(), x[:, 1]
    view_ret = _c(lib, view_ret)
    out = []
    for mk in (lambda: lib.zeros(2, 3) + lib.arange(6.).reshape(2, 3),      # a fresh tensor
               lambda: lib.arange(6.).reshape(2, 3),                         # a view argument
               lambda: lib.arange(12.).reshape(4, 3)[1:3],                   # a sliced batch
               lambda: lib.arange(6.).reshape(3, 2).t()):                    # a transposed view
        a = mk()
        v1, v2, v3 = view_ret(a)
        a[0, 0] = 100.
        v1[0, 2] = -5.
        v3[0] = 7.
        out.append([t.tolist() for t in (a, v1, v2, v3)] + [[t.stride() for t in (v1, v2, v3)],
                                                             [t.storage_offset() for t in (v1, v2, v3)]])
    X = lib.arange(20.).reshape(10, 2)
    g = _c(lib, lambda b: b[:, 0])
    cols = [g(X[i:i + 2]) for i in range(0, 6, 2)]
    X.add_(1)
    out.append([c.tolist() for c in cols])
    return out


def test_views_of_a_view_argument_alias_it():
    assert _view_alias(ft) == _view_alias(torch)


def test_return_grad_is_the_grad_object():
    def prog(lib):
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.full((2,), 5.)
        r = _c(lib, lambda p: p.grad)(p)

        def bump(p):
            p.grad.mul_(2)
            return p.grad
        r2 = _c(lib, bump)(p)
        return r is p.grad, r2 is p.grad, p.grad.tolist(), r.tolist()
    assert prog(ft) == prog(torch) == (True, True, [10.0, 10.0], [10.0, 10.0])


def _step_fixture(opt_cls, **kw):
    m = ft.nn.Sequential(ft.nn.Linear(64, 128), ft.nn.ReLU(), ft.nn.Linear(128, 10))
    opt = opt_cls(m.parameters(), **kw)
    x = ft.linspace(-1, 1, 32 * 64).reshape(32, 64)

    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    return m, opt, x, ft.compile(step)


def _nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


@pytest.mark.parametrize("opt_cls,kw", [(ft.optim.Adam, {"lr": 1e-3}), (ft.optim.SGD, {"lr": 0.1})])
def test_memory_analysis_is_the_donating_program(opt_cls, kw):
    m, opt, x, cs = _step_fixture(opt_cls, **kw)
    for _ in range(2):
        cs(x)
    w = m[0].weight.detach().clone()
    ma = cs.memory_analysis(x)
    assert bool((m[0].weight == w).all())  # (analysing runs nothing)
    params = _nbytes(m.parameters())
    grads = _nbytes(p.grad for p in m.parameters())
    state = _nbytes(v for s in opt.state.values() for v in s.values() if hasattr(v, "numel"))
    # the parameters, their .grad buffers and the optimizer state are donated: updated in place
    assert ma["alias_bytes"] >= params + grads + state > 0
    if opt_cls is ft.optim.Adam:  # (SGD's optax chain also keeps 0-d counters torch's state does not show)
        assert ma["alias_bytes"] == params + grads + state
    assert ma["argument_bytes"] >= params + grads + state + x.numel() * 4
    assert ma["peak_bytes"] == ma["argument_bytes"] + ma["output_bytes"] + ma["temp_bytes"] - ma["alias_bytes"]
    assert cs.stats["traces"] == 1


def test_memory_analysis_of_a_graph_break_is_a_public_error():
    m = ft.nn.Linear(4, 2)

    def step(x):
        if x.sum() > 0:  # (Python branching on a tensor's value: a graph break)
            return m(x).sum()
        return m(x).mean()
    cs = ft.compile(step)
    x = ft.ones(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cs(x)
    with pytest.raises(ft._dynamo.exc.Unsupported, match="no single XLA program") as e:
        cs.memory_analysis(x)
    assert "Python control flow on a tensor's value" in str(e.value)
    with pytest.raises(RuntimeError, match="graph-breaks"):
        ft.compile(step).memory_analysis(x)  # (never called: the analysis traces it)


def test_compare_takes_a_compiled_module():
    m = ft.nn.Linear(64, 10)
    x = ft.ones(8, 64)
    r = memory.compare(ft.compile(m), x, model=m)
    assert r["rule_of_thumb"]["params"] == 64 * 10 * 4 + 40
    assert r["xla"]["output_bytes"] == 8 * 10 * 4
    with pytest.raises(TypeError, match="expected a function from functorch_lite.compile"):
        memory.compare(m, x, model=m)


def test_training_memory_rule_sums_groups():
    m3 = ft.nn.Linear(100, 100)
    sgd = ft.optim.SGD([{"params": [m3.weight], "momentum": 0.0}, {"params": [m3.bias], "momentum": 0.9}], lr=0.1)
    assert memory.training_memory(m3, sgd)["optimizer_state"] == 400
    sgd2 = ft.optim.SGD([{"params": [m3.weight], "momentum": 0.9}, {"params": [m3.bias], "momentum": 0.0}], lr=0.1)
    assert memory.training_memory(m3, sgd2)["optimizer_state"] == 40000
    assert memory.training_memory(m3, sgd2, policy="fp16")["optimizer_state"] == 20000


@pytest.mark.parametrize("name,kw", [("Adam", {}), ("Adam", {"amsgrad": True}), ("AdamW", {}), ("NAdam", {}),
                                     ("RAdam", {}), ("Adamax", {}), ("Adadelta", {}), ("ASGD", {}),
                                     ("Rprop", {}), ("Adafactor", {}), ("Adagrad", {}), ("SGD", {"momentum": 0.9}),
                                     ("RMSprop", {"momentum": 0.9, "centered": True})])
def test_training_memory_rule_matches_torch_state_after_a_step(name, kw):
    """The rule before the first step == the full-size state tensors real torch holds after one (0-d counters
    such as ``step`` are not part of the rule)."""
    tm = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Linear(5, 3, bias=False))
    topt = getattr(torch.optim, name)(tm.parameters(), **kw)
    eager_state = len(topt.state) > 0  # (Adagrad makes its state in its constructor: then it is measured, all of it)
    tm(torch.ones(2, 6)).sum().backward()
    topt.step()
    expected = sum(v.numel() * v.element_size() for s in topt.state.values() for v in s.values()
                   if isinstance(v, torch.Tensor) and (eager_state or v.dim() > 0))
    fm = ft.nn.Sequential(ft.nn.Linear(6, 5), ft.nn.Linear(5, 3, bias=False))
    fopt = getattr(ft.optim, name)(fm.parameters(), **kw)
    assert memory.training_memory(fm, fopt)["optimizer_state"] == expected > 0


def test_training_step_loss_is_an_autograd_tensor_with_a_freed_graph():
    def prog(lib):
        m = _linear(lib)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = m(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss
        cs = _c(lib, step)
        x = lib.ones(4, 3)
        out = []
        for _ in range(3):  # (the first call, then the steady state)
            loss = cs(x)
            out.append((round(loss.item(), 5), loss.requires_grad, type(loss.grad_fn).__name__, loss.is_leaf))
        errs = []
        for f in (lambda: loss.backward(), lambda: (loss * 2).backward()):
            try:
                f()
            except RuntimeError as e:
                errs.append(str(e).splitlines()[0])
        return out, errs, (loss * 2).requires_grad, (loss.detach() * 2).requires_grad, m.weight.tolist()
    f, t = prog(ft), prog(torch)
    assert f[0] == t[0] and f[1] == t[1] and len(t[1]) == 2 and f[2:4] == t[2:4]
    np.testing.assert_allclose(f[4], t[4], rtol=1e-5)


def test_compiled_module_reports_memory_analysis():
    """``compile(model).memory_analysis(x)``: the wrapped module's program, without running it (params unchanged)."""
    m = ft.nn.Linear(16, 8)
    cm = ft.compile(m)
    x = ft.ones(4, 16)
    w = m.weight.detach().clone()
    ma = cm.memory_analysis(x)
    assert ma["argument_bytes"] == (16 * 8 + 8 + 4 * 16) * 4
    assert ma["output_bytes"] == 4 * 8 * 4
    assert ft.equal(m.weight, w)


def test_named_results_come_back_from_one_program():
    """topk / max(dim) / sort / aminmax results (torch.return_types) are returned by the program, as torch.compile
    returns them; before, they were a graph break (every call eager)."""
    lin = ft.nn.Linear(8, 5)
    x = ft.randn(4, 8)

    def f(x):
        y = lin(x).softmax(-1)
        return y.topk(2), y.max(0), ft.aminmax(y), y.sort(1)
    cf = ft.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ft.no_grad():
            for _ in range(2):
                got = cf(x)
            want = f(x)
    assert cf.stats["eager_calls"] == 0 and cf.stats["traces"] == 1
    for g, w in zip(got, want):
        assert type(g) is type(w)
        for a, b in zip(g, w):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    assert got[0].indices.dtype == ft.int64 and got[2].min.shape == ()
