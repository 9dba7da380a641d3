"""Backward passes where half precision or large inputs used to overflow, against real torch:
- float16 / bfloat16 pullbacks run in float32 and round each gradient once (torch's CPU kernels compute half
  types in float32, their opmath): gelu / silu with a large upstream gradient gave inf / nan before, and a
  GradScaler then skipped steps torch takes.
- the ELU family's gradient at a large positive input: the untaken exp branch's inf made it nan (every dtype)."""
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _grad(L, name, vals, dtype, g, **kw):
    h = L.tensor(vals, dtype=getattr(L, dtype), requires_grad=True)
    y = getattr(L.nn.functional, name)(h, **kw)
    y.backward(L.full((len(vals),), g, dtype=getattr(L, dtype)))
    return h.grad.float().tolist()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["gelu", "silu"])
@pytest.mark.parametrize("g", [1.0, 40000.0])
def test_half_pullback_in_float32(name, dtype, g):
    vals = [0.5, 3.0, -20.0, 20.0, -30.0, 7.0, 1e-3, -3.0]  # (no gradient that is a float32 denormal: XLA flushes)
    got, want = _grad(ft, name, vals, dtype, g), _grad(torch, name, vals, dtype, g)
    assert np.isfinite(got).all()
    assert got == want


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name,kw", [("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0})])
def test_elu_family_gradient_at_large_inputs(name, kw, dtype):
    vals = [100.0, 89.0, 0.0, -1.0, 1.0, -0.5, 20.0]  # (no input whose gradient is a denormal: XLA flushes them)
    got, want = _grad(ft, name, vals, dtype, 1.0, **kw), _grad(torch, name, vals, dtype, 1.0, **kw)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-6)
