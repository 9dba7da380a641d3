"""Elementwise ops: arithmetic, comparison, logical, bitwise, unary math (spec §3, §9)."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _promotion as P
from .. import dtypes as D
from . import grad_overrides as _go
from ._registry import defop, saves_for
from ._rounding import true_div
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from .._symbolic import SymNumber
from .._warn import warn_once
from .reduction import no_wide_unsigned as _no_wide_unsigned
from ._dispatch import _not_a_tensor, scalar_arg, stored_half as _stored_half


# ---- checks ---------------------------------------------------------------------------------------
def _no_bool(op, dt):
    """Ops without a Bool kernel: PyTorch's ``"<kernel>" not implemented for 'Bool'``."""
    if dt is D.bool:
        P._no_kernel(op, dt)


def _raise_on(pred, exc, msg):
    """A ``check_dtype`` hook raising ``exc(msg)`` when ``pred(dt)`` (PyTorch's op-specific messages)."""
    def check(op, dt):
        if pred(dt):
            raise exc(msg)
    return check


def _wide_unsigned_rule(kernel_of, base=P.rule_elementwise):
    """``base`` where a uint16/uint32/uint64 result raises for the kernel ``kernel_of(sig)`` names (torch's fmax
    on integers is its maximum; a tensor bound clamps with maximum/minimum/clamp_cpu): promotion errors first."""
    def rule(op, sig, sargs):
        dt = P._common(op, sig, wide_ok=True)
        if dt in D.UNSIGNED_WIDE:
            raise no_kernel(kernel_of(sig), dt)
        return base(op, sig, sargs)
    return rule


def _tensors_only(base):
    """``base``, for ops whose schema takes only tensors (``maximum(x, 2.0)``): a Python number raises the argument
    parser's TypeError. A dtype rule, so it runs once per signature: nothing on the success path."""
    rule = P.RULES[base] if isinstance(base, str) else base

    def r(op, sig, sargs):
        for i, s in enumerate(sig):
            if type(s) is not tuple:
                raise _not_a_tensor(op, i, None if s is None else s())  # (the signature holds a number's type)
        return rule(op, sig, sargs)
    return r


def _no_int(op, dt):
    """Floating/complex-only kernels (frac): bool and integers raise."""
    if dt.category <= D.INT:
        P._no_kernel(op, dt)


def _guarded(base, bad):
    """A dtype rule: ``base`` (a RULES name or rule), then ``bad(op, out_dtype, sig, sargs)`` may raise."""
    rule = P.RULES[base] if isinstance(base, str) else base

    def r(op, sig, sargs):
        casts, outs = rule(op, sig, sargs)
        bad(op, outs[0], sig, sargs)
        return casts, outs
    return r


def _sub_rule(op, sig, sargs):
    """PRO-15: any bool operand of ``-`` raises (Python ``True`` counts as a bool tensor)."""
    dts = [dt for _, dt in P._entries(sig)]
    if all(dt is D.bool for dt in dts):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if any(dt is D.bool for dt in dts):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return P.rule_elementwise(op, sig, sargs)


def _no_bool_neg(op, dt):
    if dt is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
                           "a mask, use the `~` or `logical_not()` operator instead.")
    _no_wide_unsigned(op, dt)


def _no_bool_abs(op, dt):
    _no_bool(op, dt)
    _no_wide_unsigned(op, dt)


def _int_zero_div(targs, sargs):
    """Integer // 0 and % 0 raise on CPU in PyTorch (PRO-22/23); JAX returns garbage."""
    from .._tensor.tensor import Tensor
    a, b = targs[0], targs[1]
    da = a.dtype if isinstance(a, Tensor) else None
    db = b.dtype if isinstance(b, Tensor) else None
    if isinstance(a, (float, complex)) or type(a) is SymNumber and a._t is float:  # (2.5 // int_t: a float result)
        return
    if (da is None or da.category <= D.INT) and (db is None or db.category <= D.INT):
        if isinstance(b, Tensor):
            arr = b._array
            if not isinstance(arr, jax.core.Tracer) and bool(np.any(np.asarray(arr) == 0)):
                raise RuntimeError("ZeroDivisionError")
        elif isinstance(b, (int, np.integer)) and not isinstance(a, (float,)) and b == 0:
            raise RuntimeError("ZeroDivisionError")
        elif type(b) is SymNumber and b._t is not float and b == 0:  # (a dynamic int: a branch on it being 0)
            raise RuntimeError("ZeroDivisionError")


class _NoMode:
    """``div``'s rounding_mode when not passed (PyTorch's ``div.Tensor`` overload; any passed value, None included,
    is ``div.Tensor_mode``, whose grad_fn is DivBackward2): behaves as None."""

    def __repr__(self):
        return "None"


_NO_MODE = _NoMode()


def _div_check(targs, sargs):
    if sargs[0] is not None and sargs[0] is not _NO_MODE:
        _int_zero_div(targs, sargs)


def _div_prep(targs, sargs):
    rm = sargs[0]
    if rm is not _NO_MODE and rm not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rm}'")
    return sargs


def _pow_check(targs, sargs):
    """An integer tensor to a negative Python int raises (PRO-10); a negative exponent *tensor* does not."""
    from .._tensor.tensor import Tensor
    a, b = targs
    if isinstance(a, Tensor) and a.dtype.category <= D.INT:
        if isinstance(b, (int, np.integer)) and not isinstance(b, bool) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if type(b) is SymNumber and b._t is int and b < 0:  # (a dynamic int: a branch on its sign)
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(a, Tensor) and a.dtype in (D.float32, D.float64) and isinstance(b, float):
        return  # (torch's float / double pow keeps a float exponent a double: x ** 1e40 is 0 or inf; a half one
        #         converts it, with the overflow check)
    D.check_scalar_arg(a, b)


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
def _reduced_opmath(base):
    """A dtype rule for ``mul``/``div``: ``base``, and for a float16/bfloat16 result whose second operand is a
    Python scalar or a 0-d tensor, torch's ``mul_cpu_reduced_float``/``div_cpu_reduced_float`` kernels: both
    operands enter at float32 (the scalar rounded to float32, not to float16) and the float32 result is rounded
    once to the result dtype (``x.half() * 0.1`` multiplies by float32(0.1); add/sub round the scalar to the
    tensor's dtype, as the base rule does). A Python scalar first (``0.1 * x``) is torch's ``x.mul(0.1)``; a 0-d
    tensor first is not that kernel's scalar (it is rounded to the result dtype)."""
    rule = P.RULES[base] if isinstance(base, str) else base

    def r(op, sig, sargs):
        casts, outs = rule(op, sig, sargs)
        if outs[0] in (D.float16, D.bfloat16) and (type(sig[1]) is not tuple or sig[1][0] == 0
                                                    or type(sig[0]) is not tuple):
            casts = (D.float32, D.float32) + tuple(casts[2:])
        return casts, outs
    return r


def _alpha(alpha, dt):
    """alpha in an operand's dtype; a negative alpha wraps into an unsigned one (uint8: -1 is 255), as in PyTorch.
    A float alpha is traced (the ops' ``traced``): one kernel for every value."""
    if dt.kind == "u":
        return np.asarray(alpha).astype(dt) if isinstance(alpha, (int, float)) else \
            jnp.asarray(alpha).astype(jnp.int64).astype(dt)
    return jnp.asarray(alpha, dt)


def _unit(alpha) -> bool:
    """alpha is the static 1 (a traced alpha is never skipped)."""
    return type(alpha) in (int, bool, float) and alpha == 1


def _scaled(x, alpha):
    """``alpha * x`` as PyTorch's add / sub kernels form it. Complex: a complex product even where alpha is 1
    (PyTorch computes ``a + alpha * b``: an inf part of ``b`` makes a nan part, ``(1+0j) + (inf+0j)`` is inf+nanj),
    written out on the parts, since XLA folds a multiply by the constant 1+0j away."""
    if x.dtype.kind == "c":
        a = _alpha(alpha, x.dtype)
        ar, ai, xr, xi = jnp.real(a), jnp.imag(a), jnp.real(x), jnp.imag(x)
        return jax.lax.complex(xr * ar - xi * ai, xr * ai + xi * ar)
    return x if _unit(alpha) else x * _alpha(alpha, x.dtype)


