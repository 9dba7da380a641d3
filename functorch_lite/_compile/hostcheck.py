"""A compiled step's index checks, answered on the host before its program runs, so the call need not wait for it.

A program with data-dependent checks (a cross-entropy's target range: ``runner._with_checks``) returns their flags,
and eager's error must come from the call that failed, before its write-back. Read after the program, the flags
made every such call wait for its program to finish: the host's work for the next call (its inputs, dispatch, the
write-back and results of this one) could not overlap the program, and on a device nothing is queued behind it
(W2, an MLP Adam step with CrossEntropyLoss: a 1.2 ms step took 1.27 ms against pure JAX's 1.16 ms, whose calls
overlap). A separate jitted program computing only the flags does not help: the device runs programs in order, so
its flags wait for the previous step's program all the same.

Such flags are usually a few integer comparisons of the call's inputs (the targets against the class count).
``build`` cuts the program's equations down to those its flags need (``dce_jaxpr``); where every one of them is an
integer / boolean operation this module can run with NumPy (``_OPS``, results exact: the same integer
arithmetic), ``HostCheck(ins)`` evaluates them on the host from the inputs' values, which are ready when they come
from a batch rather than from the program. True: every check passes, the program's flags will say so too, and the
call goes on without reading them. False or None (a check fails; or a value it cannot read here, a tracer) sends
the call down the path that reads the program's flags, which raises eager's error with the state as eager leaves
it. A check that needs a floating-point value, or an operation not listed, has no host check at all."""
from __future__ import annotations

import functools
from operator import is_

import numpy as np
import jax
from jax._src import core as _core
from jax._src.interpreters import partial_eval as _pe

# the most input elements read on the host per call (the values are copied there from a device)
MAX_ELEMENTS = 1 << 20


def _reduce(fn):
    return lambda x, *, axes, **_: fn(x, axis=tuple(axes))


def _sum(x, *, axes, **_):
    x = np.asarray(x)
    return np.sum(x, axis=tuple(axes), dtype=x.dtype)  # (in its own dtype, wrapping as XLA's integer sum)


def _slice(x, *, start_indices, limit_indices, strides, **_):
    return np.asarray(x)[tuple(slice(a, b, s) for a, b, s in
                               zip(start_indices, limit_indices, strides or (1,) * len(start_indices)))]


def _bcast(x, *, shape, broadcast_dimensions, **_):
    shape = tuple(shape)
    tmp = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        tmp[dst] = np.shape(x)[src]
    return np.broadcast_to(np.reshape(x, tmp), shape)


def _convert(x, *, new_dtype, **_):
    if np.issubdtype(np.dtype(new_dtype), np.inexact):
        raise TypeError("not an integer conversion")
    return np.asarray(x).astype(new_dtype)


def _select(which, *cases):
    return np.choose(np.asarray(which).astype(np.int64), np.broadcast_arrays(*cases))


# integer / boolean primitives as NumPy computes them: exact, as XLA's (two's complement wrap-around for add/mul)
_OPS = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "not": np.invert,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "neg": np.negative,
    "max": np.maximum, "min": np.minimum,
    "reduce_or": _reduce(np.any), "reduce_and": _reduce(np.all), "reduce_sum": _sum,
    # (of no elements: NumPy raises, XLA gives the identity; the program's flags decide then)
    "reduce_max": _reduce(np.max), "reduce_min": _reduce(np.min), "slice": _slice,
    "stack": lambda *xs, axis, **_: np.stack(xs, axis=axis),
    "concatenate": lambda *xs, dimension, **_: np.concatenate(xs, axis=dimension),
    "broadcast_in_dim": _bcast, "convert_element_type": _convert,
    "reshape": lambda x, *, new_sizes, **_: np.reshape(x, tuple(new_sizes)),
    "squeeze": lambda x, *, dimensions, **_: np.squeeze(x, axis=tuple(dimensions)),
    "select_n": _select,
    "copy": np.array,
}
_CALLS = ("jit", "pjit", "closed_call")  # (``pjit``: older JAX's name of ``jit``)


def _inner(eqn):
    """The jaxpr a call equation runs (a ``jit`` inside the program), else None."""
    if eqn.primitive.name not in _CALLS:
        return None
    return eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")


def _exact(jaxpr) -> bool:
    """Every equation is one of ``_OPS`` on integer / boolean values (recursively through jit calls)."""
    for eqn in jaxpr.eqns:
        inner = _inner(eqn)
        if inner is not None:
            if not _exact(getattr(inner, "jaxpr", inner)):
                return False
            continue
        if eqn.primitive.name not in _OPS or eqn.params.get("out_dtype") is not None:
            return False
        for v in list(eqn.outvars) + [x for x in eqn.invars if not isinstance(x, _core.Literal)]:
            dt = getattr(v.aval, "dtype", None)
            if dt is None or jax.dtypes.issubdtype(dt, np.inexact) or jax.dtypes.issubdtype(dt, jax.dtypes.prng_key):
                return False
    return True


