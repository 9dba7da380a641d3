"""``torch.distributions.utils``: parameter broadcasting, probs <-> logits, ``lazy_property``.

Example::

    >>> import functorch_lite as torch
    >>> from functorch_lite.distributions.utils import probs_to_logits
    >>> probs_to_logits(torch.tensor([0.5, 0.25]), is_binary=True)
    tensor([ 0.0000, -1.0986])
"""
from __future__ import annotations

from functools import update_wrapper

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from ..autograd.grad_mode import enable_grad
from .._tensor.tensor import Tensor, Size

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant

_Number = (int, float, bool)


def broadcast_all(*values):
    """Broadcast tensors (and Python numbers, made tensors of the first tensor's dtype and device, else of the
    default dtype) to one shape."""
    from .. import tensor
    if not all(isinstance(v, Tensor) or isinstance(v, _Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = dict(dtype=D.get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    from .. import broadcast_tensors
    return broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    from .. import randn
    return randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim: int):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    required_shape = tuple(value.shape[:-dim]) + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Log-odds -> probabilities (sigmoid), or unnormalised log-probabilities -> probabilities (softmax)."""
    from .. import sigmoid, softmax
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp to ``[eps, 1 - eps]`` (``eps`` of the dtype)."""
    eps = D.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Probabilities -> log-odds (binary) or log-probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """A non-data descriptor computing the attribute on first access (with grad enabled), then stored on the
    instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Seen on the class: a property for documentation tools, a lazy_property for argument validation."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _traced(t) -> bool:
    return isinstance(t, Tensor) and isinstance(t._array, jax.core.Tracer)


def _is_all_true(valid) -> bool:
    """``torch._is_all_true``: every element is True. Inside ``compile`` the values are not known: the check
    passes (validation is an eager-mode check)."""
    if not isinstance(valid, Tensor):
        return bool(valid)
    if _traced(valid):
        return True
    return bool(np.asarray(valid._array).all())


def _defer_invalid(valid, value, message: str) -> None:
    """Inside ``compile``: the validation as a deferred check (``ops/_deferred``): the call raises ValueError
    ``message`` after its program where an element of ``valid`` is False, naming the first offending value (eager
    prints the whole tensor: its values are not known while tracing)."""
    from ..ops import _deferred
    bad = ~(valid._array if isinstance(valid, Tensor) else jnp.asarray(valid))
    vals = value._array if isinstance(value, Tensor) and tuple(value._array.shape) == tuple(bad.shape) else \
        bad.astype(jnp.int32)
    same = vals is not bad
    if _deferred.PENDING[0] is None and isinstance(getattr(bad, "batch_dim", None), int):
        b = _deferred.concrete(bad, batched=True)  # (under ``func.vmap``: torch's message reads the values)
        if b is not None and b.any():
            from ..ops._dispatch import data_dependent_error
            raise data_dependent_error("reading tensor values", bad)
    _deferred.check(bad, vals, lambda v, i: ValueError(
        message + (f"(the first invalid value, at flat index {i}: {v})" if same else f"(at flat index {i})")))


def _size(shape) -> Size:
    return shape if isinstance(shape, Size) else Size(tuple(shape))


def _tril_index(n: int, diag: int):
    """Flat (row-major) positions of the entries of an ``n x n`` matrix on or below diagonal ``diag``."""
    rows, cols = np.nonzero(np.arange(n) < np.arange(n).reshape(-1, 1) + (diag + 1))
    return rows * n + cols


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower-triangular entries (on or below diagonal ``diag``) of (a batch of) ``D x D`` matrices, in row
    order."""
    from .. import tensor, int64
    n = mat.shape[-1]
    if not _traced(mat) and (diag < -n or diag >= n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    idx = tensor(_tril_index(n, diag), dtype=int64, device=mat.device)
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., idx]


def vec_to_tril_matrix(vec, diag: int = 0):
    """(A batch of) ``D x D`` lower-triangular matrices holding ``vec``'s entries below diagonal ``diag`` in row
    order, zeros elsewhere."""
    from .. import tensor, int64, cat
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = D.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    idx = _tril_index(n, diag)
    if len(idx) != vec.shape[-1]:  # PyTorch's check rounds the size down: its boolean-index write fails
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vec.shape)} cannot be broadcast to indexing "
                           f"result of shape {list(vec.shape[:-1]) + [len(idx)]}")
    flat = np.full(n * n, vec.shape[-1], dtype=np.int64)  # off the triangle: the appended zero
    flat[idx] = np.arange(vec.shape[-1])
    padded = cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    return padded[..., tensor(flat, dtype=int64, device=vec.device)].reshape(tuple(vec.shape[:-1]) + (n, n))


def _cholesky_solve(b, L):
    """``torch.cholesky_solve(b, L)``: X with ``L L^T X = b`` (``L`` lower-triangular)."""
    from ._ops import solve_triangular
    return solve_triangular(L.mT, solve_triangular(L, b, False), True)
