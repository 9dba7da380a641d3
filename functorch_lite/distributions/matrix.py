"""Distributions with matrix structure, as PyTorch's: ``LowRankMultivariateNormal`` (covariance
``W W^T + diag(D)``, scored through the Woodbury identity and the Cholesky factor of the capacitance matrix),
``LKJCholesky`` (Cholesky factors of correlation matrices) and ``Wishart`` (Bartlett sampling).

Example::

    >>> import functorch_lite as torch
    >>> from functorch_lite.distributions import LowRankMultivariateNormal
    >>> d = LowRankMultivariateNormal(torch.zeros(3), torch.ones(3, 1), torch.ones(3))
    >>> d.log_prob(torch.zeros(3))
    tensor(-3.4500)
"""
from __future__ import annotations

import math
import warnings

from ..ops.movement import diag_embed
from ..ops.special_ops import mvlgamma
from .. import dtypes as D
from .._tensor.tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from . import _ops
from .continuous import Beta
from .continuous_more import Chi2
from .distribution import Distribution, ExponentialFamily
from .multivariate_normal import _batch_mahalanobis, _batch_mv, _precision_to_scale_tril
from .utils import (_cholesky_solve, _standard_normal, _traced, broadcast_all, lazy_property,
                    vec_to_tril_matrix, _Number)
from .._warn import user_stacklevel as _user_stacklevel

__all__ = ["LowRankMultivariateNormal", "LKJCholesky", "Wishart"]

_nan = float("nan")


def _eye_like(n, t):
    from .. import eye
    return eye(n, dtype=t.dtype, device=t.device)


def _batch_capacitance_tril(W, D_):
    """The Cholesky factor of ``I + W^T D^-1 W``."""
    from ..linalg import cholesky
    m = W.size(-1)
    Wt_Dinv = W.mT / D_.unsqueeze(-2)
    K = Wt_Dinv.matmul(W) + _eye_like(m, W)
    return cholesky(K)


def _batch_lowrank_logdet(W, D_, capacitance_tril):
    """``log det(W W^T + D)`` by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D_.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D_, x, capacitance_tril):
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    Wt_Dinv = W.mT / D_.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x.pow(2) / D_).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    """Gaussian with covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``."""
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        from .. import broadcast_tensors
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        loc_ = loc.unsqueeze(-1)
        cov_diag_ = cov_diag.unsqueeze(-1)
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc_, cov_factor, cov_diag_)
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _shape(self, *extra):
        return tuple(self._batch_shape) + tuple(self._event_shape) * (1 + len(extra))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(self._shape())

    @lazy_property
    def scale_tril(self):
        from ..linalg import cholesky
        n = self._event_shape[0]
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        K = Dinvsqrt_W.matmul(Dinvsqrt_W.mT) + _eye_like(n, Dinvsqrt_W)
        return (cov_diag_sqrt_unsqueeze * cholesky(K)).expand(self._shape(1))

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return (W.matmul(W.mT) + diag_embed(self._unbroadcasted_cov_diag)).expand(self._shape(1))

    @lazy_property
    def precision_matrix(self):
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = _ops.solve_triangular(self._capacitance_tril, Wt_Dinv, False)
        precision_matrix = diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return precision_matrix.expand(self._shape(1))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        W_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_W = _standard_normal(W_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))


class LKJCholesky(Distribution):
    """LKJ distribution over Cholesky factors of ``dim x dim`` correlation matrices (onion-method sampling)."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        from .. import arange, cat
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        from .. import randn, arange
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype, device=y.device).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            first_row = (arange(self.dim, device=y.device) == 0).unsqueeze(-1)
            u_hypersphere = u_hypersphere.masked_fill(first_row, 0.0)  # row 0 is 0 / 0
            w = y.sqrt() * u_hypersphere
            eps = D.finfo(w.dtype).tiny
            diag_elems = (1 - (w ** 2).sum(dim=-1)).clamp(min=eps).sqrt()
            return w + diag_embed(diag_elems)

    def log_prob(self, value):
        from .. import arange
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term


# ---- Wishart -----------------------------------------------------------------------------------------------------
_log_2 = math.log(2)


def _mvdigamma(x, p: int):
    from .. import arange
    if not _traced(x) and not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return (x.unsqueeze(-1) - arange(p, dtype=x.dtype, device=x.device).div(2).expand(tuple(x.shape) + (-1,))
            ).digamma().sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=D.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart over ``p x p`` positive-definite matrices with ``df`` degrees of freedom and scale
    ``covariance_matrix`` / ``precision_matrix`` / ``scale_tril`` (exactly one)."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        from .. import tensor, broadcast_shapes
        from ..linalg import cholesky
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, _Number):
            batch_shape = Size(tuple(param.shape[:-2]))
            self.df = tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(tuple(broadcast_shapes(param.shape[:-2], df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if not _traced(self.df) and bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(tuple(batch_shape) + (-1, -1))
        elif precision_matrix is not None:
            self.precision_matrix = param.expand(tuple(batch_shape) + (-1, -1))
        if not _traced(self.df) and bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.",
                          stacklevel=_user_stacklevel())
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df, batch_shape):
        from .. import arange
        L = self._unbroadcasted_scale_tril
        return Chi2(df=df.unsqueeze(-1) - arange(self._event_shape[-1], dtype=L.dtype, device=L.device).expand(
            tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        if "covariance_matrix" in self.__dict__:
            new.covariance_matrix = self.covariance_matrix.expand(cov_shape)
        if "scale_tril" in self.__dict__:
            new.scale_tril = self.scale_tril.expand(cov_shape)
        if "precision_matrix" in self.__dict__:
            new.precision_matrix = self.precision_matrix.expand(cov_shape)
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        return _cholesky_solve(_eye_like(self._event_shape[-1], L), L).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, _nan)
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=Size()):
        from .. import randn
        p = self._event_shape[-1]
        noise = diag_embed(_clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()))
        below = randn(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,), dtype=noise.dtype,
                      device=noise.device)
        noise = noise + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _flag(self, sample):
        flag = self.support.check(sample)
        if self._batch_shape:
            flag = flag.any(tuple(self._batch_dims)) if len(self._batch_dims) > 1 else flag.any(self._batch_dims[0])
        return flag

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett draws. PyTorch 2.13 flags a draw as singular when it *passes* the positive-definite check (it
        assigns ``support.check`` to ``is_singular``), so it warns "Singular sample detected." and redraws the
        flagged draws; this does the same (the redraws are again Wishart draws)."""
        from .. import where
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._flag(sample)
        if not _traced(is_singular) and bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=_user_stacklevel())
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                mask = is_singular.reshape(tuple(is_singular.shape) + (1,) * (len(self._batch_shape) + 2))
                sample = where(mask, sample_new, sample)
                is_singular = is_singular & ~self._flag_all(sample_new)
                if not bool(is_singular.any()):
                    break
        return sample

    def _flag_all(self, sample):
        flag = self.support.check(sample)
        if self._batch_shape:
            flag = flag.all(tuple(self._batch_dims)) if len(self._batch_dims) > 1 else flag.all(self._batch_dims[0])
        return flag

    def log_prob(self, value):
        from ..linalg import slogdet
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1)) - mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet
                - _cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1)) + mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        from ..linalg import slogdet
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _log_2 * p) + mvlgamma(y + (p + 1) / 2, p)
