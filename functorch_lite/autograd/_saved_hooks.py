"""``torch.autograd.graph``'s saved-tensor API: ``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``, ``allow_mutation_on_saved_tensors``; also ``increment_version``,
``register_multi_grad_hook``, ``GradientEdge`` / ``get_gradient_edge`` (re-exported by graph.py).

How saving works here: a Node keeps the *input arrays* of its op (``node._arrays``) and its cached jitted
backward kernel re-traces the forward from them; the ``saves`` spec of the op names the inputs PyTorch saves
(``x * y``: both; ``x.exp()``: the result). While hooks are active (``graph.SAVED_HOOKS[0]`` is set: the one
check ``graph.record`` makes, only for an op that saves something), each input array the spec names is
replaced in the node by ``pack_hook(tensor)``; ``check_saved`` (run by the engine for every node before a
backward) calls ``unpack_hook`` on it and puts the returned tensor's array back where the kernel reads it.

Differences from PyTorch, all about *which* tensor a hook sees, never about values with hooks that return
what they were given:
- an op PyTorch saves its *result* for (exp, tanh, sigmoid, softmax...) packs its tensor inputs here (our
  kernel recomputes from them): the same number of pack calls for unary ops, but the hook sees the input;
- all unpack calls of a backward run before its first node (PyTorch unpacks as each node runs), in the order
  the nodes run; with ``retain_graph=True`` every backward unpacks again, as in PyTorch;
- ``create_graph=True`` backward differentiates the node's input tensors themselves (hooks still run);
- a custom ``autograd.Function`` packs what ``ctx.save_for_backward`` got once its forward returned and unpacks
  at each ``ctx.saved_tensors`` access, as PyTorch (``function._pack_saved``); the node of ``utils.checkpoint``
  is not packed, nor are ops traced inside those (their saved values live inside one XLA program; hooks would see
  tracers); the checkpointed region's eager forward, whose graph is dropped, does not pack either (PyTorch's
  outer hooks do not see what a checkpointed region saves). A ``compile``d function called while hooks are
  active runs eagerly (a graph break), so its ops are packed as eager's.
"""
from __future__ import annotations

import sys
from collections import namedtuple

import jax

from . import grad_mode as _gm
from . import graph as _graph


class _State:
    stack: list = []      # innermost last: ("hooks", pack, unpack) or ("mutation", ctx)
    disabled: list = []   # disable_saved_tensors_hooks messages, innermost last


def _sync():
    top = _State.stack[-1] if _State.stack else None
    _graph.SAVED_HOOKS[0] = None if top is _SUSPENDED else top


_SUSPENDED = ("suspended",)


class suspended:
    """No packing inside (the forward of ``utils.checkpoint``, whose graph is dropped: PyTorch's outer hooks do
    not see what the checkpointed region saves either)."""

    def __enter__(self):
        _State.stack.append(_SUSPENDED)
        _sync()

    def __exit__(self, *exc):
        _pop(_SUSPENDED)


def _push(entry):
    if _State.disabled:
        raise RuntimeError(_State.disabled[-1])
    _State.stack.append(entry)
    _sync()


