"""``torch._tensor_str``: ``PRINT_OPTS``, the print options ``set_printoptions`` changes.

The options live in one place, ``_config.PRINT_OPTIONS`` (what printing reads); ``PRINT_OPTS`` is an attribute view of
it, so ``PRINT_OPTS.precision = 2`` and ``set_printoptions(precision=2)`` are the same change."""
from __future__ import annotations

from . import _config

__all__ = ["PRINT_OPTS"]


class __PrinterOptions:  # (PyTorch's class name: ``torch._tensor_str.__PrinterOptions``)
    __slots__ = ()

    def __getattr__(self, name):
        try:
            return _config.PRINT_OPTIONS[name]
        except KeyError:
            raise AttributeError(f"'__PrinterOptions' object has no attribute '{name}'") from None

    def __setattr__(self, name, value):
        _config.PRINT_OPTIONS[name] = value

    def __repr__(self):
        o = _config.PRINT_OPTIONS
        return ("__PrinterOptions(" + ", ".join(f"{k}={o[k]}" for k in
                                                ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")) + ")")


PRINT_OPTS = __PrinterOptions()
