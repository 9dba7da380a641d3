"""Where PyTorch's derivative convention differs from JAX's, the op's jax body uses one of these
``jax.custom_jvp`` rules (transposed automatically by ``jax.vjp``). Each has a parity test
(tests/parity/test_autograd.py, test_elementwise_sweep.py ``EDGE``). Rules with several inputs use
``symbolic_zeros`` so an input that does not require grad adds no ``inf * 0 = NaN`` term.

- abs at 0: PyTorch gives ``grad * sgn(0)`` (0, NaN for a NaN/inf grad); JAX gives the gradient.
- relu at 0: PyTorch gives 0 (JAX's ``maximum(x, 0)`` splits a tie: 0.5).
- clamp at a bound: PyTorch passes the gradient where ``min <= x <= max`` (bounds included); JAX's
  ``clip`` splits ties. Tensor bounds get the gradient where the bound is active: min where
  ``x < min < max``, max where ``x > max`` or ``max < min`` (crossed bounds: max wins).
- fmax/fmin at a tie: PyTorch gives the whole gradient to self (also where other is NaN).
- maximum/minimum: half to each at a tie, and the whole to both where one is NaN (JAX: none).
- relu / hardtanh / elu / hardswish at NaN pass the gradient (torch's backward tests ``x <= bound``); abs's
  is 0 there (sgn(NaN) is 0), hardsigmoid's 0.
- max() / min() / amax / amin (``pick``): the gradient spread over the elements equal to the result; a NaN
  result: max() / min() give it to the NaNs, amax / amin NaN everywhere (JAX: 0).
- pow: d/dx is 0 where the exponent is 0 (JAX: NaN at x = 0); d/dy is 0 where x = 0 and y >= 0. Higher orders
  follow torch's pow_backward: a Python-number exponent's are NaN-free at 0 (``x ** 0``: 0; ``x ** 1``: 1, 0), a
  tensor exponent's have torch's own NaN at 0 one order further (``x ** 0``'s 2nd, ``x ** 1``'s 3rd).
- hypot at (0, 0): PyTorch's ``x / hypot`` gives NaN (JAX: 0). atan2 at (0, 0): PyTorch gives 0.
- xlogy: d/dx is 0 where x = 0 and y <= 0. copysign: d/dx is 0 at x = 0, d/dy is 0.
- norm at 0: PyTorch's subgradient is 0; JAX's ``x / ||x||`` gives NaN. A p-norm (``pnorm``): torch's
  ``linalg_vector_norm_backward``, ``(|x| / n) ** (p - 1)``, 0 where the norm is 0 and, for p < 1, where x is 0.
  ``vnorm`` (the norm ops of a real x): the same on x itself, so that the second derivative is torch's too.
- logcumsumexp (``cumlogsumexp``): torch's ``logcumsumexp_backward``, NaN only where x is +inf or a leading -inf.
- sqrt of a clamped squared distance (cdist's matmul form, ``sqrt0``): 0 at 0, as torch's
  ``_euclidean_dist_backward``; and std's (``std_backward`` masks where the result is 0: a constant slice
  has a zero gradient, not NaN).
- cdist's inf-norm distance (``inf_dist``): torch's ``_cdist_backward`` gives the whole gradient to every coordinate
  tied with the distance (the norm ops' ``pick`` splits a tie, as torch's norm does).
- sgn of a complex number (``csgn``): torch's ``sgn_backward`` (JAX's ``sign`` has a zero derivative).
- tanh: torch's ``tanh_backward``, ``grad * (1 - y * y)`` in float32 for half types over the rounded result (JAX's
  ``t * (1 - y) * (1 + y)`` overflowed to NaN in float16 under a loss-scaled gradient).
- logaddexp / logaddexp2: torch's ``grad / (1 + exp(other - self))`` (as a sigmoid): NaN where both are the same
  infinity, 0 for the finite side against an infinity (JAX: 1, and exp(other) for the finite side).
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from ._rounding import true_div as _true_div


def _lin(out, *pairs):
    """``sum(coef * t)`` over the (coef, tangent) pairs whose tangent is not a symbolic zero, in
    ``out``'s shape: an input that does not require grad contributes nothing (not ``inf * 0 = NaN``)."""
    acc = None
    for coef, t in pairs:
        if isinstance(t, SymbolicZero):
            continue
        term = coef * t
        acc = term if acc is None else acc + term
    if acc is None:
        return jnp.zeros(out.shape, out.dtype)
    return jnp.broadcast_to(acc, out.shape).astype(out.dtype)


