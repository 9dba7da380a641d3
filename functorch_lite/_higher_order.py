"""``torch.cond`` and ``torch.while_loop``: data-dependent control flow that stays inside one program.

Eagerly (a predicate with a concrete value) they are what they mean in Python: ``cond`` calls the branch the
predicate picks, ``while_loop`` loops; the facade's tape records the ops the branch or body runs, so gradients
reach the operands and whatever the functions capture (a module's parameters), as torch's
``CondAutogradOpBackward`` / ``WhileLoopAutogradOpBackward`` do.

Traced (inside ``compile``, or under a ``func`` transform, where the predicate is a JAX tracer) they are
``jax.lax.cond`` / ``jax.lax.while_loop``: the branch functions run once each over facade tensors wrapping the
branch's arrays (autograd off: JAX differentiates), and a ``cond`` whose operands or captured tensors require
grad is ONE node of the tape (``func._tape.record``: its backward is the ``jax.vjp`` pullback of the whole
``lax.cond``), named ``CondAutogradOpBackward`` as torch names it. So ``compile`` keeps a training step with a
``torch.cond`` in it one program instead of breaking the graph at the branch.

What one XLA program cannot express is a graph break inside ``compile`` (the call runs eagerly, with its warning;
``fullgraph=True`` raises): branches whose outputs differ in shape, a random draw inside a branch or loop body,
and a ``while_loop`` that must be differentiated (``lax.while_loop`` has no reverse-mode derivative). An in-place
change to an operand or a captured tensor inside a branch is torch's error, as are mismatched output dtypes and
counts.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from . import dtypes as D
from ._tensor.tensor import Tensor
from .autograd import grad_mode as _gm
from .func import _core as C
from .func import _tape as T
from .ops._dispatch import data_dependent_error

__all__ = ["cond", "while_loop"]


class UncapturedHigherOrderOpError(RuntimeError):
    """torch._dynamo.exc.UncapturedHigherOrderOpError: a higher order operator's function does what it cannot."""


class TorchRuntimeError(RuntimeError):
    """torch._dynamo.exc.TorchRuntimeError: what the traced functions do fails (here: the branches' outputs)."""


UncapturedHigherOrderOpError.__module__ = TorchRuntimeError.__module__ = "functorch_lite._dynamo.exc"


class CondAutogradOpBackward(T.TransformBackward):
    __slots__ = ()


def _traced(a) -> bool:
    return isinstance(a, jax.core.Tracer)


def _check_operands(operands, api: str) -> list:
    if not isinstance(operands, (tuple, list)) or \
            not all(isinstance(x, Tensor) for x in C.input_leaves(list(operands))):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    return C.leaves(list(operands))


def _mutation_error(api: str, what: str) -> UncapturedHigherOrderOpError:
    return UncapturedHigherOrderOpError(
        "This higher order operator doesn't work unless it is captured completely with torch.compile. Got graph "
        f"break/error:\n\nEncountered input mutation during higher order op tracing\n  Higher Order Operator: "
        f"{api}\n  ({what} was changed in place inside the function; return a new tensor instead)")


def _no_draws(api: str):
    """Random draws refused while a traced branch / body runs: a generator's new key would be a value of the branch
    (a graph break in ``compile``: the call runs eagerly, where the draw is the eager one)."""
    def make(orig):
        def next_key(self):
            raise data_dependent_error(f"a random draw inside {api}'s functions")
        return next_key
    return T.next_key_as(make)


# ---- cond -------------------------------------------------------------------------------------------------
def cond(pred, true_fn, false_fn, operands=()):
    """``torch.cond(pred, true_fn, false_fn, operands)``: ``true_fn(*operands)`` where ``pred`` holds, else
    ``false_fn(*operands)``; traced, one ``lax.cond`` (module docstring)."""
    if not (isinstance(pred, (bool, int, float, Tensor)) or type(pred).__name__ in ("SymNumber", "SymBool")):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not (callable(true_fn) and callable(false_fn)):
        raise RuntimeError("Expect both branches to be callable.")
    tensors = _check_operands(operands, "torch.cond")
    if not isinstance(pred, Tensor) or not _traced(pred._array):
        take = bool(pred)
        versions = [(t, t._version) for t in tensors]
        out = (true_fn if take else false_fn)(*operands)
        for t, v in versions:
            if t._version != v:
                raise _mutation_error("torch.cond", "an operand")
        ts = _leaf_types(out)
        if isinstance(pred, Tensor):  # (torch's cond looks at both branches; a Python predicate is a plain call)
            other = _abstract_outputs(false_fn if take else true_fn, list(operands))
            if other is not None:
                mine = (jax.tree_util.tree_structure(out, is_leaf=C.tensor_or_none),
                        [(t.dtype, t.device, t._shape) for t in ts])
                _mismatch({take: mine, not take: other}, shapes=False)
        return out
    return _traced_cond(pred, true_fn, false_fn, list(operands), tensors)


