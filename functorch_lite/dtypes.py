"""PyTorch dtype objects and their jax.numpy counterparts (spec §2, DTY-01/02).

Each dtype is a singleton; aliases (``float``, ``long``, ``half``...) are the same objects.
Casts that differ between PyTorch and JAX (float -> int wrap-around, NaN/inf -> INT64_MIN,
float8_e4m3fn saturation) live in :func:`cast_array`, the only place arrays change dtype.
"""
from __future__ import annotations

import math as _math

import jax.numpy as jnp
from jax import lax as _lax
import ml_dtypes
import numpy as np

from . import _config  # noqa: F401  (x64 on before any dtype is built)
from ._symbolic import SymNumber

# categories: 0 bool, 1 integer, 2 floating, 3 complex
BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


class dtype:
    """A PyTorch dtype: ``torch.float32`` etc. Compare with ``is`` or ``==``."""

    __slots__ = ("name", "jnp", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "category", "legacy", "short", "_torch_name", "__weakref__")

    def __init__(self, name, jdt, itemsize, category, is_signed, legacy, short):
        self.name = name
        self.jnp = np.dtype(jdt)
        self.np = self.jnp
        self.itemsize = itemsize
        self.category = category
        self.is_floating_point = category == FLOAT
        self.is_complex = category == COMPLEX
        self.is_signed = is_signed
        self.legacy = legacy or short + "Tensor"  # 'FloatTensor' style name for Tensor.type()
        self.short = short    # c10 ScalarType name used in PyTorch messages ('Float', 'Long')

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        """The real dtype of a complex one (c10's ``toRealValueType``); any other dtype is its own."""
        return _TO_REAL.get(self, self)

    def to_complex(self):
        """The complex dtype of a floating one (c10's ``toComplexType``: bfloat16 -> complex64); a complex dtype is
        its own; the others have none (torch's RuntimeError)."""
        r = _TO_COMPLEX.get(self)
        if r is None:
            if self.is_complex:
                return self
            raise RuntimeError(f"Unknown Complex ScalarType for {self.short}")
        return r


def _by_name(name):
    return _NAME[name]


