"""``torch.segment_reduce``: reductions of consecutive segments along one axis (given by ``lengths`` or
``offsets``).

One ``@defop`` (``segment_reduce``, PyTorch's ``SegmentReduceBackward0``) whose body is ATen's CPU kernel
(``SegmentReduce.cpp``) as written: each segment is reduced element after element in the data's own dtype
(float16 and bfloat16 too, as ATen does: 3000 float16 ``0.1`` sum to 256), starting from ``initial`` or the
reduction's identity; ``max`` / ``min`` take a NaN; a ``mean`` divides by the length (an empty one is NaN without
``initial``). The gradient is ATen's ``_segment_reduce_backward`` as a ``jax.custom_vjp``: max / min ties share the
gradient (only its positive values are divided, as ATen's), ``prod`` divides ``grad * output`` by the value or
takes the exclusive product at a zero or NaN; differentiating that backward again raises PyTorch's error.

Example::

    >>> import functorch_lite as torch
    >>> torch.segment_reduce(torch.tensor([1., 2., 3.]), "sum", lengths=torch.tensor([2, 1]))
    tensor([3., 3.])
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor, _wrap_dim
from ._registry import defop
from ._rounding import true_div
from .fft_ops import int_arg
from .grad_overrides import aten_no_derivative
from .nn_sampling import _host
from ._dispatch import _type_name

__all__: list = ["segment_reduce"]

# ATen's get_reduction_enum: the names it takes (max / min are amax / amin)
_REDUCE = {"sum": "sum", "mean": "mean", "max": "max", "amax": "max", "min": "min", "amin": "min", "prod": "prod"}
_INDEX = (D.int32, D.int64)
_BACKWARD_NO_GRAD = aten_no_derivative("_segment_reduce_backward")
_ENHANCE = "  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"


def _start(red, initial, dt):
    if initial is not None:
        return jnp.asarray(initial, dt)
    return jnp.asarray({"max": -jnp.inf, "min": jnp.inf, "prod": 1}.get(red, 0), dt)


def _layout(x, bounds):
    """Each position's segment (B, L) and whether it lies in one (between the first and the last bound)."""
    pos = jnp.arange(x.shape[1], dtype=jnp.int64)
    seg = jax.vmap(lambda b: jnp.searchsorted(b, pos, side="right"))(bounds) - 1
    inside = (pos[None] >= bounds[:, :1]) & (pos[None] < bounds[:, -1:])
    return jnp.clip(seg, 0, bounds.shape[1] - 2), inside


def _scan(x, bounds, red, initial):
    """ATen's loop: each segment's value (B, S, I), accumulated in order, one rounding a step."""
    b_n, _, i_n = x.shape
    seg, inside = _layout(x, bounds)
    acc0 = jnp.broadcast_to(_start(red, initial, x.dtype), (b_n, bounds.shape[1] - 1, i_n))
    rows = jnp.arange(b_n)

    def step(acc, xs):
        v, s, ok = xs  # (B, I), (B,), (B,)
        cur = acc[rows, s]
        if red == "max":  # (std::max(cur, v): ``cur < v ? v : cur``; a NaN value is taken)
            new = jnp.where(jnp.isnan(v) | (cur < v), v, cur)
        elif red == "min":
            new = jnp.where(jnp.isnan(v) | (v < cur), v, cur)
        elif red == "prod":
            new = cur * v
        else:
            new = cur + v
        return acc.at[rows, s].set(jnp.where(ok[:, None], new, cur)), None
    if x.shape[1] == 0 or acc0.shape[1] == 0:
        return acc0
    acc, _ = jax.lax.scan(step, acc0, (jnp.moveaxis(x, 1, 0), seg.T, inside.T))
    return acc


def _div(a, n):
    """``scalar_t / int64_t`` as C++ evaluates it: in float for the half types, rounded once."""
    cdt = D.opmath(a.dtype)
    return true_div(a.astype(cdt), n.astype(cdt)).astype(a.dtype)


@partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def _segment(x, bounds, red, initial):
    out = _scan(x, bounds, red, initial)
    if red == "mean":
        n = (bounds[:, 1:] - bounds[:, :-1])[..., None]
        avg = jnp.where((n > 0) & ~jnp.isnan(out), _div(out, jnp.maximum(n, 1)), out)
        out = jnp.where(n == 0, jnp.asarray(jnp.nan, out.dtype), avg) if initial is None else avg
    return out


def _segment_fwd(x, bounds, red, initial):
    out = _segment(x, bounds, red, initial)
    return out, (x, bounds, out)


