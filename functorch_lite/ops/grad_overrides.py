"""Where PyTorch's derivative convention differs from JAX's, the op's jax body uses one of these
``jax.custom_jvp`` rules (transposed automatically by ``jax.vjp``). Each has a parity test
(tests/parity/test_grad_overrides.py).

- abs at 0: PyTorch gives 0 (sign(0)); JAX gives 1.
- relu at 0: PyTorch gives 0 (JAX's ``maximum(x, 0)`` splits a tie: 0.5).
- clamp at a bound: PyTorch passes the gradient where ``min <= x <= max`` (bounds included); JAX's
  ``clip`` splits ties. Tensor bounds get the gradient where the bound is active (x < min, x > max).
- norm at 0: PyTorch's subgradient is 0; JAX's ``x / ||x||`` gives NaN.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp


@jax.custom_jvp
def relu(x):
    return jnp.maximum(x, jnp.zeros((), x.dtype))


@relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return relu(x), jnp.where(x > 0, t, jnp.zeros((), t.dtype))


@jax.custom_jvp
def abs(x):  # noqa: A001
    return jnp.abs(x)


@abs.defjvp
def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return abs(x), t * jnp.sign(x)


@jax.custom_jvp
def clamp(x, lo, hi):
    """clamp with both bounds (arrays of x's dtype, broadcastable)."""
    return jnp.minimum(jnp.maximum(x, lo), hi)


@clamp.defjvp
def _clamp_jvp(primals, tangents):
    x, lo, hi = primals
    tx, tlo, thi = tangents
    y = clamp(x, lo, hi)
    z = jnp.zeros((), y.dtype)
    inside = (x >= lo) & (x <= hi)
    t = jnp.where(inside, tx, z) + jnp.where(x < lo, tlo, z) + jnp.where((x > hi) & (x >= lo), thi, z)
    return y, t


@jax.custom_jvp
def clamp_min(x, lo):
    return jnp.maximum(x, lo)


@clamp_min.defjvp
def _clamp_min_jvp(primals, tangents):
    x, lo = primals
    tx, tlo = tangents
    z = jnp.zeros((), x.dtype)
    return clamp_min(x, lo), jnp.where(x >= lo, tx, z) + jnp.where(x < lo, tlo, z)


@jax.custom_jvp
def clamp_max(x, hi):
    return jnp.minimum(x, hi)


@clamp_max.defjvp
def _clamp_max_jvp(primals, tangents):
    x, hi = primals
    tx, thi = tangents
    z = jnp.zeros((), x.dtype)
    return clamp_max(x, hi), jnp.where(x <= hi, tx, z) + jnp.where(x > hi, thi, z)


def _safe_norm_impl(x, axis, keepdims):
    return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), axis=axis, keepdims=keepdims))


def norm2(x, axis=None, keepdims=False):
    """Euclidean norm whose gradient at 0 is 0 (PyTorch), not NaN."""
    @jax.custom_jvp
    def f(x):
        return _safe_norm_impl(x, axis, keepdims)

    @f.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        n = f(x)
        nk = n if keepdims or axis is None and n.ndim == x.ndim else (
            jnp.expand_dims(n, axis) if axis is not None else n)
        safe = jnp.where(nk == 0, jnp.ones((), nk.dtype), nk)
        dn = jnp.sum(jnp.real(jnp.conj(x) * t) / safe, axis=axis, keepdims=keepdims)
        return n, dn
    return f(x)