float32 = dtype("float32", jnp.float32, 4, FLOAT, True, "FloatTensor", "Float")
float64 = dtype("float64", jnp.float64, 8, FLOAT, True, "DoubleTensor", "Double")
float16 = dtype("float16", jnp.float16, 2, FLOAT, True, "HalfTensor", "Half")
bfloat16 = dtype("bfloat16", jnp.bfloat16, 2, FLOAT, True, "BFloat16Tensor", "BFloat16")
float8_e4m3fn = dtype("float8_e4m3fn", jnp.float8_e4m3fn, 1, FLOAT, True, None, "Float8_e4m3fn")
float8_e5m2 = dtype("float8_e5m2", jnp.float8_e5m2, 1, FLOAT, True, None, "Float8_e5m2")
float8_e4m3fnuz = dtype("float8_e4m3fnuz", jnp.float8_e4m3fnuz, 1, FLOAT, True, None, "Float8_e4m3fnuz")
float8_e5m2fnuz = dtype("float8_e5m2fnuz", jnp.float8_e5m2fnuz, 1, FLOAT, True, None, "Float8_e5m2fnuz")
float8_e8m0fnu = dtype("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, 1, FLOAT, False, None, "Float8_e8m0fnu")
int8 = dtype("int8", jnp.int8, 1, INT, True, "CharTensor", "Char")
uint8 = dtype("uint8", jnp.uint8, 1, INT, False, "ByteTensor", "Byte")
int16 = dtype("int16", jnp.int16, 2, INT, True, "ShortTensor", "Short")
int32 = dtype("int32", jnp.int32, 4, INT, True, "IntTensor", "Int")
int64 = dtype("int64", jnp.int64, 8, INT, True, "LongTensor", "Long")
uint16 = dtype("uint16", jnp.uint16, 2, INT, False, None, "UInt16")
uint32 = dtype("uint32", jnp.uint32, 4, INT, False, None, "UInt32")
uint64 = dtype("uint64", jnp.uint64, 8, INT, False, None, "UInt64")
int4 = dtype("int4", ml_dtypes.int4, 1, INT, True, None, "Int4")
uint4 = dtype("uint4", ml_dtypes.uint4, 1, INT, False, None, "UInt4")
bool = dtype("bool", jnp.bool_, 1, BOOL, False, "BoolTensor", "Bool")  # noqa: A001
complex64 = dtype("complex64", jnp.complex64, 8, COMPLEX, True, "ComplexFloatTensor", "ComplexFloat")
complex128 = dtype("complex128", jnp.complex128, 16, COMPLEX, True, "ComplexDoubleTensor", "ComplexDouble")
# torch.complex32 has no jax counterpart: it is only ever a promotion *result* (f16 + 1j); ops that
# would produce it raise a clear error (see _promotion.check_supported).
complex32 = dtype("complex32", jnp.complex64, 4, COMPLEX, True, None, "ComplexHalf")

# aliases (same objects, DTY-30)
float = float32  # noqa: A001
double = float64
half = float16
short = int16
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128
chalf = complex32

ALL = (float32, float64, float16, bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,
       float8_e8m0fnu, int8, uint8, int16, int32, int64, uint16, uint32, uint64, int4, uint4, bool,
       complex64, complex128, complex32)
_NAME = {d.name: d for d in ALL}
_TO_REAL = {complex32: float16, complex64: float32, complex128: float64}
_TO_COMPLEX = {float16: complex32, bfloat16: complex64, float32: complex64, float64: complex128}
# numpy / jax dtype -> facade dtype (complex32 is never stored, so it is not a target here)
_FROM_NP = {d.jnp: d for d in ALL if d is not complex32}
FLOAT8 = frozenset({float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu})
UNSIGNED_WIDE = frozenset({uint16, uint32, uint64})


def from_numpy_dtype(npdt) -> dtype:
    """Facade dtype of a numpy/jax dtype; TypeError for ones PyTorch has no tensor type for."""
    try:
        return _FROM_NP[np.dtype(npdt)]
    except (KeyError, TypeError):
        if not np.dtype(npdt).isnative and np.dtype(npdt).newbyteorder("=") in _FROM_NP:
            raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                             "between byte orders is currently not supported.") from None
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(npdt).type.__module__}.{np.dtype(npdt).type.__name__}. "
            "The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, "
            "int16, int8, uint64, uint32, uint16, uint8, and bool.") from None


def as_dtype(d) -> dtype:
    """Accept a facade dtype, a numpy/jax dtype or Python's float/int/bool/complex types (as PyTorch's argument
    parser reads them: the C types behind them, float64 / int64 / bool / complex128, whatever the default dtype)."""
    if isinstance(d, dtype):
        return d
    import builtins
    if d is builtins.float:
        return float64
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return complex128
    if isinstance(d, str):
        name = d[6:] if d.startswith("torch.") else d
        if name in _NAME:
            return _NAME[name]
        alias = globals().get(name)
        if isinstance(alias, dtype):
            return alias
        raise TypeError(f"invalid dtype string: {d!r}")
    return from_numpy_dtype(d)


# ---- default dtype (CRE-63..65) -------------------------------------------------------------
_DEFAULT = [float32]


def _get_default() -> dtype:
    return _DEFAULT[0]


def get_default_dtype() -> dtype:
    """``torch.get_default_dtype()``: the dtype of Python floats (float32 unless changed)."""
    return _DEFAULT[0]


def set_default_dtype(d) -> None:
    """``torch.set_default_dtype``: only floating types are allowed (CRE-65), given as a dtype (PyTorch refuses
    Python's ``float``, a string or a NumPy type as not a dtype object)."""
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _DEFAULT[0] = d


# ---- finfo / iinfo (DTY-14/15) -------------------------------------------------------------
def _info_dtype(name: str, t) -> dtype:
    """The ``type`` argument of ``finfo`` / ``iinfo``: a torch dtype or Python's float / int / bool / complex, as
    torch's parser (a NumPy type, a string: its TypeError)."""
    import builtins
    if isinstance(t, dtype) or (builtins.type(t) is builtins.type and t in (builtins.float, builtins.int,
                                                                               builtins.bool, builtins.complex)):
        return as_dtype(t)
    from .ops._dispatch import _type_name
    raise TypeError(f"{name}(): argument 'type' (position 1) must be torch.dtype, not {_type_name(t)}")


