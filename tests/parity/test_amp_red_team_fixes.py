"""Parity with torch 2.13 for AMP discrepancies found by a red team: the autocast weight cache across no_grad /
inference_mode passes, ``F.normalize`` in half precision, ``F.bilinear`` under CPU autocast, the legacy autocast
setters (one-argument ``set_autocast_enabled``, the xla / ipu spellings, the nesting counter), autocast and
``is_autocast_available`` on device strings ('ipu', 'cuda:0'), ``GradScaler`` on any device string and its lazy
scale, baddbmm's dtype messages, rms_norm's mixed-dtype warning and the ``<class 'torch.device'>`` spelling.
Each case runs the same code on both libraries."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ftl
from functorch_lite.amp import autocast_mode as ftl_ac

from _parity import assert_same_outcome, close, rounded, warnings_of

LIBS = (torch, ftl)
_TYPES = ("cpu", "cuda", "xla", "ipu", "hpu", "xpu", "mps")


@pytest.fixture(autouse=True)
def _restore_autocast_state():
    """Every test leaves both libraries' (thread-local) autocast state as it found it."""
    saved = {lib: ({t: lib.is_autocast_enabled(t) for t in _TYPES}, {t: lib.get_autocast_dtype(t) for t in _TYPES},
                   lib.is_autocast_cache_enabled()) for lib in LIBS}
    yield
    for lib, (on, dts, cache) in saved.items():
        for t in _TYPES:
            lib.set_autocast_enabled(t, on[t])
            lib.set_autocast_dtype(t, dts[t])
        lib.set_autocast_cache_enabled(cache)


def _outcome(fn, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn(lib))
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return (type(e).__name__, str(e))


def _same(fn, libs=LIBS):
    a, b = (_outcome(fn, lib) for lib in libs)
    assert a == b, (a, b)
    return a


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# ---- 1. the autocast weight cache and grad modes ---------------------------------------------------------------
def _cache_orders(lib):
    w = lib.nn.Parameter(lib.ones(4, 4))
    x = lib.ones(2, 4)
    out = []
    with lib.autocast("cpu"):  # no_grad first, then grad: the grad pass must reach the weight
        with lib.no_grad():
            a = x @ w
        b = x @ w
        c = x @ w
    cast_b, cast_c = b.grad_fn.next_functions[1][0], c.grad_fn.next_functions[1][0]
    out.append(("A", a.requires_grad, _name(a), b.requires_grad, _name(b), type(cast_b).__name__, cast_b is cast_c))
    with lib.autocast("cpu"):  # grad first, then no_grad (the cached cast is reused: a stale value shows it)
        b = x @ w
        with lib.no_grad():
            w.add_(1)
            a = x @ w
        c = x @ w
    out.append(("B", a.requires_grad, _name(a), a[0, 0].item(), c[0, 0].item(),
                b.grad_fn.next_functions[1][0] is c.grad_fn.next_functions[1][0]))
    with lib.autocast("cpu"):  # inference_mode neither fills nor reads the cache
        with lib.inference_mode():
            a = x @ w
        b = x @ w
        with lib.no_grad():
            w.add_(1)
        with lib.inference_mode():
            d = x @ w
    out.append(("C", a.requires_grad, a.is_inference(), _name(b), b.is_inference(), d[0, 0].item()))
    w.grad = None
    with lib.autocast("cpu"):  # set_grad_enabled(False) first, then a loss: the weight gets its gradient
        lib.set_grad_enabled(False)
        a = x @ w
        lib.set_grad_enabled(True)
        loss = (x @ w).float().sum()
    loss.backward()
    out.append(("D", a.requires_grad, w.grad.sum().item()))
    return out


def test_autocast_cache_across_grad_modes():
    _same(_cache_orders)


