"""Leftover fixes (random_ bounds, random fills' graph nodes, Python ints past 64 bits as scalar arguments,
gather/scatter kernels' dtype refusals): each against real torch 2.13."""
import pytest
import torch

import functorch_lite as ft
from _parity import same_rounded, warnings_of

_RANDOM_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
                  "bfloat16", "float32", "float64", "complex64", "float8_e4m3fn", "float8_e5m2"]
_RANDOM_ARGS = [(), (5,), (0, 5), (-1, 5), (-200, 5), (0, 300), (0, 2 ** 16), (0, 2 ** 40), (-2 ** 63, 0), (5, 5),
                (6, 5), (2 ** 20, 2 ** 20 + 10), (0, 2 ** 63 - 1), (2050, 2060), (0, 2 ** 30), (3, None), (-5, None),
                (-2 ** 63, None), (2 ** 30, None), (2049, None), (2048, None), (2047, None), (70000, None),
                (300, None), (256, None), (2 ** 62, None), (-2 ** 62, None), (2 ** 63, None), (2 ** 64,)]


def _random_outcome(t, dt, args):
    x = t.zeros(4, dtype=getattr(t, dt))
    try:
        x.random_(*args)
        out = "ok"
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        out = (type(e).__name__, str(e))
    return out


@pytest.mark.parametrize("dt", _RANDOM_DTYPES)
def test_random_bounds_errors_and_warnings(dt):
    """random_() / random_(to) / random_(from, to) / random_(from, None) check their bounds in torch's order with
    its messages (creation.random_bounds), warn past 2**digits for a floating dtype, and name torch's kernels."""
    for args in _RANDOM_ARGS:
        got = []
        for lib in (torch, ft):
            out = []
            got.append((warnings_of(lib, lambda t: out.append(_random_outcome(t, dt, args))), out))
        assert got[1] == got[0], (args, got)


@pytest.mark.parametrize("dt", ["int64", "float32", "bfloat16", "float64", "int8", "float16", "bool"])
def test_random_ranges(dt):
    """The drawn values stay in torch's ranges: random_() up to the dtype's top, (from, None) from ``from``, the
    full int64 range from int64's minimum."""
    ft.manual_seed(0)
    d = getattr(ft, dt)
    x = ft.zeros(4000, dtype=d).random_()
    top = {"float16": 2 ** 11, "bfloat16": 2 ** 8, "float32": 2 ** 24, "float64": 2 ** 53, "bool": 1}.get(dt)
    top = top if top is not None else torch.iinfo(getattr(torch, dt)).max
    assert x.double().min().item() >= 0 and x.double().max().item() <= top
    assert x.double().max().item() > 0.5 * top
    y = ft.zeros(4000, dtype=d).random_(1, None)
    assert y.double().min().item() >= 1
    if dt in ("int64", "float32", "float64", "bfloat16"):
        z = ft.zeros(4000, dtype=d).random_(-2 ** 63, None).double()
        assert (z < -1e17).any().item() and (z > 1e17).any().item()


def _fill_graph(t, name, args, view):
    a = t.ones(3, requires_grad=True)
    y = a * 2
    target = y[:2] if view else y
    getattr(target, name)(*args)
    nodes = [y.grad_fn, target.grad_fn]
    y.sum().backward()
    return ([type(n).__name__ for n in nodes], [[(type(f).__name__ if f is not None else None, i)
                                                for f, i in n.next_functions] for n in nodes if not view],
            y.requires_grad, y._version, a.grad)


@pytest.mark.parametrize("name,args", [("exponential_", ()), ("random_", ()), ("random_", (5,)), ("random_", (1, 5)),
                                       ("random_", (1, None)), ("geometric_", (0.3,)), ("cauchy_", ()),
                                       ("log_normal_", ())])
def test_random_fill_node_inputs(name, args):
    """A random fill of a non-leaf records torch's node (ExponentialBackward0, RandomBackward0/1/2...) with
    ``self``'s edge only (no extra None input), and a zero gradient."""
    same_rounded(lambda t: _fill_graph(t, name, args, False), torch, ft)
    same_rounded(lambda t: _fill_graph(t, name, args, True)[0], torch, ft)


_BIG = [2 ** 64, 2 ** 70, -2 ** 64, -2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1]
_BIG_OPS = {
    "add": lambda t, v: t.ones(2).add(v),
    "add_int": lambda t, v: t.ones(2, dtype=t.int64).add(v),
    "radd": lambda t, v: v + t.ones(2, dtype=t.int64),
    "fill_": lambda t, v: t.ones(2).fill_(v),
    "fill_int": lambda t, v: t.ones(2, dtype=t.int64).fill_(v),
    "scatter": lambda t, v: t.ones(2).scatter(0, t.tensor([0, 1]), v),
    "scatter_int": lambda t, v: t.ones(2, dtype=t.int64).scatter_(0, t.tensor([0, 1]), v),
    "clamp_min": lambda t, v: t.ones(2).clamp(min=v),
    "eq": lambda t, v: t.ones(2, dtype=t.int64) == v,
    "pow": lambda t, v: t.ones(2).pow(v),
    "where": lambda t, v: t.where(t.ones(2) > 0, t.ones(2), v),
    "masked_fill": lambda t, v: t.ones(2).masked_fill(t.ones(2) > 0, v),
    "index_fill": lambda t, v: t.ones(2).index_fill(0, t.tensor([0, 1]), v),
    "remainder": lambda t, v: t.ones(2, dtype=t.int64) % v,
    "bitwise_and": lambda t, v: t.ones(2, dtype=t.int64) & v,
}


