"""Convolution and pooling ops (``torch.nn.functional`` twins); padding and interpolation are in resample.py.

Each op is one ``@defop`` with a pure lax body (``conv_general_dilated``, ``reduce_window``, gathers with
index tables computed from the static shapes), so one dispatch and one autograd Node with PyTorch's grad_fn
name. Argument normalisation and PyTorch's error messages live in the ``prep`` hooks and the thin F wrappers.
"""
from __future__ import annotations

import operator
import warnings

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import dtypes as D
from .._promotion import _cname, no_kernel
from .._tensor.tensor import Tensor
from .._tensor.views import shape_str as _shape_str
from . import grad_overrides as _go
from ._dispatch import _type_name
from ._registry import OPS, defop
from ._rounding import true_div
from .._warn import user_stacklevel as _user_stacklevel

__all__: list = ["conv1d", "conv2d", "conv3d", "conv_transpose2d", "max_pool1d", "max_pool2d", "max_pool3d",
                 "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
                 "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d"]

def _tup(v, n: int, name: str | None = None) -> tuple:
    """An int or a sequence -> an n-tuple of ints (a 1-sequence is repeated)."""
    if isinstance(v, (list, tuple)):
        v = tuple(int(e) for e in v)
        if len(v) == 1:
            return v * n
        if name is not None and len(v) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {name}={list(v)}")
        return v
    return (int(v),) * n


# ---- convolution -------------------------------------------------------------------------------------------
def _conv_rule(op, sig, sargs):
    """Input and weight share one dtype (``_conv_dtypes`` raised torch's errors otherwise); a transposed
    convolution's bias of another dtype is cast (torch adds it afterwards). Bool, complex and float8 have no CPU
    kernel (the F.conv* functions run a complex input through ``_complex_convolution``)."""
    xd = sig[0][1]
    if xd is D.bool or xd.is_complex or xd in D.FLOAT8:
        raise no_kernel(_kernel_name(op.sarg(sargs, "transposed"), sig[1][0] - 2), xd)
    return (None, None, None if sig[2] is None else xd), (xd,)


def _kernel_name(transposed, nd):
    if transposed:
        return "slow_conv_transpose3d_out_cpu" if nd == 3 else "slow_conv_transpose2d_out_cpu"
    return "slow_conv3d_cpu" if nd == 3 else "slow_conv2d_cpu"


def _conv_dtypes(x, w, b, transposed, nd) -> None:
    """Mixed dtypes: torch 2.13's CPU errors, in its order, which depend on the backend it picks. oneDNN runs a
    bfloat16 input, and a float32 one with a batch above 1 (its messages name ``torch.FloatTensor`` /
    ``CPUBFloat16Type``); the native kernels check a convolution's bias first (``Input type (double) and bias
    type (float)``: float64 NumPy data into a Conv2d), then the weight (``expected scalar type Double but found
    Float``). A transposed one has no kernel for the integer types but int64, and checks its bias (added
    afterwards) last. A complex input runs torch's complex path, which names the mismatched weight (and a
    transposed convolution's bias) in the legacy type words, without the MKLDNN clause."""
    xd, wd = x.dtype, w.dtype
    bd = None if b is None else b.dtype
    if transposed and xd.category == D.INT and xd is not D.int64:
        raise no_kernel(_kernel_name(True, nd), xd)
    if (bd is None or bd is xd) and wd is xd:
        return
    onednn = xd is D.bfloat16 or (xd is D.float32 and x._shape[0] > 1)

    def name(d):
        return f"CPU{d.short}Type" if d is D.bfloat16 or d.is_complex else f"torch.{d.short}Tensor"
    if not transposed and bd is not None and bd is not xd:
        raise RuntimeError(f"Input type ({_cname(xd)}) and bias type ({_cname(bd)}) should be the same")
    if xd.is_complex:
        what, other = ("weight", wd) if wd is not xd else ("bias", bd)
        raise RuntimeError(f"Input type ({name(xd)}) and {what} type ({name(other)}) should be the same")
    if wd is not xd:
        if onednn:
            raise RuntimeError(f"Input type ({name(xd)}) and weight type ({name(wd)}) should be the same or input "
                               "should be a MKLDNN tensor and weight is a dense tensor")
        raise RuntimeError(f"expected scalar type {xd.short} but found {wd.short}")
    if onednn:
        raise RuntimeError(f"Input type ({name(xd)}) and bias type ({name(bd)}) should be the same or input should "
                           "be a MKLDNN tensor and bias is a dense tensor")
    if nd == 3:
        raise RuntimeError(f"expected scalar type {xd.short} but found {bd.short}")
    if bd.category > xd.category:
        raise RuntimeError(f"result type {bd.short} can't be cast to the desired output type {xd.short}")


