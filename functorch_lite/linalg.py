"""``torch.linalg``: the public functions over the op-table rows of ``ops/linalg_ops.py`` (and the classic
top-level forms ``torch.det``, ``torch.inverse``, ``torch.svd``... with their Tensor methods).

Results are PyTorch's named tuples (``torch.return_types.linalg_svd(U, S, Vh)``...). ``inv``, ``solve`` and
``cholesky`` raise :class:`LinAlgError` (a RuntimeError, PyTorch's message) for a singular / not positive-definite
matrix; the check reads the op's ``info`` on the host. JAX itself returns inf/nan there instead of raising, and
inside ``functorch_lite.compile`` (or ``func.vmap``) the host check cannot run: a compiled ``inv`` of a singular
matrix returns inf/nan; check ``linalg.inv_ex(A).info`` in the result if it matters.

Example::

    >>> import functorch_lite as torch
    >>> A = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
    >>> torch.linalg.solve(A, torch.tensor([1.0, 2.0]))
    tensor([0.2000, 0.6000])
    >>> torch.linalg.eigh(A).eigenvalues
    tensor([1.3820, 3.6180])
"""
from __future__ import annotations

import math
import numbers

import jax
import numpy as np

from . import dtypes as D
from ._promotion import promote_types
from ._tensor.tensor import Tensor, _wrap_dim
from ._warn import WARNED as _WARNED, warn_once as _warn_once  # noqa: F401  (_linalg_more and tests use them)
from .amp import autocast_mode as _amp
from .ops._dispatch import _type_name, _OUT_EXACT, autocast_args, data_dependent_error, dispatch, either_arg, \
    scalar_arg, write_out
from .ops._registry import OPS, _not_bool
from .ops.indexing import _host_tensor, _view
from .ops.linalg import matmul
from .ops.linalg_ops import RT, _LIN, _need_matrix

