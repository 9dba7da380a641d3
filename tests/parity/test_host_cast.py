"""``torch.tensor(data, dtype=...)`` and ``as_tensor(ndarray, dtype=...)`` cast on the host with the same rules
(``dtypes.cast_array`` with ``xp=np``) as a device cast (``xp=jnp``, what ``.to(dtype)`` runs): the same bits for
every pair of dtypes, and no XLA program compiled for a new shape (the device path compiled up to nine per shape:
a float -> int64 creation in a loop over new shapes paid ~0.3 s each)."""
import contextlib
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from jax import monitoring

import torch

import functorch_lite as ft
import functorch_lite.dtypes as D

# float64 values a hair above a float16 / bfloat16 / float8 halfway point whose float32 rounding lands on the tie:
# rounded once they go up, through float32 (PyTorch's Half/BFloat16 take a float) to even
_TIES = [1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40, float.fromhex("-0x1.85000032a9a60p+63"),
         1 + 2.0 ** -4 + 2.0 ** -40, 1 + 2.0 ** -3 + 2.0 ** -40, 1 + 2.0 ** -3 + 2.0 ** -4 + 2.0 ** -40]
_BASE = np.concatenate([
    np.random.default_rng(0).standard_normal(200) * 10.0 ** np.random.default_rng(1).integers(-8, 25, 200),
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 448.0, 449.0, 464.0, 465.0, 2.5, -2.5, 0.5, 1.5, 2.0 ** 31, -2.0 ** 31,
     2.0 ** 31 - 0.5, 2.0 ** 63, -2.0 ** 63, 1e300, 57344.0, 61440.0, 65504.0, 65520.0, 1 + 2.0 ** -9,
     1 + 2.0 ** -8 + 2.0 ** -20] + _TIES])
_SRC = [D.float64, D.float32, D.float16, D.bfloat16, D.complex128, D.complex64, D.int64, D.int32, D.int8, D.uint8,
        D.bool, D.float8_e5m2]
_DST = [D.int64, D.int32, D.int16, D.int8, D.uint8, D.uint16, D.uint32, D.uint64, D.bool, D.float64, D.float32,
        D.float16, D.bfloat16, D.float8_e4m3fn, D.float8_e5m2, D.complex64, D.complex128]


def _source(s):
    with np.errstate(all="ignore"):
        if s.is_complex:
            return (_BASE + 1j * _BASE[::-1]).astype(s.jnp)
        if s is D.bool:
            return _BASE > 0
        if s.category == D.INT:
            return np.where(np.isfinite(_BASE), np.clip(_BASE, -1e6, 1e6), 0).astype(s.jnp)
        return _BASE.astype(s.jnp)


@pytest.mark.parametrize("src", _SRC, ids=str)
def test_host_cast_has_the_device_cast_bits(src):
    a = _source(src)
    for dst in _DST:
        if dst is src:
            continue
        dev = np.asarray(D.cast_array(jnp.asarray(a), src, dst))
        with np.errstate(all="ignore"):
            host = np.asarray(D.cast_array(a, src, dst, np))
        assert dev.dtype == host.dtype, (src, dst)
        if dst.is_floating_point and dst.itemsize == 1:  # NaN payloads may differ (no NaN in PyTorch's float8 reads)
            nan = np.isnan(dev.astype(np.float32))
            np.testing.assert_array_equal(nan, np.isnan(host.astype(np.float32)))
            dev, host = dev[~nan], host[~nan]
        assert dev.tobytes() == host.tobytes(), (src, dst)


@pytest.mark.parametrize("src", ["float64", "int64", "int32", "complex128"])
def test_small_floats_are_made_through_float32_as_torch_makes_them(src):
    """float64 / int64 / int32 / complex128 -> float16, bfloat16, float8: PyTorch converts to float32 first (two
    roundings); NumPy's float16 and ml_dtypes >= 0.7 round once, which differs on the values just past a tie. The
    host path (``tensor(data, dtype=)``) and the device path (``.to``) both give torch's bits."""
    ints = [2 ** 24 + 1, 2 ** 25 + 3, 2 ** 53 + 1, 16777217 * 8 + 4, 2049, 4097 * 64 + 1, -(2 ** 31) + 1]
    if src == "int32":
        ints = ints[:2] + ints[3:]
    data = np.array(ints if src.startswith("int") else _TIES + [3.0, -0.5], dtype=src)
    for dt in ("float16", "bfloat16", "float8_e5m2", "float8_e4m3fn"):
        bits = torch.uint8 if "float8" in dt else torch.int16
        want = torch.tensor(data).to(getattr(torch, dt)).view(bits).tolist()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            host = ft.tensor(data, dtype=getattr(ft, dt)).view(getattr(ft, str(bits).split(".")[-1])).tolist()
            dev = ft.tensor(data).to(getattr(ft, dt)).view(getattr(ft, str(bits).split(".")[-1])).tolist()
        assert host == want and dev == want, (dt, host, dev, want)


