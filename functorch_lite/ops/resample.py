"""Padding and interpolation ops (``F.pad``, ``F.interpolate``): one ``@defop`` each, index tables from the static
shapes, PyTorch's source-index formulas and error messages."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from ._registry import _not_bool, defop
from .movement import int_list_arg
from .._tensor.views import shape_str as _shape_str
from .view_ops import NARROW_NEGATIVE_LENGTH
from .conv import adaptive_avg_pool2d, adaptive_avg_pool3d

__all__: list = ["pad", "interpolate"]

# ---- padding -----------------------------------------------------------------------------------------------
_PAD_HELP = ("Supported combinations for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last "
             "dimension)\n  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: "
             "padding size = 6 (pads last 3 dimensions)")


def _pad_prep(targs, sargs):
    x = targs[0]
    p, mode, value = sargs
    p = int_list_arg("pad", "pad", p, 2)
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
            raise RuntimeError(NARROW_NEGATIVE_LENGTH)
        value = 0 if value is None else value
        if any(e > 0 for e in p):  # (torch fills the padded output, then copies the input in: fill_'s checked value)
            shape = list(x._shape)
            for j in range(len(p) // 2):
                shape[nd - 1 - j] += p[2 * j] + p[2 * j + 1]
            D.check_fill(value, x.dtype, math.prod(shape))
        else:
            value = 0  # (nothing is filled: torch never converts the value, uint8 -1 included)
        return (p, mode, value)
    n = len(p) // 2
    if n not in (1, 2, 3) or nd not in (n + 1, n + 2):
        raise NotImplementedError(f"Padding size {len(p)} is not supported for {nd}D input tensor.\n{_PAD_HELP}")
    if mode in ("reflect", "replicate") and 0 in x._shape[nd - n - 1 if nd == n + 2 else 0:]:
        raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {_shape_str(x._shape)}")
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
        v = int(value)  # (a float: checked to fit by _pad_prep, truncated toward zero)
        if jnp.issubdtype(dt, jnp.unsignedinteger):  # (a negative int wraps, as torch's fill: uint8 -1 is 255)
            v %= 1 << (8 * jnp.dtype(dt).itemsize)
        return jnp.asarray(v, dt)
    if jnp.issubdtype(dt, jnp.complexfloating):
        return jnp.asarray(value, dt)
    # a real float: the number as torch's fill_ converts it (double -> float -> a 16- or 8-bit float; float8_e4m3fn
    # saturates), on the host without NumPy's overflow warning (a one-element float16 fill of 1e6 is inf)
    with np.errstate(over="ignore", invalid="ignore"):
        v = D.cast_array(np.asarray(value.real if isinstance(value, complex) else value, np.float64), D.float64,
                         D.from_numpy_dtype(dt), xp=np)
    return jnp.asarray(v, dt)


def _pad_autocast(sargs, targs=()):
    """PyTorch's CPU autocast runs reflection (1-D/2-D) and replication pads in float32."""
    return {"cpu": "fp32"} if (sargs[1] == "reflect" and len(sargs[0]) in (2, 4)) or sargs[1] == "replicate" \
        else None


# (float8: constant and circular pads copy; _pad_rule refuses the others)
@defop("pad", out=False, promote=_pad_rule, grad_fn=_pad_name, method=False, function=False, prep=_pad_prep,
       kernel="pad", autocast=_pad_autocast, float8=True)
def _pad(input, pad, mode="constant", value=None):
    """The pad op: ``pad`` lists (left, right) pairs starting from the last dimension; negative pads crop. ``value``
    a Scalar, as ``torch.constant_pad_nd`` takes it (an int fills as torch's fill_: uint8 -1 is 255)."""
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


def pad(input, pad, mode="constant", value=None):
    """``F.pad``: the pad op with torch's ``float? value``: a double, checked against the dtype as one (uint8 -1
    raises where ``constant_pad_nd``'s int Scalar wraps; int64 2**53 + 1 rounds; a complex is the parser's
    TypeError)."""
    if value is not None:
        from .fft_ops import float_arg  # (late: fft_ops imports this module)
        value = float_arg("pad", "value", value, 4)
    return _pad(input, pad, mode, value)


