"""A view taken before an in-place write to its base (or to another view of the same base) has its grad_fn
regenerated from the base's current history, against torch: PyTorch's ``VariableHooks::grad_fn`` gives such a view
an ``AsStridedBackward0`` on the base's grad_fn once the storage's version moved past the one its node was recorded
at. Without it, gradients through the view follow the values it had before the write (silently wrong). Each case
runs the same program in torch and here and compares gradients, values, grad_fn names, versions, or the error."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import run


def _np(t):
    return None if t is None else t.detach().numpy()


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def relu_on_base(lib):
    x = lib.tensor([[1., -2.], [3., -4.]], requires_grad=True)
    h = x * 2
    flat = h.view(-1)
    h.relu_()
    out = {"name": _name(flat), "ver": (flat._version, h._version), "val": _np(flat)}
    (flat * lib.tensor([1., 2, 3, 4])).sum().backward()
    out["x.grad"] = _np(x.grad)
    return out


def setitem_base_then_old_view(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    w = lib.tensor(5., requires_grad=True)
    y = x * 2
    a = y[:2]
    y[1] = w
    nf = a.grad_fn.next_functions[0][0]
    out = {"name": _name(a), "next": nf.name(), "val": _np(a), "ver": (a._version, y._version)}
    (a * lib.tensor([1., 2.])).sum().backward()
    out["x.grad"], out["w.grad"] = _np(x.grad), _np(w.grad)
    return out


def inplace_view_then_overlapping_view(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    a = y[:2]
    b = y[1:3]
    a.mul_(x[:2])
    out = {"a": _name(a), "b": _name(b), "base": y.grad_fn.name(), "val": _np(b)}
    (b * b).sum().backward()
    out["x.grad"] = _np(x.grad)
    return out


def view_of_view_chain(lib):
    x = lib.arange(6.).requires_grad_()
    y = x * 1
    a = y.view(2, 3)
    b = a[1]
    c = b[1:]
    y.exp_()
    out = {"names": (_name(c), _name(b), _name(a)), "val": _np(c)}
    (c * lib.tensor([2., 3.])).sum().backward()
    out["x.grad"] = _np(x.grad)
    return out


def view_of_view_written_through_middle(lib):
    x = lib.arange(6.).requires_grad_()
    w = lib.tensor([1., -1., 2.], requires_grad=True)
    y = x * 1
    a = y.view(2, 3)
    b = a[1]
    row0 = a[0]
    row0.mul_(w)
    a[1, 0] = w[2]
    out = {"names": (_name(b), _name(a), _name(row0)), "val": _np(b)}
    (b * lib.tensor([1., 2, 3])).sum().backward()
    out["x.grad"], out["w.grad"] = _np(x.grad), _np(w.grad)
    return out


def disjoint_view(lib):
    x = lib.tensor([1., 2., 3., 4.], requires_grad=True)
    w = lib.tensor([2., 3.], requires_grad=True)
    y = x * 2
    a = y[:2]
    b = y[2:]
    a.mul_(w)
    out = {"name": _name(b), "val": _np(b)}
    (b * lib.tensor([5., 7.])).sum().backward()
    out["x.grad"], out["w.grad"] = _np(x.grad), _np(w.grad)
    return out


def several_writes_in_sequence(lib):
    x = lib.tensor([0.5, -1., 2., 3.], requires_grad=True)
    w = lib.tensor([1.5, 2., -1., 0.5], requires_grad=True)
    y = x * 1
    v = y[1:]
    y.mul_(w)
    l1 = (v * lib.tensor([1., 2., 3.])).sum()
    y.add_(w)
    y.sin_()
    l2 = (v * lib.tensor([-1., 0.5, 2.])).sum()
    y[0] = w[3] * 4
    v.mul_(2)
    l3 = (y * lib.tensor([1., -1., 1., -1.])).sum()
    out = {"name": _name(v), "val": _np(y), "ver": (v._version, y._version)}
    (l1 + l2 + l3).backward()
    out["x.grad"], out["w.grad"] = _np(x.grad), _np(w.grad)
    return out


def saved_stale_view_then_written(lib):
    # v * v saves v (regenerated: output 0 of AsStrided); v written afterwards: torch's saved-version error
    x = lib.tensor([0.5, -1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[1:]
    y.mul_(2)
    loss = (v * v).sum()
    v.mul_(2)
    loss.backward()


def transposed_view(lib):
    x = lib.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    w = lib.tensor([[1., 0., -1.], [2., 1., 0.5]], requires_grad=True)
    y = x * 1
    t = y.t()
    d = y.diagonal()
    y.mul_(w)
    out = {"names": (_name(t), _name(d)), "val": (_np(t), _np(d))}
    ((t * lib.arange(6.).view(3, 2)).sum() + (d * d).sum()).backward()
    out["x.grad"], out["w.grad"] = _np(x.grad), _np(w.grad)
    return out


def complex_real_view(lib):
    x = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    y = x * 1
    r = y.real
    y.mul_(2j)
    out = {"name": _name(r), "val": _np(r)}
    (r * lib.tensor([1., 2.])).sum().backward()
    out["x.grad"] = _np(x.grad)
    return out


def no_grad_write_to_base(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[:2]
    with lib.no_grad():
        y.mul_(2)
    out = {"name": _name(v), "val": _np(v), "next": v.grad_fn.next_functions[0][0].name()}
    (v * lib.tensor([1., 2.])).sum().backward()
    out["x.grad"] = _np(x.grad)
    return out


def no_grad_write_to_leaf_base(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    v = x[:2]
    with lib.no_grad():
        x.mul_(2)
    out = {"name": _name(v), "next": v.grad_fn.next_functions[0][0].name(), "val": _np(v)}
    (v * lib.tensor([1., 2.])).sum().backward()
    out["x.grad"] = _np(x.grad)
    return out


def no_grad_write_through_view_then_other_view(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 3
    a = y[:2]
    b = y[1:]
    with lib.no_grad():
        a.zero_()
    out = {"names": (_name(a), _name(b)), "val": (_np(a), _np(b))}
    ((a * lib.tensor([1., 2.])).sum() + (b * lib.tensor([3., 4.])).sum()).backward()
    out["x.grad"] = _np(x.grad)
    return out


def no_grad_view_then_no_grad_write(lib):
    # a view made in no_grad mode whose base is then written (even under no_grad): torch's error when it is used
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    with lib.no_grad():
        v = y[:2]
        y.mul_(2)
    assert repr(v).endswith("grad_fn=<Invalid>)")
    with lib.no_grad():
        z = v * 1  # (no graph is recorded: no error)
    assert v.requires_grad
    (v * 1).sum().backward()
    return _np(z)


def multi_view_output_after_base_write(lib):
    y = lib.ones(4, requires_grad=True) * 1
    a, b = y.split(2)
    y.mul_(2)
    return (a * 1).sum()


def multi_view_output_after_no_grad_write(lib):
    y = lib.ones(4, requires_grad=True) * 1
    a, b = y.split(2)
    with lib.no_grad():
        a.mul_(2)
    return (b * 1).sum()


def base_comes_to_require_grad(lib):
    x = lib.zeros(3)
    v = x[:2]
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    x.add_(w)
    out = {"req": v.requires_grad, "name": _name(v), "val": _np(v)}
    (v * lib.tensor([4., 5.])).sum().backward()
    out["w.grad"] = _np(w.grad)
    return out


def base_comes_to_require_grad_used_directly(lib):
    x = lib.zeros(3)
    v = x[1:]
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    x.mul_(w)
    x.add_(w)
    (v * lib.tensor([4., 5.])).sum().backward()
    return {"w.grad": _np(w.grad), "req": v.requires_grad}


def retain_grad_moves(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[:2]
    v.retain_grad()
    y.mul_(2)
    (v * lib.tensor([1., 2.])).sum().backward()
    return {"v.grad": _np(v.grad), "x.grad": _np(x.grad)}


def autograd_grad_wrt_stale_view(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[:2]
    y.mul_(x)
    out = (v * 3).sum() + (y * y).sum()
    gv, gx = lib.autograd.grad(out, (v, x))
    return {"gv": _np(gv), "gx": _np(gx)}


def stale_view_written_in_place(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    w = lib.tensor([2., 3.], requires_grad=True)
    y = x * 1
    a = y[:2]
    b = y[1:]
    b.mul_(w)
    a.mul_(2)
    out = {"names": (_name(a), _name(b)), "base": y.grad_fn.name(), "val": _np(y)}
    (y * lib.tensor([1., 2., 3.])).sum().backward()
    out["x.grad"], out["w.grad"] = _np(x.grad), _np(w.grad)
    return out


def unbind_output_after_setitem(lib):
    y = lib.ones(2, 2, requires_grad=True) * 1
    r0, r1 = y.unbind(0)
    y[0] = 5
    return (r1 * 1).sum()


def custom_function_view_after_base_write(lib):
    class First2(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            return lib.cat([g, g.new_zeros(1)])

    y = lib.ones(3, requires_grad=True) * 1
    v = First2.apply(y)
    y.mul_(2)
    return (v * 1).sum()


def write_through_detached_alias(lib):
    # detach() shares the version counter: the untracked write still regenerates the view's node
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    d = y.detach()
    v = y[:2]
    d.mul_(3)
    out = {"name": _name(v), "val": _np(v)}
    (v * lib.tensor([1., 2.])).sum().backward()
    out["x.grad"] = _np(x.grad)
    return out


def retain_grad_moves_on_own_write(lib):
    # retain_grad() follows the tensor to the node of its in-place write (a base, and a view written through)
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    y.retain_grad()
    y.mul_(2)
    v = y[1:]
    v.retain_grad()
    v.mul_(3)
    ((y * lib.tensor([1., 2., 3.])).sum() + (v * lib.tensor([-1., 5.])).sum()).backward()
    return {"y.grad": _np(y.grad), "v.grad": _np(v.grad), "x.grad": _np(x.grad)}


CASES = [relu_on_base, setitem_base_then_old_view, inplace_view_then_overlapping_view, view_of_view_chain,
         view_of_view_written_through_middle, disjoint_view, several_writes_in_sequence,
         saved_stale_view_then_written, transposed_view, complex_real_view, no_grad_write_to_base,
         no_grad_write_to_leaf_base, no_grad_write_through_view_then_other_view, no_grad_view_then_no_grad_write,
         multi_view_output_after_base_write, multi_view_output_after_no_grad_write, base_comes_to_require_grad,
         base_comes_to_require_grad_used_directly, retain_grad_moves, autograd_grad_wrt_stale_view,
         stale_view_written_in_place, unbind_output_after_setitem, custom_function_view_after_base_write,
         write_through_detached_alias, retain_grad_moves_on_own_write]


def _same(got, want, where="result"):
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), (got, want)
        for k in want:
            _same(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), (where, got, want)
        assert got.shape == want.shape and got.dtype == want.dtype, (where, got, want)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=where)
    else:
        assert got == want, (where, got, want)


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_view_regraph_as_torch(case):
    (want, t_err), (got, f_err) = run(case, torch), run(case, ft)
    if t_err is not None:
        assert f_err is not None, f"torch raised {t_err!r}; functorch_lite returned {got}"
        assert type(f_err) is type(t_err) and str(f_err) == str(t_err), (t_err, f_err)
        return
    assert f_err is None, f"functorch_lite raised {f_err!r}"
    if isinstance(want, torch.Tensor):
        want, got = _np(want), _np(got)
    _same(got, want)
