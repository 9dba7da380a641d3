"""The op-table rows of the rest of ``torch.linalg`` and its classic top-level forms: LU (factor, unpack, solve),
triangular and Cholesky solves, the matrix exponential, the general eigen-decomposition, Householder products
(``geqrf`` / ``orgqr`` / ``ormqr``) and the LDL factorization. Their public functions (argument parsing, the error
checks that read ``info``, the named results, the composites ``cond`` / ``tensorinv`` / ``vander``...) are in
``functorch_lite/_linalg_more.py``.

Gradients are JAX's derivatives of these bodies, except where PyTorch's convention differs:

* ``cholesky_solve`` / ``cholesky_inverse``: LAPACK reads one triangle of the factor, but PyTorch's gradient
  multiplies by the whole input (``-(Y X^H + X Y^H) L``): a custom JVP with that formula (:func:`_chol_solve`).
* ``linalg.eig``: JAX differentiates eigenvalues only; :func:`_eig` has PyTorch's derivative (eigenvectors of
  unit norm; the phase gauge is not differentiated), so a gauge-dependent loss is not refused as in PyTorch.
* ``householder_product`` / ``ormqr``: JAX's kernels have no derivative; they are products of reflectors here
  (:func:`_reflect`), differentiable and equal to LAPACK's orgqr / ormqr to rounding.
* ``geqrf`` and the LDL ops have no derivative in PyTorch either: their backward raises PyTorch's error.

LDL (sytrf / hetrf, with Bunch-Kaufman pivoting) has no JAX kernel: it runs LAPACK on the host through
``jax.pure_callback`` (SciPy's bindings), giving PyTorch's packed ``LD`` and pivots exactly.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from ._registry import defop
from .grad_overrides import aten_no_derivative, no_derivative
from .linalg_ops import _H, _LIN, _first_zero, _need_matrix
from .reduction import _structseq, return_types as RT

for _n, _f in (("linalg_lu", ("P", "L", "U")), ("linalg_lu_factor", ("LU", "pivots")),
               ("linalg_lu_factor_ex", ("LU", "pivots", "info")), ("_lu_with_info", ("LU", "pivots", "info")),
               ("lu_unpack", ("P", "L", "U")), ("linalg_eig", ("eigenvalues", "eigenvectors")),
               ("triangular_solve", ("solution", "cloned_coefficient")), ("geqrf", ("a", "tau")),
               ("linalg_ldl_factor", ("LD", "pivots")), ("linalg_ldl_factor_ex", ("LD", "pivots", "info"))):
    setattr(RT, _n, _structseq(_n, _f))


# ---- dtype rules ------------------------------------------------------------------------------------------------
def _bA_msg(b, a):
    """PyTorch's dtype check of the solves that take ``(b, A)`` (``b``'s dtype, then ``A``'s)."""
    return f"Expected b and A to have the same dtype, but found b of type {b.short} and A of type {a.short} instead."


def _lrule(kernel, name=None, half_ok=False, outs=None, same=(), cast=(), int_msg=None):
    """LAPACK's dtypes (``half_ok``: any floating dtype) for the first tensor: an integer / bool one raises
    "<name>: Expected a floating point or complex tensor" when ``name`` is given (``int_msg(dt)`` for another
    wording), any other one PyTorch's kernel error ``"<kernel>" not implemented for ...``. ``same``: (index,
    message(first dtype, its dtype)) for tensor arguments that must share the first's dtype; ``cast``: indices cast
    to it instead; ``outs(dt)``: the output dtypes."""
    def rule(op, sig, sargs):
        dt = sig[0][1]
        for i, msg in same:
            if sig[i][1] is not dt:
                raise RuntimeError(msg(dt, sig[i][1]))
        if dt not in _LIN and not (half_ok and dt.category == D.FLOAT and dt not in D.FLOAT8):
            if dt.category < D.FLOAT and (name or int_msg):
                raise RuntimeError(int_msg(dt) if int_msg else
                                   f"{name}: Expected a floating point or complex tensor as input. Got {dt.short}")
            raise no_kernel(kernel, dt)
        return tuple(dt if i in cast else None for i in range(len(sig))), (outs(dt) if outs else (dt,) * op.nout)
    return rule


