"""More tensor math (PyTorch names and behaviour): logaddexp/logaddexp2, deg2rad/rad2deg, heaviside, gcd/lcm,
float_power; nansum/nanmean/nanmedian, msort, cummax/cummin, logcumsumexp, kthvalue, mode; trapezoid/trapz/
cumulative_trapezoid, dist, vdot, cov/corrcoef; addmv/addr/addbmm; and the in-place forms torch has for them
(plus ``addmm_``/``baddbmm_`` and the ``arc*_``/``negative_``/``clip_`` spellings of existing in-place ops).

Ops with their own grad_fn in PyTorch (``LogaddexpBackward0``, ``NansumBackward0``, ``CummaxBackward0``...) are
op-table rows; PyTorch's composites (``nanmean``, ``msort``, ``float_power``, ``trapezoid``, ``cov``...) are Python
functions over facade ops, so their grad_fn is the inner op's, as in PyTorch.

Tie semantics follow PyTorch's CPU kernels exactly: ``kthvalue`` replays its quickselect, ``mode`` libstdc++'s
``std::sort`` of (value, index) pairs (both on the host, through ``jax.pure_callback``, for rows with ties),
``nanmedian`` ranks by (value, index) and, for an all-NaN row, returns the index ``std::nth_element`` leaves first.

Example::

    >>> torch.cummax(torch.tensor([1., 3., 2.]), 0).indices
    tensor([0, 1, 1])
"""
from __future__ import annotations

import math
import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _promotion as P
from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor.tensor import Tensor, _wrap_dim
from ..autograd import graph as _graph
from . import _dispatch
from . import elementwise as E
from . import grad_overrides as _go
from . import reduction as R
from ._registry import OPS, _not_bool, _out_dtype_mismatch, defop, saves_crossed
from .._warn import user_stacklevel as _user_stacklevel
from ._dispatch import _type_name

_HALF = (jnp.float16, jnp.bfloat16)


def _acc(x):
    return x.astype(jnp.float32) if x.dtype in _HALF else x


def _isnan(x):
    return jnp.isnan(x) if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.zeros(x.shape, bool)


# ---- elementwise ---------------------------------------------------------------------------------------
def _lae_complex(a, b, log_base=None):
    m = jnp.where(jnp.real(a) >= jnp.real(b), a, b)
    o = jnp.where(jnp.real(a) >= jnp.real(b), b, a)
    return jnp.where(jnp.isinf(jnp.real(m)) & (m == o), m, m + jnp.log1p(jnp.exp(o - m)))


@defop(kernel="logaddexp_cpu", promote=E._tensors_only("float_only"), grad_fn="LogaddexpBackward0", tensors=2)
def logaddexp(input, other):
    """``log(exp(input) + exp(other))``, stable; floating/complex only (float16 computes in float32)."""
    if jnp.iscomplexobj(input):
        return _lae_complex(input, other)
    return _go.logaddexp(_acc(input), _acc(other)).astype(input.dtype)


def _lae2_bad(op, dt):
    if dt.category != D.FLOAT:
        raise no_kernel(op.kernel, dt)


@defop(kernel="logaddexp2_cpu", promote=E._tensors_only("elementwise"), check_dtype=_lae2_bad,
       grad_fn="Logaddexp2Backward0", tensors=2)
def logaddexp2(input, other):
    """``log2(2**input + 2**other)``, stable; real floating only."""
    return _go.logaddexp2(_acc(input), _acc(other)).astype(input.dtype)


def _angle_rule(op, sig, sargs):
    casts, outs = P.rule_float(op, sig, sargs)
    if outs[0].is_complex:
        raise RuntimeError(f"{op.name} is not supported for complex tensors.")
    return casts, outs


def _angle(name, factor, grad_fn):
    def impl(input):
        ot = jnp.float32 if input.dtype in _HALF else input.dtype  # torch's mul by a double scalar, in opmath
        return (input.astype(ot) * jnp.asarray(factor, ot)).astype(input.dtype)
    impl.__name__ = name
    impl.__doc__ = f"``torch.{name}``: integer/bool inputs give the default float dtype; complex raises."
    return defop(name, kernel="mul_cpu_reduced_float", promote=_angle_rule, grad_fn=grad_fn, inplace=True,
                 saves=())(impl)


deg2rad = _angle("deg2rad", math.pi / 180, "Deg2RadBackward0")
rad2deg = _angle("rad2deg", 180 / math.pi, "Rad2DegBackward0")


def _heaviside_prep(targs, sargs):
    a, b = targs
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):  # (the dtype rule refuses it: the parser's TypeError)
        return sargs
    if a.dtype.is_complex or b.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if a.dtype is not b.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return sargs


_NotImplementedNode = _graph.NotImplementedNode  # PyTorch's grad_fn of an op without a derivative (autograd.graph)


@jax.custom_vjp
def _no_derivative(x, v):
    return jnp.where(x == 0, v, (x > 0).astype(x.dtype))


def _nd_fwd(x, v):
    return _no_derivative(x, v), None


def _nd_bwd(res, ct):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


_no_derivative.defvjp(_nd_fwd, _nd_bwd)


@E._tensors_only
def _heaviside_rule(op, sig, sargs):
    R.no_wide_unsigned(op, sig[0][1])
    return P.rule_first_promote(op, sig, sargs)


@defop(kernel="heaviside_cpu", promote=_heaviside_rule, grad_fn="NotImplemented", tensors=2, prep=_heaviside_prep,
       saves=())
def heaviside(input, values):
    """``values`` where ``input == 0``, else ``input > 0`` (NaN gives 0); both of one dtype. Its result records a
    grad_fn whose backward raises, as PyTorch's (no derivative)."""
    if input.dtype == jnp.bool_:
        return jnp.where(input, True, values)
    if jnp.issubdtype(input.dtype, jnp.floating):
        return _no_derivative(input, values)
    return jnp.where(input == 0, values, (input > 0).astype(input.dtype))


