"""Parity of ``torch.stft`` / ``torch.istft`` (and the ``Tensor`` methods) with PyTorch 2.13 (CPU): values, dtypes,
shapes, ``grad_fn`` names and gradients (input and window) over a sweep of the options (1-d and batched signals,
default and explicit hop / window / win_length, ``center`` with each ``pad_mode``, ``normalized``, ``onesided``,
complex inputs and windows, ``return_complex=False``, ``align_to_window``, istft's ``length`` and
``return_complex``), round trips, warnings, and errors (exception type and message).
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import run, assert_same_error

Case = Callable[..., Any]

RNG = np.random.default_rng(11)
SIG = RNG.standard_normal((2, 96))
CSIG = RNG.standard_normal((2, 96)) + 1j * RNG.standard_normal((2, 96))
WIN = RNG.uniform(0.5, 1.5, 16)              # a positive window: every overlap-add envelope is non-zero
CWIN = WIN * np.exp(1j * np.linspace(0, 2, 16))
TOL = {"float32": 1e-5, "float64": 1e-10}


def _x(m, dt="float64", rows=None, grad=False, cplx=False):
    arr = CSIG if cplx else SIG
    arr = arr if rows is None else arr[rows]
    dtype = getattr(m, {"float32": "complex64", "float64": "complex128"}[dt] if cplx else dt)
    return m.tensor(arr, dtype=dtype, requires_grad=grad)


def _w(m, dt="float64", n=16, grad=False, cplx=False):
    dtype = getattr(m, {"float32": "complex64", "float64": "complex128"}[dt] if cplx else dt)
    return m.tensor((CWIN if cplx else WIN)[:n], dtype=dtype, requires_grad=grad)


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().resolve_conj().numpy())


def _weighted_sum(out):
    """A loss that weighs every output value differently (real and imaginary parts separately)."""
    mod = ft if isinstance(out, ft.Tensor) else torch
    r = mod.view_as_real(out) if out.is_complex() else out
    w = np.random.default_rng(3).standard_normal(tuple(r.shape))
    return (r * mod.tensor(w, dtype=r.dtype)).sum()


def _compare(case: Case, dt: str, leaves: int) -> None:
    """Same dtype, shape, grad_fn name and values; then the gradients of a weighted sum w.r.t. the first
    ``leaves`` tensors ``case`` returns as its second item."""
    res = {}
    for m in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, inputs = case(m, dt)
        grads = torch.autograd.grad if m is torch else ft.autograd.grad
        res[m] = out, (grads(_weighted_sum(out), inputs[:leaves]) if leaves else ())
    (t, tg), (f, fg) = res[torch], res[ft]
    assert isinstance(f, ft.Tensor)
    assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape), (f.dtype, f.shape, t.dtype, t.shape)
    assert type(f.grad_fn).__name__ == type(t.grad_fn).__name__, (f.grad_fn, t.grad_fn)
    tol = TOL[dt]
    np.testing.assert_allclose(_np(f), _np(t), rtol=tol, atol=tol)
    for a, b in zip(fg, tg):
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


# ---- stft: (case(m, dtype) -> (output, leaves), number of leaves to differentiate) ------------------------------
def _stft(m, dt, rows=0, cplx=False, wgrad=False, wn=16, wcplx=False, window=True, **kw):
    x = _x(m, dt, rows, grad=True, cplx=cplx)
    w = _w(m, dt, wn, grad=wgrad, cplx=wcplx) if window else None
    kw.setdefault("return_complex", True)
    kw.setdefault("win_length", wn if window else None)
    return m.stft(x, 16, window=w, **kw), (x, w)


STFT_CASES: dict[str, tuple[Case, int]] = {
    "1d_defaults": (lambda m, dt: _stft(m, dt), 1),
    "1d_window_grad": (lambda m, dt: _stft(m, dt, wgrad=True), 2),
    "batched": (lambda m, dt: _stft(m, dt, rows=slice(None)), 1),
    "batched_window_grad_hop5": (lambda m, dt: _stft(m, dt, rows=slice(None), wgrad=True, hop_length=5), 2),
    "no_window": (lambda m, dt: _stft(m, dt, window=False), 1),
    "no_window_win_length": (lambda m, dt: _stft(m, dt, window=False, win_length=11), 1),
    "short_window_grad": (lambda m, dt: _stft(m, dt, wn=11, wgrad=True, hop_length=3), 2),
    "pad_constant": (lambda m, dt: _stft(m, dt, pad_mode="constant"), 1),
    "pad_replicate": (lambda m, dt: _stft(m, dt, rows=slice(None), pad_mode="replicate"), 1),
    "pad_circular": (lambda m, dt: _stft(m, dt, pad_mode="circular"), 1),
    "no_center": (lambda m, dt: _stft(m, dt, center=False, hop_length=7), 1),
    "align_to_window": (lambda m, dt: _stft(m, dt, wn=10, center=False, align_to_window=True, wgrad=True), 2),
    "normalized": (lambda m, dt: _stft(m, dt, normalized=True), 1),
    "two_sided": (lambda m, dt: _stft(m, dt, rows=slice(None), onesided=False), 1),
    "return_real": (lambda m, dt: _stft(m, dt, return_complex=False, wgrad=True), 2),
    "complex_input": (lambda m, dt: _stft(m, dt, cplx=True, wgrad=True), 2),
    "complex_input_batched_normalized": (lambda m, dt: _stft(m, dt, rows=slice(None), cplx=True,
                                                             normalized=True, center=False), 1),
    "complex_window": (lambda m, dt: _stft(m, dt, wcplx=True, wgrad=True), 2),
    "complex_return_real": (lambda m, dt: _stft(m, dt, cplx=True, return_complex=False), 1),
    "method": (lambda m, dt: (_x(m, dt, 1, grad=True).stft(16, 6, window=_w(m, dt), return_complex=True), ()), 0),
}


@pytest.mark.parametrize("name", list(STFT_CASES))
def test_stft(name):
    case, leaves = STFT_CASES[name]
    _compare(case, "float64", leaves)


@pytest.mark.parametrize("name", ["batched_window_grad_hop5", "complex_input"])
def test_stft_float32(name):
    case, leaves = STFT_CASES[name]
    _compare(case, "float32", leaves)


def test_stft_mixed_dtypes():
    """A float32 signal with a float64 window computes (and returns) in float64, as the product promotes."""
    _compare(lambda m, dt: (m.stft(_x(m, "float32", 0, grad=True), 16, window=_w(m, "float64", grad=True),
                                   return_complex=True), None), "float32", 0)


# ---- istft ---------------------------------------------------------------------------------------------------------
def _spec(m, dt, rows=0, onesided=None, center=True, normalized=False, cplx=False, wn=16):
    """A leaf spectrogram from torch's stft (the same values for both libraries)."""
    x = torch.tensor(CSIG if cplx else SIG, dtype=getattr(torch, dt))
    if cplx:
        x = x.to({"float32": torch.complex64, "float64": torch.complex128}[dt])
    w = torch.tensor(WIN[:wn], dtype=getattr(torch, dt))
    s = torch.stft(x[rows], 16, window=w, win_length=wn, center=center, normalized=normalized, onesided=onesided,
                   return_complex=True).numpy()
    return m.tensor(s, requires_grad=True)


