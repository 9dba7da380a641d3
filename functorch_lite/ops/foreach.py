"""``torch._foreach_*``: PyTorch's multi-tensor ops, generated from the facade's own ops.

Each ``_foreach_<op>`` maps one facade op over its list arguments: ``functorch_lite.<op>`` for the out-of-place
form (a tuple of results, as PyTorch's), the in-place ``Tensor.<op>_`` (or the op table's in-place dispatch where
the Tensor has no such method: ``maximum``, ``minimum``) for the ``_`` form, which returns its ``self`` list.
So values, dtypes (each element promotes as the plain op does), autograd (each result's grad_fn is the plain
op's), in-place errors and ``compile`` behave as the element-wise op; nothing is written twice. The table
:data:`SIGS` holds each name's overloads in PyTorch's words (its argument parser's signatures), which both drive
the parsing and form the TypeError of a call that matches none.

A 0-d tensor given as a Number stays a tensor where the plain op computes the same with it (promoted as the
Python number PyTorch reads from it would be; lerp's weight in a float32 / float64 list's dtype); where PyTorch's
read of it on the host matters (a bfloat16 list's lerp weight, ``addcmul``'s / ``addcdiv``'s value, ``norm``'s
ord, the packed Tensor ``scalars`` of ``addcmul`` / ``addcdiv``) it is read on the host, as PyTorch does: inside
``compile`` a data-dependent read. The grad_fn of each result is the plain op's (``MulBackward0``),
not PyTorch's ``ForeachMulBackward0List``-style names.

Example::

    >>> ema, params = [torch.zeros(2)], [torch.ones(2)]
    >>> torch._foreach_lerp_(ema, params, 0.1)
    [tensor([0.1000, 0.1000])]
"""
from __future__ import annotations

import numbers
import sys

from .. import dtypes as D
from .._tensor.tensor import Tensor
from ..autograd import graph as _graph
from .._promotion import CLAMP_COMPLEX, _cname, can_cast, no_kernel, result_type
from ._dispatch import inplace as _inplace_dispatch
from ._registry import OPS

_SELF = "tuple of Tensors self"
_BIN = ("Number scalar", "tuple of Scalars scalars", "tuple of Tensors other")
_MULDIV = ("tuple of Scalars scalars", "Tensor other", "tuple of Tensors other", "Number scalar")
_ADDC = tuple(f"tuple of Tensors tensor1, tuple of Tensors tensor2, {p}"
              for p in ("tuple of Scalars scalars", "Tensor scalars", "Number value = 1"))
_UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 neg "
          "reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()

# name -> (the signatures after ``self`` as PyTorch's parser prints them, whether an in-place form exists,
#          whether an out-of-place form exists). A signature starting with "|" replaces ``self`` (pow's Number base).
SIGS = {
    "add": (("Number scalar", "tuple of Scalars scalars", "Tensor other, *, Number alpha = 1",
             "tuple of Tensors other, *, Number alpha = 1"), True, True),
    "sub": (("Number scalar", "tuple of Scalars scalars", "tuple of Tensors other, *, Number alpha = 1"), True, True),
    "mul": (_MULDIV, True, True),
    "div": (_MULDIV, True, True),
    "clamp_min": (_BIN, True, True),
    "clamp_max": (_BIN, True, True),
    "maximum": (_BIN, True, True),
    "minimum": (_BIN, True, True),
    "pow": (("|Number self, tuple of Tensors exponent", "Number exponent", "tuple of Scalars exponent",
             "tuple of Tensors exponent"), True, True),
    "lerp": (("tuple of Tensors tensors1, Number weight", "tuple of Tensors tensors1, tuple of Scalars weight",
              "tuple of Tensors tensors1, tuple of Tensors weights"), True, True),
    "addcmul": (_ADDC, True, True),
    "addcdiv": (_ADDC, True, True),
    "norm": (("Number ord = 2, ScalarType dtype = None",), False, True),
    "powsum": (("Number ord = 2, ScalarType dtype = None",), False, True),
    "max": (("",), False, True),
    "mm": (("tuple of Tensors mat2",), False, True),
    "clone": (("*, MemoryFormat memory_format = None",), False, True),
    "copy": (("tuple of Tensors src, bool non_blocking = False",), True, False),
    "zero": (("",), True, False),
    **{n: (("",), True, True) for n in _UNARY},
}


_NODEFAULT = object()
_DEFAULTS = {"None": None, "False": False, "1": 1, "2": 2}  # (the defaults the signatures print)


