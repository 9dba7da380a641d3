"""The backward engine (design §3): iterative, dependency-counted, nothing recursive.

Two ways to run the same graph:
- whole-graph (compiled.py): when every node was recorded by dispatch and no hook or create_graph
  is involved, ONE cached jitted program runs all the nodes' vjps and the leaf accumulations.
- node by node: otherwise each node runs its entry's cached jitted backward kernel (or its custom
  rule), with tensor hooks, retain_grad and create_graph applied between nodes.
"""
from __future__ import annotations

import heapq

import jax

from .. import _device as _dev
from ..profiler import _range
from .._tensor import storage as _storage
from . import anomaly_mode as _anomaly
from . import grad_mode as _gm
from .compiled import LARGE as _LARGE, Ones as _Ones, compilable, run_compiled
from ._edges import outputs as torch_outputs
from .graph import (AccumulateGrad, _FREED_MSG, as_grad_tensor, check_saved, edge_of, from_grad_tensor,
                    grad_dtype_of, hook_outputs, shown, shown_grads, shown_replaced)
from .tensor_hooks import check_hook_results, run_leaf_hooks, run_tensor_pre_hooks


def _tensor_cls():
    from .._tensor.tensor import Tensor
    return Tensor


_add = jax.jit(lambda a, b: a + b)


def _is_float0(ct):
    return ct is not None and getattr(ct, "dtype", None) == jax.dtypes.float0


