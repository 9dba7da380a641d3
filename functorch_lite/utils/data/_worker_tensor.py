"""Tensors inside a DataLoader worker process: :class:`TensorArray`, NumPy-backed, never JAX.

Workers never run JAX (it is not fork-safe), so the tensors a dataset holds reach them as
:class:`TensorArray` values (a ``numpy.ndarray`` subclass), and the creation functions
(``torch.tensor``, ``as_tensor``, ``from_numpy``, ``zeros``/``ones``/``empty``/``full``/``arange``, their
``*_like``, ``stack``/``cat``) make them there too, with PyTorch's dtype inference. The main process turns
each one into a facade Tensor.

A ``TensorArray`` never silently takes NumPy's meaning for a tensor method: it supports an explicit
list of methods and operators, computed with PyTorch's semantics (dtype promotion with Python scalars,
int / int -> the default float, ``std``/``var`` unbiased with ``dim``/``keepdim``, ``max(dim)`` ->
``(values, indices)``, ``transpose(d0, d1)``, ``repeat`` as tiling, ``size(dim)``, ``dtype`` a torch dtype,
casts as PyTorch's CPU kernels...). Every other attribute -- ``x.median()``, NumPy-only names like
``x.astype`` -- raises :class:`WorkerTensorError`, which names it and says what to do instead.
NumPy functions called explicitly on one (``np.concatenate([x, y])``) see a plain ``ndarray`` and give
NumPy's result, as they do on a real tensor.
"""
from __future__ import annotations

import builtins
import functools
import operator
import types
import warnings

import numpy as np

from ... import dtypes as D
from ..._promotion import default_float_of, promote_types, result_type_sig, rule_matmul, scalar_dtype
from ..._tensor.tensor import Size as _Size

_py_bool, _py_int, _py_float, _py_complex = builtins.bool, builtins.int, builtins.float, builtins.complex
_HALF = (D.float16, D.bfloat16)

UNSUPPORTED = (
    "{what} is not available on a tensor inside a DataLoader worker process (num_workers > 0): there, tensors are "
    "NumPy-backed stand-ins (workers never run JAX, which is not fork-safe) that support only the part of the "
    "Tensor API computed with PyTorch's semantics (indexing, shape/size/dim/numel/dtype, arithmetic and "
    "comparison operators, sum/mean/std/var/max/min/argmax, reshape/view/transpose/permute/repeat/flatten/"
    "squeeze/unsqueeze, to/float/long..., tolist/item/numpy/clone). Return the tensor from __getitem__ and "
    "call {what} on the batch in the main process, or use NumPy explicitly in the worker (x.numpy(), with "
    "NumPy's semantics).")


class WorkerTensorError(AttributeError, RuntimeError):
    """A tensor method or operation that a DataLoader worker's NumPy-backed tensors do not provide (an
    AttributeError, so ``hasattr`` is False; also a RuntimeError)."""


def _unsupported(what: str) -> WorkerTensorError:
    return WorkerTensorError(UNSUPPORTED.format(what=what))


# ---- helpers -------------------------------------------------------------------------------------
def _plain(x) -> np.ndarray:
    """The values of an array as a plain ndarray (a view, no copy)."""
    return np.asarray(x)


def _wrap(a) -> "TensorArray":
    return np.ndarray.view(np.asarray(a), TensorArray)


def _fdt(x) -> D.dtype:
    """Facade dtype of a TensorArray / ndarray."""
    return D.from_numpy_dtype(np.asarray(x).dtype)


def _cast(a: np.ndarray, src: D.dtype, dst: D.dtype) -> np.ndarray:
    """PyTorch's CPU cast (``dtypes.cast_array`` on the host: float -> int truncates, NaN -> INT64_MIN...)."""
    if src is dst:
        return a
    with np.errstate(all="ignore"):
        return np.asarray(D.cast_array(np.asarray(a), src, dst, np))


def _to_dtype(d) -> D.dtype:
    if isinstance(d, str) and d.endswith("Tensor"):  # x.type('torch.LongTensor')
        name = d.split(".")[-1]
        for dt in D.ALL:
            if dt.legacy == name:
                return dt
        raise ValueError(f"invalid type: '{d}'")
    return D.as_dtype(d)


def _ndim(x) -> int:
    return np.ndim(np.asarray(x))


def _norm_dim(d, ndim: int) -> int:
    """PyTorch's dim wrapping: a 0-d tensor accepts dims -1 and 0."""
    d = operator.index(d)
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def _axes(dim, ndim: int):
    """``dim`` (None, an int, or a sequence of ints) as a NumPy axis: None for all dims."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        axes = tuple(_norm_dim(d, ndim) for d in dim)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
        return axes if ndim else None
    d = _norm_dim(dim, ndim)
    return d if ndim else None


def _shape_args(name: str, size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    try:
        shape = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found element of type "
                        f"{type(next(s for s in size if not isinstance(s, _py_int))).__name__}") from None
    return shape


def _reduce_kw(kw: dict, dim, keepdim):
    """Accept NumPy's spellings (``axis``, ``keepdims``, ``out=None``) as PyTorch's methods do."""
    if "axis" in kw:
        dim = kw.pop("axis")
    if "keepdims" in kw:
        keepdim = kw.pop("keepdims")
    if kw.pop("out", None) is not None:
        raise _unsupported("out=")
    if kw:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(kw))}'")
    return dim, keepdim


# ---- operators: PyTorch's result dtypes ------------------------------------------------------------
def _entry(x):
    """(promotion class, facade dtype) of an operand: 0 a dimensioned tensor, 1 a 0-d tensor, 2 a scalar."""
    if isinstance(x, np.ndarray):
        return (0 if x.ndim else 1, _fdt(x))
    if isinstance(x, (_py_bool, _py_int, _py_float, _py_complex, np.generic)):
        return (2, scalar_dtype(x))
    return None


def _as_array(x, dt: D.dtype) -> np.ndarray:
    """An operand converted to dtype ``dt`` (scalars as PyTorch wraps them; tensors with PyTorch's cast)."""
    if isinstance(x, np.ndarray):
        return _cast(_plain(x), _fdt(x), dt)
    if isinstance(x, np.generic):
        x = x.item()
    if dt is D.bool:
        return np.asarray(bool(x))
    if dt.category == D.INT and isinstance(x, _py_float):
        return _cast(np.asarray(x, np.float64), D.float64, dt)
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(dt.np)


_ARITH = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.floor_divide: "floordiv",
          np.remainder: "rem", np.fmod: "fmod", np.power: "pow", np.maximum: "max", np.minimum: "min",
          np.fmax: "fmax", np.fmin: "fmin"}
