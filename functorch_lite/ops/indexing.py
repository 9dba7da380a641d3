"""Indexing (spec §5 VIEW-24..36, §9.8 IDX-01..05): ``x[idx]``, ``x[idx] = v`` and ``index_put``.

Basic indexing (ints, slices, ``None``, ``...``, 0-d integer tensors) is a chain of the view ops
``select`` / ``slice`` / ``unsqueeze`` walked exactly like PyTorch's ``applySlicing``, so the result
shares storage. Advanced indexing (integer / bool tensors and lists) is ONE op, ``index``
(IndexBackward0), over a stacked ``(k, *B)`` integer index tensor: boolean masks are turned into
integer indices on the host first (``nonzero``), so the jitted op never sees data-dependent shapes,
and integer indices are bounds-checked on host values when not traced (JAX would clamp, IDX-05).
``x[idx] = v`` copies into the view (``copy_``) or runs ``index_put`` in place. The gather/scatter
family lives in ``gather_scatter.py`` and shares the helpers below.

Example::

    >>> y = torch.arange(12).view(3, 4)
    >>> y[1:, ::2]                    # a view: y[1:, ::2]._base is y._base
    tensor([[ 4,  6],
            [ 8, 10]])
    >>> y[y > 9] = 0                  # one in-place index_put, _version + 1
"""
from __future__ import annotations

import functools
import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device as _dev
from .. import dtypes as D
from . import _deferred
from .._tensor import views as V
from .._tensor.tensor import Tensor
from ._dispatch import EXPANDED_WARN as _EXPANDED_WARN, _type_name, data_dependent_error, dispatch, inplace, \
    no_overlap as _no_overlap, write_out
from ._registry import OPS, defop
from .._symbolic import SymNumber as _SymNumber
from .._warn import user_stacklevel as _user_stacklevel

_Tracer = jax.core.Tracer
_INT_INDEX = (D.int64, D.int32)
_I64 = 1 << 63


# ---- shared helpers -------------------------------------------------------------------------------
def _host_tensor(arr: np.ndarray, dt, device) -> Tensor:
    return Tensor._from_array(jax.device_put(arr, _dev.to_jax(device)), dt, device)


def _first_oob(t: Tensor, size: int, negative: bool):
    """First index value (row-major) outside the valid range, or None (skipped when traced)."""
    arr = t._array
    if isinstance(arr, _Tracer) or 0 in t._shape:
        return None
    h = np.asarray(arr)
    bad = (h >= size) | (h < (-size if negative else 0))
    if not bad.any():
        return None
    return int(h.reshape(-1)[np.argmax(bad.reshape(-1))])


class _Shape:
    """A tensor argument's shape, for an error message made after the program ran."""
    __slots__ = ("_shape",)

    def __init__(self, shape):
        self._shape = shape


def _bounds(pos: int, size_of, negative: bool, make):
    """A ``check`` hook: the index tensor at ``targs[pos]`` against ``size_of(targs, sargs)`` (traced inside a
    compiled function: the program checks it, ``_deferred``)."""
    def check(targs, sargs):
        size = size_of(targs, sargs)
        t = targs[pos]
        if isinstance(t._array, _Tracer):
            arr = t._array
            shapes = tuple(_Shape(x._shape) if isinstance(x, Tensor) else None for x in targs)  # (no tracers kept)
            _deferred.check((arr >= size) | (arr < (-size if negative else 0)), arr,
                            lambda v, p: make(v, shapes, sargs, size))
            return
        v = _first_oob(t, size, negative)
        if v is not None:
            raise make(v, targs, sargs, size)
    return check


def _dim_size(targs, sargs):
    t = targs[0]
    return t._shape[sargs[0]] if t._shape else 1


def _oob(exc, prefix=""):
    return lambda v, targs, sargs, size: exc(f"{prefix}index {v} is out of bounds for dimension {sargs[0]} with "
                                             f"size {size}")


def _rule_cast(*positions):
    """Output keeps the input's dtype; the tensor-like args at ``positions`` are cast to it."""
    def rule(op, sig, sargs):
        dt = sig[0][1]
        return tuple(dt if i in positions and s is not None else None for i, s in enumerate(sig)), (dt,)
    return rule


