"""The Tensor header: (storage, shape, dtype, view spec, autograd metadata).

Ops are not written here: Tensor methods for every op are generated from the op table
(``ops/_registry.py``). This file holds the header itself, the view machinery (materialise a
view, write through it) and the Python protocol methods that are not ops.
"""
from __future__ import annotations

import builtins
import math
import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .. import _config
from .._device import device as _device_cls
from . import views as V
from .storage import SET_LOG as _SET_LOG, WRITE_LOG as _WRITE_LOG, log_attrs as _log_attrs, log_write as _log_write
from .storage import META_NO_DATA, Storage
from .views import (memory_format, contiguous_format, preserve_format, channels_last,  # noqa: F401
                    channels_last_3d, MEMORY_FORMATS)
from ..autograd.grad_mode import _state as _gm_state
from ..autograd.graph import grad_dtype_of

DATA_FIELDS = ("_storage", "_shape", "dtype", "_chain", "_strides", "_offset", "_cache", "_idx")  # what .data sets


_tuple_new = tuple.__new__


class Size(tuple):
    """``torch.Size``: a tuple of ints with PyTorch's repr. ``Size(sizes)`` checks its items as PyTorch's: ints and
    NumPy integers are kept, anything else with ``__index__`` (a bool, a one-element integer tensor) becomes its int,
    the rest is a TypeError. (``.shape``/``.size()`` wrap the library's own int shapes with ``_tuple_new``, unchecked:
    they are built on every access.)"""

    def __new__(cls, *args, **kwargs):
        t = _tuple_new(cls, *args, **kwargs)  # (tuple's own errors: one argument at most, no keywords)
        for d in t:
            if type(d) is not int:
                return _tuple_new(cls, [_size_item(i, d) for i, d in enumerate(t)])
        return t

    def __repr__(self):
        return f"torch.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return _tuple_new(Size, r) if isinstance(i, slice) else r

    # (a Size joined with a tuple, or repeated, is a Size, as PyTorch's)
    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return _tuple_new(Size, tuple.__mul__(self, n))

    __rmul__ = __mul__


def _size_item(i, d):
    if (isinstance(d, int) and not isinstance(d, builtins.bool)) or isinstance(d, np.integer):
        return d
    try:
        n = operator.index(d)
    except TypeError:
        n = None
    if not isinstance(n, int):
        t = type(d)
        name = f"numpy.{t.__name__}" if t.__module__.startswith("numpy") else t.__name__
        raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{name}')")
    return n


_VIEW_JIT: dict = {}


def _view_fn(chain):
    """One jitted function per view chain ((op, static args), ...) -> ``(fn, offsets)``: ``fn(base, *offsets)``
    is the view array. Ops with a ``dynamic`` split pass their positions (index, slice start) as traced
    offsets, so the key holds only shapes: ``x[i]`` for every ``i`` shares one program."""
    key = []
    offsets = []
    for op, sargs in chain:
        if op.dynamic is not None:
            k, off = op.dynamic[0](sargs)
            key.append((op, k, len(off)))
            offsets.extend(off)
        else:
            key.append((op, sargs, -1))
    key = tuple(key)
    fn = _VIEW_JIT.get(key)
    if fn is None:
        steps = [(op.impl_for(k) if n < 0 else (lambda a, off, op=op, k=k: op.dynamic[1](a, off, *k)), n)
                 for op, k, n in key]

        def run(a, *offs):
            i = 0
            for f, n in steps:
                if n < 0:
                    a = f(a)
                else:
                    a = f(a, offs[i:i + n])
                    i += n
            return a
        fn = _VIEW_JIT[key] = jax.jit(run)
    return fn, offsets


def _scatter_impl(base, idx, vals):
    flat = base.reshape(-1).at[idx.reshape(-1)].set(vals.reshape(-1), indices_are_sorted=False,
                                                    unique_indices=True)
    return flat.reshape(base.shape)


_scatter = jax.jit(_scatter_impl)


def _scatter_dup_impl(base, idx, vals):
    flat = base.reshape(-1).at[idx.reshape(-1)].set(vals.reshape(-1))
    return flat.reshape(base.shape)


_scatter_dup = jax.jit(_scatter_dup_impl)  # an expanded view: several elements share one location



def _batched(t) -> bool:
    """``t``'s values are batched by a ``func.vmap`` being traced (a BatchTracer: its ``batch_dim``)."""
    return isinstance(getattr(t._storage.array, "batch_dim", None), int)

INFERENCE_REQUIRES_GRAD = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."


