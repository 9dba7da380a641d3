"""``torch.special``'s kernels, and the top-level / Tensor forms PyTorch gives some of them (``logit``, ``i0``,
``sinc``, ``polygamma``, ``mvlgamma``, ``igamma``/``igammac``, ``xlogy_``).

Ops with their own kernel in PyTorch are op-table rows here; the ``torch.special`` names of existing ops
(``expit`` = sigmoid, ``gammaln`` = lgamma, ``psi`` = digamma ...) are bound in ``functorch_lite/special.py``.
Gradients are PyTorch's derivatives.yaml formulas (``custom_jvp``), so edge points (``i1`` at 0, ``entr`` at 0,
``logit`` at its clamp bounds) agree; where PyTorch has no derivative for an input (``igamma``'s first,
``zeta``'s first) backward raises its ``NotImplementedError``. The Bessel, Airy and orthogonal-polynomial
kernels are ports of PyTorch's ``ATen/native/Math.h`` (its Cephes coefficients, branches and recurrences), so
the values are PyTorch's rather than another library's.

    >>> import functorch_lite as torch
    >>> torch.special.bessel_j0(torch.tensor([0.0, 2.404825557695773]))
    tensor([1.0000e+00, 5.1469e-08])
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero

from .. import _promotion as P
from .. import dtypes as D
from .._promotion import no_kernel
from . import _dispatch, _rounding
from ._registry import OPS, defop
from .elementwise import _digamma, _tensors_only, _trigamma
from .grad_overrides import _lin

_sp = jax.scipy.special


# ---- helpers -----------------------------------------------------------------------------------------------
_opmath = D.in_opmath  # (float16/bfloat16 computed in float32, rounded once: PyTorch's CPU kernels)


def _unary(f, deriv):
    """``f`` with PyTorch's derivative formula: ``d f(x) = deriv(x, f(x)) * dx``."""
    g = jax.custom_jvp(f)

    @g.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = g(x)
        return y, deriv(x, y) * t
    return g


def _not_implemented(what):
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


def _binary(f, dx, dy, no_dx=None):
    """``f(x, y)`` with PyTorch's derivative formulas ``dx(x, y, r)``, ``dy(x, y, r)``; ``no_dx``: PyTorch has
    no derivative for ``x`` (backward through it raises, naming ``no_dx``)."""
    g = jax.custom_jvp(f)

    def _jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        r = g(x, y)
        if no_dx is not None and not isinstance(tx, SymbolicZero):
            raise _not_implemented(no_dx)
        pairs = [] if no_dx is not None or isinstance(tx, SymbolicZero) else [(dx(x, y, r), tx)]
        if not isinstance(ty, SymbolicZero):
            pairs.append((dy(x, y, r), ty))
        return r, _lin(r, *pairs)
    g.defjvp(_jvp, symbolic_zeros=True)
    return g


def _c(v, x):
    return jnp.asarray(v, x.dtype)


def _float_kernels(op, sig, sargs):
    """Default-float results for int/bool inputs; PyTorch's kernel has float32/float64 only (no Half, BFloat16,
    complex)."""
    casts, outs = P.rule_float(op, sig, sargs)
    if outs[0] in (D.float16, D.bfloat16) or outs[0].is_complex:
        raise no_kernel(op.kernel, outs[0])
    return casts, outs


def _scalar_name(base):
    """grad_fn name by which argument is a Python number: ``<base>0`` (both tensors), ``1`` (self), ``2``."""
    def name(targs, sargs):
        from .._tensor.tensor import Tensor
        if not isinstance(targs[0], Tensor):
            return base + "1"
        return base + ("0" if isinstance(targs[1], Tensor) else "2")
    return name


def _inplace_method(opname, name=None):
    def f(self, *args):
        op = OPS[opname]
        return _dispatch.inplace(op, (self,) + args[:len(op.tensor_names) - 1], tuple(args[len(op.tensor_names) - 1:]))
    f.__name__ = f.__qualname__ = name or opname + "_"
    f.__doc__ = f"``Tensor.{f.__name__}``: in-place ``{opname}``."
    return f


# ---- logit, sinc, entr ---------------------------------------------------------------------------------------
def _logit_bounds(eps, x, rnd):
    """``(eps, 1 - eps)`` in the kernel's scalar type (``rnd``): torch's float16 / bfloat16 kernel computes them in
    half, where ``1 - 1e-6`` is 1 (a clamped 1 is then ``inf``, not ``log((1 - eps) / eps)``)."""
    lo = rnd(_c(eps, x))
    return lo, rnd(1 - lo)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _logit_k(x, eps, half=None):
    """``half``: a float16 / bfloat16 input's dtype; ``x`` is then in float32 and every step is rounded to ``half``,
    as torch's half kernel computes (``x / (1 - x)`` is stored before its ``log``)."""
    rnd = (lambda v: v) if half is None else (lambda v: _rounding.stored(v, half))
    if eps >= 0:
        lo, hi = _logit_bounds(eps, x, rnd)
        x = jnp.where(x < lo, lo, jnp.where(x > hi, hi, x))
    return jnp.log(rnd(x / rnd(1 - x)))


@_logit_k.defjvp
def _logit_jvp(eps, half, primals, tangents):
    (x,), (t,) = primals, tangents
    d = 1 / (x * (1 - x))
    if eps >= 0:
        lo, hi = _logit_bounds(eps, x, (lambda v: v) if half is None else (lambda v: _rounding.stored(v, half)))
        d = jnp.where((x < lo) | (x > hi), jnp.zeros((), x.dtype), d)
    else:
        d = jnp.where((x < 0) | (x > 1), jnp.full((), jnp.nan, x.dtype), d)
    return _logit_k(x, eps, half), d * t  # a coefficient times the tangent: JAX transposes it (a NaN one too)