def _max_first(x, lo):
    """``max(x, lo)`` as torch's CPU kernels give it (``std::max``): ``x`` itself at a tie, so a -0. input stays -0.
    (``relu(-0.)``; a reciprocal of it is -inf), where XLA's max orders -0 below +0. A NaN of either propagates."""
    return jnp.where(x == lo, x, jnp.maximum(x, lo))


def _min_first(x, hi):
    """``min(x, hi)`` with ``x`` itself at a tie (``_max_first``'s)."""
    return jnp.where(x == hi, x, jnp.minimum(x, hi))


@jax.custom_jvp
def relu(x):
    return _max_first(x, jnp.zeros((), x.dtype))


@relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return relu(x), jnp.where(x <= 0, jnp.zeros((), t.dtype), t)  # (torch's threshold_backward: NaN passes)


@jax.custom_jvp
def abs(x):  # noqa: A001
    return jnp.abs(x)


@abs.defjvp
def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    if jnp.iscomplexobj(x):
        return abs(x), t * jnp.sign(x)
    # torch's abs_backward ``grad * sgn(x)``: a product, so a NaN/inf gradient at 0 (or at NaN, where sgn is 0
    # too) gives NaN, a finite one 0
    return abs(x), t * _sgn(x)


@jax.custom_jvp
def clamp(x, lo, hi):
    """clamp with both bounds (arrays of x's dtype, broadcastable); a +-0 tie keeps x's sign, as torch's."""
    return _min_first(_max_first(x, lo), hi)


@clamp.defjvp
def _clamp_jvp(primals, tangents):
    x, lo, hi = primals
    tx, tlo, thi = tangents
    y = clamp(x, lo, hi)
    z = jnp.zeros((), y.dtype)
    inside = (x >= lo) & (x <= hi)
    t = jnp.where(inside, tx, z) + jnp.where((x < lo) & (lo < hi), tlo, z) + jnp.where((x > hi) | (hi < lo), thi, z)
    return y, t


@jax.custom_jvp
def clamp_min(x, lo):
    return _max_first(x, lo)


@clamp_min.defjvp
def _clamp_min_jvp(primals, tangents):
    x, lo = primals
    tx, tlo = tangents
    z = jnp.zeros((), x.dtype)
    return clamp_min(x, lo), jnp.where(x >= lo, tx, z) + jnp.where(x < lo, tlo, z)


@jax.custom_jvp
def clamp_max(x, hi):
    return _min_first(x, hi)


@clamp_max.defjvp
def _clamp_max_jvp(primals, tangents):
    x, hi = primals
    tx, thi = tangents
    z = jnp.zeros((), x.dtype)
    return clamp_max(x, hi), jnp.where(x <= hi, tx, z) + jnp.where(x > hi, thi, z)


def _binary_rule(base, tangent, symbolic_zeros=False):
    """``base(x, y)`` whose derivative is ``tangent(x, y, result, tx, ty)`` (the rules below that are torch's
    formula for a binary op)."""
    @jax.custom_jvp
    def f(x, y):
        return base(x, y)

    def _jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        r = base(x, y)
        return r, tangent(x, y, r, tx, ty)
    f.defjvp(_jvp, symbolic_zeros=symbolic_zeros)
    return f


def _tie_to_self(cmp):
    """fmax (cmp=ge) / fmin (cmp=le) with PyTorch's gradient: self's where ``cmp(x, y) or isnan(y)``; at a +-0 tie
    the value is self's too, as torch's kernel (``_max_first``)."""
    base = jnp.fmax if cmp is jnp.greater_equal else jnp.fmin
    return _binary_rule(lambda x, y: jnp.where(x == y, x, base(x, y)),
                        lambda x, y, r, tx, ty: jnp.where(cmp(x, y) | jnp.isnan(y), tx, ty))


fmax = _tie_to_self(jnp.greater_equal)
fmin = _tie_to_self(jnp.less_equal)


def _split_ties(base, loses):
    """maximum (loses=less) / minimum (loses=greater) with torch's gradient: half each at a tie, none to the side
    that loses, and the whole to both where a NaN makes neither win (torch's ``masked_fill_(self < other, 0)``)."""
    def tangent(x, y, r, tx, ty):
        dt = r.dtype
        tie, half, zero = x == y, jnp.asarray(0.5, dt), jnp.zeros((), dt)
        one = jnp.ones((), dt)
        wx = jnp.where(tie, half, jnp.where(loses(x, y), zero, one))
        wy = jnp.where(tie, half, jnp.where(loses(y, x), zero, one))
        return _lin(r, (wx, tx), (wy, ty))
    return _binary_rule(base, tangent, symbolic_zeros=True)


