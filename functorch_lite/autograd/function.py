"""``autograd.Function``: user-defined ops with a hand-written backward (issue 3, item 9).

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    Exp.apply(x)
"""
from __future__ import annotations

import functools
import inspect
import warnings
import weakref

import jax

from . import grad_mode as _gm
from . import graph as _graph
from .graph import _FREED_MSG, Node, check_saved, edge_of, node_class, rebase


def _trim_nones(res, n):
    """A custom Function's ``backward`` result as a tuple; more gradients than forward inputs are allowed when the
    extra ones are all None (torch's ``_trim_grad_input``: dropped)."""
    if not isinstance(res, tuple):
        res = (res,)
    if len(res) > n and all(g is None for g in res[n:]):
        res = res[:n]
    return res


class FunctionCtx:
    def __init__(self):
        self.to_save = ()
        self._saved = None
        self._fwd_saved = ()
        self._in_jvp = False
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._non_diff = set()
        self._dirty = ()
        self._node = None
        self._hooked = None  # per saved slot: a SavedTensor once saved-tensor hooks packed it, else None

    def save_for_backward(self, *tensors):
        _check_saveable(tensors, "save_for_backward")
        self.to_save = tensors
        self._saved = tuple((t, t._storage.version) if t is not None else (None, 0) for t in tensors)

    def save_for_forward(self, *tensors):
        """Tensors the ``jvp`` staticmethod reads back as ``ctx.saved_tensors``."""
        _check_saveable(tensors, "save_for_forward")
        self._fwd_saved = tensors

    @property
    def saved_tensors(self):
        if self._in_jvp:
            return tuple(self._fwd_saved)
        node = self._node
        if node is not None and node._freed:
            raise RuntimeError(_FREED_MSG)
        if self._saved is None:
            return ()
        hooked = self._hooked
        out = []
        for k, (t, v) in enumerate(self._saved):
            if hooked is not None and hooked[k] is not None and hooked[k].packed is not None:
                out.append(hooked[k].unpack())  # (no version check under hooks, as torch's)
                continue
            if t is not None and t._storage.version != v:
                if node is not None and node._saved:
                    check_saved(node)
                raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                                   f"inplace operation: [{t.type()} [{', '.join(map(str, t._shape))}]], is at version "
                                   f"{t._storage.version}; expected version {v} instead.")
            out.append(t)
        return tuple(out)

    @property
    def saved_variables(self):
        """torch's deprecated spelling of :attr:`saved_tensors` (old custom Functions still read it): the same
        tuple, with torch's DeprecationWarning."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)


def _check_saveable(tensors, what):
    from .._tensor.tensor import Tensor
    for i, t in enumerate(tensors):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"{what} can only save variables, but argument {i} is of type {type(t).__name__}")


class BackwardCFunction(Node):
    """The grad_fn class of a custom Function's outputs (``<Name>Backward``, a subclass made per Function)."""
    __slots__ = ("_ctx", "_fn", "_tensor_pos", "_edge_pos", "_in_meta", "_n_args", "_outs_meta_dev", "_hook_in")

    def _grads(self, cts, as_tensors):
        from .._tensor.tensor import Tensor
        from ..ops.creation import zeros
        grads = []
        for ct, meta in zip(cts, self._out_meta):
            if meta is None:  # (a non-tensor output: its gradient is None, as torch passes)
                grads.append(None)
                continue
            shape, dt = meta
            if ct is None:
                grads.append(zeros(shape, dtype=dt, device=self._outs_meta_dev) if self._ctx.materialize_grads
                             else None)
            elif isinstance(ct, Tensor):
                grads.append(ct)
            else:
                grads.append(Tensor._from_array(ct, dt, self._outs_meta_dev))
        res = self._fn.backward(self._ctx, *grads)
        res = _trim_nones(res, self._n_args)
        if len(res) != self._n_args:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                               f"{self._n_args}, got {len(res)})")
        for i, g in enumerate(res):
            if g is None:
                continue
            if i not in self._tensor_pos:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        valid = [None if res[i] is None else self._validate(res[i], shape, dt, k)
                 for i, (shape, dt, k) in zip(self._edge_pos, self._in_meta)]
        if self._hooks:  # (its post hooks' grad_inputs: every tensor input's, validated where it has an edge)
            at = dict(zip(self._edge_pos, valid))
            self._hook_in = tuple(at[i] if i in at else res[i] for i in sorted(self._tensor_pos))
        return valid if as_tensors else [None if g is None else g._array for g in valid]

    def _validate(self, g, shape, dt, k):
        """PyTorch's ``validate_outputs``: a gradient of another shape is summed down to the input's (or raises),
        one of another dtype is cast to the input's (a float32 gradient of a bfloat16 input: AMP's custom_fwd); a
        complex one of a real input is refused."""
        if g._shape != shape:
            n = len(g._shape) - len(shape)
            if n < 0 or any(s != 1 and s != gs for s, gs in zip(shape, g._shape[n:])):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index {k} - got "
                                   f"{list(g._shape)} but expected shape compatible with {list(shape)}")
            g = g.sum_to_size(shape)
        if g.dtype is not dt:
            if not g.dtype.is_floating_point and g.dtype.is_complex != dt.is_complex:
                raise RuntimeError("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
                                   "grad_is_complex) to be true, but got false.  (Could this error message be "
                                   "improved?  If so, please report an enhancement request to PyTorch.)")
            g = g.to(dt)
        return g

    @property
    def _forward_cls(self):
        return self._fn

    @property
    def saved_tensors(self):
        return self._ctx.saved_tensors

    @property
    def _raw_saved_tensors(self):
        """torch's ``SavedTensor`` objects, one per ``save_for_backward`` argument: ``register_hooks(pack,
        unpack)`` packs the saved tensor now and unpacks it at each ``saved_tensors`` access."""
        ctx = self._ctx
        if ctx._saved is None:
            return ()
        if ctx._hooked is None:
            ctx._hooked = [None] * len(ctx._saved)
        for k in range(len(ctx._saved)):
            if ctx._hooked[k] is None:
                ctx._hooked[k] = SavedTensor(ctx, k)
        return tuple(ctx._hooked)

    def __call__(self, *args, **kwargs):  # (torch's custom Function node is no callable object)
        raise TypeError(f"'{type(self).__name__}' object is not callable")

    def __getattr__(self, name):  # (torch's node is the ctx: ``y.grad_fn.k`` reads what forward set on ctx)
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            ctx = self._ctx
        except AttributeError:
            raise AttributeError(name) from None
        return getattr(ctx, name)

    def apply_custom(self, cts):
        with _gm.no_grad():
            return self._grads(cts, False)

    def apply_tensors(self, cts):
        with _gm.enable_grad():
            return self._grads(cts, True)


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call ``.apply``."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself. Instantiating an autograd function will raise an "
                      "error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._tensor.tensor import Tensor
        from . import forward_ad as _fwad
        separate = cls.setup_context is not Function.setup_context
        args = _bind_args(cls, separate, args, kwargs)
        kwargs = {}
        batched = any(isinstance(a, Tensor) and isinstance(getattr(a._array, "batch_dim", None), int) for a in args)
        traced = any(isinstance(a, Tensor) and isinstance(a._array, jax.core.Tracer) for a in args)
        if not separate and traced and (batched or _gm._state.func):
            raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, "
                               "jvp, jacrev, ...), it must override the setup_context staticmethod. For more "
                               "details, please see https://pytorch.org/docs/main/notes/extending.func.html")
        if not getattr(cls, "generate_vmap_rule", False) and not _has_vmap(cls) and (batched or (
                _tr._JACFWD[0] and _gm._state.forward and _gm._state.func and traced)):
            # (torch.func.jacfwd runs the function under vmap: a Function without vmap support is refused)
            raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                               "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
                               "details, please see https://pytorch.org/docs/main/notes/extending.func.html")
        if batched and _has_vmap(cls) and not getattr(cls, "generate_vmap_rule", False):
            # vmap is the innermost transform: the vmap staticmethod (an outer grad differentiates what it runs)
            return _tr._apply_vmap_rule(cls, args)
        if _gm._state.func and traced:
            return _tr._apply_traced(cls, args, kwargs)
        tangents = None
        if _fwad.ACTIVE[0]:
            tangents = [_fwad.tangent_of(a) if isinstance(a, Tensor) else None for a in args]
            if all(t is None for t in tangents):
                tangents = None
            elif "jvp" not in _overridden(cls):
                raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                          "with forward mode AD.")
        if tangents is None:
            ctx, out = _apply_eager(cls, separate, args)
            return out
        _fwad.ACTIVE[0] = 0  # (the forward runs on the primals; the tangents come from the jvp staticmethod)
        try:
            ctx, out = _apply_eager(cls, separate, args)
        finally:
            _fwad.ACTIVE[0] = 1
        _forward_tangents(cls, ctx, args, out, tangents)
        return out


