"""torch.func parity against real PyTorch 2.13 (red-team findings): in-place writes inside the transforms. Under
grad / vjp / jvp / jac* / hessian a BatchNorm module in training mode (its ``num_batches_tracked.add_(1)``) and an
embedding's ``max_norm`` renorm of a captured weight raise torch's "would mutate a captured Tensor" (the module's
state unchanged, never written twice); a library write torch allows (functional ``batch_norm``'s running
statistics) happens once; a write into a transformed argument (under ``no_grad``, through ``detach()``, ``jvp``'s
``a.mul_(2)``) reaches the caller's tensor. Under vmap a batched value written into a captured tensor raises
torch's error for the op (BatchNorm's own message too); ``in_dims`` leaves that are not ints; ``has_aux``'s first
bad leaf in torch's (insertion) order."""
import pytest
import torch

import functorch_lite as ft
from _parity import same_rounded


def same(fn):
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same values or raise the same error type and message."""
    return same_rounded(fn, torch, ft)


_TRANSFORMS = {
    "grad": lambda t, f, x: t.func.grad(lambda a: f(a).sum())(x),
    "vjp": lambda t, f, x: t.func.vjp(f, x)[0],
    "jvp": lambda t, f, x: t.func.jvp(f, (x,), (t.ones_like(x),))[1],
    "jacrev": lambda t, f, x: t.func.jacrev(f)(x),
    "jacfwd": lambda t, f, x: t.func.jacfwd(f)(x),
    "hessian": lambda t, f, x: t.func.hessian(lambda a: f(a).sum())(x),
}


@pytest.mark.parametrize("tr", sorted(_TRANSFORMS))
@pytest.mark.parametrize("affine", [True, False])
def test_batchnorm_training_refused(tr, affine):
    def fn(t):
        m = t.nn.BatchNorm1d(3, affine=affine)
        x = t.arange(12.).view(4, 3).sin()
        try:
            _TRANSFORMS[tr](t, m, x)
            res = "ok"
        except RuntimeError as e:
            res = str(e)
        return [res, m.running_mean, m.running_var, m.num_batches_tracked.item()]
    assert "mutate a captured Tensor" in same(fn)[1][0]


@pytest.mark.parametrize("tr", ["grad", "vjp", "jvp"])
def test_functional_call_batchnorm_refused(tr):
    def fn(t):
        m = t.nn.BatchNorm1d(3)
        p = dict(m.named_parameters())
        x = t.arange(12.).view(4, 3).cos()
        f = {"grad": lambda: t.func.grad(lambda q: t.func.functional_call(m, q, (x,)).pow(2).sum())(p),
             "vjp": lambda: t.func.vjp(lambda q: t.func.functional_call(m, q, (x,)), p),
             "jvp": lambda: t.func.jvp(lambda a: m(a), (x,), (x,))}[tr]
        f()
    same(fn)


def test_functional_batch_norm_stats_written_once():
    """torch's batch_norm kernel updates captured running statistics (not refused), once, also where a captured
    tensor requiring grad makes the call a recorded one (run twice)."""
    def fn(t):
        x = t.arange(12.).view(4, 3)
        rm, rv = t.zeros(3), t.ones(3)
        w = t.ones(3, requires_grad=True)
        g = t.func.grad(lambda a: t.nn.functional.batch_norm(x, rm, rv, w * a, training=True).pow(3).sum())(
            t.ones(3))
        rm2, rv2 = t.zeros(3), t.ones(3)
        t.func.vjp(lambda a: t.nn.functional.batch_norm(x, rm2, rv2, a, training=True), t.ones(3))
        return [g.abs(), rm, rv, rm2, rv2]
    same(fn)


@pytest.mark.parametrize("case", ["embedding_grad", "embedding_bag_grad", "embedding_jvp", "module"])
def test_embedding_max_norm_captured_refused(case):
    def fn(t):
        w = t.ones(5, 2) * 3
        i = t.tensor([0, 1])
        emb = t.nn.Embedding(5, 2, max_norm=1.0)
        with t.no_grad():
            emb.weight.fill_(3.)
        f = {"embedding_grad": lambda s: (t.nn.functional.embedding(i, w, max_norm=1.0) * s).sum(),
             "embedding_bag_grad": lambda s: (t.nn.functional.embedding_bag(i.view(1, 2), w, max_norm=1.0) * s).sum(),
             "embedding_jvp": None,
             "module": lambda s: (emb(i) * s).sum()}[case]
        try:
            if f is None:
                t.func.jvp(lambda s: (t.nn.functional.embedding(i, w, max_norm=1.0) * s).sum(), (t.tensor(2.),),
                           (t.tensor(1.),))
            else:
                t.func.grad(f)(t.tensor(2.))
            res = "ok"
        except RuntimeError as e:
            res = str(e)
        return [res, w, emb.weight]
    assert "aten::embedding_renorm_" in same(fn)[1][0]


def test_embedding_max_norm_on_argument_allowed():
    same(lambda t: (t.func.grad(lambda w: t.nn.functional.embedding(t.tensor([0, 1]), w, max_norm=1.0).sum())(
        t.ones(5, 2) * 3), ))


def test_captured_user_writes_refused():
    def fn(t):
        out = []
        for op in (lambda o, a: o.add_(a), lambda o, a: o.mul_(2), lambda o, a: o.copy_(a),
                   lambda o, a: o.__setitem__(0, a[0])):
            outer = t.tensor([1., 2., 3.])

            def f(a, op=op, outer=outer):
                op(outer, a)
                return (a * a).sum()
            try:
                t.func.grad(f)(t.tensor([1., 2., 3.]))
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e))
            out.append(outer)
        return out
    same(fn)


def _clamp(t):
    def f(a):
        with t.no_grad():
            a.clamp_(max=2.0)
        return (a * a).sum()
    return f


def _detach_mul(t):
    return lambda a: (a.detach().mul_(2), (a * a).sum())[1]


def _view_mul(t):
    return lambda a: (a.detach()[1:].mul_(2), (a * a).sum())[1]


def _data_mul(t):
    return lambda a: (a.data.mul_(2), (a * a).sum())[1]


_ARG_TRANSFORMS = {
    "grad": lambda t, f, a: t.func.grad(f)(a),
    "grad_and_value": lambda t, f, a: t.func.grad_and_value(f)(a),
    "vjp": lambda t, f, a: t.func.vjp(f, a)[0],
    "jvp": lambda t, f, a: t.func.jvp(f, (a,), (t.ones(3),)),
    "jacrev": lambda t, f, a: t.func.jacrev(f)(a),
    "jacfwd": lambda t, f, a: t.func.jacfwd(f)(a),
}


@pytest.mark.parametrize("tr", sorted(_ARG_TRANSFORMS))
@pytest.mark.parametrize("write", [_clamp, _detach_mul, _view_mul, _data_mul])
def test_write_into_argument_reaches_caller(tr, write):
    def fn(t):
        a = t.tensor([1., 2., 3.])
        return [_ARG_TRANSFORMS[tr](t, write(t), a), a]
    same(fn)


def test_write_into_argument_more():
    def fn(t):
        a = t.tensor([1., 2., 3.])
        r1 = t.func.jvp(lambda q: q.mul_(2), (a,), (t.ones(3),))
        d = {"v": t.tensor([1., 2., 3.]), "u": t.tensor([1., 2., 3.])}
        r2 = t.func.grad(lambda p: (p["u"].detach().mul_(2), (p["u"] * p["v"]).sum())[1])(d)
        b = t.arange(6.).view(2, 3)
        r3 = t.func.grad(lambda q: (q.detach().mul_(2), (q * q).sum())[1])(b[1])
        c = t.tensor([1., 2., 3.], requires_grad=True)
        r4 = t.func.grad(lambda q: (q.detach().mul_(2), (q * q).sum())[1])(c)
        return [r1, a, r2["u"], r2["v"], d["u"], d["v"], r3, b, r4, c.detach(), c._version]
    same(fn)


_VMAP_CAPTURED = {
    "copy_": lambda o, x: o.copy_(x),
    "add_": lambda o, x: o.add_(x),
    "iadd": lambda o, x: o.__iadd__(x),
    "mul_": lambda o, x: o.mul_(x),
    "sub_": lambda o, x: o.sub_(x),
    "div_": lambda o, x: o.div_(x),
    "setitem_slice": lambda o, x: o.__setitem__(slice(0, 2), x[:2]),
    "setitem_int": lambda o, x: o.__setitem__(1, x[0]),
    "index_put_": lambda o, x: o.index_put_((o.new_tensor([0, 1]).long(),), x[:2]),
    "fill_": lambda o, x: o.fill_(x[0]),
    "index_add_": lambda o, x: o.index_add_(0, o.new_tensor([0, 1]).long(), x[:2]),
    "masked_fill_value": lambda o, x: o.masked_fill_(o > 0, x[0]),
    "masked_fill_mask": lambda o, x: o.masked_fill_(x > 5, 1.0),
    "addcmul_": lambda o, x: o.addcmul_(x, x),
    "clamp_": lambda o, x: o.clamp_(min=x),
    "pow_": lambda o, x: o.pow_(x),
    "masked_scatter_": lambda o, x: o.masked_scatter_(o > 0, x),
}


@pytest.mark.parametrize("case", sorted(_VMAP_CAPTURED))
def test_vmap_batched_write_into_captured(case):
    def fn(t):
        outer = t.ones(4)
        a = t.arange(1., 13.).view(3, 4)
        try:
            t.func.vmap(lambda x: _VMAP_CAPTURED[case](outer, x))(a)
            res = "ok"
        except RuntimeError as e:
            res = str(e)
        return [res, outer]
    assert same(fn)[1][0] != "ok"


def test_vmap_unbatched_write_into_captured_allowed():
    def fn(t):
        outer = t.zeros(4)
        r = t.func.vmap(lambda x: (outer.add_(1), x * 2)[1])(t.arange(12.).view(3, 4))
        return [r, outer]
    same(fn)


def test_vmap_in_dims_none_argument_written():
    def fn(t):
        buf = t.zeros(4)
        t.func.vmap(lambda x, b: b.copy_(x), in_dims=(0, None))(t.arange(12.).view(3, 4), buf)
    same(fn)


@pytest.mark.parametrize("case", ["module", "functional", "embedding", "embedding_bag"])
def test_vmap_library_writes_into_captured(case):
    def fn(t):
        x = t.arange(24.).view(3, 2, 4).sin()
        w = t.ones(5, 2) * 3
        bn = t.nn.BatchNorm1d(4)
        rm = t.zeros(4)
        f = {"module": lambda: t.func.vmap(bn)(x),
             "functional": lambda: t.func.vmap(lambda a: t.nn.functional.batch_norm(a, rm, t.ones(4),
                                                                                     training=True))(x),
             "embedding": lambda: t.func.vmap(lambda i: t.nn.functional.embedding(i, w, max_norm=1.0))(
                 t.tensor([[0], [1]])),
             "embedding_bag": lambda: t.func.vmap(lambda i: t.nn.functional.embedding_bag(i, w, max_norm=1.0))(
                 t.tensor([[[0]], [[1]]]))}[case]
        try:
            f()
            res = "ok"
        except RuntimeError as e:
            res = str(e)
        return [res, bn.running_mean, rm, w]
    assert same(fn)[1][0] != "ok"


def test_vmap_nested_captured_write():
    def fn(t):
        outer = t.zeros(4)
        t.func.vmap(t.func.vmap(lambda x: outer.copy_(x)))(t.ones(2, 3, 4))
    same(fn)


def test_vmap_batched_self_writes_allowed():
    def fn(t):
        a = t.arange(12.).view(3, 4)
        r1 = t.func.vmap(lambda x: x.clone().add_(1))(a)
        r2 = t.func.vmap(lambda x: t.zeros(4).add_(t.ones(4)) + x)(a)
        r3 = t.func.vmap(lambda x: t.zeros_like(x).copy_(x))(a)
        r4 = t.func.vmap(lambda x: x.new_zeros(4).copy_(x))(a)
        return [r1, r2, r3, r4]
    same(fn)


@pytest.mark.parametrize("in_dims", [(0.0, None), ((0.0,), None), ("a", None), 0.0])
def test_vmap_in_dims_not_int(in_dims):
    a = (lambda t: (t.ones(3, 2),)) if isinstance(in_dims, tuple) and isinstance(in_dims[0], tuple) else (lambda t: t.ones(3, 2))
    same(lambda t: t.func.vmap(t.mul, in_dims=in_dims)(a(t), 2.))


def test_grad_aux_first_bad_leaf_in_insertion_order():
    same(lambda t: t.func.grad(lambda x: (x.sum(), {"b": "s", "a": None}), has_aux=True)(t.ones(3)))
    same(lambda t: t.func.grad(lambda x: (x.sum(), {"b": None, "a": "s"}), has_aux=True)(t.ones(3)))
    same(lambda t: t.func.grad(lambda x: (x.sum(), [x, {"z": 1, "a": "s"}]), has_aux=True)(t.ones(3)))


def test_vmap_unbatched_writes_per_chunk_and_once_when_recorded():
    """Each chunk runs the function (torch: an unbatched ``add_`` per chunk); a recorded call (a captured tensor
    requiring grad: run again under jax.vjp) writes once."""
    def fn(t):
        o = t.zeros(2)
        t.func.vmap(lambda x: (o.add_(1), x * 2)[1], chunk_size=2)(t.ones(5, 3))
        w = t.ones(2, requires_grad=True)
        o2 = t.zeros(2)
        r = t.func.vmap(lambda x: (o2.add_(1), x * w.sum())[1])(t.ones(5, 3))
        return [o, o2, r, r.requires_grad]
    same(fn)
