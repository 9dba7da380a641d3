"""Interpretability red-team findings, against real PyTorch 2.13: the edges (``next_functions``) and the
grad_input / grad_output tuples node hooks and the deprecated module backward hook see (torch's length, None
entries, values, replacements reaching the right inputs), ``is_grads_batched`` freeing the graph, the warning for a
full backward hook on a module returning a dict or list, and the missing names (``torch.utils.hooks.BackwardHook``,
``torch.autograd.NestedIOFunction`` / ``is_multithreading_enabled`` / ``is_view_replay_enabled`` /
``is_tensor_like``, ``torch.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch``)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import rounded, same_rounded


def same(fn):
    return same_rounded(fn, torch, ft)


def _numeric(a):
    try:
        return np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _close(a, b):
    """Equal structure; a tensor's values within float32 rounding of its largest one (cancellations)."""
    x = _numeric(a) if isinstance(a, list) and not any(v is None or isinstance(v, bool) for v in a) else None
    if x is not None and x.dtype != object:
        y = _numeric(b)
        return y is not None and y.shape == x.shape and np.allclose(x, y, rtol=1e-4,
                                                                   atol=1e-5 * max(1.0, np.abs(x).max(initial=0)))
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


def close(fn):
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same structure and values within float32 rounding."""
    t, f = rounded(fn(torch)), rounded(fn(ft))
    assert _close(t, f), (t, f)


def _data(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype("float32")


def _leaf(L, *shape, seed=0):
    return L.tensor(_data(*shape, seed=seed), requires_grad=True)


def _shapes(gs):
    return [None if g is None else list(g.shape) for g in gs]


def _edge_names(node):
    return [(type(n).__name__ if n is not None else None, i) for n, i in node.next_functions]


# op -> lib -> (output, leaves); each leaf a fresh tensor
def _cases():
    def conv(L):
        x, w = _leaf(L, 1, 3, 5, 5), _leaf(L, 2, 3, 3, 3, seed=1)
        return L.nn.functional.conv2d(x, w), [x, w]

    def bn(L, training, affine):
        x = _leaf(L, 2, 3, 4, 4)
        g, b = (_leaf(L, 3, seed=1), _leaf(L, 3, seed=2)) if affine else (None, None)
        o = L.nn.functional.batch_norm(x, L.zeros(3), L.ones(3), g, b, training=training)
        return o, [x] + ([g, b] if affine else [])

    def norm(L, fn, affine):
        x = _leaf(L, 2, 3, 4, 4)
        g, b = (_leaf(L, 3, seed=1), _leaf(L, 3, seed=2)) if affine else (None, None)
        F = L.nn.functional
        o = F.layer_norm(x, (4,), g, b) if fn == "ln" else F.group_norm(x, 1, g, b)
        return o, [x] + ([g, b] if affine else [])

    def unary(f):
        def case(L):
            a = _leaf(L, 3)
            return f(L, a), [a]
        return case

    def emb(L):
        w = _leaf(L, 4, 3)
        return L.nn.functional.embedding(L.tensor([1, 2, 1]), w), [w]

    return {
        "conv_nobias": conv,
        "conv1d": lambda L: ((lambda x, w: (L.nn.functional.conv1d(x, w), [x, w]))(_leaf(L, 1, 3, 5), _leaf(L, 2, 3, 3))),
        "conv_transpose": lambda L: ((lambda x, w: (L.nn.functional.conv_transpose2d(x, w), [x, w]))(
            _leaf(L, 1, 3, 4, 4), _leaf(L, 3, 2, 3, 3))),
        "bn_eval": lambda L: bn(L, False, True),
        "bn_eval_noaffine": lambda L: bn(L, False, False),
        "bn_train": lambda L: bn(L, True, True),
        "bn_train_noaffine": lambda L: bn(L, True, False),
        "layer_norm": lambda L: norm(L, "ln", False),
        "layer_norm_weight": lambda L: ((lambda x, g: (L.nn.functional.layer_norm(x, (4,), g), [x, g]))(
            _leaf(L, 2, 3, 4, 4), _leaf(L, 4, seed=1))),
        "group_norm": lambda L: norm(L, "gn", False),
        "group_norm_affine": lambda L: norm(L, "gn", True),
        "embedding": emb,
        "dropout_eval": unary(lambda L, a: L.nn.functional.dropout(a * 1, 0.5, training=False)),
        "a*2": unary(lambda L, a: a * 2), "2*a": unary(lambda L, a: 2 * a), "a+2": unary(lambda L, a: a + 2),
        "a-1": unary(lambda L, a: a - 1), "a/2": unary(lambda L, a: a / 2),
        "where": unary(lambda L, a: L.where(a > 0, a, L.zeros(3))),
        "where_scalar": unary(lambda L, a: L.where(a > 0, a, 0.)),
        "clamp_tensor": unary(lambda L, a: a.clamp(min=L.zeros(3))),
        "masked_fill": unary(lambda L, a: a.masked_fill(a > 1, 0.)),
        "masked_fill_tensor": unary(lambda L, a: a.masked_fill(a > 1, L.tensor(1.))),
        "index_select": unary(lambda L, a: a.index_select(0, L.tensor([0, 2]))),
        "gather": unary(lambda L, a: a.gather(0, L.tensor([0, 2]))),
        "index": unary(lambda L, a: a[L.tensor([0, 2])]),
        "nll_loss": lambda L: ((lambda x: (L.nn.functional.nll_loss(x, L.tensor([1, 0])), [x]))(_leaf(L, 2, 3))),
        "scatter": lambda L: ((lambda a, s: (a.scatter(0, L.tensor([1]), s), [a, s]))(_leaf(L, 3), _leaf(L, 1, seed=3))),
        "sort": unary(lambda L, a: a.sort()[0]),
        "max_dim": unary(lambda L, a: a.max(0)[0]),
        "embedding_bag": lambda L: ((lambda w: (L.nn.functional.embedding_bag(
            L.tensor([1, 2, 3]), w, L.tensor([0, 1])), [w]))(_leaf(L, 4, 3))),
    }


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_edges_and_hook_tuples(name):
    """next_functions, and the (grad_input, grad_output) shapes register_hook / register_prehook see."""
    def fn(L):
        o, _ = CASES[name](L)
        seen = []
        o.grad_fn.register_hook(lambda gi, go: seen.append(("post", _shapes(gi), _shapes(go))))
        o.grad_fn.register_prehook(lambda go: seen.append(("pre", _shapes(go))))
        edges = _edge_names(o.grad_fn)
        (o * (L.arange(o.numel()).reshape(o.shape).float() + 1)).sum().backward()
        return edges, seen
    same(fn)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hook_replacing_grad_inputs(name):
    """A hook returning torch's tuple, each gradient scaled by a number made of its position and the tuples'
    lengths: the leaves get the new values."""
    def fn(L):
        o, leaves = CASES[name](L)
        o.grad_fn.register_hook(lambda gi, go: tuple(None if g is None else g * (10 * len(gi) + 3 * len(go) + k)
                                                     for k, g in enumerate(gi)))
        (o * (L.arange(o.numel()).reshape(o.shape).float() + 1)).sum().backward()
        return [lf.grad for lf in leaves]
    close(fn)


@pytest.mark.parametrize("name", ["bn_eval", "group_norm_affine", "sort", "a*2"])
def test_prehook_replacing_grad_outputs_and_node_call(name):
    def fn(L):
        o, leaves = CASES[name](L)
        o.grad_fn.register_prehook(lambda go: tuple(None if g is None else g * 3 for g in go))
        (o * (L.arange(o.numel()).reshape(o.shape).float() + 1)).sum().backward()
        o2, _ = CASES[name](L)
        n = {"group_norm_affine": 3}.get(name, 1)
        r = o2.grad_fn(*([L.ones(o2.shape)] + [None] * (n - 1)))
        return [lf.grad for lf in leaves], list(r) if isinstance(r, tuple) else [r]
    close(fn)


def test_module_backward_hook_legacy_tuples():
    """The note's repros: hooks indexing / returning torch's tuple on Conv2d(bias=False), BatchNorm2d, Embedding."""
    def fn(L):
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            L.manual_seed(0)
            conv = L.nn.Conv2d(3, 2, 1, bias=False)
            conv.weight.data.copy_(L.tensor(_data(2, 3, 1, 1)))
            conv.register_backward_hook(lambda m, gi, go: (gi[0] * 0, gi[1], gi[2]))
            x = L.tensor(_data(1, 3, 2, 2), requires_grad=True)
            conv(x).sum().backward()
            out += [x.grad, conv.weight.grad]
            for train in (False, True):
                bn = L.nn.BatchNorm2d(3).train(train)
                bn.register_backward_hook(lambda m, gi, go: (gi[0] * 2, gi[1], gi[2] * 3))
                x = L.tensor(_data(2, 3, 2, 2), requires_grad=True)
                (bn(x) * L.arange(24.).reshape(2, 3, 2, 2)).sum().backward()
                out += [x.grad, bn.weight.grad, bn.bias.grad]
            emb = L.nn.Embedding(4, 2)
            emb.register_backward_hook(lambda m, gi, go: (gi[0] * 5,))
            emb(L.tensor([1])).sum().backward()
            out.append(emb.weight.grad)
        return out
    close(fn)


def test_next_functions_python_number_operands():
    def fn(L):
        a = L.tensor([1., 2., 3.], requires_grad=True)
        b = L.tensor([1., 2., 3.])
        return [_edge_names(f().grad_fn) for f in (lambda: a * 2, lambda: a + 2, lambda: 2 * a, lambda: a - 1,
                                                    lambda: a / 2, lambda: a.true_divide(2), lambda: a.sub(2, alpha=3),
                                                    lambda: L.where(b > 1, a, b), lambda: L.where(b > 1, 0., a))]
    same(fn)


@pytest.mark.parametrize("kw", [{}, {"retain_graph": False, "create_graph": True}])
def test_grads_batched_frees_the_graph(kw):
    def fn(L):
        z = L.tensor([1., 2., 3.], requires_grad=True)
        y = (z.exp() * 2).sin()
        r = L.autograd.grad(y, z, L.eye(3), is_grads_batched=True, **kw)
        return r[0].requires_grad, r, L.autograd.grad(y.sum(), z)
    same(fn)


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_full_backward_hook_dict_output_warns(kind):
    def fn(L):
        class D(L.nn.Module):
            def forward(self, x):
                return {"y": x * 2} if kind == "dict" else [x * 2]
        d, calls = D(), []
        d.register_full_backward_hook(lambda *a: calls.append(1))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            o = d(L.ones(3, requires_grad=True))
            (o["y"] if kind == "dict" else o[0]).sum().backward()
            with L.no_grad():
                d(L.ones(3, requires_grad=True))
        return calls, [(x.category.__name__, str(x.message)) for x in w]
    same(fn)


def test_missing_names():
    def fn(L):
        A = L.autograd
        out = [A.is_multithreading_enabled()]
        with A.set_multithreading_enabled(False):
            out.append(A.is_multithreading_enabled())
        out += [A.is_multithreading_enabled(), A.is_view_replay_enabled()]

        class TL:
            @classmethod
            def __torch_function__(cls, *a, **k):
                return -1
        out += [A.is_tensor_like(x) for x in (L.ones(1), 1, None, L.nn.Parameter(L.ones(1)), TL(), np.ones(1))]
        out += [A.graph.set_warn_on_accumulate_grad_stream_mismatch(False),
                A.graph.set_warn_on_accumulate_grad_stream_mismatch(True), issubclass(A.NestedIOFunction, A.Function)]
        return out
    same(fn)


def test_nested_io_function_is_legacy():
    """torch keeps NestedIOFunction but its legacy call path is gone: both ways to call it raise AttributeError."""
    def fn(L):
        class N(L.autograd.NestedIOFunction):
            def forward_extended(self, x):
                return x * 2

            def backward_extended(self, g):
                return g * 2
        errs = []
        for call in (lambda: N()(L.ones(2, requires_grad=True)), lambda: N.apply(L.ones(2, requires_grad=True))):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    call()
                    errs.append(None)
                except AttributeError as e:
                    errs.append("_nested_input" in str(e) or "_do_forward" in str(e))
        return errs
    same(fn)


def test_utils_hooks_backward_hook():
    """torch.utils.hooks.BackwardHook driven by hand, as attribution code does."""
    def fn(L):
        from importlib import import_module
        BackwardHook = import_module(L.__name__ + ".utils.hooks").BackwardHook
        lin = L.nn.Linear(2, 2)
        calls = []
        bh = BackwardHook(lin, [lambda m, gi, go: calls.append((_shapes(gi), _shapes(go)))], [])
        x = L.ones(1, 2, requires_grad=True)
        (a,) = bh.setup_input_hook((x,))
        bh.setup_output_hook(lin(a)).sum().backward()
        return calls, bh.input_tensors_index, bh.output_tensors_index, len(bh.user_hooks)
    same(fn)