def test_autocast_cache_no_grad_eval_then_train_step():
    """The red team's case: a no_grad (teacher / eval) pass through a layer, then the training forward in the same
    autocast region: every parameter gets a gradient."""
    def case(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Linear(4, 1))
        x = lib.ones(8, 4)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            with lib.no_grad():
                model[0](x)
            loss = model(x).float().mean()
        loss.backward()
        return loss.requires_grad, [p.grad is None for p in model.parameters()]
    assert _same(case) == ("ok", (True, [False, False, False, False]))


# ---- 2. F.normalize in half precision ----------------------------------------------------------------------------
_X = lambda lib: ((lib.arange(48.).reshape(4, 12) * 37) % 23 - 11) / 7  # noqa: E731  (exact in both libraries)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (float("inf"), 1), (3.0, -1), (0.5, 1), (0.0, 1)])
def test_normalize_half_rounds_the_norm(dtype, p, dim):
    assert_same_outcome(lambda lib: lib.nn.functional.normalize(_X(lib).to(getattr(lib, dtype)), p=p, dim=dim),
                        torch, ftl)


def test_normalize_red_team_values():
    assert_same_outcome(lambda lib: lib.nn.functional.normalize(
        lib.tensor([[-1.5, -1.140625, -0.2275390625, 0.79296875]], dtype=lib.bfloat16)), torch, ftl)


@pytest.mark.parametrize("p", [1.0, float("inf")])
def test_normalize_float32_exact_where_the_norm_is(p):
    """float32: one correctly rounded division by the clamped norm (these norms are exact in both)."""
    assert_same_outcome(lambda lib: lib.nn.functional.normalize(_X(lib), p=p), torch, ftl)


def test_normalize_float32_is_x_over_its_clamped_norm():
    x = _X(ftl)
    r = ftl.nn.functional.normalize(x)
    np.testing.assert_array_equal(r.numpy(), (x / x.norm(2, 1, keepdim=True).clamp_min(1e-12)).numpy())
    assert close(rounded(r), rounded(torch.nn.functional.normalize(_X(torch))))


def test_normalize_half_grad_and_zero_rows():
    def case(lib):
        x = lib.zeros(2, 3, dtype=lib.bfloat16, requires_grad=True)
        r = lib.nn.functional.normalize(x)
        return str(r.dtype), _name(r), r.tolist(), lib.nn.functional.normalize(
            lib.tensor([[1e-30, 0.]], dtype=lib.bfloat16), eps=1e-10).tolist()
    _same(case)


# ---- 3. F.bilinear ------------------------------------------------------------------------------------------------
def _bil_inputs(lib):
    a = ((lib.arange(12.).reshape(4, 3) * 37) % 23 - 11) / 7
    b = ((lib.arange(8.).reshape(4, 2) * 29) % 19 - 9) / 5
    w = ((lib.arange(30.).reshape(5, 3, 2) * 31) % 17 - 8) / 3
    return a, b, w, lib.arange(5.) / 3


@pytest.mark.parametrize("bias", [False, True])
def test_bilinear_cpu_autocast_float32_output_at_bf16_precision(bias):
    def case(lib):
        a, b, w, bb = _bil_inputs(lib)
        w.requires_grad_()
        with lib.autocast("cpu"):
            y = lib.nn.functional.bilinear(a, b, w, bb if bias else None)
        return y
    assert_same_outcome(lambda lib: case(lib).detach(), torch, ftl)
    assert _same(lambda lib: (str(case(lib).dtype), _name(case(lib))))[1] == \
        ("torch.float32", "AddBackward0" if bias else "ViewBackward0")


@pytest.mark.parametrize("dtype,ac", [("bfloat16", False), ("float16", False), ("bfloat16", True),
                                      ("float16", True)])
def test_bilinear_stage_rounding(dtype, ac):
    """torch's _trilinear: x1 with W (one bmm), then with x2, each product stored in the compute dtype (float16
    inputs under bfloat16 CPU autocast: the products in bfloat16, the result float16)."""
    def case(lib):
        a, b, w, _ = (t.to(getattr(lib, dtype)) for t in _bil_inputs(lib))
        with lib.autocast("cpu", enabled=ac):
            return lib.nn.functional.bilinear(a.reshape(2, 2, 3), b.reshape(2, 2, 2), w)
    assert_same_outcome(case, torch, ftl)


