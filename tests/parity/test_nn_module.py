"""Parity of ``functorch_lite.nn`` modules with ``torch.nn`` (module API: registration, traversal order and
names, state_dict and its strict-load errors, train/eval, hooks, repr; Linear init; MLP forward/backward with
torch's weights copied in; grad_fn names per spec §6.6 / AG-55)."""
from __future__ import annotations

import math
import re
from collections import OrderedDict

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.nn as nn

import _parity


def _sd(tm: torch.nn.Module) -> dict:
    """torch's state_dict as facade tensors."""
    return {k: ft.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}


def _host(x) -> np.ndarray:
    return np.asarray(x.detach().numpy())


def _both(build):
    """Build the same architecture with torch.nn and functorch_lite.nn; copy torch's weights into ours."""
    tm, fm = build(torch.nn), build(nn)
    r = fm.load_state_dict(_sd(tm))
    assert r.missing_keys == [] and r.unexpected_keys == []
    return tm, fm


def _mlp(m):
    return m.Sequential(m.Linear(4, 8), m.ReLU(), m.Linear(8, 8), m.Tanh(), m.Linear(8, 3))


class Net:
    """A nested custom module defined once for both libraries."""

    @staticmethod
    def make(m):
        class Block(m.Module):
            def __init__(self):
                super().__init__()
                self.fc = m.Linear(3, 3)
                self.act = m.GELU()
                self.register_buffer("scale", (torch if m is torch.nn else ft).ones(3))
                self.register_buffer("tmp", (torch if m is torch.nn else ft).zeros(2), persistent=False)

            def forward(self, x):
                return self.act(self.fc(x)) * self.scale

        class Model(m.Module):
            def __init__(self):
                super().__init__()
                self.inp = m.Linear(2, 3, bias=False)
                self.blocks = m.ModuleList([Block(), Block()])
                self.head = m.Sequential(m.Flatten(), m.Linear(3, 2))
                self.shared = self.inp  # shared module: visited once
                self.extra = m.Parameter((torch if m is torch.nn else ft).zeros(2))

            def forward(self, x):
                x = self.inp(x)
                for b in self.blocks:
                    x = b(x)
                return self.head(x)
        return Model()


