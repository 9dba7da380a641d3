"""``testing.assert_close`` against real torch's: passing pairs pass, failing pairs raise the same exception type
with the same message (tolerances by dtype, attribute checks, scalar / tensor / nested messages, ``msg``)."""
import numpy as np
import pytest

from _parity import same

NAN, INF = float("nan"), float("inf")
CASES = {
    "close f32": lambda L: (L.tensor([1., 2., 3.]), L.tensor([1., 2.1, 3.])),
    "within f32 tol": lambda L: (L.tensor([1., 2., 3.]), L.tensor([1., 2.000001, 3.])),
    "int": lambda L: (L.tensor([1, 2, 3]), L.tensor([1, 4, 3])),
    "dtype": lambda L: (L.tensor([1.]), L.tensor([1.], dtype=L.float64)),
    "dtype int": lambda L: (L.tensor([1]), L.tensor([1], dtype=L.int32)),
    "shape": lambda L: (L.ones(3), L.ones(2)),
    "scalar": lambda L: (1.0, 1.1),
    "int scalar": lambda L: (1, 2),
    "int vs float": lambda L: (1, 1.0),
    "float vs complex": lambda L: (1.0, 1 + 0j),
    "inf scalars": lambda L: (INF, INF),
    "nan scalars": lambda L: (NAN, NAN),
    "booleans": lambda L: (True, False),
    "tensor vs float": lambda L: (L.tensor(1.), 1.0),
    "strings": lambda L: ("a", "a"),
    "list": lambda L: ([L.ones(2), L.zeros(2)], [L.ones(2), L.ones(2)]),
    "dict": lambda L: ({"a": L.ones(2)}, {"a": L.zeros(2)}),
    "nested": lambda L: ({"a": [1, {"b": 2.0}]}, {"a": [1, {"b": 2.5}]}),
    "length": lambda L: ([1, 2], [1, 2, 3]),
    "keys": lambda L: ({"a": 1, "c": 2}, {"a": 1, "d": 2}),
    "missing key": lambda L: ({"a": 1}, {"a": 1, "b": 2}),
    "tuple vs list": lambda L: ((1, 2), [1, 2]),
    "nan tensors": lambda L: (L.tensor([NAN]), L.tensor([NAN])),
    "inf tensors": lambda L: (L.tensor([INF, -INF]), L.tensor([INF, -INF])),
    "2-d index": lambda L: (L.zeros(2, 3), L.tensor([[0., 0, 0], [0, 5, 0]])),
    "zero expected": lambda L: (L.tensor([1., 0.]), L.tensor([1., 0.5])),
    "bool tensors": lambda L: (L.tensor([True, False]), L.tensor([True, True])),
    "0-d tensors": lambda L: (L.tensor(1.), L.tensor(1.5)),
    "none": lambda L: (None, None),
    "none vs 1": lambda L: (None, 1),
    "bfloat16 within": lambda L: (L.tensor([1.], dtype=L.bfloat16), L.tensor([1.01], dtype=L.bfloat16)),
    "float16 off": lambda L: (L.tensor([1.], dtype=L.float16), L.tensor([1.01], dtype=L.float16)),
    "requires grad": lambda L: (L.ones(2, requires_grad=True), L.ones(2)),
    "numpy": lambda L: (np.ones(2, np.float32), np.array([1.0, 1.5], np.float32)),
    "numpy bool": lambda L: (np.array([True]), np.array([False])),
}
KWARGS = {
    "rtol only": dict(rtol=1e-3), "atol only": dict(atol=1e-3), "loose": dict(rtol=0.2, atol=0.0),
    "exact": dict(rtol=0.0, atol=0.0), "equal_nan": dict(equal_nan=True), "no dtype check": dict(check_dtype=False),
    "msg": dict(msg="custom"), "msg callable": dict(msg=lambda m: "X:" + m[:30]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pairs(case):
    same(lambda L: L.testing.assert_close(*CASES[case](L)))


@pytest.mark.parametrize("kw", sorted(KWARGS))
@pytest.mark.parametrize("case", ["close f32", "dtype", "nan tensors", "scalar", "nested", "int"])
def test_options(case, kw):
    same(lambda L: L.testing.assert_close(*CASES[case](L), **KWARGS[kw]))


def test_stride_check():
    same(lambda L: L.testing.assert_close(L.ones(2, 3).t(), L.ones(3, 2), check_stride=True))
    same(lambda L: L.testing.assert_close(L.ones(2, 3).t(), L.ones(3, 2)))


def test_complex_mismatch():
    # (the relative difference divides by |expected|, a complex abs whose last float32 bit differs between the two
    # libraries' kernels: compared up to it)
    out = []
    for L in (__import__("torch"), __import__("functorch_lite")):
        with pytest.raises(AssertionError) as e:
            L.testing.assert_close(L.tensor([1 + 1j]), L.tensor([1 + 1.1j]))
        lines = str(e.value).split("\n")
        out.append((lines[:4], lines[4][:38]))
    assert out[0] == out[1]
    assert out[0][0][3] == ("Greatest absolute difference: 0.10000002384185791 at index (0,) (up to 1e-05 "
                            "allowed)")
