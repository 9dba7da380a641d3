"""``RAdam`` on an optax transform reproducing ``torch.optim.RAdam``'s single-tensor update.

optax's ``radam`` adds ``eps`` and bias-corrects in another order, and switches on ``rho_t >= threshold``;
PyTorch rectifies when ``rho_t > 5`` and otherwise takes the bias-corrected momentum step. So the core is a
small custom ``GradientTransformation`` in PyTorch's operation order (each op rounded where torch's CPU kernel
rounds, ``optimizer.t_*``), wrapped by ``optax.inject_hyperparams`` (``lr``, ``beta1``, ``beta2``, ``eps``,
``weight_decay`` are arrays: changing them never recompiles). PyTorch's Python ``if rho_t > 5`` on the step
count is a select here: the step is state, an array inside the jitted update.
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from . import _differentiable
from .optimizer import (Optimizer, check_lr, cast, delta, hyper_arrays, t_add, t_addcmul, t_decay, t_decoupled, t_div,
                        t_lerp, t_mul, t_sqrt)


class RAdamState(NamedTuple):
    step: jax.Array  # float32 scalar, PyTorch's state['step']
    exp_avg: jax.Array
    exp_avg_sq: jax.Array


def radam_transform(lr, beta1, beta2, eps, weight_decay, *, maximize: bool,
                    decoupled: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor RAdam step, rounded as torch rounds (float64 deltas onto its result)."""

    def init(params):
        return RAdamState(jnp.zeros((), jnp.float32), jnp.zeros_like(params), jnp.zeros_like(params))

    def update(g, state, p):
        step = state.step + 1
        if maximize:
            g = -g
        base = p
        if decoupled:
            base = t_decoupled(p, lr, weight_decay)  # param.mul_(1 - lr * weight_decay): exactly p at 0
        else:
            g = t_decay(g, p, weight_decay)
        exp_avg = t_lerp(state.exp_avg, g, 1 - beta1)
        exp_avg_sq = t_addcmul(t_mul(state.exp_avg_sq, beta2), g, g, 1 - beta2)
        s = step.astype(lr.dtype)  # (Python floats in torch: step.item())
        bc1 = 1 - beta1 ** s
        bc2 = 1 - beta2 ** s
        corrected = t_mul(t_div(exp_avg, bc1), lr)  # bias_corrected_exp_avg * lr
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * s * (beta2 ** s) / bc2
        rect = jnp.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        denom = t_add(t_sqrt(exp_avg_sq), cast(eps, p.dtype))
        # (bc2 ** 0.5) / denom is torch's ``denom.reciprocal() * scalar``
        adaptive = t_mul(t_div(jnp.ones_like(denom), denom), jnp.sqrt(bc2))
        rectified = t_mul(t_mul(corrected, adaptive), rect)
        new_p = jnp.where(rho_t > 5.0, t_add(base, rectified, -1.0), t_add(base, corrected, -1.0))
        return delta(new_p, p), RAdamState(step, exp_avg, exp_avg_sq)

    return optax.GradientTransformation(init, update)


class RAdam(Optimizer):
    """RAdam (``torch.optim.RAdam``): Adam with the variance of the adaptive lr rectified;
    ``decoupled_weight_decay=True`` decays the parameter directly (AdamW-style).

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.RAdam([w], lr=1e-2)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, decoupled_weight_decay=False,
                              capturable=False)

    _real_only = True

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    _differentiable_update = _differentiable.radam_step

    def _hyper(self, group):
        b1, b2 = group["betas"]
        return hyper_arrays(dict(lr=group["lr"], beta1=b1, beta2=b2, eps=group["eps"],
                                 weight_decay=group["weight_decay"]))

    def _static_key(self, group):
        return (bool(group["maximize"]), bool(group["decoupled_weight_decay"]))

    def _make_tx(self, key):
        _, maximize, decoupled, decays = key
        return optax.inject_hyperparams(
            lambda lr, beta1, beta2, eps, weight_decay: radam_transform(
                lr, beta1, beta2, eps, weight_decay if decays else None, maximize=maximize, decoupled=decoupled),
            hyperparam_dtype=jnp.float64)(lr=0.0, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0)

    def _state_fields(self, group):
        return ("step", "exp_avg", "exp_avg_sq")
