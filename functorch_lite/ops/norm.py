"""Normalisation, embedding, one_hot and misc nn ops (``torch.nn.functional`` twins).

Each op is one ``@defop`` with a pure jax body (one dispatch, one autograd Node, PyTorch's grad_fn name).
Low-precision inputs (float16/bfloat16) compute their statistics in float32 and round the result back,
as PyTorch's CPU kernels do (``opmath``). ``batch_norm`` in training mode returns the updated running
statistics from the same jitted kernel; the wrapper writes them into the buffers in place.
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax

from .. import dtypes as D
from ..amp import autocast_mode as _amp
from .._symbolic import sym_float
from . import _deferred
from .._promotion import _cname, no_kernel
from .._tensor.tensor import Tensor
from .._tensor.views import shape_str as _shape_str
from .._warn import warn_once
from ._registry import _not_bool, defop
from ._dispatch import write_out as _write_out
from .fft_ops import float_arg
from . import _rounding
from . import grad_overrides as _go
from ._rounding import true_div
from .distance import _vector_norm
from .reduction import welford_mean

__all__: list = ["batch_norm", "layer_norm", "group_norm", "rms_norm", "embedding", "one_hot", "leaky_relu",
                 "leaky_relu_", "bilinear", "normalize", "softplus", "hardtanh", "relu6", "softsign",
                 "logsigmoid"]


def _float_rule(kernel: str, extra=()):
    """Dtype rule: floating inputs only (``"<kernel>" not implemented for 'Long'``); output = input dtype.

    ``extra``: dtypes of further outputs, each a tensor-argument index (its dtype, else the input's) or a
    facade dtype."""
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt.category < D.FLOAT or dt.category > D.FLOAT:
            raise no_kernel(kernel, dt)
        outs = [dt]
        for e in extra:
            if isinstance(e, int):
                outs.append(sig[e][1] if isinstance(sig[e], tuple) else dt)
            else:
                outs.append(e)
        return (None,) * len(sig), tuple(outs)
    return rule


def _verify_batch_size(size) -> None:
    """PyTorch's ``_verify_batch_size``: training statistics need more than one value per channel."""
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size!r}")


def _mixed_dtype_check(x: Tensor, params) -> None:
    """PyTorch CPU's mixed-dtype rule for norm kernels: parameters share the input's dtype, except float32
    parameters with a float16/bfloat16 input."""
    for p in params:
        if p is None or p.dtype is x.dtype:
            continue
        if p.dtype is D.float32 and x.dtype in (D.float16, D.bfloat16):
            continue
        if x.dtype.category != D.FLOAT:
            return  # the kernel's dtype error comes first
        if p.dtype is D.float32:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")


