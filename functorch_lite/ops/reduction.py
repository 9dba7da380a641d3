"""Reductions (spec §9.1-9.3, PRO-12/13): sum, mean, prod, max/min, amax/amin, argmax/argmin,
var/std (+ _mean), norm, logsumexp, cumsum/cumprod, all/any, softmax/log_softmax, topk, sort,
argsort, median, count_nonzero, aminmax.

Each op is one ``@defop``; its ``prep`` hook normalises ``dim`` (int, negative, tuple/list, the
``axis=`` alias) and raises PyTorch's errors before anything runs. Half-precision inputs accumulate
in float32 inside the jax body (as PyTorch's CPU kernels do); dispatch casts the result back.
``max``/``min``/``median`` are Python routers (METHODS/FUNCTIONS) over a full-reduction op and a
``dim`` op returning a ``torch.return_types`` named tuple, like PyTorch's overloads.

Example::

    >>> x = torch.tensor([[3., 1., 4.], [1., 5., 9.]])
    >>> x.max(dim=1).indices
    tensor([2, 2])
"""
from __future__ import annotations

import builtins
import functools
import math
import operator
import sys
import types
import warnings

import jax
import jax.numpy as jnp

from .. import _promotion as P
from .. import dtypes as D
from .._tensor.tensor import Tensor, _wrap_dim
from . import _dispatch, _rounding
from . import grad_overrides as _go
from ._registry import OPS, _not_bool, defop
from .._promotion import no_kernel
from .._warn import user_stacklevel as _user_stacklevel
from ._dispatch import _type_name

_HALF = (jnp.float16, jnp.bfloat16)
# the ops whose torch backward node saves its input and its result (an in-place change to the result before
# backward: torch's "modified by an inplace operation" error, though the gradient here needs only the input)
SAVES_RESULT = ("all", "result")


# ---- torch.return_types ------------------------------------------------------------------------
def _structseq(name: str, fields=("values", "indices")) -> type:
    """A tuple subclass printing like PyTorch's ``torch.return_types.<name>`` (RED-20)."""
    def __new__(cls, *values):
        if len(values) == 1 and isinstance(values[0], (tuple, list)):
            values = tuple(values[0])
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    ns = {"__slots__": (), "__new__": __new__, "__repr__": __repr__, "__reduce__": lambda r: (type(r), (tuple(r),)),
          "__module__": "functorch_lite.return_types", "n_fields": len(fields),
          "n_sequence_fields": len(fields), "n_unnamed_fields": 0}
    for i, f in enumerate(fields):
        ns[f] = property(operator.itemgetter(i))
    cls = type(name, (tuple,), ns)
    # a pytree node, as a namedtuple is (a compiled function or a func transform returns one: ``x.topk(2)``)
    jax.tree_util.register_pytree_node(cls, lambda r: (tuple(r), None), lambda _, c: cls(*c))
    return cls


return_types = types.ModuleType("functorch_lite.return_types", "Named results of (values, indices) ops.")
for _n, _f in (("max", None), ("min", None), ("topk", None), ("sort", None), ("median", None),
               ("aminmax", ("min", "max"))):
    setattr(return_types, _n, _structseq(_n, _f or ("values", "indices")))
# what an out= call returns (``torch.return_types.sort_out``; _dispatch.write_out)
for _n, _f in (("topk", None), ("sort", None), ("aminmax", ("min", "max")), ("max", None), ("min", None),
               ("median", None)):
    getattr(return_types, _n)._out_type = _structseq(_n + "_out", _f or ("values", "indices"))
    setattr(return_types, _n + "_out", getattr(return_types, _n)._out_type)
sys.modules.setdefault("functorch_lite.return_types", return_types)


# ---- argument helpers ----------------------------------------------------------------------------
def _acc(x):
    """Accumulate float16/bfloat16 in float32 (PyTorch's CPU accumulate type)."""
    return x.astype(jnp.float32) if x.dtype in _HALF else x


@jax.custom_jvp
def _pos_zero_real(x):
    return jnp.where(x == 0, jnp.zeros((), x.dtype), x)


_pos_zero_real.defjvp(lambda p, t: (_pos_zero_real(p[0]), t[0]))  # (the identity's derivative, at 0 too)


def _pos_zero(x):
    """``+0.0 + x`` as PyTorch's sum kernels accumulate (each -0.0 component becomes +0.0; XLA folds a literal
    ``x + 0`` away, so it is a select, differentiated as the identity)."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    if jnp.iscomplexobj(x):
        return jax.lax.complex(_pos_zero_real(x.real), _pos_zero_real(x.imag))
    return _pos_zero_real(x)


def _one_term(shape, dim):
    """True when a reduction over ``dim`` (None: all) sums exactly one element per output: XLA then returns the
    element itself (a -0.0 stays -0.0), where PyTorch adds it to its +0.0 accumulator. (Decided at trace time.)"""
    return math.prod(shape if dim is None else (shape[d] for d in dim)) == 1


def _ax(dim, axis):
    """``axis=`` is PyTorch's keyword alias of ``dim``."""
    return dim if axis is None else axis


def _dims(dim, nd, empty_all=True):
    """None | int | tuple/list -> None (all) or a tuple of wrapped dims (RED-02/04/06).

    ``()`` reduces all dims (sum, mean, amax, var, norm...) or none (``empty_all=False``: all/any).
    On a 0-d tensor any valid dim reduces 'everything', i.e. nothing: returns ``()``.
    """
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if not dim:
            return tuple(range(nd)) if empty_all else ()
        ds = tuple(_wrap_dim(operator.index(d), nd) for d in dim)
        for d in ds:
            if ds.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    else:
        ds = (_wrap_dim(operator.index(dim), nd),)
    return ds if nd else ()


def _dim_prep(targs, sargs):
    """``(dim, keepdim, *rest, axis)`` -> normalised dims (sum, mean, amax, logsumexp...)."""
    dim = _ax(sargs[0], sargs[-1])
    return (_dims(dim, len(targs[0]._shape)),) + tuple(sargs[1:-1]) + (None,)


