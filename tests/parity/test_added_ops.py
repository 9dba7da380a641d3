"""Parity of the added APIs against real PyTorch: allclose, equal, type_as, repeat_interleave, meshgrid, diag,
tril/triu_indices, isin, addcmul/addcdiv, bernoulli, the activations (elu/selu/celu, softplus, relu6,
hardswish, hardsigmoid, mish, prelu, glu, softsign), cosine_similarity, pairwise_distance and their nn modules.

Each case runs the same program on the same numpy inputs in both libraries and compares values, dtype,
shape, grad_fn name and gradients; misuse cases compare the exception type and message."""
import math

import numpy as np
import pytest
import torch

import functorch_lite as ft

R = np.random.default_rng(2024)
X34 = R.standard_normal((3, 4))
V4 = R.standard_normal(4)
W3 = R.standard_normal(3)
ACT = np.array([[-4.0, -3.0, -2.5, -1.0, -0.0, 0.0], [0.3, 1.0, 2.0, 3.0, 3.5, 7.0]])


def _np(t):
    t = t.detach()
    if t.dtype in (torch.bfloat16, ft.bfloat16):
        t = t.float()
    return np.asarray(t.numpy(), dtype=np.float64) if t.dtype.is_floating_point else t.numpy()


def _same(ours, theirs, tol):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t, tol)
        return
    if not isinstance(theirs, torch.Tensor):
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)
        return
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    tg, og = theirs.grad_fn, ours.grad_fn
    assert (None if tg is None else tg.name()) == (None if og is None else og.name())
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=tol, atol=tol)


def run_both(fn, arrays=(), dtype="float32", grad=True, tol=None):
    """``fn(mod, *tensors)`` in both libraries; outputs and (when ``grad``) input gradients compared."""
    tol = tol if tol is not None else {"float64": 1e-10, "float32": 2e-5}.get(dtype, 1e-2)
    res = []
    for m in (torch, ft):
        dt = getattr(m, dtype)
        xs = [m.tensor(np.asarray(a), dtype=dt, requires_grad=grad and dt.is_floating_point) for a in arrays]
        out = fn(m, *xs)
        grads = None
        if grad and isinstance(out, m.Tensor) and out.requires_grad:
            w = m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
            out.backward(w)
            grads = [x.grad for x in xs]
        res.append((out, grads))
    (tout, tg), (oout, og) = res
    _same(oout, tout, tol)
    if tg is not None:
        for a, b in zip(og, tg):
            if b is None:
                assert a is None or not np.any(_np(a))
            else:
                _same(a, b, tol)
    return oout