def _segment_bwd(red, initial, res, g):
    """ATen's ``_segment_reduce_cpu_lengths_backward_kernel1``."""
    x, bounds, out = res
    seg, inside = _layout(x, bounds)
    rows = jnp.arange(x.shape[0])[:, None]
    n = bounds[:, 1:] - bounds[:, :-1]
    zero = jnp.zeros((), x.dtype)
    if red == "sum":
        gi = g[rows, seg]
    elif red == "mean":
        gi = _div(g, jnp.maximum(n, 1)[..., None])[rows, seg]
    elif red in ("max", "min"):
        hit = inside[..., None] & (jnp.isnan(x) | (x == out[rows, seg]))
        gi = jnp.where(hit, g[rows, seg], zero)
        count = jnp.zeros(out.shape, jnp.int64).at[rows, seg].add(hit.astype(jnp.int64))[rows, seg]
        gi = jnp.where((count >= 2) & (gi > 0), _div(gi, count), gi)  # (ATen divides the positive ones only)
    else:  # prod: grad * output / value, or the exclusive product where the value is 0 or NaN
        special = jnp.isnan(x) | (x == 0)
        gi = true_div((g * out)[rows, seg], jnp.where(special, jnp.ones((), x.dtype), x)).astype(x.dtype)
        # the product of the others, in ATen's order: the segment's product with this value as 1 (exact) when it
        # is the segment's only zero / NaN; with another one among the others, that one's zero or NaN decides
        ones = jnp.where(special, jnp.ones((), x.dtype), x)
        rest = _scan(ones, bounds, "prod", initial)[rows, seg]
        k = jnp.zeros(out.shape, jnp.int64).at[rows, seg].add((special & inside[..., None]).astype(jnp.int64))
        nans = jnp.zeros(out.shape, jnp.int64).at[rows, seg].add((jnp.isnan(x) & inside[..., None]).astype(jnp.int64))
        infs = jnp.zeros(out.shape, jnp.int64).at[rows, seg].add((jnp.isinf(x) & inside[..., None]).astype(jnp.int64))
        others_nan = nans[rows, seg] - jnp.isnan(x).astype(jnp.int64) > 0
        others_inf = (infs[rows, seg] > 0) | jnp.isinf(_start("prod", initial, x.dtype))
        several = jnp.where(others_nan | others_inf, jnp.asarray(jnp.nan, x.dtype), zero)
        excl = jnp.where(k[rows, seg] > 1, several, rest)
        gi = jnp.where(special, g[rows, seg] * excl, gi)
    gi = jnp.where(inside[..., None], gi, zero)
    return _BACKWARD_NO_GRAD(gi, x, g), None


_segment.defvjp(_segment_fwd, _segment_bwd)


def _rule(op, sig, sargs):
    dt = sig[0][1]
    if dt not in (D.float16, D.bfloat16, D.float32, D.float64):
        raise no_kernel("_segment_reduce_cpu", dt)
    return (None, None), (dt,)


@defop("segment_reduce", promote=_rule, grad_fn="SegmentReduceBackward0", tensors=2, method=False, function=False,
       kernel="_segment_reduce_cpu", saves=(0,))
def _segment_reduce(data, index, axis, red, is_offsets, initial):
    """``data`` reduced over segments along ``axis``; ``index``: the lengths or offsets, (data's dims before
    ``axis``..., S or S + 1)."""
    lead, size, inner = data.shape[:axis], data.shape[axis], data.shape[axis + 1:]
    b_n = 1
    for s in lead:
        b_n *= s
    i_n = 1
    for s in inner:
        i_n *= s
    x = data.reshape(b_n, size, i_n)
    idx = index.astype(jnp.int64).reshape(b_n, -1)
    bounds = idx if is_offsets else jnp.concatenate([jnp.zeros((b_n, 1), jnp.int64), jnp.cumsum(idx, axis=1)], 1)
    out = _segment(x, bounds, red, initial)
    return out.reshape(lead + (bounds.shape[1] - 1,) + inner)


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None, indices: Tensor | None = None,
                   offsets: Tensor | None = None, axis: int = 0, unsafe: bool = False, initial=None) -> Tensor:
    """``torch.segment_reduce``: ``sum`` / ``mean`` / ``max`` / ``min`` / ``prod`` over consecutive segments of
    ``data`` along ``axis`` (the last dimension of ``lengths`` / ``offsets``, whose leading dimensions are data's
    before it); ``unsafe`` skips the check that the lengths cover ``data``; ``initial`` starts each segment."""
    axis = _wrap_dim(int_arg("segment_reduce", "axis", axis), data.dim())
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    is_offsets = offsets is not None
    name, index = ("offsets", offsets) if is_offsets else ("lengths", lengths)
    if not isinstance(index, Tensor):
        raise TypeError(f"segment_reduce(): argument '{name}' must be Tensor, not {_type_name(index)}")
    if data.dim() < index.dim():
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim() to be true, but got false.{_ENHANCE}")
    if axis != index.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} but got {axis}.")
    h = _host(index)
    if not is_offsets and not unsafe:
        if index.numel() == 0:
            raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.")
        if h is not None:
            if h.min() < 0:
                raise RuntimeError("lengths contains negative value!")
            if not (h.sum(-1) == data.shape[axis]).all():
                raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                                   "data.size(lengths.dim()-1) when !unsafe.")
    if index.dtype not in _INDEX:
        raise no_kernel(f"_segment_reduce_{name}_cpu_kernel1", index.dtype)
    if tuple(index.shape[:-1]) != tuple(data.shape[:axis]):  # (PyTorch indexes past the tensors here)
        raise RuntimeError(f"segment_reduce(): {name}'s leading dimensions {list(index.shape[:-1])} must be data's "
                           f"before axis {axis}, {list(data.shape[:axis])} (PyTorch reads out of bounds here)")
    if is_offsets and index.shape[-1] == 0:
        raise RuntimeError("segment_reduce(): offsets must have at least one entry (PyTorch reads out of bounds "
                           "here)")
    if h is not None and h.size:
        import numpy as np
        h = h.astype(np.int64).reshape(-1, h.shape[-1])
        bounds = h if is_offsets else np.concatenate([np.zeros((h.shape[0], 1), np.int64), np.cumsum(h, 1)], 1)
        if (np.diff(bounds, axis=1) < 0).any():
            raise RuntimeError(f"Expected segment_length >= 0 to be true, but got false.{_ENHANCE}")
        if (bounds < 0).any() or (bounds > data.shape[axis]).any():
            raise RuntimeError(f"segment_reduce(): the segments reach past data.size({axis}) = {data.shape[axis]} "
                               "(PyTorch reads out of bounds here)")
    if initial is not None and not isinstance(initial, (bool, int, float)):
        raise RuntimeError(f"segment_reduce(): initial must be a real number, got {type(initial).__name__}")
    return _segment_reduce(data, index, axis, _REDUCE[reduce], is_offsets,
                           None if initial is None else float(initial))
