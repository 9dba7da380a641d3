"""A CNN training script's corners found different from torch 2.13 (red team): a forward hook that records
``o.shape`` under compile, adaptive pooling's sequence output_size check, ``empty``'s memory_format, the
deprecated ``torch.cuda.amp.GradScaler``'s class name, histc's kernel names. Each against real torch."""
import collections
import pickle
import warnings

import pytest
import torch

import functorch_lite as ft


def _hooked_shapes(T, fullgraph):
    T.manual_seed(0)
    m = T.nn.Sequential(T.nn.Conv2d(3, 4, 3), T.nn.ReLU()).eval()
    shapes = []
    m[0].register_forward_hook(lambda mod, i, o: shapes.append(o.shape))
    P = collections.namedtuple("P", "n dim")
    info = []

    def f(x):
        y = m(x)
        info.append(P(y.shape[0], y.dim()))
        info.append((y.shape, 3))
        return y.sum()
    cm, cf = T.compile(m, fullgraph=fullgraph), T.compile(f, fullgraph=fullgraph)
    for k in range(3):
        cm(T.ones(2, 3, 4 + k, 4))
    for _ in range(2):
        cf(T.ones(1, 3, 5, 5))
    return [(type(s).__name__, tuple(s)) for s in shapes], [(type(s).__name__, repr(s)) for s in info]


@pytest.mark.parametrize("fullgraph", [True, False])
def test_a_hook_appending_a_size_or_named_tuple_replays_under_compile(fullgraph):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no graph break: one program per signature)
        got = _hooked_shapes(ft, fullgraph)
    assert got == _hooked_shapes(torch, fullgraph)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.randn(2, 3), (2, 2)),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.randn(2, 3), 2),
    lambda T: T.nn.functional.adaptive_max_pool2d(T.randn(2, 3), (2, 2)),
    lambda T: T.nn.functional.adaptive_avg_pool3d(T.randn(2, 3, 4), (2, 2, 2)),
    lambda T: T.nn.functional.adaptive_max_pool3d(T.randn(3, 4, 4), (2, 2, 2)),
    lambda T: T.nn.AdaptiveAvgPool2d((2, 2))(T.randn(2, 3)),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.randn(1, 3, 4), (None, 2)).shape,
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.randn(1, 3, 4), [2, 2]).shape])
def test_adaptive_pool_sequence_output_size_check(call):
    def outcome(T):
        try:
            return tuple(call(T))
        except Exception as e:  # noqa: BLE001 (the outcome compared)
            return type(e).__name__, str(e)
    assert outcome(ft) == outcome(torch)


@pytest.mark.parametrize("call", [
    lambda T: T.empty(2, 4, 6, 6, memory_format=T.channels_last).stride(),
    lambda T: T.empty(2, 4, 2, 6, 6, memory_format=T.channels_last_3d).stride(),
    lambda T: T.empty(2, 3, memory_format=T.channels_last),
    lambda T: T.empty(2, 3, memory_format=T.preserve_format),
    lambda T: T.empty(2, 3, memory_format=T.contiguous_format).stride(),
    lambda T: T.empty(2, 4, 6, 6, memory_format=T.channels_last).is_contiguous(memory_format=T.channels_last),
    lambda T: T.empty(2, 4, 6, 6, memory_format=T.channels_last, requires_grad=True).is_leaf])
def test_empty_memory_format(call):
    def outcome(T):
        try:
            return call(T)
        except Exception as e:  # noqa: BLE001 (the outcome compared)
            return type(e).__name__, str(e)
    assert outcome(ft) == outcome(torch)


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_deprecated_grad_scaler_class_is_named_grad_scaler_and_pickles(device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = getattr(ft, device).amp.GradScaler(enabled=False)
        theirs = getattr(torch, device).amp.GradScaler(enabled=False)
    assert type(ours).__name__ == type(theirs).__name__ == "GradScaler"
    assert isinstance(ours, ft.amp.GradScaler)
    assert type(pickle.loads(pickle.dumps(ours))) is type(ours)


@pytest.mark.parametrize("dt", ["int64", "uint8", "complex64", "complex128", "bool"])
def test_histc_refusal_names_torchs_kernel(dt):
    def outcome(T):
        try:
            T.histc(T.ones(3, dtype=getattr(T, dt)))
        except Exception as e:  # noqa: BLE001 (the outcome compared)
            return type(e).__name__, str(e)
    assert outcome(ft) == outcome(torch)