# ---- interpolation -----------------------------------------------------------------------------------------
_UP_KERNELS = {("nearest", 1): "compute_indices_weights_nearest", ("nearest", 2): "upsample_nearest2d_channels_last",
               ("nearest", 3): "compute_indices_weights_nearest",
               ("nearest-exact", 1): "compute_indices_weights_nearest",
               ("nearest-exact", 2): "upsample_nearest2d_channels_last",
               ("nearest-exact", 3): "compute_indices_weights_nearest",
               ("linear", 1): "compute_indices_weights_linear", ("bilinear", 2): "upsample_bilinear2d_channels_last",
               ("trilinear", 3): "compute_indices_weights_linear", ("bicubic", 2): "compute_indices_weights_cubic"}
_UP_NAMES = {"nearest": "UpsampleNearest{}DBackward0", "nearest-exact": "UpsampleNearestExact{}DBackward0",
             "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
             "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0"}


def _up_rule(op, sig, sargs):
    dt = sig[0][1]
    mode = sargs[0]
    if dt is D.uint8 and mode in ("nearest", "nearest-exact"):  # PyTorch's nearest kernels cover Byte
        return (None,), (dt,)
    if dt is D.uint8 and mode in ("bilinear", "bicubic"):  # PyTorch's separable int16 fixed-point kernels
        return (None,), (dt,)
    if dt.category < D.FLOAT or dt.is_complex or dt in D.FLOAT8:
        raise no_kernel(_UP_KERNELS[(mode, len(sargs[1]))], dt)
    return (None,), (dt,)


def _scale(inp: int, out: int, align_corners: bool, scale, ftype):
    """PyTorch's area_pixel_compute_scale, in the kernel's opmath type."""
    if align_corners:
        return ftype((inp - 1) / (out - 1)) if out > 1 else ftype(0)
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(inp) / ftype(out)


def _nearest_idx(inp, out, scale, exact, ftype, shortcuts):
    """Source indices of nearest(-exact); ``shortcuts``: PyTorch's 2-D nearest kernel (nearest_idx) copies a dim
    whose size is unchanged and halves for an exact doubling whatever the scale; its 1-D / 3-D kernels don't."""
    dst = np.arange(out)
    if shortcuts and not exact and out == inp:
        return dst
    if shortcuts and not exact and out == 2 * inp:
        return dst >> 1
    s = _scale(inp, out, False, scale, ftype)
    src = np.floor((dst.astype(ftype) + ftype(0.5)) * s if exact else dst.astype(ftype) * s).astype(np.int64)
    return np.minimum(src, inp - 1)


def _linear_taps(inp, out, align_corners, scale, ftype):
    if inp == out:  # PyTorch's CPU kernel copies a dim whose size is unchanged, whatever the scale
        idx = np.arange(out)
        return (idx, idx), (np.ones(out, ftype), np.zeros(out, ftype))
    s = _scale(inp, out, align_corners, scale, ftype)
    dst = np.arange(out).astype(ftype)
    src = s * dst if align_corners else np.maximum(s * (dst + ftype(0.5)) - ftype(0.5), ftype(0))
    i0 = src.astype(np.int64)
    i1 = i0 + (i0 < inp - 1)
    l1 = (src - i0.astype(ftype)).astype(ftype)
    return (i0, i1), (ftype(1) - l1, l1)


def _cubic_taps(inp, out, align_corners, scale, ftype):
    """PyTorch's compute_indices_weights_cubic: 4 taps at floor(src) - 1 .. + 2 (clamped to the border), weights
    from Keys' cubic convolution with A = -0.75; no same-size shortcut (a scale still resamples)."""
    s = _scale(inp, out, align_corners, scale, ftype)
    dst = np.arange(out).astype(ftype)
    src = s * dst if align_corners else s * (dst + ftype(0.5)) - ftype(0.5)
    i = np.minimum(np.floor(src).astype(np.int64), inp - 1)
    t = np.clip(src - i.astype(ftype), ftype(0), ftype(1)).astype(ftype)
    A = ftype(-0.75)

    def cc1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def cc2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    u = ftype(1) - t
    weights = tuple(w.astype(ftype) for w in (cc2(t + ftype(1)), cc1(t), cc1(u), cc2(u + ftype(1))))
    idxs = tuple(np.clip(i + j - 1, 0, inp - 1) for j in range(4))
    return idxs, weights


@jax.custom_jvp
def _copy_grad(x, y):
    """``y``'s value with ``x``'s derivative (same shape; ``y`` enters stop-gradient'd): where PyTorch's
    backward differentiates another function than its forward computes."""
    return y