def _view(t: Tensor, name: str, sargs: tuple) -> Tensor:
    return dispatch(OPS[name], (t,), sargs)


def _out(r, out, name=None, srcs=(), apart=()):
    """``r``, or ``r`` written into ``out``: with PyTorch's out= checks for the op ``name`` where given (``srcs`` /
    ``apart``: the inputs ``out`` may overlap only exactly / not at all; see write_out)."""
    return r if out is None else write_out(out, r, name, srcs=srcs, apart=apart)


def _strip_ones(v):
    """Drop leading size-1 dims of a value being assigned (PyTorch's slicePrefix1sSize)."""
    if not isinstance(v, Tensor) or not v._shape or v._shape[0] != 1:
        return v
    s = v._shape
    i = next((k for k, n in enumerate(s) if n != 1), len(s))
    return _view(v, "reshape", (s[i:],))


# ---- overwriting writes with PyTorch's gradient ------------------------------------------------------------
def _at_index(spec, arrays):
    it = iter(arrays)
    return tuple(next(it) if s else slice(None) for s in spec)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _set_at(spec, x, v, *arrays):
    return x.at[_at_index(spec, arrays)].set(v)


@_set_at.defjvp
def _set_at_jvp(spec, primals, tangents):
    """Tangent ``tx`` zeroed at the written positions plus ``tv`` scatter-added there: its transpose is PyTorch's
    backward (self: the gradient with the written positions zeroed; the values: the gradient gathered at every
    position, summed over their broadcast dims), also where an index repeats."""
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    idx = _at_index(spec, arrays)
    written = jnp.zeros(x.shape, jnp.bool_).at[idx].set(True)
    return _set_at(spec, x, v, *arrays), jnp.where(written, jnp.zeros((), tx.dtype), tx).at[idx].add(tv)


def set_at(x, idx: tuple, v):
    """``x.at[idx].set(v)`` (``idx``: index arrays and full slices ``:``) with PyTorch's gradient: every value
    written gets the gradient at its destination, also one whose write a repeated index overwrote (JAX's gives it
    only to the surviving write). index_put, scatter, index_copy and put write through it."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x.at[idx].set(v)
    return _set_at(tuple(not isinstance(i, slice) for i in idx), x, v, *[i for i in idx if not isinstance(i, slice)])


# ---- the advanced-indexing ops -------------------------------------------------------------------
def _adv_index(ndim, indices, dims):
    idx = [slice(None)] * ndim
    for j, d in enumerate(dims):
        idx[d] = indices[j]
    return tuple(idx)


def _adv_shape(shape, bshape, dims):
    """Result shape: advanced dims in place when adjacent, else in front (NumPy/PyTorch rule)."""
    k = len(dims)
    if dims == tuple(range(dims[0], dims[0] + k)):
        return shape[:dims[0]] + bshape + shape[dims[-1] + 1:]
    return bshape + tuple(s for d, s in enumerate(shape) if d not in dims)


def _check_adv(shape, indices, dims):
    """Bounds of a stacked (k, *B) index (a tensor, or host values) in PyTorch's order and message (IDX-05)."""
    if any(shape[d] == 0 for d in dims) and 0 not in (indices._shape if isinstance(indices, Tensor) else
                                                      indices.shape)[1:]:
        raise IndexError("index is out of bounds for dimension with size 0")  # (torch's AdvancedIndex, first)
    if isinstance(indices, Tensor):
        if indices.__dict__.get("_inbounds"):
            return
        if isinstance(indices._array, _Tracer):  # (inside a compiled function: the program checks it)
            arr = jnp.moveaxis(indices._array, 0, -1)
            sizes = jnp.asarray([shape[d] for d in dims], arr.dtype)
            k = len(dims)
            _deferred.check((arr >= sizes) | (arr < -sizes), arr, lambda v, p: IndexError(
                f"index {v} is out of bounds for dimension {p % k} with size {shape[dims[p % k]]}"))
            return
        indices = np.asarray(indices._array)
    if indices.size == 0:
        return
    h = np.moveaxis(indices, 0, -1).reshape(-1)  # element-major, then index j
    sizes = np.tile(np.array([shape[d] for d in dims]), h.size // len(dims))
    bad = (h >= sizes) | (h < -sizes)
    if bad.any():
        p = int(np.argmax(bad))
        j = p % len(dims)
        raise IndexError(f"index {h[p]} is out of bounds for dimension {j} with size {shape[dims[j]]}")


@defop("index", float8=True, promote="index", grad_fn="IndexBackward0", tensors=2, method=False, function=False,
       saves=(1,),
       check=lambda targs, sargs: _check_adv(targs[0]._shape, targs[1], sargs[0]))
def _index(input, indices, dims):
    """``input[...]`` with integer ``indices`` (k, *B) applied to dims ``dims``."""
    return input[_adv_index(input.ndim, indices, dims)]


def _index_put_check(targs, sargs):
    x, v, indices = targs
    _check_adv(x._shape, indices, sargs[0])
    target = _adv_shape(x._shape, indices._shape[1:], sargs[0])
    vs = v._shape if isinstance(v, Tensor) else ()
    if len(vs) > len(target) or any(a != 1 and a != b for a, b in zip(reversed(vs), reversed(target))):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vs)} cannot be broadcast to indexing result "
                           f"of shape {list(target)}")