def _overridden(cls):
    """Names of Function's staticmethods that ``cls`` (or a base below Function) overrides."""
    return {k for k in ("jvp", "vmap", "backward", "forward")
            if any(k in vars(c) for c in cls.__mro__ if c is not Function and issubclass(c, Function))}


def _has_vmap(cls):
    return "vmap" in _overridden(cls)


_SIGS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # Function class -> its forward's signature


def _bind_args(cls, separate, args, kwargs):
    """torch's ``apply``: keyword arguments are bound to ``forward``'s positional parameters (setup_context style:
    by ``inspect.signature.bind``, with its errors); one that is no positional parameter is refused."""
    if not (kwargs or separate):
        return args
    sig = _SIGS.get(cls)
    if sig is None:
        sig = _SIGS[cls] = inspect.signature(cls.forward)
    if separate:  # (so setup_context's ``inputs`` hold the defaults too)
        b = sig.bind(*args, **kwargs)
        b.apply_defaults()
        args, kwargs = b.args, b.kwargs
        if not kwargs:
            return args
    params = [p for p in sig.parameters.values()
              if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    names = {p.name for p in params[0 if separate else 1:]}
    for k in kwargs:
        if k not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{k}'")
    b = sig.bind(*(args if separate else (None,) + tuple(args)), **kwargs)
    return tuple(b.args if separate else b.args[1:])


def _apply_eager(cls, separate, args):
    """The forward (grad mode off) and, when an input requires grad, the Function's node on its outputs."""
    from .._tensor.tensor import Tensor
    ctx = FunctionCtx()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    with _gm.no_grad():
        if separate:
            out = cls.forward(*args)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args)
    outs = out if isinstance(out, tuple) else (out,)
    if ctx._dirty:
        ids = {id(o) for o in outs}
        if any(isinstance(d, Tensor) and id(d) not in ids for d in ctx._dirty):
            raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                               "The inputs that are modified inplace must all be outputs of the Function.")
        for d in ctx._dirty:  # (torch's _mark_dirty bumps their versions, with or without a node)
            if isinstance(d, Tensor):
                d._storage.version += 1
    if not (_gm._state.enabled and any(ctx.needs_input_grad)):
        if any(isinstance(o, Tensor) for o in outs):
            outs = tuple(_no_history(o, args, ctx._dirty) for o in outs)
            out = outs if isinstance(out, tuple) else outs[0]
        return ctx, out
    for d in ctx._dirty:
        if not isinstance(d, Tensor):
            continue
        if d._requires_grad and d.grad_fn is None and d._base is None and not d.__dict__.get("_no_grad_view"):
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        b = d._base
        if b is not None and b._requires_grad and b.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    node = node_class(getattr(cls, "_node_name", cls.__name__ + "Backward"))
    ns: dict = {"__slots__": ()}
    if getattr(cls, "_node_name", None):
        ns["name"] = (lambda n: lambda self: n)(cls._node_cpp_name)
    fn_node = type(node.__name__, (BackwardCFunction,), ns)()
    fn_node._ctx = ctx
    ctx._node = fn_node
    fn_node._fn = cls
    fn_node._n_args = len(args)
    edges = [(i, edge_of(a)) for i, a in enumerate(args) if isinstance(a, Tensor) and a._requires_grad]
    edges = [(i, e) for i, e in edges if e is not None]  # (a no_grad view's gradient goes nowhere)
    fn_node._edge_pos = tuple(i for i, _ in edges)
    tpos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]  # (an error's index counts tensor inputs)
    fn_node._tensor_pos = frozenset(tpos)
    fn_node._in_meta = tuple((args[i]._shape, args[i].dtype, tpos.index(i)) for i, _ in edges)
    fn_node._edges = tuple(e for _, e in edges)
    nf = dict(edges)
    fn_node.next_functions = tuple(nf.get(i, (None, 0)) for i, a in enumerate(args) if isinstance(a, Tensor))
    # one slot per output, as torch numbers them (a non-tensor output's gradient is None)
    fn_node._out_meta = tuple((o._shape, o.dtype) if isinstance(o, Tensor) else None for o in outs)
    tens = [o for o in outs if isinstance(o, Tensor)]
    fn_node._outs_meta_dev = tens[0].device if tens else None
    dirty = {id(d) for d in ctx._dirty}
    new_outs = []
    for k, o in enumerate(outs):
        if isinstance(o, Tensor):
            if id(o) not in ctx._non_diff and (o.dtype.is_floating_point or o.dtype.is_complex):
                alias = any(o is a for a in args)
                if id(o) in dirty:
                    # modified in place and marked dirty: the input itself is the output, its history rebased onto
                    # this node (through its base when it is a view, as an in-place op's)
                    if not alias:
                        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
                                      "that have been mutated should be passed to ctx.mark_dirty(). (Triggered "
                                      "internally at /__w/pytorch/pytorch/torch/csrc/autograd/custom_function.cpp:"
                                      "320.)", stacklevel=4)
                    rebase(o, _Rebased(fn_node, k, o._storage))
                    new_outs.append(o)
                    continue
                if alias:
                    o = _view_of_self(o)  # returning an input: a view of it in the graph (torch's view_as)
                d = o.__dict__
                if alias or o._base is not None:
                    # a view made inside the Function: an in-place op on it is refused (torch's custom-Function view)
                    for f in ("_no_grad_view", "_ngv_at", "_ngv_derived"):
                        d.pop(f, None)
                    d["_fn_view"] = True
                o.grad_fn = fn_node
                o._requires_grad = True
                o._out_nr = k
            else:
                o = _no_history(o, args, ctx._dirty)
        new_outs.append(o)
    if ctx._saved:
        # (torch makes its SavedVariables once forward returned: the versions after a dirty output's bump)
        ctx._saved = tuple((t, t._storage.version if t is not None else 0) for t, _ in ctx._saved)
        fn_node._saved = _saved_entries(ctx, fn_node, new_outs)
        entry = _graph.SAVED_HOOKS[0]
        if entry is not None and entry[0] == "hooks":  # saved_tensors_hooks active: pack what it saved, as torch
            _pack_saved(ctx, fn_node, new_outs, entry[1], entry[2])
    out = tuple(new_outs) if isinstance(out, tuple) else new_outs[0]
    return ctx, out


