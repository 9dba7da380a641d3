"""Post-training quantization of nn.Linear (issue 6, item 4): int8 and NF4 error bounds (exact, in float64),
packing, double quantization, the model-level API (quantize_ / dequantize / weight_bytes), one kernel per
forward, accuracy on the digits MLP and the char LM, and save/load of quantized state dicts."""
import importlib.util
import pathlib

import numpy as np
import pytest

import functorch_lite as ft
from functorch_lite import nn
from functorch_lite.quantization import (
    NF4_CODE, NF4_MAX_HALF_GAP, Int8Linear, NF4Linear, blockwise_int8_quantize, dequantize, int8_dequantize,
    int8_linear, int8_weight_quantize, nf4_dequantize, nf4_linear, nf4_quantize, quantize_, weight_bytes,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("quantization_report", ROOT / "comparisons" / "quantization_report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

# bitsandbytes' NF4 table (functional.get_4bit_type('nf4')), written out independently of the package
BNB_NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
           -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
           0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
           0.7229568362236023, 1.0]


def _weights(shape, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal(shape) * rng.uniform(0.01, 3.0, (shape[0], 1))).astype(dtype)
    w[1] = 0.0  # an all-zero row / block
    w[2, ::3] *= 50.0  # outliers
    return w


# ---- int8 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_int8_error_bound_is_exact(dtype):
    w = ft.tensor(_weights((33, 70))).to(getattr(ft, dtype))
    q, s = int8_weight_quantize(w)
    assert q.dtype is ft.int8 and s.dtype is ft.float32 and tuple(s.shape) == (33,)
    w64, q64, s64 = w.double().numpy(), q.numpy().astype(np.float64), s.numpy().astype(np.float64)
    err = np.abs(w64 - q64 * s64[:, None])  # exact in float64: q (8 bits) * s (24 bits) fits
    assert np.all(err <= s64[:, None] / 2)
    assert np.abs(q64).max() <= 127 and np.all(np.abs(q64).max(axis=1)[np.abs(w64).max(axis=1) > 0] == 127)
    assert s64[1] == 1.0 and not np.any(q64[1])  # the zero row
    # dequantize returns float32(q * s) exactly, by either entry point
    expect = (q64 * s64[:, None]).astype(np.float32)
    np.testing.assert_array_equal(int8_dequantize(q, s).numpy(), expect)
    np.testing.assert_array_equal(dequantize((q, s)).numpy(), expect)


def test_int8_linear_is_the_int32_accumulated_formula():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 48)).astype(np.float32)
    x[0, 1] = 0.0
    w, b = _weights((20, 48), 2), rng.standard_normal(20).astype(np.float32)
    q, s = int8_weight_quantize(ft.tensor(w))
    out = int8_linear(ft.tensor(x), q, s, ft.tensor(b))
    amax = np.abs(x).max(-1, keepdims=True)
    sx = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
    xq = np.clip(np.round(x / sx), -127, 127).astype(np.int64)
    acc = (xq @ q.numpy().astype(np.int64).T).astype(np.float32)
    np.testing.assert_allclose(out.numpy(), acc * sx * s.numpy() + b, rtol=1e-6, atol=1e-6)
    assert out.dtype is ft.float32 and tuple(out.shape) == (2, 5, 20)
    # activation dtype is kept; integer activations have no kernel; shapes are checked like F.linear
    assert int8_linear(ft.tensor(x).to(ft.bfloat16), q, s).dtype is ft.bfloat16
    with pytest.raises(NotImplementedError):
        int8_linear(ft.ones(2, 48, dtype=ft.int64), q, s)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        int8_linear(ft.ones(3, 47), q, s)
    with pytest.raises(RuntimeError):
        int8_weight_quantize(ft.ones(2, 3, 4))


# ---- NF4 --------------------------------------------------------------------------------------------------
def test_nf4_table():
    assert NF4_CODE.dtype == np.float32 and NF4_CODE.tolist() == np.float32(BNB_NF4).tolist()
    assert np.all(np.diff(NF4_CODE) > 0) and NF4_CODE[7] == 0.0
    assert NF4_MAX_HALF_GAP == pytest.approx((1.0 - 0.6961928009986877) / 2, abs=1e-12)


def _codes(packed, n):
    p = packed.numpy()
    idx = np.stack([p >> 4, p & 15], axis=-1).reshape(-1)
    return idx[:n]


