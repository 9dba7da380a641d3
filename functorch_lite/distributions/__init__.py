"""``torch.distributions`` on the facade: the distributions training scripts use (policy gradients, VAEs,
probabilistic models), with PyTorch's shapes, formulas, validation errors and KL registry.

Everything is written with facade ops, so gradients flow through ``log_prob`` / ``entropy`` / ``rsample`` /
``kl_divergence`` and the code runs inside ``functorch_lite.compile``. Draws use the facade's generator:
``manual_seed`` reproduces them, a compiled function draws fresh values per call; the values themselves differ
from PyTorch's (another random number generator).

Example (REINFORCE)::

    >>> import functorch_lite as torch
    >>> from functorch_lite.distributions import Categorical
    >>> logits = torch.zeros(4, 3, requires_grad=True)
    >>> dist = Categorical(logits=logits)
    >>> action = dist.sample()
    >>> (-dist.log_prob(action) * torch.ones(4)).mean().backward()
"""
from __future__ import annotations

import sys as _sys

from . import constraints, transforms, utils
from .distribution import Distribution, ExponentialFamily
from .continuous import Normal, Uniform, Exponential, Laplace, Gamma, Beta, Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical, OneHotCategoricalStraightThrough, Poisson, Binomial
from .multivariate_normal import MultivariateNormal
from .transformed import Independent, TransformedDistribution, LogNormal
from .continuous_more import (Cauchy, Chi2, StudentT, FisherSnedecor, VonMises, GeneralizedPareto,
                              ContinuousBernoulli)
from .discrete_more import Geometric, NegativeBinomial, Multinomial, MixtureSameFamily
from .transformed_more import (HalfNormal, HalfCauchy, Gumbel, Weibull, Pareto, InverseGamma, Kumaraswamy,
                               LogisticNormal, LogitRelaxedBernoulli, RelaxedBernoulli, ExpRelaxedCategorical,
                               RelaxedOneHotCategorical)
from .matrix import LowRankMultivariateNormal, LKJCholesky, Wishart
from .kl import kl_divergence, register_kl
from . import constraint_registry
from .constraint_registry import biject_to, transform_to
from . import kl_more as _kl_more  # noqa: F401  (registers the KL divergences of the classes above)
from . import kl, continuous, discrete, distribution, transformed
from . import continuous_more, discrete_more, transformed_more, matrix, multivariate_normal  # noqa: F401
from .transforms import (
    AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
    CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
    PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform,
    SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform, Transform, identity_transform,
)

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "ExponentialFamily", "Exponential",
    "Gamma", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Poisson", "TransformedDistribution", "Uniform", "kl_divergence",
    "register_kl", "constraints", "kl", "transforms", "utils",
    "Cauchy", "Chi2", "ContinuousBernoulli", "ExpRelaxedCategorical", "FisherSnedecor", "GeneralizedPareto",
    "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "InverseGamma", "Kumaraswamy", "LKJCholesky",
    "LogisticNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "NegativeBinomial", "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "VonMises", "Weibull",
    "Wishart",
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
    "identity_transform",
    "biject_to", "transform_to", "constraint_registry",
]

# PyTorch's module paths (``torch.distributions.normal.Normal``, ``from ...categorical import Categorical``) name
# the modules that hold those classes here
_MODULE_NAMES = {
    "normal": continuous, "uniform": continuous, "exponential": continuous, "laplace": continuous,
    "gamma": continuous, "beta": continuous, "dirichlet": continuous, "bernoulli": discrete, "categorical": discrete,
    "one_hot_categorical": discrete, "poisson": discrete, "binomial": discrete, "exp_family": distribution,
    "independent": transformed, "transformed_distribution": transformed, "log_normal": transformed,
    "cauchy": continuous_more, "chi2": continuous_more, "studentT": continuous_more,
    "fishersnedecor": continuous_more, "von_mises": continuous_more, "generalized_pareto": continuous_more,
    "continuous_bernoulli": continuous_more, "geometric": discrete_more, "negative_binomial": discrete_more,
    "multinomial": discrete_more, "mixture_same_family": discrete_more, "half_normal": transformed_more,
    "half_cauchy": transformed_more, "gumbel": transformed_more, "weibull": transformed_more,
    "pareto": transformed_more, "inverse_gamma": transformed_more, "kumaraswamy": transformed_more,
    "logistic_normal": transformed_more, "relaxed_bernoulli": transformed_more,
    "relaxed_categorical": transformed_more, "lowrank_multivariate_normal": matrix, "lkj_cholesky": matrix,
    "wishart": matrix,
}
for _name, _mod in _MODULE_NAMES.items():
    _sys.modules.setdefault(f"{__name__}.{_name}", _mod)
    globals().setdefault(_name, _mod)
del _name, _mod
