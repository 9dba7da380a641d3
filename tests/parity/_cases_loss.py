"""Op-table sweep cases for the ops of functorch_lite/ops/ (loss); merged into _op_cases.py."""
import numpy as np

R = np.random.default_rng(11)
_PW = np.array([0.5, 1.5, 2.0, 1.0])


def _f(m):
    return m.nn.functional


CASES: dict = {
    "l1_loss": ([R.standard_normal((3, 4)), R.standard_normal((3, 4))],
                lambda m, a, b: _f(m).l1_loss(a, b, reduction="none")),
    "smooth_l1_loss": ([R.standard_normal((3, 4)), R.standard_normal((3, 4))],
                       lambda m, a, b: _f(m).smooth_l1_loss(a, b, reduction="none", beta=0.5)),
    "huber_loss": ([R.standard_normal((3, 4)), R.standard_normal((3, 4))],
                   lambda m, a, b: _f(m).huber_loss(a, b, reduction="none", delta=0.7)),
    "binary_cross_entropy": ([R.uniform(0.05, 0.95, (3, 4)), R.uniform(0.0, 1.0, (3, 4))],
                             lambda m, a, b: _f(m).binary_cross_entropy(a, b, reduction="none")),
    "binary_cross_entropy_with_logits": (
        [R.standard_normal((3, 4)) * 2, R.uniform(0.0, 1.0, (3, 4))],
        lambda m, a, b: _f(m).binary_cross_entropy_with_logits(a, b, reduction="none",
                                                               pos_weight=m.tensor(_PW).to(a.dtype))),
    "kl_div": ([R.standard_normal((3, 4)), R.uniform(0.1, 1.0, (3, 4))],
               lambda m, a, b: _f(m).kl_div(a, b, reduction="none")),
}
FORWARD_ONLY: dict = {}
