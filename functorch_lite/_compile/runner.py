"""``CompiledFunction``: one jitted XLA program per guard key, state passed in, returned and written back.

Per call: ``discover`` the slots (state.py; the walk is reused while what it read is unchanged), build the
guard key (slot shapes/dtypes/devices/requires_grad, grad-field presence, optimizer-state structure, module
training flags, untraced optimizer options, the Python values among the arguments, grad mode, default dtype).
On a new key, ``jax.jit(pure)`` traces the function once: ``pure`` puts tracers into every slot, runs the
user's Python (``loss.backward()`` and ``optimizer.step()`` run unchanged, their own jitted pieces inline),
reads the slots back, and restores every Python object before returning — so nothing traced leaks out. After
the program runs, the new values are written into the slots (storages, ``.grad`` fields, optimizer state, RNG
key) and the results wrapped as tensors.

What cannot be traced (a host read such as ``.item()``, Python branching on a tensor's value, printing a
tensor, a write to a tensor the function cannot reach) is a *graph break*: with ``fullgraph=True`` a clear
error naming the cause and the user's line; otherwise a one-time warning and the call runs eagerly.
LR schedulers' ``step()`` inside the function is plain Python on floats: it runs eagerly after the program,
in order, and the LR it sets is an input of the next call (never a recompile).
"""
from __future__ import annotations

import dataclasses
import gc
import logging
import os
import random
import sys
import traceback
import types
import warnings
import weakref
from collections import OrderedDict

import jax
import numpy as np

from .. import _config
from .. import _device as _dev
from ..backends import SDP_KEY as _SDP_KEY
from .. import dtypes as D
from .._tensor import storage as _storage
from .._stats import PROFILER as _PROFILER
from .._tensor.tensor import Tensor
from ..autograd import engine as _engine
from ..autograd.copy_slices import as_strided_node as _as_strided_node
from ..autograd.graph import SAVED_HOOKS as _SAVED_HOOKS, edge_of as _edge_of
from ..autograd import grad_mode as _gm
from ..func import _core as _fc
from ..amp import autocast_mode as _amp
from ..nn.modules import module as _module
from ..optim import optimizer as _optim
from . import gate as _gate
from . import hostcheck
from . import state as S
from .effects import (_UNSET, _UnreachableWrite, _ViewArgWrite, _bindings, _container_effects, _contents,
                      _effects, _identical_contents, _object_writes, _replay_container, _restore, _restore_tables,
                      _set_contents, _snap_objects, _table_effects, UserBreak)
from .guards import SCALARS, numpy_guard, scalar_guard
from .._warn import user_stacklevel
from .replay import Recorder, replay
from .nodes import _RematEntry, _SavedEntry, _TapeEntry, _tape_grads
from .slots import KnownZero
from .. import _symbolic as _sym
from .._symbolic import Concrete, SymNumber
from .steady import Steady

log = logging.getLogger("functorch_lite.compile")


from .config import GRAPH_BREAKS, config  # noqa: E402  (torch._dynamo.config; see config.py)

LIVE: "weakref.WeakSet" = weakref.WeakSet()  # every CompiledFunction (``_dynamo.reset()`` empties their caches)


TRACING = [0]   # > 0 while a compiled function is being traced (nested compiled calls inline)
# ``compiler.set_stance``: None for the default stance (the call path's one check), else a DynamoStance
STANCE: list = [None]
STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
           "aot_eager_then_compile")
COUNTERS = {"calls": 0, "traces": 0, "cache_hits": 0, "eager_calls": 0, "graph_breaks": 0, "steady_calls": 0}

from ..ops._dispatch import DataDependentError, RAISED as _RAISED, _dispatch_view  # noqa: E402
from ..ops import _deferred  # noqa: E402
from ..ops.strided import empty_strided as _empty_strided  # noqa: E402

_BREAKS = (DataDependentError, jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
           jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError)


from .._config import Program as _Program, _top_level  # noqa: E402 (jax.jit with XLA's options for many-op programs)
from jax._src import core as _jax_core  # noqa: E402

_jit = _Program


class TorchDynamoException(RuntimeError):
    """``torch._dynamo.exc.TorchDynamoException``: the base of the compiler's errors."""


class GraphBreak(TorchDynamoException):
    """A compiled region did something a single XLA program cannot express (``torch._dynamo.exc.Unsupported``)."""


class RecompileError(TorchDynamoException):
    """``torch._dynamo.exc.RecompileError``: a recompile under ``config.error_on_recompile``."""


def _cause(exc) -> str:
    if isinstance(exc, DataDependentError):
        what = getattr(exc, "what", "reading tensor values")
        if what == "reading tensor values":
            return ("a tensor's value read on the host (.item(), .tolist(), .numpy(), float(t), print(t), or "
                    "Python `if`/`while` on a tensor)")
        return what
    if isinstance(exc, jax.errors.TracerBoolConversionError):
        return "Python control flow on a tensor's value (`if`/`while` on a tensor, or bool(tensor))"
    if isinstance(exc, jax.errors.TracerIntegerConversionError):
        return "a tensor's value used as a Python int"
    if isinstance(exc, _UnreachableWrite):
        return str(exc)
    if isinstance(exc, TypeError):
        return ("a traced value used where Python needs a number (an optimizer option such as "
                "param_groups[i]['lr'] is an input of the program, not a float, inside it)")
    return "a tensor's value read on the host (.item(), .tolist(), .numpy(), float(t), or printing a tensor)"


def _tracer_type_error(exc) -> bool:
    """A TypeError from Python code handed a tracer where it wants a number (``f"{group['lr']:.4f}"``,
    ``tensor * group['lr']``): eagerly the value is a float, so the call runs eagerly (a genuine TypeError then
    comes from the eager run)."""
    return "Tracer" in str(exc)


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_file(name) -> bool:
    """A code file of the user's: not functorch_lite's (its generated op code included), JAX's, an installed
    package's or the standard library's."""
    if name.startswith("<functorch_lite"):
        return False
    f = os.path.abspath(name)
    return not (f.startswith(_PKG) or "/jax/" in f or "/jaxlib/" in f or "site-packages" in f or "/lib/python3" in f)


def _raised_by_user(exc) -> bool:
    """The innermost frame of ``exc``'s traceback is the user's code (a ``raise`` there)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return _user_file(tb.tb_frame.f_code.co_filename)


_OP_DIRS = tuple(os.path.join(_PKG, d) + os.sep for d in ("ops", "_tensor", "nn"))


def _op_error(exc) -> bool:
    """An op's own argument or value error (a matmul's shapes, a bad reshape), raised by the facade's op code while
    traced: eager raises it too, after what the function did before it."""
    if type(exc) not in (RuntimeError, IndexError, ValueError, TypeError):
        return False
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_OP_DIRS)


def _user_frame(exc):
    """The innermost frame of the user's code in the traceback (a ``FrameSummary``), or None."""
    best = None
    for fs in traceback.extract_tb(exc.__traceback__):
        if _user_file(fs.filename):
            best = fs
    return best


def _user_line(exc) -> str:
    """The innermost frame of the user's code in the traceback."""
    best = _user_frame(exc)
    if best is None:
        return "<unknown line>"
    return f"{best.filename}:{best.lineno}: {best.line}"


def _static_repr(v, depth=0):
    """Python values among the arguments are constants of the program: part of the guard key. A tensor's values
    are an input (its storage's slot has the guard), but an argument that is a view of its storage is read through
    its view chain, traced as a constant: the chain (ops and their static arguments: offsets, sizes) is guarded,
    or ``f(a[1:])`` then ``f(a[:3])`` would run the first program on the second view."""
    if isinstance(v, Tensor):
        return "T" if v._chain is None else ("view", v._chain)
    if isinstance(v, SCALARS):
        return scalar_guard(v)  # the walk's rule: type and repr (nan equals nan, 1 and 1.0 differ)
    if v is None or isinstance(v, D.dtype):
        return (type(v).__name__, v)
    if isinstance(v, (list, tuple)) and depth < 3:
        return (type(v).__name__, tuple(_static_repr(x, depth + 1) for x in v))
    if isinstance(v, dict) and depth < 3:
        return ("dict", tuple((k, _static_repr(x, depth + 1)) for k, x in v.items()))
    if isinstance(v, (np.ndarray, np.generic)):  # read on the host while tracing: its values are constants
        return numpy_guard(v)
    return ("obj", type(v).__qualname__)


def _arg_statics(d, args, kwargs) -> tuple:
    """The guard key's argument components: positional, keyword. An ArgViewSlot's view is no constant of the
    program: its slot's sig is its guard."""
    vp = d.view_pos
    return (tuple([_static_repr(a) for a in args]) if not vp else
            tuple(["T" if i in vp else _static_repr(a) for i, a in enumerate(args)]),
            tuple([(k, "T" if k in vp else _static_repr(v)) for k, v in sorted(kwargs.items())]) if kwargs else ())


def _scalar_positions(args, kwargs, pinned) -> frozenset:
    """The positions (ints, keyword names) of the int/float arguments that may be inputs (``compile(dynamic=True)``)."""
    return frozenset([i for i, a in enumerate(args) if S.dynamic_scalar(a) and i not in pinned] +
                     [k for k, a in kwargs.items() if S.dynamic_scalar(a) and k not in pinned])


def _changed_scalars(old, key, args, kwargs, dyn, pinned) -> frozenset:
    """The int/float arguments whose value differs from the previous call's (same type), not yet inputs: they
    become inputs (torch.compile's automatic dynamic: the first call specializes, a change makes them dynamic)."""
    grow = []
    if len(old[3]) == len(args):
        grow += [i for i, (a, o, n) in enumerate(zip(args, old[3], key[3]))
                 if i not in dyn and i not in pinned and S.dynamic_scalar(a) and o != n and o[0] == n[0]]
    if old[4] and key[4]:
        was = dict(old[4])
        grow += [k for k, n in key[4] if k not in dyn and k not in pinned and S.dynamic_scalar(kwargs[k]) and
                 k in was and was[k] != n and was[k][0] == n[0]]
    return frozenset(grow)


_MAX_GUARDS = 16  # branches on dynamic arguments kept as guards per function; past them, a branch specializes


def _branches(d, args, kwargs) -> tuple:
    """The outcomes, for this call's argument values, of the branches the function's traces took on dynamic
    int/float arguments (``_symbolic.GUARD``): a key component (None: Python raised on these values)."""
    if not d.gexprs:
        return ()
    env = dict(enumerate(args))
    env.update(kwargs)
    out = []
    for e in d.gexprs:
        try:
            out.append(bool(_sym._eval(e, env)))
        except Exception:  # noqa: BLE001
            out.append(None)
    return tuple(out)


# The guard key's global modes: grad, inference, default dtype, autocast, float32 matmul precision, current CUDA
# device, attention backends, the other process-wide switches a function may read (deterministic algorithms,
# threads, warn_always, torch.backends flags, anomaly mode: ``_config.SWITCH_STATE``), as expressions over this
# module's names: ``_modes()`` is their tuple, and a fused steady call compares each in place (steady.Steady.fuse)
MODE_EXPRS = ("_gm._state.enabled", "_gm._state.inference", "D._DEFAULT[0]", "_amp.state_key()",
              '_config._SWITCHES["matmul_precision"]', "_dev.CURRENT_CUDA[0]", "_SDP_KEY[0]", "_config.SWITCH_STATE[0]")
_N_MODES = len(MODE_EXPRS)  # (the length of ``_modes()``: the key's components after it are indexed past them)
_modes = eval(f"lambda: ({', '.join(MODE_EXPRS)})")
_modes.__doc__ = "The guard key's global modes (``MODE_EXPRS``), as a tuple."


class _Entry:
    __slots__ = ("jitted", "donating", "saving", "spec", "eager", "consts", "scanned", "skip", "unused", "guards",
                 "host")

    def __init__(self):
        self.jitted = None
        self.donating = None  # (jitted over flat leaves with the rewritten ones donated, treedef)
        self.saving = None    # a compiled forward's program that also saves its backward's residuals (_saving)
        self.spec = None
        self.eager = False
        self.consts = []      # (storage, array): tensors the program read as constants (guards)
        self.scanned = 0      # 1: the plain trace's constants are in ``consts``; 2: the donating one's too
        self.skip = ()        # slots the donating program takes no input for (a generator it draws nothing from)
        self.unused = ()      # slots whose values the plain trace's program never reads
        self.guards = []      # the branches its trace took on dynamic int/float arguments [(expression, outcome)]
        self.host = {}        # its checks answered on the host, per input form (flat or not): hostcheck.build


def _constants(traced) -> list:
    """The facade storages whose arrays a trace captured as constants of the program: tensors the function
    read without the discovery reaching them (deeper than its walk, or through an object it does not enter).
    Their arrays are guards: when one changes, the program is traced again (never a stale constant)."""
    arrays = [c for c in traced.jaxpr.consts if isinstance(c, jax.Array)]
    if not arrays:
        return []
    ids = {id(a) for a in arrays}
    return [(r, r.array) for r in gc.get_referrers(*arrays)
            if type(r) is _storage.Storage and id(r.array) in ids]


def _unused_slots(traced, in_vals) -> set:
    """The slots none of whose input leaves the traced program reads (``traced.jaxpr``'s invars are the
    flattened ``in_vals``, in order)."""
    jaxpr = traced.jaxpr.jaxpr
    used = {id(v) for e in jaxpr.eqns for v in e.invars}
    used.update(id(v) for v in jaxpr.outvars)
    out, pos = set(), 0
    for i, v in enumerate(in_vals):
        n = len(jax.tree_util.tree_leaves(v))
        if n and not any(id(x) in used for x in jaxpr.invars[pos:pos + n]):
            out.add(i)
        pos += n
    return out


class _UnusedKey:
    """The stand-in for a generator key the donating program does not take (``CompiledFunction._donating``)."""

    def __jax_array__(self):
        raise RuntimeError("functorch_lite.compile: a random draw in a program traced as drawing nothing (please "
                           "report this; torch._dynamo.reset() recovers)")


_UNUSED_KEY = _UnusedKey()


def _misplaced(spec, slots, outs):
    """Where the program leaves an array off the device the facade says it is on: ({output position: jax device}
    for parameters and .grad fields, {result position: jax device} for tensor results), or None inside another
    trace. A program places its outputs with its inputs, and with none (a backward that reads no values,
    d(2w)/dw, or a function that reads no tensor) on JAX's default device -- on a GPU machine, a CPU model's
    .grad landed on the GPU; a result made by ``.to(device)`` belongs on that device too. Worked out on the
    first call of a program: its placement does not change between calls."""
    slot_moves, moves = {}, {}
    for k, ((i, _, _), v) in enumerate(zip(spec.outputs, outs)):
        s = slots[i]
        if isinstance(s, (S.StorageSlot, S.GradSlot)) and isinstance(v, jax.Array):
            if isinstance(v, jax.core.Tracer):
                return None
            jd = _dev.misplaced(v, s.tensor.device)
            if jd is not None:
                slot_moves[k] = jd
    it = iter(outs[spec.n_slot_out:])
    for k, m in enumerate(spec.result_meta):
        if m[0] in ("t", "num"):
            arr = next(it)
            if isinstance(arr, jax.core.Tracer):
                return None
            jd = _dev.misplaced(arr, m[2]) if m[0] == "t" else None
            if jd is not None:
                moves[k] = jd
    return slot_moves, moves


def _index_asserts() -> bool:
    """``torch._inductor.config.assert_indirect_indexing`` (torch's default True): whether a program checks its
    indices (``ops/_deferred``); read when a program is traced."""
    import functorch_lite._inductor.config as ic
    return bool(sys.modules[ic.__name__].assert_indirect_indexing)


_NOSNAP = object()  # (a slot whose value a check's snapshot does not take: as before the call)


def _check_state(slots):
    """The slots as a check is made (``_deferred.begin``'s snapshot): (their values, and what else the failed
    call leaves as eager's raised there: a storage's version; a .grad's tensor, its version and dtype)."""
    vals, meta = [], []
    for s in slots:
        vals.append(s.get() if isinstance(s, (S.StorageSlot, S.GradSlot, S.OptSlot, S.RngSlot)) else _NOSNAP)
        if isinstance(s, S.StorageSlot):
            meta.append(s.storage.version)
        elif isinstance(s, S.GradSlot):
            g = s.tensor._grad
            meta.append(None if g is None else (g, g._storage.version, g.dtype))
        else:
            meta.append(None)
    return vals, meta