@defop("index_put", float8=True, promote=_rule_cast(1), grad_fn="IndexPutBackward0", tensors=3, method=False,
       function=False,
       check=_index_put_check, saves=(2,), autocast={"cuda": "promote"})
def _index_put(input, values, indices, dims, accumulate):
    """``input[indices] = values`` (``accumulate``: ``+=``, duplicates summed)."""
    idx = _adv_index(input.ndim, indices, dims)
    if accumulate and input.dtype == jnp.bool_:  # bool accumulation is logical or
        return input.astype(jnp.uint8).at[idx].max(values.astype(jnp.uint8)) != 0
    return input.at[idx].add(values) if accumulate else set_at(input, idx, values)


# ---- the walk (PyTorch's applySlicing) ------------------------------------------------------------------
_INVALID = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
            "(got {})")
_SEQ_WARN = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch "
             "2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
             "x[torch.tensor(seq)], which will result either in an error or a different result")
_MASKS = (D.bool, D.uint8)


def _tp_name(o) -> str:
    """The type's name as Python's C API gives it (``tp_name``): a class's own name, a C type's with its module
    (``numpy.float32``, ``decimal.Decimal``)."""
    t = type(o)
    if t.__name__ == "Tensor" and not t.__module__.startswith("functorch_lite"):  # (real torch's: say so)
        return (f"{t.__module__}.{t.__qualname__} (another library's array: convert it with functorch_lite.tensor(...) "
                "or from_dlpack)")
    return _type_name(o)


def _select(t: Tensor, dim: int, v, real_dim: int) -> Tensor:
    v = operator.index(v)
    if not t._shape:
        if v == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                             "C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"index {v} is out of bounds for dimension {real_dim} with size 0")
    size = t._shape[dim]
    if v < -size or v >= size:
        raise IndexError(f"index {v} is out of bounds for dimension {real_dim} with size {size}")
    return dispatch(OPS["select"], (t,), (dim, v))


def _slice(t: Tensor, dim: int, s: slice, always: bool) -> Tensor:
    if not t._shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    n = t._shape[dim]
    if (not always and step == 1 and (s.start is None or operator.index(s.start) == 0)
            and (s.stop is None or operator.index(s.stop) >= n)):
        return t  # PyTorch skips full slices inside a tuple
    start, stop, _ = s.indices(n)
    return dispatch(OPS["slice"], (t,), (dim, start, max(start, stop), step))


def _to_tuple(index) -> tuple:
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(o, (Tensor, list, tuple, slice, np.ndarray)) or o is None or o is Ellipsis for o in index):
        warnings.warn(_SEQ_WARN, UserWarning, stacklevel=_user_stacklevel())
        return tuple(index)
    return (index,)


