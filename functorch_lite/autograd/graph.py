"""Autograd graph: Nodes (grad_fn objects with PyTorch's class names) and how dispatch records them.

A Node holds the jax pullback of its op (returned by the cached jitted vjp-forward, so no eager
``jax.vjp`` runs per op), edges to the nodes of its differentiable inputs, the versions of the
tensors PyTorch would save (to raise PyTorch's in-place error at backward), and output metadata.
"""
from __future__ import annotations

import itertools

import jax

from .. import dtypes as D
from .._hooks import RemovableHandle, add_hook  # noqa: F401  (torch.autograd.graph.RemovableHandle)
from . import _edges
from . import anomaly_mode as _anomaly
from . import grad_mode as _gm

_seq = itertools.count()
_CLASSES: dict = {}
# the innermost saved_tensors_hooks / allow_mutation_on_saved_tensors entry while one is active, else None:
# ``record``'s one check (for ops that save something); the rest lives in _saved_hooks.py
SAVED_HOOKS = [None]


class Node:
    """Base of every grad_fn class (``AddBackward0``...)."""

    __slots__ = ("_arrays", "_nf", "_edges", "_saved", "_out_meta", "_freed", "_seq", "_inputs",
                 "_entry", "_diff_idx", "_pre_hooks", "_hooks", "_metadata", "_packed", "_wraps", "_op",
                 "__weakref__")

    def __init__(self):
        self._seq = next(_seq)
        self._pre_hooks = None
        self._hooks = None
        self._freed = False
        self._saved = ()
        self._wraps = False  # (it saved a Python number, as a wrapped tensor: a backward frees it, as torch's)
        self._entry = None
        self._metadata = None
        self._nf = None
        self._inputs = None
        self._packed = None  # what saved-tensor hooks packed (``_saved_hooks``), else None
        self._op = None  # the op table's entry of the op that made it (``record``: its ``_saved_*`` attributes)

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def next_functions(self):
        """((node, output index) or (None, 0)) for every edge torch's node has (``_edges``: a Python number
        operand's empty slot, none for ``where``'s condition...; a composite's: the nodes torch records below its
        outermost one, ``shown``)."""
        if self._nf is None:
            from .._tensor.tensor import Tensor
            edges = dict(zip(self._diff_idx, self._edges))
            tree = shown(self)
            if tree is not None:
                self._nf = tuple(_shown_edge(edges, c) for c in tree)
            else:
                self._nf = tuple(edges.get(i, (None, 0)) for i, a in enumerate(self._inputs)
                                 if isinstance(a, Tensor))
        return self._nf

    @next_functions.setter
    def next_functions(self, value):
        self._nf = tuple(value)

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __getattr__(self, name):
        # (only for a name the node lacks: torch's ``_saved_<argument>`` / ``_saved_result`` attributes)
        if name.startswith("_saved_") and self._op is not None:
            found, value = saved_attribute(self, name[7:])
            if found:
                return value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` once this node has computed its input gradients (tuples of tensors,
        None where there is none; ``grad_inputs`` in ``next_functions`` order): a returned tuple replaces
        ``grad_inputs`` (the engine runs them, ``engine.run_post_hooks``)."""
        if self._entry is _SHOWN:
            _refuse_shown(self)
        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before this node runs (a tuple of tensors, None where there is none): a returned
        tuple replaces them."""
        if self._entry is _SHOWN:
            _refuse_shown(self)
        if self._pre_hooks is None:
            self._pre_hooks = {}
        node = self
        outs = _edges.outputs(self)

        def pre(cts):
            prev = hook_outputs(node, outs, cts)
            r = fn(prev)
            if r is None:  # (a gradient the hook wrote in place is what the node gets, as torch's)
                r = prev
            else:
                from .tensor_hooks import check_hook_results
                check_hook_results(fn, prev, r)
            if outs is None:
                return [from_grad_tensor(g, c) for g, c in zip(r, cts)]
            cts = list(cts)
            for j, g in zip(outs, r):
                if j is not None:
                    cts[j] = from_grad_tensor(g, cts[j])
            return cts
        return add_hook(self._pre_hooks, pre)

    def __call__(self, *grads, **kwargs):
        """torch's ``grad_fn(*grad_outputs)``: this node's backward on the given output gradients (one per output,
        None = zero), differentiable in grad mode; the input gradients in ``next_functions`` order (None for an
        input without one), a tensor where there is one input (``engine.call_node``)."""
        if kwargs:
            raise TypeError("keyword arguments are not supported")
        if self._entry is _SHOWN:
            _refuse_shown(self)
        outs = None if isinstance(self, AccumulateGrad) else _edges.outputs(self)
        n = len(outs) if outs is not None else len(self._out_meta) if not isinstance(self, AccumulateGrad) else 1
        if len(grads) != n:
            raise TypeError(f"expected {n} arguments, got {len(grads)} instead")
        if outs is not None:  # (torch's grad_outputs -> the node's own)
            own = [None] * len(self._out_meta)
            for j, g in zip(outs, grads):
                if j is not None:
                    own[j] = g
            grads = tuple(own)
        from .engine import call_node
        return call_node(self, grads)

    def apply(self, cts):
        """Cotangents of the outputs (None = zero) -> cotangents of the differentiable inputs, with the
        entry's cached jitted backward kernel."""
        if self._freed:
            raise RuntimeError(_FREED_MSG)
        if self._entry.undef is not None and undefined(self, cts):
            return (None,) * len(self._diff_idx)
        fn = self._entry.bwd_fn(self._diff_idx)
        if self._arrays and any(type(a) is jax.ShapeDtypeStruct for a in self._arrays):
            return jax.eval_shape(fn, self._arrays, tuple(cts))  # (meta tensors: the gradients' shapes only)
        return fn(self._arrays, tuple(cts))


def undefined(node, cts) -> bool:
    """Whether torch's derivative formula gives no gradient at all for this call of the node's op and these output
    cotangents (``OpDef.undefined_grad``; None = no cotangent): its inputs then get None, as from torch's engine."""
    u = node._entry.undef
    return u is not None and u(tuple(c is not None for c in cts))


# ---- a composite's graph as torch records it -------------------------------------------------------------
# A composite op recorded as one node (``F.linear``: torch's addmm of the input, the weight's transpose and the
# bias; matmul folding its batch dimensions into an mm) shows the nodes torch records below its outermost one
# (spec AG-56..59), from the op's ``shown(targs)`` template, a tuple of children: an int is input ``i``'s own edge;
# ``(name, children, kind)`` a node of that torch class made for the picture, whose own children follow, with
# ``kind`` "T" (``TBackward0`` of a 2-D input: its gradient is the input's, transposed), "inner" plus the shape
# the composite's output has in it (the mm / addmm / bmm under the final view: its gradient is the output's,
# reshaped), or "view" (a view below that: only shown). Its backward stays the one fused kernel: the nodes made
# for the picture take no hooks (a clear error), and the outer node's hooks see their gradients
# (``engine.run_post_hooks`` via ``shown_grads`` / ``shown_replaced``: a legacy module backward hook on a
# Linear gets torch's grad_input).
_SHOWN = object()  # (the ``_entry`` of a node made for the picture)


# An op whose node torch gives other edges than its tensor inputs (``_edges.EDGES``) has a flat template: input
# positions, and None for an empty slot.
def shown(node):
    """``node``'s template (None: no composite picture, and torch's edges are its tensor inputs)."""
    op = node._op
    if op is None:
        return None
    return op.shown(node._inputs) if op.shown is not None else _edges.edges(node)


def hook_outputs(node, outs, cts):
    """The grad_outputs ``node``'s hooks see (``outs``: ``_edges.outputs(node)``), from the engine's ``cts``."""
    if outs is None:
        return tuple(as_grad_tensor(node, c) for c in cts)
    return tuple(None if j is None else as_grad_tensor(node, cts[j]) for j in outs)


def _shown_edge(edges, c):
    if c is None:
        return (None, 0)
    if type(c) is int:
        return edges.get(c, (None, 0))
    name, kids, kind = c[:3]
    sub = tuple(_shown_edge(edges, k) for k in kids)
    if kind != "inner" and all(e[0] is None for e in sub):  # (over inputs without a gradient: none shown)
        return (None, 0)
    v = node_class(name)()
    v._entry, v._nf, v._edges, v._diff_idx, v._inputs = _SHOWN, sub, (), (), None
    return (v, 0)


def _refuse_shown(node):
    raise RuntimeError(f"functorch_lite: {node.name()} is part of a composite op's graph as torch records it; the "
                       "facade runs that op's backward as one node, whose own hooks (register_hook / "
                       "register_prehook on the outermost node) see these gradients: hooks on the nodes inside it "
                       "are not supported")


def shown_grads(node, tree, cts, in_cts, at):
    """The gradients ``node``'s hooks see, in its ``next_functions`` order (``tree``: its template; ``at``: input
    position -> index in ``in_cts``)."""
    out = []
    for c in tree:
        if c is None:
            out.append(None)
        elif type(c) is int:
            out.append(as_grad_tensor(node, in_cts[at[c]]) if c in at else None)
        elif c[2] == "T":
            i = c[1][0]
            g = as_grad_tensor(node, in_cts[at[i]]) if i in at else None
            out.append(None if g is None else g.t())
        else:  # (the composite's output gradient as the op inside its final view has it)
            g = as_grad_tensor(node, cts[0])
            out.append(None if g is None else g.reshape(c[3]))
    return tuple(out)


def shown_replaced(node, tree, cts, in_cts, at, replaced, apply):
    """The engine's input gradients after a hook replaced ``shown_grads``'s: a transposed or an input's own one put
    back; the inner op's output gradient run through the node's backward again (``apply(node, cts)``: every input's
    gradient from it, so a template lists that child before its own inputs, as torch's bias after the mm)."""
    out = list(in_cts)
    for c, g in zip(tree, replaced):
        if c is None:
            continue
        if type(c) is int:
            if c in at:
                out[at[c]] = from_grad_tensor(g, in_cts[at[c]])
        elif c[2] == "T":
            i = c[1][0]
            if i in at:
                out[at[i]] = from_grad_tensor(None if g is None else g.t(), in_cts[at[i]])
        elif g is not None:
            ct = from_grad_tensor(g.reshape(node._out_meta[0][0]), cts[0])
            out = list(apply(node, [ct]))
    return out


# grad_fn classes whose ``name()`` is PyTorch's C++ name, not the class name (ops recorded under that name; the
# CopySlices of an in-place write through a view is copy_slices.CopySlices, with the same name)
CPP_NAMES = {"CopySlices": "torch::autograd::CopySlices", "NotImplemented": "torch::autograd::NotImplemented"}


class NotImplementedNode(Node):
    """PyTorch's grad_fn of an op without a derivative (``<NotImplemented>``): the op's jax body raises
    ``derivative for aten::<op> is not implemented`` in its backward (``grad_overrides.no_derivative``); after an
    in-place form (:func:`rebase`) the message names it, as PyTorch's (``aten::floor_divide_``)."""
    __slots__ = ("_inplace",)

    def __init__(self):
        super().__init__()
        self._inplace = False

    def name(self) -> str:
        return CPP_NAMES["NotImplemented"]

    def apply(self, cts):
        try:
            Node.apply(self, cts)
            # (an op whose other overloads are differentiable, ``7 % x``'s remainder: its body has a vjp)
            raise RuntimeError(f"derivative for aten::{self._entry.body.__name__} is not implemented")
        except RuntimeError as e:
            msg, tail = str(e), " is not implemented"
            if self._inplace and msg.startswith("derivative for aten::") and msg.endswith(tail):
                raise RuntimeError(msg[:-len(tail)] + "_" + tail) from None
            raise


NotImplementedNode.__name__ = NotImplementedNode.__qualname__ = "NotImplemented"
_CLASSES["NotImplemented"] = NotImplementedNode


def grad_dtype_of(t):
    """The dtype leaf ``t``'s gradients are cast to (``Tensor.grad_dtype``: its dtype unless set), or None (no
    cast)."""
    return t.__dict__.get("_grad_dtype", t.dtype) if t.__dict__ else t.dtype


def node_class(name):
    cls = _CLASSES.get(name)
    if cls is None:
        ns: dict = {"__slots__": ()}
        cpp = CPP_NAMES.get(name)
        if cpp is not None:
            ns["name"] = lambda self: cpp
        cls = _CLASSES[name] = type(name, (Node,), ns)
    return cls


class AccumulateGrad(Node):
    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__()
        self.variable = variable
        self._nf = ()
        self._edges = ()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # PyTorch's C++ node name



_FREED_MSG = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
              "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
              "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
              "if you need to access saved tensors after calling backward.")

_INFERENCE_MSG = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                  "in computation tracked by autograd. To work around this, you can make a clone to get a normal "
                  "tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


_NGV_TAIL = ("Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
             "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
             "inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def mark_no_grad_view(v, base) -> None:
    """``v``, a view of ``base`` (which requires grad) made in no_grad mode: as in PyTorch it requires grad (its
    base does) but is a leaf with no gradient edge -- ops on it record nodes whose gradient for it goes nowhere
    (``edge_of`` returns None) -- and it must not be used in a recorded op once its storage was written in place
    (its creation version is kept: ``edge_of`` raises)."""
    v._requires_grad = True
    v._no_grad_view = True
    v._ngv_at = base._storage.version


def not_an_autograd_view(v) -> None:
    """``v`` (made under no_grad by the facade itself, ``view(dtype)``) is no autograd view at all, PyTorch's
    no_grad-view rules aside: it does not require grad."""
    v._requires_grad = False
    for k in ("_no_grad_view", "_ngv_at", "_ngv_derived"):
        v.__dict__.pop(k, None)
    v._not_ag_view = True  # (no grad_fn to regenerate when its storage is written: ``regraph``)


def as_grad_tensor(node, ct):
    """A cotangent the engine holds (a jax array, or a tensor under ``create_graph``) as the tensor hooks see."""
    from .._tensor.tensor import Tensor
    if ct is None or isinstance(ct, Tensor):
        return ct
    if ct.dtype == jax.dtypes.float0:  # (the zero cotangent of an integer input: no gradient)
        return None
    dev = next((a._storage.device for a in node._inputs or () if isinstance(a, Tensor)), None)
    if dev is None:
        if isinstance(node, AccumulateGrad):
            dev = node.variable._storage.device
        else:
            from .._device import get_default_device
            dev = get_default_device()
    return Tensor._from_array(ct, D.from_numpy_dtype(ct.dtype), dev)


def from_grad_tensor(g, like):
    """A hook's tensor back in the engine's form of ``like`` (the cotangent it replaces)."""
    from .._tensor.tensor import Tensor
    if g is None:
        return None
    return g if isinstance(like, Tensor) else g._array


def edge_of(t):
    """(node, output index) that receives the gradient of tensor ``t`` (requires_grad assumed); None for a view
    made in no_grad mode (``mark_no_grad_view``), whose gradient PyTorch drops. A view whose storage was written in
    place since its node was recorded gets its node regenerated first (:func:`regraph`)."""
    fn = t._grad_fn
    if t._base is not None and t._gver != t._storage.version:
        fn = regraph(t)
    if fn is not None:
        return fn, t._out_nr
    d = t.__dict__
    if d and d.get("_no_grad_view"):
        return None
    acc = t._acc
    if acc is None or acc.variable is not t:
        acc = t._acc = AccumulateGrad(t)
    return acc, 0


def regraph(v):
    """PyTorch's ``VariableHooks::grad_fn`` for a view ``v`` whose storage was written in place (through its base
    or another view of it, or through ``v`` under no_grad) since its node was recorded: the node it had describes
    values the storage no longer holds, so ``v`` gets a fresh ``AsStridedBackward0`` on its base's current history
    (its gradient scattered into the base's, as after an in-place write through ``v`` itself, ``copy_slices``).
    A view made in no_grad mode, or an output of a multi-view function (split, unbind), raises PyTorch's error
    instead. Returns ``v``'s node (None if it has none)."""
    fn = v._grad_fn
    base = v._base
    ver = v._storage.version
    d = v.__dict__
    if not base._requires_grad or v.dtype.category < D.FLOAT or d and d.get("_not_ag_view"):
        v._gver = ver  # (a view of a tensor that needs no gradient, or none of a differentiable dtype: nothing to redo)
        return fn
    if d:
        if d.get("_no_grad_view"):
            raise RuntimeError("A view was created in no_grad mode and its base or another view of its base has "
                               "been modified inplace with grad mode enabled. " + _NGV_TAIL)
        if fn is not None and (d.get("_ngv_derived") or d.get("_multi_view") or d.get("_fn_view")):
            nm = fn.name()
            head = f"Output {v._out_nr} of {nm[:nm.rfind('Backward')] if 'Backward' in nm else nm} is a view"
            if d.get("_ngv_derived"):
                raise RuntimeError(head + " of a view which was created in no_grad mode and its base or another view "
                                   "of its base has been modified inplace with grad mode enabled. " + _NGV_TAIL)
            if d.get("_fn_view"):  # (a view output of a custom Function, function.py)
                raise RuntimeError(head + " and its base or another view of its base has been modified inplace. This "
                                   "view was created inside a custom Function (or because an input was returned "
                                   "as-is) and the autograd logic to handle view+inplace would override the custom "
                                   "backward associated with the custom Function, leading to incorrect gradients. "
                                   "This behavior is forbidden. You can fix this by cloning the output of the custom "
                                   "Function.")
            raise RuntimeError(head + " and its base or another view of its base has been modified inplace. This view "
                               "is the output of a function that returns multiple views. Such functions do not allow "
                               "the output views to be modified inplace. You should replace the inplace operation by "
                               "an out-of-place one.")
    from .copy_slices import as_strided_node
    node = as_strided_node(v, (edge_of(base),))
    set_view_fn(v, node)
    return node


def set_view_fn(v, node):
    """``node`` becomes view ``v``'s grad_fn (recorded at the storage's current version); a ``retain_grad()`` moves
    to it, as PyTorch's ``update_tensor_hooks_on_new_gradfn`` (hooks registered before stay on the old node)."""
    v._grad_fn = node
    v._gver = v._storage.version
    v._requires_grad = True
    v._out_nr = 0
    if v._retains_grad:
        move_retain_grad(v)


def move_retain_grad(t):
    from .tensor_hooks import retain_grad
    t._retains_grad = False
    retain_grad(t)


def record(op, outs, targs, diff_idx, arrays, entry=None, sargs=()):
    """Attach a new Node to the differentiable outputs of one op call."""
    from .._tensor.tensor import Tensor
    name = op.grad_fn
    if callable(name):
        name = name(targs, sargs)
    elif type(name) is tuple:  # (name when a view, name when a copy)
        name = name[0 if op.view is not None and outs._base is not None else 1]
    node = node_class(name or f"{op.name.capitalize()}Backward0")()
    node._op = op
    node._arrays = arrays
    node._entry = entry
    node._diff_idx = diff_idx
    node._inputs = targs
    edges = tuple([edge_of(targs[i]) for i in diff_idx])
    if None in edges:  # inputs that are no_grad views: no edge (their gradient is dropped, as in PyTorch)
        diff_idx = tuple([i for i, e in zip(diff_idx, edges) if e is not None])
        edges = tuple([e for e in edges if e is not None])
        node._diff_idx = diff_idx
    node._edges = edges
    if type(outs) is tuple or isinstance(outs, tuple):
        outs_t = outs
        node._out_meta = tuple([(o._shape, o.dtype) for o in outs])
    else:
        outs_t = (outs,)
        node._out_meta = ((outs._shape, outs.dtype),)
    saves = op.saves
    if callable(saves):  # the op decides from the call (mul saves other only if self needs grad...)
        saves = saves(targs)
    if saves:
        saved = []
        for s in saves:
            if s == "all":
                for a in targs:
                    if isinstance(a, Tensor):
                        saved.append((a, a._storage, a._storage.version, a._shape, a.dtype, a._grad_fn, False,
                                      a._out_nr))
            elif s == "internal":  # (torch's composite saves only its own intermediates: freed, never modified)
                node._wraps = True
            elif s == "result":
                o = outs_t[0]
                saved.append((None, o._storage, o._storage.version, o._shape, o.dtype, node, True, 0))
            else:
                a = targs[s]
                if isinstance(a, Tensor):
                    saved.append((a, a._storage, a._storage.version, a._shape, a.dtype, a._grad_fn, False,
                                  a._out_nr))
                elif a is not None:  # (torch saves a Python number operand as a wrapped tensor: ``x * 2``)
                    node._wraps = True
        # (input tensor or None for a saved output, storage, version at save, shape, dtype, producer, is_out,
        # out_nr): a saved output is reported as "output i of <this node>", a saved input by its producer
        node._saved = tuple(saved)
        if not _gm._state.inference:
            for e in saved:
                if e[1].inference:  # MODE-16: only a *saved* inference tensor is an error (MODE-25)
                    raise RuntimeError(_INFERENCE_MSG)
        if SAVED_HOOKS[0] is not None:  # saved_tensors_hooks active: pack what the node saves
            from ._saved_hooks import on_record
            on_record(node, saves, targs, SAVED_HOOKS[0])
    for i, o in enumerate(outs_t):
        if o.dtype.category >= D.FLOAT:
            o._grad_fn = node
            if o._base is not None:
                o._gver = o._storage.version
            o._requires_grad = True
            o._out_nr = i
    if _anomaly.ENABLED[0]:
        _anomaly.record_traceback(node)  # (PyTorch's metadata['traceback_'], for its backward error warning)
    return node


def saved_attribute(node, arg) -> tuple:
    """(found, value) of torch's ``node._saved_<arg>`` (spec AG-60), for a node its op made under its own name
    (``MulBackward0`` of mul, not ``MmBackward0`` of matmul nor ``NllLossBackward0`` of cross_entropy, whose saved
    tensors are torch's decomposition's): a tensor the op may save for its backward (its ``saves``), by the
    argument's name in derivatives.yaml (``self`` for ``input``), or ``result``. The tensor itself (torch unpacks a
    new one over the same data); None where this call did not save it (``mm``'s ``self`` when ``mat2`` needs no
    gradient); a Python number operand as torch saves it: wrapped in a tensor (``x * 2``: int64 ``tensor(2)``),
    or as the number where the op saves all its inputs (``pow(x, 3)``'s ``_saved_exponent``). Its version is
    checked and the graph must not be freed, with the errors backward gives."""
    from .._tensor.tensor import Tensor
    op, targs = node._op, node._inputs
    if op.tensors == "list" or not type(node).__name__.startswith(op.name.title().replace("_", "") + "Backward"):
        return False, None
    names = tuple("self" if n == "input" else n for n in op.tensor_names)
    saves = op.saves or ()
    possible = getattr(saves, "names", ()) if callable(saves) else saves
    if arg == "result":
        i = "result"
    elif arg in names:
        i = names.index(arg)
    else:
        return False, None
    every = "all" in possible
    if i not in possible and not (every and i != "result"):
        return False, None
    if callable(saves):
        saves = saves(targs)
    if i == "result":
        entry = next((e for e in node._saved if e[6]), None)
    else:
        a = targs[i]
        if not isinstance(a, Tensor):
            if every:
                return True, a
            if a is None or i not in saves:
                return True, None
            from .._promotion import scalar_dtype
            dt = scalar_dtype(a)  # (a wrapped number's; a float one held in double precision, as torch's)
            dt = D.complex128 if dt.is_complex else D.float64 if dt.is_floating_point else dt
            return True, Tensor._from_array(jax.numpy.asarray(a, dt.jnp), dt, _device_of(targs))
        entry = next((e for e in node._saved if e[0] is a), None)
    if entry is None:
        return True, None
    if node._freed:
        raise RuntimeError(_FREED_MSG)
    _version_error(entry)
    if entry[0] is not None:
        return True, entry[0]
    _, storage, _, shape, dt, producer, _, out_nr = entry
    t = Tensor._header(storage, shape, dt, None, None, 0, None)
    t._grad_fn, t._out_nr, t._requires_grad = producer, out_nr, True
    return True, t


def _device_of(targs):
    """The device of the first tensor among an op's inputs (a wrapped number's)."""
    from .._tensor.tensor import Tensor
    return next(a._storage.device for a in targs if isinstance(a, Tensor))


def check_saved(node):
    """PyTorch's error when a tensor saved for backward was modified in place (spec §7.1)."""
    if node._packed is not None:  # recorded under saved_tensors_hooks (no version check, as PyTorch): unpack
        from ._saved_hooks import on_backward
        return on_backward(node)
    for entry in node._saved:
        if entry[1].version != entry[2] or entry[5] is not None and not entry[6] and entry[0]._grad_fn is None:
            _version_error(entry)


_DETACHED_MSG = ("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not "
                 "supported, please use out-of-place `.detach()` instead")


def _version_error(entry) -> None:
    """``check_saved``'s error for a saved tensor modified in place since it was saved (or, a saved input that had
    a grad_fn, detached in place since: torch's ``SavedVariable::unpack`` error, checked first as there)."""
    t, storage, version, shape, dt, producer, is_out, out_nr = entry
    if producer is not None and not is_out and t._grad_fn is None:
        raise RuntimeError(_DETACHED_MSG)
    if storage.version != version:
        fn = producer if is_out else t.grad_fn
        legacy = f"torch.{dt.legacy}" if dt.legacy else str(dt)
        which = ""
        if fn is not None:
            nm = fn.name()
            if "Backward" in nm:  # (torch's wording: ExpBackward0 is "Exp", MaxBackward1 "Max1")
                k = nm.rfind("Backward")
                nm = nm[:k] + ("" if nm[k + 8:] == "0" else nm[k + 8:])
            which = f", which is output {out_nr} of {nm},"
        # (in anomaly mode torch's hint points at the warning its engine gives with the forward's traceback:
        # ``anomaly_mode.warn_error``, from the engine)
        hint = "the backtrace further above shows the operation that failed to compute its gradient. The " \
            "variable in question was changed in there or anywhere later. Good luck!" if _anomaly.ENABLED[0] \
            else "enable anomaly detection to find the operation that failed to compute its gradient, with " \
            "torch.autograd.set_detect_anomaly(True, check_nan=False)."
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{legacy} [{', '.join(map(str, shape))}]]{which} is at version {storage.version}; expected "
            f"version {version} instead. Hint: {hint}")


def check_inplace(t):
    """Errors raised before an in-place op runs (spec §7.2, MODE-18)."""
    if t._storage.inference and not _gm._state.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")
    st = _gm._state
    if not st.enabled:
        # inside torch.func's reverse-mode transforms (the tape is off, the user sees grad mode on) the inputs
        # they differentiate are leaves that require grad (func._autodiff._pure): refused as any such leaf
        if st.func and st.user:
            _check_leaf_write(t)
        return
    if t.__dict__.get("_multi_view") and t.grad_fn is not None:
        nm = t.grad_fn.name()
        raise RuntimeError(f"Output {t._out_nr} of {nm[:nm.rfind('Backward')]} is a view and is being modified "
                           "inplace. This view is the output of a function that returns multiple views. Such "
                           "functions do not allow the output views to be modified inplace. You should replace the "
                           "inplace operation by an out-of-place one.")
    if t.__dict__.get("_fn_view") and t.grad_fn is not None:  # (a view output of a custom Function: function.py)
        nm = t.grad_fn.name()
        raise RuntimeError(f"Output {t._out_nr} of {nm[:nm.rfind('Backward')]} is a view and is being modified "
                           "inplace. This view was created inside a custom Function (or because an input was returned "
                           "as-is) and the autograd logic to handle view+inplace would override the custom backward "
                           "associated with the custom Function, leading to incorrect gradients. This behavior is "
                           "forbidden. You can fix this by cloning the output of the custom Function.")
    if t.__dict__.get("_no_grad_view"):
        raise RuntimeError("A view was created in no_grad mode and is being modified inplace with grad mode "
                           "enabled. " + _NGV_TAIL)
    if t.__dict__.get("_ngv_derived") and t.grad_fn is not None:
        nm = t.grad_fn.name()
        raise RuntimeError(f"Output {t._out_nr} of {nm[:nm.rfind('Backward')]} is a view of a view which was created "
                           "in no_grad mode and is being modified inplace with grad mode enabled. " + _NGV_TAIL)
    _check_leaf_write(t)


def _check_leaf_write(t):
    """An in-place write to a leaf that requires grad, or to a view of one, is refused."""
    b = t._base
    if t._requires_grad and t.grad_fn is None or b is not None and b._requires_grad and b.grad_fn is None:
        raise RuntimeError(("a view of a" if b is not None else "a") +
                           " leaf Variable that requires grad is being used in an in-place operation.")


def rebase(self, r):
    """After ``self.op_(...)`` produced ``r``: ``self`` takes over ``r``'s place in the graph."""
    if r.grad_fn is None:
        return
    node = r.grad_fn
    if type(node) is NotImplementedNode:
        node._inplace = True
    if node._saved:
        # the op's own write is not a modification of what it saved (its residuals are immutable): what it saved
        # of its output is checked from the version it wrote; what it saved of ``self`` before the write is the
        # value it read (torch saves a copy of the original self), which later writes cannot change
        # (torch errors on a later write: ``y.exp_(); y.add_(1)``; the output's entry follows it into self)
        st, rs = self._storage, r._storage
        node._saved = tuple(e if e[1] is not st and e[1] is not rs else (e[0], st, st.version) + e[3:]
                            for e in node._saved if e[1] is not st or e[6])
    if self._base is None:
        self._grad_fn = node
        self._requires_grad = True
        self._out_nr = r._out_nr
        if self._retains_grad:
            move_retain_grad(self)  # (PyTorch moves it to the new grad_fn)
        return
    # In-place through a view of a tensor in the graph: the base's history becomes CopySlices.
    from .copy_slices import copy_slices
    copy_slices(self, node, r._out_nr)


_WARN_STREAM_MISMATCH = [True]


def set_warn_on_accumulate_grad_stream_mismatch(enabled: bool) -> None:
    """torch's switch for its warning when an AccumulateGrad node's stream differs from the incoming gradient's
    (CUDA streams): recorded, with no effect -- there are no streams here."""
    _WARN_STREAM_MISMATCH[0] = bool(enabled)


from ._saved_hooks import (  # noqa: E402,F401  (torch.autograd.graph's saved-tensor API)
    GradientEdge, allow_mutation_on_saved_tensors, disable_saved_tensors_hooks, get_gradient_edge, increment_version,
    register_multi_grad_hook, save_on_cpu, saved_tensors_hooks,
)
