"""PyTorch's result-type rules: the only place a result dtype is decided (spec §3).

Operands fall in three priority classes: dimensioned tensors, zero-dim tensors, Python scalars
(``bool`` -> bool, ``int`` -> int64, ``float`` -> default dtype, ``complex`` -> default complex).
Each class is promoted with the pairwise lattice (``promote_types``), then the classes are
combined so that a lower class only changes the result when it is of a higher *category*
(bool < int < float < complex). Results are cached on the (class, dtype) signature.
"""
from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from . import dtypes as D

_bool, _int, _float, _complex = builtins.bool, builtins.int, builtins.float, builtins.complex


def promote_types(a: D.dtype, b: D.dtype) -> D.dtype:
    """``torch.promote_types``: the pairwise lattice (PRO-01)."""
    if a is b:
        return a
    return _PAIR.get((a, b)) or _pair_slow(a, b)


_PAIR: dict = {}


def _dtype_args(name: str, *args) -> None:
    """PyTorch's argument-parser TypeError where an argument of ``name`` that must be a dtype is not one."""
    for i, (arg, v) in enumerate(args):
        if not isinstance(v, D.dtype):
            from .ops.view_ops import _tname
            raise TypeError(f"{name}(): argument '{arg}' (position {i + 1}) must be torch.dtype, not {_tname(v)}")


def _pair_slow(a, b):
    _dtype_args("promote_types", ("type1", a), ("type2", b))  # (here: a pair seen before needs no check)
    if a in D.FLOAT8 or b in D.FLOAT8:
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to promote {a.short} and {b.short}")
    if (a in D.UNSIGNED_WIDE or b in D.UNSIGNED_WIDE) and not (a.is_floating_point or b.is_floating_point):
        # (with a floating dtype the float wins, as for any integer: uint32 + float16 -> float16; complex raises)
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{a.short} and {b.short}")
    if D.complex32 in (a, b):
        other = b if a is D.complex32 else a
        r = D.complex32 if other.category <= D.FLOAT and other in (D.bool, D.uint8, D.int8, D.int16, D.int32,
                                                                    D.int64, D.float16) else \
            promote_types(D.complex64, other)
    else:
        # JAX's x64 lattice equals PyTorch's for these dtypes (PRO-42); ask it under the standard
        # promotion mode so a strict-mode setting (the test suite's) does not apply to this lookup.
        with jax.numpy_dtype_promotion("standard"):
            r = D.from_numpy_dtype(jnp.promote_types(a.jnp, b.jnp))
    _PAIR[(a, b)] = r
    return r


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is D.bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


# the numbers torch's argument parser reads as a double (``PyFloat_AsDouble``): Python and NumPy floats, and the
# NumPy scalars it has no other reading for: ``np.bool_`` (``i * np.bool_(True)`` is float32) and the complex ones
# that are not Python complex subclasses (``np.complex64``: its real part, NumPy's ComplexWarning; ``np.complex128``
# is a Python complex). NumPy integers are ints; ``bool`` and ``complex`` are checked first.
_FLOATISH = (_float, np.floating, np.bool_, np.complexfloating)


def scalar_dtype(x) -> D.dtype:
    """dtype of a Python/NumPy scalar as a 'wrapped number' (PRO-03)."""
    if isinstance(x, _bool):
        return D.bool
    if isinstance(x, (_int, np.integer)):
        return D.int64
    if isinstance(x, _complex):
        return D.get_default_dtype().to_complex()
    if isinstance(x, _FLOATISH):
        return D.get_default_dtype()
    if type(x) is D.SymNumber:  # (a compiled function's dynamic int/float argument: its Python type's)
        return scalar_dtype(x._t(0))
    raise TypeError(f"unsupported scalar type {type(x).__name__}")


_RT_CACHE: dict = {}


def result_type_sig(sig: tuple) -> D.dtype:
    """Result dtype from a signature ``((class, dtype), ...)`` with class 0=dim, 1=zero-dim, 2=scalar."""
    r = _RT_CACHE.get(sig)
    if r is None:
        acc = [None, None, None]
        for cls, dt in sig:
            acc[cls] = dt if acc[cls] is None else promote_types(acc[cls], dt)
        r = _combine(acc[0], _combine(acc[1], acc[2]))
        _RT_CACHE[sig] = r
    return r