class _Param:
    __slots__ = ("kind", "name", "default", "kwonly")

    def __init__(self, text, kwonly):
        text, eq, default = text.partition(" = ")
        self.kind, _, self.name = text.rpartition(" ")
        self.default = _DEFAULTS[default] if eq else _NODEFAULT
        self.kwonly = kwonly


def _parse_sig(text: str):
    """``"tuple of Tensors other, *, Number alpha = 1"`` -> its params (``self`` first) and the printed form."""
    full = text[1:] if text.startswith("|") else (_SELF + (", " + text if text else ""))
    params, kwonly = [], False
    for part in full.split(", "):
        if part == "*":
            kwonly = True
            continue
        params.append(_Param(part, kwonly))
    return params, f"({full})"


def _is_number(v) -> bool:
    """PyTorch's parser's ``Number``: a Python / NumPy number, or a 0-d tensor that does not require grad."""
    if isinstance(v, Tensor):
        return v.dim() == 0 and not v.requires_grad
    return isinstance(v, numbers.Number)


_SHOWN = {"ScalarType": "torch.dtype", "MemoryFormat": "torch.memory_format"}


def _fits(kind: str, v, argnum: int) -> bool:
    """Whether ``v`` is a ``kind`` argument, as PyTorch's parser decides (a list given for a tensor list must hold
    only tensors: its TypeError otherwise, whichever overload is tried)."""
    if kind == "tuple of Tensors":
        if not isinstance(v, (list, tuple)):
            return False
        for j, t in enumerate(v):
            if not isinstance(t, Tensor):
                raise TypeError(f"expected Tensor as element {j} in argument {argnum}, but got {type(t).__name__}")
        return True
    if kind == "tuple of Scalars":  # (Python / NumPy numbers only: a list of 0-d tensors is a tensor list)
        return isinstance(v, (list, tuple)) and all(isinstance(x, numbers.Number) and not isinstance(x, Tensor)
                                                     for x in v)
    if kind == "Tensor":
        return isinstance(v, Tensor)
    if kind == "Number":
        return _is_number(v)
    if kind == "ScalarType":
        return v is None or isinstance(v, D.dtype)
    if kind == "MemoryFormat":
        return v is None or type(v).__name__ == "memory_format"
    return isinstance(v, bool)


def _tname(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _bind(fname, params, args, kwargs, strict):
    """The values of ``params`` from a call; None when the call does not fit them (``strict``: raise the
    TypeError Python's / PyTorch's parser gives instead)."""
    pos = [p for p in params if not p.kwonly]
    if len(args) > len(pos):
        if not strict:
            return None
        need = sum(p.default is _NODEFAULT for p in pos)
        n = str(len(pos)) if need == len(pos) else f"from {need} to {len(pos)}"
        raise TypeError(f"{fname}() takes {n} positional argument{'s' * (len(pos) != 1)} but {len(args)} "
                        f"{'was' if len(args) == 1 else 'were'} given")
    vals = dict(zip([p.name for p in pos], args))
    for k, v in kwargs.items():
        if k in vals or not any(p.name == k for p in params):
            if not strict:
                return None
            raise TypeError(f"{fname}() got multiple values for argument '{k}'" if k in vals else
                            f"{fname}() got an unexpected keyword argument '{k}'")
        vals[k] = v
    missing = [p.name for p in params if p.name not in vals and p.default is _NODEFAULT]
    if missing:
        if not strict:
            return None
        # (PyTorch's wording, its plural included)
        raise TypeError(f"{fname}() missing {len(missing)} required positional argument{'s' * (len(missing) == 1)}"
                        ": " + ", ".join(f'"{m}"' for m in missing))
    for p in params:
        vals.setdefault(p.name, p.default)
    return vals


def _match(fname, overloads, args, kwargs):
    """The first overload, in PyTorch's order, that a call fits (a 0-d tensor fits ``Number`` too: ``add``'s
    Number overload takes it before its Tensor one, ``mul``'s Tensor overload comes first). None fitting: the one
    overload whose argument count fits the call gives its own TypeError, else PyTorch's list of signatures."""
    for params, _ in overloads:
        vals = _bind(fname, params, args, kwargs, False)
        if vals is not None and all(_fits(p.kind, vals[p.name], i) for i, p in enumerate(params)):
            return params, vals
    n = len(args) + len(kwargs)
    plausible = [params for params, _ in overloads
                 if sum(p.default is _NODEFAULT for p in params) <= n <= len(params)]
    if len(overloads) == 1 or len(plausible) == 1:
        params = overloads[0][0] if len(overloads) == 1 else plausible[0]
        vals = _bind(fname, params, args, kwargs, True)
        for i, p in enumerate(params):
            v = vals[p.name]
            if not _fits(p.kind, v, i):
                where = f" (position {i + 1})" if i < len(args) else ""
                raise TypeError(f"{fname}(): argument '{p.name}'{where} must be {_SHOWN.get(p.kind, p.kind)}, not "
                                f"{_tname(v)}")
    got = ", ".join([_tname(a) for a in args] + [f"{k}={_tname(v)}" for k, v in kwargs.items()])
    lines = "\n".join(f" * {shown}" for _, shown in overloads)
    raise TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), but expected one "
                    f"of:\n{lines}\n")


