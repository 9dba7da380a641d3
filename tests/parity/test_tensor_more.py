"""functorch_lite/ops/tensor_more.py, tensor_math.py and random_fill.py against real PyTorch: in-place view ops
(identity, metadata, version, grad_fn, gradients, errors), *_copy, scatter variants, index_reduce, put, renorm,
sum_to_size, ldexp/frexp/nextafter, histogram, unravel_index, gradient, Tensor.new, scalar_tensor, and the random
fills (ranges, dtypes, errors, determinism under manual_seed, moments; values cannot match PyTorch's generator).
The op-table sweeps (test_op_table_sweep.py / test_grad_sweep.py) cover the half/float8/int dtypes."""
import warnings

import numpy as np
import torch

import functorch_lite as ft

warnings.filterwarnings("ignore", message="index_reduce")
X = np.arange(12.).reshape(3, 4)
W = np.random.default_rng(0).standard_normal((4, 4))


def _run(m, f):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(m)
    except Exception as e:  # noqa: BLE001  (compared)
        return f"{type(e).__name__}: {e}"


def same(f):
    a, b = _run(torch, f), _run(ft, f)
    assert str(a).replace("torch.", "") == str(b).replace("functorch_lite.", "").replace("torch.", ""), (a, b)


def meta(x):
    return (tuple(x.shape), x.stride(), x.storage_offset(), x._version, x.grad_fn.name() if x.grad_fn else None,
            x._is_view(), (np.round(x.detach().double().numpy(), 6) + 0.0).tolist())


def desc(r):
    rs = r if isinstance(r, tuple) else (r,)
    return [(str(x.dtype).split(".")[-1], tuple(x.shape), x.grad_fn.name() if x.grad_fn is not None else None,
             (np.round(x.detach().double().numpy(), 6) + 0.0).tolist()) for x in rs]


def _grad(m, fn, *arrays):
    """fn on float64 inputs requiring grad: (outputs, input gradients of a weighted sum of the first output)."""
    xs = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
    r = fn(m, *xs)
    o = r[0] if isinstance(r, tuple) else r
    (o * m.tensor(np.resize(W, tuple(o.shape)))).sum().backward()
    return desc(r), [(np.round(x.grad.numpy(), 6) + 0.0).tolist() for x in xs]


def test_inplace_view_ops():
    def ip(op, *a, shape=(3, 4)):
        def f(m):
            leaf = m.tensor(X.reshape(shape), requires_grad=True)
            y = leaf * 2
            assert getattr(y, op)(*a) is y
            (y * m.arange(12.).reshape(y.shape)).sum().backward()
            return meta(y), leaf.grad.tolist(), y.grad_fn.next_functions[0][0].name()
        return f
    for op, a, shape in [("unsqueeze_", (1,), (3, 4)), ("unsqueeze_", (-1,), (3, 4)), ("t_", (), (3, 4)),
                         ("transpose_", (0, 1), (3, 4)), ("swapaxes_", (1, 0), (3, 4)), ("swapdims_", (0, -1), (3, 4)),
                         ("squeeze_", (), (3, 1, 4)), ("squeeze_", (1,), (3, 1, 4)), ("squeeze_", ((1,),), (3, 1, 4)),
                         ("squeeze_", ([0, 1],), (3, 1, 4))]:
        same(ip(op, *a, shape=shape))
    same(lambda m: meta(m.zeros(3).t_()))
    same(lambda m: meta(m.zeros(()).t_()))
    same(lambda m: meta(m.zeros(3, 1, 1).squeeze_([1, 2])))
    # errors: leaf, view of a leaf, multi-output view, no_grad view, bad dims
    same(lambda m: m.zeros(3, requires_grad=True).unsqueeze_(0))
    same(lambda m: m.zeros(3, 2, requires_grad=True)[0].unsqueeze_(0))
    same(lambda m: (m.zeros(4, 2, requires_grad=True) * 1).split(2)[0].t_())
    same(lambda m: m.zeros(2, 3, 4).t_())
    same(lambda m: m.zeros(3).unsqueeze_(3))
    same(lambda m: m.zeros(3, 2).transpose_(0, 2))

    def ngview(m):
        leaf = m.zeros(3, 4, requires_grad=True)
        with m.no_grad():
            v = leaf[0]
        v.unsqueeze_(0)
    same(ngview)

    def shared(m):  # the storage stays shared: views taken before see writes after
        x = m.arange(12.).reshape(3, 4) * 1
        y = x[0]
        x.t_()
        x[0, 1] = 5.
        return meta(x), y.tolist(), x.is_contiguous()
    same(shared)

    def through_view(m):  # an in-place write through a view of a tensor transposed in place (CopySlices)
        leaf = m.tensor(X, requires_grad=True)
        y = leaf * 2
        y.t_()
        y[0].mul_(3)
        v = y[1:]
        v.t_()
        v.add_(1)
        (y * m.arange(12.).reshape(4, 3)).sum().backward()
        return leaf.grad.tolist(), y.tolist(), v.grad_fn.name()
    same(through_view)


