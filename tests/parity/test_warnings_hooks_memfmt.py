"""Against real torch: where the library's warnings point (the user's line, as PyTorch's C++ warnings do), the global
module hooks (``nn.modules.module.register_module_*``), ``memory_format=`` in ``Tensor.to`` / ``Module.to``,
``F.scaled_dot_product_attention`` with 0-D to 3-D masks, ``masked_fill``'s non-bool mask message, and the
optimizer's ``repr`` with several parameter groups."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import caught_warnings, same

LIBS = (ft, torch)


# ---- 1. warnings name the user's line ------------------------------------------------------------------------------
def _warnings(fn, L):
    """[(filename, lineno, category, message)] of the warnings ``fn(L)`` issues (without the " (Triggered
    internally at ...)" PyTorch adds to its C++ warnings); with ``set_warn_always`` on, so that a once-per-process
    warning an earlier test already showed shows again."""
    return [(x.filename, x.lineno, x.category.__name__, str(x.message).split(" (Triggered internally at ")[0])
            for x in caught_warnings(L, fn)]


def _no_input_grad_backward_hook(L):
    m = L.nn.Linear(2, 2)
    m.register_full_backward_hook(lambda *a: None)
    m(L.ones(1, 2)).sum().backward()  # (no input requires grad: the hook fires on the outputs and warns)


def _forward_hook_std(L):
    m = L.nn.Linear(2, 2)
    m.register_forward_hook(lambda mod, args, out: L.ones(1).std())
    m(L.ones(2))


# PyTorch raises these from C++: they name the user's line
AT_USER = {
    "std of one element": lambda L: L.ones(1).std(),
    "var of one element": lambda L: L.ones(1).var(),
    "std with dim": lambda L: L.ones(1, 3).std(0),
    "mse_loss broadcast": lambda L: L.nn.functional.mse_loss(L.ones(3), L.ones(3, 1)),
    "l1_loss broadcast": lambda L: L.nn.functional.l1_loss(L.ones(3), L.ones(3, 1)),
    "softmax without dim": lambda L: L.nn.functional.softmax(L.ones(2, 3)),
    "T of a 3-D tensor": lambda L: L.ones(2, 3, 4).T,
    "dropout2d of 3-D input": lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4)),
    "deprecated nn.init.normal": lambda L: L.nn.init.normal(L.empty(3)),
    "deprecated upsample_nearest": lambda L: L.nn.functional.upsample_nearest(L.ones(1, 1, 2, 2), scale_factor=2),
    "grid_sample align_corners": lambda L: L.nn.functional.grid_sample(L.ones(1, 1, 2, 2), L.zeros(1, 2, 2, 2)),
    "full backward hook, no input grad": _no_input_grad_backward_hook,
    "std inside a forward hook": _forward_hook_std,
}


@pytest.mark.parametrize("name", sorted(AT_USER))
def test_warning_points_at_the_users_line(name):
    got = {L: _warnings(AT_USER[name], L) for L in LIBS}
    assert got[torch] and [w[0] for w in got[torch]] == [__file__] * len(got[torch])  # (torch's own behavior)
    assert got[ft] == got[torch]


def _always_call_hook_raises(L):
    m = L.nn.Linear(2, 2)

    def hook(mod, args, out):
        raise ValueError("from the hook")
    m.register_forward_hook(hook, always_call=True)
    try:
        m(L.ones(3))  # (a shape error in forward: the always_call hook runs, its exception becomes a warning)
    except RuntimeError:
        pass


def _duplicate_params(L):
    p = L.nn.Parameter(L.ones(2))
    L.optim.SGD([p, p], lr=0.1)


# PyTorch warns from Python code inside torch at these (its ``stacklevel`` stops in torch); ours name the user's line
IN_TORCH = {
    "MSELoss(size_average=)": lambda L: L.nn.MSELoss(size_average=True),
    "MSELoss broadcast": lambda L: L.nn.MSELoss()(L.ones(3), L.ones(3, 1)),
    "nn.Softmax without dim": lambda L: L.nn.Softmax()(L.ones(2, 3)),
    "LSTM dropout with one layer": lambda L: L.nn.LSTM(2, 3, dropout=0.5),
    "optimizer with duplicate parameters": _duplicate_params,
    "always_call hook raised": _always_call_hook_raises,
    "deprecated sdp_kernel, not entered": lambda L: L.backends.cuda.sdp_kernel(),
}


@pytest.mark.parametrize("name", sorted(IN_TORCH))
def test_warning_raised_in_torchs_python_points_at_the_users_line(name):
    got = {L: _warnings(IN_TORCH[name], L) for L in LIBS}
    assert [w[2:] for w in got[ft]] == [w[2:] for w in got[torch]]  # same warnings (category, message)
    assert [w[0] for w in got[ft]] == [__file__] * len(got[torch])


def test_warning_in_a_compiled_function_points_at_its_line():
    def f(x):
        return x.std()  # the line the warning names
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ft.compile(f)(ft.ones(1))
    std = [x for x in w if "degrees of freedom" in str(x.message)]
    assert std and all((x.filename, x.lineno) == (__file__, f.__code__.co_firstlineno + 1) for x in std)


def test_user_stacklevel_skips_the_library_and_its_generated_code():
    from functorch_lite._warn import user_stacklevel
    assert user_stacklevel() == 1  # called from here: this frame is the user's
    code = compile("def g():\n    return user_stacklevel()\n", "<functorch_lite op fake>", "exec")
    ns = {"user_stacklevel": user_stacklevel}
    exec(code, ns)
    assert ns["g"]() == 2  # (generated code is the library's: the next frame out, this one, is the user's)


# ---- 2. global module hooks ----------------------------------------------------------------------------------------
@pytest.fixture
def restore_global_backward_kind():
    """A global backward hook fixes (full or not) for the process, in both libraries: put it back after the test."""
    from functorch_lite.nn.modules import module as fm
    import torch.nn.modules.module as tm
    f_old, t_old = fm._global_is_full_backward_hook[0], tm._global_is_full_backward_hook
    yield
    fm._global_is_full_backward_hook[0], tm._global_is_full_backward_hook = f_old, t_old


def _shapes(xs):
    return tuple(None if x is None else tuple(x.shape) for x in xs)


def test_global_call_hooks_run_before_the_modules_own(restore_global_backward_kind):
    def run(L):
        M, log = L.nn.modules.module, []
        m = L.nn.Linear(2, 3)
        m.register_forward_pre_hook(lambda mod, a: log.append("own pre"))
        m.register_forward_hook(lambda mod, a, o: log.append("own fwd"))
        m.register_full_backward_pre_hook(lambda mod, go: log.append("own bw pre"))
        m.register_full_backward_hook(lambda mod, gi, go: log.append("own bw"))
        handles = [
            M.register_module_forward_pre_hook(lambda mod, a: log.append(("pre", type(mod).__name__, len(a)))),
            M.register_module_forward_hook(lambda mod, a, o: log.append(("fwd", tuple(o.shape)))),
            M.register_module_forward_hook(lambda mod, a, kw, o: log.append(("fwd kw", sorted(kw))), with_kwargs=True),
            M.register_module_full_backward_pre_hook(lambda mod, go: log.append(("bw pre", _shapes(go)))),
            M.register_module_full_backward_hook(lambda mod, gi, go: log.append(("bw", _shapes(gi), _shapes(go)))),
        ]
        try:
            m(L.ones(1, 2, requires_grad=True)).sum().backward()
            log.append([type(h).__name__ for h in handles])
        finally:
            for h in handles:
                h.remove()
        m(L.ones(1, 2, requires_grad=True)).sum().backward()  # removed: only the module's own run
        return log
    same(run)


def test_global_hooks_replace_inputs_and_outputs():
    def run(L):
        M = L.nn.modules.module
        m = L.nn.Identity()
        h1 = M.register_module_forward_pre_hook(lambda mod, a: a[0] * 2)  # (a non-tuple is wrapped in one)
        h2 = M.register_module_forward_hook(lambda mod, a, o: o + 100)
        h3 = M.register_module_forward_hook(lambda mod, a, o: None)
        try:
            out = m(L.arange(3.0))
        finally:
            for h in (h1, h2, h3):
                h.remove()
        return out, m(L.arange(3.0))
    same(run)


def test_global_hooks_see_every_module_of_a_tree():
    def run(L):
        M, seen = L.nn.modules.module, []
        net = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.ReLU(), L.nn.Sequential(L.nn.Tanh()))
        with M.register_module_forward_pre_hook(lambda mod, a: seen.append(("pre", type(mod).__name__))), \
                M.register_module_forward_hook(lambda mod, a, o: seen.append(("fwd", type(mod).__name__))):
            net(L.ones(1, 2))
        net(L.ones(1, 2))
        return seen
    same(run)


def test_global_hooks_reach_a_compiled_module():
    def run(L):
        M, log = L.nn.modules.module, []
        m = L.nn.Linear(2, 2)
        m.compile()
        m(L.ones(2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with M.register_module_forward_hook(lambda mod, a, o: log.append(type(mod).__name__)):
                m(L.ones(2))
                m(L.ones(2))
        m(L.ones(2))
        return log
    same(run)


def test_global_always_call_hook():
    class Boom(torch.nn.Module):
        def forward(self, x):
            raise KeyError("boom")

    def run(L):
        M, log = L.nn.modules.module, []

        class Boom(L.nn.Module):
            def forward(self, x):
                raise KeyError("boom")

        def bad(mod, a, o):
            log.append(("always", a, o))
            raise ValueError("inner")
        h = M.register_module_forward_hook(bad, always_call=True)
        h2 = M.register_module_forward_hook(lambda mod, a, kw, o: log.append(("kw always", o)), with_kwargs=True,
                                            always_call=True)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    Boom()(1)
                except KeyError as e:
                    log.append(("raised", str(e)))
        finally:
            h.remove()
            h2.remove()
        return log, [str(x.message) for x in w]
    same(run)


def test_global_backward_hooks_full_and_non_full_do_not_mix(restore_global_backward_kind):
    def run(L):
        M = L.nn.modules.module
        h = M.register_module_full_backward_hook(lambda *a: None)
        h.remove()
        M.register_module_backward_hook(lambda *a: None)
    same(run)


def test_global_registration_hooks():
    def run(L):
        M, log = L.nn.modules.module, []

        def on_param(mod, name, p):
            log.append(("param", type(mod).__name__, name, tuple(p.shape)))

        def on_buffer(mod, name, b):
            log.append(("buffer", type(mod).__name__, name, None if b is None else tuple(b.shape)))
            return None if b is None or name != "b" else b * 0 + 7  # (a result replaces what is registered)

        def on_module(mod, name, sub):
            log.append(("module", type(mod).__name__, name, type(sub).__name__))
        handles = [M.register_module_parameter_registration_hook(on_param),
                   M.register_module_buffer_registration_hook(on_buffer),
                   M.register_module_module_registration_hook(on_module)]
        try:
            seq = L.nn.Sequential(L.nn.Linear(2, 3))
            seq.extra = L.nn.ReLU()
            seq.p = L.nn.Parameter(L.ones(4))
            seq.register_parameter("q", None)  # (None: no hook)
            seq.register_buffer("b", L.ones(2))
            seq.b = L.zeros(5)
            b = seq.b
            seq.b = None
            seq.extra = None
            seq.add_module("z", None)
        finally:
            for h in handles:
                h.remove()
        seq.c = L.nn.ReLU()  # removed: no hook
        return log, b, [type(h).__name__ for h in handles]
    same(run)


# ---- 3. memory_format= in Tensor.to and Module.to ------------------------------------------------------------------
def _x(L):
    return L.arange(24.0).reshape(1, 2, 3, 4)


TO_CASES = {
    "to(memory_format=channels_last)": lambda L: _x(L).to(memory_format=L.channels_last),
    "is_contiguous(channels_last)": lambda L: _x(L).to(memory_format=L.channels_last).is_contiguous(
        memory_format=L.channels_last),
    "aliases": lambda L: (lambda x, y: (y.to(memory_format=L.channels_last) is y,
                                        x.to(memory_format=L.contiguous_format) is x,
                                        x.to(memory_format=L.preserve_format) is x, y.to(L.float32) is y,
                                        x.to(memory_format=L.channels_last) is x,
                                        y.to(memory_format=L.contiguous_format) is y))(
        _x(L), _x(L).to(memory_format=L.channels_last)),
    "dtype keeps channels_last": lambda L: _x(L).to(memory_format=L.channels_last).to(L.float64),
    "dtype and contiguous_format": lambda L: _x(L).to(memory_format=L.channels_last).to(
        L.float64, memory_format=L.contiguous_format),
    "back to contiguous": lambda L: _x(L).to(memory_format=L.channels_last).to(memory_format=L.contiguous_format),
    "transposed: preserve keeps its strides": lambda L: L.arange(6.0).reshape(2, 3).t().to(L.float64),
    "transposed: contiguous_format aliases": lambda L: (lambda t: t.to(memory_format=L.contiguous_format) is t)(
        L.arange(6.0).reshape(2, 3).t()),
    "not dense: preserve is contiguous": lambda L: L.arange(12.0).reshape(3, 4)[:, ::2].to(L.float64),
    "copy=True keeps the format": lambda L: _x(L).to(memory_format=L.channels_last).to(copy=True),
    "copy=True to channels_last": lambda L: _x(L).to(copy=True, memory_format=L.channels_last),
    "grad_fn": lambda L: [r.grad_fn.name() for r in (
        L.ones(1, 2, 3, 4, requires_grad=True).to(memory_format=L.channels_last),
        L.ones(1, 2, 3, 4, requires_grad=True).to(copy=True))],
    "rank 2 to channels_last": lambda L: L.ones(2, 3).to(memory_format=L.channels_last),
    "channels_last_3d": lambda L: L.ones(1, 2, 3, 4, 5).to(memory_format=L.channels_last_3d),
    "size-1 channels": lambda L: [L.ones(*s).to(memory_format=L.channels_last).stride()
                                  for s in ((1, 3, 1, 1), (2, 1, 3, 3))],
    "casters keep channels_last": lambda L: [getattr(_x(L).to(memory_format=L.channels_last), c)().stride()
                                             for c in ("double", "float", "half", "long", "int", "bool", "cpu")],
    "casters take memory_format": lambda L: [_x(L).float(memory_format=L.channels_last).stride(),
                                             _x(L).double(memory_format=L.channels_last).stride(),
                                             _x(L).cpu(memory_format=L.channels_last).stride()],
    "to(other) keeps channels_last": lambda L: _x(L).to(memory_format=L.channels_last).to(L.ones(1, dtype=L.int64)),
    "invalid memory_format": lambda L: _x(L).to(memory_format=1),
    "invalid memory_format with dtype": lambda L: _x(L).to(L.float32, memory_format="channels_last"),
    "unexpected keyword": lambda L: _x(L).to(L.float32, foo=1, bar=2.0),
}


@pytest.mark.parametrize("name", sorted(TO_CASES))
def test_tensor_to_memory_format(name):
    same(TO_CASES[name])


def test_to_channels_last_gradient():
    def run(L):
        x = L.ones(1, 2, 3, 4, requires_grad=True)
        y = x.to(L.float64, memory_format=L.channels_last)
        (y * L.arange(24.0, dtype=L.float64).reshape(1, 2, 3, 4)).sum().backward()
        return y, x.grad
    same(run)


def _conv_to_channels_last(L):
    m = L.nn.Conv2d(3, 4, 2)
    w = m.weight
    m.weight.grad = L.ones(4, 3, 2, 2)
    r = m.to(memory_format=L.channels_last)
    return (r is m, m.weight is w, m.weight.stride(), m.bias.stride(), m.weight.grad.stride(),
            m.weight.is_contiguous(memory_format=L.channels_last))


class _Buffers:
    @staticmethod
    def make(L):
        m = L.nn.Module()
        m.register_buffer("f", L.ones(1, 2, 3, 3))
        m.register_buffer("i", L.ones(1, 2, 3, 3, dtype=L.int64))
        m.register_buffer("v", L.ones(3))
        return m


MODULE_TO = {
    "conv2d to channels_last": _conv_to_channels_last,
    "with a dtype": lambda L: (lambda w: (w.stride(), str(w.dtype)))(
        L.nn.Conv2d(3, 4, 2).to(L.float64, memory_format=L.channels_last).weight),
    "then a dtype keeps it": lambda L: L.nn.Conv2d(3, 4, 2).to(memory_format=L.channels_last).to(L.float64).weight
    .stride(),
    "conv3d to channels_last": lambda L: L.nn.Conv3d(1, 2, 2).to(memory_format=L.channels_last),
    "conv3d to channels_last_3d": lambda L: L.nn.Conv3d(1, 2, 2).to(memory_format=L.channels_last_3d).weight.stride(),
    "linear: 2-D weights untouched": lambda L: L.nn.Linear(2, 3).to(memory_format=L.channels_last).weight.stride(),
    "buffers": lambda L: [(t.stride(), str(t.dtype)) for t in _Buffers.make(L).to(
        L.float64, memory_format=L.channels_last).buffers()],
    "integer dtype": lambda L: L.nn.Linear(2, 2).to(L.int64),
    "invalid memory_format": lambda L: L.nn.Linear(2, 2).to(memory_format=3),
}


@pytest.mark.parametrize("name", sorted(MODULE_TO))
def test_module_to_memory_format(name):
    same(MODULE_TO[name])


def test_module_to_complex_dtype_casts_complex_parameters_and_warns():
    def run(L):
        m = L.nn.Module()
        m.c = L.nn.Parameter(L.ones(2, dtype=L.complex64))
        m.f = L.nn.Parameter(L.ones(2))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.to(L.complex128)
        return str(m.c.dtype), str(m.f.dtype), [str(x.message) for x in w]
    same(run)


def test_module_to_meta_message():
    same(lambda L: L.nn.Linear(2, 2, device="meta").to("cpu"))


# ---- 4. scaled_dot_product_attention masks of every rank -----------------------------------------------------------
B, H, L_, S, E = 2, 3, 4, 5, 6
MASKS = [(), (S,), (1,), (L_,), (L_, S), (1, S), (L_, 1), (B, L_, S), (H, L_, S), (1, L_, S), (1, 1, S),
         (B, 1, L_, S), (1, 1, 1, S)]


@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("mask_shape", MASKS, ids=str)
@pytest.mark.parametrize("q_dim", [2, 3, 4])
def test_sdpa_mask_ranks(q_dim, mask_shape, kind):
    rng = np.random.default_rng(len(mask_shape) * 10 + q_dim)
    qs = {2: (L_, E), 3: (B, L_, E), 4: (B, H, L_, E)}[q_dim]
    ks = qs[:-2] + (S, E)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in (qs, ks, ks))
    if kind == "bool":
        m = np.asarray(rng.random(mask_shape) > 0.3)
        if m.ndim:
            m[..., 0] = True
    else:
        m = np.asarray(rng.standard_normal(mask_shape), dtype=np.float32)
    outs = []
    for L in LIBS:
        try:
            o = L.nn.functional.scaled_dot_product_attention(L.tensor(q), L.tensor(k), L.tensor(v),
                                                             attn_mask=L.tensor(m))
            outs.append(("ok", o.numpy()))
        except Exception as e:  # noqa: BLE001  (the exception itself is compared)
            outs.append((type(e).__name__, str(e)))
    (fk, fv), (tk, tv) = outs
    assert fk == tk, outs
    if fk == "ok":
        assert fv.shape == tv.shape
        np.testing.assert_allclose(fv, tv, rtol=1e-5, atol=1e-6)
    else:
        assert fv == tv


def test_sdpa_1d_mask_with_4d_query_off_the_flash_path():
    def run(L):
        q = L.ones(2, 3, 4, 6)
        F = L.nn.functional
        out = [F.scaled_dot_product_attention(q, q, q, attn_mask=L.ones(4, dtype=L.bool), dropout_p=0.5).shape,
               F.scaled_dot_product_attention(q, q, q, attn_mask=L.ones(4, requires_grad=True)).shape]
        try:
            F.scaled_dot_product_attention(q, q, q, attn_mask=L.ones(4, dtype=L.bool))
        except IndexError as e:
            out.append(str(e))
        return out
    same(run)


# ---- 5. masked_fill's non-bool mask message ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16", "float32", "float16", "bfloat16",
                                   "complex64", "uint16"])
def test_masked_fill_int_mask_message(dtype):
    same(lambda L: L.ones(3).masked_fill(L.ones(3, dtype=getattr(L, dtype)), 0.0))


@pytest.mark.parametrize("dtype", ["int64", "uint8", "uint16", "uint32", "uint64", "float8_e4m3fn", "complex64",
                                   "float16"])
def test_cpp_type_names(dtype):
    from functorch_lite._promotion import _cname
    try:
        torch.ones(3).masked_fill(torch.zeros(3, dtype=getattr(torch, dtype)), 0.0)
    except RuntimeError as e:
        expected = str(e).split("with dtype ")[-1]
    assert _cname(getattr(ft, dtype)) == expected


# ---- 6. optimizer repr -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("groups", [1, 2, 3])
def test_optimizer_repr_groups(groups):
    def run(L):
        ps = [L.nn.Parameter(L.ones(2)) for _ in range(groups)]
        sgd = L.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], lr=0.5, momentum=0.9)
        adam = L.optim.Adam([{"params": [p], "betas": (0.5, 0.6 + i / 10)} for i, p in enumerate(ps)])
        return repr(sgd), repr(adam)
    same(run)
