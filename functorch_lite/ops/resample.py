"""Padding and interpolation ops (``F.pad``, ``F.interpolate``): one ``@defop`` each, index tables from the static
shapes, PyTorch's source-index formulas and error messages."""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from ._registry import defop
from .._tensor.views import shape_str as _shape_str
from .conv import adaptive_avg_pool2d

__all__: list = ["pad", "interpolate"]

# ---- padding -----------------------------------------------------------------------------------------------
_PAD_HELP = ("Supported combinations for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last "
             "dimension)\n  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: "
             "padding size = 6 (pads last 3 dimensions)")


def _pad_prep(targs, sargs):
    x = targs[0]
    p, mode, value = sargs
    p = tuple(int(e) for e in p)
    nd = len(x._shape)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if len(p) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(p) > 2 * nd:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(p)} and input of dimension {nd}")
    if mode == "constant":
        if any(x._shape[nd - 1 - j] + p[2 * j] + p[2 * j + 1] < 0 for j in range(len(p) // 2)):
            raise RuntimeError("narrow(): length must be non-negative.")
        return (p, mode, 0 if value is None else value)
    n = len(p) // 2
    if n not in (1, 2, 3) or nd not in (n + 1, n + 2):
        raise NotImplementedError(f"Padding size {len(p)} is not supported for {nd}D input tensor.\n{_PAD_HELP}")
    for j in range(n):
        dim = nd - 1 - j
        lo, hi = p[2 * j], p[2 * j + 1]
        if mode == "reflect" and (lo >= x._shape[dim] or hi >= x._shape[dim]):
            raise RuntimeError(f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                               f"{_shape_str(x._shape)}")
        if mode == "circular" and (lo > x._shape[dim] or hi > x._shape[dim]):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "circular" and x._shape[dim] + lo + hi <= 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    return (p, mode, None)


def _pad_rule(op, sig, sargs):
    dt = sig[0][1]
    mode = sargs[1]
    if mode in ("reflect", "replicate") and (dt is D.bool or dt in D.FLOAT8):
        kind = "reflection" if mode == "reflect" else "replication"
        raise no_kernel(f"{kind}_pad{len(sargs[0]) // 2}d", dt)
    return (None,), (dt,)


_PAD_NAMES = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0"}


def _pad_name(targs, sargs):
    mode = sargs[1]
    if mode == "constant":
        return "ConstantPadNdBackward0"
    if mode == "circular":
        return "CopySlices"
    return _PAD_NAMES[mode].format(len(sargs[0]) // 2)


def _fill(value, dt):
    if jnp.issubdtype(dt, jnp.bool_):
        return jnp.asarray(bool(value), dt)
    if jnp.issubdtype(dt, jnp.integer):
        return jnp.asarray(int(value), dt)
    return jnp.asarray(value, dt)


def _pad_autocast(sargs):
    """PyTorch's CPU autocast runs reflection (1-D/2-D) and replication pads in float32."""
    return {"cpu": "fp32"} if (sargs[1] == "reflect" and len(sargs[0]) in (2, 4)) or sargs[1] == "replicate" \
        else None


@defop(promote=_pad_rule, grad_fn=_pad_name, method=False, function=False, prep=_pad_prep, kernel="pad",
       autocast=_pad_autocast)
def pad(input, pad, mode="constant", value=None):
    """``F.pad``: ``pad`` lists (left, right) pairs starting from the last dimension; negative pads crop."""
    n = len(pad) // 2
    nd = input.ndim
    if mode == "constant":
        cfg = [(0, 0, 0)] * nd
        for j in range(n):
            cfg[nd - 1 - j] = (pad[2 * j], pad[2 * j + 1], 0)
        return lax.pad(input, _fill(value, input.dtype), cfg)
    x = input
    for j in range(n):
        ax = nd - 1 - j
        lo, hi = pad[2 * j], pad[2 * j + 1]
        size = x.shape[ax]
        if mode == "circular":  # PyTorch crops negative pads first, then wraps the remaining core
            x = lax.slice_in_dim(x, max(0, -lo), size - max(0, -hi), axis=ax)
            widths = [(0, 0)] * nd
            widths[ax] = (max(lo, 0), max(hi, 0))
            x = jnp.pad(x, widths, mode="wrap")
            continue
        ip = np.arange(size + lo + hi) - lo  # reflect / replicate: source index in the original input
        if mode == "reflect":
            ip = np.where(ip < 0, -ip, np.where(ip >= size, 2 * (size - 1) - ip, ip))
        x = jnp.take(x, jnp.asarray(np.clip(ip, 0, size - 1)), axis=ax, mode="clip")
    return x


# ---- interpolation -----------------------------------------------------------------------------------------
_UP_KERNELS = {("nearest", 1): "compute_indices_weights_nearest", ("nearest", 2): "upsample_nearest2d_channels_last",
               ("nearest-exact", 1): "compute_indices_weights_nearest",
               ("nearest-exact", 2): "upsample_nearest2d_channels_last",
               ("linear", 1): "compute_indices_weights_linear", ("bilinear", 2): "upsample_bilinear2d_channels_last"}
_UP_NAMES = {"nearest": "UpsampleNearest{}DBackward0", "nearest-exact": "UpsampleNearestExact{}DBackward0",
             "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0"}


def _up_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category < D.FLOAT or dt.is_complex or dt in D.FLOAT8:
        raise no_kernel(_UP_KERNELS[(sargs[0], len(sargs[1]))], dt)
    return (None,), (dt,)


def _scale(inp: int, out: int, align_corners: bool, scale, ftype):
    """PyTorch's area_pixel_compute_scale, in the kernel's opmath type."""
    if align_corners:
        return ftype((inp - 1) / (out - 1)) if out > 1 else ftype(0)
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(inp) / ftype(out)


def _nearest_idx(inp, out, scale, exact, ftype):
    dst = np.arange(out)
    if not exact and out == inp:
        return dst
    if not exact and out == 2 * inp:
        return dst >> 1
    s = _scale(inp, out, False, scale, ftype)
    src = np.floor((dst.astype(ftype) + ftype(0.5)) * s if exact else dst.astype(ftype) * s).astype(np.int64)
    return np.minimum(src, inp - 1)


def _linear_taps(inp, out, align_corners, scale, ftype):
    if inp == out:  # PyTorch's CPU kernel copies a dim whose size is unchanged, whatever the scale
        idx = np.arange(out)
        return idx, idx, np.ones(out, ftype), np.zeros(out, ftype)
    s = _scale(inp, out, align_corners, scale, ftype)
    dst = np.arange(out).astype(ftype)
    src = s * dst if align_corners else np.maximum(s * (dst + ftype(0.5)) - ftype(0.5), ftype(0))
    i0 = src.astype(np.int64)
    i1 = i0 + (i0 < inp - 1)
    l1 = (src - i0.astype(ftype)).astype(ftype)
    return i0, i1, ftype(1) - l1, l1


@defop("_upsample", promote=_up_rule, method=False, function=False, kernel="upsample", autocast={"cuda": "fp32"},
       grad_fn=lambda targs, sargs: _UP_NAMES[sargs[0]].format(len(sargs[1])))
def _upsample(input, mode, size, align_corners, scales):
    """Nearest / (bi)linear resampling of the trailing ``len(size)`` dims with PyTorch's source indices."""
    nsp = len(size)
    ftype = np.float64 if input.dtype == jnp.float64 else np.float32
    x = input
    for i in range(nsp):
        ax = input.ndim - nsp + i
        inp = input.shape[ax]
        sc = None if scales is None else scales[i]
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_idx(inp, size[i], sc, mode == "nearest-exact", ftype)
            x = jnp.take(x, jnp.asarray(idx), axis=ax, mode="clip")
        else:
            i0, i1, l0, l1 = _linear_taps(inp, size[i], align_corners, sc, ftype)
            bshape = [1] * input.ndim
            bshape[ax] = size[i]
            acc = D.opmath(input.dtype)
            xa = x.astype(acc)
            x = (jnp.take(xa, jnp.asarray(i0), axis=ax, mode="clip") * jnp.asarray(l0, acc).reshape(bshape)
                 + jnp.take(xa, jnp.asarray(i1), axis=ax, mode="clip") * jnp.asarray(l1, acc).reshape(bshape))
    return x.astype(input.dtype)


_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """``F.interpolate`` for modes nearest, nearest-exact, linear (3-D), bilinear (4-D) and area."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    spatial = list(input.shape[2:])
    given, what, fmt = (size, "output size of", "output size in (o1, o2, ...,oK)") if size is not None else \
        (scale_factor, "scale_factor of shape", "scale_factor in (s1, s2, ...,sK)")
    if isinstance(given, (list, tuple)) and len(given) != dim:
        first = "Input and output" if size is not None else "Input and scale_factor"
        raise ValueError(f"{first} must have the same number of spatial dimensions, but got input with spatial "
                         f"dimensions of {spatial} and {what} {given}. Please provide input tensor in (N, C, d1, "
                         f"d2, ...,dK) format and {fmt} format.")
    vals = tuple(given) if isinstance(given, (list, tuple)) else (given,) * dim
    if size is not None:
        out, scales = tuple(int(v) for v in vals), None
    else:
        scales = tuple(float(v) for v in vals)
        out = tuple(int(math.floor(float(n) * sc)) for n, sc in zip(spatial, scales))
        scales = None if recompute_scale_factor else scales
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if antialias:
        raise NotImplementedError("functorch_lite: interpolate(antialias=True) is not supported")
    if mode == "area" and input.dim() in (3, 4):
        return adaptive_avg_pool2d(input, out) if input.dim() == 4 else \
            adaptive_avg_pool2d(input.unsqueeze(-2), (1, out[0])).squeeze(-2)
    supported = {3: ("nearest", "nearest-exact", "linear"), 4: ("nearest", "nearest-exact", "bilinear")}
    if input.dim() in (3, 4, 5) and mode in _MODES:
        if mode not in supported.get(input.dim(), ()):
            if mode in ("linear", "bilinear", "trilinear"):
                need = {"linear": 3, "bilinear": 4, "trilinear": 5}[mode]
                raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D input")
            raise NotImplementedError(f"functorch_lite: interpolate mode {mode!r} on {input.dim()}D input is not "
                                      "supported")
    else:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if any(o <= 0 for o in out) or any(n <= 0 for n in spatial):
        if dim == 2:
            raise RuntimeError(f"Input and output sizes should be greater than 0, but got input (H: {spatial[0]}, "
                               f"W: {spatial[1]}) output (H: {out[0]}, W: {out[1]})")
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input (W: {spatial[0]}) and "
                           f"output (W: {out[0]})")
    return _upsample(input, mode, out, bool(align_corners) if mode in ("linear", "bilinear") else None, scales)
