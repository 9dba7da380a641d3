"""utils.checkpoint against torch.utils.checkpoint: context_fn, the selective-checkpoint API, the small API
surface, use_reentrant=True checks, preserve_rng_state=False, checkpoint_sequential arguments, determinism_check."""
import contextlib
import functools
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tck

import functorch_lite as ft
from functorch_lite.utils import checkpoint as fck

from _parity import same


def _libs():
    return [(torch, tck), (ft, fck)]


# ---- 1. context_fn -----------------------------------------------------------------------------------------
def _ctx_log(lib, ck, early_stop=None, backwards=1, fn="sin", grad_mode=True, req=True):
    log = []

    class Tag:
        def __init__(self, n):
            self.n = n

        def __enter__(self):
            log.append("enter " + self.n)

        def __exit__(self, *a):
            log.append("exit " + self.n + " " + (a[0].__name__ if a[0] else "None"))

    def ctx():
        log.append("context_fn called")
        return Tag("fwd"), Tag("recompute")
    x = lib.tensor([1.0, 2.0], requires_grad=req)
    kw = {} if early_stop is None else {"early_stop": early_stop}
    with contextlib.nullcontext() if grad_mode else lib.no_grad():
        y = ck.checkpoint(lambda a: getattr(a, fn)() * 2, x, use_reentrant=False, context_fn=ctx, **kw)
    after_fwd = list(log)
    if grad_mode and req:
        for k in range(backwards):
            y.sum().backward(retain_graph=k + 1 < backwards)
    return after_fwd, log, None if x.grad is None else x.grad.tolist()


@pytest.mark.parametrize("kw", [{}, {"early_stop": False}, {"early_stop": True, "backwards": 2},
                                {"grad_mode": False}, {"req": False}, {"fn": "exp"}])
def test_context_fn_calls_and_entries(kw):
    t = _ctx_log(torch, tck, **kw)
    f = _ctx_log(ft, fck, **kw)
    assert f[0] == t[0] and f[1] == t[1]
    if t[2] is not None:
        np.testing.assert_allclose(f[2], t[2], rtol=1e-6)
    else:
        assert f[2] is None


def test_context_fn_early_stop_global_switch():
    for lib, ck in _libs():
        log = []

        class Tag:
            def __enter__(self):
                pass

            def __exit__(self, *a):
                log.append(a[0].__name__ if a[0] else None)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with ck.set_checkpoint_early_stop(False):
            y = ck.checkpoint(lambda a: a.sin(), x, use_reentrant=False, context_fn=lambda: (Tag(), Tag()))
        y.sum().backward()
        assert log == [None, None], (lib.__name__, log)


@pytest.mark.parametrize("bad", ["int", "one", "ints"])
def test_context_fn_bad_results(bad):
    def fn(lib):
        ck = lib.utils.checkpoint
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        r = {"int": lambda: 3, "one": lambda: (contextlib.nullcontext(),), "ints": lambda: (1, 2)}[bad]
        return ck.checkpoint(lambda a: a * 2, x, use_reentrant=False, context_fn=r)
    assert same(fn)[0] == ("ValueError" if bad == "one" else "TypeError")


# ---- 2. selective checkpoint API ------------------------------------------------------------------------------
def test_checkpoint_policy_enum_and_context():
    assert [(p.name, p.value) for p in fck.CheckpointPolicy] == [(p.name, p.value) for p in tck.CheckpointPolicy]
    c = fck.SelectiveCheckpointContext(is_recompute=False)
    assert c.is_recompute is False and c.op_output is None
    with pytest.raises(TypeError):
        fck.SelectiveCheckpointContext(False)


def test_create_selective_contexts_validation():
    for ck in (tck, fck):
        with pytest.raises(TypeError, match="^policy_fn_or_list must be either a function or a list of ops.$"):
            ck.create_selective_checkpoint_contexts(3)
        with pytest.raises(ValueError, match="^Expected op in `op_list` to be an OpOverload but got: 3"):
            ck.create_selective_checkpoint_contexts([3])
        a, b = ck.create_selective_checkpoint_contexts(lambda ctx, op, *a, **k: ck.CheckpointPolicy.MUST_SAVE)
        assert a is not b


def _sac_run(lib, ck, mode, seen=None):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)

    def policy(ctx, op, *a, **k):
        seen.append((str(op), ctx.is_recompute))
        return ck.CheckpointPolicy.MUST_SAVE if op == lib.ops.aten.mm.default else ck.CheckpointPolicy.PREFER_RECOMPUTE
    kw = {}
    if mode != "none":
        arg = [lib.ops.aten.mm.default] if mode == "list" else policy
        kw["context_fn"] = functools.partial(ck.create_selective_checkpoint_contexts, arg)
    y = ck.checkpoint(lambda a: (a @ w).sin() @ w, x, use_reentrant=False, **kw)
    return x, w, y


