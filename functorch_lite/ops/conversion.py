"""dtype and device conversion: ``to``, ``float()``..., ``cuda()``/``cpu()``, ``copy_``, ``fill_``.

Casts go through ``dtypes.cast_array`` (PyTorch's wrap-around / saturation rules); device moves
are explicit ``jax.device_put`` calls — the facade never lets JAX move an array implicitly.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _promotion as P
from .. import dtypes as D
from .. import _device as _dev
from .._tensor.tensor import Tensor, memory_format, preserve_format
from .._tensor.storage import META_NO_DATA
from ..autograd import graph as _graph
from ..autograd import grad_mode as _gm
from ._registry import _not_bool, defop
from .movement import lay_out, suggest_memory_format


def _to_rule(op, sig, sargs):
    return (None,), (sargs[0],)


def _to_check(targs, sargs):
    P.discards_imag(targs[0].dtype, sargs[0])


@defop("_to_copy", float8=True, promote=_to_rule, grad_fn="ToCopyBackward0", method=False, function=False, saves=(),
       check=_to_check)
def _to_copy(input, dtype):
    """Cast with PyTorch's rules (float -> int wraps, NaN -> INT64_MIN, float8 saturates)."""
    return D.cast_array(input, D.from_numpy_dtype(input.dtype), dtype)


def _copy_rule(op, sig, sargs):
    dt = sig[0][1]
    return (None, dt), (dt,)


def _copy_check(targs, sargs):
    x, src = targs
    if isinstance(src, Tensor) and src._shape != x._shape:
        from ._dispatch import broadcast_shapes
        b = broadcast_shapes(x._shape, src._shape)
        if b != x._shape:
            raise RuntimeError(f"output with shape {list(x._shape)} doesn't match the broadcast shape {list(b)}")
    if isinstance(src, Tensor):
        P.discards_imag(src.dtype, x.dtype)


@defop("copy", float8=True, promote=_copy_rule, grad_fn="CopyBackwards", tensors=2, inplace=True, method=False,
       function=False, saves=(), broadcast=True, check=_copy_check)
def _copy(input, src):
    """``self.copy_(src)``: src broadcast to self's shape, cast to self's dtype (any cast allowed)."""
    return jnp.broadcast_to(src, input.shape)


def _fill_check(targs, sargs):
    x, v = targs
    if not isinstance(v, Tensor):
        D.check_fill(v, x.dtype, x.numel())
    elif v._shape:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {len(v._shape)} "
                           "dimensions.")


def _fill_name(targs, sargs):
    """torch's fill.Scalar / fill.Tensor nodes (its in-place fill_ records FillBackward2 / FillBackward3)."""
    return "FillBackward1" if isinstance(targs[1], Tensor) else "FillBackward0"


@defop("fill", float8=True, promote=_copy_rule, grad_fn=_fill_name, tensors=2, inplace=True, method=False, saves=(),
       aliased_write_ok=True, check=_fill_check, out=False)
def _fill(input, value):
    return jnp.broadcast_to(value, input.shape)


@defop("zero", float8=True, grad_fn="ZeroBackward0", inplace=True, method=False, function=False, saves=(),
       aliased_write_ok=True, zeroes=True)
def _zero(input):
    return jnp.zeros_like(input)


class _DeviceCopy(_graph.Node):
    """ToCopyBackward0 of a device move: the gradient moves back to the source device."""
    __slots__ = ("_src",)

    def apply_custom(self, cts):
        ct = cts[0]
        if ct is None:
            return [None]
        return [jax.device_put(ct, self._src)]


_DeviceCopy.__name__ = "ToCopyBackward0"


def _move(t, dev):
    if t.device.type == "meta":
        raise NotImplementedError(META_NO_DATA)
    jdev = _dev.to_jax(dev)
    if jdev is None:  # to('meta'): keep the shape, drop the values
        from .._tensor.storage import meta_array
        return Tensor._from_array(meta_array(t._shape, t.dtype.jnp), t.dtype, dev)
    out = Tensor._from_array(jax.device_put(t._array, jdev), t.dtype, dev)
    if t._requires_grad and _gm._state.enabled:
        node = _DeviceCopy()
        node._src = _dev.to_jax(t.device)
        node._out_meta = ((out._shape, out.dtype),)
        e = _graph.edge_of(t)
        node._edges = () if e is None else (e,)  # (a no_grad view's gradient goes nowhere)
        node.next_functions = (e or (None, 0),)
        out.grad_fn = node
        out._requires_grad = True
    return out


_TO_SIGNATURES = "".join(
    f"\n * ({sig}bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)"
    for sig in ("torch.device device = None, torch.dtype dtype = None, ", "torch.dtype dtype, ", "Tensor tensor, "))


def _to_invalid(args, kwargs) -> TypeError:
    """PyTorch's "received an invalid combination of arguments" TypeError of ``to()``."""
    from .view_ops import _tname

    def name(v):
        return "torch.memory_format" if isinstance(v, memory_format) else _tname(v)
    got = ", ".join([name(a) for a in args] + [f"{k}={name(v)}" for k, v in sorted(kwargs.items())])
    got += ", " if kwargs and not args else ""
    return TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of:"
                     f"{_TO_SIGNATURES}\n")


