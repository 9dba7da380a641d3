"""``create_graph=True``: run each node's backward as a recorded op, so gradients are differentiable.

The backward of a node recorded by dispatch is itself an op over (the node's inputs, the output
cotangents): its jax body is ``jax.vjp`` of the forward body. It goes through the same dispatch
path (cached jit, vjp-forward when an input requires grad), which records its own Node — giving
second derivatives, Hessian-vector products and so on.
"""
from __future__ import annotations

import re
import weakref

from .. import dtypes as D

_VJP_OPS: dict = {}
_BACKWARD_NUMBER = re.compile(r"Backward\d*$")  # (a node name's numbered suffix)
# ops whose torch derivative formula reads a tensor through an op whose own backward reads it again, though the
# value does not depend on it (``_keeps``): how many orders of backward keep the gradient connected. ``relu``'s is
# ``threshold_backward(grad, result, 0)``, whose backward reaches the result, so relu's node again: every order;
# ``square`` is torch's ``pow(x, 2)``: ``grad * 2 * x.pow(1)``, then ``x.pow(0)``, whose backward is a constant zero
_KEEP_ORDERS = {"relu": float("inf"), "square": 2}
_KEEPS = weakref.WeakKeyDictionary()  # backward op that keeps its inputs -> the orders its own backward keeps


def backward_op(impl, name, grad_fn, rule, tensors, nout, saves):
    """A node's backward as an op dispatch records (not in the op table: no method, no function): ``rule(op, sig,
    sargs) -> (casts, output dtypes)``; ``saves``: what its own backward needs (the version checks)."""
    from ..ops._registry import OpDef
    return OpDef(impl, name, promote=rule, grad_fn=grad_fn, tensors=tensors, method=False, function=False,
                 inplace=False, view=None, autocast=None, prep=None, check=None, check_dtype=None, differentiable=True,
                 nout=nout, eager=False, kernel=None, out=False, result_type=None, device_check="cat", saves=saves,
                 broadcast=False)


def _vjp_op(node, present):
    """``present``: which outputs have a cotangent (the op takes those; the others are None to the pullback, which
    then leaves their part out, as torch does not run a backward of an output nobody used)."""
    entry, diff_idx = node._entry, node._diff_idx
    n_in = len(node._inputs)
    # (a compiled forward's node that saved residuals: its differentiable backward reads the inputs alone)
    differentiable = getattr(entry, "differentiable_apply", None)
    extra = tuple(node._arrays[n_in:]) if node._arrays is not None and differentiable is None else ()  # view positions
    keys = _key_constants(node)
    key = (id(entry), diff_idx, extra, present, keys)
    hit = _VJP_OPS.get(key)
    if hit is not None and hit[0] is entry:
        return hit[1]
    int_outs = tuple(dt.category < D.FLOAT for _, dt in node._out_meta)
    apply = (differentiable or entry.vjp_apply)(diff_idx)  # the same pullback the engine runs, as a recorded op

    def backward_body(arrays):
        it = iter(arrays[n_in:])
        cts = []
        for p, is_int in zip(present, int_outs):
            c = next(it) if p else None
            cts.append(None if is_int else c)  # (an int output carries no gradient)
        cts = tuple(cts)
        ins = tuple(arrays[:n_in])
        if keys:  # (a random key the region read travels as its key data: _inputs_as_recorded)
            import jax
            ins = tuple(jax.random.wrap_key_data(a) if i in keys else a for i, a in enumerate(ins))
        r = tuple(apply(ins + extra, cts))
        return r if len(r) > 1 else r[0]

    in_dts = tuple(node._inputs[i].dtype for i in diff_idx)

    def rule(op, sig, sargs):
        return (None,) * len(sig), in_dts

    def impl(tensors):
        return backward_body(tensors)
    # (named as torch's node of the backward formula: SliceBackward0's is SliceBackwardBackward0)
    op = backward_op(impl, node.name(), _BACKWARD_NUMBER.sub("Backward", node.name()) + "Backward0", rule, "list",
                     len(diff_idx), ("all",))
    if len(_VJP_OPS) > 4096:
        _VJP_OPS.clear()
    _VJP_OPS[key] = (entry, op)
    orders = _keeps(node._op)
    if orders:
        _KEEPS[op] = orders - 1
    return op