def _bcast(*arrays):
    """Broadcast the batch dims of matrices (the last two dims kept)."""
    b = np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    return tuple(jnp.broadcast_to(a, b + a.shape[-2:]) for a in arrays)


def _tri(a, lower, k=0):
    return jnp.tril(a, -k) if lower else jnp.triu(a, k)


def _trsolve(a, b, *, lower, left=True, unit=False, adjoint=False, transpose=False):
    """``op(a) x = b`` (``left``) or ``x op(a) = b``, ``a`` triangular (only its ``lower`` / upper triangle read)."""
    a, b = _bcast(a, b)
    if not a.size or not b.size:
        return jnp.zeros(b.shape, b.dtype)
    return jax.lax.linalg.triangular_solve(a, b, left_side=left, lower=lower, unit_diagonal=unit,
                                           transpose_a=adjoint or transpose, conjugate_a=adjoint)


# ---- LU -----------------------------------------------------------------------------------------------------------
def _lu_core(A):
    """``(LU, pivots (0-based, int32), permutation)`` of getrf (partial pivoting), empty inputs included."""
    m, n = A.shape[-2:]
    if not A.size:
        k = min(m, n)
        return A, jnp.zeros(A.shape[:-2] + (k,), jnp.int32), jnp.broadcast_to(jnp.arange(m), A.shape[:-2] + (m,))
    return jax.lax.linalg.lu(A)


def _lu_prep(name):
    def prep(targs, sargs):
        if len(targs[0]._shape) < 2:
            raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(targs[0]._shape)} "
                               "instead")
        if not sargs[0]:
            if targs[0].device.type == "cpu":
                raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
            raise RuntimeError("functorch_lite: linalg.lu_factor: LU without pivoting (pivot=False) is not supported "
                               "(JAX's LU always pivots); use pivot=True")
        return (bool(sargs[0]),)
    return prep


@defop("linalg_lu_factor_ex", promote=_lrule("lu_cpu", outs=lambda dt: (dt, D.int32, D.int32)),
       grad_fn="LinalgLuFactorExBackward0", nout=3, result_type=RT.linalg_lu_factor_ex,
       prep=_lu_prep("torch.lu_factor"), method=False, function=False)
def _lu_factor_ex(A, pivot=True):
    """getrf: ``(LU, pivots (1-based), info)``; info = the first exactly-zero diagonal entry of U (1-based)."""
    lu, piv, _ = _lu_core(A)
    info = _first_zero(jnp.diagonal(lu, 0, -2, -1)) if lu.size else jnp.zeros(A.shape[:-2], jnp.int32)
    return lu, (piv + 1).astype(jnp.int32), info


def _perm_matrix(perm, m, dt):
    """``P`` with ``A = P L U`` from the row permutation ``perm`` (``A[perm] = L U``)."""
    return jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=dt), -1, -2)


def _unpack(lu):
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = _tri(lu[..., :, :k], True, 1) + jnp.eye(m, k, dtype=lu.dtype)
    return L, jnp.triu(lu[..., :k, :])


@defop("linalg_lu", promote=_lrule("lu_cpu"), grad_fn="LinalgLuBackward0", nout=3, result_type=RT.linalg_lu,
       prep=_lu_prep("linalg.lu"), method=False, function=False)
def _lu(A, pivot=True):
    """``A = P L U``: P a permutation matrix, L unit lower trapezoidal, U upper trapezoidal."""
    lu, _, perm = _lu_core(A)
    L, U = _unpack(lu)
    return _perm_matrix(perm, A.shape[-2], A.dtype), L, U