_COMPARE = {np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal}
_BITWISE = {np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor",
            np.left_shift: "lshift", np.right_shift: "rshift"}
_LOGICAL = {np.logical_and, np.logical_or, np.logical_xor}
_FLOAT_UNARY = {np.sqrt, np.exp, np.exp2, np.log, np.log2, np.log10, np.log1p, np.expm1, np.sin, np.cos, np.tan,
                np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh,
                np.reciprocal}


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _rsqrt(a):
    return 1.0 / np.sqrt(a)


_FLOAT_UNARY |= {_sigmoid, _rsqrt}
_ROUNDING = {np.floor, np.ceil, np.trunc, np.rint}
_PREDICATE = {np.isnan, np.isinf, np.isfinite, np.signbit}
_CNAME = {np.sqrt: "sqrt", np.exp: "exp", np.log: "log", np.absolute: "abs", np.negative: "neg"}


def _finish(r: np.ndarray, dt: D.dtype, out):
    r = np.asarray(r)
    if out is None:
        return _wrap(r if r.dtype == dt.np else r.astype(dt.np))
    o = out
    odt = _fdt(o)
    if not _can_cast(dt, odt):
        raise RuntimeError(f"result type {dt.short} can't be cast to the desired output type {odt.short}")
    np.copyto(_plain(o), _cast(r.astype(dt.np, copy=False), dt, odt), casting="unsafe")
    return o


def _can_cast(src: D.dtype, dst: D.dtype) -> bool:
    if src.category > dst.category:
        return False
    return not (dst is D.bool and src is not D.bool)


def _compute_dtype(dt: D.dtype):
    """Half types compute in float32 and round once (PyTorch's CPU opmath)."""
    return D.float32 if dt in _HALF else dt


def _check_zero_div(b: np.ndarray, dt: D.dtype) -> None:
    if dt.category <= D.INT and np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")


