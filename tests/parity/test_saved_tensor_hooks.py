"""torch.autograd.graph's saved-tensor API against torch: saved_tensors_hooks (which tensors are packed, how often,
what backward uses), save_on_cpu, disable_saved_tensors_hooks, allow_mutation_on_saved_tensors, increment_version,
register_multi_grad_hook, GradientEdge / get_gradient_edge; and gradcheck on complex inputs and its errors."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import run

LIBS = (torch, ft)


def _both(fn):
    """fn(torch), fn(functorch_lite): both results; each must not raise."""
    (t, te), (f, fe) = run(fn, torch), run(fn, ft)
    assert te is None, te
    assert fe is None, fe
    return t, f


def _errors(fn):
    """fn(lib) raises in both: the same exception type and message."""
    (t, te), (f, fe) = run(fn, torch), run(fn, ft)
    assert te is not None and fe is not None, (te, fe, t, f)
    same_type = type(te) is type(fe) or type(te).__name__ == type(fe).__name__ == "GradcheckError"
    assert same_type and str(te) == str(fe), (te, fe)
    return te


def _close(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float) or isinstance(b, float):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    else:
        assert a == b, (a, b)


def _grads(*ts):
    return [None if t.grad is None else t.grad.tolist() for t in ts]


def _inputs(lib):
    a = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([1.5, 0.3, -0.7], dtype=lib.float64, requires_grad=True)
    return a, b


OPS = {
    "mul": lambda m, a, b: a * b,
    "mul_one_needs_grad": lambda m, a, b: a * b.detach(),
    "square_by_mul": lambda m, a, b: a * a,
    "div": lambda m, a, b: a / b,
    "add": lambda m, a, b: a + b,
    "sum": lambda m, a, b: a.sum(),
    "mean": lambda m, a, b: a.mean(),
    "exp": lambda m, a, b: a.exp(),
    "sin": lambda m, a, b: a.sin(),
    "tanh": lambda m, a, b: a.tanh(),
    "sigmoid": lambda m, a, b: a.sigmoid(),
    "relu": lambda m, a, b: a.relu(),
    "pow": lambda m, a, b: a ** 2,
    "softmax": lambda m, a, b: a.softmax(0) * b,
    "log_softmax": lambda m, a, b: m.nn.functional.log_softmax(a, 0),
    "matmul": lambda m, a, b: a[:, None] @ b[None, :],
    "linear": lambda m, a, b: m.nn.functional.linear(a[None], b[None].expand(2, 3)),
    "mse_loss": lambda m, a, b: m.nn.functional.mse_loss(a, b),
    "views": lambda m, a, b: a.view(3, 1).t().reshape(3),
    "chain": lambda m, a, b: ((a * b).exp() + a.sin()).tanh(),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_pack_unpack_counts_and_grads(name):
    """The same number of pack and unpack calls as torch for these ops, hooks that see tensors of the library
    (requiring grad, grad mode off while packing), and the same gradients."""
    def prog(m):
        a, b = _inputs(m)
        log = []

        def pack(x):
            # (the element count: torch's linear saves weight.t(), the facade weight)
            log.append(("pack", x.numel(), x.requires_grad, m.is_grad_enabled(), isinstance(x, m.Tensor)))
            return x

        def unpack(x):
            log.append(("unpack", tuple(x.shape)))
            return x
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = OPS[name](m, a, b)
        n_fwd = len(log)
        y.sum().backward()
        packs = sorted(e for e in log if e[0] == "pack")
        return n_fwd, packs, len(log) - n_fwd, _grads(a, b)
    t, f = _both(prog)
    assert f[0] == t[0] and f[1] == t[1] and f[2] == t[2], (t[:3], f[:3])
    _close(t[3], f[3])


def test_hooks_are_called_and_unpacked_value_is_used():
    """A pack hook that changes the value: backward uses what unpack returned (mul saves both inputs)."""
    def prog(m):
        a, b = _inputs(m)
        with m.autograd.graph.saved_tensors_hooks(lambda x: x * 2, lambda x: x):
            y = (a * b).sum()
        y.backward()
        return _grads(a, b)
    t, f = _both(prog)
    _close(t, f)


def test_packed_object_need_not_be_a_tensor():
    def prog(m):
        a, b = _inputs(m)
        store = {}

        def pack(x):
            k = len(store)
            store[k] = x.detach().clone()
            return ("key", k)

        def unpack(p):
            return store[p[1]]
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = ((a * b).sin() * a).sum()
        y.backward()
        return len(store), _grads(a, b)
    t, f = _both(prog)
    _close(t, f)
    assert f[0] > 0


def test_save_to_file_roundtrip(tmp_path):
    """The docs' pattern: pack writes the tensor to a file, unpack reads it back."""
    def prog(m):
        a, b = _inputs(m)
        n = [0]

        def pack(x):
            n[0] += 1
            path = tmp_path / f"{m.__name__}_{n[0]}.npy"
            np.save(path, x.detach().numpy())
            return path

        def unpack(path):
            return m.from_numpy(np.load(path))
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (a * b).exp().sum()
        y.backward()
        return n[0], _grads(a, b)
    t, f = _both(prog)
    _close(t, f)