def test_bilinear_float64_not_autocast():
    def case(lib):
        a, b, w, _ = (t.double() for t in _bil_inputs(lib))
        with lib.autocast("cpu"):
            y = lib.nn.functional.bilinear(a, b, w)
        return str(y.dtype), rounded(y)
    t, f = (case(lib) for lib in LIBS)
    assert close(t, f)


def test_bilinear_autocast_backward_in_float32():
    """Autocast acts inside torch's _trilinear kernel, below autograd: a backward outside the region computes the
    float32 gradients."""
    def case(lib):
        a, b, w, bb = _bil_inputs(lib)
        for t in (a, w, bb):
            t.requires_grad_()
        g = ((lib.arange(20.).reshape(4, 5) * 7) % 11 - 5) / 3
        with lib.autocast("cpu"):
            y = lib.nn.functional.bilinear(a, b, w, bb)
        y.backward(g)
        return rounded([w.grad, a.grad, bb.grad])
    t, f = (case(lib) for lib in LIBS)
    assert close(t, f)


def test_bilinear_module_and_top_level():
    def case(lib):
        lib.manual_seed(0)
        m = lib.nn.Bilinear(3, 2, 5)
        a, b, _, _ = _bil_inputs(lib)
        with lib.autocast("cpu"):
            y = m(a, b)
        return str(y.dtype), _name(y), tuple(lib.bilinear(a, b, m.weight, m.bias).shape)
    _same(case)


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.functional.bilinear(lib.ones(4, 3).bfloat16(), lib.ones(4, 2).bfloat16(), lib.ones(5, 3, 2)),
    lambda lib: lib.nn.functional.bilinear(lib.ones(4, 3), lib.ones(4, 2), lib.ones(5, 3, 2), lib.ones(5).double()),
    lambda lib: lib.nn.functional.bilinear(lib.ones(4, 3), lib.ones(4, 2, 1).double(), lib.ones(5, 3, 2)),
    lambda lib: lib.nn.functional.bilinear(lib.ones(4, 3), lib.ones(4, 2), lib.ones(5, 3, 2).half(), lib.ones(5)),
    lambda lib: lib.bilinear(lib.ones(4, 3), lib.ones(4, 2), lib.ones(5, 3, 2), out=lib.empty(4, 5)),
])
@pytest.mark.parametrize("ac", [False, True])
def test_bilinear_dtype_errors(case, ac):
    def run(lib):
        with lib.autocast("cpu", enabled=ac):
            return case(lib).dtype
    assert _same(run)[0] in ("RuntimeError", "TypeError")


# ---- 4. legacy autocast setters ---------------------------------------------------------------------------------
def _ns(lib):
    """torch, or the facade's autocast module for the names the facade's top level does not re-export yet."""
    return lib if lib is torch else ftl_ac


