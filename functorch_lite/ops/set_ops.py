"""Set, counting, searching and quantile ops: ``unique``, ``unique_consecutive``, ``bincount``, ``histc``,
``quantile`` / ``nanquantile``, ``searchsorted`` / ``bucketize``, and ``Tensor.fill_diagonal_``.

``unique`` / ``unique_consecutive`` (output length depends on the values) and ``bincount`` (length = max + 1) read
values on the host: eager only, and inside ``functorch_lite.compile`` they raise the data-dependent error (a graph
break: the call runs eagerly), like ``nonzero``. ``histc``, ``quantile`` and ``searchsorted`` have static output
shapes and compile; their value checks (a non-finite histogram range, q outside [0, 1], a sorter index out of
range) are host reads that only run eagerly. None of these ops is differentiable except ``quantile``; ``unique``'s
values of an input that requires grad carry PyTorch's grad_fn (``Unique2Backward0``, ``UniqueDimBackward0``,
``UniqueConsecutiveBackward0``) whose backward raises NotImplementedError, as PyTorch's (the weighted
``bincount``'s simply does not require grad).

Example::

    >>> torch.unique(torch.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    >>> torch.bucketize(torch.tensor([2.0, 6.0]), torch.tensor([1.0, 3.0, 5.0]))
    tensor([1, 3])
"""
from __future__ import annotations

import functools
import math
import numbers
import operator

import jax.numpy as jnp
import numpy as np

from .. import _promotion as P
from .. import dtypes as D
from . import _deferred
from . import grad_overrides as _go
from .._promotion import no_kernel
from .._warn import warn_once
from .._tensor.tensor import Tensor, _wrap_dim
from ._dispatch import _type_name, autocast_args, data_dependent_error, dispatch, write_out
from ._registry import OPS, _not_bool, defop
from ._rounding import true_div
from .reduction import _invalid_combo
from .fft_ops import int_arg
from .gather_scatter import _vmap_dynamic
from .indexing import _Tracer, _host_tensor, _out, _view

_INTEGRAL = (D.uint8, D.int8, D.int16, D.int32, D.int64)


