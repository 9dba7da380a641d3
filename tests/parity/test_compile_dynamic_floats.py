"""A compiled function's dynamic float argument used as an op's scalar option or fill value (``add_(p, alpha=1 -
decay)`` in an EMA update, ``full_like(x, v)``, ``leaky_relu(x, slope)``, ``torch.tensor(lr)``) or given to a ``math``
function (``math.cos(math.pi * step / total)`` in a schedule): torch.compile makes 2 graphs (the first call
specializes, the second makes the float an input). Before, each of these needed the value (an op's static argument
is a key of its kernel, ``math.cos`` calls ``float()``), so every new value compiled a program of its own until the
cache limit, and every later call ran eagerly. Now the value is an input of the op's kernel, or computed in the
program: every call after the second is a cache hit. Values against torch 2.13 eager on the same calls."""
import math
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

VALUES = (0.1, 0.17, 0.24, 0.31, 0.38, 0.45)


def _x(L):
    return L.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))


def _y(L):
    return L.tensor(np.linspace(1, -1, 12, dtype=np.float32).reshape(3, 4))


CASES = {
    "add alpha": lambda L, x, y, v: x.add(y, alpha=v),
    "add_ alpha in place": lambda L, x, y, v: x.clone().add_(y, alpha=1 - v),
    "sub alpha": lambda L, x, y, v: L.sub(x, y, alpha=v),
    "full_like": lambda L, x, y, v: L.full_like(x, v) + x,
    "full": lambda L, x, y, v: L.full((3, 4), v) * x,
    "fill_": lambda L, x, y, v: x.clone().fill_(v),
    "clamp_": lambda L, x, y, v: x.clone().clamp_(min=-v),
    "leaky_relu": lambda L, x, y, v: L.nn.functional.leaky_relu(x, v),
    "leaky_relu_": lambda L, x, y, v: L.nn.functional.leaky_relu(x.clone(), v, inplace=True),
    "elu": lambda L, x, y, v: L.nn.functional.elu(x, v),
    "hardtanh": lambda L, x, y, v: L.nn.functional.hardtanh(x, -v, v),
    "softplus beta": lambda L, x, y, v: L.nn.functional.softplus(x, beta=1 + v),
    "threshold": lambda L, x, y, v: L.nn.functional.threshold(x, v, -v),
    "smooth_l1 beta": lambda L, x, y, v: L.nn.functional.smooth_l1_loss(x, y, beta=v),
    "huber delta": lambda L, x, y, v: L.nn.functional.huber_loss(x, y, delta=v),
    "nan_to_num": lambda L, x, y, v: (x / (x - x)).nan_to_num(nan=v, posinf=1.0, neginf=-1.0),
    "normalize eps": lambda L, x, y, v: L.nn.functional.normalize(x, eps=v),
    "addcmul_ value": lambda L, x, y, v: x.clone().addcmul_(y, y, value=-v),
    "tensor(v)": lambda L, x, y, v: x * L.tensor(v),
    "tensor([v, 1.0, 2])": lambda L, x, y, v: L.tensor([v, 1.0, 2]) * x[:, :3],
    "tensor(v, dtype=float64)": lambda L, x, y, v: L.tensor(v, dtype=L.float64) + 1,
    "as_tensor(v)": lambda L, x, y, v: x - L.as_tensor(v),
    "math schedule": lambda L, x, y, v: x * (0.5 * (1 + math.cos(math.pi * v))) + math.sqrt(v) + math.exp(-v) +
    math.log(v) + math.tanh(v) + math.atan(v),
}


def _eager_torch(name):
    x, y = _x(torch), _y(torch)
    return [CASES[name](torch, x, y, v) for v in VALUES]


@pytest.mark.parametrize("name", list(CASES))
def test_a_dynamic_float_is_an_input_and_values_match_torch(name):
    x, y = _x(ft), _y(ft)
    cf = ft.compile(lambda v: CASES[name](ft, x, y, v))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no graph break, no cache-limit warning)
        got = [cf(v) for v in VALUES]
    # the first call specializes, the second compiles with the float an input; every later value reuses it
    assert cf.stats["eager_calls"] == 0
    assert cf.stats["cache_hits"] == len(VALUES) - 2, cf.stats
    for g, w in zip(got, _eager_torch(name)):
        assert str(g.dtype) == str(w.dtype)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-6, atol=1e-6)


