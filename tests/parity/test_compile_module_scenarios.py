"""Compiled MODULES in ordinary eager training loops (forward compiled; ``loss.backward()`` and ``opt.step()``
outside), guards and graph breaks inside a compiled forward, randomness, ``utils.checkpoint`` scenarios, and the
memory helpers. Each scenario runs the same PyTorch-style code eagerly here, compiled here, and in real torch from
the same numpy weights and data, and compares values (compiled vs eager 1e-6, vs torch 1e-5).

Whole compiled training steps (optimizer inside the program) are test_compile_scenarios.py's; this file does not
repeat them. The bugs this sweep found are fixed and tested here; the ``xfail(strict=True)`` tests left are known
differences, each reason says which."""
import logging
import warnings

import jax
import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tck

import functorch_lite as ft
from _scenario import same_init
from functorch_lite._compile import config
from functorch_lite.utils import checkpoint as fck

RNG = np.random.default_rng(77)
XS = [RNG.standard_normal((8, 6)).astype(np.float32) for _ in range(10)]
YS = [RNG.integers(0, 3, 8) for _ in range(10)]


# ---- helpers ---------------------------------------------------------------------------------------------------
_init = same_init


def _np(t):
    if t is None:
        return None
    if isinstance(t, (int, float, bool)):
        return np.asarray(t)
    return t.detach().float().numpy().copy() if t.dtype in (ft.bfloat16, torch.bfloat16) else t.detach().numpy().copy()


def _assert_same(a, b, tol, what):
    assert sorted(a) == sorted(b), f"{what}: different keys {sorted(set(a) ^ set(b))}"
    for k in sorted(a):
        x, y = a[k], b[k]
        if x is None or y is None:
            assert x is None and y is None, f"{what}: {k} is None on one side only"
            continue
        np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(y, np.float64), rtol=tol, atol=tol,
                                   err_msg=f"{what}: {k}")


def _snap(model, prefix=""):
    out = {}
    for n, p in model.named_parameters():
        out[f"{prefix}p:{n}"] = _np(p)
        out[f"{prefix}g:{n}"] = _np(p.grad)
    for n, b in model.named_buffers():
        out[f"{prefix}b:{n}"] = _np(b)
    return out


def _tcompile(m):
    return torch.compile(m, backend="eager")


def _three(scenario, tol_eager=1e-6, tol_torch=1e-5):
    """``scenario(lib, compiled) -> (snapshot, extra)`` eagerly, compiled, and in torch; returns compiled's extra."""
    runs = {"eager": scenario(ft, False), "compiled": scenario(ft, True), "torch": scenario(torch, False)}
    _assert_same(runs["compiled"][0], runs["eager"][0], tol_eager, "compiled vs eager")
    _assert_same(runs["compiled"][0], runs["torch"][0], tol_torch, "compiled vs torch")
    return runs["compiled"][1]


def _bn_net(L):
    return _init(L.nn.Sequential(L.nn.Linear(6, 16, bias=False), L.nn.BatchNorm1d(16), L.nn.ReLU(),
                                 L.nn.Linear(16, 3)))


# ---- compiled forward in an eager training loop ----------------------------------------------------------------
@pytest.mark.parametrize("how", ["compile(model)", "model.compile()"])
def test_compiled_forward_eager_adam_loop_with_eval_under_grad(how):
    """The optimizer is built from the COMPILED module's ``parameters()`` (the same objects); 6 Adam steps with
    the step outside; eval forward WITH grad enabled in the middle (no BatchNorm update, a differentiable output,
    nothing stepped); params, grads, running stats and num_batches_tracked equal eager and torch."""
    def scenario(L, compiled):
        m = _bn_net(L)
        fwd = m
        if compiled and how == "compile(model)":
            fwd = ft.compile(m)
        elif compiled:
            m.compile()
        assert [id(p) for p in fwd.parameters()] == [id(p) for p in m.parameters()]
        opt = L.optim.Adam(fwd.parameters(), lr=1e-2)
        lf = L.nn.CrossEntropyLoss()
        s = {}
        for i in range(6):
            if i == 3:
                fwd.eval()
                out = fwd(L.tensor(XS[9]))
                assert out.requires_grad
                s["eval_out"] = _np(out)
                fwd.train()
            opt.zero_grad()
            loss = lf(fwd(L.tensor(XS[i])), L.tensor(YS[i]))
            loss.backward()
            opt.step()
            s[f"loss{i}"] = _np(loss)
        s.update(_snap(m))
        s["nbt"] = _np(m[1].num_batches_tracked)
        return s, fwd
    fwd = _three(scenario)
    stats = fwd._compiled.stats if how == "compile(model)" else fwd._compiled_call.stats
    assert stats["eager_calls"] == 0 and stats["calls"] == 7
    assert stats["traces"] <= 3, stats  # train (no .grad yet), train (.grad fields), eval


