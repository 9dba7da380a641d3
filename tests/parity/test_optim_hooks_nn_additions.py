"""Parity with real torch of: ``lr_scheduler._LRScheduler``; the optimizer hooks (step pre/post, state_dict and
load_state_dict pre/post, the global step hooks) and how they meet ``compile``; torch's ``KeyError`` when
``amsgrad`` / ``momentum`` / ``centered`` is switched on after the first step; ``F.fractional_max_pool2d/3d`` and
``nn.FractionalMaxPool2d/3d``; ``nn.AdaptiveLogSoftmaxWithLoss``; ``optim.SparseAdam``; ``utils.swap_tensors``.
"""
import gc
import re
import warnings
import weakref

import numpy as np
import pytest
import torch
import torch.optim.optimizer as t_optimizer

import functorch_lite as ft
import functorch_lite.optim.optimizer as f_optimizer
from _parity import run

LIBS = ((torch, t_optimizer), (ft, f_optimizer))
RNG = np.random.default_rng(5)
W0 = RNG.standard_normal((3, 2)).astype(np.float32)
X = RNG.standard_normal((4, 3)).astype(np.float32)


def _model(lib):
    w = lib.nn.Parameter(lib.tensor(W0))
    return w, lambda: (lib.tensor(X) @ w).tanh().pow(2).sum()


def _both(fn):
    """``fn(lib, optimizer_module)`` for torch then functorch_lite."""
    return [fn(lib, om) for lib, om in LIBS]


def _np(t):
    return np.asarray(t.detach().numpy())


# ---- 1. _LRScheduler -----------------------------------------------------------------------------------------
def test_lrscheduler_alias_subclass():
    def go(lib, _):
        class Old(lib.optim.lr_scheduler._LRScheduler):
            def get_lr(self):
                return [b * 0.5 ** self.last_epoch for b in self.base_lrs]
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.8)
        s = Old(opt)
        lrs = []
        for _ in range(4):
            w.grad = lib.ones(2)
            opt.step()
            s.step()
            lrs.append(s.get_last_lr())
        cls = lib.optim.lr_scheduler._LRScheduler
        return (lrs, cls.__name__, issubclass(cls, lib.optim.lr_scheduler.LRScheduler),
                isinstance(s, lib.optim.lr_scheduler.LRScheduler), _np(w).tolist(), s.state_dict()["base_lrs"])
    t, f = _both(go)
    assert t == f