maximum = _split_ties(jnp.maximum, jnp.less)
minimum = _split_ties(jnp.minimum, jnp.greater)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3, 4))
def pick(x, fn, axis, keepdims, nan_too):
    """``fn(x, axis)`` (jnp.max / jnp.min) whose gradient is spread evenly over the elements equal to the result,
    as torch's: ``nan_too`` (max() / min() of all: ``evenly_distribute_backward``) counts a NaN result's NaNs as
    equal to it; amax / amin do not, so a NaN result gives every element a NaN gradient (0 / 0), as torch's."""
    return fn(x, axis=axis, keepdims=keepdims)


@pick.defjvp
def _pick_jvp(fn, axis, keepdims, nan_too, primals, tangents):
    (x,), (t,) = primals, tangents
    r = fn(x, axis=axis, keepdims=True)
    mask = x == r
    if nan_too:
        mask = mask | (jnp.isnan(x) & jnp.isnan(r))
    count = jnp.sum(mask.astype(t.dtype), axis=axis, keepdims=True)
    # each element's share: the gradient divided by count where it equals the result (torch's grad / count, not
    # grad * (1 / count): 1 ulp apart for a count of 3), and NaN everywhere where none does (0 / 0; spelled out:
    # XLA turns a 0/1 mask times NaN into a select that gives 0)
    none = jnp.broadcast_to(count == 0, x.shape)
    w = jnp.where(none, jnp.asarray(jnp.nan, t.dtype), mask.astype(t.dtype))
    out = jnp.sum(t * w, axis=axis, keepdims=True) / count
    return pick(x, fn, axis, keepdims, nan_too), out if keepdims else jnp.squeeze(out, axis)


@jax.custom_jvp
def pow(x, y):  # noqa: A001
    """Floating/complex ``x ** y`` (both of one dtype, broadcastable)."""
    return jnp.power(x, y)


@functools.partial(pow.defjvp, symbolic_zeros=True)
def _pow_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    r = pow(x, y)
    z = jnp.zeros((), r.dtype)
    one = jnp.ones((), y.dtype)
    # torch's pow_backward_self, ``where(y == 0, 0, y * x.pow(y - 1))``, its ``x.pow`` this op again: so every higher
    # order is torch's too (the 2nd derivative of ``x ** 1`` is 0, where JAX's power rule gave 0 * inf = NaN at 0;
    # torch's own where keeps its NaN one order further, at ``x ** 0``'s 2nd, ``x ** 1``'s 3rd)
    dx = jnp.where(y == 0, z, y * pow(x, y - one))
    y_nonneg = (jnp.imag(y) == 0) & (jnp.real(y) >= 0) if jnp.iscomplexobj(y) else y >= 0
    dy = jnp.where((x == 0) & y_nonneg, z, r * jnp.log(x))
    return r, _lin(r, (dx, tx), (dy, ty))


# torch's real ``pow(tensor, Python scalar)`` (float, double, bfloat16; float16 is plain ``std::pow``): 0.5, -0.5 and
# -1 are its sqrt, rsqrt and reciprocal kernels (``(-inf) ** 0.5`` is nan, ``(-0.) ** -0.5`` -inf), 2, 3 and -2 the
# products ``x * x``, ``x * x * x`` and ``1 / (x * x)`` (pow_tensor_scalar_optimized_kernel); the others ``std::pow``.
_POW_SPECIAL = (0.5, -0.5, -1.0, 2.0, 3.0, -2.0)
_POW_BRANCHES = (
    lambda x, y: jnp.power(x, y.astype(x.dtype)), jnp.sqrt, lambda x: _rsqrt_div(x), lambda x: 1 / x, lambda x: x * x,
    lambda x: x * x * x, lambda x: 1 / (x * x))


def _rsqrt_div(x):
    """torch's CPU ``rsqrt`` kernel, ``1 / sqrt(x)`` with two roundings (``lax.rsqrt`` is XLA's approximation, an ulp
    off; a plain ``1 / jnp.sqrt`` XLA rewrites into it), computed in float32 for bfloat16."""
    s = jnp.sqrt(x.astype(jnp.float32) if x.dtype == jnp.bfloat16 else x)
    return _true_div(jnp.ones((), s.dtype), s).astype(x.dtype)


