"""Sampling grids and bags: ``F.grid_sample`` (``torch.grid_sampler``, ``grid_sampler_2d/3d``), ``F.affine_grid``
(``torch.affine_grid_generator``) and ``F.embedding_bag``.

Each is one ``@defop`` with PyTorch's own backward node (``GridSampler2DBackward0`` / ``GridSampler3DBackward0``,
``AffineGridGeneratorBackward0``, ``EmbeddingBagBackward0``); the bodies follow ATen's CPU kernels (source-index
formulas, padding modes, the cubic convolution with ``A = -0.75``, the bag reductions with ``padding_idx`` left
out), so ``jax.vjp`` gives PyTorch's gradients: clipping has a zero gradient at and beyond the border, nearest
sampling none for the grid, ``max`` bags send the gradient to the first maximal entry.

Example::

    >>> import functorch_lite as torch
    >>> theta = torch.tensor([[[1., 0., 0.], [0., 1., 0.]]])
    >>> grid = torch.nn.functional.affine_grid(theta, (1, 1, 2, 2), align_corners=True)
    >>> torch.nn.functional.grid_sample(torch.arange(4.).view(1, 1, 2, 2), grid, align_corners=True).view(-1)
    tensor([0., 1., 2., 3.])
"""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from . import _deferred
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from .._tensor.views import shape_str as _shape_str
from ._registry import _not_bool, defop
from ._rounding import true_div
from .._warn import user_stacklevel as _user_stacklevel

__all__: list = ["grid_sample", "affine_grid", "embedding_bag"]

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADS = {"zeros": 0, "border": 1, "reflection": 2}
_FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)


def _type_str(dt) -> str:
    """A dtype as PyTorch's ``checkScalarTypes`` prints it: ``torch.LongTensor`` for the legacy tensor types,
    ``CPUBoolType`` / ``CPUBFloat16Type`` for the others."""
    if dt.short in ("Float", "Double", "Half", "Long", "Int", "Short", "Char", "Byte"):
        return f"torch.{dt.legacy}"
    return f"CPU{dt.short}Type"


def _host(t: Tensor):
    """The values of a small tensor on the host, or None while tracing (the checks that read data are skipped
    under compile, like PyTorch's other data-dependent checks there)."""
    arr = t._array
    if isinstance(arr, jax.core.Tracer):
        return None
    return np.asarray(jax.device_get(arr))


# ---- grid_sampler ------------------------------------------------------------------------------------------------
def _gs_kernel(sig) -> str:
    return "grid_sampler_2d_cpu_kernel_impl" if sig[0][0] == 4 else "grid_sampler3d_cpu"


def _gs_rule(op, sig, sargs):
    (_, xdt), (_, gdt) = sig
    if xdt not in _FLOATS:
        raise no_kernel(_gs_kernel(sig), xdt)
    if gdt is not xdt:
        raise RuntimeError(f"expected scalar type {xdt.short} but found {gdt.short}")
    return (None, None), (xdt,)


def _gs_prep(targs, sargs):
    x, g = targs
    mode, pad, align = sargs
    xs, gs = tuple(x._shape), tuple(g._shape)
    if not xs or not gs or xs[0] != gs[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {_shape_str(xs)} and grid with sizes {_shape_str(gs)}")
    if gs[-1] != len(xs) - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {len(xs) - 2} in last dimension, but got grid "
                           f"with sizes {_shape_str(gs)}")
    for i in range(2, len(xs)):
        if xs[i] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {_shape_str(xs)} with dimension {i} being empty")
    nd = 4 if len(xs) == 4 else 5
    if len(xs) != nd or len(gs) != nd:
        raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number of dimensions, but got "
                           f"input with sizes {_shape_str(xs)} and grid with sizes {_shape_str(gs)}")
    if nd == 5 and mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if mode not in (0, 1, 2) or pad not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode in 0 (bilinear), 1 (nearest), 2 (bicubic) "
                           f"and padding_mode in 0 (zeros), 1 (border), 2 (reflection), but got {mode} and {pad}")
    return (int(mode), int(pad), bool(align))


def _unnormalize(c, size, align):
    """[-1, 1] -> pixel coordinates (corner pixels' centres, or their outer edges without ``align_corners``)."""
    if align:
        return (c + 1) / 2 * (size - 1)
    return ((c + 1) * size - 1) / 2


