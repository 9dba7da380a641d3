"""``GradScaler``: dynamic loss scaling for float16 training (``torch.amp.GradScaler``, spec §11.2, AMP-20..33).

The scale and the growth tracker are facade tensors (float32 and int32, 0-dim) held as attributes, updated
with in-place writes, so ``functorch_lite.compile`` finds them through the scaler object and threads them
through a compiled training step.

Fused, device-side work: ``unscale_(optimizer)`` is ONE jitted call per optimizer (per device) that checks
every gradient for inf/NaN and multiplies it by ``1/scale`` (PyTorch's
``_amp_foreach_non_finite_check_and_unscale_``); ``update()`` is one jitted call
(``_amp_update_scale_``). Host syncs happen where PyTorch syncs: ``step()`` reads ``found_inf`` to decide
whether to skip ``optimizer.step()`` (eagerly); ``get_scale()`` and ``state_dict()`` read the scale. While
tracing (inside ``compile``), ``found_inf`` is a tracer: ``step()`` then runs ``optimizer.step()``
unconditionally and selects the old parameters and optimizer state back with ``jnp.where`` where
``found_inf`` is set, so the skip is part of the compiled program. Keep the whole cycle
(``scale``/``backward``/``step``/``update``) inside the compiled function, or all of it outside.
"""
from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any, Iterable, Optional, Union

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._tensor.tensor import Tensor
from ..optim import optimizer as _optimizer


class OptState(Enum):
    """Per-optimizer stage within one iteration (PyTorch's ``OptState``)."""
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


@jax.jit
def _unscale_and_check(grads: tuple, scale):
    """All grads of one device at once: (grads * (1/scale) in each grad's dtype, found_inf float32 0-dim).

    The reciprocal is taken in float64 then rounded to float32, as PyTorch does; each grad is multiplied in
    its opmath type (float32 for half types, else its own) and rounded back."""
    inv = (jnp.float64(1.0) / scale.astype(jnp.float64)).astype(jnp.float32)
    found = jnp.zeros((), jnp.float32)
    out = []
    for g in grads:
        found = jnp.where(jnp.all(jnp.isfinite(g)), found, jnp.float32(1.0))
        op = jnp.float64 if g.dtype == jnp.float64 else jnp.float32
        out.append((g.astype(op) * inv.astype(op)).astype(g.dtype))
    return tuple(out), found


