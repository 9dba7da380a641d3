"""``torch.cuda.nvtx``: named ranges for profilers. With a GPU each range is a ``jax.profiler.TraceAnnotation``
(it shows in JAX/XLA profiler traces); without one, torch's CPU-build errors ("NVTX functions not installed")."""
from __future__ import annotations

import contextlib
import itertools

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_STACK: list = []          # range_push'ed annotations, innermost last
_OPEN: dict = {}           # range_start handle -> annotation
_HANDLES = itertools.count(1)


def _check():
    from . import is_available
    if not is_available():
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")


def _open(msg):
    import jax
    a = jax.profiler.TraceAnnotation(str(msg))
    a.__enter__()
    return a


def range_push(msg) -> int:
    """Open a nested range; its zero-based depth."""
    _check()
    _STACK.append(_open(msg))
    return len(_STACK) - 1


def range_pop() -> int:
    """Close the innermost range; the zero-based depth of the range closed (-1 when none is open, as NVTX)."""
    _check()
    if not _STACK:
        return -1
    _STACK.pop().__exit__(None, None, None)
    return len(_STACK)


def mark(msg) -> None:
    """An instant event: a range opened and closed at once."""
    _check()
    _open(msg).__exit__(None, None, None)


def range_start(msg) -> int:
    """Open a range that may end on another thread; its handle for ``range_end``."""
    from . import is_available
    if not is_available():
        raise AttributeError("'_NVTXStub' object has no attribute 'rangeStartA'")
    handle = next(_HANDLES)
    _OPEN[handle] = _open(msg)
    return handle


def range_end(range_id) -> None:
    from . import is_available
    if not is_available():
        raise AttributeError("'_NVTXStub' object has no attribute 'rangeEnd'")
    a = _OPEN.pop(range_id, None)
    if a is not None:
        a.__exit__(None, None, None)


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001  (torch's name)
    """``with torch.cuda.nvtx.range("step {}", i):`` a range around the block (``msg.format(*args, **kwargs)``)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
