"""State that CHANGES BETWEEN CALLS of a compiled training step (or a compiled forward): each scenario runs the same
sequence of calls and edits eagerly (ft), compiled (ft.compile) and, where meaningful, in real torch from the same
numpy init, and compares parameters, .grad fields, optimizer state_dict(), buffers and returned values after EVERY
call (compiled vs eager 1e-6, vs torch 1e-5), then checks ``stats`` where a recompile / eager fallback is or is not
expected. What the other compile test files already cover (test_compile_reuse.py, test_compile_scenarios.py,
test_compile_module_scenarios.py) is not repeated here.

Runs with ``config.verify_discovery`` off (the path users run)."""
import copy
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _scenario import same_init
from functorch_lite._compile.runner import config

RNG = np.random.default_rng(7)
XS = [RNG.standard_normal((8, 6)).astype(np.float32) for _ in range(12)]
YS = [RNG.integers(0, 3, 8) for _ in range(12)]


@pytest.fixture(autouse=True)
def _production_path(monkeypatch):
    monkeypatch.setattr(config, "verify_discovery", False)


# ---- helpers ---------------------------------------------------------------------------------------------------
_init = same_init


def _mlp(L, seed=0, drop=None, bn=False):
    layers = [L.nn.Linear(6, 16)]
    if bn:
        layers.append(L.nn.BatchNorm1d(16))
    layers.append(L.nn.ReLU())
    if drop is not None:
        layers.append(L.nn.Dropout(drop))
    layers.append(L.nn.Linear(16, 3))
    return _init(L.nn.Sequential(*layers), seed)


def _np(t):
    if t is None:
        return None
    if isinstance(t, (int, float, bool, np.ndarray, np.generic)):
        return np.asarray(t, dtype=np.float64)
    return t.detach().numpy().astype(np.float64)


def _opt_sd(opt, prefix="o"):
    out = {}
    sd = opt.state_dict()
    for k, st in sd["state"].items():
        for name, v in st.items():
            out[f"{prefix}:s:{k}:{name}"] = _np(v) if not isinstance(v, (list, tuple)) else np.asarray(v, np.float64)
    for i, group in enumerate(sd["param_groups"]):
        for name, v in group.items():
            if name == "params":
                out[f"{prefix}:g{i}:params"] = np.asarray(v, np.float64)
            elif isinstance(v, bool) or v is None:
                out[f"{prefix}:g{i}:{name}"] = str(v)
            elif isinstance(v, (int, float)):
                out[f"{prefix}:g{i}:{name}"] = np.asarray(v, np.float64)
            elif isinstance(v, tuple):
                out[f"{prefix}:g{i}:{name}"] = np.asarray(v, np.float64)
    return out


def _snap(model=None, opt=None, out=None, **extra):
    s = {}
    if model is not None:
        for n, p in model.named_parameters():
            s[f"p:{n}"] = _np(p)
            s[f"g:{n}"] = _np(p.grad)
            s[f"dtype:{n}"] = str(p.dtype).replace("torch.", "").replace("functorch_lite.", "")
            s[f"rg:{n}"] = str(p.requires_grad)
        for n, b in model.named_buffers():
            s[f"b:{n}"] = _np(b)
    if opt is not None:
        s.update(_opt_sd(opt))
    if out is not None:
        s["out"] = _np(out)
    for k, v in extra.items():
        s[k] = _np(v) if not isinstance(v, str) else v
    return s


def _cmp(a, b, tol, what):
    assert len(a) == len(b), f"{what}: {len(a)} vs {len(b)} snapshots"
    for i, (x, y) in enumerate(zip(a, b)):
        assert sorted(x) == sorted(y), f"{what} call {i}: different keys {sorted(set(x) ^ set(y))}"
        for k in sorted(x):
            u, v = x[k], y[k]
            if u is None or v is None or isinstance(u, str) or isinstance(v, str):
                assert u == v if not (u is None or v is None) else (u is None and v is None), \
                    f"{what} call {i}: {k}: {u!r} vs {v!r}"
                continue
            np.testing.assert_allclose(u, v, rtol=tol, atol=tol, err_msg=f"{what} call {i}: {k}")