def test_copies_and_unsafe_splits():
    A = np.random.default_rng(1).standard_normal((4, 4))
    for fn in [lambda m, x: m.view_copy(x.t(), (16,)), lambda m, x: m.permute_copy(x, (1, 0)),
               lambda m, x: m.squeeze_copy(x.view(4, 1, 4)), lambda m, x: m.squeeze_copy(x.view(4, 1, 4), (1,)),
               lambda m, x: m.slice_copy(x, 1, -10, 100), lambda m, x: m.split_copy(x, 3),
               lambda m, x: m.unbind_copy(x, 1), lambda m, x: m.unsafe_chunk(x, 2, 1),
               lambda m, x: m.unsafe_split_with_sizes(x, [1, 3]), lambda m, x: m.narrow_copy(x, 0, 2, 2),
               lambda m, x: m.alias_copy(x), lambda m, x: m.view_as_real_copy(m.complex(x, x))]:
        same(lambda m: _grad(m, fn, A))
    same(lambda m: [p._is_view() for p in m.unsafe_split(m.zeros(4, 2), 2)] + [m.t_copy(m.zeros(2, 3))._is_view()])
    same(lambda m: m.view_copy(m.zeros(3, 4), torch.int32 if m is torch else ft.int32).dtype)
    same(lambda m: desc(m.detach_copy(m.ones(3, requires_grad=True) * 1)))
    same(lambda m: (m.detach_copy(m.ones(3, requires_grad=True) * 1)).sum().backward())
    same(lambda m: m.view_as_complex_copy(m.zeros(3, 2, requires_grad=True)))
    same(lambda m: m.t_copy(m.zeros(2, 3, 4)))
    same(lambda m: m.narrow_copy(m.zeros(4, 3), 0, 3, 2))
    same(lambda m: desc(m.narrow_copy(m.arange(12.).view(4, 3), 0, -3, 2)))  # (PyTorch's backward of this fails)
    same(lambda m: m.slice_copy(m.zeros(4), 0, 0, 4, -1))


def test_scatters_put_index_reduce():
    A, S2, S4 = np.random.default_rng(2).standard_normal((3, 4, 4))[:, :, :]
    for fn, arrs in [(lambda m, x, s: m.slice_scatter(x, s[:2], 0, 0, 4, 2), (A, S2)),
                     (lambda m, x, s: m.select_scatter(x, s[0], 1, -1), (A, S4)),
                     (lambda m, x, s: m.diagonal_scatter(x, s[0, :3], -1, 1, 0), (A, S4)),
                     (lambda m, x, s: x.index_reduce(1, m.tensor([0, 2, 0, 3]), s, "prod"), (A, S2)),
                     (lambda m, x, s: x.index_reduce(0, m.tensor([1, 1, 1, 0]), s, "mean", include_self=False),
                      (A, S2)),
                     (lambda m, x, s: x.index_reduce(0, m.tensor([3, 2, 3, 3]), s, "amin"), (A, S2)),
                     (lambda m, x, s: m.put(x, m.tensor([0, 5, -1]), s[0, :3], accumulate=True), (A, S2))]:
        same(lambda m: _grad(m, fn, *arrs))
    # ties share the gradient, products with zeros, integer means (floor), in place
    same(lambda m: _grad(m, lambda m, x, s: x.index_reduce(0, m.tensor([0, 0]), s, "amax"),
                         np.array([[1., 0.], [2., 2.]]), np.array([[1., 3.], [0., 3.]])))
    same(lambda m: _grad(m, lambda m, x, s: x.index_reduce(0, m.tensor([0, 0]), s, "prod"),
                         np.array([[1., 0.], [2., 2.]]), np.array([[0., 3.], [2., 0.]])))
    same(lambda m: m.tensor([[-4, 5], [6, 7]]).index_reduce(0, m.tensor([0, 0]), m.tensor([[-1, 2], [3, 3]]),
                                                             "mean").tolist())
    same(lambda m: meta(m.zeros(3, 4).put_(m.tensor([1, 2]), m.ones(2))))
    same(lambda m: meta(m.zeros(3, 2).index_reduce_(0, m.tensor([2]), m.ones(1, 2) * 3, "amax")))
    same(lambda m: meta(m.index_put_(m.zeros(3, 2), (m.tensor([2, 0]),), m.ones(2, 2))))
    for f in [lambda m: m.slice_scatter(m.zeros(4, 4), m.zeros(3, 4), 0, 0, 4, 2),
              lambda m: m.select_scatter(m.zeros(4, 4), m.zeros(4), 0, 4),
              lambda m: m.diagonal_scatter(m.zeros(4, 4), m.zeros(4), 1),
              lambda m: m.zeros(4, 3).index_reduce(0, m.tensor([0, 2, 0]), m.zeros(3, 3), "sum"),
              lambda m: m.zeros(4, 3).index_reduce(0, m.tensor([0., 2, 0]), m.zeros(3, 3), "prod"),
              lambda m: m.zeros(4, 3).index_reduce(0, m.tensor([0, 5, 0]), m.zeros(3, 3), "prod"),
              lambda m: m.zeros(4, 3).index_reduce(0, m.tensor([0, 2]), m.zeros(3, 3), "prod"),
              lambda m: m.zeros(2, dtype=m.bool).index_reduce(0, m.tensor([0]), m.zeros(1, dtype=m.bool), "amax"),
              lambda m: m.put(m.zeros(3, 4), m.tensor([0, 12]), m.zeros(2)),
              lambda m: m.put(m.zeros(3, 4), m.tensor([0, -13]), m.zeros(2)),
              lambda m: m.put(m.zeros(3, 4), m.tensor([0, 1]), m.zeros(3)),
              lambda m: m.put(m.zeros(3, 4), m.tensor([0, 1], dtype=m.int32), m.zeros(2)),
              lambda m: m.put(m.zeros(3, 4), m.tensor([0, 1]), m.zeros(2, dtype=m.float64))]:
        same(f)


