"""``torch.sparse`` and sparse COO tensors: ``torch.sparse_coo_tensor``, ``Tensor.to_sparse``, ``torch.sparse.mm``...

A sparse COO tensor is a :class:`SparseTensor`: an int64 indices tensor (sparse_dim x nnz), a values tensor
(nnz x the dense dims) and a size, as torch's SparseTensorImpl, coalesced or not. Its operations are the facade's
dense ops over those two tensors (index_select / index_add / index_put, and NumPy on the host for the index
arithmetic a coalesce or a sparse product needs: data-dependent, as torch's), so gradients reach the values -- and
whatever they were computed from, learnable edge weights say -- and a dense operand through the ordinary graph.
A leaf created with ``requires_grad=True`` gets torch's sparse gradient of ``torch.sparse.mm`` (the dense
gradient masked to its pattern), and torch's dense one of ``torch.mm`` / ``spmm`` / ``matmul``, dense @ sparse
and dense + sparse (``_leaf_dense``: a dense zero leaf added to its dense form there; ``grad`` sums the two).

An op of the op table that meets a sparse tensor (``_dispatch.dispatch``'s first check, live once one exists)
runs its sparse form here (``_call``; the pointwise ops torch has sparse kernels for, ``_SPARSE_POINTWISE``, on
the coalesced values) or raises torch's "Could not run 'aten::<op>' with arguments from the 'SparseCPU' backend".
In-place ops (``add_``, ``mul_``, ``relu_``, ``zero_``...) replace the tensor's indices / values, or write the
values in place where torch does. Differences from torch: ``isinstance(s, torch.Tensor)`` is False (a sparse
tensor is not one dense array), so the functions that take a Tensor's storage or check for a Tensor
(``torch.autograd.grad`` with respect to a sparse leaf, ``nn.Parameter``) fail on one (``torch.relu_`` and the
other in-place functions, and ``zeros_like``, hand it to its own forms: ``_dispatch.inplace``,
``creation._dense_only``); CSR / CSC / BSR layouts, semi-structured sparsity, ``spdiags``, ``sampled_addmm``,
``spsolve``, ``sspaddmm``, ``Tensor.sparse_mask`` and a sparse ``bmm`` are not provided; a product of a sparse
and a dense tensor of more dims (broadcast) raises; half / bfloat16 sums and products can be more accurate
(torch's CPU kernels accumulate in the low precision).
"""
from __future__ import annotations

import builtins
import warnings

import jax
import numpy as np

import functorch_lite as _t  # (attributes read at call time: this module is imported by the package's __init__)
from .. import dtypes as D
from .._tensor.tensor import _wrap_dim
from .._warn import user_stacklevel as _user_stacklevel
from ..ops import _dispatch
from ..ops._registry import POINTWISE

__all__ = ["mm", "addmm", "sum", "smm", "hspmm", "softmax", "log_softmax", "check_sparse_tensor_invariants",
           "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]

_INVARIANTS = [False]  # (check_sparse_tensor_invariants: bounds checked at construction)
_WARNED = [False]  # (torch's warning that they are not, once a process)


def _no_kernel(name, device, layout="Sparse") -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{layout}{device.type.upper()}' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the selective/custom build "
        "process (if using custom build).")


def _host(t) -> np.ndarray:
    """A tensor's values on the host (the indices a coalesce, a sparse product or a softmax groups by): inside a
    compiled function, a graph break (data-dependent, as torch's)."""
    a = t._array
    if isinstance(a, jax.core.Tracer):
        raise _dispatch.data_dependent_error("a sparse COO tensor's operation that reads its indices on the host "
                                             "(coalesce, sparse products and sums, softmax, to_sparse)")
    return np.asarray(a)


class SparseCooTensorWithDimsAndTensorsBackward0:
    """The grad_fn torch shows for a sparse tensor built from values that require grad (its backward is the
    values' own graph here: ``next_functions`` leads there)."""

    def __init__(self, values):
        self._values = values

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return ((self._values.grad_fn, 0),)


