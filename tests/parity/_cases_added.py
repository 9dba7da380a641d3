"""Op-table sweep cases for the ops added with test_added_ops.py (addcmul/addcdiv, isin, diag, bernoulli,
activations, distances); merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``; ``mod`` is torch or functorch_lite.
"""
import numpy as np

R = np.random.default_rng(13)


def _rnd(*s):
    return R.standard_normal(s)


def _pos(*s):
    return R.uniform(0.5, 2.0, s)


def _F(m):
    return m.nn.functional


CASES = {
    "addcmul": ([_rnd(3, 4), _rnd(4), _rnd(3, 1)], lambda m, a, b, c: m.addcmul(a, b, c, value=0.5)),
    "addcdiv": ([_rnd(3, 4), _rnd(3, 4), _pos(4)], lambda m, a, b, c: m.addcdiv(a, b, c, value=-2)),
    "diag": ([_rnd(4)], lambda m, a: m.diag(a, 1)),
    # probabilities 0 or 1: both libraries draw deterministically
    "_bernoulli": ([_rnd(6)], lambda m, a: m.bernoulli(a.clamp(0, 1).ceil())),
    "_hardswish": ([np.array([-4.0, -2.5, -1.0, 0.3, 2.0, 3.5])], lambda m, x: _F(m).hardswish(x)),
    "_hardsigmoid": ([np.array([-4.0, -2.5, -1.0, 0.3, 2.0, 3.5])], lambda m, x: _F(m).hardsigmoid(x)),
    "prelu": ([_rnd(2, 3, 4), _pos(3)], lambda m, x, w: _F(m).prelu(x, w)),
    "_glu": ([_rnd(3, 4)], lambda m, x: _F(m).glu(x, 1)),
    "cosine_similarity": ([_rnd(3, 4), _rnd(4)], lambda m, a, b: _F(m).cosine_similarity(a, b, dim=-1)),
    "pairwise_distance": ([_rnd(3, 4), _rnd(3, 4)], lambda m, a, b: _F(m).pairwise_distance(a, b, p=3.0)),
}

FORWARD_ONLY = {
    "isin": ([np.round(_rnd(3, 4) * 2), np.array([0.0, 1.0, -2.0])], lambda m, a, b: m.isin(a, b)),
}