class Tensor:
    """A PyTorch-style tensor backed by an immutable jax.Array (see design.md §3)."""

    __slots__ = ("_storage", "_shape", "dtype", "_chain", "_strides", "_offset", "_cache", "_base",
                 "_requires_grad", "_grad", "_grad_fn", "_retains_grad", "_hooks", "_post_hooks", "_out_nr",
                 "_idx", "_acc", "_gver", "__weakref__", "__dict__")

    def __new__(cls, *args, **kwargs):
        """``torch.Tensor(2, 3)``, ``torch.Tensor([1., 2.])``, ``torch.Tensor(other)``: the legacy constructor
        (``_tensor/legacy.py``), in the default dtype."""
        from .legacy import legacy_new
        return legacy_new(None, None, args, kwargs)

    # ---- construction (internal) -----------------------------------------------------------
    @classmethod
    def _header(cls, storage, shape, dtype, chain, strides, offset, base, cache=None, idx=None):
        """A tensor header over ``storage`` with fresh autograd metadata (the one place slots are set)."""
        t = object.__new__(cls)
        t._storage = storage
        t._shape = shape
        t.dtype = dtype
        t._chain = chain
        t._strides = strides
        t._offset = offset
        t._cache = cache
        t._base = base
        if base is not None:
            t._gver = storage.version  # (the version its grad_fn was recorded at: the ``grad_fn`` property)
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._retains_grad = False
        t._hooks = None
        t._post_hooks = None
        t._out_nr = 0
        t._idx = idx
        t._acc = None
        return t

    @classmethod
    def _from_array(cls, array, dtype, device, requires_grad=False):
        """A base tensor owning a new storage that holds ``array``."""
        t = cls._header(Storage(array, device, _gm_state.inference), tuple(array.shape), dtype, None, None, 0, None)
        t._requires_grad = requires_grad
        return t

    def _view_of(self, shape, strides, offset, step, dtype=None):
        """A new tensor sharing this one's storage: ``step`` = (op, static args) appended to the chain."""
        return Tensor._header(self._storage, tuple(shape), self.dtype if dtype is None else dtype,
                              (step,) if self._chain is None else self._chain + (step,), tuple(strides), offset,
                              self if self._base is None else self._base)

    def _alias(self):
        """Same storage and view spec, fresh autograd metadata (detach())."""
        return Tensor._header(self._storage, self._shape, self.dtype, self._chain, self._strides, self._offset,
                              None, self._cache, self._idx)

    # ---- values --------------------------------------------------------------------------------
    @property
    def _array(self):
        """The tensor's values as a jax array (a base tensor's is its storage's array)."""
        if self._chain is None:
            s = self._storage
            if not s.flat:
                return s.array
        base = self._storage.array
        c = self._cache
        if c is not None and c[0] is base:
            return c[1]
        if self._storage.flat:
            return self._flat_read(base)
        fn, offsets = _view_fn(self._chain)
        arr = jax.eval_shape(fn, base, *offsets) if type(base) is jax.ShapeDtypeStruct else fn(base, *offsets)
        self._cache = (base, arr)
        return arr

    def _flat_read(self, base):
        """The values of a tensor over a ``resize``d (flat) storage: gathered through its strides and offset."""
        if np.dtype(self.dtype.jnp) != np.dtype(base.dtype) or V.view_sign(self._chain):
            raise RuntimeError("reading a view that reinterprets its storage (dtype, conj) after the storage was "
                               "grown by resize_ is not supported by functorch_lite")
        idx = self._idx
        if idx is None:
            idx = self._idx = V.device_index_map(self._shape, self.stride(), self._offset, base)
        arr = base.reshape(-1)[idx]
        self._cache = (base, arr)
        return arr

    def _write(self, arr, overlap_ok=False, window_ok=False):
        """Replace this tensor's values (same shape; cast to self.dtype by the caller) in its storage.

        ``overlap_ok``: the write may go through an expanded view (``fill_``/``zero_``: every alias of
        one location receives the same value, as PyTorch allows). ``window_ok``: through a window view (elements
        sharing memory without a 0 stride) each location written once gives torch's result (a copy, an idempotent
        op: ``_dispatch._WINDOW_OK``)."""
        s = self._storage
        if _WRITE_LOG[0] is not None:
            _log_write(s)
        if type(s.array) is jax.ShapeDtypeStruct:  # a meta tensor: no values to write
            s.version += 1
            return
        if self._chain is None and not s.flat:
            s.array = arr
        else:
            overlap = V.overlap_kind(self._shape, self.stride())
            if overlap and not overlap_ok and not (overlap == 2 and window_ok):
                if overlap == 2:  # (PyTorch updates a shared location once per element: f applied k times)
                    raise RuntimeError("functorch_lite: an in-place operation through a view whose elements overlap "
                                       "in memory (unfold with step < size, an overlapping as_strided) is not "
                                       "supported (PyTorch updates a shared location once per element). clone() "
                                       "the view first.")
                raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to "
                                   "a single memory location. Please clone() the tensor before performing the "
                                   "operation.")
            base = s.array
            val = arr
            if V.view_sign(self._chain):  # a conjugated / negated view (x.conj(), x.conj().imag)
                arr = V.apply_sign(arr)
            units = False  # strides count elements of another size than the storage's (x.real, view_as_complex)
            if arr.dtype != base.dtype:
                units = V.unit_compatible(base.dtype, arr.dtype)
                if not units:
                    if arr.dtype.itemsize != base.dtype.itemsize:
                        raise RuntimeError("writing through a view that reinterprets the dtype with a different "
                                           "element size is not supported")
                    arr = V.bitcast(arr, base.dtype)
            idx = self._idx
            if idx is None:
                idx = self._idx = V.device_index_map(self._shape, self.stride(), self._offset, base)
            if units:
                s.array = V.scatter_units(base, idx, arr, not overlap)
            else:
                s.array = (_scatter_dup if overlap else _scatter)(base, idx, arr)
            # (a cut view's reads are cut: ``val`` may carry the history, ``_uncut_array``)
            self._cache = None if V.CUT_STEP in (self._chain or ()) else (s.array, val)
        s.version += 1

    def _write_where(self, arr, where):
        """Write ``arr``'s elements where ``where`` (a bool array of this shape) only: through an expanded view each
        memory location takes the value of an alias written (PyTorch's deprecated ``index_put_`` / ``x[mask] = v``
        on expanded tensors), the others keep theirs."""
        s = self._storage
        base = s.array
        if (type(base) is jax.ShapeDtypeStruct or np.dtype(base.dtype) != np.dtype(arr.dtype)
                or V.view_sign(self._chain)):
            return self._write(arr)  # (its refusal)
        if _WRITE_LOG[0] is not None:
            _log_write(s)
        idx = self._idx
        if idx is None:
            idx = self._idx = V.device_index_map(self._shape, self.stride(), self._offset, base)
        idx = jnp.where(where, idx, base.size).reshape(-1)
        s.array = base.reshape(-1).at[idx].set(arr.reshape(-1), mode="drop").reshape(base.shape)
        self._cache = None
        s.version += 1

    # ---- metadata --------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return _tuple_new(Size, self._shape)

    def size(self, dim=None):
        if dim is None:
            return _tuple_new(Size, self._shape)
        return self._shape[_size_dim(dim, len(self._shape))]

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        return math.prod(self._shape)

    nelement = numel

    def stride(self, dim=None):
        st = self._strides if self._strides is not None else V.contiguous_strides(self._shape)
        if dim is None:
            return st
        return st[_size_dim(dim, len(self._shape))]

    def storage_offset(self) -> int:
        return self._offset

    def is_contiguous(self, memory_format=None) -> bool:
        if memory_format is None or memory_format is contiguous_format:
            return self._strides is None or V.is_contiguous(self._shape, self._strides)
        order = memory_format._order(len(self._shape))
        if order is None:
            return False
        return V.is_format_contiguous(self._shape, self.stride(), order)

    def dim_order(self, *, ambiguity_check=False) -> tuple:
        """The dims from outermost to innermost in memory, as torch's. ``ambiguity_check``: True refuses a layout
        with more than one such order (a size-1 dim, neighbouring equal strides, or dims the sort cannot order); a
        list of memory formats refuses such a layout unless it is exactly one of them."""
        if not isinstance(ambiguity_check, bool) and (not isinstance(ambiguity_check, list) or not all(
                isinstance(m, V.memory_format) for m in ambiguity_check)):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
        shape, strides = self._shape, self.stride()
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        several = 1 in shape or any(a == b for a, b in zip(strides, strides[1:]))
        if (ambiguity_check is not False and several) and \
                sum(self.is_contiguous(memory_format=m) for m in formats) != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                               "memory formats.")
        perm, ambiguous = V.dim_order(shape, strides, self.is_contiguous(),
                                      self.is_contiguous(memory_format=V.channels_last), bool(ambiguity_check))
        if ambiguous:
            raise RuntimeError("The tensor does not have unique dim order.")
        return perm

    def data_ptr(self) -> int:
        # a stable fake address per storage (4096-aligned), plus the byte offset, as PyTorch's differ
        _no_batched_storage(self._storage.array)
        return self._storage.uid * (1 << 32) + self._offset * self.dtype.itemsize

    const_data_ptr = data_ptr  # (the same address: a read-only promise torch's kernels use)

    def untyped_storage(self):
        if _batched(self):
            raise NotImplementedError("Cannot access storage of BatchedTensorImpl")
        return UntypedStorage(self._storage)

    def storage(self):
        """The storage as a ``TypedStorage`` of this tensor's dtype (torch's deprecation warning, once)."""
        _warn_typed_storage_removal(stacklevel=2)
        return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def device(self) -> _device_cls:
        return self._storage.device

    @property
    def is_cuda(self) -> bool:
        return self._storage.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._storage.device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self._storage.device.type == "meta"

    def is_pinned(self, device=None) -> bool:
        """Page-locked host memory is not modelled: always False (DEV-22)."""
        return False

    def pin_memory(self, device=None):
        """PyTorch needs an accelerator to pin memory (DEV-21); with one, the tensor is returned."""
        if all(d.platform == "cpu" for d in jax.devices()):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self

    def get_device(self) -> int:
        d = self._storage.device
        return -1 if d.type == "cpu" else (d.index or 0)

    @property
    def _version(self) -> int:
        if self._storage.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._storage.version

    def _is_view(self) -> bool:
        return self._base is not None

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def is_inference(self) -> bool:
        return self._storage.inference

    @property
    def layout(self):
        from .. import strided
        return strided

    # identity hashing (tensors key dicts: optimizer state, autograd bookkeeping), as object's own: a C slot, not
    # a Python call per lookup
    __hash__ = object.__hash__

    # ---- autograd metadata (the engine lives in functorch_lite.autograd) --------------------------
    @property
    def grad_fn(self):
        """The node that receives this tensor's gradient. A view (``_base`` set) keeps the storage version its
        node was recorded at (``_gver``); once its base or another view of it was written in place since, the
        node is regenerated from the base's current history (``autograd.graph.regraph``: PyTorch's
        ``AsStridedBackward0`` on the base's grad_fn), as PyTorch's ``VariableHooks::grad_fn``."""
        if self._base is None or self._gver == self._storage.version:
            return self._grad_fn
        return _regraph(self)

    @grad_fn.setter
    def grad_fn(self, fn):
        self._grad_fn = fn
        if self._base is not None:
            self._gver = self._storage.version

    @property
    def requires_grad(self) -> bool:
        if not self._requires_grad and self._base is not None and self._gver != self._storage.version:
            _regraph(self)  # (a view whose base came to require grad by an in-place op: it does too, as in PyTorch)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        if type(flag) is not builtins.bool:
            raise RuntimeError("requires_grad must be a bool")
        self._set_requires_grad(flag, "only Tensors of floating point and complex dtype can require gradients")

    def requires_grad_(self, requires_grad=True):
        if type(requires_grad) is not builtins.bool:
            from ..ops._registry import _not_bool
            _not_bool("requires_grad_", ("requires_grad",), (requires_grad,), pos=1)
        if _gm_state.transform:
            from ..func._core import refuse_inside_transform
            refuse_inside_transform("requires_grad_")
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require gradients")
        return self

    def _set_requires_grad(self, flag, msg):
        flag = builtins.bool(flag)
        if self.grad_fn is not None and not flag:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if flag and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(msg)
        if flag and self._storage.inference and not _gm_state.inference:
            raise RuntimeError(INFERENCE_REQUIRES_GRAD)
        if self.grad_fn is None and (flag or not self.__dict__.get("_no_grad_view")):
            self._requires_grad = flag  # (a no_grad view of a tensor that requires grad does, as its base: PyTorch)

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @property
    def grad_dtype(self):
        """The dtype the autograd engine gives this leaf's gradients (default: its dtype; None: whatever dtype they
        arrive in); a ``.grad`` assigned must be of it."""
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.__dict__.get("_grad_dtype", self.dtype)

    @grad_dtype.setter
    def grad_dtype(self, value):
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, D.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
        if value is not None and self._grad is not None and self._grad.dtype is not value:
            raise RuntimeError(f"Cannot set grad_dtype to '{value.short}' because there is already a gradient with "
                               f"dtype '{_c_type_name(self._grad.dtype)}'. Please clear the gradient (.grad = None) "
                               "before changing grad_dtype, or ensure the new grad_dtype matches the existing "
                               "gradient's dtype.")
        self.__dict__["_grad_dtype"] = value
        from ..nn.modules.module import STRUCTURE_EPOCH
        STRUCTURE_EPOCH[0] += 1  # (compiled functions that reached this tensor walk it again: its grads' dtype)

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._shape != self._shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._shape)}' to a tensor of "
                                   f"size '{list(self._shape)}'. Please ensure that the gradient and the tensor are "
                                   "the same size")
            want = grad_dtype_of(self)
            if want is not None and value.dtype is not want:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{_c_type_name(value.dtype)}' to a "
                                   f"tensor with grad_dtype '{want.short}'. The gradient must match the tensor's "
                                   "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                                   "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
                                   "caution. Diverging the dtypes of a tensor and its gradient may break downstream "
                                   "systems that assume they match.")
            if value.device != self.device:
                raise RuntimeError(f"attempting to assign a gradient located on device with index "
                                   f"'{value.get_device()}' to a tensor located on device with index "
                                   f"'{self.get_device()}'. Please ensure that the gradient and the tensor are on "
                                   "the same device")
        if _SET_LOG[0] is not None:
            _log_attrs(self, ("_grad",))
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def detach(self):
        """A tensor sharing storage and version counter, cut from the graph (VIEW-47/48)."""
        if _gm_state.func:
            return self._cut()
        return self._alias()

    def _cut(self, base=None):
        """Inside a differentiating ``func`` transform (JAX differentiates the arrays): this tensor's storage seen
        through a ``V.CUT`` step, whose reads JAX does not differentiate through (``lax.stop_gradient``) while
        writes reach the storage, as torch's ``detach()`` and no_grad views share theirs. ``base``: the view's
        ``_base`` (a no_grad view keeps it; ``detach()`` has none)."""
        strides = self._strides if self._strides is not None else V.contiguous_strides(self._shape)
        chain = (V.CUT_STEP,) if self._chain is None else self._chain + (V.CUT_STEP,)
        return Tensor._header(self._storage, self._shape, self.dtype, chain, strides, self._offset, base)

    def _uncut_array(self):
        """The values with the history JAX sees (``_array`` without the chain's ``V.CUT`` steps): what an
        in-place write under no_grad or through a cut tensor keeps (``ops._dispatch.inplace``)."""
        chain = self._chain
        if chain is None or V.CUT_STEP not in chain:
            return self._array
        fn, offsets = _view_fn(tuple(s for s in chain if s is not V.CUT_STEP))
        return fn(self._storage.array, *offsets)

    def detach_(self):
        if self._base is not None and self.grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        """Shares the values but has its own version counter (VIEW-53), unlike ``detach()``."""
        if _batched(self):
            raise RuntimeError("accessing `data` under vmap transform is not allowed")
        if _gm_state.func:
            return self._cut()
        t = self._alias()
        t._storage = self._storage.with_new_counter()
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            from ..ops.indexing import _tp_name
            raise TypeError(f"Variable data has to be a tensor, but got {_tp_name(value)}")
        if not has_compatible_shallow_copy_type(self, value):
            raise RuntimeError("Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have "
                               "incompatible tensor type.")
        if self.requires_grad and not (value.dtype.is_floating_point or value.dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        if _batched(self) or _batched(value):
            raise RuntimeError("mutating directly with `.data` under vmap transform is not allowed.")
        if _SET_LOG[0] is not None:
            _log_attrs(self, DATA_FIELDS)
        self._storage = value._storage
        self._shape = value._shape
        self.dtype = value.dtype
        self._chain = value._chain
        self._strides = value._strides
        self._offset = value._offset
        self._cache = value._cache
        self._idx = value._idx

    # ---- Python / NumPy bridge (spec §10) ---------------------------------------------------------
    def _host(self, arr=None, scalar=False, listed=False) -> np.ndarray:
        """Values as a read-only numpy array (zero-copy from a CPU jax buffer where JAX allows); ``arr``: its
        array, when the caller has it; ``scalar``: read as one number (``item()``, ``float(t)``, ``bool(t)``...:
        torch's error for a meta tensor names ``item()`` then). A number or a list (``listed``: ``tolist()``) is
        read inside ``func.grad`` / ``vjp`` / ``jvp`` / ``jacrev`` too, as torch's (those trace eagerly: the
        primal values exist; the result is a constant to the transform, as torch's Python number); not under
        ``vmap`` or in compiled code (no values there)."""
        if arr is None:
            arr = self._array
        if isinstance(arr, jax.core.Tracer):
            if scalar or listed:
                from ..ops._deferred import concrete
                c = concrete(arr)
                if c is not None:
                    return c
            if not scalar:
                _no_batched_storage(arr)
            from ..ops._dispatch import data_dependent_error
            raise data_dependent_error("reading tensor values", arr)
        if type(arr) is jax.ShapeDtypeStruct:
            if scalar:
                raise RuntimeError("Tensor.item() cannot be called on meta tensors")
            raise NotImplementedError(META_NO_DATA)
        return np.asarray(arr)

    def item(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        arr = self._array
        if isinstance(arr, jax.core.Tracer):
            from ..ops import _deferred
            p = _deferred.PENDING[0]
            if p is not None and p[0] is not None and getattr(arr, "_trace", None) is p[0] and \
                    not self.dtype.is_complex:  # (a compiled function's own value: a traced number, _symbolic.item)
                from .._symbolic import item
                return item(arr, builtins.bool if self.dtype is D.bool else
                            builtins.int if self.dtype.category <= D.INT else builtins.float)
        h = self._host(arr, scalar=True)
        return h.reshape(()).item() if self.dtype.category != D.FLOAT or self.dtype in (
            D.float32, D.float64, D.float16) else builtins.float(h.astype(np.float64).reshape(()))

    def tolist(self):
        h = self._host(listed=True)
        if self.dtype in (D.bfloat16,) or self.dtype in D.FLOAT8:
            h = h.astype(np.float64)
        return h.tolist()

    def numpy(self, *, force=False):
        """A read-only NumPy view of the values with the tensor's strides (CONV-22; JAX arrays are
        immutable, so it cannot be written)."""
        if self.dtype is D.bfloat16 or self.dtype in D.FLOAT8 or self.dtype in (D.int4, D.uint4):
            if force or not (self._requires_grad and _grad_enabled()):
                raise TypeError(f"Got unsupported ScalarType {self.dtype.short}")
        if not force:
            if self._requires_grad and _grad_enabled():
                raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                   "instead.")
            if self._storage.device.type != "cpu":
                where = "meta" if self.is_meta else f"{self._storage.device.type}:{self.get_device()}"
                raise TypeError(f"can't convert {where} device type tensor "
                                "to numpy. Use Tensor.cpu() to copy the tensor to host memory first.")
        if self._chain is not None and V.view_sign(self._chain):  # (the storage holds the values unconjugated)
            if not force:
                bit, fix = ("conjugate", "resolve_conj") if self.dtype.is_complex else ("negative", "resolve_neg")
                raise RuntimeError(f"Can't call numpy() on Tensor that has {bit} bit set. Use tensor.{fix}().numpy() "
                                   "instead.")
            return self._host()  # (force: the values, resolved, as torch's resolve_conj().numpy())
        return self._host_strided()

    def _host_strided(self) -> np.ndarray:
        """Values as numpy with PyTorch's layout: a view's array is an ``as_strided`` window on its base."""
        if self._strides is None:
            return self._host()
        if not self.numel():
            h = self._host()
            return np.lib.stride_tricks.as_strided(h, h.shape, tuple(st * h.itemsize for st in self._strides),
                                                   writeable=False)
        base = self._storage.array
        if isinstance(base, jax.core.Tracer):
            _no_batched_storage(base)
            from ..ops._dispatch import data_dependent_error
            raise data_dependent_error("reading tensor values", base)
        flat = np.asarray(base).reshape(-1)
        if flat.dtype != np.dtype(self.dtype.jnp):
            return self._host()  # a view(dtype): reinterpreted values
        item = flat.dtype.itemsize
        return np.lib.stride_tricks.as_strided(flat[self._offset:], self._shape,
                                               tuple(st * item for st in self.stride()), writeable=False)

    # NumPy defers its operators to a tensor's (``ndarray * t`` -> ``Tensor.__rmul__``), as to PyTorch's
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        if copy is False:  # (torch's __array__ takes no ``copy=``: NumPy's refusal of a copy it cannot avoid)
            raise ValueError(
                "Unable to avoid copy while creating an array as requested.\nIf using `np.array(obj, copy=False)` "
                "replace it with `np.asarray(obj)` to allow a copy when needed (no behavior change in NumPy 1.x).\n"
                "For more details, see https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
                "#adapting-to-changes-in-the-copy-keyword.")
        h = self.numpy()
        if dtype is not None:
            h = h.astype(dtype)
        return np.array(h, copy=True) if copy else h

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy ufunc's result on a tensor as a tensor, as PyTorch's: ``torch.from_numpy`` of it, a bool
        result as uint8 (``np.sin(t)``, and ``t * ndarray``: the operator is NumPy's, ``Tensor.__mul__`` declines an
        ndarray)."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        from ..ops.creation import from_numpy
        return from_numpy(np.asarray(array))

    def __contains__(self, element):
        """``element in t``: ``(element == t).any()`` for a Tensor or a number, as PyTorch."""
        import numbers
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((element == self).any().item())
        raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                           f"{type(element)}.")

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reversed__(self):
        """``reversed(x)``: ``x.flip(0)`` (a 0-d tensor: itself), as torch's."""
        return self if not self._shape else self.flip(0)

    def __delitem__(self, index):
        raise TypeError("Tensor does not support deleting items")

    def __bool__(self):
        n = self.numel()
        if n != 1:
            if n == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        if isinstance(self._array, jax.core.Tracer):
            from ..ops._dispatch import data_dependent_error
            raise data_dependent_error("Data-dependent branching (e.g. `if my_tensor.sum() > 0:`): Python control "
                                       "flow on a tensor's value", self._array, branch=True)
        return builtins.bool(self._host(scalar=True).reshape(()))

    def _scalar_for_python(self, warn=True):
        if warn and self._requires_grad:  # (TORCH_WARN_ONCE: once per process, ahead of the element count's check)
            from .._warn import warn_once
            warn_once("scalar of a tensor requiring grad", "Converting a tensor with requires_grad=True to a scalar "
                      "may lead to unexpected behavior.\nConsider using tensor.detach() first. (Triggered internally at "
                      "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._host(scalar=True).reshape(())

    def _real_scalar(self, ctype, warn=True):
        """The value of a complex tensor as a real number: PyTorch's overflow error when imag != 0."""
        v = builtins.complex(self._scalar_for_python(warn))
        if v.imag != 0 or (ctype == "int64_t" and not (-2.0 ** 63 <= v.real < 2.0 ** 63)):
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return v.real

    def __float__(self):
        if self.dtype.is_complex:
            return builtins.float(self._real_scalar("double"))
        return builtins.float(self._scalar_for_python())

    def __int__(self):
        if self.dtype.is_complex:
            return builtins.int(self._real_scalar("int64_t", warn=False))
        return builtins.int(self._scalar_for_python(warn=False))

    __nonzero__ = __bool__  # (torch's Python 2 spellings, still its methods)
    __long__ = __int__

    def __complex__(self):
        return builtins.complex(self._scalar_for_python())

    def __index__(self):
        if self.dtype.category > D.INT or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self._host(scalar=True).reshape(()))

    def __format__(self, spec):
        """A 0-d plain Tensor formats its value (``f"{loss:.4f}"``); anything else (a subclass such as Parameter,
        a meta tensor, more elements) is ``object.__format__``: its ``str`` for an empty spec, else Python's
        TypeError naming the type (``unsupported format string passed to Parameter.__format__``), as torch."""
        if not self._shape and type(self) is Tensor and not self.is_meta:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self):
        from .printing import format_tensor
        arr = self._array
        if type(arr) is jax.ShapeDtypeStruct:
            extra = "" if self.dtype is D.get_default_dtype() else f", dtype={self.dtype!r}"
            fn = self._grad_fn
            grad = f", grad_fn=<{type(fn).__name__}>" if fn is not None else \
                ", requires_grad=True" if self._requires_grad else ""
            return f"tensor(..., device='meta', size={tuple(self._shape)}{extra}{grad})"
        if isinstance(arr, jax.core.Tracer):
            from .._compile.runner import TRACING
            if TRACING[0]:  # printing inside a compiled region needs the values: a graph break
                from ..ops._dispatch import data_dependent_error
                raise data_dependent_error("printing a tensor (print(t), repr(t), str(t))")
            return f"tensor(<traced {self.dtype!r} {list(self._shape)}>)"
        h = np.asarray(arr)
        if self.dtype is D.bfloat16 or self.dtype in D.FLOAT8:
            h = h.astype(np.float32)
        suffixes = []
        try:
            fn = type(self.grad_fn).__name__
        except RuntimeError:  # (a view made in no_grad mode whose base was written since: PyTorch's repr)
            fn = "Invalid"
        if fn != "NoneType":
            suffixes.append(f"grad_fn=<{fn}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        dev = self._storage.device
        o = _config.PRINT_OPTIONS
        return format_tensor(h, self.dtype.name, default_dtype_name=D.get_default_dtype().name,
                             device_str=None if dev.type == "cpu" and dev.index is None else str(dev),
                             suffixes=suffixes, precision=o["precision"], threshold=o["threshold"],
                             edgeitems=o["edgeitems"], linewidth=o["linewidth"], sci_mode=o["sci_mode"])

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        """pickle: storage values, layout, requires_grad, class (Parameter) and ``__dict__`` (``_copy.py``)."""
        from ._copy import reduce_ex
        return reduce_ex(self)

    def __copy__(self):
        """``copy.copy``: a tensor sharing this one's storage (``_copy.py``)."""
        from ._copy import shallow_copy
        return shallow_copy(self)

    def __deepcopy__(self, memo):
        """``copy.deepcopy`` of a graph leaf: views of one storage stay views of one new storage; ``.grad`` and
        ``__dict__`` are copied too (``_copy.py``)."""
        from ._copy import deep_copy
        return deep_copy(self, memo)

    # ---- conversions that are not ops ----------------------------------------------------------
    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            if self.dtype.legacy is None:
                raise RuntimeError(f"no legacy tensor type name for {self.dtype!r}")
            prefix = "torch." if self._storage.device.type == "cpu" else f"torch.{self._storage.device.type}."
            return prefix + self.dtype.legacy
        if not isinstance(dtype, (type, str, D.dtype)):
            raise TypeError("dtype must be a type, str, or dtype object")
        from .legacy import resolve
        dt, device_type = resolve(dtype)  # a dtype, torch.DoubleTensor, 'torch.cuda.FloatTensor', torch.Tensor
        if device_type is None or device_type == self._storage.device.type:
            return self.to(dt, non_blocking=non_blocking)
        return self.to(device_type, dt, non_blocking=non_blocking)


def zero_grads(params, set_to_none: bool) -> None:
    """``Module.zero_grad`` / ``Optimizer.zero_grad``: each ``.grad`` to None, or zeroed in place
    (``set_to_none=False``: the same tensor object, detached, as torch's, so a reference held to it keeps
    following it)."""
    for p in params:
        g = p._grad
        if g is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            g.zero_()


def has_compatible_shallow_copy_type(a: "Tensor", b: "Tensor") -> bool:
    """``torch._has_compatible_shallow_copy_type``: whether ``a.data = b`` may swap ``b``'s data in (facade tensors
    share one implementation, but a meta tensor has no data: meta and non-meta are not compatible)."""
    return (a._storage.device.type == "meta") == (b._storage.device.type == "meta")


def with_memory_order(t, order, strides, pad_rows=None):
    """Re-lay ``t`` (a fresh, non-view result) in memory order ``order`` with PyTorch's ``strides``:
    its storage holds the values permuted to ``order`` and ``t`` becomes a permuted (non-autograd)
    view of it, so ``stride()`` reports ``strides`` (VIEW-51, CRE-60). Values and grad_fn are kept.
    ``pad_rows``: the storage's last dim holds that many rows (zeros past ``t``'s), ``t`` the top ones (a
    column-major matrix in a taller buffer: lstsq's solution, ``_dispatch._lay_out_lapack``)."""
    if order == tuple(range(len(order))):
        return t
    from ..ops._registry import OPS
    arr = t._storage.array
    meta = type(arr) is jax.ShapeDtypeStruct
    shape = tuple(arr.shape[i] for i in order)
    t._storage.array = _transpose(arr, order) if not meta else jax.ShapeDtypeStruct(shape, arr.dtype)  # (meta)
    t._chain = ((OPS["permute"], (V.inverse_perm(order),)),)
    if pad_rows is not None:
        nd, m = len(shape), shape[-1]
        padded = shape[:-1] + (pad_rows,)
        t._storage.array = jax.ShapeDtypeStruct(padded, arr.dtype) if meta else \
            _pad_last(t._storage.array, pad_rows - m)
        t._chain += ((OPS["narrow"], (nd - 2, 0, m)),)
    t._strides = tuple(strides)
    t._offset = 0
    t._cache = (t._storage.array, arr)
    t._idx = None
    return t


_transpose = jax.jit(jnp.transpose, static_argnums=1)
_pad_last = jax.jit(lambda a, k: jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, k)]), static_argnums=1)