def _minus(a, b, alpha):
    """``a - alpha * b`` as PyTorch's sub kernel forms it: ``a + (-alpha) * b`` where complex (its signed zeros)."""
    return a + _scaled(b, -alpha) if b.dtype.kind == "c" else a - _scaled(b, alpha)


def _alpha_prep(targs, sargs):
    """``alpha`` takes the result's dtype: it must fit in it (``int8.add(y, alpha=300)`` raises), and may not
    be a float for an integral result."""
    alpha = sargs[0]
    if isinstance(alpha, Tensor):  # (a 0-d tensor: its number, which the kernel's key then holds, not the tensor)
        alpha = scalar_arg(alpha, "add", "alpha")
        sargs = (alpha,) + tuple(sargs[1:])
    if type(alpha) is not int or alpha != 1:  # (the default int 1 passes; a compiled function's dynamic alpha: no
        # branch on its value; a float / bool / complex alpha is checked even when it equals 1)
        r = P.result_type_sig(P._entries(tuple((len(t._shape), t.dtype) if hasattr(t, "_storage") else type(t)
                                               for t in targs)))
        cat = D.scalar_category(alpha)
        if cat == D.BOOL and r is not D.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
        if r.category <= D.INT and cat >= D.FLOAT:
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
        if r.category < D.COMPLEX and cat == D.COMPLEX:
            raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
        if cat <= r.category:
            D.check_fits(alpha, r)
    return sargs


@defop(promote="elementwise", grad_fn="AddBackward0", tensors=2, inplace=True, saves=(), prep=_alpha_prep,
       traced=("alpha",))
def add(input, other, *, alpha=1):
    """``input + alpha * other`` with PyTorch's promotion."""
    return input + _scaled(other, alpha)


@defop(kernel="add_stub", promote=_sub_rule, broadcast=True, grad_fn="SubBackward0", tensors=2, inplace=True,
       aliases=("subtract",), saves=(), prep=_alpha_prep, traced=("alpha",))
def sub(input, other, *, alpha=1):
    return _minus(input, other, alpha)


@defop(kernel="add_stub", promote=_sub_rule, broadcast=True, grad_fn=_rsub_name, tensors=2, method=False, saves=(),
       prep=_alpha_prep, traced=("alpha",), out=False)
