"""Parity of ``torch._foreach_*`` (PyTorch 2.13) with functorch_lite's, generated from the plain ops.

Every name torch has exists; each overload (Number, scalar list, 0-d Tensor, tensor list, ``alpha=``, packed
Tensor scalars) gives torch's values and dtypes, element by element (mixed-dtype lists promote per element);
in-place forms return their ``self`` list itself and write each tensor; out-of-place forms return a tuple and are
differentiable; torch's errors for empty lists, mismatched lengths, a non-0-d Tensor scalar, argument-parser
TypeErrors, an in-place cast and an in-place write into a leaf that requires grad (refused before any element is
written). A compiled EMA step (``_foreach_lerp_`` / ``_foreach_mul_`` + ``_foreach_add_``) equals eager and torch.
"""
import math

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import run

LIBS = (torch, ft)
RNG = np.random.default_rng(5)
A = [RNG.uniform(0.2, 0.9, (3,)).astype(np.float32), RNG.uniform(0.2, 0.9, (2, 2)).astype(np.float32)]
B = [RNG.uniform(1.1, 2.0, (3,)).astype(np.float32), RNG.uniform(1.1, 2.0, (2, 2)).astype(np.float32)]
C = [RNG.uniform(0.5, 1.5, (3,)).astype(np.float32), RNG.uniform(0.5, 1.5, (2, 2)).astype(np.float32)]

UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 neg "
         "reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()


def _ts(L, arrs, dtype=None, signs=False):
    out = [L.tensor(a * (np.where(np.arange(a.size).reshape(a.shape) % 2, -1, 1) if signs else 1)) for a in arrs]
    return out if dtype is None else [t.to(getattr(L, dtype)) for t in out]


