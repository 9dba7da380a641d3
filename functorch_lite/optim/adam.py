"""``Adam`` and ``AdamW`` on an optax transform reproducing ``torch.optim.Adam``'s update exactly.

optax's ``scale_by_adam`` rounds differently (it divides bias-corrected moments; PyTorch computes
``step_size = lr / bc1`` and ``denom = sqrt(v) / sqrt(bc2) + eps``) and its amsgrad takes the max of
the bias-corrected ``v_hat``; PyTorch takes the max of the raw ``v``. Each op rounds where torch's CPU
kernel rounds (``optimizer.t_*``), so float32 results are PyTorch's bit for bit. So the core is a small custom
``GradientTransformation`` in PyTorch's operation order, wrapped by ``optax.inject_hyperparams``
(``lr``, ``beta1``, ``beta2``, ``eps``, ``weight_decay`` are arrays: changing them never recompiles, but for
PyTorch's ``if weight_decay != 0``: a group at 0 has a program without the term, ``Optimizer._key_of``).
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .._tensor.tensor import Tensor
from . import _differentiable
from .optimizer import (Optimizer, check_betas, check_fused, check_lr, cast, delta, hyper_arrays, t_add, t_addcdiv,
                        t_addcmul, t_decay, t_decoupled, t_div, t_lerp, t_mul, t_sqrt)


class AdamState(NamedTuple):
    step: jax.Array            # float32 scalar, PyTorch's state['step']
    exp_avg: jax.Array
    exp_avg_sq: jax.Array
    max_exp_avg_sq: jax.Array | None  # None (no array) unless amsgrad


def adam_transform(lr, beta1, beta2, eps, weight_decay, *, amsgrad: bool, maximize: bool,
                   decoupled: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor Adam/AdamW step, rounded as torch rounds (float64 deltas onto its result)."""

    def init(params):
        return AdamState(jnp.zeros((), jnp.float32), jnp.zeros_like(params), jnp.zeros_like(params),
                         jnp.zeros_like(params) if amsgrad else None)

    def update(g, state, p):
        step = state.step + 1
        if maximize:
            g = -g
        base = p
        if decoupled:
            base = t_decoupled(p, lr, weight_decay)  # param.mul_(1 - lr * weight_decay): exactly p at 0
        else:
            g = t_decay(g, p, weight_decay)  # if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
        exp_avg = t_lerp(state.exp_avg, g, 1 - beta1)
        exp_avg_sq = t_addcmul(t_mul(state.exp_avg_sq, beta2), g, g, 1 - beta2)
        s = step.astype(lr.dtype)
        step_size = lr / (1 - beta1 ** s)
        bc2_sqrt = jnp.sqrt(1 - beta2 ** s)
        max_sq = state.max_exp_avg_sq
        if amsgrad:
            max_sq = jnp.maximum(max_sq, exp_avg_sq)
            denom = t_add(t_div(t_sqrt(max_sq), bc2_sqrt), cast(eps, p.dtype))
        else:
            denom = t_add(t_div(t_sqrt(exp_avg_sq), bc2_sqrt), cast(eps, p.dtype))
        new_p = t_addcdiv(base, exp_avg, denom, -step_size)  # param.addcdiv_(exp_avg, denom, value=-step_size)
        return delta(new_p, p), AdamState(step, exp_avg, exp_avg_sq, max_sq)

    return optax.GradientTransformation(init, update)


class Adam(Optimizer):
    """Adam (``torch.optim.Adam``); ``decoupled_weight_decay=True`` is AdamW.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.Adam([w], lr=1e-2)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(amsgrad=False, maximize=False, foreach=None, capturable=False, differentiable=False,
                              decoupled_weight_decay=False, fused=None)

    _real_only = True  # (PyTorch steps a complex parameter as its view_as_real pairs)
    _torch_reads = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step")  # (a deleted entry: the KeyError's name)

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False):
        check_lr(lr)
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        betas = check_betas(betas, foreach, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    _differentiable_update = _differentiable.adam_step

    def _hyper(self, group):
        b1, b2 = group["betas"]
        return hyper_arrays(dict(lr=group["lr"], beta1=b1, beta2=b2, eps=group["eps"],
                                 weight_decay=group["weight_decay"]))

    def _static_key(self, group):
        return (bool(group["amsgrad"]), bool(group["maximize"]), bool(group["decoupled_weight_decay"]))

    def _make_tx(self, key):
        _, amsgrad, maximize, decoupled, decays = key
        return optax.inject_hyperparams(
            lambda lr, beta1, beta2, eps, weight_decay: adam_transform(
                lr, beta1, beta2, eps, weight_decay if decays else None, amsgrad=amsgrad, maximize=maximize,
                decoupled=decoupled),
            hyperparam_dtype=jnp.float64)(lr=0.0, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0)

    def _state_fields(self, group):
        names = ("step", "exp_avg", "exp_avg_sq")
        return names + ("max_exp_avg_sq",) if group["amsgrad"] else names


class AdamW(Adam):
    """AdamW (``torch.optim.AdamW``): Adam with decoupled weight decay ``p *= 1 - lr * weight_decay``."""

    _setstate_forced = dict(decoupled_weight_decay=True)

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
