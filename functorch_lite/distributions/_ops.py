"""The few kernels the distributions need that the facade has no public op for: samplers (PyTorch's
``_standard_gamma``, ``poisson``, ``binomial``; categorical draws as ``multinomial`` with replacement;
Dirichlet draws are normalised gamma draws) and ``special.gammainc`` for ``Gamma.cdf``; plus
``solve_triangular``, the public ``linalg.solve_triangular`` op called as PyTorch's distributions call it (for
``MultivariateNormal``, whose Cholesky factor comes from ``functorch_lite.linalg.cholesky``, and the KLs).

The differentiable ones (gamma draws, ``gammainc``) are private ``@defop``s (no Tensor method, no
``functorch_lite.*`` function), so autograd and compile work as for every other op. The discrete
samplers have no gradient: each is one cached jitted draw, as ``multinomial`` in ``ops/creation.py``.

Every draw takes one ``Generator.next_key()`` (the gamma op receives its raw key data as a uint32 tensor, as
``_dropout`` does): ``manual_seed`` reproduces it, and under ``compile`` the key is the traced generator state,
fresh per call.

Gradients of gamma draws are reparameterised: JAX's implicit gradient of the sample with respect to its
concentration, the quantity of PyTorch's ``_standard_gamma_grad``. A Dirichlet draw (``Dirichlet.rsample``) is
differentiated through the normalisation of its gamma draws: an exact reparameterisation whose per-sample
gradient can differ from PyTorch's ``_dirichlet_grad`` while its expectation is the same;
``torch._sample_dirichlet`` itself has no derivative, as in PyTorch.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .. import _promotion as P
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from ..ops._registry import defop
from ..ops.creation import _gen, _key_on
from ..ops.grad_overrides import aten_no_derivative
from ..ops._dispatch import dispatch
from ..ops._registry import OPS
from ..ops import linalg_more as _linalg_more  # noqa: F401  (registers linalg_solve_triangular)

__all__: list = []

def _acc(dt):
    """float16/bfloat16 sample in float32, as PyTorch's CPU kernels accumulate."""
    return jnp.float32 if dt in (jnp.float16, jnp.bfloat16) else dt


def _check_float(t: Tensor, kernel: str, half: bool = True):
    dt = t.dtype
    if dt.category != D.FLOAT or dt in D.FLOAT8 or (not half and dt in (D.float16, D.bfloat16)):
        raise no_kernel(kernel, dt)


# ---- gamma draws (differentiable) -------------------------------------------------------------------------------
def _gamma_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt not in (D.float32, D.float64):
        raise no_kernel("gamma_cpu", dt)
    return (None, None), (dt,)


@defop("_dist_standard_gamma", promote=_gamma_rule, grad_fn="StandardGammaBackward0", tensors=2, method=False,
       function=False, broadcast=False, kernel="gamma_cpu")
def _standard_gamma(concentration, key):
    """Gamma(concentration, 1) draws in ``concentration``'s shape, at least the dtype's ``tiny`` (PyTorch clamps
    the sample, not its gradient); ``key`` is raw key data."""
    x = jax.random.gamma(jax.random.wrap_key_data(key), concentration, concentration.shape, concentration.dtype)
    tiny = jnp.asarray(jnp.finfo(concentration.dtype).tiny, concentration.dtype)
    return x + jax.lax.stop_gradient(jnp.maximum(x, tiny) - x)


def standard_gamma(concentration: Tensor, generator=None) -> Tensor:
    """``torch._standard_gamma``: reparameterised Gamma(concentration, 1) draws."""
    return _standard_gamma(concentration, _key_on(concentration, generator))


def _dirichlet_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt not in (D.float32, D.float64):
        raise no_kernel("dirichlet", dt)
    return (None, None), (dt,)


_SAMPLE_DIRICHLET_NO_GRAD = aten_no_derivative("_sample_dirichlet")


@defop("_dist_dirichlet", promote=_dirichlet_rule, tensors=2, method=False, function=False, broadcast=False,
       kernel="dirichlet", saves=(), grad_fn=lambda targs, sargs: "_DirichletBackward" if sargs[0] else "NotImplemented")
def _dirichlet(concentration, key, reparameterized=True):
    """Dirichlet draws over the last dimension as PyTorch's ``_sample_dirichlet`` CPU kernel: gamma draws in
    float64 (at least float64's ``tiny``), normalised, cast to the dtype and clamped to ``[tiny, nexttoward(1, 0)]``
    of it (never exactly 0 or 1). ``reparameterized``: differentiable through the normalised gamma draws (the
    clamp passes the gradient: PyTorch's ``_DirichletBackward`` evaluates its gradient at the clamped sample);
    else ``torch._sample_dirichlet``'s node, whose backward raises."""
    a = concentration.astype(jnp.float64)
    g = jax.random.gamma(jax.random.wrap_key_data(key), a, a.shape, jnp.float64)
    g = g + jax.lax.stop_gradient(jnp.maximum(g, jnp.finfo(jnp.float64).tiny) - g)
    x = (g / g.sum(-1, keepdims=True)).astype(concentration.dtype)
    fi = jnp.finfo(concentration.dtype)
    x = x + jax.lax.stop_gradient(jnp.clip(x, fi.tiny, 1 - fi.epsneg) - x)
    if reparameterized:
        return x
    return _SAMPLE_DIRICHLET_NO_GRAD(jax.lax.stop_gradient(x), concentration)


def sample_dirichlet(concentration: Tensor, generator=None) -> Tensor:
    """``torch._sample_dirichlet``: one Dirichlet draw per row of ``concentration`` (no derivative)."""
    return _dirichlet(concentration, _key_on(concentration, generator), False)


