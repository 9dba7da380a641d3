"""Autograd-engine parity against real PyTorch 2.13: tensor hooks under ``autograd.grad`` (PyTorch's exec_info:
what is captured before or after an input's hooks), the walk pruned to the nodes leading to ``inputs`` (nothing
below them checked, hooked or freed), grad mode inside hooks on the whole-graph path, ``backward(inputs=)`` with
non-leaf inputs, the checks of what a hook returns, implicit-gradient and grad-mode argument errors, bare
grad-mode decorators and grad mode inside inference mode."""
import functools

import numpy as np
import pytest
import torch

from _parity import rounded as _vals, same, same_rounded


def _t(lib, vals=(1., 2., 3.), **kw):
    return lib.tensor(list(vals), requires_grad=True, **kw)


def same_vals(fn):
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same values (tensors compared as rounded lists) or raise
    the same error; warnings are errors (a non-leaf ``.grad`` read without retain_grad warns), create_graph's
    reference-cycle warning aside."""
    import functorch_lite as ft
    return same_rounded(fn, torch, ft, warnings_as_errors=True)


# ---- 5: tensor hooks under autograd.grad ----------------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_runs_leaf_hooks(create_graph):
    def f(lib):
        x = _t(lib)
        x.register_hook(lambda g: g * 100)
        x.register_hook(lambda g: g + 1)
        (g,) = lib.autograd.grad((x * x).sum() + x.sum(), x, create_graph=create_graph)
        return g, x.grad, g.requires_grad
    assert same_vals(f)[1][0] == [301.0, 501.0, 701.0]


def test_grad_leaf_hook_once_per_leaf_and_not_for_others():
    def f(lib):
        x, w = _t(lib), lib.tensor(2., requires_grad=True)
        calls = []
        x.register_hook(lambda g: (calls.append(_vals(g)), g * 10)[1])
        w.register_hook(lambda g: calls.append("w"))
        x.register_post_accumulate_grad_hook(lambda t: calls.append("post"))
        gs = lib.autograd.grad((x * x * w).sum(), [x, x])
        return gs, calls, x.grad, w.grad
    same_vals(f)


def test_grad_target_hooks_before_or_after_capture():
    # a target whose node runs (an input lies below it) is captured before its hooks; one with nothing to run
    # below it after its tensor hooks and retain_grad (not after its node's own pre-hooks)
    def f(lib):
        x = _t(lib)
        h = x * 2
        k = h * 3
        calls = []
        h.register_hook(lambda g: (calls.append("h"), g * 100)[1])
        h.retain_grad()
        k.register_hook(lambda g: g * 10)
        k.grad_fn.register_prehook(lambda go: (go[0] * 7,))
        k.retain_grad()
        r1 = lib.autograd.grad((k * k).sum(), [k], retain_graph=True)
        r2 = lib.autograd.grad((k * k).sum(), [k, h, x])
        return r1, r2, calls, h.grad, k.grad
    same_vals(f)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_target_only_hooks(create_graph):
    def f(lib):
        x = _t(lib)
        h = x * 2
        h.register_hook(lambda g: g * 100)
        h.grad_fn.register_prehook(lambda go: (go[0] * 7,))
        return lib.autograd.grad((h * h).sum(), h, create_graph=create_graph)
    assert same_vals(f)[1] == [[400.0, 800.0, 1200.0]]


# ---- 6: the walk pruned to what leads to the inputs -------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_to_intermediate_leaves_graph_below(create_graph):
    def f(lib):
        x = _t(lib, (1., 2.))
        calls = []
        a = x * 1
        a.register_hook(lambda g: calls.append("a"))
        h = a.exp()
        (g,) = lib.autograd.grad((h * h).sum(), h, create_graph=create_graph)
        (h * 2).sum().backward()
        return g, x.grad, calls
    same_vals(f)


def test_grad_to_intermediate_no_hooks_below():
    def f(lib):
        x = _t(lib, (1., 2.))
        calls = []
        h = x.exp()
        h2 = h * 1
        h2.register_hook(lambda g: calls.append("h2"))
        x.register_hook(lambda g: calls.append("x"))
        h.register_hook(lambda g: calls.append("h"))
        return lib.autograd.grad((h2 * h2).sum(), h2), calls
    assert same_vals(f)[1][1] == ["h2"]


def test_grad_to_intermediate_ignores_versions_below():
    def f(lib):
        x = _t(lib, (1., 2.))
        a = x * 1
        h = (a * a).exp()
        a.add_(1)
        return lib.autograd.grad((h * h).sum(), h)
    same_vals(f)


def test_grad_side_branch_not_freed():
    def f(lib):
        x, w = _t(lib, (1., 2.)), _t(lib, (3., 4.))
        a, b = x.exp(), w.exp()
        gw = lib.autograd.grad((a * b).sum(), [w])
        gx = lib.autograd.grad((a * a).sum(), x)
        h = x.exp()
        lib.autograd.grad((h * h).sum(), h)
        return gw, gx, lib.autograd.grad((h * h).sum(), x)
    same_vals(f)


def test_grad_nodes_above_target_are_freed():
    def f(lib):
        x = _t(lib, (1., 2.))
        h = x.exp()
        y = (h * h).sum()
        lib.autograd.grad(y, h)
        return lib.autograd.grad(y, x)
    assert same_vals(f)[0] == "RuntimeError"


# ---- 7: grad mode inside hooks (the whole-graph path) ------------------------------------------------------------
@pytest.mark.parametrize("how", ["backward", "inputs", "create_graph"])
def test_hooks_run_with_grad_mode_off(how):
    def f(lib):
        x = _t(lib, (1., 2.))
        w = lib.tensor(3., requires_grad=True)
        modes = []
        x.register_hook(lambda g: (modes.append(lib.is_grad_enabled()), g * w)[1])
        x.register_post_accumulate_grad_hook(lambda t: modes.append(lib.is_grad_enabled()))
        loss = (x * x).sum()
        if how == "inputs":
            loss.backward(inputs=[x])
        else:
            loss.backward(create_graph=how == "create_graph")
        return modes, x.grad.requires_grad, x.grad
    same_vals(f)


# ---- 8: backward(inputs=) with non-leaf inputs --------------------------------------------------------------------
def test_backward_inputs_nonleaf_fills_grad():
    def f(lib):
        x = _t(lib)
        w = lib.tensor(2., requires_grad=True)
        h = x * w
        (h * h).sum().backward(inputs=[h, w], retain_graph=True)
        first = (_vals(h.grad), _vals(w.grad), x.grad, h.retains_grad, h.is_leaf)
        (h * h).sum().backward(inputs=[h])
        return first, h.grad
    same_vals(f)


def test_backward_inputs_nonleaf_hooks_and_create_graph():
    def f(lib):
        x = _t(lib)
        h = x * 2
        h.register_hook(lambda g: g * 10)
        (h * h).sum().backward(inputs=[h], create_graph=True)
        return h.grad, h.grad.requires_grad, x.grad
    same_vals(f)


def test_backward_inputs_nonleaf_runs_its_node():
    # as PyTorch, the input's node runs (and frees what it saved); what lies below it does not
    def f(lib):
        x = _t(lib, (1., 2.))
        h = x.exp()
        (h * h).sum().backward(inputs=[h])
        out = (_vals(h.grad), x.grad)
        (h * 2).sum().backward()
        return out
    assert same_vals(f)[0] == "RuntimeError"


def test_backward_inputs_not_requiring_grad():
    def f(lib):
        x = _t(lib)
        (x * x).sum().backward(inputs=[x, lib.tensor([1.])])
        return x.grad
    assert same_vals(f)[0] == "RuntimeError"


# ---- 9: what a hook returns is checked ---------------------------------------------------------------------------
def _named_hook(g):
    return g[:1]


class _CallableHook:
    def __call__(self, g):
        return g.sum()


HOOKS = {
    "size": lambda lib: (lambda g: g.sum()),
    "size-reshape": lambda lib: (lambda g: g.reshape(1, 3)),
    "named": lambda lib: _named_hook,
    "partial": lambda lib: functools.partial(lambda a, g: g.sum(), 1),
    "object": lambda lib: _CallableHook(),
    "double": lambda lib: (lambda g: g.double()),
    "long": lambda lib: (lambda g: g.long()),
    "bfloat16": lambda lib: (lambda g: g.to(lib.bfloat16)),
    "complex": lambda lib: (lambda g: g.to(lib.complex64)),
    "int": lambda lib: (lambda g: 3),
    "expand-ok": lambda lib: (lambda g: g.sum().expand(3)),
}


@pytest.mark.parametrize("where", ["leaf", "nonleaf", "grad", "create_graph"])
@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_hook_result_checked(hook, where):
    def f(lib):
        x = _t(lib)
        t = x if where in ("leaf", "grad") else x * 2
        t.register_hook(HOOKS[hook](lib))
        loss = (t * t).sum()
        if where == "grad":
            return lib.autograd.grad(loss, x)
        loss.backward(create_graph=where == "create_graph")
        return x.grad
    same_vals(f)


def test_hook_result_checked_low_precision_leaf():
    def f(lib):
        x = _t(lib, dtype=lib.bfloat16)
        x.register_hook(lambda g: g.float())
        (x * x).sum().backward()
        return x.grad
    same_vals(f)


@pytest.mark.parametrize("ret", ["count", "dtype", "int", "list", "ok"])
def test_node_prehook_result_checked(ret):
    make = {"count": lambda go: (go[0], go[0]), "dtype": lambda go: (go[0].double(),), "int": lambda go: (3,),
            "list": lambda go: [go[0] * 2], "ok": lambda go: (go[0] * 2,)}[ret]

    def f(lib):
        x = _t(lib)
        h = x * 2
        h.grad_fn.register_prehook(make)
        (h * h).sum().backward()
        return x.grad
    same_vals(f)


def test_node_prehook_cannot_replace_none():
    def f(lib):
        x = _t(lib)
        s = lib.stack([x, x]).unbind(0)
        s[0].grad_fn.register_prehook(lambda go: tuple(lib.ones(3) for _ in go))
        s[0].sum().backward()
        return x.grad
    same_vals(f)


def test_hook_order_tensor_retain_then_node_prehooks():
    def f(lib):
        x = _t(lib)
        h = x * 2
        log = []
        h.grad_fn.register_prehook(lambda go: (log.append("pre"), (go[0] * 2,))[1])
        h.register_hook(lambda g: (log.append("t"), g * 3)[1])
        h.retain_grad()
        (h * h).sum().backward()
        return x.grad, h.grad, log
    same_vals(f)


# ---- 14b: implicit gradients and grad-mode arguments -------------------------------------------------------------
@pytest.mark.parametrize("how", ["backward", "grad", "nonscalar"])
def test_implicit_grad_of_complex_output(how):
    def f(lib):
        x = lib.tensor([1. + 1j, 2.], requires_grad=True)
        y = x * x
        if how == "grad":
            return lib.autograd.grad(y.sum(), x)
        (y if how == "nonscalar" else y.sum()).backward()
        return x.grad
    assert same_vals(f)[0] == "RuntimeError"


@pytest.mark.parametrize("mode", ["yes", 1, None, "np", "tensor"])
def test_set_grad_enabled_requires_bool(mode):
    def f(lib):
        m = {"np": np.bool_(False), "tensor": lib.tensor(False)}.get(mode, mode)
        with lib.set_grad_enabled(m):
            return lib.is_grad_enabled()
    same(f)


# ---- 14c: bare decorators, grad mode inside inference mode -------------------------------------------------------
def test_bare_grad_mode_decorators():
    def f(lib):
        @lib.no_grad
        def a(v):
            """doc"""
            return lib.is_grad_enabled(), v

        @lib.enable_grad
        def b():
            return lib.is_grad_enabled()

        @lib.inference_mode
        def c():
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled()

        @lib.no_grad
        def gen():
            yield lib.is_grad_enabled()

        with lib.no_grad():
            inner = b()
        return a(3), a.__name__, a.__doc__, inner, c(), list(gen()), lib.is_grad_enabled()
    same(f)


def test_inference_mode_false_enables_grad():
    def f(lib):
        @lib.inference_mode(False)
        def g():
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled()
        with lib.inference_mode():
            a = g()
        with lib.no_grad():
            with lib.inference_mode(False):
                b = lib.is_grad_enabled(), lib.is_inference_mode_enabled()
            c = lib.is_grad_enabled()
        return a, b, c
    same(f)


def test_enable_grad_inside_inference_mode_records_nothing():
    def f(lib):
        x = _t(lib, (1., 2.))
        out = []
        with lib.inference_mode():
            with lib.enable_grad():
                y = x * 2
                out.append((y.requires_grad, y.grad_fn is None, lib.is_grad_enabled(), y.is_inference()))
                with lib.no_grad():
                    out.append(lib.is_grad_enabled())
                with lib.inference_mode():
                    out.append(lib.is_grad_enabled())
                with lib.inference_mode(False):
                    z = x * 2
                    out.append((z.requires_grad, z.is_inference()))
            lib.set_grad_enabled(True)
            w = x * 2
            out.append((lib.is_grad_enabled(), w.requires_grad))
        out.append(lib.is_grad_enabled())
        return out
    same(f)