@defop(kernel="logit_cpu", promote="float", grad_fn="LogitBackward0", inplace=True)
def logit(input, eps=None):
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to ``[eps, 1 - eps]`` (gradient 0 outside)."""
    half = input.dtype if input.dtype in (jnp.float16, jnp.bfloat16) else None
    return _opmath(lambda x: _logit_k(x, -1.0 if eps is None else float(eps), half))(input)


def _sinc_f(x):
    p = _c(math.pi, x) * x
    return jnp.where(x == 0, jnp.ones((), x.dtype), jnp.sin(p) / jnp.where(x == 0, jnp.ones((), x.dtype), p))


def _sinc_d(x, y):
    pi = _c(math.pi, x)
    safe = jnp.where(x == 0, jnp.ones((), x.dtype), x)
    d = (pi * safe * jnp.cos(pi * safe) - jnp.sin(pi * safe)) / (pi * safe * safe)
    return jnp.where(x == 0, jnp.zeros((), x.dtype), d)


_sinc = _unary(_sinc_f, _sinc_d)


@defop(kernel="sinc_cpu", promote="float", grad_fn="SincBackward0", inplace=True)
def sinc(input):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    return _opmath(_sinc)(input)


def _entr_f(x):
    z = jnp.zeros((), x.dtype)
    r = jnp.where(x > 0, -x * jnp.log(jnp.where(x > 0, x, jnp.ones((), x.dtype))),
                  jnp.where(x == 0, z, jnp.full((), -jnp.inf, x.dtype)))
    return jnp.where(jnp.isnan(x), x, r)


_entr = _unary(_entr_f, lambda x, y: -(1 + jnp.log(x)))


@defop(kernel="entr_cpu", promote="float", grad_fn="SpecialEntrBackward0", function=False, method=False)
def entr(input):
    """``-x log x`` (0 at 0, ``-inf`` below)."""
    return _opmath(_entr)(input)


# ---- Bessel I (Cephes via jax.scipy.special), erfcx, normal distribution -------------------------------------
def _sgn(x):
    return jnp.sign(x)


def _i1_d(x, y):
    return jnp.where(x == 0, _c(0.5, x), _sp.i0(x) - y / jnp.where(x == 0, jnp.ones((), x.dtype), x))


def _i1e_d(x, y):
    safe = jnp.where(x == 0, jnp.ones((), x.dtype), x)
    return jnp.where(x == 0, _c(0.5, x), _sp.i0e(x) - y * (_sgn(x) + 1 / safe))


_i0 = _unary(_sp.i0, lambda x, y: _sp.i1(x))
_i0e = _unary(_sp.i0e, lambda x, y: _sp.i1e(x) - _sgn(x) * y)
_i1 = _unary(_sp.i1, _i1_d)
_i1e = _unary(_sp.i1e, _i1e_d)


@defop(kernel="i0_vml_cpu", promote="float", grad_fn="I0Backward0", inplace=True)
def i0(input):
    """Modified Bessel function of the first kind, order 0."""
    return _opmath(_i0)(input)


@defop(kernel="i0e_cpu", promote="float", grad_fn="SpecialI0EBackward0", function=False, method=False)
def i0e(input):
    """Exponentially scaled ``i0``: ``exp(-|x|) i0(x)``."""
    return _opmath(_i0e)(input)


@defop(kernel="i1_cpu", promote="float", grad_fn="SpecialI1Backward0", function=False, method=False)
def i1(input):
    """Modified Bessel function of the first kind, order 1."""
    return _opmath(_i1)(input)


@defop(kernel="i1e_cpu", promote="float", grad_fn="SpecialI1EBackward0", function=False, method=False)
def i1e(input):
    """Exponentially scaled ``i1``: ``exp(-|x|) i1(x)``."""
    return _opmath(_i1e)(input)


def _erfcx_f(x):
    """``exp(x^2) erfc(x)``: directly while ``erfc(x)`` is a normal number, then the asymptotic series
    ``1 / (x sqrt(pi)) * sum (-1)^n (2n-1)!! / (2x^2)^n``. (jax.scipy's switches where ``exp(x^2)`` overflows,
    9.42 in float32, 26.6 in float64; just below that ``erfc`` is subnormal, which XLA's CPU backend flushes: it
    gave 0 on [9.2, 9.42] and [26.54, 26.64], and log_ndtr -inf on the matching band. No half types: torch has
    no kernel for them, ``_float_kernels``.)"""
    at, nterms = (26.0, 9) if x.dtype == jnp.float64 else (9.0, 5)
    large = x > at
    safe = jnp.where(large, jnp.ones((), x.dtype), x)
    direct = jnp.exp(safe * safe) * jax.lax.erfc(safe)
    big = jnp.where(large, x, jnp.full((), at, x.dtype))
    inv = 1 / (2 * big * big)
    term, total = jnp.ones((), x.dtype), jnp.ones((), x.dtype)
    for n in range(1, nterms):
        term = term * -(2 * n - 1) * inv
        total = total + term
    return jnp.where(large, total / (big * _c(math.sqrt(math.pi), x)), direct)


_erfcx = _unary(_erfcx_f, lambda x, y: 2 * x * y - _c(2 / math.sqrt(math.pi), x))


@defop(kernel="erfcx_cpu", promote=_float_kernels, grad_fn="SpecialErfcxBackward0", function=False, method=False)
def erfcx(input):
    """Scaled complementary error function ``exp(x^2) erfc(x)``."""
    return _erfcx(input)


@defop(kernel="mul_cpu_reduced_float", promote="float", grad_fn="MulBackward1", function=False, method=False)
def ndtr(input):
    """Standard normal CDF, PyTorch's formula ``(1 + erf(x / sqrt(2))) * 0.5`` (a composite there: its grad_fn is
    the last multiplication's)."""
    def f(x):
        return (1 + _sp.erf(x * _c(math.sqrt(0.5), x))) * _c(0.5, x)
    return _opmath(f)(input)


_ndtri = _unary(_sp.ndtri, lambda x, y: _c(math.sqrt(2 * math.pi), x) * jnp.exp(y * y / 2))


@defop(kernel="ndtri_cpu", promote=_float_kernels, grad_fn="SpecialNdtriBackward0", function=False, method=False)
def ndtri(input):
    """Inverse of the standard normal CDF."""
    return _ndtri(input)


def _log_ndtr_f(x):
    t = x * _c(math.sqrt(0.5), x)
    lo = jnp.log(_erfcx_f(-t) / 2) - t * t
    return jnp.where(x < -1, lo, jnp.log1p(-_sp.erfc(t) / 2))


_log_ndtr = _unary(_log_ndtr_f, lambda x, y: jnp.exp(-(y + x * x / 2)) / _c(math.sqrt(2 * math.pi), x))


@defop(kernel="log_ndtr_cpu", promote=_float_kernels, grad_fn="SpecialLogNdtrBackward0", function=False,
       method=False)
def log_ndtr(input):
    """``log(ndtr(x))``, accurate in the left tail."""
    return _log_ndtr(input)


# ---- binary: xlog1py, zeta, igamma / igammac ------------------------------------------------------------------
def _xlog1py_f(x, y):
    r = jnp.where(x == 0, jnp.zeros((), x.dtype), x * jnp.log1p(y))
    return jnp.where(jnp.isnan(y), y, r)


