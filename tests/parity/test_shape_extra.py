"""Shape and matrix-building functions added after the first op table, against real torch: ``Tensor.unfold``,
``broadcast_to``, ``diff``, ``kron``, ``tensordot``, ``trace``, ``rot90``, ``fliplr``/``flipud``, ``atleast_*d``,
``block_diag``, ``cartesian_prod``, ``combinations``, ``column_stack``/``row_stack``/``dstack``, ``hsplit``/
``vsplit``/``dsplit``, ``split_with_sizes``, ``diag_embed``/``diagflat``, ``vander``, the window functions and
``is_nonzero``/``is_same_size``/``is_signed``: values, dtypes, shapes, grad_fn names, gradients, whether the
result is a view, and PyTorch's exceptions. (The op-table rows among them are also in the dtype and gradient
sweeps: tests/parity/_cases_shape.py.)"""
import numpy as np
import pytest
import torch

import functorch_lite as ft

R = np.random.default_rng(5)
A = R.standard_normal((3, 4))
B = R.standard_normal((4, 2))
V = R.standard_normal(5)


def _grad_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _run(mod, fn, arrays, grad):
    ts = [mod.tensor(a, requires_grad=grad and np.asarray(a).dtype.kind == "f") for a in arrays]
    out = fn(mod, *ts)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if grad and any(t.requires_grad for t in ts):
        total = sum((o.double() * (i + 1.5)).sum() for i, o in enumerate(outs) if o.requires_grad)
        if not isinstance(total, int):
            total.backward()
    return type(out), outs, [t.grad for t in ts], ts


