"""Memory-layout APIs against real torch: ``Tensor.dim_order`` (with its ambiguity checks),
``torch.empty_permuted``, ``Tensor.as_strided_`` / ``torch.as_strided_`` and ``torch.resize_as_``."""
import warnings

import pytest
import torch

import functorch_lite as ft

LAYOUTS = {
    "contiguous": lambda L: L.empty(2, 3),
    "t": lambda L: L.empty(2, 3).t(),
    "size-1 dim": lambda L: L.empty(2, 1, 3),
    "size-1 dim permuted": lambda L: L.empty(2, 1, 3).permute(2, 1, 0),
    "channels_last": lambda L: L.empty(2, 3, 4, 5).to(memory_format=L.channels_last),
    "1x1": lambda L: L.empty(1, 1),
    "column t": lambda L: L.empty(3, 1).t(),
    "expanded": lambda L: L.empty(2, 3).expand(4, 2, 3),
    "0-d": lambda L: L.empty(()),
    "channels_last 1x3x1x1": lambda L: L.empty(1, 3, 1, 1).to(memory_format=L.channels_last),
    "channels_last 4x1x2x2": lambda L: L.empty(4, 1, 2, 2).to(memory_format=L.channels_last),
    "strided slice": lambda L: L.empty(2, 3)[:, ::2],
    "column slice": lambda L: L.empty(3, 4)[:, :1],
    "leading 1": lambda L: L.empty(1, 2, 3, 4),
    "permuted 3-d": lambda L: L.empty(2, 3, 4).permute(1, 2, 0),
    "strided t": lambda L: L.empty(4, 4)[::2, ::2].t(),
    "1-d": lambda L: L.empty(5),
    "expanded transposed": lambda L: L.empty(2, 2).expand(3, 2, 2).transpose(0, 2),
    "step 3": lambda L: L.empty(4, 6)[:, ::3],
    "permuted 4-d": lambda L: L.empty(2, 3, 4, 5).permute(0, 3, 1, 2),
}
CHECKS = {"none": lambda L: False, "true": lambda L: True, "contiguous or channels_last":
          lambda L: [L.contiguous_format, L.channels_last], "channels_last": lambda L: [L.channels_last],
          "contiguous": lambda L: [L.contiguous_format], "empty list": lambda L: [], "bad": lambda L: "x"}


def _outcome(fn, L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(L)
        except Exception as e:  # noqa: BLE001 (the error itself is compared)
            return type(e).__name__, str(e)
    return r


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_dim_order(layout, check):
    def fn(L):
        return LAYOUTS[layout](L).dim_order(ambiguity_check=CHECKS[check](L))
    assert _outcome(fn, ft) == _outcome(fn, torch)


@pytest.mark.parametrize("args", [((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((), ()),
                                  ((2, 0, 3), (2, 1, 0)), ((2, 3), (0, 2)), ((2, 3), (-1, 0)), ((2, 3), (0, 0)),
                                  ((2, 3), (0,))])
def test_empty_permuted(args):
    def fn(L):
        e = L.empty_permuted(*args, dtype=L.int64)
        return tuple(e.shape), e.stride(), e.is_contiguous(), e.dtype == L.int64, e._base is None
    assert _outcome(fn, ft) == _outcome(fn, torch)


def test_as_strided_in_place():
    def fn(L):
        a = L.arange(6.0, requires_grad=True)
        b = a * 1
        r = b.as_strided_((2, 2), (1, 2), 1)
        out = [r is b, type(b.grad_fn).__name__, b._version, b.tolist(), b.stride(), b.storage_offset()]
        (b * L.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        out.append(a.grad.tolist())
        c = L.arange(6.0)
        v = c[1:]
        L.as_strided_(v, (2,), (2,))
        out += [v.tolist(), v.storage_offset(), v._version]
        return out
    assert _outcome(fn, ft) == _outcome(fn, torch)


def test_resize_as_function():
    def fn(L):
        x = L.zeros(3)
        r = L.resize_as_(x, L.ones(2, 2))
        return r is x, tuple(x.shape)
    assert _outcome(fn, ft) == _outcome(fn, torch)
