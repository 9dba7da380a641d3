"""The one call path of every op (design.md §1).

``dispatch(op, tensor_args, static_args)``:
 0. inside an autocast region only (one cheap check otherwise): apply the op's ``autocast`` policy
    (``amp/autocast_mode.py``): floating inputs are cast by recorded ``_to_copy`` dispatches, so the
    cached entry below is keyed by the cast dtypes and gradients flow back in the inputs' dtypes;
 1. unwrap tensors to jax arrays (a non-view tensor's array is its storage's array);
 2. look up the cached entry for (static args, call signature): the dtype rule's casts and output
    dtypes (decided by ``_promotion``) and the jitted kernel — built once, then a dict hit;
 3. check devices (PyTorch's message) and broadcast shapes (PyTorch's message);
 4. run the jitted kernel;
 5. wrap the result(s) in new Tensors (dtype and device from the facade, never from JAX);
 6. when an input requires grad and grad mode is on, record the autograd Node: the entry and the
    input arrays. No ``jax.vjp`` runs in the forward: backward runs the entry's cached jitted
    vjp (node by node), or the whole recorded graph as one cached jitted program (engine.py).
"""
from __future__ import annotations

import functools
import numbers
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _config
from .. import dtypes as D
from .._tensor import storage as _storage
from .._tensor import views as V
from .._tensor.tensor import Tensor, with_memory_order
from ..autograd import grad_mode as _gm
from ..autograd import graph as _graph
from ..autograd import forward_ad as _fwad
from .. import _promotion
from .._stats import COUNTS as _COUNTS, PROFILER as _PROFILER
from ..amp import autocast_mode as _amp
from . import _registry
from ._registry import SELF
from .._symbolic import Concrete as _Concrete, SymNumber as _SYM
from .._warn import user_stacklevel as _user_stacklevel

_AC_ANY = _amp.ANY  # non-zero only while some thread has autocast enabled: the fast path's one check

_from_array = Tensor._from_array
_state = _gm._state
_FUNC_ACTIVE = _gm.FUNC_ACTIVE
_FW_ACTIVE = _fwad.ACTIVE  # non-zero only while a forward-AD dual level is entered (autograd/forward_ad.py)


class Entry:
    """Everything dispatch needs for one (op, static args, signature): built once."""
    __slots__ = ("fn", "outs", "body", "bwds", "jvps", "diff_ok", "opmath", "undef")

    def __init__(self, fn, outs, body, diff_ok, op=None, sargs=None, sig=None):
        self.fn = fn          # jitted forward: arrays -> array(s)
        self.outs = outs      # facade dtypes of the outputs
        self.body = body      # the same forward, unjitted (traced into vjps and whole-graph backwards)
        self.bwds = {}
        self.jvps = {}
        self.diff_ok = diff_ok
        u = getattr(op, "undefined_grad", None)  # (present -> True where torch's formula gives no gradient)
        self.undef = None if u is None else functools.partial(u, sargs, sig)
        # a half-precision pullback runs in float32 (``_opmath``): an elementwise op's unless torch's backward starts
        # from the op's half result (tanh, sigmoid, exp, softmax...: its saved output, rounded; float32 would be
        # another value); any op's where its ``half_grad`` says torch's backward sums in float32 (True: expand's
        # sum_to_size, gather's scatter_add), none where it says torch adds in half (False)
        flag = getattr(op, "half_grad", None)
        if callable(flag):
            flag = flag(sargs, sig)
        if flag is None:
            saves = getattr(op, "saves", None)
            flag = "elementwise" if not (isinstance(saves, tuple) and "result" in saves) else False
            if flag and getattr(op, "layout", None) == "iter" and op.name not in _FIRST_OPERAND_ONLY:
                flag = "pointwise"  # (a TensorIterator op: a broadcast input's gradient is summed to its shape)
        self.opmath = flag

    def vjp_apply(self, diff_idx):
        """Pure function (input arrays, output cotangents) -> cotangents of inputs ``diff_idx``.

        Missing (None) output cotangents are zeros. The forward is re-traced inside, and XLA keeps
        only what the pullback needs (a matmul's vjp needs its inputs, not its output)."""
        body, opmath = self.body, self.opmath

        def pull(arrays, cts):
            f = _of(body, arrays, diff_idx)
            if len(cts) > 1 and any(c is None for c in cts) and any(c is not None for c in cts):
                # (the outputs with a cotangent only: torch's backward of an output nobody used is not run, so an
                # eigenvector's 1 / (l_i - l_j) at a repeated eigenvalue gives no NaN to eigh's eigenvalues'
                # gradient, where a zero cotangent times it would)
                keep, full_f = tuple(k for k, c in enumerate(cts) if c is not None), f
                f = lambda *d: tuple(full_f(*d)[k] for k in keep)  # noqa: E731
                cts = tuple(cts[k] for k in keep)
            out, pb = jax.vjp(f, *[arrays[i] for i in diff_idx])
            outs = out if isinstance(out, tuple) else (out,)
            full = tuple(_zero_ct(o) if c is None else c for c, o in zip(cts, outs))
            # PyTorch's complex gradient is the conjugate of JAX's cotangent convention (both linear),
            # so a complex op's pullback runs as conj(vjp(conj(ct)))
            full = tuple(jnp.conj(c) if jnp.iscomplexobj(c) else c for c in full)
            res = pb(full if isinstance(out, tuple) else full[0])  # (a one-piece split's output is a 1-tuple)
            return tuple(_conj_grad(r) if jnp.iscomplexobj(r) else r for r in res)

        def apply(arrays, cts):
            up = _opmath(body, arrays, opmath is not True) if opmath else None
            if up is None:
                return pull(arrays, cts)
            # float16 / bfloat16: the pullback in float32, each gradient rounded once, as torch's CPU kernels
            # compute half types (their opmath): in half, JAX's formulas overflow where torch's do not
            # (tanh's g * (1 - y) * (1 + y) at y = -1 with g = 40000 is inf * 0 = nan)
            up, dts, shape = up
            cts = tuple(c.astype(dt) if c is not None and c.dtype != dt else c for c, dt in zip(cts, dts))
            # a pointwise op's half input that broadcasts: torch's formula gives its gradient at the full shape, a
            # half tensor (rounded), which autograd then sums to the input's shape (``sum_to``, in float32)
            wide = () if opmath != "pointwise" else tuple(
                i for i in diff_idx if arrays[i].dtype in _HALF and arrays[i].shape != shape)
            if wide:
                up = [jnp.broadcast_to(a, shape) if i in wide else a for i, a in enumerate(up)]
            res = pull(up, cts)
            return tuple(_sum_to(stored_half(r, arrays[i].dtype), arrays[i].shape).astype(arrays[i].dtype)
                         if i in wide else r.astype(arrays[i].dtype) if arrays[i].dtype in _HALF else r
                         for r, i in zip(res, diff_idx))
        apply.__name__ = apply.__qualname__ = f"{getattr(body, '__name__', 'op')}_backward"  # jit_<op>_backward
        return apply

    def jvp_fn(self, tan_idx, jit=True):
        """The cached jitted forward-mode kernel (forward AD): (input arrays, tangents of inputs ``tan_idx``) ->
        output tangent(s), from ``jax.jvp`` of the forward body (``jit=False``: an eager op's, run as it is)."""
        f = self.jvps.get(tan_idx)
        if f is None:
            body = self.body

            def apply(arrays, tangents):
                return jax.jvp(_of(body, arrays, tan_idx), tuple(arrays[i] for i in tan_idx), tuple(tangents))[1]
            apply.__name__ = apply.__qualname__ = f"{getattr(body, '__name__', 'op')}_jvp"
            f = self.jvps[tan_idx] = jax.jit(apply, keep_unused=True) if jit else apply
        return f

    def bwd_fn(self, diff_idx):
        """The cached jitted backward kernel of this entry (used node by node)."""
        f = self.bwds.get(diff_idx)
        if f is None:
            f = self.bwds[diff_idx] = jax.jit(self.vjp_apply(diff_idx), keep_unused=True)
        return f


_HALF = (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16))


def _conj_grad(r):
    """``conj(r)`` of a complex gradient with its zero imaginary parts +0 (``0 - imag``, not ``-imag``): torch's
    gradients of a real cotangent (``x.real.sum()``) read ``1.+0.j`` where a plain conj of JAX's ``1+0j`` gives -0."""
    return jax.lax.complex(jnp.real(r), jnp.zeros((), jnp.real(r).dtype) - jnp.imag(r))