def _topo(start_nodes):
    """Reachable nodes, their dependency counts, and a deterministic topological order."""
    deps, nodes = {}, {}
    stack = []
    for n in start_nodes:
        if id(n) not in nodes:
            nodes[id(n)] = n
            stack.append(n)
    while stack:
        n = stack.pop()
        for nxt, _ in n._edges:
            k = id(nxt)
            deps[k] = deps.get(k, 0) + 1
            if k not in nodes:
                nodes[k] = nxt
                stack.append(nxt)
    remaining = dict(deps)
    ready = [(-n._seq, k) for k, n in nodes.items() if remaining.get(k, 0) == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, k = heapq.heappop(ready)
        n = nodes[k]
        order.append(n)
        for nxt, _ in n._edges:
            kk = id(nxt)
            remaining[kk] -= 1
            if remaining[kk] == 0:
                heapq.heappush(ready, (-nxt._seq, kk))
    return order


def _needed(order, targets, accumulate):
    """PyTorch's exec_info for a run with ``inputs``: node id -> True for a node that runs (one of the inputs'
    nodes under ``backward(inputs=)``, or one with a path to one), False for one that only captures an input's
    gradient (``autograd.grad``'s target with nothing to run below it); nodes left out neither run nor are
    checked or freed."""
    tset = {id(n) for n, _ in targets if n is not None}
    keep = {}
    for n in reversed(order):  # (children first)
        k = id(n)
        if accumulate and k in tset or any(id(c) in keep for c, _ in n._edges):
            keep[k] = True
        elif k in tset:
            keep[k] = False
    return keep


def run_backward(roots, root_grads, *, retain_graph=False, create_graph=False, inputs=None, accumulate=True):
    """Propagate ``root_grads`` from ``roots``. ``accumulate``: the leaves reached write their ``.grad``
    (``backward``; with ``inputs``, only those); else the gradients reaching ``inputs`` are returned
    (``autograd.grad``)."""
    with _range("autograd::engine::backward"):  # (one event while a profile records: profiler/)
        start = [(edge_of(t), g) for t, g in zip(roots, root_grads) if t._requires_grad]
        targets = keep = None
        order = _topo([n for (n, _), _ in start])
        run = order
        if inputs is not None:
            # (a no_grad view has none: "not used in the graph")
            targets = [edge_of(t) or (None, 0) for t in inputs]
            keep = _needed(order, targets, accumulate)
            order = [n for n in order if id(n) in keep]
            run = [n for n in order if keep[id(n)]]
            start = [s for s in start if id(s[0][0]) in keep]
            if accumulate:
                targets = None  # (backward(inputs=) captures nothing: its inputs' nodes write .grad)
        for n in run:
            if n._freed:
                raise RuntimeError(_FREED_MSG)
            if _anomaly.ENABLED[0]:  # (torch's warning with the forward's traceback of the node that raises)
                try:
                    check_saved(n)
                except RuntimeError:
                    _anomaly.warn_error(n)
                    raise
            else:
                check_saved(n)
        results = _LARGE
        if not create_graph and not _anomaly.ENABLED[0] and compilable(order):  # (anomaly mode: node by node)
            results = run_compiled(order, start, targets, accumulate, keep)
        if results is _LARGE:
            NODE_BY_NODE[0] += 1
            results = _run_nodes(order, start, targets, create_graph, accumulate, keep)
        if not retain_graph:
            _release(run)
        return results


def _release(run):
    """Free what the nodes that ran saved (a later backward through them raises ``_FREED_MSG``)."""
    for n in run:
        if n._saved or n._wraps or getattr(n._entry, "frees_graph", False):
            n._freed = True
            n._arrays = None


# ---- node by node -------------------------------------------------------------------------------
def _run_nodes(order, start, targets, create_graph, accumulate, keep=None):
    buffers = {}
    for (n, nr), g in start:
        _acc(buffers, n, nr, g.array() if isinstance(g, _Ones) else g)
    results = [None] * (len(targets) if targets is not None else 0)
    prev_mode = _gm._state.enabled
    _gm._state.enabled = create_graph
    anomaly = _anomaly.ENABLED[0]
    try:
        for node in order:
            cts = buffers.pop(id(node), None) or [None] * len(getattr(node, "_out_meta", ((),)))
            if keep is not None and not keep[id(node)]:
                # autograd.grad's input with nothing to run below it: its tensor hooks run, it does not
                cts = run_tensor_pre_hooks(node, cts)
                _capture(results, targets, node, cts)
                continue
            if targets is not None:  # (a node that runs: its input's gradient is captured before its hooks)
                _capture(results, targets, node, cts)
            if isinstance(node, AccumulateGrad):
                if accumulate:
                    if node._pre_hooks or node._hooks:
                        _accumulate_hooked(node, cts, create_graph)
                    else:
                        _accumulate(node.variable, cts[0], create_graph)
                continue
            if node._pre_hooks or node._metadata:
                cts = run_tensor_pre_hooks(node, cts)
                if node._pre_hooks:
                    for h in list(node._pre_hooks.values()):
                        if not getattr(h, "_tensor_hook", False):
                            cts = h(cts)
            if anomaly:
                in_cts = _anomaly.run_node(_apply, node, cts, create_graph)
            else:
                in_cts = _apply(node, cts, create_graph)
            if node._hooks:
                in_cts = run_post_hooks(node, cts, in_cts)
            for (nxt, nr), ct in zip(node._edges, in_cts):
                if ct is not None and not _is_float0(ct) and (keep is None or id(nxt) in keep):
                    _acc(buffers, nxt, nr, ct)
    finally:
        _gm._state.enabled = prev_mode
    return results


def call_node(node, grads):
    """``node(*grads)`` (``Node.__call__``): its backward alone, no hooks, in the caller's grad mode (recorded
    where it is on, as torch's derivative formulas are)."""
    Tensor = _tensor_cls()
    for g in grads:
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"expected a Tensor or None, got {type(g).__name__}")
    if isinstance(node, AccumulateGrad):
        if grads[0] is not None:
            _accumulate(node.variable, grads[0], _gm._state.enabled, False)
        return ()
    if node._freed:
        raise RuntimeError(_FREED_MSG)
    check_saved(node)
    if node._inputs is not None:
        slots = [i for i, a in enumerate(node._inputs) if isinstance(a, Tensor)]
    else:
        slots = list(node._diff_idx or range(len(node._edges)))
    at = {d: k for k, d in enumerate(node._diff_idx or ())}
    if all(g is None for g in grads):
        in_cts = [None] * len(at)
    else:
        from .higher_order import apply_differentiable
        in_cts = apply_differentiable(node, list(grads))
    tree = shown(node) if node._op is not None else None
    if tree is not None and any(c is not None for c in in_cts):
        res = shown_grads(node, tree, list(grads), in_cts, at)
    else:
        res = tuple(in_cts[at[i]] if i in at else None for i in (slots if tree is None else range(len(tree))))
    return res[0] if len(res) == 1 else res


def _capture(results, targets, node, cts):
    for k, (tn, tnr) in enumerate(targets):
        if tn is node and cts[tnr] is not None:
            results[k] = cts[tnr]


