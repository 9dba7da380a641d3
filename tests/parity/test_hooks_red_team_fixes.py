"""Custom ``autograd.Function`` and hook parity against real PyTorch 2.13 (red-team findings): the in-place
(``mark_dirty``) pattern's saved versions, a complex gradient of a real input, post hooks on a Function's node,
integer / non-tensor outputs and ``set_materialize_grads(False)`` under ``torch.func``, ``is_grads_batched`` with
``materialize_grads``, the outputs of a Function that gets no node, instantiating a Function, ``BackwardCFunction``
and the warnings torch gives (``only_inputs``, ``create_graph``'s reference cycle, gradcheck's precision,
``mark_dirty`` on a non-input)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import torch

import functorch_lite as ft
from _parity import rounded, same_rounded


def same(fn):
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same values or raise the same error type and message."""
    return same_rounded(fn, torch, ft)


def warned(fn):
    """``fn(lib)``'s result (as :func:`same`) and the (category, message) of each warning it gave, equal in both."""
    out = []
    for lib in (torch, ft):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = ("ok", rounded(fn(lib)))
            except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
                r = (type(e).__name__, str(e))
        out.append((r, [(x.category.__name__, str(x.message)) for x in w]))
    assert out[1] == out[0], out
    return out[0]


# ---- 2a. the in-place pattern: saved versions are taken after forward (and mark_dirty's bump) ----------------
def _relu_inplace(lib, setup_context):
    if setup_context:
        class R(lib.autograd.Function):
            @staticmethod
            def forward(x):
                x.clamp_(min=0)
                return x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.mark_dirty(inputs[0])
                ctx.save_for_backward(output)

            @staticmethod
            def backward(ctx, g):
                y, = ctx.saved_tensors
                return g * (y > 0).to(g.dtype)
        return R

    class ReluInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.clamp_(min=0)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * (y > 0).to(g.dtype)
    return ReluInplace


def test_mark_dirty_saved_version():
    for sc in (False, True):
        def plain(lib):
            w = lib.tensor([-1., 2.], requires_grad=True)
            y = _relu_inplace(lib, sc).apply(w * 1)
            v = y._version
            y.sum().backward()
            return v, type(y.grad_fn).__name__.startswith("R"), w.grad
        assert same(plain)[1][2] == [0.0, 1.0]

        def view(lib):
            w = lib.tensor([-1., 2., -3., 4.], requires_grad=True)
            base = w * 1
            y = _relu_inplace(lib, sc).apply(base[1:3])
            v = y._version
            base.sum().backward()
            return v, type(base.grad_fn).__name__, w.grad
        assert same(view)[1][2] == [1.0, 1.0, 0.0, 1.0]

        def modified_after(lib):  # (a later in-place write is still caught)
            w = lib.tensor([-1., 2.], requires_grad=True)
            y = _relu_inplace(lib, sc).apply(w * 1)
            y.mul_(2)
            y.sum().backward()
            return w.grad
        assert same(modified_after)[0] == "RuntimeError"


