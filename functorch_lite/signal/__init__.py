"""``torch.signal``: signal-processing helpers (``torch.signal.windows``)."""
from . import windows

__all__ = ["windows"]