def _three(scenario, torch_too=True, tol_eager=1e-6, tol_torch=1e-5, compiled_too=True):
    """``scenario(L, compiled, rec) -> f``; ``rec(**snap)`` records a snapshot after each call. Returns the compiled
    run's ``f`` (for its stats). ``compiled_too=False``: eager ft vs torch only (an ft bug that is not compile's)."""
    runs = {}
    for name, L, compiled in (("eager", ft, False), ("compiled", ft, True), ("torch", torch, False)):
        if (name == "torch" and not torch_too) or (name == "compiled" and not compiled_too):
            continue
        snaps = []
        f = scenario(L, compiled, lambda **kw: snaps.append(_snap(**kw)))
        runs[name] = (snaps, f)
    if not compiled_too:
        _cmp(runs["eager"][0], runs["torch"][0], tol_torch, "eager vs torch")
        return None
    _cmp(runs["compiled"][0], runs["eager"][0], tol_eager, "compiled vs eager")
    if torch_too:
        _cmp(runs["compiled"][0], runs["torch"][0], tol_torch, "compiled vs torch")
    return runs["compiled"][1]


def _maybe(compiled, fn):
    return ft.compile(fn) if compiled else fn


def _t(L, a):
    return L.tensor(a)


def _stats(f, **want):
    for k, v in want.items():
        assert f.stats[k] == v, (k, f.stats)


def _loop(L, compiled, rec, m, opt, n, edit=lambda i: None, lf=None, batch=lambda L, i: (_t(L, XS[i]), _t(L, YS[i])),
          **extra):
    """The canonical step (zero_grad, forward, backward, step) over ``n`` calls; ``edit(i)`` runs before call i;
    a snapshot of model / optimizer / loss after every call. Edits land from the 4th call on: the first three
    calls trace (no .grad yet, then with .grad, then the donating program), so an edit there can be picked up
    by a trace that happens anyway and hide a missing guard."""
    lf = lf or L.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = lf(m(x), y)
        loss.backward()
        opt.step()
        return loss
    f = _maybe(compiled, step)
    for i in range(n):
        edit(i)
        rec(model=m, opt=opt, out=f(*batch(L, i)), **{k: v() for k, v in extra.items()})
    return f



# ---- optimizer edits -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("opt_name", ["AdamW"])
def test_add_param_group_with_its_own_options_mid_training(opt_name):
    """A second group with its own lr / weight_decay and momentum / betas, added after compiled steps."""
    extra = {"SGD": dict(momentum=0.5, weight_decay=0.1), "AdamW": dict(betas=(0.7, 0.95), weight_decay=0.3)}[opt_name]

    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = getattr(L.optim, opt_name)(m[0].parameters(), lr=1e-2, **({"momentum": 0.9} if opt_name == "SGD" else {}))

        def edit(i):
            if i == 3:
                opt.add_param_group({"params": list(m[2].parameters()), "lr": 5e-2, **extra})
        return _loop(L, compiled, rec, m, opt, 6, edit)
    f = _three(sc)
    _stats(f, eager_calls=0)
    assert f.stats["traces"] <= 4, f.stats


def test_optimizer_load_state_dict_from_another_run_with_other_hyperparameters():
    """Adam(amsgrad=False) receives the state_dict of an Adam(amsgrad=True, betas=(0.5, 0.9), weight_decay=0.1) run
    on another model: the groups' options and the state (max_exp_avg_sq) are the loaded ones from then on."""
    def sc(L, compiled, rec):
        other = _mlp(L, seed=3)
        oo = L.optim.Adam(other.parameters(), lr=3e-2, betas=(0.5, 0.9), amsgrad=True, weight_decay=0.1)
        lf = L.nn.CrossEntropyLoss()
        for i in range(2):
            oo.zero_grad()
            lf(other(_t(L, XS[i])), _t(L, YS[i])).backward()
            oo.step()
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)

        def edit(i):
            if i == 3:
                opt.load_state_dict(copy.deepcopy(oo.state_dict()))
        return _loop(L, compiled, rec, m, opt, 6, edit)
    _stats(_three(sc), eager_calls=0)


_GOPT = None


def _global_opt_step(model, lf, x, y):
    _GOPT.zero_grad()
    loss = lf(model(x), y)
    loss.backward()
    _GOPT.step()
    return loss


