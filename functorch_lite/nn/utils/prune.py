"""``torch.nn.utils.prune``: masks that zero entries (or whole channels) of a parameter.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds the buffer ``<name>_mask`` and makes
``<name>`` a plain attribute, recomputed as ``<name>_orig * <name>_mask`` before every call by a forward
pre-hook; the hook is the pruning method object itself (as in PyTorch, so ``_forward_pre_hooks`` holds it).
Pruning the same parameter again combines the methods in a :class:`PruningContainer`, whose new method only
sees the entries (``unstructured``) or channels (``structured``) that are still unpruned. :func:`remove`
makes the pruning permanent. Random methods draw from the facade's generator (``manual_seed``).

Example::

    >>> import functorch_lite as torch
    >>> from functorch_lite.nn.utils import prune
    >>> m = prune.l1_unstructured(torch.nn.Linear(4, 3), "weight", amount=0.5)
    >>> list(m.state_dict()), int((m.weight_mask == 0).sum())
    (['bias', 'weight_orig', 'weight_mask'], 6)
    >>> prune.remove(m, "weight").weight.shape
    torch.Size([3, 4])
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from ..._tensor.tensor import Tensor
from ..modules.module import Module

__all__: list = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
                 "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
                 "l1_unstructured", "random_structured", "ln_structured", "global_unstructured",
                 "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A pruning technique: subclasses define ``PRUNING_TYPE`` (``'unstructured'``, ``'structured'`` with a
    ``dim`` attribute, or ``'global'``) and :meth:`compute_mask`. An applied instance is the forward pre-hook
    of its module, remembering the parameter it acts on in ``_tensor_name``."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t`` (the importance scores), on top of ``default_mask`` (ones when not pruned yet)."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_orig * <name>_mask`` (the mask cast to the parameter's dtype): the pruned tensor."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores: Tensor | None = None,
              **kwargs) -> "BasePruningMethod":
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, on top of any pruning already there; the mask
        is computed from ``importance_scores`` (same shape as the parameter) or from the parameter itself."""
        from ... import contiguous_format, ones_like
        method = _combine_with_existing(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                     f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:  # <name> -> <name>_orig (appended to the parameters, as PyTorch does)
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(memory_format=contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # roll back to the unpruned parameter (which lands last among the parameters)
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times the mask this method computes (from ``importance_scores`` when given)."""
        from ... import ones_like
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor t, "
                                     f"got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter again holding the pruned values (the
        ``<name>_orig`` Parameter object, so optimizers holding it keep working); ``_orig``/``_mask`` go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _combine_with_existing(cls: type, module: Module, name: str, *args, **kwargs) -> BasePruningMethod:
    """The method to apply: ``cls(*args, **kwargs)`` alone, or added to the pruning already on ``name`` (whose
    hook is unregistered here, before the new method is even built, as PyTorch does)."""
    keys = [k for k, h in module._forward_pre_hooks.items()
            if isinstance(h, BasePruningMethod) and h._tensor_name == name]
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                             f"{module}. Use a PruningContainer.")
    old = module._forward_pre_hooks[keys[0]] if keys else None
    for k in keys:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is None:
        return method
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        return old
    container = PruningContainer(old)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one parameter (iterative pruning). Built from one method (it
    takes that method's ``_tensor_name``) or several, which must all act on the same parameter."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod | None) -> None:
        """Append ``method``, which must prune the same parameter as the container."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The latest method's mask, computed only on what ``default_mask`` keeps: the kept entries (flattened)
        for ``unstructured``, the kept channels along ``method.dim`` for ``structured``, everything for
        ``global``; written into (a copy in ``t``'s dtype of) ``default_mask``."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc: Any = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                     "`dim` defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = tuple(keep_channel if d == dim else slice(None) for d in range(n_dims))
        elif kind == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the pruning reparametrization with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> "Identity":  # type: ignore[override]
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` (a count, or a fraction in [0, 1]) of the unpruned entries, chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        from ... import rand_like
        return _unstructured_mask(self.amount, t, default_mask, lambda: rand_like(t), largest=True)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float) -> "RandomUnstructured":  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes ``amount`` (a count, or a fraction in [0, 1]) of the unpruned entries with the smallest ``|t|``."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(self.amount, t, default_mask, t.abs, largest=False)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> "L1Unstructured":
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` (a count, or a fraction in [0, 1]) of the channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        from ... import kthvalue, rand, zeros_like
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(k, nchannels)
        if k == 0:
            return default_mask
        prob = rand(nchannels, device=t.device)
        keep = prob > kthvalue(prob, k=k).values  # the k smallest draws are pruned
        mask = zeros_like(t)
        mask[_channel_index(t, self.dim, keep)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              dim: int = -1) -> "RandomStructured":
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes ``amount`` (a count, or a fraction in [0, 1]) of the channels along ``dim`` with the smallest
    L``n`` norm (``n`` as ``p`` of :func:`torch.norm`: a number, ``inf``, ``-inf``, ``'fro'``, ``'nuc'``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        from ... import topk, zeros_like
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(k, nchannels)
        kept = topk(_compute_norm(t, self.n, self.dim), k=nchannels - k, largest=True).indices
        if k == 0:
            return default_mask
        mask = zeros_like(t)
        mask[_channel_index(t, self.dim, kept)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> "LnStructured":
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (multiplied into any existing one)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> "CustomFromMask":  # type: ignore[override]
        return super().apply(module, name, mask=mask)


# ---- the functional forms ------------------------------------------------------------------------------------
def identity(module: Module, name: str) -> Module:
    """Add the pruning reparametrization of ``module.<name>`` with a mask of ones; returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune ``amount`` random unpruned entries of ``module.<name>``; returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float,
                    importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` unpruned entries of ``module.<name>`` with the smallest absolute value (of
    ``importance_scores`` when given); returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune ``amount`` random unpruned channels of ``module.<name>`` along ``dim``; returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` unpruned channels of ``module.<name>`` along ``dim`` with the smallest L``n`` norm
    (of ``importance_scores`` when given); returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable, pruning_method: type, importance_scores: dict | None = None,
                        **kwargs) -> None:
    """Prune the ``(module, name)`` pairs of ``parameters`` together: ``pruning_method(**kwargs)`` (of
    ``PRUNING_TYPE`` ``'unstructured'``) ranks all their unpruned entries at once, e.g. ``amount=10`` prunes
    the 10 smallest among every listed tensor. ``importance_scores`` maps a pair to its scores tensor."""
    from ... import ones_like
    from .convert_parameters import parameters_to_vector
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for (module, name) in parameters])
    default_mask = parameters_to_vector([getattr(module, name + "_mask", ones_like(getattr(module, name)))
                                         for (module, name) in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        n = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + n].view_as(param))
        pointer += n


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` with the given ``mask``; returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent (a plain parameter holding the pruned values) and drop
    its hook; returns ``module``. Nothing is un-pruned."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any submodule has a pruning forward pre-hook."""
    return any(isinstance(h, BasePruningMethod)
               for _, sub in module.named_modules() for h in sub._forward_pre_hooks.values())


# ---- validation and helpers (PyTorch's rules and messages) -------------------------------------------------
def _validate_pruning_amount_init(amount: Any) -> None:
    """``amount``: a non-negative int or a float in [0, 1] (the tensor's size is checked at prune time)."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {shape} with {len(shape)} dims")


def _unstructured_mask(amount: int | float, t: Tensor, default_mask: Tensor, scores, largest: bool) -> Tensor:
    """``default_mask`` with the ``amount`` entries of ``t`` that rank first by ``scores()`` (computed, a random
    draw included, only when something is pruned) zeroed."""
    from ... import contiguous_format, topk
    tensor_size = t.nelement()
    k = _compute_nparams_toprune(amount, tensor_size)
    _validate_pruning_amount(k, tensor_size)
    mask = default_mask.clone(memory_format=contiguous_format)
    if k != 0:
        mask.view(-1)[topk(scores().view(-1), k=k, largest=largest).indices] = 0
    return mask


def _compute_nparams_toprune(amount: int | float, tensor_size: int) -> int:
    """A count stays; a fraction becomes ``round(amount * tensor_size)`` (Python's round: half to even)."""
    return amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    """The L``n`` norm of each channel along ``dim`` (over every other dim)."""
    from ... import norm
    dims = list(range(t.dim()))
    dims.remove(dims[dim])  # a too-negative dim: IndexError('list index out of range'), as PyTorch
    return norm(t, p=n, dim=dims)


def _channel_index(t: Tensor, dim: int, channels: Tensor) -> tuple:
    """The index selecting ``channels`` (a bool mask or indices) along ``dim`` of ``t``."""
    return tuple(channels if d == dim % t.dim() else slice(None) for d in range(t.dim()))
