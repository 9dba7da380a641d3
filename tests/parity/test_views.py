"""Parity of views, strides and in-place writes with PyTorch 2.13 (spec §5 VIEW-01..55, §7 INP-01..03,
§9.7 SHP-01..11).

Each view case builds a fresh base and a view of it with ``m = torch`` and ``m = functorch_lite``;
metadata (stride, storage_offset, contiguity, ``_base``, storage sharing) and values must agree, and
in-place writes must show through in both directions. ``__setitem__`` is tested only in the last
group (it is written separately).
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np
import pytest
import torch

import functorch_lite as ft

Make = Callable[[Any], Any]


def _np(t: Any) -> np.ndarray:
    t = t.detach()
    return np.asarray((t.float() if str(t.dtype) == "torch.bfloat16" else t).numpy())


def assert_same(ours: Any, theirs: torch.Tensor) -> None:
    """Same dtype, shape and values."""
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    np.testing.assert_array_equal(_np(ours), _np(theirs))


def assert_raises_like(case: Callable[[Any], Any]) -> None:
    """``case(ft)`` raises ``case(torch)``'s exception type with its message (first line)."""
    with pytest.raises(Exception) as theirs:
        case(torch)
    msg = str(theirs.value).split("\n")[0]
    with pytest.raises(type(theirs.value), match=re.escape(msg)):
        case(ft)


