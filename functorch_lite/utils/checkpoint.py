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
"""
from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Callable

import jax

from .._tensor.tensor import Tensor
from ..autograd import grad_mode as _gm
from ..autograd import graph as _graph
from .._warn import user_stacklevel as _user_stacklevel

__all__ = ["checkpoint", "checkpoint_sequential"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")

_FUNCTIONS: OrderedDict = OrderedDict()  # function -> CompiledFunction (its guard keys and node entries)


class _Holder:
    __slots__ = ("node_op", "node_entry", "node_ctx")

    def __init__(self):
        self.node_op = self.node_entry = self.node_ctx = None


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


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, preserve_rng_state: bool = True, **kwargs) -> Any:
    """Run ``function(*args, **kwargs)`` keeping only its inputs; backward recomputes it (same RNG draws)."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, UserWarning, stacklevel=_user_stacklevel())
        use_reentrant = True
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if not _gm._state.enabled:
        return function(*args, **kwargs)
    if use_reentrant and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning,
                      stacklevel=_user_stacklevel())
        with _gm.no_grad():
            return function(*args, **kwargs)
    from .._compile import state as S
    cf = _runner(function)
    d = S.discover(function, args, kwargs)
    if not any(isinstance(s, S.StorageSlot) and s.tensor._requires_grad for s in d.slots):
        return function(*args, **kwargs)
    key, _ = cf._key(d, args, kwargs)
    in_vals = [s.get() for s in d.slots]
    first = next(_graph._seq)  # nodes from here on are the forward's own
    if _graph.SAVED_HOOKS[0] is None:
        out = function(*args, **kwargs)  # the forward, recorded so its last op names the node (CKPT-03) ...
    else:  # (saved-tensor hooks do not see what this graph, dropped below, saves)
        from ..autograd._saved_hooks import suspended
        with suspended():
            out = function(*args, **kwargs)
    tensors = _tensor_leaves(out)
    # the node's outputs: the tensors ``function`` made that require grad. One it returns unchanged (an argument
    # passed through, a closure tensor, a leaf) is returned as PyTorch returns it: the caller's object, untouched
    pos = tuple([i for i, t in enumerate(tensors)
                 if t._requires_grad and t.grad_fn is not None and t.grad_fn._seq > first])
    if not pos:
        return out
    made = [tensors[i] for i in pos]
    name = made[-1].grad_fn.name()
    holder = cf.holders.get((key, pos))
    if holder is None:
        holder = cf.holders[(key, pos)] = _Holder()
    for t in made:  # ... then detached: the graph inside ``function`` is dropped, its activations freed
        t.grad_fn = None
        t._requires_grad = False
    cf._record(holder, d, in_vals, args, kwargs, made, grad_fn=name, remat=True, select=_Select(pos))
    return out


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
        warnings.warn(_USE_REENTRANT_WARNING, UserWarning, stacklevel=_user_stacklevel())
        use_reentrant = True
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
        input = checkpoint(_Segment(functions, start, end), input, use_reentrant=use_reentrant, **kwargs)
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
