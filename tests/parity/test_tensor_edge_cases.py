"""Edge cases against real PyTorch: gcd/lcm at a dtype's minimum (no hang, C wraparound), tensor_split with
negative / decreasing / tensor indices, sign/sgn of NaN, torch.inner on N-d and 0-d, ``x in tensor``, 0-d
inputs of shape ops, take_along_dim's index wrap, lerp's 0-d weight, roll / flip / isin argument errors,
floor_divide's signed zero and float16 sigmoid in opmath."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import assert_same_outcome, same


def _cmp(fn):
    """Tensors compared exactly; a tuple/list of tensors piece by piece; otherwise ``same``."""
    assert_same_outcome(fn, torch, ft)


def _cmp_pieces(fn):
    same(lambda m: tuple(fn(m)))


# ---- 1. gcd / lcm -----------------------------------------------------------------------------------------
def _pairs(m, dt, vals):
    a = m.tensor(vals, dtype=getattr(m, dt))
    return a.repeat_interleave(len(vals)), a.repeat(len(vals))


@pytest.mark.parametrize("dt", ["int8", "int16", "uint8"])
@pytest.mark.parametrize("op", ["gcd", "lcm"])
def test_gcd_lcm_all_pairs_small_ints(dt, op):
    info = np.iinfo(dt)
    vals = [int(info.min), int(info.min) + 1, -7, -1, 0, 1, 3, 6, 12, 35, 14, int(info.max)]
    vals = [v for v in vals if info.min <= v <= info.max]
    _cmp(lambda m: getattr(m, op)(*_pairs(m, dt, vals)))


@pytest.mark.parametrize("dt", ["int32", "int64"])
@pytest.mark.parametrize("op", ["gcd", "lcm"])
def test_gcd_lcm_wide_ints_wrap(dt, op):
    info = np.iinfo(dt)  # (pairs reaching INT_MIN % -1 or INT_MIN / -1 crash PyTorch itself: left out)
    vals = [int(info.min) + 1, -7, 0, 1, 3, 6, 12, 35, 14, int(info.max), 2 ** 30 + 1]
    _cmp(lambda m: getattr(m, op)(*_pairs(m, dt, vals)))


@pytest.mark.parametrize("case", [
    lambda m: m.gcd(m.tensor([-128], dtype=m.int8), m.tensor([3], dtype=m.int8)),
    lambda m: m.lcm(m.tensor([-2 ** 63]), m.tensor([3])),
    lambda m: m.gcd(m.tensor([-2 ** 63, -2 ** 63, -2 ** 63, 5]), m.tensor([3, 0, -2 ** 63, -2 ** 63])),
    lambda m: m.lcm(m.tensor([-2 ** 63, -2 ** 63, 2 ** 62 + 1]), m.tensor([3, 0, 3])),
    lambda m: m.gcd(m.tensor([-2 ** 31, -2 ** 31], dtype=m.int32), m.tensor([3, 6], dtype=m.int32)),
    lambda m: m.lcm(m.tensor([-2 ** 31, 2 ** 30 + 1], dtype=m.int32), m.tensor([3, 3], dtype=m.int32)),
    lambda m: m.gcd(m.tensor([[4], [6]]), m.tensor([2, 3, 9])),
    lambda m: m.tensor([-128, 12], dtype=m.int8).gcd_(m.tensor([3, 8], dtype=m.int8)),
])
def test_gcd_lcm_at_dtype_minimum(case):
    _cmp(case)


# ---- 3. tensor_split ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.tensor_split(m.arange(10), [-3]),
    lambda m: m.tensor_split(m.arange(10), [5, 2]),
    lambda m: m.tensor_split(m.arange(10), m.tensor(3)),
    lambda m: m.tensor_split(m.arange(10), m.tensor([2, 5])),
    lambda m: m.tensor_split(m.arange(10), [3, 20, -20]),
    lambda m: m.tensor_split(m.arange(10), (2, 4)),
    lambda m: m.hsplit(m.arange(10), [-2]),
    lambda m: m.tensor_split(m.arange(10), 0),
    lambda m: m.tensor_split(m.arange(10), -1),
    lambda m: m.tensor_split(m.arange(10), m.tensor(3.0)),
    lambda m: m.tensor_split(m.arange(10), m.tensor([[1]])),
    lambda m: m.tensor_split(m.arange(6.).requires_grad_(), 3),
    lambda m: m.tensor_split(m.arange(12).reshape(3, 4), [-1], dim=1),
    lambda m: m.tensor_split(m.arange(10), sections=3), lambda m: m.tensor_split(m.arange(10), indices=[2, -5]),
    lambda m: m.arange(10).tensor_split(indices=[2], dim=0),
    lambda m: m.tensor_split(m.arange(10), tensor_indices_or_sections=m.tensor(2)),
])
def test_tensor_split(case):
    _cmp_pieces(case)


# ---- 4. sign / sgn ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float16", "float64"])
@pytest.mark.parametrize("op", ["sign", "sgn"])
def test_sign_nan_and_negative_zero(dt, op):
    mk = lambda m: m.tensor([float("nan"), -0.0, 0.0, 2.0, -3.0, float("-inf")], dtype=getattr(m, dt))  # noqa: E731
    _cmp(lambda m: getattr(m, op)(mk(m)))
    _cmp(lambda m: getattr(mk(m), op + "_")())
    same(lambda m: [str(v) for v in getattr(m, op)(mk(m)).tolist()])  # the sign of zero too


def test_sgn_complex_nan():
    _cmp(lambda m: m.sgn(m.tensor([complex(float("nan"), 1), complex(0, float("nan")), complex(float("inf"), 1),
                                    3 + 4j, 0j])))


# ---- 5. inner -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.inner(m.arange(6.).reshape(2, 3), m.ones(3)),
    lambda m: m.inner(m.tensor(2.), m.ones(3)),
    lambda m: m.inner(m.ones(2, 3), m.tensor(2.)),
    lambda m: m.inner(m.arange(24.).reshape(2, 3, 4), m.arange(8.).reshape(2, 4)),
    lambda m: m.inner(m.ones(2, 3), m.ones(2)),
    lambda m: m.inner(m.ones(2, 3, dtype=m.int32), m.ones(3)),
    lambda m: m.inner(m.tensor(2), m.ones(3)),
    lambda m: m.arange(3.).inner(m.arange(3.)),
])
def test_inner(case):
    _cmp(case)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (4, 3)), ((), (3,))])
def test_inner_grad_fn(shapes):
    def fn(m):
        a = m.ones(*shapes[0], requires_grad=True)
        b = m.arange(float(np.prod(shapes[1]))).reshape(shapes[1]).requires_grad_()
        r = m.inner(a, b)
        r.sum().backward()
        return r, a.grad, b.grad
    same(fn)


# ---- 6. __contains__ ----------------------------------------------------------------------------------
@pytest.mark.parametrize("elem", [5, 7, 2.0, True, "a", [5], None])
def test_contains(elem):
    same(lambda m: elem in m.arange(6).reshape(2, 3))


def test_contains_tensor():
    same(lambda m: m.tensor([1, 2, 3]) in m.arange(6).reshape(2, 3))
    same(lambda m: m.tensor([5, 1]) in m.arange(6).reshape(2, 3))


# ---- 7. 0-d inputs ------------------------------------------------------------------------------------
def _t(m):
    return m.tensor(2.5)


@pytest.mark.parametrize("case", [
    lambda m: _t(m).flip(0), lambda m: _t(m).flip(-1), lambda m: _t(m).flip(1),
    lambda m: _t(m).index_select(0, m.tensor([0])), lambda m: _t(m).index_select(0, m.tensor(0)),
    lambda m: _t(m).index_select(0, m.tensor([0, 0])),
    lambda m: _t(m).movedim(0, 0), lambda m: _t(m).movedim(1, 0),
    lambda m: m.hstack([_t(m), _t(m)]), lambda m: m.hstack([_t(m), m.ones(2)]),
    lambda m: m.outer(_t(m), _t(m)), lambda m: m.outer(m.ones(2), _t(m)), lambda m: m.outer(m.ones(2, 2), m.ones(2)),
    lambda m: _t(m).narrow(0, 0, 1), lambda m: _t(m).chunk(2), lambda m: _t(m).split(1),
    lambda m: _t(m).split([1]), lambda m: _t(m).tensor_split(2), lambda m: _t(m).tensor_split([1]),
    lambda m: _t(m).unbind(), lambda m: _t(m).roll(1), lambda m: _t(m).roll(1, 0),
    lambda m: m.take_along_dim(_t(m), m.tensor(0)), lambda m: m.take_along_dim(_t(m), m.tensor(0), 0),
    lambda m: _t(m).tril(), lambda m: _t(m).triu(), lambda m: m.ones(3).tril(), lambda m: _t(m).tril_(),
])
def test_zero_dim_inputs(case):
    _cmp(case)


@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_movedim_grad_fn(shape):
    def fn(m):
        x = m.ones(*shape, requires_grad=True)
        y = x.movedim(0, -1) if shape else x.movedim(0, 0)
        y.sum().backward()
        return y, x.grad, y._base is x
    same(fn)


@pytest.mark.parametrize("attr", ["mT", "mH", "H"])
def test_matrix_transposes_of_0d_are_identity(attr):
    def fn(m):
        t = _t(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(t, attr) is t, getattr(t, attr).tolist()
    same(fn)
    same(lambda m: getattr(m.ones(3), attr))


# ---- 8. empty tensors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.chunk(m.zeros(0), 3), lambda m: m.zeros(2, 0).chunk(2, -1), lambda m: m.zeros(0, 4).chunk(5),
])
def test_chunk_of_empty(case):
    _cmp_pieces(case)


def _F(m):
    return m.nn.functional


_PAD_SHAPES = [((0, 3), (1, 1)), ((2, 0), (1, 1)), ((0, 2, 3), (1, 1)), ((1, 0, 3), (1, 1)), ((1, 2, 0), (1, 1)),
               ((1, 0, 3, 3), (1, 1, 1, 1)), ((0, 2, 3, 3), (1, 1, 1, 1)), ((1, 2, 0, 3), (1, 1, 1, 1)),
               ((2, 0, 3), (1, 1, 1, 1)), ((0, 3, 3), (1, 1, 1, 1)), ((1, 0, 2, 2, 2), (1, 1, 1, 1, 1, 1)),
               ((0, 2, 2, 2, 2), (1, 1, 1, 1, 1, 1)), ((0, 2, 2, 2), (1, 1, 1, 1, 1, 1))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", _PAD_SHAPES)
def test_pad_of_empty(mode, shape, pad):
    _cmp(lambda m: _F(m).pad(m.zeros(*shape), pad, mode=mode))


@pytest.mark.parametrize("shape,mode", [((1, 0, 3), "nearest"), ((1, 0, 3), "linear"), ((1, 0, 3), "nearest-exact"),
                                        ((1, 0, 3), "area"), ((0, 2, 3), "linear"), ((1, 0, 3, 3), "bilinear"),
                                        ((1, 0, 3, 3), "bicubic"), ((1, 0, 3, 3), "area"), ((0, 2, 3, 3), "nearest"),
                                        ((1, 0, 3, 3, 3), "trilinear"), ((1, 0, 3, 3, 3), "area"),
                                        ((1, 2, 0), "nearest")])
def test_interpolate_of_empty(shape, mode):
    _cmp(lambda m: _F(m).interpolate(m.zeros(*shape), scale_factor=2, mode=mode))


@pytest.mark.parametrize("shape", [(0, 3, 3), (1, 2, 0, 3), (1, 0, 3, 3), (2, 0, 3), (1, 0, 0, 3)])
def test_adaptive_avg_pool2d_of_empty(shape):
    _cmp(lambda m: _F(m).adaptive_avg_pool2d(m.zeros(*shape), 2))


@pytest.mark.parametrize("case", [
    lambda m: m.histogram(m.zeros(0), bins=2).bin_edges, lambda m: m.histogram(m.zeros(0), bins=2).hist,
    lambda m: m.aminmax(m.zeros(0)), lambda m: m.aminmax(m.zeros(2, 0), dim=1), lambda m: m.aminmax(m.zeros(2, 0), dim=-1),
    lambda m: m.norm(m.zeros(0), float("inf")), lambda m: m.norm(m.zeros(0), float("-inf")),
    lambda m: m.norm(m.zeros(0), -1), lambda m: m.norm(m.zeros(2, 0), float("inf"), dim=-1),
    lambda m: m.norm(m.zeros(2, 0), float("inf"), dim=0), lambda m: m.norm(m.zeros(0), 2),
    lambda m: m.zeros(2, 0).amax(-1), lambda m: m.zeros(0, 2).amax(-2), lambda m: m.zeros(2, 0).amin(1),
    lambda m: m.zeros(2, 0).amax((-1, 0)), lambda m: m.zeros(0, 2).amax((1, 0)), lambda m: m.zeros(2, 0).max(-1),
])
def test_empty_reductions(case):
    _cmp(case)


# ---- 10. misc ---------------------------------------------------------------------------------------------
def _a(m):
    return m.arange(12.).reshape(3, 4)


@pytest.mark.parametrize("case", [
    lambda m: m.take_along_dim(_a(m), m.tensor([[-1]]), dim=1),
    lambda m: m.take_along_dim(_a(m), m.tensor([[-4, 3]]), dim=1),
    lambda m: m.take_along_dim(_a(m), m.tensor([[-5], [4], [7]]), dim=1),
    lambda m: m.take_along_dim(_a(m), m.tensor([-1])),
    lambda m: m.take_along_dim(_a(m), m.tensor([[-1]], dtype=m.int32), dim=1),
    lambda m: m.lerp(_a(m), _a(m) + 1, m.tensor(1)),
    lambda m: m.lerp(_a(m), _a(m) + 1, m.tensor(0.5, dtype=m.float64)),
    lambda m: m.lerp(_a(m), _a(m) + 1, m.tensor([1, 0, 1, 0])),
    lambda m: m.roll(_a(m), (1, 2), 0), lambda m: m.roll(_a(m), 1, (0, 1)), lambda m: m.roll(_a(m), (), ()),
    lambda m: m.roll(_a(m), (1, -1), (0, 1)), lambda m: m.roll(_a(m), 1, 3),
    lambda m: m.isin(m.tensor([True, False]), m.tensor([True])), lambda m: m.isin(m.tensor([1, 2]), m.tensor([True])),
    lambda m: m.isin(m.tensor([1., 2.]), m.tensor([True])), lambda m: m.isin(m.tensor([1, 2]), m.tensor([2])),
    lambda m: m.flip(_a(m), (0, 0)), lambda m: m.flip(_a(m), (1, -1)), lambda m: m.flip(_a(m), (0, 1)),
    lambda m: m.floor_divide(m.tensor([0., -0., 1., -1., 5., -5.]), m.tensor([-2., -2., float("inf"), float("inf"),
                                                                              -2., 2.])),
    lambda m: m.tensor([0., -0.], dtype=m.float16) // -2.,
])
def test_misc(case):
    _cmp(case)


def test_floor_divide_signed_zero():
    same(lambda m: [str(v) for v in m.floor_divide(m.tensor([0., -0., 0., -0.]), m.tensor([-2., -2., 2., 2.])).tolist()])


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_sigmoid_reduced_float_in_opmath(dt):
    _cmp(lambda m: m.sigmoid(m.linspace(-8, 8, 401).to(getattr(m, dt))))
