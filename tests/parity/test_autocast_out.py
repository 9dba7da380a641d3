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


@pytest.mark.parametrize("dt", ["bfloat16", 5])
def test_autocast_dtype_not_a_dtype(dt):
    """``autocast('cpu', dtype='bfloat16')``: torch warns that the dtype is not supported, then refuses it on
    entering (the facade autocast to bfloat16 silently)."""
    import warnings
    res = []
    for T in (torch, ft):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ac = T.autocast("cpu", dtype=dt)
        with pytest.raises(TypeError) as e:
            with ac:
                pass
        res.append(([str(x.message) for x in w], str(e.value), T.is_autocast_enabled("cpu")))
    assert res[0] == res[1]
