"""Copying shape ops (spec §5, §9.7) and the non-op helpers that call ops (flatten, split, T, ...).

The view ops (view, reshape, transpose, permute, expand, squeeze, slice, select, ...) live in
``view_ops.py``; everything defined here copies into a new storage or just calls ops.
"""
from __future__ import annotations

import math
import operator

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor import views as V
from .._tensor.tensor import Size, _wrap_dim, channels_last, channels_last_3d, contiguous_format, \
    preserve_format, with_memory_order
from .._tensor.tensor import Tensor
from ._registry import defop
from .view_ops import _dims_arg, _shape_arg, expand, narrow, permute, reshape, transpose, view
from .._warn import warn_once
from .creation import _check_nonneg
from ._dispatch import _type_name, either_arg



# ---- copying shape ops -------------------------------------------------------------------------------------
@defop("clone", float8=True, grad_fn="CloneBackward0", method=False, function=False, saves=())
def _clone(input):
    """A copy in a new storage (laid out by :func:`clone`)."""
    return jnp.array(input, copy=True)


def clone(input, *, memory_format=None):
    """``clone()``: ``preserve_format`` (default) keeps the strides of a dense tensor (VIEW-51); otherwise
    the copy is laid out per ``memory_format`` (contiguous, channels_last)."""
    return lay_out(_clone(input), input, preserve_format if memory_format is None else memory_format)


def lay_out(r, src, fmt):
    """``r`` (a fresh result of ``src``'s shape: a copy or a cast of it) laid out in memory format ``fmt`` the way
    PyTorch lays out ``clone``'s and ``to``'s copies: ``preserve_format`` keeps ``src``'s strides when ``src`` is
    dense (else the dense strides of its memory order); a channels-last format needs a tensor of its rank."""
    if fmt is contiguous_format or (fmt is preserve_format and src._strides is None):
        return r
    nd = len(src._shape)
    if fmt is preserve_format:
        st = src.stride()
        if not V.is_dense(src._shape, st):
            st, order = V.infer_dense_strides(src._shape, st)
            return r if st == V.contiguous_strides(src._shape) else with_memory_order(r, order, st)
        if V.is_contiguous(src._shape, st):
            r._strides = st if st != V.contiguous_strides(src._shape) else None  # size-1 dims' strides kept
            return r
        return with_memory_order(r, V.memory_order(src._shape, st), st)
    st = fmt._strides(src._shape)
    return with_memory_order(r, fmt._order(nd), st)


def suggest_memory_format(t):
    """PyTorch's ``suggest_memory_format``: ``channels_last`` (``_3d``) when ``t``'s strides are channels-last-like
    (c10's ``is_channels_last_strides_2d/3d``, ambiguous cases counting as contiguous), else ``contiguous_format``."""
    if t._strides is None or len(t._shape) not in (4, 5):
        return contiguous_format
    shape, st = t._shape, t._strides
    if st[1] == 0:
        return contiguous_format
    lo = 0
    for d in ((1, 3, 2, 0) if len(shape) == 4 else (1, 4, 3, 2, 0)):
        if shape[d] == 0 or st[d] < lo or (d == 0 and lo == st[1]):
            return contiguous_format
        lo = st[d] * shape[d] if shape[d] > 1 else st[d]
    return channels_last if len(shape) == 4 else channels_last_3d


def int_list_arg(fname: str, arg: str, v, pos: int | None) -> tuple:
    """``v`` as torch's argument parser reads an ``int[]`` given as one object (``pos``: its position in the
    message, None: given by keyword): a tuple / list (a ``Size``) of ints -- anything ``operator.index`` takes
    (a NumPy integer, a one-element integer tensor), a bool only after the first element -- else the parser's
    TypeError (an int, a Tensor, a float element). ``flip(x, dims)``, ``F.pad(x, pad)``."""
    where = f" (position {pos})" if pos else ""
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"{fname}(): argument '{arg}'{where} must be tuple of ints, not {_type_name(v)}")
    out = []
    for i, e in enumerate(v):
        try:
            if i == 0 and isinstance(e, bool):
                raise TypeError
            out.append(operator.index(e))
        except TypeError:
            if i:
                raise TypeError(f"{fname}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                                f"\"type must be tuple of ints,but got {_type_name(e)}\"") from None
            if pos is None:  # (torch's keyword form names the sequence's type)
                raise TypeError(f"{fname}(): argument '{arg}' must be tuple of ints, not {_type_name(v)}") from None
            raise TypeError(f"{fname}(): argument '{arg}'{where} must be tuple of ints, but found element of type "
                            f"{_type_name(e)} at pos 0") from None
    return tuple(out)


def _flip_prep(targs, sargs):
    dims = _dims_arg(sargs[0])
    nd = len(targs[0]._shape)
    wrapped = tuple(_wrap_dim(d, nd) for d in dims)
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return (wrapped,)


@defop(out=False, kernel="flip_cpu", grad_fn="FlipBackward0", prep=_flip_prep, saves=(), method=False,
       function=False)
def flip(input, *dims):
    """The op under ``torch.flip`` / ``Tensor.flip`` (which parse ``dims`` as torch's do)."""
    (dims,) = dims
    return jnp.flip(input, dims) if dims and input.ndim else input  # (a 0-d tensor: dim 0 / -1 is itself)


_NO_DIMS = object()


def _flip_kw(kw: dict, given: bool):
    """``dims=`` of torch.flip / Tensor.flip (parsed as its keyword form), or _NO_DIMS; torch's parser errors."""
    for k in kw:
        if k != "dims":
            raise TypeError(f"flip() got an unexpected keyword argument '{k}'")
    if not kw:
        return _NO_DIMS
    if given:
        raise TypeError("flip() got multiple values for argument 'dims'")
    return int_list_arg("flip", "dims", kw["dims"], None)