def _conv_prep(targs, sargs):
    x, w, b = targs
    stride, padding, dilation, transposed, output_padding, groups = sargs
    nd = len(w._shape) - 2
    if nd <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    stride = _tup(stride, nd, "stride")
    if isinstance(padding, (list, tuple)) and padding and isinstance(padding[0], (list, tuple)):
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)  # explicit (low, high) pairs ('same')
    else:
        pads = tuple((p, p) for p in _tup(padding, nd, "padding"))
    dilation = _tup(dilation, nd, "dilation")
    output_padding = _tup(output_padding, nd, "output_padding")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(p < 0 for pr in pads for p in pr):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    xs, ws = x._shape, w._shape
    if len(xs) != len(ws):
        raise RuntimeError(f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight {_shape_str(ws)}, "
                           f"but got {len(xs)}-dimensional input of size {_shape_str(xs)} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {_shape_str(ws)} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{_shape_str(ws)}] instead")
    bs = None if b is None else b._shape
    if not transposed:
        if xs[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_shape_str(ws)}, expected input"
                               f"{_shape_str(xs)} to have {ws[1] * groups} channels, but got {xs[1]} channels instead")
        if bs is not None and (len(bs) != 1 or bs[0] != ws[0]):
            raise RuntimeError(f"Given weight of size {_shape_str(ws)}, expected bias to be 1-dimensional with "
                               f"{ws[0]} elements, but got bias of size {_shape_str(bs)} instead")
        inp = [xs[i + 2] + pads[i][0] + pads[i][1] for i in range(nd)]
        ker = [dilation[i] * (ws[i + 2] - 1) + 1 for i in range(nd)]
        if any(a < k for a, k in zip(inp, ker)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, inp))}). Kernel "
                               f"size: ({' x '.join(map(str, ker))}). Kernel size can't be greater than actual input "
                               "size")
    else:
        if xs[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_shape_str(ws)}, expected input{_shape_str(xs)} "
                               f"to have {ws[0]} channels, but got {xs[1]} channels instead")
        if bs is not None and (len(bs) != 1 or bs[0] != ws[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {_shape_str(ws)}, expected bias to be "
                               f"1-dimensional with {ws[1] * groups} elements, but got bias of size "
                               f"{_shape_str(bs)} instead")
        if nd == 2 and any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_height: {output_padding[0]} output_padding_width: {output_padding[1]} "
                               f"stride_height: {stride[0]} stride_width: {stride[1]} dilation_height: {dilation[0]} "
                               f"dilation_width: {dilation[1]}")
        osz = [(xs[i + 2] - 1) * stride[i] - pads[i][0] - pads[i][1] + dilation[i] * (ws[i + 2] - 1)
               + output_padding[i] + 1 for i in range(nd)]
        if any(o < 1 for o in osz):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(str(e) for e in xs[2:])}). Calculated "
                               f"output size per channel: ({' x '.join(map(str, osz))}). Output size is too small")
    if xs[0] and xs[1] and 0 in xs[2:]:  # (torch's backend selection: an empty input needs an empty batch or channel)
        shown = xs[:2] + (1,) + xs[2:] if nd == 1 else xs  # (a 1-d conv runs as a 2-d one: its 4-d view's shape)
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{list(shown)}")
    _conv_dtypes(x, w, b, transposed, nd)
    return (stride, pads, dilation, bool(transposed), output_padding, groups)


_DN = {1: ("NCH", "OIH", "NCH"), 2: ("NCHW", "OIHW", "NCHW"), 3: ("NCDHW", "OIDHW", "NCDHW")}


