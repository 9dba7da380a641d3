"""Elementwise ops: arithmetic, comparison, logical, bitwise, unary math (spec §3, §9)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from . import grad_overrides as _go
from ._registry import defop


# ---- checks ---------------------------------------------------------------------------------------
def _no_bool_sub(op, dt):
    if dt is D.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")


def _no_bool_neg(op, dt):
    if dt is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
                           "a mask, use the `~` or `logical_not()` operator instead.")


def _int_zero_div(targs, sargs):
    """Integer // 0 and % 0 raise on CPU in PyTorch (PRO-22/23); JAX returns garbage."""
    from .._tensor.tensor import Tensor
    a, b = targs[0], targs[1]
    da = a.dtype if isinstance(a, Tensor) else None
    db = b.dtype if isinstance(b, Tensor) else None
    if (da is None or da.category <= D.INT) and (db is None or db.category <= D.INT):
        if isinstance(b, Tensor):
            arr = b._array
            if not isinstance(arr, jax.core.Tracer) and bool(np.any(np.asarray(arr) == 0)):
                raise RuntimeError("ZeroDivisionError")
        elif isinstance(b, (int, np.integer)) and not isinstance(a, (float,)) and b == 0:
            raise RuntimeError("ZeroDivisionError")


def _div_check(targs, sargs):
    if sargs[0] is not None:
        _int_zero_div(targs, sargs)


def _div_prep(targs, sargs):
    rm = sargs[0]
    if rm not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rm}'")
    return sargs


def _pow_check(targs, sargs):
    """An integer tensor to a negative Python int raises (PRO-10); a negative exponent *tensor* does not."""
    from .._tensor.tensor import Tensor
    a, b = targs
    if isinstance(a, Tensor) and a.dtype.category <= D.INT:
        if isinstance(b, (int, np.integer)) and not isinstance(b, bool) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")


def _pow_name(targs, sargs):
    from .._tensor.tensor import Tensor
    a, b = targs
    if not isinstance(a, Tensor):
        return "PowBackward2"
    return "PowBackward1" if isinstance(b, Tensor) else "PowBackward0"


def _rsub_name(targs, sargs):
    from .._tensor.tensor import Tensor
    return "RsubBackward0" if isinstance(targs[1], Tensor) else "RsubBackward1"


# ---- binary arithmetic ----------------------------------------------------------------------------
@defop(promote="elementwise", grad_fn="AddBackward0", tensors=2, inplace=True, saves=())
def add(input, other, *, alpha=1):
    """``input + alpha * other`` with PyTorch's promotion."""
    return input + other if alpha == 1 else input + other * jnp.asarray(alpha, other.dtype)


@defop(promote="elementwise", grad_fn="SubBackward0", tensors=2, inplace=True, check_dtype=_no_bool_sub,
       aliases=("subtract",), saves=())
def sub(input, other, *, alpha=1):
    return input - other if alpha == 1 else input - other * jnp.asarray(alpha, other.dtype)