def _with_checks(spec, slots, in_vals, out_vals, checks, wlog, put_grads) -> None:
    """The data-dependent checks recorded in the trace (``ops/_deferred``: an index out of range) as one more
    output of the program: (flags, the offending values, their positions, the .grad values at the first check
    that failed which no other output carries). Where a flag is set the program returns, for what it rewrote
    (its donated buffers among them), the values they had when that check was made: the call raises
    (``_check_failed``) and puts them back, so a failed step left the state as eager's, raised there, did (a check
    in the forward: no parameter or optimizer state changed; a BatchNorm's statistics updated before it, an
    optimizer step or a first backward before a check after it: kept, with the version counts and the new .grad
    tensors those writes made)."""
    flag_list = [c[0] for c in checks]
    flags = jax.numpy.stack(flag_list)
    ok = jax.numpy.logical_not(jax.numpy.any(flags))
    snaps = [None if c[4] is None else c[4][0] for c in checks]
    metas = [None if c[4] is None else c[4][1] for c in checks]
    gated, kept = set(), set()
    # per check: the slots the function had changed by then (a primed first step's state: kept, not dropped)
    spec.check_moved = tuple(frozenset() if sn is None else frozenset(
        i for i, _, _ in spec.outputs if sn[i] is not _NOSNAP and not _same(sn[i], in_vals[i])) for sn in snaps)
    for k, (i, _, _) in enumerate(spec.outputs):
        new = out_vals[k]
        olds = [in_vals[i] if sn is None or sn[i] is _NOSNAP else sn[i] for sn in snaps]
        if all(_same(o, in_vals[i]) for o in olds):
            if i in spec.fresh:
                # a .grad the function replaced after its checks (``zero_grad()`` after the forward): its old
                # buffer is kept (not donated: ``_donating``), the old .grad after a failed call, unread
                kept.add(i)
                continue
            if _fits(in_vals[i], new):
                # (select_n with the one scalar flag: the form gate.py finds and moves to where the value is made)
                out_vals[k] = jax.tree_util.tree_map(lambda a, b: jax.lax.select_n(ok, a, b), in_vals[i], new)
                gated.add(k)
            continue
        # the slot changed before a check (a BatchNorm's statistics, a step before a check after it): the value
        # at the first check that failed; a .grad emptied or zeroed by then is put right on the host
        val = new
        for f, o in reversed(list(zip(flag_list, olds))):
            if o is None or type(o) is KnownZero or _same(o, new):
                continue
            if i in spec.fresh and _same(o, in_vals[i]):  # (as above: the old .grad kept, not read)
                kept.add(i)
                continue
            if not _fits(o, new):
                break
            val = jax.tree_util.tree_map(lambda a, b, f=f: jax.lax.select_n(f, a, b), val, o)
        else:
            out_vals[k] = val
            gated.add(k)
    # per check: the .grad fields as they were then, for the host ((kind, a new tensor?, its version, its dtype):
    # kind "same", "none", KnownZero (zeroed) or "value": the gated output's, or one the check output carries)
    spec.check_grads = tuple(
        {i: _grad_kind(in_vals[i], sn[i], mt[i], put_grads[i]) for i, s in enumerate(slots)
         if isinstance(s, S.GradSlot)} if sn is not None else None for sn, mt in zip(snaps, metas))
    gated_slots = {spec.outputs[k][0] for k in gated}
    extra = {}
    for i, s in enumerate(slots):
        if not isinstance(s, S.GradSlot) or i in gated_slots:
            continue
        val = None
        for f, sn, g in reversed(list(zip(flag_list, snaps, spec.check_grads))):
            if g is None or g[i][0] != "value":
                continue
            val = sn[i] if val is None or not _fits(sn[i], val) else jax.lax.select_n(f, val, sn[i])
        if val is not None:  # (a .grad the function zeroed again or left as it was: no output of its own)
            extra[i] = val
    # per check: the version counts the writes before it made (a storage's; an optimizer state's views: one)
    base = {i: (wlog.get(id(s.storage)) or (0, 0, s.storage.version))[2] for i, s in enumerate(slots)
            if isinstance(s, S.StorageSlot)}
    spec.check_bumps = tuple(None if mt is None else
                             {i: (mt[i] - base[i] if i in base else int(i in moved)) for i, _, _ in spec.outputs}
                             for mt, moved in zip(metas, spec.check_moved))
    spec.check_gated = frozenset(gated)
    spec.check_kept = frozenset(kept)
    spec.checks = tuple(c[3] for c in checks)
    spec.check_at = len(out_vals)
    out_vals.append((flags, tuple(c[1] for c in checks), tuple(c[2] for c in checks), extra))


def _fits(a, b) -> bool:
    """Same pytree of arrays with the same shapes and dtypes (a select between them is possible)."""
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    return bool(la) and ta == tb and all(isinstance(x, jax.Array) and isinstance(y, jax.Array) and
                                         x.shape == y.shape and x.dtype == y.dtype for x, y in zip(la, lb))


def _grad_kind(before, then, meta, put):
    """A .grad field at a check: (kind, whether its tensor is a new one (``zero_grad()`` then ``backward()``),
    the writes made to that tensor, its dtype); kind "same" (as before the call), "none", a KnownZero (zeroed) or
    "value"."""
    if _same(then, before):
        return "same", False, 0, None
    if then is None or meta is None:
        return "none", False, 0, None
    g, ver, dt = meta
    return (then if type(then) is KnownZero else "value"), g is not put, ver, dt


def _flagged(spec, outs) -> bool:
    """Whether one of the program's checks failed (a host read: it waits for the program)."""
    flags = outs[spec.check_at][0]
    return not isinstance(flags, jax.core.Tracer) and bool(np.asarray(flags).any())


def _check_failed(spec, slots, outs, plain=None, made=()) -> None:
    """After the program, before its write-back (in the steady state: after it, once ``Steady.undo`` has put it
    back): eager's error for the first check that failed (one host read);
    what the program rewrote gets the values it had when that check was made (``_with_checks``), and the
    version counts and .grad tensors the writes before it made. ``plain``: a primed call's own program's spec,
    whose .grad fields at the check are eager's for the slots ``made`` (placeholders: eager had no .grad there)."""
    if not _flagged(spec, outs):  # (none; or called inside another trace: nothing to read)
        return
    flags, values, positions, extra = outs[spec.check_at]
    f = np.asarray(flags)
    k = int(np.argmax(f))
    grads = spec.check_grads[k]
    if made and grads is not None and len(plain.check_grads) == len(spec.check_grads) and \
            plain.check_grads[k] is not None:
        grads = {i: plain.check_grads[k].get(i, g) if i in made else g for i, g in grads.items()}
    bumps = spec.check_bumps[k] or {}
    for j, ((i, _, _), v) in enumerate(zip(spec.outputs, outs)):
        if j not in spec.check_gated or (grads is not None and i in grads):
            continue
        s = slots[i]
        if isinstance(s, S.StorageSlot):
            s.rollback(v)
            s.storage.version += bumps.get(i, 0)
        elif isinstance(s, S.OptSlot):
            s.rollback(v, bumps.get(i, 0))
        else:
            rollback = getattr(s, "rollback", None)
            if rollback is not None:
                rollback(v)
    if grads is None:  # (no state at the check: as before the call, its zero_grad() done)
        for i in spec.fresh:
            slots[i].tensor._grad = None
        for i, z, dt, bump in spec.zeros:
            slots[i].write_zero(z, dt, bump)
    else:
        out_of = {i: j for j, (i, _, _) in enumerate(spec.outputs)}
        for i, (kind, new, ver, dt) in grads.items():
            s = slots[i]
            if kind == "none":
                s.tensor._grad = None
                continue
            if kind == "same":
                if out_of.get(i) in spec.check_gated and i not in spec.check_kept:
                    s.rollback(outs[out_of[i]])  # (a kept .grad: its old tensor and buffer are intact)
                continue
            v = extra.get(i)
            if v is None and out_of.get(i) in spec.check_gated:
                v = outs[out_of[i]]
            if type(kind) is not KnownZero and v is None:
                continue
            if new:  # (a new tensor, as backward made it after zero_grad(): a .grad the caller kept keeps its values)
                s.tensor._grad = None
            if type(kind) is KnownZero:
                s.write_zero(kind, dt, ver)
            else:
                s.write(v, dt, ver)
    raise spec.checks[k](values[k].item(), int(positions[k]))


def _layout(tree) -> list:
    """(shape, dtype) of each leaf (arrays or their ShapeDtypeStructs)."""
    return [(tuple(a.shape), a.dtype) for a in jax.tree_util.tree_leaves(tree)]


class _Spec:
    """What one trace produced: which slots come back (and how), the result's structure, deferred calls."""
    __slots__ = ("outputs", "result_tree", "result_meta", "deferred", "n_slot_out", "needs_node", "node_op", "fresh",
                 "node_entry", "node_ctx", "out_sigs", "effects", "firsts", "result_skel", "zeros", "moves",
                 "read_state", "replays", "objs", "freed", "aliased", "unlinked", "saves", "checks", "check_at",
                 "check_grads", "check_gated", "check_moved", "check_kept", "check_bumps")


