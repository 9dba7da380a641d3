"""Composite nn ops (``torch.nn.functional``): each is one ``@defop`` with a jax body, so one dispatch and
one autograd Node, carrying PyTorch's grad_fn name (spec §6.6)."""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._symbolic import sym_float
from . import _deferred, _rounding
from ._registry import OPS, _not_bool, defop, saves_crossed
from .fft_ops import int_arg
from ._dispatch import scalar_arg
from .._tensor.tensor import Tensor
from .reduction import _acc
from .linalg import _add_product, expands_to, folds_into_mm
from .._promotion import _cname, no_kernel
from .._tensor import views as _V
from .._warn import user_stacklevel as _user_stacklevel

_REDUCTIONS = ("none", "mean", "sum")
_ENUM = {0: "none", 1: "mean", 2: "sum"}  # (ATen's Reduction enum)


def reduction_name(reduction, enum: bool = False, extra: tuple = ()) -> str:
    """PyTorch's ``_Reduction.get_enum``, as the reduction's name: 'none', 'mean', 'sum' (and ``extra``: kl_div's
    'batchmean'); 'elementwise_mean' is 'mean', with its deprecation warning; ``enum``: ATen's int enum (0, 1, 2,
    as the ``torch.*`` spellings take) too; anything else raises. The one validator of every loss's reduction."""
    if enum and isinstance(reduction, int) and not isinstance(reduction, bool) and reduction in _ENUM:
        return _ENUM[reduction]
    if reduction in _REDUCTIONS or reduction in extra:
        return reduction
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      UserWarning, stacklevel=_user_stacklevel())
        return "mean"
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _on_device_of(arr, like):
    """``arr`` on ``like``'s device (under compile's trace both are traced: placement is the program's)."""
    if isinstance(like, jax.core.Tracer) or isinstance(arr, jax.core.Tracer):
        return arr
    return jax.device_put(arr, list(like.devices())[0])


def _kernel_rule(kernel: str, allow_int: bool = False, allow_complex: bool = True):
    """Dtype rule: output has the first tensor's dtype, nothing cast (targets/keys keep theirs); dtypes with
    no PyTorch kernel raise its NotImplementedError (``"mse_cpu" not implemented for 'Long'``)."""
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt is D.bool or (dt.category < D.FLOAT and not allow_int) or (dt.is_complex and not allow_complex):
            raise no_kernel(kernel, dt)
        return (None,) * len(sig), (dt,)
    return rule


def _no_grad_arg(fn_name: str, t, arg: str = "target") -> None:
    """ATen's autograd check on an argument it has no derivative for (a loss's target, its class weights): with
    grad mode on, one that requires grad raises (``fn_name``: the ATen function torch names)."""
    from ..autograd.grad_mode import is_grad_enabled
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{fn_name}' is not differentiable with respect to argument '{arg}'. This "
                           "input cannot have requires_grad True.")


def _weight_dtype(sig, i: int = 2) -> None:
    """ATen kernels read class weights as the input's scalar type: another dtype raises."""
    x, w = sig[0][1], sig[i][1] if len(sig) > i and sig[i] is not None else None
    if w is not None and w is not x:
        raise RuntimeError(f"expected scalar type {x.short} but found {w.short}")


def _mse_rule(op, sig, sargs):
    """Inputs promote together (``float32`` vs ``float64`` computes in float64); no integer kernel."""
    from .._promotion import rule_elementwise
    casts, outs = rule_elementwise(op, sig, sargs)
    if outs[0].category != D.FLOAT:  # (bool, integral and complex: no kernel)
        raise no_kernel("mse_cpu", outs[0])
    return casts, outs


def _dropout_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category < D.FLOAT:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {dt.short}")
    if dt.is_complex:  # (the mask's bernoulli_ on the input's dtype)
        raise no_kernel("bernoulli_scalar_cpu_", dt)
    return (None,) * len(sig), (dt,)


