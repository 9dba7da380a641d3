"""Parity with torch 2.13 for a Gaussian-process red team's linalg / autograd findings: cholesky, cholesky_ex, eigh
and eigvalsh read one triangle only, so a NaN / inf in the other one reaches neither the result nor its gradient
(the facade's symmetrised surrogate let it in); an inf on the diagonal gives torch's L and info; cholesky_ex's
gradient on a matrix that is not positive definite is torch's (its formula at the partial factor), not NaN; abs's
gradient at 0 is ``grad * sgn(x)`` (a NaN / inf upstream gives NaN); cholesky_inverse of a factor with a zero
diagonal element raises LinAlgError; MultivariateNormal's results take scale_tril's dtype (torch's
linalg.solve_triangular casts B to A's dtype); eigh / eigvalsh take a lowercase UPLO and refuse a non-str one."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

NAN, INF = float("nan"), float("inf")


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - compared
        return type(e).__name__, str(e)
    return None


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)


# matrices whose chosen triangle is positive definite while the other holds a NaN / inf (upper=False / UPLO='L'
# reads the lower one)
_LOWER_OK = [[[4.0, NAN], [1.0, 3.0]], [[4.0, INF], [1.0, 3.0]], [[4.0, -INF, NAN], [1.0, 3.0, INF], [0.5, 0.2, 2.0]]]
_UPPER_OK = [[[4.0, 1.0], [NAN, 3.0]], [[4.0, 1.0, 0.5], [INF, 3.0, 0.2], [NAN, -INF, 2.0]]]


def _cases():
    return [(m, False) for m in _LOWER_OK] + [(m, True) for m in _UPPER_OK]


@pytest.mark.parametrize("m,upper", _cases())
@pytest.mark.parametrize("fn", ["cholesky", "cholesky_ex", "eigh", "eigvalsh"])
@pytest.mark.parametrize("dt", ["float64"])
def test_other_triangle_stays_out_of_values_and_gradients(m, upper, fn, dt):
    def run(L):
        A = L.tensor(m, dtype=getattr(L, dt), requires_grad=True)
        if fn in ("cholesky", "cholesky_ex"):
            out = getattr(L.linalg, fn)(A, upper=upper)
            vals = out if fn == "cholesky" else out[0]
            loss = (vals.real * L.arange(1.0, 1 + vals.numel(), dtype=L.float64).reshape(vals.shape)).sum()
            extra = [] if fn == "cholesky" else [out.info.item()]
        elif fn == "eigh":
            w, v = L.linalg.eigh(A, UPLO="U" if upper else "L")
            vals, extra = w, [np.abs(v.detach().numpy())]
            loss = (w * L.tensor([1.0, 3.0, 5.0][:w.shape[-1]], dtype=L.float64)).sum() + v[..., 0].abs().sum()
        else:
            vals = L.linalg.eigvalsh(A, UPLO="U" if upper else "L")
            extra, loss = [], (vals * L.tensor([1.0, 3.0, 5.0][:vals.shape[-1]], dtype=L.float64)).sum()
        loss.backward()
        return [vals.detach().numpy(), A.grad.numpy()] + extra
    got, want = run(ft), run(torch)
    assert np.isfinite(want[0]).all() and np.isfinite(want[1]).all()
    for g, w in zip(got, want):
        _close(g, w)


def test_other_triangle_nan_float32_defaults():
    """The red team's float32 repros: eigvalsh finite, cholesky succeeds, cholesky_ex's info 0."""
    for m in ([[4.0, NAN], [1.0, 3.0]], [[4.0, INF], [1.0, 3.0]]):
        np.testing.assert_allclose(ft.linalg.eigvalsh(ft.tensor(m)).numpy(), torch.linalg.eigvalsh(torch.tensor(m)),
                                   rtol=1e-6)
        np.testing.assert_allclose(ft.linalg.cholesky(ft.tensor(m)).numpy(), torch.linalg.cholesky(torch.tensor(m)),
                                   rtol=1e-6)
        assert ft.linalg.cholesky_ex(ft.tensor(m)).info.item() == 0


@pytest.mark.parametrize("m", [[[INF, 0.0], [0.0, 1.0]], [[INF, 1.0], [1.0, 1.0]],
                               [[4.0, 1, 0], [1, INF, 0], [0, 0, 1.0]], [[1.0, 0.0], [0.0, INF]], [[1.0, 0.0], [INF, 1.0]], [[-INF, 0.0], [0.0, 1.0]]])
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_inf_on_the_diagonal(m, dt, upper):
    got = ft.linalg.cholesky_ex(ft.tensor(m, dtype=getattr(ft, dt)), upper=upper)
    want = torch.linalg.cholesky_ex(torch.tensor(m, dtype=getattr(torch, dt)), upper=upper)
    np.testing.assert_array_equal(got.L.numpy(), want.L.numpy())
    assert got.info.item() == want.info.item()
    g = _err(lambda: ft.linalg.cholesky(ft.tensor([m, m], dtype=getattr(ft, dt))))
    w = _err(lambda: torch.linalg.cholesky(torch.tensor([m, m], dtype=getattr(torch, dt))))
    assert g == w


@pytest.mark.parametrize("m", [[[1.0, 2.0], [2.0, 1.0]], [[4.0, 1.0, 2.0], [1.0, -3.0, 0.5], [2.0, 0.5, 5.0]],
                               [[-1.0, 0.0], [0.0, 2.0]], [[1.0, 3.0, 0.0], [3.0, 2.0, 1.0], [0.0, 1.0, 4.0]]])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dt", ["float64", "complex128"])
def test_cholesky_ex_gradient_of_a_failed_factorization(m, upper, dt):
    def run(L):
        A = L.tensor(m, dtype=getattr(L, dt), requires_grad=True)
        F, info = L.linalg.cholesky_ex(A, upper=upper)
        (F.real * L.arange(1.0, 1 + F.numel(), dtype=L.float64).reshape(F.shape)).sum().backward()
        return F.detach().numpy(), info.item(), A.grad.numpy()
    (gF, gi, gg), (wF, wi, wg) = run(ft), run(torch)
    assert gi == wi > 0
    _close(gF, wF)
    assert np.isfinite(wg).all()
    _close(gg, wg)


def _abs_grads(L):
    res = []
    t = L.tensor([0.0, 1.0], requires_grad=True)
    t.abs().sqrt().sum().backward()
    res.append(t.grad)
    for up in (NAN, INF, -INF, 2.0):
        t = L.tensor([0.0, 1.0, -2.0, NAN], requires_grad=True)
        (t.abs() * up).sum().backward()
        res.append(t.grad)
    t = L.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    L.linalg.vector_norm(t, ord=1, dim=-1).sqrt().sum().backward()
    res.append(t.grad)
    x = L.tensor([0.0, 1.0], requires_grad=True)
    L.dist(x, L.tensor([0.0, 2.0]), p=1).sqrt().backward()
    res.append(x.grad)
    x = L.tensor([0.0, 1.0], requires_grad=True)
    L.nn.functional.l1_loss(x, L.tensor([0.0, 2.0]), reduction="none").sqrt().sum().backward()
    res.append(x.grad)
    z = L.tensor([0j, 1 + 1j, -2.0], requires_grad=True)
    (z.abs() * L.tensor([NAN, 1.0, 2.0])).sum().backward()
    res.append(z.grad)
    x = L.tensor([0.0, 1.0, -2.0], dtype=L.float64, requires_grad=True)  # double backward: d/dx of grad * sgn(x) is 0
    g, = L.autograd.grad(x.abs().pow(3).sum(), x, create_graph=True)
    g.sum().backward()
    res += [g.detach(), x.grad]
    return [r.numpy() for r in res]


def test_abs_gradient_is_grad_times_sgn():
    for g, w in zip(_abs_grads(ft), _abs_grads(torch)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("m,upper", [([[0.0, 0.0], [1.0, 1.0]], False), ([[0.0, 0.0], [1.0, 1.0]], True),
                                     ([[1.0, 0.0], [1.0, 0.0]], False), ([[0.0, 0.0], [0.0, 0.0]], True)])
def test_cholesky_inverse_of_a_singular_factor(m, upper):
    g = _err(lambda: ft.cholesky_inverse(ft.tensor(m), upper=upper))
    w = _err(lambda: torch.cholesky_inverse(torch.tensor(m), upper=upper))
    assert g == w and w[0] == "_LinAlgError"
    assert _err(lambda: ft.tensor(m, requires_grad=True).cholesky_inverse(upper)) == g
    assert _err(lambda: ft.cholesky_inverse(ft.tensor(m), upper, out=ft.empty(2, 2))) == g
    assert isinstance(_err_obj(lambda: ft.cholesky_inverse(ft.tensor(m))), ft.linalg.LinAlgError)


def _err_obj(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - returned
        return e
    return None


def test_cholesky_inverse_batched_error_and_valid_inputs():
    for shape, idx in (((3, 2, 2), (1, 1, 1)), ((2, 3, 2, 2), (1, 1, 1, 1))):
        def run(L):
            B = L.eye(2).repeat(*shape[:-2], 1, 1)
            B[idx] = 0
            return _err(lambda: L.cholesky_inverse(B))
        assert run(ft) == run(torch)
    for m in ([[-1.0, 0.0], [1.0, 2.0]], [[1.0, 0.0], [1.0, NAN]]):  # (no zero on the diagonal: no error)
        np.testing.assert_allclose(ft.cholesky_inverse(ft.tensor(m)).numpy(), torch.cholesky_inverse(torch.tensor(m)))
    assert tuple(ft.cholesky_inverse(ft.zeros(0, 0)).shape) == (0, 0)


@pytest.mark.parametrize("ld,sd,vd", [("float32", "float32", "float64"), ("float64", "float32", "float32"),
                                      ("float64", "float32", "float64")])
def test_multivariate_normal_result_dtypes(ld, sd, vd):
    def run(L):
        D = L.distributions
        tril = L.tensor([[1.0, 0.0], [0.5, 2.0]], dtype=getattr(L, sd))
        m = D.MultivariateNormal(L.zeros(2, dtype=getattr(L, ld)), scale_tril=tril)
        v = L.tensor([0.3, -1.0], dtype=getattr(L, vd))
        q = D.MultivariateNormal(L.ones(2, dtype=getattr(L, vd)), scale_tril=2 * L.eye(2, dtype=getattr(L, vd)))
        p = D.MultivariateNormal(L.zeros(2, dtype=getattr(L, ld)),
                                 precision_matrix=L.tensor([[2.0, 0.3], [0.3, 1.0]], dtype=getattr(L, sd)))
        r = [m.log_prob(v), D.kl_divergence(m, q), D.kl_divergence(q, m), p.scale_tril, p.log_prob(v),
             m.precision_matrix]
        return [(str(x.dtype).split(".")[-1], x.detach().numpy()) for x in r]
    for (gd, g), (wd, w) in zip(run(ft), run(torch)):
        assert gd == wd
        np.testing.assert_allclose(g, w, rtol=1e-5)


@pytest.mark.parametrize("uplo", ["l", "u", None, 1, 1.5])
@pytest.mark.parametrize("fn", ["eigh", "eigvalsh"])
def test_eigh_uplo_argument(uplo, fn):
    def run(L):
        S = L.tensor([[4.0, 1.0], [9.0, 3.0]])
        r = getattr(L.linalg, fn)(S, UPLO=uplo)
        return (r[0] if fn == "eigh" else r).numpy()
    w = _err(lambda: run(torch))
    if w is not None:
        assert _err(lambda: run(ft)) == w
    else:
        np.testing.assert_allclose(run(ft), run(torch), rtol=1e-6)