def _flip_function(input, *args, **kw):
    """``torch.flip(input, dims)``: ``dims`` a tuple / list of ints; an int is torch's TypeError (the method takes
    varargs ints: ``x.flip(0, 1)``)."""
    if len(args) > 1:
        raise TypeError(f"flip() takes 2 positional arguments but {len(args) + 1} were given")
    dims = int_list_arg("flip", "dims", args[0], 2) if args else _NO_DIMS
    kd = _flip_kw(kw, bool(args))
    if kd is _NO_DIMS and dims is _NO_DIMS:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    return flip(input, kd if dims is _NO_DIMS else dims)


def _flip_method(self, *dims, **kw):
    """``Tensor.flip(*dims)``: varargs ints or one tuple / list (``x.flip(0)``, ``x.flip(0, 1)``, ``x.flip((0,))``)."""
    if not dims and "dims" not in kw:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    kd = _flip_kw(kw, bool(dims))
    if kd is not _NO_DIMS:
        return flip(self, kd)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return flip(self, int_list_arg("flip", "dims", dims[0], 1))
    return flip(self, _shape_arg(dims, "flip", "dims"))


def _dim_no_scalar(d, nd):
    """c10's ``maybe_wrap_dim(dim, ndim, wrap_scalar=false)``."""
    if nd == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return _wrap_dim(d, nd)


def _roll_prep(targs, sargs):
    """torch's parser (``SymInt[1] shifts, int[1] dims=[]``: an int or a sequence of ints each; a list becomes a tuple,
    a static argument) and ATen's ``roll_common`` checks: one shift and no dims is a roll of the flattened tensor;
    otherwise one shift per dim."""
    shifts, dims = sargs[0], (sargs[1] if len(sargs) > 1 else None)
    sh = _int_seq(shifts, "roll", "shifts", 2)
    dm = () if dims is None else _int_seq(dims, "roll", "dims", 3)
    if not sh:
        raise RuntimeError("`shifts` required")
    if not dm and len(sh) == 1:
        return (sh, None)
    if len(sh) != len(dm):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(dm)}")
    nd = len(targs[0]._shape)
    for d in dm:
        _dim_no_scalar(d, nd)
    return (sh, dm)


def _int_seq(v, fname: str, name: str, pos: int, single: bool = True) -> tuple:
    """An ``int[]`` argument of torch's parser, as a tuple: a list / tuple of ints (0-d integer tensors, NumPy
    integers); ``single`` (an ``int[1]``: roll's shifts / dims): one int too."""
    if not isinstance(v, (tuple, list)):
        if not single or getattr(v, "ndim", 0) or not hasattr(v, "__index__") or isinstance(v, bool):
            raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be tuple of ints, not {_type_name(v)}")
        return (operator.index(v),)
    for i, e in enumerate(v):
        if isinstance(e, bool) or not hasattr(e, "__index__") or getattr(e, "ndim", 0):
            raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be tuple of ints, but found "
                            f"element of type {_type_name(e)} at pos {i}")
    return tuple(operator.index(e) for e in v)


@defop("roll", out=False, float8=True, grad_fn="RollBackward0", saves=(), prep=_roll_prep, method=False,
       function=False)
def _roll(input, shifts, dims=None):
    if dims is None:  # (one shift: the flattened tensor rolled)
        return jnp.roll(input.reshape(-1), shifts[0]).reshape(input.shape)
    return jnp.roll(input, shifts, dims)


def roll(input, *args, **kw):
    """``torch.roll(input, shifts, dims=None)`` / ``Tensor.roll``. torch's CPU roll is a ``cat`` of two narrows per
    rolled dim, so its result is laid out as that cat's: in the input's suggested memory format (channels-last
    stays channels-last) when every roll splits its dim into two non-empty parts, else contiguous (a shift that is
    a multiple of the size, a flattened roll)."""
    r = _roll(input, *args, **kw)
    if input._strides is None or (fmt := suggest_memory_format(input)) is contiguous_format or not r.numel():
        return r
    shifts, dims = _roll_prep((input,), (args[0] if args else kw["shifts"],
                                          args[1] if len(args) > 1 else kw.get("dims")))
    if dims is not None and all(s % input._shape[d] for s, d in zip(shifts, dims)):
        lay_out(r, input, fmt)  # (in place: the result keeps its identity)
    return r


def _repeats(name, shape, reps) -> tuple:
    """``reps`` over ``shape`` (both padded with ones on the left to one length) checked as torch checks its result's
    size (a negative size is its empty()'s error); a negative count left only multiplies a size 0: it counts as 0."""
    n = max(len(reps), len(shape))
    _check_nonneg(name, tuple(a * b for a, b in zip((1,) * (n - len(shape)) + tuple(shape),
                                                     (1,) * (n - len(reps)) + tuple(reps))))
    return tuple(max(d, 0) for d in reps)


