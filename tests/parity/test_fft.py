"""Parity of ``functorch_lite.fft`` with ``torch.fft`` (PyTorch 2.13, CPU): values in float32 and float64 (odd and
even lengths, ``n`` padding and cropping, every ``norm``, multi-dim ``s``/``dim``), result dtypes and conjugate
bits, ``grad_fn`` names and gradients (real and complex leaves, PyTorch's conjugate convention), ``out=``,
``fftfreq``/``rfftfreq``/``fftshift``/``ifftshift``, errors (type and message), and a compiled rfft/irfft.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import run, assert_same_error, assert_same_outcome

Case = Callable[..., Any]

RNG = np.random.default_rng(5)
A = RNG.standard_normal((4, 5))          # odd last dim
B = RNG.standard_normal((3, 6))          # even last dim
C = RNG.standard_normal((4, 5)) + 1j * RNG.standard_normal((4, 5))
V = RNG.standard_normal((2, 3, 2, 4))    # four dims: transforms over more than three of them

CDT = {"float32": "complex64", "float64": "complex128"}


def a(m, dt, arr=A):
    return m.tensor(arr, dtype=getattr(m, dt))


def c(m, dt, arr=C):
    return m.tensor(arr, dtype=getattr(m, CDT[dt]))


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().resolve_conj().resolve_neg().numpy())


def assert_close(f, t, dt: str) -> None:
    """Same dtype, shape and conjugate bit; values within the dtype's FFT rounding."""
    assert isinstance(f, ft.Tensor), type(f)
    assert str(f.dtype) == str(t.dtype), (f.dtype, t.dtype)
    assert tuple(f.shape) == tuple(t.shape), (f.shape, t.shape)
    assert f.is_conj() == t.is_conj()
    tol = 1e-12 if dt in ("float64", "complex128") else 2e-5
    tn = _np(t)
    scale = max(1.0, float(np.max(np.abs(tn)))) if tn.size else 1.0
    np.testing.assert_allclose(_np(f), tn, rtol=tol, atol=tol * scale)