@pytest.mark.parametrize("call", [
    lambda lib: (lib.set_autocast_enabled(True), lib.is_autocast_enabled(), lib.is_autocast_enabled("cuda"),
                 lib.is_autocast_enabled("cpu"), str((lib.ones(2, 2) @ lib.ones(2, 2)).dtype),
                 lib.set_autocast_enabled(False), lib.is_autocast_enabled()),
    lambda lib: (lib.set_autocast_enabled(enabled=True), lib.is_autocast_enabled()),
    lambda lib: lib.set_autocast_enabled(1),
    lambda lib: lib.set_autocast_enabled("cpu"),
    lambda lib: lib.set_autocast_enabled(None),
    lambda lib: lib.set_autocast_enabled(),
    lambda lib: lib.set_autocast_enabled("cpu", 1),
    lambda lib: lib.set_autocast_enabled(1, True),
    lambda lib: lib.set_autocast_enabled(True, True),
    lambda lib: lib.set_autocast_enabled("foo", True),
    lambda lib: lib.set_autocast_enabled("meta", True),
    lambda lib: (lib.set_autocast_enabled("cpu:0", True), lib.is_autocast_enabled("cpu")),
    lambda lib: (lib.set_autocast_enabled("ipu", True), lib.is_autocast_enabled("ipu")),
    lambda lib: lib.is_autocast_enabled(True),
    lambda lib: lib.is_autocast_enabled("hip"),
    lambda lib: lib.is_autocast_enabled("cuda:x"),
    lambda lib: lib.get_autocast_dtype(),
    lambda lib: lib.get_autocast_dtype(1),
    lambda lib: lib.get_autocast_dtype("meta"),
    lambda lib: [lib.get_autocast_dtype(t) for t in ("ipu", "maia", "mtia", "xla", "hpu", "hip", "cuda:0")],
    lambda lib: (lib.set_autocast_dtype("meta", lib.float16), lib.get_autocast_dtype("meta")),
    lambda lib: lib.set_autocast_dtype(),
    lambda lib: lib.set_autocast_dtype("cpu"),
    lambda lib: lib.set_autocast_dtype(lib.float16),
    lambda lib: lib.set_autocast_dtype("cpu", 1),
    lambda lib: (lib.set_autocast_dtype("cpu:0", lib.float16), lib.get_autocast_dtype("cpu")),
])
def test_autocast_setters(call):
    _same(lambda lib: str(call(lib)))


