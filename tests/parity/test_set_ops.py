"""Parity of unique / unique_consecutive, bincount, histc, quantile / nanquantile, searchsorted / bucketize, cdist and
Tensor.fill_diagonal_ against real PyTorch: values, dtypes, shapes, grad_fn names, gradients, errors; and their
behaviour under ``functorch_lite.compile`` (the data-dependent ones fall back to eager with a graph-break warning,
the others compile)."""
import math
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.ops._dispatch import DataDependentError

R = np.random.default_rng(11)
NAN = float("nan")


def _np(t):
    return np.asarray(t.detach().numpy())


def _same(ours, theirs, tol=1e-6):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) == isinstance(theirs, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t, tol)
        return
    assert isinstance(ours, ft.Tensor), type(ours)
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    tn = None if theirs.grad_fn is None else type(theirs.grad_fn).__name__
    on = None if ours.grad_fn is None else type(ours.grad_fn).__name__
    assert on == tn, (on, tn)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=tol, atol=tol, equal_nan=True)


def both(fn, tol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, f = fn(torch), fn(ft)
    _same(f, t, tol)
    return f


def raises_both(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            fn(torch)
        with pytest.raises(Exception) as fe:
            fn(ft)
    assert type(fe.value).__name__ == type(te.value).__name__ and str(fe.value) == str(te.value), (fe.value, te.value)


def grads_both(fn, arrays, tol=1e-10):
    """Values and gradients (float64) of ``fn(mod, *tensors)``."""
    res = []
    for m in (torch, ft):
        xs = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
        out = fn(m, *xs)
        out.backward(m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))))
        res.append((out, [x.grad for x in xs]))
    (t, tg), (f, fg) = res
    _same(f, t, tol)
    for a, b in zip(fg, tg):
        np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


X = np.array([3, 1, 3, 2, 5, 0, 5, 1])
N200, N34, B423, B153 = (R.standard_normal(s) for s in ((200,), (3, 4), (4, 2, 3), (1, 5, 3)))
M = np.array([[3, 1], [3, 1], [2, 2], [0, 7], [2, 2]])

