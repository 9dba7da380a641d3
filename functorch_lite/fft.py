"""``torch.fft``: discrete Fourier transforms, with PyTorch's signatures, dtypes, ``grad_fn`` names and errors.

Every transform is a composite over the three kernels of ``ops/fft_ops.py`` (``_fft_r2c``, ``_fft_c2c``,
``_fft_c2r``), assembled as PyTorch assembles it, so ``fft(x).grad_fn`` is ``FftR2CBackward0`` for a real ``x``
and ``FftC2CBackward0`` for a complex one, ``ifft`` of a real input is a conjugate view (``ConjBackward0``), and
gradients follow PyTorch's conjugate convention. CPU dtypes as in PyTorch: float32 -> complex64, float64 ->
complex128, integer and bool inputs are first converted to the default float dtype; float16, bfloat16 and float8
raise ``Unsupported dtype``.

>>> import functorch_lite as torch
>>> x = torch.tensor([1., 2., 3., 4.])
>>> torch.fft.irfft(torch.fft.rfft(x), n=4)
tensor([1., 2., 3., 4.])
"""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from ._tensor.tensor import Tensor
from .ops import fft_ops as _k
from .ops.creation import _finish
from .ops.movement import roll as _roll
from .ops._dispatch import _type_name, write_out as _write_out
from ._promotion import no_kernel as _no_kernel

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift", "Tensor"]


# ---- one-dimensional transforms ---------------------------------------------------------------------------
def _args_1d(fname, input, n, dim, norm, out):
    """Parsed arguments (PyTorch's argument-parser errors), and the input as autocast passes it."""
    _k.check_tensor(fname, input)
    _k.out_arg(fname, out)
    n = None if n is None else _k.int_arg(fname, "n", n)
    dim, norm = _k.int_arg(fname, "dim", dim), _k.norm_arg(fname, norm)
    return _k.autocast_fp32(input), n, dim, norm


def _r2c(name, input, n, dim, norm, forward, onesided, out):
    """``fft`` (real input), ``ifft`` (real input), ``rfft``, ``ihfft``."""
    if input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {input.dtype.short}")
    _k.check_out(name, out, True)
    x = _k.promote(input)
    d = _k.wrap_dim(dim, x.dim())
    size = x.shape[d] if n is None else n
    _k.check_points(size)
    if n is not None:
        x = _k.resize(x, (d,), (n,))
    r = _k._fft_r2c(x, (d,), _k.norm_mode(norm, forward), onesided)
    if forward:
        return _k.finish(r, out, "_fft_r2c", input)
    return _k.conj_out(r, out)  # the inverse transform of a real signal is the conjugate of its forward one


def _c2c(name, input, n, dim, norm, forward, out):
    """``fft`` / ``ifft`` of a complex input."""
    d = _k.wrap_dim(dim, input.dim())
    size = input.shape[d] if n is None else n
    _k.check_points(size)
    x = input if n is None else _k.resize(input, (d,), (n,))
    mode = _k.norm_mode(norm, forward)
    _k.check_out(name, out, True)
    return _k.finish(_k._fft_c2c(x, (d,), mode, forward), out, "_fft_c2c", input)


