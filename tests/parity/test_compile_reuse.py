"""functorch_lite.compile reuses what a compiled function reaches (its slots) from one call to the next while
nothing it read has changed (_compile/state.py, ``discover_cached``). Each test changes one thing that reuse
must notice — a closure cell, a global, a module's tables, a tensor's storage or requires_grad, an optimizer's
groups, a list/dict/object in the closure, an argument aliasing the closure — and checks the compiled call
against the same function run eagerly (or known numbers). These run with the suite-wide self-check off
(``config.verify_discovery``), so they test what users run; the last test shows the self-check itself."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite import nn
from functorch_lite._compile.runner import COUNTERS, config

X = ft.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 4)


@pytest.fixture(autouse=True)
def _production_path(monkeypatch):
    monkeypatch.setattr(config, "verify_discovery", False)


def _lin(seed):
    ft.manual_seed(seed)
    return nn.Linear(3, 2)


def _same(a, b):
    np.testing.assert_allclose(np.asarray(a.detach()._array), np.asarray(b.detach()._array), rtol=1e-6, atol=1e-6)


def _known_lin(L):
    """A Linear(3, 2) of known weights ([[1, 2, 3], [4, 5, 6]], bias 0), in torch or the facade."""
    lin = L.nn.Linear(3, 2)
    with L.no_grad():
        lin.weight.copy_(L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        lin.bias.zero_()
    return lin


def _reused(cf):
    """Three calls (the first traces, the second retraces once .grad fields exist, the third builds the donating
    program: from then on no Python of the function runs), reusing the first call's discovery throughout."""
    cf()
    plan = cf._plan
    cf()
    cf()
    assert cf._plan is plan and plan is not None


def test_closure_cell_rebound():
    lin, other = _lin(0), _lin(1)  # (everything is built before the reuse: building a module alone invalidates)

    def f():
        return lin(X)
    cf = ft.compile(f)
    _reused(cf)
    lin = other  # noqa: F841  (rebinds the cell f reads)
    _same(cf(), f())


_G = _lin(2)


def _uses_global():
    return _G(X)


def test_global_rebound():
    global _G
    cf = ft.compile(_uses_global)
    old, new = _G, _lin(3)
    _reused(cf)
    _G = new
    try:
        _same(cf(), _uses_global())
        assert not np.allclose(np.asarray(cf()._array), np.asarray(old(X).detach()._array))
    finally:
        _G = old


@pytest.mark.parametrize("change", ["setattr", "table", "delete", "register_buffer"])
def test_module_tables(change):
    model = nn.Sequential(_lin(0), nn.Tanh())
    spare = _lin(1)

    def f():
        return model(X) * 1.0
    cf = ft.compile(f)
    _reused(cf)
    if change == "setattr":
        model[0].weight = spare.weight
    elif change == "table":
        model[0]._parameters["weight"] = spare.weight
    elif change == "delete":
        del model[0].bias
        model[0].bias = None
    else:
        model[0].register_buffer("bias2", ft.ones(2))
        model[0] = spare
    _same(cf(), f())


def test_parameter_data_swapped_and_frozen():
    lin = _lin(0)
    opt = ft.optim.SGD(lin.parameters(), lr=0.5)

    def step():
        opt.zero_grad()
        loss = lin(X).sum()
        loss.backward()
        opt.step()
        return loss
    cf = ft.compile(step)
    _reused(cf)
    lin.weight.data = ft.zeros(2, 3)          # a new storage under the same Parameter
    w_before = lin.weight.detach().clone()
    cf()
    # d(sum(xW^T+b))/dW = column sums of X, for each output row
    expected = np.asarray(w_before._array) - 0.5 * np.tile(np.asarray(X._array).sum(0), (2, 1))
    np.testing.assert_allclose(np.asarray(lin.weight.detach()._array), expected, rtol=1e-6)
    lin.weight.requires_grad_(False)          # frozen: no gradient, no update
    frozen = lin.weight.detach().clone()
    b_before = lin.bias.detach().clone()
    cf()
    _same(lin.weight, frozen)
    assert lin.weight.grad is None
    np.testing.assert_allclose(np.asarray(lin.bias.detach()._array), np.asarray(b_before._array) - 0.5 * 2, rtol=1e-6)