def _check_lists(params, vals):
    """PyTorch's checks on the lists (its messages), and the per-element values of each list argument."""
    lists = [(i, p.name) for i, p in enumerate(params) if p.kind == "tuple of Tensors"]
    first = vals[lists[0][1]]
    if not first:
        raise RuntimeError("Tensor list must have at least one tensor.")
    n = len(first)
    for _, name in lists[1:]:
        if len(vals[name]) != n:
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(vals[name])}")
    for p in params:
        v = vals[p.name]
        if p.kind == "tuple of Scalars" and len(v) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        if p.kind == "Tensor" and p.name == "scalars":  # (addcmul/addcdiv: one packed value per element)
            if v.dim() != 1:
                raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {v.dim()} instead.")
            if v.shape[0] != n:
                raise RuntimeError(f"Expected length of scalars to match input of length {n} but got "
                                   f"{v.shape[0]} instead.")
            vals[p.name] = v.tolist()  # (PyTorch reads them as Scalars on the host)
        elif p.kind == "Tensor" and v.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {v.dim()} dimensions and "
                               f"{v.numel()} elements.")
    return n


def _element(params, vals, i, value_kw, scalar_of):
    """The positional and keyword arguments of the plain op for element ``i`` (``value_kw``: the last argument is
    the plain op's keyword-only ``value``, as addcmul's; ``scalar_of(v, t)``: what the plain op takes for a 0-d
    tensor ``v`` given as a Number, ``t`` the element's first tensor)."""
    pos, kw = [], {}
    t = None
    for p in params:
        v = vals[p.name]
        if p.kind in ("tuple of Tensors", "tuple of Scalars") or p.kind == "Tensor" and p.name == "scalars":
            v = v[i]
        if t is None and p.kind == "tuple of Tensors":
            t = v
        if p.kwonly:
            if v is not None:
                kw[p.name] = v
        elif value_kw and p is params[-1]:
            kw["value"] = v
        else:
            pos.append(v)
    for j, (p, v) in enumerate(zip([p for p in params if not p.kwonly], pos)):
        if p.kind == "Number" and isinstance(v, Tensor):
            pos[j] = scalar_of(v, t)
    if isinstance(kw.get("value"), Tensor):
        kw["value"] = scalar_of(kw["value"], t)
    return pos, kw


def _as_scalar(v, t):
    """A 0-d tensor read as a Scalar, promoted with the element ``t`` as a Python number of its kind would be (a
    float64 one with an int64 list gives float32, PyTorch's default dtype), without reading its value."""
    kind = False if v.dtype is D.bool else 0j if v.dtype.is_complex else 0.0 if v.dtype.is_floating_point else 0
    rt = result_type(t, kind)
    return v if result_type(t, v) is rt else v.to(rt)


def _as_weight(v, t):
    """A 0-d tensor given as lerp's weight: PyTorch reads it as a Scalar in ``t``'s computation type, which for a
    float32 / float64 / complex ``t`` is ``t``'s dtype (so it stays a tensor: the same bits, and traceable);
    a low-precision ``t`` computes in float32, where the value is read on the host."""
    if t.dtype.is_complex or t.dtype.is_floating_point and t.dtype.itemsize >= 4:
        return v.to(t.dtype)
    return v.item()


def _on_host(v, t):
    return v.item()


# how each op takes a 0-d tensor given as a Number (PyTorch reads a Scalar from it)
_SCALAR_OF = {"lerp": _as_weight, "addcmul": _on_host, "addcdiv": _on_host, "norm": _on_host, "powsum": _on_host}


def _ns():
    """The ``functorch_lite`` namespace (its plain ops; this module is imported while it is being built)."""
    return sys.modules["functorch_lite"]


def _max(t):
    if t.numel() == 0:
        raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over zero elements is "
                           "undefined.")
    return t.max()


def _powsum(t, ord=2, dtype=None):
    """sum(|x| ** ord) (each element's power, then the sum; no root): low-precision floats accumulate in float32."""
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise no_kernel("powsum_cpu", t.dtype)
    x = t if dtype is None else t.to(dtype)
    a = x.abs()
    out = a.dtype
    if a.dtype.itemsize < 4:
        a = a.float()
    return a.pow(ord).sum().to(out)


