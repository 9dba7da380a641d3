"""Op-table sweep cases for functorch_lite/ops/pool_fractional.py (fractional_max_pool2d/3d); merged into
_op_cases.py. ``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``. The random samples are
fixed constants in the input's dtype (the kernel requires that dtype)."""
import numpy as np

R = np.random.default_rng(29)

_S2 = R.random((2, 3, 2))
_S3 = R.random((1, 2, 3))


def _F(m):
    return m.nn.functional


CASES = {
    "fractional_max_pool2d": (
        [R.standard_normal((2, 3, 7, 9))],
        lambda m, x: _F(m).fractional_max_pool2d(x, 2, output_size=(4, 5),
                                                 _random_samples=m.tensor(_S2, dtype=x.dtype))),
    "fractional_max_pool3d": (
        [R.standard_normal((1, 2, 5, 6, 7))],
        lambda m, x: _F(m).fractional_max_pool3d(x, (2, 2, 3), output_size=(3, 4, 4),
                                                 _random_samples=m.tensor(_S3, dtype=x.dtype))),
}

FORWARD_ONLY: dict = {}
