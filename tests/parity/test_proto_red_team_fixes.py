"""Parity with torch 2.13 for protocol / NumPy-interop findings of a red team: the memory formats and layouts are
singletons through copy / deepcopy / pickle; devices are immutable; pooling sizes and set_num_threads take NumPy
integers (a bool, a float, an ndarray refused with torch's message); ``view(numpy type)`` is refused, not a bit
reinterpretation; a float NumPy array index truncates to int64, a numpy.bool index is refused; ``np.array(t,
copy=False)`` refuses; permute / tensordot / finfo / iinfo refuse NumPy arguments as torch; finfo / iinfo do not
pickle."""
import copy
import pickle

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same


# ---- memory formats / layouts: singletons --------------------------------------------------------------------
@pytest.mark.parametrize("name", ["preserve_format", "contiguous_format", "channels_last", "channels_last_3d",
                                  "strided"])
def test_format_singletons(name):
    for m in (torch, ft):
        o = getattr(m, name)
        assert copy.copy(o) is o and copy.deepcopy(o) is o
        assert pickle.loads(pickle.dumps(o, protocol=4)) is o
        assert copy.deepcopy({"k": o})["k"] is o


def test_deepcopied_preserve_format_keeps_strides():
    def f(m):
        pf = copy.deepcopy(m.preserve_format)
        x = m.arange(6.).reshape(2, 3).t()
        return (x.clone(memory_format=pf).stride(), m.empty_like(x, memory_format=pf).stride(),
                m.ones(1, 2, 3, 3).contiguous(memory_format=copy.deepcopy(m.channels_last)).stride())
    same(f)


# ---- devices are immutable -----------------------------------------------------------------------------------
@pytest.mark.parametrize("attr,val", [("type", "cuda"), ("index", 3), ("foo", 1)])
def test_device_read_only(attr, val):
    def f(m):
        x = m.ones(2)
        setattr(x.device, attr, val)
    same(f)
    same(lambda m: delattr(m.device("cpu"), attr))
    assert str(ft.ones(1).device) == "cpu" and ft.device("cpu").index is None


def test_device_still_copies_and_pickles():
    def f(m):
        d = m.device("cpu")
        return (str(copy.deepcopy(d)), pickle.loads(pickle.dumps(d)) == d, hash(d) == hash(m.device("cpu")))
    same(f)


# ---- pooling / set_num_threads take NumPy integers -----------------------------------------------------------
_X = np.arange(32.).reshape(1, 2, 4, 4).astype(np.float32)
_POOLS = {
    "MaxPool2d": lambda m, x: m.nn.MaxPool2d(np.int64(2))(x),
    "MaxPool2d stride": lambda m, x: m.nn.MaxPool2d(2, stride=np.int64(2))(x),
    "MaxPool2d pad": lambda m, x: m.nn.MaxPool2d(3, padding=np.int64(1))(x),
    "MaxPool3d": lambda m, x: m.nn.MaxPool3d(np.int64(2))(x),
    "AvgPool2d": lambda m, x: m.nn.AvgPool2d(np.int64(2))(x),
    "avg_pool2d pad": lambda m, x: m.nn.functional.avg_pool2d(x, 3, padding=np.int64(1)),
    "avg_pool3d": lambda m, x: m.nn.functional.avg_pool3d(x, np.int64(2)),
    "LPPool2d": lambda m, x: m.nn.LPPool2d(2, np.int64(2))(x),
    "max_pool2d tuple": lambda m, x: m.nn.functional.max_pool2d(x, (np.int32(2), np.uint8(2))),
    "max_pool2d tensor": lambda m, x: m.nn.functional.max_pool2d(x, m.tensor(2)),
    "max_pool2d indices": lambda m, x: m.nn.functional.max_pool2d(x, np.int64(2), return_indices=True),
    "bool": lambda m, x: m.nn.functional.max_pool2d(x, True),
    "bool elem": lambda m, x: m.nn.functional.max_pool2d(x, (True, True)),
    "bool stride": lambda m, x: m.nn.functional.max_pool2d(x, 2, stride=True),
    "bool padding": lambda m, x: m.nn.functional.max_pool2d(x, 2, padding=False),
    "avg bool": lambda m, x: m.nn.functional.avg_pool2d(x, True),
    "float": lambda m, x: m.nn.functional.max_pool2d(x, 2.0),
    "ndarray": lambda m, x: m.nn.functional.max_pool2d(x, np.array([2, 2])),
    "np float": lambda m, x: m.nn.functional.max_pool2d(x, np.float64(2)),
}


