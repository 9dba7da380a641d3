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
    __slots__ = ("_ctx", "_fn", "_tensor_pos", "_edge_pos", "_n_args", "_outs_meta_dev")

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
        for i in self._edge_pos:
            g = res[i]
            if g is None:
                out.append(None)
            else:
                out.append(g if as_tensors else g._array)
        return out

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
        with _gm.no_grad():
            if separate:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        if not (_gm.is_grad_enabled() and any(ctx.needs_input_grad)):
            return out
        node = node_class(cls.__name__ + "Backward")
        fn_node = type(node.__name__, (_FunctionNode,), {"__slots__": ()})()
        fn_node._ctx = ctx
        fn_node._fn = cls
        fn_node._n_args = len(args)
        fn_node._edge_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor) and a._requires_grad)
        fn_node._edges = tuple(edge_of(args[i]) for i in fn_node._edge_pos)
        fn_node.next_functions = tuple(edge_of(a) if a._requires_grad else (None, 0)
                                       for a in args if isinstance(a, Tensor))
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


class once_differentiable:  # noqa: N801  (PyTorch's name)
    def __new__(cls, fn):
        return fn


