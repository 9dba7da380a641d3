"""Parity of ``autograd.forward_ad`` with ``torch.autograd.forward_ad``: the same programs run with dual tensors in
both libraries (float64, numpy in), primals and tangents compared; views and in-place ops carrying tangents; the
API's errors (type and message); agreement with ``func.jvp``."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import functorch_lite as ft
import functorch_lite.autograd.forward_ad as ffw

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 2))
TA = RNG.standard_normal((3, 4))
TB = RNG.standard_normal((4, 2))
LIBS = ((torch, tfw), (ft, ffw))


def _t(lib, a):
    return lib.tensor(a, dtype=lib.float64)


def _np(t):
    return None if t is None else t.detach().numpy()


def _run(prog):
    """``prog(lib, fw)`` -> list of dual tensors, in both libraries: their (primal, tangent) as numpy, compared."""
    got = []
    for lib, fw in LIBS:
        with fw.dual_level():
            outs = prog(lib, fw)
            got.append([(o.dtype, tuple(o.shape), _np(fw.unpack_dual(o).primal), _np(fw.unpack_dual(o).tangent))
                        for o in outs])
    for k, ((dt, shp, p, t), (fdt, fshp, fp, ft_)) in enumerate(zip(*got)):
        assert str(fdt) == str(dt) and fshp == shp, k
        np.testing.assert_allclose(fp, p, rtol=1e-12, atol=1e-12, err_msg=f"primal {k}")
        if t is None:
            assert ft_ is None, f"tangent {k}: expected None"
        else:
            assert ft_ is not None, f"tangent {k}: None"
            np.testing.assert_allclose(ft_, t, rtol=1e-10, atol=1e-12, err_msg=f"tangent {k}")
    return got


def test_elementwise_matmul_reductions_softmax_match_torch():
    def prog(lib, fw):
        a = fw.make_dual(_t(lib, A), _t(lib, TA))
        b = fw.make_dual(_t(lib, B), _t(lib, TB))
        e = a.sin() * a
        return [e, a @ b, e.sum(1), a.amax(0), lib.nn.functional.softmax(a, 1), a.floor(), a.argmax()]
    got = _run(prog)
    assert got[1][-1][3] is None and got[1][-2][3] is not None  # argmax: no tangent; floor: zeros, as torch


def test_linear_gelu_mlp_matches_torch():
    w1, b1, w2, b2 = RNG.standard_normal((5, 4)), RNG.standard_normal(5), RNG.standard_normal((2, 5)), \
        RNG.standard_normal(2)
    tw = RNG.standard_normal((5, 4))

    def prog(lib, fw):
        m = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.GELU(), lib.nn.Linear(5, 2))
        m = m.double()
        with lib.no_grad():
            for p, v in zip(m.parameters(), (w1, b1, w2, b2)):
                p.copy_(_t(lib, v))
        x = fw.make_dual(_t(lib, A), _t(lib, TA))
        y = m(x)
        # a dual weight through functional linear (the parameter itself requires grad: backward still works)
        wd = fw.make_dual(m[0].weight, _t(lib, tw))
        z = lib.nn.functional.gelu(lib.nn.functional.linear(_t(lib, A), wd, m[0].bias))
        z.sum().backward()
        return [y, z, m[0].weight.grad]
    got = _run(prog)
    assert got[1][2][3] is None  # .grad of the primal weight: no tangent


def test_views_and_inplace_carry_tangents_as_torch():
    def prog(lib, fw):
        x = _t(lib, A[0])  # 4 values
        d = fw.make_dual(x, _t(lib, TA[0]))
        z = lib.zeros(4, dtype=lib.float64)
        z[1:] = d[:3]                                   # setitem of a dual into a plain tensor: z gets a tangent
        w = lib.zeros(4, dtype=lib.float64)
        early = w[:2]                                   # a view made before its base had a tangent
        w.mul_(2)
        w.add_(d)
        base = lib.zeros(2, 4, dtype=lib.float64)
        db = fw.make_dual(base, _t(lib, TA[:2]))
        row = db[0]
        row.mul_(5.0)                                   # in-place through a view of a dual: the dual's tangent
        t = db.t()                                      # a transposed view has the transposed tangent
        parts = db.unbind(1)
        c = d.clone()
        c.mul_(d.exp())                                 # in-place: both operands' tangents
        c2 = c.view(2, 2)[1]
        e = lib.zeros(3, dtype=lib.float64)
        ev = e[1:]
        ev.add_(d[1:3])                                 # a view of a plain base: the base gets a zero-padded tangent
        return [d, z, early, w, db, base, row, t, parts[0], parts[3], c, c2, e, ev, d.detach(),
                fw.unpack_dual(d).primal]
    got = _run(prog)
    assert [g[3] is None for g in got[1]][5] and got[1][-1][3] is None and got[1][-2][3] is None


def test_api_errors_and_level_lifecycle_match_torch():
    def errors(lib, fw):
        x, t = _t(lib, A[0]), _t(lib, TA[0])
        msgs = []

        def grab(f):
            try:
                f()
                msgs.append(None)
            except Exception as e:  # noqa: BLE001
                msgs.append((type(e).__name__, str(e)))
        grab(lambda: fw.make_dual(x, t))                                        # no level
        grab(lambda: fw.exit_dual_level())
        with fw.dual_level() as lvl:
            msgs.append(lvl)
            grab(lambda: fw.enter_dual_level())                                 # nested
            grab(lambda: fw.make_dual(x, lib.ones(5, dtype=lib.float64)))       # size
            grab(lambda: fw.make_dual(x, lib.ones(4, dtype=lib.int64)))         # tangent dtype
            grab(lambda: fw.make_dual(lib.arange(4), lib.arange(4)))            # primal dtype
            grab(lambda: fw.make_dual(x, t, level=3))
            d = fw.make_dual(x, t)
            grab(lambda: fw.make_dual(d, t))                                    # already dual
            grab(lambda: fw.unpack_dual(d, level=2))
            u = fw.unpack_dual(x)
            msgs.append((type(u).__name__, u._fields, u.tangent is None, u.primal is x))
            msgs.append(d._is_view() and d._base is x)
            msgs.append(type(d.mul(2).sum().grad_fn).__name__ if x.requires_grad else None)
        msgs.append(fw.unpack_dual(d).tangent is None)                          # dropped at exit
        grab(lambda: fw.exit_dual_level(level=0))
        msgs.append(fw.enter_dual_level())
        fw.exit_dual_level()
        return msgs
    theirs, ours = errors(torch, tfw), errors(ft, ffw)
    assert ours == theirs
    # decorator form
    for lib, fw in LIBS:
        @fw.dual_level()
        def f():
            return fw.unpack_dual(fw.make_dual(_t(lib, A[0]), _t(lib, TA[0])).cos()).tangent.numpy()
        np.testing.assert_allclose(f(), -np.sin(A[0]) * TA[0])


def test_agrees_with_func_jvp_and_backward_through_a_dual():
    def f(a):
        return ft.nn.functional.softmax(a, 1) * a
    a, ta = _t(ft, A), _t(ft, TA)
    out, jt = ft.func.jvp(f, (a,), (ta,))
    with ffw.dual_level():
        p, t = ffw.unpack_dual(f(ffw.make_dual(a, ta)))
        np.testing.assert_allclose(p.numpy(), out.numpy(), rtol=1e-12)
        np.testing.assert_allclose(t.numpy(), jt.numpy(), rtol=1e-10, atol=1e-12)
    # a dual of a tensor that requires grad: ViewBackward0, and backward reaches the primal
    grads = []
    for lib, fw in LIBS:
        x = _t(lib, A).requires_grad_()
        with fw.dual_level():
            d = fw.make_dual(x, _t(lib, TA))
            assert type(d.grad_fn).__name__ == "ViewBackward0"
            (d.sin() * 2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_tangent_of_other_dtype_and_type_errors():
    for lib, fw in LIBS:
        with fw.dual_level():
            d = fw.make_dual(_t(lib, A[0]), lib.tensor(TA[0], dtype=lib.float32))
            y = d * 3  # the tangent joins the op in the primal's dtype
            assert str(fw.unpack_dual(y).tangent.dtype).endswith("float64")
            np.testing.assert_allclose(fw.unpack_dual(y).tangent.numpy(), 3 * TA[0].astype(np.float32), rtol=1e-7)
            with pytest.raises(TypeError, match=re.escape("_unpack_dual(): argument 'dual' (position 1) must be "
                                                          "Tensor, not float")):
                fw.unpack_dual(3.0)
