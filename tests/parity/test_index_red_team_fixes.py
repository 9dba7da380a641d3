"""Parity with torch 2.13 for indexing / scatter findings of a red team: writes at a repeated index give every
written value the gradient at its destination (index_put, setitem, scatter, index_copy: torch's backward, where
JAX's gave it only to the surviving write); scatter_reduce's amax / amin count an excluded ``self`` as a tie;
``x[mask] = one_element_tensor`` converts the value as torch's masked_fill_ does; scatter_reduce takes "max" /
"min"; ``view(dtype)`` of another element size works on views; unique's values carry torch's grad_fn; einsum
of one operand returns views (and a sum); torch's messages and the scatter reduce warning."""
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same


def _grads(*ts):
    return [None if t.grad is None else (str(t.grad.dtype), t.grad.tolist()) for t in ts]


# ---- gradients of writes at repeated indices --------------------------------------------------------------------
def _setitem_list(m):
    x = m.arange(1., 4.).requires_grad_()
    v = m.tensor(5., requires_grad=True)
    y = x.clone()
    y[[2, 2]] = v
    (y * m.tensor([1., 2., 3.])).sum().backward()
    return y, _grads(x, v)


def _scatter_src(m):
    s = m.ones(3, requires_grad=True)
    y = m.zeros(3).scatter(0, m.tensor([1, 1, 1]), s)
    y.mul(m.tensor([1., 2., 3.])).sum().backward()
    return y, _grads(s)


def _scatter_dim1(m):
    x = m.zeros(2, 3, requires_grad=True)
    s = m.arange(4.).view(2, 2).requires_grad_()
    y = x.scatter(1, m.tensor([[0, 0], [2, 2]]), s)
    (y * m.arange(1., 7.).view(2, 3)).sum().backward()
    return y, _grads(x, s)


def _scatter_in_place(m):
    x = m.zeros(3, requires_grad=True)
    s = m.ones(3, requires_grad=True)
    y = x * 1
    y.scatter_(0, m.tensor([0, 0, 0]), s)
    (y * m.tensor([1., 2., 3.])).sum().backward()
    return y, _grads(x, s)


def _scatter_value(m):
    x = m.zeros(3, requires_grad=True)
    y = x.scatter(0, m.tensor([1, 1]), 5.)
    (y * m.tensor([1., 2., 3.])).sum().backward()
    return y, _grads(x)


def _index_put(m):
    x = m.zeros(4, requires_grad=True)
    v = m.tensor([1., 2., 3., 4.], requires_grad=True)
    y = m.index_put(x, (m.tensor([0, 1, 1, 3]),), v)
    (y * m.tensor([1., 3., 5., 1.])).sum().backward()
    return y, _grads(x, v)


def _index_put_broadcast(m):
    x = m.zeros(5, requires_grad=True)
    v = m.tensor(1., requires_grad=True)
    y = x.index_put((m.tensor([[0, 1], [1, 2]]),), v)
    (y * m.arange(2., 7.)).sum().backward()
    return y, _grads(x, v)


def _index_put_rows(m):
    x = m.zeros(3, 4, requires_grad=True)
    v = m.tensor([1., 2., 3., 4.], requires_grad=True)
    y = x.index_put((m.tensor([[0, 1], [1, 2]]),), v)
    (y * m.arange(12.).view(3, 4)).sum().backward()
    return y, _grads(x, v)


def _index_put_in_place_add(m):
    x = m.arange(4.).requires_grad_()
    v = m.tensor([10., 20., 30.], requires_grad=True)
    y = x * 1
    y[[0, 0, 1]] += v
    (y * m.arange(1., 5.)).sum().backward()
    return y, _grads(x, v)


def _index_copy(dim):
    def f(m):
        shape = (3, 2) if dim == 0 else (2, 3)
        x = m.zeros(*shape, requires_grad=True)
        s = m.ones(2, 2, requires_grad=True)
        y = x.index_copy(dim, m.tensor([2 - dim, 2 - dim]), s)  # (a repeated index)
        (y * m.arange(6.).view(*shape)).sum().backward()
        return y, _grads(x, s)
    f.__name__ = f"_index_copy_dim{dim}"
    return f


def _double_backward(m):
    v = m.tensor([1., 2.], requires_grad=True)
    y = m.zeros(3).index_put((m.tensor([1, 1]),), v * v)
    (g,) = m.autograd.grad((y * m.tensor([1., 2., 3.])).sum(), v, create_graph=True)
    g.sum().backward()
    return g, _grads(v)


