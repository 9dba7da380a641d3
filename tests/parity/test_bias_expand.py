"""``F.linear`` / ``addmm`` / ``baddbmm`` whose added tensor (the bias, ``input``) does not broadcast to the
product: torch's expand RuntimeError, where JAX's ValueError leaked (a functional_call given a wrong-shaped
weight hit it); the shapes that do broadcast still work."""
import pytest
import torch

import functorch_lite as ft

CASES = {
    "linear 2-D": lambda L: L.nn.functional.linear(L.ones(4, 3), L.ones(5, 3), L.ones(2)),
    "linear 3-D": lambda L: L.nn.functional.linear(L.ones(2, 4, 3), L.ones(5, 3), L.ones(2)),
    "linear 1-D": lambda L: L.nn.functional.linear(L.ones(3), L.ones(5, 3), L.ones(2)),
    "addmm": lambda L: L.addmm(L.ones(2), L.ones(4, 3), L.ones(3, 5)),
    "addmm too many dims": lambda L: L.addmm(L.ones(3, 1, 5), L.ones(4, 3), L.ones(3, 5)),
    "baddbmm": lambda L: L.baddbmm(L.ones(3), L.ones(2, 4, 3), L.ones(2, 3, 5)),
    "functional_call": lambda L: L.func.functional_call(L.nn.Linear(3, 2), {"weight": L.ones(5, 3)},
                                                        (L.ones(4, 3),)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_error(name):
    with pytest.raises(RuntimeError) as te:
        CASES[name](torch)
    with pytest.raises(RuntimeError) as fe:
        CASES[name](ft)
    assert str(fe.value) == str(te.value)


FITS = {
    "linear full bias": lambda L: L.nn.functional.linear(L.ones(4, 3), L.ones(5, 3), L.ones(4, 5) * 2),
    "linear column bias": lambda L: L.nn.functional.linear(L.ones(4, 3), L.ones(5, 3), L.arange(4.0).view(4, 1)),
    "addmm column": lambda L: L.addmm(L.arange(4.0).view(4, 1), L.ones(4, 3), L.ones(3, 5)),
    "addmm scalar-like": lambda L: L.addmm(L.ones(1) * 3, L.ones(4, 3), L.ones(3, 5)),
    "baddbmm row": lambda L: L.baddbmm(L.arange(5.0), L.ones(2, 4, 3), L.ones(2, 3, 5)),
}


@pytest.mark.parametrize("name", list(FITS))
def test_broadcasting_bias(name):
    assert FITS[name](ft).tolist() == FITS[name](torch).tolist()
