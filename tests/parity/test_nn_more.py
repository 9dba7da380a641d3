"""Parity of the 1-d / 3-d convolution and pooling ops, adaptive max pooling, the channel-wise and alpha
dropouts and ``nn.ParameterDict`` with PyTorch: values, dtypes, shapes, grad_fn names, gradients, errors,
module reprs; plus compiled training steps that equal eager."""
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import assert_same_error, run

R = np.random.default_rng(7)


def rnd(*s):
    return R.standard_normal(s).astype(np.float32)


def _np(t):
    return t.detach().numpy()


def _gname(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# ---- values, grad_fn names and gradients ---------------------------------------------------------------------
# name -> (input arrays, fn(lib, *tensors) -> tensor or tuple (first output is differentiated))
CASES = {
    "conv3d": ([rnd(2, 4, 5, 6, 5), rnd(6, 2, 2, 3, 2), rnd(6)],
               lambda L, x, w, b: L.nn.functional.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1),
                                                          dilation=(2, 1, 1), groups=2)),
    "conv3d-unbatched-same": ([rnd(3, 4, 4, 5), rnd(2, 3, 3, 2, 3)],
                              lambda L, x, w: L.nn.functional.conv3d(x, w, padding="same")),
    "conv3d-top-level": ([rnd(2, 4, 5, 6, 5), rnd(6, 2, 2, 3, 2), rnd(6)],  # (shapes as above: cached kernels)
                         lambda L, x, w, b: L.conv3d(x, w, b, (1, 2, 1), (1, 0, 1), (2, 1, 1), 2)),
    "max_pool1d": ([rnd(2, 3, 9)], lambda L, x: L.nn.functional.max_pool1d(x, 3, 2, padding=1, ceil_mode=True)),
    "max_pool1d-dilation-indices": ([rnd(2, 3, 10)],
                                    lambda L, x: L.nn.functional.max_pool1d(x, 2, 3, dilation=2, return_indices=True)),
    "max_pool1d-unbatched": ([rnd(3, 7)], lambda L, x: L.nn.functional.max_pool1d(x, 2)),
    "avg_pool1d": ([rnd(2, 3, 9)], lambda L, x: L.nn.functional.avg_pool1d(x, 3, 2, padding=1, ceil_mode=True,
                                                                          count_include_pad=False)),
    "avg_pool1d-unbatched": ([rnd(3, 8)], lambda L, x: L.nn.functional.avg_pool1d(x, 3, padding=1)),
    "max_pool3d": ([rnd(2, 2, 5, 6, 7)], lambda L, x: L.nn.functional.max_pool3d(x, (2, 3, 2), (1, 2, 2), padding=1,
                                                                                ceil_mode=True)),
    "max_pool3d-top-level": ([rnd(2, 2, 5, 6, 7)],
                             lambda L, x: L.max_pool3d(x, (2, 3, 2), (1, 2, 2), 1, 1, True)),
    "max_pool3d-indices-dilation": ([rnd(1, 2, 6, 5, 6)],
                                    lambda L, x: L.nn.functional.max_pool3d(x, 2, 2, dilation=(1, 2, 1),
                                                                            return_indices=True)),
    "avg_pool3d": ([rnd(2, 2, 5, 6, 7)], lambda L, x: L.nn.functional.avg_pool3d(x, 3, 2, padding=1, ceil_mode=True,
                                                                                count_include_pad=False)),
    "avg_pool3d-divisor": ([rnd(2, 4, 4, 6)],
                           lambda L, x: L.nn.functional.avg_pool3d(x, (2, 2, 3), divisor_override=5)),
    "adaptive_avg_pool1d": ([rnd(2, 3, 10)], lambda L, x: L.nn.functional.adaptive_avg_pool1d(x, 4)),
    "adaptive_avg_pool1d-1": ([rnd(3, 10)], lambda L, x: L.nn.functional.adaptive_avg_pool1d(x, 1)),
    "adaptive_avg_pool3d": ([rnd(2, 2, 5, 7, 6)], lambda L, x: L.nn.functional.adaptive_avg_pool3d(x, (3, None, 4))),
    "adaptive_max_pool1d": ([rnd(2, 3, 10)],
                            lambda L, x: L.nn.functional.adaptive_max_pool1d(x, 4, return_indices=True)),
    "adaptive_max_pool2d": ([rnd(2, 3, 7, 9)],
                            lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (3, 4), return_indices=True)),
    "adaptive_max_pool2d-none-unbatched": ([rnd(3, 5, 7)],
                                           lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (None, 3))),
    "adaptive_max_pool2d-upsampling": ([rnd(1, 2, 3, 2)], lambda L, x: L.nn.functional.adaptive_max_pool2d(x, 5)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_grad_fn_and_gradients_match_torch(name):
    arrays, fn = CASES[name]
    res = []
    for L in (torch, ft):
        xs = [L.tensor(a, requires_grad=True) for a in arrays]
        out = fn(L, *xs)
        outs = out if isinstance(out, tuple) else (out,)
        w = L.tensor(np.random.default_rng(3).standard_normal(tuple(outs[0].shape)).astype(np.float32))
        (outs[0] * w).sum().backward()
        res.append((outs, [x.grad for x in xs]))
    (t_outs, t_g), (f_outs, f_g) = res
    for t, f in zip(t_outs, f_outs):
        assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape)
        if t.dtype == torch.int64:
            np.testing.assert_array_equal(_np(f), _np(t))
        else:
            np.testing.assert_allclose(_np(f), _np(t), rtol=1e-5, atol=1e-5)
    assert _gname(f_outs[0]) == _gname(t_outs[0])
    for t, f in zip(t_g, f_g):
        np.testing.assert_allclose(_np(f), _np(t), rtol=1e-5, atol=1e-5)


