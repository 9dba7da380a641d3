"""abs of a complex tensor is real-valued (complex64 -> float32), with PyTorch's gradient z/|z|."""
import numpy as np
import torch

import functorch_lite as ft


def test_complex_abs_dtype_value_and_grad():
    z = np.array([3 + 4j, -1j, 0.5 - 0.5j], dtype=np.complex64)
    out = []
    for lib in (torch, ft):
        x = lib.tensor(z, requires_grad=True)
        y = x.abs()
        y.sum().backward()
        out.append((str(y.dtype), y.detach().numpy(), x.grad.numpy()))
    assert out[0][0] == out[1][0] == "torch.float32"
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6)
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-6)
