"""Distance ops: ``cosine_similarity`` and ``pairwise_distance`` (``torch.*`` and ``torch.nn.functional.*``), and
``torch.cdist``.

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
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from .. import _promotion as P
from .. import dtypes as D
from .._tensor.tensor import Tensor, _wrap_dim
from ._dispatch import _type_name
from ._registry import defop, saves_for
from . import grad_overrides as _go
from .reduction import _abs

__all__: list = ["cosine_similarity", "pairwise_distance", "cdist"]

_LOW = (jnp.float16, jnp.bfloat16)


def _broadcast_ndim(targs) -> int:
    return max(len(getattr(t, "_shape", ())) for t in targs)


def _vector_norm(x, p, axis, keepdims):
    """``||x||_p`` over ``axis`` in x's (real) dtype (accumulated in float32 for half types)."""
    a = _abs(x.astype(jnp.float32) if x.dtype in _LOW else x)  # (gradient 0 at 0, as torch's)
    if p == math.inf:
        r = jnp.max(a, axis=axis, keepdims=keepdims)
    elif p == -math.inf:
        r = jnp.min(a, axis=axis, keepdims=keepdims)
    elif p == 0:
        r = jnp.sum((a != 0).astype(a.dtype), axis=axis, keepdims=keepdims)
    elif p == 1:
        r = jnp.sum(a, axis=axis, keepdims=keepdims)
    else:
        r = _go.pnorm(a, p, axis, keepdims)
    return r.astype(jnp.finfo(x.dtype).dtype)


# ---- cosine_similarity ----------------------------------------------------------------------------------------
def _cos_rule(op, sig, sargs):
    """The common dtype; an integral (or bool) input is cast to it, a floating one kept: ATen normalises each input
    in its own dtype and promotes at their product."""
    r = P.result_type_sig(P._entries(sig))
    if r.category != D.FLOAT:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {r.short}")
    return tuple(s[1] if s[1].category == D.FLOAT else r for s in sig), (r,)


def _cos_prep(targs, sargs):
    dim, eps = sargs
    return (_wrap_dim(dim, _broadcast_ndim(targs)), float(eps))


@defop(out=False, kernel="norm_cpu", promote=_cos_rule, grad_fn="SumBackward1", tensors=2, method=False,
       prep=_cos_prep, broadcast=True,  # (torch's composite saves an input only for its own gradient)
       saves=saves_for(((0,), 0), ((1,), 1), always=("internal",)))
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))`` along ``dim`` (inputs broadcast); the clamp is
    applied without a gradient, as in PyTorch."""
    x1, x2 = jnp.broadcast_arrays(x1, x2)
    axis = dim if x1.ndim else None
    d1, d2 = x1.dtype, x2.dtype  # (floating: the rule cast an integral input to the common dtype)
    # (the result's dtype: torch's promotion of two floating dtypes -- the wider; float16 with bfloat16, float32)
    dt = d1 if d1 == d2 else jnp.dtype(jnp.float32) if d1 in _LOW and d2 in _LOW else \
        max(d1, d2, key=lambda d: d.itemsize)

    def up(a):
        # (half types: each step computed in float32 and rounded back, as ATen's kernels (XLA's half division and
        # products are neither correctly rounded nor keep subnormals); the sum accumulates in float32)
        return a.astype(jnp.float32) if a.dtype in _LOW else a

    def normalised(x):  # (in x's own dtype, as ATen's: a float16 input's norm and quotient are float16)
        n = _vector_norm(x, 2, axis, True)
        # (clamp_min_ under no_grad on a clone of the norm: exactly eps (in the norm's dtype) below it, an inf or
        # NaN norm kept, and the norm's gradient passed everywhere, clamped or not)
        e = jnp.asarray(eps, n.dtype)
        n = jnp.where(n < e, e + (n - jax.lax.stop_gradient(n)), n)
        return (up(x) / up(n)).astype(x.dtype)
    prod = (up(normalised(x1).astype(dt)) * up(normalised(x2).astype(dt))).astype(dt)
    return jnp.sum(up(prod), axis=axis).astype(dt)


# ---- pairwise_distance ----------------------------------------------------------------------------------------
def _pd_rule(op, sig, sargs):
    """``x1 - x2 + eps``: bool operands raise as ``-`` does; integers compute in the default float."""
    from .elementwise import _sub_rule
    _, outs = _sub_rule(op, sig, sargs)
    r = P.default_float_of(outs[0])
    return (r, r), (r.to_real(),)


@defop(out=False, kernel="add_stub", promote=_pd_rule, grad_fn="NormBackward1", tensors=2, method=False,
       broadcast=True, prep=lambda targs, sargs: (float(sargs[0]), float(sargs[1]), bool(sargs[2])))
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension of the broadcast inputs (real for complex ones)."""
    d = x1 - x2 + jnp.asarray(eps, x1.dtype)
    if d.ndim == 0:
        return _vector_norm(d, p, None, False)
    return _vector_norm(d, p, d.ndim - 1, keepdim)