def _istft(m, dt, rows=0, spec=None, wgrad=False, wn=16, window=True, **kw):
    s = _spec(m, dt, rows, wn=wn, **(spec or {}))
    w = _w(m, dt, wn, grad=wgrad) if window else None
    kw.setdefault("win_length", wn if window else None)
    return m.istft(s, 16, window=w, **kw), (s, w)


ISTFT_CASES: dict[str, tuple[Case, int]] = {
    "1d": (lambda m, dt: _istft(m, dt, wgrad=True), 2),
    "batched": (lambda m, dt: _istft(m, dt, rows=slice(None), wgrad=True), 2),
    "no_window": (lambda m, dt: _istft(m, dt, window=False), 1),
    "short_window": (lambda m, dt: _istft(m, dt, wn=11, spec={}, wgrad=True, hop_length=3), 2),
    "no_center": (lambda m, dt: _istft(m, dt, spec={"center": False}, center=False), 1),
    "normalized": (lambda m, dt: _istft(m, dt, spec={"normalized": True}, normalized=True), 1),
    "length_shorter": (lambda m, dt: _istft(m, dt, length=70), 1),
    "length_longer": (lambda m, dt: _istft(m, dt, rows=slice(None), length=110, wgrad=True), 2),
    "two_sided_real": (lambda m, dt: _istft(m, dt, spec={"onesided": False}), 1),
    "return_complex": (lambda m, dt: _istft(m, dt, spec={"cplx": True}, return_complex=True, wgrad=True), 2),
    "conj_input": (lambda m, dt: (m.istft(_spec(m, dt).conj(), 16, window=_w(m, dt)), ()), 0),
    "method": (lambda m, dt: (_spec(m, dt, 1).istft(16, 4, 16, _w(m, dt), length=90), ()), 0),
}


