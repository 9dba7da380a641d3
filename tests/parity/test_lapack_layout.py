"""LAPACK and FFT ops' results laid out as torch's: LAPACK's column-major (batches contiguous), pocketfft's transformed
dims innermost; strides, contiguity, and so which ``.view`` calls work (``inv(A).mT.view(-1)`` does,
``inv(A).view(-1)`` raises), against real torch."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _mk(m, *shape, seed=0):
    return m.tensor(np.random.RandomState(seed + sum(shape)).randn(*shape).astype("float32"))


def _sq(m, *b, n=3):
    return _mk(m, *b, n, n) + 3 * m.eye(n)


def _spd(m, *b, n=3):
    a = _mk(m, *b, n, n, seed=1)
    return a @ a.mT + n * m.eye(n)


def _chol(m, *b):
    return m.linalg.cholesky(_spd(m, *b))


CASES = {
    "inv": lambda m, b: m.linalg.inv(_sq(m, *b)),
    "inverse": lambda m, b: m.inverse(_sq(m, *b)),
    "inv_ex": lambda m, b: m.linalg.inv_ex(_sq(m, *b)),
    "inv_of_transposed": lambda m, b: m.linalg.inv(_sq(m, *b).mT),
    "inv_float64": lambda m, b: m.linalg.inv(_sq(m, *b).double()),
    "inv_1x1": lambda m, b: m.linalg.inv(_sq(m, *b)[..., :1, :1]),
    "inv_empty": lambda m, b: m.linalg.inv(m.zeros(*b, 0, 0)),
    "inv_zero_batch": lambda m, b: m.linalg.inv(m.zeros(0, *b, 3, 3)),
    "solve": lambda m, b: m.linalg.solve(_sq(m, *b), _mk(m, *b, 3, 2)),
    "solve_vector": lambda m, b: m.linalg.solve(_sq(m, *b), _mk(m, *b, 3)),
    "solve_broadcast": lambda m, b: m.linalg.solve(_sq(m, *b), _mk(m, 2, 2, 3, 2)),
    "solve_left_false": lambda m, b: m.linalg.solve(_sq(m, *b), _mk(m, *b, 2, 3), left=False),
    "solve_ex": lambda m, b: m.linalg.solve_ex(_sq(m, *b), _mk(m, *b, 3, 2)),
    "cholesky": lambda m, b: _chol(m, *b),
    "cholesky_upper": lambda m, b: m.linalg.cholesky(_spd(m, *b), upper=True),
    "cholesky_ex": lambda m, b: m.linalg.cholesky_ex(_spd(m, *b)),
    "cholesky_legacy": lambda m, b: m.cholesky(_spd(m, *b)),
    "cholesky_solve": lambda m, b: m.cholesky_solve(_mk(m, *b, 3, 2), _chol(m, *b)),
    "cholesky_inverse": lambda m, b: m.cholesky_inverse(_chol(m, *b)),
    "qr": lambda m, b: m.linalg.qr(_mk(m, *b, 4, 3)),
    "qr_complete": lambda m, b: m.linalg.qr(_mk(m, *b, 4, 3), mode="complete"),
    "qr_r": lambda m, b: m.linalg.qr(_mk(m, *b, 4, 3), mode="r"),
    "qr_wide": lambda m, b: m.linalg.qr(_mk(m, *b, 3, 4)),
    "svd": lambda m, b: m.linalg.svd(_mk(m, *b, 4, 3)),
    "svd_reduced": lambda m, b: m.linalg.svd(_mk(m, *b, 4, 3), full_matrices=False),
    "svd_legacy": lambda m, b: m.svd(_mk(m, *b, 4, 3)),
    "svd_legacy_full": lambda m, b: m.svd(_mk(m, *b, 4, 3), some=False),
    "eigh": lambda m, b: m.linalg.eigh(_spd(m, *b)),
    "eig": lambda m, b: m.linalg.eig(_sq(m, *b)),
    "lu_factor": lambda m, b: m.linalg.lu_factor(_sq(m, *b)),
    "lu_factor_ex": lambda m, b: m.linalg.lu_factor_ex(_sq(m, *b)),
    "lu": lambda m, b: m.linalg.lu(_sq(m, *b)),
    "lu_solve": lambda m, b: m.linalg.lu_solve(*m.linalg.lu_factor(_sq(m, *b)), _mk(m, *b, 3, 2)),
    "lu_solve_adjoint": lambda m, b: m.linalg.lu_solve(*m.linalg.lu_factor(_sq(m, *b)), _mk(m, *b, 3, 2),
                                                       adjoint=True),
    "lu_solve_right": lambda m, b: m.linalg.lu_solve(*m.linalg.lu_factor(_sq(m, *b)), _mk(m, *b, 2, 3), left=False),
    "lu_unpack": lambda m, b: m.lu_unpack(*m.linalg.lu_factor(_sq(m, *b))),
    "ldl_factor": lambda m, b: m.linalg.ldl_factor(_spd(m, *b)),
    "ldl_solve": lambda m, b: m.linalg.ldl_solve(*m.linalg.ldl_factor(_spd(m, *b)), _mk(m, *b, 3, 2)),
    "solve_triangular": lambda m, b: m.linalg.solve_triangular(_chol(m, *b), _mk(m, *b, 3, 2), upper=False),
    "solve_triangular_right": lambda m, b: m.linalg.solve_triangular(_chol(m, *b), _mk(m, *b, 2, 3), upper=False,
                                                                     left=False),
    "triangular_solve": lambda m, b: m.triangular_solve(_mk(m, *b, 3, 2), _chol(m, *b), upper=False),
    "lstsq_tall": lambda m, b: m.linalg.lstsq(_mk(m, *b, 5, 3), _mk(m, *b, 5, 2)).solution,
    "lstsq_wide": lambda m, b: m.linalg.lstsq(_mk(m, *b, 3, 4), _mk(m, *b, 3, 2)).solution,
    "geqrf": lambda m, b: m.geqrf(_mk(m, *b, 4, 3)),
    "householder_product": lambda m, b: m.linalg.householder_product(*m.geqrf(_mk(m, *b, 4, 3))),
    "ormqr": lambda m, b: m.ormqr(*m.geqrf(_mk(m, *b, 4, 3)), _mk(m, *b, 4, 2)),
    "ormqr_right": lambda m, b: m.ormqr(*m.geqrf(_mk(m, *b, 4, 3)), _mk(m, *b, 2, 4), left=False),
    "tensorinv": lambda m, b: m.linalg.tensorinv(_mk(m, 4, 2, 2) + m.eye(4).reshape(4, 2, 2), ind=1),
    # row-major in torch too (not LAPACK's layout): unchanged
    "matrix_exp": lambda m, b: m.linalg.matrix_exp(_sq(m, *b)),
    "pinv": lambda m, b: m.linalg.pinv(_mk(m, *b, 3, 4)),
    "matrix_power": lambda m, b: m.linalg.matrix_power(_sq(m, *b), -2),
}


def _layout(r):
    rs = r if isinstance(r, tuple) else (r,)
    return [(tuple(x.shape), x.stride(), x.is_contiguous(), x.mT.is_contiguous() if x.dim() >= 2 else None)
            for x in rs if x.dim() >= 1]


@pytest.mark.parametrize("batch", [(), (2,)], ids=["single", "batched"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_strides_as_torch(name, batch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _layout(CASES[name](torch, batch))
        got = _layout(CASES[name](ft, batch))
    assert got == want


def test_views_of_results_as_torch():
    for m in (torch, ft):
        a = _sq(m, 2)
        assert m.linalg.inv(a).mT.reshape(2, 9).is_contiguous()
        assert m.linalg.inv(a).mT.view(2, 9).shape == (2, 9)
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            m.linalg.inv(a).view(2, 9)
    want = torch.linalg.solve(_sq(torch, 2), torch.ones(2, 3, 2)).mT.reshape(-1)
    got = ft.linalg.solve(_sq(ft, 2), ft.ones(2, 3, 2)).mT.view(-1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


def test_values_grads_and_out_unchanged_by_the_layout():
    """The re-laid result keeps its values, its grad_fn and its gradients; an out= tensor keeps its own strides."""
    res = {}
    for m in (torch, ft):
        a = _sq(m, 2).requires_grad_()
        x = m.linalg.inv(a)
        (x * m.arange(9.).reshape(3, 3)).sum().backward()
        o = m.empty(2, 3, 3)
        m.linalg.inv(a.detach(), out=o)
        u, s, vh = m.linalg.svd(a.detach())
        res[m] = (x.detach().numpy(), a.grad.numpy(), type(x.grad_fn).__name__, o.stride(),
                  (u @ m.diag_embed(s) @ vh).numpy(), x.add(1).stride(), x.clone().stride())
    t, f = res[torch], res[ft]
    for i in (0, 1, 4):
        np.testing.assert_allclose(f[i], t[i], rtol=1e-4, atol=1e-5)
    assert f[2:4] == t[2:4] and f[5:] == t[5:]


def test_compiled_and_meta():
    """Under compile the result's values are eager's; a meta tensor's strides are torch's."""
    a = _sq(ft, 2)

    @ft.compile
    def f(a):
        return ft.linalg.inv(a).mT.reshape(2, 9) + 1

    np.testing.assert_allclose(f(a).numpy(), (torch.linalg.inv(_sq(torch, 2)).mT.reshape(2, 9) + 1).numpy(),
                               rtol=1e-5)
    assert ft.linalg.inv(ft.empty(2, 3, 3, device="meta")).stride() == \
        torch.linalg.inv(torch.empty(2, 3, 3, device="meta")).stride()
    assert ft.linalg.cholesky_ex(ft.empty(3, 3, device="meta")).L.stride() == (1, 3)


# ---- FFT kernels: the transformed dims innermost, the others in the input's memory order (pocketfft's layout) ----
def _x(m):
    return m.tensor(np.random.RandomState(0).randn(3, 4, 5).astype("float32"))


def _xc(m):
    x = _x(m)
    return m.complex(x, x.flip(0))


FFT_CASES = {
    "fft_dim0": lambda m: m.fft.fft(_x(m), dim=0), "fft_dim1": lambda m: m.fft.fft(_x(m), dim=1),
    "rfft_dim0": lambda m: m.fft.rfft(_x(m), dim=0), "irfft_dim0": lambda m: m.fft.irfft(_xc(m), dim=0),
    "fftn_02": lambda m: m.fft.fftn(_x(m), dim=(2, 0)), "rfftn_01": lambda m: m.fft.rfftn(_x(m), dim=(0, 1)),
    "irfftn_01": lambda m: m.fft.irfftn(_xc(m), dim=(0, 1)), "ifft2_01": lambda m: m.fft.ifft2(_xc(m), dim=(0, 1)),
    "hfft_dim0": lambda m: m.fft.hfft(_xc(m), dim=0), "ihfft_dim0": lambda m: m.fft.ihfft(_x(m), dim=0),
    "fft_padded": lambda m: m.fft.fft(_x(m), n=7, dim=0),
    "fft_transposed_last": lambda m: m.fft.fft(_x(m).transpose(0, 2), dim=-1),
    "fft_transposed_0": lambda m: m.fft.fft(_x(m).transpose(0, 2), dim=0),
    "fft_permuted": lambda m: m.fft.fft(_x(m).permute(1, 2, 0), dim=1),
    "fft_last_contiguous": lambda m: m.fft.fft(_x(m), dim=-1), "rfft2": lambda m: m.fft.rfft2(_x(m)),
    "fftshift_of_fft": lambda m: m.fft.fftshift(m.fft.fft(_x(m), dim=0), dim=0),
}


@pytest.mark.parametrize("name", sorted(FFT_CASES))
def test_fft_strides_as_torch(name):
    want, got = FFT_CASES[name](torch), FFT_CASES[name](ft)
    assert (tuple(got.shape), got.stride(), got.is_contiguous()) == (tuple(want.shape), want.stride(),
                                                                     want.is_contiguous())
    np.testing.assert_allclose(got.resolve_conj().numpy(), want.resolve_conj().numpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match="view size is not compatible") if not want.is_contiguous() else \
            warnings.catch_warnings():
        got.view(-1)


# ---- the saved results: torch's backward reads them, so an in-place change before backward is refused ----------
SAVED = {
    "inv": lambda m, a: m.linalg.inv(a), "inv_ex": lambda m, a: m.linalg.inv_ex(a).inverse,
    "cholesky": lambda m, a: m.linalg.cholesky(a), "solve": lambda m, a: m.linalg.solve(a, m.ones(3, 1)),
    "det": lambda m, a: m.linalg.det(a).reshape(1), "pinv": lambda m, a: m.linalg.pinv(a),
    "cholesky_inverse": lambda m, a: m.cholesky_inverse(a),
    "cholesky_solve": lambda m, a: m.cholesky_solve(m.ones(3, 1), a),
    "solve_triangular": lambda m, a: m.linalg.solve_triangular(a, m.ones(3, 1), upper=False),
}


@pytest.mark.parametrize("name", sorted(SAVED))
def test_inplace_change_of_a_saved_result_refused(name):
    for m in (torch, ft):
        a = m.tensor([[4., 1., .5], [1., 3., .2], [.5, .2, 2.]], requires_grad=True)
        r = SAVED[name](m, a)
        r.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            r.sum().backward()
