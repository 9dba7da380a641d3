"""Double (and triple) backward through in-place view ops, stft, writes into views (CopySlices) and the views left
behind (AsStridedBackward0), and in-place ops whose ``self`` the backward reads: values against real PyTorch."""
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _np(t):
    return t.detach().cpu().numpy() if t is not None else None


def _close(a, b, tol=1e-4):
    np.testing.assert_allclose(_np(b), _np(a), rtol=tol, atol=tol)


# ---- in-place view ops (their node's input is ``self`` before the op) and stft (ends with ``transpose_``) -------
VIEW_CASES = {
    "t_": lambda lib, x: (x.reshape(4, 6) * 1).t_().sin(),
    "unsqueeze_": lambda lib, x: (x * 1).unsqueeze_(0).sin(),
    "squeeze_dim": lambda lib, x: (x.reshape(4, 1, 6) * 1).squeeze_(1).sin(),
    "squeeze_all": lambda lib, x: (x.reshape(4, 1, 6) * 1).squeeze_().sin(),
    "swapaxes_": lambda lib, x: (x.reshape(2, 3, 4) * 1).swapaxes_(0, 2).sin(),
    "transpose_": lambda lib, x: (x.reshape(2, 3, 4) * 1).transpose_(1, 2).cos() * x.reshape(2, 4, 3),
    "as_strided_": lambda lib, x: (x * 1).as_strided_((3, 4), (1, 3), 2).sin(),
    "stft_1d": lambda lib, x: lib.stft(x, 8, 2, window=lib.hann_window(8), return_complex=True).real,
    "stft_2d": lambda lib, x: lib.stft(x.reshape(2, 12), 4, 1, window=lib.hann_window(4), return_complex=True).abs(),
}


def _second_order(lib, f):
    x = lib.arange(24.).sin().requires_grad_()
    g, = lib.autograd.grad(f(lib, x).pow(2).sum(), x, create_graph=True)
    h, = lib.autograd.grad(g.pow(2).sum(), x)
    return g, h


@pytest.mark.parametrize("case", list(VIEW_CASES))
def test_inplace_view_double_backward(case):
    f = VIEW_CASES[case]
    for a, b in zip(_second_order(torch, f), _second_order(ft, f)):
        _close(a, b)


@pytest.mark.parametrize("case", ["t_", "stft_1d"])
def test_inplace_view_backward_create_graph(case):
    f = VIEW_CASES[case]
    out = []
    for lib in (torch, ft):
        x = lib.arange(24.).sin().requires_grad_()
        f(lib, x).pow(2).sum().backward(create_graph=True)
        first = x.grad.detach().clone()
        x.grad.pow(2).sum().backward()
        out.append((first, x.grad))
    for a, b in zip(*out):
        _close(a, b)


# ---- writes into views of tensors with history: CopySlices ------------------------------------------------------
def _stack_rows(lib, x):
    out = lib.zeros(2, 3, 4)
    for i, s in enumerate([x, x[:2] * 2]):
        out[i, :s.shape[0]] = s
    return out.sin().sum()


def _fill_slice(lib, x):
    y = x * 2
    y[:, :2] = 0
    return y.sin().sum()


def _mul_row(lib, x):
    y = x * 2
    y[0].mul_(3)
    return y.sin().sum()


def _into_zeros(lib, x):
    z = lib.zeros(3, 4)
    z[:, 1:3] = x[:, :2]
    return z.sin().sum()


def _chained(lib, x):
    y = x * 1
    y.t()[1].mul_(x[:, 0])
    y[1:, ::2] = x[:2, 1:3].exp()
    y[2, 1:3].add_(y[0, :2])
    return y.pow(3).sum()


def _transposed_base(lib, x):
    y = (x * 1).t_()
    y[1:3, 0] = x[0, :2] * 3
    return (y * y.cos()).sum()


COPY_SLICES = {"stack_rows": _stack_rows, "fill_slice": _fill_slice, "mul_row": _mul_row,
               "into_zeros": _into_zeros, "chained": _chained, "transposed_base": _transposed_base}