def _unpack_prep(targs, sargs):
    LU, piv = targs
    if len(LU._shape) < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(LU._shape)} "
                           "instead")
    if not isinstance(piv, Tensor) or piv.dtype is not D.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")
    if piv._shape[:-1] != LU._shape[:-2] or len(piv._shape) < 1 or piv._shape[-1] > LU._shape[-2]:
        raise RuntimeError(f"torch.lu_unpack: Expected LU_pivots.shape[:-1] to be LU_data.shape[:-2] and at most "
                           f"LU_data.size(-2) pivots, but got LU_pivots with shape {list(piv._shape)}")
    return bool(sargs[0]), bool(sargs[1])


def _lu_unpack_rule(op, sig, sargs):
    dt = sig[0][1]
    return (None, None), (dt, dt, dt)


@defop("lu_unpack", promote=_lu_unpack_rule, grad_fn="LuUnpackBackward0", tensors=2, nout=3,
       result_type=RT.lu_unpack, prep=_unpack_prep, method=False, function=False)
def _lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from lu_factor's packed output (an empty P / L, U when not asked for)."""
    m = LU_data.shape[-2]
    empty = jnp.zeros((0,), LU_data.dtype)
    if unpack_pivots:
        perm = jax.lax.linalg.lu_pivots_to_permutation(LU_pivots - 1, m) if LU_pivots.size else \
            jnp.broadcast_to(jnp.arange(m), LU_pivots.shape[:-1] + (m,))
        P = _perm_matrix(perm, m, LU_data.dtype)
    else:
        P = empty
    L, U = _unpack(LU_data) if unpack_data else (empty, empty)
    return P, L, U


def _lu_solve_prep(targs, sargs):
    LU, piv, B = targs
    left = sargs[0]
    _need_matrix("torch.linalg.lu_solve", LU)
    if len(B._shape) < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n, (r, c) = LU._shape[-1], B._shape[-2:]
    if (r if left else c) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {r}x{c})")
    if piv._shape != LU._shape[:-1]:
        if piv._shape[:-1] == LU._shape[:-2]:
            raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the "
                               "matrix")
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
                           f"with shape {list(piv._shape)} instead")
    if piv.dtype is not D.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    return bool(left), bool(sargs[1])


def _lu_solve_rule(op, sig, sargs):
    (_, a), _, (_, b) = sig
    if a is not b:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type {a.short} "
                           f"and B of type {b.short} instead")
    return _lrule("linalg.lu_solve_cpu", "torch.linalg.lu_solve")(op, sig, sargs)


def _lu_solve_impl(LU, piv, B, left, adjoint):
    if not left:  # XA = B  <=>  A^H X^H = B^H (and X A^H = B <=> A X^H = B^H)
        return _H(_lu_solve_impl(LU, piv, _H(B), True, not adjoint))
    n = LU.shape[-1]
    LU, B = _bcast(LU, B)
    if not LU.size or not B.size:
        return jnp.zeros(B.shape, B.dtype)
    perm = jnp.broadcast_to(jax.lax.linalg.lu_pivots_to_permutation(piv - 1, n), LU.shape[:-1])
    if not adjoint:  # A = P L U: L U X = P^T B = B[perm]
        y = jnp.take_along_axis(B, perm[..., None], -2)
        return _trsolve(LU, _trsolve(LU, y, lower=True, unit=True), lower=False)
    z = _trsolve(LU, _trsolve(LU, B, lower=False, adjoint=True), lower=True, unit=True, adjoint=True)
    return jnp.take_along_axis(z, jnp.argsort(perm, -1)[..., None], -2)  # X[perm] = z


@defop("linalg_lu_solve", promote=_lu_solve_rule, grad_fn="LinalgLuSolveBackward0", tensors=3, prep=_lu_solve_prep,
       method=False, function=False, broadcast=False)
def _lu_solve(LU, pivots, B, left=True, adjoint=False):
    """``AX = B`` from lu_factor's ``(LU, pivots)`` (``left=False``: ``XA = B``; ``adjoint``: ``A^H``)."""
    return _lu_solve_impl(LU, pivots, B, left, adjoint)


