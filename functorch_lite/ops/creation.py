"""Tensor creation (spec §1): ``tensor``, ``zeros``..., random sampling, ``*_like``, NumPy import.

Every creation passes an explicit dtype (PyTorch's defaults: float32 / int64 / bool / complex64)
and commits the array to its device, so JAX's x64 defaults never leak.
"""
from __future__ import annotations

import builtins
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtypes as D
from .. import _device as _dev
from .. import random as _rng
from .._tensor.tensor import Tensor
from .movement import _shape_arg

_py_bool, _py_int, _py_float, _py_complex = builtins.bool, builtins.int, builtins.float, builtins.complex


def _finish(arr, dt, device, requires_grad):
    """Commit a host/jax array to ``device`` as facade dtype ``dt`` and wrap it."""
    dev = _dev.canonical(device)
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    jarr = jax.device_put(arr, _dev.to_jax(dev))
    t = Tensor._from_array(jarr, dt, dev)
    t._requires_grad = _py_bool(requires_grad)
    return t


def _host_cast(a: np.ndarray, src: D.dtype, dt: D.dtype):
    if src is dt:
        return a
    if src.category >= D.FLOAT and dt.category == D.INT or dt is D.float8_e4m3fn:
        return np.asarray(D.cast_array(jnp.asarray(a), src, dt))
    return a.astype(dt.jnp)


# ---- tensor / as_tensor / from_numpy ------------------------------------------------------------
def _infer_nested(data, depth=0):
    """Validate a nested sequence (PyTorch's ragged message) and return its highest scalar category."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (list, tuple)):
        cat = None
        n = None
        for i, x in enumerate(data):
            if isinstance(x, (list, tuple)):
                if n is None:
                    n = len(x)
                elif len(x) != n:
                    raise ValueError(f"expected sequence of length {n} at dim {depth + 1} (got {len(x)})")
            elif n is not None:
                raise TypeError(f"not a sequence")
            c = _infer_nested(x, depth + 1)
            cat = c if cat is None else _higher(cat, c)
        return cat
    if isinstance(data, (_py_bool, np.bool_)):
        return D.bool
    if isinstance(data, (_py_int, np.integer)):
        if not -(2 ** 63) <= data < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        return D.int64
    if isinstance(data, (_py_float, np.floating)):
        return D.get_default_dtype()
    if isinstance(data, (_py_complex, np.complexfloating)):
        return D.get_default_dtype().to_complex()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _higher(a, b):
    if a is None:
        return b
    if a.category != b.category:
        return a if a.category > b.category else b
    return a


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``torch.tensor``: always copies; infers PyTorch's default dtypes (CRE-01..13)."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        src = data.detach()
        dt = D.as_dtype(dtype) if dtype is not None else src.dtype
        dev = src.device if device is None else device
        t = src.to(dtype=dt, device=dev, copy=True)
        if requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(data, np.ndarray):
        src = D.from_numpy_dtype(data.dtype)
        dt = D.as_dtype(dtype) if dtype is not None else src
        return _finish(_host_cast(np.array(data), src, dt), dt, device, requires_grad)
    if isinstance(data, np.generic):
        src = D.from_numpy_dtype(data.dtype)
        dt = D.as_dtype(dtype) if dtype is not None else src
        return _finish(_host_cast(np.asarray(data), src, dt), dt, device, requires_grad)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat_iter(data)):
        data = _tensors_to_lists(data)
    cat = _infer_nested(data)
    if cat is None:  # empty list
        cat = D.get_default_dtype()
    dt = D.as_dtype(dtype) if dtype is not None else cat
    host = np.array(data, dtype=_host_dtype(cat))
    return _finish(_host_cast(host, D.from_numpy_dtype(host.dtype), dt), dt, device, requires_grad)


def _host_dtype(cat):
    return {D.BOOL: np.bool_, D.INT: np.int64, D.FLOAT: np.float64, D.COMPLEX: np.complex128}[cat.category]


def _flat_iter(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat_iter(x)
        else:
            yield x


def _tensors_to_lists(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(x) for x in data]
    return data


def as_tensor(data, dtype=None, device=None):
    """``torch.as_tensor``: returns ``data`` itself when it already is a tensor of that dtype/device."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype is not None or device is not None) else data
    if isinstance(data, np.ndarray):
        return from_numpy(data).to(device=device, dtype=dtype) if data.dtype.kind in "biufc" else \
            tensor(data, dtype=dtype, device=device)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """``torch.from_numpy``: keeps the NumPy dtype. JAX arrays are immutable, so this is a copy taken
    now: later writes to ``ndarray`` are not seen by the tensor (see README, "NumPy bridge")."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative strides "
                         "are not currently supported. (You can probably work around this by making a copy of your "
                         "array  with array.copy().) ")
    dt = D.from_numpy_dtype(ndarray.dtype)
    return _finish(np.array(ndarray), dt, None, False)


# ---- filled tensors ----------------------------------------------------------------------------------
def _size(name, size):
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return _shape_arg(size)


def _dt(dtype, default=None):
    return D.as_dtype(dtype) if dtype is not None else (default or D.get_default_dtype())


def _fill(shape, value, dt, device, requires_grad):
    dev = _dev.canonical(device)
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    arr = _full_jit(tuple(shape), dt, _dev.to_jax(dev))(value)
    t = Tensor._from_array(arr, dt, dev)
    t._requires_grad = _py_bool(requires_grad)
    return t


_FULL: dict = {}


def _full_jit(shape, dt, jdev):
    key = (shape, dt, jdev)
    f = _FULL.get(key)
    if f is None:
        src = None

        def make(v):
            v = jnp.asarray(v)
            return jnp.broadcast_to(D.cast_array(v, D.from_numpy_dtype(v.dtype), dt), shape)
        f = jax.jit(make, out_shardings=jax.sharding.SingleDeviceSharding(jdev))
        if len(_FULL) > 512:
            _FULL.clear()
        _FULL[key] = f
        del src
    return f


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _fill(_size("zeros", size), 0, _dt(dtype), device, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _fill(_size("ones", size), 1, _dt(dtype), device, requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    """Uninitialised in PyTorch; zeros here (JAX has no uninitialised memory)."""
    return _fill(_size("empty", size), 0, _dt(dtype), device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """The fill value decides the dtype when none is given (CRE-18)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    from .._promotion import scalar_dtype
    dt = D.as_dtype(dtype) if dtype is not None else scalar_dtype(fill_value)
    return _fill(_shape_arg(size), fill_value, dt, device, requires_grad)


