"""``SGD`` on an optax transform reproducing ``torch.optim.SGD``'s update exactly.

optax's ``sgd``/``trace`` start the momentum buffer at zero and ignore dampening; PyTorch sets the
buffer to the gradient on the first step, so the core is a small custom ``GradientTransformation``
(wrapped by ``optax.inject_hyperparams``, so ``lr``/``momentum``/``dampening``/``weight_decay`` are
arrays in the state and changing them never recompiles).
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from . import _differentiable
from .optimizer import Optimizer, check_fused, check_lr, delta, hyper_arrays, t_add, t_decay, t_mul


class SGDState(NamedTuple):
    step: jax.Array             # float32 scalar, PyTorch's state['step'] (SGD does not expose it)
    momentum_buffer: jax.Array  # like the parameter (an empty (0,) placeholder while momentum has been off)


def sgd_transform(lr, momentum, dampening, weight_decay, *, use_momentum: bool, nesterov: bool,
                  maximize: bool) -> optax.GradientTransformation:
    """PyTorch's SGD step, rounded as torch rounds; the updates are float64 deltas onto its result."""

    def init(params):
        buf = jnp.zeros_like(params) if use_momentum else jnp.zeros((0,), params.dtype)
        return SGDState(jnp.zeros((), jnp.float32), buf)

    def update(g, state, p):
        if maximize:
            g = -g
        g = t_decay(g, p, weight_decay)  # if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
        buf = state.momentum_buffer
        if use_momentum:
            if buf.shape != g.shape:  # no buffer yet (momentum was off until now): it starts as the gradient, as
                buf = g               # PyTorch's first momentum step
            else:  # (in the buffer's dtype, as PyTorch's in-place update: it stays float32 after model.double())
                gb = g.astype(buf.dtype)
                buf = jnp.where(state.step == 0, gb, t_add(t_mul(buf, momentum), gb, 1 - dampening))
            g = t_add(g, buf.astype(g.dtype), momentum) if nesterov else buf
        # param.add_(grad, alpha=-lr), in the parameter's dtype
        return delta(t_add(p, g.astype(p.dtype), -lr), p), SGDState(state.step + 1, buf)

    return optax.GradientTransformation(init, update)


class SGD(Optimizer):
    """Stochastic gradient descent (``torch.optim.SGD``), optionally with momentum.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> (w * w).sum().backward(); opt.step()
    """

    _state_made_in_step = True
    _hidden_state = ("step",)  # (torch's SGD state holds no step: a user's ``state[p]['step']`` is theirs)

    def _restart_entry(self, name, inner):
        """``state[p]['momentum_buffer'] = None``: torch's step starts the buffer again from the gradient (the
        transform's first momentum step, ``step == 0``), in a new array (the old one is the old tensor's, which the
        user may hold: the step's donation must not take it)."""
        if name != "momentum_buffer":
            return super()._restart_entry(name, inner)
        return {"step": jnp.zeros((), inner.step.dtype), "momentum_buffer": jnp.zeros_like(inner.momentum_buffer)}

    def _missing_entry(self, name, inner):
        """``del state[p]['momentum_buffer']``: torch's step reads ``state.get('momentum_buffer')``, None: the
        buffer restarts from the gradient, as for a None entry."""
        return self._restart_entry(name, inner)

    _setstate_defaults = dict(nesterov=False, maximize=False, foreach=None, differentiable=False, fused=False)

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    _differentiable_update = _differentiable.sgd_step

    def _hyper(self, group):
        return hyper_arrays({k: group[k] for k in ("lr", "momentum", "dampening", "weight_decay")})

    def _static_key(self, group):
        return (group["momentum"] != 0, bool(group["nesterov"]), bool(group["maximize"]))

    def _make_tx(self, key):
        _, use_momentum, nesterov, maximize, decays = key
        return optax.inject_hyperparams(
            lambda lr, momentum, dampening, weight_decay: sgd_transform(
                lr, momentum, dampening, weight_decay if decays else None, use_momentum=use_momentum, nesterov=nesterov,
                maximize=maximize),
            hyperparam_dtype=jnp.float64)(lr=0.0, momentum=0.0, dampening=0.0, weight_decay=0.0)

    def _state_fields(self, group):
        return ("momentum_buffer",) if group["momentum"] != 0 else ()