def _shape_arg(op: str, normalized_shape) -> tuple:
    """``normalized_shape`` as a tuple; a bare int is refused as PyTorch's functional form does."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"{op}(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    return tuple(int(s) for s in normalized_shape)


# ---- batch_norm ---------------------------------------------------------------------------------------
def _bn_check(targs, sargs):
    x = targs[0]
    c = x._shape[1] if len(x._shape) > 1 else 1
    for name, t in (("running_mean", targs[3]), ("running_var", targs[4]), ("weight", targs[1]),
                    ("bias", targs[2])):  # (torch's order: _batch_norm_impl_index)
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    _mixed_dtype_check(x, targs[1:5])


@defop("_batch_norm", promote=_float_rule("batch_norm", extra=(3, 4, D.int64)), grad_fn="NativeBatchNormBackward0",
       tensors=6, method=False, function=False, nout=4, check=_bn_check, saves=(0, 1), kernel="batch_norm")
def _batch_norm(input, weight, bias, running_mean, running_var, count, training, momentum, eps):
    """Batch norm over every dim but 1 -> (output, new running_mean, new running_var, new count).

    ``momentum=None`` with ``count`` (num_batches_tracked) is the cumulative average ``1/(count+1)``.
    Outputs for absent statistics are empty placeholders."""
    acc = D.opmath(input.dtype)
    x = input.astype(acc)
    c = x.shape[1] if x.ndim > 1 else 1
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, c) + (1,) * (x.ndim - 2)
    if training:
        mean = jnp.mean(x, axis=axes)
        var = jnp.mean(jnp.square(x - mean.reshape(bshape)), axis=axes)
    else:
        mean, var = running_mean.astype(acc), running_var.astype(acc)
    y = (x - mean.reshape(bshape)) * lax.rsqrt(var + eps).reshape(bshape)
    if weight is not None:
        y = y * weight.astype(acc).reshape(bshape)
    if bias is not None:
        y = y + bias.astype(acc).reshape(bshape)
    new_rm = jnp.zeros((0,), acc) if running_mean is None else running_mean
    new_rv = jnp.zeros((0,), acc) if running_var is None else running_var
    new_count = jnp.zeros((0,), jnp.int64) if count is None else count + jnp.asarray(1, count.dtype)
    if training and running_mean is not None:
        n = x.size // c
        m = lax.stop_gradient(mean)
        v = lax.stop_gradient(var) * (n / (n - 1) if n > 1 else math.inf)
        if momentum is None:
            f = jnp.asarray(1.0, acc) / new_count.astype(acc)
        else:
            f = jnp.asarray(momentum, acc)
        one = jnp.asarray(1.0, acc)
        new_rm = (f * m + (one - f) * running_mean.astype(acc)).astype(running_mean.dtype)
        new_rv = (f * v + (one - f) * running_var.astype(acc)).astype(running_var.dtype)
    return y.astype(input.dtype), new_rm, new_rv, new_count


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5, *, num_batches_tracked: Tensor | None = None) -> Tensor:
    """``F.batch_norm``; in training mode the running statistics are updated in place (unbiased variance).

    ``num_batches_tracked`` (facade extension used by the BatchNorm modules): incremented in place in the
    same kernel; with ``momentum=None`` the update is the cumulative average ``1/num_batches_tracked``.

    >>> x = functorch_lite.randn(4, 3); rm, rv = functorch_lite.zeros(3), functorch_lite.ones(3)
    >>> y = batch_norm(x, rm, rv, training=True)   # rm, rv now hold 0.9*old + 0.1*batch stats
    """
    if training:
        _verify_batch_size(input.size())
    if type(training) is not bool:  # (after F.batch_norm's own batch check, as torch's parser reads it then)
        _not_bool("batch_norm", ("training",), (training,), pos=6)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if momentum is None and num_batches_tracked is None:
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not NoneType")
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if not training and running_var is None:
        raise RuntimeError("running_var must be defined in evaluation mode")
    update = training and running_mean is not None and running_var is not None
    count = num_batches_tracked if update else None
    mom = None if momentum is None else float(momentum)
    out, nm, nv, nc = _batch_norm(input, weight, bias, running_mean, running_var, count, training, mom,
                                  float(eps))
    if update:
        _write_stat(running_mean, nm._storage.array)
        _write_stat(running_var, nv._storage.array)
        if count is not None:
            count._write(nc._storage.array)  # PyTorch's ``num_batches_tracked.add_(1)``: one version bump
    return out


def _write_stat(t: Tensor, arr) -> None:
    """Store a running statistic in place; PyTorch's kernel does not bump its version counter."""
    t._write(arr)
    t._storage.version -= 1


# ---- layer_norm / group_norm / rms_norm -----------------------------------------------------------------
def _affine_shape_check(targs, ns, names=("weight", "bias")):
    for name, t in zip(names, targs[1:]):
        if t is not None and tuple(t._shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_shape_str(t._shape)} and normalized_shape = {_shape_str(ns)}")


def _ln_check(targs, sargs):
    ns = sargs[0]
    _affine_shape_check(targs, ns)
    x = targs[0]
    _mixed_dtype_check(x, targs[1:])
    if len(x._shape) < len(ns) or tuple(x._shape[len(x._shape) - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={_shape_str(ns)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in ns)}], but got input of size{_shape_str(x._shape)}")


