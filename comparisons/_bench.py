"""Timing helpers shared by the benchmark scripts (JAX dispatches asynchronously: every timing ends in a sync)."""
from __future__ import annotations

import time

import jax

import functorch_lite as ft


def sync(x) -> None:
    """Wait for ``x``'s values: a facade tensor, a jax array, a pytree of them; torch results are ready."""
    if isinstance(x, ft.Tensor):
        x._array.block_until_ready()
    elif isinstance(x, (tuple, list)):
        for y in x:
            sync(y)
    elif isinstance(x, jax.Array):
        x.block_until_ready()


def time_calls(fn, n: int, batch: int = 1) -> list:
    """Seconds per call of ``fn``: ``n // batch`` samples, each ``batch`` calls then one sync."""
    out = []
    for _ in range(max(1, n // batch)):
        t0 = time.perf_counter()
        r = None
        for _ in range(batch):
            r = fn()
        sync(r)
        out.append((time.perf_counter() - t0) / batch)
    return out
