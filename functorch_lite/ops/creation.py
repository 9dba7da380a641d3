"""Tensor creation (spec §1): ``tensor``, ``zeros``..., random sampling, ``*_like``, NumPy import.

Every creation passes an explicit dtype (PyTorch's defaults: float32 / int64 / bool / complex64)
and commits the array to its device, so JAX's x64 defaults never leak.
"""
from __future__ import annotations

import array
import builtins
import collections.abc
import math
import numbers
import operator
import warnings
from itertools import islice

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .._symbolic import SymNumber
from .. import _device as _dev
from .._config import empty_fill_value
from .. import random as _rng
from .._tensor.storage import meta_array
from .._promotion import promote_types
from .._tensor.tensor import Tensor
from .._promotion import _cname, discards_imag, no_kernel
from .._warn import user_stacklevel as _user_stacklevel
from .._warn import user_stacklevel
from .view_ops import _shape_arg, _tname
from ._registry import _not_bool, defop
from ._dispatch import _type_name

_py_bool, _py_int, _py_float, _py_complex = builtins.bool, builtins.int, builtins.float, builtins.complex
_NOT_GIVEN = object()  # (an argument not passed)


def _check_requires_grad(dt, requires_grad) -> None:
    """A factory's ``requires_grad=True`` for a dtype that cannot require gradients: torch's factory error (the
    method ``requires_grad_`` words it otherwise); a ``requires_grad`` that is not a bool: torch's parser's TypeError
    (the factories' schema takes None, as False; ``torch.tensor`` refuses it itself)."""
    if type(requires_grad) is not _py_bool and requires_grad is not None:
        _not_bool(None, ("requires_grad",), (requires_grad,))
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


def _finish(arr, dt, device, requires_grad):
    """Commit a host/jax array to ``device`` as facade dtype ``dt`` and wrap it."""
    dev = _dev.canonical(device)
    _check_requires_grad(dt, requires_grad)
    jdev = _dev.to_jax(dev)
    jarr = jax.device_put(arr, jdev) if jdev is not None else meta_array(np.shape(arr), dt.jnp)
    t = Tensor._from_array(jarr, dt, dev)
    t._requires_grad = _py_bool(requires_grad)
    return t


def _finish_meta(shape, dt, dev, requires_grad):
    _check_requires_grad(dt, requires_grad)
    t = Tensor._from_array(meta_array(shape, dt.jnp), dt, dev)
    t._requires_grad = _py_bool(requires_grad)
    return t


def _host_cast(a: np.ndarray, src: D.dtype, dt: D.dtype):
    """PyTorch's cast (``dtypes.cast_array``) on the host, before the array goes to its device."""
    if src is dt:
        return a
    with np.errstate(over="ignore", invalid="ignore"):  # out-of-range -> inf silently, as PyTorch (DTY-12)
        return np.asarray(D.cast_array(a, src, dt, np))


# ---- argument errors in PyTorch's python_arg_parser wording -------------------------------------
_KW = "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, " \
      "bool pin_memory = False, bool requires_grad = False)"
