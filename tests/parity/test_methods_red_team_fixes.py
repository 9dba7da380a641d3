"""Parity with torch 2.13 for tensor-method findings of a red team: float16 / bfloat16 scatter sums, means and
products accumulate in float32 (opmath) and round once; rot90's strides (a flip transposed in place), its ``k``
parsing; tile's negative sizes; the legacy storage API (``storage().type()``, conversions, ``clone``, ``fill_``,
``copy_``...); the messages of new_zeros / new_full / Tensor.type / scatter_reduce_ / narrow / to() / apply_ /
map_ / index_add's alpha."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same


def _grads(*ts):
    return [None if t.grad is None else t.grad.float().tolist() for t in ts]


# ---- 1a. float16 / bfloat16 scatter reductions accumulate in float32 ---------------------------------------------
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_low_precision_scatter_sums_accumulate_in_float32(dt):
    def run(m):
        d = getattr(m, dt)
        idx = m.zeros(3000, dtype=m.long)
        src = m.full((3000,), 1.1, dtype=d)
        z = m.zeros(1, dtype=d)
        i2 = m.zeros(1, 1, dtype=m.long).expand(1, 3000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (scatter's reduce= deprecation)
            added = m.full((1,), 1000., dtype=d).scatter(0, idx, src, reduce="add")
            mult = m.ones(1, dtype=d).scatter(0, idx[:30], 1.01, reduce="multiply")
        return (z.scatter_add(0, idx, src), z.scatter_reduce(0, idx, src, "sum"),
                z.scatter_reduce(0, idx, src, "mean", include_self=False), z.scatter_reduce(0, idx, src, "mean"),
                m.zeros(1, 2, dtype=d).scatter_add(1, i2, src.view(1, 3000)),
                m.zeros(2, 2, dtype=d).scatter_add(1, m.zeros(2, 3000, dtype=m.long), m.full((2, 3000), 1.1, dtype=d)),
                m.ones(1, dtype=d).scatter_reduce(0, idx[:30], m.full((30,), 1.01, dtype=d), "prod"),
                m.ones(1, dtype=d).scatter_reduce(0, idx[:30], m.full((30,), 1.01, dtype=d), "amax"),
                added, mult)
    same(run)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_low_precision_scatter_reduce_random_and_gradients(dt):
    r = np.random.default_rng(0)
    ix = r.integers(0, 3, (400, 5)).tolist()
    sv = (r.random((400, 5)) * 3).tolist()
    base, base2 = r.random((3, 5)).tolist(), r.random((5, 3)).tolist()

    def run(m):
        d = getattr(m, dt)
        i, s = m.tensor(ix), m.tensor(sv).to(d)
        b, b2 = m.tensor(base).to(d), m.tensor(base2).to(d)
        out = [b.scatter_add(0, i, s), b.scatter_reduce(0, i, s, "mean"),
               b2.scatter_reduce(1, i.t(), s.t(), "mean", include_self=False),
               b2.scatter_reduce(1, i.t()[:, :20], s.t()[:, :20] + 1, "prod"),
               b2.scatter_reduce(1, i.t()[:, :20], s.t()[:, :20] + 1, "prod", include_self=False),
               b2.scatter_reduce(1, i.t()[:, :20], s.t()[:, :20] + 1, "amin", include_self=False)]
        for red in ("sum", "mean", "prod", "amax"):
            x = b2.clone().requires_grad_()
            ss = (s.t()[:, :6] + 1).requires_grad_()
            y = x.scatter_reduce(1, i.t()[:, :6], ss, red)
            (y * b2).sum().backward()
            out += [y, _grads(x, ss)]
        return out
    same(run)


# ---- 1b. rot90 -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
def test_rot90_strides_as_torch(k):
    def run(m):
        a = m.arange(6).reshape(2, 3)
        x = m.arange(24.).reshape(2, 3, 4).requires_grad_()
        return (a.rot90(k, [0, 1]), a.rot90(k, [1, 0]), m.rot90(a, k), m.arange(5.).reshape(1, 5).rot90(k),
                m.zeros(0, 3).rot90(k), x.rot90(k, [0, 2]), x.rot90(k, [2, 1]), x.transpose(0, 2).rot90(k, [0, 1]),
                x[:, ::2].rot90(k, [0, 1]), a.rot90(k).is_contiguous())
    same(run)


def test_rot90_gradient():
    def run(m):
        x = m.arange(24.).reshape(2, 3, 4).requires_grad_()
        y = x.rot90(1, [0, 2])
        (y * m.arange(24.).reshape(y.shape)).sum().backward()
        return y, x.grad
    same(run)


@pytest.mark.parametrize("call", [lambda m, a: a.rot90(m.tensor(1)), lambda m, a: a.rot90(1.0),
                                  lambda m, a: m.rot90(a, 1.0), lambda m, a: m.rot90(a, k=1.0),
                                  lambda m, a: a.rot90(m.tensor([1])), lambda m, a: a.rot90(m.tensor(1.)),
                                  lambda m, a: a.rot90(True), lambda m, a: a.rot90(np.int64(3))])
def test_rot90_k_argument(call):
    same(lambda m: call(m, m.arange(6).reshape(2, 3)))


# ---- 1c. tile ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,dims", [((3,), (-1,)), ((3,), (-1, 2)), ((3,), (2, -1)), ((2, 2), (-2,)),
                                        ((2, 3), (-1, -1)), ((0,), (-1,)), ((3,), (0,)), ((2, 1), (2, 3, 1))])
def test_tile_negative_sizes(shape, dims):
    same(lambda m: m.ones(*shape).tile(dims))


# ---- 2. the legacy storage API --------------------------------------------------------------------------------------
def _storage(r):
    if isinstance(r, (torch.TypedStorage, ft.TypedStorage)):
        return ("typed", str(r.dtype), r.tolist(), r.size(), str(r.device))
    if isinstance(r, (torch.UntypedStorage, ft.UntypedStorage)):
        return ("untyped", r.tolist(), r.size(), str(r.device))
    return r


def _same_storage(fn):
    out = []
    for m in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(("ok", _storage(fn(m))))
            except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
                out.append((type(e).__name__, str(e)))
    assert out[1] == out[0], out


@pytest.mark.parametrize("dt", ["float32", "int64", "bool", "bfloat16", "complex64", "float16", "uint8", "uint16",
                                "float8_e4m3fn"])
def test_typed_storage_type_names(dt):
    _same_storage(lambda m: m.ones(2, dtype=getattr(m, dt)).storage().type())


@pytest.mark.parametrize("conv", ["float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte",
                                  "bool", "complex_float", "complex_double", "float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("typed", [True, False])
def test_storage_conversions(conv, typed):
    def run(m):
        x = m.tensor([1.5, -2.25, 3.0])
        s = x[1:].storage() if typed else x.untyped_storage()
        r = getattr(s, conv)()
        return _storage(r), r is s, x.tolist()
    _same_storage(run)


@pytest.mark.parametrize("case", [
    lambda m: m.tensor([1., 2.]).untyped_storage().type(),
    lambda m: m.tensor([1., 2., 3.]).storage().type("torch.DoubleStorage"),
    lambda m: m.tensor([1., 2., 3.]).storage().type("torch.FloatStorage"),
    lambda m: m.tensor([1., 2., 3.]).storage().type("torch.DoubleTensor"),
    lambda m: m.tensor([1., 2., 3.]).storage().type(m.float64),
    lambda m: m.tensor([1., 2., 3.]).storage().clone(),
    lambda m: m.tensor([1., 2., 3.]).untyped_storage().clone(),
    lambda m: m.tensor([1., 2., 3.]).storage().cpu(),
    lambda m: m.tensor([1., 2., 3.]).untyped_storage().cpu(),
    lambda m: (m.tensor([1.]).storage().is_shared(), m.tensor([1.]).untyped_storage().is_shared()),
    lambda m: (m.tensor([1.]).storage().is_pinned(), m.tensor([1.]).storage().is_cuda),
    lambda m: (m.tensor([1.]).storage().get_device(), m.tensor([1.]).storage().pickle_storage_type()),
    lambda m: m.ones(2, dtype=m.int8).storage().fill_(300),
    lambda m: m.ones(2, dtype=m.int32).storage().fill_(2.7),
    lambda m: m.ones(2, dtype=m.int8).untyped_storage().fill_(300),
    lambda m: m.ones(3).storage().copy_(m.tensor([1, 2, 3]).storage()),
    lambda m: m.ones(3).storage().copy_(m.tensor([1., 2.]).storage()),
    lambda m: m.ones(3).storage().copy_(m.tensor([1., 1., 1.])),
])
def test_storage_methods(case):
    _same_storage(case)


def test_storage_writes_reach_the_tensor():
    def run(m):
        a = m.tensor([1., 2., 3.])
        out = [_storage(a.storage().fill_(7)), a.tolist()]
        out += [type(a.storage().fill_(2.5)).__name__, a.tolist()]
        out += [_storage(a.untyped_storage().fill_(0)), a.tolist()]
        out += [_storage(a.storage().copy_(m.tensor([4., 5., 6.]).storage())), a.tolist()]
        out += [_storage(a.untyped_storage().copy_(m.tensor([9., 8., 7.]).untyped_storage())), a.tolist()]
        c = a.storage().clone()
        c.fill_(0)
        out += [a.tolist(), c.tolist(), a.storage().cpu().data_ptr() == a.storage().data_ptr()]
        return out
    _same_storage(run)


def test_storage_share_memory_is_refused_as_the_tensors():
    for s in (ft.ones(2).storage(), ft.ones(2).untyped_storage()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="share_memory_"):
                s.share_memory_()
            assert s.is_shared() is False


# ---- 3. messages -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["new_zeros", "new_ones", "new_empty"])
@pytest.mark.parametrize("args", [(-1,), (2, -1), ((2, -1),), (2.0,), ((2, 2.0),), ((2.0,),), ("a",), (None,), (),
                                  (2, 3), ((2, 3),), (ft.Size([2]),)])
def test_new_factories_size_messages(name, args):
    def run(m):
        a = tuple(m.Size(x) if isinstance(x, ft.Size) else x for x in args)
        r = getattr(m.ones(2), name)(*a)
        return r.shape if name == "new_empty" else r
    same(run)


@pytest.mark.parametrize("call", [lambda t: t.new_full(3, 1.), lambda t: t.new_full((-1,), 1.),
                                  lambda t: t.new_full((2.0,), 1.), lambda t: t.new_full((2,)),
                                  lambda t: t.new_full(), lambda t: t.new_full([2, 1], 4.),
                                  lambda t: t.new_full((2,), 3, dtype=ft.int64 if isinstance(t, ft.Tensor)
                                                       else torch.int64)])
def test_new_full_messages(call):
    same(lambda m: call(m.ones(2)))


@pytest.mark.parametrize("arg", [3, None, [1], "torch.DoubleTensor", "float64"])
def test_tensor_type_argument(arg):
    same(lambda m: m.ones(2).type(arg))


@pytest.mark.parametrize("call", [lambda m, i, s: m.zeros(4).scatter_reduce_(0, i, s),
                                  lambda m, i, s: m.zeros(4).scatter_reduce(0, i, s),
                                  lambda m, i, s: m.scatter_reduce(m.zeros(4), 0, i, s),
                                  lambda m, i, s: m.zeros(4).scatter_reduce_(0, i, s, "sum")])
def test_scatter_reduce_without_reduce(call):
    same(lambda m: call(m, m.tensor([0, 1]), m.tensor([1., 2.])))


@pytest.mark.parametrize("start", [lambda m: m.tensor(1.), lambda m: m.tensor(1), lambda m: m.tensor([1]),
                                   lambda m: m.tensor(True), lambda m: 1])
def test_narrow_tensor_start(start):
    same(lambda m: m.arange(24.).reshape(2, 3, 4).narrow(2, start(m), 2))


@pytest.mark.parametrize("call", [lambda m, a: a.to(m.float64, device="cpu"),
                                  lambda m, a: a.to(m.float64, device=m.device("cpu")),
                                  lambda m, a: a.to(a, dtype=m.float64),
                                  lambda m, a: a.to(m.float64, False, False, device="cpu"),
                                  lambda m, a: a.to(m.float64, dtype=m.float32),
                                  lambda m, a: a.to("cpu", dtype=m.float64),
                                  lambda m, a: a.to(dtype=m.float64, device="cpu"),
                                  lambda m, a: a.to(m.float64, True)])
def test_to_keyword_combinations(call):
    same(lambda m: call(m, m.ones(2)))


@pytest.mark.parametrize("dt,fn", [
    ("float32", lambda m: lambda v: m.tensor(3.)), ("int8", lambda m: lambda v: 300), ("int8", lambda m: lambda v: 1.5),
    ("float32", lambda m: lambda v: 1e300), ("bool", lambda m: lambda v: 2), ("uint8", lambda m: lambda v: -1),
    ("float32", lambda m: lambda v: 1j), ("int64", lambda m: lambda v: m.tensor(3)),
    ("float32", lambda m: lambda v: m.tensor([3., 4.])), ("float32", lambda m: lambda v: np.float32(2.5)),
    ("float32", lambda m: lambda v: "a"), ("int16", lambda m: lambda v: 40000), ("float64", lambda m: lambda v: v * 2),
    ("complex64", lambda m: lambda v: 2), ("int32", lambda m: lambda v: 2.9)])
def test_apply_converts_as_torch(dt, fn):
    same(lambda m: m.ones(2, dtype=getattr(m, dt)).apply_(fn(m)))


@pytest.mark.parametrize("dt,fn", [("int8", lambda m: lambda a, b: 200), ("float32", lambda m: lambda a, b: m.tensor(5.)),
                                   ("float32", lambda m: lambda a, b: a + b)])
def test_map_converts_as_torch(dt, fn):
    same(lambda m: m.ones(2, dtype=getattr(m, dt)).map_(m.ones(2, dtype=getattr(m, dt)), fn(m)))


@pytest.mark.parametrize("dt,alpha,in_place", [("float32", 2j, False), ("float32", 2j, True), ("int64", 2.5, False),
                                               ("float32", 1e40, False), ("int8", 300, False),
                                               ("float32", True, False), ("float32", 2, True)])
def test_index_add_alpha_conversion(dt, alpha, in_place):
    def run(m):
        d = getattr(m, dt)
        x = m.zeros(2, dtype=d)
        f = x.index_add_ if in_place else x.index_add
        return f(0, m.tensor([1]), m.tensor([1], dtype=d), alpha=alpha)
    same(run)