def _xlog1py_dx(x, y, r):
    # PyTorch's derivative in x: log1p(y), at x == 0 too, but 0 where x == 0 and y <= -1 (its masked_fill)
    return jnp.where((x == 0) & (y <= -1), jnp.zeros((), x.dtype), jnp.log1p(y))


_xlog1py = _binary(_xlog1py_f, _xlog1py_dx, lambda x, y, r: x / (y + 1))


@defop(kernel="xlog1py_cpu", promote="float", grad_fn=_scalar_name("SpecialXlog1PyBackward"), tensors=2,
       function=False, method=False)
def xlog1py(input, other):
    """``x * log1p(y)``, 0 where ``x == 0`` (NaN where ``y`` is NaN)."""
    return _opmath(_xlog1py)(input, other)


def _zeta_f(x, q):
    r = _sp.zeta(x, q)
    inf, nan = jnp.full((), jnp.inf, r.dtype), jnp.full((), jnp.nan, r.dtype)
    # where JAX's series gives NaN for a large x, the sum is its first term (cephes' loop returns there): q ** -x
    r = jnp.where(jnp.isnan(r) & (x > 1) & (q > 0) & (q < jnp.inf) & ((x < jnp.inf) | (q < 1)), q ** -x, r)
    # (a negative non-integer q with an integer x: its term nearest a pole overflows there)
    r = jnp.where(jnp.isnan(r) & (x > 1) & (q < 0) & (x == jnp.floor(x)), inf, r)
    # torch's (cephes') order of its domain checks: x == 1 a pole, x < 1 NaN, then a non-positive integer q a pole
    # (a NaN x too), a non-positive q with a non-integer x NaN
    pole = (q <= 0) & (q == jnp.floor(q))
    r = jnp.where(pole, inf, jnp.where((q <= 0) & (x != jnp.floor(x)), nan, r))
    r = jnp.where(x == 1, inf, jnp.where(x < 1, nan, r))
    return jnp.where(jnp.isposinf(x) & (q == 1), jnp.ones((), r.dtype), r)  # 1 ** -inf, where JAX gives NaN


_zeta = _binary(_zeta_f, None, lambda x, q, r: -x * _zeta_f(x + 1, q), no_dx="zeta")


@defop(kernel="zeta_cpu", promote=_float_kernels, grad_fn=_scalar_name("SpecialZetaBackward"), tensors=2,
       function=False, method=False)
def zeta(input, other):
    """Hurwitz zeta function ``sum_k (k + q) ** -x``; no derivative in ``x`` (as PyTorch)."""
    return _zeta(input, other)


def _igamma_edges(fn, at_inf_a):
    """PyTorch's edge values where JAX gives NaN: ``a = inf`` (finite ``x >= 0``; NaN at ``x = inf``), ``a = 0``
    with ``x > 0``. float32 computes in float64, rounded once: JAX's float32 series and continued fraction are
    off by 1e-5 relative (``P(30, 30)``) to 30% (``Q(1e-8, 1e-8)``)."""
    def f(a, x):
        r = fn(a.astype(jnp.float64), x.astype(jnp.float64)).astype(a.dtype) if a.dtype == jnp.float32 else fn(a, x)
        r = jnp.where((a == 0) & (x > 0), _c(1.0 - at_inf_a, r), r)
        r = jnp.where(jnp.isinf(a) & ~jnp.isinf(x) & (x >= 0), _c(at_inf_a, r), r)
        return jnp.where(jnp.isinf(a) & jnp.isinf(x), _c(jnp.nan, r), r)
    return f


def _igamma_dx(a, x, r):
    return jnp.exp((a - 1) * jnp.log(x) - x - _sp.gammaln(a))


_igamma = _binary(_igamma_edges(_sp.gammainc, 0.0), None, _igamma_dx, no_dx="igamma: input")
_igammac = _binary(_igamma_edges(_sp.gammaincc, 1.0), None, lambda a, x, r: -_igamma_dx(a, x, r),
                   no_dx="igammac: input")


@defop(kernel="igamma_cpu", promote=_tensors_only("float_only"), grad_fn="IgammaBackward0", tensors=2)
def igamma(input, other):
    """Regularized lower incomplete gamma function ``P(a, x)``; no derivative in ``a`` (as PyTorch)."""
    return _opmath(_igamma)(input, other)


@defop(kernel="igammac_cpu", promote=_tensors_only("float_only"), grad_fn="IgammacBackward0", tensors=2)
def igammac(input, other):
    """Regularized upper incomplete gamma function ``Q(a, x)``; no derivative in ``a`` (as PyTorch)."""
    return _opmath(_igammac)(input, other)


# ---- polygamma, mvlgamma ------------------------------------------------------------------------------------
def _polygamma_f(n, x):
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    # PyTorch's formula (its poles at the non-positive integers are zeta's)
    sign = 1.0 if n % 2 else -1.0
    return sign * jnp.exp(_sp.gammaln(_c(n + 1.0, x))) * _zeta_f(_c(n + 1.0, x), x)


_polygamma_k = jax.custom_jvp(_polygamma_f, nondiff_argnums=(0,))


@_polygamma_k.defjvp
def _polygamma_jvp(n, primals, tangents):
    (x,), (t,) = primals, tangents
    return _polygamma_k(n, x), _polygamma_k(n + 1, x) * t


def _n_arg(name, v, what="n"):
    if isinstance(v, bool) or not isinstance(v, int):
        if hasattr(v, "__index__") and not isinstance(v, bool):
            return int(v.__index__())
        raise TypeError(f"{name}(): argument '{what}' (position {1 if what == 'n' else 2}) must be int, not "
                        f"{type(v).__name__}")
    return v


def _polygamma_prep(targs, sargs):
    n = _n_arg("polygamma", sargs[0])
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return (n,)


def _polygamma_rule(op, sig, sargs):
    """float8 and complex inputs have no kernel; which kernel torch names depends on the order ``n``."""
    dt = P._first_tensor_dtype(sig)
    if dt in D.FLOAT8 or dt.is_complex:
        n = sargs[0]
        raise no_kernel("digamma" if n == 0 else "trigamma" if n == 1 else "polygamma", dt)
    return P.rule_float(op, sig, sargs)


@defop(kernel="polygamma", promote=_polygamma_rule, float8=True, grad_fn="PolygammaBackward0", function=False,
       prep=_polygamma_prep)
def polygamma(input, n):
    """The ``n``-th derivative of the digamma function (``torch.polygamma(n, input)``, ``input.polygamma(n)``)."""
    return _opmath(lambda x: _polygamma_k(n, x))(input)


