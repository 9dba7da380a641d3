"""Meta tensors as torch has them: an op on a meta tensor that requires grad records its grad_fn, and a backward
through meta tensors gives meta gradients of the right shapes (the facade dropped the history: ``y * 2`` came back
a plain tensor, ``backward()`` raised); a compiled function may make, compute with and return meta tensors (JAX
raised "A ShapeDtypeStruct does not have a value"). ``*_like`` keeps a dense input's strides (preserve_format),
as clone does (the facade returned contiguous tensors)."""
import pytest
import torch

import functorch_lite as ft


def _desc(t):
    """What a meta tensor shows: its repr (shape, dtype, grad_fn / requires_grad), strides and device."""
    return (repr(t), tuple(t.stride()), str(t.device))


META = {
    "mul records MulBackward0": lambda L: L.empty(3, device="meta", requires_grad=True) * 2,
    "slice view": lambda L: L.empty(3, device="meta", requires_grad=True)[1:],
    "sum": lambda L: (L.empty(3, 2, device="meta", requires_grad=True) * 2).sum(),
    "in-place on a result": lambda L: (L.empty(3, device="meta", requires_grad=True) * 2).add_(1),
    "linear module": lambda L: L.nn.Linear(3, 2, device="meta")(L.empty(7, 3, device="meta")),
    "no_grad": lambda L: _no_grad(L),
    "int result": lambda L: L.empty(3, device="meta", dtype=L.int64) + 1,
    "t().contiguous()": lambda L: L.empty(2, 3, device="meta", requires_grad=True).t().contiguous(),
    "t().clone() keeps strides": lambda L: L.empty(2, 3, device="meta", requires_grad=True).t().clone(),
    "empty_strided": lambda L: L.empty_strided((3, 2), (1, 3), device="meta"),
}


def _no_grad(L):
    y = L.empty(3, device="meta", requires_grad=True)
    with L.no_grad():
        return y * 3


@pytest.mark.parametrize("name", list(META))
def test_meta_results(name):
    assert _desc(META[name](ft)) == _desc(META[name](torch))


def _backward(L):
    y = L.empty(3, device="meta", requires_grad=True)
    (y * 2).sum().backward()
    w = L.empty(4, 3, device="meta", requires_grad=True)
    for _ in range(2):  # (accumulated)
        L.nn.functional.linear(L.empty(5, 3, device="meta"), w).relu().mean().backward()
    v = L.empty(2, 3, device="meta", requires_grad=True)
    q = (v.exp() * v).sum()
    q.backward(retain_graph=True)
    q.backward()
    g, = L.autograd.grad((w * 3).sum(), w)
    return [_desc(t) for t in (y.grad, w.grad, v.grad, g)]


def test_meta_backward_gives_meta_gradients():
    assert _backward(ft) == _backward(torch)


def _compiled(L):
    x = L.empty(3, device="meta")

    def make(a):
        return L.empty(3, 4, device="meta"), a + 1

    def use(m):
        return m * 2, m, m[1:]

    f, g = L.compile(make, backend="eager"), L.compile(use, backend="eager")
    for _ in range(3):  # (first call, then the cached program)
        made, plus = f(L.ones(2))
        doubled, same, sliced = g(x)
    return [_desc(made), plus.tolist(), _desc(doubled), same is x, _desc(sliced), made is not f(L.ones(2))[0]]


def test_compiled_function_makes_and_returns_meta_tensors():
    assert _compiled(ft) == _compiled(torch)


def test_compiled_meta_programs_are_cached():
    f = ft.compile(lambda a: (ft.empty(2, 5, device="meta").t(), a * 2))
    for _ in range(3):
        m, r = f(ft.ones(2))
    assert f.stats["traces"] == 1 and f.stats["cache_hits"] == 2
    assert m.shape == (5, 2) and m.stride() == (1, 5) and m.device.type == "meta" and r.tolist() == [2.0, 2.0]


LIKE = {
    "empty_like": lambda L, x: L.empty_like(x),
    "zeros_like": lambda L, x: L.zeros_like(x),
    "ones_like": lambda L, x: L.ones_like(x),
    "full_like": lambda L, x: L.full_like(x, 3),
    "rand_like": lambda L, x: L.rand_like(x),
    "randn_like": lambda L, x: L.randn_like(x),
    "randint_like": lambda L, x: L.randint_like(x, 5),
    "zeros_like requires_grad": lambda L, x: L.zeros_like(x, requires_grad=True),
    "zeros_like contiguous_format": lambda L, x: L.zeros_like(x, memory_format=L.contiguous_format),
    "empty_like to meta": lambda L, x: L.empty_like(x, device="meta"),
}
INPUTS = {
    "transposed": lambda L: L.ones(2, 3).t(),
    "strided (not dense)": lambda L: L.ones(2, 3, 4)[:, ::2],
    "permuted, sliced": lambda L: L.ones(2, 3, 4).permute(2, 0, 1)[::2],
    "size-1 dim permuted": lambda L: L.ones(4, 1, 3, 2).permute(0, 2, 3, 1),
    "channels_last": lambda L: L.ones(3, 3, 2, 2).to(memory_format=L.channels_last),
    "contiguous": lambda L: L.ones(2, 3),
}


@pytest.mark.parametrize("inp", list(INPUTS))
@pytest.mark.parametrize("name", list(LIKE))
def test_like_keeps_strides(name, inp):
    f, t = LIKE[name](ft, INPUTS[inp](ft)), LIKE[name](torch, INPUTS[inp](torch))
    assert (tuple(f.shape), f.stride(), str(f.dtype), f.requires_grad, f.is_contiguous()) == \
        (tuple(t.shape), t.stride(), str(t.dtype), t.requires_grad, t.is_contiguous())


def test_like_values():
    x = ft.ones(2, 3).t()
    assert ft.full_like(x, 3).tolist() == [[3.0, 3.0]] * 3
    e = ft.empty_like(x)
    e.copy_(ft.arange(6.0).reshape(3, 2))
    assert e.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]] and e.stride() == (1, 3)
    z = ft.zeros_like(x, requires_grad=True)
    (z * ft.arange(6.0).reshape(3, 2)).sum().backward()
    assert z.is_leaf and z.grad.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)
    return None


READS = {"item": lambda t: t.sum().item(), "tolist": lambda t: t.tolist(), "float": lambda t: float(t[0]),
         "bool": lambda t: bool(t[0]), "int": lambda t: int(t[0]), "index": lambda t: [1, 2][t[0].long()],
         "numpy": lambda t: t.numpy()}


@pytest.mark.parametrize("name", list(READS))
def test_meta_value_reads_raise_torchs_error(name):
    """A meta tensor read as one number raises torch's RuntimeError naming item() (the facade raised the
    NotImplementedError ``tolist()`` raises)."""
    got = _error(lambda: READS[name](ft.empty(3, device="meta")))
    assert got is not None and got == _error(lambda: READS[name](torch.empty(3, device="meta")))