def _opmath(body, arrays, elementwise=True):
    """``arrays`` with their float16 / bfloat16 ones in float32, for an elementwise op (each output of its inputs'
    broadcast shape; ``elementwise=False``: any shapes, an op whose ``half_grad`` is True) whose ``body`` then gives
    each output in its dtype or (for a half one) in float32: its computation then runs in float32 (the op's result
    cast back to half inside, where the facade's dtype rule fixes it); else None (no half input; an op of another
    shape -- a pooling's backward accumulates in half, as torch's; or an op that does not take float32 there)."""
    if not any(getattr(a, "dtype", None) in _HALF for a in arrays):
        return None
    shape = None
    if elementwise:
        try:
            shape = jnp.broadcast_shapes(*[a.shape for a in arrays if hasattr(a, "shape")])
        except ValueError:
            return None
    up = [a.astype(jnp.float32) if getattr(a, "dtype", None) in _HALF else a for a in arrays]
    try:
        was = jax.tree_util.tree_leaves(jax.eval_shape(body, *arrays))
        now = jax.tree_util.tree_leaves(jax.eval_shape(body, *up))
    except Exception:  # noqa: BLE001 (an op that does not take float32 there: its pullback stays in half)
        return None
    if len(was) != len(now) or any((elementwise and w.shape != shape) or w.shape != n.shape or
                                   not (n.dtype == w.dtype or w.dtype in _HALF and n.dtype == jnp.float32)
                                   for w, n in zip(was, now)):
        return None
    return up, [n.dtype for n in now], shape


def stored_half(v, dt):
    """``v`` rounded to the float16 / bfloat16 ``dt`` and read back in float32: a half value torch's backward reads
    (a saved result, an intermediate tensor). Behind an optimization barrier: XLA's excess-precision pass drops a
    float32 -> half -> float32 round trip (``_rounding.stored``'s), and ``reduce_precision`` flushes float16's
    subnormals. The barrier is linear: in a tangent, its transpose rounds the cotangent the same way."""
    return jax.lax.optimization_barrier(v.astype(dt)).astype(jnp.float32)


def _sum_to(r, shape):
    """``r`` summed to the broadcastable ``shape`` (torch's ``sum_to``: its leading dims and the size-1 ones)."""
    lead = r.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + k for k, n in enumerate(shape) if n == 1 and r.shape[lead + k] != 1)
    return jnp.sum(r, axis=axes, keepdims=True).reshape(shape) if axes else r


def _of(body, arrays, idx):
    """``body`` as a function of its inputs ``idx`` only, the others fixed at ``arrays`` (what vjp/jvp take)."""
    def g(*d):
        merged = list(arrays)
        for i, v in zip(idx, d):
            merged[i] = v
        return body(*merged)
    return g


def _zero_ct(o):
    if jnp.issubdtype(o.dtype, jnp.inexact):
        return jnp.zeros(o.shape, o.dtype)
    import numpy as np
    return np.zeros(o.shape, jax.dtypes.float0)


def _placed(body):
    """An eager kernel (an output shape that depends on values: nonzero, unique...) puts its results where its
    first input is: the arrays it makes from host values would land on JAX's default device."""
    def fn(*arrays):
        res = body(*arrays)
        a = next((a for a in arrays if isinstance(a, jax.Array)), None)
        return res if a is None else jax.device_put(res, next(iter(a.devices())))
    return fn


def _build(op, sargs, sig):
    casts, outs = op.rule(op, sig, sargs)
    if op.float8 is not True:
        _promotion.check_float8(op, sig)
    impl = op.impl_for(sargs)
    src_dts = [None if s is None else (s[1] if type(s) is tuple else None) for s in sig]
    nout = op.nout
    n = len(sig)
    traced = tuple(i for i, v in enumerate(sargs) if v is TRACED)  # their values follow the tensors' arrays

    def body(*arrays):
        f = impl
        if traced:
            vals = list(sargs)
            for i, v in zip(traced, arrays[n:]):
                vals[i] = v
            f = op.impl_for(tuple(vals))
            arrays = arrays[:n]
        if op.tensors == "list":
            arrays = (tuple(_cast(a, src_dts[i], casts[i]) for i, a in enumerate(arrays)),)
        else:
            arrays = tuple(_cast(a, src_dts[i], casts[i]) for i, a in enumerate(arrays))
        res = f(*arrays)
        if nout == 1:
            return _fix_out(res, outs[0])
        return tuple(_fix_out(r, o) for r, o in zip(res, outs))

    body.__name__ = body.__qualname__ = op.name  # XLA's program is jit_<op> (profiles, dumps, compile logs)
    # keep_unused: a kernel that reads only its inputs' shapes (zero_, zeros_like, a backward of zeros) still
    # runs where its inputs are; without them JAX would run it on its default device (a GPU's, for a CPU tensor)
    fn = _placed(body) if op.eager else jax.jit(body, keep_unused=True)
    diff_ok = op.differentiable and any(o.category >= D.FLOAT for o in outs)
    return Entry(fn, outs, body, diff_ok, op, sargs, sig)


TRACED = type("TRACED", (), {"__repr__": lambda self: "<traced>"})()  # a traced static argument, in a cache key


def _split_traced(pos, sargs):
    """``sargs`` with the Python floats at positions ``pos`` replaced by TRACED, and those values (or None). A
    compiled function's dynamic float argument there (``add_(p, alpha=1 - decay)``) is one as well: its traced
    value, weakly typed as a Python float is, so the program serves every value (torch's 2 graphs)."""
    extra = None
    for i in pos:
        v = sargs[i]
        t = type(v)
        if t is float or (t is _SYM and v._t is float):
            if extra is None:
                extra, sargs = [], list(sargs)
            extra.append(v if t is float else _weak(v._v))
            sargs[i] = TRACED
    return (sargs, None) if extra is None else (tuple(sargs), extra)


def _dynamic_key(op, sargs, sig, arrays):
    """The cache key and kernel inputs of a call whose static arguments hold a compiled function's dynamic float
    argument (``leaky_relu(x, slope)``, ``full_like(x, v)``, ``add_(p, alpha=1 - decay)``): each is traced, as the
    op's declared ``traced`` floats are, so one program serves every value (torch's automatic dynamic float). A
    kernel that needs the value (a branch on it, a shape) fails to trace, and the compiled function specializes
    the argument again; its first dynamic call is checked against constants (``runner._check_dynamic``)."""
    pos = sorted(set(op.traced or ()) | {i for i, v in enumerate(sargs) if type(v) is _SYM and v._t is float})
    ksargs, extra = _split_traced(pos, sargs)
    return (ksargs, tuple(sig), D._DEFAULT[0]), arrays[:len(sig)] + (extra or [])


_I64 = 1 << 63


def _big_int(a):
    """A Python int past int64 as an operand: up to 2**64 - 1 it is torch's uint64 (its bits an int64's, a float's
    value), past that torch's OverflowError (JAX's own fails while parsing the kernel's arguments): below int64's
    minimum the parser's unsigned read's (``PyLong_AsUnsignedLongLong``)."""
    if _I64 <= a < 2 * _I64:
        return np.uint64(a)
    raise OverflowError("can't convert negative int to unsigned" if a < 0 else "int too big to convert")


def _weak(a):
    """A traced float64 as a weakly typed one (what a Python float passed to a jitted kernel is): ``x * a`` keeps
    x's float32, as ``x * 0.5`` does. (JAX exports this only privately; without it the value stays float64, and
    the kernels that cast their scalar options explicitly, as the traced ones do, are unaffected.)"""
    try:
        from jax._src.lax.lax import _convert_element_type
    except ImportError:  # pragma: no cover  (another JAX's layout)
        return a
    return _convert_element_type(a, a.dtype, weak_type=True)


def _cast(a, src, dst):
    if dst is None or a is None:
        return a
    if src is None:  # a Python scalar: traced as a weak-typed array
        a = jnp.asarray(a)
        src = D.from_numpy_dtype(a.dtype)
    return D.cast_array(a, src, dst)


def _fix_out(r, dt):
    if r.dtype != dt.jnp:
        return D.cast_array(r, D.from_numpy_dtype(r.dtype), dt)
    return r