@jax.custom_jvp
def pow_scalar(x, y):
    """Real ``x ** y`` for a Python-number exponent ``y`` (0-d, exact in float64), with torch's special exponents.
    Its derivative is torch's ``pow_backward``: ``y * x ** (y - 1)``, that power taking the same special cases (the
    gradient of ``x ** 0.5`` at -0. is ``0.5 * rsqrt(-0.)``, -inf)."""
    # (each form computed and the exponent's selected, elementwise: no XLA conditional, whose branch index a GPU reads
    # back to the host on every call; XLA fuses the forms into one loop, and folds them away where y is a constant)
    r = _POW_BRANCHES[0](x, y)
    for v, f in zip(_POW_SPECIAL, _POW_BRANCHES[1:]):
        r = jnp.where(y == v, f(x), r)
    return r


@functools.partial(pow_scalar.defjvp, symbolic_zeros=True)
def _pow_scalar_jvp(primals, tangents):
    (x, y), (tx, _) = primals, tangents
    r = pow_scalar(x, y)
    # torch's pow_backward: zeros for exponent 0, a constant (no graph); the where's other branch is taken at base 1,
    # so that its derivative at the next order is 0 * finite, not ``0 * (x ** -2 = inf)`` = NaN at x = 0 (the 2nd
    # derivative of ``x ** 0``, the 3rd of ``x ** 1``: torch's 0)
    zero = y == 0
    base = jnp.where(zero, jnp.ones((), x.dtype), x)
    dx = jnp.where(zero, jnp.zeros((), x.dtype), y.astype(x.dtype) * pow_scalar(base, y - 1))
    return r, _lin(r, (dx, tx))


@jax.custom_jvp
def hypot(x, y):
    return jnp.hypot(x, y)


@functools.partial(hypot.defjvp, symbolic_zeros=True)
def _hypot_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    r = hypot(x, y)
    return r, _lin(r, (x / r, tx), (y / r, ty))


@jax.custom_jvp
def atan2(x, y):
    return jnp.arctan2(x, y)


@functools.partial(atan2.defjvp, symbolic_zeros=True)
def _atan2_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    d = x * x + y * y
    recip = jnp.where(d == 0, jnp.zeros((), d.dtype), 1 / jnp.where(d == 0, jnp.ones((), d.dtype), d))
    r = atan2(x, y)
    return r, _lin(r, (y * recip, tx), (-x * recip, ty))


@jax.custom_jvp
def xlogy(x, y):
    return jax.scipy.special.xlogy(x, y)


@functools.partial(xlogy.defjvp, symbolic_zeros=True)
def _xlogy_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    z = jnp.zeros((), x.dtype)
    dx = jnp.where((x == 0) & (y <= 0), z, jnp.log(y))
    r = xlogy(x, y)
    return r, _lin(r, (dx, tx), (x / y, ty))


@jax.custom_jvp
def copysign(x, y):
    return jnp.copysign(x, y)


@functools.partial(copysign.defjvp, symbolic_zeros=True)
def _copysign_jvp(primals, tangents):
    (x, y), (tx, _) = primals, tangents
    r = copysign(x, y)
    z = jnp.zeros((), r.dtype)
    ratio = jnp.where(x == 0, z, r / jnp.where(x == 0, jnp.ones((), x.dtype), x))
    return r, _lin(r, (ratio, tx))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def pnorm(a, p, axis=None, keepdims=False):
    """``(sum a ** p) ** (1 / p)`` over ``axis`` of ``a = |x|`` (p finite, nonzero), with torch's gradient."""
    s = jnp.sum(a * a if p == 2 else a ** jnp.asarray(p, a.dtype), axis=axis, keepdims=keepdims)
    return jnp.sqrt(s) if p == 2 else s ** jnp.asarray(1.0 / p, s.dtype)


def _norm_parts(norm, x, p, axis, keepdims):
    """(the norm, it with ``axis`` kept for broadcasting against ``x``, 1, 0): what a norm's jvp starts from."""
    n = norm(x, p, axis, keepdims)
    return n, n if keepdims or axis is None else jnp.expand_dims(n, axis), jnp.ones((), x.dtype), \
        jnp.zeros((), x.dtype)


@pnorm.defjvp
def _pnorm_jvp(p, axis, keepdims, primals, tangents):
    (a,), (t,) = primals, tangents
    n, nk, one, zero = _norm_parts(pnorm, a, p, axis, keepdims)
    # (masked by ``where`` on the tangent, not by a zero factor: a NaN cotangent arriving from a division by the
    # clamped norm, F.normalize's, stays out as torch's masked_fill keeps it)
    if p < 1:  # (|x| ** (p - 1) is infinite at 0: torch masks it there)
        mask = a == 0
        w = jnp.where(mask, one, a) ** jnp.asarray(p - 1, a.dtype) * nk ** jnp.asarray(1 - p, a.dtype)
    else:
        mask = jnp.broadcast_to(nk == 0, a.shape)
        ratio = a / jnp.where(nk == 0, one, nk)
        w = ratio if p == 2 else ratio ** jnp.asarray(p - 1, a.dtype)
    return n, jnp.sum(jnp.where(mask, zero, w * t), axis=axis, keepdims=keepdims)