@defop(promote="elementwise", grad_fn=_rsub_name, tensors=2, method=False, check_dtype=_no_bool_sub, saves=())
def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``1 - x`` gives RsubBackward1)."""
    return other - input if alpha == 1 else other - input * jnp.asarray(alpha, input.dtype)


@defop(promote="elementwise", grad_fn="MulBackward0", tensors=2, inplace=True, aliases=("multiply",))
def mul(input, other):
    return input * other


def _div_rule(op, sig, sargs):
    from .. import _promotion as P
    return (P.rule_float if sargs[0] is None else P.rule_elementwise)(op, sig, sargs)


@defop(promote=_div_rule, broadcast=True, grad_fn="DivBackward0", tensors=2, inplace=True, prep=_div_prep, check=_div_check,
       aliases=("divide",))
def div(input, other, *, rounding_mode=None):
    """True division (int -> default float, PRO-05) or 'trunc' / 'floor' rounding."""
    if rounding_mode is None:
        return input / other
    if rounding_mode == "trunc":
        if jnp.issubdtype(input.dtype, jnp.integer):
            q = jax.lax.div(input, other)  # C semantics: truncation
            return q
        return jnp.trunc(input / other)
    return jnp.floor_divide(input, other)


@defop(promote="float", grad_fn="DivBackward0", tensors=2, inplace=True)
def true_divide(input, other):
    return input / other


@defop(promote="elementwise", grad_fn="FloorDivideBackward0", tensors=2, inplace=True, check=_int_zero_div,
       differentiable=False)
def floor_divide(input, other):
    return jnp.floor_divide(input, other)


@defop(promote="elementwise", grad_fn="RemainderBackward0", tensors=2, inplace=True, check=_int_zero_div)
def remainder(input, other):
    """Python-style modulo (sign of the divisor, PRO-25)."""
    return jnp.remainder(input, other)


@defop(promote="elementwise", grad_fn="FmodBackward0", tensors=2, inplace=True, check=_int_zero_div)
def fmod(input, other):
    return jnp.fmod(input, other)


@defop(promote="pow", grad_fn=_pow_name, tensors=2, inplace=True, check=_pow_check)
def pow(input, exponent):  # noqa: A001
    """``x ** y``; integer ** negative integer follows C integer division (1, +-1 for -1, else 0)."""
    if jnp.issubdtype(input.dtype, jnp.integer) and jnp.issubdtype(exponent.dtype, jnp.integer):
        pos = jnp.power(input, jnp.maximum(exponent, jnp.zeros((), exponent.dtype)))
        one = jnp.ones((), input.dtype)
        neg = jnp.where(input == one, one, jnp.where(input == -one, jnp.where(exponent % 2 == 0, one, -one),
                                                     jnp.zeros((), input.dtype)))
        return jnp.where(exponent < 0, neg, pos)
    return jnp.power(input, exponent)


@defop(promote="elementwise", grad_fn="MaximumBackward0", tensors=2)
def maximum(input, other):
    return jnp.maximum(input, other)


@defop(promote="elementwise", grad_fn="MinimumBackward0", tensors=2)
def minimum(input, other):
    return jnp.minimum(input, other)


@defop(promote="elementwise", grad_fn="FmaxBackward0", tensors=2)
def fmax(input, other):
    return jnp.fmax(input, other)


@defop(promote="elementwise", grad_fn="FminBackward0", tensors=2)
def fmin(input, other):
    return jnp.fmin(input, other)


@defop(promote="float", grad_fn="Atan2Backward0", tensors=2, inplace=True, aliases=("arctan2",))
def atan2(input, other):
    return jnp.arctan2(input, other)


@defop(promote="float", grad_fn="HypotBackward0", tensors=2, inplace=True)
def hypot(input, other):
    return jnp.hypot(input, other)


@defop(promote="elementwise", grad_fn="CopysignBackward0", tensors=2, inplace=True)
def copysign(input, other):
    return jnp.copysign(input, other)


@defop(promote="first", grad_fn="LerpBackward0", tensors=3, inplace=True)
def lerp(input, end, weight):
    return input + weight * (end - input)


@defop(promote="elementwise", grad_fn="XlogyBackward0", tensors=2)
def xlogy(input, other):
    return jax.scipy.special.xlogy(input, other)


# ---- comparison (-> bool, PRO-17) ------------------------------------------------------------
@defop(promote="compare", grad_fn=None, tensors=2, inplace=True, differentiable=False)
def eq(input, other):
    return input == other


@defop(promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("not_equal",))
def ne(input, other):
    return input != other


@defop(promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("less",))
def lt(input, other):
    return input < other


@defop(promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("less_equal",))
def le(input, other):
    return input <= other


@defop(promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("greater",))
def gt(input, other):
    return input > other


@defop(promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("greater_equal",))
def ge(input, other):
    return input >= other


@defop(promote="compare", tensors=2, differentiable=False)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return jnp.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


# ---- logical / bitwise ---------------------------------------------------------------------------
@defop(promote="logical", tensors=2, inplace=True, differentiable=False)
def logical_and(input, other):
    return jnp.logical_and(input != 0, other != 0)


@defop(promote="logical", tensors=2, inplace=True, differentiable=False)
def logical_or(input, other):
    return jnp.logical_or(input != 0, other != 0)


@defop(promote="logical", tensors=2, inplace=True, differentiable=False)
def logical_xor(input, other):
    return jnp.logical_xor(input != 0, other != 0)


@defop(promote="logical", inplace=True, differentiable=False)
def logical_not(input):
    return input == 0


@defop(promote="bitwise", tensors=2, inplace=True, differentiable=False, kernel="bitwise_and_cpu")
def bitwise_and(input, other):
    return input & other


@defop(promote="bitwise", tensors=2, inplace=True, differentiable=False, kernel="bitwise_or_cpu")
def bitwise_or(input, other):
    return input | other


@defop(promote="bitwise", tensors=2, inplace=True, differentiable=False, kernel="bitwise_xor_cpu")
def bitwise_xor(input, other):
    return input ^ other


@defop(promote="bitwise", inplace=True, differentiable=False, kernel="bitwise_not_cpu")
def bitwise_not(input):
    return ~input


@defop(promote="bitwise", tensors=2, inplace=True, differentiable=False, kernel="lshift_cpu")
def bitwise_left_shift(input, other):
    return jnp.left_shift(input, other)


@defop(promote="bitwise", tensors=2, inplace=True, differentiable=False, kernel="rshift_cpu")
def bitwise_right_shift(input, other):
    return jnp.right_shift(input, other)


# ---- unary ------------------------------------------------------------------------------------------
@defop(grad_fn="NegBackward0", inplace=True, check_dtype=_no_bool_neg, aliases=("negative",), saves=())
def neg(input):
    return -input


@defop(grad_fn="AbsBackward0", inplace=True, aliases=("absolute",))
def abs(input):  # noqa: A001
    """|x|; gradient sign(x) (0 at 0) as PyTorch (grad_overrides.abs)."""
    if input.dtype == jnp.bool_ or jnp.issubdtype(input.dtype, jnp.unsignedinteger):
        return input
    return _go.abs(input) if jnp.issubdtype(input.dtype, jnp.floating) else jnp.abs(input)


@defop(grad_fn="SgnBackward0", inplace=True)
def sign(input):
    return jnp.sign(input)


@defop(grad_fn="SgnBackward0")
def sgn(input):
    return jnp.sign(input)


@defop(grad_fn="PositiveBackward0", saves=())
def positive(input):
    return input


def _unary_float(name, fn, grad_fn, saves=("all",), aliases=()):
    def impl(input):
        return fn(input)
    impl.__name__ = name
    impl.__doc__ = f"``torch.{name}``: integer inputs compute in the default float dtype."
    defop(name, promote="float", grad_fn=grad_fn, inplace=True, saves=saves, aliases=aliases)(impl)


for _n, _f, _g, _s in [
    ("exp", jnp.exp, "ExpBackward0", ("result",)), ("exp2", jnp.exp2, "Exp2Backward0", ("result",)),
    ("expm1", jnp.expm1, "Expm1Backward0", ("result",)), ("log", jnp.log, "LogBackward0", ("all",)),
    ("log2", jnp.log2, "Log2Backward0", ("all",)), ("log10", jnp.log10, "Log10Backward0", ("all",)),
    ("log1p", jnp.log1p, "Log1PBackward0", ("all",)), ("sqrt", jnp.sqrt, "SqrtBackward0", ("result",)),
    ("rsqrt", jax.lax.rsqrt, "RsqrtBackward0", ("result",)), ("sin", jnp.sin, "SinBackward0", ("all",)),
    ("cos", jnp.cos, "CosBackward0", ("all",)), ("tan", jnp.tan, "TanBackward0", ("result",)),
    ("asin", jnp.arcsin, "AsinBackward0", ("all",)), ("acos", jnp.arccos, "AcosBackward0", ("all",)),
    ("atan", jnp.arctan, "AtanBackward0", ("all",)), ("sinh", jnp.sinh, "SinhBackward0", ("all",)),
    ("cosh", jnp.cosh, "CoshBackward0", ("all",)), ("tanh", jnp.tanh, "TanhBackward0", ("result",)),
    ("asinh", jnp.arcsinh, "AsinhBackward0", ("all",)), ("acosh", jnp.arccosh, "AcoshBackward0", ("all",)),
    ("atanh", jnp.arctanh, "AtanhBackward0", ("all",)),
    ("sigmoid", jax.nn.sigmoid, "SigmoidBackward0", ("result",)),
    ("erf", jax.scipy.special.erf, "ErfBackward0", ("all",)),
    ("erfc", jax.scipy.special.erfc, "ErfcBackward0", ("all",)),
    ("erfinv", jax.scipy.special.erfinv, "ErfinvBackward0", ("all",)),
    ("reciprocal", jnp.reciprocal, "ReciprocalBackward0", ("result",)),
    ("lgamma", jax.scipy.special.gammaln, "LgammaBackward0", ("all",)),
    ("digamma", jax.scipy.special.digamma, "DigammaBackward0", ("all",)),
]:
    _unary_float(_n, _f, _g, _s)

for _alias, _target in [("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
                        ("arccosh", "acosh"), ("arctanh", "atanh")]:
    from ._registry import _ALIASES
    _ALIASES[_target] = _ALIASES[_target] + (_alias,)


def _int_identity_unary(name, fn, grad_fn):
    def impl(input):
        if jnp.issubdtype(input.dtype, jnp.integer) or input.dtype == jnp.bool_:
            return input
        return fn(input)
    impl.__name__ = name
    defop(name, grad_fn=grad_fn, inplace=True, saves=())(impl)


_int_identity_unary("floor", jnp.floor, "FloorBackward0")
_int_identity_unary("ceil", jnp.ceil, "CeilBackward0")
_int_identity_unary("trunc", jnp.trunc, "TruncBackward0")


@defop(grad_fn="FracBackward0", inplace=True, saves=())
def frac(input):
    return input - jnp.trunc(input)


@defop(grad_fn="RoundBackward0", inplace=True, saves=())
def round(input, *, decimals=0):  # noqa: A001
    """Round half to even, as PyTorch."""
    if jnp.issubdtype(input.dtype, jnp.integer):
        return input
    return jnp.round(input, decimals)


@defop(grad_fn="PowBackward0", inplace=True)
def square(input):
    return input * input


@defop(grad_fn="ReluBackward0", inplace=True, saves=("result",))
def relu(input):
    """max(x, 0); gradient 0 at 0 as PyTorch (grad_overrides.relu)."""
    if input.dtype == jnp.bool_:
        return input
    return _go.relu(input)


@defop(promote="float_only", grad_fn="GeluBackward0", kernel="GeluKernelImpl", method=True)
def gelu(input, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return jax.nn.gelu(input, approximate=(approximate == "tanh"))


@defop(promote="float_only", grad_fn="SiluBackward0", kernel="silu")
def silu(input):
    return jax.nn.silu(input)


@defop(promote="float_only", grad_fn="MishBackward0", kernel="mish")
def mish(input):
    return input * jnp.tanh(jax.nn.softplus(input))


@defop(promote="logical", differentiable=False)
def isnan(input):
    return jnp.isnan(input)


@defop(promote="logical", differentiable=False)
def isinf(input):
    return jnp.isinf(input)


@defop(promote="logical", differentiable=False)
def isfinite(input):
    return jnp.isfinite(input)


@defop(promote="logical", differentiable=False)
def isposinf(input):
    return jnp.isposinf(input)


@defop(promote="logical", differentiable=False)
def isneginf(input):
    return jnp.isneginf(input)


@defop(promote="logical", differentiable=False)
def signbit(input):
    return jnp.signbit(input)


@defop(grad_fn="NanToNumBackward0", inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return jnp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


# ---- clamp / where / masked_fill -------------------------------------------------------------------
def _clamp_prep(targs, sargs):
    if targs[1] is None and targs[2] is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return sargs


def _clamp_rule(op, sig, sargs):
    from .. import _promotion as P
    return P.rule_elementwise(op, sig, sargs)


@defop(promote=_clamp_rule, broadcast=True, grad_fn="ClampBackward1", tensors=3, inplace=True, prep=_clamp_prep,
       aliases=("clip",))
def clamp(input, min=None, max=None):  # noqa: A002
    """``clamp(x, min, max)``: PyTorch's gradient passes where min <= x <= max (bounds included)."""
    if min is not None and max is not None:
        return _go.clamp(input, min, max)
    if min is not None:
        return _go.clamp_min(input, min)
    return _go.clamp_max(input, max)


