"""Parity of indexing with PyTorch 2.13 (spec §5 VIEW-24..36, §9.8 IDX-01..05, §6.6, §7 INP-01).

Each case runs with ``m = torch`` and ``m = functorch_lite`` on the same numpy inputs: values, dtype,
shape, view metadata (``_base``, ``stride()``, ``storage_offset()``), grad_fn names, gradients,
``_version`` and, for errors, exception type and message must agree.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

Case = Callable[[Any], Any]
X3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def assert_same(ours: Any, theirs: Any) -> None:
    """Same type, dtype, shape and values (tuples compared element-wise)."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
        return
    assert isinstance(ours, ft.Tensor), type(ours)
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6)


def assert_raises_like(case: Case) -> None:
    """``case(ft)`` raises what ``case(torch)`` raises: same type and message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            case(torch)
        with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
            case(ft)


def _quiet(fn: Case, m: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uint8 masks / non-tuple sequences warn in both
        return fn(m)


def _weights(m: Any, t: Any) -> Any:
    """Distinct upstream gradients (host-built: no kernels to compile)."""
    return m.tensor(np.arange(t.numel(), dtype=np.float32).reshape(tuple(t.shape)))


def _mask(m: Any, shape: tuple, seed: int = 0) -> Any:
    return m.tensor(np.random.default_rng(seed).random(shape) > 0.5)


# ---- x[idx] on a (2, 3, 4) tensor: basic (views) and advanced (copies) -------------------------------------
GETITEM: dict[str, Callable[[Any], Any]] = {
    "IDX-01_int": lambda m: 1,
    "neg_int": lambda m: -1,
    "ints": lambda m: (1, 2),
    "ints_0d": lambda m: (1, 2, 3),
    "slice": lambda m: slice(1, None),
    "VIEW-24_step": lambda m: (slice(None), slice(None), slice(1, None, 2)),
    "VIEW-35_clamp": lambda m: slice(1, 100),
    "neg_slices": lambda m: (slice(-2, None), slice(-100, 2)),
    "empty_slice": lambda m: (slice(None), slice(2, 1)),
    "full_slices_alias": lambda m: (slice(None), slice(0, 3)),
    "ellipsis_alias": lambda m: Ellipsis,
    "empty_tuple_alias": lambda m: (),
    "IDX-01_ell_last": lambda m: (Ellipsis, -1),
    "int_ell_int": lambda m: (0, Ellipsis, 1),
    "two_ellipses": lambda m: (Ellipsis, 1, Ellipsis),
    "VIEW-32_none": lambda m: None,
    "none_mix": lambda m: (None, 1, None, slice(None, None, 2)),
    "IDX-02_tensor_0d": lambda m: m.tensor(1),
    "tensor_0d_int32_in_tuple": lambda m: (slice(None), m.tensor(-1, dtype=m.int32)),
    "np_int": lambda m: (np.int64(1), slice(None, 2)),
    "strided_view": lambda m: (slice(None), slice(1, 3), slice(None, None, 3)),
    "VIEW-30_list": lambda m: [1, 0],
    "tensor_idx": lambda m: m.tensor([1, 0, 1]),
    "tensor_2d_idx": lambda m: (slice(None), m.tensor([[0, 1], [2, 0]])),
    "IDX-01_two_lists": lambda m: ([0, 1], [2, 0]),
    "broadcast_idx": lambda m: (m.tensor([[0], [1]]), m.tensor([0, 1, 2])),
    "separated_adv_front": lambda m: ([0, 1], slice(None), [1, 3]),
    "adjacent_adv_inplace": lambda m: (slice(None), [0, 2], [1, 3]),
    "int_then_list": lambda m: (1, [0, 2]),
    "list_int_list": lambda m: ([0, 1], 1, [0, 2]),
    "int_slice_list": lambda m: (0, slice(None), [1, 3]),
    "none_list": lambda m: (None, [0, 1]),
    "ellipsis_list": lambda m: (Ellipsis, [0, 3]),
    "slice_then_list": lambda m: (slice(1, None), slice(None), [3, 0]),
    "VIEW-31_mask_full": lambda m: _mask(m, (2, 3, 4)),
    "mask_2d": lambda m: _mask(m, (2, 3), 1),
    "mask_2d_int": lambda m: (_mask(m, (2, 3), 2), 0),
    "mask_2d_slice": lambda m: (_mask(m, (2, 3), 3), slice(1, 3)),
    "mask_dim1": lambda m: (slice(None), m.tensor([True, False, True])),
    "mask_and_list": lambda m: (m.tensor([True, True]), slice(None), [0, 3]),
    "IDX-02_bool_list": lambda m: ([True, False],),
    "py_true": lambda m: True,
    "py_false": lambda m: False,
    "true_int": lambda m: (True, 0),
    "int_true": lambda m: (1, True),
    "tensor_true_0d": lambda m: m.tensor(True),
    "uint8_mask": lambda m: m.tensor([1, 0], dtype=m.uint8),
    "int32_idx": lambda m: m.tensor([0, 1, 1], dtype=m.int32),
    "empty_list": lambda m: ([],),
    "float_list_truncates": lambda m: ([0., 1.5],),
    "nested_list": lambda m: ([[0, 1], [1, 0]],),
    "list_as_tuple": lambda m: [slice(None), [0, 2]],
    "np_array_idx": lambda m: np.array([1, 0]),
    "np_bool_mask": lambda m: (slice(None), np.array([True, False, True])),
    "duplicates": lambda m: (slice(None), [2, 2, 0]),
}


@pytest.mark.parametrize("name", list(GETITEM))
def test_getitem_values_views_and_grads(name: str) -> None:
    """Values, dtype, shape; view vs copy and strides; grad_fn name and gradient vs torch."""
    res = {}
    for m in (torch, ft):
        base = m.tensor(X3.reshape(-1))
        y = base.view(2, 3, 4)
        r = _quiet(lambda mm: y[GETITEM[name](mm)], m)
        x = m.tensor(X3, requires_grad=True)
        g = _quiet(lambda mm: x[GETITEM[name](mm)], m)
        g.backward(_weights(m, g))
        meta = (r._base is base, r._base is None, r.stride(), r.storage_offset(), r.is_contiguous())
        res[m] = (r, meta, g.grad_fn.name() if hasattr(g.grad_fn, "name") else type(g.grad_fn).__name__, x.grad)
    (r1, meta1, fn1, g1), (r2, meta2, fn2, g2) = res[torch], res[ft]
    assert_same(r2, r1)
    assert meta2 == meta1
    if meta1[1]:  # a copy: nothing shared
        assert r2._base is None
    assert fn2 == fn1
    assert_same(g2, g1)


@pytest.mark.parametrize("name,msg", [("uint8_mask", "indexing with dtype torch.uint8 is now deprecated"),
                                      ("list_as_tuple", "Using a non-tuple sequence for multidimensional indexing")])
def test_index_deprecation_warnings(name: str, msg: str) -> None:
    for m in (torch, ft):
        with pytest.warns(UserWarning, match=re.escape(msg)):
            m.zeros(2, 3, 4)[GETITEM[name](m)]


def test_view_writes_both_ways() -> None:
    """VIEW-24/25, VIEW-28/29/32: strided, transposed and selected views share storage both ways."""
    for m in (torch, ft):
        b = m.arange(10.)
        s = b[2:8:2]
        assert s.stride() == (2,) and s.storage_offset() == 2 and not s.is_contiguous() and s._base is b
        s[0] = 99.
        b[4] = -4.
        assert b.tolist()[:5] == [0., 1., 99., 3., -4.] and s.tolist() == [99., -4., 6.]
        mm = m.arange(12.).view(3, 4)
        assert mm[1].data_ptr() == mm.data_ptr() + 4 * 4 and mm[1].storage_offset() == 4
        assert mm[:, 1].stride() == (4,) and mm[:, 1:3].stride() == (4, 1) and mm[1, 2].storage_offset() == 6
        t = mm.t()[1:, ::2]
        t[0] = m.tensor([-1., -2.])
        mm[2, 2] = 50.
        assert mm[:, 1].tolist() == [-1., 5., -2.] and t[0].tolist() == [-1., -2.]
        assert t[1].tolist() == [2., 50.] and t[2].tolist() == [3., 11.]
        assert mm._version == t._version == 2


# ---- getitem errors ---------------------------------------------------------------------------------------
_Y = lambda m: m.arange(12).view(3, 4)  # noqa: E731
GETITEM_ERRORS: dict[str, Case] = {
    "VIEW-26_neg_step": lambda m: m.arange(10.)[::-1],
    "zero_step": lambda m: _Y(m)[:, ::0],
    "VIEW-33": lambda m: _Y(m)[5],
    "VIEW-34": lambda m: _Y(m)[:, 10],
    "VIEW-36": lambda m: _Y(m)[-4],
    "real_dim_is_tuple_position": lambda m: m.zeros(2, 3, 4)[..., 10],
    "oob_after_none": lambda m: _Y(m)[None, 5],
    "too_many": lambda m: _Y(m)[1, 2, 3],
    "too_many_masks": lambda m: _Y(m)[m.ones(3, 4, dtype=m.bool), 0],
    "IDX-03_float": lambda m: _Y(m)[1.0],
    "float_in_tuple": lambda m: _Y(m)[0, 1.0],
    "np_float": lambda m: _Y(m)[np.float64(1)],
    "object": lambda m: _Y(m)[object()],
    "str": lambda m: _Y(m)["a"],
    "IDX-04_float_tensor": lambda m: _Y(m)[m.tensor([0., 1.])],
    "int16_tensor": lambda m: _Y(m)[m.tensor([0, 1], dtype=m.int16)],
    "IDX-05_tensor_oob": lambda m: _Y(m)[m.tensor([5])],
    "oob_second_index": lambda m: _Y(m)[[0, 1], [4, 0]],
    "oob_after_slice": lambda m: _Y(m)[1:, m.tensor([0, -5])],
    "oob_list": lambda m: _Y(m)[[0, 5]],
    "oob_0d_tensor": lambda m: _Y(m)[:, m.tensor(-5)],
    "mask_shape": lambda m: _Y(m)[m.tensor([True, False])],
    "mask_shape_dim1": lambda m: m.zeros(2, 3, 4)[0, :, m.tensor([True, False])],
    "broadcast": lambda m: _Y(m)[[0, 1], [0, 1, 2]],
    "mask_broadcast": lambda m: m.zeros(2, 3, 4)[m.ones(2, 3, dtype=m.bool), [0, 1]],
    "0d_int": lambda m: m.tensor(3)[0],
    "0d_int_oob": lambda m: m.tensor(3)[1],
    "0d_slice": lambda m: m.tensor(3)[:],
    "0d_tuple": lambda m: m.tensor(3)[0, ],
}


@pytest.mark.parametrize("name", list(GETITEM_ERRORS))
def test_getitem_errors(name: str) -> None:
    assert_raises_like(GETITEM_ERRORS[name])


# ---- x[idx] = v ---------------------------------------------------------------------------------------------
def _base(m: Any) -> Any:
    return m.arange(12.).reshape(3, 4).clone()


def _set(idx: Callable[[Any, Any], Any], val: Callable[[Any], Any]) -> Callable[[Any, Any], None]:
    def run(m: Any, x: Any) -> None:
        x[idx(m, x)] = val(m)
    return run


def _iadd(idx: Callable[[Any, Any], Any]) -> Callable[[Any, Any], None]:
    def run(m: Any, x: Any) -> None:
        x[idx(m, x)] += 1
    return run


SETITEM: dict[str, Callable[[Any, Any], None]] = {
    "INP-01_int": _set(lambda m, x: 0, lambda m: 5.),
    "column": _set(lambda m, x: (slice(None), 1), lambda m: m.tensor([7., 8., 9.])),
    "strided_broadcast": _set(lambda m, x: (slice(1, None), slice(None, None, 2)), lambda m: m.tensor([[1., 2.]])),
    "leading_ones_stripped": _set(lambda m, x: 0, lambda m: m.ones(1, 1, 4)),
    "scalar_0d_tensor": _set(lambda m, x: (1, 2), lambda m: m.tensor(4., dtype=m.float64)),
    "ellipsis": _set(lambda m, x: Ellipsis, lambda m: 3.),
    "full_slice": _set(lambda m, x: slice(None), lambda m: m.arange(4.)),
    "none": _set(lambda m, x: None, lambda m: 1.),
    "tensor_0d_index": _set(lambda m, x: m.tensor(1), lambda m: 0.),
    "ell_col_iadd": _iadd(lambda m, x: (Ellipsis, 0)),
    "list_rows": _set(lambda m, x: [0, 2], lambda m: 5.),
    "list_iadd": _iadd(lambda m, x: [0, 1]),
    "mask_scalar": _set(lambda m, x: x > 5, lambda m: 0.),
    "mask_values": _set(lambda m, x: x > 6, lambda m: m.arange(5.) * 10),
    "mask_none_true": _set(lambda m, x: x > 100, lambda m: 1.),
    "two_lists": _set(lambda m, x: ([0, 1], [1, 2]), lambda m: m.tensor([10., 20.])),
    "slice_and_list": _set(lambda m, x: (slice(1, None), [0, 3]), lambda m: m.tensor([1., 2.])),
    "list_leading_ones": _set(lambda m, x: [0], lambda m: m.ones(1, 1, 4)),
    "py_true": _set(lambda m, x: True, lambda m: 2.),
    "mask_dim1": _set(lambda m, x: (slice(None), m.tensor([True, False, False, True])), lambda m: -1.),
    "float_into_float_view_cast": _set(lambda m, x: 2, lambda m: m.tensor([1, 2, 3, 4])),
}


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem(name: str) -> None:
    """Values after the assignment and ``_version`` (INP-01: 1 per assignment; ``x[...,0] += 1`` is 2)."""
    out = {}
    for m in (torch, ft):
        x = _base(m)
        SETITEM[name](m, x)
        out[m] = (x, x._version)
    assert_same(out[ft][0], out[torch][0])
    assert out[ft][1] == out[torch][1]


def test_setitem_int_tensor_casts() -> None:
    """A Python float into an int64 tensor truncates, for basic and advanced assignment."""
    for m in (torch, ft):
        xi = m.zeros(3, dtype=m.int64)
        xi[0] = 2.7
        xi[[1]] = 3.9
        xi[2] = m.tensor([5.5])
        assert xi.tolist() == [2, 3, 5] and xi._version == 3


SETITEM_ERRORS: dict[str, Case] = {
    "expand": lambda m: _base(m).__setitem__(0, m.ones(3)),
    "expand_ndim": lambda m: _base(m).__setitem__(0, m.ones(2, 1, 4)),
    "value_shape": lambda m: _base(m).__setitem__([0, 1], m.ones(3)),
    "mask_value_shape": lambda m: _base(m).__setitem__(_base(m) >= 0, m.ones(11)),
    "dtype_mismatch": lambda m: m.zeros(3, dtype=m.int64).__setitem__([1], m.tensor(3.9)),
    "list_value": lambda m: _base(m).__setitem__(0, [1]),
    "oob": lambda m: _base(m).__setitem__(5, 2.),
    "oob_adv": lambda m: _base(m).__setitem__((slice(None), [0, 5]), 1.),
    "neg_step": lambda m: _base(m).__setitem__(slice(None, None, -1), 2.),
    "leaf_view": lambda m: m.ones(3, requires_grad=True).__setitem__(0, 5.),
    "leaf_index_put": lambda m: m.ones(3, requires_grad=True).__setitem__([0], 5.),
}


@pytest.mark.parametrize("name", list(SETITEM_ERRORS))
def test_setitem_errors(name: str) -> None:
    assert_raises_like(SETITEM_ERRORS[name])


_I2 = lambda m: m.tensor([[0, 1, 0], [1, 0, 1]])  # noqa: E731
OVERLAP: dict[str, Callable[[Any, Any], Any]] = {
    "scatter_": lambda m, x: x.scatter_(0, _I2(m), x),
    "scatter_add_": lambda m, x: x.scatter_add_(0, _I2(m), x),
    "scatter_reduce_": lambda m, x: x.scatter_reduce_(0, _I2(m), x, "sum"),
    "index_add_": lambda m, x: x.index_add_(0, m.tensor([1, 0]), x),
    "index_copy_": lambda m, x: x.index_copy_(0, m.tensor([1, 0]), x),
    "index_fill_0d_view_ok": lambda m, x: x.index_fill_(0, m.tensor([1, 0]), x[0, 0]),
    "masked_scatter_ok": lambda m, x: x.masked_scatter_(x > 2, x),
    "index_put_self": lambda m, x: x.index_put_((m.tensor([0, 1]),), x),
    "index_put_row": lambda m, x: x.index_put_((m.tensor([0]),), x[1]),
    "set_full_ok": lambda m, x: x.__setitem__(slice(None), x),
    "set_partial": lambda m, x: x.view(-1).__setitem__(slice(1, None), x.view(-1)[:-1]),
    "set_adv_full": lambda m, x: x.__setitem__([0, 1], x),
    "set_adv_partial": lambda m, x: x.view(-1).__setitem__([0, 1], x.view(-1)[3:5]),
    "set_adv_strided_ok": lambda m, x: x.view(-1).__setitem__([0, 1], x.view(-1)[::2][:2]),
    "set_strided_ok": lambda m, x: x.view(-1).__setitem__(slice(0, 2), x.view(-1)[::2][1:3]),
    "set_row_from_row_ok": lambda m, x: x.__setitem__(0, x[1]),
    "set_col_ok": lambda m, x: x.__setitem__((slice(None), 0), x[:, 1]),
}


@pytest.mark.parametrize("name", list(OVERLAP))
def test_overlapping_source(name: str) -> None:
    """PyTorch refuses in-place writes whose source aliases the written memory (dense cases); JAX would not care."""
    def run(m: Any) -> Any:
        x = m.arange(6.).view(2, 3)
        OVERLAP[name](m, x)
        return x
    if name.endswith("_ok"):
        assert_same(run(ft), run(torch))
    else:
        assert_raises_like(run)


def test_setitem_grad_value_into_plain_tensor() -> None:
    """Assigning a value that requires grad makes a plain tensor part of the graph (CopySlices)."""
    out = {}
    for m in (torch, ft):
        v = m.tensor([2., 3.], requires_grad=True)
        x = m.zeros(3, 2)
        x[1] = v
        x[[0]] += v * 2
        x[x > 2.5] = 7.
        x[2, 1:] = v[:1]
        assert x.requires_grad and not x.is_leaf
        x.backward(m.arange(6.).view(3, 2))
        out[m] = (x, v.grad)
    assert_same(out[ft][0], out[torch][0])
    assert_same(out[ft][1], out[torch][1])


def test_version_counter_INP01() -> None:
    """INP-01: add_, mul_, +=, zero_, x[0] = 5 bump the shared counter by one each."""
    for m in (torch, ft):
        x = m.ones(3)
        seen = [x._version]
        for step in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.__iadd__(1), lambda: x.zero_(),
                     lambda: x.__setitem__(0, 5)):
            step()
            seen.append(x._version)
        assert seen == [0, 1, 2, 3, 4, 5]
        v = x.view(3)
        v[[0, 1]] = 2.
        assert x._version == v._version == 6


def test_setitem_autograd() -> None:
    """CopySlices for basic, IndexPutBackward0 for advanced assignment; gradients flow to both sides."""
    out = {}
    for m in (torch, ft):
        a = m.tensor([1., 2., 3., 4.], requires_grad=True)
        v = m.tensor([5., 6.], requires_grad=True)
        b = a * 1
        b[1:3] = v
        c = a * 1
        c[m.tensor([True, False, False, True])] = v * 2
        names = (b.grad_fn.name(), c.grad_fn.name())
        ((b + c) * m.arange(1., 5.)).sum().backward()
        out[m] = (names, a.grad, v.grad)
    assert out[ft][0] == out[torch][0] == ("torch::autograd::CopySlices", "IndexPutBackward0")
    assert_same(out[ft][1], out[torch][1])
    assert_same(out[ft][2], out[torch][2])


# ---- gather / scatter / index_* / take / masked_* / nonzero ------------------------------------------------
_X = lambda m: m.tensor(np.arange(12., dtype=np.float32).reshape(3, 4))  # noqa: E731
_I = lambda m, v, dt=None: m.tensor(v, dtype=dt or m.int64)  # noqa: E731
_XI = np.arange(12).reshape(3, 4)
_II = [[0, 0, 1], [2, 2, 2], [3, 1, 0]]

OPS: dict[str, Case] = {
    "gather": lambda m: m.gather(_X(m), 1, _I(m, [[0, 1], [2, 3]])),
    "gather_int32": lambda m: _X(m).gather(0, _I(m, [[2, 1, 0, 0]], m.int32)),
    "gather_0d": lambda m: m.gather(m.tensor(5.), 0, m.tensor(0)),
    "gather_empty": lambda m: m.gather(_X(m), 1, m.zeros(0, dtype=m.long)),
    "gather_wider": lambda m: m.gather(_X(m), 1, m.zeros(2, 9, dtype=m.long)),
    "scatter_src": lambda m: m.scatter(_X(m), 1, _I(m, [[0, 1], [2, 3]]), _X(m) * 10),
    "scatter_value": lambda m: m.scatter(_X(m), 1, _I(m, [[0, 1], [2, 3]]), 1.5),
    "scatter_value_kw": lambda m: _X(m).scatter(0, _I(m, [[2, 0]]), value=-1.),
    "scatter_reduce_add": lambda m: m.scatter(_X(m), 1, _I(m, [[0, 0], [2, 2]]), 1.5, reduce="add"),
    "scatter_reduce_mul": lambda m: m.scatter(_X(m), 1, _I(m, [[0, 0], [2, 2]]), _X(m), reduce="multiply"),
    "scatter_int_value": lambda m: m.scatter(_X(m).long(), 1, _I(m, [[0]]), 1.5),
    "scatter_add": lambda m: m.scatter_add(_X(m), 0, _I(m, [[0, 0, 1, 2], [2, 2, 2, 2]]), _X(m)),
    "index_select": lambda m: m.index_select(_X(m), 1, _I(m, [3, 0, 0])),
    "index_select_0d": lambda m: _X(m).index_select(0, m.tensor(2)),
    "take": lambda m: m.take(_X(m), _I(m, [[0, -1], [5, 6]])),
    "take_along_dim": lambda m: m.take_along_dim(_X(m), _I(m, [[0], [1], [2]]), 1),
    "take_along_dim_flat": lambda m: m.take_along_dim(_X(m), _I(m, [0, 11])),
    "take_along_dim_bcast": lambda m: _X(m).take_along_dim(_I(m, [[0, 3]]), 1),
    "index_add_alpha": lambda m: _X(m).index_add(0, _I(m, [0, 0]), m.ones(2, 4), alpha=2),
    "index_fill_neg": lambda m: _X(m).index_fill(1, _I(m, [0, -1]), -1.),
    "index_fill_tensor": lambda m: _X(m).index_fill(1, _I(m, [0, 2]), m.tensor(2., dtype=m.float64)),
    "index_copy": lambda m: m.index_copy(_X(m), 0, _I(m, [2, 0]), m.ones(2, 4)),
    "masked_select_bcast": lambda m: m.masked_select(_X(m), m.tensor([True, False, True, False])),
    "masked_scatter": lambda m: _X(m).masked_scatter(m.tensor([True, False, True, False]), m.arange(20.).view(4, 5)),
    "nonzero": lambda m: m.nonzero(_X(m) > 5),
    "nonzero_0d": lambda m: m.nonzero(m.tensor(3)),
    "nonzero_tuple": lambda m: (_X(m) > 5).nonzero(as_tuple=True),
    "nonzero_tuple_0d": lambda m: m.nonzero(m.tensor(0), as_tuple=True),
    "where_1arg": lambda m: m.where(_X(m) > 5),
    "where_3arg": lambda m: m.where(_X(m) > 5, _X(m), 0.),
    "where_method": lambda m: _X(m).where(_X(m) > 5, m.tensor(0.)),
    "argwhere": lambda m: m.argwhere(_X(m) > 5),
    "index_put_accumulate": lambda m: _X(m).index_put_((_I(m, [0, 0]), _I(m, [1, 1])), m.tensor(1.), accumulate=True),
    "index_put_mask": lambda m: m.index_put(_X(m), (_X(m) > 8,), m.tensor(0.)),
}
for _r in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        for _dt in ("int64", "float32"):
            OPS[f"scatter_reduce_{_r}_{_inc}_{_dt}"] = (lambda r, inc, dt: lambda m: m.scatter_reduce(
                m.tensor(_XI).to(getattr(m, dt)), 1, m.tensor(_II), m.tensor(_XI * 3).to(getattr(m, dt)), r,
                include_self=inc))(_r, _inc, _dt)


@pytest.mark.parametrize("name", list(OPS))
def test_ops(name: str) -> None:
    assert_same(OPS[name](ft), OPS[name](torch))


OP_ERRORS: dict[str, Case] = {
    "gather_int16": lambda m: m.gather(_X(m), 1, _I(m, [[0, 1]], m.int16)),
    "gather_ndim": lambda m: m.gather(_X(m), 1, _I(m, [0])),
    "gather_size": lambda m: m.gather(_X(m), 1, m.zeros(4, 2, dtype=m.long)),
    "gather_oob": lambda m: m.gather(_X(m), 1, _I(m, [[5]])),
    "gather_neg": lambda m: m.gather(_X(m), 1, _I(m, [[-1]])),
    "gather_dim": lambda m: m.gather(_X(m), 2, _I(m, [[0]])),
    "scatter_int16": lambda m: m.scatter(_X(m), 1, _I(m, [[0]], m.int16), 1.),
    "scatter_src_dtype": lambda m: m.scatter(_X(m), 1, _I(m, [[0]]), _X(m).double()),
    "scatter_src_size": lambda m: m.scatter(_X(m), 1, _I(m, [[0, 1], [2, 3]]), m.ones(1, 1)),
    "scatter_self_size": lambda m: m.scatter(_X(m), 1, m.zeros(4, 2, dtype=m.long), 2.),
    "scatter_oob": lambda m: m.scatter(_X(m), 1, _I(m, [[5]]), 1.),
    "scatter_ndim": lambda m: m.scatter(_X(m), 1, _I(m, [0]), 1.),
    "scatter_reduce_arg": lambda m: m.scatter(_X(m), 1, _I(m, [[0]]), 1., reduce="foo"),
    "scatter_reduce_name": lambda m: m.scatter_reduce(_X(m), 1, _I(m, [[0]]), _X(m), "foo"),
    "scatter_add_dtype": lambda m: m.scatter_add(_X(m), 1, _I(m, [[0]]), _X(m).double()),
    "scatter_add_size": lambda m: m.scatter_add(_X(m), 1, m.zeros(4, 2, dtype=m.long), m.ones(4, 4)),
    "index_select_2d": lambda m: m.index_select(_X(m), 0, _I(m, [[0]])),
    "index_select_float": lambda m: m.index_select(_X(m), 0, m.tensor([0.])),
    "index_select_oob": lambda m: m.index_select(_X(m), 0, _I(m, [3])),
    "index_select_neg": lambda m: m.index_select(_X(m), 0, _I(m, [-1])),
    "take_int32": lambda m: m.take(_X(m), _I(m, [1], m.int32)),
    "take_oob": lambda m: m.take(_X(m), _I(m, [12])),
    "take_neg_oob": lambda m: m.take(_X(m), _I(m, [-13])),
    "take_along_dim_int32": lambda m: m.take_along_dim(_X(m), _I(m, [[0]], m.int32), 1),
    "take_along_dim_bcast": lambda m: m.take_along_dim(_X(m), _I(m, [[0, 1]]), 0),
    "take_along_dim_ndim": lambda m: m.take_along_dim(_X(m), _I(m, [0, 1]), 1),
    "index_add_int16": lambda m: _X(m).index_add(0, _I(m, [0, 2], m.int16), m.ones(2, 4)),
    "index_add_2d": lambda m: _X(m).index_add(0, _I(m, [[0, 2]]), m.ones(2, 4)),
    "index_add_dtype": lambda m: _X(m).index_add(0, _I(m, [0, 2]), m.ones(2, 4).double()),
    "index_add_count": lambda m: _X(m).index_add(0, _I(m, [0, 1, 2]), m.ones(2, 4)),
    "index_add_oob": lambda m: _X(m).index_add(0, _I(m, [0, 3]), m.ones(2, 4)),
    "index_add_neg": lambda m: _X(m).index_add(0, _I(m, [0, -1]), m.ones(2, 4)),
    "index_add_shape": lambda m: _X(m).index_add(0, _I(m, [0, 2]), m.ones(2, 3)),
    "index_add_ndim": lambda m: _X(m).index_add(0, _I(m, [0, 2]), m.ones(2)),
    "index_fill_int32": lambda m: _X(m).index_fill(1, _I(m, [0], m.int32), 1.),
    "index_fill_2d": lambda m: _X(m).index_fill(1, _I(m, [[0]]), 1.),
    "index_fill_oob": lambda m: _X(m).index_fill(1, _I(m, [5]), 1.),
    "index_fill_value_1d": lambda m: _X(m).index_fill(1, _I(m, [0]), m.ones(2)),
    "index_copy_int32": lambda m: _X(m).index_copy(0, _I(m, [0, 2], m.int32), m.ones(2, 4)),
    "index_copy_dtype": lambda m: _X(m).index_copy(0, _I(m, [0, 2]), m.ones(2, 4).double()),
    "index_copy_count": lambda m: _X(m).index_copy(0, _I(m, [0, 1, 2]), m.ones(2, 4)),
    "index_copy_oob": lambda m: _X(m).index_copy(0, _I(m, [0, 3]), m.ones(2, 4)),
    "index_copy_slices": lambda m: m.zeros(2, 3, 4).index_copy(1, _I(m, [0]), m.ones(2, 1, 5)),
    "index_copy_2d": lambda m: _X(m).index_copy(0, _I(m, [[0, 2]]), m.ones(2, 4)),
    "masked_select_int_mask": lambda m: m.masked_select(_X(m), (_X(m) > 5).int()),
    "masked_select_bcast": lambda m: m.masked_select(_X(m), m.tensor([True, False])),
    "masked_scatter_int_mask": lambda m: _X(m).masked_scatter((_X(m) > 5).int(), m.ones(12)),
    "masked_scatter_dtype": lambda m: _X(m).masked_scatter(_X(m) > 5, m.ones(12).double()),
    "masked_scatter_short": lambda m: _X(m).masked_scatter(_X(m) > 5, m.ones(3)),
    "index_put_dtype": lambda m: _X(m).index_put_((_I(m, [0]),), m.tensor(1., dtype=m.float64)),
    "index_put_scalar": lambda m: _X(m).index_put_((_I(m, [0]),), 1.),
    "index_put_none": lambda m: m.index_put(_X(m), (None, _I(m, [0])), m.tensor(1.)),
    "index_put_too_many": lambda m: _X(m).index_put_((_I(m, [0]),) * 3, m.tensor(1.)),
    "index_put_shape": lambda m: _X(m).index_put_((_I(m, [0]),), m.ones(3)),
    "index_put_oob": lambda m: _X(m).index_put_((_I(m, [7]),), m.ones(4)),
}


@pytest.mark.parametrize("name", list(OP_ERRORS))
def test_op_errors(name: str) -> None:
    assert_raises_like(OP_ERRORS[name])


# ---- gradients, grad_fn names and in-place forms ----------------------------------------------------------
GRADS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "gather": lambda m, x, s: x.gather(1, _I(m, [[0, 0], [3, 1], [2, 2]])),
    "scatter_src": lambda m, x, s: x.scatter(1, _I(m, [[0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 3, 2]]), s),
    "scatter_value": lambda m, x, s: x.scatter(1, _I(m, [[0, 1], [3, 2]]), 2.),
    "scatter_add": lambda m, x, s: x.scatter_add(0, _I(m, [[0, 0, 1, 2], [2, 2, 2, 2], [1, 0, 0, 0]]), s),
    "scatter_reduce_sum": lambda m, x, s: x.scatter_reduce(1, _I(m, [[0, 0, 1, 1]] * 3), s, "sum"),
    "scatter_reduce_mean": lambda m, x, s: x.scatter_reduce(1, _I(m, [[0, 0, 1, 1]] * 3), s, "mean",
                                                            include_self=False),
    "index_select": lambda m, x, s: x.index_select(1, _I(m, [3, 0, 0])),
    "take": lambda m, x, s: x.take(_I(m, [[0, 0], [-1, 5]])),
    "take_along_dim": lambda m, x, s: x.take_along_dim(_I(m, [[0], [3], [3]]), 1),
    "index_add": lambda m, x, s: x.index_add(0, _I(m, [2, 2, 0]), s, alpha=3),
    "index_copy": lambda m, x, s: x.index_copy(0, _I(m, [2, 0, 1]), s),
    "index_fill": lambda m, x, s: x.index_fill(1, _I(m, [0, 2]), 5.),
    "masked_select": lambda m, x, s: x.masked_select(x > 4),
    "masked_scatter": lambda m, x, s: x.masked_scatter(x > 4, s),
    "index_put_accumulate": lambda m, x, s: x.index_put((_I(m, [0, 0, 2]),), s, accumulate=True),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_op_grads(name: str) -> None:
    """grad_fn name and the gradients of input and source match torch's."""
    out = {}
    for m in (torch, ft):
        x = m.tensor(np.arange(12., dtype=np.float32).reshape(3, 4) - 5, requires_grad=True)
        s = m.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
        r = GRADS[name](m, x, s)
        r.backward(_weights(m, r))
        out[m] = (r, r.grad_fn.name(), x.grad, s.grad)
    assert_same(out[ft][0], out[torch][0])
    assert out[ft][1] == out[torch][1]
    for a, b in zip(out[ft][2:], out[torch][2:]):
        assert (a is None) == (b is None)
        if b is not None:
            assert_same(a, b)


INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "scatter_": lambda m, x: x.scatter_(1, _I(m, [[0, 1]]), -1.),
    "scatter_add_": lambda m, x: x.scatter_add_(0, _I(m, [[2, 2, 2, 2]]), m.ones(1, 4)),
    "scatter_reduce_": lambda m, x: x.scatter_reduce_(0, _I(m, [[2, 0, 2, 2]]), m.ones(1, 4) * 7, "amax"),
    "index_add_": lambda m, x: x.index_add_(1, _I(m, [1, 1]), m.ones(3, 2)),
    "index_fill_": lambda m, x: x.index_fill_(0, _I(m, [1]), 0.),
    "index_copy_": lambda m, x: x.index_copy_(1, _I(m, [3]), m.zeros(3, 1)),
    "index_put_": lambda m, x: x.index_put_((_I(m, [0, 1]), _I(m, [2, 3])), m.tensor([-5., -6.])),
    "masked_scatter_": lambda m, x: x.masked_scatter_(x > 7, m.arange(10.)),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_forms(name: str) -> None:
    """In-place variants return self, write through a view into its base, and bump ``_version`` once."""
    out = {}
    for m in (torch, ft):
        base = _X(m).reshape(-1).clone()
        x = base.view(3, 4)
        r = INPLACE[name](m, x)
        assert r is x
        out[m] = (base, x._version)
    assert_same(out[ft][0], out[torch][0])
    assert out[ft][1] == out[torch][1] == 1


