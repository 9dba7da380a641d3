"""torch.func / torch.autograd.functional cases against real torch, each failing before its fix:
``F.embedding(max_norm=)``'s renorm is not differentiated under ``func.grad``/``jvp``; ``func.linearize`` on
the tape (captured tensors that require grad get their gradient through the output, ``jvp_fn``'s result
through the tangents); ``autograd.functional.jacobian(vectorize=True)`` over an in-place op; an in-place op on a
captured tensor inside a differentiating transform raises torch's error and leaves it unchanged; ``jvp``'s
tangent dtype is ``promote_types(primal, tangent)``."""

import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

LIBS = (torch, ft)
EMB_W = np.array([[3., 4.], [.3, .4], [1., 1.]], np.float32)


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _same(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol)


# ---- 1. embedding max_norm under func transforms ------------------------------------------------------------
def test_embedding_max_norm_renorm_not_differentiated_under_grad():
    res = []
    for L in LIBS:
        F = L.nn.functional
        idx = L.tensor([0, 1])
        g1 = L.func.grad(lambda w: F.embedding(idx, w, max_norm=1.0).sum())(L.tensor(EMB_W))
        g2 = L.func.grad(lambda w: (F.embedding(idx, w, max_norm=1.0) * w[:2]).sum())(L.tensor(EMB_W))
        gv = L.func.vmap(L.func.grad(lambda w: F.embedding(idx, w, max_norm=1.0).pow(2).sum()))(
            L.tensor(np.stack([EMB_W, 2 * EMB_W])))
        res.append((g1, g2, gv))
    for a, b in zip(*res):
        _same(a, b)


def test_embedding_max_norm_renorm_not_differentiated_under_jvp():
    res = []
    for L in LIBS:
        F = L.nn.functional
        out, tan = L.func.jvp(lambda w: F.embedding(L.tensor([0, 1]), w, max_norm=1.0).sum(), (L.tensor(EMB_W),),
                              (L.ones(3, 2),))
        res.append((out, tan))
    for a, b in zip(*res):
        _same(a, b)


# ---- 2. linearize on the tape --------------------------------------------------------------------------------
def test_linearize_output_reaches_captured_tensor():
    res = []
    for L in LIBS:
        w = L.tensor([1., 2.], requires_grad=True)
        out, fn = L.func.linearize(lambda z: (z * w).sin(), L.tensor([.5, .5]))
        (fn(L.ones(2)).sum() + out.sum() + (w ** 2).sum()).backward()
        res.append((out, w.grad))
    for a, b in zip(*res):
        _same(a, b)


def test_linearize_jvp_fn_backward_alone_and_primal_gradient():
    res = []
    for L in LIBS:
        w = L.tensor([1., 2.], requires_grad=True)
        z = L.tensor([.5, .25], requires_grad=True)
        out, fn = L.func.linearize(lambda z: (z * w).sin(), z)
        r = fn(L.ones(2))
        assert r.requires_grad
        r.sum().backward()                      # torch: works, the gradient reaches neither w nor z
        assert w.grad is None and z.grad is None
        out.sum().backward()
        v = L.tensor([1., -2.], requires_grad=True)
        fn(v).pow(2).sum().backward()           # through the tangent: 2 * J v * J
        res.append((r, z.grad, w.grad, v.grad))
    for a, b in zip(*res):
        _same(a, b)


# ---- 3. autograd.functional.jacobian(vectorize=True) over in-place ops -----------------------------------------
@pytest.mark.parametrize("case", ["add_", "relu_inplace", "two_inputs"])
def test_jacobian_vectorized_inplace_on_intermediate(case):
    res = []
    for L in LIBS:
        F, AF = L.nn.functional, L.autograd.functional
        x = L.tensor([1., 2., -0.5])
        if case == "add_":
            r = AF.jacobian(lambda a: (a * 2).add_(1), x, vectorize=True)
        elif case == "relu_inplace":
            r = AF.jacobian(lambda a: F.relu(a * a - 1, inplace=True), x, vectorize=True)
        else:
            r = AF.jacobian(lambda a, b: ((a * b).mul_(2), b.exp()), (x, x.flip(0)), vectorize=True)
            r = [j for row in r for j in row]
        r = list(r) if isinstance(r, list) else [r]
        assert not any(j.requires_grad for j in r)
        res.append(r)
    for a, b in zip(*res):
        _same(a, b)