def signature(operands) -> tuple:
    from ._tensor.tensor import Tensor
    out = []
    for x in operands:
        if isinstance(x, Tensor):
            out.append((0 if x._shape else 1, x.dtype))
        elif x is not None:
            out.append((2, scalar_dtype(x)))
    return tuple(out)


def result_type(*operands) -> D.dtype:
    """``torch.result_type(a, b)``: tensors and Python scalars."""
    return result_type_sig(signature(operands))


def can_cast(from_: D.dtype, to: D.dtype) -> bool:
    """``torch.can_cast``: no lowering of category (complex->float, float->int, non-bool->bool)."""
    if type(from_) is not D.dtype or type(to) is not D.dtype:
        _dtype_args("can_cast", ("from_", from_), ("to", to))
    if from_.category > to.category:
        return False
    return not (to is D.bool and from_ is not D.bool)


def default_float_of(dt: D.dtype) -> D.dtype:
    """int/bool -> the default float; floating and complex unchanged (true division, exp, sqrt...)."""
    return D.get_default_dtype() if dt.category <= D.INT else dt


# ---- per-op dtype rules ------------------------------------------------------------------------
# An op's ``promote`` field names one of these. A rule sees the op, the call signature (one entry
# per tensor-like argument: ``(ndim, dtype)`` for a tensor, the Python type for a scalar, ``None``
# for an absent optional tensor) and the static arguments, and returns
# ``(casts, outs)``: the dtype each argument is cast to before the jax function runs (``None``:
# leave as is) and the facade dtype of each output. Rules run once per (signature, static args):
# dispatch caches them with the jitted kernel.

_PY_SCALAR = {_bool: D.bool, _int: D.int64}


def _entries(sig):
    out = []
    for s in sig:
        if s is None:
            continue
        if type(s) is tuple:
            out.append((0 if s[0] else 1, s[1]))
        else:
            out.append((2, _scalar_type_dtype(s)))
    return tuple(out)


def _scalar_type_dtype(tp):
    """:func:`scalar_dtype` of a scalar's type."""
    if issubclass(tp, _bool):
        return D.bool
    if issubclass(tp, (_int, np.integer)):
        return D.int64
    if issubclass(tp, _complex):
        return D.get_default_dtype().to_complex()
    if issubclass(tp, _FLOATISH):
        return D.get_default_dtype()
    raise TypeError(f"unsupported operand type {tp.__name__}")


CLAMP_COMPLEX = "clamp is not supported for complex types"  # (torch's clamp Scalar overloads, foreach's too)


def _clamp_err(name, dt, op, sig):
    """A clamp of complex values: torch's Tensor overloads name their kernel (``maximum_cpu`` for a tensor ``min``:
    the op's ``float8`` kernel choice), except ``clamp`` of a complex input; the Scalar ones refuse complex."""
    if name in ("clamp", "clamp_min", "clamp_max") and any(type(b) is tuple for b in sig[1:]) and \
            not (name == "clamp" and sig[0][1].is_complex):
        return no_kernel(op.float8(sig), dt)
    return NotImplementedError(CLAMP_COMPLEX)


