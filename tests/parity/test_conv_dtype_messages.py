"""Convolutions given tensors of mixed dtypes raise torch 2.13's CPU errors, in its order: a convolution checks the
bias first (``Input type (double) and bias type (float) should be the same``: float64 NumPy data into a Conv2d),
then the weight (``expected scalar type Double but found Float``; a bfloat16 input, or a float32 one with a batch above
1: oneDNN's messages); a transposed
one has no kernel for the integer types but int64, then checks the weight, then its bias (added afterwards). The
facade gave the oneDNN weight message for every mismatch."""
import pytest
import torch

import functorch_lite as ft

DTYPES = ["float32", "float64", "float16", "bfloat16", "uint8", "int8", "int32", "int64"]
CONVS = [("conv1d", 1), ("conv2d", 2), ("conv3d", 3), ("conv_transpose1d", 1), ("conv_transpose2d", 2),
         ("conv_transpose3d", 3)]


def _outcome(L, conv, nd, xd, wd, bd, batch):
    x = L.ones((batch, 2) + (4,) * nd, dtype=getattr(L, xd))
    w = L.ones(((3, 2) if "transpose" not in conv else (2, 3)) + (2,) * nd, dtype=getattr(L, wd))
    b = None if bd is None else L.ones(3, dtype=getattr(L, bd))
    try:
        r = getattr(L.nn.functional, conv)(x, w, b)
    except Exception as e:  # noqa: BLE001  (the outcome compared)
        return (type(e).__name__, str(e))
    return ("ok", str(r.dtype), r.float().sum().item())


@pytest.mark.parametrize("conv, nd", CONVS)
@pytest.mark.parametrize("xd", DTYPES)
@pytest.mark.parametrize("batch", [1, 2])
def test_mixed_dtype_messages(conv, nd, xd, batch):
    """(A float32 input with a batch above 1 goes to oneDNN in torch: its messages.)"""
    for wd in ("float32", "float64", xd):
        for bd in (None, "float32", xd, "float64"):
            assert _outcome(ft, conv, nd, xd, wd, bd, batch) == _outcome(torch, conv, nd, xd, wd, bd, batch), (wd, bd)


def test_conv2d_module_given_float64_data():
    for L in (torch, ft):
        with pytest.raises(RuntimeError, match=r"Input type \(double\) and bias type \(float\) should be the same"):
            L.nn.Conv2d(2, 3, 3)(L.ones(1, 2, 4, 4, dtype=L.float64))