def _leaf_types(out) -> list:
    """The tensors among a branch's outputs; anything but a tensor or an int is torch's error."""
    ts = []
    for leaf in jax.tree_util.tree_leaves(out, is_leaf=C.tensor_or_none):
        if isinstance(leaf, Tensor):
            ts.append(leaf)
        elif not isinstance(leaf, int) or isinstance(leaf, bool):
            raise UncapturedHigherOrderOpError(
                "This higher order operator doesn't work unless it is captured completely with torch.compile. Got "
                "graph break/error:\n\ntorch.cond: unsupported branch return type\n  Higher Order Operator: "
                f"torch.cond\n  Explanation: a branch returned {type(leaf)}; branches must return tensors or ints.")
    return ts


def _abstract_outputs(fn, operands):
    """(structure, [(dtype, device, shape)]) of the outputs of the branch not taken, traced abstractly
    (``jax.eval_shape``: nothing computed, nothing written); None where it cannot be traced so (a random draw, a
    host read: it is not checked)."""
    flat, tree = jax.tree_util.tree_flatten(operands, is_leaf=C.is_tensor)
    metas = [(t.dtype, t.device) for t in flat]
    box = []

    def run(arrays):
        ts = [C.wrap_array(a, dt, dev) for a, (dt, dev) in zip(arrays, metas)]
        args = C.reorder_like(jax.tree_util.tree_unflatten(tree, ts), operands)
        with C.ExternalWrites() as writes, _no_draws("torch.cond"):
            out = C.call(fn, tuple(args), {})
            if writes.collect() or any(t._storage.array is not a for t, a in zip(ts, arrays)):
                raise _mutation_error("torch.cond", "an operand or a tensor the branch captures")
        box.append((jax.tree_util.tree_structure(out, is_leaf=C.tensor_or_none),
                    [(t.dtype, t.device, t._shape) for t in _leaf_types(out)]))
        return None
    try:
        jax.eval_shape(run, [t._array for t in flat])
    except UncapturedHigherOrderOpError:  # (torch's error for what the branch does)
        raise
    except Exception:  # noqa: BLE001  (it cannot be traced abstractly: not checked)
        return None
    return box[0]


def _traced_cond(pred, true_fn, false_fn, operands, tensors):
    flat, tree = jax.tree_util.tree_flatten(operands, is_leaf=C.is_tensor)
    metas = [(t.dtype, t.device) for t in flat]
    box: dict = {}
    p = jnp.reshape(pred._array, ()).astype(bool)

    def branch(fn, side):
        def run(arrays):
            ts = [C.wrap_array(a, dt, dev) for a, (dt, dev) in zip(arrays, metas)]
            args = C.reorder_like(jax.tree_util.tree_unflatten(tree, ts), operands)
            with _no_draws("torch.cond"):
                out = C.call(fn, tuple(args), {}, differentiate=T.DIFFERENTIATED[0] > 0)
            if any(t._storage.array is not a for t, a in zip(ts, arrays)):
                raise _mutation_error("torch.cond", "an operand")
            if writes.collect():
                raise _mutation_error("torch.cond", "a tensor the branch captures")
            o_flat = _leaf_types(out)
            if len(o_flat) != len(jax.tree_util.tree_leaves(out, is_leaf=C.tensor_or_none)):
                raise data_dependent_error("torch.cond whose branches return Python ints")
            o_tree = jax.tree_util.tree_structure(out, is_leaf=C.tensor_or_none)
            box[side] = (o_tree, [(t.dtype, t.device, t._shape) for t in o_flat], C.skeleton(out))
            return [t._array for t in o_flat]
        return run

    def compute(arrays):
        # (entered here, after ``record`` swapped the captured tensors' storages: a write to one is external)
        with writes:
            try:
                outs = jax.lax.cond(p, branch(true_fn, True), branch(false_fn, False), list(arrays))
            except TypeError:
                _mismatch(box)
                raise
        return outs, None

    writes = C.ExternalWrites()
    if T.recording():
        outs, _, node = T.record(compute, [t._array for t in flat], flat, [false_fn], true_fn, {},
                                 CondAutogradOpBackward)
    else:
        (outs, _), node = compute([t._array for t in flat]), None
    o_tree, o_metas, skel = box[True]
    res = [C.wrap_array(a, dt, dev) for a, (dt, dev, _) in zip(outs, o_metas)]
    T.attach(node, res)
    return C.reorder_like(jax.tree_util.tree_unflatten(o_tree, res), skel)