@pytest.mark.parametrize("change", ["add_param_group", "params_list", "load_state_dict"])
def test_optimizer_groups(change):
    a, b = _lin(0), _lin(1)
    opt = ft.optim.SGD(a.parameters(), lr=0.5)
    saved = ft.optim.SGD(a.parameters(), lr=0.25).state_dict()

    def step():
        opt.zero_grad()
        loss = (a(X) + b(X)).sum()
        loss.backward()
        opt.step()
        return loss
    cf = ft.compile(step)
    _reused(cf)
    if change == "add_param_group":
        opt.add_param_group({"params": [b.weight], "lr": 0.25})
    elif change == "params_list":
        opt.param_groups[0]["params"].append(b.weight)
    else:
        opt.load_state_dict(saved)    # new group dicts: lr 0.25 for a
    moved = a.weight if change == "load_state_dict" else b.weight
    w = moved.detach().clone()
    cf()
    lr = 0.5 if change == "params_list" else 0.25
    colsums = np.tile(np.asarray(X._array).sum(0), (2, 1))
    np.testing.assert_allclose(np.asarray(moved.detach()._array), np.asarray(w._array) - lr * colsums, rtol=1e-6)
    # and the group the reuse now reads is the live one: a new lr there is the next call's
    opt.param_groups[1 if change == "add_param_group" else 0]["lr"] = 0.125
    w = moved.detach().clone()
    cf()
    np.testing.assert_allclose(np.asarray(moved.detach()._array), np.asarray(w._array) - 0.125 * colsums, rtol=1e-6)


def test_hyperparameter_changes():
    lin = _lin(0)
    opt = ft.optim.SGD(lin.parameters(), lr=0.5)

    def step():
        opt.zero_grad()
        lin(X).sum().backward()
        opt.step()
    cf = ft.compile(step)
    _reused(cf)
    traces = cf.stats["traces"]
    opt.param_groups[0]["lr"] = 0.125
    b = lin.bias.detach().clone()
    cf()
    np.testing.assert_allclose(np.asarray(lin.bias.detach()._array), np.asarray(b._array) - 0.125 * 2, rtol=1e-6)
    assert cf.stats["traces"] == traces                     # a traced value: no new program
    opt.param_groups[0]["weight_decay"] = 0.25              # torch's `if weight_decay != 0`: another program
    b = lin.bias.detach().clone()
    cf()
    np.testing.assert_allclose(np.asarray(lin.bias.detach()._array),
                               np.asarray(b._array) - 0.125 * (2 + 0.25 * np.asarray(b._array)), rtol=1e-6)
    assert cf.stats["traces"] > traces
    traces = cf.stats["traces"]
    opt.param_groups[0]["weight_decay"] = 0.5               # a nonzero weight decay's value is traced
    b = lin.bias.detach().clone()
    cf()
    np.testing.assert_allclose(np.asarray(lin.bias.detach()._array),
                               np.asarray(b._array) - 0.125 * (2 + 0.5 * np.asarray(b._array)), rtol=1e-6)
    assert cf.stats["traces"] == traces
    opt.param_groups[0]["momentum"] = 0.9                   # selects another update: a guard, a new program
    b = lin.bias.detach().clone()
    cf()                                                    # first momentum step: buf = grad
    np.testing.assert_allclose(np.asarray(lin.bias.detach()._array),
                               np.asarray(b._array) - 0.125 * (2 + 0.5 * np.asarray(b._array)), rtol=1e-6)
    assert cf.stats["traces"] > traces
    buf = np.asarray(opt.state[lin.bias]["momentum_buffer"]._array)
    b = lin.bias.detach().clone()
    cf()
    g = 2 + 0.5 * np.asarray(b._array)
    np.testing.assert_allclose(np.asarray(lin.bias.detach()._array), np.asarray(b._array) - 0.125 * (0.9 * buf + g),
                               rtol=1e-6)


@pytest.mark.parametrize("change", ["list", "dict", "object"])
def test_containers_in_the_closure(change):
    layers = [_lin(0)]
    table = {"head": _lin(1)}

    class Holder:
        pass
    holder = Holder()
    holder.model = _lin(2)

    def f():
        out = X
        for m in layers:
            out = out @ m.weight.T
        return out.sum() + table["head"](X).sum() + holder.model(X).sum()
    cf = ft.compile(f)
    extra, head, model = nn.Linear(2, 2), _lin(4), _lin(5)
    _reused(cf)
    if change == "list":
        layers.append(extra)
    elif change == "dict":
        table["head"] = head
    else:
        holder.model = model
    _same(cf(), f())