def test_unpack_must_return_a_tensor():
    def prog(m):
        a, b = _inputs(m)
        with m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: 1):
            y = (a * b).sum()
        y.backward()
    _errors(prog)


def test_unpack_of_another_size_raises():
    def prog(m):
        a, b = _inputs(m)
        with m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: m.zeros(5, dtype=m.float64)):
            y = (a * b).sum()
        y.backward()
    (_, te), (_, fe) = run(prog, torch), run(prog, ft)
    assert type(te) is RuntimeError and type(fe) is RuntimeError, (te, fe)


def test_retain_graph_unpacks_again():
    def prog(m):
        a, b = _inputs(m)
        log = []
        with m.autograd.graph.saved_tensors_hooks(lambda x: (log.append("p"), x)[1], lambda x: (log.append("u"), x)[1]):
            y = (a * b).sum()
        y.backward(retain_graph=True)
        y.backward()
        return log, _grads(a, b)
    t, f = _both(prog)
    _close(t, f)


def test_nesting_innermost_hooks_win():
    def prog(m):
        a, b = _inputs(m)
        log = []
        H = m.autograd.graph.saved_tensors_hooks
        with H(lambda x: (log.append("outer"), x)[1], lambda x: x):
            with H(lambda x: (log.append("inner"), x)[1], lambda x: x):
                y = a * b
            z = a * b
        w = a * b  # (no hooks any more)
        (y + z + w).sum().backward()
        return log, _grads(a, b)
    t, f = _both(prog)
    _close(t, f)


def test_pack_hook_may_not_modify_its_input():
    def prog(m):
        a, b = _inputs(m)
        c = a * 1
        with m.autograd.graph.saved_tensors_hooks(lambda x: x.mul_(1), lambda x: x):
            c * b
    _errors(prog)


