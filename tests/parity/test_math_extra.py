"""functorch_lite/ops/math_extra.py against real PyTorch: values (NaN, inf, ties and their indices), result
dtypes for integer/bool inputs, grad_fn names and gradients, in-place forms, errors, and which functions/methods
exist. The op-table sweeps (test_op_table_sweep.py / test_grad_sweep.py) cover the half/float8/int dtypes."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

NAN, INF = float("nan"), float("inf")


def _run(mod, fn, arrays, dtypes, grad):
    ts = [mod.tensor(a, dtype=getattr(mod, d), requires_grad=grad and d.startswith("float"))
          for a, d in zip(arrays, dtypes)]
    out = fn(mod, *ts)
    return ts, out


def _np(t):
    return t.detach().numpy()


def _same(f, t):
    assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape), (f, t)
    np.testing.assert_allclose(_np(f), _np(t), rtol=1e-6, atol=1e-6, equal_nan=True)


def check(fn, arrays, dtypes=None, grad=True):
    """Same values/dtype/shape (and named-tuple fields, indices included), grad_fn name and gradients."""
    dtypes = dtypes or ["float64"] * len(arrays)
    tt, to = _run(torch, fn, arrays, dtypes, grad)
    ft_, fo = _run(ft, fn, arrays, dtypes, grad)
    outs_t = tuple(to) if isinstance(to, tuple) else (to,)
    outs_f = tuple(fo) if isinstance(fo, tuple) else (fo,)
    if isinstance(to, tuple):
        assert type(fo).__name__ == type(to).__name__ and len(fo) == len(to)
    for a, b in zip(outs_f, outs_t):
        _same(a, b)
    first_t, first_f = outs_t[0], outs_f[0]
    if grad and first_t.requires_grad:
        assert first_f.grad_fn.name() == first_t.grad_fn.name()
        w = np.random.default_rng(0).standard_normal(tuple(first_t.shape))
        (first_t * torch.tensor(w, dtype=first_t.dtype)).sum().backward()
        (first_f * ft.tensor(w, dtype=first_f.dtype)).sum().backward()
        for x, y in zip(tt, ft_):
            if x.requires_grad:
                np.testing.assert_allclose(y.grad.numpy(), x.grad.numpy(), rtol=1e-6, atol=1e-8)
    return fo


def raises_like(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as fe:
        fn(ft)
    assert type(fe.value) is type(te.value), (te.value, fe.value)
    assert str(fe.value) == str(te.value)


X = np.array([[1.0, NAN, 3.0, 2.0], [NAN, NAN, NAN, NAN], [2.0, 2.0, 1.0, 1.0]])
TIES = np.array([[2.0, 1.0, 2.0, 1.0, 3.0, 1.0, 2.0], [5.0, 5.0, 4.0, 4.0, 4.0, 5.0, 0.0]])


@pytest.mark.parametrize("case", [
    "nansum", "nansum_kd", "nanmean", "nanmedian", "nanmedian_dim0", "nanmedian_dim1",
])
def test_nan_reductions(case):
    fn = {"nansum": lambda m, x: m.nansum(x, 1), "nansum_kd": lambda m, x: x.nansum((0, 1), True),
          "nanmean": lambda m, x: m.nanmean(x, dim=1, keepdim=True),
          "nanmedian": lambda m, x: m.nanmedian(x), "nanmedian_dim0": lambda m, x: m.nanmedian(x, 0),
          "nanmedian_dim1": lambda m, x: x.nanmedian(1, keepdim=True)}[case]
    check(fn, [X])


@pytest.mark.parametrize("n", [1, 2, 4, 5, 9, 23])
def test_nanmedian_all_nan_row_index(n):
    """An all-NaN row: the index std::nth_element leaves first."""
    check(lambda m, x: m.nanmedian(x, 0), [np.full(n, NAN)])


def test_nan_reduction_dtypes():
    i = np.array([[1, 2], [3, 4]])
    check(lambda m, x: m.nansum(x), [i], ["int32"])
    check(lambda m, x: m.nansum(x, 0), [i > 2], ["bool"])
    check(lambda m, x: m.nansum(x, 1, dtype=m.float64), [X], ["float32"])
    check(lambda m, x: m.nanmedian(x, 1), [i], ["int64"])
    raises_like(lambda m: m.nanmean(m.tensor([1, 2])))
    raises_like(lambda m: m.nansum(m.tensor([1j])))
    raises_like(lambda m: m.nanmedian(m.tensor([True])))
    raises_like(lambda m: m.nanmedian(m.zeros(2, 0), 1))
    raises_like(lambda m: m.nanmedian(m.zeros(3), (0,)))


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_ties_nan(name):
    a = np.array([[1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN], [3.0, 1.0, 1.0, 2.0, 0.0, 0.0, -1.0]])
    check(lambda m, x: getattr(m, name)(x, 1), [a])
    check(lambda m, x: getattr(m, name)(x, 0), [np.array([1, 3, 3, 2, 5, 5])], ["int64"], grad=False)
    check(lambda m, x: getattr(m, name)(x, 0), [np.array(2.0)])
    raises_like(lambda m: getattr(m, name)(m.zeros(2), 1))


def test_logcumsumexp():
    check(lambda m, x: m.logcumsumexp(x, 0), [np.array([1.0, -INF, 3.0, 0.5])])
    check(lambda m, x: x.logcumsumexp(-1), [np.array([1.0, -INF, 3.0, INF, NAN])], grad=False)
    raises_like(lambda m: m.logcumsumexp(m.tensor([1, 2]), 0))


@pytest.mark.parametrize("k", [2, 4])
def test_kthvalue_ties_follow_torch(k):
    check(lambda m, x: m.kthvalue(x, k, 1), [TIES])
    check(lambda m, x: x.kthvalue(k, dim=0, keepdim=True), [TIES.T.copy()])


def test_kthvalue_nan_errors_and_ints():
    check(lambda m, x: m.kthvalue(x, 3), [np.array([2.0, NAN, 1.0, NAN])])
    check(lambda m, x: m.kthvalue(x, 2, 0), [np.array([3, 1, 3, 1, 1])], ["int64"])
    check(lambda m, x: m.kthvalue(x, 1), [np.array(3.0)])
    raises_like(lambda m: m.kthvalue(m.tensor([2.0, 1.0]), 3))
    raises_like(lambda m: m.kthvalue(m.tensor([2.0, 1.0]), 1.5))
    raises_like(lambda m: m.kthvalue(m.tensor([True]), 1))
    raises_like(lambda m: m.kthvalue(m.zeros(2, 0), 1, 1))


def test_mode_ties_follow_torch():
    check(lambda m, x: m.mode(x), [TIES])
    rng = np.random.default_rng(3)
    big = rng.integers(0, 4, (3, 40)).astype(np.float64)  # > 16 per row: std::sort's introsort decides the index
    check(lambda m, x: x.mode(1), [big])
    check(lambda m, x: m.mode(x, 0), [np.array([1, 2, 1, 2, 1, 2, 3, 2, 1])], ["int64"])
    check(lambda m, x: m.mode(x, 0), [np.array([True, False, True])], ["bool"])
    check(lambda m, x: m.mode(x), [np.array([NAN, NAN, 1.0])], grad=False)
    raises_like(lambda m: m.mode(m.zeros(2, 0)))
    raises_like(lambda m: m.mode(m.zeros(3), (0,)))


def test_msort_and_named_tuple_out():
    check(lambda m, x: m.msort(x), [TIES.T.copy()])
    for mod in (torch, ft):
        v, i = mod.empty(0), mod.empty(0, dtype=mod.int64)
        r = mod.cummax(mod.tensor([1.0, 3.0, 2.0]), 0, out=(v, i))
        assert r.indices.tolist() == [0, 1, 1] and v.tolist() == [1.0, 3.0, 3.0]
    assert repr(ft.kthvalue(ft.tensor([3.0, 1.0]), 1)).startswith("torch.return_types.kthvalue(")


def test_elementwise_values_and_dtypes():
    a = np.array([[-1.5, 0.0, 2.0, INF], [0.3, -INF, 1.0, -0.0]])
    b = np.array([[0.5, 0.25, -1.0, INF], [2.0, -INF, 0.0, 7.0]])
    check(lambda m, x, y: m.logaddexp(x, y), [a, b], grad=False)
    check(lambda m, x, y: m.logaddexp2(x, y), [a[:, :3], b[:, :3]])
    check(lambda m, x: m.deg2rad(x), [np.array([0, 90, -180])], ["int64"])
    check(lambda m, x: m.rad2deg(x), [np.array([True, False])], ["bool"])
    check(lambda m, x, y: m.heaviside(x, y), [a, b], grad=False)
    check(lambda m, x, y: m.heaviside(x, y), [np.array([NAN, 0.0, -0.0, 2.0]), np.array([3.0, 2.0, 5.0, 1.0])],
          grad=False)
    check(lambda m, x, y: m.heaviside(x, y), [np.array([-2, 0, 3]), np.array([7, 8, 9])], ["int64"] * 2)
    check(lambda m, x, y: m.heaviside(x, y), [np.array([True, False]), np.array([False, True])], ["bool"] * 2)
    g = [np.array([-4, 6, 0, -7, 12]), np.array([6, -9, 0, 0, 18])]
    check(lambda m, x, y: m.gcd(x, y), g, ["int64"] * 2)
    check(lambda m, x, y: m.lcm(x, y), g, ["int64"] * 2)
    check(lambda m, x, y: m.lcm(x, y), [np.array([100, 12]), np.array([99, 8])], ["int8"] * 2)  # wraps as C
    check(lambda m, x, y: m.gcd(x, y), [np.array([4, 6]), np.array([6, 9])], ["uint8", "int32"])
    check(lambda m, x, y: m.float_power(x, y), [np.array([1.5, 2.0]), np.array([2.0, -0.5])], ["float32"] * 2)
    check(lambda m, x: m.float_power(x, 2), [np.array([1, -2])], ["int64"])
    check(lambda m, x: m.float_power(2, x), [np.array([1.5, 2.0])], ["float32"])
    check(lambda m, x: x.float_power(0.5j), [np.array([1.5, 2.0])], ["float64"], grad=False)


def test_elementwise_errors():
    raises_like(lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1])))
    raises_like(lambda m: m.heaviside(m.tensor([1.0]), m.tensor(0.5, dtype=m.float64)))
    raises_like(lambda m: m.heaviside(m.tensor([1.0]), 0.5))
    raises_like(lambda m: m.heaviside(m.tensor([1j]), m.tensor([1j])))
    raises_like(lambda m: m.logaddexp(m.tensor([1.0]), 1.0))
    raises_like(lambda m: m.logaddexp(m.tensor([1]), m.tensor([1])))
    raises_like(lambda m: m.logaddexp2(m.tensor([1j]), m.tensor([1j])))
    raises_like(lambda m: m.gcd(m.tensor([1]), m.tensor([1.0])))
    raises_like(lambda m: m.gcd(m.tensor([1]), 4))
    raises_like(lambda m: m.deg2rad(m.tensor([1j])))
    raises_like(lambda m: m.tensor([1, 2]).deg2rad_())
    raises_like(lambda m: m.tensor([1.0]).float_power_(2))
    raises_like(lambda m: m.tensor([1.0], dtype=m.float64).float_power_(2j))
    raises_like(lambda m: m.float_power(m.tensor([1.0]), 2, out=m.empty(1)))


def test_heaviside_grad_fn_raises_on_backward():
    for mod in (torch, ft):
        x = mod.tensor([1.0, -1.0, 0.0], requires_grad=True)
        r = mod.heaviside(x, mod.tensor([0.5, 0.5, 0.5]))
        assert r.requires_grad and r.grad_fn.name() == "torch::autograd::NotImplemented"
        assert r.tolist() == [1.0, 0.0, 0.5]
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
            r.sum().backward()


def test_inplace_forms():
    def ip(m):
        a = m.tensor([[-4, 6], [9, 0]])
        a.gcd_(m.tensor([6, 4]))
        b = m.tensor([0.0, 90.0, -45.0], dtype=m.float64)
        b.deg2rad_()
        m.rad2deg_(b)
        c = m.tensor([-1.0, 0.0, 2.0])
        c.heaviside_(m.tensor([7.0, 7.0, 7.0]))
        d = m.tensor([2.0, 3.0], dtype=m.float64)
        d.float_power_(m.tensor([2.0, 0.5]))
        e = m.ones(2)
        m.addmv_(e, m.ones(2, 3), m.tensor([1.0, 2.0, 3.0]), beta=2)
        f = m.ones(2, 3)
        f.addr_(m.tensor([1.0, 2.0]), m.tensor([1.0, 0.0, -1.0]), alpha=3)
        g = m.ones(2, 2)
        g.addbmm_(m.ones(3, 2, 4), m.ones(3, 4, 2), beta=0.5)
        h = m.ones(2, 2)
        h.addmm_(m.ones(2, 3), m.ones(3, 2), alpha=2)
        k = m.ones(2, 2, 2)
        k.baddbmm_(m.ones(2, 2, 3), m.ones(2, 3, 2))
        p = m.tensor([0.5, -0.2, 3.0])
        m.clip_(p, -0.1, 1.0)
        m.negative_(p)
        q = m.tensor([0.5, -0.2])
        m.arcsin_(q)
        q.arctan_()
        return [a, b, c, d, e, f, g, h, k, p, q]
    for x, y in zip(ip(ft), ip(torch)):
        _same(x, y)
    raises_like(lambda m: m.zeros(1).addmv_(m.ones(2, 3), m.ones(3)))


def test_integration():
    y = np.array([[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 2.0, 3.0]])
    x = np.array([0.0, 0.5, 2.0, 2.5])
    check(lambda m, a: m.trapezoid(a), [y])
    check(lambda m, a, b: m.trapezoid(a, b), [y, x])
    check(lambda m, a, b: m.trapz(a, b[:2, None], dim=0), [y, x])
    check(lambda m, a: m.cumulative_trapezoid(a, dx=0.5), [y])
    check(lambda m, a, b: m.cumulative_trapezoid(a, b), [y, x])
    check(lambda m, a: m.trapezoid(a), [np.array([[1, 2, 4]])], ["int64"])
    check(lambda m, a: m.trapezoid(a), [np.zeros((2, 0))])
    raises_like(lambda m: m.trapezoid(m.tensor([True, False])))
    raises_like(lambda m: m.trapezoid(m.ones(3), m.ones(2)))
    raises_like(lambda m: m.cumulative_trapezoid(m.ones(3), dx=True))


def test_dist_vdot():
    a, b = np.array([[1.0, -2.0, 0.5]]), np.array([[0.0, 1.0, 0.25], [2.0, 2.0, -1.0]])
    for p in (1, 3.5, INF, -1):
        check(lambda m, x, y: m.dist(x, y, p), [a, b])
    check(lambda m, x, y: m.dist(x, y, 0), [a, b], ["float32", "float64"], grad=False)  # torch's p=0 backward fails
    check(lambda m, x, y: x.dist(y), [a, a])  # zero distance: gradient 0
    check(lambda m, x, y: m.vdot(x, y), [np.array([1, 2, 3]), np.array([4, -5, 6])], ["int64"] * 2)
    check(lambda m, x, y: m.vdot(x, y), [np.array([1 + 2j, 3j]), np.array([2 - 1j, 1 + 1j])], ["complex64"] * 2,
          grad=False)
    raises_like(lambda m: m.dist(m.tensor([1, 2]), m.tensor([1, 2])))
    raises_like(lambda m: m.dist(m.tensor([True]), m.tensor([False])))
    raises_like(lambda m: m.vdot(m.ones(3), m.ones(3, dtype=m.float64)))
    raises_like(lambda m: m.vdot(m.ones(1, 3), m.ones(1, 3)))


def test_cov_corrcoef():
    x = np.array([[1.0, 2.0, 4.0, 7.0, 3.0], [0.5, -1.0, 2.0, 3.0, 1.0], [3.0, 1.0, 0.0, -2.0, 5.0]])
    check(lambda m, a: m.cov(a), [x])
    check(lambda m, a, w: m.cov(a, aweights=w), [x, np.array([0.5, 1.0, 2.0, 1.0, 0.25])])
    check(lambda m, a: m.cov(a, fweights=m.tensor([1, 2, 1, 3, 1])), [np.array([[1, 2, 4, 0, 1], [3, 1, 0, 2, 2]])],
          ["int64"])
    check(lambda m, a: m.corrcoef(a), [x])
    raises_like(lambda m: m.cov(m.ones(2, 2, 2)))
    raises_like(lambda m: m.cov(m.tensor([True, False])))
    raises_like(lambda m: m.cov(m.ones(2, 3), fweights=m.tensor([1.0, 1.0, 1.0])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, a: m.cov(a), [np.array([[1.0], [2.0]])], grad=False)


def test_addmv_addr_addbmm():
    rng = np.random.default_rng(5)
    check(lambda m, i, a, v: m.addmv(i, a, v, beta=0.5, alpha=-2), [rng.standard_normal(1),
                                                                    rng.standard_normal((2, 3)),
                                                                    rng.standard_normal(3)])
    check(lambda m, i, a, v: m.addmv(i, a, v, beta=0), [np.array([NAN, 1.0]), np.ones((2, 3)), np.ones(3)])
    check(lambda m, i, a, b: m.addr(i, a, b, alpha=2), [rng.standard_normal(3), rng.standard_normal(2),
                                                        rng.standard_normal(3)])
    check(lambda m, i, a, b: m.addr(i, a, b), [np.ones((2, 3)), np.ones(2), np.ones(3)], ["float64", "float32",
                                                                                        "float32"], grad=False)
    check(lambda m, i, a, b: m.addr(i, a, b, beta=2), [np.zeros((2, 2)) > 0, np.array([True, False]),
                                                       np.array([True, True])], ["bool"] * 3)
    check(lambda m, i, a, b: m.addbmm(i, a, b, beta=0.5, alpha=2), [rng.standard_normal((2, 1)),
                                                                    rng.standard_normal((3, 2, 4)),
                                                                    rng.standard_normal((3, 4, 5))])
    raises_like(lambda m: m.addmv(m.zeros(2), m.ones(2, 3), m.ones(3, dtype=m.float64)))
    raises_like(lambda m: m.addmv(m.zeros(2), m.ones(2, 3), m.ones(4)))
    raises_like(lambda m: m.addmv(m.zeros(2), m.ones(2, 3, 1), m.ones(3)))
    raises_like(lambda m: m.addr(m.zeros(2, 3), m.ones(2, 1), m.ones(3)))
    raises_like(lambda m: m.addr(m.zeros(2, 4), m.ones(2), m.ones(3)))
    raises_like(lambda m: m.addr(m.zeros(2, 3, dtype=m.int64), m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64),
                                 beta=1.5))
    raises_like(lambda m: m.addbmm(m.zeros(2, 2), m.ones(2, 2, 3), m.ones(3, 3, 2)))
    raises_like(lambda m: m.addbmm(m.zeros(2, 2), m.ones(2, 2, 3), m.ones(2, 4, 2)))
    raises_like(lambda m: m.addbmm(m.zeros(2, 2), m.ones(2, 2, 3), m.ones(2, 3, 2, dtype=m.float64)))


NAMES = ("logaddexp logaddexp2 deg2rad deg2rad_ rad2deg rad2deg_ heaviside heaviside_ gcd gcd_ lcm lcm_ float_power "
         "float_power_ nanmean nansum nanmedian msort cummax cummin logcumsumexp kthvalue mode trapezoid trapz "
         "cumulative_trapezoid dist vdot cov corrcoef addmv addmv_ addr addr_ addbmm addbmm_ addmm_ baddbmm_ "
         "negative_ clip_ arccos_ arcsin_ arctan_ arccosh_ arcsinh_ arctanh_").split()


def test_functions_and_methods_exist_exactly_where_torch_has_them():
    for n in NAMES:
        assert hasattr(ft, n) == hasattr(torch, n), n
        assert hasattr(ft.Tensor, n) == hasattr(torch.Tensor, n), n
