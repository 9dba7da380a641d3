"""``Adafactor`` on an optax transform reproducing ``torch.optim.Adafactor``'s (torch 2.5+) single-tensor update.

optax's ``adafactor`` is the paper's (update clipping, momentum, a relative step size and factoring thresholds
of its own); PyTorch's variant differs (``beta2_t = 1 - step**beta2_decay``, ``rho_t = min(lr, 1/sqrt(step))``,
``alpha = max(eps2, RMS(param)) * rho_t``, the RMS of the update clipped by ``d``, decoupled weight decay
``param *= 1 - lr * weight_decay``). So the core is a custom ``GradientTransformation`` in PyTorch's order,
wrapped by ``optax.inject_hyperparams`` (every numeric option is an array: changing it never recompiles). The
Python scalars torch computes with ``.item()`` (the norms of the parameter and of the update) are traced float64
values here, so a step compiles whole. A parameter with two or more dims keeps factored ``row_var`` / ``col_var``
(over its last two dims), a vector a full ``variance``, as PyTorch's state does.
"""
from __future__ import annotations

import math
from typing import Iterable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from .optimizer import Optimizer, check_lr, cast, delta, hyper_arrays, t_add, t_decoupled, t_lerp


class AdafactorState(NamedTuple):
    step: jax.Array  # float32 scalar, PyTorch's state['step']
    row_var: Optional[jax.Array]   # (..., R, 1) for a parameter of 2+ dims, else None
    col_var: Optional[jax.Array]   # (..., 1, C)
    variance: Optional[jax.Array]  # a vector's (or scalar's) full second moment, else None


def _f64(x):
    return jnp.asarray(x).astype(jnp.float64)


def _sq_mean(g, axis):
    """``torch.norm(g, dim=axis, keepdim=True).square_().div_(g.size(axis))``."""
    n = jnp.sqrt(jnp.sum(g * g, axis=axis, keepdims=True))
    return (n * n) / jnp.asarray(g.shape[axis], g.dtype)


def adafactor_transform(lr, beta2_decay, eps1, eps2, d, weight_decay, *, maximize: bool,
                        eps1_none: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor Adafactor step (``eps1_none``: ``eps=(None, ...)``, the parameter dtype's eps)."""

    def init(params):
        step = jnp.zeros((), jnp.float32)
        if params.ndim > 1:
            row = params.shape[:-1] + (1,)
            col = params.shape[:-2] + (1, params.shape[-1])
            return AdafactorState(step, jnp.zeros(row, params.dtype), jnp.zeros(col, params.dtype), None)
        return AdafactorState(step, None, None, jnp.zeros_like(params))

    def update(g, state, p):
        dt = p.dtype
        if maximize:
            g = -g
        e1 = jnp.asarray(jnp.finfo(dt).eps, jnp.float64) if eps1_none else eps1
        step = state.step + 1
        sf = _f64(step)
        one_minus_beta2_t = sf ** beta2_decay                    # step_float ** beta2_decay
        rho_t = jnp.minimum(lr, 1 / sf ** 0.5)                   # min(lr, 1 / step_float ** 0.5)
        numel = math.prod(p.shape)
        rms_p = _f64(jnp.sqrt(jnp.sum(p * p))) / numel ** 0.5     # param.norm(2).item() / numel ** 0.5
        alpha = jnp.maximum(eps2, rms_p) * rho_t
        pw = t_decoupled(p, lr, weight_decay)  # param.mul_(1 - lr * weight_decay)
        row_var = col_var = variance = None
        if g.ndim > 1:
            row_var = t_lerp(state.row_var, _sq_mean(g, -1), one_minus_beta2_t)
            col_var = t_lerp(state.col_var, _sq_mean(g, -2), one_minus_beta2_t)
            var_estimate = jnp.matmul(row_var, col_var)          # row_var @ col_var
            row_mean = jnp.mean(row_var, axis=-2, keepdims=True)
            var_estimate = var_estimate / jnp.maximum(row_mean, cast(e1, dt))
        else:
            variance = t_lerp(state.variance, g * g, one_minus_beta2_t)
            var_estimate = variance
        upd = jax.lax.rsqrt(jnp.maximum(var_estimate, cast(e1 * e1, dt))) * g  # clamp_(min=eps1**2).rsqrt_() * g
        rms_u = _f64(jnp.sqrt(jnp.sum(upd * upd))) / (numel ** 0.5 * d)
        denom = jnp.maximum(1.0, rms_u)
        new_p = t_add(pw, upd, -alpha / denom)                   # param.add_(update, alpha=-alpha / denom)
        return delta(new_p, p), AdafactorState(step, row_var, col_var, variance)

    return optax.GradientTransformation(init, update)


class Adafactor(Optimizer):
    """Adafactor (``torch.optim.Adafactor``, PyTorch 2.5+): factored second moments, relative step sizes.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, 2, requires_grad=True)
    >>> opt = torch.optim.Adafactor([w], lr=1e-2)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(foreach=None)

    def __init__(self, params: Iterable, lr: float = 1e-2, beta2_decay: float = -0.8, eps: tuple = (None, 1e-3),
                 d: float = 1.0, weight_decay: float = 0.0, *, foreach: bool | None = None, maximize: bool = False):
        check_lr(lr, "Learning rate should be >= 0 but is: {}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _hyper(self, group):
        e1, e2 = group["eps"]
        return hyper_arrays(dict(lr=group["lr"], beta2_decay=group["beta2_decay"], eps1=0.0 if e1 is None else e1,
                                 eps2=e2, d=group["d"], weight_decay=group["weight_decay"]))

    def _static_key(self, group):
        return (bool(group["maximize"]), group["eps"][0] is None)

    def _make_tx(self, key):
        _, maximize, eps1_none, decays = key
        return optax.inject_hyperparams(
            lambda lr, beta2_decay, eps1, eps2, d, weight_decay: adafactor_transform(
                lr, beta2_decay, eps1, eps2, d, weight_decay if decays else None, maximize=maximize,
                eps1_none=eps1_none),
            hyperparam_dtype=jnp.float64)(lr=0.0, beta2_decay=-0.8, eps1=0.0, eps2=1e-3, d=1.0, weight_decay=0.0)

    def _init_state(self, key, arr):
        if jnp.iscomplexobj(arr):
            raise RuntimeError("Adafactor does not support complex parameters")
        return super()._init_state(key, arr)

    def _state_fields(self, group):
        return ("step", "row_var", "col_var", "variance")

    # the state's names depend on the parameter (factored for 2+ dims): those its state holds
    def _param_fields(self, p):
        inner = self._ostate[p]
        return tuple(n for n in inner._fields if getattr(inner, n) is not None)

    def _read_fields(self, group):
        return ("step",)  # (torch's step reads row_var, col_var and variance with state.get)

    def _held_fields(self, p, group):
        return self._param_fields(p)

    def _refresh_views(self, p, group, names=None):
        held = self._param_fields(p)
        super()._refresh_views(p, group, held if names is None else tuple(n for n in names if n in held))
