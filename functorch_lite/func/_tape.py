"""A ``torch.func`` call on the facade's tape: eager autograd through ``vmap``, ``grad``, ``vjp``, ``jvp``,
``jac*`` and ``hessian``.

With the tape on (grad mode, outside any transform), a transform call whose inputs or captured tensors (a
module's parameters, tensors in a closure) require grad is recorded as ONE node: the whole call runs under
``jax.vjp`` w.r.t. those tensors' arrays (captured ones are swapped into their storages while it runs), and the
node's backward is the pullback. So ``.backward()`` through a transform's results reaches what they were computed
from, as torch's does: a gradient penalty (``grad(D)(x).norm()``), MAML's inner step (``params - lr * grad(loss)
(params)``, whose outer gradient has the second-order term), a loss on a vmapped model. The captured tensors are
found by ``compile``'s walk from the function and its other arguments (``_compile.state.discover``); only those
the call actually read get an edge (they read a private, watched storage while it runs). torch's grad_fn is the
last op's (``AddBackward0``); this node is ``VmapBackward0`` / ``GradBackward0`` / ... (one per transform;
``jacrev``/``jacfwd``'s show torch's ``ViewBackward0``). Only the results that depend differentiably on a tensor
that requires grad get the node, and only the tensors some such result depends on get an edge (``_reach``: the
data flow of the pullback's program), as torch's results are connected only through the ops applied to the outer
tensors (``grad`` of a linear function: a constant, ``requires_grad=False``). Under ``create_graph=True`` the
node's backward is itself a recorded call (``TransformBackward.apply_tensors``): second and higher derivatives
through a transform's results (a PINN's residual of ``vmap(grad(net))``, a gradient penalty's parameter
gradients)."""
from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Literal as _Literal

from .._tensor import storage as _storage
from ..autograd import grad_mode as _gm
from ..autograd.graph import Node, edge_of

_ARRAY = _storage.Storage.__dict__["array"]
# > 0 while a call recorded as one node runs under its ``jax.vjp``: the function runs as under a differentiating
# transform, so what it cuts from the graph (``detach()``, a ``no_grad`` region) is cut from JAX's
# differentiation, as torch's autograd cuts it (a target network's output, ``x.detach() * x``)
DIFFERENTIATED = [0]
_READ: set = set()  # ids of the watched storages read during the call


class _Watched(_storage.Storage):
    """The storage a captured tensor reads while a recorded call runs: reads of its array are noted."""
    __slots__ = ()

    @property
    def array(self):
        _READ.add(id(self))
        return _ARRAY.__get__(self)

    @array.setter
    def array(self, v):
        _ARRAY.__set__(self, v)