# Sparse COO tensors (sparse/__init__.py): once one exists, ``SPARSE`` is [its type, its handler]: an op given one
# runs the handler (its sparse form or torch's error); until then the check costs one test per op.
SPARSE: list = [None, None]


def dispatch(op, targs, sargs, autocast=True, _recorded=False):
    """Run ``op`` on tensor arguments ``targs`` and static arguments ``sargs`` (see the module docstring).

    ``autocast``: apply the op's autocast policy when an autocast region is active (in-place forms don't,
    as in PyTorch)."""
    sp = SPARSE[0]
    if sp is not None:
        for a in (targs[0] if op.tensors == "list" and type(targs[0]) in (list, tuple) else targs):
            if type(a) is sp:
                return SPARSE[1](op, targs, sargs)
    if _PROFILER[0] is not None and not _recorded:  # a profile records (profiler/): the op as one event
        return _PROFILER[0].op(op, targs, sargs, lambda: dispatch(op, targs, sargs, autocast, True))
    if _FW_ACTIVE[0]:  # a forward-AD dual level is entered: the op, then its output tangents (forward_ad.py)
        return _fwad.dispatch(op, targs, sargs, autocast)
    if _AC_ANY[0] and autocast and op.autocast is not None:
        targs = _amp.apply(op, targs, sargs, _autocast_cast)
    if op.prep is not None:
        try:
            sargs = op.prep(targs, sargs)
        except (AttributeError, TypeError):  # (a list where a tensor goes: the argument parser's TypeError)
            _refuse_arguments(op, targs)
            raise
    if op.view is not None:
        meta = op.view(targs[0], sargs)
        if meta is not None:
            if meta is SELF:
                return targs[0]
            return _dispatch_view(op, targs[0], sargs, meta)
    if op.tensors == "list":
        targs = tuple(targs[0])
    arrays = []
    sig = []
    tensors = []
    # (an operand with strides of its own: a pointwise op's result may take its layout; a LAPACK / FFT op's always
    # has one)
    strided = op.fixed_layout
    for a in targs:
        if isinstance(a, Tensor):
            if a._strides is not None:
                strided = True
            if a._chain is None:
                arrays.append(a._storage.array)
            else:
                arrays.append(a._array)
                if not a._requires_grad and a._base is not None and a._gver != a._storage.version:
                    a.grad_fn  # noqa: B018 (a view whose base came to require grad in place: it does too, PyTorch)
            sig.append((len(a._shape), a.dtype))
            tensors.append(a)
        elif a is None:
            arrays.append(None)
            sig.append(None)
        elif type(a) is _SYM:  # (a dynamic int/float argument of a compiled function: its traced value)
            arrays.append(a._v)
            sig.append(a._t)
        else:
            if type(a) not in _PY_SCALARS and _not_an_argument(a) or op.required and type(a) in _PY_SCALARS:
                raise _not_a_tensor(op, len(arrays), a)  # (a matrix product's operand: a Tensor, never a number)
            t = type(a)
            if t is int and not -_I64 <= a < _I64:
                a = _big_int(a)  # (its signature stays int's)
            elif t in _NP_AS_FLOAT:
                a, t = float(a), float
            arrays.append(a)
            sig.append(t)
    if op.traced is None:
        key = (sargs, tuple(sig), D._DEFAULT[0])  # rules that produce floats depend on the default dtype
    else:
        ksargs, extra = _split_traced(op.traced, sargs)
        if extra is not None:
            arrays.extend(extra)
        key = (ksargs, tuple(sig), D._DEFAULT[0])
    _COUNTS["calls"] += 1
    try:
        entry = op.cache.get(key)
    except TypeError:
        raise TypeError(f"{op.name}(): unhashable argument in {sargs!r}") from None
    except _Concrete:  # a compiled function's dynamic float among the static arguments: an input of the kernel
        key, arrays = _dynamic_key(op, sargs, sig, arrays)
        entry = op.cache.get(key)  # (any other dynamic number there raises Concrete again: it is specialized)
    if entry is None:
        try:
            entry = _miss(op, key)
        except (AttributeError, TypeError):  # (a NumPy array, a number as a unary op's tensor: the parser's error)
            _refuse_arguments(op, targs)
            raise
    if not tensors:
        _refuse_arguments(op, targs)
        raise TypeError(f"{op.name}(): expected at least one Tensor argument")
    dev = tensors[0]._storage.device
    if len(tensors) > 1:
        for t in tensors:
            if t._storage.device is not dev:
                dev, arrays = _device_mismatch(op, targs, arrays)
                break
        if op.broadcast:
            s0 = tensors[0]._shape
            for t in tensors:
                if t._shape != s0:
                    broadcast_shapes(*[t._shape for t in tensors])
                    break
    if dev.type == "meta":  # shape-only tensors: the kernel's output shapes and dtypes, nothing computed
        outs = _wrap(op, jax.eval_shape(entry.fn, *arrays), entry.outs, dev)
        if entry.diff_ok and _state.enabled:  # (its grad_fn as torch's meta kernels record; backward: shapes)
            diff_idx = tuple(i for i, a in enumerate(targs) if isinstance(a, Tensor) and a._requires_grad)
            if diff_idx:
                _graph.record(op, outs, targs, diff_idx, tuple(arrays), entry, sargs)
        return _lay_out_result(op, targs, sargs, outs) if strided and op.layout else outs
    if op.check is not None:
        op.check(targs, sargs)
    if entry.diff_ok and _state.enabled:
        diff_idx = tuple(i for i, a in enumerate(targs) if isinstance(a, Tensor) and a._requires_grad)
        if diff_idx:
            outs = _wrap(op, entry.fn(*arrays), entry.outs, dev)
            _graph.record(op, outs, targs, diff_idx, tuple(arrays), entry, sargs)
            return _lay_out_result(op, targs, sargs, outs) if strided and op.layout else outs
    if _FUNC_ACTIVE[0] and _state.stop:  # no_grad inside a differentiating func transform: cut from JAX's
        outs = _wrap(op, jax.tree_util.tree_map(jax.lax.stop_gradient, entry.fn(*arrays)), entry.outs, dev)
    else:
        outs = _wrap(op, entry.fn(*arrays), entry.outs, dev)
    return _lay_out_result(op, targs, sargs, outs) if strided and op.layout else outs


def _lay_out_result(op, targs, sargs, r):
    """An op's new result ``r`` laid out as PyTorch lays it, where an operand has strides of its own (the op's
    ``layout``, _registry.POINTWISE / LIKE_SELF). "self": like its first input, as ``clone`` (each output of its
    shape). "iter": as ATen's TensorIterator lays it (``views.iter_strides``): ``x.t() * 2`` is ``x.t()``-strided, so
    ``(x.t() * 2).t().view(-1)`` works as in PyTorch; a channels-last input gives a channels-last result. A result of
    another shape (a loss's reduction) is left contiguous; ``2 ** x`` (a number's power) is contiguous in PyTorch.
    Dropout's key and PReLU's weight (ATen reshapes it to the input's rank) are no operands of the iterator's
    layout."""
    if op.layout == "format":
        return _lay_out_format(op, targs, sargs, r)
    if op.layout == "lapack":
        return _lay_out_lapack(op, targs, sargs, r)
    if op.layout == "fft":
        return _lay_out_fft(op, targs, sargs, r)
    if op.layout == "self":
        src = targs[0]
        if isinstance(src, Tensor) and src._strides is not None:
            from .movement import lay_out  # (late: movement's ops are built on this module)
            for o in (r if op.nout != 1 else (r,)):
                if o._shape == src._shape:
                    lay_out(o, src, V.preserve_format)  # (in place: the result keeps its identity)
        return r
    if op.name in _FIRST_OPERAND_ONLY:
        targs = targs[:1]
    shapes, ops = [], []
    for a in targs:
        if isinstance(a, Tensor):
            st = a._strides
            if st is None:
                st = _contig(a._shape)
            ops.append((a._shape, st))
            shapes.append(a._shape)
        elif type(a) in _PY_SCALARS:
            ops.append(((), ()))
    if all(st is _contig(s) or st == _contig(s) for s, st in ops) or \
            op.name == "pow" and not isinstance(targs[0], Tensor):
        return r
    lay = _iter_layout(r._shape, tuple(shapes), tuple(ops))
    if lay is None:
        return r
    st, order = lay
    if order is None:  # (only a size-1 dim's stride differs: the values' order is the same)
        r._strides = st
        return r
    return with_memory_order(r, order, st)