def test_lrscheduler_alias_brief_example():
    def go(lib, _):
        class Old(lib.optim.lr_scheduler._LRScheduler):
            def get_lr(self):
                return [b * 0.5 for b in self.base_lrs]
        opt = lib.optim.Adam([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        s = Old(opt)
        opt.step()
        s.step()
        return s.get_last_lr(), opt.param_groups[0]["lr"]
    t, f = _both(go)
    assert t == f


# ---- 2. optimizer hooks ------------------------------------------------------------------------------------------
def _hooked_run(lib, om, kind="SGD"):
    log = []
    w, loss = _model(lib)
    opt = getattr(lib.optim, kind)([w], lr=0.1)
    hs = [om.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("gpre", len(a), a[0] is o, dict(k)))),
          om.register_optimizer_step_post_hook(lambda o, a, k: log.append(("gpost", len(a), dict(k))))]
    try:
        hs.append(opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", type(o).__name__, len(a), dict(k)))))
        hs.append(opt.register_step_post_hook(lambda o, a, k: log.append(("post", o is opt, len(a), dict(k)))))
        for i in range(3):
            opt.zero_grad()
            loss().backward()
            if i == 1:
                opt.step(closure=None)
            else:
                opt.step()
        hs[2].remove()
        opt.zero_grad()
        loss().backward()
        opt.step()
    finally:
        for h in hs:
            h.remove()
    return log, _np(w)


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_step_hooks_order_args_and_values(kind):
    (tl, tw), (fl, fw) = _both(lambda lib, om: _hooked_run(lib, om, kind))
    assert tl == fl
    assert tl[:4] == [("gpre", 1, True, {}), ("pre", kind, 1, {}), ("post", True, 1, {}), ("gpost", 1, {})]
    np.testing.assert_allclose(fw, tw, rtol=1e-5, atol=1e-6)
    assert not f_optimizer._STEP_HOOKS  # (all removed: the step's one check sees none)


def test_step_pre_hook_replaces_args():
    def go(lib, _):
        w, loss = _model(lib)
        opt = lib.optim.SGD([w], lr=0.1)
        calls = []

        def closure():
            calls.append(1)
            opt.zero_grad()
            out = loss()
            out.backward()
            return out
        opt.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": closure}))
        got = opt.step()
        return len(calls), float(got), _np(w).tolist()
    t, f = _both(go)
    assert t[0] == f[0] == 1
    np.testing.assert_allclose(f[1], t[1], rtol=1e-6)
    np.testing.assert_allclose(f[2], t[2], rtol=1e-5, atol=1e-6)


def test_step_pre_hook_bad_return():
    def go(lib, _):
        w, _loss = _model(lib)
        opt = lib.optim.SGD([w], lr=0.1)
        opt.register_step_pre_hook(lambda o, a, k: 5)
        opt.step()
    (_, te), (_, fe) = run(lambda lib: go(lib, None), torch), run(lambda lib: go(lib, None), ft)
    pat = r"must return None or a tuple of \(new_args, new_kwargs\), but got 5\.$"
    assert type(te) is type(fe) is RuntimeError and re.search(pat, str(te)) and re.search(pat, str(fe))


def test_step_hooks_custom_optimizer():
    def go(lib, _):
        log = []

        class Mine(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.5})

            def step(self, closure=None):
                log.append("step")
                with lib.no_grad():
                    for g in self.param_groups:
                        for p in g["params"]:
                            p.add_(p.grad, alpha=-g["lr"])
        w, loss = _model(lib)
        o = Mine([w])
        o.register_step_pre_hook(lambda o, a, k: log.append(("pre", type(o).__name__, len(a), k)))
        o.register_step_post_hook(lambda o, a, k: log.append(("post", type(o).__name__)))
        loss().backward()
        o.step()
        o.step(closure=None)
        return log, _np(w)
    (tl, tw), (fl, fw) = _both(go)
    assert tl == fl
    assert tl[:3] == [("pre", "Mine", 1, {}), "step", ("post", "Mine")]
    np.testing.assert_allclose(fw, tw, rtol=1e-5, atol=1e-6)


def test_step_hooks_subclass_step_calling_super_runs_them_once():
    """(torch runs them once more inside ``super().step()`` if an instance of the parent class was made before
    (its ``step`` patched then): history-dependent; here the outermost step runs them, once.)"""
    log = []

    class MySGD(ft.optim.SGD):
        def step(self, closure=None):
            log.append("mysgd")
            return super().step(closure)
    w, loss = _model(ft)
    ft.optim.SGD([w], lr=0.1)
    o = MySGD([w], lr=0.1)
    o.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    o.register_step_post_hook(lambda o, a, k: log.append("post"))
    loss().backward()
    o.step()
    assert log == ["pre", "mysgd", "post"]


