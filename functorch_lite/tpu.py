"""``functorch_lite.tpu``: JAX's TPU backend, for device selection (cuda -> tpu -> mps -> cpu).

PyTorch has no ``torch.tpu``; code that must also run on PyTorch guards it with
``getattr(torch, "tpu", None)``.
"""
from __future__ import annotations

from . import _device as _dev


def is_available() -> bool:
    return bool(_dev.jax_devices("tpu"))


def device_count() -> int:
    return len(_dev.jax_devices("tpu"))
