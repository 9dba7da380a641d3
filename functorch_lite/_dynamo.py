"""``torch._dynamo`` as scripts use it: ``config`` (torch's config module: every knob, ``patch``; see
``_compile/config.py`` for the few that act here), ``reset()``, ``list_backends()``, ``register_backend``,
``exc`` (``Unsupported``, ``InvalidBackend``), ``explain``, ``utils.counters``, ``is_compiling()``, ``disable``,
``set_stance``, the shape markers (``mark_dynamic`` warns: shapes are static here), ``allow_in_graph``.
The compiler behind them is ``functorch_lite.compile`` (``jax.jit``; see ``_compile``)."""
from __future__ import annotations

import collections
import functools
import inspect
import sys
import traceback
import types
import warnings

from ._compile import runner as _runner
from ._compile.effects import Disabled, UserBreak as _UserBreak
from ._higher_order import TorchRuntimeError as _TorchRuntimeError, UncapturedHigherOrderOpError as _UncapturedHOOError
from ._compile.config import GRAPH_BREAKS as _GRAPH_BREAKS
from ._compile.runner import GraphBreak, RecompileError, TorchDynamoException, config  # noqa: F401
from ._warn import user_stacklevel as _user_stacklevel

__all__ = ["config", "reset", "list_backends", "register_backend", "exc", "explain", "utils", "is_compiling",
           "disable", "set_stance", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "allow_in_graph",
           "assume_constant_result", "graph_break", "optimize", "mark_static_address", "reset_code_caches",
           "eval_frame", "substitute_in_graph"]


def reset() -> None:
    """Forget every compiled program of every compiled function (the next call traces again)."""
    for cf in list(_runner.LIVE):
        cf.reset()


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """torch 2.13's list (COMP-08) plus the names ``register_backend`` added; every name compiles to one XLA
    program here ('eager' is accepted too)."""
    from ._compile import _REGISTERED
    return sorted({"cudagraphs", "inductor", "openxla", "tvm"} | set(_REGISTERED))


