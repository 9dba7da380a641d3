"""Op-table sweep cases for the nnextra ops; merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))`` for differentiable ops, ``FORWARD_ONLY``
likewise for ops without a gradient; ``mod`` is torch or functorch_lite.
"""
import numpy as np

R = np.random.default_rng(17)


def _F(m):
    return m.nn.functional


CASES = {
    "pixel_shuffle": ([R.standard_normal((2, 8, 2, 3))], lambda m, x: _F(m).pixel_shuffle(x, 2)),
    "pixel_unshuffle": ([R.standard_normal((2, 2, 4, 6))], lambda m, x: _F(m).pixel_unshuffle(x, 2)),
    "im2col": ([R.standard_normal((2, 2, 5, 4))],
               lambda m, x: _F(m).unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))),
    "col2im": ([R.standard_normal((2, 12, 9))],
               lambda m, x: _F(m).fold(x, (4, 5), (2, 3), dilation=(1, 1), padding=(1, 0), stride=(2, 1))),
    "_threshold": ([R.standard_normal((3, 5)) * 2], lambda m, x: _F(m).threshold(x, 0.3, -2.0)),
    "_softshrink": ([R.standard_normal((3, 5)) * 2], lambda m, x: _F(m).softshrink(x, 0.4)),
    "hardshrink": ([R.standard_normal((3, 5)) * 2], lambda m, x: _F(m).hardshrink(x, 0.4)),
    "pdist": ([R.standard_normal((4, 3))], lambda m, x: _F(m).pdist(x, 2)),
    "soft_margin_loss": ([R.standard_normal((3, 4)), np.sign(R.standard_normal((3, 4)))],
                         lambda m, x, y: _F(m).soft_margin_loss(x, y.detach(), reduction="none")),
    "multi_margin_loss": ([R.standard_normal((3, 4))],
                          lambda m, x: _F(m).multi_margin_loss(x, m.tensor([0, 3, 1]), p=2, margin=0.7,
                                                               reduction="none")),
    "multilabel_margin_loss": ([R.standard_normal((3, 4))],
                               lambda m, x: _F(m).multilabel_margin_loss(
                                   x, m.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]]), reduction="none")),
}

FORWARD_ONLY = {
}
