"""Op-table sweep cases for the weight-norm op (functorch_lite/ops/weight_norm_ops.py); merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``; ``mod`` is torch or functorch_lite.
"""
import numpy as np

R = np.random.default_rng(23)

CASES = {
    # the fused kernel, first dim (g of shape (3, 1)); the last dim and the composite forms are in
    # test_nn_parametrize.py
    "_weight_norm_interface": ([R.standard_normal((3, 4)), R.uniform(0.5, 2.0, (3, 1))],
                               lambda m, v, g: m._weight_norm_interface(v, g, 0)[0]),
}
FORWARD_ONLY: dict = {}