@pytest.mark.parametrize("name", list(ISTFT_CASES))
def test_istft(name):
    case, leaves = ISTFT_CASES[name]
    _compare(case, "float64", leaves)


@pytest.mark.parametrize("name", ["batched", "return_complex"])
def test_istft_float32(name):
    case, leaves = ISTFT_CASES[name]
    _compare(case, "float32", leaves)


@pytest.mark.parametrize("kw", [{}, {"hop_length": 5, "win_length": 12, "normalized": True},
                                {"center": False, "hop_length": 8, "onesided": False}])
def test_round_trip(kw):
    """``istft(stft(x))`` gives back ``x`` (here with a window whose overlap-add never vanishes)."""
    n = kw.get("win_length", 16)
    x = ft.tensor(SIG, dtype=ft.float64)
    w = ft.tensor(WIN[:n], dtype=ft.float64)
    y = ft.istft(ft.stft(x, 16, window=w, return_complex=True, **kw), 16, window=w, length=96, **kw)
    np.testing.assert_allclose(y.numpy(), SIG, rtol=1e-12, atol=1e-12)


def test_warnings():
    """PyTorch's TORCH_WARN_ONCE texts: shown once per process each."""
    texts = {
        "stft": "A window was not provided. A rectangular window will be applied,which is known to cause spectral "
                "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to "
                "reduce spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
                "`window=torch.ones(n_fft, device=<device>)`.",
        "real": "stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                "still call torch.view_as_real on the complex output to recover the old return format.",
        "istft": "A window was not provided. A rectangular window will be applied.Please provide the same window "
                 "used by stft to make the inversion lossless.To suppress this warning and use a rectangular window, "
                 "explicitly set `window=torch.ones(n_fft, device=<device>)`.",
        "short": "The length of signal is shorter than the length parameter. Result is being padded with zeros in "
                 "the tail. Please check your center and hop_length settings.",
    }
    calls = {
        "stft": lambda m: m.stft(_x(m, rows=0), 16, return_complex=True),
        "real": lambda m: m.stft(_x(m, rows=0), 16, window=_w(m), return_complex=False),
        "istft": lambda m: m.istft(_spec(m, "float64"), 16),
        "short": lambda m: m.istft(_spec(m, "float64"), 16, window=_w(m), length=120),
    }
    ft._warn.WARNED.difference_update(texts.values())  # (warned once per process: let them warn again)
    for key, call in calls.items():
        for m in (torch, ft):
            with warnings.catch_warnings(record=True) as got:
                warnings.simplefilter("always")
                call(m)
                call(m)
            msgs = [str(w.message) for w in got]
            if m is ft:
                assert msgs == [texts[key]], msgs  # once, with PyTorch's text
            else:  # torch warns only if no earlier test in this process triggered it
                assert all(s.startswith(texts[key]) for s in msgs), msgs


# ---- errors: the exception type and message PyTorch gives ---------------------------------------------------------
def _S(m):
    return m.tensor(torch.stft(torch.tensor(SIG[0]), 16, return_complex=True).numpy())