def run_post_hooks(node, cts, in_cts):
    """``node.register_hook`` hooks: ``hook(grad_inputs, grad_outputs)`` with ``grad_inputs`` in
    ``next_functions`` order (None for an input without a gradient); a returned tuple replaces them."""
    from .function import BackwardCFunction
    Tensor = _tensor_cls()
    tree = None
    if isinstance(node, BackwardCFunction):  # (a custom Function's: what its backward returned for every tensor input)
        slots, at = sorted(node._tensor_pos), {d: k for k, d in enumerate(node._edge_pos)}
        grad_in, node._hook_in = node._hook_in, None
    else:
        if node._inputs is not None:
            slots = [i for i, a in enumerate(node._inputs) if isinstance(a, Tensor)]
        else:
            slots = list(node._diff_idx or range(len(in_cts)))
        at = {d: k for k, d in enumerate(node._diff_idx or range(len(in_cts)))}
        tree = shown(node) if node._op is not None else None  # (a composite shown as torch records it)
        if tree is not None:
            grad_in = shown_grads(node, tree, cts, in_cts, at)
        else:
            grad_in = tuple(as_grad_tensor(node, in_cts[at[i]]) if i in at else None for i in slots)
    grad_out = hook_outputs(node, torch_outputs(node), cts)
    versions = [g._storage.version if g is not None else None for g in grad_in]
    replaced = None
    for h in list(node._hooks.values()):
        cur = grad_in if replaced is None else replaced
        r = h(cur, grad_out)
        if r is not None:
            check_hook_results(h, cur, r)  # (torch's: a tuple of as many gradients, each of the same type and size)
            replaced = r
    if replaced is None:
        if all(g is None or g._storage.version == v for g, v in zip(grad_in, versions)):
            return in_cts
        replaced = grad_in  # (a hook wrote a gradient in place and returned None: the written one goes on)
    if tree is not None:
        return shown_replaced(node, tree, cts, in_cts, at, replaced, lambda n, c: _apply(n, c, _gm._state.enabled))
    out = list(in_cts)
    for g, i in zip(replaced, slots):
        if i in at:
            out[at[i]] = from_grad_tensor(g, in_cts[at[i]])
    return out


def _acc(buffers, node, nr, ct):
    buf = buffers.get(id(node))
    if buf is None:
        buf = buffers[id(node)] = [None] * max(1, len(getattr(node, "_out_meta", ((),))))
    cur = buf[nr]
    if cur is None:
        buf[nr] = ct
    elif ct is not None:
        buf[nr] = cur + ct if isinstance(cur, _tensor_cls()) else _add(cur, ct)


def _apply(node, cts, create_graph):
    Tensor = _tensor_cls()
    if create_graph:
        from .higher_order import apply_differentiable
        return apply_differentiable(node, cts)
    arrs = [c._array if isinstance(c, Tensor) else c for c in cts]
    if node._entry is None:
        return node.apply_custom(arrs)
    return node.apply(arrs)


def _accumulate_hooked(node, cts, create_graph):
    """An AccumulateGrad with its own hooks (``register_prehook`` / ``register_hook`` on the node): the leaf's
    tensor hooks, the node's pre-hooks, the accumulation (and post-accumulate-grad hooks), then its post-hooks
    with ``((), (grad,))``, in torch's order."""
    t = node.variable
    if cts[0] is None:
        return
    if t._hooks:
        cts = [run_leaf_hooks(t, cts[0])]
    if node._pre_hooks:
        for h in list(node._pre_hooks.values()):
            cts = h(cts)
    ct = cts[0]
    if ct is None:
        return
    _accumulate(t, ct, create_graph, False)  # (the leaf's hooks ran above)
    if node._hooks:
        grad_out = (as_grad_tensor(node, ct),)
        for h in list(node._hooks.values()):
            r = h((), grad_out)
            if r is not None:
                check_hook_results(h, (), r)


def _obey_layout(g, t):
    """A leaf's first gradient laid out as the leaf (torch's ``clone_obey_contract``: a dense, non-contiguous
    parameter -- a channels_last conv weight, a transposed matrix -- gets a gradient of its strides; any other one
    a contiguous gradient)."""
    from .._tensor import views as V
    st = t.stride()
    if not V.is_dense(t._shape, st) or (g._strides is None and V.is_contiguous(t._shape, st)) or g.stride() == st:
        return g
    from ..ops.movement import lay_out
    from .._tensor.tensor import preserve_format
    return lay_out(g.clone(), t, preserve_format)