# ---- Parameter -----------------------------------------------------------------------------
def test_parameter_shares_data_and_repr():
    t = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    x = ft.tensor([1.0, 2.0])
    p = nn.Parameter(x)
    assert repr(p) == repr(t)
    assert str(p) == str(t) and f"{p}" == f"{t}"  # (print shows the header too)
    assert isinstance(p, ft.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    p.data.mul_(3)
    np.testing.assert_allclose(_host(x), [3.0, 6.0])  # shares storage with data
    assert repr(nn.Parameter(ft.ones(1), requires_grad=False)) == repr(
        torch.nn.Parameter(torch.ones(1), requires_grad=False))
    assert type(p * 2) is ft.Tensor  # ops on a Parameter give plain tensors (as torch)


# ---- traversal and naming ----------------------------------------------------------------------
def test_named_members_order_names_and_dedup():
    tm, fm = Net.make(torch.nn), Net.make(nn)
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in fm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert [n for n, _ in fm.named_modules()] == [n for n, _ in tm.named_modules()]
    assert [n for n, _ in fm.named_children()] == [n for n, _ in tm.named_children()]
    assert len(list(fm.parameters())) == len(list(tm.parameters()))
    assert len(list(fm.modules())) == len(list(tm.modules()))
    assert len(list(fm.children())) == len(list(tm.children()))
    assert [n for n, _ in fm.named_parameters(prefix="m", recurse=False)] == \
        [n for n, _ in tm.named_parameters(prefix="m", recurse=False)]


def test_state_dict_keys_persistent_and_detached():
    tm, fm = Net.make(torch.nn), Net.make(nn)
    sd = fm.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == list(tm.state_dict())
    assert "blocks.0.tmp" not in sd
    assert all(not v.requires_grad for v in sd.values())
    assert fm.state_dict(keep_vars=True)["extra"] is fm.extra


def test_load_state_dict_strict_missing_unexpected_messages():
    tl, fl = torch.nn.Linear(3, 2), nn.Linear(3, 2)
    tsd, fsd = tl.state_dict(), fl.state_dict()
    del tsd["bias"], fsd["bias"]
    tsd["extra"], fsd["extra"] = torch.zeros(1), ft.zeros(1)
    with pytest.raises(RuntimeError) as te:
        tl.load_state_dict(tsd)
    with pytest.raises(RuntimeError, match=re.escape(str(te.value))):
        fl.load_state_dict(fsd)
    tr, fr = tl.load_state_dict(tsd, strict=False), fl.load_state_dict(fsd, strict=False)
    assert (fr.missing_keys, fr.unexpected_keys) == (tr.missing_keys, tr.unexpected_keys) == (["bias"], ["extra"])
    assert repr(fl.load_state_dict(fl.state_dict())) == repr(tl.load_state_dict(tl.state_dict()))


def test_load_state_dict_size_mismatch_message():
    tl, fl = torch.nn.Linear(3, 2), nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as te:
        tl.load_state_dict({"weight": torch.zeros(2, 4), "bias": torch.zeros(2)})
    with pytest.raises(RuntimeError, match=re.escape(str(te.value))):
        fl.load_state_dict({"weight": ft.zeros(2, 4), "bias": ft.zeros(2)})


def test_load_state_dict_copies_in_place_keeps_identity():
    fl = nn.Linear(3, 2)
    w = fl.weight
    fl.load_state_dict({"weight": ft.ones(2, 3), "bias": ft.zeros(2)})
    assert fl.weight is w and w.requires_grad and w.is_leaf
    np.testing.assert_allclose(_host(w), np.ones((2, 3)))


# ---- repr ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("build", [
    lambda m: m.Linear(3, 2),
    lambda m: m.Linear(3, 2, bias=False),
    _mlp,
    lambda m: m.Sequential(m.Flatten(), m.Dropout(0.2), m.GELU(), m.SiLU(), m.Sigmoid(), m.Identity(),
                           m.Softmax(dim=1), m.LogSoftmax(dim=-1)),
    lambda m: m.Sequential(m.Sequential(m.Linear(1, 1)), m.ModuleList([m.ReLU(), m.Linear(2, 2)])),
    lambda m: m.ModuleDict({"a": m.Linear(1, 2), "b": m.Tanh()}),
    lambda m: m.Sequential(m.MSELoss(), m.CrossEntropyLoss(), m.NLLLoss()),
    Net.make,
])
def test_repr_matches_torch(build):
    assert repr(build(nn)) == repr(build(torch.nn))


def test_extra_repr_custom_module():
    def make(m):
        class Custom(m.Module):
            def extra_repr(self):
                return "k=1"
        c = Custom()
        c.child = m.Linear(1, 1)
        return c
    assert repr(make(nn)) == repr(make(torch.nn))


# ---- containers ------------------------------------------------------------------------------------
def test_sequential_modulelist_moduledict_parameterlist():
    s = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    assert len(s) == 2 and isinstance(s[0], nn.Linear) and isinstance(s[-1], nn.ReLU)
    s.append(nn.Tanh())
    assert [type(m).__name__ for m in s] == ["Linear", "ReLU", "Tanh"]
    assert isinstance(s[1:], nn.Sequential) and len(s[1:]) == 2
    with pytest.raises(IndexError):
        s[5]
    ml = nn.ModuleList([nn.ReLU()])
    ml.append(nn.Linear(1, 1))
    assert len(ml) == 2 and [n for n, _ in ml.named_parameters()] == ["1.weight", "1.bias"]
    md = nn.ModuleDict({"x": nn.Linear(1, 1)})
    md["y"] = nn.ReLU()
    assert list(md.keys()) == ["x", "y"] and "y" in md
    pl = nn.ParameterList([nn.Parameter(ft.ones(2)), ft.zeros(3)])
    tpl = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2)), torch.zeros(3)])
    assert [n for n, _ in pl.named_parameters()] == [n for n, _ in tpl.named_parameters()]
    assert all(isinstance(p, nn.Parameter) for p in pl)
    assert repr(pl) == repr(tpl)


