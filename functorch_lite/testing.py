"""``torch.testing.assert_close``: PyTorch's comparison of tensors, Python numbers, NumPy arrays and nested
sequences / mappings of them, with its default tolerances per dtype, its attribute checks (shape, device, dtype,
stride) and its failure messages word for word; the deprecated ``assert_allclose`` over it; ``make_tensor``."""
from __future__ import annotations

import cmath
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# (rtol, atol) by dtype name; other dtypes compare exactly
_DTYPE_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5), "float32": (1.3e-6, 1e-5),
                     "float64": (1e-7, 1e-7), "complex32": (0.001, 1e-5), "complex64": (1.3e-6, 1e-5),
                     "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPE = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    def __init__(self, type_, msg, id_=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type_, msg, id_


def _tolerances(names, rtol, atol, precisions=_DTYPE_PRECISIONS):
    if (rtol is None) ^ (atol is None):
        raise _Mismatch(ValueError, f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                                    f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [precisions.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_msg(default_identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"
    msg = f"{default_identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol) + diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff, None,
                         rtol)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    rtol, atol = _tolerances([_NUMBER_DTYPE[type(actual)], _NUMBER_DTYPE[type(expected)]], rtol, atol)
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol))


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    from . import isclose, promote_types
    actual, expected = actual.detach(), expected.detach()
    rtol, atol = _tolerances([str(actual.dtype).split(".")[-1], str(expected.dtype).split(".")[-1]], rtol, atol)
    for name, a, b, on in (("shape", actual.shape, expected.shape, True),
                           ("device", actual.device, expected.device, check_device),
                           ("dtype", actual.dtype, expected.dtype, check_dtype),
                           ("stride()", actual.stride(), expected.stride(), check_stride)):
        if on and a != b:
            raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.")
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        common = promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        raise _Mismatch(AssertionError, _scalar_msg(actual.item(), expected.item(), rtol, atol))
    shape = tuple(actual.shape)
    n = matches.numel()
    mismatches = n - int(matches.sum())
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        from . import int64
        a, e = a.to(int64), e.to(int64)
    abs_diff = (a - e).abs()
    abs_diff[m] = 0
    max_abs, abs_i = abs_diff.max(0)
    rel_diff = abs_diff / e.abs()
    rel_diff[m] = 0
    max_rel, rel_i = rel_diff.max(0)
    raise _Mismatch(AssertionError, _mismatch_msg(
        "Tensor-likes", f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})", max_abs.item(),
        tuple(int(i) for i in np.unravel_index(int(abs_i), shape)), atol, max_rel.item(),
        tuple(int(i) for i in np.unravel_index(int(rel_i), shape)), rtol))


def _compare(actual, expected, id_, opts):
    from ._tensor.tensor import Tensor
    if isinstance(actual, Sequence) and not isinstance(actual, str) and isinstance(expected, Sequence) and \
            not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                            id_)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, id_ + (i,), opts)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(ek - ak)}\n"
                            f"Additional keys in the actual mapping: {sorted(ak - ek)}", id_)
        try:
            keys = sorted(ak)
        except TypeError:
            keys = list(actual.keys())
        for k in keys:
            _compare(actual[k], expected[k], id_ + (k,), opts)
        return
    try:
        if actual is None or expected is None:
            if not (actual is None and expected is None):
                raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
        elif isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
            if bool(actual) is not bool(expected):
                raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        elif type(actual) in _NUMBER_DTYPE and type(expected) in _NUMBER_DTYPE:
            _compare_numbers(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_dtype"])
        elif isinstance(actual, (Tensor, np.ndarray)) and isinstance(expected, (Tensor, np.ndarray)) and \
                isinstance(actual, np.ndarray) == isinstance(expected, np.ndarray):
            if isinstance(actual, np.ndarray):
                from . import as_tensor
                actual, expected = as_tensor(actual), as_tensor(expected)
            _compare_tensors(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_device"],
                             opts["check_dtype"], opts["check_stride"])
        else:
            raise TypeError(f"No comparison pair was able to handle inputs of type {_type_name(actual)} and "
                            f"{_type_name(expected)}.")
    except _Mismatch as m:
        m.id = id_
        raise


def _type_name(x) -> str:
    """``type(x)`` as PyTorch prints it; the facade's Tensor under its PyTorch name, as its dtypes and Sizes are."""
    from ._tensor.tensor import Tensor
    return "<class 'torch.Tensor'>" if type(x) is Tensor else str(type(x))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise PyTorch's AssertionError (or its ValueError / TypeError for bad arguments) unless ``actual`` and
    ``expected`` are close: ``|actual - expected| <= atol + rtol * |expected|`` elementwise, after the attribute
    checks, with the dtypes' default tolerances where ``rtol``/``atol`` are not given."""
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                check_stride=check_stride)
    try:
        _compare(actual, expected, (), opts)
    except _Mismatch as m:
        text = m.msg
        if m.id:
            text += f"\n\nThe failure occurred for item {''.join(f'[{item!r}]' for item in m.id)}"
        if callable(msg):
            text = msg(text)
        elif msg is not None:
            text = msg
        raise m.type(text) from None


