"""Parity with torch 2.13 for discrepancies a red team found in NeRF / image-processing code: ``bincount`` of
uint8 / int8 / int16 input (its length computed in the input's dtype wrapped: 255 + 1 -> 0), the half-precision
loss reductions (summed in float16: ``mse_loss`` was inf), ``F.grid_sample`` in float16 / bfloat16 (computed in
float32, where torch computes in the dtype, each op rounded) and the divisor gradient of ``remainder`` (torch's
``-grad * a.div(b, rounding_mode='floor')``)."""
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _np(t):
    return np.asarray(t.detach().double()) if hasattr(t, "detach") else np.asarray(t)


def _same(a, b):
    np.testing.assert_array_equal(_np(a), _np(b))
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)


# ---- bincount ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["uint8", "int8", "int16"])
def test_bincount_small_int_length(dt):
    vals = {"uint8": [0, 255, 3, 255], "int8": [1, 127, 127], "int16": [5, 32767]}[dt]
    t = torch.bincount(torch.tensor(vals, dtype=getattr(torch, dt)))
    f = ft.bincount(ft.tensor(vals, dtype=getattr(ft, dt)))
    _same(t, f)
    w = [0.5 * (i + 1) for i in range(len(vals))]
    t = torch.bincount(torch.tensor(vals, dtype=getattr(torch, dt)), weights=torch.tensor(w))
    f = ft.bincount(ft.tensor(vals, dtype=getattr(ft, dt)), weights=ft.tensor(w))
    _same(t, f)
    t = torch.bincount(torch.tensor(vals[:1], dtype=getattr(torch, dt)), minlength=256)
    f = ft.bincount(ft.tensor(vals[:1], dtype=getattr(ft, dt)), minlength=256)
    _same(t, f)


def test_bincount_uint8_histogram_under_vmap():
    img = np.random.RandomState(0).randint(0, 256, (2, 300)).astype(np.uint8)
    img[:, 0] = 255  # (both examples have the same length, as torch's per-example fallback needs)
    t = torch.func.vmap(lambda x: torch.bincount(x, minlength=256))(torch.tensor(img))
    f = ft.func.vmap(lambda x: ft.bincount(x, minlength=256))(ft.tensor(img))
    _same(t, f)


# ---- half-precision loss reductions ------------------------------------------------------------------------------
def _loss_inputs():
    rs = np.random.RandomState(0)
    a = (rs.rand(1, 2, 4, 6) * 255).astype(np.float32)
    p = rs.rand(5000).astype(np.float32)
    q = (rs.rand(5000) > 0.5).astype(np.float32)
    return a, a[..., ::-1].copy(), p, q


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_loss_reductions_accumulate_in_float32(dt):
    a, b, p, q = _loss_inputs()
    cases = [("mse_loss", a, b), ("mse_loss", a / 255, b / 255), ("l1_loss", p, q), ("l1_loss", a, b),
             ("smooth_l1_loss", a, b), ("huber_loss", a, b), ("binary_cross_entropy", np.clip(p, 0.01, 0.99), q),
             ("binary_cross_entropy_with_logits", p * 4 - 2, q)]
    for reduction in ("mean", "sum"):
        for name, x, y in cases:
            out = []
            for lib in (torch, ft):
                xt, yt = lib.tensor(x).to(getattr(lib, dt)), lib.tensor(y).to(getattr(lib, dt))
                out.append(getattr(lib.nn.functional, name)(xt, yt, reduction=reduction))
            _same(*out)


