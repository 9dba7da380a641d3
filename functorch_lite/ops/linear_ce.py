"""``F.linear_cross_entropy`` (torch 2.13): the cross entropy of ``input @ linear_weight.T (+ linear_bias)``, and
``LinearCrossEntropyOptions``, its chunked variant's settings (``nn.LinearCrossEntropyLoss`` is the module).

Without options it is torch's reference: ``linear`` then ``cross_entropy`` (K-dimensional weights
``(C, d_1, ..., d_K, in)`` give logits ``(N, C, d_1, ..., d_K)``). With options (class-index int64 targets,
reduction mean / sum / none, no label smoothing, a 2-D weight; anything else falls back with torch's warning), the
batch is processed in chunks of ``batch_chunk_size`` rows (``LinearCrossEntropyOptions._adjust``: torch's
heuristics) by one op whose kernel is a ``lax.map`` over the chunks, each under ``jax.checkpoint``: the full
``(N, C)`` logits exist neither in the forward nor in the backward (which recomputes a chunk's logits, the weight
gradient accumulating across chunks), the point of the chunked path for an LLM's vocabulary head. Its
accumulation is in ``acc_dtype`` (float32 for half inputs, as torch's CPU pick). torch's chunked kernels consume
precomputed gradients in place, so a second backward, double backward and ``torch.func`` raise there; here the
op's backward is an ordinary pullback and all of them work.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Literal

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._tensor.tensor import Tensor
from .._warn import user_stacklevel
from ._registry import defop
from .nn_ops import _kernel_rule, _target_bounds

__all__ = ["linear_cross_entropy", "LinearCrossEntropyOptions"]

_POLICIES = ("auto", "accurate", "balanced", "compact")
# (device type, input dtype) -> (acc_policy, chunking_method) for "auto"; others get _FALLBACK (torch's table)
_AUTO = {("cuda", D.bfloat16): ("compact", "aspect_ratio:2"), ("cuda", D.float16): ("compact", "aspect_ratio:2"),
         ("cpu", D.bfloat16): ("accurate", "aspect_ratio"), ("cpu", D.float16): ("accurate", "aspect_ratio")}
_FALLBACK = ("compact", "aspect_ratio:2")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """``torch.nn.LinearCrossEntropyOptions``: how the chunked ``linear_cross_entropy`` splits the batch.
    ``batch_chunk_size`` rows per chunk (None: one chunk), or ``chunking_method`` ``"aspect_ratio[:N]"`` (each
    chunk's logits as big as the input, divided by N) / ``"auto"`` / None; ``acc_policy`` and ``acc_dtype``: the
    accumulation (here: everything in ``acc_dtype``, whatever the policy)."""
    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: D.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (D.float16, D.bfloat16, D.float32, D.float64):
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    @staticmethod
    def _chunk_for(method: str, n: int, in_features: int, num_classes: int) -> int:
        """``"aspect_ratio[:N]"``: the power of two at or above ``n / ceil(C / in)``, divided by N."""
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-n // -(-num_classes // in_features))
        return min((1 << (target - 1).bit_length()) // factor, n)

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None) -> "LinearCrossEntropyOptions":
        """The options with "auto" and None resolved for a call (torch's ``_adjust``)."""
        policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None  # (an explicit size wins over the automatic method)
        if policy == "auto" or method == "auto":
            ap, cm = _AUTO.get((device.type, dtype), _FALLBACK) if device is not None else _FALLBACK
            policy = ap if policy == "auto" else policy
            method = cm if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            size = self._chunk_for(method, num_batches, in_features, num_classes)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                                 f"different chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        acc = self.acc_dtype
        if acc is None:
            half = dtype in (D.float16, D.bfloat16) and device is not None and device.type in ("cpu", "cuda")
            acc = D.float32 if self.acc_policy == "auto" and half else dtype
        return dataclasses.replace(self, acc_policy=policy, chunking_method=method, batch_chunk_size=max(1, size),
                                   acc_dtype=acc)


def _chunked_loss(x, w, t, b, cw, ignore_index, chunk, acc):
    """Per-row losses and weights of the rows of ``x`` (N, in), a chunk of rows at a time (module docstring)."""
    acc = jnp.dtype(acc)
    n = x.shape[0]
    k = -(-n // chunk)
    pad = k * chunk - n
    xs = jnp.pad(x, ((0, pad), (0, 0))).reshape(k, chunk, x.shape[1])
    ts = jnp.pad(t.astype(jnp.int64), (0, pad), constant_values=ignore_index).reshape(k, chunk)

    @jax.checkpoint
    def one(args):
        xc, tc = args
        if xc.dtype != w.dtype:  # (a half input beside a weight in the accumulation dtype)
            xc = xc.astype(w.dtype)
        logits = jnp.matmul(xc, w.T, preferred_element_type=acc).astype(acc)
        if b is not None:
            logits = logits + b.astype(acc)
        valid = tc != ignore_index
        safe = jnp.where(valid, tc, 0)
        picked = jnp.take_along_axis(logits, safe[:, None], axis=1)[:, 0]
        rw = jnp.ones_like(picked) if cw is None else cw[safe].astype(acc)
        rw = jnp.where(valid, rw, jnp.zeros_like(rw))
        return (jax.nn.logsumexp(logits, axis=1) - picked) * rw, rw
    losses, weights = jax.lax.map(one, (xs, ts))
    return losses.reshape(-1)[:n], weights.reshape(-1)[:n]


def _chunked_name(targs, sargs):
    kind = "_no_reduction" if sargs[0] == "none" else ""
    return f"GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked{kind}_defaultBackward"


def _chunked_check(targs, sargs):
    _target_bounds(targs[2], targs[1]._shape[0], sargs[1],
                   lambda v, c=targs[1]._shape[0]: RuntimeError(
                       f"index {v} is out of bounds for dimension 1 with size {c}"))


@defop("_linear_cross_entropy_chunked", promote=_kernel_rule("linear_cross_entropy"), grad_fn=_chunked_name,
       tensors=5, method=False, function=False, check=_chunked_check, broadcast=False)
def _linear_cross_entropy_chunked(input, weight, target, bias=None, class_weight=None, reduction="mean",
                                  ignore_index=-100, chunk=1, acc="float32"):
    """The chunked path's kernel over (N, in) rows and int64 targets (N,)."""
    loss, w = _chunked_loss(input, weight, target, bias, class_weight, ignore_index, chunk, acc)
    if reduction == "none":
        return loss.astype(input.dtype)
    total = jnp.sum(loss)
    if reduction == "sum":
        return total.astype(input.dtype)
    return (total / jnp.sum(w)).astype(input.dtype)  # (every target ignored: NaN, and NaN gradients, as torch's)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """``F.linear_cross_entropy``: ``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; with
    ``options``, chunked over the batch (module docstring)."""
    from ..nn import functional as F
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{in_features} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        chunked = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                   and target.dtype is D.int64)
        if not chunked:
            warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                          "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). "
                          f"Got reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype="
                          f"{target.dtype}, out_features={out_features}, tracing=False, linear_bias.shape="
                          f"{tuple(linear_bias.shape) if linear_bias is not None else None}.",
                          stacklevel=user_stacklevel())
        else:
            rows = input if batch else input.unsqueeze(0)
            opts = options._adjust(rows.shape[0], in_features, num_classes, input.dtype, input.device)
        # (a weight in the accumulation dtype beside a half input is torch's mixed-precision case; other mixes go
        # to the reference, whose linear raises torch's dtype error)
        if chunked and linear_weight.dtype in (input.dtype, opts.acc_dtype) and (
                linear_bias is None or linear_bias.dtype is linear_weight.dtype):
            out = _linear_cross_entropy_chunked(rows, linear_weight, target if batch else target.unsqueeze(0),
                                                linear_bias, weight, reduction, ignore_index,
                                                opts.batch_chunk_size, str(opts.acc_dtype.jnp))
            return out if batch else out.squeeze(0)  # (a 0-d mean too: torch's SqueezeBackward1)
    # the reference (and the dtype errors of a mixed-dtype call: linear's)
    w2, b2 = linear_weight, linear_bias
    if out_features:
        w2 = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        b2 = None if linear_bias is None else linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = F.linear(input, w2, b2).reshape(logits_shape)
    return F.cross_entropy(logits, target, weight, ignore_index=ignore_index, reduction=reduction,
                           label_smoothing=label_smoothing)