@functools.lru_cache(maxsize=4096)
def _iter_layout(shape, shapes, ops):
    """The iterator's (strides, memory order) for a result of ``shape`` from operands ``ops`` (the order None where
    the strides differ from contiguous ones in size-1 dims only), or None for a contiguous result (also a result of
    another shape than the operands' broadcast one). Cached: a loop over permuted tensors meets a few layouts."""
    try:
        if broadcast_shapes(*shapes) != shape:
            return None
    except RuntimeError:
        return None
    st = V.iter_strides(shape, list(ops))
    if st is None or st == _contig(shape):
        return None
    return st, (None if V.is_contiguous(shape, st) else V.memory_order(shape, st))


_FIRST_OPERAND_ONLY = frozenset({"_dropout", "prelu"})


def _lay_out_fft(op, targs, sargs, r):
    """An FFT kernel's result laid out as PyTorch's (_registry.FFT): pocketfft runs on the input permuted so that the
    transformed dims are innermost, and its result is that permuted back: the other dims outermost in the input's
    memory order, then the transformed ones in increasing order (``fft(x, dim=0)`` of a (3, 4) x: strides (1, 3))."""
    x, nd = targs[0], len(r._shape)
    dims = sorted(op.sarg(sargs, "dim"))
    if nd < 2 or not dims or r._strides is not None:
        return r
    mem = V.memory_order(x._shape, x._strides) if x._strides is not None else range(nd)
    order = tuple(d for d in mem if d not in dims) + tuple(dims)
    if order != tuple(range(nd)):
        st = V.contiguous_strides(tuple(r._shape[d] for d in order))
        strides = [0] * nd
        for k, d in enumerate(order):
            strides[d] = st[k]
        with_memory_order(r, order, tuple(strides))
    return r


def _lay_out_lapack(op, targs, sargs, r):
    """A LAPACK op's matrix results laid out column-major, batches contiguous, as PyTorch's (_registry.LAPACK):
    ``inv(A)`` of a (b, n, n) input has strides (n * n, 1, n). A batched vector result (``solve`` of a (b, n)
    right-hand side) is column-major in its last two dims, as PyTorch's. lstsq's solution (n rows of its
    max(m, n)-row buffer) is a view of the top rows of a column-major buffer of max(m, n) rows."""
    if op.name in _registry.LAPACK_LEFT and not op.sarg(sargs, "left"):
        return r
    outs = r if op.nout != 1 else (r,)
    for i in _registry.LAPACK[op.name]:
        o = outs[i]
        shape = o._shape
        if len(shape) < 2 or o._strides is not None:
            continue
        m, n = shape[-2:]
        rows = max(m, targs[0]._shape[-2]) if op.name == "linalg_lstsq" else m
        st = V.contiguous_strides(shape[:-2] + (n, rows))
        strides = st[:-2] + (st[-1], st[-2])
        nd = len(shape)
        order = tuple(range(nd - 2)) + (nd - 1, nd - 2)
        if rows == m:
            with_memory_order(o, order, strides)
        else:
            with_memory_order(o, order, strides, pad_rows=rows)
    return r


def _lay_out_format(op, targs, sargs, r):
    """A result laid out in its input's suggested memory format (_registry.LIKE_FORMAT): channels-last (3d) where
    the input's strides are (a convolution's weight's too, as ATen's backends decide; ``cat``'s inputs all), each
    output of that rank (a batch norm's saved statistics are not)."""
    from .movement import suggest_memory_format  # (late: movement's ops are built on this module)
    if op.name == "cat":
        fmts = {suggest_memory_format(t) for t in targs if isinstance(t, Tensor)}
        fmt = fmts.pop() if len(fmts) == 1 else V.contiguous_format
    elif op.name == "pad" and op.sarg(sargs, "mode") == "circular":
        return r
    else:
        fmt = suggest_memory_format(targs[0]) if isinstance(targs[0], Tensor) else V.contiguous_format
        if fmt is V.contiguous_format and op.name == "convolution" and isinstance(targs[1], Tensor):
            fmt = suggest_memory_format(targs[1])
    if fmt is V.contiguous_format or op.name == "convolution" and fmt is not V.channels_last:
        return r
    for o in (r if op.nout != 1 else (r,)):
        order = fmt._order(len(o._shape))
        if order is not None and o._strides is None:
            with_memory_order(o, order, fmt._strides(o._shape))
    return r


@functools.lru_cache(maxsize=4096)
def _contig(shape) -> tuple:
    return V.contiguous_strides(shape)


def autocast_args(op, targs, sargs=()):
    """``targs`` with ``op``'s autocast casts applied ahead of its dispatch: for wrappers that check dtypes
    before dispatching (SDPA's "same dtype" check sees the autocast dtypes, as in PyTorch)."""
    if _AC_ANY[0] and op.autocast is not None:
        return _amp.apply(op, targs, sargs, _autocast_cast)
    return targs


def autocast_fp32(*ts) -> tuple:
    """A composite on PyTorch's autocast float32 list (cosine_embedding_loss, triplet_margin_loss...): its floating
    tensors in float32 while autocast is on for their device, as PyTorch casts them at the op's entry."""
    act = _amp.STATE.active if _AC_ANY[0] else None
    first = next((t for t in ts if isinstance(t, Tensor)), None) if act else None
    if first is None or act.get(first._storage.device.type) is None:
        return ts
    dev = first._storage.device.type
    return tuple(_autocast_cast(t, D.float32) if isinstance(t, Tensor) and t.dtype.is_floating_point and
                 t.dtype is not D.float32 and t.dtype is not D.float64 and t._storage.device.type == dev else t
                 for t in ts)


def _autocast_cast(t, dt):
    """An autocast input cast: a recorded ``_to_copy`` (ToCopyBackward0), so gradients flow back in the
    input's dtype (AMP-10)."""
    from ._registry import OPS
    return dispatch(OPS["_to_copy"], (t,), (dt,), False)


def _miss(op, key):
    """Build and cache an entry (bounded per op: the oldest entry goes first)."""
    _COUNTS["misses"] += 1
    entry = op.cache[key] = _build(op, key[0], key[1])
    if len(op.cache) > _config.JIT_CACHE_SIZE:
        op.cache.pop(next(iter(op.cache)))
        _COUNTS["evictions"] += 1
    return entry


def _dispatch_view(op, t, sargs, meta):
    """A view op: the output shares ``t``'s storage; its values come from replaying the view chain."""
    shape, strides, offset = meta[:3]
    dtype = meta[3] if len(meta) > 3 else None
    out = t._view_of(shape, strides, offset, (op, sargs), dtype)
    if _FUNC_ACTIVE[0] and _state.stop:  # no_grad inside a differentiating func transform: reads cut, writes
        return out._cut(out._base)  # through to the storage (``Tensor._cut``)
    d = t.__dict__
    if d:
        if d.get("_multi_view"):
            out._multi_view = True  # a view of a split/unbind output inherits PyTorch's multi-view restriction
        if d.get("_no_grad_view") or d.get("_ngv_derived"):
            out._ngv_derived = True  # (its in-place writes with grad enabled are refused, as its base's are)
    if not t._requires_grad and t._base is not None and t._gver != t._storage.version:
        t.grad_fn  # noqa: B018 (a view whose base came to require grad by an in-place op: it does too, PyTorch)
    if t._requires_grad and not _state.enabled:
        # requires grad with no edge; an in-place write to it with grad enabled is refused (INP-28)
        _graph.mark_no_grad_view(out, t)
    elif t._requires_grad:
        sig = ((len(t._shape), t.dtype),)
        if op.dynamic is None:
            entry = _entry(op, sargs, sig)
            arrays = (t._array,)
        else:  # the position (index, slice start) is an input of the backward, not part of its key
            k, offsets = op.dynamic[0](sargs)
            key = ((_DYN, k), sig, D._DEFAULT[0])
            entry = op.cache.get(key)
            if entry is None:
                entry = _miss_dynamic(op, key, sargs)
            arrays = (t._array, *offsets)
        _graph.record(op, out, (t,), (0,), arrays, entry, sargs)
    return out


def _entry(op, sargs, sig):
    key = (sargs, sig, D._DEFAULT[0])
    entry = op.cache.get(key)
    return _miss(op, key) if entry is None else entry