@defop("layer_norm", promote=_float_rule("LayerNormKernelImpl"), grad_fn="NativeLayerNormBackward0", tensors=3,
       method=False, function=False, check=_ln_check, saves=(0, 1), kernel="LayerNormKernelImpl",
       autocast={"cuda": "fp32"})
def _layer_norm(input, weight, bias, normalized_shape, eps):
    """Normalise over the trailing ``normalized_shape`` dims (biased variance), then scale and shift."""
    acc = D.opmath(input.dtype)
    x = input.astype(acc)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = welford_mean(x, axes)  # (correctly rounded: a constant row normalises to 0, as torch's RowwiseMoments)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    y = (x - mean) * lax.rsqrt(var + eps)
    if weight is not None:
        y = y * weight.astype(acc)
    if bias is not None:
        y = y + bias.astype(acc)
    return y.astype(input.dtype)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """``F.layer_norm``: ``(x - mean) / sqrt(var + eps) * weight + bias`` over the last dims."""
    return _layer_norm(input, weight, bias, _shape_arg("layer_norm", normalized_shape),
                       float_arg("layer_norm", "eps", eps, 5))


def _gn_check(targs, sargs):
    x, w, b = targs
    g = sargs[0]
    c = x._shape[1]
    if g <= 0 or c % g:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {_shape_str(x._shape)} and num_groups={g}")
    if w is not None and (len(w._shape) != 1 or w._shape[0] != c):
        raise RuntimeError(f"Expected weight to be a vector of size equal to the number of channels in input, but "
                           f"got weight of shape {_shape_str(w._shape)} and input of shape {_shape_str(x._shape)}")
    if b is not None and (len(b._shape) != 1 or b._shape[0] != c):
        shown = _shape_str(w._shape) if w is not None else "[0]"  # PyTorch prints weight's shape here
        raise RuntimeError(f"Expected bias to be a vector of size equal to the number of channels in input, but "
                           f"got bias of shape {shown} and input of shape {_shape_str(x._shape)}")
    _mixed_dtype_check(x, (w, b))


@defop("group_norm", promote=_float_rule("GroupNormKernelImpl"), grad_fn="NativeGroupNormBackward0", tensors=3,
       method=False, function=False, check=_gn_check, saves=(0, 1), kernel="GroupNormKernelImpl",
       autocast={"cuda": "fp32"})