INPLACE = {
    "mul_": [("mul_", "w")],
    "mul_then_exp_": [("mul_", "w"), ("exp_",)],
    "sigmoid_": [("sigmoid_",)],
    "div_then_sin_": [("div_", "w"), ("sin_",)],
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_ops_under_hooks(name):
    """An in-place op's saved original ``self`` is not changed by its own write (torch saves a copy)."""
    def prog(m):
        x, w = _inputs(m)
        n = [0, 0]
        with m.autograd.graph.saved_tensors_hooks(lambda t: (n.__setitem__(0, n[0] + 1), t)[1],
                                                  lambda t: (n.__setitem__(1, n[1] + 1), t)[1]):
            y = x * 1
            for op, *args in INPLACE[name]:
                getattr(y, op)(*[w if a == "w" else a for a in args])
        y.sum().backward()
        return n, _grads(x, w)
    t, f = _both(prog)
    _close(t, f)


def test_write_after_save_under_hooks_is_no_error():
    """With hooks, torch does not check versions: an identity hook hands backward the tensor as it is now."""
    def prog(m):
        x, w = _inputs(m)
        y = x * 1
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            z = (y * w).sum()
        with m.no_grad():
            y.add_(1)
        z.backward()
        return _grads(x, w)
    t, f = _both(prog)
    _close(t, f)


def test_save_on_cpu():
    def prog(m):
        a, b = _inputs(m)
        G = m.autograd.graph
        with G.save_on_cpu(pin_memory=False):
            y = ((a * b).exp() * a.sin()).sum()
        y.backward()
        return issubclass(G.save_on_cpu, G.saved_tensors_hooks), y.item(), _grads(a, b)
    t, f = _both(prog)
    _close(t, f)


def test_disable_saved_tensors_hooks():
    def inside(m):
        with m.autograd.graph.disable_saved_tensors_hooks("no hooks in here"):
            with m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
    _errors(inside)

    def entering_while_active(m):
        with m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            with m.autograd.graph.disable_saved_tensors_hooks("entered with hooks"):
                pass
    _errors(entering_while_active)

    def nested(m):
        G = m.autograd.graph
        with G.disable_saved_tensors_hooks("outer msg"):
            with G.disable_saved_tensors_hooks("inner msg"):
                pass
            with G.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
    _errors(nested)

    def after(m):  # (hooks allowed again once it exits)
        G = m.autograd.graph
        with G.disable_saved_tensors_hooks("x"):
            pass
        a, b = _inputs(m)
        n = [0]
        with G.saved_tensors_hooks(lambda x: (n.__setitem__(0, n[0] + 1), x)[1], lambda x: x):
            (a * b).sum().backward()
        return n[0]
    t, f = _both(after)
    assert t == f == 2


def test_allow_mutation_on_saved_tensors():
    def prog(m):
        a, _ = _inputs(m)
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            c = a.clone()
            out = (c ** 2).sum()
            c.sin_()
            out.backward()
        return _grads(a), c.tolist()
    t, f = _both(prog)
    _close(t, f)

    def outside(m):
        a, _ = _inputs(m)
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            c = a.clone()
            out = (c ** 2).sum()
            c.sin_()
        out.backward()
    _errors(outside)

    def without(m):  # (the error it prevents)
        a, _ = _inputs(m)
        c = a.clone()
        out = (c ** 2).sum()
        c.sin_()
        out.backward()
    _errors(without)


def test_increment_version():
    def prog(m):
        a, _ = _inputs(m)
        c = a.clone()
        out = (c * c).sum()
        m.autograd.graph.increment_version(c)
        assert c._version == 1
        out.backward()
    _errors(prog)

    def iterable(m):
        a, b = _inputs(m)
        c, d = a * 1, b * 1
        m.autograd.graph.increment_version([c, d])
        return c._version, d._version
    t, f = _both(iterable)
    assert t == f


def test_register_multi_grad_hook():
    def prog(m):
        G = m.autograd.graph
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0, 4.0], requires_grad=True)
        z = m.tensor([5.0, 6.0], requires_grad=True)
        calls = []
        h = G.register_multi_grad_hook((x, y, z), lambda gs: calls.append([None if g is None else g.tolist()
                                                                           for g in gs]))
        (x * 2 + y * 3).sum().backward()
        (x * 2).sum().backward()
        h.remove()
        (x * 2).sum().backward()
        h = G.register_multi_grad_hook((x, y), lambda g: calls.append(("any", g.tolist())), mode="any")
        (x * 2 + y * 3).sum().backward()
        h.remove()
        h = G.register_multi_grad_hook((x,), lambda gs: [g * 0 for g in gs])  # (its result is ignored)
        x.grad = None
        (x * 2).sum().backward()
        return calls[:3], len(calls), x.grad.tolist()
    t, f = _both(prog)
    _close(t, f)

    def bad_mode(m):
        x = m.tensor([1.0], requires_grad=True)
        m.autograd.graph.register_multi_grad_hook((x,), lambda g: None, mode="some")
    _errors(bad_mode)


def test_gradient_edge():
    def prog(m):
        G = m.autograd.graph
        a, _ = _inputs(m)
        e = G.get_gradient_edge(a)
        c = a * 2
        ec = G.get_gradient_edge(c)
        y = (c * c).sum()
        g_edge = m.autograd.grad(y, ec, retain_graph=True)[0].tolist()
        g_leaf = m.autograd.grad(y, (G.get_gradient_edge(a),), retain_graph=True)[0].tolist()
        g_out = m.autograd.grad(G.get_gradient_edge(y), a, grad_outputs=m.tensor(1.0, dtype=m.float64))[0].tolist()
        return (G.GradientEdge._fields, e.node.name(), e.output_nr, type(ec.node).__name__, ec.output_nr,
                g_edge, g_leaf, g_out)
    t, f = _both(prog)
    _close(t, f)

    def no_grad_tensor(m):
        m.autograd.graph.get_gradient_edge(m.zeros(2))
    _errors(no_grad_tensor)


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_under_hooks(reentrant):
    """checkpoint inside saved_tensors_hooks: same values and gradients; the hooks run (packs == unpacks). torch
    packs one more tensor (the checkpointed region's input) than the facade (which packs what the ops outside the
    region save)."""
    def prog(m):
        a, b = _inputs(m)
        n = [0, 0]
        with m.autograd.graph.saved_tensors_hooks(lambda x: (n.__setitem__(0, n[0] + 1), x)[1],
                                                  lambda x: (n.__setitem__(1, n[1] + 1), x)[1]):
            y = m.utils.checkpoint.checkpoint(lambda x: (x * b).exp().sin(), a, use_reentrant=reentrant)
            z = (y * y).sum()
        z.backward()
        return n, z.item(), _grads(a, b)
    t, f = _both(prog)
    _close(t[1:], f[1:])
    assert f[0][0] > 0 and f[0][0] == f[0][1]


