"""Fixes of this file's session, each against real torch 2.13."""
import pytest
import torch

import functorch_lite as ft


def _outcome(m, fn):
    try:
        t = fn(m)
    except Exception as e:  # noqa: BLE001 (the outcome compared is the exception)
        return type(e).__name__, str(e)
    return str(t.dtype).split(".")[-1], tuple(t.shape), t.tolist()


_LISTS = [[1, 2 ** 63], [1, 2 ** 63 - 1], [True, 2], [True, False], [[1, 2], (3, 4)], (1, 2.0j), [1.5, 2],
          [0.1, 1e300], [1, -2 ** 63], [[1.0, True], [2, 3]], [3.0e38, 1], [2 ** 64], [-1.5, 2.5],
          [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], [[1j, 2], [3, 4.5]]]
# ragged nests: torch reads the shape along the first elements, then checks every sequence against it
_RAGGED = [[[[1, 2], [3, 4]], [[5], [6]]], [[1, 2], [[3], 4]], [[1, 2], [3]], [1, [2]], [[1], 2],
           [[[1]], [[2, 3]]], [[1, 2], [3, [4]]], [[[1, 2]], [[3, 4], [5, 6]]], [[], [1]], [[1], []]]


@pytest.mark.parametrize("dtype", [None, "int64", "uint8", "int8", "float16", "float32", "bool", "complex64"])
def test_tensor_of_python_lists_as_torch(dtype):
    # torch.tensor of lists / tuples of Python numbers: a per-level type scan (ops/creation._pure_nest) in place of
    # the leaf-by-leaf walk (1.3 us a number); the same dtypes, values and errors
    for data in _LISTS + _RAGGED:
        mk = (lambda d: lambda m: m.tensor(d, dtype=None if dtype is None else getattr(m, dtype)))(data)
        assert _outcome(ft, mk) == _outcome(torch, mk), data


@pytest.mark.parametrize("default", ["float64", "bfloat16"])
def test_tensor_of_python_lists_under_a_default_dtype(default):
    for m in (ft, torch):
        m.set_default_dtype(getattr(m, default))
    try:
        for data in ([1.0, 2], [1, 2], [[1j, 2]], [True], [[0.5], [2]]):
            got = [_outcome(m, lambda m: m.tensor(data)) for m in (ft, torch)]
            assert got[0] == got[1], data
    finally:
        for m in (ft, torch):
            m.set_default_dtype(m.float32)