def heaviside_(self, values):
    """``Tensor.heaviside_`` (a method only, as in PyTorch)."""
    _heaviside_prep((self, values), ())
    return _dispatch.inplace(OPS["heaviside"], (self, values), ())


def _int_only(op, dt):
    if dt.category != D.INT:
        raise no_kernel(op.kernel, dt)


def _c_gcd(a, b):
    """PyTorch's ``calc_gcd`` as C computes it: ``abs`` wrapping in the dtype (``abs(INT_MIN) == INT_MIN``), then
    Euclid with the truncating remainder (``lax.rem``; ``INT_MIN % -1 == 0`` in XLA). The magnitude of ``a``
    strictly decreases each step, so the loop ends (``jnp.gcd`` loops forever on a dtype's minimum)."""
    a, b = jnp.broadcast_arrays(a, b)
    a, b = jnp.abs(a), jnp.abs(b)

    def body(ab):
        x, y = ab
        nz = x != 0
        r = jax.lax.rem(y, jnp.where(nz, x, jnp.ones_like(x)))
        return jnp.where(nz, r, x), jnp.where(nz, x, y)

    _, g = jax.lax.while_loop(lambda ab: jnp.any(ab[0] != 0), body, (a, b))
    return g


@defop(kernel="gcd_cpu", promote=E._tensors_only("elementwise"), check_dtype=_int_only, tensors=2, inplace=True,
       differentiable=False)
def gcd(input, other):
    """Greatest common divisor (non-negative; ``gcd(0, 0) == 0``); integer dtypes only."""
    return _c_gcd(input, other)


@defop(kernel="lcm_cpu", promote=E._tensors_only("elementwise"), check_dtype=_int_only, tensors=2, inplace=True,
       differentiable=False)
def lcm(input, other):
    """``|a / gcd(a, b) * b|`` computed as PyTorch's kernel (C integer arithmetic, wrapping into the dtype)."""
    a, b = jnp.broadcast_arrays(input, other)
    g = _c_gcd(a, b)
    # C arithmetic: types narrower than int are promoted to int; int32/int64 wrap in their own width
    wide = jnp.int32 if jnp.dtype(a.dtype).itemsize < 4 else a.dtype
    safe = jnp.where(g == 0, jnp.ones_like(g), g).astype(wide)
    r = jnp.abs(jax.lax.mul(jax.lax.div(a.astype(wide), safe), b.astype(wide)))
    return jnp.where(g == 0, jnp.zeros((), wide), r).astype(a.dtype)


def _fp_dtype(base, exponent):
    cplx = (isinstance(base, Tensor) and base.dtype.is_complex) or isinstance(base, complex) or \
        (isinstance(exponent, Tensor) and exponent.dtype.is_complex) or isinstance(exponent, complex)
    return D.complex128 if cplx else D.float64


def _fp_operand(x, dt):
    if isinstance(x, Tensor):
        return x.to(dt)
    if isinstance(x, bool) or not isinstance(x, (int, float, complex)):
        raise TypeError(f"float_power(): argument must be Tensor or Number, not {_type_name(x)}")
    return complex(x) if dt.is_complex else float(x)


def float_power(input, exponent, *, out=None):
    """``pow`` in double precision (complex128 if either operand is complex), as PyTorch's composite."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__})")
    dt = _fp_dtype(input, exponent)
    if out is not None and out.dtype is not dt:
        raise RuntimeError(f"the output given to float_power has dtype {out.dtype.short} but the operation's result "
                           f"requires dtype {dt.short}")
    r = E.pow(_fp_operand(input, dt), _fp_operand(exponent, dt))
    return r if out is None else _dispatch.write_out(out, r)


def float_power_(self, exponent):
    """``Tensor.float_power_``: ``self`` must already have the result dtype (double or complex double)."""
    dt = _fp_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.short} but the operation's result "
                           f"requires dtype {dt.short}")
    return self.pow_(_fp_operand(exponent, dt))


# ---- scalar products with PyTorch's C++ Scalar overloads (MulBackward1 / DivBackward1) ------------------
@defop(promote=E._reduced_opmath("elementwise"), grad_fn="MulBackward1", tensors=2, method=False, function=False,
       saves=(), float8=E._float8_by_operands(None, "mul_cpu_reduced_float"), kernel="mul_cpu_reduced_float")
def _mul_scalar(input, other):
    """``at::mul(Tensor, Scalar)`` as PyTorch's composites call it (trapezoid)."""
    return input * other


@defop(promote=E._reduced_opmath("float"), grad_fn="DivBackward1", tensors=2, method=False, function=False,
       saves=(), float8=E._float8_by_operands("div_cpu", "div_cpu_reduced_float"), kernel="div_cpu")
def _div_scalar(input, other):
    """``at::div(Tensor, Scalar)`` as PyTorch's composites call it (trapezoid with ``x``)."""
    from ._rounding import true_div
    return true_div(input, other)


# ---- nan reductions -------------------------------------------------------------------------------------
def _nansum_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dt in D.FLOAT8 and sargs[2] is not None and sargs[2].category != D.FLOAT:  # (its nan_to_num runs first)
        raise no_kernel("nan_to_num", dt)
    return P.rule_sum(op, sig, sargs)  # (a float8 result: "nansum_cpu"; a float8 input sums cast to ``dtype=``)


def _nansum_prep(targs, sargs):
    dim, keepdim, dtype = sargs
    return (R._dims(dim, len(targs[0]._shape)), keepdim, dtype)


@jax.custom_vjp
def _nan_to_zero(x):
    return jnp.where(jnp.isnan(x), jnp.zeros((), x.dtype), x)


def _ntz_fwd(x):
    return _nan_to_zero(x), jnp.isnan(x)


