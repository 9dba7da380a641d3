"""float8 dtypes and the quantization ops against real PyTorch (issue 6, items 3-4).

* casts into float8_e4m3fn / float8_e5m2 (creation, ``.to``, round trips, saturation), bit for bit;
* which ordinary ops raise on float8 tensors (same exception type as PyTorch);
* ``_scaled_mm`` against ``torch._scaled_mm`` (values, dtypes, argument errors), ``to_float8`` against the
  same recipe run in torch;
* the quantization ops of the op table (tests/parity/_cases_quant.py) against torch references in every
  sweep dtype.
"""
import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.quantization as Q

from _cases_quant import CASES as QUANT_GRAD_CASES, FORWARD_ONLY
from _parity import assert_same_outcome

QUANT_CASES = {**QUANT_GRAD_CASES, **FORWARD_ONLY}

F8 = ["float8_e4m3fn", "float8_e5m2"]


def _bits(t):
    """uint8 bit patterns of a float8 tensor (torch or facade), NaNs normalised to one pattern per sign."""
    return np.asarray(t.view(torch.uint8 if isinstance(t, torch.Tensor) else ft.uint8).numpy())


def _same_f8(t_out, f_out):
    assert str(f_out.dtype) == str(t_out.dtype)
    tb, fb = _bits(t_out), _bits(f_out)
    t_nan = np.isnan(t_out.float().numpy())
    np.testing.assert_array_equal(np.isnan(f_out.float().numpy()), t_nan)
    np.testing.assert_array_equal(fb[~t_nan], tb[~t_nan])


# ---- casts -------------------------------------------------------------------------------------------------
SPECIAL = [0.0, -0.0, 1.5, -2.7, 3.9, 1000.0, -1000.0, 448.0, 449.0, 463.99, 464.0, 479.0, 480.0, 500.0, 57344.0,
           60000.0, 61439.0, 61440.0, 1e5, 1e30, float("inf"), float("-inf"), float("nan"), 1e-9, 2.0 ** -9,
           2.0 ** -10, 3 * 2.0 ** -11, 2.0 ** -16, 2.0 ** -17, 1.0625, 1.1875, 1.125, 1.375, 0.3, -0.3, 240.0, 232.0]


@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("dst", F8)
def test_to_float8_matches_torch_bitwise(src, dst):
    rng = np.random.default_rng(0)
    vals = np.concatenate([SPECIAL, rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 6, 2000)])
    vals = vals.astype(np.float32)
    t = torch.tensor(vals).to(getattr(torch, src)).to(getattr(torch, dst))
    f = ft.tensor(vals).to(getattr(ft, src)).to(getattr(ft, dst))
    _same_f8(t, f)


@pytest.mark.parametrize("dst", F8)
def test_every_float16_value_casts_like_torch(dst):
    """All 65,536 float16 bit patterns (normals, subnormals, inf, NaN) into float8, bit for bit."""
    bits = np.arange(65536, dtype=np.uint16).view(np.float16)
    t = torch.from_numpy(bits.copy()).to(getattr(torch, dst))
    f = ft.tensor(bits.copy()).to(getattr(ft, dst))
    _same_f8(t, f)


@pytest.mark.parametrize("dt", F8)
def test_every_float8_value_upcasts_like_torch(dt):
    """All 256 float8 bit patterns -> float32 / float16 / bfloat16 / int64 / bool, and float8 -> float8."""
    raw = np.arange(256, dtype=np.uint8)
    t8 = torch.from_numpy(raw.copy()).view(getattr(torch, dt))
    f8 = ft.tensor(raw.copy()).view(getattr(ft, dt))
    for target in ("float32", "float16", "bfloat16"):
        np.testing.assert_array_equal(f8.to(getattr(ft, target)).float().numpy(),
                                      t8.to(getattr(torch, target)).float().numpy())
    finite = np.isfinite(t8.float().numpy())
    np.testing.assert_array_equal(f8.to(ft.int64).numpy()[finite], t8.to(torch.int64).numpy()[finite])
    np.testing.assert_array_equal(f8.bool().numpy(), t8.bool().numpy())
    other = F8[1 - F8.index(dt)]
    _same_f8(t8.to(getattr(torch, other)), f8.to(getattr(ft, other)))


