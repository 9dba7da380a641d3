"""Counters of the kernel caches: ``functorch_lite.cache_info()`` / ``reset_cache_info()``.

- ``calls``: op dispatches; ``misses``: (op, static args, signature) entries built; ``hits`` = calls - misses;
- ``entries``: cached entries now (bounded per op by ``_config.JIT_CACHE_SIZE``); ``evictions``;
- ``backward_programs``: whole-graph backward programs built (engine.py), ``backward_runs``;
- ``compiles``: XLA backend compilations seen by JAX in this process (any jitted function).
"""
from __future__ import annotations

import jax.monitoring

# the recording profiler (profiler/__init__.py: its _Recorder) while a profile records, else None: every op
# dispatch checks it (ops/_dispatch.py)
PROFILER: list = [None]

COUNTS = {"calls": 0, "misses": 0, "evictions": 0, "backward_programs": 0, "backward_runs": 0, "compiles": 0}


def _on_event(name, duration, **kwargs):
    if name == "/jax/core/compile/backend_compile_duration":
        COUNTS["compiles"] += 1


jax.monitoring.register_event_duration_secs_listener(_on_event)


def cache_info() -> dict:
    from .ops._registry import OPS
    info = dict(COUNTS)
    info["hits"] = info["calls"] - info["misses"]
    info["entries"] = sum(len(op.cache) for op in OPS.values())
    return info


def reset_cache_info() -> None:
    for k in COUNTS:
        COUNTS[k] = 0