# ---- values, dtypes, conjugate bits: float32 and float64 ------------------------------------------------------
VALUE_CASES: dict[str, Case] = {
    "fft_real_odd": lambda m, dt: m.fft.fft(a(m, dt)),
    "fft_real_even": lambda m, dt: m.fft.fft(a(m, dt, B)),
    "fft_complex": lambda m, dt: m.fft.fft(c(m, dt)),
    "fft_pad_dim0": lambda m, dt: m.fft.fft(a(m, dt), n=7, dim=0),
    "fft_crop": lambda m, dt: m.fft.fft(c(m, dt), n=3),
    "fft_ortho_positional": lambda m, dt: m.fft.fft(a(m, dt), 6, 0, "ortho"),
    "fft_forward": lambda m, dt: m.fft.fft(c(m, dt), norm="forward"),
    "fft_noncontiguous": lambda m, dt: m.fft.fft(a(m, dt).t()),
    "ifft_real": lambda m, dt: m.fft.ifft(a(m, dt, B)),
    "ifft_real_ortho_pad": lambda m, dt: m.fft.ifft(a(m, dt), n=8, norm="ortho"),
    "ifft_complex_forward": lambda m, dt: m.fft.ifft(c(m, dt), norm="forward", dim=0),
    "rfft_odd": lambda m, dt: m.fft.rfft(a(m, dt)),
    "rfft_even_ortho": lambda m, dt: m.fft.rfft(a(m, dt, B), norm="ortho"),
    "rfft_pad_forward": lambda m, dt: m.fft.rfft(a(m, dt), n=8, norm="forward"),
    "irfft_default_n": lambda m, dt: m.fft.irfft(c(m, dt)),
    "irfft_odd_n": lambda m, dt: m.fft.irfft(c(m, dt), n=9),
    "irfft_crop_ortho": lambda m, dt: m.fft.irfft(c(m, dt), n=4, norm="ortho"),
    "irfft_real_input_dim0": lambda m, dt: m.fft.irfft(a(m, dt), dim=0, norm="forward"),
    "irfft_roundtrip": lambda m, dt: m.fft.irfft(m.fft.rfft(a(m, dt)), n=5),
    "hfft": lambda m, dt: m.fft.hfft(c(m, dt)),
    "hfft_odd_ortho": lambda m, dt: m.fft.hfft(c(m, dt), n=7, norm="ortho"),
    "hfft_forward_real": lambda m, dt: m.fft.hfft(a(m, dt), norm="forward"),
    "ihfft": lambda m, dt: m.fft.ihfft(a(m, dt)),
    "ihfft_even_pad": lambda m, dt: m.fft.ihfft(a(m, dt, B), n=10, norm="ortho"),
    "fft2": lambda m, dt: m.fft.fft2(a(m, dt)),
    "fft2_s": lambda m, dt: m.fft.fft2(c(m, dt), s=(3, 8), norm="ortho"),
    "ifft2_dims": lambda m, dt: m.fft.ifft2(a(m, dt), dim=(1, 0), norm="forward"),
    "rfft2": lambda m, dt: m.fft.rfft2(a(m, dt, B)),
    "rfft2_s_minus1": lambda m, dt: m.fft.rfft2(a(m, dt), s=(-1, 7)),
    "irfft2": lambda m, dt: m.fft.irfft2(c(m, dt)),
    "irfft2_s_ortho": lambda m, dt: m.fft.irfft2(c(m, dt), s=(5, 5), norm="ortho"),
    "fftn_all": lambda m, dt: m.fft.fftn(a(m, dt)),
    "fftn_s_only": lambda m, dt: m.fft.fftn(c(m, dt), s=(6,)),
    "fftn_four_dims": lambda m, dt: m.fft.fftn(a(m, dt, V), norm="ortho"),
    "fftn_no_dims": lambda m, dt: m.fft.fftn(a(m, dt), dim=()),
    "fftn_0d": lambda m, dt: m.fft.fftn(m.tensor(2.5, dtype=getattr(m, dt))),
    "ifftn_int_dim": lambda m, dt: m.fft.ifftn(c(m, dt), dim=1),
    "rfftn_dims_reversed": lambda m, dt: m.fft.rfftn(a(m, dt), dim=(1, 0)),
    "rfftn_four_dims": lambda m, dt: m.fft.rfftn(a(m, dt, V), s=(2, 4, 3, 5), norm="forward"),
    "irfftn": lambda m, dt: m.fft.irfftn(c(m, dt), s=(4, 6)),
    "irfftn_four_dims": lambda m, dt: m.fft.irfftn(a(m, dt, V)),
    "hfftn": lambda m, dt: m.fft.hfftn(c(m, dt), norm="ortho"),
    "hfft2_s": lambda m, dt: m.fft.hfft2(c(m, dt), s=(3, 7)),
    "ihfftn_one_dim": lambda m, dt: m.fft.ihfftn(a(m, dt), dim=0),
    "ihfft2": lambda m, dt: m.fft.ihfft2(a(m, dt, B), norm="forward"),
    "ihfftn_all": lambda m, dt: m.fft.ihfftn(a(m, dt, V)),
    "fftshift_all": lambda m, dt: m.fft.fftshift(a(m, dt)),
    "fftshift_dim": lambda m, dt: m.fft.fftshift(c(m, dt), dim=-1),
    "ifftshift_dims_repeated": lambda m, dt: m.fft.ifftshift(a(m, dt, B), dim=(1, 1)),
}


FLOAT32 = {"fft_real_odd", "fft_complex", "fft_pad_dim0", "ifft_real", "rfft_even_ortho", "irfft_odd_n", "hfft",
           "ihfft", "fft2_s", "rfft2", "irfft2", "fftn_four_dims", "rfftn_dims_reversed", "irfftn", "hfftn",
           "ihfft2"}


BOTH = {"fft_real_odd", "fft_complex", "irfft_odd_n", "rfft2", "hfftn", "fftn_four_dims"}