__all__ = ["LinAlgError", "norm", "vector_norm", "matrix_norm", "inv", "inv_ex", "solve", "solve_ex", "det", "slogdet",
           "cholesky", "cholesky_ex", "svd", "svdvals", "qr", "eigh", "eigvalsh", "pinv", "lstsq", "matrix_rank",
           "matrix_power", "cross", "vecdot", "multi_dot", "matmul", "diagonal"]


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError`` (``torch._C._LinAlgError``): a matrix the factorization cannot handle."""


LinAlgError = _LinAlgError


def _check_info(info: Tensor, api: str, msg) -> None:
    """PyTorch's ``_linalg_check_errors``: LinAlgError for the first matrix whose ``info`` is non-zero. A host read
    (skipped for traced values: compile / vmap give inf/nan results instead)."""
    arr = info._array
    if isinstance(arr, jax.core.Tracer) or type(arr) is jax.ShapeDtypeStruct:
        return
    h = np.asarray(arr)
    if not h.any():
        return
    flat = h.reshape(-1)
    b = int(np.argmax(flat != 0))
    prefix = f"(Batch element {b}): " if h.ndim else ""
    raise LinAlgError(f"{api}: {prefix}{msg(int(flat[b]))}")


# each op's out= as torch's kernel names it: in its autograd refusal (an argument requiring grad) and, through
# _dispatch._OUT_EXACT, the dtype its outs must have (torch's structured linalg kernels demand the result's dtype:
# a float64 out of a float32 inv is an error, never a silent cast; pinv / matrix_rank cast into theirs)
_OUT_NAMES = {"linalg_inv_ex": "linalg_inv_ex", "linalg_solve_ex": "_linalg_solve_ex", "linalg_det": "_linalg_det",
              "linalg_slogdet": "_linalg_slogdet", "linalg_cholesky_ex": "linalg_cholesky_ex",
              "linalg_svd": "_linalg_svd", "linalg_svdvals": "_linalg_svd", "linalg_qr": "linalg_qr",
              "linalg_eigh": "_linalg_eigh", "linalg_eigvalsh": "_linalg_eigh", "linalg_pinv": "linalg_pinv",
              "linalg_matrix_power": "matmul", "linalg_cross": "linalg_cross", "norm": "linalg_vector_norm",
              # (_linalg_more.py's)
              "linalg_lu_factor_ex": "linalg_lu_factor_ex", "linalg_lu": "linalg_lu", "linalg_lu_solve":
              "linalg_lu_solve", "linalg_ldl_factor_ex": "linalg_ldl_factor_ex", "linalg_ldl_solve":
              "linalg_ldl_solve", "linalg_solve_triangular": "linalg_solve_triangular",
              "triangular_solve": "triangular_solve", "cholesky_solve": "cholesky_solve",
              "cholesky_inverse": "cholesky_inverse", "linalg_householder_product": "linalg_householder_product",
              "geqrf": "geqrf", "ormqr": "ormqr", "lu_unpack": "lu_unpack", "linalg_eig": "linalg_eig"}


def _run(name, targs, sargs=(), out=None):
    r = dispatch(OPS[name], targs, sargs)
    return r if out is None else _write(name, out, r)


def _write(name, out, r):
    """``r`` (op ``name``'s result, or the part of it the function returns) written into ``out``."""
    tname = _OUT_NAMES.get(name)
    if tname is None:
        exact = _OUT_EXACT.get(name)  # (an out of another dtype: torch's error, where its kernel demands the dtype)
        if exact is not None and isinstance(out, Tensor) and out.dtype is not r.dtype:
            raise RuntimeError(exact(r.dtype, out.dtype))
    r = write_out(out, r, tname)
    return type(r)(tuple(r)) if isinstance(r, tuple) else r


def _norm_out(api, r, out):
    """linalg.norm / matrix_norm's out=: of the result's dtype (their own message), else as write_out."""
    if out is None:
        return r
    if isinstance(out, Tensor) and out.dtype is not r.dtype:
        raise RuntimeError(f"{api} expected out tensor dtype {r.dtype.short} but got: {out.dtype.short}")
    return write_out(out, r)


# ---- inverse / solve / determinants ------------------------------------------------------------------------------
def _inv_msg(i):
    return f"The diagonal element {i} is zero, the inversion could not be completed because the input matrix is singular."


def inv_ex(A: Tensor, *, check_errors: bool = False, out=None):
    """``torch.return_types.linalg_inv_ex(inverse, info)``; info > 0: A is singular (the inverse is inf/nan)."""
    r = _run("linalg_inv_ex", (A,), (), out)
    if check_errors:
        _check_info(r.info, "linalg.inv_ex", _inv_msg)
    return r


def inv(A: Tensor, *, out=None) -> Tensor:
    """The inverse of (a batch of) square matrices; a singular one raises LinAlgError."""
    r = dispatch(OPS["linalg_inv_ex"], (A,), ())
    _check_info(r.info, "linalg.inv", _inv_msg)
    return r.inverse if out is None else _write("linalg_inv_ex", out, r.inverse)


def _solve_msg(i):
    return "The solver failed because the input matrix is singular."


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out=None):
    """``torch.return_types.linalg_solve_ex(result, info)`` of ``AX = B`` (``left=False``: ``XA = B``)."""
    r = _run("linalg_solve_ex", (A, B), (left,), out)
    if check_errors:
        _check_info(r.info, "torch.linalg.solve_ex", _solve_msg)
    return r


def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """``X`` with ``AX = B`` (``left=False``: ``XA = B``); B a (batch of) vector(s) or matrices; batches broadcast."""
    r = dispatch(OPS["linalg_solve_ex"], (A, B), (left,))
    _check_info(r.info, "torch.linalg.solve", _solve_msg)
    return r.result if out is None else _write("linalg_solve_ex", out, r.result)


def det(A: Tensor, *, out=None) -> Tensor:
    """Determinant (LinalgDetBackward0)."""
    return _run("linalg_det", (A,), (), out)


