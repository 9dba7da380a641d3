"""``compiler.set_stance`` and ``_dynamo``'s shape markers against torch 2.13 (torch compiled with
``backend="eager"``: the stances act on dynamo's frames, whatever the backend)."""
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _pair(fn_src):
    """The same function compiled by each library (its globals: the library as ``lib``)."""
    torch._dynamo.reset()  # (torch remembers a code location's sizes across functions: automatic dynamic)
    out = []
    for lib, kw in ((torch, {"backend": "eager"}), (ft, {})):
        ns = {"lib": lib}
        exec(fn_src, ns)
        out.append((lib, lib.compile(ns["f"], **kw)))
    return out


SRC = "def f(x):\n    return x * 2 + 1\n"


@pytest.mark.parametrize("stance", ["fail_on_recompile", "eager_on_recompile", "force_eager",
                                    "eager_then_compile", "aot_eager_then_compile"])
def test_stances_run_or_refuse_as_torch(stance):
    for lib, cf in _pair(SRC):
        seen = []
        with lib.compiler.set_stance(stance):
            for n in (2, 2):
                try:
                    seen.append(cf(lib.ones(n)).tolist())
                except RuntimeError as e:
                    seen.append(str(e).split(". filename")[0])
        seen.append(cf(lib.ones(2)).tolist())  # the default stance again
        with lib.compiler.set_stance(stance):
            for n in (2, 3):
                try:
                    seen.append(cf(lib.ones(n)).tolist())
                except RuntimeError as e:
                    seen.append(str(e).split(". filename")[0])
        if lib is torch:
            want = seen
        else:
            assert seen == want
    # what ran compiled: a stance that refuses or defers compiling left no program behind
    traces = cf.stats["traces"]
    assert traces == {"fail_on_recompile": 1, "eager_on_recompile": 1, "force_eager": 1,
                      "eager_then_compile": 2, "aot_eager_then_compile": 2}[stance]


def test_fail_on_recompile_message_names_the_function_and_the_failed_guard():
    msgs = []
    for lib, cf in _pair(SRC):
        cf(lib.ones(2))
        with lib.compiler.set_stance("fail_on_recompile"):
            with pytest.raises(RuntimeError) as e:
                cf(lib.ones(3))
        msgs.append(str(e.value))
    head = "Detected recompile when torch.compile stance is 'fail_on_recompile'. filename: '<string>', " \
           "function name: 'f', line number: 1\n    triggered by the following guard failure(s):\n    - "
    assert msgs[0].startswith(head) and msgs[1].startswith(head)
    assert "(3,)" in msgs[1]  # (torch names its guard "tensor 'x' size mismatch"; ours names the changed shape)


def test_set_stance_as_function_decorator_and_its_errors():
    for lib, cf in _pair(SRC):
        lib.compiler.set_stance("force_eager")
        try:
            assert cf(lib.ones(2)).tolist() == [3.0, 3.0]
        finally:
            lib.compiler.set_stance("default")

        @lib.compiler.set_stance("eager_on_recompile")
        def run(n):
            return cf(lib.ones(n)).tolist()
        assert run(4) == [3.0] * 4
        with pytest.raises(RuntimeError, match=re.escape("non-default stance cannot have force_backend set")):
            lib.compiler.set_stance("force_eager", force_backend="eager")
        lib.compiler.set_stance("bogus")
        try:
            with pytest.raises(RuntimeError, match=re.escape(
                    "invalid torch.compile stance 'DynamoStance(stance='bogus', skip_guard_eval_unsafe=False, "
                    "backend=None)'")):
                cf(lib.ones(2))
        finally:
            lib.compiler.set_stance("default")
    assert cf.stats["traces"] == 0  # force_eager, then eager_on_recompile with nothing compiled: all eager
    with ft.compiler.set_stance(force_backend="aot_eager"):
        assert cf(ft.ones(2)).tolist() == [3.0, 3.0]
    assert cf.stats["traces"] == 1


def test_set_stance_inside_a_compiled_function_is_refused():
    @ft.compile
    def f(x):
        ft.compiler.set_stance("force_eager")
        return x
    with pytest.raises(RuntimeError, match="attempted to set_stance in a torch.compile region"):
        f(ft.ones(2))
    assert ft._dynamo._CURRENT[0].stance == "default"


def test_shape_markers_and_graph_helpers():
    x = ft.ones(3, 2)
    with pytest.warns(UserWarning, match="mark_dynamic: XLA programs have static shapes; dimension 0"):
        ft._dynamo.mark_dynamic(x, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ft._dynamo.maybe_mark_dynamic(x, 0)
        ft._dynamo.mark_static(x, 1)
        ft.compiler.cudagraph_mark_step_begin()
    assert ft.compiler.is_exporting() is False and torch.compiler.is_exporting() is False

    def helper(t):
        return t.sin() * 3
    assert ft.compiler.allow_in_graph(helper) is helper
    scale = ft.compiler.assume_constant_result(lambda: 2.5)
    tscale = torch.compiler.assume_constant_result(lambda: 2.5)

    def body(lib, h, sc):
        return lambda t: h(t) + sc()
    got = ft.compile(body(ft, helper, scale))(ft.arange(4.0))
    want = torch.compile(body(torch, lambda t: t.sin() * 3, tscale), backend="eager")(torch.arange(4.0))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
