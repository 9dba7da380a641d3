"""Per-parameter state written by hand (``optimizer.state[p][...] = ...``), read as PyTorch's optimizers read it.

PyTorch's ``optimizer.state[p]`` is a plain dict its step reads and writes: a user may put entries of their own in
it (timm's Lookahead keeps a slow buffer there), set one to None (``momentum_buffer = None`` restarts SGD's
momentum from the next gradient), write a parameter's whole state before its first step, or assign a new dict.
Here the state lives in the optax state (``Optimizer._ostate``) and ``state[p]`` holds tensors viewing it; the
step reads the dict back where it changed (``Optimizer._sync_from_views``: nothing more than before when nobody
edited it). What the transform does not know is left to the user, as torch's step leaves it:

- an entry of the user's own (a name the transform's state does not expose): kept, never read nor written;
- None (or a number): SGD's ``momentum_buffer`` restarts from the gradient (``_restart_entry``), the new buffer
  a new tensor in the dict after the step; the other optimizers refuse it, as torch's step fails on it;
- a parameter without state whose dict holds entries: its state is read from them at its first step, as
  ``load_state_dict`` reads a saved one (``_state_from``), the user's tensors then updated in place;
- a new dict assigned to ``state[p]``: the parameter's state from then on (read as above at its next step);
- the dict emptied (``state[p].clear()``): a fresh state, as torch's ``len(state) == 0`` (``_sync_from_views``);
- an entry the step reads deleted from it (or an option that adds one switched on after the first step):
  ``_missing_entry``: torch's ``KeyError(name)`` (the first its step reads, ``_torch_reads``), raised before
  anything is updated; SGD's ``state.get('momentum_buffer')`` restarts the buffer from the gradient, Muon's
  ``'momentum_buffer' not in state`` from zeros, the new buffer put back into the dict after the step;
- a ``step`` tensor of another dtype (float64, int64: loaded, or written by hand): kept, as torch keeps it
  (``_entry_dtype``; ``load_state_dict`` casts it to float32 for a fused or capturable group, as torch's).

The step finds such entries where it reads the dict back (its slow path, taken only where the dict's tensors are
not the state's own arrays) and marks the parameter (``_mark_odd``); ``state[p] = d`` and ``load_state_dict``
mark it at once. A mark makes ``_refresh_views`` the careful ``_write_views`` (an instance attribute: the
unmarked step's calls are the calls they were) and the optimizer's steps eager under ``compile``: its compile key
changes (a new walk: ``_hooks_changed``) and tracing its step is a graph break (``_hooks._run_step_hooks``), as a
compiled step keeps tensors only, the optax state's leaves. The step that leaves the dict in the usual layout
again (the restarted buffer in place, the user's entries gone) lifts the mark. While nothing is marked, the step
costs what it did.

Not handled under ``compile``: a None or a non-tensor entry put into ``state[p]`` between two compiled calls
(with no eager step between): the compiled call's own check of the state dicts (``_compile/steady.py``) reads
every entry as a tensor, before anything here runs. A tensor entry (Lookahead's) is found by the next call.
"""
from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor.tensor import Tensor
from ._hooks import _STEP_HOOKS


def _traced(p) -> bool:
    return isinstance(p._array, jax.core.Tracer)


