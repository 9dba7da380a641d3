"""``F.ctc_loss`` / ``torch.ctc_loss``: the connectionist temporal classification loss.

One ``@defop`` (``_ctc_loss``, PyTorch's ``CtcLossBackward0``) computes each sequence's negative log-likelihood with
the forward (alpha) recursion of Graves et al. in log space; the reductions are facade ops around it, as in ATen
(``mean`` divides by the target lengths, then ``MeanBackward0``; ``zero_infinity`` is a ``where``).

The gradient is PyTorch's, not the derivative of the loss as written: ATen's ``ctc_loss_backward`` returns
``exp(log_probs) - exp(log(sum alpha beta) + nll - log_probs)``, the gradient with respect to the *logits* of a
``log_softmax`` that produced ``log_probs`` (the ``exp(log_probs)`` term is the softmax's part). It is written here
as a ``jax.custom_vjp`` with the backward (beta) recursion, so it equals PyTorch's for any input, normalised or not,
including its NaN rows for an infeasible sequence (``zero_infinity=False``) and zeros past each input length.

Example::

    >>> import functorch_lite as torch
    >>> lp = torch.zeros(3, 1, 2).log_softmax(2)
    >>> torch.nn.functional.ctc_loss(lp, torch.tensor([[1]]), (3,), (1,), reduction="sum")
    tensor(0.2877)
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from ._dispatch import _type_name
from ._registry import defop
from .grad_overrides import aten_no_derivative
from .nn_ops import reduction_name
from .nn_sampling import _host

__all__: list = ["ctc_loss"]

_RED = {"none": 0, "mean": 1, "sum": 2}
_FROM = "(while checking arguments for ctc_loss_allocate_outputs)"


def _lse(*xs):
    """log(sum(exp)) of same-shaped arrays, ATen's way: the max taken out, 0 when it is -inf."""
    m = xs[0]
    for x in xs[1:]:
        m = jnp.maximum(m, x)
    m = jnp.where(m == -jnp.inf, jnp.zeros_like(m), m)
    s = jnp.exp(xs[0] - m)
    for x in xs[1:]:
        s = s + jnp.exp(x - m)
    return jnp.log(s) + m


def _shift(a, k):
    """``a[..., s - k]`` along the last axis (-inf where ``s < k``)."""
    if k >= a.shape[-1]:
        return jnp.full(a.shape, -jnp.inf, a.dtype)
    pad = jnp.full(a.shape[:-1] + (k,), -jnp.inf, a.dtype)
    return jnp.concatenate([pad, a[..., :-k]], axis=-1)


def _alpha(lp, ext, il, tl):
    """Forward recursion: the log alphas (T, N, L) and each sequence's negative log-likelihood (N,)."""
    t_max = lp.shape[0]
    length = ext.shape[1]
    e = jnp.take_along_axis(lp, ext[None], axis=2)  # (T, N, L): log_probs of each extended label
    s = jnp.arange(length)
    live = s[None, :] <= 2 * tl[:, None]
    skip = (s[None, :] >= 2) & (ext != jnp.concatenate([ext[:, :2], ext[:, :-2]], axis=1))
    ninf = jnp.full(ext.shape, -jnp.inf, lp.dtype)
    a0 = jnp.where((s[None, :] == 0) | ((s[None, :] == 1) & (tl[:, None] > 0)), e[0], ninf)

    def step(a, xs):
        t, et = xs
        new = _lse(a, _shift(a, 1), jnp.where(skip, _shift(a, 2), ninf)) + et
        new = jnp.where(live, new, ninf)
        return jnp.where((t < il)[:, None], new, a), new
    a_last, rest = jax.lax.scan(step, jnp.where(live, a0, ninf), (jnp.arange(1, t_max), e[1:]))
    alphas = jnp.concatenate([jnp.where(live, a0, ninf)[None], rest], axis=0)
    two = 2 * tl[:, None]
    l1 = jnp.take_along_axis(a_last, two, axis=1)[:, 0]
    l2 = jnp.where(tl > 0, jnp.take_along_axis(a_last, jnp.maximum(two - 1, 0), axis=1)[:, 0], -jnp.inf)
    nll = -_lse(l1, l2)
    # no input step: probability one for an empty target, zero otherwise
    nll = jnp.where(il > 0, nll, jnp.where(tl == 0, jnp.asarray(-0.0, lp.dtype), jnp.asarray(jnp.inf, lp.dtype)))
    return alphas, nll


