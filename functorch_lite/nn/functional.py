"""``torch.nn.functional``: the composite nn ops plus aliases of existing activation ops."""
from __future__ import annotations

import warnings

from ..ops import nn_ops as _nn
from ..ops.nn_ops import linear, dropout  # noqa: F401
from ..ops.losses import _broadcast_check, _legacy, _size_warning
from . import _reduction as _Reduction  # noqa: F401  (torch's F._Reduction)
from ..ops.nn_ops import dropout1d, dropout2d, dropout3d, alpha_dropout, feature_alpha_dropout  # noqa: F401
from .._tensor.tensor import Tensor
from .._warn import user_stacklevel as _user_stacklevel
from ..ops.conv import *  # noqa: F401,F403
from ..ops.resample import *  # noqa: F401,F403
from ..ops.norm import *  # noqa: F401,F403
from ..ops.attention import *  # noqa: F401,F403
from ..ops.losses import *  # noqa: F401,F403
from ..ops.activation import *  # noqa: F401,F403
from ..ops.distance import *  # noqa: F401,F403
from ..ops.linear_ce import linear_cross_entropy  # noqa: F401


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    from .. import relu as _relu
    return input.relu_() if inplace else _relu(input)


def gelu(input: Tensor, *, approximate: str = "none", out: Tensor | None = None) -> Tensor:
    from .. import gelu as _gelu
    return _gelu(input, approximate=approximate, out=out)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    from .. import silu as _silu
    if inplace:  # (torch's silu_: the op written into the input, its gradient from the input before)
        from ..ops._dispatch import inplace as _inplace
        from ..ops._registry import OPS
        return _inplace(OPS["silu"], (input,), ())
    return _silu(input)


def sigmoid(input: Tensor) -> Tensor:
    from .. import sigmoid as _s
    return _s(input)


def tanh(input: Tensor) -> Tensor:
    from .. import tanh as _t
    return _t(input)


def _get_softmax_dim(name: str, ndim: int) -> int:
    """PyTorch's implicit softmax dim, with its deprecation warning at the user's line (a ``_stacklevel=`` given to
    ``softmax``/``log_softmax``/``softmin`` is accepted as in PyTorch, but counts PyTorch's frames, not ours)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=_user_stacklevel())
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """Softmax along ``dim`` (implicit dim warns, as PyTorch)."""
    from .. import softmax as _sm
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim())
    return _sm(input, dim, dtype=dtype) if dtype is not None else _sm(input, dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """Log-softmax along ``dim`` (implicit dim warns, as PyTorch)."""
    from .. import log_softmax as _lsm
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim())
    return _lsm(input, dim, dtype=dtype) if dtype is not None else _lsm(input, dim)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    return _nn.nll_loss(input, target, weight, ignore_index, _legacy(size_average, reduce, reduction))


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    return _nn.cross_entropy(input, target, weight, ignore_index, label_smoothing,
                             _legacy(size_average, reduce, reduction))


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """``F.mse_loss``; with ``weight`` (torch 2.13: one per element, the input's size) the weighted squared
    errors, their 'mean' divided by the weights' sum."""
    _size_warning(input, target)  # (torch's order: the warning, the legacy mapping, broadcast_tensors' error)
    reduction = _legacy(size_average, reduce, reduction)
    _broadcast_check(input, target)
    if weight is None:
        return _nn.mse_loss(input, target, reduction)
    if weight._shape != input._shape:
        raise ValueError("Weights and input must have the same size.")
    err = (input - target).pow(2) * weight
    if reduction == "none":
        return err
    if reduction == "sum":
        return err.sum()
    if reduction == "mean":
        return err.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


from ..ops.nn_extra import *  # noqa: F401,F403,E402  (pixel_shuffle, unfold/fold, the margin losses, ...)
from ..ops.nn_sampling import *  # noqa: F401,F403,E402  (grid_sample, affine_grid, embedding_bag)
from ..ops.ctc import *  # noqa: F401,F403,E402  (ctc_loss)
from ..ops.pool_more import *  # noqa: F401,F403,E402  (max_unpool*, *_with_indices, rrelu, channel_shuffle, upsample*)
from ..ops.pool_fractional import *  # noqa: F401,F403,E402  (fractional_max_pool2d/3d)


# torch.nn.functional's private mask helpers (the transformer modules' and user code's: timm, HF)
from ..ops.attention import _check_mask_dtype  # noqa: E402


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type, check_other: bool = True):
    """``F._canonical_mask``: bool masks become additive float masks (True -> -inf) of ``target_type``."""
    if mask is None:
        return None
    from .. import zeros_like
    _check_mask_dtype(mask, mask_name)
    is_float = mask.dtype.is_floating_point
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for "
                      "both instead.", UserWarning, stacklevel=_user_stacklevel())
    if not is_float:
        mask = zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask
