"""``autograd.Function`` under ``torch.func`` transforms (the tensors hold JAX tracers): the Function's
``backward`` as a ``jax.custom_vjp`` (grad, vjp, jacrev), its ``jvp`` staticmethod as a ``jax.custom_jvp`` (jvp,
jacfwd), its ``vmap`` staticmethod as a ``jax.custom_batching.custom_vmap`` (vmap)."""
from __future__ import annotations

import jax

from .. import _device as _dev
from . import grad_mode as _gm
from .function import FunctionCtx, _has_vmap, _overridden, _trim_nones

_JACFWD = [0]  # torch.func.jacfwd calls running (it vmaps: a Function there needs vmap support, as in torch)


class VmapInfo:
    """``info`` of a Function's ``vmap`` staticmethod: ``batch_size`` and ``randomness``."""
    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size, randomness):
        self.batch_size, self.randomness = batch_size, randomness

    def __repr__(self):
        return f"VmapInfo(batch_size={self.batch_size}, randomness='{self.randomness}')"


def _quiet():
    """Grad mode for running user code whose ops JAX sees: recording off (inside a differentiating func transform,
    differentiation left to JAX, nothing cut)."""
    return _FuncMode() if _gm._state.func else _gm.no_grad()


def _rebuilder(args):
    """(the positions of ``args``' tensors, ``rebuild(arrays)``: ``args`` with those tensors made again over
    ``arrays``, with their dtypes and devices)."""
    from .._tensor.tensor import Tensor
    pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    metas = [(args[i].dtype, args[i].device) for i in pos]

    def rebuild(arrays):
        new = list(args)
        for i, a, (dt, dev) in zip(pos, arrays, metas):
            new[i] = Tensor._from_array(a, dt, dev)
        return tuple(new)
    return pos, rebuild


def _out_meta(out) -> tuple:
    """(whether ``out`` is a tuple, per output (dtype, device) of a tensor or (None, value) of anything else): what
    rebuilds the outputs around the arrays a transformed call returns."""
    from .._tensor.tensor import Tensor
    outs = out if isinstance(out, tuple) else (out,)
    return isinstance(out, tuple), [(o.dtype, o.device) if isinstance(o, Tensor) else (None, o) for o in outs]