def test_math_ops():
    A = np.random.default_rng(3).standard_normal((4, 4)) * 2
    for fn in [lambda m, x: m.renorm(x, 2, 0, 1.0), lambda m, x: m.renorm(x, float("inf"), 1, 0.5),
               lambda m, x: x.sum_to_size(1, 4), lambda m, x: x.sum_to_size(4),
               lambda m, x: m.ldexp(x, m.tensor([1, 0, 3, 2])), lambda m, x: m.frexp(x),
               lambda m, x: m.nextafter(x, x.t().detach()), lambda m, x: m.fix(x)]:
        same(lambda m: _grad(m, fn, A))
    same(lambda m: desc(m.renorm(m.tensor([[3., 4.], [0.1, 0.1]], dtype=m.float16), 2, 0, 1.0)))
    same(lambda m: meta(m.tensor([[3., 4.], [0., 0.]]).renorm_(2, 0, 1.0)))
    same(lambda m: desc(m.frexp(m.tensor([0., -0., float("inf"), 1e-310, -3.5, 5e-324], dtype=m.float64))))
    same(lambda m: desc(m.frexp(m.tensor([1e-40, 3., 1e-45]))) + desc(m.frexp(m.tensor([6e-8, 3.], dtype=m.float16))))
    same(lambda m: (type(m.frexp(m.ones(1))).__name__, m.frexp(m.ones(1)).exponent.dtype))
    same(lambda m: desc(m.ldexp(m.tensor([True]), m.tensor([True]))) + desc(m.ldexp(m.tensor([1.]), m.tensor([-2]))))
    same(lambda m: desc(m.nextafter(m.tensor([1., 2], dtype=m.bfloat16), m.tensor([3., 2], dtype=m.bfloat16))))
    same(lambda m: meta(m.tensor([1., 2]).nextafter_(m.tensor([0., 3.]))) + meta(m.tensor([1.5]).ldexp_(m.tensor([2]))))
    same(lambda m: (desc(m.isreal(m.tensor([1 + 0j, 2 + 1j]))), desc(m.isreal(m.tensor([1, 2]))), desc(m.fix(m.tensor([2])))))
    same(lambda m: desc(m.ones(3, 4, dtype=m.int32).sum_to_size(1, 4)) + [m.ones(2).sum_to_size(2) is not None])
    for f in [lambda m: m.renorm(m.zeros(3, 4), 0, 0, 1.0), lambda m: m.renorm(m.zeros(3, 4), 2, 0, -1.0),
              lambda m: m.renorm(m.zeros(3), 2, 0, 1.0), lambda m: m.renorm(m.ones(3, 4, dtype=m.int64), 2, 0, 1.0),
              lambda m: m.zeros(2, 3, 4).sum_to_size(2, 4), lambda m: m.zeros(3, 4).sum_to_size(1, 3, 4),
              lambda m: m.ldexp(m.zeros(2), 3), lambda m: m.tensor([1, 2]).ldexp_(m.tensor([1, 2])),
              lambda m: m.frexp(m.tensor([1, 2])), lambda m: m.nextafter(m.tensor([1, 2]), m.tensor([1, 2])),
              lambda m: m.nextafter(m.zeros(2), 3.0)]:
        same(f)