def test_replacing_the_optimizer_object_in_a_closure_and_in_a_global():
    """``opt = Adam(...)`` rebinding the closure cell the compiled step reads (SGD -> Adam -> SGD with fresh state),
    and a global optimizer replaced (Adam -> AdamW) in another compiled step."""
    global _GOPT

    def sc(L, compiled, rec):
        global _GOPT
        m, m2 = _mlp(L), _mlp(L, seed=1)
        lf = L.nn.CrossEntropyLoss()
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        _GOPT = L.optim.Adam(m2.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss
        f, g = _maybe(compiled, step), _maybe(compiled, _global_opt_step)
        for i in range(6):
            if i == 3:
                opt = L.optim.Adam(m.parameters(), lr=1e-2)
                _GOPT = L.optim.AdamW(m2.parameters(), lr=2e-2, weight_decay=0.5)
            if i == 5:
                opt = L.optim.SGD(m.parameters(), lr=0.05)
            rec(model=m, opt=opt, out=f(_t(L, XS[i]), _t(L, YS[i])))
            rec(model=m2, opt=_GOPT, out=g(m2, lf, _t(L, XS[i]), _t(L, YS[i])))
        return f, g
    try:
        f, g = _three(sc)
    finally:
        _GOPT = None
    _stats(f, eager_calls=0)
    _stats(g, eager_calls=0)


# (optimizer, ctor kwargs, {call index: {group key: value}})
GROUP_EDITS = {
    "sgd": ("SGD", dict(lr=0.05, momentum=0.9),
            {3: {"nesterov": True}, 4: {"nesterov": False, "dampening": 0.5, "maximize": True},
             5: {"maximize": False, "weight_decay": 0.01}}),
    "adam": ("Adam", dict(lr=1e-2, amsgrad=True),
             {3: {"betas": (0.5, 0.9), "eps": 1e-1}, 4: {"maximize": True, "weight_decay": 0.01},
              5: {"maximize": False, "betas": (0.9, 0.999), "foreach": True},
              6: {"foreach": None, "fused": True, "weight_decay": 0.0}}),
    "adamw_rmsprop_adagrad": (None, None, None),
}


@pytest.mark.parametrize("case", list(GROUP_EDITS))
def test_param_group_options_edited_between_calls(case):
    """nesterov / dampening / maximize / weight_decay / momentum, betas / eps / amsgrad (on -> off) / foreach /
    fused, RMSprop's alpha and momentum, Adagrad's lr_decay, AdamW's weight_decay: written into param_groups[0]
    between compiled calls; each call equals eager ft and torch."""
    name, kw, edits = GROUP_EDITS[case]

    def sc(L, compiled, rec):
        if name is None:  # three optimizers over the three layers of one model
            m = _mlp(L)
            opts = [L.optim.AdamW(m[0].parameters(), lr=1e-2, weight_decay=0.1),
                    L.optim.RMSprop(m[2].parameters(), lr=1e-2, momentum=0.5)]
            plan = {3: [(0, "weight_decay", 0.0), (1, "alpha", 0.5)], 4: [(1, "momentum", 0.9)],
                    5: [(0, "weight_decay", 0.3), (1, "momentum", 0.0)]}
            lf = L.nn.CrossEntropyLoss()

            def step(x, y):
                for o in opts:
                    o.zero_grad()
                loss = lf(m(x), y)
                loss.backward()
                for o in opts:
                    o.step()
                return loss
            f = _maybe(compiled, step)
            for i in range(7):
                for j, k, v in plan.get(i, []):
                    opts[j].param_groups[0][k] = v
                out = f(_t(L, XS[i]), _t(L, YS[i]))
                rec(model=m, out=out, **{f"s{j}:{k}": v for j, o in enumerate(opts)
                                         for k, v in _opt_sd(o).items() if ":s:" in k and "momentum" not in k})
            return f
        m = _mlp(L)
        opt = getattr(L.optim, name)(m.parameters(), **kw)
        return _loop(L, compiled, rec, m, opt, 7, lambda i: opt.param_groups[0].update(edits.get(i, {})))
    f = _three(sc)
    _stats(f, eager_calls=0)


def test_state_of_an_option_switched_off_stays_in_the_state_dict():
    def sc(L, compiled, rec):
        m = _mlp(L)
        o1 = L.optim.SGD(m[0].parameters(), lr=0.05, momentum=0.9)
        o2 = L.optim.Adam(m[2].parameters(), lr=1e-2, amsgrad=True)
        for i in range(3):
            if i == 2:
                o1.param_groups[0]["momentum"] = 0.0
                o2.param_groups[0]["amsgrad"] = False
            o1.zero_grad()
            o2.zero_grad()
            L.nn.functional.cross_entropy(m(_t(L, XS[i])), _t(L, YS[i])).backward()
            o1.step()
            o2.step()
            rec(model=m, opt=o1, o2=str(sorted(k for st in o2.state_dict()["state"].values() for k in st)))
    _three(sc, compiled_too=False)


def test_sgd_momentum_switched_on_with_dampening():
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.05, dampening=0.5)
        for i in range(4):
            if i == 2:
                opt.param_groups[0]["momentum"] = 0.9
            opt.zero_grad()
            L.nn.functional.cross_entropy(m(_t(L, XS[i])), _t(L, YS[i])).backward()
            opt.step()
            rec(model=m)
    _three(sc, compiled_too=False)


