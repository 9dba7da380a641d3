"""More pooling and small nn ops: the ``*_with_indices`` spellings of max pooling, ``adaptive_max_pool3d``,
max unpooling (the inverse of ``return_indices=True`` pooling), RReLU, channel shuffle, the deprecated
``upsample*`` aliases and the ``torch.*`` forms of the dropout family.

Indices follow PyTorch's convention: an int64 flat position inside each (N, C) plane of the pooled input
(``h * W + w`` in 2-d), so ``max_unpool2d(*max_pool2d(x, 2, return_indices=True), 2)`` puts every maximum back
where it came from. Ops with their own PyTorch backward node (``MaxUnpool2DBackward0``,
``AdaptiveMaxPool3DBackward0``, ``RreluWithNoiseBackward0``, ``ChannelShuffleBackward0``) are one ``@defop``
each; the 1-d forms are PyTorch's unsqueeze / squeeze composites (``SqueezeBackward1``).

Example::

    >>> import functorch_lite as torch
    >>> F = torch.nn.functional
    >>> v, i = F.max_pool2d(torch.arange(16.).reshape(1, 1, 4, 4), 2, return_indices=True)
    >>> F.max_unpool2d(v, i, 2)[0, 0, 1]
    tensor([ 0.,  5.,  0.,  7.])
"""
from __future__ import annotations

import warnings
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from .._tensor.views import shape_str as _shape_str
from .math_extra import _NotImplementedNode  # PyTorch's grad_fn of ops with no derivative
from . import _deferred, nn_ops as _nn
from ._registry import OPS, defop
from .grad_overrides import aten_no_derivative
from .conv import (_adaptive_prep_for, _adaptive_taps, _indices_rule, _max_over_taps, _tup, adaptive_max_pool1d,
                   adaptive_max_pool2d, max_pool1d, max_pool2d, max_pool3d)
from .._warn import user_stacklevel as _user_stacklevel

__all__: list = ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
                 "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
                 "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "rrelu",
                 "rrelu_", "channel_shuffle", "native_channel_shuffle", "upsample", "upsample_nearest",
                 "upsample_bilinear"]


