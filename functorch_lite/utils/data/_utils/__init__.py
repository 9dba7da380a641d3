"""``torch.utils.data._utils``: the modules code written for PyTorch imports from here (``collate``, ``worker``).
They re-export the objects of ``functorch_lite.utils.data`` (one implementation)."""
import sys

IS_WINDOWS = sys.platform == "win32"
MP_STATUS_CHECK_INTERVAL = 5.0
HAS_NUMPY = True

from . import collate, worker  # noqa: E402,F401

__all__ = ["collate", "worker", "IS_WINDOWS", "MP_STATUS_CHECK_INTERVAL", "HAS_NUMPY"]