def test_float64_and_bfloat16_keep_their_dtype():
    """The 1-d functions (the 3-d ops are in the op-table dtype sweep, _cases_conv.py)."""
    x0 = rnd(2, 3, 10)
    for dt in ("float64", "bfloat16"):
        outs = []
        for L in (torch, ft):
            x = L.tensor(x0).to(getattr(L, dt))
            F = L.nn.functional
            outs.append([F.max_pool1d(x, 2), F.avg_pool1d(x, 3), F.adaptive_avg_pool1d(x, 3),
                         F.adaptive_max_pool1d(x, 4)])
        for t, f in zip(*outs):
            assert str(f.dtype) == str(t.dtype)
            np.testing.assert_allclose(f.float().numpy(), t.float().numpy(), rtol=1e-2, atol=1e-2)


ERRORS = {
    "mp1-4d": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 3, 3), 2),
    "mp1-k-tuple": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 5), (2, 2)),
    "mp1-k0": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 5), 0),
    "mp1-pad": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 5), 2, padding=2),
    "mp1-small": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 3), 5),
    "mp1-long": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 5, dtype=L.int64), 2),
    "ap1-4d": lambda L: L.nn.functional.avg_pool1d(L.ones(2, 3, 3, 3), 2),
    "ap1-k-tuple": lambda L: L.nn.functional.avg_pool1d(L.ones(2, 3, 5), (2, 2)),
    "ap1-small": lambda L: L.nn.functional.avg_pool1d(L.ones(3, 5), 6),
    "mp3-3d": lambda L: L.nn.functional.max_pool3d(L.ones(3, 3), 2),
    "mp3-k-tuple": lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), (2, 2)),
    "mp3-k0": lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), 0, 1),
    "mp3-dilation": lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 4, 4), 2, dilation=0),
    "mp3-pad": lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 8, 8, 8), 2, padding=2, dilation=3),
    "mp3-small": lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 4, 5, 6), 5),
    "mp3-bool": lambda L: L.nn.functional.max_pool3d(L.ones(1, 1, 2, 2, 2, dtype=L.bool), 2),
    "ap3-small": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 5, 6), 5),
    "ap3-stride": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4), 2, (1, 1)),
    "ap3-div0": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 2, 4, 4, 4), 2, divisor_override=0),
    "ap3-bool": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2, dtype=L.bool), 2),
    "aap1-4d": lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(2, 3, 4, 5), 2),
    "aap1-tuple": lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(2, 3, 5), (2, 2)),
    "aap1-neg": lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(2, 3, 5), -1),
    "aap3-tuple": lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(2, 3, 4, 4, 4), (2, 2)),
    "aap3-neg": lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(2, 3, 4, 4, 4), -1),
    "aap3-long": lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(2, 3, 4, 4, 4, dtype=L.int64), 2),
    "amp1-4d": lambda L: L.nn.functional.adaptive_max_pool1d(L.ones(2, 3, 4, 5), 2),
    "amp2-1d": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(3), 2),
    "amp2-neg": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(2, 3, 5, 5), -1),
    "amp2-tuple": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(2, 3, 4, 4), (2, 2, 2)),
    "amp2-empty": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(2, 0, 4, 4), 2),
    "amp2-long": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(2, 3, 5, 5, dtype=L.int64), 2),
    "conv3d-channels": lambda L: L.nn.functional.conv3d(L.ones(2, 3, 4, 4), L.ones(4, 3, 2, 2, 2)),
    "conv3d-2d-input": lambda L: L.nn.functional.conv3d(L.ones(3, 4), L.ones(4, 3, 2, 2, 2)),
    "conv3d-bool": lambda L: L.nn.functional.conv3d(L.ones(1, 1, 2, 2, 2, dtype=L.bool), L.ones(1, 1, 1, 1, 1,
                                                                                               dtype=L.bool)),
    "dropout2d-p": lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4, 4), 1.5),
    "dropout1d-4d": lambda L: L.nn.functional.dropout1d(L.ones(2, 3, 4, 5), 0.5),
    "dropout2d-1d": lambda L: L.nn.functional.dropout2d(L.ones(3), 0.5),
    "alpha-dropout-long": lambda L: L.nn.functional.alpha_dropout(L.ones(2, 3, dtype=L.int64), 0.5, True),
    "Dropout3d-p": lambda L: L.nn.Dropout3d(p=-0.1),
    "paramdict-key": lambda L: L.nn.ParameterDict().__setitem__(1, L.ones(1)),
    "paramdict-call": lambda L: L.nn.ParameterDict()(1),
    "paramdict-update": lambda L: L.nn.ParameterDict().update(3),
    "paramdict-pair": lambda L: L.nn.ParameterDict([("a", L.ones(1), 3)]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    (t_out, t_err), (f_out, f_err) = run(ERRORS[name], torch), run(ERRORS[name], ft)
    assert t_err is not None, t_out
    assert_same_error(t_err, f_err, f_out)


def test_modules_repr_parameters_and_forward():
    x5, x3, x4 = rnd(2, 2, 4, 6, 6), rnd(2, 3, 8), rnd(2, 3, 5, 7)
    res = []
    for L in (torch, ft):
        rng = np.random.default_rng(0)
        nn = L.nn
        L.manual_seed(0)
        conv = nn.Conv3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=1, padding_mode="circular")
        names = [(n, tuple(p.shape)) for n, p in conv.named_parameters()]
        bound = 1 / np.sqrt(2 * 2 * 3 * 3)  # kaiming_uniform(a=sqrt(5)) and the bias: U(-1/sqrt(fan_in), ...)
        assert all(np.abs(_np(p)).max() <= bound + 1e-7 for p in conv.parameters())
        with L.no_grad():
            for p in conv.parameters():
                p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
        mods = [nn.MaxPool1d(3, 2, 1, return_indices=True), nn.AvgPool1d(3, 2, 1), nn.MaxPool3d(2, 1, 1),
                nn.AvgPool3d(2, ceil_mode=True), nn.AdaptiveAvgPool1d(3), nn.AdaptiveAvgPool3d((2, 3, None)),
                nn.AdaptiveMaxPool1d(3, return_indices=True), nn.AdaptiveMaxPool2d((3, None)),
                nn.Dropout1d(0.2), nn.Dropout2d(), nn.Dropout3d(0.3, inplace=True), nn.AlphaDropout(0.1),
                nn.FeatureAlphaDropout(0.4), nn.Conv3d(2, 4, 1, bias=False)]
        outs = [conv(L.tensor(x5)), mods[0](L.tensor(x3)), mods[1](L.tensor(x3)), mods[2](L.tensor(x5)),
                mods[3](L.tensor(x5)), mods[4](L.tensor(x3)), mods[5](L.tensor(x5)), mods[6](L.tensor(x3)),
                mods[7](L.tensor(x4))]
        res.append((repr(conv), names, [repr(m) for m in mods], outs,
                    [isinstance(mods[0], nn.MaxPool2d), isinstance(mods[9], nn.Dropout)]))
    (tr, tn, tm, to, ti), (fr, fn, fm, fo, fi) = res
    assert fr == tr and fn == tn and fm == tm and fi == ti
    for t, f in zip(to, fo):
        for a, b in zip(t if isinstance(t, tuple) else (t,), f if isinstance(f, tuple) else (f,)):
            assert str(b.dtype) == str(a.dtype) and tuple(b.shape) == tuple(a.shape)
            np.testing.assert_allclose(_np(b), _np(a), rtol=1e-5, atol=1e-5)