def _binary(ufunc, a, b, out=None):
    ea, eb = _entry(a), _entry(b)
    if ea is None or eb is None:
        return NotImplemented
    kind = _ARITH.get(ufunc)
    if ufunc is np.true_divide:
        r = default_float_of(result_type_sig((ea, eb)))
        ct = _compute_dtype(r)
        with np.errstate(all="ignore"):
            res = np.true_divide(_as_array(a, ct), _as_array(b, ct))
        return _finish(res, r, out)
    if ufunc in _COMPARE:
        r = result_type_sig((ea, eb))
        with np.errstate(all="ignore"):
            res = ufunc(_as_array(a, r), _as_array(b, r))
        return _finish(res, D.bool, out)
    if ufunc in _LOGICAL:
        res = ufunc(_as_array(a, D.bool), _as_array(b, D.bool))
        return _finish(res, D.bool, out)
    if ufunc is np.matmul:
        if ea[0] == 2 or eb[0] == 2 or _ndim(a) == 0 or _ndim(b) == 0:
            raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {_ndim(a)}D and "
                               f"{_ndim(b)}D")
        rule_matmul(types.SimpleNamespace(nout=1), ((_ndim(a), ea[1]), (_ndim(b), eb[1])), ())
        with np.errstate(all="ignore"):
            res = np.matmul(_plain(a), _plain(b))
        return _finish(res, ea[1], out)
    if ufunc in _BITWISE:
        r = result_type_sig((ea, eb))
        if r.category > D.INT:
            raise RuntimeError(f"\"{_BITWISE[ufunc]}_cpu\" not implemented for '{r.short}'")
        return _finish(ufunc(_as_array(a, r), _as_array(b, r)), r, out)
    if kind is None:
        raise _unsupported(f"numpy.{ufunc.__name__}() (an operator without a PyTorch meaning here)")
    if kind == "sub" and (ea[1] is D.bool or eb[1] is D.bool):
        if ea[1] is D.bool and eb[1] is D.bool:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                               "`logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    r = result_type_sig((ea, eb))
    if kind == "add" and r is D.bool:
        return _finish(np.logical_or(_as_array(a, r), _as_array(b, r)), r, out)
    if kind == "mul" and r is D.bool:
        return _finish(np.logical_and(_as_array(a, r), _as_array(b, r)), r, out)
    if kind in ("floordiv", "rem", "fmod") and r is D.bool:
        raise RuntimeError(f"\"{ 'div_floor' if kind == 'floordiv' else kind}_cpu\" not implemented for 'Bool'")
    ct = _compute_dtype(r)
    xa, xb = _as_array(a, ct), _as_array(b, ct)
    if kind in ("floordiv", "rem", "fmod"):
        _check_zero_div(xb, r)
    if kind == "pow" and r.category == D.INT and np.any(xb < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    with np.errstate(all="ignore"):
        res = ufunc(xa, xb)
    return _finish(res, r, out)


def _unary(ufunc, a, out=None):
    e = _entry(a)
    if e is None:
        return NotImplemented
    dt = e[1]
    p = _plain(a)
    if ufunc is np.negative and dt is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    if ufunc is np.absolute and dt is D.bool:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    if ufunc in (np.negative, np.positive, np.absolute, np.invert, np.sign, np.square):
        if ufunc is np.invert and dt.category > D.INT:
            raise RuntimeError(f"\"bitwise_not_cpu\" not implemented for '{dt.short}'")
        with np.errstate(all="ignore"):
            res = ufunc(p.astype(np.float32)) if dt in _HALF else ufunc(p)
        return _finish(res, dt, out)
    if ufunc in _FLOAT_UNARY:
        r = default_float_of(dt)
        # float32 through float64, rounded once (NumPy's float32 exp/log... can be an ulp off the correctly rounded
        # value that PyTorch's kernels give); half types in float32, as PyTorch's opmath
        ct = D.float64 if r is D.float32 else _compute_dtype(r)
        with np.errstate(all="ignore"):
            return _finish(ufunc(_cast(p, dt, ct)), r, out)
    if ufunc in _ROUNDING:
        if dt.category <= D.INT:
            return _finish(p.copy(), dt, out)
        with np.errstate(all="ignore"):
            return _finish(ufunc(p), dt, out)
    if ufunc in _PREDICATE:
        return _finish(ufunc(p) if dt.category >= D.FLOAT else np.zeros(p.shape, bool) if ufunc is not np.isfinite
                       else np.ones(p.shape, bool), D.bool, out)
    if ufunc is np.logical_not:
        return _finish(np.logical_not(p), D.bool, out)
    raise _unsupported(f"numpy.{ufunc.__name__}()")


def _plain_tree(x):
    if isinstance(x, TensorArray):
        return _plain(x)
    if type(x) in (list, tuple):
        return type(x)(_plain_tree(v) for v in x)
    if type(x) is dict:
        return {k: _plain_tree(v) for k, v in x.items()}
    return x


# ---- the worker tensor ---------------------------------------------------------------------------------
class _Unsupported:
    """A NumPy attribute whose meaning differs from (or is absent in) PyTorch's: reading it raises."""

    def __init__(self, name: str, call: bool) -> None:
        self.name, self.call = name, call

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        raise _unsupported(f"x.{self.name}()" if self.call else f"x.{self.name}")


def _bin(ufunc, reflected=False, inplace=False):
    if inplace:
        def op(self, other):
            r = _binary(ufunc, self, other, out=self)
            return r
    elif reflected:
        def op(self, other):
            return _binary(ufunc, other, self)
    else:
        def op(self, other):
            return _binary(ufunc, self, other)
    return op


class TensorArray(np.ndarray):
    """A tensor's values inside a DataLoader worker: a NumPy array the main process turns into a Tensor.

    Its methods and operators follow PyTorch (see the module docstring); the rest raise
    :class:`WorkerTensorError`. Integer indexing keeps a 0-d ``TensorArray`` (as indexing a tensor
    gives a 0-d tensor)."""

    __slots__ = ()
    __hash__ = object.__hash__  # (tensors hash by identity)

    # ---- NumPy protocol -------------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        # `array + x`, `np.float64(2) * x`: NumPy hands the operator to this method (a real tensor's
        # __array_priority__ makes it PyTorch's reflected operator): PyTorch's semantics
        if (method == "__call__" and not kwargs and len(inputs) == 2 and (out is None or len(out) == 1)
                and any(isinstance(v, (np.ndarray, np.generic)) and not isinstance(v, TensorArray) for v in inputs)):
            return _binary(ufunc, inputs[0], inputs[1], out=None if out is None else out[0])
        # an explicit NumPy call (np.sqrt(x), np.add.reduce(x)) gets NumPy's semantics on the values, as on a
        # real tensor (its __array__), the result of a call wrapped back as a tensor (its __array_wrap__)
        if out is not None:
            kwargs["out"] = tuple(_plain_tree(list(out)))
        r = getattr(ufunc, method)(*_plain_tree(list(inputs)), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        if method != "__call__":
            return r
        return tuple(_wrap(v) for v in r) if isinstance(r, tuple) else _wrap(r)

    def __array_function__(self, func, types, args, kwargs):
        # a NumPy function called on worker tensors gets plain arrays, as on real tensors (their __array__)
        return func(*_plain_tree(list(args)), **_plain_tree(kwargs))

    def __getitem__(self, index):
        r = np.ndarray.__getitem__(self, index)
        if isinstance(r, np.generic):
            return np.asarray(r).view(TensorArray)
        return r

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(f"'TensorArray' object has no attribute '{name}'")
        from ..._tensor.tensor import Tensor
        raise _unsupported(f"x.{name}()" if callable(getattr(Tensor, name, None)) else f"x.{name}")

    def __repr__(self) -> str:
        dt = self.dtype
        body = np.array2string(_plain(self), separator=", ", prefix="tensor(")
        return f"tensor({body})" if dt in (D.float32, D.int64, D.bool) else f"tensor({body}, dtype={dt})"

    __str__ = __repr__

    def __reduce__(self):
        return _rebuild, (_plain(self),)

    def __reduce_ex__(self, protocol):
        return self.__reduce__()

    # ---- operators ------------------------------------------------------------------------------------
    __add__, __radd__, __iadd__ = _bin(np.add), _bin(np.add, True), _bin(np.add, inplace=True)
    __sub__, __rsub__, __isub__ = _bin(np.subtract), _bin(np.subtract, True), _bin(np.subtract, inplace=True)
    __mul__, __rmul__, __imul__ = _bin(np.multiply), _bin(np.multiply, True), _bin(np.multiply, inplace=True)
    __truediv__, __rtruediv__, __itruediv__ = (_bin(np.true_divide), _bin(np.true_divide, True),
                                               _bin(np.true_divide, inplace=True))
    __floordiv__, __rfloordiv__, __ifloordiv__ = (_bin(np.floor_divide), _bin(np.floor_divide, True),
                                                  _bin(np.floor_divide, inplace=True))
    __mod__, __rmod__, __imod__ = _bin(np.remainder), _bin(np.remainder, True), _bin(np.remainder, inplace=True)
    __pow__, __rpow__, __ipow__ = _bin(np.power), _bin(np.power, True), _bin(np.power, inplace=True)
    __matmul__, __rmatmul__ = _bin(np.matmul), _bin(np.matmul, True)
    __and__, __rand__, __iand__ = _bin(np.bitwise_and), _bin(np.bitwise_and, True), _bin(np.bitwise_and, inplace=True)
    __or__, __ror__, __ior__ = _bin(np.bitwise_or), _bin(np.bitwise_or, True), _bin(np.bitwise_or, inplace=True)
    __xor__, __rxor__, __ixor__ = _bin(np.bitwise_xor), _bin(np.bitwise_xor, True), _bin(np.bitwise_xor, inplace=True)
    __lshift__, __rlshift__ = _bin(np.left_shift), _bin(np.left_shift, True)
    __rshift__, __rrshift__ = _bin(np.right_shift), _bin(np.right_shift, True)
    __lt__, __le__, __gt__, __ge__ = _bin(np.less), _bin(np.less_equal), _bin(np.greater), _bin(np.greater_equal)

    def __eq__(self, other):
        return False if other is None else _binary(np.equal, self, other)

    def __ne__(self, other):
        return True if other is None else _binary(np.not_equal, self, other)

    def __neg__(self):
        return _unary(np.negative, self)

    def __pos__(self):
        return _unary(np.positive, self)

    def __abs__(self):
        return _unary(np.absolute, self)

    def __invert__(self):
        return _unary(np.invert, self)

    def __round__(self, ndigits=None):
        return self.round() if ndigits is None else self.round(decimals=ndigits)

    def __divmod__(self, other):
        raise _unsupported("divmod(x, y)")

    __rdivmod__ = __divmod__

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return np.ndarray.__len__(self)

    # ---- metadata ---------------------------------------------------------------------------------------
    @property
    def dtype(self) -> D.dtype:
        return D.from_numpy_dtype(np.ndarray.dtype.__get__(self))

    @property
    def shape(self) -> _Size:
        return _Size(np.ndarray.shape.__get__(self))

    @property
    def T(self) -> "TensorArray":
        if self.ndim != 2:
            msg = ("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases." if
                   self.ndim == 0 else
                   "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                   "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                   "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
            warnings.warn(msg, UserWarning, stacklevel=2)
        return np.ndarray.T.__get__(self)

    @property
    def mT(self) -> "TensorArray":
        if self.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                               f"{self.ndim}-D tensor.")
        return np.swapaxes(_plain(self), -1, -2).view(TensorArray)

    @property
    def real(self) -> "TensorArray":
        return _wrap(_plain(self).real)

    @property
    def imag(self) -> "TensorArray":
        if not self.dtype.is_complex:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return _wrap(_plain(self).imag)

    @property
    def data(self) -> "TensorArray":
        return self

    @property
    def device(self):
        from ..._device import device
        return device("cpu")

    requires_grad = False
    grad = None
    is_leaf = True
    is_cuda = False

    def size(self, dim=None):
        shape = self.shape
        if dim is None:
            return shape
        if self.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return shape[_norm_dim(dim, self.ndim)]

    def dim(self) -> int:
        return self.ndim

    ndimension = dim

    def numel(self) -> int:
        return int(np.ndarray.size.__get__(self))

    nelement = numel

    def element_size(self) -> int:
        return self.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_contiguous(self, memory_format=None) -> bool:
        return bool(_plain(self).flags.c_contiguous)

    def stride(self, dim=None):
        st = tuple(s // self.itemsize for s in _plain(self).strides)
        return st if dim is None else st[_norm_dim(dim, self.ndim)]

    def type(self, dtype=None, non_blocking=False, **kw):
        if dtype is None:
            return "torch." + self.dtype.legacy
        return self.to(_to_dtype(dtype))

    # ---- values out -------------------------------------------------------------------------------------
    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        v = _plain(self).reshape(()).item()
        return float(v) if self.dtype in _HALF or self.dtype in D.FLOAT8 else v

    def tolist(self):
        p = _plain(self)
        if self.dtype in _HALF or self.dtype in D.FLOAT8:
            p = p.astype(np.float64)
        return p.tolist()

    def numpy(self, *, force=False) -> np.ndarray:
        return _plain(self)

    def clone(self, *, memory_format=None) -> "TensorArray":
        return _wrap(_plain(self).copy())

    copy = clone

    def detach(self) -> "TensorArray":
        return np.ndarray.view(self, TensorArray)

    def contiguous(self, memory_format=None) -> "TensorArray":
        return self if self.is_contiguous() else _wrap(np.ascontiguousarray(_plain(self)))

    def cpu(self, *args, **kwargs) -> "TensorArray":
        return self

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise _unsupported("x.requires_grad_() (autograd)")
        return self

    def detach_(self):
        return self

    # ---- casts ------------------------------------------------------------------------------------------
    def to(self, *args, **kwargs) -> "TensorArray":
        dtype = kwargs.pop("dtype", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        device = kwargs.pop("device", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, np.ndarray):
                dtype = _fdt(a)
            elif isinstance(a, D.dtype) or isinstance(a, type) and a in (_py_float, _py_int, _py_bool, _py_complex):
                dtype = a
            elif isinstance(a, _py_bool):
                continue  # non_blocking / copy given positionally
            else:
                device = a
        if device is not None and str(device) not in ("cpu", "cpu:0"):
            raise _unsupported(f"x.to({str(device)!r})")
        if dtype is None:
            return self.clone() if copy else self
        dt = D.as_dtype(dtype)
        if dt is self.dtype:
            return self.clone() if copy else self
        return _wrap(_cast(_plain(self), self.dtype, dt))

    def float(self):
        return self.to(D.float32)

    def double(self):
        return self.to(D.float64)

    def half(self):
        return self.to(D.float16)

    def bfloat16(self):
        return self.to(D.bfloat16)

    def long(self):
        return self.to(D.int64)

    def int(self):
        return self.to(D.int32)

    def short(self):
        return self.to(D.int16)

    def char(self):
        return self.to(D.int8)

    def byte(self):
        return self.to(D.uint8)

    def bool(self):
        return self.to(D.bool)

    def type_as(self, other):
        return self.to(_fdt(other))

    # ---- shape ------------------------------------------------------------------------------------------
    def reshape(self, *shape):
        shape = _shape_args("reshape", shape)
        return _wrap(_plain(self).reshape(shape))

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], type) and issubclass(shape[0], np.ndarray):
            return np.ndarray.view(self, shape[0])  # (NumPy's own use)
        if len(shape) == 1 and not isinstance(shape[0], (_py_int, list, tuple, np.integer, np.ndarray)):
            dt = D.as_dtype(shape[0])
            return _wrap(_plain(self).view(dt.np))
        shape = _shape_args("view", shape)
        if not self.is_contiguous() and self.ndim > 1:
            r = _plain(self).view()
            try:
                r.shape = shape
            except AttributeError:
                raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                                   "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") \
                    from None
            return _wrap(r)
        return _wrap(_plain(self).reshape(shape))

    def view_as(self, other):
        return self.view(tuple(np.shape(_plain(other))))

    def reshape_as(self, other):
        return self.reshape(tuple(np.shape(_plain(other))))

    def flatten(self, start_dim=0, end_dim=-1):
        p = _plain(self)
        if p.ndim == 0:
            return _wrap(p.reshape(1))
        s, e = _norm_dim(start_dim, p.ndim), _norm_dim(end_dim, p.ndim)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        return _wrap(p.reshape(p.shape[:s] + (-1,) + p.shape[e + 1:]))

    def ravel(self):
        return _wrap(_plain(self).reshape(-1))

    def squeeze(self, dim=None):
        p = _plain(self)
        if dim is None:
            return _wrap(p.squeeze())
        dims = dim if isinstance(dim, (list, tuple)) else (dim,)
        axes = tuple(a for a in (_norm_dim(d, p.ndim) for d in dims) if p.ndim and p.shape[a] == 1)
        return _wrap(p.squeeze(axes) if axes else p.view())

    def unsqueeze(self, dim):
        p = _plain(self)
        return _wrap(np.expand_dims(p, _norm_dim(dim, p.ndim + 1)))

    def transpose(self, dim0, dim1):
        p = _plain(self)
        if p.ndim == 0:
            _norm_dim(dim0, 0), _norm_dim(dim1, 0)
            return _wrap(p.view())
        return _wrap(np.swapaxes(p, _norm_dim(dim0, p.ndim), _norm_dim(dim1, p.ndim)))

    swapaxes = swapdims = transpose

    def t(self):
        p = _plain(self)
        if p.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {p.ndim}D")
        return _wrap(p.T)

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = tuple(dims[0])
        p = _plain(self)
        if len(dims) != p.ndim:
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                               f"length of the desired ordering of dimensions i.e. input.dim() = {p.ndim} is not "
                               f"equal to len(dims) = {len(dims)}")
        axes = tuple(_norm_dim(d, p.ndim) for d in dims)
        if len(set(axes)) != len(axes):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return _wrap(np.transpose(p, axes) if p.ndim else p.view())

    def expand(self, *sizes):
        sizes = _shape_args("expand", sizes)
        p = _plain(self)
        if len(sizes) < p.ndim:
            raise RuntimeError(f"expand(torch.{self.dtype.legacy}{{{list(p.shape)}}}, size={list(sizes)}): the number "
                               f"of sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
                               f"in the tensor ({p.ndim})")
        lead = len(sizes) - p.ndim
        target = tuple(p.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
        return _wrap(np.broadcast_to(p, target))

    def expand_as(self, other):
        return self.expand(tuple(np.shape(_plain(other))))

    def repeat(self, *sizes):
        sizes = _shape_args("repeat", sizes)
        p = _plain(self)
        if len(sizes) < p.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                               "tensor")
        p = p.reshape((1,) * (len(sizes) - p.ndim) + p.shape)
        return _wrap(np.tile(p, sizes))

    def flip(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = tuple(dims[0])
        p = _plain(self)
        axes = tuple(_norm_dim(d, p.ndim) for d in dims)
        return _wrap(np.flip(p, axes).copy() if p.ndim else p.copy())

    def narrow(self, dim, start, length):
        p = _plain(self)
        d = _norm_dim(dim, p.ndim)
        start = operator.index(start) % p.shape[d] if operator.index(start) < 0 else operator.index(start)
        if start + length > p.shape[d]:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({p.shape[d]}).")
        idx = [slice(None)] * p.ndim
        idx[d] = slice(start, start + length)
        return _wrap(p[tuple(idx)])

    # ---- reductions -------------------------------------------------------------------------------------
    def _acc(self, dt: D.dtype) -> np.ndarray:
        """Values in the accumulation dtype (float32 for half types, as PyTorch's CPU kernels)."""
        return _cast(_plain(self), self.dtype, _compute_dtype(dt))

    def sum(self, dim=None, keepdim=False, *, dtype=None, **kw):
        dim, keepdim = _reduce_kw(kw, dim, keepdim)
        r = D.as_dtype(dtype) if dtype is not None else (D.int64 if self.dtype.category <= D.INT else self.dtype)
        with np.errstate(all="ignore"):
            res = np.sum(self._acc(r), axis=_axes(dim, self.ndim), keepdims=keepdim)
        return _finish(res, r, None)

    def prod(self, dim=None, keepdim=False, *, dtype=None, **kw):
        dim, keepdim = _reduce_kw(kw, dim, keepdim)
        r = D.as_dtype(dtype) if dtype is not None else (D.int64 if self.dtype.category <= D.INT else self.dtype)
        with np.errstate(all="ignore"):
            res = np.prod(self._acc(r), axis=_axes(dim, self.ndim), keepdims=keepdim)
        return _finish(res, r, None)

    def mean(self, dim=None, keepdim=False, *, dtype=None, **kw):
        dim, keepdim = _reduce_kw(kw, dim, keepdim)
        r = D.as_dtype(dtype) if dtype is not None else self.dtype
        if r.category < D.FLOAT:
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {r.short}")
        with np.errstate(all="ignore"):
            res = np.mean(self._acc(r), axis=_axes(dim, self.ndim), keepdims=keepdim)
        return _finish(res, r, None)

    def _moment(self, name, dim, unbiased, keepdim, correction, kw):
        dim, keepdim = _reduce_kw(kw, dim, keepdim)
        if isinstance(dim, _py_bool):  # x.std(False): the unbiased overload
            if unbiased is not None:
                raise TypeError(f"{name}() received an invalid combination of arguments")
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments - got (correction=, unbiased=)")
        ddof = correction if correction is not None else (0 if unbiased is False else 1)
        dt = self.dtype
        if dt.category < D.FLOAT:
            raise RuntimeError("std and var only support floating point and complex dtypes")
        r = dt.to_real()
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = np.var if name == "var" else np.std
            res = fn(self._acc(dt), axis=_axes(dim, self.ndim), keepdims=keepdim, ddof=ddof)
        return _finish(res, r, None)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None, **kw):
        return self._moment("std", dim, unbiased, keepdim, correction, kw)

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None, **kw):
        return self._moment("var", dim, unbiased, keepdim, correction, kw)

    def _extreme(self, name, dim, keepdim, kw):
        from ...ops.reduction import return_types as RT
        if isinstance(dim, np.ndarray):  # x.max(other): elementwise
            return _binary(np.maximum if name == "max" else np.minimum, self, dim)
        dim, keepdim = _reduce_kw(kw, dim, keepdim)
        p = self._acc(self.dtype) if self.dtype in _HALF else _plain(self)
        red = np.max if name == "max" else np.min
        if dim is None:
            if p.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                                   "the reduction dim with the 'dim' argument.")
            return _finish(red(p), self.dtype, None)
        d = _norm_dim(dim, p.ndim)
        if p.ndim == 0:
            return RT.max((_wrap(p.copy()), _wrap(np.int64(0)))) if name == "max" else \
                RT.min((_wrap(p.copy()), _wrap(np.int64(0))))
        if p.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        arg = np.argmax if name == "max" else np.argmin
        idx = np.expand_dims(arg(p, axis=d), d)
        vals = np.take_along_axis(p, idx, d)
        if not keepdim:
            vals, idx = vals.squeeze(d), idx.squeeze(d)
        cls = RT.max if name == "max" else RT.min
        return cls((_finish(vals, self.dtype, None), _wrap(idx.astype(np.int64))))

    def max(self, dim=None, keepdim=False, **kw):
        return self._extreme("max", dim, keepdim, kw)

    def min(self, dim=None, keepdim=False, **kw):
        return self._extreme("min", dim, keepdim, kw)

    def amax(self, dim=(), keepdim=False):
        p = _plain(self)
        return _finish(np.max(p, axis=_axes(dim, p.ndim), keepdims=keepdim), self.dtype, None)

    def amin(self, dim=(), keepdim=False):
        p = _plain(self)
        return _finish(np.min(p, axis=_axes(dim, p.ndim), keepdims=keepdim), self.dtype, None)

    def _arg(self, name, dim, keepdim):
        p = _plain(self)
        if p.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        fn = np.argmax if name == "argmax" else np.argmin
        if dim is None:
            r = fn(p)
            return _wrap(np.int64(r).reshape((1,) * p.ndim) if keepdim else np.int64(r))
        d = _norm_dim(dim, p.ndim)
        if p.ndim == 0:
            return _wrap(np.int64(0))
        return _wrap(fn(p, axis=d, keepdims=keepdim).astype(np.int64))

    def argmax(self, dim=None, keepdim=False):
        return self._arg("argmax", dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return self._arg("argmin", dim, keepdim)

    def all(self, dim=None, keepdim=False, **kw):
        dim, keepdim = _reduce_kw(kw, dim, keepdim)
        return _wrap(np.all(_plain(self), axis=_axes(dim, self.ndim), keepdims=keepdim))

    def any(self, dim=None, keepdim=False, **kw):
        dim, keepdim = _reduce_kw(kw, dim, keepdim)
        return _wrap(np.any(_plain(self), axis=_axes(dim, self.ndim), keepdims=keepdim))

    def cumsum(self, dim, *, dtype=None):
        r = D.as_dtype(dtype) if dtype is not None else (D.int64 if self.dtype.category <= D.INT else self.dtype)
        p = self._acc(r)
        return _finish(np.cumsum(p, axis=_norm_dim(dim, p.ndim)) if p.ndim else p.copy(), r, None)

    def cumprod(self, dim, *, dtype=None):
        r = D.as_dtype(dtype) if dtype is not None else (D.int64 if self.dtype.category <= D.INT else self.dtype)
        p = self._acc(r)
        return _finish(np.cumprod(p, axis=_norm_dim(dim, p.ndim)) if p.ndim else p.copy(), r, None)

    def argsort(self, dim=-1, descending=False, stable=False):
        p = _plain(self)
        if p.ndim == 0:
            return _wrap(np.int64(0))
        d = _norm_dim(dim, p.ndim)
        if not descending:
            return _wrap(np.argsort(p, axis=d, kind="stable").astype(np.int64))
        n = p.shape[d]
        rev = np.flip(p, d)
        idx = np.flip(np.argsort(rev, axis=d, kind="stable"), d)
        return _wrap((n - 1 - idx).astype(np.int64))

    def sort(self, dim=-1, descending=False, stable=False):
        from ...ops.reduction import return_types as RT
        idx = _plain(self.argsort(dim, descending))
        p = _plain(self)
        vals = np.take_along_axis(p, idx, _norm_dim(dim, p.ndim)) if p.ndim else p.copy()
        return RT.sort((_wrap(vals), _wrap(idx)))

    def nonzero(self, *, as_tuple=False):
        p = _plain(self)
        if as_tuple:
            return tuple(_wrap(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(p)))
        return _wrap(np.argwhere(p).astype(np.int64))

    # ---- elementwise methods -----------------------------------------------------------------------------
    def abs(self):
        return _unary(np.absolute, self)

    absolute = abs

    def neg(self):
        return _unary(np.negative, self)

    negative = neg

    def sqrt(self):
        return _unary(np.sqrt, self)

    def exp(self):
        return _unary(np.exp, self)

    def log(self):
        return _unary(np.log, self)

    def floor(self):
        return _unary(np.floor, self)

    def sigmoid(self):
        return _unary(_sigmoid, self)

    def rsqrt(self):
        return _unary(_rsqrt, self)

    def ceil(self):
        return _unary(np.ceil, self)

    def trunc(self):
        return _unary(np.trunc, self)

    def sign(self):
        return _unary(np.sign, self)

    def round(self, *, decimals=0):
        if decimals == 0:
            return _unary(np.rint, self)
        dt = self.dtype
        if dt.category <= D.INT:
            raise RuntimeError(f"\"round_cpu\" not implemented for '{dt.short}'")
        return _finish(np.round(self._acc(dt), decimals), dt, None)

    def logical_not(self):
        return _unary(np.logical_not, self)

    def bitwise_not(self):
        return _unary(np.invert, self)

    def isnan(self):
        return _unary(np.isnan, self)

    def add(self, other, *, alpha=1):
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, *, alpha=1):
        return self - (other * alpha if alpha != 1 else other)

    subtract = sub

    def mul(self, other):
        return self * other

    multiply = mul

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return self / other
        if rounding_mode == "floor":
            return self // other
        if rounding_mode == "trunc":
            e = (_entry(self), _entry(other))
            if e[1] is None:
                return NotImplemented
            dt = result_type_sig(e)
            if dt.category > D.INT:
                return (self / other).trunc()
            a, b = _as_array(self, dt), _as_array(other, dt)
            _check_zero_div(b, dt)
            q = np.abs(a) // np.abs(b)
            return _finish(np.where((a < 0) != (b < 0), -q, q), dt, None)
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")

    divide = true_divide = div

    def floor_divide(self, other):
        return self // other

    def remainder(self, other):
        return self % other

    def pow(self, exponent):
        return self ** exponent

    def matmul(self, other):
        return self @ other

    def eq(self, other):
        return self == other

    def ne(self, other):
        return self != other

    def lt(self, other):
        return self < other

    def le(self, other):
        return self <= other

    def gt(self, other):
        return self > other

    def ge(self, other):
        return self >= other

    def maximum(self, other):
        return _binary(np.maximum, self, other)

    def minimum(self, other):
        return _binary(np.minimum, self, other)

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ents = [_entry(self)] + [_entry(v) for v in (min, max) if v is not None]
        r = result_type_sig(tuple(ents))
        ct = _compute_dtype(r)
        p = _as_array(self, ct)
        with np.errstate(all="ignore"):  # (NaN propagates, and min > max gives max, as PyTorch)
            if min is not None:
                p = np.maximum(p, _as_array(min, ct))
            if max is not None:
                p = np.minimum(p, _as_array(max, ct))
        return _finish(p, r, None)

    clip = clamp

    # ---- in place -----------------------------------------------------------------------------------------
    def add_(self, other, *, alpha=1):
        return _binary(np.add, self, other * alpha if alpha != 1 else other, out=self)

    def sub_(self, other, *, alpha=1):
        return _binary(np.subtract, self, other * alpha if alpha != 1 else other, out=self)

    def mul_(self, other):
        return _binary(np.multiply, self, other, out=self)

    def div_(self, other):
        return _binary(np.true_divide, self, other, out=self)

    def clamp_(self, min=None, max=None):
        r = self.clamp(min, max)
        return _finish(_plain(r), r.dtype, self)

    def fill_(self, value):
        v = value.item() if isinstance(value, np.ndarray) else value
        _plain(self)[...] = _as_array(v, self.dtype)
        return self

    def zero_(self):
        _plain(self)[...] = 0
        return self

    # ---- new tensors like this one ------------------------------------------------------------------------
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        return tensor(data, dtype=dtype if dtype is not None else self.dtype, device=device,
                      requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return zeros(*size, dtype=dtype if dtype is not None else self.dtype, device=device,
                     requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return ones(*size, dtype=dtype if dtype is not None else self.dtype, device=device,
                    requires_grad=requires_grad)

    new_empty = new_zeros

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return full(size, fill_value, dtype=dtype if dtype is not None else self.dtype, device=device,
                    requires_grad=requires_grad)


def _float_method(ufunc):
    def method(self):
        return _unary(ufunc, self)
    method.__name__ = ufunc.__name__
    return method


for _name, _uf in (("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("sinh", np.sinh), ("cosh", np.cosh),
                   ("tanh", np.tanh), ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan),
                   ("arcsin", np.arcsin), ("arccos", np.arccos), ("arctan", np.arctan), ("log2", np.log2),
                   ("log10", np.log10), ("log1p", np.log1p), ("expm1", np.expm1), ("exp2", np.exp2),
                   ("reciprocal", np.reciprocal)):
    setattr(TensorArray, _name, _float_method(_uf))


def _rebuild(values: np.ndarray) -> TensorArray:
    return _wrap(values)


# NumPy attributes whose meaning is not PyTorch's (or that PyTorch does not have) raise; the ones kept as NumPy's
# (same meaning for these arrays) are listed here.
_NATIVE = {"ndim", "nbytes", "itemsize"}
for _name in dir(np.ndarray):
    if not _name.startswith("_") and _name not in TensorArray.__dict__ and _name not in _NATIVE:
        setattr(TensorArray, _name, _Unsupported(_name, callable(getattr(np.ndarray, _name))))
del _name


def stand_in(values: np.ndarray) -> TensorArray:
    """Wrap host values as a :class:`TensorArray` (used when a dataset is sent to workers)."""
    return np.ndarray.view(np.asarray(values), TensorArray)


# ---- creation functions inside a worker (PyTorch's dtype inference; installed by install()) ------------------
def _reject_facade(*objs) -> None:
    """A real facade tensor reached the worker (a dataset that could not be pickled, inherited by fork): its values
    live in JAX, which a worker must not touch -- the guard's error, as before."""
    from ..._tensor.tensor import Tensor
    from ._worker_mode import WORKER_TENSOR_ERROR
    for o in objs:
        if isinstance(o, Tensor) or isinstance(o, (list, tuple)) and any(isinstance(v, Tensor) for v in o):
            raise RuntimeError(WORKER_TENSOR_ERROR)


def _check_device(device, requires_grad=False) -> None:
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise _unsupported(f"a tensor on device {str(device)!r}")
    if requires_grad:
        raise _unsupported("requires_grad=True (autograd)")


def _leaves_to_python(data):
    """Nested lists with worker tensors (one element each, as PyTorch requires) as Python numbers."""
    if isinstance(data, TensorArray):
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_leaves_to_python(x) for x in data]
    if isinstance(data, np.generic):
        return data.item()
    return data


_WIDE = {D.BOOL: D.bool, D.INT: D.int64, D.FLOAT: D.float64, D.COMPLEX: D.complex128}


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``torch.tensor`` in a worker: a TensorArray copy with PyTorch's inferred dtype."""
    _reject_facade(data)
    _check_device(device, requires_grad)
    if isinstance(data, TensorArray):
        from ...ops.creation import COPY_CONSTRUCT_WARNING
        warnings.warn(COPY_CONSTRUCT_WARNING.format("torch.tensor"), UserWarning, stacklevel=2)
    if isinstance(data, (np.ndarray, np.generic)):
        src = _fdt(data)
        dt = D.as_dtype(dtype) if dtype is not None else src
        return _wrap(_cast(np.array(_plain(data)), src, dt))
    from ...ops.creation import _infer_dtype  # (PyTorch's inference; a worker tensor reads as an ndarray)
    cat = _infer_dtype(data)
    dt = D.as_dtype(dtype) if dtype is not None else cat
    if isinstance(data, range):
        data = list(data)
    if isinstance(data, (list, tuple)):
        from ...ops.creation import _check_nested
        _check_nested(data)
        data = _leaves_to_python(data)
    wide = _WIDE[cat.category]
    try:
        host = np.array(data, dtype=wide.np)
    except OverflowError:
        raise RuntimeError("Overflow when unpacking long long") from None
    return _wrap(_cast(host, wide, dt))


def as_tensor(data, dtype=None, device=None):
    """``torch.as_tensor`` in a worker: shares an array's memory when no conversion is needed."""
    _reject_facade(data)
    _check_device(device)
    if isinstance(data, np.ndarray):
        src = _fdt(data)
        dt = D.as_dtype(dtype) if dtype is not None else src
        if dt is src:
            return data if isinstance(data, TensorArray) else np.ndarray.view(data, TensorArray)
        return _wrap(_cast(_plain(data), src, dt))
    return tensor(data, dtype=dtype)


def from_numpy(ndarray):
    """``torch.from_numpy`` in a worker: the array itself (shared memory) as a worker tensor."""
    _reject_facade(ndarray)
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _fdt(ndarray)  # PyTorch's error for dtypes it has no tensor type for
    return np.ndarray.view(ndarray, TensorArray)


def _creation_dtype(dtype) -> D.dtype:
    return D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    if out is not None:
        raise _unsupported("out=")
    _check_device(device, requires_grad)
    shape = _shape_args("zeros", size if size else tuple(kw.pop("size", ())))
    return _wrap(np.zeros(shape, _creation_dtype(dtype).np))


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    if out is not None:
        raise _unsupported("out=")
    _check_device(device, requires_grad)
    shape = _shape_args("ones", size if size else tuple(kw.pop("size", ())))
    return _wrap(np.ones(shape, _creation_dtype(dtype).np))


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw):
    """``torch.empty`` in a worker (its values are zeros: PyTorch leaves them unspecified)."""
    if out is not None:
        raise _unsupported("out=")
    _check_device(device, requires_grad)
    shape = _shape_args("empty", size if size else tuple(kw.pop("size", ())))
    return _wrap(np.zeros(shape, _creation_dtype(dtype).np))


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    if out is not None:
        raise _unsupported("out=")
    _check_device(device, requires_grad)
    if isinstance(fill_value, np.ndarray):
        fill_value = fill_value.item()
    dt = D.as_dtype(dtype) if dtype is not None else scalar_dtype(fill_value)
    shape = _shape_args("full", (size,))
    return _wrap(np.full(shape, _as_array(fill_value, dt), dt.np))


