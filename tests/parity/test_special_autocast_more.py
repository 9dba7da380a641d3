"""Special functions, half-precision elementwise ops, NumPy conversion of conjugate views and autocast casts found by
a red-team pass against torch 2.13, each compared with torch:

- exp2 / log2 / log10 of float16 / bfloat16 compute in float32 (jnp scaled by ln 2 rounded to bfloat16: exp2(10)
  was 1000);
- erfcx was 0 on [9.2, 9.42] (float32) and [26.54, 26.64] (float64), and log_ndtr -inf on the matching band
  (erfc there is subnormal, and XLA's CPU backend flushes it);
- ``.numpy()`` / ``np.asarray`` of a conjugate (or negative-bit) view raise torch's error, and ``numpy(force=True)``
  gives its values (both returned the storage's unconjugated values);
- xlog1py's derivative in x is 0 where x == 0 and y <= -1 (it was -inf);
- under CPU autocast: torch.pinverse, view_as_complex and margin_ranking_loss compute in float32.
"""
import numpy as np
import pytest
import torch

import functorch_lite as ft


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("fn", ["exp2", "log2", "log10"])
def test_half_exp2_log2_log10(fn, dtype):
    xs = np.linspace(-14, 15, 1001)
    if fn != "exp2":
        xs = np.abs(xs) + 0.01
    want = getattr(torch, fn)(torch.tensor(xs).to(getattr(torch, dtype))).float().numpy()
    got = getattr(ft, fn)(ft.tensor(xs).to(getattr(ft, dtype))).float().numpy()
    np.testing.assert_array_equal(got, want)


def test_exp2_of_exact_powers():
    for dt in ("bfloat16", "float16"):
        x = [2.0, 10.0, -2.0, 3.0]
        assert ft.exp2(ft.tensor(x, dtype=getattr(ft, dt))).tolist() == \
            torch.exp2(torch.tensor(x, dtype=getattr(torch, dt))).tolist()


@pytest.mark.parametrize("dtype, lo, hi", [("float32", -5, 14), ("float64", -5, 40)])
def test_erfcx_and_log_ndtr_across_the_subnormal_band(dtype, lo, hi):
    xs = np.concatenate([np.linspace(lo, hi, 3001), [9.2, 9.3, 9.4, 26.55, 26.6]])
    t, f = getattr(torch, dtype), getattr(ft, dtype)
    want = torch.special.erfcx(torch.tensor(xs, dtype=t)).numpy()
    got = ft.special.erfcx(ft.tensor(xs, dtype=f)).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 1e-13)
    ys = -xs * np.sqrt(2)
    want = torch.special.log_ndtr(torch.tensor(ys, dtype=t)).numpy()
    got = ft.special.log_ndtr(ft.tensor(ys, dtype=f)).numpy()
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 1e-12)


def test_erfcx_gradient_in_the_band():
    grads = []
    for L in (torch, ft):
        x = L.tensor([9.3, 26.6, 1.0], dtype=L.float64, requires_grad=True)
        L.special.erfcx(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10)


def _outcome(fn):
    try:
        return ("ok", np.asarray(fn()).tolist())
    except Exception as e:  # noqa: BLE001  (the outcome compared)
        return (type(e).__name__, str(e))


NUMPY_CASES = {
    "conj numpy()": lambda L: L.tensor([1 + 2j, 3 - 1j]).conj().numpy(),
    "conj numpy(force)": lambda L: L.tensor([1 + 2j, 3 - 1j]).conj().numpy(force=True),
    "conj np.asarray": lambda L: np.asarray(L.tensor([1 + 2j]).conj()),
    "neg numpy()": lambda L: L.tensor([1 + 2j]).conj().imag.numpy(),
    "neg numpy(force)": lambda L: L.tensor([1 + 2j]).conj().imag.numpy(force=True),
    "mH force": lambda L: L.tensor([[1 + 2j, 3j], [4 + 0j, 5 - 1j]]).mH.numpy(force=True),
    "ihfft force": lambda L: L.fft.ihfft(L.tensor([1.0, 2.0, 3.0, 4.0])).numpy(force=True),
    "resolved": lambda L: L.tensor([1 + 2j]).conj().resolve_conj().numpy(),
}


@pytest.mark.parametrize("name", list(NUMPY_CASES))
def test_numpy_of_a_conjugate_view(name):
    assert _outcome(lambda: NUMPY_CASES[name](ft)) == _outcome(lambda: NUMPY_CASES[name](torch))


def test_xlog1py_gradient_at_zero():
    def run(L):
        x = L.tensor([0.0, 0.0, 1.0, 0.0], requires_grad=True)
        y = L.tensor([-1.0, -2.0, -0.5, 3.0], requires_grad=True)
        L.special.xlog1py(x, y).sum().backward()
        return np.concatenate([x.grad.numpy(), y.grad.numpy()])
    np.testing.assert_allclose(run(ft), run(torch), rtol=1e-6, equal_nan=True)


