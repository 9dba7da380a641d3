"""``torch.stft`` / ``torch.istft`` (and the ``Tensor`` methods): short-time Fourier transforms.

Built as PyTorch builds them (``torch/functional.py`` and ``aten/src/ATen/native/SpectralOps.cpp``), as composites
over facade ops, so autograd, dtype promotion and devices come from those ops:

* ``stft``: with ``center`` the signal is padded by ``n_fft // 2`` on both sides with ``F.pad(pad_mode)`` (on a
  3-d view, as ``torch.functional.stft`` does); framed into ``1 + (len - n_fft) // hop_length`` frames of
  ``n_fft`` points (``unfold``, PyTorch's ``as_strided``); multiplied by the window (zero-padded to ``n_fft``,
  centred); transformed by ``_fft_r2c`` (real frames; ``onesided`` default True) or ``_fft_c2c`` (complex input or
  window; two-sided only), normalised by ``1/sqrt(n_fft)`` when ``normalized``; then an in-place ``transpose_(1, 2)``
  to (batch?, freq, frames) and ``squeeze_(0)`` for a 1-d signal (``grad_fn``: ``SqueezeBackward4`` /
  ``TransposeBackward1``); ``return_complex=False`` gives ``view_as_real`` of that (deprecated in PyTorch: it warns
  once, and a real input without ``return_complex`` is an error).
* ``istft``: inverse transform of each frame (``_fft_c2r`` of the first ``n_fft // 2 + 1`` bins, or ``_fft_c2c``
  with ``return_complex=True``), normalised by ``1/n_fft`` (``1/sqrt(n_fft)`` when ``normalized``), multiplied by
  the window, overlap-added (PyTorch's ``unfold_backward``; here one ``index_add``) and divided by the overlap-added
  squared window, after trimming the ``center`` padding (or to ``length``, zero-padding past the signal with a
  warning). A window envelope below 1e-11 anywhere in the kept range fails PyTorch's NOLA check (a host
  read, skipped under ``compile`` / ``vmap``, where such samples come out inf/nan).

Errors and warnings carry PyTorch's exception types and texts, including its ``stft(torch.FloatTensor[64], n_fft=16,
...)`` description of the call. CPU autocast runs ``stft`` in float32 (PyTorch's fp32 list).

>>> import functorch_lite as torch
>>> x = torch.arange(8.)
>>> S = torch.stft(x, 4, window=torch.hann_window(4), return_complex=True)
>>> S.shape
torch.Size([3, 9])
>>> torch.istft(S, 4, window=torch.hann_window(4))
tensor([0., 1., 2., 3., 4., 5., 6., 7.])
"""
from __future__ import annotations

import jax
import numpy as np

from .. import dtypes as D
from .._warn import warn_once  # (each of these warnings is shown once per process, as PyTorch's)
from .._tensor.tensor import Tensor
from . import fft_ops as _k
from .complex_ops import view_as_real
from .creation import ones, tensor
from .resample import pad as _pad
from ._registry import _not_bool

_STFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause spectral leakage. "
    "Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce spectral leakage."
    "To suppress this warning and use a rectangular window, explicitly set "
    "`window=torch.ones(n_fft, device=<device>)`.")
_ISTFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied.Please provide the same window used by stft to "
    "make the inversion lossless.To suppress this warning and use a rectangular window, explicitly set "
    "`window=torch.ones(n_fft, device=<device>)`.")
_STFT_REAL_DEPRECATED = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex tensors for "
    "all inputs, and return_complex=False will raise an error.\nNote: you can still call torch.view_as_real on the "
    "complex output to recover the old return format.")
_STFT_NEED_RETURN_COMPLEX = (
    "stft requires the return_complex parameter be given for real inputs, and will further require that "
    "return_complex=True in a future PyTorch release.")
_ISTFT_SHORT = (
    "The length of signal is shorter than the length parameter. Result is being padded with zeros in the tail. "
    "Please check your center and hop_length settings.")
