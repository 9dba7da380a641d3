"""At a +-0 tie, torch's clamp family, relu, hardtanh and fmax / fmin return their input (the first operand): relu(-0.)
is -0., and a reciprocal of it (a disparity 1 / depth) is -inf. XLA's max / min order -0 below +0 (max gives +0, min
-0). torch.maximum / minimum's and a clamp with tensor bounds' tie result depends on torch's vector path (the tensor's
length: 16 elements give the other sign than 1 or 8), so they are left."""
import math

import pytest
import torch

import functorch_lite as ft

CASES = {
    "relu": lambda m, a, b: m.relu(a),
    "F.relu": lambda m, a, b: m.nn.functional.relu(a),
    "relu_": lambda m, a, b: a.clone().relu_(),
    "clamp_min": lambda m, a, b: a.clamp_min(0.0),
    "clamp_min_pos": lambda m, a, b: b.clamp_min(-0.0),
    "clamp_max": lambda m, a, b: b.clamp_max(-0.0),
    "clamp_max_neg": lambda m, a, b: a.clamp_max(0.0),
    "clamp_both": lambda m, a, b: m.clamp(a, 0.0, 1.0),
    "hardtanh": lambda m, a, b: m.nn.functional.hardtanh(a, 0.0, 1.0),
    "fmax": lambda m, a, b: m.fmax(a, b),
    "fmax_rev": lambda m, a, b: m.fmax(b, a),
    "fmin": lambda m, a, b: m.fmin(a, b),
    "fmin_rev": lambda m, a, b: m.fmin(b, a),
}


@pytest.mark.parametrize("n", [1, 16, 1000])
@pytest.mark.parametrize("name", sorted(CASES))
def test_signed_zero_at_ties_as_torch(name, n):
    res = []
    for m in (torch, ft):
        a, b = m.full((n,), -0.0), m.zeros(n)
        res.append([math.copysign(1.0, v) for v in CASES[name](m, a, b).tolist()])
    assert res[1] == res[0]


def test_nan_still_propagates():
    for m in (torch, ft):
        x = m.tensor([float("nan"), -0.0, 2.0])
        assert [math.isnan(v) for v in m.relu(x).tolist()] == [True, False, False]
        assert [math.isnan(v) for v in x.clamp(0.0, 1.0).tolist()] == [True, False, False]
        assert m.fmax(x, m.tensor([1.0, 0.0, float("nan")])).tolist() == [1.0, -0.0, 2.0]
