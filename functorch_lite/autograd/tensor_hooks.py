"""Tensor-level autograd API: ``register_hook``, ``retain_grad``, ``register_post_accumulate_grad_hook``,
``backward`` (spec §6.2, §6.4)."""
from __future__ import annotations

from .._tensor import storage as _storage
from .graph import _Handle


def _hook_wrapper(t, fn, out_nr):
    from .._tensor.tensor import Tensor

    def pre(cts):
        ct = cts[out_nr]
        if ct is None:
            return cts
        g = ct if isinstance(ct, Tensor) else Tensor._from_array(ct, t.dtype, t._storage.device)
        r = fn(g)
        if r is None:
            return cts
        cts = list(cts)
        cts[out_nr] = r if isinstance(ct, Tensor) else r._array
        return cts
    return pre


def register_hook(self, hook):
    """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        if self._hooks is None:
            self._hooks = _registry()
        return _Handle(self._hooks, hook)
    node = self.grad_fn
    if node._pre_hooks is None:
        node._pre_hooks = {}
    return _Handle(node._pre_hooks, _hook_wrapper(self, hook, self._out_nr))


def retain_grad(self):
    """Keep ``.grad`` for a non-leaf tensor (no-op on leaves, AG-29/30)."""
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return None
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
    return _Handle(self._post_hooks, hook)


def _registry():
    """A leaf's hook table: a module-registry dict, whose every change bumps ``STRUCTURE_EPOCH`` (a compiled
    function that reaches the tensor walks it again and sees the hooks as a guard)."""
    from ..nn.modules.module import _Registry
    return _Registry()


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """``loss.backward()``: accumulate gradients into the leaves' ``.grad`` (spec §6.2)."""
    from .engine import backward as _backward
    _backward(self, gradient, retain_graph, create_graph, inputs)


METHODS = {"register_hook": register_hook, "retain_grad": retain_grad,
           "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook, "backward": backward}
