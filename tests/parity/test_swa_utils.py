"""Parity of functorch_lite.optim.swa_utils with torch.optim.swa_utils (PyTorch 2.13).

``AveragedModel``: the averaging arithmetic is checked bit for bit on fed-in parameter snapshots (every averaging
path: the default per-tensor SWA formula, ``lerp_`` via ``get_swa_multi_avg_fn`` / ``get_ema_multi_avg_fn``, the
per-tensor ``avg_fn``s, ``use_buffers`` with BatchNorm's integer ``num_batches_tracked``, float64), then inside a
short SGD training run from the same initial weights. ``SWALR``: lr sequences equal as Python floats, state_dict
round trip, PyTorch's errors. ``update_bn``: running statistics after one pass over a list loader / DataLoader,
momenta and training modes restored.
"""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import assert_same_error, run

LIBS = (torch, ft)
RNG = np.random.default_rng(11)
X = RNG.standard_normal((24, 6)).astype(np.float32)
Y = RNG.integers(0, 3, 24)


def _np(t):
    return t.detach().numpy().copy()


def _model(L, dtype=None, bn=True):
    nn = L.nn
    layers = [nn.Linear(6, 5)] + ([nn.BatchNorm1d(5)] if bn else []) + [nn.ReLU(), nn.Linear(5, 3)]
    m = nn.Sequential(*layers)
    return m if dtype is None else m.to(getattr(L, dtype))


def _pair(dtype=None, bn=True):
    """The same model in both libraries (torch's random init copied into functorch_lite)."""
    torch.manual_seed(0)
    tm = _model(torch, dtype, bn)
    fm = _model(ft, dtype, bn)
    fm.load_state_dict({k: ft.from_numpy(_np(v)) for k, v in tm.state_dict().items()})
    return tm, fm


def _assert_state_equal(f_sd, t_sd, exact=True, rtol=1e-5, atol=1e-6):
    assert list(f_sd.keys()) == list(t_sd.keys())
    for k, tv in t_sd.items():
        fv = f_sd[k]
        assert str(fv.dtype) == str(tv.dtype), k
        assert tuple(fv.shape) == tuple(tv.shape), k
        if exact:
            np.testing.assert_array_equal(_np(fv), _np(tv), err_msg=k)
        else:
            np.testing.assert_allclose(_np(fv), _np(tv), rtol=rtol, atol=atol, err_msg=k)


# ---- AveragedModel: the averaging arithmetic, exactly -------------------------------------------------------------
AVG_CONFIGS = {
    "swa-default": lambda su: dict(),
    "swa-multi": lambda su: dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
    "swa-avg_fn": lambda su: dict(avg_fn=su.get_swa_avg_fn()),
    "ema-multi": lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
    "ema-avg_fn": lambda su: dict(avg_fn=su.get_ema_avg_fn(0.75)),
    "ema-multi-default-decay": lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn()),
    "custom-avg_fn": lambda su: dict(avg_fn=lambda a, p, n: a * 0.5 + p * 0.5 + n),
    "buffers-swa-default": lambda su: dict(use_buffers=True),
    "buffers-swa-avg_fn": lambda su: dict(use_buffers=True, avg_fn=su.get_swa_avg_fn()),
    "buffers-ema-multi": lambda su: dict(use_buffers=True, multi_avg_fn=su.get_ema_multi_avg_fn(0.6)),
    "buffers-ema-avg_fn": lambda su: dict(use_buffers=True, avg_fn=su.get_ema_avg_fn(0.6)),
    "buffers-swa-multi": lambda su: dict(use_buffers=True, multi_avg_fn=su.get_swa_multi_avg_fn()),  # torch raises
}


def _snapshots(model, k, dtype):
    """k deterministic parameter / buffer sets (integer num_batches_tracked values that make truncation matter)."""
    g = np.random.default_rng(5)
    out = []
    for i in range(k):
        snap = {}
        for name, v in model.state_dict().items():
            if name.endswith("num_batches_tracked"):
                snap[name] = np.array(3 + 7 * i + (i % 2) * 4, dtype=np.int64)
            elif name.endswith("running_var"):
                snap[name] = (g.random(tuple(v.shape)) + 0.5).astype(dtype)
            else:
                snap[name] = g.standard_normal(tuple(v.shape)).astype(dtype)
        out.append(snap)
    return out


def _averaging_run(L, config, dtype, k=5):
    su = L.optim.swa_utils
    model = _model(L, dtype)
    avg = su.AveragedModel(model, **AVG_CONFIGS[config](su))
    hist = [avg.n_averaged.item()]
    for snap in _snapshots(model, k, np.float64 if dtype == "float64" else np.float32):
        model.load_state_dict({n: L.from_numpy(v) for n, v in snap.items()})
        avg.update_parameters(model)
        hist.append(avg.n_averaged.item())
    return avg, hist