def register_backend(compiler_fn=None, name=None, tags=()):
    """torch's ``@register_backend`` (``torch._dynamo.register_backend``): ``compile(fn, backend=name)`` then
    accepts the name. functorch_lite has no FX graphs, so the backend callable itself is never called: the
    function compiles with ``jax.jit`` as for any backend (a warning says so once, see ``compile``)."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    from ._compile import _REGISTERED
    if not callable(compiler_fn):
        raise AssertionError(f"BackendCompilerFn is not callable: {compiler_fn}")
    name = name or compiler_fn.__name__
    if name in _REGISTERED and _REGISTERED[name] is not compiler_fn:
        raise AssertionError(f"duplicate name: {name}")
    _REGISTERED[name] = compiler_fn
    return compiler_fn


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


class InvalidBackend(TorchDynamoException):
    """torch._dynamo.exc.InvalidBackend: ``compile(backend=<unknown name>)`` (every name torch lists compiles to
    one XLA program here, and a backend callable is accepted)."""

    def __init__(self, name) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.")


class BackendCompilerFailed(TorchDynamoException):
    """torch._dynamo.exc.BackendCompilerFailed: the backend could not compile (here: it is not a backend)."""


class UserError(TorchDynamoException):
    """torch._dynamo.exc.UserError: a misuse torch reports with an error type (``UserErrorType``)."""

    def __init__(self, error_type, msg, case_name=None) -> None:
        super().__init__(msg)
        self.error_type, self.message = error_type, msg


exc = types.ModuleType("functorch_lite._dynamo.exc", "torch._dynamo.exc: the exceptions scripts catch.")
exc.Unsupported = GraphBreak
exc.TorchDynamoException = TorchDynamoException
exc.RecompileError = RecompileError
exc.UserError = UserError
exc.InvalidBackend = InvalidBackend
exc.BackendCompilerFailed = BackendCompilerFailed
exc.UncapturedHigherOrderOpError = _UncapturedHOOError
exc.TorchRuntimeError = _TorchRuntimeError
InvalidBackend.__module__ = BackendCompilerFailed.__module__ = UserError.__module__ = exc.__name__


class _Counters(collections.defaultdict):
    """``torch._dynamo.utils.counters``: a defaultdict of Counters. Filled here: ``["graph_break"][reason]``
    (one per graph break: the call ran eagerly) and ``["stats"]`` (``unique_graphs``: programs traced,
    ``calls_captured``: compiled calls), read from the compiler's own counts when looked at."""

    def __init__(self):
        super().__init__(collections.Counter)
        self._base = dict(_runner.COUNTERS)

    def __missing__(self, key):
        if key == "graph_break":   # the compiler's own Counter (it counts there whether or not it is in here)
            self["graph_break"] = _GRAPH_BREAKS
            return _GRAPH_BREAKS
        return super().__missing__(key)

    def _sync(self):
        if _GRAPH_BREAKS and not super().__contains__("graph_break"):
            self["graph_break"] = _GRAPH_BREAKS
        stats = super().__getitem__("stats")
        for ours, torchs in (("traces", "unique_graphs"), ("calls", "calls_captured")):
            n = _runner.COUNTERS[ours] - self._base.get(ours, 0)
            if n:
                stats[torchs] = n
            else:
                stats.pop(torchs, None)
        if not stats:
            super().pop("stats", None)

    def __getitem__(self, key):
        if key == "stats":
            self._sync()
        return super().__getitem__(key)

    def __iter__(self):
        self._sync()
        return super().__iter__()

    def keys(self):
        self._sync()
        return super().keys()

    def __len__(self):
        self._sync()
        return super().__len__()

    def __contains__(self, key):
        self._sync()
        return super().__contains__(key)

    def items(self):
        self._sync()
        return super().items()

    def values(self):
        self._sync()
        return super().values()

    def __repr__(self):
        self._sync()
        return "defaultdict" + super().__repr__()[len(type(self).__name__):]

    def clear(self):
        super().clear()
        _GRAPH_BREAKS.clear()
        self._base = dict(_runner.COUNTERS)


utils = types.ModuleType("functorch_lite._dynamo.utils", "torch._dynamo.utils: ``counters``.")
utils.counters = _Counters()
eval_frame = types.ModuleType("functorch_lite._dynamo.eval_frame",
                              "torch._dynamo.eval_frame: ``OptimizedModule`` (what ``compile(model)`` returns).")


def _eval_frame_getattr(name):
    if name == "OptimizedModule":  # (imported on first use: it subclasses nn.Module)
        from ._compile.optimized import OptimizedModule
        return OptimizedModule
    raise AttributeError(f"module 'functorch_lite._dynamo.eval_frame' has no attribute {name!r}")


eval_frame.__getattr__ = _eval_frame_getattr
for _m in (exc, utils, eval_frame):
    sys.modules[_m.__name__] = _m


def graph_break(msg: str = "") -> None:
    """``torch._dynamo.graph_break()``: nothing, eagerly; inside a compiled function, a graph break (the call runs
    eagerly with a one-time warning; under ``fullgraph=True``, torch's ``Unsupported`` error)."""
    if _runner.TRACING[0]:
        raise _UserBreak()


def optimize(backend="inductor", *, nopython: bool = False, error_on_graph_break=None, guard_export_fn=None,
             guard_fail_fn=None, guard_filter_fn=None, disable: bool = False, dynamic=None, package=None,
             recompile_limit=None, isolate_recompiles: bool = False, shapes_spec=None):
    """``torch._dynamo.optimize(backend)(fn)``, the older spelling of ``compile(fn, backend=backend,
    fullgraph=nopython, dynamic=dynamic)``."""
    from ._compile import compile as _compile
    return _compile(backend=backend, fullgraph=nopython, dynamic=dynamic, disable=disable,
                    recompile_limit=recompile_limit)


def mark_static_address(t, guard: bool = False) -> None:
    """torch keeps ``t``'s address fixed across calls (CUDA graphs); an XLA program takes its inputs as arguments,
    so there is nothing to mark."""


