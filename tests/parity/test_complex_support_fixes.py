"""Complex inputs found different from torch 2.13 (red team): F.conv*/conv_transpose* compute complex (values,
conjugate-Wirtinger gradients, AddBackward0 as torch's split into real convolutions; torch.convolution itself
refuses), F.normalize / F.softsign / the 1x1 adaptive_avg_pool compute complex, and the kernels without complex
support name themselves (gelu, div's rounding modes, SDPA's softmax, the windows' arange, bernoulli). Each
against real torch."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _desc(r):
    if isinstance(r, (tuple, list)):
        return [_desc(x) for x in r]
    if hasattr(r, "grad_fn") and hasattr(r, "storage_offset"):
        d = r.detach()
        if d.is_complex():
            d = (torch if isinstance(d, torch.Tensor) else ft).view_as_real(d.resolve_conj())
        vals = np.round(np.asarray(d.numpy(), dtype=np.float64), 4).tolist()
        return (tuple(r.shape), str(r.dtype).split(".")[-1], r.requires_grad,
                type(r.grad_fn).__name__ if r.grad_fn is not None else None, vals)
    if type(r).__name__ == "Size":
        return ("Size", tuple(r))
    return r


def _outcome(fn, lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = ("ok", _desc(fn(lib)))
        except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
            out = (type(e).__name__, str(e))
    return out, sorted({str(x.message).split(" (Triggered internally")[0] for x in w})


def _same(fn, check_warnings=False):
    t, f = _outcome(fn, torch), _outcome(fn, ft)
    assert f[0] == t[0], (t[0], f[0])
    if check_warnings:
        assert f[1] == t[1], (t[1], f[1])
    return t[0]


def _conv_grads(T, name, stride=1, bias=True):
    F = T.nn.functional
    x = T.tensor([[[1 + 1j, 2, 3j, -1 + 0.5j]]], requires_grad=True)
    w = T.tensor([[[1j, 1.0 - 2j]]], requires_grad=True)
    b = T.tensor([1 + 2j], requires_grad=True) if bias else None
    y = getattr(F, name)(x, w, b, stride=stride)
    coef = T.tensor([1 + 2j, 3 - 1j, 1, 2j, 5, 1, -1j, 2, 3][:y.shape[-1]])
    (y * coef).abs().sum().backward()
    return y, x.grad, w.grad, None if b is None else b.grad


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.conv1d(T.tensor([[[1 + 1j, 2, 3j, 4]]]), T.tensor([[[1j, 1]]])),
    lambda T: T.nn.functional.conv1d(T.tensor([[[1 + 1j, 2, 3j, 4]]]), T.tensor([[[1j, 1]]]), T.tensor([2 - 1j])),
    lambda T: T.nn.functional.conv1d(T.tensor([[1 + 1j, 2, 3j, 4]]), T.tensor([[[1j, 1]]]), padding="same"),
    lambda T: T.nn.functional.conv2d(T.tensor([[[[1 + 1j, 2], [3j, 4]]]]), T.tensor([[[[1j]]]])),
    lambda T: T.nn.functional.conv2d(T.ones(1, 1, 3, 3, dtype=T.cdouble) * (1 + 2j),
                                     T.ones(2, 1, 2, 2, dtype=T.cdouble) * (1 - 1j), stride=2, padding=1),
    lambda T: T.nn.functional.conv1d(T.arange(8, dtype=T.cfloat).view(1, 1, 8) * 1j,
                                     T.ones(1, 1, 2, dtype=T.cfloat) * (1 + 1j), stride=2, dilation=2),
    lambda T: T.nn.functional.conv1d(T.ones(1, 2, 4, dtype=T.cfloat) * 1j, T.ones(2, 1, 2, dtype=T.cfloat) * (1 + 1j),
                                     groups=2),
    lambda T: T.nn.functional.conv3d(T.ones(1, 1, 2, 2, 2, dtype=T.cfloat), T.ones(1, 1, 1, 1, 1, dtype=T.cfloat) * 1j),
    lambda T: T.nn.functional.conv_transpose1d(T.tensor([[[1 + 1j, 2, 3j]]]), T.tensor([[[1j, 1]]])),
    lambda T: T.nn.functional.conv_transpose2d(T.tensor([[[[1 + 1j, 2], [3j, 4]]]]),
                                               T.tensor([[[[1j, 2], [1, 1 - 1j]]]]), stride=2),
    lambda T: T.nn.functional.conv_transpose3d(T.ones(1, 1, 2, 2, 2, dtype=T.cfloat),
                                               T.ones(1, 1, 1, 1, 1, dtype=T.cfloat) * 1j),
    lambda T: T.conv1d(T.tensor([[[1 + 1j, 2, 3j, 4]]]), T.tensor([[[1j, 1]]])),
    lambda T: (T.manual_seed(0), T.nn.Conv1d(2, 3, 3, dtype=T.cfloat)(T.ones(1, 2, 5, dtype=T.cfloat)).shape)[1],
    lambda T: T.nn.ConvTranspose1d(1, 1, 2, dtype=T.cfloat)(T.ones(1, 1, 3, dtype=T.cfloat)).shape,
    # torch.convolution itself has no complex kernel (only the F.conv* functions split complex)
    lambda T: T.convolution(T.tensor([[[1 + 1j, 2, 3j, 4]]]), T.tensor([[[1j, 1]]]), None, [1], [0], [1], False, [0],
                            1),
    # the complex path's dtype errors, ahead of the shape checks
    lambda T: T.nn.functional.conv1d(T.tensor([[[1 + 1j, 2, 3j, 4]]]), T.tensor([[[1.0, 1]]])),
    lambda T: T.nn.functional.conv2d(T.ones(1, 1, 2, 2, dtype=T.cfloat), T.ones(1, 1, 1, 1, dtype=T.cdouble)),
    lambda T: T.nn.functional.conv2d(T.ones(2, 1, 2, 2, dtype=T.cfloat), T.ones(1, 3, 1, 1)),
    lambda T: T.nn.functional.conv2d(T.ones(1, 1, 3, dtype=T.cfloat), T.ones(1, 1, 2)),
    lambda T: T.nn.functional.conv1d(T.ones(1, 3, 1, dtype=T.cfloat), T.ones(1, 1, 2, dtype=T.cfloat), T.ones(1)),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 1, 4, dtype=T.cfloat), T.ones(1, 1, 2, dtype=T.cfloat),
                                               T.ones(1)),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 2, 2, 2, dtype=T.cfloat), T.ones(1, 1, 1, 1)),
])
def test_complex_convolution(call):
    _same(call)


@pytest.mark.parametrize("name,stride,bias", [("conv1d", 1, True), ("conv1d", 2, False),
                                              ("conv_transpose1d", 2, True), ("conv_transpose1d", 1, False)])
def test_complex_convolution_gradients(name, stride, bias):
    _same(lambda T: _conv_grads(T, name, stride, bias))


def test_complex_conv2d_gradients():
    def f(T):
        x = T.tensor([[[[1 + 1j, 2], [3j, 4]]]], requires_grad=True)
        w = T.tensor([[[[1j, 2], [1, 1 - 1j]]]], requires_grad=True)
        y = T.nn.functional.conv2d(x, w, padding=1)
        (y.real * 2 + y.imag * 3).sum().backward()
        return y, x.grad, w.grad
    _same(f)


def _grad_case(op, x, coef):
    def f(T):
        t = T.tensor(x, requires_grad=True)
        y = op(T, t)
        (y * T.tensor(coef)).abs().sum().backward()
        return y, t.grad
    return f


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.normalize(T.tensor([[1 + 1j, 2], [3j, 1]]), dim=1),
    lambda T: T.nn.functional.normalize(T.tensor([[1 + 1j, 2], [3j, 1]], dtype=T.cdouble), p=1, dim=0),
    lambda T: T.nn.functional.normalize(T.tensor([[1 + 1j, 2], [3j, 1]]), p=float("inf"), dim=1),
    lambda T: T.nn.functional.normalize(T.tensor([[1 + 1j, 2], [3j, 1]]), p=3, dim=-1),
    lambda T: T.nn.functional.normalize(T.zeros(2, 2, dtype=T.cfloat)),
    _grad_case(lambda T, t: T.nn.functional.normalize(t.view(2, 2), dim=1), [1 + 1j, 2, 3j, 1], [1 + 2j, 3 - 1j]),
    lambda T: T.nn.functional.softsign(T.tensor([1 + 1j, -2, 3j])),
    lambda T: T.nn.functional.softsign(T.tensor([1 + 1j, -2, 3j], dtype=T.cdouble)),
    lambda T: T.nn.functional.softsign(T.tensor([1, -2])),
    lambda T: T.nn.functional.softsign(T.tensor([True])),
    _grad_case(lambda T, t: T.nn.functional.softsign(t), [1 + 1j, -2, 3j], [1 + 2j, 3 - 1j, 1]),
    lambda T: T.nn.functional.adaptive_avg_pool1d(T.tensor([1 + 1j, -2, 3j]).view(1, 1, 3), 1),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.tensor([1 + 1j, -2, 3j, 4]).view(1, 2, 2), 1),
    lambda T: T.nn.functional.adaptive_avg_pool3d(T.tensor([1 + 1j, -2, 3j, 4]).view(1, 1, 2, 2), (1, 1, 1)),
    lambda T: T.nn.functional.adaptive_avg_pool3d(T.tensor([1 + 1j, -2, 3j, 4]).view(1, 1, 2, 2), (1, 1, 2)),
    lambda T: T.nn.functional.adaptive_avg_pool1d(T.tensor([1 + 1j, -2, 3j, 4, 5j]).view(1, 1, 5), 2),
    _grad_case(lambda T, t: T.nn.functional.adaptive_avg_pool2d(t.view(1, 3, 2), 1), [1 + 1j, -2, 3j, 4, 5j, 6],
               [1 + 2j]),
])
def test_complex_normalize_softsign_adaptive_avg_pool(call):
    _same(call)


_Z = [1 + 1j, -2, 3j]


@pytest.mark.parametrize("dtype", ["cfloat", "cdouble"])
@pytest.mark.parametrize("call", [
    lambda T, z: T.nn.functional.gelu(z),
    lambda T, z: T.nn.functional.gelu(z, approximate="tanh"),
    lambda T, z: T.nn.GELU("tanh")(z),
    lambda T, z: T.nn.functional.gelu(z, approximate="x"),
    lambda T, z: T.nn.functional.gelu(z.real.long(), approximate="x"),
    lambda T, z: T.div(z, 2, rounding_mode="trunc"),
    lambda T, z: T.div(z, z, rounding_mode="floor"),
    lambda T, z: z.clone().div_(2, rounding_mode="trunc"),
    lambda T, z: T.div(T.ones(3), z, rounding_mode="floor"),
    lambda T, z: T.div(T.ones(3, dtype=T.long), 1j, rounding_mode="trunc"),
    lambda T, z: T.div(z, 2, rounding_mode=None),
    lambda T, z: T.nn.functional.scaled_dot_product_attention(z.view(1, 1, 3, 1), z.view(1, 1, 3, 1),
                                                              z.view(1, 1, 3, 1)),
    lambda T, z: T.nn.functional.scaled_dot_product_attention(z.view(3, 1), z.view(3, 1), z.view(3, 1), is_causal=True),
    lambda T, z: T.nn.functional.scaled_dot_product_attention(z.view(1, 3, 1), z.view(1, 3, 1), z.view(1, 3, 1),
                                                              dropout_p=2.0),
    lambda T, z: T.nn.functional.scaled_dot_product_attention(z.view(1, 3, 1), z.view(3, 1, 1), z.view(3, 1, 1)),
    lambda T, z: T.nn.functional.scaled_dot_product_attention(z.view(1, 3, 1)[:, :0], z.view(1, 3, 1),
                                                              z.view(1, 3, 1)),
    lambda T, z: T.nn.functional.scaled_dot_product_attention(z.view(1, 3, 1), z.view(1, 3, 1)[:, :0],
                                                              z.view(1, 3, 1)[:, :0]),
    lambda T, z: T.hann_window(4, dtype=z.dtype),
    lambda T, z: T.hamming_window(4, periodic=False, dtype=z.dtype),
    lambda T, z: T.blackman_window(3, dtype=z.dtype),
    lambda T, z: T.bartlett_window(2, dtype=z.dtype),
    lambda T, z: T.kaiser_window(5, dtype=z.dtype),
    lambda T, z: T.hann_window(1, dtype=z.dtype),
    lambda T, z: T.kaiser_window(0, dtype=z.dtype),
    lambda T, z: T.hann_window(-1, dtype=z.dtype),
    lambda T, z: T.bernoulli(T.zeros(2, dtype=z.dtype)),
    lambda T, z: T.zeros(2, dtype=z.dtype).bernoulli(),
    lambda T, z: T.bernoulli(T.zeros(2, dtype=z.dtype), 0.5),
    lambda T, z: T.zeros(2, dtype=z.dtype).bernoulli_(0.5),
    lambda T, z: T.zeros(2, dtype=z.dtype).bernoulli_(2.0),
    lambda T, z: T.zeros(2, dtype=z.dtype).bernoulli_(T.zeros(2)),
    lambda T, z: T.zeros(2).bernoulli_(T.zeros(2, dtype=z.dtype)),
    lambda T, z: T.bernoulli(T.zeros(2, dtype=z.dtype), T.tensor(0.5)),
    lambda T, z: T.bernoulli(T.zeros(2), out=T.zeros(2, dtype=z.dtype)),
    lambda T, z: T.bernoulli(T.zeros(2, dtype=z.dtype), out=T.zeros(2)),
    lambda T, z: T.zeros(2).bernoulli_(-0.1),
])
def test_complex_kernel_errors(call, dtype):
    _same(lambda T: call(T, T.tensor(_Z, dtype=getattr(T, dtype))), check_warnings=True)