def _cmp(t_r, f_r, rtol=1e-6, atol=1e-7):
    if isinstance(t_r, (list, tuple)):
        assert type(f_r) is type(t_r) and len(f_r) == len(t_r), (type(t_r), type(f_r))
        for a, b in zip(t_r, f_r):
            _cmp(a, b, rtol, atol)
        return
    if not isinstance(t_r, torch.Tensor):
        assert f_r == t_r
        return
    assert isinstance(f_r, ft.Tensor)
    assert str(f_r.dtype) == str(t_r.dtype) and tuple(f_r.shape) == tuple(t_r.shape)
    assert f_r.requires_grad == t_r.requires_grad
    np.testing.assert_allclose(f_r.detach().double().numpy(), t_r.detach().double().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


def _both(fn, **tol):
    """``fn(L)`` in both libraries: the same results, or the same error (type and message)."""
    (t_r, t_e), (f_r, f_e) = run(fn, torch), run(fn, ft)
    if t_e is not None:
        assert f_e is not None, f"torch raised {t_e!r}; functorch_lite returned {f_r}"
        assert type(f_e) is type(t_e) and str(f_e).splitlines()[0] == str(t_e).splitlines()[0], (t_e, f_e)
        return None
    assert f_e is None, f"functorch_lite raised {f_e!r}"
    _cmp(t_r, f_r, **tol)
    return t_r, f_r


def test_every_foreach_name_exists():
    names = {n for n in dir(torch) if n.startswith("_foreach_")}
    assert names <= set(dir(ft)), sorted(names - set(dir(ft)))


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    def out(L):
        return getattr(L, f"_foreach_{name}")(_ts(L, A) + [_ts(L, B, "float64")[0]])

    def inp(L):
        xs = _ts(L, A) + [_ts(L, B, "float64")[0]]
        r = getattr(L, f"_foreach_{name}_")(xs)
        assert r is xs
        return xs
    _both(out, rtol=2e-6)
    _both(inp, rtol=2e-6)


# (other argument, keyword arguments) for the binary ops' overloads
def _binary_args(L, kind, shift=False):
    if kind == "scalar":
        return (0.75,), {}
    if kind == "int":
        return (2,), {}
    if kind == "scalars":
        return ([0.5, 3],), {}
    if kind == "tensor0d":
        return (L.tensor(1.25, dtype=L.float64),), {}
    if kind == "list":
        return (_ts(L, B if shift else C),), {}
    if kind == "list_alpha":
        return (_ts(L, C),), {"alpha": -0.5}
    return (L.tensor(1.5),), {"alpha": 2}  # tensor0d_alpha


_BINARY = [("add", k) for k in ("scalar", "int", "scalars", "tensor0d", "list", "list_alpha", "tensor0d_alpha")] + \
    [("sub", k) for k in ("scalar", "scalars", "list", "list_alpha", "tensor0d")] + \
    [(op, k) for op in ("mul", "div") for k in ("scalar", "int", "scalars", "tensor0d", "list")] + \
    [(op, k) for op in ("clamp_min", "clamp_max", "maximum", "minimum", "pow") for k in ("scalar", "scalars", "list")]


@pytest.mark.parametrize("op,kind", _BINARY)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_binary(op, kind, dtype):
    arrs = [np.round(a * 10) for a in A] if dtype == "int64" else A

    def out(L):
        args, kw = _binary_args(L, kind)
        return getattr(L, f"_foreach_{op}")(_ts(L, arrs, dtype), *args, **kw)

    def inp(L):
        xs = _ts(L, arrs, dtype)
        args, kw = _binary_args(L, kind)
        r = getattr(L, f"_foreach_{op}_")(xs, *args, **kw)
        assert r is xs
        return xs
    _both(out)
    _both(inp)  # (int64 with a float other: torch's "result type Float can't be cast" error)


def test_pow_scalar_base_and_mixed_dtypes():
    _both(lambda L: L._foreach_pow(2.0, _ts(L, A)))
    _both(lambda L: L._foreach_pow(3, [L.tensor([1, 2]), L.tensor([0.5])]))
    # each element promotes as the plain op does
    _both(lambda L: L._foreach_mul([L.tensor([1, 2]), L.tensor([1, 2])], [1, 2.5]))
    _both(lambda L: L._foreach_mul([L.tensor([1, 2]), L.tensor([1.0, 2.0], dtype=L.float16)],
                                   [L.tensor([1.5, 2.0]), L.tensor([2, 3])]))
    _both(lambda L: L._foreach_add([L.tensor([1.0], dtype=L.float16)], L.tensor(2.5, dtype=L.float64)))
    _both(lambda L: L._foreach_maximum([L.tensor([True, False])], 0))
    _both(lambda L: L._foreach_maximum([L.tensor([1.0, math.nan])], [L.tensor([math.nan, 0.0])]))
    _both(lambda L: L._foreach_add([L.tensor([1.0])], [L.zeros(3)]))  # (broadcasts out of place)


@pytest.mark.parametrize("weight", ["scalar", "scalars", "list"])
def test_lerp(weight):
    def w(L):
        return {"scalar": 0.1, "scalars": [0.25, 0.75], "list": _ts(L, C)}[weight]

    _both(lambda L: L._foreach_lerp(_ts(L, A), _ts(L, B), w(L)))

    def inp(L):
        xs = _ts(L, A)
        assert L._foreach_lerp_(xs, _ts(L, B), w(L)) is xs
        return xs
    _both(inp)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", ["default", "number", "scalars", "packed"])
def test_addcmul_addcdiv(op, value):
    def args(L):
        return {"default": (), "number": (-0.5,), "scalars": ([2.0, -1.0],), "packed": (L.tensor([0.5, 3.0]),)}[value]

    _both(lambda L: getattr(L, f"_foreach_{op}")(_ts(L, A), _ts(L, B), _ts(L, C), *args(L)))

    def inp(L):
        xs = _ts(L, A)
        assert getattr(L, f"_foreach_{op}_")(xs, _ts(L, B), _ts(L, C), *args(L)) is xs
        return xs
    _both(inp)
    _both(lambda L: getattr(L, f"_foreach_{op}")(_ts(L, A), tensor1=_ts(L, B), tensor2=_ts(L, C), value=2))


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, 0, math.inf, -math.inf, -1])
def test_norm_and_powsum(ord):
    _both(lambda L: L._foreach_norm(_ts(L, A, signs=True), ord), rtol=1e-6)
    _both(lambda L: L._foreach_norm(_ts(L, A, signs=True), ord=ord, dtype=L.float64), rtol=1e-6)
    if ord >= 0:
        _both(lambda L: L._foreach_powsum(_ts(L, A, signs=True), ord), rtol=1e-6)
        _both(lambda L: L._foreach_powsum(_ts(L, A, signs=True), ord, dtype=L.float64), rtol=1e-6)