@pytest.mark.parametrize("config,dtype", [(c, "float32") for c in AVG_CONFIGS]
                         + [(c, "float64") for c in ("swa-default", "swa-multi", "ema-multi", "buffers-swa-default")])
def test_averaging_arithmetic_exact(config, dtype):
    (t_out, t_err), (f_out, f_err) = (run(lambda L=L: _averaging_run(L, config, dtype), L) for L in LIBS)
    if t_err is not None:
        assert_same_error(t_err, f_err, f_out)
        return
    assert f_err is None, f"functorch_lite raised {f_err!r}"
    (t_avg, t_hist), (f_avg, f_hist) = t_out, f_out
    assert f_hist == t_hist == list(range(6))
    assert str(f_avg.n_averaged.dtype) == "torch.int64" and f_avg.n_averaged.dim() == 0
    _assert_state_equal(f_avg.state_dict(), t_avg.state_dict(), exact=True)
    assert [n for n, _ in f_avg.named_parameters()] == [n for n, _ in t_avg.named_parameters()]
    assert [n for n, _ in f_avg.named_buffers()] == [n for n, _ in t_avg.named_buffers()]


def test_first_update_copies_and_buffers_follow_model():
    """The first update copies the model (the initial deep copy is not averaged in); without use_buffers the
    buffers are copied from the model on every update; the copy is independent of the source model."""
    tm, fm = _pair()
    res = []
    for L, m in ((torch, tm), (ft, fm)):
        avg = L.optim.swa_utils.AveragedModel(m)
        assert avg.module is not m and avg.module[0].weight is not m[0].weight
        with L.no_grad():
            m[0].weight.mul_(3.0)
            m[1].running_mean.add_(2.0)
            m[1].num_batches_tracked.add_(5)
        before = _np(avg.module[0].weight)
        avg.update_parameters(m)
        assert not np.array_equal(before, _np(avg.module[0].weight))
        np.testing.assert_array_equal(_np(avg.module[0].weight), _np(m[0].weight))
        with L.no_grad():
            m[0].weight.add_(1.0)
            m[1].running_mean.add_(1.0)
        avg.update_parameters(m)
        np.testing.assert_array_equal(_np(avg.module[1].running_mean), _np(m[1].running_mean))
        res.append((avg.state_dict(), repr(avg)))
    _assert_state_equal(res[1][0], res[0][0], exact=True)
    assert res[1][1] == res[0][1]           # repr: AveragedModel((module): Sequential(...))
    assert list(res[1][0]) == ["n_averaged", "module.0.weight", "module.0.bias", "module.1.weight", "module.1.bias",
                            "module.1.running_mean", "module.1.running_var", "module.1.num_batches_tracked",
                            "module.3.weight", "module.3.bias"]


# ---- AveragedModel inside training ----------------------------------------------------------------------------------
TRAIN_CONFIGS = {
    "swa": lambda su: dict(),
    "ema-multi": lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
    "ema-buffers": lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8), use_buffers=True),
    "swa-buffers": lambda su: dict(use_buffers=True),
}