def test_step_hooks_lbfgs_and_scheduler_made_before_hooks():
    def go(lib, _):
        log = []
        w, loss = _model(lib)
        opt = lib.optim.LBFGS([w], lr=0.5, max_iter=3)
        w2 = lib.nn.Parameter(lib.ones(2))
        opt2 = lib.optim.SGD([w2], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt2, 1, gamma=0.5)  # (wraps opt2.step before the hooks exist)
        opt.register_step_pre_hook(lambda o, a, k: log.append(("lbfgs", len(a))))
        opt2.register_step_post_hook(lambda o, a, k: log.append(("sgd", o.param_groups[0]["lr"])))

        def closure():
            opt.zero_grad()
            out = loss()
            out.backward()
            return out
        opt.step(closure)
        for _ in range(2):
            w2.grad = lib.ones(2)
            opt2.step()
            sched.step()
        return log, _np(w), _np(w2)
    t, f = _both(go)
    assert t[0] == f[0]
    np.testing.assert_allclose(f[1], t[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f[2], t[2], rtol=1e-5, atol=1e-6)


def test_state_dict_hooks():
    def go(lib, _):
        log = []
        w, loss = _model(lib)
        opt = lib.optim.Adam([w], lr=0.1)
        loss().backward()
        opt.step()
        opt.register_state_dict_pre_hook(lambda o: log.append("pre1"))
        opt.register_state_dict_pre_hook(lambda o: log.append("pre0"), prepend=True)

        def post(o, sd):
            log.append(("post", sorted(sd)))
            sd["extra"] = 1
        opt.register_state_dict_post_hook(post)
        h = opt.register_state_dict_post_hook(lambda o, sd: {"replaced": sorted(sd)}, prepend=False)
        first = opt.state_dict()
        h.remove()
        second = opt.state_dict()
        return log, first, sorted(second), second["extra"]
    t, f = _both(go)
    assert t == f
    assert t[1] == {"replaced": ["extra", "param_groups", "state"]}


def test_load_state_dict_hooks():
    def go(lib, _):
        log = []
        w, loss = _model(lib)
        opt = lib.optim.Adam([w], lr=0.1)
        loss().backward()
        opt.step()
        sd = opt.state_dict()
        opt2 = lib.optim.Adam([lib.nn.Parameter(lib.tensor(W0))], lr=0.5)

        def pre(o, d):
            log.append(("pre", d is sd, sorted(d)))
            d2 = dict(d)
            d2["param_groups"] = [dict(g, lr=0.25) for g in d["param_groups"]]
            return d2
        opt2.register_load_state_dict_pre_hook(pre)
        opt2.register_load_state_dict_pre_hook(lambda o, d: log.append("first"), prepend=True)
        opt2.register_load_state_dict_post_hook(lambda o: log.append(("post", o.param_groups[0]["lr"])))
        opt2.register_load_state_dict_post_hook(lambda o: log.append("post0"), prepend=True)
        opt2.load_state_dict(sd)
        return log, opt2.param_groups[0]["lr"], sd["param_groups"][0]["lr"], \
            _np(opt2.state_dict()["state"][0]["exp_avg"]).tolist()
    t, f = _both(go)
    assert t[:3] == f[:3]
    np.testing.assert_allclose(f[3], t[3], rtol=1e-5, atol=1e-7)


def test_hook_handles_are_context_managers_and_removable():
    def go(lib, om):
        log = []
        w, loss = _model(lib)
        opt = lib.optim.SGD([w], lr=0.1)
        loss().backward()
        with opt.register_step_pre_hook(lambda o, a, k: log.append("pre")):
            opt.step()
        opt.step()
        h = om.register_optimizer_step_pre_hook(lambda o, a, k: log.append("g"))
        h.remove()
        h.remove()  # (twice: no error)
        opt.step()
        return log
    t, f = _both(go)
    assert t == f == ["pre"]
    gc.collect()  # (an optimizer's own hooks go with it)
    assert not f_optimizer._STEP_HOOKS


def test_step_without_hooks_takes_the_one_check(monkeypatch):
    """No hook registered: ``step`` never reaches the hook runner."""
    def boom(*a, **k):
        raise AssertionError("hook runner called without hooks")
    monkeypatch.setattr(f_optimizer, "_run_step_hooks", boom)
    gc.collect()  # (optimizers of earlier tests that kept hooks, in reference cycles)
    assert not f_optimizer._STEP_HOOKS
    w, loss = _model(ft)
    for opt in (ft.optim.SGD([w], lr=0.1), ft.optim.LBFGS([w], max_iter=2)):
        loss().backward()
        opt.step(lambda: loss())


def _compiled_training(lib, hook_at, fullgraph=False):
    """A compiled (torch: eager) training step over 4 calls, a pre hook registered before call ``hook_at`` and
    removed before the last; returns the hook calls and the weights."""
    log = []
    w, loss = _model(lib)
    opt = lib.optim.Adam([w], lr=0.05)

    def step():
        opt.zero_grad()
        out = loss()
        out.backward()
        opt.step()
        return out
    fn = ft.compile(step, fullgraph=fullgraph) if lib is ft else step
    h = None
    for i in range(4):
        if i == hook_at:
            h = opt.register_step_pre_hook(lambda o, a, k: log.append(i))
        if i == 3 and h is not None:
            h.remove()
        fn()
    return log, _np(w)


@pytest.mark.parametrize("hook_at", [0, 2])
def test_step_hooks_in_compiled_step_fall_back_to_eager(hook_at):
    tl, tw = _compiled_training(torch, hook_at)
    from functorch_lite._compile import runner
    before = runner.COUNTERS["eager_calls"]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fl, fw = _compiled_training(ft, hook_at)
    assert fl == tl  # every call with the hook ran it (the hooked calls run eagerly)
    np.testing.assert_allclose(fw, tw, rtol=1e-5, atol=1e-6)
    msgs = [str(r.message) for r in rec if "graph break" in str(r.message)]
    assert msgs and "optimizer step hooks" in msgs[0]
    assert runner.COUNTERS["eager_calls"] - before == 3 - hook_at


def test_step_hooks_in_fullgraph_compiled_step_raise():
    from functorch_lite._compile.runner import GraphBreak
    with pytest.raises(GraphBreak, match="optimizer step hooks"):
        _compiled_training(ft, 1, fullgraph=True)


def test_global_step_hook_in_compiled_step():
    log = []
    w, loss = _model(ft)
    opt = ft.optim.SGD([w], lr=0.1)

    @ft.compile
    def step():
        opt.zero_grad()
        loss().backward()
        opt.step()
    step()
    h = f_optimizer.register_optimizer_step_post_hook(lambda o, a, k: log.append(type(o).__name__))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            step()
            step()
    finally:
        h.remove()
    step()
    assert log == ["SGD", "SGD"]


# ---- 3. options switched on after the first step -----------------------------------------------------------------
@pytest.mark.parametrize("kind,key,value", [("Adam", "amsgrad", True), ("AdamW", "amsgrad", True),
                                            ("RMSprop", "momentum", 0.9), ("RMSprop", "centered", True),
                                            ("SGD", "momentum", 0.9)])
def test_state_option_switched_on_mid_training(kind, key, value):
    def go(lib):
        w, loss = _model(lib)
        opt = getattr(lib.optim, kind)([w], lr=0.01)
        loss().backward()
        opt.step()
        opt.param_groups[0][key] = value
        before = _np(w).copy()
        st = {k: _np(v).copy() for k, v in opt.state[w].items()}
        try:
            opt.step()
            err = None
        except Exception as e:  # noqa: BLE001
            err = e
        return err, before, _np(w), st, {k: _np(v) for k, v in opt.state[w].items()}
    (te, tb, tw, ts, ts2), (fe, fb, fw, fs, fs2) = go(torch), go(ft)
    assert type(te) is type(fe) and str(te) == str(fe)
    if te is not None:
        assert isinstance(fe, KeyError) and fe.args == te.args
        np.testing.assert_array_equal(fw, fb)  # (nothing updated, as torch)
        np.testing.assert_array_equal(tw, tb)
        assert sorted(fs2) == sorted(ts2) == sorted(fs) == sorted(ts)
        for k in fs:
            np.testing.assert_array_equal(fs2[k], fs[k])
    np.testing.assert_allclose(fw, tw, rtol=1e-5, atol=1e-6)


# ---- 4. fractional max pooling -------------------------------------------------------------------------------------
def _frac(lib, nd, shape, k, dt="float32", nan=False, **kw):
    x = np.random.default_rng(sum(shape)).standard_normal(shape)
    if nan:
        x.flat[::7] = np.nan
    b = shape[0] if len(shape) == nd + 2 else 1
    s = np.random.default_rng(len(shape)).random((b, shape[-nd - 1], nd))
    t = lib.tensor(x, dtype=getattr(lib, dt), requires_grad=True)
    f = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
    v, i = f(t, k, return_indices=True, _random_samples=lib.tensor(s, dtype=getattr(lib, dt)), **kw)
    (v.float() * lib.arange(v.numel()).reshape(v.shape).float()).nan_to_num().sum().backward()
    return (_np(v.float()), i.numpy(), _np(t.grad.float()), str(v.dtype), str(i.dtype),
            type(v.grad_fn).__name__)


@pytest.mark.parametrize("nd,shape,k,dt,nan,kw", [
    (2, (2, 3, 7, 9), 2, "float32", False, {"output_size": (4, 5)}),
    (2, (3, 10, 11), (3, 2), "float32", False, {"output_size": (5, 6)}),
    (2, (2, 3, 25, 17), 3, "float64", False, {"output_size": (13, 11)}),
    (2, (2, 3, 25, 17), 3, "float16", False, {"output_size": (13, 11)}),
    (2, (2, 3, 25, 17), 3, "bfloat16", False, {"output_size": 12}),
    (2, (2, 3, 12, 12), 2, "float32", False, {"output_ratio": (0.5, 0.6)}),
    (2, (2, 3, 12, 12), 2, "float32", True, {"output_size": 5}),
    (2, (1, 1, 9, 9), 3, "float32", False, {"output_size": 1}),
    (3, (1, 2, 6, 7, 8), 2, "float32", False, {"output_ratio": (0.5, 0.6, 0.7)}),
    (3, (2, 6, 7, 8), (2, 3, 2), "float32", False, {"output_size": (4, 3, 5)}),
    (3, (2, 2, 9, 9, 9), 2, "bfloat16", False, {"output_size": (5, 6, 7)}),
    (3, (1, 2, 8, 8, 8), 2, "float64", False, {"output_ratio": 0.5}),
])
def test_fractional_max_pool_values_indices_grads(nd, shape, k, dt, nan, kw):
    t, f = _frac(torch, nd, shape, k, dt, nan, **kw), _frac(ft, nd, shape, k, dt, nan, **kw)
    np.testing.assert_array_equal(f[0], t[0])
    np.testing.assert_array_equal(f[1], t[1])
    np.testing.assert_array_equal(f[2], t[2])
    assert f[3:] == t[3:]


def test_fractional_max_pool_modules():
    s2 = np.random.default_rng(0).random((2, 3, 2)).astype(np.float32)
    s3 = np.random.default_rng(1).random((2, 3, 3)).astype(np.float32)
    x2 = np.random.default_rng(2).standard_normal((2, 3, 10, 8)).astype(np.float32)
    x3 = np.random.default_rng(3).standard_normal((2, 3, 6, 8, 7)).astype(np.float32)

    def go(lib):
        out = []
        m2 = lib.nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True, _random_samples=lib.tensor(s2))
        m3 = lib.nn.FractionalMaxPool3d((2, 3, 2), output_size=(3, 4, 4), _random_samples=lib.tensor(s3))
        for m, x in ((m2, x2), (m3, x3)):
            t = lib.tensor(x, requires_grad=True)
            r = m(t)
            v = r[0] if isinstance(r, tuple) else r
            v.sum().backward()
            out += [_np(v), _np(t.grad), repr(m), sorted(m.state_dict()), m.kernel_size, m.output_size,
                    m.output_ratio]
        m = lib.nn.FractionalMaxPool2d(2, output_size=(3, 3))  # (random windows: only the shape)
        out.append(tuple(m(lib.tensor(x2)).shape))
        out.append(tuple(m(lib.tensor(x2[0])).shape))
        out.append(sorted(m.state_dict()))
        return out
    t, f = go(torch), go(ft)
    for a, b in zip(t, f):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(b, a)
        else:
            assert a == b


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 5, 5), 2),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(1, 1, 5, 5, 5), 2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 5, 5), 2, output_size=5),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 5, 9), 2, output_size=(3, 9)),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(1, 1, 5, 5, 5), 3, output_size=4),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 5, 5), 2, output_ratio=1.5),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 5, 5), 2, output_size=2,
                                                        _random_samples=lib.rand(1, 2, 2)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 5, 5), 2, output_size=2,
                                                        _random_samples=lib.rand(1, 1, 2).double()),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 5, 5).long(), 2, output_size=2,
                                                        _random_samples=lib.rand(1, 1, 2).long()),
    lambda lib: lib.nn.FractionalMaxPool2d(2),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda lib: lib.nn.FractionalMaxPool3d(0, output_size=2),
    lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1.0)),
])
def test_fractional_max_pool_errors(case):
    (_, te), (_, fe) = run(case, torch), run(case, ft)
    assert te is not None and fe is not None, (te, fe)
    assert type(fe) is type(te) and str(fe) == str(te)