def shares(a: Any, b: Any) -> bool:
    """Two tensors use one storage."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def mat(m: Any) -> Any:
    """A fresh (non-view) 3x4 float32 base: 0..11."""
    return m.tensor(np.arange(12.).reshape(3, 4), dtype=m.float32)


def vec(m: Any) -> Any:
    return m.tensor(np.arange(10.), dtype=m.float32)


def cube(m: Any) -> Any:
    return m.tensor(np.arange(24.).reshape(2, 3, 4), dtype=m.float32)


def col(m: Any) -> Any:
    return m.tensor([[1.], [2.], [3.]])


# name -> (base maker, view maker)
VIEWS: dict[str, tuple[Make, Callable[[Any], Any]]] = {
    "VIEW-01_view": (vec, lambda b: b.narrow(0, 0, 8).view(2, 4)),
    "VIEW-01_view_3x4": (mat, lambda b: b.view(4, 3)),
    "VIEW-05_transpose": (mat, lambda b: b.transpose(0, 1)),
    "VIEW-08_transpose_view_4_1_3": (mat, lambda b: b.transpose(0, 1).view(4, 1, 3)),
    "VIEW-14_reshape_viewable": (mat, lambda b: b.reshape(2, 6)),
    "VIEW-23_flatten_contiguous": (mat, lambda b: b.flatten()),
    "VIEW-24_strided_narrow": (vec, lambda b: b.narrow(0, 2, 6).view(3, 2).select(1, 0)),
    "VIEW-28_select_row": (mat, lambda b: b.select(0, 1)),
    "VIEW-29_select_col": (mat, lambda b: b.select(1, 1)),
    "VIEW-29_narrow_cols": (mat, lambda b: b.narrow(1, 1, 2)),
    "VIEW-32_0d_select": (mat, lambda b: b.select(0, 1).select(0, 2)),
    "VIEW-42_unsqueeze0": (mat, lambda b: b.unsqueeze(0)),
    "unsqueeze_mid_of_transposed": (mat, lambda b: b.t().unsqueeze(1)),
    "VIEW-43_permute": (mat, lambda b: b.permute(1, 0)),
    "VIEW-43_permute_4d": (lambda m: m.zeros(2, 3, 4, 5), lambda b: b.permute(0, 2, 1, 3)),
    "VIEW-45_narrow": (vec, lambda b: b.narrow(0, 3, 4)),
    "VIEW-45_chunk": (vec, lambda b: b.chunk(3)[1]),
    "VIEW-45_chunk_last": (vec, lambda b: b.chunk(3)[2]),
    "VIEW-45_unbind": (mat, lambda b: b.unbind(1)[2]),
    "split_sizes": (mat, lambda b: b.split([1, 3], 1)[1]),
    "split_int": (mat, lambda b: b.split(2, 0)[1]),
    "VIEW-46_t": (mat, lambda b: b.t()),
    "VIEW-46_T": (mat, lambda b: b.T),
    "VIEW-46_diagonal": (mat, lambda b: b.diagonal()),
    "diagonal_offset_pos": (mat, lambda b: b.diagonal(1)),
    "diagonal_offset_neg": (mat, lambda b: b.diagonal(-1)),
    "diagonal_3d": (cube, lambda b: b.diagonal(0, 1, 2)),
    "VIEW-55_squeeze": (lambda m: m.zeros(3, 1, 4), lambda b: b.squeeze(1)),
    "squeeze_all": (lambda m: m.zeros(1, 3, 1, 2), lambda b: b.squeeze()),
    "SHP-11_movedim": (cube, lambda b: b.movedim(0, -1)),
    "SHP-11_swapaxes": (cube, lambda b: b.swapaxes(0, 2)),
    "swapdims": (cube, lambda b: b.swapdims(0, 2)),
    "moveaxis_multi": (cube, lambda b: b.moveaxis((0, 1), (2, 0))),
    "SHP-11_unflatten": (lambda m: m.zeros(2, 12), lambda b: b.unflatten(1, (3, 4))),
    "unflatten_infer": (lambda m: m.zeros(2, 12), lambda b: b.unflatten(1, (3, -1))),
    "flatten_partial": (cube, lambda b: b.flatten(1)),
    "mT": (cube, lambda b: b.mT),
    "view_as": (mat, lambda b: b.view_as(b.new_zeros(2, 6))),
    "chain_transpose_narrow_select": (cube, lambda b: b.transpose(0, 2).narrow(0, 1, 2).select(2, 1)),
}
EXPANDS: dict[str, tuple[Make, Callable[[Any], Any]]] = {
    "VIEW-37_expand": (col, lambda b: b.expand(3, 4)),
    "VIEW-38_expand_minus1": (col, lambda b: b.expand(-1, 4)),
    "VIEW-38_expand_lead": (col, lambda b: b.expand(2, 3, 4)),
    "expand_as": (col, lambda b: b.expand_as(b.new_zeros(2, 3, 4))),
}


def _build(case: tuple, m: Any) -> tuple:
    make_base, make_view = case
    b = make_base(m)
    return b, make_view(b)


@pytest.mark.parametrize("name", list(VIEWS) + list(EXPANDS))
def test_view_metadata(name: str) -> None:
    """stride/storage_offset/is_contiguous/_base/_is_view/data_ptr of views (VIEW-01..46, VIEW-55)."""
    case = {**VIEWS, **EXPANDS}[name]
    (ob, ov), (tb, tv) = _build(case, ft), _build(case, torch)
    assert_same(ov, tv)
    assert ov.stride() == tv.stride()
    assert ov.storage_offset() == tv.storage_offset()
    assert ov.is_contiguous() == tv.is_contiguous()
    assert ov._is_view() == tv._is_view() is True
    assert (ov._base is ob) == (tv._base is tb) is True
    assert shares(ov, ob) and not ob._is_view() and ob._base is None
    # data_ptr arithmetic holds for a base at offset 0 (VIEW-28)
    assert ov.data_ptr() - ob.data_ptr() == tv.data_ptr() - tb.data_ptr() == ov.storage_offset() * 4
    for d in range(ov.dim()):
        assert ov.stride(d) == tv.stride(d) and ov.stride(d - ov.dim()) == tv.stride(d - tv.dim())


def test_VIEW_04_view_of_view_points_at_root() -> None:
    """VIEW-04: ``_base`` of a view of a view is the root; ``base._base`` is None."""
    for m in (torch, ft):
        base = m.arange(12.)
        v = base.view(3, 4)
        w = v.t().select(0, 1)
        assert v._base is base and w._base is base and base._base is None
        assert v._is_view() and not base._is_view()
        assert shares(w, base) and v.untyped_storage().nbytes() == 48 == w.untyped_storage().nbytes()


def test_VIEW_44_zero_dim() -> None:
    """VIEW-44: a 0-d tensor has stride () and is contiguous."""
    for m in (torch, ft):
        s = m.tensor(1.)
        assert s.stride() == () and s.is_contiguous() and s.storage_offset() == 0


INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "add_": lambda m, v: v.add_(100.),
    "mul_": lambda m, v: v.mul_(-2.),
    "fill_": lambda m, v: v.fill_(7.),
    "zero_": lambda m, v: v.zero_(),
    "copy_": lambda m, v: v.copy_(m.arange(v.numel(), dtype=v.dtype).reshape(v.shape) * 10 + 1),
    "clamp_": lambda m, v: v.clamp_(2., 5.),
    "masked_fill_": lambda m, v: v.masked_fill_(v > 4, -1.),
    "iadd": lambda m, v: v.__iadd__(1000.),
}


@pytest.mark.parametrize("op", list(INPLACE))
@pytest.mark.parametrize("name", list(VIEWS))
def test_write_through_view(name: str, op: str) -> None:
    """VIEW-02/25, INP-02: an in-place op on a view changes the base; one version counter."""
    results = []
    for m in (ft, torch):
        b, v = _build(VIEWS[name], m)
        r = INPLACE[op](m, v)
        assert r is v  # INP-04
        results.append((b, v))
    (ob, ov), (tb, tv) = results
    assert_same(ob, tb)
    assert_same(ov, tv)
    assert ob._version == ov._version == tb._version == 1


@pytest.mark.parametrize("name", list(VIEWS) + list(EXPANDS))
def test_write_base_seen_by_view(name: str) -> None:
    """VIEW-03: an in-place op on the base shows in every view (expanded ones too)."""
    results = []
    for m in (ft, torch):
        b, v = _build({**VIEWS, **EXPANDS}[name], m)
        v.sum()  # materialise the view first, so a stale cached value would show
        b.mul_(-3.).add_(1.)
        results.append(v)
    assert_same(*results)
    assert results[0]._version == 2


# ---- expanded views: writes (VIEW-40) --------------------------------------------------------------
@pytest.mark.parametrize("op", ["add_", "mul_", "copy_", "iadd"])
def test_VIEW_40_write_into_expanded_view_raises(op: str) -> None:
    """VIEW-40: ops that read and write an overlapping view raise PyTorch's error."""
    assert_raises_like(lambda m: INPLACE[op](m, m.zeros(3, 1).expand(3, 4)))


