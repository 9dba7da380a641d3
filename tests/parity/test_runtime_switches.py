"""Top-level switches and small entry points scripts call, against real torch: ``frombuffer``,
``set/get_deterministic_debug_mode``, ``set_warn_always`` (TORCH_WARN_ONCE warnings every time),
``set_flush_denormal``, ``is_inference``, ``Tensor.sgn_``, ``Tensor.narrow_copy``, ``random.fork_rng``, and the
helpers custom layers import (``nn.modules.utils._pair`` ..., ``nn.common_types``)."""
import array
import struct
import warnings

import pytest
import torch

import functorch_lite as ft
from functorch_lite import _warn

from _parity import same

BUF = struct.pack("<4i2f", 1, -2, 3, 400, 1.5, -2.0)  # (no position a float read makes a NaN)


@pytest.mark.parametrize("kw", [
    dict(dtype="int32"), dict(dtype="int32", count=2, offset=4), dict(dtype="uint8"), dict(dtype="int16", count=-1),
    dict(dtype="float32", offset=8), dict(dtype="int64"), dict(dtype="bfloat16", count=2),
    dict(dtype="int32", count=7), dict(dtype="int32", offset=24), dict(dtype="int32", offset=-1),
    dict(dtype="int32", count=0), dict(dtype="float64", offset=4), dict(dtype="int64", count=3, offset=4)])
@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview"])
def test_frombuffer(kw, kind):
    buf = {"bytes": bytes, "bytearray": bytearray, "memoryview": memoryview}[kind](BUF)
    same(lambda L: L.frombuffer(buf, **{**kw, "dtype": getattr(L, kw["dtype"])}))


def test_frombuffer_other_buffers_and_errors():
    same(lambda L: L.frombuffer(array.array("f", [1.5, -2.5, 3.0]), dtype=L.float32))
    same(lambda L: L.frombuffer(array.array("d", [1.5, -2.5]), dtype=L.float32))   # the bytes, reinterpreted
    same(lambda L: L.frombuffer(bytearray(8), dtype=L.float32, requires_grad=True))
    same(lambda L: L.frombuffer(b"", dtype=L.int32))
    same(lambda L: L.frombuffer([1, 2], dtype=L.int32))
    buf = bytearray(BUF)
    t = ft.frombuffer(buf, dtype=ft.int32)
    buf[0] = 9   # a copy taken at the call (PyTorch's tensor would share the buffer: README)
    assert t.tolist()[:4] == [1, -2, 3, 400]


@pytest.mark.parametrize("mode", [0, 1, 2, "default", "warn", "error", 3, -1, "x", 1.0, None])
def test_deterministic_debug_mode(mode):
    def run(L):
        try:
            L.set_deterministic_debug_mode(mode)
            return (L.get_deterministic_debug_mode(), L.are_deterministic_algorithms_enabled(),
                    L.is_deterministic_algorithms_warn_only_enabled())
        finally:
            L.use_deterministic_algorithms(False)
    same(run)
    assert ft.get_deterministic_debug_mode() == 0


def test_warn_always_repeats_warn_once_warnings():
    _warn.WARNED.discard("chain_matmul")
    for L in (torch, ft):
        a = L.ones(2, 2)
        assert not L.is_warn_always_enabled()
        L.set_warn_always(True)
        try:
            assert L.is_warn_always_enabled()
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                L.chain_matmul(a, a)
                L.chain_matmul(a, a)
        finally:
            L.set_warn_always(False)
        assert sum("torch.chain_matmul is deprecated" in str(x.message) for x in w) == 2, L
    with warnings.catch_warnings(record=True) as w:   # off again: once per process (it has warned)
        warnings.simplefilter("always")
        ft.chain_matmul(a, a)
    assert not w


def test_flush_denormal_reports_it_cannot_switch():
    # PyTorch returns True where the CPU lets it flush denormals; XLA fixes that when it compiles, so the facade
    # reports False (unsupported) and tiny values stay
    assert ft.set_flush_denormal(True) is False and ft.set_flush_denormal(False) is False
    assert ft.tensor([1e-39], dtype=ft.float32).item() != 0.0