# ---- unique / unique_consecutive -----------------------------------------------------------------------------------
def _unique_prep(targs, sargs):
    x = targs[0]
    dim = sargs[0]
    if dim is None:
        return sargs
    if not x._shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, len(x._shape))
    if any(s == 0 for k, s in enumerate(x._shape) if k != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    return (d,) + sargs[1:]


def _unique_check(targs, sargs):
    if isinstance(targs[0]._array, _Tracer):
        raise data_dependent_error("torch.unique (output shape depends on values)", targs[0]._array,
                                   vmap=_vmap_dynamic("aten::_unique2"))


def _rows(x, dim):
    """``x`` as (n, rest) slices along ``dim`` (dim None: the flattened elements)."""
    if dim is None:
        return x.reshape(-1, 1)
    return jnp.moveaxis(x, dim, 0).reshape(x.shape[dim], math.prod(x.shape) // max(x.shape[dim], 1))


def _from_rows(rows, x, dim):
    if dim is None:
        return rows.reshape(-1)
    moved = jnp.moveaxis(x, dim, 0).shape
    return jnp.moveaxis(rows.reshape((rows.shape[0],) + moved[1:]), 0, dim)


def _unique_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category == D.COMPLEX or dt in D.FLOAT8:
        raise no_kernel("unique_dim" if sargs[0] is not None and not sargs[1] else "unique", dt)
    return (None,), (dt, D.int64, D.int64)


def _std_sort(idx: list, less) -> None:
    """libstdc++'s ``std::sort`` (introsort, then insertion sort) of ``idx`` in place, as torch's CPU kernel runs it:
    with a comparator that is no strict weak order (rows with NaN) its result depends on these exact steps."""
    def insertion(first, last, guarded=True):
        for i in range(first + 1 if guarded else first, last):
            v = idx[i]
            if guarded and less(v, idx[first]):
                idx[first + 1:i + 1] = idx[first:i]
                idx[first] = v
                continue
            j = i
            while j > 0 and less(v, idx[j - 1]):
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = v

    def median_to_first(r, a, b, c):
        if less(idx[a], idx[b]):
            m = b if less(idx[b], idx[c]) else c if less(idx[a], idx[c]) else a
        else:
            m = a if less(idx[a], idx[c]) else c if less(idx[b], idx[c]) else b
        idx[r], idx[m] = idx[m], idx[r]

    def loop(first, last, depth):
        while last - first > 16:
            if depth == 0:  # (libstdc++'s heapsort fallback; a stable sort stands in for it)
                idx[first:last] = sorted(idx[first:last], key=functools.cmp_to_key(
                    lambda a, b: -1 if less(a, b) else 1 if less(b, a) else 0))
                return
            depth -= 1
            median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            lo, hi, pivot = first + 1, last, idx[first]
            while True:
                while lo < last - 1 and less(idx[lo], pivot):
                    lo += 1
                hi -= 1
                while hi > first and less(pivot, idx[hi]):
                    hi -= 1
                if not lo < hi:
                    break
                idx[lo], idx[hi] = idx[hi], idx[lo]
                lo += 1
            loop(lo, last, depth)
            last = lo

    n = len(idx)
    if n > 1:
        loop(0, n, 2 * (n.bit_length() - 1))
        if n > 16:
            insertion(0, 16)
            insertion(16, n, guarded=False)
        else:
            insertion(0, n)


def _unique_rows_nan(rows):
    """``unique(dim=...)`` of slices holding NaN, as torch's CPU kernel: its lexicographic ``<`` sort (a NaN compares
    neither way: such rows stay about where they are), then neighbours merged when all their elements are equal."""
    h = np.asarray(rows, np.float64)

    def less(a, b):
        for x, y in zip(h[a], h[b]):
            if x < y:
                return True
            if x > y:
                return False
        return False

    idx = list(range(h.shape[0]))
    _std_sort(idx, less)
    s = h[idx]
    change = np.any(s[1:] != s[:-1], axis=1)  # (a NaN is never equal)
    starts = np.concatenate([[0], np.flatnonzero(change) + 1])
    inverse = np.empty(len(idx), np.int64)
    inverse[idx] = np.concatenate([[0], np.cumsum(change)])
    counts = np.diff(np.concatenate([starts, [len(idx)]]))
    return rows[jnp.asarray(np.asarray(idx)[starts])], inverse, counts


@defop("unique", promote=_unique_rule, nout=3, eager=True,
       differentiable=False, prep=_unique_prep, check=_unique_check, method=False, function=False, kernel="unique_cpu")
def _unique(input, dim, consecutive):
    """(values, inverse, counts): the distinct elements (``dim``: slices) sorted ascending, each NaN its own
    value; ``consecutive``: only runs of equal neighbours are merged (input order kept). Eager (concrete sizes)."""
    x = jnp.asarray(input)
    rows = _rows(x, dim)
    n = rows.shape[0]
    if n == 0:
        inv_shape = x.shape if dim is None else (0,)
        return (_from_rows(rows, x, dim), jnp.zeros(inv_shape, jnp.int64), jnp.zeros((0,), jnp.int64))
    if consecutive:
        change = np.asarray(jnp.any(rows[1:] != rows[:-1], axis=1))
        starts = np.concatenate([[0], np.flatnonzero(change) + 1])
        inverse = np.concatenate([[0], np.cumsum(change)])
        counts = np.diff(np.concatenate([starts, [n]]))
        vals = rows[jnp.asarray(starts)]
    else:
        if dim is None:
            vals, inverse, counts = jnp.unique(rows[:, 0], return_inverse=True, return_counts=True, equal_nan=False)
            vals = vals[:, None]
        elif jnp.issubdtype(rows.dtype, jnp.floating) and np.isnan(np.asarray(rows, np.float64)).any():
            vals, inverse, counts = _unique_rows_nan(rows)
        else:
            vals, inverse, counts = jnp.unique(rows, return_inverse=True, return_counts=True, axis=0, equal_nan=False)
    inverse = jnp.asarray(inverse, jnp.int64).reshape(x.shape if dim is None else (-1,))
    return _from_rows(vals, x, dim), inverse, jnp.asarray(counts, jnp.int64)


_UNIQUE_NODES = {"_unique2": "Unique2Backward0", "unique_dim": "UniqueDimBackward0",
                 "unique_consecutive": "UniqueConsecutiveBackward0"}


@defop("_unique_values", promote=lambda op, sig, sargs: ((None, None), (sig[0][1],)), tensors=2, method=False,
       function=False, saves=(), grad_fn=lambda targs, sargs: _UNIQUE_NODES[sargs[0]])
def _unique_values(values, input, aten):
    """``unique``'s values of an ``input`` that requires grad, as PyTorch records them: a node of ``aten``'s (the
    variant's ATen op) whose backward raises."""
    return _go.no_derivative(f"the derivative for '{aten}' is not implemented.", NotImplementedError)(values, input)


def _unique_result(r, return_inverse, return_counts, input, aten):
    if input._requires_grad:
        r = (dispatch(OPS["_unique_values"], (r[0], input), (aten,)),) + tuple(r[1:])
    if not (return_inverse or return_counts):
        return r[0]
    return (r[0],) + ((r[1],) if return_inverse else ()) + ((r[2],) if return_counts else ())


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim=None):
    """The distinct values (always sorted, as PyTorch's CPU kernel), with the inverse indices (input's shape, or the
    size of ``dim``) and the counts when asked; ``dim``: distinct slices along it."""
    if type(sorted) is not bool or type(return_inverse) is not bool or type(return_counts) is not bool:
        _not_bool("_unique2" if dim is None else "unique_dim", ("sorted", "return_inverse", "return_counts"),
                  (sorted, return_inverse, return_counts))  # (torch's kernel names, as its parser's message)
    return _unique_result(dispatch(OPS["unique"], (input,), (dim, False)), return_inverse, return_counts, input,
                          "_unique2" if dim is None else "unique_dim")


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim=None):
    """Collapse runs of equal consecutive values (or slices along ``dim``)."""
    return _unique_result(dispatch(OPS["unique"], (input,), (dim, True)), return_inverse, return_counts, input,
                          "unique_consecutive")