@pytest.mark.parametrize("case", [_setitem_list, _scatter_src, _scatter_dim1, _scatter_in_place, _scatter_value,
                                  _index_put, _index_put_broadcast, _index_put_rows, _index_put_in_place_add,
                                  _index_copy(0), _index_copy(1), _double_backward])
def test_repeated_index_writes_give_every_value_its_gradient(case):
    same(case)


def test_repeated_index_write_under_jacrev_and_vmap():
    def run(m):
        def f(v):
            return m.zeros(3).index_put((m.tensor([1, 1]),), v)
        jac = m.func.jacrev(f)(m.tensor([1., 2.]))
        per = m.func.vmap(m.func.grad(lambda v: (f(v) * m.tensor([1., 2., 3.])).sum()))(m.ones(4, 2))
        return jac, per
    same(run)


# ---- scatter_reduce amax / amin: an excluded self still counts as a tie ------------------------------------------
@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("src,base", [([1., 2., 3., 4., 5.], [1., 2., 3.]), ([1., 3., 3., 0., 2.], [3., 0., 2.]),
                                      ([5., 4., 4., 2., 2.], [4., 2., 9.])])
def test_scatter_reduce_extremes_split_the_gradient_as_torch(reduce, include_self, src, base):
    def run(m):
        s = m.tensor(src, requires_grad=True)
        b = m.tensor(base, requires_grad=True)
        y = b.scatter_reduce(0, m.tensor([0, 0, 1, 2, 2]), s, reduce, include_self=include_self)
        (y * m.tensor([1., 2., 3.])).sum().backward()
        return y, _grads(s, b)
    same(run)


def test_scatter_reduce_extremes_along_dim_1():
    def run(m):
        s = m.tensor([[1., 3.], [3., 0.]], requires_grad=True)
        b = m.tensor([[3., 0., 5.], [1., 1., 1.]], requires_grad=True)
        y = b.scatter_reduce(1, m.tensor([[0, 0], [1, 1]]), s, "amin", include_self=False)
        (y * m.arange(6.).view(2, 3)).sum().backward()
        return y, _grads(s, b)
    same(run)


# ---- scatter_reduce's "max" / "min": amax / amin whose backward raises --------------------------------------------
@pytest.mark.parametrize("reduce", ["max", "min", "multiply"])
@pytest.mark.parametrize("dt", ["float32", "int64"])
def test_scatter_reduce_max_min_aliases(reduce, dt):
    def run(m):
        src = m.tensor([-1., 2., 3.]).to(getattr(m, dt))
        return m.ones(3, dtype=getattr(m, dt)).scatter_reduce(0, m.tensor([0, 0, 1]), src, reduce,
                                                               include_self=dt == "int64")
    same(run)


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_reduce_max_min_backward_raises(reduce):
    def run(m):
        s = m.tensor([-1., 2., 3.], requires_grad=True)
        r = m.ones(3).scatter_reduce(0, m.tensor([0, 0, 1]), s, reduce)
        r.sum().backward()
    same(lambda m: type(m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1, requires_grad=True),
                                                   reduce).grad_fn).__name__)
    same(run)


# ---- x[mask] = one-element tensor: torch's masked_fill_ --------------------------------------------------------
def _put(make, index, value, accumulate=None, method=False):
    def run(m):
        x = make(m)
        idx = index(m)
        v = value(m)
        if accumulate is not None:
            return x.index_put_(idx, v, accumulate=accumulate)
        if method:
            return m.index_put(x, idx, v)
        x[idx] = v
        return x
    return run


