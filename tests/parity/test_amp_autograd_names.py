"""Against real PyTorch: ``torch.amp.custom_fwd`` / ``custom_bwd`` (and the deprecated ``torch.cuda.amp``
spellings) on a custom ``autograd.Function`` under CPU autocast; grad_fn names that PyTorch gives by overload
(sign, div with a rounding mode, clamp / clamp_min / clamp_max with tensor bounds, LSTMCell's two outputs, the
C++ name of CopySlices); the 'prod' gradient of ``scatter_reduce`` with repeated indices and zeros (and
``index_reduce``'s); and the ops without a derivative (``floor_divide``, ``scatter`` with ``reduce=``), whose
grad_fn is ``NotImplemented`` and whose backward raises."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

LIBS = (torch, ft)


def _names(t):
    return type(t.grad_fn).__name__, t.grad_fn.name()


def _np(t):
    return None if t is None else (t.detach().float().numpy(force=True) if isinstance(t, torch.Tensor)
                                   else t.detach().float().numpy())


def _same(a, b, tol=0.0):
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape), (a, b)
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _errors(fn):
    """(type, message) of the exception ``fn(lib)`` raises, for torch and for functorch_lite."""
    out = []
    for m in LIBS:
        with pytest.raises(Exception) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(m)
        out.append((type(info.value), str(info.value)))
    return out


# ---- 1. torch.amp.custom_fwd / custom_bwd --------------------------------------------------------------------
def _mm_function(m, **fwd_kw):
    """A custom matmul whose forward and backward record the autocast state they ran under."""
    seen = {}

    class MyMM(m.autograd.Function):
        @staticmethod
        @m.amp.custom_fwd(device_type="cpu", **fwd_kw)
        def forward(ctx, a, b):
            seen["fwd"] = (m.is_autocast_enabled("cpu"), str(a.dtype), str(b.dtype))
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @m.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ga, gb = g.mm(b.t()), a.t().mm(g)
            seen["bwd"] = (m.is_autocast_enabled("cpu"), str(m.get_autocast_dtype("cpu")), str(g.dtype),
                           str(ga.dtype))
            return ga, gb
    return MyMM, seen


def _amp_run(m, cast_inputs, prior_op):
    a = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = m.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    kw = {} if cast_inputs is None else {"cast_inputs": m.float32}
    fn, seen = _mm_function(m, **kw)
    with m.autocast("cpu"):
        x = a.mm(b) if prior_op else a  # a bfloat16 input (an autocast mm's output) or the float32 leaf
        y = fn.apply(x, b)
    y.float().sum().backward()
    return y, a.grad, b.grad, seen


@pytest.mark.parametrize("prior_op", [True, False])
@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_bwd_under_cpu_autocast(cast_inputs, prior_op):
    """cast_inputs: forward sees float32 inputs with autocast off (float32 output), backward runs with autocast
    off, and a float32 gradient of a bfloat16 input arrives cast to bfloat16; without cast_inputs forward and
    backward run under the region's autocast state (bfloat16 matmuls)."""
    (ty, tga, tgb, tseen), (fy, fga, fgb, fseen) = (_amp_run(m, cast_inputs, prior_op) for m in LIBS)
    assert fseen == tseen
    _same(fy, ty)
    _same(fga, tga)
    _same(fgb, tgb)


def test_custom_fwd_outside_autocast_is_a_no_op():
    out = []
    for m in LIBS:
        fn, seen = _mm_function(m, cast_inputs=m.bfloat16)
        a = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = fn.apply(a, a)
        y.sum().backward()
        out.append((y, a.grad, seen))
    (ty, tg, ts), (fy, fg, fs) = out
    assert fs == ts and str(fy.dtype) == "torch.float32"
    _same(fy, ty)
    _same(fg, tg)


@pytest.mark.parametrize("case", ["fwd_int", "bwd_none", "fwd_missing", "bwd_missing", "fwd_bad_device",
                                  "bwd_bad_device"])