@defop(promote=_conv_rule, grad_fn="ConvolutionBackward0", tensors=3, method=False, prep=_conv_prep,
       autocast="lower", kernel="slow_conv2d_cpu", device_check=("input", "weight", "bias"))
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``torch.convolution``: N-d (transposed) convolution, NC... layout; ``padding`` as ints or (lo, hi) pairs."""
    nd = weight.ndim - 2
    pads = [tuple(p) if isinstance(p, tuple) else (p, p) for p in padding]
    # a half-precision convolution with a bias: accumulated and biased in float32, rounded once, as PyTorch's
    # kernels (rounded before the bias, then after it, 30 of 288 bf16 outputs of a 3x3 conv differed)
    wide = dict(preferred_element_type=jnp.float32) if bias is not None and \
        jnp.dtype(input.dtype) in (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16)) else {}
    if not transposed and any(st > 1 for st in stride) and any(d > 1 for d in dilation):
        # XLA's CPU algebraic simplifier aborts the process on the input gradient of a strided *and* dilated
        # convolution: run it at stride 1 and subsample (the gradient is then a zero-stuffing pad)
        out = lax.conv_general_dilated(input, weight, (1,) * nd, pads, rhs_dilation=dilation,
                                       dimension_numbers=_DN[nd], feature_group_count=groups, **wide)
        out = lax.slice(out, (0,) * out.ndim, out.shape, (1, 1) + tuple(stride))
    elif not transposed:
        out = lax.conv_general_dilated(input, weight, stride, pads, rhs_dilation=dilation,
                                       dimension_numbers=_DN[nd], feature_group_count=groups, **wide)
    else:
        cin, cog = weight.shape[0], weight.shape[1]
        k = weight.shape[2:]
        w = weight.reshape((groups, cin // groups, cog) + k)
        w = jnp.swapaxes(w, 1, 2).reshape((groups * cog, cin // groups) + k)
        w = jnp.flip(w, tuple(range(2, 2 + nd)))
        # zero-stuff the input with an interior pad instead of lhs_dilation: XLA's CPU algebraic simplifier
        # aborts the process on some weight gradients of lhs-dilated convolutions
        cfg = [(0, 0, 0)] * 2 + [(dilation[i] * (k[i] - 1) - pads[i][0],
                                  dilation[i] * (k[i] - 1) - pads[i][1] + output_padding[i], stride[i] - 1)
                                 for i in range(nd)]
        xd = lax.pad(input, np.array(0, input.dtype), cfg)
        out = lax.conv_general_dilated(xd, w, (1,) * nd, [(0, 0)] * nd, rhs_dilation=dilation,
                                       dimension_numbers=_DN[nd], feature_group_count=groups, **wide)
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * nd).astype(out.dtype)
    return out.astype(input.dtype)


# torch's F.conv* (not torch.convolution) run a complex input as real convolutions combined by Gauss's trick, the
# last step an add (grad_fn AddBackward0); lax convolves complex directly, with the same body
_complex_convolution = defop("_complex_convolution", promote=lambda op, sig, sargs: ((None,) * 3, (sig[0][1],)),
                             grad_fn="AddBackward0", tensors=3, method=False, function=False, prep=_conv_prep,
                             device_check=("input", "weight", "bias"))(OPS["convolution"].impl)


def _convnd(name: str, nd: int, input, weight, bias, stride, padding, dilation, groups, transposed=False,
            output_padding=0):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(input).__name__}, ...)")
    dim = input.dim()
    if dim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {_shape_str(input.shape)}")
    unbatched = dim == nd + 1
    stride, dilation = (_tup(v, nd) if isinstance(v, int) else v for v in (stride, dilation))
    if isinstance(padding, int):
        padding = _tup(padding, nd)
    op = convolution
    if input.is_complex():
        _conv_dtypes(input, weight, bias, transposed, nd)  # (torch's complex path checks the dtypes first)
        op = _complex_convolution
    if unbatched:
        input = input.unsqueeze(0)
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if any(s != 1 for s in _tup(stride, nd)):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            dil = _tup(dilation, nd)
            ks = weight.shape[2:] if len(weight.shape) == nd + 2 else (1,) * nd
            tot = [d * (k - 1) for d, k in zip(dil, ks)]
            padding = tuple((t // 2, t - t // 2) for t in tot)
            if any(t % 2 for t in tot):
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a "
                              "zero-padded copy of the input be created", UserWarning, stacklevel=_user_stacklevel())
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = op(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """``F.conv1d`` over (N, C, L) or unbatched (C, L) input; ``padding`` may be 'same' or 'valid'."""
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """``F.conv2d`` over (N, C, H, W) or unbatched (C, H, W) input; ``padding`` may be 'same' or 'valid'.

    >>> conv2d(ft.randn(1, 3, 5, 5), ft.randn(8, 3, 3, 3), padding=1).shape
    functorch_lite.Size([1, 8, 5, 5])
    """
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """``F.conv3d`` over (N, C, D, H, W) or unbatched (C, D, H, W) input; ``padding`` may be 'same' or 'valid'."""
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """``F.conv_transpose2d``: the gradient of conv2d w.r.t. its input; weight is (C_in, C_out/groups, kH, kW)."""
    return _convnd("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True,
                   output_padding)


# ---- pooling -----------------------------------------------------------------------------------------------
# The 2-d and 3-d ops share their bodies (the number of spatial dims is the length of the static kernel tuple);
# the 1-d functions are PyTorch's: the 2-d op over an unsqueezed (N, C, 1, L) input, squeezed back
# (so their grad_fn is SqueezeBackward1, as in torch).
_WORDS = {2: "two", 3: "three"}
_AXES = {2: ("H", "W"), 3: ("T", "H", "W")}


def _pool_out(size: int, k: int, p: int, s: int, d: int, ceil: bool) -> int:
    """PyTorch's pooling_output_shape (with the ceil-mode rule that the last window starts inside the input)."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > ((k - 1) * d + 1) // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} "
                           f"and dilation={d}")
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    out = num // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