@pytest.mark.parametrize("dt", F8)
def test_creation_and_round_trip(dt):
    vals = [v for v in SPECIAL if not (isinstance(v, float) and (v != v))]
    t = torch.tensor(vals, dtype=getattr(torch, dt))
    f = ft.tensor(vals, dtype=getattr(ft, dt))
    _same_f8(t, f)
    # a float8 value survives float8 -> float32 -> float8 unchanged
    _same_f8(t.float().to(getattr(torch, dt)), f.float().to(getattr(ft, dt)))
    assert f.tolist() == t.tolist()
    assert (f.element_size(), f.nbytes) == (t.element_size(), t.nbytes)
    assert str(ft.zeros(3, dtype=getattr(ft, dt)).dtype) == str(torch.zeros(3, dtype=getattr(torch, dt)).dtype)


def test_saturation_rules():
    """DTY-07/08: e4m3fn saturates to +-448 (infinities included); e5m2 overflows to inf."""
    big = [1000.0, -1000.0, float("inf"), float("-inf"), 464.0, 480.0]
    assert ft.tensor(big).to(ft.float8_e4m3fn).float().tolist() == [448.0, -448.0, 448.0, -448.0, 448.0, 448.0]
    assert ft.tensor([1e5, 57344.0, 61440.0]).to(ft.float8_e5m2).float().tolist() == \
        torch.tensor([1e5, 57344.0, 61440.0]).to(torch.float8_e5m2).float().tolist()


@pytest.mark.parametrize("dt", F8)
def test_finfo(dt):
    a, b = ft.finfo(getattr(ft, dt)), torch.finfo(getattr(torch, dt))
    assert (a.bits, a.eps, a.max, a.min, a.tiny) == (b.bits, b.eps, b.max, b.min, b.tiny)


# ---- ops on float8 tensors ----------------------------------------------------------------------------------
def _f8(m, *shape):
    return m.ones(*shape, dtype=m.float8_e4m3fn)


