"""Parity with torch 2.13 for view / storage findings of a red team: views of a tensor whose storage ``resize_``
grows keep their elements (reads and writes, aliases too); ``.data =``'s checks; ``set_`` and ``orthogonal_``
bump ``_version`` as torch's; squeeze's repeated dims, unsqueeze's dim type, narrow's negative length and split's
negative size give torch's errors; ``as_strided_copy`` / ``as_strided_scatter``, ``Tensor.resize``,
``UntypedStorage.resize_`` and ``TypedStorage.__setitem__``; ``resize_`` / ``resize_as_`` with a memory format."""
import warnings

import pytest
import torch

import functorch_lite as ft
from _parity import same, warnings_of


def _grown_slice(m):
    y = m.arange(4.)
    v = y[1:3]
    y.resize_(2, 4)
    return v, y[0], y.stride(), y._version


def _grown_view(m):
    x = m.arange(4.)
    w = x.view(2, 2)
    d = x.detach()
    x.resize_(8)  # (the new elements are uninitialised in torch: written before they are read)
    w[1, 1] = -1
    d[0] = 7
    x[4:] = 5
    x.resize_(3, 4)
    x[2] = 1
    x[2] += w[1, 1]
    return w, d, x[:2], x[2], x.untyped_storage().nbytes(), (x[:2] * 2).sum()


def _grown_view_with_offset(m):
    z = m.arange(6.)[2:]
    z.resize_(6)
    return z[:4], z.storage_offset(), z.untyped_storage().nbytes()


def _shrunk_then_grown(m):
    x = m.arange(6.).view(2, 3)
    x.resize_(3, 3)
    return x[:2], x.shape


@pytest.mark.parametrize("case", [_grown_slice, _grown_view, _grown_view_with_offset, _shrunk_then_grown])
def test_views_of_a_grown_storage_keep_their_elements(case):
    same(case)


def _set_data(value_fn, requires_grad=False):
    def case(m):
        p = m.zeros(2, requires_grad=requires_grad)
        p.data = value_fn(m)
        return str(p.dtype), tuple(p.shape)
    return case


@pytest.mark.parametrize("case", [
    _set_data(lambda m: m.zeros(2, dtype=m.int64), requires_grad=True),
    _set_data(lambda m: m.zeros(2, dtype=m.int64)),
    _set_data(lambda m: m.zeros(3, dtype=m.float64), requires_grad=True),
    _set_data(lambda m: [1, 2]),
    _set_data(lambda m: m.zeros(2, device="meta")),
])
def test_data_setter_checks(case):
    same(case)


def test_data_setter_meta_to_cpu():
    same(lambda m: setattr(m.zeros(2, device="meta"), "data", m.zeros(2)))


def _set_version(m):
    t, s = m.zeros(3), m.ones(5)
    t.add_(1)
    t.set_(s)
    a = (t._version, s._version)
    t.add_(1)
    e = m.zeros(3)
    e.set_()
    u = m.zeros(3)
    u.set_(m.ones(5).untyped_storage(), 0, (2,))
    v = m.zeros(4)
    w = v[:2]
    v.set_(v.untyped_storage(), 0, (2,))
    return a, (t._version, s._version), e._version, u._version, (v._version, w._version), t


def _orthogonal_version(m):
    p, q = m.zeros(3, 3), m.zeros(3, 5)
    m.nn.init.orthogonal_(p)
    m.nn.init.orthogonal_(q, gain=2.)
    return p._version, q._version, (p.t() @ p).diagonal().round(decimals=4), (q @ q.t()).diagonal().round(decimals=4)


@pytest.mark.parametrize("case", [_set_version, _orthogonal_version])
def test_versions(case):
    same(case)


@pytest.mark.parametrize("case", [
    lambda m: m.zeros(1, 3, 1).squeeze((0, 0)),
    lambda m: m.zeros(1, 3, 1).squeeze((0, -3)),
    lambda m: m.zeros(1, 3, 1).squeeze([1, 1]),
    lambda m: m.squeeze(m.zeros(1, 3, 1), (2, 2)),
    lambda m: m.zeros(1, 3, 1).squeeze((0, 2)),
    lambda m: m.zeros(3).unsqueeze((0,)),
    lambda m: m.unsqueeze(m.zeros(3), (0,)),
    lambda m: m.zeros(3).unsqueeze([0]),
    lambda m: m.zeros(3).unsqueeze(m.tensor(0)),
    lambda m: m.zeros(3).narrow(0, 0, -1),
    lambda m: m.narrow(m.zeros(3), 0, 1, -2),
    lambda m: m.narrow(m.zeros(3), 5, 1, -2),
    lambda m: m.zeros(3).narrow(0, 1, 2),
    lambda m: m.zeros(3).split(-1),
    lambda m: m.split(m.zeros(3), -2),
    lambda m: m.zeros(0).split(-1),
    lambda m: m.zeros(3).split(0),
    lambda m: m.zeros(0).split(0),
])
def test_view_argument_errors(case):
    same(case)


def _as_strided_copy(m):
    x = m.arange(6., requires_grad=True)
    y = m.as_strided_copy(x, (2, 2), (1, 2))
    (y * m.tensor([[1., 2.], [3., 4.]])).sum().backward()
    return y, x.grad, y._is_view()