_SIGS = {
    "rand": [f"tuple of ints size, *, torch.Generator generator, {_KW}", f"tuple of ints size, *, {_KW}"],
    "linspace": [f"{a} start, {b} end, int steps, *, {_KW}"
                 for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number"))],
    "normal": ["Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
               "Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)",
               "float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
               f"float mean, float std, tuple of ints size, *, torch.Generator generator = None, {_KW}"],
}
_SIGS["randn"] = _SIGS["rand"]
_SIGS["randint"] = [f"int high, tuple of ints size, *, torch.Generator generator, {_KW}",
                    f"int high, tuple of ints size, *, {_KW}",
                    f"int low, int high, tuple of ints size, *, torch.Generator generator, {_KW}",
                    f"int low, int high, tuple of ints size, *, {_KW}"]
_SIGS["logspace"] = [x.replace("int steps,", "int steps, float base = 10.0,") for x in _SIGS["linspace"]]
_SIGS["randperm"] = [f"int n, *, torch.Generator generator, {_KW}", f"int n, *, {_KW}"]
_SIGS["random_"] = ["*, torch.Generator generator = None)", "int from, int to, *, torch.Generator generator = None)",
                    "int to, *, torch.Generator generator = None)"]


def _check_generator(name: str, args: tuple, generator, **kw) -> None:
    """A ``generator=`` that is not a ``torch.Generator``: PyTorch's argument-parser TypeError for ``name(*args,
    generator=..., **kw)`` (``kw``: the call's other keyword arguments, as ``_passed`` lists them)."""
    from .. import random as _rng
    if generator is not None and not isinstance(generator, _rng.Generator):
        raise _invalid_args(name, args, _passed(generator=generator, **kw))


def _invalid_args(name: str, args: tuple, kwargs: dict) -> TypeError:
    """PyTorch's "received an invalid combination of arguments" TypeError."""
    parts = [_tname(a) for a in args] + [f"{k}={_tname(v)}" for k, v in kwargs.items()]
    got = ", ".join(parts) + (", " if kwargs and not args else "")
    lines = "".join(f"\n * ({sig}" for sig in _SIGS.get(name, ()))
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:{lines}\n")


def _passed(**kw) -> dict:
    """The keyword arguments given non-default values (what PyTorch lists after ``got (...)``)."""
    return {k: v for k, v in kw.items()
            if not (v is None or (v is False and k in ("requires_grad", "pin_memory")) or (k == "base" and v == 10.0))}


def _is_int(x) -> bool:
    if isinstance(x, Tensor):
        return x.dim() == 0 and not (x.dtype.is_floating_point or x.dtype.is_complex)
    return hasattr(type(x), "__index__")


def _size_kw(name: str, size: tuple, kw: dict) -> tuple:
    """``*size`` given as the ``size=`` keyword instead (``zeros(size=(2, 3))``, as PyTorch accepts)."""
    if not kw:
        return size
    extra = [k for k in kw if k != "size"]
    if extra:
        raise TypeError(f"{name}() got an unexpected keyword argument '{extra[0]}'")
    if size:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (kw["size"],)


def _size(name: str, size: tuple) -> tuple:
    """Parse ``*size`` (ints, or one tuple/list/Size) with PyTorch's messages; negative dims raise."""
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    shape = _shape_arg(size, name)
    _check_nonneg(name, shape)
    return shape


def _check_nonneg(name: str, shape: tuple) -> None:
    if any(d < 0 for d in shape):
        if name == "zeros":
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        neg = next(d for d in shape if d < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: [{', '.join(map(str, shape))}]")


# ---- out= of the factories ---------------------------------------------------------------------------
def _out_args(name: str, out, dtype, device) -> tuple:
    """(dtype, device) a factory makes its result in: ``out``'s when given (a different ``dtype=`` is PyTorch's
    error); the result then goes into ``out`` (:func:`_into`)."""
    if out is None:
        return dtype, device
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_type_name(out)}")
    if dtype is not None and D.as_dtype(dtype) is not out.dtype:
        raise RuntimeError(f"dtype {D.as_dtype(dtype).short} does not match dtype of out parameter ({out.dtype.short})")
    return out.dtype, (out.device if device is None else device)


_RESIZES_FIRST = ("empty", "randn")  # PyTorch's out= kernels of these resize before autograd's out= check


def _into(name: str, out, make, requires_grad=False):
    """``make(requires_grad)`` (the result, in ``out``'s dtype: :func:`_out_args`), written into ``out`` when given
    by the one out= path (``_dispatch.write_out``: resized silently, as PyTorch's factories resize)."""
    if out is None:
        return make(requires_grad)
    if name in _RESIZES_FIRST and out.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    from ._dispatch import write_out
    _check_requires_grad(out.dtype, requires_grad)
    write_out(out, make(False), f"aten::{name}", resize_warn=False)
    if requires_grad:  # (PyTorch: ``zeros(2, out=o, requires_grad=True)`` makes ``o`` require grad)
        out.requires_grad_(True)
    return out


# ---- tensor / as_tensor / from_numpy ------------------------------------------------------------
def other_sequence(data) -> bool:
    """A sequence PyTorch reads element by element that is not a list, tuple or range (``PySequence_Check``): a
    deque, a ``UserList``, an ``array.array``, a memoryview... (not a string, bytes or a mapping)."""
    return not isinstance(data, (list, tuple, builtins.range, str, bytes, bytearray, np.ndarray, Tensor)) and \
        isinstance(data, (collections.abc.Sequence, collections.abc.MutableSequence, array.array, memoryview))


def _as_lists(data):
    """``data`` with every sequence in it a list (the forms the dtype inference and NumPy read)."""
    if isinstance(data, (list, tuple)) or other_sequence(data):
        return [_as_lists(x) for x in data]
    return data


def _infer_dtype(data) -> D.dtype | None:
    """PyTorch's ``infer_scalar_type``: promote (``promote_types``) the dtypes of all leaves; numpy
    scalars/arrays and tensors keep theirs, Python numbers give the defaults (CRE-01..11)."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (np.ndarray, np.generic)):  # (np.asarray: a DataLoader worker's tensor, an ndarray whose
        return D.from_numpy_dtype(np.asarray(data).dtype)  # ``dtype`` is a torch dtype, read as NumPy's)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if type(data) is SymNumber:
        return _infer_dtype(data._t(0))
    if isinstance(data, _py_bool):
        return D.bool
    if isinstance(data, _py_int):  # (one past int64 fits a float or uint64 tensor: ``tensor``'s host array)
        return D.int64
    if isinstance(data, _py_float):
        return D.get_default_dtype()
    if isinstance(data, _py_complex):
        return D.get_default_dtype().to_complex()
    if isinstance(data, (list, tuple, builtins.range)) or other_sequence(data):
        if len(data) == 0:
            return D.get_default_dtype()
        dt = None
        for x in data:
            c = _infer_dtype(x)
            dt = c if dt is None else promote_types(dt, c)
            if dt is D.complex128:
                break
        return dt
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _check_nested(data, depth=0, cat=None, sizes=None) -> None:
    """PyTorch's ragged-sequence errors (CRE-09): the shape is read along the first elements (``compute_sizes``),
    and every sequence at a depth must have that depth's length (``[[[1, 2], [3, 4]], [[5], [6]]]``: "expected
    sequence of length 2 at dim 2 (got 1)"); a sequence where the first element was a number, or below the shape's
    depth: PyTorch's conversion error of it as a number of category ``cat`` (where given)."""
    if sizes is None:
        sizes, seq = [], data
        while isinstance(seq, (list, tuple)):
            sizes.append(len(seq))
            if not seq:
                break
            seq = seq[0]
    n = sizes[depth + 1] if depth + 1 < len(sizes) else None
    seen = False
    for i, x in enumerate(data):
        if isinstance(x, (list, tuple)):
            if not seen:
                if (i or n is None) and cat is not None:
                    tp = type(x).__name__
                    raise TypeError(f"must be real number, not {tp}" if cat >= D.FLOAT else
                                    f"'{tp}' object cannot be interpreted as an integer")
                seen = True
                if n is None:
                    n = len(x)
            if len(x) != n:
                raise ValueError(f"expected sequence of length {n} at dim {depth + 1} (got {len(x)})")
            _check_nested(x, depth + 1, cat, sizes)
        elif seen:
            raise TypeError("not a sequence")


COPY_CONSTRUCT_WARNING = ("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                          "or sourceTensor.detach().clone().requires_grad_(True), rather than {}(sourceTensor).")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False, _called="torch.tensor"):
    """``torch.tensor``: always copies; infers PyTorch's default dtypes (CRE-01..13). (``_called``: the call a
    tensor's copy-construct warning names: ``tensor.new_tensor`` for ``Tensor.new_tensor``.)"""
    if type(requires_grad) is not _py_bool:  # (its parser's bool, where the other factories' take None)
        _not_bool(_called.rsplit(".", 1)[-1], ("requires_grad",), (requires_grad,))
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT_WARNING.format(_called), UserWarning, stacklevel=_user_stacklevel())
        src = data.detach()
        dt = D.as_dtype(dtype) if dtype is not None else src.dtype
        dev = src.device if device is None else device
        t = src.to(dtype=dt, device=dev, copy=True)
        if requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(data, np.ndarray):
        _check_strides(data)
        src = D.from_numpy_dtype(data.dtype)
        dt = D.as_dtype(dtype) if dtype is not None else src
        discards_imag(src, dt)
        return _finish(_host_cast(np.array(data), src, dt), dt, device, requires_grad)
    if isinstance(data, np.generic):
        src = D.from_numpy_dtype(data.dtype)
        dt = D.as_dtype(dtype) if dtype is not None else src
        if dt is D.uint64:
            _uint64_leaves((data,))
        return _finish(_host_cast(np.asarray(data), src, dt), dt, device, requires_grad)
    if hasattr(data, "__dlpack__"):  # another library's array (real torch, JAX, CuPy ...): values and dtype, copied
        from ..utils.dlpack import import_foreign
        src = import_foreign(data)
        t = src.to(dtype=D.as_dtype(dtype) if dtype is not None else src.dtype, device=device)
        return t.requires_grad_(True) if requires_grad else t
    if type(data) is SymNumber or isinstance(data, (list, tuple)) and _is_compiling() and \
            any(type(x) is SymNumber for x in _flat_iter(data)):  # (SymNumbers exist only while compile traces)
        return _from_dynamic(data, dtype, device, requires_grad)
    if hasattr(data, "__array__") and not isinstance(data, (list, tuple, builtins.range)):
        return tensor(np.asarray(data), dtype=dtype, device=device, requires_grad=requires_grad)
    if isinstance(data, bytearray):  # (a sequence of ints to PyTorch: bytes are its error, "invalid data type")
        data = list(data)
    pure = _pure_nest(data) if type(data) in (list, tuple) else None
    cat = _infer_dtype(data) if pure is None else _scalars_dtype(pure[0])
    if isinstance(data, builtins.range):
        data = list(data)
    elif pure is None and (other_sequence(data) or isinstance(data, (list, tuple)) and any(map(other_sequence, data))):
        data = _as_lists(data)
    dt = D.as_dtype(dtype) if dtype is not None else cat
    if dtype is None and cat.is_complex and D.get_default_dtype() is D.bfloat16 and any(
            isinstance(x, _py_complex) for x in (_flat_iter(data) if isinstance(data, (list, tuple)) else (data,))):
        raise RuntimeError("invalid default scalar type for complex")  # (a Python complex: no complex bfloat16)
    if dt is D.uint64:
        _uint64_leaves(_flat_iter(data) if isinstance(data, (list, tuple)) else (data,))
    if cat.is_complex and dt.category in (D.INT, D.FLOAT) and any(
            isinstance(x, _py_complex) for x in (_flat_iter(data) if isinstance(data, (list, tuple)) else (data,))):
        # (Python's own conversion of a complex number, as torch's argument parser meets it)
        raise TypeError("'complex' object cannot be interpreted as an integer" if dt.category == D.INT else
                        "must be real number, not complex")
    if isinstance(data, (list, tuple)) and pure is None:
        shape = _empty_shape(data)
        if shape is not None:  # (PyTorch reads the shape along the first elements; with no elements, nothing more)
            return _finish(np.zeros(shape, dt.jnp), dt, device, requires_grad)
        if any(isinstance(x, (Tensor, np.ndarray)) for x in _flat_iter(data)):
            data = _unpack_nested(data, dt)
        _check_nested(data, 0, dt.category)
    hd = _host_dtype(cat)
    if cat.category == D.INT and dt.category > D.INT:  # (ints into a floating tensor: 2 ** 63 is a float there)
        hd = np.complex128 if dt.is_complex else np.float64
    elif cat.category == D.INT and dt is D.uint64:
        hd = np.uint64
    try:
        host = np.array(data, dtype=hd)
    except OverflowError:  # (a Python int past the host dtype)
        if dt.category > D.INT:
            raise  # (PyFloat_AsDouble's own "int too large to convert to float", as torch's)
        host = None
    if dt is D.bool and host is None:  # (a bool tensor stores each leaf's truth: any int is True)
        host = np.array(data, dtype=object).astype(np.bool_)
    elif dt.category == D.INT and cat.category > D.BOOL and (
            cat.is_complex or host is None or host.size and not _stores_as_is(host, dt) or
            pure is None and _has_np_bool(data)):
        host = _int_leaves(data, dt)  # Python numbers into an integer dtype: checked leaf by leaf, not wrapped
    return _finish(_host_cast(host, D.from_numpy_dtype(host.dtype), dt), dt, device, requires_grad)


_PY_SCALARS = frozenset((_py_float, _py_int, _py_bool, _py_complex))
_LIST_TUPLE = frozenset((list, tuple))


def _pure_nest(data) -> tuple | None:
    """(the set of leaf types, the shape) of ``data``, lists and tuples nested to a rectangular shape with no empty
    level and Python numbers of exactly float / int / bool / complex as leaves (``torch.tensor``'s common input: a
    batch of token ids, a list of floats); None for anything else, which ``tensor`` reads leaf by leaf with its
    general checks. A scan of the element types per level, in C (``set(map(type, ...))``): the general walk, a
    Python call per leaf, took 1.3 us a number (100k floats: 135 ms, torch 12)."""
    ts = set(map(type, data))
    if ts and ts <= _PY_SCALARS:
        return ts, (len(data),)
    if not ts or not ts <= _LIST_TUPLE:
        return None
    first = _pure_nest(data[0])
    if first is None:
        return None
    leaf, shape = set(first[0]), first[1]
    for x in islice(data, 1, None):
        r = _pure_nest(x)
        if r is None or r[1] != shape:
            return None
        leaf |= r[0]
    return leaf, (len(data),) + shape


def _scalars_dtype(types) -> D.dtype:
    """``_infer_dtype`` of Python numbers of these types: their promotion."""
    if _py_complex in types:
        return D.get_default_dtype().to_complex()
    if _py_float in types:
        return D.get_default_dtype()
    return D.int64 if _py_int in types else D.bool


def _empty_shape(data) -> tuple | None:
    """The shape of nested lists ``data`` as PyTorch's ``compute_sizes`` reads it (along the first elements) where
    it has no elements (``[[], [1]]``: (2, 0), which PyTorch makes with no further check of the other elements);
    else None."""
    sizes = []
    while isinstance(data, (list, tuple)):
        sizes.append(len(data))
        if not data:
            return tuple(sizes)
        data = data[0]
    return None


def _has_np_bool(data) -> bool:
    """Whether nested lists ``data`` hold a NumPy bool (which an integer tensor's store refuses: not an index)."""
    if not isinstance(data, (list, tuple)):
        return type(data) is np.bool_
    types = set(map(type, data))
    return np.bool_ in types or any(_has_np_bool(x) for x in data if isinstance(x, (list, tuple)))


def _uint64_leaves(leaves) -> None:
    """A uint64 tensor stores each Python leaf through PyLong_AsUnsignedLongLong, as PyTorch's ``tensor`` does: a
    Python int (bool included) and nothing else, not negative nor past 2^64 - 1 (NumPy scalars, floats and tensors
    raise)."""
    for x in leaves:
        if not isinstance(x, _py_int):
            raise TypeError("an integer is required")
        if x < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if x >> 64:
            raise OverflowError("int too big to convert")


def _stores_as_is(host, dt) -> bool:
    """Whether ``tensor``'s host array (int64 or float64) holds Python numbers that go into integer dtype ``dt``
    unchecked and exactly: all within its range, and floats within 2^53 (where an int leaf is still exact). Otherwise
    :func:`_int_leaves` reads the leaves themselves."""
    lo, hi = host.min().item(), host.max().item()
    ii = D.iinfo(dt)
    return ii.min <= lo and hi <= ii.max and (host.dtype.kind != "f" or -2.0 ** 53 < lo and hi < 2.0 ** 53)


def _int_leaves(data, dt):
    """PyTorch's ``tensor`` store of Python numbers into an integer dtype (its ``unpackIntegral``), leaf by leaf in
    order, so that the first bad leaf raises its error: a float is checked against the dtype's range in double (so
    ``2.0 ** 63`` passes into int64, where x86 makes it INT64_MIN) and truncated; any other leaf is unpacked as a C
    long long (``operator.index``: a NumPy float32 is its TypeError; past int64 "Overflow when unpacking long long")
    and checked, a negative one wrapping into an unsigned dtype. Ints stay exact (no float64 host array)."""
    ii = D.iinfo(dt)
    flo, fhi = _py_float(ii.min), _py_float(ii.max)

    def conv(x):
        if isinstance(x, (list, tuple)):
            return [conv(e) for e in x]
        if isinstance(x, _py_float):
            if not flo <= x <= fhi:
                raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
            return _py_int(x) if x < 9.223372036854775807e18 else -1 << 63
        v = operator.index(x)
        if not -(1 << 63) <= v < 1 << 63:
            raise ValueError("Overflow when unpacking long long")
        D.check_fits(v, dt, "none", dt.name)
        return v
    return np.array(conv(data), dtype=np.int64).astype(dt.jnp)


def _is_compiling() -> bool:
    from .._dynamo import is_compiling  # (imported here: the compile runner imports the ops)
    return is_compiling()


def _from_dynamic(data, dtype, device, requires_grad):
    """``torch.tensor(lr)`` of a compiled function's dynamic int/float argument, or of a list holding one: built in
    the program from the traced values (torch.compile's automatic dynamic float is such a graph input), with
    ``tensor``'s dtypes."""
    cat = _infer_dtype(data)
    dt = D.as_dtype(dtype) if dtype is not None else cat
    if isinstance(data, (list, tuple)):
        _check_nested(data)
    host = _host_dtype(cat)

    def build(x):
        if isinstance(x, (list, tuple)):
            return jnp.stack([build(e) for e in x]) if len(x) else jnp.zeros((0,), host)
        return jnp.asarray(x._v if type(x) is SymNumber else x, host)
    arr = build(data)
    if dt.category == D.INT and cat.category > D.BOOL:  # (an int that does not fit: checked as a constant is)
        for x in _flat_iter(data) if isinstance(data, (list, tuple)) else (data,):
            D.check_fits(x, dt, "none", dt.name)
    return _finish(D.cast_array(arr, D.from_numpy_dtype(np.dtype(host)), dt), dt, device, requires_grad)


def _host_dtype(cat):
    return {D.BOOL: np.bool_, D.INT: np.int64, D.FLOAT: np.float64, D.COMPLEX: np.complex128}[cat.category]


def _flat_iter(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat_iter(x)
        else:
            yield x


_SEQS = (list, tuple, builtins.range, np.ndarray)
_NDARRAY_LIST = ("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting the "
                 "list to a single numpy.ndarray with numpy.array() before converting to a tensor. (Triggered "
                 "internally at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:252.)")


def _unpack_nested(data, dt: D.dtype) -> list:
    """A nested sequence holding tensors or NumPy arrays as nested lists of Python scalars, as PyTorch's
    ``compute_sizes`` + ``recursive_store`` read it: the shape is read along the first elements, where a tensor is
    a scalar (converted with ``float()``/``operator.index()``/``complex()`` by ``dt``'s kind: one element only) and
    a NumPy array a sequence; deeper down, any tensor or array is iterated as a sequence."""
    sizes = []
    seq = data
    while isinstance(seq, _SEQS):  # (a 0-d array here: len()'s TypeError, as PyTorch's, before its warning)
        sizes.append(len(seq))
        if not sizes[-1]:
            break
        seq = seq[0]
    if any(isinstance(x, np.ndarray) for x in _flat_iter(data)):
        from .._warn import warn_once
        warn_once(_NDARRAY_LIST, _NDARRAY_LIST)
    cat = dt.category
    conv = (builtins.float if cat == D.FLOAT else builtins.complex if cat == D.COMPLEX else
            (lambda x: _py_bool(operator.index(x))) if cat == D.BOOL else operator.index)
    return _store_nested(data, tuple(sizes), 0, conv, cat)


def _store_nested(obj, sizes, dim, conv, cat):
    if dim == len(sizes):
        if isinstance(obj, (Tensor, np.ndarray)):
            return conv(obj)
        if isinstance(obj, _SEQS):
            tp = type(obj).__name__
            raise TypeError(f"must be real number, not {tp}" if cat >= D.FLOAT else
                            f"'{tp}' object cannot be interpreted as an integer")
        return obj
    rest = sizes[dim:]
    if isinstance(obj, np.ndarray) and obj.shape == rest:
        return obj.tolist()
    if isinstance(obj, Tensor) and obj._shape == rest and not obj._requires_grad and \
            (cat >= D.FLOAT or obj.dtype.category <= D.INT):
        return obj.tolist()  # (otherwise each element converts: a float element to an int, PyTorch's TypeError)
    if isinstance(obj, (Tensor, np.ndarray)):
        if not obj.ndim:
            raise TypeError("not a sequence")
        obj = list(obj)
    elif not isinstance(obj, (list, tuple, builtins.range)):
        raise TypeError("not a sequence")
    if len(obj) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
    return [_store_nested(x, sizes, dim + 1, conv, cat) for x in obj]


def as_tensor(data, dtype=None, device=None):
    """``torch.as_tensor``: returns ``data`` itself when it already is a tensor of that dtype/device."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype is not None or device is not None) else data
    if isinstance(data, np.ndarray):
        if data.dtype.kind not in "biufc":
            return tensor(data, dtype=dtype, device=device)
        src = D.from_numpy_dtype(data.dtype)
        if dtype is None or D.as_dtype(dtype) is src:  # (on the default device when none is given, unlike from_numpy)
            return from_numpy(data).to(device=_dev.canonical(device))
        _check_strides(data)  # (a copy either way: cast on the host, no program to compile per shape)
        discards_imag(src, D.as_dtype(dtype))
        return _finish(_host_cast(data, src, D.as_dtype(dtype)), D.as_dtype(dtype), device, False)
    return tensor(data, dtype=dtype, device=device)


_ASARRAY_RG = ("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of False. Pass "
               "requires_grad=False explicitly to get the old behavior and silence this warning.")
_NOT_BUFFERS = (list, tuple, builtins.range, _py_int, _py_float, _py_bool, _py_complex, type(None))


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """``torch.asarray``, as PyTorch's ``asarray`` (tensor_new.cpp): a tensor ``obj`` is returned itself unless
    ``dtype``/``device`` differ (then converted, or with ``copy=False`` a ValueError) or ``copy=True`` (a clone);
    ``requires_grad=None`` keeps ``obj``'s (a UserWarning, once, where that is True) and a given one is set on the
    result (on ``obj`` itself where it is returned); a non-leaf that must not require grad is detached. A NumPy
    array is read as ``from_numpy`` (a copy taken now here: JAX arrays are immutable), then treated as a tensor;
    an object with the buffer protocol (bytes, bytearray, array.array, a JAX array...) is ``frombuffer`` in
    ``dtype`` (the default float dtype when none); anything else is read as ``tensor`` reads it. A default device
    other than the CPU (``set_default_device``) is the ``device`` when none is given, as PyTorch's device mode."""
    for name, v in (("copy", copy), ("requires_grad", requires_grad)):
        if v is not None and not isinstance(v, _py_bool):  # (PyTorch's argument parser)
            raise TypeError(f"asarray(): argument '{name}' must be bool, not {_tname(v)}")
    if dtype is not None and not isinstance(dtype, D.dtype):
        raise TypeError(f"asarray(): argument 'dtype' must be torch.dtype, not {_tname(dtype)}")
    dt = dtype
    if device is None and _dev._default[0].type != "cpu":  # (set_default_device's mode passes it to asarray)
        device = _dev._default[0]
    t = obj if isinstance(obj, Tensor) else None
    rg = (t is not None and t.requires_grad) if requires_grad is None else _py_bool(requires_grad)
    if rg and requires_grad is None:
        from .._warn import warn_once
        warn_once(_ASARRAY_RG, _ASARRAY_RG)
    if t is None:
        if isinstance(obj, (np.ndarray, np.generic)):
            t, dt, copy = _asarray_numpy(obj, dt, device, copy)
        elif type(obj).__name__ == "PyCapsule":  # (a bare DLPack capsule: from_dlpack's refusal, see its note)
            from ..utils.dlpack import from_dlpack
            t = from_dlpack(obj)
        elif not isinstance(obj, _NOT_BUFFERS) and _has_buffer(obj):
            t = frombuffer(obj, dtype=D.get_default_dtype() if dt is None else dt)
        else:
            if copy is False:
                raise ValueError("can't alias arbitrary sequence into a tensor.")
            return tensor(obj, dtype=dt, device=device, requires_grad=rg)
    dev = None if device is None else _dev.canonical(device)
    wrong_dev = dev is not None and dev != t.device
    wrong_dt = dt is not None and dt is not t.dtype
    if copy or (copy is None and (wrong_dev or wrong_dt)):
        t = t.to(device=dev, dtype=dt, copy=_py_bool(copy)) if wrong_dev or wrong_dt else t.clone()
    elif wrong_dev:
        raise ValueError(f"can't alias tensor from device '{t.device}' to '{dev}'.")
    elif wrong_dt:
        raise ValueError(f"can't alias tensor with dtype '{t.dtype.short}' into dtype '{dt.short}'.")
    if t.grad_fn is not None and not rg:
        return t.detach()
    if rg != t.requires_grad:
        t._set_requires_grad(rg, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def _asarray_numpy(a, dt, device, copy):
    """``asarray``'s tensor of a NumPy array or scalar (PyTorch's ``tensor_from_numpy``, its checks and its
    read-only warning where the result would alias ``a``), with the ``dtype``/``copy`` still to apply: a dtype
    change is cast on the host here (one copy, no program to compile per shape)."""
    if not isinstance(a, np.ndarray):
        if copy is False:
            raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. ")
        a, copy = np.asarray(a), None  # (PyTorch clones a scalar's tensor and copies no more)
    _check_strides(a)
    src = D.from_numpy_dtype(a.dtype)
    if dt is not None and dt is not src and copy is not False:
        from .._tensor.tensor import tensor_from_numpy
        discards_imag(src, dt)
        return tensor_from_numpy(_host_cast(a, src, dt), dt, "cpu"), None, None
    if a.flags.writeable or not copy and (dt is None or dt is src) and (
            device is None or _dev.canonical(device) == _dev.canonical("cpu")):
        return from_numpy(a), dt, copy  # (aliasing: a read-only array warns, as PyTorch's)
    with warnings.catch_warnings():  # (a copy: no read-only warning)
        warnings.simplefilter("ignore", UserWarning)
        return from_numpy(a), dt, copy


def _has_buffer(obj) -> bool:
    """Whether ``obj`` has Python's buffer protocol (``PyObject_CheckBuffer``)."""
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def from_numpy(ndarray):
    """``torch.from_numpy``: keeps the NumPy dtype. JAX arrays are immutable, so this is a copy taken
    now: later writes to ``ndarray`` are not seen by the tensor (see README, "NumPy bridge")."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {_tname(ndarray)})")
    _check_strides(ndarray)
    dt = D.from_numpy_dtype(ndarray.dtype)
    from .._tensor.tensor import tensor_from_numpy
    if not ndarray.flags.writeable and _jax_backed(ndarray):
        # ``tensor.numpy()`` is read-only only because JAX arrays are immutable (PyTorch's is writable, so
        # ``from_numpy(t.numpy())`` does not warn there): no "not writable" warning for it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return tensor_from_numpy(ndarray, dt, "cpu")
    return tensor_from_numpy(ndarray, dt, "cpu")  # (on the CPU whatever the default device, as PyTorch's)


def _jax_backed(a) -> bool:
    """Whether the numpy array ``a`` is a view of a JAX array's buffer (what ``Tensor.numpy()`` returns)."""
    for _ in builtins.range(8):  # (``range`` here is torch.range)
        if isinstance(a, jax.Array):
            return True
        a = a.obj if isinstance(a, memoryview) else getattr(a, "base", None)
        if a is None:
            return False
    return False


def _check_strides(ndarray):
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative strides "
                         "are not currently supported. (You can probably work around this by making a copy of your "
                         "array  with array.copy().) ")


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """``torch.frombuffer``: ``count`` elements of ``dtype`` from ``buffer`` (anything with the buffer protocol:
    bytes, bytearray, array.array, mmap...) after ``offset`` bytes, with PyTorch's checks and messages. Like
    ``from_numpy`` it is a copy taken now, where PyTorch's tensor shares the buffer's memory."""
    dt = D.as_dtype(dtype)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    size = np.dtype(dt.np).itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count <= 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({length} bytes)")
    host = np.frombuffer(view.cast("B"), dtype=dt.np, count=count, offset=offset).copy()
    from .._tensor.tensor import tensor_from_numpy
    t = tensor_from_numpy(host, dt, "cpu")  # (on the CPU whatever the default device, as PyTorch's)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---- filled tensors ----------------------------------------------------------------------------------
def _dt(dtype, default=None):
    return D.as_dtype(dtype) if dtype is not None else (default or D.get_default_dtype())


def _fill(shape, value, dt, device, requires_grad):
    if type(value) is SymNumber or value != 0 and value != 1:
        D.check_fill(value, dt, math.prod(shape))
    dev = _dev.canonical(device)
    _check_requires_grad(dt, requires_grad)
    jdev = _dev.to_jax(dev)
    from .._dynamo import is_compiling  # (imported here: the compile runner imports the ops)
    if jdev is None:
        arr = meta_array(shape, dt.jnp)
    elif math.prod(shape) <= _HOST_FILL and not is_compiling():
        v = np.asarray(value)
        arr = jax.device_put(np.full(tuple(shape), _host_cast(v, D.from_numpy_dtype(v.dtype), dt)), jdev)
    else:  # (a compiled function's dynamic number: its traced value)
        arr = _full_jit(tuple(shape), dt, jdev)(value._v if type(value) is SymNumber else value)
    t = Tensor._from_array(arr, dt, dev)
    t._requires_grad = _py_bool(requires_grad)
    return t


# Up to this many elements a filled tensor (zeros, ones, full) is filled on the host and transferred: no XLA program
# to compile for each new shape (20-40 ms each on CPU), where the transfer costs microseconds. Larger ones are filled
# on their device by a program compiled per shape (no host buffer, no transfer of the whole tensor), and so is every
# fill inside a compiled function's trace (a host array there would be a constant baked into the program).
_HOST_FILL = 1 << 16

_FULL: dict = {}


def _full_jit(shape, dt, jdev):
    key = (shape, dt, jdev)
    f = _FULL.get(key)
    if f is None:
        def make(v):
            v = jnp.asarray(v)
            return jnp.broadcast_to(D.cast_array(v, D.from_numpy_dtype(v.dtype), dt), shape)
        f = jax.jit(make, out_shardings=jax.sharding.SingleDeviceSharding(jdev))
        if len(_FULL) > 512:
            _FULL.clear()
        _FULL[key] = f
    return f


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    shape = _size("zeros", _size_kw("zeros", size, kw))
    dtype, device = _out_args("zeros", out, dtype, device)
    return _into("zeros", out, lambda rg: _fill(shape, 0, _dt(dtype), device, rg), requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    shape = _size("ones", _size_kw("ones", size, kw))
    dtype, device = _out_args("ones", out, dtype, device)
    return _into("ones", out, lambda rg: _fill(shape, 1, _dt(dtype), device, rg), requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw):
    """Uninitialised in PyTorch; zeros here (JAX has no uninitialised memory), or PyTorch's fill under
    ``use_deterministic_algorithms(True)`` (NaN, the largest integer: ``_config.empty_fill_value``)."""
    shape = _size("empty", _size_kw("empty", size, kw))
    dtype, device = _out_args("empty", out, dtype, device)
    dt = _dt(dtype)
    r = _into("empty", out, lambda rg: _fill(shape, empty_fill_value(dt), dt, device, rg), requires_grad)
    if memory_format is None or out is not None:
        return r
    from .._tensor.tensor import preserve_format
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    from .movement import lay_out
    return lay_out(r, r, memory_format)  # (a channels-last format: the strides of its memory order)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """The fill value decides the dtype when none is given (CRE-18)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {_type_name(size)}")
    if not _is_number_arg(fill_value) or isinstance(fill_value, Tensor) and fill_value._requires_grad:
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {_tname(fill_value)}")
    if isinstance(fill_value, Tensor):  # (a 0-d tensor that does not require grad: its value)
        fill_value = fill_value.item()
    elif isinstance(fill_value, _py_int) and not -(1 << 63) <= fill_value < 1 << 64:  # (the parser's int64/uint64)
        raise OverflowError("can't convert negative int to unsigned" if fill_value < 0 else "int too big to convert")
    from .._promotion import scalar_dtype
    dtype, device = _out_args("full", out, dtype, device)
    dt = D.as_dtype(dtype) if dtype is not None else scalar_dtype(fill_value)
    shape = _size("full", (size,))
    return _into("full", out, lambda rg: _fill(shape, fill_value, dt, device, rg), requires_grad)


def _like(name, input, dtype, device):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}")
    return (D.as_dtype(dtype) if dtype is not None else input.dtype,
            input.device if device is None else device)


def _laid(r, input, memory_format):
    """A ``*_like`` result laid out as ``clone`` lays out its copy: ``preserve_format`` (the default) keeps a dense
    input's strides (``zeros_like(x.t()).stride()`` is ``x.t()``'s), else per ``memory_format``."""
    if memory_format is None and input._strides is None:
        return r
    from .movement import lay_out
    from .._tensor.tensor import preserve_format
    return lay_out(r, input, preserve_format if memory_format is None else memory_format)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like("zeros_like", input, dtype, device)
    return _laid(_fill(input._shape, 0, dt, dev, requires_grad), input, memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like("ones_like", input, dtype, device)
    return _laid(_fill(input._shape, 1, dt, dev, requires_grad), input, memory_format)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like("empty_like", input, dtype, device)
    return _laid(_fill(input._shape, empty_fill_value(dt), dt, dev, requires_grad), input, memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like("full_like", input, dtype, device)
    return _laid(_fill(input._shape, fill_value, dt, dev, requires_grad), input, memory_format)


# ---- ranges ------------------------------------------------------------------------------------------
_SIGS["arange"] = [f"Number end, *, {_KW}", f"Number start, Number end, *, {_KW.replace('Tensor out = None, ', '')}",
                   f"Number start, Number end, Number step = 1, *, {_KW}"]


def _is_number_arg(x) -> bool:
    """What torch's argument parser takes as a ``Number``: a Python or NumPy number, or a 0-d tensor."""
    return isinstance(x, (numbers.Number, np.bool_, SymNumber)) or isinstance(x, Tensor) and not x._shape


def _number_vals(vals) -> list:
    return [v.item() if isinstance(v, Tensor) else v for v in vals]


def _to_double(v) -> float:
    """c10's checked ``Scalar::to<double>``: a complex number must have no imaginary part."""
    if isinstance(v, (_py_complex, np.complexfloating)):
        if v.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        v = v.real
    return _py_float(v)


def _range_acc(v, dt):
    """c10's checked ``Scalar::to<accscalar_t>`` of a range bound: int64 for an integer dtype (a float truncates
    toward zero), float for float16/bfloat16, double otherwise."""
    if dt.category <= D.INT:
        if isinstance(v, (_py_complex, np.complexfloating)):
            if v.imag != 0:
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
            v = v.real
        if not isinstance(v, (_py_float, np.floating)):
            v = _py_int(v)
        if not -9.223372036854775808e18 <= v < 9.223372036854775808e18:  # (NaN fails too)
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return _py_int(v)
    v = _to_double(v)
    if dt.itemsize <= 2 and math.isfinite(v) and abs(v) > 3.4028234663852886e38:
        raise RuntimeError("value cannot be converted to type float without overflow")
    return v


def _range_checks(ds, de, dst) -> None:
    """PyTorch's checks of a range's start, end and step, in double (``arange_check_bounds``), in its order."""
    if not (dst > 0 or dst < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(ds) and math.isfinite(de)):
        raise RuntimeError(f"unsupported range: {ds:g} -> {de:g}")
    if not (dst > 0 and de >= ds or dst < 0 and de <= ds):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange(start=_NOT_GIVEN, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """``arange(5)`` int64, ``arange(0, 1, 0.25)`` float32 (CRE-20..23). As PyTorch's kernel: the bounds checked
    in double, then converted to the dtype's accumulate type (integers: int64, a float truncated); an int64 range's
    length comes from the converted bounds, any other's from the doubles."""
    if end is None:
        if start is _NOT_GIVEN or not _is_number_arg(start):
            got = None if start is _NOT_GIVEN else start
            raise TypeError(f"arange(): argument 'end' (position 1) must be Number, not {_tname(got)}")
        start, end = 0, start
    elif start is _NOT_GIVEN:  # (``arange(end=...)``)
        if not _is_number_arg(end):
            raise TypeError(f"arange(): argument 'end' must be Number, not {_tname(end)}")
        start = 0
    elif not (_is_number_arg(start) and _is_number_arg(end) and _is_number_arg(step)):
        args = (start, end) if isinstance(step, _py_int) and step == 1 else (start, end, step)
        raise _invalid_args("arange", args, _passed(out=out, dtype=dtype, layout=layout, device=device,
                                                    requires_grad=requires_grad))
    vals = _number_vals((start, end, step))
    is_float = any(isinstance(v, (_py_float, np.floating, _py_complex, np.complexfloating)) for v in vals)
    dtype, device = _out_args("arange", out, dtype, device)
    dt = D.as_dtype(dtype) if dtype is not None else (D.get_default_dtype() if is_float else D.int64)
    _range_kernel(dt, "arange_cpu")  # (the dtype's kernel first, then its checks of the step)
    ds, de, dst = (_to_double(v) for v in vals)
    _range_checks(ds, de, dst)
    q = math.ceil((de - ds) / dst) if math.isfinite((de - ds) / dst) else -1
    if not 0 <= q <= 9223372036854775807:
        raise RuntimeError("invalid size, possible overflow?")
    xs, xe, xst = (_range_acc(v, dt) for v in vals)
    if dt is D.int64:
        if xst == 0:
            raise ValueError("step must be nonzero")
        sgn = (xst > 0) - (xst < 0)
        n = max(0, _trunc_div(xe - xs + xst - sgn, xst))
    else:
        n = q
    if dt.category == D.INT:
        host = xs + np.arange(n, dtype=np.int64) * np.int64(xst)
    else:
        host = xs + np.arange(n, dtype=np.float64) * xst
    if out is not None and out.numel() not in (0, n):
        warnings.warn(f"The number of elements in the out tensor of shape {list(out._shape)} is {out.numel()} which "
                      f"does not match the computed number of elements {n}. Note that this may occur as a result of "
                      f"rounding error. The out tensor will be resized to a tensor of shape ({n},). (Triggered "
                      "internally at "
                      "/__w/pytorch/pytorch/aten/src/ATen/native/RangeFactories.cpp:199.)", UserWarning,
                      stacklevel=2)
    return _into("arange", out, lambda rg: _finish(_host_cast(host, D.from_numpy_dtype(host.dtype), dt), dt, device,
                                                   rg), requires_grad)


def _range_kernel(dt, kernel, complex_ok=False):
    """PyTorch's CPU range kernels (arange, range, linspace) cover the integers up to int64 but bool and uint16..64,
    and the floats but float8; linspace's (``complex_ok``) the complex types too."""
    if dt is D.bool or dt in D.UNSIGNED_WIDE or dt in D.FLOAT8 or dt.is_complex and not complex_ok:
        raise no_kernel(kernel, dt)


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def range(start=_NOT_GIVEN, end=_NOT_GIVEN, step=1, *, out=None, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """``torch.range`` (deprecated): ``[start, end]`` inclusive; as PyTorch's kernel, start, end and step are
    converted to the dtype's accumulate type first (an integer dtype truncates them to int64)."""
    for i, (name, v) in enumerate((("start", start), ("end", end), ("step", step))):
        if v is not _NOT_GIVEN and not _is_number_arg(v):
            raise TypeError(f"range(): argument '{name}' (position {i + 1}) must be Number, not {_tname(v)}")
    if start is _NOT_GIVEN or end is _NOT_GIVEN:
        missing = [n for n, v in (("start", start), ("end", end)) if v is _NOT_GIVEN]
        raise TypeError(f"range() missing {len(missing)} required positional arguments: "
                        + ", ".join(f'"{n}"' for n in missing))
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=user_stacklevel())
    dtype, device = _out_args("range", out, dtype, device)
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    _range_kernel(dt, "range_cpu")
    vals = _number_vals((start, end, step))
    xs, xe, xst = (_range_acc(v, dt) for v in vals)  # (converted first, then checked in double)
    _range_checks(*(_to_double(v) for v in vals))
    if dt.category == D.INT:
        if xst == 0:  # (PyTorch divides by it: SIGFPE; its step check's error instead)
            raise RuntimeError("step must be nonzero")
        host = xs + np.arange(_trunc_div(xe - xs, xst) + 1, dtype=np.int64) * np.int64(xst)
    else:
        host = xs + np.arange(_py_int((xe - xs) / xst + 1), dtype=np.float64) * xst
    return _into("range", out, lambda rg: _finish(_host_cast(host, D.from_numpy_dtype(host.dtype), dt), dt, device,
                                                  rg), requires_grad)


def _steps(name, start, end, steps, base, kw):
    if steps is None or isinstance(steps, _py_bool) or not _is_int(steps):
        args = (start, end) if steps is None else (start, end, steps)
        raise _invalid_args(name, args, _passed(base=base, **kw))
    ts = [(w, v) for w, v in (("start", start), ("end", end)) if isinstance(v, Tensor)]
    if any(v.dim() for _, v in ts):  # (torch's Tensor overloads name each tensor argument, before the steps check)
        got = " and ".join(f"{w} with {v.dim()} dimension(s)" for w, v in ts)
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {got}.")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _py_int(steps)


def linspace(start, end, steps=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` is required (CRE-26); the result is the default float dtype (CRE-25)."""
    steps = _steps("linspace", start, end, steps, 10.0,
                   dict(out=out, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad))
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    dtype, device = _out_args("linspace", out, dtype, device)
    dt, src = _space_dtype("linspace", start, end, dtype)
    if steps == 1:  # PyTorch fills start (its checked fill_), with no kernel
        return _into("linspace", out, lambda rg: _fill((1,), start, dt, device, rg), requires_grad)
    if steps > 1:  # the kernel converts start and end to the dtype first (checked: Scalar::to)
        _range_kernel(dt, "linspace_cpu", complex_ok=True)
        D.check_fits(start, dt)
        D.check_fits(end, dt)
    if dt.category <= D.INT:
        host, src = _linspace_int(start, end, steps, dt), dt
    elif dt.is_complex:
        # PyTorch's CPU kernel: the first half counts up from start, the second half down from end
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        host = np.where(i < half, start + step * i, end - step * (steps - 1 - i)).astype(src.jnp)
    else:
        host, src = _linspace_real(start, end, steps, dt), dt
    return _into("linspace", out, lambda rg: _finish(_host_cast(host, src, dt), dt, device, rg), requires_grad)


def _fma64(a, b, c):
    """``a * b + c`` rounded once (float64 arrays): the product split exactly (Dekker's two-product, Veltkamp's
    split) and summed exactly with ``c`` (two-sum) before the one rounding; NumPy has no fma."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        t = 134217729.0 * a
        ah = t - (t - a)
        t = 134217729.0 * b
        bh = t - (t - b)
        al, bl = a - ah, b - bh
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        v = s - p
        r = s + (((p - (s - v)) + (c - v)) + err)
    return np.where(np.isfinite(r), r, p + c)  # (magnitudes near the float64 limit: the plain sum)


def _linspace_real(start, end, steps: int, dt):
    """PyTorch's CPU linspace of a floating dtype, bit for bit: ``step = (end - start) / (steps - 1)`` in the
    dtype, then ``start + step * i`` for the first half and ``end - step * (steps - 1 - i)`` for the rest, one
    fused multiply-add each (its compiled kernel contracts them); float16 / bfloat16 arithmetic rounds after
    every operation, its integer operands too (c10's Half / BFloat16 operators convert an int64 to the type, compute
    in float32, then round)."""
    t = dt.jnp
    if steps == 1:  # (PyTorch fills start)
        return np.full(1, start, dtype=t)
    i = np.arange(steps, dtype=np.float64)
    up = i < steps // 2
    k = np.where(up, i, steps - 1 - i)
    if dt.itemsize == 8:
        s, e = np.float64(start), np.float64(end)
        step = (e - s) / (steps - 1)
        return np.where(up, _fma64(np.full(steps, step), k, np.full(steps, s)),
                        _fma64(np.full(steps, -step), k, np.full(steps, e)))
    f = np.float32
    s, e = f(t.type(start)), f(t.type(end))
    if dt.itemsize == 4:  # (a float32 product is exact in float64: one rounding to float32 after the sum)
        step = f((e - s) / f(steps - 1))
        return np.where(up, np.float64(step) * k + np.float64(s), np.float64(-step) * k + np.float64(e)).astype(f)
    step = f(t.type(f(t.type(e - s)) / f(t.type(steps - 1))))
    prod = (np.float32(step) * k.astype(t).astype(f)).astype(t).astype(f)  # (c10: Half * int64 rounds the int too)
    return np.where(up, s + prod, e - prod).astype(t)


def _linspace_int(start, end, steps: int, dt):
    """PyTorch's CPU linspace of an integer dtype (start and end checked by the caller): both converted to the dtype
    first (a float truncates, a negative int wraps into an unsigned type: ``-5`` to uint8 is 251), then ``step =
    (end - start) / (steps - 1)`` in double and ``start + step * i`` for the first half, ``end - step * (steps - 1 -
    i)`` for the rest (one fused multiply-add each), truncated to the dtype."""
    if steps == 0:
        return np.empty(0, dt.jnp)
    s, e = (np.float64(_host_cast(np.asarray(v), D.from_numpy_dtype(np.asarray(v).dtype), dt)) for v in (start, end))
    step = (e - s) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    up = i < steps // 2
    k = np.where(up, i, steps - 1 - i)
    return _host_cast(np.where(up, _fma64(np.full(steps, step), k, np.full(steps, s)),
                               _fma64(np.full(steps, -step), k, np.full(steps, e))), D.float64, dt)


def _space_dtype(name, start, end, dtype):
    """(result dtype, host dtype) of linspace / logspace: complex endpoints infer the default dtype's complex
    counterpart (a real ``dtype`` given is torch's error), else ``dtype`` or the default."""
    cplx = isinstance(start, complex) or isinstance(end, complex)
    dt = D.as_dtype(dtype) if dtype is not None else (D.get_default_dtype().to_complex() if cplx else
                                                      D.get_default_dtype())
    if cplx and not dt.is_complex:
        inferred = "double" if D.get_default_dtype() is D.float64 else "float"
        raise RuntimeError(f"torch.{name}(): inferred dtype c10::complex<{inferred}> can't be safely cast to passed "
                           f"dtype {dt.short}")
    return dt, (D.complex128 if dt.is_complex else D.float64)


def logspace(start, end, steps=None, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``; ``steps`` is required."""
    steps = _steps("logspace", start, end, steps, base,
                   dict(out=out, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad))
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    dtype, device = _out_args("logspace", out, dtype, device)
    dt, src = _space_dtype("logspace", start, end, dtype)
    _no_float8(dt, "logspace_cpu")
    with np.errstate(all="ignore"):  # (a negative base's NaNs, an overflow's inf: silent, as PyTorch's)
        host = np.power(base, np.linspace(start, end, steps, dtype=src.jnp))
    return _into("logspace", out, lambda rg: _finish(_host_cast(host, src, dt), dt, device, rg), requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Identity matrix ``n x m`` (CRE-27/28)."""
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dtype, device = _out_args("eye", out, dtype, device)
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    host = np.eye(n, n if m is None else m, dtype=np.float64)
    return _into("eye", out, lambda rg: _finish(_host_cast(host, D.float64, dt), dt, device, rg), requires_grad)


# ---- random --------------------------------------------------------------------------------------------
def _gen(generator):
    return generator if generator is not None else _rng.default_generator


_RAND: dict = {}
_RAND_FLAT: dict = {}
_TAKE: dict = {}
# Draws of up to this many values run a flat program of a bucketed size (_rand_size) and take their prefix: a
# random program costs 5-10x a plain one to compile on CPU (threefry's unrolled rounds), and a model's layers,
# a test's inputs, each new shape compiled its own. JAX's threefry is partitionable (the default since 0.5): a
# value depends on the key and its flat index only, so the prefix of a longer draw IS the shorter draw, bit for
# bit (tests/unit/test_random_draws.py; one float32 normal value alone is one ulp off: XLA compiles a
# one-element program differently). Larger draws compile their exact shape (no wasted work).
_RAND_BUCKET_MAX = 1 << 20


def _rand_size(n: int) -> int:
    """The flat size a draw of ``n`` values runs at: the next 2**k or 3 * 2**(k - 1), at least 64 (fewer than half
    again as many values as asked for)."""
    if n <= 64:
        return 64
    p = 1 << (n - 1).bit_length()
    return 3 * p // 4 if 3 * p // 4 >= n else p


def _draw(kind, shape, dt):
    """``draw(key, a, b)``: ``shape`` values of ``kind`` (uniform on [a, b), normal N(a, b^2), randint [a, b))
    in ``dt``, traceable."""
    def draw(k, a, b):
        if dt.is_complex and kind in ("uniform", "normal"):
            # PyTorch: real and imaginary parts drawn independently, each U(a, b) / N(a, b^2 / 2)
            part = dt.to_real()
            if kind == "normal":
                b = b * 0.7071067811865476
            x = _draw(kind, shape + (2,), part)(k, a, b)
            return jax.lax.complex(x[..., 0], x[..., 1]).astype(dt.jnp)
        if kind == "uniform":
            # sampled in the target dtype so that rounding never produces 1.0 (rand is [0, 1))
            x = jax.random.uniform(k, shape, dt.jnp, 0.0, 1.0)
            return a.astype(dt.jnp) + (b - a).astype(dt.jnp) * x
        if kind == "normal":
            x = jax.random.normal(k, shape, jnp.float64 if dt is D.float64 else jnp.float32)
            return D.cast_array(a + b * x, D.float64 if dt is D.float64 else D.float32, dt)
        if kind == "randint":
            x = jax.random.randint(k, shape, a, b, jnp.int64)
            return D.cast_array(x, D.int64, dt)
        raise ValueError(kind)
    return draw


def _rand_jit(kind, shape, dt, jdev):
    """The jitted ``draw(key, a, b)`` of ``shape`` values on jax device ``jdev`` (see ``_RAND_BUCKET_MAX``)."""
    key = (kind, shape, dt, jdev)
    f = _RAND.get(key)
    if f is None:
        placed = jax.sharding.SingleDeviceSharding(jdev)
        n = math.prod(shape)
        if n > _RAND_BUCKET_MAX or not jax.config.jax_threefry_partitionable:
            f = jax.jit(_draw(kind, shape, dt), out_shardings=placed)
        else:
            m = _rand_size(n)
            fkey = (kind, m, dt, jdev)
            flat = _RAND_FLAT.get(fkey)
            if flat is None:
                flat = _RAND_FLAT[fkey] = jax.jit(_draw(kind, (m,), dt), out_shardings=placed)
            tkey = (m, shape, dt, jdev)
            take = _TAKE.get(tkey)
            if take is None:
                if len(_TAKE) > 1024:
                    _TAKE.clear()
                take = _TAKE[tkey] = jax.jit(lambda x: x[:n].reshape(shape), out_shardings=placed)

            def f(k, a, b):
                return take(flat(k, a, b))
        if len(_RAND) > 1024:
            _RAND.clear()
        _RAND[key] = f
    return f


def _random(kind, shape, a, b, dt, device, requires_grad, generator):
    dev = _dev.canonical(device)
    _check_requires_grad(dt, requires_grad)
    jdev = _dev.to_jax(dev)
    if jdev is None:  # meta: shape only, no draw
        return _finish_meta(shape, dt, dev, requires_grad)
    k = _gen(generator).next_key()
    arr = _rand_jit(kind, tuple(shape), dt, jdev)(k, a, b)
    t = Tensor._from_array(arr, dt, dev)
    t._requires_grad = _py_bool(requires_grad)
    return t


def _no_float8(dt, kernel):
    """PyTorch has no CPU float8 kernel for ranges and integer sampling."""
    if dt in D.FLOAT8:
        raise no_kernel(kernel, dt)


def _check_float_sampling(dt, kernel):
    """rand/randn/uniform_/normal_ sample floating and complex dtypes (not float8)."""
    if dt is D.complex32:
        D.cast_array(None, D.complex64, dt)  # the facade's complex32 error
    if not (dt.is_floating_point or dt.is_complex) or dt in D.FLOAT8:
        raise no_kernel(kernel, dt)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kw):
    """Uniform [0, 1) (CRE-30; integer dtypes raise, CRE-32)."""
    size = _size_kw("rand", size, kw)
    if not size and not _passed(generator=generator, out=out, dtype=dtype, layout=layout, device=device,
                                requires_grad=requires_grad, pin_memory=pin_memory):
        raise _invalid_args("rand", (), {})
    _check_generator("rand", size, generator, out=out, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad, pin_memory=pin_memory)
    dtype, device = _out_args("rand", out, dtype, device)
    dt = _dt(dtype)
    _check_float_sampling(dt, "check_uniform_bounds")
    shape = _size("rand", size)
    return _into("rand", out, lambda rg: _random("uniform", shape, 0.0, 1.0, dt, device, rg, generator), requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kw):
    """Standard normal samples (CRE-31)."""
    size = _size_kw("randn", size, kw)
    if not size and not _passed(generator=generator, out=out, dtype=dtype, layout=layout, device=device,
                                requires_grad=requires_grad, pin_memory=pin_memory):
        raise _invalid_args("randn", (), {})
    _check_generator("randn", size, generator, out=out, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad, pin_memory=pin_memory)
    dtype, device = _out_args("randn", out, dtype, device)
    dt = _dt(dtype)
    _check_float_sampling(dt, "normal_kernel_cpu")
    shape = _size("randn", size)
    return _into("randn", out, lambda rg: _random("normal", shape, 0.0, 1.0, dt, device, rg, generator), requires_grad)


def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    """``randint(high, size)`` or ``randint(low, high, size)`` (also as keywords); size must be a tuple
    (CRE-33/34)."""
    given = dict(low=low, high=high, size=size)
    a = list(args)
    if size is None and a and isinstance(a[-1], (tuple, list)):
        size = a.pop()
    if high is None and a:
        high = a.pop()
    if low is None:
        low = a.pop() if a else 0
    if a or high is None or size is None:
        if len(args) == 2 and size is None and high is not None:
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {_tname(args[1])}")
        raise _invalid_args("randint", args, _passed(**given, generator=generator, out=out, dtype=dtype,
                                                     layout=layout, device=device, requires_grad=requires_grad))
    for v in (high, low):
        if not _is_int(v) or isinstance(v, (_py_bool, np.bool_)):  # (the parser's int: not a float, bool or float
            if len(args) == 2 and given["high"] is None and given["low"] is None:  # tensor)
                raise TypeError(f"randint(): argument 'high' (position 1) must be int, not {_tname(high)}")
            if not args and given["low"] is None:
                raise TypeError(f"randint(): argument 'high' must be int, not {_tname(high)}")
            raise _invalid_args("randint", args, _passed(**given, generator=generator, out=out, dtype=dtype,
                                                         layout=layout, device=device, requires_grad=requires_grad))
    _check_generator("randint", args, generator, **given, out=out, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad)
    dtype, device = _out_args("randint", out, dtype, device)
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    low, high = random_bounds(int(low), int(high), dt)
    shape = _size("randint", (size,))
    return _into("randint", out, lambda rg: _random("randint", shape, low, high, dt, device, rg, generator),
                 requires_grad)


_I64 = 1 << 63
_DIGITS = {D.float16: 11, D.bfloat16: 8, D.float32: 24, D.float64: 53}  # (std::numeric_limits<T>::digits)
_OOB_WARN = ("{} is out of bounds [-(2^{d}), 2^{d}]. Due to precision limitations {} can support discrete uniform "
             "distribution only within this range. This warning will become an error in version 1.7 release, please "
             "fix the code in advance (Triggered internally at "
             "/__w/pytorch/pytorch/aten/src/ATen/native/DistributionTemplates.h:{}.)")


def _as_float_int64(v: int, dt) -> int:
    """``static_cast<int64_t>(static_cast<scalar_t>(v))``: int64 ``v`` rounded to floating ``dt`` (the 16-bit ones
    through float32, as c10 builds them), back to int64 (2^63 and past it: INT64_MIN, as x86 converts)."""
    with np.errstate(over="ignore"):  # (past float16's range: inf, the int64 minimum below)
        x = np.asarray(v, np.int64).astype(np.float64 if dt is D.float64 else np.float32).astype(dt.jnp).item()
    return _py_int(x) if -9.223372036854775808e18 <= x < 9.223372036854775808e18 else -_I64


def random_bounds(low: int, high: int, dt) -> tuple:
    """PyTorch's checks of a draw of integers in [low, high) into dtype ``dt`` (``random_from_to_impl``: randint,
    ``random_(from, to)``), returning the bounds to draw between. ``low < high``; a floating dtype moves each
    bound onto one it holds (``update_from`` / ``update_to``: bfloat16 [2050, 2060) is [2064, 2048), its error),
    then checks ``from`` and ``to - 1`` against its range and warns past 2^digits, where not every integer is a
    value of it; an integer dtype (bool: 0 and 1; uint64: up to int64's top) must hold both. (The bounds are int64
    arguments: a Python int past int64 is the parser's error first.)"""
    if not (-_I64 <= low < _I64 and -_I64 <= high < _I64):
        raise ValueError("Overflow when unpacking long long")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    _no_float8(dt, "random_update_from_to")
    if dt.is_floating_point:
        digits = _DIGITS[dt]
        up = _as_float_int64(low + 1, dt)
        if up < low:
            low = up + (1 << ((abs(low + 1).bit_length() - 1) - digits + 1))
        down = _as_float_int64(high - 1, dt)
        if down >= high:
            high = down - (1 << ((abs(high - 1).bit_length() - 1) - digits + 1))
        if low >= high:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                               f"from={low} >= to={high}")
        fi = D.finfo(dt)
        lo, hi = fi.min, fi.max
    elif dt.category <= D.INT:
        lo, hi = (0, 1) if dt is D.bool else (0, _I64 - 1) if dt is D.uint64 else (D.iinfo(dt).min, D.iinfo(dt).max)
    else:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    for v, name in ((low, "from"), (high - 1, "to - 1")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{name} is out of bounds for {_cname(dt)}")
    if dt.is_floating_point:
        for v, name, line in ((low, "from", 110), (high - 1, "to - 1", 111)):
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(_OOB_WARN.format(name, _cname(dt), line, d=digits), UserWarning,
                              stacklevel=user_stacklevel())
    return low, high


def _check_std(arr) -> None:
    """torch's ``normal`` with a std tensor: every element >= 0 (NaN fails); a host read, in a compiled program a
    deferred check."""
    msg = "normal expects all elements of std >= 0.0"
    if isinstance(arr, jax.core.Tracer):
        from . import _deferred
        _deferred.check(~(arr >= 0), arr, lambda v, i: RuntimeError(msg))
    elif arr.size and type(arr) is not jax.ShapeDtypeStruct and not bool(np.all(np.asarray(arr) >= 0)):
        raise RuntimeError(msg)


def _key_on(t, generator) -> Tensor:
    """One ``next_key()`` of the generator as raw uint32 key data on ``t``'s device: a sampling op's key argument."""
    from .nn_ops import _on_device_of
    key = jax.random.key_data(_gen(generator).next_key())
    arr = t._array
    return Tensor._from_array(key if type(arr) is jax.ShapeDtypeStruct else _on_device_of(key, arr), D.uint32,
                              t.device)


def _normal_rule(op, sig, sargs):
    """The draw has mean's dtype (std's when mean is a number: torch's ``empty_like(mean)`` / ``empty_like(std)``),
    the other operand cast to it; integer, bool and float8 results have no kernel."""
    dt = sig[0][1] if type(sig[0]) is tuple else sig[1][1]
    _check_float_sampling(dt, "normal_kernel_cpu")
    return (dt, dt, None), (dt,)


def _normal_name(targs, sargs):
    """torch's three overloads: (Tensor, Tensor) NormalBackward3, (Tensor, float) 1, (float, Tensor) 2."""
    if isinstance(targs[1], Tensor):
        return "NormalBackward3" if isinstance(targs[0], Tensor) else "NormalBackward2"
    return "NormalBackward1"


@defop("_normal", promote=_normal_rule, grad_fn=_normal_name, tensors=3, method=False, function=False,
       kernel="normal_kernel_cpu", broadcast=False, saves=())
def _normal(mean, std, key, shape=()):
    """N(mean, std^2) draws in the broadcast shape of ``mean``, ``std`` and ``shape`` (an ``out=``'s: torch
    resizes it to that first); ``key`` is raw key data. The gradient is zero, as PyTorch's (no reparameterisation:
    its NormalBackward nodes return zeros)."""
    shape = jnp.broadcast_shapes(jnp.shape(mean), jnp.shape(std), shape)
    z = _draw("normal", shape, D.from_numpy_dtype(mean.dtype))(jax.random.wrap_key_data(key), 0.0, 1.0)
    return jax.lax.stop_gradient(mean) + jax.lax.stop_gradient(std) * z


def _is_float_arg(x) -> bool:
    """What torch's argument parser takes as a ``float`` (a Python or NumPy real number, bools included)."""
    return isinstance(x, (numbers.Real, np.bool_, SymNumber))


def normal(*args, mean=_NOT_GIVEN, std=_NOT_GIVEN, size=_NOT_GIVEN, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False):
    """``torch.normal``: ``normal(mean, std)`` with a tensor mean and/or std (broadcast; the draw in mean's dtype,
    else std's; zero gradients, PyTorch's NormalBackward1/2/3), or ``normal(mean, std, size)`` with float mean and
    std (the factory: ``dtype=`` ...). Other combinations: PyTorch's argument-parser TypeError."""
    given = {"mean": mean, "std": std, "size": size}
    names = ("mean", "std", "size")
    if len(args) > 3 or any(given[n] is not _NOT_GIVEN for n in names[:len(args)]):
        raise _invalid_args("normal", args, {**{k: v for k, v in given.items() if v is not _NOT_GIVEN},
                                             **_passed(generator=generator, out=out, dtype=dtype, layout=layout,
                                                       device=device, requires_grad=requires_grad)})
    kw = _passed(generator=generator, out=out, dtype=dtype, layout=layout, device=device,
                 requires_grad=requires_grad)
    shown = {k: v for k, v in given.items() if v is not _NOT_GIVEN}  # (the keywords, as the error lists them)
    given.update(zip(names, args))
    mean, std, size = given["mean"], given["std"], given["size"]

    def invalid():
        return _invalid_args("normal", args, {**shown, **kw})
    if mean is _NOT_GIVEN:
        raise TypeError('normal() missing 1 required positional arguments: "mean"')
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if mt or st:
        if std is _NOT_GIVEN and mt:
            std = 1.0
        if size is not _NOT_GIVEN or dtype is not None or layout is not None or device is not None or \
                requires_grad or not (mt or _is_float_arg(mean)) or not (st or _is_float_arg(std)):
            raise invalid()
        if generator is not None and not isinstance(generator, _rng.Generator):
            raise invalid()
        if st:
            if std.is_complex():
                raise RuntimeError("normal expects standard deviation to be non-complex")
            _no_float8(std.dtype, "min_all")  # (torch checks std >= 0 with std.min() first)
            _check_std(std._array)
        elif not std >= 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        from ._dispatch import broadcast_shapes, write_out
        shape = broadcast_shapes(mean._shape, std._shape) if mt and st else ()
        if out is not None:
            if not isinstance(out, Tensor):
                raise TypeError(f"normal(): argument 'out' must be Tensor, not {_type_name(out)}")
            _check_float_sampling(out.dtype, "normal_kernel_cpu")  # (torch draws into ``out`` itself)
            if mt and not st:  # (torch: ``out`` resized to mean's shape broadcast with its own, then += mean)
                shape = broadcast_shapes(mean._shape, out._shape)
            ref = mean if mt else std
            if ref.dtype is not out.dtype:
                ref = ref.to(out.dtype)
                mean, std = (ref, std) if mt else (mean, ref)
        r = _normal(mean, std, _key_on(mean if mt else std, generator), tuple(shape) if mt and not st else ())
        return r if out is None else write_out(out, r, "normal")
    if std is _NOT_GIVEN or size is _NOT_GIVEN or not (_is_float_arg(mean) and _is_float_arg(std)) or \
            not isinstance(size, (tuple, list)):
        raise invalid()
    if generator is not None and not isinstance(generator, _rng.Generator):
        raise invalid()
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    dtype, device = _out_args("normal", out, dtype, device)
    dt = _dt(dtype)
    _check_float_sampling(dt, "normal_kernel_cpu")
    shape = _size("normal", (size,))
    return _into("normal", out, lambda rg: _random("normal", shape, _py_float(mean), _py_float(std), dt, device, rg,
                                                   generator), requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like("rand_like", input, dtype, device)
    _check_float_sampling(dt, "check_uniform_bounds")
    return _laid(_random("uniform", input._shape, 0.0, 1.0, dt, dev, requires_grad, None), input, memory_format)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like("randn_like", input, dtype, device)
    _check_float_sampling(dt, "normal_kernel_cpu")
    return _laid(_random("normal", input._shape, 0.0, 1.0, dt, dev, requires_grad, None), input, memory_format)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    dt, dev = _like("randint_like", input, dtype, device)
    low, high = random_bounds(int(low), int(high), dt)
    return _laid(_random("randint", input._shape, low, high, dt, dev, requires_grad, None), input,
                 memory_format)


# randperm's float dtypes: the largest n whose values are all exact, as torch words it (bfloat16: unchecked)
_RANDPERM_FLOAT_MAX = {D.float16: (2049, "2049"), D.float32: (2 ** 24 + 1, "2^24+1")}


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of ``0..n-1`` (``n``: an int, or an integral one-element tensor, as torch's SymInt
    parser takes it: ``randperm(mask.sum())``)."""
    if isinstance(n, Tensor) and n.numel() == 1 and n.dtype.category == D.INT and n.dtype is not D.bool:
        n = int(n.item())
    elif isinstance(n, (Tensor, _py_bool, np.bool_)) or not _is_int(n):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {_tname(n)}")
    n = operator.index(n)
    _check_generator("randperm", (n,), generator, out=out, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad, pin_memory=pin_memory)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtype, device = _out_args("randperm", out, dtype, device)
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    if dt is D.bool or dt.is_complex or dt in D.FLOAT8:
        raise no_kernel("randperm", dt)
    if n > 1 and dt.category == D.INT:
        D.check_fits(n - 1, dt)  # (torch: the last value n - 1 must fit the dtype)
    elif dt in _RANDPERM_FLOAT_MAX and n > _RANDPERM_FLOAT_MAX[dt][0]:
        raise RuntimeError(f"n cannot be greater than {_RANDPERM_FLOAT_MAX[dt][1]} for {dt.short} type.")

    def make(rg):
        return _finish(jax.random.permutation(_gen(generator).next_key(), n).astype(dt.jnp), dt, device, rg)
    return _into("randperm", out, make, requires_grad)


# ---- in-place sampling (Tensor.uniform_/normal_/bernoulli_): draw, then one copy_ into self ----------------
def _vmap_random_check(t) -> None:
    from ..func._vmap import _RANDOMNESS, inplace_random_check
    if _RANDOMNESS:  # (inside a vmap)
        inplace_random_check(t)


def copy_named(self, src, grad_fn: str, shown: int = 1):
    """``self.copy_(src)`` (one write); the node it records on a tensor in the graph gets torch's name ``grad_fn``
    (``UniformBackward0``...: the zero gradient of a fill) and shows its first ``shown`` inputs (a scalar fill's
    node has ``self`` only); through a view, the base's CopySlices as torch."""
    if not self._requires_grad:
        return self.copy_(src)
    old = self.grad_fn
    self.copy_(src)
    node = self.grad_fn
    if node is not None and node is not old and self._base is None:
        from ..autograd import graph as _graph
        node.__class__ = _graph.node_class(grad_fn)
        node.next_functions = node.next_functions[:shown]
    return self


def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
    """Fill ``self`` with U(a, b) in place."""
    _vmap_random_check(self)
    _check_float_sampling(self.dtype, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    return copy_named(self, _random("uniform", self._shape, _py_float(a), _py_float(b), self.dtype, self.device,
                                    False, generator), "UniformBackward0")


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    """Fill ``self`` with N(mean, std^2) in place."""
    _vmap_random_check(self)
    _check_float_sampling(self.dtype, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return copy_named(self, _random("normal", self._shape, _py_float(mean), _py_float(std), self.dtype,
                                    self.device, False, generator), "NormalBackward0")


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill ``self`` with 0/1 draws, 1 with probability ``p`` (a float, or a tensor broadcastable to ``self``)."""
    _vmap_random_check(self)
    _no_float8(self.dtype, "bernoulli_scalar_cpu_")
    if isinstance(p, Tensor):
        # (torch's kernel dispatches on self's dtype, then on p's, before it reads the probabilities)
        for t, kernel in ((self, "bernoulli_tensor_cpu_self_"), (p, "bernoulli_tensor_cpu_p_")):
            if t.dtype.is_complex:
                raise no_kernel(kernel, t.dtype)
        _check_probabilities(p)
        if p._shape != self._shape:
            p = p.expand(self._shape)  # (torch expands p to self: its error for a p that does not)
        u = _random("uniform", self._shape, 0.0, 1.0, D.float64, self.device, False, generator)
        return copy_named(self, u < p, "BernoulliBackward1", 2)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self.dtype.is_complex:
        raise no_kernel("bernoulli_scalar_cpu_", self.dtype)
    u = _random("uniform", self._shape, 0.0, 1.0, D.float64, self.device, False, generator)
    return copy_named(self, u < p, "BernoulliBackward2")


def _check_probabilities(p):
    """PyTorch's CPU kernel checks every probability (a host read; in a compiled program a deferred check)."""
    arr = p._array
    if arr is None:
        return
    if isinstance(arr, jax.core.Tracer):
        from . import _deferred
        _deferred.check(~((arr >= 0) & (arr <= 1)), arr, lambda v, i: RuntimeError(_P_IN_MSG))
        return
    host = np.asarray(p.detach().double()._array)
    if not ((host >= 0) & (host <= 1)).all():
        raise RuntimeError(_P_IN_MSG)


_P_IN_MSG = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If "
             "so, please report an enhancement request to PyTorch.)")


def _bernoulli_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category < D.FLOAT or dt.is_complex or dt in D.FLOAT8:
        raise no_kernel("bernoulli_tensor_cpu_p_", dt)
    return (None, None), (dt,)


@defop("_bernoulli", promote=_bernoulli_rule, grad_fn="BernoulliBackward0", tensors=2, method=False, function=False,
       kernel="bernoulli_tensor_cpu_p_", broadcast=False, saves=())
def _bernoulli(input, key):
    """1 where a uniform draw falls below the probability ``input``, else 0; ``key`` is raw key data. The
    gradient is zero, as PyTorch's."""
    acc = jnp.float64 if input.dtype == jnp.float64 else jnp.float32
    u = jax.random.uniform(jax.random.wrap_key_data(key), input.shape, acc)
    return (u < input.astype(acc)).astype(input.dtype)


_SIGS["bernoulli"] = ["Tensor input, *, torch.Generator generator = None, Tensor out = None)",
                      "Tensor input, float p, *, torch.Generator generator = None)"]


def bernoulli(input, *args, p=_NOT_GIVEN, generator=None, out=None):
    """``torch.bernoulli(probs)``: 0/1 draws in ``probs``' dtype (BernoulliBackward0, zero gradient);
    ``torch.bernoulli(input, p)`` with a float ``p`` (or a 0-d tensor): draws of probability ``p`` in ``input``'s
    shape and dtype (no ``out=``). Other arguments: PyTorch's argument-parser TypeError."""
    if args or p is not _NOT_GIVEN:
        q = args[0] if args else p
        if len(args) > 1 or (args and p is not _NOT_GIVEN) or out is not None or \
                not (_is_float_arg(q) or isinstance(q, Tensor) and not q._shape):
            shown = {} if p is _NOT_GIVEN else {"p": p}
            raise _invalid_args("bernoulli", (input,) + args, {**shown, **_passed(generator=generator, out=out)})
        if input.dtype.is_complex and isinstance(q, Tensor):  # (torch reads a 0-d p as a float)
            raise no_kernel("bernoulli_scalar_cpu_", input.dtype)
        return empty_like(input).bernoulli_(q, generator=generator)
    # torch draws into ``out`` (else ``empty_like(input)``), dispatching on its dtype, then on the probabilities'
    # (before it reads them: a complex input raises with no cast to real)
    for t, kernel in ((input if out is None else out, "bernoulli_tensor_cpu_self_"),
                      (input, "bernoulli_tensor_cpu_p_")):
        if t.dtype.is_complex:
            raise no_kernel(kernel, t.dtype)
    if type(input._array) is not jax.ShapeDtypeStruct:  # (meta: no values to check)
        _check_probabilities(input)
    res = _bernoulli(input, _key_on(input, generator))
    return res if out is None else out.copy_(res)


def _tri_indices(name, args, kwargs, dtype, device, requires_grad):
    """tril_indices / triu_indices: ``row``, ``col`` (required), ``offset``, by position or keyword, with PyTorch's
    argument-parser errors (a float, bool or non-0-d tensor is no int; the message gives a positional one's
    position)."""
    if len(args) > 3:
        raise TypeError(f"{name}() takes from 2 to 3 positional arguments but {len(args)} were given")
    given = {}
    for i, p in enumerate(("row", "col", "offset")):
        if i < len(args):
            if p in kwargs:
                raise TypeError(f"{name}() got multiple values for argument '{p}'")
            given[p] = args[i], f" (position {i + 1})"
        elif p in kwargs:
            given[p] = kwargs.pop(p), ""
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    missing = [n for n in ("row", "col") if n not in given]
    if missing:  # (PyTorch's wording, its grammar too)
        raise TypeError(f"{name}() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) == 1 else ''}: " + ", ".join(f'"{n}"' for n in missing))
    for p, (v, where) in given.items():
        if not _is_int(v) or isinstance(v, (_py_bool, np.bool_)) or isinstance(v, Tensor) and v.dtype is D.bool:
            raise TypeError(f"{name}(): argument '{p}'{where} must be int, not {_tname(v)}")
    row, col, offset = (operator.index(given[p][0]) if p in given else 0 for p in ("row", "col", "offset"))
    dt = D.int64 if dtype is None else D.as_dtype(dtype)
    if dt not in (D.int64, D.int32):
        raise no_kernel(name, dt)
    _check_requires_grad(dt, requires_grad)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    fn = np.tril_indices if name == "tril_indices" else np.triu_indices
    idx = np.stack(fn(row, offset, col)).astype(dt.jnp) if row and col else np.zeros((2, 0), dt.jnp)
    from .indexing import _host_tensor
    return _host_tensor(idx, dt, _dev.canonical(device))


def tril_indices(*args, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False, **kwargs):
    """``tril_indices(row, col, offset=0)``: row and column indices (a 2 x N int64 tensor) of the lower triangle
    of a ``row x col`` matrix."""
    return _tri_indices("tril_indices", args, kwargs, dtype, device, requires_grad)


def triu_indices(*args, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False, **kwargs):
    """``triu_indices(row, col, offset=0)``: row and column indices (a 2 x N int64 tensor) of the upper triangle
    of a ``row x col`` matrix."""
    return _tri_indices("triu_indices", args, kwargs, dtype, device, requires_grad)


_MULTINOMIAL: dict = {}


_MN_BAD = "probability tensor contains either `inf`, `nan` or element < 0"
_MN_SUM = "invalid multinomial distribution (sum of probabilities <= 0)"


def _mn_type_error(name, pos, value, want):
    where = f" (position {pos})" if pos else ""
    return TypeError(f"multinomial(): argument '{name}'{where} must be {want}, not {_tname(value)}")


def multinomial(input, *args, num_samples=_NOT_GIVEN, replacement=_NOT_GIVEN, generator=None, out=None):
    """Indices drawn from the rows of ``input`` (non-negative weights): categorical draws with replacement,
    Gumbel top-k without (each index at most once), as ``torch.multinomial`` (its argument checks and errors)."""
    if len(args) > 2 or (args and num_samples is not _NOT_GIVEN) or (len(args) > 1 and replacement is not _NOT_GIVEN):
        raise TypeError(f"multinomial() takes from 2 to 3 positional arguments but {len(args) + 1} were given")
    if args:
        num_samples = args[0]
    if len(args) > 1:
        replacement = args[1]
    if num_samples is _NOT_GIVEN:
        raise TypeError('multinomial() missing 1 required positional arguments: "num_samples"')
    if not _is_int(num_samples) or isinstance(num_samples, (bool, np.bool_)):
        raise _mn_type_error("num_samples", 2 if args else None, num_samples, "int")
    num_samples = int(num_samples)
    if replacement is _NOT_GIVEN:
        replacement = False
    elif not isinstance(replacement, (bool, np.bool_)):
        raise _mn_type_error("replacement", 3 if len(args) > 1 else None, replacement, "bool")
    replacement = bool(replacement)
    nd = input.dim()
    if nd not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype.short}")
    if out is not None and out.dtype is not D.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype.short}")
    _no_float8(input.dtype, "aminmax_cpu")  # PyTorch's first step, a min/max check, has no float8 kernel
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input._shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n > 1 << 24:  # (PyTorch's kernel indexes the categories in float32)
        raise RuntimeError("number of categories cannot exceed 2^24")
    arr = input._array
    if not isinstance(arr, jax.core.Tracer):
        host = np.asarray(arr, dtype=np.float64)
        if not np.isfinite(host).all() or (host < 0).any():
            raise RuntimeError(_MN_BAD)
        if (host.reshape(-1, n).sum(-1) <= 0).any():
            raise RuntimeError(_MN_SUM)
    elif n:  # (in a compiled program: the same checks, deferred: ops/_deferred)
        from . import _deferred
        a = arr.astype(jnp.float32) if arr.dtype in (jnp.float16, jnp.bfloat16) else arr
        _deferred.check(~jnp.isfinite(a) | (a < 0), a, lambda v, i: RuntimeError(_MN_BAD))
        sums = a.reshape(-1, n).sum(-1)
        _deferred.check(sums <= 0, sums, lambda v, i: RuntimeError(_MN_SUM))
    key = (num_samples, replacement)
    f = _MULTINOMIAL.get(key)
    if f is None:
        def draw(k, p):
            logits = jnp.log(p.astype(jnp.float32).reshape(-1, p.shape[-1]))
            if replacement:
                idx = jax.random.categorical(k, logits, axis=-1, shape=(num_samples, logits.shape[0])).T
            else:
                g = logits + jax.random.gumbel(k, logits.shape, jnp.float32)
                idx = jax.lax.top_k(g, num_samples)[1]
            return idx.astype(jnp.int64).reshape(p.shape[:-1] + (num_samples,))
        f = _MULTINOMIAL[key] = jax.jit(draw)
    res = Tensor._from_array(f(_gen(generator).next_key(), arr), D.int64, input.device)
    return res if out is None else out.copy_(res)


# ---- window functions (torch.hann_window ...) ------------------------------------------------------------------
# Each factory has torch's overloads ``(int window_length)``, ``(int window_length, bool periodic)`` and, for
# hamming / kaiser, ``(..., bool periodic, float alpha[, float beta])``: a parameter is accepted (also by keyword)
# only together with every one before it, as torch's argument parser does (``hamming_window(8, beta=0.4)`` and
# ``kaiser_window(6, beta=0.0)`` raise its TypeError).
_WIN_KW = ("dtype", "layout", "device", "pin_memory", "requires_grad")
_WIN_KWSIG = "*, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, " \
             "bool pin_memory = False, bool requires_grad = False)"
_WIN_PARAMS = {"hann_window": ("int window_length", "bool periodic"),
               "hamming_window": ("int window_length", "bool periodic", "float alpha", "float beta"),
               "blackman_window": ("int window_length", "bool periodic"),
               "bartlett_window": ("int window_length", "bool periodic"),
               "kaiser_window": ("int window_length", "bool periodic", "float beta")}
for _k, _ps in _WIN_PARAMS.items():
    _SIGS[_k] = [", ".join(_ps[:n]) + ", " + _WIN_KWSIG for n in builtins.range(1, len(_ps) + 1)]
del _k, _ps


def _win_type_ok(kind: str, v) -> bool:
    """Whether torch's argument parser takes ``v`` as a ``kind`` parameter of a window factory."""
    if kind == "int":
        return _is_int(v) and not isinstance(v, (_py_bool, np.bool_))
    if kind == "bool":
        return isinstance(v, _py_bool)
    if kind == "float":
        if isinstance(v, Tensor):
            return not v._shape and not v.dtype.is_complex and not v.requires_grad
        return isinstance(v, numbers.Real)
    if kind == "torch.dtype":
        return v is None or isinstance(v, D.dtype)
    return v is None or isinstance(v, _py_bool)  # "bool?": pin_memory, requires_grad (layout, device: later)


_WIN_KW_KIND = {"dtype": "torch.dtype", "pin_memory": "bool?", "requires_grad": "bool?"}


def _win_match(params, args, kwargs):
    """``args``/``kwargs`` bound to the overload taking ``params`` (then the keyword-only ones), or the reason it
    does not take them: ``("type", name, position or None, value, kind)``, ``("missing", name)``, ``("extra",
    key)`` or ``("count",)`` (too many positional arguments)."""
    names = [p.split()[-1] for p in params]
    if len(args) > len(params):
        return ("count",)
    bound = {}
    for i, (p, name) in enumerate(zip(params, names)):
        given = i < len(args)
        if given and name in kwargs:
            return ("extra", name)
        if not given and name not in kwargs:
            return ("missing", name)
        v = args[i] if given else kwargs[name]
        if not _win_type_ok(p.split()[0], v):
            return ("type", name, i + 1 if given else None, v, p.split()[0])
        bound[name] = v
    for k, v in kwargs.items():
        if k in names:
            continue
        if k not in _WIN_KW:
            return ("extra", k)
        kind = _WIN_KW_KIND.get(k)
        if kind is not None and not _win_type_ok(kind, v):
            return ("type", k, None, v, kind.rstrip("?"))
        bound[k] = v
    return bound


def _window_args(name: str, args: tuple, kwargs: dict) -> dict:
    """The arguments of ``name(*args, **kwargs)`` by torch's overload rules (the first overload that takes them),
    or its argument parser's TypeError: the one plausible overload's own complaint, else "invalid combination"."""
    params = _WIN_PARAMS[name]
    overloads = [params[:n] for n in builtins.range(1, len(params) + 1)]
    for ps in overloads:
        bound = _win_match(ps, args, kwargs)
        if isinstance(bound, dict):
            bound["periodic"] = bound.get("periodic", True)
            return bound
    nargs = len(args) + len(kwargs)
    plausible = [ps for ps in overloads if len(ps) <= nargs <= len(ps) + len(_WIN_KW)]
    if len(plausible) == 1:
        why = _win_match(plausible[0], args, kwargs)
        if why[0] == "missing":
            raise TypeError(f'{name}() missing 1 required positional arguments: "{why[1]}"')
        if why[0] == "type":
            at = f" (position {why[2]})" if why[2] else ""
            raise TypeError(f"{name}(): argument '{why[1]}'{at} must be {why[4]}, not {_tname(why[3])}")
        if why[0] == "extra":
            raise TypeError(f"{name}() got an unexpected keyword argument '{why[1]}'")
    # (torch lists the keywords from a hash map: for a few keywords, the reverse of the call's order)
    raise _invalid_args(name, args, dict(reversed(list(kwargs.items()))))


def _window(name, args, kwargs, fn):
    """torch's ``name(*args, **kwargs)``: ``fn(L, dt, bound)``, the symmetric window of ``L`` points as a host
    array of ``dt`` (``bound``: the parsed arguments); ``periodic``: the first ``window_length`` points of the
    ``window_length + 1`` symmetric window."""
    a = _window_args(name, args, kwargs)
    window_length, periodic, dtype, device = _py_int(a["window_length"]), a["periodic"], a.get("dtype"), a.get("device")
    if not -_I64 <= window_length < _I64:  # (an int64 argument)
        raise ValueError("Overflow when unpacking long long")
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if dt.category < D.FLOAT:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{_cname(dt)}, device={_dev.canonical(device)}, layout=Strided "
                           f"(default), requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        host = _host_cast(np.ones(window_length, np.float64), D.float64, dt)
    elif dt.is_complex or dt in D.FLOAT8:  # (torch accepts these dtypes, then has no arange for them past 1 point)
        raise no_kernel("arange_cpu", dt)
    else:
        with np.errstate(all="ignore"):  # (past float16's range: inf / nan, silently, as torch)
            host = fn(window_length + 1 if periodic else window_length, dt, a)[:window_length]
    return _finish(host, dt, device, a.get("requires_grad") or False)


# hann / hamming / blackman / bartlett: torch's own op sequence (TensorFactories.cpp) in the window's dtype, on the
# host: each scalar rounded to that dtype, each op rounded once (float16 / bfloat16 ops computed in float32, cos
# too), so the low-precision windows are torch's bit for bit (its asymmetric roundings included).
def _win_arange(L: int, dt):
    """``arange(L)`` in ``dt``, each point rounded to nearest. (torch's vectorized CPU arange rounds a block's first
    point, then adds to it: a bfloat16 window past 4112 points, a float16 one past 32784, can differ from it.)"""
    return np.arange(L, dtype=np.float64).astype(dt.np)


def _win_cos(x):
    """torch's CPU cos of a host array: float16 / bfloat16 through float32 (its opmath), rounded back."""
    return np.cos(x.astype(np.float64)).astype(D.opmath(x.dtype)).astype(x.dtype)


def _hamming(L: int, dt, alpha: float, beta: float):
    t = dt.np.type
    return _win_cos(_win_arange(L, dt) * t(math.pi * 2 / (L - 1))) * t(-beta) + t(alpha)


def hann_window(*args, **kwargs):
    return _window("hann_window", args, kwargs, lambda L, dt, a: _hamming(L, dt, 0.5, 0.5))


def hamming_window(*args, **kwargs):
    return _window("hamming_window", args, kwargs, lambda L, dt, a: _hamming(
        L, dt, _to_double(_number_vals([a.get("alpha", 0.54)])[0]), _to_double(_number_vals([a.get("beta", 0.46)])[0])))


def _blackman(L: int, dt, a):
    t = dt.np.type
    w = _win_arange(L, dt) * t(math.pi / (L - 1))
    return (_win_cos(w * t(4)) * t(0.08) - _win_cos(w * t(2)) * t(0.5)) + t(0.42)


def blackman_window(*args, **kwargs):
    return _window("blackman_window", args, kwargs, _blackman)


def _bartlett(L: int, dt, a):
    t = dt.np.type
    w = _win_arange(L, dt) * t(2.0 / (L - 1))
    half = ((L - 1) >> 1) + 1
    w[half:] = w[half:] * t(-1) + t(2)
    return w


def bartlett_window(*args, **kwargs):
    return _window("bartlett_window", args, kwargs, _bartlett)


def _kaiser(L: int, dt, a):
    beta = _to_double(_number_vals([a.get("beta", 12.0)])[0])
    c = (L - 1) / 2
    n = np.arange(L, dtype=np.float64)
    host = np.i0(beta * np.sqrt(np.maximum(1 - ((n - c) / c) ** 2, 0.0))) / np.i0(beta)
    return _host_cast(host, D.float64, dt)


def kaiser_window(*args, **kwargs):
    return _window("kaiser_window", args, kwargs, _kaiser)


def _window_signature(name: str):
    """The introspectable signature of a window factory (its last overload; ``_dense_only`` reads ``layout``)."""
    import inspect
    P = inspect.Parameter
    defaults = {"periodic": True, "alpha": 0.54, "beta": 0.46 if name == "hamming_window" else 12.0}
    ps = [P(p.split()[-1], P.POSITIONAL_OR_KEYWORD, **({"default": defaults[p.split()[-1]]} if i else {}))
          for i, p in enumerate(_WIN_PARAMS[name])]
    ps += [P(k, P.KEYWORD_ONLY, default=False if k in ("pin_memory", "requires_grad") else None) for k in _WIN_KW]
    return inspect.Signature(ps)


for _k in _WIN_PARAMS:
    globals()[_k].__signature__ = _window_signature(_k)
del _k


METHODS = {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "bernoulli": bernoulli,
           "multinomial": multinomial}

def _dense_only(fn):
    """``fn`` (a factory taking torch's keyword-only ``layout``) refusing a layout other than ``torch.strided``:
    every tensor here is dense (torch would build a sparse or mkldnn tensor; ignoring it would be a silent
    difference)."""
    import functools
    import inspect
    if "layout" not in inspect.signature(fn).parameters:
        return fn

    name = fn.__name__

    @functools.wraps(fn)
    def factory(*args, **kwargs):
        if name == "zeros_like" and args and getattr(args[0], "is_sparse", False) is True:
            kwargs["layout"] = kwargs.get("layout") or args[0].layout  # (torch's zeros_like of a sparse tensor)
        lay = kwargs.get("layout")
        if lay is not None and getattr(lay, "name", None) != "strided":
            if getattr(lay, "name", None) == "sparse_coo" and fn.__name__ in _SPARSE_FACTORIES:
                return _sparse_empty(fn.__name__, args, kwargs)
            raise RuntimeError(f"{fn.__name__}(): functorch_lite has only dense (torch.strided) tensors; layout={lay!r} "
                               "is not supported")
        return fn(*args, **kwargs)
    return factory


_SPARSE_FACTORIES = ("zeros", "empty", "zeros_like")  # (torch has no sparse empty_like)


def _sparse_empty(name, args, kwargs):
    """``zeros`` / ``empty`` / ``zeros_like`` with ``layout=torch.sparse_coo``: a sparse tensor without entries, as
    torch's (every dim sparse)."""
    from ..sparse import SparseTensor
    if name.endswith("_like"):
        src = args[0] if args else kwargs["input"]
        shape, dt, dev = tuple(src.shape), kwargs.get("dtype") or src.dtype, kwargs.get("device") or src.device
    else:
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args or kwargs.get("size", ())
        shape, dt, dev = tuple(int(n) for n in shape), kwargs.get("dtype") or D.get_default_dtype(), \
            kwargs.get("device")
    s = SparseTensor(zeros((len(shape), 0), dtype=D.int64, device=dev), zeros((0,), dtype=dt, device=dev), shape, True)
    return s.requires_grad_() if kwargs.get("requires_grad") else s


FUNCTIONS = {name: _dense_only(globals()[name]) for name in (
    "tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
    "empty_like", "full_like", "arange", "range", "linspace", "logspace", "eye", "rand", "randn", "randint",
    "normal", "rand_like", "randn_like", "randint_like", "randperm", "multinomial", "bernoulli", "tril_indices",
    "triu_indices", "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")}
