"""Complex-number basics: ``real``/``imag``/``view_as_real``/``view_as_complex``/``conj`` views, and
``conj_physical``, ``resolve_conj``/``resolve_neg``, ``angle``, ``polar``, ``complex``.

As in PyTorch, ``x.real``, ``x.imag``, ``view_as_real(x)`` and ``view_as_complex(x)`` are views whose
strides count elements of their own dtype (``x.real`` of a complex64 ``x`` has strides ``2 * x.stride()``):
writes through them (``x.imag[0] = 5``, ``x.real.mul_(2)``) land in ``x``'s storage, read as interleaved
(re, im) floats (``views.to_units``). ``x.conj()`` is a view with PyTorch's conjugate bit (``is_conj()``):
its values are materialised when read, and a write through it is conjugated into ``x``;
``x.conj().imag`` has the negative bit (``is_neg()``). The bits are derived from the view chain
(``views.view_sign``), so every later view (``x.conj()[0]``, ``.t()``) keeps them.

>>> import functorch_lite as torch
>>> x = torch.zeros(2, dtype=torch.complex64)
>>> x.imag[0] = 5
>>> x
tensor([0.+5.j, 0.+0.j])
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._promotion import no_kernel
from .._tensor import views as V
from ._registry import defop, SELF
from ._dispatch import _type_name


def _tensor_meta(meta):
    """A ``view=`` function that first refuses a non-tensor input with PyTorch's argument-parser message."""
    def check(t, sargs, _name=meta.__name__[1:-5]):
        if not hasattr(t, "_storage"):
            raise TypeError(f"{_name}(): argument 'input' (position 1) must be Tensor, not {_type_name(t)}")
        return meta(t, sargs)
    return check


def _strides2(t):
    return tuple(2 * s for s in t.stride())


def _to_real_rule(op, sig, sargs):
    return (None,), (sig[0][1].to_real(),)


# ---- real / imag: views of the interleaved (re, im) floats -------------------------------------------
def _real_meta(t, sargs):
    if not t.dtype.is_complex:
        return SELF  # x.real of a real tensor is x itself
    return t._shape, _strides2(t), 2 * t._offset, t.dtype.to_real()


@defop(promote=_to_real_rule, grad_fn="SelectBackward0", view=_tensor_meta(_real_meta), method=False, saves=(),
       conj="reset")
def real(input):
    """``torch.real(x)`` / ``x.real``: a float view of the real parts (``x`` itself when ``x`` is real)."""
    return jnp.real(input)


def _imag_meta(t, sargs):
    if not t.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return t._shape, _strides2(t), 2 * t._offset + 1, t.dtype.to_real()


@defop(promote=_to_real_rule, grad_fn="SelectBackward0", view=_tensor_meta(_imag_meta), method=False, saves=())
def imag(input):
    """``torch.imag(x)`` / ``x.imag``: a float view of the imaginary parts (complex ``x`` only)."""
    return jnp.imag(input)


def _view_as_real_meta(t, sargs):
    if not t.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if V.view_sign(t._chain):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return t._shape + (2,), _strides2(t) + (1,), 2 * t._offset, t.dtype.to_real()


@defop(promote=_to_real_rule, grad_fn="ViewAsRealBackward0", view=_tensor_meta(_view_as_real_meta), method=False,
       saves=(), conj="reset")
def view_as_real(input):
    """A float view with a trailing dim of size 2 holding (re, im)."""
    return jnp.stack([jnp.real(input), jnp.imag(input)], -1)