class CompiledFunction:
    """The callable ``compile(fn)`` returns."""

    def __init__(self, fn, *, fullgraph=False, dynamic=None, mode=None, options=None):
        self.fn = fn
        self.fullgraph = fullgraph
        self.cache_size_limit = None  # compile(recompile_limit=) overrides config.cache_size_limit
        self.cache: OrderedDict = OrderedDict()
        self.stats = {"calls": 0, "traces": 0, "cache_hits": 0, "eager_calls": 0, "recompiles": 0}
        self._last = None       # (key, names) of the previous call: names the argument behind a recompile
        self._plan = None       # what fn itself reaches, reused while unchanged (state.discover_cached)
        self._steady = None     # the last call's state, when the next call may skip the key (steady.py)
        self._views = True      # view arguments needing no gradient are their values (slots.ArgViewSlot)
        self._dynamic = dynamic  # True: int/float arguments are inputs from the first call; False: never
        self._dyn = frozenset()  # the argument positions whose int/float is an input (slots.ScalarArgSlot)
        self._pinned = set()     # positions specialized again: their dynamic trace needed the value (_symbolic.py)
        self._grew = None        # why the call that made an argument dynamic recompiled (its log line)
        self._gexprs = []        # the branches taken on dynamic arguments (expressions): their outcomes key programs
        self._profiled = False  # inside the call a recording profile wraps in one event (_profiled_call)
        self._ctx = None
        self._warned = False
        self._warned_const = False
        self._warned_hooks = set()  # (the causes _eager_while and _graph_break warned of)
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn
        LIVE.add(self)

    def reset(self) -> None:
        """Forget every compiled program and the reused discovery (``torch._dynamo.reset()``)."""
        self.cache.clear()
        self._plan = self._last = self._steady = None
        self._warned = self._warned_const = False
        self._warned_hooks = set()
        self._views = True
        self._dyn, self._pinned = frozenset(), set()
        self._gexprs = []

    def __getstate__(self) -> dict:
        """What a copy or a pickle keeps: the function and the options. The programs, the steady state and the
        reused discovery are dropped (jitted programs cannot be copied): the copy traces afresh on its first
        call."""
        return {"fn": self.fn, "fullgraph": self.fullgraph, "dynamic": self._dynamic,
                "cache_size_limit": self.cache_size_limit}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["fn"], fullgraph=state["fullgraph"], dynamic=state["dynamic"])
        self.cache_size_limit = state["cache_size_limit"]

    def __get__(self, obj, objtype=None):
        """``@compile`` on a method (``def forward(self, x)`` in a module): bound as a function is, so the
        instance is its first argument (its state found through it), as torch.compile's wrapper binds."""
        return self if obj is None else types.MethodType(self, obj)

    # ---- the call ----------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        steady = self._steady
        if steady is not None and steady.call:  # (the steady call as one function: Steady.fuse)
            result = steady.call(self, args, kwargs)
            if result is not _MISS:
                return result
        if steady is not None and not kwargs and not TRACING[0] and _PROFILER[0] is None and \
                STANCE[0] is None and _SAVED_HOOKS[0] is None and (not args or steady.fast is not None):
            # the steady state of a call without arguments (a training step over its closure) or with plain tensor
            # arguments (a batch): the general path's steps for it (discover_cached's reused walk, the steady
            # check, _steady_call), with nothing else: the facade's Python per call is most of what a small step
            # adds to its program
            plan = self._plan
            if plan is not None and plan.valid() and plan.d is steady.base:
                d = plan.d
                if not (_module._global_call_hooks and d.modules):
                    if args:
                        ins, d = steady.fast(args), steady.argd
                        if config.verify_discovery:
                            _verify_fast(self, steady, ins, args)
                    else:
                        try:
                            ins = None if config.verify_discovery else steady.inputs(d, args, kwargs)
                        except AttributeError:  # (a state entry set to None or a number: the full path)
                            ins = None
                    if ins is not None and not (steady.entry.consts and _stale(steady.entry)):
                        self.stats["calls"] += 1
                        COUNTERS["calls"] += 1
                        self._steady = None
                        return self._steady_call(steady, d, args, kwargs, ins)
        if TRACING[0]:  # called from inside another compiled region: inline
            return self.fn(*args, **kwargs)
        if _SAVED_HOOKS[0] is not None and _gm._state.enabled:
            # (saved_tensors_hooks around the call: pack / unpack run on each op's saved tensors, which live inside
            # one program when compiled -- torch.compile applies them; here the call runs eagerly while they are on)
            return self._eager_while("saved_tensors_hooks are active (their pack / unpack hooks run on each op's "
                                     "saved tensors)", args, kwargs)
        if _PROFILER[0] is not None and not self._profiled:  # a profile records: the call as one event
            return self._profiled_call(args, kwargs)
        if STANCE[0] is not None:
            stance = STANCE[0].stance
            if stance not in STANCES:
                raise RuntimeError(f"invalid torch.compile stance '{STANCE[0]!r}'")
            if stance == "force_eager" or stance.endswith("eager_then_compile") and not self.stats["calls"]:
                self.stats["calls"] += 1  # (the first invocation, under eager_then_compile: eager)
                return self._eager(args, kwargs)
        self.stats["calls"] += 1
        COUNTERS["calls"] += 1
        if self._dynamic is True:
            self._dyn |= _scalar_positions(args, kwargs, self._pinned)
        d = S.discover_cached(self.fn, args, kwargs, self)
        if self._gexprs:
            d.gexprs = self._gexprs
        if _module._global_call_hooks and d.modules:
            return self._global_hooks(args, kwargs)
        if config.verify_discovery:
            self._verify_discovery(d, args, kwargs)
        steady, self._steady = self._steady, None
        if steady is not None:
            try:
                ins = steady.inputs(d, args, kwargs)
            except AttributeError:  # (a state entry set to None or a number: no steady call)
                ins = None
            if ins is not None and not _stale(steady.entry):
                if config.verify_discovery and self._ambient(d, args, kwargs) != steady.ambient:
                    raise AssertionError(f"functorch_lite.compile: {self.__name__}: the steady state's check "
                                         "passed a call whose guard components differ")
                return self._steady_call(steady, d, args, kwargs, ins)
        ambient = self._ambient(d, args, kwargs)
        key = (tuple([s.sig() for s in d.slots]),) + ambient
        names = d  # (the component names are built from the discovery on a miss: _flat)
        entry = self.cache.get(key)
        why = None
        if entry is not None and _stale(entry):
            why = self._stale_constant(key)
            entry = None
        if entry is None and self._last is not None and self._dynamic is None and config.automatic_dynamic_shapes:
            grow = _changed_scalars(self._last[0], key, args, kwargs, self._dyn, self._pinned)
            if grow:  # (torch.compile's automatic dynamic: a changed int/float argument becomes an input)
                self._dyn |= grow
                self._grew = f"{self._why(key, names)} (an input from now on: automatic dynamic)"
                self.stats["calls"] -= 1
                COUNTERS["calls"] -= 1
                return self(*args, **kwargs)
        if entry is None:
            if STANCE[0] is not None and STANCE[0].stance in ("eager_on_recompile", "fail_on_recompile"):
                return self._no_compile(key, names, why, args, kwargs)
            if config.error_on_recompile and self._last is not None:  # (ahead of the limit, as torch's guard check)
                raise RecompileError(f"Recompiling function {self._site()}\n    triggered by the following "
                                     f"guard failure(s):\n    - {why or self._grew or self._why(key, names)}")
            limit = self._limit()
            if len(self.cache) >= limit:
                if not self._warned:
                    self._warned = True
                    warnings.warn(f"functorch_lite.compile: {self.__name__} hit config.cache_size_limit "
                                  f"({limit}) compiled programs; new argument signatures run "
                                  f"eagerly (last recompile: {self._why(key, names)})", stacklevel=user_stacklevel())
                return self._eager(args, kwargs)
            if self._last is not None:
                self.stats["recompiles"] += 1
                why, self._grew = why or self._grew, None
                if config.log_recompiles:
                    log.warning("functorch_lite.compile: recompiling %s: %s", self.__name__,
                                why or self._why(key, names))
            entry = self.cache[key] = _Entry()
            entry.jitted = _jit(self._pure(entry, lambda: self._ctx))
        else:
            self.stats["cache_hits"] += 1
            COUNTERS["cache_hits"] += 1
        last, self._last = self._last, (key, names)
        if entry.eager:
            return self._eager(args, kwargs)
        in_vals = [slot.get() for slot in d.slots]
        self._ctx = (d, args, kwargs)
        placeholders = made = ()
        plain = None
        versions: dict = {}
        try:
            if not entry.donating and not entry.scanned:
                traced = entry.jitted.trace(in_vals)  # traces (cached for the call)
                new = [g for g, _ in entry.guards if g not in self._gexprs]
                if new:  # (a branch on a dynamic argument: its outcome joins the key, the call is made again)
                    self._gexprs.extend(g for i, g in enumerate(new) if g not in new[:i])
                    self.cache.pop(key, None)
                    self._steady, self._last = None, last
                    self.stats["calls"] -= 1
                    COUNTERS["calls"] -= 1
                    return self(*args, **kwargs)
                if self._dyn and any(type(s) is S.ScalarArgSlot for s in d.slots):
                    self._check_dynamic(entry, d, traced, in_vals, args, kwargs)
                primed = self._primed(key, entry, d, in_vals, traced, ambient)
                plain = entry.spec
                if primed is not None:
                    key, entry, in_vals, traced, placeholders, made, versions = primed
                    self._last = (key, names)
                entry.consts += _constants(traced)
                entry.unused = _unused_slots(traced, in_vals)
                if entry.spec is not None:  # (no input of a node either: nothing read, nothing to differentiate)
                    entry.spec.unlinked = entry.spec.unlinked | frozenset(entry.unused)
                entry.scanned = 1
                if entry.donating is None and entry.spec is not None and not entry.spec.needs_node:
                    # the trace told what the program rewrites: it is compiled once, donating, from its first
                    # call (the plain program is compiled only where donation does not apply)
                    entry.donating = self._donating(entry, d, in_vals, traced)
            flat = False
            saved = None
            # (the checks answered on the host first, from inputs the program may donate: True, no flag read after)
            passed = entry.spec is not None and bool(entry.spec.checks) and self._host_passed(entry, in_vals)
            if entry.spec is not None and entry.spec.needs_node and entry.saving is not False:
                outs, saved = self._run_saving(entry, d, in_vals, args, kwargs)
            elif entry.donating:
                fn, tree = entry.donating
                for i in entry.skip:
                    in_vals[i] = None
                for i in entry.spec.fresh:  # (donated: a copy, so a .grad the caller kept keeps its buffer)
                    if isinstance(in_vals[i], jax.Array):
                        in_vals[i] = jax.numpy.array(in_vals[i], copy=True)
                leaves, t2 = jax.tree_util.tree_flatten(in_vals)
                if t2 == tree:
                    if entry.scanned < 2:  # its own trace: scanned for constants once
                        entry.consts += _constants(fn.trace(*leaves))
                        entry.scanned = 2
                    outs = fn(*leaves)
                    flat = True
                else:
                    outs = entry.jitted(in_vals)
            else:
                outs = entry.jitted(in_vals)
        except Concrete as exc:  # (a dynamic int/float argument's value was needed)
            pos = self._respecialize(d, key, last, exc)
            if pos:
                placeholders = ()
                return self._as_constants(pos, args, kwargs)
            raise
        except (_BREAKS + (_UnreachableWrite, TypeError)) as exc:
            pos = self._respecialize(d, key, last, exc)
            if pos:
                placeholders = ()
                return self._as_constants(pos, args, kwargs)
            if isinstance(exc, _ViewArgWrite) and not TRACING[0]:  # (read through its storage, from now on)
                self._views = False
                self._plan = None
                del self.cache[next(k for k, e in self.cache.items() if e is entry)]
                self._last = last
                return self(*args, **kwargs)
            if not TRACING[0] and entry.spec is None and (not isinstance(exc, TypeError) or _tracer_type_error(exc)):
                return self._graph_break(entry, exc, args, kwargs)
            if not TRACING[0] and entry.spec is None and (_raised_by_user(exc) or _op_error(exc)):
                return self._eager(args, kwargs)  # (a genuine TypeError: raised again, after eager's side effects)
            raise
        except Exception as exc:
            pos = self._respecialize(d, key, last, exc)
            if pos:
                placeholders = ()
                return self._as_constants(pos, args, kwargs)
            # the function's own code raised while traced (``raise ValueError`` on a shape): the trace put back
            # what it had changed; run eagerly, what it did before the error stays done and the error comes from
            # there, as torch's; so for an op's own error (a matmul's shapes: eager raises it too). A refusal inside a
            # compiled region, an error of the library's machinery, stays as it is
            if not TRACING[0] and entry.spec is None and (_raised_by_user(exc) or _op_error(exc)):
                return self._eager(args, kwargs)
            raise
        finally:
            self._ctx = None
            for slot in placeholders:  # (the program never read them: the call's .grad fields are new tensors)
                slot.tensor._grad = None
        if entry.spec.checks and not passed:
            try:
                _check_failed(entry.spec, d.slots, outs, plain, {d.slots.index(s) for s in placeholders})
            except Exception:
                # (a primed first step that raised: the optimizer state it made goes again, unless the step ran
                # before the failed check: its state as the check found it was written back)
                k = int(np.argmax(np.asarray(outs[entry.spec.check_at][0])))
                for ms in made:
                    if d.slots.index(ms) not in entry.spec.check_moved[k]:
                        ms.drop()
                raise
        if entry.spec.needs_node:
            return self._write_back(entry, d, outs, in_vals, args, kwargs, saved)
        result = self._write_back(entry, d, outs)
        for i, v in versions.items():  # (a primed call's new zeroed .grad: its version as the plain program's)
            d.slots[i].tensor._grad._storage.version = v
        # the steady state: recorded where the call left the key it was called with (its program's fixed point)
        if entry.spec.moves is not None and not entry.spec.moves[0] and not entry.spec.firsts and \
                _same_key(self._key(d, args, kwargs)[0], key):
            self._steady = Steady(entry, key, ambient, d, flat, _arg_statics, _modes, _branches)
        return result

    def _primed(self, key, entry, d, in_vals, traced, ambient):
        """The first call of a training step makes the .grad fields (``backward``) and the optimizer state
        (``step``) that every later call then reads or drops: its signature is not theirs, and its program,
        compiled once, served one call before the second signature compiled again (W2: 0.96 + 0.99 s; pure JAX,
        whose state exists before its first call, and torch.compile compile once). Here the first call runs the
        later calls' program instead, once a second trace has shown that to be exact:

        - each optimizer state the call creates is made now, as ``step()`` would make it at its start (the same
          ``_init_state``, committed to the parameter's device);
        - each .grad field the call creates gets a placeholder of its shape, and the program must not read it
          (``zero_grad()`` dropped it before ``backward``): those placeholders are removed before the write-back,
          so the new .grad fields are new tensors, as the plain program makes them;
        - the second trace must produce what the first did: the same slots written, the same results, effects,
          deferred scheduler steps and zeroed fields.

        A call that reads an ``optimizer.state`` mapping (``if not opt.state:``, ``state_dict()``) is not
        primed: it would see the state before the step creates it. (Not detected: Python that branches on
        whether a .grad exists without reading or writing it; the first call sees the placeholder.) Only a call
        that steps an optimizer is primed (its .grad fields stay for the next call; with the step outside,
        ``zero_grad()`` there may drop them, and the primed signature would be a new one), or one that leaves
        every .grad it makes zeroed (the seed loop's ``W.grad.zero_()``: a known-zero placeholder, and the new
        fields' versions are the plain program's). Otherwise (a .grad
        the program accumulates into, a GradScaler step that may skip, a custom optimizer, a compiled forward
        whose backward runs outside) everything made here is undone and the call keeps its own program.
        ``stats['traces']`` counts the programs traced to be compiled: the first trace, or this one in its place
        (not counted itself). Returns (key, entry, in_vals, traced, placeholder slots, the OptSlots whose state
        it made, {slot index: version} of the zeroed .grad fields it made) for the primed call, or None."""
        spec = entry.spec
        if spec is None or spec.firsts or spec.needs_node or len(self.cache) >= self._limit():
            return None
        made = []
        for k, (i, dt, _) in enumerate(spec.outputs):
            s = d.slots[i]
            if in_vals[i] is not None:
                continue
            if isinstance(s, S.OptSlot) and not s.opt._custom() and not spec.read_state:
                made.append((s, None))
            elif isinstance(s, S.GradSlot) and dt is s.tensor.dtype and s.tensor._grad is None:
                made.append((s, traced.out_info[k]))
            else:
                return None
        for i, z, dt, _ in spec.zeros:  # (.grad fields the call makes and leaves zeroed: known zeros next call)
            s = d.slots[i]
            if in_vals[i] is None and isinstance(s, S.GradSlot) and s.tensor._grad is None and dt is s.tensor.dtype:
                made.append((s, z))
        if not made or not any(isinstance(d.slots[i], S.OptSlot) for i, _, _ in spec.outputs) and \
                not all(type(info) is KnownZero for _, info in made):
            return None  # (only a whole training step: a .grad that a step outside drops would be a new signature)
        grads = []
        try:
            for s, info in made:
                if info is None:
                    s._set(s.opt._init_state(s.opt._key_of(s.group), s.param._array))
                elif type(info) is KnownZero:
                    s.write_zero(info, s.tensor.dtype, 0)
                    grads.append(s)
                else:
                    jd = _dev.to_jax(s.tensor.device)
                    s.put(jax.device_put(np.zeros(info.shape, info.dtype), jd))
                    grads.append(s)
            key1 = (tuple([sl.sig() for sl in d.slots]),) + ambient
            entry1 = None if key1 in self.cache else _Entry()
            if entry1 is not None:
                entry1.jitted = _jit(self._pure(entry1, lambda: self._ctx, count=False))
                in_vals1 = [sl.get() for sl in d.slots]
                traced1 = entry1.jitted.trace(in_vals1)
                spec1 = entry1.spec
                gi = {d.slots.index(g) for g in grads if type(g.get()) is not KnownZero}
                if spec1 is not None and not spec1.firsts and not spec1.needs_node and \
                        gi <= _unused_slots(traced1, in_vals1) and _same_spec(spec, spec1):
                    del self.cache[key]
                    self.cache[key1] = entry1
                    return key1, entry1, in_vals1, traced1, tuple(grads), tuple(s for s, i in made if i is None), \
                        {i: bump for i, _, _, bump in spec.zeros if type(d.slots[i].get()) is KnownZero and
                         d.slots[i] in grads}
        except Exception:  # (the second trace failed where the first did not: the call keeps its own program)
            pass
        for s, info in made:  # undone: the call keeps its own program
            if info is None:
                s.drop()
            else:
                s.tensor._grad = None
        return None

    def _limit(self) -> int:
        return self.cache_size_limit if self.cache_size_limit is not None else config.cache_size_limit

    def _profiled_call(self, args, kwargs):
        from ..profiler import _range, _wait
        self._profiled = True
        try:
            with _range(f"Torch-Compiled Region: {self.__name__}"):
                r = self(*args, **kwargs)
                _wait(jax.tree_util.tree_leaves(r, is_leaf=lambda x: isinstance(x, Tensor)))
        finally:
            self._profiled = False
        return r

    def _steady_call(self, steady, d, args, kwargs, ins):
        """A call in the steady state (``steady.py``): the last call's program on the slots' values as it left
        them, with no key to build."""
        entry = steady.entry
        if steady.call is None:  # (its first steady call: the next ones as one function, where they can be)
            steady.call = False
            plan = self._plan
            if plan is not None and plan.d is steady.base and plan._check is not None:
                steady.fuse(plan, _FUSE_ENV)
        self.stats["cache_hits"] += 1
        COUNTERS["cache_hits"] += 1
        COUNTERS["steady_calls"] += 1
        self._last = (steady.key, d)
        self._ctx = (d, args, kwargs)
        try:
            # (the checks answered on the host first, from inputs the program may donate: True, the call need not
            # wait for the program's flags)
            passed = steady.host is not None and steady.host(ins)
            outs = entry.donating[0](*ins) if steady.flat else entry.jitted(ins)
        finally:
            self._ctx = None
        steady.held = None  # (the last call's snapshot, released while this program runs: below)
        result = None
        if steady.single is not None:  # (built while the program runs: nothing to undo if a check fails)
            result = Tensor._from_array(outs[entry.spec.n_slot_out], *steady.single)
            if entry.spec.freed is not None:  # (a training step's loss: its graph freed by the backward inside)
                result._requires_grad, result._grad_fn = True, entry.spec.freed
        if steady.undoable and not passed:  # (written back while the program runs; undone if a check failed)
            snap = steady.snapshot(d)
            ok = steady.write(d, outs)
            if _flagged(entry.spec, outs):
                steady.undo(snap)
                _check_failed(entry.spec, d.slots, outs)
            # the snapshot holds the last references to the arrays the call replaced (donated: their buffers are
            # XLA's already), the outputs the checks' (flags, values); freeing them costs 25 us (W2, ~40 arrays),
            # which here, after the flag read waited for the program, would add to the call's time: they are kept
            # until the next call's program runs
            steady.held = (snap, outs)
        else:
            if entry.spec.checks and not passed:
                _check_failed(entry.spec, d.slots, outs)
            ok = steady.write(d, outs)
        if result is None:
            result = self._results(entry, d, outs, entry.spec.moves[1])
        if ok:
            self._steady = steady
        return result

    def _host_passed(self, entry, in_vals) -> bool:
        """Whether ``entry``'s checks all pass on ``in_vals``, answered on the host (``hostcheck.py``; False where
        they cannot be: the program's flags are read after it)."""
        if False not in entry.host:
            ctx, self._ctx = self._ctx, None  # (built without the call's context: hostcheck.of)
            try:
                hostcheck.of(entry, False, in_vals)
            finally:
                self._ctx = ctx
        host = entry.host[False]
        return host is not None and bool(host(in_vals))

    def _donating(self, entry, d, in_vals, traced):
        """From the first call of a signature, once its trace has told what the program rewrites: the same
        program over flat leaves, with the buffers it rewrites (parameters, .grad fields, optimizer state,
        buffers) donated, so XLA updates them in place instead of allocating new ones. It is the only program
        compiled for the signature (no XLA compile of the plain one, which runs only where donation does not
        apply). Its body is the plain trace's jaxpr, replayed (W3: 0.17 s to run the function traced again, a
        fraction of that to replay what it recorded; a trace under an outer JAX transformation, whose constants
        are tracers, is traced again instead, not counted in ``stats['traces']``).

        A slot's buffers are donated when the program returns new values of the same shapes and dtypes for them
        (``out_info``: the plain trace's outputs); a state that changes layout (SGD's empty momentum placeholder
        becoming a buffer on the step momentum is switched on) is not, as JAX could not use it.

        A generator key the first trace's program never read (no random draw) is not an input: ``entry.skip``
        lists those slots, and the trace gets a stand-in that fails loudly if it is used."""
        entry.skip = tuple(i for i in sorted(entry.unused) if isinstance(d.slots[i], S.RngSlot))
        out_info = traced.out_info
        # per leaf of the plain program's inputs: whether its slot is left out here
        dropped = [i in entry.skip for i, v in enumerate(in_vals) for _ in jax.tree_util.tree_leaves(v)]
        in_vals = [None if i in entry.skip else v for i, v in enumerate(in_vals)]
        # (a .grad the call leaves None has no new buffer to take the donated one: JAX would warn)
        rewritten = {i for k, (i, dt, _) in enumerate(entry.spec.outputs)
                     if (dt is not None or not isinstance(d.slots[i], S.GradSlot))
                     and _layout(out_info[k]) == _layout(in_vals[i])}
        donate, pos = [], 0
        for i, (slot, v) in enumerate(zip(d.slots, in_vals)):
            n = len(jax.tree_util.tree_leaves(v))
            if i in rewritten and isinstance(slot, (S.StorageSlot, S.GradSlot, S.OptSlot)) and \
                    i not in entry.spec.check_kept:
                donate.extend(range(pos, pos + n))
            pos += n
        if not donate and not entry.skip:
            return False
        # (with nothing to donate but an unread generator key, the program over flat leaves still leaves the key
        # out: its dispatch handles fewer and plainer inputs than the plain program's list)
        _, tree = jax.tree_util.tree_flatten(in_vals)
        if traced._consts:
            pure = self._pure(entry, lambda: self._ctx, count=False)
            skip = entry.skip

            def flat(*leaves):
                vals = jax.tree_util.tree_unflatten(tree, list(leaves))
                for i in skip:
                    vals[i] = _UNUSED_KEY
                return pure(vals)
        else:
            body, out_tree = _gate.gated(traced.jaxpr), traced.out_tree
            entry.scanned = 2  # (its constants are the plain trace's, scanned already)

            def flat(*leaves):
                it = iter(leaves)
                return jax.tree_util.tree_unflatten(out_tree, body(*[_UNUSED_KEY if x else next(it)
                                                                      for x in dropped]))
        # keep_unused: a donated buffer the program never reads (a .grad that zero_grad() drops) must stay an
        # input, else JAX's in-order pairing of donated inputs with same-shaped outputs shifts by one and pairs
        # each optimizer moment with the wrong output, and XLA copies every aliased buffer twice
        return _jit(flat, donate_argnums=tuple(donate), keep_unused=True), tree

    def memory_analysis(self, *args, **kwargs) -> dict:
        """XLA's memory analysis of the program these arguments select, as it runs (compiling it if needed): the
        donating program where the call's buffers are donated (``_donating``: parameters, .grad fields and optimizer
        state updated in place, counted in ``alias_bytes``), the residual-saving forward of a compiled forward
        called with grad enabled, else the plain one. Argument, output, temporary and aliased bytes, and
        ``peak_bytes`` = argument + output + temp - alias. A call signature that graph-breaks runs eagerly: there
        is no program, and ``GraphBreak`` says why."""
        d = S.discover(self.fn, args, kwargs, views=self._views, dyn=self._dyn)
        key, _ = self._key(d, args, kwargs)
        entry = self.cache.get(key)
        made = entry is None
        if made:
            entry = self.cache[key] = _Entry()
            entry.jitted = _jit(self._pure(entry, lambda: self._ctx))
        in_vals = [s.get() for s in d.slots]
        self._ctx = (d, args, kwargs)
        try:
            traced = entry.jitted.trace(in_vals)
            if entry.eager:  # (runs eagerly for a reason its trace does not show again)
                raise self._no_program(None)
            spec = entry.spec
            if spec.needs_node and isinstance(entry.saving, tuple):
                lowered = entry.saving[0].lower(in_vals)
            elif spec.needs_node:
                lowered = traced.lower()
            else:
                # the donating program the call runs (made here as the first call makes it, on a scratch entry:
                # the cache's entry is left for its first call to set up)
                tmp = _Entry()
                tmp.jitted, tmp.spec = entry.jitted, spec
                tmp.unused = _unused_slots(traced, in_vals)
                donating = self._donating(tmp, d, in_vals, traced)
                if donating:
                    fn, tree = donating
                    vals = [None if i in tmp.skip else v for i, v in enumerate(in_vals)]
                    leaves, t2 = jax.tree_util.tree_flatten(vals)
                    lowered = fn.lower(*leaves) if t2 == tree else traced.lower()
                else:
                    lowered = traced.lower()
            compiled = lowered.compile()
        except (_BREAKS + (_UnreachableWrite,)) as exc:
            if made:
                self.cache.pop(key, None)
            raise self._no_program(exc) from exc
        finally:
            self._ctx = None
        ma = compiled.memory_analysis()
        out = {"argument_bytes": int(ma.argument_size_in_bytes), "output_bytes": int(ma.output_size_in_bytes),
               "temp_bytes": int(ma.temp_size_in_bytes), "alias_bytes": int(ma.alias_size_in_bytes),
               "generated_code_bytes": int(ma.generated_code_size_in_bytes)}
        out["peak_bytes"] = out["argument_bytes"] + out["output_bytes"] + out["temp_bytes"] - out["alias_bytes"]
        return out

    def _check_dynamic(self, entry, d, traced, in_vals, args, kwargs) -> None:
        """The first call of a program with dynamic int/float inputs: the call traced with other values of them
        as constants (``_probe_value``) must do what the program does at those values (both run on this call's
        slot values, nothing written back: the same slots written with the same values, the same results, a number
        it returns equal to the constant the other returns). The stand-in catches each use of the value that
        Python asks it for, but not a check of its type (``isinstance(i, int)`` is False for it; torch's tracer
        answers True): a function that took another path that way would have it baked into the program that every
        later value runs. Other values than this call's: ``x * n if isinstance(n, int) else x * 1.0`` agrees at
        n = 1. A difference, or a static trace that fails, raises ``Concrete``: the arguments are specialized
        again. (Two more programs compiled, once per function: the check's.)"""
        a2, k2, vin = list(args), dict(kwargs), list(in_vals)
        probes = _probe_values({s.pos: s.value for s in d.slots if type(s) is S.ScalarArgSlot}, entry.guards)
        for i, s in enumerate(d.slots):
            if type(s) is S.ScalarArgSlot:
                v = probes[s.pos]
                vin[i] = np.int64(v) if type(v) is int else np.float64(v)
                if type(s.pos) is int:
                    a2[s.pos] = v
                else:
                    k2[s.pos] = v
        a2 = tuple(a2)
        ds = S.discover(self.fn, a2, k2, views=self._views)
        probe = _Entry()
        s_in = [s.get() for s in ds.slots]
        try:
            closed, shape = jax.make_jaxpr(self._pure(probe, lambda: (ds, a2, k2), count=False),
                                           return_shape=True)(s_in)
            same = _agree(entry.spec, probe.spec, d, ds, _by_output(_run_whole(traced.jaxpr, vin), traced.out_info),
                          _by_output(_run_whole(closed, s_in), shape))
        except Exception as exc:  # noqa: BLE001  (the static trace would fail: no program to check against)
            raise Concrete(f"the function traced with constants failed ({type(exc).__name__})") from exc
        if not same:
            raise Concrete("the program with its int/float arguments as inputs does other than with them as "
                           "constants (a check of their type: isinstance(i, int))")

    def _respecialize(self, d, key, last, exc):
        """A trace with dynamic int/float arguments failed (their value was needed: ``_symbolic.Concrete``, which
        names the arguments it came from, or anything else a SymNumber met: all of them): those arguments are
        constants again, from now on, and the call is made again (its own program per value, as before they were
        dynamic). The positions, when that is to be done."""
        pos = {s.pos for s in d.slots if type(s) is S.ScalarArgSlot}
        if not pos or TRACING[0]:
            return False
        if isinstance(exc, Concrete) and exc.src and exc.src <= pos:  # (only the arguments it came from)
            pos = set(exc.src)
        log.debug("functorch_lite.compile: %s: specializing %s again (%s)", self.__name__, sorted(map(str, pos)), exc)
        self._pinned |= pos
        self._dyn = self._dyn - pos
        self.cache.pop(key, None)
        self._last = last
        self.stats["calls"] -= 1
        COUNTERS["calls"] -= 1
        return pos

    def _as_constants(self, pos, args, kwargs):
        """The call made again with the arguments ``pos`` constants (``_respecialize``), after its trace with them
        dynamic failed. Should it raise as well, the exception is the call's own (a value check that fails for this
        value, taken as a branch on the dynamic value: ``masked_fill`` of one that overflows, ``math.sqrt`` of a
        negative one): the arguments stay dynamic for the next calls."""
        try:
            return self(*args, **kwargs)
        except Exception:
            self._pinned -= pos
            self._dyn = self._dyn | pos
            raise

    def _no_program(self, exc) -> GraphBreak:
        """``memory_analysis`` of a call signature that graph-breaks: the public error, naming the cause."""
        why = "" if exc is None else f": {_cause(exc)}"
        where = "" if exc is None else _user_line(exc)
        at = "" if where in ("", "<unknown line>") else f", at {where}"
        return GraphBreak(f"functorch_lite.compile: memory_analysis: {self.__name__} graph-breaks{why}{at}; that "
                          "call signature runs eagerly, so there is no single XLA program to analyse")

    def _stale_constant(self, key) -> str:
        """A cached program read a tensor as a constant and that tensor has changed: drop it (it is traced again)."""
        del self.cache[key]
        why = ("a tensor it reads changed, one its discovery does not reach (not an argument, closure cell or "
               "named global, or deeper in one than the walk goes), so its value was a constant of the program")
        if not self._warned_const:
            self._warned_const = True
            warnings.warn(f"functorch_lite.compile: recompiling {self.__name__}: {why}. Pass the tensor as an "
                          "argument (or reach it from the function) to avoid recompiling.", stacklevel=user_stacklevel())
        return why

    def _no_compile(self, key, names, why, args, kwargs):
        """A call that needs a new program under ``set_stance("eager_on_recompile")`` (it runs eagerly) or
        ``"fail_on_recompile"`` (torch's error, naming the function and, after a first program, the guard
        that failed)."""
        if STANCE[0].stance == "eager_on_recompile":
            return self._eager(args, kwargs)
        code = self._code()
        msg = ("Detected recompile when torch.compile stance is 'fail_on_recompile'. "
               f"filename: '{getattr(code, 'co_filename', '?')}', function name: "
               f"'{getattr(code, 'co_name', self.__name__)}', line number: {getattr(code, 'co_firstlineno', 0)}")
        if self.cache:
            msg += ("\n    triggered by the following guard failure(s):\n    - "
                    + (why or self._why(key, names)))
        raise RuntimeError(msg)

    def _code(self):
        """The code object torch's recompile messages name (``compile(model)``: its forward's)."""
        fn = self.fn
        if isinstance(getattr(fn, "__self__", None), _module.Module):  # compile(model): its forward
            fn = fn.__self__.forward
        return getattr(getattr(fn, "__func__", fn), "__code__", None)

    def _site(self) -> str:
        """``name in file:line`` of the compiled function's code, as torch's recompile messages write it."""
        code = self._code()
        if code is None:
            return self.__name__
        return f"{code.co_name} in {code.co_filename}:{code.co_firstlineno}"

    def _eager(self, args, kwargs):
        self.stats["eager_calls"] += 1
        COUNTERS["eager_calls"] += 1
        return self.fn(*args, **kwargs)

    def _verify_discovery(self, d, args, kwargs) -> None:
        """``config.verify_discovery``: the reused discovery ``d`` is what a fresh walk finds."""
        if not S.same_discovery(d, S.discover(self.fn, args, kwargs, views=self._views, dyn=self._dyn)):
            raise AssertionError(f"functorch_lite.compile: {self.__name__}: the reused discovery differs from a "
                                 "fresh walk (a change the discovery checks missed)")

    def _global_hooks(self, args, kwargs):
        """Global module hooks are registered (``register_module_forward_hook`` / ``_forward_pre_hook`` /
        ``_full_backward_hook``) and the function calls modules: the hooks' Python runs around every module call,
        which a program would run once, while tracing. The call runs eagerly while they are registered (as a
        compiled module's call does), with one warning; under fullgraph, an error."""
        return self._eager_while("global module hooks are registered (nn.modules.module.register_module_forward_hook "
                                 "and the like run Python around every module call)", args, kwargs)

    def _eager_while(self, cause, args, kwargs):
        """A call that cannot be one program while ``cause`` holds: run eagerly, with one warning per cause; under
        fullgraph, an error."""
        GRAPH_BREAKS[cause] += 1
        if self.fullgraph:
            raise GraphBreak(f"functorch_lite.compile(fullgraph=True): {self.__name__} cannot be one program: {cause}")
        if cause not in self._warned_hooks:
            self._warned_hooks.add(cause)
            warnings.warn(f"functorch_lite.compile: graph break in {self.__name__}: {cause}. Its calls run eagerly "
                          "while they are registered.", stacklevel=user_stacklevel())
        return self._eager(args, kwargs)

    def _graph_break(self, entry, exc, args, kwargs):
        COUNTERS["graph_breaks"] += 1
        cause, where = _cause(exc), _user_line(exc)
        at = "" if where == "<unknown line>" else f", at {where}"
        GRAPH_BREAKS[cause] += 1
        if config.log_graph_breaks:
            log.warning("functorch_lite.compile: graph break in %s: %s%s", self.__name__, cause, at)
        if self.fullgraph:
            del self.cache[next(k for k, e in self.cache.items() if e is entry)]
            if isinstance(exc, UserBreak):  # (torch's message for its own call)
                fs = _user_frame(exc)
                site = "" if fs is None else (f"\n\nfrom user code:\n   File \"{fs.filename}\", line {fs.lineno}, "
                                              f"in {fs.name}\n    {fs.line}\n")
                raise GraphBreak(exc.torch_msg + site) from exc
            raise GraphBreak(f"functorch_lite.compile(fullgraph=True): {self.__name__} cannot be one program: "
                             f"{cause}{at}") from exc
        entry.eager = True
        if (cause, at) not in self._warned_hooks:  # (once per cause and line, as torch logs a graph break)
            self._warned_hooks.add((cause, at))
            warnings.warn(f"functorch_lite.compile: graph break in {self.__name__}: {cause}{at}. This call "
                          "signature runs eagerly (correct results, no speed-up).", stacklevel=user_stacklevel())
        return self._eager(args, kwargs)

    # ---- guards ---------------------------------------------------------------------------------------------
    def _key(self, d, args, kwargs):
        """The guard key (values) and, built lazily on a miss, the name of each component."""
        return (tuple([s.sig() for s in d.slots]),) + self._ambient(d, args, kwargs), d

    @staticmethod
    def _ambient(d, args, kwargs) -> tuple:
        """The guard key's components beside the slots' sigs (the key is ``(slot sigs,) + ambient``; ``_flat``
        names each): module training flags, guarded statics, the arguments' static parts, the modes, the frozen
        guards. (The steady state compares these in place: ``steady.Steady._source``.)"""
        return (tuple([m.training for _, m in d.modules]), tuple([v for _, v in d.statics])) + \
            _arg_statics(d, args, kwargs) + _modes() + (d.frozen, _branches(d, args, kwargs))

    @staticmethod
    def _flat(key, d):
        """(names, values) of a key's components, for the recompile message."""
        names = [s.name for s in d.slots] + [f"{n}.training" for n, _ in d.modules] + [n for n, _ in d.statics]
        values = list(key[0]) + list(key[1]) + list(key[2])
        names += [f"arg {i}" for i in range(len(key[3]))] + [f"argument {k!r}" for k, _ in key[4]]
        values += list(key[3]) + [v for _, v in key[4]]
        names += ["grad mode", "inference mode", "default dtype", "autocast", "float32 matmul precision",
                  "current CUDA device", "attention backends (sdpa_kernel)",
                  "global switches (deterministic algorithms, threads, torch.backends flags, anomaly mode)"]
        end = 5 + _N_MODES
        values += list(key[5:end])
        names += [n for n, _ in d.guards]
        values += list(key[end].items)
        names += [f"branch {k} on a dynamic argument" for k in range(len(key[end + 1]))]
        values += list(key[end + 1])
        return names, values

    def _why(self, key, d) -> str:
        """What makes ``key`` a new program: its first difference from the cached program it differs least from
        (of the same layout: float32 then float64 then a changed closure value names that value, not the dtype the
        last call had), else from the last call's."""
        if self._last is None:
            return "first call"
        names, values = self._flat(key, d)
        best = None
        for k in self.cache:
            try:  # (components of another structure -- a pytree and None -- do not compare: not this layout)
                if k is key or len(k) != len(key) or tuple(map(len, k[:5])) != tuple(map(len, key[:5])):
                    continue
                old_names, old_values = self._flat(k, d)
                if len(old_values) != len(values):
                    continue
                diff = [(n, a, b) for n, a, b in zip(names, old_values, values) if not _equal(a, b)]
            except (IndexError, AttributeError, TypeError):
                continue
            if diff and (best is None or len(diff) < len(best)):
                best = diff
        if best is not None:
            n, a, b = best[0]
            return f"{n} changed: {_fmt(a)} -> {_fmt(b)}"
        old_names, old_values = self._flat(*self._last)
        if names != old_names:
            added = [n for n in names if n not in old_names] or [n for n in old_names if n not in names]
            return f"what it reaches changed ({', '.join(added[:3])})"
        for n, a, b in zip(names, old_values, values):
            if not _equal(a, b):
                return f"{n} changed: {_fmt(a)} -> {_fmt(b)}"
        return "a new signature"

    # ---- the traced function -----------------------------------------------------------------------------------
    def _pure(self, entry, ctx, results_only=False, count=True, select=None):
        """The traced function over the slot values. ``results_only``: the backward of a compiled forward
        instead (``pure(in_vals, cts, wants)``: the function runs again recording the facade's autograd, and
        ``autograd.grad`` of the node's outputs, chosen by ``select(result, effects, deferred)``, gives the gradients of
        the slots ``wants``), so ``no_grad`` regions and ``detach()`` inside stop gradients as they do eagerly."""
        fn = self.fn

        def pure(in_vals, cts=None, wants=()):
            d, args, kwargs, *amp = ctx()  # (a node's backward: and the autocast state its forward ran under)
            slots = d.slots
            if not results_only and count:
                self.stats["traces"] += 1
                COUNTERS["traces"] += 1
            wlog: dict = {}
            prev_log = _storage.WRITE_LOG[0]
            _storage.WRITE_LOG[0] = wlog
            slog: dict = {}
            prev_slog = _storage.SET_LOG[0]
            _storage.SET_LOG[0] = slog
            first_uid = next(_storage._ids)  # storages from here on are the trace's own
            prev_firsts = _optim.FIRST_STEPS[0]
            _optim.FIRST_STEPS[0] = firsts = []
            TRACING[0] += 1
            prev_guard = _sym.GUARD[0]
            subs = {s.pos: s.value for s in slots if type(s) is S.ScalarArgSlot}
            if subs and len(self._gexprs) < _MAX_GUARDS:
                # (a branch on them: taken as this call takes it, a guard of the program; a node's backward runs
                # the function again on the same values: the same branches)
                log = []
                if not results_only:
                    entry.guards = log
                _sym.GUARD[0] = (subs, log)
            else:
                _sym.GUARD[0] = None
            math_off = _sym.math_on() if subs else None
            prev_checks = _deferred.begin(lambda: _check_state(slots)) \
                if not results_only and _index_asserts() else _deferred.pause()
            recorder = Recorder().__enter__()  # (print, warnings.warn, logging: replayed on every call)
            origs = [s.snap() for s in slots]  # the Python objects as they are now: put back on the way out
            deferred: list = []
            patched = []
            stepped: list = []  # (optimizer, its _opt_called before): a step after a deferred scheduler step
            stale: list = []  # (group, its lr): a scheduler step was deferred: the lr read now would be stale
            for i, sch in enumerate(d.schedulers):
                def record(*a, _i=i, _o=sch.optimizer, **k):  # (step, sched, step, sched: the second step)
                    if getattr(_o, "_opt_called", False) and any(o is _o for o, _ in stepped):
                        raise _UnreachableWrite(_STEP_AFTER_SCHED)
                    deferred.append((_i, a, k))
                    stepped.append((_o, _o.__dict__.get("_opt_called", _UNSET)))
                    _o._opt_called = False  # (the LR scheduler's wrapper of optimizer.step sets it)
                    for g in _o.param_groups:  # (what reads it raises: an eager call reads the stepped lr)
                        if "lr" in g and type(g["lr"]) is not _StaleLR:
                            stale.append((g, g["lr"]))
                            g["lr"] = _StaleLR()

                def last_lr(*a, **k):
                    raise _UnreachableWrite("reading an LR scheduler's get_last_lr() inside a compiled function "
                                            "(its step() runs after the program: the value would be a stale "
                                            "constant)")
                sch.__dict__["step"] = record
                sch.__dict__["get_last_lr"] = last_lr
                patched.append(sch)
            backward_before = _engine.BACKWARD_CALLS[0]
            bindings = _bindings(fn)  # the closure cells / globals fn rebinds are put back, then replayed
            prev_attrs, prev_tables = _module.SETATTR_LOG[0], _module.REGISTRY_LOG[0]
            _module.SETATTR_LOG[0], _module.REGISTRY_LOG[0] = attrs, tables = {}, {}
            boxes = None
            snaps = ()
            scaled = [(sc, sc.__dict__.get("_per_optimizer_states")) for sc in d.scalers]
            scaled = [(sc, st, {k: dict(v) for k, v in st.items()}) for sc, st in scaled if st is not None]
            try:
                if d.bw_hooks and _gm.is_grad_enabled():
                    raise _UnreachableWrite(f"{d.bw_hooks} has a full backward hook (register_full_backward_hook "
                                            "runs Python on the gradients)")
                for s, v in zip(slots, in_vals):
                    s.put(v)
                put_grads = [s.tensor._grad if type(s) is S.GradSlot else None for s in slots]
                if d.view_pos:
                    args, kwargs = _with_subs(slots, args, kwargs)
                boxes = [(n, c, _contents(c)) for n, c in d.containers]  # (after the puts: a group holds tracers)
                snaps = _snap_objects(d.objects)
                if results_only:
                    inputs = [slots[i].tensor for i in wants]
                    # an input with a graph behind it (the previous segment's output) is a leaf of this run:
                    # the facade's backward must stop there, not walk into the caller's graph
                    cut = [(t, t.grad_fn) for t in inputs if t.grad_fn is not None]
                    # and the views of a cut input that the function reads (``f(h, h[1:4])``, a closure's ``h``
                    # beside a view argument) take their gradient to it: their nodes led into the caller's graph
                    views = [(a, a._grad_fn, a._gver, a._requires_grad, a._out_nr)
                             for i in wants if slots[i].tensor.grad_fn is not None for a in slots[i].aliases]
                    try:
                        for t, _ in cut:
                            t.grad_fn = None
                        for a, *_ in views:
                            a._grad_fn, a._gver, a._requires_grad, a._out_nr = \
                                _as_strided_node(a, (_edge_of(a._base),)), a._storage.version, True, 0
                        with _gm.enable_grad(), _amp.state_as(amp[0]):
                            result = _structured(fn(*args, **kwargs), _known(d, args, kwargs), first_uid)
                        _object_writes(snaps, attrs)
                        try:
                            changed = _container_effects(boxes)
                        except _UnreachableWrite:  # (a checkpoint's recomputation: its forward ran eagerly, what
                            changed = []           # it changed stays changed; ``counter[0] += 1`` is not replayed)
                        effects = _effects(bindings, attrs) + changed + _table_effects(tables)
                        return _tape_grads(select(result, effects, deferred), cts, inputs)
                    finally:
                        for t, g in cut:
                            t.grad_fn = g
                        for a, *fields in views:
                            a._grad_fn, a._gver, a._requires_grad, a._out_nr = fields
                reads = _optim.READS[0]
                # the tensors the function reached that have a graph behind them (a non-leaf input): an in-place
                # write to one with grad enabled gives it a new history through the function, which the node
                # (whose outputs are the results) does not carry: such a call runs eagerly, as torch's does
                # (their own nodes back on the way out, whatever happens: the trace's would leak its tracers)
                graphed = [(s.tensor, s.tensor._grad_fn, s.tensor._out_nr, getattr(s.tensor, "_gver", None),
                            s.tensor._requires_grad) for s in slots if type(s) is S.StorageSlot]
                # (and a host read the function's own try/except caught: the trace took its fallback, eager would not)
                raised, prev_raised = [], _RAISED[0]
                _RAISED[0] = raised
                pystate = _pystate(d)
                try:
                    result = fn(*args, **kwargs)
                    rewritten = [(t, rg) for t, g, _, _, rg in graphed if t._grad_fn is not g]
                finally:
                    _RAISED[0] = prev_raised
                    advanced = _pystate_undo(pystate)
                    for t, g, n, v, rg in graphed:
                        if t._grad_fn is not g:
                            t._grad_fn, t._out_nr, t._requires_grad = g, n, rg
                            if v is not None:
                                t._gver = v
                if raised:
                    raise raised[0]
                if advanced:
                    raise _UnreachableWrite(f"{advanced} (Python state: the program would replay one draw)")
                if rewritten:
                    raise _UnreachableWrite(
                        "an in-place write, with grad enabled, to a tensor that has a graph behind it (a non-leaf "
                        "input that requires grad)" if rewritten[0][1] else
                        "an in-place write of a value that requires grad into a tensor that does not (its new "
                        "history)")
                reads = _optim.READS[0] != reads
                # (dataclasses and user objects holding new tensors: pytree nodes, rebuilt after each call)
                result = _structured(result, _known(d, args, kwargs), first_uid)
                if stale:  # (returned as it is: read after the call; the groups' own lr back for what follows)
                    if any(type(x) is _StaleLR for x in jax.tree_util.tree_leaves(
                            result, is_leaf=lambda x: type(x) is _StaleLR)):
                        _StaleLR().__float__()
                    for g, lr in reversed(stale):
                        g["lr"] = lr
                    stale.clear()
                if d.view_pos:
                    for s in slots:
                        if type(s) is S.ArgViewSlot and s.changed():
                            raise _ViewArgWrite(f"writing to {s.name}, a view of another tensor")
                changed = _container_effects(boxes)  # (appends, dict key sets: replayed after each call)
                _object_writes(snaps, attrs)
                effects = _effects(bindings, attrs) + changed + _table_effects(tables)
                for sc, _, _ in scaled:  # unscale_/step inside, update() after the call: not replayed
                    st = sc.__dict__.get("_per_optimizer_states") or {}
                    if any(isinstance(t._array, jax.core.Tracer) for v in st.values()
                           for t in v.get("found_inf_per_device", {}).values()):
                        raise _UnreachableWrite("GradScaler.step() inside a compiled function whose update() runs "
                                                "outside it (the inf checks it reads are not replayed: keep step() "
                                                "and update() on the same side)")
                if any([i in d.sched_reads for i, _, _ in deferred]):
                    raise _UnreachableWrite("reading an LR scheduler's state (last_epoch...) in a function that "
                                            "steps it (its step() runs after the program: the value read would "
                                            "be the one before)")
                if any([o._opt_called for o, _ in stepped]):
                    raise _UnreachableWrite(_STEP_AFTER_SCHED)
                _check_sets(d, slog, first_uid)
                out_vals, spec = self._collect(d, in_vals, result, deferred, wlog, effects, put_grads)
                if _deferred.PENDING[0] is not None and _deferred.PENDING[0][1]:
                    _with_checks(spec, slots, in_vals, out_vals, _deferred.PENDING[0][1], wlog, put_grads)
                for o, p, skip in firsts:  # a GradScaler step that creates state: its skip flag is an output
                    spec.firsts.append(next(i for i, s in enumerate(slots)
                                            if isinstance(s, S.OptSlot) and s.opt is o and s.param is p))
                    out_vals.append(skip)
                # a backward() inside (a training step): the results whose graph it freed (the loss) get no node,
                # and a step returning only those keeps its donating, steady program; a result whose graph is
                # intact (a GAN's D step returning G's output) needs the node, as torch's keeps its graph
                spec.needs_node = any(m[0] == "t" and m[3] for m in spec.result_meta) and (
                    _engine.BACKWARD_CALLS[0] == backward_before or _any_intact(result))
                # the results whose graph that backward freed: torch's are tensors that require grad, with a
                # grad_fn whose second backward raises "Trying to backward through the graph a second time"
                spec.freed = None if spec.needs_node else _freed_node(spec.result_meta)
                spec.read_state = reads
                spec.replays = tuple(recorder.items)
                entry.spec = spec
                return out_vals
            finally:
                _module.SETATTR_LOG[0], _module.REGISTRY_LOG[0] = prev_attrs, prev_tables
                try:  # (what the trace changed is put back; the switches below are reset whatever raises here)
                    _object_writes(snaps, attrs)  # (a graph break part way: what ran so far is put back too)
                    _restore(bindings, attrs)
                    _restore_tables(tables)
                    for _, c, before in boxes or ():
                        if not _identical_contents(_contents(c), before):
                            _set_contents(c, before)
                    for sc, st, before in scaled:  # (its per-optimizer dict: what the trace put there goes)
                        st.clear()
                        st.update(before)
                    for sch in patched:
                        sch.__dict__.pop("step", None)
                        sch.__dict__.pop("get_last_lr", None)
                    for g, lr in reversed(stale):
                        g["lr"] = lr
                    for o, v in reversed(stepped):
                        if v is _UNSET:
                            o.__dict__.pop("_opt_called", None)
                        else:
                            o._opt_called = v
                    _storage.undo_sets(slog)  # (before the slots: a slot's logged "old" value is its traced one)
                    for st, arr, ver in wlog.values():  # writes first: a slot's logged "old" value is a tracer
                        st.version = ver
                        if not isinstance(arr, jax.core.Tracer):
                            st.array = arr
                    for s, o in zip(slots, origs):
                        s.restore(o)
                finally:
                    _storage.WRITE_LOG[0] = prev_log
                    _storage.SET_LOG[0] = prev_slog
                    _optim.FIRST_STEPS[0] = prev_firsts
                    recorder.__exit__()
                    _deferred.end(prev_checks)
                    _sym.GUARD[0] = prev_guard
                    if math_off is not None:
                        math_off()
                    TRACING[0] -= 1
        return pure

    def _collect(self, d, in_vals, result, deferred, wlog, effects=(), put_grads=None):
        spec = _Spec()
        spec.needs_node, spec.node_op, spec.node_entry, spec.node_ctx = False, None, None, None
        spec.replays = ()  # the user's print / warnings.warn / logging calls the trace recorded (replay.py)
        spec.read_state = False  # (a user-level read of an optimizer.state mapping during the trace: pure sets it)
        spec.firsts = []  # OptSlots whose state a skipped GradScaler step must not leave (their flags: last outputs)
        spec.checks, spec.check_at = (), None  # the data-dependent checks' exceptions, their output (_with_checks)
        spec.check_grads, spec.check_gated, spec.check_moved, spec.check_kept = (), frozenset(), (), frozenset()
        spec.check_bumps = ()
        spec.out_sigs = {}
        spec.zeros = []  # (slot index, KnownZero, dtype, version bump): .grad fields the function left zeroed
        # the GradSlots whose .grad the function replaced by a new tensor (zero_grad() then backward()): written
        # back as a new tensor, as torch's backward makes one (a .grad the caller kept keeps its values)
        spec.fresh = frozenset()
        spec.moves = None  # (slot, result) placements the program gets wrong (_misplaced)
        outs, outputs = [], []  # outputs: (slot index, .grad dtype, version bump: the in-place writes made)
        slot_storages = set()
        derived = set()
        for i, s in enumerate(d.slots):
            if isinstance(s, S.StorageSlot):
                slot_storages.add(id(s.storage))
            elif isinstance(s, S.OptSlot):
                for t in (dict.get(s.opt.state, s.param) or {}).values():
                    derived.add(id(t._storage.root()))
            if isinstance(s, S.HyperSlot):  # a value the function assigned (``group['lr'] *= 0.5``) is kept
                now = {k: jax.tree_util.tree_map(_optim.value_of, s.group[k]) for k in s.keys}  # (traced: 0-d tensors)
                changed = {k: v for k, v in now.items() if not _same(v, in_vals[i][k])}
                if changed:
                    outputs.append((i, None, 0))
                    outs.append(jax.tree_util.tree_map(jax.numpy.asarray, changed))
                continue
            if type(s) is S.ArgViewSlot or type(s) is S.ScalarArgSlot:  # (never written: ``changed`` is checked
                continue                                                  # after the function)
            v = s.get()
            if isinstance(s, S.GradSlot):
                g = s.tensor._grad
                if v is in_vals[i] and (type(v) is not KnownZero or g._storage.version == 0):
                    continue  # (known zeros in and out: unchanged unless written, e.g. zero_() again)
                # (the traced .grad tensors are new, version 0: their version is the writes the function made)
                if type(v) is KnownZero:  # zeroed by the function: no output, written as zeros after the call
                    spec.zeros.append((i, v, g.dtype, g._storage.version))
                    continue
                outputs.append((i, None, 0) if g is None else (i, g.dtype, g._storage.version))
                outs.append(v)
                if g is not None and put_grads is not None and g is not put_grads[i]:
                    spec.fresh |= {i}
                continue
            if _same(v, in_vals[i]):
                continue
            w = wlog.get(id(s.storage)) if isinstance(s, S.StorageSlot) else None
            outputs.append((i, None, 1 if w is None else max(1, s.storage.version - w[2])))  # (its writes)
            outs.append(v)
        for rid, (st, arr, _) in wlog.items():
            if rid in slot_storages or rid in derived or isinstance(arr, jax.core.Tracer):
                continue
            raise _UnreachableWrite("an in-place write to a tensor the compiled function cannot see (reach it "
                                    "through an argument, the closure, or a global named in the function)")
        spec.n_slot_out = len(outs)
        spec.outputs = outputs
        spec.effects = [e[:3] + (_locate(d, e[1]),) for e in effects]
        leaves, tree = jax.tree_util.tree_flatten((result, [(a, k) for _, a, k in deferred], [e[3] for e in effects]),
                                                  is_leaf=lambda x: isinstance(x, Tensor))
        meta, res = [], []
        # a result that IS a tensor the function reached (``return W``, ``return x``) comes back as that object,
        # and one that views its storage (``return x[0]``, ``x.t()``, ``x.detach()``) as a view of it, as
        # torch.compile returns them: a write to the result is a write to W / x
        slot_of = {id(s.tensor): i for i, s in enumerate(d.slots) if isinstance(s, S.StorageSlot)}
        argview_of = {}
        if d.view_pos:  # (``return x``: the argument itself; ``x[1:]``: a view of the argument)
            slot_of.update((id(s._sub), i) for i, s in enumerate(d.slots) if type(s) is S.ArgViewSlot)
            argview_of = {id(s._st): i for i, s in enumerate(d.slots) if type(s) is S.ArgViewSlot}
        # ``return p.grad``: the .grad object itself after the write-back (torch returns the very object)
        grad_of = {id(s.tensor._grad): i for i, s in enumerate(d.slots)
                   if isinstance(s, S.GradSlot) and s.tensor._grad is not None}
        storage_of = {id(s.storage): i for i, s in enumerate(d.slots) if isinstance(s, S.StorageSlot)}
        # ``return opt.state[p]['momentum_buffer']``: that state tensor itself after the write-back (torch's object)
        ostate_of = {id(t): (i, name) for i, s in enumerate(d.slots) if isinstance(s, S.OptSlot)
                     for name, t in (dict.get(s.opt.state, s.param) or {}).items()}
        # (the storages of those .grad and state tensors: a result over one is a view of it)
        grad_st = {id(s.tensor._grad._storage): (i, s.tensor._grad) for i, s in enumerate(d.slots)
                   if isinstance(s, S.GradSlot) and s.tensor._grad is not None}
        ostate_st = {id(t._storage): (i, name, t) for i, s in enumerate(d.slots) if isinstance(s, S.OptSlot)
                     for name, t in (dict.get(s.opt.state, s.param) or {}).items()}
        written = {i for i, _, _ in outputs}
        first = {}
        for leaf in leaves:
            if isinstance(leaf, Tensor):
                k = first.setdefault(id(leaf), len(meta))
                if k != len(meta):  # (``return y, y``: the same object twice, as torch returns it)
                    meta.append(("dup", k))
                    continue
                i = slot_of.get(id(leaf))
                if i is not None:
                    meta.append(("slot", i))
                    continue
                if leaf._storage.device.type == "meta":  # (no values: not a program output; rebuilt each call)
                    if any(leaf is t for t in d.metas):
                        meta.append(("const", leaf))  # (``return x``: the meta tensor it was given, itself)
                        continue
                    if leaf.requires_grad:
                        raise _UnreachableWrite("returning a new meta tensor that requires grad (its grad_fn has "
                                                "no program to run)")
                    meta.append(("meta", leaf._shape, leaf.stride(), leaf.dtype))
                    continue
                if leaf._requires_grad and leaf.grad_fn is None:
                    raise _UnreachableWrite("a new leaf tensor that requires grad made inside (x.detach()."
                                            "requires_grad_(), ones(..., requires_grad=True), a new Parameter): its "
                                            "gradient is accumulated by the backward outside")
                root = leaf._storage.root()
                i = storage_of.get(id(root))
                if i is not None and not leaf.requires_grad:
                    # (its base: the slot's tensor where the traced view's is; none for ``x.detach()`` or a view of it,
                    # whose base needs no gradient: a view of x would take x's graph after an in-place write to x;
                    # ``p.data``: over the same values with a counter of its own)
                    meta.append(("view", i, leaf._shape, leaf.dtype, leaf._chain, leaf._strides, leaf._offset,
                                 leaf._base is d.slots[i].tensor, leaf._storage is not root))
                    continue
                if i is not None and leaf._storage is root and d.slots[i].tensor.requires_grad and \
                        (i not in written or d.slots[i].tensor.grad_fn is None):
                    # a view of an input that requires grad (``return h[1:]``), the function writing none of it, or
                    # of a leaf it rewrote under no_grad (a parameter an optimizer step updates: ``return
                    # lin.weight[0]``): the same view steps taken of the input itself after the write-back,
                    # recorded (SliceBackward0 on its history), as torch.compile regenerates an output that aliases
                    # an input -- a view that shows the parameter's later updates, as eager's
                    steps = _steps_from(d.slots[i].tensor, leaf)
                    if steps is not None:
                        meta.append(("gview", i, steps))
                        continue
                if id(leaf) in ostate_of:
                    meta.append(("ostate",) + ostate_of[id(leaf)])
                    continue
                i = grad_of.get(id(leaf))
                if i is not None and not leaf.requires_grad:
                    meta.append(("grad", i))
                    continue
                # ``return p.grad[0]`` / ``opt.state[p]['exp_avg'][1:3]``: the same view steps taken of that .grad /
                # state tensor after the write-back, so the view shows the later steps' writes, as eager's
                held = None if leaf.requires_grad else grad_st.get(id(leaf._storage)) or ostate_st.get(
                    id(leaf._storage))
                if held is not None:
                    steps = _steps_from(held[-1], leaf)
                    if steps is not None:
                        meta.append(("hview",) + held[:-1] + (steps,))
                        continue
                i = argview_of.get(id(leaf._storage)) if argview_of else None
                if i is not None and not leaf.requires_grad and \
                        _view_of_arg(d.slots[i].tensor, leaf._chain, leaf._shape, leaf.dtype) is not None:
                    # a view of a view argument: the same view steps taken of the argument itself (its values are
                    # the argument's, never written: ``ArgViewSlot.changed``), so writes show through both ways
                    meta.append(("aview", i, leaf._chain, leaf._shape, leaf.dtype))
                    continue
                # (attributes the function set on it, ``y.note = 5``: set on each call's result, as torch's)
                attrs = tuple((k, v) for k, v in leaf.__dict__.items() if not k.startswith("_")) \
                    if leaf.__dict__ else ()
                bad = next((k for k, v in attrs if not _plain_attr(v)), None)
                if bad is not None:
                    raise _UnreachableWrite(f"an attribute set on a result tensor (.{bad}) holding a "
                                            f"{type(dict(attrs)[bad]).__name__} (a compiled call sets Python "
                                            "scalars, strings and tuples of them)")
                # (a new tensor with a layout of its own, ``x.t().clone()``: its storage's values and its strides,
                # as torch's; one that requires grad comes back contiguous, its node's outputs being values)
                layout = (leaf._shape, leaf._chain, leaf._strides, leaf._offset) \
                    if leaf._chain is not None and leaf._base is None and not leaf.requires_grad else None
                meta.append(("t", leaf.dtype, leaf.device, leaf.requires_grad, attrs, layout))
                res.append(leaf)
            elif isinstance(leaf, jax.core.Tracer):  # a traced Python number (``return group['lr']``)
                meta.append(("num",))
                res.append(leaf)
            elif type(leaf) is SymNumber:  # (``return step + 1`` of a dynamic int: a Python int of each call's)
                meta.append(("num", leaf._t))
                res.append(leaf)
            else:
                meta.append(("const", leaf))
        # a result that views another one (``return y, y[1:]``): the same view steps taken of that result after the
        # call, so writes show through both ways and its grad_fn is the view's (SliceBackward0 on y's), as torch's
        # ``return y, y.detach()`` / ``y.data`` / ``y.detach()[0]``: the same, taken of y's result (detached first,
        # or its ``.data``: values shared, a version counter of its own), so writes show through both ways as eager's
        bases = {}
        for k, leaf in enumerate(leaves):
            if meta[k][0] == "t" and leaf._chain is None and leaf._storage.root() is leaf._storage:
                bases.setdefault(id(leaf._storage), k)
        for k, leaf in enumerate(leaves):
            root = leaf._storage.root() if meta[k][0] == "t" else None
            kb = None if root is None else bases.get(id(root))
            if kb is None or kb == k:
                continue
            base, data = leaves[kb], leaf._storage is not root
            cut = data or (base.requires_grad and not leaf.requires_grad)
            probe = Tensor._header(root, leaf._shape, leaf.dtype, leaf._chain, leaf._strides, leaf._offset, None) \
                if data else leaf
            steps = _steps_from(base, probe)
            if steps is not None:
                meta[k] = ("rview", kb, steps, "data" if data else "detach" if cut else None)
        outs += [(leaf._storage.array if m[0] == "t" and m[5] else leaf._array) if isinstance(leaf, Tensor) else
                 leaf._v if type(leaf) is SymNumber else leaf for leaf, m in zip(leaves, meta) if m[0] in ("t", "num")]
        spec.result_tree = tree
        spec.result_meta = meta
        spec.aliased = any(m[0] in ("dup", "rview", "gview", "hview") for m in meta)
        spec.unlinked, spec.saves = _unlinked(d, [leaf for leaf, m in zip(leaves, meta) if m[0] == "t" and m[3]])
        spec.objs = any(type(n) is _ObjNode for n in
                        jax.tree_util.tree_leaves(result, is_leaf=lambda x: type(x) is _ObjNode))
        # JAX's pytrees sort dict keys: a result holding a dict is rebuilt in the function's key order
        spec.result_skel = _fc.skeleton(result) if any(
            isinstance(n, dict) for n in jax.tree_util.tree_leaves(result, is_leaf=lambda x: isinstance(x, dict))) \
            else None
        spec.deferred = [i for i, _, _ in deferred]
        return outs, spec

    # ---- after the program -----------------------------------------------------------------------------------
    def _write_back(self, entry, d, outs, in_vals=None, args=None, kwargs=None, saved=None):
        spec = entry.spec
        slots = d.slots
        moves = spec.moves
        if moves is None:
            moves = _misplaced(spec, slots, outs)
            if moves is None:  # called inside another trace: the outer program places them
                moves = ({}, {})
            else:
                spec.moves = moves
        slot_moves, moves = moves
        for k, ((i, dt, bump), v) in enumerate(zip(spec.outputs, outs)):
            s = slots[i]
            if k in slot_moves:
                v = jax.device_put(v, slot_moves[k])
            if isinstance(s, S.StorageSlot):
                s.storage.array = v
                s.storage.version += bump
            elif isinstance(s, S.GradSlot):
                if i in spec.fresh:  # (a new tensor: the old .grad object, if kept, keeps its values)
                    s.tensor._grad = None
                s.write(v, dt, bump)
            elif isinstance(s, S.HyperSlot):
                s.write(v)
            elif isinstance(s, S.OptSlot):
                # the program's output structure is fixed: the state's guard sig is known from the first call
                s.write(v, spec.out_sigs.get(i))
                if v is not None and i not in spec.out_sigs:
                    spec.out_sigs[i] = s.sig()
            else:
                s.put(v)
        for i, z, dt, bump in spec.zeros:
            slots[i].write_zero(z, dt, bump)
        return self._results(entry, d, outs, moves, in_vals, args, kwargs, saved)

    def _results(self, entry, d, outs, moves, in_vals=None, args=None, kwargs=None, saved=None):
        """The call's result from the program's outputs after the slots' (``moves``: results the program places
        off their device); the rebinding and scheduler steps the function made, replayed."""
        spec = entry.spec
        slots = d.slots
        rest = iter(outs[spec.n_slot_out:])
        leaves = []
        tensors = []
        for k, m in enumerate(spec.result_meta):
            if m[0] == "t":
                arr = next(rest)
                leaves.append(Tensor._from_array(arr if k not in moves else jax.device_put(arr, moves[k]), m[1], m[2]))
                if m[5]:
                    shape, chain, strides, offset = m[5]
                    leaves[-1] = Tensor._header(leaves[-1]._storage, shape, m[1], chain, strides, offset, None)
                if m[4]:
                    leaves[-1].__dict__.update(m[4])
                if m[3]:  # (only what required grad in the trace joins the node: a detach()ed or no_grad result
                    tensors.append(leaves[-1])  # comes back a plain tensor, as torch's)
                    if spec.freed is not None:  # (its graph freed by the backward inside)
                        t = leaves[-1]
                        t._requires_grad, t._grad_fn, t._out_nr = True, spec.freed, len(tensors) - 1
            elif m[0] == "slot":
                leaves.append(slots[m[1]].tensor)
            elif m[0] == "num":
                leaves.append(next(rest).item() if len(m) == 1 else m[1](next(rest).item()))
            elif m[0] == "meta":  # (a new meta tensor each call, as eager makes)
                leaves.append(_empty_strided(m[1], m[2], dtype=m[3], device="meta"))
            elif m[0] == "view":
                s = slots[m[1]]
                leaves.append(Tensor._header(s.storage.with_new_counter() if m[8] else s.storage, m[2], m[3], m[4],
                                             m[5], m[6], s.tensor if m[7] else None))
            elif m[0] == "grad":
                leaves.append(slots[m[1]].tensor._grad)
            elif m[0] == "aview":
                leaves.append(_view_of_arg(slots[m[1]].tensor, m[2], m[3], m[4]))
            elif m[0] == "ostate":
                s = slots[m[1]]
                leaves.append(dict.get(s.opt.state, s.param)[m[2]])
            elif m[0] in ("dup", "rview", "gview", "hview"):
                leaves.append(None)  # (below, once the results they view have their history)
            else:
                leaves.append(m[1])
        for i, skipped in zip(spec.firsts, outs[len(outs) - len(spec.firsts):]):
            if bool(skipped):  # (a host read: only for the program of a first step)
                slots[i].drop()
        if in_vals is not None:
            self._record(entry.spec, d, in_vals, args, kwargs, tensors, saved=saved, unused=spec.unlinked)
        if spec.aliased:
            for k, m in enumerate(spec.result_meta):
                if m[0] == "dup":
                    leaves[k] = leaves[m[1]]
                elif m[0] == "rview":
                    b = leaves[m[1]]
                    if m[3] is not None:  # (a detach() / .data of that result, or a view of one)
                        b = b.data if m[3] == "data" else b.detach()
                        leaves[k] = _replay_views(b, m[2]) if m[2] else b
                    else:
                        leaves[k] = _replay_views(b, m[2])
                elif m[0] == "gview":
                    leaves[k] = _replay_views(slots[m[1]].tensor, m[2])
                elif m[0] == "hview":  # (a view of a .grad: ("hview", i, steps); of a state: ("hview", i, name, steps))
                    s = slots[m[1]]
                    held = s.tensor._grad if len(m) == 3 else dict.get(s.opt.state, s.param)[m[2]]
                    leaves[k] = _replay_views(held, m[-1])
        result, deferred_args, values = jax.tree_util.tree_unflatten(spec.result_tree, leaves)
        if spec.result_skel is not None:
            result = _fc.reorder_like(result, spec.result_skel)
        if spec.objs:  # (a fresh dataclass / user object each call, as torch.compile rebuilds them)
            result = _rebuild(result)
        for (kind, target, name, at), v in zip(spec.effects, values):  # the rebinding the function did, replayed
            if at is not None:  # (onto this call's object: a list / object / module given as an argument)
                target = _relocate(d, at, target)
            if kind == "cell":
                target.cell_contents = v
            elif kind == "global":
                target[name] = v
            elif kind in ("extend", "dict"):  # (a list appended to, a dict's keys set)
                _replay_container(kind, target, v)
            elif kind == "delattr":
                delattr(target, name)
            else:
                setattr(target, name, v)
        if spec.replays:  # what the function printed, warned and logged: done on each call
            replay(spec.replays)
        for si, (a, k) in zip(spec.deferred, deferred_args):
            d.schedulers[si].step(*a, **k)
        return result


    def _record(self, spec, d, in_vals, args, kwargs, tensors, grad_fn="CompiledFunctionBackward", remat=False,
                select=None, saved=None, unused=()):
        """A compiled forward called with grad enabled: one autograd Node over ``tensors`` whose backward gives
        the gradients of the tensors that require grad (parameters, inputs) by running the forward again with the
        facade's autograd inside one traced program (``_TapeEntry``). ``spec`` caches the node's op and entry (one
        per guard key); ``select(result, effects, deferred)``: the node's outputs among a run's results (default: the
        program's new tensors, as ``_write_back`` wraps them); ``remat``: activation checkpointing (the
        recomputation's inputs are tied to the cotangent: ``_RematEntry``); ``saved``: ``(entry, residuals)`` from
        the forward program that saved what the backward needs (``_saving``): the node's backward starts from
        them instead of running the forward again (``_SavedEntry``)."""
        from ..autograd import graph as _graph
        from ..ops._registry import OpDef
        if spec.node_op is None:
            spec.node_op = OpDef(lambda *a: None, "compiled", promote=lambda *a: None,
                                 grad_fn=grad_fn, tensors="list", method=False, function=False,
                                 inplace=False, view=None, autocast=None, prep=None, check=None, check_dtype=None,
                                 differentiable=True, nout=len(tensors), eager=False, kernel=None, out=False,
                                 result_type=None, device_check="iter", saves=(), broadcast=False)
        leaves, tree, targs, diff_idx, slot_at = _node_inputs(d, in_vals, unused)
        spec.node_ctx = _node_ctx(d, args, kwargs)
        if saved is not None:
            e, residuals = saved
            if e.diff_idx == tuple(diff_idx):
                outs = tensors[0] if len(tensors) == 1 else tuple(tensors)
                node = _graph.record(spec.node_op, outs, tuple(targs), tuple(diff_idx),
                                     tuple(leaves) + tuple(residuals), e, ())
                if spec.saves:
                    _saves(node, spec.saves, d.slots)
                return
        if spec.node_entry is None:
            body = self._node_body(spec, tree, select)
            outs = tuple(t.dtype for t in tensors)
            if remat:
                # the recomputation starts from the call's tensor arguments (or, with none, from what it
                # differentiates): those are tied to the cotangent
                arg_ids = {id(a) for a in (*args, *kwargs.values()) if isinstance(a, Tensor)}
                tie_idx, pos = [], 0
                for s, v in zip(d.slots, in_vals):
                    if isinstance(s, S.StorageSlot) and id(s.tensor) in arg_ids:
                        tie_idx.append(pos)
                    pos += len(jax.tree_util.tree_leaves(v))
                spec.node_entry = _RematEntry(outs, body, slot_at, tuple(tie_idx or diff_idx))
            else:
                spec.node_entry = _TapeEntry(outs, body, slot_at)
        e = spec.node_entry
        outs = tensors[0] if len(tensors) == 1 else tuple(tensors)
        node = _graph.record(spec.node_op, outs, tuple(targs), tuple(diff_idx), tuple(leaves), e, ())
        if spec.saves:
            _saves(node, spec.saves, d.slots)

    def _node_body(self, spec, tree, select=None):
        """The node's backward as a pure function ``body(arrays, cts, wants)`` of the flat input leaves: the
        forward run again recording the facade's autograd, then ``autograd.grad`` of its outputs (chosen by
        ``select``, default: the program's new tensors) w.r.t. the slots ``wants``."""
        if select is None:
            def select(result, effects, deferred, _meta=spec.result_meta):  # as _collect lists them
                leaves = jax.tree_util.tree_leaves((result, [(a, k) for _, a, k in deferred],
                                                    [e[3] for e in effects]),
                                                   is_leaf=lambda x: isinstance(x, Tensor))
                return [t for t, m in zip(leaves, _meta) if m[0] == "t" and m[3]]
        pure = self._pure(None, lambda: spec.node_ctx, results_only=True, select=select)

        def body(arrays, cts, wants):
            return pure(jax.tree_util.tree_unflatten(tree, list(arrays)), cts, wants)
        return body

    # ---- a compiled forward that saves its backward's residuals ------------------------------------------------
    def _run_saving(self, entry, d, in_vals, args, kwargs):
        """(outputs, (node entry, residuals)) of a compiled forward called with grad enabled, from the program
        that also computes what its backward needs (``_saving``); built on the first such call. Where that
        program cannot be made (a backward that runs Python on the gradients: a hook, a custom
        ``autograd.Function``), ``entry.saving`` is False and the plain program runs: its node runs the forward
        again in the backward."""
        spec = entry.spec
        spec.node_ctx = _node_ctx(d, args, kwargs)
        if entry.saving is None:
            calls = _engine.BACKWARD_CALLS[0]
            try:  # (the constants it reads are the plain trace's: the same function on the same slots)
                fn, node_entry = self._saving(entry, d, in_vals)
                outs, residuals = fn(in_vals)
            except Exception as exc:  # _NotSaved, or a backward JAX cannot linearize: the plain program, as before
                log.debug("functorch_lite.compile: %s: the backward runs the forward again (%s: %s)",
                          self.__name__, type(exc).__name__, exc)
                entry.saving = False
                return entry.jitted(in_vals), None
            finally:
                _engine.BACKWARD_CALLS[0] = calls  # (the backward traced here is not a call of the user's)
            entry.saving = (fn, node_entry)
        else:
            fn, node_entry = entry.saving
            outs, residuals = fn(in_vals)
        return outs, (node_entry, residuals)

    def _saving(self, entry, d, in_vals):
        """The forward program of a compiled forward called with grad enabled, made to save its backward's
        residuals: ``program(in_vals) -> (outputs, residuals)``, and the node entry whose backward starts from
        them (``_SavedEntry``).

        The node's backward (``_node_body``: the forward run again with the facade's autograd, then its
        backward) is linear in the output cotangents wherever the facade's backward runs as one program
        (``autograd.compiled``: every node a dispatch op's pullback, no hook). Then ``jax.linearize`` of it in the
        cotangents, traced inside the forward program, splits it: what does not depend on the cotangents (the
        forward run again, XLA merging it with the forward's own ops) is computed there, and the matmuls' outputs
        among it become the program's extra outputs; what does (the backward proper, and the elementwise ops
        recomputed from those) is a jaxpr the node runs on them. A backward the facade runs node by node (a hook,
        a custom Function: Python that may not be linear) raises ``_NotSaved``: its forward keeps the plain
        program.

        Why: the node's backward ran the whole forward again (matmuls included), so ``compile(model)`` trained
        slower than eager."""
        spec = entry.spec
        _, tree, _, diff_idx, slot_at = _node_inputs(d, in_vals, spec.unlinked)
        wants = tuple(slot_at[i] for i in diff_idx)
        body = self._node_body(spec, tree)
        forward = self._pure(_Entry(), lambda: self._ctx, count=False)  # (its own spec: the entry's is kept)
        node_entry = _SavedEntry(tuple(m[1] for m in spec.result_meta if m[0] == "t" and m[3]), body, slot_at,
                                 len(jax.tree_util.tree_leaves(in_vals)), tuple(diff_idx))

        def program(in_vals):
            outs = forward(in_vals)
            pos, touts = spec.n_slot_out, []
            for m in spec.result_meta:
                if m[0] in ("t", "num"):
                    if m[0] == "t" and m[3]:  # (the node's outputs)
                        touts.append(outs[pos])
                    pos += 1
            fidx = tuple(k for k, o in enumerate(touts) if jax.numpy.issubdtype(o.dtype, jax.numpy.inexact))
            avals = tuple((touts[k].shape, touts[k].dtype) for k in fidx)
            leaves = jax.tree_util.tree_leaves(in_vals)

            def backward(*fcts):
                cts = [None] * len(touts)
                for k, c in zip(fidx, fcts):
                    cts[k] = c
                return tuple(body(leaves, tuple(cts), wants))
            zeros = [jax.numpy.zeros(shape, dt) for shape, dt in avals]
            runs = _engine.NODE_BY_NODE[0]
            # (saving the matmuls' outputs only: the elementwise rest is recomputed from them in the backward,
            # where it reads the arrays eager's pullbacks read -- a saved transpose of a weight made XLA compute
            # the input's gradient with another operand layout, one float32 ulp off eager's)
            saving = jax.checkpoint(backward, policy=jax.checkpoint_policies.dots_saveable)
            _, linear = jax.linearize(saving, *zeros)
            closed = jax.make_jaxpr(linear)(*zeros)
            if _engine.NODE_BY_NODE[0] != runs:
                raise _NotSaved
            consts = list(closed.consts)
            tracer = [isinstance(c, jax.core.Tracer) for c in consts]
            node_entry.set(closed.jaxpr, [None if t else c for c, t in zip(consts, tracer)], fidx, avals)
            return outs, [c for c, t in zip(consts, tracer) if t]
        return _jit(program), node_entry