# the ops PyTorch refuses complex inputs to (orderings, roundings, clamps), with their errors (``make(name, dtype,
# op, signature)``); the others name their kernel (``"lt_cpu" not implemented for 'ComplexFloat'``). JAX computes
# most of them (on the real part, or lexicographically), so the facade would answer where torch raises.
_COMPLEX_ERRORS = {
    **{n: (lambda name, dt, *_: RuntimeError(f"{name} not implemented for complex tensors."))
       for n in ("maximum", "minimum", "fmax", "fmin")},
    **{n: (lambda name, dt, *_: RuntimeError(" Sort does not support complex dtypes on CPU")) for n in ("sort", "argsort")},
    "topk": lambda name, dt, *_: RuntimeError(" topk does not support complex dtypes on CPU"),
    **{n: (lambda name, dt, *_: RuntimeError(f"{name.split('_')[0]}(): does not support complex input"))
       for n in ("max_dim", "min_dim", "argmax", "argmin")},
    **{n: _clamp_err for n in ("clamp", "clamp_min", "clamp_max", "relu", "_hardtanh")},
    **{n: (lambda name, dt, *_: NotImplementedError(f"{name} is not supported for complex inputs"))
       for n in ("floor", "ceil", "trunc")},
    "signbit": lambda name, dt, *_: NotImplementedError("signbit is not implemented for complex tensors."),
    **{n: (lambda name, dt, *_: RuntimeError(f"{name} does not support complex inputs."))
       for n in ("isposinf", "isneginf")},
    "searchsorted": lambda name, dt, *_: no_kernel("searchsorted_out_cpu", dt),
    "ndtr": lambda name, dt, *_: no_kernel("erf_vml_cpu", dt),  # (a composite over erf in torch)
}
_COMPLEX_KERNEL = ("lt", "le", "gt", "ge", "max", "min", "amax", "amin", "aminmax", "cummax", "cummin", "kthvalue",
                   "median", "median_dim", "nanmedian", "nanmedian_dim", "mode", "atan2", "xlogy", "round", "frac",
                   "fmod", "remainder", "copysign", "floor_divide",
                   # real-only special functions (JAX would compute a complex value or raise its own TypeError)
                   "erf", "erfc", "erfinv", "lgamma", "digamma", "logit", "i0", "i0e", "i1", "i1e", "entr", "xlog1py",
                   "mvlgamma", "igamma", "igammac")
NO_COMPLEX = frozenset(_COMPLEX_ERRORS) | frozenset(_COMPLEX_KERNEL)


def refusing_complex(rule):
    """``rule`` for an op of ``NO_COMPLEX``: a complex operand (a tensor or a Python complex) raises torch's error."""
    def checked(op, sig, sargs):
        for s in sig:
            if (type(s) is tuple and s[1].is_complex) or (type(s) is type and issubclass(s, _complex)):
                dt = result_type_sig(_entries(sig))
                make = _COMPLEX_ERRORS.get(op.name)
                raise make(op.name, dt, op, sig) if make is not None else no_kernel(op.kernel, dt)
        return rule(op, sig, sargs)
    return checked


def _first_tensor_dtype(sig):
    for s in sig:
        if type(s) is tuple:
            return s[1]
    return None


def discards_imag(src: D.dtype, dst: D.dtype) -> None:
    """torch's one-time warning for a complex -> real cast (``to``, ``float()``, ``copy_``, a reduction's real
    ``dtype=``); a cast to bool tests for nonzero and does not warn."""
    if src.is_complex and not dst.is_complex and dst is not D.bool:
        from ._warn import warn_once
        warn_once("complex to real cast", "Casting complex values to real discards the imaginary part (Triggered "
                  "internally at /__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)")


def no_kernel(kernel: str, dt: D.dtype) -> NotImplementedError:
    """PyTorch's error for a dtype its kernel does not cover: ``"<kernel>" not implemented for 'Bool'``."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{dt.short}\'')


def _no_kernel(op, dt):
    raise no_kernel(op.kernel, dt)


def check_float8(op, sig):
    """PyTorch's CPU float8 dtypes have few kernels (the op table's ``float8`` field): a float8 input to an op
    without one raises ``"<kernel>" not implemented for 'Float8_e4m3fn'``, where JAX would compute."""
    for s in sig:
        if type(s) is tuple and s[1] in D.FLOAT8:
            kernel = op.kernel if op.float8 is False else op.float8(sig)
            if kernel is not None:
                raise no_kernel(kernel, s[1])
            return


# the ops torch 2.13 has uint16 / uint32 / uint64 kernels for (besides those computing in floating point): its
# "limited support" for the wide unsigned dtypes
_WIDE_UNSIGNED_OK = frozenset({"mul", "div", "true_divide", "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor",
                               "cat", "stack", "outer", "inner"})  # (outer, inner with a 0-d operand: torch's mul)


def _common(op, sig, wide_ok=False):
    r = result_type_sig(_entries(sig))
    if (r in D.UNSIGNED_WIDE and not (wide_ok or op.name in _WIDE_UNSIGNED_OK)) or r in (D.int4, D.uint4):
        _no_kernel(op, r)
    if r is D.complex32:
        raise RuntimeError("functorch_lite does not support torch.complex32 (ComplexHalf) results: JAX has no such "
                           "dtype; cast the float16 operand to float32 first")
    return r


def _all(sig, dt):
    return tuple(None if s is None else dt for s in sig)


def rule_same(op, sig, sargs):
    """Output has the input's dtype; nothing is cast (neg, abs, clone, views, movement)."""
    dt = _first_tensor_dtype(sig)
    if op.check_dtype is not None:
        op.check_dtype(op, dt)
    return (None,) * len(sig), (dt,) * op.nout


