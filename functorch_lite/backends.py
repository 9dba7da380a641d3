"""``functorch_lite.backends``: ``backends.mps.is_available()`` (JAX has no Metal backend here), and
``backends.cuda.matmul.allow_tf32``, which is ``set_float32_matmul_precision`` under another name (as PyTorch's:
``True`` means "high", ``False`` "highest")."""
from __future__ import annotations

import types

from . import _config


class _Matmul:
    @property
    def allow_tf32(self) -> bool:
        return _config.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _config.set_float32_matmul_precision("high" if value else "highest")


mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
cuda = types.SimpleNamespace(matmul=_Matmul(), is_built=lambda: True)
# cudnn.allow_tf32 (True, as PyTorch's default) is recorded only: XLA's convolutions follow the matmul precision
cudnn = types.SimpleNamespace(benchmark=False, deterministic=False, allow_tf32=True, enabled=True)