# ---- cdist ------------------------------------------------------------------------------------------------------------
_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _cdist_prep(targs, sargs):
    p, mode = sargs
    if not isinstance(p, (numbers.Real, Tensor)):  # (torch's parser: a ``float`` p, which a string is not)
        raise TypeError(f"cdist(): argument 'p' (position 3) must be float, not {_type_name(p)}")
    if mode not in _CDIST_MODES:
        raise ValueError(f"{mode} is not a valid value for compute_mode")
    x1, x2 = targs
    for name, x in (("X1", x1), ("X2", x2)):
        if len(x._shape) < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {len(x._shape)}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._shape[-1]} X2: {x2._shape[-1]}")
    m = _CDIST_MODES[mode]
    use_mm = p == 2 and (m == 1 or (m == 0 and (x1._shape[-2] > 25 or x2._shape[-2] > 25))) and \
        math.prod(x1._shape) > 0 and math.prod(x2._shape) > 0
    return (float(p), use_mm)


def _cdist_rule(op, sig, sargs):
    a, b = sig[0][1], sig[1][1]
    for name, d in (("X1", a), ("X2", b)):
        if d.category != D.FLOAT:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {d.short}")
    if a is not b:
        raise RuntimeError(f"expected scalar type {a.short} but found {b.short}")
    if a not in (D.float32, D.float64):
        raise P.no_kernel("cdist", a)
    if not sargs[0] >= 0:  # (torch's ``p >= 0``: NaN is refused too)
        raise RuntimeError("cdist only supports non-negative p values")
    return (None, None), (a,)


def _cdist_check(targs, sargs):
    from ._dispatch import broadcast_shapes
    broadcast_shapes(targs[0]._shape[:-2], targs[1]._shape[:-2])


@defop(required=True, kernel="cdist", promote=_cdist_rule, tensors=2, method=False, prep=_cdist_prep, check=_cdist_check, autocast="fp32",
       grad_fn=lambda targs, sargs: "ViewBackward0" if sargs[1] else "CdistBackward0", out=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of ``x1`` (.., P, M) and ``x2`` (.., R, M) -> (.., P, R), batch dims
    broadcast. For p = 2 with more than 25 rows (or ``compute_mode='use_mm_for_euclid_dist'``) PyTorch's
    matmul form ``sqrt(max(|a|^2 - 2ab + |b|^2, 0))``, else the direct one (zero gradient at zero distance).
    (``compute_mode`` arrives here as that choice.)"""
    b = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    x1 = jnp.broadcast_to(x1, b + x1.shape[-2:])
    x2 = jnp.broadcast_to(x2, b + x2.shape[-2:])
    if compute_mode:
        n1 = jnp.sum(x1 * x1, -1, keepdims=True)
        n2 = jnp.sum(x2 * x2, -1, keepdims=True)
        a = jnp.concatenate([x1 * jnp.asarray(-2, x1.dtype), n1, jnp.ones_like(n1)], -1)
        c = jnp.concatenate([x2, jnp.ones_like(n2), n2], -1)
        # (torch's _euclidean_dist_backward: no gradient where the distance is 0)
        return _go.sqrt0(jnp.maximum(a @ jnp.swapaxes(c, -1, -2), jnp.zeros((), x1.dtype)))
    if x1.shape[-1] == 0:
        return jnp.zeros(x1.shape[:-1] + x2.shape[-2:-1], x1.dtype)
    return _go.once_differentiable(lambda a, b: _cdist_direct(a, b, p),
                                   "the derivative for '_cdist_backward' is not implemented.")(x1, x2)


def _cdist_direct(x1, x2, p):
    """cdist's direct form (torch's _cdist_forward: its backward has no derivative)."""
    d = x1[..., :, None, :] - x2[..., None, :, :]
    if p == math.inf:
        return _go.inf_dist(d)
    return _vector_norm(d, p, -1, False)

