"""``nn.Linear`` / ``F.linear`` / ``addmm`` given operands of different dtypes: torch's checks in torch's order
(the added tensor against mat2, then mat1 against mat2; mm's wording without a bias). The facade used mm's wording
for all, and addmm took a bias of another dtype (cast to the product's: a float64 bias gave a float32 result)."""
import pytest
import torch

import functorch_lite as ft

from _parity import assert_same_outcome

CASES = {
    "Linear float64 input": lambda L: L.nn.Linear(3, 2)(L.ones(4, 3, dtype=L.float64)),
    "Linear int64 input": lambda L: L.nn.Linear(3, 2)(L.ones(4, 3, dtype=L.long)),
    "Linear float64 3-D input": lambda L: L.nn.Linear(3, 2)(L.ones(2, 4, 3, dtype=L.float64)),
    "Linear without bias": lambda L: L.nn.Linear(3, 2, bias=False)(L.ones(4, 3, dtype=L.float64)),
    "linear float64 bias": lambda L: L.nn.functional.linear(L.ones(4, 3, dtype=L.float64), L.ones(2, 3),
                                                            L.ones(2, dtype=L.float64)),
    "addmm float64 bias": lambda L: L.addmm(L.ones(2, dtype=L.float64), L.ones(4, 3), L.ones(3, 2)),
    "addmm float64 mat1": lambda L: L.addmm(L.ones(2), L.ones(4, 3, dtype=L.float64), L.ones(3, 2)),
    "addmm int64 bias": lambda L: L.addmm(L.ones(2, dtype=L.int64), L.ones(4, 3), L.ones(3, 2)),
    "addmm float16 bias": lambda L: L.addmm(L.ones(2, dtype=L.float16), L.ones(4, 3), L.ones(3, 2)),
    "addmm float64 mat2": lambda L: L.addmm(L.ones(2), L.ones(4, 3), L.ones(3, 2, dtype=L.float64)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_dtype_mismatch_message(name):
    with pytest.raises(RuntimeError):  # (torch raises: the case is an error, not a value)
        CASES[name](torch)
    assert_same_outcome(CASES[name], torch, ft)


def test_matching_dtypes_and_autocast_still_work():
    for L in (torch, ft):
        assert L.addmm(L.ones(2), L.ones(4, 3), L.ones(3, 2)).dtype == L.float32
        with L.autocast("cpu", dtype=L.bfloat16):
            assert L.addmm(L.ones(2), L.ones(4, 3), L.ones(3, 2)).dtype == L.bfloat16
            assert L.nn.Linear(3, 2)(L.ones(4, 3)).dtype == L.bfloat16
