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
from .kl import kl_divergence, register_kl
from . import kl, continuous, discrete, distribution, transformed
from .transforms import (
    AbsTransform, AffineTransform, ComposeTransform, ExpTransform, IndependentTransform, PowerTransform,
    ReshapeTransform, SigmoidTransform, SoftplusTransform, TanhTransform, Transform, identity_transform,
)

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "ExponentialFamily", "Exponential",
    "Gamma", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Poisson", "TransformedDistribution", "Uniform", "kl_divergence",
    "register_kl", "constraints", "kl", "transforms", "utils",
    "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "IndependentTransform", "PowerTransform",
    "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "Transform", "identity_transform",
]

# PyTorch's module paths (``torch.distributions.normal.Normal``, ``from ...categorical import Categorical``) name
# the modules that hold those classes here
_MODULE_NAMES = {
    "normal": continuous, "uniform": continuous, "exponential": continuous, "laplace": continuous,
    "gamma": continuous, "beta": continuous, "dirichlet": continuous, "bernoulli": discrete, "categorical": discrete,
    "one_hot_categorical": discrete, "poisson": discrete, "binomial": discrete, "exp_family": distribution,
    "independent": transformed, "transformed_distribution": transformed, "log_normal": transformed,
}
for _name, _mod in _MODULE_NAMES.items():
    _sys.modules.setdefault(f"{__name__}.{_name}", _mod)
    globals().setdefault(_name, _mod)
del _name, _mod
