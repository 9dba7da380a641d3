"""Reductions (spec §9.1-9.3): sum, mean, ... (more are added by the reductions work)."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor.tensor import _wrap_dim
from ._registry import defop


def _dim_prep(targs, sargs):
    """Normalise ``dim`` (None, int, tuple/list; ``()`` reduces all, RED-02) with PyTorch's errors."""
    dim = sargs[0]
    nd = len(targs[0]._shape)
    if dim is None:
        return sargs
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return (None,) + tuple(sargs[1:])
        ds = tuple(_wrap_dim(d, nd) for d in dim)
        for d in ds:
            if ds.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return (ds,) + tuple(sargs[1:])
    return (_wrap_dim(dim, nd),) + tuple(sargs[1:])


def _sum_name(targs, sargs):
    return "SumBackward0" if sargs[0] is None else "SumBackward1"


@defop(promote="sum", grad_fn=_sum_name, prep=_dim_prep, saves=())
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """Integer and bool sums accumulate in int64 (PRO-13)."""
    return jnp.sum(input, axis=dim, keepdims=keepdim)


def _mean_name(targs, sargs):
    return "MeanBackward0" if sargs[0] is None else "MeanBackward1"


@defop(promote="mean", grad_fn=_mean_name, prep=_dim_prep, saves=())
def mean(input, dim=None, keepdim=False, *, dtype=None):
    return jnp.mean(input, axis=dim, keepdims=keepdim)
