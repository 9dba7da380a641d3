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

from operator import is_
from sys import getrefcount

import jax

from . import slots as S

_STORAGE, _GRAD, _OPT, _HYPER, _RNG, _VIEW = range(6)
_KIND = {S.StorageSlot: _STORAGE, S.GradSlot: _GRAD, S.OptSlot: _OPT, S.HyperSlot: _HYPER, S.RngSlot: _RNG,
         S.ArgViewSlot: _VIEW}
# the kinds of slot whose value may change with their sig unchanged: re-read, sig compared with the key's
_REREAD = (_STORAGE, _HYPER, _RNG, _VIEW)  # (an ArgViewSlot is an argument: read on every call)
_ARRAY = type(jax.numpy.zeros(()))
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
        return (s.opt._ostate.get(s.param), views, tuple([t._storage.array for t in ts]),
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
                 "starts", "counts", "check", "writers", "single", "fresh")

    def __init__(self, entry, key, ambient, d, flat: bool):
        """After a call of ``entry`` whose key was ``key``, its results written back: the slots' values now are
        the next call's inputs. ``flat``: the program takes flat leaves (``entry.donating``), else the values."""
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
        if len(spec.result_meta) == 1 and spec.result_meta[0][0] == "t" and not spec.effects and \
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

    def inputs(self, d, ambient):
        """The program's inputs for this call (flat leaves or per-slot values) when it is the steady state, else
        None."""
        if (d is not self.base and d.base is not self.base) or len(d.slots) != self.n or ambient != self.ambient:
            return None
        slots, recs, kinds, n_args = d.slots, self.recs, self.kinds, self.n_args
        for i in self.check:
            s, r, k = slots[i], recs[i], kinds[i]
            if i >= n_args:
                if k == _STORAGE:
                    if s.storage.array is r:
                        continue
                elif k == _GRAD:
                    g = s.tensor._grad
                    if g is None:
                        if r is None:
                            continue
                    elif r is not None and g is r[0] and g._storage is r[1] and r[1].array is r[2] and \
                            r[1].zeros is r[3] and g._chain is r[4]:
                        # a .grad the program replaces by a new tensor, kept by the caller (or viewed): its buffer
                        # is not donated but copied (held here: s.tensor._grad, the record, g and the argument; its
                        # storage: g, the record and the argument)
                        if i in self.fresh and (getrefcount(g) > 4 or getrefcount(r[1]) > 3):
                            self.leaves[self.starts[i]] = jax.numpy.array(r[2], copy=True)
                        continue
                elif k == _OPT:
                    views = dict.get(s.opt.state, s.param)
                    if s.opt._ostate.get(s.param) is r[0] and views is r[1] and (
                            not views or len(views) == len(r[2]) and
                            all(map(is_, [t._storage.array for t in views.values()], r[2]))):
                        continue
                elif k == _HYPER:
                    if len(r) == len(s.keys):  # (no tensor option: the values are the record)
                        if all(map(is_, map(s.group.__getitem__, s.keys), r)):
                            continue
                    else:
                        new = _record(k, s)
                        if len(new) == len(r) and all(map(is_, new, r)):
                            continue
                elif s.gen._key is r:
                    continue
            if not (k in _REREAD and s.sig() == self.key[0][i] and self._take(i, s)):
                return None
        return self.leaves if self.flat else self.vals

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

    def write(self, d, outs) -> bool:
        """Put the program's outputs in place (``CompiledFunction._write_back``'s slot writes) and take the new
        records. False: the state left the steady shape (a .grad dropped, say); the writes are complete anyway,
        the next call takes the full path."""
        slots, recs, leaves, starts, vals = d.slots, self.recs, self.leaves, self.starts, self.vals
        ok = True
        for (k, i, dt, bump), v in zip(self.writers, outs):
            s = slots[i]
            if k == _STORAGE:
                st = s.storage
                st.array = v
                st.version += bump
                recs[i] = vals[i] = leaves[starts[i]] = v
            elif k == _GRAD:
                cur = s.tensor._grad
                r = recs[i]
                if v is not None and r is not None and cur is r[0] and self.counts[i] == 1 and cur.dtype is dt and \
                        i not in self.fresh:
                    st = r[1]  # (the .grad the check found: a plain tensor over its own storage)
                    st.array = v
                    st.version += max(1, bump)
                    recs[i] = (cur, st, v, st.zeros, None)
                    vals[i] = leaves[starts[i]] = v
                else:
                    if i in self.fresh:
                        s.tensor._grad = None
                    s.write(v, dt, bump)
                    ok = self._take(i, s) and ok
            elif k == _OPT:
                r = recs[i]
                if v is not None and r[3] and type(v) in _FLAT_STATES and dict.get(s.opt.state, s.param) is r[1]:
                    # (OptSlot.write: the state in place, the ``state[p]`` tensors over its arrays, versions bumped)
                    s.opt._ostate[s.param] = v
                    s._sig = (v, self.key[0][i])  # (its sig: the key's, the program's fixed point)
                    arrays = []
                    for name, t in r[1].items():
                        a = getattr(v, name)
                        st = t._storage
                        st.array = a
                        st.version += 1
                        arrays.append(a)
                    recs[i] = (v, r[1], tuple(arrays), True)
                    vals[i] = v
                    new = [x for x in v if x is not None]
                    if len(new) == self.counts[i]:
                        leaves[starts[i]:starts[i] + len(new)] = new
                    else:
                        ok = False
                else:
                    s.write(v, self.key[0][i])
                    ok = self._take(i, s, v, read=False) and ok
            else:
                if k == _HYPER:
                    s.write(v)
                else:
                    s.put(v)
                ok = self._take(i, s) and ok
        for i, z, dt, bump in self.entry.spec.zeros:
            s = slots[i]
            s.write_zero(z, dt, bump)
            r, g = recs[i], s.tensor._grad
            if r is None or g is not r[0] or r[1].array is not r[2] or r[1].zeros is not r[3]:
                ok = self._take(i, s) and ok  # (else known zeros in and out: only the version moved)
        return ok