def _no_pickle(self, proto):
    """torch's finfo / iinfo cannot be pickled (nor copied)."""
    raise TypeError(f"cannot pickle '{'torch.' if proto >= 2 else ''}{type(self).__name__}' object")


class finfo:
    """``torch.finfo(dtype)``: bits, eps, max, min, tiny, smallest_normal, resolution (DTY-14)."""

    __reduce_ex__ = _no_pickle

    def __init__(self, type=None):  # noqa: A002
        d = _get_default() if type is None else _info_dtype("finfo", type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        r = d.to_real()
        fi = ml_dtypes.finfo(r.jnp)
        self.dtype = r.name
        self.bits = builtins_int(fi.bits)
        # PyTorch reports eps 0.125 for float8_e5m2fnuz (c10's numeric_limits), not 2**-2
        self.eps = 0.125 if r is float8_e5m2fnuz else builtins_float(fi.eps)
        self.max = builtins_float(fi.max)
        self.min = builtins_float(fi.min)
        self.tiny = builtins_float(fi.tiny)
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -_math.floor(-_math.log10(self.eps))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")

    def __eq__(self, other):  # (torch's compare their fields; like torch's, unhashable)
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = None


class iinfo:
    """``torch.iinfo(dtype)``: bits, min, max (DTY-15)."""

    __reduce_ex__ = _no_pickle

    def __init__(self, type):  # noqa: A002
        d = _info_dtype("iinfo", type)
        if d is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.category != INT or d in (int4, uint4):
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        ii = ml_dtypes.iinfo(d.jnp)
        self.dtype = d.name
        self.bits = d.itemsize * 8
        self.min = builtins_int(ii.min)
        self.max = builtins_int(ii.max)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    __eq__ = finfo.__eq__
    __hash__ = None


import builtins as _b  # noqa: E402

builtins_float = _b.float
builtins_int = _b.int
builtins_bool = _b.bool
builtins_complex = _b.complex

# C++ type names in PyTorch's "value cannot be converted to type ... without overflow"
_CNAME = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
          "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
          "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t", "complex64": "c10::complex<float>",
          "complex128": "c10::complex<double>"}
_RANGE = {}


def _range(d):
    """(lowest, max, has_inf, has_nan) of a dtype's values."""
    r = _RANGE.get(d)
    if r is None:
        if d.category == INT:
            ii = ml_dtypes.iinfo(d.jnp)
            r = (builtins_int(ii.min), builtins_int(ii.max), False, False)
        else:
            fi = ml_dtypes.finfo(d.to_real().jnp)
            r = (builtins_float(fi.min), builtins_float(fi.max), d not in (float8_e4m3fn, float8_e4m3fnuz,
                                                                          float8_e5m2fnuz, float8_e8m0fnu), True)
        _RANGE[d] = r
    return r