# ---- dropouts --------------------------------------------------------------------------------------------------
DROPOUTS = {  # name -> (fn(F, x, p, training, inplace), input shape, feature-wise)
    "dropout1d": (lambda F, x, p, t, i=False: F.dropout1d(x, p, t, i), (40, 50, 6), True),
    "dropout1d-unbatched": (lambda F, x, p, t, i=False: F.dropout1d(x, p, t, i), (400, 7), True),
    "dropout2d": (lambda F, x, p, t, i=False: F.dropout2d(x, p, t, i), (40, 50, 3, 3), True),
    "dropout3d": (lambda F, x, p, t, i=False: F.dropout3d(x, p, t, i), (40, 50, 2, 2, 2), True),
    "dropout3d-unbatched": (lambda F, x, p, t, i=False: F.dropout3d(x, p, t, i), (400, 2, 3, 2), True),
    "alpha_dropout": (lambda F, x, p, t, i=False: F.alpha_dropout(x, p, t, i), (200, 100), False),
    "feature_alpha_dropout": (lambda F, x, p, t, i=False: F.feature_alpha_dropout(x, p, t, i), (40, 50, 4), True),
}
_A = 1.7580993408473766


def _expected_maps(name, p):
    """(scale of a kept element, value of a dropped one) as maps of x (float64)."""
    if "alpha" in name:
        a = 1.0 / np.sqrt((_A * _A * p + 1) * (1 - p))
        return (lambda x: x * a + _A * a * p), (lambda x: np.full_like(x, _A * a * (p - 1))), a
    return (lambda x: x / (1 - p)), (lambda x: np.zeros_like(x)), 1 / (1 - p)