def test_state_dict_keys_named_members_and_load_through_the_wrapper():
    """compile(model): state_dict / named_parameters / named_buffers carry ``_orig_mod.`` as torch's
    OptimizedModule; loading the prefixed dict works, loading the bare dict raises torch's error, and a
    ``load_state_dict`` between compiled calls is seen by the next call; model.compile() keeps the bare keys."""
    ft_m, t_m = _bn_net(ft), _bn_net(torch)
    cm, tm = ft.compile(ft_m), _tcompile(t_m)
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in cm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert [n for n, _ in cm.named_modules()] == [n for n, _ in tm.named_modules()]
    for c, base in ((cm, ft_m), (tm, t_m)):
        assert str(c.load_state_dict(c.state_dict())) == "<All keys matched successfully>"
    # (a bare dict into the wrapper: torch's message; without BatchNorm, whose num_batches_tracked torch leaves
    # out of the missing keys there -- that difference is bug_08's)
    mlp = [comp(_init(L.nn.Sequential(L.nn.Linear(6, 4), L.nn.ReLU(), L.nn.Linear(4, 3))))
           for L, comp in ((ft, ft.compile), (torch, _tcompile))]
    with pytest.raises(RuntimeError) as theirs:
        mlp[1].load_state_dict(mlp[1]._orig_mod.state_dict())
    with pytest.raises(RuntimeError) as ours:
        mlp[0].load_state_dict(mlp[0]._orig_mod.state_dict())
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="Missing key"):
        cm.load_state_dict(ft_m.state_dict())
    x = ft.tensor(XS[0])
    cm.eval()
    before = cm(x).detach().numpy().copy()
    sd = {k: v * 2 if v.is_floating_point() else v for k, v in cm.state_dict().items()}
    cm.load_state_dict(sd)
    tm.eval()
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in sd.items()})
    after = cm(x).detach().numpy()
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, tm(torch.tensor(XS[0])).detach().numpy(), rtol=1e-5, atol=1e-5)
    m2 = _bn_net(ft)
    keys = list(m2.state_dict())
    m2.compile()
    m2.eval()
    assert list(m2.state_dict()) == keys
    m2.load_state_dict({k[len("_orig_mod."):]: v for k, v in sd.items()})
    np.testing.assert_allclose(m2(x).detach().numpy(), after, rtol=1e-6)


def test_loading_an_old_checkpoint_without_num_batches_tracked():
    ft_m, t_m = _bn_net(ft), _bn_net(torch)
    cm, tm = ft.compile(ft_m), _tcompile(t_m)
    for c in (tm, cm):
        sd = {k: v for k, v in c.state_dict().items() if "num_batches_tracked" not in k}
        assert str(c.load_state_dict(sd)) == "<All keys matched successfully>"


def test_hooks_registered_on_the_compiled_wrapper_run():
    outs = []
    for L, comp in ((torch, _tcompile), (ft, ft.compile)):
        cm = comp(_init(L.nn.Linear(6, 3)))
        cm.register_forward_pre_hook(lambda mod, inp: (inp[0] * 2,))
        cm.register_forward_hook(lambda mod, inp, out: out + 1)
        outs.append(_np(cm(L.tensor(XS[0]))))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)


def test_forward_hooks_on_inner_modules_change_values_and_gradients():
    """A pre-hook scaling a sub-module's input and a forward hook editing a sub-module's output (both part of
    the compiled program), one removed half-way; values and gradients equal eager and torch each step."""
    def scenario(L, compiled):
        m = _init(L.nn.Sequential(L.nn.Linear(6, 5), L.nn.Tanh(), L.nn.Linear(5, 3)))
        m[2].register_forward_pre_hook(lambda mod, inp: (inp[0] * 0.5,))
        h = m[0].register_forward_hook(lambda mod, inp, out: out * 2 + 0.1)
        fwd = ft.compile(m) if compiled else m
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        s = {}
        for i in range(4):
            if i == 2:
                h.remove()
            opt.zero_grad()
            x = L.tensor(XS[i], requires_grad=True)
            loss = fwd(x).pow(2).mean()
            loss.backward()
            opt.step()
            s[f"loss{i}"], s[f"xg{i}"] = _np(loss), _np(x.grad)
        s.update(_snap(m))
        return s, fwd
    assert _three(scenario)._compiled.stats["eager_calls"] == 0