def record_views(op, t, outs, sargs):
    """Autograd for a multi-output view function (split, unbind): views ``outs`` of ``t`` made from view
    metadata get ONE node of ``op`` (whose jax body computes all the pieces), and PyTorch's multi-view
    in-place restriction; in no_grad mode, the no-grad-view flag instead."""
    if _FW_ACTIVE[0]:
        _fwad.mark_views(t, outs)  # (their tangents: views of t's)
    if not t._requires_grad:
        return
    if not _state.enabled:
        for o in outs:
            _graph.mark_no_grad_view(o, t)
        return
    _graph.record(op, outs, (t,), (0,), (t._array,), _entry(op, sargs, ((len(t._shape), t.dtype),)), sargs)
    for o in outs:
        o._multi_view = True


_PY_SCALARS = frozenset({int, float, bool, complex})
# NumPy scalars torch's argument parser reads as a double (``PyFloat_AsDouble``; ``_promotion.scalar_dtype``): the
# op gets that float (an ``np.complex64``'s real part, with NumPy's ComplexWarning, as torch; a long double that
# JAX has no type for)
_NP_AS_FLOAT = frozenset({np.bool_, np.complex64, np.clongdouble, np.longdouble})


def _not_an_argument(a) -> bool:
    """Anything but a number where a tensor goes (a list, a dict, a string, any object), or another library's
    array (real torch's, CuPy's): never taken as a scalar (it would reach a kernel as a foreign object). NumPy and
    JAX values are."""
    if isinstance(a, (jax.Array, np.ndarray, np.generic)):
        return False
    return hasattr(a, "__dlpack__") or not isinstance(a, numbers.Number)  # (a dict, a string, any object)


def either_arg(value, alias, fname: str, name: str, missing: str):
    """A parameter torch's parser takes under two names (``split_size_or_sections`` / ``split_size``, ``input`` /
    ``x``): the one given (None: not given); both are Python's TypeError, neither is ``missing``'s."""
    if alias is not None:
        if value is not None:
            raise TypeError(f"{fname}() got multiple values for argument '{name}'")
        return alias
    if value is None:
        raise TypeError(missing)
    return value


def _type_name(a) -> str:
    """The type name torch's argument parser prints (its messages' "not <type>", "got (<types>)"): the facade's
    types under torch's names (``Tensor``, ``torch.dtype``, ``torch.device``, ``torch._C.Generator``), else
    CPython's ``tp_name`` (module-qualified for a C extension's type: ``numpy.ndarray``; a class defined in Python,
    or a builtin, by its name). The one rule every such message uses."""
    if isinstance(a, Tensor):
        return "Tensor"
    if isinstance(a, D.dtype):
        return "torch.dtype"
    from .. import random as _rng
    from .._device import device
    if isinstance(a, device):
        return "torch.device"
    if isinstance(a, _rng.Generator):
        return "torch._C.Generator"
    t = type(a)
    if t.__module__ == "builtins" or t.__flags__ & (1 << 9):  # (Py_TPFLAGS_HEAPTYPE)
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def scalar_arg(v, fname: str, name: str, kind: str = "Number"):
    """A ``Number`` (Scalar) argument as torch's argument parser reads it (``alpha=``, ``beta=``,
    ``correction=``): a 0-d tensor that does not require grad is its number (``beta=torch.tensor(0)`` the int 0),
    anything else passes as given; another tensor is the parser's TypeError. A kernel then branches on a Python
    number, and the op's cache key holds the value, not the tensor (a later in-place write to it is seen). Under
    compile / a func transform a traced 0-d tensor stays a tensor (its value is not known: a kernel that branches
    on it is the documented graph break). ``kind``: the parser's type in the message (allclose's tolerances are
    ``float``). Called by the ops' argument preparation only, never per element."""
    if not isinstance(v, Tensor):
        return v
    if v._shape or v._requires_grad:
        raise TypeError(f"{fname}(): argument '{name}' must be {kind}, not Tensor")
    if isinstance(v._array, jax.core.Tracer):
        return v
    return v.item()


def scalars_prep(fname: str, *names: str):
    """An op's ``prep`` (defop's) reading its leading static arguments ``names`` with :func:`scalar_arg` (addmm's
    ``beta`` / ``alpha``); a call with Python numbers pays one type test per argument."""
    n = len(names)

    def prep(targs, sargs):
        for v in sargs[:n]:
            if isinstance(v, Tensor):
                return tuple(scalar_arg(a, fname, k) for a, k in zip(sargs, names)) + tuple(sargs[n:])
        return sargs
    return prep


def _not_a_tensor(op, i: int, a) -> TypeError:
    """PyTorch's argument-parser TypeError for a non-tensor ``a`` at tensor argument ``i`` of ``op``: "<op>():
    argument '<name>' (position <n>) must be Tensor, not <type>", the position only when the caller passed it
    positionally (a method's ``self`` uncounted, an in-place form named ``<op>_``). Error path only: the call site
    is read from the calling frame's bytecode."""
    if hasattr(a, "__dlpack__") and not isinstance(a, np.ndarray):
        what = f"{type(a).__module__}.{type(a).__qualname__} (another library's array: convert it with " \
            "functorch_lite.tensor(...) or from_dlpack)"
    else:
        what = _type_name(a)
    if op.tensors == "list":
        return TypeError(f"{op.name}(): argument '{op.tensor_names[0]}' must be Tensor, not {what}")
    name = op.tensor_names[min(i, len(op.tensor_names) - 1)]
    fname, pos = _call_form(op, name)
    return TypeError(f"{fname}(): argument '{name}'{pos} must be Tensor, not {what}")


def _refuse_arguments(op, targs) -> None:
    """After an op's argument preparation or kernel build failed: raise the argument parser's TypeError if one of
    ``targs`` is what torch's parser refuses where a Tensor goes (a list, a string, any object, a NumPy array; any
    number as the tensor of a one-tensor op or of a ``required`` one's); else return, and the original error
    propagates."""
    if op.tensors == "list":
        return
    for i, a in enumerate(targs):
        if a is None or isinstance(a, Tensor) or type(a) is _SYM:
            continue
        if op.tensors == 1 or op.required or isinstance(a, np.ndarray) or \
                (type(a) not in _PY_SCALARS and _not_an_argument(a)):
            raise _not_a_tensor(op, i, a)


def _call_form(op, name: str):
    """(the name torch gives the failing call, " (position n)" or "") for tensor parameter ``name`` of ``op``, from
    the frame of its generated function (call, method or in-place form) and its caller's call instruction."""
    import sys
    j = [p.name for p in op.params].index(name)
    forms = {op.fn.__code__: (op.name, None)}  # (None: a call, or a method sharing the call's function)
    if op.fn_method is not None:
        forms[op.fn_method.__code__] = (op.name, True)
    if op.fn_inplace is not None:
        forms[op.fn_inplace.__code__] = (op.name + "_", True)
    f = sys._getframe(2)
    inplace = op.name + "_"  # (a hand-written in-place form, ``Tensor.addmv_``: its function's name)
    for _ in range(8):  # (through ``inplace``, a profiler's record)
        if f is None or f.f_code in forms or f.f_code.co_name == inplace:
            break
        f = f.f_back
    if f is None or (f.f_code not in forms and f.f_code.co_name != inplace):  # (called by other library code:
        return op.name, f" (position {j + 1})"                                # positional, numbered as a call)
    fname, method = forms.get(f.f_code, (inplace, True))
    call = _call_site(f.f_back)
    if call is None:  # (``f(*args)``, or an unknown instruction: positional assumed)
        return fname, f" (position {j + 1 - bool(method)})"
    npos, kwnames = call
    if name in kwnames:
        return fname, ""
    if method is None:  # given positionally: as a call it is within the positional arguments, else ``x.op(...)``
        method = bool(op.method) and j >= npos
    return fname, f" (position {j + 1 - method})"


def _call_site(frame):
    """(number of positional arguments, keyword names) of the call ``frame`` is making, from its bytecode at
    ``f_lasti`` (CPython 3.11+: ``KW_NAMES`` before ``CALL``; 3.13: ``CALL_KW`` after the names' constant); None for
    ``f(*args, **kw)`` or anything else."""
    import dis
    if frame is None:
        return None
    code, last = frame.f_code, frame.f_lasti
    prev = []  # (the instructions up to the one at ``f_lasti``, which may point into its inline caches: 3.11)
    for ins in dis.get_instructions(code):
        if ins.offset > last:
            break
        prev = (prev + [ins])[-4:]
    if not prev:
        return None
    ins = prev.pop()
    kw = ()
    if ins.opname == "CALL_KW":
        if not prev or prev[-1].opname != "LOAD_CONST" or not isinstance(prev[-1].argval, tuple):
            return None
        kw = prev[-1].argval
    elif ins.opname == "CALL":
        before = [p for p in prev if p.opname != "PRECALL"]
        if before and before[-1].opname == "KW_NAMES":
            kw = code.co_consts[before[-1].arg]
    else:
        return None
    return ins.arg - len(kw), kw


