"""The autograd node entries of a compiled forward and of a checkpointed region (runner.``_record``)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.extend import core as _jex

from .._tensor.tensor import Tensor
from ..ops._dispatch import Entry


class _TapeEntry(Entry):
    """The node entry of a compiled forward (or a checkpointed region): ``vjp_apply`` is a pure function
    (input arrays, output cotangents) -> gradients that re-runs the forward's Python with the facade's autograd
    and runs the facade's backward (``_pure``'s results_only mode), traced once into the cached backward
    program. A plain ``jax.vjp`` of the program differentiated through ``no_grad`` regions and ``detach()``
    (measured: ``y = (x * 2).detach(); return y * x`` gave x.grad 4 where eager gives 2)."""
    __slots__ = ("run", "slot_at")

    # its node holds the call's inputs (what PyTorch's compiled and checkpoint nodes save): a backward without
    # retain_graph frees it, and a second one raises PyTorch's "backward through the graph a second time"
    frees_graph = True

    def __init__(self, outs, run, slot_at):
        super().__init__(None, outs, None, True)
        self.run, self.slot_at = run, slot_at  # slot_at: flat input position -> slot index

    def vjp_apply(self, diff_idx):
        run = self.run
        wants = tuple(self.slot_at[i] for i in diff_idx)

        def apply(arrays, cts):
            return run(arrays, tuple(cts), wants)
        return apply


class _SavedEntry(_TapeEntry):
    """The node entry of a compiled forward whose program saved its backward's residuals
    (``CompiledFunction._saving``): the node's arrays are its input leaves then those residuals, and the backward
    is the linear part of ``run`` in the cotangents (a jaxpr over the residuals), so it does not run the forward
    again. ``differentiable_apply`` (``create_graph=True``) is ``run`` itself on the input leaves: it is what
    gradients of the backward flow through."""
    __slots__ = ("n_leaves", "diff_idx", "jaxpr", "consts", "fidx", "avals")

    def __init__(self, outs, run, slot_at, n_leaves, diff_idx):
        super().__init__(outs, run, slot_at)
        self.n_leaves, self.diff_idx = n_leaves, diff_idx
        self.jaxpr = self.consts = self.fidx = self.avals = None

    def set(self, jaxpr, consts, fidx, avals):
        """From the trace of the forward program: the backward's jaxpr, its constants (None where the program
        returns the value: a residual), which outputs take a cotangent (floating ones) and their shapes/dtypes."""
        self.jaxpr, self.consts, self.fidx, self.avals = jaxpr, consts, fidx, avals

    def vjp_apply(self, diff_idx):
        if tuple(diff_idx) != self.diff_idx:
            return self.differentiable_apply(diff_idx)
        n = self.n_leaves

        def apply(arrays, cts):
            res = iter(arrays[n:])
            consts = [next(res) if c is None else c for c in self.consts]
            fcts = [jnp.zeros(*av) if cts[k] is None else cts[k] for k, av in zip(self.fidx, self.avals)]
            return tuple(_jex.jaxpr_as_fun(_jex.ClosedJaxpr(self.jaxpr, consts))(*fcts))
        return apply

    def differentiable_apply(self, diff_idx):
        apply = _TapeEntry.vjp_apply(self, diff_idx)
        n = self.n_leaves

        def leaves_only(arrays, cts):
            return apply(tuple(arrays[:n]), cts)
        return leaves_only


class _RematEntry(_TapeEntry):
    """A checkpointed region's node: its backward recomputes the forward (under ``jax.checkpoint``, whose
    optimization barriers keep XLA from merging it with the forward where the backend honours them) from inputs
    tied to the incoming
    cotangent, ``x + z`` where ``z`` is -0.0 computed from one cotangent element (exactly ``x``, bit for bit).
    Inside one compiled step this keeps the recomputation a separate computation that cannot start before the
    backward reaches it: XLA:CPU expands ``jax.checkpoint``'s optimization barriers away, and CSE then merged
    the recomputation with the forward, keeping every activation alive as if there were no checkpoint
    (measured: a 24-layer MLP's temp stayed 192 MB at any segment count; tied, 52 MB)."""
    __slots__ = ("tie_idx",)

    def __init__(self, outs, run, slot_at, tie_idx):
        super().__init__(outs, jax.checkpoint(run, static_argnums=(2,)), slot_at)
        self.tie_idx = tie_idx

    def vjp_apply(self, diff_idx):
        apply = _TapeEntry.vjp_apply(self, diff_idx)
        tie_idx = self.tie_idx

        def tied(arrays, cts):
            z = _negative_zero_of(cts)
            if z is not None:
                arrays = list(arrays)
                for i in tie_idx:
                    a = arrays[i]
                    if jnp.issubdtype(a.dtype, jnp.complexfloating):
                        arrays[i] = a + jax.lax.complex(z, z).astype(a.dtype)
                    elif jnp.issubdtype(a.dtype, jnp.floating) and a.dtype.itemsize >= 2:
                        arrays[i] = a + z.astype(a.dtype)
                arrays = tuple(arrays)
            return apply(arrays, cts)
        return tied


def _tape_grads(outs, cts, inputs) -> tuple:
    """``autograd.grad`` of ``outs`` (cotangents ``cts``; None: none) w.r.t. the leaf tensors ``inputs``, as
    arrays (zeros where unused). The inputs' own hooks are left to the engine that runs this node."""
    from ..autograd.engine import grad as _agrad
    pairs = [(o, c) for o, c in zip(outs, cts) if c is not None and isinstance(o, Tensor) and o.requires_grad]
    zeros = tuple(jnp.zeros(t._shape, t.dtype.jnp) for t in inputs)
    if not pairs or not inputs:
        return zeros
    saved = [(t._hooks, t._post_hooks) for t in inputs]
    for t in inputs:
        t._hooks = t._post_hooks = None
    try:
        gs = _agrad([o for o, _ in pairs], inputs, [Tensor._from_array(c, o.dtype, o.device) for o, c in pairs],
                    allow_unused=True)
    finally:
        for t, (h, ph) in zip(inputs, saved):
            t._hooks, t._post_hooks = h, ph
    return tuple(z if g is None else g._array for g, z in zip(gs, zeros))


def _negative_zero_of(cts):
    """-0.0 (float32) that XLA cannot fold to a constant: it depends on one cotangent element (a non-finite
    element gives -0.0 too); None without a floating cotangent."""
    for c in cts:
        if c is not None and jnp.issubdtype(c.dtype, jnp.inexact) and c.size:
            s = c.reshape(-1)[0]
            z = -jnp.abs(s * 0).astype(jnp.float32)
            return jnp.where(jnp.isfinite(s), z, jnp.float32(-0.0))
    return None