_ONESIDED_COMPLEX = "Cannot have onesided output if window or input is complex"

# ---- argument checks (PyTorch's argument parser) --------------------------------------------------------------
def _check_int(fname: str, name: str, v, pos: int | None = None, optional: bool = True):
    return None if v is None and optional else _k.int_arg(fname, name, v, pos)


def _check_bool(fname: str, name: str, v, optional: bool = False):
    if type(v) is not bool and not (v is None and optional):
        _not_bool(fname, (name,), (v,))
    return v


def _check_tensor(fname: str, name: str, v, pos: int | None = None, optional: bool = True):
    return v if v is None and optional else _k.tensor_arg(fname, name, v, pos)


# ---- PyTorch's description of the call in its error messages --------------------------------------------------
_LEGACY_TYPES = {"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"}


def _type_str(t: Tensor) -> str:
    """``Tensor::toString()``: ``torch.FloatTensor`` for the classic types, else ``CPUComplexFloatType`` & co."""
    if t.dtype.short in _LEGACY_TYPES:
        return t.type()
    return f"{t._storage.device.type.upper()}{t.dtype.short}Type"


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _opt(v) -> str:
    return "None" if v is None else str(int(v))


def _window_str(window) -> str:
    return "None" if window is None else f"{_type_str(window)}{{{_sizes(window)}}}"


def _check_fft_dtype(t: Tensor) -> None:
    """The CPU FFT kernels take float32/float64 and their complex types only."""
    if t.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {t.dtype.short}")


def _hop_and_win(fname: str, input: Tensor, window, n_fft: int, hop_length, win_length) -> tuple:
    """The window's device check and the ``hop_length`` (n_fft // 4) and ``win_length`` (n_fft) defaults."""
    if window is not None and window.device != input.device:
        raise RuntimeError(f"{fname} input and window must be on the same device but got self on {input.device} and "
                           f"window on {window.device}")
    return (n_fft >> 2) if hop_length is None else hop_length, n_fft if win_length is None else win_length