def _repeat_prep(targs, sargs):
    reps = _shape_arg(sargs[0], "repeat", "repeats")
    if len(reps) < len(targs[0]._shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    return (_repeats("repeat", targs[0]._shape, reps),)


# (half_grad: torch's RepeatBackward0 sums the gradient's copies, float16 / bfloat16 in float32)
@defop(float8=True, grad_fn="RepeatBackward0", prep=_repeat_prep, saves=(), half_grad=True)
def repeat(input, *repeats):
    (reps,) = repeats
    x = input.reshape((1,) * (len(reps) - input.ndim) + input.shape)
    return jnp.tile(x, reps)


def _tile_prep(targs, sargs):
    return (_repeats("tile", targs[0]._shape, _shape_arg(sargs[0], "tile", "dims")),)  # (torch's repeat of it)


@defop(out=False, float8=True, grad_fn="RepeatBackward0", prep=_tile_prep, saves=(), half_grad=True)
def tile(input, *dims):
    (dims,) = dims
    return jnp.tile(input, dims)


def _tri_prep(name):
    def prep(targs, sargs):
        if len(targs[0]._shape) < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return sargs
    return prep


@defop(kernel="tril", grad_fn="TrilBackward0", inplace=True, saves=(), prep=_tri_prep("tril"))
def tril(input, diagonal=0):
    return jnp.tril(input, diagonal)


@defop(kernel="triu", grad_fn="TriuBackward0", inplace=True, saves=(), prep=_tri_prep("triu"))
def triu(input, diagonal=0):
    return jnp.triu(input, diagonal)


def _diag_prep(targs, sargs):
    nd = len(targs[0]._shape)
    if nd not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return sargs


@defop(float8=True, grad_fn=lambda t, s: "DiagEmbedBackward0" if len(t[0]._shape) == 1 else "DiagonalBackward0_copy",
       prep=_diag_prep, saves=())
def diag(input, diagonal=0):
    """1-D: a square matrix with ``input`` on diagonal ``diagonal``; 2-D: a copy of that diagonal."""
    return jnp.diag(input, diagonal)


def _trace_rule(op, sig, sargs):
    """trace sums integers in int64 (as sum); PyTorch's kernel has no bool or float8 case."""
    dt = sig[0][1]
    if dt is D.bool or dt in D.FLOAT8:
        raise no_kernel("trace", dt)
    r = D.int64 if dt.category == D.INT else dt
    return (r,), (r,)


def _trace_check(targs, sargs):
    if len(targs[0]._shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {len(targs[0]._shape)}")
    return sargs


@defop(out=False, promote=_trace_rule, grad_fn="TraceBackward0", prep=_trace_check, saves=(), autocast={"cpu": "fp32"})
def trace(input):
    """Sum of the main diagonal of a matrix."""
    return jnp.trace(input)


def _diag_embed_prep(targs, sargs):
    offset, d1, d2 = sargs
    nd = len(targs[0]._shape) + 1
    w1, w2 = _wrap_dim(d1, nd), _wrap_dim(d2, nd)
    if w1 == w2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {d1}, {d2}")
    return offset, w1, w2


@defop(out=False, float8=True, grad_fn="DiagEmbedBackward0", prep=_diag_embed_prep, saves=())
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Each last-dim vector of ``input`` on diagonal ``offset`` of a new (dim1, dim2) matrix."""
    n = input.shape[-1] if input.ndim else 1
    x = input.reshape(input.shape[:-1] + (n,)) if input.ndim else input.reshape((1,))
    m = n + abs(offset)
    i = np.arange(n)
    out = jnp.zeros(x.shape[:-1] + (m, m), x.dtype).at[..., i + max(-offset, 0), i + max(offset, 0)].set(x)
    return jnp.moveaxis(out, (-2, -1), (dim1, dim2))


def _rot90_prep(targs, sargs):
    k, dims = sargs
    dims = tuple(dims)
    nd = len(targs[0]._shape)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    wrapped = (_wrap_dim(dims[0], nd), _wrap_dim(dims[1], nd))
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == nd:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return k % 4, wrapped


@defop("rot90", kernel="flip_cpu", grad_fn="Rot90Backward0", prep=_rot90_prep, saves=(), method=False,
       function=False)
def _rot90(input, k=1, dims=(0, 1)):
    """Rotate by ``k`` quarter turns in the plane of ``dims``, from the first towards the second axis."""
    return jnp.rot90(input, k, axes=dims)


def _rot90_k(k, pos: int) -> int:
    """rot90's ``k`` as torch's argument parser takes an int: a 0-d integer tensor (not requiring grad) too."""
    if isinstance(k, Tensor) and not k._shape and k.dtype.category <= D.INT and k.dtype is not D.bool \
            and not k.requires_grad:
        return operator.index(k)
    if isinstance(k, bool) or not hasattr(k, "__index__") or isinstance(k, Tensor):
        import sys
        from ._dispatch import _call_site
        call = _call_site(sys._getframe(2))
        where = "" if call is not None and "k" in call[1] else f" (position {pos})"
        raise TypeError(f"rot90(): argument 'k'{where} must be int, not {_type_name(k)}")
    return operator.index(k)


def _rot90_laid_out(input, k, dims):
    """torch's rot90: a flip laid out as its input (dense strides kept), transposed in place for odd ``k`` (so
    not contiguous); ``k % 4 == 0``: a contiguous clone."""
    r = _rot90(input, k, dims)
    k %= 4
    if k == 0:
        return r
    if k == 2:
        return lay_out(r, input, preserve_format)
    st = input.stride()
    if not V.is_dense(input._shape, st):
        st = V.infer_dense_strides(input._shape, st)[0]
    d0, d1 = (_wrap_dim(d, len(input._shape)) for d in dims)
    st = list(st)
    st[d0], st[d1] = st[d1], st[d0]
    st = tuple(st)
    if st == V.contiguous_strides(r._shape):
        return r
    r = with_memory_order(r, V.memory_order(r._shape, st), st)
    if r.stride() != st:  # (differing only at size-1 dims, which a layout ignores: PyTorch reports them)
        r._strides = st
    return r


def rot90(input, k=1, dims=(0, 1)):
    """``torch.rot90(x, k, dims)``: ``k`` quarter turns in the plane of ``dims``, from the first towards the
    second axis (Rot90Backward0; torch's strides: see :func:`_rot90_laid_out`)."""
    return _rot90_laid_out(input, _rot90_k(k, 2), dims)


def _rot90_method(self, k=1, dims=(0, 1)):
    return _rot90_laid_out(self, _rot90_k(k, 1), dims)


def _block_diag_prep(targs, sargs):
    for i, t in enumerate(targs[0]):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    return sargs


@defop("block_diag", float8=True, promote="cat", grad_fn="BlockDiagBackward0", tensors="list", prep=_block_diag_prep,
       method=False, function=False, device_check="cat", saves=())
def _block_diag(tensors):
    mats = [t.reshape((1, 1)) if t.ndim == 0 else t.reshape((1, -1)) if t.ndim == 1 else t for t in tensors]
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out = jnp.zeros((rows, cols), mats[0].dtype)
    r = c = 0
    for m in mats:
        out = out.at[r:r + m.shape[0], c:c + m.shape[1]].set(m)
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def block_diag(*tensors):
    """``torch.block_diag``: the inputs (0-d: 1x1, 1-d: one row) on the diagonal of a zero matrix, dtypes
    promoted; no inputs: an empty (1, 0) float tensor, as PyTorch's."""
    if not tensors:
        from .creation import empty
        return empty(1, 0)
    return _block_diag(tuple(_tensor_list("block_diag", tensors)))


def _tensor_list(name: str, tensors) -> list:
    """A ``tensors`` argument (a tuple or list of Tensors) with PyTorch's argument-parser TypeErrors."""
    if not isinstance(tensors, (list, tuple)):
        from .indexing import _tp_name
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {_tp_name(tensors)}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            from .indexing import _tp_name
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {_tp_name(t)}")
    return list(tensors)


def _cat_prep(targs, sargs):
    ts = _tensor_list("cat", targs[0])
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dim = sargs[0]
    nonempty = [t for t in ts if not (t.dim() == 1 and t._shape[0] == 0)]
    ref = nonempty[0] if nonempty else ts[0]
    nd = len(ref._shape)
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, nd)
    for i, t in enumerate(ts):
        if t.dim() == 1 and t._shape[0] == 0:
            continue
        if len(t._shape) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(t._shape)}")
        for j in range(nd):
            if j != d and t._shape[j] != ref._shape[j]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref._shape[j]} but got size {t._shape[j]} for tensor number {i} in the list.")
    return (d,)