def _group_norm(input, weight, bias, num_groups, eps):
    """Normalise each group of ``C // num_groups`` channels (with all spatial positions) per sample."""
    acc = D.opmath(input.dtype)
    x = input.astype(acc)
    n, c = x.shape[0], x.shape[1]
    xg = x.reshape((n, num_groups, math.prod(x.shape[1:]) // num_groups))  # (no -1: n may be 0)
    mean = welford_mean(xg, (2,))
    var = jnp.mean(jnp.square(xg - mean), axis=-1, keepdims=True)
    y = ((xg - mean) * lax.rsqrt(var + eps)).reshape(x.shape)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * weight.astype(acc).reshape(bshape)
    if bias is not None:
        y = y + bias.astype(acc).reshape(bshape)
    return y.astype(input.dtype)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """``F.group_norm`` over ``num_groups`` groups of channels (dim 1)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    s = input.size()
    _verify_batch_size([s[0] * s[1] // num_groups, num_groups] + list(s[2:]))
    return _group_norm(input, weight, bias, int(num_groups), float_arg("group_norm", "eps", eps, 5))


def _rms_check(targs, sargs):
    ns = sargs[0]
    _affine_shape_check(targs, ns, ("weight",))
    x, w = targs
    if len(x._shape) < len(ns) or tuple(x._shape[len(x._shape) - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={_shape_str(ns)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in ns)}], but got input of size{_shape_str(x._shape)}")
    if w is not None and w.dtype is not x.dtype:  # (PyTorch's TORCH_WARN_ONCE: its fused kernel needs one dtype)
        warn_once("rms_norm_mixed_dtype", f"Mismatch dtype between input and weight: input dtype = {_cname(x.dtype)}, "
                  f"weight dtype = {_cname(w.dtype)}, Cannot dispatch to fused implementation.")


def _rms_name(targs, sargs):  # (torch's composite casts a half input back: ToCopyBackward0)
    return "ToCopyBackward0" if targs[0].dtype in (D.float16, D.bfloat16) else "MulBackward0"


@defop("rms_norm", promote=_float_rule("rms_norm"), grad_fn=_rms_name, tensors=2, method=False, function=False,
       check=_rms_check, saves=(0, 1), kernel="rms_norm", autocast={"cuda": "fp32"})
def _rms_norm(input, weight, normalized_shape, eps):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims."""
    acc = D.opmath(input.dtype)
    x = input.astype(acc)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    y = x * lax.rsqrt(jnp.mean(jnp.square(x), axis=axes, keepdims=True) + eps)
    if weight is not None:
        y = y * weight.astype(acc)
    return y.astype(input.dtype)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """``F.rms_norm``; ``eps=None`` uses the machine epsilon of the computation dtype (float32 for halves)."""
    if eps is None:
        eps = float(jnp.finfo(jnp.float64 if input.dtype is D.float64 else jnp.float32).eps)
    return _rms_norm(input, weight, _shape_arg("rms_norm", normalized_shape),
                     float_arg("rms_norm", "eps", eps, 4))


# ---- embedding / one_hot ---------------------------------------------------------------------------------
@jax.jit
def _minmax(a):
    return jnp.stack([jnp.min(a), jnp.max(a)]).astype(jnp.int64)


def _host_minmax(t: Tensor):
    """(min, max) of an integer tensor on the host (one small transfer), or None while tracing/empty."""
    arr = t._array
    if isinstance(arr, jax.core.Tracer) or arr.size == 0:
        return None
    lo, hi = (int(v) for v in jax.device_get(_minmax(arr)))
    return lo, hi


def _emb_check(targs, sargs):
    w, idx = targs
    if idx.dtype not in (D.int64, D.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{idx.dtype.legacy} instead (while checking arguments for "
                           "embedding)")
    if isinstance(idx._array, jax.core.Tracer):  # (inside a compiled function: the program checks it)
        _deferred.check((idx._array < 0) | (idx._array >= w._shape[0]), idx._array,
                        lambda v, p: IndexError("index out of range in self"))
        return
    r = _host_minmax(idx)
    if r is not None and (r[0] < 0 or r[1] >= w._shape[0]):
        raise IndexError("index out of range in self")


def _emb_rule(op, sig, sargs):
    return (None, None), (sig[0][1],)


@defop("embedding", out=False, float8=True, promote=_emb_rule, grad_fn="EmbeddingBackward0", tensors=2, method=False,
       check=_emb_check,
       saves=(1,), device_check=("weight", "indices"))
def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at ``indices``; row ``padding_idx`` gets no gradient; ``scale_grad_by_freq``
    divides each row's gradient by its count in ``indices``."""
    n = weight.shape[0]
    w = weight
    if padding_idx >= 0 and jnp.issubdtype(w.dtype, jnp.inexact):
        pad = (jnp.arange(n) == padding_idx).reshape((n,) + (1,) * (w.ndim - 1))
        w = jnp.where(pad, lax.stop_gradient(w), w)
    out = w[indices]
    if scale_grad_by_freq and jnp.issubdtype(w.dtype, jnp.inexact):
        counts = jnp.zeros((n,), w.dtype).at[indices.reshape(-1)].add(jnp.asarray(1, w.dtype))
        scale = (jnp.asarray(1, w.dtype) / counts[indices]).reshape(indices.shape + (1,) * (w.ndim - 1))
        const = lax.stop_gradient(out)
        out = const + (out - const) * scale
    return out


_RENORM: dict = {}


def _renorm_fn(max_norm: float, norm_type: float):
    """The renorm of ``weight``'s looked-up rows. torch renormalises ``weight.detach()`` in place: the new values
    carry the old ones' gradient unchanged (under ``func.grad`` / ``jvp`` the renorm is not differentiated)."""
    f = _RENORM.get((max_norm, norm_type))
    if f is None:
        @jax.custom_jvp
        def renorm(w, idx):
            rows = w[idx.reshape(-1)].astype(D.opmath(w.dtype))
            a = jnp.abs(rows)
            if norm_type == math.inf:  # (``at::norm``'s p = inf, -inf and 0 cases)
                norms = jnp.max(a, axis=-1)
            elif norm_type == -math.inf:
                norms = jnp.min(a, axis=-1)
            elif norm_type == 0:
                norms = jnp.sum(a != 0, axis=-1).astype(a.dtype)
            else:
                norms = jnp.sum(a ** norm_type, axis=-1) ** (1.0 / norm_type)
            scale = jnp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(rows.dtype)
            return w.at[idx.reshape(-1)].set((rows * scale[:, None]).astype(w.dtype))

        @renorm.defjvp
        def _renorm_jvp(primals, tangents):
            return renorm(*primals), tangents[0]
        f = _RENORM[(max_norm, norm_type)] = jax.jit(renorm)
    return f


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``F.embedding``: look up rows of ``weight``. ``max_norm`` renormalises the looked-up rows of
    ``weight`` in place (no gradient), as PyTorch. ``sparse`` gradients are returned dense."""
    if type(scale_grad_by_freq) is not bool or type(sparse) is not bool:
        _not_bool("embedding", ("scale_grad_by_freq", "sparse"), (scale_grad_by_freq, sparse))
    n = weight.size(0)
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _emb_check((weight, input), ())
        weight._write(_renorm_fn(float(max_norm), float(norm_type))(weight._array, input._array))
    return _embedding(weight, input, int(padding_idx), bool(scale_grad_by_freq), bool(sparse))


def _one_hot_rule(op, sig, sargs):
    return (None,), (D.int64,)


@defop("one_hot", promote=_one_hot_rule, differentiable=False, method=False, function=False, saves=())
def _one_hot(input, num_classes):
    """``input[..., None] == arange(num_classes)`` as int64."""
    return (input[..., None] == jnp.arange(num_classes, dtype=input.dtype)).astype(jnp.int64)


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """``F.one_hot``: int64 one-hot encoding; ``num_classes=-1`` infers ``max + 1``."""
    tensor = input
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.device.type == "meta":  # shapes only (torch's meta path checks no values; -1 would read the max,
        if num_classes == -1:         # and its arange(num_classes) refuses a negative count)
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if num_classes < 0:
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        return _one_hot(tensor, int(num_classes))
    r = _host_minmax(tensor)
    if r is None and num_classes <= 0 and tensor.numel() == 0:  # (torch: any num_classes <= 0 of an empty input)
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if r is not None:
        if r[0] < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = r[1] + 1
        elif r[1] >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes != -1 and isinstance(tensor._array, jax.core.Tracer):  # (compiled: the program checks it)
        arr = tensor._array  # (eager's order: any negative value first, then the largest)
        _deferred.check(arr < 0, arr, lambda v, p: RuntimeError("Class values must be non-negative."))
        _deferred.check(arr >= num_classes, arr, lambda v, p: RuntimeError("Class values must be smaller than "
                                                                            "num_classes."))
    elif num_classes == -1:
        from ._dispatch import data_dependent_error
        raise data_dependent_error("one_hot with num_classes=-1")
    return _one_hot(tensor, int(num_classes))


# ---- leaky_relu / bilinear ------------------------------------------------------------------------------
@defop("_leaky_relu", promote=_float_rule("leaky_relu_cpu"), method=False, function=False, inplace=True,
       grad_fn=lambda targs, sargs: "LeakyReluBackward1" if sargs[1] else "LeakyReluBackward0",
       saves=lambda targs: (0,), kernel="leaky_relu_cpu")
def _leaky_relu(input, negative_slope, inplace_form):
    """``x if x > 0 else negative_slope * x`` (gradient ``negative_slope`` at 0, as PyTorch)."""
    def f(x):  # (float16/bfloat16 in float32, as torch's kernel)
        return jnp.where(x > 0, x, x * jnp.asarray(negative_slope, x.dtype))
    return D.in_opmath(f)(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``F.leaky_relu``."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _leaky_relu(input, sym_float(negative_slope), False)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``F.leaky_relu_``: in place."""
    from ._registry import OPS
    return OPS["_leaky_relu"].fn_inplace(input, sym_float(negative_slope), True)


def _bil_check(targs, sargs):
    x1, x2, w, b = targs
    if len(x1._shape) != len(x2._shape):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(x1._shape)} and {len(x2._shape)}")
    for i in range(len(x1._shape) - 1):
        if x1._shape[i] != x2._shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {x1._shape[i]} "
                               f"and {x2._shape[i]}")
    if len(w._shape) != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {len(w._shape)} dimensions")
    if x1._shape[-1] != w._shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {x1._shape[-1]} but expected "
                           f"{w._shape[1]}")
    if x2._shape[-1] != w._shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {x2._shape[-1]} but expected "
                           f"{w._shape[2]}")
    if b is not None and b.numel() != w._shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {b.numel()} but expected "
                           f"{w._shape[0]}")