# ---- 4b. AdaptiveLogSoftmaxWithLoss ---------------------------------------------------------------------------------
_ASM = dict(in_features=16, n_classes=20, cutoffs=[5, 12], div_value=2.0, head_bias=True)
_ASM_W = {n: np.random.default_rng(len(n)).standard_normal(tuple(p.shape)).astype(np.float32) * 0.3
          for n, p in torch.nn.AdaptiveLogSoftmaxWithLoss(**_ASM).named_parameters()}
_ASM_X = RNG.standard_normal((7, 16)).astype(np.float32)
_ASM_Y = np.array([0, 3, 7, 19, 12, 4, 11])


def _asm(lib):
    m = lib.nn.AdaptiveLogSoftmaxWithLoss(**_ASM)
    with lib.no_grad():
        for n, p in m.named_parameters():
            p.copy_(lib.tensor(_ASM_W[n]))
    return m


def test_adaptive_log_softmax_values_and_grads():
    def go(lib):
        m = _asm(lib)
        x = lib.tensor(_ASM_X, requires_grad=True)
        out = m(x, lib.tensor(_ASM_Y))
        out.loss.backward()
        one = m(lib.tensor(_ASM_X[3]), lib.tensor(_ASM_Y[3]))
        return ([type(out).__name__, out._fields, tuple(out.output.shape), tuple(out.loss.shape),
                 type(out.output.grad_fn).__name__, repr(m), sorted(n for n, _ in m.named_parameters()),
                 m.shortlist_size, m.n_clusters, m.head_size, m.cutoffs, tuple(one.output.shape)],
                [_np(out.output), _np(out.loss), _np(x.grad), _np(one.output), _np(one.loss),
                 _np(m.log_prob(lib.tensor(_ASM_X)))]
                + [_np(p.grad) for _, p in sorted(m.named_parameters())])
    (tm, tv), (fm, fv) = go(torch), go(ft)
    assert tm == fm
    for a, b in zip(tv, fv):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_adaptive_log_softmax_predict():
    x = np.concatenate([_ASM_X, RNG.standard_normal((20, 16)).astype(np.float32) * 3])

    def go(lib):
        m = _asm(lib)
        with lib.no_grad():
            full = m.predict(lib.tensor(x)).numpy()
            m.head.weight[: m.shortlist_size] -= 50.0  # every row's head argmax a cluster
            tail = m.predict(lib.tensor(x)).numpy()
            m.head.weight[: m.shortlist_size] += 100.0  # every row's head argmax in the shortlist
            short = m.predict(lib.tensor(x)).numpy()
        return full, tail, short
    for a, b in zip(go(torch), go(ft)):
        np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("case", [
    lambda lib: _asm(lib)(lib.tensor(_ASM_X), lib.tensor([0, 25, 1, 1, 1, 1, 1])),
    lambda lib: _asm(lib)(lib.tensor(_ASM_X), lib.tensor(_ASM_Y[:3])),
    lambda lib: _asm(lib)(lib.tensor(_ASM_X), lib.tensor(_ASM_Y).reshape(7, 1)),
    lambda lib: _asm(lib)(lib.tensor(_ASM_X[None]), lib.tensor(_ASM_Y[:1])),
    lambda lib: _asm(lib)(lib.tensor(_ASM_X), lib.tensor(3)),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, []),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 10]),
])
def test_adaptive_log_softmax_errors(case):
    (_, te), (_, fe) = run(case, torch), run(case, ft)
    assert te is not None and fe is not None, (te, fe)
    assert type(fe) is type(te) and str(fe) == str(te)