def _seq_array(o) -> np.ndarray:
    """A list / ndarray index as host values: bool stays a mask, an integer ndarray its dtype (uint8: a mask), the
    rest become int64 (floats truncate, as torch's conversion of a NumPy array index)."""
    if isinstance(o, str):
        raise TypeError("new(): invalid data type 'str'")
    a = np.asarray(o)
    if a.dtype == np.bool_ or (isinstance(o, np.ndarray) and a.dtype.kind in "iu"):
        return a
    if a.dtype.kind == "c":
        from .._promotion import discards_imag
        discards_imag(D.complex128, D.int64)
        a = a.real
    return a.astype(np.int64)


def _dtype(t):
    return t.dtype if isinstance(t, Tensor) else D.from_numpy_dtype(t.dtype)


def _count(idx) -> int:
    n = 0
    for o in idx:
        if isinstance(o, Tensor):
            n += o.ndim if o.dtype in _MASKS else 1
        elif not (o is None or o is Ellipsis or o is True or o is False or isinstance(o, np.bool_)):
            n += 1
    return n


def _walk(self: Tensor, idx: tuple):
    """Apply the basic part of ``idx`` as views; return (view, [(dim, index tensor or host array)])."""
    nd = len(self._shape)
    spec = _count(idx)
    if spec > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    res, dim, adv = self, 0, []
    for i, o in enumerate(idx):
        if type(o) is int:
            res = _select(res, dim, o, i)
        elif isinstance(o, slice):
            res = _slice(res, dim, o, False)
            dim += 1
        elif o is None:
            res = _view(res, "unsqueeze", (dim,))
            dim += 1
        elif o is Ellipsis:
            dim += nd - spec
        elif o is True or o is False:  # (a numpy.bool is refused below, as torch's)
            res = _view(res, "unsqueeze", (dim,))
            adv.append((dim, np.zeros(1 if o else 0, np.int64)))
            dim += 1
        else:
            t = o if isinstance(o, Tensor) else (
                _seq_array(o) if isinstance(o, (list, tuple, range, np.ndarray, str)) else None)
            if t is None:
                try:
                    v = operator.index(o)
                except TypeError:
                    raise IndexError(_INVALID.format(_tp_name(o))) from None
                res = _select(res, dim, v, i)
                continue
            dt = _dtype(t)
            if t.shape or dt.category > D.INT:
                adv.append((dim, t))
                dim += t.ndim if dt in _MASKS else 1
            elif dt in _MASKS:  # 0-d bool: unsqueeze + [0] or []
                res = _view(res, "unsqueeze", (dim,))
                adv.append((dim, np.zeros(1 if _host(t) else 0, np.int64)))
                dim += 1
            elif isinstance(t, Tensor) and isinstance(t._array, _Tracer):  # 0-d int under compile: advanced
                adv.append((dim, t))
                dim += 1
            else:
                res = _select(res, dim, int(_host(t)), i)
    return res, adv


def _host(t):
    return t._host() if isinstance(t, Tensor) else t


def _check_mask_shape(res: Tensor, d: int, t) -> None:
    for j, n in enumerate(t.shape):
        if d + j >= len(res._shape) or n != res._shape[d + j]:
            raise IndexError(f"The shape of the mask {list(t.shape)} at index {j} does not match the shape of the "
                             f"indexed tensor {list(res._shape)} at index {d + j}")