def test_norm_dtypes_and_errors():
    _both(lambda L: L._foreach_norm(_ts(L, A)))
    _both(lambda L: L._foreach_norm(_ts(L, A, "bfloat16"), dtype=L.float32), rtol=1e-6)
    _both(lambda L: L._foreach_norm(_ts(L, A, "float16")), rtol=1e-3)
    _both(lambda L: L._foreach_powsum(_ts(L, B, "bfloat16"), 2), rtol=1e-2)
    _both(lambda L: L._foreach_norm([L.tensor([1, 2])]))
    _both(lambda L: L._foreach_norm(_ts(L, A), dtype=L.int64))
    _both(lambda L: L._foreach_norm(_ts(L, A, "float64"), dtype=L.float32))
    _both(lambda L: L._foreach_norm(_ts(L, A), "fro"))
    _both(lambda L: L._foreach_powsum([L.tensor([1, 2])]))
    _both(lambda L: L._foreach_norm([L.tensor([])]))


def test_max_mm_clone_copy_zero():
    _both(lambda L: L._foreach_max(_ts(L, A, signs=True) + [L.tensor([1, 5])]))
    _both(lambda L: L._foreach_max([L.tensor([])]))
    _both(lambda L: L._foreach_mm([L.tensor(A[1]), L.tensor(B[1])], [L.tensor(C[1]), L.tensor(A[1])]))
    _both(lambda L: L._foreach_mm(_ts(L, A), _ts(L, A)))

    def clone(L):
        xs = _ts(L, A)
        r = L._foreach_clone(xs)
        assert all(a is not b for a, b in zip(r, xs))
        return r
    _both(clone)
    _both(lambda L: L._foreach_clone(_ts(L, A), memory_format=L.channels_last))

    def copy(L):
        xs = _ts(L, A)
        assert L._foreach_copy_(xs, [L.tensor([1, 2, 3]), L.tensor(7.0, dtype=L.float64).expand(2, 2)]) is xs
        return xs
    _both(copy)
    _both(lambda L: L._foreach_copy_(_ts(L, A), _ts(L, B)[::-1]))

    def zero(L):
        xs = tuple(_ts(L, A))
        assert L._foreach_zero_(xs) is xs
        return xs
    _both(zero)


