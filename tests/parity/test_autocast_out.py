"""An out= call inside an autocast region is not autocast, as in torch: its out tensor gives the dtype (a float32
out is written; a bfloat16 out raises torch's dtype error). The facade autocast it, so the other way round."""
import pytest
import torch

import functorch_lite as ft


def _run(T, name, dt):
    a, b = T.ones(4, 8), T.ones(8, 3)
    calls = {"mm": lambda o: T.mm(a, b, out=o), "matmul": lambda o: T.matmul(a, b, out=o),
             "addmm": lambda o: T.addmm(T.zeros(4, 3), a, b, out=o)}
    with T.autocast("cpu", dtype=T.bfloat16):
        out = T.empty(4, 3, dtype=getattr(T, dt))
        try:
            r = calls[name](out)
            return str(r.dtype), r.sum().item(), r is out
        except RuntimeError as e:
            return str(e)


@pytest.mark.parametrize("name", ["mm", "matmul", "addmm"])
@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
def test_out_under_autocast(name, dt):
    assert _run(ft, name, dt) == _run(torch, name, dt)
