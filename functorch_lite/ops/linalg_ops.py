"""The op-table rows of ``torch.linalg``'s decompositions and solvers: inverse, solve, determinants, Cholesky, SVD,
QR, eigh, pinv, lstsq, rank, and the matrix norms (its products matrix_power, cross, vecdot, multi_dot are with
matmul in ``ops/linalg.py``). The public functions (argument parsing, the ``LinAlgError`` checks, the named
results) are in ``functorch_lite/linalg.py``.

Each op is one ``@defop`` with the grad_fn name of PyTorch's node; its gradient comes from JAX's
linear-algebra derivatives, adjusted where PyTorch's convention differs:

* Cholesky and eigh read one triangle of the input (``upper``/``UPLO``) but PyTorch's gradient is Hermitian:
  the input enters as ``(A + A^H)/2`` for the derivative and as the Hermitian matrix of that triangle for the
  value (:func:`_sym_input`; a select, so a NaN / inf in the other triangle is never read). A failed Cholesky
  factorization is differentiated at LAPACK's partial factor, as PyTorch (:func:`_chol_factor`).
* ``svd(full_matrices=True)``: PyTorch ignores the gradient of the extra columns of U / rows of Vh; JAX has
  no derivative for the full factors, so :func:`_svd_full` applies the reduced SVD's derivative to the leading
  factors of the full one.
* det: zero gradient at an exactly singular matrix (PyTorch's first-order formula), not the cofactor matrix.
* QR: ``m < n`` is differentiated as ``Q, R1 = qr(A[:, :m])``, ``R2 = Q^H A[:, m:]`` (PyTorch's formula);
  ``mode='r'`` and ``mode='complete'`` with ``m > n`` raise PyTorch's error in the backward.
* pinv / lstsq: PyTorch's (Golub-Pereyra) derivative of the pseudo-inverse as a custom JVP.

Ops that can fail (inv, solve, cholesky) also return LAPACK's ``info`` (as PyTorch's ``*_ex`` ops do); the
public functions read it on the host and raise. JAX itself never raises for a singular or indefinite
matrix (it returns inf/nan), and inside a compiled region the host check cannot run.
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from . import grad_overrides as _go
from ._dispatch import _type_name, broadcast_shapes
from ._registry import defop
from .grad_overrides import no_derivative
from .reduction import _acc, _structseq, return_types as RT

for _n, _f in (("linalg_inv_ex", ("inverse", "info")), ("linalg_solve_ex", ("result", "info")),
               ("linalg_cholesky_ex", ("L", "info")), ("linalg_slogdet", ("sign", "logabsdet")),
               ("slogdet", ("sign", "logabsdet")), ("linalg_svd", ("U", "S", "Vh")), ("svd", ("U", "S", "V")),
               ("linalg_qr", ("Q", "R")), ("qr", ("Q", "R")), ("linalg_eigh", ("eigenvalues", "eigenvectors")),
               ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))):
    setattr(RT, _n, _structseq(_n, _f))

_LIN = (D.float32, D.float64, D.complex64, D.complex128)  # LAPACK's types


# ---- dtype rules and shape checks -------------------------------------------------------------------------
def _rule(name, low=None, outs=None, kernel_only=False, same=None):
    """float32/float64/complex64/complex128 only: an integer input raises "<name>: Expected a floating point or
    complex tensor", a half one PyTorch's kernel error (``low``) or "Low precision dtypes not supported";
    ``kernel_only``: any other dtype raises the kernel error (eigh). ``outs(dt)``: the output dtypes.
    ``same(a, b)``: the message when the second tensor's dtype differs."""
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt not in _LIN:
            if kernel_only or (low and dt.category == D.FLOAT):
                raise no_kernel(low, dt)
            if dt.category < D.FLOAT:
                raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {dt.short}")
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {dt.short}")
        if same is not None and isinstance(sig[1], tuple) and sig[1][1] is not dt:
            raise RuntimeError(same(dt, sig[1][1]))
        rdt = dt.to_real()  # tolerances (Python numbers or tensors) are compared in the real dtype
        casts = (None,) + tuple(None if s is None or (isinstance(s, tuple) and same) else rdt for s in sig[1:])
        return casts, (outs(dt) if outs else (dt,) * op.nout)
    return rule