_POOL_POS = {"kernel_size": 2, "stride": 3, "padding": 4, "dilation": 5}  # (torch's argument positions)


def _pool_int(v, msg) -> int:
    """One int of a pooling size argument (``msg()``: the TypeError's text for anything else)."""
    if type(v) is int:
        return v
    if not isinstance(v, bool):
        try:
            return operator.index(v)
        except TypeError:
            pass
    raise TypeError(msg())


def _pool_args(name: str, x, kernel_size, stride, padding, dilation, ceil_mode, nd: int = 2):
    """Normalise and validate ``nd``-d pooling arguments; returns (k, s, p, d, ceil, out) (nd-tuples)."""
    def tup(v, what, verb="must either be", omit=""):
        if name == "avg_pool3d":  # (PyTorch's wording there)
            verb = "must be"
        # torch's "tuple of ints" parser: an int is anything operator.index takes (a NumPy integer, an integer
        # tensor) but a bool; a list / tuple of those
        head = f"{name}(): argument '{what}' (position {_POOL_POS[what]}) must be tuple of ints"
        if isinstance(v, (list, tuple)):
            t = tuple(_pool_int(e, lambda: f"{head}, but found element of type {_type_name(e)} at pos {i}")
                      for i, e in enumerate(v))
        else:
            t = (_pool_int(v, lambda: f"{head}, not {_type_name(v)}"),) * nd
        if len(t) == 1:
            t = t * nd
        if len(t) != nd:
            raise RuntimeError(f"{name}: {what} {verb} {omit}a single int, or a tuple of {_WORDS[nd]} ints")
        return t

    def got(prefix, vals):
        return " ".join(f"{prefix}{a}: {v}" for a, v in zip(_AXES[nd], vals))
    k = tup(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        tup(stride, "stride", omit="omitted, ")
    p = tup(padding, "padding")
    d = tup(dilation, "dilation", "must be either")
    ndim = len(x._shape)
    if name == "avg_pool2d" and ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got -3)")
    if ndim not in (nd + 1, nd + 2) or any(e == 0 for e in x._shape[-nd - 1:]):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    size = tuple(x._shape[-nd:])
    out = tuple(_pool_out(size[i], k[i], p[i], s[i], d[i], ceil_mode) for i in range(nd))
    if any(e <= 0 for e in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got {got('k', k)}")
    if any(e <= 0 for e in s):
        raise RuntimeError(f"stride should be greater than zero, but got {got('d', s)}")
    if any(e <= 0 for e in d):
        raise RuntimeError(f"dilation should be greater than zero, but got {got('dilation', d)}")
    if name == "avg_pool3d" and any(a < b for a, b in zip(size, k)):
        raise RuntimeError(f"input image ({got('', size)}) smaller than kernel size ({got('k', k)})")
    if any(k[i] // 2 < p[i] for i in range(nd)):
        if nd == 2:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {p[1]}, "
                               f"padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {k[0]} kW: "
                           f"{k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}")
    if any(o < 1 for o in out):
        c = x._shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + size))}). Calculated output size: "
                           f"({'x'.join(map(str, (c,) + out))}). Output size is too small")
    return k, s, p, d, bool(ceil_mode), out


def _win_pads(x_shape, k, s, p, d, out):
    """reduce_window padding: p low, and enough high padding for ``out`` windows (ceil mode)."""
    nd = len(k)
    pads = [(0, 0)] * (len(x_shape) - nd)
    for i in range(nd):
        need = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
        pads.append((p[i], max(p[i], need - x_shape[-nd + i] - p[i])))
    return pads


