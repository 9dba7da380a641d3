"""Kernel caches are keyed on (op, static args, signature), bounded, and counted (issue 3)."""
import functorch_lite as ft
from functorch_lite import _config
from functorch_lite.ops._registry import OPS


def test_repeated_training_step_hits_caches():
    w = ft.ones(4, requires_grad=True)
    x = ft.arange(4.0)

    def step():
        loss = ((w * x - 1.0) ** 2).mean()
        loss.backward()
        with ft.no_grad():
            w.sub_(0.1 * w.grad)
            w.grad.zero_()
    step()  # first backward: .grad is None
    step()  # second: accumulates into the existing .grad (a second program signature)
    ft.reset_cache_info()
    for _ in range(5):
        step()
    info = ft.cache_info()
    assert info["misses"] == 0 and info["hits"] == info["calls"] > 0
    assert info["backward_runs"] == 5 and info["backward_programs"] == 0
    assert info["compiles"] == 0


def test_new_shape_is_a_jax_recompile_not_a_new_entry():
    a = ft.ones(3)
    a + a
    ft.reset_cache_info()
    b = ft.ones(7)
    b + b
    info = ft.cache_info()
    assert info["misses"] == 0 and info["compiles"] >= 1  # same entry, jax.jit compiles the new shape


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(_config, "JIT_CACHE_SIZE", 4)
    op = OPS["roll"]
    op.cache.clear()
    ft.reset_cache_info()
    t = ft.arange(10.0)
    for k in range(1, 9):
        ft.roll(t, k)
    assert len(op.cache) == 4
    assert ft.cache_info()["evictions"] == 4
    assert ft.roll(t, 8).tolist() == ft.roll(t, -2).tolist()