class SparseTensor:
    """A sparse COO tensor (layout ``torch.sparse_coo``): see the module's docstring."""
    __slots__ = ("_i", "_v", "_size", "_coalesced", "_leaf", "_dense_grad", "__weakref__")

    def __init__(self, indices, values, size, coalesced: bool = False, leaf: bool = False):
        self._i, self._v, self._size, self._coalesced, self._leaf = indices, values, tuple(size), coalesced, leaf
        # (a leaf's dense gradient, from torch.mm / spmm / matmul: the grad of a dense zero tensor added to it there)
        self._dense_grad = None
        if _dispatch.SPARSE[0] is None:  # (from the first sparse tensor on, the op table's dispatch looks for them)
            _dispatch.SPARSE[1] = _call
            _dispatch.SPARSE[0] = SparseTensor

    # ---- metadata ------------------------------------------------------------------------------------------
    @property
    def shape(self):
        return _t.Size(self._size)

    def size(self, dim=None):
        return _t.Size(self._size) if dim is None else self._size[_wrap_dim(dim, len(self._size))]

    def dim(self) -> int:
        return len(self._size)

    ndim = property(dim)

    def numel(self) -> int:
        return int(np.prod(self._size, dtype=np.int64))

    nelement = numel

    def __len__(self) -> int:
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def device(self):
        return self._v.device

    @property
    def is_cuda(self) -> bool:
        return self._v.is_cuda

    layout = property(lambda self: _t.sparse_coo)
    is_sparse = True
    is_sparse_csr = is_quantized = is_nested = is_meta = is_mkldnn = False

    def is_floating_point(self) -> bool:
        return self._v.is_floating_point()

    def is_complex(self) -> bool:
        return self._v.is_complex()

    def element_size(self) -> int:
        return self._v.element_size()

    def sparse_dim(self) -> int:
        return self._i._shape[0]

    def dense_dim(self) -> int:
        return len(self._size) - self._i._shape[0]

    def _nnz(self) -> int:
        return self._i._shape[1]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._i

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._v

    def _indices(self):
        return self._i

    def _values(self):
        return self._v.detach()

    # ---- autograd ------------------------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._v.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True):
        if self._v.requires_grad and not self._leaf:
            if requires_grad:
                return self
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        self._v = self._v.detach().requires_grad_(requires_grad)
        self._leaf = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._leaf or not self._v.requires_grad

    @property
    def grad_fn(self):
        return None if self.is_leaf else SparseCooTensorWithDimsAndTensorsBackward0(self._v)

    @property
    def grad(self):
        """A leaf's gradient: sparse over its coalesced pattern from torch.sparse.mm (each position's value is the
        dense gradient there, however many entries share it); dense from torch.mm / spmm / matmul (their sum where
        both were used), as torch's."""
        g = self._v.grad if self._leaf else None
        if g is not None:
            _, first = np.unique(_linear(self), return_index=True)
            g = SparseTensor(self._i.index_select(1, _index(first, self._i)), g.index_select(0, _index(first, g)),
                             self._size, False)  # (sorted and unique, not flagged coalesced: torch's)
        dense = None if self._dense_grad is None else self._dense_grad.grad
        if dense is None:
            return g
        return dense if g is None else dense + g

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            raise RuntimeError("functorch_lite: only None can be assigned to a sparse tensor's .grad")
        if self._leaf:
            self._v.grad = None
            if self._dense_grad is not None:
                self._dense_grad.grad = None

    def detach(self):
        return SparseTensor(self._i, self._v.detach(), self._size, self._coalesced)

    data = property(detach)  # (torch's ``.data``: the same entries, no history)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """A sparse tensor of that size without entries (every dim sparse), as torch's for a sparse ``self``."""
        size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else size
        return sparse_coo_tensor(size=size, dtype=self.dtype if dtype is None else dtype,
                                 device=self.device if device is None else device, requires_grad=requires_grad,
                                 check_invariants=False)

    def clone(self, *, memory_format=None):
        return SparseTensor(self._i.clone(), self._v.clone(), self._size, self._coalesced)

    # ---- conversions ---------------------------------------------------------------------------------------
    def coalesce(self):
        """Duplicate indices summed, indices sorted (lexicographically): torch's coalesce."""
        if self._coalesced:
            return self
        if not self._nnz():
            return SparseTensor(self._i, self._v, self._size, True)
        sizes = self._size[:self.sparse_dim()]
        uniq, inv = np.unique(_linear(self), return_inverse=True)
        idx = np.stack(np.unravel_index(uniq, sizes)).astype(np.int64).reshape(len(sizes), -1)
        vals = _t.zeros((len(uniq),) + tuple(self._v._shape[1:]), dtype=self._v.dtype, device=self._v.device)
        vals = vals.index_add(0, _index(inv.reshape(-1), self._v), self._v)
        return SparseTensor(_index(idx, self._i), vals, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_to_dense")
        sd = self.sparse_dim()
        out = _t.zeros(self._size, dtype=self._v.dtype, device=self._v.device)
        if self._nnz():
            out = out.index_put(tuple(self._i[d] for d in range(sd)), self._v, accumulate=True)
        return out

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout not in (None, _t.sparse_coo) or blocksize is not None:
            raise RuntimeError(f"functorch_lite: a sparse COO tensor's conversion to {layout} is not supported "
                               "(only the sparse COO layout exists here)")
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self."
                               "sparse_dim() is not supported")
        return self

    to_sparse_coo = to_sparse

    def to(self, *args, **kwargs):
        v = self._v.to(*args, **kwargs)
        if v is self._v:
            return self
        i = self._i if self._i.device == v.device else self._i.to(v.device)
        return SparseTensor(i, v if not self._leaf else v.detach().requires_grad_(), self._size, self._coalesced,
                            self._leaf)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self.to(_t.float32)

    def double(self):
        return self.to(_t.float64)

    def half(self):
        return self.to(_t.float16)

    def bfloat16(self):
        return self.to(_t.bfloat16)

    def long(self):
        return self.to(_t.int64)

    def int(self):
        return self.to(_t.int32)

    def bool(self):
        return self.to(_t.bool)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            cuda = "cuda." if self._v.device.type == "cuda" else ""
            return f"torch.{cuda}sparse.{self._v.dtype.legacy}"
        from .._tensor.legacy import resolve
        # ('torch.sparse.DoubleTensor', torch.sparse.DoubleTensor, 'torch.DoubleTensor', a dtype: torch's sparse
        # type() keeps the layout, whichever it names)
        spec = dtype.replace("sparse.", "") if isinstance(dtype, str) else getattr(dtype, "_dtype", dtype)
        dt, device_type = resolve(spec)
        if device_type is None or device_type == self._v.device.type:
            return self.to(dt, non_blocking=non_blocking)
        return self.to(device_type, dt, non_blocking=non_blocking)

    # ---- shape ---------------------------------------------------------------------------------------------
    def permute(self, *dims):
        """Sparse dims permuted among themselves (the indices' rows), dense ones among themselves (the values'
        dims), as torch's."""
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (list, tuple)) else dims
        n, sd = len(self._size), self.sparse_dim()
        if len(dims) != n:
            raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                               "length of the desired ordering of dimensions i.e. input.dim() = "
                               f"{n} is not equal to len(dims) = {len(dims)}")
        dims = [_wrap_dim(d, n) for d in dims]
        if len(set(dims)) != n:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        if sorted(dims[:sd]) != list(range(sd)):
            raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense dimensions are not "
                               "allowed.Only transpositions within sparse and dense dimensions are supported.")
        if dims == list(range(n)):
            return SparseTensor(self._i, self._v, self._size, self._coalesced)
        v = self._v if dims[sd:] == list(range(sd, n)) else self._v.permute([0] + [d - sd + 1 for d in dims[sd:]])
        i = self._i if dims[:sd] == list(range(sd)) else self._i[dims[:sd]]
        return SparseTensor(i, v, [self._size[d] for d in dims], self._coalesced and i is self._i)

    def transpose(self, dim0, dim1):
        n, sd = len(self._size), self.sparse_dim()
        d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
        if d0 == d1:
            return self
        if (d0 < sd) != (d1 < sd):
            raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {sd}, d0: "
                               f"{d0}, d1: {d1}")
        perm = list(range(n))
        perm[d0], perm[d1] = d1, d0
        return self.permute(perm)

    swapaxes = swapdims = transpose

    def t(self):
        if len(self._size) > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        return self.transpose(0, 1) if len(self._size) == 2 else self

    T = property(lambda self: self.permute(list(range(len(self._size)))[::-1]))
    mT = property(lambda self: self.transpose(-2, -1))

    def unsqueeze(self, dim):
        return _unsqueeze(self, _wrap_dim(dim, len(self._size) + 1))

    def select(self, dim, index):
        """``s.select(dim, i)`` / ``s[i]``: along a sparse dim, the entries at ``i`` (the last sparse dim: a dense
        result, their sum); along a dense dim, the values' slice."""
        n, sd = len(self._size), self.sparse_dim()
        dim = _wrap_dim(dim, n)
        if not isinstance(index, int):
            raise RuntimeError("functorch_lite: a sparse COO tensor's select / indexing supports an int index only")
        if not -self._size[dim] <= index < self._size[dim]:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self._size)} at "
                             f"dimension {dim}")
        index %= self._size[dim]
        size = self._size[:dim] + self._size[dim + 1:]
        if dim >= sd:
            return SparseTensor(self._i, self._v.select(dim - sd + 1, index), size, self._coalesced)
        keep = np.nonzero(_host(self._i)[dim] == index)[0]
        pos = _index(keep, self._i)
        if sd == 1:  # (a dense result: the values at that index, summed)
            return self._v.index_select(0, pos).sum(0)
        rest = [d for d in range(sd) if d != dim]
        return SparseTensor(self._i[rest].index_select(1, pos), self._v.index_select(0, pos), size, len(keep) < 2)

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def flatten(self, start_dim=0, end_dim=-1):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def __getitem__(self, index):
        return self.select(0, index)

    # ---- arithmetic (the op table's forms: ``_call``; the binary operators: ``_operator`` below) ----------------
    def __rtruediv__(self, other):  # (``2 / s`` is ``s.reciprocal() * 2`` in torch: no sparse reciprocal)
        if isinstance(other, _t.Tensor):
            raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                               f"{list(self._size)} for divisor)")
        raise _no_kernel("reciprocal", self._v.device)

    def __rpow__(self, other):
        raise _no_kernel("pow.Scalar", self._v.device)

    def __neg__(self):
        return _t.neg(self)

    __hash__ = object.__hash__  # (by identity, as a torch tensor's, beside the __eq__ set below)

    def sum(self, dim=None, keepdim=False, dtype=None):
        out = sum(self, dim, dtype=dtype)
        if keepdim and dim is not None:  # (each summed dim back, of size 1)
            n = len(self._size)
            for d in sorted(_wrap_dim(d, n) for d in ((dim,) if isinstance(dim, int) else dim)):
                out = _unsqueeze(out, d) if _is_sparse(out) else out.unsqueeze(d)
        return out

    # ---- in-place ops: torch's sparse ones write the values in place where the entries stay (aliases of the
    # values see it), else the new indices / values replace this tensor's ---------------------------------------
    def _check_inplace(self):
        if self._leaf and self._v.requires_grad and _t.is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")

    def _replace(self, r):
        self._check_inplace()
        if r.dtype is not self.dtype:
            _dispatch._check_cast(r.dtype, self.dtype)
            r = r.to(self.dtype)
        self._i, self._v, self._size, self._coalesced = r._i, r._v, r._size, r._coalesced
        return self

    def _values_inplace(self, name, args, kwargs):
        """``s.<name>_(...)`` of a pointwise op with a sparse kernel: on the values, in place (torch's: a coalesced
        tensor, but for the linear ops)."""
        self._check_inplace()
        if name not in _NO_COALESCE and not self._coalesced:
            raise RuntimeError(f"{name}_ requires coalesced input")
        getattr(self._v, name + "_")(*args, **kwargs)
        return self

    def inplace(self, name, targs, sargs):
        """The op table's in-place form ``name_`` of this tensor (``torch.relu_(s)``, ``torch.add_``...:
        ``_dispatch.inplace``), as its method."""
        kw = {"alpha": sargs[0]} if name in ("add", "sub") and sargs else \
            {"rounding_mode": sargs[0]} if name == "div" and sargs else {}
        return getattr(self, name + "_")(*targs, *(() if kw else sargs), **kw)

    def add_(self, other, *, alpha=1):
        return self._replace(_t.add(self, other, alpha=alpha))

    def sub_(self, other, *, alpha=1):
        return self._replace(_t.sub(self, other, alpha=alpha))

    def mul_(self, other):  # (new values, even by a number: torch's)
        return self._replace(_t.mul(self, other))

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is not None or _is_sparse(other) or isinstance(other, _t.Tensor) and other.dim():
            return self._replace(_t.div(self, other, rounding_mode=rounding_mode))
        return self._values_inplace("div", (other,), {})

    true_divide_ = div_

    def floor_divide_(self, other):  # (on the coalesced values: a new tensor's)
        return self._replace(_t.floor_divide(self, other))

    def zero_(self):
        self._check_inplace()
        self._i = _t.zeros((self.sparse_dim(), 0), dtype=D.int64, device=self._i.device)
        self._v = _t.zeros((0,) + tuple(self._v._shape[1:]), dtype=self._v.dtype, device=self._v.device)
        self._coalesced = True
        return self

    def detach_(self):
        self._v, self._leaf, self._dense_grad = self._v.detach(), False, None
        return self

    # ---- what a sparse tensor has no storage for: torch's errors ---------------------------------------------
    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    data_ptr = tolist

    def contiguous(self, memory_format=None):
        raise RuntimeError("unsupported memory format option Contiguous")

    def is_contiguous(self, memory_format=None) -> bool:
        return False

    def stride(self, dim=None):
        return (0,) * len(self._size) if dim is None else 0

    def smm(self, mat2):
        """``Tensor.smm``: sparse @ dense as a sparse tensor (``hspmm``'s rows, every column an entry)."""
        h = hspmm(self, mat2)
        rows, n = _host(h._i)[0], h._size[1]
        idx = np.stack([np.repeat(rows, n), np.tile(np.arange(n), len(rows))]).astype(np.int64).reshape(2, -1)
        return SparseTensor(_index(idx, h._i), h._v.reshape(-1), h._size, False)

    def conj(self):
        return SparseTensor(self._i, self._v.conj(), self._size, self._coalesced) if self.is_complex() else self

    def __getattr__(self, name):
        """A Tensor method not written above: the op table's function of that name (its sparse form or torch's
        "Could not run ... 'SparseCPU' backend" error); anything else is no attribute."""
        if not name.startswith("_") and hasattr(_t.Tensor, name):
            if name.endswith("_"):  # (an in-place op: a pointwise one with a sparse kernel, or torch's error)
                if name[:-1] in _SPARSE_POINTWISE and name[:-1] not in ("pow", "square"):
                    return lambda *args, **kwargs: self._values_inplace(name[:-1], args, kwargs)
                raise _no_kernel(name, self._v.device)
            fn = getattr(_t, name, None)
            if callable(fn):
                return lambda *args, **kwargs: fn(self, *args, **kwargs)
            raise _no_kernel(name, self._v.device)
        raise AttributeError(f"'SparseTensor' object has no attribute '{name}' (functorch_lite: a sparse COO "
                             "tensor is no dense tensor; convert it with .to_dense() for this operation)")

    def __repr__(self):
        from .._tensor.printing import format_sparse
        from .. import _config
        o = _config.PRINT_OPTIONS
        dev = self._v.device
        suffixes = ["grad_fn=<SparseCooTensorWithDimsAndTensorsBackward0>"] if not self.is_leaf else \
            ["requires_grad=True"] if self.requires_grad else []
        v = self._v.detach()
        hv = _host(v.float() if v.dtype is D.bfloat16 else v)
        return format_sparse(_host(self._i), hv, v.dtype.name, size=self._size, nnz=self._nnz(),
                             default_dtype_name=D.get_default_dtype().name,
                             device_str=None if dev.type == "cpu" and dev.index is None else str(dev),
                             suffixes=suffixes, precision=o["precision"], threshold=o["threshold"],
                             edgeitems=o["edgeitems"], linewidth=o["linewidth"], sci_mode=o["sci_mode"])

    __str__ = __repr__


