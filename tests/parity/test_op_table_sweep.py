"""Every op of the op table against real PyTorch in float16, bfloat16 and integer dtypes (issue 2,
"a table-driven sweep"): same values (dtype-appropriate tolerance), same result dtype and shape, or
the same exception type where PyTorch has no kernel for that dtype. float32/float64 forwards and
gradients are in test_grad_sweep.py; the dtype promotion lattice in test_promotion.py."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.ops._registry import OPS

from _op_cases import CASES, FORWARD_ONLY

ALL = {**CASES, **FORWARD_ONLY}
TOL = {"float16": 2e-2, "bfloat16": 8e-2, "float8_e4m3fn": 0.13, "float8_e5m2": 0.25, "int64": 0, "int32": 0, "bool": 0}


# composites whose PyTorch error names an inner kernel that depends on arguments the table does not see
_KERNEL_NAME_DIFFERS = {"convolution",  # slow_conv2d_cpu / slow_conv_dilated<> / ... by stride and dilation
                        "multi_head_attention_forward"}  # the first inner op to fail


def test_every_op_has_a_case():
    missing = sorted(set(OPS) - set(ALL))
    assert not missing, f"ops of the table without a parity case: {missing}"


def _inputs(arrays, dtype):
    if dtype in ("int64", "int32"):
        return [np.round(a * 3) for a in arrays]
    if dtype == "bool":
        return [a > 0 for a in arrays]
    return arrays


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64", "bool", "float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("name", sorted(ALL))
def test_op_matches_torch_in_dtype(name, dtype):
    arrays, fn = ALL[name]
    xs = _inputs(arrays, dtype)

    def run(mod):
        dt = getattr(mod, dtype)
        ts = [mod.tensor(np.asarray(a), dtype=dt) for a in xs]  # (a host cast in both: no program per shape)
        with mod.no_grad():
            try:
                return fn(mod, *ts), None
            except Exception as e:  # noqa: BLE001 - compared below
                return None, e
    t_out, t_err = run(torch)
    f_out, f_err = run(ft)
    if t_err is not None:
        assert f_err is not None, f"torch raised {type(t_err).__name__}: {t_err}; functorch_lite returned {f_out}"
        assert isinstance(f_err, type(t_err)) or isinstance(t_err, type(f_err)), (t_err, f_err)
        if "not implemented for" in str(t_err) and name not in _KERNEL_NAME_DIFFERS:
            assert str(f_err) == str(t_err)  # PyTorch's kernel name, which the op table records
        return
    assert f_err is None, f"functorch_lite raised {type(f_err).__name__}: {f_err}"
    assert str(f_out.dtype) == str(t_out.dtype) and tuple(f_out.shape) == tuple(t_out.shape)
    tol = TOL.get(str(t_out.dtype).replace("torch.", ""), 1e-5)
    np.testing.assert_allclose(np.asarray(f_out.tolist() if f_out.dtype.is_floating_point else f_out.numpy(),
                                          dtype=np.float64),
                               np.asarray(t_out.tolist() if t_out.dtype.is_floating_point else t_out.numpy(),
                                          dtype=np.float64), rtol=tol, atol=tol)
