"""``torch.nn.init``: in-place initialisers with PyTorch's formulas (gains, fans, bounds, error messages).

Every initialiser runs under ``no_grad`` and writes its draw into the tensor with one ``copy_`` (so views and
Parameters are filled in place); random draws come from the facade's generators (``generator=`` or the
default one seeded by ``manual_seed``)."""
from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._tensor.tensor import Tensor
from ..autograd.grad_mode import no_grad
from .._warn import user_stacklevel as _user_stacklevel

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
           "sparse_"]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (PyTorch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _fill_from_key(tensor: Tensor, draw, generator) -> Tensor:
    """Fill ``tensor`` with ``draw(key, shape, jnp dtype)`` computed in float32/float64, then cast."""
    from ..random import default_generator
    key = (generator if generator is not None else default_generator).next_key()
    work = D.float64 if tensor.dtype is D.float64 else D.float32
    from .._device import to_jax
    arr = jax.device_put(draw(key, tuple(tensor.shape), work.jnp), to_jax(tensor.device))
    with no_grad():
        return tensor.copy_(Tensor._from_array(arr, work, tensor.device))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b] (inverse-CDF sampling, as PyTorch)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=_user_stacklevel())
    # torch's sampler: normal draws rejected outside [a, b] where that mass is large, else uniform ones on [a, b]
    # accepted by the density (whose checks raise: a > b, an integer tensor); the density's std is squared
    p = (math.erf((b - mean) / std / math.sqrt(2.0)) - math.erf((a - mean) / std / math.sqrt(2.0))) / 2
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex) or a > b:
        with no_grad():
            tensor.normal_(mean, std) if p > 0.3 else tensor.uniform_(a, b)
    std = abs(std)
    lo, hi = (a - mean) / std, (b - mean) / std
    return _fill_from_key(
        tensor, lambda k, s, dt: jnp.clip(jax.random.truncated_normal(k, lo, hi, s, dt) * std + mean, a, b),
        generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .. import eye
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a {3,4,5}-D conv weight with the Dirac delta (identity convolution per group)."""
    import numpy as np
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    host = np.zeros(tuple(sizes))
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            host[(g * out_per_group + d, d) + centre] = 1
    from .. import tensor as _tensor
    with no_grad():
        return tensor.copy_(_tensor(host, dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, gain^2 * 2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=_user_stacklevel())
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
    """He uniform: U(-b, b), b = gain * sqrt(3 / fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
    """He normal: N(0, gain^2 / fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR of a Gaussian draw, signs fixed by diag(R) (PyTorch's recipe)."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    dt = tensor.dtype
    if not dt.is_floating_point or dt in (D.float16, D.bfloat16):
        # torch draws the Gaussian (its error for an integer tensor), then its CPU QR has no half kernel and
        # ``sign`` of the complex diagonal raises
        with no_grad():
            tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if dt.is_complex:
            raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
                                      "use torch.sgn instead.")
        from .._promotion import no_kernel
        raise no_kernel("geqrf_cpu", dt)

    def draw(k, shape, dt):
        flat = jax.random.normal(k, (rows, cols), dt)
        if rows < cols:
            flat = flat.T
        q, r = jnp.linalg.qr(flat)
        q = q * jnp.sign(jnp.diagonal(r))
        if rows < cols:
            q = q.T
        return q.reshape(shape)
    _fill_from_key(tensor, draw, generator)
    with no_grad():  # (PyTorch's copy_ then mul_: two writes, _version 2)
        return tensor.mul_(gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """2-D: N(0, std^2) with ``ceil(sparsity * rows)`` zeros in each column."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))

    def draw(k, shape, dt):
        k1, k2 = jax.random.split(k)
        vals = jax.random.normal(k1, shape, dt) * std
        perms = jax.vmap(lambda kk: jax.random.permutation(kk, rows))(jax.random.split(k2, cols))
        zero = jnp.zeros(shape, bool).at[perms[:, :num_zeros].T, jnp.arange(cols)[None, :]].set(True)
        return jnp.where(zero, jnp.zeros_like(vals), vals)
    return _fill_from_key(tensor, draw, generator)


def _default_layer_init(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's ``reset_parameters`` of Linear and Conv: kaiming_uniform_(a=sqrt(5)) for the weight (that is
    U(-1/sqrt(fan_in), 1/sqrt(fan_in))) and U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)


def _make_deprecate(meth):
    """PyTorch's pre-0.4 names without the trailing underscore: the same initialiser, with its FutureWarning."""
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=_user_stacklevel())
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"{old_name}(...)\n\n.. warning::\n    This method is now deprecated in favor of " \
                              f":func:`torch.nn.init.{new_name}`.\n\nSee :func:`~torch.nn.init.{new_name}` for details."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)


# torch's private helpers the public initializers call (older DeiT / Swin code imports _no_grad_trunc_normal_):
# the same fills, with every argument required as torch's
def _no_grad_trunc_normal_(tensor: Tensor, mean: float, std: float, a: float, b: float, generator=None) -> Tensor:
    return trunc_normal_(tensor, mean, std, a, b, generator=generator)


def _no_grad_uniform_(tensor: Tensor, a: float, b: float, generator=None) -> Tensor:
    return uniform_(tensor, a, b, generator=generator)


def _no_grad_normal_(tensor: Tensor, mean: float, std: float, generator=None) -> Tensor:
    return normal_(tensor, mean, std, generator=generator)


def _no_grad_fill_(tensor: Tensor, val: float) -> Tensor:
    return constant_(tensor, val)


def _no_grad_zero_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)