def test_histogram_unravel_gradient_constructors():
    A = np.random.default_rng(4).standard_normal((4, 5))
    v = np.random.default_rng(5).standard_normal(30)
    same(lambda m: desc(m.histogram(m.tensor(v), 5)))
    same(lambda m: desc(m.histogram(m.tensor(v, dtype=m.float64), m.tensor([-1., 0., 2.], dtype=m.float64),
                                    weight=m.tensor(np.abs(v), dtype=m.float64), density=True)))
    same(lambda m: desc(m.histogram(m.tensor(v), 4, range=(0., 1.))) + desc(m.histogram(m.tensor([2., 2.]), 2)))
    same(lambda m: type(m.histogram(m.tensor(v), 2)).__name__)
    same(lambda m: m.histogram(m.tensor([1, 2]), 3))
    same(lambda m: m.histogram(m.tensor([1., 2]), 0))
    same(lambda m: m.histogram(m.tensor([1., 2]), 3, range=(2., 1.)))
    same(lambda m: desc(m.unravel_index(m.tensor([5, 7, -1, 12]), (3, 4))) + desc(m.unravel_index(m.tensor(5), 4)))
    same(lambda m: m.unravel_index(m.tensor([1.]), (3, 4)))
    same(lambda m: m.unravel_index(m.tensor([1]), (3, -4)))
    coords = np.array([0., 1., 3., 4., 7.])
    for kw in [{}, {"spacing": 2., "dim": 1, "edge_order": 2}, {"spacing": [2., 3.]}, {"dim": (1,), "edge_order": 2}]:
        same(lambda m: _grad(m, lambda m, x: m.gradient(x, **kw), A))
    for eo in (1, 2):
        same(lambda m: _grad(m, lambda m, x: m.gradient(x, spacing=(m.tensor(coords, dtype=m.float64),), dim=1,
                                                        edge_order=eo), A))
    same(lambda m: desc(m.gradient(m.tensor([1, 2, 4, 8]))) + [m.gradient(m.tensor(1.))])
    for kw in [{"edge_order": 3}, {"dim": 0, "edge_order": 2}, {"spacing": [1., 2., 3.]}, {"dim": (0, 0)}]:
        same(lambda m: m.gradient(m.zeros(2, 4), **kw))
    same(lambda m: desc(m.scalar_tensor(3)) + desc(m.scalar_tensor(True)) + desc(m.scalar_tensor(2, dtype=m.int64)))
    same(lambda m: desc(m.tensor([1.], dtype=m.float64).new([3, 4])) + desc(m.tensor([1.]).new((2, 3)))
         + [tuple(m.tensor([1.]).new(2, 3).shape), tuple(m.tensor([1]).new(m.Size([2])).shape)] + desc(m.ones(1).new()))
    same(lambda m: m.tensor([1.], dtype=m.float64).new(m.tensor([1, 2])))
    same(lambda m: m.tensor([1.]).new(2.5))
    same(lambda m: (meta(m.zero_(m.ones(2) * 1)), m.detach(m.ones(2, requires_grad=True) * 1).requires_grad,
                    m.detach_(m.ones(2, requires_grad=True) * 1).requires_grad))
    same(lambda m: m.detach_(m.ones(3, 4, requires_grad=True)[0] * 1))