def _one_dim(name, dim, nd, pos=1):
    """A single int dim (PyTorch's ``int dim`` overloads, its ``pos``-th argument of the method); tuples, and a
    tensor with dims (``Tensor.__index__`` takes any one-element tensor; torch's parser only a 0-d one), raise its
    TypeError."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {_type_name(dim)}")
    if isinstance(dim, Tensor) and dim._shape:
        raise TypeError(f"{name}(): argument 'dim' (position {pos}) must be int, not Tensor")
    return _wrap_dim(operator.index(dim), nd)


def _nonempty(name, t, dims, all_exc=RuntimeError, all_tail=" Specify the reduction dim with the 'dim' argument."):
    """max/amax/argmax/median over an empty reduction raise (RED-34); ``dims=None``: no dim given."""
    shape = t._shape
    if dims is None:
        if math.prod(shape) == 0:
            raise all_exc(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{all_tail}")
        return
    for d in dims:
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def no_wide_unsigned(op, dt):
    """``check_dtype`` of the ops torch 2.13 has no uint16/uint32/uint64 CPU kernel for (max, topk, median...)."""
    if dt in D.UNSIGNED_WIDE:
        raise no_kernel(op.kernel, dt)


def _rule_int64_narrow(op, sig, sargs):
    """``int64`` results (argmax, count_nonzero) of an input torch has a kernel for."""
    no_wide_unsigned(op, sig[0][1])
    return P.rule_int64(op, sig, sargs)


def _invalid_combo(name, got, overloads):
    lines = "".join(f" * {o}\n" for o in overloads)
    return TypeError(f"{name}() received an invalid combination of arguments - got {got}, but expected one of:\n"
                     f"{lines}")


# ---- sum / mean / prod ---------------------------------------------------------------------------
def _sum_name(targs, sargs):
    return "SumBackward0" if sargs[0] is None else "SumBackward1"


# (float8=True: a float8 input sums once cast to a ``dtype=`` (or out=) of another type; rule_sum refuses a float8
# result with torch's "sum_cpu" error, as mean's and prod's rules do)
@defop(kernel="sum_cpu", promote="sum", grad_fn=_sum_name, prep=_dim_prep, saves=(), autocast={"cuda": "fp32_opt"},
       float8=True)
def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None):  # noqa: A001
    """Integer and bool sums accumulate in int64 (PRO-13); ``dim=()`` reduces all (RED-02)."""
    r = jnp.sum(_acc(input), axis=dim, keepdims=keepdim)
    return _pos_zero(r) if _one_term(input.shape, dim) else r


def _mean_name(targs, sargs):
    return "MeanBackward0" if sargs[0] is None else "MeanBackward1"


def _mean_rule(op, sig, sargs):
    """PRO-12, with PyTorch's separate wording for a non-floating ``dtype=``."""
    dt_arg = op.sarg(sargs, "dtype")
    if dt_arg is not None and D.as_dtype(dt_arg).category < D.FLOAT:
        raise RuntimeError(f"{op.name}(): could not infer output dtype. Optional dtype must be either a floating "
                           f"point or complex dtype. Got: {D.as_dtype(dt_arg).short}")
    return P.rule_mean(op, sig, sargs)


@defop(kernel="sum_cpu", promote=_mean_rule, grad_fn=_mean_name, prep=_dim_prep, saves=(), float8=True)
def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Floating/complex only (PRO-12); the mean of nothing is nan (RED-10)."""
    r = _rounding.mean(_acc(input), axis=dim, keepdims=keepdim)
    return _pos_zero(r) if _one_term(input.shape, dim) else r


def _prod_prep(targs, sargs):
    dim, keepdim, dtype, axis = sargs
    dim = _ax(dim, axis)
    if isinstance(dim, (tuple, list)) or isinstance(dim, Tensor) and dim._shape:  # (a 0-d tensor is an int)
        raise _invalid_combo("prod", f"(dim={_type_name(dim)}, )", (
            "(*, torch.dtype dtype = None)", "(int dim, bool keepdim = False, *, torch.dtype dtype = None)"))
    nd = len(targs[0]._shape)
    return (None if dim is None else (_wrap_dim(operator.index(dim), nd) if nd else ()), keepdim, dtype, None)


@defop(saves=SAVES_RESULT, kernel="prod_out_cpu", promote="sum", prep=_prod_prep,
       grad_fn=lambda t, s: "ProdBackward0" if s[0] is None else "ProdBackward1",
       autocast={"cpu": "fp32", "cuda": "fp32_opt"}, float8=True)
def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Product; one int ``dim`` only; integers accumulate in int64 (PRO-13), float16 / bfloat16 in their own dtype
    (``_half_prod``)."""
    if input.dtype in _HALF and input.ndim:
        return _half_prod(input, dim, keepdim)
    return jnp.prod(_acc(input), axis=dim, keepdims=keepdim)


def _half_prod(x, dim, keepdim):
    """torch's CPU ``prod`` of float16 / bfloat16 multiplies in half, each product rounded (``300 * 300`` is already
    inf in float16, ``1e4 * -1e4 * 0`` nan), where XLA's reduce accumulates in float32. Up to 128 factors in order
    (torch's scalar loop, below its 4-vector chunk), more by pairs, a level at a time."""
    dt, shape = x.dtype, x.shape
    if dim is None:
        x, dim = x.reshape(-1), 0
    acc = jnp.moveaxis(x.astype(jnp.float32), dim, 0)
    if acc.shape[0] <= 128:
        r = jnp.ones(acc.shape[1:], jnp.float32)
        for i in range(acc.shape[0]):
            r = _rounding.stored(r * acc[i], dt)
    else:
        while acc.shape[0] > 1:
            if acc.shape[0] % 2:
                acc = jnp.concatenate([acc, jnp.ones((1,) + acc.shape[1:], acc.dtype)])
            acc = _rounding.stored(acc[0::2] * acc[1::2], dt)
        r = acc[0]
    r = r.astype(dt)
    return r.reshape(tuple(1 if i == dim or x.ndim == 1 else n for i, n in enumerate(shape))) if keepdim else r


# ---- max / min / amax / amin / argmax / argmin / aminmax --------------------------------------------------
def _sel_prep(name, empty_ok=False, bool_error=None):
    """max/min/median, full (no static args) or with one int ``dim``: RED-34 errors, bool kernels."""
    def prep(targs, sargs):
        t = targs[0]
        if bool_error is not None and t.dtype is D.bool:
            raise bool_error[0](bool_error[1])
        if not sargs:
            if not empty_ok:
                _nonempty(name, t, None)
            return sargs
        d = _one_dim(name, sargs[0], len(t._shape))
        _nonempty(name, t, (d,))
        return (d,) + tuple(sargs[1:])
    return prep


def _pick(x, fn, axis, keepdims, nan_too):
    """jnp.max / jnp.min with torch's gradient (grad_overrides.pick) where there is one (floating x)."""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return _go.pick(x, fn, axis, keepdims, nan_too)
    return fn(x, axis=axis, keepdims=keepdims)


def _select(x, dim, keepdim, argfn):
    """(values, int64 indices) along ``dim``; values gathered at the index, so the gradient goes there."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    idx = argfn(x, axis=dim, keepdims=True)
    v = jnp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        v, idx = jnp.squeeze(v, dim), jnp.squeeze(idx, dim)
    return v, idx


@defop("max", saves=SAVES_RESULT, kernel="max_all", grad_fn="MaxBackward1", prep=_sel_prep("max"), method=False,
       check_dtype=no_wide_unsigned, function=False)
def _max_all(input):
    """``x.max()``: NaN propagates (RED-31); ties share the gradient evenly, as PyTorch's."""
    return _pick(input, jnp.max, None, False, True)