def test_is_inference_sgn_and_narrow_copy():
    same(lambda L: L.is_inference(L.ones(2)))
    with ft.inference_mode():
        assert ft.is_inference(ft.ones(2))
    same(lambda L: L.tensor([-2.0, 0.0, 3.0]).sgn_())
    same(lambda L: L.tensor([3 + 4j, 0j]).sgn_())
    same(lambda L: L.tensor([True, False]).sgn_())
    same(lambda L: (lambda x: (x.sgn_(), x.grad_fn is not None))(L.tensor([-2.0, 1.0], requires_grad=True) * 1))
    same(lambda L: L.arange(10).view(2, 5).narrow_copy(1, 1, 3))
    same(lambda L: L.arange(10.0, requires_grad=True).narrow_copy(0, 2, 3))


def test_fork_rng():
    def run(L):
        L.manual_seed(3)
        with L.random.fork_rng(devices=[]):
            inside = L.rand(4)
        after = L.rand(2)
        L.manual_seed(3)
        first = L.rand(4)
        with L.random.fork_rng(enabled=False):
            L.rand(1)
        return bool(L.equal(inside, first)), bool(L.equal(after, first[:2])), L.rand(1).shape
    assert same(run) == ("ok", (True, True, ("Size", (1,))))
    for L in (torch, ft):   # a CUDA device listed, without one: torch's error (the facade's names what JAX has)
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
            L.random.fork_rng(devices=[0]).__enter__()


def test_fork_rng_restores_after_an_error():
    ft.manual_seed(5)
    expected = ft.rand(3)
    ft.manual_seed(5)
    with pytest.raises(KeyError):
        with ft.random.fork_rng(devices=[]):
            ft.rand(10)
            raise KeyError("x")
    assert ft.equal(ft.rand(3), expected)


def test_nn_modules_utils_and_common_types():
    from functorch_lite.nn.modules import utils as fu
    from torch.nn.modules import utils as tu
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, (1, 2), [4, 5, 6], range(2)):
            assert getattr(fu, name)(v) == getattr(tu, name)(v)
        assert getattr(fu, name).__name__ == getattr(tu, name).__name__
    assert fu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    assert fu._list_with_default([None, 3], [1, 2, 7, 8]) == tu._list_with_default([None, 3], [1, 2, 7, 8])
    stripped = []
    for lib, mod in ((torch, tu), (ft, fu)):
        with pytest.raises(ValueError, match="^Input dimension should be at least 3$"):
            mod._list_with_default([None, 3], [1, 2])
        sd = lib.nn.DataParallel(lib.nn.Sequential(lib.nn.Linear(2, 1))).state_dict()
        mod.consume_prefix_in_state_dict_if_present(sd, "module.")
        stripped.append((list(sd), sorted(sd._metadata)))
        assert str(lib.nn.Sequential(lib.nn.Linear(2, 1)).load_state_dict(sd)) == "<All keys matched successfully>"
    assert stripped[0] == stripped[1] and stripped[0][0] == ["0.weight", "0.bias"]
    from functorch_lite.nn.common_types import _size_2_t, _ratio_any_t
    from torch.nn import common_types as tct
    # (PyTorch spells the tuple with the builtin, the facade with typing.Tuple: the same types)
    assert str(tct._size_2_t) == "typing.Union[int, tuple[int, int]]"
    assert str(_size_2_t) == "typing.Union[int, typing.Tuple[int, int]]"
    assert str(_ratio_any_t) == "typing.Union[float, typing.Tuple[float, ...]]"


def test_share_memory_refused_by_name():
    # PyTorch moves storages into shared memory for Hogwild workers; a JAX array cannot be shared so, and a no-op
    # would let each worker train its own copy: refused, saying why (a module without tensors passes, as PyTorch's)
    msg = "^functorch_lite: Tensor.share_memory_ / Module.share_memory is not supported: a JAX array cannot live"
    with pytest.raises(RuntimeError, match=msg):
        ft.ones(2).share_memory_()
    with pytest.raises(RuntimeError, match=msg):
        ft.nn.Linear(2, 2).share_memory()
    relu = ft.nn.ReLU()
    assert relu.share_memory() is relu and torch.nn.ReLU().share_memory() is not None
    assert ft.ones(2).is_shared() is False
    same(lambda L: L.nn.LazyLinear(3).share_memory())   # (PyTorch's own uninitialized-parameter error)
