"""``Adamax`` on an optax transform reproducing ``torch.optim.Adamax``'s single-tensor update.

optax's ``adamax`` adds ``eps`` after the max and bias-corrects the first moment itself; PyTorch keeps
``exp_inf = max(beta2 * exp_inf, |grad| + eps)`` and steps ``p -= lr / (1 - beta1**t) * exp_avg / exp_inf``.
So the core is a small custom ``GradientTransformation`` in PyTorch's operation order (``optimizer.t_*``
rounding), wrapped by ``optax.inject_hyperparams`` (``lr``, ``beta1``, ``beta2``, ``eps``, ``weight_decay`` are
arrays: changing them never recompiles).
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from . import _differentiable
from .optimizer import Optimizer, check_lr, cast, delta, hyper_arrays, t_add, t_addcdiv, t_decay, t_lerp, t_mul


class AdamaxState(NamedTuple):
    step: jax.Array  # float32 scalar, PyTorch's state['step']
    exp_avg: jax.Array
    exp_inf: jax.Array


def adamax_transform(lr, beta1, beta2, eps, weight_decay, *, maximize: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor Adamax step, rounded as torch rounds (float64 deltas onto its result)."""

    def init(params):
        return AdamaxState(jnp.zeros((), jnp.float32), jnp.zeros_like(params), jnp.zeros_like(params))

    def update(g, state, p):
        step = state.step + 1
        if maximize:
            g = -g
        g = t_decay(g, p, weight_decay)  # if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
        exp_avg = t_lerp(state.exp_avg, g, 1 - beta1)
        # torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        exp_inf = jnp.maximum(t_mul(state.exp_inf, beta2), t_add(jnp.abs(g), cast(eps, p.dtype)))
        clr = lr / (1 - beta1 ** step.astype(lr.dtype))
        new_p = t_addcdiv(p, exp_avg, exp_inf, -clr)  # param.addcdiv_(exp_avg, exp_inf, value=-clr)
        return delta(new_p, p), AdamaxState(step, exp_avg, exp_inf)

    return optax.GradientTransformation(init, update)


class Adamax(Optimizer):
    """Adamax (``torch.optim.Adamax``): Adam with the infinity norm.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.Adamax([w], lr=1e-2)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    _real_only = True

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _differentiable_update = _differentiable.adamax_step

    def _hyper(self, group):
        b1, b2 = group["betas"]
        return hyper_arrays(dict(lr=group["lr"], beta1=b1, beta2=b2, eps=group["eps"],
                                 weight_decay=group["weight_decay"]))

    def _static_key(self, group):
        return (bool(group["maximize"]),)

    def _make_tx(self, key):
        _, maximize, decays = key
        return optax.inject_hyperparams(
            lambda lr, beta1, beta2, eps, weight_decay: adamax_transform(
                lr, beta1, beta2, eps, weight_decay if decays else None, maximize=maximize),
            hyperparam_dtype=jnp.float64)(lr=0.0, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0)

    def _state_fields(self, group):
        return ("step", "exp_avg", "exp_inf")