def _need_matrix(name, t, arg="A", square=True):
    s = t._shape
    if len(s) < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if square and s[-1] != s[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {s[-2]} by {s[-1]} matrices")


def _square(name, square=True):
    def prep(targs, sargs):
        _need_matrix(name, targs[0], square=square)
        return sargs
    return prep


def _H(a):
    return jnp.conj(jnp.swapaxes(a, -1, -2))


def _batch(*arrays):
    """Broadcast the batch dims of matrices (the last two dims are kept)."""
    b = np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    return tuple(jnp.broadcast_to(a, b + a.shape[-2:]) for a in arrays)


def _first_zero(d):
    """LAPACK's ``info``: 1 + the index of the first exactly-zero diagonal entry, else 0 (int32)."""
    zero = d == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


def _lu_info(a):
    """getrf's ``info`` of ``a`` (no derivative: an integer output)."""
    if a.size == 0:
        return jnp.zeros(a.shape[:-2], jnp.int32)
    lu = jax.lax.linalg.lu(jax.lax.stop_gradient(a))[0]
    return _first_zero(jnp.diagonal(lu, 0, -2, -1))


# ---- inverse / solve / determinants ---------------------------------------------------------------------------
@defop("linalg_inv_ex", autocast="fp32", promote=_rule("linalg.inv", outs=lambda dt: (dt, D.int32)), grad_fn="LinalgInvExBackward0",
       nout=2, result_type=RT.linalg_inv_ex, prep=_square("linalg.inv"), method=False, function=False,
       saves=("result",))  # (torch's backward reads the inverse: a later in-place change of it is refused)
def _inv_ex(A):
    """``(inverse, info)``; info > 0: the index of the zero pivot (the inverse is then inf/nan)."""
    if A.size == 0:
        return A, _lu_info(A)
    return jnp.linalg.inv(A), _lu_info(A)


def _solve_prep(targs, sargs):
    A, B = targs
    left = sargs[0]
    _need_matrix("linalg.solve", A)
    if not isinstance(B, Tensor) or len(B._shape) < 1:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    a, b = A._shape, B._shape
    vector = len(b) == 1 or (len(b) == len(a) - 1 and b == a[:-1])
    bm = b + (1,) if vector else b
    if (a[-2] != bm[-2]) if left else (a[-1] != bm[-1]):
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'}"
                           f" ({a[-2]}x{a[-1]} and {bm[-2]}x{bm[-1]})")
    if vector and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    broadcast_shapes(bm[:-2], a[:-2])
    return (bool(left), vector)


def _same_dtype(what):
    return lambda a, b: (f"{what}: Expected A and B to have the same dtype, but found A of type {a.short} and B of type "
                         f"{b.short} instead")


@defop("linalg_solve_ex", autocast="fp32", promote=_rule("linalg.solve", low="lu_cpu", outs=lambda dt: (dt, D.int32),
                                        same=_same_dtype("linalg.solve")),
       grad_fn="LinalgSolveExBackward0", tensors=2, nout=2, result_type=RT.linalg_solve_ex, prep=_solve_prep,
       method=False, function=False, saves=(0, "result"))
def _solve_ex(A, B, left, vector):
    """``AX = B`` (``left``) or ``XA = B``; ``B`` a vector (batch) or matrix (batch); info of A's LU."""
    b = B[..., None] if vector else B
    if left:
        x = jnp.linalg.solve(*_batch(A, b)) if A.size and b.size else jnp.zeros(np.broadcast_shapes(
            A.shape[:-2], b.shape[:-2]) + b.shape[-2:], A.dtype)
    else:  # XA = B  <=>  A^T X^T = B^T
        At, bt = _batch(jnp.swapaxes(A, -1, -2), jnp.swapaxes(b, -1, -2))
        x = jnp.swapaxes(jnp.linalg.solve(At, bt), -1, -2) if A.size and b.size else jnp.zeros(
            At.shape[:-2] + b.shape[-2:], A.dtype)
    return (x[..., 0] if vector else x), _lu_info(A)


@defop("linalg_det", promote=_rule("linalg.det", low="lu_cpu"), grad_fn="LinalgDetBackward0",
       prep=_square("linalg.det"), method=False, function=False, saves=(0, "result"))
def _det(A):
    """det by LU; at an exactly singular matrix (det == 0) the gradient is 0, as PyTorch's first-order
    derivative (its ``grad * conj(det)`` factor), not JAX's cofactor matrix."""
    if not A.shape[-1]:
        return jnp.ones(A.shape[:-2], A.dtype)
    d = jnp.linalg.det(A)
    c = jax.lax.stop_gradient(d)
    return jnp.where(c == 0, c, d)


@defop("linalg_slogdet", promote=_rule("linalg.slogdet", outs=lambda dt: (dt, dt.to_real())),
       grad_fn="LinalgSlogdetBackward0", nout=2, result_type=RT.linalg_slogdet, prep=_square("linalg.slogdet"),
       method=False, function=False,
       # (torch's slogdet_backward of a real matrix reads the log|det|'s gradient only: without one, none)
       undefined_grad=lambda s, sig, present: not present[1] and not sig[0][1].is_complex)