def test_custom_fwd_bwd_argument_errors(case):
    class Ctx:
        _fwd_used_autocast = False

    def fn(m):
        Ctx._dtype = m.float16
        if case == "fwd_int":
            m.amp.custom_fwd(device_type=1)
        elif case == "bwd_none":
            m.amp.custom_bwd(device_type=None)
        elif case == "fwd_missing":
            m.amp.custom_fwd(lambda ctx, x: x)
        elif case == "bwd_missing":
            m.amp.custom_bwd(lambda ctx, x: x)
        elif case == "fwd_bad_device":
            m.amp.custom_fwd(lambda ctx, x: x, device_type="foo")(Ctx(), 1)
        else:
            m.amp.custom_bwd(lambda ctx, x: x, device_type="foo")(Ctx(), 1)
    (tt, tm), (ft_, fm) = _errors(fn)
    assert ft_ is tt and fm == tm


def test_deprecated_cuda_amp_custom_fwd_bwd_warn():
    out = []
    for m in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fwd = m.cuda.amp.custom_fwd(cast_inputs=m.float32)
            bwd = m.cuda.amp.custom_bwd(lambda ctx, g: g)
        out.append(([(x.category, str(x.message)) for x in w], fwd.keywords, callable(bwd)))
    (tw, tk, tb), (fw, fk, fb) = out
    assert fw == tw and len(fw) == 2 and fw[0][0] is FutureWarning
    assert fk == {"device_type": "cuda", "cast_inputs": ft.float32} and tk["cast_inputs"] is torch.float32
    assert fb and tb


def test_custom_function_gradient_validation():
    """A custom Function's gradient of another dtype is cast to its input's; one of an incompatible shape raises
    PyTorch's error; a broadcast one is summed down."""
    def run(m, ret):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return ret(m, g)
        a = m.ones(2, 3, dtype=m.bfloat16, requires_grad=True)
        y = F.apply(a * 1)  # (a non-leaf input: the cast is the Function's, not AccumulateGrad's)
        y.sum().backward()
        return a.grad
    for ret in (lambda m, g: g.float() * 3, lambda m, g: g.double(), lambda m, g: m.ones(4, 2, 3)):
        _same(run(ft, ret), run(torch, ret))
    (tt, tm), (ft_, fm) = _errors(lambda m: run(m, lambda m_, g: m_.ones(3)))
    assert ft_ is tt and fm == tm


# ---- 2. grad_fn names ----------------------------------------------------------------------------------------
_X = [1.5, -2.5, 3.0, 0.5]
NAMES = {
    "sign": lambda m, x: x.sign(),
    "torch.sign": lambda m, x: m.sign(x),
    "sgn": lambda m, x: x.sgn(),
    "sign_": lambda m, x: (x * 1).sign_(),
    "div_floor_scalar": lambda m, x: m.div(x, 2, rounding_mode="floor"),
    "div_trunc_scalar": lambda m, x: m.div(x, 2, rounding_mode="trunc"),
    "div_floor_tensor": lambda m, x: m.div(x, m.tensor([2.0, 3.0, -1.0, 4.0]), rounding_mode="floor"),
    "div_trunc_tensor": lambda m, x: x.div(m.tensor([2.0, 3.0, -1.0, 4.0]), rounding_mode="trunc"),
    "div_none_explicit": lambda m, x: m.div(x, 2, rounding_mode=None),
    "divide_floor": lambda m, x: x.divide(2.5, rounding_mode="floor"),
    "div_floor_inplace": lambda m, x: (x * 1).div_(2, rounding_mode="floor"),
    "div_plain": lambda m, x: m.div(x, 2),
    "truediv": lambda m, x: x / 2,
    "itruediv": lambda m, x: (x * 1).__itruediv__(2),
    "clamp_min_tensor": lambda m, x: x.clamp(min=m.zeros(4)),
    "clamp_both_tensor": lambda m, x: x.clamp(min=m.zeros(4), max=m.ones(4)),
    "clamp_max_tensor": lambda m, x: m.clamp(x, max=m.ones(4)),
    "clip_tensor": lambda m, x: x.clip(m.zeros(4), m.ones(4)),
    "clamp_tensor_inplace": lambda m, x: (x * 1).clamp_(min=m.zeros(4)),
    "clamp_scalar": lambda m, x: x.clamp(0, 1),
    "clamp_min_scalar_kw": lambda m, x: x.clamp(min=0),
    "clamp_min_fn_tensor": lambda m, x: m.clamp_min(x, m.zeros(4)),
    "clamp_min_fn_scalar": lambda m, x: m.clamp_min(x, 0.0),
    "clamp_max_fn_tensor": lambda m, x: m.clamp_max(x, m.ones(4)),
    "clamp_max_fn_scalar": lambda m, x: x.clamp_max(1.0),
    "clamp_min_inplace_tensor": lambda m, x: (x * 1).clamp_min_(m.zeros(4)),
}