# ---- isin ---------------------------------------------------------------------------------------------------------
_ISIN_SIGS = tuple(f"({a}, *, bool assume_unique = False, bool invert = False, Tensor out = None)" for a in (
    "Tensor elements, Tensor test_elements", "Number element, Tensor test_elements",
    "Tensor elements, Number test_element"))
_NO = object()


def isin(*args, elements=_NO, test_elements=_NO, element=_NO, test_element=_NO, assume_unique=False, invert=False,
         out=None):
    """``torch.isin``'s three overloads: (Tensor elements, Tensor test_elements), (Number element, Tensor
    test_elements), (Tensor elements, Number test_element), positional or by those keyword names."""
    slots = list(args[:2]) + [_NO] * (2 - len(args[:2]))
    ok = len(args) <= 2
    for i, name, v, tensor in ((0, "elements", elements, True), (0, "element", element, False),
                               (1, "test_elements", test_elements, True), (1, "test_element", test_element, False)):
        if v is not _NO:
            ok = ok and slots[i] is _NO and isinstance(v, Tensor) == tensor
            slots[i] = v
    if not (ok and _NO not in slots and any(isinstance(v, Tensor) for v in slots)):
        named = [(k, v) for k, v in (("test_element", test_element), ("element", element),
                                     ("test_elements", test_elements), ("elements", elements)) if v is not _NO]
        got = ", ".join([type(v).__name__ for v in args] + [f"{k}={type(v).__name__}" for k, v in named])
        raise _invalid_combo("isin", f"({got}{', ' if named and not args else ''})", _ISIN_SIGS)
    return OPS["isin"].fn(slots[0], slots[1], assume_unique=assume_unique, invert=invert, out=out)


# ---- bincount / histc --------------------------------------------------------------------------------------------------
def _bincount_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt not in _INTEGRAL:
        raise no_kernel("bincount_cpu", dt)
    if sig[1] is None:
        return (None, None), (D.int64,)
    w = D.float32 if sig[1][1] is D.float32 else D.float64
    P.discards_imag(sig[1][1], w)
    return (None, w), (w,)


_BINCOUNT_NO_GRAD = _go.aten_no_derivative("bincount")


@defop("bincount", promote=_bincount_rule, tensors=2, grad_fn="NotImplemented", method=False, function=False,
       saves=())
def _bincount(input, weights, length):
    """PyTorch's bincount has no derivative: with weights that require grad its output does (``NotImplemented``,
    whose backward raises)."""
    if input.dtype.itemsize < 4:
        input = input.astype(jnp.int32)  # (JAX's scatter normalizes indices in their dtype: 128 overflows int8)
    if weights is None:
        return jnp.bincount(input, length=length)
    return _BINCOUNT_NO_GRAD(jnp.bincount(input, weights, length=length), weights)


