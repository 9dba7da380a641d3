"""``nn.Module`` API corners a red-team found, against torch 2.13:
- ``Module.__setstate__`` did not exist: a subclass whose ``__setstate__`` calls ``super().__setstate__(state)``
  failed on ``pickle.loads`` / ``copy.deepcopy`` (torch's updates ``__dict__`` and makes the hook tables an old
  pickle lacks); ``__getstate__`` leaves out the compiled program (a compiled module pickles and deep-copies);
- torch's hook tables ``_forward_hooks_with_kwargs``, ``_forward_pre_hooks_with_kwargs``,
  ``_forward_hooks_always_called``, ``_state_dict_hooks``, ``_state_dict_pre_hooks``, ``_load_state_dict_pre_hooks``,
  ``_load_state_dict_post_hooks`` and ``_is_full_backward_hook`` were missing; the tables are what the call reads
  (clearing one, or deleting an entry, removes those hooks) and non-full backward hooks live in ``_backward_hooks``;
- ``call_super_init``, ``dump_patches``, ``T_destination``, ``xpu()``, ``ipu()``, ``mtia()`` were missing;
- the old ``nn.utils.spectral_norm`` left out its ``state_dict()._metadata`` entry and its load pre-hook (which
  converts a checkpoint saved before ``weight_v`` was a buffer)."""
import collections
import copy
import io
import pickle
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

LIBS = (torch, ft)


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__, str(e))


def _run(fn):
    try:
        return ("ok", fn()), None
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__, str(e)), e


def _same(fn):
    """``fn(lib)`` gives the same outcome with torch and the facade (an exception: the same message, and the
    facade's an instance of a class named as torch's: ``DeviceUnavailableError`` is an ``AssertionError``)."""
    (t, te), (f, fe) = _run(lambda: fn(torch)), _run(lambda: fn(ft))
    if te is not None and fe is not None:
        assert t[2] == f[2] and t[1] in {c.__name__ for c in type(fe).__mro__}, (t, f)
        return t
    assert t == f, (t, f)
    return t


def _r(t):
    return [round(float(v), 4) for v in np.asarray(t.detach().cpu().numpy() if hasattr(t, "cpu") else t).ravel()]


def _lin(L):
    m = L.nn.Linear(2, 2)
    with L.no_grad():
        m.weight.copy_(L.tensor([[1., 2.], [3., 4.]]))
        m.bias.fill_(0.5)
    return m


# module-level hooks (picklable)
def _times2(mod, args, out):
    return out * 2


def _plus1_pre(mod, args):
    return (args[0] + 1,)


def _kw_plus100(mod, args, kwargs, out):
    return out + 100