def _prepare(res: Tensor, adv: list):
    """Index entries -> (dims, stacked (k, *B) index tensor), with PyTorch's checks and messages."""
    for _, t in adv:
        if _dtype(t) not in _INT_INDEX and _dtype(t) not in _MASKS:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    entries = []
    for d, t in adv:
        if _dtype(t) in _MASKS:
            if _dtype(t) is D.uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=_user_stacklevel())
            _check_mask_shape(res, d, t)
            if isinstance(t, Tensor) and isinstance(t._array, _Tracer):
                raise data_dependent_error("indexing with a boolean mask (output shape depends on values)", t._array,
                                           vmap="vmap: We do not support batching operators that can support "
                                           "dynamic shape. Attempting to batch over indexing with a boolean mask.")
            entries.extend((d + j, col) for j, col in enumerate(np.nonzero(_host(t))))
        else:
            entries.append((d, t))
    shapes = [tuple(t.shape) for _, t in entries]
    try:
        b = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(s)) for s in shapes)) from None
    dims = tuple(d for d, _ in entries)
    ts = [t for _, t in entries]
    if not any(isinstance(t, Tensor) for t in ts):  # all on the host: check here, once
        arr = np.stack([np.broadcast_to(t, b) for t in ts]).astype(np.int64)
        _check_adv(res._shape, arr, dims)
        idx = _host_tensor(arr, D.int64, res.device)
        idx._inbounds = True
        return dims, idx
    if len(ts) == 1:
        return dims, _view(ts[0], "unsqueeze", (0,))
    ts = [t if isinstance(t, Tensor) else _host_tensor(t.astype(np.int64), D.int64, res.device) for t in ts]
    ts = [t if t._shape == b else _view(t, "expand", (b,)) for t in ts]
    return dims, dispatch(OPS["stack"], (ts,), (0,))


@defop("alias", grad_fn="AliasBackward0", view=lambda t, s: (t._shape, t.stride(), t._offset), method=False,
       function=False, saves=())
def _alias(input):
    """``x[...]``: a view of the whole tensor."""
    return input


def getitem(self: Tensor, index) -> Tensor:
    """``x[index]``: views for basic indexing (VIEW-24..32), a copy for advanced indexing (VIEW-30/31)."""
    tp = type(index)
    if tp is int:
        return _select(self, 0, index, 0)
    if tp is slice:
        return _slice(self, 0, index, True)
    if index is None:
        return _view(self, "unsqueeze", (0,))
    if index is Ellipsis:
        return _view(self, "alias", ())
    res, adv = _walk(self, _to_tuple(index))
    if not adv:
        return _view(self, "alias", ()) if res is self else res
    dims, indices = _prepare(res, adv)
    return dispatch(OPS["index"], (res, indices), (dims,))


def _fills(dst: Tensor, adv: list, values, accumulate: bool) -> bool:
    """PyTorch's ``canDispatchToMaskedFill``: a put (not accumulating) of a one-element CPU value tensor whose only
    index tensor is one bool / uint8 mask runs as ``masked_fill_(mask, value.item())`` (``x[mask] = 1.``: the number
    is such a tensor)."""
    if accumulate or len(adv) != 1 or isinstance(values, Tensor) and (values.numel() != 1 or
                                                                      values.device.type != "cpu"):
        return False
    t = adv[0][1]
    return _dtype(t) in _MASKS and (not isinstance(t, Tensor) or t.device == dst.device)


def _put(dst: Tensor, adv: list, values, accumulate: bool, in_place: bool):
    fills = _fills(dst, adv, values, accumulate)
    if fills:  # masked_fill_: the value is converted as a number (overflow-checked)
        d, t = adv[0]
        _check_mask_shape(dst, d, t)
        if _dtype(t) is D.uint8:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
        if isinstance(values, Tensor) and not isinstance(values._array, _Tracer):  # (a number: checked already)
            D.check_fits(values.item(), dst.dtype)
        if not t.shape and dst._shape and not isinstance(getattr(t, "_array", None), _Tracer):
            adv = [(0, np.full(dst._shape[:1], bool(_host(t))))]  # a 0-d mask: every element, or none
    elif isinstance(values, Tensor) and values.dtype is not dst.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {dst.dtype.short} for "
                           f"the destination and {values.dtype.short} for the source.")
    dims, indices = _prepare(dst, adv)
    args = (dst, _strip_ones(values), indices)
    if in_place:
        _no_overlap(dst, args[1])
        if not dst.requires_grad and V.has_internal_overlap(dst._shape, dst.stride()):
            return _put_expanded(dst, args, (dims, bool(accumulate)), fills)
    return (inplace if in_place else dispatch)(OPS["index_put"], args, (dims, bool(accumulate)))


