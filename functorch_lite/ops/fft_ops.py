"""The FFT kernels of ``torch.fft`` (``functorch_lite/fft.py``) and the argument handling they share.

As in PyTorch, three ops compute every transform: ``_fft_r2c`` (real -> complex, ``FftR2CBackward0``),
``_fft_c2c`` (``FftC2CBackward0``) and ``_fft_c2r`` (complex -> real, ``FftC2RBackward0``), each with
PyTorch's ``normalization`` code (0: none, 1: by 1/sqrt(n), 2: by 1/n). The public functions are composites
over them, built as PyTorch builds them (``aten/src/ATen/native/SpectralOps.cpp``): dtype promotion with
``.to()``, resizing with ``narrow`` / ``constant_pad_nd``, a conjugate view (``ifft`` of a real input,
``ihfft``: ``ConjBackward0``, ``is_conj()`` True) — so ``grad_fn`` names, conjugate bits and gradients are
PyTorch's. Gradients are JAX's vjps of the kernels under PyTorch's conjugate convention (``_dispatch``).

>>> import functorch_lite as torch
>>> torch.fft.rfft(torch.tensor([1., 2., 3., 4.]))
tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""
from __future__ import annotations

import operator

import jax.numpy as jnp

from .. import dtypes as D
from .._tensor.tensor import Tensor
from ..amp import autocast_mode as _amp
from ..autograd import grad_mode as _gm
from ._registry import defop
from ._dispatch import _type_name, write_out
from .complex_ops import conj, conj_physical
from .view_ops import narrow
from .resample import pad as _pad

# PyTorch's fft_norm_mode
NONE, BY_ROOT_N, BY_N = 0, 1, 2


def _jnp_norm(normalization: int, forward: bool) -> str:
    """jnp.fft's ``norm`` name for a transform direction and PyTorch's normalization code."""
    if normalization == BY_ROOT_N:
        return "ortho"
    if forward:
        return "backward" if normalization == NONE else "forward"
    return "forward" if normalization == NONE else "backward"


# ---- dtype rules ----------------------------------------------------------------------------------------
def _unsupported(dt):
    return RuntimeError(f"Unsupported dtype {dt.short}")


def _r2c_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {dt.short}")
    if dt not in (D.float32, D.float64):
        raise _unsupported(dt)
    return (None,), (dt.to_complex(),)


def _complex_in_rule(to_real):
    def rule(op, sig, sargs):
        dt = sig[0][1]
        if dt in (D.float32, D.float64):
            cdt = dt.to_complex()
            return (cdt,), (dt if to_real else cdt,)
        if dt not in (D.complex64, D.complex128):
            raise _unsupported(dt)
        return (None,), (dt.to_real() if to_real else dt,)
    return rule


# ---- the three kernels ----------------------------------------------------------------------------------
@defop("_fft_r2c", promote=_r2c_rule, grad_fn="FftR2CBackward0", method=False, function=False, out=False,
       saves=(), float8=True)
def _fft_r2c(input, dim, normalization, onesided):
    """Forward DFT of a real array over ``dim``; ``onesided``: only the non-redundant half of ``dim[-1]``."""
    norm = _jnp_norm(normalization, True)
    if onesided:
        return jnp.fft.rfftn(input, axes=dim, norm=norm)
    return jnp.fft.fftn(input.astype(jnp.complex128 if input.dtype == jnp.float64 else jnp.complex64), axes=dim,
                        norm=norm)


@defop("_fft_c2c", promote=_complex_in_rule(False), grad_fn="FftC2CBackward0", method=False, function=False,
       out=False, saves=(), float8=True)
def _fft_c2c(input, dim, normalization, forward):
    """Forward (``forward``) or inverse DFT of a complex array over ``dim`` (no dims: a copy)."""
    if not dim:
        return input
    norm = _jnp_norm(normalization, forward)
    return (jnp.fft.fftn if forward else jnp.fft.ifftn)(input, axes=dim, norm=norm)


@defop("_fft_c2r", promote=_complex_in_rule(True), grad_fn="FftC2RBackward0", method=False, function=False,
       out=False, saves=(), float8=True)
def _fft_c2r(input, dim, normalization, last_dim_size):
    """Inverse DFT of a Hermitian half-spectrum over ``dim``: a real array whose ``dim[-1]`` has
    ``last_dim_size`` points (the input holds ``last_dim_size // 2 + 1`` there)."""
    s = [input.shape[d] for d in dim[:-1]] + [last_dim_size]
    return jnp.fft.irfftn(input, s=s, axes=dim, norm=_jnp_norm(normalization, False))


# ---- argument handling (PyTorch's argument parser and SpectralOps checks) ---------------------------------
def check_tensor(fname: str, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {_type_name(x)}")


def autocast_fp32(x: Tensor) -> Tensor:
    """Inside an autocast region, PyTorch runs the transforms on its fp32 lists (CPU and CUDA: fft, ifft, rfft,
    irfft, hfft, ihfft and their 2-d / n-d forms, but not hfft2/hfftn/ihfft2/ihfftn) on a float32 copy of a
    floating input other than float64 (``ToCopyBackward0``)."""
    if not _amp.ANY[0]:
        return x
    act = _amp.STATE.active
    dev = x._storage.device.type
    if act is None or act.get(dev) is None or not _amp._eligible(x, dev) or x.dtype in (D.float32, D.float64):
        return x
    return x.to(D.float32)


def int_arg(fname: str, name: str, v, pos: int | None = None) -> int:
    """``v`` as PyTorch's argument parser takes an int (a bool is not one), else its TypeError (``pos``: the
    argument's position, where torch's message gives it)."""
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{name}'{where} must be int, not {_type_name(v)}")
    return operator.index(v)


def tensor_arg(fname: str, name: str, v, pos: int | None = None):
    """``v`` where PyTorch's argument parser takes a Tensor, else its TypeError (a Python number as index_add's
    source, gather's index)."""
    if not isinstance(v, Tensor):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{name}'{where} must be Tensor, not {_type_name(v)}")
    return v


def float_arg(fname: str, name: str, v, pos: int | None = None) -> float:
    """``v`` as PyTorch's argument parser takes a float (a number or a one-element tensor), else its TypeError."""
    if isinstance(v, (str, bytes)) or not hasattr(v, "__float__"):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{name}'{where} must be float, not {_type_name(v)}")
    return float(v)


def ints_arg(fname: str, name: str, v):
    """``s`` / ``dim`` of the n-d transforms: None, an int, or a sequence of ints -> tuple or None."""
    if v is None:
        return None
    if hasattr(v, "__index__") and not isinstance(v, bool):
        return (operator.index(v),)
    if isinstance(v, (tuple, list)) and all(hasattr(e, "__index__") and not isinstance(e, bool) for e in v):
        return tuple(operator.index(e) for e in v)
    raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, not {_type_name(v)}")


def norm_arg(fname: str, norm):
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"{fname}(): argument 'norm' must be str, not {_type_name(norm)}")
    return norm


def norm_mode(norm, forward: bool) -> int:
    """PyTorch's ``norm_from_string``: the normalization code of a transform direction."""
    if norm is None or norm == "backward":
        return NONE if forward else BY_N
    if norm == "forward":
        return BY_N if forward else NONE
    if norm == "ortho":
        return BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def wrap_dim(d: int, nd: int) -> int:
    if nd == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -nd <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
    return d % nd


def check_points(n: int):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def promote(x: Tensor, require_complex: bool = False) -> Tensor:
    """PyTorch's ``promote_tensor_fft``: integers and bool to the default float; CPU FFTs take float32/float64 (and
    their complex types) only; ``require_complex`` converts a real input to complex (``ToCopyBackward0``)."""
    dt = x.dtype
    if dt.is_complex:
        return x
    new = dt if dt.is_floating_point else D.get_default_dtype()
    if new not in (D.float32, D.float64):
        raise _unsupported(new)
    if require_complex:
        new = new.to_complex()
    return x if new is dt else x.to(new)


def resize(x: Tensor, dims, sizes) -> Tensor:
    """PyTorch's ``resize_fft_input``: crop (``narrow``) or zero-pad (one ``constant_pad_nd``) each ``dims[i]`` to
    ``sizes[i]`` (-1: unchanged)."""
    shape = x.shape
    nd = len(shape)
    pads = [0] * (2 * nd)
    must_pad = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if shape[d] < n:
            must_pad = True
            pads[2 * (nd - 1 - d) + 1] = n - shape[d]
        elif shape[d] > n:
            x = narrow(x, d, 0, n)
    return _pad(x, tuple(pads)) if must_pad else x


def shape_and_dims(x: Tensor, s, dim):
    """PyTorch's ``canonicalize_fft_shape_and_dim_args``: (sizes, dims) of an n-d transform."""
    nd = x.dim()
    sizes = x.shape
    if dim is not None:
        dims = tuple(wrap_dim(d, nd) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
        if dim is None:
            dims = tuple(range(nd - len(s), nd))
        shape = tuple(sizes[d] if n == -1 else n for n, d in zip(s, dims))
    elif dim is None:
        dims = tuple(range(nd))
        shape = tuple(sizes)
    else:
        shape = tuple(sizes[d] for d in dims)
    for n in shape:
        check_points(n)
    return shape, dims


def c2r_shape_and_dims(fname: str, x: Tensor, s, dim):
    """``canonicalize_fft_c2r_shape_and_dim_args``: (input sizes, dims, output size of the last dim)."""
    shape, dims = shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    check_points(last)
    return shape[:-1] + (last // 2 + 1,), dims, last


def out_arg(fname: str, out):
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {_type_name(out)}")


def check_out(fname: str, out, complex_: bool):
    """The output dtype checks of the r2c / c2c (complex) and c2r (floating) transforms."""
    if out is None:
        return
    ok = out.dtype.is_complex if complex_ else out.dtype.is_floating_point
    if not ok:
        kind = "complex" if complex_ else "floating point"
        raise RuntimeError(f"{fname} expects a {kind} output tensor, but got {out.dtype.short}")


def finish(r: Tensor, out, kernel: str, x: Tensor) -> Tensor:
    """Return ``r``, or write it into ``out`` (PyTorch's out= forms refuse inputs that require grad)."""
    if out is None:
        return r
    if kernel is not None and x.requires_grad and _gm.is_grad_enabled():
        raise RuntimeError(f"{kernel}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    return write_out(out, r)


def conj_out(r: Tensor, out) -> Tensor:
    """``ifft``/``ihfft`` of a real input: PyTorch returns ``r.conj()`` (a view), or ``conj_physical_out``."""
    if out is None:
        return conj(r)
    if out.dtype is not r.dtype:
        raise RuntimeError(f"Found dtype {out.dtype.short} but expected {r.dtype.short}")
    return write_out(out, conj_physical(r))


METHODS: dict = {}
FUNCTIONS: dict = {}