def _slogdet(A):
    """``(sign, log|det|)``; a singular matrix gives (0, -inf)."""
    if not A.shape[-1]:
        return jnp.ones(A.shape[:-2], A.dtype), jnp.zeros(A.shape[:-2], jnp.real(A).dtype)
    return tuple(jnp.linalg.slogdet(A))


@defop("logdet", promote=_rule("logdet"), prep=_square("logdet"), method=False, function=False,
       grad_fn=lambda targs, sargs: "AddBackward0" if targs[0].dtype.is_complex else "WhereBackward0")
def _logdet(A):
    """``log(det(A))``: nan for a negative determinant of a real matrix, -inf for a singular one."""
    s, l = jnp.linalg.slogdet(A)
    if jnp.iscomplexobj(A):
        return jnp.log(s) + l.astype(s.dtype)
    return jnp.where(s == -1, jnp.asarray(jnp.nan, l.dtype), l)


# ---- Cholesky --------------------------------------------------------------------------------------------------
@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _sym_input(a, lower):
    """The Hermitian matrix LAPACK reads from one triangle of ``a`` (the value) that differentiates as
    ``(a + a^H)/2``: PyTorch's gradients of cholesky and eigh are Hermitian, JAX's of a one-triangle read are
    not. A select, not arithmetic, so a NaN/inf in the other triangle (or an inf on the diagonal) stays out of
    the value, as LAPACK never reads it; the tangent is linear in ``da`` alone, so it stays out of the gradient
    too."""
    r, c = jnp.arange(a.shape[-1])[:, None], jnp.arange(a.shape[-1])
    return jnp.where(r >= c if lower else r <= c, a, _H(a))


@_sym_input.defjvp
def _sym_input_jvp(lower, primals, tangents):
    (a,), (da,) = primals, tangents
    return _sym_input(a, lower), (da + _H(da)) / 2


def _inf_pivot_fails(h):
    """PyTorch's CPU LAPACK (float32, n <= 16: its unblocked kernel) scales the column below an infinite pivot
    by a NaN reciprocal, so the next pivot fails; float64, complex and larger matrices get IEEE's 0 there."""
    return h.dtype == jnp.float32 and h.shape[-1] <= 16


def _chol_partial(h):
    """``(L, info)`` of matrices whose factorization failed, as LAPACK's potrf leaves them (its unblocked order):
    the columns before the first pivot that is not > 0 factored, that pivot's ``a_jj - |l_j|^2`` in its place, the
    rest of the lower triangle as it was; ``info`` the order of that leading minor."""
    n = h.shape[-1]
    rows = jnp.arange(n)
    nan_inf = _inf_pivot_fails(h)

    def step(j, carry):
        L, info = carry
        lj = L[..., j, :]  # (row j's factored entries: the columns before j; later ones are still 0)
        d = jnp.real(h[..., j, j]) - jnp.sum(jnp.abs(lj) ** 2, -1)
        bad = ~(d > 0)
        ljj = jnp.sqrt(jnp.where(bad, 1, d))
        col = (h[..., :, j] - jnp.einsum("...ik,...k->...i", L, jnp.conj(lj))) / ljj[..., None].astype(h.dtype)
        if nan_inf:
            col = jnp.where(jnp.isinf(ljj)[..., None], jnp.nan, col)
        col = jnp.where(rows > j, col, jnp.where(rows == j, ljj.astype(h.dtype)[..., None], 0))
        stopped = jnp.where(rows > j, h[..., :, j], jnp.where(rows == j, d.astype(h.dtype)[..., None], 0))
        kept = jnp.where(rows >= j, h[..., :, j], 0)  # (past the failure: the original lower triangle)
        failed_before = (info > 0)[..., None]
        col = jnp.where(failed_before, kept, jnp.where(bad[..., None], stopped, col))
        info = jnp.where((info == 0) & bad, j + 1, info).astype(jnp.int32)
        return L.at[..., :, j].set(col), info
    return jax.lax.fori_loop(0, n, step, (jnp.zeros_like(h), jnp.zeros(h.shape[:-2], jnp.int32)))


def _chol_name(targs, sargs):
    return "CholeskyBackward0" if sargs[1] else "LinalgCholeskyExBackward0"


@defop("linalg_cholesky_ex", autocast="fp32", promote=_rule("linalg.cholesky", low="cholesky_cpu", outs=lambda dt: (dt, D.int32)),
       grad_fn=_chol_name, nout=2, result_type=RT.linalg_cholesky_ex, prep=_square("linalg.cholesky"), method=False,
       function=False, saves=("result",))