_DYN = object()  # marks cache keys of view entries whose positions are traced


def _miss_dynamic(op, key, sargs):
    """A view op's entry with traced positions: ``body(array, *offsets)``."""
    _COUNTS["misses"] += 1
    _, outs = op.rule(op, key[1], sargs)
    k, dyn_impl = key[0][1], op.dynamic[1]

    def body(a, *offsets):
        return dyn_impl(a, offsets, *k)
    body.__name__ = body.__qualname__ = op.name
    entry = op.cache[key] = Entry(jax.jit(body, keep_unused=True), outs, body, op.differentiable, op)
    return entry


def _wrap(op, res, outs, dev):
    if op.nout == 1:
        return _from_array(res, outs[0], dev)
    ts = tuple(_from_array(r, o, dev) for r, o in zip(res, outs))
    rt = op.result_type
    return ts if rt is None else rt(*ts)


if _config.DEBUG:  # FUNCTORCH_LITE_DEBUG=1: every op result's jax dtype and device are the facade's
    _wrap_fast = _wrap

    def _wrap(op, res, outs, dev):
        from .. import _device as _dev
        for r, o in zip(res if op.nout != 1 else (res,), outs):
            if r.dtype != o.jnp:
                raise AssertionError(f"functorch_lite debug: {op.name} made a {r.dtype} array for a {o} result")
            if _dev.misplaced(r, dev) is not None:
                raise AssertionError(f"functorch_lite debug: {op.name} left its {dev} result on {r.devices()}")
        return _wrap_fast(op, res, outs, dev)


def _device_mismatch(op, targs, arrays):
    """PyTorch's device rules: a CPU 0-dim tensor may join an accelerator elementwise op; else raise."""
    ts = [(i, a) for i, a in enumerate(targs) if isinstance(a, Tensor)]
    if op.name == "copy" and "meta" in (targs[0].device.type, targs[1].device.type):
        if targs[0].device.type == "meta":  # (a copy into a meta tensor: its shape and dtype rules only)
            return targs[0].device, arrays
        raise NotImplementedError(_storage.META_NO_DATA)
    if any(a.device.type == "meta" for _, a in ts):  # PyTorch's meta kernels word it this way
        first = ts[0][1].device
        other = next(a.device for _, a in ts if a.device != first)
        raise RuntimeError(f"Tensor on device {other} is not on the expected device {first}!")
    if op.device_check == "iter":
        common = next((a.device for _, a in ts if a.device.type != "cpu"), ts[0][1].device)
        arrays = list(arrays)
        for i, a in ts:
            if a.device == common:
                continue
            if a.device.type == "cpu" and not a._shape and common.type != "cpu":
                from .. import _device as _dev
                arrays[i] = jax.device_put(arrays[i], _dev.to_jax(common))
                continue
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                               f"{_dstr(common)} and {_dstr(a.device)}!")
        return common, arrays
    common = ts[0][1].device
    method = op.name
    if callable(op.device_check):  # (argument names, kernel) depend on the call (matmul -> mm/mv/bmm)
        names, method = op.device_check(targs)
    else:
        names = op.device_check if isinstance(op.device_check, tuple) else op.tensor_names
    for i, a in ts:
        if a.device != common:
            argname = names[i] if i < len(names) else f"arg{i}"
            prefix = {"cuda": "wrapper_CUDA_", "cpu": "wrapper_CPU_"}.get(common.type, "wrapper_")
            raise RuntimeError(f"Expected all tensors to be on the same device, but got {argname} is on "
                               f"{_dstr(a.device)}, different from other tensors on {_dstr(common)} (when checking "
                               f"argument in method {prefix}{method})")
    return common, arrays


def _dstr(d):
    if d.type != "cpu" and d.index is None:
        return f"{d.type}:0"
    return str(d)


_BC_CACHE: dict = {}


def broadcast_shapes(*shapes):
    """Broadcast shape with PyTorch's error for elementwise ops (BC-01..06)."""
    r = _BC_CACHE.get(shapes)
    if r is not None:
        return r
    out = tuple(shapes[0])
    for s in shapes[1:]:
        nd = max(len(out), len(s))
        a = (1,) * (nd - len(out)) + tuple(out)
        b = (1,) * (nd - len(s)) + tuple(s)
        res = []
        for j in range(nd - 1, -1, -1):  # (from the last dim, as torch's infer_size: the rightmost mismatch)
            x, y = a[j], b[j]
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                                   f"non-singleton dimension {j}")
            res.append(y if x == 1 else x)
        out = tuple(res[::-1])
    if len(_BC_CACHE) < 4096:
        _BC_CACHE[shapes] = out
    return out


_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
            "location. Please clone() the tensor before performing the operation.")


def no_overlap(dst: Tensor, src, partial_only: bool = False) -> None:
    """PyTorch's assert_no_overlap / assert_no_partial_overlap between a written tensor and a source: over the same
    memory, both laid out densely (else too hard to tell: allowed, as PyTorch), the source either the very elements
    written (refused unless ``partial_only``) or elements partly among them (refused: the write's result would
    depend on the order PyTorch's kernel writes in)."""
    if not isinstance(src, Tensor) or src._storage.root() is not dst._storage.root() or not dst.numel() or \
            not src.numel():
        return
    if src is not dst and not (V.is_dense(dst._shape, dst.stride()) and V.is_dense(src._shape, src.stride())):
        return
    a0, b0 = dst._offset, src._offset
    a1, b1 = a0 + dst.numel(), b0 + src.numel()
    full = src is dst or ((a0, a1) == (b0, b1) and dst.stride() == src.stride())
    if (full and not partial_only) or (not full and a0 < b1 and b0 < a1):
        raise RuntimeError(_OVERLAP)


# torch's deprecation warning for a write through an expanded tensor (``{0}``: the op; ``{3}``: its source line)
EXPANDED_WARN = ("Use of {} on expanded tensors is deprecated. Please clone() the tensor before performing this "
                 "operation. This also applies to advanced indexing e.g. tensor[{}] = {} (Triggered internally at "
                 "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:{}.)")


def inplace(op, targs, sargs, _recorded=False):
    """``self.<op>_(...)``: compute ``op`` then write the result into ``self`` (its dtype kept)."""
    if _PROFILER[0] is not None and not _recorded:  # a profile records: one event, named as PyTorch's (add_)
        return _PROFILER[0].op(op, targs, sargs, lambda: inplace(op, targs, sargs, True), op.name + "_")
    self = targs[0]
    if SPARSE[0] is not None and type(self) is SPARSE[0]:  # (``torch.relu_(s)``: the sparse tensor's own form)
        return self.inplace(op.name, targs[1:], sargs)
    check = op.inplace
    if check is not True and check is not False and check is not None:  # (the op's own in-place check: defop's)
        check(targs, sargs)
    _graph.check_inplace(self)
    if op.broadcast:  # (an elementwise op reading memory it writes, shifted: x[1:].add_(x[:-1]) is refused, as torch)
        root = self._storage.root()
        for a in targs[1:]:
            if isinstance(a, Tensor) and a is not self and a._storage.root() is root:
                no_overlap(self, a, partial_only=True)
    try:
        r = dispatch(op, targs, sargs, False, _recorded)
    except NotImplementedError:
        # (no kernel for the common dtype: torch checks that it casts to self's first -- ``x <<= 2.0`` of a Long x;
        # lerp_'s own kernel check comes first: an integer self has no lerp kernel whatever the weight)
        if op.broadcast and not (op.name == "lerp" and not isinstance(targs[2], Tensor)):
            _check_cast(_promotion.result_type(*targs), self.dtype)
        raise
    if r.dtype is not self.dtype:
        _check_cast(r.dtype, self.dtype)
    if r._shape != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast shape "
                           f"{list(r._shape)}")
    arr = r._storage.array if r._chain is None else r._array  # (r: a view where the op gives its input back)
    if r.dtype is not self.dtype:
        arr = _cast_jit(r.dtype, self.dtype)(arr)
    if _FUNC_ACTIVE[0] and (_state.stop or self._chain is not None and V.CUT_STEP in self._chain) and \
            (self.dtype.is_floating_point or self.dtype.is_complex):
        # inside a differentiating func transform, a write under no_grad or through a detached / no_grad view: the
        # new values, with the storage's history kept (torch's autograd does not see such a write: gradients reach
        # what the tensor was computed from)
        arr = _keep_history(self._uncut_array(), arr)
    ok = op.aliased_write_ok
    overlap = ok is not True and ok and self._chain is not None and not self.requires_grad and \
        V.overlap_kind(self._shape, self.stride())
    if overlap:
        # (masked_fill_ / index_fill_ through an expanded view -- deprecated, with torch's warning -- or a window view
        # (unfold with step < size): torch writes each memory location an element it fills shares; the others keep
        # their values)
        where, line = ok
        if overlap == 1:
            warnings.warn(EXPANDED_WARN.format(op.name + "_", "mask", "scalar", line), UserWarning,
                          stacklevel=_user_stacklevel())
        self._write_where(arr, where(targs, sargs))
    else:
        self._write(arr, overlap_ok=ok is True and not any(isinstance(a, Tensor) for a in targs[1:]),
                    window_ok=op.name in _WINDOW_OK)
    if op.zeroes and self._chain is None:  # known zeros until the next write
        _storage.mark_zeros(self._storage.root(), arr)
    _graph.rebase(self, r)
    if _FW_ACTIVE[0]:
        _fwad.after_write(self, r)  # (the tangent of self receives r's)
    return self


