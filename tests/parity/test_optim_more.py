"""Parity of RAdam, NAdam, Adamax, Adadelta, ASGD (optax transforms in torch's operation order) and LBFGS
(closure-driven, eager) with torch.optim: parameters after every step of a small MLP's training, the
per-parameter state and ``state_dict()`` (keys, dtypes, values), loading either library's state dict, the
constructor errors, and a compiled training step per optax optimizer (== eager; LBFGS breaks the graph).
"""
import copy
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.optim as optim

STEPS = 20
RNG = np.random.default_rng(0)
INIT = [RNG.standard_normal((4, 8)).astype(np.float32) * 0.5, RNG.standard_normal(8).astype(np.float32) * 0.1,
        RNG.standard_normal((8, 3)).astype(np.float32) * 0.5, RNG.standard_normal(3).astype(np.float32) * 0.1]
BATCHES = [(RNG.standard_normal((5, 4)).astype(np.float32), RNG.standard_normal((5, 3)).astype(np.float32))
           for _ in range(STEPS)]


def _params(lib, dtype="float32"):
    return [lib.tensor(a.astype(dtype), requires_grad=True) for a in INIT]


def _loss(lib, ps, i, dtype="float32"):
    w1, b1, w2, b2 = ps
    x, t = BATCHES[i % STEPS]
    y = (lib.tensor(x.astype(dtype)) @ w1 + b1).tanh() @ w2 + b2
    return ((y - lib.tensor(t.astype(dtype))) ** 2).mean()


def _np(t):
    return t.detach().numpy()


def _train_step(lib, opt, ps, i):
    opt.zero_grad()
    loss = _loss(lib, ps, i)
    loss.backward()
    opt.step()
    return float(loss.item())


def _assert_state_dicts_equal(fsd, tsd, tol=1e-5):
    assert [list(g) for g in fsd["param_groups"]] == [list(g) for g in tsd["param_groups"]]  # keys, in order
    assert fsd["param_groups"] == tsd["param_groups"]
    assert list(fsd["state"]) == list(tsd["state"])
    for k, ts in tsd["state"].items():
        fs = fsd["state"][k]
        assert list(fs) == list(ts)
        for n, v in ts.items():
            assert str(fs[n].dtype) == str(v.dtype) and tuple(fs[n].shape) == tuple(v.shape), n
            np.testing.assert_allclose(_np(fs[n]), _np(v), rtol=tol, atol=1e-7, err_msg=n)


CASES = {
    "RAdam": ("RAdam", dict(lr=0.01)),  # rho_t > 5 from step 6: both of torch's branches
    "RAdam-wd": ("RAdam", dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.99))),
    "RAdam-decoupled-maximize": ("RAdam", dict(lr=0.005, weight_decay=0.1, decoupled_weight_decay=True,
                                               maximize=True)),
    "NAdam": ("NAdam", dict(lr=0.01)),
    "NAdam-wd-momentum_decay": ("NAdam", dict(lr=0.01, weight_decay=0.05, momentum_decay=0.01, eps=1e-6)),
    "NAdamW-maximize": ("NAdam", dict(lr=0.005, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    "Adamax": ("Adamax", dict(lr=0.01)),
    "Adamax-wd-maximize": ("Adamax", dict(lr=0.01, weight_decay=0.05, betas=(0.7, 0.9), maximize=True)),
    "Adadelta": ("Adadelta", dict()),
    "Adadelta-wd": ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.01, eps=1e-5)),
    "ASGD": ("ASGD", dict(lr=0.05)),
    "ASGD-averaging": ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.01)),
    "ASGD-maximize": ("ASGD", dict(lr=0.01, t0=0, maximize=True)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_training_state_and_state_dict_match_torch(case):
    name, kw = CASES[case]
    tp, fp = _params(torch), _params(ft)
    topt, fopt = getattr(torch.optim, name)(tp, **kw), getattr(optim, name)(fp, **kw)
    for i in range(STEPS):
        lt, lf = _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
        np.testing.assert_allclose(lf, lt, rtol=1e-5, atol=1e-6, err_msg=f"loss at step {i}")
        for a, b in zip(fp, tp):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6, err_msg=f"param at step {i}")
    for a, b in zip(fp, tp):  # optimizer.state[p]: torch's names, dtypes (float32 0-d scalars) and values
        fs, ts = fopt.state[a], topt.state[b]
        assert list(fs) == list(ts)
        for k in ts:
            assert str(fs[k].dtype) == str(ts[k].dtype) and tuple(fs[k].shape) == tuple(ts[k].shape)
            np.testing.assert_allclose(_np(fs[k]), _np(ts[k]), rtol=1e-5, atol=1e-7)
    _assert_state_dicts_equal(fopt.state_dict(), topt.state_dict())


