"""A compiled function's steady state: a call that finds every slot as the previous call left it.

A compiled training step is called again and again with nothing changed in between but what the call itself
wrote back: the parameters, their ``.grad`` fields and optimizer states hold the program's last outputs. Such a
call needs no guard key (its slot sigs are the previous call's), no reading of the slots and no flattening: the
program's inputs are the values the last call wrote. ``Steady`` keeps, per slot, the objects whose identity
holds while its value does (its *record*) and its input leaves. The next call compares the records by identity,
and the key's other components (``CompiledFunction._ambient``: module training flags, group options, arguments'
static parts, grad/autocast modes...) by value; it re-reads the slots whose value may change with their sig
unchanged (an argument tensor, a closure tensor given a new array, a changed learning rate, a reseeded
generator: their sig is compared with the key's), and sends anything else down the full path
(``CompiledFunction.__call__``). After the program, ``write`` puts its outputs in place (what
``CompiledFunction._write_back`` does, with the slot kinds known in advance) and takes the new records.

It is set up only where the program maps its signature to itself (the key after the call equals the key of the
call: the fixed point every training loop reaches after its first steps), so the program's outputs, whose layout
is fixed, keep the key's slot sigs on every later call.

Why: on a GPU host the facade's Python per call was most of a small step's time (comparisons/gpu_profile.py:
the MLP Adam step W2 spent 221 us in the facade's Python against 228 us in the program's dispatch).
"""
from __future__ import annotations

import copy
import weakref
from operator import attrgetter, is_
from sys import getrefcount

import jax

from . import hostcheck
from . import slots as S
from .._tensor.storage import Storage

_STORAGE, _GRAD, _OPT, _HYPER, _RNG, _VIEW = range(6)
_KIND = {S.StorageSlot: _STORAGE, S.GradSlot: _GRAD, S.OptSlot: _OPT, S.HyperSlot: _HYPER, S.RngSlot: _RNG,
         S.ScalarArgSlot: _VIEW,
         S.ArgViewSlot: _VIEW}
# the kinds of slot whose value may change with their sig unchanged: re-read, sig compared with the key's
_REREAD = (_STORAGE, _HYPER, _RNG, _VIEW)  # (an ArgViewSlot is an argument: read on every call)
_ARRAY = type(jax.numpy.zeros(()))
_SARR = attrgetter("_storage.array")  # a tensor's storage's array
_FLAT_STATES: set = set()  # NamedTuple types whose leaves are their non-None fields (optimizer states)


def _record(kind, s):
    """The objects whose identity holds while slot ``s``'s value does (compared in ``Steady.inputs``)."""
    if kind == _STORAGE:
        return s.storage.array
    if kind == _GRAD:
        g = s.tensor._grad
        if g is None:
            return None
        st = g._storage
        return (g, st, st.array, st.zeros, g._chain)
    if kind == _OPT:
        # the state, the ``optimizer.state[p]`` dict and its tensors' arrays (get() reads a changed one back), and
        # whether those tensors are plain (each over its own storage: ``write`` sets their arrays directly)
        views = dict.get(s.opt.state, s.param)
        if not views:
            return (s.opt._ostate.get(s.param), views, (), False)
        ts = tuple(views.values())
        return (s.opt._ostate.get(s.param), views, tuple(map(_SARR, ts)),
                all(t._chain is None and t._storage.root() is t._storage for t in ts))
    if kind == _HYPER:  # the options' values; a tensor option's array too (a scheduler may write it in place)
        vals = [s.group[k] for k in s.keys]
        for v in tuple(vals):
            if isinstance(v, S.Tensor):
                vals.append(v._storage.array)
            elif isinstance(v, tuple):
                vals.extend(x._storage.array for x in v if isinstance(x, S.Tensor))
        return vals
    if kind == _RNG:
        return s.gen._key
    return s.tensor


def _leaves(v) -> list:
    t = type(v)
    if t is _ARRAY:
        return [v]
    if v is None or t is S.KnownZero:
        return []
    if t in _FLAT_STATES:
        return [x for x in v if x is not None]
    leaves = jax.tree_util.tree_leaves(v)
    if isinstance(v, tuple) and hasattr(v, "_fields") and leaves == [x for x in v if x is not None]:
        _FLAT_STATES.add(t)
    return leaves


