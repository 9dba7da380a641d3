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
                               LogisticNormal, RelaxedBernoulli, RelaxedOneHotCategorical)
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
    "Cauchy", "Chi2", "ContinuousBernoulli", "FisherSnedecor", "GeneralizedPareto",
    "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "InverseGamma", "Kumaraswamy", "LKJCholesky",
    "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
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
# the modules that hold those classes here; each class's ``__module__`` is PyTorch's path (its repr, the messages
# that print the class: ``<class '...multinomial.Multinomial'> does not implement mode``). (LogitRelaxedBernoulli
# and ExpRelaxedCategorical live only there, as in PyTorch: ``relaxed_bernoulli`` / ``relaxed_categorical``.)
_MODULE_NAMES = {
    "normal": (continuous, "Normal"), "uniform": (continuous, "Uniform"),
    "exponential": (continuous, "Exponential"), "laplace": (continuous, "Laplace"), "gamma": (continuous, "Gamma"),
    "beta": (continuous, "Beta"), "dirichlet": (continuous, "Dirichlet"), "bernoulli": (discrete, "Bernoulli"),
    "categorical": (discrete, "Categorical"),
    "one_hot_categorical": (discrete, "OneHotCategorical", "OneHotCategoricalStraightThrough"),
    "poisson": (discrete, "Poisson"), "binomial": (discrete, "Binomial"),
    "exp_family": (distribution, "ExponentialFamily"), "independent": (transformed, "Independent"),
    "transformed_distribution": (transformed, "TransformedDistribution"), "log_normal": (transformed, "LogNormal"),
    "cauchy": (continuous_more, "Cauchy"), "chi2": (continuous_more, "Chi2"), "studentT": (continuous_more, "StudentT"),
    "fishersnedecor": (continuous_more, "FisherSnedecor"), "von_mises": (continuous_more, "VonMises"),
    "generalized_pareto": (continuous_more, "GeneralizedPareto"),
    "continuous_bernoulli": (continuous_more, "ContinuousBernoulli"), "geometric": (discrete_more, "Geometric"),
    "negative_binomial": (discrete_more, "NegativeBinomial"), "multinomial": (discrete_more, "Multinomial"),
    "mixture_same_family": (discrete_more, "MixtureSameFamily"), "half_normal": (transformed_more, "HalfNormal"),
    "half_cauchy": (transformed_more, "HalfCauchy"), "gumbel": (transformed_more, "Gumbel"),
    "weibull": (transformed_more, "Weibull"), "pareto": (transformed_more, "Pareto"),
    "inverse_gamma": (transformed_more, "InverseGamma"), "kumaraswamy": (transformed_more, "Kumaraswamy"),
    "logistic_normal": (transformed_more, "LogisticNormal"),
    "relaxed_bernoulli": (transformed_more, "LogitRelaxedBernoulli", "RelaxedBernoulli"),
    "relaxed_categorical": (transformed_more, "ExpRelaxedCategorical", "RelaxedOneHotCategorical"),
    "lowrank_multivariate_normal": (matrix, "LowRankMultivariateNormal"), "lkj_cholesky": (matrix, "LKJCholesky"),
    "wishart": (matrix, "Wishart"),
}
for _name, (_mod, *_classes) in _MODULE_NAMES.items():
    _sys.modules.setdefault(f"{__name__}.{_name}", _mod)
    globals().setdefault(_name, _mod)
    for _cls in _classes:
        getattr(_mod, _cls).__module__ = f"{__name__}.{_name}"
del _name, _mod, _classes, _cls
