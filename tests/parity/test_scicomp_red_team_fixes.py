"""Fixes from the scientific-computing red team (histc binning, cdist p=inf ties, exp2, float32 cumulative sums,
complex abs, cosine_similarity overflow, empty matrix norms, histogram out=, cumsum / gradient errors, warnings):
each against real torch 2.13."""

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same, same_rounded, warnings_of

INF, NAN = float("inf"), float("nan")


def _exact(fn):
    """``fn(torch)`` and ``fn(functorch_lite)``: tensors (or lists of them) of the same dtype and the same values,
    bit for bit (NaN equal to NaN)."""
    t, f = fn(torch), fn(ft)
    for a, b in zip(t if isinstance(t, (list, tuple)) else [t], f if isinstance(f, (list, tuple)) else [f]):
        assert str(b.dtype) == str(a.dtype) and tuple(b.shape) == tuple(a.shape)
        conv = (lambda x: x.float()) if a.dtype == torch.bfloat16 else (lambda x: x)
        np.testing.assert_array_equal(conv(b).detach().numpy(), conv(a).detach().numpy())


def _histc(t):
    x = (t.arange(3000) * 7 % 1000).float() / 100
    out = [t.histc(t.tensor([0.3, 0.6, 0.7], dtype=t.float64), bins=10, min=0, max=1),
           t.histc(t.tensor([-0.8, 0.8, 1.6, 2.4]), bins=10, min=-4, max=4),
           t.histc(t.tensor([0.1, 0.2, 0.3, 0.7, 0.9]), bins=10, min=0, max=1)]
    for dt in (t.float32, t.float64, t.float16):
        out += [t.histc(x.to(dt), bins=100, min=0, max=10), t.histc(x.to(dt), bins=13)]
    return out


def test_histc_bins_by_division():
    """histc's bin is ``(x - min) * bins / (max - min)`` truncated, in the input's dtype, with no correction against
    the bin edges (that local search is torch.histogram's)."""
    _exact(_histc)


def _cdist_inf_grads(t):
    a = t.tensor([[0., 0.]], requires_grad=True)
    t.cdist(a, t.tensor([[1., 1.]]), p=INF).sum().backward()
    b = t.tensor([[0., 0., 3.], [1., -2., 2.], [NAN, 1, 1], [INF, 0, 1]], dtype=t.float64, requires_grad=True)
    c = t.tensor([[1., 1., 1.], [3., 0., 0.]], dtype=t.float64, requires_grad=True)
    d = t.cdist(b, c, p=INF)
    (d * t.arange(8.).view(4, 2)).sum().backward()
    return a.grad, d, b.grad, c.grad


def test_cdist_inf_gives_each_tie_the_whole_gradient():
    """cdist p=inf: NaN coordinates skipped in the distance, every coordinate tied with it gets the whole gradient
    (``sign(diff) * (|diff| == dist)``), NaN where ``|diff| - dist`` is NaN."""
    same(_cdist_inf_grads)


def _exp2(t):
    x = t.linspace(-30, 30, 2001) * 1.37
    special = t.tensor([15., 30., 127.5, 128., 127.9999, -126, -140.3, -149, -149.5, -150, -151, 1000, -1000, INF,
                        -INF, NAN, 0.5, -0.0])
    return [t.exp2(t.tensor([15., 30.])), t.exp2(t.tensor([15, 30, -3])), t.exp2(special), t.exp2(x),
            t.exp2(x[:29]), t.exp2(t.tensor([30., 1023.5, 1024., -1074, -1074.6, -1075], dtype=t.float64)),
            t.exp2(t.tensor([-24.5, 15.5, 16], dtype=t.float16)), t.exp2(t.tensor([-130.5], dtype=t.bfloat16)),
            t.exp2(t.empty(2, 0)), t.exp2(t.tensor(3.5))]


def test_exp2_exact():
    """exp2: exact at integers (int inputs in float32), subnormal results kept, inf from 2 ** 128; float32 as
    torch's vectorised (Sleef) and scalar (glibc) loops round it."""
    _exact(_exp2)


def _exp2_grads(t):
    out = []
    for dt in (t.float32, t.float64, t.float16):
        a = t.tensor([0.3, 15., -2.5, 15.5, 16.], dtype=dt, requires_grad=True)
        t.exp2(a).backward(t.tensor([1., 2., 3., 1., 1.], dtype=dt))
        out.append(a.grad)
    return out


def test_exp2_gradient_rounding():
    """exp2's gradient is ``grad * result * ln 2`` rounded in that order (float16: the product in float16)."""
    _exact(_exp2_grads)


def _cum(t):
    x = t.linspace(0.999, 1.001, 100000)
    a = t.tensor([[0.5, 2., 3.], [1., 0., 4.]], requires_grad=True)
    c = a.cumprod(1)
    c.backward(t.tensor([[1., 2., 3.], [4., 5., 6.]]))
    return [t.full((100000,), 0.1).cumsum(0)[-3:], x.cumprod(0)[::9999],
            t.full((3000,), 0.1, dtype=t.float16).cumsum(0), t.full((1000,), 0.1 + 0.3j).cumsum(0)[-1:], c.detach(),
            a.grad]


def test_cumsum_cumprod_accumulate_float32_in_float64():
    """float32 (complex64) cumsum / cumprod accumulate in float64 (complex128), torch's CPU acc_type."""
    _exact(_cum)


