"""Parity of ``torch.linalg`` (and torch.det / inverse / svd / cholesky / qr / pinverse / matrix_power / cross)
against real PyTorch: values, dtypes, shapes, grad_fn names and gradients on the same numpy inputs; named results;
misuse errors (type and message, LinAlgError for singular / indefinite matrices); a compiled training step.

Gradients of eigh / svd / qr are compared on losses that do not depend on the sign (phase) of the singular /
eigen vectors (their squares, or reconstructions), with distinct eigen / singular values."""
import math
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

R = np.random.default_rng(7)


def _spd(n, batch=()):
    a = R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


A3 = _spd(3)
AB = _spd(3, (2,))
G43 = R.standard_normal((4, 3))
G34 = G43.T.copy()
B32 = R.standard_normal((3, 2))
T234 = R.standard_normal((2, 3, 4))
UPPER = np.triu(R.standard_normal((3, 3)), 1)


def _np(t):
    t = t.detach()
    if t.dtype in (torch.bfloat16, ft.bfloat16):
        t = t.float()
    return np.asarray(t.numpy())


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _same(ours, theirs, tol):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        assert type(ours).__name__ == type(theirs).__name__
        for o, t in zip(ours, theirs):
            _same(o, t, tol)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs, (ours, theirs)
        return
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert _name(ours) == _name(theirs), (_name(ours), _name(theirs))
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=tol, atol=tol)


def run_both(fn, arrays=(), dtype="float64", grad=True, tol=None):
    """``fn(mod, *tensors)`` in both libraries; outputs and (when ``grad``) input gradients compared. A gradient
    PyTorch leaves undefined (None) must be None or zero here."""
    tol = tol if tol is not None else {"float64": 1e-8, "float32": 2e-4}[dtype]
    res = []
    for m in (torch, ft):
        dt = getattr(m, dtype)
        xs = [m.tensor(np.asarray(a), dtype=dt, requires_grad=grad) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(m, *xs)
        grads = None
        if grad and isinstance(out, m.Tensor) and out.requires_grad:
            w = m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
            out.backward(w)
            grads = [x.grad for x in xs]
        res.append((out, grads))
    (tout, tg), (oout, og) = res
    _same(oout, tout, tol)
    if tg is not None:
        for a, b in zip(og, tg):
            if b is None:
                assert a is None or not np.any(_np(a))
            else:
                np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)
    return oout


