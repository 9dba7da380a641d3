"""Tensor-level autograd API: ``register_hook``, ``retain_grad``, ``register_post_accumulate_grad_hook``,
``backward`` (spec §6.2, §6.4)."""
from __future__ import annotations

import jax

from .._tensor import storage as _storage
from .._hooks import add_hook
from .graph import AccumulateGrad as _AccumulateGrad


def _hook_wrapper(t, fn, out_nr):
    from .._tensor.tensor import Tensor

    def pre(cts):
        ct = cts[out_nr]
        if ct is None:
            return cts
        g = ct if isinstance(ct, Tensor) else Tensor._from_array(ct, t.dtype, t._storage.device)
        r = fn(g)
        if r is None:
            if g._array is ct or g is ct:
                return cts
            r = g  # (the hook wrote the gradient in place and returned None: the engine goes on with it, as torch)
        else:
            check_hook_result(fn, g, r)
        cts = list(cts)
        cts[out_nr] = r if isinstance(ct, Tensor) else r._array
        return cts
    pre._tensor_hook = True  # (a tensor pre-hook: the engine runs these before retain_grad and the node's own)
    return pre


# ---- the engine runs these --------------------------------------------------------------------------------
def run_tensor_pre_hooks(node, cts):
    """PyTorch's tensor pre-hooks of a node: the hooks registered on its output tensors (a leaf's, for an
    AccumulateGrad), then their ``retain_grad``; the node's own pre-hooks run after, where it runs."""
    if isinstance(node, _AccumulateGrad):
        t = node.variable
        if t._hooks and cts[0] is not None:
            cts = [run_leaf_hooks(t, cts[0])]
        return cts
    if node._pre_hooks:
        for h in list(node._pre_hooks.values()):
            if getattr(h, "_tensor_hook", False):
                cts = h(cts)
    retain = node._metadata.get("_retain") if node._metadata else None
    if retain:
        for h in retain:
            cts = h(cts)
    return cts


def run_leaf_hooks(t, ct):
    """A leaf's ``register_hook`` hooks on its gradient (a jax array, or a tensor under ``create_graph``);
    returns it in the same form, in the leaf's dtype."""
    from .._tensor.tensor import Tensor
    g = ct if isinstance(ct, Tensor) else Tensor._from_array(ct, t.dtype, t._storage.device)
    if g.dtype is not t.dtype:
        g = g.to(t.dtype)
    for h in list(t._hooks.values()):
        r = h(g)
        if r is not None:
            check_hook_result(h, g, r)
            g = r
    return g if isinstance(ct, Tensor) else g._array


_CLASSIC = frozenset(("Float", "Double", "Half", "Byte", "Char", "Short", "Int", "Long"))


def _type_name(g):
    """PyTorch's ``Tensor::toString()`` as its hook checks print it: torch.FloatTensor, CPUBFloat16Type."""
    dev = g._storage.device.type
    if g.dtype.short in _CLASSIC:
        return f"torch.{'' if dev == 'cpu' else dev + '.'}{g.dtype.legacy}"
    return f"{dev.upper()}{g.dtype.short}Type"


def check_hook_results(fn, prev, result):
    """PyTorch's checks of the tuple a node pre-hook returned in place of ``prev`` (``check_result``)."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(prev):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got {len(result)}, "
                           f"but expected {len(prev)})")
    for g, r in zip(prev, result):
        if r is not None:
            if g is None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
            check_hook_result(fn, g, r)


def _hook_name(fn):
    """The name torch's messages give a hook: its ``__name__`` (a str: that name, for a hook torch makes inside)."""
    if isinstance(fn, str):
        return fn
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def check_hook_result(fn, g, r):
    """PyTorch's checks of what a gradient hook returned in place of ``g`` (``check_variable_result``)."""
    from .._tensor.tensor import Tensor
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    name = _hook_name(fn)
    if r.dtype is not g.dtype or r._storage.device.type != g._storage.device.type:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_type_name(g)} got {_type_name(r)})")
    if r._shape != g._shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _not_traced(t, what):
    """A graph break while a compiled function is traced: the hook / retained .grad is Python the backward outside
    runs on this tensor (the trace would leave it on an input, or lose it on an intermediate), as torch.compile
    breaks the graph there."""
    if isinstance(t._storage.array, jax.core.Tracer):
        from .._compile.runner import TRACING
        if TRACING[0]:
            from ..ops._dispatch import data_dependent_error
            raise data_dependent_error(what)


def register_hook(self, hook):
    """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    _not_traced(self, "Tensor.register_hook()")
    if self.grad_fn is None:
        if self._hooks is None:
            self._hooks = _registry()
        return add_hook(self._hooks, hook)
    node = self.grad_fn
    if node._pre_hooks is None:
        node._pre_hooks = {}
    return add_hook(node._pre_hooks, _hook_wrapper(self, hook, self._out_nr))


def retain_grad(self):
    """Keep ``.grad`` for a non-leaf tensor (no-op on leaves, AG-29/30)."""
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return None
    _not_traced(self, "Tensor.retain_grad() on an intermediate")
    self._retains_grad = True
    node = self.grad_fn
    out_nr = self._out_nr
    import weakref
    ref = weakref.ref(self)

    def keep(cts):
        from .._tensor.tensor import Tensor
        t = ref()
        ct = cts[out_nr]
        if t is None or ct is None or not t._retains_grad or t.grad_fn is not node:
            return cts
        g = ct if isinstance(ct, Tensor) else Tensor._from_array(ct, t.dtype, t._storage.device)
        if _storage.SET_LOG[0] is not None:
            _storage.log_attrs(t, ("_grad",))
        t._grad = g if t._grad is None else t._grad + g
        return cts
    node.metadata.setdefault("_retain", []).append(keep)
    return None


def register_post_accumulate_grad_hook(self, hook):
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._post_hooks is None:
        self._post_hooks = _registry()
    return add_hook(self._post_hooks, hook)


def _registry():
    """A leaf's hook table: a module-registry dict, whose every change bumps ``STRUCTURE_EPOCH`` (a compiled
    function that reaches the tensor walks it again and sees the hooks as a guard)."""
    from ..nn.modules.module import _Hooks
    return _Hooks()


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """``loss.backward()``: accumulate gradients into the leaves' ``.grad`` (spec §6.2)."""
    from .engine import backward as _backward
    from .grad_mode import _state
    if _state.transform:
        from ..func._core import refuse_inside_transform
        refuse_inside_transform("backward")
    _backward(self, gradient, retain_graph, create_graph, inputs)


METHODS = {"register_hook": register_hook, "retain_grad": retain_grad,
           "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook, "backward": backward}