def _cholesky_ex(A, upper, legacy):
    """``(L, info)`` with ``A = L L^H`` from A's lower triangle (``upper``: ``U = L^H`` from the upper one);
    ``legacy``: ``torch.cholesky`` (CholeskyBackward0). A failed factorization gives LAPACK's partial factor
    (``_chol_partial``) and info = the order of the first leading minor that is not positive definite."""
    if not A.shape[-1]:
        return A, jnp.zeros(A.shape[:-2], jnp.int32)
    L, info = _chol_factor(_sym_input(A, not upper))
    return (_H(L) if upper else L), info


@jax.custom_jvp
def _chol_factor(h):
    """potrf of the Hermitian ``h``: ``(L, info)``, the partial factor where it fails (XLA's Cholesky gives NaN
    there). Its derivative is the Cholesky one evaluated at the returned ``L`` (:func:`_chol_factor_jvp`)."""
    L = jax.lax.linalg.cholesky(h, symmetrize_input=False)
    failed = jnp.isnan(L).any((-2, -1))
    if _inf_pivot_fails(h):
        failed = failed | jnp.isinf(jnp.diagonal(L, 0, -2, -1)[..., :-1]).any(-1)
    part, order = jax.lax.cond(failed.any(), _chol_partial,
                               lambda x: (jnp.zeros_like(x), jnp.zeros(x.shape[:-2], jnp.int32)), h)
    return jnp.where(failed[..., None, None], part, L), jnp.where(failed, order, 0).astype(jnp.int32)


@_chol_factor.defjvp
def _chol_factor_jvp(primals, tangents):
    """``dL = L Phi(L^{-1} dh L^{-H})`` (JAX's and PyTorch's Cholesky derivative) at the returned ``L``: for a
    matrix that is not positive definite that is LAPACK's partial factor, so the gradient is finite where
    PyTorch's (which applies its formula to the partial factor) is, not the NaN of XLA's failed factor."""
    (h,), (dh,) = primals, tangents
    L, info = _chol_factor(h)
    tri = functools.partial(jax.lax.linalg.triangular_solve, lower=True)
    X = tri(L, tri(L, dh, left_side=False, transpose_a=True, conjugate_a=True), left_side=True)
    n = h.shape[-1]
    phi = jnp.tril(X) / (1 + jnp.eye(n, dtype=X.dtype))
    dL = jnp.matmul(L, phi, precision=jax.lax.Precision.HIGHEST)  # (as JAX's rule: no TF32 on a GPU)
    return (L, info), (dL, np.zeros(info.shape, jax.dtypes.float0))


# ---- SVD / QR / eigh ------------------------------------------------------------------------------------------
def _svd_rule(name="linalg.svd"):
    return _rule(name, low="linalg_svd_cpu", outs=lambda dt: (dt, dt.to_real(), dt))


@jax.custom_jvp
def _svd_full(a):
    """The full SVD (``U`` m x m, ``Vh`` n x n) with the derivative of the reduced one (the extra columns get
    no derivative, as in PyTorch)."""
    return tuple(jnp.linalg.svd(a, full_matrices=True))