def _c2r(name, input, n, dim, norm, forward, out):
    """``irfft``, ``hfft``: ``n`` real output points from ``n // 2 + 1`` Hermitian input points."""
    _k.check_out(name, out, False)
    x = _k.promote(input, require_complex=True)
    d = _k.wrap_dim(dim, x.dim())
    last = 2 * (x.shape[d] - 1) if n is None else n
    _k.check_points(last)
    if n is not None:
        x = _k.resize(x, (d,), (last // 2 + 1,))
    mode = _k.norm_mode(norm, forward)
    if forward:  # hfft is the inverse transform of the conjugate
        x = _k.conj(x)
    return _k.finish(_k._fft_c2r(x, (d,), mode, last), out, "_fft_c2r", input)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """One-dimensional discrete Fourier transform over ``dim`` (``n``: crop or zero-pad that dim first).

    >>> import functorch_lite as torch
    >>> torch.fft.fft(torch.tensor([1., 0., 0., 0.]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    input, n, dim, norm = _args_1d("fft_fft", input, n, dim, norm, out)
    if input.dtype.is_complex:
        return _c2c("fft", input, n, dim, norm, True, out)
    return _r2c("fft", input, n, dim, norm, True, False, out)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of :func:`fft` (scaled by ``1/n`` with the default ``norm="backward"``)."""
    input, n, dim, norm = _args_1d("fft_ifft", input, n, dim, norm, out)
    if input.dtype.is_complex:
        return _c2c("ifft", input, n, dim, norm, False, out)
    return _r2c("ifft", input, n, dim, norm, False, False, out)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """FFT of a real signal: the ``n // 2 + 1`` non-redundant frequencies."""
    input, n, dim, norm = _args_1d("fft_rfft", input, n, dim, norm, out)
    return _r2c("rfft", input, n, dim, norm, True, True, out)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of :func:`rfft`: a real signal of ``n`` points (default ``2 * (size - 1)``)."""
    input, n, dim, norm = _args_1d("fft_irfft", input, n, dim, norm, out)
    return _c2r("irfft", input, n, dim, norm, False, out)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """FFT of a Hermitian-symmetric signal given by its first half: a real result of ``n`` points."""
    input, n, dim, norm = _args_1d("fft_hfft", input, n, dim, norm, out)
    return _c2r("hfft", input, n, dim, norm, True, out)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of :func:`hfft`: the first ``n // 2 + 1`` points of the inverse FFT of a real signal."""
    input, n, dim, norm = _args_1d("fft_ihfft", input, n, dim, norm, out)
    return _r2c("ihfft", input, n, dim, norm, False, True, out)


# ---- n-dimensional transforms ------------------------------------------------------------------------------
def _args_nd(fname, input, s, dim, norm, out, amp=True):
    """As ``_args_1d``; ``amp``: the function is on autocast's fp32 lists (not hfft2/hfftn/ihfft2/ihfftn)."""
    _k.check_tensor(fname, input)
    _k.out_arg(fname, out)
    s, dim, norm = _k.ints_arg(fname, "s", s), _k.ints_arg(fname, "dim", dim), _k.norm_arg(fname, norm)
    return (_k.autocast_fp32(input) if amp else input), s, dim, norm


def _fftn_c2c(input, s, dim, norm, forward, out):
    shape, dims = _k.shape_and_dims(input, s, dim)
    x = _k.resize(_k.promote(input, require_complex=True), dims, shape)
    mode = _k.norm_mode(norm, forward)
    _k.check_out("fftn", out, True)
    return _k.finish(_k._fft_c2c(x, dims, mode, forward), out, "_fft_c2c", input)


def _rfftn(name, input, s, dim, norm, out):
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {input.dtype.short}")
    shape, dims = _k.shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _k.resize(_k.promote(input), dims, shape)
    mode = _k.norm_mode(norm, True)
    _k.check_out("rfftn", out, True)
    return _k.finish(_k._fft_r2c(x, dims, mode, True), out, "_fft_r2c", input)


def _irfftn(input, s, dim, norm, out):
    shape, dims, last = _k.c2r_shape_and_dims("irfftn", input, s, dim)
    x = _k.resize(_k.promote(input, require_complex=True), dims, shape)
    mode = _k.norm_mode(norm, False)
    _k.check_out("irfftn", out, False)
    return _k.finish(_k._fft_c2r(x, dims, mode, last), out, "_fft_c2r", input)


def _hfftn(input, s, dim, norm, out):
    shape, dims, last = _k.c2r_shape_and_dims("hfftn", input, s, dim)
    x = _k.resize(_k.promote(input, require_complex=True), dims, shape)
    mode = _k.norm_mode(norm, True)
    if len(dims) > 1:
        x = _k._fft_c2c(x, dims[:-1], mode, True)
    _k.check_out("hfftn", out, False)
    return _k.finish(_k._fft_c2r(_k.conj(x), dims[-1:], mode, last), out, "_fft_c2r", input)


def _ihfftn(input, s, dim, norm, out):
    shape, dims = _k.shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _k.resize(_k.promote(input), dims, shape)
    mode = _k.norm_mode(norm, False)
    r = _k._fft_r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        _k.check_out("ihfftn", out, True)
        return _k.conj_out(r, out)
    _k.check_out("ihfftn", out, True)
    r = _k._fft_c2c(_k.conj_physical(r), dims[:-1], mode, False)
    return _k.finish(r, out, "_fft_c2c", input)


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """N-dimensional FFT over ``dim`` (default: all dims, or the last ``len(s)``), each cropped/padded to ``s``.

    >>> import functorch_lite as torch
    >>> torch.fft.fftn(torch.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    input, s, dim, norm = _args_nd("fft_fftn", input, s, dim, norm, out)
    return _fftn_c2c(input, s, dim, norm, True, out)


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of :func:`fftn`."""
    input, s, dim, norm = _args_nd("fft_ifftn", input, s, dim, norm, out)
    return _fftn_c2c(input, s, dim, norm, False, out)


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """N-dimensional FFT of a real input; the last transformed dim keeps its ``n // 2 + 1`` first frequencies."""
    input, s, dim, norm = _args_nd("fft_rfftn", input, s, dim, norm, out)
    return _rfftn("rfftn", input, s, dim, norm, out)


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of :func:`rfftn` (the last dim's output size defaults to ``2 * (size - 1)``)."""
    input, s, dim, norm = _args_nd("fft_irfftn", input, s, dim, norm, out)
    return _irfftn(input, s, dim, norm, out)


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """N-dimensional FFT of a Hermitian-symmetric signal given by its first half along the last dim."""
    input, s, dim, norm = _args_nd("fft_hfftn", input, s, dim, norm, out, amp=False)
    return _hfftn(input, s, dim, norm, out)


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of :func:`hfftn`."""
    input, s, dim, norm = _args_nd("fft_ihfftn", input, s, dim, norm, out, amp=False)
    return _ihfftn(input, s, dim, norm, out)


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """Two-dimensional FFT: :func:`fftn` over ``dim`` (default the last two dims)."""
    input, s, dim, norm = _args_nd("fft_fft2", input, s, dim, norm, out)
    return _fftn_c2c(input, s, dim, norm, True, out)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """Inverse of :func:`fft2`."""
    input, s, dim, norm = _args_nd("fft_ifft2", input, s, dim, norm, out)
    return _fftn_c2c(input, s, dim, norm, False, out)


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """Two-dimensional :func:`rfftn`."""
    input, s, dim, norm = _args_nd("fft_rfft2", input, s, dim, norm, out)
    return _rfftn("rfft2", input, s, dim, norm, out)


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """Two-dimensional :func:`irfftn`."""
    input, s, dim, norm = _args_nd("fft_irfft2", input, s, dim, norm, out)
    return _irfftn(input, s, dim, norm, out)


def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """Two-dimensional :func:`hfftn`."""
    input, s, dim, norm = _args_nd("fft_hfft2", input, s, dim, norm, out, amp=False)
    return _hfftn(input, s, dim, norm, out)


def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """Two-dimensional :func:`ihfftn`."""
    input, s, dim, norm = _args_nd("fft_ihfft2", input, s, dim, norm, out, amp=False)
    return _ihfftn(input, s, dim, norm, out)


# ---- helpers ------------------------------------------------------------------------------------------------
def _freq_args(fname, n, d, out, dtype):
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"{fname}(): argument 'n' (position 1) must be int, not {_type_name(n)}")
    n = int(n.__index__())
    if isinstance(d, Tensor):
        d = d.item()
    if not isinstance(d, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fname}(): argument 'd' must be float, not {_type_name(d)}")
    _k.out_arg(fname, out)
    dt = D.as_dtype(dtype) if dtype is not None else None
    if out is not None:
        if dt is not None and dt is not out.dtype:
            raise RuntimeError(f"dtype {dt.short} does not match dtype of out parameter ({out.dtype.short})")
        dt = out.dtype
    return n, float(d), dt or D.get_default_dtype()


def _freqs(name, k_count, fill, n, d, dt, device, requires_grad, out):
    """PyTorch's kernel: an ``arange`` in ``dt`` (``fill`` lays out the integers), times ``1 / (n * d)``
    computed in double and applied in the dtype's compute type (float for half/bfloat16)."""
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if k_count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {k_count}: [{k_count}]")
    if dt.is_complex or dt in D.FLOAT8:
        raise _no_kernel("arange_cpu", dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.float64(1.0) / np.float64(n * d)
        opmath = np.float64 if dt is D.float64 else np.float32
        k = fill(k_count).astype(dt.jnp).astype(opmath)
        host = (k * opmath(scale)).astype(dt.jnp)
    r = _finish(host, dt, device, requires_grad)
    return r if out is None else _write_out(out, r)


def _fftfreq_fill(n):
    k = np.arange(n, dtype=np.float64)
    k[(n + 1) // 2:] -= n  # C++: arange(n), then its tail overwritten with arange(-(n / 2), 0)
    return k


def fftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of :func:`fft` of size ``n`` and spacing ``d``: ``[0, 1, ..., -2, -1] / (d * n)``.

    >>> import functorch_lite as torch
    >>> torch.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    n, d, dt = _freq_args("fft_fftfreq", n, d, out, dtype)
    return _freqs("fftfreq", n, _fftfreq_fill, n, d, dt, device, requires_grad, out)


def rfftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The sample frequencies of :func:`rfft` of size ``n``: ``[0, 1, ..., n // 2] / (d * n)``."""
    n, d, dt = _freq_args("fft_rfftfreq", n, d, out, dtype)
    count = int(n / 2) + 1  # C++ integer division truncates toward zero
    return _freqs("rfftfreq", count, lambda c: np.arange(c, dtype=np.float64), n, d, dt, device, requires_grad, out)


def _shift(fname, input, dim, inverse):
    _k.check_tensor(fname, input)
    nd = input.dim()
    if dim is None:
        dims = tuple(range(nd))
    else:
        dims = _k.ints_arg(fname, "dim", dim)
        dims = tuple(_k.wrap_dim(d, nd) for d in dims)
    if not dims:
        raise RuntimeError("`shifts` required")
    shape = input.shape
    shifts = tuple((shape[d] + inverse) // 2 for d in dims)
    return _roll(input, shifts, dims)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Move the zero frequency to the centre of ``dim`` (default all dims): ``roll`` by ``size // 2``.

    >>> import functorch_lite as torch
    >>> torch.fft.fftshift(torch.fft.fftfreq(5))
    tensor([-0.4000, -0.2000,  0.0000,  0.2000,  0.4000])
    """
    return _shift("fft_fftshift", input, dim, 0)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """Inverse of :func:`fftshift`: ``roll`` by ``(size + 1) // 2``."""
    return _shift("fft_ifftshift", input, dim, 1)