@contextlib.contextmanager
def _compiles():
    """The names of the XLA programs compiled inside the block."""
    names = []

    def listen(event, duration, **kw):
        if event.endswith("backend_compile_duration"):
            names.append(kw.get("fun_name"))
    monitoring.register_event_duration_secs_listener(listen)
    try:
        yield names
    finally:
        monitoring.unregister_event_duration_listener(listen)


def test_creation_with_a_dtype_compiles_no_program():
    with _compiles() as compiles:
        for shape in [(3, 7), (5, 2, 3)]:
            a = np.random.default_rng(2).standard_normal(shape) * 30  # (Python numbers are range-checked)
            for dt in (ft.int64, ft.int8, ft.float8_e4m3fn, ft.float8_e5m2, ft.bfloat16, ft.bool, ft.complex64):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t1 = ft.tensor(a, dtype=dt)
                    t2 = ft.as_tensor(a, dtype=dt)
                    t3 = ft.tensor(a.tolist(), dtype=dt)
                assert t1.dtype is dt and t2.dtype is dt and t3.dtype is dt
    assert compiles == []
    # the values are the device cast's (.to(dtype): ``_to_copy``)
    a = np.array([[1.7, -2.5, 3e10, np.nan], [np.inf, -0.5, 448.5, 1e5]])
    for dt in (ft.int64, ft.int8, ft.float8_e4m3fn, ft.uint8):
        np.testing.assert_array_equal(np.array(ft.tensor(a, dtype=dt).tolist()),  # (NaN equals NaN here)
                                      np.array(ft.tensor(a).to(dt).tolist()))


def test_small_fills_compile_no_program_and_large_ones_fill_on_device():
    """zeros/ones/full/zeros_like up to ``creation._HOST_FILL`` elements are filled on the host (no program per
    new shape); a larger one by its device program. Both give PyTorch's cast of the fill value."""
    from functorch_lite.ops import creation
    with _compiles() as compiles:
        small = [ft.zeros(7, 3), ft.ones(13, dtype=ft.int8), ft.full((2, 9), 447.0, dtype=ft.float8_e4m3fn),
                 ft.full((5,), 2.5, dtype=ft.bfloat16), ft.zeros_like(ft.empty(4, 4, dtype=ft.float64)),
                 ft.full((3,), -7, dtype=ft.uint8), ft.full((2,), 1 + 2j)]
    assert compiles == []
    assert [t.tolist() for t in small[:2]] == [[[0.0] * 3] * 7, [1] * 13]
    assert small[2].float().tolist() == [[448.0] * 9] * 2 and small[3].float().tolist() == [2.5] * 5
    assert small[5].tolist() == [249] * 3 and small[6].tolist() == [1 + 2j] * 2 and small[4].dtype is ft.float64
    n = creation._HOST_FILL + 1
    big = ft.full((n,), 447.0, dtype=ft.float8_e4m3fn)
    assert big.shape == (n,) and set(big.float().tolist()) == {448.0}
    assert ft.ones(n, dtype=ft.int8).sum().item() == n


def test_a_fill_inside_a_compiled_function_is_computed_not_baked(monkeypatch):
    """Inside a compiled function's trace, zeros/ones are computed by the program (the device fill), not a host
    array baked into it as a constant; outside, the same small fill is the host's."""
    from functorch_lite.ops import creation
    device_fills = []
    real = creation._full_jit

    def spy(shape, dt, jdev):
        device_fills.append(shape)
        return real(shape, dt, jdev)
    monkeypatch.setattr(creation, "_full_jit", spy)

    @ft.compile
    def f(x):
        return x + ft.ones(3) + ft.zeros(3)

    x = ft.arange(3.0)
    assert f(x).tolist() == [1.0, 2.0, 3.0]
    n = len(device_fills)
    assert n >= 2 and set(device_fills) == {(3,)}  # (once per trace)
    assert (x + ft.ones(3)).tolist() == [1.0, 2.0, 3.0] and len(device_fills) == n