def test_adam_amsgrad_switched_on_mid_training_compiled_does_what_eager_does():
    """amsgrad False -> True after steps: torch raises KeyError('max_exp_avg_sq'); compiled must do what eager ft
    does, not something else."""
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)

        def edit(i):
            if i == 3:
                opt.param_groups[0]["amsgrad"] = True
        try:
            return _loop(L, compiled, rec, m, opt, 5, edit)
        except Exception as e:  # noqa: BLE001
            rec(err=type(e).__name__)
    _three(sc, torch_too=False)



@pytest.mark.parametrize("edit", ["cleared", "entry_deleted"])
def test_optimizer_state_reset_between_steps(edit):
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)
        for i in range(4):
            if i == 2:
                opt.state.clear() if edit == "cleared" else opt.state.__delitem__(m[0].weight)
            opt.zero_grad()
            L.nn.functional.cross_entropy(m(_t(L, XS[i])), _t(L, YS[i])).backward()
            opt.step()
            rec(model=m, opt=opt)
    _three(sc, compiled_too=False)


def test_optimizer_state_tensors_replaced_and_step_reset_between_calls():
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)

        def edit(i):
            if i == 3:
                st = opt.state[m[0].weight]
                st["exp_avg"] = st["exp_avg"] * 0 + 0.1
            if i == 4:
                st = opt.state[m[2].weight]
                st["step"].fill_(0.0)
                st["exp_avg_sq"].zero_()
                st["exp_avg"].zero_()
        return _loop(L, compiled, rec, m, opt, 6, edit)
    _stats(_three(sc), eager_calls=0)


# ---- .grad / parameter / module edits --------------------------------------------------------------------------
def test_grad_fields_edited_between_compiled_accumulation_calls():
    """A compiled forward+backward WITHOUT zero_grad (gradients accumulate across calls), an eager ``opt.step()``
    and ``zero_grad()`` every third call; between calls ``.grad`` is set to None / zeros / scaled / replaced /
    added to."""
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()

        def fb(x, y):
            loss = lf(m(x), y)
            loss.backward()
            return loss
        f = _maybe(compiled, fb)
        w, b = m[0].weight, m[2].bias
        edits = {3: lambda: setattr(w, "grad", None), 4: lambda: setattr(b, "grad", L.zeros_like(b)),
                 6: lambda: w.grad.mul_(0.5), 7: lambda: setattr(b, "grad", b.grad * 3 + 1),
                 9: lambda: w.grad.add_(1.0)}
        for i in range(11):
            rec(model=m, opt=opt, out=f(_t(L, XS[i]), _t(L, YS[i])))
            if i in edits:
                with L.no_grad():
                    edits[i]()
                rec(model=m)
            if i % 3 == 2:
                opt.step()
                opt.zero_grad()
                rec(model=m, opt=opt)
        return f
    _stats(_three(sc), eager_calls=0)


def test_model_dtype_changed_between_compiled_steps():
    """float -> double between SGD-momentum steps (the momentum buffer stays float32), inputs to match."""
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
        return _loop(L, compiled, rec, m, opt, 5, lambda i: i == 3 and m.double(),
                     batch=lambda L, i: (_t(L, XS[i]).to(next(m.parameters()).dtype), _t(L, YS[i])))
    _stats(_three(sc), eager_calls=0)


