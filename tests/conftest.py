"""Test configuration: two host devices (multi-device tests on CPU) and strict JAX promotion,
so that any implicit JAX type promotion inside the facade is an error, not a silent dtype."""
import gc
import os
import sys

import pytest

# Two host devices, and XLA:CPU's code generation made cheaper: most of the suite's time is XLA compiling tiny
# programs (86% of the whole suite's time, measured per test file 2026-12-01; ``x + y``: 40 ms with XLA's defaults,
# 16 ms so). XLA's loop emitters in place of its newer MLIR fusion emitters (each fusion compiled in a fresh MLIR
# context), the LLVM module compiled as one piece, and LLVM at -O0 but with its SelectionDAG instruction selector
# (``-fast-isel=false``; -O0's default FastISel selects each instruction alone and forms no fused multiply-adds,
# which changes bits: a scan RNN's, small matmuls'). -O0 skips LLVM's IR pipeline and uses its fast register
# allocator: 28% less backend-compile CPU than -O1 on a 194-program sample (elementwise and transcendental ops in
# four float dtypes, reductions, matmul/conv and their gradients, scan RNNs, scatter, integer ops), whose results'
# bits equalled -O1's on 187 of them; the other 7 (variance, batch-norm-like normalisation, exact-GELU's gradient)
# differ where -O1's mem2reg let the selector fuse a multiply-add across what -O0 keeps as a stack slot. A 4-file
# sample (1065 tests: reductions, script scenarios, grad corners, conv) took 118 s against 161 s at -O1, run side by
# side (2026-12-06). Earlier (2026-12-01): the emitter and split flags took the shards from 28 and 27.5 min to 16.6
# and 16.9; the emitters moved one LSTM weight whose first gradient is a cancellation, amplified by Adam's eps-sized
# first step: that scenario uses eps 1e-6 (test_script_scenarios.py). Tried and left out: XLA's plain op scheduler
# (the checkpoint test reads its schedule's peak memory); the FAST_COMPILE preset; LLVM's machine-level passes
# (scheduling, LICM, CSE, sinking, ...) switched off at -O1 (6%, and one gradient's bits moved). comparisons/ keep XLA's defaults.
os.environ.setdefault("XLA_FLAGS", " ".join([
    "--xla_force_host_platform_device_count=2",
    "--xla_llvm_disable_expensive_passes=true",
    "--xla_backend_optimization_level=0",
    "--xla_backend_extra_options=-fast-isel=false",
    "--xla_cpu_use_fusion_emitters=false",
    "--xla_cpu_parallel_codegen_split_count=1",
]))

# JAX's persistent compilation cache (functorch_lite's default: _config.compilation_cache) off: each run compiles
# what it runs, as before; tests/unit/test_compilation_cache.py checks the cache in subprocesses
os.environ.setdefault("FUNCTORCH_LITE_COMPILATION_CACHE", "0")

import jax  # noqa: E402

jax.config.update("jax_numpy_dtype_promotion", "strict")


# JAX lowers each new program in a fresh MLIR context, loading every dialect into it: about 5 ms of the 7-9 ms a
# small program's lowering takes, ~20% of this suite's compile time (tests/parity/test_reductions.py: 548 programs,
# lowering 17.4 -> 8.4 s and 22.0 -> 11.3 s in two back-to-back pairs, XLA's backend compile unchanged). The suite
# reuses one context per thread instead, a fresh one every 400 programs (a context keeps every type and constant it
# uniqued: bounded so). The MLIR modules, hence the programs XLA compiles, are the same; only the test process
# does this (the library leaves JAX as it is).
def _shared_ir_context():
    import threading
    from jax._src.interpreters import mlir as _mlir
    fresh = getattr(_mlir, "make_ir_context", None)
    if fresh is None or getattr(fresh, "_shared", False):
        return
    local = threading.local()

    def make_ir_context():
        n = getattr(local, "n", 400)
        if n >= 400:
            local.ctx, n = fresh(), 0
        local.n = n + 1
        return local.ctx
    make_ir_context._shared = True
    _mlir.make_ir_context = make_ir_context


_shared_ir_context()

import functorch_lite  # noqa: E402,F401

# the default generator starts at a random seed (as PyTorch's); the suite starts it at the fixed default
# 67280421310721 instead, so that its random inputs are the same from run to run
functorch_lite.manual_seed(67280421310721)

# Python's cyclic GC ran every 700 container allocations over a heap of JAX's, torch's and the tests' objects: about
# 5% of a test file's time (tests/parity/test_nn_conv.py + test_special.py: 2.7 s in 1,654 collections), 0.5 s at
# this threshold. Only the test process; tests that need a collection call gc.collect() themselves.
gc.set_threshold(20000, 20, 10)

# every compiled call that reuses its discovery also walks everything afresh and compares (a stale reuse is an
# AssertionError in whichever test hit it, not a silently wrong program)
from functorch_lite._compile.runner import config as _compile_config  # noqa: E402

_compile_config.verify_discovery = True



# The first compile in a process turns torch.distributions' argument validation off, in torch (Dynamo's patch) as
# here: every test starts with it on, torch's and ours, whatever an earlier test compiled.
@pytest.fixture(autouse=True)
def _distribution_validation_on():
    for name in ("functorch_lite.distributions", "torch.distributions"):
        mod = sys.modules.get(name)
        if mod is not None:
            mod.Distribution._validate_args = True


# XLA's CPU backend maps each compiled program's machine code into memory, and JAX keeps thousands of programs: a
# shard's process held ~33,000 maps from its second half on (2026-12-07; Linux's bound: 65,530), where JAX's caches
# evict as fast as the shard compiles. The library clears JAX's compiled-program caches itself near 80% of the bound,
# with a warning (functorch_lite/_stats.py); should the shards grow past 60%, the suite clears them first, silently,
# between two test files (programs a later file needs then compile again), so that no test meets that warning.
_PROGRAMS_CHECKED = [0]


def pytest_runtest_teardown(item, nextitem):
    from functorch_lite import _stats
    n = _stats.COUNTS["compiles"]
    if nextitem is None or nextitem.module is item.module or not _stats.MAP_LIMIT or \
            0 <= n - _PROGRAMS_CHECKED[0] < 2000:
        return
    _PROGRAMS_CHECKED[0] = n
    if _stats._map_count() > 0.6 * _stats.MAP_LIMIT:
        jax.clear_caches()


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
