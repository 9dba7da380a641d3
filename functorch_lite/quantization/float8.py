"""float8 helpers: ``_scaled_mm`` (PyTorch's CPU emulation of the fp8 GEMM) and amax scaling.

float8 tensors are storage formats on CPU (spec §2: ``f8 + 1`` raises); the way to compute with them is
``torch._scaled_mm``, which upcasts both float8 operands to float32, multiplies each by its scale
(per tensor, or per row of ``a`` / per column of ``b``), runs one float32 matmul, adds the bias,
divides by ``scale_result`` when the output is float8, and casts to ``out_dtype`` (float8 outputs
saturate, as every cast to ``float8_e4m3fn`` does). Here it is one ``@defop`` (one jitted kernel),
with torch 2.13's argument checks and exception types; the public function parses its arguments as torch's
argument parser does (:func:`parse_args`, also used by int8.py's ``_int_mm`` and fake quantization) and handles
``out=``.

``to_float8`` is the amax-scaling recipe of PyTorch's fp8 tutorials (activation/weight storage):
``scale = finfo(dtype).max / amax(x)``, ``x_f8 = clamp(x * scale).to(dtype)``, and it returns the
*inverse* scale, the form ``_scaled_mm`` takes: ``x ~= x_f8.float() * inv_scale``.
"""
from __future__ import annotations

import functools

import jax.numpy as jnp

from .. import dtypes as D
from .._promotion import promote_types
from .._tensor.tensor import Tensor
from .._tensor.views import shape_str as _shape_str
from ..autograd import grad_mode as _gm
from ..ops import _dispatch
from ..ops._dispatch import _type_name, broadcast_shapes as _broadcast_shapes
from ..ops._registry import OPS, defop
from ..ops.grad_overrides import aten_no_derivative

__all__ = ["_scaled_mm", "to_float8", "from_float8"]

_FP8_OUT = (D.float8_e4m3fn, D.float8_e5m2)
_REQUIRED = object()  # (a parameter without a default, in parse_args' tables)


def _smm_rule(op, sig, sargs):
    """Output dtype: ``out_dtype``, else the dtype of ``self`` (torch's ``_scaled_mm_cpu``); no casts."""
    out_dtype = op.sarg(sargs, "out_dtype")
    out = D.as_dtype(out_dtype) if out_dtype is not None else sig[0][1]
    return (None,) * len(sig), (out,)


def _invalid_scaling(a: Tensor, b: Tensor, sa: Tensor, sb: Tensor) -> ValueError:
    m = a._shape[0] if a._shape else 1
    n = b._shape[1] if len(b._shape) > 1 else 1
    return ValueError(
        "Invalid scaling configuration.\n"
        "- For TensorWise scaling, a and b should be float8, scales should be float and singletons.\n"
        f"- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be ({m}, 1) "
        f"and scale_b should be (1, {n}), and both should be contiguous.\n"
        f"Got mat_a.dtype()={a.dtype.short}, scale_a.dtype()={sa.dtype.short}, scale_a.size()={_shape_str(sa._shape)}, "
        f"scale_a.stride()={_shape_str(sa.stride())}, mat_b.dtype()={b.dtype.short}, scale_b.dtype()="
        f"{sb.dtype.short}, scale_b.size()={_shape_str(sb._shape)} and scale_b.stride()={_shape_str(sb.stride())}")


def _is_fp8(t: Tensor) -> bool:
    return t.dtype in D.FLOAT8


def _transposable(*ts: Tensor) -> None:
    """torch checks ``b``'s recipe on ``mat_b.t()`` and ``scale_b.t()``: ``t()`` of a tensor past 2-d raises."""
    for t in ts:
        if len(t._shape) > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(t._shape)}D")


def _tensorwise(mat: Tensor, scale: Tensor) -> bool:
    return _is_fp8(mat) and scale.dtype is D.float32 and scale.numel() == 1


def _rowwise(mat: Tensor, scale: Tensor, shape: tuple) -> bool:
    return _is_fp8(mat) and scale.dtype is D.float32 and scale._shape == shape and scale.is_contiguous()


