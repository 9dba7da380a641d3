"""``torch.sparse`` and sparse COO tensors: ``torch.sparse_coo_tensor``, ``Tensor.to_sparse``, ``torch.sparse.mm``...

A sparse COO tensor is a :class:`SparseTensor`: an int64 indices tensor (sparse_dim x nnz), a values tensor
(nnz x the dense dims) and a size, as torch's SparseTensorImpl, coalesced or not. Its operations are the facade's
dense ops over those two tensors (index_select / index_add / index_put, and NumPy on the host for the index
arithmetic a coalesce or a sparse product needs: data-dependent, as torch's), so gradients reach the values -- and
whatever they were computed from, learnable edge weights say -- and a dense operand through the ordinary graph.
A leaf created with ``requires_grad=True`` gets torch's sparse gradient of ``torch.sparse.mm`` (the dense
gradient masked to its pattern).

An op of the op table that meets a sparse tensor (``_dispatch.dispatch``'s first check, live once one exists)
runs its sparse form here (``_OPS``; a pointwise op of one tensor that maps 0 to 0 on the coalesced values, as
torch's sparse kernels of abs / neg / sqrt / relu...) or raises torch's "Could not run 'aten::<op>' with arguments
from the 'SparseCPU' backend". Differences from torch: ``isinstance(s, torch.Tensor)`` is False (a sparse tensor
is not one dense array); CSR / CSC / BSR layouts, semi-structured sparsity, ``spdiags``, ``sampled_addmm`` and
``spsolve`` are not provided; the dense gradient ``torch.mm`` / ``spmm`` / ``matmul`` give a sparse *leaf* that
requires grad raises (``torch.sparse.mm``'s sparse one works); hybrid tensors (dense dims) support construction,
coalesce, to_dense, sums, products by numbers and sparse-dense products' checks but not softmax nor transposes of
their dense dims.
"""
from __future__ import annotations

import warnings

import jax
import numpy as np

import functorch_lite as _t  # (attributes read at call time: this module is imported by the package's __init__)
from .. import dtypes as D
from .._warn import user_stacklevel as _user_stacklevel
from ..ops import _dispatch
from ..ops._registry import POINTWISE

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants", "FloatTensor",
           "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
           "ByteTensor", "BoolTensor"]

_INVARIANTS = [False]  # (check_sparse_tensor_invariants: bounds checked at construction)
_WARNED = [False]  # (torch's warning that they are not, once a process)