def _like(input, dtype):
    _reject_facade(input)
    return _fdt(input) if dtype is None else D.as_dtype(dtype), tuple(np.shape(_plain(input)))


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _check_device(device, requires_grad)
    dt, shape = _like(input, dtype)
    return _wrap(np.zeros(shape, dt.np))


empty_like = zeros_like


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _check_device(device, requires_grad)
    dt, shape = _like(input, dtype)
    return _wrap(np.ones(shape, dt.np))


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _check_device(device, requires_grad)
    dt, shape = _like(input, dtype)
    return _wrap(np.full(shape, _as_array(fill_value, dt), dt.np))


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``torch.arange`` in a worker: int64 for integer arguments, else the default float; values
    ``start + i * step`` computed in double, as PyTorch's CPU kernel."""
    if out is not None:
        raise _unsupported("out=")
    _check_device(device, requires_grad)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, np.ndarray) else v for v in (start, end, step)]
    start, end, step = vals
    if dtype is not None:
        dt = D.as_dtype(dtype)
    elif any(isinstance(v, (_py_float, np.floating)) for v in vals):
        dt = D.get_default_dtype()
    else:
        dt = D.int64
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    import math
    n = int(math.ceil((end - start) / step))
    if dt.category <= D.INT and all(isinstance(v, (_py_int, np.integer)) for v in vals):
        return _wrap(_cast(np.arange(n, dtype=np.int64) * int(step) + int(start), D.int64, dt))
    host = start + np.arange(n, dtype=np.float64) * step
    return _wrap(_cast(host, D.float64, dt))