def _det_legacy(input: Tensor) -> Tensor:
    """``torch.det``: linalg.det without its out= (torch's ``det()`` takes none: a TypeError)."""
    return _run("linalg_det", (input,))


def slogdet(A: Tensor, *, out=None):
    """``torch.return_types.linalg_slogdet(sign, logabsdet)``."""
    return _run("linalg_slogdet", (A,), (), out)


def _slogdet_legacy(input: Tensor, *, out=None):
    """``torch.slogdet``: as linalg.slogdet, named ``torch.return_types.slogdet``."""
    return RT.slogdet(*_run("linalg_slogdet", (input,), (), out))


def logdet(input: Tensor) -> Tensor:
    """``log(det(input))``: nan for a negative determinant, -inf for a singular matrix."""
    return dispatch(OPS["logdet"], (input,), ())


# ---- Cholesky ---------------------------------------------------------------------------------------------------
def _chol_msg(i):
    return (f"The factorization could not be completed because the input is not positive-definite (the leading minor "
            f"of order {i} is not positive-definite).")


def cholesky_ex(input: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """``torch.return_types.linalg_cholesky_ex(L, info)``; a failed factorization (info > 0) leaves LAPACK's partial
    factor in L, as torch's."""
    if type(upper) is not bool or type(check_errors) is not bool:
        _not_bool("linalg_cholesky_ex", ("upper", "check_errors"), (upper, check_errors))
    r = _run("linalg_cholesky_ex", (input,), (upper, False), out)
    if check_errors:
        _check_info(r.info, "linalg.cholesky_ex", _chol_msg)
    return r


def cholesky(input: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """``L`` with ``A = L L^H`` from A's lower triangle (``upper=True``: ``U = L^H`` from the upper one)."""
    if type(upper) is not bool:
        _not_bool("linalg_cholesky", ("upper",), (upper,))
    r = dispatch(OPS["linalg_cholesky_ex"], (input,), (upper, False))
    _check_info(r.info, "linalg.cholesky", _chol_msg)
    return r.L if out is None else _write("linalg_cholesky_ex", out, r.L)


_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch release.\n"
    "L = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
    "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")


def _cholesky_legacy(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """``torch.cholesky`` (deprecated in PyTorch, still there): CholeskyBackward0."""
    if type(upper) is not bool:
        _not_bool("cholesky", ("upper",), (upper,))
    _warn_once("cholesky", _CHOLESKY_DEPRECATED)
    r = dispatch(OPS["linalg_cholesky_ex"], (input,), (upper, True))
    _check_info(r.info, "cholesky", _chol_msg)
    return r.L if out is None else write_out(out, r.L, "cholesky")


# ---- SVD / QR / eigh ---------------------------------------------------------------------------------------------
def _no_driver(A, driver):
    if driver is not None and A.device.type != "cuda":
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    """``torch.return_types.linalg_svd(U, S, Vh)``, S descending (on CUDA ``driver`` is accepted and ignored)."""
    if type(full_matrices) is not bool:
        _not_bool("linalg_svd", ("full_matrices",), (full_matrices,))
    _no_driver(A, driver)
    return _run("linalg_svd", (A,), (full_matrices,), out)


def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """The singular values, descending."""
    _no_driver(A, driver)
    return _run("linalg_svdvals", (A,), (), out)


def _mT(t: Tensor) -> Tensor:
    v = _view(t, "transpose", (-2, -1))
    return v.conj() if t.is_complex() else v


def _svd_legacy(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """``torch.svd``: ``(U, S, V)`` with V (not Vh); ``some=False``: full U and V; ``compute_uv=False``: U and V
    are zero-filled (m x m and n x n)."""
    if type(some) is not bool or type(compute_uv) is not bool:
        _not_bool("svd", ("some", "compute_uv"), (some, compute_uv))
    if compute_uv:
        U, S, Vh = dispatch(OPS["linalg_svd"], (input,), (not some,))
        r = RT.svd(U, S, _mT(Vh))
    else:
        _need_matrix("linalg.svd", input, square=False)
        from .ops.creation import zeros
        S = dispatch(OPS["linalg_svdvals"], (input,), ())
        b, (m, n) = tuple(input.shape[:-2]), tuple(input.shape[-2:])
        r = RT.svd(zeros(b + (m, m), dtype=input.dtype, device=input.device), S,
                   zeros(b + (n, n), dtype=input.dtype, device=input.device))
    if out is not None:
        return RT.svd(*_write("linalg_svd", out, r))
    return r


def qr(A: Tensor, mode: str = "reduced", *, out=None):
    """``torch.return_types.linalg_qr(Q, R)``; mode 'reduced' | 'complete' | 'r' (Q empty)."""
    return _run("linalg_qr", (A,), (mode,), out)


_QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
    "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete') (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2505.)")


def _qr_legacy(input: Tensor, some: bool = True, *, out=None):
    """``torch.qr`` (deprecated, warned once): ``some=False`` is mode='complete'."""
    if type(some) is not bool:
        _not_bool("qr", ("some",), (some,))
    _warn_once("qr", _QR_DEPRECATED)
    return RT.qr(*_run("linalg_qr", (input,), ("reduced" if some else "complete",), out))


def eigh(input: Tensor, UPLO: str = "L", *, out=None):
    """``torch.return_types.linalg_eigh(eigenvalues, eigenvectors)`` of the Hermitian matrix of A's UPLO
    triangle; eigenvalues ascending, eigenvectors unique up to sign/phase."""
    return _run("linalg_eigh", (input,), (UPLO,), out)


def eigvalsh(input: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """The eigenvalues (ascending) of the Hermitian matrix of A's UPLO triangle."""
    return _run("linalg_eigvalsh", (input,), (UPLO,), out)


# ---- pinv / matrix_rank / lstsq ---------------------------------------------------------------------------------
def pinv(input: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None, out=None) -> Tensor:
    """Pseudo-inverse: singular values <= max(atol, rtol * s_max) count as zero (rtol defaults to
    eps * max(m, n), or to 0 when atol > 0; ``rcond`` is rtol's older name). Tolerances: numbers or tensors."""
    if type(hermitian) is not bool:
        _not_bool("linalg_pinv", ("hermitian",), (hermitian,))
    if rcond is not None:
        rtol = rcond
    act = _amp.STATE.active
    dt = act.get(input.device.type) if act and isinstance(input, Tensor) else None
    if dt is not None and input.dtype is D.float32:
        # PyTorch's pinv is a composite under autocast: its SVD on the fp32 list, its products on the lower one
        with _amp.state_as(None):
            r = _run("linalg_pinv", (input.float(), atol, rtol), (bool(hermitian),)).to(dt)
        return r if out is None else write_out(out, r)
    return _run("linalg_pinv", (input, atol, rtol), (bool(hermitian),), out)


def _pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: pinv with ``rtol=rcond`` (on autocast's float32 list, where linalg.pinv is on the lower
    one: cast up, then no cast down)."""
    from .ops._dispatch import autocast_fp32
    (input,) = autocast_fp32(input)
    return dispatch(OPS["linalg_pinv"], (input, None, rcond), (False,), autocast=False)


def matrix_rank(input: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None, out=None) -> Tensor:
    """The number of singular values > max(atol, rtol * s_max) (int64); ``tol`` is ``atol`` with ``rtol=0``."""
    if tol is not None:
        atol, rtol = tol, 0.0
    return _run("linalg_matrix_rank", (input, atol, rtol), (bool(hermitian),), out)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _gelsy_cut(rank: Tensor, s: Tensor, default: float) -> None:
    """gelsy truncates by its pivoted QR, the SVD here: the same solution while only singular values that are zero to
    working precision are dropped. An ``rcond`` that drops larger ones is refused (gelsd / gelss give PyTorch's
    answer)."""
    if isinstance(rank._array, jax.core.Tracer):
        raise data_dependent_error("torch.linalg.lstsq(driver='gelsy') with rcond above its default (a value check)")
    sh, rh = np.asarray(s._array), np.asarray(rank._array)
    kept_by_default = (sh > default * sh[..., :1]).sum(-1) if sh.size else rh
    if (rh < kept_by_default).any():
        raise RuntimeError("functorch_lite: torch.linalg.lstsq(driver='gelsy') with an rcond that drops non-negligible "
                           "singular values is not supported (gelsy truncates by a pivoted QR, which gives another "
                           "solution than the SVD); use driver='gelsd' or 'gelss'")


def lstsq(input: Tensor, b: Tensor, rcond=None, *, driver=None, out=None):
    """``torch.return_types.linalg_lstsq(solution, residuals, rank, singular_values)``, as PyTorch's CPU drivers
    report them: gelsy (default; rank), gelsd / gelss (rank, singular values, residuals when m > n and A has full
    rank), gels (residuals when m > n; A must have full rank). The solution is the minimum-norm least-squares one
    (singular values <= rcond * s_max dropped). gelsy's rank comes from the singular values here, not from a
    pivoted QR: the two agree except for singular values within rounding of the cut-off; an ``rcond`` with gelsy
    that drops singular values larger than the default cut-off raises (gelsy's solution then differs from the SVD's).
    On CUDA only gels."""
    cuda = input.device.type == "cuda"
    if driver is None:
        driver = "gels" if cuda else "gelsy"
    elif isinstance(driver, str) and driver.lower() in _DRIVERS:  # (torch lowercases the name first)
        driver = driver.lower()
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    elif cuda and driver != "gels":
        raise RuntimeError("torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA")
    input, b = autocast_args(OPS["linalg_lstsq"], (input, b))  # (before the dtype checks, as PyTorch's casts are)
    if input.dtype is not b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
                           f"{input.dtype.short} and other's dtype {b.dtype.short}")
    if input.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if b.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    diff = input.dim() - b.dim()
    if not 0 <= diff <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                           "other.dim()) <= 1")
    vector = b.dim() == 1 or (diff == 1 and tuple(b.shape) == tuple(input.shape[:-1]))
    m, n = input.shape[-2:]
    if (b.shape[-1] if vector else b.shape[-2]) != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2})")
    from .ops._dispatch import broadcast_shapes  # PyTorch's batch of ``other``: all but its last dim when diff == 1
    batch = broadcast_shapes(tuple(input.shape[:-2]), tuple(b.shape[:-1] if diff else b.shape[:-2]))
    if input.dtype not in _LIN:
        raise RuntimeError("This function doesn't handle types other than float and double")
    rdt = input.dtype.to_real()
    default = float(np.finfo(rdt.jnp).eps) * max(m, n)
    rcond = default if rcond is None else float(rcond)
    empty_f = _host_tensor(np.zeros(0, rdt.jnp), rdt, input.device)
    if driver == "gels":
        rank, sv = _host_tensor(np.zeros(0, np.int64), D.int64, input.device), empty_f
    else:
        rank, s = dispatch(OPS["linalg_lstsq_rank"], (input,), (rcond,))
        sv = s if driver in ("gelsd", "gelss") else empty_f
        if driver == "gelsy" and rcond > default:
            _gelsy_cut(rank, s, default)
    residuals = m > n and driver != "gelsy"
    if residuals and driver != "gels":  # only for full-rank A: the output's shape depends on the values
        if isinstance(rank._array, jax.core.Tracer):
            raise data_dependent_error("torch.linalg.lstsq residuals (computed only for a full-rank input)")
        residuals = bool((np.asarray(rank._array) == n).all())
    x, res, info = dispatch(OPS["linalg_lstsq"], (input, b), (rcond, driver, vector, residuals, tuple(batch)))
    if driver == "gels":
        _check_info(info, "torch.linalg.lstsq", lambda i: "The least squares solution could not be computed because the "
                    f"input matrix does not have full rank (error code: {i}).")
    r = RT.linalg_lstsq(x, res, rank, sv)
    if out is not None and (not isinstance(out, (tuple, list)) or len(out) != 4):
        raise TypeError(f"expected tuple of 4 elements but got {len(out) if isinstance(out, (tuple, list)) else 1}")
    return r if out is None else write_out(out, r, "linalg_lstsq")


# ---- matrix_power / cross / vecdot / multi_dot / diagonal --------------------------------------------------------
def matrix_power(input: Tensor, n: int, *, out=None) -> Tensor:
    """``A^n`` by repeated squaring; n < 0 inverts A first (a singular A raises linalg.inv's LinAlgError)."""
    if isinstance(n, Tensor) and not n._shape and n.dtype.category == D.INT and \
            not isinstance(n._array, jax.core.Tracer):  # (a 0-d integer tensor: torch's parser reads it as an int)
        n = n.item()
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {_type_name(n)}")
    _need_matrix("linalg.matrix_power", input)
    if n < 0:
        input, n = inv(input), -n
        if n == 1:
            return input if out is None else write_out(out, input)
    return _run("linalg_matrix_power", (input,), (int(n),), out)


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (batch dims broadcast)."""
    return _run("linalg_cross", (input, other), (dim,), out)


def _cross_legacy(input: Tensor, other: Tensor, dim=None, *, out=None) -> Tensor:
    """``torch.cross``: without ``dim``, the first dimension of size 3 (deprecated in PyTorch, which warns)."""
    if dim is None:
        _warn_once("cross", "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                   "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                   "with that of linalg.cross in a future release.")
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _run("linalg_cross", (input, other), (dim,), out)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """``sum(conj(x) * y, dim)`` (broadcasting)."""
    r = _run("linalg_vecdot", (x, y), (dim,))
    if out is None:
        return r
    if isinstance(out, Tensor) and out.dtype is not r.dtype:  # (torch's composite checks, then sums into out)
        raise RuntimeError(f"linalg.vecdot: Expected out of dtype{r.dtype.short} but found {out.dtype.short}")
    return write_out(out, r, "sum")


def multi_dot(tensors, *, out=None) -> Tensor:
    """The product of a chain of matrices in the cheapest order; the first / last may be 1-D."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError("linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if _amp.STATE.active:  # (PyTorch checks the dtypes before its products' autocast casts)
        OPS["linalg_multi_dot"].prep((tuple(tensors),), ())
    r = _run("linalg_multi_dot", (tuple(tensors),), ())
    if out is None:
        return r
    if isinstance(out, Tensor) and out.dtype is not r.dtype:  # (torch's multi_dot_out checks out's dtype first,
        raise RuntimeError(_OUT_EXACT["linalg_multi_dot"](r.dtype, out.dtype))
    return write_out(out, r, "mm")  # then writes through mm_out: its autograd refusal names mm)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.diagonal`` with the last two dims as default (a view)."""
    return A.diagonal(offset, dim1, dim2)


# ---- norms -----------------------------------------------------------------------------------------------------------
def _cnum(v) -> str:
    """A number as C++ streams print it (PyTorch's messages)."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


def _norm_dtype(name, x: Tensor, dtype):
    if dtype is None:
        return None
    dt = D.as_dtype(dtype)
    if dt.category < D.FLOAT:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {dt.short}")
    if x.dtype.is_complex != dt.is_complex:
        kind = "complex" if x.dtype.is_complex else "real"
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got {dt.short}")
    if promote_types(x.dtype, dt) is not dt:
        raise RuntimeError(f"{name}: the dtype of the input ({x.dtype.short}) should be convertible without narrowing "
                           f"to the specified dtype ({dt.short})")
    return dt


def _float_input(name, x: Tensor):
    if x.dtype.category < D.FLOAT:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {x.dtype.short}")


def vector_norm(input: Tensor = None, ord=2, dim=None, keepdim: bool = False, *, dtype=None, out=None,
                x: Tensor = None) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all dims by default); ord inf/-inf: max/min |x|, 0: count of non-zeros.
    A zero vector has gradient 0 (PyTorch's convention). The tensor comes as ``input`` or ``x`` (torch's parser
    takes both names)."""
    input = either_arg(input, x, "linalg_vector_norm", "input",
                       'linalg_vector_norm() missing 1 required positional arguments: "input"')
    ord = scalar_arg(ord, "linalg_vector_norm", "ord")  # (a 0-d tensor: its number)
    if isinstance(ord, Tensor):  # (a traced one, under compile: its value picks the kernel -- eager's, as a break)
        raise data_dependent_error("linalg.vector_norm's ord given as a tensor", ord._array)
    if type(keepdim) is not bool:
        _not_bool("linalg_vector_norm", ("keepdim",), (keepdim,))
    if not isinstance(ord, numbers.Number):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not {_type_name(ord)}")
    if isinstance(ord, complex):
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of norm.")
    _float_input("linalg.vector_norm", input)
    dtype = _norm_dtype("linalg.vector_norm", input, dtype)
    ordf = float(ord)
    if input.numel() == 0 and (ordf < 0 or ordf == math.inf):
        dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
        if not dims:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_cnum(ordf)} norm on an empty tensor because the "
                               "operation does not have an identity")
        for d in dims:
            if input.shape[_wrap_dim(d, input.dim())] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_cnum(ordf)} norm on the dimension {d}because "
                                   "this dimension is empty and the operation does not have an identity")
    if isinstance(dim, list):
        dim = tuple(dim)
    return _run("norm", (input,), (ordf, dim, keepdim, dtype), out)