def _no_kernel(name, device) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'Sparse{device.type.upper()}' backend. This could be "
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
        _dispatch.SPARSE[0] = _call  # (from the first sparse tensor on, the op table's dispatch looks for them)

    # ---- metadata ------------------------------------------------------------------------------------------
    @property
    def shape(self):
        return _t.Size(self._size)

    def size(self, dim=None):
        return _t.Size(self._size) if dim is None else self._size[_wrap(dim, len(self._size))]

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
        sd = self.sparse_dim()
        out = _t.zeros(self._size, dtype=self._v.dtype, device=self._v.device)
        if self._nnz():
            out = out.index_put(tuple(self._i[d] for d in range(sd)), self._v, accumulate=True)
        return out if dtype is None else out.to(dtype)

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
        return self.to(dtype)

    # ---- shape ---------------------------------------------------------------------------------------------
    def transpose(self, dim0, dim1):
        n, sd = len(self._size), self.sparse_dim()
        d0, d1 = _wrap(dim0, n), _wrap(dim1, n)
        if d0 == d1:
            return self
        if d0 >= sd or d1 >= sd:
            raise RuntimeError("functorch_lite: transposing a dense dim of a hybrid sparse COO tensor is not "
                               "supported")
        perm = list(range(sd))
        perm[d0], perm[d1] = d1, d0
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        return SparseTensor(self._i[perm], self._v, size, False)

    def t(self):
        if len(self._size) > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        return self.transpose(0, 1) if len(self._size) == 2 else self

    def select(self, dim, index):
        n = len(self._size)
        dim = _wrap(dim, n)
        if dim != 0 or not isinstance(index, int):
            raise RuntimeError("functorch_lite: a sparse COO tensor's select / indexing supports an int index along "
                               "dim 0 only")
        if not -self._size[0] <= index < self._size[0]:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self._size)} at "
                             f"dimension 0")
        index %= self._size[0]
        keep = np.nonzero(_host(self._i)[0] == index)[0]
        pos = _index(keep, self._i)
        if self.sparse_dim() == 1:  # (a dense result: the values at that index, summed)
            return self._v.index_select(0, pos).sum(0)
        return SparseTensor(self._i[1:].index_select(1, pos), self._v.index_select(0, pos), self._size[1:],
                            self._coalesced)

    def __getitem__(self, index):
        return self.select(0, index)

    # ---- arithmetic (the op table's forms: ``_call``) --------------------------------------------------------
    def __add__(self, other):
        return _t.add(self, other)

    def __radd__(self, other):
        return _t.add(other, self)

    def __sub__(self, other):
        return _t.sub(self, other)

    def __rsub__(self, other):
        return _t.sub(other, self)

    def __mul__(self, other):
        return _t.mul(self, other)

    def __rmul__(self, other):
        return _t.mul(other, self)

    def __truediv__(self, other):
        return _t.div(self, other)

    def __neg__(self):
        return _t.neg(self)

    def __pow__(self, exponent):
        return _t.pow(self, exponent)

    def __eq__(self, other):
        return _t.eq(self, other)

    def __ne__(self, other):
        return _t.ne(self, other)

    __hash__ = object.__hash__

    def __matmul__(self, other):
        return _t.matmul(self, other)

    def __rmatmul__(self, other):
        return _t.matmul(other, self)

    def sum(self, dim=None, keepdim=False, dtype=None):
        if keepdim:
            raise RuntimeError("functorch_lite: sum(keepdim=True) of a sparse COO tensor is not supported")
        return sum(self, dim, dtype=dtype)

    def __getattr__(self, name):
        """A Tensor method not written above: the op table's function of that name (its sparse form or torch's
        "Could not run ... 'SparseCPU' backend" error); anything else is no attribute."""
        if not name.startswith("_") and hasattr(_t.Tensor, name):
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


# ---- helpers ----------------------------------------------------------------------------------------------
def _wrap(dim, n):
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                         f"but got {dim})")
    return dim % max(n, 1)


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
    if d.dim() != 2:
        raise RuntimeError(f"{name}: matrices expected, got {d.dim()}D tensor")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {s.dtype.legacy[:-6]} but found {d.dtype.legacy[:-6]}")
    if d._shape[0] != s._size[1]:
        raise RuntimeError(f"{name}: Argument #3 (dense): Expected dim 0 size {s._size[1]}, got {d._shape[0]}")


def _spmm(s, d, sparse_grad=False):
    """sparse (m, k) @ dense (k, n): each entry's row of ``d`` scaled by its value, summed into its row."""
    _check_mm(s, d)
    if s._leaf and s.requires_grad and not sparse_grad and _t.is_grad_enabled():
        # (torch.mm's gradient of a sparse leaf is dense: the product of its dense form plus a dense zero leaf, whose
        # gradient ``grad`` gives)
        if s._dense_grad is None:
            from .._compile.runner import TRACING
            if TRACING[0]:  # (new state a compiled program cannot create: this call runs eagerly, the next compiles)
                raise _dispatch.data_dependent_error("the first dense gradient of a sparse leaf that requires grad "
                                                     "(torch.mm / spmm / matmul of it)")
            s._dense_grad = _t.zeros(s._size, dtype=s.dtype, device=s.device).requires_grad_()
        return _t.mm(s.detach().to_dense() + s._dense_grad, d)
    out = _t.zeros((s._size[0], d._shape[1]), dtype=d.dtype, device=d.device)
    if not s._nnz():
        return out
    contrib = d.index_select(0, s._i[1]) * s._v.unsqueeze(1)
    return out.index_add(0, s._i[0], contrib)


def _dsmm(d, s):
    """dense (m, k) @ sparse (k, n) = (sparse^T @ dense^T)^T."""
    if not isinstance(d, _t.Tensor) or d.dim() != 2:
        raise RuntimeError("functorch_lite: dense @ sparse COO needs a 2-D dense operand")
    if d._shape[1] != s._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({d._shape[0]}x{d._shape[1]} and "
                           f"{s._size[0]}x{s._size[1]})")
    return _spmm(s.t(), d.t()).t().contiguous()


