"""``Module``'s state-dict protocol against real torch: ``_save_to_state_dict``/``_load_from_state_dict``
overrides, ``_metadata`` versions, extra state, ``assign=True``, the state-dict and load hooks, and an old
``weight_g``/``weight_v`` checkpoint loading into the parametrized ``weight_norm``."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _np(t):
    return np.asarray(t.detach().numpy())


def _lin(L, seed=0):
    L.manual_seed(seed)
    m = L.nn.Linear(3, 2)
    with L.no_grad():
        m.weight.copy_(L.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3)))
        m.bias.copy_(L.tensor([0.5, -0.5]))
    return m


def _both(fn):
    out = []
    for L in (ft, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(("ok", fn(L)))
            except Exception as e:  # noqa: BLE001  (the exception itself is compared)
                out.append((type(e).__name__, str(e)))
    (kf, vf), (kt, vt) = out
    assert kf == kt, (out[0], out[1])
    return (vf, vt) if kf == "ok" else (out[0], out[1])  # (an exception: (its type name, its message))


def test_metadata_versions():
    def f(L):
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2))
        md = m.state_dict()._metadata
        return {k: dict(v) for k, v in md.items()}
    a, b = _both(f)
    assert a == b == {"": {"version": 1}, "0": {"version": 1}, "1": {"version": 2}}


def test_batchnorm_checkpoint_without_num_batches_tracked():
    """Below version 2 (or without metadata) the module keeps its own ``num_batches_tracked``; at version 2 its
    absence is a missing key."""
    def f(L, meta):
        bn = L.nn.BatchNorm1d(2)
        bn.num_batches_tracked.fill_(7)
        sd = bn.state_dict()
        del sd["num_batches_tracked"]
        if meta is None:
            del sd._metadata
        else:
            sd._metadata[""]["version"] = meta
        keys = bn.load_state_dict(sd, strict=False)
        return list(keys.missing_keys), int(bn.num_batches_tracked)
    for meta in (None, 1, 2):
        a, b = _both(lambda L: f(L, meta))
        assert a == b, meta
    assert _both(lambda L: f(L, 2))[0] == (["num_batches_tracked"], 7)


class _Renaming:
    """A module whose checkpoints once named its weight ``w``: ``_load_from_state_dict`` renames it, as
    library code does for backward compatibility, and ``_save_to_state_dict`` adds a marker entry."""

    @staticmethod
    def make(L):
        class Old(L.nn.Linear):
            def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs):
                if prefix + "w" in state_dict:
                    state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
                super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                              unexpected_keys, error_msgs)

            def _save_to_state_dict(self, destination, prefix, keep_vars):
                super()._save_to_state_dict(destination, prefix, keep_vars)
                destination[prefix + "marker"] = L.tensor(1.0)
        return Old


def test_overridden_save_and_load_from_state_dict():
    def f(L):
        Old = _Renaming.make(L)
        net = L.nn.Sequential(Old(3, 2))
        sd = net.state_dict()
        keys = list(sd)
        new = {"0.w": L.full((2, 3), 2.0), "0.bias": L.zeros(2)}
        r = net.load_state_dict(new, strict=False)
        return keys, _np(net[0].weight).tolist(), list(r.missing_keys), list(r.unexpected_keys)
    a, b = _both(f)
    assert a == b
    assert a[0] == ["0.weight", "0.bias", "0.marker"] and a[1] == [[2.0] * 3] * 2
    a, b = _both(lambda L: _Renaming.make(L)(3, 2).load_state_dict({"w": L.ones(2, 3), "bias": L.ones(2),
                                                                     "extra": L.ones(1)}))
    assert a == b and a[0] == "RuntimeError" and 'Unexpected key(s) in state_dict: "extra"' in a[1]


def test_extra_state():
    def make(L):
        class WithExtra(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(2, 2)
                self.note = {"step": 3}

            def get_extra_state(self):
                return dict(self.note)

            def set_extra_state(self, state):
                self.note = dict(state, loaded=True)
        return WithExtra

    def f(L):
        W = make(L)
        m = L.nn.Sequential(W())
        sd = m.state_dict()
        m2 = L.nn.Sequential(W())
        m2.load_state_dict(sd)
        return list(sd), sd["0._extra_state"], m2[0].note
    a, b = _both(f)
    assert a == b and a[0] == ["0._extra_state", "0.lin.weight", "0.lin.bias"]
    assert a[2] == {"step": 3, "loaded": True}

    def missing(L):
        m = make(L)()
        sd = m.state_dict()
        del sd["_extra_state"]
        m.load_state_dict(sd)
    a, b = _both(missing)
    assert a == b and 'Missing key(s) in state_dict: "_extra_state"' in a[1]
    # a module without set_extra_state: an _extra_state entry is unexpected
    a, b = _both(lambda L: _lin(L).load_state_dict({**_lin(L).state_dict(), "_extra_state": 1}))
    assert a == b and 'Unexpected key(s) in state_dict: "_extra_state"' in a[1]
    a, b = _both(lambda L: L.nn.Linear(1, 1).get_extra_state())
    assert a == b and a[0] == "RuntimeError"


def test_assign_replaces_the_tensors():
    def f(L):
        m = _lin(L)
        m.bias.requires_grad_(False)
        old = m.weight
        w, bias = L.full((2, 3), 4.0), L.ones(2)
        m.load_state_dict({"weight": w, "bias": bias}, assign=True)
        return (m.weight is not old, type(m.weight).__name__, m.weight.requires_grad, m.bias.requires_grad,
                _np(m.weight).tolist(), m.weight.data_ptr() == w.data_ptr())
    a, b = _both(f)
    assert a == b and a[:4] == (True, "Parameter", True, False)


def test_state_dict_hooks():
    def f(L):
        m = L.nn.Sequential(_lin(L))
        seen = []
        h1 = m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append(("pre", prefix,
                                                                                             keep_vars)))

        def post(mod, sd, prefix, meta):
            seen.append(("post", prefix, dict(meta)))
            sd[prefix + "added"] = L.tensor(2.0)
        h2 = m[0].register_state_dict_post_hook(post)
        keys = list(m.state_dict(keep_vars=True))
        h1.remove()
        h2.remove()
        keys2 = list(m.state_dict())
        m[0]._register_state_dict_hook(lambda mod, sd, prefix, meta: {"replaced": L.tensor(1.0)})
        return seen, keys, keys2, list(m.state_dict())
    a, b = _both(f)
    assert a == b
    assert a[0] == [("pre", "0.", True), ("post", "0.", {"version": 1})]
    assert a[1] == ["0.weight", "0.bias", "0.added"] and a[2] == ["0.weight", "0.bias"]

    def bad(L):  # the public post hook may not return a value
        m = L.nn.Linear(1, 1)
        m.register_state_dict_post_hook(lambda *x: {})
        return m.state_dict()
    a, b = _both(bad)
    assert a == b == ("RuntimeError", "state_dict post-hook must return None")


def test_load_hooks():
    def f(L):
        m = L.nn.Sequential(_lin(L))
        seen = []

        def pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            seen.append(("pre", type(mod).__name__, prefix, sorted(sd)))
            if prefix + "W" in sd:
                sd[prefix + "weight"] = sd.pop(prefix + "W")
        m[0].register_load_state_dict_pre_hook(pre)
        m[0]._register_load_state_dict_pre_hook(
            lambda sd, prefix, *rest: seen.append(("private", prefix)))

        def post(mod, keys):
            seen.append(("post", type(mod).__name__, list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.missing_keys.clear()  # (edits in place: the strict load then succeeds)
        m.register_load_state_dict_post_hook(post)
        r = m.load_state_dict({"0.W": L.full((2, 3), 9.0)})
        return seen, _np(m[0].weight).tolist(), list(r.missing_keys)
    a, b = _both(f)
    assert a == b
    assert a[0][0] == ("pre", "Linear", "0.", ["0.W"]) and a[0][1] == ("private", "0.")
    assert a[0][2] == ("post", "Sequential", ["0.bias"], []) and a[2] == []

    def returns(L):
        m = L.nn.Linear(1, 1)
        m.register_load_state_dict_post_hook(lambda mod, keys: 1)
        m.load_state_dict(m.state_dict())
    a, b = _both(returns)
    assert a == b and a[0] == "AssertionError"


def test_copy_errors_and_types():
    a, b = _both(lambda L: L.nn.Linear(2, 2).load_state_dict([("weight", 1)]))
    assert a == b and a[0] == "TypeError"
    a, b = _both(lambda L: L.nn.Linear(2, 2).load_state_dict({"weight": 1.0, "bias": L.zeros(3)}))
    assert a == b and "size mismatch for bias" in a[1] and 'parameter named "weight"' in a[1]

    def scalar(L):  # a 1-element checkpoint entry loads into a 0-d buffer
        bn = L.nn.BatchNorm1d(2)
        sd = bn.state_dict()
        sd["num_batches_tracked"] = L.tensor([5])
        bn.load_state_dict(sd)
        return int(bn.num_batches_tracked), tuple(bn.num_batches_tracked.shape)
    a, b = _both(scalar)
    assert a == b == (5, ())


def test_positional_state_dict_arguments_warn():
    for L in (ft, torch):
        m = L.nn.Linear(1, 1)
        with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
            sd = m.state_dict(None, "p.")
        assert list(sd) == ["p.weight", "p.bias"]


def test_old_weight_norm_checkpoint_loads_into_parametrized_module():
    def f(L):
        L.manual_seed(0)
        old = {"weight_g": L.full((2, 1), 2.0), "weight_v": L.tensor([[3.0, 4.0], [0.0, 5.0]]),
               "bias": L.zeros(2)}
        m = L.nn.utils.parametrizations.weight_norm(L.nn.Linear(2, 2))
        m.load_state_dict(old)
        return _np(m.weight).tolist(), sorted(m.state_dict())
    a, b = _both(f)
    assert a == b
    np.testing.assert_allclose(a[0], [[1.2, 1.6], [0.0, 2.0]], rtol=1e-6)