def test_sequential_and_modulelist_item_assignment():
    for lib in (nn, torch.nn):
        s = lib.Sequential(lib.ReLU(), lib.Tanh())
        s[-1] = lib.GELU()
        s[0] = lib.Linear(2, 2)
        assert [n for n, _ in s.named_children()] == ["0", "1"] and isinstance(s[1], lib.GELU)
        assert [n for n, _ in s.named_parameters()] == ["0.weight", "0.bias"]
        ml = lib.ModuleList([lib.ReLU()])
        ml[0] = lib.Tanh()
        assert isinstance(ml[0], lib.Tanh)
    for bad in (lambda m: m.Sequential(m.ReLU()).__setitem__(5, m.ReLU()),
                lambda m: m.ModuleList([m.ReLU()]).__setitem__(-3, m.ReLU()),
                lambda m: m.Sequential(m.ReLU()).__setitem__(0, 3)):
        (_, t_err), (f_out, f_err) = _parity.run(bad, torch.nn), _parity.run(bad, nn)
        assert t_err is not None
        _parity.assert_same_error(t_err, f_err, f_out)


# ---- modes, grads, dtype --------------------------------------------------------------------------
def test_train_eval_flags_recursive():
    tm, fm = _mlp(torch.nn), _mlp(nn)
    assert fm.training and all(m.training for m in fm.modules())
    assert fm.eval() is fm
    assert not any(m.training for m in fm.modules())
    fm.train()
    assert all(m.training for m in fm.modules())
    with pytest.raises(ValueError, match=re.escape("training mode is expected to be boolean")):
        fm.train("yes")
    with pytest.raises(ValueError, match=re.escape("training mode is expected to be boolean")):
        tm.train("yes")


def test_zero_grad_and_requires_grad_():
    fm = _mlp(nn)
    fm(ft.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in fm.parameters())
    fm.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0.0 for p in fm.parameters())
    fm.zero_grad()
    assert all(p.grad is None for p in fm.parameters())
    fm.requires_grad_(False)
    assert not any(p.requires_grad for p in fm.parameters())


def test_to_double_float_keep_parameter_identity():
    fm = _mlp(nn)
    ids = [id(p) for p in fm.parameters()]
    assert fm.double() is fm
    assert [id(p) for p in fm.parameters()] == ids
    assert all(str(p.dtype) == "torch.float64" and isinstance(p, nn.Parameter) and p.requires_grad
               for p in fm.parameters())
    out = fm(ft.randn(2, 4, dtype=ft.float64))
    assert str(out.dtype) == "torch.float64"
    fm.to(ft.float32)
    assert all(str(p.dtype) == "torch.float32" for p in fm.parameters())
    fm.float().cpu()
    assert [id(p) for p in fm.parameters()] == ids


def test_apply_order_matches_torch():
    seen_t, seen_f = [], []
    _mlp(torch.nn).apply(lambda m: seen_t.append(type(m).__name__))
    _mlp(nn).apply(lambda m: seen_f.append(type(m).__name__))
    assert seen_f == seen_t


def test_forward_hooks_pre_and_post_and_remove():
    fl = nn.Linear(2, 2)
    calls = []
    h1 = fl.register_forward_pre_hook(lambda m, args: calls.append(("pre", m is fl, len(args))))
    h2 = fl.register_forward_hook(lambda m, args, out: out * 0)
    out = fl(ft.ones(1, 2))
    assert calls == [("pre", True, 1)]
    np.testing.assert_allclose(_host(out), np.zeros((1, 2)))
    h1.remove()
    h2.remove()
    assert float(fl(ft.ones(1, 2)).detach().abs().sum()) > 0 and len(calls) == 1
    h3 = fl.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    np.testing.assert_allclose(_host(fl(ft.ones(1, 2))), _host(fl.bias)[None])
    h3.remove()