def _accumulate(t, ct, create_graph, leaf_hooks=True):
    """AccumulateGrad: run the leaf's hooks, then add into ``t.grad`` (in place, as PyTorch), then its
    post-accumulate-grad hooks. (Grad mode is the caller's: off unless ``create_graph``.)"""
    Tensor = _tensor_cls()
    if ct is None:
        return
    if t._hooks and leaf_hooks:
        ct = run_leaf_hooks(t, ct)
    g = ct if isinstance(ct, Tensor) else Tensor._from_array(ct, t.dtype, t._storage.device)
    want = grad_dtype_of(t)
    if want is not None and g.dtype is not want:
        g = g.to(want)
    if _storage.SET_LOG[0] is not None:
        _storage.log_attrs(t, ("_grad",))
    if t._grad is None:
        if create_graph:
            # (torch's clone_obey_contract with grad mode on: a copy (CopyBackwards), never the gradient tensor itself,
            # which may be the caller's -- ``x.backward(v, create_graph=True)``'s v, that x.grad.zero_() zeroed)
            c = g.new_empty(g._shape)
            t._grad = (c if t._strides is None else _obey_layout(c, t)).copy_(g)
        else:
            t._grad = g if t._strides is None else _obey_layout(g, t)
    elif create_graph:
        t._grad = t._grad + g
    else:
        t._grad._write(_add(t._grad._array, g._array))
    if t._post_hooks:
        run_post_accumulate_hooks(t)


def run_post_accumulate_hooks(t):
    """A leaf's post-accumulate-grad hooks, after its ``.grad`` is written; each must return None (torch's)."""
    for h in list(t._post_hooks.values()):
        if h(t) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")


# ---- public API -----------------------------------------------------------------------------------
BACKWARD_CALLS = [0]  # backward()/grad() calls so far (compile tells a training step from a forward)
# backward runs that went node by node (hooks, custom Functions, create_graph: Python between the nodes); compile
# tells from it whether a compiled forward's backward is one linear program (runner.CompiledFunction._saving)
NODE_BY_NODE = [0]
_CYCLE_WARNED = [False]  # backward(create_graph=True)'s reference-cycle warning given (once a process, as torch's)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``torch.autograd.backward`` / ``Tensor.backward``."""
    BACKWARD_CALLS[0] += 1
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
    if create_graph and not _CYCLE_WARNED[0]:  # (torch's TORCH_WARN_ONCE: once a process)
        _CYCLE_WARNED[0] = True
        import warnings
        warnings.warn("Using backward() with create_graph=True will create a reference cycle between the parameter "
                      "and its gradient which can cause a memory leak. We recommend using autograd.grad when creating "
                      "the graph to avoid this. If you have to use this function, make sure to reset the .grad fields "
                      "of your parameters to None after use to break the cycle and avoid the leak. (Triggered "
                      "internally at /__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)", UserWarning)
    if inputs is not None:
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        inputs = tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        from ._saved_hooks import GradientEdge, edge_tensor
        inputs = tuple(edge_tensor(t) if isinstance(t, GradientEdge) else t for t in inputs)
        for t in inputs:
            _check_input(t, Tensor)
            t.retain_grad()  # (as PyTorch: a non-leaf input's .grad is kept, by the hook its node runs)
        run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)
        return None
    run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph)
    return None


def _check_input(t, Tensor) -> None:
    """torch's refusal of an ``inputs`` entry that is no tensor (a GradientEdge is one by now: _saved_hooks)."""
    if not isinstance(t, Tensor):
        raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")


def _one_grad_each(tensors, grad_tensors) -> None:
    # (torch's engine: fewer gradients than tensors is an error; extra ones are ignored, its _make_grads zips them)
    if len(grad_tensors) < len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")