# Each snippet either works in both (same dtype and values) or raises the same exception, with the same
# message, in both. Every op of the table is also run in float8 by test_op_table_sweep.py.
OPS = {
    "add_scalar": lambda m: _f8(m, 2) + 1,
    "add": lambda m: _f8(m, 2) + _f8(m, 2),
    "add_f32": lambda m: _f8(m, 2) + m.ones(2),
    "add_int": lambda m: _f8(m, 2) + m.ones(2, dtype=m.int64),
    "add_e5m2": lambda m: _f8(m, 2) + m.ones(2, dtype=m.float8_e5m2),
    "sub": lambda m: _f8(m, 2) - 1,
    "mul": lambda m: _f8(m, 2) * 2,
    "mul_": lambda m: _f8(m, 2).mul_(2.0),
    "div": lambda m: _f8(m, 2) / 2,
    "pow": lambda m: _f8(m, 2) ** 2,
    "exp": lambda m: _f8(m, 2).exp(),
    "sqrt": lambda m: _f8(m, 2).sqrt(),
    "sigmoid": lambda m: _f8(m, 2).sigmoid(),
    "clamp": lambda m: _f8(m, 2).clamp(0, 1),
    "sum": lambda m: _f8(m, 2).sum(),
    "mean": lambda m: _f8(m, 2).mean(),
    "dot": lambda m: _f8(m, 2) @ _f8(m, 2),
    "mv": lambda m: _f8(m, 2, 2) @ _f8(m, 2),
    "bmm": lambda m: _f8(m, 2, 2, 2) @ _f8(m, 2, 2, 2),
    "mm": lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float8_e4m3fn) @ _f8(m, 2, 3),
    "mm_e5m2": lambda m: m.ones(2, 2, dtype=m.float8_e5m2) @ m.ones(2, 2, dtype=m.float8_e5m2),
    "linear": lambda m: m.nn.functional.linear(_f8(m, 2, 2), _f8(m, 3, 2)),
    "abs": lambda m: m.tensor([-1.5, 2.0], dtype=m.float8_e4m3fn).abs(),
    "eq": lambda m: _f8(m, 2) == _f8(m, 2),
    "isnan": lambda m: _f8(m, 2).isnan(),
    "clone": lambda m: _f8(m, 2).clone(),
    "reshape": lambda m: _f8(m, 2, 2).reshape(4),
    "t_contiguous": lambda m: _f8(m, 2, 3).t().contiguous(),
    "slice": lambda m: _f8(m, 4)[1:3],
    "zeros": lambda m: m.zeros(2, dtype=m.float8_e4m3fn),
    "full": lambda m: m.full((2,), 3.0, dtype=m.float8_e4m3fn),
    "zeros_like": lambda m: m.zeros_like(_f8(m, 2)),
    "randn": lambda m: m.randn(2, dtype=m.float8_e4m3fn),
    "rand": lambda m: m.rand(2, dtype=m.float8_e4m3fn),
    "fill_": lambda m: _f8(m, 2).fill_(3.0),
    "copy_": lambda m: _f8(m, 2).copy_(m.tensor([1000.0, 2.0])),
    "to_int64": lambda m: m.tensor([3.5, -3.5], dtype=m.float8_e4m3fn).to(m.int64),
    "to_bool": lambda m: m.tensor([0.0, 1.0], dtype=m.float8_e4m3fn).bool(),
    "view_uint8": lambda m: m.tensor([1.5], dtype=m.float8_e4m3fn).view(m.uint8),
    "numpy": lambda m: _f8(m, 2).numpy(),
    "promote_types": lambda m: m.promote_types(m.float8_e4m3fn, m.float32),
    "neg": lambda m: -_f8(m, 2),
    "relu": lambda m: _f8(m, 2).relu(),
    "lt": lambda m: _f8(m, 2) < _f8(m, 2),
    "softmax": lambda m: _f8(m, 2).softmax(-1),
    "max": lambda m: _f8(m, 2).max(),
    "sort": lambda m: _f8(m, 2).sort(),
    "mul_tensors": lambda m: _f8(m, 2) * _f8(m, 2),
    "batch_mm_fold": lambda m: _f8(m, 2, 2, 3) @ _f8(m, 3, 2),
    "cat": lambda m: m.cat([_f8(m, 2), _f8(m, 1)]),
    "where": lambda m: m.where(m.tensor([True, False]), _f8(m, 2), m.zeros(2, dtype=m.float8_e4m3fn)),
    "arange": lambda m: m.arange(3, dtype=m.float8_e4m3fn),
    "arange_e5m2": lambda m: m.arange(0, 1, 0.25, dtype=m.float8_e5m2),
    "linspace": lambda m: m.linspace(0, 1, 3, dtype=m.float8_e4m3fn),
    "logspace": lambda m: m.logspace(0, 1, 3, dtype=m.float8_e4m3fn),
    "randint": lambda m: m.randint(0, 3, (2,), dtype=m.float8_e4m3fn),
    "randperm": lambda m: m.randperm(3, dtype=m.float8_e4m3fn),
    "bernoulli_": lambda m: _f8(m, 2).bernoulli_(0.5),
    "multinomial": lambda m: m.multinomial(_f8(m, 2), 1),
    "full_overflow": lambda m: m.full((2,), 1000.0, dtype=m.float8_e4m3fn),
    "full_inf": lambda m: m.full((2,), float("inf"), dtype=m.float8_e4m3fn),
    "full_inf_e5m2": lambda m: m.full((2,), float("inf"), dtype=m.float8_e5m2),
    "fill_overflow": lambda m: _f8(m, 2).fill_(1000.0),
    "setitem_saturates": lambda m: _setitem(_f8(m, 2), 1000.0),
    "isinf_e5m2": lambda m: m.ones(2, dtype=m.float8_e5m2).isinf(),
    "isinf_e4m3": lambda m: _f8(m, 2).isinf(),
    "from_float64": lambda m: m.tensor([0.1, 300.3, 1e-3, 447.99], dtype=m.float64).to(m.float8_e4m3fn),
}


