"""The donating program of a function with index checks (``ops/_deferred``), its rewritten buffers selected where
they are made.

A failed check must leave every buffer the program rewrites as it was: ``runner._with_checks`` returns
``select_n(ok, old, new)`` for each. Selected at the end only, the updates that read a new value (Adam's parameter
step reads the new moments) compute it again from the old buffer, which is then read after its in-place write, and
XLA copies each such buffer first (W2, an MLP Adam step: twelve extra copies of the moments, a 15% slower step).

``gated(closed)`` evaluates the traced program again (as ``jaxpr_as_fun`` does) with each such new value selected
as soon as it is made: the ``ok`` flag is computed as soon as its checks are (those equations move up), a new value
made after it becomes ``select_n(ok, old, new)`` for all of its uses, inside the ``jit`` calls that make it
(inlined, as XLA inlines them), and its final select is dropped. The outputs are the same: where ``ok`` holds every
select gives the new value; where it does not, every output selected this way is the old value either way, one
selected against a failed check's snapshot (a buffer written before that check) is that snapshot, made at that
check and so before any value selected here (selected once every check is made), and the call raises and
discards the rest
(``runner._check_failed``)."""
from __future__ import annotations

import jax
from jax._src import core as _core
from jax._src import source_info_util as _si
from jax.extend import core as _jex

try:
    from jax._src.pjit import jit_p as _JIT
    from jax._src.sharding_impls import UnspecifiedValue as _Unspecified
except ImportError:  # pragma: no cover - another JAX: jit calls are left whole (the select stays at the end)
    _JIT = _Unspecified = None

_SELECT = jax.lax.select_n_p


def gated(closed):
    """``jaxpr_as_fun(closed)``, with the checks' selects moved to where the values are made (when the program
    has them; else the plain function)."""
    jaxpr = closed.jaxpr
    plan = _plan(jaxpr)
    if plan is None:
        return _jex.jaxpr_as_fun(closed)
    ok_var, finals, gates, order = plan
    consts = closed.consts

    def fun(*args):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        early: set = set()
        ok = [None]
        top = {v: env[o] for v, o in gates.items()}

        def gate(v, val):
            if ok[0] is not None and v in top:
                early.add(v)
                return jax.lax.select_n(ok[0], top[v], val)
            return val

        for e in order:
            fin = finals.get(e)
            if fin is not None and fin in early:  # (selected where it was made)
                env[e.outvars[0]] = env[fin]
                continue
            _eval(e, env, ok, gate, {v: v for v in e.outvars if v in top})
            if ok[0] is None and ok_var in env:
                ok[0] = env[ok_var]
        return [_read(env, v) for v in jaxpr.outvars]
    return fun


def _plan(jaxpr):
    """(the ok flag's variable, {final select equation: the new value it selects}, {new value: the input it
    replaces}, the equations in the order to run them) or None when the program has no such selects."""
    outs = {v for v in jaxpr.outvars if isinstance(v, _core.Var)}
    ins = set(jaxpr.invars)
    finals, olds, ok_var = {}, {}, None
    for e in jaxpr.eqns:
        if e.primitive is not _SELECT or len(e.invars) != 3 or e.outvars[0] not in outs:
            continue
        p, old, new = e.invars
        if not (isinstance(p, _core.Var) and p.aval.shape == () and p.aval.dtype == bool and old in ins and
                isinstance(new, _core.Var) and new not in ins):
            continue
        if ok_var is not None and p is not ok_var:
            return None
        ok_var = p
        finals[e] = new
        olds.setdefault(new, set()).add(old)
    if ok_var is None:
        return None
    # a value selected against two inputs (one array returned for two buffers) keeps its selects at the end
    gates = {v: next(iter(o)) for v, o in olds.items() if len(o) == 1}
    finals = {e: v for e, v in finals.items() if v in gates}
    return ok_var, finals, gates, _hoisted(jaxpr, ok_var)


def _hoisted(jaxpr, ok_var) -> list:
    """The equations, those that compute ``ok_var`` each moved up to just after the last of its inputs is made."""
    made = {v: e for e in jaxpr.eqns for v in e.outvars}
    cone, todo = set(), [ok_var]
    while todo:
        e = made.get(todo.pop())
        if e is not None and id(e) not in cone and not e.effects:
            cone.add(id(e))
            todo.extend(v for v in e.invars if isinstance(v, _core.Var))
    have = set(jaxpr.constvars) | set(jaxpr.invars)
    waiting = [e for e in jaxpr.eqns if id(e) in cone]
    order: list = []

    def flush():
        moved = True
        while moved:
            moved = False
            for e in list(waiting):
                if all(not isinstance(v, _core.Var) or v in have for v in e.invars):
                    waiting.remove(e)
                    order.append(e)
                    have.update(e.outvars)
                    moved = True
    flush()
    for e in jaxpr.eqns:
        if id(e) in cone:
            continue
        order.append(e)
        have.update(e.outvars)
        flush()
    order.extend(waiting)  # (not reached: every input of the cone is made by some equation)
    return order


def _read(env, v):
    return v.val if isinstance(v, _core.Literal) else env[v]


def _inlinable(e) -> bool:
    p = e.params
    return (_JIT is not None and e.primitive is _JIT and not e.effects and
            all(isinstance(s, _Unspecified) for s in tuple(p["in_shardings"]) + tuple(p["out_shardings"])))


def _eval(e, env, ok, gate, want):
    """One equation into ``env``; ``want``: its outputs to select (``gate``) as they are made, inside it when it is
    a ``jit`` call (inlined) and the flag is known."""
    ins = [_read(env, v) for v in e.invars]
    if want and ok[0] is not None and _inlinable(e):
        inner = e.params["jaxpr"]
        ij = inner.jaxpr
        # each wanted output's inner variable, when it is made inside (not an input passed through) and returned once
        count: dict = {}
        for v in ij.outvars:
            count[v] = count.get(v, 0) + 1
        sub = {iv: ov for iv, ov in zip(ij.outvars, e.outvars) if ov in want and isinstance(iv, _core.Var) and
               iv not in ij.invars and iv not in ij.constvars and count[iv] == 1}
        if sub:
            ienv = dict(zip(ij.constvars, inner.consts))
            ienv.update(zip(ij.invars, ins))
            with _si.extend_name_stack(e.params.get("name", "jit")):
                for ie in ij.eqns:
                    _eval(ie, ienv, ok, lambda v, val: gate(sub[v], val), {v: v for v in ie.outvars if v in sub})
            done = set(sub.values())
            for iv, ov in zip(ij.outvars, e.outvars):
                val = _read(ienv, iv)
                env[ov] = val if ov in done else (gate(ov, val) if ov in want else val)
            return
    name_stack = _si.current_name_stack() + e.source_info.name_stack
    with _si.user_context(e.source_info.traceback, name_stack=name_stack), e.ctx.manager:
        ans = e.primitive.bind(*ins, **e.primitive.get_bind_params(e.params))
    outs = ans if e.primitive.multiple_results else [ans]
    for v, val in zip(e.outvars, outs):
        env[v] = gate(v, val) if v in want else val