def _view_of_self(t):
    """torch's ``_view_as_self_with_no_grad``: a view of ``t`` made in no_grad mode."""
    with _gm.no_grad():
        return t.view_as(t)


def _no_history(o, args, dirty):
    """An output that gets no gradient (no node, or non-differentiable), as torch's ``_wrap_outputs`` gives it: an
    input not marked dirty is a view of it; one requiring grad is a detached alias of it; a tensor the forward made
    that requires grad (and is no view) no longer does."""
    from .._tensor.tensor import Tensor
    if not isinstance(o, Tensor):
        return o
    is_input = any(o is a for a in args)
    if not o._requires_grad:
        return _view_of_self(o) if is_input and not any(o is d for d in dirty) else o
    if is_input:
        return o.detach()
    if o._base is None:
        o._requires_grad = False
    return o


class SavedTensor:
    """torch's ``torch._C._autograd.SavedTensor`` of a custom Function's saved slot: ``packed`` is what a pack hook
    returned (None until hooks are set), ``unpack()`` the tensor ``saved_tensors`` gives through the unpack hook
    (its values, with the saved tensor's autograd place: requires_grad and grad_fn, the Function's for an output)."""
    __slots__ = ("ctx", "k", "packed", "unpack_hook", "requires_grad", "grad_fn", "out_nr")

    def __init__(self, ctx, k):
        self.ctx, self.k, self.packed, self.unpack_hook = ctx, k, None, None

    def register_hooks(self, pack_hook, unpack_hook):
        if self.packed is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        node = self.ctx._node
        t = self.ctx._saved[self.k][0]
        if t is None or node is None or node._freed:
            return None
        self._pack(t, pack_hook, unpack_hook)
        node._wraps = True  # (freed by a backward without retain_graph, as every saved tensor)
        return None

    def _pack(self, t, pack_hook, unpack_hook):
        from ._saved_hooks import run_pack
        self.requires_grad, self.grad_fn, self.out_nr = t._requires_grad, t._grad_fn, t._out_nr
        self.packed = (run_pack(pack_hook, t),)
        self.unpack_hook = unpack_hook

    def unpack(self):
        from ._saved_hooks import run_unpack
        node = self.ctx._node
        if node is not None and node._freed:
            raise RuntimeError(_FREED_MSG)
        r = run_unpack(self.unpack_hook, self.packed[0])
        if not self.requires_grad or r._requires_grad and r._grad_fn is self.grad_fn and \
                (self.grad_fn is None or r._out_nr == self.out_nr):
            return r  # (the saved tensor itself, or one with no autograd place to take)
        t = r._alias()
        t._requires_grad = True
        if self.grad_fn is not None:
            t._grad_fn, t._out_nr = self.grad_fn, self.out_nr
        return t