def rule_elementwise(op, sig, sargs):
    r = _common(op, sig)
    if op.check_dtype is not None:
        op.check_dtype(op, r)
    return _all(sig, r), (r,) * op.nout


def rule_float(op, sig, sargs):
    """Integer/bool inputs compute in the default float (true division, exp, sqrt, sigmoid...)."""
    r = default_float_of(_common(op, sig, wide_ok=True))
    return _all(sig, r), (r,) * op.nout


def rule_float_only(op, sig, sargs):
    """Floating/complex inputs only (softmax of Long raises, PyTorch's message)."""
    r = _common(op, sig)
    dt_arg = op.sarg(sargs, "dtype")
    if dt_arg is not None:
        r = D.as_dtype(dt_arg)
    elif r.category < D.FLOAT:
        _no_kernel(op, r)
    return _all(sig, r), (r,) * op.nout


def rule_compare(op, sig, sargs):
    r = result_type_sig(_entries(sig))
    if (r in D.UNSIGNED_WIDE and op.name not in _WIDE_UNSIGNED_OK) or r is D.complex32:
        _no_kernel(op, r)
    return _all(sig, r), (D.bool,) * op.nout


def rule_logical(op, sig, sargs):
    return (None,) * len(sig), (D.bool,) * op.nout


def rule_bitwise(op, sig, sargs):
    r = _common(op, sig)
    if r.category > D.INT:
        _no_kernel(op, r)
    return _all(sig, r), (r,) * op.nout


def rule_sum(op, sig, sargs):
    """Reductions that accumulate integers in int64 (sum, prod, cumsum, cumprod; PRO-13)."""
    dt = _first_tensor_dtype(sig)
    dt_arg = op.sarg(sargs, "dtype")
    if dt_arg is not None:
        r = D.as_dtype(dt_arg)
        discards_imag(dt, r)  # (in the rule: once per signature; the warning is torch's once per process)
    else:
        r = D.int64 if dt.category <= D.INT else dt
    if r in D.FLOAT8:
        _no_kernel(op, r)
    return (r,) + (None,) * (len(sig) - 1), (r,) * op.nout


def rule_mean(op, sig, sargs):
    """mean/var/std: floating or complex only (PRO-12)."""
    dt = _first_tensor_dtype(sig)
    dt_arg = op.sarg(sargs, "dtype")
    r = D.as_dtype(dt_arg) if dt_arg is not None else dt
    discards_imag(dt, r)
    if r.category < D.FLOAT:
        raise RuntimeError(f"{op.name}(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {r.short}")
    if r in D.FLOAT8:
        _no_kernel(op, r)
    outs = (r,) * op.nout
    if op.name in ("var", "std", "var_mean", "std_mean") and r.is_complex:
        outs = (r.to_real(),) + outs[1:]
    return (r,) + (None,) * (len(sig) - 1), outs


