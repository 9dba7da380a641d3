"""Op-table sweep cases for the ops of functorch_lite/ops/rnn.py (recurrent stacks, cells, packed-sequence
layout); merged into _op_cases.py. The modules run through ``func.functional_call`` so every weight is an
input of the case (its gradient checked, its dtype swept).

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``; ``mod`` is torch or functorch_lite.
"""
import warnings

import numpy as np

R = np.random.default_rng(17)


def _rnd(*s, scale=0.5):
    return R.standard_normal(s) * scale


def _call(m, cls, args, kwargs, names, params, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "LSTM with projections is not supported with oneDNN"
        mod = getattr(m.nn, cls)(*args, **kwargs)
        return m.func.functional_call(mod, dict(zip(names, params)), inputs)


def _flat(m, *ts):
    return m.cat([t.flatten() for t in ts])


_W = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
_WR = [n + "_reverse" for n in _W]


def _lstm(m, x, h0, c0, *ws):
    out, (h, c) = _call(m, "LSTM", (3, 4), dict(bidirectional=True), _W + _WR, ws, (x, (h0, c0)))
    return _flat(m, out, h, c)


def _gru(m, x, h0, *ws):
    out, h = _call(m, "GRU", (3, 4), dict(), _W, ws, (x, h0))
    return _flat(m, out, h)


def _cell(cls, lstm=False, **kw):
    def fn(m, x, h, *rest):
        names = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
        if lstm:
            r = _call(m, cls, (3, 4), kw, names, rest[1:], (x, (h, rest[0])))
            return _flat(m, *r)
        return _call(m, cls, (3, 4), kw, names, rest, (x, h))
    return fn


def _pad_packed(m, data):
    ps = m.nn.utils.rnn.PackedSequence(data, m.tensor([3, 2, 2]))
    return m.nn.utils.rnn.pad_packed_sequence(ps, batch_first=True, total_length=4)[0]


CASES = {
    "_lstm_stack": ([_rnd(4, 2, 3), _rnd(2, 2, 4), _rnd(2, 2, 4)]
                    + [_rnd(16, 3), _rnd(16, 4), _rnd(16), _rnd(16)] * 2, _lstm),
    "_rnn_stack": ([_rnd(4, 2, 3), _rnd(1, 2, 4), _rnd(12, 3), _rnd(12, 4), _rnd(12), _rnd(12)], _gru),
    "_rnn_cell": ([_rnd(2, 3), _rnd(2, 4), _rnd(4, 3), _rnd(4, 4), _rnd(4), _rnd(4)],
                  _cell("RNNCell", nonlinearity="tanh")),
    "_gru_cell": ([_rnd(2, 3), _rnd(2, 4), _rnd(12, 3), _rnd(12, 4), _rnd(12), _rnd(12)], _cell("GRUCell")),
    "_lstm_cell_state": ([_rnd(2, 3), _rnd(2, 4), _rnd(2, 4), _rnd(16, 3), _rnd(16, 4), _rnd(16), _rnd(16)],
                         _cell("LSTMCell", lstm=True)),
    "_pack_padded_sequence": ([_rnd(3, 4, 2)], lambda m, x: m.nn.utils.rnn.pack_padded_sequence(
        x, [4, 2, 1], batch_first=True).data),
    "_pad_packed_sequence": ([_rnd(7, 2)], _pad_packed),
    "_pad_sequence": ([_rnd(3, 2), _rnd(4, 2), _rnd(1, 2)], lambda m, a, b, c: m.nn.utils.rnn.pad_sequence(
        [a, b, c], padding_value=0.5, padding_side="left")),
}
FORWARD_ONLY: dict = {}