def _hook_run(L, x0, *, input_grad=True):
    """A two-layer model with full backward hooks (one rewriting grad_input, a pre-hook rewriting grad_output)
    on its first layer: what the hooks saw and the gradients that came out."""
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2))
    g = np.random.default_rng(1)
    with L.no_grad():
        for p in m.parameters():
            p.copy_(L.tensor(g.standard_normal(tuple(p.shape)).astype(np.float32)))
    seen = []

    def full(mod, gin, gout):
        seen.append(("full", [None if t is None else t.detach().numpy().copy() for t in gin],
                     [t.detach().numpy().copy() for t in gout]))
        return None if gin[0] is None else (gin[0] * 2,)

    def pre(mod, gout):
        seen.append(("pre", [t.detach().numpy().copy() for t in gout]))
        return (gout[0] * 3,)
    h1 = m[0].register_full_backward_hook(full)
    h2 = m[0].register_full_backward_pre_hook(pre)
    x = L.tensor(x0, requires_grad=input_grad)
    (m(x) ** 2).sum().backward()
    h1.remove()
    h2.remove()
    return seen, (x.grad.numpy() if input_grad else None), [p.grad.numpy() for p in m.parameters()]


@pytest.mark.parametrize("input_grad", [True, False])
def test_full_backward_hooks_see_and_replace_gradients_as_torch(input_grad):
    """grad_output rewritten by the pre-hook, grad_input by the hook (x.grad doubles); with no input requiring
    grad the hook fires on the output side with grad_input (None,) and warns, as torch."""
    x0 = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
    with pytest.warns(UserWarning, match="no inputs require gradients") if not input_grad else _nullcontext():
        ours = _hook_run(ft, x0, input_grad=input_grad)
    with pytest.warns(UserWarning, match="no inputs require gradients") if not input_grad else _nullcontext():
        theirs = _hook_run(torch, x0, input_grad=input_grad)
    assert [e[0] for e in ours[0]] == [e[0] for e in theirs[0]] == ["pre", "full"]
    for a, b in zip(ours[0], theirs[0]):
        for xs, ys in zip(a[1:], b[1:]):
            assert [y is None for y in ys] == [x is None for x in xs]
            for xv, yv in zip(xs, ys):
                if yv is not None:
                    np.testing.assert_allclose(xv, yv, rtol=1e-5, atol=1e-6)
    if input_grad:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _nullcontext():
    import contextlib
    return contextlib.nullcontext()


def test_forward_hook_options_with_kwargs_prepend_always_call():
    def run(L):
        class M(L.nn.Module):
            def forward(self, x, scale=1.0):
                if scale < 0:
                    raise ValueError("negative scale")
                return x * scale
        m, log = M(), []
        m.register_forward_pre_hook(lambda mod, a, kw: (a, {**kw, "scale": kw.get("scale", 1.0) * 2}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, a, kw, out: log.append(sorted(kw)) or out + 1, with_kwargs=True)
        m.register_forward_hook(lambda mod, a, out: log.append("first"), prepend=True)
        h = m.register_forward_hook(lambda mod, a, out: log.append(None if out is None else out.tolist()),
                                    always_call=True)
        r = m(L.ones(2), scale=3.0).tolist()
        with pytest.raises(ValueError):
            m(L.ones(2), scale=-1.0)
        with h:
            pass                              # a handle is a context manager that removes its hook
        m(L.ones(2))
        return r, log, isinstance(h.id, int)
    assert run(ft) == run(torch)


def test_get_submodule_and_loading_a_state_dict_without_num_batches_tracked():
    """An old checkpoint (a plain dict, no version metadata) without BatchNorm's num_batches_tracked loads, the
    counter kept; get_submodule's paths and errors are torch's."""
    res = []
    for L in (ft, torch):
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.Sequential(L.nn.BatchNorm1d(2)))
        m[1][0].num_batches_tracked.fill_(4)
        sd = {k: v for k, v in m.state_dict().items() if "num_batches_tracked" not in k}
        r = m.load_state_dict(sd)
        errs = []
        for t in ("2", "0.weight", "1.x"):
            with pytest.raises(AttributeError) as e:
                m.get_submodule(t)
            errs.append(str(e.value))
        res.append((r.missing_keys, int(m[1][0].num_batches_tracked), type(m.get_submodule("1.0")).__name__,
                    m.get_submodule("") is m, errs))
    assert res[0] == res[1]