def _bil_rule(op, sig, sargs):
    """One dtype for all (PyTorch's first check, before the shapes'); no bool kernel."""
    dt = sig[0][1]
    d2, dw, b = sig[1][1], sig[2][1], sig[3]
    if not dt is d2 is dw or (b is not None and b[1] is not dt):
        raise RuntimeError(f"All tensors must have the same dtype, got input1: {_cname(dt)}, input2: {_cname(d2)}, "
                           f"weight: {_cname(dw)}" + ("" if b is None else f", bias: {_cname(b[1])}"))
    if dt is D.bool:
        raise no_kernel("bmm", dt)
    return (None,) * len(sig), (dt,)


def _bil_prep(targs, sargs):
    """The static ``_low``: the CPU autocast dtype for a floating (not float64) input inside a CPU autocast region
    (PyTorch's ``_trilinear`` runs two bmm's, which are on CPU autocast's lower-precision list), else None."""
    x = targs[0]
    low = _amp.cpu_lower_dtype(x)
    return (low if low is not None and x.dtype.is_floating_point and x.dtype is not D.float64 else None,)


def _trilinear(x1, w, x2, low=None):
    """PyTorch's ``_trilinear`` for bilinear: x1 with W first (one bmm), then with x2 (another), each product stored
    in the compute dtype (the operands', or ``low`` under CPU autocast; float32 accumulation for half types); the
    result in x1's dtype. (XLA drops a bfloat16 product's rounding where a widening convert follows it, so the
    products accumulate in float32 explicitly and are rounded by ``_rounding.stored``.)"""
    dt = x1.dtype
    cd = dt if low is None else low
    acc = D.opmath(cd)
    if cd != acc:
        x1, w, x2 = (a.astype(cd).astype(acc) for a in (x1, w, x2))
    t = _rounding.stored(jnp.einsum("...i,oij->...oj", x1, w), cd, acc)
    return _rounding.stored(jnp.einsum("...oj,...j->...o", t, x2), cd, acc).astype(dt)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _trilinear_low(x1, w, x2, low):
    """:func:`_trilinear` with its products in ``low`` (CPU autocast). Its derivative is :func:`_trilinear`'s in
    the operands' own dtype: autocast acts inside PyTorch's kernel, below autograd, whose ``_trilinear_backward``
    runs on the saved (float32) inputs."""
    return _trilinear(x1, w, x2, low)