@defop(float8=True, promote="cat", grad_fn="CatBackward0", tensors="list", prep=_cat_prep, method=False,
       aliases=("concat", "concatenate"), device_check="cat", saves=(),
       autocast={"cpu": "promote"})
def cat(tensors, dim=0):
    """Concatenate (dtypes promote, BC-11; legacy empty 1-d tensors are skipped)."""
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or list(tensors[:1])
    return jnp.concatenate(parts, axis=dim)


def _stack_prep(targs, sargs):
    ts = _tensor_list("stack", targs[0])
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(ts[1:], 1):
        if t._shape != ts[0]._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ts[0]._shape)} at entry 0 "
                               f"and {list(t._shape)} at entry {i}")
    return (_wrap_dim(sargs[0], len(ts[0]._shape) + 1),)


@defop("stack", float8=True, promote="cat", grad_fn="StackBackward0", tensors="list", prep=_stack_prep,
       method=False, function=False, device_check="cat", saves=(), autocast={"cpu": "promote"})
def _stack(tensors, dim=0):
    return jnp.stack(tensors, axis=dim)


def stack(tensors, *args, **kw):
    """``torch.stack(tensors, dim=0, *, out=None)``. torch stacks at a dim below the inputs' rank as ``cat`` along
    it, then a view splitting that dim in two: a result laid out as that cat's (channels-last inputs, all of one
    format: channels-last strides with the stacked dim split, ``(120, 3, 1, 30, 6)`` for two (2, 3, 4, 5) ones at
    dim 1); at the last dim it cats the unsqueezed inputs (contiguous)."""
    r = _stack(tensors, *args, **kw)
    if not isinstance(tensors, (list, tuple)) or not tensors or not isinstance(tensors[0], Tensor) or \
            tensors[0]._strides is None or kw.get("out") is not None:
        return r
    fmts = {suggest_memory_format(t) if isinstance(t, Tensor) else None for t in tensors}
    fmt = fmts.pop() if len(fmts) == 1 else contiguous_format
    shape = tensors[0]._shape
    dim = _wrap_dim(args[0] if args else kw.get("dim", 0), len(shape) + 1)
    if fmt is contiguous_format or dim == len(shape) or not r.numel():
        return r
    cs = fmt._strides(shape[:dim] + (len(tensors) * shape[dim],) + shape[dim + 1:])  # (the cat's strides)
    st = cs[:dim] + (cs[dim] * shape[dim],) + cs[dim:]
    return with_memory_order(r, V.memory_order(r._shape, st), st)


def broadcast_to(input, size):
    """``torch.broadcast_to`` / ``Tensor.broadcast_to``: ``expand`` (a view, ExpandBackward0, -1 keeps a size)."""
    return expand(input, tuple(size))


def _broadcast_to_method(self, *size, **kw):
    """``Tensor.broadcast_to`` takes the sizes as one sequence or as separate ints (``x.broadcast_to(2, 3)``)."""
    if "size" in kw:
        return broadcast_to(self, kw.pop("size"), **kw)
    return broadcast_to(self, size[0] if len(size) == 1 and not isinstance(size[0], int) else size)


# ---- helpers that are not ops (they call ops) -----------------------------------------------------
def contiguous(self, memory_format=None):
    """Self when already contiguous (VIEW-12), else a contiguous copy (CloneBackward0)."""
    fmt = contiguous_format if memory_format is None else memory_format
    if fmt is preserve_format:
        if self.is_contiguous():
            return self
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if self.is_contiguous(fmt):
        return self
    return clone(self, memory_format=fmt)


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.dim()
    if nd == 0:
        return reshape(input, (1,))
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._shape[:s] + (math.prod(input._shape[s:e + 1]),) + input._shape[e + 1:]
    return reshape(input, shape)


def ravel(input):
    return reshape(input, (-1,))


def view_as(self, other):
    return view(self, other._shape)


def reshape_as(self, other):
    return reshape(self, other._shape)