class _Source:
    """The flags' equations as straight-line NumPy code (one function, generated once: interpreted per call, the
    equations cost 40 us of W2's step; as code, a few)."""

    def __init__(self):
        self.ns = {"asarray": np.asarray, "npany": np.any, "errstate": np.errstate}
        self.lines = []
        self.n = 0

    def name(self, value=None, prefix="v"):
        self.n += 1
        n = f"{prefix}{self.n}"
        if value is not None:
            self.ns[n] = value
        return n

    def emit(self, jaxpr, consts, args) -> list:
        env = dict(zip(jaxpr.invars, args))
        for v, c in zip(jaxpr.constvars, consts):
            env[v] = self.name(np.asarray(c), "c")

        def read(v):
            if isinstance(v, _core.Literal):
                return self.name(np.asarray(v.val, dtype=v.aval.dtype), "c")
            return env[v]
        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            inner = _inner(eqn)
            if inner is not None:
                outs = self.emit(getattr(inner, "jaxpr", inner), getattr(inner, "consts", ()), ins)
            else:
                op = _OPS[eqn.primitive.name]
                params = {k: v for k, v in eqn.params.items() if v is not None or k != "out_dtype"}
                fn = self.name(functools.partial(op, **params) if params else op, "f")
                out = self.name()
                self.lines.append(f"    {out} = {fn}({', '.join(ins)})")
                outs = [out]
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in jaxpr.outvars]


class HostCheck:
    """The program's check flags computed on the host from its inputs (``build``). Its inputs are immutable arrays:
    a call with the same ones as the last that passed (a step over the same batch) passes again without reading
    them."""
    __slots__ = ("pos", "flat", "fn", "last")

    def __init__(self, jaxpr, consts, pos, flat):
        self.pos, self.flat, self.last = pos, flat, None
        src = _Source()
        args = [src.name() for _ in pos]
        flags, = src.emit(jaxpr, consts, args)
        # (integer arithmetic wraps as XLA's; NumPy would warn of it on a 0-d value)
        body = [f"def check({', '.join(args)}):", "  with errstate(over='ignore'):"] + \
            ["  " + line for line in src.lines + [f"    return not npany({flags})"]]
        exec(compile("\n".join(body), "<functorch_lite.compile host check>", "exec"), src.ns)
        self.fn = src.ns["check"]

    def __call__(self, ins):
        """True where every check passes on these inputs (the program's leaves, or its per-slot values)."""
        leaves = ins if self.flat else jax.tree_util.tree_leaves(ins)
        arrays = [leaves[p] for p in self.pos]
        last = self.last
        if last is not None and all(map(is_, arrays, last)):
            return True
        for a in arrays:
            if not isinstance(a, jax.Array) or isinstance(a, _core.Tracer):
                return None
        try:
            ok = self.fn(*map(np.asarray, arrays))
        except Exception:  # (a case the NumPy form does not take: the program's flags decide)
            return None
        self.last = arrays if ok else None
        return ok


def build(fn, ins, flat: bool, check_at: int):
    """A ``HostCheck`` for the program ``fn`` over ``ins`` (flat leaves when ``flat``, else its per-slot values
    list) whose flags are ``outs[check_at][0]``; None where its checks need more than ``_OPS`` on integers."""
    try:
        traced = fn.trace(*ins) if flat else fn.trace(ins)
    except Exception:  # (no longer traceable from its cache alone: no host check)
        return None
    closed = traced.jaxpr
    n = len(closed.jaxpr.outvars)
    at = jax.tree_util.tree_unflatten(traced.out_tree, list(range(n)))[check_at][0]
    jaxpr, used = _pe.dce_jaxpr(closed.jaxpr, [k == at for k in range(n)])
    if not _exact(jaxpr):
        return None
    pos = tuple(k for k, u in enumerate(used) if u)
    avals = [v.aval for v in closed.jaxpr.invars]
    if sum(int(np.prod(avals[p].shape)) for p in pos) > MAX_ELEMENTS:
        return None
    return HostCheck(jaxpr, list(closed.consts), pos, flat)


def of(entry, flat: bool, ins):
    """``entry``'s host check for its program over ``ins`` (its donating program's flat leaves when ``flat``, else
    its plain program's per-slot values), built once per form and kept on the entry (``runner._Entry.host``). The
    program's trace is the one its first call cached: the caller runs this without the call's context, so a trace
    no longer cached fails at once (no second trace of the function) and the entry has no host check."""
    if flat not in entry.host:
        entry.host[flat] = build(entry.donating[0] if flat else entry.jitted, ins, flat, entry.spec.check_at)
    return entry.host[flat]