_READONLY_WARNING = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means writing "
    "to this tensor will result in undefined behavior. You may want to copy the array to protect its data or make it "
    "writable before converting it to a tensor. This type of warning will be suppressed for the rest of this program.")


def tensor_from_numpy(arr: np.ndarray, dtype, device=None) -> "Tensor":
    """``from_numpy``'s tensor: a copy of ``arr`` (JAX arrays are immutable) that keeps NumPy's layout
    (CRE-60): element strides and offset 0 as PyTorch reports them. ``arr`` is already validated
    (non-negative strides, supported dtype); ``dtype`` is its facade dtype. A read-only array gets
    PyTorch's UserWarning (CRE-59)."""
    from .. import _device as _dev
    if not arr.flags.writeable:
        from .._warn import user_stacklevel  # (at the user's line, as PyTorch's; Python's filter: once per line)
        warnings.warn(_READONLY_WARNING, UserWarning, stacklevel=user_stacklevel())
    dev = _dev.canonical(device)
    jdev = _dev.to_jax(dev)
    item = arr.dtype.itemsize
    shape = arr.shape
    if any(st % item for st in arr.strides):
        return Tensor._from_array(jax.device_put(np.array(arr), jdev), dtype, dev)
    strides = tuple(st // item for st in arr.strides)
    if not arr.size or V.is_contiguous(shape, strides):  # row-major (size-1/empty dims may report any stride)
        t = Tensor._from_array(jax.device_put(np.array(arr), jdev), dtype, dev)
        if strides != V.contiguous_strides(shape):
            t._strides = strides
        return t
    if V.is_dense(shape, strides):  # a permutation of a dense layout (arr.T): storage in memory order
        from ..ops._registry import OPS
        order = V.memory_order(shape, strides)
        t = Tensor._from_array(jax.device_put(np.ascontiguousarray(arr.transpose(order)), jdev), dtype, dev)
        t._shape = tuple(shape)
        t._chain = ((OPS["permute"], (V.inverse_perm(order),)),)
        t._strides = strides
        return t
    # not dense (a strided slice): the storage is the span of memory the array covers
    extent = sum((n - 1) * st for n, st in zip(shape, strides)) + 1
    buf = np.array(np.lib.stride_tricks.as_strided(arr, (extent,), (item,), writeable=False))
    t = Tensor._from_array(jax.device_put(buf, jdev), dtype, dev)
    t._shape = tuple(shape)
    t._chain = ((V.STRIDED, (tuple(shape), strides, 0)),)
    t._strides = strides
    return t


def _rebuild(arr, dtype_name, requires_grad):  # (what pickles written before ``_copy.rebuild`` refer to)
    from ..ops.creation import tensor as _t
    t = _t(arr, dtype=D._NAME[dtype_name])
    t._requires_grad = requires_grad
    return t


def _no_batched_storage(arr) -> None:
    """torch's error for reading the memory of a tensor ``func.vmap`` batches (``tolist``, ``numpy``, ``data_ptr``):
    a BatchedTensor has no storage."""
    if isinstance(getattr(arr, "batch_dim", None), int):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


_TYPED_STORAGE_WARNED = [False]


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    """torch's deprecation warning of ``TypedStorage`` (``t.storage()``, its methods): once per process, as torch's."""
    if not _TYPED_STORAGE_WARNED[0]:
        _TYPED_STORAGE_WARNED[0] = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel + 1)


