"""Selective activation checkpointing (``create_selective_checkpoint_contexts``) for ``utils.checkpoint``.

PyTorch's policy sees each aten op the checkpointed region dispatches. The facade dispatches its own ops
(``matmul``, ``linear``: higher level than aten's), so each op call is named by the aten overload PyTorch's CPU
path would run for it (``_aten_name``: ``matmul`` of two matrices is ``aten.mm.default``, ``linear`` with a bias
``aten.addmm.default``, ``sin`` ``aten.sin.default``...), and ``torch.ops.aten.<op>.<overload>`` gives objects
that compare equal to those names (``aten`` below, installed as ``functorch_lite.ops.aten``).

How it runs: during the forward an op interceptor (the dispatch's ``_stats.PROFILER`` hook, chained with a
profiler that may be recording) asks the policy about every op call; the outputs of the ops it saves are kept on
the checkpoint's node with its inputs. The backward's recomputation (traced once into the node's program) runs
the same op sequence; at each saved call the op's output is replaced by the saved value, so the op's own
recomputation is dead code XLA removes, and the ops after it read the saved activation. The op's pullback still
comes from the recomputation (a matmul's needs its inputs, not its output), so the gradients are those of the
plain region.
"""
from __future__ import annotations

from .._stats import PROFILER as _PROFILER

_MATCHED_EXTRA = {"mm", "bmm", "addmm", "mv", "dot", "native_dropout"}


class OpOverload:
    """``torch.ops.aten.<op>.<overload>``: the name of an aten overload, compared by name (selective
    checkpoint policies compare the op they are given with these)."""
    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def name(self) -> str:
        return self._name.split(".", 1)[1]

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other._name == self._name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return self._name

    __str__ = __repr__

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"functorch_lite: calling {self._name} directly is not supported (torch.ops.aten "
                           "gives op names for selective activation checkpoint policies); call the "
                           "functorch_lite function instead")


class OpOverloadPacket:
    """``torch.ops.aten.<op>``: its overloads are attributes (``.default``, ``.Tensor``...)."""
    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        return OpOverload(f"{self._name}.{overload}")

    def __repr__(self):
        return self._name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"functorch_lite: calling {self._name} directly is not supported (torch.ops.aten "
                           "gives op names for selective activation checkpoint policies)")


class _Namespace:
    def __init__(self, name):
        self._ns = name

    def __getattr__(self, op):
        if op.startswith("__"):
            raise AttributeError(op)
        return OpOverloadPacket(f"{self._ns}.{op}")


aten = _Namespace("aten")


def matchable(op: OpOverload) -> bool:
    """Whether an op call of the facade can be named ``op`` (its ``.default`` overload of a facade op)."""
    from ..ops._registry import OPS
    ns, rest = op._name.split(".", 1)
    base, _, overload = rest.partition(".")
    return ns == "aten" and overload == "default" and (base in OPS or base in _MATCHED_EXTRA)


def _aten_name(op, targs) -> OpOverload:
    """The aten overload PyTorch's CPU path runs for one facade op call."""
    n = op.name
    if n == "matmul" and len(targs) >= 2:
        da, db = getattr(targs[0], "ndim", 0), getattr(targs[1], "ndim", 0)
        n = {(1, 1): "dot", (2, 1): "mv"}.get((da, db), "bmm" if db >= 3 else "mm")
    elif n == "linear":
        bias = len(targs) > 2 and targs[2] is not None
        n = "addmm" if bias and getattr(targs[0], "ndim", 0) in (2, 3) else "mm"
    elif n == "_dropout":
        n = "native_dropout"
    return OpOverload(f"aten.{n}.default")


class _Interceptor:
    """Installed as the op dispatcher's interceptor (the profiler's hook) while entered; chains to the previous."""
    prev = None

    def __enter__(self):
        self.prev = _PROFILER[0]
        _PROFILER[0] = self
        return self

    def __exit__(self, *exc):
        _PROFILER[0] = self.prev
        return None


class Recorder(_Interceptor):
    """The forward's op interceptor: calls the policy for every op call, keeps the saved outputs' arrays."""

    def __init__(self, policy_fn, policy_enum, ctx_cls):
        self.policy_fn, self.P, self.ctx_cls = policy_fn, policy_enum, ctx_cls
        self.prev = None
        self.count = 0
        self.plan = []    # (op call index, aten name, number of arrays)
        self.saved = []   # the arrays

    def op(self, op, targs, sargs, run, name=None):
        r = run() if self.prev is None else self.prev.op(op, targs, sargs, run, name)
        i = self.count
        self.count += 1
        if name is not None:  # (an in-place op: nothing to save)
            return r
        aop = _aten_name(op, targs)
        pol = self.policy_fn(self.ctx_cls(is_recompute=False), aop, *targs, *sargs)
        if isinstance(pol, bool):
            pol = self.P.MUST_SAVE if pol else self.P.PREFER_RECOMPUTE
        if not isinstance(pol, self.P):
            raise TypeError(f"selective checkpoint policy_fn must return a CheckpointPolicy, but got {pol!r} "
                            f"for {aop}")
        if pol in (self.P.MUST_CPU_OFFLOAD, self.P.PREFER_CPU_OFFLOAD):
            raise RuntimeError(f"functorch_lite: selective checkpoint policy {pol} (for {aop}) is not supported: "
                               "there is no CPU offload; use MUST_SAVE or PREFER_RECOMPUTE")
        if pol in (self.P.MUST_SAVE, self.P.PREFER_SAVE):
            outs = _outputs(r)
            if outs:
                self.plan.append((i, aop._name, len(outs)))
                self.saved.extend(t._storage.array for t in outs)
        return r


def _outputs(r):
    """The tensors of an op's result whose arrays can stand for it (fresh tensors, not views)."""
    from .._tensor.tensor import Tensor
    rs = r if isinstance(r, (tuple, list)) else (r,)
    if not all(isinstance(t, Tensor) and t._chain is None and t._base is None for t in rs):
        return []
    return list(rs)


class Replayer(_Interceptor):
    """The recomputation's op interceptor: at the op calls the forward saved, the saved arrays replace the
    recomputed outputs."""

    def __init__(self, plan, saved, error_cls):
        self.plan = {i: (name, k) for i, name, k in plan}
        self.saved, self.error_cls = list(saved), error_cls
        self.prev = None
        self.count = 0
        self.at = 0

    def op(self, op, targs, sargs, run, name=None):
        r = run() if self.prev is None else self.prev.op(op, targs, sargs, run, name)
        i = self.count
        self.count += 1
        hit = self.plan.get(i)
        if hit is None:
            return r
        aop = _aten_name(op, targs)._name
        outs = _outputs(r)
        if name is not None or aop != hit[0] or len(outs) != hit[1]:
            raise self.error_cls(
                "torch.utils.checkpoint: the recomputation ran a different op sequence than the forward "
                f"(op call {i}: {aop if name is None else aop + ' (in-place)'}, the forward saved {hit[0]})")
        for t in outs:
            arr = self.saved[self.at]
            self.at += 1
            if arr.shape != t._storage.array.shape or arr.dtype != t._storage.array.dtype:
                raise self.error_cls("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                     f"different metadata than during the forward pass: the output of {aop}")
            t._storage.array = arr
        return r


def install_aten() -> None:
    """``torch.ops.aten`` (``functorch_lite.ops.aten``) where the facade has none."""
    from .. import ops
    if not hasattr(ops, "aten"):
        ops.aten = aten