def _probe_values(values: dict, guards: list) -> dict:
    """Other values of the dynamic arguments ``values`` {position: value} to check their program at
    (``_check_dynamic``), taking the branches ``guards`` the program took (``step % 2 == 1`` at 5: 11, not 8);
    this call's values where none of the first tries does."""
    for k in range(1, 9):
        env = {p: (v + 3 * k if abs(v) < (1 << 30) else v - 3 * k) if type(v) is int else
               (v * (1 + 0.37 * k) + 0.5 * k if v == v and abs(v) < 1e300 else v) for p, v in values.items()}
        try:
            if all(bool(_sym._eval(e, env)) == out for e, out in guards):
                return env
        except Exception:  # noqa: BLE001
            continue
    return dict(values)


def _run_whole(closed, vals) -> list:
    """A traced program's outputs on ``vals``: its jaxpr compiled as one program (nothing donated: a jitted call
    inside, an optimizer's group step, donates its inputs when run on its own, and the program reads them again;
    run op by op it compiled each op, seconds for a training step)."""
    return _jit(lambda *xs: jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *xs))(
        *jax.tree_util.tree_leaves(vals))


def _by_output(leaves: list, tree) -> list:
    """A program's flat output leaves grouped per top-level output (``tree``: its pytree of outputs, a list)."""
    it = iter(leaves)
    return [[next(it) for _ in range(t.num_leaves)] for t in jax.tree_util.tree_structure(tree).children()]