def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``1 - x`` gives RsubBackward1)."""
    return _minus(other, input, alpha)


_MUL_SAVES = saves_for(((1,), 0), ((0,), 1))  # (mul saves other when self needs grad, self when other does)
_DIV_SAVES = saves_for(((0,), 1), always=(1,))  # (self: grad / other; other: -grad * self / other**2)
_MOD_SAVES = saves_for(((0, 1), 1))  # (remainder/fmod: self's gradient is grad; other's reads both)


def _float8_by_operands(tensors, number, reflected=False):
    """A ``float8`` rule: the kernel PyTorch lacks (None: it has one) for two tensors / with a Python number or a
    0-dim tensor as ``other`` (torch's CPU kernel takes a one-element second operand as a scalar, its
    ``*_reduced_float`` path: ``f8 * tensor(2.)`` raises where ``tensor(2.) * f8`` computes). A number first is
    a 0-dim tensor first (``torch.div(2, f8)``: ``div_cpu``); ``reflected``: as ``2 * f8`` is, ``f8.mul(2)``."""
    if reflected:
        return lambda sig: tensors if all(type(s) is tuple for s in sig) and sig[1][0] else number
    return lambda sig: _float8_kernel(sig, tensors, number)


def _float8_kernel(sig, tensors, number):
    return tensors if type(sig[1]) is tuple and sig[1][0] else number


@defop(promote=_reduced_opmath("elementwise"), broadcast=True, grad_fn="MulBackward0", tensors=2, inplace=True,
       aliases=("multiply",), saves=_MUL_SAVES, float8=_float8_by_operands(None, "mul_cpu_reduced_float", reflected=True))
def mul(input, other):
    return input * other


def _div_rule(op, sig, sargs):
    rm = sargs[0]
    if rm is None or rm is _NO_MODE:
        return P.rule_float(op, sig, sargs)
    casts, outs = P.rule_elementwise(op, sig, sargs)
    if outs[0] is D.bool or outs[0] in D.UNSIGNED_WIDE or outs[0].is_complex:
        # (div is in the wide-unsigned list, its rounding modes not; they have no complex kernel)
        raise no_kernel(f"div_{rm}_cpu", outs[0])
    if outs[0] in D.FLOAT8:  # (the op's float8 rule cannot see the mode: torch's rounding kernels are its own)
        raise no_kernel(_float8_kernel(sig, f"div_{rm}_cpu", f"div_{rm}_cpu_reduced_float"), outs[0])
    return casts, outs


def _div_name(targs, sargs):
    """``div.Tensor_mode``'s node whenever a rounding mode is passed (even None); ``div.Tensor``'s otherwise."""
    return "DivBackward0" if sargs[0] is _NO_MODE else "DivBackward2"


def _rounding(rounding_mode):
    return None if rounding_mode is _NO_MODE else rounding_mode


@defop(kernel="div_cpu", promote=_reduced_opmath(_div_rule), broadcast=True, grad_fn=_div_name, tensors=2, inplace=True,
       prep=_div_prep, check=_div_check, saves=_DIV_SAVES, float8=_float8_by_operands("div_cpu", "div_cpu_reduced_float"),
       aliases=("divide",))
def div(input, other, *, rounding_mode=_NO_MODE):
    """True division (int -> default float, PRO-05), rounded once as torch's (``_rounding.true_div``), or 'trunc' /
    'floor' rounding."""
    rounding_mode = _rounding(rounding_mode)
    if rounding_mode is None:
        return true_div(input, other)
    if rounding_mode == "trunc":
        if jnp.issubdtype(input.dtype, jnp.integer):
            return jax.lax.div(*jnp.broadcast_arrays(input, other))  # C semantics: truncation
        return jnp.trunc(true_div(input, other))
    return _floor_div(input, other)


@defop(kernel="div_cpu", promote=_reduced_opmath("float"), broadcast=True, grad_fn="DivBackward0", tensors=2, inplace=True,
       saves=_DIV_SAVES, float8=_float8_by_operands("div_cpu", "div_cpu_reduced_float"))
def true_divide(input, other):
    return true_div(input, other)


_FLOOR_DIVIDE_NO_GRAD = _go.aten_no_derivative("floor_divide")


def _floor_div(input, other):
    """PyTorch's div_floor (``floor_divide`` and ``div(rounding_mode='floor')``): rounding toward -inf, a zero
    quotient taking the sign of a / b (0. // -2. == -0., -0. // -2. == +0.)."""
    r = jnp.floor_divide(input, other)
    if not jnp.issubdtype(r.dtype, jnp.floating):
        return r
    return jnp.where(r == 0, jnp.copysign(jnp.zeros((), r.dtype), jnp.true_divide(input, other)), r)


@defop(promote="elementwise", grad_fn="NotImplemented", tensors=2, inplace=True, check=_int_zero_div,
       check_dtype=_no_bool, kernel="div_floor_cpu", saves=(),
       float8=_float8_by_operands("div_floor_cpu", "div_floor_cpu_reduced_float"))
def floor_divide(input, other):
    """``a // b`` (rounding toward -inf). PyTorch has no derivative for it: a floating result records a grad_fn
    (``NotImplemented``) whose backward raises."""
    r = _floor_div(input, other)
    if not jnp.issubdtype(r.dtype, jnp.floating):
        return r
    return _FLOOR_DIVIDE_NO_GRAD(jax.lax.stop_gradient(r), *[a for a in (input, other) if isinstance(a, jax.Array)])


def _remainder_name(targs, sargs):
    """torch's three overloads: Tensor-Tensor (``RemainderBackward1``), Tensor-Scalar (``RemainderBackward0``)
    and Scalar-Tensor (``7 % x``: no derivative, ``NotImplemented``, whose backward raises)."""
    from .._tensor.tensor import Tensor
    if not isinstance(targs[0], Tensor):
        return "NotImplemented"
    return "RemainderBackward1" if isinstance(targs[1], Tensor) else "RemainderBackward0"


@defop(promote="elementwise", grad_fn=_remainder_name, tensors=2, inplace=True, check=_int_zero_div,
       check_dtype=_no_bool, kernel="remainder_cpu", saves=_MOD_SAVES)
def remainder(input, other):
    """Python-style modulo (sign of the divisor, PRO-25); floating Tensor-Tensor: torch's derivative
    (``_float_remainder``)."""
    if isinstance(other, jax.Array) and jnp.issubdtype(other.dtype, jnp.floating):
        return _float_remainder(input, other)
    return jnp.remainder(input, other)


@jax.custom_jvp
def _float_remainder(a, b):
    return jnp.remainder(a, b)


@_float_remainder.defjvp
def _float_remainder_jvp(primals, tangents):
    """torch's RemainderBackward1: ``grad`` for ``a``, ``-grad * a.div(b, rounding_mode='floor')`` for ``b`` (the
    exact floor division, whose own derivative is zero), where JAX's derivative truncates the true quotient
    ``a / b`` (one off when it rounds onto an integer: 5 / 0.2 is 25.0, the floor division 24)."""
    a, b = primals
    ta, tb = tangents
    out = jnp.remainder(a, b)
    q = jax.lax.stop_gradient(_floor_div(a, b))
    return out, jnp.broadcast_to(ta - tb * q, out.shape).astype(out.dtype)


@defop(promote="elementwise", grad_fn=lambda targs, sargs: "FmodBackward1" if isinstance(targs[1], Tensor) else
       "FmodBackward0", tensors=2, inplace=True, check=_int_zero_div, check_dtype=_no_bool, kernel="fmod_cpu",
       saves=_MOD_SAVES)
def fmod(input, other):
    return jnp.fmod(input, other)


def _pow_bool(op, dt, sig, sargs):
    """Bool has no pow kernel, except a bool tensor to a Python bool (``x ** True`` is x, ``** False`` ones)."""
    if dt is D.bool and not (type(sig[0]) is tuple and sig[1] is bool):
        P._no_kernel(op, dt)


def _int_power(base, exp):
    """``base ** exp`` for integers (``exp >= 0``) by squaring over every bit of ``exp``, wrapping as C does
    (XLA's integer power looks at the exponent's low 6 bits only: ``2 ** 64`` was 1, not 0)."""
    base, exp = jnp.broadcast_arrays(base, exp.astype(base.dtype))

    def step(_, c):
        r, b, e = c
        return jnp.where((e & 1) == 1, r * b, r), b * b, e >> 1
    one = jnp.ones_like(base)
    return jax.lax.fori_loop(0, 8 * base.dtype.itemsize, step, (one, base, exp))[0]


def _pow_rule(op, sig, sargs):
    """``pow``'s promotion; a complex tensor to a real Python number takes the number in the real counterpart
    dtype (exact: it is an integer or a double), which tells the kernel it is torch's ``pow(Tensor, Scalar)``
    with its exact special exponents (a 0-d tensor exponent is the generic ``pow(Tensor, Tensor)``)."""
    casts, outs = _guarded("pow", _pow_bool)(op, sig, sargs)
    if outs[0].is_complex and type(sig[0]) is tuple and sig[1] in (int, float):
        casts = (casts[0], D.float64 if outs[0] is D.complex128 else D.float32) + tuple(casts[2:])
    elif outs[0] in (D.float32, D.float64, D.bfloat16) and type(sig[0]) is tuple and sig[1] in (int, float):
        # a real Python number exponent reaches the kernel as complex128 (exact): torch's ``pow(Tensor, Scalar)``,
        # with its special exponents (grad_overrides.pow_scalar); float16's is plain ``std::pow``
        casts = (casts[0], D.complex128) + tuple(casts[2:])
    return casts, outs


@defop(promote=_pow_rule, broadcast=True, grad_fn=_pow_name,
       tensors=2, inplace=True, check=_pow_check, kernel="pow", autocast={"cuda": "fp32"})
def pow(input, exponent):  # noqa: A001
    """``x ** y``; integer ** negative integer follows C integer division (1, +-1 for -1, else 0)."""
    if input.dtype == jnp.bool_:  # bool ** Python bool only (see _pow_bool)
        return input | ~exponent
    if jnp.issubdtype(input.dtype, jnp.integer) and jnp.issubdtype(exponent.dtype, jnp.integer):
        pos = _int_power(input, jnp.maximum(exponent, jnp.zeros((), exponent.dtype)))
        one = jnp.ones((), input.dtype)
        neg = jnp.where(input == one, one, jnp.where(input == -one, jnp.where(exponent % 2 == 0, one, -one),
                                                     jnp.zeros((), input.dtype)))
        return jnp.where(exponent < 0, neg, pos)
    if jnp.iscomplexobj(exponent) and not jnp.iscomplexobj(input):  # a real Python number exponent (_pow_rule)
        return _go.pow_scalar(input, jnp.real(exponent))
    if jnp.iscomplexobj(input) and not jnp.iscomplexobj(exponent):
        # a real Python number exponent (_pow_rule): torch's exact 0, 1, 2, 3, -1, -2, 0.5, -0.5
        return _go.cpow_scalar(input, exponent.astype(input.dtype))
    r = _go.pow(input, exponent)
    if jnp.iscomplexobj(r):
        r = _go.cpow_zero_base(r, input, exponent)  # (0 ** y by C99's rules: XLA gives NaN or 1)
    return r


@defop(kernel="maximum_cpu", promote=_tensors_only("elementwise"), broadcast=True, grad_fn="MaximumBackward0",
       tensors=2)
def maximum(input, other):
    """torch's gradient: half each at a tie, the whole to both at a NaN (grad_overrides.maximum)."""
    return _go.maximum(input, other) if jnp.issubdtype(input.dtype, jnp.inexact) else jnp.maximum(input, other)


@defop(kernel="minimum_cpu", promote=_tensors_only("elementwise"), broadcast=True, grad_fn="MinimumBackward0",
       tensors=2)
def minimum(input, other):
    return _go.minimum(input, other) if jnp.issubdtype(input.dtype, jnp.inexact) else jnp.minimum(input, other)


@defop(kernel="fmax_cpu", promote=_tensors_only(_wide_unsigned_rule(lambda sig: "maximum_cpu")), broadcast=True,
       grad_fn="FmaxBackward0", tensors=2)
def fmax(input, other):
    """NaN-ignoring maximum; at a tie the gradient goes to ``input`` (grad_overrides.fmax)."""
    return _go.fmax(input, other) if jnp.issubdtype(input.dtype, jnp.floating) else jnp.fmax(input, other)


@defop(kernel="fmin_cpu", promote=_tensors_only(_wide_unsigned_rule(lambda sig: "minimum_cpu")), broadcast=True,
       grad_fn="FminBackward0", tensors=2)
def fmin(input, other):
    """NaN-ignoring minimum; at a tie the gradient goes to ``input`` (grad_overrides.fmin)."""
    return _go.fmin(input, other) if jnp.issubdtype(input.dtype, jnp.floating) else jnp.fmin(input, other)


@defop(kernel="atan2_cpu", promote=_tensors_only("float"), broadcast=True, grad_fn="Atan2Backward0", tensors=2,
       inplace=True, aliases=("arctan2",), autocast={"cuda": "promote"})
def atan2(input, other):
    return _go.atan2(input, other)


@defop(promote=_tensors_only("elementwise"), broadcast=True, grad_fn="HypotBackward0", tensors=2, inplace=True,
       kernel="hypot_cpu",
       saves=saves_for(((0,), 0), ((1,), 1), always=("result",)),
       check_dtype=lambda op, dt: dt.category != D.FLOAT and P._no_kernel(op, dt))
def hypot(input, other):
    """Floating inputs only (integers and bool raise, as PyTorch's ``hypot_cpu``)."""
    return _go.hypot(input, other)


@defop(kernel="copysign_cpu", promote="float", grad_fn="CopysignBackward0", tensors=2, inplace=True,
       saves=saves_for(((0, "result"), 0)))
def copysign(input, other):
    """int/bool inputs give the default float dtype; gradient 0 at ``input == 0``."""
    return _go.copysign(input, other)


def _lerp_rule(op, sig, sargs):
    """end/weight tensors must have input's dtype; integer and bool inputs have no kernel."""
    if type(sig[0]) is not tuple:
        return P.rule_first_promote(op, sig, sargs)
    dt = sig[0][1]
    for name, s in (("end", sig[1]), ("weight", sig[2])):
        if name == "weight" and type(s) is tuple and s[0] == 0:
            continue  # a 0-d weight tensor of any dtype is taken, as PyTorch does
        if type(s) is tuple and s[1] is not dt:
            raise RuntimeError(f"expected dtype {P._cname(dt)} for `{name}` but got dtype {P._cname(s[1])}")
    if dt.category <= D.INT:
        kernel = "lerp_kernel_tensor" if type(sig[2]) is tuple else "lerp_kernel_scalar"
        raise no_kernel(kernel, dt)
    casts, outs = P.rule_first_promote(op, sig, sargs)
    return (casts[:2] + (None,) if type(sig[2]) is not tuple else casts), outs  # a number weight stays exact


_LERP_SAVES = saves_for(((0, 1), 2), always=(2,))


def _lerp_check(targs, sargs):
    """A number weight is converted to the input's opmath type, checked (torch's ``weight.to<opmath_t>()``): 1e40
    raises for float32 and the half types."""
    a, w = targs[0], targs[2]
    if not isinstance(w, Tensor) and isinstance(a, Tensor) and a.dtype in (D.float32, D.float16, D.bfloat16):
        D.check_fits(w, D.float32)


@defop(kernel="lerp_kernel_tensor", promote=_lerp_rule, broadcast=True, tensors=3, check=_lerp_check,
       grad_fn=lambda targs, sargs: "LerpBackward1" if isinstance(targs[2], Tensor) else "LerpBackward0",
       inplace=True, saves=lambda targs: _LERP_SAVES(targs) if isinstance(targs[2], Tensor) else ())
def lerp(input, end, weight):
    """PyTorch's formula, in opmath: ``input + w * (end - input)`` for ``|w| < 0.5``, else
    ``end - (end - input) * (1 - w)`` (exact at w = 1; a weight beyond float16's range stays finite)."""
    ot = D.opmath(input.dtype)
    a, b = input.astype(ot), end.astype(ot)
    w = jnp.asarray(weight).astype(ot)
    diff = b - a
    return jnp.where(jnp.abs(w) < 0.5, a + w * diff, b - diff * (1 - w)).astype(input.dtype)


def _xlogy_name(targs, sargs):
    """XlogyBackward0 for two tensors; 1 when ``self`` is a Python number, 2 when ``other`` is (PyTorch's)."""
    if not isinstance(targs[0], Tensor):
        return "XlogyBackward1"
    return "XlogyBackward0" if isinstance(targs[1], Tensor) else "XlogyBackward2"


@defop(kernel="xlogy_cpu", promote="float", grad_fn=_xlogy_name, tensors=2)
def xlogy(input, other):
    """``x * log(y)`` (0 where x == 0); int/bool inputs give the default float dtype."""
    return _go.xlogy(input, other)


# ---- comparison (-> bool, PRO-17) ------------------------------------------------------------
@defop(float8=True, promote="compare", grad_fn=None, tensors=2, inplace=True, differentiable=False)
def eq(input, other):
    return input == other


@defop(float8=True, promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("not_equal",))
def ne(input, other):
    return input != other


@defop(kernel="lt_cpu", promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("less",))
def lt(input, other):
    return input < other


@defop(kernel="le_cpu", promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("less_equal",))
def le(input, other):
    return input <= other


@defop(kernel="gt_cpu", promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("greater",))
def gt(input, other):
    return input > other


@defop(kernel="ge_cpu", promote="compare", tensors=2, inplace=True, differentiable=False, aliases=("greater_equal",))
def ge(input, other):
    return input >= other


def _isclose_prep(targs, sargs):
    """torch's checks: one dtype for both tensors, tolerances not negative."""
    from .._tensor.tensor import Tensor
    a, b = targs
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is not b.dtype:
        raise RuntimeError(f"{a.dtype.short} did not match {b.dtype.short}")
    sargs = tuple(scalar_arg(v, "isclose", k, "float") for v, k in zip(sargs[:2], ("rtol", "atol"))) + sargs[2:]
    for name, v in zip(("rtol", "atol"), sargs[:2]):
        if v < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v:g}")
    return sargs


