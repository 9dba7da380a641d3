"""Fractional max pooling (Graham, 2014): ``F.fractional_max_pool2d`` / ``F.fractional_max_pool3d`` and their
``*_with_indices`` forms.

Each (batch, channel) plane draws one random sample ``u`` in [0, 1) per pooled dim (``_random_samples``, shape
(N, C, 2) or (N, C, 3); the 2-d kernel reads ``u[0]`` for the width and ``u[1]`` for the height, the 3-d one
``u[0..2]`` for time, height, width). PyTorch's window starts along a dim of input size ``n``, output size ``o``
and pool size ``k`` are ``int((i + u) * alpha) - int(u * alpha)`` with ``alpha = (n - k) / (o - 1)`` for
``i < o - 1`` and ``n - k`` for the last, computed in the input's dtype (each op rounded to it, as the CPU
kernel's ``scalar_t`` arithmetic): with the same samples the windows, values and indices are torch's. The
maximum of each window is its first (a NaN wins: the last NaN, as the kernel's ``val > max || isnan(val)``
scan); indices are int64 flat positions in the plane (``h * W + w``). The gradient flows to the chosen inputs
(duplicates accumulate, as ``fractional_max_pool2d_backward`` adds).

Example::

    >>> import functorch_lite as torch
    >>> F = torch.nn.functional
    >>> x = torch.arange(25.).reshape(1, 1, 5, 5)
    >>> F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=torch.zeros(1, 1, 2))
    tensor([[[[ 6.,  9.],
              [21., 24.]]]])
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor
from .._tensor.views import shape_str as _shape_str
from ._registry import defop
from .conv import _tup

__all__: list = ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
                 "fractional_max_pool3d_with_indices"]


def _rule(kernel: str):
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt.category < D.FLOAT or dt.is_complex or dt in D.FLOAT8:
            raise no_kernel(kernel, dt)
        if sig[1][1] is not dt:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        return (None, None), (dt, D.int64)
    return rule


_DIMS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _prep_for(nd: int):
    name = f"fractional_max_pool{nd}d"

    def prep(targs, sargs):
        x, s = targs
        xs, ss = x._shape, s._shape
        k = _tup(sargs[0], nd)
        osz = _tup(sargs[1], nd)
        if len(xs) not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {_shape_str(xs)}")
        if len(ss) != 3:
            raise RuntimeError(f"Expect _random_samples to be 3D tensor, but got: {_shape_str(ss)}")
        planes = xs[-nd - 1]
        if ss[1] != planes:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if ss[2] != nd:
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {ss[2]}.")
        if len(xs) == nd + 2 and ss[0] < xs[0]:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        where = name if nd == 2 else f"{name}_out"
        for d, dim in enumerate(_DIMS[nd]):
            n = xs[-nd + d]
            if osz[d] + k[d] - 1 > n:
                raise RuntimeError(f"{where}(): pool {dim} {k[d]} too large relative to input {dim} {n}")
        return (k, osz)
    return prep


def _round(x, dt):
    """``x`` rounded to ``dt`` (each op of the CPU kernel's ``scalar_t`` arithmetic; XLA may keep a half-precision
    chain in float32 without rounding between ops, so the rounding is explicit)."""
    fi = jnp.finfo(dt)
    return lax.reduce_precision(x, exponent_bits=fi.nexp, mantissa_bits=fi.nmant)


def _starts(u, n: int, o: int, k: int, dt):
    """(N, C, o) int32 window starts along one dim from the planes' samples ``u`` (N, C)."""
    last = jnp.full(u.shape + (1,), n - k, jnp.int32)
    if o <= 1:
        return last[..., :o]
    ct = jnp.float32 if jnp.dtype(dt).itemsize < 4 else dt  # half precision: computed in float32, rounded

    def r(v):
        return _round(v, dt) if ct != dt else v
    u = u.astype(ct)[..., None]
    alpha = r(r(jnp.asarray(n - k, ct)) / r(jnp.asarray(o - 1, ct)))
    i = r(jnp.arange(o - 1, dtype=ct))
    seq = r(r(i + u) * alpha).astype(jnp.int32) - r(u * alpha).astype(jnp.int32)
    return jnp.concatenate([seq, jnp.broadcast_to(last, seq.shape[:-1] + (1,))], axis=-1)