def test_argument_aliasing_the_closure():
    w = ft.ones(3)

    def f(x):
        x.mul_(2)
        return w.sum()
    cf = ft.compile(f)
    v = ft.ones(3)
    cf(v)
    cf(v)
    np.testing.assert_allclose(np.asarray(cf(w)._array), 6.0)   # x is w: the write shows in w.sum()
    np.testing.assert_allclose(np.asarray(w._array), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(np.asarray(cf(w[1:])._array), 10.0)  # a view of w: w = [2, 4, 4]
    np.testing.assert_allclose(np.asarray(v._array), [4.0, 4.0, 4.0])


def test_argument_views_of_other_geometry_are_a_recompile_not_the_first_views_program():
    """``f(a[1:])`` then ``f(a[:3])`` used to return the first view's values again, when a view argument was
    read through its view chain, a constant of the program (and, aliasing a closure tensor, ``f(w)`` after
    ``f(w[1:])`` wrote through the slice's program). A view argument that needs no gradient is now its values
    (one program for both slices); one the function writes to is read through its storage again."""
    a = ft.arange(4.)
    cf = ft.compile(lambda x: x * 10)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(cf(a[1:])._array), [10.0, 20.0, 30.0])
        np.testing.assert_array_equal(np.asarray(cf(a[:3])._array), [0.0, 10.0, 20.0])
    assert cf.stats["traces"] == 1
    w = ft.ones(3)

    def f(x):
        x.mul_(2)
        return w.sum()
    cf, want = ft.compile(f), torch.ones(3)
    for view in (False, True, False, True, False):
        got = cf(w[1:] if view else w)
        (want[1:] if view else want).mul_(2)
        np.testing.assert_array_equal(np.asarray(got._array), want.sum().numpy())
        np.testing.assert_array_equal(np.asarray(w._array), want.numpy())


def test_new_argument_tensors_each_call():
    lin = _lin(0)
    cf = ft.compile(lambda x: lin(x))
    for i in range(4):
        x = ft.full((2, 3), float(i))
        _same(cf(x), lin(x))
    assert cf.stats["traces"] == 1


def _twin():
    ft.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = ft.optim.AdamW(model.parameters(), lr=0.01)
    x = ft.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))

    def step():
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    return model, opt, x, step


def _set_lr(m, o, x):
    o.param_groups[0]["lr"] = 0.05


def _scale_weight(m, o, x):
    with ft.no_grad():
        m[0].weight.mul_(0.9)


def _save(m, o, x, saved={}):
    saved.setdefault(id(o), o.state_dict())
    return saved


# (edits made to both twins between calls, each followed by a compiled and an eager step)
_EDITS = [None, None, None, _set_lr, None,
          lambda m, o, x: o.state[m[0].weight]["exp_avg"].mul_(0.5), None,  # a write into a state tensor
          _scale_weight, None, _save, None,
          lambda m, o, x: x.copy_(x * 2), None,                           # a closure tensor written in place
          lambda m, o, x: setattr(m[2].weight, "grad", None), None,       # a .grad dropped
          lambda m, o, x: o.state[m[2].bias]["step"].fill_(1.0), None,    # PyTorch's step tensor rewritten
          lambda m, o, x: m.eval(), lambda m, o, x: m.train(), None,
          lambda m, o, x: o.load_state_dict(_save(m, o, x)[id(o)]), None, None]


def test_steady_state_calls_see_every_edit_made_between_calls():
    """From its third call a compiled step takes the steady path (_compile/steady.py: no guard key, the values the
    last call left as inputs); each kind of edit between calls must still reach the program: compiled and eager
    twins agree after every step, and most calls were steady ones."""
    mc, oc, xc, fc = _twin()
    me, oe, xe, fe = _twin()
    fc = ft.compile(fc)
    before = COUNTERS["steady_calls"]
    for k, edit in enumerate(_EDITS):
        if edit is not None:
            edit(mc, oc, xc)
            edit(me, oe, xe)
        _same(fc(), fe())
        for a, b in zip(mc.parameters(), me.parameters()):
            _same(a, b)
        for a, b in zip(oc.state.values(), oe.state.values()):
            for name in a:
                _same(a[name], b[name])
    assert COUNTERS["steady_calls"] - before >= 8, COUNTERS["steady_calls"] - before