# ---- 4. in-place op on a captured tensor inside a differentiating transform -----------------------------------
_CAPTURED = {
    "grad_add_": lambda L, c: L.func.grad(lambda a: (c.add_(a) * a).sum())(L.tensor([1., 2., 3.])),
    "grad_const_mul_": lambda L, c: L.func.grad(lambda a: (c.mul_(2) * a).sum())(L.tensor([1., 2., 3.])),
    "jvp_add_": lambda L, c: L.func.jvp(lambda a: c.add_(a) * a, (L.tensor([1., 2., 3.]),), (L.ones(3),)),
    "vjp_copy_": lambda L, c: L.func.vjp(lambda a: c.copy_(a) * a, L.tensor([1., 2., 3.])),
    "jacrev_setitem": lambda L, c: L.func.jacrev(lambda a: (c.__setitem__(0, 5.), a * 2)[1])(L.tensor([1., 2., 3.])),
    "jacfwd_zero_": lambda L, c: L.func.jacfwd(lambda a: (c.zero_(), a * 2)[1])(L.tensor([1., 2., 3.])),
    "grad_fill_": lambda L, c: L.func.grad(lambda a: (c[:2].fill_(3.), a.sum())[1])(L.tensor([1., 2., 3.])),
}


@pytest.mark.parametrize("name", sorted(_CAPTURED))
def test_inplace_on_captured_tensor_raises_and_leaves_it(name):
    msgs = []
    for L in LIBS:
        c = L.tensor([0.5, -1., 2.])
        with pytest.raises(RuntimeError, match="that would mutate a captured Tensor") as e:
            _CAPTURED[name](L, c)
        msgs.append(str(e.value))
        np.testing.assert_array_equal(_np(c), [0.5, -1., 2.])
    assert msgs[0] == msgs[1]


def test_inplace_on_an_argument_is_allowed_on_a_captured_tensor_refused():
    """torch wraps every argument of the call (a non-differentiated one too): writing it is fine; writing a
    tensor the function closes over is refused."""
    res = []
    for L in LIBS:
        y, c = L.zeros(3), L.zeros(3)
        g = L.func.grad(lambda x, y: (y.add_(1), (x * x).sum())[1])(L.tensor([1., 2., 3.]), y)
        with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
            L.func.grad(lambda x, y: (c.add_(x) * y).sum())(L.tensor([1., 2., 3.]), y)
        np.testing.assert_array_equal(_np(c), [0., 0., 0.])
        res.append((g, y))
    for a, b in zip(*res):
        _same(a, b)


# ---- 5. jvp's tangent dtype ------------------------------------------------------------------------------------
@pytest.mark.parametrize("pd,td", [("float32", "float64"), ("float16", "bfloat16"), ("float32", "complex64"),
                                   ("float64", "complex64"), ("bfloat16", "float32")])
def test_jvp_tangent_dtype_is_promoted(pd, td):
    res = []
    for L in LIBS:
        p = L.tensor([.3, .7, -1.2], dtype=getattr(L, pd))
        t = L.tensor([1 + 2j, 3 - 1j, .5j] if "complex" in td else [1., 3., -.5], dtype=getattr(L, td))
        o, tan = L.func.jvp(lambda a: (a * 2 + 1).sum() * 3, (p,), (t,))
        assert o.dtype == getattr(L, pd)
        res.append(tan)
    assert str(res[0].dtype) == str(res[1].dtype)
    _same(res[0], res[1], rtol=1e-2 if "16" in pd + td else 1e-5)


def test_jvp_wide_tangent_through_nonlinear_ops_and_tape():
    res = []
    for L in LIBS:
        w = L.tensor([1., 2.], requires_grad=True)
        v = L.tensor([1., -0.5], dtype=L.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            o, tan = L.func.jvp(lambda a: (a * w).sin(), (L.tensor([.5, .25]),), (v,))
        assert tan.dtype == L.float64 and o.dtype == L.float32
        tan.sum().backward()
        res.append((o, tan, w.grad, v.grad))
    for a, b in zip(*res):
        _same(a, b)