@_svd_full.defjvp
def _svd_full_jvp(primals, tangents):
    a, = primals
    da, = tangents
    U, s, Vh = _svd_full(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    Uk, Vhk = U[..., :, :k], Vh[..., :k, :]
    Vk = _H(Vhk)
    # JAX's reduced-SVD JVP (lax.linalg svd_jvp_rule) on the leading factors of the full decomposition
    sd = s[..., None, :]
    dS = _H(Uk) @ da @ Vk
    ds = jnp.real(jnp.diagonal(dS, 0, -2, -1))
    eye = jnp.eye(k, dtype=s.dtype)
    diffs = (sd + jnp.swapaxes(sd, -1, -2)) * (sd - jnp.swapaxes(sd, -1, -2))
    F = (1 / (diffs + eye) - eye).astype(a.dtype)
    dSS, SdS = sd.astype(a.dtype) * dS, jnp.swapaxes(sd, -1, -2).astype(a.dtype) * dS
    s_inv = jnp.where(s == 0, 0, 1 / jnp.where(s == 0, 1, s)).astype(a.dtype)
    dU = Uk @ (F * (dSS + _H(dSS)) + 0.5 * (dS - _H(dS)) * (s_inv[..., None, :] * jnp.eye(k, dtype=a.dtype)))
    dV = Vk @ (F * (SdS + _H(SdS)))
    safe = jnp.where(sd == 0, 1, sd).astype(a.dtype)
    if m > n:
        dAV = da @ Vk
        dU = dU + (dAV - Uk @ (_H(Uk) @ dAV)) / safe
    if n > m:
        dAHU = _H(da) @ Uk
        dV = dV + (dAHU - Vk @ (Vhk @ dAHU)) / safe
    dU = jnp.concatenate([dU, jnp.zeros(U.shape[:-1] + (m - k,), a.dtype)], -1)
    dVh = jnp.concatenate([_H(dV), jnp.zeros(Vh.shape[:-2] + (n - k, n), a.dtype)], -2)
    return (U, s, Vh), (dU, ds, dVh)


def _svd_impl(A, full_matrices):
    m, n = A.shape[-2:]
    if A.size == 0:
        k = min(m, n)
        r, c = (m, n) if full_matrices else (k, k)
        eye = jnp.eye(max(m, n), dtype=A.dtype)
        bs = A.shape[:-2]
        return (jnp.broadcast_to(eye[:m, :r], bs + (m, r)), jnp.zeros(bs + (k,), jnp.real(A).dtype),
                jnp.broadcast_to(eye[:c, :n], bs + (c, n)))
    if full_matrices and m != n:
        return _svd_full(A)
    return tuple(jnp.linalg.svd(A, full_matrices=False))


_SVD_NONFINITE = "The algorithm failed to converge because the input matrix contained non-finite values."
_no_nan = jax.jit(lambda a: ~jnp.isnan(a).any((-2, -1)))


def _svd_error(batch):
    from ..linalg import LinAlgError
    return LinAlgError("linalg.svd: " + ("" if batch is None else f"(Batch element {batch}): ") + _SVD_NONFINITE)


def _svd_no_nan(targs, sargs, dims=None):
    """torch's LinAlgError for a matrix holding a NaN (torch checks for one: an inf gives NaN values, no error;
    XLA's SVD gives NaN singular values, and ``matrix_rank`` would say 0): svd, svdvals and what takes an SVD
    (pinv, matrix_rank, cond, the 2-norm and nuclear norm; ``dims``: the matrices' two dims, default the last
    two). A host read of one flag per matrix; in a compiled function, a deferred check."""
    from . import _deferred
    A = targs[0]
    if not A.numel():
        return
    arr = A._array
    if dims is not None:
        arr = jnp.moveaxis(arr, dims, (-2, -1))
    ok = _no_nan(arr)
    if isinstance(arr, jax.core.Tracer):
        _deferred.check(~ok, ok, lambda v, p: _svd_error(int(p) if ok.ndim else None))
        return
    h = np.asarray(ok)
    if not h.all():
        raise _svd_error(int(np.argmin(h.reshape(-1))) if h.ndim else None)


@defop("linalg_svd", autocast="fp32", promote=_svd_rule(), grad_fn="LinalgSvdBackward0", nout=3, result_type=RT.linalg_svd,
       prep=_square("linalg.svd", False), method=False, function=False, check=_svd_no_nan)
def _svd(A, full_matrices=True):
    """``A = U diag(S) Vh`` (S descending); singular vectors are unique up to sign/phase, as in LAPACK."""
    return _svd_impl(A, full_matrices)


@defop("linalg_svdvals", autocast="fp32", promote=_rule("linalg.svd", low="linalg_svd_cpu", outs=lambda dt: (dt.to_real(),)),
       grad_fn="LinalgSvdBackward0", prep=_square("linalg.svd", False), method=False, function=False,
       check=_svd_no_nan)
def _svdvals(A):
    if A.size == 0:
        return jnp.zeros(A.shape[:-2] + (min(A.shape[-2:]),), jnp.real(A).dtype)
    return jnp.linalg.svd(A, compute_uv=False)


_QR_R = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, "
         "mode='reduced') if you are going to differentiate through linalg.qr.")
_QR_COMPLETE = "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."


def _qr_prep(targs, sargs):
    _need_matrix("linalg.qr", targs[0], square=False)
    if sargs[0] not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{sargs[0]}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    return sargs


@defop("linalg_qr", autocast="fp32", promote=_rule("linalg.qr", low="geqrf_cpu"), grad_fn="LinalgQrBackward0", nout=2,
       result_type=RT.linalg_qr, prep=_qr_prep, method=False, function=False)
