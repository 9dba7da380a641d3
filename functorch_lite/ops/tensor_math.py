"""``torch.histogram``, ``torch.unravel_index`` and ``torch.gradient`` (PyTorch names and behaviour).

``histogram`` is one op (no gradient, as PyTorch's): equal-width bins over ``range`` (default: the data's min and
max, widened by 0.5 each side when they are equal) or explicit bin edges, optional weights and density. A value
lands in the bin whose edges hold it (the last bin includes its right edge; values outside and NaN are dropped),
the bins PyTorch's kernel finds. ``unravel_index`` and ``gradient`` are composites over facade ops, as PyTorch's
(``gradient``'s results carry the inner ops' grad_fn, e.g. ``CatBackward0``).

Example::

    >>> torch.histogram(torch.tensor([1., 2., 1.]), bins=2)
    torch.return_types.histogram(hist=tensor([2., 1.]), bin_edges=tensor([1.0000, 1.5000, 2.0000]))
"""
from __future__ import annotations

import builtins
import math
import numbers
import operator

import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._promotion import _cname, no_kernel
from .._tensor.tensor import Tensor, _wrap_dim
from ._dispatch import _type_name, _check_out_grad, dispatch, write_out
from ._registry import OPS, defop
from .grad_overrides import aten_no_derivative
from .creation import _linspace_real
from .indexing import _Tracer, _host_tensor
from .reduction import _structseq, return_types as RT
from .set_ops import _linspace

RT.histogram = _structseq("histogram", ("hist", "bin_edges"))
RT.histogram._out_type = RT.histogram_out = _structseq("histogram_out", ("hist", "bin_edges"))


def _histdd_rule(op, sig, sargs):
    """float32/float64; with explicit bin edges also float16/bfloat16 (PyTorch's kernels)."""
    dt = sig[0][1]
    if sig[1] is None and dt not in (D.float32, D.float64):
        raise no_kernel("histogramdd", dt)
    if dt not in (D.float16, D.bfloat16, D.float32, D.float64):
        raise no_kernel("histogram_cpu", dt)
    return (None, None, None), (dt, dt)


_HIST_NO_GRAD = aten_no_derivative("histogram")


@defop("histogram", promote=_histdd_rule, tensors=3, nout=2, result_type=RT.histogram, grad_fn="NotImplemented",
       method=False, function=False, broadcast=False, kernel="histogramdd", out=False, saves=())
def _histogram(input, edges, weight, bins, lo, hi, density):
    """(hist, bin_edges): ``edges`` given, or ``bins`` equal-width bins over [lo, hi] (None: the data's range).
    No derivative (torch's): both results depend on every tensor argument through an identity whose backward
    raises ``derivative for aten::histogram is not implemented``."""
    deps = tuple(a for a in (input, edges, weight) if a is not None)
    hist, edges = _histogram_values(input, edges, weight, bins, lo, hi, density)
    return _HIST_NO_GRAD(hist, *deps), _HIST_NO_GRAD(edges, *deps)


def _histogram_values(input, edges, weight, bins, lo, hi, density):
    """The values of :func:`_histogram` (JAX arrays)."""
    dt = input.dtype
    x = input.reshape(-1)
    if edges is None:
        if lo is None:
            if x.size:
                lo_e, hi_e = jnp.min(x), jnp.max(x)
            else:  # PyTorch: an empty input's range is [0, 1]
                lo_e, hi_e = jnp.zeros((), dt), jnp.ones((), dt)
        else:
            lo_e, hi_e = jnp.asarray(lo, jnp.float64).astype(dt), jnp.asarray(hi, jnp.float64).astype(dt)
        same = lo_e == hi_e
        half = jnp.asarray(0.5, dt)
        lo_e, hi_e = jnp.where(same, lo_e - half, lo_e), jnp.where(same, hi_e + half, hi_e)
        edges = _linspace(lo_e, hi_e, bins + 1, dt)
    nb = edges.shape[0] - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    pos = jnp.minimum(jnp.searchsorted(edges, x, side="right") - 1, nb - 1)
    w = jnp.ones(x.shape, dt) if weight is None else weight.reshape(-1).astype(dt)
    hist = jnp.zeros((nb,), dt).at[jnp.where(inside, pos, nb)].add(w, mode="drop")
    if density:
        hist = hist / (jnp.sum(hist) * (edges[1:] - edges[:-1]))
    return hist, edges


def _fmt(v):
    return f"{v:g}"


