"""Op-table sweep cases for the ops of functorch_lite/ops/attention.py; merged into _op_cases.py."""
import numpy as np

_R = np.random.default_rng(11)


def _rnd(*s):
    return _R.standard_normal(s)


def _mha(m, q, k, v, w_in, b_in, w_out, b_out):
    out, w = m.nn.functional.multi_head_attention_forward(q, k, v, 6, 2, w_in, b_in, None, None, False, 0.0,
                                                          w_out, b_out, need_weights=True)
    return out + w.sum()


CASES: dict = {
    "scaled_dot_product_attention": (
        [_rnd(2, 2, 3, 4), _rnd(2, 2, 5, 4), _rnd(2, 2, 5, 4)],
        lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)),
    "multi_head_attention_forward": (
        [_rnd(3, 2, 6), _rnd(4, 2, 6), _rnd(4, 2, 6), _rnd(18, 6) * 0.5, _rnd(18) * 0.1, _rnd(6, 6) * 0.5,
         _rnd(6) * 0.1],
        _mha),
}
FORWARD_ONLY: dict = {}