@_copy_grad.defjvp
def _copy_grad_jvp(primals, tangents):
    return primals[1], tangents[0]


@defop("_upsample", promote=_up_rule, method=False, function=False, kernel="upsample", autocast={"cuda": "fp32"},
       grad_fn=lambda targs, sargs: _UP_NAMES[sargs[0]].format(len(sargs[1])))
def _upsample(input, mode, size, align_corners, scales):
    """Nearest / (bi/tri)linear / bicubic resampling of the trailing ``len(size)`` dims with PyTorch's source
    indices and weights, one separable pass per dim (uint8 bilinear / bicubic: :func:`_resample_u8`)."""
    nsp = len(size)
    if input.dtype == jnp.uint8 and mode not in ("nearest", "nearest-exact"):
        return _resample_u8(input, mode, size, align_corners, scales, False)
    ftype = np.float64 if input.dtype == jnp.float64 else np.float32
    x = input
    # the last dim first: PyTorch's kernel sums an outer dim's taps of the inner dims' sums (its Interpolate<n>
    # recursion), so each pass rounds as its does
    for i in reversed(range(nsp)):
        ax = input.ndim - nsp + i
        inp = input.shape[ax]
        sc = None if scales is None else scales[i]
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_idx(inp, size[i], sc, mode == "nearest-exact", ftype, nsp == 2)
            bidx = _nearest_idx(inp, size[i], sc, mode == "nearest-exact", ftype, True)
            y = jnp.take(x, jnp.asarray(idx), axis=ax, mode="clip")
            if not np.array_equal(idx, bidx):  # PyTorch's nearest backward always takes nearest_idx's shortcuts
                y = _copy_grad(jnp.take(x, jnp.asarray(bidx), axis=ax, mode="clip"), lax.stop_gradient(y))
            x = y
            continue
        taps = _cubic_taps if mode == "bicubic" else _linear_taps
        idxs, ws = taps(inp, size[i], align_corners, sc, ftype)
        bshape = [1] * input.ndim
        bshape[ax] = size[i]
        acc = D.opmath(input.dtype)
        xa = x.astype(acc)
        x = None
        for idx, w in zip(idxs, ws):
            # (bicubic's weights in the input's dtype, as PyTorch stores them: a half input's are rounded to half)
            wa = jnp.asarray(w, input.dtype if mode == "bicubic" else acc).astype(acc).reshape(bshape)
            term = jnp.take(xa, jnp.asarray(idx), axis=ax, mode="clip") * wa
            x = term if x is None else x + term
    x = x.astype(input.dtype)
    if mode == "bicubic" and all(input.shape[input.ndim - nsp + i] == size[i] for i in range(nsp)):
        # PyTorch's bicubic backward copies the gradient when no dim changes size, though its forward still
        # resamples with the given scale
        x = _copy_grad(input, lax.stop_gradient(x))
    return x


# ---- anti-aliased (separable, PIL-style) resampling: bilinear / bicubic / lanczos on 4-D input ----------------
def _aa_filter(mode, ftype, a=-0.5):
    """(interp_size, filter) of PyTorch's HelperInterp*::aa_filter; bicubic's ``a``: -0.5 (PIL's, antialias) or
    -0.75 (the plain bicubic mode's, used by the uint8 kernel without antialias)."""
    if mode == "bilinear":
        return 2, lambda x: np.maximum(ftype(0), ftype(1) - np.abs(x))
    if mode == "bicubic":
        a = ftype(a)

        def cubic(x):
            x = np.abs(x)
            c1 = ((a + 2) * x - (a + 3)) * x * x + 1
            c2 = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
            return np.where(x < 1, c1, np.where(x < 2, c2, ftype(0))).astype(ftype)
        return 4, cubic

    def lanczos(x):  # a = 3 window
        x = np.asarray(x, np.float64)
        r = np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
        return r.astype(ftype)
    return 6, lanczos


