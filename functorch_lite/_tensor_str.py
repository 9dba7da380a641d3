"""``torch._tensor_str``: ``PRINT_OPTS``, the print options ``set_printoptions`` changes, and the ``printoptions``
context manager.

The options live in one place, ``_config.PRINT_OPTIONS`` (what printing reads); ``PRINT_OPTS`` is an attribute view of
it, so ``PRINT_OPTS.precision = 2`` and ``set_printoptions(precision=2)`` are the same change, and ``vars(PRINT_OPTS)``
is that dict (torch's is its dataclass's ``__dict__``: live as well)."""
from __future__ import annotations

import contextlib

from . import _config

__all__ = ["PRINT_OPTS", "get_printoptions", "printoptions"]


class __PrinterOptions:  # (PyTorch's class name: ``torch._tensor_str.__PrinterOptions``)
    __slots__ = ()

    @property
    def __dict__(self):
        return _config.PRINT_OPTIONS

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


def get_printoptions() -> dict:
    """The current print options, as a dict ``set_printoptions(**...)`` takes (a copy)."""
    return dict(_config.PRINT_OPTIONS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that temporarily changes the print options (``set_printoptions``'s arguments)."""
    from . import set_printoptions
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


def __getattr__(name):  # (torch defines it here; the facade at its top level, which imports this module first)
    if name == "set_printoptions":
        from . import set_printoptions
        return set_printoptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
