"""The rest of ``torch.linalg`` (``lu``, ``lu_factor[_ex]``, ``lu_solve``, ``solve_triangular``, ``matrix_exp``,
``cond``, ``eig``, ``eigvals``, ``householder_product``, ``tensorinv``, ``tensorsolve``, ``vander``,
``ldl_factor[_ex]``, ``ldl_solve``) and the classic top-level forms (``torch.lu``, ``lu_solve``, ``lu_unpack``,
``cholesky_solve``, ``cholesky_inverse``, ``triangular_solve``, ``matrix_exp``, ``chain_matmul``, ``adjoint``,
``svd_lowrank``, ``pca_lowrank``, ``geqrf``, ``orgqr``, ``ormqr``) with their Tensor methods (and ``mH`` / ``H``).
``functorch_lite.linalg`` re-exports them; the op-table rows are in ``ops/linalg_more.py``.

As in PyTorch, ``cond``, ``tensorinv``, ``tensorsolve``, ``vander``, ``chain_matmul`` and the low-rank SVD / PCA
are composites of other ops (their grad_fn is the last inner op's). ``linalg.eig`` / ``eigvals`` run only on the
CPU (JAX's general eigen-solver has no accelerator kernel): other devices raise. The LDL ops run LAPACK on the
host (``jax.pure_callback``).

Example::

    >>> A = torch.tensor([[4.0, 3.0], [6.0, 3.0]])
    >>> LU, pivots = torch.linalg.lu_factor(A)
    >>> torch.linalg.lu_solve(LU, pivots, torch.tensor([[1.0], [2.0]]))
    tensor([[ 0.5000],
            [-0.3333]])
"""
from __future__ import annotations

import math
import numbers

from . import dtypes as D
from ._tensor.tensor import Tensor
from .linalg import LinAlgError, _check_info, _cnum, _inv_msg, _mT, _run, _warn_once, _write, matrix_norm, \
    multi_dot, solve, svdvals
from .ops._dispatch import dispatch, scalar_arg, write_out
from .ops.movement import _tensor_list
from .ops._registry import OPS, _not_bool
from .ops import linalg_more as _ops  # (registers the op-table rows)
from .ops.linalg_ops import _need_matrix

RT = _ops.RT

_MISSING = object()


def _results(r, rt, out, name, n=None):
    """``r`` (op ``name``'s fields, first ``n``) as the named tuple ``rt``, written into ``out`` when given."""
    r = tuple(r)[:n]
    return rt(*(r if out is None else _write(name, out, r)))


def _check_plain(info: Tensor, api: str, msg) -> None:
    """As linalg's ``_check_info``, raising a plain RuntimeError (lu_factor's and ldl_factor's PyTorch errors are not
    LinAlgErrors)."""
    try:
        _check_info(info, api, msg)
    except LinAlgError as e:
        raise RuntimeError(str(e)) from None


