"""Fixes found by running PyTorch's tutorials and realistic scripts: the legacy ``size_average``/``reduce`` loss
arguments (nll_loss ignored them: a silently wrong loss), ``range`` as an index, ``nn.ReLU``/``nn.SiLU``'s
``inplace`` flag, ``@compile`` on a method, and ``torch.accelerator`` (compared with torch's CPU build; its GPU
paths with the two host devices standing in for two GPUs, as tests/parity/test_cuda_runtime.py does)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from test_cuda_runtime import fake_cuda  # noqa: F401  (the two host devices standing in for two GPUs)

X = np.array([[-1.0, -2.0, 0.5], [-3.0, -4.0, 2.0]], np.float32)
T = np.array([0, 2])


@pytest.mark.parametrize("call", [
    "F.nll_loss(x, t, size_average=False)", "F.nll_loss(x, t, reduce=False)", "F.nll_loss(x, t, None, True, -100, True)",
    "F.cross_entropy(x, t, size_average=False)", "F.cross_entropy(x, t, reduce=False, reduction='sum')",
    "F.mse_loss(x, 0 * x, size_average=False)", "F.mse_loss(x, 0 * x, reduce=False)",
    "F.mse_loss(x, x.flip(0), weight=L.tensor([[1., 2., 0.], [0., 1., 3.]]))",
    "F.mse_loss(x, x.flip(0), weight=L.tensor([[1., 2., 0.], [0., 1., 3.]]), reduction='sum')",
    "nn.NLLLoss(size_average=False)(x, t)", "nn.NLLLoss(None, False)(x, t)", "nn.CrossEntropyLoss(None, None, -100, False)(x, t)",
    "nn.CrossEntropyLoss(size_average=False, label_smoothing=0.1)(x, t)", "nn.MSELoss(size_average=False)(x, 0 * x)",
    "nn.MSELoss(False, False)(x, 0 * x)", "nn.L1Loss(reduce=False)(x, 0 * x)", "nn.SmoothL1Loss(False)(x, 0 * x)",
    "nn.HuberLoss('sum')(x, 0 * x)", "nn.MarginRankingLoss(size_average=False)(x[0], x[1], L.tensor([1., -1., 1.]))",
    "nn.GaussianNLLLoss(reduction='sum')(x, 0 * x, L.ones(2, 3))", "nn.NLLLoss().reduction",
    "nn.MSELoss(reduce=False).reduction", "nn.CrossEntropyLoss(size_average=False).reduction",
])
def test_legacy_loss_arguments(call):
    def run(L):
        x = L.tensor(X, requires_grad=True)
        t = L.tensor(T)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = eval(call, {"L": L, "F": L.nn.functional, "nn": L.nn, "x": x, "t": t})
        msgs = sorted({str(m.message) for m in w})
        if isinstance(out, str):
            return out, msgs, None
        out.sum().backward()
        return out.detach().numpy(), msgs, x.grad.numpy()
    (a, wa, ga), (b, wb, gb) = run(ft), run(torch)
    if isinstance(a, str):
        assert a == b
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(ga, gb, rtol=1e-6, atol=1e-6)
    assert wa == wb


def test_mse_loss_weight_errors():
    for L in (ft, torch):
        with pytest.raises(ValueError, match="Weights and input must have the same size."):
            L.nn.functional.mse_loss(L.ones(2, 3), L.zeros(2, 3), weight=L.ones(3))


@pytest.mark.parametrize("index", ["x[range(3), t]", "x[range(2)]", "x[range(1, 3), 1]", "x[:, range(0, 4, 2)]",
                                   "x[range(0)]", "x[range(-1, 1)]"])
def test_range_as_an_index(index):
    def run(L):
        x = L.arange(12.).reshape(3, 4).requires_grad_()
        y = eval(index, {"x": x, "t": L.tensor([1, 0, 3])})
        y.sum().backward()
        z = x.detach().clone()
        exec(index + " = -1.", {"x": z, "t": L.tensor([1, 0, 3])})
        return y.detach().numpy(), x.grad.numpy(), z.numpy()
    for a, b in zip(run(ft), run(torch)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["ReLU", "SiLU"])
def test_relu_and_silu_inplace(name):
    def run(L):
        M = getattr(L.nn, name)
        m = M(True)
        x = L.tensor([-1.0, 0.5, 2.0])
        y = m(x)
        w = L.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        h = w * 1
        z = M(inplace=True)(h)
        z.sum().backward()
        return repr(m), repr(M()), m.inplace, y is x, x.tolist(), z is h, w.grad.numpy(), h.detach().numpy()
    a, b = run(ft), run(torch)
    assert a[:6] == b[:6]
    np.testing.assert_allclose(a[6], b[6], rtol=1e-6)
    np.testing.assert_allclose(a[7], b[7], rtol=1e-6)


def test_compile_as_a_method_decorator():
    def run(L):
        class Twice:
            @L.compile
            def f(self, x):
                return x * 2

        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(3, 2)

            @L.compile
            def forward(self, x):
                return self.lin(x).relu()

            @L.compile(fullgraph=True)
            def total(self, x):
                return self.lin(x).sum()
        m = M()
        with L.no_grad():
            m.lin.weight.copy_(L.tensor(np.arange(6.0).reshape(2, 3) / 10 - 0.2, dtype=L.float32))
            m.lin.bias.fill_(0.1)
        x = L.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=L.float32)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = m(x).pow(2).sum()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return Twice().f(L.ones(2)).tolist(), losses, m.total(x).item(), m.lin.weight.detach().numpy()
    a, b = run(ft), run(torch)
    assert a[0] == b[0]
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5)
    np.testing.assert_allclose(a[2], b[2], rtol=1e-5)
    np.testing.assert_allclose(a[3], b[3], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    "is_available()", "current_accelerator()", "current_accelerator(True)", "device_count()",
    "current_device_index()", "current_device_idx()", "set_device_index(0)", "synchronize()", "current_stream()",
    "memory_allocated()", "max_memory_allocated()", "memory_stats()", "reset_peak_memory_stats()", "empty_cache()",
    "device_index(0).__enter__()", "device_index(None).__enter__() is not None"])
def test_accelerator_without_one_as_torch_cpu_build(call):
    def run(L):
        try:
            return repr(eval("L.accelerator." + call, {"L": L}))
        except Exception as e:  # (the same type and message)
            return type(e).__name__, str(e)
    assert run(ft) == run(torch)


def test_accelerator_picks_the_gpu(fake_cuda):
    acc = ft.accelerator
    assert acc.is_available() and acc.device_count() == 2
    dev = acc.current_accelerator().type if acc.is_available() else "cpu"
    assert dev == "cuda" and ft.ones(2, device=dev).device == ft.device("cuda:0")
    assert acc.current_device_index() == 0
    with acc.device_index(1):
        assert acc.current_device_index() == 1 and ft.ones(2, device="cuda").device == ft.device("cuda:1")
    assert acc.current_device_index() == 0
    acc.set_device_index("cuda:1")
    assert ft.cuda.current_device() == 1
    acc.synchronize()
    assert acc.memory_allocated() >= 0 and isinstance(acc.memory_stats(), dict)
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        acc.set_device_index("cpu")
