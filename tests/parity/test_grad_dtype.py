"""``Tensor.grad_dtype`` (torch 2.9+): the dtype the autograd engine gives a leaf's gradients -- its dtype by
default, another one (a bfloat16 model accumulating float32 gradients), or None (no cast). Against real torch:
the leaf-only errors, the cast on accumulation and in ``autograd.grad``, the ``.grad`` assignment check and its
message, the refusal to change it over an existing gradient; and a compiled step against eager."""
import warnings

import numpy as np
import torch

import functorch_lite as ft


def _scenario(L):
    out = []

    def t(f):
        try:
            r = f()
        except Exception as e:  # noqa: BLE001 (the error itself is compared)
            r = (type(e).__name__, str(e))
        out.append(str(r) if isinstance(r, (L.dtype, tuple)) else r)

    x = L.zeros(2, requires_grad=True)
    y = x * 2
    t(lambda: y.grad_dtype)

    def set_nonleaf():
        y.grad_dtype = L.float64
    t(set_nonleaf)
    p = L.zeros(2)
    t(lambda: p.grad_dtype)

    def set_plain():
        p.grad_dtype = L.float64
        return p.grad_dtype
    t(set_plain)
    x.grad_dtype = None
    (x * 2).sum().backward()
    t(lambda: (x.grad.dtype, x.grad.tolist()))

    def assign_any():
        x.grad = L.ones(2, dtype=L.float64)
        return x.grad.dtype
    t(assign_any)
    x2 = L.zeros(2, requires_grad=True)

    def assign_other():
        x2.grad = L.ones(2, dtype=L.float64)
    t(assign_other)
    x3 = L.zeros(2, dtype=L.bfloat16, requires_grad=True)
    x3.grad_dtype = L.float32
    (x3.float() * 3).sum().backward()
    t(lambda: (x3.grad.dtype, x3.grad.tolist()))
    (x3 * 3.1).sum().backward()
    t(lambda: (x3.grad.dtype, x3.grad.tolist()))

    def assign_own_dtype():
        x3.grad = L.ones(2, dtype=L.bfloat16)
    t(assign_own_dtype)
    x4 = L.zeros(2, requires_grad=True)
    x4.grad_dtype = L.float16
    t(lambda: L.autograd.grad((x4 * 2).sum(), x4)[0].dtype)
    (x4 * 2).sum().backward()
    t(lambda: x4.grad.dtype)

    def set_str():
        x4.grad_dtype = "a"
    t(set_str)

    def set_over_grad():
        x4.grad_dtype = L.float64
    t(set_over_grad)
    x4.grad = None
    x4.grad_dtype = L.float64
    t(lambda: (x4.detach().grad_dtype, x4.grad_dtype))
    t(lambda: L.nn.Parameter(L.zeros(2)).grad_dtype)
    return out


def test_grad_dtype_against_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _scenario(ft) == _scenario(torch)


def _bf16_training(L, wrap, flip_at=None):
    """A bfloat16 linear whose parameters accumulate float32 gradients, 5 SGD steps by hand (``p.sub_(lr * g)``:
    computed in float32, rounded into the bfloat16 parameter; ``flip_at``: grad_dtype set back to the default
    before that step)."""
    lin = L.nn.Linear(4, 3).to(L.bfloat16)
    with L.no_grad():
        lin.weight.copy_(L.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=L.bfloat16))
        lin.bias.zero_()
    for p in lin.parameters():
        p.grad_dtype = L.float32
    x = L.tensor(np.linspace(0, 1, 8).reshape(2, 4), dtype=L.bfloat16)

    def step():
        for p in lin.parameters():
            p.grad = None
        loss = (lin(x).float() ** 2).sum()
        loss.backward()
        with L.no_grad():
            for p in lin.parameters():
                p.sub_(0.1 * p.grad)
        return loss
    step = wrap(step)
    out = []
    for i in range(5):
        if i == flip_at:
            for p in lin.parameters():
                p.grad = None
                p.grad_dtype = None
        loss = step()
        out.append((loss.item(), str(lin.weight.grad.dtype), lin.weight.grad.float().tolist(),
                    lin.weight.float().tolist()))
    return out


def test_bf16_parameters_with_float32_grads():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _bf16_training(torch, lambda f: f)
        assert _bf16_training(ft, lambda f: f) == want
        assert want[0][1] == "torch.float32"


def test_compiled_step_follows_grad_dtype():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for flip in (None, 3):
            assert _bf16_training(ft, ft.compile, flip) == _bf16_training(ft, lambda f: f, flip)


def test_optimizers_refuse_a_gradient_of_another_dtype():
    """torch's optimizers each have their own mixed-dtype arithmetic (SGD promotes, Adam's lerp_ refuses): the
    facade's refuse such a step by name, before anything is updated."""
    p = ft.nn.Parameter(ft.tensor([0.5, -0.25], dtype=ft.bfloat16))
    p.grad_dtype = ft.float32
    (p.float() * 3).sum().backward()
    opt = ft.optim.SGD([p], lr=0.1)
    try:
        opt.step()
    except RuntimeError as e:
        assert str(e).startswith("SGD.step(): a torch.float32 gradient for a torch.bfloat16 parameter "
                                 "(Tensor.grad_dtype) is not supported")
    else:
        raise AssertionError("no error")
    assert p.tolist() == [0.5, -0.25] and not opt.state


def test_copies_and_saves_reset_grad_dtype():
    """grad_dtype is autograd metadata in torch: copy, deepcopy, pickle and torch.save/load give the dtype back
    (attributes a user set on the tensor travel)."""
    import copy
    import io
    import pickle

    def run(L):
        x = L.zeros(2, requires_grad=True)
        x.grad_dtype = L.float64
        x.note = 3
        p = L.nn.Parameter(L.zeros(2))
        p.grad_dtype = L.float64
        buf = io.BytesIO()
        L.save([x, p], buf)
        buf.seek(0)
        loaded = L.load(buf, weights_only=False)
        made = [copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x)), copy.deepcopy(p), *loaded]
        return [str(t.grad_dtype) for t in made] + [copy.deepcopy(x).note, loaded[0].note, str(x.grad_dtype)]
    assert run(ft) == run(torch)