# ---- 1b. a complex gradient of a real input is refused -------------------------------------------------------
def test_complex_grad_of_real_input():
    def f(lib, to_complex):
        class C(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.to(lib.complex64) * (1 + 1j) if to_complex else g.real
        x = lib.tensor([1., 2.], requires_grad=True) if to_complex else lib.tensor([1 + 1j, 2.], requires_grad=True)
        C.apply(x).abs().sum().backward()
        return (x.grad.real, x.grad.imag) if x.grad.is_complex() else x.grad, str(x.grad.dtype)
    assert same(lambda lib: f(lib, True))[0] == "RuntimeError"
    same(lambda lib: f(lib, False))  # (a real gradient of a complex input: cast)

    def grad(lib):
        class C(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.to(lib.complex64)
        x = lib.tensor([1., 2.], requires_grad=True)
        return lib.autograd.grad(C.apply(x).sum(), x)
    assert same(grad)[0] == "RuntimeError"


# ---- 2c. post hooks on a custom Function's node ---------------------------------------------------------------
def _two_in(lib):
    class M(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, b):
            return a * b * k, a + b

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 3, None, g1 + g2
    return M


def test_function_node_post_hook():
    def one(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = lib.tensor([1., 2.], requires_grad=True)
        y = Double.apply(x)
        log = []
        y.grad_fn.register_hook(lambda gi, go: log.append((gi, go)))
        y.sum().backward()
        return log, x.grad
    same(one)

    def replaced(lib):
        a = lib.tensor([1., 2.], requires_grad=True)
        b = lib.tensor([3., 4.])
        o1, o2 = _two_in(lib).apply(a, 2.0, b)
        log = []
        o1.grad_fn.register_hook(lambda gi, go: log.append((gi, go)))
        o1.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, gi[1]))
        o1.sum().backward()
        return log, a.grad
    assert same(replaced)[1][1] == [30.0, 30.0]

    def other_input(lib):  # (grad_inputs hold the gradient of an input that needs none, as torch's)
        a = lib.tensor([1., 2.])
        b = lib.tensor([3., 4.], requires_grad=True)
        o1, o2 = _two_in(lib).apply(a, 2.0, b)
        log = []
        o1.grad_fn.register_hook(lambda gi, go: log.append((gi, go)))
        (o1.sum() + o2.sum()).backward()
        return log, b.grad
    same(other_input)

    def wrong_count(lib):
        a = lib.tensor([1., 2.])
        b = lib.tensor([3., 4.], requires_grad=True)
        o1, o2 = _two_in(lib).apply(a, 2.0, b)
        o1.grad_fn.register_hook(lambda gi, go: (gi[0],))
        o1.sum().backward()
    assert same(wrong_count)[0] == "RuntimeError"


# ---- 2b / set_materialize_grads: integer and non-tensor outputs under torch.func -------------------------------
def _fns(lib, log):
    class IntOut(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, x.argmax()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, gi):
            log.append(None if gi is None else (str(gi.dtype), tuple(gi.shape), gi.tolist()))
            return g * 2

    class NonTensor(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, 7

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g, n):
            log.append(n)
            return g * 2

    class BoolOut(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 3, x > 1

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output[1])

        @staticmethod
        def backward(ctx, g, gb):
            m, = ctx.saved_tensors
            log.append(None if gb is None else (str(gb.dtype), gb.tolist()))
            return g * 3 * m

    class NoMaterialize(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx, g1, g2):
            log.append((g1 is None, g2 is None))
            r = 0
            if g1 is not None:
                r = r + g1 * 2
            if g2 is not None:
                r = r + g2 * 3
            return r
    return IntOut, NonTensor, BoolOut, NoMaterialize


def test_function_outputs_under_func_transforms():
    for k in range(4):
        for out in (0, 1) if k == 3 else (0,):
            def f(lib):
                log = []
                fn = _fns(lib, log)[k]
                x = lib.tensor([1., 3., 2.])
                r = [lib.func.grad(lambda t: fn.apply(t)[out].sum())(x),
                     lib.func.vjp(lambda t: fn.apply(t)[out], x)[1](lib.ones(3)),
                     lib.func.jacrev(lambda t: fn.apply(t)[out])(x)]
                xx = x.clone().requires_grad_()
                fn.apply(xx)[out].sum().backward()
                return r, xx.grad, log
            same(f)


def test_numpy_sort_extending_func():
    """torch's extending.func NumpySort example under torch.func.grad."""
    def f(lib):
        class NumpySort(lib.autograd.Function):
            @staticmethod
            def forward(x, dim):
                ind = np.argsort(x.numpy(), axis=dim)
                ind_inv = np.argsort(ind, axis=dim)
                return lib.tensor(np.take_along_axis(x.numpy(), ind, axis=dim)), lib.tensor(ind), lib.tensor(ind_inv)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, dim = inputs
                _, ind, ind_inv = output
                ctx.mark_non_differentiable(ind, ind_inv)
                ctx.save_for_backward(ind, ind_inv)
                ctx.dim = dim

            @staticmethod
            def backward(ctx, grad_output, _0, _1):
                ind, ind_inv = ctx.saved_tensors
                return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

        class NumpyTake(lib.autograd.Function):
            @staticmethod
            def forward(x, ind, ind_inv, dim):
                return lib.tensor(np.take_along_axis(x.numpy(), ind.numpy(), dim))

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, ind, ind_inv, dim = inputs
                ctx.save_for_backward(ind, ind_inv)
                ctx.dim = dim

            @staticmethod
            def backward(ctx, grad_output):
                ind, ind_inv = ctx.saved_tensors
                return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None, None, None

        def loss(x):
            return (NumpySort.apply(x, 1)[0] * lib.arange(3.)).sum()
        x = lib.tensor([[3., 1., 2.], [0., 5., 4.]])
        return lib.func.grad(loss)(x)
    assert same(f)[1] == [[2.0, 0.0, 1.0], [0.0, 2.0, 1.0]]


# ---- 1e. is_grads_batched with materialize_grads: an unused input's zeros are unbatched -----------------------
def test_grads_batched_materialize():
    def f(lib, **kw):
        x = lib.ones(2, requires_grad=True)
        u = lib.ones(3, requires_grad=True)
        r = lib.autograd.grad(x * 2, [x, u], lib.eye(2), is_grads_batched=True, **kw)
        return [None if g is None else (tuple(g.shape), g.requires_grad) for g in r], r
    assert same(lambda lib: f(lib, materialize_grads=True))[1][0] == [[[2, 2], False], [[3], False]]
    same(lambda lib: f(lib, allow_unused=True))
    assert same(lambda lib: f(lib, materialize_grads=True, allow_unused=False))[0] == "ValueError"
    assert same(lambda lib: f(lib))[0] == "RuntimeError"

    def create_graph(lib):
        x = lib.ones(2, requires_grad=True)
        u = lib.ones(3, requires_grad=True)
        r = lib.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True, create_graph=True)
        return [(tuple(g.shape), g.requires_grad) for g in r]
    assert same(create_graph)[1] == [[[2], False], [[3], True]]


