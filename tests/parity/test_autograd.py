"""Autograd against real PyTorch (spec §6-§8): seeds, backward rules, autograd.grad, hooks,
in-place/version errors, grad modes, grad_fn names, Function, gradcheck, create_graph."""
import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(0)


def both(fn):
    return fn(torch), fn(ft)


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a.detach().numpy(), dtype=np.float64),
                               np.asarray(b.detach().numpy(), dtype=np.float64), rtol=tol, atol=tol)


# ---- seeds (AG-01..13) ----------------------------------------------------------------------
def test_seed_000_w_grad_6():  # AG-01/02
    w = ft.tensor(2.0, requires_grad=True)
    x = ft.tensor(3.0)
    y = (w * x - 5) ** 2
    assert repr(y) == "tensor(1., grad_fn=<PowBackward0>)"
    y.backward()
    assert repr(w.grad) == "tensor(6.)" and x.grad is None


def test_seed_001_chain_rule():  # AG-03..10
    x = 2.0
    w = ft.tensor(3.0, requires_grad=True)
    b = ft.tensor(1.0, requires_grad=True)
    y = w * x + b
    L = (y - 10) ** 2
    assert repr(y) == "tensor(7., grad_fn=<AddBackward0>)" and repr(L) == "tensor(9., grad_fn=<PowBackward0>)"
    assert type(y.grad_fn).__name__ == "AddBackward0" and y.grad_fn.name() == "AddBackward0"
    assert [type(n).__name__ for n, _ in L.grad_fn.next_functions] == ["SubBackward0"]
    nf = y.grad_fn.next_functions
    assert type(nf[0][0]).__name__ == "MulBackward0" and type(nf[1][0]).__name__ == "AccumulateGrad"
    assert nf[1][0].variable is b
    nf2 = (w * ft.tensor(2.0)).grad_fn.next_functions
    assert type(nf2[0][0]).__name__ == "AccumulateGrad" and nf2[1] == (None, 0)
    L.backward()
    assert w.grad.item() == -12.0 and b.grad.item() == -6.0
    assert [t.is_leaf for t in (w, b, y, L)] == [True, True, False, False]


def test_seed_accumulates_18():  # AG-12/13
    w = ft.tensor(3.0, requires_grad=True)
    for _ in range(3):
        L = w ** 2
        L.backward()
    assert w.grad.item() == 18.0
    g = w.grad
    assert repr(w.grad.zero_()) == "tensor(0.)" and w.grad is g


def test_item_for_logging_has_no_graph():  # CONV-06
    w = ft.tensor(3.0, requires_grad=True)
    loss = w * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = loss.item()
    assert v == 6.0 and isinstance(v, float)


def test_knowledge_check_w_minus_lr_grad_makes_non_leaf():  # AG-50..53
    w = ft.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    w2 = w - 0.1 * w.grad
    assert not w2.is_leaf and w2.requires_grad and type(w2.grad_fn).__name__ == "SubBackward0"
    with pytest.warns(UserWarning, match="is not a leaf Tensor"):
        assert w2.grad is None
    W = ft.tensor([1.0, 2.0], requires_grad=True)
    (W * W).sum().backward()
    with ft.no_grad():
        W -= 0.1 * W.grad
    assert W.is_leaf and W.requires_grad and W.grad_fn is None and W._version == 1
    assert W.tolist() == pytest.approx([0.8, 1.6])


def test_autograd_loop_example_matches_torch():  # CONV-30/31: same data, same loop, same result
    X0 = RNG.standard_normal((64, 2)).astype(np.float32)
    W0 = RNG.standard_normal((2, 1)).astype(np.float32)

    def run(mod):
        X = mod.tensor(X0)
        Y = X @ mod.tensor([[3.0], [-2.0]]) + mod.tensor([5.0])
        W = mod.tensor(W0.copy(), requires_grad=True)
        b = mod.zeros(1, requires_grad=True)
        for _ in range(60):
            loss = mod.mean((X @ W + b - Y) ** 2)
            loss.backward()
            with mod.no_grad():
                W -= 0.1 * W.grad
                b -= 0.1 * b.grad
                W.grad.zero_()
                b.grad.zero_()
        return W.detach().numpy().copy(), b.item(), loss.item()
    (tw, tb, tl), (fw, fb, fl) = run(torch), run(ft)
    np.testing.assert_allclose(fw, tw, rtol=1e-5, atol=1e-5)
    assert fb == pytest.approx(tb, abs=1e-5) and fl == pytest.approx(tl, rel=1e-3, abs=1e-7)