def _view_as_complex_meta(t, sargs):
    dt = t.dtype
    if dt not in (D.float16, D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {dt.short}")
    if not t._shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if t._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    st = t.stride()
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if t._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if dt is D.float16:
        raise RuntimeError("functorch_lite does not support torch.complex32 (ComplexHalf): JAX has no such dtype")
    if V.view_sign(t._chain):
        raise RuntimeError("view_as_complex of a tensor with the negative bit set (x.conj().imag) is not supported "
                           "by functorch_lite; call .resolve_neg() first")
    return t._shape[:-1], tuple(s // 2 for s in st[:-1]), t._offset // 2, dt.to_complex()


def _to_complex_rule(op, sig, sargs):
    return (None,), (sig[0][1].to_complex(),)


@defop(promote=_to_complex_rule, grad_fn="ViewAsComplexBackward0", view=_tensor_meta(_view_as_complex_meta),
       method=False, saves=(), conj="reset", autocast="fp32")
def view_as_complex(input):
    """A complex view of a float tensor whose last dim (size 2, stride 1) holds (re, im)."""
    return jax.lax.complex(input[..., 0], input[..., 1])


# ---- conjugation --------------------------------------------------------------------------------------
def _conj_meta(t, sargs):
    if not t.dtype.is_complex:
        return SELF
    return t._shape, t.stride(), t._offset


@defop(grad_fn="ConjBackward0", view=_tensor_meta(_conj_meta), saves=(), conj="flip")
def conj(input):
    """``x.conj()``: a view with the conjugate bit (``is_conj()``); ``x`` itself for a real ``x``."""
    return jnp.conj(input)


def _self_if(pred):
    """A ``view=`` function: the input itself when ``pred(t)``, else a computed (non-view) result."""
    return lambda t, sargs: SELF if pred(t) else None


@defop(grad_fn="ConjPhysicalBackward0", view=_self_if(lambda t: not t.dtype.is_complex), inplace=True, out=True,
       float8=False, saves=())
def conj_physical(input):
    """The conjugate as a new tensor (no conjugate bit); a real ``x`` is returned itself."""
    return jnp.conj(input)


def _is_conj(self) -> bool:
    """PyTorch's conjugate bit: True for ``x.conj()`` of a complex ``x`` and the views of it."""
    return self.dtype.is_complex and V.view_sign(self._chain)


def _is_neg(self) -> bool:
    """PyTorch's negative bit: True for ``x.conj().imag`` and the views of it."""
    return not self.dtype.is_complex and V.view_sign(self._chain)


@defop(grad_fn="CloneBackward0", view=_self_if(lambda t: not _is_conj(t)), out=False, float8=False, saves=())
def resolve_conj(input):
    """``x`` itself, or (``x.is_conj()``) its values as a new tensor without the conjugate bit."""
    return input  # a conjugate view's values are materialised conjugated already


@defop(grad_fn="CloneBackward0", view=_self_if(lambda t: not _is_neg(t)), out=False, float8=False, saves=())
def resolve_neg(input):
    """``x`` itself, or (``x.is_neg()``) its values as a new tensor without the negative bit."""
    return input


# ---- angle / polar / complex ----------------------------------------------------------------------------
def _angle_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category <= D.INT:  # computed in the default float, as PyTorch does
        return (D.get_default_dtype(),), (D.get_default_dtype(),)
    return (None,), (dt.to_real(),)


@defop(promote=_angle_rule, grad_fn="AngleBackward0", kernel="angle_cpu")
def angle(input):
    """Argument of each element (float for real input: ``pi`` where negative, else 0)."""
    if jnp.iscomplexobj(input):  # PyTorch's gradient is 0 at z == 0 (arctan2's is NaN there)
        zero = input == 0
        safe = jnp.angle(jnp.where(zero, jnp.ones((), input.dtype), input))
        return jnp.where(zero, jax.lax.stop_gradient(jnp.angle(input)), safe)
    # PyTorch: pi for x < 0, 0 for x >= 0, NaN for NaN; zero gradient
    x = input
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, jnp.asarray(jnp.pi, x.dtype), jnp.zeros((), x.dtype)))


def _pair_rule(names):
    """complex(real, imag) / polar(abs, angle): two tensors of one dtype among half/float/double."""
    def rule(op, sig, sargs):
        for i, (s, n) in enumerate(zip(sig, names)):
            if type(s) is not tuple:
                tn = "NoneType" if s is None else s.__name__
                raise TypeError(f"{op.name}(): argument '{n}' (position {i + 1}) must be Tensor, not {tn}")
        a, b = sig[0][1], sig[1][1]
        if a not in (D.float16, D.float32, D.float64) or b not in (D.float16, D.float32, D.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {a.short} and "
                               f"{b.short}")
        if a is not b:
            raise RuntimeError(f"Expected object of scalar type {a.short} but got scalar type {b.short} for second "
                               "argument")
        if a is D.float16:
            if op.name == "polar":  # (torch's CPU kernel has no Half: refused before any complex32 arises)
                raise no_kernel("polar_cpu", a)
            raise RuntimeError("functorch_lite does not support torch.complex32 (ComplexHalf): JAX has no such dtype")
        return (None, None), (a.to_complex(),)
    return rule


@defop(promote=_pair_rule(("abs", "angle")), broadcast=True, grad_fn="PolarBackward0", tensors=2, method=False,
       autocast={"cpu": "fp32"})
def polar(abs, angle):
    """``abs * (cos(angle) + i sin(angle))``."""
    a, t = jnp.broadcast_arrays(abs, angle)
    # PyTorch's gradient for abs is real(conj(grad) * sgn(result)): the true one times sign(abs) (0 at abs == 0)
    c = jax.lax.stop_gradient(a)
    a = c + jnp.sign(c) * (a - c)
    return jax.lax.complex(a * jnp.cos(t), a * jnp.sin(t))


@defop(promote=_pair_rule(("real", "imag")), broadcast=True, grad_fn="ComplexBackward0", tensors=2, method=False)
def complex(real, imag):
    """``real + i imag`` from two float tensors of one dtype (broadcast)."""
    return jax.lax.complex(*jnp.broadcast_arrays(real, imag))


# ---- Tensor.real / Tensor.imag properties ---------------------------------------------------------------
def _setter(view_fn):
    def set_(self, value):
        v = view_fn(self)
        if hasattr(value, "_storage"):
            v.copy_(value)
        else:
            v.fill_(value)
    return set_


METHODS = {"real": property(real, _setter(real)), "imag": property(imag, _setter(imag)),
           "is_conj": _is_conj, "is_neg": _is_neg}
FUNCTIONS = {"is_conj": _is_conj, "is_neg": _is_neg}