def reset_code_caches() -> None:
    """torch drops the compiled code of functions that no longer exist; here a compiled function's programs go with
    it (nothing is kept for dead code)."""


class GraphCompileReason:
    """Why a graph ended (torch's ``GraphCompileReason``): ``reason``, ``user_stack``, ``graph_break``."""

    def __init__(self, reason: str, user_stack: list, graph_break: bool = True):
        self.reason, self.user_stack, self.graph_break = reason, user_stack, graph_break

    def __repr__(self):
        return (f"GraphCompileReason(reason={self.reason!r}, user_stack={self.user_stack!r}, "
                f"graph_break={self.graph_break!r})")


class ExplainOutput:
    """What ``explain(fn)(*args)`` returns: ``graphs``, ``graph_count``, ``graph_break_count``,
    ``break_reasons``, ``op_count``, ``ops_per_graph`` (the primitives of each XLA program), ``out_guards``
    (the guard key's components), ``compile_times``."""

    def __init__(self, graphs, graph_count, graph_break_count, break_reasons, op_count, ops_per_graph,
                 out_guards, compile_times=""):
        self.graphs, self.graph_count, self.graph_break_count = graphs, graph_count, graph_break_count
        self.break_reasons, self.op_count, self.ops_per_graph = break_reasons, op_count, ops_per_graph
        self.out_guards, self.compile_times = out_guards, compile_times

    def __str__(self):
        out = (f"Graph Count: {self.graph_count}\nGraph Break Count: {self.graph_break_count}\n"
               f"Op Count: {self.op_count}\n")
        out += "Break Reasons:\n"
        for i, r in enumerate(self.break_reasons):
            out += f"  Break Reason {i + 1}:\n    Reason: {r.reason}\n    User Stack:\n"
            out += "".join(f"      {fs}\n" for fs in r.user_stack)
        out += "Ops per Graph:\n"
        for i, ops in enumerate(self.ops_per_graph):
            out += f"  Ops {i + 1}:\n" + "".join(f"    {op}\n" for op in ops)
        out += "Out Guards:\n" + "".join(f"  Guard {i + 1}: {g}\n" for i, g in enumerate(self.out_guards))
        return out


def explain(f, *extra_args, **extra_kwargs):
    """``torch._dynamo.explain(fn)(*args, **kwargs)``: compiles ``fn`` afresh and calls it once, reporting what
    ``functorch_lite.compile`` does with it. Here a call is ONE XLA program or, at a graph break, runs eagerly
    whole (there is no partial graph on either side of a break): so either ``graph_count=1,
    graph_break_count=0`` with the program's primitives in ``ops_per_graph``, or ``graph_count=0,
    graph_break_count=1`` with our reason (torch would count the graphs around the break instead)."""
    def inner(*args, **kwargs):
        from ._compile.runner import CompiledFunction, _cause
        args, kwargs = args + extra_args, {**kwargs, **extra_kwargs}
        cf = CompiledFunction(f, fullgraph=True)
        try:
            cf(*args, **kwargs)
        except GraphBreak as e:
            cause = e.__cause__ if e.__cause__ is not None else e
            stack = [fs for fs in traceback.extract_tb(cause.__traceback__)
                     if "functorch_lite" not in fs.filename and "/jax/" not in fs.filename]
            f(*args, **kwargs)   # the eager run the compiled call would have made
            return ExplainOutput([], 0, 1, [GraphCompileReason(_cause(cause), stack[-1:])], 0, [], [])
        ops = []
        for key, entry in cf.cache.items():
            ops.append(_primitives(cf, entry, args, kwargs))
        guards = [f"{n} == {v!r}" for key in cf.cache for n, v in zip(*cf._flat(key, cf._last[1]))]
        return ExplainOutput([], len(ops), 0, [], sum(map(len, ops)), ops, guards)
    return inner


