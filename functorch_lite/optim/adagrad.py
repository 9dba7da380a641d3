"""``Adagrad`` on an optax transform reproducing ``torch.optim.Adagrad``'s single-tensor update exactly.

optax's ``adagrad`` adds ``eps`` inside the square root and has no ``lr_decay``; PyTorch computes
``clr = lr / (1 + (step - 1) * lr_decay)``, ``sum += grad**2`` and ``p -= clr * grad / (sqrt(sum) + eps)``.
The state (``step``, ``sum``) is created for every parameter when the optimizer is constructed, as
PyTorch does, with ``sum`` filled with the constructor's ``initial_accumulator_value``.
"""
from __future__ import annotations

from typing import Any, Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .optimizer import Optimizer, check_fused, check_lr, cast, delta, hyper_arrays, t_add, t_addcdiv, t_addcmul, t_decay, t_sqrt


class AdagradState(NamedTuple):
    step: jax.Array  # float32 scalar, PyTorch's state['step']
    sum: jax.Array


def adagrad_transform(lr, lr_decay, weight_decay, eps, *, maximize: bool) -> optax.GradientTransformation:
    """PyTorch's single-tensor Adagrad step rounded as torch rounds (``sum`` starts at zero here)."""

    def init(params):
        return AdagradState(jnp.zeros((), jnp.float32), jnp.zeros_like(params))

    def update(g, state, p):
        step = state.step + 1
        if maximize:
            g = -g
        g = t_decay(g, p, weight_decay)  # if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step.astype(lr.dtype) - 1) * lr_decay)  # Python float arithmetic in torch
        total = t_addcmul(state.sum, g, g)  # state_sum.addcmul_(grad, grad, value=1)
        std = t_add(t_sqrt(total), cast(eps, p.dtype))  # state_sum.sqrt().add_(eps)
        new_p = t_addcdiv(p, g, std, -clr)  # param.addcdiv_(grad, std, value=-clr)
        return delta(new_p, p), AdagradState(step, total)

    return optax.GradientTransformation(init, update)


class Adagrad(Optimizer):
    """Adagrad (``torch.optim.Adagrad``).

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = torch.optim.Adagrad([w], lr=0.1, lr_decay=0.01)
    >>> (w * w).sum().backward(); opt.step()
    """

    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, fused=None)

    _real_only = True  # (PyTorch steps a complex parameter as its view_as_real pairs)

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        for group in self.param_groups:  # PyTorch creates Adagrad's state eagerly
            key = self._key_of(group)
            for p in group["params"]:
                if p not in self._ostate:
                    self._put_state(p, self._init_state(key, p._array))
                    self._refresh_views(p, group)

    def _init_state(self, key: tuple, arr) -> Any:
        # PyTorch reads the constructor's value (self.defaults), never a group's own entry
        st = super()._init_state(key, arr)
        return st._replace(sum=jnp.full_like(arr, self.defaults["initial_accumulator_value"]))

    def _hyper(self, group):
        return hyper_arrays({k: group[k] for k in ("lr", "lr_decay", "weight_decay", "eps")})

    def _static_key(self, group):
        return (bool(group["maximize"]),)

    def _make_tx(self, key):
        _, maximize, decays = key
        return optax.inject_hyperparams(
            lambda lr, lr_decay, weight_decay, eps: adagrad_transform(
                lr, lr_decay, weight_decay if decays else None, eps, maximize=maximize),
            hyperparam_dtype=jnp.float64)(lr=0.0, lr_decay=0.0, weight_decay=0.0, eps=1e-10)

    def _state_fields(self, group):
        return ("step", "sum")