def _check_ranges(ranges):
    """torch's ``select_outer_bin_edges`` checks, per dimension: a finite range, then min <= max."""
    for d, (lo, hi) in enumerate(ranges):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(lo)}, {_fmt(hi)}] is not finite")
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_fmt(lo)} max {_fmt(hi)} "
                               f"for dimension {d}")


def _host_edges(input, nb, ranges):
    """torch's equal-width bin edges for ``nb[d]`` bins per dimension of the points ``input`` (..., D), computed
    on the host as torch's kernel does (``ranges`` None: the data's min and max per dimension; checked finite;
    an empty range widened by 0.5 each side; then torch's linspace in the input's dtype), padded with each row's
    last edge -> a (D, max(nb) + 1) array; None when traced (the edges are then computed in the program)."""
    dt = input.dtype
    if dt not in (D.float32, D.float64) or (ranges is None and isinstance(input._array, _Tracer)):
        return None  # (the op's dtype rule raises; a traced input: its range is in the program)
    nd = len(nb)
    if ranges is None:
        if input.numel():
            h = input._host().reshape(-1, nd).astype(np.float64)
            ranges = tuple(zip(h.min(0).tolist(), h.max(0).tolist()))
        else:  # (PyTorch: an empty input's range is [0, 1])
            ranges = ((0.0, 1.0),) * nd
        _check_ranges(ranges)
    n = max(nb) + 1
    rows = []
    for (lo, hi), b in zip(ranges, nb):
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        e = _linspace_real(lo, hi, b + 1, dt).astype(dt.jnp)
        rows.append(np.concatenate([e, np.full(n - e.shape[0], e[-1], dt.jnp)]))
    return np.stack(rows)


def _check_bins_dtype(input, bins, d):
    """torch's histogramdd check of one bins tensor's dtype (before its dimension)."""
    if bins.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                           f"input with dtype {_cname(input.dtype)} and bins for dimension {d} with dtype "
                           f"{_cname(bins.dtype)}")


def _check_weight(input, weight, points):
    """torch's histogramdd checks of ``weight``: the input's dtype, then one weight per point (``points``: the
    input's shape as (N, D) points; torch compares the weight's shape to (N,))."""
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({_cname(input.dtype)}), and "
                           f"weight({_cname(weight.dtype)})")
    if tuple(weight._shape) != tuple(points[:-1]):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(points)} and weight with shape {list(weight._shape)}")


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """``torch.histogram(x, bins=100, range=None, weight=None, density=False)``: (hist, bin_edges); ``bins`` an int
    (equal-width bins) or a 1-d tensor of increasing edges. ``out=(hist, bin_edges)``: of the input's dtype (torch's
    histogramdd checks), resized and written (bin_edges first, as torch's), ``return_types.histogram_out``.
    torch has no derivative for it: when the input, weight or bins require grad, both results do, with a
    ``NotImplemented`` grad_fn whose backward raises."""
    if isinstance(bins, Tensor):
        edges, nb = bins, None
        _check_bins_dtype(input, bins, 0)
        if bins.dim() != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {bins.dim()} "
                               "dimensions in the bins tensor for dimension 0")
        lo = hi = None
    else:
        if not isinstance(bins, numbers.Integral) or isinstance(bins, bool):
            raise TypeError(f"histogram(): argument 'bins' must be int or Tensor, not {_type_name(bins)}")
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        edges, nb = None, int(bins)
        lo, hi = (None, None) if range is None else (float(range[0]), float(range[1]))
        if lo is not None:
            _check_ranges(((lo, hi),))
        if input.dtype not in (D.float32, D.float64):
            raise no_kernel("histogramdd", input.dtype)  # (torch's bin edges fail before the weight checks)
    if weight is not None:
        weight = weight.reshape(-1)  # (torch's: one weight per element, whatever the shapes)
        _check_weight(input, weight, (input.numel(), 1))
    pair = isinstance(out, (tuple, list)) and len(out) == 2 and all(isinstance(o, Tensor) for o in out)
    if pair:
        _check_out_grad("aten::histogram", out, ())
        for o, what, tail in ((out[0], "hist", ""), (out[1], "bin_edges", " for dimension 0")):
            if o.dtype is not input.dtype:
                raise RuntimeError(f"torch.histogram: input tensor and {what} tensor should have the same dtype, but "
                                   f"got input {_cname(input.dtype)} and {what} {_cname(o.dtype)}{tail}")
    if edges is None:
        padded = _host_edges(input, (nb,), None if lo is None else ((lo, hi),))
        if padded is not None:
            edges, nb, lo, hi = _host_tensor(padded[0], input.dtype, input.device), None, None, None
    r = dispatch(OPS["histogram"], (input, edges, weight), (nb, lo, hi, bool(density)))
    if out is None or not pair:
        return r if out is None else write_out(out, r)  # (write_out's errors for another out=)
    write_out(out[1], r.bin_edges)
    write_out(out[0], r.hist)
    return RT.histogram_out(tuple(out))