def _linear_name(targs, sargs):
    x, _, b = targs
    nd = len(x._shape)
    if nd == 2:
        return "MmBackward0" if b is None else "AddmmBackward0"
    if b is not None and not x.is_contiguous():  # (torch's matmul of the weight's transpose, then the bias added)
        return "AddBackward0"
    if nd == 1:
        return "SqueezeBackward4" if b is None else "ViewBackward0"
    return "UnsafeViewBackward0" if b is None else "ViewBackward0"


def _linear_shown(targs):
    """The graph torch records for ``F.linear`` (spec AG-59; ``autograd.graph.shown``): ``addmm(bias, input,
    weight.t())`` (``mm`` without a bias) over ``input.view(-1, k)`` (``unsqueeze(0)`` of a 1-D one) under a final
    view; a non-contiguous input: matmul's folding (``linalg._reshaped``), the bias then added. None for a 1-D
    weight (torch's matvec)."""
    x, w, b = targs
    nd = len(x._shape)
    if len(w._shape) != 2 or not nd:
        return None
    t = ("TBackward0", (1,), "T")
    if nd == 2:
        return (2, 0, t) if b is not None else (0, t)
    shape = (math.prod(x._shape[:-1]), w._shape[0])
    if x.is_contiguous():
        v = ("ViewBackward0" if nd > 2 or b is not None else "UnsqueezeBackward0", (0,), "view")
        return (("AddmmBackward0", (2, v, t), "inner", shape) if b is not None else
                ("MmBackward0", (v, t), "inner", shape),)
    from .linalg import _reshaped
    v = ("UnsqueezeBackward0", (0,), "view") if nd == 1 else _reshaped(x, 0, ())
    if b is None:
        return (("MmBackward0", (v, t), "inner", shape),)
    out = tuple(x._shape[:-1]) + (w._shape[0],)
    top = "SqueezeBackward4" if nd == 1 else "UnsafeViewBackward0"
    return ((top, (("MmBackward0", (v, t), "view"),), "inner", out), 2)


def _linear_check(targs, sargs):
    x, w, b = targs
    if not x._shape or not w._shape:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {len(x._shape)}D and "
                           f"{len(w._shape)}D")
    k = x._shape[-1] if x._shape else 1
    if w._shape[-1] != k:
        rows = 1
        for s in x._shape[:-1]:
            rows *= s
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                           f"{w._shape[-1]}x{w._shape[0]})")
    if x.dtype is not w.dtype or b is not None and b.dtype is not w.dtype:  # (the strides only read then)
        check_linear_dtypes(x.dtype, x._shape, x.stride(), w, b)
    if b is not None:  # (torch's addmm on the input flattened to 2-D: the rows in its message)
        out = w._shape[0] if len(w._shape) == 2 else 1
        expands_to(b, (math.prod(x._shape[:-1]), out))  # (a 1-D input: one row)


def _matmul_route(shape, strides, b) -> bool:
    """Whether torch's ``linear`` runs ``matmul(input, weight.t())`` and then adds the bias in place, rather than
    one ``addmm``: without a bias, or for an input of other than 2 dims that is not contiguous (a contiguous one
    is flattened into an addmm when 3-D or given a 1-D bias)."""
    nd = len(shape)
    if b is None:
        return True
    if nd == 2:
        return False
    return not (_V.is_contiguous(shape, strides) and (nd == 3 or len(b._shape) == 1))


def check_linear_dtypes(xd, shape, strides, w, b) -> None:
    """PyTorch's dtype errors of ``F.linear`` on an input of dtype ``xd`` with ``shape`` / ``strides`` (MHA checks
    the time-first view torch makes of its input). addmm: the bias's dtype, then the input's; the matmul route:
    its folded ``mm`` (``expected m1 and m2...``, c10 type names), or its ``bmm`` (``expected scalar type``) for a
    batched input whose leading dims do not fold without a copy into a weight that does not require grad
    (matmul's ``should_fold``); the bias is then added in place, so its dtype only has to cast."""
    wd = w.dtype
    if not _matmul_route(shape, strides, b):
        if b.dtype is not wd:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {b.dtype.short} and {wd.short}")
        if xd is not wd:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {xd.short} and {wd.short}")
        return
    if xd is wd:
        return
    nd = len(shape)
    if nd >= 3 and len(w._shape) == 2 and not folds_into_mm(shape, strides, w):
        raise RuntimeError(f"expected scalar type {xd.short} but found {wd.short}")
    raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(xd)} != {_cname(wd)}")