def test_setattr_errors_match_torch():
    tl, fl = torch.nn.Linear(1, 1), nn.Linear(1, 1)
    with pytest.raises(TypeError) as te:
        tl.weight = torch.zeros(1, 1)
    with pytest.raises(TypeError, match=re.escape(str(te.value))):
        fl.weight = ft.zeros(1, 1)
    with pytest.raises(AttributeError, match=re.escape("'Linear' object has no attribute 'nope'")):
        fl.nope
    with pytest.raises(TypeError) as te:
        tl.weight = 3
    with pytest.raises(TypeError, match=re.escape(str(te.value))):
        fl.weight = 3
    fl.bias = None
    assert [n for n, _ in fl.named_parameters()] == ["weight"]


# ---- Linear init and numerics -------------------------------------------------------------------
def test_linear_default_init_bounds_shape_dtype():
    ft.manual_seed(0)
    fl = nn.Linear(16, 300)
    bound = 1 / math.sqrt(16)
    w, b = _host(fl.weight), _host(fl.bias)
    assert tuple(fl.weight.shape) == (300, 16) and tuple(fl.bias.shape) == (300,)
    assert str(fl.weight.dtype) == "torch.float32" and fl.weight.requires_grad
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound and abs(w.mean()) < 0.02  # spread over the whole interval
    ft.manual_seed(0)
    np.testing.assert_array_equal(_host(nn.Linear(16, 300).weight), w)  # reproducible under manual_seed
    assert str(nn.Linear(2, 2, dtype=ft.float64).weight.dtype) == "torch.float64"


@pytest.mark.parametrize("shape", [(5, 4), (2, 5, 4), (4,)])
def test_mlp_forward_backward_with_torch_weights(shape):
    tm, fm = _both(_mlp)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    to, fo = tm(torch.tensor(x)), fm(ft.tensor(x))
    np.testing.assert_allclose(_host(fo), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert fo.grad_fn.name() == type(to.grad_fn).__name__
    to.square().sum().backward()
    fo.square().sum().backward()
    for (n, tp), (fn_, fp) in zip(tm.named_parameters(), fm.named_parameters()):
        assert n == fn_
        np.testing.assert_allclose(_host(fp.grad), tp.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_custom_nested_model_forward_backward():
    tm, fm = _both(Net.make)
    x = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)
    to, fo = tm(torch.tensor(x)), fm(ft.tensor(x))
    np.testing.assert_allclose(_host(fo), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    to.sum().backward()
    fo.sum().backward()
    for (n, tp), (_, fp) in zip(tm.named_parameters(), fm.named_parameters()):
        if tp.grad is None:
            assert fp.grad is None, n
        else:
            np.testing.assert_allclose(_host(fp.grad), tp.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=n)


def test_dropout_module_train_eval():
    fd = nn.Dropout(0.5)
    x = ft.ones(1000)
    y = _host(fd(x))
    assert set(np.unique(y)) <= {0.0, 2.0} and 350 < (y == 0).sum() < 650
    fd.eval()
    assert fd(x) is x
    assert nn.Dropout(0.0)(x) is x


@pytest.mark.parametrize("method,dtype", [("half", "float16"), ("bfloat16", "bfloat16"), ("double", "float64"),
                                          ("float", "float32")])
def test_module_dtype_casts_floating_tensors_only(method, dtype):
    res = []
    for lib in (torch, ft):
        m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        out = getattr(m, method)()
        assert out is m
        res.append([(n, str(t.dtype)) for n, t in m.state_dict().items()])
    assert res[0] == res[1]
    assert ("1.num_batches_tracked", "torch.int64") in res[1] and ("0.weight", f"torch.{dtype}") in res[1]