def _aa_taps(inp, out, align_corners, scale, ftype, mode):
    """PyTorch's _compute_indices_min_size_weights_aa for every output index: a filter stretched by the downscale
    factor, window [center - support, center + support) clipped to the input, normalised per row (summed in
    order, as the C++ loop). (first input index (out,), weights (out, max_size), the largest normalised weight)."""
    interp_size, filt = _aa_filter(mode, ftype)
    s = _scale(inp, out, align_corners, scale, ftype)
    support = ftype(interp_size * 0.5) * s if s >= 1.0 else ftype(interp_size * 0.5)
    invscale = ftype(1) / s if s >= 1.0 else ftype(1)
    max_size = int(math.ceil(support)) * 2 + 1
    xmins = np.zeros(out, np.int64)
    ws = np.zeros((out, max_size), ftype)
    wt_max = 0.0
    for i in range(out):
        center = s * (ftype(i) + ftype(0.5))
        xmin = max(int(center - support + ftype(0.5)), 0)
        xsize = min(max(min(int(center + support + ftype(0.5)), inp) - xmin, 0), max_size)
        xmins[i] = xmin
        if xsize == 0:
            continue
        w = filt((((np.arange(xsize) + xmin).astype(ftype) - center).astype(np.float64) + 0.5) * float(invscale))
        total = np.cumsum(w, dtype=ftype)[-1]
        if total != 0:
            w = (w / total).astype(ftype)
            wt_max = max(wt_max, float(w.max()))
        ws[i, :xsize] = w
    return xmins, ws, wt_max


def _aa_matrix(inp, out, align_corners, scale, ftype, mode):
    """(out, inp) weights of PyTorch's _compute_index_ranges_weights (antialias), from :func:`_aa_taps`."""
    xmins, ws, _ = _aa_taps(inp, out, align_corners, scale, ftype, mode)
    m = np.zeros((out, inp), ftype)
    for i in range(out):
        n = max(min(ws.shape[1], inp - xmins[i]), 0)
        m[i, xmins[i]:xmins[i] + n] = ws[i, :n]
    return m


def _interp_taps(inp, out, align_corners, scale, mode):
    """PyTorch's _compute_indices_min_size_weights (uint8 bilinear / bicubic without antialias), in double: the
    float kernels' interp_size taps around floor(source index), those beyond a border folded onto the border tap.
    (first input index (out,), weights (out, interp_size), the largest weight any accumulation reached)."""
    k, filt = _aa_filter(mode, np.float64, -0.75)
    s = float(_scale(inp, out, align_corners, scale, np.float64))
    dst = np.arange(out)
    src = s * dst if align_corners else s * (dst + 0.5) - 0.5
    if not align_corners and k == 2:
        src = np.where(src < 0, 0.0, src)
    idx = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), inp - 1)  # guard_index_and_lambda: floorf
    lam = np.minimum(np.maximum(src - idx, 0.0), 1.0)
    support = k // 2
    umin = idx - support + 1
    lo = np.maximum(umin, 0)
    size = np.clip(np.minimum(idx + support + 1, inp) - lo, 0, k)
    ws = np.zeros((out, k))
    wi = np.zeros(out, np.int64)
    wt_max = 0.0
    for j in range(k):
        u = umin + j
        wi = np.where(u <= 0, 0, np.where(u >= inp - 1, size - 1, wi))
        ws[dst, wi] += filt(np.float64(j + 1 - support) - lam)
        wt_max = max(wt_max, float(ws[dst, wi].max()))
        wi = wi + 1
    return lo, ws, wt_max


def _int16_weights(ws, wt_max):
    """PyTorch's _compute_index_ranges_int16_weights: the precision p (the largest, up to 22, keeping
    wt_max * 2**(p+1) below 2**15) and the weights * 2**p rounded half away from zero."""
    prec = 0
    while prec < 22 and int(0.5 + wt_max * (1 << (prec + 1))) < (1 << 15):
        prec += 1
    v = ws * float(1 << prec)
    return np.trunc(np.where(v < 0, v - 0.5, v + 0.5)).astype(np.int32), prec