def _orders(lib, f, shape, third=False):
    """First order with and without create_graph, second order, and third where asked."""
    x = lib.arange(float(np.prod(shape))).sin().reshape(shape).requires_grad_()
    plain, = lib.autograd.grad(f(lib, x), x)
    g, = lib.autograd.grad(f(lib, x), x, create_graph=True)
    h, = lib.autograd.grad(g.pow(2).sum(), x, create_graph=third)
    return (plain, g, h) + ((lib.autograd.grad(h.sum(), x)[0],) if third else ())


@pytest.mark.parametrize("case", list(COPY_SLICES))
def test_copy_slices_higher_order(case):
    f = COPY_SLICES[case]
    third = case == "mul_row"
    for a, b in zip(_orders(torch, f, (3, 4), third), _orders(ft, f, (3, 4), third)):
        _close(a, b)


def test_copy_slices_other_shape():
    def f(lib, x):
        y = x.exp() * 1
        y[:, 1, ::2] = x[:, 0, :2] * x[:, 2, 1:]
        return (y.sin() * x).sum()
    for a, b in zip(_orders(torch, f, (2, 3, 3)), _orders(ft, f, (2, 3, 3))):
        _close(a, b)


def test_copy_slices_complex_real_view():
    def run(lib):
        x = lib.arange(6.).sin().requires_grad_()
        z = lib.complex(x, x.cos())
        z.real[1:4] = x[:3] * 2
        L = (z * z).abs().sum()
        g, = lib.autograd.grad(L, x, create_graph=True)
        return g, lib.autograd.grad(g.pow(2).sum(), x)[0]
    for a, b in zip(run(torch), run(ft)):
        _close(a, b)


def test_copy_slices_gradient_names():
    # ``grad_fn(grad)`` in grad mode: the view's part of CopySlices' gradient is torch's ``grad_slice.clone()``, the
    # base's part its ``result`` written through the view, a stale view's gradient ``as_strided_backward``'s result
    out = []
    for lib in (torch, ft):
        x = lib.arange(6.).sin().reshape(3, 2).requires_grad_()
        ct = lib.arange(12.).cos().reshape(3, 4).requires_grad_()
        z = lib.zeros(3, 4)
        z[:, 1:3] = x
        r = z.grad_fn(ct)
        src = r[-1] if isinstance(r, tuple) else r
        y = x * 1
        y[0] = 5
        base = y.grad_fn(ct[:, :2])[0]
        v = y[:, 1]
        y.mul_(2)
        view = v.grad_fn(ct[:, 0])
        out.append([(t.grad_fn.name(), t) for t in (src, base, view)])
    assert [n for n, _ in out[0]] == [n for n, _ in out[1]] == \
        ["CloneBackward0", "torch::autograd::CopySlices", "AsStridedBackward0"]
    for (_, a), (_, b) in zip(*out):
        _close(a, b)


# ---- the views left behind (AsStridedBackward0) -----------------------------------------------------------------
def test_as_strided_backward_double_backward():
    def run(lib):
        x = lib.arange(6.).sin().reshape(3, 2).requires_grad_()
        y = x * 1
        v = y[0]
        v.mul_(3)
        g1, = lib.autograd.grad(v.sin().sum(), x, create_graph=True)
        y = x * 1
        w = y[:, 1]
        y.mul_(2)
        assert w.grad_fn.name() == "AsStridedBackward0"
        g2, = lib.autograd.grad(w.sin().sum(), x, create_graph=True)
        return g1, g2, lib.autograd.grad((g1 * g2).pow(2).sum(), x)[0]
    for a, b in zip(run(torch), run(ft)):
        _close(a, b)


# ---- an in-place op whose backward reads its original ``self`` ------------------------------------------------
def test_inplace_op_double_backward_reads_original_self():
    def run(lib):
        x = lib.arange(6.).sin().reshape(3, 2).requires_grad_()
        y = x * 1
        y.mul_(x)
        g, = lib.autograd.grad(y.pow(3).sum(), x, create_graph=True)
        return g, lib.autograd.grad(g.sum(), x)[0]
    for a, b in zip(run(torch), run(ft)):
        _close(a, b)