def _ntz_bwd(isnan, ct):
    # PyTorch's ``grad * ~isnan(x)``: an inf/nan cotangent gives nan at NaN inputs (XLA folds a multiply by a
    # converted mask into a select, so the product with zero is written out)
    return (jnp.where(isnan, ct * jnp.zeros((), ct.dtype), ct),)


_nan_to_zero.defvjp(_ntz_fwd, _ntz_bwd)


@defop(kernel="nansum_cpu", promote=_nansum_rule, grad_fn="NansumBackward0", prep=_nansum_prep, float8=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero; integers and bool accumulate in int64; complex raises (as on PyTorch's CPU)."""
    x = _acc(input)
    if jnp.issubdtype(x.dtype, jnp.floating):
        x = _nan_to_zero(x)
    r = jnp.sum(x, axis=dim, keepdims=keepdim)
    return R._pos_zero(r) if R._one_term(input.shape, dim) else r


def nanmean(input, dim=None, keepdim=False, *, dtype=None, axis=None, out=None):
    """Mean of the non-NaN elements: PyTorch's composite ``nansum(...) / (~isnan(x)).sum(...)``."""
    dim = R._ax(dim, axis)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{input.dtype.short}")
    if isinstance(out, Tensor):  # (torch's nansum_out into ``out``: computed in its floating dtype)
        if dtype is None:
            if out.dtype.is_floating_point or out.dtype.is_complex:
                dtype = out.dtype
        elif out.dtype is not dtype:
            _out_dtype_mismatch("nanmean", dtype, out.dtype)
    factor = E.logical_not(OPS["isnan"].fn(input)).sum(dim, keepdim)
    r = E.div(nansum(input, dim, keepdim, dtype=dtype), factor)
    return r if out is None else _dispatch.write_out(out, r)


def _evenly_fwd(flat, mask, value):
    return value, (mask, jnp.sum(mask).astype(flat.dtype))


@jax.custom_vjp
def _evenly(flat, mask, value):
    """``value`` whose gradient goes evenly to the elements of ``flat`` where ``mask`` (PyTorch's
    ``evenly_distribute_backward``)."""
    return value


def _evenly_bwd(res, ct):
    mask, cnt = res
    return jnp.where(mask, ct / cnt, jnp.zeros((), ct.dtype)), None, jnp.zeros_like(ct)


_evenly.defvjp(_evenly_fwd, _evenly_bwd)


def _nanmed_prep(targs, sargs):
    t = targs[0]
    if t.dtype is D.bool:
        raise no_kernel("median_out" if sargs else "median_cpu", D.bool)
    if not sargs:
        return sargs
    if isinstance(sargs[0], (tuple, list)):
        raise TypeError(f"nanmedian(): argument 'dim' (position 2) must be int, not {_type_name(sargs[0])}")
    d = R._one_dim("nanmedian", sargs[0], len(t._shape))
    R._nonempty("median", t, (d,))
    return (d,) + tuple(sargs[1:])


@defop("nanmedian", kernel="median_cpu", grad_fn="NanmedianBackward0", prep=_nanmed_prep, method=False,
       check_dtype=R.no_wide_unsigned,
       function=False)
def _nanmedian_all(input):
    """Lower median of the non-NaN elements (NaN if all are); ties share the gradient evenly."""
    flat = input.reshape(-1)
    n = flat.size
    floating = jnp.issubdtype(flat.dtype, jnp.inexact)
    if n == 0:
        return jnp.full((), jnp.nan if floating else 0, flat.dtype)
    s = jnp.sort(flat)  # NaN last
    if not floating:
        return s[(n - 1) // 2]
    nn = n - jnp.sum(jnp.isnan(flat))
    m = jax.lax.stop_gradient(s[jnp.maximum(nn - 1, 0) // 2])
    mask = jnp.where(jnp.isnan(m), jnp.isnan(flat), flat == m)
    return _evenly(flat, mask, m)


_NTH_ALLNAN: dict = {}


def _allnan_index(n):
    """Where libstdc++'s ``std::nth_element(first, first, last)`` leaves position 0 when every element is
    equivalent (an all-NaN row of ``nanmedian``): its introselect's median-of-three swaps and partitions."""
    r = _NTH_ALLNAN.get(n)
    if r is None:
        idx = list(range(n))
        first, last = 0, n
        while last - first > 3:
            mid = first + (last - first) // 2
            idx[first], idx[mid] = idx[mid], idx[first]
            f, lo = first + 1, last
            while True:
                lo -= 1
                if not f < lo:
                    break
                idx[f], idx[lo] = idx[lo], idx[f]
                f += 1
            if f <= 0:
                first = f
            else:
                last = f
        r = _NTH_ALLNAN[n] = idx[0]
    return r


@defop("nanmedian_dim", kernel="median_out", promote="value_index", grad_fn="NanmedianBackward1", nout=2,
       check_dtype=R.no_wide_unsigned,
       prep=_nanmed_prep, method=False, function=False, saves=())
def _nanmedian_dim(input, dim, keepdim=False):
    """Lower median of the non-NaN values along ``dim`` and its index (ranked by (value, index))."""
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    n = input.shape[dim]
    si = jnp.argsort(input, axis=dim, stable=True)  # NaN last, ties in index order
    shape = input.shape[:dim] + (1,) + input.shape[dim + 1:]
    nn = n - jnp.sum(_isnan(input), axis=dim, keepdims=True, dtype=jnp.int64)
    pos = jnp.maximum(nn - 1, 0) // 2
    idx = jnp.take_along_axis(si, pos, axis=dim)
    idx = jnp.where(nn == 0, jnp.full(shape, _allnan_index(n), jnp.int64), idx).astype(jnp.int64)
    v = jnp.take_along_axis(input, idx, axis=dim)
    return (v, idx) if keepdim else (jnp.squeeze(v, dim), jnp.squeeze(idx, dim))


def _structseq(name):
    t = getattr(R.return_types, name, None)
    if t is None:
        t = R._structseq(name)
        setattr(R.return_types, name, t)
    return t


for _n in ("nanmedian", "cummax", "cummin", "kthvalue", "mode"):
    _structseq(_n)._out_type = _structseq(_n + "_out")  # (what an out= call returns: ``return_types.mode_out``)
OPS["nanmedian_dim"].result_type = R.return_types.nanmedian


def nanmedian(input, dim=None, keepdim=False, *, axis=None, out=None):
    """``nanmedian(input)`` -> the lower median ignoring NaN; ``nanmedian(input, dim)`` ->
    ``torch.return_types.nanmedian(values, indices)``."""
    if type(keepdim) is not bool:
        _not_bool("nanmedian", ("keepdim",), (keepdim,))
    dim = R._ax(dim, axis)
    if dim is None:
        return R._call("nanmedian", (input,), (), out)
    return R._call("nanmedian_dim", (input,), (dim, keepdim), out)


def msort(input, *, out=None):
    """``sort(input, dim=0).values`` (PyTorch's composite: SortBackward0)."""
    r = OPS["sort"].fn(input, 0)[0]
    return r if out is None else _dispatch.write_out(out, r)


# ---- scans: cummax / cummin / logcumsumexp ------------------------------------------------------------------
def _scan_prep(name):
    def prep(targs, sargs):
        return (R._one_dim(name, sargs[0], len(targs[0]._shape)),)
    return prep


def _cum_extreme(x, dim, later_wins):
    """Running max/min and the index of the latest extreme (ties and NaN: the later one), as PyTorch's."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    if x.size == 0:
        return x, jnp.zeros(x.shape, jnp.int64)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    idx = jnp.broadcast_to(jnp.arange(x.shape[dim], dtype=jnp.int64).reshape(shape), x.shape)

    def comb(a, b):
        take = later_wins(a[0], b[0])
        return jnp.where(take, b[0], a[0]), jnp.where(take, b[1], a[1])
    _, ind = jax.lax.associative_scan(comb, (jax.lax.stop_gradient(x), idx), axis=dim)
    return jnp.take_along_axis(x, ind, axis=dim), ind


def _later_max(a, b):
    return _isnan(b) | (~_isnan(a) & (b >= a))


def _later_min(a, b):
    return _isnan(b) | (~_isnan(a) & (b <= a))


@defop("cummax", kernel="cummax_cpu", promote="value_index", grad_fn="CummaxBackward0", nout=2,
       check_dtype=R.no_wide_unsigned,
       prep=_scan_prep("cummax"), method=False, function=False, saves=())
def _cummax(input, dim):
    return _cum_extreme(input, dim, _later_max)


@defop("cummin", kernel="cummin_cpu", promote="value_index", grad_fn="CumminBackward0", nout=2,
       check_dtype=R.no_wide_unsigned,
       prep=_scan_prep("cummin"), method=False, function=False, saves=())
def _cummin(input, dim):
    return _cum_extreme(input, dim, _later_min)


OPS["cummax"].result_type = R.return_types.cummax
OPS["cummin"].result_type = R.return_types.cummin


def cummax(input, dim, *, axis=None, out=None):
    """``torch.return_types.cummax(values, indices)``: running maximum along ``dim``."""
    return R._call("cummax", (input,), (dim if axis is None else axis,), out, "cummax")


def cummin(input, dim, *, axis=None, out=None):
    """``torch.return_types.cummin(values, indices)``: running minimum along ``dim``."""
    return R._call("cummin", (input,), (dim if axis is None else axis,), out, "cummin")


@defop(kernel="logcumsumexp_out_cpu", promote="float_only", grad_fn="LogcumsumexpBackward0",
       prep=_scan_prep("logcumsumexp"))
def logcumsumexp(input, dim):
    """Running ``log(sum(exp(x)))`` along ``dim``, stable; floating/complex only (float16 in float32)."""
    if input.ndim == 0 or input.size == 0:
        return input
    if jnp.iscomplexobj(input):
        return jax.lax.associative_scan(_lae_complex, input, axis=dim)
    return _go.cumlogsumexp(_acc(input), dim).astype(input.dtype)  # (torch's backward: grad_overrides)


# ---- kthvalue / mode: PyTorch's CPU index choice on ties, replayed on the host ------------------------------
def _gt_nan(x, y):
    return (x != x and y == y) or x > y


def _quickselect_index(row, k):
    """Index PyTorch's ``kthvalue`` returns: its Sedgewick quickselect (NaN largest) on (value, index) pairs."""
    arr = list(row)
    ix = list(range(len(arr)))
    gt = _gt_nan

    def sw(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        ix[i], ix[j] = ix[j], ix[i]
    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                sw(lo, hi)
            break
        sw((lo + hi) >> 1, lo + 1)
        if gt(arr[lo + 1], arr[hi]):
            sw(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            sw(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            sw(lo + 1, lo)
        i, j, piv = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(piv, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], piv):
                j -= 1
            if j < i:
                break
            sw(i, j)
        sw(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return ix[k]


def _has_ties(rows):
    s = np.sort(rows, axis=1)
    tie = np.any(s[:, 1:] == s[:, :-1], axis=1) if rows.shape[1] > 1 else np.zeros(len(rows), bool)
    if np.issubdtype(rows.dtype, np.inexact) or rows.dtype.kind == "V" or str(rows.dtype) == "bfloat16":
        tie |= np.sum(rows != rows, axis=1) > 1
    return tie


def _kth_host(rows, k):
    rows = np.asarray(rows)
    n = rows.shape[1]
    out = np.argsort(rows, axis=1, kind="stable")[:, k].astype(np.int64)  # exact where a row has no ties
    for r in np.nonzero(_has_ties(rows))[0]:
        out[r] = _quickselect_index(rows[r].tolist() if rows.dtype.kind != "V" else rows[r].astype(float).tolist(), k)
    del n
    return out


def _std_sort(pairs):
    """libstdc++'s ``std::sort`` (introsort, threshold 16, heapsort fallback, final insertion sort) of
    ``[value, index]`` pairs compared by value with ``<``: PyTorch's CPU ``mode`` sorts so."""
    a = pairs
    lt = lambda x, y: x[0] < y[0]  # noqa: E731

    def adjust_heap(first, hole, length, value):
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if lt(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and lt(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def heapsort(first, last):
        length = last - first
        if length >= 2:
            parent = (length - 2) // 2
            while True:
                adjust_heap(first, parent, length, a[first + parent])
                if parent == 0:
                    break
                parent -= 1
        while last - first > 1:
            last -= 1
            value = a[last]
            a[last] = a[first]
            adjust_heap(first, 0, last - first, value)

    def median_to_first(result, x, y, z):
        if lt(a[x], a[y]):
            m = y if lt(a[y], a[z]) else (z if lt(a[x], a[z]) else x)
        elif lt(a[x], a[z]):
            m = x
        elif lt(a[y], a[z]):
            m = z
        else:
            m = y
        a[result], a[m] = a[m], a[result]

    def partition(first, last):
        mid = first + (last - first) // 2
        median_to_first(first, first + 1, mid, last - 1)
        f, lo, piv = first + 1, last, first
        while True:
            while lt(a[f], a[piv]):
                f += 1
            lo -= 1
            while lt(a[piv], a[lo]):
                lo -= 1
            if not f < lo:
                return f
            a[f], a[lo] = a[lo], a[f]
            f += 1

    def introsort(first, last, depth):
        while last - first > 16:
            if depth == 0:
                heapsort(first, last)
                return
            depth -= 1
            cut = partition(first, last)
            introsort(cut, last, depth)
            last = cut

    def linear_insert(i):
        val = a[i]
        j = i - 1
        while j >= 0 and lt(val, a[j]):
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = val

    def insertion_sort(first, last):
        for i in range(first + 1, last):
            if lt(a[i], a[first]):
                val = a[i]
                a[first + 1:i + 1] = a[first:i]
                a[first] = val
            else:
                linear_insert(i)
    n = len(a)
    if n:
        introsort(0, n, 2 * (n.bit_length() - 1))
        if n > 16:
            insertion_sort(0, 16)
            for i in range(16, n):
                linear_insert(i)
        else:
            insertion_sort(0, n)
    return a


def _mode_row(row):
    """(value position, index) of PyTorch's CPU mode of one row: the first longest run of the sorted pairs,
    reported at the run's last element."""
    e = _std_sort([[v, i] for i, v in enumerate(row)])
    best, bi, freq = 0, 0, 0
    for i in range(len(e)):
        freq += 1
        if i == len(e) - 1 or e[i][0] != e[i + 1][0]:
            if freq > best:
                best, bi = freq, e[i][1]
            freq = 0
    return bi


def _mode_host(rows):
    rows = np.asarray(rows)
    n = rows.shape[1]
    out = np.zeros(rows.shape[0], np.int64)
    nan = np.any(rows != rows, axis=1)
    for r in range(rows.shape[0]):
        row = rows[r]
        if n <= 16 and not nan[r]:  # insertion sort only: stable, so the last occurrence of the smallest mode
            vals, counts = np.unique(row, return_counts=True)
            out[r] = np.nonzero(row == vals[np.argmax(counts)])[0][-1]
        else:
            out[r] = _mode_row(row.astype(float).tolist() if row.dtype.kind == "V" else row.tolist())
    return out


def _host_index(x, dim, keepdim, fn):
    """Run ``fn(rows (m, n)) -> (m,) int64`` on the host over ``x``'s ``dim`` (a ``jax.pure_callback``)."""
    xm = jnp.moveaxis(jax.lax.stop_gradient(x), dim, -1)
    lead = xm.shape[:-1]
    rows = xm.reshape(-1, xm.shape[-1])
    if rows.dtype == jnp.bfloat16:
        rows = rows.astype(jnp.float32)  # exact; numpy handles it natively
    idx = jax.pure_callback(lambda r: np.asarray(fn(np.asarray(r)), np.int64),
                            jax.ShapeDtypeStruct((rows.shape[0],), jnp.int64), rows, vmap_method="sequential")
    idx = jnp.expand_dims(idx.reshape(lead), dim)
    v = jnp.take_along_axis(x, idx, axis=dim)
    return (v, idx) if keepdim else (jnp.squeeze(v, dim), jnp.squeeze(idx, dim))


def _kth_prep(targs, sargs):
    k, dim, keepdim = sargs
    t = targs[0]
    if isinstance(k, Tensor) and k.numel() == 1 and k.dtype.category <= D.INT and k.dtype is not D.bool:
        k = operator.index(k)  # (an integer tensor of one element passes torch's ``int`` parser)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"kthvalue(): argument 'k' (position 2) must be int, not {_type_name(k)}")
    if t.dtype is D.bool:
        raise no_kernel("kthvalue_cpu", D.bool)
    nd = len(t._shape)
    d = R._one_dim("kthvalue", dim, nd)
    R._nonempty("kthvalue", t, (d,))
    if not 0 < k <= (t._shape[d] if nd else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return (int(k), d, keepdim)


@defop("kthvalue", kernel="kthvalue_cpu", promote="value_index", grad_fn="KthvalueBackward0", nout=2,
       check_dtype=R.no_wide_unsigned,
       prep=_kth_prep, method=False, function=False, saves=())
def _kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest along ``dim`` (NaN largest) and the index PyTorch's quickselect returns."""
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    return _host_index(input, dim, keepdim, lambda rows: _kth_host(rows, k - 1))


def _mode_prep(targs, sargs):
    dim, keepdim = sargs
    t = targs[0]
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"mode(): argument 'dim' (position 2) must be int, not {_type_name(dim)}")
    d = _wrap_dim(operator.index(dim), len(t._shape))
    R._nonempty("mode", t, (d,))
    return (d, keepdim)


@defop("mode", kernel="mode_cpu", promote="value_index", grad_fn="ModeBackward0", nout=2, prep=_mode_prep,
       check_dtype=R.no_wide_unsigned,
       method=False, function=False, saves=(), float8=False)
def _mode(input, dim=-1, keepdim=False):
    """Most frequent value along ``dim`` (the smallest such) and the index PyTorch's CPU kernel reports."""
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    return _host_index(input, dim, keepdim, _mode_host)


OPS["kthvalue"].result_type = R.return_types.kthvalue
OPS["mode"].result_type = R.return_types.mode


def kthvalue(input, k, dim=-1, keepdim=False, *, axis=None, out=None):
    """``torch.return_types.kthvalue(values, indices)``: the ``k``-th smallest element along ``dim``."""
    if type(keepdim) is not bool:
        _not_bool("kthvalue", ("keepdim",), (keepdim,))
    return R._call("kthvalue", (input,), (k, dim if axis is None else axis, keepdim), out)


def mode(input, dim=-1, keepdim=False, *, axis=None, out=None):
    """``torch.return_types.mode(values, indices)``: the most frequent value along ``dim``."""
    if type(keepdim) is not bool:
        _not_bool("mode", ("keepdim",), (keepdim,))
    return R._call("mode", (input,), (dim if axis is None else axis, keepdim), out)


# ---- integration (PyTorch's composites, Integration.cpp) -------------------------------------------------
def _zeros_except(y, dim):
    from .creation import zeros
    return zeros(tuple(s for i, s in enumerate(y.shape) if i != dim), dtype=y.dtype, device=y.device)


def _dx_number(name, dx):
    if isinstance(dx, Tensor):
        raise TypeError(f"{name}(): argument 'dx' must be Number, not Tensor")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _x_spacing(name, y, x, dim):
    if y.dtype is D.bool or x.dtype is D.bool:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        x = x.view(sizes)
    elif x.dim() < y.dim():
        x = x.view((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    return x.narrow(dim, 1, x.shape[dim] - 1) - x.narrow(dim, 0, x.shape[dim] - 1)


def _sides(y, dim):
    n = y.shape[dim]
    if n == 0:  # (an empty input: an empty result, as torch's)
        return y, y
    return y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Trapezoid rule along ``dim`` with sample points ``x`` or a constant spacing ``dx`` (default 1)."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - got both `x` and `dx`")
    dim = _wrap_dim(operator.index(dim), y.dim())
    if y.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if y.shape[dim] == 0:
        return _zeros_except(y, dim)
    if x is not None:
        d = _x_spacing("trapezoid", y, x, dim)
        left, right = _sides(y, dim)
        return _div_scalar(((left + right) * d).sum(dim), 2.0)
    if y.dtype is D.bool:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    h = _dx_number("trapezoid", 1.0 if dx is None else dx)
    ends = _mul_scalar(y.select(dim, 0) + y.select(dim, -1), 0.5)
    return _mul_scalar(y.sum(dim) - ends, h)


def trapz(y, x=None, *, dx=None, dim=-1):
    """``torch.trapz``: the older spelling of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Running trapezoid rule along ``dim`` (one element fewer than ``y`` along it)."""
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments - got both `x` and "
                        "`dx`")
    if y.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    dim = _wrap_dim(operator.index(dim), y.dim())
    if x is not None:
        d = _x_spacing("cumulative_trapezoid", y, x, dim)
        left, right = _sides(y, dim)
        return _div_scalar(((left + right) * d).cumsum(dim), 2.0)
    if y.dtype is D.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    h = _dx_number("cumulative_trapezoid", 1.0 if dx is None else dx)
    left, right = _sides(y, dim)
    return _mul_scalar(left + right, h / 2.0).cumsum(dim)


# ---- dist / vdot ---------------------------------------------------------------------------------------
def _dist_rule(op, sig, sargs):
    casts, outs = E._sub_rule(op, sig, sargs)
    r = outs[0]
    if r.category < D.FLOAT:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {r.short} instead.")
    return casts, (r.to_real() if r.is_complex else r,)


def _dist_prep(targs, sargs):
    p = sargs[0]
    if isinstance(p, Tensor):
        p = p.item()
    return (float(p),)


@defop(kernel="add_stub", promote=E._tensors_only(_dist_rule), broadcast=True, grad_fn="DistBackward0", tensors=2,
       prep=_dist_prep, out=False)
def dist(input, other, p=2):
    """``norm(input - other, p)`` over all elements (broadcasting); gradient 0 where the distance is 0."""
    diff = _acc(input) - _acc(other)
    d = _go.abs(diff) if jnp.issubdtype(diff.dtype, jnp.floating) else jnp.abs(diff)  # gradient 0 at 0
    if p == math.inf:
        return jnp.max(d)
    if p == -math.inf:
        return jnp.min(d)
    if p == 0:
        return jnp.sum((d != 0).astype(d.dtype))
    if p == 1:
        return jnp.sum(d)
    if jnp.issubdtype(diff.dtype, jnp.floating):  # (torch's norm_backward on the difference: to second order)
        return _go.vnorm(diff, p)
    return _go.pnorm(d, p)


def _vdot_check(targs, sargs):
    from .linalg import _dot_check
    _dot_check(targs, sargs)


@defop(required=True, kernel="dot", promote="matmul", grad_fn="VdotBackward0", tensors=2, check=_vdot_check,
       device_check=("self", "other"))
def vdot(input, other):
    """``sum(conj(input) * other)`` of two 1-D tensors of one dtype."""
    return jnp.vdot(input, other)


# ---- cov / corrcoef (PyTorch's composites, Correlation.cpp) ----------------------------------------------
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the rows (variables) of ``input`` over its columns (observations)."""
    from .creation import tensor as _tensor
    if isinstance(correction, Tensor):  # (torch's int parameter: a 0-d tensor its number)
        correction = _dispatch.scalar_arg(correction, "cov", "correction", "int")
    if input.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype is D.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input if input.dim() == 2 else input.view(1, -1)
    nobs = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        if w.dim() > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but got fweights with "
                               f"{w.dim()} dimensions")
        if w.dtype.category != D.INT:
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with "
                               f"{w.dtype.short} dtype")
        if w.numel() != nobs:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are observations in the "
                               f"input but got {w.numel()} != {nobs}")
        if nobs and not bool(w.min().ge(0).item()):
            raise RuntimeError("cov(): fweights cannot be negative")
    if aweights is not None:
        aw = aweights
        if aw.dim() > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but got aweights with "
                               f"{aw.dim()} dimensions")
        if not aw.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{aw.dtype.short} dtype")
        if aw.numel() != nobs:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are observations in the "
                               f"input but got {aw.numel()} != {nobs}")
        if nobs and not bool(aw.min().ge(0).item()):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aw if w is None else w * aw
    w_sum = w.sum() if w is not None else _tensor(nobs, dtype=D.int64, device=x.device)
    if w is not None and not bool(w_sum.ne(0).item()):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is None:
        norm = _tensor(nobs - correction, dtype=D.int64, device=x.device)
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    elif fweights is None and nobs == 1 and correction == 1:
        norm = _tensor(0, dtype=D.int64, device=x.device)
    else:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(norm.le(0).item()):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                      "Correlation.cpp:129.)", UserWarning, stacklevel=_user_stacklevel())
        norm = norm.mul(0)
    if nobs == 1 and (fweights is None) != (aweights is None):
        x = x.mul(0)
        if x.dtype.category <= D.INT:
            x = x.to(D.float32)
    else:
        x = x - avg.unsqueeze(1)
    c = OPS["mm"].fn(x, (x * w if w is not None else x).t().conj())
    return OPS["true_divide"].fn(c, norm).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (clipped to [-1, 1] as NumPy)."""
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    sd = (d.real if d.is_complex() else d).sqrt()
    c = c / sd.view(-1, 1)
    c = c / sd.view(1, -1)
    if c.is_complex():
        return OPS["complex"].fn(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ---- addmv / addr / addbmm -------------------------------------------------------------------------------
def _coef_check(r, beta, alpha):
    for name, v in (("beta", beta), ("alpha", alpha)):
        if r.category <= D.INT and isinstance(v, float):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")


def _coef(v, dt):
    if dt == jnp.bool_:
        return jnp.asarray(bool(v))
    if jnp.issubdtype(dt, jnp.integer):
        return jnp.asarray(int(v), dt)
    return jnp.asarray(v, dt)


def _affine(inp, prod, beta, alpha):
    """``beta * input + alpha * prod`` with PyTorch's conventions: beta == 0 ignores ``input`` (NaN included);
    bool results are logical."""
    dt = prod.dtype
    if dt == jnp.bool_:
        p = prod & _coef(alpha, dt)
        return p if beta == 0 else (inp & _coef(beta, dt)) | p
    p = prod if alpha == 1 else prod * _coef(alpha, dt)
    if beta == 0:
        return jnp.broadcast_to(p, jnp.broadcast_shapes(inp.shape, p.shape))
    return p + (inp if beta == 1 else inp * _coef(beta, dt))


def _addmv_rule(op, sig, sargs):
    dts = [s[1] for s in sig]
    if not dts[0] is dts[1] is dts[2]:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {dts[0].short}, {dts[1].short}, "
                           f"and {dts[2].short}")
    if dts[0] is D.bool or dts[0] in D.FLOAT8:
        raise no_kernel(op.kernel, dts[0])
    _coef_check(dts[0], *sargs)
    return (None,) * 3, (dts[0],)


def _addmv_check(targs, sargs):
    inp, m, v = targs
    if len(m._shape) != 2 or len(v._shape) != 1 or len(inp._shape) > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(inp._shape)}, {len(m._shape)}, "
                           f"{len(v._shape)}")
    n = inp._shape[0] if inp._shape else 1
    if m._shape[1] != v._shape[0] or (n != m._shape[0] and n != 1):
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({m._shape[0]}x{m._shape[1]}), vec ({v._shape[0]})")


@defop(required=True, kernel="addmv_impl_cpu", promote=E._tensors_only(_addmv_rule), broadcast=False,
       grad_fn="AddmvBackward0", tensors=3, check=_addmv_check, prep=_dispatch.scalars_prep("addmv", "beta", "alpha"),
       saves=saves_crossed(1, 2))  # (on no autocast list)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``; the three tensors of one dtype."""
    return _affine(input, jnp.matmul(mat, vec), beta, alpha)


def _addr_rule(op, sig, sargs):
    casts, outs = P.rule_elementwise(op, sig, sargs)
    _coef_check(outs[0], *sargs)
    return casts, outs


def _addr_check(targs, sargs):
    from ._dispatch import broadcast_shapes
    inp, a, b = targs
    for name, v in (("vec1", a), ("vec2", b)):
        if len(v._shape) != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {len(v._shape)}-D")
    target = (a._shape[0], b._shape[0])
    s = inp._shape
    if len(s) > 2:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(s)}}}, size={list(target)}): the number of sizes "
                           f"provided ({len(target)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(s)})")
    for i in range(1, len(s) + 1):
        if s[-i] != 1 and s[-i] != target[-i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                               f"({s[-i]}) at non-singleton dimension {2 - i}.  Target sizes: {list(target)}.  "
                               f"Tensor sizes: {list(s)}")
    del broadcast_shapes


@defop(required=True, kernel="addr_cpu", promote=E._tensors_only(_addr_rule), broadcast=False, grad_fn="AddrBackward0",
       tensors=3, check=_addr_check, prep=_dispatch.scalars_prep("addr", "beta", "alpha"))
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (operands promote; bool is logical)."""
    return _affine(input, jnp.outer(vec1, vec2), beta, alpha)


def _addbmm_rule(op, sig, sargs):
    dts = [s[1] for s in sig]
    for d in dts[1:]:
        if d is not dts[0]:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {dts[0].short} and {d.short}")
    if dts[0] is D.bool:
        raise no_kernel("addmm_impl_cpu_", D.bool)
    _coef_check(dts[0], *sargs)
    return (None,) * 3, (dts[0],)


def _addbmm_check(targs, sargs):
    inp, a, b = targs
    for t in (a, b):
        if len(t._shape) != 3:
            _wrap_dim(2, len(t._shape))
            raise RuntimeError(f"batch1 must be a 3D tensor, got {len(t._shape)}D")
    if a._shape[0] != b._shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {a._shape[0]} and "
                           f"{b._shape[0]}")
    if a._shape[2] != b._shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({a._shape[1]}x{a._shape[2]} and "
                           f"{b._shape[1]}x{b._shape[2]})")
    _dispatch.broadcast_shapes(inp._shape, (a._shape[1], b._shape[2]))


@defop(required=True, promote=E._tensors_only(_addbmm_rule), broadcast=False, grad_fn="AddbmmBackward0", tensors=3,
       check=_addbmm_check, float8=True, kernel="addmm_impl_cpu_", prep=_dispatch.scalars_prep("addbmm", "beta", "alpha"),
       autocast="lower")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``; the three tensors of one dtype."""
    if jnp.dtype(batch1.dtype).itemsize == 1 and jnp.issubdtype(batch1.dtype, jnp.floating):  # float8
        s = jnp.einsum("bij,bjk->ik", batch1.astype(jnp.float32), batch2.astype(jnp.float32))
        i = input.astype(jnp.float32)
        r = _affine(i, s, beta, alpha)
        return D.cast_array(r, D.float32, D.from_numpy_dtype(batch1.dtype))
    if batch1.shape[0] == 0:
        return _affine(input, jnp.zeros((batch1.shape[1], batch2.shape[2]), batch1.dtype), beta, alpha)
    # PyTorch's CPU kernel: one addmm per batch into the result (beta only in the first), each rounded to the dtype
    from .linalg import _add_product
    first = _add_product(input, batch1[0], batch2[0], beta, alpha)
    if batch1.shape[0] == 1:
        return first
    r, _ = jax.lax.scan(lambda r, ab: (_add_product(r, ab[0], ab[1], 1, alpha), None), first,
                        (batch1[1:], batch2[1:]))
    return r


# ---- in-place forms ------------------------------------------------------------------------------------
def _inplace_shape(name, self, shape):
    if tuple(shape) != tuple(self._shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self._shape)} and output tensor size "
                           f"{list(shape)} should match")


def addmv_(self, mat, vec, *, beta=1, alpha=1):
    """``self = beta * self + alpha * (mat @ vec)``."""
    if isinstance(mat, Tensor) and len(mat._shape) == 2:
        _inplace_shape("addmv_", self, mat._shape[:1])
    return _dispatch.inplace(OPS["addmv"], (self, mat, vec), (beta, alpha))


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """``self = beta * self + alpha * outer(vec1, vec2)`` (a method only, as in PyTorch)."""
    return _dispatch.inplace(OPS["addr"], (self, vec1, vec2), (beta, alpha))


def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """``self = beta * self + alpha * sum_b(batch1[b] @ batch2[b])`` (a method only, as in PyTorch)."""
    return _dispatch.inplace(OPS["addbmm"], (self, batch1, batch2), (beta, alpha))


def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """``self = beta * self + alpha * (mat1 @ mat2)`` (a method only, as in PyTorch)."""
    return _dispatch.inplace(OPS["addmm"], (self, mat1, mat2), (beta, alpha))


def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """``self = beta * self + alpha * (batch1 @ batch2)`` (a method only, as in PyTorch)."""
    return _dispatch.inplace(OPS["baddbmm"], (self, batch1, batch2), (beta, alpha))


_ALIAS_INPLACE = {"negative_": "neg", "clip_": "clamp", "arccos_": "acos", "arcsin_": "asin", "arctan_": "atan",
                  "arccosh_": "acosh", "arcsinh_": "asinh", "arctanh_": "atanh"}


METHODS = {
    "heaviside_": heaviside_, "float_power": float_power, "float_power_": float_power_, "nanmean": nanmean,
    "nanmedian": nanmedian, "msort": msort, "cummax": cummax, "cummin": cummin, "kthvalue": kthvalue,
    "mode": mode, "cov": cov, "corrcoef": corrcoef, "addmv_": addmv_, "addr_": addr_, "addbmm_": addbmm_,
    "addmm_": addmm_, "baddbmm_": baddbmm_,
}
FUNCTIONS = {
    "float_power": float_power, "nanmean": nanmean, "nanmedian": nanmedian, "msort": msort, "cummax": cummax,
    "cummin": cummin, "kthvalue": kthvalue, "mode": mode, "trapezoid": trapezoid, "trapz": trapz,
    "cumulative_trapezoid": cumulative_trapezoid, "cov": cov, "corrcoef": corrcoef, "addmv_": addmv_,
    **{a: OPS[t].fn_inplace for a, t in _ALIAS_INPLACE.items()},
}