def _clip(c, size):
    """Clamp to [0, size - 1] with ATen's gradient: zero at and beyond the borders."""
    hi = jnp.asarray(size - 1, c.dtype)
    return jnp.where(c <= 0, jnp.zeros_like(c), jnp.where(c >= hi, hi, c))


def _reflect(c, twice_low, twice_high):
    """ATen's ``reflect_coordinates``: fold ``c`` into [low, high] by reflections at the bounds."""
    if twice_low == twice_high:
        return jnp.zeros_like(c)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = jnp.abs(c - lo)
    extra = jnp.fmod(c, span)
    flips = jnp.floor(true_div(c, jnp.asarray(span, c.dtype)))  # (rounded once, as ATen's: it decides the fold)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _pad_coord(c, size, pad, align):
    """ATen's ``compute_coordinates``: the padding mode applied to an (unnormalised) source coordinate."""
    if pad == 1:
        return _clip(c, size)
    if pad == 2:
        c = _reflect(c, 0, 2 * (size - 1)) if align else _reflect(c, -1, 2 * size - 1)
        return _clip(c, size)
    return c


def _gather(xf, idx, sizes):
    """``xf`` (N, C, prod(sizes)) read at integer coordinates ``idx`` (one (K, N, *out) array per spatial dim, in
    the input's dim order: K taps each) -> (K, N, C, *out); out-of-bounds reads are zero. One gather for all taps
    (one scatter-add in the backward), which keeps the compiled program small."""
    inb = None
    flat = None
    for i, s in zip(idx, sizes):
        ok = (i >= 0) & (i < s)
        inb = ok if inb is None else inb & ok
        ic = jnp.clip(i, 0, s - 1)
        flat = ic if flat is None else flat * s + ic
    k, n = flat.shape[:2]
    c = xf.shape[1]
    f = jnp.moveaxis(flat, 0, 1).reshape((n, 1, int(np.prod(flat.shape)) // max(n, 1)))  # (N, 1, K * P)
    v = jnp.take_along_axis(xf, f, axis=2).reshape((n, c, k) + flat.shape[2:])
    v = jnp.moveaxis(v, 2, 0)
    return jnp.where(inb[:, :, None], v, jnp.zeros_like(v))


def _as_index(c, size):
    """A float coordinate as an int32 index (clamped far enough out that the bounds mask still sees it)."""
    return jnp.clip(c, -2, size + 1).astype(jnp.int32)


def _cubic_coeffs(t, half=False):
    """ATen's ``get_cubic_upsample_coefficients`` (cubic convolution, A = -0.75) for the four taps. ``half``: its
    float16 / bfloat16 order, each op rounded: the last tap reads ``(1 - t) + 1`` (two roundings), not ``2 - t``."""
    a = -0.75

    def conv1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def conv2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return (conv2(t + 1), conv1(t), conv1(1 - t), conv2((1 - t) + 1 if half else 2 - t))


def _half_dot(v, w):
    """``v[0] * w[0] + v[1] * w[1] + ...`` over axis 0, left to right with each product and sum rounded to the
    half dtype: ATen's grid samplers accumulating a float16 / bfloat16 output (XLA's reduce would sum in
    float32)."""
    acc = v[0] * w[0]
    for k in range(1, v.shape[0]):
        acc = acc + v[k] * w[k]
    return acc


@defop("grid_sampler", promote=_gs_rule, tensors=2, method=False, function=False, prep=_gs_prep, autocast="fp32",
       grad_fn=lambda targs, sargs: "GridSampler2DBackward0" if len(targs[0]._shape) == 4 else "GridSampler3DBackward0",
       kernel="grid_sampler_2d_cpu_kernel_impl", float8=_gs_kernel)
def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """Sample ``input`` (N, C, [D,] H, W) at ``grid`` (N, *out, 2 or 3; x/y[/z] in [-1, 1]) -> (N, C, *out)."""
    odt = input.dtype
    # float16 / bfloat16: ATen's CPU kernels compute in the dtype itself, each op rounded (coordinates, weights,
    # the sum), not in float32 opmath
    half = odt in (jnp.float16, jnp.bfloat16)
    cdt = odt if half else D.opmath(odt)
    x, g = input.astype(cdt), grid.astype(cdt)
    sizes = input.shape[2:]
    nsp = len(sizes)
    n, ch = x.shape[:2]
    xf = x.reshape((n, ch, int(np.prod(sizes))))
    # grid's last axis lists x (width), y (height)[, z (depth)]: reverse it to the input's dim order
    coords = [g[..., nsp - 1 - k] for k in range(nsp)]
    mode, pad, align = interpolation_mode, padding_mode, align_corners
    if mode == 2:  # bicubic (2-d): taps at integer offsets, the padding mode applied to each tap's coordinate
        src = [_unnormalize(c, s, align) for c, s in zip(coords, sizes)]
        base = [jnp.floor(c) for c in src]
        wts = [jnp.stack(_cubic_coeffs(c - b, half)) for c, b in zip(src, base)]  # (4, N, *out) per dim
        # (the tap coordinates as ATen's: rows ``(y - 1) + i``, columns ``x + (j - 1)``, rounded in a half dtype)
        taps = [jnp.stack([_as_index(jnp.trunc(_pad_coord(b - 1 + k if d == 0 else b + (k - 1), s, pad, align)), s)
                           for k in range(4)]) for d, (b, s) in enumerate(zip(base, sizes))]
        rows, cols = (jnp.repeat(taps[0], 4, axis=0), jnp.tile(taps[1], (4,) + (1,) * (taps[1].ndim - 1)))
        v = _gather(xf, (rows, cols), sizes)
        if half:  # (ATen's order: each row interpolated along x, then the four rows along y)
            v = v.reshape((4, 4) + v.shape[1:])
            r = jnp.stack([_half_dot(v[i], wts[1][:, :, None]) for i in range(4)])
            return _half_dot(r, wts[0][:, :, None])
        w = (wts[0][:, None] * wts[1][None]).reshape((16,) + wts[0].shape[1:])
        return jnp.sum(v * w[:, :, None], axis=0).astype(odt)
    src = [_pad_coord(_unnormalize(c, s, align), s, pad, align) for c, s in zip(coords, sizes)]
    if mode == 1:  # nearest: round half to even (std::nearbyint), no gradient for the grid
        return _gather(xf, [_as_index(jnp.round(c), s)[None] for c, s in zip(src, sizes)], sizes)[0].astype(odt)
    lo = [jnp.floor(c) for c in src]
    frac = [c - f for c, f in zip(src, lo)]
    idx = [[] for _ in range(nsp)]
    wl = []
    for corner in range(2 ** nsp):
        bits = [(corner >> (nsp - 1 - k)) & 1 for k in range(nsp)]
        w = None
        for d in (reversed(range(nsp)) if half else range(nsp)):
            f, fr, b, s = lo[d], frac[d], bits[d], sizes[d]
            idx[d].append(_as_index(f, s) + b)  # (an integer ``+ 1``, as ATen's: 301 is no bfloat16)
            # (half 3-d: ATen's scalar kernel, ``(ix_bse - ix) * (iy_bse - iy) * (iz_bse - iz)``, the integer
            # ``ix_bse`` rounded to the dtype first, x first; 2-d: its vectorized kernel, ``1 - (ix - floor(ix))``)
            wk = fr if b else (f + 1) - src[d] if half and nsp == 3 else 1 - fr
            w = wk if w is None else w * wk
        wl.append(w)
    v = _gather(xf, [jnp.stack(i) for i in idx], sizes)
    if half:
        return _half_dot(v, jnp.stack(wl)[:, :, None])
    return jnp.sum(v * jnp.stack(wl)[:, :, None], axis=0).astype(odt)


def _grid_sampler_call(input, grid, interpolation_mode, padding_mode, align_corners, nd=None):
    if nd is not None and input.dim() != nd:
        raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number of dimensions, but got "
                           f"input with sizes {_shape_str(input.shape)} and grid with sizes {_shape_str(grid.shape)}")
    return _grid_sampler(input, grid, int(interpolation_mode), int(padding_mode), bool(align_corners))


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``torch.grid_sampler``: modes as ATen's enums (0 bilinear, 1 nearest, 2 bicubic; 0 zeros, 1 border,
    2 reflection)."""
    return _grid_sampler_call(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``torch.grid_sampler_2d``: 4-d input."""
    return _grid_sampler_call(input, grid, interpolation_mode, padding_mode, align_corners, 4)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``torch.grid_sampler_3d``: 5-d input."""
    return _grid_sampler_call(input, grid, interpolation_mode, padding_mode, align_corners, 5)


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample "
                  "for details.")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """``F.grid_sample``: ``input`` (N, C, H, W) or (N, C, D, H, W) sampled at the normalised positions of
    ``grid`` (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3)."""
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _PADS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=_user_stacklevel())
        align_corners = False
    elif type(align_corners) is not bool:
        _not_bool("grid_sampler", ("align_corners",), (align_corners,), pos=5)
    return _grid_sampler(input, grid, _MODES[mode], _PADS[padding_mode], align_corners)


# ---- affine_grid_generator ---------------------------------------------------------------------------------------
def _ag_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt not in _FLOATS:
        raise no_kernel("linspace_cpu", dt)
    return (None,), (dt,)


def _ag_prep(targs, sargs):
    th = targs[0]
    size, align = sargs
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    k = len(size) - 2
    ts = tuple(th._shape)
    if len(ts) != 3 or ts[1] != k or ts[2] != k + 1:
        raise RuntimeError(f"affine_grid_generator(): expected theta of shape [N, {k}, {k + 1}] for size "
                           f"{_shape_str(size)}, but got {_shape_str(ts)}")
    if ts[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {k + 1}] but "
                           f"got: [{ts[0]}, {ts[2]}].")
    return (size, bool(align))


def _linspace_neg1(n, align, dt):
    """ATen's ``linspace_from_neg_one``: pixel centres in [-1, 1], torch's linspace bit for bit (symmetric from
    both ends: creation._linspace_real), then without align_corners ``range * (n - 1) / n``, two roundings as
    torch's (one multiply by the rounded ratio is an ulp off: 0.6000000238 for torch's 0.5999999642, which moved a
    nearest-mode grid_sample to the next pixel)."""
    if n <= 1:
        return jnp.zeros((1,), dt)
    from .creation import _linspace_real
    r = jnp.asarray(_linspace_real(-1.0, 1.0, n, D.from_numpy_dtype(jnp.dtype(dt))))
    return r if align else r * jnp.asarray(n - 1, dt) / jnp.asarray(n, dt)


@defop("affine_grid_generator", promote=_ag_rule, grad_fn="AffineGridGeneratorBackward0", method=False,
       prep=_ag_prep, autocast="lower", kernel="linspace_cpu", float8=lambda sig: "linspace_cpu")
def affine_grid_generator(theta, size, align_corners):
    """``torch.affine_grid_generator``: the base grid of (x, y[, z], 1) rows times ``theta^T`` -> (N, *spatial, k)."""
    odt = theta.dtype
    cdt = D.opmath(odt)
    spatial = size[2:]
    axes = [_linspace_neg1(s, align_corners, odt).astype(cdt) for s in spatial]  # depth, height, width order
    mesh = jnp.meshgrid(*axes, indexing="ij")
    base = jnp.stack([m for m in reversed(mesh)] + [jnp.ones_like(mesh[0])], axis=-1)  # (..., x, y[, z], 1)
    k = len(spatial)
    flat = base.reshape((-1, k + 1))
    out = jnp.einsum("pj,nij->npi", flat, theta.astype(cdt))
    return out.reshape((theta.shape[0],) + tuple(spatial) + (k,)).astype(odt)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """``F.affine_grid``: the sampling grid (N, H, W, 2) / (N, D, H, W, 3) of a batch of affine matrices
    ``theta`` (N, 2, 3) / (N, 3, 4), for :func:`grid_sample`."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=_user_stacklevel())
        align_corners = False
    elif type(align_corners) is not bool:
        _not_bool("affine_grid_generator", ("align_corners",), (align_corners,), pos=3)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    shape = tuple(theta.shape)
    if len(size) == 4:
        if theta.dim() != 3 or shape[-2] != 2 or shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or shape[-2] != 3 or shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=_user_stacklevel())
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, list(size), bool(align_corners))


