"""More ``torch.nn.functional`` ops: pixel (un)shuffle, unfold / fold (im2col / col2im), threshold, the shrink
activations, pdist, the margin losses with their own PyTorch kernels, and the composites PyTorch writes from
other ops (instance_norm, softmin, the embedding / ranking / Poisson / Gaussian losses, local_response_norm,
lp_pool, gumbel_softmax, conv_transpose1d/3d).

Ops with their own backward node in PyTorch (``PixelShuffleBackward0``, ``Im2ColBackward0``, ``PdistBackward0``...)
are one ``@defop`` each; composites call facade ops, so their grad_fn is the last inner op's, as in PyTorch.

Example::

    >>> import functorch_lite as torch
    >>> torch.nn.functional.pixel_shuffle(torch.arange(8.).reshape(1, 4, 1, 2), 2).shape
    torch.Size([1, 1, 2, 4])
"""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import dtypes as D
from .._symbolic import sym_float
from . import _deferred, grad_overrides as _go, norm as _norm
from .._promotion import no_kernel
from .._tensor.tensor import Tensor, _wrap_dim
from .._tensor.views import shape_str as _shape_str
from ._dispatch import _type_name, autocast_fp32, write_out
from ._registry import OPS, defop
from .losses import _legacy
from .norm import _float_rule
from .nn_ops import _no_grad_arg, reduction_name
from .._warn import user_stacklevel as _user_stacklevel
from .fft_ops import float_arg

__all__: list = ["pixel_shuffle", "pixel_unshuffle", "unfold", "fold", "threshold", "threshold_", "relu_",
                 "hardtanh_", "softshrink", "hardshrink", "tanhshrink", "softmin", "pdist", "soft_margin_loss",
                 "multi_margin_loss", "multilabel_margin_loss", "instance_norm", "margin_ranking_loss",
                 "hinge_embedding_loss", "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss",
                 "triplet_margin_loss", "triplet_margin_with_distance_loss", "multilabel_soft_margin_loss",
                 "local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d", "gumbel_softmax",
                 "conv_transpose1d", "conv_transpose3d"]

def _red_string(size_average, reduce, reduction, strict: bool = False) -> str:
    """The reduction after the legacy arguments (``_Reduction.get_enum``'s checks; ``strict``: the Python-side
    check of poisson_nll_loss, which refuses 'elementwise_mean')."""
    reduction = _legacy(size_average, reduce, reduction)
    if strict and reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction_name(reduction)


def _red_enum(reduction) -> str:
    """A reduction given as ATen's int enum (``torch.margin_ranking_loss(..., 1)``) or a string."""
    return reduction_name(reduction, enum=True)


def _apply_reduction(t: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return t.mean()
    if reduction == "sum":
        return t.sum()
    return t


def _reduce_arr(x, reduction):
    if reduction == "mean":
        return jnp.mean(x)
    if reduction == "sum":
        return jnp.sum(x)
    return x


# ---- pixel_shuffle / pixel_unshuffle ----------------------------------------------------------------------
def _ps_check(name: str, what: str):
    def prep(targs, sargs):
        xs = targs[0]._shape
        r = int(sargs[0])
        if len(xs) < 3:
            raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {len(xs)} "
                               "dimension(s)")
        if r <= 0:
            raise RuntimeError(f"{name} expects a positive {what}, but got {r}")
        if name == "pixel_shuffle" and xs[-3] % (r * r):
            raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                               f"of upscale_factor, but input.size(-3)={xs[-3]} is not divisible by {r * r}")
        if name == "pixel_unshuffle":
            for d, nm in ((-2, "height"), (-1, "width")):
                if xs[d] % r:
                    raise RuntimeError(f"pixel_unshuffle expects {nm} to be divisible by downscale_factor, but "
                                       f"input.size({d})={xs[d]} is not divisible by {r}")
        return (r,)
    return prep


@defop(kernel="pixel_shuffle", grad_fn="PixelShuffleBackward0", method=False, prep=_ps_check("pixel_shuffle",
                                                                                              "upscale_factor"),
       out=False)