def _sgn(x):
    """torch's ``sgn`` of a real ``x``: 0 at 0 and at NaN; its derivative 0 (``where``)."""
    one = jnp.ones((), x.dtype)
    return jnp.where(x > 0, one, jnp.where(x < 0, -one, jnp.zeros((), x.dtype)))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def vnorm(x, p, axis=None, keepdims=False):
    """The p-norm of a real ``x`` (p finite, not 0 or 1) whose derivative is torch's ``norm_backward`` written on
    ``x`` itself, branch by branch, so that its derivative (double backward) is torch's too: p = 2 ``x / n``
    masked where n is 0 (NaN second derivative at 0; ``1 / n`` at a zero element of a nonzero x), p < 1
    ``sgn(x) |x| ** (p - 1)`` masked where x is 0, others ``(sgn(x) |x| ** (p - 1) or x |x| ** (p - 2)) *
    (grad / n ** (p - 1))`` masked where n is 0 (NaN second derivative at a zero element for 1 < p < 3);
    NaN at a NaN element (``pnorm`` on ``|x|``: 0 there, and at zero elements, to second order)."""
    return pnorm(jnp.abs(x), p, axis, keepdims)


@vnorm.defjvp
def _vnorm_jvp(p, axis, keepdims, primals, tangents):
    (x,), (t,) = primals, tangents
    n, nk, one, zero = _norm_parts(vnorm, x, p, axis, keepdims)
    s = _sgn(x)
    a = x * s  # (|x| whose derivative is sgn(x) * t, torch's abs_backward: a NaN cotangent at 0 stays NaN)
    if p == 2:
        c = jnp.where(nk == 0, zero, x / nk)
        return n, jnp.sum(c * t, axis=axis, keepdims=keepdims)
    if p < 1:
        ss = jnp.where(x == 0, zero, s * a ** jnp.asarray(p - 1, x.dtype))
        return n, jnp.sum(ss * t, axis=axis, keepdims=keepdims) * n ** jnp.asarray(1 - p, x.dtype)
    ss = s * a ** jnp.asarray(p - 1, x.dtype) if p < 2 else x * a ** jnp.asarray(p - 2, x.dtype)
    # (the mask before the division by n ** (p - 1) in the tangent: transposed, torch's ``(grad / n ** (p - 1))
    # .masked_fill_(n == 0, 0)``, a NaN cotangent where n is 0 dropped)
    pw = jnp.where(nk == 0, one, nk) ** jnp.asarray(p - 1, x.dtype)
    mask = jnp.broadcast_to(nk == 0, x.shape)
    return n, jnp.sum(jnp.where(mask, zero, ss * t) / pw, axis=axis, keepdims=keepdims)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def cumlogsumexp(x, axis):
    """Running ``log(sum(exp(x)))`` along ``axis`` of a real ``x``. Its tangent ``y_j = sum_{i <= j} exp(x_i - r_j)
    t_i`` runs as the stable recurrence ``y_j = exp(r_{j-1} - r_j) y_{j-1} + exp(x_j - r_j) t_j``, cut where
    ``r_j`` or ``r_{j-1}`` is infinite, so that its transpose is torch's ``logcumsumexp_backward``
    ``sum_{j >= i} g_j exp(x_i - r_j)`` with its NaNs: where ``x_i`` is +inf, or -inf under a -inf result
    (leading -infs), and nowhere else (JAX's rule: NaN everywhere to second order, wrong values at +inf)."""
    return jax.lax.cumlogsumexp(x, axis=axis)


def _cle_combine(e1, e2):
    (a1, b1), (a2, b2) = e1, e2
    # (masked before the product: transposed, ``where(a2 == 0, 0, a2 * ct)``, so that a NaN arriving there in a double
    # backward is dropped, not multiplied into a2's derivative)
    return a1 * a2, a2 * jnp.where(a2 == 0, jnp.zeros((), b1.dtype), b1) + b2