# ---- backward rules (AG-14..30, AG-47..49) --------------------------------------------------
def test_backward_rules():
    w1 = ft.tensor([3.0], requires_grad=True)
    (w1 ** 2).backward()
    assert w1.grad.tolist() == [6.0]
    w = ft.tensor(3.0, requires_grad=True)
    L = w ** 2
    L.backward()
    with pytest.raises(RuntimeError, match=re.escape("Trying to backward through the graph a second time")):
        L.backward()
    L = w + 1  # AG-16: nothing saved -> allowed twice
    L.backward()
    L.backward()
    assert w.grad.item() == 8.0
    L = w ** 2
    L.backward(retain_graph=True)
    L.backward()
    assert w.grad.item() == 20.0
    v = ft.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (v * 2).backward()
    (v * 2).backward(ft.ones(3))
    assert v.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match=re.escape("Mismatch in shape: grad_output[0] has a shape of "
                                                     "torch.Size([2]) and output[0] has a shape of torch.Size([3]).")):
        (v * 2).backward(ft.ones(2))
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        ft.ones(3).sum().backward()


def test_requires_grad_errors():  # AG-22..27
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        ft.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        ft.tensor([1, 2]).requires_grad_()
    t = ft.tensor([1, 2])
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        t.requires_grad = True
    assert ft.ones(2, dtype=ft.float16, requires_grad=True).requires_grad
    w = ft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        (w * 2).requires_grad_(False)
    for r in (w.long(), w.argmax() if hasattr(w, "argmax") else w.long(), w > 0):
        assert not r.requires_grad and r.grad_fn is None


def test_retain_grad_and_grad_assign():  # AG-29/30/48/49
    w = ft.ones(2, requires_grad=True)
    y = w * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 4.0] and y.retains_grad and w.grad.tolist() == [8.0, 8.0]
    assert w.retain_grad() is None
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        ft.ones(2).retain_grad()
    with pytest.raises(RuntimeError, match=re.escape("attempting to assign a gradient of size '[3]' to a tensor of "
                                                     "size '[2]'")):
        w.grad = ft.ones(3)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'double'"):
        w.grad = ft.ones(2, dtype=ft.float64)


# ---- autograd.grad (AG-31..40) ------------------------------------------------------------------
def test_autograd_grad_and_second_order():
    x = ft.tensor(2.0, requires_grad=True)
    (g,) = ft.autograd.grad(x ** 3, x)
    assert g.item() == 12.0 and x.grad is None
    (g,) = ft.autograd.grad(x ** 3, x, create_graph=True)
    assert g.item() == 12.0 and g.requires_grad
    (g2,) = ft.autograd.grad(g, x)
    assert g2.item() == 12.0
    z = ft.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have been used"):
        ft.autograd.grad(x ** 2, [x, z])
    r = ft.autograd.grad(x ** 2, [x, z], allow_unused=True)
    assert r[0].item() == 4.0 and r[1] is None
    r = ft.autograd.grad(x ** 2, [x, z], allow_unused=True, materialize_grads=True)
    assert r[1].item() == 0.0
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        ft.autograd.grad(x * ft.ones(3), x)
    assert ft.autograd.grad(x * ft.ones(3), x, grad_outputs=ft.ones(3))[0].item() == 3.0
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        ft.autograd.grad(x * 2, ft.ones(1))
    y = x ** 2
    ft.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        ft.autograd.grad(y, x)