@pytest.mark.parametrize("case", [
    lambda L: L._foreach_add(_ts(L, A), _ts(L, B)[:1]),
    lambda L: L._foreach_add_(_ts(L, A), _ts(L, B)[:1], alpha=2),
    lambda L: L._foreach_add([], []),
    lambda L: L._foreach_mul_([], 2.0),
    lambda L: L._foreach_neg([]),
    lambda L: L._foreach_zero_(()),
    lambda L: L._foreach_norm([]),
    lambda L: L._foreach_add(_ts(L, A), [1.0]),
    lambda L: L._foreach_lerp(_ts(L, A), _ts(L, B), [0.5]),
    lambda L: L._foreach_lerp(_ts(L, A), _ts(L, B)[:1], 0.5),
    lambda L: L._foreach_addcmul(_ts(L, A), _ts(L, B), _ts(L, C)[:1]),
    lambda L: L._foreach_addcdiv(_ts(L, A), _ts(L, B), _ts(L, C), [1.0]),
    lambda L: L._foreach_addcdiv(_ts(L, A), _ts(L, B), _ts(L, C), L.tensor([1.0])),
    lambda L: L._foreach_addcdiv(_ts(L, A), _ts(L, B), _ts(L, C), L.tensor(1.0)),
    lambda L: L._foreach_mul(_ts(L, A), L.ones(3)),
    lambda L: L._foreach_add_(_ts(L, A), L.ones(1, 1)),
    lambda L: L._foreach_copy_(_ts(L, A), _ts(L, A)[:1]),
    lambda L: L._foreach_pow(_ts(L, A), _ts(L, A) * 2),
    lambda L: L._foreach_add(_ts(L, A)),
    lambda L: L._foreach_add(_ts(L, A), "x"),
    lambda L: L._foreach_add(_ts(L, A)[0], 1),
    lambda L: L._foreach_add(_ts(L, A), _ts(L, B), 1),
    lambda L: L._foreach_sub(_ts(L, A), L.tensor(1.0), alpha=2),
    lambda L: L._foreach_neg(_ts(L, A), 1),
    lambda L: L._foreach_neg(_ts(L, A)[0]),
    lambda L: L._foreach_neg(None),
    lambda L: L._foreach_neg([1, 2]),
    lambda L: L._foreach_mul(_ts(L, A), [L.ones(3), 3]),
    lambda L: L._foreach_norm(_ts(L, A), None),
    lambda L: L._foreach_norm(_ts(L, A), 2, L.float64, 1),
    lambda L: L._foreach_add(_ts(L, A), [L.ones(3), L.ones(3)]),
    lambda L: L._foreach_add_([L.ones(1)], [L.zeros(3)]),
    lambda L: L._foreach_add_([L.ones(2, dtype=L.int64)], 1.5),
    lambda L: L._foreach_sqrt_([L.ones(2, dtype=L.int64)]),
    lambda L: L._foreach_neg([L.ones(2, dtype=L.bool)]),
    lambda L: L._foreach_sub([L.ones(2, dtype=L.bool)], True),
    lambda L: L._foreach_sign([L.ones(2, dtype=L.complex64)]),
    lambda L: L._foreach_lerp([L.ones(2, dtype=L.float64)], [L.ones(2)], 0.5),
    lambda L: L._foreach_mm(_ts(L, A)),
    lambda L: L._foreach_mm(),
    lambda L: L._foreach_neg(),
    lambda L: L._foreach_copy_(_ts(L, A)),
    lambda L: L._foreach_neg(_ts(L, A), foo=1),
    lambda L: L._foreach_norm(_ts(L, A), 2, ord=3),
    lambda L: L._foreach_lerp(_ts(L, A), _ts(L, A)),
    lambda L: L._foreach_copy_(_ts(L, A), _ts(L, A), 1),
    lambda L: L._foreach_clone(_ts(L, A), memory_format=1),
    lambda L: L._foreach_norm(_ts(L, A), dtype=1),
    lambda L: L._foreach_mm(_ts(L, A), _ts(L, A)[0]),
    lambda L: L._foreach_add(_ts(L, A), _ts(L, A), 2, 3),
    lambda L: L._foreach_add(_ts(L, A), []),
    lambda L: L._foreach_lerp(_ts(L, A), _ts(L, B), []),
    lambda L: L._foreach_clamp_min([L.ones(2, dtype=L.complex64)], 1.0),
    lambda L: L._foreach_maximum(_ts(L, A), 1j),
    lambda L: L._foreach_clamp_max_([L.ones(2, dtype=L.int32)], [1.5]),
    lambda L: L._foreach_maximum_([L.ones(2, dtype=L.int64)], L.tensor(0.5)),
    lambda L: L._foreach_minimum_([L.ones(2, dtype=L.int64)], [L.ones(2)]),
    lambda L: L._foreach_clamp_min([L.ones(2)], [L.ones(2, dtype=L.complex64)]),
    lambda L: L._foreach_minimum_([L.ones(2)], [L.ones(2, dtype=L.complex64)]),
    lambda L: L._foreach_minimum([L.ones(2, dtype=L.complex64)], [L.ones(2)]),
], ids=lambda f: None)
def test_errors(case):
    (t_r, t_e), (f_r, f_e) = run(case, torch), run(case, ft)
    assert t_e is not None, t_r
    assert f_e is not None, f"torch raised {t_e!r}; functorch_lite returned {f_r}"
    assert type(f_e) is type(t_e) and str(f_e).splitlines()[0] == str(t_e).splitlines()[0], (t_e, f_e)


def test_combination_error_lists_the_overloads():
    _, t_e = run(lambda L: L._foreach_add(_ts(L, A), "x"), torch)
    _, f_e = run(lambda L: L._foreach_add(_ts(L, A), "x"), ft)
    t_lines = [ln for ln in str(t_e).splitlines() if ln.startswith(" * ")]
    f_lines = [ln for ln in str(f_e).splitlines() if ln.startswith(" * ")]
    assert f_lines == t_lines and len(t_lines) == 4