def _net(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(6, 16)
            self.b = L.nn.Linear(16, 3)

        def forward(self, x):
            h = self.a(x).relu()
            if hasattr(self, "extra"):
                h = h + self.extra(h).tanh()
            if hasattr(self, "shift"):
                h = h + self.shift
            if hasattr(self, "gain"):
                h = h * self.gain
            return self.b(h)
    return _init(Net())


def test_module_structure_and_hooks_changed_between_compiled_training_steps():
    """A submodule added (and its parameters to the optimizer) then deleted; a buffer registered, edited in place,
    rebound; a new Parameter in its own group, then deleted; a forward hook registered and removed."""
    def sc(L, compiled, rec):
        m = _net(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
        h = []

        def edit(i):
            if i == 3:
                m.extra = _init(L.nn.Linear(16, 16), seed=4)
                opt.add_param_group({"params": list(m.extra.parameters())})
                m.register_buffer("shift", L.full((16,), 0.25))
            elif i == 4:
                m.shift.fill_(-1.0)
                m.gain = L.nn.Parameter(L.full((16,), 1.5))
                opt.add_param_group({"params": [m.gain], "lr": 0.5})
            elif i == 5:
                del m.extra
                m.shift = L.full((16,), 2.0)
                h.append(m.a.register_forward_hook(lambda mod, inp, out: out * 2))
            elif i == 6:
                del m.gain
                m.eval()
            elif i == 7:
                h[0].remove()
                m.train()
        return _loop(L, compiled, rec, m, opt, 9, edit)
    _stats(_three(sc), eager_calls=0)


@pytest.mark.parametrize("edit", ["module_param_replaced", "tensor_hook", "backward_hook"])
def test_parameter_objects_swapped_or_hooked_between_training_steps(edit):
    """A new nn.Parameter in the module while the optimizer still holds the old one (torch: the old one keeps being
    stepped, the new one only gets .grad); a tensor hook on a parameter, or a full backward hook on a layer (a
    documented graph break), added and then removed."""
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
        old, h = m[2].weight, []

        def edit_(i):
            if i == 3:
                if edit == "module_param_replaced":
                    m[2].weight = L.nn.Parameter(old.detach() * 2)
                elif edit == "tensor_hook":
                    h.append(m[0].weight.register_hook(lambda g: g * 3))
                else:
                    h.append(m[2].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0.5,)))
            if i == 5 and h:
                h[0].remove()
        return _loop(L, compiled, rec, m, opt, 7, edit_, old=lambda: old,
                     oldg=lambda: old.grad if old.grad is not None else np.zeros(1))
    f = _three(sc)
    _stats(f, eager_calls=2 if edit == "backward_hook" else 0)  # the hooked calls run eagerly (with a warning)


def test_batchnorm_attributes_and_buffers_edited_between_calls():
    """bn.momentum float -> None (cumulative average); reset_running_stats() and running_mean edited in place, then
    eval(); back to train() with another momentum and track_running_stats off."""
    def sc(L, compiled, rec):
        m = _mlp(L, bn=True)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        bn = m[1]

        def edit(i):
            if i == 3:
                bn.momentum = None
            elif i == 4:
                bn.reset_running_stats()
                with L.no_grad():
                    bn.running_mean.add_(1.0)
                m.eval()
            elif i == 5:
                m.train()
                bn.momentum = 0.5
                bn.track_running_stats = False
        return _loop(L, compiled, rec, m, opt, 7, edit)
    _stats(_three(sc), eager_calls=0)


# ---- Python values the step reads ------------------------------------------------------------------------------
_LR = 0.1
_FLAG = False
_LRS = [0.1, 0.2]
_CFG = {"wd": 0.0, "scale": 1.0}
_NPW = np.array([1.0, 2.0, 0.5], np.float32)
_STEP = 0


