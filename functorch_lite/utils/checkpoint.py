"""``torch.utils.checkpoint``: activation checkpointing on ``jax.checkpoint`` (spec §12.1).

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` forward without keeping its graph and records ONE
autograd node for it: the node keeps only ``fn``'s inputs (arguments, and the parameters/buffers ``fn`` reaches,
found the way ``compile`` finds them) and the RNG key, and its backward recomputes ``fn`` (with the facade's
autograd, so ``no_grad``/``detach`` inside behave as eagerly) under ``jax.checkpoint`` — so the activations are
rebuilt during backward, with the same dropout masks (CKPT-10),
and inside a compiled training step XLA cannot keep them alive across the forward (smaller peak memory; the
recomputation's inputs are tied to the cotangent, which keeps it apart on XLA:CPU too, where the barriers
``jax.checkpoint`` relies on are dropped: _compile.nodes._RematEntry).
The output's ``grad_fn`` is named after the last op inside ``fn``, as PyTorch's non-reentrant variant shows it
(CKPT-03). The recomputation happens inside the cached backward program, so ``fn``'s Python body runs again
only when that program is first traced (PyTorch re-runs it on every backward, CKPT-02).

``context_fn`` is called once per call; its forward context wraps the forward, its recompute context is entered
while the node's backward (the recomputation) runs, and left as PyTorch leaves it (with its
``_StopRecomputationError`` under early stop). ``create_selective_checkpoint_contexts`` (``_sac``) saves the
outputs of the ops its policy picks on the node and replays them into the recomputation.
``use_reentrant=True`` is PyTorch's ``CheckpointFunction``: forward under no_grad, a
``CheckpointFunctionBackward`` node over the top-level output tensors, refused under ``autograd.grad`` /
``backward(inputs=...)`` (a node pre-hook: such a graph's backward runs node by node); inside a compiled
function it is the non-reentrant checkpoint, as under torch.compile. ``preserve_rng_state=False``: the
recomputation draws from the generator's next key (taken, and the generator advanced, at forward time).
"""
from __future__ import annotations

import contextlib
import enum
import sys
import warnings
from collections import OrderedDict
from typing import Any, Callable

import jax

from .._tensor.tensor import Tensor
from ..autograd import grad_mode as _gm
from ..autograd import graph as _graph
from .._warn import user_stacklevel as _user_stacklevel
from . import _sac

_sac.install_aten()

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "CheckpointPolicy",
           "DefaultDeviceType", "SelectiveCheckpointContext", "check_backward_validity",
           "create_selective_checkpoint_contexts", "detach_variable", "get_device_states", "noop_context_fn",
           "set_checkpoint_debug_enabled", "set_checkpoint_early_stop", "set_device_states"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")

_SEQ_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. "
    "In version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is "
    "recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. "
    "Refer to docs for more details on the differences between the two variants.")

_FUNCTIONS: OrderedDict = OrderedDict()  # function -> CompiledFunction (its guard keys and node entries)


class _Holder:
    __slots__ = ("node_op", "node_entry", "node_ctx", "saves")

    def __init__(self):
        self.node_op = self.node_entry = self.node_ctx = None
        self.saves = ()  # (its node recomputes from the inputs it holds: no version check, as torch's checkpoint)


def _runner(function):
    from .._compile.runner import CompiledFunction
    cf = _FUNCTIONS.get(function)
    if cf is None:
        cf = _FUNCTIONS[function] = CompiledFunction(function)
        cf.holders = {}
        if len(_FUNCTIONS) > 256:
            _FUNCTIONS.popitem(last=False)
    return cf


def noop_context_fn():
    from contextlib import nullcontext
    return nullcontext(), nullcontext()


_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled: bool | None = None
_enable_checkpoint_early_stop: bool | None = None


class CheckpointError(RuntimeError):
    pass


