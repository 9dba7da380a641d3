"""``Rprop`` on an optax transform reproducing ``torch.optim.Rprop``'s single-tensor update.

No optax transform has PyTorch's Rprop (per-element step sizes scaled by ``etas`` on the sign of ``grad * prev``,
clamped to ``step_sizes``; a gradient whose sign flipped is zeroed for that step), so the core is a small custom
``GradientTransformation`` in PyTorch's operation order (``optimizer.t_*`` rounding), wrapped by
``optax.inject_hyperparams`` (``lr``, ``etas`` and ``step_sizes`` are arrays: changing them never recompiles).
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .optimizer import Optimizer, check_lr, cast, delta, hyper_arrays, t_addcmul, t_mul


class RpropState(NamedTuple):
    step: jax.Array  # float32 scalar, PyTorch's state['step']
    prev: jax.Array
    step_size: jax.Array


def rprop_transform(lr, etaminus, etaplus, step_size_min, step_size_max, *,
                    maximize: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor Rprop step, rounded as torch rounds (float64 deltas onto its result)."""

    def init(params):
        # (torch fills step_size with the group's lr when it creates the state: here at the first update)
        return RpropState(jnp.zeros((), jnp.float32), jnp.zeros_like(params), jnp.zeros_like(params))

    def update(g, state, p):
        dt = p.dtype
        if maximize:
            g = -g
        step_size = jnp.where(state.step == 0, cast(lr, dt), state.step_size)
        sign = jnp.sign(t_mul(g, state.prev))                            # grad.mul(prev).sign()
        neg = sign < 0
        factor = jnp.where(sign > 0, cast(etaplus, dt), jnp.where(neg, cast(etaminus, dt), jnp.ones((), dt)))
        step_size = t_mul(step_size, factor)                             # step_size.mul_(sign)
        step_size = jnp.minimum(jnp.maximum(step_size, cast(step_size_min, dt)), cast(step_size_max, dt))
        g = jnp.where(neg, jnp.zeros((), dt), g)                         # grad[sign.eq(etaminus)] = 0
        new_p = t_addcmul(p, jnp.sign(g), step_size, -1.0)               # param.addcmul_(grad.sign(), step_size, -1)
        return delta(new_p, p), RpropState(state.step + 1, g, step_size)

    return optax.GradientTransformation(init, update)


class Rprop(Optimizer):
    """Rprop (``torch.optim.Rprop``): resilient backpropagation.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.Rprop([w], lr=1e-2)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    _real_only = True

    def __init__(self, params: Iterable, lr: float = 1e-2, etas: tuple = (0.5, 1.2), step_sizes: tuple = (1e-6, 50),
                 *, capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _hyper(self, group):
        (em, ep), (smin, smax) = group["etas"], group["step_sizes"]
        return hyper_arrays(dict(lr=group["lr"], etaminus=em, etaplus=ep, step_size_min=smin, step_size_max=smax))

    def _static_key(self, group):
        return (bool(group["maximize"]),)

    def _make_tx(self, key):
        _, maximize = key
        return optax.inject_hyperparams(
            lambda lr, etaminus, etaplus, step_size_min, step_size_max: rprop_transform(
                lr, etaminus, etaplus, step_size_min, step_size_max, maximize=maximize),
            hyperparam_dtype=jnp.float64)(lr=0.0, etaminus=0.5, etaplus=1.2, step_size_min=1e-6, step_size_max=50.0)

    def _state_fields(self, group):
        return ("step", "prev", "step_size")