_Z = lambda m: m.zeros(2, 3)  # noqa: E731
_ZL = lambda m: m.zeros(2, 3, dtype=m.long)  # noqa: E731
_ROWS = lambda m: m.tensor([True, False])  # noqa: E731
MASK_CASES = {
    "same_shape_mask": _put(_Z, lambda m: m.zeros(2, 3) == 0, lambda m: m.tensor(1)),
    "float_into_long": _put(_ZL, lambda m: m.zeros(2, 3) == 0, lambda m: m.tensor(1.7)),
    "mask_on_dim_1": _put(_Z, lambda m: (slice(None), m.tensor([True, False, True])), lambda m: m.tensor(7)),
    "index_put_function": _put(_Z, lambda m: (_ROWS(m),), lambda m: m.tensor(1), method=True),
    "nan_into_long": _put(_ZL, lambda m: m.zeros(2, 3) == 0, lambda m: m.tensor(float("nan"))),
    "int8_overflow": _put(lambda m: m.zeros(2, 3, dtype=m.int8), lambda m: (_ROWS(m),), lambda m: m.tensor(300),
                          accumulate=False),
    "complex_into_float": _put(_Z, lambda m: (_ROWS(m),), lambda m: m.tensor(1 + 2j), accumulate=False),
    "real_complex_into_float": _put(_Z, lambda m: (_ROWS(m),), lambda m: m.tensor(1 + 0j), accumulate=False),
    "float_into_complex": _put(lambda m: m.zeros(2, 3, dtype=m.cfloat), lambda m: (_ROWS(m),), lambda m: m.tensor(2.),
                               accumulate=False),
    "bool_into_float": _put(_Z, lambda m: (_ROWS(m),), lambda m: m.tensor(True), accumulate=False),
    "half_overflow": _put(lambda m: m.zeros(2, 3, dtype=m.half), lambda m: (_ROWS(m),), lambda m: m.tensor(1e6),
                          accumulate=False),
    "negative_into_uint8": _put(lambda m: m.zeros(2, 3, dtype=m.uint8), lambda m: (_ROWS(m),), lambda m: m.tensor(-1),
                                accumulate=False),
    "inf_into_int32": _put(lambda m: m.zeros(2, 3, dtype=m.int32), lambda m: (_ROWS(m),),
                           lambda m: m.tensor(float("inf")), accumulate=False),
    "zero_dim_mask_true": _put(_Z, lambda m: (m.tensor(True),), lambda m: m.tensor(2.), accumulate=False),
    "zero_dim_mask_false": _put(_Z, lambda m: (m.tensor(False),), lambda m: m.tensor(2.), accumulate=False),
    "nested_one_element": _put(_Z, lambda m: (_ROWS(m),), lambda m: m.tensor([[[2.]]], dtype=m.float64),
                               accumulate=False),
    "setitem_nested_one_element": _put(_Z, lambda m: _ROWS(m), lambda m: m.tensor([[[2.]]], dtype=m.float64)),
    "uint8_mask_number": _put(lambda m: m.zeros(3), lambda m: m.tensor([1, 0, 1], dtype=m.uint8), lambda m: 1.),
    "uint8_mask_tensor": _put(lambda m: m.zeros(3), lambda m: (m.tensor([1, 0, 1], dtype=m.uint8),),
                              lambda m: m.tensor([2.]), accumulate=False),
    # not masked_fill_: accumulate, an integer index, two index tensors, several values
    "accumulate_refuses": _put(_Z, lambda m: (_ROWS(m),), lambda m: m.tensor(1), accumulate=True),
    "int_index_refuses": _put(_Z, lambda m: (m.tensor([0]),), lambda m: m.tensor(1), accumulate=False),
    "mask_and_int_refuse": _put(_Z, lambda m: (_ROWS(m), m.tensor([0])), lambda m: m.tensor(1), accumulate=False),
    "two_masks_refuse": _put(_Z, lambda m: (_ROWS(m), m.tensor([True, False, True])), lambda m: m.tensor(1),
                             accumulate=False),
    "two_values_refuse": _put(_Z, lambda m: m.zeros(2, 3) == 0, lambda m: m.ones(6, dtype=m.float64)),
}