@pytest.mark.parametrize("case", list(_POOLS))
def test_pool_numpy_ints(case):
    same(lambda m: _POOLS[case](m, m.tensor(_X)))


@pytest.mark.parametrize("fn", ["set_num_threads", "set_num_interop_threads"])
@pytest.mark.parametrize("v", [np.int64(1), np.int32(1), True, np.bool_(True), 1.0, np.float64(1.), np.int64(0)])
def test_set_threads_numpy_ints(fn, v):
    if fn == "set_num_interop_threads" and isinstance(v, np.integer) and v > 0:
        return  # (settable once per process in torch: the accepted value is covered by set_num_threads)
    n0 = (torch.get_num_threads(), ft.get_num_threads())
    try:
        same(lambda m: (getattr(m, fn)(v), type(m.get_num_threads()).__name__, m.get_num_threads()))
    finally:
        torch.set_num_threads(n0[0])
        ft.set_num_threads(n0[1])


# ---- view(dtype) refuses NumPy types ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", [np.float64, np.int32, float, int, "int32"])
def test_view_numpy_dtype(dt):
    same(lambda m: m.ones(2).view(dt))


# ---- NumPy array / scalar indices ------------------------------------------------------------------------------
_INDEX = {
    "float arr": lambda t: t[np.array([1.7, 0.2])],
    "float32 arr": lambda t: t[np.array([1.7, 0.2], dtype=np.float32)],
    "negative float": lambda t: t[np.array([-1.5])],
    "empty float": lambda t: t[np.array([])],
    "0-d float": lambda t: t[np.array(1.5)],
    "float16": lambda t: t[np.array([1.0], dtype=np.float16)],
    "int32 arr": lambda t: t[np.array([2, 0], dtype=np.int32)],
    "bool arr": lambda t: t[np.array([True, False, True])],
    "0-d bool arr": lambda t: t[np.array(True)],
    "np.bool True": lambda t: t[np.bool_(True)],
    "np.bool False": lambda t: t[np.bool_(False)],
    "np.bool in tuple": lambda t: t.reshape(1, 3)[0, np.bool_(True)],
    "np.float64": lambda t: t[np.float64(1.)],
}


@pytest.mark.parametrize("case", list(_INDEX))
def test_numpy_index(case):
    same(lambda m: _INDEX[case](m.arange(3.)))


def test_numpy_index_setitem():
    def f(m):
        u = m.arange(3.)
        u[np.array([1.7])] = 5.
        return u
    same(f)

    def g(m):
        u = m.arange(3.)
        u[np.bool_(True)] = 5.
    same(g)


# ---- __array__(copy=False), permute, tensordot, finfo / iinfo ---------------------------------------------------
@pytest.mark.parametrize("fn", [lambda t: np.array(t, copy=False), lambda t: np.asarray(t, copy=False),
                                lambda t: np.asarray(t, copy=True).tolist(), lambda t: np.asarray(t).tolist()])
def test_array_copy_false(fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (torch's __array__ lacks ``copy=``)
        same(lambda m: fn(m.arange(6.).reshape(2, 3)))


@pytest.mark.parametrize("dims", [lambda m: np.array([1, 0]), lambda m: m.tensor([1, 0]),
                                  lambda m: (np.int64(1), np.int64(0)), lambda m: [1, 0]])
def test_permute_numpy_dims(dims):
    same(lambda m: m.arange(6.).reshape(2, 3).permute(dims(m)))


@pytest.mark.parametrize("dims", [np.int64(1), np.int32(1), 1.0, np.array([[1], [0]]), np.array(1), "a", None,
                                  True, ([np.int64(1)], [np.int64(0)])])
def test_tensordot_dims(dims):
    same(lambda m: m.tensordot(m.arange(6.).reshape(2, 3), m.arange(6.).reshape(3, 2), dims=dims))


@pytest.mark.parametrize("info,arg", [("finfo", np.float32), ("finfo", "float32"), ("finfo", np.dtype("float32")),
                                      ("finfo", float), ("iinfo", np.int32), ("iinfo", int), ("iinfo", bool)])
def test_info_argument(info, arg):
    same(lambda m: getattr(m, info)(arg).max)


@pytest.mark.parametrize("op", [pickle.dumps, lambda o: pickle.dumps(o, protocol=0), copy.copy, copy.deepcopy])
@pytest.mark.parametrize("info,dt", [("finfo", "float32"), ("iinfo", "int32")])
def test_info_does_not_pickle(op, info, dt):
    same(lambda m: op(getattr(m, info)(getattr(m, dt))))