# ---- triangular and Cholesky solves -------------------------------------------------------------------------------
def _st_prep(targs, sargs):
    A, B = targs
    _need_matrix("linalg.solve_triangular", A)
    if len(B._shape) < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    upper, left, unit = sargs
    n, (r, c) = A._shape[-1], B._shape[-2:]
    if (r if left else c) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {r}x{c})")
    return bool(upper), bool(left), bool(unit)


@defop("linalg_solve_triangular", promote=_lrule("triangular_solve_cpu", cast=(1,)),
       grad_fn="LinalgSolveTriangularBackward0", tensors=2, prep=_st_prep, method=False, function=False,
       saves=(0, "result"))
def _solve_triangular(A, B, upper, left=True, unitriangular=False):
    """``AX = B`` (``left``) or ``XA = B`` with A upper / lower triangular (B is cast to A's dtype, as PyTorch)."""
    return _trsolve(A, B, lower=not upper, left=left, unit=unitriangular)


def _bA_prep(api, what, dims_msg):
    """The shape checks of triangular_solve / cholesky_solve (``b`` first, ``A`` second)."""
    def prep(targs, sargs):
        b, A = targs
        if len(b._shape) < 2:
            raise RuntimeError(dims_msg(len(b._shape)))
        _need_matrix(api, A)
        if b._shape[-2] != A._shape[-1]:
            raise RuntimeError(f"Incompatible matrix sizes for {what}: each A matrix is {A._shape[-1]} by "
                               f"{A._shape[-1]} but each b matrix is {b._shape[-2]} by {b._shape[-1]}")
        from ._dispatch import broadcast_shapes
        broadcast_shapes(b._shape[:-2], A._shape[:-2])
        return tuple(bool(s) for s in sargs)
    return prep


@defop("triangular_solve", autocast="fp32",
       promote=_lrule("triangular_solve_cpu", same=((1, _bA_msg),)),
       grad_fn="TriangularSolveBackward0", tensors=2, nout=2, result_type=RT.triangular_solve,
       prep=_bA_prep("torch.triangular_solve", "triangular_solve", lambda d: "torch.triangular_solve: Expected b to "
                     f"have at least 2 dimensions, but it has {d} dimensions instead"), method=False, function=False)
def _triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """``(X, A)`` with ``op(A) X = input`` (``transpose``: ``A^T``); A's batch broadcast with input's."""
    b, a = _bcast(input, A)
    return _trsolve(a, b, lower=not upper, unit=unitriangular, transpose=transpose), a


def _chol_solve_fn(B, L, upper):
    """``(L L^H)^{-1} B`` (``upper``: ``(U^H U)^{-1} B``) reading one triangle of the factor."""
    lower = not upper
    return _trsolve(L, _trsolve(L, B, lower=lower, adjoint=upper), lower=lower, adjoint=lower)


_chol_solve = jax.custom_jvp(_chol_solve_fn, nondiff_argnums=(2,))


@_chol_solve.defjvp
def _chol_solve_jvp(upper, primals, tangents):
    # PyTorch's cholesky_solve_backward (and cholesky_inverse_backward): the whole factor enters A = L L^H
    B, L = primals
    dB, dL = tangents
    X = _chol_solve_fn(B, L, upper)
    dA = _H(dL) @ L + _H(L) @ dL if upper else dL @ _H(L) + L @ _H(dL)
    return X, _chol_solve_fn(dB - dA @ X, L, upper)


@defop("cholesky_solve", autocast="fp32",
       promote=_lrule("cholesky_solve_cpu", same=((1, _bA_msg),)),
       grad_fn="CholeskySolveBackward0", tensors=2, saves=("all", "result"),
       prep=_bA_prep("cholesky_solve", "cholesky_solve", lambda d: f"b should have at least 2 dimensions, but has {d} "
                     "dimensions instead"), method=False, function=False, broadcast=False)
def _cholesky_solve(input, input2, upper=False):
    """``X`` with ``(L L^H) X = input`` from the Cholesky factor ``input2`` (``upper``: ``U^H U``)."""
    b, L = _bcast(input, input2)
    return _chol_solve(b, L, upper)