def test_full_backward_hook_through_a_compiled_forward():
    res = []
    for L, comp in ((torch, _tcompile), (ft, ft.compile)):
        m = _init(L.nn.Sequential(L.nn.Linear(6, 5), L.nn.Tanh(), L.nn.Linear(5, 3)))
        seen = []
        m[2].register_full_backward_hook(lambda mod, gin, gout: seen.append((_np(gin[0]), _np(gout[0]))))
        comp(m)(L.tensor(XS[0])).pow(2).sum().backward()
        res.append(seen)
    assert len(res[0]) == len(res[1]) == 1
    for a, b in zip(res[0][0], res[1][0]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_freezing_a_layer_attribute_change_and_zero_grad_modes_between_calls():
    """``head.requires_grad_(False)`` for two steps then back (no new .grad while frozen; SGD's momentum keeps
    moving it, as eagerly and in torch), a Python attribute read in forward changed (a recompile),
    zero_grad(set_to_none=False) and one step without zero_grad (accumulation)."""
    def scenario(L, compiled):
        class Net(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = L.nn.Sequential(L.nn.Linear(6, 5), L.nn.Tanh())
                self.head = L.nn.Linear(5, 3)
                self.scale = 1.0

            def forward(self, x):
                return self.head(self.enc(x)) * self.scale
        m = _init(Net())
        fwd = ft.compile(m) if compiled else m
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        s = {}
        for i in range(8):
            if i == 2:
                m.head.requires_grad_(False)
            if i == 4:
                m.head.requires_grad_(True)
            if i == 5:
                m.scale = 2.0
            if i == 6:
                opt.zero_grad(set_to_none=False)
            elif i != 7:
                opt.zero_grad()
            loss = fwd(L.tensor(XS[i])).pow(2).mean()
            loss.backward()
            opt.step()
            s[f"loss{i}"], s[f"head.g{i}"] = _np(loss), _np(m.head.weight.grad)
        s.update(_snap(m))
        return s, fwd
    stats = _three(scenario)._compiled.stats
    # (frozen head; scale; the .grad fields zero_grad(set_to_none=False) leaves are known zeros, a signature of
    # their own, and the accumulating step's are arrays)
    assert stats["eager_calls"] == 0 and stats["traces"] == 5, stats


def test_nested_compiled_submodule_keys_and_training_equal_torch():
    """``m.enc = compile(m.enc)`` inside a model that is itself compiled: the state_dict / named_parameters
    carry ``enc._orig_mod.`` as torch's, and an Adam loop in eager equals torch's nested torch.compile."""
    def run(L, compiled):
        m = _init(L.nn.Sequential(L.nn.Linear(6, 5), L.nn.Tanh(), L.nn.Linear(5, 3)))
        m[0] = ft.compile(m[0]) if compiled else _tcompile(m[0])
        fwd = ft.compile(m) if compiled else _tcompile(m)
        opt = L.optim.Adam(fwd.parameters(), lr=1e-2)
        s = {}
        for i in range(4):
            opt.zero_grad()
            loss = fwd(L.tensor(XS[i])).pow(2).mean()
            loss.backward()
            opt.step()
            s[f"loss{i}"] = _np(loss)
        s.update(_snap(fwd))
        return s, list(fwd.state_dict())
    (ours, keys), (theirs, tkeys) = run(ft, True), run(torch, False)
    assert keys == tkeys and keys[0] == "_orig_mod.0._orig_mod.weight"
    _assert_same(ours, theirs, 1e-5, "nested compiled vs torch")


def test_to_dtype_between_calls_recompiles_and_keeps_training():
    """Two float32 steps, ``model.to(float64)`` (a new optimizer over the same parameters), two float64
    steps: equal to eager and torch; the dtype change recompiles."""
    def scenario(L, compiled):
        m = _bn_net(L)
        fwd = ft.compile(m) if compiled else m
        s = {}
        for i in range(4):
            if i == 2:
                fwd.to(L.float64)
            opt = L.optim.SGD(m.parameters(), lr=0.1)
            dt = L.float32 if i < 2 else L.float64
            opt.zero_grad()
            out = fwd(L.tensor(XS[i]).to(dt))
            assert out.dtype == dt
            loss = L.nn.functional.cross_entropy(out, L.tensor(YS[i]))
            loss.backward()
            opt.step()
            s[f"loss{i}"] = _np(loss)
        s.update(_snap(m))
        assert m[0].weight.dtype == L.float64 and m[1].running_mean.dtype == L.float64
        return s, fwd
    stats = _three(scenario)._compiled.stats
    assert stats["recompiles"] >= 1 and stats["eager_calls"] == 0


def _kw_net(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = L.nn.Linear(6, 5), L.nn.Linear(5, 3)

        def forward(self, x, scale=1.0, flag=False, extra=None):
            h = self.a(x).tanh() * scale
            if flag:
                h = h * 2
            if extra is not None:
                h = h + extra
            return {"out": self.b(h), "h": h}, (h.sum(),)
    return _init(M())


def test_kwargs_dict_and_tuple_outputs_autograd_grad_retain_graph_and_double_backward():
    def scenario(L, compiled):
        m = _kw_net(L)
        fwd = ft.compile(m) if compiled else m
        x = L.tensor(XS[0], requires_grad=True)
        d, (tot,) = fwd(x, scale=2.0, flag=True, extra=L.ones(5))
        loss = d["out"].pow(2).sum() + tot
        gx, gw = L.autograd.grad(loss, [x, m.a.weight], retain_graph=True)
        loss.backward(retain_graph=True)
        loss.backward()  # accumulates: grads are twice the single backward
        s = {"out": _np(d["out"]), "h": _np(d["h"]), "tot": _np(tot), "gx": _np(gx), "gw": _np(gw),
             "x.grad": _np(x.grad), "a.grad": _np(m.a.weight.grad)}
        x2 = L.tensor(XS[1], requires_grad=True)
        d2, _ = fwd(x2)
        g2, = L.autograd.grad(d2["out"].pow(2).sum(), x2, create_graph=True)
        g2.pow(2).sum().backward()
        s["x2.grad"], s["b.grad2"] = _np(x2.grad), _np(m.b.weight.grad)
        return s, fwd
    stats = _three(scenario, tol_torch=2e-5)._compiled.stats
    assert stats["eager_calls"] == 0


def test_second_backward_without_retain_graph_raises_as_torch():
    for L, comp in ((torch, _tcompile), (ft, ft.compile)):
        out = comp(_init(L.nn.Linear(6, 3)))(L.tensor(XS[0])).sum()
        out.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            out.backward()


def test_python_flags_none_and_batch_sizes_recompile_and_are_cached():
    """A bool flag, None vs a tensor, an int, and a smaller last batch: each distinct signature traces once,
    repeats are cache hits; values and gradients equal eager and torch."""
    calls = [dict(rows=8), dict(rows=8, flag=True), dict(rows=8), dict(rows=8, flag=True), dict(rows=3),
             dict(rows=8, extra=True), dict(rows=8, extra=True), dict(rows=8, scale=3), dict(rows=3)]

    def scenario(L, compiled):
        m = _kw_net(L)
        fwd = ft.compile(m) if compiled else m
        s = {}
        for i, c in enumerate(calls):
            m.zero_grad()
            extra = L.full((5,), 0.5) if c.get("extra") else None
            d, _ = fwd(L.tensor(XS[i][:c["rows"]]), scale=c.get("scale", 1.0), flag=c.get("flag", False),
                       extra=extra)
            d["out"].pow(2).mean().backward()
            s[f"out{i}"], s[f"g{i}"] = _np(d["out"]), _np(m.a.weight.grad)
        return s, fwd
    stats = _three(scenario)._compiled.stats
    # signatures (zero_grad() leaves no .grad fields): base, flag, rows=3, extra, scale=3
    assert stats["calls"] == 9 and stats["eager_calls"] == 0
    assert stats["traces"] == 5 and stats["cache_hits"] == 4, stats


def test_no_grad_and_inference_mode_around_compiled_calls_match_torch():
    res = {}
    for name, L, comp in (("ft", ft, ft.compile), ("torch", torch, _tcompile)):
        m = _bn_net(L)
        cm = comp(m)
        x = L.tensor(XS[0], requires_grad=True)
        with L.no_grad():
            a = cm(x)
        with L.inference_mode():
            b = cm(x)
        c = cm(x)
        r = {"a": (a.requires_grad, a.grad_fn is None, _np(a)), "b": (b.requires_grad, b.is_inference(), _np(b)),
             "c.grad_fn": c.grad_fn.name(),
             "nbt": m[1].num_batches_tracked.item(), "rm": _np(m[1].running_mean)}
        with pytest.raises(RuntimeError) as e1:
            a.sum().backward()
        with pytest.raises(RuntimeError) as e2:
            (b * c).sum().backward()
        r["errs"] = (str(e1.value), str(e2.value))
        res[name] = r
    o, t = res["ft"], res["torch"]
    assert o["a"][:2] == t["a"][:2] == (False, True)
    assert o["b"][:2] == t["b"][:2] == (False, True)
    np.testing.assert_allclose(o["a"][2], t["a"][2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o["b"][2], t["b"][2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o["rm"], t["rm"], rtol=1e-5, atol=1e-6)
    assert o["nbt"] == t["nbt"] == 3  # train mode: the running stats update under no_grad / inference too
    assert o["c.grad_fn"] == "CompiledFunctionBackward"  # (torch's backend="eager" keeps AddmmBackward0)
    assert o["errs"] == t["errs"]


# ---- graph breaks inside a compiled forward --------------------------------------------------------------------
class _Breaky:
    """Module factory whose forward has one host read / data-dependent branch, by kind."""

    @staticmethod
    def build(L, kind):
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(6, 3)

            def forward(self, x):
                y = self.lin(x)
                if kind == "item":
                    y = y * float(y.detach().abs().sum().item())  # (float(): the value itself; item() traces)
                elif kind == "tolist":
                    y = y * len(y.detach().tolist())
                elif kind == "numpy":
                    y = y + float(y.detach().numpy().mean())
                elif kind == "print":
                    print(y.detach()[0, 0])
                elif kind == "if":
                    if y.sum() > 0:
                        y = y * 2
                    else:
                        y = y - 1
                return y
        return _init(M())


BREAKS = {"item": r"\.item\(\)", "tolist": r"tolist", "numpy": r"numpy", "print": r"print",
          "if": r"Data-dependent branching"}


@pytest.mark.parametrize("kind", list(BREAKS))
def test_graph_break_in_a_compiled_forward(kind, capsys):
    """fullgraph=True (compile(model, fullgraph=True) and model.compile(fullgraph=True)): a GraphBreak naming the
    cause and this file's line; fullgraph=False: one warning, eager results and gradients equal to torch's, later
    calls silent."""
    strict = ft.compile(_Breaky.build(ft, kind), fullgraph=True)
    with pytest.raises(ft._compile.GraphBreak, match=BREAKS[kind]) as e:
        strict(ft.tensor(XS[0]))
    assert "test_compile_module_scenarios.py" in str(e.value)
    m2 = _Breaky.build(ft, kind)
    m2.compile(fullgraph=True)
    with pytest.raises(ft._dynamo.exc.Unsupported, match=BREAKS[kind]):
        m2(ft.tensor(XS[0]))

    def run(L, compiled):
        m = _Breaky.build(L, kind)
        fwd = ft.compile(m) if compiled else m
        s = {}
        for i in range(3):
            m.zero_grad()
            if compiled and i == 0:
                with pytest.warns(UserWarning, match="graph break"):
                    out = fwd(L.tensor(XS[i]))
            elif compiled:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    out = fwd(L.tensor(XS[i]))
            else:
                out = fwd(L.tensor(XS[i]))
            out.pow(2).mean().backward()
            s[f"out{i}"], s[f"g{i}"] = _np(out), _np(m.lin.weight.grad)
        return s, fwd
    fwd = _three(lambda L, c: run(L, c))
    assert fwd._compiled.stats["eager_calls"] == 3
    if kind == "print":  # eager fallback: printed on every call, as eager and torch do (3 runs x 3 calls)
        assert len([ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("tensor(")]) == 9


# ---- guards ----------------------------------------------------------------------------------------------------
_FACTOR = 2.0


def test_recompile_log_lines_name_shape_dtype_training_grad_mode_and_attribute(caplog):
    """compile(model) with log_recompiles: each recompile's line names what changed (the argument's shape,
    its dtype, the module's training flag, grad mode, a sub-module's Python attribute read in forward), and the
    result after each change is the eager one."""
    m = _init(ft.nn.Sequential(ft.nn.Linear(6, 3), ft.nn.Dropout(0.5)))
    m.extra = 1.0

    class Wrap(ft.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x) * self.m.extra
    w = Wrap()
    cm = ft.compile(w)
    x5 = ft.tensor(XS[0][:5])
    old = config.log_recompiles
    config.log_recompiles = True
    try:
        with caplog.at_level(logging.WARNING, logger="functorch_lite.compile"):
            cm(ft.tensor(XS[0][:4]))
            cm(ft.tensor(XS[0][:4]))
            cm(x5)
            m.double()
            cm(x5.double())
            m.float()
            cm(x5)  # a hit: float32 again
            cm.eval()
            a = cm(x5)
            with ft.no_grad():
                b = cm(x5)
            m.extra = 3.0
            with ft.no_grad():
                c = cm(x5)
    finally:
        config.log_recompiles = old
    msgs = [rec.getMessage() for rec in caplog.records if "recompiling" in rec.getMessage()]
    assert len(msgs) == 5, msgs
    assert "arg 0 changed: shape (4, 6)" in msgs[0] and "(5, 6)" in msgs[0]
    assert "float64" in msgs[1] and "arg 0" in msgs[1]
    assert "training changed: True -> False" in msgs[2]
    assert "grad mode changed: True -> False" in msgs[3]
    assert "extra changed" in msgs[4] and "3.0" in msgs[4]
    np.testing.assert_allclose(a.detach().numpy(), m(x5).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), a.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), 3 * b.numpy(), rtol=1e-6)
    assert cm._compiled.stats["traces"] == 6 and cm._compiled.stats["cache_hits"] == 2


def _global_scale_module(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(6, 3)

        def forward(self, x):
            return self.lin(x) * _FACTOR
    return _init(M())


def test_a_global_constant_read_in_forward_is_a_guard():
    global _FACTOR
    res = {}
    for name, L, comp in (("torch", torch, _tcompile), ("ft", ft, ft.compile)):
        cm = comp(_global_scale_module(L))
        _FACTOR = 2.0
        a = _np(cm(L.tensor(XS[0])))
        _FACTOR = 5.0
        b = _np(cm(L.tensor(XS[0])))
        _FACTOR = 2.0
        res[name] = (a, b)
    np.testing.assert_allclose(res["ft"][0], res["torch"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res["ft"][1], res["torch"][1], rtol=1e-5, atol=1e-6)


def test_a_closure_constant_read_in_forward_is_a_guard():
    res = {}
    for name, L, comp in (("torch", torch, _tcompile), ("ft", ft, ft.compile)):
        offset = 0.25

        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(6, 3)

            def forward(self, x):
                return self.lin(x) + offset
        cm = comp(_init(M()))
        a = _np(cm(L.tensor(XS[0])))
        offset = 0.5  # noqa: F841  (read by forward's closure)
        res[name] = (a, _np(cm(L.tensor(XS[0]))))
    np.testing.assert_allclose(res["ft"][0], res["torch"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res["ft"][1], res["torch"][1], rtol=1e-5, atol=1e-6)


def test_cache_size_limit_on_a_compiled_module_warns_and_runs_eagerly_with_gradients():
    m = _init(ft.nn.Linear(6, 3))
    tm = _init(torch.nn.Linear(6, 3))
    cm = ft.compile(m)
    old = config.cache_size_limit
    config.cache_size_limit = 2
    try:
        outs = []
        with pytest.warns(UserWarning, match=r"cache_size_limit \(2\)"):
            for rows in (1, 2, 3, 4, 3):
                m.zero_grad()
                tm.zero_grad()
                o, t = cm(ft.tensor(XS[0][:rows])), tm(torch.tensor(XS[0][:rows]))
                o.pow(2).sum().backward()
                t.pow(2).sum().backward()
                outs.append((_np(o), _np(m.weight.grad), _np(t), _np(tm.weight.grad)))
    finally:
        config.cache_size_limit = old
    for o, g, t, tg in outs:
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-6)
    assert cm._compiled.stats == {"calls": 5, "traces": 2, "cache_hits": 0, "eager_calls": 3, "recompiles": 1}


# ---- randomness ------------------------------------------------------------------------------------------------
def test_random_ops_in_a_compiled_function_follow_the_eager_stream():
    """randn / rand / dropout inside: fresh per call, the same sequence as eager under the same seed (README:
    the generator key is an input and an output), reproducible, and the global stream afterwards is the same;
    a seeded Generator argument and get/set_rng_state around a compiled call too."""
    def f(x):
        return x + ft.randn(x.shape) + ft.rand(3).sum() + ft.nn.functional.dropout(ft.ones(x.shape), 0.5)
    cf = ft.compile(f)

    def seq(fn):
        ft.manual_seed(3)
        return [fn(ft.zeros(16)).numpy().copy() for _ in range(3)] + [ft.randn(4).numpy().copy()]
    eager, comp, comp2 = seq(f), seq(cf), seq(cf)
    assert not np.array_equal(comp[0], comp[1])
    for a, b, c in zip(eager, comp, comp2):
        np.testing.assert_array_equal(b, c)
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
    g = ft.Generator().manual_seed(1)

    def h(x):
        return x + ft.randn(x.shape, generator=g)
    ch = ft.compile(h)
    c1, c2 = ch(ft.zeros(3)).tolist(), ch(ft.zeros(3)).tolist()
    g.manual_seed(1)
    assert [h(ft.zeros(3)).tolist(), h(ft.zeros(3)).tolist()] == [c1, c2] and c1 != c2
    ft.manual_seed(0)
    state = ft.get_rng_state()
    a = cf(ft.zeros(4)).numpy().copy()
    ft.set_rng_state(state)
    np.testing.assert_array_equal(cf(ft.zeros(4)).numpy(), a)
    assert cf.stats["eager_calls"] == 0 and cf.stats["traces"] == 2  # shapes 16 and 4


def test_dropout_compiled_module_in_an_eager_loop_equals_eager_and_reseeds():
    """Dropout in compile(model) trained in an eager loop: the same losses and parameters as the eager model
    under the same seed, and a second seeded run repeats them bit for bit."""
    def run(compiled):
        m = _init(ft.nn.Sequential(ft.nn.Linear(6, 16), ft.nn.ReLU(), ft.nn.Dropout(0.4), ft.nn.Linear(16, 3)))
        fwd = ft.compile(m) if compiled else m
        opt = ft.optim.Adam(m.parameters(), lr=1e-2)
        ft.manual_seed(11)
        losses = []
        for i in range(5):
            opt.zero_grad()
            loss = ft.nn.functional.cross_entropy(fwd(ft.tensor(XS[i])), ft.tensor(YS[i]))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return dict(_snap(m), losses=np.array(losses))
    e, c1, c2 = run(False), run(True), run(True)
    _assert_same(c1, c2, 0.0, "two seeded compiled runs")
    _assert_same(c1, e, 1e-6, "compiled vs eager")


# ---- checkpoint ------------------------------------------------------------------------------------------------
def _ck_fn(L, lin1, lin2, drop):
    def fn(x, y, n, scale=1.0, mode="a"):
        h = lin1(x).tanh()
        h = L.nn.functional.dropout(h, drop, training=drop > 0)
        for _ in range(n):
            h = lin2(h) * scale
        if mode == "b":
            h = h.sin()
        return h, (h * y).sum(), n
    return fn


def _ck_run(L, ck_on, drop, seed=5):
    ck = fck.checkpoint if L is ft else tck.checkpoint
    lin1, lin2 = _init(L.nn.Linear(6, 6), 1), _init(L.nn.Linear(6, 6), 2)
    fn = _ck_fn(L, lin1, lin2, drop)
    x, y = L.tensor(XS[0], requires_grad=True), L.tensor(XS[1][:, :1])
    L.manual_seed(seed)
    h, s, n = ck(fn, x, y, 2, scale=0.5, mode="b", use_reentrant=False) if ck_on else fn(x, y, 2, scale=0.5,
                                                                                         mode="b")
    assert n == 2
    (h.pow(2).sum() + s).backward()
    return {"h": _np(h), "s": _np(s), "x.grad": _np(x.grad), "w1": _np(lin1.weight.grad),
            "w2": _np(lin2.weight.grad)}


def test_checkpoint_multiple_outputs_kwargs_and_non_tensor_args():
    plain, ours, theirs = _ck_run(ft, False, 0.0), _ck_run(ft, True, 0.0), _ck_run(torch, True, 0.0)
    _assert_same(ours, plain, 0.0, "checkpoint vs plain")
    _assert_same(ours, theirs, 1e-5, "checkpoint vs torch")


def test_checkpoint_with_dropout_recomputes_the_same_mask():
    """ft: checkpointed == plain under the same seed (CKPT-10); torch the same (its RNG is preserved); the
    two libraries' streams differ, so the dropout case is not compared across them."""
    _assert_same(_ck_run(ft, True, 0.3), _ck_run(ft, False, 0.3), 0.0, "ft checkpoint vs plain")
    _assert_same(_ck_run(torch, True, 0.3), _ck_run(torch, False, 0.3), 0.0, "torch checkpoint vs plain")


@pytest.mark.xfail(strict=True, reason="BUG: checkpoint with several outputs names every output's grad_fn after the "
                                       "last op (torch keeps each own: SinBackward0 / SumBackward0)")
def test_checkpoint_multiple_outputs_keep_their_grad_fn_names():
    names = []
    for L, ck in ((torch, tck.checkpoint), (ft, fck.checkpoint)):
        x = L.ones(3, requires_grad=True)
        h, s = ck(lambda z: ((z * 2).sin(), z.exp().sum()), x, use_reentrant=False)
        names.append((h.grad_fn.name(), s.grad_fn.name()))
    assert names[1] == names[0] == ("SinBackward0", "SumBackward0")


def test_checkpoint_second_backward_without_retain_graph_raises():
    for L, ck in ((torch, tck.checkpoint), (ft, fck.checkpoint)):
        x = L.ones(2, requires_grad=True)
        out = ck(lambda z: (z * 2).sin().sum(), x, use_reentrant=False)
        out.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            out.backward()


def test_checkpoint_retain_graph_twice_and_changing_arguments_between_calls():
    """retain_graph backward twice accumulates as torch; the same function checkpointed with a different
    Python int / bool / batch size each call (cached nodes per signature) gives torch's gradients each time."""
    def run(L, ck_on):
        ck = fck.checkpoint if L is ft else tck.checkpoint
        lin = _init(L.nn.Linear(6, 6), 1)

        def fn(x, n, flag):
            for _ in range(n):
                x = lin(x).tanh()
            return x * 2 if flag else x
        s = {}
        for i, (n, flag, rows) in enumerate([(1, True, 8), (2, False, 8), (1, True, 8), (2, True, 3),
                                             (3, False, 8)]):
            lin.zero_grad()
            x = L.tensor(XS[i][:rows], requires_grad=True)
            h = ck(fn, x, n, flag, use_reentrant=False) if ck_on else fn(x, n, flag)
            loss = h.pow(2).sum()
            loss.backward(retain_graph=True)
            loss.backward()
            s[f"h{i}"], s[f"x{i}"], s[f"w{i}"] = _np(h), _np(x.grad), _np(lin.weight.grad)
        return s
    ours = run(ft, True)
    _assert_same(ours, run(ft, False), 1e-6, "checkpoint vs plain")
    _assert_same(ours, run(torch, True), 1e-5, "checkpoint vs torch")


def test_checkpoint_sequential_with_dropout_and_batchnorm_equals_plain_and_torch():
    """checkpoint_sequential over Linear/BatchNorm/ReLU/Dropout: ft checkpointed == ft plain under the same seed
    (the recomputation reuses the mask, BatchNorm's running stats updated once per forward as plain); without
    dropout, == torch too."""
    def run(L, segments, drop):
        layers = []
        for _ in range(3):
            layers += [L.nn.Linear(6, 6), L.nn.BatchNorm1d(6), L.nn.ReLU(), L.nn.Dropout(drop)]
        m = _init(L.nn.Sequential(*layers, L.nn.Linear(6, 3)))
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        ck = fck if L is ft else tck
        L.manual_seed(3)
        s = {}
        for i in range(3):
            opt.zero_grad()
            x = L.tensor(XS[i], requires_grad=True)
            out = ck.checkpoint_sequential(m, segments, x, use_reentrant=False) if segments else m(x)
            loss = out.pow(2).mean()
            loss.backward()
            opt.step()
            s[f"loss{i}"], s[f"x{i}"] = _np(loss), _np(x.grad)
        s.update(_snap(m))
        return s
    _assert_same(run(ft, 3, 0.3), run(ft, None, 0.3), 1e-6, "ft checkpoint_sequential vs plain (dropout)")
    ours, theirs = run(ft, 2, 0.0), run(torch, 2, 0.0)
    # torch's recomputation updates the checkpointed BatchNorms' buffers a second time (bug_09's DIFF): parameters,
    # gradients and losses only (step 0's loss and grads come before any buffer is read in eval form: all equal)
    keep = [k for k in theirs if not k.startswith("b:")]
    _assert_same({k: ours[k] for k in keep}, {k: theirs[k] for k in keep}, 1e-5, "checkpoint_sequential vs torch")


@pytest.mark.xfail(strict=True, reason="DIFF (torch quirk): torch's checkpoint recompute updates BatchNorm running "
                                       "stats twice per step, ft once (as without checkpoint)")
def test_checkpointed_batchnorm_buffers_match_torch():
    res = []
    for L, ck in ((torch, tck.checkpoint), (ft, fck.checkpoint)):
        bn = L.nn.BatchNorm1d(6)
        ck(bn, L.tensor(XS[0], requires_grad=True), use_reentrant=False).pow(2).sum().backward()
        res.append((bn.num_batches_tracked.item(), _np(bn.running_mean)))
    assert res[1][0] == res[0][0]
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)


def test_checkpoint_with_dropout_inside_a_compiled_step_equals_eager():
    """A compiled training step whose middle block is checkpointed and has dropout: the same losses and
    parameters as the eager step from the same seed, no eager fallback."""
    def run(compiled):
        m = _init(ft.nn.Sequential(ft.nn.Linear(6, 16), ft.nn.ReLU(), ft.nn.Dropout(0.3), ft.nn.Linear(16, 16),
                                   ft.nn.Tanh(), ft.nn.Linear(16, 3)))
        opt = ft.optim.AdamW(m.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            h = fck.checkpoint(m[0:5], x, use_reentrant=False)
            loss = ft.nn.functional.cross_entropy(m[5](h), y)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        ft.manual_seed(9)
        losses = [f(ft.tensor(XS[i]), ft.tensor(YS[i])).item() for i in range(5)]
        return dict(_snap(m), losses=np.array(losses)), f
    (e, _), (c, f) = run(False), run(True)
    _assert_same(c, e, 1e-6, "compiled vs eager")
    assert f.stats["eager_calls"] == 0 and f.stats["traces"] == 1


def test_checkpoint_under_autocast_matches_torch():
    res = []
    for L, ck in ((ft, fck.checkpoint), (torch, tck.checkpoint)):
        lin = _init(L.nn.Linear(6, 6), 1)
        x = L.tensor(XS[0], requires_grad=True)
        with L.autocast("cpu", dtype=L.bfloat16):
            h = ck(lambda z: lin(z).relu(), x, use_reentrant=False)
        h.float().pow(2).sum().backward()
        res.append((h.dtype, h.grad_fn.name(), x.grad.dtype, lin.weight.grad.dtype, _np(h), _np(x.grad),
                    _np(lin.weight.grad)))
    (o, t) = res
    assert str(o[0]) == str(t[0]) == "torch.bfloat16" and o[1] == t[1] == "ReluBackward0"
    assert str(o[2]) == str(t[2]) == str(o[3]) == str(t[3]) == "torch.float32"
    for a, b in zip(o[4:], t[4:]):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)


# ---- memory ----------------------------------------------------------------------------------------------------
def test_memory_analysis_of_a_compiled_function_and_module():
    """Exact argument / output bytes for a matmul + relu (the closure weight is an argument); the module's
    compiled callable reports its parameters too; memory_analysis traces but does not count a call, and the
    next real call is a cache hit."""
    w = ft.randn(256, 128)

    @ft.compile
    def f(x):
        return (x @ w).relu()
    x = ft.randn(64, 256)
    ma = f.memory_analysis(x)
    assert set(ma) >= {"argument_bytes", "output_bytes", "temp_bytes", "alias_bytes", "peak_bytes"}
    assert ma["argument_bytes"] == (64 * 256 + 256 * 128) * 4 and ma["output_bytes"] == 64 * 128 * 4
    assert ma["peak_bytes"] == ma["argument_bytes"] + ma["output_bytes"] + ma["temp_bytes"] - ma["alias_bytes"]
    assert f.stats["calls"] == 0 and f.stats["traces"] == 1
    f(x)
    assert f.stats["cache_hits"] == 1 and f.stats["traces"] == 1
    m = ft.nn.Linear(256, 128)
    cm = ft.compile(m)
    mma = cm._compiled.memory_analysis(x)
    assert mma["argument_bytes"] == (64 * 256 + 256 * 128 + 128) * 4 and mma["output_bytes"] == 64 * 128 * 4


def test_cuda_memory_functions_on_cpu_are_zero_and_callable_through_a_loop():
    """Documented CPU behaviour, also after compiled calls: allocated/peak 0; mem_get_info, synchronize and
    reset_peak_memory_stats raise what torch's CPU build raises."""
    cm = ft.compile(_init(ft.nn.Linear(6, 3)))
    cm(ft.tensor(XS[0])).sum().backward()
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        ft.cuda.synchronize()
    assert ft.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert ft.cuda.max_memory_allocated() == torch.cuda.max_memory_allocated() == 0
    assert ft.cuda.memory_reserved() == torch.cuda.memory_reserved() == 0
    with pytest.raises(AttributeError, match="_cuda_resetPeakMemoryStats"):
        ft.cuda.reset_peak_memory_stats()
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        ft.cuda.mem_get_info()


def test_cuda_empty_cache_and_memory_stats_exist():
    assert ft.cuda.empty_cache() is torch.cuda.empty_cache() is None
    assert dict(ft.cuda.memory_stats()) == dict(torch.cuda.memory_stats()) == {}
    assert ft.cuda.max_memory_reserved() == torch.cuda.max_memory_reserved() == 0


# ---- a compiled forward's backward: from saved residuals, or the forward again where Python runs in it -------------
def _mlp(L):
    return _init(L.nn.Sequential(L.nn.Linear(6, 16), L.nn.Tanh(), L.nn.Linear(16, 16), L.nn.ReLU(),
                                 L.nn.Linear(16, 3)))


def test_compiled_forward_backward_starts_from_saved_residuals():
    """compile(model) in an eager loop: the forward program also saves what the backward needs, so the node's
    backward does not run the forward's matmuls again (it did: compile(model) trained slower than eager). Its
    program has fewer flops than the recomputing one, and gradients equal eager and torch over 4 Adam steps."""
    from functorch_lite._compile.nodes import _SavedEntry

    def scenario(L, compiled):
        m = _mlp(L)
        fwd = ft.compile(m) if compiled else m
        opt = L.optim.Adam(m.parameters(), lr=1e-2)
        s, node = {}, None
        for i in range(4):
            opt.zero_grad()
            out = fwd(L.tensor(XS[i]))
            out.pow(2).sum().backward()
            s[f"g{i}"] = _np(m[0].weight.grad)
            opt.step()
        s["w"] = _np(m[2].weight)
        return s, fwd(L.tensor(XS[5])).grad_fn if compiled else None  # (a node whose arrays are not freed yet)
    node = _three(scenario)
    e = node._entry
    assert isinstance(e, _SavedEntry)
    cts = (jax.numpy.ones((8, 3), jax.numpy.float32),)
    arrays = tuple(node._arrays)
    assert len(arrays) > e.n_leaves  # (the residuals follow the input leaves)
    saved = jax.jit(e.vjp_apply(node._diff_idx)).lower(arrays, cts)
    again = jax.jit(e.differentiable_apply(node._diff_idx)).lower(arrays, cts)
    # exactly the backward's matmuls (two per layer, no input gradient for the first: 5) from saved residuals;
    # recomputing also runs the two forward matmuls whose outputs the tanh/relu pullbacks read (7)
    assert [p.as_text().count("stablehlo.dot_general") for p in (saved, again)] == [5, 7]
    saved, again = (p.compile().cost_analysis() for p in (saved, again))
    saved, again = (c[0] if isinstance(c, list) else c for c in (saved, again))
    # the forward's matmuls (6400 flops) are not run again; the elementwise ops between them are (from the saved
    # matmul outputs): measured 12789 against 18421 flops
    assert saved["flops"] < again["flops"] - 0.75 * 2 * 8 * (6 * 16 + 16 * 16 + 16 * 3)


def _clipping_hook_net(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = L.nn.Linear(6, 5), L.nn.Linear(5, 3)

        def forward(self, x):
            h = self.a(x).tanh()
            if h.requires_grad:
                h.register_hook(lambda g: g.clamp(-0.05, 0.05))  # not linear in the gradient
            return self.b(h)
    return _init(M())


def _clipping_function_net(L):
    class ClipGrad(L.autograd.Function):  # the identity, its gradient clipped
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g.clamp(-0.05, 0.05)
    clip = ClipGrad

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = L.nn.Linear(6, 5), L.nn.Linear(5, 3)

        def forward(self, x):
            return self.b(clip.apply(self.a(x).tanh()))
    return _init(M())


@pytest.mark.parametrize("net", [_clipping_hook_net, _clipping_function_net])
def test_compiled_forward_whose_backward_runs_python_on_gradients(net):
    """A tensor hook or a custom Function that clips the gradient inside a compiled forward: the backward is not
    linear in the output gradient, so it cannot start from residuals linearized at zero (that would give the
    unclipped gradient); the node runs the forward and its backward again, and gradients equal eager and torch."""
    def scenario(L, compiled):
        m = net(L)
        fwd = ft.compile(m) if compiled else m
        s = {}
        for i in range(3):
            m.zero_grad()
            (fwd(L.tensor(XS[i])) * 10).pow(2).sum().backward()
            s[f"a{i}"], s[f"b{i}"] = _np(m.a.weight.grad), _np(m.b.weight.grad)
        return s, fwd
    _three(scenario)
