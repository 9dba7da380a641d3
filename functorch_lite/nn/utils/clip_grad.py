"""Gradient clipping (``torch.nn.utils.clip_grad``).

``clip_grad_norm_`` computes the total norm AND scales every gradient in ONE cached jitted call over
all the gradients of a device (the model is ``optim.optimizer``: arrays in, arrays out, written
back into each ``.grad``'s storage as an in-place update). The jitted functions are cached per
(kind, norm type, result dtype); shapes are cached by ``jax.jit`` itself, and ``max_norm`` is an
argument value, so changing it never recompiles.

Numerics follow PyTorch: per-tensor norms in each gradient's dtype (``_foreach_norm``), stacked with
type promotion, then the norm of that vector; ``coef = min(max_norm / (total + 1e-6), 1)`` in the
total norm's dtype, multiplied into each gradient in the gradient's dtype. A complex gradient's norm is real (of
its moduli); a gradient listed several times (tied weights) counts, and is scaled, once per entry, as torch's mul_.
"""
from __future__ import annotations

import types
import warnings
from typing import Iterable, Union

import jax
import jax.numpy as jnp
import numpy as np

from ... import dtypes as D
from ..._promotion import promote_types
from ..._tensor.tensor import Tensor
from ..._warn import user_stacklevel as _user_stacklevel

__all__: list = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
                 "clip_grads_with_norm_"]

_tensor_or_tensors = Union[Tensor, Iterable[Tensor]]
_FNS: dict = {}
TRACES = {"count": 0}  # traces of the jitted clip functions (a retrace = a recompile); read by the tests

_NONFINITE = ("The total norm of order {} for gradients from `parameters` is non-finite, so it cannot be clipped. "
              "To disable this error and scale the gradients by the non-finite norm anyway, set "
              "`error_if_nonfinite=False`")


def _vector_norm(x, p: float, acc):
    """``torch.linalg.vector_norm(x, p)`` accumulated in dtype ``acc``, returned in ``x.dtype`` (its real dtype for a
    complex ``x``: the norm of the moduli, as torch)."""
    a = jnp.abs(x.astype(acc))
    acc = a.dtype  # (real: a complex accumulator's moduli)
    if p == float("inf"):
        r = jnp.max(a)
    elif p == float("-inf"):
        r = jnp.min(a)
    elif p == 0:
        r = jnp.sum((a != 0).astype(acc))
    elif p == 1:
        r = jnp.sum(a)
    elif p == 2:
        r = jnp.sqrt(jnp.sum(a * a))
    else:
        r = jnp.sum(a ** jnp.asarray(p, acc)) ** jnp.asarray(1.0 / p, acc)
    return r.astype(acc if jnp.iscomplexobj(x) else x.dtype)


def _total(arrays, p, out):
    """The total norm of ``arrays`` as one vector, in dtype ``out`` (a jnp dtype)."""
    norms = jnp.stack([_vector_norm(a, p, D.opmath(a.dtype)).astype(out) for a in arrays])
    return _vector_norm(norms, p, D.opmath(out))


def _scale(arrays, max_norm, total):
    coef = jnp.asarray(max_norm).astype(total.dtype) / (total + jnp.asarray(1e-6, total.dtype))
    coef = jnp.minimum(coef, jnp.asarray(1.0, total.dtype))
    return [a * coef.astype(a.dtype) for a in arrays]


def _fn(kind: str, p: float, out):
    """The cached jitted function of ``kind`` ('norm' | 'clip' | 'scale' | 'value') for one norm type."""
    key = (kind, p, None if out is None else np.dtype(out).name)
    fn = _FNS.get(key)
    if fn is not None:
        return fn
    if kind == "norm":
        def f(arrays):
            TRACES["count"] += 1
            return _total(arrays, p, out)
    elif kind == "clip":
        def f(arrays, max_norm):
            TRACES["count"] += 1
            total = _total(arrays, p, out)
            return total, _scale(arrays, max_norm, total)
    elif kind == "scale":
        def f(arrays, max_norm, total):
            TRACES["count"] += 1
            return _scale(arrays, max_norm, total)
    else:
        def f(arrays, v):
            TRACES["count"] += 1
            return [jnp.clip(a, -jnp.asarray(v).astype(a.dtype), jnp.asarray(v).astype(a.dtype)) for a in arrays]
    fn = _FNS[key] = jax.jit(f)
    return fn