@pytest.mark.parametrize("mode", ["list", "fn"])
def test_selective_checkpoint_grads_and_policy_calls(mode):
    res = []
    for lib, ck in _libs():
        seen = []
        x, w, y = _sac_run(lib, ck, mode, seen)
        y.sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy(), w.grad.numpy(), seen))
    for t, f in zip(res[0][:3], res[1][:3]):
        np.testing.assert_allclose(f, t, rtol=1e-6)
    assert res[1][3] == res[0][3]
    if mode == "fn":
        assert res[0][3] == [("aten.mm.default", False), ("aten.sin.default", False), ("aten.mm.default", False)]


def test_selective_checkpoint_saves_and_uses_outputs():
    # the node keeps the two matmul outputs; its backward program recomputes neither (fewer dots), and the
    # recomputation reads the saved values (a changed saved value changes the gradient)
    import jax
    import jax.numpy as jnp

    def backward_dots(node):
        f = jax.jit(node._entry.vjp_apply(node._diff_idx))
        return f.lower(node._arrays, (jnp.ones((2, 2), jnp.float32),)).compile().as_text().count(" dot(")
    _, _, y0 = _sac_run(ft, fck, "none")
    _, w1, y1 = _sac_run(ft, fck, "list")
    n0, n1 = y0.grad_fn, y1.grad_fn
    assert len(n1._arrays) == len(n0._arrays) + 2
    assert [tuple(a.shape) for a in n1._arrays[-2:]] == [(2, 2), (2, 2)]
    assert backward_dots(n1) < backward_dots(n0)
    n1._arrays = n1._arrays[:-2] + (jnp.zeros((2, 2), jnp.float32), n1._arrays[-1])
    y1.sum().backward()
    _, w2, y2 = _sac_run(ft, fck, "list")
    y2.sum().backward()
    assert not np.allclose(w1.grad.numpy(), w2.grad.numpy())


def test_selective_checkpoint_compiled_step():
    def losses(lib, compile_fn, sac):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        with lib.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(lib.linspace(-1, 1 + 0.1 * i, p.numel()).reshape(p.shape))
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
        ck = lib.utils.checkpoint
        kw = {"context_fn": functools.partial(ck.create_selective_checkpoint_contexts,
                                              [lib.ops.aten.addmm.default])} if sac else {}

        def step(x):
            opt.zero_grad()
            loss = (ck.checkpoint(m, x, use_reentrant=False, **kw) ** 2).sum()
            loss.backward()
            opt.step()
            return loss.detach()
        f = compile_fn(step)
        return [float(f(x)) for _ in range(3)]
    t = losses(torch, lambda f: f, True)
    np.testing.assert_allclose(losses(ft, lambda f: f, True), t, rtol=1e-5)
    np.testing.assert_allclose(losses(ft, ft.compile, True), t, rtol=1e-5)


def test_selective_checkpoint_errors():
    with pytest.raises(ValueError, match="cannot match aten._scaled_dot_product_flash_attention.default"):
        fck.create_selective_checkpoint_contexts([ft.ops.aten._scaled_dot_product_flash_attention.default])
    for lib, ck in _libs():
        with pytest.raises(ValueError, match="^Expected op in `op_list` to be an OpOverload but got: aten.mm of type"):
            ck.create_selective_checkpoint_contexts([lib.ops.aten.mm])
    x = ft.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="must return a CheckpointPolicy"):
        fck.checkpoint(lambda a: a.sin(), x, use_reentrant=False,
                       context_fn=functools.partial(fck.create_selective_checkpoint_contexts, lambda *a: 3))
    with pytest.raises(RuntimeError, match="MUST_CPU_OFFLOAD"):
        fck.checkpoint(lambda a: a.sin(), x, use_reentrant=False, context_fn=functools.partial(
            fck.create_selective_checkpoint_contexts, lambda *a: fck.CheckpointPolicy.MUST_CPU_OFFLOAD))


def test_selective_checkpoint_policy_grads():
    def run(lib, ck):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)

        def policy(ctx, op, *a, **k):
            return ck.CheckpointPolicy.PREFER_RECOMPUTE
        y = ck.checkpoint(lambda a: (a @ w).sin() @ w, x, use_reentrant=False,
                          context_fn=functools.partial(ck.create_selective_checkpoint_contexts, policy))
        y.sum().backward()
        return y.detach().numpy(), x.grad.numpy(), w.grad.numpy()
    for t, f in zip(run(torch, tck), run(ft, fck)):
        np.testing.assert_allclose(f, t, rtol=1e-5, atol=1e-6)


