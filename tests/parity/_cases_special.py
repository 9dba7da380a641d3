"""Op-table sweep cases for the special ops; merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))`` for differentiable ops, ``FORWARD_ONLY``
likewise for ops without a gradient; ``mod`` is torch or functorch_lite.
"""
import numpy as np

R = np.random.default_rng(17)


def _pos(*s):
    return R.uniform(0.5, 2.0, s)


def _rnd(*s):
    return R.standard_normal(s)


def _unit(*s):
    return R.uniform(0.1, 0.9, s)


def _S(m):
    return m.special


def _const(m, like, v):
    """A tensor that does not require grad (the argument PyTorch has no derivative for), in ``like``'s dtype."""
    return m.tensor(np.asarray(v)).to(like.dtype)


CASES = {
    "logit": ([_unit(5)], lambda m, x: m.logit(x) + x.logit(0.3)),
    "sinc": ([_rnd(5)], lambda m, x: m.sinc(x)),
    "entr": ([_pos(5)], lambda m, x: _S(m).entr(x)),
    "i0": ([_rnd(5)], lambda m, x: m.i0(x)),
    "i0e": ([_rnd(5)], lambda m, x: _S(m).i0e(x)),
    "i1": ([_rnd(5)], lambda m, x: _S(m).i1(x)),
    "i1e": ([_rnd(5)], lambda m, x: _S(m).i1e(x)),
    "erfcx": ([_rnd(5)], lambda m, x: _S(m).erfcx(x)),
    "ndtr": ([_rnd(5)], lambda m, x: _S(m).ndtr(x)),
    "ndtri": ([_unit(5)], lambda m, x: _S(m).ndtri(x)),
    "log_ndtr": ([_rnd(5) * 2], lambda m, x: _S(m).log_ndtr(x)),
    "xlog1py": ([_rnd(3, 4), _pos(4)], lambda m, x, y: _S(m).xlog1py(x, y)),
    "zeta": ([_pos(5)], lambda m, q: _S(m).zeta(_const(m, q, [2.0, 3.5, 4.0, 2.5, 6.0]), q)),
    "igamma": ([_pos(5)], lambda m, x: m.igamma(_const(m, x, [0.5, 1.0, 2.0, 3.5, 0.7]), x)),
    "igammac": ([_pos(5)], lambda m, x: m.igammac(_const(m, x, [0.5, 1.0, 2.0, 3.5, 0.7]), x)),
    "polygamma": ([_pos(5)], lambda m, x: m.polygamma(1, x) + x.polygamma(2) + m.polygamma(0, x)),
    "mvlgamma": ([_pos(5) + 1.5], lambda m, x: m.mvlgamma(x, 3)),
}


def _bessel_case(name):
    return ([np.array([0.25, 0.5, 1.5, 3.0, 5.5, 9.0])], lambda m, x: getattr(m.special, name)(x))


def _poly_case(name):
    return ([np.array([-0.7, -0.2, 0.1, 0.45, 0.8, 0.3]), np.array([0.6, 1.0, 2.0, 3.0, 2.0, 1.2])],
            lambda m, x, n: getattr(m.special, name)(x, n))


FORWARD_ONLY = {n: _bessel_case(n) for n in (
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "airy_ai", "spherical_bessel_j0")}
FORWARD_ONLY.update({n: _poly_case(n) for n in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p")})