def check_fits(value, d: dtype, floats: str = "all", cname: str | None = None) -> None:
    """PyTorch's checked conversion of a Python number to a dtype (c10's ``overflows``), where JAX would wrap
    (``int8`` 300 -> 44) or saturate: ``RuntimeError: value cannot be converted to type int8_t without
    overflow``. Infinities pass where the dtype has them, NaN where it is floating; into an unsigned type a
    negative integer passes if its magnitude fits (two's complement, ``full((1,), -1, dtype=uint8)`` is 255).
    ``floats``: which floating targets are checked: "all" (``full``, ``fill_``, ``masked_fill``, ``clamp``...),
    "wide" (float32/complex64, not the 16- and 8-bit floats: ``x[i] = v`` and ``where`` make the number a
    float32 tensor first), "none" (``torch.tensor``). ``cname``: the type name in the message (default: the C++
    name)."""
    tv = type(value)
    if tv is builtins_complex and BOOL < d.category < COMPLEX and floats != "none":
        # a complex number into a real type: its imaginary part must be 0 (c10's ``overflows`` of a complex),
        # then its real part must fit. ``x[i] = v`` fills a 16- or 8-bit float through a double (named so).
        if value.imag != 0:
            small = floats == "wide" and d.category == FLOAT and d.itemsize <= 2
            name = cname or ("double" if small else _CNAME.get(d.name, "c10::" + d.short))
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        value = value.real
        tv = builtins_float
    if d.category == BOOL or tv is builtins_bool or (d.category >= FLOAT and (
            floats == "none" or (floats == "wide" and d.itemsize <= 2 and d.category == FLOAT))):
        return
    if tv is SymNumber:  # (a compiled function's dynamic int/float argument: checked only where it may not fit)
        if value._t is builtins_bool or (value._t is builtins_int and (d is int64 or d.category >= FLOAT and (
                d.itemsize >= 4 and d.category == FLOAT or d.itemsize >= 8))) or d is float64 or d is complex128:
            return
        if d.category == COMPLEX:
            value._need("the range check of a conversion to " + d.name)
        # the same comparisons on the traced value: each a branch the program is kept for (_symbolic.GUARD), so a
        # value that does not fit takes another and raises as eagerly
        tv = value._t
    if tv is builtins_complex:
        if d.category == COMPLEX:
            check_fits(value.real, d, floats, cname)
            check_fits(value.imag, d, floats, cname)
        return
    lo, hi, has_inf, has_nan = _range(d)
    if tv is builtins_int or isinstance(value, (builtins_int, np.integer)):
        if type(value) is not SymNumber:
            value = builtins_int(value)
        bad = value > hi or (value < 0 and -value > hi) if d.category == INT and lo == 0 else value < lo or value > hi
    else:
        if type(value) is not SymNumber:
            value = builtins_float(value)
        if value != value:
            bad = not has_nan
        elif abs(value) == _math.inf:
            bad = not has_inf
        else:
            bad = value < lo or value > hi
    if bad:
        raise RuntimeError(f"value cannot be converted to type {cname or _CNAME.get(d.name, 'c10::' + d.short)} "
                           "without overflow")


def check_fill(value, d: dtype, numel: int) -> None:
    """``fill_``/``full``: :func:`check_fits`, except that PyTorch fills a single element of a 16- or 8-bit float
    type unchecked (``full((1,), 1e6, dtype=float16)`` is inf; with two elements it raises). A complex number
    into a real (not bool) type must have no imaginary part (the one-element small-float fill goes through a
    double, which its message names), and its real part must fit."""
    one_small = numel == 1 and d.category == FLOAT and d.itemsize <= 2
    if isinstance(value, builtins_complex) and FLOAT >= d.category > BOOL:
        if value.imag != 0:
            name = "double" if one_small else _CNAME.get(d.name, "c10::" + d.short)
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        value = value.real
    if not one_small:
        check_fits(value, d)


_SYM_CATEGORY = {builtins_bool: BOOL, builtins_int: INT, builtins_float: FLOAT}


def scalar_category(value) -> int:
    """The dtype category of a Python number (bool < int < float < complex), as torch reads a NumPy scalar: an
    ``np.bool_`` or an ``np.complex64`` (not a Python complex, unlike ``np.complex128``) is a float (see
    ``_promotion.scalar_dtype``)."""
    if type(value) is SymNumber:
        return _SYM_CATEGORY[value._t]
    if isinstance(value, builtins_bool):
        return BOOL
    if isinstance(value, (builtins_int, np.integer)):
        return INT
    return COMPLEX if isinstance(value, builtins_complex) else FLOAT


def check_scalar_arg(t, value, floats: str = "all") -> None:
    """A Python number used with tensor ``t`` that takes ``t``'s dtype (its category does not promote it:
    ``int8_tensor.clamp(max=300)``, ``masked_fill``, ``where``) must fit in it."""
    if isinstance(value, (builtins_int, builtins_float, np.number, SymNumber)) and hasattr(t, "_storage") and \
            scalar_category(value) <= t.dtype.category:
        check_fits(value, t.dtype, floats)