# ---- LU ------------------------------------------------------------------------------------------------------------
def _lu_msg(i):
    return (f"U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you still want to "
            "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    """``torch.return_types.linalg_lu_factor_ex(LU, pivots, info)``: getrf's packed LU, 1-based int32 pivots and
    info > 0 where U has an exactly zero diagonal entry (``check_errors``: raise then)."""
    if type(pivot) is not bool or type(check_errors) is not bool:
        _not_bool("linalg_lu_factor_ex", ("pivot", "check_errors"), (pivot, check_errors))
    r = _run("linalg_lu_factor_ex", (A,), (pivot,), out)
    if check_errors:
        _check_plain(r.info, "torch.linalg.lu_factor_ex", _lu_msg)
    return r


def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    """``torch.return_types.linalg_lu_factor(LU, pivots)``; a singular A (a zero in U's diagonal) raises."""
    if type(pivot) is not bool:
        _not_bool("linalg_lu_factor", ("pivot",), (pivot,))
    r = dispatch(OPS["linalg_lu_factor_ex"], (A,), (pivot,))
    _check_plain(r.info, "torch.linalg.lu_factor", _lu_msg)
    return _results(r, RT.linalg_lu_factor, out, "linalg_lu_factor_ex", 2)


def lu(A: Tensor, *, pivot: bool = True, out=None):
    """``torch.return_types.linalg_lu(P, L, U)`` with ``A = P L U`` (P is not differentiable)."""
    if type(pivot) is not bool:
        _not_bool("linalg_lu", ("pivot",), (pivot,))
    P, L, U = dispatch(OPS["linalg_lu"], (A,), (pivot,))
    return _results((P.detach(), L, U), RT.linalg_lu, out, "linalg_lu")


_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed in a "
    "future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
    "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
    "should be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def _lu_legacy(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """``torch.lu`` (deprecated in PyTorch): ``(LU, pivots)``, or ``torch.return_types._lu_with_info`` with the
    info when ``get_infos``; never raises for a singular A."""
    if type(pivot) is not bool:  # (get_infos: torch's Python wrapper reads it by truthiness)
        _not_bool("_lu_with_info", ("pivot",), (pivot,))
    _warn_once("lu", _LU_DEPRECATED)
    r = _run("linalg_lu_factor_ex", (A,), (pivot,), out)
    return RT._lu_with_info(*r) if get_infos else (r[0], r[1])


def _lu_method(self: Tensor, pivot: bool = True, get_infos: bool = False):
    """``Tensor.lu``: plain tuples ``(LU, pivots[, infos])`` (PyTorch's Python method)."""
    return tuple(_lu_legacy(self, pivot, get_infos))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True, *, out=None):
    """``torch.return_types.lu_unpack(P, L, U)`` from lu_factor's output (empty P / L, U when not unpacked)."""
    if type(unpack_data) is not bool or type(unpack_pivots) is not bool:
        _not_bool("lu_unpack", ("unpack_data", "unpack_pivots"), (unpack_data, unpack_pivots))
    P, L, U = dispatch(OPS["lu_unpack"], (LU_data, LU_pivots), (unpack_data, unpack_pivots))
    return _results((P.detach(), L, U), RT.lu_unpack, out, "lu_unpack")


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False, out=None) -> Tensor:
    """``X`` with ``AX = B`` from ``lu_factor(A)`` (``left=False``: ``XA = B``; ``adjoint``: A^H for A)."""
    return _run("linalg_lu_solve", (LU, pivots, B), (left, adjoint), out)


_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch release.\n"
    "Note that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be "
    "replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")


def _lu_solve_legacy(input: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:
    """``torch.lu_solve(b, LU, pivots)`` (deprecated in PyTorch)."""
    _warn_once("lu_solve", _LU_SOLVE_DEPRECATED)
    return _run("linalg_lu_solve", (LU_data, LU_pivots, input), (True, False), out)


# ---- triangular / Cholesky solves -------------------------------------------------------------------------------
def solve_triangular(input: Tensor, B: Tensor, *, upper=_MISSING, left: bool = True, unitriangular: bool = False,
                     out=None) -> Tensor:
    """``X`` with ``AX = B`` (``left=False``: ``XA = B``), A upper (``upper=True``) or lower triangular; only that
    triangle is read (``unitriangular``: its diagonal is taken as ones). B is cast to A's dtype."""
    if upper is _MISSING:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: "upper"')
    if type(upper) is not bool or type(left) is not bool or type(unitriangular) is not bool:
        _not_bool("linalg_solve_triangular", ("upper", "left", "unitriangular"), (upper, left, unitriangular))
    return _run("linalg_solve_triangular", (input, B), (upper, left, unitriangular), out)


_TRIANGULAR_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a future "
    "PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a copy of one of "
    "the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
    "torch.linalg.solve_triangular(A, B). (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2273.)")


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out=None):
    """``torch.return_types.triangular_solve(solution, cloned_coefficient)`` of ``op(A) X = input`` (deprecated in
    PyTorch)."""
    if type(upper) is not bool or type(transpose) is not bool or type(unitriangular) is not bool:
        _not_bool("triangular_solve", ("upper", "transpose", "unitriangular"), (upper, transpose, unitriangular))
    _warn_once("triangular_solve", _TRIANGULAR_DEPRECATED)
    return _run("triangular_solve", (input, A), (upper, transpose, unitriangular), out)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """``X`` with ``A X = input`` where ``A = L L^H`` for the Cholesky factor ``L = input2`` (``upper``:
    ``A = U^H U``)."""
    if type(upper) is not bool:
        _not_bool("cholesky_solve", ("upper",), (upper,))
    return _run("cholesky_solve", (input, input2), (upper,), out)