@_trilinear_low.defjvp
def _trilinear_low_jvp(low, primals, tangents):
    return _trilinear_low(*primals, low), jax.jvp(_trilinear, primals, tangents)[1]


@defop("bilinear", promote=_bil_rule, tensors=4, method=False, check=_bil_check, saves=(0, 1, 2), kernel="bmm",
       grad_fn=lambda targs, sargs: "ViewBackward0" if targs[3] is None else "AddBackward0",
       autocast={"cuda": "promote"}, prep=_bil_prep, out=False)
def bilinear(input1, input2, weight, bias=None, *, _low=None):
    """``y[..., o] = sum_ij x1[..., i] * W[o, i, j] * x2[..., j] + b[o]`` (``F.bilinear``), as PyTorch's
    ``_trilinear`` computes it; under CPU autocast (``_low``, set by ``_bil_prep``) its products run in the autocast
    dtype and the result keeps the inputs' dtype, as PyTorch's."""
    y = _trilinear(input1, weight, input2) if _low is None else _trilinear_low(input1, weight, input2, _low.jnp)
    return y if bias is None else y + bias


# ---- normalize and small activations -------------------------------------------------------------------
_NORM_FLOAT_RULE = _float_rule("linalg_vector_norm")


def _normalize_rule(op, sig, sargs):
    """Floating and complex inputs (a complex one is divided by its real norm); output = input dtype."""
    dt = sig[0][1]
    if dt.is_complex:
        return (None,), (dt,)
    return _NORM_FLOAT_RULE(op, sig, sargs)