@pytest.mark.parametrize("name", list(NAMES))
def test_grad_fn_names(name):
    out = []
    for m in LIBS:
        x = m.tensor(_X, requires_grad=True)
        y = NAMES[name](m, x)
        y.sum().backward()
        out.append((y, _names(y), x.grad))
    (ty, tn, tg), (fy, fn, fg) = out
    assert fn == tn
    _same(fy, ty)
    _same(fg, tg)


def test_clamp_tensor_bounds_gradients():
    out = []
    for m in LIBS:
        x = m.tensor([1.5, -2.5, 3.0, 0.5], requires_grad=True)
        lo = m.tensor([0.0, 0.0, 0.0, 0.5], requires_grad=True)
        hi = m.tensor([1.0, 1.0, 4.0, 2.0], requires_grad=True)
        y = x.clamp(lo, hi)
        y.sum().backward()
        out.append((_names(y), x.grad, lo.grad, hi.grad))
    assert out[0][0] == out[1][0] == ("ClampBackward0", "ClampBackward0")
    for a, b in zip(out[1][1:], out[0][1:]):
        _same(a, b)


def _cells(m, batched):
    m.manual_seed(0)
    x = m.ones(2, 3) if batched else m.ones(3)
    lstm, gru, rnn = m.nn.LSTMCell(3, 4), m.nn.GRUCell(3, 4), m.nn.RNNCell(3, 4)
    h, c = lstm(x)
    return [h, c, gru(x), rnn(x)]


@pytest.mark.parametrize("batched", [True, False])
def test_rnn_cell_grad_fn_names(batched):
    """LSTMCell: h' = o * tanh(c') (MulBackward0), c' = f * c + i * g (AddBackward0); GRUCell AddBackward0."""
    t, f = _cells(torch, batched), _cells(ft, batched)
    assert [_names(o) for o in f] == [_names(o) for o in t]
    if batched:
        assert [_names(o)[0] for o in t] == ["MulBackward0", "AddBackward0", "AddBackward0", "TanhBackward0"]


def test_lstm_cell_values_and_gradients():
    rng = np.random.default_rng(3)
    x0, h0_, c0_, wh, wc = (rng.standard_normal(s).astype(np.float32) * 0.5
                            for s in ((2, 3), (2, 4), (2, 4), (2, 4), (2, 4)))
    weights = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in ((16, 3), (16, 4), (16,), (16,))]
    out = []
    for m in LIBS:
        cell = m.nn.LSTMCell(3, 4)
        with m.no_grad():
            for p, a in zip(cell.parameters(), weights):
                p.copy_(m.tensor(a))
        x, h0, c0 = (m.tensor(a, requires_grad=True) for a in (x0, h0_, c0_))
        h, c = cell(x, (h0, c0))
        ((h * m.tensor(wh)).sum() + (c * m.tensor(wc)).sum()).backward()
        out.append([h, c, x.grad, h0.grad, c0.grad] + [p.grad for p in cell.parameters()])
    for a, b in zip(out[1], out[0]):
        _same(a, b, 1e-5)


def test_copy_slices_name():
    out = []
    for m in LIBS:
        x = m.tensor(_X, requires_grad=True)
        y = x.clone()
        y[1:] = 5.0
        v = y[:2]
        v.mul_(2)
        y.sum().backward()
        out.append((_names(y), _names(v), x.grad))
    assert out[1][:2] == out[0][:2]
    assert out[0][0] == ("CopySlices", "torch::autograd::CopySlices")
    _same(out[1][2], out[0][2])


