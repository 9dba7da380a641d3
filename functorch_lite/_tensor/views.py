"""Stride bookkeeping for views (spec §5).

A view tensor is (storage, sizes, strides, offset, view function). Strides and offsets are in
elements of the base tensor's logical, contiguous layout; they reproduce PyTorch's ``stride()``,
``storage_offset()``, ``is_contiguous()`` and decide when ``view()`` is legal. The view function
(a composition of jnp reshapes/slices/transposes) materialises the view from the base array; the
strides give the flat index map used to write through the view in one scatter.
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np


def contiguous_strides(shape) -> tuple:
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def is_contiguous(shape, strides) -> bool:
    if 0 in shape:
        return True
    expected = 1
    for size, st in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if size == 0:
            return True
        if st != expected:
            return False
        expected *= size
    return True


def view_strides(oldshape, oldstride, newshape):
    """PyTorch's ``computeStride``: strides for viewing (oldshape, oldstride) as newshape, or None."""
    numel = math.prod(oldshape)
    if not oldshape:  # a 0-dim tensor views as any all-ones shape
        return contiguous_strides(newshape)
    if numel == 0:
        return contiguous_strides(newshape) if tuple(oldshape) != tuple(newshape) else tuple(oldstride)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1] if oldstride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def infer_shape(shape, numel: int) -> tuple:
    """Resolve one -1 in a requested shape with PyTorch's errors (VIEW-16..21)."""
    shape = tuple(shape)
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if type(known) is not int:  # (NumPy integers among the sizes: the result's are Python ints, as torch's)
        shape = tuple(int(s) if isinstance(s, np.integer) else s for s in shape)
        known = int(known) if isinstance(known, np.integer) else known
    if infer is not None:
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                                   "unspecified dimension size -1 can be any value and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def index_map(shape, strides, offset) -> np.ndarray:
    """Flat base indices of every element of a view, in the view's shape (int64 numpy)."""
    idx = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (size, st) in enumerate(zip(shape, strides)):
        r = np.arange(size, dtype=np.int64) * st
        idx = idx + r.reshape((size,) + (1,) * (len(shape) - d - 1))
    return idx


_IDX_CACHE: dict = {}
_IDX_CACHE_MAX = 512  # entries, each of at most _IDX_CACHE_NUMEL elements
_IDX_CACHE_NUMEL = 1 << 16


def device_index_map(shape, strides, offset, base):
    """``index_map`` placed on ``base``'s device (numpy under a trace): what a write through a view scatters with
    and what its gradient is scattered back with (``copy_slices``). Small maps are cached by geometry and device,
    so a view taken again every step (``y[0]`` after ``y.add_(1)``) does not pay a host-to-device copy each time."""
    if isinstance(base, jax.core.Tracer) or type(base) is jax.ShapeDtypeStruct:
        return index_map(shape, strides, offset)
    dev = next(iter(base.devices()))
    key = (shape, strides, offset, dev)
    idx = _IDX_CACHE.get(key)
    if idx is None:
        idx = jax.device_put(index_map(shape, strides, offset), dev)
        if math.prod(shape) <= _IDX_CACHE_NUMEL:
            if len(_IDX_CACHE) >= _IDX_CACHE_MAX:
                _IDX_CACHE.pop(next(iter(_IDX_CACHE)))
            _IDX_CACHE[key] = idx
    return idx


def has_internal_overlap(shape, strides) -> bool:
    """True when two elements share one memory location (an expanded view, VIEW-40)."""
    return any(st == 0 and size > 1 for size, st in zip(shape, strides))


@functools.lru_cache(maxsize=4096)
def overlap_kind(shape, strides) -> int:
    """0: every element has its own memory location; 1: an expanded view (a 0 stride: ``has_internal_overlap``,
    PyTorch's MemOverlap::Yes); 2: elements share locations otherwise (``unfold`` with step < size, an overlapping
    ``as_strided``: PyTorch's TooHard, which its kernels run through element by element). Exact: where the strides
    sorted do not nest (each above the reach of the smaller ones), the offsets are enumerated."""
    if has_internal_overlap(shape, strides):
        return 1
    reach = 0
    for st, n in sorted((st, n) for n, st in zip(shape, strides) if n > 1):
        if st <= reach:
            break
        reach += st * (n - 1)
    else:
        return 0
    offs = np.zeros((), np.int64)
    for n, st in zip(shape, strides):
        offs = offs[..., None] + np.arange(n, dtype=np.int64) * st
    return 2 if np.unique(offs).size != offs.size else 0