def test_steady_state_calls_take_new_argument_tensors():
    lin = _lin(0)

    def f(x, scale):
        with ft.no_grad():
            return lin(x) * scale
    cf = ft.compile(f)
    before = COUNTERS["steady_calls"]
    for i in range(6):
        x = ft.full((2, 3), float(i))
        _same(cf(x, 2.0), f(x, 2.0))
    assert COUNTERS["steady_calls"] - before >= 3
    v = ft.arange(12.).reshape(4, 3)
    for x, scale in [(ft.ones(4, 3), 2.0), (ft.ones(2, 3), 3.0), (v[1:3], 2.0), (v[2:4], 2.0), (v[:2], 2.0),
                     (ft.ones(2, 3) + 1, 2.0)]:
        _same(cf(x, scale), f(x, scale))  # new shapes, constants, views, dtypes: their own programs


def test_steady_state_calls_see_a_reseed():
    ft.manual_seed(0)
    drop, x = nn.Dropout(0.5), ft.ones(64)
    f = ft.compile(lambda: drop(x))
    for _ in range(4):
        f()
    before = COUNTERS["steady_calls"]
    ft.manual_seed(7)
    a = [f().numpy() for _ in range(3)]
    ft.manual_seed(7)
    b = [f().numpy() for _ in range(3)]
    assert COUNTERS["steady_calls"] - before == 6
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p, q)
    assert not np.array_equal(a[0], a[1])


def test_self_check_catches_an_unchecked_change(monkeypatch):
    """What reuse does not watch: a module's whole parameter table replaced behind its back by a plain dict
    (private state). The suite-wide self-check turns such a stale reuse into an error."""
    monkeypatch.setattr(config, "verify_discovery", True)
    lin = _lin(0)
    cf = ft.compile(lambda: lin(X))
    _reused(cf)
    lin.__dict__["_parameters"] = {"weight": nn.Parameter(ft.ones(2, 3)), "bias": lin.bias}
    with pytest.raises(AssertionError, match="reused discovery differs from a fresh walk"):
        cf()


def test_group_value_changed_in_place_is_still_a_guard():
    """An untraced param-group value (a guard) that is a list changed in place: the group dict holds the same
    objects, yet the next call must see the new value."""
    lin = _lin(0)
    opt = ft.optim.SGD(lin.parameters(), lr=0.5)
    opt.param_groups[0]["scale"] = [1.0]

    def f():
        return lin(X).sum() * opt.param_groups[0]["scale"][0]
    cf = ft.compile(f)
    _reused(cf)
    opt.param_groups[0]["scale"][0] = 3.0
    _same(cf(), f())


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "RMSprop", "Adagrad"])
def test_weight_decay_is_a_traced_value(name):
    """Every optimizer's nonzero weight_decay is an input of the compiled step: 0.5 -> 0.25 changes no program;
    PyTorch's ``if weight_decay != 0`` selects the program (0 has none of the term's work), so 0 -> 0.5 adds one
    and back to 0 reuses the first. Each step equals the same step taken eagerly."""
    lins = [_lin(0), _lin(0)]
    opts = [getattr(ft.optim, name)(m.parameters(), lr=0.1, weight_decay=0.0) for m in lins]

    def make(m, opt):
        def step():
            opt.zero_grad()
            (m(X) ** 2).sum().backward()
            opt.step()
        return step
    eager, cf = make(lins[0], opts[0]), ft.compile(make(lins[1], opts[1]))
    for wd in (0.0, 0.0, 0.0, 0.5, 0.25, 0.0):
        for opt in opts:
            opt.param_groups[0]["weight_decay"] = wd
        eager()
        cf()
        for a, b in zip(lins[0].parameters(), lins[1].parameters()):
            _same(a, b)
    # the first call (run with the later calls' state), the one that decays
    assert cf.stats["traces"] == 2