def _check_same_sizes(shapes: list) -> None:
    first = tuple(shapes[0])
    for i, s in enumerate(shapes):
        if tuple(s) != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                               f"{list(s)} at entry {i}")


def _promoted(tensors, name):
    tensors = list(tensors)
    _reject_facade(tensors)
    if not tensors:
        raise RuntimeError(f"{name}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, np.ndarray):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    r = _fdt(tensors[0])
    for t in tensors[1:]:
        r = promote_types(r, _fdt(t))
    return tensors, r, [_cast(_plain(t), _fdt(t), r) for t in tensors]


def stack(tensors, dim=0, *, out=None):
    if out is not None:
        raise _unsupported("out=")
    tensors, r, arrays = _promoted(tensors, "stack")
    _check_same_sizes([a.shape for a in arrays])
    return _wrap(np.stack(arrays, axis=_norm_dim(dim, arrays[0].ndim + 1)))


def cat(tensors, dim=0, *, out=None):
    if out is not None:
        raise _unsupported("out=")
    tensors, r, arrays = _promoted(tensors, "cat")
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    arrays = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)] or arrays[:1]
    return _wrap(np.concatenate(arrays, axis=_norm_dim(dim, arrays[0].ndim)))


def is_tensor(obj) -> bool:
    from ..._tensor.tensor import Tensor
    return isinstance(obj, (Tensor, TensorArray))