def bitcast(arr, dtype):
    """``lax.bitcast_convert_type`` (its shapes: a trailing dim added where the element shrinks, consumed where it
    grows) that also handles bool (through uint8, as PyTorch's 1-byte bool) and complex (which lax casts only to
    itself: through the bytes of its (real, imag) pairs)."""
    dst = jnp.dtype(dtype)
    if arr.dtype == dst:
        return arr
    if arr.dtype == jnp.bool_:
        arr = arr.astype(jnp.uint8)
    if dst == jnp.bool_:
        return jax.lax.bitcast_convert_type(arr, jnp.uint8) != 0
    if not (jnp.iscomplexobj(arr) or dst.kind == "c"):
        return jax.lax.bitcast_convert_type(arr, dst)
    s, d = arr.dtype.itemsize, dst.itemsize
    b = _bytes(arr)  # (*arr.shape, s)
    lead = arr.shape if s >= d else arr.shape[:-1]
    b = b.reshape(*lead, *((s // d,) if s > d else ()), d)
    if dst.kind != "c":
        return jax.lax.bitcast_convert_type(b, dst) if d > 1 else jax.lax.bitcast_convert_type(b[..., 0], dst)
    parts = jax.lax.bitcast_convert_type(b.reshape(*b.shape[:-1], 2, d // 2), jnp.finfo(dst).dtype)
    return jax.lax.complex(parts[..., 0], parts[..., 1])


def _bytes(arr):
    """``arr``'s elements as their bytes (uint8, a trailing dim of the item size); complex: real then imaginary."""
    if jnp.iscomplexobj(arr):
        pairs = jnp.stack([jnp.real(arr), jnp.imag(arr)], axis=-1)
        return _bytes(pairs).reshape(*arr.shape, arr.dtype.itemsize)
    if arr.dtype.itemsize == 1:
        return jax.lax.bitcast_convert_type(arr, jnp.uint8)[..., None]
    return jax.lax.bitcast_convert_type(arr, jnp.uint8)


def is_dense(shape, strides) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: the elements tile a block of memory exactly."""
    if 0 in shape:
        return True
    dims = sorted((d for d, n in enumerate(shape) if n != 1), key=lambda d: strides[d])
    need = 1
    for d in dims:
        if strides[d] != need:
            return False
        need *= shape[d]
    return True


def dim_order(shape, strides, contiguous: bool, channels_last: bool, check: bool = False) -> tuple:
    """``Tensor.dim_order()``: torch's logical-to-physical permutation of one tensor (its
    compute_elementwise_output_logical_to_physical_perm): an insertion sort of the dims from the innermost, a dim
    going inward of another when its stride is smaller (equal strides: a smaller size; a zero stride: no order).
    Returns (the order, ``check`` and some neighbours in it left unordered)."""
    n = len(shape)
    if n <= 1:
        return tuple(range(n)), False
    if contiguous != channels_last:
        return (tuple(range(n)) if contiguous else (0, *range(2, n), 1)), False

    def ge(a, b):
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def cmp(a, b):
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        return -1 if ge(sb, sa) else 1
    perm = _insertion_perm(n, cmp)
    ambiguous = check and any(cmp(perm[i], perm[i + 1]) != -1 for i in range(n - 1))
    return tuple(reversed(perm)), ambiguous


def _insertion_perm(n, cmp) -> list:
    """The dims innermost first, by PyTorch's insertion sort with ambiguous comparisons (``cmp(a, b)`` > 0: ``a``
    goes outward of ``b``; 0: no order, the sort carries on; < 0: it stops), from ``n - 1, ..., 0``."""
    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = cmp(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def memory_order(shape, strides) -> tuple:
    """The dims from outermost to innermost in memory (stable: ties keep logical order)."""
    return tuple(sorted(range(len(shape)), key=lambda d: -strides[d]))


def inverse_perm(perm) -> tuple:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


class StridedGather:
    """A view-chain step (see Tensor._array) reading an arbitrary strided layout from a flat base.

    Used where no chain of view ops reproduces a layout (a non-dense NumPy array, CRE-60):
    ``sargs = (shape, strides, offset)``; the step gathers the elements with :func:`index_map`."""

    name = "as_strided"
    dynamic = None  # the layout is the whole key (no traced positions)

    def impl_for(self, sargs):
        shape, strides, offset = sargs
        idx = index_map(shape, strides, offset)

        def gather(a):
            return a.reshape(-1)[jnp.asarray(idx)]
        return gather

    def __repr__(self):
        return "<view step as_strided>"


STRIDED = StridedGather()


class CutStep:
    """A view-chain step that reads its input unchanged but cut from JAX's differentiation
    (``lax.stop_gradient``): inside a differentiating ``func`` transform, what ``detach()``, ``.data`` and a view
    taken under ``no_grad`` return (``Tensor._cut``). Writes go through the strides, so they reach the storage as
    in PyTorch; reads give values gradients do not flow back through."""

    name = "stop_gradient"
    dynamic = None

    def impl_for(self, sargs):
        return jax.lax.stop_gradient

    def __repr__(self):
        return "<view step stop_gradient>"


CUT = CutStep()
CUT_STEP = (CUT, ())


def infer_dense_strides(shape, strides) -> tuple:
    """PyTorch's ``infer_dense_strides``: dense strides keeping the input's dim order (the layout of
    ``empty_like``/``clone`` of a non-dense tensor); dims with stride 0 keep their place.
    Returns (strides, memory order outermost first)."""
    nd = len(shape)
    perm = _stride_order(shape, (strides,))  # innermost first
    out = [0] * nd
    cur = 1
    for d in perm:
        out[d] = cur
        if shape[d] > 1:
            cur *= shape[d]
    return tuple(out), tuple(reversed(perm))


def iter_strides(shape, operands):
    """The strides ATen's TensorIterator gives a pointwise op's new output of ``shape`` (``operands``: each input's
    (shape, strides) in argument order, a Python number as ``((), ())``), or None for contiguous ones. Its fast
    setup first (operands all of the output's shape: all contiguous -> contiguous; all channels-last -> channels-last;
    all non-overlapping and dense with one set of strides -> those strides), else ``reorder_dimensions``: the dims
    sorted innermost first by the operands' strides (the first operand with a strict order decides; broadcast dims,
    stride 0, give none; equal strides put the smaller size inward), the output dense in that order (its sizes'
    running product, as ``compatible_stride``; the reversed order, contiguous)."""
    nd = len(shape)
    if nd <= 1:
        return None
    if all(s == shape for s, _ in operands):
        if all(is_contiguous(s, st) for s, st in operands):
            return None
        fmt = channels_last if nd == 4 else channels_last_3d if nd == 5 else None
        if fmt is not None and all(is_format_contiguous(s, st, fmt._perm) for s, st in operands):
            return fmt._strides(shape)
        first = operands[0][1]
        if all(st == first and is_dense(s, st) for s, st in operands):
            return tuple(first)
    bst = []
    for s, st in operands:
        off = nd - len(s)
        b = [0] * nd
        for i, n in enumerate(s):
            b[off + i] = 0 if n == 1 and shape[off + i] != 1 else st[i]
        bst.append(b)
    perm = _stride_order(shape, bst)  # innermost first
    if perm == list(range(nd - 1, -1, -1)):
        return None
    out, cur = [0] * nd, 1
    for d in perm:
        out[d] = cur
        cur *= shape[d]
    return tuple(out)


def _stride_order(shape, stride_lists) -> list:
    """ATen's dim sort by strides (``reorder_dimensions``; ``infer_dense_strides``, one list): the dims innermost
    first, the first stride list with a strict order between two dims deciding (a 0 stride gives none; equal strides
    put the smaller size inward)."""
    def should_swap(d0, d1):
        for st in stride_lists:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    return _insertion_perm(len(shape), should_swap)


def is_format_contiguous(shape, strides, order) -> bool:
    """Contiguous in the memory order ``order`` (its dims outermost first: channels_last's (0, 2, 3, 1))."""
    return is_contiguous(tuple(shape[d] for d in order), tuple(strides[d] for d in order))


class memory_format:
    """``torch.memory_format``: ``contiguous_format``, ``preserve_format``, ``channels_last(_3d)``."""
    __slots__ = ("name", "_perm", "_rank")

    def __init__(self, name, perm=None, rank=None):
        self.name = name
        self._perm = perm  # memory order of the dims (outermost first), for the channels-last formats
        self._rank = rank

    def _order(self, ndim):
        """Memory order of the dims for a rank-``ndim`` tensor, None when the format does not apply."""
        if self._perm is None:
            return tuple(range(ndim))
        return self._perm if ndim == self._rank else None

    def _strides(self, shape):
        """The strides this format gives a new tensor of ``shape``, as c10's: contiguous, each the product of the
        later sizes with a 0 counted as 1; channels-last, torch's ``get_channels_last_strides`` (the sizes as they
        are); a channels-last format of another rank raises torch's error."""
        order = self._order(len(shape))
        if order is None:
            raise RuntimeError(f"required rank {self._rank} tensor to use {self.name} format")
        if self._perm is None:
            return contiguous_strides(shape)
        out, cur = [0] * len(shape), 1
        for d in reversed(order):
            out[d] = cur
            cur *= shape[d]
        return tuple(out)

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        # torch pickles the formats by name, so pickle / copy / deepcopy give back the singleton
        return self.name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", (0, 2, 3, 1), 4)
channels_last_3d = memory_format("channels_last_3d", (0, 2, 3, 4, 1), 5)
MEMORY_FORMATS = {"contiguous_format": contiguous_format, "preserve_format": preserve_format,
                  "channels_last": channels_last, "channels_last_3d": channels_last_3d}


def shape_str(shape) -> str:
    """A shape as PyTorch prints it in messages: ``[2, 3]``."""
    return "[" + ", ".join(str(int(e)) for e in shape) + "]"


# ---- complex storages seen through float views and back (real / imag / view_as_real / view_as_complex) -------
def view_sign(chain) -> bool:
    """PyTorch's conjugate / negative bit of a view: True when the view reads its storage conjugated (a complex
    view after an odd number of ``conj`` steps) or negated (``x.conj().imag``). Derived from the view chain: a
    step whose op has ``conj="flip"`` toggles it, ``conj="reset"`` clears it (``real``, ``view_as_real``)."""
    s = False
    for op, _ in chain or ():
        c = getattr(op, "conj", None)
        if c == "flip":
            s = not s
        elif c == "reset":
            s = False
    return s


def apply_sign(arr):
    """The inverse (and forward: an involution) of a set conjugate / negative bit."""
    return jnp.conj(arr) if jnp.iscomplexobj(arr) else -arr


def unit_compatible(base_dt, view_dt) -> bool:
    """A view of dtype ``view_dt`` over a ``base_dt`` storage whose strides count other units: a float view
    over a complex storage of the same precision (``x.real``), or the reverse (``view_as_complex``)."""
    b, v = jnp.dtype(base_dt), jnp.dtype(view_dt)
    if jnp.issubdtype(b, jnp.complexfloating) and v == jnp.finfo(b).dtype:
        return True
    return jnp.issubdtype(v, jnp.complexfloating) and b == jnp.finfo(v).dtype


def to_units(base, view_dt):
    """``base`` as a flat array counted in elements of ``view_dt`` (complex -> interleaved (re, im) floats,
    floats -> complex pairs); the index maps of views with PyTorch's strides address it."""
    v = jnp.dtype(view_dt)
    if base.dtype.itemsize == v.itemsize:
        return base.reshape(-1)
    if jnp.iscomplexobj(base):
        return jnp.stack([jnp.real(base), jnp.imag(base)], -1).reshape(-1)
    flat = base.reshape(-1)
    if flat.shape[0] % 2:
        flat = jnp.concatenate([flat, jnp.zeros((1,), flat.dtype)])
    return jax.lax.complex(flat[0::2], flat[1::2])


def from_units(flat, shape, dtype):
    """Inverse of :func:`to_units`: the flat ``flat`` back as an array of ``shape`` / ``dtype``."""
    d = jnp.dtype(dtype)
    if flat.dtype.itemsize == d.itemsize:
        return flat.reshape(shape)
    if jnp.issubdtype(d, jnp.complexfloating):
        pairs = flat.reshape(-1, 2)
        return jax.lax.complex(pairs[:, 0], pairs[:, 1]).reshape(shape)
    n = math.prod(shape)
    return jnp.stack([jnp.real(flat), jnp.imag(flat)], -1).reshape(-1)[:n].reshape(shape)


def _scatter_units_impl(base, idx, vals, unique):
    flat = to_units(base, vals.dtype).at[idx.reshape(-1)].set(vals.reshape(-1), unique_indices=unique)
    return from_units(flat, base.shape, base.dtype)


scatter_units = jax.jit(_scatter_units_impl, static_argnums=3)