def _cinv_prep(targs, sargs):
    _need_matrix("cholesky_inverse", targs[0])
    return (bool(sargs[0]),)


@defop("cholesky_inverse", autocast="fp32", promote=_lrule("cholesky_inverse_out_cpu"),
       grad_fn="CholeskyInverseBackward0", prep=_cinv_prep, method=False, function=False, saves=(0, "result"))
def _cholesky_inverse(input, upper=False):
    """``(L L^H)^{-1}`` from the Cholesky factor (``upper``: ``(U^H U)^{-1}``)."""
    n = input.shape[-1]
    return _chol_solve(jnp.broadcast_to(jnp.eye(n, dtype=input.dtype), input.shape), input, upper)


_diag_info = jax.jit(lambda a: _first_zero(jnp.diagonal(a, 0, -2, -1)))


def cholesky_inverse_info(a):
    """potri's ``info`` of a Cholesky factor (its first zero diagonal element: PyTorch raises, JAX's solve gives
    inf/nan), or None where no host check runs (traced or meta arrays) or none is needed (empty)."""
    if isinstance(a, jax.core.Tracer) or type(a) is jax.ShapeDtypeStruct or not a.size:
        return None
    return _diag_info(a)


# ---- matrix_exp / eig -----------------------------------------------------------------------------------------------
def _square_prep(name, cpu_only=False):
    def prep(targs, sargs):
        A = targs[0]
        _need_matrix(name, A)
        if cpu_only and A.device.type not in ("cpu", "meta"):
            raise RuntimeError(f"functorch_lite: torch.{name} is only available on the CPU here (JAX's general "
                               f"eigen-solver has no {A.device.type} kernel); compute it on a CPU copy: "
                               f"torch.{name}(A.cpu())")
        return sargs
    return prep


@defop("linalg_matrix_exp", promote=_lrule("linalg_matrix_exp", "linalg.matrix_exp", half_ok=True),
       grad_fn="LinalgMatrixExpBackward0", prep=_square_prep("linalg.matrix_exp"), method=False, function=False)
def _matrix_exp(A):
    """``exp(A)`` (scaling and squaring with Pade approximants; float16 / bfloat16 computed in float32)."""
    if not A.size:
        return A
    if A.dtype in (jnp.float16, jnp.bfloat16):
        return jax.scipy.linalg.expm(A.astype(jnp.float32)).astype(A.dtype)
    return jax.scipy.linalg.expm(A)


def _eig_rule(outs):
    return _lrule("linalg_eig_out_cpu", int_msg=lambda dt: f"Unknown Complex ScalarType for {dt.short}",
                  outs=lambda dt: outs(dt.to_complex()))


@jax.custom_jvp
def _eig(A):
    """LAPACK's geev: eigenvalues and unit-norm eigenvectors (largest component real), complex."""
    if not A.size:
        c = jnp.complex64 if A.dtype in (jnp.float32, jnp.complex64) else jnp.complex128
        return jnp.zeros(A.shape[:-1], c), jnp.zeros(A.shape, c)
    w, v = jnp.linalg.eig(A)
    return w, v


@_eig.defjvp
def _eig_jvp(primals, tangents):
    # PyTorch's linalg_eig_jvp: dL = diag(V^-1 dA V); dV = V (C - diag(Re(diag(V^H V C)))), C_ij = dP_ij / (L_j - L_i)
    A, = primals
    dA, = tangents
    w, v = _eig(A)
    if not A.size:
        return (w, v), (jnp.zeros_like(w), jnp.zeros_like(v))
    dP = jnp.linalg.solve(v, dA.astype(v.dtype) @ v)
    dw = jnp.diagonal(dP, 0, -2, -1)
    n = A.shape[-1]
    E = w[..., None, :] - w[..., :, None]
    eye = jnp.eye(n, dtype=bool)
    C = jnp.where(eye, 0, dP / jnp.where(eye, 1, E))
    d = jnp.real(jnp.diagonal(_H(v) @ v @ C, 0, -2, -1)).astype(v.dtype)
    dv = v @ (C - d[..., None, :] * jnp.eye(n, dtype=v.dtype))
    return (w, v), (dw, dv)