def _py_step(m, opt, lf, x, y):
    for g in opt.param_groups:
        g["lr"] = _LR * _LRS[0]
    opt.zero_grad()
    out = m(x)
    if _FLAG:
        out = out * 2
    loss = lf(out * x.new_tensor(_NPW), y) * _CFG["scale"] + _CFG["wd"] * sum((p ** 2).sum() for p in m.parameters())
    loss = loss / (1 + _STEP)
    loss.backward()
    opt.step()
    return loss


def test_python_globals_lists_dicts_numpy_and_counter_edited_between_calls():
    """A global lr float, a global branch flag, a list item, dict items, a numpy array edited in place and an int
    counter set outside, all read by the compiled step: each change shows in the very next call."""
    global _LR, _FLAG, _STEP

    def sc(L, compiled, rec):
        global _LR, _FLAG, _STEP
        _LR, _FLAG, _STEP = 0.1, False, 0
        _LRS[0] = 1.0
        _CFG.update(wd=0.0, scale=1.0)
        _NPW[:] = [1.0, 2.0, 0.5]
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.0, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()
        f = _maybe(compiled, _py_step)
        for i in range(7):
            if i == 3:
                _LR = 0.3
                _FLAG = True
            elif i == 4:
                _LRS[0] = 0.5
                _CFG["wd"] = 0.01
            elif i == 5:
                _CFG["scale"] = 3.0
                _NPW[1] = -1.0
            elif i == 6:
                _STEP = 7
            rec(model=m, opt=opt, out=f(m, opt, lf, _t(L, XS[i]), _t(L, YS[i])))
        return f
    try:
        f = _three(sc)
    finally:
        _LR, _FLAG, _STEP = 0.1, False, 0
    _stats(f, eager_calls=0)


def test_an_int_counter_read_every_call_stays_right_past_the_cache_limit():
    """A trainer bumps an int the step reads (``loss / (1 + step)``) every call: every call is a new constant
    (README: Python scalars read are guards), so past the limit it runs eagerly -- with the right values."""
    state = {"step": 0}

    def sc(L, compiled, rec):
        state["step"] = 0
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y) / (1 + state["step"])
            loss.backward()
            opt.step()
            return loss
        f = _maybe(compiled, step)
        if compiled:
            f.cache_size_limit = 3
        for i in range(6):
            rec(model=m, opt=opt, out=f(_t(L, XS[i]), _t(L, YS[i])))
            state["step"] += 1
        return f
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = _three(sc)
    _stats(f, traces=3, eager_calls=3)


# ---- data between calls ----------------------------------------------------------------------------------------
def test_same_input_tensor_edited_in_place_and_a_closure_tensor_edited():
    """The SAME x / y objects every call, edited in place (copy_, item assignment, slice); a class-weight tensor
    in the closure edited in place; a smaller batch; then a fresh tensor object."""
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)
        cw = L.tensor([1.0, 1.0, 1.0])

        def step(x, y):
            opt.zero_grad()
            loss = (L.nn.functional.cross_entropy(m(x), y, reduction="none") * cw[y]).mean()
            loss.backward()
            opt.step()
            return loss
        f = _maybe(compiled, step)
        x, y = _t(L, XS[0]), _t(L, YS[0])
        for i in range(10):
            if i == 3:
                x.copy_(_t(L, XS[1]))
            elif i == 4:
                x[0] = 5.0
                y[0] = 2
            elif i == 5:
                cw.mul_(2.0)
            elif i == 6:
                cw[1] = 0.0
            elif i == 7:
                x, y = _t(L, XS[5][:5]), _t(L, YS[5][:5])
            elif i == 8:
                x[1:3] = 0.0
            elif i == 9:
                x, y = _t(L, XS[7]), _t(L, YS[7])
            rec(model=m, opt=opt, out=f(x, y), x=x)
        return f
    _stats(_three(sc), eager_calls=0, traces=2)


def test_input_requires_grad_toggled_and_its_grad_read_after_each_call():
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        x = [_t(L, XS[0])]

        def edit(i):
            if i in (3, 5):
                x[0].requires_grad_(True)
            if i == 4:
                x[0] = x[0].detach()
        return _loop(L, compiled, rec, m, opt, 7, edit, batch=lambda L, i: (x[0], _t(L, YS[i])),
                     xg=lambda: x[0].grad if x[0].grad is not None else np.zeros(1))
    _stats(_three(sc), eager_calls=0)