@pytest.mark.parametrize("shape,block", [((16, 64), 64), ((10, 30), 64), ((7, 9), 16), ((5, 24), 2)])
def test_nf4_error_bound_is_exact(shape, block):
    w = ft.tensor(_weights(shape, 3))
    packed, absmax = nf4_quantize(w, block)
    n = w.numel()
    blocks = -(-n // block)
    assert packed.dtype is ft.uint8 and tuple(packed.shape) == (blocks * block // 2,)
    assert absmax.dtype is ft.float32 and tuple(absmax.shape) == (blocks,)
    idx = _codes(packed, n)
    c = np.repeat(absmax.numpy().astype(np.float64), block)[:n]
    w64 = w.numpy().reshape(-1).astype(np.float64)
    np.testing.assert_array_equal(c[:n], np.repeat(np.abs(np.pad(w64, (0, blocks * block - n))).reshape(blocks, -1)
                                                   .max(1), block)[:n])
    deq64 = NF4_CODE.astype(np.float64)[idx] * c
    assert np.all(np.abs(w64 - deq64) <= NF4_MAX_HALF_GAP * c)  # exact: codes chosen in float64
    # and the code is the nearest one (no other code is closer)
    dist = np.abs(w64[:, None] - NF4_CODE.astype(np.float64)[None, :] * c[:, None])
    assert np.all(dist[np.arange(n), idx] <= dist.min(axis=1))
    out = nf4_dequantize(packed, absmax, shape=shape, block_size=block)
    np.testing.assert_array_equal(out.numpy().reshape(-1), deq64.astype(np.float32))


def test_nf4_packing_and_exact_codes():
    # every code value times a block absmax is reproduced exactly; first element in the high nibble
    vals = np.concatenate([NF4_CODE, NF4_CODE[::-1]]) * np.float32(2.5)
    packed, absmax = nf4_quantize(ft.tensor(vals), 32)
    assert absmax.tolist() == [2.5]
    assert packed.numpy().tolist()[:8] == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF]
    np.testing.assert_array_equal(nf4_dequantize(packed, absmax, shape=(32,), block_size=32).numpy(), vals)
    with pytest.raises(ValueError):
        nf4_quantize(ft.ones(8), 3)


def test_nf4_bound_is_tight():
    """Values just inside the widest gap (between -1 and -0.696) reach the bound."""
    mid = (NF4_CODE[0].astype(np.float64) + NF4_CODE[1]) / 2
    w = np.array([1.0, mid + 1e-6, mid - 1e-6, 0.0], np.float32)
    packed, absmax = nf4_quantize(ft.tensor(w), 4)
    err = np.abs(nf4_dequantize(packed, absmax, shape=(4,), block_size=4).numpy() - w)
    assert err.max() == pytest.approx(NF4_MAX_HALF_GAP, abs=2e-6)


def test_double_quant_bounds():
    rng = np.random.default_rng(4)
    absmax = ft.tensor(rng.uniform(0.01, 2.0, 700).astype(np.float32))
    q, scale, offset = blockwise_int8_quantize(absmax)
    assert (q.dtype, scale.dtype, offset.dtype) == (ft.int8, ft.float32, ft.float32)
    assert tuple(q.shape) == (700,) and tuple(scale.shape) == (3,) and offset.shape == ()
    a64, s64 = absmax.numpy().astype(np.float64), np.repeat(scale.numpy().astype(np.float64), 256)[:700]
    recon = q.numpy().astype(np.float64) * s64 + np.float64(offset.item())
    assert np.all(np.abs(a64 - recon) <= s64 / 2 + 1e-7 * np.abs(np.float64(offset.item())))
    # the whole weight: |w - deq| <= half-gap * c + |c - c'| (+ float32 rounding of the dequantized value)
    w = ft.tensor(_weights((64, 96), 5))
    packed, am = nf4_quantize(w, 64)
    aq, asc, aoff = blockwise_int8_quantize(am)
    deq = nf4_dequantize(packed, aq, asc, aoff, shape=(64, 96), block_size=64).numpy().reshape(-1)
    c = np.repeat(am.numpy().astype(np.float64), 64)
    c2 = np.repeat((aq.numpy().astype(np.float32) * np.repeat(asc.numpy(), 256)[:am.numel()] + aoff.numpy()),
                   64).astype(np.float64)
    bound = NF4_MAX_HALF_GAP * c + np.abs(c - c2) + 2.0 ** -23 * np.abs(c2)
    assert np.all(np.abs(w.numpy().reshape(-1).astype(np.float64) - deq) <= bound)


def test_nf4_linear_matches_dequantized_matmul():
    rng = np.random.default_rng(6)
    x, w, b = rng.standard_normal((4, 3, 40)), _weights((12, 40), 7), rng.standard_normal(12)
    lin = nn.Linear(40, 12)
    with ft.no_grad():
        lin.weight.copy_(ft.tensor(w))
        lin.bias.copy_(ft.tensor(b))
    for dq in (False, True):
        m = NF4Linear.from_linear(lin, block_size=64, double_quant=dq)
        wd = m.dequantized_weight()
        out = m(ft.tensor(x, dtype=ft.float32))
        np.testing.assert_allclose(out.numpy(), (ft.tensor(x, dtype=ft.float32) @ wd.T + lin.bias).detach().numpy(),
                                   rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        m(ft.ones(2, 41))


# ---- model-level API ------------------------------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 32, bias=False))
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.body(x))


@pytest.mark.parametrize("method", ["int8", "nf4"])
def test_quantize_replaces_linears_in_place(method):
    ft.manual_seed(0)
    net = Net().eval()
    x = ft.randn(5, 64)
    with ft.no_grad():
        ref = net(x)
    body = net.body
    assert quantize_(net, method, skip=["head"]) is net and net.body is body
    cls = Int8Linear if method == "int8" else NF4Linear
    assert [type(m).__name__ for m in net.body] == [cls.__name__, "ReLU", cls.__name__]
    assert type(net.head) is nn.Linear and not net.body[0].training
    assert net.body[2].bias is None and net.body[0].weight.dtype is (ft.int8 if method == "int8" else ft.uint8)
    with ft.no_grad():
        out = net(x)
    assert float((out - ref).abs().max()) < (0.02 if method == "int8" else 0.2) * float(ref.abs().max())
    quantize_(net, method, skip=lambda name, m: name.startswith("body"))
    assert isinstance(net.head, cls)
    dequantize(net)
    assert all(type(m) is nn.Linear for m in (net.body[0], net.body[2], net.head))
    with pytest.raises(ValueError):
        quantize_(Net(), "int4")
    with pytest.raises(TypeError):
        dequantize(ft.ones(2))


def test_dequantize_layer_and_weight_bytes():
    ft.manual_seed(1)
    lin = nn.Linear(128, 64)
    q8, q4, q4d = Int8Linear.from_linear(lin), NF4Linear.from_linear(lin), NF4Linear.from_linear(lin, double_quant=True)
    back = dequantize(q8)
    assert type(back) is nn.Linear
    np.testing.assert_array_equal(back.weight.detach().numpy(), q8.dequantized_weight().numpy())
    np.testing.assert_array_equal(back.bias.detach().numpy(), lin.bias.detach().numpy())
    n = 128 * 64
    assert weight_bytes(lin) == 4 * n
    assert weight_bytes(q8) == n + 4 * 64                      # int8 + a float32 scale per row
    assert weight_bytes(q4) == n // 2 + 4 * (n // 64)          # 4 bits + a float32 absmax per 64
    assert weight_bytes(q4d) == n // 2 + n // 64 + 4 * 1 + 4   # int8 absmax + one 256-block scale + offset
    assert 3.85 < 4 * n / weight_bytes(q8) < 4 and 7.1 < 4 * n / weight_bytes(q4) < 7.2 < 4 * n / weight_bytes(q4d)


def test_forward_is_one_dispatch_per_quantized_layer():
    ft.manual_seed(2)
    for method in ("int8", "nf4"):
        m = quantize_(nn.Sequential(nn.Linear(64, 16)), method, double_quant=True)
        x = ft.randn(3, 64)
        m(x)
        before = ft.cache_info()
        m(x)
        after = ft.cache_info()
        assert after["calls"] - before["calls"] == 1 and after["misses"] == before["misses"]
        assert after["compiles"] == before["compiles"]


# ---- accuracy on the examples' models -------------------------------------------------------------------------
def test_digits_mlp_quantized_outputs_stay_close():
    model, X, y = report.train_digits(steps=120)
    r8 = report.measure(report.DigitsMLP, model, X, y, "int8")
    r4 = report.measure(report.DigitsMLP, model, X, y, "nf4", double_quant=True)
    assert r8["acc_fp32"] > 0.9
    assert r8["mean_abs_err"] < 0.02 * r8["ref_abs_mean"] and r8["argmax_agree"] > 0.99
    assert r4["mean_abs_err"] < 0.1 * r4["ref_abs_mean"] and r4["argmax_agree"] > 0.97
    assert abs(r8["acc_quant"] - r8["acc_fp32"]) < 0.01 and abs(r4["acc_quant"] - r4["acc_fp32"]) < 0.03
    assert 3.8 < r8["ratio"] < 4.0 and 7.5 < r4["ratio"] < 8.0


def test_char_lm_quantized_outputs_stay_close():
    model, x, y = report.train_char_lm(steps=0)
    vocab = model.head.out_features
    r8 = report.measure(lambda: report.CharLM(vocab), model, x, y, "int8")
    r4 = report.measure(lambda: report.CharLM(vocab), model, x, y, "nf4")
    assert r8["mean_abs_err"] < 0.02 * r8["ref_abs_mean"] and r8["argmax_agree"] > 0.97
    assert r4["mean_abs_err"] < 0.1 * r4["ref_abs_mean"] and r4["argmax_agree"] > 0.85
    assert abs(r8["loss_quant"] - r8["loss_fp32"]) < 0.01 and abs(r4["loss_quant"] - r4["loss_fp32"]) < 0.05
    assert 3.8 < r8["ratio"] < 4.0 and 7.0 < r4["ratio"] < 7.2


# ---- save / load --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method,kw", [("int8", {}), ("nf4", {}), ("nf4", {"double_quant": True})])
def test_quantized_state_dict_saves_and_loads(tmp_path, method, kw):
    ft.manual_seed(3)
    net = quantize_(Net().eval(), method, **kw)
    sd = net.state_dict()
    dts = {k: v.dtype for k, v in sd.items()}
    assert dts["body.0.weight"] is (ft.int8 if method == "int8" else ft.uint8)
    assert dts["body.0.bias"] is ft.float32 and "body.2.bias" not in dts
    if method == "int8":
        assert dts["body.0.weight_scale"] is ft.float32
    elif kw:
        assert (dts["head.weight_absmax"], dts["head.weight_absmax_scale"], dts["head.weight_absmax_offset"]) == \
            (ft.int8, ft.float32, ft.float32)
    else:
        assert dts["head.weight_absmax"] is ft.float32
    path = tmp_path / "q.pt"
    ft.save(sd, path)
    ft.manual_seed(4)  # a different float model, quantized the same way, then loaded
    fresh = quantize_(Net().eval(), method, **kw)
    x = ft.randn(6, 64)
    assert not np.array_equal(fresh(x).numpy(), net(x).numpy())
    fresh.load_state_dict(ft.load(path))
    np.testing.assert_array_equal(fresh(x).numpy(), net(x).numpy())
    loaded = ft.load(path)
    for k, v in sd.items():
        assert loaded[k].dtype is v.dtype and np.array_equal(loaded[k].numpy(), v.numpy())


def test_gradients_flow_to_the_input_through_nf4_only():
    """QLoRA backpropagates through the frozen 4-bit base into earlier (trainable) layers; the int8 path is
    inference-only (no gradient, like PyTorch's dynamically quantized Linear)."""
    ft.manual_seed(5)
    lin = nn.Linear(64, 8)
    x = ft.randn(3, 64, requires_grad=True)
    y = NF4Linear.from_linear(lin)(x)
    assert y.requires_grad and y.grad_fn.name() == "MatMul4BitBackward"
    y.sum().backward()
    w = NF4Linear.from_linear(lin).dequantized_weight()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(w.numpy().sum(0), (3, 64)), rtol=1e-5, atol=1e-6)
    assert not Int8Linear.from_linear(lin)(x).requires_grad


def test_docstring_examples_run():
    import doctest
    import functorch_lite.quantization as Q
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    found = 0
    for name in Q.__all__:
        obj = getattr(Q, name)
        if not callable(obj):
            continue
        for o in [obj] + ([obj.from_linear] if isinstance(obj, type) and hasattr(obj, "from_linear") else []):
            for t in doctest.DocTestFinder(recurse=False).find(o, name, globs={}):
                found += len(t.examples)
                runner.run(t, out=lambda s: None)
    assert found > 30 and runner.failures == 0