class TransformBackward(Node):
    """The node of a transform call recorded by eager autograd: its backward is the call's ``jax.vjp``
    pullback. ``_prune`` (the ``torch.func`` transforms' nodes): only the results whose value depends
    differentiably on a tensor that requires grad get the node (``_reach``), and only those tensors get an edge,
    as torch's graph connects a transform's outputs only through the ops applied to the outer tensors
    (``grad`` of a linear function is a constant: no grad_fn, ``requires_grad=False``)."""
    __slots__ = ("_pullback", "_picks", "_live", "_rerun")
    _prune = False

    def apply_custom(self, cts):
        return self._pull(self._pullback, cts)

    def _pull(self, pullback, cts):
        """The inputs' gradients (torch's convention: conjugates of JAX's for complex) from ``pullback`` of the
        outputs' cotangents (arrays; None = zero)."""
        full = []
        for c, (shape, dt) in zip(cts, self._out_meta):
            if not (dt.is_floating_point or dt.is_complex):
                full.append(np.zeros(tuple(shape), jax.dtypes.float0))
            elif c is None:
                full.append(jnp.zeros(tuple(shape), dt.jnp))
            else:
                c = c if c.dtype == dt.jnp else c.astype(dt.jnp)
                full.append(jnp.conj(c) if dt.is_complex else c)
        gm, gc = pullback(full)
        out = []
        for k, i in self._picks:
            g = (gm, gc)[k][i]
            out.append(jnp.conj(g) if jnp.iscomplexobj(g) else g)
        return out

    def apply_tensors(self, cts):
        """``create_graph=True``: the backward as a recorded transform call over (the inputs, the cotangents). The
        saved pullback's residuals are constants, so the call runs again under ``jax.vjp`` from the inputs'
        values at the forward (the same random draws), and its pullback of ``cts`` is recorded as one node
        (``record``, so third and higher orders go the same way)."""
        from .._tensor.tensor import Tensor
        picks = self._picks
        if not picks:  # (``edgeless``: no gradient to give)
            return []
        pure, diff_arrays, cap_arrays, draws = self._rerun
        n = len(picks)
        arrays = [(diff_arrays, cap_arrays)[k][i] for k, i in picks]
        tensors = list(self._inputs)
        slots = []  # the output positions whose cotangent is an argument of the call
        for j, c in enumerate(cts):
            if c is None or not (self._out_meta[j][1].is_floating_point or self._out_meta[j][1].is_complex):
                continue
            if not isinstance(c, Tensor):
                c = Tensor._from_array(c, self._out_meta[j][1], tensors[0]._storage.device)
            slots.append(j)
            tensors.append(c)
            arrays.append(c._array)

        def compute(arrs):
            d, c = list(diff_arrays), list(cap_arrays)
            for (k, i), a in zip(picks, arrs[:n]):
                (d, c)[k][i] = a
            with keys_as(draws):
                _, pullback, _ = jax.vjp(pure, d, c, has_aux=True)
            full = [None] * len(self._out_meta)
            for j, a in zip(slots, arrs[n:]):
                full[j] = a
            return self._pull(pullback, full), []
        outs, _, node = record(compute, arrays, tensors, [], None, {}, _backward_cls(type(self)), captured=False)
        res = [Tensor._from_array(a, t.dtype, t._storage.device) for a, t in zip(outs, self._inputs)]
        attach(node, res)
        return res


class VmapBackward0(TransformBackward):
    __slots__ = ()
    _prune = True


class GradBackward0(TransformBackward):
    __slots__ = ()
    _prune = True


class VjpBackward0(TransformBackward):
    __slots__ = ()
    _prune = True


class JvpBackward0(TransformBackward):
    __slots__ = ()
    _prune = True


class LinearizeBackward0(TransformBackward):
    __slots__ = ()
    _prune = True


class JacrevBackward0(TransformBackward):
    __slots__ = ()
    _prune = True


class JacfwdBackward0(TransformBackward):
    __slots__ = ()
    _prune = True


# torch's jacrev / jacfwd (and hessian) results are views of the one Jacobian they compute: ViewBackward0
JacrevBackward0.__name__ = JacrevBackward0.__qualname__ = "ViewBackward0"
JacfwdBackward0.__name__ = JacfwdBackward0.__qualname__ = "ViewBackward0"
_BACKWARDS: dict = {}


def _backward_cls(cls) -> type:
    """The node class of ``cls``'s backward recorded under ``create_graph=True`` (``VmapBackward0``'s:
    ``VmapBackwardBackward0``, as ``higher_order`` names a backward op's)."""
    b = _BACKWARDS.get(cls)
    if b is None:
        from ..autograd.higher_order import _BACKWARD_NUMBER
        name = _BACKWARD_NUMBER.sub("Backward", cls.__name__) + "Backward0"
        b = _BACKWARDS[cls] = type(name, (TransformBackward,), {"__slots__": (), "_prune": True})
    return b


def recording() -> bool:
    """Whether a transform called now is recorded (grad mode on, not inside another transform)."""
    st = _gm._state
    return st.enabled and not st.func