# the in-place ops whose result through a window view (elements sharing memory without a 0 stride: unfold with
# step < size) is torch's when each memory location is written once: a copy (the last element written wins, as in
# torch's element-by-element loop) or an idempotent op (torch applies it once per element sharing the location:
# f(f(x)) = f(x)); the others (add_, mul_, exp_...) are refused there (Tensor._write)
_WINDOW_OK = frozenset({"copy", "fill", "clamp", "clamp_min", "clamp_max", "relu", "abs", "floor", "ceil", "trunc",
                        "round", "sign", "sgn", "nan_to_num", "_hardtanh", "_threshold", "masked_fill", "index_fill"})


def _check_cast(r, dt):
    """An in-place op's result dtype ``r`` must cast to ``self``'s (``dt``), torch's message otherwise."""
    if r is not dt and not _promotion.can_cast(r, dt):
        raise RuntimeError(f"result type {r.short} can't be cast to the desired output type {dt.short}")


@jax.custom_jvp
def _keep_history(old, new):
    """``new``'s values (exactly) with ``old``'s derivative: an identity from ``old`` for JAX's differentiation."""
    return new


@_keep_history.defjvp
def _keep_history_jvp(primals, tangents):
    return primals[1], tangents[0]


_CAST_JIT: dict = {}


def _cast_jit(src, dst):
    f = _CAST_JIT.get((src, dst))
    if f is None:
        f = _CAST_JIT[(src, dst)] = jax.jit(lambda a: D.cast_array(a, src, dst))
    return f


def write_out(out, r, name=None, resize_warn=True, srcs=(), apart=()):
    """``out=`` forms: PyTorch resizes and casts into ``out`` (the one out= path: generated ops, factories, composites).

    A tuple result (``sort``, ``topk``, ``aminmax``) goes into a tuple of outs of exactly its dtypes (the structured
    kernels' rule). ``name``: the op's name in PyTorch's error for an out= call where grad mode is on and ``out`` or
    the result requires grad (checked where given). ``resize_warn``: PyTorch's deprecation warning when a non-empty
    ``out`` of another shape is resized (its ``resize_output``; the factories resize without it). ``srcs``: an
    elementwise op's tensor inputs, none of which may partly share ``out``'s memory (``no_overlap``). ``apart``:
    inputs that may share none of it, not even exactly (the index kernels' assert_no_overlap: ``index_select(x, 0,
    i, out=x)`` is refused, where ``index_add(x, 0, i, s, out=x)``'s self, in ``srcs``, is not)."""
    if isinstance(r, tuple):
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"argument 'out' must be tuple of Tensors, not {_type_name(out)}")
        if len(out) != len(r):
            raise TypeError(f"expected tuple of {len(r)} elements but got {len(out)}")
        for i, o in enumerate(out):
            if not isinstance(o, Tensor):
                raise TypeError(f"expected Tensor as element {i} in argument 'out', but got {type(o).__name__}")
        if name is not None and name not in _OUT_NO_AUTOGRAD:
            _check_out_grad(name, out, r)
        exact = _OUT_EXACT.get(name, _exact_out)
        for i, msg in (exact.items() if type(exact) is dict else ((i, exact) for i in range(len(r)))):
            if out[i].dtype is not r[i].dtype:
                raise RuntimeError(msg(r[i].dtype, out[i].dtype))
        for o, v in zip(out, r):
            write_out(o, v, None, resize_warn)
        return getattr(type(r), "_out_type", type(r))(tuple(out))
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {_type_name(out)}")
    exact = None
    if name is not None:
        if name not in _OUT_NO_AUTOGRAD:
            _check_out_grad(name, (out,), (r,))
        if name in _OUT_TENSORS:
            _out_tensors(name, srcs)
        exact = _OUT_EXACT.get(_OUT_EXACT_0D.get(name, name) if not r._shape else name)
        if type(exact) is dict or name in _OUT_CAST_TENSOR_ARGS and any(isinstance(a, Tensor) for a in srcs[1:]) \
                or name in OUT_CAST_COMPLEX and srcs[0].dtype.is_complex:
            exact = None  # (a dict: a several-output op's overload with one output; or the overload casting)
        if exact is not None and out.dtype is not r.dtype:
            msg = exact(r.dtype, out.dtype)
            if msg is not None:
                raise RuntimeError(msg)
    if (exact is None or out.dtype is r.dtype) and not _promotion.can_cast(r.dtype, out.dtype):
        refuse = _OUT_CAST.get(name)
        raise refuse(out.dtype) if refuse is not None else RuntimeError(
            f"result type {r.dtype.short} can't be cast to the desired output type {out.dtype.short}")
    arr = r._array if r.dtype is out.dtype else _cast_jit(r.dtype, out.dtype)(r._array)
    if out._shape != r._shape:
        if out._chain is not None:
            raise RuntimeError("out= into a view of a different shape is not supported")
        if resize_warn and out.numel() != 0:
            import warnings
            from .._warn import user_stacklevel
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out._shape)}, "
                          f"which does not match the required output shape {list(r._shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0). (Triggered internally at "
                          "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)", UserWarning,
                          stacklevel=user_stacklevel())
        out._shape = r._shape
        out._strides = None
    for a in srcs:
        if isinstance(a, Tensor) and a is not out and a._storage.root() is out._storage.root():
            no_overlap(out, a, partial_only=True)
    for a in apart:
        if isinstance(a, Tensor) and a._storage.root() is out._storage.root():
            no_overlap(out, a)
    out._write(arr)
    if _FW_ACTIVE[0]:
        _fwad.after_write(out, r)
    return out


def _exact_out(r, o):
    return f"Expected out tensor to have dtype {_promotion._cname(r)}, but got {_promotion._cname(o)} instead"


def _same_dtype(r, o):
    return f"Found dtype {o.short} but expected {r.short}"


def _bool_result(name):
    """any / all: a bool or uint8 ``out`` (the result cast into it), nothing else."""
    return lambda r, o: None if o is D.bool or o is D.uint8 else \
        f"{name} only supports bool tensor for result, got: {o.short}"