def _apply_vmap_rule(cls, args):
    """``Function.apply`` on batched tensors (``torch.func.vmap``) with a user ``vmap`` staticmethod: a
    ``jax.custom_batching.custom_vmap`` whose rule calls ``vmap(info, in_dims, *args)`` with the batch dimension
    of every batched tensor at 0 (``in_dims`` 0, None for the others) and moves each output's ``out_dims`` to 0."""
    from jax.custom_batching import custom_vmap

    from .._tensor.tensor import Tensor
    pos, rebuild = _rebuilder(args)
    box: dict = {}

    def unwrap(out):
        box["out"] = _out_meta(out)
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(o._array for o in outs if isinstance(o, Tensor))

    @custom_vmap
    def f(*arrays):
        with _quiet():
            return unwrap(cls.forward(*rebuild(arrays)))

    @f.def_vmap
    def rule(axis_size, in_batched, *arrays):
        new = rebuild(arrays)
        it = iter(in_batched)
        in_dims = [None] * len(args)
        for i in pos:
            in_dims[i] = 0 if next(it) else None
        from ..func import _vmap as _vm
        info = VmapInfo(axis_size, (_vm._RANDOMNESS or ["error"])[-1])
        with _quiet():
            res = cls.vmap(info, tuple(in_dims), *new)
        if not (isinstance(res, tuple) and len(res) == 2):
            raise RuntimeError(f"{cls.__name__}.vmap must return a tuple (output, out_dims)")
        out, out_dims = res
        outs = out if isinstance(out, tuple) else (out,)
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outs)
        if len(dims) != len(outs):
            raise RuntimeError(f"{cls.__name__}.vmap: expected out_dims to have {len(outs)} entries, got "
                               f"{len(dims)}")
        arrs, flags = [], []
        for o, d in zip(outs, dims):
            if not isinstance(o, Tensor):
                continue
            a = o._array
            if d is None:
                arrs.append(a)
                flags.append(False)
            else:
                arrs.append(jax.numpy.moveaxis(a, d, 0))
                flags.append(True)
        box["out"] = _out_meta(out)
        return tuple(arrs), tuple(flags)

    flat = f(*[args[i]._array for i in pos])
    is_tuple, out_meta = box["out"]
    it = iter(flat)
    outs = [Tensor._from_array(next(it), dt, dev) if dt is not None else dev for dt, dev in out_meta]
    return tuple(outs) if is_tuple else outs[0]


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
    pos, rebuild = _rebuilder(args)
    box: dict = {}

    def run(arrays):
        new = rebuild(arrays)
        with _FuncMode():
            if _has_vmap(cls) and not getattr(cls, "generate_vmap_rule", False) and any(
                    isinstance(getattr(a, "batch_dim", None), int) for a in arrays):
                out = _apply_vmap_rule(cls, new)  # (a vmap outside this transform: its staticmethod)
            else:
                out = cls.forward(*new, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        box["out"] = _out_meta(out)
        return new, out, tuple(o._array for o in outs if isinstance(o, Tensor))

    @jax.custom_vjp
    def f(*arrays):
        return run(arrays)[2]

    def fwd(*primals):  # (CustomVJPPrimals: symbolic zeros on, so an unused output's gradient can be None)
        new, out, res = run([p.value for p in primals])
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
        mat = ctx.materialize_grads
        grads = [None if dt is None else _grad_of(next(it), dt, dev, mat) for dt, dev in box["out"][1]]
        with _FuncMode():
            res = cls.backward(ctx, *grads)
        res = _trim_nones(res, len(args))
        if len(res) != len(args):
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {len(args)}, got {len(res)})")
        # (an integer or bool input's cotangent is JAX's float0 zeros)
        return tuple(np.zeros(shape, jax.dtypes.float0) if not jax.numpy.issubdtype(dt, jax.numpy.inexact) else
                     jax.numpy.zeros(shape, dt) if res[i] is None else res[i]._array.astype(dt)
                     for i, (shape, dt) in zip(pos, avals))

    if _gm._state.forward:
        # the innermost differentiating transform is forward mode (jvp, jacfwd): the jvp staticmethod, as torch.func
        if "jvp" not in _overridden(cls):
            raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                      "with forward mode AD.")
        f = jax.custom_jvp(f.fun)

        def f_jvp(primals, tangents):
            new, out, res = run(primals)
            ctx = FunctionCtx()
            ctx.needs_input_grad = tuple(isinstance(a, Tensor) and (a.dtype.is_floating_point or a.dtype.is_complex)
                                         for a in args)
            with _FuncMode():
                cls.setup_context(ctx, new, out)
            tans = [None] * len(args)
            for i, t in zip(pos, tangents):
                a = new[i]
                if a.dtype.is_floating_point or a.dtype.is_complex:
                    tans[i] = Tensor._from_array(t, a.dtype, a.device)
            ctx._in_jvp = True
            with _FuncMode():
                tout = cls.jvp(ctx, *tans)
            tout = tout if isinstance(tout, tuple) else (tout,)
            outs = out if isinstance(out, tuple) else (out,)
            if len(tout) != len(outs):
                raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                                   f"{len(outs)} but got {len(tout)})")
            res_t = []
            for o, t in zip(outs, tout):
                if not isinstance(o, Tensor):
                    continue
                if isinstance(t, Tensor):
                    res_t.append(t._array.astype(o._array.dtype))
                else:
                    res_t.append(jax.numpy.zeros(o._array.shape, o._array.dtype))
            return res, tuple(res_t)
        f.defjvp(f_jvp)
    else:
        f.defvjp(fwd, bwd, symbolic_zeros=True)
    arrays = [args[i]._array for i in pos]
    avals = [(a.shape, a.dtype) for a in arrays]
    flat = f(*arrays)
    is_tuple, out_meta = box["out"]
    it = iter(flat)
    outs = [Tensor._from_array(next(it), dt, dev) if dt is not None else dev for dt, dev in out_meta]
    return tuple(outs) if is_tuple else outs[0]


def _grad_of(ct, dt, dev, materialize):
    """An output's cotangent as its gradient for ``backward`` (``bwd``; a non-tensor output's is None): a symbolic
    zero (an unused output's) or JAX's float0 one (an integer or bool output's) as zeros of its dtype, as torch
    materializes them, or None after ``ctx.set_materialize_grads(False)``."""
    from jax.custom_derivatives import SymbolicZero

    from .._tensor.tensor import Tensor
    if isinstance(ct, SymbolicZero) or ct.dtype == jax.dtypes.float0:
        if not materialize:
            return None
        from ..ops.creation import zeros
        return zeros(tuple(ct.shape), dtype=dt, device=dev)
    return Tensor._from_array(_placed(ct, dev), dt, dev)


def _placed(a, dev):
    """A cotangent JAX made itself (the seed of an eager func.grad) sits on JAX's default device: put it on the
    output's device, where the user's backward computes."""
    jd = _dev.misplaced(a, dev)
    return a if jd is None else jax.device_put(a, jd)