def _mismatch(box, shapes=True) -> None:
    """Why the two branches' outputs cannot be one ``lax.cond`` (torch's errors; a shape difference, which
    torch's dynamic shapes allow, is a graph break where ``shapes``)."""
    if True not in box or False not in box:
        return
    (t_tree, t_metas), (f_tree, f_metas) = box[True][:2], box[False][:2]
    if t_tree != f_tree:
        raise UncapturedHigherOrderOpError(
            "Expected true_fn_output and false_fn_output to have the same structure, but got "
            f"{t_tree} and {f_tree}.\n  Higher Order Operator: torch.cond")
    for (tdt, tdev, tsh), (fdt, fdev, fsh) in zip(t_metas, f_metas):
        for what, a, b in (("dtype", tdt, fdt), ("device", tdev, fdev)):
            if a != b:
                raise TorchRuntimeError(
                    "RuntimeError when making fake tensor call\n  Explanation: got RuntimeError(\"When merging two "
                    f"branches' output in torch.cond,  expected same {what} but got {a} and {b}.\")")
    for (_, _, tsh), (_, _, fsh) in zip(t_metas, f_metas):
        if shapes and tsh != fsh:
            raise data_dependent_error(f"torch.cond whose branches return different shapes ({list(tsh)} and "
                                       f"{list(fsh)})")


# ---- while_loop -------------------------------------------------------------------------------------------
def while_loop(cond_fn, body_fn, carried_inputs):
    """``torch.while_loop(cond_fn, body_fn, carried_inputs)``: ``carried = body_fn(*carried)`` while
    ``cond_fn(*carried)`` holds; traced, one ``lax.while_loop`` (module docstring)."""
    if not (callable(cond_fn) and callable(body_fn)):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    for leaf in C.input_leaves(list(carried_inputs)):
        if not isinstance(leaf, (Tensor, int)) or isinstance(leaf, bool):
            raise RuntimeError("Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only "
                               f"consists of tensor or int leaves, but got {carried_inputs}.")
    carry = tuple(carried_inputs)
    p = _pred(cond_fn(*carry))
    if isinstance(p, Tensor) and _traced(p._array):
        return _traced_while(cond_fn, body_fn, carry)
    out = carry
    while bool(p):
        versions = [(t, t._version) for t in C.leaves(list(carry)) if isinstance(t, Tensor)]
        nxt = body_fn(*carry)
        if any(t._version != v for t, v in versions):
            raise _mutation_error("torch.while_loop", "a carried input")
        _same_carry(carry, nxt)
        out = nxt
        carry = tuple(nxt) if isinstance(nxt, (tuple, list)) else (nxt,)
        p = _pred(cond_fn(*carry))
        if isinstance(p, Tensor) and _traced(p._array):  # (a body that made the values traced: JAX's own loop)
            raise data_dependent_error("torch.while_loop over values a transform traces")
    if out is carry:  # (no iteration: new tensors, as torch's, never the inputs themselves)
        return tuple(x.clone() if isinstance(x, Tensor) else x for x in carry)
    return out


def _pred(p):
    if isinstance(p, Tensor):
        if p.dim() != 0 or p.dtype is not D.bool:
            raise UncapturedHigherOrderOpError(
                "This higher order operator doesn't work unless it is captured completely with torch.compile. Got "
                "graph break/error:\n\ntorch.while_loop: unsupported cond_fn return type\n  Higher Order Operator: "
                "torch.while_loop\n  Explanation: Expected cond_fn to return a scalar tensor or a bool but got "
                f"torch.Size({list(p.shape)}).")
        return p
    if isinstance(p, bool):
        return p
    raise UncapturedHigherOrderOpError(
        "This higher order operator doesn't work unless it is captured completely with torch.compile. Got graph "
        "break/error:\n\ntorch.while_loop: unsupported cond_fn return type\n  Higher Order Operator: "
        f"torch.while_loop\n  Explanation: Expected cond_fn to return a scalar tensor or a bool but got {type(p)}.")