def _operator(name: str, reflected: bool):
    """A Python operator of SparseTensor: the op table's function (its sparse form or torch's error)."""
    def method(self, other):
        fn = getattr(_t, name)
        return fn(other, self) if reflected else fn(self, other)
    return method


for _dunder, _name, _reflected in (
        ("__add__", "add", False), ("__radd__", "add", True), ("__sub__", "sub", False), ("__rsub__", "sub", True),
        ("__mul__", "mul", False), ("__rmul__", "mul", True), ("__truediv__", "div", False), ("__pow__", "pow", False),
        ("__floordiv__", "floor_divide", False), ("__rfloordiv__", "floor_divide", True), ("__gt__", "gt", False),
        ("__ge__", "ge", False), ("__lt__", "lt", False), ("__le__", "le", False), ("__eq__", "eq", False),
        ("__ne__", "ne", False), ("__matmul__", "matmul", False), ("__rmatmul__", "matmul", True)):
    setattr(SparseTensor, _dunder, _operator(_name, _reflected))
del _dunder, _name, _reflected

# ---- helpers ----------------------------------------------------------------------------------------------
def _index(arr, like):
    """A host int array as an int64 tensor on ``like``'s device."""
    return _t.tensor(np.asarray(arr, np.int64), device=like.device)


def _linear(s) -> np.ndarray:
    """Each entry's position in the sparse dims, row-major (the key a coalesce sorts and sums by)."""
    idx = _host(s._i)
    sizes = s._size[:s.sparse_dim()]
    if not idx.shape[1]:
        return np.zeros(0, np.int64)
    return np.ravel_multi_index(tuple(idx), sizes) if sizes else np.zeros(idx.shape[1], np.int64)