def raises_both(fn):
    """Both libraries raise the same exception type (by name) and message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            fn(torch)
        with pytest.raises(Exception) as fe:
            fn(ft)
    assert type(fe.value).__name__ == type(te.value).__name__, (fe.value, te.value)
    assert isinstance(fe.value, RuntimeError) == isinstance(te.value, RuntimeError)
    assert str(fe.value) == str(te.value)


def _L(m):
    return m.linalg


# ---- values, grad_fn names and gradients (float64; a float32 subset below) ----------------------------------------
CASES = {
    "inv_batch": ([AB], lambda m, a: m.inverse(a)),
    "solve": ([A3, B32], lambda m, a, b: _L(m).solve(a, b)),
    "solve_vector": ([A3, B32[:, 0]], lambda m, a, b: _L(m).solve(a, b)),
    "solve_left_false": ([A3, B32.T], lambda m, a, b: _L(m).solve(a, b, left=False)),
    "solve_batch_vectors": ([AB, B32.T], lambda m, a, b: _L(m).solve(a, b)),
    "det_method_batch": ([AB], lambda m, a: a.det()),
    # gradient 0, as PyTorch's first-order formula gives where its LU finds det == 0 exactly (a zero row: exactly 0
    # on every CPU; [[1, 2, 3], [2, 4, 6], ...] rounds to a tiny det on some, and torch gives ~the cofactors there)
    "det_singular": ([[[1.0, 2, 3], [0, 0, 0], [1, 0, 1]]], lambda m, a: m.det(a)),
    "slogdet_logabsdet": ([G43[:3]], lambda m, a: _L(m).slogdet(a).logabsdet),
    "logdet": ([AB], lambda m, a: m.logdet(a)),
    "logdet_negative": ([np.diag([1.0, -2.0])], lambda m, a: a.logdet()),
    "cholesky": ([A3], lambda m, a: _L(m).cholesky(a)),
    "cholesky_upper": ([AB], lambda m, a: _L(m).cholesky(a, upper=True)),
    "cholesky_reads_lower": ([A3 + UPPER], lambda m, a: _L(m).cholesky(a)),
    "torch_cholesky": ([A3], lambda m, a: m.cholesky(a, upper=True)),
    "svdvals": ([G43], lambda m, a: _L(m).svdvals(a)),
    "svd_S": ([T234], lambda m, a: _L(m).svd(a).S),
    "svd_U2_reduced": ([G43], lambda m, a: _L(m).svd(a, full_matrices=False).U ** 2),
    "svd_U2_full": ([G43], lambda m, a: _L(m).svd(a).U[:, :3] ** 2),
    "svd_Vh2_full_wide": ([G34], lambda m, a: _L(m).svd(a).Vh[:3] ** 2),
    "torch_svd_V2": ([G43], lambda m, a: m.svd(a).V ** 2),
    "torch_svd_some_false": ([G34], lambda m, a: (lambda r: r.U ** 2 + r.V[:3, :3] ** 2)(a.svd(some=False))),
    "eigh_vectors2": ([A3], lambda m, a: _L(m).eigh(a).eigenvectors ** 2),
    "eigh_upper": ([A3 + UPPER], lambda m, a: _L(m).eigh(a, UPLO="U").eigenvectors ** 2),
    "eigvalsh_lower": ([A3 + UPPER], lambda m, a: _L(m).eigvalsh(a)),
    "qr_Q": ([G43], lambda m, a: _L(m).qr(a).Q),
    "qr_R": ([G43], lambda m, a: _L(m).qr(a).R),
    "qr_wide": ([G34], lambda m, a: (lambda r: r.Q.sum() + r.R)(_L(m).qr(a))),
    "torch_qr": ([G43], lambda m, a: a.qr().R),
    "pinv": ([G43], lambda m, a: _L(m).pinv(a)),
    "pinv_wide_batch": ([T234], lambda m, a: _L(m).pinv(a)),
    "pinv_hermitian": ([A3], lambda m, a: _L(m).pinv(a, hermitian=True)),
    "pinv_rank_deficient": ([np.ones((3, 2))], lambda m, a: _L(m).pinv(a)),
    "pinv_atol_tensor": ([G43], lambda m, a: _L(m).pinv(a, atol=m.tensor(1.0, dtype=a.dtype))),
    "pinverse": ([G43], lambda m, a: a.pinverse()),
    "lstsq_solution": ([G43, R.standard_normal((4, 2))], lambda m, a, b: _L(m).lstsq(a, b).solution),
    "lstsq_gelsd_residuals": ([G43, R.standard_normal((4, 2))],
                              lambda m, a, b: _L(m).lstsq(a, b, driver="gelsd").residuals),
    "lstsq_gels_residuals": ([G43, R.standard_normal((4, 2))],
                             lambda m, a, b: _L(m).lstsq(a, b, driver="gels").residuals),
    "lstsq_underdetermined": ([G34, R.standard_normal((3, 2))], lambda m, a, b: _L(m).lstsq(a, b).solution),
    "matrix_power_5": ([A3 / 5], lambda m, a: _L(m).matrix_power(a, 5)),
    "matrix_power_batch": ([AB / 5], lambda m, a: a.matrix_power(3)),
    "matrix_power_-2": ([A3], lambda m, a: _L(m).matrix_power(a, -2)),
    "cross": ([G43[:, :3], R.standard_normal((1, 3))], lambda m, a, b: _L(m).cross(a, b)),
    "cross_dim0": ([R.standard_normal((3, 2)), R.standard_normal((3, 2))], lambda m, a, b: m.cross(a, b, dim=0)),
    "vecdot": ([G43, G43[0]], lambda m, a, b: _L(m).vecdot(a, b)),
    "multi_dot_vectors": ([G43[:, 0], G43, B32], lambda m, a, b, c: _L(m).multi_dot([a, b, c])),
    "multi_dot_4": ([G43, B32, B32.T, G34], lambda m, a, b, c, d: _L(m).multi_dot((a, b, c, d))),
    "diagonal": ([T234], lambda m, a: _L(m).diagonal(a, offset=1)),
    "norm_default": ([T234], lambda m, a: _L(m).norm(a)),
    "norm_ord_vector": ([G43[0]], lambda m, a: _L(m).norm(a, 3)),
    "norm_nuc": ([G43], lambda m, a: _L(m).norm(a, "nuc", keepdim=True)),
    "norm_2": ([G43], lambda m, a: _L(m).norm(a, 2)),
    "norm_inf": ([G43], lambda m, a: _L(m).norm(a, math.inf)),
    "norm_1_dims": ([T234], lambda m, a: _L(m).norm(a, 1, dim=(2, 0))),
    "matrix_norm_-1_keepdim": ([T234], lambda m, a: _L(m).matrix_norm(a, -1, keepdim=True)),
    "matrix_norm_2_dims": ([T234], lambda m, a: _L(m).matrix_norm(a, 2, dim=(0, 2), keepdim=True)),
    "matrix_norm_nuc": ([T234], lambda m, a: _L(m).matrix_norm(a, "nuc")),
    "vector_norm_3": ([T234], lambda m, a: _L(m).vector_norm(a, 3, dim=(0, 2), keepdim=True)),
    "vector_norm_inf": ([T234], lambda m, a: _L(m).vector_norm(a, -math.inf, dim=-1)),
}
FLOAT32 = ("inv_batch", "solve", "cholesky", "svd_U2_full", "eigh_vectors2", "pinv", "norm_nuc")


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_matches_torch(name):
    arrays, fn = CASES[name]
    run_both(fn, arrays)


@pytest.mark.parametrize("name", FLOAT32)
def test_linalg_float32(name):
    arrays, fn = CASES[name]
    run_both(fn, arrays, "float32")


def test_matrix_power_0_and_int():
    r = run_both(lambda m, a: _L(m).matrix_power(a, 0), [A3], grad=False)
    assert r.grad_fn is None
    x = ft.tensor(A3, requires_grad=True)
    y = ft.linalg.matrix_power(x, 0)
    assert type(y.grad_fn).__name__ == "CopyBackwards"  # torch: "torch::autograd::CopyBackwards"
    y.sum().backward()
    assert not x.grad.numpy().any()
    ints = np.array([[1, 2], [3, 4]])
    for m in (torch, ft):
        got = m.linalg.matrix_power(m.tensor(ints), 3)
        assert str(got.dtype).endswith("int64") and got.tolist() == [[37, 54], [81, 118]]


# ---- named results, no-grad outputs, info -----------------------------------------------------------------------
def test_named_results():
    def fields(r):
        return type(r).__name__, r._fields if hasattr(r, "_fields") else tuple(
            n for n in ("U", "S", "V", "Vh", "Q", "R", "L", "info", "inverse", "result", "sign", "logabsdet",
                        "eigenvalues", "eigenvectors", "solution", "residuals", "rank", "singular_values")
            if hasattr(type(r), n))
    for fn in (lambda m: m.linalg.svd(m.eye(2)), lambda m: m.svd(m.eye(2)), lambda m: m.linalg.qr(m.eye(2)),
               lambda m: m.qr(m.eye(2)), lambda m: m.linalg.eigh(m.eye(2)), lambda m: m.linalg.slogdet(m.eye(2)),
               lambda m: m.slogdet(m.eye(2)), lambda m: m.linalg.inv_ex(m.eye(2)),
               lambda m: m.linalg.solve_ex(m.eye(2), m.ones(2)), lambda m: m.linalg.cholesky_ex(m.eye(2)),
               lambda m: m.linalg.lstsq(m.eye(2), m.ones(2, 1)), lambda m: m.svd(m.ones(4, 3), compute_uv=False)):
        t, f = fn(torch), fn(ft)
        assert fields(f) == fields(t)
        _same(f, t, 1e-6)
    assert repr(ft.linalg.qr(ft.eye(2))).startswith("torch.return_types.linalg_qr(\nQ=tensor(")


@pytest.mark.parametrize("driver", [None, "gelsd", "gels"])
def test_lstsq_outputs(driver):
    """Which of residuals / rank / singular_values each CPU driver reports (shapes, dtypes, values)."""
    a, b = R.standard_normal((2, 4, 3)), R.standard_normal((2, 4, 2))
    run_both(lambda m, a, b: m.linalg.lstsq(a, b, driver=driver), [a, b], grad=False)
    deficient = a.copy()
    deficient[1, :, 2] = deficient[1, :, 1]
    if driver != "gels":  # gels requires full rank (its check below)
        run_both(lambda m, a, b: m.linalg.lstsq(a, b, driver=driver), [deficient, b], grad=False, tol=1e-6)
    if driver is None:  # documented: gelsy truncating by its pivoted QR is refused
        with pytest.raises(RuntimeError, match="driver='gelsd' or 'gelss'"):
            ft.linalg.lstsq(ft.tensor(a[0]), ft.tensor(b[0]), rcond=0.5, driver=driver)
        # one dim fewer, not a batch of vectors: PyTorch broadcasts other's leading dims with input's batch
        run_both(lambda m, a, b: m.linalg.lstsq(a, b, driver=driver).solution, [a[:1], b[0]], grad=False)
    else:
        run_both(lambda m, a, b: m.linalg.lstsq(a, b, rcond=0.5, driver=driver).solution, [a[0], b[0]], tol=1e-6)
        run_both(lambda m, a, b: m.linalg.lstsq(a, b, driver=driver).solution, [a[:1], b[:1, :, 0]], grad=False)


def test_info_outputs():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    zero_col = np.array([[0.0, 1.0], [0.0, 1.0]])
    for a in (singular, zero_col, np.array([[0.0, 0.0], [1.0, 1.0]])):
        for m in (torch, ft):
            r = m.linalg.inv_ex(m.tensor(a))
            s = m.linalg.solve_ex(m.tensor(a), m.ones(2, dtype=m.float64))
            assert (str(r.info.dtype), r.info.item(), s.info.item()) == (
                "torch.int32", torch.linalg.inv_ex(torch.tensor(a)).info.item(),
                torch.linalg.solve_ex(torch.tensor(a), torch.ones(2, dtype=torch.float64)).info.item())
    ind = np.stack([np.eye(3), np.diag([1.0, 1.0, -1.0]), -np.eye(3), [[1.0, 2, 0], [2, 1, 0], [0, 0, 1]]])
    t, f = torch.linalg.cholesky_ex(torch.tensor(ind)), ft.linalg.cholesky_ex(ft.tensor(ind))
    assert f.info.tolist() == t.info.tolist() == [0, 3, 1, 2]
    np.testing.assert_allclose(f.L.numpy(), t.L.numpy())  # (a failed factorization: LAPACK's partial factor)


def test_rank_and_no_grad_outputs():
    run_both(lambda m, a: m.linalg.matrix_rank(a), [np.ones((2, 3, 2))], grad=False)
    run_both(lambda m, a: m.linalg.matrix_rank(a, hermitian=True), [np.diag([2.0, 1e-20, 1.0])], grad=False)
    run_both(lambda m, a: m.linalg.matrix_rank(a, tol=0.5), [np.diag([2.0, 0.4, 1.0])], grad=False)
    run_both(lambda m, a: m.linalg.matrix_rank(a, atol=0.5, rtol=0.4), [np.diag([2.0, 0.6, 1.0])], grad=False)
    run_both(lambda m, a: m.linalg.matrix_rank(a, rtol=m.tensor([0.1, 0.9], dtype=m.float64)),
             [np.stack([np.diag([2.0, 0.6]), np.diag([2.0, 0.6])])], grad=False)
    for m in (torch, ft):  # rank / info are integer outputs without grad
        r = m.linalg.lstsq(m.tensor(G43, requires_grad=True), m.tensor(B32[:1].repeat(4, 0)), driver="gelsd")
        assert not r.rank.requires_grad and r.residuals.requires_grad
        assert not m.linalg.inv_ex(m.tensor(A3, requires_grad=True)).info.requires_grad


def test_complex_values():
    rng = np.random.default_rng(3)
    c = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    h = c @ c.conj().T + 3 * np.eye(3)
    fns = [lambda m, a: m.linalg.inv(a), lambda m, a: m.linalg.slogdet(a), lambda m, a: m.linalg.cholesky(a),
           lambda m, a: m.linalg.eigvalsh(a), lambda m, a: m.linalg.solve(a, a[0]), lambda m, a: m.linalg.pinv(a),
           lambda m, a: m.linalg.norm(a, 2), lambda m, a: m.linalg.matrix_norm(a, 1), lambda m, a: m.logdet(a),
           lambda m, a: m.linalg.vecdot(a, a), lambda m, a: m.linalg.eigh(a).eigenvectors.abs(),
           lambda m, a: m.linalg.svd(a).U.abs()]
    for i, fn in enumerate(fns):
        dt = "complex64" if i < 2 else "complex128"
        outs = [fn(m, m.tensor(h, dtype=getattr(m, dt))) for m in (torch, ft)]
        _same(outs[1], outs[0], 1e-4 if dt == "complex64" else 1e-9)


# ---- errors ------------------------------------------------------------------------------------------------------------
SING = [[1.0, 2.0], [2.0, 4.0]]
ERRORS = {
    "inv_singular": lambda m: m.linalg.inv(m.tensor(SING)),
    "inv_singular_batch": lambda m: m.linalg.inv(m.stack([m.eye(2), m.tensor(SING)])),
    "inverse_singular": lambda m: m.tensor(SING).inverse(),
    "inv_ex_check": lambda m: m.linalg.inv_ex(m.tensor([[0.0, 1], [0, 1]]), check_errors=True),
    "matrix_power_singular": lambda m: m.linalg.matrix_power(m.tensor(SING), -1),
    "solve_singular": lambda m: m.linalg.solve(m.tensor(SING), m.ones(2)),
    "solve_singular_batch": lambda m: m.linalg.solve(m.stack([m.eye(2), m.tensor(SING)]), m.ones(2, 2)),
    "cholesky_not_pd": lambda m: m.linalg.cholesky(m.tensor(SING)),
    "cholesky_order3": lambda m: m.linalg.cholesky(m.diag(m.tensor([1.0, 1.0, -1.0]))),
    "cholesky_batch": lambda m: m.linalg.cholesky(m.stack([m.eye(2), -m.eye(2)])),
    "torch_cholesky": lambda m: m.cholesky(m.tensor([[1.0, 2], [2, 1]])),
    "lstsq_gels_rank": lambda m: m.linalg.lstsq(m.tensor([[1.0, 0], [0, 0], [0, 0]]), m.ones(3, 1), driver="gels"),
    "inv_int": lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.int64)),
    "inv_half": lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.float16)),
    "inv_bf16": lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.bfloat16)),
    "inv_rect": lambda m: m.linalg.inv(m.ones(2, 3, dtype=m.int64)),
    "inv_1d": lambda m: m.linalg.inv(m.ones(3)),
    "det_half": lambda m: m.linalg.det(m.ones(2, 2, dtype=m.float16)),
    "det_int": lambda m: m.det(m.ones(2, 2, dtype=m.int64)),
    "det_rect": lambda m: m.linalg.det(m.ones(2, 3)),
    "slogdet_1d": lambda m: m.linalg.slogdet(m.ones(3)),
    "logdet_int": lambda m: m.logdet(m.ones(2, 2, dtype=m.int64)),
    "svd_int": lambda m: m.linalg.svd(m.ones(2, 2, dtype=m.int64)),
    "svd_half": lambda m: m.linalg.svd(m.ones(2, 2, dtype=m.float16)),
    "svd_driver": lambda m: m.linalg.svd(m.ones(3, 2), driver="gesvd"),
    "svdvals_1d": lambda m: m.linalg.svdvals(m.ones(3)),
    "qr_mode": lambda m: m.linalg.qr(m.ones(3, 2), mode="foo"),
    "qr_half": lambda m: m.linalg.qr(m.ones(2, 2, dtype=m.float16)),
    "eigh_int": lambda m: m.linalg.eigh(m.ones(2, 2, dtype=m.int64)),
    "eigh_rect": lambda m: m.linalg.eigh(m.ones(3, 2)),
    "eigh_uplo": lambda m: m.linalg.eigh(m.ones(2, 2), UPLO="X"),
    "eigvalsh_half": lambda m: m.linalg.eigvalsh(m.ones(2, 2, dtype=m.float16)),
    "cholesky_int": lambda m: m.linalg.cholesky(m.ones(2, 2, dtype=m.int64)),
    "cholesky_half": lambda m: m.linalg.cholesky(m.ones(2, 2, dtype=m.float16)),
    "solve_dtypes": lambda m: m.linalg.solve(m.eye(2), m.ones(2, dtype=m.float64)),
    "solve_int": lambda m: m.linalg.solve(m.ones(2, 2, dtype=m.int64), m.ones(2, dtype=m.float64)),
    "solve_int_B": lambda m: m.linalg.solve(m.ones(2, 2), m.ones(2, dtype=m.int64)),
    "solve_half": lambda m: m.linalg.solve(m.eye(2, dtype=m.float16), m.ones(2, dtype=m.float16)),
    "solve_shapes": lambda m: m.linalg.solve(m.eye(2), m.ones(3)),
    "solve_shapes_matrix": lambda m: m.linalg.solve(m.eye(2).expand(4, 2, 2), m.ones(3, 2)),
    "solve_left_false": lambda m: m.linalg.solve(m.eye(2), m.ones(2, 3), left=False),
    "solve_left_false_vector": lambda m: m.linalg.solve(m.eye(1), m.ones(1), left=False),
    "solve_batch": lambda m: m.linalg.solve(m.eye(2).expand(4, 2, 2), m.ones(3, 2, 1)),
    "solve_B_0d": lambda m: m.linalg.solve(m.eye(2), m.tensor(1.0)),
    "pinv_int": lambda m: m.linalg.pinv(m.ones(2, 2, dtype=m.int64)),
    "pinv_1d": lambda m: m.linalg.pinv(m.ones(2)),
    "pinv_hermitian_rect": lambda m: m.linalg.pinv(m.ones(3, 2), hermitian=True),
    "matrix_rank_int": lambda m: m.linalg.matrix_rank(m.ones(2, 2, dtype=m.int64)),
    "matrix_rank_1d": lambda m: m.linalg.matrix_rank(m.ones(2)),
    "lstsq_driver": lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 1), driver="foo"),
    "lstsq_dtypes": lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 1, dtype=m.float64)),
    "lstsq_int": lambda m: m.linalg.lstsq(m.ones(3, 2, dtype=m.int64), m.ones(3, 1)),
    "lstsq_rows": lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(4, 1)),
    "lstsq_1d": lambda m: m.linalg.lstsq(m.ones(3), m.ones(3, 1)),
    "lstsq_B_0d": lambda m: m.linalg.lstsq(m.ones(3, 2), m.tensor(1.0)),
    "lstsq_dims": lambda m: m.linalg.lstsq(m.ones(5, 3, 2), m.ones(3)),
    "lstsq_batch": lambda m: m.linalg.lstsq(m.ones(5, 3, 2), m.ones(3, 4)),
    "matrix_power_rect": lambda m: m.linalg.matrix_power(m.ones(2, 3), 2),
    "matrix_power_1d": lambda m: m.linalg.matrix_power(m.ones(2), 2),
    "matrix_power_float_n": lambda m: m.linalg.matrix_power(m.ones(2, 2), 2.0),
    "matrix_power_int_neg": lambda m: m.linalg.matrix_power(m.ones(2, 2, dtype=m.int64), -1),
    "matrix_power_bool": lambda m: m.linalg.matrix_power(m.ones(2, 2, dtype=m.bool), 2),
    "multi_dot_one": lambda m: m.linalg.multi_dot([m.ones(2)]),
    "multi_dot_first_3d": lambda m: m.linalg.multi_dot([m.ones(3, 2, 2), m.ones(2, 3)]),
    "multi_dot_last_3d": lambda m: m.linalg.multi_dot([m.ones(2), m.ones(2, 3, 3)]),
    "multi_dot_middle": lambda m: m.linalg.multi_dot([m.ones(2, 2), m.ones(2, 2, 2), m.ones(2)]),
    "multi_dot_shapes": lambda m: m.linalg.multi_dot([m.ones(2, 2), m.ones(2, 2), m.ones(3)]),
    "multi_dot_dtypes": lambda m: m.linalg.multi_dot([m.ones(3, 2, dtype=m.int64), m.ones(2, 3, dtype=m.float64)]),
    "multi_dot_bool": lambda m: m.linalg.multi_dot([m.ones(3, 2, dtype=m.bool), m.ones(2, 3, dtype=m.bool)]),
    "multi_dot_tensor": lambda m: m.linalg.multi_dot(m.ones(2, 2)),
    "cross_ndim": lambda m: m.linalg.cross(m.ones(2, 3), m.ones(3)),
    "cross_len": lambda m: m.linalg.cross(m.ones(2, 4), m.ones(2, 4)),
    "cross_dtypes": lambda m: m.linalg.cross(m.ones(2, 3), m.ones(2, 3, dtype=m.float64)),
    "cross_bool": lambda m: m.linalg.cross(m.ones(2, 3, dtype=m.bool), m.ones(2, 3, dtype=m.bool)),
    "cross_dim": lambda m: m.linalg.cross(m.ones(3, 3), m.ones(3, 3), dim=5),
    "torch_cross_no3": lambda m: m.cross(m.ones(2, 2), m.ones(2, 2)),
    "torch_cross_len": lambda m: m.cross(m.ones(3, 1), m.ones(1, 3)),
    "vecdot_int": lambda m: m.linalg.vecdot(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)),
    "vecdot_dtypes": lambda m: m.linalg.vecdot(m.ones(2, 3), m.ones(2, 3, dtype=m.float64)),
    "vecdot_shapes": lambda m: m.linalg.vecdot(m.ones(3, 4), m.ones(2, 4)),
    "vector_norm_int": lambda m: m.linalg.vector_norm(m.ones(2, 2, dtype=m.int64)),
    "vector_norm_int_dtype": lambda m: m.linalg.vector_norm(m.ones(2, 2, dtype=m.int64), dtype=m.float32),
    "vector_norm_dtype_int": lambda m: m.linalg.vector_norm(m.ones(2, 2), dtype=m.int64),
    "vector_norm_narrowing": lambda m: m.linalg.vector_norm(m.ones(3, 4), dtype=m.float16),
    "vector_norm_str": lambda m: m.linalg.vector_norm(m.ones(3, 4), ord="fro"),
    "vector_norm_empty_inf": lambda m: m.linalg.vector_norm(m.zeros(0, 3), ord=-math.inf),
    "vector_norm_empty_neg": lambda m: m.linalg.vector_norm(m.zeros(0, 3), ord=-1),
    "vector_norm_empty_dim": lambda m: m.linalg.vector_norm(m.zeros(0, 3), ord=math.inf, dim=0),
    "vector_norm_repeated": lambda m: m.linalg.vector_norm(m.ones(3, 4), dim=(0, -2)),
    "vector_norm_dim_range": lambda m: m.linalg.vector_norm(m.ones(2, 2), ord=2, dim=5),
    "matrix_norm_1d": lambda m: m.linalg.matrix_norm(m.ones(2)),
    "matrix_norm_order": lambda m: m.linalg.matrix_norm(m.ones(2, 2), 3),
    "matrix_norm_order_str": lambda m: m.linalg.matrix_norm(m.ones(2, 2), "foo"),
    "matrix_norm_int": lambda m: m.linalg.matrix_norm(m.eye(2, dtype=m.int64)),
    "matrix_norm_dtype_int": lambda m: m.linalg.matrix_norm(m.ones(2, 3, 4), ord=2, dtype=m.int64),
    "matrix_norm_half_2": lambda m: m.linalg.matrix_norm(m.ones(3, 4, dtype=m.float16), ord=-2),
    "matrix_norm_half_nuc": lambda m: m.linalg.matrix_norm(m.ones(3, 4, dtype=m.float16), ord="nuc"),
    "matrix_norm_same_dims": lambda m: m.linalg.matrix_norm(m.ones(3, 4), dim=(0, -2)),
    "matrix_norm_one_dim": lambda m: m.linalg.matrix_norm(m.ones(3, 4), dim=(1,)),
    "matrix_norm_int_dim": lambda m: m.linalg.matrix_norm(m.ones(3, 4), dim=1),
    "norm_3d_ord": lambda m: m.linalg.norm(m.ones(3, 4, 5), 2),
    "norm_3d_fro": lambda m: m.linalg.norm(m.ones(3, 4, 5), "fro"),
    "norm_3_dims": lambda m: m.linalg.norm(m.ones(3, 4, 5), dim=(0, 1, 2)),
    "norm_fro_one_dim": lambda m: m.linalg.norm(m.ones(3, 4, 5), "fro", dim=1),
    "norm_nuc_1d": lambda m: m.linalg.norm(m.ones(3), "nuc"),
    "norm_int": lambda m: m.linalg.norm(m.eye(2, dtype=m.int64)),
    "norm_dtype_int": lambda m: m.linalg.norm(m.ones(3, 4), 2, dtype=m.int64),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raises_both(ERRORS[name])


def test_linalg_error_type():
    with pytest.raises(ft.linalg.LinAlgError) as e:
        ft.linalg.inv(ft.zeros(2, 2))
    assert isinstance(e.value, RuntimeError) and ft.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__


def test_backward_errors():
    """PyTorch raises in the backward of QR modes it cannot differentiate."""
    for mode, shape in (("r", (3, 2)), ("complete", (3, 2))):
        def fn(m):
            x = m.tensor(np.arange(6.0).reshape(shape) ** 1.5, requires_grad=True)
            r = m.linalg.qr(x, mode=mode)
            r.R.sum().backward()
        raises_both(fn)


def test_deprecation_warnings():
    ft.linalg._WARNED.discard("cholesky")
    ft.linalg._WARNED.discard("cross")
    for fn in (lambda m: m.cholesky(m.eye(2)), lambda m: m.cross(m.ones(3, 3), m.ones(3, 3))):
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter("always")
            fn(torch)
        with warnings.catch_warnings(record=True) as fw:
            warnings.simplefilter("always")
            fn(ft)
        ours = [str(w.message) for w in fw]
        assert len(ours) == 1 and ours[0].startswith("Using torch.cross" if "cross" in ours[0] else "torch.cholesky is")
        if tw:  # PyTorch warns once per process (an earlier test may have had its warning)
            assert ours == [str(tw[0].message).split(" (Triggered internally")[0]]


# ---- compile ----------------------------------------------------------------------------------------------------------
def test_compiled_training_step_matches_eager():
    """A step whose loss uses solve, inv, slogdet, cholesky, eigvalsh and svdvals: compiled = eager = torch."""
    w0 = np.random.default_rng(0).standard_normal((3, 3)) * 0.1 + np.eye(3)

    def make(lib):
        w = lib.nn.Parameter(lib.tensor(w0, dtype=lib.float32))
        return w, lib.optim.SGD([w], lr=0.01)

    rhs = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)

    def step(lib, w, opt, b):
        opt.zero_grad()
        spd = w @ w.mT + lib.eye(3)
        loss = (lib.linalg.solve(spd, b) ** 2).sum() + lib.linalg.inv(spd).sum() + lib.linalg.slogdet(spd).logabsdet
        loss = loss + lib.linalg.cholesky(spd).diagonal().sum() + lib.linalg.eigvalsh(spd).max()
        loss = loss + lib.linalg.svdvals(w).min()
        loss.backward()
        opt.step()
        return loss.detach()

    w_e, opt_e = make(ft)
    w_c, opt_c = make(ft)
    compiled = ft.compile(lambda b: step(ft, w_c, opt_c, b))
    w_t, opt_t = make(torch)
    for _ in range(2):
        le = step(ft, w_e, opt_e, ft.tensor(rhs))
        lc = compiled(ft.tensor(rhs))
        lt = step(torch, w_t, opt_t, torch.tensor(rhs))
        np.testing.assert_allclose(lc.numpy(), le.numpy(), rtol=1e-5)
        np.testing.assert_allclose(le.numpy(), lt.numpy(), rtol=1e-4)
    np.testing.assert_allclose(w_c.detach().numpy(), w_e.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_compiled_singular_does_not_raise():
    """Documented: inside compile the host check cannot run; the info output still says what happened."""
    f = ft.compile(lambda a: ft.linalg.inv_ex(a))
    r = f(ft.tensor(SING))
    assert r.info.item() == 2
    with pytest.raises(ft.linalg.LinAlgError):
        ft.linalg.inv(ft.tensor(SING))