def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    *b, c, h, w = input.shape
    nb = len(b)
    x = input.reshape(tuple(b) + (c // (r * r), r, r, h, w))
    x = jnp.transpose(x, tuple(range(nb)) + (nb, nb + 3, nb + 1, nb + 4, nb + 2))
    return x.reshape(tuple(b) + (c // (r * r), h * r, w * r))


@defop(out=False, kernel="pixel_unshuffle", grad_fn="PixelUnshuffleBackward0", method=False,
       prep=_ps_check("pixel_unshuffle", "downscale_factor"))
def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    *b, c, h, w = input.shape
    nb = len(b)
    x = input.reshape(tuple(b) + (c, h // r, r, w // r, r))
    x = jnp.transpose(x, tuple(range(nb)) + (nb, nb + 2, nb + 4, nb + 1, nb + 3))
    return x.reshape(tuple(b) + (c * r * r, h // r, w // r))


# ---- unfold (im2col) / fold (col2im) -------------------------------------------------------------------------
def _pair_arg(v, what: str) -> tuple:
    t = tuple(int(e) for e in v) if isinstance(v, (list, tuple)) else (int(v),) * 2
    if len(t) != 2:
        raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(t)}")
    return t


def _blocks_args(kernel_size, dilation, padding, stride):
    k, d, p, s = (_pair_arg(v, w) for v, w in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                               (padding, "padding"), (stride, "stride")))
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: "
                           f"{k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: "
                           f"{d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    return k, d, p, s


def _n_blocks(size, k, d, p, s):
    return tuple((size[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2))


def _fold_rule(kernel: str):
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt is not D.bool and (dt.category < D.FLOAT or dt in D.FLOAT8 or dt is D.complex32):
            raise no_kernel(kernel, dt)
        return (None,), (dt,)
    return rule


def _im2col_prep(targs, sargs):
    xs = targs[0]._shape
    k, d, p, s = _blocks_args(*sargs)
    nd = len(xs)
    _wrap_dim(1, nd), _wrap_dim(2, nd)  # (torch's im2col_shape_check reads sizes 1 and 2 first: IndexError below 3-D)
    if not (nd == 3 and all(xs) or nd == 4 and all(xs[1:])):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_shape_str(xs)}")
    out = _n_blocks(xs[-2:], k, d, p, s)
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({xs[-2]}, {xs[-1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({out[0]}, {out[1]}), but its components must be at least one.")
    return (k, d, p, s)


@defop("im2col", promote=_fold_rule("im2col_out_cpu"), grad_fn="Im2ColBackward0", method=False, function=False,
       prep=_im2col_prep, kernel="im2col_out_cpu")
def _im2col(input, kernel_size, dilation, padding, stride):
    """(N, C, H, W) -> (N, C kh kw, L): every sliding block as a column (channel-major, then kernel row, col)."""
    x = input if input.ndim == 4 else input[None]
    n, c, h, w = x.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    oh, ow = _n_blocks((h, w), kernel_size, dilation, padding, stride)
    xp = jnp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    cols = [lax.slice(xp, (0, 0, i * dh, j * dw), (n, c, i * dh + sh * (oh - 1) + 1, j * dw + sw * (ow - 1) + 1),
                      (1, 1, sh, sw)) for i in range(kh) for j in range(kw)]
    out = jnp.stack(cols, axis=2).reshape((n, c * kh * kw, oh * ow))
    return out if input.ndim == 4 else out[0]


def _col2im_prep(targs, sargs):
    xs = targs[0]._shape
    osz = _pair_arg(sargs[0], "output_size")
    k, d, p, s = _blocks_args(*sargs[1:])
    if len(xs) not in (2, 3) or any(e == 0 for e in xs[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_shape_str(xs)}")
    if xs[-2] % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={xs[-2]} and kernel_size=({k[0]}, {k[1]}).")
    out = _n_blocks(osz, k, d, p, s)
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(f"Given output_size=({osz[0]}, {osz[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, "
                           f"{d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), calculated shape of the array "
                           f"of sliding blocks as ({out[0]}, {out[1]}), which is too small (non-positive)")
    if out[0] * out[1] != xs[-1]:
        raise RuntimeError(f"Given output_size=({osz[0]}, {osz[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, "
                           f"{d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks {out[0]} * {out[1]} = "
                           f"{out[0] * out[1]}, but got input.size(2)={xs[-1]}.")
    return (osz, k, d, p, s)


@defop("col2im", promote=_fold_rule("col2im_out_cpu"), grad_fn="Col2ImBackward0", method=False, function=False,
       prep=_col2im_prep, kernel="col2im_out_cpu")
def _col2im(input, output_size, kernel_size, dilation, padding, stride):
    """(N, C kh kw, L) -> (N, C, H, W): sum the sliding blocks back into place (the adjoint of im2col)."""
    x = input if input.ndim == 3 else input[None]
    if x.dtype == jnp.bool_:  # PyTorch's bool kernel sums as logical or
        x = x.astype(jnp.int32)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    H, W = output_size
    oh, ow = _n_blocks(output_size, kernel_size, dilation, padding, stride)
    n, c = x.shape[0], x.shape[1] // (kh * kw)
    blocks = x.reshape((n, c, kh, kw, oh, ow))
    out = jnp.zeros((n, c, H + 2 * ph, W + 2 * pw), x.dtype)
    for i in range(kh):
        for j in range(kw):
            out = out.at[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw].add(
                blocks[:, :, i, j])
    out = out[:, :, ph:ph + H, pw:pw + W]
    if input.dtype == jnp.bool_:
        out = out > 0
    return out if input.ndim == 3 else out[0]


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """``F.unfold``: sliding local blocks of (N, C, H, W) as columns (N, C*kh*kw, L)."""
    return _im2col(input, kernel_size, dilation, padding, stride)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """``F.fold``: sum columns (N, C*kh*kw, L) back into an (N, C, *output_size) image."""
    return _col2im(input, output_size, kernel_size, dilation, padding, stride)


# ---- threshold / shrink activations ----------------------------------------------------------------------------
def _threshold_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt is D.bool or dt.category > D.FLOAT or dt in D.FLOAT8:
        raise no_kernel("threshold_cpu", dt)
    return (None,), (dt,)


@defop("_threshold", promote=_threshold_rule, method=False, function=False, inplace=True, saves=(0,),
       grad_fn=lambda targs, sargs: "ThresholdBackward1" if sargs[2] else "ThresholdBackward0", kernel="threshold_cpu")
def _threshold(input, threshold, value, inplace_form):
    """``value`` where ``x <= threshold``, else ``x`` (integers: both bounds truncated to the dtype)."""
    if jnp.issubdtype(input.dtype, jnp.integer):
        th, v = jnp.asarray(int(threshold), input.dtype), jnp.asarray(int(value), input.dtype)
    else:
        th, v = jnp.asarray(threshold, input.dtype), jnp.asarray(value, input.dtype)
    return jnp.where(input <= th, v, input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``F.threshold`` / ``torch.threshold``: ``value`` where ``input <= threshold``."""
    if inplace:
        return threshold_(input, threshold, value)
    return _threshold(input, sym_float(threshold), sym_float(value), False)


def _t_threshold(input: Tensor, threshold: float, value: float, *, out=None) -> Tensor:
    """``torch.threshold``: ``F.threshold`` without ``inplace``, with ``out=``."""
    r = _threshold(input, sym_float(threshold), sym_float(value), False)
    return r if out is None else write_out(out, r, "threshold", srcs=(input,))


_t_threshold.__name__ = "threshold"
threshold.__name__ = threshold.__qualname__ = "_threshold"  # (torch's F.threshold: its Python errors name it so)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``F.threshold_``: in place (ThresholdBackward1)."""
    return OPS["_threshold"].fn_inplace(input, sym_float(threshold), sym_float(value), True)


def relu_(input: Tensor) -> Tensor:
    """``F.relu_``: in place."""
    return input.relu_()


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``F.hardtanh_``: in place."""
    from .norm import hardtanh
    return hardtanh(input, min_val, max_val, True)


_FMAX = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308, "float16": 65504.0,
         "bfloat16": 3.3895313892515355e38}


def _softshrink_prep(targs, sargs):
    lambd = float(sargs[0])
    dt = targs[0].dtype
    if dt.name in _FMAX and not 0 <= lambd <= _FMAX[dt.name]:
        raise RuntimeError(f"lambda must be in range [0, {_FMAX[dt.name]:g}] for input dtype {dt.short}, but found "
                           f"{lambd:g}")
    return (lambd,)


@defop("_softshrink", promote=_float_rule("softshrink_check"), grad_fn="SoftshrinkBackward0", method=False,
       function=False, prep=_softshrink_prep, saves=(0,), kernel="softshrink_check")
def _softshrink(input, lambd):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    lam = jnp.asarray(lambd, input.dtype)
    # (NaN stays NaN, its gradient 1: torch tests |x| <= lambd for the zero branch)
    return jnp.where(input > lam, input - lam, jnp.where(~(input >= -lam), input + lam, jnp.zeros_like(input)))


def softshrink(input: Tensor, lambd: float = 0.5, *, out: Tensor | None = None) -> Tensor:
    """``F.softshrink`` (``out=``: torch's ``softshrink.out``)."""
    r = _softshrink(input, lambd)
    return r if out is None else write_out(out, r, "softshrink", srcs=(input,))


@defop(promote=_float_rule("hardshrink_cpu"), grad_fn="HardshrinkBackward0", saves=(0,), kernel="hardshrink_cpu")
def hardshrink(input, lambd=0.5):
    """``F.hardshrink`` / ``torch.hardshrink``: ``x`` where ``|x| > lambd``, else 0."""
    lam = jnp.asarray(float(lambd), input.dtype)
    return jnp.where((input >= -lam) & (input <= lam), jnp.zeros_like(input), input)


def tanhshrink(input: Tensor) -> Tensor:
    """``F.tanhshrink``: ``x - tanh(x)``."""
    return input - input.tanh()


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``F.softmin``: ``softmax(-x)`` along ``dim`` (implicit dim warns, as PyTorch)."""
    if dim is None:
        from ..nn.functional import _get_softmax_dim
        dim = _get_softmax_dim("softmin", input.dim())
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


# ---- pdist -------------------------------------------------------------------------------------------------
def _pdist_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category != D.FLOAT:  # (isFloatingType: complex too)
        raise RuntimeError("pdist only supports floating-point dtypes")
    if dt in D.FLOAT8 or dt in (D.float16, D.bfloat16):
        raise no_kernel("pdist", dt)
    return (None,), (dt,)


def _pdist_prep(targs, sargs):
    xs = targs[0]._shape
    if len(xs) != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {len(xs)}D")
    p = float_arg("pdist", "p", sargs[0])
    if not p >= 0:  # (torch's ``p >= 0``: NaN is refused too)
        raise RuntimeError("pdist only supports non-negative p values")
    return (p,)


@defop(out=False, promote=_pdist_rule, grad_fn="PdistBackward0", method=False, prep=_pdist_prep, kernel="pdist")
def pdist(input, p=2.0):
    """``torch.pdist``: the p-norm distance of every row pair ``i < j`` (row-major upper triangle; its backward,
    torch's _pdist_backward, has no derivative)."""
    return _go.once_differentiable(lambda x: _pdist(x, p), "the derivative for '_pdist_backward' is not "
                                   "implemented.")(input)


def _pdist(input, p):
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    diff = input[i] - input[j]
    a = _go.abs(diff)  # (no gradient through |0|)
    if p == 0:
        return jnp.sum((diff != 0).astype(input.dtype), axis=-1)
    if p == math.inf:  # (torch's backward: the full gradient to every coordinate at the maximum, ties too)
        c = jax.lax.stop_gradient(a)
        m = jnp.max(c, axis=-1, keepdims=True)
        return (m + jnp.sum(jnp.where(c == m, a - c, 0), axis=-1, keepdims=True))[..., 0]
    if p == 1:
        return jnp.sum(a, axis=-1)
    return _go.pnorm(a, p, -1)


# ---- soft_margin_loss / multi_margin_loss / multilabel_margin_loss -----------------------------------------------
def _soft_margin_rule(op, sig, sargs):
    a = sig[0][1]
    if a is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    if a in D.FLOAT8:
        raise no_kernel("neg_cpu", a)
    if a.category < D.FLOAT:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {a.short}")
    return (None, a), (a,)


def _red_prep(pos: int):
    def prep(targs, sargs):
        return sargs[:pos] + (_red_enum(sargs[pos]),) + sargs[pos + 1:]
    return prep


@defop("soft_margin_loss", promote=_soft_margin_rule, grad_fn="SoftMarginLossBackward0", tensors=2, method=False,
       function=False, prep=_red_prep(0), broadcast=True, kernel="neg_cpu", autocast="fp32")
def _soft_margin_loss(input, target, reduction="mean"):
    """``log(1 + exp(-y x))`` (PyTorch's kernel: ``log1p(exp(-x * y))``), then the reduction."""
    return _reduce_arr(jnp.log1p(jnp.exp(-input * lax.stop_gradient(target))), reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``F.soft_margin_loss``: two-class logistic loss with targets in {1, -1}."""
    reduction = _red_string(size_average, reduce, reduction)
    _no_grad_arg("soft_margin_loss", target)
    return _soft_margin_loss(input, target, reduction)


def _margin_rule(kernel: str):
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt not in (D.float32, D.float64):
            raise no_kernel(kernel, dt)
        if sig[1][1] is not D.int64:
            raise RuntimeError(f"expected scalar type Long but found {sig[1][1].short}")
        # (class weights of another dtype: _mm_check raises, after the shape checks, as the kernel)
        return (None, None) + ((dt,) if len(sig) > 2 and sig[2] is not None else (None,) * (len(sig) - 2)), (dt,)
    return rule


def _host_int(t: Tensor):
    arr = t._array
    if isinstance(arr, jax.core.Tracer):
        return None
    return np.asarray(arr)


def _mm_check(targs, sargs):
    x, t = targs[0], targs[1]
    xs = x._shape
    if len(xs) > 2 or (len(xs) >= 1 and xs[-1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_shape_str(xs)}")
    n = xs[0] if len(xs) == 2 else 1
    if len(t._shape) > 1 or t.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {_shape_str(t._shape)}. Input "
                           f"has shape {_shape_str(xs)}.")
    w = targs[2] if len(targs) > 2 else None
    if w is not None and w.dtype is not x.dtype:  # (the kernel reads the weights as the input's scalar type)
        raise RuntimeError(f"expected scalar type {x.dtype.short} but found {w.dtype.short}")
    h = _host_int(t)
    c = xs[-1] if xs else 1
    if h is None:  # (inside a compiled function: the program checks it)
        _deferred.check((t._array < 0) | (t._array >= c), t._array, lambda v, p: RuntimeError("target out of range"))
    elif ((h < 0) | (h >= c)).any():
        raise RuntimeError("target out of range")


@defop("multi_margin_loss", promote=_margin_rule("multi_margin_loss_cpu_kernel"), grad_fn="MultiMarginLossBackward0",
       tensors=3, method=False, function=False, check=_mm_check, prep=_red_prep(2),
       kernel="multi_margin_loss_cpu_kernel", autocast="fp32")
def _multi_margin_loss(input, target, weight=None, p=1, margin=1.0, reduction="mean"):
    """``sum_{i != y} max(0, margin - x[y] + x[i])^p * w[y] / C`` per sample."""
    x = input if input.ndim == 2 else input.reshape((1, -1))
    y = target.reshape((-1,))
    c = x.shape[1]
    xy = jnp.take_along_axis(x, y[:, None], axis=1)
    z = jnp.asarray(margin, x.dtype) - xy + x
    keep = (z > 0) & (jnp.arange(c)[None, :] != y[:, None])
    z = jnp.where(keep, z, jnp.zeros_like(z))
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y][:, None]
    loss = jnp.sum(z, axis=1) / jnp.asarray(c, x.dtype)
    if reduction == "none":
        return loss.reshape(target.shape) if input.ndim < 2 else loss
    return _reduce_arr(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``F.multi_margin_loss``: multi-class hinge loss (``p`` 1 or 2) with int64 class targets."""
    reduction = _red_string(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _no_grad_arg("multi_margin_loss", weight, "weight")
    if weight is not None and input.dim() <= 2 and weight.numel() != (input.shape[-1] if input.dim() else 1):
        raise RuntimeError(f"inconsistent weight size, expected {input.shape[-1] if input.dim() else 1} but got "
                           f"{_shape_str(weight.shape)}")
    return _multi_margin_loss(input, target, weight, int(p), float(margin), reduction)


def _mlm_check(targs, sargs):
    x, t = targs
    xs, ts = x._shape, t._shape
    if len(xs) > 2 or (len(xs) >= 1 and xs[-1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_shape_str(xs)}")
    if (len(xs) <= 1 and len(ts) > 1) or (len(xs) == 2 and tuple(ts) != tuple(xs)) or \
            (len(xs) <= 1 and t.numel() != (xs[0] if xs else 1)):
        raise RuntimeError(f"inconsistent target size: {_shape_str(ts)} for input of size: {_shape_str(xs)}")
    h = _host_int(t)
    c = xs[-1] if xs else 1
    if h is None:  # (inside a compiled function: the program checks it)
        _deferred.check((t._array < -1) | (t._array >= c), t._array,
                        lambda v, p: RuntimeError("argument #2 'target' is out of range"))
    elif ((h < -1) | (h >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")


@defop("multilabel_margin_loss", promote=_margin_rule("multilabel_margin_loss_forward_out_frame"),
       grad_fn="MultilabelMarginLossBackward0", tensors=2, method=False, function=False, check=_mlm_check,
       prep=_red_prep(0), kernel="multilabel_margin_loss_forward_out_frame", autocast="fp32")
def _multilabel_margin_loss(input, target, reduction="mean"):
    """Targets are class indices up to the first -1; ``sum_{j target, i not} max(0, 1 - (x[j] - x[i])) / C``."""
    x = input if input.ndim == 2 else input.reshape((1, -1))
    t = target.reshape(x.shape)
    c = x.shape[1]
    valid = jnp.cumprod((t >= 0).astype(jnp.int32), axis=1).astype(bool)
    ts = jnp.where(valid, t, 0)
    is_target = jnp.any((ts[:, :, None] == jnp.arange(c)[None, None, :]) & valid[:, :, None], axis=1)
    xy = jnp.take_along_axis(x, ts, axis=1)
    z = jnp.asarray(1, x.dtype) - xy[:, :, None] + x[:, None, :]
    keep = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    loss = jnp.sum(jnp.where(keep, z, jnp.zeros_like(z)), axis=(1, 2)) / jnp.asarray(c, x.dtype)
    if reduction == "none":
        return loss if input.ndim == 2 else loss.reshape(())
    return _reduce_arr(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """``F.multilabel_margin_loss``: multi-label hinge loss; each target row lists classes, ended by -1."""
    return _multilabel_margin_loss(input, target, _red_string(size_average, reduce, reduction))


# ---- composite losses (PyTorch writes them from other ops: their grad_fn is the last inner op's) -------------
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """``F.margin_ranking_loss``: ``max(0, -y (x1 - x2) + margin)``."""
    reduction = _red_string(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()!r}, input2: {input2.size()!r}, target: {target.size()!r} ")
    input1, input2, target = autocast_fp32(input1, input2, target)  # (on autocast's float32 list)
    # ATen's composite, margin a double: ``+ margin`` makes integer operands' result the default float dtype
    diff = input1 - input2
    return _apply_reduction((-target * diff + sym_float(margin)).clamp_min(0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """``F.hinge_embedding_loss``: ``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1``."""
    input, target = autocast_fp32(input, target)
    from .. import full_like, where, zeros_like
    reduction = _red_string(size_average, reduce, reduction)
    zeros = zeros_like(input)
    # ATen's ``margin - self`` is ``empty_like(self).fill_(margin).sub_(self)``: the input's dtype (an integer
    # one truncates the margin, one that does not fit raises), so integer inputs give integer losses
    margin_clamp = (full_like(input, margin) - input).clamp_min(0)
    output_margin = where(target != 1, margin_clamp, zeros)
    output_self = where(target != -1, input, zeros)
    return _apply_reduction(output_margin + output_self, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """``F.cosine_embedding_loss``: ``1 - cos`` where ``y == 1``, ``max(0, cos - margin)`` where ``y == -1``."""
    input1, input2, target = autocast_fp32(input1, input2, target)
    from .. import where, zeros_like
    reduction = _red_string(size_average, reduce, reduction)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if td == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"{td}D target tensor expects {want}D input tensors, but found inputs with sizes "
                           f"{_shape_str(input1.shape)} and {_shape_str(input2.shape)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(td)
    mag_square1 = (input1 * input1).sum(td) + eps
    mag_square2 = (input2 * input2).sum(td) + eps
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zeros = zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    output = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _apply_reduction(output, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """``F.poisson_nll_loss``: ``exp(x) - y x`` (log input) or ``x - y log(x + eps)``; ``full`` adds Stirling's
    term where ``y > 1``."""
    input, target = autocast_fp32(input, target)
    reduction = _red_string(size_average, reduce, reduction, strict=True)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """``F.gaussian_nll_loss``: ``0.5 (log(max(var, eps)) + (x - y)^2 / max(var, eps))`` (+ const if ``full``)."""
    from .. import ones_like
    from ..autograd.grad_mode import no_grad
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif not isinstance(var, Tensor):
        raise TypeError(f"gaussian_nll_loss(): argument 'var' must be a Tensor or float, not {_type_name(var)}")
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and
                  sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


def _triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """``F.triplet_margin_loss``: ``max(d(a, p) - d(a, n) + margin, 0)`` with the pairwise p-norm distance."""
    anchor, positive, negative = autocast_fp32(anchor, positive, negative)
    from .distance import pairwise_distance
    reduction = _red_string(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = dist_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _apply_reduction((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *, distance_function=None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``F.triplet_margin_with_distance_loss``: the triplet loss with any distance (default pairwise_distance)."""
    from .distance import pairwise_distance
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    dist = distance_function if distance_function is not None else pairwise_distance
    dist_pos = dist(anchor, positive)
    dist_neg = dist(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(dist(positive, negative))
    return _apply_reduction((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """``F.multilabel_soft_margin_loss``: per-class logistic loss averaged over classes."""
    from .norm import logsigmoid
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction in ("mean", "sum"):
        return _apply_reduction(loss, reduction)
    raise ValueError(reduction + " is not valid")


# ---- instance_norm / local_response_norm / lp_pool -------------------------------------------------------------
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """``F.instance_norm``: batch norm of each (sample, channel) over its spatial positions (PyTorch's reshape to
    (1, N*C, ...)); running statistics, when given, are updated with the mean over the batch."""
    from ..autograd.grad_mode import no_grad
    from .norm import batch_norm
    if use_input_stats:
        s = input.size()
        prod = 1
        for e in s[2:]:
            prod *= e
        if prod == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {s!r}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    shape = input.shape
    b, c = shape[0], shape[1]
    x = input.contiguous().view(1, b * c, *shape[2:])
    w, bb, rm, rv = (None if t is None else t.repeat(b) for t in (weight, bias, running_mean, running_var))
    out = batch_norm(x, rm, rv, w, bb, use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(b, c).mean(0))
    return out.view(shape)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """``F.local_response_norm``: divide by ``(k + alpha * mean of x^2 over `size` neighbouring channels)^beta``."""
    from .conv import avg_pool2d, avg_pool3d
    from .resample import pad
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def _lp_pool(nd: int, input: Tensor, norm_type, kernel_size, stride, ceil_mode) -> Tensor:
    from . import conv as C
    from .. import relu as _relu
    avg = {1: C.avg_pool1d, 2: C.avg_pool2d, 3: C.avg_pool3d}[nd]
    mx = {1: C.max_pool1d, 2: C.max_pool2d, 3: C.max_pool3d}[nd]
    if isinstance(norm_type, (int, float)):
        if norm_type == math.inf:
            return mx(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -math.inf:
            return -mx(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    ks = kernel_size if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * nd
    if len(ks) == 1:
        ks = tuple(ks) * nd
    n = 1
    for e in ks:
        n *= e
    return (out.sign() * _relu(out.abs())).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``F.lp_pool1d``: ``(sum over the window of x^p)^(1/p)``."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``F.lp_pool2d``."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``F.lp_pool3d``."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# ---- gumbel_softmax ------------------------------------------------------------------------------------------------
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """``F.gumbel_softmax``: softmax of ``(logits + Gumbel noise) / tau``; ``hard`` returns the one-hot argmax
    with the soft sample's gradient (straight-through). Noise comes from the default generator."""
    from .. import random as _random, zeros_like
    from .nn_ops import _on_device_of
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=_user_stacklevel())
    key = _random.default_generator.next_key()
    jdt = logits._array.dtype
    e = jax.random.exponential(key, tuple(logits.shape), jnp.float32 if jdt in (jnp.float16, jnp.bfloat16) else jdt)
    g = Tensor._from_array(_on_device_of((-jnp.log(e)).astype(jdt), logits._array), logits.dtype, logits.device)
    y_soft = ((logits + g) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---- conv_transpose1d / conv_transpose3d ----------------------------------------------------------------------------
def _convt(name: str, nd: int, input, weight, bias, stride, padding, output_padding, groups, dilation):
    from .conv import _convnd, _tup
    op, st, dl = _tup(output_padding, nd), _tup(stride, nd), _tup(dilation, nd)
    if any(o >= s and o >= d for o, s, d in zip(op, st, dl)):
        if nd == 1:  # (PyTorch computes the 1-d case as a 2-d one of height 1)
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_height: 0 output_padding_width: {op[0]} stride_height: 1 "
                               f"stride_width: {st[0]} dilation_height: 1 dilation_width: {dl[0]}")
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding_depth: {op[0]} output_padding_height: {op[1]} output_padding_width: "
                           f"{op[2]} stride_depth: {st[0]} stride_height: {st[1]} stride_width: {st[2]} "
                           f"dilation_depth: {dl[0]} dilation_height: {dl[1]} dilation_width: {dl[2]}")
    return _convnd(name, nd, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """``F.conv_transpose1d`` over (N, C_in, L) or (C_in, L); weight is (C_in, C_out/groups, k)."""
    return _convt("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """``F.conv_transpose3d`` over (N, C_in, D, H, W) or (C_in, D, H, W)."""
    return _convt("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation)


# ---- the torch.* spellings (ATen's signatures: reductions as int enums) ---------------------------------------------
def _t_margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return margin_ranking_loss(input1, input2, target, margin, reduction=_red_enum(reduction))


def _t_hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return hinge_embedding_loss(input, target, margin, reduction=_red_enum(reduction))


def _t_cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return cosine_embedding_loss(input1, input2, target, margin, reduction=_red_enum(reduction))


def _t_poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_red_enum(reduction))


def _t_triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=1):
    return triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_red_enum(reduction))


def _t_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


# torch.* forms of the normalizations (ATen's signatures: batch_norm's tensors first, every argument required;
# ``cudnn_enable(d)`` means nothing here)
def _t_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return _norm.layer_norm(input, normalized_shape, weight, bias, eps)


def _t_group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return _norm.group_norm(input, num_groups, weight, bias, eps)


def _t_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _t_rms_norm(input, normalized_shape, weight=None, eps=None):
    return _norm.rms_norm(input, normalized_shape, weight, eps)


def _t_constant_pad_nd(input, pad, value=0):
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    from .resample import _pad  # (the op: ``value`` a Scalar, an int wrapping as torch's; F.pad's is a double)
    return _pad(input, pad, "constant", value)


for _f in (_t_layer_norm, _t_group_norm, _t_batch_norm, _t_rms_norm, _t_constant_pad_nd):
    _f.__name__ = _f.__qualname__ = _f.__name__[3:]
del _f
_t_margin_ranking_loss.__name__ = "margin_ranking_loss"
_t_hinge_embedding_loss.__name__ = "hinge_embedding_loss"
_t_cosine_embedding_loss.__name__ = "cosine_embedding_loss"
_t_poisson_nll_loss.__name__ = "poisson_nll_loss"
_t_triplet_margin_loss.__name__ = "triplet_margin_loss"
_t_instance_norm.__name__ = "instance_norm"

METHODS: dict = {}
FUNCTIONS: dict = {"threshold": _t_threshold, "threshold_": threshold_, "margin_ranking_loss": _t_margin_ranking_loss,
                   "hinge_embedding_loss": _t_hinge_embedding_loss, "cosine_embedding_loss": _t_cosine_embedding_loss,
                   "poisson_nll_loss": _t_poisson_nll_loss, "triplet_margin_loss": _t_triplet_margin_loss,
                   "instance_norm": _t_instance_norm, "conv_transpose1d": conv_transpose1d,
                   "conv_transpose3d": conv_transpose3d, "layer_norm": _t_layer_norm, "group_norm": _t_group_norm,
                   "batch_norm": _t_batch_norm, "rms_norm": _t_rms_norm, "constant_pad_nd": _t_constant_pad_nd}