def test_ema_update_with_a_decay_argument_matches_torch():
    """The EMA of a model's weights with a decay warm-up passed in each step (``decay = min(0.999, (1 + n) / (10 +
    n))``): two programs, then cache hits; the averaged weights equal torch's eager ones."""
    def run(L, compiled):
        L.manual_seed(0)
        model = L.nn.Linear(4, 3)
        with L.no_grad():
            model.weight.copy_(L.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
            model.bias.fill_(0.25)
        ema = [p.detach().clone() for p in model.parameters()]
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        data = L.tensor(np.linspace(0, 1, 8, dtype=np.float32).reshape(2, 4))

        def step(decay):
            opt.zero_grad()
            model(data).pow(2).mean().backward()
            opt.step()
            with L.no_grad():
                for e, p in zip(ema, model.parameters()):
                    e.mul_(decay).add_(p.detach(), alpha=1 - decay)
        f = ft.compile(step) if compiled else step
        for n in range(8):
            f(min(0.999, (1 + n) / (10 + n)))
        return [e.detach().numpy() for e in ema], f
    got, cf = run(ft, True)
    want, _ = run(torch, False)
    assert cf.stats["cache_hits"] == 6 and cf.stats["eager_calls"] == 0, cf.stats
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_a_cosine_schedule_in_the_step_compiles_twice():
    """``lr = base * 0.5 * (1 + math.cos(math.pi * step / total))`` computed inside the compiled step from its step
    argument, applied by hand (``p.add_(p.grad, alpha=-lr)``): 2 programs for 10 steps; weights as torch's."""
    def run(L, compiled):
        model = L.nn.Linear(3, 2)
        with L.no_grad():
            model.weight.copy_(L.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)))
            model.bias.zero_()
        x = L.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))

        def step(it):
            lr = 0.1 * 0.5 * (1 + math.cos(math.pi * it / 10))
            loss = model(x).square().mean()
            loss.backward()
            with L.no_grad():
                for p in model.parameters():
                    p.add_(p.grad, alpha=-lr)
                    p.grad = None
            return loss.detach()
        f = ft.compile(step) if compiled else step
        losses = [float(f(i)) for i in range(10)]
        return losses, model.weight.detach().numpy(), f
    got, w_got, cf = run(ft, True)
    want, w_want, _ = run(torch, False)
    assert cf.stats["cache_hits"] == 8 and cf.stats["eager_calls"] == 0, cf.stats
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(w_got, w_want, rtol=1e-6, atol=1e-7)


def test_a_math_domain_error_raises_as_python_and_the_argument_stays_dynamic():
    x = ft.ones(3)
    cf = ft.compile(lambda x, v: x * math.sqrt(v))
    for v in (4.0, 9.0):
        cf(x, v)
    with pytest.raises(ValueError, match="math domain error"):
        cf(x, -1.0)
    hits = cf.stats["cache_hits"]
    assert cf(x, 16.0).tolist() == [4.0, 4.0, 4.0]
    assert cf(x, 25.0).tolist() == [5.0, 5.0, 5.0]
    assert cf.stats["cache_hits"] == hits + 2


def test_the_real_math_functions_are_back_after_the_trace():
    cf = ft.compile(lambda x, v: x * math.cos(v))
    for v in (0.5, 1.5):
        cf(ft.ones(2), v)
    assert math.cos is math.__dict__["cos"] and type(math.cos).__name__ == "builtin_function_or_method"
    assert math.cos(0.5) == np.cos(0.5)


def test_an_op_that_branches_on_the_value_specializes_it_again():
    """cross_entropy's label smoothing branches on the value in its kernel: specialized again (a program per
    value, as before), results eager's."""
    x, t = _x(ft), ft.tensor([0, 1, 3])
    cf = ft.compile(lambda v: ft.nn.functional.cross_entropy(x, t, label_smoothing=v))
    got = [cf(v).item() for v in VALUES[:4]]
    want = [torch.nn.functional.cross_entropy(_x(torch), torch.tensor([0, 1, 3]), label_smoothing=v).item()
            for v in VALUES[:4]]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert cf.stats["eager_calls"] == 0