class _StopRecomputationError(Exception):
    pass


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Whether checkpoint runs in debug mode (overrides ``debug=``; None: defer to it)."""
    global _checkpoint_debug_enabled
    try:
        prev = _checkpoint_debug_enabled
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoint stops its recomputation early (overrides ``early_stop=``). Ours
    recomputes inside one traced backward program either way; the flag decides how the recompute context of
    ``context_fn`` is left (as PyTorch: with its ``_StopRecomputationError`` when stopping early)."""
    global _enable_checkpoint_early_stop
    try:
        prev = _enable_checkpoint_early_stop
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def detach_variable(inputs):
    if isinstance(inputs, tuple):
        out = []
        for inp in inputs:
            if not isinstance(inp, Tensor):
                out.append(inp)
                continue
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        return tuple(out)
    raise RuntimeError(
        f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")


def check_backward_validity(inputs) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG states checkpoint saves when no argument is on a non-CPU device."""
    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            from .. import accelerator
            acc = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc else "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """(device ids, RNG states) of the non-CPU devices among ``args``' tensors: the facade keeps one RNG stream
    (the default generator, saved with the checkpoint's inputs), so there are no per-device states to save."""
    ids = [t.get_device() for t in _tensor_leaves(args) if t.device.type not in ("cpu", "meta")]
    if ids:
        raise RuntimeError("get_device_states: per-device RNG states are not supported by functorch_lite "
                           f"(tensors on {sorted({t.device.type for t in _tensor_leaves(args)})}); "
                           "its single RNG stream is saved by checkpoint itself")
    return [], []


def set_device_states(devices, states, *, device_type=None) -> None:
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    if list(devices):
        raise RuntimeError("set_device_states: per-device RNG states are not supported by functorch_lite")


# ---- selective activation checkpointing (API) ----------------------------------------------------------------
class SelectiveCheckpointContext:
    """Context passed to a selective-checkpoint policy function."""

    def __init__(self, *, is_recompute, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class _SACContext:
    """One of the two contexts ``create_selective_checkpoint_contexts`` returns (forward, recompute)."""

    def __init__(self, policy_fn, storage, recompute, allow_cache_entry_mutation=False):
        self.policy_fn, self.storage, self.recompute = policy_fn, storage, recompute
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) contexts of a selective activation checkpoint, for ``context_fn``.

    The policy is asked about every op call of the forward (named by the aten overload PyTorch would run:
    ``_sac``); the outputs of the ops it saves are kept on the checkpoint's node, and the recomputation uses
    them in place of recomputing those ops. ``*_CPU_OFFLOAD`` policies raise (no offload here)."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, _sac.OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For example, if you have "
                         "`torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                         ) if isinstance(op, _sac.OpOverloadPacket) else ""
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. "
                                 f"{extra}")
            if not _sac.matchable(op):
                raise ValueError(f"functorch_lite: selective checkpoint cannot match {op}: no functorch_lite op "
                                 "runs as it (ops are matched by the aten overload PyTorch's CPU path runs for "
                                 "each functorch_lite op call, their .default overloads)")
        ops = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = {}
    return (_SACContext(policy_fn, storage, False),
            _SACContext(None, storage, True, allow_cache_entry_mutation))


# ---- checkpoint ------------------------------------------------------------------------------------------------
def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = _DEFAULT_DETERMINISM_MODE,
               debug: bool = False, early_stop: bool = True, **kwargs) -> Any:
    """Run ``function(*args, **kwargs)`` keeping only its inputs; backward recomputes it (same RNG draws unless
    ``preserve_rng_state=False``)."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, UserWarning, stacklevel=_user_stacklevel())
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _reentrant(function, preserve, args)
    if (_checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug) and \
            context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    ctxs = None
    if context_fn is not noop_context_fn:
        fwd_ctx, rec_ctx = context_fn()
        stop = _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop
        ctxs = (fwd_ctx, rec_ctx, stop)
    if not _gm._state.enabled:
        return function(*args, **kwargs)
    return _non_reentrant(function, args, kwargs, preserve, ctxs)


def _reentrant(function, preserve, args):
    """``use_reentrant=True``: PyTorch's ``CheckpointFunction`` (its forward runs under no_grad; its outputs are
    the top-level tensors it returns, with a ``CheckpointFunctionBackward`` node). Inside a compiled function it
    is the non-reentrant checkpoint, as torch.compile makes it."""
    from .._compile.runner import TRACING
    if TRACING[0] > 0:
        return _non_reentrant(function, args, {}, preserve, None) if _gm._state.enabled else function(*args)
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning,
                      stacklevel=_user_stacklevel())
        with _gm.no_grad():
            return function(*args)
    if not _gm._state.enabled:
        with _gm.no_grad():
            return function(*args)
    return _non_reentrant(function, args, {}, preserve, None, reentrant=True)


def _non_reentrant(function, args, kwargs, preserve, ctxs, reentrant=False):
    from .._compile import state as S
    cf = _runner(function)
    d = S.discover(function, args, kwargs)
    fwd_ctx = ctxs[0] if ctxs is not None else None
    if not any(isinstance(s, S.StorageSlot) and s.tensor._requires_grad for s in d.slots):
        if fwd_ctx is None:
            return function(*args, **kwargs)
        with fwd_ctx:
            return function(*args, **kwargs)
    key, _ = cf._key(d, args, kwargs)
    in_vals = [s.get() for s in d.slots]
    rng_at = None
    if not preserve:  # the recompute draws from the generator's state at backward time (PyTorch: a fresh mask)
        rng_at = next((i for i, s in enumerate(d.slots) if isinstance(s, S.RngSlot)), None)
    first = next(_graph._seq)  # nodes from here on are the forward's own
    rec = None
    if fwd_ctx is None:
        out = _forward(function, args, kwargs, reentrant)
    elif isinstance(fwd_ctx, _SACContext) and fwd_ctx.policy_fn is not None:
        with _sac.Recorder(fwd_ctx.policy_fn, CheckpointPolicy, SelectiveCheckpointContext) as rec:
            out = _forward(function, args, kwargs, reentrant)
    else:
        with fwd_ctx:
            out = _forward(function, args, kwargs, reentrant)
    tensors = _tensor_leaves(out)
    if reentrant:  # the top-level tensors (a dict's are not Function outputs), floating ones differentiable
        top = _top_positions(out)
        pos = tuple([i for i in top if tensors[i].dtype.is_floating_point or tensors[i].dtype.is_complex])
        if not pos:
            return out
        made = [tensors[i] for i in pos]
        arg_ids = {id(a) for a in args}
        fresh = {}
        for k, t in enumerate(made):  # an input returned unchanged (or any tensor with a graph): a new tensor
            if id(t) in arg_ids or t._requires_grad:
                with _gm.no_grad():
                    made[k] = fresh[id(t)] = t.detach()
        if fresh:
            out = _replace_top(out, fresh)
        name = "CheckpointFunctionBackward"
    else:
        # the node's outputs: the tensors ``function`` made that require grad. One it returns unchanged (an
        # argument passed through, a closure tensor, a leaf) is returned as PyTorch returns it: the caller's object
        pos = tuple([i for i, t in enumerate(tensors)
                     if t._requires_grad and t.grad_fn is not None and t.grad_fn._seq > first])
        if not pos:
            return out
        made = [tensors[i] for i in pos]
        name = made[-1].grad_fn.name()
    unused = frozenset() if reentrant else _unreached(d, made, first)
    plan = tuple(rec.plan) if rec is not None else ()
    hkey = (key, pos, reentrant, rng_at, unused)
    holder = cf.holders.get(hkey)
    if holder is None:
        holder = cf.holders[hkey] = _Holder()
    for t in made:  # ... then detached: the graph inside ``function`` is dropped, its activations freed
        t.grad_fn = None
        t._requires_grad = False
    if rng_at is not None:
        in_vals = list(in_vals)
        in_vals[rng_at] = _advance_default_generator()
    cf._record(holder, d, in_vals, args, kwargs, made, grad_fn=name, remat=True, select=_Select(pos),
               unused=unused)
    node = made[-1].grad_fn
    if plan and node is not None:
        _sac_node(cf, holder, d, in_vals, hkey, plan, _Select(pos), node, rec.saved)
    elif ctxs is not None and node is not None and not isinstance(ctxs[1], _SACContext):
        _recompute_hooks(node, ctxs[1], ctxs[2])
    if reentrant and node is not None:
        node.register_prehook(_reentrant_check)
    return out


def _unreached(d, made, first) -> frozenset:
    """The slots of leaf tensors (parameters, leaf inputs) that the forward's own graph (its nodes after
    ``first``, from ``made``) does not reach: no input of the node, so their ``.grad`` stays None as torch's
    recomputed graph leaves it (not zeros: a decoupled weight decay would move an unused parameter)."""
    from .._compile import slots as SL
    reached, seen, todo = set(), set(), [t.grad_fn for t in made]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for e in n._edges:
            m = e[0] if e else None
            if m is None:
                continue
            if isinstance(m, _graph.AccumulateGrad) or m._seq <= first:
                reached.add(id(m))  # (a leaf, or a node of the graph before the call: not walked through)
            else:
                todo.append(m)
    out = []
    for i, s in enumerate(d.slots):
        if type(s) is SL.StorageSlot and s.tensor._requires_grad and s.tensor._grad_fn is None:
            t = s.tensor
            if not (t._acc is not None and id(t._acc) in reached or
                    any(a._grad_fn is not None and id(a._grad_fn) in reached for a in s.aliases)):
                out.append(i)
    return frozenset(out)


def _sac_node(cf, holder, d, in_vals, hkey, plan, select, node, saved):
    """A selective checkpoint's node: its arrays are the region's input leaves then the saved op outputs; its
    backward is the checkpoint's recomputation with those outputs replayed into it (``_sac.Replayer``). The
    saved arrays are arguments of the ``jax.checkpoint``-ed recomputation (a traced function caches its
    trace: a value it closed over would leak from one trace into the next)."""
    entries = cf.__dict__.setdefault("sac_entries", {})
    base = holder.node_entry
    n = len(node._arrays)
    e = entries.get((hkey, plan, n))
    if e is None or e[0] is not base:
        from .._compile.nodes import _RematEntry
        from .._compile.runner import _node_inputs
        body = cf._node_body(holder, _node_inputs(d, in_vals)[1], select)

        def run(arrays, cts, wants):
            with _sac.Replayer(plan, arrays[n:], CheckpointError):
                return body(tuple(arrays[:n]), cts, wants)
        e = entries[(hkey, plan, n)] = (base, _RematEntry(base.outs, run, base.slot_at, base.tie_idx))
    node._arrays = tuple(node._arrays) + tuple(saved)
    node._entry = e[1]


def _forward(function, args, kwargs, reentrant):
    """The checkpointed forward: recorded (its last op names the node, CKPT-03), or under no_grad (reentrant)."""
    with contextlib.ExitStack() as stack:
        if reentrant:
            stack.enter_context(_gm.no_grad())
        if _graph.SAVED_HOOKS[0] is not None:  # (saved-tensor hooks do not see what this graph, dropped, saves)
            from ..autograd._saved_hooks import suspended
            stack.enter_context(suspended())
        return function(*args, **kwargs)


def _advance_default_generator():
    """The key the recompute of a ``preserve_rng_state=False`` checkpoint draws from: the default generator's
    next key, which advances it (PyTorch's recompute draws from the global generator again, so its masks differ
    from the forward's and the stream moves on). Taken at forward time: the recompute is traced once."""
    from ..random import default_generator
    return default_generator.next_key()


def _recompute_hooks(node, rec_ctx, stop):
    """Enter ``context_fn``'s recompute context while the node's backward (the recomputation) runs."""
    def pre(grads):
        rec_ctx.__enter__()

    def post(grad_inputs, grad_outputs):
        if stop:  # PyTorch stops the recomputation with an exception raised inside the context
            e = _StopRecomputationError()
            rec_ctx.__exit__(_StopRecomputationError, e, None)
        else:
            rec_ctx.__exit__(None, None, None)
    node.register_prehook(pre)
    node.register_hook(post)


def _reentrant_check(grads):
    """PyTorch's reentrant checkpoint cannot run under ``autograd.grad`` or ``backward(inputs=...)``."""
    from ..autograd import engine
    f = sys._getframe(1)
    code = engine.run_backward.__code__
    while f is not None:
        if f.f_code is code:
            if f.f_locals.get("inputs") is not None:
                raise RuntimeError(
                    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                    "`inputs` parameter to .backward(). To resolve this error, you can either set "
                    "use_reentrant=False, or call .backward() without passing the `inputs` argument.")
            break
        f = f.f_back
    return None


def _top_positions(out) -> list:
    """The flat leaf positions of ``out``'s top-level tensors (``out`` itself, or a tuple's elements)."""
    if isinstance(out, Tensor):
        return [0]
    if not isinstance(out, tuple):
        return []
    res, at = [], 0
    for o in out:
        if isinstance(o, Tensor):
            res.append(at)
            at += 1
        else:
            at += len(_tensor_leaves(o))
    return res


def _replace_top(out, fresh):
    if isinstance(out, Tensor):
        return fresh.get(id(out), out)
    return type(out)(*[fresh.get(id(o), o) for o in out]) if hasattr(out, "_fields") else \
        tuple(fresh.get(id(o), o) for o in out)


class CheckpointFunction:
    """PyTorch's reentrant checkpoint Function: ``CheckpointFunction.apply(function, preserve_rng_state,
    *args)`` is ``checkpoint(function, *args, use_reentrant=True, preserve_rng_state=...)``."""

    @staticmethod
    def apply(run_function, preserve_rng_state, *args):
        return _reentrant(run_function, preserve_rng_state, args)


def _tensor_leaves(result) -> list:
    """The tensors among ``result``'s leaves, in order."""
    return [t for t in jax.tree_util.tree_leaves(result, is_leaf=lambda x: isinstance(x, Tensor))
            if isinstance(t, Tensor)]


class _Select:
    """A checkpointed region's node outputs among a run's results: the tensors at the positions its forward
    made (the recomputation returns the same structure; the holder is keyed by these positions)."""
    __slots__ = ("pos",)

    def __init__(self, pos):
        self.pos = pos

    def __call__(self, result, effects, deferred) -> list:
        tensors = _tensor_leaves(result)
        return [tensors[i] for i in self.pos]


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Split a Sequential (or list of modules) into ``segments`` checkpointed chunks; the last runs plainly."""
    if use_reentrant is None:
        warnings.warn(_SEQ_USE_REENTRANT_WARNING, UserWarning, stacklevel=_user_stacklevel())
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, dict) or hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    segment_size = len(functions) // segments
    end = -1

    def run(start, stop, fns):
        def forward(x):
            for j in range(start, stop + 1):
                x = fns[j](x)
            return x
        return forward
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(_Segment(functions, start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1, functions)(input)


class _Segment:
    """A hashable, reusable run of modules (so each segment keeps one cached node entry)."""

    def __init__(self, fns, start, stop):
        self.fns, self.start, self.stop = fns, start, stop

    def __call__(self, x):
        for j in range(self.start, self.stop + 1):
            x = self.fns[j](x)
        return x

    def __hash__(self):
        return hash((tuple(id(f) for f in self.fns[self.start:self.stop + 1]),))

    def __eq__(self, other):
        return isinstance(other, _Segment) and all(a is b for a, b in zip(
            self.fns[self.start:self.stop + 1], other.fns[other.start:other.stop + 1])) and \
            self.stop - self.start == other.stop - other.start