def test_traced_indexing_matches_eager() -> None:
    """Under a jax trace (how ``compile`` runs ops): integer indices work without host reads (no bounds check),
    masks and ``nonzero`` raise the data-dependent error instead of failing inside JAX."""
    import jax
    from functorch_lite.ops._dispatch import DataDependentError

    def wrap(a: Any, dt: Any) -> Any:
        return ft.Tensor._from_array(a, dt, ft.device("cpu"))

    @jax.jit
    def run(a: Any, i: Any, j: Any) -> Any:
        x, idx, k = wrap(a, ft.float32), wrap(i, ft.int64), wrap(j, ft.int64)
        y = x[idx, 1:] * 2 + x[k, 1:]
        x[idx] = 0.
        return y._array, x._array

    y, x = run(np.arange(12., dtype=np.float32).reshape(3, 4), np.array([2, 0]), np.array(1))
    t = torch.arange(12.).view(3, 4)
    ty = t[[2, 0], 1:] * 2 + t[1, 1:]
    t[[2, 0]] = 0.
    np.testing.assert_array_equal(np.asarray(y), ty.numpy())
    np.testing.assert_array_equal(np.asarray(x), t.numpy())
    for fn in (lambda x: x[x > 3], lambda x: ft.nonzero(x)):
        with pytest.raises(DataDependentError):
            jax.jit(lambda a: fn(wrap(a, ft.float32))._array)(np.arange(6., dtype=np.float32))