def _spspmm(a, b):
    """sparse @ sparse: a sparse, coalesced product (every pair of entries a[r, c], b[c, n] meets)."""
    if a.sparse_dim() != 2 or b.sparse_dim() != 2 or a.dense_dim() or b.dense_dim():
        raise RuntimeError("functorch_lite: sparse @ sparse needs two 2-D sparse COO matrices")
    if a._size[1] != b._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._size[0]}x{a._size[1]} and "
                           f"{b._size[0]}x{b._size[1]})")
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
    return _dsmm(a, b)


def _same_size(a, b, name):
    if a._size != b._size:
        raise RuntimeError(f"{name} operands have incompatible sizes")


def _add(a, b, alpha=1):
    if _is_sparse(a) and _is_sparse(b):
        _same_size(a, b, "add:")
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
    vals = _t.zeros((len(keys),) + tuple(a._v._shape[1:]), dtype=dt, device=a._v.device)
    vals = vals.index_add(0, _index(pa, a._v), a._v.to(dt)).index_add(0, _index(pb, vb), vb.to(dt))
    sizes = a._size[:a.sparse_dim()]
    idx = np.stack(np.unravel_index(keys, sizes)).astype(np.int64).reshape(len(sizes), -1)
    return SparseTensor(_index(idx, a._i), vals, a._size, a._coalesced and b._coalesced)


def _index_select(s, dim, index):
    """Entries whose index along ``dim`` (a sparse dim) is selected, renumbered by the selection's order."""
    dim = _wrap(dim, len(s._size))
    if dim >= s.sparse_dim():
        raise RuntimeError("functorch_lite: index_select along a dense dim of a hybrid sparse COO tensor is not "
                           "supported")
    sel = _host(index).reshape(-1)
    idx = _host(s._i)
    at = idx[dim]
    pos = [np.nonzero(at == (k % s._size[dim]))[0] for k in sel]
    take = np.concatenate(pos).astype(np.int64) if pos else np.zeros(0, np.int64)
    new = idx[:, take].copy()
    new[dim] = np.repeat(np.arange(len(sel)), [len(p) for p in pos])
    size = list(s._size)
    size[dim] = len(sel)
    return SparseTensor(_index(new, s._i), s._v.index_select(0, _index(take, s._v)), size)


def _mul(a, b):
    if _is_sparse(b) and not _is_sparse(a):
        a, b = b, a
    if _is_sparse(b):
        _same_size(a, b, "mul:")
        if a._coalesced and b._coalesced:  # (the product where both have entries)
            _, ia, ib = np.intersect1d(_linear(a), _linear(b), assume_unique=True, return_indices=True)
            return SparseTensor(a._i.index_select(1, _index(ia, a._i)), a._v.index_select(0, _index(ia, a._v)) *
                                b._v.index_select(0, _index(ib, b._v)), a._size, True)
        # (an uncoalesced operand keeps its entries, each times the other's value at its position or 0: torch's)
        u, o = (a, b.coalesce()) if not a._coalesced else (b, a)
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
        raise _no_kernel("div.Tensor", (a if _is_sparse(a) else b)._v.device)
    return SparseTensor(a._i, _t.div(a._v, b, rounding_mode=rounding_mode), a._size, a._coalesced)


def _pointwise(op, targs, sargs):
    """A one-tensor pointwise op (the others numbers) that maps 0 to 0, on the coalesced values (torch's sparse
    kernels of abs, neg, sqrt, relu, tanh, pow...); another raises torch's no-kernel error."""
    s = targs[0]
    if not _is_sparse(s) or any(isinstance(a, (_t.Tensor, SparseTensor)) for a in targs[1:]):
        return None
    zero = _dispatch.dispatch(op, (_t.zeros((), dtype=s.dtype, device=s.device),) + tuple(targs[1:]), sargs)
    if zero.item() != 0:
        return None
    linear = op.name in ("neg", "mul", "div")  # (no coalesce needed: torch keeps the entries)
    c = s if linear else s.coalesce()
    return SparseTensor(c._i, _dispatch.dispatch(op, (c._v,) + tuple(targs[1:]), sargs), c._size, c._coalesced)


