"""Test configuration: two host devices (multi-device tests on CPU) and strict JAX promotion,
so that any implicit JAX type promotion inside the facade is an error, not a silent dtype."""
import os

# Two host devices, and XLA:CPU told to compile quickly: the suite's programs are tiny and most of its time went
# to XLA compiling them (a small program: 31 ms with XLA's defaults, about 23 ms so). Code generation only, the
# same HLO and the same results: LLVM without its expensive passes, and XLA's older loop emitters. (LLVM at -O0
# would halve it again, but it contracts no multiply-add into an FMA: results would differ in their last bits
# from what users run; and XLA's op scheduler is left as it is: the checkpoint test reads the peak memory its
# schedule gives.) comparisons/ keeps XLA's defaults.
os.environ.setdefault("XLA_FLAGS", " ".join([
    "--xla_force_host_platform_device_count=2",
    "--xla_llvm_disable_expensive_passes=true",
    "--xla_cpu_use_fusion_emitters=false",
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