def _roots_and_grads(tensors, grad_tensors, create_graph):
    Tensor = _tensor_cls()
    _one_grad_each(tensors, grad_tensors)
    roots, grads = [], []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not t._requires_grad or t.grad_fn is None and t.__dict__.get("_no_grad_view"):  # (no edge: torch's error)
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {t.dtype}")
            if create_graph:
                from ..ops.creation import ones
                g = ones(t._shape, dtype=t.dtype, device=t.device)
            else:
                roots.append(t)
                arr = t._storage.array
                grads.append(_Ones(t._shape, t.dtype.jnp, None if isinstance(arr, jax.core.Tracer) or arr is None
                                   else _dev.to_jax(t._storage.device)))
                continue
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradient must be a Tensor, got {type(g).__name__}")
            if g._shape != t._shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(g._shape)}) "
                                   f"and output[{i}] has a shape of torch.Size({list(t._shape)}).")
            if g.dtype is not t.dtype:
                g = g.to(t.dtype)
        roots.append(t)
        grads.append(g if create_graph else g._array)
    return roots, grads


def _grads_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """``grad(..., is_grads_batched=True)``: each grad_output's first dimension is a batch of cotangents, and the
    gradients come back with it first (torch's vmap over the backward). A None grad_output is the unbatched ones
    of a scalar output. (The graph is kept while vmap runs the backward, then freed unless ``retain_graph``.)"""
    from ..func import vmap
    _one_grad_each(outputs, grad_outputs)
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        if g is not None and tuple(g._shape[1:]) != tuple(t._shape):
            # (torch's message names grad_output[i][0]'s shape without its first dimension: g's from its third)
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of "
                f"torch.Size({list(g._shape[2:])}) and output[{i}] has a shape of torch.Size({list(t._shape)}). "
                "If you only want some tensors in `grad_output` to be considered batched, consider using vmap.")
    batched = [g for g in grad_outputs if g is not None]
    unused = set()

    def one(*gs):
        it = iter(gs)
        r = grad(outputs, inputs, tuple(None if g is None else next(it) for g in grad_outputs), retain_graph=True,
                 create_graph=create_graph, allow_unused=allow_unused)
        unused.update(k for k, g in enumerate(r) if g is None)  # (None is no output of vmap: put back after)
        return tuple(g if g is not None else inputs[k].detach() for k, g in enumerate(r))
    res = vmap(one)(*batched)
    if not retain_graph:  # (the nodes that ran, as run_backward finds them)
        order = _topo([e[0] for e in (edge_of(t) for t in outputs if t._requires_grad) if e is not None])
        keep = _needed(order, [edge_of(t) or (None, 0) for t in inputs], False)
        _release([n for n in order if keep.get(id(n))])
    return tuple(None if k in unused else g if create_graph else g.detach() for k, g in enumerate(res))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """``torch.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs`` as a tuple."""
    BACKWARD_CALLS[0] += 1
    Tensor = _tensor_cls()
    if isinstance(outputs, Tensor):
        outputs = (outputs,)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        import warnings
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=3)  # (the user's autograd.grad call, through _saved_hooks.grad)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        BACKWARD_CALLS[0] -= 1  # (counted by each call vmap makes)
        res = _grads_batched(tuple(outputs), inputs, tuple(grad_outputs), retain_graph, create_graph, allow_unused)
        return _materialized(res, inputs, create_graph) if materialize_grads else res
    roots, grads = _roots_and_grads(tuple(outputs), tuple(grad_outputs), create_graph)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in inputs:
        _check_input(t, Tensor)
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    res = run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs,
                       accumulate=False)
    out = []
    for k, (t, g) in enumerate(zip(inputs, res)):
        if g is None:
            if materialize_grads:
                out.append(None)  # (zeros, after: _materialized)
                continue
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            out.append(None)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._from_array(g, t.dtype, t._storage.device)
        if t.grad_fn is None:  # (a leaf's gradient in its grad_dtype, as the engine gives it)
            want = grad_dtype_of(t)
            if want is not None and g.dtype is not want:
                g = g.to(want)
        out.append(g)
    return _materialized(out, inputs, create_graph) if materialize_grads else tuple(out)


def _materialized(res, inputs, create_graph):
    """``grad(materialize_grads=True)``: an unused input's gradient is its zeros (unbatched, as torch makes them
    after the backward), requiring grad under ``create_graph``."""
    from ..ops.creation import zeros_like
    return tuple(g if g is not None else zeros_like(t, requires_grad=create_graph) for g, t in zip(res, inputs))
