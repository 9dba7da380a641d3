"""Weight normalisation as ATen computes it: ``torch._weight_norm_interface`` (the fused kernel, one
``WeightNormInterfaceBackward0`` node), ``torch._weight_norm`` and ``torch.norm_except_dim`` (composites of other
ops, so their grad_fn is their last inner op's, as in PyTorch).

``w = v * (g / ||v||)``, the norm taken over every dim but ``dim`` (``dim=-1``: over the whole tensor, ATen's
convention here, not "the last dim").

Example::

    >>> import functorch_lite as torch
    >>> v = torch.ones(2, 3)
    >>> torch._weight_norm(v, torch.norm_except_dim(v, 2, 0), 0).shape
    torch.Size([2, 3])
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from .. import dtypes as D
from .._promotion import _first_tensor_dtype, no_kernel
from .._tensor.tensor import Tensor
from ._registry import defop

__all__: list = ["_weight_norm_interface", "_weight_norm", "norm_except_dim"]

_HALF = (D.float16, D.bfloat16)


def _wn_rule(op, sig, sargs):
    """``v``'s dtype for ``w``; the norms in float32 for half inputs (PyTorch's CPU kernel accumulates there)."""
    dt = _first_tensor_dtype(sig)
    if not dt.is_floating_point:
        raise no_kernel("weight_norm_kernel", dt)
    g = sig[1][1] if type(sig[1]) is tuple else None
    if g is not None and g is not dt:
        raise RuntimeError(f"expected scalar type {dt.short} but found {g.short}")
    return (None, None), (dt, D.float32 if dt in _HALF else dt)


def _wn_prep(targs, sargs):
    (dim,) = sargs
    nd = len(targs[0]._shape)
    if not -max(nd, 1) <= dim < max(nd, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], "
                         f"but got {dim})")
    if dim not in (0, nd - 1):
        raise RuntimeError('dim == 0 || dim == v.dim() - 1 INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/'
                           'ATen/native/cpu/WeightNormKernel.cpp":408, please report a bug to PyTorch. fused kernels '
                           "can only be applied for first or last dim")
    return (dim,)


@defop("_weight_norm_interface", promote=_wn_rule, grad_fn="WeightNormInterfaceBackward0", tensors=2, nout=2,
       method=False, function=False, kernel="weight_norm_kernel", prep=_wn_prep, broadcast=False)
def _wn_interface(v, g, dim=0):
    acc = jnp.float32 if v.dtype in (jnp.float16, jnp.bfloat16) else v.dtype
    x = v.astype(acc)
    axes = tuple(d for d in range(v.ndim) if d != dim)
    norms = jnp.sqrt(jnp.sum(x * x, axis=axes, keepdims=True))
    w = x * (g.astype(acc) / norms)
    return w, lax.stop_gradient(norms)  # (the norms are not differentiable outputs in PyTorch)


def _weight_norm_interface(v: Tensor, g: Tensor, dim: int = 0) -> tuple:
    """``torch._weight_norm_interface``: ``(w, norms)`` of the fused kernel (``dim`` 0 or the last one)."""
    w, norms = _wn_interface(v, g, dim)
    return w, norms.detach()


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """``torch.norm_except_dim``: the ``pow``-norm over every dim but ``dim``, kept as size-1 dims (``dim=-1``:
    the norm of the whole tensor, a 0-dim result)."""
    nd = v.dim()
    if dim == -1:
        return v.norm(pow)
    if not -max(nd, 1) <= dim < max(nd, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], "
                         f"but got {dim})")
    if dim == 0:
        size = [1] * nd
        size[0] = v.size(0)
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(size)
    if dim == nd - 1:
        size = [1] * nd
        size[-1] = v.size(-1)
        return v.contiguous().view(-1, v.size(-1)).norm(pow, 0).view(size)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``torch._weight_norm``: ``v * (g / norm_except_dim(v, 2, dim))``, the fused kernel for the first or last
    dim (which, as PyTorch's, wants ``v`` and ``g`` of one dtype)."""
    v, g = v.contiguous(), g.contiguous()
    if dim in (0, v.dim() - 1):
        return _wn_interface(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))
