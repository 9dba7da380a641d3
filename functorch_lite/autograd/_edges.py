"""The edges and outputs torch's node of an op has, where they differ from the op's own tensor inputs and outputs.

A node records edges to its differentiable tensor inputs only; torch's node has one per argument of its aten
overload that has a derivative formula, an edge or ``(None, 0)``: a Python number operand of ``a * 2`` (a wrapped
tensor), a conv's missing bias, layer/group norm's missing affine, but no edge for ``where``'s condition, an
embedding's indices or batch_norm's running statistics. Its grad_outputs are its differentiable outputs (not
sort's indices; batch_norm's output alone; group_norm's output and its two statistics). ``next_functions`` and
node hooks (``register_hook`` / ``register_prehook`` / ``Module.register_backward_hook``, ``grad_fn(*grads)``)
show torch's tuples (``graph.shown`` / ``graph.hook_outputs``). Only introspection and hooks read this table:
the backward itself runs on the node's own edges.
"""
from __future__ import annotations

from .. import dtypes as D


def _every(targs):  # (a Python number operand keeps its slot: ``sub.Tensor`` with a wrapped number)
    return tuple(range(len(targs)))


def _swapped(targs):  # (``2 * a`` is torch's ``a.__rmul__(2)``: ``mul(a, 2)``, the tensor's edge first)
    from .._tensor.tensor import Tensor
    return (0, 1) if isinstance(targs[0], Tensor) else (1, 0)


def _clamp(targs):  # (``clamp.Tensor``'s min and max, None or not; ``clamp``'s numbers: none)
    from .._tensor.tensor import Tensor
    return (0, 1, 2) if isinstance(targs[1], Tensor) or isinstance(targs[2], Tensor) else (0,)


def _masked_fill(targs):  # (``masked_fill.Tensor``'s value; ``masked_fill.Scalar``: none; never the mask)
    from .._tensor.tensor import Tensor
    return (0, 2) if isinstance(targs[2], Tensor) else (0,)


# op name -> (inputs, outputs): ``inputs`` (a tuple, or ``targs -> tuple``): torch's edges in order, each the
# position of the op's input that feeds it (its edge, or ``(None, 0)`` where that input has no gradient or is
# None); None (default): every tensor input. ``outputs``: torch's grad_outputs in order, each the position of the
# op's output, or None for an output torch has and the op does not (no gradient); None (default): the op's
# floating outputs.
EDGES = {
    "mul": (_swapped, None), "add": (_swapped, None), "sub": (_every, None), "div": (_every, None),
    "true_divide": (_every, None),
    "where": ((1, 2), None),
    "convolution": ((0, 1, 2), None),
    "_batch_norm": ((0, 1, 2), (0,)),
    "layer_norm": ((0, 1, 2), None),
    "group_norm": ((0, 1, 2), (0, None, None)),
    "embedding": ((0,), None),
    "embedding_bag": ((0, 3), None),
    "clamp": (_clamp, None),
    "masked_fill": (_masked_fill, None),
    "index_select": ((0,), None), "gather": ((0,), None), "index": ((0,), None),
    "nll_loss": ((0,), None),
    "scatter": ((0, 2), None), "index_add": ((0, 2), None), "index_put": ((0, 1), None),
}


def edges(node):
    """Torch's edges of ``node`` as input positions (None: an empty slot), or None where they are its tensor
    inputs."""
    rule = EDGES.get(node._op.name)
    if rule is None or rule[0] is None:
        return None
    ins = rule[0]
    return ins(node._inputs) if callable(ins) else ins


def outputs(node):
    """Torch's grad_outputs of ``node`` as positions of its outputs (None: one it lacks), or None where they are
    its outputs."""
    op = node._op
    if op is None:  # (a custom Function's node: its own outputs)
        return None
    rule = EDGES.get(op.name)
    if rule is not None and rule[1] is not None:
        return rule[1]
    meta = node._out_meta
    if len(meta) > 1 and any(dt.category < D.FLOAT for _, dt in meta):  # (sort's indices: no grad_output)
        return tuple(i for i, (_, dt) in enumerate(meta) if dt.category >= D.FLOAT)
    return None