CREATION = {"tensor": tensor, "as_tensor": as_tensor, "asarray": as_tensor, "from_numpy": from_numpy,
            "zeros": zeros, "ones": ones, "empty": empty, "full": full, "arange": arange,
            "zeros_like": zeros_like, "ones_like": ones_like, "empty_like": empty_like, "full_like": full_like,
            "stack": stack, "cat": cat, "concat": cat, "concatenate": cat, "is_tensor": is_tensor}

_INSTALLED: list = []
# modules whose functions are guarded in a worker: a worker tensor passed to one is computed by its method of the
# same name where it has one (torch.sum(x, 0) is x.sum(0)), else the clear error (torch.where(), F.pad()...)
_GUARDED_MODULES = ("functorch_lite", "functorch_lite.nn.functional", "functorch_lite.linalg", "functorch_lite.special",
                    "functorch_lite.fft", "functorch_lite.nn.utils.rnn")
_METHODS = frozenset(n for n, v in TensorArray.__dict__.items()
                     if not n.startswith("_") and callable(v) and not isinstance(v, _Unsupported))


def _has_worker_tensor(args, kwargs) -> bool:
    for a in (*args, *kwargs.values()):
        if isinstance(a, TensorArray) or isinstance(a, (list, tuple)) and any(isinstance(v, TensorArray) for v in a):
            return True
    return False


