"""GradScaler (spec §11.2, AMP-20..33) against real PyTorch: construction and its warnings, the scale/unscale/
step/update cycle on the same sequence of gradients (inf and NaN steps skipped, backoff, growth after
growth_interval), errors, state_dict, float16 training that only progresses with loss scaling, and the
whole cycle inside functorch_lite.compile."""
import inspect
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite import amp
from functorch_lite.amp import grad_scaler as GS


def _msgs(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    return r, [(x.category, str(x.message)) for x in w]


def test_AMP20_signature():
    assert str(inspect.signature(amp.GradScaler.__init__)).replace("'", "") == \
        str(inspect.signature(torch.amp.GradScaler.__init__)).replace("'", "")


def test_AMP21_default_cuda_device_without_cuda_warns_and_disables():
    t, tm = _msgs(lambda: torch.amp.GradScaler())
    f, fm = _msgs(lambda: amp.GradScaler())
    assert fm == tm and len(fm) == 1
    assert f.is_enabled() is t.is_enabled() is False


def test_AMP22_cuda_amp_grad_scaler_is_deprecated():
    t, tm = _msgs(lambda: torch.cuda.amp.GradScaler())
    f, fm = _msgs(lambda: GS.CudaGradScaler())
    assert isinstance(f, amp.GradScaler)
    assert fm == tm and len(fm) == 2
    assert f.is_enabled() is False


def test_AMP23_cpu_scaler_defaults():
    t, f = torch.amp.GradScaler("cpu"), amp.GradScaler("cpu")
    for m in ("is_enabled", "get_scale", "get_growth_factor", "get_backoff_factor", "get_growth_interval",
              "state_dict"):
        assert getattr(f, m)() == getattr(t, m)(), m


def _cycle(mod):
    w = mod.tensor([1., 2.], requires_grad=True)
    opt = mod.optim.SGD([w], lr=0.1)
    s = mod.amp.GradScaler("cpu") if mod is torch else amp.GradScaler("cpu")
    loss = s.scale((w ** 2).sum())
    out = [float(loss.detach()), type(loss.grad_fn).__name__]
    loss.backward()
    out.append(w.grad.tolist())
    s.unscale_(opt)
    out.append(w.grad.tolist())
    out.append(s.step(opt))
    out.append(w.detach().tolist())
    s.update()
    out += [s.get_scale(), s.state_dict()]
    return out


def test_AMP24_full_cycle():
    t, f = _cycle(torch), _cycle(ft)
    assert f == t
    assert f[0] == 327680.0 and f[3] == [2.0, 4.0]


GRADS = [[1.0, 2.0], [0.5, -1.0], [float("inf"), 1.0], [3.0, 1.0], [1.0, float("nan")], [2.0, 2.0], [1.0, 1.0],
         [-1.0, 0.5], [1e30, 1e30]]


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("interval", [1, 3])
def test_AMP25_sequence_with_inf_and_nan_steps(opt_name, interval):
    """Same gradient sequence (set directly as scaled grads) in both libraries: scales, growth trackers, skipped
    steps (parameters and optimizer state untouched) and state_dict after every update."""
    res = {}
    for mod in (torch, ft):
        w = mod.tensor([1.0, -1.0], requires_grad=True)
        opt = getattr(mod.optim, opt_name)([w], lr=0.1)
        S = torch.amp.GradScaler if mod is torch else amp.GradScaler
        s = S("cpu", init_scale=4.0, growth_interval=interval)
        trace = []
        for g in GRADS:
            s.scale(w.sum())  # marks the scale as used (as a real loss would)
            w.grad = mod.tensor(g) * s.get_scale()
            s.step(opt)
            s.update()
            st = opt.state_dict()["state"]
            trace.append((s.get_scale(), s.state_dict()["_growth_tracker"], w.detach().tolist(),
                          float(st[0]["step"]) if st else None))
        res[mod] = trace
    for a, b in zip(res[ft], res[torch]):
        assert a[0] == b[0] and a[1] == b[1] and a[3] == b[3], (a, b)
        np.testing.assert_allclose(a[2], b[2], rtol=1e-6)
    assert res[ft][2][2] == res[ft][1][2]  # the inf step changed nothing


def test_AMP25_scale_backs_off_and_grows():
    s = amp.GradScaler("cpu", init_scale=4.0, growth_interval=1)
    w = ft.tensor([1.0], requires_grad=True)
    opt = ft.optim.SGD([w], lr=0.1)
    scales = []
    for g in [1.0, 1.0, float("inf")]:
        s.scale(w.sum())
        w.grad = ft.tensor([g])
        s.step(opt)
        s.update()
        scales.append(s.get_scale())
    assert scales == [8.0, 16.0, 8.0]


def test_AMP25_scale_does_not_grow_past_float32():
    for mod in (torch, ft):
        S = torch.amp.GradScaler if mod is torch else amp.GradScaler
        s = S("cpu", init_scale=2.0 ** 127, growth_interval=1)
        w = mod.tensor([1.0], requires_grad=True)
        s.scale(w.sum())
        w.grad = mod.tensor([1.0])
        s.step(mod.optim.SGD([w], lr=0.1))
        s.update()
        assert s.get_scale() == 2.0 ** 127 and s.state_dict()["_growth_tracker"] == 0


def _setup(mod, **kw):
    w = mod.tensor([1.0, 2.0], requires_grad=True)
    opt = mod.optim.SGD([w], lr=0.1)
    S = torch.amp.GradScaler if mod is torch else amp.GradScaler
    s = S("cpu", **kw)
    s.scale((w * w).sum()).backward()
    return w, opt, s


def _same_error(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as fe:
        fn(ft)
    assert type(fe.value) is type(te.value) and str(fe.value) == str(te.value)


def test_AMP26_unscale_twice():
    def f(mod):
        _, opt, s = _setup(mod)
        s.unscale_(opt)
        s.unscale_(opt)
    _same_error(f)


def test_AMP26_unscale_after_step():
    def f(mod):
        _, opt, s = _setup(mod)
        s.step(opt)
        s.unscale_(opt)
    _same_error(f)


def test_AMP27_step_twice():
    def f(mod):
        _, opt, s = _setup(mod)
        s.step(opt)
        s.step(opt)
    _same_error(f)


def test_AMP27_closure_is_refused():
    def f(mod):
        _, opt, s = _setup(mod)
        s.step(opt, closure=lambda: None)
    _same_error(f)


def test_AMP28_disabled_scaler_is_transparent():
    s = amp.GradScaler("cpu", enabled=False)
    x = ft.tensor(3.0)
    assert s.scale(x) is x and s.get_scale() == 1.0 and not s.is_enabled() and s.state_dict() == {}
    w = ft.tensor([1.0], requires_grad=True)
    w.grad = ft.tensor([1.0])
    opt = ft.optim.SGD([w], lr=0.5)
    s.step(opt)
    s.update()
    assert w.tolist() == [0.5]


def test_AMP29_scale_lists_tuples_iterables():
    for mod in (torch, ft):
        S = torch.amp.GradScaler if mod is torch else amp.GradScaler
        s = S("cpu")
        a, b = mod.tensor(1.0), mod.tensor(2.0)
        out = s.scale([a, (b, a)])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert [out[0].item(), out[1][0].item()] == [65536.0, 131072.0]
        assert [t.item() for t in s.scale(iter([a]))] == [65536.0]
    _same_error(lambda mod: (torch.amp.GradScaler if mod is torch else amp.GradScaler)("cpu").scale([1.0]))


def test_AMP30_scaled_fp16_loss_is_fp32():
    for mod in (torch, ft):
        S = torch.amp.GradScaler if mod is torch else amp.GradScaler
        s = S("cpu")
        y = s.scale(mod.tensor(1.0, dtype=mod.float16))
        assert str(y.dtype) == "torch.float32" and y.item() == 65536.0
        y = s.scale(mod.ones(3, dtype=mod.float16) * 1e-3)
        assert str(y.dtype) == "torch.float16"


def test_AMP31_update_before_scale():
    _same_error(lambda mod: (torch.amp.GradScaler if mod is torch else amp.GradScaler)("cpu").update())
    _same_error(lambda mod: (torch.amp.GradScaler if mod is torch else amp.GradScaler)("cpu").step(
        mod.optim.SGD([mod.ones(1, requires_grad=True)], lr=0.1)))


def test_AMP32_fp16_grads_are_refused():
    def f(mod):
        w = mod.ones(2, dtype=mod.float16, requires_grad=True)
        opt = mod.optim.SGD([w], lr=0.1)
        s = (torch.amp.GradScaler if mod is torch else amp.GradScaler)("cpu")
        s.scale(w.sum()).backward()
        s.unscale_(opt)
    _same_error(f)


def test_AMP33_public_methods():
    def pub(c):
        return {n for n in dir(c) if not n.startswith("_") and callable(getattr(c, n))}
    assert pub(amp.GradScaler) == pub(torch.amp.GradScaler)


def test_AMP31_update_with_new_scale_and_errors():
    for mod in (torch, ft):
        w, opt, s = _setup(mod)
        s.step(opt)
        s.update(1024.0)
        assert s.get_scale() == 1024.0
        s.scale(w.sum())
        s.update(mod.tensor(8.0))
        assert s.get_scale() == 8.0
    _same_error(lambda mod: _setup(mod)[2].update(mod.tensor([1.0, 2.0])))
    _same_error(lambda mod: _setup(mod)[2].update(mod.tensor([1.0])))  # copy_ into the 0-dim scale


def test_state_dict_roundtrip_and_empty_error():
    for mod in (torch, ft):
        w, opt, s = _setup(mod, init_scale=16.0, growth_interval=5)
        s.step(opt)
        s.update()
        S = torch.amp.GradScaler if mod is torch else amp.GradScaler
        s2 = S("cpu")
        s2.load_state_dict(s.state_dict())
        assert s2.state_dict() == s.state_dict() == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                                    "growth_interval": 5, "_growth_tracker": 1}
        s2.scale(w.sum())
        assert s2.get_scale() == 16.0
    _same_error(lambda mod: (torch.amp.GradScaler if mod is torch else amp.GradScaler)("cpu").load_state_dict({}))


def test_unscale_is_one_fused_jitted_call_without_recompiles():
    ps = [ft.randn(3, 4, requires_grad=True), ft.randn(4, requires_grad=True), ft.randn(2, requires_grad=True)]
    opt = ft.optim.SGD(ps, lr=0.01)
    s = amp.GradScaler("cpu")
    before = GS._unscale_and_check._cache_size()
    for _ in range(3):
        opt.zero_grad()
        s.scale(sum((p * p).sum() for p in ps)).backward()
        s.step(opt)
        s.update()
    assert GS._unscale_and_check._cache_size() - before <= 1


def _fp16_training(mod, use_scaler):
    """fp32 parameters, float16 autocast forward: the loss is tiny, so its gradient underflows in float16 unless
    it is scaled. Returns the losses."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((64, 8)).astype(np.float32)
    y = (X @ rng.standard_normal((8, 1))).astype(np.float32)
    x_t, y_t = mod.tensor(X), mod.tensor(y)
    w = mod.zeros(8, 1, requires_grad=True)
    opt = mod.optim.SGD([w], lr=2e6)
    S = torch.amp.GradScaler if mod is torch else amp.GradScaler
    s = S("cpu", enabled=use_scaler)
    ac = torch.autocast if mod is torch else amp.autocast
    losses = []
    for _ in range(30):
        opt.zero_grad()
        with ac("cpu", dtype=mod.float16):
            out = x_t @ w
            loss = mod.nn.functional.mse_loss(out, y_t) * 1e-7
        s.scale(loss).backward()
        s.step(opt)
        s.update()
        losses.append(float(loss.detach()) * 1e7)
    return losses, w.grad


def test_fp16_underflow_needs_the_scaler():
    for mod in (torch, ft):
        plain, g = _fp16_training(mod, False)
        assert float(g.abs().max()) == 0.0  # every gradient flushed to zero in float16
        assert plain[-1] == plain[0]        # no progress
        scaled, g = _fp16_training(mod, True)
        assert float(g.abs().max()) > 0.0
        assert scaled[-1] < 0.05 * scaled[0]  # converges
    f, t = _fp16_training(ft, True)[0], _fp16_training(torch, True)[0]
    np.testing.assert_allclose(f[:10], t[:10], rtol=0.05, atol=1e-3)


def _compiled_run(compiled, opt_name="Adam"):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 1)).astype(np.float32)
    w = ft.tensor(rng.standard_normal((4, 1)).astype(np.float32), requires_grad=True)
    opt = getattr(ft.optim, opt_name)([w], lr=0.05)
    scaler = amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=2)

    def step(x, yy):
        opt.zero_grad()
        loss = ((x @ w - yy) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss.detach()
    fn = ft.compile(step) if compiled else step
    out = []
    for i in range(6):
        x = X.copy()
        if i == 2:
            x[0, 0] = np.inf
        fn(ft.tensor(x), ft.tensor(y))
        out.append((scaler.get_scale(), scaler.state_dict()["_growth_tracker"], w.detach().numpy().copy()))
    return out, fn


def test_grad_scaler_inside_compile_matches_eager(monkeypatch):
    eager, _ = _compiled_run(False)
    traced = []
    orig = GS.GradScaler._traced_step
    monkeypatch.setattr(GS.GradScaler, "_traced_step", lambda self, *a, **k: traced.append(1) or orig(self, *a, **k))
    comp, fn = _compiled_run(True)
    assert traced  # the skip was traced as a select, not a host read
    for (s1, t1, w1), (s2, t2, w2) in zip(eager, comp):
        assert (s1, t1) == (s2, t2)
        np.testing.assert_allclose(w1, w2, rtol=1e-5, atol=1e-6)
    assert eager[2][0] == eager[1][0] / 2  # the inf step backed off...
    np.testing.assert_array_equal(eager[2][2], eager[1][2])  # ...and skipped the update
    # one trace, plus one when Adam's state appears after the first step (a new signature)
    assert fn.stats["eager_calls"] == 0 and fn.stats["traces"] <= 2 and fn.stats["cache_hits"] >= 4


def test_two_optimizers_skip_independently_and_update_combines():
    res = {}
    for mod in (torch, ft):
        a, b = mod.tensor([1.0], requires_grad=True), mod.tensor([2.0], requires_grad=True)
        oa, ob = mod.optim.SGD([a], lr=0.5), mod.optim.SGD([b], lr=0.5)
        s = (torch.amp.GradScaler if mod is torch else amp.GradScaler)("cpu", init_scale=8.0)
        s.scale(a.sum() + b.sum())
        a.grad, b.grad = mod.tensor([8.0]), mod.tensor([float("inf")])
        s.step(oa)
        s.step(ob)
        s.update()
        res[mod] = (a.item(), b.item(), s.get_scale(), s.state_dict()["_growth_tracker"])
    assert res[ft] == res[torch] == (0.5, 2.0, 4.0, 0)