def test_autocast_float32_list():
    def run(L):
        with L.autocast("cpu", dtype=L.bfloat16):
            a = L.pinverse(L.tensor([[1.0, 2.0], [3.0, 4.0]]))
            b = L.linalg.pinv(L.tensor([[1.0, 2.0], [3.0, 4.0]]))
            x = L.ones(3, 2) @ L.ones(2, 2)
            c = L.view_as_complex(x)
            d = L.nn.functional.margin_ranking_loss(x, x * 2, L.ones_like(x))
        return [str(t.dtype) for t in (a, b, x, c, d)], a.float().numpy(), d.item()
    (dt_f, a_f, d_f), (dt_t, a_t, d_t) = run(ft), run(torch)
    assert dt_f == dt_t
    np.testing.assert_allclose(a_f, a_t, rtol=1e-5)
    assert d_f == d_t


@pytest.mark.parametrize("fn", ["digamma", "lgamma"])
def test_digamma_lgamma_gradients_at_poles(fn):
    """torch's derivatives: lgamma's is digamma (-inf at 0), digamma's trigamma (inf at 0; JAX's gave NaN)."""
    def run(L):
        x = L.tensor([0.0, -1.0, -2.5, 1.0, 3.7], requires_grad=True)
        getattr(L, fn)(x).sum().backward()
        return x.grad.numpy()
    np.testing.assert_allclose(run(ft), run(torch), rtol=1e-5, equal_nan=True)


def _set_weights(L, module):
    with L.no_grad():
        for p in module.parameters():
            p.copy_(L.tensor(np.random.RandomState(p.numel()).randn(*p.shape).astype(np.float32) * 0.3))
    return module


def test_attention_and_transformer_layers_take_a_half_query_under_autocast():
    """A bfloat16 query (a projection's output under autocast) beside float32 weights: torch casts both at the
    op's entry; the facade's MHA dtype check ran on the uncast dtypes and raised."""
    def run(L):
        proj = _set_weights(L, L.nn.Linear(4, 8))
        enc = _set_weights(L, L.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True, dropout=0.0))
        dec = _set_weights(L, L.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True, dropout=0.0))
        mha = _set_weights(L, L.nn.MultiheadAttention(8, 2, batch_first=True))
        x = L.tensor(np.random.RandomState(0).randn(2, 3, 4).astype(np.float32))
        with L.autocast("cpu", dtype=L.bfloat16):
            h = proj(x)
            outs = [h, enc(h), dec(h, h.float()), mha(h, h, h, attn_mask=L.zeros(3, 3))[0]]
        return [str(o.dtype) for o in outs], [o.detach().float().numpy() for o in outs]
    (dt_f, v_f), (dt_t, v_t) = run(ft), run(torch)
    assert dt_f == dt_t
    for a, b in zip(v_f, v_t):
        np.testing.assert_allclose(a, b, atol=0.05, rtol=0.05)  # (bfloat16 arithmetic in different orders)


def test_transformer_encoder_fast_path_under_autocast_is_in_the_autocast_dtype():
    def run(L):
        layer = _set_weights(L, L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True))
        enc = L.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
        x = L.tensor(np.random.RandomState(1).randn(2, 5, 8).astype(np.float32))
        with L.autocast("cpu", dtype=L.bfloat16), L.no_grad():
            r = enc(x)
        return str(r.dtype), r.float().numpy()
    (dt_f, v_f), (dt_t, v_t) = run(ft), run(torch)
    assert dt_f == dt_t == "torch.bfloat16"
    np.testing.assert_allclose(v_f, v_t, atol=0.05)


HALF_ACTS = {
    "gelu tanh": lambda L, x: L.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda L, x: L.nn.functional.silu(x),
    "glu": lambda L, x: L.nn.functional.glu(x.reshape(-1, 2)),
    "logsigmoid": lambda L, x: L.nn.functional.logsigmoid(x),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.2),
    "addcmul": lambda L, x: L.addcmul(x, x, x.flip(0), value=0.5),
    "addcdiv": lambda L, x: L.addcdiv(x, x, x.flip(0).abs() + 0.5, value=0.5),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(HALF_ACTS))
def test_half_activations_compute_in_float32(name, dtype):
    """torch's CPU kernels compute these in float32 and round once: bfloat16 gelu(tanh) at -3 was 61% off."""
    xs = np.linspace(-6, 6, 2000)
    want = HALF_ACTS[name](torch, torch.tensor(xs).to(getattr(torch, dtype))).float().numpy()
    got = HALF_ACTS[name](ft, ft.tensor(xs).to(getattr(ft, dtype))).float().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-6)
    assert (got != want).mean() < 0.1  # (exact but for an ulp where the float32 evaluations differ)


def test_transformer_fast_path_under_autocast_without_biases_and_with_a_half_input():
    """A layer without biases (torch then skips the fused path) and a bfloat16 input (cast, as a float32 one)."""
    def run(L):
        out = []
        for bias in (True, False):
            layer = _set_weights(L, L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, bias=bias))
            enc = L.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
            x = L.tensor(np.random.RandomState(2).randn(2, 5, 8).astype(np.float32))
            for inp in (x, x.bfloat16()):
                with L.autocast("cpu", dtype=L.bfloat16), L.no_grad():
                    out.append(str(enc(inp).dtype))
        return out
    assert run(ft) == run(torch)