class _Restoring:
    """``M(L)``: a module whose ``__setstate__`` calls ``super().__setstate__``."""

    cache = {}

    @classmethod
    def get(cls, L):
        if L not in cls.cache:
            class M(L.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.l = _lin(L)

                def __setstate__(self, state):
                    super().__setstate__(state)
                    self.restored = True

                def forward(self, x):
                    return self.l(x)
            M.__qualname__ = f"_M_{L.__name__}"  # (picklable by name; ``__name__`` "M" in messages)
            globals()[M.__qualname__] = M
            cls.cache[L] = M
        return cls.cache[L]


# ---- 1. __setstate__ / __getstate__ ---------------------------------------------------------------------------
def test_module_defines_getstate_setstate():
    for L in LIBS:
        assert "__setstate__" in L.nn.Module.__dict__ and "__getstate__" in L.nn.Module.__dict__


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_subclass_setstate_calls_super(how):
    def run(L):
        m = _Restoring.get(L)()
        c = pickle.loads(pickle.dumps(m)) if how == "pickle" else copy.deepcopy(m)
        return c.restored, _r(c(L.ones(1, 2))), list(c.state_dict())
    assert _same(run) == ("ok", (True, [3.5, 7.5], ["l.weight", "l.bias"]))


_TABLES = ["_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks",
           "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
           "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"]


def test_setstate_of_old_pickle_makes_missing_tables():
    """An old checkpoint's state, without the tables torch added later (and without ``_is_full_backward_hook`` /
    ``_non_persistent_buffers_set``): the module calls, saves, takes hooks and non-persistent buffers."""
    def run(L):
        M = _Restoring.get(L)
        st = dict(M().__dict__)
        for k in [t for t in _TABLES if t not in ("_forward_hooks", "_backward_hooks")] + [
                "_non_persistent_buffers_set", "_is_full_backward_hook", "_hooks_with_kwargs"]:
            st.pop(k, None)
        m = M.__new__(M)
        m.__setstate__(st)
        x = L.ones(1, 2)
        out = [m.restored, _r(m(x)), list(m.state_dict()), m._is_full_backward_hook,
               [len(getattr(m, t)) for t in _TABLES]]
        m.register_forward_hook(_times2)
        m.register_forward_pre_hook(_plus1_pre, with_kwargs=False)
        m.register_buffer("nb", L.ones(1), persistent=False)
        return out + [_r(m(x)), list(m.state_dict())]
    assert _same(run)[1][-2:] == [[13.0, 29.0], ["l.weight", "l.bias"]]


@pytest.mark.parametrize("table", ["_forward_hooks", "_backward_hooks"])
def test_setstate_of_old_pickle_without_table_call_raises(table):
    """torch fills neither ``_forward_hooks`` nor ``_backward_hooks``: the call raises its AttributeError."""
    def run(L):
        M = _Restoring.get(L)
        st = dict(M().__dict__)
        st.pop(table)
        m = M.__new__(M)
        m.__setstate__(st)
        return _r(m(L.ones(1, 2)))
    assert _same(run)[0] == "raised"


def test_pickle_and_deepcopy_keep_hooks():
    def run(L):
        m = _lin(L)
        m.register_forward_hook(_times2)
        m.register_forward_pre_hook(_plus1_pre)
        m.register_forward_hook(_kw_plus100, with_kwargs=True, always_call=True)
        x = L.ones(1, 2)
        out = []
        for c in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
            out.append((_r(c(x)), len(c._forward_hooks), len(c._forward_pre_hooks),
                        len(c._forward_hooks_with_kwargs), len(c._forward_hooks_always_called)))
        return out
    assert _same(run) == ("ok", [([113.0, 129.0], 2, 1, 1, 1)] * 2)


def test_pickle_plain_and_getstate_fields():
    def run(L):
        m = _lin(L)
        st = m.__getstate__()
        c = pickle.loads(pickle.dumps(m))
        return (_r(c(L.ones(1, 2))), _r(copy.deepcopy(m)(L.ones(1, 2))), st is not m.__dict__,
                sorted(k for k in st if not k.startswith("_")))
    _same(run)


def test_compiled_module_pickles_and_deepcopies():
    """torch's ``__getstate__`` drops the compiled call: the copy runs (eagerly) with the same result."""
    def run(L):
        m = _lin(L)
        m.compile()
        x = L.ones(1, 2)
        m(x)
        return _r(pickle.loads(pickle.dumps(m))(x)), _r(copy.deepcopy(m)(x))
    assert _same(run) == ("ok", ([3.5, 7.5], [3.5, 7.5]))
    m = _lin(ft)
    m.compile()
    m(ft.ones(1, 2))
    assert "_compiled_call" not in copy.deepcopy(m).__dict__ and "_compiled_call" in m.__dict__


def test_parametrized_and_old_norm_modules_copy():
    def run(L):
        U = L.nn.utils
        x = L.ones(1, 2)
        wn = _lin(L)
        U.parametrizations.weight_norm(wn)
        old_wn = _lin(L)
        U.weight_norm(old_wn)
        sn = _lin(L)
        U.spectral_norm(sn)
        return (_r(copy.deepcopy(wn)(x)), _outcome(lambda: pickle.dumps(wn))[:2], _r(pickle.loads(pickle.dumps(
            old_wn))(x)), type(copy.deepcopy(sn)).__name__, type(pickle.loads(pickle.dumps(sn))).__name__,
            pickle.loads(pickle.dumps(sn)).state_dict()._metadata)
    _same(run)


def test_save_load_module_with_hook():
    for L in LIBS:
        m = _lin(L)
        m.register_forward_hook(_times2)
        buf = io.BytesIO()
        L.save(m, buf)
        buf.seek(0)
        got = L.load(buf, weights_only=False)
        assert _r(got(L.ones(1, 2))) == [7.0, 15.0]
        assert type(got).__name__ == "Linear" and len(got._forward_hooks) == 1


class _OwnState(ft.nn.Linear):
    """A subclass pickling a ``__dict__`` copy of its own (a common ``__getstate__``)."""

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("scratch", None)
        return state


def test_save_load_subclass_own_getstate():
    m = _OwnState(2, 2)
    with ft.no_grad():
        m.weight.copy_(ft.tensor([[1., 2.], [3., 4.]]))
        m.bias.fill_(0.5)
    m.scratch = object()
    m.register_forward_hook(_times2, with_kwargs=False, always_call=True)
    buf = io.BytesIO()
    ft.save(m, buf)
    buf.seek(0)
    got = ft.load(buf, weights_only=False)
    assert type(got) is _OwnState and not hasattr(got, "scratch")
    assert _r(got(ft.ones(1, 2))) == [7.0, 15.0] and len(got._forward_hooks_always_called) == 1


def test_load_module_saved_by_torch():
    """A module pickled by real torch (its ``__dict__`` as state) still loads as the facade's module."""
    m = _lin(torch)
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    got = ft.load(buf, weights_only=False)
    assert isinstance(got, ft.nn.Linear) and _r(got(ft.ones(1, 2))) == [3.5, 7.5]
    assert list(got._forward_hooks_with_kwargs) == [] and got._is_full_backward_hook is None


def test_facade_older_layout_pickle_migrates():
    """A module pickled by this facade before the change kept the kwargs / always-called hook ids in sets and the
    non-full backward hooks apart: its state is moved to torch's tables."""
    m = _lin(ft)
    hk = m.register_forward_hook(_kw_plus100, with_kwargs=True, always_call=True)
    hp = m.register_forward_pre_hook(_plus1_pre)
    st = m.__getstate__()
    st["_hooks_with_kwargs"] = {hk.id}
    st["_hooks_always_called"] = {hk.id}
    for t in ("_forward_hooks_with_kwargs", "_forward_hooks_always_called"):
        st.pop(t)
    st["_non_full_backward_hooks"] = ft.nn.modules.module._Registry({12345: _times2})
    st["_is_full_backward_hook"] = False
    c = ft.nn.Linear.__new__(ft.nn.Linear)
    c.__setstate__(st)
    assert list(c._forward_hooks_with_kwargs) == [hk.id] and list(c._forward_hooks_always_called) == [hk.id]
    assert list(c._backward_hooks) == [12345] and hp.id in c._forward_pre_hooks
    assert not {"_hooks_always_called", "_non_full_backward_hooks"} & set(vars(c))
    assert _r(c(ft.ones(1, 2))) == [106.5, 114.5]


# ---- 2. the hook tables ---------------------------------------------------------------------------------------
def test_hook_tables_exist():
    def run(L):
        m = L.nn.Linear(1, 1)
        return [(t, isinstance(getattr(m, t), collections.OrderedDict), len(getattr(m, t))) for t in _TABLES] + [
            m._is_full_backward_hook]
    _same(run)


def test_forward_hook_marks_hold_ids():
    def run(L):
        m = L.nn.Linear(1, 1)
        h1 = m.register_forward_hook(lambda *a: None)
        h2 = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
        h3 = m.register_forward_pre_hook(lambda *a: None, with_kwargs=True, prepend=True)
        h4 = m.register_forward_pre_hook(lambda *a: None)
        out = [list(m._forward_hooks) == [h1.id, h2.id], list(m._forward_pre_hooks) == [h3.id, h4.id],
               dict(m._forward_hooks_with_kwargs) == {h2.id: True}, dict(m._forward_hooks_always_called) == {
                   h2.id: True}, dict(m._forward_pre_hooks_with_kwargs) == {h3.id: True}]
        h2.remove()
        h3.remove()
        return out + [len(m._forward_hooks_with_kwargs), len(m._forward_hooks_always_called),
                      len(m._forward_pre_hooks_with_kwargs), len(m._forward_hooks), len(m._forward_pre_hooks)]
    assert _same(run) == ("ok", [True] * 5 + [0, 0, 0, 1, 1])


def test_clearing_tables_removes_hooks():
    def run(L):
        log = []
        m = _lin(L)
        x = L.ones(1, 2)
        m.register_forward_hook(lambda mod, a, o: log.append("fwd") or o * 2)
        hp = m.register_forward_pre_hook(lambda mod, a: log.append("pre"))
        m.register_forward_hook(lambda mod, a, k, o: log.append(("kw", sorted(k))), with_kwargs=True,
                                always_call=True)
        hk = m.register_forward_pre_hook(lambda mod, a, k: log.append(("prekw", sorted(k))), with_kwargs=True,
                                         prepend=True)
        out = [_r(m(x)), log[:]]
        log.clear()
        m._forward_hooks.clear()
        out += [_r(m(x)), log[:], len(m._forward_hooks_with_kwargs)]
        log.clear()
        del m._forward_pre_hooks[hp.id]
        out += [_r(m(x)), log[:]]
        log.clear()
        hk.remove()
        out += [_r(m(x)), log[:]]
        return out
    _same(run)


def test_with_kwargs_mark_cleared_calls_without_kwargs():
    def run(L):
        log = []
        m = _lin(L)
        m.register_forward_hook(lambda mod, *a: log.append(len(a)), with_kwargs=True)
        m.register_forward_pre_hook(lambda mod, *a: log.append(("pre", len(a))), with_kwargs=True)
        m(L.ones(1, 2))
        m._forward_hooks_with_kwargs.clear()
        del m._forward_pre_hooks_with_kwargs[next(iter(m._forward_pre_hooks_with_kwargs))]
        m(L.ones(1, 2))
        return log
    assert _same(run) == ("ok", [("pre", 2), 3, ("pre", 1), 2])


def test_always_called_hooks_order_and_table():
    def run(L):
        log = []

        class Bad(L.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        b = Bad()
        b.register_forward_hook(lambda mod, a, o: log.append(("a1", o)), always_call=True)
        b.register_forward_hook(lambda mod, a, o: log.append("never"))
        b.register_forward_hook(lambda mod, a, k, o: log.append(("a2", o, sorted(k))), with_kwargs=True,
                                always_call=True, prepend=True)
        first = _outcome(lambda: b(L.ones(1)))
        out = [first, log[:]]
        log.clear()
        b._forward_hooks_always_called.clear()
        out += [_outcome(lambda: b(L.ones(1))), log[:]]
        return out
    assert _same(run)[1][1] == [("a2", None, []), ("a1", None)]


def test_global_hook_with_module_kwargs_hook():
    def run(L):
        log = []
        g = L.nn.modules.module.register_module_forward_hook(lambda mod, a, o: log.append("g"))
        try:
            m = _lin(L)
            m.register_forward_hook(lambda mod, a, k, o: log.append(("kw", sorted(k))), with_kwargs=True)
            m.register_forward_pre_hook(lambda mod, a, k: log.append("prekw"), with_kwargs=True)
            m(L.ones(1, 2))
        finally:
            g.remove()
        return log
    assert _same(run) == ("ok", ["prekw", "g", ("kw", [])])


def test_backward_hook_tables():
    def run(L):
        log = []
        x = L.ones(1, 2, requires_grad=True)
        m = _lin(L)
        m.register_full_backward_hook(lambda mod, gi, go: log.append("full"))
        out = [len(m._backward_hooks), m._is_full_backward_hook]
        m(x).sum().backward()
        m._backward_hooks.clear()
        m(x).sum().backward()
        out += [log[:], m._is_full_backward_hook, _outcome(lambda: m.register_backward_hook(lambda *a: None))]
        log.clear()
        m2 = _lin(L)
        m2.register_backward_hook(lambda mod, gi, go: log.append("nonfull"))
        out += [len(m2._backward_hooks), m2._is_full_backward_hook,
                _outcome(lambda: m2.register_full_backward_hook(lambda *a: None))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m2(x).sum().backward()
            del m2._backward_hooks[next(iter(m2._backward_hooks))]
            m2(x).sum().backward()
        out.append(log[:])
        log.clear()
        m3 = _lin(L)
        m3.register_full_backward_pre_hook(lambda mod, go: log.append("bpre"))
        out += [len(m3._backward_pre_hooks), m3._is_full_backward_hook]
        m3(x).sum().backward()
        m3._backward_pre_hooks.clear()
        m3(x).sum().backward()
        return out + [log[:]]
    _same(run)


def test_state_dict_hook_tables():
    def run(L):
        log = []
        m = _lin(L)
        hs = m.register_state_dict_post_hook(lambda mod, sd, p, lm: log.append("sdpost"))
        hsp = m.register_state_dict_pre_hook(lambda mod, p, kv: log.append("sdpre"))
        hl = m.register_load_state_dict_pre_hook(lambda *a: log.append("ldpre"))
        hlp = m.register_load_state_dict_post_hook(lambda *a: log.append("ldpost"))
        out = [list(m._state_dict_hooks) == [hs.id], list(m._state_dict_pre_hooks) == [hsp.id],
               list(m._load_state_dict_pre_hooks) == [hl.id], list(m._load_state_dict_post_hooks) == [hlp.id]]
        m.load_state_dict(m.state_dict())
        out.append(log[:])
        log.clear()
        for t in ("_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                  "_load_state_dict_post_hooks"):
            getattr(m, t).clear()
        m.load_state_dict(m.state_dict())
        return out + [log[:]]
    assert _same(run) == ("ok", [True] * 4 + [["sdpre", "sdpost", "ldpre", "ldpost"], []])


def test_compiled_module_follows_hook_tables():
    """A compiled module (the facade's ``Module.compile``) against torch eager: the tables it reads changing."""
    def run(L, compiled):
        log = []
        m = _lin(L)
        if compiled:
            m.compile()
        x = L.ones(1, 2)
        out = [_r(m(x))]
        m.register_forward_hook(lambda mod, a, k, o: o * 3, with_kwargs=True)
        out.append(_r(m(x)))
        m._forward_hooks_with_kwargs.clear()
        out.append(_outcome(lambda: m(x))[:2])
        m._forward_hooks.clear()
        out.append(_r(m(x)))
        m.register_forward_pre_hook(lambda mod, a, k: ((a[0] * 2,), k), with_kwargs=True)
        out.append(_r(m(x)))
        m._forward_pre_hooks.clear()
        xg = L.ones(1, 2, requires_grad=True)
        m.register_backward_hook(lambda mod, gi, go: log.append("nf"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(xg).sum().backward()
            m._backward_hooks.clear()
            m(xg).sum().backward()
        return out + [log]
    assert run(ft, True) == run(torch, False)


def test_module_call_without_hooks_runs_forward():
    """The hook-free call (no per-call work beyond the table checks) and the first hook added after it."""
    def run(L):
        class Id(L.nn.Module):
            def forward(self, x, *, k=0):
                return x + k
        m = Id()
        x = L.ones(1)
        out = [_r(m(x)), _r(m(x, k=2))]
        m.register_forward_hook(_times2)
        return out + [_r(m(x, k=1))]
    assert _same(run) == ("ok", [[1.0], [3.0], [4.0]])


# ---- 3. attributes and device moves -------------------------------------------------------------------------
def test_class_attributes():
    def run(L):
        M = L.nn.Module
        m = L.nn.Linear(1, 1)
        return (M.call_super_init, M.dump_patches, m.call_super_init, m.dump_patches, M.T_destination.__name__,
                M.T_destination.__bound__, m.T_destination is M.T_destination)
    import typing
    assert _same(run) == ("ok", (False, False, False, False, "T_destination", dict[str, typing.Any], True))


def test_call_super_init():
    def run(L):
        class Mix:
            def __init__(self, a=0, **kw):
                self.a = a
                super().__init__(**kw)

        class Coop(L.nn.Module, Mix):
            call_super_init = True

        class Plain(L.nn.Module):
            call_super_init = True

        class NC(L.nn.Module):
            def __init__(self):
                super().__init__(3)

        class NC2(L.nn.Module):
            def __init__(self):
                super().__init__(b=3)
        return (Coop(a=5).a, Coop().training, _outcome(lambda: Plain(a=1))[:2], _outcome(NC), _outcome(NC2))
    _same(run)


DEVICE_ARGS = [None, "xpu", "ipu", "mtia", "cpu", "cuda:0", -1, 0, 1, 1.5]


@pytest.mark.parametrize("meth", ["xpu", "ipu", "mtia"])
@pytest.mark.parametrize("dev", DEVICE_ARGS, ids=repr)
def test_missing_backend_moves(meth, dev):
    _same(lambda L: getattr(L.nn.Linear(1, 1), meth)(dev))


@pytest.mark.parametrize("meth", ["xpu", "ipu", "mtia"])
def test_missing_backend_moves_modules(meth):
    _same(lambda L: getattr(L.nn.BatchNorm1d(1, affine=False), meth)())  # buffers only
    _same(lambda L: repr(getattr(L.nn.ReLU(), meth)()))                 # no tensors: returned
    _same(lambda L: getattr(L.nn.Linear(1, 1), meth)(device=0))


# ---- 4. the old spectral_norm's metadata and load pre-hook ----------------------------------------------------
def _sn(L, n=30, **kw):
    lin = L.nn.Linear(3, 3)
    with L.no_grad():
        lin.weight.copy_(L.tensor([[2., 0.5, 0.], [0.3, 1., 0.2], [0., 0.1, 0.5]]))
        lin.bias.copy_(L.tensor([0.1, 0.2, 0.3]))
    L.nn.utils.spectral_norm(lin, n_power_iterations=n, **kw)
    with L.no_grad():  # (a fixed start for the power iteration: the random one differs between the libraries)
        lin.weight_u.copy_(L.tensor([0.6, 0.8, 0.]))
        lin.weight_v.copy_(L.tensor([0., 0.6, 0.8]))
    return lin


def _sd_values(sd):
    return {k: _r(v) for k, v in sd.items()}


def test_spectral_norm_metadata():
    def run(L):
        lin = _sn(L)
        seq = L.nn.Sequential(L.nn.ReLU(), lin)
        bil = L.nn.Bilinear(2, 2, 2)
        L.nn.utils.spectral_norm(bil, "weight")
        L.nn.utils.spectral_norm(bil, "bias", dim=0)
        return (lin.state_dict()._metadata, lin.state_dict()._metadata, seq.state_dict()._metadata,
                bil.state_dict()._metadata, len(lin._state_dict_hooks), len(lin._load_state_dict_pre_hooks),
                [type(h).__name__ for h in lin._state_dict_hooks.values()])
    assert _same(run)[1][0] == collections.OrderedDict([("", {"version": 1, "spectral_norm": {"weight.version": 1}})])


def test_spectral_norm_module_exports():
    import importlib
    t = importlib.import_module("torch.nn.utils.spectral_norm")
    f = importlib.import_module("functorch_lite.nn.utils.spectral_norm")
    assert t.__all__ == f.__all__


def _old_checkpoint(L, meta):
    """A checkpoint of before ``weight_v`` was a buffer: ``weight`` (the normalised weight), no ``weight_v``."""
    sd = collections.OrderedDict()
    sd["bias"] = L.tensor([0.1, 0.2, 0.3])
    sd["weight_orig"] = L.tensor([[2., 0.5, 0.1], [0.3, 1., 0.2], [0.05, 0.1, 0.5]])
    sd["weight_u"] = L.tensor([0.96, 0.27, 0.07])
    sd["weight"] = sd["weight_orig"] / 2.1
    if meta is not None:
        sd._metadata = collections.OrderedDict([("", meta)])
    return sd


@pytest.mark.parametrize("meta", [None, {"version": 1}, {"version": 1, "spectral_norm": {"weight.version": 0}}],
                         ids=["no-metadata", "no-sn-entry", "sn-version-0"])
def test_spectral_norm_loads_old_checkpoint(meta):
    def run(L):
        lin = _sn(L)
        keys = lin.load_state_dict(_old_checkpoint(L, meta))
        return str(keys), _sd_values(lin.state_dict())
    _same(run)


def test_spectral_norm_load_variants():
    def run(L):
        lin = _sn(L)
        lin(L.ones(1, 3))
        sd = lin.state_dict()
        out = []
        l2 = _sn(L, n=1)
        out.append((str(l2.load_state_dict(sd)), _sd_values(l2.state_dict())))
        plain = collections.OrderedDict(sd)  # the current keys, no metadata: taken as current
        l3 = _sn(L, n=1)
        out.append((str(l3.load_state_dict(plain)), _sd_values(l3.state_dict())))
        no_u = collections.OrderedDict((k, v) for k, v in sd.items() if k != "weight_u")
        out.append(_outcome(lambda: str(_sn(L).load_state_dict(no_u))))
        out.append(_outcome(lambda: str(_sn(L).load_state_dict(no_u, strict=False))))
        current_meta = collections.OrderedDict((k, v) for k, v in sd.items() if k != "weight_v")
        current_meta._metadata = sd._metadata  # (version 1: nothing converted)
        out.append(_outcome(lambda: str(_sn(L).load_state_dict(current_meta))))
        out.append(_outcome(lambda: str(L.nn.Linear(3, 3).load_state_dict(sd, strict=False))))
        return out
    _same(run)


def test_remove_spectral_norm_hooks():
    """``remove_spectral_norm`` drops the state-dict hook; torch's load pre-hook stays (its loop looks among
    wrapped hooks), so the removed module's own state dict then reports ``weight_orig`` / ``weight_u`` missing."""
    def run(L):
        lin = _sn(L)
        L.nn.utils.remove_spectral_norm(lin)
        return (lin.state_dict()._metadata, len(lin._state_dict_hooks), len(lin._load_state_dict_pre_hooks),
                _outcome(lambda: str(lin.load_state_dict(lin.state_dict()))),
                _outcome(lambda: str(lin.load_state_dict(lin.state_dict(), strict=False))))
    _same(run)
