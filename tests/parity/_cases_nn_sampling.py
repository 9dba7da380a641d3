"""Op-table sweep cases for grid_sampler, affine_grid_generator, embedding_bag and _ctc_loss (ops/nn_sampling.py,
ops/ctc.py); merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``; ``mod`` is torch or functorch_lite.
The CTC case feeds raw (unnormalised) scores, so the gradient sweep checks PyTorch's CTC gradient convention.
"""
import numpy as np

R = np.random.default_rng(23)


def _F(m):
    return m.nn.functional


CASES = {
    "grid_sampler": ([R.standard_normal((1, 2, 3, 4)), R.uniform(-1.2, 1.2, (1, 2, 3, 2))],
                     lambda m, x, g: _F(m).grid_sample(x, g, padding_mode="border", align_corners=False)),
    "affine_grid_generator": ([R.standard_normal((2, 2, 3))],
                              lambda m, t: _F(m).affine_grid(t, (2, 1, 3, 4), align_corners=False)),
    "embedding_bag": ([R.standard_normal((6, 3)), R.uniform(0.5, 1.5, 7)],
                      lambda m, w, p: _F(m).embedding_bag(m.tensor([0, 2, 4, 5, 4, 3, 2]), w, m.tensor([0, 3, 3]),
                                                          mode="sum", per_sample_weights=p)),
    "_ctc_loss": ([R.standard_normal((5, 2, 4))],
                  lambda m, x: _F(m).ctc_loss(x, m.tensor([[1, 2], [3, 3]]), m.tensor([5, 4]), m.tensor([2, 2]),
                                              reduction="none")),
}

FORWARD_ONLY = {
}