def _mvlgamma_prep(targs, sargs):
    p = _n_arg("mvlgamma", sargs[0], "p")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return (p,)


def _mvlgamma_rule(op, sig, sargs):
    if P._first_tensor_dtype(sig) is D.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    return P.rule_float(op, sig, sargs)


@defop(kernel="arange_cpu", promote=_mvlgamma_rule, grad_fn="MvlgammaBackward0", prep=_mvlgamma_prep)
def mvlgamma(input, p):
    """Multivariate log-gamma ``sum_j lgamma(x - j/2) + p(p-1)/4 log(pi)`` (``torch.special.multigammaln``)."""
    def f(x):
        args = jnp.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=x.dtype)
        return _sp.gammaln(x[..., None] + args).sum(-1) + _c(p * (p - 1) * math.log(math.pi) * 0.25, x)
    return _opmath(f)(input)


# ---- Bessel, Airy: ports of PyTorch's ATen/native/Math.h (Cephes) ---------------------------------------------
# coefficient tables, as in Math.h (the y0/y1 asymptotic tables are j0's/j1's, the scaled k0/k1 ones k0's/k1's)
_AIRY_AI_AN = (0.346538101525629, 12.007595273964581, 76.27960536152345, 168.08922493463058, 159.75639135016442,
    70.53609068404442, 14.026469116338967, 1.0)
_AIRY_AI_AD = (0.5675945326387702, 14.75625625848472, 84.51389701414746, 177.31808814540045, 164.2346928715297,
    71.47784008255756, 14.095913560783403, 1.0)
_AIRY_AI_AFN = (-0.1316963234183318, -0.6264565444319123, -0.6931580360369335, -0.2797799815451191,
    -0.04919001326095003, -0.004062659235948854, -0.0001592764962392621, -2.776491081552329e-06,
    -1.6778769848911465e-08)
_AIRY_AI_AFD = (13.356042070655324, 32.682503279522464, 26.736704094149957, 9.187074029072596, 1.4752914677166642,
    0.11568717379518804, 0.004402916416152112, 7.547203482874142e-05, 4.5185009297058035e-07)
_AIRY_AI_AGN = (0.01973399320916857, 0.39110302961568827, 1.0657989759959559, 0.9391692298166502, 0.35146565610554764,
    0.06338889196289255, 0.005858041130483885, 0.000282851600836737, 6.98793669997261e-06, 8.117892395543892e-08,
    3.415517847659236e-10)
_AIRY_AI_AGD = (9.30892908077442, 19.835292871831214, 15.564662893286462, 5.476860694229755, 0.9542936116189619,
    0.08645808263523921, 0.004126565238242226, 0.00010125908511650914, 1.1716673321441352e-06, 4.9183457006293e-09)
_BESSEL_J0_PP = (0.0007969367292973471, 0.08283523921074408, 1.239533716464143, 5.447250030587687, 8.74716500199817,
    5.303240382353949, 1.0)
_BESSEL_J0_PQ = (0.0009244088105588637, 0.08562884743544745, 1.2535274390105895, 5.470977403304171, 8.761908832370695,
    5.306052882353947, 1.0)
_BESSEL_J0_QP = (-0.011366383889846916, -1.2825271867050931, -19.553954425773597, -93.20601521237683,
    -177.68116798048806, -147.07750515495118, -51.41053267665993, -6.050143506007285)
_BESSEL_J0_QQ = (64.3178256118178, 856.4300259769806, 3882.4018360540163, 7240.467741956525, 5930.727011873169,
    2062.0933166032783, 242.0057402402914)
_BESSEL_J0_RP = (-4794432209.782018, 1956174919465.5657, -249248344360967.72, 9708622510473064.0)
_BESSEL_J0_RQ = (499.563147152651, 173785.4016763747, 48440965.83399621, 11185553704.535683, 2112775201154.892,
    310518229857422.56, 3.1812195594320496e+16, 1.7108629408104315e+18)
_BESSEL_J1_PP = (0.0007621256162081731, 0.07313970569409176, 1.1271960812968493, 5.112079511468076, 8.424045901417724,
    5.214515986823615, 1.0)
_BESSEL_J1_PQ = (0.0005713231280725487, 0.06884559087544954, 1.105142326340617, 5.073863861286015, 8.399855543276042,
    5.209828486823619, 1.0)
_BESSEL_J1_QP = (0.05108625947501766, 4.982138729512334, 75.82382841325453, 366.7796093601508, 710.8563049989261,
    597.4896124006136, 211.68875710057213, 25.207020585802372)
_BESSEL_J1_QQ = (74.23732770356752, 1056.4488603826283, 4986.410583376536, 9562.318924047562, 7997.041604473507,
    2826.1927851763908, 336.0936078106983)
_BESSEL_J1_RP = (-899971225.7055594, 452228297998.19403, -72749424522181.83, 3682957328638529.0)
_BESSEL_J1_RQ = (620.8364781180543, 256987.25675774884, 83514679.14319493, 22151159547.97925, 4749141220799.914,
    784369607876235.9, 8.952223361846274e+16, 5.322786203326801e+18)
_BESSEL_Y0_YP = (15592.436785523574, -14663929.59039716, 5435264770.518765, -982136065717.9115, 87590639439536.7,
    -3466283033847297.0, 4.4273326857256984e+16, -1.8495080043698668e+16)
_BESSEL_Y0_YQ = (1041.2835366425984, 626107.330137135, 268919633.39381415, 86400248710.3935, 20297961275010.555,
    3171577528429750.5, 2.5059625617265306e+17)
_BESSEL_Y1_YP = (1263204747.9017804, -647355876379.1603, 114509511541823.73, -8127702555013251.0,
    2.024394757135949e+17, -7.788771962659501e+17)
_BESSEL_Y1_YQ = (594.3015923461282, 235564.09294306856, 73481194.44597217, 18760131610.870617, 3882312774962.3857,
    620557727146953.8, 6.871410873553005e+16, 3.9727060811656064e+18)
_MODIFIED_BESSEL_I0_A = (-4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
    1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13,
    2.95505266312964e-12, -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10,
    2.6598237246823866e-09, -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
    1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05,
    0.00018850288509584165, -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576,
    0.010546460394594998, -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
    -0.3046826723431984, 0.6767952744094761)
_MODIFIED_BESSEL_I0_B = (-7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
    -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
    -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
    1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
    2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943, 0.8044904110141088)