def _storage_str(values, info: str, meta: bool) -> str:
    """torch's ``str`` of a storage: its values one a line, then ``[torch.storage.X(...) of size n]``."""
    if meta:
        return "...\n" + info
    return " " + "\n ".join(str(v) for v in values) + "\n" + info


_STORAGE_CASTS = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16",
                  "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
                  "complex_double": "complex128", "complex_float": "complex64", "float8_e5m2": "float8_e5m2",
                  "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2fnuz": "float8_e5m2fnuz",
                  "float8_e4m3fnuz": "float8_e4m3fnuz"}  # (torch.storage._StorageBase's conversions)


def _storage_cast(name: str, dt: str):
    def method(self):
        return self._to(getattr(D, dt))
    method.__name__ = name
    method.__doc__ = f"A copy of the storage as a ``TypedStorage`` of {dt} (its elements converted, as torch's)."
    return method


class _StorageBase:
    """What the facade's storages share: ``_s``, the facade Storage holding the values (``x.set_(storage)`` reads
    it, from a ``TypedStorage`` too, as torch's ``set_`` takes both); torch's legacy conversions (``float()``,
    ``double()``, ...: a converted copy, a ``TypedStorage``), ``is_shared``, ``share_memory_`` (refused, as
    ``Tensor.share_memory_``: a JAX array cannot live in memory other processes write to)."""

    is_sparse = False
    is_cuda = property(lambda self: self._s.device.type == "cuda")

    def _to(self, dtype) -> "TypedStorage":
        t = self._tensor().to(dtype, copy=True)
        return TypedStorage(wrap_storage=UntypedStorage(t._storage), dtype=dtype, _internal=True)

    def get_device(self):
        return None if self._s.device.type == "cpu" else self._s.device.index

    def is_shared(self) -> bool:
        return False  # (as ``Tensor.is_shared``: no storage lives in shared memory here)

    def is_pinned(self, device="cuda") -> bool:
        return False

    def share_memory_(self):
        from .legacy import METHODS
        METHODS["share_memory_"](self)

    def _write_bytes(self, b) -> None:
        """Overwrite all the storage's bytes with ``b`` (uint8, as many), through a tensor on it."""
        root = self._s.root()
        dt = D.from_numpy_dtype(np.dtype(root.array.dtype))
        vals = np.ascontiguousarray(b).view(np.dtype(root.array.dtype))
        tmp = Tensor._from_array(jnp.zeros((0,), dt.jnp), dt, root.device)
        tmp.set_(TypedStorage(wrap_storage=UntypedStorage(self._s), dtype=dt, _internal=True), 0, (vals.size,))
        from ..autograd.grad_mode import no_grad
        with no_grad():
            tmp.copy_(Tensor._from_array(jnp.asarray(vals), dt, root.device))


