"""torch.special (and torch.logit / i0 / sinc / polygamma / mvlgamma / igamma / igammac, their Tensor forms)
against real PyTorch: values over each function's domain including edge points (0, +-1, poles, negatives, large,
inf, NaN), dtypes (integer inputs -> default float), grad_fn names, gradients, and errors."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

INF, NAN = np.inf, np.nan
X = np.array([-INF, -30.0, -7.5, -3.0, -2.0, -1.0, -0.5, -0.0, 0.0, 1e-6, 0.25, 0.5, 1.0, 2.0, 4.9, 5.1, 8.5,
              40.0, INF, NAN])
P01 = np.array([-0.5, 0.0, 1e-7, 0.2, 0.5, 0.9, 1.0, 1.5, NAN])
UNARY = ["expit", "erf", "erfc", "erfcx", "erfinv", "exp2", "expm1", "log1p", "gammaln", "digamma", "psi", "i0",
         "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "sinc", "entr", "logit", "bessel_j0", "bessel_j1",
         "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
         "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai",
         "spherical_bessel_j0"]
POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
         "legendre_polynomial_p"]


def _cmp(f_out, t_out, tol):
    assert str(f_out.dtype) == str(t_out.dtype) and tuple(f_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(f_out.detach().numpy(), t_out.detach().numpy(), rtol=tol, atol=tol)


def _both(fn):
    return fn(ft), fn(torch)


def test_public_names_match_torch():
    names = {n for n in dir(torch.special) if not n.startswith("_") and callable(getattr(torch.special, n))}
    names -= {"Tensor"}
    assert names <= set(ft.special.__all__) and set(ft.special.__all__) <= names
    for n in ("logit", "logit_", "i0", "i0_", "sinc", "sinc_", "polygamma", "mvlgamma", "igamma", "igammac",
              "xlogy_"):
        assert hasattr(ft, n) == hasattr(torch, n), n
        assert hasattr(ft.Tensor, n) == hasattr(torch.Tensor, n), n
    for n in ("polygamma_", "mvlgamma_", "igamma_", "igammac_", "entr", "ndtr", "zeta"):
        assert hasattr(ft, n) == hasattr(torch, n) and hasattr(ft.Tensor, n) == hasattr(torch.Tensor, n), n


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_values_over_the_domain(dtype):
    tol = 1e-10 if dtype == "float64" else 2e-5
    # float32: the kernels ported from Math.h and the ones the float32 grad sweep sees only at random points
    for name in UNARY if dtype == "float64" else [n for n in UNARY if "bessel" in n or n in (
            "airy_ai", "log_ndtr", "entr", "sinc", "i1e")]:
        xs = P01 if name in ("logit", "ndtri", "erfinv") else X
        f, t = _both(lambda m: getattr(m.special, name)(m.tensor(xs, dtype=getattr(m, dtype))))
        try:
            _cmp(f, t, tol)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


def test_integer_and_bool_inputs_give_the_default_float():
    # (every op-table row is swept in int64 and bool by test_op_table_sweep.py; here the aliases and a default dtype)
    for name in ("gammaln", "expit", "psi", "bessel_y0"):
        f, t = _both(lambda m: getattr(m.special, name)(m.tensor([0, 1, 3])))
        _cmp(f, t, 1e-6)
    f, t = _both(lambda m: m.special.i1e(m.tensor([True, False])))
    _cmp(f, t, 1e-6)
    ft.set_default_dtype(ft.float64)
    try:
        f = ft.special.i0e(ft.tensor([1, 2]))
    finally:
        ft.set_default_dtype(ft.float32)
    assert f.dtype == ft.float64
    np.testing.assert_allclose(f.numpy(), torch.special.i0e(torch.tensor([1.0, 2.0], dtype=torch.float64)).numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("name", POLYS)
def test_polynomials(name):
    x = np.array([-1.0, -0.9, -0.3, 0.0, 0.2, 0.5, 0.7, 1.0, 1.5, -2.0, 3.0, 1.0, 0.0, 0.4])
    n = np.array([3.0, 12.0, 9.0, 5.0, 7.0, 2.0, 30.0, 10.0, 4.0, 5.0, -1.0, 2.7, 1.0, 0.0])
    f, t = _both(lambda m: getattr(m.special, name)(m.tensor(x, dtype=m.float64), m.tensor(n, dtype=m.float64)))
    _cmp(f, t, 1e-9)
    x = ft.tensor([0.3], requires_grad=True)
    assert not getattr(ft.special, name)(x, 3).requires_grad  # no derivative in PyTorch either
    with pytest.raises(TypeError):
        getattr(ft.special, name)(0.5, 3)


def test_polynomial_arguments():
    x = np.array([-1.0, -0.9, -0.3, 0.0, 0.2, 0.5, 0.7, 1.0, 1.5, -2.0, 3.0, 1.0, 0.0, 0.4])
    n = np.array([3.0, 12.0, 9.0, 5.0, 7.0, 2.0, 30.0, 10.0, 4.0, 5.0, -1.0, 2.7, 1.0, 0.0])
    name = "chebyshev_polynomial_u"
    f, t = _both(lambda m: getattr(m.special, name)(m.tensor(x), m.tensor(n)))  # float32
    _cmp(f, t, 2e-5)
    f, t = _both(lambda m: m.special.hermite_polynomial_h(m.tensor([0.5, 2.0]), m.tensor([129.0, 100.0])))
    _cmp(f, t, 1e-4)  # float32's degree limit (128): NaN beyond
    # a Python number for either argument; integer x with integer n -> float32; n's dtype joins the promotion
    for fn in (lambda m: getattr(m.special, name)(m.tensor(x), 4), lambda m: getattr(m.special, name)(0.3, m.tensor([0, 3, 8])),
               lambda m: getattr(m.special, name)(m.tensor([1, 2]), m.tensor([2, 3])),
               lambda m: getattr(m.special, name)(m.tensor([0.1, 0.2]), m.tensor([2.0, 3.0], dtype=m.float64))):
        f, t = _both(fn)
        _cmp(f, t, 2e-5)


def test_binary_values_and_broadcasting():
    a = np.array([[0.0], [0.5], [1.0], [2.0], [7.5]])
    b = np.array([-0.5, 0.0, 0.3, 1.0, 4.0, 50.0, NAN])
    cases = [lambda m, x, y: m.special.xlog1py(x, y), lambda m, x, y: m.special.zeta(x + 1, y),
             lambda m, x, y: m.special.gammainc(x, y), lambda m, x, y: x.igammac(y)]
    for dtype, tol in (("float64", 1e-10), ("float32", 2e-5)):
        for fn in cases if dtype == "float64" else cases[1:3]:
            f, t = _both(lambda m: fn(m, m.tensor(a, dtype=getattr(m, dtype)), m.tensor(b, dtype=getattr(m, dtype))))
            _cmp(f, t, tol)
    # zeta's and igamma's edges: poles at non-positive integer q, an infinite x or a
    for fn in (lambda m: m.special.zeta(m.tensor([1.0, 0.5, 3.0, 3.0, INF, INF]), m.tensor([1.0, 1.0, -2.0, -1.5, 1.0, 3.0])),
               lambda m: m.igamma(m.tensor([0.0, 0.0, INF, 1.0, 2.0]), m.tensor([0.0, 1.0, 2.0, INF, -1.0])),
               lambda m: m.special.xlog1py(2, m.tensor([0.5, 1.0])),
               lambda m: m.special.zeta(m.tensor([2, 3]), m.tensor([1, 2])),
               lambda m: m.igamma(m.tensor([2.0, 3.0], dtype=m.float64), m.tensor([1.0, 2.0]))):
        f, t = _both(fn)
        _cmp(f, t, 1e-6)


def test_polygamma_mvlgamma_logit_round_and_reductions():
    x = np.array([-3.0, -2.5, -0.0, 0.0, 1e-3, 0.5, 1.0, 3.7, 30.0])
    for n in (0, 1, 2, 3, 5):
        for dtype, tol in (("float64", 1e-10), ("float32", 2e-5)):
            f, t = _both(lambda m: m.special.polygamma(n, m.tensor(x, dtype=getattr(m, dtype))))
            _cmp(f, t, tol)
    f, t = _both(lambda m: m.tensor(x).polygamma(2))
    _cmp(f, t, 2e-5)
    for p in (1, 2, 4):
        f, t = _both(lambda m: m.special.multigammaln(m.tensor([2.5, 3.0, 10.0], dtype=m.float64), p))
        _cmp(f, t, 1e-10)
        f, t = _both(lambda m: m.tensor([[3, 4], [5, 6]]).mvlgamma(p))
        _cmp(f, t, 1e-5)
    for eps in (None, 0.0, 0.1, 0.6):
        f, t = _both(lambda m: m.logit(m.tensor(P01, dtype=m.float64), eps))
        _cmp(f, t, 1e-10)
    f, t = _both(lambda m: m.special.round(m.tensor([0.5, 1.5, -2.5, 1.2345]), decimals=2))
    _cmp(f, t, 0)
    f, t = _both(lambda m: m.special.softmax(m.tensor([[1, 2], [3, 5]]), 1, dtype=m.float64))
    _cmp(f, t, 1e-12)
    f, t = _both(lambda m: m.special.log_softmax(m.tensor([[1.0, 2.0], [3.0, 5.0]]), 0))
    _cmp(f, t, 1e-6)
    f, t = _both(lambda m: m.special.logsumexp(m.tensor([[1.0, 2.0], [3.0, 5.0]]), 1, keepdim=True))
    _cmp(f, t, 1e-6)


def test_half_precision_and_missing_kernels():
    for name in ("i0", "i1e", "sinc", "entr", "logit", "ndtr", "expit"):
        f, t = _both(lambda m: getattr(m.special, name)(m.tensor([0.3, 0.9, 2.0], dtype=m.float16)))
        _cmp(f, t, 2e-3)
    for fn in (lambda m: m.special.bessel_j0(m.tensor([1.0], dtype=m.float16)),
               lambda m: m.special.zeta(m.tensor([2.0], dtype=m.bfloat16), m.tensor([1.0], dtype=m.bfloat16)),
               lambda m: m.special.log_ndtr(m.tensor([1.0], dtype=m.float16)),
               lambda m: m.special.gammainc(m.tensor([1, 2]), m.tensor([1, 2])),
               lambda m: m.special.polygamma(1, m.tensor([1.0]).to(m.float8_e4m3fn)),
               lambda m: m.special.polygamma(3, m.tensor([1.0]).to(m.float8_e4m3fn)),
               lambda m: m.special.multigammaln(m.tensor([1.0]).to(m.float8_e4m3fn), 2)):
        with pytest.raises(NotImplementedError) as te:
            fn(torch)
        with pytest.raises(NotImplementedError) as fe:
            fn(ft)
        assert str(fe.value) == str(te.value)


def test_errors():
    x = ft.tensor([1.0, 2.0])
    for fn, exc, msg in [
        (lambda m, t: m.special.polygamma(-1, t), RuntimeError, "polygamma(n, x) does not support negative n."),
        (lambda m, t: m.special.multigammaln(t, 0), RuntimeError, "p has to be greater than or equal to 1"),
        (lambda m, t: m.special.multigammaln(t > 1, 1), RuntimeError, "The input tensor may not be a boolean tensor."),
        (lambda m, t: m.igamma(t, 2.0), TypeError, "igamma(): argument 'other' (position 2) must be Tensor, not float"),
        (lambda m, t: m.special.gammaincc(t, 2.0), TypeError,
         "special_gammaincc(): argument 'other' (position 2) must be Tensor, not float"),
        (lambda m, t: m.tensor([0, 1]).logit_(), RuntimeError, "result type Float can't be cast to the desired output type Long"),
    ]:
        with pytest.raises(exc) as te:
            fn(torch, torch.tensor([1.0, 2.0]))
        with pytest.raises(exc) as fe:
            fn(ft, x)
        assert str(fe.value) == str(te.value) == msg
    with pytest.raises(TypeError):
        ft.special.polygamma(1.5, x)
    with pytest.raises(TypeError):
        ft.special.softmax(x)


def _grad(m, name, fn, arrays, dtype="float64"):
    xs = [m.tensor(a, dtype=getattr(m, dtype), requires_grad=True) for a in arrays]
    out = fn(m, *xs)
    gname = type(out.grad_fn).__name__
    out.backward(m.ones_like(out))
    return gname, out, [x.grad for x in xs]


@pytest.mark.parametrize("name,fn,arrays", [
    ("i1", lambda m, x: m.special.i1(x), [[-2.0, 0.0, 1e-3, 3.0]]),
    ("i1e", lambda m, x: m.special.i1e(x), [[-2.0, 0.0, 1e-3, 3.0]]),
    ("i0e", lambda m, x: m.special.i0e(x), [[-2.0, 0.0, 3.0]]),
    ("i0", lambda m, x: x.i0(), [[-2.0, 0.0, 3.0]]),
    ("entr", lambda m, x: m.special.entr(x), [[0.0, 0.5, 2.0]]),
    ("sinc", lambda m, x: m.special.sinc(x), [[0.0, 0.5, 1.0, -2.3]]),
    ("logit_eps", lambda m, x: m.logit(x, 0.2), [[0.1, 0.2, 0.5, 0.8, 0.95]]),
    ("logit", lambda m, x: m.special.logit(x), [[-0.5, 0.3, 0.5, 1.5]]),
    ("erfcx", lambda m, x: m.special.erfcx(x), [[-1.0, 0.0, 3.0, 30.0]]),
    ("ndtr", lambda m, x: m.special.ndtr(x), [[-3.0, 0.0, 2.0]]),
    ("ndtri", lambda m, x: m.special.ndtri(x), [[0.01, 0.5, 0.9]]),
    ("log_ndtr", lambda m, x: m.special.log_ndtr(x), [[-20.0, -1.5, 0.0, 4.0]]),
    ("xlog1py", lambda m, x, y: m.special.xlog1py(x, y), [[0.0, 1.0, -2.0], [0.5, -0.5, 3.0]]),
    ("xlog1py_s", lambda m, y: m.special.xlog1py(3.0, y), [[0.5, 2.0]]),
    ("zeta_q", lambda m, q: m.special.zeta(m.tensor([2.0, 3.0], dtype=q.dtype), q), [[1.0, 2.5]]),
    ("igamma_x", lambda m, x: m.igamma(m.tensor([0.5, 3.0], dtype=x.dtype), x), [[0.5, 2.0]]),
    ("igammac_x", lambda m, x: m.special.gammaincc(m.tensor([0.5, 3.0], dtype=x.dtype), x), [[0.5, 2.0]]),
    ("polygamma", lambda m, x: m.special.polygamma(2, x), [[0.3, 2.0]]),
    ("multigammaln", lambda m, x: m.special.multigammaln(x, 3), [[2.5, 4.0]]),
    ("expit", lambda m, x: m.special.expit(x), [[-1.0, 2.0]]),
    ("gammaln", lambda m, x: m.special.gammaln(x), [[0.5, 2.0]]),
])
def test_gradients_and_grad_fn(name, fn, arrays):
    fg, fo, fgr = _grad(ft, name, fn, arrays)
    tg, to, tgr = _grad(torch, name, fn, arrays)
    assert fg == tg
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(fgr, tgr):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fn,msg", [
    (lambda m, x: m.igamma(x, m.tensor([1.0, 2.0], dtype=x.dtype)), "the derivative for 'igamma: input' is not implemented."),
    (lambda m, x: m.special.gammaincc(x, m.tensor([1.0, 2.0], dtype=x.dtype)),
     "the derivative for 'igammac: input' is not implemented."),
    (lambda m, x: m.special.zeta(x, m.tensor([1.0, 2.0], dtype=x.dtype)), "the derivative for 'zeta' is not implemented."),
])
def test_missing_derivatives_raise_at_backward(fn, msg):
    for m in (torch, ft):
        x = m.tensor([2.0, 3.0], requires_grad=True)
        out = fn(m, x)  # the forward works, and records the node
        assert out.grad_fn is not None
        with pytest.raises(NotImplementedError) as e:
            out.sum().backward()
        assert str(e.value) == msg


def test_inplace_forms():
    for fn in (lambda m, t: t.logit_(0.1), lambda m, t: t.i0_(), lambda m, t: t.sinc_(), lambda m, t: t.polygamma_(1),
               lambda m, t: t.mvlgamma_(2), lambda m, t: t.igamma_(m.tensor([0.5, 1.0, 2.0])),
               lambda m, t: t.igammac_(m.tensor([0.5, 1.0, 2.0])), lambda m, t: t.xlogy_(m.tensor([0.5, 1.0, 2.0])),
               lambda m, t: m.xlogy_(t, 2.0), lambda m, t: m.i0_(t)):
        tt, ff = torch.tensor([0.7, 1.5, 2.5]), ft.tensor([0.7, 1.5, 2.5])
        rt, rf = fn(torch, tt), fn(ft, ff)
        assert rf is ff and rt is tt
        _cmp(ff, tt, 1e-6)
    # the in-place write is recorded with the op's own grad_fn
    for m in (torch, ft):
        x = m.tensor([0.3, 0.6], requires_grad=True)
        y = x * 1.0
        y.sinc_()
        assert type(y.grad_fn).__name__ == "SincBackward0"
    f = ft.tensor([0.3, 0.6], requires_grad=True)
    t = torch.tensor([0.3, 0.6], requires_grad=True)
    (f * 1.0).xlogy_(ft.tensor([2.0, 3.0])).sum().backward()
    (t * 1.0).xlogy_(torch.tensor([2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_out_argument():
    for fn in (lambda m, o: m.special.i1e(m.tensor([1.0, 2.0]), out=o),
               lambda m, o: m.special.bessel_j1(m.tensor([1.0, 2.0]), out=o),
               lambda m, o: m.special.chebyshev_polynomial_t(m.tensor([0.5, 0.2]), 3, out=o),
               lambda m, o: m.polygamma(1, m.tensor([1.0, 2.0]), out=o),
               lambda m, o: m.special.gammainc(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0]), out=o)):
        ot, of = torch.empty(2), ft.empty(2)
        fn(torch, ot)
        fn(ft, of)
        _cmp(of, ot, 1e-6)