_CTC_BACKWARD_NO_GRAD = aten_no_derivative("_ctc_loss_backward")


@partial(jax.custom_vjp, nondiff_argnums=(4,))
def _ctc_nll(lp, ext, il, tl, zero_infinity):
    return _alpha(lp, ext, il, tl)[1]


def _ctc_fwd(lp, ext, il, tl, zero_infinity):
    alphas, nll = _alpha(lp, ext, il, tl)
    return nll, (lp, ext, il, tl, alphas, nll)


def _ctc_bwd(zero_infinity, res, g):
    """ATen's ``ctc_loss_backward_cpu_template``: the beta recursion, ``log(sum alpha beta)`` per label, then
    ``(exp(lp) - exp(lcab + nll - lp)) * grad`` for ``t < input_length`` (zero after)."""
    lp, ext, il, tl, alphas, nll = res
    t_max, n, c = lp.shape
    length = ext.shape[1]
    e = jnp.take_along_axis(lp, ext[None], axis=2)
    s = jnp.arange(length)
    live = s[None, :] <= 2 * tl[:, None]
    skip2 = (s[None, :] + 2 < length) & (ext != jnp.concatenate([ext[:, 2:], ext[:, -2:]], axis=1))
    ninf = jnp.full(ext.shape, -jnp.inf, lp.dtype)
    end = (s[None, :] == 2 * tl[:, None]) | ((s[None, :] == 2 * tl[:, None] - 1) & (tl[:, None] > 0))

    def unshift(b, k):
        if k >= b.shape[-1]:
            return jnp.full(b.shape, -jnp.inf, b.dtype)
        pad = jnp.full(b.shape[:-1] + (k,), -jnp.inf, b.dtype)
        return jnp.concatenate([b[..., k:], pad], axis=-1)

    def step(b, xs):
        t, et = xs
        rec = _lse(b, unshift(b, 1), jnp.where(skip2, unshift(b, 2), ninf)) + et
        init = jnp.where(end, et, ninf)
        b = jnp.where((t == il - 1)[:, None], init, jnp.where((t < il - 1)[:, None], rec, ninf))
        b = jnp.where(live, b, ninf)
        return b, b
    _, betas = jax.lax.scan(step, ninf, (jnp.arange(t_max), e), reverse=True)
    lcab = alphas + betas  # (T, N, L)
    # ATen seeds the last step's sums by assignment: a last target equal to ``blank`` overwrites the blank's term
    last_tgt = jnp.take_along_axis(ext, jnp.maximum(2 * tl - 1, 0)[:, None], axis=1)[:, 0]
    blank = ext[:, :1]
    drop = (s[None, :] == 2 * tl[:, None]) & (tl[:, None] > 0) & (last_tgt[:, None] == blank)
    at_end = jnp.arange(t_max)[:, None, None] == (il - 1)[None, :, None]
    lcab = jnp.where(at_end & drop[None], -jnp.inf, lcab)
    ni = jnp.broadcast_to(jnp.arange(n)[:, None], ext.shape)
    top = jnp.full((t_max, n, c), -jnp.inf, lp.dtype).at[:, ni, ext].max(lcab)
    top = jnp.where(top == -jnp.inf, jnp.zeros_like(top), top)
    acc = jnp.zeros((t_max, n, c), lp.dtype).at[:, ni, ext].add(jnp.exp(lcab - top[:, ni, ext]))
    logsum = jnp.log(acc) + top
    grad = (jnp.exp(lp) - jnp.exp(logsum + nll[None, :, None] - lp)) * g[None, :, None]
    valid = jnp.arange(t_max)[:, None] < il[None, :]
    if zero_infinity:
        valid = valid & (nll != jnp.inf)[None, :]
    grad = jnp.where(valid[:, :, None], grad, jnp.zeros_like(grad))
    # PyTorch's backward (aten::_ctc_loss_backward) has no derivative itself: differentiating it raises
    return _CTC_BACKWARD_NO_GRAD(grad), None, None, None