def _qr(A, mode="reduced"):
    """``A = QR`` (Householder, as LAPACK's geqrf); ``mode='r'``: Q is an empty tensor."""
    m, n = A.shape[-2:]
    if mode == "r" or (mode == "complete" and m > n):
        f = no_derivative(_QR_R if mode == "r" else _QR_COMPLETE)
        if mode == "r":
            R = jnp.linalg.qr(A, mode="r") if A.size else jnp.zeros(A.shape[:-2] + (min(m, n), n), A.dtype)
            return jnp.zeros((0,), A.dtype), f(R)
        if not A.size:
            return f(jnp.broadcast_to(jnp.eye(m, dtype=A.dtype), A.shape[:-2] + (m, m))), \
                f(jnp.zeros(A.shape[:-2] + (m, n), A.dtype))
        Q, R = jnp.linalg.qr(A, mode="complete")  # (R is (m, n): zero rows below the n-th)
        return f(Q), f(R)
    if A.size == 0:
        k = min(m, n)
        return (jnp.broadcast_to(jnp.eye(m, k, dtype=A.dtype), A.shape[:-2] + (m, k)),
                jnp.zeros(A.shape[:-2] + (k, n), A.dtype))
    if m < n:  # differentiable form (JAX has no derivative for wide QR): the square QR of the first m columns
        Q, R1 = jnp.linalg.qr(A[..., :m])
        return Q, jnp.concatenate([R1, _H(Q) @ A[..., m:]], -1)
    Q, R = jnp.linalg.qr(A)
    return Q, R


def _eigh_prep(api):
    """UPLO: a str (the argument parser's TypeError), ``'L'`` / ``'U'`` in either case (LAPACK's check)."""
    def prep(targs, sargs):
        uplo = sargs[0]
        if not isinstance(uplo, str):
            raise TypeError(f"{api}(): argument 'UPLO' must be str, not {_type_name(uplo)}")
        _need_matrix("linalg.eigh", targs[0])
        if uplo not in ("L", "U", "l", "u"):
            raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
        return (uplo.upper(),)
    return prep


def _eigh_impl(A, UPLO):
    if not A.shape[-1]:
        return jnp.zeros(A.shape[:-1], jnp.real(A).dtype), A
    v, w = jax.lax.linalg.eigh(_sym_input(A, UPLO == "L"), lower=True, symmetrize_input=False)
    return w, v


@defop("linalg_eigh", autocast="fp32", promote=_rule("linalg.eigh", low="linalg_eigh_cpu", kernel_only=True,
                                    outs=lambda dt: (dt.to_real(), dt)),
       grad_fn="LinalgEighBackward0", nout=2, result_type=RT.linalg_eigh, prep=_eigh_prep("linalg_eigh"), method=False,
       function=False)
def _eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of the Hermitian matrix of A's ``UPLO`` triangle."""
    return _eigh_impl(A, UPLO)


@defop("linalg_eigvalsh", autocast="fp32", promote=_rule("linalg.eigh", low="linalg_eigh_cpu", kernel_only=True,
                                        outs=lambda dt: (dt.to_real(),)),
       grad_fn="LinalgEighBackward0", prep=_eigh_prep("linalg_eigvalsh"), method=False, function=False)
def _eigvalsh(A, UPLO="L"):
    return _eigh_impl(A, UPLO)[0]


# ---- pinv / matrix_rank / lstsq -----------------------------------------------------------------------------------
def _tolerances(s_max, m, n, atol, rtol, dt):
    """PyTorch's ``max(atol, rtol * s_max)``; rtol defaults to eps * max(m, n), or 0 when atol > 0."""
    if rtol is None:
        default = jnp.asarray(float(jnp.finfo(dt).eps) * max(m, n), s_max.dtype)
        rtol = default if atol is None else jnp.where(atol > 0, jnp.zeros((), s_max.dtype), default)
    atol = jnp.zeros((), s_max.dtype) if atol is None else atol
    return jnp.maximum(jnp.asarray(atol)[..., None], jnp.asarray(rtol)[..., None] * s_max)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _pinv(a, atol, rtol, hermitian):
    m, n = a.shape[-2:]
    if hermitian:
        w, v = jax.lax.linalg.eigh(a, lower=True, symmetrize_input=False)[::-1]
        tol = _tolerances(jnp.max(jnp.abs(w), -1, keepdims=True), m, n, atol, rtol, a.dtype)
        w_inv = jnp.where(jnp.abs(w) > tol, 1 / jnp.where(w == 0, 1, w), 0).astype(a.dtype)
        return (v * w_inv[..., None, :]) @ _H(v)
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    tol = _tolerances(s[..., :1], m, n, atol, rtol, a.dtype)
    s_inv = jnp.where(s > tol, 1 / jnp.where(s == 0, 1, s), 0).astype(a.dtype)
    return (_H(vh) * s_inv[..., None, :]) @ _H(u)


@_pinv.defjvp
def _pinv_jvp(hermitian, primals, tangents):
    # the derivative of the pseudo-inverse (Golub & Pereyra 1973), as PyTorch's pinv_backward and JAX's pinv
    a, atol, rtol = primals
    da = tangents[0]
    p = _pinv(a, atol, rtol, hermitian)
    m, n = a.shape[-2:]
    if m >= n:
        s = (p @ _H(p)) @ _H(da)
        t = (_H(da) @ _H(p)) @ p
        dp = -(p @ da) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    else:
        s = p @ (_H(p) @ _H(da))
        t = _H(da) @ (_H(p) @ p)
        dp = -p @ (da @ p) + s - s @ (a @ p) + t - p @ (a @ t)
    return p, dp