@defop("linalg_eig", autocast="fp32", promote=_eig_rule(lambda c: (c, c)), grad_fn="LinalgEigBackward0", nout=2,
       result_type=RT.linalg_eig, prep=_square_prep("linalg.eig", True), method=False, function=False)
def _linalg_eig(A):
    """``(eigenvalues, eigenvectors)``, complex (not sorted; LAPACK's order, as PyTorch's CPU kernel)."""
    return _eig(A)


@defop("linalg_eigvals", autocast="fp32", promote=_eig_rule(lambda c: (c,)), grad_fn="LinalgEigBackward0",
       prep=_square_prep("linalg.eigvals", True), method=False, function=False)
def _linalg_eigvals(A):
    return _eig(A)[0]


# ---- Householder: geqrf / householder_product (orgqr) / ormqr --------------------------------------------------------
def _reflect(A, tau, C, left, adjoint):
    """``op(Q) C`` (``left``) or ``C op(Q)`` with ``Q = H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` (v_i: column i of
    A below the diagonal, 1 on it): LAPACK's ormqr / orgqr as a differentiable loop over the reflectors."""
    k = tau.shape[-1]
    rows = jnp.arange(A.shape[-2])
    ts = jnp.conj(tau) if adjoint else tau
    forward = left == adjoint  # the order the reflectors are applied in

    def step(j, C):
        i = j if forward else k - 1 - j
        col = jax.lax.dynamic_index_in_dim(A, i, -1, keepdims=False)
        v = jnp.where(rows > i, col, jnp.where(rows == i, jnp.ones((), A.dtype), jnp.zeros((), A.dtype)))
        t = jax.lax.dynamic_index_in_dim(ts, i, -1, keepdims=False)[..., None, None]
        if left:  # H C = C - t v (v^H C)
            return C - t * v[..., :, None] * (jnp.conj(v)[..., None, :] @ C)
        return C - t * (C @ v[..., :, None]) * jnp.conj(v)[..., None, :]  # C H = C - t (C v) v^H
    return jax.lax.fori_loop(0, k, step, C) if k else C


