"""Counters of the kernel caches: ``functorch_lite.cache_info()`` / ``reset_cache_info()``.

- ``calls``: op dispatches; ``misses``: (op, static args, signature) entries built; ``hits`` = calls - misses;
- ``entries``: cached entries now (bounded per op by ``_config.JIT_CACHE_SIZE``); ``evictions``;
- ``backward_programs``: whole-graph backward programs built (engine.py), ``backward_runs``;
- ``compiles``: XLA backend compilations seen by JAX in this process (any jitted function).
"""
from __future__ import annotations

import jax
import jax.monitoring

# the recording profiler (profiler/__init__.py: its _Recorder) while a profile records, else None: every op
# dispatch checks it (ops/_dispatch.py)
PROFILER: list = [None]

COUNTS = {"calls": 0, "misses": 0, "evictions": 0, "backward_programs": 0, "backward_runs": 0, "compiles": 0}


def _map_limit():
    """The system's bound on a process's memory maps (Linux's vm.max_map_count; None elsewhere)."""
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


# XLA's CPU backend maps each compiled program's machine code into memory (2-8 maps a program), and JAX keeps
# thousands of programs: a long eager run whose shapes keep changing (graphs of varying size, unbucketed sequence
# lengths; every op compiles again for each new shape) reached Linux's default 65530 maps after ~1300 distinct
# shapes and died ("LLVM compilation error: Cannot allocate memory", then a segfault). Every CHECK_EVERY compiles
# the process's maps are counted; past 80% of the bound JAX's compiled-program caches are cleared (jax.clear_caches:
# the maps go with them; programs still in use compile again), with a warning the first time.
MAP_LIMIT = _map_limit()
CHECK_EVERY = 512
_WARNED = [False]


def _map_count() -> int:
    with open("/proc/self/maps", "rb") as f:
        return sum(1 for _ in f)


def _bound_programs() -> None:
    n = _map_count()
    if n <= 0.8 * MAP_LIMIT:
        return
    jax.clear_caches()
    if not _WARNED[0]:
        _WARNED[0] = True
        import warnings
        from ._warn import user_stacklevel
        warnings.warn(f"functorch_lite: the XLA programs this process compiled (each new input shape of an op compiles "
                      f"another) fill {n} of the system's {MAP_LIMIT} memory maps (vm.max_map_count); JAX's caches of "
                      "compiled programs were cleared so that the process can go on, and the programs still in use "
                      "compile again. Padding or bucketing input shapes compiles fewer programs.", UserWarning,
                      stacklevel=user_stacklevel())


def _on_event(name, duration, **kwargs):
    if name == "/jax/core/compile/backend_compile_duration":
        COUNTS["compiles"] += 1
        if MAP_LIMIT and COUNTS["compiles"] % CHECK_EVERY == 0:
            _bound_programs()


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
