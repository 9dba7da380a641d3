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

import inspect

import jax

from .. import _device as _dev
from . import grad_mode as _gm
from .graph import Node, edge_of, node_class


class FunctionCtx:
    def __init__(self):
        self.to_save = ()
        self._saved = None
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._non_diff = set()
        self._dirty = ()

    def save_for_backward(self, *tensors):
        self.to_save = tensors
        self._saved = tuple((t, t._storage.version) if t is not None else (None, 0) for t in tensors)

    @property
    def saved_tensors(self):
        if self._saved is None:
            return ()
        out = []
        for t, v in self._saved:
            if t is not None and t._storage.version != v:
                raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                                   f"inplace operation: [{t.type()} [{', '.join(map(str, t._shape))}]], is at version "
                                   f"{t._storage.version}; expected version {v} instead.")
            out.append(t)
        return tuple(out)

    def mark_non_differentiable(self, *tensors):
        self._non_diff.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)


class _FunctionNode(Node):
    __slots__ = ("_ctx", "_fn", "_tensor_pos", "_edge_pos", "_in_meta", "_n_args", "_outs_meta_dev")

    def _grads(self, cts, as_tensors):
        from .._tensor.tensor import Tensor
        from ..ops.creation import zeros
        grads = []
        for ct, (shape, dt) in zip(cts, self._out_meta):
            if ct is None:
                grads.append(zeros(shape, dtype=dt, device=self._outs_meta_dev) if self._ctx.materialize_grads
                             else None)
            elif isinstance(ct, Tensor):
                grads.append(ct)
            else:
                grads.append(Tensor._from_array(ct, dt, self._outs_meta_dev))
        res = self._fn.backward(self._ctx, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) != self._n_args:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                               f"{self._n_args}, got {len(res)})")
        out = []
        for i, (shape, dt, k) in zip(self._edge_pos, self._in_meta):
            g = res[i]
            if g is None:
                out.append(None)
                continue
            if isinstance(g, Tensor):
                g = self._validate(g, shape, dt, k)
            out.append(g if as_tensors else g._array)
        return out

    def _validate(self, g, shape, dt, k):
        """PyTorch's ``validate_outputs``: a gradient of another shape is summed down to the input's (or raises),
        one of another dtype is cast to the input's (a float32 gradient of a bfloat16 input: AMP's custom_fwd)."""
        if g._shape != shape:
            n = len(g._shape) - len(shape)
            if n < 0 or any(s != 1 and s != gs for s, gs in zip(shape, g._shape[n:])):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index {k} - got "
                                   f"{list(g._shape)} but expected shape compatible with {list(shape)}")
            g = g.sum_to_size(shape)
        if g.dtype is not dt and not g.dtype.is_complex and not dt.is_complex:
            g = g.to(dt)
        return g

    def apply_custom(self, cts):
        with _gm.no_grad():
            return self._grads(cts, False)

    def apply_tensors(self, cts):
        with _gm.enable_grad():
            return self._grads(cts, True)


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call ``.apply``."""

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

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._tensor.tensor import Tensor
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        separate = cls.setup_context is not Function.setup_context
        if not getattr(cls, "generate_vmap_rule", False) and "vmap" not in vars(cls) and any(
                isinstance(a, Tensor) and isinstance(getattr(a._array, "batch_dim", None), int) for a in args):
            raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                               "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
                               "details, please see https://pytorch.org/docs/main/notes/extending.func.html")
        if _gm._state.func and any(isinstance(a, Tensor) and isinstance(a._array, jax.core.Tracer) for a in args):
            if not separate:
                raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, "
                                   "jvp, jacrev, ...), it must override the setup_context staticmethod. For more "
                                   "details, please see https://pytorch.org/docs/main/notes/extending.func.html")
            return _apply_traced(cls, args, kwargs)
        with _gm.no_grad():
            if separate:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        if not (_gm._state.enabled and any(ctx.needs_input_grad)):
            return out
        node = node_class(cls.__name__ + "Backward")
        fn_node = type(node.__name__, (_FunctionNode,), {"__slots__": ()})()
        fn_node._ctx = ctx
        fn_node._fn = cls
        fn_node._n_args = len(args)
        edges = [(i, edge_of(a)) for i, a in enumerate(args) if isinstance(a, Tensor) and a._requires_grad]
        edges = [(i, e) for i, e in edges if e is not None]  # (a no_grad view's gradient goes nowhere)
        fn_node._edge_pos = tuple(i for i, _ in edges)
        tpos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]  # (an error's index counts tensor inputs)
        fn_node._in_meta = tuple((args[i]._shape, args[i].dtype, tpos.index(i)) for i, _ in edges)
        fn_node._edges = tuple(e for _, e in edges)
        nf = dict(edges)
        fn_node.next_functions = tuple(nf.get(i, (None, 0)) for i, a in enumerate(args) if isinstance(a, Tensor))
        tens = [o for o in outs if isinstance(o, Tensor)]
        fn_node._out_meta = tuple((o._shape, o.dtype) for o in tens)
        fn_node._outs_meta_dev = tens[0].device if tens else None
        new_outs = []
        k = 0
        for o in outs:
            if isinstance(o, Tensor):
                if id(o) not in ctx._non_diff and (o.dtype.is_floating_point or o.dtype.is_complex):
                    if any(o is a for a in args):
                        o = o._alias()  # returning an input: a new tensor in the graph (as PyTorch's view_as)
                    o.grad_fn = fn_node
                    o._requires_grad = True
                    o._out_nr = k
                k += 1
            new_outs.append(o)
        return tuple(new_outs) if isinstance(out, tuple) else new_outs[0]


class _FuncMode:
    """Inside a differentiating ``func`` transform: recording off, grad mode on and nothing cut (JAX
    differentiates what runs here, as the transform's function itself), restored on exit."""
    def __enter__(self):
        st = _gm._state
        self.prev = st.enabled, st.user, st.stop
        st.enabled, st.user, st.stop = False, True, False

    def __exit__(self, *exc):
        st = _gm._state
        st.enabled, st.user, st.stop = self.prev
        return False


def _apply_traced(cls, args, kwargs):
    """``Function.apply`` under a differentiating ``func`` transform (the tensors hold JAX tracers): a
    ``jax.custom_vjp`` whose forward is ``forward`` + ``setup_context`` and whose backward is the Function's
    ``backward``, so JAX uses the hand-written gradient as torch.func does. The tensors ``ctx`` saves (and tensor
    attributes set on it) travel as residuals; its other attributes are Python values kept with it."""
    import copy

    import numpy as np

    from .._tensor.tensor import Tensor
    pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    metas = [(args[i].dtype, args[i].device) for i in pos]
    box: dict = {}

    def rebuild(arrays):
        new = list(args)
        for i, a, (dt, dev) in zip(pos, arrays, metas):
            new[i] = Tensor._from_array(a, dt, dev)
        return tuple(new)

    def run(arrays):
        new = rebuild(arrays)
        with _FuncMode():
            out = cls.forward(*new, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        box["out"] = (isinstance(out, tuple), [(o.dtype, o.device) if isinstance(o, Tensor) else (None, o)
                                               for o in outs])
        return new, out, tuple(o._array for o in outs if isinstance(o, Tensor))

    @jax.custom_vjp
    def f(*arrays):
        return run(arrays)[2]

    def fwd(*arrays):
        new, out, res = run(arrays)
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and (a.dtype.is_floating_point or a.dtype.is_complex)
                                     for a in args)
        with _FuncMode():
            cls.setup_context(ctx, new, out)
        saved = [None if t is None else (t._array, t.dtype, t.device) for t in ctx.to_save]
        attrs = {k: (v._array, v.dtype, v.device) for k, v in vars(ctx).items()
                 if isinstance(v, Tensor) and k != "to_save"}
        for k in attrs:
            delattr(ctx, k)
        ctx.to_save, ctx._saved = (), None
        box["ctx"] = ctx
        box["meta"] = [None if s is None else s[1:] for s in saved], {k: v[1:] for k, v in attrs.items()}
        return res, ([None if s is None else s[0] for s in saved], {k: v[0] for k, v in attrs.items()})

    def bwd(res, cts):
        (saved_arrays, attr_arrays), (saved_meta, attr_meta) = res, box["meta"]
        ctx = copy.copy(box["ctx"])
        ts = [None if a is None else Tensor._from_array(a, *m) for a, m in zip(saved_arrays, saved_meta)]
        ctx.to_save = tuple(ts)
        ctx._saved = tuple((t, t._storage.version) if t is not None else (None, 0) for t in ts)
        for k, a in attr_arrays.items():
            setattr(ctx, k, Tensor._from_array(a, *attr_meta[k]))
        it = iter(cts)
        grads = [Tensor._from_array(_placed(next(it), dev), dt, dev) for dt, dev in box["out"][1] if dt is not None]
        with _FuncMode():
            res = cls.backward(ctx, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) != len(args):
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {len(args)}, got {len(res)})")
        # (an integer or bool input's cotangent is JAX's float0 zeros)
        return tuple(np.zeros(shape, jax.dtypes.float0) if not jax.numpy.issubdtype(dt, jax.numpy.inexact) else
                     jax.numpy.zeros(shape, dt) if res[i] is None else res[i]._array.astype(dt)
                     for i, (shape, dt) in zip(pos, avals))

    f.defvjp(fwd, bwd)
    arrays = [args[i]._array for i in pos]
    avals = [(a.shape, a.dtype) for a in arrays]
    flat = f(*arrays)
    is_tuple, out_meta = box["out"]
    it = iter(flat)
    outs = [Tensor._from_array(next(it), dt, dev) if dt is not None else dev for dt, dev in out_meta]
    return tuple(outs) if is_tuple else outs[0]


def _placed(a, dev):
    """A cotangent JAX made itself (the seed of an eager func.grad) sits on JAX's default device: put it on the
    output's device, where the user's backward computes."""
    jd = _dev.misplaced(a, dev)
    return a if jd is None else jax.device_put(a, jd)


class once_differentiable:  # noqa: N801  (PyTorch's name)
    def __new__(cls, fn):
        return fn


