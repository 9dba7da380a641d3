"""``torch.nn.utils`` parametrizations, weight / spectral norm (both forms), fusion, skip_init, stateless, and the
weight-norm ops against real PyTorch, with identical initial weights (copied from torch through state_dict):
values, gradients reaching ``.original``, parameter names and state_dict keys, the class swap, spectral norm's
``_u``/``_v`` after train-mode forwards, optimizer steps, one compiled training step against eager, and errors."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

R = np.random.default_rng(5)
X = R.standard_normal((2, 4)).astype(np.float32)


def _np(t):
    return t.detach().numpy()


def _copy_state(mt, mf):
    """torch's state (so random initialisations and power-iteration vectors agree) into the facade's module."""
    mf.load_state_dict({k: ft.tensor(_np(v)) for k, v in mt.state_dict().items()})


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(_np(a) if not isinstance(a, np.ndarray) else a,
                               _np(b) if not isinstance(b, np.ndarray) else b, rtol=tol, atol=tol)


def _both(build):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        mt, mf = build(torch), build(ft)
    _copy_state(mt, mf)
    return mt, mf


def _step(mt, mf, x=X, tol=1e-5):
    """Forward + backward of sum(y**2) in both; outputs and every parameter's grad compared by name."""
    out = []
    for mod, m in ((torch, mt), (ft, mf)):
        y = m(mod.tensor(x))
        (y * y).sum().backward()
        out.append((y, {k: p.grad for k, p in m.named_parameters()}))
    _close(out[0][0], out[1][0], tol)
    assert list(out[0][1]) == list(out[1][1])
    for k, g in out[0][1].items():
        assert (g is None) == (out[1][1][k] is None), k
        if g is not None:
            _close(g, out[1][1][k], tol)


def _err(fn_t, fn_f, exact=True):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)) as ef:
        fn_f()
    if exact:
        assert str(ef.value) == str(et.value)