def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """``A^{-1}`` from the Cholesky factor of A (``upper``: ``A = U^H U``); a zero on the factor's diagonal raises
    LinAlgError (after writing ``out``, as torch's)."""
    if type(upper) is not bool:
        _not_bool("cholesky_inverse", ("upper",), (upper,))
    r = _run("cholesky_inverse", (input,), (upper,), out)
    info = _ops.cholesky_inverse_info(input._array)
    if info is not None:
        _check_info(Tensor._from_array(info, D.int32, input.device), "cholesky_inverse", _inv_msg)
    return r


# ---- matrix_exp / eig / cond -------------------------------------------------------------------------------------
def matrix_exp(input: Tensor) -> Tensor:
    """The matrix exponential of (a batch of) square matrices."""
    return dispatch(OPS["linalg_matrix_exp"], (input,), ())


def eig(input: Tensor, *, out=None):
    """``torch.return_types.linalg_eig(eigenvalues, eigenvectors)``, complex, in LAPACK's order, eigenvectors of
    unit norm (CPU only). Gradients are defined for losses that do not depend on the eigenvectors' phase."""
    return _run("linalg_eig", (input,), (), out)


def eigvals(input: Tensor, *, out=None) -> Tensor:
    """The eigenvalues (complex) of a general square matrix (CPU only)."""
    return _run("linalg_eigvals", (input,), (), out)


def _empty_cond(A: Tensor) -> Tensor:
    """PyTorch's condition number of 0 x 0 matrices: 0."""
    from .ops.creation import zeros
    return zeros(tuple(A.shape[:-2]), dtype=A.dtype.to_real(), device=A.device)


def _cond_inv(A: Tensor, ord) -> Tensor:
    """``||A|| ||A^-1||``, inf for a singular A (PyTorch's ``_linalg_cond_helper``)."""
    inverse, info = dispatch(OPS["linalg_inv_ex"], (A,), ())
    inverse = inverse.masked_fill((info > 0)[..., None, None], math.inf)
    r = matrix_norm(A, ord) * matrix_norm(inverse, ord)
    return r.nan_to_num_(math.inf, math.inf, -math.inf)


def cond(input: Tensor, p=None, *, out=None) -> Tensor:
    """The condition number of A in the norm ``p``: None / 2 / -2 by singular values (any shape); 'fro', 'nuc', 1,
    -1, inf, -inf for square matrices (inf for a singular one). 0 x 0 matrices give 0."""
    p = scalar_arg(p, "linalg_cond", "p")  # (a 0-d tensor: its number)
    if isinstance(p, str):
        _need_matrix(f"linalg.cond(ord={p})", input)
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        if input.numel() == 0:
            r = _empty_cond(input)
        elif p == "nuc":
            s = svdvals(input)
            r = s.sum(-1) * s.reciprocal().sum(-1)
        else:
            r = _cond_inv(input, p)
        return r if out is None else write_out(out, r)
    if input.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    p = 2 if p is None else p
    if not isinstance(p, numbers.Real) or float(p) not in (2.0, -2.0, 1.0, -1.0, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_cnum(p)}")
    if input.numel() == 0:
        r = _empty_cond(input)
    elif abs(p) == 2:
        s = svdvals(input)
        hi, lo = s.narrow(-1, 0, 1), s.narrow(-1, -1, 1)
        r = (lo / hi if p < 0 else hi / lo).squeeze(-1)
    else:
        _need_matrix(f"linalg.cond(ord={_cnum(p)})", input)
        r = _cond_inv(input, p)
    return r if out is None else write_out(out, r)