# ---- 3. scatter_reduce / index_reduce 'prod' gradients ---------------------------------------------------------
def _reduce_grads(m, op, base, src, index, dim, include_self, in_place=False):
    b = m.tensor(base, requires_grad=True)
    s = m.tensor(src, requires_grad=True)
    idx = m.tensor(index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: index_reduce is in beta)
        if in_place:
            y = b * 1
            getattr(y, op + "_")(dim, idx, s, "prod", include_self=include_self)
        else:
            y = getattr(b, op)(dim, idx, s, "prod", include_self=include_self)
    w = m.tensor(np.linspace(0.5, 2.0, y.numel()).reshape(tuple(y.shape)).astype(np.float32))
    (y * w).sum().backward()
    return y, type(y.grad_fn).__name__, b.grad, s.grad


_SRCS = {"plain": [1.5, -2.5, 3.0, 0.5], "one_zero": [0.0, -2.5, 3.0, 0.5], "two_zeros": [0.0, 0.0, 3.0, 0.5],
         "zeros_apart": [0.0, 2.0, 0.0, 0.0]}
_BASES = {"plain": [2.0, 3.0, 4.0], "zero": [0.0, 3.0, 4.0]}


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("base", list(_BASES))
@pytest.mark.parametrize("src", list(_SRCS))
@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce"])
def test_prod_reduce_gradients(op, src, base, include_self, in_place):
    """Repeated indices (0, 0, 1, 0), zeros in src (one or several per target) and in self."""
    args = (_BASES[base], _SRCS[src], [0, 0, 1, 0], 0, include_self, in_place)
    t, f = _reduce_grads(torch, op, *args), _reduce_grads(ft, op, *args)
    assert f[1] == t[1]
    for a, b in zip((f[0], f[2], f[3]), (t[0], t[2], t[3])):
        _same(a, b, 1e-6)


def test_scatter_reduce_prod_issue_example():
    out = []
    for m in LIBS:
        x = m.tensor([1.5, -2.5, 3.0], requires_grad=True)
        m.ones(2).scatter_reduce(0, m.tensor([0, 0, 1]), x, "prod").sum().backward()
        out.append(x.grad)
    _same(out[1], out[0])
    assert out[1].tolist() == [-2.5, 1.5, 1.0]


@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_scatter_reduce_prod_2d_dims_and_dtypes(dtype):
    base = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    src = [[2.0, 0.0, -1.0, 0.5], [0.5, 3.0, 0.0, 2.0]]
    out = []
    for m in LIBS:
        dt = getattr(m, dtype)
        b = m.tensor(base, dtype=dt, requires_grad=True)
        s = m.tensor(src, dtype=dt, requires_grad=True)
        y = b.scatter_reduce(1, m.tensor([[0, 1, 0, 0], [2, 2, 2, 1]]), s, "prod")
        y.sum().backward()
        out.append((y, b.grad, s.grad))
    for a, b in zip(out[1], out[0]):
        _same(a, b, 1e-2 if dtype == "bfloat16" else 1e-12)


def test_scatter_reduce_prod_second_order():
    """The 'prod' backward is itself differentiable (no zeros: PyTorch's formula, then its gradient)."""
    out = []
    for m in LIBS:
        b = m.tensor([2.0, 3.0, 4.0], requires_grad=True)
        s = m.tensor([1.5, -2.5, 3.0], requires_grad=True)
        y = b.scatter_reduce(0, m.tensor([0, 0, 1]), s, "prod")
        gb, gs = m.autograd.grad((y * y).sum(), (b, s), create_graph=True)
        (gb.sum() + (gs * gs).sum()).backward()
        out.append((gb, gs, b.grad, s.grad))
    for a, b in zip(out[1], out[0]):
        _same(a.detach(), b.detach(), 1e-5)


