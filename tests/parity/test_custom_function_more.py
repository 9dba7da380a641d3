"""Parity of custom ``autograd.Function`` details: ``mark_dirty``, ``once_differentiable``, the ``jvp`` and ``vmap``
staticmethods (forward AD, torch.func), non-tensor outputs and inputs, saved tensors, ``apply`` keyword arguments
and in-place writes to a Function's view outputs. Every case runs in real torch and here."""
import numpy as np
import torch

import functorch_lite as ft
from _parity import run


def _plain(r):
    """A result as comparable data: tensors as (shape, dtype, float values), containers element-wise."""
    if hasattr(r, "detach") and hasattr(r, "shape"):
        d = r.detach()
        return ("T", tuple(d.shape), str(d.dtype).split(".")[-1], np.asarray(d.double().numpy()))
    if isinstance(r, (tuple, list)):
        return [_plain(x) for x in r]
    return r


def _eq(a, b):
    if isinstance(a, tuple) and a and a[0] == "T":
        assert isinstance(b, tuple) and b[0] == "T" and a[1:3] == b[1:3], (a, b)
        np.testing.assert_allclose(a[3], b[3], rtol=1e-5, atol=1e-6)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _eq(x, y)
    else:
        assert a == b, (a, b)


def check(fn):
    """``fn(torch)`` and ``fn(functorch_lite)``: the same exception (type and message) or equal results."""
    (t_out, t_err), (f_out, f_err) = run(fn, torch), run(fn, ft)
    if t_err is not None:
        assert f_err is not None, f"torch raised {t_err!r}; functorch_lite returned {f_out}"
        assert type(f_err) is type(t_err) and str(f_err) == str(t_err), (t_err, f_err)
        return
    assert f_err is None, f"functorch_lite raised {f_err!r} (torch returned {t_out})"
    _eq(_plain(t_out), _plain(f_out))


def _od(lib):
    return __import__(lib.__name__ + ".autograd.function", fromlist=["once_differentiable"]).once_differentiable