@defop(promote="elementwise", grad_fn="ClampMinBackward0", tensors=2, inplace=True)
def clamp_min(input, min):  # noqa: A002
    return _go.clamp_min(input, min)


@defop(promote="elementwise", grad_fn="ClampMaxBackward0", tensors=2, inplace=True)
def clamp_max(input, max):  # noqa: A002
    return _go.clamp_max(input, max)


def _where_check(targs, sargs):
    from .._tensor.tensor import Tensor
    c = targs[0]
    if isinstance(c, Tensor) and c.dtype is not D.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {c.dtype.short}")


@defop(promote="where", grad_fn="WhereBackward0", tensors=3, check=_where_check, method=False)
def where(condition, input, other):
    return jnp.where(condition, input, other)


def _mask_check(targs, sargs):
    from .._tensor.tensor import Tensor
    m = targs[1]
    if isinstance(m, Tensor) and m.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {m.dtype.short}")
    v = targs[2]
    if isinstance(v, Tensor) and v._shape:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{len(v._shape)} dimension(s).")


def _masked_fill_rule(op, sig, sargs):
    dt = sig[0][1]
    return (None, None, dt), (dt,)


@defop(promote=_masked_fill_rule, broadcast=True, grad_fn="MaskedFillBackward0", tensors=3, inplace=True, check=_mask_check)
def masked_fill(input, mask, value):
    return jnp.where(mask, value, input)