def _like(input, dtype, device):
    return (D.as_dtype(dtype) if dtype is not None else input.dtype,
            input.device if device is None else device)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return _fill(input._shape, 0, dt, dev, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return _fill(input._shape, 1, dt, dev, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return _fill(input._shape, 0, dt, dev, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return _fill(input._shape, fill_value, dt, dev, requires_grad)


# ---- ranges ------------------------------------------------------------------------------------------
def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``arange(5)`` int64, ``arange(0, 1, 0.25)`` float32 (CRE-20..23)."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    is_float = any(isinstance(v, (_py_float, np.floating)) for v in vals)
    dt = D.as_dtype(dtype) if dtype is not None else (D.get_default_dtype() if is_float else D.int64)
    n = max(0, math.ceil((end - start) / step))
    if dt.category <= D.INT and not is_float:
        host = np.arange(start, start + n * step, step, dtype=np.int64)[:n]
    else:
        host = start + np.arange(n, dtype=np.float64) * step
    return _finish(_host_cast(host, D.from_numpy_dtype(host.dtype), dt), dt, device, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    n = int(math.floor((end - start) / step)) + 1
    host = start + np.arange(n, dtype=np.float64) * step
    return _finish(_host_cast(host, D.float64, dt), dt, device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` is required (CRE-26); the result is the default float dtype (CRE-25)."""
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if dt.category <= D.INT:
        host = np.linspace(start, end, steps, dtype=np.float64)
    else:
        # PyTorch's CPU kernel: the first half counts up from start, the second half down from end
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        host = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    return _finish(_host_cast(host, D.float64, dt), dt, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    host = np.power(base, np.linspace(start, end, steps, dtype=np.float64))
    return _finish(_host_cast(host, D.float64, dt), dt, device, requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    host = np.eye(n, n if m is None else m, dtype=np.float64)
    return _finish(_host_cast(host, D.float64, dt), dt, device, requires_grad)


# ---- random --------------------------------------------------------------------------------------------
def _gen(generator):
    return generator if generator is not None else _rng.default_generator


_RAND: dict = {}


def _rand_jit(kind, shape, dt, jdev):
    key = (kind, shape, dt, jdev)
    f = _RAND.get(key)
    if f is None:
        def draw(k, a, b):
            if kind == "uniform":
                x = jax.random.uniform(k, shape, jnp.float64 if dt is D.float64 else jnp.float32, 0.0, 1.0)
                return D.cast_array(a + (b - a) * x, D.float64 if dt is D.float64 else D.float32, dt)
            if kind == "normal":
                x = jax.random.normal(k, shape, jnp.float64 if dt is D.float64 else jnp.float32)
                return D.cast_array(a + b * x, D.float64 if dt is D.float64 else D.float32, dt)
            if kind == "randint":
                x = jax.random.randint(k, shape, a, b, jnp.int64)
                return D.cast_array(x, D.int64, dt)
            raise ValueError(kind)
        f = _RAND[key] = jax.jit(draw, out_shardings=jax.sharding.SingleDeviceSharding(jdev))
    return f


def _random(kind, shape, a, b, dt, device, requires_grad, generator):
    dev = _dev.canonical(device)
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    k = _gen(generator).next_key()
    arr = _rand_jit(kind, tuple(shape), dt, _dev.to_jax(dev))(k, a, b)
    t = Tensor._from_array(arr, dt, dev)
    t._requires_grad = _py_bool(requires_grad)
    return t


def _check_float_sampling(dt, kernel):
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt.short}\'')


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Uniform [0, 1) (CRE-30; integer dtypes raise, CRE-32)."""
    dt = _dt(dtype)
    _check_float_sampling(dt, "check_uniform_bounds")
    return _random("uniform", _size("rand", size), 0.0, 1.0, dt, device, requires_grad, generator)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    dt = _dt(dtype)
    _check_float_sampling(dt, "normal_kernel_cpu")
    return _random("normal", _size("randn", size), 0.0, 1.0, dt, device, requires_grad, generator)


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    """``randint(high, size)`` or ``randint(low, high, size)``; size must be a tuple (CRE-33/34)."""
    a = list(args)
    if size is None:
        if a and isinstance(a[-1], (tuple, list)):
            size = a.pop()
        else:
            raise TypeError(f"randint() received an invalid combination of arguments - got "
                            f"({', '.join(type(x).__name__ for x in args)}), but expected one of:\n"
                            " * (int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, "
                            "torch.dtype dtype = None, torch.layout layout = None, Device device = None, "
                            "bool pin_memory = False, bool requires_grad = False)\n"
                            " * (int low, int high, tuple of ints size, *, torch.Generator generator, Tensor out = "
                            "None, torch.dtype dtype = None, torch.layout layout = None, Device device = None, "
                            "bool pin_memory = False, bool requires_grad = False)")
    low, high = (0, a[0]) if len(a) == 1 else (a[0], a[1])
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    return _random("randint", _shape_arg(size), int(low), int(high), dt, device, requires_grad, generator)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """``normal(mean, std, size)`` with float mean/std; tensor mean/std broadcast elementwise."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        shape = ref._shape if size is None else _shape_arg(size)
        z = _random("normal", shape, 0.0, 1.0, ref.dtype, ref.device, False, generator)
        return z * std + mean
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments: size is required when mean and std "
                        "are numbers")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    dt = _dt(dtype)
    _check_float_sampling(dt, "normal_kernel_cpu")
    return _random("normal", _shape_arg(size), _py_float(mean), _py_float(std), dt, device, requires_grad, generator)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    _check_float_sampling(dt, "check_uniform_bounds")
    return _random("uniform", input._shape, 0.0, 1.0, dt, dev, requires_grad, None)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    _check_float_sampling(dt, "normal_kernel_cpu")
    return _random("normal", input._shape, 0.0, 1.0, dt, dev, requires_grad, None)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    dt, dev = _like(input, dtype, device)
    return _random("randint", input._shape, int(low), int(high), dt, dev, requires_grad, None)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    k = _gen(generator).next_key()
    dev = _dev.canonical(device)
    arr = jax.device_put(jax.random.permutation(k, n).astype(dt.jnp), _dev.to_jax(dev))
    return Tensor._from_array(arr, dt, dev)


FUNCTIONS = {name: globals()[name] for name in (
    "tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
    "empty_like", "full_like", "arange", "range", "linspace", "logspace", "eye", "rand", "randn", "randint",
    "normal", "rand_like", "randn_like", "randint_like", "randperm")}