def _is_sparse(a) -> bool:
    return type(a) is SparseTensor


def _check_mm(s, d, name="addmm"):
    """torch's checks of a sparse (2 sparse dims) x dense product."""
    if s.sparse_dim() != 2 or s.dense_dim():
        raise RuntimeError(f"{name}: matrices expected, got {s.sparse_dim()}D tensor")
    if not isinstance(d, _t.Tensor):
        raise TypeError(f"mm(): argument 'mat2' (position 2) must be Tensor, not {_dispatch._type_name(d)}")
    if d.dim() == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if d.dim() != 2:
        raise RuntimeError(f"{name}: matrices expected, got {d.dim()}D tensor")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {s.dtype.short} but found {d.dtype.short}")
    if s.dtype is D.bool:
        raise NotImplementedError("\"addmm_sparse_dense\" not implemented for 'Bool'")
    if d._shape[0] != s._size[1]:
        raise RuntimeError(f"{name}: Argument #3 (dense): Expected dim 0 size {s._size[1]}, got {d._shape[0]}")


def _leaf_dense(s):
    """A sparse leaf that requires grad, where torch's gradient of it is dense (torch.mm / spmm / matmul,
    dense @ sparse, dense + sparse): its dense form plus a dense zero leaf, whose gradient ``grad`` gives. None for
    any other sparse tensor (its gradient reaches the values through the op's sparse form)."""
    if not (s._leaf and s.requires_grad and _t.is_grad_enabled()):
        return None
    if s._dense_grad is None:
        from .._compile.runner import TRACING
        if TRACING[0]:  # (new state a compiled program cannot create: this call runs eagerly, the next compiles)
            raise _dispatch.data_dependent_error("the first dense gradient of a sparse leaf that requires grad "
                                                 "(torch.mm / spmm / matmul / dense + sparse of it)")
        s._dense_grad = _t.zeros(s._size, dtype=s.dtype, device=s.device).requires_grad_()
    return s.detach().to_dense() + s._dense_grad


def _spmm(s, d, sparse_grad=False):
    """sparse (m, k) @ dense (k, n): each entry's row of ``d`` scaled by its value, summed into its row."""
    _check_mm(s, d)
    dense = None if sparse_grad else _leaf_dense(s)
    if dense is not None:
        return _t.mm(dense, d)
    out = _t.zeros((s._size[0], d._shape[1]), dtype=d.dtype, device=d.device)
    if not s._nnz():
        return out
    contrib = d.index_select(0, s._i[1]) * s._v.unsqueeze(1)
    return out.index_add(0, s._i[0], contrib)


def _dsmm(d, s, sparse_grad=False):
    """dense (m, k) @ sparse (k, n) = (sparse^T @ dense^T)^T."""
    if isinstance(d, _t.Tensor) and d.dim() == 1:  # (torch.mm's own check)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if not isinstance(d, _t.Tensor) or d.dim() != 2:
        raise RuntimeError("functorch_lite: dense @ sparse COO needs a 2-D dense operand")
    if d._shape[1] != s._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({d._shape[0]}x{d._shape[1]} and "
                           f"{s._size[0]}x{s._size[1]})")
    dense = None if sparse_grad else _leaf_dense(s)
    if dense is not None:
        _check_mm(s.t(), d.t())
        return _t.mm(d, dense)
    return _spmm(s.t(), d.t()).t().contiguous()


def _spspmm(a, b):
    """sparse @ sparse: a sparse, coalesced product (every pair of entries a[r, c], b[c, n] meets)."""
    if a.sparse_dim() != 2 or b.sparse_dim() != 2 or a.dense_dim() or b.dense_dim():
        raise RuntimeError("functorch_lite: sparse @ sparse needs two 2-D sparse COO matrices")
    if a._size[1] != b._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._size[0]}x{a._size[1]} and "
                           f"{b._size[0]}x{b._size[1]})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 dtype {a.dtype.short} does not match mat2 dtype {b.dtype.short}")
    if a.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise NotImplementedError(f"\"sparse_matmul\" not implemented for '{a.dtype.short}'")
    a, b = a.coalesce(), b.coalesce()
    ai, bi = _host(a._i), _host(b._i)
    order = np.argsort(bi[0], kind="stable")
    lo = np.searchsorted(bi[0][order], ai[1], "left")
    hi = np.searchsorted(bi[0][order], ai[1], "right")
    counts = hi - lo
    pa = np.repeat(np.arange(ai.shape[1]), counts)
    pb = order[np.concatenate([np.arange(x, y) for x, y in zip(lo, hi)]).astype(np.int64)] if len(pa) else \
        np.zeros(0, np.int64)
    vals = a._v.index_select(0, _index(pa, a._v)) * b._v.index_select(0, _index(pb, b._v))
    idx = np.stack([ai[0][pa], bi[1][pb]]).astype(np.int64).reshape(2, -1)
    return SparseTensor(_index(idx, a._i), vals, (a._size[0], b._size[1])).coalesce()


def _mm(a, b, sparse_grad=False):
    if _is_sparse(a) and _is_sparse(b):
        return _spspmm(a, b)
    if _is_sparse(a):
        return _spmm(a, b, sparse_grad)
    if not _is_sparse(b):  # (torch.sparse.mm of two dense matrices: torch.mm)
        return _t.mm(a, b)
    return _dsmm(a, b, sparse_grad)


def smm(input, mat):
    """``torch.smm``: ``input.smm(mat)``."""
    if not _is_sparse(input):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    return input.smm(mat)


def hspmm(mat1, mat2):
    """``torch.hspmm``: sparse @ dense as a hybrid sparse tensor: one sparse dim, the rows with entries, each a
    dense row of the product (torch's)."""
    rows = np.unique(_host(mat1._i)[0]) if mat1._nnz() else np.zeros(0, np.int64)
    prod = _mm(mat1, mat2)
    return SparseTensor(_index(rows.reshape(1, -1), mat1._i), prod.index_select(0, _index(rows, prod)),
                        (mat1._size[0], prod._shape[1]), False)