def raises_both(fn, match_message=True):
    """Both libraries raise the same exception type (and message, unless told otherwise)."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as fe:
        fn(ft)
    if match_message:
        assert str(fe.value) == str(te.value)


# ---- allclose / equal / type_as --------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m, a: m.allclose(a, a + 1e-9), lambda m, a: a.allclose(a * 1.1, rtol=0.2), lambda m, a: m.allclose(a, a * 2),
    lambda m, a: m.allclose(a, a[0]), lambda m, a: m.allclose(m.ones(3, 4), m.ones(4)),
    lambda m, a: m.allclose(m.tensor([math.nan]), m.tensor([math.nan]), equal_nan=True),
    lambda m, a: m.allclose(m.tensor([math.nan]), m.tensor([math.nan])),
    lambda m, a: m.equal(a, a.clone()), lambda m, a: a.equal(a + 1), lambda m, a: m.equal(m.arange(3), m.arange(3.0)),
    lambda m, a: m.equal(m.ones(3, 4), m.ones(4)), lambda m, a: m.equal(m.tensor([math.nan]), m.tensor([math.nan])),
    lambda m, a: m.equal(m.arange(3), m.arange(3)),
])
def test_allclose_equal(case):
    run_both(case, [X34], grad=False)


def test_allclose_equal_errors():
    raises_both(lambda m: m.allclose(m.arange(3), m.arange(3.0)))
    raises_both(lambda m: m.equal(m.arange(3), 1))
    raises_both(lambda m: m.allclose(m.ones(3), m.ones(4)))


def test_type_as():
    run_both(lambda m, a: a.type_as(m.arange(2)), [X34])
    run_both(lambda m, a: a.type_as(m.ones(2, dtype=m.float64)), [X34])
    run_both(lambda m, a: a.type_as(m.ones(2, dtype=m.float16)), [X34], tol=1e-3)
    x = ft.ones(3)
    assert x.type_as(ft.zeros(1)) is x


# ---- repeat_interleave ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m, a: m.repeat_interleave(a, 2, dim=0), lambda m, a: m.repeat_interleave(a, 3),
    lambda m, a: a.repeat_interleave(2, 1), lambda m, a: a.repeat_interleave(2, dim=-1, output_size=8),
    lambda m, a: m.repeat_interleave(a, m.tensor([1, 0, 2]), dim=0),
    lambda m, a: m.repeat_interleave(a, m.tensor([2]), dim=1), lambda m, a: m.repeat_interleave(a, m.tensor(2), dim=1),
    lambda m, a: m.repeat_interleave(a, m.tensor([1, 0, 2, 3], dtype=m.int32), dim=1, output_size=6),
    lambda m, a: m.repeat_interleave(a[0], m.tensor([1, 0, 2, 1])), lambda m, a: m.repeat_interleave(a[0, 0], 2),
    lambda m, a: m.repeat_interleave(a, 0, dim=0),
])
def test_repeat_interleave(case):
    run_both(case, [X34], dtype="float64")


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float16"])
def test_repeat_interleave_dtypes(dtype):
    run_both(lambda m, a: m.repeat_interleave(a, 2, dim=0), [np.round(X34 * 2)], dtype=dtype)
    run_both(lambda m, a: m.repeat_interleave(a, m.tensor([0, 2, 1]), dim=0), [np.round(X34 * 2)], dtype=dtype)


def test_repeat_interleave_index_form():
    run_both(lambda m: m.repeat_interleave(m.tensor([1, 0, 3])), grad=False)
    run_both(lambda m: m.repeat_interleave(m.tensor([2, 1], dtype=m.int32)), grad=False)
    raises_both(lambda m: m.tensor([2, 1]).repeat_interleave(), match_message=False)


@pytest.mark.parametrize("case", [
    lambda m: m.repeat_interleave(m.ones(3, 4), m.tensor([1, -1, 2]), dim=0),
    lambda m: m.repeat_interleave(m.ones(3, 4), -1, dim=0),
    lambda m: m.repeat_interleave(m.ones(3, 4), m.tensor([1, 2]), dim=0),
    lambda m: m.repeat_interleave(m.ones(3, 4), m.tensor([1.0, 2, 3]), dim=0),
    lambda m: m.repeat_interleave(m.ones(3, 4), m.tensor([1, 1, 1]), dim=0, output_size=5),
    lambda m: m.repeat_interleave(m.ones(3, 4), 2, dim=0, output_size=5),
    lambda m: m.repeat_interleave(m.ones(3, 4), m.tensor([[1, 1, 1]]), dim=0),
    lambda m: m.repeat_interleave(m.ones(3, 4), 2, dim=3),
])
def test_repeat_interleave_errors(case):
    raises_both(case)


# ---- meshgrid / diag / tril_indices / triu_indices -----------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m, a, b: m.meshgrid(a, b, indexing="ij"), lambda m, a, b: m.meshgrid(a, b, indexing="xy"),
    lambda m, a, b: m.meshgrid([a, b, a], indexing="xy"), lambda m, a, b: m.meshgrid((b, a), indexing="ij"),
    lambda m, a, b: m.meshgrid(a, indexing="xy"), lambda m, a, b: m.meshgrid(a[0], b, indexing="ij"),
])
def test_meshgrid(case):
    outs = run_both(case, [V4, W3], dtype="float64", grad=False)
    assert isinstance(outs, tuple)
    for k in range(len(outs)):  # gradients through each grid
        run_both(lambda m, a, b: case(m, a, b)[k] * 1, [V4, W3], dtype="float64")


def test_meshgrid_default_indexing_warns():
    ft.set_warn_always(True)  # (torch's TORCH_WARN_ONCE: an earlier test may have shown it in this process)
    try:
        with pytest.warns(UserWarning, match="indexing argument"):
            ft.meshgrid(ft.ones(2), ft.ones(3))
    finally:
        ft.set_warn_always(False)


@pytest.mark.parametrize("case", [
    lambda m: m.meshgrid(m.ones(2), m.ones(2), indexing="foo"), lambda m: m.meshgrid(indexing="ij"),
    lambda m: m.meshgrid(m.arange(2), m.ones(2), indexing="ij"),
])
def test_meshgrid_errors(case):
    raises_both(case)
    raises_both(lambda m: m.meshgrid(m.ones(2, 2), indexing="ij"), match_message=False)


@pytest.mark.parametrize("case", [
    lambda m, a, x: m.diag(a), lambda m, a, x: m.diag(a, 1), lambda m, a, x: m.diag(a, -2), lambda m, a, x: x.diag(),
    lambda m, a, x: m.diag(x, 2), lambda m, a, x: x.diag(-1), lambda m, a, x: m.diag(x, 7),
])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_diag(case, dtype):
    run_both(case, [V4, X34], dtype=dtype)


def test_diag_errors():
    raises_both(lambda m: m.diag(m.ones(2, 2, 2)))
    raises_both(lambda m: m.diag(m.tensor(1.0)))


@pytest.mark.parametrize("case", [
    lambda m: m.tril_indices(3, 4, 1), lambda m: m.triu_indices(3, 4, -1), lambda m: m.tril_indices(4, 3),
    lambda m: m.triu_indices(4, 4, dtype=m.int32), lambda m: m.tril_indices(0, 3), lambda m: m.triu_indices(4, 3, 5),
    lambda m: m.tril_indices(4, 3, -9), lambda m: m.tril_indices(5, 2, -1),
])
def test_tri_indices(case):
    run_both(case, grad=False)


def test_tri_indices_errors():
    raises_both(lambda m: m.tril_indices(-1, 3))
    raises_both(lambda m: m.triu_indices(3, -2))
    raises_both(lambda m: m.tril_indices(3, 3, dtype=m.float32))


# ---- isin ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.isin(m.arange(6), m.tensor([1, 3, 9])), lambda m: m.isin(m.arange(6), m.tensor([1, 3]), invert=True),
    lambda m: m.isin(m.arange(6).view(2, 3), 2), lambda m: m.isin(2, m.arange(4)),
    lambda m: m.isin(m.arange(4), m.tensor([1.5, 2.0])), lambda m: m.isin(m.arange(4), 2.5),
    lambda m: m.isin(m.arange(4.0) + 0.5, m.tensor([1, 2])),
    lambda m: m.isin(elements=m.arange(4), test_elements=m.tensor([[0, 3]]), assume_unique=True),
    lambda m: m.isin(m.tensor([math.nan, 1.0]), m.tensor([math.nan, 1.0])),
    lambda m: m.isin(m.ones(3, requires_grad=True), m.ones(2)),
])
def test_isin(case):
    run_both(case, grad=False)


def test_isin_errors():
    raises_both(lambda m: m.isin(m.tensor([True, False]), m.tensor([True])))
    raises_both(lambda m: m.isin(1, 2), match_message=False)


# ---- addcmul / addcdiv --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_addc(op, dtype):
    b = np.abs(V4) + 0.5
    run_both(lambda m, x, a, c: getattr(m, op)(x, a, c), [X34, V4, b], dtype=dtype)
    run_both(lambda m, x, a, c: getattr(m, op)(x, a, c, value=-2.5), [X34, W3[:, None], b], dtype=dtype)
    run_both(lambda m, x, a, c: getattr(x, op)(a, c, value=2), [X34, X34, b], dtype=dtype)
    run_both(lambda m, x, a, c: getattr(x * 1, op + "_")(a, c, value=0.5), [X34, V4, b], dtype=dtype)


@pytest.mark.parametrize("case", [
    lambda m: m.addcmul(m.arange(4), m.arange(4), m.arange(4), value=2.5),
    lambda m: m.addcmul(m.arange(4), m.arange(4), m.arange(4.0)),
    lambda m: m.addcdiv(m.arange(4), m.arange(1.0, 5.0), m.arange(1.0, 5.0), value=3),
    lambda m: m.ones(4).addcmul_(m.arange(4), m.arange(4), value=3),
    lambda m: m.addcmul(m.arange(4, dtype=m.uint8), m.arange(4, dtype=m.uint8), m.arange(4, dtype=m.uint8), value=-1),
])
def test_addc_integers(case):
    run_both(case, grad=False)


@pytest.mark.parametrize("case", [
    lambda m: m.addcmul(m.tensor([True]), m.tensor([True]), m.tensor([True])),
    lambda m: m.addcdiv(m.arange(4), m.arange(4), m.arange(4)),
    lambda m: m.addcdiv(m.ones(3), m.tensor([True] * 3), m.arange(3)),
    lambda m: m.ones(4, dtype=m.int64).addcmul_(m.ones(4), m.ones(4)),
    lambda m: m.addcmul(m.ones(3), m.ones(4), m.ones(4)),
])
def test_addc_errors(case):
    raises_both(case)


# ---- bernoulli ---------------------------------------------------------------------------------------------------
def test_bernoulli_values_and_grad():
    ft.manual_seed(0)
    p = ft.tensor(np.linspace(0.0, 1.0, 11), dtype=ft.float32).repeat(2000).requires_grad_()
    y = ft.bernoulli(p)
    assert y.dtype is ft.float32 and y.grad_fn.name() == "BernoulliBackward0"
    vals = y.detach().numpy().reshape(2000, 11)
    assert set(np.unique(vals)) <= {0.0, 1.0}
    assert vals[:, 0].sum() == 0 and vals[:, -1].sum() == 2000
    np.testing.assert_allclose(vals.mean(0), np.linspace(0, 1, 11), atol=0.04)
    y.sum().backward()
    assert not np.any(p.grad.numpy())
    assert ft.tensor([0.5, 0.5], dtype=ft.float16).bernoulli().dtype is ft.float16
    assert ft.bernoulli(ft.ones(3, dtype=ft.float64), 0.0).tolist() == [0.0, 0.0, 0.0]
    assert ft.ones(3).bernoulli(1.0).tolist() == [1.0, 1.0, 1.0]


def test_bernoulli_generator_reproducible():
    g1, g2 = ft.Generator().manual_seed(5), ft.Generator().manual_seed(5)
    p = ft.full((64,), 0.5)
    assert ft.equal(ft.bernoulli(p, generator=g1), ft.bernoulli(p, generator=g2))
    ft.manual_seed(3)
    a = ft.bernoulli(p)
    ft.manual_seed(3)
    assert ft.equal(a, ft.bernoulli(p))


def test_bernoulli_inplace_tensor_p():
    ft.manual_seed(1)
    x = ft.zeros(2000, 3).bernoulli_(ft.tensor([0.0, 1.0, 0.25]))
    m = x.numpy().mean(0)
    assert m[0] == 0 and m[1] == 1 and abs(m[2] - 0.25) < 0.04


@pytest.mark.parametrize("case", [
    lambda m: m.bernoulli(m.ones(3, dtype=m.int64)), lambda m: m.bernoulli(m.ones(3, dtype=m.bool)),
    lambda m: m.bernoulli(m.full((3,), 1.5)), lambda m: m.bernoulli(m.full((3,), 0.5), 1.5),
    lambda m: m.zeros(3).bernoulli_(m.tensor([0.5, -0.1, 0.2])),
])
def test_bernoulli_errors(case):
    raises_both(case)


# ---- activations ---------------------------------------------------------------------------------------------------
_ACTS = {
    "elu": lambda F, x: F.elu(x, 0.7), "selu": lambda F, x: F.selu(x), "celu": lambda F, x: F.celu(x, 1.5),
    "softplus": lambda F, x: F.softplus(x, 2.0, 3.0), "relu6": lambda F, x: F.relu6(x),
    "hardswish": lambda F, x: F.hardswish(x), "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "mish": lambda F, x: F.mish(x), "softsign": lambda F, x: F.softsign(x), "glu": lambda F, x: F.glu(x),
    "glu0": lambda F, x: F.glu(x, 0), "prelu": lambda F, x: F.prelu(x, x.new_tensor([0.1, -0.3, 0.2, 0.5, 1.5, 0.0])),
    "prelu1": lambda F, x: F.prelu(x, x.new_tensor([-0.3])),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(_ACTS))
def test_activation(name, dtype):
    run_both(lambda m, x: _ACTS[name](m.nn.functional, x), [ACT], dtype=dtype,
             tol={"float16": 2e-3, "bfloat16": 2e-2}.get(dtype))


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("name", sorted(_ACTS))
def test_activation_integer_inputs(name, dtype):
    fn = _ACTS[name]
    try:
        fn(torch.nn.functional, torch.tensor(ACT).to(getattr(torch, dtype)))
    except Exception:  # noqa: BLE001
        raises_both(lambda m: fn(m.nn.functional, m.tensor(ACT).to(getattr(m, dtype))))
        return
    run_both(lambda m, x: fn(m.nn.functional, x), [ACT], dtype=dtype, grad=False)


_INPLACE = {
    "elu_": lambda F, x: F.elu_(x, 0.5), "elu": lambda F, x: F.elu(x, inplace=True),
    "selu": lambda F, x: F.selu(x, inplace=True), "torch.selu_": lambda F, x: torch_or_ft(F).selu_(x),
    "celu": lambda F, x: F.celu(x, 2.0, inplace=True), "torch.celu_": lambda F, x: torch_or_ft(F).celu_(x),
    "relu6": lambda F, x: F.relu6(x, inplace=True), "hardtanh": lambda F, x: F.hardtanh(x, -2, 2.5, inplace=True),
    "hardswish": lambda F, x: F.hardswish(x, inplace=True), "hardsigmoid": lambda F, x: F.hardsigmoid(x, True),
    "mish": lambda F, x: F.mish(x, inplace=True),
}


def torch_or_ft(F):
    return torch if F is torch.nn.functional else ft


@pytest.mark.parametrize("name", sorted(_INPLACE))
def test_activation_inplace(name):
    def fn(m, x):
        y = x * 1
        r = _INPLACE[name](m.nn.functional, y)
        assert r is y
        return r
    run_both(fn, [ACT], dtype="float64")


def test_top_level_activations():
    run_both(lambda m, x: m.selu(x) + m.celu(x, 0.5), [ACT], dtype="float64")
    run_both(lambda m, x: m.prelu(x, m.tensor([0.2], dtype=m.float64)) + x.prelu(m.tensor([0.3], dtype=m.float64)),
             [ACT], dtype="float64")


@pytest.mark.parametrize("case", [
    lambda m: m.nn.functional.glu(m.ones(3, 3), 0), lambda m: m.nn.functional.glu(m.ones(4, 3), -1),
    lambda m: m.nn.functional.glu(m.tensor(1.0)), lambda m: m.nn.functional.celu(m.ones(2), 0.0),
    lambda m: m.nn.functional.prelu(m.ones(3, 4), m.ones(3)), lambda m: m.nn.functional.prelu(m.ones(4), m.ones(4)),
    lambda m: m.nn.functional.prelu(m.arange(4), m.tensor([1])),
    lambda m: m.nn.functional.prelu(m.ones(3, dtype=m.float64), m.ones(1)),
    lambda m: m.nn.functional.prelu(m.ones(3, 4), m.ones(1, 4)),
])
def test_activation_errors(case):
    raises_both(case)


def test_prelu_channels():
    run_both(lambda m, x, w: m.nn.functional.prelu(x, w), [R.standard_normal((2, 3, 4)), W3], dtype="float64")
    run_both(lambda m, x, w: m.nn.functional.prelu(x, w), [R.standard_normal((2, 3)), W3], dtype="float64")
    run_both(lambda m, x, w: m.nn.functional.prelu(x, w), [np.array(-1.5), W3[:1]], dtype="float64")


# ---- cosine_similarity / pairwise_distance ---------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m, a, b: m.nn.functional.cosine_similarity(a, b), lambda m, a, b: m.cosine_similarity(a, b, 0),
    lambda m, a, b: m.nn.functional.cosine_similarity(a, b[0], dim=-1),
    lambda m, a, b: m.nn.functional.cosine_similarity(a, a * 0, eps=1e-3),
    lambda m, a, b: m.nn.functional.cosine_similarity(a[0], b[1], dim=0),
    lambda m, a, b: m.nn.functional.pairwise_distance(a, b), lambda m, a, b: m.pairwise_distance(a, b, keepdim=True),
    lambda m, a, b: m.nn.functional.pairwise_distance(a, b, p=1), lambda m, a, b: m.nn.functional.pairwise_distance(
        a, b, p=math.inf), lambda m, a, b: m.nn.functional.pairwise_distance(a, b, p=0),
    lambda m, a, b: m.nn.functional.pairwise_distance(a, b[0], p=-1.5),
    lambda m, a, b: m.nn.functional.pairwise_distance(a, b, p=3, eps=0.1),
    lambda m, a, b: m.nn.functional.pairwise_distance(a[0], b[0]),
    lambda m, a, b: m.nn.functional.pairwise_distance(a[0, 0], b[0, 0]),
])
@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_distances(case, dtype):
    run_both(case, [X34, R.standard_normal((3, 4))], dtype=dtype, tol={"float16": 5e-3}.get(dtype))


@pytest.mark.parametrize("case", [
    lambda m: m.nn.functional.cosine_similarity(m.arange(3), m.arange(3.0), dim=0),
    lambda m: m.nn.functional.cosine_similarity(m.ones(3, 4), m.ones(3, 4, dtype=m.float64)),
    lambda m: m.nn.functional.pairwise_distance(m.arange(4), m.arange(4) * 2),
    lambda m: m.nn.functional.pairwise_distance(m.ones(2, 3), m.ones(2, 3, dtype=m.float64)),
])
def test_distance_dtypes(case):
    run_both(case, grad=False)


@pytest.mark.parametrize("case", [
    lambda m: m.nn.functional.cosine_similarity(m.arange(3), m.arange(3), dim=0),
    lambda m: m.nn.functional.cosine_similarity(m.tensor([True]), m.tensor([True]), dim=0),
    lambda m: m.nn.functional.cosine_similarity(m.ones(3, 4), m.ones(3, 5)),
    lambda m: m.nn.functional.cosine_similarity(m.ones(3, 4), m.ones(3, 4), dim=2),
    lambda m: m.nn.functional.pairwise_distance(m.tensor([True]), m.tensor([True])),
    lambda m: m.nn.functional.pairwise_distance(m.tensor([True]), m.tensor([1])),
    lambda m: m.nn.functional.pairwise_distance(m.ones(3, 4), m.ones(3, 5)),
])
def test_distance_errors(case):
    raises_both(case)


# ---- modules -------------------------------------------------------------------------------------------------------
_MODULES = ["ELU()", "ELU(0.5, inplace=True)", "SELU()", "SELU(True)", "CELU()", "CELU(2.0, True)", "Softplus()",
            "Softplus(2, 10)", "Hardtanh(-2, 3)", "ReLU6()", "ReLU6(True)", "Hardswish()", "Hardswish(True)",
            "Hardsigmoid()", "Hardsigmoid(True)", "Mish()", "Mish(True)", "PReLU()", "PReLU(8, 0.1)", "GLU()",
            "GLU(0)", "Softsign()"]


@pytest.mark.parametrize("spec", _MODULES)
def test_module(spec):
    assert repr(eval("ft.nn." + spec)) == repr(eval("torch.nn." + spec))

    def fn(m, x):
        mod = eval("m.nn." + spec).to(m.float64)
        return mod(x * 1)
    run_both(fn, [np.concatenate([ACT, ACT[:, :2] * 0.7], axis=1)], dtype="float64")


@pytest.mark.parametrize("spec", ["CosineSimilarity()", "CosineSimilarity(0, 1e-6)", "PairwiseDistance()",
                                  "PairwiseDistance(1, 1e-3, True)"])
def test_distance_module(spec):
    assert repr(eval("ft.nn." + spec)) == repr(eval("torch.nn." + spec))
    run_both(lambda m, a, b: eval("m.nn." + spec)(a, b), [X34, R.standard_normal((3, 4))], dtype="float64")


def test_prelu_module_parameter_and_training():
    for m in (torch, ft):
        mod = m.nn.PReLU(3, init=0.1)
        (name, p), = mod.named_parameters()
        assert name == "weight" and tuple(p.shape) == (3,) and p.requires_grad and mod.num_parameters == 3
        assert list(mod.state_dict()) == ["weight"]
    res = []
    for m in (torch, ft):
        mod = m.nn.PReLU(3, init=0.1)
        opt = m.optim.SGD(mod.parameters(), lr=0.5)
        x = m.tensor(R.standard_normal((2, 3, 5)) if m is torch else res[0][0], dtype=m.float32)
        mod(x).sum().backward()
        opt.step()
        res.append((x.numpy(), mod.weight.detach().numpy()))
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5)
    raises_both(lambda m: m.nn.PReLU(3)(m.ones(2, 4)))