def _as_strided_scatter(m):
    s = m.ones(2, 2, requires_grad=True)
    z = m.as_strided_scatter(m.zeros(6), s, (2, 2), (3, 1), 1)
    (z * m.arange(6.)).sum().backward()
    return z, s.grad


@pytest.mark.parametrize("case", [
    _as_strided_copy, _as_strided_scatter,
    lambda m: m.as_strided_scatter(m.arange(6.).view(2, 3).t(), m.ones(2) * 9, (2,), (1,)).tolist(),
    lambda m: m.as_strided_scatter(m.zeros(6), m.ones(3), (2, 2), (3, 1)),
    lambda m: m.as_strided_scatter(m.zeros(6), m.ones(2, 2), (2, 2), (3, 1), 3),
    lambda m: m.zeros(6).as_strided_scatter(m.ones(2, 2, dtype=m.float64), (2, 2), (1, 2)),
])
def test_as_strided_copy_and_scatter(case):
    same(case)


@pytest.mark.parametrize("case", [
    lambda m: m.arange(4.).resize(2, 2),
    lambda m: m.arange(6.).view(2, 3).t().resize(6),
    lambda m: m.arange(4.).resize(3),
])
def test_tensor_resize(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(case)

def test_tensor_resize_warning():
    case = lambda m: m.arange(4.).resize(2, 2)  # noqa: E731
    assert warnings_of(torch, case) == warnings_of(ft, case) == [("UserWarning", "non-inplace resize is deprecated")]


def _typed_storage_setitem(m):
    a = m.arange(4.)
    v = a[1:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.storage()[0] = 9.
        a.storage()[2:4] = 7.
    return a, v, a._version


def _untyped_storage_resize(m):
    a = m.ones(4)
    s = a.untyped_storage()
    s.resize_(0)
    n0 = s.nbytes()
    s.resize_(16)
    a.fill_(2.)
    return n0, s.nbytes(), a, m.zeros(3).untyped_storage().resize_(24).nbytes()


@pytest.mark.parametrize("case", [_typed_storage_setitem, _untyped_storage_resize])
def test_storage_writes_and_resize(case):
    same(case)


@pytest.mark.parametrize("case", [
    lambda m: m.zeros(2, 3, 4, 5).resize_(2, 3, 4, 5, memory_format=m.channels_last).stride(),
    lambda m: m.zeros(2, 3).resize_(2, 3, 4, 5, memory_format=m.channels_last).stride(),
    lambda m: m.arange(6.).resize_(1, 2, 3, 1, memory_format=m.channels_last),
    lambda m: m.arange(24.).resize_(1, 2, 3, 4, memory_format=m.channels_last),
    lambda m: m.zeros(2).resize_(1, 2, 3, 4, 5, memory_format=m.channels_last_3d).stride(),
    lambda m: m.zeros(2, 3).resize_(2, 3, 4, memory_format=m.channels_last),
    lambda m: m.zeros(2, 3).resize_(2, 3, 4, memory_format=m.preserve_format),
    lambda m: m.zeros(2).resize_as_(m.zeros(2, 3, 4, 5), memory_format=m.channels_last).stride(),
    lambda m: m.zeros(2).resize_as_(m.zeros(2, 3, 4, 5).to(memory_format=m.channels_last)).stride(),
    lambda m: m.zeros(2).resize_as_(m.zeros(2, 3, 4, 5).to(memory_format=m.channels_last),
                                    memory_format=m.preserve_format).stride(),
])
def test_resize_memory_format(case):
    same(case)


def _expanded_setitem_mask(m):
    b = m.zeros(3, 1)
    t = b.expand(3, 4)
    t[m.tensor([[True, False, False, False], [False] * 4, [False, False, False, True]])] = 3.
    return t, b, b._version


def _expanded_setitem_indices(m):
    b = m.zeros(3, 1)
    t = b.expand(3, 4)
    t[m.tensor([0, 2]), m.tensor([1, 3])] = m.tensor([4., 5.])
    return t, b._version


def _expanded_index_put_(m):
    t = m.zeros(3, 1).expand(3, 4)
    t.index_put_((m.tensor([-1]), m.tensor([2])), m.tensor(6.))
    t.index_put_((m.tensor([0]),), m.tensor(1.))
    return t


def _expanded_setitem_row(m):
    t = m.zeros(3, 1).expand(3, 4)
    t[m.tensor([1])] = 3.
    return t


@pytest.mark.parametrize("case", [_expanded_setitem_mask, _expanded_setitem_indices, _expanded_index_put_,
                                  _expanded_setitem_row])
def test_index_put_into_expanded_tensor(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(case)
    strip = lambda ws: [(c, w.split(" (Triggered")[0]) for c, w in ws]  # noqa: E731
    assert strip(warnings_of(ft, case)) == strip(warnings_of(torch, case))
    assert warnings_of(ft, case) == warnings_of(torch, case)



def test_empty_strided_with_no_elements_keeps_its_strides():
    same(lambda m: m.empty_strided((2, 0), (10, 2)))