@pytest.mark.parametrize("op", ["fill_", "zero_"])
def test_fill_into_expanded_view_is_allowed(op: str) -> None:
    """PyTorch allows ``fill_``/``zero_`` on an expanded view (every alias gets the same value)."""
    res = []
    for m in (ft, torch):
        b = m.zeros(3, 1)
        INPLACE[op](m, b.expand(3, 4))
        res.append(b)
    assert_same(*res)


# ---- view errors (VIEW-06..21, VIEW-39) and shape-op errors (SHP-03..10) -----------------------------
ERRORS: dict[str, Callable[[Any], Any]] = {
    "VIEW-06_view_12": lambda m: mat(m).t().view(12),
    "VIEW-07_view_minus1": lambda m: mat(m).t().view(-1),
    "VIEW-07_view_2_6": lambda m: mat(m).t().view(2, 6),
    "VIEW-09_seed_pattern": lambda m: m.zeros(2, 3, 4, 5).transpose(1, 2).view(2, 12, 5),
    "VIEW-16_view_5_minus1": lambda m: mat(m).view(5, -1),
    "VIEW-17_two_inferred": lambda m: mat(m).view(-1, -1),
    "VIEW-18_view_7": lambda m: mat(m).view(7),
    "VIEW-19_reshape_5_minus1": lambda m: mat(m).reshape(5, -1),
    "reshape_7": lambda m: mat(m).reshape(7),
    "VIEW-20_zero_elements": lambda m: m.zeros(0, 3).view(0, -1),
    "VIEW-21_negative_dim": lambda m: mat(m).view(-2, 6),
    "view_float_size": lambda m: mat(m).view(2.5, 4),
    "VIEW-39_expand_mismatch": lambda m: m.zeros(3, 2).expand(3, 4),
    "expand_too_few_sizes": lambda m: m.zeros(2, 3).expand(3),
    "expand_leading_minus1": lambda m: m.zeros(3).expand(-1, 3),
    "SHP-03_permute_len": lambda m: m.zeros(2, 3, 4).permute(0, 1),
    "SHP-04_permute_dup": lambda m: m.zeros(2, 3, 4).permute(0, 1, 1),
    "permute_out_of_range": lambda m: m.zeros(2, 3).permute(0, 2),
    "SHP-05_transpose_range": lambda m: m.zeros(2, 3).transpose(0, 2),
    "SHP-08_unsqueeze_range": lambda m: m.zeros(3, 4).unsqueeze(3),
    "unsqueeze_negative_range": lambda m: m.zeros(3, 4).unsqueeze(-4),
    "SHP-10_squeeze_range": lambda m: m.zeros(64, 1).squeeze(5),
    "squeeze_tuple_range": lambda m: m.zeros(1, 3).squeeze((0, 5)),
    "t_3d": lambda m: m.zeros(2, 3, 4).t(),
    "narrow_too_long": lambda m: m.zeros(5).narrow(0, 3, 4),
    "narrow_start_range": lambda m: m.zeros(5).narrow(0, 6, 0),
    "select_range": lambda m: m.zeros(3, 4).select(1, 4),
    "select_0d": lambda m: m.tensor(1.).select(0, 0),
    "diagonal_same_dims": lambda m: m.zeros(3, 3).diagonal(0, 1, 1),
    "unflatten_bad_infer": lambda m: m.zeros(2, 12).unflatten(1, (5, -1)),
    "unflatten_bad_sizes": lambda m: m.zeros(2, 12).unflatten(1, (5, 2)),
    "flatten_start_after_end": lambda m: m.zeros(2, 3, 4).flatten(2, 1),
    "movedim_repeated": lambda m: m.zeros(2, 3).movedim((0, 0), (0, 1)),
    "movedim_length_mismatch": lambda m: m.zeros(2, 3).movedim((0, 1), (0,)),
    "split_sizes_sum": lambda m: mat(m).split([1, 2], 1),
    "VIEW-22_view_dtype_odd_size": lambda m: m.zeros(3, dtype=m.int16).view(m.float32),
    "VIEW-22_view_dtype_0d": lambda m: m.tensor(1.).view(m.int16),
    "VIEW-22_view_dtype_stride": lambda m: mat(m).t().view(m.int16),
    "VIEW-22_view_dtype_grow": lambda m: m.zeros(3, dtype=m.float32).view(m.float64),
    "view_float_single": lambda m: mat(m).view(2.5),
    "view_list_of_float": lambda m: mat(m).view([2.5]),
    "view_unpack_pos2": lambda m: mat(m).view(3, 2.5),
    "reshape_tuple_float": lambda m: mat(m).reshape((2.5, 4)),
    "reshape_varargs_float_first": lambda m: mat(m).reshape(2.5, 4),
    "expand_single_float": lambda m: mat(m).expand(2.5),
    "repeat_unpack_pos2": lambda m: mat(m).repeat(2, 2.5),
    "squeeze_0d_range": lambda m: m.tensor(1.).squeeze(1),
    "unflatten_empty_sizes": lambda m: m.zeros(2, 12).unflatten(1, ()),
    "movedim_repeated_destination": lambda m: m.zeros(2, 3).movedim((0, 1), (1, -1)),
    "movedim_range": lambda m: m.zeros(2, 3).movedim(0, 5),
    "select_negative_range": lambda m: m.zeros(3, 4).select(1, -5),
    "clone_channels_last_rank": lambda m: mat(m).clone(memory_format=m.channels_last),
    "fill_tensor_value_into_expanded": lambda m: m.zeros(3, 1).expand(3, 4).fill_(m.tensor(5.)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_view_and_shape_errors(name: str) -> None:
    """Exception type and message as PyTorch."""
    assert_raises_like(ERRORS[name])


# ---- copies vs views: reshape, contiguous, clone (VIEW-10..15, VIEW-23, VIEW-41, VIEW-51) ----------------
def test_VIEW_13_reshape_of_transposed_copies() -> None:
    """VIEW-13/23: ``t.reshape(12)``/``t.flatten()`` copy; writes no longer alias."""
    for m in (torch, ft):
        b = mat(m)
        for r in (b.t().reshape(12), b.t().flatten(), b.t().ravel()):
            assert not shares(r, b) and r.is_contiguous() and r.stride() == (1,)
            r.add_(100.)
            assert b.sum().item() == 66.0
        assert mat(m).t().reshape(12).tolist() == [0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]


def test_VIEW_14_15_reshape_views_when_possible() -> None:
    """VIEW-14/15: a viewable reshape is a view of the base and a new object."""
    for m in (torch, ft):
        b = mat(m)
        r = b.reshape(2, 6)
        assert r._base is b and shares(r, b) and r.stride() == (6, 1)
        same = b.reshape(3, 4)
        assert same is not b and shares(same, b)


def test_VIEW_10_contiguous_then_view() -> None:
    """VIEW-10: ``.contiguous().view`` and ``.reshape`` of the seed pattern."""
    for m in (torch, ft):
        x = m.zeros(2, 3, 4, 5).transpose(1, 2)
        assert x.contiguous().view(2, 12, 5).shape == (2, 12, 5)
        assert x.reshape(2, 12, 5).shape == (2, 12, 5)


def test_VIEW_11_12_contiguous() -> None:
    """VIEW-11: ``t.contiguous()`` is a new storage with row-major strides; VIEW-12: returns self."""
    res = []
    for m in (ft, torch):
        b = mat(m)
        assert b.contiguous() is b
        c = b.t().contiguous()
        assert not shares(c, b) and c.stride() == (3, 1) and c.is_contiguous() and c._base is None
        assert c._version == 0
        res.append(c)
    assert_same(*res)


def test_VIEW_41_expand_contiguous_and_repeat() -> None:
    for m in (torch, ft):
        e0 = col(m)
        assert e0.expand(3, 4).contiguous().stride() == (4, 1)
        assert not shares(e0.repeat(1, 4), e0)


@pytest.mark.parametrize("name", ["transposed", "narrowed", "expanded", "permuted_3d", "strided_permuted",
                                  "expanded_transposed", "size1_transposed"])
def test_VIEW_51_clone_preserves_dense_strides(name: str) -> None:
    """VIEW-51: ``clone()`` keeps the strides of a dense non-contiguous tensor (preserve_format)."""
    make = {"transposed": lambda m: mat(m).t(), "narrowed": lambda m: mat(m).narrow(1, 1, 2),
            "expanded": lambda m: col(m).expand(3, 4), "permuted_3d": lambda m: m.zeros(2, 3, 4).permute(2, 0, 1),
            "strided_permuted": lambda m: cube(m)[:, ::2].permute(2, 0, 1),
            "expanded_transposed": lambda m: cube(m).expand(2, 2, 3, 4).transpose(0, 3),
            "size1_transposed": lambda m: col(m).t()}[name]
    o, t = make(ft).clone(), make(torch).clone()
    assert_same(o, t)
    assert o.stride() == t.stride()


def test_VIEW_51_clone_contiguous_format() -> None:
    """VIEW-51: ``clone(memory_format=torch.contiguous_format)`` gives row-major strides."""
    for m in (torch, ft):
        assert mat(m).t().clone(memory_format=m.contiguous_format).stride() == (3, 1)


def test_VIEW_51_clone_keeps_values_grad_fn_and_writes() -> None:
    """A stride-preserving clone is a new storage (no ``_base``), CloneBackward0, writable, differentiable."""
    res = []
    for m in (ft, torch):
        w = m.tensor(np.arange(12.).reshape(3, 4), dtype=m.float32, requires_grad=True)
        c = (w * 1).t().clone()
        assert c.grad_fn.name() == "CloneBackward0" and c._base is None and not c.is_contiguous()
        (c * m.arange(12.).view(4, 3)).sum().backward()
        d = mat(m).t().clone()
        d.add_(1.)
        res.append((w.grad, d, d.contiguous()))
    for o, t in zip(*res):
        assert_same(o, t)


def test_channels_last_clone_and_contiguous() -> None:
    for m in (torch, ft):
        x = m.arange(120.).view(2, 3, 4, 5)
        c = x.contiguous(memory_format=m.channels_last)
        assert c.stride() == x.clone(memory_format=m.channels_last).stride() == (60, 1, 15, 3)
        assert c.is_contiguous(memory_format=m.channels_last) and not x.is_contiguous(memory_format=m.channels_last)
        assert c.contiguous(memory_format=m.channels_last) is c
        assert c.tolist() == x.tolist() and c.contiguous().stride() == (60, 20, 5, 1)


# ---- version counter (INP-01..03) -----------------------------------------------------------------
def test_INP_01_version_counts_inplace_ops() -> None:
    """INP-01: every in-place op bumps ``_version`` by one; INP-03: out-of-place results start at 0."""
    for m in (torch, ft):
        x = m.ones(3)
        seen = [x._version]
        for f in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.__iadd__(1), lambda: x.zero_(),
                  lambda: x.fill_(2.), lambda: x.copy_(m.zeros(3)), lambda: x.clamp_(min=0.),
                  lambda: x.masked_fill_(m.tensor([True, False, True]), 3.)):
            f()
            seen.append(x._version)
        assert seen == list(range(9))
        assert (x + 1)._version == 0 and x.clone()._version == 0
        x.sum(), x.view(3), x.t()
        assert x._version == 8


def test_INP_02_views_share_the_counter() -> None:
    """INP-02: base and view report one counter."""
    for m in (torch, ft):
        x = m.ones(3)
        x.add_(1)
        v = x.view(3)
        v.add_(1)
        assert x._version == v._version == 2
        w = x.unsqueeze(0)
        assert w._version == 2


# ---- detach / .data (VIEW-47/48/53, INP-26) ----------------------------------------------------------
def test_VIEW_47_48_detach_shares_storage_and_version() -> None:
    for m in (torch, ft):
        w = m.ones(3, requires_grad=True)
        d = w.detach()
        assert shares(d, w) and not d.requires_grad and d.is_leaf and d.grad_fn is None and d._base is None
        d.select(0, 0).fill_(5.)
        assert w.tolist() == [5., 1., 1.] and w.requires_grad
        assert w._version == d._version == 1
        assert repr(w) == "tensor([5., 1., 1.], requires_grad=True)"


def test_VIEW_53_data_shares_storage() -> None:
    """VIEW-53/INP-26: ``w.data`` shares storage, does not require grad, and writes reach ``w``."""
    for m in (torch, ft):
        w = m.tensor([2., 3.], requires_grad=True)
        d = w.data
        assert shares(d, w) and not d.requires_grad and d._base is None
        d.add_(1)
        assert w.tolist() == [3., 4.] and w.requires_grad and w.is_leaf


def test_VIEW_53_data_has_its_own_version_counter() -> None:
    """In PyTorch ``.data`` gets a fresh version counter (unlike ``detach()``)."""
    res = []
    for m in (torch, ft):
        w = m.ones(3, requires_grad=True)
        d = w.data
        d.add_(1)
        res.append((w._version, d._version))
    assert res[1] == res[0] == (0, 1)


# ---- view(dtype) (VIEW-22) ---------------------------------------------------------------------------
DTYPE_VIEWS: dict[str, Callable[[Any], Any]] = {
    "VIEW-22_f32_as_i32": lambda m: m.ones(2).view(m.int32),
    "f32_as_i16": lambda m: m.ones(2).view(m.int16),
    "f32_as_u8": lambda m: m.ones(1).view(m.uint8),
    "i16_as_f32": lambda m: m.tensor([0, 16256], dtype=m.int16).view(m.float32),
    "f64_as_f32": lambda m: m.ones(2, dtype=m.float64).view(m.float32),
    "bool_as_i8": lambda m: m.tensor([True, False]).view(m.int8),
    "0d_same_size": lambda m: m.tensor(1.).view(m.int32),
    "transposed_same_size": lambda m: mat(m).t().view(m.int32),
    "f32_as_bf16": lambda m: m.tensor([1., -2.]).view(m.bfloat16),
}


@pytest.mark.parametrize("name", list(DTYPE_VIEWS))
def test_VIEW_22_view_dtype(name: str) -> None:
    """VIEW-22: bit reinterpretation keeps storage; sizes scale by the itemsize ratio."""
    o, t = DTYPE_VIEWS[name](ft), DTYPE_VIEWS[name](torch)
    assert_same(o, t)
    assert o.stride() == t.stride()


def test_VIEW_22_view_dtype_shares_storage_both_ways() -> None:
    for m in (torch, ft):
        x = m.ones(2)
        v = x.view(m.int32)
        assert shares(v, x)
        v.add_(1)
        assert x.tolist()[0] == pytest.approx(1.0000001192092896)
        x.fill_(2.)
        assert v.tolist() == [1073741824, 1073741824]


def test_VIEW_22_view_dtype_is_not_an_autograd_view() -> None:
    """PyTorch does not record ``view(dtype)`` as an autograd view: ``_base`` is None, no gradient."""
    for m in (torch, ft):
        x = m.ones(2)
        v = x.view(m.int32)
        assert v._base is None and not v._is_view()
        w = m.ones(2, requires_grad=True) * 2
        for dt in (m.float32, m.int32, m.float16):
            v = w.view(dt)
            assert not v.requires_grad and v.grad_fn is None and v._base is None


def test_VIEW_22_bool_views_write_through() -> None:
    res = []
    for m in (ft, torch):
        b = m.tensor([True, False, True])
        b.view(m.uint8).add_(2)
        i8 = m.tensor([1, 0, 3], dtype=m.int8)
        i8.view(m.bool).fill_(False)
        res.append((b, i8, m.tensor([1, 0], dtype=m.int8).view(m.bool)))
    for o, t in zip(*res):
        assert_same(o, t)


# ---- shapes (SHP-01..11) ------------------------------------------------------------------------------
SHAPES: dict[str, Callable[[Any], Any]] = {
    "SHP-01_transpose": lambda m: m.zeros(2, 5, 4, 8).transpose(1, 2),
    "SHP-01_permute": lambda m: m.zeros(2, 5, 4, 8).permute(0, 2, 1, 3),
    "SHP-02_permute": lambda m: m.zeros(2, 3, 4).permute(0, 2, 1),
    "SHP-02_permute_tuple": lambda m: m.zeros(2, 3, 4).permute((2, 0, 1)),
    "SHP-02_permute_list": lambda m: m.zeros(2, 3, 4).permute([2, 0, 1]),
    "SHP-02_permute_negative": lambda m: m.zeros(2, 3, 4).permute(-1, 0, 1),
    "SHP-02_transpose_negative": lambda m: m.zeros(2, 3, 4).transpose(-2, -1),
    "SHP-06_view_32_minus1": lambda m: m.zeros(32, 3, 28, 28).view(32, -1),
    "SHP-06_reshape_minus1": lambda m: m.zeros(2, 3).reshape(-1),
    "SHP-06_view_tuple": lambda m: m.zeros(2, 3).view((3, 2)),
    "SHP-06_reshape_list": lambda m: m.zeros(2, 3).reshape([6]),
    "SHP-06_view_size": lambda m: m.zeros(2, 3).view(m.Size([6])),
    "SHP-06_flatten1": lambda m: m.zeros(32, 3, 28, 28).flatten(1),
    "SHP-07_unsqueeze0": lambda m: m.zeros(3, 224, 224).unsqueeze(0),
    "SHP-07_unsqueeze_minus1": lambda m: m.zeros(3, 4).unsqueeze(-1),
    "SHP-07_unsqueeze2": lambda m: m.zeros(3, 4).unsqueeze(2),
    "SHP-09_squeeze_minus1": lambda m: m.zeros(64, 1).squeeze(-1),
    "SHP-09_squeeze_noop": lambda m: m.zeros(64, 1).squeeze(0),
    "SHP-09_squeeze_all": lambda m: m.zeros(1, 3, 1, 2).squeeze(),
    "SHP-09_squeeze_tuple": lambda m: m.zeros(1, 3, 1, 2).squeeze((0, 2)),
    "squeeze_0d": lambda m: m.tensor(1.).squeeze(0),
    "transpose_0d": lambda m: m.tensor(1.).transpose(0, -1),
    "t_1d": lambda m: m.zeros(3).t(),
    "flatten_0d": lambda m: m.tensor(1.).flatten(),
    "view_zero_elements": lambda m: m.zeros(0, 3).view(-1),
    "SHP-11_swapaxes": lambda m: m.zeros(2, 3, 4).swapaxes(0, 2),
    "SHP-11_movedim": lambda m: m.zeros(2, 3, 4).movedim(0, -1),
    "SHP-11_unflatten": lambda m: m.zeros(2, 12).unflatten(1, (3, 4)),
    "movedim_tuple": lambda m: m.zeros(2, 3, 4).movedim((0, 1), (2, 0)),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_shapes(name: str) -> None:
    """SHP-01..11: result shapes (and strides) as PyTorch."""
    o, t = SHAPES[name](ft), SHAPES[name](torch)
    assert_same(o, t)
    assert o.stride() == t.stride()


def test_SHP_09_squeeze_noop_and_flatten_same_dim() -> None:
    """A no-op ``flatten(d, d)`` returns self in both."""
    for m in (torch, ft):
        x = m.zeros(2, 3)
        assert x.flatten(1, 1) is x


# ---- __setitem__ (written separately; VIEW-02/03/25, INP-01) ----------------------------------------------
def test_setitem_exists() -> None:
    assert hasattr(ft.Tensor, "__setitem__"), "Tensor.__setitem__ is missing"


def test_VIEW_02_setitem_through_view() -> None:
    """VIEW-02/03: ``v[0, 0] = 100.`` is visible in the base, ``base.select(0,1).fill_`` in v."""
    res = []
    for m in (ft, torch):
        base = m.arange(12.)
        v = base.view(3, 4)
        v[0, 0] = 100.
        base.narrow(0, 1, 1).fill_(-1.)
        res.append((base, v))
    assert_same(res[0][0], res[1][0])
    assert_same(res[0][1], res[1][1])


def test_VIEW_25_setitem_on_strided_view() -> None:
    res = []
    for m in (ft, torch):
        b = m.arange(10.)
        s = b.narrow(0, 2, 6).view(3, 2).select(1, 0)
        s[0] = 99.
        res.append(b)
    assert_same(*res)


def test_INP_01_setitem_bumps_version() -> None:
    for m in (torch, ft):
        x = m.ones(3)
        x[0] = 5.
        assert x._version == 1 and x.tolist() == [5., 1., 1.]