def _candidates(func, others: list, kwargs: dict) -> list:
    """(base tensor, [it and its views]) for the tensors that require grad reachable from the call (see above),
    one entry per storage: what ``compile``'s walk finds from the function and its other arguments (a
    module's parameters, closures, defaults, globals, class attributes, user modules' attributes...)."""
    from .._compile import slots as SL, state as S
    d = S.discover(func, tuple(others), kwargs)
    out = []
    for s in d.slots:
        if type(s) is SL.StorageSlot:
            b = s.tensor
            if b._requires_grad and (b.dtype.is_floating_point or b.dtype.is_complex) and \
                    type(b._storage) is _storage.Storage:
                out.append((b, [b, *s.aliases]))
    return out


_LAST_READ: dict = {}  # id(function) -> (function, whether its last recorded call read a captured tensor)


def _last_read(func) -> bool:
    e = _LAST_READ.get(id(func))
    return e is not None and e[0] is func and e[1]


def _note_read(func, read: bool) -> None:
    if len(_LAST_READ) > 256:
        _LAST_READ.clear()
    _LAST_READ[id(func)] = (func, read)


def _watching(compute, arrays, caps, cap_arrays, holder, differentiated=True):
    """``compute(arrays)`` with each captured tensor (and its views) reading a private storage holding
    ``cap_arrays`` (traced, under jax.vjp); ``holder['read']``: which were read. Aliases made by detach() /
    .data keep the real storage (no gradient through them, as in torch). ``differentiated``: under jax.vjp (see
    ``DIFFERENTIATED``)."""
    olds = [(t, t._storage) for _, group in caps for t in group]
    tmps = [_Watched(a, b._storage.device) for (b, _), a in zip(caps, cap_arrays)]
    _READ.clear()
    DIFFERENTIATED[0] += differentiated
    try:
        for (_, group), tmp in zip(caps, tmps):
            for t in group:
                t._storage = tmp
        return compute(arrays)
    finally:
        DIFFERENTIATED[0] -= differentiated
        for t, st in olds:
            t._storage = st
        holder["read"] = [id(tmp) in _READ for tmp in tmps]
        _READ.clear()


def record(compute, arrays: list, tensors: list, others: list, func, kwargs: dict, cls=TransformBackward,
           captured: bool = True, drop=None):
    """``compute(arrays) -> (outs, aux)`` (``outs`` a list of arrays, ``aux`` arrays the node does not
    differentiate), recorded as one ``cls`` node when one of ``tensors`` (whose arrays are ``arrays``) or a tensor
    the function captures requires grad: (outs, aux, node or None). ``others``: the call's other arguments,
    walked with the function for captured tensors (not with ``captured=False``: ``tensors`` only). Give the node
    to ``attach`` with the wrapped results. ``drop``: called after ``compute``, the indices of outputs the
    caller discards (``grad``'s value): they give no tensor an edge (a pruned ``cls``)."""
    dmap = [i for i, t in enumerate(tensors) if t._requires_grad]
    caps = _candidates(func, others, kwargs) if captured else []
    if not dmap and not caps:
        return (*compute(arrays), None)
    holder: dict = {}
    draws: dict = {}
    if not dmap and not _last_read(func):
        # only captured tensors could need the node, and this function's last call read none (a functional_call
        # over given parameters: the module's own are reachable, not read): run as it is, watching the reads;
        # one read after all (rare) and it runs again, under jax.vjp, drawing the same random values
        with keys_drawn(draws):
            res = _watching(compute, arrays, caps, [b._storage.array for b, _ in caps], holder, False)
        _note_read(func, any(holder["read"]))
        if not any(holder["read"]):
            return (*res, None)

    def pure(diff_arrays, cap_arrays):
        arrs = list(arrays)
        for i, a in zip(dmap, diff_arrays):
            arrs[i] = a
        return _watching(compute, arrs, caps, cap_arrays, holder)

    diff_arrays, cap_arrays = [arrays[i] for i in dmap], [b._storage.array for b, _ in caps]
    with keys_as(draws), keys_drawn(draws):  # (the draws noted: a differentiable backward runs the call again)
        outs, pullback, aux = jax.vjp(pure, diff_arrays, cap_arrays, has_aux=True)
    if not dmap:
        _note_read(func, any(holder["read"]))
    reach = _reach(pullback, outs, len(dmap) + len(caps), drop() if drop is not None else ()) \
        if cls._prune else None
    picks, edges, inputs = [], [], []
    live = 0
    for k, t in enumerate([tensors[i] for i in dmap]):
        if reach is not None and not reach[k]:
            continue
        e = edge_of(t)
        if e is not None:
            picks.append((0, k))
            edges.append(e)
            inputs.append(t)
            live |= reach[k] if reach is not None else 0
    for k, ((t, _), read) in enumerate(zip(caps, holder["read"])):
        if read and (reach is None or reach[len(dmap) + k]):
            e = edge_of(t)
            if e is not None:
                picks.append((1, k))
                edges.append(e)
                inputs.append(t)
                live |= reach[len(dmap) + k] if reach is not None else 0
    if not edges:
        return outs, aux, None
    node = cls()
    node._pullback, node._picks, node._rerun = pullback, tuple(picks), (pure, diff_arrays, cap_arrays, draws)
    node._live = None if reach is None else tuple(bool(live >> i & 1) for i in range(len(outs)))
    node._edges, node._inputs, node._diff_idx = tuple(edges), tuple(inputs), tuple(range(len(edges)))
    node.next_functions = tuple(edges)
    return outs, aux, node


