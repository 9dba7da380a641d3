"""Backward of a whole recorded graph as ONE cached jitted program (the "recorded tape as one
jitted vjp" of design §3).

The graph's structure (which cached entries, which edges, which leaves) keys the program; the
nodes' input arrays, the root cotangents and the leaves' current ``.grad`` are its arguments. A
training loop records the same structure every step, so its backward is one XLA call: every
node's vjp and the accumulation into the leaves run inside it.
"""
from __future__ import annotations

import jax
import numpy as np

from .. import _config
from .._stats import COUNTS as _COUNTS
from .graph import AccumulateGrad, Node, grad_dtype_of


_PROGRAMS: dict = {}

# A backward graph of more nodes than COMPILE_AT_ONCE is compiled into one program only once its structure has come
# back n // RUNS_PER_COMPILE times (n: its nodes; a training loop's step); until then it runs node by node (each op's
# backward kernel is compiled once and shared by every graph). A program's compile time grows with its nodes (10-20 ms
# a node on a 2-core host) where a node-by-node run costs ~50 us a node: a 1000-step Euler loop's one-off backward
# (4,000 nodes) took 75-85 s to compile, its node-by-node run 0.2 s; a large model's step compiles once it has
# repeated enough to pay for it. Smaller graphs compile at once: node by node, a fresh process compiles each of a
# model's distinct backward kernels and later the program too (the examples' training loops, 300-2000 nodes, took
# half as long again when the line was at 300).
COMPILE_AT_ONCE = 2000
RUNS_PER_COMPILE = 25
_SIGHTED: dict = {}  # structure key of a large graph -> its node-by-node runs so far
LARGE = object()  # run_compiled's answer for such a graph's early runs: the engine runs it node by node


_ONES: dict = {}  # (shape, dtype, jax device) -> a committed ones array (scalar roots: a handful of shapes)


class Ones:
    """The implicit gradient of a scalar root (``loss.backward()``). ``device``: the root's jax device, where the
    gradient is placed (a backward whose nodes keep no arrays has no other input to say where to run, and JAX
    would run it on its default device: on a GPU machine, a CPU model's .grad would land on the GPU); None
    under a trace, where the ones are made inside the traced program."""
    __slots__ = ("shape", "dtype", "device")

    def __init__(self, shape, dtype, device=None):
        self.shape, self.dtype, self.device = shape, dtype, device

    def key(self):
        return (self.shape, str(self.dtype))

    def array(self):
        if self.device is None:
            return jax.numpy.ones(self.shape, self.dtype)
        k = (self.shape, self.dtype, self.device)
        a = _ONES.get(k)
        if a is None or a.is_deleted():  # (a .grad that IS these ones, donated by a compiled step, deletes them)
            a = _ONES[k] = jax.device_put(np.ones(self.shape, self.dtype), self.device)
        return a


def compilable(order):
    for n in order:
        if isinstance(n, AccumulateGrad):
            if n._pre_hooks or n._hooks:  # (the node's own hooks: run by the engine, node by node)
                return False
            continue
        if n._entry is None or n._pre_hooks or n._hooks or (n._metadata and n._metadata.get("_retain")) or \
                type(n).apply is not Node.apply:  # (a node with its own apply runs alone: NotImplemented's)
            return False
    return True


def _age(node):
    return node._seq