RT.histogramdd = _structseq("histogramdd", ("hist", "bin_edges"))


@defop("histogramdd", promote=_histdd_rule, tensors=3, nout=2, differentiable=False, method=False, function=False,
       broadcast=False, kernel="histogramdd", out=False)
def _histogramdd(input, edges, weight, bins, ranges, density):
    """(hist, edges stacked): ``input`` (..., D) as points; per dimension ``bins[d]`` bins with edges ``edges[d]``
    (padded rows) or equal-width over ``ranges[d]`` (None: the data's range, widened by 0.5 each side when equal).
    A point counts when inside every dimension's edges (the last bin includes its right edge)."""
    dt = input.dtype
    nd = input.shape[-1]
    x = input.reshape(-1, nd)
    es = []
    for d in range(nd):
        if edges is not None:
            es.append(edges[d, :bins[d] + 1])
            continue
        if ranges is not None:
            lo_e, hi_e = (jnp.asarray(v, jnp.float64).astype(dt) for v in ranges[d])
        elif x.shape[0]:
            lo_e, hi_e = jnp.min(x[:, d]), jnp.max(x[:, d])
        else:  # PyTorch: an empty input's range is [0, 1]
            lo_e, hi_e = jnp.zeros((), dt), jnp.ones((), dt)
        same = lo_e == hi_e
        half = jnp.asarray(0.5, dt)
        es.append(_linspace(jnp.where(same, lo_e - half, lo_e), jnp.where(same, hi_e + half, hi_e), bins[d] + 1, dt))
    inside = jnp.ones((x.shape[0],), bool)
    flat = jnp.zeros((x.shape[0],), jnp.int64)
    for d, e in enumerate(es):
        c = x[:, d]
        inside = inside & (c >= e[0]) & (c <= e[-1])
        flat = flat * bins[d] + jnp.clip(jnp.searchsorted(e, c, side="right") - 1, 0, bins[d] - 1).astype(jnp.int64)
    total = 1
    for b in bins:
        total *= b
    w = jnp.ones((x.shape[0],), dt) if weight is None else weight.reshape(-1).astype(dt)
    hist = jnp.zeros((total,), dt).at[jnp.where(inside, flat, total)].add(w, mode="drop").reshape(bins)
    if density:  # (PyTorch's order: by the total, then by each dimension's bin widths)
        hist = hist / jnp.sum(hist)
        for d, e in enumerate(es):
            hist = hist / (e[1:] - e[:-1]).reshape((1,) * d + (-1,) + (1,) * (nd - d - 1))
    n = max(bins) + 1
    return hist, jnp.stack([jnp.concatenate([e, jnp.broadcast_to(e[-1:], (n - e.shape[0],))]) for e in es])


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """``torch.histogramdd(x, bins, range=None, weight=None, density=False)``: the points ``x[..., :]`` (the last
    dimension D their coordinates) counted in a D-dimensional grid -> (hist, bin_edges: a tuple of D tensors).
    ``bins``: an int (each dimension), D ints, or D 1-d tensors of increasing edges; ``range``: 2*D floats."""
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    nd = input._shape[-1]
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        bins = [int(bins)] * nd
    bins = list(bins)
    if len(bins) != nd:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    edges = None
    if bins and all(isinstance(b, Tensor) for b in bins):
        for d, b in enumerate(bins):
            _check_bins_dtype(input, b, d)
            if b.dim() != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {b.dim()} "
                                   f"dimensions in the bins tensor for dimension {d}")
        nbs = tuple(b.numel() - 1 for b in bins)
        n = max(nbs) + 1
        rows = [OPS["cat"].fn([b, b[-1:].expand(n - b.numel())]) if b.numel() < n else b for b in bins]
        edges, nb, ranges = OPS["stack"].fn(rows), nbs, None
    else:
        nb = tuple(operator.index(b) for b in bins)
        for d, b in enumerate(nb):
            if b <= 0:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension {d}")
        ranges = None
        if range is not None:
            if len(range) != 2 * nd:
                raise RuntimeError(f"torch.histogramdd: for a {nd}-dimensional histogram range should have {2 * nd} "
                                   f"elements, but got {len(range)}")
            ranges = tuple((float(range[2 * d]), float(range[2 * d + 1])) for d in builtins.range(nd))
            _check_ranges(ranges)
    if weight is not None:
        _check_weight(input, weight, input._shape)
    if edges is None:
        padded = _host_edges(input, nb, ranges)
        if padded is not None:
            edges, ranges = _host_tensor(padded, input.dtype, input.device), None
    hist, padded = dispatch(OPS["histogramdd"], (input, edges, weight), (nb, ranges, bool(density)))
    return RT.histogramdd(hist, tuple(padded[d, :nb[d] + 1].clone() for d in builtins.range(nd)))


