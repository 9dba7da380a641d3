"""Distance ops: ``cosine_similarity`` and ``pairwise_distance`` (``torch.*`` and ``torch.nn.functional.*``).

Each is one ``@defop`` with a composite jax body and the grad_fn name of PyTorch's outermost node
(``SumBackward1``, ``NormBackward1``). Norms accumulate float16/bfloat16 in float32 and have a zero gradient
at a zero vector, as PyTorch's ``linalg_vector_norm``.

Example::

    >>> import functorch_lite as torch
    >>> torch.cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]]))
    tensor([0.7071])
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _promotion as P
from .. import dtypes as D
from .._tensor.tensor import _wrap_dim
from ._registry import defop
from .reduction import _safe_root

__all__: list = ["cosine_similarity", "pairwise_distance"]

_LOW = (jnp.float16, jnp.bfloat16)


def _broadcast_ndim(targs) -> int:
    return max(len(getattr(t, "_shape", ())) for t in targs)


def _vector_norm(x, p, axis, keepdims):
    """``||x||_p`` over ``axis`` in x's dtype (accumulated in float32 for half types)."""
    a = jnp.abs(x.astype(jnp.float32) if x.dtype in _LOW else x)
    if p == math.inf:
        r = jnp.max(a, axis=axis, keepdims=keepdims)
    elif p == -math.inf:
        r = jnp.min(a, axis=axis, keepdims=keepdims)
    elif p == 0:
        r = jnp.sum((a != 0).astype(a.dtype), axis=axis, keepdims=keepdims)
    elif p == 1:
        r = jnp.sum(a, axis=axis, keepdims=keepdims)
    else:
        r = _safe_root(jnp.sum(a * a if p == 2 else a ** jnp.asarray(p, a.dtype), axis=axis, keepdims=keepdims), p)
    return r.astype(x.dtype)


# ---- cosine_similarity ----------------------------------------------------------------------------------------
def _cos_rule(op, sig, sargs):
    r = P.result_type_sig(P._entries(sig))
    if r.category != D.FLOAT:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {r.short}")
    return (r, r), (r,)


def _cos_prep(targs, sargs):
    dim, eps = sargs
    return (_wrap_dim(dim, _broadcast_ndim(targs)), float(eps))


@defop(kernel="norm_cpu", promote=_cos_rule, grad_fn="SumBackward1", tensors=2, method=False,
       prep=_cos_prep, broadcast=True)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))`` along ``dim`` (inputs broadcast); the clamp is
    applied without a gradient, as in PyTorch."""
    x1, x2 = jnp.broadcast_arrays(x1, x2)
    axis = dim if x1.ndim else None

    def normalised(x):
        n = _vector_norm(x, 2, axis, True)
        n = n + jax.lax.stop_gradient(jnp.maximum(n, jnp.asarray(eps, n.dtype)) - n)
        return x / n
    return jnp.sum(normalised(x1) * normalised(x2), axis=axis)


# ---- pairwise_distance ----------------------------------------------------------------------------------------
def _pd_rule(op, sig, sargs):
    """``x1 - x2 + eps``: bool operands raise as ``-`` does; integers compute in the default float."""
    from .elementwise import _sub_rule
    _, outs = _sub_rule(op, sig, sargs)
    r = P.default_float_of(outs[0])
    return (r, r), (r,)


@defop(kernel="add_stub", promote=_pd_rule, grad_fn="NormBackward1", tensors=2, method=False,
       broadcast=True, prep=lambda targs, sargs: (float(sargs[0]), float(sargs[1]), bool(sargs[2])))
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension of the broadcast inputs."""
    d = x1 - x2 + jnp.asarray(eps, x1.dtype)
    if d.ndim == 0:
        return _vector_norm(d, p, None, False)
    return _vector_norm(d, p, d.ndim - 1, keepdim)