def _call(op, targs, sargs):
    """``_dispatch.dispatch``'s sparse branch: ``_dispatch.NOT_SPARSE`` where no argument is a sparse tensor, else
    the op's sparse form or torch's error."""
    items = targs[0] if op.tensors == "list" and isinstance(targs[0], (list, tuple)) else targs
    sparse = next((a for a in items if type(a) is SparseTensor), None)
    if sparse is None:
        return _dispatch.NOT_SPARSE
    name = op.name
    if name in ("mm", "spmm"):
        return _mm(*targs)
    if name == "matmul":
        a, b = targs
        if _is_sparse(a) and isinstance(b, _t.Tensor) and b.dim() == 1:
            return _spmm(a, b.unsqueeze(1))[:, 0]
        return _mm(a, b)
    if name == "mv":
        return _spmm(targs[0], targs[1].unsqueeze(1))[:, 0]
    if name == "addmm":
        inp, m1, m2 = targs
        beta, alpha = sargs
        prod = _mm(m1, m2)
        return (inp if beta == 1 else inp * beta) + (prod if alpha == 1 else prod * alpha)
    if name in ("add", "sub"):
        a, b = targs
        alpha = sargs[0] if name == "add" else -sargs[0]
        if name == "sub" and _is_sparse(a) and not _is_sparse(b):
            raise RuntimeError("sub(sparse, dense) is not supported. Use sub(dense, sparse) instead.")
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
        dim = _wrap(sargs[0], len(items[0]._size) + 1)
        return _cat([_unsqueeze(s, dim) for s in items], dim)
    if name == "index_select" and _is_sparse(targs[0]):
        return _index_select(targs[0], sargs[0], targs[1])
    if name in POINTWISE:
        r = _pointwise(op, targs, sargs)
        if r is not None:
            return r
    raise _no_kernel(_ATEN.get(name, name), sparse._v.device)


_ATEN = {"softmax": "_softmax", "log_softmax": "_log_softmax"}  # (the aten op torch's error names, where it differs)


def _unsqueeze(s, dim):
    if not _is_sparse(s) or dim > s.sparse_dim():
        raise RuntimeError("functorch_lite: stack of sparse COO tensors along a dense dim (or with dense ones) is "
                           "not supported")
    idx = _t.cat([s._i[:dim], _t.zeros((1, s._nnz()), dtype=D.int64, device=s._i.device), s._i[dim:]])
    return SparseTensor(idx, s._v, s._size[:dim] + (1,) + s._size[dim:], s._coalesced)


def _cat(items, dim):
    if not all(_is_sparse(s) for s in items):
        raise RuntimeError("functorch_lite: cat of sparse COO tensors with dense ones is not supported")
    first = items[0]
    dim = _wrap(dim, len(first._size))
    if dim >= first.sparse_dim() or any(s.sparse_dim() != first.sparse_dim() for s in items):
        raise RuntimeError("functorch_lite: cat of sparse COO tensors along a dense dim is not supported")
    offset, idx = 0, []
    for s in items:
        if s._size[:dim] + s._size[dim + 1:] != first._size[:dim] + first._size[dim + 1:]:
            raise RuntimeError("functorch_lite: cat of sparse COO tensors needs equal sizes outside the cat dim")
        shift = np.zeros((s.sparse_dim(), 1), np.int64)
        shift[dim] = offset
        idx.append(s._i + _index(shift, s._i))
        offset += s._size[dim]
    size = list(first._size)
    size[dim] = offset
    return SparseTensor(_t.cat(idx, 1), _t.cat([s._v for s in items]), size)