def _addmm(inp, m1, m2, beta, alpha, sparse_grad):
    """``beta * inp + alpha * (m1 @ m2)`` (torch.addmm / torch.sparse.addmm); beta == 0: ``inp`` is not read (its
    NaN / inf do not reach the result), only its shape, as torch's."""
    if _is_sparse(m1) and isinstance(inp, _t.Tensor) and inp.dtype is not m1.dtype:
        raise RuntimeError(f"expected scalar type {m1.dtype.short} but found {inp.dtype.short}")
    prod = _mm(m1, m2, sparse_grad)
    prod = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return prod + _t.zeros_like(inp)
    return (inp if beta == 1 else inp * beta) + prod


def _same_size(a, b, name):
    """torch's checks of two sparse operands' sizes (add / sub; mul's intersection kernel)."""
    if a._size == b._size:
        return
    if name == "add":
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(a._size)} != "
                           f"{list(b._size)}")
    raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with equal dimensionality, "
                       "number of sparse dimensions, and shape of sparse dimensions")


def _add(a, b, alpha=1):
    if _is_sparse(a) and _is_sparse(b):
        _same_size(a, b, "add")
        if a.sparse_dim() != b.sparse_dim():
            raise RuntimeError("functorch_lite: adding sparse COO tensors of different sparse dims is not supported")
        return _merge(a, b, alpha)
    if _is_sparse(a):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if not isinstance(a, _t.Tensor):
        raise _no_kernel("add.Tensor", b._v.device)
    if tuple(a._shape) != b._size:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size {list(a._shape)} "
                           f"while other has size {list(b._size)} (FYI: dense-sparse addition does not currently "
                           "support broadcasting)")
    dense = _leaf_dense(b)
    if dense is not None:
        return _t.add(a, dense, alpha=alpha)
    vb = b._v if alpha == 1 else b._v * alpha
    dt = _t.promote_types(a.dtype, vb.dtype)
    out = a.to(dt)
    if b._nnz():
        out = out.index_put(tuple(b._i[d] for d in range(b.sparse_dim())), vb.to(dt), accumulate=True)
    return out


def _merge(a, b, alpha):
    """sparse + alpha * sparse as torch's CPU kernel: one merge of the two entry lists in their order (entries at
    the same position side by side are summed; otherwise the lexicographically smaller comes first), so coalesced
    inputs give a coalesced sum and uncoalesced ones the kernel's own mix."""
    ka, kb = _linear(a), _linear(b)
    if a._coalesced and b._coalesced:
        keys = np.union1d(ka, kb)
        pa, pb = np.searchsorted(keys, ka), np.searchsorted(keys, kb)
    else:
        pa, pb, n = np.empty(len(ka), np.int64), np.empty(len(kb), np.int64), 0
        p = q = 0
        while p < len(ka) and q < len(kb):
            if ka[p] == kb[q]:
                pa[p], pb[q] = n, n
                p, q = p + 1, q + 1
            elif ka[p] < kb[q]:
                pa[p], p = n, p + 1
            else:
                pb[q], q = n, q + 1
            n += 1
        pa[p:] = np.arange(n, n + len(ka) - p)
        n += len(ka) - p
        pb[q:] = np.arange(n, n + len(kb) - q)
        keys = np.empty(n + len(kb) - q, np.int64)
        keys[pa], keys[pb] = ka, kb
    vb = b._v if alpha == 1 else b._v * alpha
    dt = _t.promote_types(a.dtype, vb.dtype)
    if dt in (D.float16, D.bool):  # (torch's CPU sparse + sparse kernel lacks these)
        raise NotImplementedError(f"\"cadd_sparse\" not implemented for '{dt.short}'")
    vals = _t.zeros((len(keys),) + tuple(a._v._shape[1:]), dtype=dt, device=a._v.device)
    vals = vals.index_add(0, _index(pa, a._v), a._v.to(dt)).index_add(0, _index(pb, vb), vb.to(dt))
    sizes = a._size[:a.sparse_dim()]
    idx = np.stack(np.unravel_index(keys, sizes)).astype(np.int64).reshape(len(sizes), -1)
    return SparseTensor(_index(idx, a._i), vals, a._size, a._coalesced and b._coalesced)


def _index_select(s, dim, index):
    """Entries whose index along ``dim`` (a sparse dim) is selected, renumbered by the selection's order."""
    dim = _wrap_dim(dim, len(s._size))
    if not isinstance(index, _t.Tensor) or index.dim() != 1 or index.dtype is not D.int64:
        raise IndexError("index_select() argument index must be 1-D strided (non-sparse) long-tensor.")
    if dim >= s.sparse_dim():  # (a dense dim: the values' own index_select)
        size = list(s._size)
        size[dim] = index._shape[0]
        return SparseTensor(s._i, s._v.index_select(dim - s.sparse_dim() + 1, index), size, s._coalesced)
    sel = _host(index)
    bad = sel[(sel < -s._size[dim]) | (sel >= s._size[dim])]
    if len(bad):
        raise IndexError(f"index_select(): index contains {int(bad[0])} that is out of range for tensor of size "
                         f"{list(s._size)} at dimension {dim}")
    idx = _host(s._i)
    at = idx[dim]
    pos = [np.nonzero(at == (k % s._size[dim]))[0] for k in sel]
    take = np.concatenate(pos).astype(np.int64) if pos else np.zeros(0, np.int64)
    new = idx[:, take].copy()
    new[dim] = np.repeat(np.arange(len(sel)), [len(p) for p in pos])
    size = list(s._size)
    size[dim] = len(sel)
    return SparseTensor(_index(new, s._i), s._v.index_select(0, _index(take, s._v)), size, len(take) < 2)


def _mul(a, b):
    if _is_sparse(b) and not _is_sparse(a):
        a, b = b, a
    if _is_sparse(b):
        _same_size(a, b, "mul")
        if a._coalesced and b._coalesced:  # (the product where both have entries)
            if a.dtype is D.bool and b.dtype is D.bool:
                raise NotImplementedError("\"mul_out_sparse\" not implemented for 'Bool'")
            _, ia, ib = np.intersect1d(_linear(a), _linear(b), assume_unique=True, return_indices=True)
            return SparseTensor(a._i.index_select(1, _index(ia, a._i)), a._v.index_select(0, _index(ia, a._v)) *
                                b._v.index_select(0, _index(ib, b._v)), a._size, True)
        # (one operand keeps its entries, each times the other's coalesced value at its position or 0: torch's
        # choice -- the uncoalesced one; of two uncoalesced ones, the one with fewer entries, the second on a tie)
        if a._coalesced or not b._coalesced and a._nnz() >= b._nnz():
            u, o = b, a.coalesce()
        else:
            u, o = a, b.coalesce()
        keys, at = _linear(o), _linear(u)
        pick = np.full(len(at), len(keys), np.int64)
        if len(keys):
            pos = np.minimum(np.searchsorted(keys, at), len(keys) - 1)
            pick = np.where(keys[pos] == at, pos, len(keys))
        ov = _t.cat([o._v, _t.zeros((1,) + tuple(o._v._shape[1:]), dtype=o._v.dtype, device=o._v.device)])
        return SparseTensor(u._i, u._v * ov.index_select(0, _index(pick, ov)), u._size, False)
    if isinstance(b, _t.Tensor) and b._shape:  # (a dense operand: read at the entries, as a mask)
        dense = b.expand(a._size) if tuple(b._shape) != a._size else b
        at = dense[tuple(a._i[d] for d in range(a.sparse_dim()))]
        return SparseTensor(a._i, a._v * at, a._size, a._coalesced)
    return SparseTensor(a._i, a._v * b, a._size, a._coalesced)