def run_compiled(order, start, targets, accumulate, keep=None):
    """``keep``: the engine's pruning for a run with ``inputs`` (``engine._needed``): a node mapped to False
    only captures, edges to nodes it leaves out are dropped. Returns the captured gradients, or ``LARGE`` (nothing
    done) for the early runs of a graph of more than ``COMPILE_AT_ONCE`` nodes."""
    from .._tensor.tensor import Tensor
    from .engine import _accumulate, run_post_accumulate_hooks
    from .tensor_hooks import run_leaf_hooks
    from . import grad_mode as _gm
    # The program walks the inner nodes in the engine's order, then the leaves oldest first. A leaf has no edges,
    # so where it stands changes nothing the program computes (its gradient is complete once its producers ran),
    # but the engine's order puts a leaf by its node's age: a parameter's AccumulateGrad is made during the first
    # forward, between that step's nodes, and is older than every node of the later steps. Keyed on the engine's
    # order, a training loop's first backward and all the others were two programs, compiled twice.
    inner = [n for n in order if not isinstance(n, AccumulateGrad)]
    leaves = sorted((n for n in order if isinstance(n, AccumulateGrad)), key=_age)
    index = {id(n): i for i, n in enumerate(inner)}
    index.update((id(n), len(inner) + j) for j, n in enumerate(leaves))
    spec = []
    node_arrays = []
    for n in inner:
        if keep is not None and not keep[id(n)]:  # (autograd.grad's input, nothing to run below it)
            spec.append(False)
            node_arrays.append(None)
            continue
        spec.append((n._entry, n._diff_idx, len(n._out_meta),
                     tuple((index.get(id(nx), -1), nr) for nx, nr in n._edges)))
        node_arrays.append(n._arrays)
    spec.extend([None] * len(leaves))
    node_arrays.extend([None] * len(leaves))
    root_spec = tuple((index[id(n)], nr, g.key() if isinstance(g, Ones) and g.device is None else None)
                      for (n, nr), g in start)
    root_cts = tuple((None if g.device is None else g.array()) if isinstance(g, Ones)
                     else (g._array if isinstance(g, Tensor) else g) for _, g in start)
    target_spec = tuple((index.get(id(n), -1), nr) for n, nr in targets) if targets is not None else ()
    # leaves without hooks accumulate inside the program; hooked leaves get their raw gradient back
    leaf_prev = []
    for lf in leaves:
        t = lf.variable
        plain = accumulate and not t._hooks and t._grad is not None and t._grad.dtype is t.dtype and \
            grad_dtype_of(t) is t.dtype
        leaf_prev.append(t._grad._array if plain else None)
    key = (tuple(s if not s else (id(s[0]),) + s[1:] for s in spec), root_spec, target_spec, accumulate)
    prog = _PROGRAMS.get(key)
    if prog is None and len(inner) > COMPILE_AT_ONCE:
        runs = _SIGHTED.get(key, 0)
        if runs < len(inner) // RUNS_PER_COMPILE:
            if len(_SIGHTED) > 256:
                _SIGHTED.clear()
            _SIGHTED[key] = runs + 1
            return LARGE
        _SIGHTED.pop(key, None)
    _COUNTS["backward_runs"] += 1
    if prog is None:
        _COUNTS["backward_programs"] += 1
        prog = _build_program(spec, root_spec, target_spec, accumulate)
        if len(_PROGRAMS) > 256:
            _PROGRAMS.clear()
        _PROGRAMS[key] = prog
    if any(type(a) is jax.ShapeDtypeStruct for arrs in node_arrays if arrs for a in arrs):
        # (meta tensors: the gradients' shapes and dtypes, as torch's meta backward; nothing computed)
        leaf_out, captured = jax.eval_shape(prog[1], tuple(node_arrays), root_cts, tuple(leaf_prev))
    else:
        leaf_out, captured = prog[1](tuple(node_arrays), root_cts, tuple(leaf_prev))
    captured = list(captured)
    if accumulate:
        done = {id(lf): (prev, g) for lf, prev, g in zip(leaves, leaf_prev, leaf_out)}
        prev_mode = _gm._state.enabled
        _gm._state.enabled = False  # (hooks run with grad mode off, as the engine's)
        try:
            for lf in order:  # (hooks run in the engine's order)
                if not isinstance(lf, AccumulateGrad):
                    continue
                prev, g = done[id(lf)]
                if g is None:
                    continue
                t = lf.variable
                if prev is not None:
                    t._grad._write(g)
                    if t._post_hooks:
                        run_post_accumulate_hooks(t)
                else:
                    _accumulate(t, g, False)
        finally:
            _gm._state.enabled = prev_mode
    elif targets is not None:  # (autograd.grad: a leaf's hooks change what is captured of it)
        hooked = {}
        for k, (n, _) in enumerate(targets):
            if captured[k] is not None and isinstance(n, AccumulateGrad) and n.variable._hooks:
                if id(n) not in hooked:
                    prev_mode = _gm._state.enabled
                    _gm._state.enabled = False
                    try:
                        hooked[id(n)] = run_leaf_hooks(n.variable, captured[k])
                    finally:
                        _gm._state.enabled = prev_mode
                captured[k] = hooked[id(n)]
    return captured


def _build_program(spec, root_spec, target_spec, accumulate):
    entries = [s and s[0] for s in spec]  # keep the entries alive with the program
    appliers = [s[0].vjp_apply(s[1]) if s else None for s in spec]

    def program(node_arrays, root_cts, leaf_prev):
        bufs = {}

        def add(i, nr, ct):
            k = (i, nr)
            cur = bufs.get(k)
            bufs[k] = ct if cur is None else cur + ct
        for (i, nr, ones), ct in zip(root_spec, root_cts):
            add(i, nr, jax.numpy.ones(ones[0], ones[1]) if ones is not None else ct)
        captured = [None] * len(target_spec)
        leaf_out = []
        li = 0
        for i, s in enumerate(spec):
            for k, (ti, tnr) in enumerate(target_spec):
                if ti == i:
                    captured[k] = bufs.get((i, tnr))
            if s is False:  # (captures only)
                continue
            if s is None:  # a leaf
                g = bufs.get((i, 0))
                prev = leaf_prev[li]
                if g is not None and prev is not None:
                    g = prev + g
                leaf_out.append(g)
                li += 1
                continue
            _, diff_idx, nout, edges = s
            cts = tuple(bufs.pop((i, k), None) for k in range(nout))
            if all(c is None for c in cts):
                continue
            undef = entries[i].undef  # (torch's formula gives no gradient here: graph.undefined)
            if undef is not None and undef(tuple(c is not None for c in cts)):
                continue
            in_cts = appliers[i](node_arrays[i], cts)
            for (j, nr), ct in zip(edges, in_cts):
                if j >= 0 and ct is not None and ct.dtype != jax.dtypes.float0:
                    add(j, nr, ct)
        return tuple(leaf_out), tuple(captured)
    # (placed by its inputs even where it reads none; each half-precision sum rounded as torch's engine rounds it)
    return entries, _config.Program(program, keep_unused=True)
