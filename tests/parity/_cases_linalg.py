"""Op-table sweep cases for the ops of test_linalg.py / test_set_ops.py (torch.linalg, unique, bincount, histc,
quantile, searchsorted, cdist); merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``; ``mod`` is torch or functorch_lite.
Eigen / singular vectors enter sign-invariantly (squared)."""
import numpy as np

R = np.random.default_rng(29)


def _rnd(*s):
    return R.standard_normal(s)


def _spd(m, a):
    return a @ a.mT + 3 * m.eye(a.shape[-1], dtype=a.dtype)


CASES = {
    "linalg_inv_ex": ([_rnd(3, 3)], lambda m, a: m.linalg.inv(_spd(m, a))),
    "linalg_solve_ex": ([_rnd(2, 3, 3), _rnd(3, 2)], lambda m, a, b: m.linalg.solve(_spd(m, a), b)),
    "linalg_det": ([_rnd(3, 3)], lambda m, a: m.linalg.det(a)),
    "linalg_slogdet": ([_rnd(3, 3)], lambda m, a: m.linalg.slogdet(a).logabsdet),
    "logdet": ([_rnd(3, 3)], lambda m, a: m.logdet(_spd(m, a))),
    "linalg_cholesky_ex": ([_rnd(3, 3)], lambda m, a: m.linalg.cholesky(_spd(m, a), upper=True)),
    "linalg_svd": ([_rnd(4, 3)], lambda m, a: (lambda r: r.U[:, :3] ** 2 * r.S)(m.linalg.svd(a))),
    "linalg_svdvals": ([_rnd(3, 4)], lambda m, a: m.linalg.svdvals(a)),
    "linalg_qr": ([_rnd(4, 3)], lambda m, a: (lambda r: r.Q @ r.R)(m.linalg.qr(a))),
    "linalg_eigh": ([_rnd(3, 3)], lambda m, a: (lambda r: r.eigenvectors ** 2 * r.eigenvalues)(
        m.linalg.eigh(_spd(m, a)))),
    "linalg_eigvalsh": ([_rnd(3, 3)], lambda m, a: m.linalg.eigvalsh(_spd(m, a), UPLO="U")),
    "linalg_pinv": ([_rnd(4, 3)], lambda m, a: m.linalg.pinv(a)),
    "linalg_lstsq": ([_rnd(4, 3), _rnd(4, 2)], lambda m, a, b: m.linalg.lstsq(a, b).solution),
    "linalg_matrix_power": ([_rnd(3, 3)], lambda m, a: m.linalg.matrix_power(a, 3)),
    "linalg_matrix_norm": ([_rnd(3, 4)], lambda m, a: m.linalg.matrix_norm(a, 1)),
    "linalg_cross": ([_rnd(2, 3), _rnd(2, 3)], lambda m, a, b: m.linalg.cross(a, b)),
    "linalg_vecdot": ([_rnd(2, 3), _rnd(3)], lambda m, a, b: m.linalg.vecdot(a, b)),
    "linalg_multi_dot": ([_rnd(3), _rnd(3, 4), _rnd(4, 2)], lambda m, a, b, c: m.linalg.multi_dot([a, b, c])),
    "quantile": ([R.permutation(12).reshape(3, 4) + 0.25], lambda m, a: m.quantile(a, 0.4, dim=1)),
    "cdist": ([_rnd(3, 4), _rnd(2, 4)], lambda m, a, b: m.cdist(a, b)),
    # (unique's values node, whose backward raises as torch's: the gradient here flows around it, through ``a``)
    "_unique_values": ([np.round(_rnd(3, 4))], lambda m, a: a + m.unique(a, return_counts=True)[1].sum()),
}

FORWARD_ONLY = {
    "linalg_matrix_rank": ([_rnd(3, 3)], lambda m, a: m.linalg.matrix_rank(a)),
    "linalg_lstsq_rank": ([_rnd(4, 3), _rnd(4, 2)], lambda m, a, b: m.linalg.lstsq(a, b).rank),
    "unique": ([np.round(_rnd(3, 4))], lambda m, a: m.unique(a, return_counts=True)[1]),
    "bincount": ([np.abs(np.round(_rnd(6) * 2))], lambda m, a: m.bincount(a)),
    "histc": ([_rnd(10)], lambda m, a: m.histc(a, bins=4)),
    "searchsorted": ([np.sort(_rnd(5)), _rnd(3)], lambda m, a, b: m.searchsorted(a, b)),
}