_SLOT_KINDS = ("slot", "view", "grad", "aview", "ostate", "gview", "hview")  # result kinds whose [1] is a slot index


def _agree(dspec, sspec, d, ds, dyn_out: list, static_out: list) -> bool:
    """``CompiledFunction._check_dynamic``: the program with dynamic scalar inputs (``dspec``, over ``d``'s slots)
    and the one with them constants (``sspec``, over ``ds``'s: the same without the ScalarArgSlots) write the same
    slots with the same values and return the same results (a number: the constant the other returns)."""
    keep = [i for i, s in enumerate(d.slots) if type(s) is not S.ScalarArgSlot]
    if len(keep) != len(ds.slots) or any(d.slots[i].name != ds.slots[j].name for j, i in enumerate(keep)):
        return False
    to_s = {i: j for j, i in enumerate(keep)}
    if [(to_s.get(i), dt, b) for i, dt, b in dspec.outputs] != [tuple(o) for o in sspec.outputs] or \
            [(to_s.get(i), dt, b) for i, _, dt, b in dspec.zeros] != [(i, dt, b) for i, _, dt, b in sspec.zeros] or \
            [e[0] for e in dspec.effects] != [e[0] for e in sspec.effects] or \
            len(dspec.result_meta) != len(sspec.result_meta):
        return False
    dn, sn = dspec.n_slot_out, sspec.n_slot_out
    if not _same_values(sum(dyn_out[:dn], []), sum(static_out[:sn], [])):
        return False
    dr, sr = iter(dyn_out[dn:]), iter(static_out[sn:])
    for md, ms in zip(dspec.result_meta, sspec.result_meta):
        a = next(dr) if md[0] in ("t", "num") else None
        b = next(sr) if ms[0] in ("t", "num") else None
        if md[0] == "num" and len(md) == 2 and ms[0] == "const":  # (``return i + 1``: the constant, its type)
            if type(ms[1]) is not md[1] or not _same_values([np.asarray(a[0]).astype(np.asarray(ms[1]).dtype)],
                                                            [np.asarray(ms[1])]):
                return False
        elif md[0] in _SLOT_KINDS:
            if (md[0], to_s.get(md[1])) + tuple(md[2:]) != tuple(ms):
                return False
        elif md[0] != ms[0] or (md[0] in ("t", "num") and (md[1:] != ms[1:] or not _same_values(a, b))) or \
                (md[0] not in ("t", "num") and md != ms):
            return False
    return _same_values(sum(dr, []), sum(sr, []))