@cumlogsumexp.defjvp
def _cumlogsumexp_jvp(axis, primals, tangents):
    (x,), (t,) = primals, tangents
    r = cumlogsumexp(x, axis)
    zero = jnp.zeros((), x.dtype)
    first = jnp.full_like(jax.lax.slice_in_dim(r, 0, 1, axis=axis), -jnp.inf)
    prev = jnp.concatenate([first, jax.lax.slice_in_dim(r, 0, r.shape[axis] - 1, axis=axis)], axis=axis)
    cut = jnp.isinf(r) | (prev == -jnp.inf)  # (a zero factor, with a zero derivative: no NaN leaks back)
    a = jnp.where(cut, zero, jnp.exp(jnp.where(cut, zero, prev - r)))
    b = jnp.exp(x - r)
    return r, jax.lax.associative_scan(_cle_combine, (a, b * t), axis=axis)[1]


@jax.custom_jvp
def sqrt0(v):
    """``sqrt(v)`` for ``v >= 0`` whose gradient at 0 is 0."""
    return jnp.sqrt(v)


@sqrt0.defjvp
def _sqrt0_jvp(primals, tangents):
    (v,), (t,) = primals, tangents
    r = sqrt0(v)
    return r, jnp.where(r == 0, jnp.zeros((), r.dtype), t / (2 * jnp.where(r == 0, jnp.ones((), r.dtype), r)))


@jax.custom_jvp
def csgn(z):
    """``z / |z|`` of a complex ``z`` (0 at 0; a NaN part makes ``nan+nanj``), its derivative torch's
    ``sgn_backward``: ``(dz - sgn * re(conj(sgn) dz)) / |z|``, 0 where ``z`` is 0 (JAX's ``sign`` has none)."""
    r = jnp.sign(z)
    nan = jnp.isnan(r.real) | jnp.isnan(r.imag)
    return jnp.where(nan, jnp.asarray(complex(jnp.nan, jnp.nan), z.dtype), r)


@csgn.defjvp
def _csgn_jvp(primals, tangents):
    (z,), (t,) = primals, tangents
    s = csgn(z)
    a = jnp.abs(z)
    zero = a == 0
    safe = jnp.where(zero, jnp.ones((), a.dtype), a).astype(z.dtype)
    d = (t - s * jnp.real(jnp.conj(s) * t).astype(z.dtype)) / safe
    return s, jnp.where(zero, jnp.zeros((), z.dtype), d)


@jax.custom_jvp
def nan_as_inf(x):
    """``x`` with NaN as +inf, its gradient the identity's (a max pool's selection: torch's max takes the NaN)."""
    return jnp.where(jnp.isnan(x), jnp.asarray(jnp.inf, x.dtype), x)


@nan_as_inf.defjvp
def _nan_as_inf_jvp(primals, tangents):
    return nan_as_inf(primals[0]), tangents[0]


@functools.lru_cache(maxsize=None)
def no_derivative(msg: str, exc: type = RuntimeError):
    """Identity ``f(x, *deps) -> x`` whose backward raises ``exc(msg)``: the output of an op PyTorch has no
    derivative for (its grad_fn's backward raises). ``deps``: what ``x`` was computed from out of JAX's sight
    (a ``stop_gradient`` or host computation), so that the error is raised for them too."""
    @jax.custom_vjp
    def f(x, *deps):
        return x

    def bwd(_, g):
        raise exc(msg)
    f.defvjp(lambda x, *deps: (x, None), bwd)
    return f


def once_differentiable(fn, msg: str, exc: type = NotImplementedError):
    """``fn(*arrays)`` whose derivative (JAX's, forward or reverse) has no derivative itself: differentiating a
    gradient raises ``exc(msg)``, as torch's ops whose backward is an op without a derivative (``_cdist_backward``,
    ``_pdist_backward``). The derivative is taken at the primals behind an identity whose own derivative raises;
    one order of differentiation never differentiates those primals."""
    @jax.custom_jvp
    def held(x):
        return x

    @held.defjvp
    def _held_jvp(primals, tangents):
        raise exc(msg)

    @jax.custom_jvp
    def f(*xs):
        return fn(*xs)

    @f.defjvp
    def _f_jvp(primals, tangents):
        return jax.jvp(fn, tuple(held(x) for x in primals), tangents)
    return f


def aten_no_derivative(name: str):
    """:func:`no_derivative` with ATen's message: ``derivative for aten::<name> is not implemented``."""
    return no_derivative(f"derivative for aten::{name} is not implemented")


@jax.custom_jvp
def tanh(x):
    """tanh whose derivative is PyTorch's ``tanh_backward``, ``grad * (1 - y * y)`` in the op math type (float32
    for half types), rounded once: JAX's ``t * (1 - y) * (1 + y)`` overflowed in half precision for a negative
    input under a loss-scaled gradient (float16: 40000 at x = -1 gave NaN; torch 16784). A complex ``x - 0j``
    gives ``tanh(x) - 0j`` (C99's signed zero; JAX's is ``+0j``)."""
    return _tanh_value(x)