def _resample_u8(x, mode, size, align_corners, scales, antialias):
    """uint8 bilinear / bicubic (/ lanczos with antialias) as PyTorch's separable CPU kernel: the last dim first,
    then the others, skipping a dim whose size is unchanged; each pass sums uint8 * int16 weights in int32 from
    2**(p-1), shifts right by p and clamps to [0, 255]."""
    nsp = len(size)
    for i in reversed(range(nsp)):
        ax = x.ndim - nsp + i
        inp = x.shape[ax]
        if inp == size[i]:
            continue
        sc = None if scales is None else scales[i]
        if antialias:
            lo, ws, wt_max = _aa_taps(inp, size[i], align_corners, sc, np.float64, mode)
        else:
            lo, ws, wt_max = _interp_taps(inp, size[i], align_corners, sc, mode)
        w, prec = _int16_weights(ws, wt_max)
        k = w.shape[1]
        idx = np.minimum(lo[:, None] + np.arange(k), inp - 1).reshape(-1)
        g = jnp.take(x, jnp.asarray(idx), axis=ax, mode="clip").astype(jnp.int32)
        g = g.reshape(x.shape[:ax] + (size[i], k) + x.shape[ax + 1:])
        wshape = [1] * (x.ndim + 1)
        wshape[ax:ax + 2] = [size[i], k]
        acc = jnp.sum(g * jnp.asarray(w).reshape(wshape), axis=ax + 1) + (1 << (prec - 1))
        x = jnp.clip(jnp.right_shift(acc, prec), 0, 255).astype(jnp.uint8)
    return x


_AA_NAMES = {"bilinear": "UpsampleBilinear2DAaBackward0", "bicubic": "UpsampleBicubic2DAaBackward0",
             "lanczos": "UpsampleLanczos2DAaBackward0"}


def _aa_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt is D.uint8:  # PyTorch's separable int16 fixed-point kernel
        return (None,), (dt,)
    if dt not in (D.float32, D.float64):
        raise no_kernel("compute_index_ranges_weights", dt)
    return (None,), (dt,)


@defop("_upsample_aa", promote=_aa_rule, method=False, function=False, kernel="upsample_aa",
       autocast={"cuda": "fp32"}, grad_fn=lambda targs, sargs: _AA_NAMES[sargs[0]])
def _upsample_aa(input, mode, size, align_corners, scales):
    """Anti-aliased resampling of the last two dims: width first, then height, skipping a dim whose size is
    unchanged (as PyTorch's separable kernel); each pass is a weight-matrix product (uint8: PyTorch's fixed-point
    kernel, :func:`_resample_u8`)."""
    if input.dtype == jnp.uint8:
        return _resample_u8(input, mode, size, align_corners, scales, True)
    ftype = np.float64 if input.dtype == jnp.float64 else np.float32
    x = input
    for i in (1, 0):
        ax = input.ndim - 2 + i
        sc = None if scales is None else scales[i]
        m = _aa_matrix(input.shape[ax], size[i], align_corners, sc, ftype, mode)
        if input.shape[ax] == size[i] and np.array_equal(m, np.eye(size[i], dtype=ftype)):
            continue
        r = jnp.moveaxis(jnp.tensordot(x, jnp.asarray(m, input.dtype), axes=((ax,), (1,)),
                                       precision=lax.Precision.HIGHEST), -1, ax)
        # an unchanged size is a copy in PyTorch's forward, but its backward still applies the scale's weights
        x = _copy_grad(r, lax.stop_gradient(x)) if input.shape[ax] == size[i] else r
    return x


_NEEDS = {("linear", 4): 3, ("linear", 5): 3, ("bilinear", 3): 4, ("bilinear", 5): 4, ("trilinear", 3): 5,
          ("trilinear", 4): 5}


def _is_integer(v) -> bool:
    """``F.interpolate``'s ``_is_integer``: an int (bool included), a NumPy integer, a non-floating tensor."""
    return isinstance(v, (int, np.integer)) or isinstance(v, Tensor) and not v.is_floating_point()