def _primitives(cf, entry, args, kwargs) -> list:
    """The primitive names of a cached program's jaxpr (its trace is jax's cached one: no Python re-run)."""
    from ._compile import state as S
    d = S.discover_cached(cf.fn, args, kwargs, cf)
    cf._ctx = (d, args, kwargs)
    try:
        jaxpr = entry.jitted.trace([slot.get() for slot in d.slots]).jaxpr
    finally:
        cf._ctx = None
    return _prims(jaxpr.jaxpr)


_INLINE = ("jit", "pjit", "closed_call", "core_call", "remat", "checkpoint", "custom_jvp_call", "custom_vjp_call",
           "custom_vjp_call_jaxpr")


def _prims(jaxpr) -> list:
    """Primitive names, calls of jitted pieces (each facade op is one) opened up."""
    out = []
    for eqn in jaxpr.eqns:
        name = str(eqn.primitive)
        inner = None
        if name in _INLINE:
            inner = next((p for k in ("jaxpr", "call_jaxpr", "fun_jaxpr") if (p := eqn.params.get(k)) is not None),
                         None)
        if inner is None:
            out.append(name)
        else:
            out += _prims(getattr(inner, "jaxpr", inner))
    return out


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
        if isinstance(force_backend, str):   # (a backend callable is accepted, never called: see compile)
            from ._compile import _BACKENDS, _REGISTERED
            if force_backend not in _BACKENDS and force_backend not in _REGISTERED:
                raise InvalidBackend(force_backend)
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


def _is_function(obj) -> bool:
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
                            types.WrapperDescriptorType))


def _sig_ident(sig):
    """A signature's identity as torch compares them: positional names, keyword-only names, defaults."""
    var = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ps = sig.parameters.values()
    return (tuple(p.name for p in ps if p.kind not in var + (inspect.Parameter.KEYWORD_ONLY,)),
            {p.name for p in ps if p.kind == inspect.Parameter.KEYWORD_ONLY},
            {p.name: p.default for p in ps if p.kind not in var})


_POLYFILLED: dict = {}  # id -> (original, stand-in) of every registration: torch registers a function once


def substitute_in_graph(original_fn, *, can_constant_fold_through: bool = False, skip_signature_check: bool = False):
    """``torch.compiler.substitute_in_graph(original_fn)``: a decorator registering a traceable stand-in for a
    (usually C) function. A trace here runs the original itself, so the stand-in is never needed; as in torch, the
    decorated name calls ``original_fn`` (eagerly and compiled), with the stand-in's name and docs, after torch's
    checks (functions only; the same signature, unless either is ``(*args, **kwargs)`` or the check is skipped)."""
    if not _is_function(original_fn):
        raise TypeError(f"substitute_in_graph expects a function but got {type(original_fn)!r}")

    def wrapper(traceable_fn):
        if not _is_function(traceable_fn):
            raise TypeError(f"@substitute_in_graph(...) expects a function but got {type(traceable_fn)!r}")
        if not skip_signature_check:
            try:
                original_sig = inspect.signature(original_fn)
            except ValueError:
                pass
            else:
                traceable_sig = inspect.signature(traceable_fn)
                wild = _sig_ident(inspect.signature(lambda *args, **kwargs: None))
                a, b = _sig_ident(original_sig), _sig_ident(traceable_sig)
                if a != b and a != wild and b != wild:
                    raise TypeError(f"Signature mismatch between {original_fn} and {traceable_fn}: "
                                    f"{original_sig} != {traceable_sig}")

        if id(original_fn) in _POLYFILLED:
            raise ValueError(f"Duplicate dispatch rule for {original_fn}: already registered in VariableBuilder's "
                             "id dispatch map")

        @functools.wraps(traceable_fn)
        def wrapped(*args, **kwargs):
            return original_fn(*args, **kwargs)
        wrapped.__torch_dynamo_original__ = original_fn
        wrapped.__torch_dynamo_polyfill__ = traceable_fn
        wrapped.__torch_dynamo_can_constant_fold_through__ = can_constant_fold_through
        _POLYFILLED[id(original_fn)] = _POLYFILLED[id(wrapped)] = (original_fn, wrapped)
        return wrapped
    return wrapper
