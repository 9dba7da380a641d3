"""Parity with torch 2.13 for set / search / reduction findings of a red team: histogram's and histogramdd's bin
edges are torch's linspace (values near an edge land in torch's bin) and a non-finite range is torch's error; a
sum / mean / nansum / cumsum accumulates from +0.0 (a -0.0 alone gives +0.0); where takes a uint8 condition with
torch's deprecation warning; split takes tensors as sizes; a one-element integer tensor works as a ``dim`` (gather,
scatter, index_select, take_along_dim, movedim) or as kthvalue's ``k`` / histc's ``bins``; isin's keyword names of
its three overloads."""
import math

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same, warnings_of


# ---- histogram / histogramdd ------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.histogram(m.tensor([-2.6, 2.4, -0.29230758]), bins=13),
    lambda m: m.histogram(m.tensor([-2.6, 2.4, -0.29230758], dtype=m.float64), bins=13),
    lambda m: m.histogram(m.tensor([0.1, 0.7, 0.3]), bins=7, range=(0.1, 0.8)),
    lambda m: m.histogram(m.tensor([2., 2.]), bins=3),
    lambda m: m.histogram(m.tensor([]), bins=4),
    lambda m: m.histogramdd(m.tensor([[-2.6, 0.], [2.4, 1.], [-0.29230758, 0.3]]), bins=[13, 5]),
    lambda m: m.histogramdd(m.tensor([[-2.6, 0.], [2.4, 1.]]), bins=3, range=[-3., 3., 0., 1.]),
], ids=["f32", "f64", "range", "equal", "empty", "dd", "dd_range"])
def test_histogram_edges_are_torch_linspace(case):
    same(lambda m: tuple(case(m)))


def test_histogram_random_values_land_in_torch_bins():
    rng = np.random.RandomState(0)
    for bins in (7, 13, 29):
        x = rng.randn(200).astype(np.float32)
        same(lambda m: tuple(m.histogram(m.tensor(x), bins=bins)))
        same(lambda m: tuple(m.histogramdd(m.tensor(x.reshape(100, 2)), bins=bins)))


@pytest.mark.parametrize("case", [
    lambda m: m.histogram(m.tensor([1., float("nan"), 2.]), bins=2),
    lambda m: m.histogram(m.tensor([1., float("inf")]), bins=2),
    lambda m: m.histogram(m.tensor([1., 2.]), bins=2, range=(0., float("inf"))),
    lambda m: m.histogram(m.tensor([1., 2.]), bins=2, range=(float("nan"), 1.)),
    lambda m: m.histogram(m.tensor([1., 2.]), bins=2, range=(3., 1.)),
    lambda m: m.histogramdd(m.tensor([[1., float("nan")], [2., 3.]]), bins=2),
    lambda m: m.histogramdd(m.tensor([[1., 2.], [2., 3.]]), bins=2, range=[0., 1., float("-inf"), 2.]),
], ids=["nan", "inf", "inf_range", "nan_range", "min_gt_max", "dd_nan", "dd_inf_range"])
def test_histogram_non_finite_range_is_torch_error(case):
    assert same(case)[0] == "RuntimeError"


# ---- a -0.0 summed alone is +0.0 --------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (4, 1), (3,)])
def test_negative_zero_sums_from_positive_zero(dt, shape):
    def signs(m):
        t = m.full(shape, -0.0, dtype=getattr(m, dt))
        rs = [t.sum(), t.sum(0) if shape else t.sum(0), t.sum(()), t.nansum(), t.mean(), t.sum(dtype=m.float64),
              t.prod(), t.amax(), t.cumsum(0) if shape else t.cumsum(0), t.nanmean(), t.sum(-1, keepdim=True)]
        return [[math.copysign(1., v) for v in r.double().reshape(-1).tolist()] for r in rs]
    assert signs(ft) == signs(torch)


def test_negative_zero_complex_sum_and_grad():
    def case(m):
        z = m.tensor(-0.0 - 0.0j)
        x = m.zeros((), requires_grad=True)
        y = x.sum()
        y.backward()
        return repr(z.sum().item()), repr(z.mean().item()), x.grad.item(), type(y.grad_fn).__name__
    assert case(ft) == case(torch)


# ---- where with a uint8 condition -------------------------------------------------------------------------------
def test_where_uint8_condition_warns_and_selects():
    c = [1, 0, 2]
    fn = lambda m: m.where(m.tensor(c, dtype=m.uint8), m.tensor([1., 2., 3.]), 0.)  # noqa: E731
    assert warnings_of(ft, fn) == warnings_of(torch, fn)
    assert warnings_of(torch, fn)[0][1].endswith("TensorCompare.cpp:621.)")
    same(lambda m: m.where(m.tensor(c, dtype=m.uint8), m.tensor([1., 2., 3.], requires_grad=True), 0.))
    for dt in ("int8", "int64", "float32"):
        same(lambda m: m.where(m.tensor(c, dtype=getattr(m, dt)), 1., 2.))