# ---- 3. small API surface ---------------------------------------------------------------------------------------
def test_api_surface():
    assert issubclass(fck.CheckpointError, RuntimeError)
    assert fck.DefaultDeviceType.get_device_type() == tck.DefaultDeviceType.get_device_type() == "cpu"
    assert fck.get_device_states(ft.ones(2)) == ([], []) == tck.get_device_states(torch.ones(2))
    assert fck.set_device_states([], []) is None and tck.set_device_states([], []) is None
    with fck.set_checkpoint_debug_enabled(True):
        assert fck._checkpoint_debug_enabled is True
    assert fck._checkpoint_debug_enabled is None


def test_debug_with_context_fn():
    def fn(lib, glob):
        ck = lib.utils.checkpoint
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        ctx = functools.partial(ck.create_selective_checkpoint_contexts, lambda *a: ck.CheckpointPolicy.MUST_SAVE)
        if glob:
            with ck.set_checkpoint_debug_enabled(True):
                return ck.checkpoint(lambda a: a.sin(), x, use_reentrant=False, context_fn=ctx)
        return ck.checkpoint(lambda a: a.sin(), x, use_reentrant=False, context_fn=ctx, debug=True)
    for glob in (False, True):
        r = same(lambda lib: fn(lib, glob))
        assert r[0] == "ValueError"


def test_detach_variable():
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True) * 2
        out = lib.utils.checkpoint.detach_variable((x, 3, lib.ones(1)))
        return [out[0], out[1], out[2], out[0].is_leaf]
    assert same(fn)[0] == "ok"
    assert same(lambda lib: lib.utils.checkpoint.detach_variable([lib.ones(1)]))[0] == "RuntimeError"


def test_check_backward_validity_warns():
    for lib, ck in _libs():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ck.check_backward_validity([lib.ones(1), 3])
            ck.check_backward_validity([lib.ones(1, requires_grad=True)])
        assert [str(m.message) for m in w] == ["None of the inputs have requires_grad=True. Gradients will be None"]


def test_checkpoint_function_apply():
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.utils.checkpoint.CheckpointFunction.apply(lambda a: a.sin() * 3, True, x)
        y.sum().backward()
        return [y, x.grad]
    assert same(fn)[0] == "ok"


# ---- 4. use_reentrant=True ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", ["context_fn", "debug"])
def test_reentrant_rejects_context_fn_debug(kw):
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        extra = {"context_fn": lambda: (contextlib.nullcontext(),) * 2} if kw == "context_fn" else {"debug": True}
        return lib.utils.checkpoint.checkpoint(lambda a: a * 2, x, use_reentrant=True, **extra)
    assert same(fn)[0] == "ValueError"


@pytest.mark.parametrize("how", ["grad", "inputs", "plain"])
def test_reentrant_grad_and_inputs(how):
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(lambda a: a.sin() * 2, x, use_reentrant=True)
        if how == "grad":
            return lib.autograd.grad(y.sum(), x)
        if how == "inputs":
            y.sum().backward(inputs=[x])
        else:
            y.sum().backward()
        return x.grad
    assert same(fn)[0] == ("ok" if how == "plain" else "RuntimeError")


def test_reentrant_outputs():
    def fn(lib):
        ck = lib.utils.checkpoint
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = ck.checkpoint(lambda a: a.sin() * 2, x, use_reentrant=True)
        same_in = ck.checkpoint(lambda a: a, x, use_reentrant=True)
        d = ck.checkpoint(lambda a: {"o": a * 2}, x, use_reentrant=True)
        tup = ck.checkpoint(lambda a: (a * 2, 3, a.exp()), x, use_reentrant=True)
        (same_in.sum() + tup[0].sum() + tup[2].sum()).backward()
        return [y, same_in, same_in is x, same_in.is_leaf, d["o"], tup[0], tup[1], tup[2], x.grad]
    r = same(fn)
    assert r[0] == "ok" and r[1][0][5] == "CheckpointFunctionBackward" and r[1][2] is False


def _reentrant_warns(lib, ck, case):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if case == "no_grad":
            with lib.no_grad():
                y = ck.checkpoint(lambda a: a * 2, x, use_reentrant=True)
        elif case == "nested":
            y = ck.checkpoint(lambda a: ck.checkpoint(lambda b: b * 3, a, use_reentrant=True), x, use_reentrant=True)
        elif case == "nested_detached":
            y = ck.checkpoint(lambda a: ck.checkpoint(lambda b: b * 3, a.detach(), use_reentrant=True), x,
                              use_reentrant=True)
        else:
            y = ck.checkpoint(lambda a: a * 3, x.detach(), use_reentrant=True)
    return [str(m.message) for m in w if "requires_grad" in str(m.message)], y.requires_grad