@defop(kernel="mul_cpu_reduced_float", promote="compare", tensors=2, differentiable=False, prep=_isclose_prep,
       out=False)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return jnp.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)



def _isin_prep(targs, sargs):
    from .._tensor.tensor import Tensor
    if not any(isinstance(t, Tensor) for t in targs):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(targs[0]).__name__}, "
                        f"{type(targs[1]).__name__}), but expected one of: (Tensor elements, Tensor test_elements), "
                        "(Number element, Tensor test_elements), (Tensor elements, Number test_element)")
    return sargs


def _isin_rule(op, sig, sargs):
    """Both operands are compared in their common dtype (``isin(int, 2.5)`` is all False); Bool is refused."""
    casts, outs = P.rule_compare(op, sig, sargs)
    if any(type(s) is tuple and s[1] is D.bool for s in sig):  # either operand a bool tensor
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    if casts[0] is D.bool or casts[0].is_complex:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {casts[0].short}")
    return casts, outs


@defop(kernel="isin_default_cpu", promote=_isin_rule, broadcast=False, tensors=2, method=False, differentiable=False,
       prep=_isin_prep, function=False)  # (torch.isin: set_ops.isin, for its three overloads' keyword names)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (shape of ``elements``; scalars allowed)."""
    return jnp.isin(elements, test_elements, invert=invert)


# ---- logical / bitwise ---------------------------------------------------------------------------
def _logical_rule(op, sig, sargs):
    """Bool results; a uint16/uint32/uint64 operand has no kernel, after the promotion check (float8's too)."""
    if any(type(s) is tuple and (s[1] in D.UNSIGNED_WIDE or s[1] in D.FLOAT8) for s in sig):
        P._common(op, sig)
    return P.rule_logical(op, sig, sargs)


@defop(kernel="logical_and_cpu", promote=_logical_rule, broadcast=True, tensors=2, inplace=True, differentiable=False)
def logical_and(input, other):
    return jnp.logical_and(input.astype(bool), other.astype(bool))


@defop(kernel="logical_or_cpu", promote=_logical_rule, broadcast=True, tensors=2, inplace=True, differentiable=False)
def logical_or(input, other):
    return jnp.logical_or(input.astype(bool), other.astype(bool))


@defop(kernel="logical_xor_cpu", promote=_logical_rule, broadcast=True, tensors=2, inplace=True, differentiable=False)
def logical_xor(input, other):
    return jnp.logical_xor(input.astype(bool), other.astype(bool))


@defop(kernel="logical_not_cpu", promote=_logical_rule, broadcast=True, inplace=True, differentiable=False)
def logical_not(input):
    return jnp.logical_not(input.astype(bool))


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


@defop(promote=_guarded("bitwise", lambda op, dt, sig, sargs: _no_bool(op, dt)), broadcast=True, tensors=2,
       inplace=True, differentiable=False, kernel="lshift_cpu")
def bitwise_left_shift(input, other):
    return jnp.left_shift(input, other)


@defop(promote=_guarded("bitwise", lambda op, dt, sig, sargs: _no_bool(op, dt)), broadcast=True, tensors=2,
       inplace=True, differentiable=False, kernel="rshift_cpu")
def bitwise_right_shift(input, other):
    return jnp.right_shift(input, other)


# ---- unary ------------------------------------------------------------------------------------------
@defop(kernel="neg_cpu", grad_fn="NegBackward0", inplace=True, check_dtype=_no_bool_neg, aliases=("negative",),
       saves=())
def neg(input):
    return -input


def _abs_rule(op, sig, sargs):
    """|z| of a complex tensor is real (complex64 -> float32), as PyTorch; other dtypes keep theirs."""
    dt = sig[0][1] if type(sig[0]) is tuple else None
    if dt is not None and dt.is_complex:
        return (None,), (dt.to_real(),)
    from .._promotion import rule_same
    return rule_same(op, sig, sargs)


def _abs_inplace(targs, sargs):
    """``abs_``: a complex tensor can't hold its real result (torch's own message, before anything else)."""
    if targs[0].dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")


