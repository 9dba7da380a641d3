"""DLPack exchange (``torch.from_dlpack``, ``torch.utils.dlpack``, ``Tensor.__dlpack__``) against real torch:
values, dtypes, layouts and PyTorch's refusals; and the one documented difference, that an import is a copy."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import same


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool",
                                   "complex64"])
def test_from_dlpack_numpy(dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    same(lambda L: L.from_dlpack(a))
    same(lambda L: L.from_dlpack(a.T))  # NumPy's layout kept: stride (1, 3)


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
    same(lambda L: L.from_dlpack(L.arange(5) * 2))
    same(lambda L: L.utils.dlpack.from_dlpack(L.tensor([1.0, 2.0])))


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
    assert same(fns[case])[0] != "ok"


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


def test_tensor_and_as_tensor_of_other_libraries_arrays():
    for src, want in ((torch.arange(6.0).reshape(2, 3).t(), torch.arange(6.0).reshape(2, 3).t().tolist()),
                      (jnp.arange(3, dtype=jnp.int32), [0, 1, 2])):
        for make in (ft.tensor, ft.as_tensor):
            t = make(src)
            assert t.tolist() == want and str(t.dtype).split(".")[-1] == str(src.dtype).split(".")[-1]
    t = ft.tensor(torch.ones(2, dtype=torch.bfloat16), dtype=ft.float64, requires_grad=True)
    assert t.dtype == ft.float64 and t.requires_grad and t.is_leaf
    src = torch.ones(2)
    t = ft.tensor(src)
    src[0] = 5.0  # a copy
    assert t.tolist() == [1.0, 1.0]
    assert ft.tensor(torch.ones(2, requires_grad=True) * 3).tolist() == [3.0, 3.0]  # (detached first)


def test_load_state_dict_from_real_torch():
    """A facade extension for parity work: real torch's state dict (or its parameters) loads by copy."""
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    tm(torch.randn(8, 3))  # running statistics that are not the defaults
    fm = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.BatchNorm1d(4), ft.nn.Linear(4, 2))
    assert str(fm.load_state_dict(tm.state_dict())) == "<All keys matched successfully>"
    for (k, a), (k2, b) in zip(fm.state_dict().items(), tm.state_dict().items()):
        assert k == k2 and a.tolist() == b.tolist() and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert all(isinstance(p, ft.nn.Parameter) and p.requires_grad for p in fm.parameters())
    x = np.linspace(-1, 1, 12).reshape(4, 3)
    tm.eval()
    fm.eval()
    np.testing.assert_allclose(fm(ft.tensor(x, dtype=ft.float32)).detach().numpy(),
                               tm(torch.tensor(x, dtype=torch.float32)).detach().numpy(), rtol=1e-6, atol=1e-6)
    fm.load_state_dict(dict(tm.named_parameters()), strict=False)  # nn.Parameters that require grad
    # NumPy values are refused as PyTorch refuses them
    with pytest.raises(RuntimeError, match="expected torch.Tensor or Tensor-like object from checkpoint"):
        ft.nn.Linear(3, 4).load_state_dict({"weight": np.zeros((4, 3)), "bias": np.zeros(4)})


def test_another_librarys_array_as_an_op_argument_is_a_type_error():
    with pytest.raises(TypeError, match=r"copy_\(\): argument 'src' \(position 1\) must be Tensor, "
                                        r"not torch.Tensor \(another library's array"):
        ft.zeros(3).copy_(torch.ones(3))
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        ft.zeros(3).copy_([1.0, 2.0, 3.0])
    assert ft.zeros(2).copy_(np.ones(2)).tolist() == [1.0, 1.0]  # NumPy values are taken, as before