def _pack_saved(ctx, node, outs, pack_hook, unpack_hook):
    """``saved_tensors_hooks`` around a custom Function: each tensor ``save_for_backward`` got is packed now, after
    its forward (an output as the Function returned it), and unpacked at each ``saved_tensors`` access; no version
    check then (as torch's: the entries the engine checks are dropped)."""
    hooked = ctx._hooked = [None] * len(ctx._saved)
    for k, (t, _) in enumerate(ctx._saved):
        if t is None:
            continue
        s = hooked[k] = SavedTensor(ctx, k)
        s._pack(t, pack_hook, unpack_hook)
    node._saved = ()
    node._wraps = True  # (freed by a backward without retain_graph)


class _Rebased:
    """What ``graph.rebase`` reads of an in-place op's result: its node, output index and storage."""
    __slots__ = ("grad_fn", "_out_nr", "_storage")

    def __init__(self, node, nr, storage):
        self.grad_fn, self._out_nr, self._storage = node, nr, storage


def _saved_entries(ctx, node, outs):
    """The saved tensors in ``graph.record``'s form, so that the engine checks their versions (torch's message,
    naming the producer) and frees them after a backward without ``retain_graph``."""
    res = []
    for t, v in ctx._saved:
        if t is None:
            continue
        k = next((i for i, o in enumerate(outs) if o is t), None)
        if k is not None:
            res.append((None, t._storage, v, t._shape, t.dtype, node, True, k))
        else:
            res.append((t, t._storage, v, t._shape, t.dtype, t.grad_fn, False, t._out_nr))
    return tuple(res)