def test_inplace_leaf_refused_before_any_write():
    for L in LIBS:
        plain = L.ones(2)
        leaf = L.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            L._foreach_mul_([plain, leaf], 2.0)
        assert plain.tolist() == [1.0, 1.0]
        for f in (lambda: L._foreach_zero_([leaf]), lambda: L._foreach_copy_([leaf], [L.zeros(2)]),
                  lambda: L._foreach_lerp_([leaf], [L.zeros(2)], 0.5)):
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
                f()
        with L.no_grad():  # (an optimizer's / EMA's update of parameters)
            L._foreach_mul_([leaf], 3.0)
        assert leaf.tolist() == [3.0, 3.0] and leaf.grad_fn is None


@pytest.mark.parametrize("name,args", [
    ("mul", lambda L, x: ([x[0], x[1]], [2.0, -3.0])),
    ("mul", lambda L, x: ([x[0]], x[2])),  # 0-d Tensor other: differentiable in it too (torch: one element only)
    ("add", lambda L, x: ([x[0], x[1]], [x[1], x[0]], )),
    ("sub", lambda L, x: ([x[0], x[1]], [x[1], x[0]])),
    ("div", lambda L, x: ([x[0], x[1]], [x[1], x[0]])),
    ("exp", lambda L, x: ([x[0], x[1]],)),
    ("norm", lambda L, x: ([x[0], x[1]],)),
    ("lerp", lambda L, x: ([x[0], x[1]], [x[1], x[0]], 0.3)),
    ("addcdiv", lambda L, x: ([x[0], x[1]], [x[1], x[0]], [x[0], x[1]], [0.5, 2.0])),
    ("maximum", lambda L, x: ([x[0], x[1]], [x[1], x[0]])),
    ("pow", lambda L, x: (2.0, [x[0], x[1]])),
])
def test_out_of_place_gradients(name, args):
    vals = [RNG.uniform(0.5, 1.5, (3,)).astype(np.float32) for _ in range(2)] + [np.float32(1.5)]
    grads = []
    for L in LIBS:
        x = [L.tensor(v, requires_grad=True) for v in vals]
        r = getattr(L, f"_foreach_{name}")(*args(L, x))
        assert type(r) is tuple and all(t.requires_grad and t.grad_fn is not None for t in r)
        sum((t * (i + 1)).sum() for i, t in enumerate(r)).backward()
        grads.append([None if t.grad is None else t.grad.numpy() for t in x])
    for g_t, g_f in zip(*grads):
        assert (g_t is None) == (g_f is None)
        if g_t is not None:
            np.testing.assert_allclose(g_f, g_t, rtol=1e-6)


def test_inplace_on_non_leaf_gradients():
    grads = []
    for L in LIBS:
        x = L.tensor(A[0], requires_grad=True)
        w = L.tensor(B[0], requires_grad=True)
        ys = [x * 1, x * 2]
        L._foreach_add_(ys, [w, x], alpha=0.5)
        L._foreach_mul_(ys, [w, x])
        zs = [x * 3, w * 1]
        L._foreach_exp_(zs)
        us = [x * 1, w * 2]
        L._foreach_addcmul_(us, [w, x], [x, w], 0.5)
        vs = [x * 1, w * 2]
        L._foreach_lerp_(vs, [w, x], [w, x])
        sum(y.sum() for y in ys + zs + us + vs).backward()
        assert [type(y.grad_fn).__name__ for y in ys + zs + us + vs] == \
            ["MulBackward0"] * 2 + ["ExpBackward0"] * 2 + ["AddcmulBackward0"] * 2 + [type(vs[0].grad_fn).__name__] * 2
        grads.append((x.grad.numpy(), w.grad.numpy()))
    for g_f, g_t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(g_f, g_t, rtol=1e-5)