def _keeps(op) -> float:
    """How many orders of backward, from ``op``'s own, keep every input of the backward op as an edge (not only
    those its value depends on: ``apply_differentiable``), as torch's graph of the derivative formula does:
    ``_KEEP_ORDERS``, or what the backward op of such an op inherits (one order fewer)."""
    if op is None:
        return 0
    k = _KEEPS.get(op)
    return k if k is not None else _KEEP_ORDERS.get(op.name, 0)


def apply_differentiable(node, cts):
    """Cotangents (Tensors or arrays; None = zero) of the node's outputs -> Tensors for its inputs."""
    from .._tensor.tensor import Tensor
    from ..ops._dispatch import dispatch
    if getattr(node, "_inplace", False):  # the in-place form of an op without a derivative: its own error
        node.apply([c._array if isinstance(c, Tensor) else c for c in cts])
    if getattr(node, "_entry", None) is None:
        fn = getattr(node, "apply_tensors", None)
        if fn is None:
            raise RuntimeError(f"create_graph=True is not supported through {node.name()} in functorch_lite")
        return fn(cts)
    from .graph import undefined
    if undefined(node, cts):
        return [None] * len(node._diff_idx)
    dev = None
    for a in node._inputs:
        if isinstance(a, Tensor):
            dev = a.device
            break
    full = []
    present = tuple(ct is not None for ct in cts)
    if not any(present):  # (no cotangent at all: zeros for every output)
        present = (True,) * len(cts)
    for ct, (shape, dt), p in zip(cts, node._out_meta, present):
        if not p:
            continue
        if ct is None:
            from ..ops.creation import zeros
            if dt.category < D.FLOAT:
                ct = zeros(shape, dtype=D.float32, device=dev)  # never used: int outputs carry no gradient
            else:
                ct = zeros(shape, dtype=dt, device=dev)
        elif not isinstance(ct, Tensor):
            ct = Tensor._from_array(ct, dt, dev)
        full.append(ct)
    op = _vjp_op(node, present)
    args = _inputs_as_recorded(node) + tuple(full)
    used = () if op in _KEEPS else _used_inputs(op, args)  # (``_keeps``: every input is an edge)
    if not all(used):  # what the gradient does not depend on is no edge of it: a linear op's gradient of a
        # constant cotangent requires no grad, as PyTorch's (whose derivative formulas read only what they use);
        # nor is it saved: a copy of its value (a later in-place write of it, an optimizer's differentiable step
        # on a parameter, is no version error, as in PyTorch, which never saved it)
        args = tuple(a if u or not isinstance(a, Tensor) else Tensor._from_array(a._array, a.dtype, a._storage.device)
                     for a, u in zip(args, used))
    res = dispatch(op, (args,), ())
    return list(res) if isinstance(res, tuple) else [res]


def _inputs_as_recorded(node) -> tuple:
    """The node's inputs as its op read them. One written in place since has other values, shape or history than
    the op saw (``y.mul_(x)``'s ``self``, now its output; ``x.t_()``'s ``self``, transposed; a base rebased onto
    CopySlices; a view whose storage was written): it is replaced by the array the node recorded, with the edge the
    node recorded (torch's backward reads the original ``self`` an in-place op saved, with its history)."""
    ins = tuple(node._inputs)
    arrays = node._arrays
    if arrays is None or len(arrays) < len(ins):
        return ins
    if getattr(node._entry, "slot_at", None) is not None:  # (a compiled forward's or a checkpointed region's)
        if getattr(node._entry, "differentiable_apply", None) is not None:
            return _with_constants(ins, arrays)  # (its arrays past its inputs are residuals)
        return _with_constants(_rewritten(node, ins, arrays), arrays)
    return _rewritten(node, ins, arrays)


