"""Loss ops beyond MSE/NLL/CrossEntropy (``torch.nn.functional`` twins).

Each loss is ONE ``@defop`` (one dispatch, one autograd Node) whose jax body includes the reduction,
so the Node carries the grad_fn name PyTorch 2.13 prints for that call (``l1_loss`` with
``reduction='mean'`` is ``MeanBackward0`` in PyTorch, ``kl_div`` with ``'batchmean'`` is
``DivBackward0``...). The public ``F.<loss>`` functions are thin typed wrappers: legacy
``size_average``/``reduce`` mapping, PyTorch's Python-level warnings and errors, then one call.

Dtype rules follow PyTorch's kernels, including their quirks: ``huber_loss`` returns the input's
dtype, ``binary_cross_entropy_with_logits`` the target's, ``binary_cross_entropy`` wants equal dtypes.
"""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._symbolic import sym_float
from .._promotion import can_cast, no_kernel, promote_types, result_type_sig
from .._tensor.tensor import Tensor
from . import grad_overrides as _go
from ._registry import defop
from .nn_ops import _no_grad_arg, _reduce, reduction_name
from .reduction import _abs
from .._warn import user_stacklevel as _user_stacklevel

__all__: list = ["l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                 "binary_cross_entropy_with_logits", "kl_div"]

_BOOL_SUB2 = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.")
_BOOL_SUB1 = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert "
              "a mask, use the `~` or `logical_not()` operator instead.")


# ---- shared helpers --------------------------------------------------------------------------------
def _prep_at(pos: int):
    """prep hook: static argument ``pos`` is the reduction (an int enum, as ``torch.kl_div`` takes, is mapped)."""
    def prep(targs, sargs):
        return sargs[:pos] + (reduction_name(sargs[pos], enum=True),) + sargs[pos + 1:]
    return prep


def _dt(sig, i):
    s = sig[i]
    return s[1] if type(s) is tuple else None


def _legacy(size_average, reduce, reduction: str) -> str:
    """``reduction``, or where ``size_average`` / ``reduce`` is given, ``legacy_get_string`` of them."""
    if size_average is None and reduce is None:
        return reduction
    return legacy_get_string(size_average, reduce)


def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
    """PyTorch's ``_Reduction.legacy_get_string`` (with its deprecation warning)."""
    sa = True if size_average is None else size_average
    rd = True if reduce is None else reduce
    ret = "mean" if (sa and rd) else ("sum" if rd else "none")
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      UserWarning, stacklevel=_user_stacklevel())
    return ret