def test_random_fills():
    def ranges(m):
        out = []
        for dt in ["float32", "float16", "int64", "uint8", "bool"]:
            for args in [(), (10,), (-3, None), (2, 5)]:
                x = m.empty(2000, dtype=getattr(m, dt))
                r = _run(m, lambda m: x.random_(*args))
                if isinstance(r, str):
                    out.append(r)
                    continue
                v = x.double() if dt != "bool" else x.long().double()
                top = {"float32": 2 ** 24, "float16": 2048, "int64": 2 ** 63 - 1, "int8": 127, "uint8": 255, "bool": 1}[dt]
                lo, hi = {(): (0, top), (10,): (0, 9), (-3, None): (-3, top), (2, 5): (2, 4)}[args]
                out.append((r is x, x._version, str(x.dtype).split(".")[-1], v.min().item() >= lo, v.max().item() <= hi,
                            args != (2, 5) or v.min().item() == lo))
        return out
    same(ranges)
    same(lambda m: [_run(m, lambda m: getattr(m.empty(50, dtype=getattr(m, dt)), nm)(*a).dtype)
                    for dt in ("bfloat16", "int32", "bool", "complex64")
                    for nm, a in (("exponential_", ()), ("geometric_", (0.3,)), ("cauchy_", ()), ("log_normal_", ()),
                                  ("random_", ()), ("random_", (1, 4)))])
    for s in ["m.empty(5).random_(5, 3)", "m.empty(5, dtype=m.uint8).random_(0, 300)", "m.empty(5).random_(1.5)",
              "m.empty(5, dtype=m.float16).random_(0, 2**20)", "m.empty(5).random_(to=4).max().item() < 4",
              "m.empty(5).random_(1, to=4).min().item() >= 1", "m.empty(5).exponential_(0)", "m.empty(5).geometric_(1)",
              "m.empty(5).cauchy_(0, -1)", "m.empty(5).log_normal_(1, 0)", "m.empty(5).exponential_(float('inf')).sum()",
              "m.poisson(m.tensor([1, 2]))", "m.poisson(m.tensor([-1., 2]))",
              "m.binomial(m.tensor([1, 2]), m.tensor([1., 1.]))", "m.binomial(m.tensor([[1., 2]]), m.tensor([1.]))",
              "m.binomial(m.tensor([1., 2], dtype=m.float16), m.tensor([1., 1.], dtype=m.float16))",
              "(lambda y: [y.random_().grad_fn.name(), y.random_(4).grad_fn.name(), y.random_(1, 4).grad_fn.name(), "
              "y.exponential_().grad_fn.name(), y.cauchy_().grad_fn.name(), y.geometric_(.5).grad_fn.name(), "
              "y.log_normal_().grad_fn.name()])(m.zeros(3, requires_grad=True) * 1)",
              "m.ones(3, requires_grad=True).exponential_()",
              "(lambda l: ((l * 2).exponential_().sum().backward(), l.grad.tolist()))(m.ones(3, requires_grad=True))",
              "(lambda l: (m.poisson(l * 0).sum().backward(), l.grad.tolist()))(m.ones(3, requires_grad=True))",
              "m.binomial(m.ones(2, requires_grad=True), m.ones(2)).sum().backward()"]:
        same(lambda m, s=s: eval(s))
    # determinism under manual_seed and with a seeded Generator (values differ from PyTorch's: another generator)
    for nm, a in [("random_", ()), ("exponential_", ()), ("cauchy_", ()), ("geometric_", (.2,)), ("log_normal_", ())]:
        ft.manual_seed(3)
        x = getattr(ft.empty(50), nm)(*a)
        ft.manual_seed(3)
        y = getattr(ft.empty(50), nm)(*a)
        z = getattr(ft.empty(50), nm)(*a)
        w = getattr(ft.empty(50), nm)(*a, generator=ft.Generator().manual_seed(3))
        assert bool((x == y).all()) and not bool((x == z).all()) and bool((x == w).all()), nm
    ft.manual_seed(0)
    n = 50000
    x = ft.empty(n, dtype=ft.float64).exponential_(2.0)
    assert abs(x.mean().item() - 0.5) < 0.01 and abs(x.var().item() - 0.25) < 0.01
    x = ft.empty(n, dtype=ft.float64).geometric_(0.25)
    assert abs(x.mean().item() - 4) < 0.06 and abs(x.var().item() - 12) < 0.5 and x.min().item() == 1
    x = ft.empty(n, dtype=ft.float64).log_normal_(0.5, 0.5).log()
    assert abs(x.mean().item() - 0.5) < 0.01 and abs(x.std().item() - 0.5) < 0.01
    x = ft.empty(n, dtype=ft.float64).cauchy_(1.0, 2.0)
    assert abs(x.median().item() - 1) < 0.05 and abs((x - 1).abs().median().item() - 2) < 0.06
    x = ft.empty(n, dtype=ft.float64).random_(0, 10)
    assert abs(x.mean().item() - 4.5) < 0.05 and abs(x.var().item() - 8.25) < 0.15
    x = ft.poisson(ft.full((n,), 3.0))
    assert abs(x.mean().item() - 3) < 0.03 and abs(x.var().item() - 3) < 0.06
    x = ft.binomial(ft.full((n,), 10.0), ft.full((n,), 0.3))
    assert abs(x.mean().item() - 3) < 0.03 and abs(x.var().item() - 2.1) < 0.05