# ---- 1f. the outputs of a Function that gets no node (or a non-differentiable one) ----------------------------
def _dirty_and_ident(lib):
    class D(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Ident(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class NonDiff(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g
    return D, Ident, NonDiff


def _meta(y, x):
    return y is x, y.requires_grad, type(y.grad_fn).__name__, y._is_view(), y._base is x, y._version


def test_function_outputs_without_node():
    def dirty_no_grad(lib):
        D = _dirty_and_ident(lib)[0]
        x = lib.tensor([1., 2.], requires_grad=True)
        with lib.no_grad():
            y = D.apply(x)
        z = lib.tensor([1., 2.])
        w = D.apply(z)
        return _meta(y, x), y, x._version, _meta(w, z)
    assert same(dirty_no_grad)[1][0][:2] == [False, False]

    for rg in (True, False):
        def ident(lib):
            Ident = _dirty_and_ident(lib)[1]
            x = lib.tensor([1., 2.], requires_grad=rg)
            y = Ident.apply(x)
            with lib.no_grad():
                z = Ident.apply(x)
            return _meta(y, x), _meta(z, x)
        assert same(ident)[1][0][0] is False

    def non_diff(lib):
        NonDiff = _dirty_and_ident(lib)[2]
        x = lib.tensor([1., 2.], requires_grad=True)
        return _meta(NonDiff.apply(x), x), _meta(NonDiff.apply(x * 1), x)
    same(non_diff)


# ---- 3. instantiating a Function, BackwardCFunction, warnings ---------------------------------------------------
def test_instantiated_function_and_backward_cfunction():
    def f(lib):
        class MyExp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.exp()

            @staticmethod
            def backward(ctx, g):
                return g
        x = lib.tensor([1., 2.], requires_grad=True)
        y = MyExp.apply(x)
        info = (isinstance(y.grad_fn, lib.autograd.function.BackwardCFunction), y.grad_fn._forward_cls is MyExp,
                isinstance(y.grad_fn, lib.autograd.graph.Node), type(y.grad_fn).__mro__[1].__name__,
                isinstance((x * 2).grad_fn, lib.autograd.function.BackwardCFunction))
        MyExp()(x)
        return info
    r, ws = warned(f)
    assert r[0] == "RuntimeError" and ws[0][0] == "DeprecationWarning"

    def info(lib):
        class MyExp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.exp()

            @staticmethod
            def backward(ctx, g):
                return g
        x = lib.tensor([1., 2.], requires_grad=True)
        y = MyExp.apply(x)
        return (isinstance(y.grad_fn, lib.autograd.function.BackwardCFunction), y.grad_fn._forward_cls is MyExp,
                isinstance(y.grad_fn, lib.autograd.graph.Node), type(y.grad_fn).__mro__[1].__name__,
                isinstance((x * 2).grad_fn, lib.autograd.function.BackwardCFunction))
    assert same(info)[1] == [True, True, True, "BackwardCFunction", False]


def test_warnings():
    def only_inputs(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        return lib.autograd.grad((x * 2).sum(), x, only_inputs=False)
    assert warned(only_inputs)[1][0][0] == "FutureWarning"

    def gradcheck(lib):
        res = []
        for dt in (lib.float32, lib.float64, lib.complex64, lib.complex128):
            x = lib.tensor([1., 2.], dtype=dt, requires_grad=True)
            res.append(lib.autograd.gradcheck(lambda a, b: (a * b).sum(), (lib.ones(2), x), eps=1e-2, atol=1e-1,
                                              rtol=1e-1, raise_exception=False))
        return res
    assert len(warned(gradcheck)[1]) == 2

    def dirty_not_input(lib):
        class NotIn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                z = x * 2
                ctx.mark_dirty(z)
                return z

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = lib.tensor([1., 2.], requires_grad=True)
        y = NotIn.apply(x)
        with lib.no_grad():
            z = NotIn.apply(x)  # (no node: no warning)
        return type(y.grad_fn).__name__, y._version, z._version
    assert len(warned(dirty_not_input)[1]) == 1


_CYCLE = """
import sys, warnings
lib = __import__(sys.argv[1])
x = lib.tensor([1., 2.], requires_grad=True)
for k in range(2):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        (x ** 2).sum().backward(create_graph=True)
    print(k, [(a.category.__name__, str(a.message)) for a in w])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    lib.autograd.grad((x ** 2).sum(), x, create_graph=True)
print([str(a.message) for a in w])
"""


def test_create_graph_reference_cycle_warning():
    """Given once a process (torch's TORCH_WARN_ONCE): each library in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    outs = [subprocess.run([sys.executable, "-c", _CYCLE, lib], capture_output=True, text=True, env=env,
                           timeout=300).stdout for lib in ("torch", "functorch_lite")]
    assert outs[0] == outs[1] and "reference cycle" in outs[0], outs