def test_hessian_vector_product_matches_torch():
    A = RNG.standard_normal((4, 4))
    xv = RNG.standard_normal(4)
    vv = RNG.standard_normal(4)

    def hvp(mod):
        x = mod.tensor(xv, requires_grad=True)
        a = mod.tensor(A)
        f = ((a @ x).tanh() ** 2).sum() + (x * x * x).sum()
        (g,) = mod.autograd.grad(f, x, create_graph=True)
        (h,) = mod.autograd.grad((g * mod.tensor(vv)).sum(), x)
        return h
    close(*both(hvp), tol=1e-10)


def test_create_graph_gradient_requires_grad_only_where_the_derivative_reads_an_input():
    """A create_graph gradient is an edge of the inputs its backward reads, as PyTorch's derivative formulas: a
    linear op's gradient (of a constant cotangent) requires no grad, so a second backward through it raises."""
    xv, wv = RNG.standard_normal(3), RNG.standard_normal(3)

    def run(mod):
        x = mod.tensor(xv, requires_grad=True)
        w = mod.tensor(wv, requires_grad=True)
        out = []
        for f in (lambda: (2 * x).sum(), lambda: (x * w).sum(), lambda: (x * x + 3 * x).sum(),
                  lambda: (x @ w.detach()) + w.sum()):
            (g,) = mod.autograd.grad(f(), x, create_graph=True)
            # (the graph's node names differ: the facade's are "<node>Backward")
            out.append((g.requires_grad, g.grad_fn is None, np.round(g.detach().numpy(), 12).tolist()))
        (g,) = mod.autograd.grad((2 * x).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError) as e:
            g.sum().backward()
        out.append(str(e.value))
        return out
    t, f = both(run)
    assert f == t