def expand_as(self, other):
    return expand(self, other._shape)


# ---- split / chunk / unbind: views of one input, ONE autograd node -----------------------------------------
def _split_rule(op, sig, sargs):
    return (None,), (sig[0][1],) * len(sargs[1])


def _split_name(targs, sargs):
    return {"split": "SplitBackward0", "split_with_sizes": "SplitWithSizesBackward0",
            "unbind": "UnbindBackward0"}[sargs[2]]


@defop("split_with_sizes", float8=True, promote=_split_rule, grad_fn=_split_name, nout=0, method=False,
       function=False, saves=())
def _split(input, dim, sizes, kind):
    """The pieces of ``input`` along ``dim`` (squeezed for unbind); its gradient is one concatenate of the
    pieces' gradients (``lax.split``'s transpose), not one padded copy of the input per piece."""
    parts = jax.lax.split(input, sizes, axis=dim)
    return tuple(jnp.squeeze(p, dim) for p in parts) if kind == "unbind" else tuple(parts)


def _multi_view(t, d, sizes, kind):
    """PyTorch's multi-output view functions: each piece is a view of ``t`` (narrow / select metadata), and
    all of them share one grad_fn (SplitBackward0, SplitWithSizesBackward0, UnbindBackward0), so the backward
    concatenates. As in PyTorch, such views may not be modified in place while they require grad."""
    from ._dispatch import record_views
    from ._registry import OPS
    if kind == "unbind":
        vop, args = OPS["select"], [(d, i) for i in range(len(sizes))]
    else:
        vop, args, start = OPS["narrow"], [], 0
        for n in sizes:
            args.append((d, start, n))
            start += n
    outs = []
    for a in args:
        shape, strides, offset = vop.view(t, a)[:3]
        outs.append(t._view_of(shape, strides, offset, (vop, a)))
    outs = tuple(outs)
    record_views(OPS["split_with_sizes"], t, outs, (d, tuple(sizes), kind))
    return outs


def unbind(input, dim=0):
    d = _dim_no_scalar(dim, input.dim())
    return _multi_view(input, d, [1] * input._shape[d], "unbind")


def _split_sizes(sizes, pos):
    """torch's ``int[] split_sizes`` argument: ints or one-element integer tensors (``operator.index``)."""
    head = f"split_with_sizes(): argument 'split_sizes' (position {pos}) must be tuple of ints"
    if isinstance(sizes, Tensor) or not hasattr(sizes, "__iter__"):
        raise TypeError(f"{head}, not {type(sizes).__name__}")
    out = []
    for i, v in enumerate(sizes):
        try:
            out.append(operator.index(v))
        except TypeError:
            if isinstance(v, Tensor):
                raise TypeError(f"split_with_sizes(): argument 'split_sizes' failed to unpack the object at pos {pos} "
                                "with error \"type must be tuple of ints,but got Tensor\"") from None
            raise TypeError(f"{head}, but found element of type {type(v).__name__} at pos {i}") from None
    return out


def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None, _pos=2):
    """(``split_size=``: ``Tensor.split``'s name of the second argument.)"""
    split_size_or_sections = either_arg(split_size_or_sections, split_size, "split", "split_size",
                                        "split() missing 1 required positional argument: 'split_size_or_sections'")
    if tensor.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor.dim())
    size = tensor._shape[d]
    if isinstance(split_size_or_sections, np.integer):  # (torch's parser: not an int for split's overloads)
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                        f"numpy.{type(split_size_or_sections).__name__}")
    if isinstance(split_size_or_sections, Tensor) and split_size_or_sections.numel() == 1:
        split_size_or_sections = int(split_size_or_sections)  # (Tensor.split's int(); else split_with_sizes')
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sizes = [min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sizes = _split_sizes(split_size_or_sections, _pos)
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                               f"dimension {dim}), but got split_sizes={sizes}")
    return _multi_view(tensor, d, sizes, "split" if isinstance(split_size_or_sections, int) else "split_with_sizes")


