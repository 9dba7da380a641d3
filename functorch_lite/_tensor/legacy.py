"""PyTorch's legacy tensor constructors and types, still common in real scripts:

* ``torch.Tensor(2, 3)`` (an uninitialized tensor of that size), ``torch.Tensor([1, 2])`` (data, in the default
  dtype), ``torch.Tensor(other)`` (an alias of ``other``), ``torch.Tensor(size=...)``, ``torch.Tensor()``;
* ``torch.FloatTensor``, ``torch.LongTensor``, ... and ``torch.cuda.FloatTensor``, ...: the same constructor with
  a fixed dtype and device type, ``isinstance(t, torch.FloatTensor)`` (a float32 tensor on that device type),
  ``t.type(torch.DoubleTensor)``, ``torch.set_default_tensor_type``;
* ``Tensor.apply_``/``map_``/``map2_`` (a Python callable per element, on the host);
* ``torch.pi``/``e``/``inf``/``nan``/``newaxis``, ``torch.typename``, and the layout/backend flags scripts test
  (``is_sparse``, ``is_quantized``, ``is_mps``, ...: False, the facade's tensors being dense), ``to_dense``,
  ``is_set_to``, ``output_nr``.

The argument rules and error texts are ``torch/csrc/utils/tensor_new.cpp``'s ``legacy_tensor_ctor``.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes as D
from .. import _device as _dev
from .._warn import warn_once

_SIGNATURES = ("expected one of:\n * (*, torch.device device = None)\n{why} * (torch.Storage storage)\n"
               " * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n"
               " * (object data, *, torch.device device = None)\n")



def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _argtypes(args, kwargs) -> str:
    from ..ops._dispatch import _type_name as name
    return ", ".join([name(a) for a in args] + [f"{k}={name(v)}" for k, v in kwargs.items()])


def _options(dtype, device) -> str:
    from .._promotion import _cname  # (the C++ type names torch's messages print: one table)
    return (f"TensorOptions(dtype={_cname(dtype)}, device={device}, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))")


def legacy_new(dtype, device_type, args: tuple, kwargs: dict):
    """``torch.Tensor(...)`` (``dtype``/``device_type`` None: the defaults) or ``torch.<Type>Tensor(...)``."""
    from .tensor import Tensor, Size
    from .. import empty, tensor
    from ..ops.creation import other_sequence
    from ..ops.indexing import _tp_name
    bad = [k for k in kwargs if k not in ("device", "size")]
    if bad or ("size" in kwargs and args):
        why = f"      didn't match because some of the keywords were incorrect: {', '.join(bad)}\n" if bad else ""
        raise TypeError(f"new() received an invalid combination of arguments - got ({_argtypes(args, kwargs)}), "
                        "but " + _SIGNATURES.format(why=why))
    typed = dtype is not None
    dtype = D.get_default_dtype() if dtype is None else dtype
    device = kwargs.get("device")
    if device is not None:
        device = _dev.canonical(device)
        if typed and device.type != device_type:
            raise RuntimeError(f"legacy constructor expects device type: {device_type} but device type: "
                               f"{device.type} was passed")
    elif typed and device_type != "cpu":
        device = _dev.canonical(device_type)
    if "size" in kwargs:
        return empty(tuple(kwargs["size"]), dtype=dtype, device=device)
    if not args:
        return empty(0, dtype=dtype, device=device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if typed and (a.dtype is not dtype or a.device.type != device_type):
                raise TypeError(f"expected {_options(dtype, device_type)} (got {_options(a.dtype, a.device)})")
            from ..ops._dispatch import dispatch
            from ..ops._registry import OPS
            return dispatch(OPS["alias"], (a,), ())  # (AliasBackward0, as torch's)
        if isinstance(a, Size):
            return empty(tuple(a), dtype=dtype, device=device)
        if isinstance(a, str):
            raise TypeError(f"new(): invalid data type '{type(a).__name__}'")
        if isinstance(a, (list, tuple, range, np.ndarray)) or other_sequence(a):
            return tensor(a, dtype=dtype, device=device)
        if not _is_int(a):
            raise TypeError(f"new(): data must be a sequence (got {_tp_name(a)})")
    for i, a in enumerate(args):
        if not _is_int(a):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(a).__name__}\"")
    return empty(tuple(int(a) for a in args), dtype=dtype, device=device)


class tensortype(type):
    """The class of ``torch.FloatTensor`` and its kind: calling one constructs a tensor of its dtype and device
    type; ``isinstance`` checks a tensor's dtype and device type (they are not Tensor subclasses, as in PyTorch)."""

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, cls._device_type, args, kwargs)

    def __instancecheck__(cls, obj) -> bool:
        from .tensor import Tensor
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls._device_type

    def __repr__(cls) -> str:
        return f"<class '{cls._torch_name}'>"


