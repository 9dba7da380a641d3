"""Parity of ``functorch_lite.func`` with ``torch.func``: every transform on the same functions and inputs
(numpy in), values, dtypes, structures and errors compared."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.func  # noqa: F401  (the submodule; ft.func once imported)

RNG = np.random.default_rng(0)


def _np(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _to(lib, v):
    if isinstance(v, np.ndarray):
        return lib.tensor(v)
    if isinstance(v, dict):
        return {k: _to(lib, x) for k, x in v.items()}
    if isinstance(v, (tuple, list)):
        return type(v)(_to(lib, x) for x in v)
    return v


def _cmp(ours, theirs, path="out"):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ft.Tensor), f"{path}: {type(ours)}"
        assert str(ours.dtype) == str(theirs.dtype), f"{path}: {ours.dtype} vs {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {tuple(ours.shape)} vs {tuple(theirs.shape)}"
        tol = 1e-5 if theirs.dtype in (torch.float32, torch.complex64) else 1e-10
        assert ours.requires_grad == theirs.requires_grad, path
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol, err_msg=path)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), f"{path}: {ours} vs {theirs}"
        for k in theirs:
            _cmp(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, (tuple, list)):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs), \
            f"{path}: {type(ours)} vs {type(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _cmp(a, b, f"{path}[{i}]")
    else:
        assert ours == theirs, f"{path}: {ours!r} vs {theirs!r}"


def both(fn, *inputs):
    """``fn(lib, *inputs as lib tensors)`` in torch and here; results compared; returns ours."""
    theirs = fn(torch, *_to(torch, list(inputs)))
    ours = fn(ft, *_to(ft, list(inputs)))
    _cmp(ours, theirs)
    return ours


def both_raise(fn, *inputs, prefix=None):
    """Both raise the same exception type with the same message (or the same first ``prefix`` characters)."""
    with pytest.raises(Exception) as te:
        fn(torch, *_to(torch, list(inputs)))
    with pytest.raises(Exception) as oe:
        fn(ft, *_to(ft, list(inputs)))
    assert type(oe.value) is type(te.value), (oe.value, te.value)
    t, o = str(te.value), str(oe.value)
    if prefix is not None:
        t, o = t[:prefix], o[:prefix]
    assert o == t, f"\nours:   {o!r}\ntheirs: {t!r}"


def f_sin(L, x):
    return (x.sin() * x).sum()


def f_vec(L, x):
    return L.stack([x[0] * x[1], x[1].exp(), (x * x).sum()])


# ---- grad / grad_and_value ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grad_dtypes(dtype):
    both(lambda L, x: L.func.grad(lambda x: f_sin(L, x))(x), _np(5, dtype=dtype))


def test_grad_argnums_tuple_and_negative():
    f = lambda L: lambda x, y: (x * y.cos()).sum()  # noqa: E731
    a, b = _np(3), _np(3)
    both(lambda L, x, y: L.func.grad(f(L), argnums=(0, 1))(x, y), a, b)
    both(lambda L, x, y: L.func.grad(f(L), argnums=-1)(x, y), a, b)
    both(lambda L, x, y: L.func.grad(f(L), argnums=(1,))(x, y), a, b)


def test_grad_has_aux_and_grad_and_value():
    def f(L):
        return lambda x: ((x ** 2).sum(), {"double": x * 2, "n": [x.sum()]})
    both(lambda L, x: L.func.grad(f(L), has_aux=True)(x), _np(4))
    both(lambda L, x: L.func.grad_and_value(f(L), has_aux=True)(x), _np(4))
    both(lambda L, x: L.func.grad_and_value(lambda x: f_sin(L, x))(x), _np(4, dtype=np.float64))


def test_grad_pytree_argument_and_kwargs():
    def f(L):
        return lambda p, x, scale=1.0: ((p["w"] @ x + p["b"]).tanh().sum() * scale)
    p = {"w": _np(2, 3), "b": _np(2)}
    both(lambda L, p, x: L.func.grad(f(L))(p, x, scale=2.0), p, _np(3))


def test_grad_of_grad():
    both(lambda L, x: L.func.grad(lambda x: L.func.grad(lambda y: (y.sin() * y).sum())(x).sum())(x), _np(4))


@pytest.mark.parametrize("case", ["nonscalar", "tuple_out", "float_out", "aux_not_tuple", "argnum_range",
                                  "argnums_empty", "argnums_float", "argnums_dup", "int_input", "float_input",
                                  "no_args", "pytree_nontensor", "aux_int", "aux_none"])
def test_grad_errors(case):
    x = _np(3)
    fns = {
        "nonscalar": lambda L, x: L.func.grad(lambda x: x * 2)(x.reshape(3, 1)),
        "tuple_out": lambda L, x: L.func.grad(lambda x: (x.sum(), 1))(x),
        "float_out": lambda L, x: L.func.grad(lambda x: 1.0)(x),
        "aux_not_tuple": lambda L, x: L.func.grad(lambda x: x.sum(), has_aux=True)(x),
        "argnum_range": lambda L, x: L.func.grad(lambda x: x.sum(), argnums=1)(x),
        "argnums_empty": lambda L, x: L.func.grad(lambda x: x.sum(), argnums=())(x),
        "argnums_float": lambda L, x: L.func.grad(lambda x: x.sum(), argnums=1.0)(x),
        "argnums_dup": lambda L, x: L.func.grad(lambda x: x.sum(), argnums=(0, -1))(x),
        "int_input": lambda L, x: L.func.grad(lambda x: x.sum())(L.arange(3)),
        "float_input": lambda L, x: L.func.grad(lambda x: x.sum())(3.0),
        "no_args": lambda L, x: L.func.grad(lambda x: x.sum())(),
        "pytree_nontensor": lambda L, x: L.func.grad(lambda d: d["a"].sum())({"a": x, "b": 2}),
        "aux_int": lambda L, x: L.func.vjp(lambda x: (x, 3), x, has_aux=True),
        "aux_none": lambda L, x: L.func.grad(lambda x: (x.sum(), None), has_aux=True)(x),
    }
    both_raise(fns[case], x)


# ---- vjp / jvp ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vjp(dtype):
    def run(L, x, y, ct):
        out, fn = L.func.vjp(lambda a, b: (a.sin() * b, (a @ b).exp()), x, y)
        return out, fn((ct, L.ones_like(out[1])))
    both(run, _np(3, dtype=dtype), _np(3, dtype=dtype), _np(3, dtype=dtype))


def test_vjp_has_aux_and_pytree_primal():
    def run(L, p, ct):
        out, fn, aux = L.func.vjp(lambda p: (p["a"] * p["b"].cos(), p["a"].sum()), p, has_aux=True)
        return out, fn(ct), aux
    both(run, {"b": _np(3), "a": _np(3)}, _np(3))


@pytest.mark.parametrize("case", ["nontensor_out", "ct_shape", "ct_structure", "aux_not_tuple", "int_primal"])
def test_vjp_errors(case):
    x = _np(3)
    fns = {
        "nontensor_out": lambda L, x: L.func.vjp(lambda x: 1, x),
        "ct_shape": lambda L, x: L.func.vjp(lambda x: x, x)[1](L.ones(4)),
        "ct_structure": lambda L, x: L.func.vjp(lambda x: x, x)[1]((x,)),
        "aux_not_tuple": lambda L, x: L.func.vjp(lambda x: x, x, has_aux=True),
        "int_primal": lambda L, x: L.func.vjp(lambda x: x, L.arange(3)),
    }
    both_raise(fns[case], x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jvp(dtype):
    def run(L, x, y, tx, ty):
        return L.func.jvp(lambda a, b: (a.sin() * b, (a * b).sum()), (x, y), (tx, ty))
    both(run, *[_np(3, dtype=dtype) for _ in range(4)])


def test_jvp_has_aux():
    both(lambda L, x, t: L.func.jvp(lambda a: (a.exp(), {"s": a.sum()}), (x,), (t,), has_aux=True), _np(3), _np(3))


@pytest.mark.parametrize("case", ["not_tuple", "structure", "size", "empty", "nontensor_out", "float_primal",
                                  "int_primal", "aux_not_tuple"])
def test_jvp_errors(case):
    x = _np(3)
    fns = {
        "not_tuple": lambda L, x: L.func.jvp(lambda x: x, x, x),
        "structure": lambda L, x: L.func.jvp(lambda x: x, (x,), (x, x)),
        "size": lambda L, x: L.func.jvp(lambda x: x, (x,), (L.ones(4),)),
        "empty": lambda L, x: L.func.jvp(lambda: x, (), ()),
        "nontensor_out": lambda L, x: L.func.jvp(lambda x: 1, (x,), (x,)),
        "float_primal": lambda L, x: L.func.jvp(lambda x: x, (3.0,), (3.0,)),
        "int_primal": lambda L, x: L.func.jvp(lambda x: x, (L.arange(3),), (L.arange(3),)),
        "aux_not_tuple": lambda L, x: L.func.jvp(lambda x: x, (x,), (x,), has_aux=True),
    }
    both_raise(fns[case], x)


# ---- jacrev / jacfwd / hessian -----------------------------------------------------------------------------
@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jacobians(jac, dtype):
    both(lambda L, x: getattr(L.func, jac)(lambda x: f_vec(L, x))(x), _np(3, dtype=dtype))
    both(lambda L, x: getattr(L.func, jac)(lambda x: x.sin().reshape(2, 2))(x), _np(2, 2, dtype=dtype))


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobians_argnums_multi_output_aux(jac):
    def f(L):
        return lambda x, y: ((x * y).sin(), (x @ y).exp())
    a, b = _np(3), _np(3)
    both(lambda L, x, y: getattr(L.func, jac)(f(L), argnums=(0, 1))(x, y), a, b)
    both(lambda L, x, y: getattr(L.func, jac)(f(L), argnums=1)(x, y), a, b)
    both(lambda L, x: getattr(L.func, jac)(lambda x: (x.exp(), x.sum()), has_aux=True)(x), a)
    both(lambda L, p: getattr(L.func, jac)(lambda p: p["w"] @ p["v"])(p), {"w": _np(2, 3), "v": _np(3)})


@pytest.mark.parametrize("case", ["rev_aux", "fwd_aux", "rev_nontensor", "fwd_nontensor", "rev_int", "fwd_int",
                                  "argnum_range", "argnums_dup", "chunk_size", "fwd_randomness"])
def test_jacobian_errors(case):
    x = _np(3)
    fns = {
        "rev_aux": lambda L, x: L.func.jacrev(lambda x: x, has_aux=True)(x),
        "fwd_aux": lambda L, x: L.func.jacfwd(lambda x: x, has_aux=True)(x),
        "rev_nontensor": lambda L, x: L.func.jacrev(lambda x: 1)(x),
        "fwd_nontensor": lambda L, x: L.func.jacfwd(lambda x: 1)(x),
        "rev_int": lambda L, x: L.func.jacrev(lambda x: x)(L.arange(3)),
        "fwd_int": lambda L, x: L.func.jacfwd(lambda x: x)(L.arange(3)),
        "argnum_range": lambda L, x: L.func.jacrev(lambda x: x, argnums=2)(x),
        "argnums_dup": lambda L, x: L.func.jacfwd(lambda x: x, argnums=(0, 0))(x),
        "chunk_size": lambda L, x: L.func.jacrev(lambda x: x, chunk_size=0)(x),
        "fwd_randomness": lambda L, x: L.func.jacfwd(lambda x: x, randomness="bad")(x),
    }
    both_raise(fns[case], x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hessian(dtype):
    both(lambda L, x: L.func.hessian(lambda x: (x.sin() * x.sum()).sum())(x), _np(4, dtype=dtype))
    both(lambda L, x, y: L.func.hessian(lambda x, y: (x * y).exp().sum(), argnums=(0, 1))(x, y),
         _np(2, dtype=dtype), _np(2, dtype=dtype))


def test_jacfwd_random_error():
    both_raise(lambda L, x: L.func.jacfwd(lambda x: x * L.randn(3))(x), _np(3))


# ---- vmap ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vmap_matmul_reduction_indexing(dtype):
    def f(L):
        return lambda x, w: ((x @ w).relu().sum(dim=0) + x[1:].mean(dim=-1, keepdim=True)) * x[0]
    both(lambda L, x, w: L.func.vmap(f(L), in_dims=(0, None))(x, w), _np(5, 3, 3, dtype=dtype), _np(3, 3, dtype=dtype))


def test_vmap_indexing_gather_where_max_inplace():
    xs, ids = _np(4, 5), np.array([0, 3, 2, 4])
    both(lambda L, x, i: L.func.vmap(lambda x, i: x[i])(x, i), xs, ids)
    both(lambda L, x, i: L.func.vmap(lambda x, i: x.gather(0, i.unsqueeze(0)))(x, i), xs, ids)
    both(lambda L, x: L.func.vmap(lambda x: L.where(x > 0, x, L.zeros_like(x)).sum())(x), xs)
    both(lambda L, x: L.func.vmap(lambda x: x.max(dim=0))(x), xs)
    both(lambda L, x: L.func.vmap(lambda x: x.clone().mul_(2).softmax(-1) @ x)(x), xs)


def test_functional_call_with_eager_autograd():
    """Outside the transforms: the given tensors are the inputs autograd sees (gradients reach them)."""
    def run(L, x):
        L.manual_seed(0)
        m = L.nn.Linear(5, 2)
        w = L.ones(2, 5).requires_grad_()
        out = L.func.functional_call(m, {"weight": w, "bias": L.zeros(2)}, (x,))
        (out * out).sum().backward()
        return out, w.grad, m.weight.grad
    both(run, _np(3, 5))


def test_grad_inside_compile_and_random_vmap():
    def run(L, x):  # ours compiled (one XLA program), torch's eager (torch.compile is slow to start)
        fn = lambda x: L.func.grad(lambda y: (y.sin() * y).sum())(x)  # noqa: E731
        return L.compile(fn)(x) if L is ft else fn(x)
    both(run, _np(4))
    out = ft.func.vmap(lambda x: ft.nn.functional.dropout(x, 0.5), randomness="different")(ft.ones(8, 16)).numpy()
    assert out.shape == (8, 16) and any(not np.array_equal(out[0], out[i]) for i in range(1, 8))


def test_vmap_sees_per_example_shape():
    def f(L):
        seen = []

        def g(x, y):
            seen.append((tuple(x.shape), tuple(y.shape), x.dim(), x.numel()))
            return x.sum() + y.sum()
        return g, seen
    shapes = {}
    for L in (torch, ft):
        g, seen = f(L)
        L.func.vmap(g, in_dims=(1, None))(L.ones(3, 4, 5), L.ones(2))
        shapes[L.__name__] = seen[0]
    assert shapes["torch"] == shapes["functorch_lite"] == ((3, 5), (2,), 2, 15)


def test_vmap_in_dims_nested_and_dicts():
    def f(L):
        return lambda p, xy: p["w"] * xy[0] + p["b"] - xy[1].sum()
    p = {"w": _np(4, 3), "b": _np(3)}
    xy = (_np(3, 4), _np(4, 2))
    both(lambda L, p, xy: L.func.vmap(f(L), in_dims=({"w": 0, "b": None}, (1, 0)))(p, xy), p, xy)
    both(lambda L, x, y: L.func.vmap(lambda a, b: a * b, in_dims=(-1, 0))(x, y), _np(2, 5), _np(5, 2))


def test_vmap_out_dims_and_multiple_outputs():
    x = _np(4, 3)
    both(lambda L, x: L.func.vmap(lambda a: a.exp(), out_dims=1)(x), x)
    both(lambda L, x: L.func.vmap(lambda a: a.exp(), out_dims=-1)(x), x)
    both(lambda L, x: L.func.vmap(lambda a: (a.sin(), a.sum()), out_dims=(1, 0))(x), x)
    both(lambda L, x, c: L.func.vmap(lambda a, c: (a * 2, c * 3), in_dims=(0, None), out_dims=(0, None))(x, c),
         x, _np(2))
    both(lambda L, x: L.func.vmap(lambda a: {"s": a.sum(), "c": a.cos()})(x), x)


def test_vmap_unbatched_output_is_broadcast():
    both(lambda L, x, c: L.func.vmap(lambda a, c: c * 2, in_dims=(0, None))(x, c), _np(4, 3), _np(2))


def test_nested_vmap():
    def f(L):
        return lambda x, y: L.func.vmap(lambda a: L.func.vmap(lambda b: (a * b).sum())(y))(x)
    both(f_outer := (lambda L, x, y: f(L)(x, y)), _np(3, 5), _np(4, 5))
    both(lambda L, x: L.func.vmap(L.func.vmap(lambda a: a.sum(), in_dims=1), in_dims=0)(x), _np(2, 3, 4))
    assert f_outer


def test_vmap_chunk_size():
    x = _np(7, 3)
    both(lambda L, x: L.func.vmap(lambda a: (a.sin(), a.sum()), out_dims=(1, 0), chunk_size=3)(x), x)


def test_vmap_randomness_same_and_different():
    x = ft.zeros(6, 3)
    same = ft.func.vmap(lambda a: a + ft.randn(3), randomness="same")(x).numpy()
    assert np.allclose(same, same[0])
    diff = ft.func.vmap(lambda a: a + ft.randn(3), randomness="different")(x).numpy()
    assert not np.allclose(diff[0], diff[1]) and diff.shape == (6, 3)
    ft.manual_seed(3)
    before = ft.randn(2).numpy()
    ft.manual_seed(3)
    ft.func.vmap(lambda a: a + ft.rand(()), randomness="different")(x)
    assert not np.allclose(ft.randn(2).numpy(), before)  # the generator advanced, concretely
    assert ft.default_generator.key is not None and not isinstance(ft.default_generator.key, __import__("jax").core.Tracer)


@pytest.mark.parametrize("case", ["sizes", "sizes_two_args", "structure", "in_dim_range", "nontensor", "in_dims_none",
                                  "in_dims_str", "in_dims_list", "no_inputs", "scalar_in", "int_out", "tuple_int_out",
                                  "out_none_batched", "out_dim_range", "out_structure", "out_structure2",
                                  "out_dims_str", "random_error", "randomness_bad", "chunk_size", "nothing_mapped",
                                  "dict_structure"])
def test_vmap_errors(case):
    fns = {
        "sizes": lambda L: L.func.vmap(lambda x: x)(L.ones(3), L.ones(4)),
        "sizes_two_args": lambda L: L.func.vmap(lambda x, y: x + y)(L.ones(3), L.ones(4)),
        "structure": lambda L: L.func.vmap(lambda x, y: x + y, in_dims=(0,))(L.ones(3), L.ones(3)),
        "in_dim_range": lambda L: L.func.vmap(lambda x, y: x + y, in_dims=(0, 2))(L.ones(3), L.ones(3, 3)),
        "nontensor": lambda L: L.func.vmap(lambda x, y: x + y, in_dims=(0, 0))(L.ones(3), 2.0),
        "in_dims_none": lambda L: L.func.vmap(lambda x: x, in_dims=None)(L.ones(3)),
        "in_dims_str": lambda L: L.func.vmap(lambda x: x, in_dims="a")(L.ones(3)),
        "in_dims_list": lambda L: L.func.vmap(lambda x: x, in_dims=[0])(L.ones(3)),
        "no_inputs": lambda L: L.func.vmap(lambda: 1)(),
        "scalar_in": lambda L: L.func.vmap(lambda x: x)(L.ones(())),
        "int_out": lambda L: L.func.vmap(lambda x: 1)(L.ones(3)),
        "tuple_int_out": lambda L: L.func.vmap(lambda x: (x, 1))(L.ones(3)),
        "out_none_batched": lambda L: L.func.vmap(lambda x: x, out_dims=None)(L.ones(3)),
        "out_dim_range": lambda L: L.func.vmap(lambda x: x, out_dims=1)(L.ones(3)),
        "out_structure": lambda L: L.func.vmap(lambda x: x, out_dims=(0, 0))(L.ones(3)),
        "out_structure2": lambda L: L.func.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(L.ones(3)),
        "out_dims_str": lambda L: L.func.vmap(lambda x: x, out_dims="a")(L.ones(3)),
        "random_error": lambda L: L.func.vmap(lambda x: L.randn(2))(L.ones(3)),
        "randomness_bad": lambda L: L.func.vmap(lambda x: x, randomness="bad")(L.ones(3)),
        "chunk_size": lambda L: L.func.vmap(lambda x: x, chunk_size=0)(L.ones(3)),
        "nothing_mapped": lambda L: L.func.vmap(lambda x: x, in_dims=(None,))(L.ones(3)),
        "dict_structure": lambda L: L.func.vmap(lambda d: d["a"], in_dims=({"a": 0},))({"a": L.ones(3), "b": L.ones(3)}),
    }
    both_raise(fns[case])


# ---- composition: per-sample gradients, functional_call ----------------------------------------------------------
def _mlp(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 3))


def _pair():
    tm, fm = _mlp(torch), _mlp(ft)
    fm.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, fm


def _params(L, m):
    return {k: v.detach() for k, v in m.named_parameters()}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_functional_call_grad_matches_torch(dtype):
    tm, fm = _pair()
    if dtype == np.float64:
        tm, fm = tm.double(), fm.double()
    x, y = _np(6, 4, dtype=dtype), RNG.integers(0, 3, 6)

    def run(L, m, x, y):
        def loss(p):
            return L.nn.functional.cross_entropy(L.func.functional_call(m, p, (x,)), y)
        return L.func.grad_and_value(loss)(_params(L, m))
    theirs = run(torch, tm, torch.tensor(x), torch.tensor(y))
    ours = run(ft, fm, ft.tensor(x), ft.tensor(y))
    _cmp(ours, theirs)
    assert all(p.grad is None for p in fm.parameters())  # nothing leaked into the module's autograd state


def test_per_sample_gradients_vmap_grad():
    tm, fm = _pair()
    x, y = _np(5, 4), RNG.integers(0, 3, 5)

    def run(L, m, x, y):  # the torch.func tutorial's form: (params, buffers) dicts, in_dims=(None, None, 0, 0)
        def loss(p, b, xi, yi):
            out = L.func.functional_call(m, (p, b), (xi.unsqueeze(0),))
            return L.nn.functional.cross_entropy(out, yi.unsqueeze(0))
        buffers = {k: v.detach() for k, v in m.named_buffers()}
        return L.func.vmap(L.func.grad(loss), in_dims=(None, None, 0, 0))(_params(L, m), buffers, x, y)
    _cmp(run(ft, fm, ft.tensor(x), ft.tensor(y)), run(torch, tm, torch.tensor(x), torch.tensor(y)))


def test_functional_call_restores_and_buffers():
    def run(L):
        L.manual_seed(0)
        m = L.nn.Linear(3, 2)
        m.register_buffer("shift", L.ones(2))
        orig_w = m.weight
        m.forward = lambda x: L.nn.functional.linear(x, m.weight, m.bias) + m.shift
        new = {"weight": L.ones(2, 3), "shift": L.zeros(2)}
        out = L.func.functional_call(m, new, L.ones(1, 3))          # args given as a single tensor
        assert m.weight is orig_w and float(m.shift.sum()) == 2.0
        out2 = L.func.functional_call(m, ({"weight": L.ones(2, 3)}, {"bias": L.zeros(2)}), (L.ones(1, 3),))
        return out - m.bias, out2
    _cmp(run(ft), run(torch))


def test_functional_call_tied_weights():
    def build(L):
        m = L.nn.Module()
        m.a = L.nn.Linear(2, 2, bias=False)
        m.b = L.nn.Linear(2, 2, bias=False)
        m.b.weight = m.a.weight
        m.forward = lambda x: m.b(m.a(x))
        return m

    def run(L):
        m = build(L)
        x = L.ones(1, 2)
        w = L.tensor([[1.0, 2.0], [3.0, 4.0]])
        return (L.func.functional_call(m, {"a.weight": w}, (x,)),
                L.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False) - m.a.weight.sum() * 0)
    tied, untied = run(ft)
    ttied, tuntied = run(torch)
    _cmp(tied, ttied)
    assert tuple(untied.shape) == tuple(tuntied.shape)
    both_raise(lambda L: L.func.functional_call(build(L), {"a.weight": L.ones(2, 2), "b.weight": L.zeros(2, 2)},
                                                (L.ones(1, 2),)))


@pytest.mark.parametrize("case", ["strict", "repeated", "bad_type", "bad_elements"])
def test_functional_call_errors(case):
    fns = {
        "strict": lambda L: L.func.functional_call(L.nn.Linear(2, 2), {"weight": L.ones(2, 2), "w2": L.ones(1)},
                                                   (L.ones(2),), strict=True),
        "repeated": lambda L: L.func.functional_call(L.nn.Linear(2, 2), ({"weight": L.ones(2, 2)},
                                                                         {"weight": L.ones(2, 2)}), (L.ones(2),)),
        "bad_type": lambda L: L.func.functional_call(L.nn.Linear(2, 2), 3, (L.ones(2),)),
        "bad_elements": lambda L: L.func.functional_call(L.nn.Linear(2, 2), ({"weight": L.ones(2, 2)}, 3),
                                                         (L.ones(2),)),
    }
    both_raise(fns[case])


def test_jacrev_of_model_params_and_hessian_of_loss():
    tm, fm = _pair()
    x = _np(2, 4)

    def run(L, m, x):
        p = _params(L, m)
        jac = L.func.jacrev(lambda p: L.func.functional_call(m, p, (x,)))(p)
        hx = L.func.hessian(lambda xx: L.func.functional_call(m, p, (xx,)).pow(2).sum())(x[0])
        return jac, hx
    _cmp(run(ft, fm, ft.tensor(x)), run(torch, tm, torch.tensor(x)))


def test_vjp_inside_vmap_and_jvp_of_grad():
    def run(L, x, cts):
        _, fn = L.func.vjp(lambda a: a.sin() * 2, x)
        batched = L.func.vmap(fn)(cts)
        fwd = L.func.jvp(L.func.grad(lambda a: (a.exp() * a).sum()), (x,), (L.ones_like(x),))
        return batched, fwd
    both(run, _np(3), _np(4, 3))


def test_complex_vjp_is_conjugate_convention():
    def run(L, z, ct):
        out, fn = L.func.vjp(lambda z: z * z * 3 + z, z)
        return out, fn(ct)
    c = lambda: (_np(3) + 1j * _np(3)).astype(np.complex64)  # noqa: E731
    both(run, c(), c())


def _bn_pair():
    def build(L):
        L.manual_seed(0)
        return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4))
    tm, fm = build(torch), build(ft)
    fm.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, fm


def test_batchnorm_running_stats_under_grad():
    """torch.func refuses to mutate a captured tensor inside grad (the BatchNorm module's num_batches_tracked.add_
    first): the same RuntimeError here, the buffers left as they were in both."""
    tm, fm = _bn_pair()
    x = _np(5, 3)
    errors = []
    for L, m in ((torch, tm), (ft, fm)):
        with pytest.raises(RuntimeError, match="mutate a captured Tensor") as e:
            L.func.grad(lambda p: L.func.functional_call(m, p, (L.tensor(x),)).pow(2).sum())(_params(L, m))
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    _cmp({k: v for k, v in fm.named_buffers()}, {k: v for k, v in tm.named_buffers()})
    assert int(fm[1].num_batches_tracked) == 0


def test_vmap_batched_write_into_unbatched_buffer_raises():
    tm, fm = _bn_pair()
    xs = _np(5, 2, 3)
    before = fm[1].running_mean.numpy().copy()
    for L, m in ((torch, tm), (ft, fm)):
        with pytest.raises(RuntimeError):
            L.func.vmap(lambda x: L.func.functional_call(m, _params(L, m), (x,)))(L.tensor(xs))
    np.testing.assert_array_equal(fm[1].running_mean.numpy(), before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linearize(dtype):
    def run(L, x, t1, t2):
        out, fn = L.func.linearize(lambda a: (a.sin() * a, a.exp().sum()), x)
        return out, fn(t1), fn(t2)
    both(run, *[_np(3, dtype=dtype) for _ in range(3)])


@pytest.mark.parametrize("case", ["shape", "dtype", "argspec"])
def test_linearize_errors(case):
    fns = {
        "shape": lambda L, x: L.func.linearize(lambda a: a * 2, x)[1](L.ones(4)),
        "dtype": lambda L, x: L.func.linearize(lambda a: a * 2, x)[1](L.ones(3, dtype=L.float64)),
        "argspec": lambda L, x: L.func.linearize(lambda a: a * 2, x)[1](x, x),
    }
    both_raise(fns[case], _np(3))


def test_model_ensembling_stack_module_state():
    """The torch.func ensembling tutorial: stacked states, vmap over functional_call of a base model."""
    def build(L, n):
        L.manual_seed(0)
        ms = [L.nn.Sequential(L.nn.Linear(4, 6), L.nn.ReLU(), L.nn.Linear(6, 2)) for _ in range(n)]
        return ms
    tms, fms = build(torch, 3), build(ft, 3)
    for tm, fm in zip(tms, fms):
        fm.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = _np(5, 4)

    def run(L, models, x):
        params, buffers = L.func.stack_module_state(models)
        base = models[0]
        out = L.func.vmap(lambda p, b, x: L.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
            params, buffers, x)
        return params, out.detach()
    _cmp(run(ft, fms, ft.tensor(x)), run(torch, tms, torch.tensor(x)))
    both_raise(lambda L: L.func.stack_module_state([]))
    both_raise(lambda L: L.func.stack_module_state([L.nn.Linear(2, 2), L.nn.Linear(2, 2).eval()]))
    both_raise(lambda L: L.func.stack_module_state([L.nn.Linear(2, 2), L.nn.ReLU()]))