@defop(float8=True, promote=_abs_rule, grad_fn="AbsBackward0", inplace=_abs_inplace, aliases=("absolute",),
       check_dtype=_no_bool_abs,
       kernel="abs_cpu")
def abs(input):  # noqa: A001
    """|x|; gradient sign(x) (0 at 0) as PyTorch (grad_overrides.abs). A complex |z| is hypot's: inf where a part is
    infinite, the other NaN (JAX: NaN)."""
    if jnp.issubdtype(input.dtype, jnp.unsignedinteger):
        return input
    if jnp.issubdtype(input.dtype, jnp.complexfloating):
        r = jnp.abs(input)
        return jnp.where(jnp.isinf(input.real) | jnp.isinf(input.imag), jnp.asarray(jnp.inf, r.dtype), r)
    return _go.abs(input) if jnp.issubdtype(input.dtype, jnp.floating) else jnp.abs(input)


_sign_complex = _raise_on(lambda dt: dt.is_complex, NotImplementedError,
                          "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn "
                          "instead.")


def _sign_dtype(op, dt):
    _no_wide_unsigned(op, dt)
    _sign_complex(op, dt)


@defop(kernel="sign_cpu", grad_fn="SignBackward0", inplace=True, check_dtype=_sign_dtype)
def sign(input):
    """-1, 0 or 1 (bool: itself); complex raises as PyTorch (use sgn)."""
    return input if input.dtype == jnp.bool_ else _real_sign(input)


def _real_sign(x):
    """PyTorch's ``(0 < x) - (x < 0)``: NaN and -0.0 give +0 (jnp.sign keeps NaN and -0.0)."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.sign(x)
    return jnp.where((x == 0) | jnp.isnan(x), jnp.zeros((), x.dtype), jnp.sign(x))


@defop(kernel="sign_cpu", grad_fn="SgnBackward0", inplace=True, check_dtype=_no_wide_unsigned)
def sgn(input):
    """sign, and ``z / |z|`` for complex (bool: itself); a complex result with a NaN part is ``nan+nanj``."""
    if input.dtype == jnp.bool_:
        return input
    if jnp.issubdtype(input.dtype, jnp.complexfloating):
        return _go.csgn(input)
    return _real_sign(input)


@defop(float8=True, grad_fn="PositiveBackward0", saves=(), out=False, check_dtype=_raise_on(
    lambda dt: dt is D.bool, RuntimeError, "The `+` operator, on a bool tensor is not supported."))
def positive(input):
    return input


def _digamma(x):
    """digamma with PyTorch's poles at zero: -inf at 0.0, +inf at -0.0 (JAX: NaN)."""
    inf = jnp.asarray(np.inf, x.dtype)
    return jnp.where(x == 0, jnp.where(jnp.signbit(x), inf, -inf), jax.scipy.special.digamma(x))