def _parse_to(args, kwargs):
    """(dtype, device, copy, memory_format) of a ``to(...)`` call."""
    kw = dict(kwargs)
    dtype = kw.pop("dtype", None)
    device = kw.pop("device", None)
    copy = kw.pop("copy", False)
    non_blocking = kw.pop("non_blocking", False)
    fmt = kw.pop("memory_format", None)
    if kw or not (fmt is None or isinstance(fmt, memory_format)) or type(copy) is not bool or \
            type(non_blocking) is not bool:
        raise _to_invalid(args, kwargs)
    # PyTorch's overloads: (device, dtype, non_blocking, copy), (dtype, non_blocking, copy), (other, non_blocking,
    # copy): after the leading arguments, at most two bools (non_blocking, then copy)
    i = 0
    if args:
        a = args[0]
        i = 1
        if isinstance(a, (Tensor, D.dtype)) and ("dtype" in kwargs or "device" in kwargs):
            raise _to_invalid(args, kwargs)  # (the (dtype, ...) and (tensor, ...) overloads take neither keyword)
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, D.dtype):
            dtype = a
        elif a is None or isinstance(a, (str, _dev.device, int)) and not isinstance(a, bool):
            device = a
            if len(args) > 1:  # (the dtype's place: a bool there matches no overload)
                if isinstance(args[1], bool):
                    raise _to_invalid(args, kwargs)
                dtype, i = args[1], 2
        elif not isinstance(a, bool):
            dtype = D.as_dtype(a)
        else:
            i = 0
    flags = args[i:]
    if len(flags) > 2 or any(type(f) is not bool for f in flags):
        raise _to_invalid(args, kwargs)
    if len(flags) == 2:
        copy = flags[1]
    return dtype, device, copy, (preserve_format if fmt is None else fmt)


def to(self, *args, **kwargs):
    """``x.to(dtype)``, ``x.to(device)``, ``x.to(device, dtype)``, ``x.to(other)``, each with ``copy=`` and
    ``memory_format=``; returns self when nothing changes (DTY-16, DEV-15), as PyTorch's ``to_will_alias`` (a
    ``memory_format`` other than ``preserve_format`` changes nothing when it is ``self``'s suggested format). A copy
    is laid out in ``memory_format``: ``preserve_format`` (the default) keeps a dense ``self``'s strides."""
    dtype, device, copy, fmt = _parse_to(args, kwargs)
    dev = None if device is None else _dev.canonical(device)
    dt = None if dtype is None else D.as_dtype(dtype)
    if (dev is None or dev == self.device) and (dt is None or dt is self.dtype) and not copy and \
            (fmt is preserve_format or fmt is suggest_memory_format(self)):
        return self
    out = self
    if dev is not None and dev != self.device:
        out = _move(out, dev)
    if (dt is not None and dt is not out.dtype) or out is self:  # (a same-dtype copy is a ToCopyBackward0 too)
        from ._dispatch import dispatch
        from ._registry import OPS
        out = dispatch(OPS["_to_copy"], (out,), (out.dtype if dt is None else dt,))
    return lay_out(out, self, fmt)


def _caster(dt):
    def method(self, memory_format=preserve_format):
        return to(self, dt, memory_format=memory_format)
    method.__name__ = dt.name
    method.__doc__ = f"``self.to(torch.{dt.name}, memory_format=memory_format)``"
    return method


def cuda(self, device=None, non_blocking=False, memory_format=preserve_format):
    if type(non_blocking) is not bool:
        _not_bool("cuda", ("non_blocking",), (non_blocking,))
    d = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
    return to(self, d, memory_format=memory_format)


def cpu(self, memory_format=preserve_format):
    return to(self, "cpu", memory_format=memory_format)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    from .creation import tensor
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad,
                  _called="tensor.new_tensor")


def _new(fn_name):
    name = "new_" + fn_name

    def method(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        from . import creation
        fn = getattr(creation, fn_name)
        if "size" not in kw:  # (torch's parser for ``new_zeros(SymInt[] size)``: its own name in the messages)
            if not size:
                raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
            packed = len(size) == 1 and isinstance(size[0], (tuple, list))
            from .view_ops import _shape_arg
            if packed and size[0]:  # (a bad first element: the tuple's message; a later one: "failed to unpack")
                _shape_arg((size[0][:1],), name)
            size = (_shape_arg(tuple(size[0]) if packed else size, name),)
            creation._check_nonneg(name, size[0])
        return fn(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad, **kw)
    method.__name__ = name
    return method


_REQUIRED = object()


def new_full(self, size=_REQUIRED, fill_value=_REQUIRED, *, dtype=None, device=None, requires_grad=False):
    from .creation import full
    from .view_ops import _tname, _shape_arg
    missing = [f'"{a}"' for a, v in (("size", size), ("fill_value", fill_value)) if v is _REQUIRED]
    if missing:  # (torch's argument parser's wording, its plurals included)
        raise TypeError(f"new_full() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) == 1 else ''}: {', '.join(missing)}")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {_tname(size)}")
    return full(_shape_arg((size,), "new_full"), fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def type_as(self, other):
    """``self`` in ``other``'s dtype (and device type); ``self`` itself when nothing changes."""
    if other.device.type != self.device.type:
        return to(self, other.device, other.dtype)
    return to(self, other.dtype)


METHODS = {"type_as": type_as, "to": to, "cuda": cuda, "cpu": cpu, "new_tensor": new_tensor, "new_zeros": _new("zeros"),
           "new_ones": _new("ones"), "new_empty": _new("empty"), "new_full": new_full,
           "float": _caster(D.float32), "double": _caster(D.float64), "half": _caster(D.float16),
           "bfloat16": _caster(D.bfloat16), "long": _caster(D.int64), "int": _caster(D.int32),
           "short": _caster(D.int16), "char": _caster(D.int8), "byte": _caster(D.uint8), "bool": _caster(D.bool),
           "cfloat": _caster(D.complex64), "cdouble": _caster(D.complex128),
           "chalf": _caster(D.complex32)}  # (complex32 has no JAX dtype: the cast raises that clear error)