@pytest.mark.parametrize("name", list(DROPOUTS))
def test_dropout_masks_scaling_gradients_and_statistics(name):
    fn, shape, feature = DROPOUTS[name]
    p = 0.3
    x0 = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    kept_map, drop_map, gscale = _expected_maps(name, p)
    for L in (torch, ft):
        F = L.nn.functional
        x = L.tensor(x0, requires_grad=True)
        # p = 0 and eval: the input itself (unbatched: its squeezed-back view, as torch)
        for same in (fn(F, x, 0.0, True), fn(F, x, 0.5, False)):
            assert same is x if "unbatched" not in name else np.array_equal(_np(same), x0)
        ft.manual_seed(0), torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(F, x, p, True)
        o = _np(out).astype(np.float64)
        kept = np.isclose(o, kept_map(x0.astype(np.float64)), rtol=1e-5, atol=1e-6)
        dropped = np.isclose(o, drop_map(x0.astype(np.float64)), rtol=1e-5, atol=1e-6)
        assert np.all(kept | dropped), L.__name__
        assert type(out.grad_fn).__name__ == ("SqueezeBackward1" if "unbatched" in name else
                                               "AddBackward0" if "alpha" in name else "MulBackward0")
        if feature:  # whole channels: the mask is constant over the spatial dims
            ch = kept.reshape(kept.shape[:2] + (-1,)) if len(shape) > 2 and "unbatched" not in name else \
                kept.reshape(kept.shape[:1] + (-1,))
            assert np.all(ch.all(-1) | (~ch).all(-1)), L.__name__
            frac = 1 - ch.all(-1).mean()
        else:
            frac = 1 - kept.mean()
        assert abs(frac - p) < 0.06, (L.__name__, frac)
        out.backward(L.ones(out.shape))
        np.testing.assert_allclose(_np(x.grad), np.where(kept, gscale, 0.0), rtol=1e-6)
        if name == "alpha_dropout":  # alpha dropout keeps a standard normal input's mean and variance
            assert abs(o.mean()) < 0.05 and abs(o.std() - 1) < 0.05, (o.mean(), o.std())


