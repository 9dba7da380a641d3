"""Parity of ``functorch_lite.func`` / ``vmap`` with torch 2.13, part two: eager autograd through ``vmap``,
``replace_all_batch_norm_modules_`` / ``functionalize`` / ``debug_unwrap``, integer outputs of the reverse-mode
transforms, ``vmap`` output checks, torch's errors inside transforms and for bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.func  # noqa: F401

from _parity import same


def _plain(r):
    """A result as plain data: tensors as (shape, dtype name, requires_grad, values), grad_fn left out."""
    if hasattr(r, "storage_offset"):
        return (tuple(r.shape), str(r.dtype).split(".")[-1], r.requires_grad, r.detach().tolist())
    if isinstance(r, (tuple, list)):
        return type(r)(_plain(x) for x in r)
    if isinstance(r, dict):
        return {k: _plain(v) for k, v in r.items()}
    return r


def _both(fn):
    """``fn(lib)`` for torch and functorch_lite: plain results compared, floats to 1e-5."""
    a, b = _plain(fn(ft)), _plain(fn(torch))

    def close(x, y):
        if isinstance(x, float) and isinstance(y, float):
            return abs(x - y) <= 1e-5 * max(1.0, abs(y))
        if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
            return type(x) is type(y) and len(x) == len(y) and all(map(close, x, y))
        if isinstance(x, dict) and isinstance(y, dict):
            return list(x) == list(y) and all(close(x[k], y[k]) for k in x)
        return x == y
    assert close(a, b), (a, b)
    return a


def _lin(lib):
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.arange(6.).reshape(2, 3) / 10)
        lin.bias.fill_(0.5)
    return lin


X = np.arange(12, dtype=np.float32).reshape(4, 3)


# ---- 1. eager autograd through vmap ---------------------------------------------------------------------------
def test_vmap_module_backward_fills_param_grads():
    def f(lib):
        lin = _lin(lib)
        out = lib.vmap(lin)(lib.tensor(X))
        out.pow(2).sum().backward()
        return out, lin.weight.grad, lin.bias.grad
    out = _both(f)
    assert out[0][2] is True
    assert type(ft.vmap(_lin(ft))(ft.tensor(X)).grad_fn).__name__ == "VmapBackward0"


def test_vmap_input_requires_grad_backward():
    def f(lib):
        x = lib.tensor(X).requires_grad_()
        o = lib.vmap(lambda a: (a.sin() * a).sum())(x)
        o.sum().backward()
        return o, x.grad
    _both(f)


def test_autograd_grad_through_vmap_captured_closure():
    def f(lib):
        w = lib.tensor([1., 2., 3.], requires_grad=True)
        y = lib.vmap(lambda a: (a * w).sum())(lib.tensor(X))
        return y, lib.autograd.grad(y.sum(), w)
    _both(f)


def test_vmap_unmapped_arg_and_mapped_arg_both_require_grad_chunked():
    def f(lib):
        w = lib.tensor([[1., -2.], [0.5, 3.], [2., 1.]], requires_grad=True)
        x = (lib.tensor(X) / 7).requires_grad_()
        y = lib.vmap(lambda a, m: (a @ m).tanh(), in_dims=(0, None), chunk_size=3)(x, w)
        (y * y).sum().backward()
        return y, w.grad, x.grad
    _both(f)


def test_unused_captured_param_gets_no_grad():
    def f(lib):
        lin, other = _lin(lib), lib.nn.Linear(3, 3)

        def fn(a):
            _ = other  # captured but not read by any op
            return lin(a)
        lib.vmap(fn)(lib.tensor(X)).sum().backward()
        return lin.weight.grad, other.weight.grad is None
    _both(f)


_GLOBAL_W = {}


def test_vmap_captured_global_detached_alias_and_view():
    def f(lib):
        _GLOBAL_W[lib] = lib.tensor([[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)

        class M(lib.nn.Module):
            def forward(self, a):
                return (a @ _GLOBAL_W[lib]).sum()
        x = lib.arange(6.).reshape(2, 3)
        lib.vmap(M())(x).sum().backward()
        w2 = lib.ones(3, requires_grad=True)
        d, v = w2.detach(), w2[:2]
        y = lib.vmap(lambda a: (a * d).sum())(x)          # no gradient through a detached alias
        lib.vmap(lambda a: (a[:2] * v).sum())(x).sum().backward()  # through a captured view to its base
        return _GLOBAL_W[lib].grad, y.requires_grad, w2.grad
    _both(f)


def test_vmap_no_grad_mode_records_nothing():
    def f(lib):
        lin = _lin(lib)
        with lib.no_grad():
            out = lib.vmap(lin)(lib.tensor(X))
        return out.requires_grad, out.grad_fn is None
    _both(f)


def test_module_using_vmap_in_forward_trains_with_sgd():
    def f(lib):
        nn, F = lib.nn, lib.nn.functional

        class PerToken(nn.Module):
            def __init__(s):
                super().__init__()
                s.l1, s.l2 = nn.Linear(4, 8), nn.Linear(8, 2)

            def token(s, t):
                return s.l2(lib.relu(s.l1(t)))

            def forward(s, x):
                return lib.vmap(s.token)(x)
        m = PerToken()
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        x, y = lib.linspace(-1, 1, 24).reshape(6, 4), lib.tensor([0, 1, 1, 0, 1, 0])
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            losses.append(round(loss.item(), 5))
        return losses, m.l2.bias.detach()
    out = _both(f)
    assert out[0] == [1.44271, 1.31453, 1.20449]


def test_ensemble_grads_reach_stacked_params():
    def f(lib):
        models = [_lin(lib) for _ in range(3)]
        with lib.no_grad():
            for k, m in enumerate(models):
                m.weight.mul_(k + 1)
        params, buffers = lib.func.stack_module_state(models)
        base = lib.nn.Linear(3, 2)

        def call(p, b, x):
            return lib.func.functional_call(base, (p, b), (x,))
        out = lib.vmap(call, in_dims=(0, 0, None))(params, buffers, lib.tensor(X))
        (out ** 2).mean().backward()
        return out, params["weight"].grad, params["bias"].grad
    _both(f)


# ---- 2. replace_all_batch_norm_modules_, functionalize, debug_unwrap ----------------------------------------
def test_replace_all_batch_norm_modules_then_vmap_train_bn():
    def f(lib):
        net = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))
        with lib.no_grad():
            net[0].weight.copy_(lib.eye(3))
            net[0].bias.zero_()
        r = lib.func.replace_all_batch_norm_modules_(net)
        bn = net[1]
        out = lib.vmap(net)(lib.arange(12.).reshape(2, 2, 3) ** 1.5)
        return (r is net, bn.running_mean is None, bn.running_var is None, bn.num_batches_tracked is None,
                bn.track_running_stats, out.detach())
    _both(f)


def test_functionalize_keeps_results_and_input_mutations():
    def f(lib):
        def g(a):
            a.add_(1)
            b = a.view(-1)
            b.mul_(2)
            return a * 3
        outs = []
        for remove in ("mutations", "mutations_and_views"):
            x = lib.ones(2, 2)
            outs.append((lib.func.functionalize(g, remove=remove)(x), x))
        return outs
    _both(f)
    same(lambda lib: lib.func.functionalize(lambda a: a, remove="bad"))


def test_debug_unwrap():
    def f(lib):
        seen = []

        def peek(a):
            seen.append(tuple(lib.func.debug_unwrap(a).shape))
            seen.append(tuple(lib.func.debug_unwrap(a, recurse=False).shape))
            return a
        lib.vmap(lib.vmap(peek))(lib.ones(4, 3, 2))
        x = lib.ones(2)
        return seen, lib.func.debug_unwrap(x) is x
    assert _both(f) == ([(4, 3, 2), (3, 2)], True)
    same(lambda lib: lib.func.debug_unwrap(3))


# ---- 3. integer outputs in grad / vjp / jacrev ------------------------------------------------------------
@pytest.mark.parametrize("case", ["grad", "grad_f64", "grad_and_value", "grad_bool", "grad_aux", "vjp", "vjp_mixed",
                                  "vjp_bool", "jacrev", "hessian", "jacfwd", "jvp"])
def test_integer_outputs(case):
    def f(lib):
        F = lib.func
        x = lib.tensor([0.5, 1.5, 2.5])
        long_sum = lambda a: (a > 1).long().sum()  # noqa: E731
        return {
            "grad": lambda: F.grad(long_sum)(x),
            "grad_f64": lambda: F.grad(long_sum)(x.double()),
            "grad_and_value": lambda: F.grad_and_value(long_sum)(x),
            "grad_bool": lambda: F.grad(lambda a: (a > 1).all())(x),
            "grad_aux": lambda: F.grad(lambda a: (long_sum(a), a * 2), has_aux=True)(x),
            "vjp": lambda: F.vjp(lambda a: (a > 1).long(), x)[0],
            "vjp_mixed": lambda: F.vjp(lambda a: (a * 2, (a > 1).long()), x)[0],
            "vjp_bool": lambda: F.vjp(lambda a: a > 1, x)[0],
            "jacrev": lambda: F.jacrev(lambda a: (a > 1).long())(x),
            "hessian": lambda: F.hessian(long_sum)(x),
            "jacfwd": lambda: F.jacfwd(lambda a: (a > 1).long())(x).contiguous(),
            "jvp": lambda: F.jvp(lambda a: (a > 1).long(), (x,), (x,)),
        }[case]()
    same(f)


# ---- 4. vmap outputs: None and non-Tensors -------------------------------------------------------------------
@pytest.mark.parametrize("case", ["none", "none_in_tuple", "int_od0", "int_od_none", "all_none", "str", "none_od",
                                  "list", "dict"])
def test_vmap_non_tensor_outputs(case):
    def f(lib):
        x = lib.ones(3, 2)
        v = lib.vmap
        return {
            "none": lambda: v(lambda a: None)(x),
            "none_in_tuple": lambda: v(lambda a: (a, None))(x),
            "int_od0": lambda: v(lambda a: (a, 1), out_dims=(0, 0))(x),
            "int_od_none": lambda: v(lambda a: (a * 2, 1), out_dims=(0, None))(x),
            "all_none": lambda: v(lambda a: 1, out_dims=None)(x),
            "str": lambda: v(lambda a: (a, "s"), out_dims=(0, None))(x),
            "none_od": lambda: v(lambda a: (a * 2, None), out_dims=(0, None))(x),
            "list": lambda: v(lambda a: [a.sum(), 2.5], out_dims=[0, None])(x),
            "dict": lambda: str(v(lambda a: {"a": a.sum(), "b": 3}, out_dims={"a": 0, "b": None})(x)),
        }[case]()
    same(f)


# ---- 5. autograd calls inside a transform -------------------------------------------------------------------
@pytest.mark.parametrize("case", ["rg_grad", "rg_vmap", "rg_vmap_false", "rg_new", "rg_vjp", "rg_jvp", "bw_grad",
                                  "bw_vmap", "bw_new_graph_vmap", "factory_requires_grad", "module_inside"])
def test_autograd_calls_inside_transforms(case):
    def f(lib):
        F, x = lib.func, lib.tensor([1., 2., 3.])

        def bw(a):
            (a * 2).sum().backward()
            return a.sum()

        def bw_new(a):
            w = lib.ones(3, requires_grad=True)
            (a * w).sum().backward()
            return a.sum()
        return {
            "rg_grad": lambda: F.grad(lambda a: a.requires_grad_().sum())(x),
            "rg_vmap": lambda: lib.vmap(lambda a: a.requires_grad_().sum())(x),
            "rg_vmap_false": lambda: lib.vmap(lambda a: a.requires_grad_(False).sum())(x),
            "rg_new": lambda: F.grad(lambda a: (a * lib.ones(3).requires_grad_()).sum())(x),
            "rg_vjp": lambda: F.vjp(lambda a: a.requires_grad_(), x)[0],
            "rg_jvp": lambda: F.jvp(lambda a: a.requires_grad_(), (x,), (x,))[0],
            "bw_grad": lambda: F.grad(bw)(x),
            "bw_vmap": lambda: lib.vmap(bw)(x),
            "bw_new_graph_vmap": lambda: lib.vmap(bw_new)(x),
            "factory_requires_grad": lambda: F.grad(lambda a: (a * lib.ones(3, requires_grad=True)).sum())(x),
            "module_inside": lambda: lib.vmap(lambda a: a * lib.nn.Linear(1, 1).weight.shape[0])(x),
        }[case]()
    same(f)
    # the guards are gone once the transform returns
    t = ft.ones(2).requires_grad_()
    (t * 2).sum().backward()
    assert t.grad.tolist() == [2.0, 2.0]


def test_autograd_grad_inside_func_grad_is_a_clear_error():
    x = ft.tensor([1., 2., 3.])
    with pytest.raises(RuntimeError, match="autograd.grad inside a differentiating torch.func transform"):
        ft.func.grad(lambda a: ft.autograd.grad((a ** 3).sum(), a, create_graph=True)[0].sum())(x)
    assert torch.func.grad(lambda a: torch.autograd.grad((a ** 3).sum(), a, create_graph=True)[0].sum())(
        torch.tensor([1., 2., 3.])).tolist() == [6., 12., 18.]  # (torch's value: the gap this error names)


# ---- 6. randomness='same' with batched inputs, vjp_fn cotangent types, chunk_size types -----------------------
@pytest.mark.parametrize("case", ["bernoulli", "normal_mean", "normal_std", "multinomial", "poisson",
                                  "bernoulli_unbatched", "rand_like", "dropout_shape"])
def test_same_randomness_with_batched_input(case):
    def f(lib):
        x = lib.tensor([[0.1, 0.9], [0.5, 0.5], [0.3, 0.2]])
        v = lambda fn, **k: lib.vmap(fn, randomness="same", **k)  # noqa: E731
        return {
            "bernoulli": lambda: v(lambda a: lib.bernoulli(a))(x),
            "normal_mean": lambda: v(lambda a: lib.normal(a, 1.0))(x),
            "normal_std": lambda: v(lambda a: lib.normal(1.0, a))(x),
            "multinomial": lambda: v(lambda a: lib.multinomial(a, 1))(x),
            "poisson": lambda: v(lambda a: lib.poisson(a))(x),
            "bernoulli_unbatched": lambda: v(lambda a, p: a + lib.bernoulli(p), in_dims=(0, None))(x, x[0]).shape,
            "rand_like": lambda: v(lambda a: lib.rand_like(a))(x).shape,
            "dropout_shape": lambda: v(lambda a: lib.nn.functional.dropout(a, 0.5))(x).shape,
        }[case]()
    same(f)


@pytest.mark.parametrize("case", ["float", "int", "tuple_float"])
def test_vjp_fn_python_scalar_cotangent(case):
    def f(lib):
        x = lib.ones(3)
        if case == "tuple_float":
            return lib.func.vjp(lambda a: (a, a * 2), x)[1]((1.0, x))
        return lib.func.vjp(lambda a: a * 2, x)[1](1.0 if case == "float" else 1)
    same(f)


@pytest.mark.parametrize("cs", [1.5, 2.0, "2", 0, -1])
def test_vmap_chunk_size_types(cs):
    same(lambda lib: lib.vmap(lambda a: a * 2, chunk_size=cs)(lib.ones(3, 2)))