class StateEdits:
    """``Optimizer``'s reading of a hand-edited ``state[p]`` (the module docstring)."""

    # fields of the transform's state that torch's ``state[p]`` does not hold (SGD's step count): a user's entry of
    # that name is theirs
    _hidden_state: tuple = ()

    def _restart_entry(self, name: str, inner) -> dict:
        """The state replacing entry ``name`` set to None (SGD's momentum buffer: restarted by the step). Torch's
        other optimizers fail on a None state tensor in their step, as this does."""
        raise AttributeError(f"{type(self).__name__}.step(): state[{name!r}] of a parameter is None (PyTorch's step "
                             "fails on it too: 'NoneType' object has no attribute ...); delete the parameter's "
                             "state (del optimizer.state[p]) to start it afresh")

    # the order torch's step reads its state entries in, where it is not the group's names with ``step`` last
    _torch_reads: tuple = ()

    def _missing_entry(self, name: str, inner) -> dict:
        """The state replacing entry ``name`` the step reads but ``state[p]`` lacks: torch's step reads it with
        ``state[name]``, a ``KeyError``; SGD (``state.get``) and Muon (``not in state``) restart it."""
        raise KeyError(name)

    def _missing(self, views, inner, reads) -> dict:
        """``_missing_entry``'s replacements for the entries of ``reads`` that ``views`` lacks, in torch's reading
        order (its first missing one raises)."""
        order = self._torch_reads or tuple(n for n in reads if n != "step") + ("step",)
        out = {}
        for name in sorted((n for n in reads if n not in views), key=lambda n: order.index(n) if n in order else 0):
            out.update(self._missing_entry(name, inner))
        return out

    def _ours(self, name, inner) -> bool:
        return name in inner._fields and name not in self._hidden_state

    def _entry_dtype(self, p, name, v, arr, old, f32_step=False):
        """The dtype the state keeps entry ``name`` (the value ``v``, its array ``arr``) in: a ``step`` tensor's own
        (torch keeps a loaded or written one as it is: float64, int64), but float32 where ``f32_step`` (a fused or
        capturable group's load); any other, the state's (the parameter's, float32 for a 0-d one)."""
        if name == "step" and isinstance(v, Tensor) and not f32_step:
            return arr.dtype
        return old.dtype if old is not None else jnp.float32 if name in self._scalar_state else p._array.dtype

    def _state_from(self, p, key, values, f32_step=False) -> tuple:
        """(state, odd): ``p``'s transform state read from the entries ``values`` (a loaded or hand-written
        ``state[p]``), as torch's step would read them; ``odd``: whether they hold entries the usual layout does
        not (the user's own, None)."""
        from .optimizer import placed_like
        inner = self._init_state(key, p._array)
        repl, restart, odd = {}, {}, False
        for name, v in values.items():
            if not self._ours(name, inner):
                odd = True
                continue
            if v is None:
                odd = True
                restart.update(self._restart_entry(name, inner))
                continue
            old = getattr(inner, name)
            arr = v._array if isinstance(v, Tensor) else jnp.asarray(np.asarray(v))
            # (an entry of an option that is off here, as amsgrad: held, passed through, as torch keeps it)
            repl[name] = jnp.array(arr, dtype=self._entry_dtype(p, name, v, arr, old, f32_step), copy=True)
        if repl and "step" in inner._fields and ("step" in self._hidden_state or "step" not in repl):
            repl["step"] = jnp.ones((), inner.step.dtype)  # (SGD keeps no step: a buffer means "not the first step")
        repl.update(restart)
        return placed_like(inner._replace(**repl), p._array), odd

    def _adopt(self, p, key, views) -> None:
        """The first step of a parameter whose ``state[p]`` the user filled: its state read from it, and the step's
        results written into the user's tensors (``_write_views``, which the mark selects)."""
        if _traced(p):  # (compile's first step would start from the transform's init: _compile/runner._primed)
            from ..ops._dispatch import data_dependent_error
            raise data_dependent_error(f"{type(self).__name__}.step() over a parameter whose state[p] was written "
                                       "by hand before its first step")
        st, _ = self._state_from(p, key, views)
        self._put_state(p, st)
        self._mark_odd(p, True)

    def _read_views(self, p, views, inner, reads=None) -> None:
        """``_sync_from_views`` where an entry differs from the optax state's (written by the user) or one the step
        ``reads`` is missing (deleted: ``_missing``, which raises before anything is changed)."""
        repl, odd = {}, False
        if reads and any(n not in views for n in reads):
            repl, odd = self._missing(views, inner, reads), True
        for name, t in views.items():
            if not self._ours(name, inner):
                odd = True
                continue
            old = getattr(inner, name)
            if t is None:
                odd = True
                repl.update(self._restart_entry(name, inner))
                continue
            if isinstance(t, Tensor):
                arr = t._array
            else:  # (a number: read as a 0-d value; the step puts a tensor in its place)
                odd = True
                arr = jnp.asarray(np.asarray(t))
            dt = self._entry_dtype(p, name, t, arr, old)
            if old is None or arr.dtype != dt:
                odd = True  # (the step writes its values back cast to the tensor's dtype: _write_views)
            if arr is not old:
                repl[name] = jnp.array(arr, dtype=dt, copy=True)
        if repl:
            self._put_state(p, inner._replace(**repl))
        if not _traced(p):
            self._mark_odd(p, odd)

    def _write_views(self, p, views, group) -> None:
        """``_refresh_views`` of a marked parameter: its entries from the optax state, the user's own left alone, a
        None (restarted) entry replaced by a new tensor, as torch's step puts its new buffer in the dict (a deleted
        one, restarted, put back so)."""
        inner = self._ostate[p]
        traced = _traced(p)
        for name, t in list(views.items()):
            if not self._ours(name, inner):
                continue
            arr = getattr(inner, name)
            if arr is None:
                continue
            if isinstance(t, Tensor):
                want = t._array.dtype
                t._write(arr if arr.dtype == want else arr.astype(want))
            elif not traced:  # (inside a trace the dict keeps its None: the trace is undone)
                dict.__setitem__(views, name, Tensor._from_array(arr, self._view_dtype(p, name, arr), p.device))
        if not traced:
            for name in self._read_fields(group):
                if name not in views and getattr(inner, name, None) is not None:
                    arr = getattr(inner, name)
                    dict.__setitem__(views, name, Tensor._from_array(arr, self._view_dtype(p, name, arr), p.device))
            self._mark_odd(p, self._views_odd(p, views))

    def _views_odd(self, p, views) -> bool:
        """Whether ``views`` (``p``'s state dict) is not the usual layout: an entry of the user's own, None or a
        number, a tensor of another dtype than the state's; or entries for a parameter without state."""
        inner = self._ostate.get(p)
        if inner is None:
            return bool(views)
        for name, v in views.items():
            if not self._ours(name, inner) or not isinstance(v, Tensor):
                return True
            old = getattr(inner, name)
            if old is None or v._array.dtype != old.dtype:
                return True
        return False

    def _mark_odd(self, p, odd: bool) -> None:
        """Mark ``p``'s state dict as edited out of the usual layout (or lift the mark). The first mark makes the
        optimizer's steps eager under ``compile`` (its key changes; ``_STEP_HOOKS`` makes ``step`` look at it) and
        ``_refresh_views`` this instance's ``_refresh_edited``; the last one lifted undoes both."""
        d = self.__dict__
        marks = d.get("_odd")
        if odd:
            if marks is None:
                marks = d["_odd"] = {}
                weakref.finalize(self, _STEP_HOOKS.pop, ("state", id(self)), None)
            if p in marks:
                return
            marks[p] = True
            if len(marks) > 1:
                return
            _STEP_HOOKS[("state", id(self))] = True
            d["_refresh_views"] = self._refresh_edited
        else:
            if not marks or p not in marks:
                return
            del marks[p]
            if marks:
                return
            _STEP_HOOKS.pop(("state", id(self)), None)
            d.pop("_refresh_views", None)
        self._hooks_changed()

    def _clear_odd(self) -> None:
        """Every mark lifted (the state mapping emptied or replaced)."""
        marks = self.__dict__.get("_odd")
        for p in list(marks or ()):
            self._mark_odd(p, False)

    def _refresh_edited(self, p, group, names=None) -> None:
        """``_refresh_views`` while some parameter is marked (an instance attribute then: the step's call is the
        same call)."""
        views = dict.get(self.state, p)
        if views and p in self.__dict__.get("_odd", ()):
            self._write_views(p, views, group)
        else:
            type(self)._refresh_views(self, p, group, names)

    def _state_assigned(self, p, value) -> None:
        """``optimizer.state[p] = value``: ``value`` is ``p``'s state from now on, read at its next step."""
        if not isinstance(value, dict):
            return
        self._ostate.pop(p, None)
        self._mark_odd(p, bool(value))
