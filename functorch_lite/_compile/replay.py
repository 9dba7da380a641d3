"""What the user's code prints, warns and logs while a compiled function is traced: recorded, then done again
after every call's program (``CompiledFunction._results``), so a step that reports its progress reports it on
every call as torch's does (there each such call is a graph break: it runs in Python each time), not only while
it was traced. The arguments are formatted while tracing: a traced tensor's value among them is a graph break,
as printing one was. Only calls from the user's code are recorded (the library's own warnings, issued while
tracing, are issued then, once, as torch's are at compile time)."""
from __future__ import annotations

import builtins
import logging
import os
import sys
import sysconfig
import threading
import warnings

_LIBS = tuple(os.path.abspath(p) + os.sep for p in {
    sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}) + (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,)  # (and functorch_lite itself)
_LOGGING = os.path.dirname(os.path.abspath(logging.__file__))
_USER: dict = {}


def _user_file(filename: str) -> bool:
    """A frame of the user's code: not the standard library's, an installed package's or this library's."""
    hit = _USER.get(filename)
    if hit is None:
        hit = _USER[filename] = not filename.startswith("<frozen") and not os.path.abspath(filename).startswith(_LIBS)
    return hit


def _has_tensor(values) -> bool:
    from .._tensor.tensor import Tensor
    return any(isinstance(v, Tensor) for v in values)


class Recorder:
    """Put in place while one trace runs (on the tracing thread only); ``items`` lists what to replay."""

    def __init__(self):
        self.items: list = []
        self.tid = threading.get_ident()

    def __enter__(self):
        self.saved = (builtins.print, warnings.warn, logging.Logger._log)
        real_print, real_warn, real_log = self.saved
        items, tid = self.items, self.tid

        def print_(*values, sep=" ", end="\n", file=None, flush=False):
            if threading.get_ident() != tid:
                return real_print(*values, sep=sep, end=end, file=file, flush=flush)
            for k, v in (("sep", sep), ("end", end)):
                if v is not None and not isinstance(v, str):
                    raise TypeError(f"{k} must be None or a string, not {type(v).__name__}")
            items.append(("print", tuple(str(v) for v in values), sep, end, file, flush))

        def warn(message, category=None, stacklevel=1, source=None, **kw):
            f = sys._getframe(1)
            if threading.get_ident() != tid or not _user_file(f.f_code.co_filename):
                return real_warn(message, category, stacklevel + 1, source, **kw)  # (+1: this frame)
            for _ in range(max(stacklevel, 1) - 1):
                f = f.f_back or f
            if isinstance(message, Warning):
                category = type(message)
            g = f.f_globals
            items.append(("warn", message if isinstance(message, Warning) else str(message), category or UserWarning,
                          f.f_code.co_filename, f.f_lineno, g.get("__name__", "<string>"),
                          g.setdefault("__warningregistry__", {}), g))

        def log(logger, level, msg, args, exc_info=None, extra=None, stack_info=False, stacklevel=1):
            f = sys._getframe(1)
            while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _LOGGING:
                f = f.f_back
            if threading.get_ident() != tid or f is None or not _user_file(f.f_code.co_filename):
                return real_log(logger, level, msg, args, exc_info, extra, stack_info, stacklevel)
            if _has_tensor((msg,) + tuple(args if isinstance(args, tuple) else (args,))):
                msg, args = (str(msg) % args) if args else str(msg), ()  # (a traced tensor's str: a graph break)
            items.append(("log", logger, level, msg, args, exc_info, extra, stack_info))

        builtins.print, warnings.warn, logging.Logger._log = print_, warn, log
        return self

    def __exit__(self, *exc):
        builtins.print, warnings.warn, logging.Logger._log = self.saved


def replay(items) -> None:
    """Do again what one trace recorded (``Recorder.items``), in order."""
    for it in items:
        kind = it[0]
        if kind == "print":
            _, texts, sep, end, file, flush = it
            print(*texts, sep=sep, end=end, file=file, flush=flush)
        elif kind == "warn":
            _, message, category, filename, lineno, module, registry, g = it
            warnings.warn_explicit(message, category, filename, lineno, module, registry, g)
        else:
            _, logger, level, msg, args, exc_info, extra, stack_info = it
            if logger.isEnabledFor(level):
                logger._log(level, msg, args, exc_info=exc_info, extra=extra, stack_info=stack_info)