def _as_list(parameters: _tensor_or_tensors, warn_generator: bool = False) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    is_gen = isinstance(parameters, types.GeneratorType)
    out = list(parameters)
    if warn_generator and is_gen and not out:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", UserWarning,
                      stacklevel=_user_stacklevel())
    return out


def _grads(params: list) -> list:
    return [p._grad for p in params if p._grad is not None]


def _by_device(tensors: list) -> dict:
    groups: dict = {}
    for t in tensors:
        groups.setdefault(t.device, []).append(t)
    return groups


def _total_dtype(tensors: list) -> D.dtype:
    """The total norm's dtype: the per-tensor norms' (each gradient's real dtype) promoted together; an integer or
    bool tensor is ``linalg.vector_norm``'s RuntimeError, as torch's first per-tensor norm raises it."""
    dt = None
    for t in tensors:
        tdt = t.dtype
        if tdt.category < D.FLOAT:
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                               f"{tdt.short}")
        dt = tdt if dt is None else promote_types(dt, tdt)
    return dt.to_real()


def _zero() -> Tensor:
    from ... import tensor
    return tensor(0.0)


def _check_finite(total: Tensor, norm_type: float) -> None:
    arr = total._array
    if isinstance(arr, jax.core.Tracer):
        from ..._compile.runner import TRACING
        if TRACING[0]:  # (a check on the value: the compiled call runs eagerly, where it raises; torch.compile's
            from ...ops._dispatch import data_dependent_error  # program raises it too)
            raise data_dependent_error("clip_grad_norm_(..., error_if_nonfinite=True) (it checks the norm's "
                                       "value)", arr)
        return
    if not bool(jnp.isfinite(arr)):
        raise RuntimeError(_NONFINITE.format(norm_type))


def _norm_of(tensors: list, norm_type: float) -> Tensor:
    """Total norm of ``tensors`` (one jitted call per device; the partial norms meet on the first device)."""
    out = _total_dtype(tensors)
    groups = _by_device(tensors)
    first = tensors[0].device
    if len(groups) == 1:
        arr = _fn("norm", norm_type, out.jnp)([t._array for t in tensors])
        return Tensor._from_array(arr, out, first)
    dev = next(iter(tensors[0]._array.devices()))
    parts = [jax.device_put(_fn("norm", norm_type, out.jnp)([t._array for t in ts]), dev) for ts in groups.values()]
    arr = _fn("norm", norm_type, out.jnp)(parts)
    return Tensor._from_array(arr, out, first)