_MODIFIED_BESSEL_I1_A = (2.7779141127610464e-18, -2.111421214358166e-17, 1.5536319577362005e-16,
    -1.1055969477353862e-15, 7.600684294735408e-15, -5.042185504727912e-14, 3.223793365945575e-13,
    -1.9839743977649436e-12, 1.1736186298890901e-11, -6.663489723502027e-11, 3.625590281552117e-10,
    -1.8872497517228294e-09, 9.381537386495773e-09, -4.445059128796328e-08, 2.0032947535521353e-07,
    -8.568720264695455e-07, 3.4702513081376785e-06, -1.3273163656039436e-05, 4.781565107550054e-05,
    -0.00016176081582589674, 0.0005122859561685758, -0.0015135724506312532, 0.004156422944312888,
    -0.010564084894626197, 0.024726449030626516, -0.05294598120809499, 0.1026436586898471, -0.17641651835783406,
    0.25258718644363365)
_MODIFIED_BESSEL_I1_B = (7.517296310842105e-18, 4.414348323071708e-18, -4.6503053684893586e-17,
    -3.209525921993424e-17, 2.96262899764595e-16, 3.3082023109209285e-16, -1.8803547755107825e-15,
    -3.8144030724370075e-15, 1.0420276984128802e-14, 4.272440016711951e-14, -2.1015418427726643e-14,
    -4.0835511110921974e-13, -7.198551776245908e-13, 2.0356285441470896e-12, 1.4125807436613782e-11,
    3.2526035830154884e-11, -1.8974958123505413e-11, -5.589743462196584e-10, -3.835380385964237e-09,
    -2.6314688468895196e-08, -2.512236237870209e-07, -3.882564808877691e-06, -0.00011058893876262371,
    -0.009761097491361469, 0.7785762350182801)
_MODIFIED_BESSEL_K0_A = (1.374465435613523e-16, 4.25981614279661e-14, 1.0349695257633842e-11, 1.904516377220209e-09,
    2.5347910790261494e-07, 2.286212103119452e-05, 0.001264615411446926, 0.0359799365153615, 0.3442898999246285,
    -0.5353273932339028)
_MODIFIED_BESSEL_K0_B = (5.300433772686263e-18, -1.6475804301524212e-17, 5.2103915050390274e-17,
    -1.678231096805412e-16, 5.512055978524319e-16, -1.848593377343779e-15, 6.3400764774050706e-15,
    -2.2275133269916698e-14, 8.032890775363575e-14, -2.9800969231727303e-13, 1.140340588208475e-12,
    -4.514597883373944e-12, 1.8559491149547177e-11, -7.957489244477107e-11, 3.577397281400301e-10,
    -1.69753450938906e-09, 8.574034017414225e-09, -4.660489897687948e-08, 2.766813639445015e-07,
    -1.8317555227191195e-06, 1.39498137188765e-05, -0.00012849549581627802, 0.0015698838857300533,
    -0.0314481013119645, 2.4403030820659555)
_MODIFIED_BESSEL_K1_A = (-7.023863479386288e-18, -2.427449850519366e-15, -6.666901694199329e-13,
    -1.4114883926335278e-10, -2.213387630734726e-08, -2.4334061415659684e-06, -0.0001730288957513052,
    -0.006975723859639864, -0.12261118082265715, -0.3531559607765449, 1.5253002273389478)
_MODIFIED_BESSEL_K1_B = (-5.756744483665017e-18, 1.7940508731475592e-17, -5.689462558442859e-17,
    1.838093544366639e-16, -6.057047248373319e-16, 2.038703165624334e-15, -7.019837090418314e-15,
    2.4771544244813043e-14, -8.976705182324994e-14, 3.3484196660784293e-13, -1.2891739609510289e-12,
    5.13963967348173e-12, -2.1299678384275683e-11, 9.218315187605006e-11, -4.1903547593418965e-10,
    2.015049755197033e-09, -1.0345762465678097e-08, 5.7410841254500495e-08, -3.5019606030878126e-07,
    2.406484947837217e-06, -1.936197974166083e-05, 0.00019521551847135162, -0.002857816859622779, 0.10392373657681724,
    2.7206261904844427)


def _horner(coeffs, z):
    acc = 0.0
    for c in coeffs:
        acc = acc * z + c
    return acc


def _clenshaw(coeffs, z):
    """Math.h's Chebyshev-series loop: ``0.5 * (a - p)`` after running over all coefficients."""
    p = q = 0.0
    a = coeffs[0]
    for c in coeffs[1:]:
        p, q = q, a
        a = z * q - p + c
    return 0.5 * (a - p)


def _ones(x):
    return jnp.ones((), x.dtype)


def _nan(x):
    return jnp.full((), jnp.nan, x.dtype)


def _inf(x, sign=1):
    return jnp.full((), sign * jnp.inf, x.dtype)


_PIO4, _3PIO4, _SQ2OPI, _TWOOPI = (0.785398163397448309615660845819875721, 2.356194490192344928846982537459627163,
                                   0.797884560802865355879892119868763737, 0.636619772367581343075535053490057448)


def _j_asym(x, pp, pq, qp, qq, w, shift, sin_first):
    p = _horner(pp, w) / _horner(pq, w)
    q = _horner(qp, w) / _horner(qq, w)
    s, c = jnp.sin(x - shift), jnp.cos(x - shift)
    main = p * s + 5.0 / x * q * c if sin_first else p * c - 5.0 / x * q * s
    return main * _SQ2OPI / jnp.sqrt(x)


def _bessel_j0(x):
    x = jnp.abs(x)
    z = x * x
    mid = (z - 5.78318596294678452118e+00) * (z - 3.04712623436620863991e+01) * \
        _horner(_BESSEL_J0_RP, z) / _horner(_BESSEL_J0_RQ, z)
    big = _j_asym(x, _BESSEL_J0_PP, _BESSEL_J0_PQ, _BESSEL_J0_QP, _BESSEL_J0_QQ, 25.0 / (x * x), _PIO4, False)
    return jnp.where(x <= 5.0, jnp.where(x < 0.00001, 1.0 - z / 4.0, mid), big)


def _bessel_j1(x):
    a = jnp.where(x < 0, -x, x)
    z = a * a
    mid = _horner(_BESSEL_J1_RP, z) / _horner(_BESSEL_J1_RQ, z) * a * (z - 1.46819706421238932572e+01) * \
        (z - 4.92184563216946036703e+01)
    big = _j_asym(a, _BESSEL_J1_PP, _BESSEL_J1_PQ, _BESSEL_J1_QP, _BESSEL_J1_QQ, 5.0 / a * (5.0 / a), _3PIO4, False)
    r = jnp.where(a <= 5.0, mid, big)
    return jnp.where(x < 0, -r, r)