@pytest.mark.parametrize("name", ["RAdam", "NAdam", "Adamax", "Adadelta", "ASGD"])
def test_load_state_dict_continues_like_torch(name):
    """Ours -> a fresh optimizer (other lr) continues identically; torch's state dict (as ft tensors) ->
    another fresh one continues like torch; the defaults and param group keys are torch's."""
    tp, fp = _params(torch), _params(ft)
    topt, fopt = getattr(torch.optim, name)(tp), getattr(optim, name)(fp)
    assert fopt.defaults == topt.defaults
    for i in range(4):
        _train_step(torch, topt, tp, i), _train_step(ft, fopt, fp, i)
    tsd, fsd = topt.state_dict(), fopt.state_dict()
    fp2 = [ft.tensor(_np(p).copy(), requires_grad=True) for p in fp]
    fp3 = [ft.tensor(_np(p).copy(), requires_grad=True) for p in tp]
    fopt2, fopt3 = getattr(optim, name)(fp2, lr=7.0), getattr(optim, name)(fp3, lr=7.0)
    fopt2.load_state_dict(copy.deepcopy(fsd))  # (a live state dict would share its tensors, as torch's)
    fopt3.load_state_dict({"state": {k: {n: ft.tensor(_np(v)) for n, v in s.items()} for k, s in tsd["state"].items()},
                           "param_groups": tsd["param_groups"]})
    for i in range(4, 8):
        for lib, o, ps in ((ft, fopt, fp), (ft, fopt2, fp2), (ft, fopt3, fp3), (torch, topt, tp)):
            _train_step(lib, o, ps, i)
        for a, b, c, d in zip(fp, fp2, fp3, tp):
            np.testing.assert_array_equal(_np(a), _np(b))
            np.testing.assert_allclose(_np(c), _np(d), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make,exc,msg", [
    (lambda m, p: m.RAdam(p, lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda m, p: m.RAdam(p, betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    (lambda m, p: m.RAdam(p, weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
    (lambda m, p: m.NAdam(p, momentum_decay=-1.0), ValueError, "Invalid momentum_decay value: -1.0"),
    (lambda m, p: m.NAdam(p, betas=(0.9, 1.5)), ValueError, "Invalid beta parameter at index 1: 1.5"),
    (lambda m, p: m.NAdam(p, eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
    (lambda m, p: m.Adamax(p, lr=-0.5), ValueError, "Invalid learning rate: -0.5"),
    (lambda m, p: m.Adadelta(p, rho=1.5), ValueError, "Invalid rho value: 1.5"),
    (lambda m, p: m.Adadelta(p, eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (lambda m, p: m.ASGD(p, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (lambda m, p: m.LBFGS(p, lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda m, p: m.LBFGS([{"params": p[:2]}, {"params": p[2:]}]), ValueError,
     "LBFGS doesn't support per-parameter options (parameter groups)"),
])
def test_errors_match_torch(make, exc, msg):
    for lib, m in ((torch, torch.optim), (ft, optim)):
        with pytest.raises(exc, match=re.escape(msg)):
            make(m, _params(lib))


def test_complex_parameters_are_refused_with_a_clear_error():
    """torch steps a complex parameter as its view_as_real pairs; these transforms are written for real ones
    (complex arithmetic would square g instead of |g|: a different answer), so they refuse it. SGD is linear:
    its complex step equals torch's; LBFGS steps the view_as_real pairs as torch's (its own test below)."""
    for name in ("RAdam", "NAdam", "Adamax", "Adadelta", "ASGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        w = ft.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        with pytest.raises(RuntimeError, match=re.escape(f"functorch_lite.optim.{name}: complex parameters are "
                                                         "not supported")):
            opt = getattr(optim, name)([w])

            opt.zero_grad()
            (w.abs() ** 2).sum().backward()
            opt.step()
    got = []
    for lib in (ft, torch):
        w = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.01)
        for _ in range(3):
            opt.zero_grad()
            (w.abs() ** 2).sum().backward()
            opt.step()
        got.append(w.detach().numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6)


# ---- compile ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,kw", [("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
                                     ("NAdam", dict(lr=0.01, weight_decay=0.05)),
                                     ("Adamax", dict(lr=0.01)), ("Adadelta", dict(lr=0.5)),
                                     ("ASGD", dict(lr=0.05, t0=3))])
def test_compiled_training_step_equals_eager_and_torch(name, kw):
    """8 steps: compiled == eager (1e-6) == torch (1e-5); the lr set between calls is an input (no retrace)."""
    runs = {}
    for tag, lib, compiled in (("eager", ft, False), ("compiled", ft, True), ("torch", torch, False)):
        ps = _params(lib)
        opt = getattr(lib.optim, name)(ps, **kw)

        def step(x, y):
            opt.zero_grad()
            w1, b1, w2, b2 = ps
            loss = (((x @ w1 + b1).tanh() @ w2 + b2 - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        losses = []
        for i in range(8):
            if i == 5:
                opt.param_groups[0]["lr"] *= 0.5
            x, y = BATCHES[i]
            losses.append(f(lib.tensor(x), lib.tensor(y)).item())
        runs[tag] = (losses, [_np(p).copy() for p in ps], f, opt)
    np.testing.assert_allclose(runs["compiled"][0], runs["eager"][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(runs["compiled"][0], runs["torch"][0], rtol=1e-5, atol=1e-6)
    for a, b, c in zip(runs["compiled"][1], runs["eager"][1], runs["torch"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
    stats = runs["compiled"][2].stats
    assert stats["traces"] == 1 and stats["eager_calls"] == 0  # (the first call runs with its state made first)
    _assert_state_dicts_equal(runs["compiled"][3].state_dict(), runs["torch"][3].state_dict())


# ---- LBFGS -----------------------------------------------------------------------------------------------------
def _lbfgs_run(lib, kw, steps, dtype):
    ps = _params(lib, dtype)
    opt = (torch.optim if lib is torch else optim).LBFGS(ps, **kw)
    losses, traj = [], []
    for i in range(steps):
        def closure():
            opt.zero_grad()
            loss = _loss(lib, ps, 0, dtype)  # one batch: a deterministic objective
            loss.backward()
            return loss
        losses.append(opt.step(closure).item())
        traj.append([_np(p).copy() for p in ps])
    return losses, traj, opt


def _lbfgs_state_equal(fs, ts, tol):
    assert list(fs) == list(ts)
    for k, v in ts.items():
        w = fs[k]
        assert type(w).__name__ == type(v).__name__, k  # ints, floats, tensors and lists where torch has them
        if isinstance(v, torch.Tensor):
            assert str(w.dtype) == str(v.dtype) and tuple(w.shape) == tuple(v.shape), k
            np.testing.assert_allclose(_np(w), _np(v), rtol=tol, atol=tol, err_msg=k)
        elif isinstance(v, list):
            assert len(w) == len(v), k
            for a, b in zip(w, v):
                assert (a is None) == (b is None), k
                if b is not None:
                    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol, err_msg=k)
        elif isinstance(v, float):
            assert w == pytest.approx(v, rel=tol, abs=tol), k
        else:
            assert w == v, k


@pytest.mark.parametrize("kw", [dict(lr=1, max_iter=5, history_size=4),
                                dict(lr=1, max_iter=4, line_search_fn="strong_wolfe")],
                         ids=["fixed-step", "strong_wolfe"])
def test_lbfgs_matches_torch(kw):
    """20 steps in float64 (L-BFGS amplifies the last-bit differences of float32 reductions, torch's own float32
    and float64 runs part at ~1e-3 after 20 steps): parameters within 1e-5 at every step, the state
    (func_evals, n_iter, d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss, al) torch's in
    types and values; then 2 steps in float32 within 1e-5."""
    (tl, tt, topt), (fl, fa, fopt) = (_lbfgs_run(lib, kw, STEPS, "float64") for lib in (torch, ft))
    np.testing.assert_allclose(fl, tl, rtol=1e-6, atol=1e-9)
    for i, (a, b) in enumerate(zip(fa, tt)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, err_msg=f"step {i}")
    tsd, fsd = topt.state_dict(), fopt.state_dict()
    assert fsd["param_groups"] == tsd["param_groups"] and list(fsd["state"]) == list(tsd["state"]) == [0]
    _lbfgs_state_equal(fsd["state"][0], tsd["state"][0], 1e-5)
    (tl, tt, _), (fl, fa, _) = (_lbfgs_run(lib, kw, 2, "float32") for lib in (torch, ft))
    np.testing.assert_allclose(fl, tl, rtol=1e-5, atol=1e-6)
    for x, y in zip(fa[-1], tt[-1]):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_lbfgs_load_state_dict_resumes_like_torch():
    kw = dict(lr=1, max_iter=3, history_size=3)
    _, _, topt = _lbfgs_run(torch, kw, 3, "float64")
    tp = topt.param_groups[0]["params"]
    fp = [ft.tensor(_np(p).copy(), requires_grad=True) for p in tp]
    fopt = optim.LBFGS(fp, lr=0.1)

    def conv(v):
        if isinstance(v, torch.Tensor):
            return ft.tensor(_np(v).copy())
        return [None if e is None else conv(e) for e in v] if isinstance(v, list) else v
    tsd = topt.state_dict()
    fopt.load_state_dict({"state": {0: {k: conv(v) for k, v in tsd["state"][0].items()}},
                          "param_groups": tsd["param_groups"]})
    assert fopt.param_groups[0]["lr"] == 1
    for lib, o, ps in ((torch, topt, tp), (ft, fopt, fp)):
        for _ in range(3):
            def closure():
                o.zero_grad()
                loss = _loss(lib, ps, 0, "float64")
                loss.backward()
                return loss
            o.step(closure)
    for a, b in zip(fp, tp):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)
    _lbfgs_state_equal(fopt.state_dict()["state"][0], topt.state_dict()["state"][0], 1e-5)


def test_lbfgs_misuse_and_compile_graph_break():
    for lib, m in ((torch, torch.optim), (ft, optim)):
        ps = _params(lib)
        opt = m.LBFGS(ps, line_search_fn="armijo")

        def closure():
            opt.zero_grad()
            loss = _loss(lib, ps, 0)
            loss.backward()
            return loss
        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)
        with pytest.raises(TypeError):
            opt.step()  # the closure is required
        with warnings.catch_warnings():  # no requires_grad warning from float(loss) inside the no-grad step
            warnings.simplefilter("error")
            m.LBFGS(ps, max_iter=2).step(closure)
    # inside compile: a graph break (the call runs eagerly, with the same result as eager), fullgraph: an error
    results = []
    for compiled in (False, True):
        ps = _params(ft)
        opt = optim.LBFGS(ps, max_iter=3)

        def closure():
            opt.zero_grad()
            loss = _loss(ft, ps, 0)
            loss.backward()
            return loss

        def step():
            return opt.step(closure)
        f = ft.compile(step) if compiled else step
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = [f().item() for _ in range(2)]
        results.append((out, [_np(p).copy() for p in ps]))
        if compiled:
            assert f.stats["eager_calls"] == 2
            assert any("graph break" in str(r.message) and "optim.LBFGS.step" in str(r.message) for r in rec)
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(Exception, match=re.escape("optim.LBFGS.step (a closure-driven loop")):
        ft.compile(step, fullgraph=True)()


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_complex_parameters_as_view_as_real_pairs_like_torch(line_search_fn):
    """A complex parameter is optimised as its view_as_real pairs (torch's _gather_flat_grad / _add_grad), beside a
    real one: the same losses, parameters and a flat state of 2 entries per complex element (it was refused)."""
    res = []
    for lib in (torch, ft):
        p = lib.tensor([1 + 1j, 2 - 1j], requires_grad=True, dtype=lib.complex128)
        q = lib.tensor([0.5, -0.25], requires_grad=True, dtype=lib.float64)
        opt = lib.optim.LBFGS([p, q], max_iter=5, line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = ((p - (0.5 - 2j)).abs() ** 2).sum() + (q ** 2 * p.real).sum()
            loss.backward()
            return loss
        losses = [opt.step(closure).item() for _ in range(3)]
        st = opt.state[p]
        res.append((losses, lib.view_as_real(p.detach()).flatten().tolist() + q.tolist(), str(st["d"].dtype),
                    tuple(st["d"].shape), st["n_iter"]))
    (tl, tp, *tmeta), (fl, fp, *fmeta) = res
    np.testing.assert_allclose(fl, tl, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(fp, tp, rtol=1e-6, atol=1e-9)
    assert fmeta == tmeta