def _size_warning(input: Tensor, target: Tensor) -> None:
    if target._shape != input._shape:
        warnings.warn(f"Using a target size ({target.size()!r}) that is different to the input size "
                      f"({input.size()!r}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=_user_stacklevel())


def _broadcast_check(input: Tensor, target: Tensor) -> None:
    """``torch.broadcast_tensors(input, target)``, which torch's Python losses call after the size warning and
    before their weight / reduction / dtype checks: its error for shapes that do not broadcast."""
    if target._shape != input._shape:
        from ._dispatch import broadcast_shapes
        broadcast_shapes(input._shape, target._shape)


def _bool_sub(a, b):
    if a is D.bool and b is D.bool:
        raise RuntimeError(_BOOL_SUB2)
    if a is D.bool or b is D.bool:
        raise RuntimeError(_BOOL_SUB1)


# ---- l1_loss ----------------------------------------------------------------------------------------
def _l1_rule(op, sig, sargs):
    """``abs(input - target)`` (after broadcast_tensors: both dimensioned) then the reduction."""
    a, b, w = _dt(sig, 0), _dt(sig, 1), _dt(sig, 2)
    _bool_sub(a, b)
    d = promote_types(a, b)
    red = sargs[-1]
    r = d.to_real()  # (|input - target| is real for complex operands)
    out = r if w is None else promote_types(r, w)
    if w is None and red == "mean" and d.category < D.FLOAT:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {d.short}")
    if w is not None and red == "mean" and out.category < D.FLOAT:
        out = D.get_default_dtype()
    return (d, d, None if w is None else out), (out,)


def _l1_name(targs, sargs):
    red = sargs[-1]
    if targs[2] is not None:
        return {"none": "MulBackward0", "sum": "SumBackward0", "mean": "DivBackward0"}[red]
    return {"none": "AbsBackward0", "sum": "SumBackward0", "mean": "MeanBackward0"}[red]


@defop("l1_loss", promote=_l1_rule, grad_fn=_l1_name, tensors=3, method=False, function=False,
       prep=_prep_at(0), broadcast=True, autocast="fp32", kernel="add_stub", saves=("internal",))
def _l1_loss(input, target, weight=None, reduction="mean"):
    """Mean absolute error, optionally weighted elementwise (``F.l1_loss``)."""
    err = _abs(input - target)  # PyTorch's d|x|/dx = 0 at 0 (real for complex operands)
    if weight is None:
        return _reduce(err, reduction)
    err = err.astype(weight.dtype) * weight
    if reduction == "mean":
        return jnp.sum(err) / jnp.sum(weight)
    return _reduce(err, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """``F.l1_loss``: ``mean(|input - target|)`` (``reduction`` 'none' | 'mean' | 'sum')."""
    _size_warning(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    _broadcast_check(input, target)
    if weight is not None and weight._shape != input._shape:
        raise ValueError("Weights and input must have the same size.")
    if weight is not None and reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return _l1_loss(input, target, weight, reduction)


# ---- smooth_l1_loss / huber_loss ------------------------------------------------------------------------
def _float_kernel_rule(kernel):
    def rule(op, sig, sargs):
        d = promote_types(_dt(sig, 0), _dt(sig, 1))
        if d.category < D.FLOAT or d.category > D.FLOAT:
            raise no_kernel(kernel, d)
        return (d, d), (d,)
    return rule


@defop("smooth_l1_loss", promote=_float_kernel_rule("smooth_l1_cpu"), grad_fn="SmoothL1LossBackward0", tensors=2,
       method=False, function=False, prep=_prep_at(0), broadcast=True, autocast="fp32", kernel="smooth_l1_cpu")
def _smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """Quadratic below ``beta``, linear above (``F.smooth_l1_loss``)."""
    z = jnp.abs(input - target)
    b = jnp.asarray(beta, z.dtype)
    loss = jnp.where(z < b, jnp.asarray(0.5, z.dtype) * z * z / b, z - jnp.asarray(0.5 * beta, z.dtype))
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``F.smooth_l1_loss``; ``beta=0`` is exactly ``l1_loss``."""
    _size_warning(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    _broadcast_check(input, target)
    if beta == 0.0:
        return _l1_loss(input, target, None, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _smooth_l1_loss(input, target, reduction, sym_float(beta))


def _huber_rule(op, sig, sargs):
    """Computed in the promoted dtype, written into a tensor of the input's dtype (PyTorch's kernel)."""
    a, b, w = _dt(sig, 0), _dt(sig, 1), _dt(sig, 2)
    common = promote_types(a, b)
    if common.category != D.FLOAT:
        raise no_kernel("huber_cpu", common)
    if not can_cast(common, a):
        raise RuntimeError(f"result type {common.short} can't be cast to the desired output type {a.short}")
    out = a if w is None else promote_types(a, w)
    return (common, common, None if w is None else out), (out,)


def _huber_name(targs, sargs):
    if targs[2] is None:
        return "HuberLossBackward0"
    return {"none": "MulBackward0", "sum": "SumBackward0", "mean": "MeanBackward0"}[sargs[0]]


@defop("huber_loss", promote=_huber_rule, grad_fn=_huber_name, tensors=3, method=False, function=False,
       prep=_prep_at(0), broadcast=True, autocast="fp32", kernel="huber_cpu")
def _huber_loss(input, target, weight=None, reduction="mean", delta=1.0):
    """Quadratic below ``delta``, ``delta``-scaled linear above (``F.huber_loss``)."""
    z = jnp.abs(input - target)
    d = jnp.asarray(delta, z.dtype)
    loss = jnp.where(z < d, jnp.asarray(0.5, z.dtype) * z * z, d * (z - jnp.asarray(0.5 * delta, z.dtype)))
    if weight is None:
        return _reduce(loss, reduction)
    return _reduce(loss.astype(weight.dtype) * weight, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``F.huber_loss``: equals ``delta * smooth_l1_loss(beta=delta)``."""
    _size_warning(input, target)
    _broadcast_check(input, target)
    if weight is not None and weight._shape != input._shape:
        raise ValueError("Weights and input must have the same size.")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _huber_loss(input, target, weight, reduction, sym_float(delta))


# ---- binary_cross_entropy ---------------------------------------------------------------------------------
def _bce_rule(op, sig, sargs):
    a, b, w = _dt(sig, 0), _dt(sig, 1), _dt(sig, 2)
    if a is not b:
        raise RuntimeError(f"Found dtype {b.short} but expected {a.short}")
    if a.category != D.FLOAT:
        raise no_kernel("binary_cross_entropy", a)
    return (None, None, None if w is None else a), (a,)


@jax.custom_vjp
def _bce_elem(x, t):
    """``-(t log x + (1-t) log(1-x))`` with each log clamped to >= -100 (PyTorch's kernel)."""
    lo = jnp.asarray(-100, x.dtype)
    one = jnp.asarray(1, x.dtype)
    return (t - one) * jnp.maximum(jnp.log1p(-x), lo) - t * jnp.maximum(jnp.log(x), lo)


def _bce_fwd(x, t):
    return _bce_elem(x, t), (x, t)


def _bce_bwd(res, g):
    # PyTorch's derivatives: d/dx = (x - t) / max(x (1 - x), 1e-12); d/dt = log1p(-x) - log(x)
    x, t = res
    one = jnp.asarray(1, x.dtype)
    gx = g * (x - t) / jnp.maximum((one - x) * x, jnp.asarray(1e-12, x.dtype))
    gt = g * (jnp.log1p(-x) - jnp.log(x))
    return gx, gt


_bce_elem.defvjp(_bce_fwd, _bce_bwd)

_UNIT = jax.jit(lambda x, t: jnp.stack([jnp.all((x >= 0) & (x <= 1)), jnp.all((t >= 0) & (t <= 1))]))


def _bce_check(targs, sargs):
    """The kernel's checks: the values, then a weight of more dims than the input (its ``loss.mul_(weight)``)."""
    _bce_values(targs[0], targs[1])
    if targs[2] is not None:
        _into(targs[0]._shape, targs[2]._shape)


def _bce_values(x, t):
    """Host-value check, one device read per call (skipped while tracing): input and target in [0, 1]
    (NaN fails), input first, as PyTorch's kernel."""
    if 0 in x._shape:
        return
    if isinstance(x._array, jax.core.Tracer) or isinstance(t._array, jax.core.Tracer):  # (deferred: ops/_deferred)
        from . import _deferred
        for a, name in ((x._array, "input"), (t._array, "target")):
            _deferred.check(~((a >= 0) & (a <= 1)), a, lambda v, i, name=name: RuntimeError(
                f"all elements of {name} should be between 0 and 1"))
        return
    ok_x, ok_t = np.asarray(_UNIT(x._array, t._array)).tolist()
    if not ok_x:
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not ok_t:
        raise RuntimeError("all elements of target should be between 0 and 1")


def _into(out_shape, shape):
    """An in-place op's check that ``shape`` broadcasts into ``out_shape`` without growing it (the kernels'
    ``mul_`` of a weight of more dims than the input)."""
    from ._dispatch import broadcast_shapes
    b = broadcast_shapes(out_shape, shape)
    if b != tuple(out_shape):
        raise RuntimeError(f"output with shape {list(out_shape)} doesn't match the broadcast shape {list(b)}")


def _no_grad_prep(fn_name: str, args: tuple, pos: int):
    """prep hook: ``_prep_at(pos)``, then autograd's check that the tensor arguments at ``args`` (index, name)
    do not require grad (torch has no derivative for them): before the kernel's dtype / shape / value checks."""
    base = _prep_at(pos)

    def prep(targs, sargs):
        sargs = base(targs, sargs)
        for i, name in args:
            _no_grad_arg(fn_name, targs[i], name)
        return sargs
    return prep


@defop("binary_cross_entropy", promote=_bce_rule, grad_fn="BinaryCrossEntropyBackward0", tensors=3,
       method=False, function=False, prep=_no_grad_prep("binary_cross_entropy", ((2, "weight"),), 0),
       check=_bce_check, broadcast=False,
       autocast={"cpu": "fp32", "cuda": "banned"},
       kernel="binary_cross_entropy")
def _binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """Binary cross entropy on probabilities (``F.binary_cross_entropy``)."""
    loss = _bce_elem(input, target)
    if weight is not None:
        loss = loss * jnp.broadcast_to(weight, loss.shape)
    return _reduce(loss, reduction)


def _broadcast_err(target_shape, weight_shape) -> None:
    """``torch.broadcast_shapes(target, weight)``'s error when ``weight`` does not broadcast."""
    nd = max(len(target_shape), len(weight_shape))
    t = (1,) * (nd - len(target_shape)) + tuple(target_shape)
    w = (1,) * (nd - len(weight_shape)) + tuple(weight_shape)
    for j in range(nd - 1, -1, -1):
        if w[j] != 1 and t[j] != 1 and w[j] != t[j]:
            from .._tensor.tensor import Size
            raise RuntimeError(f"Attempting to broadcast a dimension of length {w[j]} at {j - nd}! Mismatching "
                               f"argument at index 1 had {Size(weight_shape)!r}; but expected shape should be "
                               f"broadcastable to {list(t)}")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """``F.binary_cross_entropy`` on probabilities in [0, 1] (logs clamped at -100 as PyTorch)."""
    reduction = reduction_name(_legacy(size_average, reduce, reduction))
    if target._shape != input._shape:
        raise ValueError(f"Using a target size ({target.size()!r}) that is different to the input size "
                         f"({input.size()!r}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        _broadcast_err(target._shape, weight._shape)
    return _binary_cross_entropy(input, target, weight, reduction)


# ---- binary_cross_entropy_with_logits ------------------------------------------------------------------------
def _bcel_rule(op, sig, sargs):
    """``(1 - target).mul_(input).sub_(...)``: the result has the target's dtype (PyTorch's kernel)."""
    a, b, w, pw = (_dt(sig, i) for i in range(4))
    if a.category != D.FLOAT:
        raise no_kernel("log_sigmoid_cpu", a)
    if b is D.bool:
        raise RuntimeError(_BOOL_SUB2)
    if b.category != D.FLOAT:
        raise RuntimeError(f"result type {promote_types(a, b).short} can't be cast to the desired output type "
                           f"{b.short}")
    c = promote_types(a, b)  # (the input stays: its log_sigmoid is in its own dtype, rounded, then promoted)
    return (None, c, None if w is None else c, None if pw is None else c), (b,)


def _bcel_check(targs, sargs):
    from ._dispatch import broadcast_shapes
    x, t, w, pw = targs
    if pw is not None:  # (the kernel: log_sigmoid(input).mul_((pos_weight - 1).mul(target).add_(1)), then .mul_(weight))
        _into(x._shape, broadcast_shapes(pw._shape, t._shape))
    if w is not None:
        _into(x._shape, w._shape)


@defop("binary_cross_entropy_with_logits", promote=_bcel_rule, grad_fn="BinaryCrossEntropyWithLogitsBackward0",
       tensors=4, method=False, prep=_no_grad_prep("binary_cross_entropy_with_logits", ((2, "weight"),
                                                                                      (3, "pos_weight")), 0),
       check=_bcel_check, broadcast=False, autocast="fp32",
       kernel="log_sigmoid_cpu", out=False)
def _binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="none"):
    """``(1 - t) x - log_sigmoid(x) (1 + (pos_weight - 1) t)``, times ``weight`` (numerically stable)."""
    dt = target.dtype  # (the promoted dtype: the rule cast all but the input)
    acc = jnp.float32 if input.dtype in (jnp.float16, jnp.bfloat16) else input.dtype  # (torch's CPU opmath)
    ls = jax.nn.log_sigmoid(input.astype(acc)).astype(input.dtype)
    one = jnp.asarray(1, dt)
    if pos_weight is not None:  # (``log_sigmoid_input.mul_(...)``: rounded to the input's dtype again)
        ls = (ls.astype(dt) * ((pos_weight - one) * target + one)).astype(input.dtype)
    ls, input = ls.astype(dt), input.astype(dt)
    loss = (one - target) * input - ls
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """``F.binary_cross_entropy_with_logits``: sigmoid + BCE in one numerically stable op."""
    reduction = reduction_name(_legacy(size_average, reduce, reduction))
    if target._shape != input._shape:
        raise ValueError(f"Target size ({target.size()!r}) must be the same as input size ({input.size()!r})")
    return _binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


# ---- kl_div -----------------------------------------------------------------------------------------------------
def _kl_rule(op, sig, sargs):
    a, b = _dt(sig, 0), _dt(sig, 1)
    if a.category > D.FLOAT or b.category > D.FLOAT:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if a.category < D.FLOAT or b.category < D.FLOAT:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    r = result_type_sig(tuple((0 if s[0] else 1, s[1]) for s in sig))
    return (r, r), (r,)


def _kl_name(targs, sargs):
    red, log_target = sargs
    if red == "batchmean":
        return "DivBackward0" if targs[0]._shape else "SumBackward0"
    if red == "none":
        return "MulBackward0" if log_target else "SubBackward0"
    return {"mean": "MeanBackward0", "sum": "SumBackward0"}[red]


def _kl_check(targs, sargs):
    from ._dispatch import broadcast_shapes
    if targs[0]._shape != targs[1]._shape:
        broadcast_shapes(targs[1]._shape, targs[0]._shape)


def _kl_prep(targs, sargs):
    red, log_target = sargs
    return (reduction_name(red, enum=True, extra=("batchmean",)), bool(log_target))


@defop("kl_div", out=False, promote=_kl_rule, grad_fn=_kl_name, tensors=2, method=False, prep=_kl_prep, check=_kl_check,
       broadcast=False, autocast="fp32", kernel="xlogy_cpu")
def _kl_div(input, target, reduction="none", log_target=False):
    """Pointwise KL divergence with ``input`` as log-probabilities (``F.kl_div``)."""
    if log_target:
        out = jnp.exp(target) * (target - input)
    else:
        out = _go.xlogy(target, target) - target * input
    if reduction == "batchmean":
        s = jnp.sum(out)
        return s / jnp.asarray(input.shape[0], s.dtype) if input.ndim else s
    return _reduce(out, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """``F.kl_div``: ``reduction='batchmean'`` is the mathematical KL divergence per sample."""
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=_user_stacklevel())
    return _kl_div(input, target, reduction, log_target)