def _bessel_y0(x):
    z = x * x
    small = _horner(_BESSEL_Y0_YP, z) / _horner(_BESSEL_Y0_YQ, z) + _TWOOPI * jnp.log(x) * _bessel_j0(x)
    small = jnp.where(x == 0, _inf(x, -1), jnp.where(x < 0, _nan(x), small))
    big = _j_asym(x, _BESSEL_J0_PP, _BESSEL_J0_PQ, _BESSEL_J0_QP, _BESSEL_J0_QQ, 25.0 / (x * x), _PIO4, True)
    return jnp.where(x <= 5.0, small, big)


def _bessel_y1(x):
    z = x * x
    small = x * (_horner(_BESSEL_Y1_YP, z) / _horner(_BESSEL_Y1_YQ, z)) + \
        _TWOOPI * (_bessel_j1(x) * jnp.log(x) - 1.0 / x)
    small = jnp.where(x == 0, _inf(x, -1), jnp.where(x < 0, _nan(x), small))
    big = _j_asym(x, _BESSEL_J1_PP, _BESSEL_J1_PQ, _BESSEL_J1_QP, _BESSEL_J1_QQ, 5.0 / x * (5.0 / x), _3PIO4, True)
    return jnp.where(x <= 5.0, small, big)


def _modified_i0(x):
    a = jnp.abs(x)
    small = jnp.exp(a) * _clenshaw(_MODIFIED_BESSEL_I0_A, a / 2.0 - 2.0)
    big = jnp.exp(a) * _clenshaw(_MODIFIED_BESSEL_I0_B, 32.0 / a - 2.0) / jnp.sqrt(a)
    return jnp.where(a <= 8.0, small, big)


def _modified_i1(x):
    a = jnp.abs(x)
    small = _clenshaw(_MODIFIED_BESSEL_I1_A, a / 2.0 - 2.0) * a * jnp.exp(a)
    big = jnp.exp(a) * _clenshaw(_MODIFIED_BESSEL_I1_B, 32.0 / a - 2.0) / jnp.sqrt(a)
    r = jnp.where(a <= 8.0, small, big)
    return jnp.where(x < 0, -r, r)


def _k_edges(x, r):
    return jnp.where(x == 0, _inf(x), jnp.where(x < 0, _nan(x), r))


def _k0_parts(x):
    small = _clenshaw(_MODIFIED_BESSEL_K0_A, x * x - 2.0) - jnp.log(0.5 * x) * _modified_i0(x)
    return small, _clenshaw(_MODIFIED_BESSEL_K0_B, 8.0 / x - 2.0) / jnp.sqrt(x)


def _k1_parts(x):
    small = jnp.log(0.5 * x) * _modified_i1(x) + _clenshaw(_MODIFIED_BESSEL_K1_A, x * x - 2.0) / x
    return small, _clenshaw(_MODIFIED_BESSEL_K1_B, 8.0 / x - 2.0) / jnp.sqrt(x)


def _modified_k0(x):
    small, big = _k0_parts(x)
    return _k_edges(x, jnp.where(x <= 2.0, small, jnp.exp(-x) * big))


def _modified_k1(x):
    small, big = _k1_parts(x)
    return _k_edges(x, jnp.where(x <= 2.0, small, jnp.exp(-x) * big))


def _scaled_k0(x):
    small, big = _k0_parts(x)
    return _k_edges(x, jnp.where(x <= 2.0, small * jnp.exp(x), big))


def _scaled_k1(x):
    small, big = _k1_parts(x)
    return _k_edges(x, jnp.where(x <= 2.0, small * jnp.exp(x), big))


def _airy_ai(x):
    one = _ones(x)
    # x < -2.09: the oscillating asymptotic form
    nx = jnp.where(x < -2.09, -x, one)
    zeta_n = -2.0 * -nx * jnp.sqrt(nx) / 3.0
    z = 1.0 / zeta_n
    zz = z * z
    t = zeta_n + 0.25 * math.pi
    neg = 5.64189583547756286948e-01 / jnp.sqrt(jnp.sqrt(nx)) * (
        jnp.sin(t) * (1.0 + zz * _horner(_AIRY_AI_AFN, zz) / _horner(_AIRY_AI_AFD, zz))
        - jnp.cos(t) * (z * _horner(_AIRY_AI_AGN, zz) / _horner(_AIRY_AI_AGD, zz)))
    # x >= 2.09: the decaying asymptotic form
    px = jnp.where(x >= 2.09, x, one)
    zeta_p = 2.0 * px * jnp.sqrt(px) / 3.0
    pos = 5.64189583547756286948e-01 * (_horner(_AIRY_AI_AN, 1.0 / zeta_p) / _horner(_AIRY_AI_AD, 1.0 / zeta_p)) / \
        (2.0 * jnp.sqrt(jnp.sqrt(px)) * jnp.exp(zeta_p))
    # |x| < 2.09: the power series, summed until its terms fall below the dtype's epsilon
    sx = jnp.where((x >= -2.09) & (x < 2.09), x, jnp.zeros((), x.dtype))
    eps = jnp.finfo(x.dtype).eps
    zs = sx * sx * sx

    def body(s):
        f, g, k, m, n, t, act = s
        m2 = m * zs
        k2 = k + 1.0
        m2 = m2 / k2
        n2 = n * zs
        k2 = k2 + 1.0
        n2 = n2 / k2
        m2 = m2 / k2
        f2 = f + m2
        k2 = k2 + 1.0
        n2 = n2 / k2
        g2 = g + n2
        t2 = jnp.abs(m2 / f2)
        new = (f2, g2, k2, m2, n2, t2)
        old = (f, g, k, m, n, t)
        out = tuple(jnp.where(act, a, b) for a, b in zip(new, old))
        return out + (act & (t2 > eps),)

    init = (one * jnp.ones_like(sx), sx, jnp.ones_like(sx), jnp.ones_like(sx), sx, jnp.ones_like(sx),
            jnp.ones(sx.shape, bool))
    f, g, *_ = jax.lax.while_loop(lambda s: jnp.any(s[-1]), body, init)
    series = 0.355028053887817239260 * f - 0.258819403792806798405 * g
    r = jnp.where(x < -2.09, neg, jnp.where(x >= 2.09, pos, series))
    return jnp.where(jnp.isinf(x) | jnp.isnan(x), _nan(x), jnp.where(x > 103.892, jnp.zeros((), x.dtype), r))


