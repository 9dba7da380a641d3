"""float16 / bfloat16 accumulation and rounding against torch's CPU kernels, bit for bit (red-team MoE note, findings
1-2): ``index_add``'s scatter_add path (float32 sums, rounded once); the backward of the data-movement ops (expand /
repeat's ``sum_to_size``, gather's ``scatter_add``: float32; index_select's ``index_add_``: float32 or half step by
step, per rank and dim); the backward of ops torch differentiates from their saved, rounded half result (softmax,
log_softmax, sigmoid, sqrt, rsqrt, reciprocal, expm1, tan), and of a broadcast operand of a pointwise op (its
full-shape gradient rounded, then summed in float32)."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

HALF = ("bfloat16", "float16")
RNG = np.random.default_rng(7)
RNG_X = RNG.standard_normal((4, 3))


def _t(T, a, dt, grad=False):
    x = T.tensor(np.asarray(a, np.float32)).to(getattr(T, dt))
    return x.requires_grad_() if grad else x


def _same(a, b):
    """torch's and the facade's tensors: the same values, bit for bit (a half dtype converts exactly)."""
    np.testing.assert_array_equal(a.detach().float().numpy(), b.detach().float().numpy())


def _both(fn):
    return fn(torch), fn(ft)


# ---- 1. index_add: the scatter_add path sums in float32 ---------------------------------------------------------
@pytest.mark.parametrize("dt", HALF)
def test_index_add_accumulation(dt):
    def run(T, shape, dim):
        x = T.zeros(shape, dtype=getattr(T, dt))
        ss = list(shape)
        ss[dim] = 3
        src = np.ones(ss, np.float32)
        src[(slice(None),) * dim + (0,)] = 256 if dt == "bfloat16" else 2048
        return x.index_add(dim, T.tensor([0, 0, 0]), _t(T, src, dt))
    # (258 / 2050 on dim 0 or the last of a 2-d+ self; 256 / 2048 on a 1-d self and on a middle dim: half steps)
    for shape, dim in [((1, 1), 0), ((1, 1), 1), ((2, 3, 2), 0), ((2, 3, 2), 2), ((2, 3, 2), 1), ((1,), 0)]:
        _same(run(torch, shape, dim), run(ft, shape, dim))


@pytest.mark.parametrize("dt", HALF)
@pytest.mark.parametrize("alpha", [1, 0.37])
def test_index_add_random(dt, alpha):
    idx = RNG.integers(0, 4, 60)
    src, g = RNG.standard_normal((60, 3)), RNG.standard_normal((4, 3))

    def run(T):
        x = _t(T, np.zeros((4, 3)), dt, True)
        s = _t(T, src, dt, True)
        y = x.index_add(0, T.tensor(idx), s, alpha=alpha)
        y.backward(_t(T, g, dt))
        return y, s.grad
    (ty, tg), (fy, fg) = _both(run)
    _same(ty, fy)
    _same(tg, fg)  # (alpha 0.37: the gradient times the float32 alpha, rounded once)


# ---- 2. the backward of expand / repeat / index_select / gather / take_along_dim ---------------------------------
MOVES = {
    "expand": lambda T, x, d: x.expand(*[3 if k == d else -1 for k in range(x.dim())]),
    "expand_as": lambda T, x, d: x.expand_as(T.zeros([3 if k == d else 1 for k in range(x.dim())])),
    "broadcast_to": lambda T, x, d: T.broadcast_to(x, [3 if k == d else 1 for k in range(x.dim())]),
    "repeat": lambda T, x, d: x.repeat(*[3 if k == d else 1 for k in range(x.dim())]),
    "tile": lambda T, x, d: x.tile([3 if k == d else 1 for k in range(x.dim())]),
    "repeat_interleave": lambda T, x, d: x.repeat_interleave(3, d),
    "repeat_interleave_t": lambda T, x, d: x.repeat_interleave(T.tensor([3]), d),
    "index_select": lambda T, x, d: T.index_select(x, d, T.tensor([0, 0, 0])),
    "gather": lambda T, x, d: T.gather(x, d, T.zeros([3 if k == d else 1 for k in range(x.dim())], dtype=T.long)),
    "take_along_dim": lambda T, x, d: T.take_along_dim(
        x, T.zeros([3 if k == d else 1 for k in range(x.dim())], dtype=T.long), d),
}


@pytest.mark.parametrize("dt", HALF)
@pytest.mark.parametrize("shape,dim", [((1,), 0), ((1, 1), 0), ((1, 1), 1), ((1, 1, 1), 1)])
def test_data_movement_backward(dt, shape, dim):
    def run(T, op):
        x = T.zeros(shape, dtype=getattr(T, dt), requires_grad=True)
        y = MOVES[op](T, x, dim)
        g = np.ones(tuple(y.shape), np.float32)
        g.reshape(-1)[0] = 256 if dt == "bfloat16" else 2048
        y.backward(_t(T, g, dt))
        return x.grad
    for op in sorted(MOVES):
        _same(run(torch, op), run(ft, op))


@pytest.mark.parametrize("dt", HALF)
@pytest.mark.parametrize("op", ["gather", "index_select", "take_along_dim_flat", "take_along_dim_bcast", "expand_mid"])
def test_data_movement_backward_random(dt, op):
    idx = RNG.integers(0, 4, (60, 3))
    g = RNG.standard_normal((60, 3) if op != "expand_mid" else (4, 50, 3))

    def run(T):
        x = _t(T, RNG_X[:, :1] if op == "take_along_dim_bcast" else RNG_X, dt, True)
        if op == "gather":
            y = T.gather(x, 0, T.tensor(idx))
        elif op == "index_select":
            y = T.index_select(x, 0, T.tensor(idx[:, 0]))
        elif op == "take_along_dim_flat":
            y = T.take_along_dim(x, T.tensor(idx % 12)).reshape(60, 3)
        elif op == "take_along_dim_bcast":  # (torch rounds its gather's gradient, then sums it over the broadcast)
            y = T.take_along_dim(x, T.tensor(idx), 0)
        else:
            y = x.unsqueeze(1).expand(4, 50, 3)
        y.backward(_t(T, g, dt))
        return x.grad
    _same(*_both(run))


# ---- 3. backward from the saved half result ------------------------------------------------------------------
UNARY = {
    "softmax": lambda T, x: T.nn.functional.softmax(x, -1),
    "softmin": lambda T, x: T.nn.functional.softmin(x, -1),
    "log_softmax_dim0": lambda T, x: T.log_softmax(x, 0),
    "sigmoid": lambda T, x: T.sigmoid(x),
    "sigmoid_": lambda T, x: x.clone().sigmoid_(),
    "sqrt": lambda T, x: T.sqrt(x),  # (of positive inputs)
    "rsqrt": lambda T, x: T.rsqrt(x),
    "reciprocal": lambda T, x: T.reciprocal(x),
    "expm1": lambda T, x: T.expm1(x),
    "tan": lambda T, x: T.tan(x),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_backward_from_saved_result(op):
    a, g = RNG.standard_normal((40, 5)) * 2, RNG.standard_normal((40, 5))
    if op in ("sqrt", "rsqrt"):
        a = np.abs(a) + 0.01

    def run(T, dt):
        x = _t(T, a, dt, True)
        y = UNARY[op](T, x)
        y.backward(_t(T, g, dt))
        return y, x.grad
    for dt in HALF:
        (ty, tg), (fy, fg) = run(torch, dt), run(ft, dt)
        if op != "rsqrt":
            _same(ty, fy)
            _same(tg, fg)
            continue
        # (torch's half rsqrt itself is an ulp off float32's on a few inputs: the gradients compared where it is not)
        keep = ty.detach().float().numpy() == fy.detach().float().numpy()
        assert keep.mean() > 0.9
        np.testing.assert_array_equal(tg.float().numpy()[keep], fg.float().numpy()[keep])


def test_softmax_note_example():
    def run(T):
        lg = T.tensor([[-0.78515625, 2.734375, -1.3203125]], dtype=T.bfloat16, requires_grad=True)
        T.nn.functional.softmax(lg, -1).backward(T.tensor([[0.1513671875, 1.890625, 0.0]], dtype=T.bfloat16))
        return lg.grad
    _same(*_both(run))  # (torch [[-0.047119140625, 0.07373046875, -0.0301513671875]])


@pytest.mark.parametrize("dt", HALF)
def test_softmax_other_dim_backward_formula(dt):
    """Along a non-last dim torch's forward rounds differently (its kernel's exp), so the facade's gradient is checked
    against torch's formula over the facade's own result: ``(g - sum(g * y)) * y`` in float32, rounded once."""
    a, g = RNG.standard_normal((6, 30, 4)), RNG.standard_normal((6, 30, 4))
    x = _t(ft, a, dt, True)
    y = ft.softmax(x, 1)
    y.backward(_t(ft, g, dt))
    yf, gf = torch.tensor(y.detach().float().numpy()), torch.tensor(_t(ft, g, dt).float().numpy())
    ref = ((gf - (gf * yf).sum(1, keepdim=True)) * yf).to(getattr(torch, dt))
    _same(ref, x.grad)


@pytest.mark.parametrize("dt", HALF)
def test_broadcast_operand_backward(dt):
    """``(y * v.unsqueeze(-1)).sum(1)`` (an MoE combine): v's gradient is ``grad * y`` rounded at the full shape,
    then summed in float32 (torch's sum_to)."""
    a, b = RNG.standard_normal((6, 2, 40)), RNG.standard_normal((6, 2))

    def run(T):
        y, v = _t(T, a, dt, True), _t(T, b, dt, True)
        (y * v.unsqueeze(-1)).sum(1).float().pow(2).sum().backward()
        return y.grad, v.grad
    (ty, tv), (fy, fv) = _both(run)
    _same(ty, fy)
    _same(tv, fv)


def test_autocast_router_grad():
    """Under CPU autocast (bfloat16 matmul, softmax in its input's bfloat16), the router's gradient is torch's."""
    rs = np.random.RandomState(13)
    x, r = rs.randn(6, 4).astype(np.float32), rs.randn(4, 3).astype(np.float32)

    def run(T):
        R = T.tensor(r, requires_grad=True)
        with T.autocast("cpu", dtype=T.bfloat16):
            p = T.nn.functional.softmax(T.tensor(x) @ R, -1)
            v, _ = T.topk(p, 2, -1)
            loss = (v.float() * T.arange(2.0)).pow(2).sum()
        loss.backward()
        return R.grad
    _same(*_both(run))
