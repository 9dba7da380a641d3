"""Test configuration: two host devices (multi-device tests on CPU) and strict JAX promotion,
so that any implicit JAX type promotion inside the facade is an error, not a silent dtype."""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

import jax  # noqa: E402

jax.config.update("jax_numpy_dtype_promotion", "strict")

import functorch_lite  # noqa: E402,F401

# every compiled call that reuses its discovery also walks everything afresh and compares (a stale reuse is an
# AssertionError in whichever test hit it, not a silently wrong program)
from functorch_lite._compile.runner import config as _compile_config  # noqa: E402

_compile_config.verify_discovery = True
