"""``NAdam`` on an optax transform reproducing ``torch.optim.NAdam``'s single-tensor update.

optax's ``nadam`` has no momentum schedule; PyTorch's ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``
keeps a running product ``mu_product`` (a float32 0-d state entry, as torch's) and applies the Nesterov step as
two ``addcdiv``s. So the core is a small custom ``GradientTransformation`` in PyTorch's operation order (each op
rounded where torch's CPU kernel rounds, ``optimizer.t_*``), wrapped by ``optax.inject_hyperparams`` (``lr``,
``beta1``, ``beta2``, ``eps``, ``weight_decay``, ``momentum_decay`` are arrays: changing them never recompiles).
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .optimizer import (Optimizer, check_lr, cast, delta, hyper_arrays, t_add, t_addcdiv, t_addcmul, t_decay,
                        t_decoupled, t_div, t_lerp, t_mul, t_sqrt)


class NAdamState(NamedTuple):
    step: jax.Array        # float32 scalar, PyTorch's state['step']
    mu_product: jax.Array  # float32 scalar, the product of the momentum schedule so far
    exp_avg: jax.Array
    exp_avg_sq: jax.Array


def nadam_transform(lr, beta1, beta2, eps, weight_decay, momentum_decay, *, maximize: bool,
                    decoupled: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor NAdam step, rounded as torch rounds (float64 deltas onto its result)."""

    def init(params):
        return NAdamState(jnp.zeros((), jnp.float32), jnp.ones((), jnp.float32), jnp.zeros_like(params),
                          jnp.zeros_like(params))

    def update(g, state, p):
        step = state.step + 1
        s = step.astype(lr.dtype)  # (Python floats in torch: step.item())
        bc2 = 1 - beta2 ** s
        if maximize:
            g = -g
        base = p
        if decoupled:
            base = t_decoupled(p, lr, weight_decay)  # param.mul_(1 - lr * weight_decay): exactly p at 0
        else:
            g = t_decay(g, p, weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (s * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((s + 1) * momentum_decay)))
        mu_product = t_mul(state.mu_product, mu)  # mu_product *= mu (a float32 tensor)
        exp_avg = t_lerp(state.exp_avg, g, 1 - beta1)
        exp_avg_sq = t_addcmul(t_mul(state.exp_avg_sq, beta2), g, g, 1 - beta2)
        denom = t_add(t_sqrt(t_div(exp_avg_sq, bc2)), cast(eps, p.dtype))
        mp = mu_product.astype(lr.dtype)  # mu_product.item()
        mu_product_next = mp * mu_next
        new_p = t_addcdiv(base, g, denom, -lr * (1.0 - mu) / (1.0 - mp))
        new_p = t_addcdiv(new_p, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))
        return delta(new_p, p), NAdamState(step, mu_product, exp_avg, exp_avg_sq)

    return optax.GradientTransformation(init, update)


class NAdam(Optimizer):
    """NAdam (``torch.optim.NAdam``): Adam with Nesterov momentum and a momentum schedule (``momentum_decay``);
    ``decoupled_weight_decay=True`` is NAdamW.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.NAdam([w], lr=1e-2)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(maximize=False, foreach=None, capturable=False, differentiable=False,
                              decoupled_weight_decay=False)

    _capturable_names = "params, mu_products and state_steps"

    _scalar_state = ("step", "mu_product")

    _real_only = True

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _hyper(self, group):
        b1, b2 = group["betas"]
        return hyper_arrays(dict(lr=group["lr"], beta1=b1, beta2=b2, eps=group["eps"],
                                 weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"]))

    def _static_key(self, group):
        return (bool(group["maximize"]), bool(group["decoupled_weight_decay"]))

    def _make_tx(self, key):
        _, maximize, decoupled, decays = key
        return optax.inject_hyperparams(
            lambda lr, beta1, beta2, eps, weight_decay, momentum_decay: nadam_transform(
                lr, beta1, beta2, eps, weight_decay if decays else None, momentum_decay, maximize=maximize,
                decoupled=decoupled),
            hyperparam_dtype=jnp.float64)(lr=0.0, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
                                          momentum_decay=4e-3)

    def _state_fields(self, group):
        return ("step", "mu_product", "exp_avg", "exp_avg_sq")