# ---- 4. ops without a derivative: NotImplemented grad_fn, backward raises --------------------------------------
NO_DERIVATIVE = {
    "floordiv": lambda m, x: x // 2,
    "floor_divide_tensor": lambda m, x: m.floor_divide(x, m.tensor([2.0, -3.0])),
    "rfloordiv": lambda m, x: 7 // x,
    "ifloordiv": lambda m, x: (x * 1).__ifloordiv__(2),
    "floor_divide_": lambda m, x: (x * 1).floor_divide_(m.tensor(2.0)),
    "scatter_reduce_add": lambda m, x: m.zeros(3).scatter(0, m.tensor([0, 0]), x, reduce="add"),
    "scatter_reduce_multiply": lambda m, x: m.ones(3).scatter(0, m.tensor([0, 0]), x, reduce="multiply"),
    "scatter_value_multiply": lambda m, x: x.scatter(0, m.tensor([0, 0]), 2.0, reduce="multiply"),
    "scatter_add_inplace": lambda m, x: (x * 1).scatter_(0, m.tensor([0, 0]), m.tensor([1.0, 2.0]), reduce="add"),
    "heaviside_": lambda m, x: (x * 1).heaviside_(m.tensor([0.5, 0.5])),
}


@pytest.mark.parametrize("name", list(NO_DERIVATIVE))
def test_no_derivative_grad_fn_raises_at_backward(name):
    """The op runs and records PyTorch's NotImplemented node; backward raises its RuntimeError."""
    outs = []
    for m in LIBS:
        x = m.tensor([3.0, -7.5], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = NO_DERIVATIVE[name](m, x)
        outs.append((y, _names(y), y.requires_grad))
    (ty, tn, tr), (fy, fn, fr) = outs
    assert fn == tn == ("NotImplemented", "torch::autograd::NotImplemented") and fr is tr is True
    _same(fy, ty)
    (tt, tm), (ft_, fm) = _errors(lambda m: NO_DERIVATIVE[name](m, m.tensor([3.0, -7.5], requires_grad=True))
                                  .sum().backward())
    assert ft_ is tt is RuntimeError and fm == tm


def test_floor_divide_without_grad_and_remainder_still_differentiable():
    out = []
    for m in LIBS:
        x = m.tensor([3.0, -7.5], requires_grad=True)
        with m.no_grad():
            nog = x // 2
        y = m.remainder(x, 2) + x % m.tensor([2.0, 4.0]) + m.fmod(x, 2)
        y.sum().backward()
        ints = m.tensor([7, -7]) // 2
        out.append((nog.requires_grad, nog.grad_fn, _names(y), x.grad, ints))
    (t_rg, t_fn, t_n, t_g, t_i), (f_rg, f_fn, f_n, f_g, f_i) = out
    assert f_rg is t_rg is False and f_fn is t_fn is None and f_n == t_n
    _same(f_g, t_g)
    _same(f_i, t_i)


def _grad_create_graph(m, name):
    x = m.tensor([3.0, -7.5], requires_grad=True)
    y = NO_DERIVATIVE[name](m, x) * x
    return m.autograd.grad(y.sum(), x, create_graph=True)


@pytest.mark.parametrize("name", ["floor_divide_", "scatter_add_inplace", "floordiv"])
def test_no_derivative_raises_with_create_graph(name):
    """The same error through a differentiable backward (the in-place form's name for an in-place op)."""
    (tt, tm), (ft_, fm) = _errors(lambda m: _grad_create_graph(m, name))
    assert ft_ is tt is RuntimeError and fm == tm


def test_repr_names_the_node_class_as_torch():
    """A tensor's repr names its grad_fn's class (``<CopySlices>``), not ``name()`` (``torch::autograd::...``)."""
    import functorch_lite as ft
    got = []
    for lib in (torch, ft):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y[0] = 5.0
        z = lib.ones(3, requires_grad=True) // 2
        got.append((repr(y).split("grad_fn=")[1], y.grad_fn.name(), repr(z).split("grad_fn=")[1]))
    assert got[1] == got[0] == ("<CopySlices>)", "torch::autograd::CopySlices", "<NotImplemented>)")