VALUES = {
    "unique": lambda m: m.unique(m.tensor(X)),
    "unique_sorted_false": lambda m: m.unique(m.tensor(X), sorted=False),
    "unique_all": lambda m: m.unique(m.tensor(X), return_inverse=True, return_counts=True),
    "unique_2d_inverse": lambda m: m.tensor(M).unique(return_inverse=True),
    "unique_dim0": lambda m: m.unique(m.tensor(M), dim=0, return_inverse=True, return_counts=True),
    "unique_dim1": lambda m: m.unique(m.tensor(M.T), dim=1, return_inverse=True),
    "unique_nan": lambda m: m.unique(m.tensor([3.0, NAN, 1, NAN, 3]), return_counts=True),
    "unique_bool": lambda m: m.unique(m.tensor([True, False, True])),
    "unique_0d": lambda m: m.unique(m.tensor(5), return_inverse=True, return_counts=True),
    "unique_empty": lambda m: m.unique(m.zeros(0, 3), return_inverse=True, return_counts=True),
    "unique_empty_dim": lambda m: m.unique(m.zeros(0, 3), dim=0, return_counts=True),
    "unique_grad_input": lambda m: m.unique(m.tensor([3.0, 1, 3], requires_grad=True)).detach(),
    "unique_consecutive": lambda m: m.unique_consecutive(m.tensor([1, 1, 2, 2, 3, 1, 1]), return_inverse=True,
                                                         return_counts=True),
    "unique_consecutive_dim": lambda m: m.tensor(M).unique_consecutive(dim=0, return_counts=True),
    "unique_consecutive_flat": lambda m: m.unique_consecutive(m.tensor(M), return_counts=True),
    "unique_consecutive_0d": lambda m: m.unique_consecutive(m.tensor(5), return_inverse=True),
    "bincount": lambda m: m.bincount(m.tensor(X)),
    "bincount_minlength": lambda m: m.tensor([0, 1, 1, 3]).bincount(minlength=6),
    "bincount_weights": lambda m: m.bincount(m.tensor([0, 1, 1, 3]), weights=m.tensor([1.0, 2, 3, 4])),
    "bincount_weights_f64": lambda m: m.bincount(m.tensor([0, 1, 1, 3]), m.tensor([1.0, 2, 3, 4], dtype=m.float64)),
    "bincount_weights_int": lambda m: m.bincount(m.tensor([0, 1, 1, 3]), weights=m.tensor([1, 2, 3, 4])),
    "bincount_weights_half": lambda m: m.bincount(m.tensor([0, 2]), m.tensor([1.5, 2], dtype=m.float16)),
    "bincount_int32": lambda m: m.bincount(m.tensor([0, 1, 1, 3], dtype=m.int32)),
    "bincount_uint8": lambda m: m.bincount(m.tensor([0, 1, 1, 3], dtype=m.uint8)),
    "bincount_empty": lambda m: m.bincount(m.tensor([], dtype=m.int64), minlength=3),
    "bincount_empty_weights": lambda m: m.bincount(m.tensor([], dtype=m.int64), m.tensor([]), minlength=2),
    "histc": lambda m: m.histc(m.tensor([0.0, 1, 1, 2]), bins=3, min=0, max=2),
    "histc_auto": lambda m: m.histc(m.tensor([0.0, 1, 1, 2, 5, -1]), bins=4),
    "histc_outside": lambda m: m.histc(m.tensor([0.0, 1, 1, 2, 5, -1, NAN, math.inf]), bins=4, min=0, max=2),
    "histc_flat": lambda m: m.tensor([1.0, 1]).histc(bins=4),
    "histc_equal_bounds": lambda m: m.histc(m.tensor([0.0, 1, 4]), bins=4, min=3, max=3),
    "histc_edges": lambda m: m.histc(m.tensor([0.0, 0.999999, 1, 2, 0.1, 0.3, 0.7, 2.9999]), bins=3, min=0, max=3),
    "histc_f64": lambda m: m.histc(m.tensor(N200), bins=7, min=-1.3, max=1.1),
    "histc_f16": lambda m: m.histc(m.tensor([0.0, 1, 2, 2.5], dtype=m.float16), bins=3),
    "histc_2d_empty": lambda m: (m.histc(m.tensor([[0.0, 1], [2, 3]]), 2), m.histc(m.zeros(0), bins=2)),
    "histc_grad_input": lambda m: m.histc(m.tensor([0.0, 1, 2], requires_grad=True), bins=2),
    "quantile": lambda m: m.quantile(m.arange(5.0), 0.25),
    "quantile_q_tensor": lambda m: m.quantile(m.arange(5.0), m.tensor([0.25, 0.5, 1.0])),
    "quantile_dim_keepdim": lambda m: m.quantile(m.arange(6.0).reshape(2, 3), m.tensor([0.25, 0.5]), dim=1,
                                                 keepdim=True),
    "quantile_all_keepdim": lambda m: m.arange(6.0).reshape(2, 3).quantile(0.3, keepdim=True),
    "quantile_0d_q": lambda m: m.quantile(m.arange(6.0).reshape(2, 3), m.tensor(0.3), dim=0),
    "quantile_0d_input": lambda m: (m.quantile(m.tensor(3.0), 0.3, dim=0), m.quantile(m.tensor(3.0), 0.3)),
    "quantile_nan": lambda m: m.quantile(m.tensor([[1.0, NAN, 3], [1, 2, 3]]), 0.5, dim=1),
    "nanquantile": lambda m: m.nanquantile(m.tensor([[1.0, NAN, 3], [NAN, NAN, NAN]]), 0.5, dim=1),
    "nanquantile_method": lambda m: m.tensor([1.0, NAN, 3, 4]).nanquantile(m.tensor([0.1, 0.9])),
    "quantile_f64": lambda m: m.quantile(m.tensor(N34), 0.7, dim=-1),
    "searchsorted": lambda m: m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([2.0, 6, 3, 1, 0])),
    "searchsorted_right": lambda m: m.searchsorted(m.tensor([1.0, 3, 3, 5]), m.tensor([3.0, 1]), right=True),
    "searchsorted_side": lambda m: m.searchsorted(m.tensor([1.0, 3, 3, 5]), m.tensor([3.0, 1]), side="right"),
    "searchsorted_int32": lambda m: m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([2.0, 6]), out_int32=True),
    "searchsorted_scalar": lambda m: (m.searchsorted(m.tensor([1.0, 3, 5]), 3),
                                      m.searchsorted(m.tensor([1.0, 3, 5]), 3.5)),
    "searchsorted_sorter": lambda m: m.searchsorted(m.tensor([5.0, 1, 3]), m.tensor([2.0, 6, 3]),
                                                    sorter=m.tensor([1, 2, 0])),
    "searchsorted_nd": lambda m: m.searchsorted(m.tensor([[1.0, 3, 5], [0, 2, 4]]), m.tensor([[2.0, 6], [3, 1]])),
    "searchsorted_1d_nd": lambda m: m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([[2.0, 6], [3, 1]])),
    "searchsorted_mixed": lambda m: (m.searchsorted(m.tensor([1, 3, 5]), m.tensor([2.5, 6])),
                                     m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([2, 6]))),
    "searchsorted_nan": lambda m: (m.searchsorted(m.tensor([1.0, NAN, 5]), m.tensor([NAN, 6, 0])),
                                   m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([NAN, 2]), right=True)),
    "searchsorted_unsorted": lambda m: m.searchsorted(m.tensor([5.0, 1, 4, 2, 3]), m.tensor([0.0, 2, 3, 6])),
    "searchsorted_uint8": lambda m: m.searchsorted(m.tensor([1, 3, 5], dtype=m.uint8),
                                                   m.tensor([2, 6], dtype=m.uint8)),
    "bucketize": lambda m: m.bucketize(m.tensor([[2.0, 6, 3]]), m.tensor([1.0, 3, 5])),
    "bucketize_right_int32": lambda m: m.bucketize(m.tensor([2, 6, 3]), m.tensor([1.0, 3, 5]), right=True,
                                                   out_int32=True),
    "bucketize_scalar": lambda m: m.bucketize(3, m.tensor([1.0, 3, 5])),
    "cdist": lambda m: m.cdist(m.zeros(2, 3), m.ones(1, 3)),
    "cdist_empty": lambda m: (m.cdist(m.zeros(0, 3), m.ones(2, 3)), m.cdist(m.zeros(2, 0), m.ones(2, 0))),
    "cdist_batch": lambda m: m.cdist(m.tensor(B423), m.tensor(B153)),
    "fill_diagonal": lambda m: m.zeros(3, 5).fill_diagonal_(1.0),
    "fill_diagonal_tall": lambda m: m.zeros(7, 3).fill_diagonal_(2.0),
    "fill_diagonal_wrap": lambda m: m.zeros(11, 3).fill_diagonal_(2.0, wrap=True),
    "fill_diagonal_wrap_short": lambda m: m.zeros(4, 3).fill_diagonal_(2.0, wrap=True),
    "fill_diagonal_3d": lambda m: m.zeros(3, 3, 3).fill_diagonal_(2),
    "fill_diagonal_int": lambda m: m.zeros(3, 3, dtype=m.int64).fill_diagonal_(2.5),
    "fill_diagonal_bool": lambda m: m.zeros(3, 3, dtype=m.bool).fill_diagonal_(2),
    "fill_diagonal_tensor": lambda m: m.zeros(3, 3).fill_diagonal_(m.tensor(2.0)),
    "fill_diagonal_transposed": lambda m: (lambda z: (z.t().fill_diagonal_(2.0), z))(m.zeros(2, 3)),
    "fill_diagonal_grad": lambda m: m.zeros(3, 3, requires_grad=True).clone().fill_diagonal_(2),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_matches_torch(name):
    both(VALUES[name])


