"""``ASGD`` on an optax transform reproducing ``torch.optim.ASGD``'s single-tensor update.

optax has no averaged SGD. PyTorch keeps, per parameter, float32 0-d ``eta`` (the decayed step size) and ``mu``
(the averaging weight) next to the average ``ax``; its ``if mu != 1`` on a state value is a select here. The
transform is wrapped by ``optax.inject_hyperparams`` (``lr``, ``lambd``, ``alpha``, ``t0``, ``weight_decay`` are
arrays: changing them never recompiles). PyTorch creates ``eta`` from the group's ``lr`` at the first step; the
state is created before the jitted update sees the group, so a fresh state's ``eta`` takes ``lr`` at step 0.
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .optimizer import Optimizer, check_lr, cast, delta, hyper_arrays, t_add, t_decay, t_mul


class ASGDState(NamedTuple):
    step: jax.Array  # float32 scalar, PyTorch's state['step']
    eta: jax.Array   # float32 scalar
    mu: jax.Array    # float32 scalar
    ax: jax.Array


def asgd_transform(lr, lambd, alpha, t0, weight_decay, *, maximize: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor ASGD step, rounded as torch rounds (float64 deltas onto its result)."""

    def init(params):
        return ASGDState(jnp.zeros((), jnp.float32), jnp.zeros((), jnp.float32), jnp.ones((), jnp.float32),
                         jnp.zeros_like(params))

    def update(g, state, p):
        step = state.step + 1
        if maximize:
            g = -g
        g = t_decay(g, p, weight_decay)  # if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
        eta = jnp.where(state.step == 0, cast(lr, jnp.float32), state.eta)  # state['eta'] = tensor(group['lr'])
        e = eta.astype(lr.dtype)  # eta.item()
        new_p = t_add(t_mul(p, 1 - lambd * e), g, -e)  # param.mul_(1 - lambd * eta).add_(grad, alpha=-eta)
        mu = state.mu
        # if mu.item() != 1: ax.add_(param.sub(ax).mul_(mu)) else: ax.copy_(param)
        ax = jnp.where(mu != 1, t_add(state.ax, t_mul(t_add(new_p, state.ax, -1.0), mu)), new_p)
        s = step.astype(lr.dtype)
        new_eta = cast(lr / ((1 + lambd * lr * s) ** alpha), jnp.float32)
        new_mu = cast(1 / jnp.maximum(1.0, s - t0), jnp.float32)
        return delta(new_p, p), ASGDState(step, new_eta, new_mu, ax)

    return optax.GradientTransformation(init, update)


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (``torch.optim.ASGD``); ``state[p]['ax']`` is the average.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.ASGD([w], lr=1e-2, t0=0)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    _capturable_names = "params, mus, etas, and state_steps"

    _scalar_state = ("step", "eta", "mu")
    _torch_reads = ("mu", "ax", "eta", "step")  # (an entry deleted: the KeyError names the first torch's step reads)

    _real_only = True

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _hyper(self, group):
        return hyper_arrays({k: group[k] for k in ("lr", "lambd", "alpha", "t0", "weight_decay")})

    def _static_key(self, group):
        return (bool(group["maximize"]),)

    def _make_tx(self, key):
        _, maximize, decays = key
        return optax.inject_hyperparams(
            lambda lr, lambd, alpha, t0, weight_decay: asgd_transform(
                lr, lambd, alpha, t0, weight_decay if decays else None, maximize=maximize),
            hyperparam_dtype=jnp.float64)(lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0)

    def _state_fields(self, group):
        return ("step", "eta", "mu", "ax")
