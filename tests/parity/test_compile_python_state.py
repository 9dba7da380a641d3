"""A second probe of compiled plain functions against real torch (each case: torch eager, and
``functorch_lite.compile``; torch.compile gives torch eager's values in each). Before, each was silently
different, or raised where torch works:

- a host read the function's own ``try/except`` caught (``try: v = x.item() except Exception: v = -1``) traced
  the fallback: the call now runs eagerly (a graph break);
- ``register_hook`` inside (on an input: registered three times by the traces and left on the tensor; on an
  intermediate: its Python side effects lost) is a graph break, as ``retain_grad()`` is;
- a new leaf that requires grad made inside (``x.detach().requires_grad_()``, ``ones(..., requires_grad=True)``)
  came back without ``requires_grad`` / ``.grad``: a graph break;
- ``random.random()``, NumPy's global generator and ``next(it)`` were drawn once, while tracing, and baked into the
  program: the trace's draws are put back and the call runs eagerly;
- a ``set`` the function reads is a guard (``if k in seen``), one it changes a graph break;
- a ``Counter`` changed inside was replayed with ``update()`` (counting the (key, value) pairs);
- what the function did before raising (``x.add_(1); raise ValueError``) was rolled back;
- an in-place write of a value that requires grad into a plain input (``x.add_(w)``, ``x.mul_(w)``) raised at
  backward (a leaf error, or a leaked tracer): a graph break, torch's gradients;
- an attribute set on a result tensor (``y.note = 5``) was dropped;
- a new tensor with a layout of its own (``x.t().clone()``) came back contiguous (strides (2, 1), torch's (1, 3)).
"""
import collections
import random
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _eager(f):
    return f