# ---- Householder ---------------------------------------------------------------------------------------------------
def householder_product(input: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first n columns of ``H_1 ... H_k`` (``H_i = I - tau_i v_i v_i^H``, v_i below A's diagonal)."""
    return _run("linalg_householder_product", (input, tau), (), out)


def _orgqr(input: Tensor, input2: Tensor, *, out=None) -> Tensor:
    """``torch.orgqr`` = ``linalg.householder_product``."""
    return _run("linalg_householder_product", (input, input2), (), out)


def geqrf(input: Tensor, *, out=None):
    """``torch.return_types.geqrf(a, tau)``: LAPACK's QR in Householder form (no derivative, as in PyTorch)."""
    return _run("geqrf", (input,), (), out)


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False, *,
          out=None) -> Tensor:
    """``op(Q) input3`` (``left``) or ``input3 op(Q)``, Q from geqrf's ``(input, tau=input2)``; ``transpose``:
    Q^H."""
    return _run("ormqr", (input, input2, input3), (left, transpose), out)


# ---- LDL -------------------------------------------------------------------------------------------------------------
def ldl_factor_ex(input: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """``torch.return_types.linalg_ldl_factor_ex(LD, pivots, info)`` of A's lower triangle (LAPACK's sytrf /
    hetrf, Bunch-Kaufman pivoting; 2 x 2 blocks have negative pivots)."""
    r = _run("linalg_ldl_factor_ex", (input,), (hermitian,), out)
    if check_errors:
        _check_plain(r.info, "torch.linalg.ldl_factor_ex", lambda i: f"Unknown error code: {i}.")
    return r


def ldl_factor(input: Tensor, *, hermitian: bool = False, out=None):
    """``torch.return_types.linalg_ldl_factor(LD, pivots)``; an exactly singular D raises (RuntimeError, as in
    PyTorch)."""
    r = dispatch(OPS["linalg_ldl_factor_ex"], (input,), (hermitian,))
    _check_plain(r.info, "torch.linalg.ldl_factor", lambda i: f"Unknown error code: {i}.")
    return _results(r, RT.linalg_ldl_factor, out, "linalg_ldl_factor_ex", 2)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out=None) -> Tensor:
    """``X`` with ``AX = B`` from ``ldl_factor(A)``."""
    return _run("linalg_ldl_solve", (LD, pivots, B), (hermitian,), out)


# ---- tensorinv / tensorsolve / vander / chain_matmul / adjoint ------------------------------------------------------
def _prod(s):
    return math.prod(int(d) for d in s)


def tensorinv(input: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The inverse of A as a linear map from its first ``ind`` dims to the rest (result shape
    ``A.shape[ind:] + A.shape[:ind]``)."""
    if not isinstance(ind, numbers.Integral) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    outer, inner = tuple(input.shape[:ind]), tuple(input.shape[ind:])
    if _prod(inner) != _prod(outer):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {_prod(inner)} != {_prod(outer)}")
    r = dispatch(OPS["linalg_inv_ex"], (input.reshape(_prod(outer), _prod(inner)),), ())
    _check_info(r.info, "inv", _inv_msg)
    res = r.inverse.reshape(inner + outer)
    return res if out is None else write_out(out, res)


def tensorsolve(input: Tensor, other: Tensor, dims=None, *, out=None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) = B`` (``dims``: A's dims moved to the end first)."""
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        input = input.movedim(dims, list(range(input.dim() - len(dims), input.dim())))
    shape = tuple(input.shape[other.dim():])
    if _prod(shape) != other.numel():
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {_prod(shape)} != {other.numel()}")
    res = solve(input.reshape(other.numel(), _prod(shape)), other.flatten()).reshape(shape)
    return res if out is None else write_out(out, res)


def vander(x: Tensor, *, N=None) -> Tensor:
    """``[1, x, x^2, ..., x^(N-1)]`` along a new last dim (N defaults to x.shape[-1])."""
    dt = x.dtype
    if dt is D.bool or (dt.category == D.FLOAT and dt not in (D.float32, D.float64)):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got {dt.short}")
    n = N if N is not None else (x.shape[-1] if x.dim() else 1)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from .ops.creation import ones
    from . import cat, cumprod
    shape = tuple(x.shape)
    powers = cumprod(x.unsqueeze(-1).expand(shape + (n - 1,)), -1, dtype=dt)
    return cat([ones(shape + (1,), dtype=dt, device=x.device), powers], -1)


# (the line: chain_matmul's, or chain_matmul_out's -- two warn-once sites in PyTorch)
_CHAIN_DEPRECATED = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                     "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                     "multiple parameters. (Triggered internally at "
                     "/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:{}.)")


def chain_matmul(*matrices, out=None) -> Tensor:
    """The product of 2-D matrices (deprecated in PyTorch for ``linalg.multi_dot``); one matrix is cloned (copied
    into ``out``)."""
    matrices = _tensor_list("chain_matmul", matrices)  # (torch's argument parser: a TypeError, before its warning)
    if out is None:
        _warn_once("chain_matmul", _CHAIN_DEPRECATED.format(1102))
    else:
        _warn_once("chain_matmul_out", _CHAIN_DEPRECATED.format(1120))
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    if len(matrices) > 1:
        return multi_dot(matrices, out=out)  # (torch's chain_matmul_out is multi_dot_out: its checks and messages)
    m = matrices[0]
    if out is None:
        return m.clone()
    if out._shape != m._shape:  # torch: resize_output, then copy_ (autograd records the copy; its overlap rules)
        write_out(out, m.detach().to(out.dtype))
    return out.copy_(m)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (a view)."""
    if input.dim() < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{input.dim()}-D tensor.")
    return _mT(input)


def _mH(self: Tensor) -> Tensor:
    if self.dim() == 0:
        from .ops.movement import _warn_0d_once
        _warn_0d_once("mH", "Consider using x.conj().")
        return self.conj() if self.is_complex() else self
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D "
                           "tensor.")
    return _mT(self)


def _H(self: Tensor) -> Tensor:
    if self.dim() == 0:
        from .ops.movement import _warn_0d_once
        _warn_0d_once("H", "Consider using x.conj().")
        return self.conj() if self.is_complex() else self
    if self.dim() != 2:
        tail = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.{tail}")
    return _mT(self)


# ---- randomized low-rank SVD / PCA (torch._lowrank, ported) --------------------------------------------------------
def _approximate_basis(A: Tensor, q: int, niter, M):
    """``Q`` with q orthonormal columns with ``Q Q^H A ~ A`` (Halko et al. 2009, algorithm 4.4)."""
    from . import randn
    from .linalg import qr
    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() or A.dtype in (D.float16, D.float32, D.float64) else D.float32
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = _mT(A) @ Q
        if M is not None:
            X = X - _mT(M) @ Q
        Q = qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = qr(X).Q
    return Q


def _svd_lowrank(A: Tensor, q, niter, M):
    from .linalg import svd
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:
        A = _mT(A)
        M = None if M is None else _mT(M)
    Q = _approximate_basis(A, q, niter, M)
    B = _mT(Q) @ A
    if M is not None:
        B = B - _mT(Q) @ M
    U, S, Vh = svd(B, full_matrices=False)
    V, U = _mT(Vh), Q @ U
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A: Tensor, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A ~ U diag(S) V^H`` of rank q (randomized: Halko et al. 2009, algorithm 5.1; ``M``:
    of ``A - M``). Random values come from this library's generator, so they differ from PyTorch's; for a matrix
    of rank <= q the factors agree (up to the singular vectors' signs)."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q=None, center: bool = True, niter: int = 2):
    """PCA of a (batch of) data matrix by the randomized low-rank SVD of ``A`` (``center``: minus its column
    means); q defaults to min(6, m, n)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)


# torch.linalg's names, the classic top-level forms and the Tensor methods
LINALG = {"lu": lu, "lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex, "lu_solve": lu_solve,
          "solve_triangular": solve_triangular, "matrix_exp": matrix_exp, "cond": cond, "eig": eig,
          "eigvals": eigvals, "householder_product": householder_product, "tensorinv": tensorinv,
          "tensorsolve": tensorsolve, "vander": vander, "ldl_factor": ldl_factor, "ldl_factor_ex": ldl_factor_ex,
          "ldl_solve": ldl_solve}
FUNCTIONS = {"lu": _lu_legacy, "lu_solve": _lu_solve_legacy, "lu_unpack": lu_unpack, "cholesky_solve": cholesky_solve,
             "cholesky_inverse": cholesky_inverse, "triangular_solve": triangular_solve, "matrix_exp": matrix_exp,
             "chain_matmul": chain_matmul, "adjoint": adjoint, "svd_lowrank": svd_lowrank, "pca_lowrank": pca_lowrank,
             "geqrf": geqrf, "orgqr": _orgqr, "ormqr": ormqr}
METHODS = {k: FUNCTIONS[k] for k in ("lu_solve", "cholesky_solve", "cholesky_inverse", "triangular_solve",
                                     "matrix_exp", "adjoint", "geqrf", "orgqr", "ormqr")}
METHODS.update(lu=_lu_method, mH=property(_mH), H=property(_H))
for _k, _f in FUNCTIONS.items():
    _f.__name__ = _k
del _k, _f
