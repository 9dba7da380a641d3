"""Parity with torch 2.13 for a red team's integer / out= findings: ``div(rounding_mode='floor')`` gives a zero
quotient the sign of a / b (as ``floor_divide``); ``randperm`` checks that n - 1 fits an integer dtype (and n the
exact range of float16 / float32); out= dtype rules where torch wants the result's dtype exactly (unary kernels,
argmax / argmin, any / all, take, signbit / isposinf / isneginf, nan_to_num, kthvalue / mode / median, matmul of
two vectors), with each op's message, and ``clamp``'s tensor-bound overload still casting; relu / isnan / isinf /
isfinite / positive take no out=; an in-place op checks that its result type casts to ``self`` before looking for a
kernel (``x <<= 2.0`` of a Long x); logsumexp's out= of an integer dtype; median's full reduction takes no out=."""
import pytest
import torch

import functorch_lite as ft
from _parity import same


def _sign_and_values(r):
    return r, r.signbit()


# ---- div(rounding_mode='floor'): floor_divide's signed zero ------------------------------------------------------
def test_div_floor_zero_quotient_sign():
    inf = float("inf")
    same(lambda m: _sign_and_values(m.div(m.tensor([-0.0, -1.0, 0.0, 1.0, 5.0]),
                                          m.tensor([3.0, -inf, -2.0, inf, -2.5]), rounding_mode="floor")))
    same(lambda m: _sign_and_values(m.div(m.tensor([-0.0, -1.0, 0.5]), 3.0, rounding_mode="floor")))
    same(lambda m: _sign_and_values(m.floor_divide(m.tensor([-0.0, -1.0, 0.0]), m.tensor([3.0, -inf, -2.0]))))
    same(lambda m: m.div(m.tensor([-7, 7, 0]), m.tensor([2, -2, 3]), rounding_mode="floor"))


def test_div_floor_grad_is_zero():
    def f(m):
        x = m.tensor([-0.5, 1.5, 3.0], requires_grad=True)
        y = m.div(x, m.tensor([2.0, -1.0, 4.0]), rounding_mode="floor")
        y.sum().backward()
        return y, x.grad
    same(f)


# ---- randperm: the dtype's range -------------------------------------------------------------------------------
@pytest.mark.parametrize("dt, n", [("uint8", 256), ("uint8", 257), ("uint8", 300), ("int8", 128), ("int8", 129),
                                   ("int16", 32768), ("int16", 32769), ("int32", 300), ("float16", 2049),
                                   ("float16", 2050), ("float16", 5000), ("bfloat16", 3000), ("uint8", 0),
                                   ("uint8", 1)])
def test_randperm_range(dt, n):
    same(lambda m: m.randperm(n, dtype=getattr(m, dt)).sort()[0][-1:])


def test_randperm_out_range():
    same(lambda m: m.randperm(300, out=m.empty(0, dtype=m.uint8)))


def test_randperm_float32_limit():
    same(lambda m: m.randperm(2 ** 24 + 2, dtype=m.float32))


# ---- out= of the result's dtype exactly -----------------------------------------------------------------------------
_UNARY = ["abs", "neg", "negative", "absolute", "floor", "ceil", "round", "trunc", "fix", "sign", "sgn",
          "conj_physical", "nan_to_num", "exp", "sin", "sqrt", "sigmoid", "square", "reciprocal"]


@pytest.mark.parametrize("op", _UNARY)
@pytest.mark.parametrize("src, odt", [("int64", "int8"), ("int64", "float32"), ("float32", "float64"),
                                      ("float32", "int64"), ("float32", "float16"), ("int32", "int64"),
                                      ("float32", "bool"), ("int64", "int64"), ("float32", "float32")])
def test_unary_out_dtype(op, src, odt):
    same(lambda m: getattr(m, op)(m.tensor([3.5, -2.25]).to(getattr(m, src)), out=m.empty(2, dtype=getattr(m, odt))))


@pytest.mark.parametrize("src, odt", [("float32", "float64"), ("int64", "int8"), ("float32", "float32")])
def test_frac_bitwise_not_out_dtype(src, odt):
    # (an input the kernel takes: the out= dtype check; torch checks it before the kernel's dtype, see the report)
    if src == "float32":
        same(lambda m: m.frac(m.tensor([3.5, -2.25]), out=m.empty(2, dtype=getattr(m, odt))))
    else:
        same(lambda m: m.bitwise_not(m.tensor([3, -2]), out=m.empty(2, dtype=getattr(m, odt))))


@pytest.mark.parametrize("call", [
    lambda m, o: m.clamp(m.tensor([1, 0]), 0, out=o),
    lambda m, o: m.clamp(m.tensor([1, 0]), 0.5, out=o),
    lambda m, o: m.clamp(m.tensor([1, 0]), m.tensor(0), out=o),
    lambda m, o: m.clamp(m.tensor([1, 0]), None, m.tensor(0), out=o),
    lambda m, o: m.clamp(m.tensor([1, 0]), None, 0, out=o),
    lambda m, o: m.clip(m.tensor([1, 0]), 0, out=o),
    lambda m, o: m.clamp_min(m.tensor([1, 0]), 0, out=o),
    lambda m, o: m.clamp_max(m.tensor([1, 0]), 0, out=o),
    lambda m, o: m.clamp_min(m.tensor([1, 0]), m.tensor(0), out=o),
    lambda m, o: m.clamp_max(m.tensor([1, 0]), m.tensor(0), out=o),
])
@pytest.mark.parametrize("odt", ["float32", "int8", "int64"])
def test_clamp_out_dtype(call, odt):
    same(lambda m: call(m, m.empty(2, dtype=getattr(m, odt))))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("odt", ["int32", "float32", "int64"])
