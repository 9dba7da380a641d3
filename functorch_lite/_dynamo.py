"""``torch._dynamo`` as scripts use it: ``config`` (``cache_size_limit`` / ``recompile_limit``,
``log_recompiles``), ``reset()``, ``list_backends()``, ``exc.Unsupported``, ``is_compiling()``, ``disable``.
The compiler behind them is ``functorch_lite.compile`` (``jax.jit``; see ``_compile``)."""
from __future__ import annotations

import types

from ._compile import runner as _runner
from ._compile.effects import Disabled
from ._compile.runner import GraphBreak, config  # noqa: F401  (torch._dynamo.config)

__all__ = ["config", "reset", "list_backends", "exc", "is_compiling", "disable"]


def reset() -> None:
    """Forget every compiled program of every compiled function (the next call traces again)."""
    for cf in list(_runner.LIVE):
        cf.reset()


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """torch 2.13's list (COMP-08); every name compiles to one XLA program here ('eager' is accepted too)."""
    return ["cudagraphs", "inductor", "openxla", "tvm"]


def is_compiling() -> bool:
    """True while a compiled function's Python runs to be traced (``torch.compiler.is_compiling``)."""
    return _runner.TRACING[0] > 0


def disable(fn=None, recursive: bool = True, *, reason=None):
    """``torch.compiler.disable``: ``fn`` always runs eagerly. Called inside a compiled function it is a graph
    break: that call signature of the compiled function runs eagerly (a single XLA program cannot call back into
    eager Python); called outside, it is ``fn``."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)

    def run(*args, **kwargs):
        if _runner.TRACING[0]:
            raise Disabled(f"a call to {getattr(fn, '__name__', fn)!r}, marked torch.compiler.disable"
                                   + (f" ({reason})" if reason else ""))
        return fn(*args, **kwargs)
    run.__wrapped__ = fn
    run.__name__ = getattr(fn, "__name__", "disabled")
    return run


exc = types.SimpleNamespace(Unsupported=GraphBreak, TorchDynamoException=RuntimeError)