def _both(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return case(torch, _eager), case(ft, ft.compile)


def _try_except(L, C):
    @C
    def f(x):
        try:
            v = x.sum().item()
        except Exception:
            v = -1.0
        try:
            ok = bool((x > 0).all())
        except Exception:
            ok = None
        return (x + v).tolist(), v, ok
    return [f(L.ones(2)), f(L.ones(2) * 2)]


def _hooks(L, C):
    seen = []

    @C
    def f(x):
        x.register_hook(lambda g: g * 3)
        return (x * 2).sum()

    @C
    def g(x):
        y = x * 2
        y.register_hook(lambda gr: seen.append(1) or gr * 10)
        return y.sum()
    out = []
    for _ in range(2):
        w = L.ones(2, requires_grad=True)
        f(w).backward()
        out.append(w.grad.tolist())
        (w * 1).sum().backward()  # (the hook registered by the call stays: torch's too)
        out.append(w.grad.tolist())
        v = L.ones(2, requires_grad=True)
        g(v).backward()
        out.append((v.grad.tolist(), len(seen)))
    return out


def _new_leaf(L, C):
    @C
    def f(x):
        y = x.detach().requires_grad_()
        return y, (y * 2).sum()

    @C
    def g(x):
        p = L.ones(2, requires_grad=True)
        return p, (p * x).sum()
    w = L.ones(2, requires_grad=True)
    y, z = f(w)
    z.backward()
    p, z2 = g(L.tensor([3., 4.]))
    z2.backward()
    return [y.requires_grad, y.is_leaf, y.grad.tolist(), w.grad, p.is_leaf, p.grad.tolist()]


def _python_rng(L, C):
    random.seed(0)
    np.random.seed(0)
    it = iter([1., 2., 3.])

    @C
    def f(x):
        return x + random.random() + np.random.rand()

    @C
    def g(x):
        return x * next(it)
    vals = [f(L.zeros(1)).item() for _ in range(3)]
    nxt = [g(L.ones(1)).item() for _ in range(2)]
    return [vals, nxt, list(it), random.random(), float(np.random.rand())]


def _containers(L, C):
    seen = set()
    c = collections.Counter()

    @C
    def f(x, k):
        if k in seen:
            return x * 0
        seen.add(k)
        return x

    @C
    def g(x):
        c["k"] += 1
        return x * c["k"]
    return [[f(L.ones(1), k).item() for k in (1, 1, 2, 2)], sorted(seen),
            [g(L.ones(1)).item() for _ in range(3)], dict(c)]


def _raise_after_write(L, C):
    n = [0]

    @C
    def f(x):
        x.add_(1)
        n[0] += 1
        if x.shape[0] > 2:
            raise ValueError("too big")
        return x
    a = L.zeros(3)
    with pytest.raises(ValueError, match="too big"):
        f(a)
    return [a.tolist(), n[0], a._version]


def _grad_into_plain(L, C):
    @C
    def f(x, w):
        x.add_(w)
        return x.sum()

    @C
    def g(x, w):
        x.mul_(w)
    w = L.tensor([1., 2.], requires_grad=True)
    x = L.zeros(2)
    f(x, w).backward()
    out = [w.grad.tolist(), x.requires_grad]
    w2 = L.tensor([2., 3.], requires_grad=True)
    x2 = L.ones(2)
    g(x2, w2)
    (x2 ** 2).sum().backward()
    return out + [w2.grad.tolist(), x2.requires_grad]


@pytest.mark.parametrize("case", [_try_except, _hooks, _new_leaf, _python_rng, _containers, _raise_after_write,
                                  _grad_into_plain], ids=lambda c: c.__name__.strip("_"))
def test_compiled_matches_torch(case):
    ref, got = _both(case)
    assert got == ref


def test_the_breaks_name_their_cause():
    it = iter([1., 2.])

    def f(x):
        try:
            return x + float(x.sum().item())  # (the value itself: item() alone is a traced number)
        except RuntimeError:
            return x

    def g(x):
        return x * next(it)

    def h(x):
        return x + random.random()
    for fn, cause in [(f, r"reading tensor values|a tensor's value read on the host"),
                      (g, r"advancing the iterator it \(next\(\)\)"),
                      (h, r"drawing from the random module")]:
        with pytest.raises(ft._dynamo.exc.Unsupported, match=cause):
            ft.compile(fn, fullgraph=True)(ft.ones(1))


def _result_attrs(L, C):
    @C
    def f(x):
        y = x * 2
        y.note = 5
        y.tag = ("a", 1.5)
        return y
    out = []
    for i in range(2):
        y = f(L.ones(1) * i)
        out.append((getattr(y, "note", None), getattr(y, "tag", None), y.tolist()))
    return out


def test_attributes_set_on_a_result():
    ref, got = _both(_result_attrs)
    assert got == ref


def _layouts(L, C):
    fns = [C(lambda x: x.t().clone()), C(lambda x: (x.t() * 2).contiguous()),
           C(lambda x: x.permute(1, 0).clone().add_(1))]
    x = L.arange(6.).view(2, 3)
    return [(y.stride(), y.is_contiguous(), y.tolist(), y._base is None) for fn in fns for y in (fn(x), fn(x))]


def test_a_new_tensor_keeps_its_layout():
    ref, got = _both(_layouts)
    assert got == ref


def test_an_iterator_argument_run_to_its_end():
    """``f(iter(xs))`` that consumes the iterator: the call breaks before the function runs (a trace that ran a
    list's iterator to its end could not give it back its list), so it runs eagerly with the iterator whole."""
    def f(xs):
        return sum(x * i for i, x in enumerate(xs))

    def run(L, C):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [C(f)(iter([L.ones(2), L.ones(2) * 3, L.ones(2)])).tolist() for _ in range(2)]
    assert run(ft, ft.compile) == run(torch, lambda g: g) == [[5.0, 5.0], [5.0, 5.0]]


def test_an_ops_error_after_a_write_leaves_eagers_state():
    """An op's own error while traced (a matmul's shapes, a bad reshape) runs the call eagerly: the write before it
    stays done and the error is eager's, as torch eager's."""
    def f(x, y, n):
        x.add_(1)
        return (x @ y).reshape(n, -1)

    def run(L, C):
        g = C(f)
        x = L.zeros(2, 3)
        out = []
        for y, n in ((L.ones(3, 2), 4), (L.ones(2, 2), 4), (L.ones(3, 2), 3)):
            try:
                out.append(g(x, y, n).tolist())
            except RuntimeError as e:
                out.append(str(e))
            out.append((x.tolist(), x._version))
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(ft, ft.compile) == run(torch, lambda g: g)