def _upsample_arg_error(mode, dim, antialias, is_size, given) -> TypeError:
    """The argument parser's TypeError of the ``upsample_*`` kernel ``interpolate`` calls with ``given`` (a list or
    tuple holding a tensor it refuses) as its output size or its scale factors."""
    nd = f"{dim}d"
    linear = mode not in ("nearest", "nearest-exact")
    if mode == "nearest":
        name = f"upsample_nearest{nd}"
    elif mode == "nearest-exact":
        name = f"_upsample_nearest_exact{nd}"
    else:
        name = f"_upsample_{mode}{nd}_aa" if antialias else f"upsample_{mode}{nd}"
    kind = type(given).__name__
    items = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in given)
    shown = f"{kind} of [{items}]" if kind == "list" else f"{kind} of ({items})"
    args = (kind, "NoneType") if is_size else ("NoneType", kind)
    marks = (f"!{shown}!", "!NoneType!") if is_size else ("!NoneType!", f"!{shown}!")
    ac = ", bool align_corners" if linear else ""
    got = ", bool" if linear else ""
    scales = {1: "float scales = None", 2: "float scales_h = None, float scales_w = None",
              3: "float scales_d = None, float scales_h = None, float scales_w = None"}[dim]
    return TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {args[0]}{got}, "
                     f"{args[1]}), but expected one of:\n"
                     f" * (Tensor input, tuple of ints output_size{ac}, tuple of floats scale_factors)\n"
                     f"      didn't match because some of the arguments have invalid types: (Tensor, {marks[0]}{got}, "
                     f"{marks[1]})\n"
                     f" * (Tensor input, tuple of ints output_size{ac}, {scales}, *, Tensor out = None)\n")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """``F.interpolate``: nearest / nearest-exact (3-5-D), linear (3-D), bilinear / bicubic (4-D, with
    antialias), trilinear (5-D), area (3-5-D, adaptive average pooling) and lanczos (4-D, antialias)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    elif type(align_corners) is not bool:  # (torch's upsample kernel's parser)
        _not_bool(f"upsample_{mode}{input.dim() - 2}d", ("align_corners",), (align_corners,))
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
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if size is not None and isinstance(size, (list, tuple)) and not all(map(_is_integer, size)):
        raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
                        f"but got size with types {[type(v) for v in size]}")
    vals = tuple(given) if isinstance(given, (list, tuple)) else (given,) * dim
    # (the upsample kernels' argument parser refuses tensors among the scales, tensors of other than one element
    # among the sizes (a tensor ``size`` / ``scale_factor`` is repeated per dim), and sizes that are no ints: a float,
    # a bool; ``area`` pools instead)
    bad = mode != "area" and not (size is None and recompute_scale_factor) and any(
        isinstance(v, Tensor) and (size is None or v.numel() != 1) or
        size is not None and not isinstance(v, Tensor) and (isinstance(v, bool) or not _is_integer(v)) for v in vals)
    if bad:
        out = scales = None
    elif size is not None:
        out, scales = tuple(int(v) for v in vals), None
    else:
        scales = tuple(float(v) for v in vals)
        out = tuple(int(math.floor(float(n) * sc)) for n, sc in zip(spatial, scales))
        scales = None if recompute_scale_factor else scales
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode == "area" and input.dim() in (3, 4, 5):
        if size is not None:  # (the adaptive pool's argument parser: a tuple of ints)
            for k, v in enumerate(vals):
                if not isinstance(v, Tensor) and (isinstance(v, bool) or not _is_integer(v)):
                    raise TypeError(f"adaptive_avg_pool{dim}d(): argument 'output_size' (position 2) must be tuple "
                                    f"of ints, but found element of type {type(v).__name__} at pos {k}")
        if input.dim() == 3:
            return adaptive_avg_pool2d(input.unsqueeze(-2), (1, out[0])).squeeze(-2)
        return adaptive_avg_pool2d(input, out) if input.dim() == 4 else adaptive_avg_pool3d(input, out)
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    supported = {3: ("nearest", "nearest-exact", "linear"), 4: ("nearest", "nearest-exact", "bilinear", "bicubic",
                                                               "lanczos"),
                 5: ("nearest", "nearest-exact", "trilinear")}
    if mode not in supported.get(input.dim(), ()):
        if (mode, input.dim()) in _NEEDS:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_NEEDS[(mode, input.dim())]}D "
                                      "input")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if bad:
        raise _upsample_arg_error(mode, dim, bool(antialias), size is not None,
                                  given if isinstance(given, (list, tuple)) else list(vals))
    if input.numel() == 0 and 0 in tuple(input.shape[1:]) and all(n > 0 for n in spatial):
        raise RuntimeError(f"Non-empty {input.dim()}D data tensor expected but got a tensor with sizes "
                           f"{_shape_str(tuple(input.shape))}")
    if any(o <= 0 for o in out) or any(n <= 0 for n in spatial):
        names = ("W",) if dim == 1 else ("H", "W") if dim == 2 else ("D", "H", "W")
        got_in = ", ".join(f"{k}: {v}" for k, v in zip(names, spatial))
        got_out = ", ".join(f"{k}: {v}" for k, v in zip(names, out))
        sep = " and" if dim == 1 else ""
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({got_in}){sep} output "
                           f"({got_out})")
    ac = bool(align_corners) if mode not in ("nearest", "nearest-exact") else None
    if antialias:
        return _upsample_aa(input, mode, out, ac, scales)
    return _upsample(input, mode, out, ac, scales)