ERROR_CASES: dict[str, Case] = {
    "stft_no_return_complex": lambda m: m.stft(_x(m, rows=0), 16),
    "stft_n_fft_too_big": lambda m: m.stft(_x(m), 120, center=False, return_complex=True),
    "stft_n_fft_zero": lambda m: m.stft(_x(m, rows=0), 0, return_complex=True),
    "stft_hop_zero": lambda m: m.stft(_x(m, rows=0), 16, 0, window=_w(m, "float32"), return_complex=True),
    "stft_win_length": lambda m: m.stft(_x(m, rows=0, cplx=True), 16, win_length=20),
    "stft_window_size": lambda m: m.stft(_x(m), 16, win_length=8, window=_w(m).view(2, 8), return_complex=True),
    "stft_integer_input": lambda m: m.stft(_x(m, rows=0).long(), 16, return_complex=True),
    "stft_3d_input": lambda m: m.stft(_x(m).view(2, 4, 24), 4, return_complex=True),
    "stft_align_with_center": lambda m: m.stft(_x(m), 16, return_complex=True, align_to_window=True),
    "stft_align_odd_window": lambda m: m.stft(_x(m), 16, 1, 9, center=False, align_to_window=True,
                                              return_complex=True),
    "stft_complex_onesided": lambda m: m.stft(_x(m, cplx=True), 16, onesided=True),
    "stft_pad_mode": lambda m: m.stft(_x(m), 16, pad_mode="foo", return_complex=True),
    "stft_reflect_too_short": lambda m: m.stft(_x(m, rows=0)[:8], 32, return_complex=True),
    "stft_half": lambda m: m.stft(_x(m, rows=0).half(), 16, return_complex=True),
    "istft_real_input": lambda m: m.istft(_S(m).real, 16),
    "istft_empty": lambda m: m.istft(_S(m)[:, :0], 16),
    "istft_1d_input": lambda m: m.istft(_S(m)[0], 16),
    "istft_onesided_size": lambda m: m.istft(_S(m), 15, window=_w(m, n=15)),
    "istft_two_sided_size": lambda m: m.istft(_S(m), 16, onesided=False),
    "istft_hop_zero": lambda m: m.istft(_S(m), 16, hop_length=0),
    "istft_hop_too_big": lambda m: m.istft(_S(m), 16, hop_length=20),
    "istft_win_length": lambda m: m.istft(_S(m), 16, win_length=20),
    "istft_window_size": lambda m: m.istft(_S(m), 16, win_length=8, window=_w(m)),
    "istft_onesided_complex": lambda m: m.istft(_S(m), 16, return_complex=True),
    "istft_complex_window": lambda m: m.istft(_S(m), 16, window=_w(m, cplx=True)),
    "istft_nola": lambda m: m.istft(_S(m), 16, window=m.hann_window(16, periodic=False, dtype=m.float64),
                                    center=False),
    "istft_n_fft_type": lambda m: m.istft(_S(m), 16.0),
    "istft_center_type": lambda m: m.istft(_S(m), 16, center=1),
}


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_errors(name):
    (t_out, t_err), (f_out, f_err) = run(ERROR_CASES[name], torch), run(ERROR_CASES[name], ft)
    assert t_err is not None, t_out
    assert_same_error(t_err, f_err, f_out)


def test_argument_types():
    """Non-int sizes and non-bool flags are TypeErrors (PyTorch's overload message for stft is not reproduced)."""
    x = ft.zeros(32)
    for kw in ({"n_fft": 16.0}, {"n_fft": 16, "hop_length": 2.5}, {"n_fft": 16, "normalized": 1},
               {"n_fft": 16, "window": [1.0] * 16}):
        with pytest.raises(TypeError):
            ft.stft(x, return_complex=True, **kw)


def test_autocast_cpu():
    """PyTorch's CPU autocast runs stft in float32 (a bfloat16 signal and window give complex64)."""
    def case(m, dt):
        with m.autocast("cpu", dtype=m.bfloat16):
            x, w = _x(m, dt, 0).to(m.bfloat16), _w(m, dt).to(m.bfloat16)
            return m.stft(x, 16, window=w, return_complex=True), ()
    _compare(case, "float32", 0)