def test_compiled_function_under_hooks():
    def prog(m):
        a, b = _inputs(m)
        f = m.compile(lambda x: (x * b).tanh().sum())
        with m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            y = f(a)
            z = y * a.sum()
        z.backward()
        return z.item(), _grads(a, b)
    t, f = _both(prog)
    _close(t, f)


def test_compiled_function_under_value_changing_hooks():
    """Hooks that change what is saved (pack doubles it): a compiled function called under them runs eagerly
    (one graph-break warning), so its gradients are the hooks' -- torch.compile's are too."""
    import warnings

    def prog(m, wrap):
        m.manual_seed(0)
        lin = m.nn.Linear(2, 1)
        with m.no_grad():
            lin.weight.copy_(m.tensor([[0.5, -1.0]]))
            lin.bias.zero_()
        f = wrap(lambda x: lin(x).sum())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
                f(m.ones(3, 2)).backward()
        return lin.weight.grad.tolist(), [str(x.message) for x in w]
    want, _ = prog(torch, lambda f: f)
    got, warned = prog(ft, ft.compile)
    assert got == want == [[6.0, 6.0]]
    assert any("saved_tensors_hooks are active" in m for m in warned)


# ---- gradcheck --------------------------------------------------------------------------------------------------
def _z(m):
    return m.tensor([1 + 2j, -0.5 + 0.3j, 2 - 1j], dtype=m.complex128, requires_grad=True)


def _x(m):
    return m.tensor([0.3, -1.2, 0.7], dtype=m.float64, requires_grad=True)


GRADCHECK = {
    "complex_to_real": (lambda t: (t * t.conj()).real + t.abs(), (_z,)),
    "complex_to_complex": (lambda t: t * t + t.exp(), (_z,)),
    "holomorphic_sin": (lambda t: t.sin(), (_z,)),
    "antiholomorphic": (lambda t: t.conj() * 2j, (_z,)),
    "real_to_complex": (lambda t: t * (1 + 2j), (_x,)),
    "mixed": (lambda t, u: (t * u).abs(), (_z, _x)),
    "real": (lambda t: t.exp().sin(), (_x,)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
@pytest.mark.parametrize("which", ["gradcheck", "gradgradcheck"])
def test_gradcheck_complex(name, which):
    fn, makers = GRADCHECK[name]
    t, f = _both(lambda m: getattr(m.autograd, which)(fn, tuple(mk(m) for mk in makers)))
    assert t is True and f is True


def _wrong_backward(m):
    class Bad(m.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * t

        @staticmethod
        def backward(ctx, g):
            return g
    return Bad.apply


def test_gradcheck_wrong_complex_gradient():
    (_, te), (_, fe) = (run(lambda m: m.autograd.gradcheck(_wrong_backward(m), (_z(m),)), m) for m in LIBS)
    assert type(te).__name__ == type(fe).__name__ == "GradcheckError", (te, fe)
    assert "Jacobian mismatch for output 0 with respect to input 0" in str(fe)
    t, f = _both(lambda m: m.autograd.gradcheck(_wrong_backward(m), (_z(m),), raise_exception=False))
    assert t is False and f is False


def test_gradcheck_errors():
    def no_input_requires_grad(m):
        m.autograd.gradcheck(lambda t: t * 2, (m.tensor([1.0, 2.0], dtype=m.float64),))
    _errors(no_input_requires_grad)
    _errors(lambda m: m.autograd.gradgradcheck(lambda t: t * 2, (m.tensor([1.0, 2.0], dtype=m.float64),)))

    def detached_output(m):
        m.autograd.gradcheck(lambda t: (t * 2).detach(), (_x(m),))
    te = _errors(detached_output)
    assert type(te).__name__ == "GradcheckError"
    t, f = _both(lambda m: m.autograd.gradcheck(lambda t: (t * 2).detach(), (_x(m),), raise_exception=False))
    assert t is False and f is False
    t, f = _both(lambda m: m.autograd.gradcheck(lambda t: ((t * 2).detach(), t * 3), (_x(m),)))
    assert t is True and f is True