class Steady:
    __slots__ = ("base", "n", "n_args", "entry", "key", "ambient", "flat", "kinds", "recs", "vals", "leaves",
                 "starts", "counts", "check", "writers", "single", "fresh", "inputs", "write", "fast", "argd",
                 "undoable", "held", "host", "call", "_ns", "_gen", "__weakref__")

    def __init__(self, entry, key, ambient, d, flat: bool, arg_statics, modes, branches):
        """After a call of ``entry`` whose key was ``key``, its results written back: the slots' values now are
        the next call's inputs. ``flat``: the program takes flat leaves (``entry.donating``), else the values.
        ``arg_statics(d, args, kwargs)``, ``modes()``: those components of the key's ``ambient``
        (``CompiledFunction._ambient``)."""
        self.entry, self.key, self.ambient, self.flat = entry, key, ambient, flat
        self.base = d if d.base is None else d.base
        self.n = len(d.slots)
        self.n_args = self.n - len(self.base.slots)
        skip = set(entry.skip) if flat else set()
        self.kinds = [_KIND[type(s)] for s in d.slots]
        self.check = [i for i in range(self.n) if i not in skip]
        self.writers = [(self.kinds[i], i, dt, bump) for i, dt, bump in entry.spec.outputs]
        # a result that is one new tensor (a loss), with nothing to replay: its (dtype, device), so the call builds
        # it directly (``CompiledFunction._results`` otherwise)
        spec, self.single = entry.spec, None
        self.fresh = spec.fresh  # (GradSlots written back as new tensors: runner._Spec.fresh)
        # a program with data-dependent checks (a cross-entropy's target range) whose writes ``snapshot`` can undo:
        # its write-back runs before the flags are read (``CompiledFunction._steady_call``)
        self.held = None  # (``CompiledFunction._steady_call``: the last call's snapshot, freed by the next)
        self.undoable = bool(spec.checks) and all(k in (_STORAGE, _GRAD, _OPT) for k, _, _, _ in self.writers)
        if len(spec.result_meta) == 1 and spec.result_meta[0][0] == "t" and not any(spec.result_meta[0][4:]) and \
                not spec.effects and \
                not spec.deferred and not spec.replays and spec.result_skel is None and 0 not in spec.moves[1]:
            mark = object()
            if jax.tree_util.tree_unflatten(spec.result_tree, [mark])[0] is mark:
                self.single = spec.result_meta[0][1:3]
        self.recs, self.vals, self.leaves, self.starts, self.counts = [], [], [], [], []
        for i, s in enumerate(d.slots):
            v = None if i in skip else s.get()
            leaves = _leaves(v)
            self.starts.append(len(self.leaves))
            self.counts.append(len(leaves))
            self.leaves.extend(leaves)
            self.vals.append(v)
            self.recs.append(None if i in skip else _record(self.kinds[i], s))
        ns = {"BASE": self.base, "N": self.n, "K": key[0], "R": self.recs, "V": self.vals,
              "L": self.leaves, "self": weakref.proxy(self), "getrefcount": getrefcount,
              "copy": _copy, "is_": is_, "dget": dict.get, "FLAT": _FLAT_STATES, "from_array": S.Tensor._from_array,
              "hyper_new": _hyper_new, "arg_statics": arg_statics, "modes": modes, "SARR": _SARR,
              "branches": branches, "Storage": Storage}
        # a call whose arguments are all plain tensors (a batch: no view, no grad) gets ``fast(args)``: its
        # arguments checked and taken directly, into ``argd`` (this state's own discovery, its argument slots
        # repointed at each call's tensors) instead of a discovery built per call (discover_cached: 3.5 us for 2)
        self.fast = self.argd = None
        args_plain = self.n_args and d.base is not None and ambient[2] == ("T",) * self.n_args and \
            not ambient[3] and all(type(s) is S.StorageSlot and _plain(s.tensor) for s in d.slots[:self.n_args])
        if args_plain:
            self.argd = copy.copy(d)
            self.argd.slots = [S.StorageSlot(s.tensor, s.name) for s in d.slots[:self.n_args]] + \
                d.slots[self.n_args:]
            ns["ARGD"], ns["PST"], ns["Tensor"] = self.argd, self.base._storages, S.Tensor
        # the program's checks answered on the host before it runs (hostcheck.py), where they can be
        self.host = hostcheck.of(entry, flat, self.leaves if flat else self.vals) if spec.checks else None
        self._ns, self._gen = ns, (d, args_plain)
        exec(compile(self._source(d, ns, args_plain), "<functorch_lite.compile steady state>", "exec"), ns)
        self.inputs, self.write = ns["inputs"], ns["write"]
        if args_plain:
            self.fast = ns["fast"]
        self.call = None  # the whole steady call as one function (``fuse``), made on its first steady call

    def _source(self, d, ns, args_plain=False) -> str:
        """``inputs(d, args, kwargs)``: the program's inputs for this call (flat leaves or per-slot values) when it is
        the steady state, else None; ``write(d, outs)``: the program's outputs put in place
        (``CompiledFunction._write_back``'s slot writes, with the slot kinds known in advance) and the new records
        taken (False: the state left the steady shape, a .grad dropped say; the writes are complete anyway, the
        next call takes the full path). Both as straight-line code over this state's slots, generated once: a
        small step's Python per call is most of what the facade adds to the program (W2: 37 slot checks and 18
        writes a call; 6.5 + 18 us as loops over the slot kinds).

        The records compared (``_record``): the objects whose identity holds while a slot's value does. A slot
        whose value may change with its sig unchanged (``_REREAD``: an argument, a closure tensor given a new
        array, a changed learning rate, a reseeded generator) is read again when its record differs, its sig
        compared with the key's; any other change sends the call down the full path."""
        n_args, base_slots = self.n_args, d.slots
        const = _namer(ns, "c")
        same = self._same(const)
        src = ["def inputs(d, args, kwargs):",
               "    if (d is not BASE and d.base is not BASE) or len(d.slots) != N:",
               "        return None",
               f"    if not ({' and '.join(same)}):",
               "        return None",
               "    sl = d.slots"]
        src += self._slot_checks(base_slots, const, range(n_args))
        src.append("    return L" if self.flat else "    return V")
        if args_plain:
            src += ["", "", "def fast(args):"] + self._fast_lines(base_slots, const, "None") + \
                ["    return L" if self.flat else "    return V"]
        src += ["", "", "def write(d, outs):", "    sl = d.slots", "    ok = True"]
        return "\n".join(src + self._write_source(base_slots, const)) + "\n"

    def _same(self, const, args_plain=False, modes=None) -> list:
        """The key's other components (``CompiledFunction._ambient``), compared in place, as conditions: the
        modules' training flags, the guarded statics (the reused walk's list: ``state.Plan.valid`` reads a group's
        again), the arguments' static parts (``args_plain``: ("T",) * n, which ``_fast_lines`` checks), the modes
        and the frozen guards (``modes``: the modes' expressions, each compared in place, else ``modes()``'s
        tuple)."""
        amb = self.ambient
        same = [f"{const(m)}.training is {const(m.training)}" for _, m in self.base.modules]
        if amb[1]:
            same.append(f"[v for _, v in {const(self.base.statics)}] == {const(list(amb[1]))}")
        if not args_plain:
            same.append(f"arg_statics(d, args, kwargs) == {const(amb[2:4])}" if amb[2] or amb[3] else
                        "not args and not kwargs")
        end = 4 + len(self._ns["modes"]())  # (the modes' components: ``CompiledFunction._ambient``)
        if modes is None:
            same.append(f"modes() == {const(amb[4:end])}")
        else:
            same += [f"{e} == {const(v)}" for e, v in zip(modes, amb[4:end])]
        same.append(f"d.frozen == {const(amb[end])}")
        if amb[end + 1]:  # (branches on dynamic arguments: this call's outcomes)
            same.append(f"branches(d, args, kwargs) == {const(amb[end + 1])}")
        return same

    def _fast_lines(self, base_slots, const, fail, modes=None) -> list:
        """``fast(args)``'s body: ``inputs`` for a call of plain tensor arguments, ``argd`` its discovery. An
        argument is what discover_cached makes a lone StorageSlot of (a base tensor over its own storage, no grad,
        no .grad), of the key's sig (``StorageSlot.sig``), over a storage no other argument nor the reused walk
        reaches; the rest is ``inputs``' (the key's argument statics are ("T",) * n for such a call). Each failed
        check a ``return {fail}`` (``modes``: as ``_same``'s); it leaves ``d`` and ``sl`` the argument
        discovery's."""
        n_args = self.n_args
        src = [f"    if len(args) != {n_args}:", f"        return {fail}"]
        for i in range(n_args):
            _, shape, dt, dev, _, _ = self.key[0][i]
            src += [f"    a{i} = args[{i}]",
                    f"    if type(a{i}) is not Tensor or a{i}._chain is not None or a{i}._base is not None or "
                    f"a{i}._requires_grad or a{i}._grad is not None:",
                    f"        return {fail}",
                    f"    s{i} = a{i}._storage",
                    f"    if type(s{i}) is not Storage or s{i}.inference:",
                    f"        return {fail}",
                    f"    v{i} = s{i}.array",
                    f"    if v{i}.shape != {const(shape)} or v{i}.dtype != {const(dt)} or s{i}.device != "
                    f"{const(dev)} or id(s{i}) in PST{''.join(f' or s{i} is s{j}' for j in range(i))}:",
                    f"        return {fail}"]
        src += ["    d = BASE", f"    if not ({' and '.join(self._same(const, True, modes))}):",
                f"        return {fail}",
                "    sl = ARGD.slots"]
        src += self._slot_checks(base_slots, const, (), fail)
        for i in range(n_args):
            src += [f"    t = sl[{i}]", f"    t.tensor, t.storage = a{i}, s{i}",
                    f"    R[{i}] = V[{i}] = L[{self.starts[i]}] = v{i}"]
        return src + ["    d = ARGD"]

    def fuse(self, plan, env) -> None:
        """``call(F, args, kwargs)``: the whole of a steady call of the compiled function ``F`` as one generated
        function, where it is plain (a program over flat leaves or values whose checks, if any, the host answers;
        a call without keyword arguments): the global switches the general path reads, the reused walk's checks
        (``plan``: ``state.Plan.check_lines``), ``inputs`` / ``fast``, the program called, the result built and
        ``write``'s body, inline. ``env``: the runner's names it reads (``CompiledFunction._fuse_env``). It returns
        ``env["MISS"]`` without doing anything where a check fails (the general path then takes the call).

        Why: a small step's Python per call is most of what the facade adds to its program. W1 (a 15 us program):
        5.1 us of Python as separate calls (the plan check, ``inputs``, ``_steady_call``, ``write``, the result),
        4.4 inline; what is left is the ~100 checks and writes themselves, each 30-60 ns."""
        entry, spec = self.entry, self.entry.spec
        if spec.checks and self.host is None:  # (flags read after the program: _steady_call)
            return
        ns = self._ns
        plan_lines, pns = plan.check_lines("MISS")
        clash = set(pns) & set(ns) - {"__builtins__"}
        if any(pns[k] is not ns[k] for k in clash):
            return
        ns.update(pns)
        ns.update(env)
        const = _namer(ns, "f")
        d, args_plain = self._gen
        base_slots = d.slots
        prog = entry.donating[0] if self.flat else entry.jitted
        ns.update(PLAN=plan, ENTRY=entry, PROG=prog.top, HOST=self.host, SELF=self)
        src = ["def call(F, args, kwargs):",
               "    if kwargs or TRACING[0] or PROF[0] is not None or STANCE[0] is not None or SAVED[0] is not None "
               "or F._plan is not PLAN:",
               "        return MISS"]
        if self.base.modules:
            src += ["    if GHOOKS:", "        return MISS"]
        checks = list(plan_lines)
        if plan.arrays or plan.groups:
            checks += ["    if not PLAN.rest():", "        return MISS"]
        if args_plain:
            checks += self._fast_lines(base_slots, const, "MISS", env["MODE_EXPRS"])
        else:
            checks += ["    if args:", "        return MISS", "    d = BASE",
                       f"    if not ({' and '.join(self._same(const, modes=env['MODE_EXPRS']))}):",
                       "        return MISS", "    sl = d.slots"]
            checks += self._slot_checks(base_slots, const, range(self.n_args), "MISS")
        # (a state entry set to None or a number where a check reads a tensor: the general path, as ``inputs``'s
        # caller does)
        src += ["    try:"] + ["    " + line for line in "\n".join(checks).split("\n")] + \
            ["    except AttributeError:", "        return MISS"]
        ins = "*L" if self.flat else "V"
        if self.host is not None:
            src += [f"    if not HOST({ins[-1]}):", "        return MISS"]
        src += [f"    if ENTRY.consts and stale(ENTRY) or not ({env['TOP_LEVEL']}):", "        return MISS",
                "    if CFG.verify_discovery:  # (the tests' self-check: the general path would pass it too)",
                f"        verify(F, SELF, {ins[-1]}, args, kwargs)",
                "    stats = F.stats",
                "    stats['calls'] += 1",
                "    stats['cache_hits'] += 1",
                "    COUNTERS['calls'] += 1",
                "    COUNTERS['cache_hits'] += 1",
                "    COUNTERS['steady_calls'] += 1",
                "    F._steady = None",
                f"    F._last = ({const(self.key)}, d)",
                "    F._ctx = (d, args, kwargs)",
                "    try:",
                f"        outs = PROG({ins})",
                "    finally:",
                "        F._ctx = None",
                "    SELF.held = None"]
        if self.single is not None:
            src.append(f"    result = from_array(outs[{spec.n_slot_out}], {const(self.single[0])}, "
                       f"{const(self.single[1])})")
            if spec.freed is not None:  # (a training step's loss: its graph freed by the backward inside)
                src.append(f"    result._requires_grad, result._grad_fn = True, {const(spec.freed)}")
        src += ["    ok = True"] + self._write_source(base_slots, const)[:-1]  # (its ``return ok`` left out)
        if self.single is None:
            src.append(f"    result = F._results(ENTRY, d, outs, {const(spec.moves[1])})")
        src += ["    if ok:", "        F._steady = SELF", "    return result"]
        exec(compile("\n".join(src) + "\n", "<functorch_lite.compile steady call>", "exec"), ns)
        self.call = ns["call"]

    def _slot_checks(self, base_slots, const, args, fail="None") -> list:
        """``inputs``' checks of the slots as source lines, each failed one a ``return {fail}`` (``args``: the
        argument slots, each read again; the others are left to the caller)."""
        n_args, src = self.n_args, []
        for i in self.check:
            k, s = self.kinds[i], base_slots[i]
            reread = f"self._reread({i}, sl[{i}])" if k in _REREAD else "False"
            if i < n_args:  # (an argument: read on every call)
                if i in args:
                    src.append(f"    if not {reread}:\n        return {fail}")
            elif k == _STORAGE:
                src.append(f"    if {const(s.storage)}.array is not R[{i}] and not {reread}:\n        return {fail}")
            elif k == _GRAD:
                src += [f"    g, r = {const(s.tensor)}._grad, R[{i}]",
                        "    if g is None:",
                        f"        if r is not None:\n            return {fail}",
                        "    elif r is None or g is not r[0] or g._storage is not r[1] or r[1].array is not r[2] or "
                        "r[1].zeros is not r[3] or g._chain is not r[4]:",
                        f"        return {fail}"]
                if i in self.fresh:
                    # a .grad the program replaces by a new tensor, kept by the caller (or viewed): its buffer is
                    # not donated but copied (held here: the tensor's _grad, the record, g and the argument; its
                    # storage: g, the record and the argument)
                    src += ["    elif getrefcount(g) > 4 or getrefcount(r[1]) > 3:",
                            f"        L[{self.starts[i]}] = copy(r[2])"]
            elif k == _OPT:
                o, p = const(s.opt), const(s.param)
                src += [f"    r, views = R[{i}], dget({o}.state, {p})",
                        f"    if {o}._ostate.get({p}) is not r[0] or views is not r[1] or views is not None and ("
                        "len(views) != len(r[2]) or not all(map(is_, map(SARR, views.values()), r[2]))):",
                        f"        return {fail}"]
            elif k == _HYPER:  # (the values, in the record while no option is a tensor)
                g = const(s.group)
                same = " and ".join([f"len(r) == {len(s.keys)}"] + [f"{g}[{const(key)}] is r[{j}]"
                                                                     for j, key in enumerate(s.keys)])
                src += [f"    r = R[{i}]",
                        f"    if not ({same}) and not hyper_new(sl[{i}], r) and not {reread}:",
                        f"        return {fail}"]
            elif k == _VIEW:  # (an argument of a call the whole walk found: read on every call)
                src.append(f"    if not {reread}:\n        return {fail}")
            else:
                src.append(f"    if {const(s.gen)}._key is not R[{i}] and not {reread}:\n        return {fail}")
        return src

    def _write_source(self, base_slots, const) -> list:
        """``write``'s body, as source lines."""
        n_args, src = self.n_args, []
        for j, (k, i, dt, bump) in enumerate(self.writers):
            s = base_slots[i]
            src.append(f"    v = outs[{j}]")
            if k == _STORAGE:
                st = f"sl[{i}].storage" if i < n_args else const(s.storage)
                src += [f"    st = {st}", "    st.array = v", f"    st.version += {bump!r}",
                        f"    R[{i}] = V[{i}] = L[{self.starts[i]}] = v"]
            elif k == _GRAD and i < n_args:
                src.append(f"    ok = self._grad_write({i}, sl[{i}], v, {const(dt)}, {bump!r}) and ok")
            elif k == _GRAD and i in self.fresh and dt is not None and self.counts[i] == 1:
                # (GradSlot.write of a new tensor, then its record: a plain tensor over its own storage)
                t = const(s.tensor)
                src += ["    if v is None:",
                        f"        ok = self._grad_write({i}, sl[{i}], v, {const(dt)}, {bump!r}) and ok",
                        "    else:",
                        f"        {t}._grad = None",
                        f"        g = {t}._grad = from_array(v, {const(dt)}, {t}._storage.device)",
                        "        st = g._storage",
                        f"        st.version = {bump!r}",
                        f"        R[{i}] = (g, st, v, None, None)",
                        f"        V[{i}] = L[{self.starts[i]}] = v"]
            elif k == _GRAD:
                t = const(s.tensor)
                cond = f"v is not None and r is not None and cur is r[0] and cur.dtype is {const(dt)} and " \
                    "r[4] is None" if self.counts[i] == 1 and i not in self.fresh else "False"
                src += [f"    cur, r = {t}._grad, R[{i}]",
                        f"    if {cond}:",
                        "        st = r[1]  # (the .grad the check found: a plain tensor over its own storage; a view's "
                        "is its base's: GradSlot.write writes through it)",
                        "        st.array = v",
                        f"        st.version += {max(1, bump)!r}",
                        f"        R[{i}] = (cur, st, v, st.zeros, None)",
                        f"        V[{i}] = L[{self.starts[i]}] = v",
                        "    else:",
                        f"        ok = self._grad_write({i}, sl[{i}], v, {const(dt)}, {bump!r}) and ok"]
            elif k == _OPT and i >= n_args:
                # (OptSlot.write: the state in place, the ``state[p]`` tensors over its arrays, versions bumped)
                o, p, c = const(s.opt), const(s.param), self.counts[i]
                src += [f"    r = R[{i}]",
                        f"    if v is not None and r[3] and type(v) in FLAT and dget({o}.state, {p}) is r[1]:",
                        f"        {o}._ostate[{p}] = v",
                        f"        {const(s)}._sig = (v, K[{i}])  # (its sig: the key's, the program's fixed point)",
                        "        arrays = []",
                        "        for name, t in r[1].items():",
                        "            a = getattr(v, name)",
                        "            st = t._storage",
                        "            st.array = a",
                        "            st.version += 1",
                        "            arrays.append(a)",
                        f"        R[{i}] = (v, r[1], tuple(arrays), True)",
                        f"        V[{i}] = v",
                        "        new = [x for x in v if x is not None]",
                        f"        if len(new) == {c}:",
                        f"            L[{self.starts[i]}:{self.starts[i] + c}] = new",
                        "        else:",
                        "            ok = False",
                        "    else:",
                        f"        ok = self._opt_write({i}, sl[{i}], v) and ok"]
            else:
                src.append(f"    ok = self._other_write({k}, {i}, sl[{i}], v) and ok")
        for i, z, dt, bump in self.entry.spec.zeros:
            # (the check found the record's .grad; over its own storage, holding the zeros it was left at, it keeps
            # them: GradSlot.write_zero's steady case, where only the version moves)
            zn, dn = const(z), const(dt)
            src += [f"    r = R[{i}]",
                    "    if r is not None and r[4] is None and r[3] is not None and r[3]() is r[2] and "
                    f"type(r[1]) is Storage and r[0].dtype is {dn} and r[0]._shape == {zn}.shape:",
                    f"        r[1].version += {bump!r}",
                    "    else:",
                    f"        s = sl[{i}]",
                    f"        s.write_zero({zn}, {dn}, {bump!r})",
                    f"        r, g = R[{i}], s.tensor._grad",
                    "        if r is None or g is not r[0] or r[1].array is not r[2] or r[1].zeros is not r[3]:",
                    f"            ok = self._take({i}, s) and ok  # (else known zeros in and out)"]
        src.append("    return ok")
        return src

    def snapshot(self, d) -> list:
        """What ``write`` is about to change (arrays, version counters, .grad tensors, optimizer states), for
        ``undo``: a program with checks is written back before its flags are read, so the host's write-back
        overlaps the program instead of waiting for it (W2: the flag read waited for the whole step, then the 18
        writes ran; 40-80 us of a 1.2 ms step). Only where ``undoable``."""
        sl, snap = d.slots, []
        for k, i, _, _ in self.writers:
            s = sl[i]
            if k == _STORAGE:
                st = s.storage
                snap.append((0, st, st.array, st.version, st.zeros))
            elif k == _GRAD:
                snap.append(_grad_snap(s.tensor))
            else:
                views = dict.get(s.opt.state, s.param)
                snap.append((2, s, s.opt._ostate.get(s.param), views,
                             [(t._storage, t._storage.array, t._storage.version, t._storage.zeros)
                              for t in views.values()] if views else ()))
        for i, _, _, _ in self.entry.spec.zeros:
            snap.append(_grad_snap(sl[i].tensor))
        return snap

    @staticmethod
    def undo(snap) -> None:
        """The state ``snapshot`` took, put back (in reverse: a slot written twice ends as it was first)."""
        for rec in reversed(snap):
            if rec[0] == 0:
                _restore_storage(rec[1:])
            elif rec[0] == 1:
                rec[1]._grad = rec[2]
                if rec[3] is not None:
                    _restore_storage(rec[3])
            else:
                _, s, state, views, storages = rec
                s._set(state)
                if views is None:
                    dict.pop(s.opt.state, s.param, None)
                else:
                    dict.__setitem__(s.opt.state, s.param, views)
                for st in storages:
                    _restore_storage(st)

    def _reread(self, i, s) -> bool:
        """Slot ``i`` (of a kind whose value may change with its sig unchanged) read again, when its sig is the
        key's."""
        return s.sig() == self.key[0][i] and self._take(i, s)

    def _take(self, i, s, v=None, read=True) -> bool:
        """Slot ``i``'s value (read afresh, or ``v``) into the inputs, and its record (False: its leaves no longer
        fit the program's)."""
        if read:
            v = s.get()
        leaves = _leaves(v)
        n = self.counts[i]
        if len(leaves) != n:
            return False
        start = self.starts[i]
        if n == 1:
            self.leaves[start] = leaves[0]
        elif n:
            self.leaves[start:start + n] = leaves
        self.vals[i] = v
        self.recs[i] = _record(self.kinds[i], s)
        return True

    # the writes ``write`` does not make inline
    def _grad_write(self, i, s, v, dt, bump) -> bool:
        if i in self.fresh:
            s.tensor._grad = None
        s.write(v, dt, bump)
        return self._take(i, s)

    def _opt_write(self, i, s, v) -> bool:
        s.write(v, self.key[0][i])
        return self._take(i, s, v, read=False)

    def _other_write(self, k, i, s, v) -> bool:
        if k == _HYPER:
            s.write(v)
        else:
            s.put(v)
        return self._take(i, s)


def _namer(ns, prefix):
    """``const(v)``: ``v`` put in the generated code's namespace ``ns`` under a new name, which it returns."""
    def const(v):
        name = f"{prefix}{len(ns)}"
        ns[name] = v
        return name
    return const


def _restore_storage(rec) -> None:
    st = rec[0]
    st.array, st.version, st.zeros = rec[1], rec[2], rec[3]


def _grad_snap(t) -> tuple:
    g = t._grad
    if g is None:
        return (1, t, None, None)
    st = g._storage
    return (1, t, g, (st, st.array, st.version, st.zeros))


def _copy(a):
    return jax.numpy.array(a, copy=True)


def _plain(t) -> bool:
    """A base tensor over its own storage that needs no gradient and has no .grad: an argument ``fast`` takes."""
    return type(t) is S.Tensor and t._chain is None and t._base is None and not t._requires_grad and \
        t._grad is None and type(t._storage) is Storage and not t._storage.inference


def _hyper_new(s, r) -> bool:
    """A HyperSlot with a tensor option: its record (values and the tensors' arrays) still holds."""
    if len(r) == len(s.keys):
        return False
    new = _record(_HYPER, s)
    return len(new) == len(r) and all(map(is_, new, r))