def _pop(entry):
    for i in range(len(_State.stack) - 1, -1, -1):
        if _State.stack[i] is entry:
            del _State.stack[i]
            break
    _sync()


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` for every tensor an op saves for backward, ``unpack_hook(packed)``
    when backward needs it (it must return a tensor of the saved one's size). Example::

        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.cpu(), lambda t: t):
            y = (x * w).sum()
        y.backward()
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self._entry = None

    def __enter__(self):
        self._entry = ("hooks", self.pack_hook, self.unpack_hook)
        _push(self._entry)
        return self

    def __exit__(self, *exc):
        _pop(self._entry)


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device when backward needs them
    (``pin_memory`` is accepted; JAX host buffers are not pinned)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)
        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context manager (and decorator): installing saved-tensor hooks inside raises ``RuntimeError(error_message)``;
    entering it while hooks are active raises the same error."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        if _State.stack:
            raise RuntimeError(self.error_message)
        _State.disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _State.disabled.pop()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*a, **k)
        return wrapper


class _AllowMutationOnSavedContext:
    def __init__(self):
        self.active = True


class allow_mutation_on_saved_tensors:
    """Context manager: an in-place write to a tensor saved for backward inside it does not make the backward
    fail; the backward (which must run inside the same context) uses the value the tensor had when it was saved.
    (A node keeps its inputs' immutable jax arrays, so nothing needs cloning: the version check is skipped.)"""

    def __enter__(self):
        self._ctx = _AllowMutationOnSavedContext()
        self._entry = ("mutation", self._ctx)
        _push(self._entry)
        return self._ctx

    def __exit__(self, *exc):
        self._ctx.active = False
        _pop(self._entry)


_INPLACE_PACK = ("A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                 "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please "
                 "open an issue if you need to perform in-place operations on the input to a pack hook.")


def run_pack(pack, t):
    """``pack(t)`` with grad mode off (PyTorch's), refusing a hook that writes its input in place."""
    prev = _gm._state.enabled
    _gm._state.enabled = False
    try:
        v = t._storage.version
        p = pack(t)
        if t._storage.version != v:
            raise RuntimeError(_INPLACE_PACK)
        return p
    finally:
        _gm._state.enabled = prev


def run_unpack(unpack, obj):
    """``unpack(obj)`` with grad mode off, which must give a tensor (PyTorch's TypeError else)."""
    from .._tensor.tensor import Tensor
    prev = _gm._state.enabled
    _gm._state.enabled = False
    try:
        t = unpack(obj)
    finally:
        _gm._state.enabled = prev
    if not isinstance(t, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(t).__name__}")
    return t


def on_record(node, saves, targs, entry):
    """``graph.record``'s slow path while hooks are active: pack what ``node`` saves."""
    if entry[0] == "mutation":
        node._packed = entry[1]
        return
    from .._tensor.tensor import Tensor
    pack, unpack = entry[1], entry[2]
    positions = []
    for s in saves:
        ps = [i for i, a in enumerate(targs) if isinstance(a, Tensor)] if s in ("all", "result") else \
            ([s] if isinstance(targs[s], Tensor) else [])
        for i in ps:
            if i not in positions:
                positions.append(i)
    if not positions or node._arrays is None:
        return
    if any(isinstance(node._arrays[i], jax.core.Tracer) for i in positions):
        return  # (an op traced by compile / checkpoint / func: one XLA program keeps what its backward needs)
    arrays = list(node._arrays)
    packed = []
    inplace_self = _inplace_self()
    for i in positions:
        t = targs[i]
        # as PyTorch's, the hook gets a new tensor object that requires grad as the input does: an alias of the
        # input (a later in-place write to it is seen by a hook that returns it, and is no error), except the
        # ``self`` of an in-place op, which the op writes next: the value it read (PyTorch saves a copy)
        if t is inplace_self:
            s = Tensor._from_array(arrays[i], t.dtype, t._storage.device)
        else:
            s = t.detach()
        s._requires_grad = t._requires_grad
        packed.append((i, run_pack(pack, s), t._shape, t.dtype, t._storage.device))
        arrays[i] = None
    node._arrays = tuple(arrays)
    node._packed = (unpack, tuple(packed))


def _inplace_self():
    """The ``self`` of the in-place op now recording its node (``_dispatch.inplace`` up the stack), else None."""
    from ..ops import _dispatch
    code = _dispatch.inplace.__code__
    f = sys._getframe(2)
    for _ in range(4):
        if f is None:
            return None
        if f.f_code is code:
            return f.f_locals.get("self")
        f = f.f_back
    return None


_MUTATION_MSG = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph was "
                 "originally recorded.")


def on_backward(node):
    """``graph.check_saved``'s slow path for a node recorded under hooks: unpack its saved arrays."""
    p = node._packed
    if isinstance(p, _AllowMutationOnSavedContext):
        if not p.active:
            raise AssertionError(_MUTATION_MSG)
        return
    from .. import _device as _dev
    unpack, packed = p
    arrays = list(node._arrays)
    for i, obj, shape, dtype, device in packed:
        t = run_unpack(unpack, obj)
        if t._shape != shape:
            raise RuntimeError(f"The tensor returned by the saved tensor unpack_hook has size {list(t._shape)}, "
                               f"but the tensor saved for backward has size {list(shape)}")
        if t.dtype is not dtype:
            prev = _gm._state.enabled
            _gm._state.enabled = False
            try:
                t = t.to(dtype)
            finally:
                _gm._state.enabled = prev
        a = t._array
        if t._storage.device != device and isinstance(a, jax.Array):
            a = jax.device_put(a, _dev.to_jax(device))
        arrays[i] = a
    node._arrays = tuple(arrays)


# ---- versions, edges, multi-grad hooks ---------------------------------------------------------------------
def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an in-place write would:
    a backward that saved it then raises PyTorch's "modified by an inplace operation" error."""
    from .._tensor.tensor import Tensor
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._storage.version += 1


GradientEdge = namedtuple("GradientEdge", ("node", "output_nr", "ownership_token"), defaults=(None,))
GradientEdge.__doc__ = "An edge of the autograd graph: (node, output_nr): where the gradient of a tensor goes."


def get_gradient_edge(tensor) -> GradientEdge:
    """The :class:`GradientEdge` the gradient of ``tensor`` flows into (its grad_fn, or its AccumulateGrad)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    e = _graph.edge_of(tensor)
    if e is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    return GradientEdge(e[0], e[1])


def edge_tensor(e):
    """A tensor standing for GradientEdge ``e`` in ``autograd.grad``: a leaf's own tensor, or a placeholder whose
    grad_fn/output number are the edge's (so the engine's ``edge_of`` gives back the edge)."""
    from .._tensor.tensor import Tensor
    node = e.node
    if isinstance(node, _graph.AccumulateGrad):
        return node.variable
    meta = getattr(node, "_out_meta", None)
    if not meta:
        raise RuntimeError(f"autograd.grad: cannot use the GradientEdge of {node.name()} here")
    shape, dtype = meta[e.output_nr]
    dev = next((a._storage.device for a in node._inputs or () if isinstance(a, Tensor)), None)
    if dev is None:
        from .._device import get_default_device
        dev = get_default_device()
    import jax.numpy as jnp
    with jax.default_device(_dev_jax(dev)):
        t = Tensor._from_array(jnp.zeros(shape, dtype.jnp), dtype, dev)
    t.grad_fn = node
    t._requires_grad = True
    t._out_nr = e.output_nr
    return t


def _dev_jax(dev):
    from .. import _device as _dev
    return _dev.to_jax(dev)


class _MultiHandle:
    """``register_multi_grad_hook``'s handle: removes the hook from every tensor."""

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _current_order():
    """The nodes of the backward now running (the engine's ``run_backward`` frame), or None."""
    from . import engine
    code = engine.run_backward.__code__
    f = sys._getframe(1)
    while f is not None:
        if f.f_code is code:
            return f.f_locals.get("order")
        f = f.f_back
    return None


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """``mode='all'``: ``fn(grads)`` once the gradients of all ``tensors`` that the current backward reaches are
    computed (None for the others); ``mode='any'``: ``fn(grad)`` with the first of them computed, once per
    backward. Returns a handle whose ``remove()`` removes it."""
    from . import engine
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    state = {"call": None, "grads": None, "expected": None}

    def begin():
        call = engine.BACKWARD_CALLS[0]
        if state["call"] != call:
            state["call"] = call
            state["grads"] = [None] * len(tensors)
            state["fired"] = False
            order = _current_order()
            ids = None if order is None else {id(n) for n in order}
            exp = set()
            for k, t in enumerate(tensors):
                if not t.requires_grad:
                    continue
                e = _graph.edge_of(t)
                if e is not None and (ids is None or id(e[0]) in ids):
                    exp.add(k)
            state["expected"] = exp

    def make(k):
        def hook(g):
            begin()
            if mode == "any":
                if not state["fired"]:
                    state["fired"] = True
                    fn(g)
                return None
            state["grads"][k] = g
            state["expected"].discard(k)
            if not state["expected"] and not state["fired"]:
                state["fired"] = True
                fn(tuple(state["grads"]))
            return None
        return hook

    return _MultiHandle([t.register_hook(make(k)) for k, t in enumerate(tensors) if t.requires_grad])


def grad(outputs, inputs, *args, **kwargs):
    """``torch.autograd.grad``, also taking :class:`GradientEdge` s among ``outputs`` and ``inputs``."""
    from . import engine
    if _gm._state.transform:
        from ..func._core import refuse_inside_transform
        refuse_inside_transform("grad")
    if isinstance(outputs, GradientEdge):
        outputs = (outputs,)
    if isinstance(inputs, GradientEdge):
        inputs = (inputs,)
    if type(outputs) in (list, tuple) and any(isinstance(o, GradientEdge) for o in outputs):
        outputs = tuple(edge_tensor(o) if isinstance(o, GradientEdge) else o for o in outputs)
    if type(inputs) in (list, tuple) and any(isinstance(i, GradientEdge) for i in inputs):
        inputs = tuple(edge_tensor(i) if isinstance(i, GradientEdge) else i for i in inputs)
    return engine.grad(outputs, inputs, *args, **kwargs)