@defop("_normalize", kernel="norm_cpu", promote=_normalize_rule, grad_fn="DivBackward0", method=False,
       function=False, saves=(0,), autocast={"cuda": "fp32"})
def _normalize(input, p, dim, eps):
    """``x / max(||x||_p along dim, eps)``, as PyTorch's ``x / x.norm(p, dim, keepdim=True).clamp_min(eps)``: the
    norm (float32-accumulated for half types) rounded to the input dtype, then one correctly rounded division."""
    n = _vector_norm(input, p, dim, True)
    return true_div(input, jnp.maximum(n, jnp.asarray(eps, n.dtype)).astype(input.dtype))  # (complex: by a real norm)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``F.normalize``: ``x / max(||x||_p, eps)`` along ``dim`` (one kernel for a tensor's one dim; a tuple of dims
    or a 0-d input: torch's composite, ``input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)``).
    ``out=``: written as ``torch.div(..., out=out)`` writes (resized as it resizes)."""
    if isinstance(dim, (tuple, list)) or input.dim() == 0:
        r = input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    else:
        nd = input.dim()
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
        r = _normalize(input, float(p), dim % nd, sym_float(eps))
    return r if out is None else _write_out(out, r, "div", srcs=(input,))


def _act(name: str, grad: str, kernel: str, body, rule=None, inplace=False):
    """An elementwise float activation defop (function/method off) with PyTorch's grad_fn name; ``kernel``
    names PyTorch's kernel (its dtype errors), ``rule`` a custom dtype rule (default: floating inputs only),
    ``inplace`` adds the in-place form (same grad_fn name, as PyTorch's ``F.hardtanh(x, inplace=True)``)."""
    def impl(input, a, b):
        return body(input, a, b)
    impl.__name__ = name
    impl.__doc__ = f"``F.{name.lstrip('_')}``."
    return defop(name, promote=rule or _float_rule(kernel), grad_fn=grad, method=False, function=False, saves=(0,),
                 inplace=inplace, kernel=kernel, autocast={"cuda": "fp32"} if name == "_softplus" else None)(impl)


def _hardtanh_rule(op, sig, sargs):
    """Integers keep their dtype (bounds truncated); bool and unsigned-with-negative-bound raise."""
    dt = sig[0][1]
    if dt is D.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dt.category > D.FLOAT:
        raise no_kernel("hardtanh", dt)
    if dt is D.uint8 and sargs[0] < 0:
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return (None,), (dt,)


def _softsign_rule(op, sig, sargs):
    """``x / (|x| + 1)``: integers divide into the default float; bool has no ``abs``; complex divides by the real
    ``|x| + 1``."""
    dt = sig[0][1]
    if dt is D.bool:
        raise no_kernel("abs_cpu", dt)
    out = dt if dt.category >= D.FLOAT else D.get_default_dtype()
    return (out,), (out,)


def _softplus_body(x, beta, threshold):
    """In float32 for half types (PyTorch's opmath); the exp branch never sees inputs above the threshold, so
    neither the value nor the gradient overflows there."""
    xo = x.astype(D.opmath(x.dtype))
    b = jnp.asarray(beta, xo.dtype)
    bx = xo * b
    above = bx > threshold
    safe = jnp.where(above, jnp.zeros_like(bx), bx)
    r = jnp.log1p(jnp.exp(safe)) / b
    # at beta * x == threshold itself the tangent line: the value, torch's first derivative there (its
    # softplus_backward takes the exp branch unless beta * x > threshold), and every higher derivative 0, as its
    # softplus_double_backward, which masks with beta * x < threshold strictly. ``(x - x) / (z + 1) * z`` is 0, its
    # reverse-mode derivative torch's ``grad * z / (z + 1)``, rounded as torch's; not where z overflows (there torch's
    # derivative is inf / inf = NaN, as the exp branch's own)
    at = bx == threshold
    z = lax.stop_gradient(jnp.exp(jnp.where(at, bx, jnp.zeros_like(bx))))
    at = at & (z < jnp.inf)
    tangent = lax.stop_gradient(r) + (xo - lax.stop_gradient(xo)) / (z + 1) * z
    return jnp.where(above, xo, jnp.where(at, tangent, r)).astype(x.dtype)


def _hardtanh_body(x, lo, hi):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.clip(x, jnp.asarray(int(lo), x.dtype), jnp.asarray(int(hi), x.dtype))
    # PyTorch's gradient is 0 at and beyond the bounds (and passes at NaN: its test is x <= lo || x >= hi)
    inside = ~((x <= lo) | (x >= hi))
    return jnp.where(inside, x, lax.stop_gradient(_go.clamp(x, jnp.asarray(lo, x.dtype), jnp.asarray(hi, x.dtype))))


_softplus = _act("_softplus", "SoftplusBackward0", "softplus_cpu", _softplus_body)
_hardtanh = _act("_hardtanh", "HardtanhBackward0", "clamp_scalar_cpu", _hardtanh_body, _hardtanh_rule,
                 inplace=True)


def _softsign_body(x, a, b):
    """torch's composite ``x / (x.abs() + 1)``, with its abs derivative ``sgn(x)`` (0 at 0: the 2nd derivative at 0
    is -0 and the 3rd 0, where JAX's abs, +-1 at 0, gave -2 and 6)."""
    a = jnp.abs(x) if jnp.iscomplexobj(x) else _go.abs(x)  # (a complex x: JAX's |x|, whose tangent is real)
    return x / (a + 1).astype(x.dtype)


_softsign = _act("_softsign", "DivBackward0", "add_stub", _softsign_body, _softsign_rule)
_logsigmoid = _act("_logsigmoid", "LogSigmoidBackward0", "log_sigmoid_cpu",
                   lambda x, a, b: D.in_opmath(jax.nn.log_sigmoid)(x))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0, *, out: Tensor | None = None) -> Tensor:
    """``F.softplus``: ``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (``out=``: torch's
    ``softplus.out``, resized and cast into as any elementwise op's out=)."""
    r = _softplus(input, sym_float(beta), sym_float(threshold))
    return r if out is None else _write_out(out, r, "softplus", srcs=(input,))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.hardtanh``: clamp to ``[min_val, max_val]``."""
    if inplace:
        from ._registry import OPS
        return OPS["_hardtanh"].fn_inplace(input, sym_float(min_val), sym_float(max_val))
    return _hardtanh(input, sym_float(min_val), sym_float(max_val))


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.relu6``: ``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def softsign(input: Tensor) -> Tensor:
    """``F.softsign``: ``x / (1 + |x|)``."""
    return _softsign(input, 0.0, 0.0)


def logsigmoid(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``F.logsigmoid``: ``log(sigmoid(x))`` (``out=``: torch's ``log_sigmoid.out``)."""
    r = _logsigmoid(input, 0.0, 0.0)
    return r if out is None else _write_out(out, r, "log_sigmoid_forward", srcs=(input,))  # (torch's kernel name)