def _fractional(input, samples, kernel, osz):
    nd = len(kernel)
    batched = input.ndim == nd + 2
    x = input if batched else input[None]
    n, c = x.shape[:2]
    size = x.shape[2:]
    s = lax.stop_gradient(samples)[:n]
    order = (1, 0) if nd == 2 else (0, 1, 2)  # which sample each dim reads
    flat = jnp.zeros((n, c) + (1,) * (2 * nd), jnp.int32)
    mul = 1
    for d in reversed(range(nd)):
        st = _starts(s[..., order[d]], size[d], osz[d], kernel[d], x.dtype)  # (N, C, o_d)
        pos = st[..., :, None] + jnp.arange(kernel[d], dtype=jnp.int32)   # (N, C, o_d, k_d)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = osz[d], kernel[d]
        flat = flat + pos.reshape(shape) * mul
        mul *= size[d]
    ksz = 1
    for e in kernel:
        ksz *= e
    flat = flat.reshape((n, c) + tuple(osz) + (ksz,))
    patches = jnp.take_along_axis(x.reshape(n, c, -1), flat.reshape(n, c, -1), axis=2).reshape(flat.shape)
    isn = jnp.isnan(patches) if jnp.issubdtype(patches.dtype, jnp.floating) else jnp.zeros(patches.shape, bool)
    last_nan = ksz - 1 - jnp.argmax(isn[..., ::-1], axis=-1)
    a = jnp.where(isn.any(axis=-1), last_nan, jnp.argmax(lax.stop_gradient(patches), axis=-1))[..., None]
    vals = jnp.take_along_axis(patches, a, axis=-1)[..., 0]
    idx = jnp.take_along_axis(flat, a, axis=-1)[..., 0].astype(jnp.int64)
    if not batched:
        vals, idx = vals[0], idx[0]
    return vals, idx


@defop("fractional_max_pool2d", promote=_rule("fractional_max_pool2d_out_frame"), tensors=2, nout=2,
       grad_fn="FractionalMaxPool2DBackward0", method=False, function=False, prep=_prep_for(2),
       kernel="fractional_max_pool2d_out_frame", broadcast=False, autocast={"cpu": "fp32"})
def _fractional_max_pool2d(input, random_samples, kernel_size, output_size):
    """(values, int64 flat ``h * W + w`` indices) of (N, C, H, W) or (C, H, W) ``input``."""
    return _fractional(input, random_samples, kernel_size, output_size)


@defop("fractional_max_pool3d", promote=_rule("fractional_max_pool3d_out_frame"), tensors=2, nout=2,
       grad_fn="FractionalMaxPool3DBackward0", method=False, function=False, prep=_prep_for(3),
       kernel="fractional_max_pool3d_out_frame", broadcast=False, autocast={"cpu": "fp32"})
def _fractional_max_pool3d(input, random_samples, kernel_size, output_size):
    """(values, int64 flat ``(t * H + h) * W + w`` indices) of (N, C, T, H, W) or (C, T, H, W) ``input``."""
    return _fractional(input, random_samples, kernel_size, output_size)


def _sizes(nd: int, input: Tensor, output_size, output_ratio, samples):
    """torch.nn.functional's argument handling: the output size (from ``output_ratio`` if not given) and the
    samples (``rand(N, C, nd)`` in the input's dtype if not given)."""
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        r = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * nd
        if len(r) == 1:
            r = r * nd
        output_size = [int(input.size(-nd + d) * r[d]) for d in range(nd)]
    if samples is None:
        from .. import rand
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    return output_size, samples


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    """``F.fractional_max_pool2d_with_indices``: (values, int64 indices)."""
    osz, s = _sizes(2, input, output_size, output_ratio, _random_samples)
    return _fractional_max_pool2d(input, s, kernel_size, osz)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    """``F.fractional_max_pool3d_with_indices``: (values, int64 indices)."""
    osz, s = _sizes(3, input, output_size, output_ratio, _random_samples)
    return _fractional_max_pool3d(input, s, kernel_size, osz)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """``F.fractional_max_pool2d`` over (N, C, H, W) or (C, H, W): values, or (values, indices) with
    ``return_indices``."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """``F.fractional_max_pool3d`` over (N, C, T, H, W) or (C, T, H, W)."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]