def _spherical_j0(x):
    z = x * x
    small = 1.0 + z * (-1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (
        1.0 / 362880.0 + z * (-1.0 / 39916800.0 + z * (1.0 / 6227020800.0))))))
    r = jnp.where(jnp.abs(x) < 0.5, small, jnp.sin(x) / x)
    return jnp.where(jnp.isinf(x), jnp.zeros((), x.dtype), r)


def _no_grad_unary(name, fn, doc):
    def impl(input):
        return fn(input)
    impl.__name__ = name
    impl.__doc__ = doc
    defop(name, kernel=f"{name}_cpu", promote=_float_kernels, differentiable=False, function=False,
          method=False)(impl)


for _n, _f, _d in [
    ("bessel_j0", _bessel_j0, "Bessel function of the first kind, order 0."),
    ("bessel_j1", _bessel_j1, "Bessel function of the first kind, order 1."),
    ("bessel_y0", _bessel_y0, "Bessel function of the second kind, order 0."),
    ("bessel_y1", _bessel_y1, "Bessel function of the second kind, order 1."),
    ("modified_bessel_i0", _modified_i0, "Modified Bessel function of the first kind, order 0."),
    ("modified_bessel_i1", _modified_i1, "Modified Bessel function of the first kind, order 1."),
    ("modified_bessel_k0", _modified_k0, "Modified Bessel function of the second kind, order 0."),
    ("modified_bessel_k1", _modified_k1, "Modified Bessel function of the second kind, order 1."),
    ("scaled_modified_bessel_k0", _scaled_k0, "``exp(x) * modified_bessel_k0(x)``."),
    ("scaled_modified_bessel_k1", _scaled_k1, "``exp(x) * modified_bessel_k1(x)``."),
    ("airy_ai", _airy_ai, "Airy function Ai."),
    ("spherical_bessel_j0", _spherical_j0, "Spherical Bessel function of the first kind, order 0."),
]:
    _no_grad_unary(_n, _f, _d)


# ---- orthogonal polynomials: Math.h's branches and three-term recurrences ------------------------------------
def _order(n):
    """PyTorch casts ``n`` to int64 (truncating); a non-finite ``n`` acts as a negative one (the polynomial is 0)."""
    return jnp.where(jnp.isfinite(n), jnp.trunc(n), -jnp.ones((), n.dtype))


def _even(n):
    return jnp.fmod(n, 2) == 0


def _recur(x, n, k0, p0, q0, step, until, need):
    """``r = step(k, p, q); p, q = q, r`` from ``k = k0``, per element while ``need`` and ``until(k, n)``;
    returns the last ``q``."""
    def body(s):
        k, p, q, act = s
        r = step(k, p, q)
        p2, q2 = jnp.where(act, q, p), jnp.where(act, r, q)
        k2 = k + (2.0 if until is _until_2n else 1.0)
        return k2, p2, q2, act & until(k2, n)

    k = jnp.asarray(k0, x.dtype)
    init = (k, jnp.broadcast_to(p0, x.shape).astype(x.dtype), jnp.broadcast_to(q0, x.shape).astype(x.dtype),
            need & until(k, n))
    return jax.lax.while_loop(lambda s: jnp.any(s[3]), body, init)[2]


def _until_le(k, n):
    return k <= n


def _until_lt(k, n):
    return k < n


def _until_2n(k, n):
    return k < n + n


def _twoterm(y, n, q0, big_n, big):
    """The Chebyshev families: 1, q0 for n = 0, 1; ``cos``/``sin`` closed forms for ``n > big_n`` inside
    (-1, 1); else the recurrence ``r = 2y q - p``."""
    one = _ones(y)
    closed = (n > big_n) & (jnp.abs(y) < 1)
    r = _recur(y, n, 2.0, one, q0, lambda k, p, q: (y + y) * q - p, _until_le, ~closed & (n >= 2))
    r = jnp.where(n == 1, q0, jnp.where(n == 0, one, r))
    return jnp.where(closed, big, r)


def _chebyshev_t(x, n, shifted=False):
    y = x + x - 1.0 if shifted else x
    r = _twoterm(y, n, y, 6, jnp.cos(n * jnp.arccos(y)))
    return r


def _u_closed(y, n):
    t = jnp.arccos(y)
    return jnp.where(jnp.sin(t) != 0, jnp.sin((n + 1) * t) / jnp.sin(t), (n + 1) * jnp.cos((n + 1) * t) / y)


def _v_closed(y, n):
    t = jnp.arccos(y)
    alt = jnp.where(_even(n), n + n + 1, -(n + n + 1))
    return jnp.where(jnp.sin(t / 2.0) != 1, jnp.cos((n + 0.5) * t) / jnp.cos(t / 2.0), alt)


def _w_closed(y, n, at_one):
    t = jnp.arccos(y)
    return jnp.where(jnp.cos(t / 2.0) != 1, jnp.sin((n + 0.5) * t) / jnp.sin(t / 2.0), at_one)


