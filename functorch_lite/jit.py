"""``torch.jit``: the TorchScript spellings model code carries, for code written to be scriptable.

TorchScript compiles a module or function to its own IR; its results are the eager results. Here there is no
TorchScript: ``script`` and ``trace`` give back the module or function itself, which computes the same values
(``functorch_lite.compile`` is what turns code into one XLA program). What follows from that, as documented in the
README: ``trace`` does not freeze data-dependent control flow at the example input (the code runs as written each
call), and a scripted object has no ``.graph``/``.code``/``.save``; ``jit.save``/``jit.load`` refuse by name (save
the ``state_dict`` instead). The annotations model code uses when it is not being scripted behave as in eager
PyTorch: ``is_scripting()``/``is_tracing()`` are False, ``annotate`` returns its value, ``ignore``/``unused``/
``export``/``interface`` return what they decorate, ``Final`` is ``typing.Final``.
"""
from __future__ import annotations

import collections
import warnings
from typing import Any, Final  # noqa: F401  (torch.jit.Final)
from ._warn import user_stacklevel as _user_stacklevel


def script(obj: Any, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None) -> Any:
    """``torch.jit.script``: ``obj`` itself (a module, function or class; there is no TorchScript here)."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` "
                      "instead", FutureWarning, stacklevel=_user_stacklevel())
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs: bool = True) -> Any:
    """``torch.jit.trace``: ``func`` itself, run as written on every call (not frozen at ``example_inputs``)."""
    if not callable(func):
        raise RuntimeError(f"trace expects a module or a function, got {type(func).__name__}")
    return func


def trace_module(mod, inputs, **kwargs) -> Any:
    """``torch.jit.trace_module``: ``mod`` itself."""
    return mod


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


# ``torch.jit.Attribute(value, type)``: outside TorchScript, the pair itself (a module attribute's declared type)
Attribute = collections.namedtuple("Attribute", ["value", "type"])


def annotate(the_type, the_value):
    """``torch.jit.annotate``: ``the_value`` (the type only matters to the TorchScript compiler)."""
    return the_value


def ignore(drop=False, **kwargs):
    """``@torch.jit.ignore`` / ``@torch.jit.ignore(drop=...)``: the function itself."""
    if callable(drop):
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    if kwargs.pop("drop_on_export", None) or drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on "
                      "compilation. Use torch.jit.unused now. {}", FutureWarning, stacklevel=_user_stacklevel())
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def script_if_tracing(fn):
    return fn


_script_if_tracing = script_if_tracing  # (the private name torchvision's ops import; nothing traces TorchScript here)


def _no_torchscript(what: str):
    def refuse(*args, **kwargs):
        raise RuntimeError(f"torch.jit.{what}: functorch_lite has no TorchScript (jit.script returns the module "
                           "itself); save and load the model's state_dict with functorch_lite.save/load instead")
    refuse.__name__ = what
    return refuse


save = _no_torchscript("save")
load = _no_torchscript("load")
