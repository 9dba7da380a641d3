"""The backward engine: iterative, dependency-counted, gradients released as consumed (design §3)."""
from __future__ import annotations

import heapq

import jax
import jax.numpy as jnp

from .. import dtypes as D
from . import grad_mode as _gm
from .graph import AccumulateGrad, _FREED_MSG, check_saved


def _tensor_cls():
    from .._tensor.tensor import Tensor
    return Tensor


_add = jax.jit(lambda a, b: a + b)


def _acc(buf, i, ct):
    cur = buf[i]
    if cur is None:
        buf[i] = ct
    elif ct is not None:
        buf[i] = _add(cur, ct) if not isinstance(cur, _tensor_cls()) else cur + ct
    return buf


def run_backward(roots, root_grads, *, retain_graph=False, create_graph=False, inputs=None, accumulate=True):
    """Propagate ``root_grads`` (arrays or Tensors) from ``roots``; accumulate into leaves' ``.grad`` or
    return the gradients of ``inputs`` (``autograd.grad``)."""
    from .graph import edge_of
    Tensor = _tensor_cls()
    # map root tensors to (node, output index)
    start = []
    for t, g in zip(roots, root_grads):
        if not t._requires_grad:
            continue
        start.append((edge_of(t), g))
    capture = None
    if inputs is not None:
        capture = {}
        for k, t in enumerate(inputs):
            node, nr = edge_of(t)
            capture.setdefault((id(node), nr), []).append(k)
    # dependency counts over the reachable graph
    deps = {}
    nodes = {}
    stack = [n for (n, _), _ in start]
    for n in stack:
        nodes[id(n)] = n
    seen = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for nxt, _ in n._edges:
            deps[id(nxt)] = deps.get(id(nxt), 0) + 1
            if id(nxt) not in nodes:
                nodes[id(nxt)] = nxt
                stack.append(nxt)
    buffers = {}
    for (n, nr), g in start:
        buf = buffers.get(id(n))
        if buf is None:
            buf = buffers[id(n)] = [None] * max(1, len(getattr(n, "_out_meta", ((),))))
        _acc(buf, nr, g)
    ready = []
    for (n, _), _ in start:
        if deps.get(id(n), 0) == 0 and all(id(n) != r[1] for r in ready):
            heapq.heappush(ready, (-n._seq, id(n)))
    results = [None] * (len(inputs) if inputs is not None else 0)
    prev_mode = _gm._state.enabled
    _gm._state.enabled = create_graph
    try:
        while ready:
            _, nid = heapq.heappop(ready)
            node = nodes[nid]
            cts = buffers.pop(nid, None) or [None]
            # tensor hooks / retain_grad on non-leaf outputs run as pre-hooks of their node
            if node._pre_hooks:
                for h in list(node._pre_hooks.values()):
                    cts = h(cts)
            retain = node.metadata.get("_retain") if node.metadata else None
            if retain:
                for h in retain:
                    cts = h(cts)
            if capture is not None:
                for nr, ct in enumerate(cts):
                    ks = capture.get((nid, nr))
                    if ks:
                        for k in ks:
                            results[k] = ct
            if isinstance(node, AccumulateGrad):
                if inputs is None and accumulate:
                    _accumulate(node.variable, cts[0], create_graph)
                continue
            if node._freed:
                raise RuntimeError(_FREED_MSG)
            check_saved(node)
            in_cts = _apply(node, cts, create_graph)
            if not retain_graph and node._saved:
                node._freed = True
                node._pullback = None
            for (nxt, nr), ct in zip(node._edges, in_cts):
                nid2 = id(nxt)
                buf = buffers.get(nid2)
                if buf is None:
                    buf = buffers[nid2] = [None] * max(1, len(getattr(nxt, "_out_meta", ((),))))
                if ct is not None and not (hasattr(ct, "dtype") and ct.dtype == jax.dtypes.float0):
                    _acc(buf, nr, ct)
                deps[nid2] -= 1
                if deps[nid2] == 0:
                    heapq.heappush(ready, (-nxt._seq, nid2))
    finally:
        _gm._state.enabled = prev_mode
    return results


def _apply(node, cts, create_graph):
    Tensor = _tensor_cls()
    if create_graph:
        from .higher_order import apply_differentiable
        return apply_differentiable(node, cts)
    arrs = [c._array if isinstance(c, Tensor) else c for c in cts]
    if hasattr(node, "apply_custom"):
        return node.apply_custom(arrs)
    return node.apply(arrs)


def _accumulate(t, ct, create_graph):
    """AccumulateGrad: run the leaf's hooks, then add into ``t.grad`` (in place, as PyTorch)."""
    Tensor = _tensor_cls()
    if ct is None:
        return
    g = ct if isinstance(ct, Tensor) else Tensor._from_array(ct, t.dtype, t._storage.device)
    if t._hooks:
        for h in list(t._hooks.values()):
            r = h(g)
            if r is not None:
                g = r
    if g.dtype is not t.dtype:
        g = g.to(t.dtype)
    if t._grad is None:
        t._grad = g
    elif create_graph:
        t._grad = t._grad + g
    else:
        t._grad._write(_add(t._grad._array, g._array))
    if t._post_hooks:
        for h in list(t._post_hooks.values()):
            h(t)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``torch.autograd.backward`` / ``Tensor.backward``."""
    Tensor = _tensor_cls()
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    tensors = tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    if retain_graph is None:
        retain_graph = create_graph
    roots, grads = _roots_and_grads(tensors, grad_tensors, create_graph)
    if inputs is not None:
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        inputs = tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        res = run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)
        for t, g in zip(inputs, res):
            if g is not None:
                if not isinstance(g, Tensor):
                    g = Tensor._from_array(g, t.dtype, t._storage.device)
                if t.grad_fn is None or t._retains_grad:
                    _accumulate_plain(t, g)
        return None
    run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph)
    return None


def _accumulate_plain(t, g):
    if t._grad is None:
        t._grad = g.detach()
    else:
        t._grad._write(_add(t._grad._array, g._array))


def _roots_and_grads(tensors, grad_tensors, create_graph):
    Tensor = _tensor_cls()
    roots, grads = [], []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {t.dtype}")
            g = jnp.ones(t._shape, t.dtype.jnp)
            if create_graph:
                g = Tensor._from_array(g, t.dtype, t._storage.device)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradient must be a Tensor, got {type(g).__name__}")
            if g._shape != t._shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(g._shape)}) "
                                   f"and output[{i}] has a shape of torch.Size({list(t._shape)}).")
            if g.dtype is not t.dtype:
                g = g.to(t.dtype)
            if not create_graph:
                g = g._array
        roots.append(t)
        grads.append(g)
    return roots, grads


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """``torch.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs`` as a tuple."""
    Tensor = _tensor_cls()
    if is_grads_batched:
        raise RuntimeError("autograd.grad(is_grads_batched=True) is not supported by functorch_lite; use "
                           "functorch_lite.func.vmap over autograd.grad instead")
    if isinstance(outputs, Tensor):
        outputs = (outputs,)
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots, grads = _roots_and_grads(tuple(outputs), tuple(grad_outputs), create_graph)
    res = run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs,
                       accumulate=False)
    out = []
    for k, (t, g) in enumerate(zip(inputs, res)):
        if g is None:
            if materialize_grads:
                from .. import zeros_like
                out.append(zeros_like(t))
                continue
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            out.append(None)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._from_array(g, t.dtype, t._storage.device)
        out.append(g)
    return tuple(out)