# ---- embedding_bag -----------------------------------------------------------------------------------------------
_EB_MODES = {"sum": 0, "mean": 1, "max": 2}
_TENSOR_CLASS = "<class 'torch.Tensor'>"  # how PyTorch's message prints a tensor's type


def _eb_rule(op, sig, sargs):
    w = sig[0][1]
    for name, s in (("indices", sig[1]), ("offsets", sig[2])):
        if s[1] not in (D.int64, D.int32):
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: "
                               f"Long, Int; but got {_type_str(s[1])} instead (while checking arguments for "
                               "embedding_bag)")
    if w not in _FLOATS:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                           f"BFloat16, Float, Double; but got {_type_str(w)} instead (while checking arguments for "
                           "embedding_bag)")
    if sig[3] is not None and sig[3][1] is not w:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                           f"'per_sample_weights'; but type {_type_str(w)} does not equal {_type_str(sig[3][1])} "
                           "(while checking arguments for embedding_bag)")
    return (None,) * 4, (w,)


def _eb_check(targs, sargs):
    w, idx, off, _ = targs
    include_last = sargs[1]
    if include_last and off._shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    ho = _host(off)
    if ho is None and off._shape[0]:  # (inside a compiled function: the program checks it, in eager's order)
        o = off._array
        _deferred.check(o[:1] != 0, o[:1], lambda v, p: RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
            f"However, got {v}\n[ {_type_str(off.dtype)}{{}} ]"))
        _deferred.check(o[-1:] > idx._shape[0], o[-1:], lambda v, p: RuntimeError(
            f"offsets[-1] can not be greater than input's length {idx._shape[0]} but got offsets[-1] of {v}"))
        _deferred.check(o[1:] < o[:-1], o[1:], lambda v, p: RuntimeError(
            "Expected i < index_size to be true, but got false.  (Could this error message be improved?  If so, "
            "please report an enhancement request to PyTorch.)"))
    elif ho is not None and ho.size:
        if ho[0] != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {ho[0]}\n[ {_type_str(off.dtype)}{{}} ]")
        if ho[-1] > idx._shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx._shape[0]} but got "
                               f"offsets[-1] of {ho[-1]}")
        if (np.diff(ho) < 0).any():
            raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this error message be "
                               "improved?  If so, please report an enhancement request to PyTorch.)")
    hi = _host(idx)
    n = w._shape[0]

    def bad_index(v, pos):  # (torch's sum / mean kernels name the position; with a padding_idx, or max, not)
        if sargs[0] == 2 or sargs[2] >= 0:
            return RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {v}")
        return RuntimeError(f"Index {pos} of input takes value {v} which is not in the valid range [0, {n})")
    if hi is None:  # (inside a compiled function: the program checks it)
        _deferred.check((idx._array < 0) | (idx._array >= n), idx._array, bad_index)
    elif hi.size:
        bad = (hi < 0) | (hi >= n)
        if bad.any():
            k = int(np.argmax(bad))
            raise bad_index(hi[k], k)


