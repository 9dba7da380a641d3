"""``torch.special``: special functions, with PyTorch's names, signatures, dtypes, values and gradients.

The kernels are op-table rows (``ops/special_ops.py`` for those only PyTorch's special module has, the existing
elementwise/reduction rows for the names it shares with ``torch``: ``expit`` is ``sigmoid``, ``gammaln`` is
``lgamma``, ``psi`` is ``digamma`` ...).

    >>> import functorch_lite as torch
    >>> torch.special.expit(torch.tensor([0.0]))
    tensor([0.5000])
    >>> torch.special.gammaln(torch.tensor([3]))
    tensor([0.6931])
"""
from __future__ import annotations

from .ops import elementwise as _ew
from .ops import reduction as _red
from .ops import special_ops as _sp
from .ops._registry import OPS as _OPS

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc",
    "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
    "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p",
    "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc",
    "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]

# the names torch.special shares with existing ops (the same functions: same kernels, grad_fns, errors)
digamma = psi = _OPS["digamma"].fn
erf = _OPS["erf"].fn
erfc = _OPS["erfc"].fn
erfinv = _OPS["erfinv"].fn
exp2 = _OPS["exp2"].fn
expm1 = _OPS["expm1"].fn
log1p = _OPS["log1p"].fn
expit = _OPS["sigmoid"].fn
gammaln = _OPS["lgamma"].fn
xlogy = _OPS["xlogy"].fn
logit = _sp.logit
i0 = _sp.i0
sinc = _sp.sinc
multigammaln = _sp.mvlgamma
gammainc = _sp.igamma
gammaincc = _sp.igammac
polygamma = _sp.FUNCTIONS["polygamma"]

# only in torch.special
entr, erfcx, i0e, i1, i1e = _sp.entr, _sp.erfcx, _sp.i0e, _sp.i1, _sp.i1e
ndtr, ndtri, log_ndtr, xlog1py, zeta = _sp.ndtr, _sp.ndtri, _sp.log_ndtr, _sp.xlog1py, _sp.zeta
airy_ai = _OPS["airy_ai"].fn
bessel_j0 = _OPS["bessel_j0"].fn
bessel_j1 = _OPS["bessel_j1"].fn
bessel_y0 = _OPS["bessel_y0"].fn
bessel_y1 = _OPS["bessel_y1"].fn
modified_bessel_i0 = _OPS["modified_bessel_i0"].fn
modified_bessel_i1 = _OPS["modified_bessel_i1"].fn
modified_bessel_k0 = _OPS["modified_bessel_k0"].fn
modified_bessel_k1 = _OPS["modified_bessel_k1"].fn
scaled_modified_bessel_k0 = _OPS["scaled_modified_bessel_k0"].fn
scaled_modified_bessel_k1 = _OPS["scaled_modified_bessel_k1"].fn
spherical_bessel_j0 = _OPS["spherical_bessel_j0"].fn
chebyshev_polynomial_t = _OPS["chebyshev_polynomial_t"].fn
chebyshev_polynomial_u = _OPS["chebyshev_polynomial_u"].fn
chebyshev_polynomial_v = _OPS["chebyshev_polynomial_v"].fn
chebyshev_polynomial_w = _OPS["chebyshev_polynomial_w"].fn
shifted_chebyshev_polynomial_t = _OPS["shifted_chebyshev_polynomial_t"].fn
shifted_chebyshev_polynomial_u = _OPS["shifted_chebyshev_polynomial_u"].fn
shifted_chebyshev_polynomial_v = _OPS["shifted_chebyshev_polynomial_v"].fn
shifted_chebyshev_polynomial_w = _OPS["shifted_chebyshev_polynomial_w"].fn
hermite_polynomial_h = _OPS["hermite_polynomial_h"].fn
hermite_polynomial_he = _OPS["hermite_polynomial_he"].fn
laguerre_polynomial_l = _OPS["laguerre_polynomial_l"].fn
legendre_polynomial_p = _OPS["legendre_polynomial_p"].fn


def round(input, *, decimals=0, out=None):  # noqa: A001
    """``torch.special.round``: ``torch.round`` with ``decimals`` (default 0) always given."""
    return _ew.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    """``torch.special.softmax(input, dim, *, dtype=None)``: ``dim`` is required."""
    return _red.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """``torch.special.log_softmax(input, dim, *, dtype=None)``: ``dim`` is required."""
    return _red.log_softmax(input, dim, dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``torch.special.logsumexp(input, dim, keepdim=False, *, out=None)``: ``dim`` is required."""
    return _red.logsumexp(input, dim, keepdim, out=out)


def _checked(name, fn):
    """``special.gammainc``/``gammaincc``: both arguments must be tensors (PyTorch names its own function)."""
    def f(input, other, *, out=None):
        from ._tensor.tensor import Tensor
        for i, (t, p) in enumerate(((input, "input"), (other, "other"))):
            if not isinstance(t, Tensor):
                raise TypeError(f"special_{name}(): argument '{p}' (position {i + 1}) must be Tensor, not "
                                f"{type(t).__name__}")
        return fn(input, other, out=out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = fn.__doc__
    f.__module__ = __name__
    return f


gammainc = _checked("gammainc", gammainc)
gammaincc = _checked("gammaincc", gammaincc)