def bincount(input: Tensor, weights=None, minlength: int = 0) -> Tensor:
    """Counts of each value 0..max(input) (at least ``minlength`` bins); ``weights``: sums of weights (float32
    weights stay float32, others give float64). The length depends on the values: eager only (under vmap, torch's
    per-example fallback: the examples must agree on it)."""
    if input.dtype not in _INTEGRAL:
        raise no_kernel("bincount_cpu", input.dtype)
    minlength = int_arg("bincount", "minlength", minlength)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if isinstance(input._array, _Tracer):
        from ..func._vmap import per_example_values
        h = per_example_values(input._array, "aten::bincount")
        if h is None:
            raise data_dependent_error("torch.bincount (output size depends on values)", input._array)
    else:
        h = input._host()
    if input.numel() == 0:
        from .creation import zeros
        return zeros(minlength, dtype=D.int64, device=input.device)
    if h.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # (the length in int64: ``max + 1`` in a uint8 / int8 / int16 input's own dtype wraps, 255 + 1 -> 0)
    n = np.maximum(h.max(axis=-1).astype(np.int64) + 1, minlength)
    return dispatch(OPS["bincount"], (input, weights), (_stacked_length(n),))


def _stacked_length(lengths) -> int:
    """The one output length of examples whose lengths are ``lengths`` (batch dims outermost first; 0-d: not under
    vmap), or the error of torch's fallback stacking them: it loops over the innermost vmap's examples, each of
    which the next vmap out runs as its own loop, so the examples are compared in that order."""
    if lengths.ndim == 0:
        return int(lengths)
    parts = [_stacked_length(lengths[..., i]) for i in range(lengths.shape[-1])]
    for k, n in enumerate(parts):
        if n != parts[0]:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got [{parts[0]}] at entry 0 and "
                               f"[{n}] at entry {k}")
    return parts[0]


def _histc_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category != D.FLOAT or dt in D.FLOAT8:
        # (the kernel that refuses first: its min/max for complex, its bin edges' linspace for bool)
        raise no_kernel("aminmax_cpu" if dt.is_complex else "linspace_cpu" if dt is D.bool else "histogram_cpu", dt)
    return (None,), (dt,)


