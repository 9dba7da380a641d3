"""Test configuration: two host devices (multi-device tests on CPU) and strict JAX promotion,
so that any implicit JAX type promotion inside the facade is an error, not a silent dtype."""
import os

# Two host devices, and LLVM without its expensive passes: most of the suite's time is XLA compiling tiny programs
# (a small program: 31 ms with XLA's defaults, about 26 ms so). It changes neither the HLO nor a result's bits
# (checked on reductions, softmax, matmuls, and by the whole suite). Tried and left out: LLVM at -O0 (16 ms, but
# no FMA contraction: results' last bits change); XLA's older loop emitters (``use_fusion_emitters=false``: 30%
# faster compiles, the shards 24 and 27 min -> 18 and 21, tanh/sigmoid/exp bits unchanged, but an LSTM weight
# whose first gradient is at rounding level, -6.3e-9, moves past the scenario's parity tolerance after Adam's
# g / (|g| + eps) step); XLA's plain op scheduler (the checkpoint test reads its schedule's peak memory).
# comparisons/ keep XLA's defaults.
os.environ.setdefault("XLA_FLAGS", " ".join([
    "--xla_force_host_platform_device_count=2",
    "--xla_llvm_disable_expensive_passes=true",
]))

import jax  # noqa: E402

jax.config.update("jax_numpy_dtype_promotion", "strict")

import functorch_lite  # noqa: E402,F401

# every compiled call that reuses its discovery also walks everything afresh and compares (a stale reuse is an
# AssertionError in whichever test hit it, not a silently wrong program)
from functorch_lite._compile.runner import config as _compile_config  # noqa: E402

_compile_config.verify_discovery = True

# ``make durations``: seconds per test file (setup + call + teardown), written where the variable says; the
# Makefile merges the shards' files into tests/durations.json, which tests/shard.py balances the shards with
_DURATIONS_OUT = os.environ.get("FUNCTORCH_LITE_TEST_DURATIONS")
_FILE_SECONDS: dict = {}


def pytest_runtest_logreport(report):
    if _DURATIONS_OUT:
        f = report.nodeid.split("::")[0]
        _FILE_SECONDS[f] = _FILE_SECONDS.get(f, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    if _DURATIONS_OUT:
        import json
        with open(_DURATIONS_OUT, "w") as fh:
            json.dump({f: round(s, 1) for f, s in sorted(_FILE_SECONDS.items())}, fh, indent=1)
