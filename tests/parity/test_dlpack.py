"""DLPack exchange (``torch.from_dlpack``, ``torch.utils.dlpack``, ``Tensor.__dlpack__``) against real torch:
values, dtypes, layouts and PyTorch's refusals; and the one documented difference, that an import is a copy."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _run(fn):
    out = []
    for L in (ft, torch):
        try:
            r = fn(L)
            out.append(("ok", (tuple(r.shape), str(r.dtype).split(".")[-1], r.stride(), r.tolist())
                        if isinstance(r, (ft.Tensor, torch.Tensor)) else r))
        except Exception as e:  # noqa: BLE001  (the exception itself is compared)
            out.append((type(e).__name__, str(e)))
    assert out[0] == out[1], out
    return out[0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool",
                                   "complex64"])
def test_from_dlpack_numpy(dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    _run(lambda L: L.from_dlpack(a))
    _run(lambda L: L.from_dlpack(a.T))  # NumPy's layout kept: stride (1, 3)


def test_from_dlpack_of_other_libraries_and_of_itself():
    src = torch.arange(6.0).reshape(2, 3)
    got = ft.from_dlpack(src)
    assert got.dtype == ft.float32 and got.tolist() == src.tolist()
    got = ft.from_dlpack(src.t())
    assert got.tolist() == src.t().tolist()
    j = jnp.arange(4, dtype=jnp.int32)
    assert ft.from_dlpack(j).dtype == ft.int32 and ft.from_dlpack(j).tolist() == [0, 1, 2, 3]
    b = torch.ones(2, dtype=torch.bfloat16) * 1.5
    assert ft.from_dlpack(b).dtype == ft.bfloat16 and ft.from_dlpack(b).float().tolist() == [1.5, 1.5]
    _run(lambda L: L.from_dlpack(L.arange(5) * 2))
    _run(lambda L: L.utils.dlpack.from_dlpack(L.tensor([1.0, 2.0])))


def test_export_to_numpy_jax_and_real_torch():
    t = ft.arange(6.0).reshape(2, 3).t()
    want = np.arange(6.0, dtype=np.float32).reshape(2, 3).T
    np.testing.assert_array_equal(np.from_dlpack(t), want)
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(t)), want)
    r = torch.from_dlpack(t)
    assert r.dtype == torch.float32 and r.tolist() == want.tolist()
    assert torch.from_dlpack(ft.tensor([True, False])).tolist() == [True, False]
    assert torch.utils.dlpack.from_dlpack(ft.utils.dlpack.to_dlpack(ft.arange(3))).tolist() == [0, 1, 2]
    assert ft.ones(2).__dlpack_device__()[1] == 0 and int(ft.ones(2).__dlpack_device__()[0]) == 1  # kDLCPU


@pytest.mark.parametrize("case", ["requires grad", "conj", "from requires grad", "int", "list"])
def test_refusals(case):
    fns = {"requires grad": lambda L: L.ones(2, requires_grad=True).__dlpack__(),
           "conj": lambda L: L.tensor([1 + 1j]).conj().__dlpack__(),
           "from requires grad": lambda L: L.from_dlpack(L.ones(2, requires_grad=True)),
           "int": lambda L: L.from_dlpack(3),
           "list": lambda L: L.from_dlpack([1])}
    assert _run(fns[case])[0] != "ok"


def test_import_is_a_copy_taken_now():
    """PyTorch shares the producer's buffer; jax arrays are immutable, so the facade copies (README)."""
    a = np.arange(3.0)
    t = ft.from_dlpack(a)
    src = torch.arange(3.0)
    u = ft.from_dlpack(src)
    a[0] = 9.0
    src[0] = 9.0
    assert t.tolist() == [0.0, 1.0, 2.0] and u.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="capsule is not supported"):
        ft.from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(1)))