def test_default_values_are_reached():
    """``def step(x, w=W)`` / keyword-only defaults: the default tensors are slots (a change to one shows in the next
    call, never a stale constant), and replacing ``__defaults__`` is noticed."""
    w1, w2 = ft.ones(3), ft.full((3,), 5.0)

    def pos(x, w=w1):
        return (x * w).sum()

    def kw(x, *, w=w1):
        return (x * w).sum()
    x = ft.arange(3.0)
    for fn in (pos, kw):
        cf = ft.compile(fn)
        assert cf(x).item() == 3.0
        w1.mul_(2)
        assert cf(x).item() == fn(x).item() == 6.0
        w1.div_(2)
        assert cf.stats["traces"] == 1
    for fn in (pos, kw):
        cf = ft.compile(fn)
        assert cf(x).item() == 3.0
        if fn is pos:
            pos.__defaults__ = (w2,)
        else:
            kw.__kwdefaults__ = {"w": w2}
        assert cf(x).item() == fn(x).item() == 15.0


class _Box:
    pass


def test_a_tensor_beyond_the_walk_is_a_guarded_constant():
    """A tensor the discovery does not reach (deeper than its walk, past a dict's first 256 entries) is a
    constant of the program: when it changes, the program is traced again, with a warning saying why and how to
    avoid it. (Before this guard the compiled call kept returning the old value.)"""
    a = o = _Box()  # (20 levels: the walk follows the attributes the code names 16 down)
    for _ in range(20):
        o.b = _Box()
        o = o.b
    o.w = ft.ones(3)
    big = {i: ft.ones(1) for i in range(300)}

    def down(o):
        for _ in range(20):
            o = o.b
        return o

    def deep(x):
        return (x * down(a).w).sum() + big[299].sum()
    cf = ft.compile(deep)
    x = ft.arange(3.0)
    assert cf(x).item() == cf(x).item() == 4.0
    down(a).w.mul_(2)
    with pytest.warns(UserWarning, match="its value was a constant of the program. Pass the tensor as an argument"):
        assert cf(x).item() == deep(x).item() == 7.0
    big[299].add_(1)
    assert cf(x).item() == deep(x).item() == 8.0
    assert cf.stats["recompiles"] == 2 and cf.stats["traces"] == 3
    assert cf(x).item() == 8.0 and cf.stats["traces"] == 3  # unchanged: the program is reused


_SCALE = 5.0


class _Cfg:
    pass


def test_python_scalars_the_function_reads_are_guards(monkeypatch, caplog):
    """Issue 5 item 5, "Python values used as constants": a float read from a closure object, a dict, a list or a
    global is a constant of the program, so changing it recompiles (the compiled call returned the first value
    forever before), and the recompile log names it."""
    global _SCALE
    cfg = _Cfg()
    cfg.scale = 2.0
    d, lst = {"k": 3.0}, [1.0]

    def f(x):
        return x * cfg.scale + d["k"] + lst[0] + _SCALE
    cf = ft.compile(f)
    x = ft.ones(1)
    assert cf(x).item() == 11.0
    monkeypatch.setattr(config, "log_recompiles", True)
    try:
        for change, want in ((lambda: setattr(cfg, "scale", 10.0), 19.0), (lambda: d.update(k=100.0), 116.0),
                             (lambda: lst.__setitem__(0, 1000.0), 1115.0)):
            change()
            assert cf(x).item() == f(x).item() == want
        _SCALE = 1e4
        assert cf(x).item() == f(x).item() == 11110.0
        assert cf.stats["traces"] == 5
        assert "recompiling f: cfg.scale changed: ('float', '2.0') -> ('float', '10.0')" in caplog.text
        cfg.scale = 10  # an int where a float was: another constant (1 and 1.0 are different guards)
        assert cf(x).item() == 11110.0 and cf.stats["traces"] == 6
        cfg.scale = 10  # the same value again: no recompile
        assert cf(x).item() == 11110.0 and cf.stats["traces"] == 6
    finally:
        _SCALE = 5.0


def test_module_attributes_are_reached_and_guarded():
    """A module's plain attributes: Dropout's ``p`` is a guard; a tensor attribute (not a buffer) is a slot, also
    when it is rebound; a dict of tensors in an attribute too."""
    m = nn.Dropout(0.5)
    cm = ft.compile(m)
    ft.manual_seed(0)
    assert 0.4 < (cm(ft.ones(1000)) == 0).float().mean().item() < 0.6
    m.p = 0.0
    assert (cm(ft.ones(1000)) == 0).float().mean().item() == 0.0

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = _lin(0)
            self.scale = ft.tensor(2.0)
            self.extra = {"shift": ft.tensor(1.0)}

        def forward(self, x):
            return self.lin(x) * self.scale + self.extra["shift"]
    mod = M()
    cmod = ft.compile(mod)
    _same(cmod(X), mod(X))
    mod.scale.mul_(10)
    mod.extra["shift"].add_(100)
    _same(cmod(X), mod(X))
    mod.scale = ft.tensor(0.0)
    _same(cmod(X), mod(X))
    assert cmod(X).detach().numpy().max() == 101.0