def get_total_norm(tensors: _tensor_or_tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The norm of ``tensors`` viewed as one vector (``norm_type`` may be ``inf``).

    >>> get_total_norm([ft.ones(3), ft.ones(1)])   # tensor(2.)
    """
    ts = _as_list(tensors)
    norm_type = float(norm_type)
    if not ts:
        return _zero()
    total = _norm_of(ts, norm_type)
    if error_if_nonfinite:
        _check_finite(total, norm_type)
    return total


def _write(grads: list, arrays: list) -> None:
    for g, a in zip(grads, arrays):
        g._write(a)


def _repeats(grads: list) -> list:
    """For a gradient listed several times (a tied weight's parameter given twice, two parameters sharing one
    ``.grad`` tensor): the further passes of torch's ``mul_`` over it, each pass the gradients still to scale once
    more (torch scales such a gradient once per entry, so ``coef ** n``); ``[]`` when every gradient is listed once
    (one ``id`` set: the common path)."""
    if len({id(g) for g in grads}) == len(grads):
        return []
    same: dict = {}
    for g in grads:
        same.setdefault(id(g), []).append(g)
    groups = list(same.values())
    return [[gs[0] for gs in groups if len(gs) > k] for k in range(1, max(map(len, groups)))]


def _scale_into(grads: list, max_norm: float, total_norm: Tensor) -> None:
    """``g.mul_(min(max_norm / (total_norm + 1e-6), 1))`` for every entry of ``grads`` (one jitted call per device)."""
    for dev, gs in _by_device(grads).items():
        total = total_norm._array
        if total_norm.device != dev:
            total = jax.device_put(total, next(iter(gs[0]._array.devices())))
        _write(gs, _fn("scale", 0.0, None)([g._array for g in gs], np.float64(max_norm), total))


def clip_grads_with_norm_(parameters: _tensor_or_tensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients by ``min(max_norm / (total_norm + 1e-6), 1)`` in place (one jitted call per device)."""
    grads = _grads(_as_list(parameters))
    if not grads:
        return
    if not isinstance(total_norm, Tensor):
        _refuse_norm(max_norm, total_norm)
    max_norm = float(max_norm)
    for g in grads:  # (torch's mul_ of an integer gradient by the floating coefficient)
        if g.dtype.category < D.FLOAT:
            coef = total_norm.dtype if total_norm.dtype.category >= D.FLOAT else D._DEFAULT[0]
            raise RuntimeError(f"result type {coef.short} can't be cast to the desired output type {g.dtype.short}")
    repeats = _repeats(grads)
    _scale_into(grads, max_norm, total_norm)
    for gs in repeats:  # (a gradient listed n times: scaled n times, as torch's per-entry mul_)
        _scale_into(gs, max_norm, total_norm)


def _refuse_norm(max_norm, total_norm) -> None:
    """torch's errors for a ``total_norm`` that is not a tensor: its ``max_norm / (total_norm + 1e-6)`` (Python's
    TypeError for a None or a string), then ``torch.clamp`` of that number's "invalid combination" TypeError."""
    coef = max_norm / (total_norm + 1e-6)
    if isinstance(coef, Tensor):
        return
    t = type(coef)
    got = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}, max=float), but expected "
                    "one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n * "
                    "(Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")


def clip_grad_norm_(parameters: _tensor_or_tensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Clip the gradients' total norm to ``max_norm`` in place; returns the total norm (before clipping).

    The norm and the scaled gradients come from ONE cached jitted call over all gradients (per device).

    >>> total = clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    params = _as_list(parameters, warn_generator=True)
    grads = _grads(params)
    norm_type = float(norm_type)
    max_norm = float(max_norm)
    if not grads:
        return _zero()
    if len(_by_device(grads)) > 1:
        total = get_total_norm(grads, norm_type, error_if_nonfinite)
        clip_grads_with_norm_(params, max_norm, total)
        return total
    out = _total_dtype(grads)
    total_arr, new = _fn("clip", norm_type, out.jnp)([g._array for g in grads], np.float64(max_norm))
    total = Tensor._from_array(total_arr, out, grads[0].device)
    if error_if_nonfinite:
        _check_finite(total, norm_type)  # raised before any gradient is written, as PyTorch
    repeats = _repeats(grads)
    _write(grads, new)
    for gs in repeats:  # (a gradient listed n times: scaled n times, as torch's per-entry mul_)
        _scale_into(gs, max_norm, total)
    return total


def clip_grad_norm(parameters: _tensor_or_tensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (PyTorch's FutureWarning)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=_user_stacklevel())
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _tensor_or_tensors, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient into ``[-clip_value, clip_value]`` in place (one jitted call per device)."""
    grads = _grads(_as_list(parameters))
    clip_value = float(clip_value)
    if any(g.dtype.is_complex for g in grads):  # (torch clamps each gradient: clamp's error)
        raise NotImplementedError("clamp is not supported for complex types")
    for gs in _by_device(grads).values():
        _write(gs, _fn("value", 0.0, None)([g._array for g in gs], np.float64(clip_value)))
