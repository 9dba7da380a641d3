"""bfloat16 / float16 ``F.linear`` / ``addmm`` / ``baddbmm`` round once, as PyTorch's (2.13) kernels do (``addbmm``
once per batch).

PyTorch's addmm accumulates the product in float32 and adds the (scaled) bias there before the one rounding to
the low-precision dtype; adding a bias to an already rounded product rounds twice (``[1, 2**-8] @ [1, 1] + 2**-8``:
``1.0078125`` in bfloat16 from PyTorch, ``1.0`` rounded twice). Checked bit for bit in bfloat16 (float16: within
one unit in the last place, where float32 summation order alone can flip a rounding), with gradients and grad_fn
names, under ``autocast('cpu', bfloat16)`` over SGD steps of an ``nn.Linear`` model; float32 / float64 results
stay those of the unfused formula, bit for bit; ``beta=0`` ignores a NaN input as PyTorch documents.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(3)
X = RNG.standard_normal((16, 64)).astype(np.float32)
W = RNG.standard_normal((32, 64)).astype(np.float32)
BIAS = RNG.standard_normal(32).astype(np.float32)
B1 = RNG.standard_normal((3, 8, 16)).astype(np.float32)
B2 = RNG.standard_normal((3, 16, 5)).astype(np.float32)
INP = RNG.standard_normal((3, 8, 5)).astype(np.float32)


def _t(L, a, dt, grad=False):
    t = L.tensor(a).to(getattr(L, dt))
    return t.requires_grad_() if grad else t


def _bits_equal(f, t, dt):
    """Bit for bit in bfloat16; float16 may differ by one ulp on a few elements (float32 summation order)."""
    a, b = f.detach().float().numpy(), t.detach().float().numpy()
    if dt == "bfloat16":
        np.testing.assert_array_equal(a, b)
    else:
        ulp = np.spacing(np.abs(b).astype(np.float16)).astype(np.float32)
        assert np.all(np.abs(a - b) <= ulp) and np.mean(a != b) < 0.02, np.sum(a != b)


def test_the_reported_example():
    for dt in ("bfloat16", "float16"):
        for L in (torch, ft):
            x = _t(L, [[1.0, 0.00390625]], dt)
            w = _t(L, [[1.0, 1.0]], dt)
            b = _t(L, [0.00390625], dt)
            r = L.nn.functional.linear(x, w, b)
            assert str(r.dtype) == f"torch.{dt}"
            assert r.float().tolist() == [[1.0078125]], (L.__name__, dt, r)
            assert L.addmm(b, x, w.t()).float().tolist() == [[1.0078125]]
            assert L.baddbmm(b, x[None], w.t()[None]).float().tolist() == [[[1.0078125]]]


CASES = {
    "linear_2d": lambda L, dt: L.nn.functional.linear(_t(L, X, dt), _t(L, W, dt), _t(L, BIAS, dt)),
    "linear_3d": lambda L, dt: L.nn.functional.linear(_t(L, X.reshape(4, 4, 64), dt), _t(L, W, dt), _t(L, BIAS, dt)),
    "linear_1d": lambda L, dt: L.nn.functional.linear(_t(L, X[0], dt), _t(L, W, dt), _t(L, BIAS, dt)),
    "linear_nobias": lambda L, dt: L.nn.functional.linear(_t(L, X, dt), _t(L, W, dt)),
    "addmm": lambda L, dt: L.addmm(_t(L, BIAS, dt), _t(L, X, dt), _t(L, W, dt).t()),
    "addmm_2d_input": lambda L, dt: L.addmm(_t(L, X[:, :32], dt), _t(L, X, dt), _t(L, W, dt).t()),
    "addmm_beta_alpha": lambda L, dt: L.addmm(_t(L, BIAS, dt), _t(L, X, dt), _t(L, W, dt).t(), beta=0.3, alpha=0.7),
    "addmm_beta0": lambda L, dt: L.addmm(_t(L, BIAS, dt), _t(L, X, dt), _t(L, W, dt).t(), beta=0, alpha=0.7),
    "addmm_method_inplace": lambda L, dt: _t(L, X[:, :32], dt).addmm_(_t(L, X, dt), _t(L, W, dt).t(), alpha=2),
    "baddbmm": lambda L, dt: L.baddbmm(_t(L, INP, dt), _t(L, B1, dt), _t(L, B2, dt)),
    "baddbmm_beta_alpha": lambda L, dt: L.baddbmm(_t(L, INP, dt), _t(L, B1, dt), _t(L, B2, dt), beta=0.3, alpha=0.7),
    "baddbmm_broadcast": lambda L, dt: L.baddbmm(_t(L, INP[0, 0], dt), _t(L, B1, dt), _t(L, B2, dt)),
    "nn_linear_module": lambda L, dt: _module(L, dt)(_t(L, X, dt)),
    # addbmm: one rounded addmm per batch into the result (beta only in the first), as PyTorch's CPU kernel
    "addbmm": lambda L, dt: L.addbmm(_t(L, INP[0], dt), _t(L, B1, dt), _t(L, B2, dt)),
    "addbmm_beta_alpha": lambda L, dt: L.addbmm(_t(L, INP[0], dt), _t(L, B1, dt), _t(L, B2, dt), beta=0.3, alpha=0.7),
    "addbmm_beta0_one_batch": lambda L, dt: L.addbmm(_t(L, INP[0], dt), _t(L, B1[:1], dt), _t(L, B2[:1], dt), beta=0),
    "addbmm_inplace": lambda L, dt: _t(L, INP[0], dt).addbmm_(_t(L, B1, dt), _t(L, B2, dt), alpha=2),
}


def _module(L, dt):
    m = L.nn.Linear(64, 32).to(getattr(L, dt))
    with L.no_grad():
        m.weight.copy_(_t(L, W, dt))
        m.bias.copy_(_t(L, BIAS, dt))
    return m


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_single_rounding(name, dt):
    with torch.no_grad(), ft.no_grad():
        t, f = CASES[name](torch, dt), CASES[name](ft, dt)
    assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape)
    _bits_equal(f, t, dt)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(16, 64), (4, 4, 64), (64,)])
def test_gradients_and_grad_fn(shape, dt):
    out = []
    for L in (torch, ft):
        x = _t(L, X.reshape(-1)[:int(np.prod(shape))].reshape(shape), dt, True)
        w, b = _t(L, W, dt, True), _t(L, BIAS, dt, True)
        r = L.nn.functional.linear(x, w, b)
        (r.float() * L.tensor(np.linspace(-1, 1, 32, dtype=np.float32))).sum().backward()
        out.append((type(r.grad_fn).__name__, r, x.grad, w.grad, b.grad))
    (t_name, *t_vals), (f_name, *f_vals) = out
    assert f_name == t_name  # (AddmmBackward0 for 2-D input, ViewBackward0 otherwise)
    for f, t in zip(f_vals, t_vals):
        assert str(f.dtype) == str(t.dtype)
        _bits_equal(f, t, dt)


def test_addmm_baddbmm_gradients_and_names():
    out = []
    for L in (torch, ft):
        inp, a, b = _t(L, BIAS, "bfloat16", True), _t(L, X, "bfloat16", True), _t(L, W.T.copy(), "bfloat16", True)
        i3, b1, b2 = (_t(L, v, "bfloat16", True) for v in (INP, B1, B2))
        r1 = L.addmm(inp, a, b)
        r2 = L.baddbmm(i3, b1, b2, beta=0.5, alpha=2)
        (r1.float().sum() + (r2.float() ** 2).sum()).backward()
        out.append(([type(r.grad_fn).__name__ for r in (r1, r2)], [r1, r2] + [t.grad for t in (inp, a, b, i3, b1, b2)]))
    assert out[1][0] == out[0][0] == ["AddmmBackward0", "BaddbmmBackward0"]
    for f, t in zip(out[1][1], out[0][1]):
        _bits_equal(f, t, "bfloat16")


def test_addmm_scaled_gradients_within_an_ulp():
    """alpha / beta that are not powers of two: PyTorch's backward rounds ``grad @ mat2.T`` before scaling it by
    alpha (and scales the bias's gradient before summing it); here the scaling happens in float32 before the one
    rounding, so a gradient may differ by one bfloat16 ulp (the forward result is the same bits)."""
    out = []
    for L in (torch, ft):
        inp, a, b = _t(L, BIAS, "bfloat16", True), _t(L, X, "bfloat16", True), _t(L, W.T.copy(), "bfloat16", True)
        r = L.addmm(inp, a, b, beta=0.3, alpha=0.7)
        (r.float() * L.tensor(np.linspace(-1, 1, 32, dtype=np.float32))).sum().backward()
        out.append([r] + [t.grad for t in (inp, a, b)])
    _bits_equal(out[1][0], out[0][0], "bfloat16")
    for f, t in zip(out[1][1:], out[0][1:]):
        np.testing.assert_allclose(f.float().numpy(), t.float().numpy(), rtol=2 ** -7, atol=2 ** -12)


def test_beta0_ignores_nan_input():
    for L in (torch, ft):
        for dt in ("float32", "bfloat16"):
            nan_b = _t(L, [float("nan"), 1.0], dt)
            x = _t(L, np.ones((2, 2), np.float32), dt)
            assert L.addmm(nan_b, x, x, beta=0).float().tolist() == [[2.0, 2.0], [2.0, 2.0]]
            assert L.baddbmm(nan_b, x[None], x[None], beta=0).float().tolist() == [[[2.0, 2.0], [2.0, 2.0]]]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_float32_float64_unchanged(dt):
    """The full-precision path is the unfused formula, bit for bit: ``x @ w.T + b``; the product scaled by alpha
    plus the input scaled by beta (each op's jax body jitted on the arrays the op receives)."""
    jdt = jnp.dtype(dt)
    x, w, b, wt = (np.asarray(v, jdt) for v in (X, W, BIAS, np.ascontiguousarray(W.T)))
    i3, b1, b2 = (np.asarray(v, jdt) for v in (INP, B1, B2))
    T = {k: ft.tensor(v) for k, v in (("x", x), ("w", w), ("b", b), ("wt", wt), ("i3", i3), ("b1", b1), ("b2", b2))}
    a7, a3 = jnp.asarray(0.7, jdt), jnp.asarray(0.3, jdt)
    pairs = [
        (ft.nn.functional.linear(T["x"], T["w"], T["b"]), jax.jit(lambda x, w, b: jnp.matmul(x, w.T) + b)(x, w, b)),
        (ft.nn.functional.linear(T["x"][0], T["w"], T["b"]),
         jax.jit(lambda x, w, b: jnp.matmul(x, w.T) + b)(x[0], w, b)),
        (ft.addmm(T["b"], T["x"], T["wt"], beta=0.3, alpha=0.7),
         jax.jit(lambda b, x, m: jnp.matmul(x, m) * a7 + b * a3)(b, x, wt)),
        (ft.baddbmm(T["i3"], T["b1"], T["b2"], alpha=0.7),
         jax.jit(lambda i, p, q: jnp.matmul(p, q) * a7 + i)(i3, b1, b2)),
    ]
    for got, ref in pairs:
        assert str(got.dtype) == f"torch.{dt}"
        np.testing.assert_array_equal(got.numpy(), np.asarray(ref))


def _sgd_under_autocast(L, steps=4):
    rng = np.random.default_rng(7)
    xs, ys = rng.standard_normal((32, 12)).astype(np.float32), rng.integers(0, 3, 32)
    w1, b1 = rng.standard_normal((16, 12)).astype(np.float32) * 0.3, rng.standard_normal(16).astype(np.float32) * 0.1
    w2, b2 = rng.standard_normal((3, 16)).astype(np.float32) * 0.3, rng.standard_normal(3).astype(np.float32) * 0.1
    model = L.nn.Sequential(L.nn.Linear(12, 16), L.nn.ReLU(), L.nn.Linear(16, 3))
    with L.no_grad():
        for p, v in zip(model.parameters(), (w1, b1, w2, b2)):
            p.copy_(L.tensor(v))
    opt = L.optim.SGD(model.parameters(), lr=0.1)
    x, y = L.tensor(xs), L.tensor(ys)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with L.autocast(device_type="cpu", dtype=L.bfloat16):
            out = model(x)
            loss = L.nn.functional.cross_entropy(out, y)
        assert str(out.dtype) == "torch.bfloat16" and type(out.grad_fn).__name__ == "AddmmBackward0"
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_nn_linear_under_bf16_autocast_sgd_steps():
    t_losses, t_params = _sgd_under_autocast(torch)
    f_losses, f_params = _sgd_under_autocast(ft)
    np.testing.assert_allclose(f_losses, t_losses, rtol=2e-3)
    for f, t in zip(f_params, t_params):
        np.testing.assert_allclose(f, t, rtol=1e-3, atol=1e-4)