def _div(a, b, rounding_mode=None):
    if not _is_sparse(a) or _is_sparse(b) or isinstance(b, _t.Tensor) and b._shape:
        raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                           f"{list(b.shape)} for divisor)")
    if rounding_mode in ("floor", "trunc"):  # (a rounding is not linear: torch rounds the coalesced values)
        a = a.coalesce()
    return SparseTensor(a._i, _t.div(a._v, b, rounding_mode=rounding_mode), a._size, a._coalesced)


# The pointwise ops of the op table torch 2.13 has a sparse COO kernel for (each checked on a sparse input, its
# other arguments numbers; the rest of ``POINTWISE`` raise torch's "Could not run" error on one -- clamp, angle,
# leaky_relu, exp, cos... -- even where they map 0 to 0).
_SPARSE_POINTWISE = frozenset((
    "abs", "asin", "asinh", "atan", "atanh", "ceil", "deg2rad", "div", "erf", "erfinv", "expm1", "floor",
    "floor_divide", "frac", "isinf", "isnan", "isneginf", "isposinf", "log1p", "mul", "nan_to_num", "neg", "positive",
    "pow", "rad2deg", "relu", "round", "sgn", "sign", "signbit", "sin", "sinh", "sqrt", "square", "tan", "tanh",
    "true_divide", "trunc"))
_NO_COALESCE = ("neg", "mul", "div", "true_divide", "positive")  # (linear: torch keeps the entries as they are)


def _pointwise(op, targs, sargs):
    """A one-tensor pointwise op with a sparse kernel (``_SPARSE_POINTWISE``; the others numbers), on the coalesced
    values (torch's sparse kernels of abs, neg, sqrt, relu, tanh, pow...); None for another (torch's no-kernel
    error follows)."""
    s = targs[0]
    if op.name not in _SPARSE_POINTWISE or not _is_sparse(s) or \
            any(_is_sparse(a) or isinstance(a, _t.Tensor) and (a.dim() or op.name != "floor_divide")
                for a in targs[1:]):
        if op.name == "floor_divide" and isinstance(targs[1], (_t.Tensor, SparseTensor)) and \
                (_is_sparse(s) or _is_sparse(targs[1])):
            raise RuntimeError("Sparse floor division requires a scalar or zero-dim dense tensor divisor (got shape "
                               f"{list(targs[1].shape)} for divisor)")
        return None
    if op.name == "pow" and targs[1] == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor "
                           "dense")
    c = s if op.name in _NO_COALESCE else s.coalesce()
    v = _dispatch.dispatch(op, (c._v,) + tuple(targs[1:]), sargs)
    if op.name == "pow" and v.dtype is not s.dtype:  # (torch's sparse pow writes into the input's dtype)
        _dispatch._check_cast(v.dtype, s.dtype)
        v = v.to(s.dtype)
    return SparseTensor(c._i, v, c._size, c._coalesced)


def _call(op, targs, sargs):
    """``_dispatch.dispatch``'s sparse branch (an argument is a sparse tensor): the op's sparse form or torch's
    error."""
    items = targs[0] if op.tensors == "list" and isinstance(targs[0], (list, tuple)) else targs
    sparse = next(a for a in items if type(a) is SparseTensor)
    name = op.name
    if name in ("mm", "spmm"):
        return _mm(*targs)
    if name == "matmul":
        a, b = targs
        if _is_sparse(a) and isinstance(b, _t.Tensor) and b.dim() == 1:
            return _spmm(a, b.unsqueeze(1))[:, 0]
        if isinstance(a, _t.Tensor) and a.dim() != 2 and _is_sparse(b):  # (1-D / batched dense @ sparse matrix)
            rows = _mm(a.reshape(-1, a._shape[-1]), b)
            return rows.reshape(tuple(a._shape[:-1]) + (rows._shape[-1],))
        return _mm(a, b)
    if name in ("t", "transpose", "unsqueeze", "conj"):
        return getattr(targs[0], name)(*sargs)
    if name == "permute":  # (the op's ``*dims``: one tuple)
        return targs[0].permute(*sargs[0])
    if name == "mv":
        a, vec = targs
        if not isinstance(vec, _t.Tensor) or a.dim() != 2 or vec.dim() != 1:
            raise RuntimeError(f"mv: two tensor dim should be 2 and 1, but got SparseTensor Dim: {a.dim()}Tensor "
                               f"Dim: {vec.dim() if isinstance(vec, _t.Tensor) else 0}")
        if a._size[1] != vec._shape[0]:
            raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
        return _spmm(a, vec.unsqueeze(1))[:, 0]
    if name == "addmm":
        inp, m1, m2 = targs
        beta, alpha = sargs
        return _addmm(inp, m1, m2, beta, alpha, False)
    if name in ("add", "sub"):
        a, b = targs
        alpha = sargs[0] if name == "add" else -sargs[0]
        if not isinstance(a, (_t.Tensor, SparseTensor)):  # (a number first: torch's errors of ``1 + s`` / ``1 - s``)
            if name == "add":
                raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size [] while "
                               f"other has size {list(b._size)} (FYI: dense-sparse addition does not currently "
                               "support broadcasting)")
        return _add(a, b, alpha)
    if name == "mul":
        return _mul(*targs)
    if name in ("div", "true_divide"):
        return _div(*targs, *sargs)
    if name == "sum":
        dim, keepdim, dtype, axis = sargs
        return targs[0].sum(dim if axis is None else axis, keepdim, dtype)
    if name == "clone":
        return targs[0].clone()
    if name == "cat":
        return _cat(items, sargs[0])
    if name == "stack":
        dim = _wrap_dim(sargs[0], len(items[0].shape) + 1)
        return _cat([_unsqueeze(s, dim) if _is_sparse(s) else s for s in items], dim)  # (a dense one: cat's error)
    if name == "index_select" and _is_sparse(targs[0]):
        return _index_select(targs[0], sargs[0], targs[1])
    if name in POINTWISE:
        r = _pointwise(op, targs, sargs)
        if r is not None:
            return r
    raise _no_kernel(_ATEN.get(name, name.lstrip("_")), sparse._v.device)