def test_dropout_p1_inplace_and_warnings():
    x0 = rnd(2, 3, 4, 4)
    for L in (torch, ft):
        F = L.nn.functional
        for f in (F.dropout1d, F.dropout2d, F.dropout3d, F.feature_alpha_dropout):
            xx = L.tensor(x0[0] if f is F.dropout1d else x0)
            out = f(xx, 1.0, True)
            assert not np.any(_np(out)) and str(out.dtype) == "torch.float32"
        a = L.tensor(x0, requires_grad=True) * 1
        b = F.dropout2d(a, 0.5, True, inplace=True)
        assert b is a and type(b.grad_fn).__name__ == "MulBackward0"
        u = L.tensor(x0[0, 0], requires_grad=True) * 1  # unbatched (C, L): unsqueezed, dropped, squeezed in place
        assert F.dropout1d(u, 0.5, True, inplace=True) is u and tuple(u.shape) == (4, 4)
        with pytest.warns(UserWarning, match=re.escape("dropout2d: Received a 3D input to dropout2d and assuming")):
            F.dropout2d(L.tensor(x0[0]), 0.5)
        with pytest.warns(UserWarning, match=re.escape("dropout3d: Received a 2-D input to dropout3d, which is")):
            F.dropout3d(L.tensor(x0[0, 0]), 0.5)
        m = L.nn.Dropout2d(0.5).eval()
        xe = L.tensor(x0)
        assert m(xe) is xe and L.nn.AlphaDropout(0.5)(xe) is not xe



def test_plain_dropout_in_place_is_one_in_place_mul_as_torchs():
    """F.dropout / nn.Dropout(inplace=True) write into their input through one in-place op (grad_fn
    MulBackward0, version 1), also at p=1, where the input becomes zeros (it used to be left as it was)."""
    x0 = rnd(3, 5)
    for L in (torch, ft):
        F = L.nn.functional
        x = L.tensor(x0, requires_grad=True)
        y = x * 1
        z = F.dropout(y, 0.5, True, inplace=True)
        assert z is y and z.grad_fn.name() == "MulBackward0" and y._version == 1
        z.sum().backward()
        kept = _np(z) != 0  # the gradient is the mask's scale where kept, 0 where dropped
        np.testing.assert_array_equal(_np(x.grad), np.where(kept, 2.0, 0.0).astype(np.float32))
        y1 = x * 1
        z1 = F.dropout(y1, 1.0, True, inplace=True)
        assert z1 is y1 and z1.grad_fn.name() == "MulBackward0" and y1._version == 1 and not np.any(_np(y1))
        y2 = x * 1
        assert L.nn.Dropout(0.3, inplace=True)(y2) is y2 and y2._version == 1

