"""``Module.get_parameter``/``get_buffer``/``set_submodule``/``to_empty``/``type`` against real torch: results,
and exception types and messages."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _net(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(2, 3), L.nn.Sequential(L.nn.BatchNorm1d(3), L.nn.ReLU()))


def _run(fn):
    out = []
    for L in (ft, torch):
        try:
            out.append(("ok", fn(L)))
        except Exception as e:  # noqa: BLE001  (the exception itself is compared)
            out.append((type(e).__name__, str(e)))
    assert out[0] == out[1], out
    return out[0]


@pytest.mark.parametrize("target", ["0.weight", "1.0.bias", "0.nope", "1.0.running_mean", "2.weight", "1.x.y"])
def test_get_parameter(target):
    def f(L):
        p = _net(L).get_parameter(target)
        return type(p).__name__, tuple(p.shape), p.requires_grad
    _run(f)


@pytest.mark.parametrize("target", ["1.0.running_var", "1.0.num_batches_tracked", "1.0.weight", "1.0.nope", "0"])
def test_get_buffer(target):
    def f(L):
        b = _net(L).get_buffer(target)
        return tuple(b.shape), str(b.dtype).replace("functorch_lite.", "torch.")
    _run(f)


@pytest.mark.parametrize("target,strict", [("1.1", False), ("1.1", True), ("1.5", False), ("1.5", True),
                                           ("0.weight", False), ("", False), ("9.0", False)])
def test_set_submodule(target, strict):
    def f(L):
        net = _net(L)
        net.set_submodule(target, L.nn.Tanh(), strict=strict)
        return repr(net)
    _run(f)
    _run(lambda L: _net(L).set_submodule("1.1", 3))


def test_to_empty_and_type():
    def f(L):
        net = _net(L)
        old = net[0].weight
        net.to_empty(device="cpu")
        same = net[0].weight is old
        shapes = [(k, tuple(v.shape), str(v.dtype).split(".")[-1]) for k, v in net.state_dict().items()]
        top = L.nn.Sequential(L.nn.Linear(1, 1))
        top[0].register_buffer("b", L.ones(2))
        top.to_empty(device="cpu", recurse=False)  # (no own tensors at the top: nothing replaced)
        net.type(L.float64)
        dts = [(k, str(v.dtype).split(".")[-1]) for k, v in net.state_dict().items()]
        return same, shapes, dts, float(top[0].b.sum())
    _run(f)
    # type() casts values: the same float32 weights, cast, equal torch's
    w = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    got = []
    for L in (ft, torch):
        net = _net(L)
        with L.no_grad():
            net[0].weight.copy_(L.tensor(w))
        got.append(np.asarray(net.type(L.float64)[0].weight.detach().numpy()))
    assert got[0].dtype == got[1].dtype == np.float64
    np.testing.assert_array_equal(got[0], got[1])