def test_fill_diagonal_version_and_view():
    for m in (torch, ft):
        z = m.zeros(3, 3)
        d = z.fill_diagonal_(1.0)
        assert d is z and z._version == 1
    w = ft.zeros(5, 2).t()  # a non-contiguous tall matrix with wrap: refused (PyTorch writes by memory layout)
    assert ft.zeros(2, 5).t().fill_diagonal_(1.0, wrap=False).sum().item() == 2
    with pytest.raises(RuntimeError, match="wrap=True"):
        ft.zeros(2, 7).t().fill_diagonal_(1.0, wrap=True)
    assert w.shape == (2, 5)


INTERP = ("linear", "lower", "higher", "nearest", "midpoint")


@pytest.mark.parametrize("interpolation", INTERP)
def test_quantile_interpolation_and_grad(interpolation):
    x = R.permutation(20).reshape(4, 5) + R.uniform(0, 0.5, (4, 5))
    for q in (0.375, 0.5, 0.625, 0.1):
        both(lambda m: m.quantile(m.tensor(x), q, dim=1, interpolation=interpolation), 1e-12)
        both(lambda m: m.quantile(m.tensor(x, dtype=m.float32), q, interpolation=interpolation))
    grads_both(lambda m, a: m.quantile(a, m.tensor([0.2, 0.65], dtype=m.float64), dim=0,
                                       interpolation=interpolation), [x])
    grads_both(lambda m, a: m.nanquantile(a, 0.3, interpolation=interpolation), [np.where(x > 15, NAN, x)])