def _put_expanded(dst: Tensor, args, sargs, fills: bool) -> Tensor:
    """``index_put_`` / ``x[mask] = v`` into an expanded tensor (deprecated, but PyTorch does it): torch's
    warnings, and each memory location an indexed element shares takes its new value (``Tensor._write_where``)."""
    level = _user_stacklevel()
    warnings.warn(_EXPANDED_WARN.format("index_put_", "indices", "tensor", 976), UserWarning, stacklevel=level)
    if fills:
        warnings.warn(_EXPANDED_WARN.format("masked_fill_", "mask", "scalar", 2450), UserWarning, stacklevel=level)
    r = dispatch(OPS["index_put"], args, sargs)
    hit = jnp.zeros(dst._shape, jnp.bool_).at[_adv_index(len(dst._shape), args[2]._array, sargs[0])].set(True)
    dst._write_where(r._array, hit)
    return dst


def setitem(self: Tensor, index, value) -> None:
    """``x[index] = value``: ``copy_`` into the view, or one in-place ``index_put``; ``_version`` + 1 (INP-01)."""
    if not isinstance(value, Tensor):
        # PyTorch takes a Python bool / int / float / complex (their subclasses: numpy.float64) or a numpy integer;
        # any other value (numpy.float32, numpy.bool, an ndarray, a list, a Fraction) is refused
        if not isinstance(value, (int, float, complex, np.integer, _SymNumber)):
            raise TypeError(f"can't assign a {_tp_name(value)} to a torch.{self.dtype.legacy}")
        if isinstance(value, np.generic):
            value = value.item()  # (numpy.int64 / float64 / complex128: as the Python number)
        if isinstance(value, int) and not isinstance(value, bool) and not -_I64 <= value < _I64:
            raise ValueError("Overflow when unpacking long long")  # (its int64 conversion, for every dtype)
        D.check_fits(value, self.dtype, floats="wide")  # (the number becomes a float32 tensor first: 16/8-bit
        # floats unchecked)
    tp = type(index)
    adv = None
    if tp is int:
        dst = _select(self, 0, index, 0)
    elif tp is slice:
        dst = _slice(self, 0, index, True)
    elif index is Ellipsis:
        dst = self
    else:
        dst, adv = _walk(self, _to_tuple(index))
    if adv:
        _put(dst, adv, value, False, True)
        return
    if isinstance(value, Tensor) and value._shape and value._shape != dst._shape:
        value = _strip_ones(value)
        if value._shape != dst._shape:
            value = _view(value, "expand", (dst._shape,))
    if isinstance(value, Tensor) and value._shape:
        _no_overlap(dst, value, partial_only=True)
    inplace(OPS["copy"], (dst, value), ())


def _positional(self: Tensor, indices) -> list:
    if len(indices) > len(self._shape):
        raise IndexError(f"too many indices for tensor of dimension {len(self._shape)} (got {len(indices)})")
    out, d = [], 0
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got {type(t).__name__}")
        out.append((d, t))
        d += t.ndim if t.dtype in _MASKS else 1
    return out


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False, *, _in_place: bool = False) -> Tensor:
    """``torch.index_put(x, (i, j), v)``: a copy of ``x`` with ``x[i, j] = v`` (``+=`` with ``accumulate``;
    IndexPutBackward0). ``x.index_put_(...)`` does it in place."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put{'_' if _in_place else ''}(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    adv = _positional(input, tuple(indices))
    if not adv:
        return input.copy_(values) if _in_place else values.expand(input._shape).clone()
    return _put(input, adv, values, accumulate, _in_place)


# ---- in-place twins and the tables ----------------------------------------------------------------
def _twin(fn):
    """The in-place ``fn_`` of a public wrapper ``fn`` (same arguments; writes into ``self`` and returns it)."""
    def method(self, *args, **kwargs):
        return fn(self, *args, _in_place=True, **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__ + "_"
    method.__doc__ = f"In-place ``{fn.__name__}``: writes into ``self`` (``_version`` + 1) and returns it."
    return method


_PUBLIC = (index_put,)
_TWINS = (index_put,)
METHODS = {f.__name__: f for f in _PUBLIC}
METHODS.update({f.__name__ + "_": _twin(f) for f in _TWINS})
METHODS.update({"__getitem__": getitem, "__setitem__": setitem})
FUNCTIONS = {f.__name__: f for f in _PUBLIC}
