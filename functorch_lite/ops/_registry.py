"""The op table: ``@defop`` declares each op once.

An op is a jax function over arrays plus metadata: its torch name(s), which leading parameters are
tensors, its dtype rule (a row of ``_promotion.RULES``), its grad_fn name, whether it is a view,
whether it has an in-place ``op_`` form, its autocast policy. The Tensor methods, the
``functorch_lite.*`` functions and the in-place variants are generated from this table
(:func:`install`), so no op is written twice.
"""
from __future__ import annotations

import inspect
from typing import Callable

from .. import _promotion

OPS: dict = {}


# the ops PyTorch computes with a TensorIterator over their operands (pointwise: unary, binary, ternary, comparisons,
# activations, the losses' reduction='none' forms): their new output is laid out as the iterator lays it
# (``views.iter_strides``; ``_dispatch._lay_out_result``), so ``x.transpose(1, 2) * 2`` keeps ``x.transpose(1, 2)``'s
# strides and a channels-last input gives a channels-last result (an op's ``layout``: "iter")
POINTWISE = frozenset((
    "add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "maximum",
    "minimum", "fmax", "fmin", "atan2", "hypot", "copysign", "xlogy", "xlog1py", "lerp", "eq", "ne", "lt", "le", "gt",
    "ge", "isclose", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "heaviside", "gcd", "lcm", "logaddexp",
    "logaddexp2", "ldexp", "nextafter", "complex", "polar", "zeta", "igamma", "igammac", "where", "clamp",
    "clamp_min", "clamp_max", "addcmul", "addcdiv", "_mul_scalar", "_div_scalar",
    "neg", "abs", "sign", "sgn", "positive", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf",
    "erfc", "erfinv", "reciprocal", "lgamma", "digamma", "polygamma", "floor", "ceil", "trunc", "frac", "round",
    "square", "relu", "gelu", "silu", "mish", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit",
    "nan_to_num", "angle", "deg2rad", "rad2deg", "logit", "sinc", "entr", "i0", "i0e", "i1", "i1e", "erfcx", "ndtr",
    "ndtri", "log_ndtr", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "airy_ai", "spherical_bessel_j0", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
    "_dropout", "_leaky_relu", "_softplus", "_hardtanh", "_softsign", "_elu", "_hardswish", "_hardsigmoid",
    "_threshold", "_softshrink", "hardshrink", "_normalize", "prelu",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div"))
# the ops whose results PyTorch allocates like their first input (``empty_like`` / ``clone`` in preserve_format, then
# written: sort, flip, the out-of-place scatters into a copy of ``self``): laid out as ``clone`` lays it
# (``movement.lay_out``; an op's ``layout``: "self")
LIKE_SELF = frozenset(("sort", "argsort", "flip", "index_fill", "select_scatter", "diagonal_scatter", "slice_scatter",
                       "put", "index_put", "as_strided_scatter", "fill"))
# the ops whose results PyTorch allocates in their input's suggested memory format (a 2-d conv -- its weight's too --,
# pooling, batch / group norm, interpolate, pad but a circular one, cat of inputs all in one format): a channels-last
# input gives channels-last results of its rank (an op's ``layout``: "format"). (Torch's CPU conv3d, avg / adaptive
# 3-d pooling and circular pad give contiguous results.)
LIKE_FORMAT = frozenset(("convolution", "max_pool2d", "max_pool3d", "max_pool2d_with_indices",
                         "max_pool3d_with_indices", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
                         "_batch_norm", "group_norm", "_upsample", "_upsample_aa", "pad", "cat"))


# the ops PyTorch computes with LAPACK, which writes column-major matrices (batches contiguous): their results' matrix
# outputs (these output indices) are laid out so (``inv(A).stride() == (1, n)``: ``inv(A).mT.view(-1)`` works and
# ``inv(A).view(-1)`` raises, as in PyTorch; an op's ``layout``: "lapack", ``_dispatch._lay_out_lapack``). Solve and
# lu_solve with left=False transpose their operands in PyTorch and give row-major results (LAPACK_LEFT); lstsq's
# solution is the top rows of its column-major right-hand-side buffer of max(m, n) rows.
LAPACK = {"linalg_inv_ex": (0,), "linalg_solve_ex": (0,), "linalg_lu_solve": (0,), "linalg_cholesky_ex": (0,),
          "linalg_svd": (0, 2), "linalg_qr": (0, 1), "linalg_eigh": (1,), "linalg_eig": (1,),
          "linalg_lu_factor_ex": (0,), "linalg_solve_triangular": (0,), "triangular_solve": (0, 1),
          "cholesky_solve": (0,), "cholesky_inverse": (0,), "geqrf": (0,), "linalg_householder_product": (0,),
          "ormqr": (0,), "linalg_ldl_factor_ex": (0,), "linalg_ldl_solve": (0,), "linalg_lstsq": (0,)}
LAPACK_LEFT = frozenset(("linalg_solve_ex", "linalg_lu_solve"))
# the FFT kernels, whose results PyTorch's pocketfft path lays out with the transformed dims innermost (the others
# outermost, in the input's memory order): ``fft(x, dim=0)`` of a (3, 4) input has strides (1, 3) (an op's
# ``layout``: "fft", ``_dispatch._lay_out_fft``)
FFT = frozenset(("_fft_r2c", "_fft_c2c", "_fft_c2r"))


class OpDef:
    __slots__ = ("name", "impl", "promote", "rule", "grad_fn", "tensors", "tensor_names", "static_names",
                 "method", "function", "inplace", "view", "autocast", "prep", "check", "check_dtype",
                 "differentiable", "nout", "eager", "kernel", "cache", "out", "result_type", "params",
                 "device_check", "saves", "broadcast", "fn", "fn_inplace", "aliased_write_ok", "dynamic", "float8",
                 "conj", "traced", "zeroes", "fn_method", "required", "shown", "layout", "fixed_layout", "half_grad",
                 "undefined_grad", "__weakref__")

    def __init__(self, impl, name, *, promote, grad_fn, tensors, method, function, inplace, view, autocast,
                 prep, check, check_dtype, differentiable, nout, eager, kernel, out, result_type,
                 device_check, saves, broadcast, aliased_write_ok=False, dynamic=None, float8=None, conj=None,
                 traced=(), zeroes=False, required=False, shown=None, half_grad=None, undefined_grad=None):
        self.name = name
        self.half_grad = half_grad
        self.undefined_grad = undefined_grad
        self.layout = "iter" if name in POINTWISE else "self" if name in LIKE_SELF else \
            "format" if name in LIKE_FORMAT else "lapack" if name in LAPACK else "fft" if name in FFT else None
        self.fixed_layout = self.layout in ("lapack", "fft")  # (laid out whatever the operands' strides)
        self.required = required
        self.shown = shown
        self.fn_method = None  # (set by defop where it differs from fn)
        self.zeroes = zeroes
        self.conj = conj
        self.float8 = float8 if float8 is not None else view is not None  # a view computes nothing
        self.dynamic = dynamic
        self.aliased_write_ok = aliased_write_ok
        self.broadcast = broadcast if broadcast is not None else (
            promote in ("elementwise", "float", "compare", "logical", "bitwise", "first", "where", "pow"))
        self.impl = impl
        self.promote = promote
        self.rule = _promotion.RULES[promote] if isinstance(promote, str) else promote
        if name in _promotion.NO_COMPLEX:
            self.rule = _promotion.refusing_complex(self.rule)
        self.grad_fn = grad_fn
        self.tensors = tensors
        self.method = method
        self.function = function
        self.inplace = inplace
        self.view = view
        self.autocast = autocast
        self.prep = prep
        self.check = check
        self.check_dtype = check_dtype
        self.differentiable = differentiable
        self.nout = nout
        self.eager = eager
        self.kernel = kernel or f"{name}_stub"
        self.cache = {}
        self.out = out
        self.result_type = result_type  # 'tuple' | a namedtuple class | None
        self.device_check = device_check
        self.saves = saves
        params = list(inspect.signature(impl).parameters.values())
        self.params = params
        if tensors == "list":
            self.tensor_names = (params[0].name,)
            rest = params[1:]
        else:
            self.tensor_names = tuple(p.name for p in params[:tensors])
            rest = params[tensors:]
        self.static_names = tuple(p.name for p in rest)
        if traced and tensors == "list":
            raise ValueError(f"op {name}: traced static arguments need a fixed number of tensors")
        self.traced = tuple(self.static_names.index(n) for n in traced) or None

    def sarg(self, sargs, name):
        """Value of static argument ``name`` in a static-args tuple (None if the op has none)."""
        try:
            return sargs[self.static_names.index(name)]
        except ValueError:
            return None

    def impl_for(self, sargs) -> Callable:
        """The jax function with its static arguments bound: arrays -> array(s)."""
        impl = self.impl
        kw = {}
        pos = []
        for p, v in zip(self.params[len(self.tensor_names):], sargs):
            if p.kind is p.VAR_POSITIONAL:
                pos.append(v)  # varargs arrive normalised as one tuple (see the op's prep)
            elif p.kind is p.KEYWORD_ONLY:
                kw[p.name] = v
            else:
                pos.append(v)
        if not pos and not kw:
            return impl
        return lambda *arrays: impl(*arrays, *pos, **kw)

    def __repr__(self):
        return f"<op {self.name}>"


def defop(name=None, *, promote="same", grad_fn=None, tensors=1, method=True, function=True, inplace=False,
          view=None, autocast=None, prep=None, check=None, check_dtype=None, differentiable=True, nout=1,
          eager=False, kernel=None, out=None, result_type=None, aliases=(),
          device_check="iter", saves=("all",), broadcast=None, aliased_write_ok=False, dynamic=None, float8=None,
          conj=None, traced=(), zeroes=False, required=False, shown=None, half_grad=None, undefined_grad=None):
    """Declare an op. ``tensors``: how many leading parameters are tensor-like (or ``"list"``).

    ``method``/``function``: generate ``Tensor.<name>`` / ``functorch_lite.<name>`` (True) or not;
    a string gives another name. ``inplace``: also generate ``<name>_`` (a function ``(tensor args, static args) ->
    None`` in place of True: the in-place form's own check, run first: ``abs_`` of a complex tensor). ``view``: a
    function ``(tensor, static args) -> (shape, strides, offset[, dtype])`` making the op a view of its input (strides
    and offset in elements of the result's dtype, as in PyTorch); it may return :data:`SELF` (the op returns
    its input itself: ``x.real`` or ``x.conj()`` of a real tensor) or ``None`` (computed, not a view).
    ``conj``: a view step that changes how a complex storage is read (``views.view_sign``): ``"flip"``
    (``conj``: the conjugate bit toggles) or ``"reset"`` (``real``, ``view_as_real``, ``view_as_complex``).
    ``prep``: ``(tensors, static args) -> static args`` normalises and validates arguments.
    ``check``: per-call validation on the tensors (shapes, values). ``saves``: which inputs the
    backward needs (for PyTorch's in-place version checks). ``broadcast``: the tensor arguments
    broadcast together (checked with PyTorch's message); defaults to True for elementwise rules.
    ``aliased_write_ok``: the in-place form may write through an expanded view when its other
    arguments are Python scalars (every alias receives the same value: ``fill_``, ``zero_``).
    Or ``(where, line)``: the in-place form fills one value where ``where(tensors, static args)`` (a bool array of
    self's shape) is true, and writes through an expanded view as torch's deprecated path does (each memory location
    a filled element shares takes the value) with torch's warning (``line``: its TensorAdvancedIndexing.cpp line):
    ``masked_fill_``, ``index_fill_``.
    ``dynamic``: for view ops, ``(split, impl)``: ``split(static args) -> (key args, offsets)`` separates the
    position arguments (an index, a slice start) from the shape-defining ones, and ``impl(array, offsets,
    *key args)`` computes the view with the offsets traced, so materialising ``x[i]`` for every ``i`` reuses
    one compiled program.
    ``traced``: static (keyword) parameters whose Python float values are inputs of the kernel rather than
    part of its cache key (``add(alpha=-lr)``, ``addcdiv(value=-lr)`` with a scheduled LR: one compiled kernel
    for every value); ints, bools and other values stay static.
    ``zeroes``: the in-place form writes zeros (``zero_``): the storage is marked known zeros
    (``storage.mark_zeros``; ``compile`` then neither passes nor returns it).
    ``float8``: whether PyTorch (CPU) has a kernel for float8 inputs: False refuses them with
    ``"<kernel>" not implemented for 'Float8_e4m3fn'`` (``kernel`` names PyTorch's kernel), True accepts them,
    a function ``sig -> kernel name or None`` decides per signature. Default: True for views (they compute
    nothing), False otherwise — PyTorch's float8 dtypes are storage types with few kernels (copies, views,
    indexing, abs, eq/ne, mul, mm/addmm).
    ``required``: every tensor parameter without a default is a required Tensor (None is PyTorch's argument
    parser TypeError, as for a broadcasting op's operands); else only the first is (``_required``). A required op's
    tensor parameters take no Python number either (``mm(a, 2)``: the parser's TypeError).
    ``shown``: for a composite recorded as one node (linear, matmul), ``targs -> the graph torch records below
    its outermost node`` (or None: its inputs' own edges), as ``autograd.graph.shown``'s template: the node's
    ``next_functions`` and the gradients its hooks see; its backward stays one fused kernel.
    ``half_grad``: how the backward of float16 / bfloat16 inputs accumulates (``_dispatch.Entry``). None: an
    elementwise op's pullback runs in float32, rounded once per gradient, and any other op's in half. True: in
    float32 whatever the shapes -- a data-movement op whose torch backward sums in float32 (``sum_to_size``,
    ``scatter_add``: expand, repeat, gather). False: in half (torch's kernel adds in half, step by step). A
    function ``(static args, call signature) -> bool`` decides per call (index_select: its index_add kernel).
    ``undefined_grad``: ``(static args, call signature, present) -> bool``, where torch's derivative formula returns
    an undefined gradient for every input (``present``: which outputs have a gradient): the node then gives None,
    as torch's engine (``.grad`` stays None; ``autograd.grad`` calls it unused): vector_norm's ord 0, a real
    slogdet's sign alone.
    """
    def deco(fn):
        n = name or fn.__name__
        op = OpDef(fn, n, promote=promote, grad_fn=grad_fn, tensors=tensors, method=method, function=function,
                   inplace=inplace, view=view, autocast=autocast, prep=prep, check=check,
                   check_dtype=check_dtype, differentiable=differentiable, nout=nout, eager=eager, kernel=kernel,
                   out=out if out is not None else (view is None and nout == 1),
                   result_type=result_type, device_check=device_check,
                   saves=saves, broadcast=broadcast, aliased_write_ok=aliased_write_ok, dynamic=dynamic,
                   float8=float8, conj=conj, traced=traced, zeroes=zeroes, required=required, shown=shown,
                   half_grad=half_grad, undefined_grad=undefined_grad)
        if n in OPS:
            raise ValueError(f"op {n} defined twice")
        OPS[n] = op
        _ALIASES[n] = tuple(aliases)
        from . import _dispatch
        ns = {"_dispatch": _dispatch.dispatch, "_inplace": _dispatch.inplace, "_write_out": _dispatch.write_out}
        op.fn = _make(op, n, "call", ns)
        # (the method form differs in how it numbers a None tensor argument, without ``self``, and in taking no out=:
        # ``x.exp(out=y)`` is torch's TypeError)
        op.fn_method = _make(op, n, "method", ns) if op.method and (len(_required(op)) > 1 or op.out) else None
        op.fn_inplace = _make(op, n + "_", "inplace", ns) if inplace else None
        return op.fn  # the module-level name is the public, dispatching function
    return deco


_ALIASES: dict = {}


def saves_crossed(i: int, j: int):
    """``saves=`` of a bilinear op (mm, matmul, addmm, linear...): each operand's gradient reads the other one, so
    PyTorch saves operand ``i`` only when operand ``j`` requires grad and ``j`` only when ``i`` does (derivatives.yaml);
    an added ``input`` (addmm's ``self``, linear's bias) is not saved. In-place writes to an unsaved operand between
    backward passes are then legal (an optimizer step on a Linear's weight when its input does not require grad)."""
    def saves(targs):
        a, b = targs[i], targs[j]
        return ((i,) if b._requires_grad else ()) + ((j,) if a._requires_grad else ())
    saves.names = (i, j)  # (what it may save: the node's ``_saved_*`` attributes, autograd.graph.saved_attribute)
    return saves


def saves_for(*rules, always=()):
    """``saves=`` as torch's generated code decides it: a value one input's gradient formula alone uses is saved only
    when that input needs a gradient; one that several formulas use (``always``) is saved whenever the node is made.
    ``rules``: (the indices saved -- "result" for the output, "internal" for a composite's own intermediates --, the
    input whose gradient uses them). An operand may be a Python number (``x * 2``: torch saves it wrapped)."""
    def saves(targs):
        out = list(always)
        for idx, wanted in rules:
            if getattr(targs[wanted], "_requires_grad", False):
                out.extend(i for i in idx if i not in out)
        return tuple(out)
    saves.names = tuple(always) + tuple(i for idx, _ in rules for i in idx)  # (as saves_crossed's)
    return saves


class _Self:
    """What a ``view=`` function returns when the op gives back its input itself."""

    def __repr__(self):
        return "SELF"


SELF = _Self()


def _signature_src(op: OpDef, *, with_out: bool, first="input"):
    parts = []
    defaults = {}
    seen_kwonly = False
    # a required last positional parameter with a NumPy spelling (``dim``) may come by that keyword: optional here,
    # checked in the generated body once the NumPy spelling is read (_make)
    positional = [p for p in op.params if p.kind is p.POSITIONAL_OR_KEYWORD]
    loose = positional[-1].name if positional and positional[-1].default is positional[-1].empty and \
        positional[-1].name in _NUMPY_NAMES.values() else None
    for i, p in enumerate(op.params):
        pname = p.name
        if p.kind is p.VAR_POSITIONAL:
            parts.append("*" + pname)
            seen_kwonly = True
            continue
        if p.kind is p.KEYWORD_ONLY and not seen_kwonly:
            parts.append("*")
            seen_kwonly = True
        if p.default is not p.empty:
            defaults["_d_" + pname] = p.default
            parts.append(f"{pname}=_d_{pname}")
        elif pname == loose:
            defaults["_d_" + pname] = _MISSING
            parts.append(f"{pname}=_d_{pname}")
        else:
            parts.append(pname)
    if with_out:
        if not seen_kwonly:
            parts.append("*")
        parts.append("out=None")
    return ", ".join(parts), defaults


# keywords PyTorch's argument parser accepts beside a parameter's own name: NumPy's spellings
_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}
_MISSING = inspect.Parameter.empty  # a required parameter that a NumPy spelling may give (``unsqueeze(axis=0)``)


def _rekw(op: OpDef, kw: dict, var: str, current: tuple) -> tuple:
    """A ``*varargs`` parameter given by its keyword (``flip(x, dims=[1])``, ``x.permute(dims=...)``): the
    keyword's value is its one argument."""
    for k in kw:
        if k != var:
            raise TypeError(f"{op.name}() got an unexpected keyword argument '{k}'")
    if current:
        raise TypeError(f"{op.name}() got multiple values for argument '{var}'")
    return (kw[var],)


def _numpy_kw(op: OpDef, target: str, current, value):
    """A parameter given by its NumPy spelling (``axis=`` for ``dim``): also given by its own name is an error."""
    default = next(p.default for p in op.params if p.name == target)
    if current is not _MISSING and current is not default:
        raise TypeError(f"{op.name}() got multiple values for argument '{target}'")
    return value


def _required(op: OpDef) -> list:
    """The tensor parameters where a None is PyTorch's TypeError: the first (``input``/``self``), and every
    operand of a broadcasting (elementwise) op or one declared ``required`` (the matrix products). (Other ops'
    tensor parameters may take None without a default: a ``bias``, an ``attn_mask``, a running stat; their
    kernels decide.)"""
    if op.tensors == "list":
        return []
    ps = [p.name for p in op.params[:op.tensors] if p.default is p.empty]
    return ps if op.broadcast or op.required else ps[:1]


# the bool parameters PyTorch's schema makes optional (``bool?``: None is taken, as the default)
_OPTIONAL_BOOL = {"sort": ("stable",)}


def _not_bool(fname: str, names: tuple, values: tuple, optional: tuple = (), op=None, targs=(), sargs=(),
              pos: int | None = None):
    """A bool parameter given something else: PyTorch's argument parser's TypeError (an op's own argument check,
    ``prep``, first where it raises one: sort's overload message for a bool where the dim goes; ``pos``: the one
    parameter's position, where torch's message names it; ``fname`` None: a helper that does not know its caller's
    name, the message without it)."""
    if op is not None and op.prep is not None:
        try:
            op.prep(targs, sargs)
        except TypeError:
            raise
        except Exception:  # noqa: BLE001 - (a later check's error: the parser's comes first)
            pass
    for n, v in zip(names, values):
        if type(v) is not bool and not (v is None and n in optional):
            from ._dispatch import _type_name  # (late: _dispatch imports this module)
            where = f" (position {pos})" if pos else ""
            raise TypeError(f"{f'{fname}(): ' if fname else ''}argument '{n}'{where} must be bool, not "
                            f"{_type_name(v)}")


def _none_arg(op: OpDef, fname: str, values: tuple, method: bool):
    """A required tensor argument is None: PyTorch's argument parser's TypeError, with its position counted
    as PyTorch counts it (a method's ``self`` is not counted)."""
    names = _required(op)
    name = names[values.index(None)]
    pos = [p.name for p in op.params].index(name) + 1 - method
    raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not NoneType")


# the reductions whose out= sets the dtype they compute in (the input cast to it first: ``sum(x, out=long)`` of
# [1.5, 2.25, -3.75] is 1 + 2 - 3), where the others compute and cast the result into ``out``
_OUT_AS_DTYPE = frozenset({"sum", "prod", "cumsum", "cumprod"})
# the reductions an out= of a floating or complex dtype makes compute in it (as their dtype=: the input cast first);
# any other out dtype is cast into, or refused, as for other ops; dtype= and out= both given must agree
_OUT_FLOAT_AS_DTYPE = frozenset({"mean", "nansum"})  # (nanmean, no op of the table, does the same itself)
# the reductions whose input is cast to a floating out='s dtype first (torch computes var / std in the result's type)
_OUT_CASTS_INPUT = frozenset({"var", "std"})


def _out_dtype_mismatch(name, dtype, out_dtype):
    from .._promotion import _cname
    if name == "mean":
        raise RuntimeError(f"Expected out tensor to have dtype {_cname(dtype)}, but got {_cname(out_dtype)} instead")
    raise RuntimeError(f"nansum: provided dtype must match dtype of result. Got {out_dtype.short} and {dtype.short}.")


def _make(op: OpDef, fname: str, kind: str, ns: dict):
    """Generate one Python function for ``op``: kind 'call' | 'method' (a call that numbers its arguments
    without ``self`` in its errors) | 'inplace'."""
    with_out = kind == "call" and op.out  # (torch's Tensor methods take no out=)
    sig, defaults = _signature_src(op, with_out=with_out)
    # PyTorch's other keywords: NumPy spellings as keyword-only parameters (free when unused), and a ``*varargs``
    # parameter's own name (``**_kw``, only for those ops)
    names = [p.name for p in op.params]
    pre = ""
    spelled = [(a, t) for a, t in _NUMPY_NAMES.items() if t in names and a not in names]
    if spelled:
        star = with_out or any(p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY) for p in op.params)
        sig += ("" if star else ", *") + "".join(f", {a}=_MISSING" for a, _ in spelled)
        for a, t in spelled:
            pre += f"if {a} is not _MISSING:\n        {t} = _numpy_kw(_op, {t!r}, {t}, {a})\n    "
            if defaults.get("_d_" + t, None) is _MISSING:
                pre += (f"if {t} is _MISSING:\n        raise TypeError(\"{op.name}() missing 1 required "
                        f"positional argument: '{t}'\")\n    ")
    req = _required(op)
    if req:  # (evaluated only on a call that passes None: one identity test per tensor parameter otherwise)
        pre = (f"if {' or '.join(n + ' is None' for n in req)}:\n        "
               f"_none_arg(_op, {fname!r}, ({', '.join(req)},), {kind != 'call'})\n    ") + pre
    flags = [p.name for p in op.params[op.tensors if op.tensors != "list" else 1:] if type(p.default) is bool]
    if flags:  # (PyTorch's parser takes a Python bool only: keepdim=1 or upper='x' is its TypeError)
        opt = _OPTIONAL_BOOL.get(op.name, ())
        test = " or ".join(f"type({n}) is not bool" + (f" and {n} is not None" if n in opt else "") for n in flags)
        tn, sn = (f"({', '.join(names)},)" if names else "()" for names in (op.tensor_names, op.static_names))
        pre += (f"if {test}:\n        _not_bool({fname!r}, {tuple(flags)!r}, ({', '.join(flags)},), {opt!r}, _op, "
                f"{tn}, {sn})\n    ")
    var = next((p.name for p in op.params if p.kind is p.VAR_POSITIONAL), None)
    if var is not None:
        sig += ", **_kw"
        pre += f"if _kw:\n        {var} = _rekw(_op, _kw, {var!r}, {var})\n    "
    tn = ", ".join(op.tensor_names)
    sn = ", ".join(op.static_names)
    targs = f"({tn},)" if op.tensor_names else "()"
    sargs = f"({sn},)" if op.static_names else "()"
    if kind == "inplace":
        body = f"return _inplace(_op, {targs}, {sargs})"
    elif with_out:
        # (PyTorch's autograd refusal of an out= call with an argument requiring grad, named after the op: the out
        # tensor would silently leave the graph; several outputs: a tuple of outs)
        # (an elementwise op's inputs: an out= over memory one of them partly shares is refused, as torch)
        from ._dispatch import OUT_CAST_COMPLEX
        srcs = f", srcs={targs}" if (op.broadcast or op.name in OUT_CAST_COMPLEX) and op.tensor_names else ""
        if op.name in _OUT_AS_DTYPE:  # (torch's sum(out=...): computed in out's dtype, as with dtype=)
            pre += "if dtype is None and type(out) is _Tensor:\n        dtype = out.dtype\n    "
        elif op.name in _OUT_FLOAT_AS_DTYPE:  # (mean(out=float64): computed in it; dtype= and out= must agree)
            pre += ("if type(out) is _Tensor:\n"
                    "        if dtype is None:\n"
                    "            if out.dtype.is_floating_point or out.dtype.is_complex:\n"
                    "                dtype = out.dtype\n"
                    "        elif out.dtype is not dtype:\n"
                    f"            _out_dtype_mismatch({op.name!r}, dtype, out.dtype)\n    ")
        elif op.name in _OUT_CASTS_INPUT:  # (var(out=float64) of a float32 input: computed in float64)
            pre += ("if type(out) is _Tensor and type(input) is _Tensor and out.dtype is not input.dtype and "
                    "out.dtype.is_floating_point and input.dtype.is_floating_point:\n"
                    "        input = input.to(out.dtype)\n    ")
        # (an out= call is not autocast, as in torch: its out tensor gives the dtype)
        body = (f"r = _dispatch(_op, {targs}, {sargs}, out is None)\n"
                f"    return r if out is None else _write_out(out, r, {op.name!r}{srcs})")
    else:
        body = f"return _dispatch(_op, {targs}, {sargs})"
    src = f"def {fname}({sig}):\n    {pre}{body}\n"
    g = dict(ns)
    g.update(defaults)
    g["_op"] = op
    g["_rekw"], g["_numpy_kw"], g["_MISSING"], g["_none_arg"] = _rekw, _numpy_kw, _MISSING, _none_arg
    g["_not_bool"] = _not_bool
    if op.name in _OUT_AS_DTYPE or op.name in _OUT_FLOAT_AS_DTYPE or op.name in _OUT_CASTS_INPUT:
        from .._tensor.tensor import Tensor as _Tensor
        g["_Tensor"], g["_out_dtype_mismatch"] = _Tensor, _out_dtype_mismatch
    exec(compile(src, f"<functorch_lite op {op.name}>", "exec"), g)
    fn = g[fname]
    fn.__doc__ = op.impl.__doc__
    fn.__qualname__ = fname
    fn.__module__ = "functorch_lite"
    return fn