def test_cdist_values_and_grads():
    a, b = R.standard_normal((5, 3)), R.standard_normal((4, 3))
    for p in (2.0, 1.0, 0.0, math.inf, 3.0, 0.5):
        grads_both(lambda m, x, y: m.cdist(x, y, p=p), [a, b])
    big = R.standard_normal((30, 3))  # > 25 rows: PyTorch's matmul form (ViewBackward0)
    grads_both(lambda m, x, y: m.cdist(x, y), [big, b], tol=1e-8)
    grads_both(lambda m, x, y: m.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), [a, b], tol=1e-8)
    b[1] = a[2]  # a zero distance: zero gradient on the direct path (PyTorch's cdist backward)
    grads_both(lambda m, x, y: m.cdist(x, y), [a, b])
    grads_both(lambda m, x, y: m.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist"), [big, b])
    both(lambda m: m.cdist(m.tensor(big, dtype=m.float32), m.tensor(b, dtype=m.float32)), 1e-5)


ERRORS = {
    "unique_0d_dim": lambda m: m.unique(m.tensor(5), dim=0),
    "unique_zero_dims": lambda m: m.unique(m.zeros(2, 0), dim=0, return_counts=True),
    "unique_dim_range": lambda m: m.unique(m.ones(2, 3), dim=3),
    "bincount_bool": lambda m: m.bincount(m.tensor([True, False])),
    "bincount_float": lambda m: m.bincount(m.tensor([0.0, 1])),
    "bincount_negative": lambda m: m.bincount(m.tensor([-1, 1])),
    "bincount_2d": lambda m: m.bincount(m.tensor([[0, 1]])),
    "bincount_minlength": lambda m: m.bincount(m.tensor([0, 1]), minlength=-1),
    "bincount_weights": lambda m: m.bincount(m.tensor([0, 1]), weights=m.tensor([1.0, 2, 3])),
    "histc_int": lambda m: m.histc(m.tensor([0, 1, 2]), bins=4),
    "histc_range": lambda m: m.histc(m.tensor([0.0, 1, 2]), bins=4, min=3, max=1),
    "histc_bins": lambda m: m.histc(m.tensor([0.0, 1, 2]), bins=0),
    "histc_bins_float": lambda m: m.histc(m.tensor([0.0, 1, 2]), bins=2.5),
    "histc_nan": lambda m: m.histc(m.tensor([0.0, 1, NAN]), bins=2),
    "histc_inf": lambda m: m.histc(m.tensor([0.0, 1, math.inf]), bins=2),
    "histc_inf_max": lambda m: m.histc(m.tensor([0.0, 1, 2]), bins=2, min=0, max=math.inf),
    "quantile_interp": lambda m: m.quantile(m.arange(5.0), 0.3, interpolation="foo"),
    "quantile_q_range": lambda m: m.quantile(m.arange(5.0), 1.3),
    "quantile_q_negative": lambda m: m.quantile(m.arange(5.0), -0.1),
    "quantile_q_tensor_range": lambda m: m.quantile(m.arange(5.0), m.tensor([1.3])),
    "quantile_int": lambda m: m.quantile(m.arange(5), 0.3),
    "quantile_half": lambda m: m.quantile(m.arange(5.0, dtype=m.float16), 0.3),
    "quantile_q_dtype": lambda m: m.quantile(m.arange(5.0), m.tensor([0.3], dtype=m.float64)),
    "quantile_q_2d": lambda m: m.quantile(m.arange(5.0), m.tensor([[0.3]])),
    "quantile_empty": lambda m: m.quantile(m.zeros(0), 0.5),
    "quantile_dim": lambda m: m.quantile(m.zeros(3), 0.5, dim=2),
    "nanquantile_q_range": lambda m: m.nanquantile(m.arange(5.0), 1.5),
    "searchsorted_side": lambda m: m.searchsorted(m.tensor([1.0, 3]), m.tensor([2.0]), side="foo"),
    "searchsorted_side_right": lambda m: m.searchsorted(m.tensor([1.0, 3]), m.tensor([2.0]), side="left", right=True),
    "searchsorted_nd": lambda m: m.searchsorted(m.tensor([[1.0, 3, 5], [0, 2, 4]]), m.tensor([2.0, 6])),
    "searchsorted_nd_2": lambda m: m.searchsorted(m.tensor([[1.0, 3, 5], [0, 2, 4]]), m.tensor([[2.0, 6]])),
    "searchsorted_0d": lambda m: m.searchsorted(m.tensor(1.0), m.tensor([2.0, 6])),
    "searchsorted_sorter_size": lambda m: m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([2.0]), sorter=m.tensor([0, 1])),
    "searchsorted_sorter_range": lambda m: m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([2.0]),
                                                          sorter=m.tensor([0, 1, 5])),
    "searchsorted_sorter_dtype": lambda m: m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([2.0]),
                                                          sorter=m.tensor([0.0, 1, 2])),
    "searchsorted_bool": lambda m: m.searchsorted(m.tensor([True, False]), m.tensor([True])),
    "bucketize_2d": lambda m: m.bucketize(m.tensor([2.0]), m.tensor([[1.0, 3, 5]])),
    "cdist_p": lambda m: m.cdist(m.zeros(2, 3), m.ones(1, 3), p=-1),
    "cdist_cols": lambda m: m.cdist(m.zeros(2, 3), m.ones(1, 4)),
    "cdist_1d": lambda m: m.cdist(m.zeros(3), m.ones(1, 3)),
    "cdist_dtypes": lambda m: m.cdist(m.zeros(2, 3), m.ones(1, 3, dtype=m.float64)),
    "cdist_int": lambda m: m.cdist(m.zeros(2, 3, dtype=m.int64), m.ones(1, 3, dtype=m.int64)),
    "cdist_half": lambda m: m.cdist(m.zeros(2, 3, dtype=m.float16), m.ones(1, 3, dtype=m.float16)),
    "cdist_batch": lambda m: m.cdist(m.zeros(4, 2, 3), m.ones(3, 5, 3)),
    "cdist_mode": lambda m: m.cdist(m.zeros(2, 3), m.ones(1, 3), compute_mode="foo"),
    "fill_diagonal_1d": lambda m: m.zeros(3).fill_diagonal_(2),
    "fill_diagonal_unequal": lambda m: m.zeros(3, 3, 2).fill_diagonal_(2),
    "fill_diagonal_leaf": lambda m: m.zeros(3, 3, requires_grad=True).fill_diagonal_(2),
    "fill_diagonal_tensor_value": lambda m: m.zeros(3, 3).fill_diagonal_(m.tensor([1.0, 2])),
    "fill_diagonal_overflow": lambda m: m.zeros(3, 3, dtype=m.int8).fill_diagonal_(300),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raises_both(ERRORS[name])