def chunk(input, chunks, dim=0):
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    if input.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d]
    if size == 0:  # PyTorch: `chunks` empty pieces (split_with_sizes of zeros)
        return split(input, [0] * chunks, d)
    return split(input, -(-size // chunks), d)


def _slice_bounds(start, end, size):
    """``at::slice``'s handling of ``start:end``: negatives wrap once, both clamp to ``[0, size]``, end >= start."""
    start, end = start + size if start < 0 else start, end + size if end < 0 else end
    start = min(max(start, 0), size)
    return start, min(max(end, start), size)


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """PyTorch's ``tensor_split``: ``n`` sections (an int or a 0-d long tensor) or split points (a sequence or a
    1-d long tensor), each piece ``input[prev:idx]`` with slice semantics (negative indices wrap, clamping).
    (``sections=`` / ``indices=`` / ``tensor_indices_or_sections=``: the names of PyTorch's three overloads.)"""
    given = [v for v in (indices_or_sections, sections, indices, tensor_indices_or_sections) if v is not None]
    if len(given) != 1:
        raise TypeError("tensor_split() missing 1 required positional argument: 'indices_or_sections'" if not given
                        else "tensor_split() got multiple values for argument 'indices_or_sections'")
    indices_or_sections = given[0]
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.dtype is not D.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{t.dtype.short}")
        if t.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {t.dim()} dims")
        indices_or_sections = int(t.item()) if t.dim() == 0 else [int(i) for i in t.tolist()]
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d]
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        sizes = [q + 1] * r + [q] * (n - r)
        bounds, start = [], 0
        for k in sizes:
            bounds.append((start, start + k))
            start += k
    else:
        idx = [int(i) for i in indices_or_sections]
        bounds = [_slice_bounds(a, b, size) for a, b in zip([0] + idx, idx + [size])]
    return tuple(narrow(input, d, a, b - a) for a, b in bounds)


def T(self):
    nd = self.dim()
    if nd == 0:  # (PyTorch's TORCH_WARN_ONCEs: this one, or the non-2-D one below)
        _warn_0d_once("T", "This function is the identity in these cases.")
    elif nd != 2:
        warn_once("T_not_2d", "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                  "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                  "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. "
                  "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)")
    return permute(self, tuple(range(nd - 1, -1, -1)))


_LINE_0D = {"T": 4321, "mT": 4373, "H": 4335, "mH": 4382}  # (where TensorShape.cpp warns, for the suffix)


def _warn_0d_once(name, advice):
    """PyTorch's TORCH_WARN_ONCE for ``Tensor.T`` / ``mT`` / ``mH`` / ``H`` on a 0-d tensor (they return it as it
    is)."""
    warn_once(("0-d", name), f"Tensor.{name} is deprecated on 0-D tensors. {advice} (Triggered internally at "
                             f"/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:{_LINE_0D[name]}.)")


def mT(self):
    if self.dim() == 0:
        _warn_0d_once("mT", "This function is the identity in these cases.")
        return self
    if self.dim() < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(self, -2, -1)


def _nonempty(name: str, tensors) -> list:
    ts = _tensor_list(name, tensors)
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


def _out(out, r, name):
    """An ``out=`` of a composite: the one out= path (``_dispatch.write_out``); ``name``: the aten op writing it."""
    if out is None:
        return r
    from ._dispatch import write_out
    return write_out(out, r, name)


def hstack(tensors, *, out=None):
    tensors = list(atleast_1d(_nonempty("hstack", tensors)))
    return _out(out, cat(tensors, 0 if tensors[0].dim() == 1 else 1), "cat")


def vstack(tensors, *, out=None):
    return _out(out, cat([t if t.dim() >= 2 else reshape(t, (1, -1)) for t in _nonempty("vstack", tensors)], 0), "cat")


def row_stack(tensors, *, out=None):
    """``torch.row_stack``: an alias of ``vstack``."""
    return vstack(_tensor_list("row_stack", tensors), out=out)


def column_stack(tensors, *, out=None):
    """0-d and 1-d inputs as columns, then concatenated along dim 1."""
    return _out(out, cat([reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t
                          for t in _nonempty("column_stack", tensors)], 1), "cat")


def dstack(tensors, *, out=None):
    """Concatenated along the third dim after ``atleast_3d``."""
    return _out(out, cat(list(atleast_3d(_nonempty("dstack", tensors))), 2), "cat")


def _split_dim(name, input, sections, dim, need):
    if input.dim() < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{input.dim()} dimensions!")
    if isinstance(sections, int):
        size = input._shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{size} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 of a 1-d tensor); an int must divide that dim."""
    return _split_dim("hsplit", input, indices_or_sections, 0 if input.dim() == 1 else 1, 1)


def vsplit(input, indices_or_sections):
    return _split_dim("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    return _split_dim("dsplit", input, indices_or_sections, 2, 3)


def split_with_sizes(input, split_sizes, dim=0, _pos=2):
    return split(input, _split_sizes(split_sizes, _pos), dim, _pos=_pos)


def _split_with_sizes_method(self, split_sizes, dim=0):
    return split_with_sizes(self, split_sizes, dim, _pos=1)  # (the method's parser counts from self)


def _atleast(n, tensors):
    single = len(tensors) == 1 and not isinstance(tensors[0], (list, tuple))
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = []
    for t in ts:
        nd = t.dim()
        if nd >= n:
            out.append(t)
        elif nd == 0:
            out.append(reshape(t, (1,) * n))
        elif n == 3 and nd == 1:
            out.append(t.unsqueeze(0).unsqueeze(-1))
        else:
            out.append(t.unsqueeze(0) if n == 2 else t.unsqueeze(-1))
    return out[0] if single else tuple(out)


def atleast_1d(*tensors):
    """The tensor itself when it has >= 1 dims, else a view of it with one; several (or a list): a tuple."""
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def diagflat(input, offset=0):
    """The flattened input on diagonal ``offset`` of a square matrix (DiagEmbedBackward0, as PyTorch's)."""
    return diag_embed(reshape(input, (-1,)), offset)


def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """``n``-th forward difference along ``dim`` (bool: ``logical_xor``), after concatenating ``prepend`` /
    ``append``."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.dim())
    for other in (prepend, append):
        if other is None:
            continue
        if other.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(input.dim()):
            if i != d and other._shape[i] != input._shape[i]:
                raise RuntimeError(f"diff expects the shape of tensor to prepend or append to match that of input "
                                   f"except along the differencing dimension; input.size({i}) = {input._shape[i]}, "
                                   f"but got tensor.size({i}) = {other._shape[i]}")
    if prepend is not None or append is not None:
        input = cat([t for t in (prepend, input, append) if t is not None], d)
    if n == 0:  # a copy (CopyBackwards, as PyTorch's)
        from .creation import empty_like
        return _out(out, empty_like(input).copy_(input), "copy_")
    for _ in range(n):
        m = input._shape[d]
        if m == 0:
            break
        hi, lo = narrow(input, d, 1, m - 1), narrow(input, d, 0, m - 1)
        input = hi.logical_xor(lo) if input.dtype is D.bool else hi - lo
    return _out(out, input, "logical_xor" if input.dtype is D.bool else "sub")


@defop(required=True, float8=True, promote="elementwise", grad_fn="UnsafeViewBackward0", tensors=2, broadcast=False, saves=())
def kron(input, other):
    """Kronecker product: ``input``'s dims interleaved with ``other``'s (the shorter shape padded with leading
    ones), multiplied, and viewed as the product shape."""
    nd = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + input.shape)
    b = other.reshape((1,) * (nd - other.ndim) + other.shape)
    out = a.reshape(sum(((s, 1) for s in a.shape), ())) * b.reshape(sum(((1, s) for s in b.shape), ()))
    return out.reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))


def tensordot(a, b, dims=2, out=None):
    """Contract ``a``'s dims ``dims[0]`` with ``b``'s ``dims[1]`` (an int n: ``a``'s last n with ``b``'s first
    n): torch.functional's parsing of ``dims``, then ATen's kernel: a contracted dim of size 1 against size n is
    summed away first (it broadcasts), both operands permuted and reshaped to matrices, one ``mm``, the result
    viewed back."""
    from .linalg import mm
    from .reduction import sum as _sum
    if not isinstance(dims, (tuple, list, Tensor, int)):  # (torch's check: a NumPy integer or array is refused)
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, (tuple, list)):
        da, db = dims  # (torch unpacks: a ValueError for another length)
    elif isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims._shape[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims._shape[0]}")
            da, db = dims[0].tolist(), dims[1].tolist()
        else:
            n = int(dims.item())
            if n < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            da, db = list(range(-n, 0)), list(range(n))  # (no bound check: a dim out of range is ATen's IndexError)
    else:
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))  # (a's as negative dims: PyTorch's error names them so)
    da = list(_int_seq(da, "tensordot", "dims_self", 3, single=False))
    db = list(_int_seq(db, "tensordot", "dims_other", 4, single=False))
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    ta, tb = a, b
    for x, y in zip(da, db):
        sx, sy = a._shape[_wrap_dim(x, a.dim())], b._shape[_wrap_dim(y, b.dim())]
        if sy == 1:  # (broadcast contracted dims are summed right away, as ATen)
            ta = _sum(ta, x, True, dtype=ta.dtype)
        elif sx == 1:
            tb = _sum(tb, y, True, dtype=tb.dtype)
        elif sx != sy:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sx} in dim {x} "
                               f"and second has size {sy} in dim {y}")
    wa, wb = _dim_set(da, a.dim()), _dim_set(db, b.dim())
    ka = [i for i in range(a.dim()) if i not in wa]
    kb = [i for i in range(b.dim()) if i not in wb]
    k = math.prod(ta._shape[i] for i in wa)
    am = reshape(permute(ta, tuple(ka + wa)), (math.prod(ta._shape[i] for i in ka), k))
    bm = reshape(permute(tb, tuple(wb + kb)), (k, math.prod(tb._shape[i] for i in kb)))
    res = reshape(mm(am, bm), tuple(ta._shape[i] for i in ka) + tuple(tb._shape[i] for i in kb))
    if out is not None:
        from ._dispatch import write_out
        if isinstance(out, Tensor) and out.dtype is not res.dtype:  # (ATen's tensordot_out, before its copy)
            raise RuntimeError(f"tensordot: Expected the output tensor to have dtype {res.dtype.short}, but got an "
                               f"output tensor with dtype {out.dtype.short}")
        return write_out(out, res)
    return res


def _dim_set(dims, nd: int) -> list:
    """ATen's ``dim_list_to_bitset``: the dims wrapped, each at most once."""
    seen = []
    for d in dims:
        w = _wrap_dim(d, nd)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return seen


def cartesian_prod(*tensors):
    """Every combination of the 1-d inputs' elements, one per row (``meshgrid`` then ``stack``)."""
    if len(tensors) == 1:
        if tensors[0].dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(tensors[0]._shape)}")
        return tensors[0]
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._shape)}")
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-d tensor's elements, one per row, in ``itertools`` order."""
    import itertools
    from .creation import empty
    from .indexing import _host_tensor
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    n = input._shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = np.asarray(list(gen(range(n), r)), dtype=np.int64).reshape(-1, r)
    return stack([input[_host_tensor(combos[:, j], D.int64, input.device)] for j in range(r)], 1)


