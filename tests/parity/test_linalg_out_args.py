"""torch.linalg's out= forms as torch's kernels take them: an argument requiring grad is refused under torch's kernel
name, an out of another dtype is refused where torch's kernel demands the result's dtype (a float64 out of a
float32 inv was cast into silently) and cast into where torch's casts; lstsq's out= and case-insensitive driver."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

S = [[4., 1.], [1., 3.]]


def _e(m, dt=None):
    return m.empty(0, dtype=dt or m.float32)


CASES = {
    "cholesky": lambda m, A, o: m.linalg.cholesky(A, out=o),
    "cholesky_upper": lambda m, A, o: m.linalg.cholesky(A, upper=True, out=o),
    "cholesky_ex": lambda m, A, o: m.linalg.cholesky_ex(A, out=(o, _e(m, m.int32))),
    "cholesky_legacy": lambda m, A, o: m.cholesky(A, out=o),
    "inv": lambda m, A, o: m.linalg.inv(A, out=o),
    "inverse": lambda m, A, o: m.inverse(A, out=o),
    "inv_ex": lambda m, A, o: m.linalg.inv_ex(A, out=(o, _e(m, m.int32))),
    "det": lambda m, A, o: m.linalg.det(A, out=o),
    "slogdet": lambda m, A, o: m.linalg.slogdet(A, out=(o, _e(m))),
    "solve": lambda m, A, o: m.linalg.solve(A, m.tensor(S), out=o),
    "solve_ex": lambda m, A, o: m.linalg.solve_ex(A, m.tensor(S), out=(o, _e(m, m.int32))),
    "eigh": lambda m, A, o: m.linalg.eigh(A, out=(o, _e(m))),
    "eigvalsh": lambda m, A, o: m.linalg.eigvalsh(A, out=o),
    "svd": lambda m, A, o: m.linalg.svd(A, out=(o, _e(m), _e(m))),
    "svd_legacy": lambda m, A, o: m.svd(A, out=(o, _e(m), _e(m))),
    "svdvals": lambda m, A, o: m.linalg.svdvals(A, out=o),
    "qr": lambda m, A, o: m.linalg.qr(A, out=(o, _e(m))),
    "qr_legacy": lambda m, A, o: m.qr(A, out=(o, _e(m))),
    "pinv": lambda m, A, o: m.linalg.pinv(A, out=o),
    "matrix_power": lambda m, A, o: m.linalg.matrix_power(A, 2, out=o),
    "vecdot": lambda m, A, o: m.linalg.vecdot(A, A, out=o),
    "cross": lambda m, A, o: m.linalg.cross(A[:, :1].expand(2, 3) * 1, m.ones(2, 3), out=o),
    "vector_norm": lambda m, A, o: m.linalg.vector_norm(A, out=o),
    "matrix_rank": lambda m, A, o: m.linalg.matrix_rank(A, out=_e(m, m.int64)),
    "lstsq": lambda m, A, o: m.linalg.lstsq(A, m.tensor(S), out=(o, _e(m), _e(m, m.int64), _e(m))),
    "lu_factor": lambda m, A, o: m.linalg.lu_factor(A, out=(o, _e(m, m.int32))),
    "lu_factor_ex": lambda m, A, o: m.linalg.lu_factor_ex(A, out=(o, _e(m, m.int32), _e(m, m.int32))),
    "lu": lambda m, A, o: m.linalg.lu(A, out=(o, _e(m), _e(m))),
    "lu_solve": lambda m, A, o: m.linalg.lu_solve(*m.linalg.lu_factor(m.tensor(S)), A, out=o),
    "lu_unpack": lambda m, A, o: m.lu_unpack(A, m.tensor([1, 2], dtype=m.int32), out=(o, _e(m), _e(m))),
    "ldl_factor": lambda m, A, o: m.linalg.ldl_factor(A, out=(o, _e(m, m.int32))),
    "ldl_solve": lambda m, A, o: m.linalg.ldl_solve(*m.linalg.ldl_factor(m.tensor(S)), A, out=o),
    "solve_triangular": lambda m, A, o: m.linalg.solve_triangular(A, m.tensor(S), upper=False, out=o),
    "triangular_solve": lambda m, A, o: m.triangular_solve(m.tensor(S), A, out=(o, _e(m))),
    "cholesky_solve": lambda m, A, o: m.cholesky_solve(m.tensor(S), A, out=o),
    "cholesky_inverse": lambda m, A, o: m.cholesky_inverse(A, out=o),
    "householder_product": lambda m, A, o: m.linalg.householder_product(A, m.ones(1), out=o),
    "geqrf": lambda m, A, o: m.geqrf(A, out=(o, _e(m))),
    "eig": lambda m, A, o: m.linalg.eig(A, out=(_e(m, m.complex64), _e(m, m.complex64))),
}


def _outcome(m, name, requires_grad, dt):
    A = m.tensor(S, requires_grad=requires_grad)
    o = _e(m, getattr(m, dt))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = CASES[name](m, A, o)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e).__name__, str(e).split("\n")[0]
    first = r[0] if isinstance(r, tuple) else r
    return "ok", str(o.dtype), first is o if first.shape == o.shape else None, o.tolist()


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("requires_grad", [False, True], ids=["plain", "requires_grad"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_out_as_torch(name, requires_grad, dt):
    want = _outcome(torch, name, requires_grad, dt)
    got = _outcome(ft, name, requires_grad, dt)
    if want[0] == "ok" and got[0] == "ok":
        assert got[1:3] == want[1:3]
        # (|values|: a factor's column signs are LAPACK's choice)
        np.testing.assert_allclose(np.abs(np.array(got[3])), np.abs(np.array(want[3])), rtol=1e-3, atol=1e-3)
    elif "safely castable" in want[1]:  # (torch's composite's own wording of the refused cast: same type)
        assert got[0] == want[0]
    else:
        assert got == want


@pytest.mark.parametrize("driver", ["GELSD", "Gelss", "gelsY", "GELS"])
def test_lstsq_driver_case_insensitive(driver):
    res = []
    for m in (torch, ft):
        A = m.tensor([[1., 2, 3], [4, 5, 6], [7, 8, 10], [1, 1, 1], [2, 0, 1]])
        r = m.linalg.lstsq(A, m.tensor([[1., 2], [3, 4], [5, 6], [7, 8], [9, 1]]), driver=driver)
        res.append((r.rank.tolist(), tuple(r.singular_values.shape), tuple(r.residuals.shape)))
    assert res[0] == res[1]