@defop("min", saves=SAVES_RESULT, kernel="min_all", grad_fn="MinBackward1", prep=_sel_prep("min"), method=False,
       check_dtype=no_wide_unsigned, function=False)
def _min_all(input):
    return _pick(input, jnp.min, None, False, True)


@defop("max_dim", kernel="max_cpu", promote="value_index", grad_fn="MaxBackward0", prep=_sel_prep("max"), nout=2,
       check_dtype=no_wide_unsigned, result_type=return_types.max, method=False, function=False, saves=())
def _max_dim(input, dim, keepdim=False):
    """``x.max(dim)``: first index on ties (RED-30), NaN wins (RED-31)."""
    return _select(input, dim, keepdim, jnp.argmax)


@defop("min_dim", kernel="min_cpu", promote="value_index", grad_fn="MinBackward0", prep=_sel_prep("min"), nout=2,
       check_dtype=no_wide_unsigned, result_type=return_types.min, method=False, function=False, saves=())
def _min_dim(input, dim, keepdim=False):
    return _select(input, dim, keepdim, jnp.argmin)


def _amax_prep(name):
    def prep(targs, sargs):
        dim, keepdim, axis = sargs
        dim = _ax(dim, axis)
        dims = _dims(dim, len(targs[0]._shape))
        if dim is None or dim in ((), []):
            _nonempty(name, targs[0], None)
        else:  # PyTorch names the dim as given (-1 stays -1)
            shape = targs[0]._shape
            for g in (dim if isinstance(dim, (tuple, list)) else (dim,)):
                if shape and shape[_wrap_dim(g, len(shape))] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {g} to have non-zero size.")
        return (dims, keepdim, None)
    return prep


@defop(saves=SAVES_RESULT, kernel="max_values_cpu", grad_fn="AmaxBackward0", prep=_amax_prep("amax"),
       check_dtype=no_wide_unsigned)
def amax(input, dim=(), keepdim=False, *, axis=None):
    """Max over ``dim`` (int or tuple; ``()`` = all, RED-36)."""
    return _pick(input, jnp.max, dim, keepdim, False)


@defop(saves=SAVES_RESULT, kernel="min_values_cpu", grad_fn="AminBackward0", prep=_amax_prep("amin"),
       check_dtype=no_wide_unsigned)
def amin(input, dim=(), keepdim=False, *, axis=None):
    return _pick(input, jnp.min, dim, keepdim, False)


def _arg_prep(name):
    def prep(targs, sargs):
        dim, keepdim, axis = sargs
        t = targs[0]
        if t.dtype is D.bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        dim = _ax(dim, axis)
        if dim is None:
            _nonempty(name, t, None, IndexError, "")
            return (None, keepdim, None)
        d = _one_dim(name, dim, len(t._shape))
        _nonempty(name, t, (d,))
        return (d, keepdim, None)
    return prep


def _arg(x, dim, keepdim, fn):
    return jnp.zeros((), jnp.int64) if x.ndim == 0 else fn(x, axis=dim, keepdims=keepdim)


@defop(kernel="argmax_cpu", promote=_rule_int64_narrow, prep=_arg_prep("argmax"), differentiable=False)
def argmax(input, dim=None, keepdim=False, *, axis=None):
    """Flat index when ``dim`` is None (RED-32); first occurrence on ties; int64."""
    return _arg(input, dim, keepdim, jnp.argmax)


@defop(kernel="argmin_cpu", promote=_rule_int64_narrow, prep=_arg_prep("argmin"), differentiable=False)
def argmin(input, dim=None, keepdim=False, *, axis=None):
    return _arg(input, dim, keepdim, jnp.argmin)


def _aminmax_prep(targs, sargs):
    dim, keepdim = sargs
    t = targs[0]
    d = None if dim is None else _one_dim("aminmax", dim, len(t._shape))
    if d is not None and t._shape and t._shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    if t.numel() == 0 and d is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    return (d if t._shape or d is None else None, keepdim)


@defop(kernel="aminmax_cpu", grad_fn="AminmaxBackward0", prep=_aminmax_prep, nout=2, out=True,
       check_dtype=no_wide_unsigned, result_type=return_types.aminmax)