def test_half_mse_loss_mean_no_overflow_and_grad():
    a, b, _, _ = _loss_inputs()
    res = []
    for lib in (torch, ft):
        x = lib.tensor(a).half().requires_grad_(True)
        r = lib.nn.functional.mse_loss(x, lib.tensor(b).half())
        r.backward()
        res.append((r, x.grad))
    assert float(res[0][0].detach()) == 9496.0
    _same(res[0][0], res[1][0])
    _same(res[0][1], res[1][1])


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_nll_and_cross_entropy_sum_as_aten_cascade(dt):
    """ATen's half nll_loss sums in the dtype through 8 cascaded partial sums (blocks of 16), class weights and
    ignored targets included; nll_loss2d (4-d input) likewise."""
    rs = np.random.RandomState(0)
    lg = (rs.randn(300, 10) * 3).astype(np.float32)
    tg = rs.randint(0, 10, 300)
    tg[::7] = -100
    wt = (rs.rand(10) + 0.5).astype(np.float32)
    img = rs.randn(2, 5, 7, 9).astype(np.float32)
    timg = rs.randint(0, 5, (2, 7, 9))
    timg[0, 0, :4] = -100
    for reduction, w in (("mean", wt), ("sum", None)):
        res = []
        for lib in (torch, ft):
            half = getattr(lib, dt)
            wl = None if w is None else lib.tensor(w).to(half)
            res.append((lib.nn.functional.cross_entropy(lib.tensor(lg).to(half), lib.tensor(tg), weight=wl,
                                                        reduction=reduction),
                        lib.nn.functional.nll_loss(lib.tensor(lg).to(half), lib.tensor(tg), weight=wl,
                                                   reduction=reduction),
                        lib.nn.functional.cross_entropy(lib.tensor(img).to(half), lib.tensor(timg),
                                                        reduction=reduction)))
        for t, f in zip(*res):
            _same(t, f)


# ---- grid_sample in float16 / bfloat16 ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_grid_sample_half_computes_in_dtype(dt):
    rs = np.random.RandomState(0)
    cases = [(rs.rand(2, 3, 5, 6) * 4 - 1, rs.rand(2, 7, 9, 2) * 2.6 - 1.3),
             (rs.rand(2, 2, 4, 5, 3), rs.rand(2, 3, 4, 5, 3) * 2.6 - 1.3)]
    configs = [(0, "bilinear", "zeros", False), (0, "bilinear", "border", True), (0, "bilinear", "reflection", False),
               (0, "nearest", "reflection", True), (0, "bicubic", "zeros", False), (0, "bicubic", "reflection", True),
               (1, "bilinear", "reflection", False), (1, "nearest", "border", True)]
    for k, mode, pad, ac in configs:
        feat, grid = cases[k]
        out = [lib.nn.functional.grid_sample(
            lib.tensor(feat.astype(np.float32)).to(getattr(lib, dt)),
            lib.tensor(grid.astype(np.float32)).to(getattr(lib, dt)),
            mode=mode, padding_mode=pad, align_corners=ac) for lib in (torch, ft)]
        _same(*out)


def test_grid_sample_bfloat16_integer_corner_beyond_256():
    """bfloat16 holds no odd integer above 256: the neighbour's index is an integer ``+ 1``, its weight
    ``1 - frac``."""
    rs = np.random.RandomState(1)
    feat = rs.rand(1, 2, 64, 300).astype(np.float32)
    grid = (rs.rand(1, 6, 7, 2) * 2.2 - 1.1).astype(np.float32)
    grid[0, 0, 0] = [0.7891, -0.1094]  # (x lands on 268.0 exactly)
    out = [lib.nn.functional.grid_sample(lib.tensor(feat).bfloat16(), lib.tensor(grid).bfloat16(),
                                         align_corners=False) for lib in (torch, ft)]
    _same(*out)


# ---- remainder's divisor gradient --------------------------------------------------------------------------------
def test_remainder_divisor_grad_uses_floor_division():
    av = [5., 1., 0.7, -5., 3.3, 10.]
    bv = [0.2, 0.1, 0.1, 0.2, 1.1, 0.1]
    res = []
    for lib in (torch, ft):
        a = lib.tensor(av, requires_grad=True)
        b = lib.tensor(bv, requires_grad=True)
        r = lib.remainder(a, b)
        (r * lib.arange(1., 7.)).sum().backward()
        b2 = lib.tensor(bv, requires_grad=True)
        (lib.tensor([[5.], [1.]]) % b2).sum().backward()  # (broadcast: the gradient summed back)
        res.append((r, a.grad, b.grad, b2.grad))
    assert res[0][2].tolist() == [-24., -18., -18., 100., -10., -594.]
    for t, f in zip(*res):
        _same(t, f)


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_identity_base_grid_bit_exact_as_torch(align_corners):
    """ATen's linspace_from_neg_one: torch's symmetric linspace, then ``range * (n - 1) / n`` (two roundings); a
    multiply by the rounded ratio was an ulp off at some sizes (an identity warp's grid, a nearest-mode grid_sample
    of it then picks another pixel)."""
    res = []
    for m in (torch, ft):
        t = m.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        res.append([m.nn.functional.affine_grid(t, (1, 1, n, n + 3), align_corners=align_corners).flatten().tolist()
                    for n in range(1, 30)])
    assert res[1] == res[0]
