"""Division rounded as PyTorch's CPU kernels round it, whatever XLA's algebraic simplifier does.

XLA rewrites ``A / broadcast(B)`` into ``A * broadcast(1 / B)`` on every backend, unconditionally (no flag
turns it off): a division by a Python scalar, by a row or column that broadcasts, or by a mean's element count
becomes two roundings instead of one, and about a third of the quotients come out one ulp away from PyTorch's
(in float16, a third of ``x / 3`` is off by 1e-3 near 1). Inside a compiled program even a full-shape divisor
may be a broadcast in the HLO (``x / torch.full_like(x, 3.)``), so the rule applies to every division.

- float32 and narrower: the quotient is computed in float64 and rounded once to float32. The rewrite's error
  there (< 2**-52 relative) is far below the distance of a float32 quotient from a float32 rounding midpoint
  (>= 2**-49 relative for float32 operands), so the rounded result is the correctly rounded quotient. A float16
  or bfloat16 quotient is then rounded from that float32 one, as torch rounds its float "opmath" result.
  On a memory-bound CPU division this costs nothing (``x / 3.`` on 1M float32: 0.062 ms against 0.071 for
  JAX's own); an explicit ``reduce_precision`` would double it, and XLA (CPU, jax 0.10) keeps the
  float64 -> float32 convert even where a consumer widens the quotient again (checked in the HLO).
- float64: the divisor is materialised at the full shape (and under ``func.vmap`` with the numerator's batch
  dimension) behind ``optimization_barrier``, which the simplifier cannot see through, and divided in float64.
- complex and integer operands divide as JAX does.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

_NARROW = (jnp.dtype(jnp.float32), jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))


def true_div(a, b):
    """``a / b`` rounded once, in the operands' result dtype (PyTorch's ``div`` with no rounding mode)."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    dt = jnp.result_type(a, b)
    if dt in _NARROW:
        return (a.astype(jnp.float64) / b.astype(jnp.float64)).astype(jnp.float32).astype(dt)
    if dt == jnp.float64:
        # (also at the same shape: the divisor may still be a broadcast in the HLO, from vmap or a compiled program.
        # Times ones that depend on ``a``'s values: under vmap the divisor then takes ``a``'s batch dimension
        # before the barrier, where vmap would broadcast it again after; ``* 1`` keeps -0., inf and nan.)
        ones = jnp.where(a == a, jnp.ones((), dt), jnp.ones((), dt))
        shape = jnp.broadcast_shapes(a.shape, b.shape)
        return a / jax.lax.optimization_barrier(jnp.broadcast_to(b.astype(dt), shape) * ones)
    return a / b


def stored(v, dt, acc=jnp.float32):
    """``v`` (computed in ``acc``) rounded to ``dt`` and read back in ``acc``: where PyTorch's CPU decomposition
    stores a float16 / bfloat16 intermediate result that its next op reads as opmath."""
    return v.astype(dt).astype(acc)


def mean(x, axis=None, keepdims=False):
    """``x.sum(axis) / count``, the division rounded once as PyTorch's CPU ``mean`` (a sum, then ``div_``)."""
    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    n = math.prod(x.shape[a] for a in axes)
    return true_div(jnp.sum(x, axis=axis, keepdims=keepdims), jnp.asarray(n, x.dtype))