def _float_kernel_rule(kernel: str, allow_int: bool = True):
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt is D.bool or dt.is_complex or dt in D.FLOAT8 or (not allow_int and dt.category < D.FLOAT):
            raise no_kernel(kernel, dt)
        return (None,) * len(sig), (dt,) * op.nout
    return rule


def _indices_rule(kernel: str, allow_int: bool = True):
    """(values, int64 indices) ops: the values keep the input dtype."""
    def rule(op, sig, sargs):
        _float_kernel_rule(kernel, allow_int)(op, sig, sargs)
        return (None,), (sig[0][1], D.int64)
    return rule


def _maxpool_prep_for(name: str, nd: int):
    def prep(targs, sargs):
        k, s, p, d, ceil, out = _pool_args(name, targs[0], *sargs[:5], nd=nd)
        return (k, s, p, d, (ceil, out))  # the output size rides in the ceil_mode slot
    return prep


_maxpool_prep = _maxpool_prep_for("max_pool2d", 2)
_maxpool3d_prep = _maxpool_prep_for("max_pool3d", 3)


def _max_identity(dt):
    return -jnp.inf if jnp.issubdtype(dt, jnp.floating) else jnp.iinfo(dt).min


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode):
    """Max over (dilated) windows of the last ``len(kernel_size)`` dims, padding never wins."""
    if any(e != 1 for e in dilation):  # JAX has no VJP for dilated reduce_window max: pick from the window patches
        return _max_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode[1])[0]
    nb = input.ndim - len(kernel_size)
    pads = _win_pads(input.shape, kernel_size, stride, padding, dilation, ceil_mode[1])
    init = np.array(_max_identity(input.dtype), input.dtype)

    def pool(x):
        return lax.reduce_window(x, init, lax.max, (1,) * nb + kernel_size, (1,) * nb + stride, pads,
                                 window_dilation=(1,) * nb + dilation)
    if not jnp.issubdtype(input.dtype, jnp.floating):
        return pool(input)
    # a NaN is a window's max in torch's kernel (``val > max || isnan(val)``) and takes its gradient; JAX's
    # backward selects with ``>=``, which a NaN never passes: the gradient goes through the pool of the input with
    # NaN as +inf (its selection), and the NaN windows get their NaN back by a term with no gradient
    nan = jnp.isnan(input)
    y = pool(_go.nan_as_inf(input))
    return y + lax.stop_gradient(jnp.where(pool(nan.astype(input.dtype)) > 0, jnp.asarray(jnp.nan, y.dtype),
                                           jnp.zeros((), y.dtype)))


@defop("max_pool2d", promote=_float_kernel_rule("max_pool2d"), grad_fn="MaxPool2DWithIndicesBackward0",
       method=False, prep=_maxpool_prep, kernel="max_pool2d", out=False)
def _max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool2d``: max over (dilated) windows, padding never wins."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode)


@defop("max_pool3d", promote=_float_kernel_rule("max_pool3d"), grad_fn="MaxPool3DWithIndicesBackward0",
       method=False, prep=_maxpool3d_prep, kernel="max_pool3d", autocast={"cpu": "fp32"}, out=False)
def _max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool3d``: max over (dilated) (T, H, W) windows, padding never wins."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode)


def _window_index(size, k, s, p, d, out):
    """(out, k) table of input positions of each window tap (may be outside [0, size))."""
    return np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * d


def _max_with_indices(input, k, stride, padding, dilation, out):
    """(values, flat indices over the pooled dims) of the first maximum of each (dilated, padded) window."""
    size = input.shape[-len(k):]
    return _max_over_taps(input, [_window_index(size[i], k[i], stride[i], padding[i], dilation[i], out[i])
                                  for i in range(len(k))])