def _forward_tangents(cls, ctx, args, out, tangents):
    """Eager forward AD through a Function: its ``jvp`` staticmethod gives the outputs' tangents (a tensor input
    without a tangent gets zeros, a non-tensor input None, as torch passes them)."""
    from .._tensor.tensor import Tensor
    from ..ops.creation import zeros
    from . import forward_ad as _fwad
    tans = []
    for a, t in zip(args, tangents):
        if not isinstance(a, Tensor):
            tans.append(None)
        elif t is None:
            tans.append(zeros(a._shape, dtype=a.dtype, device=a.device))
        else:
            tans.append(t)
    outs = out if isinstance(out, tuple) else (out,)
    ctx._in_jvp = True
    try:
        _fwad.ACTIVE[0] = 0
        try:
            res = cls.jvp(ctx, *tans)
        finally:
            _fwad.ACTIVE[0] = 1
    finally:
        ctx._in_jvp = False
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outs)} "
                           f"but got {len(res)})")
    for o, t in zip(outs, res):
        if isinstance(o, Tensor) and isinstance(t, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
            o.__dict__.pop("_fwr", None)
            o.__dict__.pop("_fw", None)
            _fwad._set_tangent(o, _fwad._cast(t._array, t.dtype, o.dtype))


class _DelayedError(Function):
    """torch's ``DelayedError``: aliases of its inputs whose node (``torch::autograd::Error``) raises ``msg`` when a
    backward reaches it."""
    _node_name = "Error"
    _node_cpp_name = "torch::autograd::Error"

    @staticmethod
    def forward(ctx, msg, *inputs):
        ctx.msg = msg
        return tuple(i.clone() if i is not None else None for i in inputs)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.msg)