def _setitem(x, v):
    x[0] = v
    return x


@pytest.mark.parametrize("name", sorted(OPS))
def test_float8_ops_like_torch(name):
    assert_same_outcome(OPS[name], torch, ft)


# ---- _scaled_mm -----------------------------------------------------------------------------------------------
def _smm_inputs(m, a_dt="float8_e4m3fn", b_dt="float8_e4m3fn", M=16, K=32, N=24):
    rng = np.random.default_rng(3)
    a = m.tensor(rng.standard_normal((M, K)).astype(np.float32)).to(getattr(m, a_dt))
    b = m.tensor(rng.standard_normal((N, K)).astype(np.float32)).to(getattr(m, b_dt)).t()
    return a, b


SMM = {
    "tensorwise_default_out": lambda m, a, b: dict(scale_a=m.tensor(0.5), scale_b=m.tensor(2.0)),
    "tensorwise_f32": lambda m, a, b: dict(scale_a=m.tensor(0.25), scale_b=m.tensor(4.0), out_dtype=m.float32),
    "tensorwise_bf16_bias": lambda m, a, b: dict(scale_a=m.tensor(1.0), scale_b=m.tensor(1.0), out_dtype=m.bfloat16,
                                                 bias=m.linspace(-1, 1, 24).to(m.bfloat16)),
    "tensorwise_f16": lambda m, a, b: dict(scale_a=m.ones(1), scale_b=m.ones(1, 1), out_dtype=m.float16),
    "tensorwise_f64_out": lambda m, a, b: dict(scale_a=m.tensor(0.3), scale_b=m.tensor(1.7), out_dtype=m.float64),
    "f8_out_scale_result": lambda m, a, b: dict(scale_a=m.tensor(8.0), scale_b=m.tensor(4.0),
                                                scale_result=m.tensor(2.0), out_dtype=m.float8_e4m3fn),
    "f8_out_saturates": lambda m, a, b: dict(scale_a=m.tensor(1000.0), scale_b=m.tensor(1.0),
                                             out_dtype=m.float8_e4m3fn),
    "e5m2_out": lambda m, a, b: dict(scale_a=m.tensor(1.0), scale_b=m.tensor(1.0), out_dtype=m.float8_e5m2),
    "scale_result_ignored_without_out_dtype": lambda m, a, b: dict(scale_a=m.tensor(1.0), scale_b=m.tensor(1.0),
                                                                   scale_result=m.tensor(2.0)),
    "rowwise_f32": lambda m, a, b: dict(scale_a=m.linspace(0.5, 2.0, 16).reshape(16, 1),
                                        scale_b=m.linspace(1.0, 3.0, 24).reshape(1, 24), out_dtype=m.float32,
                                        bias=m.ones(24)),
    "rowwise_bf16": lambda m, a, b: dict(scale_a=m.ones(16, 1), scale_b=m.ones(1, 24), out_dtype=m.bfloat16),
    "bias_float64_int": lambda m, a, b: dict(scale_a=m.tensor(1.0), scale_b=m.tensor(1.0), out_dtype=m.float32,
                                             bias=m.arange(24)),
    "int_out": lambda m, a, b: dict(scale_a=m.tensor(1.0), scale_b=m.tensor(1.0), out_dtype=m.int32),
    # errors
    "err_float_inputs": lambda m, a, b: dict(a=a.float(), b=b.float(), scale_a=m.tensor(1.0), scale_b=m.tensor(1.0)),
    "err_scale_f64": lambda m, a, b: dict(scale_a=m.tensor(1.0, dtype=m.float64), scale_b=m.tensor(1.0)),
    "err_scale_shape": lambda m, a, b: dict(scale_a=m.ones(2), scale_b=m.tensor(1.0)),
    "err_mixed_recipe": lambda m, a, b: dict(scale_a=m.ones(16, 1), scale_b=m.tensor(1.0)),
    "err_rowwise_b_as_column": lambda m, a, b: dict(scale_a=m.ones(16, 1), scale_b=m.ones(24, 1)),
    "err_rowwise_stride": lambda m, a, b: dict(scale_a=m.ones(1, 16).t(), scale_b=m.ones(1, 24)),
    "err_shapes": lambda m, a, b: dict(b=a, scale_a=m.tensor(1.0), scale_b=m.tensor(1.0)),
    "err_1d": lambda m, a, b: dict(a=a[0], scale_a=m.tensor(1.0), scale_b=m.tensor(1.0)),
    "err_3d_b": lambda m, a, b: dict(b=b.unsqueeze(0), scale_a=m.tensor(1.0), scale_b=m.tensor(1.0)),
    "err_bias_size": lambda m, a, b: dict(scale_a=m.tensor(1.0), scale_b=m.tensor(1.0), bias=m.ones(5)),
    "err_scale_result_f64": lambda m, a, b: dict(scale_a=m.tensor(1.0), scale_b=m.tensor(1.0),
                                                 scale_result=m.tensor(1.0, dtype=m.float64),
                                                 out_dtype=m.float8_e4m3fn),
}