_MATRIX_NORM_TYPES = (
    "linalg_matrix_norm() received an invalid combination of arguments - got (Tensor, dim=int), but expected one of:\n"
    " * (Tensor input, Number ord, tuple of ints dim = {-2,-1}, bool keepdim = False, *, torch.dtype dtype = None, "
    "Tensor out = None)\n"
    " * (Tensor input, str ord = \"fro\", tuple of ints dim = {-2,-1}, bool keepdim = False, *, torch.dtype dtype = "
    "None, Tensor out = None)\n")


def matrix_norm(input: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Matrix norms over the two dims ``dim``: 'fro', 'nuc', 1 / -1 (max / min column sum of |A|), inf / -inf
    (row sum), 2 / -2 (largest / smallest singular value)."""
    if isinstance(dim, int):
        raise TypeError(_MATRIX_NORM_TYPES)
    ord = scalar_arg(ord, "linalg_matrix_norm", "ord")  # (a 0-d tensor: its number)
    if type(keepdim) is not bool:
        _not_bool("linalg_matrix_norm", ("keepdim",), (keepdim,))
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        low_ok = ord == "fro"
    else:
        if float(ord) not in (1.0, -1.0, 2.0, -2.0, math.inf, -math.inf):
            raise RuntimeError(f"linalg.matrix_norm: Order {_cnum(ord)} not supported.")
        low_ok = abs(float(ord)) != 2.0
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _float_input("linalg.matrix_norm", input)
    if not low_ok and input.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {input.dtype.short}")
    dim = list(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (_wrap_dim(d, input.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    dtype = _norm_dtype("linalg.matrix_norm", input, dtype)
    if ord == "fro":
        return _norm_out("linalg.matrix_norm", _run("norm", (input,), (2.0, (d0, d1), keepdim, dtype)), out)
    return _norm_out("linalg.matrix_norm", _run("linalg_matrix_norm", (input,), (ord if ord == "nuc" else float(ord),
                                                                            (d0, d1), keepdim, dtype)), out)


def norm(input: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """``torch.linalg.norm``: a vector norm (ord None: the 2-norm of all elements, or over a 1-int ``dim``) or,
    for a 2-D input / a 2-int ``dim`` with ``ord`` given, a matrix norm."""
    if dim is not None:
        dim = [dim] if isinstance(dim, int) else list(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dim}")
    elif ord is not None and input.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{input.dim()}D.")
    if isinstance(ord, str) or ord is not None and ((dim is not None and len(dim) == 2) or
                                                     (dim is None and input.dim() == 2)):
        r = matrix_norm(input, ord, dim if dim is not None else (0, 1), keepdim, dtype=dtype)
    else:
        r = vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return _norm_out("linalg.norm", r, out)


def _inverse(input: Tensor, *, out=None) -> Tensor:
    """``torch.inverse`` = ``torch.linalg.inv``."""
    return inv(input, out=out)


_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


def _removed_solve(input: Tensor, A: Tensor, *, out=None):
    """``torch.solve`` / ``Tensor.solve``: removed in PyTorch 1.9; torch keeps the name to raise its migration hint."""
    raise RuntimeError(
        _REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
        "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, "
        "which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
        "replaced with:\nX = torch.linalg.solve(A, B)")


def _removed_lstsq(input: Tensor, A: Tensor, *, out=None):
    """``torch.lstsq`` / ``Tensor.lstsq``: removed (torch's RuntimeError)."""
    raise RuntimeError(
        _REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
        "arguments and does not return the QR decomposition in the returned tuple (although it returns other "
        "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe "
        "returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
        "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
        "returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
        "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


def _removed_symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out=None):
    """``torch.symeig`` / ``Tensor.symeig``: removed (torch's RuntimeError)."""
    raise RuntimeError(
        _REMOVED + "The default behavior has changed from using the upper triangular portion of the matrix by default "
        "to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) "
        "should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def _removed_eig(self: Tensor, eigenvectors: bool = False, *, e=None, v=None):
    """``torch.eig`` / ``Tensor.eig``: removed (torch's RuntimeError)."""
    raise RuntimeError(
        _REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
        "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
        "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")


def _removed_matrix_rank(input: Tensor, tol=None, symmetric: bool = False, *, out=None):
    """``torch.matrix_rank``: removed (torch's RuntimeError; no Tensor method)."""
    raise RuntimeError(
        _REMOVED.rstrip() + "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


# the classic top-level forms (``torch.det``, ``torch.svd``...) and their Tensor methods
FUNCTIONS = {"det": _det_legacy, "inverse": _inverse, "logdet": logdet, "slogdet": _slogdet_legacy, "svd": _svd_legacy,
             "cholesky": _cholesky_legacy, "qr": _qr_legacy, "pinverse": _pinverse, "matrix_power": matrix_power,
             "cross": _cross_legacy}
METHODS = dict(FUNCTIONS)
# (removed in PyTorch 1.9: torch keeps the names, and all but matrix_rank as Tensor methods, to raise the hint)
_GONE = {"solve": _removed_solve, "lstsq": _removed_lstsq, "symeig": _removed_symeig, "eig": _removed_eig}
METHODS.update(_GONE)
FUNCTIONS.update(_GONE, matrix_rank=_removed_matrix_rank)
for _k, _f in FUNCTIONS.items():
    _f.__name__ = _f.__qualname__ = _k  # (the qualname names the function in Python's TypeErrors: ``det()``)
del _k, _f, _GONE


# the rest of torch.linalg (lu, eig, matrix_exp, cond, ldl...) and its classic top-level forms (_linalg_more.py)
from . import _linalg_more  # noqa: E402
globals().update(_linalg_more.LINALG)
__all__ += list(_linalg_more.LINALG)
FUNCTIONS.update(_linalg_more.FUNCTIONS)
METHODS.update(_linalg_more.METHODS)
