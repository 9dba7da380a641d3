"""Parity with torch 2.13 for the loss / init / distribution red-team findings: cross_entropy's class-probability
dtype with a weight of another dtype, margin_ranking / hinge_embedding on integer tensors (ATen's composites),
class weights of another dtype and weights that require grad (autograd's "not differentiable" error), no
derivative of gammainc in its first argument through Gamma.cdf, the target-size warning before the broadcast
error, ReshapeTransform's shape messages, orthogonal_ on half tensors."""
import math
import warnings

import pytest
import torch

import functorch_lite as fl


def _fmt(v):
    if isinstance(v, (torch.Tensor, fl.Tensor)):
        return ("T", tuple(v.shape), str(v.dtype), [round(float(x), 4) for x in v.detach().double().reshape(-1).tolist()])
    if isinstance(v, (tuple, list)):
        return type(v)(_fmt(x) for x in v)
    return v


def _run(lib, fn):
    try:
        return ("ok", _fmt(fn(lib)))
    except Exception as e:  # noqa: BLE001
        return ("err", type(e).__name__, str(e))


def _same(fn):
    a, b = _run(torch, fn), _run(fl, fn)
    assert b == a, (b, a)
    return a


def _same_error(fn):
    a = _same(fn)
    assert a[0] == "err", a
    return a


def _x(t):
    return t.sin(t.arange(12.)).reshape(4, 3)


def _y(t):
    return t.tensor([0, 1, 2, 1])


REDS = ["none", "mean", "sum"]


# ---- 1. cross_entropy with class probabilities: input, target and weight promote together -----------------
@pytest.mark.parametrize("red", REDS)
@pytest.mark.parametrize("ls", [0.0, 0.1])
@pytest.mark.parametrize("xdt,tdt,wdt", [("float32", "float32", "float64"), ("float32", "float64", "float32"),
                                         ("float64", "float32", "float32"), ("float32", "float16", None),
                                         ("float32", "float32", "float16"), ("float64", "float64", "float32"),
                                         ("float32", "float32", "int64")])
def test_cross_entropy_prob_target_dtype(red, ls, xdt, tdt, wdt):
    def f(t):
        x = _x(t).to(getattr(t, xdt))
        p = t.softmax(_x(t), 1).to(getattr(t, tdt))
        w = None if wdt is None else t.tensor([1, 2, 3]).to(getattr(t, wdt))
        return t.nn.functional.cross_entropy(x, p, weight=w, reduction=red, label_smoothing=ls)
    a = _same(f)
    assert a[0] == "ok"


def test_cross_entropy_prob_target_float64_weight_value():
    def f(t):
        x = _x(t)
        return t.nn.functional.cross_entropy(x, t.softmax(x, 1), weight=t.tensor([1., 2., 3.], dtype=t.float64))
    a = _same(f)
    assert a[1][2] == "torch.float64" and math.isclose(a[1][3][0], 1.9894, abs_tol=1e-4)


def test_cross_entropy_prob_target_float64_weight_grad():
    res = []
    for t in (torch, fl):
        x = _x(t).requires_grad_()
        loss = t.nn.functional.cross_entropy(x, t.softmax(t.cos(t.arange(12.)).reshape(4, 3), 1),
                                             weight=t.tensor([1., 2., 3.], dtype=t.float64))
        g, = t.autograd.grad(loss, x)
        res.append((_fmt(loss), type(loss.grad_fn).__name__, _fmt(g)))
    assert res[1] == res[0]


# ---- 2. margin_ranking_loss / hinge_embedding_loss on integer tensors -------------------------------------
@pytest.mark.parametrize("red", REDS)
@pytest.mark.parametrize("margin", [0, 1.5, 2])
def test_margin_ranking_integer(red, margin):
    _same(lambda t: t.nn.functional.margin_ranking_loss(t.tensor([3, 1, 2]), t.tensor([1, 2, 2]),
                                                        t.tensor([1, -1, 1]), margin=margin, reduction=red))
    _same(lambda t: t.margin_ranking_loss(t.tensor([3, 1, 2]), t.tensor([1, 2, 2]), t.tensor([1, -1, 1]),
                                          float(margin), {"none": 0, "mean": 1, "sum": 2}[red]))