def _chebyshev_t_k(x, n):
    r = _chebyshev_t(x, n)
    r = jnp.where(jnp.abs(x) == 1, jnp.where((x > 0) | _even(n), 1.0, -1.0).astype(x.dtype), r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _chebyshev_u_k(x, n):
    r = _twoterm(x, n, x + x, 8, _u_closed(x, n))
    r = jnp.where(jnp.abs(x) == 1, jnp.where((x > 0) | _even(n), n + 1, -(n + 1)), r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _chebyshev_v_k(x, n):
    r = _twoterm(x, n, x + x - 1.0, 8, _v_closed(x, n))
    r = jnp.where(jnp.abs(x) == 1, jnp.where(x > 0, _ones(x), jnp.where(_even(n), n + n + 1, -(n + n + 1))), r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _chebyshev_w_k(x, n):
    one = _ones(x)
    pm1 = jnp.where(_even(n), one, -one)
    r = _twoterm(x, n, x + x + 1.0, 8, _w_closed(x, n, jnp.where(x > 0, n + n + 1, pm1)))
    r = jnp.where(jnp.abs(x) == 1, jnp.where(x > 0, n + n + 1, pm1), r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _shifted_t_k(x, n):
    y = x + x - 1.0
    r = _twoterm(y, n, y, 6, jnp.cos(n * jnp.arccos(y)))
    r = jnp.where(x == 0, jnp.where(_even(n), 1.0, -1.0).astype(x.dtype), r)
    r = jnp.where(x == 1, _ones(x), r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _shifted_u_k(x, n):
    y = x + x - 1.0
    r = _twoterm(y, n, y + y, 6, _u_closed(y, n))
    r = jnp.where(x == 0, jnp.where(_even(n), n + 1, -(n + 1)), r)
    r = jnp.where(x == 1, n + 1, r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _shifted_v_k(x, n):
    y = x + x - 1.0
    r = _twoterm(y, n, y + y - 1.0, 6, _v_closed(y, n))
    r = jnp.where(x == 0, jnp.where(_even(n), n + n + 1, -(n + n + 1)), r)
    r = jnp.where(x == 1, _ones(x), r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _shifted_w_k(x, n):
    y = x + x - 1.0
    one = _ones(x)
    pm1 = jnp.where(_even(n), one, -one)
    r = _twoterm(y, n, y + y + 1.0, 4, _w_closed(y, n, pm1))
    r = jnp.where(x == 0, pm1, r)
    r = jnp.where(x == 1, n + n + 1, r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _hermite_limit(x):
    return 128 if x.dtype == jnp.float32 else 512


def _hermite_h_k(x, n):
    one = _ones(x)
    r = _recur(x, n, 2.0, one, x + x, lambda k, p, q: (x + x) * q - k * p, _until_2n, n >= 2)
    r = jnp.where(n > _hermite_limit(x), _nan(x), r)
    r = jnp.where(n == 1, x + x, jnp.where(n == 0, one, r))
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _hermite_he_k(x, n):
    one = _ones(x)
    r = _recur(x, n, 1.0, one, x, lambda k, p, q: x * q - k * p, _until_lt, n >= 2)
    r = jnp.where(n > _hermite_limit(x), _nan(x), r)
    r = jnp.where(n == 1, x, jnp.where(n == 0, one, r))
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _laguerre_l_k(x, n):
    one = _ones(x)
    r = _recur(x, n, 1.0, one, one - x, lambda k, p, q: (((k + k) + (one - x)) * q - k * p) / (k + 1),
               _until_lt, n >= 2)
    r = jnp.where(n == 1, one - x, jnp.where(n == 0, one, r))
    r = jnp.where(jnp.abs(x) == 0, one, r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _legendre_p_k(x, n):
    one = _ones(x)
    r = _recur(x, n, 1.0, one, x, lambda k, p, q: ((k + k + 1) * x * q - k * p) / (k + 1), _until_lt, n >= 2)
    r = jnp.where(n == 1, x, jnp.where(n == 0, one, r))
    r = jnp.where(jnp.abs(x) == 1, jnp.where((x > 0) | _even(n), one, -one), r)
    return jnp.where(n < 0, jnp.zeros((), x.dtype), r)


def _polynomial(name, fn, doc):
    def impl(input, n):
        x, nn = jnp.broadcast_arrays(input, n)
        return fn(x, _order(nn)).astype(x.dtype)
    impl.__name__ = name
    impl.__doc__ = doc
    defop(name, kernel=f"{name}_cpu", promote=_float_kernels, tensors=2, differentiable=False, function=False,
          method=False, prep=_polynomial_prep(name))(impl)


def _polynomial_prep(name):
    def prep(targs, sargs):
        from .._tensor.tensor import Tensor
        if not any(isinstance(t, Tensor) for t in targs):
            raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                            f"({', '.join(type(t).__name__ for t in targs)}), but expected one of:\n"
                            " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                            " * (Number x, Tensor n, *, Tensor out = None)\n"
                            " * (Tensor x, Number n, *, Tensor out = None)")
        return sargs
    return prep


for _n, _f, _d in [
    ("chebyshev_polynomial_t", _chebyshev_t_k, "Chebyshev polynomial of the first kind ``T_n(x)``."),
    ("chebyshev_polynomial_u", _chebyshev_u_k, "Chebyshev polynomial of the second kind ``U_n(x)``."),
    ("chebyshev_polynomial_v", _chebyshev_v_k, "Chebyshev polynomial of the third kind ``V_n(x)``."),
    ("chebyshev_polynomial_w", _chebyshev_w_k, "Chebyshev polynomial of the fourth kind ``W_n(x)``."),
    ("shifted_chebyshev_polynomial_t", _shifted_t_k, "Shifted Chebyshev polynomial ``T*_n(x) = T_n(2x - 1)``."),
    ("shifted_chebyshev_polynomial_u", _shifted_u_k, "Shifted Chebyshev polynomial ``U*_n(x) = U_n(2x - 1)``."),
    ("shifted_chebyshev_polynomial_v", _shifted_v_k, "Shifted Chebyshev polynomial ``V*_n(x) = V_n(2x - 1)``."),
    ("shifted_chebyshev_polynomial_w", _shifted_w_k, "Shifted Chebyshev polynomial ``W*_n(x) = W_n(2x - 1)``."),
    ("hermite_polynomial_h", _hermite_h_k, "Physicists' Hermite polynomial ``H_n(x)``."),
    ("hermite_polynomial_he", _hermite_he_k, "Probabilists' Hermite polynomial ``He_n(x)``."),
    ("laguerre_polynomial_l", _laguerre_l_k, "Laguerre polynomial ``L_n(x)``."),
    ("legendre_polynomial_p", _legendre_p_k, "Legendre polynomial ``P_n(x)``."),
]:
    _polynomial(_n, _f, _d)


# ---- the top-level and Tensor forms with PyTorch's argument order ---------------------------------------------
def _polygamma_fn(n, input, *, out=None):
    """``torch.polygamma(n, input)``: the ``n``-th derivative of digamma."""
    return polygamma(input, n, out=out)


_polygamma_fn.__name__ = _polygamma_fn.__qualname__ = "polygamma"


def _xlogy_(self, other):
    """``Tensor.xlogy_(other)`` / ``torch.xlogy_``: in-place ``xlogy``."""
    return _dispatch.inplace(OPS["xlogy"], (self, other), ())


_xlogy_.__name__ = _xlogy_.__qualname__ = "xlogy_"


def igamma_(self, other):
    """``Tensor.igamma_`` (a method only, as in PyTorch)."""
    return _dispatch.inplace(OPS["igamma"], (self, other), ())


def igammac_(self, other):
    """``Tensor.igammac_`` (a method only, as in PyTorch)."""
    return _dispatch.inplace(OPS["igammac"], (self, other), ())


METHODS = {"polygamma_": _inplace_method("polygamma"), "mvlgamma_": _inplace_method("mvlgamma"),
           "igamma_": igamma_, "igammac_": igammac_, "xlogy_": _xlogy_}
FUNCTIONS = {"polygamma": _polygamma_fn, "xlogy_": _xlogy_}
