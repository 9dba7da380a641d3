"""``torch._dynamo`` as scripts use it: ``config`` (``cache_size_limit`` / ``recompile_limit``,
``log_recompiles``), ``reset()``, ``list_backends()``, ``exc.Unsupported``, ``is_compiling()``, ``disable``,
``set_stance``, the shape markers (``mark_dynamic`` warns: shapes are static here), ``allow_in_graph``.
The compiler behind them is ``functorch_lite.compile`` (``jax.jit``; see ``_compile``)."""
from __future__ import annotations

import functools
import types
import warnings

from ._compile import runner as _runner
from ._compile.effects import Disabled
from ._compile.runner import GraphBreak, config  # noqa: F401  (torch._dynamo.config)
from ._warn import user_stacklevel as _user_stacklevel

__all__ = ["config", "reset", "list_backends", "exc", "is_compiling", "disable", "set_stance", "mark_dynamic",
           "maybe_mark_dynamic", "mark_static", "allow_in_graph", "assume_constant_result"]


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


class DynamoStance:
    """A stance as ``set_stance`` records it (its repr is torch's, in the invalid-stance error)."""
    __slots__ = ("stance", "skip_guard_eval_unsafe", "backend")

    def __init__(self, stance="default", skip_guard_eval_unsafe=False, backend=None):
        self.stance, self.skip_guard_eval_unsafe, self.backend = stance, skip_guard_eval_unsafe, backend

    def __repr__(self):
        return (f"DynamoStance(stance={self.stance!r}, skip_guard_eval_unsafe={self.skip_guard_eval_unsafe!r}, "
                f"backend={self.backend!r})")


_CURRENT = [DynamoStance()]


def _set_stance(st: DynamoStance) -> DynamoStance:
    if _runner.TRACING[0]:
        raise RuntimeError("attempted to set_stance in a torch.compile region")
    prior, _CURRENT[0] = _CURRENT[0], st
    # the compiled call path checks one value: None for the default stance (every backend is one XLA program, so
    # a forced backend changes nothing; guards are always evaluated, so skip_guard_eval_unsafe never skips one)
    _runner.STANCE[0] = None if st.stance == "default" else st
    return prior


class set_stance:
    """``torch.compiler.set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None)``: as a
    function, a context manager or a decorator. ``"force_eager"``: compiled functions run eagerly;
    ``"eager_on_recompile"``: a call that needs a new program runs eagerly (existing programs still run);
    ``"fail_on_recompile"``: such a call raises torch's RuntimeError; ``"eager_then_compile"`` (and
    ``"aot_eager_then_compile"``): a compiled function's first call runs eagerly, later calls compile. An unknown
    stance raises at the next compiled call, as in torch."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        if force_backend is not None:
            from ._compile import _BACKENDS
            if callable(force_backend) or force_backend not in _BACKENDS:
                raise RuntimeError(f"functorch_lite.compile: backend {force_backend!r} is not available; every "
                                   "backend compiles to one XLA program with jax.jit (accepted names: "
                                   f"{', '.join(_BACKENDS)})")
        self.stance = DynamoStance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set_stance(self.stance)

    def __call__(self, fn):
        _set_stance(self.prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _set_stance(self.stance)
            try:
                return fn(*args, **kwargs)
            finally:
                _set_stance(prev)
        return wrapper

    def __enter__(self) -> None:
        _set_stance(self.stance)

    def __exit__(self, *exc) -> None:
        _set_stance(self.prev)


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None) -> None:
    """torch marks dimension(s) ``index`` of ``t`` dynamic (one program for every size). An XLA program has static
    shapes, so here each size of a marked dimension still compiles its own program: a warning says so (the
    results are eager's)."""
    if not isinstance(index, (int, list, tuple)):
        raise AssertionError(f"Expected index to be int, list, or tuple, got {type(index)}")
    warnings.warn(f"functorch_lite._dynamo.mark_dynamic: XLA programs have static shapes; dimension {index} of this "
                  "tensor still compiles one program per size (config.cache_size_limit bounds how many)",
                  stacklevel=_user_stacklevel())


def maybe_mark_dynamic(t, index) -> None:
    """torch's hint that a dimension may be dynamic, allowed to specialize: here it always does (each size is its
    own XLA program), which the hint permits."""


def mark_static(t, index=None) -> None:
    """torch's "compile this dimension (or module class) statically": every shape is static here already."""


def allow_in_graph(fn):
    """torch puts ``fn`` into its graph without tracing into it; here the compiled function's trace runs ``fn``'s
    facade ops into the one XLA program either way, so ``fn`` itself is returned."""
    return fn


def assume_constant_result(fn):
    """torch calls ``fn`` while tracing and bakes its result into the graph; a trace here calls it too, and a
    Python value it returns is a constant of the program, so ``fn`` is returned as it is (marked as torch marks)."""
    fn._dynamo_marked_constant = True
    return fn