_ctc_nll.defvjp(_ctc_fwd, _ctc_bwd)


def _ctc_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt not in (D.float32, D.float64):
        raise no_kernel("ctc_loss_cpu", dt)
    return (None,) * 4, (dt,)


@defop("_ctc_loss", promote=_ctc_rule, grad_fn="CtcLossBackward0", tensors=4, method=False, function=False,
       kernel="ctc_loss_cpu", autocast="fp32", saves=(0,))
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, max_target, zero_infinity):
    """Negative log-likelihood (N,) of each padded (N, S) or concatenated target under ``log_probs`` (T, N, C)."""
    n = log_probs.shape[1]
    tl = target_lengths.astype(jnp.int64)
    il = input_lengths.astype(jnp.int64)
    tg = targets.astype(jnp.int64)
    if tg.ndim == 1:  # concatenated: row n starts after the lengths before it
        starts = jnp.cumsum(tl) - tl
        at = starts[:, None] + jnp.arange(max_target)[None, :]
        tg = tg[jnp.clip(at, 0, max(tg.shape[0] - 1, 0))] if tg.shape[0] else jnp.zeros((n, max_target), jnp.int64)
    else:
        tg = tg[:, :max_target]
    inside = jnp.arange(max_target)[None, :] < tl[:, None]
    tg = jnp.where(inside, tg, blank)
    ext = jnp.full((n, 2 * max_target + 1), blank, jnp.int64)
    ext = ext.at[:, 1::2].set(tg)
    return _ctc_nll(log_probs, ext, il, tl, bool(zero_infinity))


def _lengths(v, name: str, device):
    """Lengths given as a tuple/list of ints or an integral tensor -> an int64 tensor (N,)."""
    from .. import tensor
    if isinstance(v, Tensor):
        if v.dtype.category != D.INT or v.dtype is D.bool:
            raise RuntimeError(f"{name} must be integral")
        return v.reshape(-1).to(D.int64)
    return tensor([int(e) for e in v], dtype=D.int64, device=device)


def _int_like(e) -> bool:
    """An element PyTorch's ``tuple of ints`` parser takes: an int (not a bool), a numpy integer, an integral
    tensor."""
    if isinstance(e, Tensor):
        return e.dtype.category == D.INT and e.dtype is not D.bool
    return not isinstance(e, bool) and hasattr(e, "__index__")


def _desc(v) -> str:
    """An argument as PyTorch's invalid-arguments message describes it (``list of [float, int]``)."""
    tp = _type_name
    if isinstance(v, list):
        return f"list of [{', '.join(tp(e) for e in v)}]"
    if isinstance(v, tuple):
        return f"tuple of ({', '.join(tp(e) for e in v)}{',' if len(v) == 1 else ''})"
    return tp(v)


