"""Autograd parity against real PyTorch 2.13 (red-team findings): saved_tensors_hooks around a custom
``autograd.Function`` (pack at save, unpack at each ``saved_tensors`` access, ``_raw_saved_tensors``), gradient
hooks that write the gradient in place and return None, hooks on AccumulateGrad nodes, the count check of a node
post-hook's result, a saved tensor detached in place, calling a node directly, ``set_multithreading_enabled`` and
``mark_dirty`` on a tensor the Function does not return."""
import pytest
import torch

import functorch_lite as ft
from _parity import rounded as _vals, same_rounded


def same(fn):
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same values or raise the same error type and message."""
    return same_rounded(fn, torch, ft)


def _x(lib):
    return lib.tensor([1., 2.], requires_grad=True)


def _sq(lib):
    class Sq(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    return Sq


def _saver(lib):
    class S(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            y = x * w
            ctx.save_for_backward(x, y, None)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y, n = ctx.saved_tensors
            return g * y, None
    return S


# ---- 1. saved_tensors_hooks around a custom Function --------------------------------------------------------
def test_saved_hooks_custom_function_pack_unpack():
    def f(lib):
        x = _x(lib)
        log = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: (log.append("pack"), t * 10)[1],
                                                    lambda t: (log.append("unpack"), t)[1]):
            y = _sq(lib).apply(x)
        log.append("fwd")
        y.sum().backward()
        return x.grad, log
    assert same(f)[1][0] == [20.0, 40.0]


def test_saved_hooks_custom_function_autograd_place():
    def f(lib):
        x = _x(lib)
        a = x * 1
        log = []

        def pack(t):
            log.append(("pack", t.tolist(), t.requires_grad, t.grad_fn is None))
            return t

        def unpack(t):
            log.append(("unpack", t.tolist()))
            return t
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = _saver(lib).apply(a, lib.tensor([3., 4.]))
        st = y.grad_fn.saved_tensors
        places = [(s.requires_grad, s.grad_fn is a.grad_fn, s.grad_fn is y.grad_fn) if s is not None else None
                  for s in st]
        y.sum().backward()
        return log, places, x.grad
    same(f)


def test_saved_hooks_custom_function_unpacked_value_and_errors():
    def values(lib):
        x = _x(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 10, lambda t: t):
            y = _saver(lib).apply(x, lib.tensor([3., 4.]))
        return [(_vals(s), s.requires_grad, s.grad_fn is None) if s is not None else None
                for s in y.grad_fn.saved_tensors]
    same(values)

    def freed(lib):
        x = _x(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 10, lambda t: t):
            y = _saver(lib).apply(x, lib.tensor([3., 4.]))
        y.sum().backward()
        return y.grad_fn.saved_tensors
    assert same(freed)[0] == "RuntimeError"

    def not_tensor(lib):
        x = _x(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1):
            y = _sq(lib).apply(x)
        return y.grad_fn.saved_tensors
    assert same(not_tensor)[0] == "TypeError"


def test_raw_saved_tensors_register_hooks():
    def f(lib):
        x = _x(lib)
        y = _saver(lib).apply(x, lib.tensor([3., 4.]))
        raw = y.grad_fn._raw_saved_tensors
        log = []
        raw[0].register_hooks(lambda t: (log.append("p"), t * 10)[1], lambda t: (log.append("u"), t)[1])
        log.append("reg")
        s = y.grad_fn.saved_tensors
        return len(raw), type(raw[0]).__name__, log, s[0], s[0].requires_grad

    same(f)

    def twice(lib):
        x = _x(lib)
        y = _saver(lib).apply(x, lib.tensor([3., 4.]))
        raw = y.grad_fn._raw_saved_tensors
        raw[0].register_hooks(lambda t: t, lambda t: t)
        raw[0].register_hooks(lambda t: t, lambda t: t)
    assert same(twice)[0] == "RuntimeError"

    def under_hooks(lib):
        x = _x(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = _saver(lib).apply(x, lib.tensor([3., 4.]))
        y.grad_fn._raw_saved_tensors[0].register_hooks(lambda t: t, lambda t: t)
    assert same(under_hooks)[0] == "RuntimeError"


# ---- 2. hooks that write the gradient in place and return None -----------------------------------------------
def _zero(g):
    g.zero_()


def _double(g):
    g.mul_(2)


@pytest.mark.parametrize("case", ["nonleaf", "nonleaf_retain", "leaf", "leaf_grad", "two_hooks", "autograd_grad",
                                  "node_prehook", "node_posthook", "leaf_existing_grad"])
def test_hook_inplace_returning_none(case):
    def f(lib):
        x = _x(lib)
        if case == "nonleaf":
            y = x * 1
            y.register_hook(_zero)
            y.exp().sum().backward()
            return x.grad
        if case == "nonleaf_retain":
            y = x * 1
            y.register_hook(_zero)
            y.retain_grad()
            y.exp().sum().backward()
            return x.grad, y.grad
        if case == "leaf":
            x.register_hook(_double)
            (x * 3).sum().backward()
            return x.grad
        if case == "leaf_grad":
            x.register_hook(_double)
            return lib.autograd.grad(x.exp().sum(), x)
        if case == "two_hooks":
            y = x * 1
            y.register_hook(_double)
            y.register_hook(_double)
            (y * y).sum().backward()
            return x.grad
        if case == "autograd_grad":
            y = x * 1
            y.register_hook(_double)
            return lib.autograd.grad((y * 3).sum(), y)
        if case == "node_prehook":
            y = x * 1
            y.grad_fn.register_prehook(lambda go: _double(go[0]))
            (y * 1).sum().backward()
            return x.grad
        if case == "node_posthook":
            y = x * 1
            y.grad_fn.register_hook(lambda gi, go: _double(gi[0]))
            (y * 1).sum().backward()
            return x.grad
        x.register_hook(_double)
        x.grad = lib.ones(2)
        (x * 3).sum().backward()
        return x.grad
    same(f)


# ---- 3. hooks on AccumulateGrad nodes ----------------------------------------------------------------------
def test_accumulate_grad_prehook():
    def f(lib):
        x = _x(lib)
        acc = (x * 1).grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: (go[0] * 10,))
        (x * 2).sum().backward()
        return x.grad
    assert same(f)[1] == [20.0, 20.0]


def test_accumulate_grad_posthook_and_order():
    def f(lib):
        x = _x(lib)
        acc = (x * 1).grad_fn.next_functions[0][0]
        log = []
        x.register_hook(lambda g: (log.append(("leaf", g.tolist())), g * 2)[1])
        acc.register_prehook(lambda go: (log.append(("pre", go[0].tolist())), (go[0] * 10,))[1])
        acc.register_hook(lambda gi, go: log.append(("post", gi, go[0].tolist(), x.grad.tolist())))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("pah", t.grad.tolist())))
        (x * 2).sum().backward()
        return x.grad, log
    same(f)


def test_accumulate_grad_hooks_autograd_grad_and_checks():
    def not_run(lib):  # (autograd.grad does not run the input's AccumulateGrad)
        x = _x(lib)
        acc = (x * 1).grad_fn.next_functions[0][0]
        log = []
        acc.register_prehook(lambda go: (log.append("pre"), (go[0] * 10,))[1])
        acc.register_hook(lambda gi, go: log.append("post"))
        return lib.autograd.grad((x * 2).sum(), x), log
    same(not_run)

    def post_returns(lib):
        x = _x(lib)
        acc = (x * 1).grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: (go[0],))
        (x * 2).sum().backward()
        return x.grad
    assert same(post_returns)[0] == "RuntimeError"

    def post_empty(lib):
        x = _x(lib)
        acc = (x * 1).grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: ())
        (x * 2).sum().backward()
        return x.grad
    same(post_empty)


# ---- 4. node post-hook results are checked ---------------------------------------------------------------
@pytest.mark.parametrize("case", ["short", "long", "list", "tensor", "none_to_value", "dtype", "size", "ok"])
def test_node_posthook_result_checks(case):
    hooks = {"short": lambda gi, go: (gi[0] * 5,), "long": lambda gi, go: (gi[0], None, None),
             "list": lambda gi, go: [gi[0] * 5, None], "tensor": lambda gi, go: gi[0],
             "none_to_value": lambda gi, go: (gi[0] * 5, gi[0]), "dtype": lambda gi, go: (gi[0].double(), None),
             "size": lambda gi, go: (gi[0][:1], None), "ok": lambda gi, go: (gi[0] * 5, None)}

    def f(lib):
        x = _x(lib)
        y = x * lib.tensor([3., 4.])
        y.grad_fn.register_hook(hooks[case])
        y.sum().backward()
        return x.grad
    same(f)


def test_node_posthook_count_both_inputs_and_unary():
    def both(lib):
        x, w = _x(lib), lib.tensor([3., 4.], requires_grad=True)
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0],))
        y.sum().backward()
    assert same(both)[0] == "RuntimeError"

    def unary(lib):
        x = _x(lib)
        y = x.exp()
        y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
        y.sum().backward()
    assert same(unary)[0] == "RuntimeError"


# ---- 5. a saved tensor detached in place -------------------------------------------------------------------
def test_saved_tensor_detached_inplace():
    def f(lib):
        x = _x(lib)
        a = x * 1
        y = a.sin()
        a.detach_()
        y.sum().backward()
        return x.grad
    assert same(f)[0] == "RuntimeError"

    def output_saved(lib):  # (a saved *output* detached in place: no error in torch)
        x = _x(lib)
        y = x.exp()
        z = y * 1
        y.detach_()
        z.sum().backward()
        return x.grad
    same(output_saved)


# ---- 6. calling a node -----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["exp", "mul_both", "mul_x", "mul_w", "no_grad", "none", "two_args", "no_args",
                                  "kwargs", "unbind", "unbind_none", "freed", "custom", "accumulate"])
def test_call_node(case):
    def f(lib):
        x, w = _x(lib), lib.tensor([3., 4.])
        g = lib.ones(2)
        if case == "exp":
            r = x.exp().grad_fn(g)
            return r, r.requires_grad
        if case == "mul_both":
            w.requires_grad_()
            return x.mul(w).grad_fn(g)
        if case == "mul_x":
            return (x * w).grad_fn(g)
        if case == "mul_w":
            return (w * x).grad_fn(g)
        if case == "no_grad":
            n = x.exp().grad_fn
            with lib.no_grad():
                r = n(g)
            return r, r.requires_grad
        if case == "none":
            return x.exp().grad_fn(None)
        if case == "two_args":
            return x.exp().grad_fn(g, g)
        if case == "no_args":
            return x.exp().grad_fn()
        if case == "kwargs":
            return x.exp().grad_fn(grad=g)
        if case == "unbind":
            return x.unbind()[0].grad_fn(lib.tensor(1.), lib.tensor(2.))
        if case == "unbind_none":
            return x.unbind()[0].grad_fn(lib.tensor(1.), None)
        if case == "freed":
            y = x.exp()
            n = y.grad_fn
            y.sum().backward()
            return n(g)
        if case == "custom":
            return _sq(lib).apply(x).grad_fn(g)
        acc = (x * 1).grad_fn.next_functions[0][0]
        return acc(g), x.grad
    same(f)


# ---- 7. set_multithreading_enabled ----------------------------------------------------------------------
def test_set_multithreading_enabled():
    def f(lib):
        m = lib.autograd.set_multithreading_enabled
        assert m is lib.autograd.grad_mode.set_multithreading_enabled
        x = _x(lib)
        with m(False):
            (x * 2).sum().backward()
        m(False)
        m(True)

        @m(False)
        def step():
            (x * 3).sum().backward()
        step()
        m(True)
        return x.grad, type(m(True).clone()).__name__
    same(f)


def test_set_multithreading_enabled_flag():
    from functorch_lite.autograd.grad_mode import _is_multithreading_enabled as ours
    for lib, flag in ((torch, torch._C._is_multithreading_enabled), (ft, ours)):
        m = lib.autograd.set_multithreading_enabled
        seen = [flag()]
        with m(False):
            seen.append(flag())
        seen.append(flag())
        m(False)
        seen.append(flag())
        m(True)
        assert seen == [True, False, True, False], (lib, seen)


# ---- 8. mark_dirty on a tensor not returned -------------------------------------------------------------------
@pytest.mark.parametrize("requires_grad", [True, False])
def test_mark_dirty_not_returned(requires_grad):
    def f(lib):
        class D(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, z):
                z.add_(1)
                ctx.mark_dirty(z)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None
        return D.apply(lib.tensor([1., 2.], requires_grad=requires_grad), lib.zeros(2))
    assert same(f)[0] == "RuntimeError"


@pytest.mark.parametrize("call", [lambda T: T.tensor(1.).size(0), lambda T: T.tensor(1.).size(-1),
                                  lambda T: T.tensor(1.).size(1), lambda T: T.tensor(1.).stride(0),
                                  lambda T: T.ones(2).size(1), lambda T: T.ones(2, 3).size(-1)])
def test_size_and_stride_of_a_dimension_of_a_zero_dim_tensor(call):
    """(a data red-team finding: ``x.size(0)`` of a 0-d tensor raised a bare tuple IndexError)"""
    def outcome(T):
        try:
            return call(T)
        except IndexError as e:
            return str(e)
    assert outcome(ft) == outcome(torch)