# ---- split with tensor sizes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.arange(6.).split(list(m.tensor([2, 3, 1]))),
    lambda m: m.arange(6.).split(m.tensor(4)),
    lambda m: m.arange(6.).split(m.tensor([4])),
    lambda m: m.arange(6.).split(m.tensor([2, 3, 1])),
    lambda m: m.split(m.arange(6.), m.tensor([2, 4])),
    lambda m: m.split_with_sizes(m.arange(6.), m.tensor([2, 4])),
    lambda m: m.arange(6.).split_with_sizes(m.tensor([2, 4])),
    lambda m: m.arange(6.).split_with_sizes(tuple(m.tensor([2, 4]))),
    lambda m: m.arange(6.).split([2., 4.]),
    lambda m: m.arange(6.).split_with_sizes([2., 4.]),
    lambda m: m.arange(6.).split([2, m.tensor(4.)]),
    lambda m: m.split(m.arange(6.), [m.tensor(1), m.tensor(5)], dim=m.tensor(0)),
], ids=["list0d", "0d", "1elem", "1d", "fn_1d", "sws_fn", "sws_method", "sws_tuple", "floats", "sws_floats",
        "float_tensor", "dim_tensor"])
def test_split_tensor_sizes(case):
    same(case)


# ---- a one-element integer tensor as dim / k / bins ------------------------------------------------------------
_Y = [[3., 1., 2.], [0., 5., 4.]]


@pytest.mark.parametrize("case", [
    lambda m: m.tensor(_Y).gather(m.tensor(1), m.tensor([[0], [1]])),
    lambda m: m.tensor(_Y).index_select(m.tensor(1), m.tensor([0])),
    lambda m: m.zeros(2, 3).scatter(m.tensor(1), m.tensor([[0], [1]]), 1.),
    lambda m: m.zeros(2, 3).scatter_add(m.tensor(1), m.tensor([[0], [1]]), m.ones(2, 1)),
    lambda m: m.zeros(2, 3).index_add(m.tensor(1), m.tensor([0]), m.ones(2, 1)),
    lambda m: m.zeros(2, 3).index_fill(m.tensor(1), m.tensor([0]), 2.),
    lambda m: m.take_along_dim(m.tensor(_Y), m.tensor([[0], [1]]), m.tensor(1)),
    lambda m: m.tensor(_Y).kthvalue(m.tensor(2)),
    lambda m: m.tensor(_Y).kthvalue(2, m.tensor(0)),
    lambda m: m.kthvalue(m.tensor(_Y), m.tensor(2.)),
    lambda m: m.histc(m.tensor(_Y), bins=m.tensor(2)),
    lambda m: m.histc(m.tensor(_Y), bins=m.tensor(2.)),
    lambda m: m.tensor(_Y).movedim(m.tensor(0), 1),
    lambda m: m.tensor(_Y).movedim(0, m.tensor(-1)),
], ids=["gather", "index_select", "scatter", "scatter_add", "index_add", "index_fill", "take_along_dim", "kth_k",
        "kth_dim", "kth_float_k", "histc", "histc_float", "movedim_src", "movedim_dst"])
def test_tensor_as_index_argument(case):
    same(lambda m: (lambda r: tuple(r) if isinstance(r, tuple) else r)(case(m)))


# ---- isin's overloads -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.isin(m.tensor(_Y), test_element=1.),
    lambda m: m.isin(elements=m.tensor(_Y), test_element=3),
    lambda m: m.isin(element=3, test_elements=m.tensor([1, 3])),
    lambda m: m.isin(3, test_elements=m.tensor([1, 3])),
    lambda m: m.isin(elements=m.tensor(_Y), test_elements=m.tensor([1, 3]), invert=True),
    lambda m: m.isin(m.tensor(_Y), m.tensor([1, 3]), out=m.empty(2, 3, dtype=m.bool)),
    lambda m: m.isin(m.tensor(_Y), test_element=m.tensor([1, 3])),
    lambda m: m.isin(m.tensor(_Y), test_elements=3),
    lambda m: m.isin(2, 3),
], ids=["test_element", "kw_elements", "element", "pos_element", "kw_both", "out", "bad_test_element",
        "bad_test_elements", "two_numbers"])
def test_isin_overload_keywords(case):
    out = same(case)
    if out[0] == "TypeError":  # (the first line: torch lists its overloads after it)
        assert out[1].startswith("isin() received an invalid combination of arguments")