def _max_over_taps(input, taps):
    """(values, int64 flat indices into the last ``len(taps)`` dims) of the first maximum of each window, from
    gathered window patches. ``taps[i]``: (out_i, k_i) input positions along dim i; positions outside the input
    are padding and never chosen."""
    nd = len(taps)
    size = input.shape[-nd:]
    lo = [max(0, -int(t.min())) for t in taps]
    hi = [max(0, int(t.max()) - n + 1) for t, n in zip(taps, size)]
    cfg = [(0, 0, 0)] * (input.ndim - nd) + [(a, b, 0) for a, b in zip(lo, hi)]
    xp = lax.pad(input, np.array(_max_identity(input.dtype), input.dtype), cfg)
    idx = []
    for i, t in enumerate(taps):  # tap tables broadcast to (o_1..o_nd, k_1..k_nd)
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = t.shape
        idx.append((t + lo[i]).reshape(shape))
    patches = xp[(Ellipsis,) + tuple(idx)]
    ks = [t.shape[1] for t in taps]
    patches = patches.reshape(patches.shape[:patches.ndim - nd] + (int(np.prod(ks)),))
    a = jnp.argmax(patches, axis=-1)
    vals = jnp.take_along_axis(patches, a[..., None], axis=-1)[..., 0]
    flat, rem, mul = 0, a, 1
    for i in reversed(range(nd)):
        o = jnp.arange(taps[i].shape[0]).reshape([-1 if j == i else 1 for j in range(nd)])
        flat = flat + jnp.asarray(taps[i])[o, rem % ks[i]] * mul
        rem, mul = rem // ks[i], mul * size[i]
    return vals, flat.astype(jnp.int64)


@defop("max_pool2d_with_indices", promote=_indices_rule("max_pool2d"), grad_fn="MaxPool2DWithIndicesBackward0",
       method=False, function=False, prep=_maxpool_prep, nout=2, kernel="max_pool2d")
def _max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(values, int64 flat h*W+w indices) of the first maximum of each window."""
    return _max_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode[1])


@defop("max_pool3d_with_indices", promote=_indices_rule("max_pool3d"), grad_fn="MaxPool3DWithIndicesBackward0",
       method=False, function=False, prep=_maxpool3d_prep, nout=2, kernel="max_pool3d")
def _max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(values, int64 flat (t*H+h)*W+w indices) of the first maximum of each window."""
    return _max_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode[1])


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """``F.max_pool2d`` over (N, C, H, W) or (C, H, W); ``return_indices`` adds flat int64 argmax indices."""
    if return_indices:
        return _max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """``F.max_pool3d`` over (N, C, D, H, W) or (C, D, H, W); ``return_indices`` adds flat int64 indices."""
    if return_indices:
        return _max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def _one(name: str, what: str, v, msg: str | None = None) -> int:
    """A 1-d pooling argument: an int or a 1-sequence (PyTorch's messages otherwise)."""
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise RuntimeError(msg.format(len(v)) if msg else
                               f"{name}() argument '{what}' should contain one int (got {len(v)})")
        v = v[0]
    return int(v)