@pytest.mark.parametrize("name", sorted(MASK_CASES))
def test_one_element_value_through_a_mask_is_masked_fill(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the uint8 index's deprecation, where it is reached)
        same(MASK_CASES[name])


def test_masked_fill_route_keeps_index_puts_gradient():
    def run(m):
        x = m.zeros(2, 3, requires_grad=True)
        v = m.tensor(2., dtype=m.float64, requires_grad=True)
        y = x * 1
        y[m.tensor([True, False])] = v
        y.sum().backward()
        return y, _grads(x, v)
    same(run)


# ---- view(dtype) of a view ----------------------------------------------------------------------------------------
VIEWS = {
    "narrowed_cols": lambda m: m.arange(6).reshape(2, 3)[:, :2].view(m.int32),
    "offset_rows": lambda m: m.arange(6).reshape(2, 3)[1:].view(m.int32),
    "to_int16": lambda m: m.arange(6).reshape(2, 3)[:, 1:].view(m.int16),
    "transposed": lambda m: m.arange(6).reshape(2, 3).t().view(m.int32),
    "stepped": lambda m: m.arange(6).reshape(2, 3)[:, ::2].view(m.int32),
    "odd_offset": lambda m: m.arange(12, dtype=m.int32).reshape(3, 4)[:, 1:3].view(m.int64),
    "even_offset": lambda m: m.arange(12, dtype=m.int32).reshape(3, 4)[:, 2:].view(m.int64),
    "odd_size": lambda m: m.arange(12, dtype=m.int32).reshape(3, 4)[:, :3].view(m.int64),
    "odd_stride": lambda m: m.arange(12, dtype=m.int32).reshape(3, 4).t()[1:].t()[:, :2].view(m.int64),
    "strided_rows": lambda m: m.arange(12, dtype=m.int32).view(6, 2)[::3].view(m.int64),
    "to_double": lambda m: m.arange(12, dtype=m.int32).reshape(3, 4)[1].view(m.float64),
    "two_size_changes": lambda m: m.arange(12, dtype=m.int32).reshape(3, 4)[:, :2].view(m.int64).view(m.int16),
    "zero_dim": lambda m: m.arange(6).reshape(2, 3)[0, 1].view(m.int32),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_dtype_of_a_view(name):
    same(VIEWS[name])


def test_view_dtype_of_a_view_reads_its_base():
    def run(m):
        b = m.arange(6).reshape(2, 3)
        v = b[:, :2].view(m.int32)
        b[0, 0] = 2 ** 33
        return v
    same(run)


# ---- unique's grad_fn --------------------------------------------------------------------------------------------
UNIQUES = {
    "unique": lambda m, x, v: m.unique(v),
    "unique_all": lambda m, x, v: m.unique(v, return_inverse=True, return_counts=True),
    "unsorted": lambda m, x, v: m.unique(v, sorted=False),
    "dim": lambda m, x, v: m.unique(x, dim=0),
    "dim_all": lambda m, x, v: m.unique(x, dim=0, return_inverse=True, return_counts=True),
    "consecutive": lambda m, x, v: m.unique_consecutive(v),
    "consecutive_dim": lambda m, x, v: m.unique_consecutive(x, dim=0, return_counts=True),
    "method": lambda m, x, v: v.unique(),
    "method_consecutive": lambda m, x, v: v.unique_consecutive(),
}


@pytest.mark.parametrize("name", sorted(UNIQUES))
def test_unique_of_a_tensor_requiring_grad(name):
    def inputs(m):
        return (m.tensor([[1., 2.], [1., 2.], [0., 1.]], requires_grad=True),
                m.tensor([3., 1., 3., 2.], requires_grad=True))

    same(lambda m: UNIQUES[name](m, *inputs(m)))

    def backward(m):
        r = UNIQUES[name](m, *inputs(m))
        (r[0] if isinstance(r, tuple) else r).sum().backward()
    same(backward)


def test_unique_without_grad():
    same(lambda m: m.unique(m.tensor([1, 2, 1])))
    with torch.no_grad(), ft.no_grad():
        same(lambda m: m.unique(m.tensor([3., 1.], requires_grad=True)))


# ---- einsum of one operand: views, then a sum -----------------------------------------------------------------------
EINSUMS = [("ij->ji", (3, 3)), ("ij->ij", (3, 3)), ("ij", (3, 3)), ("ji", (3, 3)), ("ii->i", (3, 3)), ("ii", (3, 3)),
           ("ijk->kji", (2, 3, 4)), ("ijk->kij", (2, 3, 4)), ("...ij->...ji", (2, 3, 4)), ("i...->...i", (2, 3, 4)),
           ("ij->i", (2, 3)), ("ij->", (2, 3)), ("iij->ij", (2, 2, 3)), ("iij->j", (2, 2, 3)), ("i...i", (2, 3, 2)),
           ("ijk->ik", (2, 3, 4)), ("...", (2, 3)), ("i->", (0,))]


@pytest.mark.parametrize("eq,shape", EINSUMS)
def test_einsum_of_one_operand(eq, shape):
    def run(m):
        x = m.arange(float(np.prod(shape))).view(*shape).requires_grad_()
        y = m.einsum(eq, x)
        (y * m.arange(float(y.numel())).view(y.shape)).sum().backward()
        return y, _grads(x)
    same(run)


@pytest.mark.parametrize("dt", ["bool", "int32", "float16", "float8_e4m3fn"])
@pytest.mark.parametrize("eq", ["ij->ji", "ij->i"])
def test_einsum_of_one_operand_dtypes(dt, eq):
    same(lambda m: m.einsum(eq, m.ones(2, 3, dtype=getattr(m, dt))).to(m.float32))


def test_einsum_view_writes_reach_the_input():
    def run(m):
        x = m.zeros(3, 3)
        m.einsum("ii->i", x).add_(1)
        y = m.arange(6.).view(2, 3)
        m.einsum("ij->ji", y)[0, 1] = 9
        return x, y
    same(run)


# ---- messages -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eq,shapes", [
    ("ii->i", [(2, 3)]), ("ij,jj->i", [(2, 3), (3, 4)]), ("iji->j", [(2, 3, 3)]), ("i,i", [(2,), (3,)]),
    ("...i,...i->...", [(2, 3), (4, 3)]), ("...i,...i->...", [(2, 1, 3), (4, 3)]), ("i...i", [(2, 3, 4, 3)]),
    ("...ii,...i", [(2, 3, 3), (4, 3)]), ("bij,bjk->bik", [(2, 3, 4), (3, 4, 5)]), ("iij,ji", [(2, 2, 3), (3, 2)])])