@pytest.mark.parametrize("b_dt", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("name", sorted(SMM))
def test_scaled_mm_matches_torch(name, b_dt):
    def run(m, fn):
        a, b = _smm_inputs(m, b_dt=b_dt)
        kw = SMM[name](m, a, b)
        a, b = kw.pop("a", a), kw.pop("b", b)
        sa, sb = kw.pop("scale_a"), kw.pop("scale_b")
        try:
            return fn(a, b, sa, sb, **kw), None
        except Exception as e:  # noqa: BLE001 - compared below
            return None, e
    t_out, t_err = run(torch, torch._scaled_mm)
    f_out, f_err = run(ft, Q._scaled_mm)
    if t_err is not None:
        assert f_err is not None, f"torch raised {type(t_err).__name__}: {t_err}; functorch_lite returned {f_out}"
        assert type(f_err) is type(t_err), (t_err, f_err)
        assert str(f_err).split("\n")[0] == str(t_err).split("\n")[0]
        return
    assert f_err is None, f"functorch_lite raised {type(f_err).__name__}: {f_err}"
    assert str(f_out.dtype) == str(t_out.dtype) and tuple(f_out.shape) == tuple(t_out.shape)
    if t_out.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        _same_f8(t_out, f_out)
    else:
        np.testing.assert_allclose(f_out.double().numpy(), t_out.double().numpy(), rtol=1e-6, atol=1e-6)


def test_scaled_mm_full_message_and_rowwise_identity():
    a, b = _smm_inputs(ft)
    with pytest.raises(ValueError) as fe:
        Q._scaled_mm(a.float(), b.float(), ft.tensor(1.0), ft.tensor(1.0))
    ta, tb = _smm_inputs(torch)
    with pytest.raises(ValueError) as te:
        torch._scaled_mm(ta.float(), tb.float(), torch.tensor(1.0), torch.tensor(1.0))
    assert str(fe.value) == str(te.value)
    # row-wise scales of ones == tensor-wise scale 1 == the float32 matmul of the upcast operands
    r1 = Q._scaled_mm(a, b, ft.ones(16, 1), ft.ones(1, 24), out_dtype=ft.float32)
    r2 = Q._scaled_mm(a, b, ft.tensor(1.0), ft.tensor(1.0), out_dtype=ft.float32)
    np.testing.assert_array_equal(r1.numpy(), r2.numpy())
    np.testing.assert_allclose(r2.numpy(), (a.float() @ b.float()).numpy(), rtol=1e-6, atol=1e-6)


# ---- to_float8 ---------------------------------------------------------------------------------------------
def _torch_to_float8(x, dtype=torch.float8_e4m3fn, dim=None):
    """The recipe of PyTorch's fp8 tutorials, written in torch."""
    finfo = torch.finfo(dtype)
    amax = x.abs().max() if dim is None else x.abs().amax(dim=dim, keepdim=True)
    scale = finfo.max / amax.float().clamp(min=1e-12)
    x_scl_sat = (x.float() * scale).clamp(min=finfo.min, max=finfo.max)
    return x_scl_sat.to(dtype), scale.float().reciprocal()


@pytest.mark.parametrize("dim", [None, 1, 0])
@pytest.mark.parametrize("dt", F8)
def test_to_float8_recipe_matches_torch(dt, dim):
    x = np.random.default_rng(5).standard_normal((8, 12)).astype(np.float32) * 3
    x[2] = 0.0  # an all-zero row: the 1e-12 clamp keeps the scale finite
    t8, ts = _torch_to_float8(torch.tensor(x), getattr(torch, dt), dim)
    f8, fs = Q.to_float8(ft.tensor(x), getattr(ft, dt), dim=dim)
    _same_f8(t8, f8)
    np.testing.assert_allclose(fs.numpy(), ts.numpy(), rtol=1e-7)
    assert tuple(fs.shape) == tuple(ts.shape)
    # round trip: half an ulp of the format (relative), or half the smallest subnormal times the scale
    back = Q.from_float8(f8, fs).numpy().astype(np.float64)
    half_ulp, half_sub = {"float8_e4m3fn": (2.0 ** -4, 2.0 ** -10), "float8_e5m2": (2.0 ** -3, 2.0 ** -17)}[dt]
    inv = np.broadcast_to(fs.numpy().astype(np.float64), x.shape)
    assert np.all(np.abs(back - x) <= (half_ulp * np.abs(x) + half_sub * inv) * (1 + 1e-6))


def test_to_float8_then_scaled_mm_approximates_float_matmul():
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((32, 64)).astype(np.float32)
    xf, sx = Q.to_float8(ft.tensor(x), dim=1)
    wf, sw = Q.to_float8(ft.tensor(w), dim=1)
    y = Q._scaled_mm(xf, wf.t(), sx, sw.t(), out_dtype=ft.float32).numpy()
    xt, sxt = _torch_to_float8(torch.tensor(x), dim=1)
    wt, swt = _torch_to_float8(torch.tensor(w), dim=1)
    yt = torch._scaled_mm(xt, wt.t(), sxt, swt.t(), out_dtype=torch.float32).numpy()
    np.testing.assert_allclose(y, yt, rtol=1e-5, atol=1e-5)
    ref = x @ w.T
    assert np.abs(y - ref).max() < 0.1 * np.abs(ref).max()
    with pytest.raises(ValueError):
        Q.to_float8(ft.ones(2), ft.float16)


# ---- quantization ops of the op table vs torch references (the op-table sweep's cases) -------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "bool"])
@pytest.mark.parametrize("name", sorted(QUANT_CASES))
def test_quant_op_matches_torch_reference(name, dtype):
    arrays, fn = QUANT_CASES[name]
    if dtype in ("int64",):
        arrays = [np.round(a * 3) for a in arrays]
    elif dtype == "bool":
        arrays = [a > 0 for a in arrays]

    def run(m):
        ts = [m.tensor(np.asarray(a)).to(getattr(m, dtype)) for a in arrays]
        with m.no_grad():
            return fn(m, *ts)
    t_out, f_out = run(torch), run(ft)
    assert str(f_out.dtype) == str(t_out.dtype) and tuple(f_out.shape) == tuple(t_out.shape)
    tol = {"float16": 2e-3, "bfloat16": 1e-2}.get(str(t_out.dtype).replace("torch.", ""), 1e-6)
    np.testing.assert_allclose(f_out.double().numpy(), t_out.double().numpy(), rtol=tol, atol=tol)


def test_quant_ops_are_in_the_op_table():
    from functorch_lite.ops._registry import OPS
    for name in QUANT_CASES:
        assert name in OPS and OPS[name].differentiable == (name in QUANT_GRAD_CASES)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(QUANT_GRAD_CASES))