def test_unread_attributes_are_not_guards():
    """A trainer object's step counter that the compiled method never reads (it calls ``opt.step()``, a method,
    not the attribute) changes every step without a recompile."""
    class Trainer:
        def __init__(self):
            self.model = _lin(0)
            self.opt = ft.optim.SGD(self.model.parameters(), lr=0.1)
            self.step = 0
            self.train_step = ft.compile(self._train_step)

        def _train_step(self, x):
            self.opt.zero_grad()
            loss = self.model(x).pow(2).mean()
            loss.backward()
            self.opt.step()
            return loss
    t = Trainer()
    for _ in range(5):
        t.train_step(X)
        t.step += 1
    assert t.train_step.stats["traces"] == 1  # the first call runs the later calls' program


def test_functions_classes_and_modules_swapped_are_guards():
    """What the program inlines from a function, a builtin, a partial or a submodule is guarded by identity (or
    class): swapping one recompiles instead of running the old program."""
    import functools
    import math
    x = ft.tensor([-1.0, 2.0])
    holder = {"sq": math.sqrt, "p": functools.partial(ft.clamp, min=0.0)}

    def f(x):
        return x * holder["sq"](4.0) + holder["p"](x)
    cf = ft.compile(f)
    _same(cf(x), f(x))
    holder["sq"] = math.exp
    _same(cf(x), f(x))
    holder["p"] = functools.partial(ft.clamp, max=0.0)  # same values, another keyword
    _same(cf(x), f(x))
    assert cf.stats["traces"] == 3
    m = nn.Sequential(nn.ReLU())
    cm = ft.compile(m)
    _same(cm(x), m(x))
    m[0] = nn.Tanh()
    _same(cm(x), m(x))
    assert cm(x).detach().numpy()[0] < 0


class _Scale:
    def __init__(self, s):
        self.s = s
        self.calls = 0  # written by the caller, read by no method the function runs

    def __call__(self, x):
        return x * self.factor

    @property
    def factor(self):
        return self.s

    def report(self):
        return self.calls


def test_attributes_read_by_methods_the_function_calls_are_guards():
    """``sc(x)`` runs ``_Scale.__call__``, which reads ``self.factor``, a property reading ``self.s``: ``s`` is a
    guard though the compiled function never names it (a change ran the old program); ``calls``, read only by a
    method the function never calls, is not."""
    sc = _Scale(2.0)

    def f(x):
        return sc(x)
    cf = ft.compile(f)
    x = ft.ones(2)
    assert cf(x).tolist() == [2.0, 2.0]
    sc.s = 5.0
    assert cf(x).tolist() == f(x).tolist() == [5.0, 5.0]
    for _ in range(3):
        sc.calls += 1
        cf(x)
    assert cf.stats["traces"] == 2