def test_einsum_size_messages(eq, shapes):
    same(lambda m: m.einsum(eq, *[m.ones(*s) for s in shapes]))


@pytest.mark.parametrize("index", ["[[0]]", "[torch.tensor([0, 1])]", "[:, [0]]", "[[0], [0]]", "[[]]",
                                   "[torch.zeros(0, dtype=torch.bool)]"])
def test_index_into_a_zero_size_dim(index):
    def run(m):
        x = m.zeros(0, 3) if not index.startswith("[:") and index != "[[0], [0]]" else m.zeros(2, 0)
        return eval("x" + index, {"x": x, "torch": m})
    same(run)


def test_index_put_into_a_zero_size_dim():
    same(lambda m: m.zeros(0, 3).index_put_((m.tensor([0]),), m.tensor(1.)))


@pytest.mark.parametrize("dt", ["int64", "int32", "uint8", "float32", "bool"])
@pytest.mark.parametrize("value", ["2 ** 63", "-2 ** 63 - 1", "2 ** 100", "np.float64(2.)", "np.int64(3)",
                                   "np.int32(-3)", "np.True_", "np.float16(1.)", "np.float32(2.)", "np.array([1.])",
                                   "[1.]", "np.uint64(2 ** 64 - 1)", "np.complex128(1 + 0j)", "np.complex64(1)",
                                   "Fraction(1, 2)", "Decimal(1)"])
def test_setitem_value_types_and_overflow(dt, value):
    def run(m):
        x = m.zeros(3, dtype=getattr(m, dt))
        x[0] = eval(value, {"np": np, "Fraction": Fraction, "Decimal": Decimal})
        return x
    same(run)


def test_scatter_reduce_argument_warns_as_torch():
    def run(m, src, reduce):
        m.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                m.ones(3).scatter_(0, m.tensor([0, 0]), src(m), reduce=reduce)
        finally:
            m.set_warn_always(False)
        return [(x.category.__name__, str(x.message)) for x in w]
    for src, reduce in ((lambda m: m.tensor([2., 3.]), "multiply"), (lambda m: m.tensor([2., 3.]), "add"),
                        (lambda m: 2., "add")):
        assert run(ft, src, reduce) == run(torch, src, reduce)
    assert run(ft, lambda m: m.tensor([2., 3.]), "add")  # (the first case warned)


# ---- put and index_reduce share those gradients ------------------------------------------------------------------
def _index_reduce(red, inc):
    def f(m):
        x = m.tensor([1., 2., 3., 2.], requires_grad=True)
        s = m.tensor([2., 1., 3., 5., 2.], requires_grad=True)
        r = x.index_reduce(0, m.tensor([1, 0, 2, 3, 1]), s, red, include_self=inc)
        (r * m.tensor([1., 2., 3., 4.])).sum().backward()
        return r, _grads(x, s)
    return f


@pytest.mark.parametrize("red", ["amax", "amin", "prod", "mean"])
@pytest.mark.parametrize("inc", [True, False])
def test_index_reduce_gradients_with_ties_and_excluded_self(red, inc):
    same(_index_reduce(red, inc))


def test_index_reduce_integer_amax_excluding_self():
    same(lambda m: m.tensor([[1, 5], [3, 2]]).index_reduce(0, m.tensor([1, 1]), m.tensor([[4, 1], [9, 9]]), "amax",
                                                           include_self=False))


def test_put_repeated_index_gradient():
    def f(m):
        x = m.tensor([1., 2., 3.], requires_grad=True)
        s = m.tensor([5., 6., 7.], requires_grad=True)
        r = x.put(m.tensor([1, 1, 0]), s)
        (r * m.tensor([1., 2., 3.])).sum().backward()
        return r, _grads(x, s)
    same(f)
