"""Parity of reductions with real PyTorch (spec §9.1-9.3, PRO-12/13, RED-01..36).

Every case runs the same call on ``torch`` and on ``functorch_lite`` over the same input and compares
values (dtype-appropriate tolerances), dtype, shape, indices (exactly), named-result types, errors
(type and message) and gradients.
"""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

FLOATS = ("float32", "float64", "float16", "bfloat16")
F32 = ("float32", "float64")
INTS = ("int32", "int64")
NUM = FLOATS + ("int64",)  # int32 only where accumulation rules differ (PRO-13), to keep the file fast
ALL = NUM + ("bool",)
ACC = ALL + ("int32",)
VAR = F32 + ("int64",)  # argument variants (keepdim, negative/list dims, aliases)
NUMB = F32 + ("bfloat16", "int64")  # float16 takes the same path as bfloat16 here
TOL = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 3e-2)}
nan, inf = math.nan, math.inf


# ---- helpers -------------------------------------------------------------------------------
def _pair(data, dtype: str) -> tuple:
    """(torch tensor, facade tensor) holding the same values in ``dtype``."""
    t = torch.tensor(np.asarray(data)).to(getattr(torch, dtype))
    host = t.float().numpy() if dtype == "bfloat16" else t.numpy()
    return t, ft.tensor(host, dtype=getattr(ft, dtype))


def _host(x) -> np.ndarray:
    x = x.detach()
    if x.dtype in (torch.bfloat16, ft.bfloat16):
        x = x.float()
    return np.asarray(x.numpy())