def _pinv_prep(targs, sargs):
    A = targs[0]
    if len(A._shape) < 2 or A.dtype not in _LIN:
        raise RuntimeError(f"linalg.pinv({A.dtype.short}{{{list(A._shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    if sargs[0]:
        _need_matrix("linalg.eigh", A)
    return sargs


def _unless_hermitian(targs, sargs):
    if not sargs[-1]:  # (hermitian: an eigendecomposition, no SVD)
        _svd_no_nan(targs, sargs)


@defop("linalg_pinv", autocast="lower", promote=_rule("linalg.pinv"), grad_fn="LinalgPinvBackward0", tensors=3, prep=_pinv_prep,
       method=False, function=False, saves=(0, "result"), check=_unless_hermitian)
def _pinv_op(A, atol, rtol, hermitian):
    """Moore-Penrose pseudo-inverse: singular values <= max(atol, rtol * s_max) are treated as zero."""
    if A.size == 0:
        return jnp.zeros(A.shape[:-2] + A.shape[-2:][::-1], A.dtype)
    return _pinv(A, atol, rtol, hermitian)


def _rank_prep(targs, sargs):
    A = targs[0]
    if len(A._shape) < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.dtype not in _LIN:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if sargs[0]:
        _need_matrix("linalg.eigh", A)
    return sargs


def _singular_values(A, hermitian):
    if hermitian:
        w = jnp.abs(jax.lax.linalg.eigh(A, lower=True, symmetrize_input=False)[1])
        return -jnp.sort(-w, -1)
    return jnp.linalg.svd(A, compute_uv=False)


@defop("linalg_matrix_rank", autocast="fp32", promote=_rule("linalg.matrix_rank", outs=lambda dt: (D.int64,)), tensors=3,
       prep=_rank_prep, differentiable=False, method=False, function=False, check=_unless_hermitian)
def _matrix_rank(A, atol, rtol, hermitian):
    """The number of singular values > max(atol, rtol * s_max) (int64)."""
    m, n = A.shape[-2:]
    if A.size == 0:
        return jnp.zeros(A.shape[:-2], jnp.int64)
    s = _singular_values(A, hermitian)
    return jnp.sum(s > _tolerances(s[..., :1], m, n, atol, rtol, A.dtype), -1).astype(jnp.int64)


@defop("linalg_lstsq_rank", autocast="fp32", promote=_rule("torch.linalg.lstsq", outs=lambda dt: (D.int64, dt.to_real())),
       nout=2, differentiable=False, method=False, function=False)
def _lstsq_rank(A, rcond):
    """LAPACK's effective rank (singular values > rcond * s_max) and the singular values (gelsd/gelss); for
    gelsy, whose pivoted-QR rank estimate agrees except for singular values within rounding of the cut-off."""
    s = jnp.linalg.svd(A, compute_uv=False) if A.size else jnp.zeros(A.shape[:-2] + (0,), jnp.real(A).dtype)
    rank = jnp.sum(s > rcond * s[..., :1], -1) if A.size else jnp.zeros(A.shape[:-2], jnp.int64)
    return rank.astype(jnp.int64), s


def _lstsq_rule(op, sig, sargs):
    (_, a), (_, b) = sig
    if a is not b:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
                           f"{a.short} and other's dtype {b.short}")
    _rule("torch.linalg.lstsq")(op, sig[:1], sargs)
    return (None, None), (a, a.to_real(), D.int32)


@defop("linalg_lstsq", autocast="fp32", promote=_lstsq_rule, grad_fn="LinalgLstsqBackward0", tensors=2, nout=3, method=False,
       function=False)