def test_margin_ranking_integer_mean_value():
    a = _same(lambda t: t.nn.functional.margin_ranking_loss(t.tensor([3, 1, 2]), t.tensor([1, 2, 2]),
                                                            t.tensor([1, -1, 1]), margin=2))
    assert a == ("ok", ("T", (), "torch.float32", [1.0]))


@pytest.mark.parametrize("red", REDS)
def test_margin_ranking_half_and_bool(red):
    _same(lambda t: t.nn.functional.margin_ranking_loss(t.tensor([3., 1, 2]).half(), t.tensor([1., 2, 2]).half(),
                                                        t.tensor([1., -1, 1]).half(), margin=0.1, reduction=red))
    _same_error(lambda t: t.nn.functional.margin_ranking_loss(t.tensor([True, False]), t.tensor([False, False]),
                                                              t.tensor([True, True]), reduction=red))


@pytest.mark.parametrize("red", REDS)
@pytest.mark.parametrize("case", ["int", "int m1.5", "int m3.7", "neg m-2.5", "int8 m300", "uint8 m5.5", "uint8 m-1",
                                  "int nan", "int yfloat", "bool", "half", "float y64", "complex"])
def test_hinge_embedding_dtypes(red, case):
    def f(t):
        a = t.tensor([3, 1, 2])
        y = t.tensor([1, -1, 1])
        margin = 1.0
        if case == "int m1.5":
            margin = 1.5
        elif case == "int m3.7":
            margin = 3.7
        elif case == "neg m-2.5":
            a, margin = -a, -2.5
        elif case == "int8 m300":
            a, margin = a.to(t.int8), 300.
        elif case == "uint8 m5.5":
            a, margin = a.to(t.uint8), 5.5
        elif case == "uint8 m-1":
            a, margin = a.to(t.uint8), -1.0
        elif case == "int nan":
            margin = float("nan")
        elif case == "int yfloat":
            y, margin = y.float(), 2.5
        elif case == "bool":
            a = a > 1
        elif case == "half":
            a, margin = a.half() / 3, 1.0001
        elif case == "float y64":
            a, y, margin = a.float(), y.double(), 2.5
        elif case == "complex":
            a, margin = a.to(t.complex64), 2.5
        return t.nn.functional.hinge_embedding_loss(a, y, margin=margin, reduction=red)
    _same(f)


def test_hinge_embedding_integer_results():
    a = _same(lambda t: t.nn.functional.hinge_embedding_loss(t.tensor([3, 1, 2]), t.tensor([1, -1, 1]),
                                                             reduction="none"))
    assert a[1][2] == "torch.int64"
    a = _same_error(lambda t: t.nn.functional.hinge_embedding_loss(t.tensor([3, 1, 2]), t.tensor([1, -1, 1])))
    assert a[1:] == ("RuntimeError", "mean(): could not infer output dtype. Input dtype must be either a floating "
                                     "point or complex dtype. Got: Long")
    _same(lambda t: t.hinge_embedding_loss(t.tensor([3, 1, 2]), t.tensor([1, -1, 1]), 1.5, 2))


@pytest.mark.parametrize("red", REDS)
def test_hinge_margin_ranking_float_grad(red):
    res = []
    for t in (torch, fl):
        x = t.sin(t.arange(6.)).requires_grad_()
        y = t.tensor([1, -1, 1, -1, -1, 1.])
        out = []
        for loss in (t.nn.functional.hinge_embedding_loss(x, y, margin=0.5, reduction=red),
                     t.nn.functional.margin_ranking_loss(x, x.flip(0), y, reduction=red)):
            g, = t.autograd.grad(loss.sum(), x)
            out.append((_fmt(loss), type(loss.grad_fn).__name__, _fmt(g)))
        res.append(out)
    assert res[1] == res[0]