def unravel_index(indices, shape):
    """``torch.unravel_index(i, shape)``: the coordinates (int64 tensors) of flat indices ``i`` into ``shape``
    (floor division and remainder, as PyTorch: negative indices count back from the end)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices.dtype.category > D.INT or indices.dtype is D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    idx = indices.long()
    coords = []
    for s in reversed(shape):
        coords.append(idx.remainder(s))
        idx = idx.div(s, rounding_mode="floor")
    return tuple(reversed(coords))


# ---- gradient --------------------------------------------------------------------------------------------------------
def _grad_dims(input, spacing, dim, edge_order):
    """(dims, one spacing per dim), checked in the order of torch's ``pre_check_gradient``."""
    if input.dtype is D.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    nd = input.dim()
    dims = list(range(nd)) if dim is None else [dim] if isinstance(dim, numbers.Integral) else list(dim)
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if dim is None:
                raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                                   f"equal to 'self.dim() = {nd}', since dim argument was not given, but got a list "
                                   f"of length {len(spacing)}")
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        steps = list(spacing)
    else:  # (a number, or a 0-d tensor as one)
        steps = [spacing.item() if isinstance(spacing, Tensor) and not spacing.dim() else spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is not None:
        dims = [_wrap_dim(d, nd) for d in dims]
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    for d in dims:
        if input._shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return dims, steps


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """``torch.gradient``: second-order central differences inside, first- or second-order one-sided at the
    edges, along each dim of ``dim`` (default: all); ``spacing`` a number, one number per dim, or one 1-d tensor
    of coordinates per dim."""
    from .movement import cat
    if input.dim() == 0:
        return ()
    dims, steps = _grad_dims(input, spacing, dim, edge_order)
    x = input if input.dtype.category >= D.FLOAT else input.to(D.get_default_dtype())
    out = []
    for d, h in zip(dims, steps):
        n = x._shape[d]

        def s(a, b):  # x[a:b] along d (Python slice semantics, b None: to the end)
            a = a + n if a < 0 else a
            b = n if b is None else (b + n if b < 0 else b)
            return x.narrow(d, a, b - a)
        if isinstance(h, Tensor):
            if h.dim() != 1:
                raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got "
                                   f"an element with {h.dim()} dimensions!")
            dx = h[1:] - h[:-1]
            shp = [1] * x.dim()
            shp[d] = -1
            dx1, dx2 = dx[:-1], dx[1:]
            a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shp)
            b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shp)
            c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shp)
            center = a * s(0, -2) + b * s(1, -1) + c * s(2, None)
            if edge_order == 1:
                pre = (s(1, 2) - s(0, 1)) / dx[0]
                app = (s(-1, None) - s(-2, -1)) / dx[-1]
            else:
                d0, d1 = dx[0], dx[1]
                pre = (-(2.0 * d0 + d1) / (d0 * (d0 + d1))) * s(0, 1) + ((d0 + d1) / (d0 * d1)) * s(1, 2) + \
                      (-d0 / (d1 * (d0 + d1))) * s(2, 3)
                e1, e2 = dx[-1], dx[-2]
                app = (e1 / (e2 * (e1 + e2))) * s(-3, -2) - ((e1 + e2) / (e1 * e2)) * s(-2, -1) + \
                      ((2 * e1 + e2) / (e1 * (e1 + e2))) * s(-1, None)
        else:
            center = (s(2, None) - s(0, -2)) / (2 * h)
            if edge_order == 1:
                pre = (s(1, 2) - s(0, 1)) / h
                app = (s(-1, None) - s(-2, -1)) / h
            else:
                pre = (-1.5 * s(0, 1) + 2 * s(1, 2) - 0.5 * s(2, 3)) / h
                app = (0.5 * s(-3, -2) - 2 * s(-2, -1) + 1.5 * s(-1, None)) / h
        out.append(cat([pre, center, app], d))
    return tuple(out)


FUNCTIONS = {"histogram": histogram, "histogramdd": histogramdd, "unravel_index": unravel_index, "gradient": gradient}
METHODS = {"histogram": histogram}