def _check_1d_dims(name: str, input) -> None:
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """``F.max_pool1d`` over (N, C, L) or (C, L) (``return_indices``: int64 positions along L)."""
    xs = input._shape
    if len(xs) not in (2, 3) or any(e == 0 for e in xs[-2:]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{_shape_str(xs)}")
    k = _one("max_pool1d", "", kernel_size, "max_pool1d() kernel_size must be an int, list of ints or tuple of ints "
             "of size 1 but got size {}")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _one(
        "max_pool1d", "", stride, "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 "
        "but got size {}")
    p = _one("max_pool1d", "", padding, "max_pool1d() padding must be an int, list of ints, or tuple of ints of size "
             "1 but got size {}")
    d = _one("max_pool1d", "", dilation, "max_pool1d() dilation must be an int, list of ints or tuple of ints of "
             "size 1 but got size {}")
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool_out(xs[-1], k, p, s, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    if not input.dtype.is_floating_point or input.dtype in D.FLOAT8:
        raise no_kernel("max_pool1d_impl", input.dtype)
    x = input.unsqueeze(-2)
    if return_indices:
        v, i = _max_pool2d_with_indices(x, (1, k), (1, s), (0, p), (1, d), ceil_mode)
        return v.squeeze(-2), i.squeeze(-2)
    return _max_pool2d(x, (1, k), (1, s), (0, p), (1, d), ceil_mode).squeeze(-2)


def _avgpool_prep_for(name: str, nd: int):
    def prep(targs, sargs):
        kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override = sargs
        k, s, p, d, ceil, out = _pool_args(name, targs[0], kernel_size, stride, padding, 1, ceil_mode, nd=nd)
        if divisor_override is not None and int(divisor_override) == 0:
            raise RuntimeError("divisor must be not zero")
        div = None if divisor_override is None else int(divisor_override)
        return (k, s, p, (ceil, out), bool(count_include_pad), div)
    return prep


def _avg_divisor(size, k, s, p, out, include_pad):
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    pool = end - start
    if include_pad:
        return pool
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Window sums over the divisor PyTorch uses (padding counted or not, override), any number of dims."""
    _, out = ceil_mode
    nd = len(kernel_size)
    nb = input.ndim - nd
    pads = _win_pads(input.shape, kernel_size, stride, padding, (1,) * nd, out)
    acc = D.opmath(input.dtype)
    total = lax.reduce_window(input.astype(acc), np.array(0, acc), lax.add, (1,) * nb + kernel_size,
                              (1,) * nb + stride, pads)
    if divisor_override is not None:
        div = np.full(out, divisor_override)
    else:
        size = input.shape[-nd:]
        div = np.ones((1,) * nd, np.int64)
        for i in range(nd):
            di = _avg_divisor(size[i], kernel_size[i], stride[i], padding[i], out[i], count_include_pad)
            div = div * di.reshape([-1 if j == i else 1 for j in range(nd)])
    div = jnp.asarray(div, acc)
    r = lax.div(total, jnp.broadcast_to(div, total.shape)) if jnp.issubdtype(acc, jnp.integer) else true_div(total, div)
    return r.astype(input.dtype)


def _avg_rule(kernel: str, reduced: bool = True):
    """PyTorch's CPU avg_pool kernels cover the floating types and Long only (Byte / Char / Short / Int raise
    ``"avg_pool2d" not implemented for 'Byte'``); avg_pool3d's has no half / bfloat16 one either (``reduced``)."""
    base = _float_kernel_rule(kernel)

    def rule(op, sig, sargs):
        dt = sig[0][1]
        if (dt.category < D.FLOAT and dt is not D.int64) or (not reduced and dt in (D.float16, D.bfloat16)):
            raise no_kernel(kernel, dt)
        return base(op, sig, sargs)
    return rule


@defop(promote=_avg_rule("avg_pool2d"), grad_fn="AvgPool2DBackward0", method=False, function=False,
       prep=_avgpool_prep_for("avg_pool2d", 2), kernel="avg_pool2d")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """``F.avg_pool2d``: window sums over the divisor PyTorch uses (padding counted or not, override)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@defop(promote=_avg_rule("avg_pool3d_out_frame", reduced=False), grad_fn="AvgPool3DBackward0", method=False,
       function=False, prep=_avgpool_prep_for("avg_pool3d", 3), kernel="avg_pool3d_out_frame", autocast={"cpu": "fp32"})
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """``F.avg_pool3d`` over (N, C, D, H, W) or (C, D, H, W)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """``F.avg_pool1d`` over (N, C, L) or (C, L)."""
    _check_1d_dims("avg_pool1d", input)
    k = _one("avg_pool1d", "kernel_size", kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _one("avg_pool1d", "stride", stride)
    p = _one("avg_pool1d", "padding", padding)
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad).squeeze(-2)


def _adaptive_prep_for(name: str, nd: int, maxpool: bool = False):
    def prep(targs, sargs):
        xs = targs[0]._shape
        osz = sargs[0]
        if isinstance(osz, (tuple, list)):  # (F's own check on a sequence output_size, before the kernel's)
            from ..nn.modules.utils import _list_with_default
            _list_with_default(osz, xs)
        osz = (osz,) * nd if osz is None or isinstance(osz, int) else tuple(osz)
        if len(osz) != nd:
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}" if maxpool else
                               f"{name}: output_size must be {nd}")
        osz = tuple(xs[-nd + i] if o is None else int(o) for i, o in enumerate(osz))
        if any(o < 0 for o in osz):
            if maxpool:
                raise RuntimeError(f"Trying to create tensor with negative dimension {min(osz)}: "
                                   f"{_shape_str(tuple(xs[:-nd]) + osz)}")
            got = ", ".join(map(str, osz)) if nd == 2 else f"{osz[0]}, {osz[1]},{osz[2]}"  # (torch's spacing)
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                               f"{{{got}}}")
        if len(xs) not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got"
                               f"{':' if maxpool else ''} {_shape_str(xs)}")
        for i in range(len(xs) - 2 if name == "adaptive_avg_pool2d" else 1, len(xs)):  # (avg 2d: H, W only)
            if xs[i] == 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                                   f"input has sizes {_shape_str(xs)} with dimension {i} being empty")
        return (osz,)
    return prep


def _adaptive_rule(kernel: str):
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if all(o == 1 for o in sargs[0]):  # PyTorch computes the 1x1 case with mean() (complex too)
            if dt.category < D.FLOAT:
                raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                                   f"point or complex dtype. Got: {dt.short}")
            if dt.is_complex:
                return (None,), (dt,)
        return _float_kernel_rule(kernel, allow_int=False)(op, sig, sargs)
    return rule