def _same_values(a: list, b: list) -> bool:
    """Two programs' outputs agree: shapes and dtypes exactly, values to float32 rounding (a traced exponent is
    ``pow``, a constant one ``integer_pow``)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if jax.dtypes.issubdtype(getattr(x, "dtype", None), jax.dtypes.prng_key):  # (a generator's new key)
            if not jax.dtypes.issubdtype(getattr(y, "dtype", None), jax.dtypes.prng_key):
                return False
            x, y = jax.random.key_data(x), jax.random.key_data(y)
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind in "fc" or x.dtype == jax.numpy.bfloat16:
            wide = np.complex128 if x.dtype.kind == "c" else np.float64
            if not np.allclose(x.astype(wide), y.astype(wide), rtol=1e-4, atol=1e-6, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def _locate(d, target):
    """Where the walk found an effect's target (a list or dict it reached, a plain object, a module): (its list in
    the discovery, position, type, walk name), so the replay after a later call acts on that call's object in that
    place (``f(x, out)`` appending to each call's ``out``, not to the traced call's); None for a cell or a global's
    namespace."""
    for kind, items in (("c", d.containers), ("o", [(None, o) for o in d.objects]), ("m", d.modules)):
        for k, (name, o) in enumerate(items):
            if o is target:
                return kind, k, type(target), name
    return None


def _relocate(d, at, target):
    kind, k, t, name = at
    items = d.containers if kind == "c" else d.objects if kind == "o" else d.modules
    if k >= len(items):
        return target
    name_now, o = (None, items[k]) if kind == "o" else items[k]
    return o if type(o) is t and name_now == name else target


def _with_subs(slots, args, kwargs):
    """The arguments with each ArgViewSlot's / ScalarArgSlot's traced stand-in in its place."""
    args, kwargs = list(args), dict(kwargs)
    for s in slots:
        if type(s) is not S.ArgViewSlot and type(s) is not S.ScalarArgSlot:
            continue
        if type(s.pos) is int:
            args[s.pos] = s._sub
        else:
            kwargs[s.pos] = s._sub
    return args, kwargs


class _ObjNode:
    """A dataclass or user object the compiled function made and returned, as a pytree node: its fields are
    results of the program (tensors: values, requires_grad, grad_fn), and each call gets a fresh object of its
    class (``_rebuild``), as torch.compile's. ``aux``: (class, attribute names, number of ``__init__`` fields;
    None for a plain object, rebuilt without calling ``__init__``, as dynamo reconstructs one)."""
    __slots__ = ("aux", "vals")

    def __init__(self, aux, vals):
        self.aux, self.vals = aux, vals

    def build(self):
        cls, names, n_init = self.aux
        vals = [_rebuild(v) for v in self.vals]
        if n_init is None:
            o = object.__new__(cls)
            o.__dict__.update(zip(names, vals))
            return o
        o = cls(**dict(zip(names[:n_init], vals[:n_init])))  # (dataclasses.replace's way: __post_init__ runs)
        for k, v in zip(names[n_init:], vals[n_init:]):  # (init=False fields, attributes set afterwards)
            object.__setattr__(o, k, v)
        return o


jax.tree_util.register_pytree_node(_ObjNode, lambda n: (n.vals, n.aux), lambda aux, vals: _ObjNode(aux, list(vals)))


def _rebuild(x):
    """A call's result with each ``_ObjNode`` made its object (the containers around them rebuilt)."""
    t = type(x)
    if t is _ObjNode:
        return x.build()
    if t is list:
        return [_rebuild(v) for v in x]
    if t is tuple:
        return tuple([_rebuild(v) for v in x])
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*[_rebuild(v) for v in x])
    if t is dict or t is OrderedDict:
        return t((k, _rebuild(v)) for k, v in x.items())
    return x


