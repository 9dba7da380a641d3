"""functorch_lite.compile (issue 5): whole training steps as one program, equal to eager and to real torch;
compiled modules (train/eval, buffers, state_dict, backward outside); randomness; guards and recompiles;
graph breaks; options."""
import logging
import re
import types
import warnings

import jax
import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite import nn
from functorch_lite._compile import state as S

RNG = np.random.default_rng(0)
XS = [RNG.standard_normal((8, 6)).astype(np.float32) for _ in range(50)]
YS = [RNG.integers(0, 3, 8) for _ in range(50)]
W0 = [RNG.standard_normal((16, 6)).astype(np.float32) * 0.4, RNG.standard_normal(16).astype(np.float32) * 0.1,
      RNG.standard_normal((3, 16)).astype(np.float32) * 0.4, RNG.standard_normal(3).astype(np.float32) * 0.1]


def _model(lib):
    m = lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.ReLU(), lib.nn.Linear(16, 3))
    with lib.no_grad():
        for p, w in zip(m.parameters(), W0):
            p.copy_(lib.tensor(w))
    return m


def _optimizer(lib, kind, params):
    if kind == "sgd":
        return lib.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3)
    return lib.optim.AdamW(params, lr=1e-2, weight_decay=0.05)


def _step_fn(lib, model, opt, sched=None, clip=None):
    loss_fn = lib.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        if clip is not None:
            lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        if sched is not None:
            sched.step()
        return loss
    return step


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
def test_whole_training_step_equals_eager_and_torch(kind):
    """50 steps: compiled == eager within 1e-6 and == torch within 1e-5; two traces in all (the first step
    creates the optimizer state and the .grad fields, so its signature differs), then cache hits."""
    runs = {}
    for name, lib, compiled in (("eager", ft, False), ("compiled", ft, True), ("torch", torch, False)):
        model = _model(lib)
        opt = _optimizer(lib, kind, model.parameters())
        step = _step_fn(lib, model, opt)
        if compiled:
            step = ft.compile(step)
        losses = [step(lib.tensor(x), lib.tensor(y)).item() for x, y in zip(XS, YS)]
        runs[name] = (losses, [p.detach().numpy().copy() for p in model.parameters()], step)
    np.testing.assert_allclose(runs["compiled"][0], runs["eager"][0], rtol=1e-6, atol=1e-6)
    for a, b, c in zip(runs["compiled"][1], runs["eager"][1], runs["torch"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(runs["compiled"][0], runs["torch"][0], rtol=1e-5, atol=1e-5)
    stats = runs["compiled"][2].stats
    assert stats["traces"] == 1 and stats["cache_hits"] == 49 and stats["eager_calls"] == 0


def test_scheduler_and_clipping_inside_the_step_never_recompile():
    """LR changes are inputs (the group's lr is traced); scheduler.step() runs after the program, in order."""
    results = []
    for lib, compiled in ((ft, False), (ft, True), (torch, False)):
        model = _model(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
        step = _step_fn(lib, model, opt, sched, clip=0.5)
        if compiled:
            step = ft.compile(step)
        losses = [step(lib.tensor(x), lib.tensor(y)).item() for x, y in zip(XS[:20], YS[:20])]
        results.append((losses, opt.param_groups[0]["lr"], [p.detach().numpy().copy() for p in model.parameters()],
                        step))
    (le, lre, pe, _), (lc, lrc, pc, step), (lt, lrt, pt, _) = results
    np.testing.assert_allclose(lc, le, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(lc, lt, rtol=1e-5, atol=1e-5)
    assert lrc == lre == pytest.approx(lrt, rel=1e-12)
    for a, b in zip(pc, pt):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert step.stats["traces"] == 1 and step.stats["recompiles"] == 0


def test_compiled_module_train_backward_outside_and_buffers():
    """compile(model): forward in train mode records one node (backward outside works, grads == eager);
    BatchNorm running stats are updated; eval mode recompiles; state_dict keys carry _orig_mod. (as torch)."""
    def build():
        ft.manual_seed(1)
        return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    eager, model = build(), build()
    cm = ft.compile(model)
    tm = torch.compile(torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8)))
    assert [k.split(".", 1)[0] for k in cm.state_dict()] == ["_orig_mod"] * 9
    assert list(cm.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]
    assert list(tm.state_dict())[0] == "_orig_mod.0.weight"
    for x in XS[:3]:
        for m in (eager, cm):
            out = m(ft.tensor(x))
            assert out.requires_grad
            (out ** 2).mean().backward()
    for pe, pc in zip(eager.parameters(), model.parameters()):
        np.testing.assert_allclose(pc.grad.numpy(), pe.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model[1].running_mean.numpy(), eager[1].running_mean.numpy(), rtol=1e-6)
    assert model[1].num_batches_tracked.item() == 3
    cm.eval()
    eager.eval()
    with ft.no_grad():
        np.testing.assert_allclose(cm(ft.tensor(XS[5])).numpy(), eager(ft.tensor(XS[5])).numpy(), rtol=1e-5)
    assert cm._compiled.stats["recompiles"] >= 1


def test_module_compile_in_place():
    ft.manual_seed(2)
    m = nn.Linear(6, 3)
    ref = m(ft.tensor(XS[0])).detach().numpy()
    keys = list(m.state_dict())
    m.compile()
    np.testing.assert_allclose(m(ft.tensor(XS[0])).detach().numpy(), ref, rtol=1e-6)
    assert list(m.state_dict()) == keys


def test_randomness_fresh_each_call_and_reproducible():
    @ft.compile
    def noisy(x):
        return nn.functional.dropout(x, 0.5) + ft.randn(x.shape) * 0
    x = ft.ones(64)
    ft.manual_seed(0)
    a, b = noisy(x).numpy(), noisy(x).numpy()
    ft.manual_seed(0)
    c, d = noisy(x).numpy(), noisy(x).numpy()
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(b, d)
    assert noisy.stats["traces"] == 1


def test_guards_recompile_on_shape_dtype_requires_grad_and_python_values(caplog):
    from functorch_lite._compile import config

    @ft.compile
    def f(x, scale):
        return x * scale

    f(ft.ones(3), 2.0)
    f(ft.ones(3), 2.0)
    assert f.stats == {"calls": 2, "traces": 1, "cache_hits": 1, "eager_calls": 0, "recompiles": 0}
    old = config.log_recompiles
    config.log_recompiles = True
    try:
        with caplog.at_level(logging.WARNING, logger="functorch_lite.compile"):
            f(ft.ones(4), 2.0)
            f(ft.ones(4, dtype=ft.float64), 2.0)
            f(ft.ones(4, dtype=ft.float64), 3.0)
    finally:
        config.log_recompiles = old
    assert f.stats["traces"] == 4 and f.stats["recompiles"] == 3
    msgs = [r.getMessage() for r in caplog.records]
    assert "arg 0 changed: shape (3,)" in msgs[0] and "(4,)" in msgs[0]
    assert "float64" in msgs[1]
    assert "arg 1 changed" in msgs[2]
    assert f(ft.ones(4, dtype=ft.float64), 3.0).tolist() == [3.0] * 4


def test_a_warm_training_step_moves_nothing_between_host_and_device():
    """Once compiled, a step passes only device arrays: the optimizer's numeric options go to the device once per
    value (on a GPU a Python float argument is a host-to-device copy per option per call), and nothing is read
    back. A changed option is picked up (one copy of the new value)."""
    ft.manual_seed(0)
    model = ft.nn.Sequential(ft.nn.Linear(4, 8), ft.nn.ReLU(), ft.nn.Linear(8, 1))
    opt = ft.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.8, 0.9), weight_decay=0.1)
    x, y = ft.randn(16, 4), ft.randn(16, 1)

    @ft.compile
    def step():
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    for _ in range(4):
        step()
    with jax.transfer_guard("disallow"):
        losses = [step() for _ in range(3)]
    assert float(losses[-1]) < float(losses[0])
    opt.param_groups[0]["lr"] = 0.0  # the new value reaches the program: at lr 0 AdamW leaves the weights as they are
    before = [p.detach().numpy().copy() for p in model.parameters()]
    step()
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), b)
    assert step.stats["traces"] == 1 and step.stats["eager_calls"] == 0


