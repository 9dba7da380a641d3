"""Op-table sweep cases for the ops of functorch_lite/ops/norm.py; merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``; ``mod`` is torch or functorch_lite.
"""
import numpy as np

R = np.random.default_rng(11)


def _rnd(*s):
    return R.standard_normal(s)


def _pos(*s):
    return R.uniform(0.5, 2.0, s)


def _F(m):
    return m.nn.functional


def _idx(m, v):
    return m.tensor(np.asarray(v, dtype=np.int64))


def _bn(m, x, w, b):
    rm = m.tensor(np.array([0.1, -0.2, 0.3])).to(x.dtype)
    rv = m.tensor(np.array([1.0, 0.5, 2.0])).to(x.dtype)
    return _F(m).batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)


CASES = {
    "_batch_norm": ([_rnd(4, 3, 2), _pos(3), _rnd(3)], _bn),
    "layer_norm": ([_rnd(3, 2, 4), _pos(2, 4), _rnd(2, 4)], lambda m, x, w, b: _F(m).layer_norm(x, (2, 4), w, b)),
    "group_norm": ([_rnd(2, 4, 3), _pos(4), _rnd(4)], lambda m, x, w, b: _F(m).group_norm(x, 2, w, b)),
    "rms_norm": ([_rnd(3, 5), _pos(5)], lambda m, x, w: _F(m).rms_norm(x, (5,), w)),
    "embedding": ([_rnd(5, 3)], lambda m, w: _F(m).embedding(_idx(m, [[0, 2, 4], [1, 2, 2]]), w, padding_idx=1)),
    "_leaky_relu": ([_rnd(6)], lambda m, x: _F(m).leaky_relu(x, 0.2)),
    "bilinear": ([_rnd(3, 4), _rnd(3, 2), _rnd(5, 4, 2), _rnd(5)],
                 lambda m, a, b, w, bias: _F(m).bilinear(a, b, w, bias)),
    "_normalize": ([_rnd(3, 4)], lambda m, x: _F(m).normalize(x, dim=1)),
    "_softplus": ([_rnd(6)], lambda m, x: _F(m).softplus(x, 2.0, 1.5)),
    "_elu": ([_rnd(6)], lambda m, x: _F(m).elu(x, 0.7)),
    "_hardtanh": ([_rnd(6) * 2], lambda m, x: _F(m).hardtanh(x, -1.5, 1.2)),
    "_softsign": ([_rnd(6)], lambda m, x: _F(m).softsign(x)),
    "_logsigmoid": ([_rnd(6)], lambda m, x: _F(m).logsigmoid(x)),
}

FORWARD_ONLY = {
    "one_hot": ([_pos(5)], lambda m, x: _F(m).one_hot(x, 7)),
}
