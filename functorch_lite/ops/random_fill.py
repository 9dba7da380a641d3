"""Random in-place fills and samplers with PyTorch's names, ranges, dtype rules and errors: ``Tensor.random_``
(``random_()``, ``random_(to)``, ``random_(from, to)``, ``random_(from, None)``), ``exponential_``, ``cauchy_``,
``geometric_``, ``log_normal_``; ``torch.poisson`` and ``torch.binomial``.

Every draw takes one ``Generator.next_key()`` of the default generator (or ``generator=``), so ``manual_seed``
reproduces it; the values come from JAX's PRNG and differ from PyTorch's (another generator), the distributions
are the same. A fill is one jitted draw, then one ``copy_`` into ``self`` (``_version`` + 1); on a tensor in the
graph its grad_fn is PyTorch's (``ExponentialBackward0``, ``RandomBackward0/1/2``...: a zero gradient).

Example::

    >>> torch.manual_seed(0); torch.empty(3).exponential_(2.0)
"""
from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device as _dev
from .. import dtypes as D
from .._promotion import _cname, no_kernel
from .._tensor.tensor import Tensor
from .creation import _I64, _as_float_int64, _gen, _key_on, copy_named, random_bounds
from ._registry import defop
from .grad_overrides import aten_no_derivative
from ._dispatch import _type_name

_FILLS: dict = {}
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _acc(dt):
    return jnp.float64 if dt is D.float64 else jnp.float32


def _sample(kind, shape, dt):
    """``draw(key, a, b)``: ``shape`` values of ``kind`` in facade dtype ``dt`` (parameters a, b traced)."""
    acc = _acc(dt)

    def draw(k, a, b):
        if kind == "random":  # integers in [a, b)
            return D.cast_array(jax.random.randint(k, shape, a, b, jnp.int64), D.int64, dt)
        u = jax.random.uniform(k, shape, acc)  # [0, 1)
        if kind == "exponential":
            x = -jnp.log1p(-u) / a.astype(acc)
        elif kind == "cauchy":
            x = a.astype(acc) + b.astype(acc) * jnp.tan(jnp.asarray(np.pi, acc) * (u - jnp.asarray(0.5, acc)))
        elif kind == "geometric":  # failures before the first success, plus one: at least 1
            x = jnp.maximum(jnp.ceil(jnp.log1p(-u) / jnp.log1p(-a.astype(acc))), jnp.ones((), acc))
        else:  # log_normal
            x = jnp.exp(a.astype(acc) + b.astype(acc) * jax.random.normal(k, shape, acc))
        return D.cast_array(x, D.from_numpy_dtype(x.dtype), dt)
    return draw


def _fill(self, kind, a, b, generator, grad_fn):
    """Draw ``kind`` into ``self`` (one copy_); a node recorded by the copy gets PyTorch's name ``grad_fn``."""
    from .creation import _vmap_random_check
    _vmap_random_check(self)
    jdev = _dev.to_jax(self.device)
    if jdev is None:  # meta: nothing to draw
        return self
    key = (kind, self._shape, self.dtype, jdev)
    f = _FILLS.get(key)
    if f is None:
        if len(_FILLS) > 1024:
            _FILLS.clear()
        f = _FILLS[key] = jax.jit(_sample(kind, self._shape, self.dtype),
                                  out_shardings=jax.sharding.SingleDeviceSharding(jdev))
    ints = kind == "random"
    arr = f(_gen(generator).next_key(), jnp.asarray(a, jnp.int64 if ints else jnp.float64),
            jnp.asarray(0 if b is None else b, jnp.int64 if ints else jnp.float64))
    return copy_named(self, Tensor._from_array(arr, self.dtype, self.device), grad_fn)