@pytest.mark.parametrize("op", sorted(_BIG_OPS))
def test_big_python_int_scalar(op):
    """A Python int outside [-2**63, 2**64) as a scalar argument: torch's OverflowError ("int too big to convert",
    "can't convert negative int to unsigned" below int64's minimum); within it, torch's uint64 value."""
    for v in _BIG:
        same_rounded(lambda t: _BIG_OPS[op](t, v), torch, ft)


_GS_DTYPES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "bool", "complex64", "int8"]


def _gs_cases(t, d):
    x = t.zeros(2, 2).to(d)
    s = t.ones(2, 2).to(d)
    x1, s1 = t.zeros(3).to(d), t.ones(3).to(d)
    idx, i1 = t.tensor([[0, 1]]), t.tensor([0, 1])
    e = i1[:0]
    return {
        "scatter_src": lambda: x.scatter(0, idx, s), "scatter_val": lambda: x.scatter(0, idx, 1),
        "scatter_": lambda: x.clone().scatter_(0, idx, s), "scatter_val_": lambda: x.clone().scatter_(0, idx, 1),
        "scatter_add": lambda: x.scatter_add(0, idx, s), "scatter_add_": lambda: x.clone().scatter_add_(0, idx, s),
        "sr_sum": lambda: x.scatter_reduce(0, idx, s, "sum"), "sr_amax": lambda: x.scatter_reduce(0, idx, s, "amax"),
        "sr_amin": lambda: x1.scatter_reduce(0, i1, s1, "amin"), "sr_mean": lambda: x.scatter_reduce(0, idx, s, "mean"),
        "sr_prod": lambda: x.scatter_reduce(0, idx, s, "prod"), "sr_": lambda: x.clone().scatter_reduce_(0, idx, s, "sum"),
        "sr_amax_noself": lambda: x1.scatter_reduce(0, i1, s1, "amax", include_self=False),
        "sr_mean_noself": lambda: x1.scatter_reduce(0, i1, s1, "mean", include_self=False),
        "sr_sum_noself": lambda: x1.scatter_reduce(0, i1, s1, "sum", include_self=False),
        "sr_mean_empty": lambda: x1.scatter_reduce(0, e, s1, "mean"),
        "sr_prod_empty": lambda: x1.scatter_reduce(0, e, s1, "prod"),
        "scatter_add_v": lambda: x1.scatter(0, i1, 1, reduce="add"),
        "scatter_mul_v": lambda: x.scatter(0, idx, 2, reduce="multiply"),
        "gather": lambda: x.gather(0, idx), "gather_1d": lambda: x1.gather(0, i1),
        "gather_out": lambda: t.gather(x, 0, idx, out=t.empty(1, 2).to(d)),
        "gather_empty": lambda: x.gather(0, idx[:, :0]), "scatter_empty": lambda: x.scatter(0, idx[:, :0], s),
        "index_select": lambda: x.index_select(1, i1),
        "take_along_dim": lambda: t.take_along_dim(x, idx, 0), "take_along_none": lambda: t.take_along_dim(x, i1),
        "take_along_empty": lambda: t.take_along_dim(x, e), "take": lambda: t.take(x, i1),
        "take_empty": lambda: t.take(x, e),
        "index_add": lambda: x.index_add(0, i1, s), "index_add_1d": lambda: x1.index_add(0, i1, s1[:2]),
        "index_add_3d": lambda: t.zeros(2, 3, 2).to(d).index_add(1, i1, t.ones(2, 2, 2).to(d)),
        "index_add_empty": lambda: x.index_add(0, e, s[:0]),
        "index_add_alpha": lambda: x.index_add(1, i1, s, alpha=2.0),
        "index_copy": lambda: x.index_copy(0, i1, s), "index_fill": lambda: x.index_fill(0, i1, 1),
        "index_fill_empty": lambda: x.index_fill(0, e, 1),
    }


@pytest.mark.parametrize("dt", _GS_DTYPES)
def test_gather_scatter_kernel_refusals(dt):
    """torch's CPU gather/scatter/take/index_* kernels have no uint16/uint32/uint64 nor float8 case (nor complex
    amax/amin, bool mean): each refusal names torch's kernel; an empty index runs no kernel."""
    names = sorted(_gs_cases(torch, torch.float32))
    for name in names:
        same_rounded(lambda t: str(_gs_cases(t, getattr(t, dt))[name]().dtype), torch, ft)