# assert_allclose's own defaults (looser than assert_close's; other dtypes compare exactly)
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated ``torch.testing.assert_allclose`` (its FutureWarning): ``assert_close`` with NaNs equal, no
    dtype or stride check, numbers made tensors (``expected`` of ``actual``'s dtype) and its own default tolerances
    when neither is given."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from . import tensor
    from ._tensor.tensor import Tensor
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([actual.dtype.name, expected.dtype.name], None, None, _ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """``torch.testing.make_tensor``: a tensor of ``shape`` with values drawn uniformly from ``[low, high)``: by
    default [0, 2) for bool, [-9, 10) for integers (clamped to the dtype: [0, 10) unsigned), [-9, 9) for floating
    and complex types (each of real and imaginary part); given bounds are clamped to the dtype's finite range
    (integers: ``low`` and ``high`` ceiled). ``noncontiguous``: every other element of a last dim twice as long (with
    more than one element); ``exclude_zero``: zeros replaced by 1 (bool, integers) or the dtype's ``tiny``. PyTorch's
    ValueErrors and TypeError for what it refuses, and its FutureWarning for ``low == high`` (floating types)."""
    from . import dtypes as D, empty, finfo, iinfo, randint, view_as_real
    integral = dtype.category <= D.INT and dtype not in (D.int4, D.uint4)
    floating = dtype.category >= D.FLOAT and dtype not in (D.float8_e8m0fnu,)

    def bounds(lowest, highest, default_low, default_high):
        lo = default_low if low is None else low
        hi = default_high if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if lo == hi and dtype.category >= D.FLOAT and dtype not in D.FLOAT8:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                          "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                          FutureWarning, stacklevel=3)
        elif lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        elif hi < lowest or lo >= highest:
            raise ValueError(f"The value interval specified by `low` and `high` is [{lo}, {hi}), but {dtype} only "
                             f"supports [{lowest}, {highest})")
        lo, hi = min(max(lo, lowest), highest), min(max(hi, lowest), highest)
        return (math.ceil(lo), math.ceil(hi)) if integral else (lo, hi)

    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and integral:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # (twice the last dim, so that the kept elements are not the neighbours of a contiguous one)
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is D.bool:
        result = randint(*bounds(0, 2, 0, 2), shape, device=device, dtype=dtype)
    elif integral:
        ii = iinfo(dtype)  # (randint can't sample int64's max: its bound would overflow)
        result = randint(*bounds(ii.min, ii.max + (dtype is not D.int64), -9, 10), shape, device=device, dtype=dtype)
    elif floating:
        fi = finfo(dtype)
        lo, hi = bounds(fi.min, fi.max, -9, 9)
        small = dtype in D.FLOAT8  # (drawn in float32, then cast)
        result = empty(shape, device=device, dtype=D.float32 if small else dtype)
        target = view_as_real(result) if dtype.is_complex else result
        if hi - lo >= finfo(target.dtype).max:  # (uniform_ needs high - low representable: draw half, double it)
            target.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            target.uniform_(lo, hi)
        if small:
            result = result.to(dtype)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). To request "
                        "support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:  # (offset by one: catches offset handling too)
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else finfo(dtype).tiny
    if dtype.category >= D.FLOAT and dtype not in D.FLOAT8:
        result.requires_grad = requires_grad
    return result