def rule_matmul(op, sig, sargs):
    """matmul-family: no promotion; both operands must have one dtype (PRO-33/34), with the message of
    the kernel PyTorch lowers to (dot for 1-d @ 1-d, addmv for 2-d @ 1-d, bmm for batched)."""
    ts = [s for s in sig if type(s) is tuple]
    dts = [s[1] for s in ts]
    for d in dts[1:]:
        if d is not dts[0]:
            nds = tuple(s[0] for s in ts[:2])
            if nds[0] >= 3 and nds[1] in (1, 2) and op.name == "matmul":
                break  # (batch @ matrix / vector: whether PyTorch folds it into an mm depends on the strides; the
                # op's check words it)
            if nds == (1, 1):
                msg = f"dot : expected both vectors to have same dtype, but found {dts[0].short} and {d.short}"
            elif nds == (2, 1):
                msg = (f"addmv input tensors must have the same dtype, but got {d.short}, {dts[0].short}, and "
                       f"{d.short}")
            elif max(nds) > 2:
                msg = f"expected scalar type {dts[0].short} but found {d.short}"
            else:
                msg = f"expected m1 and m2 to have the same dtype, but got: {_cname(dts[0])} != {_cname(d)}"
            raise RuntimeError(msg)
    r = dts[0]
    if r in D.FLOAT8 or r is D.bool or r in D.UNSIGNED_WIDE:
        nds = tuple(s[0] for s in ts[:2])
        if nds[1] == 1:  # matrix/batch @ vector is a matrix-vector product (batches fold into rows)
            kernel = "dot" if nds[0] == 1 else "addmv_impl_cpu"
        else:  # batch @ matrix folds into one mm; a batched right operand is a bmm
            kernel = "bmm" if nds[1] > 2 else "addmm_impl_cpu_"
        if r not in D.FLOAT8 or kernel != "addmm_impl_cpu_":  # PyTorch has a CPU float8 mm (2-d), nothing else
            raise no_kernel(kernel, r)
    return (None,) * len(sig), (r,) * op.nout


def rule_index(op, sig, sargs):
    """First argument keeps its dtype; the others are indices (int64/int32) or masks."""
    dt = _first_tensor_dtype(sig)
    return (None,) * len(sig), (dt,) + (D.int64,) * (op.nout - 1)


def rule_value_index(op, sig, sargs):
    """(values, int64 indices) results: max/min with dim, topk, sort, mode..."""
    dt = _first_tensor_dtype(sig)
    if op.check_dtype is not None:
        op.check_dtype(op, dt)
    return (None,) * len(sig), (dt, D.int64)


def rule_int64(op, sig, sargs):
    """Index-returning ops: argmax, argmin, argsort, nonzero..."""
    return (None,) * len(sig), (D.int64,) * op.nout


def rule_first_promote(op, sig, sargs):
    """Ops whose output follows the first tensor, with other tensor-like args cast to it (lerp,
    masked_fill value, clamp bounds on the input's dtype...)."""
    dt = _first_tensor_dtype(sig)
    casts = tuple(None if s is None else dt for s in sig)
    return casts, (dt,) * op.nout


def _same_float8(sig):
    """All tensor inputs share one float8 dtype (cat/stack/where copy such values without arithmetic)."""
    dts = {s[1] for s in sig if type(s) is tuple}
    return next(iter(dts)) if len(dts) == 1 and next(iter(dts)) in D.FLOAT8 and \
        all(type(s) is tuple or s is None for s in sig) else None


def rule_where(op, sig, sargs):
    """where(cond, x, y): cond is a mask, x/y promote (PRO-32)."""
    r = _same_float8(sig[1:]) or _common(op, sig[1:])
    return (None, r, r), (r,)


def rule_cat(op, sig, sargs):
    """cat/stack over a list: all inputs promote (BC-11)."""
    r = _same_float8(sig) or _common(op, sig)
    return _all(sig, r), (r,)


def rule_pow(op, sig, sargs):
    r = _common(op, sig)
    return _all(sig, r), (r,)


RULES = {
    "same": rule_same, "elementwise": rule_elementwise, "float": rule_float, "float_only": rule_float_only,
    "compare": rule_compare, "logical": rule_logical, "bitwise": rule_bitwise, "sum": rule_sum,
    "mean": rule_mean, "matmul": rule_matmul, "index": rule_index, "value_index": rule_value_index,
    "int64": rule_int64, "first": rule_first_promote, "where": rule_where, "cat": rule_cat, "pow": rule_pow,
}


# the C++ type names (caffe2 TypeMeta) PyTorch's messages print for a dtype ("... with dtype long int")
_CNAMES = {"Float": "float", "Double": "double", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
           "Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char", "Byte": "unsigned char",
           "UInt16": "short unsigned int", "UInt32": "unsigned int", "UInt64": "long unsigned int", "Bool": "bool",
           "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>",
           "ComplexHalf": "c10::complex<c10::Half>"}


def _cname(d):
    """``d``'s C++ type name as PyTorch's messages print it (``long int``, ``c10::Half``, ``c10::Float8_e4m3fn``)."""
    return _CNAMES.get(d.short) or ("c10::" + d.short if d.short.startswith("Float8") else d.short)