def vander(x, N=None, increasing=False):
    """Vandermonde matrix: columns ``x ** (N-1) ... x ** 0`` (``increasing``: reversed); integer and bool inputs
    give int64, as PyTorch's ``promote_types(dtype, int64)``."""
    from .creation import ones
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = D.int64 if x.dtype.category <= D.INT else x.dtype
    res = ones(x._shape[0], min(n, 1), dtype=dt, device=x.device)
    if n > 1:
        res = cat([res, x.to(dt).unsqueeze(1).expand(x._shape[0], n - 1).cumprod(1)], 1)
    return res if increasing else flip(res, (1,))


def is_nonzero(input):
    """``bool(input)`` for a one-element tensor (PyTorch's errors for none or several)."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input, other):
    return input._shape == other._shape


def is_signed(input):
    return input.dtype.is_signed


def broadcast_tensors(*tensors):
    """``torch.broadcast_tensors``: each tensor expanded to the common shape; one that already has it is returned
    itself, as PyTorch's (no view, no ExpandBackward0)."""
    from ._dispatch import broadcast_shapes
    shape = broadcast_shapes(*[t._shape for t in tensors])
    return tuple(t if t._shape == shape else expand(t, shape) for t in tensors)


def numel(input):
    return input.numel()


def broadcast_shapes(*shapes):
    """``torch.broadcast_shapes`` with PyTorch's error (BC-07)."""
    out = []
    for i, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        nd = max(len(out), len(s))
        a = [1] * (nd - len(out)) + list(out)
        b = [1] * (nd - len(s)) + list(s)
        for j in range(nd):
            if a[j] != b[j] and a[j] != 1 and b[j] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {b[j]} at {j - nd}! Mismatching "
                                   f"argument at index {i} had {tuple(s)}; but expected shape should be broadcastable "
                                   f"to {list(out)}")
            a[j] = b[j] if a[j] == 1 else a[j]
        out = a
    return Size(out)


