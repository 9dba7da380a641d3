"""``nn.attention.sdpa_kernel`` / ``SDPBackend`` and ``backends.cuda``'s SDPA switches against real torch on CPU: the
flags inside and after the block, which kernel ``F.scaled_dot_product_attention`` takes (its ``grad_fn``), its values
and gradients, PyTorch's "No viable backend" error when no CPU kernel is left, and the deprecated ``sdp_kernel``."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import same
from _scenario import both

FLAGS = ("flash", "mem_efficient", "math", "cudnn")


def _flags(L):
    return [getattr(L.backends.cuda, f"{f}_sdp_enabled")() for f in FLAGS]


def test_backend_enum():
    same(lambda L: [(n, int(b), repr(b)) for n, b in L.nn.attention.SDPBackend.__members__.items()])


@pytest.mark.parametrize("chosen", [["FLASH_ATTENTION"], ["MATH"], ["FLASH_ATTENTION", "MATH"],
                                    ["EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION"], [], "MATH"])
@pytest.mark.parametrize("shape", [(2, 3, 5, 8), (3, 5, 8)])
def test_kernel_choice(chosen, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def run(L):
        B = L.nn.attention.SDPBackend
        backends = getattr(B, chosen) if isinstance(chosen, str) else [getattr(B, c) for c in chosen]
        q = L.tensor(x, requires_grad=True)
        with L.nn.attention.sdpa_kernel(backends) as ctx:
            inside = _flags(L)
            try:
                out = L.nn.functional.scaled_dot_product_attention(q, q * 0.5, q, is_causal=True)
                out.pow(2).sum().backward()
                result = (out, q.grad, type(out.grad_fn).__name__)
            except RuntimeError as e:
                result = str(e)
        return ctx, inside, _flags(L), result
    got, _ = both(run, rtol=1e-5, atol=1e-6)
    assert got[2] == [True] * 4


def test_restored_after_an_error_and_nested():
    def run(L):
        B = L.nn.attention.SDPBackend
        seen = []
        try:
            with L.nn.attention.sdpa_kernel([B.MATH]):
                with L.nn.attention.sdpa_kernel(B.FLASH_ATTENTION, set_priority=True):
                    seen.append(_flags(L))
                seen.append(_flags(L))
                raise KeyError("x")
        except KeyError:
            pass
        return seen, _flags(L)
    same(run)


def test_rejects_other_arguments():
    same(lambda L: L.nn.attention.sdpa_kernel("MATH").__enter__())
    same(lambda L: L.nn.attention.sdpa_kernel((L.nn.attention.SDPBackend.MATH,)).__enter__())


def test_global_switches_and_deprecated_sdp_kernel():
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 8)).astype(np.float32)

    def run(L):
        b = L.backends.cuda
        q = L.tensor(x, requires_grad=True)
        b.enable_flash_sdp(False)
        try:
            out = L.nn.functional.scaled_dot_product_attention(q, q, q)
            math_name = type(out.grad_fn).__name__
        finally:
            b.enable_flash_sdp(True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with b.sdp_kernel(enable_math=False):
                inside = _flags(L)
                flash_name = type(L.nn.functional.scaled_dot_product_attention(q, q, q).grad_fn).__name__
        messages = [str(m.message) for m in w if m.category is FutureWarning]
        return math_name, inside, flash_name, _flags(L), messages
    same(run)



def test_compiled_function_recompiles_when_the_backends_change(caplog):
    from functorch_lite._compile.runner import config
    q = ft.randn(1, 2, 4, 8)

    @ft.compile
    def attend(q):
        return ft.nn.functional.scaled_dot_product_attention(q, q, q).sum()

    attend(q)
    attend(q)
    prev, config.log_recompiles = config.log_recompiles, True
    try:
        with ft.nn.attention.sdpa_kernel([ft.nn.attention.SDPBackend.EFFICIENT_ATTENTION]):
            with pytest.raises(RuntimeError, match="^No viable backend for scaled_dot_product_attention"):
                attend(q)   # (a new trace, not the program traced with the flash kernel enabled)
    finally:
        config.log_recompiles = prev
    assert attend.stats["recompiles"] == 1
    assert "attention backends (sdpa_kernel) changed" in caplog.text
    assert float(attend(q)) == float(ft.nn.functional.scaled_dot_product_attention(q, q, q).sum())
