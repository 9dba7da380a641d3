"""``torch.distributions.Distribution`` and ``ExponentialFamily``: shapes, argument validation, the defaults.

Validation is on by default (PyTorch's ``__debug__`` default; ``Distribution.set_default_validate_args``
changes it): parameters are checked against ``arg_constraints`` at construction, and ``log_prob`` / ``cdf``
values against the shapes and the ``support``, with PyTorch's ``ValueError`` messages. The checks read values
on the host; inside ``functorch_lite.compile`` the values are traced, so the checks are skipped there (shape
checks still run).

Example::

    >>> import functorch_lite as torch
    >>> torch.distributions.Normal(torch.zeros(2), torch.ones(2)).batch_shape
    torch.Size([2])
"""
from __future__ import annotations

import warnings

from ..autograd.grad_mode import no_grad
from .._tensor.tensor import Tensor, Size
from . import constraints
from .utils import lazy_property, _is_all_true, _traced, _size, _defer_invalid
from .._warn import user_stacklevel as _user_stacklevel

__all__ = ["Distribution", "ExponentialFamily"]


class Distribution:
    """Base class of probability distributions: ``batch_shape``, ``event_shape``, sampling and scoring."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions created afterwards without ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None) -> None:
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. "
                              "Please set `arg_constraints = {}` or initialize the distribution "
                              "with `validate_args=False` to turn off validation.", stacklevel=_user_stacklevel())
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # lazily constructed from the given parameter
                value = getattr(self, param)
                valid = constraint.check(value)
                # (the message only where it is needed, as torch's: its repr of the distribution reads the values
                # of one-element parameters, which a traced parameter does not have)
                if _traced(value) or _traced(valid):  # (inside compile: checked after the program)
                    _defer_invalid(valid, value, self._param_error(param, value, constraint, traced=True))
                    continue
                if not _is_all_true(valid):
                    raise ValueError(f"{self._param_error(param, value, constraint)}{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its parameters expanded (not copied) to ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:
        """A ``sample_shape + batch_shape + event_shape`` draw, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        """A reparameterised draw: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning,
                      stacklevel=_user_stacklevel())
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """``value``'s rightmost dimensions match ``event_shape``, it broadcasts with ``batch_shape``, and it lies
        in the support (PyTorch's ValueErrors)."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if tuple(value.size()[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable "
                          "sample validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=_user_stacklevel())
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        valid = support.check(value)
        traced = _traced(value) or _traced(valid)

        def head():
            return (f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                    f"support ({repr(support)}) of the distribution {self._repr(traced)}, but found invalid "
                    "values:\n")
        if traced:  # (inside compile: checked after the program)
            _defer_invalid(valid, value, head())
            return
        if not _is_all_true(valid):
            raise ValueError(f"{head()}{value}")

    def _expand_params(self, cls, batch_shape, _instance, names: tuple):
        """``expand`` of a distribution whose parameters ``names`` all have its batch shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for n in names:
            setattr(new, n, getattr(self, n).expand(batch_shape))
        super(cls, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self, traced=False) -> str:
        """torch's: a one-element parameter by its value, others by their size (``traced``: a traced parameter by
        its size too, its value being unknown)."""
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        values = [self.__dict__[p] for p in param_names]
        args_string = ", ".join([f"{p}: {v if v.numel() == 1 and not (traced and _traced(v)) else v.size()}"
                                 for p, v in zip(param_names, values)])
        return self.__class__.__name__ + "(" + args_string + ")"

    def _repr(self, traced) -> str:
        """``__repr__(traced)``, or a subclass's own ``__repr__`` (MixtureSameFamily's, a user's: no argument)."""
        return self.__repr__(traced) if type(self).__repr__ is Distribution.__repr__ else repr(self)

    def _param_error(self, param, value, constraint, traced=False) -> str:
        return (f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"of distribution {self._repr(traced)} to satisfy the constraint {repr(constraint)}, "
                "but found invalid values:\n")


class ExponentialFamily(Distribution):
    """Distributions of the exponential family: ``_natural_params``, ``_log_normalizer`` and
    ``_mean_carrier_measure`` give the entropy (and the Bregman-divergence KL) by differentiation."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self):
        from ..autograd import grad
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for np_, g in zip(nparams, gradients):
            result -= (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