def test_float64_input_to_a_float32_model_raises_like_eager():
    def run(L, compiled):
        m = _mlp(L)
        f = _maybe(compiled, lambda x: m(x).sum())
        f(_t(L, XS[0]))
        with pytest.raises(Exception) as e:
            f(_t(L, XS[1].astype(np.float64)))
        return type(e.value)
    assert run(ft, True) is run(ft, False)
    run(torch, False)


def test_one_compiled_step_alternating_between_two_models_and_optimizers_passed_as_arguments():
    def sc(L, compiled, rec):
        ma, mb = _mlp(L, seed=1), _mlp(L, seed=2)
        oa = L.optim.Adam(ma.parameters(), lr=1e-2)
        ob = L.optim.SGD(mb.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()

        def step(m, opt, x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss
        f = _maybe(compiled, step)
        for i in range(8):
            m, o = (ma, oa) if i % 2 == 0 else (mb, ob)
            if i == 5:
                ob.param_groups[0]["lr"] = 0.05
            out = f(m, o, _t(L, XS[i]), _t(L, YS[i]))
            rec(model=ma, opt=oa, out=out)
            rec(model=mb, opt=ob)
        return f
    _stats(_three(sc), eager_calls=0, traces=2)  # (one program per model: each first call runs it)


# ---- RNG ------------------------------------------------------------------------------------------------------
def test_manual_seed_and_rng_state_restored_between_compiled_dropout_steps():
    def sc(L, compiled, rec):
        m = _mlp(L, drop=0.5)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss, L.rand(3)
        f = _maybe(compiled, step)
        L.manual_seed(0)
        outs, st = [], None
        for i in range(9):
            if i == 3:
                L.manual_seed(123)
            if i == 4:
                st = L.get_rng_state()
            if i == 6:
                L.set_rng_state(st)
            if i == 8:
                L.manual_seed(123)
            loss, r = f(_t(L, XS[i]), _t(L, YS[i]))
            rec(model=m, opt=opt, out=loss, r=r)
            outs.append(r.numpy().copy())
        assert np.allclose(outs[4], outs[6]) and np.allclose(outs[3], outs[8])
        assert not np.allclose(outs[0], outs[1])
        return f
    _stats(_three(sc, torch_too=False), eager_calls=0)


def test_generator_argument_and_its_state_between_calls():
    def sc(L, compiled, rec):
        g = L.Generator().manual_seed(5)

        def f0(x, gen):
            return x + L.randn(3, generator=gen), L.rand(2, generator=gen)
        f = _maybe(compiled, f0)
        x = L.zeros(3)
        outs, st = [], None
        for i in range(7):
            if i == 3:
                st = g.get_state()
            if i == 5:
                g.set_state(st)
            if i == 6:
                g.manual_seed(5)
            a, b = f(x, g)
            outs.append(np.concatenate([a.numpy(), b.numpy()]))
            rec(out=a, b=b)
        assert np.allclose(outs[3], outs[5]) and np.allclose(outs[0], outs[6])
        assert not np.allclose(outs[0], outs[1])
        return f
    _stats(_three(sc, torch_too=False), eager_calls=0, traces=1)


# ---- schedulers ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["created_late_and_loaded", "bound_late"])
def test_scheduler_created_loaded_or_stepped_outside_between_calls(kind):
    """created_late_and_loaded: a LambdaLR created after 3 compiled calls and stepped inside from then on, its
    state_dict saved and loaded back two calls later. bound_late: a CosineAnnealingLR stepped outside from the
    start, also stepped inside from the 5th call on."""
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.AdamW(m.parameters(), lr=1e-2)
        box = {"s": None, "out": None}

        def edit(i):
            if kind == "created_late_and_loaded":
                if i == 3:
                    box["s"] = L.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 ** e + 0.1)
                if i == 4:
                    box["saved"] = copy.deepcopy(box["s"].state_dict())
                if i == 6:
                    box["s"].load_state_dict(box["saved"])
            else:
                if i == 0:
                    box["out"] = L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
                if i == 4:
                    box["s"] = box["out"]
            if box["out"] is not None and i > 0:
                box["out"].step()
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            if box["s"] is not None:
                box["s"].step()
            return loss
        f = _maybe(compiled, step)
        for i in range(8):
            edit(i)
            rec(model=m, opt=opt, out=f(_t(L, XS[i]), _t(L, YS[i])), lr=opt.param_groups[0]["lr"])
        return f
    _stats(_three(sc), eager_calls=0)


# ---- GradScaler ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("update_inside", [True, False])
def test_grad_scaler_update_inside_or_outside_with_manual_scale_changes_and_an_inf_batch(update_inside):
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        scaler = L.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            if update_inside:
                scaler.update()
            return loss
        f = _maybe(compiled, step)
        for i in range(8):
            x = XS[i].copy()
            if i == 4:
                x[0, 0] = np.inf
            if i == 6:
                scaler.update(new_scale=8.0)
            out = f(_t(L, x), _t(L, YS[i]))
            if not update_inside:
                scaler.update()
            rec(model=m, opt=opt, out=out if i != 4 else None, scale=scaler.get_scale())
        return f
    # update() outside after step() inside: a documented graph break (the program does not replay the inf checks
    # update() reads), so every call runs eagerly -- and equals eager and torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _stats(_three(sc), eager_calls=0 if update_inside else 8)


def test_grad_scaler_load_state_dict_and_growth_settings_between_calls():
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)
        scaler = L.amp.GradScaler("cpu", init_scale=256.0, growth_interval=1)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            L.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            scaler.step(opt)
            scaler.update()
            return loss
        f = _maybe(compiled, step)
        saved = None
        for i in range(8):
            if i == 3:
                saved = copy.deepcopy(scaler.state_dict())
            if i == 4:
                scaler.set_growth_factor(4.0)
                scaler.set_backoff_factor(0.25)
            if i == 5:
                scaler.load_state_dict(saved)
            x = XS[i].copy()
            if i == 6:
                x[0, 0] = np.nan
            out = f(_t(L, x), _t(L, YS[i]))
            rec(model=m, opt=opt, out=out if i != 6 else None, scale=scaler.get_scale(), gf=scaler.get_growth_factor())
        return f
    _stats(_three(sc), eager_calls=0)


