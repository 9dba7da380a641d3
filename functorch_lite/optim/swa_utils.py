"""``functorch_lite.optim.swa_utils``: Stochastic Weight Averaging and EMA (``torch.optim.swa_utils``).

``AveragedModel`` keeps a deep copy of a module and averages the source model's parameters (and, with
``use_buffers=True``, its buffers) into it; ``update_bn`` recomputes BatchNorm running statistics with one
pass over a loader; ``SWALR`` anneals every param group's lr to a fixed ``swa_lr``.

The arithmetic is PyTorch's, op for op, on the facade's own ops: the default average on a CPU (or
TPU / MPS) tensor is ``avg + (p - avg) / (n_averaged + 1)`` per tensor (torch's ``get_swa_avg_fn``, used
where torch has no foreach kernels), on a CUDA tensor it is ``lerp_`` with weight
``float32(1 / (n_averaged + 1))`` (torch's ``_foreach_lerp_`` path); the EMA functions are the same
``lerp_`` / ``decay * avg + (1 - decay) * p`` formulas as torch's. Integer buffers (``num_batches_tracked``
with ``use_buffers=True``) follow torch too: truncating ``copy_`` on the per-tensor path, torch's errors
(from ``addcdiv_`` / ``add_(alpha=float)``) on the multi-tensor SWA path.
"""
from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy
from typing import Any, Callable, Iterable

import jax

from .. import is_complex, is_floating_point, long, no_grad
from .. import where as _where
from .. import tensor as _tensor
from .._tensor.tensor import Tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer
from .._warn import user_stacklevel as _user_stacklevel

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]

# The device types that have foreach kernels in PyTorch (``_get_foreach_kernels_supported_devices``): on
# these the default average is the multi-tensor ``lerp_`` form, elsewhere the per-tensor formula.
_FOREACH_DEVICE_TYPES = ("cuda", "xpu", "mtia")


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _as_scalar(x):
    """A 0-dim tensor passed where torch's foreach op takes a Scalar: its value as a Python number."""
    return x.item() if isinstance(x, Tensor) else x


def get_ema_multi_avg_fn(decay=0.999):
    """The in-place EMA over lists of tensors: ``ema = lerp(ema, p, 1 - decay)`` (float / complex), else
    ``ema.copy_(ema * decay + p * (1 - decay))``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _) -> None:
        if is_floating_point(ema_param_list[0]) or is_complex(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The in-place equal-weight average over lists of tensors: ``avg = lerp(avg, p, 1 / (n + 1))``."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        if is_floating_point(averaged_param_list[0]) or is_complex(averaged_param_list[0]):
            weight = _as_scalar(1 / (num_averaged + 1))   # a long n: float32(1 / (n + 1)), as torch's Scalar
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, weight)
        else:
            diffs = [p_model - p_avg for p_model, p_avg in zip(current_param_list, averaged_param_list,
                                                                strict=True)]
            if isinstance(num_averaged, Tensor):
                for p_avg, diff in zip(averaged_param_list, diffs, strict=True):
                    p_avg.addcdiv_(diff, num_averaged + 1)
            else:
                for p_avg, diff in zip(averaged_param_list, diffs, strict=True):
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The per-tensor EMA: returns ``decay * ema + (1 - decay) * p``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The per-tensor equal-weight average: returns ``avg + (p - avg) / (n + 1)``."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(self_params: list, model_params: list) -> dict:
    """{(device, dtype): ([averaged tensors], [model tensors])}, keyed by each averaged tensor."""
    groups: dict = {}
    for a, m in zip(self_params, model_params, strict=True):
        lists = groups.setdefault((a.device, a.dtype), ([], []))
        lists[0].append(a)
        lists[1].append(m)
    return groups


class AveragedModel(Module):
    """A running average (SWA, or EMA with ``avg_fn`` / ``multi_avg_fn``) of a model's parameters.

    ``self.module`` is a deep copy of ``model`` (moved to ``device`` if given), ``self.n_averaged`` a long
    buffer counting the averaged models; ``update_parameters(model)`` copies ``model``'s parameters on the
    first call and averages them in afterwards. With ``use_buffers=True`` buffers are averaged too, else
    they are copied from ``model`` on every update.

    >>> import functorch_lite as torch
    >>> model = torch.nn.Linear(2, 1)
    >>> swa = torch.optim.swa_utils.AveragedModel(model)
    >>> swa.update_parameters(model); int(swa.n_averaged)
    1
    """

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers=False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The averaged module's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s parameters (and buffers with ``use_buffers``) into ``self.module``."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param = self.parameters()
            model_param = model.parameters()
        self_param_detached: list = []
        model_param_detached: list = []
        # Inside a compiled function the count is not known: both branches run and the first call's copy is a
        # select on it (the average computed on that call is discarded), so an EMA/SWA update does not break
        # the compiled step's graph. (``torch.compile`` breaks it here, on ``if self.n_averaged == 0``.)
        traced = isinstance(self.n_averaged._array, jax.core.Tracer)
        copy_param = not traced and bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_param_detached.append(p_averaged.detach())
            model_param_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)

        if traced or self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups = _group_by_device_and_dtype(self_param_detached, model_param_detached)
                for (device, _), (self_params, model_params) in groups.items():
                    if self.multi_avg_fn:
                        self.multi_avg_fn(self_params, model_params, self.n_averaged.to(device))
                    elif device is not None and device.type in _FOREACH_DEVICE_TYPES:
                        get_swa_multi_avg_fn()(self_params, model_params, self.n_averaged.to(device))
                    else:
                        avg_fn = get_swa_avg_fn()
                        n_averaged = self.n_averaged.to(device)
                        for p_averaged, p_model in zip(self_params, model_params, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(self_param_detached, model_param_detached, strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
        if traced:
            first = self.n_averaged == 0
            for p_averaged, p_model in zip(self_param_detached, model_param_detached):
                p_averaged.copy_(_where(first.to(p_averaged.device), p_model, p_averaged))

        if not self.use_buffers:
            # buffers are not averaged: keep them in sync with the source model
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """Recompute every BatchNorm's running_mean / running_var with one pass over ``loader``.

    The statistics are reset and accumulated as a cumulative average (``momentum=None``); each batch is a
    tensor or a list / tuple whose first element is the input. Momenta and the training mode are restored.
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum

    if not momenta:
        return

    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None

    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)

    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each param group's lr to ``swa_lr`` over ``anneal_epochs`` steps ("cos" or "linear"), then
    keeps it there.

    >>> import functorch_lite as torch
    >>> opt = torch.optim.SGD([torch.ones(2, requires_grad=True)], lr=0.1)
    >>> sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=1)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.05]
    """

    def __init__(self, optimizer: Optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1) -> None:
        swa_lrs = [v.clone() if isinstance(v, Tensor) else v for v in _format_param("swa_lr", optimizer, swa_lr)]
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        """Interpolate each group's lr towards ``swa_lr`` (PyTorch's recursive formula)."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=_user_stacklevel())
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer and the anneal function."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes saved by ``state_dict()`` (the anneal function from the strategy)."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
