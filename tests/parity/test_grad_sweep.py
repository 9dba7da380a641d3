"""Every differentiable op of the op table has a gradient parity case against real PyTorch
(issue 3, "Parity"), in float32 and float64, on inputs away from PyTorch/JAX convention edge
points (those are tested in test_autograd.py and test_elementwise_sweep.py). A new differentiable
op without a case here fails ``test_every_differentiable_op_has_a_case``."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.ops._registry import OPS

from _op_cases import CASES

def test_every_differentiable_op_has_a_case():
    # (an op whose derivative torch does not implement -- bincount's with weights -- records a node whose backward
    # raises: no gradient to compare; its test is that error, test_gnn_speech_fixes.py)
    diff = {n for n, op in OPS.items() if op.differentiable and op.grad_fn != "NotImplemented"}
    missing = sorted(diff - set(CASES))
    assert not missing, f"differentiable ops without a gradient parity case: {missing}"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_matches_torch(name, dtype):
    arrays, fn = CASES[name]
    wseed = abs(hash(name)) % 1000

    def run(mod):
        dt = getattr(mod, dtype)
        xs = [mod.tensor(a, dtype=dt, requires_grad=True) for a in arrays]
        out = fn(mod, *xs)
        w = mod.tensor(np.random.default_rng(wseed).standard_normal(tuple(out.shape)), dtype=out.dtype)
        out.backward(w)  # (the gradient of sum(out * w): w as out's cotangent)
        return out, [x.grad for x in xs]
    t_out, t_g = run(torch)
    f_out, f_g = run(ft)
    tol = 1e-9 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(f_out.detach().numpy(), t_out.detach().numpy(), rtol=tol, atol=tol)
    for tg, fg in zip(t_g, f_g):
        if tg is None:
            assert fg is None or not np.any(fg.numpy())
            continue
        assert fg is not None
        np.testing.assert_allclose(fg.numpy(), tg.numpy(force=True), rtol=tol, atol=tol)