def once_differentiable(fn):
    """torch's ``once_differentiable``: ``backward`` runs with grad mode off; under ``create_graph`` its results
    (when a gradient it received requires grad) hang on an ``Error`` node that refuses a second backward."""
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        from .._tensor.tensor import Tensor
        with _gm.no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not _gm.is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)

        def fake_requires_grad(v):
            if v is not None:
                v = v.detach()
                v.requires_grad = True
            return v
        res = _DelayedError.apply("trying to differentiate twice a function that was marked with "
                                  "@once_differentiable", *[fake_requires_grad(v) for v in outs])
        return res if isinstance(outputs, tuple) else res[0]
    return wrapper


# ---- NestedIOFunction: torch's legacy (non-static) Function over nested inputs, kept as torch keeps it ----------
def _nested_tensors(obj, none=False):
    """The tensors (and Nones, ``none``) of a nested list / tuple / dict, in order (torch's ``_iter_tensors``)."""
    from .._tensor.tensor import Tensor
    if isinstance(obj, Tensor) or none and obj is None:
        yield obj
    elif obj is None:
        return
    elif isinstance(obj, (list, tuple, dict)):
        for o in (obj.values() if isinstance(obj, dict) else obj):
            yield from _nested_tensors(o, none)
    else:
        raise ValueError(f"Auto nesting doesn't know how to process an input object of type {type(obj).__name__}. "
                         f"Accepted types: Tensors{' or None' if none else ''}, or lists/tuples of them")


def _unflatten(flat, proto):
    """``flat`` laid out as the nested list / tuple ``proto`` (torch's ``_unflatten``)."""
    def helper(flat, proto):
        if not isinstance(proto, (list, tuple)):
            return flat[0], flat[1:]
        res = []
        for e in proto:
            if e is None:
                res.append(e)
            else:
                r, flat = helper(flat, e)
                res.append(r)
        return type(proto)(res), flat
    return helper(flat, proto)[0]


def _tensor_data(obj):
    """``obj`` with each tensor replaced by its ``.data`` (torch's ``_map_tensor_data``)."""
    from .._tensor.tensor import Tensor
    if isinstance(obj, Tensor):
        return obj.data
    if obj is None:
        return None
    if isinstance(obj, (list, tuple)):
        mapped = (_tensor_data(x) for x in obj)
        return type(obj)(*mapped) if hasattr(obj, "_fields") else type(obj)(mapped)
    if isinstance(obj, dict):
        return {k: _tensor_data(v) for k, v in obj.items()}
    raise ValueError(f"Auto nesting doesn't know how to process an input object of type {type(obj).__name__}. "
                     "Accepted types: Tensors, or lists/tuples of them")


class InplaceFunction(Function):
    """torch's ``InplaceFunction``, kept only for backward compatibility (use :class:`Function`): a Function whose
    (deprecated) instance records ``inplace``; its forward decides what that means."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """torch's ``NestedIOFunction``, kept only for backward compatibility: a legacy Function whose instance
    methods ``forward_extended`` / ``backward_extended`` take nested inputs. As in torch 2.x, the legacy call path
    it relies on is gone (calling an instance raises torch's AttributeError; ``apply`` runs the nested forward on
    the context, which has no ``_nested_input``): use :class:`Function`."""

    def _do_forward(self, *input):
        self._nested_input = input
        flat_input = tuple(_nested_tensors(input))
        flat_output = super()._do_forward(*flat_input)
        return _unflatten(flat_output, self._nested_output)

    def _do_backward(self, gradients, retain_variables):
        self.retain_variables = retain_variables
        result = super()._do_backward(gradients, retain_variables)
        if not retain_variables:
            del self._nested_output
            del self._to_save_nested
        return result

    def backward(self, *gradients):
        """Shared backward utility."""
        result = self.backward_extended(*_unflatten(gradients, self._nested_output))
        return tuple(_nested_tensors(result, none=True))

    __call__ = _do_forward

    def forward(self, *args):
        """Shared forward utility."""
        nested_tensors = _tensor_data(self._nested_input)
        result = self.forward_extended(*nested_tensors)
        del self._nested_input
        self._nested_output = result
        return tuple(_nested_tensors(result))

    def save_for_backward(self, *args):
        self.to_save = tuple(_nested_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        return _unflatten(self.to_save, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs):
        self.dirty_tensors = tuple(_nested_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs):
        self.non_differentiable = tuple(_nested_tensors((args, kwargs)))

    def forward_extended(self, *input):
        """User defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """User defined backward."""
        raise NotImplementedError


from . import _function_transforms as _tr  # noqa: E402  (it imports this module's names)