def _make(dt, device_type: str, module: str):
    prefix = "torch." if device_type == "cpu" else f"torch.{device_type}."
    return tensortype(dt.legacy, (), {"dtype": dt, "is_cuda": device_type == "cuda", "_device_type": device_type,
                                      "_torch_name": prefix + dt.legacy, "__module__": module,
                                      "__qualname__": dt.legacy})


_LEGACY_DTYPES = (D.float32, D.float64, D.float16, D.bfloat16, D.uint8, D.int8, D.int16, D.int32, D.int64, D.bool)
CPU_TYPES = {dt.legacy: _make(dt, "cpu", "functorch_lite") for dt in _LEGACY_DTYPES}
CUDA_TYPES = {dt.legacy: _make(dt, "cuda", "functorch_lite.cuda") for dt in _LEGACY_DTYPES}


def _by_name(name: str):
    """The tensor type 'torch.FloatTensor' / 'torch.cuda.LongTensor' ... names, or None."""
    for prefix, table in (("torch.cuda.", CUDA_TYPES), ("torch.", CPU_TYPES)):
        if name.startswith(prefix):
            return table.get(name[len(prefix):])
    return None


def resolve(spec):
    """``t.type(spec)``'s target as (dtype, device type or None): a tensortype, ``torch.Tensor`` (the default
    dtype), a dtype, or a name such as 'torch.cuda.DoubleTensor'."""
    from .tensor import Tensor
    if isinstance(spec, tensortype):
        return spec.dtype, spec._device_type
    if spec is Tensor:
        return D.get_default_dtype(), None
    if isinstance(spec, D.dtype):
        return spec, None
    if isinstance(spec, str):
        named = _by_name(spec)
        if named is None:
            raise ValueError(f"invalid type: '{spec}'")
        return named.dtype, named._device_type
    raise TypeError(f"type() received an invalid argument: {type(spec).__name__}")


def set_default_tensor_type(t) -> None:
    """``torch.set_default_tensor_type`` (deprecated in PyTorch 2.1): the type's dtype becomes the default, and a
    ``torch.cuda.*`` type makes 'cuda' the default device. Its deprecation warning comes once per process, as
    PyTorch's (a C++ ``TORCH_WARN_ONCE``)."""
    warn_once("set_default_tensor_type", "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
              "use torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    if isinstance(t, str):
        named = _by_name(t)
        if named is None:
            module, _, attr = t.rpartition(".")
            raise AttributeError(f"module '{module}' has no attribute '{attr}'")
        t = named
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(t.dtype)
    if t._device_type != "cpu":
        _dev.set_default_device(t._device_type)


def typename(obj) -> str:
    """``torch.typename``: 'torch.FloatTensor' for a tensor or tensor type, 'module.QualName' otherwise (what
    PyTorch's errors name an object by)."""
    from .tensor import Tensor
    if isinstance(obj, Tensor):
        return obj.type()
    if isinstance(obj, tensortype):
        return obj._torch_name
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        name = obj.__qualname__
    elif hasattr(obj, "__name__"):
        name = obj.__name__
    else:
        module, name = type(obj).__module__ or "", type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


# ---- the layout/backend flags scripts test: the facade's tensors are dense and strided ---------------------
_FALSE_FLAGS = ("is_sparse", "is_sparse_csr", "is_quantized", "is_nested", "is_mkldnn", "is_mps", "is_xla",
                "is_vulkan", "is_ipu", "is_xpu", "is_maia", "is_mtia")


def _is_set_to(self, tensor) -> bool:
    """True when both tensors are the same view of the same storage (offset, sizes and strides)."""
    return (self._storage is tensor._storage and self.storage_offset() == tensor.storage_offset()
            and self.shape == tensor.shape and self.stride() == tensor.stride())


# sparse and quantized tensors' accessors, on the dense (strided) tensors this library has: torch's errors
_LAYOUT_ERRORS = {"is_coalesced": "sparse coordinate", "coalesce": "sparse coordinate",
                  "indices": "sparse coordinate", "values": "sparse", "crow_indices": "sparse row compressed",
                  "col_indices": "sparse row compressed", "ccol_indices": "sparse column compressed",
                  "row_indices": "sparse column compressed"}
_NO_KERNEL = ("_indices", "_values", "_nnz", "q_scale", "q_zero_point", "int_repr", "q_per_channel_scales",
              "q_per_channel_zero_points", "q_per_channel_axis")


def _layout_error(name, what):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {what} tensor layout but got Strided")
    method.__name__ = name
    return method


def _no_kernel(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the '{self.device.type.upper()}' "
                                  "backend: functorch_lite has only dense (strided) tensors, neither sparse nor "
                                  "quantized ones.")
    method.__name__ = name
    return method


def _to_sparse(self, *args, **kwargs):
    """``to_sparse`` / ``to_sparse_coo``: a sparse COO tensor (sparse/__init__.py)."""
    from ..sparse import dense_to_sparse
    return dense_to_sparse(self, *args, **kwargs)


def _to_compressed(self, *args, **kwargs):
    raise RuntimeError("functorch_lite has dense and sparse COO tensors only: Tensor.to_sparse_csr / to_sparse_csc "
                       "/ to_sparse_bsr / to_sparse_bsc are not supported")


def _to_dense(self, dtype=None, *, masked_grad=None):
    return self if dtype is None or dtype is self.dtype else self.to(dtype)


# ---- Python callables applied element by element on the host (PyTorch: CPU tensors only) -------------------
_APPLY_INT_NAMES = {"int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8"}


def _host_value(r, dt):
    """``fn``'s result stored as an element of ``dt``, as torch's ``apply_`` stores it (tensor_apply.cpp): a
    double for floating types (anything with ``__float__``: a one-element tensor too), a complex for complex ones,
    a checked integer conversion (a float truncated) for integer types."""
    from .tensor import Tensor
    if dt.is_complex:
        if isinstance(r, (str, bytes)) or not hasattr(r, "__complex__") and not hasattr(r, "__float__") \
                and not hasattr(r, "__index__"):
            raise TypeError(f"must be complex, not {type(r).__name__}")
        return complex(r)
    if dt.is_floating_point:
        if isinstance(r, (str, bytes, complex)) or not hasattr(r, "__float__") and not hasattr(r, "__index__"):
            raise TypeError(f"must be real number, not {type(r).__name__}")
        return float(r)
    if dt is D.bool:
        if not isinstance(r, (bool, int, float, complex, np.generic, Tensor)):
            raise TypeError(f"must be real number, not {type(r).__name__}")
        return bool(r)
    v = r if isinstance(r, float) else operator.index(r)
    name = _APPLY_INT_NAMES.get(dt.name)
    if name is None or (name == "int64" and not isinstance(v, float)):
        if not -(1 << 63) <= v < 1 << 63:
            raise RuntimeError("Overflow when unpacking long")
    else:
        D.check_fits(v, dt, cname=name)
    v = int(v)
    return v % 256 if dt is D.uint8 else v


def _host_map(name: str, self, others: dict, fn):
    """``self`` rewritten in place with ``fn(self_i, *others_i)`` (Python scalars in, one element at a time)."""
    from .tensor import Tensor
    from .. import tensor
    from ..autograd.grad_mode import no_grad
    for t in (self, *others.values()):
        if t.requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                               "instead.")
        if t.device.type != "cpu":
            raise TypeError(f"{name} is only implemented on CPU tensors")
    for arg, o in others.items():
        if not isinstance(o, Tensor) or o.dtype is not self.dtype:
            got = o.type() if isinstance(o, Tensor) else type(o).__name__
            raise TypeError(f"{name}: expected {self.type()} for {arg} (got {got})")
    cols = [self.numpy()] + [o.expand(self.shape).numpy() for o in others.values()]
    out = np.empty(tuple(self.shape), dtype=cols[0].dtype)
    with np.errstate(over="ignore"):  # (a double past float32's range is inf, as torch's cast)
        for i in np.ndindex(out.shape):
            out[i] = _host_value(fn(*(c[i].item() for c in cols)), self.dtype)
    with no_grad():
        self.copy_(tensor(out, dtype=self.dtype))
    return self