# ---- hooks (AG-41..46) ---------------------------------------------------------------------------
def test_hooks():
    seen = []
    w = ft.ones(2, requires_grad=True)
    h = w.register_hook(lambda g: seen.append(g.tolist()))
    (w * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and w.grad.tolist() == [3.0, 3.0]
    assert h.remove() is None
    w = ft.ones(2, requires_grad=True)
    w.register_hook(lambda g: g * 10)
    (w * 3).sum().backward()
    assert w.grad.tolist() == [30.0, 30.0]
    w = ft.ones(2, requires_grad=True)
    y = w * 3
    y.register_hook(lambda g: g * 0)
    y.sum().backward()
    assert w.grad.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        ft.ones(2).register_hook(lambda g: g)
    got = []
    w = ft.ones(2, requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda t: got.append(t.grad.tolist()))
    (w * 3).sum().backward()
    assert got == [[3.0, 3.0]]


# ---- in-place and versions (spec §7) -----------------------------------------------------------------
HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


@pytest.mark.parametrize("case", ["INP-10", "INP-11", "INP-12", "INP-13", "INP-14", "INP-15"])
def test_saved_tensor_modified_errors_match_torch(case):
    def run(mod):
        a = mod.ones(3, requires_grad=True)
        if case == "INP-10":
            c = (a * 2).exp(); c.add_(1); out = c.sum()
        elif case == "INP-11":
            b = a * 2; c = b ** 2; b.add_(1); out = c.sum()
        elif case == "INP-12":
            c = (a * 2).sigmoid(); c.mul_(2); out = c.sum()
        elif case == "INP-13":
            c = (a * 2).relu(); c.mul_(2); out = c.sum()
        elif case == "INP-14":
            x = mod.ones(2); w = mod.ones(2, requires_grad=True); y = x * w; x.add_(1); out = y.sum()
        else:
            c = (a * 2).sigmoid(); c.detach().zero_(); out = c.sum()
        with pytest.raises(RuntimeError) as ei:
            out.backward()
        return str(ei.value)
    t, f = both(run)
    assert f == t


def test_inplace_cases_that_work():  # INP-16..20
    def run(mod):
        out = []
        a = mod.ones(3, requires_grad=True); b = a * 2; c = b.exp(); b.add_(1); c.sum().backward(); out.append(a.grad)
        a = mod.ones(3, requires_grad=True); b = a * 2; c = b + 1; b.add_(1); c.sum().backward(); out.append(a.grad)
        a = mod.ones(3, requires_grad=True); b = a * 2; b.add_(1); b.sum().backward(); out.append(a.grad)
        a = mod.ones(3, requires_grad=True); b = a * 1; b.narrow(0, 1, 2).mul_(3); b.sum().backward()
        out.append(a.grad)
        return out
    for x, y in zip(*both(run)):
        close(x, y)


def test_inplace_on_leaf_errors():  # INP-21..27
    W = ft.ones(2, requires_grad=True)
    for f in (lambda: W.sub_(1), lambda: W.zero_()):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            f()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        W -= 1
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        W.view(2).add_(1)
    W.data.add_(1)
    W.detach().add_(1)
    assert W.tolist() == [3.0, 3.0]
    with ft.no_grad():
        W.add_(1)
        W.mul_(2)
    assert W.is_leaf and W.requires_grad and W.grad_fn is None and W.tolist() == [8.0, 8.0]


# ---- grad modes (spec §8) ------------------------------------------------------------------------------
def test_grad_modes():
    w = ft.ones(2, requires_grad=True)
    assert ft.is_grad_enabled()
    with ft.no_grad():
        assert not ft.is_grad_enabled()
        y = w * 2
        assert not y.requires_grad and y.grad_fn is None and y.is_leaf
        with ft.enable_grad():
            assert type((w * 2).grad_fn).__name__ == "MulBackward0"
    with ft.set_grad_enabled(False):
        assert not (w * 2).requires_grad
    ft.set_grad_enabled(False)
    assert not ft.is_grad_enabled()
    ft.set_grad_enabled(True)
    assert ft.is_grad_enabled()

    @ft.no_grad()
    def f():
        return w * 2
    assert not f().requires_grad

    @ft.set_grad_enabled(False)
    def g():
        return w * 2
    assert ft.is_grad_enabled() and not g().requires_grad
    with ft.no_grad():
        p = ft.ones(2, requires_grad=True)
        assert p.requires_grad and p.is_leaf


def test_inference_mode():  # MODE-13..25
    w = ft.ones(2, requires_grad=True)
    with ft.inference_mode():
        assert not ft.is_grad_enabled() and ft.is_inference_mode_enabled()
        it = ft.ones(2) * 3
        y = w * 2
    assert it.is_inference() and not y.requires_grad and y.is_inference() and not w.is_inference()
    assert not (it + ft.ones(2)).is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        it * w
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        it.add_(1)
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter."):
        it._version
    assert not it.clone().is_inference()


# ---- grad_fn names (AG-55) ------------------------------------------------------------------------------
NAMES = [
    ("a+b", lambda m, a, b, mm, v: a + b), ("a+1", lambda m, a, b, mm, v: a + 1),
    ("a-b", lambda m, a, b, mm, v: a - b), ("1-a", lambda m, a, b, mm, v: 1 - a), ("-a", lambda m, a, b, mm, v: -a),
    ("a*b", lambda m, a, b, mm, v: a * b), ("a/b", lambda m, a, b, mm, v: a / b), ("2/a", lambda m, a, b, mm, v: 2 / a),
    ("a**2", lambda m, a, b, mm, v: a ** 2), ("a**b", lambda m, a, b, mm, v: a ** b),
    ("2**a", lambda m, a, b, mm, v: 2 ** a), ("sqrt", lambda m, a, b, mm, v: a.sqrt()),
    ("a@m", lambda m, a, b, mm, v: a @ mm), ("a@v", lambda m, a, b, mm, v: a @ v), ("v@v", lambda m, a, b, mm, v: v @ v),
    ("v@m", lambda m, a, b, mm, v: v @ mm), ("mm", lambda m, a, b, mm, v: m.mm(a, mm)),
    ("view", lambda m, a, b, mm, v: a.view(12)), ("reshape", lambda m, a, b, mm, v: a.reshape(12)),
    ("t.reshape", lambda m, a, b, mm, v: a.t().reshape(12)), ("flatten", lambda m, a, b, mm, v: a.flatten()),
    ("transpose", lambda m, a, b, mm, v: a.transpose(0, 1)), ("t", lambda m, a, b, mm, v: a.t()),
    ("T", lambda m, a, b, mm, v: a.T), ("permute", lambda m, a, b, mm, v: a.permute(1, 0)),
    ("expand", lambda m, a, b, mm, v: v.expand(3, 4)), ("unsqueeze", lambda m, a, b, mm, v: a.unsqueeze(0)),
    ("squeeze(d)", lambda m, a, b, mm, v: a.unsqueeze(0).squeeze(0)),
    ("squeeze()", lambda m, a, b, mm, v: a.unsqueeze(0).squeeze()), ("narrow", lambda m, a, b, mm, v: a.narrow(0, 0, 2)),
    ("mean", lambda m, a, b, mm, v: a.mean()), ("mean(d)", lambda m, a, b, mm, v: a.mean(dim=-1)),
    ("sum", lambda m, a, b, mm, v: a.sum()), ("sum(0)", lambda m, a, b, mm, v: a.sum(0)),
    ("exp", lambda m, a, b, mm, v: a.exp()), ("log", lambda m, a, b, mm, v: a.log()),
    ("relu", lambda m, a, b, mm, v: a.relu()), ("sigmoid", lambda m, a, b, mm, v: a.sigmoid()),
    ("tanh", lambda m, a, b, mm, v: a.tanh()), ("abs", lambda m, a, b, mm, v: a.abs()),
    ("clone", lambda m, a, b, mm, v: a.clone()), ("t.contiguous", lambda m, a, b, mm, v: a.t().contiguous()),
    ("double", lambda m, a, b, mm, v: a.double()), ("bf16", lambda m, a, b, mm, v: a.to(m.bfloat16)),
    ("where", lambda m, a, b, mm, v: m.where(a > 0, a, b)), ("masked_fill", lambda m, a, b, mm, v: a.masked_fill(a > 0, 0.)),
    ("clamp", lambda m, a, b, mm, v: a.clamp(min=0)), ("repeat", lambda m, a, b, mm, v: a.repeat(2, 1)),
    ("flip", lambda m, a, b, mm, v: a.flip(0)), ("maximum", lambda m, a, b, mm, v: m.maximum(a, b)),
    ("cat", lambda m, a, b, mm, v: m.cat([a, b])), ("stack", lambda m, a, b, mm, v: m.stack([a, b])),
]


@pytest.mark.parametrize("name,fn", NAMES, ids=[n for n, _ in NAMES])
def test_grad_fn_names(name, fn):
    def run(mod):
        a = mod.tensor(RNG.standard_normal((3, 4)) + 2, dtype=mod.float32, requires_grad=True)
        b = mod.tensor(RNG.standard_normal((3, 4)) + 2, dtype=mod.float32, requires_grad=True)
        m = mod.tensor(RNG.standard_normal((4, 5)), dtype=mod.float32, requires_grad=True)
        v = mod.tensor(RNG.standard_normal(4), dtype=mod.float32, requires_grad=True)
        r = fn(mod, a, b, m, v)
        return type(r.grad_fn).__name__ if r.grad_fn is not None else None
    t, f = both(run)
    assert f == t


# ---- gradients of a micrograd-style program (issue 3 "Parity") ----------------------------------------
def test_micrograd_style_program_matches_torch():
    av, bv = RNG.standard_normal(5), RNG.standard_normal(5)

    def run(mod):
        a = mod.tensor(av, requires_grad=True)
        b = mod.tensor(bv, requires_grad=True)
        c = a + b
        d = a * b + b ** 3
        c = c + c + 1
        c = c + 1 + c + (-a)
        d = d + d * 2 + (b + a).relu()
        d = d + 3 * d + (b - a).relu()
        e = c - d
        f = e ** 2
        g = f / 2.0
        g = g + 10.0 / f
        g.sum().backward()
        return a.grad, b.grad, g
    (ta, tb, tg), (fa, fb, fg) = both(run)
    close(fa, ta, 1e-9); close(fb, tb, 1e-9); close(fg, tg, 1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_broadcast_view_and_inplace_grads(dtype):
    xv, yv = RNG.standard_normal((3, 4)), RNG.standard_normal(4)

    def run(mod):
        dt = getattr(mod, dtype)
        x = mod.tensor(xv, dtype=dt, requires_grad=True)
        y = mod.tensor(yv, dtype=dt, requires_grad=True)
        z = x * y + y.unsqueeze(0).expand(3, 4)
        z = z.t().reshape(12).view(4, 3).transpose(0, 1)
        w = z.exp() + 0.0  # exp saves its result; add saves nothing, so += is allowed
        w += 1
        loss = (w * x).mean() + x.narrow(1, 1, 2).sum()
        loss.backward()
        return x.grad, y.grad
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(*both(run)):
        close(b, a, tol)


# ---- grad overrides (grad_overrides.py) vs torch at the points where JAX differs ---------------------------
@pytest.mark.parametrize("op", ["relu", "clamp", "clamp_min", "clamp_max", "clamp_tensor", "abs", "maximum_tie"])
def test_grad_overrides_match_torch(op):
    xv = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])

    def run(mod):
        x = mod.tensor(xv, requires_grad=True)
        if op == "relu":
            y = x.relu()
        elif op == "clamp":
            y = x.clamp(0.0, 1.0)
        elif op == "clamp_min":
            y = x.clamp(min=0.0)
        elif op == "clamp_max":
            y = x.clamp(max=1.0)
        elif op == "clamp_tensor":
            lo = mod.tensor([0.0] * 5, requires_grad=True)
            y = mod.clamp(x, lo, mod.tensor([1.0] * 5))
        elif op == "abs":
            y = x.abs()
        else:
            y = mod.maximum(x, mod.tensor([0.0, 0.0, 0.5, 2.0, 2.0]))
        y.sum().backward()
        return x.grad
    close(*both(run), tol=0)