# (the aten op torch's error names, where it differs; an op table's "_name" is torch's "name": _leaky_relu...)
_ATEN = {"softmax": "_softmax", "log_softmax": "_log_softmax"}


def _unsqueeze(s, dim):
    """A new dim of size 1 at ``dim`` (wrapped): a sparse one (a row of zero indices) up to the sparse dims, else a
    dense one of the values (torch's)."""
    if dim > s.sparse_dim():
        return SparseTensor(s._i, s._v.unsqueeze(dim - s.sparse_dim() + 1), s._size[:dim] + (1,) + s._size[dim:],
                            False)
    idx = _t.cat([s._i[:dim], _t.zeros((1, s._nnz()), dtype=D.int64, device=s._i.device), s._i[dim:]])
    return SparseTensor(idx, s._v, s._size[:dim] + (1,) + s._size[dim:], False)


def _cat(items, dim):
    dense = next((k for k, s in enumerate(items) if not _is_sparse(s)), None)
    if dense is not None:
        raise RuntimeError(f"Concatenating sparse tensors, but a dense tensor was found at position {dense}.")
    first = items[0]
    dim = _wrap_dim(dim, len(first._size))
    sd = first.sparse_dim()
    for k, s in enumerate(items):
        if s._size[:dim] + s._size[dim + 1:] != first._size[:dim] + first._size[dim + 1:]:
            raise RuntimeError(f"All tensors must have the same shape: {list(first._size)} (except in the "
                               f"concatenating dimension), but found shape: {list(s._size)} at position {k}.")
    if any(s.sparse_dim() != sd for s in items):
        raise RuntimeError("functorch_lite: cat of sparse COO tensors of different sparse dims is not supported")
    if dim >= sd:  # (a dense dim: every entry, its values zero-padded outside its own part, torch's)
        d, total, offset, vals = dim - sd + 1, builtins.sum(s._size[dim] for s in items), 0, []
        for s in items:
            pad = [0, 0] * (s._v.dim() - 1 - d) + [offset, total - offset - s._size[dim]]
            vals.append(_t.nn.functional.pad(s._v, pad))
            offset += s._size[dim]
        size = list(first._size)
        size[dim] = total
        return SparseTensor(_t.cat([s._i for s in items], 1), _t.cat(vals), size)
    offset, idx = 0, []
    for s in items:
        shift = np.zeros((s.sparse_dim(), 1), np.int64)
        shift[dim] = offset
        idx.append(s._i + _index(shift, s._i))
        offset += s._size[dim]
    size = list(first._size)
    size[dim] = offset
    return SparseTensor(_t.cat(idx, 1), _t.cat([s._v for s in items]), size)


# ---- construction -----------------------------------------------------------------------------------------
def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """``torch.sparse_coo_tensor``: indices (sparse_dim x nnz; converted to int64), values (nnz x dense dims),
    size (inferred from the largest index and the values' shape when None); or ``(size)`` / ``(size=)`` alone: no
    entries (every dim sparse)."""
    if values is None:
        if indices is not None and size is not None or indices is None and size is None:
            raise TypeError("sparse_coo_tensor() missing required argument 'values'")
        size = tuple(indices if size is None else size)
        indices = _t.zeros((len(size), 0), dtype=D.int64)
        values = _t.zeros((0,), dtype=dtype)
    i = indices if isinstance(indices, _t.Tensor) else _t.tensor(indices)
    v = values if isinstance(values, _t.Tensor) else _t.tensor(values, dtype=dtype)
    if dtype is not None and v.dtype is not dtype:
        v = v.to(dtype)
    if device is not None:
        v, i = v.to(device), i.to(device)
    elif i.device != v.device:
        i = i.to(v.device)
    if i.dtype is not D.int64:
        i = i.to(D.int64)
    if i.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(i._shape)}")
    if v.dim() == 0:  # (one value: nnz 1, as torch's)
        v = v.reshape(1)
    sd, nnz = i._shape
    if v._shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {v._shape[0]}")
    dense = tuple(v._shape[1:])
    if size is None:  # (the indices read on the host only here and for the invariant checks: data-dependent)
        size = tuple(int(m) + 1 for m in _host(i).max(1)) if nnz else (0,) * sd
        size = size + dense
    else:
        size = tuple(int(s) for s in size)
        if any(s < 0 for s in size):
            raise RuntimeError("numel: integer multiplication overflow")  # (torch's wording for a negative size)
        if len(size) != sd + len(dense):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {sd}, dense_dim = {len(dense)}")
    if (_INVARIANTS[0] if check_invariants is None else check_invariants) and nnz:
        idx = _host(i)
        for d in range(sd):
            if idx[d].min() < 0:
                raise RuntimeError(f"found negative index {int(idx[d].min())} for dim {d}")
            if idx[d].max() >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {int(idx[d].max())}")
        if is_coalesced and nnz > 1:  # (the claim verified: sorted, unique positions)
            key = np.ravel_multi_index(tuple(idx), size[:sd]) if sd else np.zeros(nnz, np.int64)
            if not (np.diff(key) > 0).all():
                raise RuntimeError("cannot set is_coalesced to true if indices correspond to uncoalesced COO tensor")
    if requires_grad:
        v = v.detach().requires_grad_()
    if check_invariants is None and not _INVARIANTS[0] and not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when "
                      "operating on a sparse tensor which violates the invariants, but checks incur performance "
                      "overhead. To silence this warning, explicitly opt in or out. See "
                      "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  (Triggered internally at "
                      "/__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)", UserWarning,
                      stacklevel=_user_stacklevel())
    return SparseTensor(i, v, size, bool(is_coalesced) or nnz < 2, bool(requires_grad))  # (0 or 1 entry: coalesced)