def _share_memory_(self):
    """Refused: PyTorch moves the storage into shared memory so that other processes (Hogwild workers) update the
    same tensor, and a JAX array cannot be shared so; a no-op would let each worker train its own copy."""
    raise RuntimeError("functorch_lite: Tensor.share_memory_ / Module.share_memory is not supported: a JAX array "
                       "cannot live in memory other processes write to, so Hogwild-style workers would each train "
                       "their own copy of the model. Train in one process (functorch_lite.compile makes the whole "
                       "step one program; several local devices are JAX sharding's job).")


METHODS = {**{name: property(lambda self: False) for name in _FALSE_FLAGS},
           "apply_": lambda self, callable: _host_map("apply_", self, {}, callable),
           "map_": lambda self, tensor, callable: _host_map("map_", self, {"'other'": tensor}, callable),
           "map2_": lambda self, x, y, callable: _host_map("map2_", self, {"argument 'x'": x, "argument 'y'": y},
                                                           callable),
           "is_shared": lambda self: False,  # (no tensor lives in shared memory: share_memory_ refuses)
           "share_memory_": _share_memory_,
           "is_distributed": lambda self: False,
           "is_set_to": _is_set_to,
           **{name: _layout_error(name, what) for name, what in _LAYOUT_ERRORS.items()},
           **{name: _no_kernel(name) for name in _NO_KERNEL},
           "to_sparse": _to_sparse, "to_sparse_coo": _to_sparse,
           **{name: _to_compressed for name in ("to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc")},
           "dequantize": lambda self: self,  # (a dense tensor is its own dequantized value, as torch's)
           "to_dense": _to_dense,
           "dense_dim": lambda self: self.dim(),
           "sparse_dim": lambda self: 0,
           "output_nr": property(lambda self: self._out_nr)}

CONSTANTS = {"pi": float(np.pi), "e": float(np.e), "inf": float("inf"), "nan": float("nan"), "newaxis": None}