@defop(required=True, float8=True, promote=_kernel_rule("addmm_impl_cpu_", allow_int=True), grad_fn=_linear_name, tensors=3,
       method=False,
       check=_linear_check, kernel="addmm", device_check=("self", "mat1", "mat2"), autocast="lower",
       saves=saves_crossed(0, 1), shown=_linear_shown)
def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (PyTorch's ``F.linear``): bfloat16 / float16 add the bias to the float32
    accumulation and round once, as PyTorch's addmm kernel does (``[1, 2**-8] @ [1, 1] + 2**-8`` is
    ``1.0078125`` in bfloat16, not ``1.0``): ``linalg._add_product``, addmm's body."""
    return jnp.matmul(input, weight.T) if bias is None else _add_product(bias, input, weight.T, 1, 1)


def _reduce(x, reduction):
    """A loss's reduction as torch's ``apply_loss_reduction`` (``Tensor.mean`` / ``sum``): float16 / bfloat16
    accumulate in float32 and round once (in their own dtype a float16 sum overflows to inf)."""
    if reduction == "mean":
        return _rounding.mean(_acc(x)).astype(x.dtype)
    if reduction == "sum":
        return jnp.sum(_acc(x)).astype(x.dtype)
    return x


def _reduction_prep(targs, sargs):
    return sargs[:-1] + (reduction_name(sargs[-1]),)


@defop(kernel="mse_cpu", promote=_mse_rule, grad_fn="MseLossBackward0", tensors=2, method=False, prep=_reduction_prep,
       check_dtype=None, broadcast=True, autocast="fp32")
def mse_loss(input, target, reduction="mean"):
    """Mean squared error (``F.mse_loss``)."""
    d = input - target
    return _reduce(d * d, reduction)


