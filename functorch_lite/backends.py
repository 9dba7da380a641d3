"""``functorch_lite.backends``: ``backends.mps.is_available()`` (JAX has no Metal backend here)."""
from __future__ import annotations

import types

mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
cuda = types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False), is_built=lambda: True)
cudnn = types.SimpleNamespace(benchmark=False, deterministic=False, allow_tf32=True, enabled=True)