def _ema_run(L, compiled):
    ema = [L.zeros(3), L.zeros(2, 2)]
    params = [L.tensor(B[0]), L.tensor(B[1])]

    def lerp_step():
        L._foreach_lerp_(ema, params, 0.1)

    def decay_step():
        decay = 0.9
        L._foreach_mul_(ema, decay)
        L._foreach_add_(ema, params, alpha=1 - decay)
        L._foreach_add_(params, 0.25)

    f, g = (L.compile(lerp_step, fullgraph=True), L.compile(decay_step, fullgraph=True)) if compiled else \
        (lerp_step, decay_step)
    seen = []
    for _ in range(3):
        f()
        g()
        seen.append([e.detach().numpy().copy() for e in ema])
    return seen, (f, g)


def test_compiled_ema_matches_eager_and_torch():
    t_seen, _ = _ema_run(torch, False)
    e_seen, _ = _ema_run(ft, False)
    c_seen, (f, g) = _ema_run(ft, True)
    for t_step, e_step, c_step in zip(t_seen, e_seen, c_seen):
        for t, e, c in zip(t_step, e_step, c_step):
            np.testing.assert_allclose(c, e, rtol=1e-6)  # (XLA may fuse the compiled step's mul and add)
            np.testing.assert_allclose(e, t, rtol=1e-6)
    assert f.stats["eager_calls"] == 0 and g.stats["eager_calls"] == 0
    assert f.stats["traces"] == 1 and g.stats["traces"] == 1


def test_zero_dim_tensor_as_number():
    """torch's parser takes a 0-d tensor that does not require grad as a Number, in overload order: ``add``'s
    Number overload comes first (a Python-scalar promotion: int64 + float64 0-d -> float32), ``mul``'s / ``div``'s
    Tensor overload first (a tensor promotion: float64); one that requires grad is only a Tensor."""
    f64 = lambda L: L.tensor(1.25, dtype=L.float64)  # noqa: E731
    ints = lambda L: [L.tensor([1, 2]), L.tensor([3])]  # noqa: E731
    for op in ("add", "sub", "mul", "div", "clamp_min", "maximum", "pow"):
        _both(lambda L: getattr(L, f"_foreach_{op}")(ints(L), f64(L)))
        _both(lambda L: getattr(L, f"_foreach_{op}")(_ts(L, A, "float16"), f64(L)), rtol=1e-3)
    _both(lambda L: L._foreach_mul(ints(L), L.tensor(True)))
    _both(lambda L: L._foreach_pow(L.tensor(2.0, dtype=L.float64), ints(L)))
    _both(lambda L: L._foreach_lerp(_ts(L, A), _ts(L, B), L.tensor(0.3, dtype=L.float64)))
    _both(lambda L: L._foreach_lerp(_ts(L, A, "float64"), _ts(L, B, "float64"), L.tensor(0.3)))
    _both(lambda L: L._foreach_lerp(_ts(L, A, "bfloat16"), _ts(L, B, "bfloat16"), L.tensor(0.3)), rtol=1e-2)
    _both(lambda L: L._foreach_addcmul(_ts(L, A), _ts(L, B), _ts(L, C), L.tensor(0.5)))
    _both(lambda L: L._foreach_norm(_ts(L, A), L.tensor(3)))
    grads = []
    for L in LIBS:
        s = L.tensor(2.0, requires_grad=True)
        x = L.tensor(A[0], requires_grad=True)
        r = L._foreach_add([x], s)  # (the Tensor overload: differentiable in s)
        r[0].sum().backward()
        grads.append(float(s.grad))
    assert grads[0] == grads[1] == 3.0


def test_compiled_lerp_with_a_tensor_weight_is_one_program():
    def run(compiled):
        ema, params, w = [ft.zeros(3), ft.zeros(2, 2)], [ft.tensor(B[0]), ft.tensor(B[1])], ft.tensor(0.1)

        def step():
            ft._foreach_lerp_(ema, params, w)
            ft._foreach_mul_(ema, w)
        f = ft.compile(step, fullgraph=True) if compiled else step
        for _ in range(3):
            f()
        return [e.numpy() for e in ema], f
    (eager, _), (comp, f) = run(False), run(True)
    for e, c in zip(eager, comp):
        np.testing.assert_allclose(c, e, rtol=1e-6)
    assert f.stats["eager_calls"] == 0