def _rewritten(node, ins, arrays) -> tuple:
    """``_inputs_as_recorded`` of the inputs that are tensors."""
    from .._tensor.tensor import Tensor
    edges = None
    out = None
    for i, a in enumerate(ins):
        if not isinstance(a, Tensor):
            continue
        if edges is None:
            edges = dict(zip(node._diff_idx, node._edges))
        e = edges.get(i)
        fn = a._grad_fn
        now = (fn, a._out_nr) if fn is not None else (a._acc, 0) if a._requires_grad and a._acc is not None else None
        arr = arrays[i]
        if arr is None or now == e and a._shape == tuple(arr.shape) and (a._base is None or
                                                                         a._gver == a._storage.version):
            continue  # (None: what saved-tensor hooks packed and did not unpack; the input itself, as before)
        t = Tensor._from_array(arr, a.dtype, a._storage.device)
        if e is not None:
            t._requires_grad = True
            t._grad_fn, t._out_nr = e
        if out is None:
            out = list(ins)
        out[i] = t
    return ins if out is None else tuple(out)


def _with_constants(ins, arrays) -> tuple:
    """The inputs of a compiled forward's or a checkpointed region's node (``_compile.nodes``), whose backward runs
    the region again from all its input leaves: the node holds only those that require grad (None elsewhere: no
    edge), so the others (an input or closed-over tensor that requires no grad, an index, the region's random key)
    are the arrays it recorded, as constant tensors; a random key as its key data (``_key_constants``)."""
    from .._tensor.tensor import Tensor
    dev = None
    for a in ins:
        if isinstance(a, Tensor):
            dev = a._storage.device
            break
    out = list(ins)
    for i, (a, arr) in enumerate(zip(ins, arrays)):
        if a is not None or arr is None:
            continue
        if not hasattr(arr, "dtype"):
            t = arr  # (a Python number leaf is an argument as it is)
        elif _is_key(arr):
            import jax
            t = Tensor._from_array(jax.random.key_data(arr), D.uint32, dev)
        else:
            t = Tensor._from_array(arr, D.from_numpy_dtype(arr.dtype), dev)
        out[i] = t
    return tuple(out)


def _is_key(arr) -> bool:
    import jax
    return jax.dtypes.issubdtype(arr.dtype, jax.dtypes.prng_key)


def _key_constants(node) -> tuple:
    """Positions of a compiled or checkpointed region's inputs that are random keys (``_with_constants``)."""
    arrays = node._arrays
    if arrays is None or getattr(node._entry, "slot_at", None) is None:
        return ()
    return tuple(i for i, (a, arr) in enumerate(zip(node._inputs, arrays))
                 if a is None and arr is not None and hasattr(arr, "dtype") and _is_key(arr))


_USED: dict = {}


def _used_inputs(op, args) -> tuple:
    """Which of the backward op's inputs its outputs depend on (dead-code elimination of its jaxpr), per input
    shapes and dtypes; computed once."""
    from .._tensor.tensor import Tensor
    key = (op, tuple((a._shape, a.dtype) if isinstance(a, Tensor) else (type(a), a) for a in args))
    used = _USED.get(key)
    if used is None:
        import jax
        from jax._src.interpreters import partial_eval as pe
        pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]

        def body(*arrays):
            full = list(args)  # (a Python number stays a constant of the trace)
            for i, arr in zip(pos, arrays):
                full[i] = arr
            return op.impl(tuple(full))
        closed = jax.make_jaxpr(body)(*[jax.ShapeDtypeStruct(args[i]._shape, args[i].dtype.jnp) for i in pos])
        _, flags = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
        used = [True] * len(args)
        for i, f in zip(pos, flags):
            used[i] = f
        used = _USED[key] = tuple(used)
        if len(_USED) > 4096:
            _USED.clear()
    return used