def _adaptive_matrix(size: int, out: int) -> np.ndarray:
    """(out, size) averaging matrix over PyTorch's windows [floor(i*size/out), ceil((i+1)*size/out))."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    j = np.arange(size)
    m = (j[None, :] >= start[:, None]) & (j[None, :] < end[:, None])
    return m / np.maximum(end - start, 1)[:, None]


def _adaptive_avg(input, output_size):
    """Windows [floor(i*H/oH), ceil((i+1)*H/oH)) per pooled dim, as averaging matrices (one einsum)."""
    nd = len(output_size)
    acc = D.opmath(input.dtype)
    ms = [jnp.asarray(_adaptive_matrix(input.shape[-nd + i], output_size[i]), acc) for i in range(nd)]
    spec = {2: "...hw,oh,pw->...op", 3: "...dhw,od,ph,qw->...opq"}[nd]
    r = jnp.einsum(spec, input.astype(acc), *ms, precision=lax.Precision.HIGHEST)
    return r.astype(input.dtype)


@defop(promote=_adaptive_rule("adaptive_avg_pool2d"), method=False, function=False, out=False,
       prep=_adaptive_prep_for("adaptive_avg_pool2d", 2), kernel="adaptive_avg_pool2d",
       grad_fn=lambda targs, sargs: "MeanBackward1" if sargs[0] == (1, 1) else "AdaptiveAvgPool2DBackward0")
def adaptive_avg_pool2d(input, output_size):
    """``F.adaptive_avg_pool2d``: windows [floor(i*H/oH), ceil((i+1)*H/oH)) (output need not divide input)."""
    return _adaptive_avg(input, output_size)


@defop(promote=_adaptive_rule("adaptive_avg_pool3d_cpu"), method=False, function=False, out=False,
       prep=_adaptive_prep_for("adaptive_avg_pool3d", 3), kernel="adaptive_avg_pool3d_cpu", autocast={"cpu": "fp32"},
       grad_fn=lambda targs, sargs: "MeanBackward1" if sargs[0] == (1, 1, 1) else "AdaptiveAvgPool3DBackward0")
def adaptive_avg_pool3d(input, output_size):
    """``F.adaptive_avg_pool3d`` over (N, C, D, H, W) or (C, D, H, W)."""
    return _adaptive_avg(input, output_size)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """``F.adaptive_avg_pool1d`` over (N, C, L) or (C, L)."""
    _check_1d_dims("adaptive_avg_pool1d", input)
    if output_size is None:
        raise TypeError("adaptive_avg_pool1d(): argument 'output_size' (position 2) must be tuple of ints, not "
                        "NoneType")
    o = _one("adaptive_avg_pool1d", "output_size", output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def _adaptive_taps(size: int, out: int) -> np.ndarray:
    """(out, kmax) input positions of PyTorch's adaptive windows; a shorter window's spare taps point past the
    input (padding, never the maximum)."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    t = start[:, None] + np.arange(int((end - start).max()))[None, :]
    return np.where(t < end[:, None], t, size)


@defop("adaptive_max_pool2d", promote=_indices_rule("adaptive_max_pool2d", allow_int=False),
       grad_fn="AdaptiveMaxPool2DBackward0", method=False, function=False, nout=2,
       prep=_adaptive_prep_for("adaptive_max_pool2d", 2, maxpool=True), kernel="adaptive_max_pool2d")
def _adaptive_max_pool2d(input, output_size):
    """(values, int64 flat h*W+w indices) of the first maximum of each adaptive window."""
    if 0 in output_size:
        shape = input.shape[:-2] + tuple(output_size)
        return jnp.zeros(shape, input.dtype), jnp.zeros(shape, jnp.int64)
    H, W = input.shape[-2:]
    return _max_over_taps(input, [_adaptive_taps(H, output_size[0]), _adaptive_taps(W, output_size[1])])


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool2d`` (``None`` in ``output_size`` keeps that input size)."""
    v, i = _adaptive_max_pool2d(input, output_size)
    return (v, i) if return_indices else v


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool1d`` over (N, C, L) or (C, L)."""
    _check_1d_dims("adaptive_max_pool1d", input)
    o = _one("adaptive_max_pool1d", "output_size", output_size)
    v, i = _adaptive_max_pool2d(input.unsqueeze(-2), (1, o))
    return (v.squeeze(-2), i.squeeze(-2)) if return_indices else v.squeeze(-2)
