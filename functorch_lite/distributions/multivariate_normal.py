"""``MultivariateNormal``: a Gaussian with a full covariance, given as ``covariance_matrix``,
``precision_matrix`` or ``scale_tril`` (its lower Cholesky factor), as PyTorch's.

Internally every parametrisation becomes the unbroadcast Cholesky factor ``L`` (``linalg.cholesky``, which
raises PyTorch's LinAlgError for a matrix that is not positive-definite); scoring solves ``L z = x - loc``
(``_ops.solve_triangular``).

Example::

    >>> import functorch_lite as torch
    >>> from functorch_lite.distributions import MultivariateNormal
    >>> MultivariateNormal(torch.zeros(2), torch.eye(2)).log_prob(torch.zeros(2))
    tensor(-1.8379)
"""
from __future__ import annotations

import math

from .._tensor.tensor import Size
from . import constraints
from . import _ops
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector product over broadcast batch dimensions."""
    return bmat.matmul(bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^-1 x`` over the batch dimensions of ``bx`` (``bL``'s broadcast against them)."""
    n = bx.shape[-1]
    if not n:  # (torch's flattens bL to (-1, n, n) first: an empty event is that reshape's error)
        bL.reshape(-1, n, n)
    return _ops.solve_triangular(bL, bx.unsqueeze(-1), False).squeeze(-1).pow(2).sum(-1)


def _cholesky_inverse(L):
    """``(L L^T)^-1`` from the lower factor ``L`` (``torch.cholesky_inverse``)."""
    from .. import eye
    linv = _ops.solve_triangular(L, eye(L.shape[-1], dtype=L.dtype, device=L.device), False)
    return linv.mT.matmul(linv)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of ``P^-1``, without inverting ``P`` (PyTorch's flip trick)."""
    from .. import eye
    from ..linalg import cholesky
    Lf = cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    Id = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return _ops.solve_triangular(L_inv, Id, False)


class MultivariateNormal(Distribution):
    """Gaussian over the last dimension of ``loc``, with exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril``."""
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        from .. import broadcast_shapes
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError("scale_tril matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            batch_shape = tuple(broadcast_shapes(scale_tril.shape[:-2], loc.shape[:-1]))
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError("covariance_matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            batch_shape = tuple(broadcast_shapes(covariance_matrix.shape[:-2], loc.shape[:-1]))
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            if precision_matrix.dim() < 2:
                raise ValueError("precision_matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            batch_shape = tuple(broadcast_shapes(precision_matrix.shape[:-2], loc.shape[:-1]))
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            from ..linalg import cholesky
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        if "covariance_matrix" in self.__dict__:
            new.covariance_matrix = self.covariance_matrix.expand(cov_shape)
        if "scale_tril" in self.__dict__:
            new.scale_tril = self.scale_tril.expand(cov_shape)
        if "precision_matrix" in self.__dict__:
            new.precision_matrix = self.precision_matrix.expand(cov_shape)
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return L.matmul(L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape)
                                                                    + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