def _known(d, args, kwargs) -> set:
    """ids of the objects that existed before the call (what the discovery walked, the arguments): returned as
    themselves, not rebuilt."""
    known = {id(o) for o in d.objects}
    known.update(id(a) for a in args)
    known.update(id(a) for a in kwargs.values())
    return known


_ATOMS = (int, float, bool, str, bytes, complex, type(None))
_INITVAR = getattr(dataclasses, "_FIELD_INITVAR", None)


def _structured(x, known, first_uid, depth=0):
    """``x`` (a function's result) with each dataclass the call made, and each user object holding a tensor the
    call made, replaced by an ``_ObjNode`` (JAX's pytrees do not enter them: the object, with the trace's tensors
    inside, was a constant of the program, and its tracers leaked). Containers are rebuilt only where something
    inside changed. An object that cannot be rebuilt (``__slots__``, its own ``__new__``, a library object) and
    holds such tensors is a graph break."""
    t = type(x)
    if t in _ATOMS or isinstance(x, Tensor) or depth > 16:
        return x
    if t is list or t is tuple or isinstance(x, tuple) and (hasattr(x, "_fields") or hasattr(t, "n_sequence_fields")):
        items = [_structured(v, known, first_uid, depth + 1) for v in x]
        if all(map(_is, items, x)):
            return x
        return items if t is list else tuple(items) if t is tuple else t(*items)
    if t is dict or t is OrderedDict:
        items = [(k, _structured(v, known, first_uid, depth + 1)) for k, v in x.items()]
        if all(v is x[k] for k, v in items):
            return x
        return t(items)
    if id(x) in known or isinstance(x, (type, _module.Module)):
        return x
    if dataclasses.is_dataclass(x):
        params = getattr(t, "__dataclass_params__", None)
        if params is not None and params.init and not any(
                getattr(f, "_field_type", None) is _INITVAR for f in getattr(t, "__dataclass_fields__", {}).values()):
            fs = dataclasses.fields(x)
            names = [f.name for f in fs if f.init]
            n_init = len(names)
            names += [f.name for f in fs if not f.init and hasattr(x, f.name)]
            names += [k for k in getattr(x, "__dict__", {}) if k not in names]
            return _ObjNode((t, tuple(names), n_init),
                            [_structured(getattr(x, k), known, first_uid, depth + 1) for k in names])
    if not _holds_new(x, first_uid, depth):
        return x
    if getattr(x, "__dict__", None) is not None and t.__new__ is object.__new__ and \
            not (t.__module__ or "").startswith("functorch_lite"):
        attrs = x.__dict__
        return _ObjNode((t, tuple(attrs), None),
                        [_structured(v, known, first_uid, depth + 1) for v in attrs.values()])
    raise _UnreachableWrite(f"returning a {t.__qualname__} object that holds tensors the compiled function made "
                            "(only tensors, dataclasses, plain objects with a __dict__, lists, tuples and dicts of "
                            "them come back from the program)")


def _is(a, b) -> bool:
    return a is b


def _holds_new(x, first_uid, depth=0, seen=None) -> bool:
    """Whether ``x`` holds (in its attributes, lists, tuples, dicts) a tensor the trace made."""
    if isinstance(x, Tensor):
        return x._storage.root().uid >= first_uid
    if depth > 16 or type(x) in _ATOMS or isinstance(x, (type, types.FunctionType, types.ModuleType,
                                                          _module.Module)):
        return False
    if type(x) is _ObjNode:
        return True
    if seen is None:
        seen = set()
    elif id(x) in seen:
        return False
    seen.add(id(x))
    if isinstance(x, (list, tuple)):
        vals = x
    elif isinstance(x, dict):
        vals = x.values()
    else:
        attrs = getattr(x, "__dict__", None)
        if attrs is None:
            from .effects import attrs_of
            attrs = attrs_of(x)
        vals = attrs.values()
    return any(_holds_new(v, first_uid, depth + 1, seen) for v in list(vals))