# each case in one dtype (float32 for FLOAT32, else float64); the BOTH cases in the two
@pytest.mark.parametrize("name,dt", [(n, "float32" if n in FLOAT32 else "float64") for n in sorted(VALUE_CASES)] +
                         [(n, "float64") for n in sorted(BOTH)])
def test_values(name: str, dt: str) -> None:
    fn = VALUE_CASES[name]
    assert_close(fn(ft, dt), fn(torch, dt), dt)


# ---- dtypes: promotion of integers/bool, unsupported CPU dtypes, the default dtype -------------------------------
DTYPE_CASES: dict[str, Case] = {
    "fft_int64": lambda m: m.fft.fft(m.tensor([1, 2, 3, 4])),
    "rfft_bool": lambda m: m.fft.rfft(m.tensor([True, False, True])),
    "irfft_int32": lambda m: m.fft.irfft(m.tensor([1, 2, 3], dtype=m.int32)),
    "hfft_uint8": lambda m: m.fft.hfft(m.tensor([1, 2, 3], dtype=m.uint8)),
    "ihfft_int64": lambda m: m.fft.ihfft(m.tensor([1, 2, 3, 4])),
    "fftn_int64": lambda m: m.fft.fftn(m.ones(2, 4, dtype=m.int64)),
    "fftn_int64_no_dims": lambda m: m.fft.fftn(m.ones(2, 4, dtype=m.int64), dim=()),
    "fft2_complex128": lambda m: m.fft.fft2(m.ones(2, 4, dtype=m.complex128)),
    "irfft_complex128": lambda m: m.fft.irfft(m.ones(3, dtype=m.complex128)),
    "fft_float16": lambda m: m.fft.fft(m.ones(4, dtype=m.float16)),
    "rfft_bfloat16": lambda m: m.fft.rfft(m.ones(4, dtype=m.bfloat16)),
    "irfftn_float16": lambda m: m.fft.irfftn(m.ones(2, 4, dtype=m.float16)),
    "ihfft2_bfloat16": lambda m: m.fft.ihfft2(m.ones(2, 4, dtype=m.bfloat16)),
    "fft_float8": lambda m: m.fft.fft(m.ones(4).to(m.float8_e4m3fn)),
    "fftshift_float8": lambda m: m.fft.fftshift(m.arange(4.).to(m.float8_e4m3fn)).float(),
    "fftshift_int": lambda m: m.fft.fftshift(m.arange(5)),
    "ifftshift_int": lambda m: m.fft.ifftshift(m.arange(6).view(2, 3)),
}


def _same_outcome(fn: Case) -> None:
    (t_out, t_err), (f_out, f_err) = run(fn, torch), run(fn, ft)
    if t_err is not None:
        assert_same_error(t_err, f_err, f_out)
        return
    assert f_err is None, f"functorch_lite raised {f_err!r}"
    assert_close(f_out, t_out, "float32")


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
def test_dtypes(name: str) -> None:
    _same_outcome(DTYPE_CASES[name])


def test_integer_input_follows_default_dtype() -> None:
    for m in (torch, ft):
        m.set_default_dtype(m.float64)
    try:
        for name in ("fft_int64", "irfft_int32", "ihfft_int64"):
            _same_outcome(DTYPE_CASES[name])
    finally:
        for m in (torch, ft):
            m.set_default_dtype(m.float32)


AUTOCAST_CASES: dict[str, Case] = {
    "rfft_bf16": lambda m: m.fft.rfft(m.tensor(B, dtype=m.bfloat16)),
    "irfft2_half": lambda m: m.fft.irfft2(m.tensor(A, dtype=m.float16)),
    "fftn_bf16": lambda m: m.fft.fftn(m.tensor(B, dtype=m.bfloat16), norm="ortho"),
    "ifft_float64_kept": lambda m: m.fft.ifft(m.tensor(A, dtype=m.float64)),
    "hfftn_not_on_the_list": lambda m: m.fft.hfftn(m.tensor(A, dtype=m.bfloat16)),
    "ihfft2_not_on_the_list": lambda m: m.fft.ihfft2(m.tensor(A, dtype=m.bfloat16)),
    "fftshift_not_on_the_list": lambda m: m.fft.fftshift(m.tensor(A, dtype=m.bfloat16)).float(),
}


