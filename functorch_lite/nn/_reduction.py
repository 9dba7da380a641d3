"""``torch.nn._reduction`` (``F._Reduction``): a loss's reduction as ATen's enum (0 none, 1 mean, 2 sum), and the
legacy ``size_average`` / ``reduce`` arguments. The checks are the ops' own (``ops.nn_ops.reduction_name``,
``ops.losses.legacy_get_string``), so a custom loss built on these reads reductions as the built-in losses do."""
from __future__ import annotations

from ..ops.losses import legacy_get_string
from ..ops.nn_ops import reduction_name

__all__: list = ["get_enum", "legacy_get_string", "legacy_get_enum"]

_ENUM = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction: str) -> int:
    """``'none'`` 0, ``'mean'`` (or the deprecated ``'elementwise_mean'``, with its warning) 1, ``'sum'`` 2; anything
    else raises ``ValueError``."""
    return _ENUM[reduction_name(reduction)]


def legacy_get_enum(size_average, reduce, emit_warning: bool = True) -> int:
    """``get_enum(legacy_get_string(size_average, reduce, emit_warning))``."""
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