def test_abs_complex_inf_nan():
    """|z| is hypot's: inf where a part is infinite even if the other is NaN."""
    z = [complex(INF, NAN), complex(NAN, -INF), complex(NAN, 1), complex(3, 4), complex(-INF, 2)]
    _exact(lambda t: [t.abs(t.tensor(z)), t.tensor(z, dtype=t.complex128).abs()])


def _cos(t):
    a = t.tensor([[1e20, 1e20], [0., 0.], [1e-9, 0], [3., 4.]], requires_grad=True)
    b = t.tensor([[1., 2.]] * 4, requires_grad=True)
    c = t.cosine_similarity(a, b)
    c.sum().backward()
    return (c, a.grad, b.grad, t.cosine_similarity(t.tensor([[1e155, 1e155]], dtype=t.float64),
                                                   t.tensor([[1e155, 1e155]], dtype=t.float64)))


def test_cosine_similarity_overflowing_norm():
    """An infinite norm stays infinite through the eps clamp (0, not NaN); a norm clamped to eps still passes its
    gradient (torch clamps under no_grad)."""
    same_rounded(_cos, torch, ft)


@pytest.mark.parametrize("ord_", [2, -2, -1, -INF, 1, INF])
def test_matrix_norm_empty(ord_):
    """Empty matrices: 0 for positive orders, amin's IndexError (at the dim it reduces) for negative ones."""
    def fn(t):
        out = []
        for shape, dim, keep in (((0, 3), (-2, -1), False), ((3, 0), (-2, -1), True), ((2, 0, 3), (-2, -1), False),
                                 ((2, 3, 0), (-1, -2), False), ((2, 0, 3), (0, -1), False)):
            try:
                out.append(t.linalg.matrix_norm(t.zeros(shape), ord=ord_, dim=dim, keepdim=keep))
            except IndexError as e:
                out.append(str(e))
        return out + [t.linalg.norm(t.zeros(0, 3), ord=ord_) if ord_ > 0 else None]
    same_rounded(fn, torch, ft)


def _hist_out(t):
    x = t.tensor([1., 2., 1., 4.])
    h, e = t.empty(0), t.empty(0)
    r = t.histogram(x, 3, out=(h, e))
    r2 = t.histogram(x, t.tensor([0., 2., 5.]), weight=t.ones(4), density=True, out=(t.empty(2), t.empty(3)))
    return [type(r).__name__, r.hist is h, r.bin_edges is e, h, e, list(r2)]


def test_histogram_out():
    """histogram(out=(hist, bin_edges)) writes both and returns return_types.histogram_out; outs of another dtype
    are refused with torch's histogramdd messages."""
    same_rounded(_hist_out, torch, ft)
    x = (torch.tensor([1., 2.]), ft.tensor([1., 2.]))
    for dts in (("float64", "float32"), ("float32", "float64")):
        same_rounded(lambda t: t.histogram(x[t is ft], 3, out=tuple(t.empty(0, dtype=getattr(t, d)) for d in dts)),
                     torch, ft)


_ERRORS = {
    "cumsum_int_dtype_grad": lambda t: t.cumsum(t.tensor([1., 2.], requires_grad=True), 0, dtype=t.int64),
    "cumprod_int_dtype_grad": lambda t: t.tensor([[1., 2.]], requires_grad=True).cumprod(1, dtype=t.int32),
    "cumsum_bool_dtype": lambda t: t.cumsum(t.tensor([1., 2.]), 0, dtype=t.bool),
    "cumsum_int_dtype_no_grad": lambda t: t.cumsum(t.tensor([1., 2.], requires_grad=True).detach(), 0,
                                                   dtype=t.int64),
    "gradient_0d_spacing": lambda t: t.gradient(t.arange(12.).view(3, 4), spacing=[t.tensor(2.), t.tensor(3.)]),
    "gradient_2d_spacing": lambda t: t.gradient(t.arange(12.).view(3, 4), spacing=(t.ones(2, 2),), dim=1),
    "gradient_0d_tensor_scalar": lambda t: t.gradient(t.arange(12.).view(3, 4) ** 2, spacing=t.tensor(2.)),
    "gradient_uint8": lambda t: t.gradient(t.arange(5, dtype=t.uint8), edge_order=3),
}


@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_errors(case):
    same_rounded(_ERRORS[case], torch, ft)


_WARNINGS = {
    "qr": lambda t: t.qr(t.tensor([[1., 2.], [3., 4.]])),
    "searchsorted": lambda t: t.searchsorted(t.tensor([[1., 3.], [2., 4.]]).t()[0], t.tensor([[1., 2.], [3., 4.]]).t(),
                                             sorter=t.tensor([0, 0, 1, 0])[::2]),
    "searchsorted_empty": lambda t: t.searchsorted(t.tensor([[1., 3.], [2., 4.]]).t()[0], t.empty(0, 2).t()),
    "var_std": lambda t: (t.tensor([1.]).var(), t.std_mean(t.tensor([[1., 2.]]), 0)),
    "cov": lambda t: t.cov(t.tensor([[1., 2.]]), correction=2),
}


@pytest.mark.parametrize("case", sorted(_WARNINGS))
def test_warnings(case):
    """qr's deprecation (once), searchsorted's non-contiguous operands (once each), var/std and cov's degrees of
    freedom: torch's text with its "Triggered internally" suffix."""
    assert warnings_of(ft, _WARNINGS[case]) == warnings_of(torch, _WARNINGS[case])