def _lstsq(A, B, rcond, driver, vector, residuals, batch):
    """``(solution, residuals, info)``: the minimum-norm least-squares solution ``pinv(A) B`` with singular values
    <= rcond * s_max dropped (gels: none dropped; its info = the first zero diagonal entry of A's R factor).
    PyTorch differentiates it as ``pinv(A) B`` with pinv's default tolerance, whatever ``rcond``."""
    b = B[..., None] if vector else B
    m, n = A.shape[-2:]
    A_ = jnp.broadcast_to(A, batch + (m, n))
    b_ = jnp.broadcast_to(b, batch + b.shape[-2:])
    rdt = jnp.real(A).dtype
    if A.size == 0 or b_.size == 0:
        x = jnp.zeros(batch + (n, b_.shape[-1]), A.dtype)
    else:
        default = float(jnp.finfo(rdt).eps) * max(m, n)
        x = _pinv(A_, None, jnp.asarray(default, rdt), False) @ b_
        cut = 0.0 if driver == "gels" else rcond
        if cut != default:  # the value with LAPACK's cut-off, the derivative as above
            sg = jax.lax.stop_gradient
            x = x + sg(_pinv(sg(A_), None, jnp.asarray(cut, rdt), False) @ sg(b_) - x)
    info = jnp.zeros(A.shape[:-2], jnp.int32)
    if driver == "gels" and A.size:
        As = jax.lax.stop_gradient(A)
        R = jnp.linalg.qr(As if m >= n else _H(As), mode="r")
        info = jnp.where(jnp.all(As == 0, (-2, -1)), 0, _first_zero(jnp.diagonal(R, 0, -2, -1)))
    res = jnp.sum(jnp.abs(A_ @ x - b_) ** 2, -2) if residuals else jnp.zeros((0,), rdt)
    return (x[..., 0] if vector else x), res, info.astype(jnp.int32)


# ---- matrix norms (+-1, +-inf, +-2, nuc; 'fro' is the norm op's) ---------------------------------------------------
def _mnorm_prep(targs, sargs):
    ord_, dim, keepdim, dtype = sargs
    return ord_, tuple(dim), keepdim, dtype


def _mnorm_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category < D.FLOAT:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got {dt.short}")
    if (sargs[0] == "nuc" or abs(sargs[0]) == 2) and dt in (D.float16, D.bfloat16):
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {dt.short}")
    r = D.as_dtype(sargs[3]) if sargs[3] is not None else dt
    return (r,), (r.to_real(),)


def _mnorm_name(targs, sargs):
    ord_, keepdim = sargs[0], sargs[2]
    if keepdim and (ord_ == "nuc" or abs(ord_) == 2):
        return "PermuteBackward0"  # PyTorch moves the kept dims back with a permute
    if ord_ == "nuc":
        return "SumBackward1"
    return "AmaxBackward0" if ord_ > 0 else "AminBackward0"


def _mnorm_check(targs, sargs):
    """A negative order's ``amin`` over an empty dim raises as torch's: over the singular values (dim -1), or over
    the column (row) sums, at the dim the first reduction left (a positive order's ``amax`` there gives 0)."""
    ord_, (d0, d1), keepdim = sargs[:3]
    shape = targs[0]._shape
    if ord_ == "nuc" or abs(ord_) == 2:
        if ord_ == -2 and min(shape[d0], shape[d1]) == 0:
            raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
        _svd_no_nan(targs, sargs, sargs[1])
    elif ord_ < 0:
        if math.isinf(ord_):
            d0, d1 = d1, d0
        if shape[d1] == 0:
            raise IndexError(f"amin(): Expected reduction dim {d1 - (not keepdim and d0 < d1)} to have non-zero "
                             "size.")


@defop("linalg_matrix_norm", promote=_mnorm_rule, prep=_mnorm_prep, method=False, function=False,
       grad_fn=_mnorm_name, kernel="norm_cpu", check=_mnorm_check)
def _matrix_norm(A, ord, dim, keepdim, dtype):
    """Matrix norms ord = 'nuc' (sum of singular values), +-1 (max/min column sum), +-inf (row sum), +-2
    (largest/smallest singular value); 'fro' is the ``norm`` op's."""
    d0, d1 = dim
    if ord == "nuc" or abs(ord) == 2:
        s = jnp.linalg.svd(jnp.moveaxis(A, (d0, d1), (-2, -1)), compute_uv=False)
        if not s.shape[-1]:  # (an empty matrix: 0, as torch's; a negative order raised in _mnorm_check)
            r = jnp.zeros(s.shape[:-1], s.dtype)
        else:
            r = jnp.sum(s, -1) if ord == "nuc" else (jnp.max if ord > 0 else jnp.min)(s, -1)
        for d in sorted((d0, d1)) if keepdim else ():
            r = jnp.expand_dims(r, d)
        return r
    if math.isinf(ord):
        d0, d1 = d1, d0
    # (torch's abs gradient, sign(x): 0 at a zero element; an empty max is 0, as torch's)
    x = _acc(jnp.abs(A) if jnp.iscomplexobj(A) else _go.abs(A))
    sums = jnp.sum(x, d0, keepdims=True)
    r = jnp.max(sums, d1, keepdims=True, initial=0) if ord > 0 else jnp.min(sums, d1, keepdims=True)
    return r if keepdim else jnp.squeeze(r, (d0, d1))