def test_quant_op_grad_matches_torch_reference(name, dtype):
    """As the gradient sweep (test_grad_sweep.py) does: input and bias get gradients, the NF4 weight none."""
    arrays, fn = QUANT_GRAD_CASES[name]

    def run(m):
        xs = [m.tensor(a, dtype=getattr(m, dtype), requires_grad=True) for a in arrays]
        out = fn(m, *xs)
        w = m.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)), dtype=out.dtype)
        (out * w).sum().backward()
        return out, [x.grad for x in xs]
    t_out, t_g = run(torch)
    f_out, f_g = run(ft)
    tol = 1e-9 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(f_out.detach().numpy(), t_out.detach().numpy(), rtol=tol, atol=tol)
    assert f_out.grad_fn.name() == "MatMul4BitBackward"
    for tg, fg in zip(t_g, f_g):
        assert (tg is None) == (fg is None)
        if tg is not None:
            np.testing.assert_allclose(fg.numpy(), tg.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("value,dt", [(1 + 2 ** -4 + 2 ** -30, "float8_e4m3fn"), (1 + 2 ** -3 + 2 ** -30, "float8_e5m2")])
def test_float64_to_float8_rounds_through_float32(value, dt):
    """PyTorch converts float64 -> float32 -> float8 (two roundings): a value just above a tie rounds to even."""
    theirs = torch.tensor([value], dtype=torch.float64).to(getattr(torch, dt)).float().tolist()
    ours = ft.tensor([value], dtype=ft.float64).to(getattr(ft, dt)).float().tolist()
    assert ours == theirs == [1.0]


@pytest.mark.parametrize("fn", [lambda m, a: m.cat([a, a]), lambda m, a: m.stack([a, a]),
                                lambda m, a: m.where(m.tensor([True, False]), a, a * 0 if False else a)])
def test_cat_stack_where_keep_one_float8_dtype(fn):
    outs = []
    for m in (torch, ft):
        a = m.tensor([1.5, -2.0]).to(m.float8_e4m3fn)
        r = fn(m, a)
        outs.append((str(r.dtype), r.float().numpy().tolist()))
    assert outs[0] == outs[1]


# ---- float8_e8m0fnu: an exponent-only format (c10's fp8e8m0fnu_from_fp32_value) ----------------------------
_E8M0_VALUES = [0., -0., -1.7, -4., -0.3, float("inf"), float("-inf"), float("nan"), 1e-45, 3e38, 1.5, 2.5, 2.9,
                3.0, 6.0, 1e-39, 2.0 ** -127, 2.0 ** 127, 1.7e38]


@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16", "int64", "bool"])
def test_cast_to_e8m0_drops_the_sign_and_maps_zero_to_its_smallest_value(src):
    """ml_dtypes' cast gave NaN for zero, denormals and every negative value; torch reads the float32 value's
    exponent field (sign dropped), rounds on the mantissa's guard bits, and maps zero / tiny values to 2^-127."""
    def run(T):
        x = T.tensor(_E8M0_VALUES)
        x = x > 0.5 if src == "bool" else x.to(getattr(T, src))
        y = x.to(T.float8_e8m0fnu)
        return y.float().tolist(), y.view(T.uint8).tolist()
    got, want = run(ft), run(torch)
    np.testing.assert_array_equal(np.array(got[0]), np.array(want[0]))
    assert got[1] == want[1]


def test_e8m0_tensor_from_python_values():
    got = ft.tensor([2.0, 0.0, 0.3, 5.0], dtype=ft.float8_e8m0fnu).view(ft.uint8).tolist()
    assert got == torch.tensor([2.0, 0.0, 0.3, 5.0], dtype=torch.float8_e8m0fnu).view(torch.uint8).tolist()