def dirichlet_rsample(concentration: Tensor, generator=None) -> Tensor:
    """``Dirichlet.rsample``: :func:`sample_dirichlet`'s draw, differentiable (``_DirichletBackward``)."""
    return _dirichlet(concentration, _key_on(concentration, generator), True)


# ---- discrete draws (no gradient) -------------------------------------------------------------------------------
_DRAWS: dict = {}


def _draw(kind, static, fn, *tensors, generator=None):
    """Run the cached jitted draw ``fn(key, *arrays)`` for (kind, static) and wrap it in the first tensor's dtype
    (int64 for ``categorical``) and device."""
    f = _DRAWS.get((kind, static))
    if f is None:
        f = _DRAWS[(kind, static)] = jax.jit(fn)
    like = tensors[0]
    out = f(_gen(generator).next_key(), *[t._array for t in tensors])
    return Tensor._from_array(out, D.int64 if kind == "categorical" else like.dtype, like.device)


def poisson(rate: Tensor, generator=None) -> Tensor:
    """``torch.poisson``: Poisson(rate) counts in ``rate``'s shape and dtype."""
    _check_float(rate, "poisson_cpu")

    def fn(k, r):
        return jax.random.poisson(k, r.astype(_acc(r.dtype)), r.shape, jnp.int64).astype(r.dtype)
    return _draw("poisson", (), fn, rate, generator=generator)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """``torch.binomial``: Binomial(count, prob) counts (both of one shape), in ``count``'s dtype."""
    if count.dtype.category != D.FLOAT:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {count.dtype.short}")
    _check_float(count, "binomial_cpu", half=False)

    def fn(k, n, p):
        acc = _acc(n.dtype)
        return jax.random.binomial(k, n.astype(acc), p.astype(acc), n.shape, acc).astype(n.dtype)
    return _draw("binomial", (), fn, count, prob, generator=generator)


def categorical(param: Tensor, sample_shape: tuple, is_logits: bool, generator=None) -> Tensor:
    """int64 indices drawn from the rows of ``param`` (normalised probabilities, or log-probabilities when
    ``is_logits``; the last dimension holds the categories), of shape ``sample_shape + param.shape[:-1]``."""
    sample_shape = tuple(int(s) for s in sample_shape)

    def fn(k, p):
        acc = jnp.float64 if p.dtype == jnp.float64 else jnp.float32
        logits = p.astype(acc) if is_logits else jnp.log(p.astype(acc))
        return jax.random.categorical(k, logits, axis=-1, shape=sample_shape + p.shape[:-1]).astype(jnp.int64)
    return _draw("categorical", (sample_shape, bool(is_logits)), fn, param, generator=generator)


# ---- special functions ------------------------------------------------------------------------------------------
def _igamma_rule(op, sig, sargs):
    r = P.result_type_sig(P._entries(sig))
    if r.category != D.FLOAT or r in D.FLOAT8:
        raise no_kernel("igamma_cpu", r)
    return (r, r), (r,)


@defop("_dist_gammainc", promote=_igamma_rule, grad_fn="IgammaBackward0", tensors=2, method=False, function=False,
       kernel="igamma_cpu", broadcast=True)
def gammainc(input, other):
    """``torch.special.gammainc``: the regularised lower incomplete gamma function P(a, x) (computed in float32
    for float16/bfloat16). The kernel is ``igamma``'s (``ops/special_ops.py``): its edge values, and no derivative
    in ``a`` (backward through it raises torch's ``the derivative for 'igamma: input' is not implemented.``)."""
    from ..ops.special_ops import _igamma
    return D.in_opmath(_igamma)(input, other)


# ---- linear algebra ---------------------------------------------------------------------------------------------
def solve_triangular(input, B, upper=False):
    """``torch.linalg.solve_triangular(A, B, upper=upper)`` (left), as PyTorch's distributions call it: the public
    op, so the result takes A's dtype (B is cast: a float64 value against a float32 ``scale_tril`` gives float32)."""
    return dispatch(OPS["linalg_solve_triangular"], (input, B), (upper, True, False))


def von_mises(loc: Tensor, concentration: Tensor, proposal_r: Tensor, shape: tuple, generator=None) -> Tensor:
    """Von Mises draws of ``shape`` (float64 parameters broadcast to it) by PyTorch's rejection sampler (Best &
    Fisher), as one jitted ``while_loop`` (so it also runs inside ``compile``), wrapped to within ``[-pi, pi)``."""
    shape = tuple(int(s) for s in shape)

    def fn(k, loc, conc, r):
        loc, conc, r = (jnp.broadcast_to(a, shape) for a in (loc, conc, r))

        def body(state):
            key, x, done = state
            key, sub = jax.random.split(key)
            u1, u2, u3 = jax.random.uniform(sub, (3,) + shape, loc.dtype)
            z = jnp.cos(jnp.pi * u1)
            f = (1 + r * z) / (r + z)
            c = conc * (r - f)
            accept = ((c * (2 - c) - u2) > 0) | ((jnp.log(c / u2) + 1 - c) >= 0)
            x = jnp.where(accept, jnp.sign(u3 - 0.5) * jnp.arccos(f), x)
            return key, x, done | accept

        init = (k, jnp.zeros(shape, loc.dtype), jnp.zeros(shape, bool))
        _, x, _ = jax.lax.while_loop(lambda s: ~jnp.all(s[2]), body, init)
        return jnp.mod(x + jnp.pi + loc, 2 * jnp.pi) - jnp.pi
    return _draw("von_mises", shape, fn, loc, concentration, proposal_r, generator=generator)
