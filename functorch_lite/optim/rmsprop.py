"""``RMSprop`` on an optax transform reproducing ``torch.optim.RMSprop``'s single-tensor update exactly.

optax's ``rmsprop`` adds ``eps`` inside the square root and orders the momentum update differently;
PyTorch computes ``avg = sqrt(square_avg) + eps`` (centered: ``sqrt(square_avg - grad_avg**2) + eps``)
and ``buf = momentum * buf + grad / avg``. So the core is a small custom ``GradientTransformation``
in PyTorch's operation order, wrapped by ``optax.inject_hyperparams`` (``lr``, ``alpha``, ``eps``,
``weight_decay``, ``momentum`` are arrays: changing them never recompiles).
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from . import _differentiable
from .optimizer import (Optimizer, check_lr, cast, delta, hyper_arrays, t_add, t_addcdiv, t_addcmul, t_decay, t_lerp,
                        t_mul, t_sqrt)


class RMSpropState(NamedTuple):
    step: jax.Array             # float32 scalar, PyTorch's state['step']
    square_avg: jax.Array
    momentum_buffer: jax.Array  # a 0-d placeholder unless momentum > 0
    grad_avg: jax.Array         # a 0-d placeholder unless centered


def rmsprop_transform(lr, alpha, eps, weight_decay, momentum, *, use_momentum: bool, centered: bool,
                      maximize: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor RMSprop step, rounded as torch rounds (float64 deltas onto its result)."""

    def init(params):
        def opt(flag):
            return jnp.zeros_like(params) if flag else jnp.zeros((), params.dtype)
        return RMSpropState(jnp.zeros((), jnp.float32), jnp.zeros_like(params), opt(use_momentum), opt(centered))

    def update(g, state, p):
        if maximize:
            g = -g
        g = t_decay(g, p, weight_decay)  # if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
        square_avg = t_addcmul(t_mul(state.square_avg, alpha), g, g, 1 - alpha)  # mul_(alpha).addcmul_(g, g, 1-alpha)
        grad_avg = state.grad_avg
        if centered:
            grad_avg = t_lerp(grad_avg, g, 1 - alpha)
            avg = t_sqrt(t_addcmul(square_avg, grad_avg, grad_avg, -1.0))  # addcmul(value=-1).sqrt_()
        else:
            avg = t_sqrt(square_avg)
        avg = t_add(avg, cast(eps, p.dtype))  # avg.add_(eps)
        buf = state.momentum_buffer
        if use_momentum:
            buf = t_addcdiv(t_mul(buf, momentum), g, avg)  # buf.mul_(momentum).addcdiv_(grad, avg)
            new_p = t_add(p, buf, -lr)                     # param.add_(buf, alpha=-lr)
        else:
            new_p = t_addcdiv(p, g, avg, -lr)              # param.addcdiv_(grad, avg, value=-lr)
        return delta(new_p, p), RMSpropState(state.step + 1, square_avg, buf, grad_avg)

    return optax.GradientTransformation(init, update)


class RMSprop(Optimizer):
    """RMSprop (``torch.optim.RMSprop``), optionally centered and with momentum.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.RMSprop([w], lr=1e-2, momentum=0.9)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(momentum=0, centered=False, foreach=None, maximize=False, differentiable=False,
                              capturable=False)

    _real_only = True  # (PyTorch steps a complex parameter as its view_as_real pairs)
    # (an entry deleted, or switched on after the first step: the KeyError names the first torch's step reads)
    _torch_reads = ("square_avg", "step", "momentum_buffer", "grad_avg")

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    _differentiable_update = _differentiable.rmsprop_step

    def _hyper(self, group):
        return hyper_arrays({k: group[k] for k in ("lr", "alpha", "eps", "weight_decay", "momentum")})

    def _static_key(self, group):
        return (group["momentum"] > 0, bool(group["centered"]), bool(group["maximize"]))

    def _make_tx(self, key):
        _, use_momentum, centered, maximize, decays = key
        return optax.inject_hyperparams(
            lambda lr, alpha, eps, weight_decay, momentum: rmsprop_transform(
                lr, alpha, eps, weight_decay if decays else None, momentum, use_momentum=use_momentum,
                centered=centered, maximize=maximize),
            hyperparam_dtype=jnp.float64)(lr=0.0, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0)

    def _state_fields(self, group):
        names = ("step", "square_avg")
        if group["momentum"] > 0:
            names += ("momentum_buffer",)
        if group["centered"]:
            names += ("grad_avg",)
        return names