def _floating(a) -> bool:
    return jnp.issubdtype(a.dtype, jnp.inexact)


def _reach(pullback, outs: list, n_in: int, drop=()) -> list | None:
    """For each input of a recorded call's ``jax.vjp`` (the differentiated arrays, then the captured ones): a bit
    mask of the outputs (bit ``i``: ``outs[i]``) whose cotangent reaches its gradient in the pullback's program,
    i.e. the outputs that depend on it differentiably (JAX's symbolic zeros: a constant, a ``stop_gradient``, a
    comparison's result do not); the outputs ``drop`` count as reaching nothing. None when the program cannot be
    read (every output then counts as reached)."""
    idx = [i for i, o in enumerate(outs) if _floating(o) and i not in drop]
    if not idx:
        return [0] * n_in
    fast = _linear_reach(pullback, outs, n_in, idx)
    if fast is not None:
        return fast

    def pull(*cts):
        full = [np.zeros(np.shape(o), jax.dtypes.float0) if not _floating(o) else jnp.zeros(np.shape(o), o.dtype)
                for o in outs]
        for i, c in zip(idx, cts):
            full[i] = c
        return pullback(full)
    try:
        closed = jax.make_jaxpr(pull)(*[jax.ShapeDtypeStruct(np.shape(outs[i]), outs[i].dtype,
                                                             weak_type=getattr(outs[i], "weak_type", False))
                                        for i in idx])
    except Exception:  # (an unreadable pullback: keep every output on the tape, as before)
        return None
    masks = _flow(closed.jaxpr, [1 << i for i in idx])
    return masks if len(masks) == n_in else None


def _linear_reach(pullback, outs: list, n_in: int, idx: list) -> list | None:
    """``_reach`` read off the linearised program ``jax.vjp`` already holds (its ``VJP``: the tangent program, one
    input per primal leaf, one output per output whose tangent is not known to be zero), with no trace: the
    tangents' forward data flow (tracing the pullback again cost a recorded ``func.grad`` call a third more).
    None where this JAX's pullback is not such an object (``_reach`` traces it then)."""
    try:
        jaxpr, known = pullback.jaxpr, pullback.fun.args[1]
    except (AttributeError, IndexError, TypeError):
        return None
    unknown = [i for i, k in enumerate(known) if not k]
    if len(known) != len(outs) or len(jaxpr.invars) != n_in or len(jaxpr.outvars) != len(unknown):
        return None
    wanted = set(idx)
    masks = [0] * n_in
    for i, m in zip(unknown, _flow(jaxpr, [1 << k for k in range(n_in)])):
        if i in wanted:
            for k in range(n_in):
                if m >> k & 1:
                    masks[k] |= 1 << i
    return masks