def _checked_args(name, what):
    """median / nanmedian's values (``what`` 'values': the input's type) and indices (Long) outs, as torch's
    checkScalarType / checkSameType word them."""
    if what == "values":
        return lambda r, o: ("Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; "
                             f"but type torch.{o.legacy} does not equal torch.{r.legacy} (while checking arguments "
                             f"for {name})")
    return lambda r, o: ("Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                         f"torch.{o.legacy} instead (while checking arguments for {name})")


_MEDIAN_OUT = {1: _checked_args("median", "indices"), 0: _checked_args("median", "values")}

# the ops whose out= must have the result's dtype (torch's structured kernels, each with its message; a dict: one
# per output index, checked in torch's order; a message of None: that out dtype is accepted, cast into); the others
# cast into ``out`` where the result's category allows
_OUT_EXACT = {
    # (unary elementwise kernels built with TensorIterator's check_all_same_dtype; exp, sin, sqrt... cast)
    **{n: _same_dtype for n in ("abs", "neg", "floor", "ceil", "round", "trunc", "sign", "sgn", "frac",
                                "bitwise_not", "clamp", "clamp_min", "clamp_max", "conj_physical")},
    **{n: _exact_out for n in ("argmax", "argmin", "gather", "scatter", "scatter.reduce", "scatter_add",
                               "scatter_reduce", "index_add", "index_copy", "index_reduce")},
    **{n: _bool_result(n) for n in ("any", "all")},
    **{n: (lambda r, o, n=n: f"{n} does not support non-boolean outputs.") for n in ("signbit", "isposinf",
                                                                                      "isneginf")},
    "nan_to_num": lambda r, o: f"nan_to_num: dtype of out: {o.short} should be same as input: {r.short}",
    "index_select": lambda r, o: "index_select(): self and result must have the same scalar type",
    "take": lambda r, o: (f"take(): self and out expected to have the same dtype, but got self.dtype = {r.short} and "
                          f"out.dtype = {o.short}"),
    "linalg_multi_dot": lambda r, o: (f"multi_dot(): expected out tensor to have dtype {_promotion._cname(r)} but got "
                                      f"{_promotion._cname(o)}"),
    "histc": lambda r, o: (f"torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
                           f"{_promotion._cname(r)} and hist {_promotion._cname(o)}"),
    "kthvalue": {0: lambda r, o: "output values must be of same type as input",
                 1: lambda r, o: "output indices must be of scalar type Long"},
    "mode": {0: lambda r, o: f"expected scalar type '{r.short}' but got '{o.short}' for values output",
             1: lambda r, o: f"expected scalar type '{r.short}' but got '{o.short}' for indices output"},
    "median": _MEDIAN_OUT,
    **{n: {} for n in ("linalg_lstsq", "linalg_eig", "geqrf")},  # (their outs are cast into)
    "linalg_solve_triangular": lambda r, o: f"expected scalar type {r.short} but found {o.short}",
    "nanmedian": _MEDIAN_OUT,
    **{n: _exact_out for n in ("mm", "matmul", "bmm", "addmm", "baddbmm", "addbmm", "norm", "cross",
                               "linalg_vector_norm", "linalg_cross", "sum", "prod", "cumsum", "cumprod",
                               "linalg_inv_ex", "_linalg_solve_ex", "_linalg_det", "_linalg_slogdet",
                               "linalg_cholesky_ex", "_linalg_svd", "linalg_qr", "_linalg_eigh",
                               "linalg_lu_factor_ex", "linalg_lu", "linalg_lu_solve", "linalg_ldl_factor_ex",
                               "linalg_ldl_solve", "triangular_solve", "lu_unpack")},
    "mv": lambda r, o: f"addmv input tensors must have the same dtype, but got {o.short}, {r.short}, and {r.short}",
    "dot": lambda r, o: f"result dtype {o.short} does not match input dtype {r.short}",
    "where": lambda r, o: f"Expected out type to be {r.short} but got {o.short}",
    **{n: (lambda r, o: f"expected scalar_type {r.short} but found {o.short}") for n in ("logcumsumexp", "cummax",
                                                                                       "cummin")},
    "searchsorted": lambda r, o: ("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                                  "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
                                  f"dtype {o.short} and out_int32 flag is {r is D.int32}"),
    "nonzero": lambda r, o: f"nonzero: Expected out tensor to have scalar type {r.short} but got scalar type{o.short}",
    "masked_select": lambda r, o: "masked_select(): self and result must have the same scalar type",
    "frexp": lambda r, o: (f"torch.frexp() expects exponent to have int dtype but got {_promotion._cname(o)}"
                           if r is D.int32 else  # (the exponent's out; else the mantissa's)
                           f"torch.frexp() expects mantissa to have dtype {_promotion._cname(r)} but got "
                           f"{_promotion._cname(o)}"),
    **{n: (lambda r, o: f"Expected the dtype for input and out to match, but got {r.short} for input's dtype and "
           f"{o.short} for out's dtype.") for n in ("amax", "amin")},
}

# named out= forms without PyTorch's autograd refusal of an input requiring grad: histc (not differentiable) and
# scatter's deprecated ``reduce=`` overload (its out= is recorded by autograd instead)
_OUT_NO_AUTOGRAD = frozenset({"histc", "scatter.reduce", "linalg_ldl_factor_ex", "linalg_ldl_solve"})

# ops exact about out='s dtype with number arguments only: their overload taking tensors (``clamp(x, t_min)``)
# casts into ``out``
_OUT_CAST_TENSOR_ARGS = frozenset({"clamp", "clamp_min", "clamp_max"})

# ops exact about out='s dtype but for a complex input, whose real result is cast into ``out`` (torch's complex abs);
# their generated out= path passes its inputs
OUT_CAST_COMPLEX = frozenset({"abs"})

# an op whose 0-dim result is another op's, for its out= dtype message (matmul of two vectors is dot)
_OUT_EXACT_0D = {"matmul": "dot"}

# out= dtypes the result can't be cast to, where PyTorch's kernel words the refusal itself (cat's TORCH_CHECK_TYPE;
# stack writes through cat)
_OUT_CAST = {
    **{n: (lambda o: TypeError(f"torch.cat(): input types can't be cast to the desired output type {o.short}"))
       for n in ("cat", "stack")},
    "logsumexp": lambda o: RuntimeError(f"logsumexp(): Expected floating point type for result tensor, but got: "
                                        f"{o.short}"),
}

# ops whose out= overload takes only tensors where the other overloads take numbers too (the argument parser's
# TypeError, naming the parameter): the names of their tensor parameters, in order
_OUT_TENSORS = {"where": ("condition", "input", "other")}


def _out_tensors(name, srcs):
    for i, (a, pname) in enumerate(zip(srcs, _OUT_TENSORS[name])):
        if not isinstance(a, Tensor):
            raise TypeError(f"{name}(): argument '{pname}' (position {i + 1}) must be Tensor, not "
                            f"{type(a).__name__}")


def _check_out_grad(name, outs, rs):
    """PyTorch's autograd refusal of an out= call with an argument (or ``out``) requiring grad."""
    if _gm.is_grad_enabled() and any(t.requires_grad for t in (*outs, *rs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, but "
                           "one of the arguments requires grad.")


class DataDependentError(RuntimeError):
    """Raised when a traced (compiled) region reads tensor values on the host."""


_VMAP_READ = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on "
              "a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
              "somewhere inside PyTorch internals, please file a bug report.")
_VMAP_BRANCH = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
                "support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")


# while a compiled function is traced: the graph-break errors made (a list), so one the user's code catches
# (``try: v = x.item() except Exception: v = -1``) still sends the call to eager instead of tracing the fallback
RAISED: list = [None]


def data_dependent_error(what, arr=None, branch=False, vmap=None):
    """``what`` names the host read (the compile graph-break message quotes it). ``arr``: the traced array read;
    one batched by ``func.vmap`` gets torch's vmap message (``branch``: control flow on the value; ``vmap``: the
    op's own). Outside a compiled trace, inside a func transform (which traces with JAX where torch's runs
    eagerly), the message names the transform."""
    from .._compile.runner import TRACING
    if isinstance(getattr(arr, "batch_dim", None), int):
        msg = vmap or (_VMAP_BRANCH if branch else _VMAP_READ)
        if not TRACING[0]:  # (torch's type: a plain RuntimeError; a compiled trace's is a graph break)
            return RuntimeError(msg)
    elif not TRACING[0] and _gm._state.transform:
        msg = (f"functorch_lite.func: {what} inside a function transform (grad, vjp, jvp, jacrev, jacfwd, hessian, "
               "vmap) needs concrete values: functorch_lite's transforms trace the function with JAX. Move it "
               "outside the transformed function.")
    else:
        msg = (f"functorch_lite.compile: {what} inside a compiled region needs concrete values (a graph break). "
               "Move it outside the compiled function.")
    e = DataDependentError(msg)
    e.what = what
    if RAISED[0] is not None:
        RAISED[0].append(e)
    return e
