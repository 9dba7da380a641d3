"""``functorch_lite.compile``: ``jax.jit`` standing in for ``torch.compile`` (design.md §3).

``compile(fn)`` / ``@compile`` / ``compile(model)`` / ``model.compile()``. A whole training step written in
plain PyTorch style (``zero_grad``, forward, ``loss.backward()``, ``clip_grad_norm_``, ``optimizer.step()``,
``scheduler.step()``) becomes ONE XLA program per guard key: parameters, ``.grad`` fields, buffers, optimizer
state, learning rates and the RNG key are passed in and written back (see runner.py and state.py).
"""
from __future__ import annotations

import warnings

from .runner import COUNTERS, CompiledFunction, GraphBreak, config

__all__ = ["compile", "CompiledFunction", "GraphBreak", "COUNTERS", "config", "OptimizedModule"]

# torch.compile's backends/modes: all mean "one XLA program" here; the names are accepted so scripts run.
# (backend callables are accepted too, and never called: see compile())
_BACKENDS = ("inductor", "aot_eager", "eager", "cudagraphs", "openxla", "tvm", "xla", "jax")
# torch 2.13's modes and the inductor options each sets (``torch._inductor.list_mode_options``; no effect here)
MODE_OPTIONS = {
    "default": {},
    "lite": {"fallback_by_default": True, "selective_decompose": True, "reorder_for_peak_memory": False,
             "reorder_for_compute_comm_overlap": False, "triton.reorder_for_reducing_graph_partitions": False,
             "use_pre_grad_passes": False, "use_joint_graph_passes": False, "use_post_grad_passes": False,
             "use_dce": False, "allow_buffer_reuse": False},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
    "max-autotune": {"max_autotune": True, "triton.cudagraphs": True, "coordinate_descent_tuning": True},
}
_MODES = tuple(MODE_OPTIONS)  # COMP-09
_REGISTERED: dict = {}   # name -> backend callable (torch._dynamo.register_backend)
_WARNED: set = set()     # ids of backend callables already warned about (never called: no FX graphs here)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend=None, mode=None, options=None,
            name=None, disable: bool = False, recompile_limit=None, isolate_recompiles: bool = False,
            shapes_spec=None):
    """``torch.compile``'s signature. ``backend``: any of torch's names, a name ``torch._dynamo.register_backend``
    registered, or a backend callable ``backend(gm, example_inputs)``: all compile to one XLA program with
    ``jax.jit``. torch hands a callable backend an FX GraphModule; functorch_lite has no FX graphs, so the callable
    is never called (a one-time warning says so). ``mode`` values are accepted and have no effect (XLA picks its
    own fusion); ``options`` (a dict of ``torch._inductor.config`` knobs, checked as torch checks them for the
    inductor backend) have no effect either. ``dynamic``: int and float arguments are program inputs, as torch's
    SymInts / unspecialized floats, from the first call (True), from the first call that changes their value
    (None: torch's automatic dynamic), or never (False: a program per value); ``_symbolic.py``. Shapes are another
    matter: an XLA program has static shapes, so every input shape compiles its own program even with
    ``dynamic=True`` (accepted, with a warning that says so; results equal eager's). Errors as torch's: an unknown backend name raises
    ``torch._dynamo.exc.InvalidBackend``; a model that is not callable, ``AssertionError``.

    >>> f = compile(lambda x: x * 2)
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend is None:
        backend = "inductor"
    if isinstance(backend, str):
        if backend not in _BACKENDS and backend not in _REGISTERED:
            from .._dynamo import InvalidBackend
            raise InvalidBackend(backend)
    elif not callable(backend):  # (torch fails at the first call; the same error, at once)
        from .._dynamo import BackendCompilerFailed
        raise BackendCompilerFailed(f"backend={str(backend)!r} raised:\nTypeError: "
                                    f"{type(backend).__name__!r} object is not callable")
    fn = _REGISTERED.get(backend) if isinstance(backend, str) else backend
    if fn is not None and id(fn) not in _WARNED:
        _WARNED.add(id(fn))
        warnings.warn(f"functorch_lite.compile(backend={getattr(fn, '__name__', fn)!r}): functorch_lite has no FX "
                      "graphs, so a backend callable is not called; the function compiles to one XLA program with "
                      "jax.jit as for any backend", stacklevel=2)
    if dynamic is True:
        warnings.warn("functorch_lite.compile(dynamic=True): XLA programs have static shapes, so each new input "
                      "shape compiles its own program, as with dynamic=False (int and float arguments are inputs); "
                      "config.cache_size_limit bounds how many", stacklevel=2)
    if options is not None:
        keys = list(options.items())  # (torch's AttributeError for a non-dict)
        if backend == "inductor":
            from .config import _knobs
            for k, _ in keys:
                if k not in _knobs.INDUCTOR:
                    known = [n for n in _knobs.INDUCTOR if n not in _knobs.INDUCTOR_EXTERNAL]
                    raise RuntimeError(f"Unexpected optimization option {k}, known options are {known}")

    def wrap(m):
        if disable:
            return m
        if dynamic is not None and not isinstance(dynamic, bool):  # (torch's make_set_enable_dynamic)
            raise AssertionError(f"Expected enable to be a bool, got {type(dynamic)}")
        _patch_once()
        from ..nn.modules.module import Module
        if isinstance(m, Module):
            from .optimized import OptimizedModule
            return OptimizedModule(m, fullgraph=fullgraph, dynamic=dynamic)
        if not callable(m):
            raise AssertionError(f"A callable function is expected, but {type(m)} is provided.")
        cf = CompiledFunction(m, fullgraph=fullgraph, dynamic=dynamic)
        if recompile_limit is not None:
            cf.cache_size_limit = int(recompile_limit)
        return cf
    if model is None:
        return wrap
    return wrap(model)


_PATCHED = []


def _patch_once() -> None:
    """What torch's Dynamo does once per process at its first compile (eval_frame's ``TorchPatcher.patch``):
    ``torch.distributions`` stops validating arguments by default (a later ``set_default_validate_args(True)``
    stays)."""
    if not _PATCHED:
        _PATCHED.append(True)
        from ..distributions import Distribution
        Distribution.set_default_validate_args(False)


def __getattr__(name):
    """``OptimizedModule`` (``optimized.py``), imported on first use: it subclasses ``nn.Module``, and ``nn`` imports
    this package."""
    if name == "OptimizedModule":
        from .optimized import OptimizedModule
        return OptimizedModule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
