"""Op-table sweep cases for the ops of test_linalg_more.py (LU, triangular / Cholesky solves, matrix_exp, eig,
Householder products, LDL); merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``; ``mod`` is torch or functorch_lite.
Eigenvectors enter phase-invariantly (``|V|^2``); factors that are inputs of another op are built inside ``fn``."""
import warnings

import numpy as np

R = np.random.default_rng(31)


def _rnd(*s):
    return R.standard_normal(s)


def _spd(m, a):
    return a @ a.mT + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _quiet(f):
    """PyTorch's deprecation warnings of the classic forms (torch.lu_solve, triangular_solve) silenced."""
    def g(*a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*a)
    return g


def _eig(m, a):
    w, v = m.linalg.eig(a)
    return w.real + w.imag ** 2 + (v.abs() ** 2).sum(-2)


CASES = {
    "linalg_lu_factor_ex": ([_rnd(3, 3)], lambda m, a: m.linalg.lu_factor_ex(a).LU),
    "linalg_lu": ([_rnd(3, 4)], lambda m, a: (lambda r: r.L.sum(-1) + r.U.sum(-2)[:3])(m.linalg.lu(a))),
    "lu_unpack": ([_rnd(4, 3)], lambda m, a: (lambda r: m.cat([r.L.flatten(), r.U.flatten()]))(
        m.lu_unpack(*m.linalg.lu_factor(a)))),
    "linalg_lu_solve": ([_rnd(3, 3), _rnd(2, 3)], lambda m, a, b: m.linalg.lu_solve(
        *m.linalg.lu_factor(a), b, left=False, adjoint=True)),
    "linalg_solve_triangular": ([_rnd(3, 3), _rnd(3, 2)], lambda m, a, b: m.linalg.solve_triangular(
        a + 3 * m.eye(3, dtype=a.dtype), b, upper=True)),
    "triangular_solve": ([_rnd(3, 2), _rnd(3, 3)], _quiet(lambda m, b, a: m.triangular_solve(
        b, a + 3 * m.eye(3, dtype=a.dtype), upper=False, transpose=True).solution)),
    "cholesky_solve": ([_rnd(3, 2), _rnd(3, 3)], lambda m, b, a: m.cholesky_solve(b, m.linalg.cholesky(_spd(m, a)))),
    "cholesky_inverse": ([_rnd(3, 3)], lambda m, a: m.cholesky_inverse(m.linalg.cholesky(_spd(m, a)).mT, upper=True)),
    # (PyTorch 2.13's CPU kernel returns inf / nan in float16 and bfloat16 — we compute those in float32: compared
    # in float32 here, the difference is in test_linalg_more.py)
    "linalg_matrix_exp": ([_rnd(3, 3) * 0.5], lambda m, a: m.linalg.matrix_exp(
        a if a.dtype in (m.float32, m.float64) else a.float())),
    "linalg_eig": ([_rnd(3, 3)], _eig),
    "linalg_eigvals": ([_rnd(3, 3)], lambda m, a: m.linalg.eigvals(a).real),
    "linalg_householder_product": ([_rnd(4, 3), _rnd(2)], lambda m, a, t: m.linalg.householder_product(a, t)),
    "ormqr": ([_rnd(4, 3), _rnd(3), _rnd(2, 4)], lambda m, a, t, c: m.ormqr(a, t, c, left=False, transpose=True)),
    # no derivative in PyTorch (their backward raises, tested in test_linalg_more.py): values only, beside an
    # identity path for the gradient sweep
    "geqrf": ([_rnd(4, 3)], lambda m, a: a + m.geqrf(a.detach()).a),
    "linalg_ldl_factor_ex": ([_rnd(3, 3)], lambda m, a: a + m.linalg.ldl_factor_ex((a + a.mT).detach()).LD),
    "linalg_ldl_solve": ([_rnd(3, 3), _rnd(3, 2)], lambda m, a, b: b + m.linalg.ldl_solve(
        *m.linalg.ldl_factor(_spd(m, a).detach()), b.detach())),
}

FORWARD_ONLY = {}