def _tanh_value(x):
    y = jnp.tanh(x)
    if jnp.iscomplexobj(x):
        xi, yi = jnp.imag(x), jnp.imag(y)
        y = jax.lax.complex(jnp.real(y), jnp.where((xi == 0) & (yi == 0), xi, yi))
    return y


def _tanh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _tanh_value(x)
    half = jnp.dtype(t.dtype).itemsize == 2 and jnp.issubdtype(t.dtype, jnp.floating)
    wide = jnp.float32 if half else t.dtype
    yw = y.astype(wide)
    if half:  # (the half result, as torch saves it: XLA's excess precision would keep it float32)
        fi = jnp.finfo(y.dtype)
        yw = jax.lax.reduce_precision(yw, exponent_bits=fi.nexp, mantissa_bits=fi.nmant)
    return y, (t.astype(wide) * (1 - yw * yw)).astype(t.dtype)


tanh.defjvp(_tanh_jvp)


def _lae(lae, scale):
    """``lae`` (jnp.logaddexp / logaddexp2) differentiated by PyTorch's formula, ``grad / (1 + exp(other -
    self))``, as ``sigmoid(scale * (self - other))`` (its own derivative stays finite far apart): NaN where both
    are the same infinity, as PyTorch's (JAX's rule gives 1 there)."""
    return _binary_rule(lae, lambda a, b, r, ta, tb: ta * jax.nn.sigmoid(scale * (a - b)) +
                        tb * jax.nn.sigmoid(scale * (b - a)))


logaddexp, logaddexp2 = _lae(jnp.logaddexp, 1.0), _lae(jnp.logaddexp2, float(np.log(2.0)))


# ---- complex branch cuts (C99 / torch's signed-zero sides) ------------------------------------------
def _with_sign(v, s):
    """``v`` with the sign bit of ``s`` (``copysign``, but by negation: its derivative is +-1, never 0)."""
    return jnp.where(jnp.signbit(v) != jnp.signbit(s), -v, v)


def branch_cut(f, re=None, im=None, deriv=None):
    """``f`` (a JAX complex elementary function) whose results on a branch cut take the side of the signed zero
    the argument carries, as C99 and PyTorch (``sqrt(-4-0j)`` is ``-2j``; JAX answers ``+2j`` for every zero
    sign). ``re`` / ``im``: where the result's real / imaginary sign comes from (``"x"``, ``"y"``: the
    argument's real / imaginary part; ``"-y"``: opposite to it; ``"y0"``: the argument's only where its imaginary
    part is a zero, as ``exp(x - 0j)``'s ``-0j``). Real arguments: ``f`` itself. The derivative is ``f``'s
    (``deriv(z, w)``: ``f'(z)`` from the corrected result), the holomorphic tangent ``f'(z) dz``."""
    def fix(z):
        w = f(z)
        x, y = jnp.real(z), jnp.imag(z)
        wr, wi = jnp.real(w), jnp.imag(w)
        if re == "x":
            wr = _with_sign(wr, x)
        if im == "y":
            wi = _with_sign(wi, y)
        elif im == "-y":
            wi = _with_sign(wi, -y)
            if w.dtype == jnp.complex128:  # (torch's double acos is pi/2 - asin: a zero imaginary part is +0)
                wi = jnp.where(wi == 0, jnp.zeros_like(wi), wi)
        elif im == "y0":
            wi = jnp.where((y == 0) & (wi == 0), y, wi)
        return jax.lax.complex(wr, wi)

    g = jax.custom_jvp(fix)

    @g.defjvp
    def _jvp(primals, tangents):
        (z,), (t,) = primals, tangents
        w = fix(z)
        if deriv is not None:
            return w, deriv(z, w) * t
        return w, jax.jvp(f, (z,), (t,))[1]

    def h(z):
        return g(z) if jnp.iscomplexobj(z) else f(z)
    h.__name__ = getattr(f, "__name__", "f")
    return h