@pytest.mark.parametrize("name", sorted(AUTOCAST_CASES))
def test_autocast_runs_transforms_in_float32(name: str) -> None:
    def under_autocast(m):
        with m.autocast("cpu", dtype=m.bfloat16):
            return AUTOCAST_CASES[name](m)
    _same_outcome(under_autocast)


def test_autocast_cast_is_recorded() -> None:
    grads = []
    for m in (torch, ft):
        x = m.ones(8, dtype=m.bfloat16, requires_grad=True)
        with m.autocast("cpu", dtype=m.bfloat16):
            y = m.fft.rfft(x)
        assert y.dtype == m.complex64 and y.grad_fn.next_functions[0][0].name() == "ToCopyBackward0"
        m.view_as_real(y).sum().backward()
        assert x.grad.dtype == m.bfloat16
        grads.append(x.grad.float().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-2, atol=1e-2)


# ---- grad_fn names and gradients ---------------------------------------------------------------------------------
# kind "r": a real (4, 5) leaf; "c": a complex one. The output is reduced against fixed weights, so every
# gradient entry is checked (complex leaves: PyTorch's conjugate convention).
GRAD_CASES: dict[str, tuple[str, Case]] = {
    "fft_real": ("r", lambda m, x: m.fft.fft(x)),
    "fft_complex_crop": ("c", lambda m, x: m.fft.fft(x, n=3, dim=0)),
    "ifft_real": ("r", lambda m, x: m.fft.ifft(x)),
    "rfft_even_pad": ("r", lambda m, x: m.fft.rfft(x, n=8, norm="ortho")),
    "irfft_odd": ("c", lambda m, x: m.fft.irfft(x, n=9, norm="forward")),
    "irfft_real_leaf": ("r", lambda m, x: m.fft.irfft(x, n=6)),
    "hfft": ("c", lambda m, x: m.fft.hfft(x, n=7)),
    "ihfft": ("r", lambda m, x: m.fft.ihfft(x)),
    "fft2_real": ("r", lambda m, x: m.fft.fft2(x, s=(3, 6))),
    "ifftn_complex": ("c", lambda m, x: m.fft.ifftn(x, norm="ortho")),
    "rfft2": ("r", lambda m, x: m.fft.rfft2(x, norm="forward")),
    "irfft2": ("c", lambda m, x: m.fft.irfft2(x, s=(4, 7))),
    "hfftn": ("c", lambda m, x: m.fft.hfftn(x)),
    "ihfftn_one_dim": ("r", lambda m, x: m.fft.ihfftn(x, dim=0)),
    "ihfft2": ("r", lambda m, x: m.fft.ihfft2(x)),
    "fftshift": ("c", lambda m, x: m.fft.fftshift(x)),
}