def opmath(jdt):
    """PyTorch's CPU accumulation ("opmath") type of a jnp floating dtype: float32 for float16/bfloat16, else the
    dtype itself (float32 stays float32, float64 stays float64)."""
    return jnp.float32 if jdt in (jnp.float16, jnp.bfloat16) else jdt


def in_opmath(fn):
    """``fn(*arrays)`` computed in float32 when the first array is float16/bfloat16 (PyTorch's CPU kernels do:
    jnp's exp2 scales by ln 2 rounded to bfloat16, its tanh-GELU underflows), rounded once to that dtype."""
    def g(*xs):
        dt = xs[0].dtype
        if dt in (jnp.float16, jnp.bfloat16):
            return fn(*(x.astype(jnp.float32) for x in xs)).astype(dt)
        return fn(*xs)
    g.__name__ = getattr(fn, "__name__", "f")
    g.__doc__ = fn.__doc__
    return g


def _to_e8m0(arr, xp):
    """PyTorch's cast to float8_e8m0fnu (c10's ``fp8e8m0fnu_from_fp32_value``): the float32 value's exponent field,
    its sign dropped, rounded to nearest-even on the mantissa's guard / round / sticky bits (the implied bit the
    LSB: 0 for a denormal), NaN and inf to NaN (255). A zero or small denormal is 2^-127 (byte 0); ml_dtypes' cast
    gives NaN for those and for any negative value."""
    bits = arr.astype(np.float32)
    bits = bits.view(np.uint32) if xp is np else _lax.bitcast_convert_type(bits, np.uint32)
    e = (bits >> 23) & 0xFF
    up = ((bits & 0x400000) != 0) & (((bits & 0x3FFFFF) != 0) | (e > 0))
    byte = xp.where(e == 0xFF, 0xFF, e + up.astype(np.uint32)).astype(np.uint8)
    return byte.view(float8_e8m0fnu.jnp) if xp is np else _lax.bitcast_convert_type(byte, float8_e8m0fnu.jnp)


# float8 types whose conversion to an integer gives 0 for NaN (c10 builds them from a float otherwise; e4m3fn and
# e5m2 NaN give the integer minimum as float32's does)
_NAN_TO_ZERO = frozenset({float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu})
# uint32 targets: the sources whose contiguous CPU cast loop the compiler vectorised, as (lanes, k): the first
# ``lanes * ((n - k) // lanes)`` elements of n take the vector instruction's rule, the rest the scalar one
_U32_VECTOR = {float32: (4, 0), float64: (4, 0), bfloat16: (8, 0), complex128: (4, 0), complex64: (4, 1)}


def _trunc_to(t, bound, inter, xp):
    """x86's truncating conversion (cvttsd2si) of the truncated floats ``t`` to ``inter`` (int32 or int64, whose
    range is [-bound, bound)): NaN, infinities and out-of-range values give the type's minimum."""
    ok = xp.isfinite(t) & (t >= -bound) & (t < bound)
    return xp.where(ok, xp.where(ok, t, 0).astype(inter), xp.asarray(np.iinfo(inter).min, inter))


