"""Activation ops (``torch.nn.functional`` twins): the ELU family (elu / selu / celu), hardswish, hardsigmoid,
prelu, glu and the in-place forms PyTorch has.

Each is one ``@defop`` with a jax body written so that the gradient at the kinks follows PyTorch's
convention (``jnp.where`` on the branch PyTorch's backward takes). In-place forms run the same op through
the table's in-place path, so ``F.elu(x, inplace=True)`` records ``EluBackward1`` as PyTorch does.

Example::

    >>> import functorch_lite as torch
    >>> torch.nn.functional.selu(torch.tensor([-1.0, 0.0, 2.0]))
    tensor([-1.1113,  0.0000,  2.1014])
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._symbolic import sym_float
from .._promotion import no_kernel
from .._tensor.tensor import Tensor, _wrap_dim
from ._registry import OPS, defop
from ._rounding import true_div
from .norm import _float_rule

__all__: list = ["elu", "elu_", "selu", "selu_", "celu", "celu_", "hardswish", "hardsigmoid", "mish", "prelu",
                 "glu"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


# ---- the ELU family: one kernel, PyTorch's (alpha, scale, input_scale) parametrisation ---------------------
@defop("_elu", promote=_float_rule("elu_cpu"), grad_fn=lambda t, s: s[-1], method=False, function=False,
       inplace=True, saves=(0,), kernel="elu_cpu")
def _elu(input, alpha, scale, input_scale, node):
    """``scale * x`` for ``x > 0``, else ``alpha * scale * (exp(input_scale * x) - 1)``; ``node`` is the grad_fn
    name (EluBackward0/1, CeluBackward0/1: out of place / in place)."""
    x = input.astype(D.opmath(input.dtype))  # float16/bfloat16 compute in float32, as PyTorch's kernel
    dt = x.dtype
    # (the negative branch of x itself only where it is taken: exp(88.7) is inf in float32, and the unused branch's
    # inf derivative times where's zero would be a nan gradient at large x)
    pos = ~(x <= 0)  # (NaN takes the linear branch: torch's backward tests x <= 0)
    neg_x = x < 0
    coef = jnp.asarray(alpha * scale, dt)
    xs = x * jnp.asarray(input_scale, dt)
    neg = coef * jnp.expm1(jnp.where(neg_x, xs, jnp.zeros_like(x)))
    # at x = 0 itself the negative branch's tangent line, ``coef * x * input_scale``: the same value (+-0) and first
    # derivative as the exp (torch's elu_backward takes it at x <= 0), and every higher derivative 0, as torch's
    # elu_double_backward, which masks with x < 0 strictly
    neg = jnp.where(neg_x, neg, coef * xs)
    return jnp.where(pos, x * jnp.asarray(scale, dt), neg).astype(input.dtype)


def _run_elu(input, alpha, scale, input_scale, name, inplace):
    if inplace:
        return OPS["_elu"].fn_inplace(input, sym_float(alpha), float(scale), float(input_scale), name + "Backward1")
    return _elu(input, sym_float(alpha), float(scale), float(input_scale), name + "Backward0")


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.elu``: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    return _run_elu(input, alpha, 1.0, 1.0, "Elu", inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``F.elu_``: in place (EluBackward1)."""
    return _run_elu(input, alpha, 1.0, 1.0, "Elu", True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.selu`` / ``torch.selu``: ELU with PyTorch's fixed alpha and scale."""
    return _run_elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, "Elu", inplace)


