"""``torch.multiprocessing``: Python's :mod:`multiprocessing` (every name it exports), the sharing-strategy
switches, and :func:`spawn` / :func:`start_processes` (``spawn.py``), which run ``fn(i, *args)`` in ``nprocs``
fresh processes and raise the first failure in the parent.

What differs from PyTorch: a tensor sent to another process (a ``Queue``, ``spawn``'s ``args``) arrives as a copy
of its values. PyTorch moves CPU tensors to shared memory so both processes see one buffer; JAX arrays are
immutable, so there is no buffer to share (``Tensor.share_memory_`` refuses, saying so). Read-only data and
results passed back by value work as in PyTorch; Hogwild-style training on shared parameters does not. The
sharing strategy is recorded and reported, and decides nothing.
"""
from __future__ import annotations

import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from .spawn import (ENV_VAR_PARALLEL_START, ProcessContext, ProcessExitedException, ProcessRaisedException,  # noqa: F401
                    SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"] + multiprocessing.__all__

_DEFAULT = "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor"
_ALL_STRATEGIES = {_DEFAULT, "file_system"}
_STRATEGY = [_DEFAULT]


def set_sharing_strategy(new_strategy: str) -> None:
    """Record the strategy for sharing CPU tensors (one of :func:`get_all_sharing_strategies`)."""
    if new_strategy not in _ALL_STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_ALL_STRATEGIES}")
    _STRATEGY[0] = new_strategy


def get_sharing_strategy() -> str:
    return _STRATEGY[0]


def get_all_sharing_strategies() -> set:
    return set(_ALL_STRATEGIES)