# ---- 5. SparseAdam, swap_tensors ---------------------------------------------------------------------------------
def test_sparse_adam_refuses_dense_gradients():
    def go(lib):
        calls = []
        w, loss = _model(lib)
        opt = lib.optim.SparseAdam([w], lr=0.1)
        opt.step()  # (no gradient: nothing to refuse)

        def closure():
            calls.append(1)
            out = loss()
            out.backward()
            return out
        try:
            opt.step(closure)
        except RuntimeError as e:
            return str(e), calls, _np(w).tolist(), len(opt.state), opt.defaults
    t, f = go(torch), go(ft)
    assert t == f
    assert t[0] == "SparseAdam does not support dense gradients, please consider Adam instead"


@pytest.mark.parametrize("case", [
    lambda lib: lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2))], lr=0.0),
    lambda lib: lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2))], eps=0.0),
    lambda lib: lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2))], betas=(1.0, 0.9)),
    lambda lib: lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2))], betas=(0.9, -0.1)),
    lambda lib: lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2)),
                                      lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))]),
])
def test_sparse_adam_constructor_errors(case):
    (_, te), (_, fe) = run(case, torch), run(case, ft)
    assert te is not None and type(fe) is type(te) and str(fe) == str(te), (te, fe)


def test_swap_tensors_contents():
    def go(lib):
        a = lib.zeros(2, requires_grad=True)
        b = lib.arange(6.).reshape(2, 3)
        b.custom = "b's attribute"
        a.grad = lib.ones(2)
        ia, ib = id(a), id(b)
        lib.utils.swap_tensors(a, b)
        p = lib.nn.Parameter(lib.ones(2))
        q = lib.arange(3.)
        lib.utils.swap_tensors(p, q)
        m = lib.nn.Linear(2, 2)
        lib.utils.swap_tensors(m.weight, lib.nn.Parameter(lib.zeros(2, 2)))
        return (id(a) == ia, id(b) == ib, a.tolist(), tuple(a.shape), a.requires_grad, a.grad, a.custom,
                b.tolist(), b.requires_grad, b.grad.tolist(), hasattr(b, "custom"), type(p).__name__,
                type(q).__name__, p.tolist(), q.tolist(), q.requires_grad, m.weight.tolist(),
                m(lib.ones(1, 2)).shape[-1])
    assert go(torch) == go(ft)


def test_swap_tensors_errors():
    def weak1(lib):
        t = lib.ones(2)
        _r = weakref.ref(t)  # noqa: F841
        lib.utils.swap_tensors(t, lib.zeros(2))

    def weak2(lib):
        t = lib.ones(2)
        _r = weakref.ref(t)  # noqa: F841
        lib.utils.swap_tensors(lib.zeros(2), t)

    def poisoned(lib):
        x = lib.ones(2, requires_grad=True)
        y = (x * 2).sum()
        lib.utils.swap_tensors(x, lib.zeros(2, requires_grad=True))
        y.backward()

    def fresh(lib):
        x = lib.ones(2, requires_grad=True)
        z = lib.zeros(3, requires_grad=True)
        lib.utils.swap_tensors(x, z)
        (x * 3).sum().backward()
        return x.grad.tolist(), z.grad
    for case in (weak1, weak2, poisoned):
        (_, te), (_, fe) = run(case, torch), run(case, ft)
        assert te is not None and type(fe) is type(te) and str(fe) == str(te), (te, fe)
    assert run(fresh, torch) == run(fresh, ft)