def test_numpy_values_are_guarded_by_content():
    """A NumPy array (or scalar) argument, or one in the closure changed in place, is read on the host while
    tracing, so its values are constants of the program: new contents recompile (the old program's result came
    back before); the same contents reuse it."""
    def f(x, a):
        return x * ft.tensor(a)
    cf = ft.compile(f)
    x = ft.ones(2)
    assert cf(x, np.array([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert cf(x, np.array([3.0, 4.0])).tolist() == [3.0, 4.0]
    assert cf(x, np.array([3.0, 4.0])).tolist() == [3.0, 4.0] and cf.stats["traces"] == 2
    assert cf(x, np.float64(5.0)).tolist() == [5.0, 5.0]
    m = np.array([1.0, 2.0])

    def g(x):
        return x * ft.from_numpy(m)
    cg = ft.compile(g)
    assert cg(x).tolist() == [1.0, 2.0]
    m[0] = 10.0
    assert cg(x).tolist() == g(x).tolist() == [10.0, 2.0]
    assert cg(x).tolist() == [10.0, 2.0] and cg.stats["traces"] == 2


def test_a_nan_argument_reuses_its_program():
    """Arguments and walked values share one scalar guard (type and repr): a fresh ``float('nan')`` each call is
    the same guard (with ``(type, value)`` nan != nan made every call recompile); 1, 1.0 and True stay apart."""
    cf = ft.compile(lambda x, s: x * s)
    x = ft.ones(1)
    for _ in range(3):
        assert np.isnan(cf(x, float("nan")).item())
    assert cf.stats["traces"] == 1
    for s in (1, 1.0, True):
        assert cf(x, s).tolist() == [1.0]
    assert cf.stats["traces"] == 4


def test_non_contiguous_view_arguments_keep_their_strides():
    """A transposed, strided or expanded view argument is read through its storage: the compiled function sees
    eager's strides, offset and contiguity (``view(-1)`` of a transpose raises, as eagerly); a contiguous slice
    (a batch of a dataset) is still taken by its values."""
    def meta(x):
        return x.stride(), x.is_contiguous(), x.storage_offset(), (x * 2).tolist()

    def run(L, C):
        base = L.arange(12.0).reshape(3, 4)
        out = [C(meta)(x) for x in (base.t(), base[1:, 1:], L.ones(3, 1).expand(3, 4), base[:, ::2])]
        try:
            C(lambda x: x.view(-1))(L.arange(6.0).reshape(2, 3).t())
        except RuntimeError as e:
            out.append(type(e).__name__)
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(ft, ft.compile) == run(torch, lambda f: f)
    batch = ft.arange(12.0).reshape(6, 2)
    f = ft.compile(lambda x: x * 2)
    for i in range(3):
        assert f(batch[2 * i:2 * i + 2]).tolist() == (batch[2 * i:2 * i + 2] * 2).tolist()
    assert f.stats["traces"] == 1


def test_a_view_of_an_updated_parameter_is_a_view():
    """``return lin.weight[0]`` from a training step: a view of the parameter (SelectBackward0 on it), which shows
    the next steps' updates and writes through, as eager's; a backward through it reaches the parameter."""
    def run(L, C):
        lin = _known_lin(L)
        opt = L.optim.SGD(lin.parameters(), lr=0.5)
        x = L.ones(1, 3)

        def step():
            opt.zero_grad()
            lin(x).sum().backward()
            opt.step()
            return lin.weight[0], lin.weight.t()
        step = C(step)
        v, vt = step()
        out = [v.tolist(), type(v.grad_fn).__name__, v._base is lin.weight, vt.tolist()]
        step()
        out += [v.tolist(), vt.tolist()]
        opt.zero_grad()
        (v * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        out.append(lin.weight.grad.tolist())
        with L.no_grad():
            v.fill_(9.0)
        out.append(lin.weight.tolist())
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(ft, ft.compile) == run(torch, lambda f: f)


@pytest.mark.parametrize("zero", ["set_to_none", "zeros"])
def test_a_view_of_a_grad_or_optimizer_state_is_a_view(zero):
    """``return p.grad[0]`` / ``opt.state[p]['exp_avg_sq'][1:3]`` from a training step: a view of that .grad /
    state tensor after the call, which shows the next steps' writes (or keeps its values where the next
    ``zero_grad()`` drops the .grad), and whose writes show in the tensor, as eager's."""
    def run(L, C):
        lin = _known_lin(L)
        opt = L.optim.Adam(lin.parameters(), lr=0.5)
        x = L.tensor([[1.0, -2.0, 0.5]])

        def step(k):
            opt.zero_grad(set_to_none=zero == "set_to_none")
            (lin(x * k) ** 2).sum().backward()
            opt.step()
            return lin.weight.grad[1], opt.state[lin.weight]["exp_avg_sq"][:, 1:3], lin.bias.grad.t()
        step = C(step)
        held = [step(L.tensor(1.0 + k)) for k in range(3)]
        vals = [np.asarray(t.tolist()) for h in held for t in h]
        g, s, b = held[-1]
        bases = [g._base is lin.weight.grad, s._base is opt.state[lin.weight]["exp_avg_sq"], b._base is lin.bias.grad]
        with L.no_grad():
            g.fill_(7.0)
            s.fill_(3.0)
        vals += [np.asarray(lin.weight.grad.tolist()), np.asarray(opt.state[lin.weight]["exp_avg_sq"].tolist())]
        return vals, bases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (got, got_bases), (want, want_bases) = run(ft, ft.compile), run(torch, lambda f: f)
    assert got_bases == want_bases == [True, True, True]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("switch", ["deterministic", "anomaly", "cudnn.deterministic", "mkldnn.enabled",
                                    "num_threads", "warn_always"])
def test_process_wide_switches_are_guards(switch):
    """A function that reads a process-wide switch (``torch.are_deterministic_algorithms_enabled()``,
    ``torch.backends.cudnn.deterministic``, ...) is compiled again when it changes, as torch.compile's; setting it
    back reuses the first program."""
    read, flip = {
        "deterministic": (ft.are_deterministic_algorithms_enabled, ft.use_deterministic_algorithms),
        "anomaly": (ft.is_anomaly_enabled, ft.autograd.set_detect_anomaly),
        "cudnn.deterministic": (lambda: ft.backends.cudnn.deterministic,
                                lambda v: setattr(ft.backends.cudnn, "deterministic", v)),
        "mkldnn.enabled": (lambda: not ft.backends.mkldnn.enabled,
                           lambda v: setattr(ft.backends.mkldnn, "enabled", not v)),
        "num_threads": (lambda: ft.get_num_threads() == 1, lambda v: ft.set_num_threads(1 if v else 2)),
        "warn_always": (ft.is_warn_always_enabled, ft.set_warn_always),
    }[switch]
    before, threads = read(), ft.get_num_threads()
    cf = ft.compile(lambda x: x * 2 if read() else x * 3)
    try:
        flip(False)
        got = [cf(X).tolist()]
        flip(True)
        got += [cf(X).tolist(), cf(X).tolist()]
        flip(False)
        got.append(cf(X).tolist())
    finally:
        flip(before)
        ft.set_num_threads(threads)
    x = X.tolist()
    assert got == [[[v * 3 for v in r] for r in x]] + [[[v * 2 for v in r] for r in x]] * 2 + \
        [[[v * 3 for v in r] for r in x]]
    assert cf.stats["traces"] == 2


def test_dtypes_devices_and_memory_formats_read_are_guards():
    """A torch.dtype, memory format or device the function reads from its closure, a list or an object is baked
    into the program: a change is a recompile, as a Python scalar's (before, the first trace's stayed)."""
    class Cfg:
        fmt = ft.contiguous_format

    dts = [ft.float32]
    box = {"dev": ft.device("cpu")}
    y = ft.ones(2, 3, 4, 5)

    def f(x):
        return x.to(dts[0]).to(box["dev"]), y.contiguous(memory_format=Cfg.fmt).stride()
    cf = ft.compile(f)
    for dt, fmt in [(ft.float32, ft.contiguous_format), (ft.float64, ft.contiguous_format),
                    (ft.float64, ft.channels_last), (ft.float32, ft.contiguous_format)]:
        dts[0], Cfg.fmt = dt, fmt
        got, want = cf(X), f(X)
        assert got[0].dtype is want[0].dtype is dt and got[1] == want[1]
    assert cf.stats["traces"] == 3


def test_attributes_read_by_bound_static_and_class_methods_are_guards():
    """What a bound method (held in a list, a dict, a partial, registered as a forward hook), a staticmethod or
    a classmethod reads of its object or class is a guard: its function is walked before its object, so the
    attributes its code names are known when the object's are (before, a change kept the first trace's value)."""
    import functools

    class A:
        def __init__(self, k):
            self.k = k

        def g(self, x):
            return x * self.k

        def hook(self, mod, inp, out):
            return out * self.k

    class U:
        S = 2.0

        @staticmethod
        def st(x):
            return x * U.S

        @classmethod
        def cm(cls, x):
            return x * cls.S

    a, b, h = A(2.0), A(5.0), A(2.0)
    cbs, holder, part = [a.g], {"fn": a.g}, functools.partial(a.g)
    lin = _lin(0)
    lin.register_forward_hook(h.hook)
    cases = [(lambda x: cbs[0](x), lambda: setattr(a, "k", 3.0)),
             (lambda x: holder["fn"](x), lambda: holder.__setitem__("fn", b.g)),
             (lambda x: part(x), lambda: setattr(a, "k", 4.0)),
             (lambda x: U.st(x), lambda: setattr(U, "S", 5.0)),
             (lambda x: U.cm(x), lambda: setattr(U, "S", 6.0)),
             (lambda x: lin(x), lambda: setattr(h, "k", 5.0))]
    for f, change in cases:
        cf = ft.compile(f)
        _same(cf(X), f(X))
        change()
        _same(cf(X), f(X))
