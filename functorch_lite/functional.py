"""``torch.functional``: the module where PyTorch defines its Python-level tensor functions (``torch.norm``,
``torch.meshgrid``, ``torch.einsum``...), which older code calls as ``torch.functional.<name>``. Here they are the
top-level functions themselves (one definition each); a name the facade does not provide is absent here too."""
from __future__ import annotations

import sys as _sys

# torch/functional.py's ``__all__``
_NAMES = ("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
          "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
          "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index")

_top = _sys.modules[__package__]  # (imported at the end of functorch_lite/__init__.py: every name is there)
__all__ = [n for n in _NAMES if hasattr(_top, n)]
globals().update({n: getattr(_top, n) for n in __all__})
del _top