# ---- mark_dirty --------------------------------------------------------------------------------------------------
def _dirty(lib):
    class Dirty(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Dirty


def test_mark_dirty_rebases_the_input():
    def f(lib):
        a = lib.tensor([1., 2.], requires_grad=True)
        b = a * 1
        c = _dirty(lib).apply(b)
        (b * b).sum().backward()
        return [a.grad, c is b, type(b.grad_fn).__name__, b.grad_fn.name(), b._version, c]
    check(f)


def test_mark_dirty_output_used():
    def f(lib):
        a = lib.tensor([1., 2.], requires_grad=True)
        c = _dirty(lib).apply(a * 1)
        (c * c).sum().backward()
        return [c, a.grad, c._version]
    check(f)


def test_mark_dirty_on_a_leaf_is_refused():
    check(lambda lib: _dirty(lib).apply(lib.tensor([1., 2.], requires_grad=True)))
    check(lambda lib: _dirty(lib).apply(lib.tensor([1., 2., 3.], requires_grad=True)[1:]))
    check(lambda lib: [_dirty(lib).apply(lib.tensor([1., 2.])), lib.tensor([1.]).requires_grad])


def test_mark_dirty_on_a_view():
    def f(lib):
        a = lib.tensor([1., 2., 3.], requires_grad=True)
        b = a * 1
        _dirty(lib).apply(b[1:])
        (b * b).sum().backward()
        return [b, a.grad]
    check(f)


# ---- once_differentiable -------------------------------------------------------------------------------------------
def _cube(lib, log=None):
    od = _od(lib)

    class OD(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @od
        def backward(ctx, g):
            if log is not None:
                log.append(lib.is_grad_enabled())
            x, = ctx.saved_tensors
            return g * 3 * x ** 2
    return OD


def test_once_differentiable_part_is_constant():
    def f(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        y = (_cube(lib).apply(x) + x ** 2).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        return [g, lib.autograd.grad(g.sum(), x)]
    check(f)


def test_once_differentiable_alone_has_no_graph():
    def f(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        log = []
        g, = lib.autograd.grad(_cube(lib, log).apply(x).sum(), x, create_graph=True)
        out = [g, g.requires_grad, g.grad_fn is None, log]
        try:
            lib.autograd.grad(g.sum(), x)
        except RuntimeError as e:
            out.append(str(e))
        return out
    check(f)


def test_once_differentiable_second_backward_raises():
    def f(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        y = _cube(lib).apply(x)
        g, = lib.autograd.grad(y, x, lib.ones(2, requires_grad=True), create_graph=True)
        assert g.requires_grad and g.grad_fn.name() == "torch::autograd::Error"
        g.sum().backward()
    check(f)


# ---- jvp staticmethod: forward AD and torch.func ----------------------------------------------------------------------
def _s(lib, log=None):
    class S(lib.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x.exp() * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y * 10, None

        @staticmethod
        def jvp(ctx, t, tk):
            if log is not None:
                log.append(tk)
            y, = ctx.saved_tensors
            return t * y * 100
    return S


def test_forward_ad_uses_the_jvp_staticmethod():
    def f(lib):
        fw = lib.autograd.forward_ad
        log = []
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([0., 1.]), lib.ones(2))
            y = _s(lib, log).apply(d, 2.0)
            p, t = fw.unpack_dual(y)
            return [p, t, log]
    check(f)


def test_forward_ad_tangents_passed_to_jvp():
    def f(lib):
        log = []

        class J(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                ctx.save_for_forward(x)
                ctx.save_for_backward(y)
                return x * y * k

            @staticmethod
            def jvp(ctx, tx, ty, tk):
                log.extend([tx, ty, tk, ctx.saved_tensors])
                return tx * 10 + ty

            @staticmethod
            def backward(ctx, g):
                return g, g, None
        fw = lib.autograd.forward_ad
        x = lib.tensor([1.], requires_grad=True)
        with fw.dual_level():
            y = J.apply(fw.make_dual(x * 1, lib.tensor([1.])), lib.tensor([3.]), 2.)
            t = fw.unpack_dual(y).tangent
            y.sum().backward()
            return [t, log, type(y.grad_fn).__name__, x.grad]
    check(f)


def test_forward_ad_without_jvp_raises():
    def f(lib):
        class NJ(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            return NJ.apply(fw.make_dual(lib.tensor([1.]), lib.tensor([1.])))
    check(f)


def test_forward_ad_jvp_wrong_count():
    def f(lib):
        class J3(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def jvp(ctx, tx):
                return tx * 10, tx

            @staticmethod
            def backward(ctx, g):
                return g
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            return J3.apply(fw.make_dual(lib.tensor([1.]), lib.tensor([1.])))
    check(f)


def test_func_jvp_uses_the_jvp_staticmethod():
    check(lambda lib: lib.func.jvp(lambda a: _s(lib).apply(a, 2.0), (lib.tensor([0., 1.]),), (lib.ones(2),)))


def test_func_grad_and_jacrev_still_use_backward():
    check(lambda lib: [lib.func.grad(lambda a: _s(lib).apply(a, 2.0).sum())(lib.tensor([0., 1.])),
                       lib.func.jacrev(lambda a: _s(lib).apply(a, 2.0))(lib.tensor([0., 1.]))])


def test_func_jvp_without_jvp_raises():
    def f(lib):
        class NJ2(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, i, o):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return lib.func.jvp(NJ2.apply, (lib.tensor([1.]),), (lib.tensor([1.]),))
    check(f)


def test_jacfwd_needs_vmap_support():
    check(lambda lib: lib.func.jacfwd(lambda a: _s(lib).apply(a, 2.0))(lib.tensor([0., 1.])))


def test_jacfwd_with_generated_vmap_rule():
    def f(lib):
        class SCV(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x):
                return x.sin()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def jvp(ctx, t):
                x, = ctx.saved_tensors
                return t * x.cos() * 3
        return lib.func.jacfwd(SCV.apply)(lib.tensor([0.1, 0.2]))
    check(f)


# ---- vmap staticmethod ---------------------------------------------------------------------------------------------
def test_vmap_staticmethod_out_dims_none():
    def f(lib):
        log = []

        class C(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vmap(info, in_dims, x):
                log.append((info.batch_size, info.randomness, in_dims))
                return x.sum(0), None
        return [lib.func.vmap(C.apply)(lib.arange(6.).reshape(3, 2)), log]
    check(f)


def test_vmap_staticmethod_in_dims():
    def f(lib):
        log = []

        class VM(lib.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * y, x.sum()

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g1, g2):
                return g1, g1

            @staticmethod
            def vmap(info, in_dims, x, y):
                log.append((info.batch_size, info.randomness, in_dims))
                xd, yd = in_dims
                x = x.movedim(xd, 0) if xd is not None else x.unsqueeze(0).expand(info.batch_size, *x.shape)
                return (x * y * 10, x.sum(1)), (0, 0)
        out = lib.func.vmap(VM.apply, in_dims=(None, 0), randomness="same")(lib.tensor([1., 2.]),
                                                                           lib.arange(6.).reshape(3, 2))
        return [out, log]
    check(f)


def test_old_style_function_under_vmap():
    def f(lib):
        class Old(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        return lib.func.vmap(Old.apply)(lib.ones(2, 2))
    check(f)


# ---- non-tensor outputs and inputs ---------------------------------------------------------------------------------
def test_non_tensor_outputs_get_none_gradients():
    def f(lib):
        log = []

        class NT(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, 5, "str"

            @staticmethod
            def backward(ctx, g, g2, g3):
                log.extend([g2, g3])
                return g
        x = lib.tensor([1., 2.], requires_grad=True)
        a, b, c = NT.apply(x)
        a.sum().backward()
        return [x.grad, b, c, type(a.grad_fn).__name__, log]
    check(f)


def test_non_tensor_outputs_numbering():
    def f(lib):
        log = []

        class NT2(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 5, x * 2, None, x * 3

            @staticmethod
            def backward(ctx, *gs):
                log.append(list(gs))
                return gs[1] + gs[3]
        x = lib.tensor([1., 2.], requires_grad=True)
        a, b, c, d = NT2.apply(x)
        (b * 2).sum().backward()
        return [x.grad, a, c, b.output_nr, d.output_nr, log]
    check(f)


def test_gradient_for_a_non_tensor_input_is_refused():
    def f(lib):
        class G(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k):
                return a * k

            @staticmethod
            def backward(ctx, g):
                return g, g
        a = lib.tensor([1.], requires_grad=True)
        G.apply(a, 2.0).sum().backward()
    check(f)


def test_non_tensor_gradient_for_a_tensor_input_is_refused():
    def f(lib):
        class G(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                return g, 3.0
        G.apply(lib.tensor([1.], requires_grad=True), lib.tensor([1.])).sum().backward()
    check(f)


# ---- saved tensors -------------------------------------------------------------------------------------------------
def _save(lib, extra):
    class S(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, extra)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g
    return S


def test_save_for_backward_non_tensor():
    check(lambda lib: _save(lib, 3).apply(lib.tensor([1.], requires_grad=True)))
    check(lambda lib: _save(lib, "a").apply(lib.tensor([1.], requires_grad=True)))


def _save_out(lib):
    class SaveOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            y = a.exp()
            ctx.save_for_backward(y)
            ctx.k = 3
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y
    return SaveOut


def test_saved_tensors_freed_after_backward():
    def f(lib):
        a = lib.tensor([1., 2.], requires_grad=True)
        y = _save_out(lib).apply(a)
        y.sum().backward()
        y.sum().backward()
    check(f)


def test_saved_tensors_retain_graph_and_access_after_free():
    def f(lib):
        a = lib.tensor([1., 2.], requires_grad=True)
        y = _save_out(lib).apply(a)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        out = [a.grad, y.grad_fn.k]
        try:
            y.grad_fn.saved_tensors
        except RuntimeError as e:
            out.append(str(e))
        return out
    check(f)


def test_saved_input_modified_message():
    def f(lib):
        class C(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a.clone()

            @staticmethod
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return g * a
        a = lib.tensor([1., 2.], requires_grad=True)
        b = a + 1
        y = C.apply(b)
        b.add_(1)
        y.sum().backward()
    check(f)


# ---- apply's keyword arguments -------------------------------------------------------------------------------------
def test_apply_keyword_arguments():
    def fns(lib):
        class K1(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=1):
                return x * k

        class K2(lib.autograd.Function):
            @staticmethod
            def forward(x, k=1):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

        class K3(lib.autograd.Function):
            @staticmethod
            def forward(x, *, k=1):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

        class K4(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, *, k=1):
                return x * k
        return K1, K2, K3, K4
    for i in range(4):
        check(lambda lib: fns(lib)[i].apply(lib.tensor([1.]), k=3))
        check(lambda lib: fns(lib)[i].apply(lib.tensor([1.], requires_grad=True), z=3))
    check(lambda lib: fns(lib)[1].apply(lib.tensor([1.])))


# ---- in-place on a Function's view outputs -------------------------------------------------------------------------
def test_inplace_on_a_view_output_is_refused():
    def fns(lib):
        class ViewOut(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.view(-1)

            @staticmethod
            def backward(ctx, g):
                return g

        class RetInput(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 5
        return ViewOut, RetInput

    def f(lib, k, leaf):
        a = lib.tensor([1., 2.], requires_grad=True)
        fns(lib)[k].apply(a if leaf else a * 1).mul_(2)
    for k in range(2):
        for leaf in (False, True):
            check(lambda lib: f(lib, k, leaf))


def test_vmap_staticmethod_with_grad():
    """grad inside vmap: the backward gives the gradient (the forward runs through the vmap rule); grad outside
    vmap: the rule's own operations are differentiated (torch.func's transform order)."""
    def f(lib):
        log = []

        class C(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 3

            @staticmethod
            def vmap(info, in_dims, x):
                log.append(in_dims)
                return x * 5, in_dims[0]
        x = lib.arange(6.).reshape(3, 2)
        vg = lib.func.vmap(lib.func.grad(lambda a: C.apply(a).sum()))(x)
        gv = lib.func.grad(lambda a: lib.func.vmap(C.apply)(a).sum())(x)
        vv = lib.func.vmap(lib.func.vmap(C.apply))(x)
        return [vg, gv, vv, len(log) > 0]
    check(f)


def test_setup_context_inputs_include_defaults():
    def f(lib):
        log = []

        class K(lib.autograd.Function):
            @staticmethod
            def forward(x, k=2.0, *, m=1):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                log.append(len(inputs))
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None
        x = lib.tensor([1.], requires_grad=True)
        K.apply(x).sum().backward()
        K.apply(x, 3.0).sum().backward()
        return [x.grad, log]
    check(f)


def test_jvp_and_vmap_staticmethods_under_nested_transforms():
    def f(lib):
        class C(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 3

            @staticmethod
            def jvp(ctx, t):
                return t * 7

            @staticmethod
            def vmap(info, in_dims, x):
                return x * 5, in_dims[0]
        tf = lib.func
        x, t = lib.arange(6.).reshape(3, 2), lib.ones(3, 2)
        return [tf.jvp(tf.vmap(C.apply), (x,), (t,)),
                tf.vmap(lambda a, b: tf.jvp(C.apply, (a,), (b,)))(x, t),
                tf.jacfwd(C.apply)(x[0]),
                tf.grad(lambda a: tf.jvp(C.apply, (a,), (a,))[1].sum())(x[0]),
                tf.jvp(tf.grad(lambda a: C.apply(a).sum()), (x[0],), (x[0],)),
                tf.hessian(lambda a: C.apply(a).sum())(x[0])]
    check(f)


def test_full_backward_hook_node_name_and_inplace_error():
    """A module with a full backward hook wraps its outputs in torch's ``BackwardHookFunction``: its node's name,
    and the in-place error an ``inplace=True`` activation then gets, name it as torch's do."""
    def go(lib):
        m = lib.nn.ReLU(inplace=True)
        m.register_full_backward_hook(lambda *a: None)
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True) * 1
        try:
            m(x)
            err = None
        except RuntimeError as e:
            err = str(e)
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda *a: None)
        o = lin(lib.ones(1, 2, requires_grad=True))
        return err, type(o.grad_fn).__name__, o.grad_fn.name()
    r = go(ft)
    assert r == go(torch)
    assert r[0].startswith("Output 0 of BackwardHookFunction is a view and is being modified inplace")