def _linspace(start, end, steps, dt):
    """PyTorch's CPU linspace in dtype ``dt`` (start + i*step for the first half, end - (steps-1-i)*step after)."""
    step = (end - start) / jnp.asarray(steps - 1, dt)
    i = jnp.arange(steps)
    return jnp.where(i < steps // 2, start + step * i.astype(dt), end - step * (steps - 1 - i).astype(dt))


@defop("histc", promote=_histc_rule, differentiable=False, method=False, function=False, kernel="histogram_cpu")
def _histc(input, bins, lo, hi):
    """Counts of ``bins`` equal-width bins over [lo, hi] (None: the data's range; a zero-width range widens by
    1 each side); values outside (and NaN) are ignored; the last bin includes its right edge. PyTorch's histc
    binning (LINEAR_INTERPOLATION): the position by division in the input's dtype, truncated, with no correction
    against the bin edges (that local search is torch.histogram's)."""
    dt = input.dtype
    x = input.reshape(-1)
    if lo is None:
        if x.size:
            lo64, hi64 = jnp.min(x).astype(jnp.float64), jnp.max(x).astype(jnp.float64)
        else:
            lo64 = hi64 = jnp.zeros((), jnp.float64)
        same = lo64 == hi64
        lo_e, hi_e = jnp.where(same, lo64 - 1, lo64).astype(dt), jnp.where(same, hi64 + 1, hi64).astype(dt)
    else:
        lo_e, hi_e = jnp.asarray(lo, jnp.float64).astype(dt), jnp.asarray(hi, jnp.float64).astype(dt)
    edges = _linspace(lo_e, hi_e, bins + 1, dt)
    left, right = edges[0], edges[-1]
    inside = (x >= left) & (x <= right)
    pos = true_div((x - left) * jnp.asarray(bins, dt), right - left)
    pos = jnp.clip(jnp.where(inside, pos, 0), 0, bins).astype(jnp.int64)
    pos = jnp.where(pos == bins, bins - 1, pos)
    return jnp.zeros((bins,), dt).at[jnp.where(inside, pos, bins)].add(jnp.ones(x.shape, dt), mode="drop")


def _cnum(v: float) -> str:
    if math.isnan(v):
        return "-nan"  # the NaN PyTorch's x86 build prints
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


def histc(input: Tensor, bins: int = 100, min=0, max=0, *, out=None) -> Tensor:  # noqa: A002
    """Histogram of ``bins`` equal-width bins over [min, max] (min == max: the data's range)."""
    if isinstance(bins, Tensor) and bins.numel() == 1 and bins.dtype.category <= D.INT and bins.dtype is not D.bool:
        bins = operator.index(bins)  # (an integer tensor of one element passes torch's ``int`` parser)
    if not isinstance(bins, numbers.Integral) or isinstance(bins, bool):
        raise TypeError(f"histc(): argument 'bins' must be int, not {_type_name(bins)}")
    lo, hi = float(min), float(max)
    if input.device.type == "meta":  # torch's meta kernel: the shape, after its own checks only (any dtype; the
        if bins <= 0:                # range may be infinite, and min == max reads no data)
            raise RuntimeError(f"histc(): bins must be > 0, but got {bins}")
        if not hi >= lo:
            raise RuntimeError("histc(): max must be larger than min")
        from .creation import empty
        r = empty(bins, dtype=input.dtype, device=input.device)
        if out is None:
            return r
        if isinstance(out, Tensor):  # (its out= wrapper copies into ``out``, of any dtype: no values to cast)
            if out.device.type != "meta":
                raise RuntimeError(f"Attempting to copy from device meta to device {out.device}, but cross-device "
                                   "copies are not allowed!")
            r = empty(bins, dtype=out.dtype, device=out.device)
        return write_out(out, r)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    dt = input.dtype
    if dt is D.bool or dt in D.FLOAT8 or dt in D.UNSIGNED_WIDE:  # PyTorch fails in the kernel it reaches first
        # (aminmax for the data's range, else linspace for the bin edges)
        raise no_kernel("aminmax_cpu" if dt is not D.bool and lo == hi and input.numel() else "linspace_cpu", dt)
    _histc_rule(None, ((input.dim(), dt),), ())
    if lo == hi and input.numel() and isinstance(input._array, _Tracer):
        r = dispatch(OPS["histc"], (input,), (int(bins), None, None))  # range from the data, in the program
        return _out(r, out, "histc")
    if lo == hi and input.numel():
        h = input._host().astype(np.float64)
        lo, hi = float(h.min()), float(h.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if math.isinf(lo) or math.isinf(hi) or math.isnan(lo) or math.isnan(hi):
        raise RuntimeError(f"torch.histc: range of [{_cnum(lo)}, {_cnum(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return _out(dispatch(OPS["histc"], (input,), (int(bins), lo, hi)), out, "histc")


# ---- quantile / nanquantile -----------------------------------------------------------------------------------------
_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_rule(op, sig, sargs):
    dt = sig[0][1]
    return (None, dt), (dt,)


def _lerp(a, b, w):
    """PyTorch's lerp (two formulas, exact at both ends)."""
    return jnp.where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


@defop("quantile", autocast={"cpu": "fp32"}, promote=_quantile_rule, grad_fn="SqueezeBackward4", tensors=2, method=False, function=False,
       saves=(0,))
def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """Quantiles ``q`` (a number, 0-d or 1-d) of ``input`` along ``dim`` (None: all elements) by sorting; NaN
    propagates (``ignore_nan``: computed over the non-NaN values)."""
    x = input
    if dim is None:
        srt = jnp.sort(x.reshape(-1))
        out_shape = (1,) * x.ndim if keepdim else ()
    else:
        srt = jnp.sort(jnp.moveaxis(x, dim, -1), -1) if x.ndim else x.reshape(1)
        out_shape = tuple(1 if k == dim else s for k, s in enumerate(x.shape)) if keepdim else tuple(
            s for k, s in enumerate(x.shape) if k != dim)
    n = srt.shape[-1]
    qv = jnp.asarray(q, x.dtype)
    qs = qv.reshape((-1,) + (1,) * srt.ndim)                                  # (Q, 1..., 1)
    nan = jnp.isnan(srt)
    if ignore_nan:
        valid = jnp.sum(~nan, -1, keepdims=True)
        ranks = qs * (valid - 1).astype(x.dtype)
        ranks = jnp.where(ranks < 0, jnp.zeros((), x.dtype), ranks)
    else:
        ranks = jnp.where(nan.any(-1, keepdims=True), jnp.asarray(n - 1, x.dtype), qs * jnp.asarray(n - 1, x.dtype))
    if interpolation == "lower":
        ranks = jnp.floor(ranks)
    elif interpolation == "higher":
        ranks = jnp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = jnp.round(ranks)  # half to even, as torch.round
    full = jnp.broadcast_to(srt, ranks.shape[:-1] + (n,))
    below = ranks.astype(jnp.int64)
    v = jnp.take_along_axis(full, below, -1)
    if interpolation in ("linear", "midpoint"):
        w = jnp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below.astype(x.dtype)
        v = _lerp(v, jnp.take_along_axis(full, jnp.ceil(ranks).astype(jnp.int64), -1), w)
    v = v.reshape((qs.shape[0],) + out_shape)
    return v[0] if qv.ndim == 0 else v


def _quantile_call(input: Tensor, q, dim, keepdim, interpolation, ignore_nan, out):
    input, q = autocast_args(OPS["quantile"], (input, q))  # (before the dtype checks, as PyTorch's casts are)
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if interpolation not in _INTERP:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if isinstance(q, Tensor) and q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.dtype is not input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if isinstance(q._array, _Tracer):  # (compiled: the program checks it)
            _deferred.check(~((q._array >= 0) & (q._array <= 1)), q._array,
                            lambda v, p: RuntimeError("quantile() q values must be in the range [0, 1]"))
        else:
            h = q._host()
            if not ((h >= 0) & (h <= 1)).all():
                raise RuntimeError("quantile() q values must be in the range [0, 1]")
    else:
        q = float(q)
    if dim is not None:
        dim = _wrap_dim(dim, input.dim())
    return _out(dispatch(OPS["quantile"], (input, q), (dim, bool(keepdim), interpolation, ignore_nan)), out)


def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear", out=None) -> Tensor:
    """The q-th quantiles along ``dim`` (all elements by default); ``q`` a number or a 0-d / 1-d tensor of the
    input's dtype (1-d: a leading dim of len(q)); interpolation linear | lower | higher | midpoint | nearest.
    NaN in a reduced row gives NaN."""
    return _quantile_call(input, q, dim, keepdim, interpolation, False, out)


def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear",
                out=None) -> Tensor:
    """``quantile`` ignoring NaN (a row of NaN gives NaN)."""
    return _quantile_call(input, q, dim, keepdim, interpolation, True, out)


# ---- searchsorted / bucketize --------------------------------------------------------------------------------------------
def _search_rule(op, sig, sargs):
    dt = P.promote_types(sig[0][1], sig[1][1])  # PyTorch compares in the promoted type (0-d inputs too)
    if dt is D.bool or dt in D.FLOAT8 or dt in D.UNSIGNED_WIDE:
        raise no_kernel("searchsorted_out_cpu", dt)
    return (dt, dt, None), (D.int32 if sargs[0] else D.int64,)


def _search_check(targs, sargs):
    sorter = targs[2]
    if sorter is not None and isinstance(sorter._array, _Tracer):  # (compiled: the program checks it)
        s, n = sorter._array, targs[0]._shape[-1]
        _deferred.check((s < 0) | (s >= n), s, lambda v, p: RuntimeError("torch.searchsorted(): sorter index out "
                                                                          "of range"))
    elif sorter is not None and sorter.numel():
        h = sorter._host()
        if h.min() < 0 or h.max() >= targs[0]._shape[-1]:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")


@defop("searchsorted", promote=_search_rule, tensors=3, differentiable=False, check=_search_check, method=False,
       function=False, device_check="cat")
def _searchsorted(sorted_sequence, input, sorter, out_int32, right):
    """Insertion points of ``input`` in the last dim of ``sorted_sequence`` (``sorter``: its sorting permutation):
    PyTorch's binary search, so NaN inputs go to the end and unsorted boundaries give PyTorch's answers."""
    seq, v = sorted_sequence, jnp.asarray(input)
    n = seq.shape[-1]

    def at(a, i):
        return a[i] if a.ndim == 1 else jnp.take_along_axis(a, i, -1)
    start = jnp.zeros(v.shape, jnp.int64)
    end = jnp.full(v.shape, n, jnp.int64)
    for _ in range(int(n).bit_length()):
        active = start < end
        mid = start + (end - start) // 2
        idx = jnp.clip(mid, 0, max(n - 1, 0))
        if sorter is not None:
            idx = jnp.clip(at(sorter, idx), 0, max(n - 1, 0))
        mv = at(seq, idx)
        go = ~(mv > v) if right else ~(mv >= v)
        start = jnp.where(active & go, mid + 1, start)
        end = jnp.where(active & ~go, mid, end)
    return start


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False, side=None,
                 sorter=None, out=None) -> Tensor:
    """Indices where ``input`` would be inserted into the last dim of ``sorted_sequence`` to keep it sorted (right:
    after equal values; ``sorter``: argsort of an unsorted sequence); int64 (``out_int32``: int32)."""
    if type(out_int32) is not bool or type(right) is not bool:
        _not_bool("searchsorted", ("out_int32", "right"), (out_int32, right))
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of {side} "
                               f"while right was {bool(right)}")
        right = side == "right"
    s = sorted_sequence._shape
    if sorter is not None:
        if sorter.dtype is not D.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{sorter.dtype.short}")
        if sorter._shape != s:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(s)}and got sorter tensor {list(sorter._shape)}")
    if not s:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension")
    if len(s) > 1:
        if not isinstance(input, Tensor):
            raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                               f"is 1, but we got boundaries tensor dim({len(s)}) and input value's dim(0) numel(1)")
        if input._shape[:-1] != s[:-1] or len(input._shape) != len(s):
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               f"dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {list(s)} and input value tensor {list(input._shape)}")
    if not isinstance(input, Tensor):
        if sorted_sequence.dtype in D.UNSIGNED_WIDE:  # (a scalar takes the boundaries' dtype: no kernel for it)
            raise no_kernel("searchsorted_out_cpu", sorted_sequence.dtype)
        h = np.asarray(input)
        input = _host_tensor(h, D.from_numpy_dtype(h.dtype), sorted_sequence.device)
    r = dispatch(OPS["searchsorted"], (sorted_sequence, input, sorter), (bool(out_int32), bool(right)))
    if input.numel():  # (torch copies a non-contiguous operand to a contiguous one, and says so once)
        for name, t, line in (("input value", input, 32), ("boundary", sorted_sequence, 38), ("sorter", sorter, 44)):
            if t is not None and not t.is_contiguous():
                warn_once(f"searchsorted {name}", f"torch.searchsorted(): {name} tensor is non-contiguous, this will "
                          "lower the performance due to extra data copy when converting non-contiguous tensor to "
                          f"contiguous, please use contiguous {name} tensor if possible. This message will only appear "
                          "once per program. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                          f"BucketizationUtils.h:{line}.)")
    return r if out is None else write_out(out, r, "searchsorted")


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False, out=None) -> Tensor:
    """The bucket of each ``input`` value among the 1-d sorted ``boundaries`` (``searchsorted(boundaries, input)``)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# ---- fill_diagonal_ ---------------------------------------------------------------------------------------------------------
def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (all dims equal beyond 2-D) in place; ``wrap``: a tall matrix's diagonal restarts every
    ncols + 1 rows (PyTorch's strided layout, so only for a contiguous one here)."""
    if (isinstance(fill_value, Tensor) and fill_value.dim()) or not isinstance(fill_value, (numbers.Number, Tensor)):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be Number, not "
                        f"{'Tensor' if isinstance(fill_value, Tensor) else type(fill_value).__name__}")
    nd = self.dim()
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    h, w = self._shape[0], self._shape[1]
    if nd > 2 and any(s != h for s in self._shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    wraps = wrap and nd == 2 and h > w + 1
    if wraps and not self.is_contiguous():
        raise RuntimeError("functorch_lite: fill_diagonal_(wrap=True) of a non-contiguous matrix with more than "
                           "ncols + 1 rows is not supported (PyTorch writes through its memory layout); call "
                           ".contiguous() first")
    d = _view(self, "diagonal", (0, 0, 1))
    for _ in range(nd - 2):
        d = _view(d, "diagonal", (0, 0, d.dim() - 1))
    d.fill_(fill_value)
    if wraps:
        for start in range(w + 1, h, w + 1):
            _view(_view(self, "slice", (0, start, h, 1)), "diagonal", (0, 0, 1)).fill_(fill_value)
    return self


FUNCTIONS = {f.__name__: f for f in (unique, unique_consecutive, bincount, histc, quantile, nanquantile, searchsorted,
                                     bucketize, isin)}
METHODS = {f.__name__: f for f in (unique, unique_consecutive, bincount, histc, quantile, nanquantile, fill_diagonal_)}