def _nll_shape_check(x, t, w):
    """PyTorch's nll_loss_nd checks on shapes and the target dtype, in its order: batch size, then per path
    (1-D/2-D input: nll_loss; 4-D: nll_loss2d; 3-D and >= 5-D: a target-size check, then nll_loss2d on a view)
    the target's rank, its dtype, the sizes, the weight and (nll_loss2d) Long-only targets. Between nll_loss_nd's
    own checks and the kernel's, autograd's: a weight that requires grad raises (naming nll_loss_forward or
    nll_loss2d_forward)."""
    from .._tensor.views import shape_str
    xs, ts = tuple(x._shape), tuple(t._shape)
    nd = len(xs)
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and xs[0] != (ts[0] if ts else 0):  # (a 0-d target reads as batch size 0 there)
        raise ValueError(f"Expected input batch_size ({xs[0]}) to match target batch_size ({ts[0] if ts else 0}).")
    tdt = t.dtype
    bad_dtype = tdt is not D.int64 and tdt is not D.uint8
    if nd <= 2:
        _no_grad_arg("nll_loss_forward", w, "weight")
        if len(ts) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if bad_dtype:
            raise RuntimeError(f"expected target dtype to be Long or Byte, but got {tdt.short}")
        if nd == 1 and len(ts) == 1 and ts[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {ts[0]}")
        if nd == 2 and not ts:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        n_classes = xs[-1]
        if w is not None and (len(w._shape) != 1 or w._shape[0] != n_classes):
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes "
                               f"but got weight tensor of shape: {shape_str(w._shape)}")
        return
    if nd != 4 and ts[1:] != xs[2:]:
        raise RuntimeError(f"Expected target size {shape_str((xs[0],) + xs[2:])}, got {shape_str(ts)}")
    _no_grad_arg("nll_loss2d_forward", w, "weight")
    if nd == 4 and len(ts) != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{len(ts)}")
    if bad_dtype:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {tdt.short}")
    if w is not None and math.prod(w._shape) != xs[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if nd == 4 and (ts[0], ts[1], ts[2]) != (xs[0], xs[2], xs[3]):
        raise RuntimeError(f"size mismatch (got input: {shape_str(xs)} , target: {shape_str(ts)}")
    if tdt is D.uint8:
        raise RuntimeError("expected scalar type Long but found Byte")


def _nll_prep(targs, sargs):
    sargs = _reduction_prep(targs, sargs)
    ii = int_arg("nll_loss_nd", "ignore_index", sargs[0], 5)
    if isinstance(sargs[0], Tensor):  # (a 0-d tensor: its number, which the kernel compares the targets with)
        sargs = (ii,) + tuple(sargs[1:])
    _nll_shape_check(targs[0], targs[1], targs[2])
    return sargs


def _nll_check(targs, sargs):
    """nll_loss / cross_entropy with class indices (shapes checked in prep): targets out of [0, C) raise;
    ``sargs[0]`` is ignore_index for both."""
    x, t = targs[0], targs[1]
    _target_bounds(t, x._shape[1] if len(x._shape) > 1 else x._shape[0], sargs[0])


def _target_bounds(t, n_classes, ignore_index, error=None):
    """PyTorch's CPU kernel reads the targets: one out of [0, C) (and not ignore_index) is an IndexError
    (``error(value)``: another kernel's error). A host read (a sync on accelerators), skipped while tracing, like
    the other data-dependent checks."""
    import numpy as np
    error = error or (lambda v: IndexError(f"Target {v} is out of bounds."))
    arr = t._array
    if isinstance(arr, jax.core.Tracer):  # (inside a compiled function: the program checks it)
        _deferred.check((arr != ignore_index) & ((arr < 0) | (arr >= n_classes)), arr, lambda v, p: error(v))
        return
    host = np.asarray(arr).astype(np.int64).reshape(-1)
    bad = (host != ignore_index) & ((host < 0) | (host >= n_classes))
    if bad.any():
        raise error(host[np.argmax(bad)])


def _nll_name(x_ndim, reduction):
    """PyTorch's node for nll_loss: NllLossBackward0 up to 2-D input; NllLoss2DBackward0 beyond, except
    reduction='none' on 3-D or >= 5-D input, which PyTorch computes through a view."""
    if x_ndim <= 2:
        return "NllLossBackward0"
    if reduction == "none" and x_ndim != 4:
        return "ViewBackward0"
    return "NllLoss2DBackward0"


def _mean_of_counted(total, den, valid):
    """``total / den`` for a mean over the targets not ignored; where every target is ignored, torch's NaN with a
    zero gradient (its backward scales only the counted terms; JAX's ``0 / 0`` would send NaN everywhere)."""
    none = ~jnp.any(valid)
    return jnp.where(none, jnp.asarray(jnp.nan, total.dtype), total / jnp.where(none, jnp.ones((), den.dtype), den))


def _nll(logp, target, weight, ignore_index, reduction):
    """Negative log-likelihood over class dim 1 (or 0 for unbatched input)."""
    cdim = 1 if logp.ndim > 1 else 0
    if logp.ndim == 1 and target.ndim == 1:  # 1-D input: a 1-D target of size 1 is the one class index
        target = target.reshape(())
    target = target.astype(jnp.int64)
    valid = target != ignore_index
    safe = jnp.where(valid, target, 0)
    picked = jnp.take_along_axis(logp, jnp.expand_dims(safe, cdim), axis=cdim).squeeze(cdim)
    w = jnp.ones_like(picked) if weight is None else weight[safe].astype(logp.dtype)
    w = jnp.where(valid, w, jnp.zeros_like(w))
    # (a where, not ``* 0``: torch never reads an ignored row, so its NaN / inf stay out, and its loss is +0.0)
    loss = jnp.where(valid, -picked * w, jnp.zeros_like(picked))
    half = loss.dtype in (jnp.float16, jnp.bfloat16)
    if reduction != "none" and half and loss.size <= _HALF_CASCADE_MAX:
        total, den = _nll_half_sums(loss, w, valid, per_row=logp.ndim <= 2 and weight is None)
        return _mean_of_counted(total, den, valid) if reduction == "mean" else total
    if reduction == "mean":  # (a larger half loss: its sums in float32, rounded once)
        return _mean_of_counted(*(jnp.sum(_acc(a)).astype(a.dtype) for a in (loss, w)), valid)
    return _reduce(loss, reduction)


# ATen's half nll_loss sums in a cascade of partial sums in the dtype, whose folds depend on which targets are
# ignored: reproduced exactly by a serial scan over blocks of 16 targets (``_nll_half_sums``), up to this many
# targets; beyond, a scan of tens of thousands of steps would cost more than the loss (a bfloat16 segmentation
# map's), and the sums are float32 ones rounded once (within a few half ulps of torch's, more accurate)
_HALF_CASCADE_MAX = 1 << 16


def _nll_half_sums(loss, w, valid, per_row):
    """The loss and weight totals of ATen's float16 / bfloat16 ``nll_loss`` / ``nll_loss2d`` kernels: a cascade
    of 8 partial sums in the dtype itself, each add rounded. Targets in order (batch, then spatial); each counted
    one adds to level 0, and at a (counted) index that is a multiple of 16**(j + 1) level j is added into j + 1
    and cleared; the total adds the levels 0..7 in order. Without class weights up to 2-D input the weight total
    is the count itself (rounded to the dtype). A scan over aligned blocks of 16 (only a block's first index can
    fold), each adding its elements one by one."""
    dt = loss.dtype
    flat_l, flat_w, flat_v = loss.reshape(-1), w.reshape(-1), valid.reshape(-1)
    n = flat_l.shape[0]  # (at most _HALF_CASCADE_MAX: ATen's level_power, max(4, ceil(log2(n)) / 8), is 4)
    nb = -(-n // 16)
    pad = nb * 16 - n
    blocks = [jnp.pad(a, (0, pad)).reshape(nb, 16) for a in (flat_l, flat_w, flat_v)]
    zeros = jnp.zeros((8,), dt)

    def block(carry, xs):
        p, q = carry
        lb, wb, vb, k = xs
        i = k * 16  # (the block's first index: the only one that may fold)
        p0 = jnp.where(vb[0], p[0] + lb[0], p[0])  # (``loss`` is already ``-data * weight``)
        q0 = jnp.where(vb[0], q[0] + wb[0], q[0])
        p, q = p.at[0].set(p0), q.at[0].set(q0)
        fold = vb[0]
        for j in range(7):
            fold = fold & (i % (16 ** (j + 1)) == 0)
            p = jnp.where(fold, p.at[j + 1].set(p[j + 1] + p[j]).at[j].set(0), p)
            q = jnp.where(fold, q.at[j + 1].set(q[j + 1] + q[j]).at[j].set(0), q)
        p0, q0 = p[0], q[0]
        for r in range(1, 16):
            p0 = jnp.where(vb[r], p0 + lb[r], p0)
            q0 = jnp.where(vb[r], q0 + wb[r], q0)
        return (p.at[0].set(p0), q.at[0].set(q0)), None

    (p, q), _ = jax.lax.scan(block, (zeros, zeros), (*blocks, jnp.arange(nb, dtype=jnp.int64)))
    total, wsum = jnp.zeros((), dt), jnp.zeros((), dt)
    for j in range(8):
        total, wsum = total + p[j], wsum + q[j]
    return total, (jnp.sum(flat_v).astype(dt) if per_row else wsum)


def _nll_rule(op, sig, sargs):
    """The input's dtype (no integer or complex kernel); class weights of another dtype raise (the kernel's read)."""
    kernel = "nll_loss2d_forward_out_frame" if sig[0][0] >= 3 else "nll_loss_out_frame"  # (nll_loss_nd's choice)
    casts, outs = _kernel_rule(kernel, allow_complex=False)(op, sig, sargs)
    _weight_dtype(sig)
    return casts, outs


@defop(promote=_nll_rule, grad_fn=lambda targs, sargs: _nll_name(len(targs[0]._shape), sargs[-1]),
       tensors=3, method=False,
       prep=_nll_prep, check=_nll_check, kernel="nll_loss_forward_reduce_cuda_kernel_2d_index",
       autocast="fp32", float8=lambda sig: "nll_loss_out_frame")
def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """``F.nll_loss`` on log-probabilities with class-index (int64) targets."""
    return _nll(input, target, weight, ignore_index, reduction)


def _probability_target(x, t) -> bool:
    """Class probabilities when the target has the input's shape (PyTorch's rule; a non-float one raises)."""
    return t._shape == x._shape


def _ce_name(targs, sargs):
    if _probability_target(targs[0], targs[1]):
        return "DivBackward1" if sargs[-1] == "mean" else "NegBackward0"
    if sargs[-2] > 0:  # label smoothing: (1 - ls) * nll + ls * smooth
        return "AddBackward0"
    return _nll_name(len(targs[0]._shape), sargs[-1])


def _ce_check(targs, sargs):
    if _probability_target(targs[0], targs[1]):
        return
    _nll_check(targs, sargs)


def _ce_rule(op, sig, sargs):
    """Class indices (an integer target: prep rejects a floating one not of the input's shape): the input's dtype,
    class weights of another dtype raise (nll_loss's kernel); class probabilities: input, target and weight
    promote together (torch's ``-(log_softmax(input) * target * weight).sum(...)``)."""
    (_, xdt), (_, tdt) = sig[0], sig[1]
    if tdt.category >= D.FLOAT and xdt.category >= D.FLOAT:
        from .._promotion import promote_types
        w = sig[2][1] if len(sig) > 2 and sig[2] is not None else None
        dt = promote_types(xdt, tdt) if w is None else promote_types(promote_types(xdt, tdt), w)
        return (None, None, None), (dt,)  # (the body promotes, in torch's order)
    casts, outs = _kernel_rule(_ce_kernel(sig[0][0]), allow_complex=False)(op, sig, sargs)
    _weight_dtype(sig)
    return casts, outs


def _ce_kernel(ndim: int) -> str:
    """The kernel of cross_entropy's log_softmax over the class dim (dim 1, or 0 of a 1-D input)."""
    return "log_softmax_lastdim_kernel_impl" if ndim <= 2 else "log_softmax_kernel_impl"


def _ce_prep(targs, sargs):
    """PyTorch's cross_entropy_loss checks: a target of the input's shape holds class probabilities (floating,
    no ignore_index >= 0, a 1-D weight of C); else class indices through nll_loss_nd's checks."""
    sargs = _reduction_prep(targs, sargs)
    x, t, w = targs[0], targs[1], targs[2]
    ignore_index = int_arg("cross_entropy_loss", "ignore_index", sargs[0], 5)
    if isinstance(sargs[0], Tensor) or isinstance(sargs[1], Tensor):  # (a 0-d tensor: its number)
        ls = scalar_arg(sargs[1], "cross_entropy_loss", "label_smoothing", "float")
        sargs = (ignore_index if isinstance(sargs[0], Tensor) else sargs[0], ls) + tuple(sargs[2:])
    ls = sargs[1]
    if _probability_target(x, t):
        if t.dtype.category < D.FLOAT or t.dtype.is_complex:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{t.dtype.short}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if len(x._shape) == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        n_classes = x._shape[1 if len(x._shape) > 1 else 0]
        if w is not None and (len(w._shape) != 1 or w._shape[0] != n_classes):
            from .._tensor.views import shape_str
            raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes "
                               f"or no classes but got weight tensor of shape: {shape_str(w._shape)}")
    if ls > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls:g}")
    if x.dtype.category != D.FLOAT:  # log_softmax runs before nll_loss_nd's checks (bool, int, complex: no kernel)
        raise no_kernel(_ce_kernel(len(x._shape)), x.dtype)
    if not _probability_target(x, t):
        _nll_shape_check(x, t, w)
    return sargs


