"""Parity of the window factories (``torch.hann_window`` ... ``kaiser_window``) and of ``torch.signal.windows``
with PyTorch 2.13 (CPU): float16 / bfloat16 windows bit for bit (torch builds them in that dtype), float32 /
float64 values, the factories' overload rules (``alpha`` / ``beta`` only with ``periodic``) and their argument
errors, and every ``torch.signal.windows`` function's signature, values and errors.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import assert_same_outcome

FACTORIES = ("hann_window", "hamming_window", "blackman_window", "bartlett_window")
LENGTHS = list(range(0, 40)) + [255, 256, 1000, 2048, 2049, 3001]


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", FACTORIES)
def test_low_precision_windows_bitwise(name, dt):
    """torch computes arange, mul, cos, mul, add in the window's own dtype (its asymmetric roundings)."""
    extra = [(), (0.6, 0.3)] if name == "hamming_window" else [()]
    for n in LENGTHS:
        for periodic in (True, False):
            for ex in extra:
                t = getattr(torch, name)(n, periodic, *ex, dtype=getattr(torch, dt))
                f = getattr(ft, name)(n, periodic, *ex, dtype=getattr(ft, dt))
                assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape)
                np.testing.assert_array_equal(f.float().numpy(), t.float().numpy(), err_msg=f"{name}({n}, {periodic})")


@pytest.mark.parametrize("dt,tol", [("float32", 1.2e-7), ("float64", 2.3e-16)])
@pytest.mark.parametrize("name", FACTORIES)
def test_windows_float32_float64(name, dt, tol):
    """torch's op sequence in the dtype: within one rounding of torch's cos (Sleef) of the exact values."""
    tol = 0 if name == "bartlett_window" else tol  # (no cos: torch's exactly)
    for n in LENGTHS:
        for periodic in (True, False):
            t = getattr(torch, name)(n, periodic, dtype=getattr(torch, dt)).numpy()
            f = getattr(ft, name)(n, periodic, dtype=getattr(ft, dt)).numpy()
            assert f.dtype == t.dtype and f.shape == t.shape
            np.testing.assert_allclose(f, t, rtol=0, atol=tol)


CALLS = [
    lambda m: m.hamming_window(8, alpha=0.6, beta=0.4),          # alpha / beta without periodic: TypeError
    lambda m: m.hamming_window(8, beta=0.4),
    lambda m: m.hamming_window(8, periodic=True, beta=0.3),      # beta without alpha
    lambda m: m.kaiser_window(6, beta=0.0),
    lambda m: m.bartlett_window(8, beta=1.0),
    lambda m: m.hann_window(8, False, True),
    lambda m: m.hann_window(8, 1),
    lambda m: m.hann_window(8, None),
    lambda m: m.hann_window(8, np.bool_(True)),
    lambda m: m.hann_window(8, periodic=1),
    lambda m: m.hann_window(8, True, periodic=False),
    lambda m: m.hann_window(8, foo=1),
    lambda m: m.hann_window(8, out=None),
    lambda m: m.hann_window(8, dtype="float32"),
    lambda m: m.hann_window(8, requires_grad=1),
    lambda m: m.hann_window(),
    lambda m: m.hann_window(foo=1),
    lambda m: m.hann_window(8.0),
    lambda m: m.hann_window(True),
    lambda m: m.hann_window(window_length=8.0),
    lambda m: m.hann_window(8.0, True),
    lambda m: m.hann_window(m.tensor(5.0)),
    lambda m: m.hann_window(2 ** 63),
    lambda m: m.hamming_window(8, 0.5),
    lambda m: m.hamming_window(8, True, 0.5, 0.5, 0.5),
    lambda m: m.hamming_window(8, True, 1 + 2j),
    lambda m: m.hamming_window(8, True, m.tensor([0.3])),
    lambda m: m.kaiser_window(8, True, "a"),
    lambda m: m.hann_window(5, dtype=m.float8_e4m3fn),
    lambda m: m.hann_window(1, dtype=m.float8_e4m3fn),
]

ACCEPTED = [
    lambda m: m.hamming_window(8, True, alpha=0.6),
    lambda m: m.hamming_window(8, True, 0.6, beta=0.4),
    lambda m: m.hamming_window(8, False, 1),
    lambda m: m.hamming_window(8, False, True),
    lambda m: m.hamming_window(8, False, np.float32(0.25), m.tensor(1)),
    lambda m: m.kaiser_window(6, True, beta=0.0, dtype=m.float64),
    lambda m: m.kaiser_window(6, periodic=False, beta=1.0, dtype=m.float64),
    lambda m: m.hann_window(window_length=8, periodic=False),
    lambda m: m.hann_window(np.int64(5)),
    lambda m: m.hann_window(m.tensor(5), dtype=m.float64),
    lambda m: m.hann_window(8, requires_grad=None, dtype=None),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_factory_overload_errors(i):
    assert_same_outcome(CALLS[i], torch, ft)


def test_factory_overloads_accepted():
    for call in ACCEPTED:
        t, f = call(torch), call(ft)
        assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape)
        tol = 6e-8 if f.dtype is ft.float32 else 1e-15  # (float32 cos: one rounding of torch's Sleef one)
        np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=0, atol=tol)


