"""Fixes from the 2026-12-07 complex-dtype red team (cov / corrcoef, l1_loss / pairwise_distance, the complex inputs
torch's kernels refuse, the sign of zero imaginary parts of gradients, unfold / fold, histogram's default bins, the
complex -> real cast warning of softmax's dtype=): each against real torch 2.13."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same_rounded, warnings_of


def _c(t, x):
    """A tensor as (dtype, rounded-ready real view): complex values as their (re, im) pairs."""
    if x is None:
        return None
    x = x.detach()
    return (str(x.dtype).split(".")[-1], t.view_as_real(x) if x.is_complex() else x)


def _z(t, grad=True):
    return t.tensor([[1 + 2j, -3 - 4j, 0.5j], [2, 1j, -1 - 1j]], requires_grad=grad)


@pytest.mark.parametrize("fn", ["cov", "corrcoef"])
def test_cov_corrcoef_keep_imaginary(fn):
    """cov / corrcoef of complex rows keep the imaginary part (torch's mm(x, x^H)); their gradients too."""
    def case(t):
        z = _z(t)
        c = getattr(t, fn)(z)
        (c * t.tensor([[1 + 1j, 2 - 1j], [0.5, -1j]])).real.sum().backward()
        c1 = getattr(t, fn)(t.tensor([1 + 2j, -3 - 4j, 0.5j]))
        return [_c(t, c), type(c.grad_fn).__name__, _c(t, z.grad), _c(t, c1)]
    same_rounded(case, torch, ft)


_REAL_OF_COMPLEX = {
    "l1_mean": lambda t, a, b: t.nn.functional.l1_loss(a, b),
    "L1Loss": lambda t, a, b: t.nn.L1Loss()(a, b),
    "l1_sum": lambda t, a, b: t.nn.functional.l1_loss(a, b, reduction="sum"),
    "l1_none": lambda t, a, b: t.nn.functional.l1_loss(a, b, reduction="none"),
    "l1_weight": lambda t, a, b: t.nn.functional.l1_loss(a, b, weight=t.tensor([[2.0, 0.5]])),
    "pd2": lambda t, a, b: t.nn.functional.pairwise_distance(a, b),
    "pd1": lambda t, a, b: t.nn.functional.pairwise_distance(a, b, p=1),
    "pd3": lambda t, a, b: t.nn.functional.pairwise_distance(a, b, p=3),
    "pdinf": lambda t, a, b: t.nn.functional.pairwise_distance(a, b, p=float("inf")),
    "pd_keepdim": lambda t, a, b: t.pairwise_distance(a, b, keepdim=True),
    "pd_c128": lambda t, a, b: t.nn.functional.pairwise_distance(a.to(t.complex128), b.to(t.complex128)),
}


@pytest.mark.parametrize("case", sorted(_REAL_OF_COMPLEX))
def test_l1_loss_pairwise_distance_complex_is_real(case):
    """|input - target| and ||x1 - x2||_p of complex operands are real (float32), and backward runs (RED: complex64
    results whose backward refused the non-real scalar)."""
    def run(t):
        a = t.tensor([[1 + 1j, -2 + 0.5j]], requires_grad=True)
        b = t.tensor([[0.5j, 1]])
        o = _REAL_OF_COMPLEX[case](t, a, b)
        o.sum().backward()
        return [_c(t, o), type(o.grad_fn).__name__, _c(t, a.grad)]
    same_rounded(run, torch, ft)


_REFUSED = {
    "mse": lambda t, z: t.nn.functional.mse_loss(z, z * 2),
    "mse_none": lambda t, z: t.nn.functional.mse_loss(z, z, reduction="none"),
    "MSELoss": lambda t, z: t.nn.MSELoss()(z, z),
    "mse_mixed": lambda t, z: t.nn.functional.mse_loss(z, z.real),
    "ce_index": lambda t, z: t.nn.functional.cross_entropy(z, t.tensor([0, 2])),
    "ce_index_ls": lambda t, z: t.nn.functional.cross_entropy(z, t.tensor([0, 2]), label_smoothing=0.1),
    "ce_1d": lambda t, z: t.nn.functional.cross_entropy(z[0], t.tensor(1)),
    "ce_prob": lambda t, z: t.nn.functional.cross_entropy(z, t.rand(2, 3)),
    "ce_prob_cplx_target": lambda t, z: t.nn.functional.cross_entropy(z, z),
    "ce_3d": lambda t, z: t.nn.functional.cross_entropy(z.reshape(1, 2, 3), t.zeros(1, 3, dtype=t.long)),
    "ce_3d_int": lambda t, z: t.nn.functional.cross_entropy(t.ones(1, 2, 3, dtype=t.long), t.zeros(1, 3, dtype=t.long)),
    "ce_int": lambda t, z: t.nn.functional.cross_entropy(t.ones(2, 3, dtype=t.long), t.zeros(2, dtype=t.long)),
    "CrossEntropyLoss": lambda t, z: t.nn.CrossEntropyLoss()(z, t.tensor([0, 2])),
    "nll": lambda t, z: t.nn.functional.nll_loss(z, t.tensor([0, 2])),
    "nll_3d": lambda t, z: t.nn.functional.nll_loss(z.reshape(1, 2, 3), t.zeros(1, 3, dtype=t.long)),
    "nll_3d_int": lambda t, z: t.nn.functional.nll_loss(t.ones(1, 2, 3, dtype=t.long), t.zeros(1, 3, dtype=t.long)),
    "softmax_last": lambda t, z: t.nn.functional.softmax(z, dim=1),
    "softmax_0": lambda t, z: t.softmax(z, 0),
    "log_softmax_last": lambda t, z: t.nn.functional.log_softmax(z, dim=-1),
    "log_softmax_0": lambda t, z: z.log_softmax(0),
    "dropout": lambda t, z: t.nn.functional.dropout(z, 0.5, training=True),
    "dropout_inplace": lambda t, z: t.nn.functional.dropout(z.clone(), 0.5, training=True, inplace=True),
    "Dropout": lambda t, z: t.nn.Dropout(0.3)(z),
    "torch_dropout": lambda t, z: t.dropout(z, 0.5, True),
    "alpha_dropout": lambda t, z: t.nn.functional.alpha_dropout(z, 0.5, training=True),
    "feature_alpha_dropout": lambda t, z: t.nn.functional.feature_alpha_dropout(z[None], 0.5, training=True),
    "dropout1d": lambda t, z: t.nn.functional.dropout1d(z[None], 0.5, training=True),
    "dropout_eval": lambda t, z: t.nn.functional.dropout(z, 0.5, training=False),
    "dropout_p0": lambda t, z: t.nn.functional.dropout(z, 0.0, training=True),
    "dropout_p1": lambda t, z: t.nn.functional.dropout(z, 1.0, training=True),
    "alpha_dropout_p0": lambda t, z: t.nn.functional.alpha_dropout(z, 0.0, training=True),
    "pdist": lambda t, z: t.nn.functional.pdist(z),
    "torch_pdist": lambda t, z: t.pdist(z),
    "pdist_half": lambda t, z: t.pdist(z.real.half()),
}


@pytest.mark.parametrize("case", sorted(_REFUSED))
def test_complex_inputs_torch_refuses(case):
    """Complex inputs torch's CPU kernels have no case for raise torch's error (mse_cpu, log_softmax[_lastdim]_kernel_impl
    by the class dim, nll_loss[2d] frames, bernoulli_scalar_cpu_ for training dropout, pdist's RuntimeError); the
    no-op forms (eval, p=0, p=1) still return."""
    same_rounded(lambda t: _c(t, _REFUSED[case](t, _z(t, grad=False))), torch, ft)


def _grad_zero_signs(t):
    out = []
    for f in (lambda x: x.real.sum(), lambda x: x.imag.sum(), lambda x: x.real.mean(), lambda x: x.mean().real,
              lambda x: x[1].real, lambda x: x[[0, 2]].real.sum(), lambda x: t.fft.fft(x).real.sum(),
              lambda x: (x * 2).real.sum(), lambda x: x.cumsum(0).real.sum(), lambda x: t.view_as_real(x).sum()):
        x = t.tensor([1 + 2j, -3 + 0.5j, 2 - 1j], requires_grad=True)
        f(x).backward()
        g = t.view_as_real(x.grad)
        out += [g, np.signbit(g.numpy()).tolist()]
    return out


def test_complex_grad_zero_imaginary_is_positive():
    """A complex gradient's zero imaginary parts are +0 as torch's (x.real.sum().backward(): 1.+0.j, not 1.-0.j)."""
    same_rounded(_grad_zero_signs, torch, ft)


def test_unfold_fold_complex():
    """F.unfold / F.fold compute for complex64 / complex128 (im2col / col2im have complex kernels), with their
    gradients."""
    def case(t):
        x = (t.arange(18.0).reshape(1, 2, 3, 3) * (1 - 0.5j)).requires_grad_()
        u = t.nn.functional.unfold(x, 2)
        f = t.nn.functional.fold(u, (3, 3), 2)
        (f * (1 + 2j)).real.sum().backward()
        d = t.nn.functional.unfold(x.detach().to(t.complex128), 2, padding=1, stride=2)
        return [_c(t, u), _c(t, f), type(f.grad_fn).__name__, _c(t, x.grad), _c(t, d)]
    same_rounded(case, torch, ft)


def test_histogram_default_bins():
    """torch.histogram's bins defaults to 100 (function and method)."""
    def case(t):
        x = t.tensor([1.0, 2, 1, 4, 3.5])
        return [t.histogram(x), x.histogram(), t.histogram(x, weight=t.ones(5), density=True),
                t.histogram(x, range=(0.0, 5.0))]
    same_rounded(case, torch, ft)


@pytest.mark.filterwarnings("ignore:Casting complex values")
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_complex_dtype_cast_warns(fn):
    """softmax(complex, dtype=float) casts the input first: torch's one-time complex -> real cast warning."""
    def case(t):
        return getattr(t, fn)(t.tensor([1 + 1j, 2 - 1j]), 0, dtype=t.float32)
    same_rounded(case, torch, ft)
    assert warnings_of(ft, case) == warnings_of(torch, case)