def _trigamma(x):
    """PyTorch's trigamma (Math.h): reflection below 0.5, six recurrence steps, then the asymptotic series."""
    pi = jnp.asarray(np.pi, x.dtype)
    refl = x < 0.5
    s = jnp.sin(pi * x)
    result = jnp.where(refl, -(pi * pi) / (s * s), jnp.zeros((), x.dtype))
    x = jnp.where(refl, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return jnp.where(refl, -result, result)


@jax.custom_jvp
def _digamma_d(x):
    """digamma whose derivative is PyTorch's trigamma (inf at 0, where JAX's gives NaN)."""
    return _digamma(x)


_digamma_d.defjvp(lambda p, t: (_digamma_d(p[0]), _trigamma(p[0]) * t[0]))


@jax.custom_jvp
def _lgamma(x):
    """lgamma whose derivative is PyTorch's digamma (-inf at 0, where JAX's gives NaN). A float32 one is computed in
    float64 and rounded: JAX's float32 gammaln is 1e-3 off near its zeros at 1 and 2 (``lgamma(1.)`` 4.8e-7), where
    torch's is correctly rounded."""
    if x.dtype == jnp.float32:
        return jax.scipy.special.gammaln(x.astype(jnp.float64)).astype(jnp.float32)
    return jax.scipy.special.gammaln(x)


_lgamma.defjvp(lambda p, t: (_lgamma(p[0]), _digamma_d(p[0]) * t[0]))


@jax.custom_jvp
def _exp2(x):
    """2 ** x as PyTorch's CPU kernel: exact at integers, subnormal results kept, inf past the top (JAX's exp2 is
    ulps off at integers, 2 ** 30 - 1e-6 in float64, and flushes subnormal results). float16 / bfloat16 compute in
    float32 and round. The derivative: torch's ``grad * result * ln 2``, rounded in that order (the tangent
    ``t * ln 2 * result`` transposes to it)."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.exp2(x)
    if x.dtype in (jnp.float16, jnp.bfloat16):
        return _exp2(x.astype(jnp.float32)).astype(x.dtype)
    if x.dtype == jnp.float64:
        return _exp2_scaled(x, jnp.exp2)
    # float32: torch's vectorised loop (Sleef's exp2f_u10) over whole steps of two SIMD vectors, its scalar loop
    # (glibc's exp2f, about correctly rounded: here rounded once from float64) over the rest, as laid out in a
    # contiguous tensor
    flat = x.reshape(-1)
    cut = flat.size - flat.size % _exp2_step()
    if not cut:
        return _exp2_scaled(x, jnp.exp2)
    if cut == flat.size:
        return _exp2_scaled(x, _sleef_exp2f)
    parts = (_exp2_scaled(flat[:cut], _sleef_exp2f), _exp2_scaled(flat[cut:], jnp.exp2))
    return jnp.concatenate(parts).reshape(x.shape)


_SLEEF_EXP2F = (0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0,
                1.0)


def _sleef_exp2f(s):
    """Sleef's float32 polynomial for 2 ** s, |s| <= 1/2 (``s`` float64 holding a float32): fused multiply-adds,
    each rounded once to float32 (in float64 the product is exact)."""
    u = jnp.asarray(_SLEEF_EXP2F[0], jnp.float32)
    for c in _SLEEF_EXP2F[1:]:
        u = (u.astype(jnp.float64) * s + np.float64(np.float32(c))).astype(jnp.float32)
    return u.astype(jnp.float64)


@functools.cache
def _exp2_step() -> int:
    """The elements per step of torch's vectorised float32 loop: two AVX-512 (16 floats) or AVX2 vectors (8)."""
    from ..backends import _cpu_capability
    return 32 if _cpu_capability() == "AVX512" else 16


def _exp2_scaled(x, exp2_frac):
    """``exp2_frac(x - n) * 2 ** n``, ``n = round(x)``, in float64, rounded once to x's dtype: 2 ** n as two exact
    powers of two (bit patterns), as Sleef's ldexp; a subnormal result (XLA's CPU arithmetic and converts flush
    them) by its bit pattern, the value in units of the smallest subnormal rounded to an integer."""
    fi = jnp.finfo(x.dtype)
    bits, ity = (52, jnp.int64) if x.dtype == jnp.float64 else (23, jnp.int32)
    bias = fi.maxexp - 1
    w = x.astype(jnp.float64)
    # (n within twice the normal exponents; beyond, the rest stays in s and 2 ** s over- or underflows)
    n = jnp.clip(jnp.round(w), -2 * (bias - 1), 2 * bias)
    k = jnp.where(jnp.isnan(n), jnp.zeros((), jnp.float64), n).astype(jnp.int64)
    m = exp2_frac(w - k.astype(jnp.float64))
    h = k >> 1

    def pow2(e):
        return jax.lax.bitcast_convert_type((e + 1023) << 52, jnp.float64)
    e = k - (fi.minexp - bits)  # (the exponent in units of the smallest subnormal, whose pattern is 1)
    q = jnp.round(m * pow2(jnp.clip(e, -2, bits))).astype(ity)
    sub = jax.lax.bitcast_convert_type(jnp.where(e < -2, jnp.zeros((), ity), q), x.dtype)
    return jnp.where(k <= fi.minexp, sub, (m * pow2(h) * pow2(k - h)).astype(x.dtype))


@_exp2.defjvp
def _exp2_jvp(primals, tangents):
    r = _exp2(primals[0])
    t = tangents[0]
    if r.dtype in (jnp.float16, jnp.bfloat16):  # ((grad * result) rounded to x's dtype, times ln 2 as float32)
        return r, (t.astype(jnp.float32) * jnp.asarray(np.log(2), jnp.float32)).astype(r.dtype) * r
    return r, t * jnp.asarray(np.log(2), r.dtype) * r


def _half_result_grad(fn, tangent):
    """``fn`` whose derivative, for a float16 / bfloat16 input, is torch's backward formula over the op's SAVED half
    result ``y`` (derivatives.yaml's ``result``, as torch reads it: rounded), where JAX's own formula reads the
    float32 value ``y`` was rounded from, or rounds its intermediates otherwise. ``tangent(t, y, r, f16)``: the
    tangent map in float32 (``r`` rounds a value to the half dtype where torch stores a half intermediate; ``f16``:
    float16, whose c10::Half arithmetic rounds where bfloat16's kernels may not), written so that its transpose --
    what ``jax.vjp`` runs -- is torch's formula term for term; the gradient is rounded once at the end. The forward
    computes a half input in float32, rounded once, as torch's kernels (XLA's own half tan / rsqrt / expm1 differ
    from that in up to a third of float16 values under some of its code generation options). Other dtypes run
    ``fn`` and JAX's derivative unchanged."""
    @jax.custom_jvp
    def half(x):
        return fn(x.astype(jnp.float32)).astype(x.dtype)

    @half.defjvp
    def _jvp(primals, tangents):
        y = half(primals[0])
        dt = y.dtype
        return y, tangent(tangents[0].astype(jnp.float32), _stored_half(y, dt), lambda v: _stored_half(v, dt),
                          dt == jnp.float16).astype(dt)

    def impl(x):
        return half(x) if x.dtype in (jnp.float16, jnp.bfloat16) else fn(x)
    impl.__name__ = getattr(fn, "__name__", "f")
    return impl


# torch's backward formulas over the saved half result ``y`` (checked element for element against torch 2.13's CPU
# gradients), each as the tangent map whose transpose it is (a product's factors in reverse order)
def _sigmoid_t(t, y, r, f16):
    """sigmoid_backward: bfloat16 ``g * (1 - y) * y`` in float32; float16 each product rounded,
    ``r(r(g * r(1 - y)) * y)``."""
    return r(t * y) * r(1 - y) if f16 else (t * y) * (1 - y)


def _rsqrt_t(t, y, r, f16):
    """``-0.5 * grad * result.pow(3)``: ``-0.5 * grad`` rounded (a half tensor), times the cube (float32's, rounded:
    float16; of the rounded square: bfloat16)."""
    return r(t * (r(y * y * y) if f16 else r(y * r(y * y)))) * -0.5


_HALF_RESULT_T = {
    "sigmoid": _sigmoid_t,
    "sqrt": lambda t, y, r, f16: t / (2 * y),  # grad / (2 * result)
    "rsqrt": _rsqrt_t,
    "reciprocal": lambda t, y, r, f16: -t * r(y * y),  # -grad * (result * result)
    "expm1": lambda t, y, r, f16: t * r(y + 1),  # grad * (result + 1)
    "tan": lambda t, y, r, f16: t * r(1 + r(y * y)),  # grad * (1 + result.pow(2))
}


# PyTorch's CPU kernel names (its dtype errors name them): vectorised (VML) ones, and a few others
_VML = {"acos", "asin", "atan", "cos", "erf", "erfc", "erfinv", "exp", "expm1", "lgamma", "log", "log10", "log1p",
        "log2", "sin", "sqrt", "tan", "tanh"}
_UNARY_KERNEL = {"exp2": "exp2", "digamma": "digamma", "sigmoid": "sigmoid_cpu_reduced_float"}


def _unary_float(name, fn, grad_fn, saves=("all",), aliases=()):
    if name in _HALF_RESULT_T:
        fn = _half_result_grad(fn, _HALF_RESULT_T[name])

    def impl(input):
        return fn(input)
    impl.__name__ = name
    impl.__doc__ = f"``torch.{name}``: integer inputs compute in the default float dtype."
    defop(name, promote="float", grad_fn=grad_fn, inplace=True,
          saves=saves, aliases=aliases, kernel=_UNARY_KERNEL.get(
              name, f"{name}_vml_cpu" if name in _VML else f"{name}_cpu"),
          autocast={"cuda": "fp32"} if name in ("exp", "expm1", "log", "log2", "log10", "log1p", "rsqrt", "tan",
                                               "asin", "acos", "sinh", "cosh", "erfinv", "reciprocal") else None)(impl)


for _n, _f, _g, _s in [
    ("exp", _go.cexp, "ExpBackward0", ("result",)), ("exp2", _exp2, "Exp2Backward0", ("result",)),
    ("expm1", jnp.expm1, "Expm1Backward0", ("result",)), ("log", jnp.log, "LogBackward0", ("all",)),
    ("log2", D.in_opmath(jnp.log2), "Log2Backward0", ("all",)),
    ("log10", D.in_opmath(jnp.log10), "Log10Backward0", ("all",)),
    ("log1p", jnp.log1p, "Log1PBackward0", ("all",)), ("sqrt", _go.csqrt, "SqrtBackward0", ("result",)),
    ("rsqrt", jax.lax.rsqrt, "RsqrtBackward0", ("result",)), ("sin", jnp.sin, "SinBackward0", ("all",)),
    ("cos", jnp.cos, "CosBackward0", ("all",)), ("tan", jnp.tan, "TanBackward0", ("result",)),
    ("asin", _go.casin, "AsinBackward0", ("all",)), ("acos", _go.cacos, "AcosBackward0", ("all",)),
    ("atan", _go.catan, "AtanBackward0", ("all",)), ("sinh", jnp.sinh, "SinhBackward0", ("all",)),
    ("cosh", jnp.cosh, "CoshBackward0", ("all",)), ("tanh", _go.tanh, "TanhBackward0", ("result",)),
    ("asinh", _go.casinh, "AsinhBackward0", ("all",)), ("acosh", _go.cacosh, "AcoshBackward0", ("all",)),
    ("atanh", _go.catanh, "AtanhBackward0", ("all",)),
    ("sigmoid", jax.nn.sigmoid, "SigmoidBackward0", ("result",)),
    ("erf", jax.scipy.special.erf, "ErfBackward0", ("all",)),
    ("erfc", jax.scipy.special.erfc, "ErfcBackward0", ("all",)),
    ("erfinv", jax.scipy.special.erfinv, "ErfinvBackward0", ("all",)),
    ("reciprocal", jnp.reciprocal, "ReciprocalBackward0", ("result",)),
    ("lgamma", _lgamma, "LgammaBackward0", ("all",)),
    ("digamma", _digamma_d, "DigammaBackward0", ("all",)),
]:
    _unary_float(_n, _f, _g, _s)

for _alias, _target in [("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
                        ("arccosh", "acosh"), ("arctanh", "atanh")]:
    from ._registry import _ALIASES
    _ALIASES[_target] = _ALIASES[_target] + (_alias,)


def _int_identity_unary(name, fn, grad_fn):
    def impl(input):
        if jnp.issubdtype(input.dtype, jnp.integer):
            return input
        return fn(input)
    impl.__name__ = name
    impl.__doc__ = f"``torch.{name}``: integers unchanged; bool raises (no ``{name}_vml_cpu`` Bool kernel)."
    defop(name, grad_fn=grad_fn, inplace=True, saves=(), check_dtype=_no_bool, kernel=f"{name}_vml_cpu")(impl)


_int_identity_unary("floor", jnp.floor, "FloorBackward0")
_int_identity_unary("ceil", jnp.ceil, "CeilBackward0")
_int_identity_unary("trunc", jnp.trunc, "TruncBackward0")


@defop(grad_fn="FracBackward0", inplace=True, saves=(), check_dtype=_no_int, kernel="frac_cpu")
def frac(input):
    """``x - trunc(x)``: floating inputs only."""
    return input - jnp.trunc(input)


def _round_rule(op, sig, sargs):
    """``round(int)`` is the identity, but any explicit ``decimals`` on an integer, or bool, raises."""
    casts, outs = P.rule_same(op, sig, sargs)
    dt, decimals = outs[0], sargs[0]
    if dt.category <= D.INT and (decimals is not None or dt is D.bool):
        kernel = "round_cpu" if decimals else "round_vml_cpu"
        raise no_kernel(kernel, dt)
    return casts, outs


def _round_prep(targs, sargs):
    """A complex input with ``decimals`` names torch's ``round_cpu`` (``round_decimals``), not the VML kernel."""
    if isinstance(sargs[0], Tensor):  # (a 0-d tensor: its number)
        sargs = (scalar_arg(sargs[0], "round", "decimals", "int"),) + tuple(sargs[1:])
    t = targs[0]
    if sargs[0] and isinstance(t, Tensor) and t.dtype.is_complex:
        raise no_kernel("round_cpu", t.dtype)
    return sargs


@defop(kernel="round_vml_cpu", promote=_round_rule, inplace=True, saves=(), prep=_round_prep,
       grad_fn=lambda targs, sargs: "RoundBackward0" if sargs[0] is None else "RoundBackward1")
def round(input, *, decimals=None):  # noqa: A001
    """Round half to even, as PyTorch (``decimals`` defaults to 0). With ``decimals``, PyTorch's
    ``round_decimals``: ``nearbyint(x * 10**d) / 10**d`` in the op-math type (``x / 10**-d`` then ``* 10**-d`` for
    d < 0), the power behind a barrier so that XLA keeps the division (it multiplies by the rounded reciprocal of a
    constant divisor: one ulp off)."""
    if jnp.issubdtype(input.dtype, jnp.integer):
        return input
    if not decimals:
        return jnp.round(input)
    x = input.astype(jnp.float32) if input.dtype.itemsize < 4 and not jnp.issubdtype(input.dtype, jnp.complexfloating) \
        else input
    p = jax.lax.optimization_barrier(jnp.asarray(10.0 ** (decimals if decimals > 0 else -decimals), x.real.dtype))
    r = jnp.round(x / p) * p if decimals < 0 else jnp.round(x * p) / p
    return r.astype(input.dtype)


def _square_rule(op, sig, sargs):
    """``square`` is ``pow(x, 2)``: bool gives int64."""
    dt = P._first_tensor_dtype(sig)
    _no_wide_unsigned(op, dt)
    r = D.int64 if dt is D.bool else dt
    return (r,), (r,)


@defop(kernel="pow", promote=_square_rule, grad_fn="PowBackward0", inplace=True)
def square(input):
    return input * input


@defop(kernel="clamp_min_scalar_cpu", grad_fn="ReluBackward0", inplace=True, saves=("result",), out=False,
       check_dtype=_raise_on(lambda dt: dt is D.bool, RuntimeError, "Boolean inputs not supported for relu"))
def relu(input):
    """max(x, 0); gradient 0 at 0 as PyTorch (grad_overrides.relu)."""
    return _go.relu(input)


def _real_float_only(op, sig, sargs):
    """Real floating inputs only: integers and complex raise for the op's kernel (gelu's GeluKernelImpl, mish)."""
    if sig[0][1].is_complex:
        raise no_kernel(op.kernel, sig[0][1])
    return P.rule_float_only(op, sig, sargs)


def _gelu_prep(targs, sargs):
    if sargs[0] not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return sargs


@defop(promote=_real_float_only, grad_fn="GeluBackward0", kernel="GeluKernelImpl", method=True, prep=_gelu_prep)
def gelu(input, *, approximate="none"):
    return D.in_opmath(lambda x: jax.nn.gelu(x, approximate=(approximate == "tanh")))(input)


@defop(promote="float_only", grad_fn="SiluBackward0", kernel="silu_cpu")
def silu(input):
    return D.in_opmath(jax.nn.silu)(input)


@defop(promote=_real_float_only, grad_fn="MishBackward0", kernel="mish_cpu", inplace=True)
def mish(input):
    """``x * tanh(softplus(x))``, float16/bfloat16 computed in float32 (PyTorch's opmath)."""
    x = input.astype(D.opmath(input.dtype))
    return (x * jnp.tanh(jax.nn.softplus(x))).astype(input.dtype)


def _inf_float8(kernel):
    """isinf/isfinite: float8_e5m2 has infinities and a kernel; float8_e4m3fn has neither."""
    return lambda sig: None if all(type(s) is not tuple or s[1] is D.float8_e5m2 for s in sig) else kernel


_PREDICATE_FLOAT8 = {"isnan": True, "isinf": _inf_float8("isinf"), "isfinite": _inf_float8("isfinite")}


def _predicate(name, fn):
    def impl(input):
        return fn(input)
    impl.__name__ = name
    impl.__doc__ = f"``torch.{name}``: a bool mask."
    defop(name, promote="logical", differentiable=False, float8=_PREDICATE_FLOAT8.get(name, False),
          kernel=name if name in ("isinf", "isfinite") else f"{name}_cpu", out=name not in _PREDICATE_NO_OUT)(impl)


_PREDICATE_NO_OUT = frozenset({"isnan", "isinf", "isfinite"})  # (torch's take no out=; isposinf, signbit... do)


for _n, _f in [("isnan", jnp.isnan), ("isinf", jnp.isinf), ("isfinite", jnp.isfinite), ("isposinf", jnp.isposinf),
               ("isneginf", jnp.isneginf), ("signbit", jnp.signbit)]:
    _predicate(_n, _f)


def _nan_to_num_prep(targs, sargs):
    """torch's ``float?`` replacements: a 0-d tensor is its number."""
    if any(isinstance(v, Tensor) for v in sargs):
        sargs = tuple(scalar_arg(v, "nan_to_num", k, "float") for v, k in zip(sargs, ("nan", "posinf", "neginf")))
    return sargs


@defop(kernel="nan_to_num", grad_fn="NanToNumBackward0", inplace=True, prep=_nan_to_num_prep)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return jnp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


# ---- clamp / where / masked_fill -------------------------------------------------------------------
def _clamp_prep(targs, sargs):
    if targs[1] is None and targs[2] is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(targs[0], Tensor) and targs[0].dtype.category == D.FLOAT:
        # torch's floating clamp takes a number bound as a double (no promotion): a complex one must be real
        for b in targs[1:]:
            if isinstance(b, complex) and b.imag != 0:
                raise RuntimeError("value cannot be converted to type double without overflow")
    D.check_scalar_arg(targs[0], targs[1])
    D.check_scalar_arg(targs[0], targs[2])
    b = [x for x in targs[1:] if isinstance(x, Tensor)]
    if len(b) == 1 and targs[1] is not None and targs[2] is not None and (b[0].ndim or b[0].requires_grad):
        # a tensor bound beside a number: torch's Number overload takes a 0-d tensor (not requiring grad) as a
        # number; any other tensor fits neither overload
        got = ", ".join(["Tensor"] + ["Tensor" if isinstance(x, Tensor) else type(x).__name__ for x in targs[1:]])
        raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                        " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
    return sargs


def _bound_check(targs, sargs):
    D.check_scalar_arg(targs[0], targs[1])


def _clamp_kernel(sig):
    """The kernel torch's clamp runs: the Tensor overload (tensor bounds only; a 0-d one beside a number is a number)
    clamps with clamp_cpu, or maximum / minimum for one bound; the Scalar one with clamp[_min/_max]_scalar_cpu."""
    lo, hi = sig[1], sig[2]
    if (type(lo) is tuple or type(hi) is tuple) and not any(b is not None and type(b) is not tuple for b in (lo, hi)):
        return "clamp_cpu" if lo is not None and hi is not None else "maximum_cpu" if lo is not None else "minimum_cpu"
    return "clamp_scalar_cpu" if lo is not None and hi is not None else \
        "clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu"


def _clamp_base(op, sig, sargs):
    """Bounds promote with the input; with both bounds a Bool result has no kernel."""
    casts, outs = P.rule_elementwise(op, sig, sargs)
    if outs[0] is D.bool and sig[1] is not None and sig[2] is not None:
        raise no_kernel(_clamp_kernel(sig), D.bool)
    return casts, outs


_clamp_rule = _wide_unsigned_rule(_clamp_kernel, _clamp_base)


def _bound_kernel(scalar, tensor):
    """clamp_min / clamp_max's kernel: ``tensor`` (maximum_cpu / minimum_cpu) for a tensor bound."""
    return lambda sig: tensor if type(sig[1]) is tuple else scalar


def _bound_name(base):
    """``clamp.Tensor`` / ``clamp_min.Tensor`` / ``clamp_max.Tensor`` (a tensor bound): ``<base>Backward1`` for
    clamp_min/clamp_max and ``ClampBackward0`` for clamp; the Scalar overloads the other number."""
    def name(targs, sargs):
        tensor = any(isinstance(b, Tensor) for b in targs[1:])
        if base == "Clamp":  # (a 0-d tensor beside a number bound is a number: the Scalar overload)
            return "ClampBackward0" if tensor and not any(isinstance(b, (int, float)) for b in targs[1:]) else \
                "ClampBackward1"
        return f"{base}Backward1" if tensor else f"{base}Backward0"
    return name


@defop(kernel="clamp_scalar_cpu", promote=_clamp_rule, broadcast=True, grad_fn=_bound_name("Clamp"), tensors=3,
       inplace=True, prep=_clamp_prep, float8=_clamp_kernel,
       aliases=("clip",))
def clamp(input, min=None, max=None):  # noqa: A002
    """``clamp(x, min, max)``: PyTorch's gradient passes where min <= x <= max (bounds included)."""
    if min is not None and max is not None:
        return _go.clamp(input, min, max)
    if min is not None:
        return _go.clamp_min(input, min)
    return _go.clamp_max(input, max)


_CLAMP_MIN_KERNEL = _bound_kernel("clamp_min_scalar_cpu", "maximum_cpu")
_CLAMP_MAX_KERNEL = _bound_kernel("clamp_max_scalar_cpu", "minimum_cpu")


@defop(kernel="clamp_min_scalar_cpu", promote=_wide_unsigned_rule(_CLAMP_MIN_KERNEL), broadcast=True,
       grad_fn=_bound_name("ClampMin"), tensors=2, inplace=True, check=_bound_check, float8=_CLAMP_MIN_KERNEL)
def clamp_min(input, min):  # noqa: A002
    return _go.clamp_min(input, min)


@defop(kernel="clamp_max_scalar_cpu", promote=_wide_unsigned_rule(_CLAMP_MAX_KERNEL), broadcast=True,
       grad_fn=_bound_name("ClampMax"), tensors=2, inplace=True, check=_bound_check, float8=_CLAMP_MAX_KERNEL)
def clamp_max(input, max):  # noqa: A002
    return _go.clamp_max(input, max)


def _where_check(targs, sargs):
    from .._tensor.tensor import Tensor
    c = targs[0]
    if isinstance(c, Tensor) and c.dtype is D.uint8:  # (used as its != 0, as torch's ``condition.to(kBool)``)
        warn_once("where_uint8", "where received a uint8 condition tensor. This behavior is deprecated and will be "
                  "removed in a future version of PyTorch. Use a boolean condition instead. (Triggered internally at "
                  "/__w/pytorch/pytorch/aten/src/ATen/native/TensorCompare.cpp:621.)")
    elif isinstance(c, Tensor) and c.dtype is not D.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {c.dtype.short}")
    D.check_scalar_arg(targs[1], targs[2], floats="wide")  # the number becomes a float32 tensor first
    D.check_scalar_arg(targs[2], targs[1], floats="wide")


@defop(float8=True, promote="where", grad_fn="WhereBackward0", tensors=3, check=_where_check, method=False,
       saves=(0,))
def where(condition, input, other):
    return jnp.where(condition, input, other)


def _mask_check(targs, sargs):
    from .._tensor.tensor import Tensor
    from ._dispatch import broadcast_shapes
    m = targs[1]
    if isinstance(m, Tensor) and m._shape != targs[0]._shape:
        broadcast_shapes(m._shape, targs[0]._shape)  # PyTorch expands (mask, self): the mask is "tensor a"
    if isinstance(m, Tensor) and m.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {P._cname(m.dtype)}")
    v = targs[2]
    if isinstance(v, Tensor) and v._shape:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{len(v._shape)} dimension(s).")
    if not isinstance(v, Tensor):
        D.check_fits(v, targs[0].dtype)
    elif v.dtype.category == D.COMPLEX and targs[0].dtype.category < D.COMPLEX and \
            not isinstance(v._array, jax.core.Tracer):
        D.check_fits(complex(np.asarray(v._array)), targs[0].dtype)  # (torch fills value.item(): checked)


def _masked_fill_rule(op, sig, sargs):
    dt = sig[0][1]
    return (None, None, dt), (dt,)


def _mask_inplace(targs, sargs):
    """``masked_fill_``: torch expands the mask to ``self`` (``self`` is "tensor a" of its broadcast error)."""
    from .._tensor.tensor import Tensor
    from ._dispatch import broadcast_shapes
    if isinstance(targs[1], Tensor) and targs[1]._shape != targs[0]._shape:
        broadcast_shapes(targs[0]._shape, targs[1]._shape)


@defop(kernel="masked_fill", promote=_masked_fill_rule, broadcast=False, grad_fn="MaskedFillBackward0", tensors=3,
       inplace=_mask_inplace, check=_mask_check, saves=(1,),
       aliased_write_ok=(lambda targs, sargs: jnp.broadcast_to(targs[1]._array, targs[0]._shape), 2450), out=False)
def masked_fill(input, mask, value):
    return jnp.where(mask, value, input)


# ---- addcmul / addcdiv -----------------------------------------------------------------------------
_ADDCDIV_INT = ("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
                "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
                "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
                "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def _addc_rule(op, sig, sargs):
    """The three operands promote together; Bool has no kernel; addcdiv refuses two integral divisor operands."""
    if op.name == "addcdiv" and all((s[1].category <= D.INT) if type(s) is tuple else s in (int, bool)
                                    for s in sig[1:]):
        raise RuntimeError(_ADDCDIV_INT)
    casts, outs = P.rule_elementwise(op, sig, sargs)
    if outs[0] is D.bool:
        raise no_kernel(f"{op.name}_cpu_out", D.bool)
    return casts, outs


def _addc_prep(targs, sargs):
    """A complex ``value`` with a real result: torch converts it to the kernel's (opmath) type, checked (an
    imaginary part raises; 1+0j is 1)."""
    value = sargs[0]
    if type(value) is complex:
        r = P.result_type_sig(P._entries(tuple((len(t._shape), t.dtype) if hasattr(t, "_storage") else type(t)
                                               for t in targs)))
        if D.BOOL < r.category < D.COMPLEX:
            D.check_fits(value, D.from_numpy_dtype(np.dtype(D.opmath(r.jnp))) if r.category == D.FLOAT else r)
            return (value.real,) + tuple(sargs[1:])
    return sargs


def _addcdiv_prep(targs, sargs):
    if all(hasattr(t, "_storage") and t.dtype.category <= D.INT for t in targs[1:]):
        return sargs  # (two integral divisor operands: the rule's error comes first)
    return _addc_prep(targs, sargs)


def _value(value, dt):
    """``value`` in the computation dtype: truncated to an integer for integral results (as PyTorch's kernel)."""
    if jnp.issubdtype(dt, jnp.integer):
        value = int(value) if isinstance(value, (int, float)) else jnp.trunc(value)
    return _alpha(value, dt)


@defop(kernel="addcmul_cpu_out", promote=_addc_rule, broadcast=True, prep=_addc_prep, grad_fn="AddcmulBackward0",
       tensors=3, inplace=True, traced=("value",), saves=saves_for(((2,), 1), ((1,), 2)))
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (integral results truncate ``value``; float16 / bfloat16 in float32,
    rounded once, as torch's CPU kernel)."""
    return D.in_opmath(lambda x, a, b: x + _value(value, x.dtype) * a * b)(input, tensor1, tensor2)


@defop(kernel="addcdiv_cpu_out", promote=_addc_rule, broadcast=True, prep=_addcdiv_prep,
       grad_fn="AddcdivBackward0", tensors=3, inplace=True, traced=("value",), saves=saves_for(((1,), 2), always=(2,)))
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``; tensor1 and tensor2 may not both be integral (PyTorch's error);
    float16 / bfloat16 in float32, rounded once."""
    return D.in_opmath(lambda x, a, b: x + _value(value, x.dtype) * a / b)(input, tensor1, tensor2)