def _continuous(self, name, cname=False):
    dt = self.dtype
    if not dt.is_floating_point:
        what = _cname(dt) if cname else dt.short
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {what}")
    if dt in D.FLOAT8:
        raise no_kernel(f"{name.lower()}_cpu", dt)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with Exponential(``lambd``) draws (floating dtypes)."""
    _continuous(self, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill(self, "exponential", float(lambd), None, generator, "ExponentialBackward0")


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(``median``, ``sigma``) draws (floating dtypes)."""
    _continuous(self, "Cauchy", cname=True)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill(self, "cauchy", float(median), float(sigma), generator, "CauchyBackward0")


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(``mean``, ``std``^2)) draws (floating dtypes)."""
    if not self.dtype.is_floating_point or self.dtype in D.FLOAT8:
        raise no_kernel("log_normal_cpu", self.dtype)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill(self, "log_normal", float(mean), float(std), generator, "LogNormalBackward0")


def geometric_(self, p, *, generator=None):
    """Fill with Geometric(``p``) draws: trials up to the first success (1, 2, ...); integer dtypes too."""
    dt = self.dtype
    if dt is D.bool or dt.is_complex or dt in D.FLOAT8:
        raise no_kernel("geometric_cpu", dt)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _fill(self, "geometric", float(p), None, generator, "GeometricBackward0")


# ---- random_ ---------------------------------------------------------------------------------------------------------
_RANDOM_OVERLOADS = ("random_() received an invalid combination of arguments - got ({}), but expected one of:\n"
                     " * (*, torch.Generator generator = None)\n"
                     " * (int from, int to, *, torch.Generator generator = None)\n"
                     " * (int to, *, torch.Generator generator = None)\n")


_WIDE = (D.uint16, D.uint32, D.uint64)  # (no ``random_()`` kernel, nor one for the full int64 range)


def _top(dt) -> int:
    """The top (inclusive) of ``random_()`` and ``random_(from, None)``: 2**digits for a floating dtype, the dtype's
    largest value for an integer one (bool: 1; uint64: -1, torch's ``static_cast<int64_t>`` of it)."""
    if dt is D.bool:
        return 1
    if dt.is_floating_point:
        return 1 << _DIGITS[dt.name]
    return -1 if dt is D.uint64 else int(jnp.iinfo(dt.jnp).max)


_MISSING = object()


def random_(self, *args, to=_MISSING, generator=None, **kw):
    """``random_()`` (0 up to the dtype's top: 2**mantissa digits for floats, inclusive), ``random_(to)``
    ([0, to)), ``random_(from, to)`` ([from, to)), ``random_(from, None)`` (from up to the top; from int64's
    minimum: the full 64-bit range). The bounds are checked as torch's ``random_from_to_impl``
    (``creation.random_bounds``: randint's)."""
    args = list(args)
    if "from" in kw:
        args.insert(0, kw.pop("from"))
    if kw or len(args) > 2 or (to is not _MISSING and len(args) > 1):
        raise TypeError(_RANDOM_OVERLOADS.format(", ".join(type(a).__name__ for a in args)))
    if to is not _MISSING:
        args.append(to)
    for a in args:
        if not (a is None or isinstance(a, numbers.Integral) and not isinstance(a, bool)):
            raise TypeError(_RANDOM_OVERLOADS.format(", ".join(type(a).__name__ for a in args)))
    dt = self.dtype
    if not args:
        if dt.is_complex or dt in D.FLOAT8 or dt in _WIDE:
            raise no_kernel("random_kernel_cpu", dt)
        frm, end, name = 0, min(_top(dt) + 1, _I64 - 1), "RandomBackward2"
    elif len(args) == 1 and args[0] is None:
        raise TypeError(_RANDOM_OVERLOADS.format("NoneType"))
    elif args[-1] is not None:  # random_(to), random_(from, to)
        frm, end = random_bounds(0 if len(args) == 1 else int(args[0]), int(args[-1]), dt)
        name = "RandomBackward1" if len(args) == 1 else "RandomBackward0"
    else:
        frm, name = _from_none(int(args[0]), dt), "RandomBackward0"
        end = _I64 - 1 if frm == -_I64 else min(_top(dt) + 1, _I64 - 1)  # (int64's top: 2**63 - 2 at most)
    return _fill(self, "random", frm, end, generator, name)


def _from_none(frm: int, dt) -> int:
    """``random_(from, None)``'s checks (torch's ``random_from_to_range_calc``): ``from`` moved onto a value of a
    floating dtype, at most the top; both in the dtype's range (a floating one's: ``random_bounds``'s checks and
    precision warning)."""
    if not -_I64 <= frm < _I64:
        raise ValueError("Overflow when unpacking long long")
    if frm == -_I64:  # (torch: ``random_full_64_bits_range_kernel``)
        if dt in (D.int64, D.float32, D.float64, D.bfloat16):
            return frm
        if dt in (D.int8, D.uint8, D.int16, D.int32):
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
        raise no_kernel("random_full_64_bits_range_kernel_cpu", dt)
    if dt in D.FLOAT8:
        raise no_kernel("random_from_to_range_calc", dt)
    if dt.is_complex:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and boolean types")
    top = _top(dt)
    if dt.is_floating_point:
        if frm >= top:  # (below 2**digits every integer is a value of dt: no move)
            frm = _update_from(frm, dt)
            if frm >= top:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                                   f"casted to dtype, but got from={frm} > to_inc={top}")
    elif dt is D.uint64:  # (its top as int64: -1, out of its bounds; ``from`` checked first)
        raise RuntimeError(f"{'from' if frm < 0 else 'to - 1'} is out of bounds for {_cname(dt)}")
    else:
        if not (0 if dt is D.bool else D.iinfo(dt).min) <= frm <= top:
            raise RuntimeError(f"from is out of bounds for {_cname(dt)}")
        return frm
    return random_bounds(frm, top + 1, dt)[0]  # (its range checks and precision warnings)