# ---- compile ----------------------------------------------------------------------------------------------------------
def test_compiled_static_shape_ops():
    """quantile, searchsorted / bucketize, histc and cdist compile into one program (no graph break) and match eager;
    quantile's gradient too."""
    x0 = R.standard_normal((6, 4)).astype(np.float32)
    w = ft.nn.Parameter(ft.tensor(x0))
    opt = ft.optim.SGD([w], lr=0.1)

    def step(edges):
        opt.zero_grad()
        loss = ft.quantile(w, 0.3, dim=0).sum() + ft.cdist(w, w[:2]).sum()
        loss.backward()
        opt.step()
        return loss.detach(), ft.bucketize(w.detach(), edges), ft.histc(w.detach(), bins=5), ft.histc(w.detach(), 4,
                                                                                                      -1, 1)
    edges = ft.tensor([-1.0, 0.0, 0.5])
    eager_w = ft.nn.Parameter(ft.tensor(x0))
    eager_opt = ft.optim.SGD([eager_w], lr=0.1)

    def eager_step(edges):
        eager_opt.zero_grad()
        loss = ft.quantile(eager_w, 0.3, dim=0).sum() + ft.cdist(eager_w, eager_w[:2]).sum()
        loss.backward()
        eager_opt.step()
        d = eager_w.detach()
        return loss.detach(), ft.bucketize(d, edges), ft.histc(d, bins=5), ft.histc(d, 4, -1, 1)
    compiled = ft.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a graph break would warn
        for _ in range(2):
            got, want = compiled(edges), eager_step(edges)
            for g, e in zip(got, want):
                assert g.dtype == e.dtype
                np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.detach().numpy(), eager_w.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_data_dependent_ops_under_compile():
    """unique / unique_consecutive / bincount: output sizes depend on the values, so a compiled call falls back to eager
    (graph-break warning) with eager's result; with fullgraph=True it raises; a jax trace raises DataDependentError."""
    import jax
    x = ft.tensor([3, 1, 3, 2, 2])

    def fn(t):
        u, c = ft.unique(t, return_counts=True)
        return u, c, ft.bincount(t), ft.unique_consecutive(t)
    with pytest.warns(UserWarning, match="graph break"):
        got = ft.compile(fn)(x)
    for g, e in zip(got, fn(x)):
        assert g.tolist() == e.tolist()
    with pytest.raises(Exception, match="torch.unique"):
        ft.compile(fn, fullgraph=True)(x)
    for op in (lambda t: ft.unique(t), lambda t: ft.bincount(t), lambda t: ft.unique_consecutive(t)):
        with pytest.raises(DataDependentError):
            jax.jit(lambda a: op(ft.Tensor._from_array(a, ft.int64, ft.device("cpu")))._array)(np.array([1, 2]))