# ---- 3. class weights of another dtype ------------------------------------------------------------------------
def _w(t, dt):
    return t.tensor([1., 2., 3.]).to(getattr(t, dt))


@pytest.mark.parametrize("red", REDS)
@pytest.mark.parametrize("xdt,wdt", [("float32", "float64"), ("float64", "float32"), ("float32", "float16"),
                                     ("float16", "float64"), ("float32", "int64")])
def test_weight_dtype_mismatch(red, xdt, wdt):
    def call(name, shape=None, **kw):
        def f(t):
            fn = getattr(t.nn.functional, name)
            x = _x(t).to(getattr(t, xdt))
            y = _y(t)
            if shape == "4d":
                x, y = x.reshape(1, 3, 4, 1) * 1, y.reshape(1, 4, 1)
            elif shape == "1d":
                x, y = x[0], y[0]
            return fn(x, y, weight=_w(t, wdt), reduction=red, **kw)
        return f
    for f in (call("nll_loss"), call("nll_loss", "4d"), call("nll_loss", "1d"), call("cross_entropy"),
              call("cross_entropy", "4d"), call("cross_entropy", label_smoothing=0.1),
              call("cross_entropy", "4d", label_smoothing=0.2)):
        a = _same(f)
        if xdt != "float16" or wdt != "float64":
            assert a[:2] == ("err", "RuntimeError"), a
    if xdt in ("float32", "float64"):
        a = _same_error(call("multi_margin_loss"))
        assert a[2].startswith("expected scalar type"), a


def test_weight_dtype_error_order():
    w64 = lambda t: t.ones(3, dtype=t.float64)  # noqa: E731
    # the kernel reads the weights before it checks the targets' range; the shape checks come first
    _same_error(lambda t: t.nn.functional.nll_loss(_x(t), _y(t) + 1, weight=w64(t)))
    _same_error(lambda t: t.nn.functional.multi_margin_loss(_x(t), _y(t) + 1, weight=w64(t)))
    _same_error(lambda t: t.nn.functional.multi_margin_loss(_x(t), _y(t)[:3], weight=w64(t)))
    _same_error(lambda t: t.nn.functional.multi_margin_loss(_x(t), _y(t).int(), weight=w64(t)))
    _same(lambda t: t.nn.functional.nll_loss(_x(t).bfloat16(), _y(t), weight=t.ones(3, dtype=t.bfloat16)))


# ---- 4. weights that require grad -----------------------------------------------------------------------------
def _rg(t, *shape):
    return t.ones(*shape, requires_grad=True)