def assert_same(ours, theirs, dtype: str = "float64") -> None:
    """Values (allclose for floats, exact otherwise), dtype and shape; tuples element-wise."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple), type(ours)
        assert type(ours).__name__ == type(theirs).__name__
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t, dtype)
        return
    assert isinstance(ours, ft.Tensor), type(ours)
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    a, b = _host(ours), _host(theirs)
    if theirs.is_floating_point() or theirs.is_complex():
        rtol, atol = TOL.get(str(theirs.dtype).removeprefix("torch."), TOL[dtype] if dtype in TOL else TOL["float32"])
        wide = np.complex128 if theirs.is_complex() else np.float64
        np.testing.assert_allclose(a.astype(wide), b.astype(wide), rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


def _quiet(fn, *a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a)


_rng = np.random.default_rng(0)
INPUTS = {
    "r": {"f": _rng.standard_normal((3, 4, 5)), "i": _rng.integers(-5, 6, (3, 4, 5)),
          "b": _rng.integers(0, 2, (3, 4, 5)) > 0},
    # distinct, exactly representable in every dtype: deterministic indices for sort/topk/median
    "p": {"f": (_rng.permutation(60) - 30).reshape(3, 4, 5).astype(np.float64),
          "i": (_rng.permutation(60) - 30).reshape(3, 4, 5)},
    "u": {"f": _rng.uniform(0.5, 1.5, (3, 4, 5)), "i": _rng.integers(1, 3, (3, 4, 5)), "b": np.ones((3, 4, 5), bool)},
}


def _input(kind: str, dtype: str) -> np.ndarray:
    d = INPUTS[kind]
    return d["b"] if dtype == "bool" else d["i"] if dtype in INTS else d["f"]


# ---- value / dtype / shape parity table ---------------------------------------------------------------
CASES = [  # (id, fn(module, x), dtypes, input kind)
    ("sum_RED01", lambda m, x: x.sum(), ACC, "r"),
    ("sum_dim0_RED01", lambda m, x: x.sum(dim=0), ACC, "r"),
    ("sum_neg_RED01", lambda m, x: x.sum(-1), VAR, "r"),
    ("sum_keepdim_RED03", lambda m, x: x.sum(1, keepdim=True), VAR, "r"),
    ("sum_tuple_RED02", lambda m, x: x.sum(dim=(0, 2)), ALL, "r"),
    ("sum_list_neg_RED02", lambda m, x: m.sum(x, [-1, 0], True), VAR, "r"),
    ("sum_empty_tuple_RED02", lambda m, x: x.sum(dim=()), VAR, "r"),
    ("sum_axis_RED02", lambda m, x: x.sum(axis=1), VAR, "r"),
    ("sum_dtype_RED07", lambda m, x: x.sum(dtype=m.float64), NUM, "r"),
    ("sum_int32_dtype", lambda m, x: x.sum(1, dtype=m.int32), INTS, "r"),
    ("mean_RED08", lambda m, x: x.mean(), FLOATS, "r"),
    ("mean_keepdim_RED08", lambda m, x: x.mean(dim=-1, keepdim=True), F32, "r"),
    ("mean_tuple_RED08", lambda m, x: m.mean(x, (0, 1)), F32, "r"),
    ("mean_axis", lambda m, x: x.mean(axis=2), F32, "r"),
    ("mean_dtype_int", lambda m, x: x.mean(dtype=m.float64), INTS, "r"),
    ("prod_PRO13", lambda m, x: x.prod(), ACC, "u"),
    ("prod_dim", lambda m, x: x.prod(1), NUMB + ("bool",), "u"),
    ("prod_keepdim_neg", lambda m, x: m.prod(x, -1, True), VAR, "u"),
    ("prod_dtype", lambda m, x: x.prod(dtype=m.float64), INTS, "u"),
    ("max_RED26", lambda m, x: x.max(), ALL, "r"),
    ("min_fn", lambda m, x: m.min(x), NUMB + ("bool",), "r"),
    ("max_dim_RED27", lambda m, x: x.max(dim=1), ACC, "r"),
    ("max_keepdim_RED28", lambda m, x: x.max(1, keepdim=True), VAR, "r"),
    ("min_dim_RED29", lambda m, x: x.min(dim=0), NUMB + ("bool",), "r"),
    ("min_fn_neg", lambda m, x: m.min(x, -1), VAR, "r"),
    ("max_axis", lambda m, x: m.max(x, axis=2), F32, "r"),
    ("max_pair_RED33", lambda m, x: m.max(x, x.flip(0)), NUMB, "r"),
    ("min_pair_method", lambda m, x: x.min(x.flip(1)), VAR, "r"),
    ("max_other_kw", lambda m, x: x.max(other=x.flip(2)), F32, "r"),
    ("amax_tuple_RED36", lambda m, x: x.amax(dim=(0, 1)), ALL, "r"),
    ("amax_all", lambda m, x: x.amax(), NUMB + ("bool",), "r"),
    ("amin_neg_keepdim", lambda m, x: m.amin(x, -2, True), VAR, "r"),
    ("argmax_flat_RED32", lambda m, x: x.argmax(), NUMB, "r"),
    ("argmax_dim_RED32", lambda m, x: x.argmax(dim=1), NUMB, "r"),
    ("argmax_keepdim_RED32", lambda m, x: x.argmax(dim=-1, keepdim=True), VAR, "r"),
    ("argmax_all_keepdim", lambda m, x: x.argmax(keepdim=True), VAR, "r"),
    ("argmin_RED32", lambda m, x: m.argmin(x, 0), VAR, "r"),
    ("aminmax", lambda m, x: x.aminmax(), NUM, "r"),
    ("aminmax_dim", lambda m, x: m.aminmax(x, dim=-1, keepdim=True), VAR, "r"),
    ("var", lambda m, x: x.var(), FLOATS, "r"),
    ("var_dim_unbiased_pos", lambda m, x: x.var(0, True, True), F32, "r"),
    ("var_unbiased_false", lambda m, x: x.var(False), F32, "r"),
    ("var_correction", lambda m, x: x.var(dim=(0, 2), correction=0), F32 + ("bfloat16",), "r"),
    ("var_correction_float", lambda m, x: x.var(1, correction=0.5, keepdim=True), F32, "r"),
    ("std", lambda m, x: x.std(-1), FLOATS, "r"),
    ("std_unbiased_kw", lambda m, x: m.std(x, dim=[1], unbiased=False, keepdim=True), F32, "r"),
    ("var_mean", lambda m, x: m.var_mean(x, 1), F32, "r"),
    ("std_mean", lambda m, x: m.std_mean(x, dim=(0, 1), correction=0), F32 + ("bfloat16",), "r"),
    ("norm", lambda m, x: x.norm(), FLOATS, "r"),
    ("norm_dim", lambda m, x: x.norm(dim=1), FLOATS, "r"),
    ("norm_p1_keepdim", lambda m, x: x.norm(1, 1, True), F32, "r"),
    ("norm_p3", lambda m, x: m.norm(x, p=3, dim=(0, 2)), F32, "r"),
    ("norm_inf", lambda m, x: x.norm(p=inf, dim=-1), F32 + ("bfloat16",), "r"),
    ("norm_neginf", lambda m, x: x.norm(p=-inf), F32, "r"),
    ("norm_p0", lambda m, x: x.norm(0), F32, "r"),
    ("norm_fro_2dims", lambda m, x: x.norm(p="fro", dim=(0, 1)), F32, "r"),
    ("norm_dtype", lambda m, x: x.norm(3, dtype=m.float64), ("float32",), "r"),
    ("norm_nuc", lambda m, x: x.norm(p="nuc", dim=(0, 2), keepdim=True), F32, "r"),
    ("logsumexp", lambda m, x: x.logsumexp(1), NUM + ("bool",), "r"),
    ("logsumexp_tuple_keepdim", lambda m, x: m.logsumexp(x, (0, -1), keepdim=True), F32, "r"),
    ("cumsum", lambda m, x: x.cumsum(1), ACC, "r"),
    ("cumsum_neg_fn", lambda m, x: m.cumsum(x, -1), VAR, "r"),
    ("cumsum_dtype", lambda m, x: x.cumsum(dim=0, dtype=m.float64), NUMB, "r"),
    ("cumprod", lambda m, x: x.cumprod(2), ACC, "u"),
    ("cumprod_dtype", lambda m, x: x.cumprod(0, dtype=m.float32), INTS, "u"),
    ("all", lambda m, x: x.all(), ALL, "r"),
    ("any_dim", lambda m, x: x.any(1), NUMB + ("bool",), "r"),
    ("all_tuple_keepdim", lambda m, x: m.all(x, dim=(0, 2), keepdim=True), VAR + ("bool",), "r"),
    ("any_empty_tuple", lambda m, x: x.any(dim=()), F32, "r"),
    ("count_nonzero", lambda m, x: x.count_nonzero(), NUMB + ("bool",), "r"),
    ("count_nonzero_tuple", lambda m, x: m.count_nonzero(x, dim=(0, -1)), VAR, "r"),
    ("count_nonzero_list", lambda m, x: x.count_nonzero(dim=[1]), VAR, "r"),
    ("softmax_RED11", lambda m, x: x.softmax(dim=-1), FLOATS, "r"),
    ("softmax_dim0_RED11", lambda m, x: m.softmax(x, 0), F32, "r"),
    ("softmax_dtype_RED16", lambda m, x: x.softmax(1, dtype=m.float64), NUMB, "r"),
    ("log_softmax_RED18", lambda m, x: x.log_softmax(-1), FLOATS, "r"),
    ("log_softmax_dtype", lambda m, x: m.log_softmax(x, 1, m.float32), VAR, "r"),
    ("topk_RED19", lambda m, x: x.topk(k=3, dim=-1), NUM, "p"),
    ("topk_smallest_RED21", lambda m, x: x.topk(2, largest=False), NUMB, "p"),
    ("topk_dim0", lambda m, x: m.topk(x, 2, 0), VAR, "p"),
    ("topk_k1_RED24", lambda m, x: x.topk(1), VAR, "p"),
    ("topk_k0", lambda m, x: x.topk(0, 1), F32, "p"),
    ("sort", lambda m, x: x.sort(), NUM, "p"),
    ("sort_desc", lambda m, x: x.sort(0, True), NUMB, "p"),
    ("sort_stable_kw", lambda m, x: m.sort(x, stable=True, dim=1, descending=True), VAR, "p"),
    ("sort_ties_int", lambda m, x: x.sort(dim=1), INTS + ("bool",), "r"),
    ("sort_ties_desc", lambda m, x: x.sort(dim=1, descending=True), INTS, "r"),
    ("argsort", lambda m, x: x.argsort(1, True), NUMB, "p"),
    ("argsort_fn", lambda m, x: m.argsort(x, dim=0), VAR, "p"),
    ("median_all", lambda m, x: x.median(), NUM, "r"),
    ("median_dim", lambda m, x: x.median(1), NUMB, "p"),
    ("median_dim_keepdim", lambda m, x: m.median(x, -1, keepdim=True), VAR, "p"),
    ("median_odd", lambda m, x: x.median(dim=2), F32, "p"),
]
PARAMS = [pytest.param(fn, dt, kind, id=f"{cid}-{dt}") for cid, fn, dts, kind in CASES for dt in dts]


@pytest.mark.parametrize("fn,dtype,kind", PARAMS)
def test_values_dtypes_shapes(fn, dtype: str, kind: str) -> None:
    t, o = _pair(_input(kind, dtype), dtype)
    assert_same(_quiet(fn, ft, o), _quiet(fn, torch, t), dtype)


# ---- special values: ties, NaN, stability, empties, 0-d -------------------------------------------------
SPECIAL = [  # (id, data, fn)
    ("RED10_empty_sum", np.zeros(0, np.float32), lambda m, x: x.sum()),
    ("RED10_empty_mean", np.zeros(0, np.float32), lambda m, x: x.mean()),
    ("empty_prod", np.zeros(0, np.float32), lambda m, x: x.prod()),
    ("empty_int_sum", np.zeros(0, np.int64), lambda m, x: x.sum()),
    ("empty_all_any", np.zeros(0, np.float32), lambda m, x: (x.all(), x.any(), x.count_nonzero())),
    ("empty_norm_lse", np.zeros(0, np.float32), lambda m, x: (x.norm(), x.logsumexp(0))),
    ("empty_std", np.zeros(0, np.float32), lambda m, x: x.std()),
    ("empty_cumsum_softmax_sort", np.zeros(0, np.float32),
     lambda m, x: (x.cumsum(0), x.softmax(0), x.sort(), x.topk(0), x.median())),
    ("empty_rows_sum", np.zeros((3, 0), np.float32), lambda m, x: (x.sum(1), x.mean(0), x.prod(1))),
    ("empty_rows_max_dim", np.zeros((0, 3), np.float32), lambda m, x: (x.max(dim=1), x.amax(1), x.median(1))),
    ("empty_cols_median", np.zeros((2, 0), np.float32), lambda m, x: x.median(0)),
    ("RED17_softmax_stable", np.array([1000.0, 1000.0], np.float32), lambda m, x: (x.softmax(0), x.log_softmax(0))),
    ("softmax_neginf", np.array([-inf, -inf], np.float32), lambda m, x: (x.softmax(0), x.log_softmax(0))),
    ("lse_inf", np.array([[inf, inf], [-inf, -inf], [1.0, nan]], np.float32), lambda m, x: x.logsumexp(1)),
    ("lse_large", np.array([1000.0, 1000.0], np.float64), lambda m, x: x.logsumexp(0)),
    ("RED23_topk_ties", np.array([1.0, 3.0, 3.0, 2.0], np.float32), lambda m, x: x.topk(2)),
    ("RED30_ties", np.array([1.0, 3.0, 3.0], np.float32), lambda m, x: (x.max(0), x.argmax(), x.flip(0).min(0))),
    ("RED30_min_ties", np.array([3.0, 1.0, 1.0], np.float32), lambda m, x: (x.min(0), x.argmin())),
    ("RED31_nan", np.array([1.0, nan, 3.0, nan], np.float32),
     lambda m, x: (x.max(), x.argmax(), x.argmin(), x.max(0), x.min(0), x.amin(), x.amax(), x.aminmax())),
    ("nan_sort_topk", np.array([1.0, nan, 3.0, nan], np.float32),
     lambda m, x: (x.sort(), x.sort(descending=True), x.topk(2), x.topk(2, largest=False), x.argsort())),
    ("nan_median", np.array([[1.0, nan, 3.0, nan], [4.0, 2.0, 3.0, 1.0]], np.float32),
     lambda m, x: (x.median(), x.median(1), x[1].median())),
    ("nan_reductions", np.array([1.0, nan, 3.0], np.float32), lambda m, x: (x.sum(), x.norm(), x.std(), x.all())),
    ("signed_zero_sort", np.array([-0.0, 0.0, -0.0, -1.0], np.float32), lambda m, x: x.sort()),
    ("median_lower_even", np.array([4.0, 1.0, 3.0, 2.0], np.float32), lambda m, x: x.median()),
    ("var_dof_le_0", np.array([1.0, 2.0], np.float32), lambda m, x: (x.var(correction=2), x.var(correction=3))),
    ("std_single", np.array([5.0], np.float32), lambda m, x: (x.std(), x.var(correction=0))),
    ("zero_d", np.array(3.0, np.float32),
     lambda m, x: (x.sum(0), x.max(0), x.topk(1), x.topk(0), x.sort(), x.argsort(), x.cumsum(0), x.softmax(0),
                   x.median(0), x.argmax(0), x.norm(dim=0), x.all(0), x.count_nonzero(0), x.logsumexp(0),
                   x.amax(0), x.prod(0), x.min(-1), x.std())),
    ("complex_moments_norm", (np.arange(6) + 1j * np.arange(6)[::-1]).reshape(2, 3).astype(np.complex64),
     lambda m, x: (x.var(1), x.std(), m.var_mean(x, 0), x.norm(), x.norm(1, 1), x.sum(0), x.mean(), x.cumsum(1))),
    ("uint8_all_any", np.array([[1, 0, 3]], np.uint8), lambda m, x: (x.all(), x.any(1), x.sum(), x.prod())),
    ("bool_sum_PRO13", np.array([True, True, False]), lambda m, x: (x.sum(), x.cumsum(0), x.max(), x.max(0))),
    ("int8_sum_PRO13", np.array([100, 100, 100], np.int8), lambda m, x: (x.sum(), x.cumsum(0), x.prod())),
]


@pytest.mark.parametrize("data,fn", [pytest.param(d, f, id=i) for i, d, f in SPECIAL])
def test_special_values(data: np.ndarray, fn) -> None:
    t = torch.from_numpy(data.copy())
    o = ft.tensor(data)
    assert_same(_quiet(fn, ft, o), _quiet(fn, torch, t), str(t.dtype).removeprefix("torch."))


# ---- errors: same exception type and message as torch --------------------------------------------------
X2 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
I2 = np.array([[1, 2], [3, 4]])
ERRORS = [  # (id, data, fn, compare: 'exact' | 'first_line')
    ("RED04_sum_dim2", X2, lambda m, x: x.sum(dim=2)),
    ("RED05_sum_dim_neg3", X2, lambda m, x: x.sum(dim=-3)),
    ("RED06_sum_dup", X2, lambda m, x: x.sum(dim=(0, 0))),
    ("RED06_mean_dup", X2, lambda m, x: x.mean(dim=(0, 0))),
    ("RED06_amax_dup_neg", X2, lambda m, x: x.amax(dim=(0, -2))),
    ("RED06_var_dup", X2, lambda m, x: x.var(dim=(1, 1))),
    ("RED06_norm_dup", X2, lambda m, x: x.norm(dim=(0, 0))),
    ("RED06_all_dup", X2, lambda m, x: x.all(dim=(0, 0))),
    ("RED06_count_nonzero_dup", X2, lambda m, x: x.count_nonzero(dim=(0, 0))),
    ("RED06_logsumexp_dup", X2, lambda m, x: x.logsumexp((0, 0))),
    ("range_max", X2, lambda m, x: x.max(2)),
    ("range_min_fn", X2, lambda m, x: m.min(x, -3)),
    ("range_argmax", X2, lambda m, x: x.argmax(2)),
    ("range_amax", X2, lambda m, x: x.amax(2)),
    ("range_prod", X2, lambda m, x: x.prod(2)),
    ("range_softmax", X2, lambda m, x: x.softmax(2)),
    ("range_topk", X2, lambda m, x: x.topk(1, 2)),
    ("range_sort", X2, lambda m, x: x.sort(2)),
    ("range_cumsum", X2, lambda m, x: x.cumsum(2)),
    ("range_logsumexp", X2, lambda m, x: x.logsumexp(2)),
    ("range_median", X2, lambda m, x: x.median(-3)),
    ("range_0d", np.array(5.0, np.float32), lambda m, x: x.sum(1)),
    ("PRO12_mean_int", I2, lambda m, x: x.mean()),
    ("PRO12_mean_dtype_int", X2, lambda m, x: x.mean(dtype=m.int64)),
    ("var_int", I2, lambda m, x: x.var()),
    ("std_bool", I2 > 2, lambda m, x: x.std()),
    ("std_mean_int", I2, lambda m, x: m.std_mean(x)),
    ("norm_int", I2, lambda m, x: x.norm()),
    ("norm_bad_order", X2, lambda m, x: x.norm(p="abc")),
    ("norm_fro_3dims", X2[None], lambda m, x: x.norm(p="fro", dim=(0, 1, 2))),
    ("norm_nuc_1dim", X2, lambda m, x: x.norm(p="nuc", dim=1)),
    ("norm_nuc_half", X2.astype(np.float16), lambda m, x: x.norm(p="nuc")),
    ("RED13_softmax_no_dim", X2, lambda m, x: x.softmax()),
    ("RED13_torch_softmax_no_dim", X2, lambda m, x: m.softmax(x)),
    ("log_softmax_no_dim", X2, lambda m, x: x.log_softmax()),
    ("logsumexp_no_dim", X2, lambda m, x: m.logsumexp(x)),
    ("cumsum_no_dim", X2, lambda m, x: x.cumsum()),
    ("cumprod_no_dim", X2, lambda m, x: m.cumprod(x)),
    ("RED15_softmax_long", np.array([1, 2]), lambda m, x: x.softmax(0)),
    ("softmax_long_not_last", I2, lambda m, x: x.softmax(0)),
    ("log_softmax_long_last", I2, lambda m, x: x.log_softmax(1)),
    ("softmax_bool", I2 > 1, lambda m, x: x.softmax(0)),
    ("RED22_topk_k_big", X2, lambda m, x: x.topk(6)),
    ("topk_k_negative", X2, lambda m, x: x.topk(-1)),
    ("topk_bool", I2 > 1, lambda m, x: x.topk(1)),
    ("RED34_max_empty", np.zeros(0, np.float32), lambda m, x: x.max()),
    ("RED34_min_empty", np.zeros(0, np.float32), lambda m, x: m.min(x)),
    ("RED34_amax_empty", np.zeros(0, np.float32), lambda m, x: x.amax()),
    ("argmax_empty", np.zeros(0, np.float32), lambda m, x: x.argmax()),
    ("max_dim_empty", np.zeros((0, 3), np.float32), lambda m, x: x.max(dim=0)),
    ("amax_dim_empty", np.zeros((0, 3), np.float32), lambda m, x: x.amax(0)),
    ("argmax_dim_empty", np.zeros((0, 3), np.float32), lambda m, x: x.argmax(0)),
    ("median_dim_empty", np.zeros((0, 2), np.float32), lambda m, x: x.median(0)),
    ("aminmax_empty", np.zeros(0, np.float32), lambda m, x: x.aminmax()),
    ("argmax_bool", I2 > 1, lambda m, x: x.argmax()),
    ("median_bool", I2 > 1, lambda m, x: x.median()),
    ("RED35_max_tuple", X2, lambda m, x: x.max(dim=(0, 1))),
    ("RED35_min_list", X2, lambda m, x: x.min(dim=[0, 1])),
    ("RED35_torch_max_tuple", X2, lambda m, x: m.max(x, dim=(0, 1))),
    ("prod_tuple", X2, lambda m, x: x.prod(dim=(0, 1))),
    ("median_tuple", X2, lambda m, x: x.median(dim=(0, 1))),
    ("aminmax_tuple", X2, lambda m, x: x.aminmax(dim=(0, 1))),
]


@pytest.mark.parametrize("data,fn", [pytest.param(d, f, id=i) for i, d, f in ERRORS])
def test_errors_match_torch(data: np.ndarray, fn) -> None:
    with pytest.raises(Exception) as theirs:
        fn(torch, torch.from_numpy(np.array(data)))
    with pytest.raises(type(theirs.value), match="^" + re.escape(str(theirs.value)) + "$"):
        fn(ft, ft.tensor(np.array(data)))


def test_red04_message_literal() -> None:
    """RED-04 and RED-34 wording, spelled out (not only compared with torch)."""
    x = ft.tensor(X2)
    with pytest.raises(IndexError, match=re.escape("Dimension out of range (expected to be in range of [-2, 1], but "
                                                   "got 2)")):
        x.sum(dim=2)
    with pytest.raises(RuntimeError, match=re.escape("max(): Expected reduction dim to be specified for "
                                                     "input.numel() == 0. Specify the reduction dim with the 'dim' "
                                                     "argument.")):
        ft.zeros(0).max()
    with pytest.raises(TypeError, match=re.escape('softmax() missing 1 required positional arguments: "dim"')):
        x.softmax()
    with pytest.raises(NotImplementedError, match=re.escape('"softmax_lastdim_kernel_impl" not implemented for '
                                                            "'Long'")):
        ft.tensor([1, 2]).softmax(0)
    with pytest.raises(RuntimeError, match="^selected index k out of range$"):
        ft.tensor(X2).topk(6)


def test_var_dof_warning() -> None:
    with pytest.warns(UserWarning, match=re.escape("var(): degrees of freedom is <= 0")):
        ft.tensor([1.0, 2.0]).var(correction=2)
    with pytest.warns(UserWarning, match=re.escape("std(): degrees of freedom is <= 0")):
        ft.tensor([5.0]).std()


# ---- named results (RED-20) -------------------------------------------------------------------------
T5 = np.array([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]], np.float32)
NAMED = {
    "max_RED27": lambda m, x: x.max(dim=1),
    "max_keepdim_RED28": lambda m, x: x.max(1, keepdim=True),
    "min_RED29": lambda m, x: x.min(dim=0),
    "topk_RED19": lambda m, x: x.topk(k=3, dim=-1),
    "sort": lambda m, x: m.sort(x, 0, True),
    "median": lambda m, x: x.median(1),
    "aminmax": lambda m, x: x.aminmax(dim=0),
    "max_int": lambda m, x: x.long().max(1),
}


@pytest.mark.parametrize("fn", list(NAMED.values()), ids=list(NAMED))
def test_named_result_repr_and_tuple(fn) -> None:
    theirs, ours = fn(torch, torch.from_numpy(T5)), fn(ft, ft.tensor(T5))
    assert repr(ours) == repr(theirs)
    assert isinstance(ours, tuple) and len(ours) == 2 and ours.n_fields == 2
    assert type(ours).__name__ == type(theirs).__name__
    for i, f in enumerate(("values", "indices") if hasattr(theirs, "values") else ("min", "max")):
        assert getattr(ours, f) is ours[i]
    first, second = ours
    assert first is ours[0] and second is ours[1]
    assert_same(ours, theirs, "float32")


def test_named_result_fields() -> None:
    r = ft.tensor(T5).topk(2)
    assert r.values is r[0] and r.indices is r[1]
    assert str(r.indices.dtype) == "torch.int64"
    mm = ft.tensor(T5).aminmax()
    assert mm.min is mm[0] and mm.max is mm[1]
    assert type(r) is ft.return_types.topk


def test_max_out_tuple_and_builtin_fallback() -> None:
    x = ft.tensor(T5)
    v, i = ft.zeros(1), ft.zeros(1, dtype=ft.int64)
    r = ft.max(x, 1, out=(v, i))
    np.testing.assert_array_equal(_host(v), [5.0, 9.0])
    np.testing.assert_array_equal(_host(i), [4, 0])
    assert r.values is v
    # functorch_lite's own namespace shadows builtins.max; non-tensor calls fall back to it
    assert ft.max(2, 3) == 3 and ft.min(2, 3) == 2


def test_inplace_cumsum() -> None:
    t, o = _pair(X2, "float32")
    t.cumsum_(1)
    o.cumsum_(1)
    assert_same(o, t, "float32")


# ---- gradients and grad_fn names ----------------------------------------------------------------------
def _first(r):
    return r[0] if isinstance(r, tuple) else r


GRADS = [  # (id, input kind, fn) on float64; ties input 't' has repeated values
    ("sum_all", "r", lambda m, x: x.sum()),
    ("sum_dim", "r", lambda m, x: x.sum(1)),
    ("sum_empty_tuple", "r", lambda m, x: x.sum(dim=())),
    ("mean_all", "r", lambda m, x: x.mean()),
    ("mean_dims", "r", lambda m, x: x.mean((0, 2))),
    ("prod_all", "u", lambda m, x: x.prod()),
    ("prod_dim_zeros", "z", lambda m, x: x.prod(1)),
    ("max_all_ties", "t", lambda m, x: x.max()),
    ("min_all", "r", lambda m, x: x.min()),
    ("max_dim_ties", "t", lambda m, x: x.max(1)),
    ("min_dim", "r", lambda m, x: x.min(-1, keepdim=True)),
    ("amax_ties", "t", lambda m, x: x.amax((0, 2))),
    ("amin", "r", lambda m, x: x.amin(1)),
    ("std", "r", lambda m, x: x.std(1)),
    ("var_correction0", "r", lambda m, x: x.var(dim=(0, 2), correction=0)),
    ("std_mean", "r", lambda m, x: m.std_mean(x, 1)),
    ("norm", "r", lambda m, x: x.norm()),
    ("norm_dim", "r", lambda m, x: x.norm(dim=1)),
    ("norm_p1", "r", lambda m, x: x.norm(1, dim=2)),
    ("norm_p3", "r", lambda m, x: x.norm(3)),
    ("norm_inf", "r", lambda m, x: x.norm(inf, dim=0)),
    ("norm_zero_rows", "0", lambda m, x: x.norm(dim=1)),
    ("norm_nuc", "r", lambda m, x: x[0].norm(p="nuc")),
    ("logsumexp", "r", lambda m, x: x.logsumexp(1)),
    ("softmax", "r", lambda m, x: x.softmax(-1)),
    ("log_softmax", "r", lambda m, x: x.log_softmax(0)),
    ("softmax_dtype", "r", lambda m, x: x.softmax(1, dtype=m.float32)),
    ("cumsum", "r", lambda m, x: x.cumsum(2)),
    ("cumprod_zeros", "z", lambda m, x: x.cumprod(1)),
    ("topk_values", "p", lambda m, x: x.topk(2, dim=1)),
    ("sort_values", "p", lambda m, x: x.sort(dim=2, descending=True)),
    ("median_all_ties", "t", lambda m, x: x.median()),
    ("median_dim", "p", lambda m, x: x.median(1)),
    ("aminmax", "r", lambda m, x: x.aminmax(dim=0)),
]
_z = INPUTS["u"]["f"].copy()
_z[0, 1, 2] = _z[0, 2, 2] = _z[1, 0, 3] = 0.0
GRAD_INPUTS = {"r": INPUTS["r"]["f"], "u": INPUTS["u"]["f"], "p": INPUTS["p"]["f"], "z": _z,
               "t": INPUTS["r"]["i"].astype(np.float64), "0": np.zeros((3, 4, 5))}


def _loss(m, out):
    """Weighted sum of every floating output, so each gradient entry is informative."""
    outs = out if isinstance(out, tuple) else (out,)
    total = None
    for k, o in enumerate(outs):
        if not o.is_floating_point():
            continue
        w = np.random.default_rng(k).uniform(0.5, 1.5, tuple(o.shape))
        w = (torch.from_numpy(w) if m is torch else ft.tensor(w)).to(o.dtype)
        term = (o * w).sum()
        total = term if total is None else total + term
    return total


@pytest.mark.parametrize("kind,fn", [pytest.param(k, f, id=i) for i, k, f in GRADS])
def test_gradients_match_torch(kind: str, fn) -> None:
    data = GRAD_INPUTS[kind]
    xt = torch.tensor(data, requires_grad=True)
    xo = ft.tensor(data, requires_grad=True)
    rt, ro = fn(torch, xt), fn(ft, xo)
    assert type(_first(ro).grad_fn).__name__ == type(_first(rt).grad_fn).__name__
    _loss(torch, rt).backward()
    _loss(ft, ro).backward()
    single = _first(rt).dtype == torch.float32  # dtype= casts: the math ran in float32
    np.testing.assert_allclose(_host(xo.grad), _host(xt.grad), rtol=1e-5 if single else 1e-7,
                               atol=1e-6 if single else 1e-9)


GRAD_FN_NAMES = {  # spec §6.6 rows plus the other reductions
    "sum": lambda m, x: x.sum(), "sum_dim": lambda m, x: x.sum(0), "mean": lambda m, x: x.mean(),
    "mean_dim": lambda m, x: x.mean(dim=-1), "prod": lambda m, x: x.prod(), "prod_dim": lambda m, x: x.prod(1),
    "max": lambda m, x: x.max(), "max_dim": lambda m, x: x.max(dim=1).values,
    "min_dim": lambda m, x: x.min(dim=1).values, "amax": lambda m, x: x.amax(1), "amin": lambda m, x: x.amin(),
    "var": lambda m, x: x.var(), "std": lambda m, x: x.std(1), "var_mean": lambda m, x: m.var_mean(x)[1],
    "norm": lambda m, x: x.norm(), "norm_nuc": lambda m, x: x.norm(p="nuc"), "cumsum": lambda m, x: x.cumsum(0),
    "cumprod": lambda m, x: x.cumprod(0), "softmax": lambda m, x: x.softmax(-1),
    "log_softmax": lambda m, x: m.log_softmax(x, 1), "logsumexp": lambda m, x: x.logsumexp(0),
    "topk": lambda m, x: x.topk(2).values, "sort": lambda m, x: x.sort().values, "median": lambda m, x: x.median(),
    "median_dim": lambda m, x: x.median(0).values, "aminmax": lambda m, x: x.aminmax()[0],
    "sum_dtype": lambda m, x: x.sum(dtype=m.float64),
}


@pytest.mark.parametrize("fn", list(GRAD_FN_NAMES.values()), ids=list(GRAD_FN_NAMES))
def test_grad_fn_names(fn) -> None:
    data = INPUTS["r"]["f"][0].astype(np.float32)
    rt = fn(torch, torch.tensor(data, requires_grad=True))
    ro = fn(ft, ft.tensor(data, requires_grad=True))
    assert type(ro.grad_fn).__name__ == type(rt.grad_fn).__name__


def test_index_outputs_do_not_require_grad() -> None:
    x = ft.tensor(T5, requires_grad=True)
    r = x.max(1)
    assert r.values.requires_grad and not r.indices.requires_grad and r.indices.grad_fn is None
    assert not x.argmax().requires_grad and not x.all().requires_grad
