"""PyTorch's ``TORCH_WARN_ONCE``: a warning shown once per process for each key (``WARNED`` holds the keys that
have warned; tests discard theirs to see a warning again)."""
from __future__ import annotations

import warnings

from ._config import _SWITCHES

WARNED: set = set()


def warn_once(key, msg: str, stacklevel: int = 3) -> None:
    """Warn ``msg`` (a UserWarning) unless ``key`` has warned already; ``stacklevel`` 3 names the caller of the
    function that calls this."""
    if key not in WARNED or _SWITCHES["warn_always"]:  # (torch.set_warn_always(True): every time)
        WARNED.add(key)
        warnings.warn(msg, UserWarning, stacklevel=stacklevel)