GRAD_CASES = {
    "bcel weight": lambda t: t.nn.functional.binary_cross_entropy_with_logits(_x(t), (_x(t) > 0).float(),
                                                                             weight=_rg(t, 4, 3)),
    "bcel pos_weight": lambda t: t.nn.functional.binary_cross_entropy_with_logits(_x(t), (_x(t) > 0).float(),
                                                                                 pos_weight=_rg(t, 3)),
    "bcel both": lambda t: t.nn.functional.binary_cross_entropy_with_logits(
        _x(t).requires_grad_(), (_x(t) > 0).float(), weight=_rg(t, 4, 3), pos_weight=_rg(t, 3)),
    "bcel top-level": lambda t: t.binary_cross_entropy_with_logits(_x(t), (_x(t) > 0).float(), None, _rg(t, 3), 1),
    "bcel int input": lambda t: t.nn.functional.binary_cross_entropy_with_logits(
        _y(t).reshape(4, 1).expand(4, 3), (_x(t) > 0).float(), weight=_rg(t, 3)),
    "bcel pos_weight bcast": lambda t: t.nn.functional.binary_cross_entropy_with_logits(
        _x(t), (_x(t) > 0).float(), pos_weight=_rg(t, 4)),
    "bce weight": lambda t: t.nn.functional.binary_cross_entropy(t.sigmoid(_x(t)), (_x(t) > 0).float(),
                                                               weight=_rg(t, 4, 3)),
    "bce weight none": lambda t: t.nn.functional.binary_cross_entropy(t.sigmoid(_x(t)), (_x(t) > 0).float(),
                                                                    weight=_rg(t, 3), reduction="none"),
    "bce dtype": lambda t: t.nn.functional.binary_cross_entropy(t.sigmoid(_x(t)), (_x(t) > 0).double(),
                                                              weight=_rg(t, 3)),
    "bce range": lambda t: t.nn.functional.binary_cross_entropy(_x(t), (_x(t) > 0).float(), weight=_rg(t, 3)),
    "bce bad size": lambda t: t.nn.functional.binary_cross_entropy(t.sigmoid(_x(t)), (_x(t) > 0).float(),
                                                                 weight=_rg(t, 4)),
    "nll": lambda t: t.nn.functional.nll_loss(_x(t), _y(t), weight=_rg(t, 3)),
    "nll none": lambda t: t.nn.functional.nll_loss(_x(t), _y(t), weight=_rg(t, 3), reduction="none"),
    "nll weight size": lambda t: t.nn.functional.nll_loss(_x(t), _y(t), weight=_rg(t, 4)),
    "nll target dtype": lambda t: t.nn.functional.nll_loss(_x(t), _y(t).float(), weight=_rg(t, 3)),
    "nll batch": lambda t: t.nn.functional.nll_loss(_x(t), _y(t)[:3], weight=_rg(t, 3)),
    "nll oob": lambda t: t.nn.functional.nll_loss(_x(t), _y(t) + 1, weight=_rg(t, 3)),
    "nll int input": lambda t: t.nn.functional.nll_loss(_y(t).reshape(4, 1).expand(4, 3), _y(t), weight=_rg(t, 3)),
    "nll 4d": lambda t: t.nn.functional.nll_loss(_x(t).reshape(1, 3, 4, 1), _y(t).reshape(1, 4, 1), weight=_rg(t, 3)),
    "nll 4d size": lambda t: t.nn.functional.nll_loss(_x(t).reshape(1, 3, 4, 1), _y(t).reshape(1, 1, 4),
                                                      weight=_rg(t, 3)),
    "nll 3d": lambda t: t.nn.functional.nll_loss(_x(t).reshape(1, 3, 4), _y(t).reshape(1, 4), weight=_rg(t, 3)),
    "nll 3d target size": lambda t: t.nn.functional.nll_loss(_x(t).reshape(1, 3, 4), _y(t).reshape(1, 2, 2),
                                                             weight=_rg(t, 3)),
    "ce": lambda t: t.nn.functional.cross_entropy(_x(t), _y(t), weight=_rg(t, 3)),
    "ce ls": lambda t: t.nn.functional.cross_entropy(_x(t), _y(t), weight=_rg(t, 3), label_smoothing=0.1),
    "ce weight size": lambda t: t.nn.functional.cross_entropy(_x(t), _y(t), weight=_rg(t, 4)),
    "ce 4d": lambda t: t.nn.functional.cross_entropy(_x(t).reshape(1, 3, 4, 1), _y(t).reshape(1, 4, 1),
                                                     weight=_rg(t, 3)),
    "ce prob": lambda t: t.nn.functional.cross_entropy(_x(t), t.softmax(_x(t), 1), weight=_rg(t, 3)),
    "ce module": lambda t: t.nn.CrossEntropyLoss(weight=_rg(t, 3))(_x(t), _y(t)),
    "mm": lambda t: t.nn.functional.multi_margin_loss(_x(t), _y(t), weight=_rg(t, 3)),
    "mm none": lambda t: t.nn.functional.multi_margin_loss(_x(t), _y(t), weight=_rg(t, 3), reduction="none"),
    "mm weight size": lambda t: t.nn.functional.multi_margin_loss(_x(t), _y(t), weight=_rg(t, 4)),
    "mm target size": lambda t: t.nn.functional.multi_margin_loss(_x(t), _y(t)[:3], weight=_rg(t, 3)),
    "mm int input": lambda t: t.nn.functional.multi_margin_loss(_y(t).reshape(4, 1).expand(4, 3), _y(t),
                                                                weight=_rg(t, 3)),
    "bcel target requires grad": lambda t: t.nn.functional.binary_cross_entropy_with_logits(
        _x(t), (_x(t) > 0).float().requires_grad_()),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_weight_requires_grad(name):
    f = GRAD_CASES[name]
    _same(f)
    _same(lambda t: _no_grad_call(t, f))  # (autograd's check runs only with grad mode on)


def _no_grad_call(t, f):
    with t.no_grad():
        return f(t)


def test_weight_requires_grad_message():
    a = _same_error(GRAD_CASES["bcel weight"])
    assert a[2] == ("The function 'binary_cross_entropy_with_logits' is not differentiable with respect to argument "
                    "'weight'. This input cannot have requires_grad True.")
    assert "'nll_loss_forward'" in _same_error(GRAD_CASES["ce"])[2]
    assert "'nll_loss2d_forward'" in _same_error(GRAD_CASES["nll 4d"])[2]
    assert "'pos_weight'" in _same_error(GRAD_CASES["bcel pos_weight"])[2]


# ---- 5. no derivative of igamma / igammac in their first argument ---------------------------------------------
def test_gamma_cdf_concentration_backward_raises():
    def f(t):
        g = t.distributions.Gamma(t.tensor([2.0, 3.0], requires_grad=True), t.tensor([1.0, 2.0]), validate_args=True)
        v = g.cdf(t.tensor([1.0, 0.5]))
        ok = _fmt(v), type(v.grad_fn).__name__  # (the forward records; backward raises)
        v.sum().backward()
        return ok
    a = _same_error(f)
    assert a[1:] == ("NotImplementedError", "the derivative for 'igamma: input' is not implemented.")


def test_gamma_cdf_forward_and_rate_grad():
    def f(t):
        # (concentration without grad: the facade's backward differentiates every input that requires grad, so
        # autograd.grad(..., rate) alone with a concentration that requires grad raises where torch's does not)
        g = t.distributions.Gamma(t.tensor([2.0, 3.0]), t.tensor([1.0, 2.0], requires_grad=True), validate_args=True)
        v = g.cdf(t.tensor([1.0, 0.5]))
        r, = t.autograd.grad(v.sum(), g.rate)
        return v, type(v.grad_fn).__name__, r
    assert _same(f)[0] == "ok"
    for dts in (("half", "half"), ("double", "float")):
        _same(lambda t: t.distributions.Gamma(getattr(t.tensor([2.0]), dts[0])(), getattr(t.tensor([1.0]), dts[1])())
              .cdf(getattr(t.tensor([1.0]), dts[1])()))


@pytest.mark.parametrize("fn,msg", [("gammainc", "igamma: input"), ("gammaincc", "igammac: input")])
def test_gammainc_first_argument_backward_raises(fn, msg):
    def f(t):
        a = t.tensor([2.0, 3.0], requires_grad=True)
        getattr(t.special, fn)(a, t.tensor([1.0, 0.5])).sum().backward()
    assert _same_error(f)[2] == f"the derivative for '{msg}' is not implemented."


# ---- 6. the target-size warning before broadcast_tensors' error ----------------------------------------------
def _with_warnings(lib, fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = _run(lib, fn)
    return r, [(x.category.__name__, str(x.message)) for x in w]


@pytest.mark.parametrize("case", ["mse", "mse weight", "mse bcast", "mse legacy", "mse bad reduction", "mse int",
                                  "l1", "l1 weight", "smooth_l1", "smooth_l1 beta0", "smooth_l1 neg beta", "huber",
                                  "huber weight", "huber bad delta", "module"])
def test_target_size_warning(case):
    def f(t):
        F = t.nn.functional
        a, b = t.ones(4, 3), t.ones(5, 3)
        if case == "mse":
            return F.mse_loss(a, b)
        if case == "mse weight":
            return F.mse_loss(a, b, weight=t.ones(4, 3))
        if case == "mse bcast":
            return F.mse_loss(a, t.ones(3))
        if case == "mse legacy":
            return F.mse_loss(a, b, size_average=True)
        if case == "mse bad reduction":
            return F.mse_loss(a, b, reduction="foo")
        if case == "mse int":
            return F.mse_loss(a.long(), b.long())
        if case == "l1":
            return F.l1_loss(a, b)
        if case == "l1 weight":
            return F.l1_loss(a, b, weight=t.ones(5, 3))
        if case == "smooth_l1":
            return F.smooth_l1_loss(a, b)
        if case == "smooth_l1 beta0":
            return F.smooth_l1_loss(a, b, beta=0.0)
        if case == "smooth_l1 neg beta":
            return F.smooth_l1_loss(a, b, beta=-1.0)
        if case == "huber":
            return F.huber_loss(a, b)
        if case == "huber weight":
            return F.huber_loss(a, b, weight=t.ones(5, 3))
        if case == "huber bad delta":
            return F.huber_loss(a, b, delta=-1.0)
        return t.nn.MSELoss()(a, b)
    a, b = _with_warnings(torch, f), _with_warnings(fl, f)
    assert b == a, (b, a)
    assert any("Using a target size" in m for _, m in a[1])


# ---- 7. ReshapeTransform's shape messages --------------------------------------------------------------------
@pytest.mark.parametrize("case", ["inv tuple", "fwd tuple", "inv ok", "inv short", "fwd short", "fwd size", "inv size",
                                  "fwd list", "fwd list match", "inv list match"])
def test_reshape_transform_shapes(case):
    def f(t):
        tr = t.distributions.transforms.ReshapeTransform((3,), (3, 1))
        tr2 = t.distributions.transforms.ReshapeTransform(t.Size([2, 3]), [6])
        return {"inv tuple": lambda: tr.inverse_shape((2, 3)), "fwd tuple": lambda: tr.forward_shape((2, 3, 1)),
                "inv ok": lambda: tr.inverse_shape((2, 3, 1)), "inv short": lambda: tr.inverse_shape((1,)),
                "fwd short": lambda: tr.forward_shape(()), "fwd size": lambda: tr2.forward_shape(t.Size([2, 2, 2])),
                "inv size": lambda: tr2.inverse_shape(t.Size([2, 2, 2])),
                "fwd list": lambda: tr2.forward_shape([2, 2, 2]), "fwd list match": lambda: tr2.forward_shape([5, 2, 3]),
                "inv list match": lambda: tr2.inverse_shape([5, 6])}[case]()
    a = _same(f)
    if case == "inv tuple":
        assert a[2] == "Shape mismatch: expected (2, 3) but got torch.Size([3, 1])"


# ---- 8. orthogonal_ on half tensors: torch's CPU QR has no half kernel ---------------------------------------
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64", "int64", "complex64", "bool"])
@pytest.mark.parametrize("shape", [(3, 4), (1, 1), (0, 4), (4,)])
def test_orthogonal_dtypes(dt, shape):
    def f(t):
        return t.nn.init.orthogonal_(t.empty(*shape, dtype=getattr(t, dt))).shape
    a = _same(f)
    if dt in ("float16", "bfloat16") and shape in ((3, 4), (1, 1)):
        assert a[1:] == ("NotImplementedError", f"\"geqrf_cpu\" not implemented for "
                                                f"'{'Half' if dt == 'float16' else 'BFloat16'}'")
