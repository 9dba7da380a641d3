"""``torch._inductor``: only its ``config`` module (``torch._inductor.config.coordinate_descent_tuning = True``
and the like, as gpt-fast / nanoGPT-style scripts set them). There is no Inductor here: ``functorch_lite.compile``
hands the whole function to XLA through ``jax.jit``, so every knob is readable with torch 2.13's default,
settable and patchable, and has no effect but ``assert_indirect_indexing`` (the compiled programs' index checks)."""
from . import config  # noqa: F401

__all__ = ["config"]
