"""``out=`` whose dtype differs from the result's: the ops whose torch kernels demand the result's dtype raise
torch's error (they cast into ``out``: a float64 ``out`` of a float32 ``mm`` was filled); the others still cast."""
import pytest
import torch

import functorch_lite as ft


def _a(L):
    return L.ones(2, 2)


def _outcome(fn, L):
    """torch's error, or the result's (dtype, values); a tuple result: its type's name and each part's values."""
    try:
        r = fn(L)
    except Exception as e:  # noqa: BLE001  (the comparison is the point)
        return "raised", type(e).__name__, str(e)
    if isinstance(r, tuple):
        return type(r).__name__, [x.tolist() for x in r]
    return str(r.dtype), r.tolist()


def _same(fn):
    got = _outcome(fn, ft)
    assert got == _outcome(fn, torch)
    return got


def _o(L, *s):
    return L.zeros(*s, dtype=L.float64)


CASES = {
    "mm": lambda L: L.mm(_a(L), _a(L), out=_o(L, 2, 2)),
    "matmul": lambda L: L.matmul(_a(L), _a(L), out=_o(L, 2, 2)),
    "bmm": lambda L: L.bmm(_a(L)[None], _a(L)[None], out=_o(L, 1, 2, 2)),
    "addmm": lambda L: L.addmm(_a(L), _a(L), _a(L), out=_o(L, 2, 2)),
    "mv": lambda L: L.mv(_a(L), L.ones(2), out=_o(L, 2)),
    "dot": lambda L: L.dot(L.ones(2), L.ones(2), out=_o(L)),
    "norm": lambda L: L.norm(_a(L), out=_o(L)),
    "where": lambda L: L.where(L.tensor([True]), L.tensor([1]), L.tensor([2]), out=L.zeros(1, dtype=L.int32)),
    "amax": lambda L: L.amax(_a(L), 0, out=_o(L, 2)),
    "amin": lambda L: L.amin(_a(L), 0, out=_o(L, 2)),
    "add still casts": lambda L: L.add(_a(L), _a(L), out=_o(L, 2, 2)),
    "outer still casts": lambda L: L.outer(L.ones(2), L.ones(2), out=_o(L, 2, 2)),
    "cumsum still casts": lambda L: L.cumsum(_a(L), 0, out=_o(L, 2, 2)),
    "mm same dtype": lambda L: L.mm(_a(L), _a(L), out=L.zeros(2, 2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_torch(name):
    _same(CASES[name])


def _x(L):
    return L.tensor([1.5, 2.25, -3.75])


AS_DTYPE = {
    "sum into int64": lambda L: L.sum(_x(L), 0, out=L.zeros((), dtype=L.int64)),
    "sum into bool": lambda L: L.sum(_x(L), 0, out=L.zeros((), dtype=L.bool)),
    "prod into int64": lambda L: L.prod(_x(L), 0, out=L.zeros((), dtype=L.int64)),
    "cumsum into int64": lambda L: L.cumsum(_x(L), 0, out=L.zeros(3, dtype=L.int64)),
    "cumprod into int32": lambda L: L.cumprod(_x(L), 0, out=L.zeros(3, dtype=L.int32)),
    "sum into float64": lambda L: L.sum(_x(L), 0, out=L.zeros((), dtype=L.float64)),
    "int sum into float32": lambda L: L.sum(L.tensor([1, 2]), 0, out=L.zeros((), dtype=L.float32)),
}


@pytest.mark.parametrize("name", sorted(AS_DTYPE))
def test_reductions_compute_in_outs_dtype_as_torch(name):
    """(they raised "result type Float can't be cast to the desired output type Long")"""
    assert _same(AS_DTYPE[name])[0] != "raised"


def _m(L):
    return L.tensor([[1.0, 5.0], [3.0, 2.0]])


TUPLES = {
    "max dim, float64 values out": lambda L: L.max(_m(L), 0, out=(L.zeros(2, dtype=L.float64),
                                                                   L.zeros(2, dtype=L.int64))),
    "max dim": lambda L: L.max(_m(L), 0, out=(L.zeros(2), L.zeros(2, dtype=L.int64))),
    "min dim keepdim": lambda L: L.min(_m(L), 1, keepdim=True, out=(L.zeros(2, 1), L.zeros(2, 1, dtype=L.int64))),
    "median dim": lambda L: L.median(_m(L), 0, out=(L.zeros(2), L.zeros(2, dtype=L.int64))),
    "max dim, a list of outs": lambda L: L.max(_m(L), 0, out=[L.zeros(2), L.zeros(2, dtype=L.int64)]),
}


@pytest.mark.parametrize("name", sorted(TUPLES))
def test_values_indices_outs_as_torch(name):
    """(a values out of another dtype was cast into; the result was ``return_types.max``, torch's ``max_out``)"""
    _same(TUPLES[name])


LINALG = {
    "matrix_norm": lambda L: L.linalg.matrix_norm(_a(L), out=_o(L)),
    "norm of a vector": lambda L: L.linalg.norm(L.ones(3), out=_o(L)),
    "norm of a matrix": lambda L: L.linalg.norm(_a(L), out=_o(L)),
    "nuclear norm": lambda L: L.linalg.norm(_a(L), "nuc", out=_o(L)),
    "linalg.cross": lambda L: L.linalg.cross(L.ones(3), L.ones(3), out=_o(L, 3)),
    "torch.cross": lambda L: L.cross(L.ones(3), L.ones(3), dim=0, out=_o(L, 3)),
    "vector_norm": lambda L: L.linalg.vector_norm(_a(L), out=_o(L)),
    "vector_norm dtype=float64 into float32": lambda L: L.linalg.vector_norm(_a(L), dtype=L.float64,
                                                                            out=L.zeros(())),
    "norm, same dtype": lambda L: L.linalg.norm(L.ones(3), out=L.zeros(())),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_outs_as_torch(name):
    _same(LINALG[name])