def selu_(input: Tensor) -> Tensor:
    """``torch.selu_``: in place."""
    return _run_elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, "Elu", True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.celu`` / ``torch.celu``: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _run_elu(input, alpha, 1.0, 1.0 / alpha, "Celu", inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``torch.celu_``: in place."""
    return celu(input, alpha, True)


# ---- hardswish / hardsigmoid / mish ----------------------------------------------------------------------------
@defop("_hardswish", promote=_float_rule("hardswish_cpu"), grad_fn="HardswishBackward0", method=False,
       function=False, inplace=True, saves=(0,), kernel="hardswish_cpu")
def _hardswish(input):
    """``x * relu6(x + 3) / 6``; gradient 0 up to -3, ``x / 3 + 1/2`` on (-3, 3), 1 from 3 (PyTorch's)."""
    x = input.astype(D.opmath(input.dtype))
    three, six = jnp.asarray(3.0, x.dtype), jnp.asarray(6.0, x.dtype)
    nan = jnp.isnan(x)
    # (mid's own gradient at NaN or +-inf, unselected, would be NaN * 0 or inf * 0)
    xm = jnp.where(nan | (jnp.abs(x) >= three), jnp.zeros_like(x), x)
    mid = true_div(xm * (xm + three), six)  # (torch's ``/ 6`` rounded once; XLA's would be ``* (1 / 6)``)
    # x * 0: -0.0 as PyTorch; from 3 torch's ``x * 6 / 6`` (1e30 moves an ulp, 1e38 overflows); NaN takes the
    # identity branch (torch's backward: gradient 1 there)
    return jnp.where(x <= -three, x * 0, jnp.where((x < three) & ~nan, mid, true_div(x * six, six))).astype(input.dtype)


@defop("_hardsigmoid", promote=_float_rule("hardsigmoid_cpu"), grad_fn="HardsigmoidBackward0", method=False,
       function=False, inplace=True, saves=(0,), kernel="hardsigmoid_cpu")
def _hardsigmoid(input):
    """``relu6(x + 3) / 6``; gradient 1/6 strictly inside (-3, 3), else 0 (PyTorch's)."""
    x = input.astype(D.opmath(input.dtype))
    three = jnp.asarray(3.0, x.dtype)
    exact = (x + three) / jnp.asarray(6.0, x.dtype)
    # PyTorch's backward multiplies by 1/6 rounded to float32, in every dtype: the same slope here
    slope = jnp.asarray(_ONE_SIXTH_F32, x.dtype)
    mid = (x + three) * slope + jax.lax.stop_gradient(exact - (x + three) * slope)
    mid = jnp.where(jnp.isnan(x), jax.lax.stop_gradient(mid), mid)  # (torch's gradient is 0 at NaN)
    return jnp.where(x <= -three, jnp.zeros_like(x), jnp.where(x >= three, jnp.ones_like(x), mid)).astype(input.dtype)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.hardswish``."""
    return OPS["_hardswish"].fn_inplace(input) if inplace else _hardswish(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.hardsigmoid``."""
    return OPS["_hardsigmoid"].fn_inplace(input) if inplace else _hardsigmoid(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.mish``: ``x * tanh(softplus(x))`` (the table's ``mish`` op; MishBackward0 in both forms)."""
    return OPS["mish"].fn_inplace(input) if inplace else OPS["mish"].fn(input)


# ---- prelu ----------------------------------------------------------------------------------------------------
def _prelu_rule(op, sig, sargs):
    dt, wdt = sig[0][1], sig[1][1]
    if wdt is not dt:  # (checked before the kernel's dtype: prelu(long, float) names both)
        raise RuntimeError(f"prelu: Type promoting not supported. Got {dt.short} and {wdt.short}")
    if dt.category != D.FLOAT:
        raise no_kernel("prelu_cpu", dt)
    return (None, None), (dt,)


def _prelu_check(targs, sargs):
    x, w = targs
    if len(w._shape) > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {len(w._shape)}")
    n = w.numel()
    channels = x._shape[1] if len(x._shape) >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")


@defop("prelu", required=True, promote=_prelu_rule, grad_fn="PreluKernelBackward0", tensors=2, check=_prelu_check, broadcast=False,
       autocast="lower", kernel="prelu_cpu", out=False)
def prelu(input, weight):
    """``x`` for ``x > 0``, else ``weight * x``; ``weight`` has one value or one per channel (dim 1)."""
    w = weight.reshape(-1)
    if w.shape[0] == 1 or input.ndim < 2:
        w = w.reshape(())
    else:
        w = w.reshape((1, -1) + (1,) * (input.ndim - 2))
    return jnp.where(input > 0, input, w * input)


# ---- glu ------------------------------------------------------------------------------------------------------
def _glu_prep(targs, sargs):
    shape = targs[0]._shape
    if not shape:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(sargs[0], len(shape))
    if shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {shape[d]}")
    return (d,)


@defop("_glu", promote=_float_rule("glu_cpu"), grad_fn="GluBackward0", method=False, function=False, prep=_glu_prep,
       kernel="glu_cpu")
def _glu(input, dim):
    """``a * sigmoid(b)`` with ``a, b`` the two halves of ``input`` along ``dim``."""
    def f(x):  # (float16/bfloat16 in float32, as torch's kernel)
        a, b = jnp.split(x, 2, axis=dim)
        return a * jax.nn.sigmoid(b)
    return D.in_opmath(f)(input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``F.glu``: gated linear unit over ``dim`` (its size must be even)."""
    return _glu(input, dim)


FUNCTIONS = {"selu": selu, "selu_": selu_, "celu": celu, "celu_": celu_}