for _name, _dt in _STORAGE_CASTS.items():
    setattr(_StorageBase, _name, _storage_cast(_name, _dt))


_UntypedStorage = _StorageBase  # (the name the facade's modules check storages with)


class UntypedStorage(_StorageBase):
    """``t.untyped_storage()`` (``torch.UntypedStorage``): the bytes of a tensor's storage, shared by all its views:
    their number (``size()``, ``nbytes()``, ``len``), address (``data_ptr()``), device and values (``tolist()``).

    >>> import functorch_lite as torch
    >>> t = torch.arange(4.); t[1:].untyped_storage().size(), t[1:].untyped_storage().data_ptr() == t.data_ptr()
    (16, True)
    """

    def __init__(self, s):
        self._s = s

    def data_ptr(self) -> int:
        return self._s.uid * (1 << 32)

    def nbytes(self) -> int:
        return self._s.nbytes()

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    @property
    def device(self):
        return self._s.device

    def element_size(self) -> int:
        return 1

    def _bytes(self) -> np.ndarray:
        """The storage's bytes, as a flat uint8 numpy array (read from the device)."""
        arr = self._s.root().array
        if type(arr) is jax.ShapeDtypeStruct:
            raise NotImplementedError(META_NO_DATA)
        if isinstance(arr, jax.core.Tracer):
            from ..ops._dispatch import data_dependent_error
            raise data_dependent_error("reading a storage's values")
        return np.ascontiguousarray(np.asarray(arr)).reshape(-1).view(np.uint8)

    def tolist(self) -> list:
        return self._bytes().tolist()

    def _tensor(self):
        return Tensor._from_array(jnp.asarray(self._bytes()), D.uint8, self._s.device)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "torch.storage.UntypedStorage"
        return _storage_type(self, dtype)

    def clone(self) -> "UntypedStorage":
        return UntypedStorage(Storage(jnp.array(self._s.root().array, copy=True), self._s.device))

    def cpu(self):
        return self if self._s.device.type == "cpu" else self._to(D.uint8).untyped()

    def fill_(self, value):
        """Every byte set to ``value`` (an int, taken modulo 256, as torch's)."""
        self._write_bytes(np.full(self.nbytes(), operator.index(value) & 0xFF, np.uint8))
        return self

    def copy_(self, src, non_blocking=None):
        """The bytes of storage ``src`` (as many) copied in."""
        if not isinstance(src, _StorageBase):
            from ..ops._dispatch import _type_name  # (late: the dispatcher imports this module)
            raise TypeError(f"copy_(): argument 'src' (position 1) must be torch.Storage, not {_type_name(src)}")
        src = src._untyped_storage if isinstance(src, TypedStorage) else src
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was {src.nbytes()} bytes")
        self._write_bytes(src._bytes())
        return self

    def resize_(self, size: int):
        """``storage.resize_(nbytes)`` (FSDP frees a parameter's storage with ``resize_(0)`` and reallocates it):
        the first bytes kept, new ones zeros; the tensors on it keep their shapes (``Storage.resize``)."""
        isz = np.dtype(self._s.root().array.dtype).itemsize
        if size % isz:
            raise RuntimeError(f"resize_ of a storage to {size} bytes, not a multiple of its element size {isz}, is "
                               "not supported by functorch_lite")
        self._s.resize(size // isz)
        return self

    def __getitem__(self, idx: int) -> int:
        n = len(self)
        if not isinstance(idx, int) or not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return int(self._bytes()[idx])

    def __str__(self) -> str:
        meta = self.device.type == "meta"
        return _storage_str(() if meta else self.tolist(),
                            f"[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]", meta)

    __repr__ = __str__


class TypedStorage(_StorageBase):
    """``t.storage()`` (``torch.TypedStorage``, deprecated in torch, which warns once): a tensor's storage read as
    elements of ``dtype`` (the tensor's): ``size()``/``len`` count elements, ``tolist()`` gives their values;
    ``untyped()`` is the ``UntypedStorage`` it wraps. What ``load`` gives for a saved storage, as torch's."""

    def __init__(self, *, wrap_storage: UntypedStorage, dtype, _internal: bool = False):
        if not _internal:
            _warn_typed_storage_removal()
        self._untyped_storage, self.dtype = wrap_storage, dtype

    @property
    def _s(self):
        return self._untyped_storage._s

    def _size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self) -> int:
        _warn_typed_storage_removal()
        return self._size()

    def __len__(self) -> int:
        _warn_typed_storage_removal()
        return self._size()

    def nbytes(self) -> int:
        _warn_typed_storage_removal()
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        _warn_typed_storage_removal()
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        _warn_typed_storage_removal()
        return self._untyped_storage.data_ptr()

    @property
    def device(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device

    def untyped(self) -> UntypedStorage:
        _warn_typed_storage_removal()
        return self._untyped_storage

    def _tensor(self):
        tmp = Tensor._from_array(jnp.zeros((0,), self.dtype.jnp), self.dtype, self._untyped_storage.device)
        return tmp.set_(self, 0, (self._size(),))

    def type(self, dtype=None, non_blocking=False):
        """``'torch.FloatStorage'`` (torch's legacy class name; ``'torch.storage.TypedStorage'`` for a dtype with
        none); with ``dtype``, torch's conversion of the untyped bytes."""
        _warn_typed_storage_removal()
        if dtype is None:
            from ..serialization import _LEGACY_STORAGE
            name = _LEGACY_STORAGE.get(self.dtype)
            return "torch.storage.TypedStorage" if name is None else "torch." + name
        return _storage_type(self._untyped_storage, dtype)

    def pickle_storage_type(self) -> str:
        from ..serialization import _LEGACY_STORAGE
        _warn_typed_storage_removal()
        name = _LEGACY_STORAGE.get(self.dtype)
        if name is None:
            raise KeyError(f"dtype {self.dtype} is not recognized")
        return name

    def clone(self) -> "TypedStorage":
        _warn_typed_storage_removal()
        return TypedStorage(wrap_storage=self._untyped_storage.clone(), dtype=self.dtype, _internal=True)

    def cpu(self) -> "TypedStorage":
        _warn_typed_storage_removal()
        return TypedStorage(wrap_storage=self._untyped_storage.cpu(), dtype=self.dtype, _internal=True)

    def is_shared(self) -> bool:
        _warn_typed_storage_removal()
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        _warn_typed_storage_removal()
        self._untyped_storage.share_memory_()
        return self

    def fill_(self, value):
        """Every element set to ``value`` (converted as a tensor's ``fill_`` converts it: torch's messages)."""
        _warn_typed_storage_removal()
        self[0:self._size()] = value
        return self

    def copy_(self, source, non_blocking=None):
        """The bytes of storage ``source`` copied in (the sizes in bytes must match, as torch's)."""
        _warn_typed_storage_removal()
        self._untyped_storage.copy_(source._untyped_storage if isinstance(source, TypedStorage) else source)
        return self

    def _values(self) -> list:
        d = self.dtype
        vals = self._untyped_storage._bytes()[:self._size() * d.itemsize].view(d.np)
        if d.is_complex:
            return vals.astype(np.complex128).tolist()
        return vals.astype(np.float64).tolist() if d.is_floating_point else vals.tolist()

    def tolist(self) -> list:
        _warn_typed_storage_removal()
        return self._values()

    def __getitem__(self, idx: int):
        _warn_typed_storage_removal()
        n = self._size()
        if not isinstance(idx, int) or not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return self._values()[idx]

    def __setitem__(self, idx, value):
        """``x.storage()[i] = v``: written into the storage (torch's: through a tensor ``set_`` on it)."""
        _warn_typed_storage_removal()
        if not isinstance(idx, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if isinstance(value, _StorageBase):
            raise RuntimeError(f"cannot set item with value type {type(value)}")
        tmp = Tensor._from_array(jnp.zeros((0,), self.dtype.jnp), self.dtype, self._untyped_storage.device)
        tmp.set_(self, 0, (self._size(),))
        tmp[idx] = value

    def resize_(self, size: int):
        _warn_typed_storage_removal()
        self._untyped_storage.resize_(size * self.dtype.itemsize)
        return self

    def __str__(self) -> str:
        _warn_typed_storage_removal()
        dev = self._untyped_storage.device
        meta = dev.type == "meta"
        return _storage_str(() if meta else self._values(),
                            f"[torch.storage.TypedStorage(dtype={self.dtype}, device={dev}) of size {self._size()}]",
                            meta)

    __repr__ = __str__


def _storage_type(untyped: UntypedStorage, dtype):
    """``storage.type(dtype)``, as torch's ``_type`` on the untyped bytes: a legacy storage name makes a storage of
    that many elements of its type, which a copy of the bytes fits only for a one-byte type."""
    if isinstance(dtype, D.dtype):
        raise AttributeError("'torch.dtype' object has no attribute 'is_sparse'")
    from ..serialization import _STORAGE_DTYPE
    name = dtype if isinstance(dtype, str) else getattr(dtype, "__name__", "")
    dt = _STORAGE_DTYPE.get(name.rpartition(".")[2])
    if dt is None:
        raise TypeError("copy_(): argument 'other' (position 1) must be Tensor, not torch.storage.UntypedStorage")
    n = untyped.nbytes()
    if dt.itemsize != 1:
        raise RuntimeError(f"size does not match, self was {n * dt.itemsize} bytes but src was {n} bytes")
    out = TypedStorage(wrap_storage=untyped.clone(), dtype=dt, _internal=True)
    return out


def _c_type_name(d):
    from .._promotion import _cname
    return _cname(d)


def _wrap_dim(dim, ndim):
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not (lo <= dim <= hi):
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % ndim if ndim else 0


def _size_dim(dim, ndim):
    """``size(dim)`` / ``stride(dim)``'s dimension: a 0-d tensor has none to read (torch's message)."""
    if not ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


def _regraph(t):
    from ..autograd.graph import regraph
    return regraph(t)


def _grad_enabled():
    from ..autograd.grad_mode import is_grad_enabled
    return is_grad_enabled()
