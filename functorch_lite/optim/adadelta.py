"""``Adadelta`` on an optax transform reproducing ``torch.optim.Adadelta``'s single-tensor update.

optax's ``adadelta`` matches the algorithm but not PyTorch's operation order or its ``lr`` scaling of the
final step; the core is a small custom ``GradientTransformation`` in PyTorch's order (``optimizer.t_*``
rounding), wrapped by ``optax.inject_hyperparams`` (``lr``, ``rho``, ``eps``, ``weight_decay`` are arrays:
changing them never recompiles).
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from . import _differentiable
from .optimizer import Optimizer, check_lr, cast, delta, hyper_arrays, t_add, t_addcmul, t_decay, t_div, t_mul, t_sqrt


class AdadeltaState(NamedTuple):
    step: jax.Array  # float32 scalar, PyTorch's state['step']
    square_avg: jax.Array
    acc_delta: jax.Array


def adadelta_transform(lr, rho, eps, weight_decay, *, maximize: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor Adadelta step, rounded as torch rounds (float64 deltas onto its result)."""

    def init(params):
        return AdadeltaState(jnp.zeros((), jnp.float32), jnp.zeros_like(params), jnp.zeros_like(params))

    def update(g, state, p):
        if maximize:
            g = -g
        g = t_decay(g, p, weight_decay)  # if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
        e = cast(eps, p.dtype)
        square_avg = t_addcmul(t_mul(state.square_avg, rho), g, g, 1 - rho)  # mul_(rho).addcmul_(g, g, 1 - rho)
        std = t_sqrt(t_add(square_avg, e))                                    # square_avg.add(eps).sqrt_()
        dlt = t_mul(t_div(t_sqrt(t_add(state.acc_delta, e)), std), g)         # acc_delta.add(eps).sqrt_()
        acc_delta = t_addcmul(t_mul(state.acc_delta, rho), dlt, dlt, 1 - rho)  # .div_(std).mul_(grad)
        new_p = t_add(p, dlt, -lr)                                            # param.add_(delta, alpha=-lr)
        return delta(new_p, p), AdadeltaState(state.step + 1, square_avg, acc_delta)

    return optax.GradientTransformation(init, update)


class Adadelta(Optimizer):
    """Adadelta (``torch.optim.Adadelta``).

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.Adadelta([w])
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    _capturable_devices = ["cuda", "xpu", "hpu", "privateuseone"]  # (torch's, without xla)

    _real_only = True

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    _differentiable_update = _differentiable.adadelta_step

    def _hyper(self, group):
        return hyper_arrays({k: group[k] for k in ("lr", "rho", "eps", "weight_decay")})

    def _static_key(self, group):
        return (bool(group["maximize"]),)

    def _make_tx(self, key):
        _, maximize, decays = key
        return optax.inject_hyperparams(
            lambda lr, rho, eps, weight_decay: adadelta_transform(lr, rho, eps, weight_decay if decays else None,
                                                                  maximize=maximize),
            hyperparam_dtype=jnp.float64)(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0)

    def _state_fields(self, group):
        return ("step", "square_avg", "acc_delta")
