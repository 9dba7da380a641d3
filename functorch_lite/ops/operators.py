"""Python operators on Tensor, each mapped to one op of the table (no arithmetic written here)."""
from __future__ import annotations

import numbers

import numpy as np

from .. import _promotion
from .. import dtypes as D
from .._tensor.tensor import Tensor
from ._registry import OPS
from ._dispatch import _check_cast, dispatch, inplace
from .elementwise import _NO_MODE

_SCALARS = (numbers.Number, np.generic)


def _ok(other):
    return isinstance(other, (Tensor,) + _SCALARS)


def _binary(name, reflected=False):
    op = OPS[name]
    statics = tuple(p.default for p in op.params[2:])

    if reflected:
        def fn(self, other):
            if not _ok(other):
                return NotImplemented
            return dispatch(op, (other, self), statics)
    elif name == "pow":
        def fn(self, other, modulo=None):  # (Python's 3-argument pow: NotImplemented, so its TypeError)
            if modulo is not None or not _ok(other):
                return NotImplemented
            return dispatch(op, (self, other), statics)
    else:
        def fn(self, other):
            if not _ok(other):
                return NotImplemented
            return dispatch(op, (self, other), statics)
    return fn


def _ibinary(name):
    op = OPS[name]
    statics = tuple(p.default for p in op.params[2:])

    def fn(self, other):
        if not _ok(other):
            if not getattr(other, "is_sparse", False):
                return NotImplemented
            # (``x op= sparse``: the in-place op, whose sparse form the dispatch finds, as ``x.add_(sparse)``;
            # ``x *= sparse``'s product is sparse, written densified (0 off its entries), as torch's)
            if name == "mul":
                r = dispatch(op, (self, other), statics).to_dense()
                _check_cast(r.dtype, self.dtype)
                return inplace(OPS["copy"], (self, r), ())
        return inplace(op, (self, other), statics)
    return fn


def _rsub(self, other):
    if not _ok(other):
        return NotImplemented
    return dispatch(OPS["rsub"], (self, other), (1,))


def _rtruediv(self, other):
    """``2 / x`` is ``x.reciprocal() * 2`` in PyTorch (grad_fn MulBackward0); ``ndarray / x`` is
    ``x.reciprocal() * ndarray`` too, which NumPy computes (``Tensor.__array_wrap__``)."""
    if not _ok(other):
        if not isinstance(other, np.ndarray):
            return NotImplemented
        try:
            return dispatch(OPS["reciprocal"], (self,), ()) * other
        except TypeError:  # (a dtype NumPy can't multiply, or can't be a tensor: Python's TypeError)
            return NotImplemented
    return dispatch(OPS["mul"], (dispatch(OPS["reciprocal"], (self,), ()), other), ())


_EQ = OPS["eq"]


def _eq(self, other):
    """``x == y``; a NumPy array is taken as a tensor (``torch.from_numpy``'s dtypes; others: NotImplemented), as
    PyTorch's ``==`` alone of the operators does (``!=``, ``<``... decline it)."""
    if not _ok(other):
        if not isinstance(other, np.ndarray):
            return NotImplemented
        from .creation import from_numpy
        try:
            other = from_numpy(other)
        except TypeError:
            return NotImplemented
    return dispatch(_EQ, (self, other), ())


def _unary(name):
    op = OPS[name]
    statics = tuple(p.default for p in op.params[1:])
    return lambda self: dispatch(op, (self,), statics)


def _div(self, other):
    if not _ok(other):
        return NotImplemented
    return dispatch(OPS["div"], (self, other), (_NO_MODE,))


def _idiv(self, other):
    if not _ok(other) and not getattr(other, "is_sparse", False):  # (a sparse divisor: the op's own error)
        return NotImplemented
    return inplace(OPS["div"], (self, other), (_NO_MODE,))


def _matmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return dispatch(OPS["matmul"], (self, other), ())


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return dispatch(OPS["matmul"], (other, self), ())


def _imatmul(self, other):
    r = _matmul(self, other)
    if r is NotImplemented:
        return r
    return OPS_copy_(self, r)


def OPS_copy_(self, r):
    return inplace(OPS["copy"], (self, r), ())


def _invert(self):
    """``~x``: integer and bool tensors only (PyTorch raises TypeError before any kernel)."""
    if self.dtype.category > D.INT:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return dispatch(OPS["bitwise_not"], (self,), ())


def _clamp_inplace(name):
    """``clamp_``/``clamp_min_``/``clamp_max_``: with Python-scalar bounds PyTorch names the target
    type in C++ spelling (``long int``, ``bool``) when the result can't be cast back."""
    ip = OPS[name].fn_inplace

    def fn(self, *args, **kwargs):
        bounds = [b for b in (*args, *kwargs.values()) if b is not None]
        if bounds and all(isinstance(b, _SCALARS) for b in bounds):
            r = _promotion.result_type(self, *bounds)
            if not _promotion.can_cast(r, self.dtype):
                raise RuntimeError(f"result type {r.short} can't be cast to the desired output type "
                                   f"{_promotion._cname(self.dtype)}")
        return ip(self, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = ip.__doc__
    return fn


METHODS = {
    "__add__": _binary("add"), "__radd__": _binary("add", True), "__iadd__": _ibinary("add"),
    "__sub__": _binary("sub"), "__rsub__": _rsub, "__isub__": _ibinary("sub"),
    "__mul__": _binary("mul"), "__rmul__": _binary("mul", True), "__imul__": _ibinary("mul"),
    "__truediv__": _div, "__rtruediv__": _rtruediv, "__itruediv__": _idiv,
    "__floordiv__": _binary("floor_divide"), "__rfloordiv__": _binary("floor_divide", True),
    "__ifloordiv__": _ibinary("floor_divide"),
    "__mod__": _binary("remainder"), "__rmod__": _binary("remainder", True), "__imod__": _ibinary("remainder"),
    "__pow__": _binary("pow"), "__rpow__": _binary("pow", True), "__ipow__": _ibinary("pow"),
    "__matmul__": _matmul, "__rmatmul__": _rmatmul, "__imatmul__": _imatmul,
    "__and__": _binary("bitwise_and"), "__rand__": _binary("bitwise_and", True), "__iand__": _ibinary("bitwise_and"),
    "__or__": _binary("bitwise_or"), "__ror__": _binary("bitwise_or", True), "__ior__": _ibinary("bitwise_or"),
    "__xor__": _binary("bitwise_xor"), "__rxor__": _binary("bitwise_xor", True), "__ixor__": _ibinary("bitwise_xor"),
    "__lshift__": _binary("bitwise_left_shift"), "__rshift__": _binary("bitwise_right_shift"),
    "__rlshift__": _binary("bitwise_left_shift", True), "__rrshift__": _binary("bitwise_right_shift", True),
    "__ilshift__": _ibinary("bitwise_left_shift"), "__irshift__": _ibinary("bitwise_right_shift"),
    # (torch's Python 2 spellings of true division, still its methods)
    "__div__": _div, "__rdiv__": _rtruediv, "__idiv__": _idiv,
    "__eq__": _eq, "__ne__": _binary("ne"), "__lt__": _binary("lt"), "__le__": _binary("le"),
    "__gt__": _binary("gt"), "__ge__": _binary("ge"),
    "__neg__": _unary("neg"), "__abs__": _unary("abs"), "__invert__": _invert, "__pos__": _unary("positive"),
    "clamp_": _clamp_inplace("clamp"), "clip_": _clamp_inplace("clamp"),
    "clamp_min_": _clamp_inplace("clamp_min"), "clamp_max_": _clamp_inplace("clamp_max"),
}