# ---- autograd.Function and gradcheck -------------------------------------------------------------------------------
def test_custom_function():
    class Exp(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y
    x = ft.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    assert type(y.grad_fn).__name__ == "ExpBackward"
    (y * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.0, 1.0]), rtol=1e-6)
    assert ft.autograd.gradcheck(Exp.apply, (ft.tensor([0.3, 0.7], dtype=ft.float64, requires_grad=True),))


def test_gradcheck_detects_wrong_backward():
    class Bad(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g
    x = ft.tensor([0.3, 0.7], dtype=ft.float64, requires_grad=True)
    assert not ft.autograd.gradcheck(Bad.apply, (x,), raise_exception=False)
    with pytest.raises(ft.autograd.GradcheckError):
        ft.autograd.gradcheck(Bad.apply, (x,))


def test_view_created_in_no_grad_then_modified_with_grad():  # INP-28
    def run(mod):
        w = mod.ones(2, requires_grad=True)
        with mod.no_grad():
            v = w.view(2)
        with pytest.raises(RuntimeError) as ei:
            v.add_(1)
        return str(ei.value)
    t, f = both(run)
    assert f == t


def _outcome(f):
    """What ``f()`` returns, or the error it raises (type and message)."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001 (the outcome itself is compared)
        return (type(e).__name__, str(e))


def test_view_created_in_no_grad_requires_grad_but_drops_its_gradient():
    """A view made in no_grad mode of a tensor that requires grad requires grad too (its base does) yet is a leaf
    without a gradient edge: ops on it are recorded, the gradient reaching it goes nowhere (not into its base, not
    into its own .grad); it cannot be a root or a differentiated input; requires_grad_(False) leaves it True; and
    once its storage was written in place it may not be used in a recorded op. Each outcome against torch's."""
    def run(mod):
        out = {}
        p = mod.ones(3, requires_grad=True)
        c = p * 1
        with mod.no_grad():
            v, w, parts = p[:2], c[1:], p.split(1)
        out["flags"] = [(t.requires_grad, t.is_leaf, t.grad_fn is None) for t in (v, w, *parts)]
        y = v * 2
        out["y"] = (y.requires_grad, type(y.grad_fn).__name__, y.grad_fn.next_functions[0])
        z = (y * p[:2]).sum() + (w * c[1:]).sum() + (parts[0] * 5).sum()
        z.backward(retain_graph=True)
        out["grads"] = (p.grad.tolist(), v.grad, w.grad)
        u = v[0:1]  # a grad-mode view of the no_grad view: recorded, leads nowhere
        out["u"] = (u.requires_grad, u.is_leaf, type(u.grad_fn).__name__)
        out["u inplace"] = _outcome(lambda: u.mul_(2))
        out["root"] = _outcome(lambda: v.backward(mod.ones(2)))
        out["sum root"] = _outcome(lambda: (v.sum().backward(), p.grad.tolist()))
        out["grad wrt v"] = _outcome(lambda: mod.autograd.grad(z, v, retain_graph=True))
        out["allow_unused"] = _outcome(lambda: mod.autograd.grad(z, [v, p], allow_unused=True)[0])
        out["requires_grad_(False)"] = v.requires_grad_(False).requires_grad
        out["detach"] = v.detach().requires_grad
        out["to"] = _outcome(lambda: type(v.to(mod.float64).grad_fn).__name__)
        out["no_grad use"] = _outcome(lambda: v.add_(0) is v)  # (in no_grad: allowed)
        with mod.no_grad():
            v.mul_(3)  # its own in-place write under no_grad
            q = p[:1]
        out["after own write"] = _outcome(lambda: (v * 1).sum())
        with mod.no_grad():
            p.add_(1)  # the base written (an SGD-like update)
            out["no_grad read after"] = (v * 1).tolist()
        out["after base write"] = _outcome(lambda: q + 1)
        out["view after base write"] = _outcome(lambda: q.view(1))
        out["values"] = (v.tolist(), p.tolist())
        return out
    t, f = both(run)
    assert f == t


def test_no_grad_view_through_a_custom_function():
    """A custom autograd.Function called on a no_grad view and a leaf: the view's gradient is dropped, the leaf's
    is accumulated; next_functions shows (None, 0) for the view."""
    def run(mod):
        class Sq(mod.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * a * b

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return 2 * a * b * g, a * a * g
        p = mod.tensor([1.0, 2.0], requires_grad=True)
        q = mod.tensor([3.0, 4.0], requires_grad=True)
        with mod.no_grad():
            v = p.view(2)
        r = Sq.apply(v, q)
        nf = [None if n is None else type(n).__name__ for n, _ in r.grad_fn.next_functions]
        r.sum().backward()
        return r.requires_grad, nf, p.grad, q.grad.tolist()
    t, f = both(run)
    assert f == t


def test_no_grad_on_generator_and_inference_requires_grad():  # MODE-10, MODE-19, MODE-25
    def run(mod):
        @mod.no_grad()
        def g():
            yield mod.is_grad_enabled()
            yield mod.is_grad_enabled()
        seen = list(g())
        with mod.inference_mode():
            it = mod.ones(2)
            p = mod.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError) as ei:
            it.requires_grad_()
        (p * 2).sum().backward()
        return seen, mod.is_grad_enabled(), str(ei.value), p.grad.tolist(), p.is_inference()
    assert both(run)[0] == both(run)[1]


def test_gradcheck_mismatch_message_prints_tensors_as_torch():
    msgs = []
    for m in (torch, ft):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3
        x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        with pytest.raises(Exception) as e:
            m.autograd.gradcheck(Bad.apply, (x,))
        msgs.append((type(e.value).__name__, str(e.value)))
    assert msgs[1] == msgs[0] and msgs[0][0] == "GradcheckError"