# plain ops where the foreach op is not ``functorch_lite.<name>`` with the same arguments
_OUT = {"norm": lambda t, ord=2, dtype=None: _ns().linalg.vector_norm(t, ord, dtype=dtype),
        "powsum": _powsum, "max": _max,
        "clone": lambda t, memory_format=None: _ns().clone(t) if memory_format is None else
        _ns().clone(t, memory_format=memory_format)}
_IN = {"copy": lambda t, src, non_blocking=False: t.copy_(src)}


def _inplace_of(name):
    meth = _IN.get(name) or Tensor.__dict__.get(name + "_")
    if meth is not None:
        return meth
    op = OPS[name]  # (an op without a Tensor.<op>_ method: the op table's in-place write)
    return lambda t, *others: _inplace_dispatch(op, (t,) + others, ())


# PyTorch's foreach clamp family (clamp_min / maximum on its maximum kernel, clamp_max / minimum on its minimum
# kernel) checks before the plain op runs: complex refused, and with a Number or scalar list an in-place cast error
# that names an integer ``self``'s type as C++ does (``_promotion._cname``)


def _clamp_check(kernel):
    def check(pos, scalar, inplace):
        t, other = pos
        rt = result_type(t, other)
        if scalar:
            if rt.is_complex or t.dtype.is_complex:
                raise NotImplementedError(CLAMP_COMPLEX)
            if inplace and not can_cast(rt, t.dtype):
                raise RuntimeError(f"result type {rt.short} can't be cast to the desired output type "
                                   f"{t.dtype.short if t.dtype.is_floating_point else _cname(t.dtype)}")
        elif rt.is_complex:
            if inplace and not t.dtype.is_complex:
                raise RuntimeError(f"result type {rt.short} can't be cast to the desired output type {t.dtype.short}")
            raise no_kernel(kernel, rt)
    return check


# foreach maximum / minimum with a Number or scalar list run PyTorch's foreach clamp_min / clamp_max kernels
_CLAMP_OF = {"maximum": "clamp_min", "minimum": "clamp_max"}
_CHECKS = {"clamp_min": _clamp_check("maximum_cpu"), "maximum": _clamp_check("maximum_cpu"),
           "clamp_max": _clamp_check("minimum_cpu"), "minimum": _clamp_check("minimum_cpu")}


def _make(name: str, inplace: bool):
    fname = f"_foreach_{name}{'_' * inplace}"
    overloads = tuple(_parse_sig(s) for s in SIGS[name][0] if not (inplace and s.startswith("|")))
    cache = []
    value_kw = name in ("addcmul", "addcdiv")
    scalar_of = _SCALAR_OF.get(name, _as_scalar)

    def fn(*args, **kwargs):
        params, vals = _match(fname, overloads, args, kwargs)
        n = _check_lists(params, vals)
        if not cache:
            cache.append(_inplace_of(name) if inplace else (_OUT.get(name) or getattr(_ns(), name)))
        plain = cache[0]
        check = _CHECKS.get(name)
        scalar = check is not None and any(p.kind in ("Number", "tuple of Scalars") for p in params)
        if scalar and name in _CLAMP_OF:  # (maximum's plain op takes tensors only: PyTorch's clamp kernel)
            plain = _inplace_of(_CLAMP_OF[name]) if inplace else getattr(_ns(), _CLAMP_OF[name])
        if inplace:
            selfs = vals["self"]
            for t in selfs:  # (refused before any element is written, as PyTorch's)
                _graph.check_inplace(t)
            for i in range(n):
                pos, kw = _element(params, vals, i, value_kw, scalar_of)
                if check is not None:
                    check(pos, scalar, True)
                plain(*pos, **kw)
            return selfs
        out = []
        for i in range(n):
            pos, kw = _element(params, vals, i, value_kw, scalar_of)
            if check is not None:
                check(pos, scalar, False)
            out.append(plain(*pos, **kw))
        return tuple(out)

    fn.__name__ = fn.__qualname__ = fname
    fn.__module__ = "functorch_lite"
    shown = "\n".join(" * " + s for _, s in overloads)
    fn.__doc__ = (f"``torch.{fname}``: ``{'Tensor.' + name + '_' if inplace else 'torch.' + name}`` over each "
                  f"element of the lists.\n\nSignatures::\n\n{shown}\n")
    return fn


FUNCTIONS = {f"_foreach_{n}{'_' * ip}": _make(n, ip)
             for n, (_, has_inplace, has_out) in SIGS.items()
             for ip in (False, True) if (has_inplace if ip else has_out)}