@jax.jit
def _update_scale(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """PyTorch's ``_amp_update_scale_``: back off on inf, grow after ``growth_interval`` clean steps."""
    found = found_inf > 0
    s64 = scale.astype(jnp.float64)
    backed = (s64 * backoff_factor).astype(jnp.float32)
    successful = tracker + 1
    grown = (s64 * growth_factor).astype(jnp.float32)
    at_interval = successful == growth_interval
    new_scale = jnp.where(found, backed, jnp.where(at_interval & jnp.isfinite(grown), grown, scale))
    new_tracker = jnp.where(found | at_interval, jnp.zeros_like(tracker), successful)
    return new_scale, new_tracker


def _is_traced(a) -> bool:
    return isinstance(a, jax.core.Tracer)


class GradScaler:
    """``torch.amp.GradScaler(device='cuda', init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``.

    >>> import functorch_lite as torch
    >>> w = torch.tensor([1., 2.], requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1)
    >>> scaler = torch.amp.GradScaler('cpu')
    >>> scaler.scale((w ** 2).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            # PyTorch creates the scale and the growth tracker on the first scale(), on the outputs' device; here
            # they exist from the start (so a compiled step reaches them: ``_scale_t`` / ``_tracker_t``), on the
            # scaler's device or, where this machine has none of that type ('mps', 'cuda:0' without CUDA, a
            # made-up name: PyTorch accepts any), on the CPU, and move to the outputs' device at that first
            # scale(). ``_used`` stands for "scale() has run": until then ``_scale`` / ``_growth_tracker`` read None
            self._used = False
            self._make_state(self._device)
            self._per_optimizer_states: dict = defaultdict(_refresh_per_optimizer_state)

    def _make_state(self, device) -> None:
        from ..ops.creation import full
        try:
            self._scale_t = full((), self._init_scale, dtype=D.float32, device=device)
        except RuntimeError:  # (no such device here, or no device at all)
            self._scale_t = full((), self._init_scale, dtype=D.float32, device="cpu")
        self._tracker_t = full((), self._init_growth_tracker, dtype=D.int32, device=self._scale_t.device)

    @property
    def _scale(self) -> Optional[Tensor]:
        """The scale (a float32 0-dim tensor), None until the first ``scale()`` (PyTorch's lazy attribute)."""
        if not self._enabled:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '_scale'")
        return self._scale_t if self._used else None

    @_scale.setter
    def _scale(self, value: Optional[Tensor]) -> None:
        if value is None:  # (the next scale() starts again from ``_init_scale``, as PyTorch's lazy init)
            self._used = False
            self._make_state(self._scale_t.device)
        else:
            self._scale_t = value
            self._used = True

    @property
    def _growth_tracker(self) -> Optional[Tensor]:
        """The growth tracker (an int32 0-dim tensor), None until the first ``scale()``."""
        if not self._enabled:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '_growth_tracker'")
        return self._tracker_t if self._used else None

    @_growth_tracker.setter
    def _growth_tracker(self, value: Optional[Tensor]) -> None:
        if value is not None:
            self._tracker_t = value

    def _check_scale_growth_tracker(self, funcname: str) -> tuple:
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if not self._used:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        return self._scale_t, self._tracker_t

    def _scale_on(self, device) -> Tensor:
        s = self._scale_t
        if not self._used:
            self._used = True
            if s.device != device:  # (PyTorch's lazy init: on the first outputs' device)
                self._make_state(device)
                s = self._scale_t
        return s if s.device == device else s.to(device)

    def scale(self, outputs: Union[Tensor, Iterable]) -> Any:
        """``outputs * scale`` (a Tensor, or lists/tuples/iterables of them; AMP-24/29/30); unchanged when
        disabled (AMP-28)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_on(outputs.device)

        def apply_scale(val):
            if isinstance(val, Tensor):
                return val * self._scale_on(val.device)
            if isinstance(val, abc.Iterable):
                it = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(it)
                return it
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place and record whether any is inf/NaN: one fused
        jitted call per device (AMP-24/26/32)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        per_device: dict = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype is D.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                per_device.setdefault(g.device, []).append(g)
        found_per_device = {}
        for dev, grads in per_device.items():
            scale = self._scale_on(dev)
            new, found = _unscale_and_check(tuple(g._array for g in grads), scale._array)
            for g, a in zip(grads, new):
                g._write(a)
            found_per_device[dev] = Tensor._from_array(found, D.float32, dev)
        state["found_inf_per_device"] = found_per_device
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state: dict, *args: Any, **kwargs: Any) -> Any:
        founds = [t._array for t in state["found_inf_per_device"].values()]
        if any(_is_traced(f) for f in founds):
            return self._traced_step(optimizer, founds, *args, **kwargs)
        # the host sync PyTorch also does here: skip the step when a gradient was inf/NaN
        if not sum(float(f) for f in founds):
            return optimizer.step(*args, **kwargs)
        return None

    def _traced_step(self, optimizer, founds: list, *args: Any, **kwargs: Any) -> Any:
        """Inside a compiled step: run the update, then keep the old parameters and optimizer state where
        ``found_inf`` is set (a ``jnp.where`` select instead of a Python branch)."""
        skip = founds[0] > 0
        for f in founds[1:]:
            skip = skip | (f > 0)
        snap = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    snap.append((p, group, p._array, optimizer._ostate.get(p)))
        retval = optimizer.step(*args, **kwargs)
        for p, group, old_arr, old_state in snap:
            p._write(jnp.where(skip, old_arr, p._array))
            new_state = optimizer._ostate.get(p)
            if new_state is None:
                continue
            if old_state is None:
                key = optimizer._key_of(group)
                old_state = optimizer._init_state(key, old_arr)
                if _optimizer.FIRST_STEPS[0] is not None:
                    _optimizer.FIRST_STEPS[0].append((optimizer, p, skip))
            optimizer._put_state(p, jax.tree_util.tree_map(lambda o, n: jnp.where(skip, o, n), old_state, new_state))
            optimizer._refresh_views(p, group)
        return retval

    def step(self, optimizer, *args: Any, **kwargs: Any) -> Any:
        """Unscale (if not done yet) and run ``optimizer.step()`` unless a gradient was inf/NaN (AMP-25/27)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Union[float, Tensor, None] = None) -> None:
        """Back the scale off after an inf/NaN step, grow it after ``growth_interval`` clean steps, or set
        ``new_scale`` (AMP-25/31). One jitted call; no host sync."""
        if not self._enabled:
            return
        _scale, _tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                _scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                # (PyTorch's checks, in its order: an int has no ``device`` -- its AttributeError)
                if new_scale.device.type != self._device or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                if new_scale.dim() > 0:  # copy_ into the 0-dim scale (Tensor.copy_ raises a ValueError here)
                    raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                                       f"{list(new_scale.shape)}")
                _scale.copy_(new_scale)
        else:
            founds = [t._array if t.device == _scale.device else t.to(_scale.device)._array
                      for st in self._per_optimizer_states.values() for t in st["found_inf_per_device"].values()]
            if len(founds) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = founds[0]
            for f in founds[1:]:
                combined = combined + f
            s, t = _update_scale(_scale._array, _tracker._array, combined, jnp.float64(self._growth_factor),
                                 jnp.float64(self._backoff_factor), jnp.int32(self._growth_interval))
            _scale._write(s)
            _tracker._write(t)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---- getters / setters / state ----------------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale as a Python float (a host sync); 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if not self._used else float(self._scale_t.item())

    def get_growth_factor(self) -> float:
        """The growth factor."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The backoff factor."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """The growth interval."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return self._init_growth_tracker if not self._used else int(self._tracker_t.item())
        return 0

    def is_enabled(self) -> bool:
        """Whether this scaler is enabled (AMP-21/23/28)."""
        return self._enabled

    def state_dict(self) -> dict:
        """``{'scale', 'growth_factor', 'backoff_factor', 'growth_interval', '_growth_tracker'}``; ``{}`` when
        disabled (AMP-24)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load :meth:`state_dict`'s values (a no-op when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        self._scale_t.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        self._tracker_t.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale_t"] = state["_tracker_t"] = None
            state["_used"] = False
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if self._enabled:
            self._make_state(self._device)
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)


def _deprecated_scaler(device: str) -> type:
    """``torch.<device>.amp.GradScaler(...)`` (deprecated; AMP-22): a FutureWarning, then ``GradScaler(device, ...)``."""
    class Deprecated(GradScaler):
        def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                     growth_interval: int = 2000, enabled: bool = True) -> None:
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled)
    Deprecated.__name__ = Deprecated.__qualname__ = "GradScaler"  # (torch's class names itself so too)
    Deprecated.__module__ = f"functorch_lite.{device}.amp"  # (where pickle finds it, as GradScaler)
    Deprecated.__doc__ = _deprecated_scaler.__doc__.replace("<device>", device)
    return Deprecated


CpuGradScaler = _deprecated_scaler("cpu")
CudaGradScaler = _deprecated_scaler("cuda")