@defop("embedding_bag", promote=_eb_rule, grad_fn="EmbeddingBagBackward0", tensors=4, method=False, function=False,
       check=_eb_check, kernel="embedding_bag", float8=True, saves=(0, 3),
       device_check=("weight", "indices", "offsets", "per_sample_weights"))
def _embedding_bag(weight, indices, offsets, per_sample_weights, mode, include_last_offset, padding_idx,
                   scale_grad_by_freq):
    """Bags ``indices[offsets[b]:offsets[b + 1]]`` of rows of ``weight`` reduced by ``mode`` (0 sum, 1 mean,
    2 max); entries equal to ``padding_idx`` are left out (an empty bag gives zeros)."""
    odt = weight.dtype
    cdt = D.opmath(odt)
    n_rows, dim = weight.shape
    length = indices.shape[0]
    nb = offsets.shape[0] - (1 if include_last_offset else 0)
    if nb <= 0:
        return jnp.zeros((0, dim), odt)
    off = offsets.astype(jnp.int64)
    pos = jnp.arange(length, dtype=jnp.int64)
    bag = jnp.searchsorted(off[:nb], pos, side="right") - 1
    keep = bag >= 0  # (with include_last_offset the last bag runs to the end of ``indices``, as in ATen)
    if padding_idx >= 0:
        keep = keep & (indices != padding_idx)
    seg = jnp.clip(bag, 0, nb - 1)
    ids = jnp.clip(indices, 0, n_rows - 1)
    rows = weight.astype(cdt)[ids]
    if scale_grad_by_freq:
        # ATen's CPU backward divides the gradient of the i-th smallest distinct index by the count of the i-th
        # smallest index *position* (``counts[indices_data[i]]``, indices sorted): replicated, so gradients match
        counts = jnp.zeros((n_rows,), cdt).at[ids].add(jnp.ones((length,), cdt))
        rank = jnp.cumsum((counts > 0).astype(jnp.int64)) - 1
        freq = counts[jnp.sort(ids)[jnp.clip(rank, 0, length - 1)]]
        scale = (1 / jnp.maximum(freq, 1))[ids][:, None]
        const = jax.lax.stop_gradient(rows)
        rows = const + (rows - const) * scale
    if include_last_offset and mode != 2 and padding_idx < 0 and odt in (jnp.float32, jnp.float16, jnp.bfloat16):
        # (ATen's fast sum / mean path (these dtypes, no padding_idx, a weight with unit row stride) ends the last
        # bag at ``offsets[-1]``, while the mean's count and the backward run to the end of ``indices``: the entries
        # past it add zero but take the gradient; its other paths run the last bag to the end)
        rows = jnp.where((pos >= off[nb])[:, None], rows - jax.lax.stop_gradient(rows), rows)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.astype(cdt)[:, None]
    k = keep[:, None]
    zeros = jnp.zeros_like(rows)
    if mode == 2:  # max: the first maximal entry of each bag and feature carries the value (and the gradient)
        vals = jnp.where(k, jax.lax.stop_gradient(rows), -jnp.inf)
        best = jax.ops.segment_max(vals, seg, nb)
        hit = k & (vals == best[seg])
        first = jax.ops.segment_min(jnp.where(hit, pos[:, None], length), seg, nb)
        out = jax.ops.segment_sum(jnp.where(hit & (pos[:, None] == first[seg]), rows, zeros), seg, nb)
        return out.astype(odt)
    out = jax.ops.segment_sum(jnp.where(k, rows, zeros), seg, nb)
    if odt == jnp.bfloat16 and padding_idx < 0 and per_sample_weights is None:
        # (ATen's fast path hands bfloat16 bags to fbgemm, which rounds the float sum half away from zero on the
        # bit pattern (+0x8000, truncated), not to nearest even; the mean then divides that rounded sum)
        bits = jax.lax.bitcast_convert_type(jax.lax.stop_gradient(out), jnp.uint32)
        up = jax.lax.bitcast_convert_type((bits + jnp.uint32(0x8000)) & jnp.uint32(0xFFFF0000), jnp.float32)
        out = out + (up - jax.lax.stop_gradient(out))  # (the rounding's gradient is the identity's)
    if mode == 1:
        cnt = jax.ops.segment_sum(keep.astype(cdt), seg, nb)
        # (ATen stores the bag's sum in the output (half types: rounded) and divides that by the count)
        out = true_div(out.astype(odt).astype(cdt), jnp.maximum(cnt, 1)[:, None])
    return out.astype(odt)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """``F.embedding_bag``: sums, means or maxima of bags of embedding rows (1-d ``input`` split at ``offsets``,
    or each row of a 2-d ``input``). ``sparse`` gradients are returned dense."""
    from .. import arange
    if weight.dtype is D.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=_user_stacklevel())
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type "
                             f"{_TENSOR_CLASS if isinstance(offsets, Tensor) else type(offsets)}")
        if input.size(1) == 0:
            raise RuntimeError("step must be nonzero")
        offsets = arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _EB_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        from .norm import _renorm_fn
        hi = _host(input)
        if hi is not None and hi.size and ((hi < 0) | (hi >= weight.size(0))).any():
            raise IndexError("index out of range in self")
        weight._write(_renorm_fn(float(max_norm), float(norm_type))(weight._array, input._array))
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    n = weight.size(0)
    if padding_idx is None:
        padding_idx = -1
    else:
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, but got "
                               f"{padding_idx}")
        padding_idx = padding_idx % n
    return _embedding_bag(weight, input, offsets, per_sample_weights, _EB_MODES[mode], bool(include_last_offset),
                          int(padding_idx), bool(scale_grad_by_freq))