def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` as ``torch.return_types.aminmax``."""
    return jnp.min(input, axis=dim, keepdims=keepdim), jnp.max(input, axis=dim, keepdims=keepdim)


# ---- var / std -----------------------------------------------------------------------------------
def _var_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category < D.FLOAT:
        who = op.name if op.nout == 2 else "std and var"
        raise RuntimeError(f"{who} only support floating point and complex dtypes")
    return (None,), (dt.to_real(), dt)[:op.nout]


def _var_prep(name):
    def prep(targs, sargs):
        dim, unbiased, keepdim, correction, axis = sargs
        dim = _ax(dim, axis)
        if isinstance(dim, bool):  # var(input, unbiased) overload
            dim, unbiased = None, dim
        elif unbiased is not None and type(unbiased) is not bool:  # (None: not given, our default)
            _not_bool(name, ("unbiased",), (unbiased,))
        if unbiased is not None and correction is not None:
            raise TypeError(f"{name}(): pass either unbiased= or correction=, not both")
        if isinstance(correction, Tensor):  # (a 0-d tensor: its number, which the kernel's divisor is built from)
            correction = _dispatch.scalar_arg(correction, name, "correction")
        c = correction if correction is not None else (0 if unbiased is False else 1)
        t = targs[0]
        dims = _dims(dim, len(t._shape))
        n = t.numel() if dims is None else math.prod(t._shape[d] for d in dims)
        if n - c <= 0:
            warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                          "than the reduction factor (input numel divided by output numel). (Triggered internally at "
                          "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)", UserWarning,
                          stacklevel=_user_stacklevel())
        return (dims, None, keepdim, c, None)
    return prep


def _moments(x, dim, keepdim, correction, mean_fn=None):
    """(variance, mean) with Bessel-style ``correction`` (divisor ``max(N - correction, 0)``); ``mean_fn(x, axes)``:
    the kept-dims mean (default torch's two-pass ``sum / n``)."""
    x = _acc(x)
    # (the mean rounded to the dtype before ``x - m``, as torch's: XLA may otherwise fuse ``x - sum * (1 / n)`` into
    # one multiply-add, and a constant slice's deviations are then +-1 ulp, not 0)
    if mean_fn is None:
        m = _rounding.mean(x, axis=dim, keepdims=True)
    else:
        m = mean_fn(x, tuple(range(x.ndim)) if dim is None else dim)
    d = x - m
    sq = jnp.real(d * jnp.conj(d)) if jnp.iscomplexobj(d) else d * d
    n = x.size if dim is None else math.prod(x.shape[i] for i in dim)
    var = jnp.sum(sq, axis=dim, keepdims=keepdim) / jnp.asarray(builtins.max(n - correction, 0), sq.dtype)
    if not keepdim:
        m = m.reshape(var.shape)
    return var, m


@defop(kernel="std_cpu", promote=_var_rule, grad_fn="VarBackward0", prep=_var_prep("var"))
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """``correction=1`` by default; ``unbiased=`` is the legacy spelling."""
    return _moments(input, dim, keepdim, correction)[0]


@defop(saves=SAVES_RESULT, kernel="std_cpu", promote=_var_rule, grad_fn="StdBackward0", prep=_var_prep("std"))
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """``sqrt(var)``, its gradient 0 where it is 0 (torch's ``std_backward``: a constant slice)."""
    return _go.sqrt0(_moments(input, dim, keepdim, correction)[0])


def welford_mean(x, axis):
    """The mean over ``axis`` (kept), correctly rounded in the common case, as torch's Welford / RowwiseMoments
    kernels get it (``var_mean``, ``layer_norm``, ``group_norm``): ``sum / n``, then one compensation pass
    ``+= sum(x - mean) / n``. A plain ``sum / n`` is off by an ulp where the sum itself rounds (three ``1e10``), and
    ``x - mean`` is then not 0 on a constant slice. The compensation carries no gradient (the mean's is ``1 / n``)."""
    m = _rounding.mean(x, axis=axis, keepdims=True)
    n = math.prod(x.shape[a] for a in axis)
    c = jnp.sum(x - m, axis=axis, keepdims=True) / jnp.asarray(builtins.max(n, 1), x.dtype)
    return m + jax.lax.stop_gradient(c)


@defop(kernel="std_cpu", promote=_var_rule, grad_fn="VarMeanBackward0", prep=_var_prep("var_mean"), nout=2,
       method=False)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """``(var, mean)`` as a plain tuple (function only, like PyTorch); the mean is Welford's (``welford_mean``: a
    constant slice's variance is 0, where ``var`` itself, torch's two-pass ``sum / n``, may be an ulp's)."""
    return _moments(input, dim, keepdim, correction, welford_mean)


@defop(kernel="std_cpu", promote=_var_rule, grad_fn="StdMeanBackward0", prep=_var_prep("std_mean"), nout=2,
       method=False)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    v, m = _moments(input, dim, keepdim, correction, welford_mean)
    return _go.sqrt0(v), m


# ---- norm / logsumexp ----------------------------------------------------------------------------------
def _norm_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category < D.FLOAT:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {dt.short}")
    dt_arg = op.sarg(sargs, "dtype")
    r = D.as_dtype(dt_arg) if dt_arg is not None else dt
    return (r,), (r.to_real(),)


def _norm_prep(targs, sargs):
    p, dim, keepdim, dtype = sargs
    nd = len(targs[0]._shape)
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if p == "fro" and (dim is None or not isinstance(dim, (tuple, list)) or len(dim) <= 2):
            p = 2.0
        else:
            ds = list(range(nd)) if dim is None else (list(dim) if isinstance(dim, (tuple, list)) else [dim])
            if len(ds) != 2:
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, ds))}")
            if targs[0].dtype in (D.float16, D.bfloat16):
                raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got "
                                   f"{targs[0].dtype.short}")
            return ("nuc", tuple(sorted(_dims(ds, nd))), keepdim, dtype)
    pf = builtins.float(p)
    if targs[0].numel() == 0 and (pf < 0 or pf == math.inf):  # no identity: PyTorch's errors, dim as given
        from ..linalg import _cnum
        given = None if dim is None else (list(dim) if isinstance(dim, (tuple, list)) else [dim])
        if not given:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_cnum(pf)} norm on an empty tensor because "
                               "the operation does not have an identity")
        for d in given:
            if targs[0]._shape[_wrap_dim(d, nd)] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_cnum(pf)} norm on the dimension {d}"
                                   "because this dimension is empty and the operation does not have an identity")
    return (pf, _dims(dim, nd), keepdim, dtype)


def _abs(x):
    """``|x|``, its gradient at 0 torch's 0 for real x (a norm's backward: ``sgn(x)``)."""
    return jnp.abs(x) if jnp.iscomplexobj(x) else _go.abs(x)


def _nuc_check(targs, sargs):
    if sargs[0] == "nuc":  # (an SVD: torch's LinAlgError for a matrix with a NaN)
        from .linalg_ops import _svd_no_nan
        _svd_no_nan(targs, sargs, sargs[1])


@defop(saves=SAVES_RESULT, kernel="norm_cpu", promote=_norm_rule, prep=_norm_prep,
       grad_fn=lambda t, s: ("PermuteBackward0" if s[2] else "SumBackward1") if s[0] == "nuc" else
       "LinalgVectorNormBackward0",
       autocast={"cuda": "fp32"}, check=_nuc_check,
       undefined_grad=lambda s, sig, present: s[0] == 0)  # (torch's norm_backward of ord 0: no gradient)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over ``dim`` (2 / 'fro' default, inf, -inf, 0, any p); 'nuc' for two dims."""
    x = _acc(input)
    if p == "nuc":
        s = jnp.linalg.svd(jnp.moveaxis(x, dim, (-2, -1)), compute_uv=False).sum(-1)
        for d in dim if keepdim else ():
            s = jnp.expand_dims(s, d)
        return s
    a = _abs(x)
    if p == math.inf:
        return jnp.max(a, axis=dim, keepdims=keepdim)
    if p == -math.inf:
        return jnp.min(a, axis=dim, keepdims=keepdim)
    if p == 0:
        return jnp.sum((a != 0).astype(a.dtype), axis=dim, keepdims=keepdim)
    if p == 1:
        return jnp.sum(a, axis=dim, keepdims=keepdim)
    if not jnp.iscomplexobj(x):  # (torch's norm_backward on x itself: its second derivative too)
        return _go.vnorm(x, p, dim, keepdim)
    return _go.pnorm(a, p, dim, keepdim)


def _fro_prep(targs, sargs):
    dim, keepdim = sargs
    if dim is None:
        raise TypeError('frobenius_norm() missing 1 required positional arguments: "dim"')
    dim = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    return (_dims(dim, len(targs[0]._shape)), builtins.bool(keepdim))


def _fro_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category < D.FLOAT:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {dt.short} "
                           "instead.")
    return (dt,), (dt.to_real(),)


@defop(saves=SAVES_RESULT, kernel="norm_cpu", promote=_fro_rule, prep=_fro_prep, grad_fn="NormBackward1", method=False)
def frobenius_norm(input, dim=None, keepdim=False):
    """``torch.frobenius_norm(x, dim, keepdim=False)``: the 2-norm over at most two dims (``()``: all of them),
    a zero gradient at zero (``grad_overrides.vnorm``)."""
    x = _acc(input)
    return _go.pnorm(_abs(x), 2.0, dim, keepdim) if jnp.iscomplexobj(x) else _go.vnorm(x, 2.0, dim, keepdim)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """``torch.nuclear_norm(x, keepdim=False)`` / ``nuclear_norm(x, dim, keepdim=False)``: the sum of the singular
    values over ``dim`` (the last two dims by default), ``norm(x, 'nuc', dim)`` (``out=``: torch's
    ``nuclear_norm.out``)."""
    if isinstance(dim, builtins.bool):  # (the two-argument overload: nuclear_norm(x, keepdim))
        dim, keepdim = None, dim
    if dim is None:
        if len(input._shape) < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
        dim = (-2, -1)
    r = norm(input, "nuc", dim, keepdim)
    if out is None:
        return r
    if r.requires_grad:  # (torch's composite out= form copies the result in: no refusal, the copy recorded)
        _dispatch.write_out(out, r.detach())
        return out.copy_(r)
    return _dispatch.write_out(out, r)


def _lse_prep(targs, sargs):
    dim, keepdim, axis = sargs
    if dim is None and axis is None:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    nd, d = len(targs[0]._shape), _ax(dim, axis)
    if not keepdim and nd and isinstance(d, (tuple, list)) and not d:
        # (torch's logsumexp reduces ``dim=()`` over every dim, keeping them, then squeezes none: its result, of
        # the input's rank, is refused by the 0-d output it allocated)
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * nd}")
    return _dim_prep(targs, sargs)


@defop(saves=SAVES_RESULT, kernel="max_values_cpu", promote="float", grad_fn="LogsumexpBackward0", prep=_lse_prep,
       autocast={"cuda": "fp32"})
def logsumexp(input, dim=None, keepdim=False, *, axis=None):
    """Stable ``log(sum(exp(x)))`` over ``dim`` (required); integers compute in the default float. float16 /
    bfloat16: :func:`_lse_half`."""
    if input.dtype in _HALF:
        return _lse_half(dim, keepdim, input)
    return jax.nn.logsumexp(_acc(input), axis=dim, keepdims=keepdim)


_rnd = _rounding.stored  # (``_rnd(v, t)``: a float16 / bfloat16 result stored, read back in float32)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def _lse_half(dim, keepdim, x):
    """PyTorch's float16 / bfloat16 logsumexp, its decomposition rounding each op's result to the type: ``x - m``
    (``m`` the max, 0 where it is +-inf), ``exp``, the sum (accumulated in float32), ``log``, ``+ m``."""
    t, f = x.dtype, jnp.float32
    m = jnp.max(x, axis=dim, keepdims=True, initial=-jnp.inf).astype(f)  # (-inf over an empty dim: its result)
    m = jnp.where(jnp.isinf(m), jnp.zeros((), f), m)
    e = _rnd(jnp.exp(_rnd(x.astype(f) - m, t)), t)
    lg = _rnd(jnp.log(_rnd(jnp.sum(e, axis=dim, keepdims=keepdim), t)), t)
    return (lg + (m if keepdim else jnp.squeeze(m, axis=dim))).astype(t)


def _lse_half_fwd(dim, keepdim, x):
    r = _lse_half(dim, keepdim, x)
    return r, (x, r)


def _lse_half_bwd(dim, keepdim, res, g):
    """LogsumexpBackward0 in the type: ``g * exp(x - result)``, each op rounded."""
    x, r = res
    t, f = x.dtype, jnp.float32
    if not keepdim:
        r, g = jnp.expand_dims(r, dim), jnp.expand_dims(g, dim)
    return ((g.astype(f) * _rnd(jnp.exp(_rnd(x.astype(f) - r.astype(f), t)), t)).astype(t),)


_lse_half.defvjp(_lse_half_fwd, _lse_half_bwd)


# ---- cumulative ------------------------------------------------------------------------------
def _req_dim_prep(name):
    """``(dim, dtype, axis)`` with ``dim`` required (RED-13's message) and a single int."""
    def prep(targs, sargs):
        dim, dtype, axis = sargs
        dim = _ax(dim, axis)
        if dim is None:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        return (_one_dim(name, dim, len(targs[0]._shape)), dtype, None)
    return prep


def _cum_acc(x):
    """What torch's CPU cumsum / cumprod accumulate in (``acc_type<T, false>``): float32 (complex64) in float64
    (complex128), float16 / bfloat16 in float32; each running value rounded back to x's dtype."""
    if x.dtype == jnp.float32 or x.dtype == jnp.complex64:
        return x.astype(jnp.float64 if x.dtype == jnp.float32 else jnp.complex128)
    return _acc(x)


def _cum_rule(op, sig, sargs):
    """``sum``'s rule; a bool result has no kernel."""
    casts, outs = P.rule_sum(op, sig, sargs)
    if outs[0] is D.bool:
        raise no_kernel(op.kernel, D.bool)
    return casts, outs


def _cum_check(targs, sargs):
    """A ``dtype=``: an integer one of an input that requires grad is refused by torch's autograd (a real one of a
    complex input warns as the cast does: ``rule_sum``)."""
    if sargs[1] is not None:
        dt = D.as_dtype(sargs[1])
        if dt.category <= D.INT and _dispatch._state.enabled and targs[0].requires_grad:
            raise RuntimeError(f"Autograd not support dtype: {dt.short}")


def _cum_inplace(targs, sargs):
    """``x.cumsum_(dim, dtype=)``: a ``dtype`` other than x's is torch's in-place refusal."""
    self = targs[0]
    if sargs[1] is not None and D.as_dtype(sargs[1]) is not self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {P._cname(self.dtype)} and output tensor dtype "
                           f"{P._cname(D.as_dtype(sargs[1]))} should match")


@defop(kernel="cumsum_out_cpu", promote=_cum_rule, grad_fn="CumsumBackward0", prep=_req_dim_prep("cumsum"),
       inplace=_cum_inplace, check=_cum_check, saves=(), autocast={"cuda": "fp32_opt"}, float8=True)
def cumsum(input, dim=None, *, dtype=None, axis=None):
    """Running sum along ``dim``; integers and bool accumulate in int64 (PRO-13), floats in torch's CPU
    ``acc_type`` (:func:`_cum_acc`), from PyTorch's +0.0 (so no -0.0 comes out)."""
    return input if input.ndim == 0 else _pos_zero(jnp.cumsum(_cum_acc(input), axis=dim).astype(input.dtype))


@defop(saves=SAVES_RESULT, kernel="cumprod_out_cpu", promote=_cum_rule, grad_fn="CumprodBackward0",
       prep=_req_dim_prep("cumprod"), inplace=_cum_inplace, check=_cum_check, autocast={"cuda": "fp32_opt"},
       float8=True)  # (as sum: a float8 input computes cast to a ``dtype=``; rule_sum refuses a float8 result)
def cumprod(input, dim=None, *, dtype=None, axis=None):
    """Running product along ``dim``, accumulated as ``cumsum``."""
    return input if input.ndim == 0 else jnp.cumprod(_cum_acc(input), axis=dim).astype(input.dtype)


# ---- all / any / count_nonzero -----------------------------------------------------------------------------
def _logical_rule(op, sig, sargs):
    """bool results, except uint8 in -> uint8 out (PyTorch's legacy behaviour)."""
    return (None,), (D.uint8 if sig[0][1] is D.uint8 else D.bool,)


def _logical_prep(targs, sargs):
    dim, keepdim, axis = sargs
    return (_dims(_ax(dim, axis), len(targs[0]._shape), empty_all=False), keepdim, None)


def _truth(x):
    return x if x.dtype == jnp.bool_ else x != 0


@defop(float8=True, promote=_logical_rule, prep=_logical_prep, differentiable=False)
def all(input, dim=None, keepdim=False, *, axis=None):  # noqa: A001
    """True where every element along ``dim`` is non-zero (NaN counts as true)."""
    return jnp.all(_truth(input), axis=dim, keepdims=keepdim)


@defop(float8=True, promote=_logical_rule, prep=_logical_prep, differentiable=False)
def any(input, dim=None, keepdim=False, *, axis=None):  # noqa: A001
    return jnp.any(_truth(input), axis=dim, keepdims=keepdim)


def _count_prep(targs, sargs):
    dim, axis = sargs
    dim = _ax(dim, axis)
    # (no dims, or an empty list: torch's all-reduce kernel, which _count_rule refuses for float8; given dims count
    # as ``(x != 0).sum(dims)``, which float8 has)
    return (None if dim is None or isinstance(dim, (tuple, list)) and not dim else _dims(dim, len(targs[0]._shape)),
            None)


def _count_rule(op, sig, sargs):
    if sargs[0] is None and sig[0][1] in D.FLOAT8:
        raise no_kernel(op.kernel, sig[0][1])
    return _rule_int64_narrow(op, sig, sargs)


@defop(kernel="nonzero_count_cpu", promote=_count_rule, prep=_count_prep, differentiable=False, float8=True)
def count_nonzero(input, dim=None, *, axis=None):
    """Number of non-zero elements over ``dim`` (int or tuple), int64."""
    return jnp.sum(_truth(input), axis=dim, dtype=jnp.int64)


# ---- softmax / log_softmax -----------------------------------------------------------------------------
def _softmax_rule(op, sig, sargs):
    """Floating inputs, or any input with a floating ``dtype=`` (RED-15/16); else the kernel's NotImplementedError
    (float8 has none: a float8 input computes cast to a ``dtype=``)."""
    nd, dt = sig[0]
    dt_arg = op.sarg(sargs, "dtype")
    if dt_arg is not None:  # (the input cast to ``dtype`` first: an integral, bool or complex one has no kernel)
        dt = D.as_dtype(dt_arg)
        if dt.category == D.FLOAT and dt not in D.FLOAT8:
            return (dt,), (dt,)
    if dt.category != D.FLOAT or dt in D.FLOAT8:  # (integral, bool, complex and float8: no kernel)
        last = "_lastdim" if nd == 0 or op.sarg(sargs, "dim") == nd - 1 else ""
        raise no_kernel(f"{op.name}{last}_kernel_impl", dt)
    return (None,), (dt,)


def _softmax_check(targs, sargs):
    """A complex input cast to a floating ``dtype=``: that cast's one-time warning (per call, not in the cached
    rule: ``set_warn_always`` repeats it)."""
    dt_arg = sargs[1]
    if dt_arg is not None and targs[0].dtype.is_complex:
        P.discards_imag(targs[0].dtype, D.as_dtype(dt_arg))


def _along(fn, x, dim):
    x = _acc(x)
    return fn(x.reshape(1), axis=0).reshape(()) if x.ndim == 0 else fn(x, axis=dim)


@defop(kernel="softmax_lastdim_kernel_impl", promote=_softmax_rule, grad_fn="SoftmaxBackward0",
       prep=_req_dim_prep("softmax"), check=_softmax_check, saves=("result",), float8=True,
       autocast={"cuda": "fp32_opt"})
def softmax(input, dim=None, dtype=None, *, axis=None):
    """Numerically stable softmax along ``dim`` (required, RED-13; RED-17); float16 / bfloat16 in float32, rounded
    once, with torch's backward (``_softmax_half``)."""
    if input.dtype in _HALF:
        return _softmax_half(dim, input) if input.ndim else _softmax_half(0, input.reshape(1)).reshape(())
    return _along(jax.nn.softmax, input, dim)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _softmax_half(dim, x):
    return jax.nn.softmax(x.astype(jnp.float32), axis=dim).astype(x.dtype)


@_softmax_half.defjvp
def _softmax_half_jvp(dim, primals, tangents):
    """SoftmaxBackward0 of a half result ``y`` (torch's ``_softmax_backward_data`` kernel): ``(g - sum(g * y)) * y``
    in float32 from the saved, rounded ``y``, rounded once. Written as the tangent map whose transpose (what
    ``jax.vjp`` runs) is that formula, term for term: ``m - y * sum(m)`` with ``m = t * y``."""
    (x,), (t,) = primals, tangents
    y = _softmax_half(dim, x)
    yr = _dispatch.stored_half(y, y.dtype)
    m = t.astype(jnp.float32) * yr
    return y, (m - yr * jnp.sum(m, axis=dim, keepdims=True)).astype(y.dtype)


@defop(kernel="log_softmax_kernel_impl", promote=_softmax_rule, grad_fn="LogSoftmaxBackward0",
       prep=_req_dim_prep("log_softmax"), check=_softmax_check, float8=True,
       saves=("result",), autocast={"cuda": "fp32_opt"})
def log_softmax(input, dim=None, dtype=None, *, axis=None):
    if input.dtype in _HALF:
        return _log_softmax_half(dim, input) if input.ndim else _log_softmax_half(0, input.reshape(1)).reshape(())
    return _along(jax.nn.log_softmax, input, dim)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _log_softmax_half(dim, x):
    """PyTorch's float16 / bfloat16 log_softmax. Along the last dim (its vectorised last-dim kernel): ``x - max`` in
    float32 minus the log of the sum of exps, where the sum and its log are each stored in the type; the result
    rounded once. Along another dim torch's kernel computes in float32 and rounds once."""
    t, f = x.dtype, jnp.float32
    if dim not in (-1, x.ndim - 1):
        return jax.nn.log_softmax(x.astype(f), axis=dim).astype(t)
    d = x.astype(f)
    d = d - jnp.max(d, axis=dim, keepdims=True)
    return (d - _rnd(jnp.log(_rnd(jnp.sum(jnp.exp(d), axis=dim, keepdims=True), t)), t)).astype(t)


@_log_softmax_half.defjvp
def _log_softmax_half_jvp(dim, primals, tangents):
    """LogSoftmaxBackward0 from the saved (rounded) result ``r``, in float32: ``g - exp(r) * sum(g)``, rounded once
    (any dim), as the tangent map ``t - sum(exp(r) * t)`` whose transpose it is."""
    (x,), (t,) = primals, tangents
    r = _log_softmax_half(dim, x)
    e = jnp.exp(_dispatch.stored_half(r, r.dtype))
    tw = t.astype(jnp.float32)
    return r, (tw - jnp.sum(e * tw, axis=dim, keepdims=True)).astype(r.dtype)


# ---- topk / sort / argsort / median ---------------------------------------------------------------------
def _topk_prep(targs, sargs):
    k, dim, largest, sorted_, axis = sargs
    t = targs[0]
    nd = len(t._shape)
    dim = _ax(dim, axis)
    if dim is None:
        raise TypeError("topk(): argument 'dim' must be int, not NoneType")
    d = _one_dim("topk", dim, nd, 2)
    if t.dtype is D.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if isinstance(k, bool) or not hasattr(k, "__index__"):  # (PyTorch's parser refuses a bool, a float, ...)
        from ._dispatch import _call_form  # (torch's parser's position: none for a keyword; a method's self uncounted)
        where = _call_form(OPS["topk"], "k")[1]
        raise TypeError(f"topk(): argument 'k'{where} must be int, not {_type_name(k)}")
    k = operator.index(k)
    if not 0 <= k <= (t._shape[d] if nd else 1):
        raise RuntimeError("selected index k out of range")
    return (k, d, largest, sorted_, None)


def _gather_sorted(x, dim, descending, k=None):
    """Stable sort along ``dim`` (NaN largest, -0 == 0, ties in original order) -> (values, indices)."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    idx = jnp.argsort(x, axis=dim, stable=True, descending=descending)
    if k is not None:
        idx = jax.lax.slice_in_dim(idx, 0, k, axis=dim)
    return jnp.take_along_axis(x, idx, axis=dim), idx


@defop(kernel="topk_cpu", promote="value_index", grad_fn="TopkBackward0", prep=_topk_prep, nout=2, out=True,
       check_dtype=no_wide_unsigned, result_type=return_types.topk,
       saves=())
def topk(input, k, dim=-1, largest=True, sorted=True, *, axis=None):  # noqa: A002
    """The ``k`` largest (or smallest) along ``dim``; always returned sorted; ties keep index order."""
    return _gather_sorted(input, dim, largest, k)


_SORT_METHOD = ("(*, bool stable, int dim = -1, bool descending = False)", "(int dim = -1, bool descending = False)")
_SORT_OUT = {"sort": ", *, tuple of Tensors out = None", "argsort": ""}


def _sort_prep(name):
    def prep(targs, sargs):
        dim, descending, stable, axis = sargs
        dim = _ax(dim, axis)
        if isinstance(dim, (tuple, list)) or isinstance(dim, Tensor) and dim._shape:  # (a 0-d tensor is an int)
            raise _invalid_combo(name, f"({_type_name(dim)})", _SORT_METHOD)
        if dim is None:  # (the method's wording: ``x.sort(dim=None)``)
            raise _invalid_combo(name, "(dim=NoneType, )", _SORT_METHOD)
        if type(dim) is builtins.bool:  # (``sort(x, True)``: a bool where the dim goes; the function's wording)
            got = ", ".join(["Tensor", "bool"] + ([type(descending).__name__] if descending is not False else []))
            raise _invalid_combo(name, f"({got})", (
                f"(Tensor input, *, bool stable, int dim = -1, bool descending = False, "
                f"{'tuple of Tensors' if name == 'sort' else 'Tensor'} out = None)",
                f"(Tensor input, int dim = -1, bool descending = False{_SORT_OUT[name]})"))
        return (_wrap_dim(operator.index(dim), len(targs[0]._shape)), descending, stable, None)
    return prep


@defop(kernel="sorting_kernel_method_name", promote="value_index", grad_fn="SortBackward0", prep=_sort_prep("sort"),
       nout=2, out=True,
       result_type=return_types.sort, saves=())
def sort(input, dim=-1, descending=False, *, stable=False, axis=None):
    """Sort along ``dim``; always stable (PyTorch's CPU sort is too); NaN sorts as the largest."""
    return _gather_sorted(input, dim, descending)


@defop(kernel="sorting_kernel_method_name", promote="int64", prep=_sort_prep("argsort"), differentiable=False)
def argsort(input, dim=-1, descending=False, *, stable=False, axis=None):
    return _gather_sorted(input, dim, descending)[1]


_MEDIAN_BOOL = (NotImplementedError, "\"median_cpu\" not implemented for 'Bool'")
_MEDIAN_DIM_BOOL = (NotImplementedError, "\"median_out\" not implemented for 'Bool'")


@defop("median", kernel="median_cpu", grad_fn="MedianBackward0", prep=_sel_prep("median", True, _MEDIAN_BOOL),
       check_dtype=no_wide_unsigned, method=False,
       function=False)
def _median_all(input):
    """Lower median of all elements; nan if any is nan; ties share the gradient evenly."""
    flat = input.reshape(-1)
    n = flat.size
    floating = jnp.issubdtype(flat.dtype, jnp.inexact)
    if n == 0:
        return jnp.full((), jnp.nan if floating else 0, flat.dtype)
    m = jnp.sort(flat)[(n - 1) // 2]
    if not floating:
        return m
    m = jax.lax.stop_gradient(jnp.where(jnp.any(jnp.isnan(flat)), jnp.full((), jnp.nan, flat.dtype), m))
    eq = flat == m
    return m + jnp.sum(jnp.where(eq, flat - m, jnp.zeros_like(flat))) / jnp.sum(eq).astype(flat.dtype)


@defop("median_dim", kernel="median_out", promote="value_index", grad_fn="MedianBackward1", nout=2,
       check_dtype=no_wide_unsigned, result_type=return_types.median,
       prep=_sel_prep("median", bool_error=_MEDIAN_DIM_BOOL), method=False, function=False, saves=())
def _median_dim(input, dim, keepdim=False):
    """Lower median along ``dim`` and its index; a row with nan gives nan at its first nan."""
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    n = input.shape[dim]
    si = jnp.argsort(input, axis=dim, stable=True)
    shape = input.shape[:dim] + (1,) + input.shape[dim + 1:]
    pos = jnp.full(shape, (n - 1) // 2, jnp.int64)
    if jnp.issubdtype(input.dtype, jnp.inexact):
        nans = jnp.sum(jnp.isnan(input), axis=dim, keepdims=True, dtype=jnp.int64)
        pos = jnp.where(nans > 0, n - nans, pos)
    idx = jnp.take_along_axis(si, pos, axis=dim)
    v = jnp.take_along_axis(input, idx, axis=dim)
    return (v, idx) if keepdim else (jnp.squeeze(v, dim), jnp.squeeze(idx, dim))


# ---- Python routers: max / min / median ---------------------------------------------------------------
def _call(name, targs, sargs, out=None, out_name=None):
    """``out_name``: the op's name for ``write_out``'s out= checks (its autograd refusal, its dtype message); by
    default ``name``, less a ``_dim`` suffix (``median_dim``: the dim overload of torch's ``median``)."""
    r = _dispatch.dispatch(OPS[name], targs, sargs)
    # (a tuple: outs of its dtypes, torch's rule)
    return r if out is None else _dispatch.write_out(out, r, out_name or name.removesuffix("_dim"))


_MINMAX_FN = ("(Tensor input, *, Tensor out = None)", "(Tensor input, Tensor other, *, Tensor out = None)",
              "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)")
_MINMAX_METHOD = ("()\n      didn't match because some of the keywords were incorrect: dim",
                  "(Tensor other)\n      didn't match because some of the keywords were incorrect: dim",
                  "(int dim, bool keepdim = False)")


def _minmax(name: str, method: bool):
    pair = {"max": "maximum", "min": "minimum"}[name]
    builtin = getattr(builtins, name)

    def fn(input, dim=None, keepdim=False, *, other=None, axis=None, out=None):
        if not isinstance(input, Tensor):  # builtins shadowed in the package namespace stay usable
            return builtin(input, *(a for a in (dim,) if a is not None))
        dim = _ax(dim, axis)
        if isinstance(dim, Tensor):
            dim, other = None, dim
        if other is not None:
            return _call(pair, (input, other), (), out)
        if dim is None:
            return _call(name, (input,), (), out)
        if isinstance(dim, (tuple, list, builtins.float)):
            tn = type(dim).__name__
            if method:
                raise _invalid_combo(name, f"(dim={tn}, )", _MINMAX_METHOD)
            raise _invalid_combo(name, f"(Tensor, dim={tn})", _MINMAX_FN)
        if type(keepdim) is not bool:
            _not_bool(name, ("keepdim",), (keepdim,))
        return _call(name + "_dim", (input,), (dim, keepdim), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}(input)`` -> tensor; ``{name}(input, dim, keepdim=False)`` -> "
                  f"``torch.return_types.{name}(values, indices)``; ``{name}(input, other)`` -> {pair}.")
    return fn


def median(input: Tensor, dim=None, keepdim: bool = False, *, axis=None, out=None):
    """``median(input)`` -> lower median; ``median(input, dim)`` -> ``torch.return_types.median``."""
    if type(keepdim) is not bool:
        _not_bool("median", ("keepdim",), (keepdim,))
    dim = _ax(dim, axis)
    if dim is None:
        if out is not None:  # (the full reduction's overload has no out=: the argument parser's refusal)
            raise TypeError('median() missing 1 required positional arguments: "dim"')
        return _call("median", (input,), ())
    return _call("median_dim", (input,), (dim, keepdim), out)


# ---- torch.argsort / torch.count_nonzero: the out= their overloads refuse ------------------------------
def _got(args, kw, out):
    """PyTorch's parser's description of a refused call: the positional types, then ``out=`` and the keywords."""
    names = lambda v: "Tensor" if isinstance(v, Tensor) else type(v).__name__  # noqa: E731
    parts = [names(a) for a in args] + [f"out={names(out)}"] + [f"{k}={names(v)}" for k, v in reversed(kw.items())]
    return f"({', '.join(parts)}{'' if args else ', '})"


_ARGSORT_FN = ("(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)",
               "(Tensor input, int dim = -1, bool descending = False)")


def _argsort_fn(*args, out=None, **kw):
    """``torch.argsort``: only its ``stable=`` overload takes ``out=``."""
    if out is not None and "stable" not in kw:
        extra = [k for k in kw if k != "input"]
        why = f"\n      didn't match because some of the keywords were incorrect: {', '.join(['out'] + extra)}" \
            if len(args) > 1 or extra else ""
        raise _invalid_combo("argsort", _got(args, kw, out), (_ARGSORT_FN[0], _ARGSORT_FN[1] + why))
    return argsort(*args, out=out, **kw)


def _count_nonzero_fn(*args, out=None, **kw):
    """``torch.count_nonzero`` has no ``out=`` overload."""
    if out is not None:
        why = "" if len(args) > 1 or "dim" in kw else \
            "\n      didn't match because some of the keywords were incorrect: out"
        raise _invalid_combo("count_nonzero", _got(args, kw, out), (
            "(Tensor input, int dim = None)" + why, "(Tensor input, tuple of ints dim)" + why))
    return count_nonzero(*args, **kw)


for _fn, _n in ((_argsort_fn, "argsort"), (_count_nonzero_fn, "count_nonzero")):
    _fn.__name__ = _fn.__qualname__ = _n
    _fn.__module__ = "functorch_lite"


# ---- whole-tensor comparisons to a Python bool (a host read, like PyTorch's) ----------------------------
def _need_tensor(fn, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{fn}(): argument 'other' (position 2) must be Tensor, not {_type_name(other)}")


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> builtins.bool:
    """Whether ``|input - other| <= atol + rtol * |other|`` everywhere (broadcasting; both of one dtype)."""
    _need_tensor("allclose", other)
    rtol, atol = (_dispatch.scalar_arg(v, "allclose", k, "float") for v, k in ((rtol, "rtol"), (atol, "atol")))
    from .elementwise import isclose  # (its checks: one dtype, tolerances not negative)
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other) -> builtins.bool:
    """Same shape and equal elements (dtypes promote; NaN is never equal)."""
    _need_tensor("equal", other)
    if input._shape != other._shape:
        return False
    if input.dtype is other.dtype and input.dtype in D.FLOAT8:  # (torch's equal kernel has no float8 case)
        raise no_kernel("equal_notnan_cpu", input.dtype)
    from .elementwise import eq
    return builtins.bool(eq(input, other).all().item())


METHODS = {"max": _minmax("max", True), "min": _minmax("min", True), "median": median, "allclose": allclose,
           "equal": equal}
FUNCTIONS = {"max": _minmax("max", False), "min": _minmax("min", False), "median": median,
             "argsort": _argsort_fn, "count_nonzero": _count_nonzero_fn,
             "return_types": return_types, "allclose": allclose, "equal": equal, "nuclear_norm": nuclear_norm}