def _recipe(a: Tensor, b: Tensor, sa: Tensor, sb: Tensor) -> bool:
    """torch 2.13's scaling recipe, checked as its ``_scaled_mm_cpu`` does (``a``'s side first; ``b``'s side on the
    transposes, which exist only once ``a``'s side fits): True for tensor-wise, False for row-wise, else its
    ValueError."""
    if _tensorwise(a, sa):
        _transposable(b, sb)
        if _tensorwise(b, sb):
            return True
    if a._shape and _rowwise(a, sa, (a._shape[0], 1)):
        _transposable(b, sb)
        if len(b._shape) == 2 and _rowwise(b, sb, (1, b._shape[1])):
            return False
    raise _invalid_scaling(a, b, sa, sb)


def _smm_check(targs, sargs):
    """torch 2.13's checks, in its order: scaling recipe (ValueError), then matrix shapes (RuntimeError), scales'
    strides, ``scale_result``, the bias (its size, then the in-place add into the float32 result: broadcast,
    promotion)."""
    a, b, sa, sb, bias, sr = targs
    tensorwise = _recipe(a, b, sa, sb)
    if len(a._shape) != 2:
        raise RuntimeError("mat1 must be a matrix")
    if len(b._shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(f"mat_a and mat_b shapes cannot be multiplied ({a._shape[0]}x{a._shape[1]} and "
                           f"{b._shape[0]}x{b._shape[1]})")
    if not tensorwise:
        if sa.stride(1) != 1:
            raise ValueError(f"expected scale_a.stride(1) to be 1, but got {sa.stride(1)}")
        if sb.stride(1) != 1:
            raise ValueError(f"expected scale_b.stride(1) to be 1, but got {sb.stride(1)}")
    if sr is not None and (sr.numel() != 1 or sr.dtype is not D.float32):
        raise RuntimeError("scale_result must be a float scalar")
    if bias is not None:
        m, n = a._shape[0], b._shape[1]
        if bias.numel() != n:
            raise RuntimeError(f"Bias must be size {n} but got {bias.numel()}")
        shape = _broadcast_shapes((m, n), bias._shape)
        if shape != (m, n):
            raise RuntimeError(f"output with shape {[m, n]} doesn't match the broadcast shape {list(shape)}")
        r = promote_types(D.float32, bias.dtype)  # (a float8 bias: torch's promotion error)
        if r.is_complex:
            raise RuntimeError(f"result type {r.short} can't be cast to the desired output type Float")


_NO_DERIVATIVE = aten_no_derivative("_scaled_mm")


@defop("_scaled_mm", float8=True, promote=_smm_rule, tensors=6, method=False, function=False, grad_fn="NotImplemented",
       check=_smm_check, kernel="_scaled_mm", out=False, saves=())
def _scaled_mm_kernel(input, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum):
    """The op of :func:`_scaled_mm` (its checks done): one jitted kernel. A floating result records torch's
    ``NotImplemented`` grad_fn when an input requires grad: its backward raises."""
    fa = input.astype(jnp.float32) * _scale(scale_a)
    fb = mat2.astype(jnp.float32) * _scale(scale_b)
    out = jnp.matmul(fa, fb)
    if bias is not None:
        out = out + D.cast_array(bias, D.from_numpy_dtype(bias.dtype), D.float32)
    dt = D.as_dtype(out_dtype) if out_dtype is not None else D.from_numpy_dtype(input.dtype)
    if scale_result is not None and out_dtype is not None and D.as_dtype(out_dtype) in _FP8_OUT:
        out = out * (jnp.float32(1) / scale_result.astype(jnp.float32).reshape(()))
    return D.cast_array(_NO_DERIVATIVE(out), D.float32, dt)


_SMM_PARAMS = (("input", "Tensor", _REQUIRED), ("mat2", "Tensor", _REQUIRED), ("scale_a", "Tensor", _REQUIRED),
               ("scale_b", "Tensor", _REQUIRED), ("bias", "Tensor?", None), ("scale_result", "Tensor?", None),
               ("out_dtype", "ScalarType?", None), ("use_fast_accum", "bool", False), ("*out", "Tensor?", None))


def _scaled_mm(*args, **kwargs) -> Tensor:
    """``torch._scaled_mm(input, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
    use_fast_accum=False, *, out=None)``: float8 GEMM with per-tensor or row/column-wise float32 scales.

    ``out = cast((a.float() * scale_a) @ (b.float() * scale_b) + bias [/ scale_result], out_dtype)``;
    ``scale_result`` is used only when ``out_dtype`` is a float8 type, ``use_fast_accum`` is accepted and
    ignored (as on CPU). ``out_dtype`` defaults to ``out``'s dtype, else ``input``'s. torch's argument parser's
    TypeErrors, and its checks in its order; no derivative (a result requiring grad has a ``NotImplemented``
    grad_fn whose backward raises).

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import _scaled_mm
    >>> a = torch.ones(2, 4).to(torch.float8_e4m3fn); b = torch.ones(3, 4).to(torch.float8_e4m3fn).t()
    >>> _scaled_mm(a, b, torch.tensor(0.5), torch.tensor(1.0), out_dtype=torch.float32)[0, 0].item()
    2.0
    """
    a, b, sa, sb, bias, sr, out_dtype, fast, out = parse_args("_scaled_mm", _SMM_PARAMS, args, kwargs)
    if out is not None:
        if _gm.is_grad_enabled() and out.requires_grad:
            raise RuntimeError("aten::_scaled_mm(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        if out_dtype is None:
            out_dtype = out.dtype
        elif out_dtype is not out.dtype:
            raise ValueError("out_dtype must match output matrix type")
    r = _dispatch.dispatch(OPS["_scaled_mm"], (a, b, sa, sb, bias, sr), (out_dtype, fast))
    return r if out is None else _dispatch.write_out(out, r)


# ---- torch's argument parser (python_arg_parser.cpp), for one signature -----------------------------------------
_SHOWN = {"Tensor": "Tensor", "Tensor?": "Tensor", "ScalarType?": "torch.dtype", "bool": "bool", "int": "int"}


def _fits(kind: str, v) -> bool:
    if kind in ("Tensor", "Tensor?"):
        return isinstance(v, Tensor)
    if kind == "ScalarType?":
        return isinstance(v, D.dtype)
    if kind == "bool":
        return type(v) is bool
    if kind == "int":  # (a Python int, or an integral 0-d tensor that does not require grad)
        return (isinstance(v, int) and type(v) is not bool) or (
            isinstance(v, Tensor) and not v._shape and v.dtype.category == D.INT and not v.requires_grad)
    raise AssertionError(kind)


@functools.lru_cache(maxsize=None)
def _layout(params: tuple) -> tuple:
    """A ``parse_args`` table as (its parameters' names, how many may be positional, how many are required,
    per parameter (name, kind, default, whether None stands for the default))."""
    names = tuple(p[0].lstrip("*") for p in params)
    spec = tuple((n, k, d, k.endswith("?")) for n, (_, k, d) in zip(names, params))
    return names, sum(not p[0].startswith("*") for p in params), sum(p[2] is _REQUIRED for p in params), spec


def parse_args(fname: str, params: tuple, args: tuple, kwargs: dict) -> list:
    """The values of ``params`` (``(name, kind, default)``, ``_REQUIRED`` for none; a name ``"*x"`` is keyword-only)
    from a call, with the TypeErrors of torch's parser (FunctionSignature::parse) in its order: too many positional
    arguments; then parameter by parameter a missing one (naming every required parameter from there on, with
    torch's plural) or one of the wrong type (its position when positional); then the keywords left over. A None
    for an optional parameter is its default."""
    names, npos, need, spec = _layout(params)
    nargs = len(args)
    if nargs > npos:
        n = str(npos) if need == npos else f"from {need} to {npos}"
        raise TypeError(f"{fname}() takes {n} positional argument{'s' * (npos != 1)} but {nargs} "
                        f"{'was' if nargs == 1 else 'were'} given")
    vals = list(args)
    for i, (name, kind, default, nullable) in enumerate(spec):
        if i < nargs:
            v = vals[i]
        else:
            v = kwargs.get(name, _REQUIRED) if kwargs else _REQUIRED
            vals.append(v)
        if v is _REQUIRED or (v is None and nullable):
            if v is _REQUIRED and default is _REQUIRED:
                missing = [f'"{p[0]}"' for p in spec[i:] if p[2] is _REQUIRED]
                raise TypeError(f"{fname}() missing {len(missing)} required positional argument"
                                f"{'s' * (len(missing) == 1)}: {', '.join(missing)}")
            vals[i] = default
        elif not _fits(kind, v):
            where = f" (position {i + 1})" if i < nargs else ""
            raise TypeError(f"{fname}(): argument '{name}'{where} must be {_SHOWN[kind]}, not {_type_name(v)}")
    if kwargs:
        for k in kwargs:
            if k in names[:nargs]:
                raise TypeError(f"{fname}() got multiple values for argument '{k}'")
            if k not in names:
                raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
    return vals


def _marked(kind: str, v) -> str:
    """An argument in torch's "didn't match" line: its type, between ``!`` where the parameter's type is another
    (a list shown with its elements' types)."""
    name = _type_name(v)
    if isinstance(v, (list, tuple)):
        name = f"{name} of [{', '.join(dict.fromkeys(_type_name(e) for e in v))}]"
    if kind == "float":
        ok = isinstance(v, (int, float)) and not isinstance(v, Tensor)
    else:
        ok = isinstance(v, Tensor) if kind == "Tensor" else (type(v) is int)
    return name if ok else f"!{name}!"


def invalid_combination(fname: str, sigs: tuple, names: tuple, kinds: tuple, args: tuple, kwargs: dict) -> TypeError:
    """torch's TypeError for a call that fits none of a function's overloads (``sigs``, each shown as torch shows
    it, with its parameters' ``kinds``; ``names``: the parameters' names, the same in every overload): what was
    given, and for each overload taking that many arguments the arguments of the wrong type."""
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    lines = []
    for sig, ks in zip(sigs, kinds):
        lines.append(f" * {sig}\n")
        if len(args) + len(kwargs) != len(ks):
            continue
        wrong = [k for k in kwargs if k not in names]
        if wrong:
            lines.append(f"      didn't match because some of the keywords were incorrect: {', '.join(wrong)}\n")
            continue
        marks = [_marked(k, a) for k, a in zip(ks, args)]
        marks += [f"{k}={_marked(ks[names.index(k)], v)}" for k, v in kwargs.items()]
        lines.append(f"      didn't match because some of the arguments have invalid types: ({', '.join(marks)})\n")
    return TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + "".join(lines))


def _scale(s):
    s = s.astype(jnp.float32)
    return s.reshape(()) if s.size == 1 else s


def to_float8(x: Tensor, dtype: D.dtype = D.float8_e4m3fn, *, dim: int | None = None) -> tuple[Tensor, Tensor]:
    """Amax-scale ``x`` into a float8 dtype; returns ``(x_f8, inv_scale)`` with ``x ~= x_f8.float() * inv_scale``.

    ``scale = finfo(dtype).max / max(amax(|x|), 1e-12)`` per tensor (``dim=None``, a 0-dim float32 scale) or per
    slice along ``dim`` (``keepdim`` shape, e.g. ``(M, 1)`` for rows: the row-wise form ``_scaled_mm`` takes);
    the scaled values are clamped to the dtype's range before the cast, so nothing overflows.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import to_float8
    >>> x_f8, inv = to_float8(torch.tensor([1.0, -2.0, 0.5]))
    >>> x_f8.dtype, round(inv.item() * 448, 6)
    (torch.float8_e4m3fn, 2.0)
    """
    from ..dtypes import finfo
    dtype = D.as_dtype(dtype)
    if dtype not in D.FLOAT8:
        raise ValueError(f"to_float8: dtype must be a float8 dtype, got {dtype}")
    fi = finfo(dtype)
    amax = x.abs().max() if dim is None else x.abs().amax(dim=dim, keepdim=True)
    scale = fi.max / amax.float().clamp(min=1e-12)
    x_scl_sat = (x.float() * scale).clamp(min=fi.min, max=fi.max)
    return x_scl_sat.to(dtype), scale.float().reciprocal()


def from_float8(x_f8: Tensor, inv_scale: Tensor, dtype: D.dtype = D.float32) -> Tensor:
    """Undo :func:`to_float8`: ``x_f8.to(dtype) * inv_scale`` (in ``dtype``, float32 by default).

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import to_float8, from_float8
    >>> from_float8(*to_float8(torch.tensor([1.0, -2.0]))).tolist()
    [1.0, -2.0]
    """
    return x_f8.to(dtype) * inv_scale.to(dtype)