def _guarded(public: str, name: str, fn, as_method: bool):
    def guarded(*args, **kwargs):
        if _has_worker_tensor(args, kwargs):
            if as_method and args and isinstance(args[0], TensorArray) and kwargs.get("out") is None:
                kwargs.pop("out", None)
                return getattr(args[0], name)(*args[1:], **kwargs)
            raise _unsupported(f"{public}.{name}()")
        return fn(*args, **kwargs)
    try:
        functools.update_wrapper(guarded, fn)
    except Exception:  # (a callable object without the usual attributes)
        pass
    return guarded


def install() -> None:
    """In a worker: ``functorch_lite.tensor`` & co. make worker tensors (the originals would need JAX), and the
    other functions of the public modules compute a worker tensor argument with its method or raise the clear
    error (instead of an AttributeError from the facade's internals)."""
    import sys
    if _INSTALLED:
        return
    root = sys.modules.get("functorch_lite")
    if root is None:
        return
    for name, fn in CREATION.items():
        if hasattr(root, name):
            _INSTALLED.append((root, name, getattr(root, name)))
            setattr(root, name, fn)
    for modname in _GUARDED_MODULES:
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        public = "torch" + modname[len("functorch_lite"):]
        for name, fn in list(vars(mod).items()):
            if (name.startswith("_") or (mod is root and name in CREATION) or not callable(fn)
                    or isinstance(fn, (type, types.ModuleType))):
                continue
            _INSTALLED.append((mod, name, fn))
            setattr(mod, name, _guarded(public, name, fn, mod is root and name in _METHODS))