# ---- construction -----------------------------------------------------------------------------------------
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """``torch.sparse_coo_tensor``: indices (sparse_dim x nnz; converted to int64), values (nnz x dense dims),
    size (inferred from the largest index and the values' shape when None)."""
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
    if v.dim() == 0:
        raise RuntimeError("values must have at least one dimension (nnz)")  # (torch expands a 0-d value)
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
        raise RuntimeError(f"sparse_dim must be in [0, {n}], but got {sd}")  # (torch's wording differs per path)
    h = _host(x.detach())
    mask = h != 0 if sd == n else (h != 0).reshape(h.shape[:sd] + (-1,)).any(-1)
    idx = np.stack(np.nonzero(mask)).astype(np.int64).reshape(sd, -1)
    vals = x[tuple(_index(idx[d], x) for d in range(sd))] if sd else x.unsqueeze(0)
    return SparseTensor(_index(idx, x), vals, tuple(x._shape), True)


def _legacy(dtype, name):
    def constructor(*args, device=None):
        """``torch.sparse.<T>Tensor(indices, values[, size])`` / ``(*sizes)``: deprecated, as torch warns."""
        level = _user_stacklevel()
        if args and isinstance(args[0], _t.Tensor):
            shape = ", shape" if len(args) > 2 else ""
            warnings.warn(f"torch.sparse.SparseTensor(indices, values{shape}, *, device=) is deprecated.  Please use "
                          f"torch.sparse_coo_tensor(indices, values{shape}, dtype=, device=). (Triggered internally "
                          f"at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:{653 if shape else 641}.)",
                          UserWarning, stacklevel=level)
            return sparse_coo_tensor(args[0], args[1], args[2] if len(args) > 2 else None, dtype=dtype, device=device)
        warnings.warn("torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please use "
                      "torch.sparse_coo_tensor(shape, dtype=, device=). (Triggered internally at "
                      "/__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:684.)", UserWarning, stacklevel=level)
        size = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        return sparse_coo_tensor(_t.zeros((len(size), 0), dtype=D.int64), _t.zeros((0,), dtype=dtype), size,
                                 device=device)
    constructor.__name__ = constructor.__qualname__ = name
    return constructor


FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, \
    ByteTensor, BoolTensor = (_legacy(getattr(D, dt), n) for dt, n in (
        ("float32", "FloatTensor"), ("float64", "DoubleTensor"), ("float16", "HalfTensor"),
        ("bfloat16", "BFloat16Tensor"), ("int64", "LongTensor"), ("int32", "IntTensor"), ("int16", "ShortTensor"),
        ("int8", "CharTensor"), ("uint8", "ByteTensor"), ("bool", "BoolTensor")))


# ---- torch.sparse's functions -----------------------------------------------------------------------------
def mm(mat1, mat2):
    """``torch.sparse.mm``: sparse @ dense (dense), sparse @ sparse (sparse); a sparse leaf's gradient is sparse
    (the dense one masked to its pattern)."""
    return _mm(mat1, mat2, sparse_grad=True)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)``, mat1 sparse."""
    prod = _mm(mat1, mat2, sparse_grad=True)
    return (mat if beta == 1 else mat * beta) + (prod if alpha == 1 else prod * alpha)


def sum(input, dim=None, dtype=None):  # noqa: A001 (torch.sparse.sum)
    """``torch.sparse.sum``: all entries (a dense 0-d tensor), or over ``dim`` (sparse dims summed away: the rest
    stays sparse, coalesced; all of them: dense)."""
    if not _is_sparse(input):
        return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)
    v = input._v if dtype is None else input._v.to(dtype)
    if dim is None:
        return v.sum()
    n, sd = len(input._size), input.sparse_dim()
    dims = sorted({_wrap(d, n) for d in ((dim,) if isinstance(dim, int) else dim)})
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
        return (_t.log_softmax if log else _t.softmax)(input, dim)
    s = input.coalesce()
    n, sd = len(s._size), s.sparse_dim()
    dim = _wrap(dim, n)
    if s.dense_dim() or dim >= sd:
        raise RuntimeError("functorch_lite: sparse softmax over a hybrid sparse COO tensor is not supported")
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
    top = _t.full((groups,), float("-inf"), dtype=v.dtype, device=v.device).scatter_reduce(
        0, g, v.detach(), "amax")
    shifted = v - top.index_select(0, g)
    total = _t.zeros((groups,), dtype=v.dtype, device=v.device).index_add(0, g, shifted.exp())
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