def dense_to_sparse(x, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``Tensor.to_sparse`` / ``to_sparse_coo``: the coalesced entries of a dense tensor (``sparse_dim`` leading
    dims sparse: a position is an entry when any of its dense slice is nonzero)."""
    if layout not in (None, _t.sparse_coo) or blocksize is not None:
        raise RuntimeError(f"functorch_lite has dense and sparse COO tensors only: to_sparse(layout={layout}) is "
                           "not supported")
    n = x.dim()
    sd = n if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= n:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{n}] range, but {sd} is given")
    h = _host(x.detach())
    if sd == 0:
        if n:
            raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
        nnz = int(h != 0)  # (a 0-d tensor: one entry where it is nonzero)
        return SparseTensor(_t.zeros((0, nnz), dtype=D.int64, device=x.device), x.reshape(1)[:nnz], (), True)
    mask = h != 0 if sd == n else (h != 0).reshape(h.shape[:sd] + (-1,)).any(-1)
    idx = np.stack(np.nonzero(mask)).astype(np.int64).reshape(sd, -1)
    vals = x[tuple(_index(idx[d], x) for d in range(sd))]
    return SparseTensor(_index(idx, x), vals, tuple(x._shape), True)


_LEGACY_WARNED: set = set()  # (the legacy constructors' deprecations given: each once a process, as torch's)


def _warn_once(message, level):
    if message not in _LEGACY_WARNED:
        _LEGACY_WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=level)


def _legacy(dtype, name):
    def constructor(*args, device=None):
        """``torch.sparse.<T>Tensor(indices, values[, size])`` / ``(*sizes)``: deprecated, as torch warns."""
        level = _user_stacklevel()
        if args and isinstance(args[0], _t.Tensor):
            shape = ", shape" if len(args) > 2 else ""
            _warn_once(f"torch.sparse.SparseTensor(indices, values{shape}, *, device=) is deprecated.  Please use "
                       f"torch.sparse_coo_tensor(indices, values{shape}, dtype=, device=). (Triggered internally "
                       f"at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:{653 if shape else 641}.)", level)
            # (the values' own dtype kept, whatever the legacy type names: torch's)
            return sparse_coo_tensor(args[0], args[1], args[2] if len(args) > 2 else None, device=device)
        _warn_once("torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please use "
                   "torch.sparse_coo_tensor(shape, dtype=, device=). (Triggered internally at "
                   "/__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:684.)", level)
        size = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        return sparse_coo_tensor(_t.zeros((len(size), 0), dtype=D.int64), _t.zeros((0,), dtype=dtype), size,
                                 device=device)
    constructor.__name__ = constructor.__qualname__ = name
    constructor._dtype = dtype  # (``s.type(torch.sparse.DoubleTensor)``)
    return constructor


FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, \
    ByteTensor, BoolTensor = (_legacy(getattr(D, dt), n) for dt, n in (
        ("float32", "FloatTensor"), ("float64", "DoubleTensor"), ("float16", "HalfTensor"),
        ("bfloat16", "BFloat16Tensor"), ("int64", "LongTensor"), ("int32", "IntTensor"), ("int16", "ShortTensor"),
        ("int8", "CharTensor"), ("uint8", "ByteTensor"), ("bool", "BoolTensor")))


# ---- torch.sparse's functions -----------------------------------------------------------------------------
def mm(mat1, mat2, reduce=None):
    """``torch.sparse.mm``: sparse @ dense (dense), sparse @ sparse (sparse); a sparse leaf's gradient is sparse
    (the dense one masked to its pattern). ``reduce`` (torch's CSR-only reductions) raises torch's CPU error."""
    if reduce is not None:
        raise _no_kernel("_sparse_mm_reduce_impl", mat1.device)
    return _mm(mat1, mat2, sparse_grad=True)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)``, mat1 sparse."""
    return _addmm(mat, mat1, mat2, beta, alpha, True)


def sum(input, dim=None, dtype=None):  # noqa: A001 (torch.sparse.sum)
    """``torch.sparse.sum``: all entries (a dense 0-d tensor), or over ``dim`` (sparse dims summed away: the rest
    stays sparse, coalesced; all of them: dense)."""
    if not _is_sparse(input):  # (torch's CPU errors: no sparse sum of a dense tensor)
        if dim is None:
            raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")
        raise _no_kernel("_indices", input.device, "")
    if input.dtype is D.bool:  # (duplicates OR-ed first: a bool sum counts positions, as torch's)
        input = input.coalesce()
    v = input._v if dtype is None else input._v.to(dtype)
    if dim is None:
        return v.sum()
    n, sd = len(input._size), input.sparse_dim()
    wrapped = [_wrap_dim(d, n) for d in ((dim,) if isinstance(dim, int) else dim)]
    dims = sorted(set(wrapped))
    if len(dims) != len(wrapped):
        raise RuntimeError(f"dim {next(d for k, d in enumerate(wrapped) if d in wrapped[:k])} appears multiple "
                           "times in the list of dims")
    sparse_dims = [d for d in dims if d < sd]
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        v = v.sum(dense_dims)
    keep = [d for d in range(n) if d not in dims]
    if len(sparse_dims) == sd:
        return v.sum(0)
    kept_sparse = [d for d in range(sd) if d not in sparse_dims]
    out = SparseTensor(input._i[kept_sparse], v, [input._size[d] for d in keep])
    return out.coalesce()


def _grouped(input, dim, log):
    if not _is_sparse(input):
        raise _no_kernel("_sparse_log_softmax" if log else "_sparse_softmax", input.device, "")
    if input.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f'"{"log_softmax" if log else "softmax"}" not implemented for '
                                  f"'{input.dtype.short}'")
    s = input.coalesce()
    n, sd = len(s._size), s.sparse_dim()
    dim = _wrap_dim(dim, n)
    if dim >= sd:  # (a dense dim: each entry's values on their own)
        v = (_t.log_softmax if log else _t.softmax)(s._v, dim - sd + 1)
        return SparseTensor(s._i, v, s._size, True)
    if not s._nnz():
        return s
    idx = _host(s._i)
    others = [d for d in range(sd) if d != dim]
    key = np.ravel_multi_index(tuple(idx[others]), [s._size[d] for d in others]) if others else \
        np.zeros(idx.shape[1], np.int64)
    _, inv = np.unique(key, return_inverse=True)
    g = _index(inv.reshape(-1), s._v)
    groups = int(inv.max()) + 1
    v = s._v
    dense = tuple(v._shape[1:])  # (a hybrid tensor: each dense position a softmax of its own)
    top = _t.full((groups,) + dense, float("-inf"), dtype=v.dtype, device=v.device).scatter_reduce(
        0, g.reshape((-1,) + (1,) * len(dense)).expand(v._shape) if dense else g, v.detach(), "amax")
    shifted = v - top.index_select(0, g)
    total = _t.zeros((groups,) + dense, dtype=v.dtype, device=v.device).index_add(0, g, shifted.exp())
    out = shifted - total.log().index_select(0, g) if log else shifted.exp() / total.index_select(0, g)
    return SparseTensor(s._i, out, s._size, True)


def softmax(input, dim, *, dtype=None):
    """``torch.sparse.softmax``: over the entries along ``dim`` (absent ones are -inf: they take no share)."""
    return _grouped(input if dtype is None else input.to(dtype), dim, False)


def log_softmax(input, dim, *, dtype=None):
    """``torch.sparse.log_softmax``."""
    return _grouped(input if dtype is None else input.to(dtype), dim, True)


class check_sparse_tensor_invariants:
    """``torch.sparse.check_sparse_tensor_invariants``: while enabled (a context manager, a decorator, or
    ``enable()``), ``sparse_coo_tensor`` checks its indices against the size."""

    @staticmethod
    def is_enabled() -> bool:
        return _INVARIANTS[0]

    @staticmethod
    def enable() -> None:
        _INVARIANTS[0] = True

    @staticmethod
    def disable() -> None:
        _INVARIANTS[0] = False

    def __init__(self, enable: bool = True):
        self.state, self.saved = enable, None

    def __enter__(self):
        self.saved, _INVARIANTS[0] = _INVARIANTS[0], self.state
        return self

    def __exit__(self, *exc):
        _INVARIANTS[0] = self.saved

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return fn(*args, **kwargs)
        return wrapped


Tensor = _t.Tensor  # (torch.sparse re-exports it)
