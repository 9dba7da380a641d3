"""Where the library's warnings point, and PyTorch's ``TORCH_WARN_ONCE``.

``user_stacklevel()``: PyTorch raises most of its warnings from C++, so Python reports them at the user's line;
every user-facing ``warnings.warn`` here passes ``stacklevel=user_stacklevel()`` to do the same (Python 3.11 has no
``skip_file_prefixes``). ``warn_once``: a warning shown once per process for each key (``WARNED`` holds the keys
that have warned; tests discard theirs to see a warning again)."""
from __future__ import annotations

import os
import sys
import warnings

from . import _config

WARNED: set = set()

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_GENERATED = "<functorch_lite"  # the filename prefix of the code the op table generates (Tensor methods...)


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` issued by the caller of this function report the first
    frame outside functorch_lite (its directory and its generated code): the user's line. Walks the stack, so
    call it only when a warning is issued. importlib's bootstrap frames are skipped without counting them, as
    ``warnings.warn`` itself skips them."""
    f = sys._getframe(1)
    level = 1
    while f is not None:
        fn = f.f_code.co_filename
        if "importlib" in fn and "_bootstrap" in fn:
            f = f.f_back
            continue
        if not (fn.startswith(_PKG_DIR) or fn.startswith(_GENERATED)):
            return level
        f = f.f_back
        level += 1
    return level


def warn_once(key, msg: str) -> None:
    """Warn ``msg`` (a UserWarning, at the user's line) unless ``key`` has warned already."""
    if key not in WARNED or _config._SWITCHES["warn_always"]:  # (torch.set_warn_always(True): every time)
        WARNED.add(key)
        warnings.warn(msg, UserWarning, stacklevel=user_stacklevel())