def _describe(x) -> str:
    if isinstance(x, Tensor):
        return f"Tensor(size={tuple(x.shape)}, dtype={x.dtype})"
    return repr(x)


def _same_carry(carry, out) -> None:
    """torch's check of a body's output against the carried inputs: as many, each of the same metadata."""
    lhs = C.input_leaves(list(out) if isinstance(out, (tuple, list)) else [out])
    rhs = C.input_leaves(list(carry))
    if len(lhs) != len(rhs):
        raise UncapturedHigherOrderOpError(
            "Expected body_fn_output and carried_inputs to have same number of outputs but got "
            f"lhs:[{', '.join(map(_describe, lhs))}] and rhs:[{', '.join(map(_describe, rhs))}]\n  Higher Order "
            "Operator: torch.while_loop")
    for i, (a, b) in enumerate(zip(lhs, rhs)):
        for what, va, vb in (("shape", getattr(a, "shape", None), getattr(b, "shape", None)),
                             ("dtype", getattr(a, "dtype", type(a)), getattr(b, "dtype", type(b)))):
            if va != vb:
                raise UncapturedHigherOrderOpError(
                    "Expected body_fn_output and carried_inputs to have same metadata but found:\npair[%d] differ in "
                    "'%s: %s vs %s', where lhs is %s and rhs is %s\n  Higher Order Operator: torch.while_loop"
                    % (i, what, va, vb, _describe(a), _describe(b)))


def _traced_while(cond_fn, body_fn, carry):
    flat, tree = jax.tree_util.tree_flatten(list(carry), is_leaf=C.is_tensor)
    if any(not isinstance(x, Tensor) for x in flat):
        raise data_dependent_error("torch.while_loop with a Python int among its carried values")
    if T.DIFFERENTIATED[0] or _gm._state.func or _gm._state.enabled and (
            any(t.requires_grad for t in flat) or T._candidates(body_fn, [cond_fn], {})):
        # (a carried value or a tensor the functions reach that needs a gradient cannot have one through
        # lax.while_loop: eagerly, the loop's ops are on the tape)
        raise data_dependent_error("torch.while_loop whose carried values or captured tensors require grad (JAX's "
                                   "while_loop has no reverse-mode derivative)")
    metas = [(t.dtype, t.device) for t in flat]

    def wrap(arrays):
        ts = [C.wrap_array(a, dt, dev) for a, (dt, dev) in zip(arrays, metas)]
        return ts, tuple(C.reorder_like(jax.tree_util.tree_unflatten(tree, ts), list(carry)))

    def run(fn, arrays):
        ts, args = wrap(arrays)
        with _no_draws("torch.while_loop"):
            out = C.call(fn, args, {})
        if any(t._storage.array is not a for t, a in zip(ts, arrays)):
            raise _mutation_error("torch.while_loop", "a carried input")
        if writes.collect():
            raise _mutation_error("torch.while_loop", "a tensor the function captures")
        return args, out

    def cond_arr(arrays):
        return jnp.reshape(_pred(run(cond_fn, arrays)[1])._array, ()).astype(bool)

    box = {}

    def body_arr(arrays):
        args, out = run(body_fn, arrays)
        _same_carry(args, out)
        box["tree"], box["skel"] = jax.tree_util.tree_structure(out, is_leaf=C.is_tensor), C.skeleton(out)
        return [t._array for t in C.leaves(list(out) if isinstance(out, (tuple, list)) else [out])]

    with C.ExternalWrites() as writes:
        res = jax.lax.while_loop(cond_arr, body_arr, [t._array for t in flat])
    # (in the body's output structure, as the eager loop returns it: a list, one tensor...)
    ts = [C.wrap_array(a, dt, dev) for a, (dt, dev) in zip(res, metas)]
    return C.reorder_like(jax.tree_util.tree_unflatten(box["tree"], ts), box["skel"])