def _classes(mod):
    nn = mod.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    class Double(nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, X):
            return X / 2

    class NoInverse(nn.Module):
        def forward(self, X):
            return X.exp()

    class RankOne(nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, Z):
            return Z[:, 0].clone(), Z[0].clone()

    class Flatten(nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.register_buffer("scale", mod.ones(4))

        def forward(self, x):
            return self.lin(x) * self.scale

    return Symmetric, Double, NoInverse, RankOne, Flatten, WithBuffer


def test_register_parametrization_names_values_grads_assignment_and_removal():
    P = {m: m.nn.utils.parametrize for m in (torch, ft)}
    C = {m: _classes(m) for m in (torch, ft)}
    mt, mf = _both(lambda m: P[m].register_parametrization(m.nn.Linear(4, 4), "weight", C[m][0]()))
    opt_params = {m: list(mod.parameters()) for m, mod in ((torch, mt), (ft, mf))}
    for m, mod in ((torch, mt), (ft, mf)):
        assert type(mod).__name__ == "ParametrizedLinear" and isinstance(mod, m.nn.Linear)
        assert P[m].type_before_parametrizations(mod) is m.nn.Linear
        assert P[m].is_parametrized(mod) and P[m].is_parametrized(mod, "weight")
        assert not P[m].is_parametrized(mod, "bias")
    assert [n for n, _ in mf.named_parameters()] == [n for n, _ in mt.named_parameters()] == \
        ["bias", "parametrizations.weight.original"]
    assert list(mf.state_dict()) == list(mt.state_dict())
    assert repr(mf) == repr(mt)
    assert type(mf.parametrizations.weight).__name__ == "ParametrizationList"
    _close(mf.weight, mt.weight)
    _close(mf.weight, mf.weight.mT)
    _step(mt, mf)
    # chained: Double after Symmetric; the original keeps its identity (an optimizer made before still has it)
    for m, mod in ((torch, mt), (ft, mf)):
        P[m].register_parametrization(mod, "weight", C[m][1]())
        assert mod.parametrizations.weight.original is opt_params[m][1]
    assert repr(mf) == repr(mt)
    _close(mf.weight, mt.weight)
    mt.zero_grad(), mf.zero_grad()
    _step(mt, mf)
    # assignment runs right_inverse backwards through the chain into the same original object
    A = R.standard_normal((4, 4)).astype(np.float32)
    A = A + A.T
    for m, mod in ((torch, mt), (ft, mf)):
        mod.weight = m.tensor(A)
        assert mod.parametrizations.weight.original is opt_params[m][1]
    _close(mf.weight, mt.weight)
    _close(mf.parametrizations.weight.original, mt.parametrizations.weight.original)
    # cached(): one evaluation per region
    with P[ft].cached():
        assert mf.weight is mf.weight
    assert mf.weight is not mf.weight
    # removal: leave_parametrized keeps the value in the original object; the class comes back
    for m, mod in ((torch, mt), (ft, mf)):
        P[m].remove_parametrizations(mod, "weight")
        assert type(mod) is m.nn.Linear and not hasattr(mod, "parametrizations")
        assert mod.weight is opt_params[m][1] and isinstance(mod.weight, m.nn.Parameter)
    _close(mf.weight, mt.weight)
    assert list(mf.state_dict()) == list(mt.state_dict()) == ["bias", "weight"]
    # leave_parametrized=False: the unconstrained original comes back
    mt2, mf2 = _both(lambda m: P[m].register_parametrization(m.nn.Linear(4, 4), "weight", C[m][0]()))
    w0 = _np(mt2.parametrizations.weight.original).copy()
    for m, mod in ((torch, mt2), (ft, mf2)):
        P[m].remove_parametrizations(mod, "weight", leave_parametrized=False)
    _close(mf2.weight, w0)
    _close(mt2.weight, w0)


def test_parametrize_multiple_originals_buffers_unsafe_and_state_dict():
    P = {m: m.nn.utils.parametrize for m in (torch, ft)}
    C = {m: _classes(m) for m in (torch, ft)}
    # right_inverse returning two tensors: original0 / original1, both requiring grad
    mt, mf = _both(lambda m: P[m].register_parametrization(m.nn.Linear(4, 4), "weight", C[m][3]()))
    assert [n for n, _ in mf.named_parameters()] == [n for n, _ in mt.named_parameters()] == \
        ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert mf.parametrizations.weight.ntensors == 2 and not mf.parametrizations.weight.is_tensor
    _step(mt, mf)
    # remove with leave_parametrized=True: a new Parameter holding the value
    for m, mod in ((torch, mt), (ft, mf)):
        P[m].remove_parametrizations(mod, "weight")
        assert isinstance(mod.weight, m.nn.Parameter) and mod.weight.requires_grad
    _close(mf.weight, mt.weight)
    # a buffer parametrized (no grad), and an unsafe parametrization that changes the shape
    bt, bf = _both(lambda m: P[m].register_parametrization(C[m][5](), "scale", C[m][1]()))
    assert [n for n, _ in bf.named_buffers()] == [n for n, _ in bt.named_buffers()] == \
        ["parametrizations.scale.original"]
    assert list(bf.state_dict()) == list(bt.state_dict())
    _step(bt, bf)
    ut, uf = _both(lambda m: P[m].register_parametrization(m.nn.Linear(3, 2), "weight", C[m][4](), unsafe=True))
    assert tuple(uf.weight.shape) == tuple(ut.weight.shape) == (6,)
    assert uf.parametrizations.weight.unsafe
    # state_dict round trip between two parametrized facade modules
    torch.manual_seed(1)
    src = P[ft].register_parametrization(ft.nn.Linear(4, 4), "weight", C[ft][0]())
    dst = P[ft].register_parametrization(ft.nn.Linear(4, 4), "weight", C[ft][0]())
    assert str(dst.load_state_dict(src.state_dict())) == "<All keys matched successfully>"
    _close(dst.weight, src.weight)
    # deepcopy works (a parametrized class keeps its property), pickling raises as torch
    import copy
    cp = copy.deepcopy(src)
    assert type(cp).__name__ == "ParametrizedLinear"
    _close(cp.weight, src.weight)
    _err(lambda: pickle.dumps(P[torch].register_parametrization(torch.nn.Linear(2, 2), "weight", C[torch][1]())),
         lambda: pickle.dumps(src))
    # transfer_parametrizations_and_params: the same originals on the new module
    other = ft.nn.Linear(4, 4)
    P[ft].transfer_parametrizations_and_params(src, other)
    assert other.parametrizations.weight.original is src.parametrizations.weight.original
    _close(other.weight, src.weight)


def test_parametrize_errors():
    P = {m: m.nn.utils.parametrize for m in (torch, ft)}
    C = {m: _classes(m) for m in (torch, ft)}
    mk = {m: (lambda m=m: m.nn.Linear(3, 2)) for m in (torch, ft)}
    cases = [
        lambda m: P[m].register_parametrization(mk[m](), "nope", C[m][1]()),
        lambda m: P[m].register_parametrization(mk[m](), "weight", C[m][4]()),  # shape change
        lambda m: P[m].remove_parametrizations(mk[m](), "weight"),
        lambda m: P[m].remove_parametrizations(P[m].register_parametrization(m.nn.Linear(3, 3), "weight",
                                                                              C[m][3]()), "weight", False),
        lambda m: setattr(P[m].register_parametrization(mk[m](), "weight", C[m][2]()), "weight", m.ones(2, 3)),
        lambda m: P[m].register_parametrization(
            P[m].register_parametrization(mk[m](), "weight", C[m][1]()), "weight", C[m][4]()),
    ]
    for i, case in enumerate(cases):
        # messages naming a module print its repr (equal); the rest word for word
        _err(lambda: case(torch), lambda: case(ft))
    # a dtype-changing parametrization
    _err(lambda: P[torch].register_parametrization(torch.nn.Linear(2, 2), "weight", _Half(torch)),
         lambda: P[ft].register_parametrization(ft.nn.Linear(2, 2), "weight", _Half(ft)))
    PZ = {m: m.nn.utils.parametrizations for m in (torch, ft)}
    for case in (lambda m: PZ[m].orthogonal(m.nn.Linear(3, 3), "bias"),
                 lambda m: PZ[m].orthogonal(m.nn.Linear(3, 3), orthogonal_map="qr"),
                 lambda m: PZ[m].orthogonal(m.nn.Linear(3, 3), "nope"),
                 lambda m: PZ[m].spectral_norm(m.nn.Linear(3, 3), dim=2),
                 lambda m: PZ[m].spectral_norm(m.nn.Linear(3, 3), n_power_iterations=0),
                 lambda m: PZ[m].orthogonal(m.nn.Linear(3, 3), orthogonal_map="cayley",
                                            use_trivialization=False).__setattr__("weight", m.eye(3))):
        _err(lambda: case(torch), lambda: case(ft))


def _Half(mod):
    class Half(mod.nn.Module):
        def forward(self, X):
            return X.double()
    return Half()


def test_weight_norm_parametrization_and_ops():
    PZ = {m: m.nn.utils.parametrizations for m in (torch, ft)}
    for dim in (0, 1, None):
        mt, mf = _both(lambda m: PZ[m].weight_norm(m.nn.Linear(4, 3), dim=dim))
        assert [(n, tuple(p.shape)) for n, p in mf.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in mt.named_parameters()]
        assert type(mf.weight.grad_fn).__name__ == type(mt.weight.grad_fn).__name__
        _step(mt, mf)
    # removal back to a plain Parameter holding the normalised value
    for m, mod in ((torch, mt), (ft, mf)):
        m.nn.utils.parametrize.remove_parametrizations(mod, "weight")
    _close(mf.weight, mt.weight)
    assert list(mf.state_dict()) == list(mt.state_dict())
    # the ops: norm_except_dim and _weight_norm (fused for the first/last dim, composite otherwise: a middle dim,
    # -1 for the whole tensor), grads, errors
    v = R.standard_normal((2, 3, 4))
    for dim in (0, 1, -1):
        res = []
        for m in (torch, ft):
            vt = m.tensor(v, requires_grad=True)
            n = m.norm_except_dim(vt, 2, dim)
            g = (n.detach() * 1.5).requires_grad_()
            w = m._weight_norm(vt, g, dim)
            (w * w.detach() + w).sum().backward()
            res.append((n, w, vt.grad, g.grad, type(w.grad_fn).__name__))
        for a, b in zip(res[0][:4], res[1][:4]):
            assert tuple(a.shape) == tuple(b.shape)
            _close(a, b, 1e-9)
        assert res[0][4] == res[1][4]
    wt, nt = torch._weight_norm_interface(torch.tensor(v[0]).bfloat16(), torch.ones(3, 1).bfloat16(), 0)
    wf, nf = ft._weight_norm_interface(ft.tensor(v[0]).bfloat16(), ft.ones(3, 1).bfloat16(), 0)
    assert str(wf.dtype) == str(wt.dtype) and str(nf.dtype) == str(nt.dtype) == "torch.float32"
    _close(wf.float(), wt.float(), 1e-2)
    for args in ((lambda m: m.tensor(v).long(), lambda m: m.ones(2, 1, 1).long(), 0),
                 (lambda m: m.tensor(v).float(), lambda m: m.ones(2, 1, 1).double(), 0),
                 (lambda m: m.tensor(v), lambda m: m.ones(1, 3, 1).double(), 5)):
        _err(lambda: torch._weight_norm(args[0](torch), args[1](torch), args[2]),
             lambda: ft._weight_norm(args[0](ft), args[1](ft), args[2]))
    _err(lambda: torch._weight_norm_interface(torch.tensor(v), torch.ones(1, 3, 1).double(), 1),
         lambda: ft._weight_norm_interface(ft.tensor(v), ft.ones(1, 3, 1).double(), 1))


def test_spectral_norm_power_iteration_train_eval():
    PZ = {m: m.nn.utils.parametrizations for m in (torch, ft)}
    mt, mf = _both(lambda m: PZ[m].spectral_norm(m.nn.Linear(4, 3), n_power_iterations=2))
    assert [n for n, _ in mf.named_buffers()] == [n for n, _ in mt.named_buffers()] == \
        ["parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    sn_t, sn_f = mt.parametrizations.weight[0], mf.parametrizations.weight[0]
    u_id = id(sn_f._u)
    for _ in range(3):  # each access in training mode takes n_power_iterations steps
        _close(mf.weight, mt.weight)
        _close(sn_f._u, sn_t._u)
        _close(sn_f._v, sn_t._v)
    assert id(sn_f._u) == u_id  # updated in place: the same buffer
    # two forwards, one backward (the GAN pattern): the clones keep the first graph valid
    for m, mod in ((torch, mt), (ft, mf)):
        a, b = mod(m.tensor(X)), mod(m.tensor(X[::-1].copy()))
        (a.sum() - (b * b).sum()).backward()
    _close(mf.parametrizations.weight.original.grad, mt.parametrizations.weight.original.grad)
    # eval: u and v stay as they are
    for mod in (mt, mf):
        mod.eval()
    u0 = _np(sn_f._u).copy()
    _close(mf.weight, mt.weight)
    _close(sn_f._u, u0)
    _close(sn_f._u, sn_t._u)
    # a conv weight with dim=1 (ConvTranspose's default) and a 1-d weight (no power iteration, no buffers)
    ct, cf = _both(lambda m: PZ[m].spectral_norm(m.nn.ConvTranspose2d(2, 3, 2)))
    assert tuple(cf.parametrizations.weight[0]._u.shape) == tuple(ct.parametrizations.weight[0]._u.shape) == (3,)
    x = R.standard_normal((1, 2, 3, 3)).astype(np.float32)
    _step(ct, cf, x)
    _close(cf.parametrizations.weight[0]._v, ct.parametrizations.weight[0]._v)
    bt, bf = _both(lambda m: PZ[m].spectral_norm(m.nn.Linear(4, 3), "bias"))
    assert [n for n, _ in bf.named_buffers()] == [n for n, _ in bt.named_buffers()] == []
    _step(bt, bf)


def test_orthogonal_maps():
    PZ = {m: m.nn.utils.parametrizations for m in (torch, ft)}
    x = R.standard_normal((2, 4)).astype(np.float32)
    # one (3, 4) weight (wide: the transposed path) under each map; gradients through matrix_exp (the others are
    # the linalg ops' own gradients, tested with them)
    for omap, triv, grads in (("matrix_exp", True, True), ("householder", True, False), ("cayley", True, False),
                              ("householder", False, False)):
        mt, mf = _both(lambda m: PZ[m].orthogonal(m.nn.Linear(4, 3), orthogonal_map=omap,
                                                  use_trivialization=triv))
        W = mf.weight
        _close(W @ W.mT, np.eye(3, dtype=np.float32), 1e-5)
        _close(W, mt.weight, 1e-5)
        assert [n for n, _ in mf.named_buffers()] == [n for n, _ in mt.named_buffers()]
        if grads:
            _step(mt, mf, x, 1e-4)
    # registration's right_inverse without a state copy, where it is deterministic: householder without
    # trivialization (geqrf's reflectors of the initial weight, signs fixed as torch)
    torch.manual_seed(0)
    lt = torch.nn.Linear(4, 3)
    lf = ft.nn.Linear(4, 3)
    _copy_state(lt, lf)
    PZ[torch].orthogonal(lt, orthogonal_map="householder", use_trivialization=False)
    PZ[ft].orthogonal(lf, orthogonal_map="householder", use_trivialization=False)
    _close(lf.parametrizations.weight.original, lt.parametrizations.weight.original, 1e-5)
    _close(lf.weight, lt.weight, 1e-5)
    # a square weight: matrix_exp by default; assigning an orthogonal matrix makes it the base, the original -Id
    Q = np.linalg.qr(R.standard_normal((4, 4)))[0].astype(np.float32)
    mt, mf = _both(lambda m: PZ[m].orthogonal(m.nn.Linear(4, 4)))
    assert mf.parametrizations.weight[0].orthogonal_map.name == "matrix_exp"
    for m, mod in ((torch, mt), (ft, mf)):
        mod.weight = m.tensor(Q)
    _close(mf.weight, Q, 1e-5)
    _close(mf.parametrizations.weight.original, mt.parametrizations.weight.original)
    _close(mf.parametrizations.weight[0].base, mt.parametrizations.weight[0].base)


def test_legacy_weight_norm_and_spectral_norm():
    U = {m: m.nn.utils for m in (torch, ft)}
    with pytest.warns(FutureWarning, match="torch.nn.utils.parametrizations.weight_norm"):
        U[ft].weight_norm(ft.nn.Linear(2, 2))
    mt, mf = _both(lambda m: U[m].weight_norm(m.nn.Linear(4, 3), dim=1))
    assert type(mf).__name__ == "Linear"
    assert [(n, tuple(p.shape)) for n, p in mf.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in mt.named_parameters()] == [("bias", (3,)), ("weight_g", (1, 4)),
                                                                    ("weight_v", (3, 4))]
    assert list(mf.state_dict()) == list(mt.state_dict())
    for _ in range(2):
        _step(mt, mf)
    for m, mod in ((torch, mt), (ft, mf)):
        U[m].remove_weight_norm(mod)
    _close(mf.weight, mt.weight)
    assert [n for n, _ in mf.named_parameters()] == [n for n, _ in mt.named_parameters()]
    _err(lambda: U[torch].remove_weight_norm(mt), lambda: U[ft].remove_weight_norm(mf))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        _err(lambda: U[torch].weight_norm(U[torch].weight_norm(torch.nn.Linear(2, 2))),
             lambda: U[ft].weight_norm(U[ft].weight_norm(ft.nn.Linear(2, 2))))
    # spectral_norm: weight_orig / weight_u / weight_v, a power iteration per training forward
    st, sf = _both(lambda m: U[m].spectral_norm(m.nn.Linear(4, 3), n_power_iterations=2))
    assert list(sf.state_dict()) == list(st.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    for _ in range(3):
        _step(st, sf)
        _close(sf.weight_u, st.weight_u)
        _close(sf.weight_v, st.weight_v)
    for mod in (st, sf):
        mod.eval()
    _step(st, sf)
    for m, mod in ((torch, st), (ft, sf)):
        U[m].remove_spectral_norm(mod)
    _close(sf.weight, st.weight)
    assert list(sf.state_dict()) == list(st.state_dict()) == ["bias", "weight"]
    _err(lambda: U[torch].remove_spectral_norm(st), lambda: U[ft].remove_spectral_norm(sf))
    _err(lambda: U[torch].spectral_norm(U[torch].spectral_norm(torch.nn.Linear(2, 2))),
         lambda: U[ft].spectral_norm(U[ft].spectral_norm(ft.nn.Linear(2, 2))))


def test_optimizer_steps_and_compiled_training_step():
    PZ = {m: m.nn.utils.parametrizations for m in (torch, ft)}

    def build(m):
        return m.nn.Sequential(PZ[m].weight_norm(m.nn.Linear(4, 5)), m.nn.Tanh(),
                               PZ[m].spectral_norm(m.nn.Linear(5, 3)))
    mt, mf = _both(build)
    ef = build(ft)
    _copy_state(mt, ef)
    opts = {id(mt): torch.optim.SGD(mt.parameters(), lr=0.1, momentum=0.9),
            id(mf): ft.optim.SGD(mf.parameters(), lr=0.1, momentum=0.9),
            id(ef): ft.optim.SGD(ef.parameters(), lr=0.1, momentum=0.9)}

    def step_of(m, mod):
        opt = opts[id(mod)]

        def step(x):
            opt.zero_grad()
            loss = (mod(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return step
    compiled = ft.compile(step_of(ft, mf))
    eager, ref = step_of(ft, ef), step_of(torch, mt)
    for _ in range(3):
        lt, lf, le = ref(torch.tensor(X)), compiled(ft.tensor(X)), eager(ft.tensor(X))
        np.testing.assert_allclose(lf.item(), lt.item(), rtol=1e-4)
        np.testing.assert_allclose(lf.item(), le.item(), rtol=1e-5)
    # one program: the first step runs it too (its momentum buffers made first), then cache hits
    assert compiled.stats["eager_calls"] == 0 and compiled.stats["traces"] == 1
    sd_t, sd_f, sd_e = mt.state_dict(), mf.state_dict(), ef.state_dict()
    assert list(sd_f) == list(sd_t) == list(sd_e)
    for k in sd_t:
        _close(sd_f[k], sd_t[k], 1e-4)
        _close(sd_f[k], sd_e[k], 1e-5)


def test_fusion_skip_init_stateless():
    U = {m: m.nn.utils for m in (torch, ft)}
    fused_of = {}
    for conv, bn, transpose in (("Conv2d", "BatchNorm2d", False), ("ConvTranspose2d", "BatchNorm2d", True)):
        def build(m):
            c, b = getattr(m.nn, conv)(2, 3, 2), getattr(m.nn, bn)(3)
            return m.nn.Sequential(c, b)
        st, sf = _both(build)
        with torch.no_grad():
            st[1].running_mean.uniform_(-1, 1), st[1].running_var.uniform_(0.5, 2), st[1].weight.uniform_(0.5, 2)
        _copy_state(st, sf)
        x = R.standard_normal((1, 2, 4, 4)).astype(np.float32)
        for m, seq in ((torch, st), (ft, sf)):
            seq.eval()
            fused = U[m].fuse_conv_bn_eval(seq[0], seq[1], transpose=transpose)
            assert isinstance(fused.weight, m.nn.Parameter)
            fused_of[m] = fused
        _close(fused_of[ft](ft.tensor(x)), fused_of[torch](torch.tensor(x)), 1e-5)
        _close(fused_of[ft](ft.tensor(x)), sf(ft.tensor(x)), 1e-5)
    lt, lf = _both(lambda m: m.nn.Sequential(m.nn.Linear(4, 3), m.nn.BatchNorm1d(3)).eval())
    _close(U[ft].fuse_linear_bn_eval(lf[0], lf[1])(ft.tensor(X)), U[torch].fuse_linear_bn_eval(lt[0], lt[1])(
        torch.tensor(X)))
    wt, bt = U[torch].fuse_linear_bn_weights(lt[0].weight, None, lt[1].running_mean, lt[1].running_var, 1e-5,
                                             lt[1].weight, lt[1].bias)
    wf, bf = U[ft].fuse_linear_bn_weights(lf[0].weight, None, lf[1].running_mean, lf[1].running_var, 1e-5,
                                          lf[1].weight, lf[1].bias)
    _close(wf, wt), _close(bf, bt)
    assert bf.requires_grad == bt.requires_grad
    _err(lambda: U[torch].fuse_linear_bn_eval(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2)),
         lambda: U[ft].fuse_linear_bn_eval(ft.nn.Linear(2, 2), ft.nn.BatchNorm1d(2)))
    # skip_init: the module's shapes, dtypes, types and device, without its init
    for m in (torch, ft):
        s = U[m].skip_init(m.nn.Linear, 5, 2, dtype=m.float64)
        assert tuple(s.weight.shape) == (2, 5) and s.weight.dtype == m.float64 and str(s.weight.device) == "cpu"
        assert isinstance(s.weight, m.nn.Parameter) and s.weight.requires_grad
        b = U[m].skip_init(m.nn.BatchNorm1d, 3)
        assert str(b.num_batches_tracked.dtype) == "torch.int64" and tuple(b.running_var.shape) == (3,)
    for args in ((int,), (lambda m: m.nn.ReLU,)):
        _err(lambda: U[torch].skip_init(*(a(torch) if callable(a) and a is not int else a for a in args)),
             lambda: U[ft].skip_init(*(a(ft) if callable(a) and a is not int else a for a in args)))
    # convert_conv{2,3}d_weight_memory_format: the same Parameter objects, in the new strides, through the tree
    for m in (torch, ft):
        seq = m.nn.Sequential(m.nn.Conv2d(3, 4, 2), m.nn.Sequential(m.nn.ConvTranspose2d(4, 2, 2)), m.nn.Conv3d(2, 2, 1))
        w = seq[0].weight
        assert U[m].convert_conv2d_weight_memory_format(seq, m.channels_last) is seq
        U[m].convert_conv3d_weight_memory_format(seq, m.channels_last_3d)
        assert seq[0].weight is w and isinstance(w, m.nn.Parameter)
        assert (w.stride(), seq[1][0].weight.stride(), seq[2].weight.stride()) == ((12, 1, 6, 3), (8, 1, 4, 2),
                                                                                   (2, 1, 2, 2, 2))
    # stateless.functional_call (deprecated; torch.func.functional_call underneath), with a parametrized name
    mt, mf = _both(lambda m: U[m].parametrizations.weight_norm(m.nn.Linear(4, 3)))
    g = R.uniform(0.5, 2, (3, 1)).astype(np.float32)
    outs = []
    for m, mod in ((torch, mt), (ft, mf)):
        with pytest.warns(FutureWarning, match="torch.func.functional_call"):
            outs.append(U[m].stateless.functional_call(mod, {"parametrizations.weight.original0": m.tensor(g)},
                                                       (m.tensor(X),)))
    _close(outs[1], outs[0])
    _close(mf.parametrizations.weight.original0, mt.parametrizations.weight.original0)  # put back