# ---- cache / reset / compiled forwards -------------------------------------------------------------------------
def test_alternating_batch_sizes_past_cache_size_limit_and_reset():
    """Four batch sizes in turn with a limit of 3 programs (the 4th runs eagerly), then ``ft.compiler.reset()``."""
    def sc(L, compiled, rec):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)

        def edit(i):
            if compiled and i == 0:
                f_box[0].cache_size_limit = 3
            if compiled and i == 6:
                ft.compiler.reset()
        n_of = (8, 5, 3, 6)
        f_box = []
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss
        f = _maybe(compiled, step)
        f_box.append(f)
        for i in range(8):
            edit(i)
            n = n_of[i % 4]
            rec(model=m, opt=opt, out=f(_t(L, XS[i][:n]), _t(L, YS[i][:n])))
        return f
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = _three(sc)
    # (the three programs: batch sizes 8, 5 and 3, the first call's run with its state made first; 6 runs eagerly;
    # after reset(), 3 and 6 are traced again)
    assert f.stats["eager_calls"] == 1 and f.stats["traces"] == 5, f.stats


def test_compiled_forward_with_module_edits_between_calls():
    """A compiled forward (no backward inside): parameters edited in place, a forward pre-hook added and removed,
    eval, a submodule swapped, train with Dropout's p set to 0, double(); eager-equal (dropout under a seed)."""
    def sc(L, compiled, rec):
        m = _mlp(L, drop=0.25)
        f = _maybe(compiled, lambda x: m(x).sum(1))
        h = None
        for i in range(10):
            L.manual_seed(i)
            if i == 3:
                with L.no_grad():
                    m[0].weight.mul_(-1)
            elif i == 4:
                h = m[2].register_forward_pre_hook(lambda mod, inp: (inp[0] * 0.5,))
            elif i == 5:
                h.remove()
            elif i == 6:
                m.eval()
            elif i == 7:
                m[1] = L.nn.Tanh()
            elif i == 8:
                m.train()
                m[3].p = 0.0
            elif i == 9:
                m.double()
            rec(model=m, out=f(_t(L, XS[i]).to(next(m.parameters()).dtype)))
        return f
    _stats(_three(sc, torch_too=False), eager_calls=0)