def test_float32_matmul_precision_is_a_guard(caplog):
    """A program traced under one matmul precision is not reused under another (XLA bakes it into the program):
    changing set_float32_matmul_precision recompiles, and the log names it."""
    from functorch_lite._compile import config
    f = ft.compile(lambda a, b: a @ b)
    a, b = ft.ones(2, 3), ft.ones(3, 2)
    f(a, b)
    old = config.log_recompiles
    config.log_recompiles = True
    try:
        with caplog.at_level(logging.WARNING, logger="functorch_lite.compile"):
            ft.set_float32_matmul_precision("high")
            f(a, b)
    finally:
        config.log_recompiles = old
        ft.set_float32_matmul_precision("highest")
    assert f(a, b).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert f.stats["traces"] == 2 and f.stats["recompiles"] == 1 and f.stats["cache_hits"] == 1
    assert "float32 matmul precision changed: 'highest' -> 'high'" in caplog.records[0].getMessage()


def test_recompile_log_names_a_replaced_optimizer(caplog):
    """A step whose optimizer is replaced by one of another class: its state's structure goes from a pytree to
    None (comparing those raised TypeError inside the log message, only with the log on)."""
    from functorch_lite._compile import config

    def run(L, C, log=False):
        m = L.nn.Linear(4, 2)
        with L.no_grad():
            m.weight.fill_(0.5)
            m.bias.zero_()
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        def step(x):
            opt.zero_grad()
            loss = m(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss.detach()
        step = C(step)
        x = L.ones(3, 4)
        losses = [step(x).item() for _ in range(3)]
        opt = L.optim.Adam(m.parameters(), lr=0.01)
        old = config.log_recompiles
        config.log_recompiles = log
        try:
            with caplog.at_level(logging.WARNING, logger="functorch_lite.compile"):
                losses += [step(x).item() for _ in range(2)]
        finally:
            config.log_recompiles = old
        return losses
    want = run(torch, lambda f: f)
    got = run(ft, ft.compile, log=True)
    assert all(abs(a - b) <= 1e-6 * abs(a) for a, b in zip(got, want)), (got, want)
    assert "opt.state[0][0] changed" in caplog.records[0].getMessage()


def test_cache_size_limit_warns_and_runs_eagerly():
    from functorch_lite._compile import config

    @ft.compile
    def f(x):
        return x + 1
    old = config.cache_size_limit
    config.cache_size_limit = 2
    try:
        f(ft.ones(1))
        f(ft.ones(2))
        with pytest.warns(UserWarning, match="cache_size_limit"):
            r = f(ft.ones(3))
    finally:
        config.cache_size_limit = old
    assert r.tolist() == [2.0, 2.0, 2.0] and f.stats["eager_calls"] == 1


@pytest.mark.parametrize("body,cause", [
    (lambda x: x * 2 if x.sum().item() > 0 else x, r"\.item\(\)"),  # (a branch on it; item() alone traces)
    (lambda x: x * 2 if x.sum() > 0 else x, r"Data-dependent branching"),  # COMP-11
    (lambda x: (print(x), x)[1], r"print"),
    (lambda x: x * len(x.tolist()), r"tolist"),
])
def test_graph_breaks(body, cause):
    """fullgraph=True: an error naming the cause and this file's line; otherwise a one-time warning and the
    correct eager result."""
    strict = ft.compile(body, fullgraph=True)
    with pytest.raises(ft._compile.GraphBreak, match=cause) as e:
        strict(ft.ones(3))
    assert "test_compile.py" in str(e.value)
    loose = ft.compile(body)
    with pytest.warns(UserWarning, match="graph break"):
        r = loose(ft.ones(3))
    np.testing.assert_allclose(r.numpy(), body(ft.ones(3)).numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loose(ft.ones(3))  # warned once; later calls run eagerly without a warning
    assert loose.stats["eager_calls"] == 2


class _Holder:  # a class attribute the function reads by name: reached (as torch's dynamo reaches it)
    t = ft.zeros(3)


def _deep(levels, leaf):
    """``leaf`` below ``levels`` nested objects (past 16, the discovery's depth: a write there is unreachable)."""
    for _ in range(levels):
        leaf = types.SimpleNamespace(inner=leaf)
    return leaf


_DEEP = _deep(20, ft.zeros(3))
_NAMED = _deep(5, ft.zeros(3))


def _inner(o, levels):
    for _ in range(levels):
        o = o.inner
    return o


def test_write_five_named_attributes_down_is_compiled():
    """Below the walk's first three levels it follows what the code names (``inner``): reached, one program."""
    def f(x):
        _NAMED.inner.inner.inner.inner.inner.add_(x)
        return x
    cf = ft.compile(f, fullgraph=True)
    for _ in range(3):
        cf(ft.ones(3))
    assert _inner(_NAMED, 5).tolist() == [3.0, 3.0, 3.0] and cf.stats["eager_calls"] == 0


def test_write_to_unreachable_tensor_is_a_graph_break():
    def f(x):
        _inner(_DEEP, 20).add_(x)
        return x
    t = _inner(_DEEP, 20)
    with pytest.raises(ft._compile.GraphBreak, match="cannot see"):
        ft.compile(f, fullgraph=True)(ft.ones(3))
    assert t.tolist() == [0.0, 0.0, 0.0]  # the trace was undone
    with pytest.warns(UserWarning, match="graph break"):
        ft.compile(f)(ft.ones(3))
    assert t.tolist() == [1.0, 1.0, 1.0]  # eager fallback: the write happened once


def test_write_to_a_class_attribute_tensor_is_compiled():
    def f(x):
        _Holder.t.add_(x)
        return x
    cf = ft.compile(f, fullgraph=True)
    for _ in range(3):
        cf(ft.ones(3))
    assert _Holder.t.tolist() == [3.0, 3.0, 3.0] and cf.stats["eager_calls"] == 0  # one write per call


def test_seed_loop_compiled_equals_eager():
    """W1: the seed loop's manual SGD (globals X, Y, W, b; no_grad update; grad.zero_()) as one program."""
    def run(compiled):
        ft.manual_seed(42)
        X = ft.randn(64, 2)
        Y = X @ ft.tensor([[3.0], [-2.0]]) + ft.tensor([5.0])
        W = ft.randn(2, 1, requires_grad=True)
        b = ft.zeros(1, requires_grad=True)

        def epoch():
            nonlocal W, b  # (globals in the seed script; `W -= ...` rebinds the same tensor)
            loss = ft.mean((X @ W + b - Y) ** 2)
            loss.backward()
            with ft.no_grad():
                W -= 0.1 * W.grad
                b -= 0.1 * b.grad
                W.grad.zero_()
                b.grad.zero_()
            return loss
        step = ft.compile(epoch) if compiled else epoch
        losses = [step().item() for _ in range(60)]
        return losses, W.detach().numpy(), b.detach().numpy()
    (le, we, be), (lc, wc, bc) = run(False), run(True)
    np.testing.assert_allclose(lc, le, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(wc, we, rtol=1e-6)
    np.testing.assert_allclose(bc, be, rtol=1e-6)


@pytest.mark.parametrize("kw,msg", [
    ({"mode": "bogus"}, "Unrecognized mode=bogus, should be one of: default, lite, reduce-overhead, "
                        "max-autotune-no-cudagraphs, max-autotune"),  # COMP-03
    ({"mode": "default", "options": {}}, "Either mode or options can be specified, but both can't be specified at "
                                         "the same time."),  # COMP-04
    ({"backend": "tensorrt"}, "Invalid backend: 'tensorrt', see `torch._dynamo.list_backends()` for available backends."),
])
def test_options_validated(kw, msg):
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        ft.compile(lambda x: x, **kw)


def test_dynamic_true_is_accepted_warns_that_shapes_specialize_and_equals_torch():  # COMP-05/06
    def f(x, y):
        return (x * y).sum(0) + 1
    with pytest.warns(UserWarning, match=re.escape("compile(dynamic=True): XLA programs have static shapes")):
        cf = ft.compile(f, fullgraph=True, dynamic=True)
    tf = torch.compile(f, fullgraph=True, dynamic=True, backend="eager")
    for n in (3, 5, 3):
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        got, want = cf(ft.tensor(x), ft.tensor([2.0, 3.0])), tf(torch.tensor(x), torch.tensor([2.0, 3.0]))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert cf.stats["traces"] == 2 and cf.stats["cache_hits"] == 1  # one program per shape, the third call reused


def test_mode_errors_match_torch():
    for kw in ({"mode": "bogus"}, {"mode": "default", "options": {}}):
        with pytest.raises(RuntimeError) as theirs:
            torch.compile(lambda x: x, **kw)
        with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
            ft.compile(lambda x: x, **kw)


def test_compiled_function_wraps_and_modules_keep_orig_mod():  # COMP-02, COMP-10
    def f(x):
        return x + 1
    assert ft.compile(f).__wrapped__ is f
    m = nn.Linear(2, 2)
    cm = ft.compile(m)
    assert isinstance(cm, nn.Module) and cm._orig_mod is m


def test_accepted_modes_and_backends_and_decorator_forms():
    for kw in ({"mode": "reduce-overhead"}, {"mode": "max-autotune"}, {"backend": "aot_eager"}, {}):
        f = ft.compile(**kw)(lambda x: x * 2)
        assert f(ft.ones(2)).tolist() == [2.0, 2.0]
    assert ft.compile(lambda x: x, disable=True)(3) == 3


def _block(lib, seed=1):
    """A small attention block in the W3 pattern: qkv split into views, view + transpose, LayerNorm, GELU."""
    B, T, D, H = 2, 5, 8, 2
    g = np.random.default_rng(seed)

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = lib.nn.LayerNorm(D)
            self.qkv, self.proj, self.fc = lib.nn.Linear(D, 3 * D), lib.nn.Linear(D, D), lib.nn.Linear(D, 3)

        def forward(self, x):
            q, k, v = self.qkv(self.ln(x)).split(D, dim=2)
            q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
            att = ((q @ k.transpose(-2, -1)) * 0.5).softmax(dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, D))
            return self.fc(lib.nn.functional.gelu(x)).mean(1)

    m = Block()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(g.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    x = lib.tensor(g.standard_normal((B, T, D)).astype(np.float32))
    y = lib.tensor(g.integers(0, 3, B))
    return m, x, y


def test_attention_block_step_equals_eager_and_torch():
    """Gradients reach every parameter through the split views (qkv, ln): 10 SGD-momentum steps compiled ==
    eager == torch (SGD, not Adam: the key bias's true gradient is 0 — softmax ignores a per-row shift — and
    Adam would blow its rounding noise up to full steps), and the donated program pairs each rewritten buffer
    with its own output (no shifted aliasing: XLA copied every aliased buffer twice when a dropped .grad input
    was pruned)."""
    runs = {}
    for name, lib, compiled in (("eager", ft, False), ("compiled", ft, True), ("torch", torch, False)):
        m, x, y = _block(lib)
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        step = _step_fn(lib, m, opt)
        if compiled:
            step = ft.compile(step)
        losses = [step(x, y).item() for _ in range(10)]
        runs[name] = (losses, [p.detach().numpy().copy() for p in m.parameters()], step, (x, y))
    for name in ("compiled", "torch"):
        np.testing.assert_allclose(runs[name][0], runs["eager"][0], rtol=1e-5, atol=1e-6)
        for a, b in zip(runs[name][1], runs["eager"][1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    _assert_donation_pairs_own_outputs(runs["compiled"][2], *runs["compiled"][3])


def _assert_donation_pairs_own_outputs(cf, *args):
    """In the donated program of ``cf``'s last signature, every input->output alias joins a slot's input to
    the same slot's output (JAX pairs donated inputs with same-shaped outputs in order)."""
    entry = list(cf.cache.values())[-1]
    fn, _ = entry.donating
    d = S.discover(cf.fn, args, {})
    in_vals = [None if i in entry.skip else s.get() for i, s in enumerate(d.slots)]
    slot_of_leaf = [i for i, v in enumerate(in_vals) for _ in jax.tree_util.tree_leaves(v)]
    cf._ctx = (d, args, {})
    try:
        txt = fn.lower(*jax.tree_util.tree_leaves(in_vals)).compile().as_text()
    finally:
        cf._ctx = None
    slot_of_out = [o[0] for o in entry.spec.outputs for _ in jax.tree_util.tree_leaves(in_vals[o[0]])]
    aliases = txt.split("input_output_alias=")[1].split("\n")[0]  # {output}: (parameter, {}, may-alias)
    pairs = [(int(o), int(i)) for o, i in re.findall(r"\{(\d+)\}: \((\d+), \{\}", aliases)]
    assert pairs
    for o, i in pairs:
        assert slot_of_out[o] == slot_of_leaf[i], (o, i, d.slots[slot_of_out[o]].name, d.slots[slot_of_leaf[i]].name)


@pytest.mark.parametrize("lib", ["ft", "torch"])
def test_results_alias_what_the_function_reached(lib):
    """A compiled function returning a tensor it reached (``return W``/``return x``) returns that object, and
    a view of one (``x[0]``, ``x.t()``) returns a view of it: writes to the result show in W / x, as they do
    under torch.compile. Before, the facade returned copies, and such a write was silently lost."""
    m = ft if lib == "ft" else torch
    comp = ft.compile if lib == "ft" else (lambda f: torch.compile(f, backend="eager"))
    W = m.ones(2)

    def get_w():
        return W

    def same(x):
        return x

    def row(x):
        return x[0]

    def bump_and_view(x):
        x.add_(1)
        return x.t()
    r = comp(get_w)()
    assert r is W
    r.add_(1)
    x = m.zeros(2)
    y = comp(same)(x)
    assert y is x
    x2 = m.zeros(2, 2)
    v = comp(row)(x2)
    v.add_(7)
    x3 = m.zeros(2, 3)
    t = comp(bump_and_view)(x3)
    assert tuple(t.shape) == (3, 2) and t.stride() == (1, 3)
    t[0, 1] = 5.0
    np.testing.assert_array_equal(W.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(x2.numpy(), [[7.0, 7.0], [0.0, 0.0]])
    np.testing.assert_array_equal(x3.numpy(), [[1.0, 1.0, 1.0], [5.0, 1.0, 1.0]])


def test_a_hook_added_after_compiling_runs():
    """Forward hooks are part of a module's call: one registered after the first compiled call is seen (the
    compiled call kept running without it before), and removing it is seen too."""
    m = nn.Linear(2, 2)
    cm = ft.compile(m)
    x = ft.ones(1, 2)
    cm(x)
    h = m.register_forward_hook(lambda mod, inp, out: out * 0 + 3)
    np.testing.assert_array_equal(cm(x).detach().numpy(), [[3.0, 3.0]])
    h.remove()
    np.testing.assert_allclose(cm(x).detach().numpy(), m(x).detach().numpy())


_G = None


@pytest.mark.parametrize("lib", ["ft", "torch"])
def test_rebinding_globals_cells_and_module_attributes_is_replayed(lib):
    """``global W; W = W + x``, ``nonlocal``, ``self.last = y.detach()`` inside a compiled function: every call
    rebinds them as eager does (torch.compile replays these side effects). Before, the traced call left a
    tracer-backed tensor in the global and the next call failed with JAX's UnexpectedTracerError."""
    global _G
    m = ft if lib == "ft" else torch
    comp = ft.compile if lib == "ft" else (lambda f: torch.compile(f, backend="eager"))
    _G = m.ones(2)

    def g(x):
        global _G
        _G = _G + x
        return _G.sum()
    W = m.ones(2)

    def f(x):
        nonlocal W
        W = W * x
        return W.sum()
    cg, cf = comp(g), comp(f)
    assert [cg(m.ones(2)).item() for _ in range(3)] == [4.0, 6.0, 8.0]
    assert [cf(m.full((2,), 2.0)).item() for _ in range(3)] == [4.0, 8.0, 16.0]
    assert _G.tolist() == [4.0, 4.0] and W.tolist() == [8.0, 8.0]

    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = m.nn.Linear(2, 2)

        def forward(self, x):
            y = self.lin(x)
            self.last = y.detach() * 2
            return y
    net = Net()
    with m.no_grad():
        net.lin.weight.fill_(0.5)
        net.lin.bias.fill_(0.1)
    cn = comp(net)
    seen = []
    for i in range(3):
        cn(m.ones(1, 2) * i)
        seen.append(net.last.tolist())
    np.testing.assert_allclose(seen, [[[0.2, 0.2]], [[2.2, 2.2]], [[4.2, 4.2]]], rtol=1e-6)
    _G = None


def test_list_and_dict_changes_it_reaches_are_replayed_and_others_are_graph_breaks():
    """``history.append(y)`` / ``cache['k'] = y`` inside a compiled function are recorded by the trace and replayed
    after every compiled call (torch.compile does the same): the list holds the calls' real results, no eager
    fallback. A change the replay does not cover (``sort``) is a graph break (warning, eager), and fullgraph=True
    names it; the traced change is put back."""
    hist, cache, keys = [], {}, [3, 1, 2]

    def f(x):
        y = x * 2
        hist.append(y)
        return y

    def g(x):
        cache["k"] = x + 1
        return x

    def h(x):
        keys.sort()
        return x + 1
    cf = ft.compile(f)
    outs = [cf(ft.ones(1) * i) for i in range(3)]
    assert [t.item() for t in hist] == [0.0, 2.0, 4.0]
    assert [t.item() for t in outs] == [0.0, 2.0, 4.0]
    assert cf.stats["eager_calls"] == 0
    ft.compile(g)(ft.ones(1))
    assert list(cache) == ["k"] and cache["k"].tolist() == [2.0]
    with pytest.raises(ft._compile.GraphBreak, match="changing the list keys"):
        ft.compile(h, fullgraph=True)(ft.ones(1))
    assert keys == [3, 1, 2]  # the traced change was put back
    with pytest.warns(UserWarning, match="graph break in h: changing the list keys"):
        assert ft.compile(h)(ft.ones(1)).tolist() == [2.0]
    assert keys == [1, 2, 3]


def test_a_grad_scaler_autocast_step_is_one_program():
    """zero_grad, autocast forward, scaler.scale(loss).backward(), scaler.step, scaler.update: one compiled
    program (no eager fallback: the scaler's own bookkeeping dicts change inside, which is the library's
    business, not a user container), losses equal eager's to bfloat16 precision (XLA may keep excess
    precision between fused bfloat16 ops) and the same scale."""
    def run(compiled):
        ft.manual_seed(0)
        m = nn.Linear(4, 2)
        opt = ft.optim.SGD(m.parameters(), lr=0.1)
        scaler = ft.amp.GradScaler("cpu", init_scale=2.0 ** 10)
        x, y = ft.randn(8, 4), ft.randn(8, 2)

        def step():
            opt.zero_grad()
            with ft.autocast("cpu", dtype=ft.bfloat16):
                loss = ((m(x).float() - y) ** 2).mean()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            return loss
        f = ft.compile(step) if compiled else step
        return [f().item() for _ in range(5)], scaler.get_scale(), f
    eager, scale_e, _ = run(False)
    comp, scale_c, f = run(True)
    np.testing.assert_allclose(comp, eager, rtol=2e-3)
    assert scale_c == scale_e and f.stats["eager_calls"] == 0 and f.stats["traces"] == 2


def test_dynamo_and_compiler_namespaces():
    """``torch._dynamo`` / ``torch.compiler`` as scripts use them: list_backends (COMP-08, torch's list),
    config.cache_size_limit and its newer name recompile_limit (one setting), reset() (every compiled function
    traces again), is_compiling() (True while traced), disable (a graph break inside a compiled function; the
    fullgraph error is ``_dynamo.exc.Unsupported``, a RuntimeError as in torch)."""
    import torch._dynamo
    assert ft._dynamo.list_backends() == torch._dynamo.list_backends()
    cfg = ft._dynamo.config
    assert cfg.cache_size_limit == cfg.recompile_limit == torch._dynamo.config.recompile_limit
    cfg.recompile_limit = 3
    try:
        assert cfg.cache_size_limit == 3
    finally:
        cfg.cache_size_limit = 8

    def f(x):
        return x * 3 if ft.compiler.is_compiling() else x * 2
    cf = ft.compile(f)
    assert cf(ft.ones(1)).item() == 3.0 and f(ft.ones(1)).item() == 2.0 and not ft.compiler.is_compiling()
    ft._dynamo.reset()
    cf(ft.ones(1))
    assert cf.stats["traces"] == 2
    calls = []

    @ft.compiler.disable
    def helper(x):
        calls.append(float(x.sum()))  # eager Python: a host read is fine here
        return x

    def g(x):
        return helper(x * 2) + 1
    with pytest.warns(UserWarning, match="graph break in g: a call to 'helper', marked torch.compiler.disable"):
        assert ft.compile(g)(ft.ones(2)).tolist() == [3.0, 3.0]
    assert calls == [4.0]
    with pytest.raises(ft._dynamo.exc.Unsupported, match="marked torch.compiler.disable") as e:
        ft.compile(g, fullgraph=True)(ft.ones(2))
    assert isinstance(e.value, RuntimeError)


@pytest.mark.parametrize("kind", ["detach", "no_grad", "checkpoint"])
def test_backward_of_a_compiled_forward_respects_detach_and_no_grad(kind):
    """The backward of a compiled forward (and of a checkpointed region) stops at ``detach()`` and ``no_grad``
    regions inside, as eager and torch do: ``y = (x * 2).detach(); return y * x`` gives dL/dx = 2 (the vjp of
    the whole program gave 4); the parameter case mixes a detached weight with the live one."""
    def grads(m, comp):
        lin = m.nn.Linear(3, 3)
        with m.no_grad():
            lin.weight.copy_(m.tensor(W0[0][:3, :3]))
            lin.bias.fill_(0.1)

        def f(x):
            if kind == "detach":
                y = (x * 2).detach()
            else:
                with m.no_grad():
                    y = x * 2
            w = lin.weight.detach()
            return (y * x).sum() + (x @ w.t()).sum() + (lin(x) ** 2).sum()
        x = m.tensor(XS[0][:2, :3], requires_grad=True)
        if kind == "checkpoint":
            ck = ft.utils.checkpoint if m is ft else torch.utils.checkpoint
            out = ck.checkpoint(f, x, use_reentrant=False)
        else:
            out = comp(f)(x)
        out.backward()
        return x.grad.numpy(), lin.weight.grad.numpy()
    theirs = grads(torch, lambda f: torch.compile(f, backend="eager"))
    ours = grads(ft, ft.compile)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _zeroing_run(lib, compiled, edits):
    """A seed-loop step that zeroes .grad at its end (so from its second call the .grad fields are known zeros,
    neither inputs nor outputs of the program), with eager edits of the .grad fields between some calls."""
    W = lib.tensor(W0[0][:2, :1].copy(), requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    X, Y = lib.tensor(XS[0][:, :2]), lib.tensor(XS[1][:, :1])

    def epoch(zero=True):
        loss = ((X @ W + b - Y) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            W.sub_(0.1 * W.grad)
            b.sub_(0.1 * b.grad)
            if zero:
                W.grad.zero_()
                b.grad.zero_()
        return loss
    step = (ft.compile(epoch) if compiled else epoch) if lib is ft else epoch
    out, grads = [], []  # (the .grad objects themselves, kept alive: ids of dead objects are reused)
    for i in range(8):
        edit = edits.get(i)
        if edit == "add":       # values no longer zeros: the next call must read them
            with lib.no_grad():
                W.grad.add_(0.5)
        elif edit == "none":    # no .grad at all
            W.grad = None
        elif edit == "eager_zero":  # zeroed eagerly, then a step that accumulates without zeroing
            W.grad.zero_()
        loss = step(zero=edit != "eager_zero")
        if W.grad is not None and not any(g is W.grad for g in grads):
            grads.append(W.grad)
        out.append((float(loss.detach()), W.detach().numpy().copy(), b.detach().numpy().copy(),
                    None if W.grad is None else W.grad.numpy().copy(), b.grad.numpy().copy(), b.grad._version))
    return out, len(grads)


@pytest.mark.parametrize("edits", [{}, {3: "add"}, {3: "none", 5: "add"}, {2: "eager_zero", 4: "eager_zero"}])
def test_grads_zeroed_inside_the_step_stay_exact(edits):
    """zero_() at the end of a compiled step leaves known zeros (no program input/output for them): values,
    the .grad objects' identity and their version counters as eager and as torch, through eager edits."""
    ref, n_ref = _zeroing_run(torch, False, edits)
    for compiled in (False, True):
        got, n = _zeroing_run(ft, compiled, edits)
        assert n == n_ref
        for (l1, w1, b1, g1, gb1, v1), (l2, w2, b2, g2, gb2, v2) in zip(got, ref):
            np.testing.assert_allclose(l1, l2, rtol=1e-5)
            np.testing.assert_allclose(w1, w2, rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(b1, b2, rtol=1e-5, atol=1e-7)
            assert (g1 is None) == (g2 is None)
            if g1 is not None:
                np.testing.assert_allclose(g1, g2, rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(gb1, gb2, rtol=1e-5, atol=1e-7)
            assert v1 == v2


def test_known_zero_grads_are_not_program_inputs_or_outputs():
    """The zeroed .grad fields cost the program nothing (W1's speed): the program's inputs are W, X, Y, b (no
    .grad, no unused RNG key) and its outputs W, b and the loss; the first call, which makes the .grad fields,
    runs the later calls' program (primed with known-zero .grad placeholders): one trace in all."""
    W = ft.randn(2, 1, requires_grad=True)
    b = ft.zeros(1, requires_grad=True)
    X, Y = ft.randn(64, 2), ft.randn(64, 1)

    @ft.compile
    def epoch():
        loss = ((X @ W + b - Y) ** 2).mean()
        loss.backward()
        with ft.no_grad():
            W.sub_(0.1 * W.grad)
            b.sub_(0.1 * b.grad)
            W.grad.zero_()
            b.grad.zero_()
        return loss
    for _ in range(4):
        epoch()
    entry = list(epoch.cache.values())[-1]
    assert entry.donating and [len(entry.spec.outputs), len(entry.spec.zeros), len(entry.skip)] == [2, 2, 1]
    fn, tree = entry.donating
    d = S.discover_cached(epoch.fn, (), {}, epoch)
    leaves, t2 = jax.tree_util.tree_flatten([None if i in entry.skip else s.get() for i, s in enumerate(d.slots)])
    assert t2 == tree
    assert [a is t._array for a, t in zip(leaves, (W, X, Y, b))] == [True] * 4 and len(leaves) == 4
    assert [tuple(o.shape) for o in jax.tree_util.tree_leaves(fn.lower(*leaves).out_info)] == [(2, 1), (1,), ()]
    assert W.grad.abs().sum().item() == 0 and b.grad.abs().sum().item() == 0
    assert epoch.stats["traces"] == 1 and len(epoch.cache) == 1


def test_a_zeroed_tensor_written_since_does_not_keep_its_zeros_alive():
    """The known-zeros mark is a weak reference: after zero_() and a write, the zeros array is freed."""
    import gc
    g = ft.ones(1000)
    g.zero_()
    mark = g._storage.zeros
    assert mark() is g._storage.array
    g.add_(1)
    gc.collect()
    assert mark() is None
    m = ft.zeros(3, device="meta")
    m.zero_()
    assert m._storage.zeros is None


@pytest.mark.parametrize("look", [False, True])
def test_first_call_runs_the_later_calls_program_unless_the_step_looks_at_the_state(look):
    """A plain training step compiles one program (CompiledFunction._primed): its first call runs with the optimizer
    state made first and placeholder .grad fields it never reads; its losses, parameters and new .grad fields
    (new tensors, version 0) equal eager's and torch's. A step that branches on whether the optimizer state exists
    keeps its first call's own program, so that call takes the first-step branch as eager and torch do."""
    def run(L, compiled):
        L.manual_seed(0)
        m = L.nn.Linear(3, 2)
        with L.no_grad():
            m.weight.copy_(L.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
            m.bias.copy_(L.tensor([0.05, -0.05]))
        opt = L.optim.Adam(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = m(x).pow(2).mean()
            if look and not opt.state:  # (a first-step branch)
                loss = loss * 10.0
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        x = L.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
        with L.no_grad():
            plain = m(x).pow(2).mean().item()
        losses = [f(x).item()]
        assert losses[0] == pytest.approx(plain * (10.0 if look else 1.0), rel=1e-6)
        versions = [p.grad._version for p in m.parameters()]
        losses += [f(x).item() for _ in range(3)]
        return losses, [p.detach().numpy().copy() for p in m.parameters()], versions, f
    (le, pe, ve, _), (lc, pc, vc, f), (lt, pt, vt, _) = run(ft, False), run(ft, True), run(torch, False)
    np.testing.assert_allclose(lc, le, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(lc, lt, rtol=1e-5, atol=1e-6)
    for a, b, c in zip(pc, pe, pt):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
    assert vc == ve == vt == [0, 0]
    assert f.stats["traces"] == (2 if look else 1) and f.stats["eager_calls"] == 0, f.stats


def test_clip_grad_norm_error_if_nonfinite_inside_a_compiled_step_raises():
    """``error_if_nonfinite=True`` checks the norm's value: the compiled step runs eagerly (one warning) and
    raises torch's error on an inf gradient, the weights untouched (the program skipped the check and stepped)."""
    def run(L, C):
        L.manual_seed(0)
        m = L.nn.Linear(4, 1)
        with L.no_grad():
            m.weight.fill_(0.25)
            m.bias.fill_(-0.5)
        opt = L.optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = m(x).pow(2).mean()
            loss.backward()
            L.nn.utils.clip_grad_norm_(m.parameters(), 1.0, error_if_nonfinite=True)
            opt.step()
            return loss.detach()
        step = C(step)
        losses = [step(L.ones(3, 4)).item() for _ in range(2)]
        bad = L.ones(3, 4)
        bad[0, 0] = float("inf")
        with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                               "non-finite"):
            step(bad)
        return losses, m.weight.detach().numpy().tolist()
    want = run(torch, lambda f: f)
    with pytest.warns(UserWarning, match="error_if_nonfinite"):
        got = run(ft, ft.compile)
    np.testing.assert_allclose(np.array(got[0]), np.array(want[0]), rtol=1e-6)
    np.testing.assert_allclose(np.array(got[1]), np.array(want[1]), rtol=1e-6)


def test_recompile_log_names_the_change_from_the_nearest_program(caplog):
    """float32, then float64, then float32 again with a closure value changed: the third recompile names that
    value (the float32 program's guard that failed), not the dtype the last call had."""
    from functorch_lite._compile import config
    k = [1.0]
    cf = ft.compile(lambda x: x * k[0])
    old = config.log_recompiles
    config.log_recompiles = True
    try:
        with caplog.at_level(logging.WARNING, logger="functorch_lite.compile"):
            cf(ft.ones(1))
            cf(ft.ones(1, dtype=ft.float64))
            k[0] = 2.0
            assert cf(ft.ones(1)).tolist() == [2.0]
    finally:
        config.log_recompiles = old
    lines = [r.getMessage() for r in caplog.records if "recompiling" in r.getMessage()]
    assert "arg 0 changed" in lines[0] and "float64" in lines[0]
    assert "k[0] changed" in lines[1] and "arg 0" not in lines[1]