def _update_from(frm: int, dt) -> int:
    """torch's ``update_from``: ``from`` moved up onto a value of floating ``dt`` where ``from + 1`` rounds below it."""
    up = _as_float_int64(frm + 1, dt)
    return up + (1 << ((abs(frm + 1).bit_length() - 1) - _DIGITS[dt.name] + 1)) if up < frm else frm


# ---- poisson / binomial (ops: their draws have PyTorch's grad_fn) ---------------------------------------------------
def _poisson_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category != D.FLOAT or dt in D.FLOAT8:
        raise no_kernel("poisson_cpu", dt)
    return (None, None), (dt,)


@defop("poisson", promote=_poisson_rule, grad_fn="PoissonBackward0", tensors=2, method=False, function=False,
       broadcast=False, kernel="poisson_cpu", saves=())
def _poisson(input, key):
    """Poisson(rate) counts in the rate's dtype (float16/bfloat16 sample in float32); zero gradient."""
    r = jax.lax.stop_gradient(input)
    return jax.random.poisson(jax.random.wrap_key_data(key), r.astype(_acc_of(r)), r.shape,
                              jnp.int64).astype(input.dtype)


def _acc_of(a):
    return jnp.float32 if a.dtype in (jnp.float16, jnp.bfloat16) else a.dtype


def poisson(input, generator=None):
    """``torch.poisson(rates)``: Poisson counts in ``rates``' shape and dtype (PoissonBackward0: zero gradient)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}")
    arr = input._array
    if input.dtype.category == D.FLOAT and not isinstance(arr, jax.core.Tracer) and input.numel() and \
            type(arr) is not jax.ShapeDtypeStruct and not bool(np.all(np.asarray(arr, np.float64) >= 0)):  # (NaN too)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _poisson(input, _key_on(input, generator))


def _binomial_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.category != D.FLOAT:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {dt.short}")
    if dt not in (D.float32, D.float64):
        raise no_kernel("binomial_cpu", dt)
    return (None, dt, None), (dt,)


_BINOMIAL_NO_GRAD = aten_no_derivative("binomial")


@defop("binomial", promote=_binomial_rule, grad_fn="NotImplemented", tensors=3, method=False, function=False,
       kernel="binomial_cpu", saves=(), broadcast=False)
def _binomial(count, prob, key):
    """Binomial(count, prob) draws (count and prob broadcast together); no derivative (PyTorch's)."""
    shape = jnp.broadcast_shapes(count.shape, prob.shape)
    n = _BINOMIAL_NO_GRAD(jnp.zeros((), count.dtype), count, prob)  # (0: both reach the node; its backward raises)
    x = jax.random.binomial(jax.random.wrap_key_data(key), jax.lax.stop_gradient(jnp.broadcast_to(count, shape)),
                            jax.lax.stop_gradient(jnp.broadcast_to(prob, shape)), shape, count.dtype)
    return x + (n - jax.lax.stop_gradient(n)).astype(count.dtype)


def binomial(count, prob, generator=None):
    """``torch.binomial(count, prob)``: Binomial draws in ``count``'s dtype (grad_fn ``NotImplemented``)."""
    from ._dispatch import broadcast_shapes
    broadcast_shapes(count._shape, prob._shape)
    return _binomial(count, prob, _key_on(count, generator))


METHODS = {"random_": random_, "exponential_": exponential_, "cauchy_": cauchy_, "geometric_": geometric_,
           "log_normal_": log_normal_}
FUNCTIONS = {"poisson": poisson, "binomial": binomial}