def _to_wide_unsigned(t, src, dst, xp):
    """PyTorch's CPU cast of truncated floats ``t`` to uint32 / uint64, a C++ ``static_cast`` as x86 compilers emit
    it. uint64: ``t < 2^63`` converts to int64 (out of range: INT64_MIN), a larger one is ``t - 2^63`` converted so,
    its top bit flipped. uint32, scalar code: the low 32 bits of the int64 conversion (NaN, inf, 1e20 give 0;
    -3e9 wraps); the vectorised loop of a contiguous float32 / float64 / bfloat16 / complex source instead
    converts ``t < 2^31`` to int32 (out of range: INT32_MIN, so NaN, -inf and -3e9 give 2^31) and ``t - 2^31``
    the same way with the top bit flipped, except the loop's scalar tail (see ``_U32_VECTOR``; the position is
    taken in row-major order, one thread's loop: a strided source or one over 32768 elements split across
    threads may differ there)."""
    if dst is uint64:
        big = t >= 9.223372036854775808e18
        i = _trunc_to(xp.where(big, t - 9.223372036854775808e18, t), 9.223372036854775808e18, np.int64, xp)
        return i.astype(np.uint64) ^ xp.where(big, np.uint64(1 << 63), np.uint64(0))
    n, vec = t.size, _U32_VECTOR.get(src)
    nv = 0 if vec is None or n <= vec[1] else vec[0] * ((n - vec[1]) // vec[0])  # (the vectorised loop's share)
    if nv < n:  # scalar code (of the whole array, or of the loop's tail)
        s = _trunc_to(t, 9.223372036854775808e18, np.int64, xp).astype(np.uint32)
        if nv == 0:
            return s
    big = t >= 2147483648.0
    v = _trunc_to(xp.where(big, t - 2147483648.0, t), 2147483648.0, np.int32, xp).astype(np.uint32) ^ \
        xp.where(big, np.uint32(1 << 31), np.uint32(0))
    if nv == n:
        return v
    return xp.where((np.arange(n) < nv).reshape(t.shape), v, s)


def cast_array(arr, src: dtype, dst: dtype, xp=jnp):
    """Cast an array from ``src`` to ``dst`` the way PyTorch's CPU kernels do (spec §2.2).

    float -> integer: truncate toward zero into int64 (for int64 targets) or int32 (for narrower
    ones), NaN/inf/out-of-range giving that type's minimum, then wrap modulo 2^bits (DTY-19..23); NaN of a
    float8 fnuz / e8m0fnu type gives 0; uint32 / uint64 targets: see :func:`_to_wide_unsigned`.
    -> float8_e4m3fn: saturate to +-448 (DTY-07). ``xp``: ``jnp`` (a jax array or a tracer) or ``np`` (a host
    array: ``torch.tensor(data, dtype=...)`` casts before the transfer, with no XLA program to compile per shape).
    """
    if src is dst:
        return arr
    if dst is complex32:
        raise RuntimeError("functorch_lite does not support torch.complex32 (ComplexHalf): JAX has no such dtype")
    if src.category >= FLOAT and dst.category == INT:
        if src.is_complex:
            arr = xp.real(arr)
        t = xp.trunc(arr.astype(np.float64))
        if src in _NAN_TO_ZERO:
            t = xp.where(xp.isnan(t), 0.0, t)
        if dst is uint32 or dst is uint64:
            return _to_wide_unsigned(t, src, dst, xp)
        if dst is int64:
            return _trunc_to(t, 9.223372036854775808e18, np.int64, xp)
        if dst is uint8 and src.to_real() is float64:
            # c10 converts to uint8 through int64 (its static_cast_with_inter_type<uint8_t>): a float64 beyond int32
            # keeps its low byte (2^32 - 1 -> 255); a narrower float there is a multiple of 256 either way
            return _trunc_to(t, 9.223372036854775808e18, np.int64, xp).astype(np.uint8)
        return _trunc_to(t, 2147483648.0, np.int32, xp).astype(dst.jnp)
    if dst is float8_e4m3fn and src is not bool:
        # PyTorch saturates to +-448, infinities included (DTY-07); JAX gives NaN.
        if src.is_complex:
            arr = xp.real(arr)
        f = arr.astype(np.float32)  # float64 too: PyTorch rounds float64 -> float32 -> float8 (twice)
        return xp.where(xp.isnan(f), f, xp.clip(f, -448.0, 448.0)).astype(dst.jnp)
    if dst is float8_e8m0fnu:
        return _to_e8m0(xp.real(arr) if src.is_complex else arr, xp)
    if dst.category == FLOAT and src.is_complex:
        arr = xp.real(arr)
    if dst.category == FLOAT and dst.itemsize <= 2 and src is not bool and src is not float32:
        # PyTorch's Half/BFloat16/float8 are built from a float: float64 (and int64, int32) -> float32 -> the small
        # type, two roundings (NumPy's float16 and ml_dtypes >= 0.7 round float64 once; XLA's bfloat16 twice)
        arr = arr.astype(np.float32)
    if src is bool and dst.category >= FLOAT:
        # via uint8: XLA's simplifier rewrites convert(pred) / y into select(pred, 1 / y, 0), losing 0/0 = NaN
        arr = arr.astype(np.uint8)
    return arr.astype(dst.jnp)