# ---- stft -----------------------------------------------------------------------------------------------------
def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    """Short-time Fourier transform of a 1-d signal or a 2-d batch of signals: (batch?, freq, frames) complex, or
    with a trailing (re, im) dim of 2 when ``return_complex=False``. ``freq`` is ``n_fft // 2 + 1`` when
    ``onesided`` (the default for a real input and window), else ``n_fft``; ``frames`` is ``1 + len // hop_length``
    with ``center`` (the default), else ``1 + (len - n_fft) // hop_length``. ``hop_length`` defaults to
    ``n_fft // 4``, ``win_length`` to ``n_fft``, ``window`` to ones (a rectangular window, with a warning).
    ``align_to_window`` (only with ``center=False``) frames from the start of the window instead of the frame.

    >>> import functorch_lite as torch
    >>> torch.stft(torch.ones(8), 4, window=torch.ones(4), return_complex=True)[:, 0]
    tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    n_fft = _check_int("stft", "n_fft", n_fft, 2, optional=False)
    hop_length = _check_int("stft", "hop_length", hop_length)
    win_length = _check_int("stft", "win_length", win_length)
    window = _check_tensor("stft", "window", window)
    normalized = _check_bool("stft", "normalized", normalized)
    onesided = _check_bool("stft", "onesided", onesided, optional=True)
    return_complex = _check_bool("stft", "return_complex", return_complex, optional=True)
    align_to_window = _check_bool("stft", "align_to_window", align_to_window, optional=True)
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:  # torch/functional.py pads on a (1, 1?, len) view, then calls the ATen stft with center=False
        signal_dim = input.dim()
        pad = int(n_fft // 2)
        input = _pad(input.view([1] * (3 - signal_dim) + list(input.shape)), [pad, pad], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    input = _k.autocast_fp32(input)  # (stft is on PyTorch's autocast fp32 lists)
    window = None if window is None else _k.autocast_fp32(window)

    if window is None:
        warn_once(_STFT_NO_WINDOW, _STFT_NO_WINDOW)
    hop, win = _hop_and_win("stft", input, window, n_fft, hop_length, win_length)
    as_complex = return_complex if return_complex is not None else \
        (input.is_complex() or (window is not None and window.is_complex()))
    if not as_complex:
        if return_complex is None:
            raise RuntimeError(_STFT_NEED_RETURN_COMPLEX)
        warn_once(_STFT_REAL_DEPRECATED, _STFT_REAL_DEPRECATED)

    desc = (f"stft({_type_str(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_str(window)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
            f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) ")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(desc + ": expected a tensor of floating point or complex values")
    self_dim = input.dim()
    if self_dim not in (1, 2):
        raise RuntimeError(desc + ": expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if self_dim == 1 else input
    batch, length = x.shape
    if n_fft <= 0 or n_fft > length:  # (PyTorch reports win_length as "n_fft" here)
        raise RuntimeError(desc + f": expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(desc + f": expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(desc + f": expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(desc + f": expected a 1D window tensor of size equal to win_length={win}, but got "
                           f"window with size {_sizes(window)}")

    window_ = window
    if win < n_fft:  # the window, zero-padded to n_fft and centred
        left = (n_fft - win) // 2
        if window is None:
            window_ = ones(win, dtype=x.dtype, device=x.device)
        window_ = _pad(window_, [left, n_fft - win - left])

    if not center and align_to_window:  # frames start where the (centred) window starts
        n_frames = 1 + (length - win) // hop
        side = (n_fft - win) // 2
        x = _pad(x, [side, side], "constant")
        padded = x.shape[1]
        need = (batch - 1) * padded + (n_frames - 1) * hop + n_fft
        if need > batch * padded:  # PyTorch's as_strided outgrows the padded signal when n_fft - win is odd
            isz = x.dtype.itemsize
            raise RuntimeError(f"setStorage: sizes [{batch}, {n_frames}, {n_fft}], strides [{padded}, {hop}, 1], "
                               f"storage offset 0, and itemsize {isz} requiring a storage size of {need * isz} are "
                               f"out of bounds for storage of size {batch * padded * isz}")
    frames = x.unfold(1, n_fft, hop)  # (batch, n_frames, n_fft)
    if window_ is not None:
        frames = frames * window_

    complex_fft = frames.is_complex()
    onesided_ = (not complex_fft) if onesided is None else onesided
    norm = _k.BY_ROOT_N if normalized else _k.NONE
    _check_fft_dtype(frames)
    if complex_fft:
        if onesided_:
            raise RuntimeError(_ONESIDED_COMPLEX)
        out = _k._fft_c2c(frames, (2,), norm, True)
    else:
        out = _k._fft_r2c(frames, (2,), norm, onesided_)
    out.transpose_(1, 2)  # (batch, freq, frames)
    if self_dim == 1:
        out.squeeze_(0)
    return out if as_complex else view_as_real(out)


# ---- istft ----------------------------------------------------------------------------------------------------
def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool | None = None,
          length: int | None = None, return_complex: bool = False) -> Tensor:
    """Inverse of :func:`stft`: a complex (batch?, freq, frames) spectrogram back to a (batch?, len) signal by
    windowed overlap-add. Pass the ``n_fft``, ``hop_length``, ``win_length``, ``window``, ``center`` and
    ``normalized`` that ``stft`` used; ``onesided`` defaults to ``freq != n_fft``; ``length`` trims (or zero-pads) the
    result; ``return_complex=True`` inverts a two-sided spectrogram to a complex signal.

    >>> import functorch_lite as torch
    >>> w = torch.hann_window(8)
    >>> x = torch.linspace(-1, 1, 16)
    >>> torch.allclose(torch.istft(torch.stft(x, 8, window=w, return_complex=True), 8, window=w), x, atol=1e-6)
    True
    """
    _check_tensor("istft", "input", input, 1, optional=False)
    n_fft = _check_int("istft", "n_fft", n_fft, 2, optional=False)
    hop_length = _check_int("istft", "hop_length", hop_length)
    win_length = _check_int("istft", "win_length", win_length)
    window = _check_tensor("istft", "window", window)
    center = _check_bool("istft", "center", center)
    normalized = _check_bool("istft", "normalized", normalized)
    onesided = _check_bool("istft", "onesided", onesided, optional=True)
    length = _check_int("istft", "length", length)
    return_complex = _check_bool("istft", "return_complex", return_complex)

    if window is None:
        warn_once(_ISTFT_NO_WINDOW, _ISTFT_NO_WINDOW)
    hop, win = _hop_and_win("istft", input, window, n_fft, hop_length, win_length)
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    x = input.resolve_conj()
    real = view_as_real(x)  # PyTorch reads the sizes off this (..., freq, frames, 2) view
    input_dim = real.dim()
    n_frames = real.size(-2)
    fft_size = real.size(-3)
    expected_len = n_fft + hop * (n_frames - 1)

    desc = (f"istft({_type_str(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_str(window)}, center={int(center)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, length={'None' if length is None else length}, "
            f"return_complex={int(return_complex)}) ")
    if real.numel() == 0:
        raise RuntimeError(desc + ": input tensor cannot be empty.")
    if input_dim not in (3, 4):
        raise RuntimeError(desc + f": expected a tensor with 3 or 4 dimensions, but got {input_dim}")
    onesided_ = (fft_size != n_fft) if onesided is None else onesided
    if onesided_ and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(desc + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided_ and n_fft != fft_size:
        raise RuntimeError(desc + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(desc + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(desc + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(desc + ": Invalid window shape. window has to be 1D and length of `win_length`")

    window_ = window if window is not None else ones(win, dtype=real.dtype, device=real.device)
    if win != n_fft:  # centre the window by zero-padding it to n_fft
        left = (n_fft - win) // 2
        window_ = _pad(window_, [left, n_fft - win - left])

    if input_dim == 3:
        x = x.unsqueeze(0)
    x = x.transpose(1, 2)  # (channel, n_frames, fft_size)
    _check_fft_dtype(x)
    norm = _k.BY_ROOT_N if normalized else _k.BY_N
    if return_complex:
        if onesided_:
            raise RuntimeError(_ONESIDED_COMPLEX)
        x = _k._fft_c2c(x, (2,), norm, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided_:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = _k._fft_c2r(x, (2,), norm, n_fft)  # (channel, n_frames, n_fft)

    # overlap-add (PyTorch's unfold_backward): frame f's sample j lands at f * hop + j
    channel = x.shape[0]
    where = (np.arange(n_frames)[:, None] * hop + np.arange(n_fft)).reshape(-1)
    index = tensor(where, dtype=D.int64, device=x.device)
    y_tmp = x * window_.view(1, 1, n_fft)
    y = y_tmp.new_zeros((channel, expected_len)).index_add(1, index, y_tmp.reshape(channel, n_frames * n_fft))
    sq = window_.pow(2).expand(1, n_frames, n_fft)
    envelope = sq.new_zeros((1, expected_len)).index_add(1, index, sq.reshape(1, n_frames * n_fft))

    start = n_fft // 2 if center else 0  # trim the centre padding, or keep `length` samples
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected_len
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    low = envelope.abs().min().lt(1e-11)._array  # a host read, skipped for traced values (compile, vmap)
    if not isinstance(low, jax.core.Tracer) and type(low) is not jax.ShapeDtypeStruct and bool(low):
        raise RuntimeError(desc + f"window overlap add min: 1\n[ {input._storage.device.type.upper()}BoolType{{}} ]")
    y = y / envelope
    if input_dim == 3:
        y = y.squeeze(0)
    if end > expected_len:
        warn_once(_ISTFT_SHORT, _ISTFT_SHORT)
        y = _pad(y, [0, end - expected_len])
    return y


FUNCTIONS = {"stft": stft, "istft": istft}
METHODS = {"stft": stft, "istft": istft}