# ---- repeat_interleave / meshgrid (composites of the ops above, as in PyTorch) ------------------------------
def _repeat_index(repeats, output_size):
    """``torch.repeat_interleave(repeats)``: ``i`` repeated ``repeats[i]`` times (repeats' integer dtype)."""
    from ._dispatch import data_dependent_error
    if repeats.dim() != 1:  # (0-d too: ATen's check here; the input form expands a 0-d repeats first)
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (D.int64, D.int32):
        raise no_kernel("repeat_interleave_cpu", repeats.dtype)
    flat = reshape(repeats, (-1,))
    arr = flat._array
    if isinstance(arr, jax.core.Tracer):
        if output_size is None:
            raise data_dependent_error("repeat_interleave with a tensor of repeats and no output_size", arr)
        from . import _deferred  # (eager's value checks, deferred to after the program)
        _deferred.check(arr < 0, arr, lambda v, i: RuntimeError("repeats can not be negative"))
        total = jnp.sum(arr)
        _deferred.check(total != int(output_size), total,
                        lambda v, i: RuntimeError("allocated size does not match required size"))
        out = jnp.repeat(jnp.arange(arr.shape[0], dtype=arr.dtype), arr, total_repeat_length=int(output_size))
        return type(repeats)._from_array(out, repeats.dtype, repeats.device)
    host = np.asarray(arr)
    if (host < 0).any():
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and int(output_size) != int(host.sum()):
        raise RuntimeError("allocated size does not match required size")
    out = np.repeat(np.arange(host.shape[0], dtype=host.dtype), host)
    from .indexing import _host_tensor
    return _host_tensor(out, repeats.dtype, repeats.device)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or each slice along ``dim``) ``repeats`` times: an int (a view chain, ViewBackward0)
    or a 0-d / 1-d integer tensor (``index_select``, IndexSelectBackward0). ``repeat_interleave(repeats)`` gives
    the indices ``i`` repeated ``repeats[i]`` times."""
    from .._tensor.tensor import Tensor
    if repeats is None:
        return _repeat_index(input, output_size)
    if dim is None:
        input, d = flatten(input), 0
    else:
        d = _wrap_dim(dim, input.dim())
    n = input._shape[d] if input._shape else 1
    if not isinstance(repeats, Tensor):
        repeats = int(repeats)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and int(output_size) != n * repeats:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * repeats} but got "
                               f"{output_size}")
        shape = input._shape
        big = shape[:d + 1] + (repeats,) + shape[d + 1:]
        from .view_ops import unsqueeze
        rep = expand(unsqueeze(input, d + 1), big)
        return view(contiguous(rep), shape[:d] + (n * repeats,) + shape[d + 1:])
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.numel() == 1:
        repeats = expand(reshape(repeats, (1,)), (n,))
    elif repeats._shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats._shape[0]} and input.size({d}) = {n}")
    from .gather_scatter import index_select
    return index_select(input, d, _repeat_index(repeats, output_size))


def _repeat_interleave_method(self, repeats, dim=None, *, output_size=None):
    """``Tensor.repeat_interleave``: ``repeats`` is required (the index form is ``torch.repeat_interleave(r)``)."""
    return repeat_interleave(self, repeats, dim, output_size=output_size)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d / 1-d tensors (each an expanded view: ExpandBackward0). ``indexing='ij'``
    (the default, with PyTorch's warning when not given) or ``'xy'`` (first two dims swapped)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warn_once("meshgrid_indexing", "torch.meshgrid: in an upcoming release, it will be required to pass the "
                  "indexing argument. (Triggered internally at "
                  "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)")
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    grid = tuple(t.numel() for t in ts)
    out = []
    for i, t in enumerate(ts):
        vshape = tuple(-1 if j == i else 1 for j in range(len(ts)))
        out.append(expand(view(t, vshape), grid))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


METHODS = {"contiguous": contiguous, "clone": clone, "flatten": flatten, "ravel": ravel, "view_as": view_as,
           "reshape_as": reshape_as, "expand_as": expand_as, "unbind": unbind, "split": split, "chunk": chunk,
           "tensor_split": tensor_split, "T": property(T), "mT": property(mT),
           "repeat_interleave": _repeat_interleave_method, "broadcast_to": _broadcast_to_method, "diff": diff,
           "fliplr": fliplr, "flipud": flipud, "diagflat": diagflat, "hsplit": hsplit,
           "vsplit": vsplit, "dsplit": dsplit, "split_with_sizes": _split_with_sizes_method,
           "is_nonzero": is_nonzero, "is_same_size": is_same_size, "is_signed": is_signed, "rot90": _rot90_method,
           "flip": _flip_method, "roll": roll}
FUNCTIONS = {"rot90": rot90, "flip": _flip_function, "roll": roll, "stack": stack, "clone": clone, "flatten": flatten,
             "ravel": ravel, "unbind": unbind, "split": split, "chunk": chunk,
             "tensor_split": tensor_split, "hstack": hstack, "vstack": vstack,
             "broadcast_tensors": broadcast_tensors, "numel": numel, "broadcast_shapes": broadcast_shapes,
             "repeat_interleave": repeat_interleave, "meshgrid": meshgrid, "broadcast_to": broadcast_to,
             "row_stack": row_stack, "column_stack": column_stack, "dstack": dstack, "hsplit": hsplit,
             "vsplit": vsplit, "dsplit": dsplit, "split_with_sizes": split_with_sizes, "atleast_1d": atleast_1d,
             "atleast_2d": atleast_2d, "atleast_3d": atleast_3d, "fliplr": fliplr, "flipud": flipud,
             "diagflat": diagflat, "diff": diff, "tensordot": tensordot,
             "cartesian_prod": cartesian_prod, "combinations": combinations, "vander": vander,
             "is_nonzero": is_nonzero, "is_same_size": is_same_size, "is_signed": is_signed,
             "block_diag": block_diag}