@pytest.mark.parametrize("dim", [None, 0])
def test_argmax_out_dtype(op, odt, dim):
    same(lambda m: getattr(m, op)(m.tensor([3, 7]), dim, out=m.empty((), dtype=getattr(m, odt))))


@pytest.mark.parametrize("op", ["any", "all"])
@pytest.mark.parametrize("src", ["int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("odt", ["int64", "float32", "bool", "uint8"])
@pytest.mark.parametrize("dim", [None, 0])
def test_any_all_out_dtype(op, src, odt, dim):
    x = lambda m: m.tensor([1, 0]).to(getattr(m, src))  # noqa: E731
    if dim is None:
        same(lambda m: getattr(m, op)(x(m), out=m.empty((), dtype=getattr(m, odt))))
    else:
        same(lambda m: getattr(m, op)(x(m), dim, out=m.empty((), dtype=getattr(m, odt))))


@pytest.mark.parametrize("odt", ["int8", "float64", "int64"])
@pytest.mark.parametrize("src", ["int64", "float32"])
def test_take_out_dtype(odt, src):
    same(lambda m: m.take(m.tensor([1, 2]).to(getattr(m, src)), m.tensor([0]), out=m.empty(1, dtype=getattr(m, odt))))


@pytest.mark.parametrize("op", ["signbit", "isposinf", "isneginf"])
@pytest.mark.parametrize("odt", ["int32", "float32", "bool"])
def test_bool_predicate_out_dtype(op, odt):
    same(lambda m: getattr(m, op)(m.tensor([2.0, -3.0, float("inf")]), out=m.empty(3, dtype=getattr(m, odt))))


@pytest.mark.parametrize("op", ["relu", "isnan", "isinf", "isfinite", "positive"])
def test_no_out_kwarg(op):
    same(lambda m: getattr(m, op)(m.tensor([2, -3]), out=m.empty(2, dtype=m.int64)))
    same(lambda m: getattr(m, op)(m.tensor([2.0, -3.0])))


@pytest.mark.parametrize("op", ["kthvalue", "mode", "median", "nanmedian"])
@pytest.mark.parametrize("vdt, idt", [("float32", "int64"), ("int64", "int32"), ("int64", "int64"),
                                      ("float32", "int32")])
@pytest.mark.parametrize("src", ["int64", "float32"])
def test_values_indices_out_dtype(op, vdt, idt, src):
    args = (1, 0) if op == "kthvalue" else (0,)
    same(lambda m: tuple(getattr(m, op)(m.tensor([1, 0, 3]).to(getattr(m, src)), *args,
                                        out=(m.empty((), dtype=getattr(m, vdt)), m.empty((), dtype=getattr(m, idt))))))


@pytest.mark.parametrize("op", ["kthvalue", "mode", "median"])
def test_values_indices_out_refused_with_grad(op):
    args = (1, 0) if op == "kthvalue" else (0,)
    same(lambda m: tuple(getattr(m, op)(m.tensor([1.0, 0.0], requires_grad=True), *args,
                                        out=(m.empty(()), m.empty((), dtype=m.int64)))))


@pytest.mark.parametrize("odt", ["int64", "float32"])
def test_median_full_reduction_takes_no_out(odt):
    same(lambda m: m.median(m.tensor([1, 0]), out=m.empty((), dtype=getattr(m, odt))))


@pytest.mark.parametrize("odt", ["int32", "int64"])
def test_matmul_vectors_out_dtype(odt):
    same(lambda m: m.matmul(m.tensor([1, 2]), m.tensor([3, 4]), out=m.empty((), dtype=getattr(m, odt))))
    same(lambda m: m.matmul(m.tensor([[1, 2]]), m.tensor([[3], [4]]), out=m.empty((1, 1), dtype=getattr(m, odt))))


@pytest.mark.parametrize("odt", ["int64", "bool", "float16", "float32"])
def test_logsumexp_out_refusal(odt):
    same(lambda m: m.logsumexp(m.tensor([1.5, -2.5]), 0, out=m.empty((), dtype=getattr(m, odt))))


# ---- in-place: the result type's cast checked before the kernel's dtype -----------------------------------------
@pytest.mark.parametrize("op", ["__ilshift__", "__irshift__", "__iand__", "__ior__", "__ixor__"])
@pytest.mark.parametrize("other", [2.0, "tensor", 2, True])
def test_inplace_bitwise_by_float(op, other):
    def f(m):
        x = m.tensor([7])
        o = m.tensor(2.0) if other == "tensor" else other
        return getattr(x, op)(o)
    same(f)


@pytest.mark.parametrize("op", ["bitwise_and_", "bitwise_left_shift_", "bitwise_or_"])
def test_inplace_bitwise_float_self(op):
    same(lambda m: getattr(m.tensor([7.0]), op)(2))
    same(lambda m: getattr(m.tensor([7]), op)(2.5))