def _hp_prep(targs, sargs):
    A, tau = targs
    api = "torch.linalg.householder_product"
    if len(A._shape) < 2:
        raise RuntimeError(f"{api}: input must have at least 2 dimensions.")
    if len(tau._shape) != len(A._shape) - 1:
        raise RuntimeError(f"{api}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{len(tau._shape)} and input.ndim is equal to {len(A._shape)}")
    if A._shape[-2] < A._shape[-1]:
        raise RuntimeError(f"{api}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A._shape[-1] < tau._shape[-1]:
        raise RuntimeError(f"{api}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau._shape[:-1] != A._shape[:-2]:
        raise RuntimeError(f"{api}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau._shape[:-1])}")
    return sargs


def _tau_msg(api):
    return lambda a, b: f"{api}: tau dtype {b.short} does not match input dtype {a.short}"


@defop("linalg_householder_product", autocast="fp32",
       promote=_lrule("orgqr_cpu", same=((1, _tau_msg("torch.linalg.householder_product")),)),
       grad_fn="LinalgHouseholderProductBackward0", tensors=2, prep=_hp_prep, method=False, function=False)
def _householder_product(input, tau):
    """The first n columns of ``H_1 ... H_k`` (LAPACK's orgqr / ungqr)."""
    m, n = input.shape[-2:]
    eye = jnp.broadcast_to(jnp.eye(m, n, dtype=input.dtype), input.shape)
    return _reflect(input, tau, eye, True, False)


_GEQRF_NO_GRAD = no_derivative("the derivative for 'geqrf' is not implemented.", NotImplementedError)


def _geqrf_prep(targs, sargs):
    if len(targs[0]._shape) < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    return sargs


@defop("geqrf", autocast="fp32", promote=_lrule("geqrf_cpu"), grad_fn="GeqrfBackward0", nout=2,
       result_type=RT.geqrf, prep=_geqrf_prep, method=False, function=False)
def _geqrf(input):
    """LAPACK's geqrf: R above the diagonal, the Householder vectors below it, and their scales ``tau``."""
    m, n = input.shape[-2:]
    if not input.size:
        return input, jnp.zeros(input.shape[:-2] + (min(m, n),), input.dtype)
    from jax._src.lax.linalg import geqrf  # (JAX exports it only privately)
    return _GEQRF_NO_GRAD(geqrf(jax.lax.stop_gradient(input)), input)


def _ormqr_prep(targs, sargs):
    A, tau, C = targs
    left = sargs[0]
    api = "torch.ormqr"
    for t, nm in ((A, "input"), (C, "other")):
        if len(t._shape) < 2:
            raise RuntimeError(f"{api}: {nm} must have at least 2 dimensions.")
    if len(tau._shape) != len(A._shape) - 1:
        raise RuntimeError(f"{api}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{len(tau._shape)} and input.ndim is equal to {len(A._shape)}")
    if len(C._shape) != len(A._shape):
        raise RuntimeError(f"{api}: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {len(C._shape)} and input.ndim is equal to {len(A._shape)}")
    d = -2 if left else -1
    if C._shape[d] != A._shape[-2]:
        raise RuntimeError(f"{api}: other.shape[{d}] must be equal to input.shape[-2]")
    if tau._shape[-1] != min(C._shape[d], A._shape[-1]):
        raise RuntimeError(f"{api}: tau.shape[-1] must be equal to min(other.shape[{d}], input.shape[-1])")
    for t, nm in ((tau, "tau"), (C, "other")):
        b = t._shape[:-1] if t is tau else t._shape[:-2]
        if b != A._shape[:-2]:
            raise RuntimeError(f"{api}: Expected batch dimensions of {nm} to be equal to input.shape[:-2], but got "
                               f"{list(b)}")
    return bool(left), bool(sargs[1])


def _ormqr_same(what):
    return lambda a, b: (f"torch.ormqr: Expected input and {what} to have the same dtype, but input has dtype"
                         f"{a.short} and {what} has dtype {b.short}")


@defop("ormqr", autocast="fp32",
       promote=_lrule("ormqr_cpu", same=((1, _ormqr_same("tau")), (2, _ormqr_same("other")))),
       grad_fn="OrmqrBackward0", tensors=3, prep=_ormqr_prep, method=False, function=False, broadcast=False)
def _ormqr(input, tau, other, left=True, transpose=False):
    """``op(Q) other`` (``left``) or ``other op(Q)``, Q from geqrf's ``(input, tau)``; ``transpose``: ``Q^H``."""
    return _reflect(input, tau, other, left, transpose)


# ---- LDL (host LAPACK) ---------------------------------------------------------------------------------------------
def _lapack(name, dt):
    from scipy.linalg import lapack
    return getattr(lapack, {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}[dt.type] + name)


def _ldl_host(hermitian):
    def run(a):
        a = np.asarray(a)
        n = a.shape[-1]
        flat = a.reshape((-1, n, n))
        ld, piv = np.zeros_like(flat), np.zeros(flat.shape[:-1], np.int32)
        info = np.zeros(flat.shape[0], np.int32)
        fn = _lapack("hetrf" if hermitian and np.iscomplexobj(a) else "sytrf", a.dtype)
        for i, m in enumerate(flat):
            lu, p, inf = fn(m, lower=1)
            ld[i], piv[i], info[i] = np.tril(lu), p, inf
        return ld.reshape(a.shape), piv.reshape(a.shape[:-1]), info.reshape(a.shape[:-2])
    return run


def _ldl_solve_host(hermitian):
    def run(ld, piv, b):
        ld, piv, b = np.asarray(ld), np.asarray(piv), np.asarray(b)
        n, k = b.shape[-2:]
        fl, fp, fb = ld.reshape((-1, n, n)), piv.reshape((-1, n)), b.reshape((-1, n, k))
        fn = _lapack("hetrs" if hermitian and np.iscomplexobj(b) else "sytrs", b.dtype)
        out = np.stack([fn(fl[i], fp[i], fb[i], lower=1)[0] for i in range(fb.shape[0])])
        return out.reshape(b.shape).astype(b.dtype)
    return run


def _callback(fn, shapes, *args):
    return jax.pure_callback(fn, shapes, *(jax.lax.stop_gradient(a) for a in args), vmap_method="sequential")


def _ldl_factor_prep(targs, sargs):
    _need_matrix("torch.linalg.ldl_factor_ex", targs[0])
    return (bool(sargs[0]),)


_LDL_FACTOR_NO_GRAD = aten_no_derivative("linalg_ldl_factor_ex")
_LDL_SOLVE_NO_GRAD = aten_no_derivative("linalg_ldl_solve")


@defop("linalg_ldl_factor_ex", promote=_lrule("ldl_factor_kernel_cpu", "torch.linalg.ldl_factor_ex",
                                              outs=lambda dt: (dt, D.int32, D.int32)),
       grad_fn="NotImplemented", nout=3, result_type=RT.linalg_ldl_factor_ex, prep=_ldl_factor_prep, method=False,
       function=False)
def _ldl_factor_ex(A, hermitian=False):
    """LAPACK's sytrf / hetrf of A's lower triangle (Bunch-Kaufman): ``(LD, pivots, info)``, on the host."""
    n = A.shape[-1]
    if not A.size:
        return A, jnp.zeros(A.shape[:-1], jnp.int32), jnp.zeros(A.shape[:-2], jnp.int32)
    shapes = (jax.ShapeDtypeStruct(A.shape, A.dtype), jax.ShapeDtypeStruct(A.shape[:-2] + (n,), jnp.int32),
              jax.ShapeDtypeStruct(A.shape[:-2], jnp.int32))
    ld, piv, info = _callback(_ldl_host(hermitian), shapes, A)
    return _LDL_FACTOR_NO_GRAD(ld, A), piv, info


def _ldl_solve_prep(targs, sargs):
    LD, piv, B = targs
    _need_matrix("torch.linalg.ldl_solve", LD)
    if piv._shape != LD._shape[:-1]:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {list(piv._shape)} instead")
    if len(B._shape) < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{len(B._shape)}, "
                         f"{len(B._shape) - 1}], but got -2)")
    if B._shape[-2] != LD._shape[-1]:
        n = LD._shape[-1]
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {n} by {n} but each "
                           f"b matrix is {B._shape[-2]} by {B._shape[-1]}")
    if piv.dtype is not D.int32:
        raise RuntimeError("torch.linalg.ldl_solve: Expected pivots to be integers. Got " + piv.dtype.short)
    return (bool(sargs[0]),)


def _ldl_solve_rule(op, sig, sargs):
    (_, a), _, (_, b) = sig
    if a is not b:
        raise RuntimeError(_bA_msg(b, a))
    return _lrule("ldl_solve_kernel_cpu", "torch.linalg.ldl_solve")(op, sig, sargs)


@defop("linalg_ldl_solve", promote=_ldl_solve_rule, grad_fn="NotImplemented", tensors=3, prep=_ldl_solve_prep,
       method=False, function=False, broadcast=False)
def _ldl_solve(LD, pivots, B, hermitian=False):
    """``AX = B`` from ldl_factor's ``(LD, pivots)`` (sytrs / hetrs on the host)."""
    ld, b = _bcast(LD, B)
    piv = jnp.broadcast_to(pivots, ld.shape[:-1])
    if not ld.size or not b.size:
        return jnp.zeros(b.shape, b.dtype)
    x = _callback(_ldl_solve_host(hermitian), jax.ShapeDtypeStruct(b.shape, b.dtype), ld, piv, b)
    return _LDL_SOLVE_NO_GRAD(x, (LD, B))