csqrt = branch_cut(jnp.sqrt, im="y", deriv=lambda z, w: 1 / (2 * w))
casin = branch_cut(jnp.arcsin, im="y")
cacos = branch_cut(jnp.arccos, im="-y")
catan = branch_cut(jnp.arctan, re="x", im="y")
casinh = branch_cut(jnp.arcsinh, re="x", im="y")
# (acosh's derivative is ``1 / (sqrt(z - 1) sqrt(z + 1))``, as torch's ``(z - 1).rsqrt() * (z + 1).rsqrt()``; JAX's
# ``1 / sqrt(z**2 - 1)`` has the opposite sign where Re z < 0)
# ``z +- 1`` keeps z's imaginary part as torch's (a -0 stays -0: JAX's ``z + (1+0j)`` would make it +0)
cacosh = branch_cut(jnp.arccosh, im="y", deriv=lambda z, w: 1 / (
    csqrt(jax.lax.complex(jnp.real(z) - 1, jnp.imag(z))) * csqrt(jax.lax.complex(jnp.real(z) + 1, jnp.imag(z)))))
catanh = branch_cut(jnp.arctanh, re="x", im="y")
cexp = branch_cut(jnp.exp, im="y0", deriv=lambda z, w: w)


def cpow_zero_base(r, x, y):
    """A complex ``x ** y`` at a zero base: torch's ``exp(y * log(0))`` under C99's rules, where XLA gives NaN
    (``0 ** (1+2j)``) or 1 (``0 ** 0j``): 0 for Re(y) > 0, inf+nan*j for Re(y) < 0, nan+nan*j otherwise."""
    yr = jnp.real(jnp.asarray(y)).astype(jnp.real(r).dtype)
    nan = jnp.asarray(jnp.nan, yr.dtype)
    zero_base = jax.lax.complex(jnp.where(yr > 0, 0, jnp.where(yr < 0, jnp.inf, nan)).astype(yr.dtype),
                                jnp.where(yr > 0, -0.0, nan).astype(yr.dtype))
    return jnp.where(x == 0, zero_base, r)


# torch's complex ``pow(tensor, scalar)``: 0 fills ones, 1 copies, and 2, 3, -1, -2, 0.5, -0.5 are the exact
# square, cube, reciprocal(s), sqrt and rsqrt (pow_tensor_scalar_optimized_kernel); the others ``std::pow``.
_CPOW_SPECIAL = (0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5)
_CPOW_BRANCHES = (
    lambda x, y: cpow_zero_base(jnp.power(x, y), x, y),
    lambda x, y: jnp.ones_like(x), lambda x, y: x, lambda x, y: x * x, lambda x, y: x * x * x,
    lambda x, y: 1 / x, lambda x, y: 1 / (x * x), lambda x, y: csqrt(x), lambda x, y: 1 / csqrt(x))


@jax.custom_jvp
def cpow_scalar(x, y):
    """Complex ``x ** y`` for a 0-d exponent ``y`` (of x's dtype), with torch's exact special exponents; its
    derivative is :func:`pow`'s (torch's ``pow_backward`` is the generic formula for these too)."""
    yr = jnp.real(y)
    idx = jnp.zeros((), jnp.int32)
    for k, v in enumerate(_CPOW_SPECIAL):
        idx = jnp.where(yr == v, k + 1, idx)
    idx = jnp.where(jnp.imag(y) == 0, idx, 0)
    return jax.lax.switch(idx, _CPOW_BRANCHES, x, jnp.broadcast_to(y, ()))


@functools.partial(cpow_scalar.defjvp, symbolic_zeros=True)
def _cpow_scalar_jvp(primals, tangents):
    x, y = primals  # (exponent 0: pow_scalar's base 1 in the unselected branch, so x ** 0's 2nd derivative is 0)
    return cpow_scalar(x, y), _pow_jvp((jnp.where(y == 0, jnp.ones((), x.dtype), x), y), tangents)[1]


@jax.custom_jvp
def inf_dist(d):
    """The inf-norm distance along the last axis of coordinate differences ``d``, torch's CPU cdist for p = inf:
    ``std::max`` from 0 over ``|d|`` (a NaN is skipped), with its ``_cdist_backward``: ``sign(d) * (1 - min(1,
    ceil(||d| - dist|)))``, the whole gradient at every coordinate tied with the distance, NaN where ``|d| - dist``
    is NaN."""
    a = jnp.abs(d)
    return jnp.max(jnp.where(jnp.isnan(a), jnp.zeros((), a.dtype), a), axis=-1)


@inf_dist.defjvp
def _inf_dist_jvp(primals, tangents):
    (d,), (t,) = primals, tangents
    r = inf_dist(d)
    e = jnp.abs(d) - r[..., None]
    c = jnp.where(jnp.isnan(e), jnp.asarray(jnp.nan, d.dtype), jnp.where(e == 0, jnp.sign(d), jnp.zeros((), d.dtype)))
    return r, jnp.sum(c * t, axis=-1)