@pytest.mark.parametrize("name,args", [
    ("is_autocast_xla_enabled", ()), ("is_autocast_ipu_enabled", ()), ("get_autocast_xla_dtype", ()),
    ("get_autocast_ipu_dtype", ()), ("set_autocast_xla_enabled", (True,)), ("set_autocast_ipu_enabled", (True,)),
    ("set_autocast_xla_dtype", ("float16",)), ("set_autocast_ipu_dtype", ("bfloat16",)),
    ("set_autocast_xla_enabled", (1,)), ("set_autocast_ipu_dtype", (1,)), ("set_autocast_cpu_enabled", (1,)),
    ("set_autocast_gpu_dtype", (1,)),
])
def test_legacy_per_device_spellings(name, args):
    """Each warns its DeprecationWarning (torch's message, less its "Triggered internally" suffix) and acts on its
    device type."""
    def case(lib):
        a = tuple(getattr(lib, x) if isinstance(x, str) else x for x in args)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            try:
                r = str(getattr(_ns(lib), name)(*a))
            except TypeError as e:
                r = ("TypeError", str(e))
        state = (lib.is_autocast_enabled("xla"), lib.is_autocast_enabled("ipu"), str(lib.get_autocast_dtype("xla")),
                 str(lib.get_autocast_dtype("ipu")))
        return r, state, [(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in ws]
    _same(case)


def test_nesting_counter():
    def case(lib):
        ns = _ns(lib)
        out = [ns.autocast_increment_nesting(), ns.autocast_increment_nesting(), ns.autocast_decrement_nesting()]
        with lib.autocast("cpu"):  # (the region shares the counter: it clears the cache when it reaches 0)
            out.append(ns.autocast_increment_nesting())
            out.append(ns.autocast_decrement_nesting())
        out += [ns.autocast_decrement_nesting(), ns.autocast_decrement_nesting(), ns.autocast_increment_nesting()]
        return out
    assert _same(case) == ("ok", [1, 2, 1, 3, 2, 0, -1, 0])


# ---- 5. autocast and is_autocast_available on device strings ------------------------------------------------------
@pytest.mark.parametrize("dev,kw", [
    ("ipu", {}), ("cuda:0", {}), ("cpu:0", {}), ("xla", {}), ("hpu", {}), ("maia", {}), ("mtia", {}),
    ("ipu", {"dtype": "bfloat16"}), ("ipu", {"dtype": "float32"}), ("cpu:0", {"dtype": "float16"}),
    ("xla", {"dtype": "float16"}), ("hip", {}), ("meta", {}), ("privateuseone", {}), ("foo", {}), ("cuda:x", {}),
    ("", {}),
])
def test_autocast_device_strings(dev, kw):
    def case(lib):
        kwargs = {k: getattr(lib, v) for k, v in kw.items()}
        a = lib.ones(2, 2)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            ac = lib.autocast(dev, **kwargs)
        base = dev.split(":")[0]
        out = [ac.device, str(ac.fast_dtype), ac._enabled]
        with ac:
            out += [lib.is_autocast_enabled(base), str(lib.get_autocast_dtype(base)), str((a @ a).dtype)]
        out.append(lib.is_autocast_enabled(base))
        return out, [(w.category.__name__, str(w.message)) for w in ws]
    _same(case)


@pytest.mark.parametrize("dev", ["cpu", "cuda", "ipu", "cuda:0", "cpu:0", "xla", "privateuseone", "hip", "meta",
                                 "foo", "cuda:x", 1])
def test_is_autocast_available(dev):
    _same(lambda lib: lib.amp.is_autocast_available(dev))


def test_is_autocast_available_device_object():
    _same(lambda lib: lib.amp.is_autocast_available(lib.device("cpu")))


# ---- 6. GradScaler -----------------------------------------------------------------------------------------------
def _scaler_cycle(lib, dev):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        s = lib.amp.GradScaler(dev)
    w = lib.tensor([1., 2.], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    out = [s.is_enabled(), [str(x.message) for x in ws], s._scale, s.get_scale()]
    loss = s.scale((w ** 2).sum())
    out += [loss.item(), s._scale.item(), s._growth_tracker.item(), str(s._scale.device)]
    loss.backward()
    s.step(opt)
    s.update()
    return out + [w.tolist(), s.get_scale(), s.state_dict()]


@pytest.mark.parametrize("dev", ["cpu", "mps", "xpu", "foo", "cuda:0", "cpu:0", "hpu", "xla"])
def test_grad_scaler_any_device_string(dev):
    _same(lambda lib: _scaler_cycle(lib, dev))


def test_grad_scaler_lazy_scale():
    def case(lib):
        s = lib.amp.GradScaler("cpu")
        out = [s._scale, s._growth_tracker, s.get_scale(), s.state_dict(), s._get_growth_tracker()]
        s.load_state_dict({"scale": 8., "growth_factor": 3., "backoff_factor": .25, "growth_interval": 5,
                           "_growth_tracker": 2})
        out += [s._scale, s._growth_tracker, s.get_scale(), s._get_growth_tracker()]
        out.append(s.scale(lib.ones(2)).tolist())
        out += [s._scale.item(), s._growth_tracker.item()]
        out.append(pickle.loads(pickle.dumps(lib.amp.GradScaler("cpu")))._scale)
        for f in ("update", "unscale_", "step"):
            try:
                getattr(lib.amp.GradScaler("cpu"), f)(*(() if f == "update" else (lib.optim.SGD([lib.ones(1)]),)))
            except AssertionError as e:
                out.append(str(e))
        return out
    _same(case)


@pytest.mark.parametrize("new_scale", [4, True, "x", 4.0, "tensor", "tensor2"])
def test_grad_scaler_update_new_scale(new_scale):
    def case(lib):
        s = lib.amp.GradScaler("cpu")
        w = lib.tensor([1., 2.], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        s.scale((w ** 2).sum()).backward()
        s.step(opt)
        v = {"tensor": lib.tensor(2.), "tensor2": lib.tensor([2., 3.])}.get(new_scale, new_scale)
        s.update(v)
        return s.get_scale()
    _same(case)


def test_grad_scaler_compiled_step_keeps_working():
    """The scale lives in the scaler from the start (read as None before the first scale()), so a compiled step
    threads it: the same parameters and scale as the eager steps."""
    def run(compiled):
        ftl.manual_seed(0)
        lin = ftl.nn.Linear(3, 1)
        opt = ftl.optim.SGD(lin.parameters(), lr=0.1)
        s = ftl.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
        x = ftl.ones(4, 3)

        def step():
            opt.zero_grad()
            s.scale(lin(x).pow(2).mean()).backward()
            s.step(opt)
            s.update()
        f = ftl.compile(step) if compiled else step
        assert s._scale is None
        for _ in range(3):
            f()
        return [p.tolist() for p in lin.parameters()], s.get_scale(), s.state_dict()
    assert run(True) == run(False)


# ---- 7. baddbmm's dtype messages ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dts", [("float32", "bfloat16", "float32"), ("float32", "float32", "bfloat16"),
                                 ("bfloat16", "float32", "float32"), ("bfloat16", "bfloat16", "float32"),
                                 ("float64", "float32", "float32"), ("float16", "bfloat16", "bfloat16"),
                                 ("int64", "float32", "float32"), ("float32", "int64", "float32")])
@pytest.mark.parametrize("op", ["baddbmm", "addmm", "bmm", "mm"])
def test_product_dtype_messages(dts, op):
    shapes = {"baddbmm": ((5,), (2, 3, 4), (2, 4, 5)), "addmm": ((3, 5), (3, 4), (4, 5)),
              "bmm": ((2, 3, 4), (2, 4, 5)), "mm": ((3, 4), (4, 5))}[op]
    d = dts[-len(shapes):]
    _same(lambda lib: str(getattr(lib, op)(*(lib.ones(*s, dtype=getattr(lib, t)) for s, t in zip(shapes, d))).dtype))


@pytest.mark.parametrize("dtype", ["bool", "float8_e4m3fn", "uint32", "uint8"])
def test_baddbmm_kernel_dtypes(dtype):
    _same(lambda lib: str(lib.baddbmm(*(lib.ones(*s, dtype=getattr(lib, dtype))
                                        for s in ((2, 3, 5), (2, 3, 4), (2, 4, 5)))).dtype))


# ---- 8. rms_norm's mixed-dtype warning ----------------------------------------------------------------------------
@pytest.mark.parametrize("xd,wd", [("bfloat16", "float32"), ("float16", "float32"), ("float32", "bfloat16"),
                                   ("float64", "float32"), ("bfloat16", "float16"), ("bfloat16", "bfloat16"),
                                   ("float32", None)])
def test_rms_norm_mixed_dtype_warning(xd, wd):
    def case(lib):
        x = lib.ones(2, 4, dtype=getattr(lib, xd))
        w = None if wd is None else lib.ones(4, dtype=getattr(lib, wd))
        return lib.nn.functional.rms_norm(x, (4,), w)
    got = [warnings_of(lib, case) for lib in LIBS]
    got[0] = [(c, m.split(" (Triggered")[0]) for c, m in got[0]]
    assert got[0] == got[1]
    assert bool(got[0]) == (wd is not None and wd != xd)
    t, f = (_outcome(lambda L: (str(case(L).dtype), rounded(case(L).float())), lib) for lib in LIBS)
    assert close(t, f)


def test_rms_norm_warning_after_the_shape_check():
    def case(lib):
        return lib.nn.functional.rms_norm(lib.ones(2, 4, dtype=lib.bfloat16), (3,), lib.ones(3))
    got = [warnings_of(lib, lambda L: _outcome(case, L)) for lib in LIBS]
    assert got[0] == got[1] == []
    _same(case)


# ---- 9. type names in messages ------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.autocast(lib.device("cpu")),
    lambda lib: lib.amp.custom_fwd(device_type=lib.device("cpu")),
    lambda lib: lib.amp.custom_bwd(device_type=lib.device("cpu")),
    lambda lib: lib.amp.custom_fwd(device_type=1),
    lambda lib: lib.autocast(lib.float16),
])
def test_device_type_class_in_messages(call):
    assert _same(lambda lib: str(call(lib)))[0] == "ValueError"
