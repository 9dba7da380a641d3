"""``torch._dynamo.config`` / ``torch._inductor.config`` / ``torch._logging.set_logs`` / ``torch._dynamo.explain``
/ ``utils.counters`` / ``compile``'s errors and backends, against torch 2.13 (CPU)."""
import importlib
import logging
import re
import warnings

import pytest
import torch
import torch._dynamo.config as t_dcfg
import torch._inductor.config as t_icfg

import functorch_lite as ft
from _parity import run

F_DCFG = ft._dynamo.config
F_ICFG = ft._inductor.config


def _err(fn, lib):
    out, e = run(fn, lib)
    assert e is not None, f"{lib.__name__} returned {out!r}"
    return type(e), str(e).splitlines()[0] if str(e) else ""


def _same_err(fn):
    (tt, tm), (ft_, fm) = _err(fn, torch), _err(fn, ft)
    assert ft_.__name__ == tt.__name__, (tt, ft_, tm, fm)
    assert fm == tm.replace("torch.", "functorch_lite.") or fm == tm, (tm, fm)
    return ft_


# ---- item 1: torch._dynamo.config -------------------------------------------------------------------------------
@pytest.mark.parametrize("t_cfg,f_cfg", [(t_dcfg, F_DCFG), (t_icfg, F_ICFG)], ids=["dynamo", "inductor"])
def test_every_torch_knob_reads_as_torch_default(t_cfg, f_cfg):
    ours = {"log_recompiles", "log_graph_breaks", "verify_discovery"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in t_cfg._config:
            if k in ours:
                continue
            assert getattr(f_cfg, k) == getattr(t_cfg, k), k
    assert len(t_cfg._config) >= 150


def test_standard_dynamo_knobs():
    c = F_DCFG
    assert (c.suppress_errors, c.verbose, c.automatic_dynamic_shapes, c.assume_static_by_default) == \
        (False, False, True, True)
    assert (c.capture_scalar_outputs, c.capture_dynamic_output_shape_ops, c.optimize_ddp,
            c.inline_inbuilt_nn_modules, c.specialize_int, c.force_parameter_static_shapes) == \
        (False, False, True, True, False, True)
    assert (c.cache_size_limit, c.recompile_limit, c.accumulated_cache_size_limit) == (8, 8, 256)


@pytest.mark.parametrize("which", ["dynamo", "inductor"])
def test_unknown_knob_raises_torchs_attribute_error(which):
    def get(lib):
        return getattr(lib._dynamo.config if which == "dynamo" else lib._inductor.config, "not_a_knob_xyz")

    def put(lib):
        setattr(lib._dynamo.config if which == "dynamo" else lib._inductor.config, "not_a_knob_xyz", 1)
    assert _same_err(get) is AttributeError
    assert _same_err(put) is AttributeError
    assert not hasattr(F_DCFG, "not_a_knob_xyz")
    assert _same_err(lambda lib: lib._inductor.config.triton.nope) is AttributeError


def test_alias_and_patch_forms_restore():
    c = F_DCFG
    assert c.cache_size_limit == 8
    with c.patch(cache_size_limit=3):
        assert c.recompile_limit == 3
    with c.patch({"recompile_limit": 2, "suppress_errors": True}):
        assert (c.cache_size_limit, c.suppress_errors) == (2, True)
    with c.patch("recompile_limit", 5):
        assert c.cache_size_limit == 5

    @c.patch(recompile_limit=4)
    def inside():
        return c.cache_size_limit
    assert inside() == 4
    assert (c.cache_size_limit, c.recompile_limit, c.suppress_errors) == (8, 8, False)
    with pytest.raises(AttributeError, match=re.escape("functorch_lite._dynamo.config.nope does not exist")):
        with c.patch(nope=1):
            pass
    c.recompile_limit = 6
    assert c.cache_size_limit == 6
    del c.cache_size_limit
    assert (c.cache_size_limit, c.recompile_limit) == (8, 8)
    assert c.get_config_copy()["recompile_limit"] == 8
    # torch's misuse errors
    for bad in (lambda lib: lib._dynamo.config.patch(1, 2), lambda lib: lib._dynamo.config.patch("a"),
                lambda lib: lib._dynamo.config.patch({"a": 1}, b=2)):
        assert _same_err(bad) is AssertionError


def test_recompile_limit_acts_on_compile_through_patch():
    f = ft.compile(lambda x, n: x * n)
    x = ft.ones(2)
    with F_DCFG.patch(recompile_limit=1):
        assert f(x, 1).tolist() == [1.0, 1.0]
        with pytest.warns(UserWarning, match=r"cache_size_limit \(1\)"):
            assert f(x, 3).tolist() == [3.0, 3.0]
    assert f.stats["eager_calls"] == 1


# ---- item 2: _inductor, _logging, explain, counters ------------------------------------------------------------
def test_inductor_config_module_and_subconfig():
    mod = importlib.import_module("functorch_lite._inductor.config")
    assert mod is F_ICFG
    assert (mod.coordinate_descent_tuning, mod.triton.cudagraphs, mod.max_autotune, mod.epilogue_fusion,
            mod.fx_graph_cache) == (t_icfg.coordinate_descent_tuning, t_icfg.triton.cudagraphs,
                                    t_icfg.max_autotune, t_icfg.epilogue_fusion, t_icfg.fx_graph_cache)
    with mod.patch({"triton.cudagraphs": True, "coordinate_descent_tuning": True}):
        assert mod.triton.cudagraphs is True and mod.coordinate_descent_tuning is True
        assert mod.__dict__["triton.cudagraphs"] is True
    assert mod.triton.cudagraphs is False and mod.coordinate_descent_tuning is False
    mod.triton.cudagraphs = True
    assert mod.get_config_copy()["triton.cudagraphs"] is True
    del mod.triton.cudagraphs
    assert mod.triton.cudagraphs is False
    assert importlib.import_module("functorch_lite._dynamo.config") is F_DCFG


@pytest.mark.parametrize("kw", [{"nope": True}, {"recompiles": 3}, {"dynamo": "x"}, {"dynamo": True},
                                {"modules": {"foo": 10}}, {"modules": 3}])
def test_set_logs_rejects_as_torch(kw):
    try:
        _same_err(lambda lib: lib._logging.set_logs(**kw))
    finally:
        torch._logging.set_logs()
        ft._logging.set_logs()


def test_set_logs_maps_recompiles_and_graph_breaks(caplog):
    try:
        ft._logging.set_logs(recompiles=True, graph_breaks=True, guards=True, dynamo=logging.INFO)
        assert F_DCFG.log_recompiles is True and F_DCFG.log_graph_breaks is True
        f = ft.compile(lambda x: x * 2)

        def g(x):
            if x.sum() > 0:
                return x * 2
            return x
        cg = ft.compile(g)
        with caplog.at_level(logging.WARNING, logger="functorch_lite.compile"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f(ft.ones(2))
            f(ft.ones(3))
            assert cg(ft.ones(2)).tolist() == [2.0, 2.0]
        text = caplog.text
        assert "recompiling" in text and "graph break in g" in text
        ft._logging.set_logs(graph_breaks=True)
        assert F_DCFG.log_recompiles is False and F_DCFG.log_graph_breaks is True
    finally:
        ft._logging.set_logs()
    assert F_DCFG.log_recompiles is False and F_DCFG.log_graph_breaks is False
    assert logging.getLogger("functorch_lite.compile").level == logging.NOTSET


def _explain(lib, src):
    ns = {"torch": lib}
    exec(src, ns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib._dynamo.explain(ns["f"])(lib.ones(3))


ONE_GRAPH = "def f(x):\n    return x.cos() + 1\n"
BREAK = "def f(x):\n    y = x.sin()\n    if y.sum() > 0:\n        return y * 2\n    return y\n"


def test_explain_one_program():
    t, f = _explain(torch, ONE_GRAPH), _explain(ft, ONE_GRAPH)
    assert (f.graph_count, f.graph_break_count, f.break_reasons) == (t.graph_count, t.graph_break_count, []) == \
        (1, 0, [])
    assert f.ops_per_graph and "cos" in f.ops_per_graph[0] and "add" in f.ops_per_graph[0]
    assert f.op_count == len(f.ops_per_graph[0])
    assert f.out_guards and "Graph Count: 1" in str(f)


def test_explain_graph_break():
    t, f = _explain(torch, BREAK), _explain(ft, BREAK)
    assert f.graph_break_count == t.graph_break_count == 1
    assert f.graph_count == 0 and f.ops_per_graph == []   # (one call = one program or eager whole, see explain)
    assert len(f.break_reasons) == len(t.break_reasons) == 1
    r = f.break_reasons[0]
    assert "control flow" in r.reason and r.graph_break is True
    assert r.user_stack and r.user_stack[-1].lineno == 3


def test_counters_graph_break_and_stats():
    c = ft._dynamo.utils.counters
    c.clear()
    assert dict(c) == {} and repr(c) == "defaultdict(<class 'collections.Counter'>, {})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns = {"torch": ft}
        exec(BREAK, ns)
        ft.compile(ns["f"])(ft.ones(2))
        ft.compile(lambda x: x - 1)(ft.ones(2))
    d = dict(c)
    assert sum(d["graph_break"].values()) == 1 and "control flow" in next(iter(d["graph_break"]))
    assert c["stats"]["unique_graphs"] == 2 and c["stats"]["calls_captured"] == 2
    c.clear()
    assert c["stats"]["unique_graphs"] == 0 and "graph_break" not in c


# ---- item 3: compile's errors -----------------------------------------------------------------------------------
def _f(x):
    return x + 1


def test_compile_errors_match_torch():
    t = _same_err(lambda lib: lib.compile(_f, backend="nope"))
    assert t.__name__ == "InvalidBackend" and issubclass(t, RuntimeError)
    assert ft._dynamo.exc.InvalidBackend is t
    assert importlib.import_module("functorch_lite._dynamo.exc").InvalidBackend is t
    assert _same_err(lambda lib: lib.compile(3)) is AssertionError
    assert _same_err(lambda lib: lib.compile()(3)) is AssertionError
    assert _same_err(lambda lib: lib.compile(_f, options=[1])) is AttributeError
    assert _same_err(lambda lib: lib.compile(_f, mode="max-autotune", options={"a": 1})) is RuntimeError
    assert _same_err(lambda lib: lib.compile(_f, options={"not_a_knob": 1})(lib.ones(2))) is RuntimeError
    assert ft.compile(_f, options={"max_autotune": True})(ft.ones(2)).tolist() == [2.0, 2.0]
    assert _same_err(lambda lib: lib.compile(_f, backend=3)(lib.ones(2))).__name__ == "BackendCompilerFailed"


# ---- item 4: backend callables, register_backend --------------------------------------------------------------
def test_custom_backend_callable_compiles_with_one_warning():
    calls = []

    def my_backend(gm, example_inputs):
        calls.append(1)
        return gm.forward
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.compile(_f, backend=my_backend)(torch.arange(3.0)).tolist()
    calls.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cf = ft.compile(_f, backend=my_backend)
        assert cf(ft.arange(3.0)).tolist() == want == [1.0, 2.0, 3.0]
        ft.compile(lambda x: x, backend=my_backend)
    msgs = [str(x.message) for x in w if "no FX graphs" in str(x.message)]
    assert len(msgs) == 1 and "'my_backend'" in msgs[0]
    assert calls == [] and cf.stats["traces"] == 1
    with ft.compiler.set_stance(force_backend=my_backend):
        pass


def test_register_backend_by_name():
    def lite_test_backend(gm, example_inputs):
        return gm.forward
    for lib in (torch, ft):
        assert lib._dynamo.register_backend(lite_test_backend) is lite_test_backend
        assert "lite_test_backend" in lib._dynamo.list_backends()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.compile(_f, backend="lite_test_backend")(torch.ones(2)).tolist()
    with pytest.warns(UserWarning, match="backend='lite_test_backend'.*no FX graphs"):
        assert ft.compile(_f, backend="lite_test_backend")(ft.ones(2)).tolist() == want == [2.0, 2.0]
    assert _same_err(lambda lib: lib._dynamo.register_backend(lambda gm, ex: gm, name="lite_test_backend")) \
        is AssertionError


# ---- item 5: appends / dict sets inside a compiled function are replayed ----------------------------------------
def _kw(lib):
    return {"backend": "eager"} if lib is torch else {}


def _appends(lib):
    seen, hist, d = [], [], {"a": 1}

    def f(x):
        seen.append(lib.compiler.is_compiling())
        return x + 1 if lib.compiler.is_compiling() else x - 1

    def g(x):
        y = x * 2
        hist.append(y.sum())
        hist.append(x)
        return y

    def h(x):
        d["last"] = x * 3
        d["n"] = d.get("n", 0) + 1
        d.pop("a", None)
        return x
    cf, cg, ch = (lib.compile(fn, **_kw(lib)) for fn in (f, g, h))
    out = [cf(lib.zeros(2)).tolist(), cf(lib.zeros(2)).tolist(), list(seen)]
    xs = [lib.ones(2) * i for i in range(3)]
    for x in xs:
        cg(x)
    out += [len(hist), [t.tolist() for t in hist], hist[1] is xs[0], hist[5] is xs[2]]
    for i in range(3):
        ch(lib.ones(2) * i)
    out += [list(d), d["last"].tolist(), d["n"]]
    return out, cf


def test_appends_and_dict_sets_are_replayed_after_compiled_calls():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, _ = _appends(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # (no graph-break warning: each call is a compiled program)
        got, cf = _appends(ft)
    assert got == want
    assert got[2] == [True, True] and got[0] == [1.0, 1.0]
    assert cf.stats["eager_calls"] == 0


def test_module_history_append_holds_the_result_tensor_with_its_graph():
    class M(ft.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = ft.nn.Linear(2, 1)
            with ft.no_grad():
                self.l.weight.fill_(0.5)
                self.l.bias.fill_(0.1)
            self.history = []

        def forward(self, x):
            out = self.l(x).sum()
            self.history.append(out)
            return out
    m = M()
    cm = ft.compile(m)
    loss = cm(ft.ones(3, 2))
    loss.backward()
    assert abs(m.history[0].item() - 3.3) < 1e-6 and m.history[0].requires_grad
    assert m.l.weight.grad.tolist() == [[3.0, 3.0]]
    assert cm._compiled.stats["eager_calls"] == 0


def test_other_list_changes_stay_graph_breaks():
    box = [0]

    def k(x):
        box.insert(0, 1)
        return x * 2

    def j(x):
        box.append(object())   # (not a tensor or a Python scalar: not replayed)
        return x
    with pytest.warns(UserWarning, match="graph break in k: changing the list box"):
        assert ft.compile(k)(ft.ones(1)).tolist() == [2.0]
    assert box == [1, 0]
    with pytest.raises(ft._compile.GraphBreak, match="appending a value of type 'object' to the list box"):
        ft.compile(j, fullgraph=True)(ft.ones(1))
    assert box == [1, 0]