def _grad_run(m, kind, fn, dt):
    x = (c(m, dt) if kind == "c" else a(m, dt)).requires_grad_()
    y = fn(m, x)
    name = y.grad_fn.name() if y.grad_fn is not None else None
    w = np.cos(np.arange(y.numel())).reshape(tuple(y.shape))
    if y.is_complex():
        wc = m.tensor(w + 0.5j * np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
        (y * wc).sum().real.backward()
    else:
        (y * m.tensor(w, dtype=y.dtype)).sum().backward()
    return name, y, x.grad


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients(name: str) -> None:
    kind, fn = GRAD_CASES[name]
    dt = "float64"
    t_name, t_y, t_g = _grad_run(torch, kind, fn, dt)
    f_name, f_y, f_g = _grad_run(ft, kind, fn, dt)
    assert f_name == t_name
    assert_close(f_y, t_y, dt)
    assert_close(f_g, t_g, dt)


@pytest.mark.parametrize("name", ["rfft_even_pad", "irfft_odd"])
def test_gradients_float32(name: str) -> None:
    kind, fn = GRAD_CASES[name]
    (t_name, _, t_g), (f_name, _, f_g) = (_grad_run(m, kind, fn, "float32") for m in (torch, ft))
    assert f_name == t_name
    assert_close(f_g, t_g, "float32")


def test_grad_chain_of_a_padded_transform() -> None:
    """Resizing is recorded as PyTorch records it: a slice or a constant pad feeding the FFT node."""
    chains = (
        (lambda m, x: m.fft.fft(x, n=8), "ConstantPadNdBackward0"),
        (lambda m, x: m.fft.fft(x, n=3), "SliceBackward0"),
        (lambda m, x: m.fft.fftn(x), "ToCopyBackward0"),
        (lambda m, x: m.fft.ifft(x), "FftR2CBackward0"),
        (lambda m, x: m.fft.hfft(x), "ConjBackward0"),
    )
    for fn, inner in chains:
        for m in (torch, ft):
            y = fn(m, m.ones(2, 5, requires_grad=True))
            assert y.grad_fn.next_functions[0][0].name() == inner, (m.__name__, inner)


# ---- out= ------------------------------------------------------------------------------------------------------
OUT_CASES: dict[str, Case] = {
    "fft": lambda m: m.fft.fft(a(m, "float32"), out=m.empty(0, dtype=m.complex64)),
    "fft_upcast": lambda m: m.fft.fft(c(m, "float32"), out=m.empty(0, dtype=m.complex128)),
    "ifft_real": lambda m: m.fft.ifft(a(m, "float32"), out=m.empty(0, dtype=m.complex64)),
    "rfft": lambda m: m.fft.rfft(a(m, "float64"), out=m.empty(0, dtype=m.complex128)),
    "irfft": lambda m: m.fft.irfft(c(m, "float32"), out=m.empty(0)),
    "irfft_to_double": lambda m: m.fft.irfft(c(m, "float32"), out=m.empty(0, dtype=m.float64)),
    "hfft": lambda m: m.fft.hfft(c(m, "float64"), out=m.empty(0, dtype=m.float64)),
    "ihfft": lambda m: m.fft.ihfft(a(m, "float32"), out=m.empty(0, dtype=m.complex64)),
    "fft2": lambda m: m.fft.fft2(a(m, "float32"), out=m.empty(0, dtype=m.complex64)),
    "rfftn": lambda m: m.fft.rfftn(a(m, "float32"), out=m.empty(0, dtype=m.complex64)),
    "irfft2": lambda m: m.fft.irfft2(c(m, "float32"), out=m.empty(0)),
    "hfftn": lambda m: m.fft.hfftn(c(m, "float32"), out=m.empty(0)),
    "ihfft2": lambda m: m.fft.ihfft2(a(m, "float32"), out=m.empty(0, dtype=m.complex128)),
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out(name: str) -> None:
    t, f = OUT_CASES[name](torch), OUT_CASES[name](ft)
    assert_close(f, t, "float32")


def test_out_is_written_and_returned() -> None:
    for m in (torch, ft):
        o = m.empty(0, dtype=m.complex64)
        r = m.fft.rfft(m.tensor([1., 2., 3., 4.]), out=o)
        assert r is o and o.shape == (3,)
        np.testing.assert_allclose(o.numpy(), [10, -2 + 2j, -2])


# ---- fftfreq / rfftfreq (exact values) ----------------------------------------------------------------------------
FREQ_CASES: dict[str, Case] = {
    "fftfreq_odd": lambda m: m.fft.fftfreq(5),
    "fftfreq_even_d": lambda m: m.fft.fftfreq(8, 0.1),
    "fftfreq_float64": lambda m: m.fft.fftfreq(7, d=0.3, dtype=m.float64),
    "fftfreq_float16": lambda m: m.fft.fftfreq(9, dtype=m.float16),
    "fftfreq_bfloat16": lambda m: m.fft.fftfreq(9, 3.0, dtype=m.bfloat16),
    "fftfreq_zero": lambda m: m.fft.fftfreq(0),
    "fftfreq_one": lambda m: m.fft.fftfreq(1),
    "fftfreq_d_zero": lambda m: m.fft.fftfreq(5, d=0),
    "fftfreq_negative_d": lambda m: m.fft.fftfreq(3, d=-0.5),
    "fftfreq_tensor_d": lambda m: m.fft.fftfreq(n=3, d=m.tensor(2.)),
    "fftfreq_requires_grad": lambda m: m.fft.fftfreq(4, requires_grad=True).requires_grad,
    "fftfreq_out": lambda m: m.fft.fftfreq(4, out=m.empty(4, dtype=m.float64)),
    "rfftfreq_odd": lambda m: m.fft.rfftfreq(7),
    "rfftfreq_even": lambda m: m.fft.rfftfreq(6, 0.1),
    "rfftfreq_zero": lambda m: m.fft.rfftfreq(0),
    "rfftfreq_minus_one": lambda m: m.fft.rfftfreq(-1),
    "rfftfreq_minus_three": lambda m: m.fft.rfftfreq(-3),
    "rfftfreq_float64_grad": lambda m: m.fft.rfftfreq(n=4, d=0.5, dtype=m.float64, requires_grad=True).detach(),
    "fftshift_of_fftfreq": lambda m: m.fft.fftshift(m.fft.fftfreq(6)),
}


@pytest.mark.parametrize("name", sorted(FREQ_CASES))
def test_freqs(name: str) -> None:
    assert_same_outcome(FREQ_CASES[name], torch, ft)


# ---- errors: exception type and message ---------------------------------------------------------------------------
X = np.ones((2, 5), dtype=np.float32)
Z = np.ones((2, 5), dtype=np.complex64)


def x(m):
    return m.tensor(X)


def z(m):
    return m.tensor(Z)


ERROR_CASES: dict[str, Case] = {
    "fft_dim_range": lambda m: m.fft.fft(x(m), dim=2),
    "fft_dim_negative_range": lambda m: m.fft.fft(z(m), dim=-3),
    "fft_0d": lambda m: m.fft.fft(m.tensor(1.)),
    "fft_n_zero": lambda m: m.fft.fft(x(m), n=0),
    "ifft_n_negative": lambda m: m.fft.ifft(z(m), n=-1),
    "fft_empty": lambda m: m.fft.fft(m.ones(0)),
    "fft_bad_norm": lambda m: m.fft.fft(x(m), norm="bad"),
    "ifft_bad_norm_complex": lambda m: m.fft.ifft(z(m), norm="Ortho"),
    "fft_n_before_norm": lambda m: m.fft.fft(x(m), norm="bad", n=0),
    "fft_dim_before_n": lambda m: m.fft.fft(x(m), n=0, dim=4),
    "fft_half_before_dim": lambda m: m.fft.fft(m.ones(3, dtype=m.float16), dim=5),
    "rfft_complex": lambda m: m.fft.rfft(z(m)),
    "ihfft_complex": lambda m: m.fft.ihfft(m.ones(3, dtype=m.complex128)),
    "irfft_one_point": lambda m: m.fft.irfft(m.ones(1, 1)),
    "hfft_empty": lambda m: m.fft.hfft(m.ones(0)),
    "irfft_half_norm": lambda m: m.fft.irfft(m.ones(3, dtype=m.float16), norm="bad"),
    "fft_dim_tuple": lambda m: m.fft.fft(x(m), dim=(0, 1)),
    "fft_dim_none": lambda m: m.fft.fft(x(m), dim=None),
    "fft_n_float": lambda m: m.fft.fft(x(m), n=3.0),
    "fft_n_bool": lambda m: m.fft.fft(x(m), n=True),
    "fft_norm_int": lambda m: m.fft.fft(x(m), norm=1),
    "fft_not_tensor": lambda m: m.fft.fft(3),
    "fftn_s_floats": lambda m: m.fft.fftn(x(m), s=[2.0]),
    "fftn_dim_floats": lambda m: m.fft.fftn(x(m), dim=[0.0]),
    "fft2_dims_repeated": lambda m: m.fft.fft2(x(m), dim=(0, 0)),
    "fft2_dim_range": lambda m: m.fft.fft2(x(m), dim=(0, 2)),
    "fft2_s_length": lambda m: m.fft.fft2(x(m), s=(3,)),
    "fft2_s_int": lambda m: m.fft.fft2(x(m), s=4),
    "fft2_empty_s": lambda m: m.fft.fft2(x(m), s=()),
    "fft2_1d_input": lambda m: m.fft.fft2(m.ones(3)),
    "fft2_0d": lambda m: m.fft.fft2(m.tensor(1.)),
    "fftn_s_too_long": lambda m: m.fft.fftn(x(m), s=(3, 4, 5)),
    "fftn_s_dim_length": lambda m: m.fft.fftn(x(m), s=(3, 4), dim=(0,)),
    "fftn_s_zero": lambda m: m.fft.fftn(x(m), s=(0, 4)),
    "fftn_s_minus_two": lambda m: m.fft.ifftn(z(m), s=(3, -2)),
    "fftn_bad_norm_no_dims": lambda m: m.fft.fftn(x(m), norm="bad", dim=()),
    "fftn_half": lambda m: m.fft.fftn(m.ones(2, 4, dtype=m.float16), norm="bad"),
    "rfftn_complex": lambda m: m.fft.rfftn(z(m), dim=(0, 5)),
    "rfft2_complex": lambda m: m.fft.rfft2(z(m)),
    "rfftn_no_axis": lambda m: m.fft.rfftn(x(m), dim=()),
    "rfftn_0d": lambda m: m.fft.rfftn(m.tensor(1.)),
    "irfftn_no_axis": lambda m: m.fft.irfftn(z(m), dim=(), norm="bad"),
    "irfft2_one_point": lambda m: m.fft.irfft2(m.ones(1, 1)),
    "hfft2_no_axis": lambda m: m.fft.hfft2(x(m), dim=()),
    "ihfftn_no_axis": lambda m: m.fft.ihfftn(z(m), s=()),
    "ihfftn_complex": lambda m: m.fft.ihfftn(z(m)),
    "ihfftn_norm_before_complex": lambda m: m.fft.ihfftn(z(m), norm="bad"),
    "ihfftn_dims_before_complex": lambda m: m.fft.ihfftn(z(m), dim=(0, 0)),
    "out_not_tensor": lambda m: m.fft.rfft2(x(m), out=[1]),
    "fftfreq_out_not_tensor": lambda m: m.fft.fftfreq(3, out=2),
    "out_r2c_real": lambda m: m.fft.fft(x(m), out=m.empty(0)),
    "out_r2c_before_dtype": lambda m: m.fft.rfft(m.ones(3, dtype=m.float16), out=m.empty(0)),
    "out_c2c_long": lambda m: m.fft.fft(z(m), out=m.empty(0, dtype=m.int64)),
    "out_c2c_after_dim": lambda m: m.fft.fft(z(m), out=m.empty(0), dim=5),
    "out_c2r_complex": lambda m: m.fft.irfft(x(m), out=m.empty(0, dtype=m.complex128), norm="bad"),
    "out_hfft2_complex": lambda m: m.fft.hfft2(x(m), out=m.empty(0, dtype=m.complex64)),
    "out_irfftn_long": lambda m: m.fft.irfftn(x(m), out=m.empty(0, dtype=m.int64)),
    "out_fftn_real": lambda m: m.fft.ifftn(z(m), out=m.empty(0)),
    "out_rfftn_after_norm": lambda m: m.fft.rfftn(x(m), out=m.empty(0), norm="bad"),
    "out_ihfft_dtype": lambda m: m.fft.ihfft(x(m), out=m.empty(0, dtype=m.complex128)),
    "out_ifft_dtype": lambda m: m.fft.ifft(x(m).double(), out=m.empty(0, dtype=m.complex64)),
    "out_requires_grad_r2c": lambda m: m.fft.fft(m.ones(3, requires_grad=True), out=m.empty(3, dtype=m.complex64)),
    "out_requires_grad_c2c": lambda m: m.fft.fft2(m.ones(3, 3, requires_grad=True),
                                                  out=m.empty(3, 3, dtype=m.complex64)),
    "out_requires_grad_c2r": lambda m: m.fft.irfft(m.ones(3, requires_grad=True), out=m.empty(4)),
    "fftfreq_int_dtype": lambda m: m.fft.fftfreq(5, dtype=m.int64),
    "rfftfreq_bool_dtype": lambda m: m.fft.rfftfreq(5, dtype=m.bool),
    "fftfreq_complex": lambda m: m.fft.fftfreq(5, dtype=m.complex64),
    "fftfreq_float8": lambda m: m.fft.fftfreq(3, dtype=m.float8_e4m3fn),
    "fftfreq_negative": lambda m: m.fft.fftfreq(-1),
    "rfftfreq_negative": lambda m: m.fft.rfftfreq(-5),
    "fftfreq_float_n": lambda m: m.fft.fftfreq(5.0),
    "fftfreq_str_d": lambda m: m.fft.fftfreq(3, d="a"),
    "fftfreq_out_dtype": lambda m: m.fft.fftfreq(4, out=m.empty(4, dtype=m.float64), dtype=m.float32),
    "fftfreq_out_int": lambda m: m.fft.fftfreq(4, out=m.empty(4, dtype=m.int64)),
    "fftshift_0d": lambda m: m.fft.fftshift(m.tensor(1.)),
    "fftshift_0d_dim": lambda m: m.fft.fftshift(m.tensor(1.), dim=0),
    "ifftshift_no_dims": lambda m: m.fft.ifftshift(x(m), dim=()),
    "fftshift_dim_range": lambda m: m.fft.fftshift(x(m), dim=5),
    "fftshift_not_tensor": lambda m: m.fft.fftshift(3),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors(name: str) -> None:
    (_, t_err), (f_out, f_err) = run(ERROR_CASES[name], torch), run(ERROR_CASES[name], ft)
    assert t_err is not None, "the case must raise in torch"
    assert_same_error(t_err, f_err, f_out)


# ---- the module's surface ------------------------------------------------------------------------------------------
def test_module_surface() -> None:
    assert ft.fft.__all__ == torch.fft.__all__
    for n in ("hfft2", "ihfft2", "hfftn", "ihfftn"):
        assert callable(getattr(ft.fft, n)) and callable(getattr(torch.fft, n))
    assert not callable(ft.fft) and ft.fft.__name__ == "functorch_lite.fft"
    assert not hasattr(ft.Tensor, "fft") and not hasattr(torch.Tensor, "fft")


# ---- compiled ------------------------------------------------------------------------------------------------------
def _lowpass(m, x, keep):
    spec = m.fft.rfft(x, norm="ortho")
    return m.fft.irfft(spec * keep, n=x.shape[-1], norm="ortho")


def test_compiled_rfft_irfft_matches_eager_and_torch() -> None:
    sig = RNG.standard_normal((3, 16)).astype(np.float32)
    keep = (np.arange(9) < 4).astype(np.float32)
    compiled = ft.compile(lambda x, k: _lowpass(ft, x, k))
    xs, ks = ft.tensor(sig), ft.tensor(keep)
    eager = _lowpass(ft, xs, ks)
    got = compiled(xs, ks)
    np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-6, atol=1e-6)
    ref = _lowpass(torch, torch.tensor(sig), torch.tensor(keep))
    assert_close(got, ref, "float32")

    def step(x, k):
        loss = (_lowpass(ft, x, k) ** 2).sum()
        loss.backward()
        return loss

    xg = ft.tensor(sig, requires_grad=True)
    loss = ft.compile(step)(xg, ks)
    tx = torch.tensor(sig, requires_grad=True)
    tloss = (_lowpass(torch, tx, torch.tensor(keep)) ** 2).sum()
    tloss.backward()
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
    assert_close(xg.grad, tx.grad, "float32")