def _train(L, model, config, steps=6, compiled=False):
    """``compiled``: the whole step, the average's update included, one ``functorch_lite.compile`` program."""
    su, F = L.optim.swa_utils, L.nn.functional
    avg = su.AveragedModel(model, **TRAIN_CONFIGS[config](su))
    opt = L.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(xb, yb):
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()
        avg.update_parameters(model)
    f = L.compile(step) if compiled else step
    for i in range(steps):
        f(L.from_numpy(X[4 * i:4 * i + 8]), L.from_numpy(Y[4 * i:4 * i + 8]))
    avg.eval()
    with L.no_grad():
        out, out_module = avg(L.from_numpy(X[:8])), avg.module(L.from_numpy(X[:8]))
    if compiled:
        # (traces: the first call, run with .grad fields and momentum as the later calls have them, then the last
        # batch's 4 rows; the first call's copy is in a program too)
        assert f.stats["eager_calls"] == 0 and f.stats["traces"] == 2, f.stats
    return avg, out, out_module


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("config", list(TRAIN_CONFIGS))
def test_averaged_model_training(config, compiled):
    """Eager, and compiled: ``update_parameters`` inside a compiled step stays in its program (its first-call copy
    a select on ``n_averaged``, where torch.compile breaks the graph) with torch's eager values."""
    tm, fm = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_avg, t_out, t_out_m = _train(torch, tm, config)
        f_avg, f_out, f_out_m = _train(ft, fm, config, compiled=compiled)
    assert f_avg.n_averaged.item() == t_avg.n_averaged.item() == 6
    _assert_state_equal(f_avg.state_dict(), t_avg.state_dict(), exact=False)
    _assert_state_equal(fm.state_dict(), tm.state_dict(), exact=False)
    np.testing.assert_allclose(_np(f_out), _np(t_out), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(_np(f_out), _np(f_out_m))       # forward delegates to .module
    assert not f_avg.training and not f_avg.module.training and not f_avg.module[1].training


def test_averaged_model_state_dict_round_trip_and_device():
    tm, fm = _pair(bn=False)
    sds = []
    for L, m in ((torch, tm), (ft, fm)):
        su = L.optim.swa_utils
        avg = su.AveragedModel(m, device="cpu")
        assert avg.n_averaged.device.type == "cpu"
        for _ in range(3):
            with L.no_grad():
                for p in m.parameters():
                    p.mul_(0.5).add_(0.25)
            avg.update_parameters(m)
        other = su.AveragedModel(_model(L, bn=False))
        other.load_state_dict(avg.state_dict())
        assert other.n_averaged.item() == 3
        sds.append(other.state_dict())
    _assert_state_equal(sds[1], sds[0], exact=True)


def test_averaged_model_errors():
    def both_fns(L):
        su = L.optim.swa_utils
        return su.AveragedModel(_model(L, bn=False), avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())

    cases = [both_fns,
             lambda L: L.optim.swa_utils.get_ema_multi_avg_fn(1.5),
             lambda L: L.optim.swa_utils.get_ema_avg_fn(-0.1)]
    for fn in cases:
        (_, t_err), (f_out, f_err) = run(fn, torch), run(fn, ft)
        assert t_err is not None
        assert_same_error(t_err, f_err, f_out)


# ---- SWALR ----------------------------------------------------------------------------------------------------------
def _swalr_opt(L, groups):
    ps = [L.tensor([1.0, -2.0], requires_grad=True) for _ in range(groups)]
    if groups == 1:
        return L.optim.SGD(ps, lr=0.1)
    return L.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], lr=0.1)


SWALR_CASES = {
    "cos": dict(swa_lr=0.05),
    "linear": dict(swa_lr=0.02, anneal_strategy="linear", anneal_epochs=5),
    "cos-3": dict(swa_lr=0.3, anneal_epochs=3),
    "zero-epochs": dict(swa_lr=0.01, anneal_epochs=0),
    "linear-one-epoch": dict(swa_lr=0.5, anneal_strategy="linear", anneal_epochs=1),
}


def _swalr_seq(L, kw, groups, steps=15):
    opt = _swalr_opt(L, groups)
    if groups > 1 and not isinstance(kw["swa_lr"], list):
        kw = dict(kw, swa_lr=[kw["swa_lr"] * (i + 1) for i in range(groups)])
    sched = L.optim.swa_utils.SWALR(opt, **kw)
    seq = [(sched.get_last_lr(), [g["lr"] for g in opt.param_groups], [g["swa_lr"] for g in opt.param_groups])]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups]))
    return seq, sched


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("case", list(SWALR_CASES))
def test_swalr_lr_sequence(case, groups):
    (t_seq, t_sched), (f_seq, f_sched) = (_swalr_seq(L, SWALR_CASES[case], groups) for L in LIBS)
    assert f_seq == t_seq            # Python floats, equal (same formulas, same operation order)
    t_sd, f_sd = t_sched.state_dict(), f_sched.state_dict()
    assert sorted(f_sd) == sorted(t_sd)
    for k in ("anneal_epochs", "_anneal_strategy", "base_lrs", "last_epoch", "_step_count", "_last_lr"):
        assert f_sd[k] == t_sd[k], k


def test_swalr_state_dict_round_trip():
    seqs = []
    for L in LIBS:
        opt = _swalr_opt(L, 2)
        sched = L.optim.swa_utils.SWALR(opt, swa_lr=[0.03, 0.01], anneal_epochs=8, anneal_strategy="linear")
        for _ in range(4):
            opt.step()
            sched.step()
        sd = sched.state_dict()
        assert "optimizer" not in sd and "anneal_func" not in sd
        opt2 = _swalr_opt(L, 2)
        sched2 = L.optim.swa_utils.SWALR(opt2, swa_lr=0.9, anneal_epochs=2)   # cos, overwritten by the load
        opt2.load_state_dict(opt.state_dict())
        sched2.load_state_dict(sd)
        assert sched2._anneal_strategy == "linear" and sched2.anneal_func is L.optim.swa_utils.SWALR._linear_anneal
        seq = [opt2.param_groups[i]["swa_lr"] for i in range(2)]
        for _ in range(10):
            opt2.step()
            sched2.step()
            seq.append((sched2.get_last_lr(), [g["lr"] for g in opt2.param_groups]))
        seqs.append(seq)
    assert seqs[1] == seqs[0]


