"""``torch.nn.utils.parametrizations``: ``orthogonal``, ``weight_norm`` and ``spectral_norm`` as parametrizations
(:mod:`.parametrize`), PyTorch's current forms of these tools.

- ``weight_norm``: ``weight = g * v / ||v||`` from ``parametrizations.weight.original0`` (g) and ``original1``
  (v), computed by ``torch._weight_norm``.
- ``spectral_norm``: ``weight / sigma``, ``sigma`` estimated by power iteration on the ``_u``/``_v`` buffers of
  ``parametrizations.weight[0]`` (one step of ``n_power_iterations`` per access in training mode; none in eval).
- ``orthogonal``: the matrix exponential, Cayley map or Householder product of the unconstrained original, with
  PyTorch's dynamic trivialization (a ``base`` buffer) by default.

Example::

    >>> import functorch_lite as torch
    >>> m = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(4, 3))
    >>> sorted(n for n, _ in m.named_buffers())
    ['parametrizations.weight.0._u', 'parametrizations.weight.0._v']
"""
from __future__ import annotations

from enum import Enum, auto

from ..._tensor.tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__: list = ["orthogonal", "spectral_norm", "weight_norm"]


def _ft():
    import functorch_lite
    return functorch_lite


def _mH(x: Tensor) -> Tensor:
    return x.mT.conj() if x.is_complex() else x.mT


def _is_orthogonal(Q: Tensor) -> bool:
    ft = _ft()
    n, k = Q.size(-2), Q.size(-1)
    Id = ft.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * ft.finfo(Q.dtype).eps
    return ft.allclose(_mH(Q) @ Q, Id, atol=eps)


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of ``A = QR`` with ``diag(R)`` real and non-negative (``A`` tall)."""
    ft = _ft()
    X, tau = ft.geqrf(A)
    Q = ft.linalg.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        ft = _ft()
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = ft.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - _mH(X)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = ft.matrix_exp(A)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^{-1}
                Id = ft.eye(n, dtype=A.dtype, device=A.device)
                Q = ft.linalg.solve(ft.add(Id, A, alpha=-0.5), ft.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = ft.linalg.householder_product(A, tau)
            # X's diagonal (±1) flips columns; it is neither differentiated nor updated (the int cast)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        ft = _ft()
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = ft.geqrf(Q)
            # diag(R) > 0 (else Q = (-Q)(-Id) would be another decomposition); LAPACK's tau == 0: no reflection
            d = A.diagonal(dim1=-2, dim2=-1).sign()
            d = ft.where(tau == 0.0, -d, d)
            A = A.clone()
            A.diagonal(dim1=-2, dim2=-1).copy_(d)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete Q into a full n x n orthogonal matrix
            N = ft.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(ft.cat([Q, N], dim=-1))
        self.base = Q
        # -Id, so that householder(zeros(m, n)) == eye(m, n)
        neg_Id = ft.zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to orthonormal columns (rows, if wide).

    ``orthogonal_map``: ``"matrix_exp"``, ``"cayley"`` or ``"householder"`` (default: ``"matrix_exp"`` for a square
    or complex matrix, else ``"householder"``).

    >>> m = orthogonal(torch.nn.Linear(5, 3))
    >>> torch.dist(m.weight @ m.weight.T, torch.eye(3)) < 1e-5
    tensor(True)
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _ft()._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _ft().norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name> = g * v / ||v||`` (the norm over every dim but ``dim``; ``dim=None``: the whole tensor),
    ``g`` and ``v`` in ``parametrizations.<name>.original0`` / ``original1``.

    >>> m = weight_norm(torch.nn.Linear(20, 40))
    >>> m.parametrizations.weight.original0.shape
    torch.Size([40, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            with no_grad():
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # u and v are updated in place (their storages, so that an optimizer/compile sees the same buffers), and
        # cloned before use in forward so that two forwards can be backpropagated (as PyTorch)
        ft = _ft()
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(ft.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(ft.mv(_mH(weight_mat), self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = _ft().vdot(u, _ft().mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """``module.<name> = W / sigma(W)``, ``sigma`` the largest singular value of ``W`` reshaped to a matrix (rows:
    ``dim``, default 0, 1 for ConvTranspose), estimated by power iteration.

    >>> m = spectral_norm(torch.nn.Linear(20, 40))
    >>> torch.linalg.matrix_norm(m.weight, 2)   # about 1
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module