def _signature_error(args) -> TypeError:
    """PyTorch's invalid-combination error. Its per-overload line marks ``!`` every argument but a tensor given
    where the overload takes a tensor (its formatter matches no int, bool or int-list argument)."""
    got = ", ".join(_type_name(a) for a in args)
    lines = []
    for sig, tensor_at in ((_SIG_SEQ, (0, 1)), (_SIG_TENSOR, (0, 1, 2, 3))):
        marked = ", ".join(_desc(a) if i in tensor_at and isinstance(a, Tensor) else f"!{_desc(a)}!"
                           for i, a in enumerate(args))
        lines.append(f" * {sig}\n      didn't match because some of the arguments have invalid types: ({marked})\n")
    return TypeError(f"ctc_loss() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + "".join(lines))


_SIG_SEQ = ("(Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints target_lengths, int blank "
            "= 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)")
_SIG_TENSOR = ("(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank = 0, int "
               "reduction = at::Reduction::Mean, bool zero_infinity = False)")


def _check_lengths_args(args):
    """PyTorch's overload choice for the lengths: two tensors, or two sequences whose first element is an int (its
    plausibility test; a later non-int element then fails the unpacking); anything else matches no overload."""
    il, tl = args[2], args[3]
    if isinstance(il, Tensor) and isinstance(tl, Tensor):
        return
    if not all(isinstance(v, (list, tuple)) and (not v or _int_like(v[0])) for v in (il, tl)):
        raise _signature_error(args)
    for name, v in (("input_lengths", il), ("target_lengths", tl)):
        for k, e in enumerate(v):
            if not _int_like(e):
                raise TypeError(f"ctc_loss(): argument '{name}' failed to unpack the object at pos {k + 1} with "
                                f"error \"type must be tuple of ints,but got {type(e).__name__}\"")


def _check(lp: Tensor, targets: Tensor, il, tl, blank: int):
    """ATen's ``ctc_loss_allocate_outputs`` checks (the length values read on the host, as PyTorch does)."""
    dt = lp.dtype
    if dt not in (D.float32, D.float64):
        raise no_kernel("ctc_loss_cpu", dt)
    if lp.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.dim()}-dimensional tensor for argument #1 "
                           f"'log_probs' {_FROM}")
    if targets.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for argument #2 "
                           f"'targets' {_FROM}")
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if il.numel() != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.numel() != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    hil, htl = _host(il), _host(tl)
    if htl is None or hil is None:  # traced lengths (compile): the longest possible target
        return targets.shape[0] if targets.dim() == 1 else targets.shape[1]
    for v in htl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v} {_FROM}")
    max_t = int(htl.max()) if htl.size else 0
    if targets.dim() == 1:
        if targets.shape[0] != int(htl.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(htl.sum())} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets' {_FROM}")
    else:
        if targets.shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size {targets.shape[0]} for "
                               f"argument #2 'targets' {_FROM}")
        if targets.shape[1] < max_t:
            raise RuntimeError(f"Expected tensor to have size at least {max_t} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' {_FROM}")
    for v in hil:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {v} {_FROM}")
        if v > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {v} {_FROM}")
    ht = _host(targets)
    if ht is not None and ht.size:
        ht = ht.astype(np.int64)
        used = np.concatenate([ht[i, :k] for i, k in enumerate(htl)]) if ht.ndim == 2 else ht
        if used.size and ((used < 0) | (used >= c)).any():  # PyTorch reads out of bounds here
            bad = used[(used < 0) | (used >= c)][0]
            raise RuntimeError(f"ctc_loss: target value {bad} is out of range for {c} classes (PyTorch reads "
                               "memory out of bounds here)")
    return max_t


def _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction: int, zero_infinity):
    """ATen's ``ctc_loss`` (both overloads): the per-sequence loss, then ``zero_infinity`` and the reduction."""
    from .. import where, zeros
    from ._dispatch import autocast_args
    from ._registry import OPS
    args = (log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    _check_lengths_args(args)
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)  # (ATen's: the targets as given, a 1-D one concatenated)
    tg = targets
    il = _lengths(input_lengths, "input_lengths", log_probs.device)
    tl = _lengths(target_lengths, "target_lengths", log_probs.device)
    lp, tg, il, tl = autocast_args(OPS["_ctc_loss"], (lp, tg, il, tl))  # float32 under autocast, before the checks
    max_t = _check(lp, tg, il, tl, int(blank))
    res = _ctc_loss(lp, tg, il, tl, int(blank), int(max_t), bool(zero_infinity))
    if zero_infinity:
        res = where(res == float("inf"), zeros((), dtype=res.dtype, device=res.device), res)
    if reduction == 1:
        return (res / tl.to(res.dtype).clamp_min(1)).mean()
    if reduction == 2:
        return res.sum()
    return res if batched else res.squeeze(0)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """``F.ctc_loss``: ``log_probs`` (T, N, C) or (T, C), targets padded (N, S) or concatenated, lengths as
    tensors or tuples; reductions ``none`` / ``mean`` (each loss divided by its target length, then averaged)
    / ``sum``."""
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, _RED[reduction_name(reduction)],
                zero_infinity)


def ctc_loss_aten(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
                  reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    """``torch.ctc_loss``: the reduction as ATen's enum (0 none, 1 mean, 2 sum)."""
    if reduction not in (0, 1, 2):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, int(reduction), zero_infinity)
