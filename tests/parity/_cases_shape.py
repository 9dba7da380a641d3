"""Op-table sweep cases for the shape ops (composites and views); merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))`` for differentiable ops, ``FORWARD_ONLY``
likewise for ops without a gradient; ``mod`` is torch or functorch_lite.
"""
import numpy as np

R = np.random.default_rng(17)



def _rnd(*s):
    return R.standard_normal(s)


CASES = {
    "trace": ([_rnd(3, 4)], lambda m, a: m.trace(a)),
    "diag_embed": ([_rnd(2, 3)], lambda m, a: m.diag_embed(a, 1, 0, 2)),
    "rot90": ([_rnd(2, 3, 4)], lambda m, a: a.rot90(3, [2, 0])),
    "block_diag": ([_rnd(2, 3), _rnd(3), _rnd(1, 1)], lambda m, a, b, c: m.block_diag(a, b, c)),
    "kron": ([_rnd(2, 3), _rnd(2, 1, 2)], lambda m, a, b: m.kron(a, b)),
    "tensor_unfold": ([_rnd(3, 7)], lambda m, a: a.unfold(1, 3, 2) * 1),
    # (over a transposed view: as_strided reads the storage, overlapping windows read elements twice)
    "as_strided": ([_rnd(3, 4)], lambda m, a: a.t().as_strided((3, 4), (2, 1), 1) * 1),
}

FORWARD_ONLY = {
}