def _same(fn, arrays, grad=True, views=None):
    t_type, t_out, t_g, t_in = _run(torch, fn, arrays, grad)
    f_type, f_out, f_g, f_in = _run(ft, fn, arrays, grad)
    assert (f_type is tuple) == (t_type is tuple) and len(f_out) == len(t_out)
    for f, t in zip(f_out, t_out):
        assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape)
        np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
        assert _grad_name(f) == _grad_name(t)
        if views is not None:  # a view of the input (shares its storage), as torch's
            assert (f._base is not None) == (t._base is not None) == views
        else:
            assert (f._base is not None) == (t._base is not None)
        # returned as the input itself where torch returns it
        assert any(f is x for x in f_in) == any(t is x for x in t_in)
    for f, t in zip(f_g, t_g):
        assert (f is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


CASES = {
    "unfold": ([A], lambda m, a: a.unfold(1, 2, 1)),
    "unfold_step": ([R.standard_normal((2, 7, 3))], lambda m, a: a.unfold(-2, 3, 2)),
    "unfold_full": ([A], lambda m, a: a.unfold(0, 3, 5)),
    "unfold_0d": ([np.array(2.5)], lambda m, a: a.unfold(0, 1, 1)),
    "broadcast_to": ([A[:1]], lambda m, a: a.broadcast_to((2, -1, 4))),
    "broadcast_to_fn": ([V], lambda m, a: m.broadcast_to(a, (3, 5))),
    "diff": ([A], lambda m, a: m.diff(a)),
    "diff_n2_dim0": ([A], lambda m, a: a.diff(n=2, dim=0)),
    "diff_prepend_append": ([A, A[:, :2], A[:, :1]], lambda m, a, p, q: m.diff(a, prepend=p, append=q)),
    "diff_past_length": ([V], lambda m, a: m.diff(a, n=7)),
    "diff_int": ([np.array([1, 5, 2, 9])], lambda m, a: m.diff(a)),
    "diff_bool": ([np.array([True, False, False, True])], lambda m, a: m.diff(a)),
    "diff_n0": ([V], lambda m, a: m.diff(a, n=0)),
    "kron": ([A, B], lambda m, a, b: m.kron(a, b)),
    "kron_ranks": ([V, A], lambda m, a, b: a.kron(b)),
    "tensordot_int": ([A, B], lambda m, a, b: m.tensordot(a, b, 1)),
    "tensordot_lists": ([R.standard_normal((3, 4, 5)), R.standard_normal((5, 3, 2))],
                        lambda m, a, b: m.tensordot(a, b, dims=([0, 2], [1, 0]))),
    "tensordot_zero": ([V, V[:3]], lambda m, a, b: m.tensordot(a, b, 0)),
    "trace": ([A], lambda m, a: a.trace()),
    "trace_int": ([np.array([[1, 2], [3, 4]], dtype=np.int32)], lambda m, a: m.trace(a)),
    "rot90": ([A], lambda m, a: m.rot90(a)),
    "rot90_k": ([R.standard_normal((2, 3, 4))], lambda m, a: (a.rot90(2, [1, 2]), a.rot90(-1, [2, 0]),
                                                              m.rot90(a, 4))),
    "fliplr_flipud": ([A], lambda m, a: (m.fliplr(a), a.flipud())),
    "atleast": ([np.array(3.0), V, A], lambda m, s, v, a: (m.atleast_1d(s), m.atleast_1d(v), m.atleast_2d(s),
                                                          m.atleast_2d(v), m.atleast_3d(s), m.atleast_3d(v),
                                                          m.atleast_3d(a))),
    "atleast_tuple": ([V, A], lambda m, v, a: m.atleast_2d(v, a)),
    "atleast_list": ([V], lambda m, v: m.atleast_3d([v])),
    "block_diag": ([A, V, np.array(2.0), B], lambda m, a, v, s, b: m.block_diag(a, v, s, b)),
    "block_diag_promote": ([A, np.array([[1, 2]])], lambda m, a, i: m.block_diag(a, i)),
    "cartesian_prod": ([V[:3], V[1:3], V[:2]], lambda m, a, b, c: m.cartesian_prod(a, b, c)),
    "cartesian_prod_one": ([V], lambda m, a: m.cartesian_prod(a)),
    "combinations": ([V[:4]], lambda m, a: (m.combinations(a), m.combinations(a, 3),
                                            m.combinations(a, 2, with_replacement=True))),
    "combinations_edges": ([V[:3]], lambda m, a: (m.combinations(a, 4), m.combinations(a, 1))),
    "stacks": ([V[:4], A], lambda m, v, a: (m.column_stack([v[:3], a]), m.row_stack((v, a[0])),
                                            m.dstack([v, v]), m.dstack((a, a)))),
    "splits": ([R.standard_normal((4, 6, 2))], lambda m, a: (*m.hsplit(a, 3), *m.vsplit(a, [1, 3]),
                                                             *m.dsplit(a, 2), *a.hsplit([4]))),
    "hsplit_1d": ([V], lambda m, v: m.hsplit(v[:4], 2)),
    # one piece: its backward once passed a bare cotangent for the body's 1-tuple output (a JAX tree error)
    "split_one_piece": ([V[:3]], lambda m, a: ((a * 2).split(3)[0], a[None].unbind(0)[0],
                                               *(a * 1).split_with_sizes([3]))),
    "split_with_sizes": ([A], lambda m, a: (*m.split_with_sizes(a, [1, 2]), *a.split_with_sizes([3, 1], dim=1))),
    "diag_embed": ([A], lambda m, a: (m.diag_embed(a), a.diag_embed(-1), m.diag_embed(a, 2, 0, 2))),
    "diagflat": ([A], lambda m, a: (m.diagflat(a), a.diagflat(-2))),
    "vander_int": ([np.array([1, 2, 3])], lambda m, v: m.vander(v)),
}


def test_vander():
    """(no gradient comparison: torch's own vander backward fails, "modified by an inplace operation")"""
    v = V[:3]
    _same(lambda m, v: (m.vander(v), m.vander(v, 4, increasing=True), m.vander(v, 1), m.vander(v, 0)), [v],
          grad=False)
    x = ft.tensor(v, requires_grad=True)
    ft.vander(x, 3).sum().backward()  # d/dx (x^2 + x + 1) = 2x + 1
    np.testing.assert_allclose(x.grad.numpy(), 2 * v + 1, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    arrays, fn = CASES[name]
    _same(fn, arrays)


def test_unfold_is_a_view_with_torchs_strides_and_writes_through():
    for mod in (torch, ft):
        x = mod.arange(12.).reshape(3, 4)
        u = x.unfold(1, 2, 2)
        assert u.stride() == (4, 2, 1) and u.is_contiguous()
        w = x.unfold(1, 2, 1)
        assert w.stride() == (4, 1, 1) and not w.is_contiguous()
        u[1, 0, 1] = 100.0
        assert x[1, 1].item() == 100.0
        x[2, 3] = -1.0
        assert u[2, 1, 1].item() == -1.0
    # overlapping windows: each element's gradient counts the windows it is in
    g = {}
    for mod in (torch, ft):
        x = mod.ones(7, requires_grad=True)
        x.unfold(0, 3, 2).sum().backward()
        g[mod] = x.grad.numpy()
    np.testing.assert_array_equal(g[ft], g[torch])
    np.testing.assert_array_equal(g[ft], [1, 1, 2, 1, 2, 1, 1])


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_windows(name):
    for args, kw in (((0,), {}), ((1,), {}), ((8,), {}), ((7, False), {}), ((6,), {"dtype": "float64"}),
                     ((5,), {"requires_grad": True})):
        kt = {k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()}
        kf = {k: getattr(ft, v) if k == "dtype" else v for k, v in kw.items()}
        t, f = getattr(torch, name)(*args, **kt), getattr(ft, name)(*args, **kf)
        assert str(f.dtype) == str(t.dtype) and f.requires_grad == t.requires_grad
        # (float32 windows: torch evaluates them in float32 -- its kaiser's Bessel I0 a few ulp off -- this in
        # float64, rounded once)
        tol = 1e-6 if name == "kaiser_window" and f.dtype == ft.float32 else 2e-7
        np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=tol, atol=1e-7)
    np.testing.assert_allclose(ft.hamming_window(6, True, 0.5, 0.5).numpy(),
                               torch.hamming_window(6, True, 0.5, 0.5).numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ft.kaiser_window(6, False, 5.0).numpy(), torch.kaiser_window(6, False, 5.0).numpy(),
                               rtol=1e-6, atol=1e-7)
    for mod in (torch, ft):
        with pytest.raises(RuntimeError, match=f"^{name} requires non-negative window_length, got window_length=-1$"):
            getattr(mod, name)(-1)
        with pytest.raises(RuntimeError, match=rf"^{name} expects floating point dtypes, got: TensorOptions\(dtype=long "):
            getattr(mod, name)(3, dtype=mod.int64)


def test_predicates():
    for mod in (torch, ft):
        assert mod.tensor([2.0]).is_nonzero() is True and mod.is_nonzero(mod.tensor(0)) is False
        with pytest.raises(RuntimeError, match="^Boolean value of Tensor with more than one value is ambiguous$"):
            mod.ones(2).is_nonzero()
        with pytest.raises(RuntimeError, match="^Boolean value of Tensor with no values is ambiguous$"):
            mod.ones(0).is_nonzero()
        assert mod.is_same_size(mod.ones(2, 3), mod.zeros(2, 3)) and not mod.ones(2).is_same_size(mod.ones(3))
        assert mod.ones(1).is_signed() and not mod.is_signed(mod.ones(1, dtype=mod.uint8))
        assert mod.ones(1, dtype=mod.int8).is_signed() and not mod.ones(1, dtype=mod.bool).is_signed()
        assert tuple(mod.block_diag().shape) == (1, 0) and mod.block_diag().dtype == mod.float32


ERRORS = [
    lambda m: m.ones(3, 4).unfold(1, 5, 1),
    lambda m: m.ones(3, 4).unfold(1, 2, 0),
    lambda m: m.ones(3, 4).unfold(1, -1, 1),
    lambda m: m.ones(3, 4).unfold(2, 1, 1),
    lambda m: m.ones(3, 4).broadcast_to((2, 3)),
    lambda m: m.diff(m.tensor(1.0)),
    lambda m: m.diff(m.ones(3), n=-1),
    lambda m: m.diff(m.ones(2, 3), prepend=m.ones(3)),
    lambda m: m.diff(m.ones(2, 3), prepend=m.ones(3, 3)),
    lambda m: m.tensordot(m.ones(2, 3), m.ones(2, 3), dims=1),
    lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 3), dims=([0, 1], [0])),
    lambda m: m.trace(m.ones(3)),
    lambda m: m.trace(m.ones(2, 2, dtype=m.bool)),
    lambda m: m.rot90(m.ones(3)),
    lambda m: m.rot90(m.ones(3, 3), 1, [0, 0]),
    lambda m: m.rot90(m.ones(3, 3), 1, [0]),
    lambda m: m.rot90(m.ones(3, 3), 1, [0, 2]),
    lambda m: m.rot90(m.ones(3, 3), 1, [0, -2]),
    lambda m: m.tensordot(m.ones(2, 3, 4), m.ones(2, 3), dims=([-1], [1])),
    lambda m: m.ones(2, 3, 4).expand(1, 3, 5),
    lambda m: m.fliplr(m.ones(3)),
    lambda m: m.flipud(m.tensor(1.0)),
    lambda m: m.block_diag(m.ones(2, 2, 2)),
    lambda m: m.cartesian_prod(m.ones(2, 2), m.ones(2)),
    lambda m: m.cartesian_prod(m.ones(2), m.ones(2, dtype=m.int64)),
    lambda m: m.combinations(m.ones(2, 2)),
    lambda m: m.combinations(m.ones(2), -1),
    lambda m: m.hsplit(m.ones(2, 3), 2),
    lambda m: m.hsplit(m.tensor(1.0), 1),
    lambda m: m.vsplit(m.ones(3), 1),
    lambda m: m.dsplit(m.ones(2, 2), 1),
    lambda m: m.split_with_sizes(m.ones(5), [2, 2]),
    lambda m: m.diag_embed(m.ones(3), 0, 0, 0),
    lambda m: m.diag_embed(m.ones(3), 0, 0, 3),
    lambda m: m.vander(m.ones(2, 2)),
    lambda m: m.vander(m.ones(2), -1),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    errs = []
    for mod in (torch, ft):
        with pytest.raises(Exception) as e:
            ERRORS[i](mod)
        errs.append(e.value)
    t, f = errs
    assert type(f) is type(t) and str(f) == str(t)