def _sub_jaxpr(eqn):
    """The program a call-like equation runs on its operands one to one (``pjit``, ``closed_call``, ``remat``,
    ``custom_jvp_call``), else None."""
    if eqn.primitive.name not in ("pjit", "jit", "closed_call", "core_call", "remat", "checkpoint",
                                  "custom_jvp_call"):
        return None
    for key in ("jaxpr", "call_jaxpr"):
        sub = eqn.params.get(key)
        if sub is not None:
            sub = getattr(sub, "jaxpr", sub)
            if len(sub.invars) == len(eqn.invars) and len(sub.outvars) == len(eqn.outvars):
                return sub
    return None


def _flow(jaxpr, in_masks: list) -> list:
    """Forward data flow of bit masks through ``jaxpr`` (an equation's outputs: the union of its inputs' masks,
    call-like equations followed inside); the outputs' masks."""
    env: dict = dict(zip(jaxpr.invars, in_masks))

    def get(a):
        return 0 if isinstance(a, _Literal) else env.get(a, 0)
    for eqn in jaxpr.eqns:
        ms = [get(a) for a in eqn.invars]
        sub = _sub_jaxpr(eqn) if any(ms) else None
        if sub is not None:
            outm = _flow(sub, ms)
        else:
            m = 0
            for x in ms:
                m |= x
            outm = [m] * len(eqn.outvars)
        for v, m in zip(eqn.outvars, outm):
            env[v] = m
    return [get(v) for v in jaxpr.outvars]


def edgeless(cls=TransformBackward):
    """A node with no edges: results that require grad though their gradient reaches no tensor (torch's
    ``linearize`` jvp_fn output, computed from constants that require grad)."""
    node = cls()
    node._pullback, node._picks, node._live = (lambda cts: ((), ())), (), None
    node._edges, node._inputs, node._diff_idx = (), (), ()
    node.next_functions = ()
    return node


def attach(node, results: list) -> None:
    """The wrapped results of a recorded call (one Tensor per array of ``outs``, in order) get its node: the
    floating and complex ones require grad, with ``node`` as their grad_fn."""
    if node is None:
        return
    node._out_meta = tuple((o._shape, o.dtype) for o in results)
    live = getattr(node, "_live", None)
    for i, o in enumerate(results):
        if (o.dtype.is_floating_point or o.dtype.is_complex) and (live is None or live[i]):
            o._grad_fn, o._requires_grad, o._out_nr = node, True, i


@contextlib.contextmanager
def next_key_as(make):
    """``Generator.next_key`` replaced by ``make(the method)`` while it runs (every random op draws its key
    through it: vmap's randomness modes, the draws a rerun must repeat)."""
    from ..random import Generator
    orig = Generator.__dict__["next_key"]
    Generator.next_key = make(orig)
    try:
        yield
    finally:
        Generator.next_key = orig


def keys_drawn(log: dict):
    """Notes in ``log`` each generator a random op draws from while it runs, with its key before the first draw
    (``keys_as`` puts them back for a rerun that must draw the same: ``vjp_fn`` on the tape)."""
    def make(orig):
        def next_key(self):
            if id(self) not in log:
                log[id(self)] = (self, self.key)
            return orig(self)
        return next_key
    return next_key_as(make)


@contextlib.contextmanager
def keys_as(log: dict):
    """The generators of ``log`` (``keys_drawn``) at their noted keys while it runs; as they were after."""
    now = [(g, g.key) for g, _ in log.values()]
    for g, k in log.values():
        g.key = k
    try:
        yield
    finally:
        for g, k in now:
            g.key = k