def test_swalr_after_another_scheduler():
    """The tutorial pattern: a CosineAnnealingLR until swa_start, then SWALR anneals from the current lr."""
    seqs = []
    for L in LIBS:
        opt = L.optim.SGD([L.tensor([1.0], requires_grad=True)], lr=0.2)
        sched = L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12)
        swa_sched = L.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=4)
        seq = []
        for i in range(14):
            opt.step()
            (sched if i < 5 else swa_sched).step()
            seq.append(opt.param_groups[0]["lr"])
        seqs.append(seq)
    assert seqs[1] == seqs[0]


def test_swalr_get_lr_warns_outside_step():
    msgs = []
    for L in LIBS:
        opt = _swalr_opt(L, 1)
        sched = L.optim.swa_utils.SWALR(opt, swa_lr=0.05)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lrs = sched.get_lr()
        msgs.append(([str(x.message) for x in w], lrs))
    assert msgs[1] == msgs[0] and len(msgs[0][0]) == 1


@pytest.mark.parametrize("kw", [dict(anneal_strategy="exp"), dict(anneal_epochs=-1), dict(anneal_epochs=2.5),
                                dict(swa_lr=[0.1, 0.2, 0.3]), dict(last_epoch=3)],
                         ids=["strategy", "negative-epochs", "float-epochs", "swa_lr-length", "last_epoch"])
def test_swalr_errors(kw):
    def fn(L):
        return L.optim.swa_utils.SWALR(_swalr_opt(L, 2), **{"swa_lr": 0.05, **kw})
    (_, t_err), (f_out, f_err) = run(fn, torch), run(fn, ft)
    assert t_err is not None
    assert_same_error(t_err, f_err, f_out)


# ---- update_bn ------------------------------------------------------------------------------------------------------
def _bn_model(L):
    nn = L.nn
    torch.manual_seed(1)
    m = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5, momentum=0.3), nn.ReLU(),
                      nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4, momentum=None)), nn.Linear(4, 2))
    return m


def _bn_pair():
    tm = _bn_model(torch)
    fm = _bn_model(ft)
    fm.load_state_dict({k: ft.from_numpy(_np(v)) for k, v in tm.state_dict().items()})
    return tm, fm


LOADERS = {
    "tensors": lambda L: [L.from_numpy(X[i:i + 8]) for i in range(0, 16, 8)],
    "tuples": lambda L: [(L.from_numpy(X[i:i + 8]), L.from_numpy(Y[i:i + 8])) for i in range(0, 24, 8)],
    "dataloader": lambda L: L.utils.data.DataLoader(L.utils.data.TensorDataset(L.from_numpy(X), L.from_numpy(Y)),
                                                    batch_size=8),
    "dataloader-device": lambda L: L.utils.data.DataLoader(L.utils.data.TensorDataset(L.from_numpy(X[:20])),
                                                           batch_size=8),     # a short last batch
}


@pytest.mark.parametrize("loader,was_training", [("tensors", True), ("tuples", False), ("dataloader", True),
                                                 ("dataloader-device", False)])
def test_update_bn(loader, was_training):
    tm, fm = _bn_pair()
    for L, m in ((torch, tm), (ft, fm)):
        with L.no_grad():          # stale statistics that update_bn must reset
            m[1].running_mean.fill_(3.0)
            m[1].num_batches_tracked.fill_(9)
        m.train(was_training)
        L.optim.swa_utils.update_bn(LOADERS[loader](L), m, device="cpu" if loader == "dataloader-device" else None)
        assert m.training is was_training and m[3][1].training is was_training
        assert m[1].momentum == 0.3 and m[3][1].momentum is None
    _assert_state_equal(fm.state_dict(), tm.state_dict(), exact=False, rtol=1e-6, atol=1e-7)
    assert fm[1].num_batches_tracked.item() == len(list(LOADERS[loader](torch)))


def test_update_bn_on_averaged_model_and_without_bn():
    tm, fm = _pair()
    outs = []
    for L, m in ((torch, tm), (ft, fm)):
        avg = L.optim.swa_utils.AveragedModel(m)
        avg.update_parameters(m)
        avg.eval()
        L.optim.swa_utils.update_bn([L.from_numpy(X[:8]), L.from_numpy(X[8:16]), L.from_numpy(X[16:])], avg)
        assert not avg.training
        plain = _model(L, bn=False).eval()
        L.optim.swa_utils.update_bn([L.from_numpy(X[:8])], plain)   # no BatchNorm: returns, mode untouched
        assert not plain.training
        outs.append(avg.state_dict())
    _assert_state_equal(outs[1], outs[0], exact=False, rtol=1e-6, atol=1e-7)