# the in-place forms torch 2.13 has as top-level functions (``torch.exp_``; there is no ``torch.add_``): an op's
# generated ``<name>_`` goes into the namespace only where torch's does
TORCH_INPLACE_FUNCTIONS = frozenset((
    "abs_", "acos_", "acosh_", "addmv_", "alpha_dropout_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "celu_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "dropout_", "embedding_renorm_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "feature_alpha_dropout_", "feature_dropout_", "fill_", "fix_",
    "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_", "rrelu_",
    "rsqrt_", "selu_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "threshold_",
    "trunc_", "xlogy_", "zero_"))


def install(tensor_cls, namespace: dict):
    """Attach every op's generated function as Tensor method(s) and module function(s)."""
    for op in OPS.values():
        call = op.fn
        meth = op.fn_method or call
        names = (op.name,) + _ALIASES[op.name]
        if op.function:
            fnames = names if op.function is True else (op.function,)
            for n in fnames:
                namespace[n] = call
        if op.method:
            mnames = names if op.method is True else ((op.method,) if isinstance(op.method, str) else op.method)
            for n in mnames:
                if n not in tensor_cls.__dict__:
                    setattr(tensor_cls, n, meth)
        if op.inplace:
            ip = op.fn_inplace
            for n in names:
                if n + "_" not in tensor_cls.__dict__:
                    setattr(tensor_cls, n + "_", ip)
            if op.function and op.name + "_" in TORCH_INPLACE_FUNCTIONS:
                namespace.setdefault(op.name + "_", ip)