# ---- the *_with_indices spellings ---------------------------------------------------------------------------------
def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """``F.max_pool1d_with_indices``: (values, int64 positions along L), whatever ``return_indices`` says."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """``F.max_pool2d_with_indices``: (values, int64 flat ``h * W + w`` indices)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """``F.max_pool3d_with_indices``: (values, int64 flat ``(t * H + h) * W + w`` indices)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool1d_with_indices``: (values, int64 indices)."""
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool2d_with_indices``: (values, int64 indices)."""
    return adaptive_max_pool2d(input, output_size, return_indices=True)


@defop("adaptive_max_pool3d", promote=_indices_rule("adaptive_max_pool3d_cpu", allow_int=False),
       grad_fn="AdaptiveMaxPool3DBackward0", method=False, function=False, nout=2, autocast={"cpu": "fp32"},
       prep=_adaptive_prep_for("adaptive_max_pool3d", 3, maxpool=True), kernel="adaptive_max_pool3d_cpu")
def _adaptive_max_pool3d(input, output_size):
    """(values, int64 flat (t*H+h)*W+w indices) of the first maximum of each adaptive window."""
    if 0 in output_size:
        shape = input.shape[:-3] + tuple(output_size)
        return jnp.zeros(shape, input.dtype), jnp.zeros(shape, jnp.int64)
    return _max_over_taps(input, [_adaptive_taps(input.shape[-3 + i], output_size[i]) for i in range(3)])


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool3d`` over (N, C, D, H, W) or (C, D, H, W) (``None`` keeps that input size)."""
    v, i = _adaptive_max_pool3d(input, output_size)
    return (v, i) if return_indices else v


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool3d_with_indices``: (values, int64 indices)."""
    return _adaptive_max_pool3d(input, output_size)


def _t_max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def _t_adaptive_max_pool1d(input: Tensor, output_size):
    return adaptive_max_pool1d(input, output_size, return_indices=True)


_t_max_pool1d_with_indices.__name__ = "max_pool1d_with_indices"
_t_adaptive_max_pool1d.__name__ = "adaptive_max_pool1d"


# ---- max unpooling --------------------------------------------------------------------------------------------------
@partial(jax.custom_vjp, nondiff_argnums=(2,))
def _scatter_last(x, gidx, size):
    """``out[gidx[j]] = x[j]`` into ``size`` zeros, the last write winning (PyTorch's CPU loop order); positions
    equal to ``size`` are dropped. The gradient of every ``x[j]`` is ``grad[gidx[j]]``, duplicates included
    (PyTorch's ``max_pool_double_backward``; the gather JAX would derive gives it to the winner only)."""
    win = jnp.full((size,), -1, jnp.int64).at[gidx].max(jnp.arange(x.shape[0], dtype=jnp.int64), mode="drop")
    return jnp.where(win >= 0, x[jnp.maximum(win, 0)], jnp.zeros((), x.dtype))


def _scatter_last_fwd(x, gidx, size):
    return _scatter_last(x, gidx, size), gidx


def _scatter_last_bwd(size, gidx, g):
    return g.at[gidx].get(mode="fill", fill_value=0), None


_scatter_last.defvjp(_scatter_last_fwd, _scatter_last_bwd)


def _unpool(input, indices, output_size):
    """Values of ``input`` placed at their flat ``indices`` within each (N, C) plane of an ``output_size`` grid."""
    nd = len(output_size)
    lead = input.shape[:-nd]
    n_in = int(np.prod(input.shape[-nd:]))
    n_out = int(np.prod(output_size))
    planes = int(np.prod(lead))
    idx = indices.reshape(planes, n_in)
    base = (jnp.arange(planes, dtype=jnp.int64) * n_out)[:, None]
    gidx = jnp.where((idx >= 0) & (idx < n_out), idx + base, planes * n_out).reshape(-1)
    out = _scatter_last(input.reshape(-1), gidx, planes * n_out)
    return out.reshape(lead + tuple(output_size))


def _unpool_rule(kernel: str):
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt.category < D.FLOAT or dt.is_complex or dt in D.FLOAT8:
            raise no_kernel(kernel, dt)
        return (None, None), (dt,)
    return rule


def _unpool_shape_checks(name: str, x: Tensor, ind: Tensor, nd: int) -> None:
    xs = x._shape
    if len(xs) not in (nd + 1, nd + 2):
        dims = "3d or 4d" if nd == 2 else "4d or 5d"
        raise RuntimeError(f"Input to {name} should be a {dims} Tensor, but got a tensor with {len(xs)} dimensions.")
    if ind._shape != xs:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({_shape_str(xs)}) but "
                           f"got indices tensor with shape: {_shape_str(ind._shape)}")
    for i in range(1, len(xs)):
        if xs[i] == 0:
            what = "max_unpooling2d_forward_out_cpu" if nd == 2 else "max_unpooling3d"
            raise RuntimeError(f"{what}(): Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{_shape_str(xs)} with dimension {i} being empty.")


def _unpool2d_prep(targs, sargs):
    x, ind = targs
    osz = tuple(int(o) for o in sargs[0])
    if ind.dtype is not D.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {ind.dtype.short}")
    if len(osz) != 2:
        raise RuntimeError(f"There should be exactly two elements (height, width) in output_size, but got {len(osz)} "
                           "elements.")
    _unpool_shape_checks("max_unpooling2d", x, ind, 2)
    return (osz,)


def _unpool3d_prep(targs, sargs):
    x, ind = targs
    osz, stride, padding = (tuple(int(e) for e in a) for a in sargs)
    if ind.dtype is not D.int64:
        raise RuntimeError("elements in indices should be type int64")
    if len(x._shape) not in (4, 5):
        raise RuntimeError("Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with "
                           f"{len(x._shape)} dimensions.")
    for what, v in (("output_size", osz), ("stride", stride), ("padding", padding)):
        if len(v) != 3:
            sep = " " if what == "output_size" else ": "
            raise RuntimeError(f"There should be exactly three elements (depth, height, width) in {what}, but "
                               f"got{sep}{len(v)} elements.")
    _unpool_shape_checks("max_unpooling3d", x, ind, 3)
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    return (osz, stride, padding)


def _unpool_index_check(targs, sargs):
    """PyTorch's CPU kernel reports an out-of-range index (the last one met: its threads split the planes, so which
    one varies with several bad planes); a host read, skipped while tracing."""
    osz = sargs[0]
    n_out = int(np.prod(osz))
    ind = targs[1]
    if n_out == 0 or 0 in ind._shape:
        return
    if isinstance(ind._array, jax.core.Tracer):  # (inside a compiled function: the program checks it)
        _deferred.check((ind._array < 0) | (ind._array >= n_out), ind._array, lambda v, p: RuntimeError(
            f"Found an invalid max index: {v} (output volumes are of size {'x'.join(map(str, osz))})"), last=True)
        return
    flat = np.asarray(ind._array).reshape(-1)
    bad = np.nonzero((flat < 0) | (flat >= n_out))[0]
    if bad.size:
        raise RuntimeError(f"Found an invalid max index: {flat[bad[-1]]} (output volumes are of size "
                           f"{'x'.join(map(str, osz))})")


@defop("max_unpool2d", promote=_unpool_rule("max_unpool2d"), grad_fn="MaxUnpool2DBackward0", tensors=2,
       method=False, function=False, prep=_unpool2d_prep, check=_unpool_index_check, kernel="max_unpool2d",
       autocast={"cpu": "fp32"}, broadcast=False)
def _max_unpool2d(input, indices, output_size):
    """(N, C, H, W) or (C, H, W) values scattered to their flat ``h * W + w`` indices in an output_size grid."""
    return _unpool(input, indices, output_size)


@defop("max_unpool3d", promote=_unpool_rule("max_unpool3d"), grad_fn="MaxUnpool3DBackward0", tensors=2,
       method=False, function=False, prep=_unpool3d_prep, check=_unpool_index_check, kernel="max_unpool3d",
       autocast={"cpu": "fp32"}, broadcast=False)
def _max_unpool3d(input, indices, output_size, stride, padding):
    """(N, C, D, H, W) or (C, D, H, W) values scattered to their flat indices in an output_size grid."""
    return _unpool(input, indices, output_size)


def _unpool_output_size(input: Tensor, kernel_size, stride, padding, output_size) -> list:
    """PyTorch's ``F._unpool_output_size``: the pooled input's size, or a checked explicit ``output_size``."""
    nd = len(kernel_size)
    default = [(input._shape[-nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return list(output_size)


def _unpool_args(nd: int, input, kernel_size, stride, padding, output_size):
    k = _tup(kernel_size, nd)
    s = k if stride is None else _tup(stride, nd)
    p = _tup(padding, nd)
    if isinstance(output_size, int):
        output_size = (output_size,)
    return k, s, p, _unpool_output_size(input, k, s, p, output_size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``F.max_unpool1d``: the inverse of ``max_pool1d(..., return_indices=True)`` (zeros elsewhere); PyTorch's
    composite over ``max_unpool2d`` with a trailing unit dim."""
    _, _, _, osz = _unpool_args(1, input, kernel_size, stride, padding, output_size)
    return _max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), tuple(osz) + (1,)).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``F.max_unpool2d``: each value of (N, C, H, W) or (C, H, W) ``input`` written at its flat index of the
    output plane, zeros elsewhere."""
    _, _, _, osz = _unpool_args(2, input, kernel_size, stride, padding, output_size)
    return _max_unpool2d(input, indices, tuple(osz))


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``F.max_unpool3d`` over (N, C, D, H, W) or (C, D, H, W)."""
    _, s, p, osz = _unpool_args(3, input, kernel_size, stride, padding, output_size)
    return _max_unpool3d(input, indices, tuple(osz), s, p)


# ---- RReLU ----------------------------------------------------------------------------------------------------------
def _rrelu_rule(op, sig, sargs):
    dt = sig[0][1]
    training = op.sarg(sargs, "training")
    kernel = "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu"
    if dt.category < D.FLOAT or dt.is_complex or dt in D.FLOAT8 or (training and dt is D.float16):
        raise no_kernel(kernel, dt)
    return (None, None), (dt,)


def _rrelu_prep(targs, sargs):
    lower, upper, training, inplace_form = sargs
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return float(lower), float(upper), bool(training), bool(inplace_form)


@defop("_rrelu", promote=_rrelu_rule, tensors=2, method=False, function=False, inplace=True, prep=_rrelu_prep,
       grad_fn=lambda targs, sargs: "RreluWithNoiseBackward1" if sargs[3] else "RreluWithNoiseBackward0",
       kernel="leaky_relu_cpu", broadcast=False)
def _rrelu(input, key, lower, upper, training, inplace_form):
    """ATen's ``rrelu_with_noise``: training, each ``x <= 0`` is multiplied by its own U(lower, upper) draw (the
    gradient is that slope, 1 elsewhere); otherwise leaky ReLU with slope ``(lower + upper) / 2``. ``key``: raw key
    data (None when not training)."""
    if not training:
        return jnp.where(input > 0, input, input * jnp.asarray((lower + upper) / 2, input.dtype))
    acc = jnp.float64 if input.dtype == jnp.float64 else jnp.float32
    r = jax.random.uniform(jax.random.wrap_key_data(key), input.shape, acc, lower, upper)
    return jnp.where(input <= 0, (input.astype(acc) * r).astype(input.dtype), input)


def _rrelu_args(input: Tensor, lower, upper, training, generator) -> Tensor | None:
    """The key tensor of a training draw (None in eval mode)."""
    if not training:
        return None
    from .creation import _gen
    key = jax.random.key_data(_gen(generator).next_key())
    return Tensor._from_array(_nn._on_device_of(key, input._array), D.uint32, input.device)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """``F.rrelu``: randomized leaky ReLU; slopes drawn from U(lower, upper) for the non-positive elements when
    training (the facade's generator), the mean slope ``(lower + upper) / 2`` otherwise."""
    if inplace:
        return rrelu_(input, lower, upper, training)
    return _t_rrelu(input, lower, upper, training)


def _t_rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
             generator=None) -> Tensor:
    return _rrelu(input, _rrelu_args(input, lower, upper, training, generator), lower, upper, training, False)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    """``F.rrelu_`` / ``torch.rrelu_``: in place (RreluWithNoiseBackward1)."""
    key = _rrelu_args(input, lower, upper, training, generator)
    return OPS["_rrelu"].fn_inplace(input, key, lower, upper, training, True)


_t_rrelu.__name__ = "rrelu"


# ---- channel shuffle ----------------------------------------------------------------------------------------------
def _shuffle_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt in D.FLOAT8:
        raise no_kernel("channel_shuffle", dt)
    return (None,), (dt,)


def _shuffle_prep(targs, sargs):
    xs = targs[0]._shape
    groups = int(sargs[0])
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if len(xs) <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {_shape_str(xs)}")
    if xs[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {xs[1]} channels and {groups} "
                           "groups.")
    return (groups,)


def _shuffle(x, groups):
    n, c = x.shape[:2]
    y = x.reshape((n, groups, c // groups) + x.shape[2:])
    return jnp.swapaxes(y, 1, 2).reshape(x.shape)


@defop("channel_shuffle", promote=_shuffle_rule, grad_fn="ChannelShuffleBackward0", method=False,
       prep=_shuffle_prep, kernel="channel_shuffle", out=False)
def channel_shuffle(input, groups):
    """``F.channel_shuffle``: (N, C, *) with C = g * k channels reordered as the (k, g) transpose of (g, k)."""
    return _shuffle(input, groups)


_native_shuffle_grad = aten_no_derivative("native_channel_shuffle")


@defop("native_channel_shuffle", promote=_shuffle_rule, grad_fn=_NotImplementedNode.__name__, method=False,
       prep=_shuffle_prep, kernel="channel_shuffle", out=False, saves=())
def native_channel_shuffle(input, groups):
    """``torch.native_channel_shuffle``: ``channel_shuffle``'s values; no derivative (its backward raises)."""
    return _shuffle(_native_shuffle_grad(input) if jnp.issubdtype(input.dtype, jnp.inexact) else input, groups)


# ---- deprecated upsample aliases -------------------------------------------------------------------------------------
def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None) -> Tensor:
    """``F.upsample``: deprecated ``F.interpolate`` (with PyTorch's warning)."""
    from .resample import interpolate
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=_user_stacklevel())
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``F.upsample_nearest``: deprecated ``F.interpolate(mode="nearest")``."""
    from .resample import interpolate
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=_user_stacklevel())
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``F.upsample_bilinear``: deprecated ``F.interpolate(mode="bilinear", align_corners=True)``."""
    from .resample import interpolate
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=_user_stacklevel())
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- torch.* forms of the dropout family (ATen's signatures: ``train`` positional) ---------------------------------
def _t_dropout(name: str, feature: bool, alpha: bool, inplace: bool):
    def fn(input: Tensor, p: float, train: bool) -> Tensor:
        return _nn._dropout_impl(input, p, train, inplace, feature=feature, alpha=alpha)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, p, train)``."
    return fn


FUNCTIONS: dict = {"max_pool1d_with_indices": _t_max_pool1d_with_indices,
                   "adaptive_max_pool1d": _t_adaptive_max_pool1d, "rrelu": _t_rrelu, "rrelu_": rrelu_}
for _name, _feat, _alpha in (("dropout", False, False), ("feature_dropout", True, False),
                             ("alpha_dropout", False, True), ("feature_alpha_dropout", True, True)):
    FUNCTIONS[_name] = _t_dropout(_name, _feat, _alpha, False)
    FUNCTIONS[_name + "_"] = _t_dropout(_name + "_", _feat, _alpha, True)
del _name, _feat, _alpha