def _promoted_mul(a, b):
    """``a * b`` in torch's promoted dtype (``a`` floating; an integer ``b`` takes ``a``'s), cast explicitly (JAX's
    strict promotion mode refuses mixed floats)."""
    da, db = jnp.dtype(a.dtype), jnp.dtype(b.dtype)
    if jnp.issubdtype(db, jnp.floating) and da != db:
        from .._promotion import promote_types
        da = promote_types(D.from_numpy_dtype(da), D.from_numpy_dtype(db)).jnp
    return a.astype(da) * b.astype(da)


@defop(promote=_ce_rule, grad_fn=_ce_name, tensors=3, method=False,
       prep=_ce_prep, check=_ce_check, kernel="log_softmax_lastdim_kernel_impl", autocast="fp32")
def cross_entropy(input, target, weight=None, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """``F.cross_entropy``: class-index (int64) or class-probability (float) targets."""
    cdim = 1 if input.ndim > 1 else 0
    if input.ndim == 1 and target.ndim == 1 and target.shape != input.shape:  # 1-D input, a size-1 class target
        target = target.reshape(())
    # (F.log_softmax's own kernel, rounded to the input's dtype: torch's cross_entropy is nll_loss(log_softmax(x)),
    # whose half-precision last-dim kernel stores its sum and log in the type)
    logp = OPS["log_softmax"].impl(input, cdim, None).astype(input.dtype)
    nc = input.shape[cdim]
    wshape = [1] * input.ndim
    wshape[cdim] = nc
    if jnp.issubdtype(target.dtype, jnp.floating) and target.shape == input.shape:
        tgt = target  # (log_softmax in the input's dtype, the smoothing in the target's, then promoted products)
        if label_smoothing > 0:
            # (a half target as torch's CPU kernels: each op in float32, rounded; mul reads its scalar in float32,
            # add the scalar rounded to the tensor's dtype)
            tdt = tgt.dtype
            acc = jnp.float32 if tdt in (jnp.float16, jnp.bfloat16) else tdt
            tgt = (tgt.astype(acc) * jnp.asarray(1 - label_smoothing, acc)).astype(tdt)
            tgt = (tgt.astype(acc) + jnp.asarray(label_smoothing / nc, tdt).astype(acc)).astype(tdt)
        per = _promoted_mul(logp, tgt)
        if weight is not None:
            per = _promoted_mul(per, weight.reshape(wshape))
        loss = -jnp.sum(per, axis=cdim)
        if reduction == "mean":
            return jnp.sum(loss) / loss.size
        return _reduce(loss, reduction)
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0:
        return nll
    valid = target != ignore_index
    per = logp if weight is None else logp * weight.reshape(wshape)
    # (both wheres: an ignored row's NaN stays out of the sum, its loss is +0.0 and its gradient +0.0, as torch's)
    smooth = -jnp.sum(jnp.where(jnp.expand_dims(valid, cdim), per, jnp.zeros_like(per)), axis=cdim)
    smooth = jnp.where(valid, smooth, jnp.zeros_like(smooth))
    if reduction == "mean":
        if weight is None:
            den = jnp.sum(valid).astype(smooth.dtype)
        else:
            safe = jnp.where(valid, target, 0)
            den = jnp.sum(jnp.where(valid, weight[safe].astype(smooth.dtype), 0))
        smooth = _mean_of_counted(jnp.sum(smooth), den, valid)
    else:
        smooth = _reduce(smooth, reduction)
    return (1 - label_smoothing) * nll + (label_smoothing / nc) * smooth


_SELU_ALPHA = 1.7580993408473766  # ATen's alpha_dropout constant (SELU's scale * alpha)


@defop("_dropout", promote=_dropout_rule, tensors=2, method=False, function=False, kernel="bernoulli_scalar_cpu_",
       grad_fn=lambda targs, sargs: "AddBackward0" if sargs[2] else "MulBackward0", inplace=True)
def _dropout(input, key, p, feature=False, alpha=False):
    """ATen's ``_dropout_impl``: keep each element (``feature``: each (N, C) channel, the mask broadcast over
    the spatial dims) with probability ``1 - p``, the kept scaled by ``1/(1-p)``; ``alpha``: alpha dropout's
    affine map instead (the dropped take SELU's saturation value; mean and variance are kept). ``key`` is raw
    key data."""
    if not feature and not alpha:
        keep = jax.random.bernoulli(jax.random.wrap_key_data(key), 1.0 - p, input.shape)
        return jnp.where(keep, input * jnp.asarray(1.0 / (1.0 - p), input.dtype), jnp.zeros_like(input))
    dt = input.dtype
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    noise = jax.random.bernoulli(jax.random.wrap_key_data(key), 1.0 - p, shape).astype(dt)
    if not alpha:  # noise.div_(1 - p); input * noise
        return input * (noise / jnp.asarray(1.0 - p, dt))
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    b = (noise - 1) * jnp.asarray(_SELU_ALPHA * a, dt) + jnp.asarray(_SELU_ALPHA * a * p, dt)
    return input * (noise * jnp.asarray(a, dt)) + b


def _dropout_impl(input, p, training, inplace, feature=False, alpha=False):
    """The shared body of ``F.dropout`` and its feature / alpha variants (ATen's ``_dropout_impl``)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or (feature or alpha) and input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    from .. import random as _random
    key = jax.random.key_data(_random.default_generator.next_key())
    kt = Tensor._from_array(_on_device_of(key, input._array), D.uint32, input.device)
    if inplace:  # ATen's dropout_ / feature_dropout_ / alpha_dropout_: one in-place op (its grad_fn)
        from ._registry import OPS
        return OPS["_dropout"].fn_inplace(input, kt, sym_float(p), bool(feature), bool(alpha))
    return _dropout(input, kt, sym_float(p), bool(feature), bool(alpha))


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """``F.dropout``: identity when not training or ``p == 0``; all zeros when ``p == 1``."""
    if type(training) is not bool:  # (torch's Python F.dropout reads ``inplace`` by truthiness, ``training`` not)
        _not_bool("dropout", ("train",), (training,), pos=3)  # (torch's kernel's parameter: ``train``)
    return _dropout_impl(input, p, training, inplace)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """``F.alpha_dropout`` (for SELU networks): dropped elements take the saturation value, then an affine map
    restores the mean and variance; identity when not training."""
    return _dropout_impl(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """``F.feature_alpha_dropout``: alpha dropout of whole channels (dims 0 and 1 index them)."""
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


def _feature_dropout_nd(name, nd, input, p, training, inplace):
    """dropout1d / dropout3d: (C, *spatial) inputs are a batch of one; dropout2d keeps PyTorch's historical
    (N, C, L) reading of 3-d inputs (with its warning)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    dim = input.dim()
    spatial = {1: "1 spatial dimension", 2: "2 spatial dimensions", 3: "3 spatial dimensions"}[nd]
    if dim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {dim}D input. Note that dropout1d "
                               "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                               "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
        warnings.warn(f"{name}: Received a {dim}-D input to {name}, which is deprecated and will result in an error "
                      "in a future release. To retain the behavior and silence this warning, please use dropout "
                      f"instead. Note that {name} exists to provide channel-wise dropout on inputs with {spatial}, "
                      f"a channel dimension, and an optional batch dimension (i.e. {nd + 1}D or {nd + 2}D inputs).",
                      stacklevel=_user_stacklevel())
    if nd == 2:
        if dim == 3:
            warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                          "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                          "This behavior will change in a future release to interpret the input as one without a "
                          "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                          "please switch to using dropout1d instead.", stacklevel=_user_stacklevel())
        return _dropout_impl(input, p, training, inplace, feature=True)
    if dim == nd + 2:
        return _dropout_impl(input, p, training, inplace, feature=True)
    if inplace:  # (through a batch-of-one view: written into ``input``, which is returned, as torch's
        _dropout_impl(input.unsqueeze(0), p, training, True, feature=True)  # unsqueeze_ / squeeze_ pair)
        return input
    return _dropout_impl(input.unsqueeze(0), p, training, False, feature=True).squeeze(0)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """``F.dropout1d``: zero whole channels of (N, C, L) or (C, L) input, scale the rest by ``1/(1-p)``."""
    return _feature_dropout_nd("dropout1d", 1, input, p, training, inplace)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """``F.dropout2d``: zero whole channels of (N, C, H, W) input, scale the rest by ``1/(1-p)``."""
    return _feature_dropout_nd("dropout2d", 2, input, p, training, inplace)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """``F.dropout3d``: zero whole channels of (N, C, D, H, W) or (C, D, H, W) input, scale the rest."""
    return _feature_dropout_nd("dropout3d", 3, input, p, training, inplace)