@pytest.mark.parametrize("case", ["no_grad", "nested", "nested_detached", "detached"])
def test_reentrant_warnings(case):
    t = _reentrant_warns(torch, tck, case)
    assert _reentrant_warns(ft, fck, case) == t
    if case in ("nested_detached", "detached"):
        assert t[0] == ["None of the inputs have requires_grad=True. Gradients will be None"]


def test_reentrant_inside_compile_trains():
    # torch.compile treats reentrant checkpoint as non-reentrant: an input that needs no grad still trains
    # (torch.compile(backend="aot_eager") gives the losses of torch's eager use_reentrant=False, the reference here)
    def losses(lib, compile_fn, reent=True):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
            lin.bias.copy_(lib.tensor([0.05, -0.05]))
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])

        def step(x):
            opt.zero_grad()
            y = lib.utils.checkpoint.checkpoint(lambda a: lin(a).tanh(), x, use_reentrant=reent)
            loss = (y ** 2).sum()
            loss.backward()
            opt.step()
            return loss
        f = compile_fn(step)
        return [float(f(x)) for _ in range(3)]
    t = losses(torch, lambda f: f, reent=False)
    f = losses(ft, ft.compile)
    np.testing.assert_allclose(f, t, rtol=1e-5)
    assert t[0] > t[1] > t[2]  # (it trains)
    for lib in (torch, ft):  # eagerly, reentrant with an input that needs no grad gives nothing to differentiate
        with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a "):
            losses(lib, lambda f: f)


# ---- 5. preserve_rng_state=False ----------------------------------------------------------------------------------
@pytest.mark.parametrize("reent", [False, True])
def test_preserve_rng_state_false(reent):
    for lib, ck in _libs():
        res = {}
        for pres in (True, False):
            lib.manual_seed(0)
            x = lib.ones(200, requires_grad=True)
            y = ck.checkpoint(lambda a: lib.nn.functional.dropout(a, 0.5, training=True), x,
                              use_reentrant=reent, preserve_rng_state=pres)
            y.sum().backward()
            after = lib.rand(3)
            lib.manual_seed(0)
            lib.nn.functional.dropout(lib.ones(200), 0.5, training=True)
            plain_after = lib.rand(3)
            fwd_mask, grad_mask = (y != 0), (x.grad != 0)
            res[pres] = (bool((fwd_mask == grad_mask).all()), bool(lib.equal(after, plain_after)),
                         0.3 < float(grad_mask.float().mean()) < 0.7)
        assert res == {True: (True, True, True), False: (False, False, True)}, (lib.__name__, res)


# ---- 6. checkpoint_sequential ----------------------------------------------------------------------------------
def _seq(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.linspace(-1, 1 + 0.1 * i, p.numel()).reshape(p.shape))
    return m, lib.arange(8.0).reshape(2, 4).clone().requires_grad_(True)


def test_checkpoint_sequential_preserve_kwarg():
    res = []
    for lib in (torch, ft):
        m, x = _seq(lib)
        y = lib.utils.checkpoint.checkpoint_sequential(m, 2, x, use_reentrant=False, preserve_rng_state=False)
        y.sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy(), m[0].weight.grad.numpy()))
    for t, f in zip(*res):
        np.testing.assert_allclose(f, t, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kw", [{"foo": 1}, {"foo": 1, "bar": 2}, {"context_fn": None}])
def test_checkpoint_sequential_kwargs(kw):
    def fn(lib):
        m, x = _seq(lib)  # (x: not a view: a view argument loses its gradient in checkpoint, runner._node_inputs)
        y = lib.utils.checkpoint.checkpoint_sequential(m, 2, x, use_reentrant=False, **kw)
        y.sum().backward()
        return [y, x.grad]
    assert same(fn)[0] == "ValueError"


def test_checkpoint_sequential_warning_text():
    msgs = []
    for lib in (torch, ft):
        m, x = _seq(lib)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.utils.checkpoint.checkpoint_sequential(m, 2, x)
        msgs.append([str(m.message) for m in w if "use_reentrant" in str(m.message)])
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1
    assert msgs[0][0].startswith("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant")


# ---- 7. determinism_check ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("val", ["foo", "none", "default", None])
def test_determinism_check_values(val):
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(lambda a: a.sin(), x, use_reentrant=False, determinism_check=val)
        y.sum().backward()
        return x.grad
    assert same(fn)[0] == ("ok" if val in ("none", "default") else "ValueError")