# ---- ParameterDict ---------------------------------------------------------------------------------------------
def _pdict_story(L):
    from collections import OrderedDict
    nn = L.nn
    pd = nn.ParameterDict({"b": nn.Parameter(L.ones(2)), "a": L.zeros(1)})  # a plain dict: sorted keys
    pd["c"] = L.full((3,), 2.0)
    pd.update([("z", L.ones(1)), ("y", L.ones(2))])
    pd.update(OrderedDict(q=L.ones(1), p=L.ones(1)))
    pd.setdefault("obj", 5)
    log = [list(pd), list(pd.keys()), [type(v).__name__ for v in pd.values()], [k for k, _ in pd.items()],
           [n for n, _ in pd.named_parameters()], list(pd.state_dict()), repr(pd), len(pd), "a" in pd,
           pd.get("nope", 7), list(reversed(pd))]
    c = pd.pop("c")
    log += [tuple(c.shape), isinstance(c, nn.Parameter), pd.popitem()[0], list(pd)]
    del pd["a"]
    log += [list(pd), list(pd | nn.ParameterDict(OrderedDict(w=L.ones(1)))), list(pd.copy()),
            list(pd.fromkeys(["u", "v"], L.ones(1)))]
    m = nn.Module()
    m.pd = pd
    log += [list(m.state_dict()), [n for n, _ in m.named_parameters()]]
    pd2 = nn.ParameterDict()
    pd2 |= pd
    pd2.clear()
    log += [len(pd2), repr(pd2)]
    return log


def test_parameter_dict_api_matches_torch():
    assert _pdict_story(ft) == _pdict_story(torch)


def test_parameter_dict_trains_and_loads_state_dict():
    w0, b0 = rnd(3, 2), rnd(2)
    res = []
    for L in (torch, ft):
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.params = L.nn.ParameterDict({"w": L.tensor(w0), "b": L.tensor(b0)})

            def forward(self, x):
                return x @ self.params["w"] + self.params["b"]
        m = M()
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        for i in range(3):
            opt.zero_grad()
            m(L.tensor(rnd(4, 3) * 0 + i)).pow(2).sum().backward()
            opt.step()
        m2 = M()
        m2.load_state_dict(m.state_dict())
        res.append(({k: _np(v) for k, v in m2.state_dict().items()}, m.params["w"].requires_grad))
    assert list(res[0][0]) == list(res[1][0]) == ["params.b", "params.w"] and res[0][1] == res[1][1] is True
    for k in res[0][0]:
        np.testing.assert_allclose(res[1][0][k], res[0][0][k], rtol=1e-5, atol=1e-6)


# ---- compile --------------------------------------------------------------------------------------------------
HEAD_W = rnd(8, 3) * 0.3


def _net(L):
    nn = L.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv3d(2, 4, 3, padding=1)
            self.pool = nn.MaxPool3d(2)
            self.apool = nn.AdaptiveMaxPool2d((2, 1))
            self.head = nn.ParameterDict({"w": L.tensor(HEAD_W)})

        def forward(self, x):
            h = self.pool(self.conv(x).relu())  # (N, 4, 2, 3, 3)
            h = self.apool(h.flatten(2, 3))      # (N, 4, 2, 1)
            return h.flatten(1) @ self.head["w"]
    L.manual_seed(0)
    return Net()


def test_compiled_training_step_matches_torch():
    """Conv3d, MaxPool3d, AdaptiveMaxPool2d and a ParameterDict in one compiled training step: torch's losses
    and parameters (from torch's initial weights), one program after the first call's."""
    xs = [rnd(2, 2, 4, 6, 6) for _ in range(3)]
    ys = [rnd(2, 3) for _ in range(3)]
    tm, fm = _net(torch), _net(ft)
    fm.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    runs = []
    for L, m in ((torch, tm), (ft, fm)):
        opt = L.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if L is ft else step
        runs.append(([f(L.tensor(x), L.tensor(y)).item() for x, y in zip(xs, ys)],
                     [_np(p).copy() for p in m.parameters()]))
        if L is ft:
            assert f.stats["eager_calls"] == 0 and f.stats["traces"] == 1
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-5, atol=1e-6)
    for a, b in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_compiled_dropouts_equal_eager():
    """Channel-wise and alpha dropout inside a compiled function: the same masks (values and gradients) as
    eager under the same seed."""
    x0 = rnd(4, 6, 3, 2, 2)

    def fn(x):
        F = ft.nn.functional
        return (F.alpha_dropout(F.dropout3d(x, 0.3), 0.2, True) * F.feature_alpha_dropout(x, 0.4, True)).sum()
    res = []
    for f in (fn, ft.compile(fn)):
        ft.manual_seed(3)
        x = ft.tensor(x0, requires_grad=True)
        out = f(x)
        out.backward()
        res.append((out.item(), _np(x.grad)))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)