def _plain_attr(v) -> bool:
    """A value an attribute of a result tensor can hold across calls: a Python scalar or string, or a tuple of
    those (one object for every call's result: nothing mutable)."""
    return isinstance(v, (type(None), bool, int, float, complex, str, bytes)) or (
        type(v) is tuple and all(map(_plain_attr, v)))


def _steps_from(base, view):
    """The view steps that take ``base`` to ``view`` (a view of the same storage whose chain extends base's), or
    None where ``view`` is no such view or a step is no plain view op."""
    n = len(base._chain or ())
    chain = view._chain or ()
    if base._storage is not view._storage or tuple(chain[:n]) != tuple(base._chain or ()):
        return None
    steps = tuple(chain[n:])
    t = _view_of_arg(base, steps, view._shape, view.dtype)
    if t is None or t._strides != view._strides or t._offset != view._offset:
        return None
    return steps


def _replay_views(t, steps):
    """View ``steps`` taken of ``t`` as the view ops take them (recorded for autograd as they would be)."""
    for op, sargs in steps:
        meta = op.view(t, sargs)
        if isinstance(meta, tuple):  # (else the op gives back its input itself)
            t = _dispatch_view(op, t, sargs, meta)
    if t._chain is None:  # (``x.view_as(x)``: a new header over the same values)
        t = Tensor._header(t._storage, t._shape, t.dtype, None, t._strides, t._offset, t)
    return t


def _view_of_arg(arg, chain, shape, dtype):
    """The view ``chain`` (the steps a result took of a view argument's traced stand-in) taken of the argument
    ``arg`` itself, or None where a step is no plain view op or gives another shape / dtype."""
    t = arg
    for op, sargs in chain or ():
        view = getattr(op, "view", None)
        if not callable(view):
            return None
        try:
            meta = view(t, sargs)
        except Exception:
            return None
        if not isinstance(meta, tuple):  # (the op gives back its input itself)
            continue
        t = t._view_of(meta[0], meta[1], meta[2], (op, sargs), meta[3] if len(meta) > 3 else None)
    if t is arg:  # (``x.detach()``, ``x.view_as(x)``: a new header over the argument's view)
        t = Tensor._header(arg._storage, arg._shape, arg.dtype, arg._chain, arg._strides, arg._offset,
                           arg if arg._base is None else arg._base)
    if tuple(t._shape) != tuple(shape) or t.dtype is not dtype:
        return None
    return t


class _NotSaved(Exception):
    """A compiled forward whose backward cannot start from saved residuals (``CompiledFunction._saving``)."""


def _freed_node(meta):
    """The grad_fn of a compiled call's results whose graph a backward inside the call freed (a training step's
    loss), or None without such results: a ``CompiledFunctionBackward`` with no inputs, freed, so a backward through
    it raises PyTorch's "backward through the graph a second time" (one per program: the results share it)."""
    from ..autograd import graph as _graph
    outs = tuple((m[1], m[2]) for m in meta if m[0] == "t" and m[3])
    if not outs:
        return None
    node = _graph.node_class("CompiledFunctionBackward")()
    node._arrays, node._edges, node._diff_idx, node._inputs = None, (), (), ()
    node._out_meta = outs  # ((dtype, device) per result: shapes vary by call, this node never runs)
    node._freed = True
    return node


def _any_intact(result) -> bool:
    """Whether a result tensor requires grad over a graph no backward freed (none of its nodes ``_freed``)."""
    seen = set()
    for t in jax.tree_util.tree_leaves(result, is_leaf=lambda x: isinstance(x, Tensor)):
        if not isinstance(t, Tensor) or not t.requires_grad:
            continue
        stack, intact = [t.grad_fn], True
        while stack and intact:
            n = stack.pop()
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            if n._freed:
                intact = False
            stack.extend(e[0] for e in n.next_functions)
        if intact:
            return True
    return False


def _node_ctx(d, args, kwargs) -> tuple:
    """What a trace of a compiled forward's backward puts tracers into, and the autocast state to run it under."""
    return d, args, kwargs, dict(_amp.STATE.active) if _amp.STATE.active else None


def _unlinked(d, results) -> tuple:
    """(unlinked, saved) from the traced results' graph (the walk stops at the slots' own nodes):

    - the slots requiring grad that it does not reach (``b.detach()`` read, a value used under no_grad): no input
      of the node, so their ``.grad`` stays None, as torch's (a zeros .grad would be stepped: AdamW's weight decay
      moves such a parameter);
    - the slot tensors its nodes saved for backward, as ((slot index, shape, dtype), ...): the compiled node saves
      them too (``_saves``), so a later in-place change of one makes its backward raise torch's "modified by an
      inplace operation" (``w.sin()`` saves w, ``x * w`` saves only x when only w requires grad)."""
    ends = {}
    for i, s in enumerate(d.slots):
        # (a view made under no_grad has no edge: its gradient is dropped; written in the trace, its edge_of
        # would raise the error for an in-place write with grad enabled, which the call did not make)
        if type(s) is S.StorageSlot and s.tensor._requires_grad and not s.tensor.__dict__.get("_no_grad_view"):
            e = _edge_of(s.tensor)
            if e is not None:
                ends[id(e[0])] = i
    if not ends:
        return frozenset(), ()
    at = {id(s.storage.root()): i for i, s in enumerate(d.slots) if type(s) is S.StorageSlot}
    reached, seen, saved = set(), set(), {}
    stack = [t.grad_fn for t in results if t.grad_fn is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        i = ends.get(id(n))
        if i is not None:
            reached.add(i)
            continue
        for e in n._saved:  # (input tensor, storage, version, shape, dtype, producer, is_out, out_nr)
            k = None if e[6] else at.get(id(e[1].root()))
            if k is not None:
                saved.setdefault(k, (k, e[3], e[4]))
        for e in n._edges:
            if e is not None and e[0] is not None:
                stack.append(e[0])
    return frozenset(i for i in ends.values() if i not in reached), tuple(saved.values())


def _saves(node, saved, slots) -> None:
    """The compiled node saves the slot tensors its traced graph saved (``_unlinked``): their versions now, checked
    by the engine before its backward runs (``autograd.graph.check_saved``)."""
    node._saved = tuple((t, t._storage, t._storage.version, shape, dt, t._grad_fn, False, t._out_nr)
                        for t, shape, dt in [(slots[i].tensor, shape, dt) for i, shape, dt in saved])


def _pystate(d) -> list:
    """Python state a trace would advance once and the program then never again: the ``random`` module's and
    NumPy's global generators, and the iterators and random generators the function reaches (``next(it)``,
    ``random.random()``: each call of torch's draws anew). (description, read, put back, state now) for each, to
    be put back after the trace (``_pystate_undo``); an iterator is a graph break before the function runs."""
    out = [("drawing from the random module (random.random())", random.getstate, random.setstate),
           ("drawing from NumPy's global generator (np.random)", np.random.get_state, np.random.set_state)]
    for name, obj in d.pystate:
        if isinstance(obj, random.Random):
            out.append((f"drawing from the random generator {name}", obj.getstate, obj.setstate))
        elif isinstance(obj, np.random.RandomState):
            out.append((f"drawing from the NumPy generator {name}", obj.get_state, obj.set_state))
        elif isinstance(obj, np.random.Generator):
            bg = obj.bit_generator
            out.append((f"drawing from the NumPy generator {name}", lambda bg=bg: bg.state,
                        lambda st, bg=bg: setattr(bg, "state", st)))
        else:
            # (a graph break before the function runs: a next() inside is state the program cannot replay, and a
            # trace that ran it to its end could not put it back -- a list's iterator lets go of the list there --
            # so the eager call would have found it empty)
            raise _UnreachableWrite(f"advancing the iterator {name} (next()) ({type(obj).__name__}: Python state the "
                                    "program cannot replay)")
    return [(what, get, put, get()) for what, get, put in out]


def _pystate_undo(snaps):
    """Put back what ``_pystate`` saw; the first one the trace changed (its description), or None."""
    changed = None
    for what, get, put, st in snaps:
        if not _same_state(get(), st):
            changed = changed or what
            put(st)
    return changed


def _same_state(a, b) -> bool:
    """Two generator / iterator states are equal (NumPy arrays by content)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if type(a) in (tuple, list):
        return type(b) is type(a) and len(a) == len(b) and all(map(_same_state, a, b))
    if type(a) is dict:
        return type(b) is dict and a.keys() == b.keys() and all(_same_state(a[k], b[k]) for k in a)
    return a == b


def _node_inputs(d, in_vals, unused=()):
    """A compiled forward's node inputs: the flat leaves of the slot values and their treedef, the tensors at
    the positions that require grad (None elsewhere), those positions, and {position: slot index}. A slot the
    program never reads (``unused``: a tensor the function reached but replaced, ``store['h'] = h``, whose graph an
    earlier backward freed) is no input of the node: no gradient flows to it."""
    leaves, tree = jax.tree_util.tree_flatten(in_vals)
    targs, diff_idx, slot_at = [None] * len(leaves), [], {}
    pos = 0
    for i, (s, v) in enumerate(zip(d.slots, in_vals)):
        n = len(jax.tree_util.tree_leaves(v))
        if isinstance(s, S.StorageSlot) and s.tensor._requires_grad and i not in unused:
            targs[pos] = s.tensor
            diff_idx.append(pos)
            slot_at[pos] = i
        pos += n
    return leaves, tree, targs, diff_idx, slot_at


def _check_sets(d, slog: dict, first_uid: int) -> None:
    """The ``.grad`` fields and optimizer states the traced function assigned (``storage.SET_LOG``) must be slots:
    one the discovery did not reach would keep a traced value (the trace puts it back; the call runs eagerly).
    A ``.data`` assignment to a tensor from before the call is not replayed either (it runs eagerly)."""
    grads = {id(s.tensor) for s in d.slots if isinstance(s, S.GradSlot)}
    states = set()
    for s in d.slots:
        if isinstance(s, S.OptSlot):
            states.add((id(s.opt._ostate), id(s.param)))
            states.add((id(s.opt.state), id(s.param)))
    for (oid, k), (obj, key, old) in slog.items():
        if isinstance(obj, dict):
            if (oid, id(key)) not in states:
                raise _UnreachableWrite("an optimizer step on a parameter whose optimizer the compiled function "
                                        "cannot see (reach it through an argument, the closure, or a global named "
                                        "in the function)")
        elif key == ("_grad",):
            if oid not in grads and obj._storage.root().uid < first_uid:
                raise _UnreachableWrite("a .grad of a tensor the compiled function cannot see (reach it through an "
                                        "argument, the closure, or a global named in the function)")
        elif old[0].root().uid < first_uid:  # (key is tensor.DATA_FIELDS; old[0] its storage before)
            raise _UnreachableWrite("assigning .data of a tensor that existed before the call (an in-place "
                                    "write, p.data.copy_(...) or p.copy_(...) under no_grad, is compiled)")


def _same_spec(a, b) -> bool:
    """Two traces of one call produced the same thing: the slots written (in order, with their dtypes and version
    bumps), the results, effects, deferred scheduler steps and zeroed .grad fields."""
    try:
        return (a.outputs == b.outputs and a.result_tree == b.result_tree and a.result_meta == b.result_meta
                and a.effects == b.effects and a.deferred == b.deferred and a.result_skel == b.result_skel
                and a.replays == b.replays and a.fresh == b.fresh
                and [z[0] for z in a.zeros] == [z[0] for z in b.zeros])
    except Exception:  # (values that do not compare plainly: not the same)
        return False


_STEP_AFTER_SCHED = ("optimizer.step() after scheduler.step() inside a compiled function (the scheduler's step "
                     "runs after the program: the optimizer would use the old learning rate)")


class _StaleLR:
    """An optimizer group's ``lr`` while a compiled function's trace runs after a ``scheduler.step()`` it deferred
    (the step runs after the program): reading it raises, so the call runs eagerly and reads the stepped lr
    (``return loss, opt.param_groups[0]['lr']`` returned the lr before the step)."""
    __slots__ = ()

    def _raise(self, *a, **k):
        raise _UnreachableWrite("reading an optimizer's learning rate after scheduler.step() inside a compiled "
                                "function (the scheduler's step runs after the program: the value read would be the "
                                "one before)")
    __float__ = __int__ = __index__ = __bool__ = __format__ = __repr__ = __str__ = __jax_array__ = __array__ = _raise
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _raise
    __pow__ = __rpow__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = __round__ = _raise
    __eq__ = __ne__ = _raise
    __hash__ = object.__hash__


def _verify_fast(cf, steady, ins, args, kwargs=None) -> None:
    """Under ``config.verify_discovery``: what the argument fast path (``Steady.fast``) or a fused steady call
    (``Steady.fuse``) accepts, the general path's discovery, guard key and steady check accept too, with the same
    inputs."""
    kwargs = {} if kwargs is None else kwargs
    d = S.discover_cached(cf.fn, args, kwargs, cf)
    cf._verify_discovery(d, args, kwargs)
    if ins is not None and cf._ambient(d, args, kwargs) != steady.ambient:
        raise AssertionError(f"functorch_lite.compile: {cf.__name__}: the steady state's own check passed a call "
                             "whose guard components differ")
    fast = None if ins is None else list(ins)
    general = steady.inputs(d, args, kwargs)
    # (a fresh .grad the caller still holds goes in as a copy, by a reference count that the references held
    # here change: the same values, another array)
    copies = {steady.starts[i] if steady.flat else i for i in steady.fresh}
    if fast is not None and (general is None or len(fast) != len(general) or not all(
            a is b or j in copies and isinstance(a, jax.Array) and isinstance(b, jax.Array) and
            a.shape == b.shape and bool((a == b).all()) for j, (a, b) in enumerate(zip(fast, general)))):
        raise AssertionError(f"functorch_lite.compile: {cf.__name__}: the steady state's argument fast path "
                             "disagrees with the general check")  # (a refusal may be its own)


def _stale(entry) -> bool:
    """A tensor the program read as a constant (``entry.consts``) holds another array now."""
    return bool(entry.consts) and not all([st.array is a for st, a in entry.consts])


_MISS = object()  # (a fused steady call's answer where a check fails: the general path takes the call)
# the names a fused steady call reads (``steady.Steady.fuse``)
_FUSE_ENV = {"MISS": _MISS, "TRACING": TRACING, "PROF": _PROFILER, "STANCE": STANCE, "SAVED": _SAVED_HOOKS,
             "CFG": config, "GHOOKS": _module._global_call_hooks, "COUNTERS": COUNTERS, "top_level": _top_level,
             "stale": _stale, "verify": _verify_fast, "TOP_LEVEL": "top_level()",
             "MODE_EXPRS": MODE_EXPRS, "_gm": _gm, "D": D, "_amp": _amp, "_config": _config, "_dev": _dev,
             "_SDP_KEY": _SDP_KEY}
# JAX's TracingContext.is_top_level, inline where this JAX has its parts (three Python calls fewer a call)
_parts = {"TSR": getattr(_jax_core, "trace_state_strong_ref", None), "EVAL": getattr(_jax_core, "eval_trace", None),
          "AXS": getattr(_jax_core, "axis_env_state", None), "TOPAX": getattr(_jax_core, "top_axis_env", None)}
try:
    if eval("TSR.value is EVAL and AXS.value is TOPAX", _parts) is True is _top_level():
        _FUSE_ENV.update(_parts, TOP_LEVEL="TSR.value is EVAL and AXS.value is TOPAX")
except AttributeError:
    pass
del _parts


def _same_key(a: tuple, b: tuple) -> bool:
    """Two guard keys are equal (a dict lookup compares them only on equal hashes; a PyTreeDef refuses to compare
    with None, as an optimizer state's sig before and after its first step would)."""
    try:
        return a == b
    except TypeError:
        return False


def _same(a, b) -> bool:
    if a is b:
        return True
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(x is y for x, y in zip(la, lb)) and \
        jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)


def _equal(a, b) -> bool:
    """Two key components' values equal (a pytree structure compared with None is unequal, not an error)."""
    try:
        return bool(a == b)
    except TypeError:
        return False


def _fmt(v) -> str:
    if isinstance(v, tuple) and v and v[0] == "s":
        inference = ", an inference tensor" if v[5:6] == (True,) else ""
        return f"shape {tuple(v[1])} {v[2]} on {v[3]}, requires_grad={v[4]}{inference}"
    if v == "T":
        return "a tensor"
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "view":
        return "a view (" + ", ".join(f"{op.name}{args}" for op, args in v[1]) + ")"
    return repr(v)
