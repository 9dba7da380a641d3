"""The one place for flags and environment reads.

functorch_lite enables JAX's x64 mode once, at import: PyTorch needs real int64 and float64
tensors, and JAX only has them in x64 mode. Every creation and every op then passes an explicit
dtype, so JAX's x64 defaults (float64 literals) never leak into results.

Environment variables read here (and nowhere else):
- ``FUNCTORCH_LITE_JIT_CACHE_SIZE``: bound on cached jitted kernels per op (default 256).
- ``FUNCTORCH_LITE_OPTIM_ROUNDING``: "fast" (default) or "exact" (see OPTIM_ROUNDING).
- ``FUNCTORCH_LITE_DEBUG``: when "1", dispatch checks that every result's jax dtype equals the
  facade dtype it was given (costs time; off by default).
"""
from __future__ import annotations

import os

import jax

jax.config.update("jax_enable_x64", True)

JIT_CACHE_SIZE: int = int(os.environ.get("FUNCTORCH_LITE_JIT_CACHE_SIZE", "256"))
DEBUG: bool = os.environ.get("FUNCTORCH_LITE_DEBUG", "0") == "1"
# Optimizer arithmetic: "fast" computes each update in the parameter's dtype (one fused XLA kernel, as
# fast as optax; within a few ulps of PyTorch per step); "exact" reproduces PyTorch's CPU rounding bit for
# bit (float64 intermediates rounded where torch rounds; ~6x slower Adam). Read when a step is first traced.
OPTIM_ROUNDING: str = os.environ.get("FUNCTORCH_LITE_OPTIM_ROUNDING", "fast")
# Printing options (set_printoptions changes these).
PRINT_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
