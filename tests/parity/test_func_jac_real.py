"""``func.jacrev`` / ``jacfwd`` refuse complex inputs and outputs with torch's error (JAX's TypeError leaked, or a
complex Jacobian torch does not compute came back)."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

S = np.array([0.3, -1.2, 2.0], np.float32)
Z = (S + 1j * S[::-1]).astype(np.complex64)
CASES = {
    "real->complex": (lambda L: lambda x: x * L.tensor(Z), S),
    "complex->complex": (lambda L: lambda z: z ** 2, Z),
    "complex->real": (lambda L: lambda z: z.abs(), Z),
}


@pytest.mark.parametrize("kind", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("case", list(CASES))
def test_complex_refused(kind, case):
    make, arg = CASES[case]
    with pytest.raises(RuntimeError) as te:
        getattr(torch.func, kind)(make(torch))(torch.tensor(arg))
    with pytest.raises(RuntimeError) as fe:
        getattr(ft.func, kind)(make(ft))(ft.tensor(arg))
    assert str(fe.value) == str(te.value)