def test_factory_requires_grad_and_meta():
    t = torch.hann_window(8, False, dtype=torch.float16, requires_grad=True)
    f = ft.hann_window(8, False, dtype=ft.float16, requires_grad=True)
    assert f.requires_grad and f.dtype is ft.float16 and f.is_leaf
    np.testing.assert_array_equal(f.detach().float().numpy(), t.detach().float().numpy())
    m = ft.hamming_window(8, True, 0.5, device="meta")
    assert m.device.type == "meta" and tuple(m.shape) == (8,)
    assert list(inspect.signature(ft.hamming_window).parameters)[:4] == ["window_length", "periodic", "alpha", "beta"]


# ---- torch.signal.windows --------------------------------------------------------------------------------------
NAMES = sorted(n for n in dir(torch.signal.windows) if not n.startswith("_") and n != "windows")
KWS = {"exponential": [{}, {"tau": 2.5}], "gaussian": [{}, {"std": 3.3}], "kaiser": [{}, {"beta": 0.0}, {"beta": 5.5}],
       "general_cosine": [{"a": [0.5, 0.3, 0.2]}, {"a": (0.4,)}], "general_hamming": [{}, {"alpha": 0.6}]}
WTOL = {"float32": 1e-6, "float64": 1e-12}


def test_signal_windows_namespace():
    assert NAMES == sorted(n for n in dir(ft.signal.windows) if not n.startswith("_") and n != "windows")
    assert ft.signal.windows.__all__ == torch.signal.windows.__all__
    for n in NAMES:
        ps = inspect.signature(getattr(torch.signal.windows, n)).parameters
        fs = inspect.signature(getattr(ft.signal.windows, n)).parameters
        assert [(p.name, p.kind, p.default) for p in fs.values() if p.name != "layout"] == \
            [(p.name, p.kind, p.default) for p in ps.values() if p.name != "layout"], n


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_signal_windows_values(name, dt):
    tol = WTOL[dt] * (2 if name == "kaiser" and dt == "float32" else 1)  # (i0's float32 rounding)
    for m in (0, 1, 2, 3, 6, 7, 16, 257):
        for sym in (True, False):
            kws = KWS.get(name, [{}]) + ([{"center": 1.5}] if name == "exponential" and not sym else [])
            for kw in kws:
                t = getattr(torch.signal.windows, name)(m, sym=sym, dtype=getattr(torch, dt), **kw)
                f = getattr(ft.signal.windows, name)(m, sym=sym, dtype=getattr(ft, dt), **kw)
                assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape)
                np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=0, atol=tol, err_msg=f"{name}({m}, {sym}, {kw})")


def test_signal_windows_default_dtype_and_grad():
    for name in NAMES:
        kw = KWS.get(name, [{}])[0]
        t = getattr(torch.signal.windows, name)(6, requires_grad=True, **kw)
        f = getattr(ft.signal.windows, name)(6, requires_grad=True, **kw)
        assert str(f.dtype) == str(t.dtype) and f.requires_grad == t.requires_grad
        assert (f.grad_fn is None) == (t.grad_fn is None), name
    f = ft.signal.windows.gaussian(4, device="meta")
    assert f.device.type == "meta" and tuple(f.shape) == (4,)


ERRS = [
    lambda s, m: s.hann(-1),
    lambda s, m: s.blackman(-3),
    lambda s, m: s.kaiser(-2),
    lambda s, m: s.gaussian(5, std=0),
    lambda s, m: s.gaussian(5, std=-1.0),
    lambda s, m: s.exponential(5, tau=0),
    lambda s, m: s.exponential(5, center=1.0),
    lambda s, m: s.kaiser(5, beta=-1.0),
    lambda s, m: s.hann(5, dtype=m.float16),
    lambda s, m: s.cosine(5, dtype=m.bfloat16),
    lambda s, m: s.bartlett(5, dtype=m.int64),
    lambda s, m: s.hann(-1, dtype=m.float16),
    lambda s, m: s.general_cosine(5, a=3),
    lambda s, m: s.general_cosine(5, a=[]),
    lambda s, m: s.general_cosine(5),
    lambda s, m: s.hann(5, layout=m.sparse_coo),
    lambda s, m: s.nuttall(0, layout=None),
    lambda s, m: s.hann(5, True),
    lambda s, m: s.kaiser(5, 3.0),
    lambda s, m: s.hann(),
    lambda s, m: s.hann(5, foo=1),
    lambda s, m: s.general_cosine(1, a=[]),
    lambda s, m: s.exponential(1, sym=False, center=0.5),
]


@pytest.mark.parametrize("i", range(len(ERRS)))
def test_signal_windows_errors(i):
    assert_same_outcome(lambda m: ERRS[i](m.signal.windows, m), torch, ft)
