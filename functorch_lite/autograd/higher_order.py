"""``create_graph=True``: run each node's backward as a recorded op, so gradients are differentiable.

The backward of a node recorded by dispatch is itself an op over (the node's inputs, the output
cotangents): its jax body is ``jax.vjp`` of the forward body. It goes through the same dispatch
path (cached jit, vjp-forward when an input requires grad), which records its own Node — giving
second derivatives, Hessian-vector products and so on.
"""
from __future__ import annotations

import jax
import numpy as np

from .. import dtypes as D

_VJP_OPS: dict = {}


def _vjp_op(node):
    from ..ops._registry import OpDef
    entry, diff_idx = node._entry, node._diff_idx
    key = (id(entry), diff_idx)
    hit = _VJP_OPS.get(key)
    if hit is not None and hit[0] is entry:
        return hit[1]
    n_in = len(node._inputs)
    nout_fwd = len(node._out_meta)
    body = entry.body
    int_outs = tuple(dt.category < D.FLOAT for _, dt in node._out_meta)
    out_shapes = tuple(shape for shape, _ in node._out_meta)

    def backward_body(arrays):
        ins = arrays[:n_in]
        cts = [np.zeros(sh, jax.dtypes.float0) if is_int else c
               for c, is_int, sh in zip(arrays[n_in:], int_outs, out_shapes)]

        def g(*d):
            merged = list(ins)
            for i, v in zip(diff_idx, d):
                merged[i] = v
            return body(*merged)
        _, pb = jax.vjp(g, *[ins[i] for i in diff_idx])
        r = tuple(pb(cts[0] if nout_fwd == 1 else tuple(cts)))
        return r if len(r) > 1 else r[0]

    in_dts = tuple(node._inputs[i].dtype for i in diff_idx)

    def rule(op, sig, sargs):
        return (None,) * len(sig), in_dts

    def impl(tensors):
        return backward_body(tensors)
    op = OpDef(impl, node.name(), promote=rule, grad_fn=node.name() + "Backward", tensors="list", method=False,
               function=False, inplace=False, view=None, autocast=None, prep=None, check=None, check_dtype=None,
               differentiable=True, nout=len(diff_idx), eager=False, kernel=None, out=False, result_type=None,
               static_scalars=False, device_check="cat", saves=("all",), broadcast=False)
    if len(_VJP_OPS) > 4096:
        _VJP_OPS.clear()
    _VJP_OPS[key] = (entry, op)
    return op


def apply_differentiable(node, cts):
    """Cotangents (Tensors or arrays; None = zero) of the node's outputs -> Tensors for its inputs."""
    from .._tensor.tensor import Tensor
    from ..ops._dispatch import dispatch
    if getattr(node, "_entry", None) is None:
        fn = getattr(node, "apply_tensors", None)
        if fn is None:
            raise RuntimeError(f"create_graph=True is not supported through {node.name()} in functorch_lite")
        return fn(cts)
    dev = None
    for a in node._inputs:
        if isinstance(a, Tensor):
            dev = a.device
            break
    full = []
    for ct, (shape, dt) in zip(cts, node._out_meta):
        if ct is None:
            from ..ops.creation import zeros
            if dt.category < D.FLOAT:
                ct = zeros(shape, dtype=D.float32, device=dev)  # never used: int outputs carry no gradient
            else:
                ct = zeros(shape, dtype=dt, device=dev)
        elif not isinstance(ct, Tensor):
            ct = Tensor._from_array(ct, dt, dev)
        full.append(ct)
    op = _vjp_op(node)
    res = dispatch(op, (tuple(node._inputs) + tuple(full),), ())
    return list(res) if isinstance(res, tuple) else [res]
