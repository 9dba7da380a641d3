"""Python numbers converted into a tensor's dtype: PyTorch checks them (``value cannot be converted to type
int8_t without overflow``) where JAX would wrap (int8 300 -> 44) or saturate; float8 ops without a PyTorch
kernel raise. Each case runs under torch and functorch_lite: same values, or the same error and message."""
import math

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import assert_same_outcome


def _cases():
    c = {}
    for dt, vals in [("int8", [127, 128, -128, -129, 2.5, math.nan, math.inf]),
                     ("uint8", [255, 256, -1, -255, -256, -1.0]),
                     ("int32", [2 ** 31 - 1, 2 ** 31, 1e12]), ("int64", [2 ** 63 - 1, 1e30]),
                     ("int16", [40000]), ("bool", [5, -3.5]),
                     ("float16", [65504.0, 65519.99, 65520.0, 1e6, math.inf, math.nan, 70000]),
                     ("bfloat16", [3.3895313892515355e38, 1e39, math.inf]),
                     ("float32", [3.4028234663852886e38, 3.5e38, 1e39, math.inf]),
                     ("float8_e4m3fn", [448.0, 449.0, 1000.0, math.inf, math.nan]),
                     ("float8_e5m2", [57344.0, 57345.0, 61440.0, 1e6, math.inf])]:
        for v in vals:
            for n in (1, 3):
                c[f"full-{dt}-{v}-n{n}"] = lambda m, dt=dt, v=v, n=n: m.full((n,), v, dtype=getattr(m, dt))
            c[f"fill_-{dt}-{v}"] = lambda m, dt=dt, v=v: m.zeros(3, dtype=getattr(m, dt)).fill_(v)
            c[f"full_like-{dt}-{v}"] = lambda m, dt=dt, v=v: m.full_like(m.zeros(2, dtype=getattr(m, dt)), v)
            c[f"new_full-{dt}-{v}"] = lambda m, dt=dt, v=v: m.zeros(2, dtype=getattr(m, dt)).new_full((2,), v)
            c[f"setitem-{dt}-{v}"] = lambda m, dt=dt, v=v: _setitem(m.zeros(3, dtype=getattr(m, dt)), v)
    for dt, v in [("int8", 300), ("int8", -129), ("int8", 2.5), ("uint8", -1), ("uint8", -300), ("float16", 1e6),
                  ("int16", 1e5)]:
        x = lambda m, dt=dt: m.tensor([1, 2, 3]).to(getattr(m, dt))  # noqa: E731
        mask = lambda m: m.tensor([True, False, True])  # noqa: E731
        c[f"masked_fill-{dt}-{v}"] = lambda m, x=x, v=v: x(m).masked_fill(mask(m), v)
        c[f"index_fill-{dt}-{v}"] = lambda m, x=x, v=v: x(m).index_fill(0, m.tensor([0, 2]), v)
        c[f"clamp-{dt}-{v}"] = lambda m, x=x, v=v: x(m).clamp(None, v)
        c[f"clamp_min-{dt}-{v}"] = lambda m, x=x, v=v: x(m).clamp_min(v)
        c[f"where-{dt}-{v}"] = lambda m, x=x, v=v: m.where(mask(m), x(m), v)
        c[f"where_l-{dt}-{v}"] = lambda m, x=x, v=v: m.where(mask(m), v, x(m))
        c[f"pow-{dt}-{v}"] = lambda m, x=x, v=v: x(m) ** v
        c[f"add_alpha-{dt}-{v}"] = lambda m, x=x, v=v: x(m).add(x(m), alpha=v)
        c[f"sub_alpha-{dt}-{v}"] = lambda m, x=x, v=v: x(m).sub(x(m), alpha=v)
        c[f"add-{dt}-{v}"] = lambda m, x=x, v=v: x(m) + v  # wraps in both: no check on arithmetic
        c[f"tensor-{dt}-{v}"] = lambda m, dt=dt, v=v: m.tensor([v, 1], dtype=getattr(m, dt))
        c[f"tensor0d-{dt}-{v}"] = lambda m, dt=dt, v=v: m.tensor(v, dtype=getattr(m, dt))
    # a complex number filled into a real type: its imaginary part must be 0 (the message names a double for one
    # 16-bit float element), its real part must fit; a bool takes any
    for dt in ("float32", "float64", "bfloat16", "float16", "float8_e5m2", "int32", "int8", "uint8", "bool"):
        for v in (1 + 2j, 2j, 1 + 0j, 300 + 0j):
            for n in (1, 3):
                c[f"full-{dt}-{v}-n{n}"] = lambda m, dt=dt, v=v, n=n: m.full((n,), v, dtype=getattr(m, dt))
            c[f"fill_-{dt}-{v}"] = lambda m, dt=dt, v=v: m.zeros(3, dtype=getattr(m, dt)).fill_(v)
    c["tensor-numpy-wraps"] = lambda m: m.tensor(np.array([300, -129]), dtype=m.int8)
    c["tensor-int32-float"] = lambda m: m.tensor([2.5e9], dtype=m.int32)
    c["tensor-int64-nan"] = lambda m: m.tensor([1.0, math.nan], dtype=m.int64)
    return c


def _setitem(x, v):
    x[1] = v
    return x


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_scalar_conversion_like_torch(name):
    assert_same_outcome(CASES[name], torch, ft)


def test_lerp_number_weight_in_opmath():
    """A weight beyond float16's range stays exact (PyTorch computes in float32: 1.0, not inf * 0 = nan)."""
    for m in (torch, ft):
        x, e = m.tensor([1.0, 2.0, -3.0], dtype=m.float16), m.tensor([1.0, 2.5, 7.0], dtype=m.float16)
        assert x.lerp(e, 1e6)[0].item() == 1.0
    f = ft.tensor([1.0, 2.0, -3.0], dtype=ft.float16).lerp(ft.tensor([4.0, 2.5, 7.0], dtype=ft.float16), 0.3)
    t = torch.tensor([1.0, 2.0, -3.0], dtype=torch.float16).lerp(torch.tensor([4.0, 2.5, 7.0], dtype=torch.float16), 0.3)
    assert f.tolist() == t.tolist()
