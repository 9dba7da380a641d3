"""torch.cuda / torch.backends / global switches where JAX has no GPU, against torch 2.13's CPU build: the same
results, or the same exception type and first line (the facade's "Torch not compiled with CUDA enabled"
AssertionError goes on to name the devices JAX has). The GPU paths run against JAX's two host devices standing in
for two GPUs (``fake_cuda``)."""
import json
import math
import os
import subprocess
import sys
import warnings

import jax
import pytest
import torch

import functorch_lite as ft
from functorch_lite import _config, _device as _dev


def _outcome(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(lib)
        except Exception as e:  # noqa: BLE001  (compared)
            return e
    return r


def _same(fn):
    t, f = _outcome(fn, torch), _outcome(fn, ft)
    if isinstance(t, Exception):
        assert isinstance(f, type(t)), (t, f)
        t1, f1 = str(t).splitlines()[0] if str(t) else "", str(f).splitlines()[0] if str(f) else ""
        if type(t) is AssertionError and t1 == "Torch not compiled with CUDA enabled":
            assert f1.startswith(t1 + ": JAX has no GPU backend here. Available devices: cpu"), f1
        else:
            assert f1 == t1, (t1, f1)
        return t
    assert not isinstance(f, Exception), (t, f)
    if type(t).__name__ == "OrderedDict":
        t, f = dict(t), dict(f)
    assert f == t, (t, f)
    return t


# ---- item 1: torch.cuda on a CPU-only build ---------------------------------------------------------------------
CUDA_CALLS = [
    "mem_get_info()", "mem_get_info(0)", "synchronize()", "synchronize(0)", "synchronize('cuda:0')", "initial_seed()",
    "reset_peak_memory_stats()", "reset_max_memory_allocated()", "reset_max_memory_cached()", "set_device(0)",
    "set_device('cuda:0')", "set_device(-1)", "set_device('cpu')", "get_arch_list()", "get_gencode_flags()",
    "list_gpu_processes()", "utilization()", "memory_usage()", "temperature()", "power_draw()", "clock_rate()",
    "get_allocator_backend()", "get_sync_debug_mode()", "set_sync_debug_mode('warn')", "memory_snapshot()",
    "reset_accumulated_memory_stats()", "set_per_process_memory_fraction(0.5)", "caching_allocator_alloc(10)",
    "caching_allocator_delete(0)", "memory_stats_as_nested_dict()", "memory.memory_allocated()",
    "memory.max_memory_allocated()", "memory.memory_reserved()", "memory.memory_stats()", "memory.mem_get_info()",
    "memory.empty_cache()", "nvtx.range_push('a')", "nvtx.range_pop()", "nvtx.mark('a')", "nvtx.range_start('a')",
    "nvtx.range_end(0)", "nvtx.range('a {}', 1).__enter__()", "CUDAGraph()", "graphs.CUDAGraph()", "graph(None)",
    "graph_pool_handle()", "is_current_stream_capturing()", "make_graphed_callables(abs, ())",
    "memory_allocated()", "memory_stats()", "is_available()", "device_count()"]


@pytest.mark.parametrize("call", CUDA_CALLS)
def test_cuda_call_as_torch_cpu_build(call):
    _same(lambda L: eval("L.cuda." + call, {"L": L}))


def test_cuda_calls_raise_what_scripts_catch():
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        ft.cuda.synchronize()
    with pytest.raises(AttributeError, match="^module 'torch._C' has no attribute '_cuda_setDevice'$"):
        ft.cuda.set_device(0)
    assert ft.cuda.get_arch_list() == torch.cuda.get_arch_list() == []
    assert ft.cuda.memory.memory_allocated() == torch.cuda.memory.memory_allocated() == 0


# ---- item 2: torch.backends ---------------------------------------------------------------------------------------
@pytest.fixture
def fresh_switches():
    """functorch_lite's precision switches at their start values, before and after the test (torch's cannot all be
    put back through its API: the sequences below run torch in fresh forked processes)."""
    def reset():
        for k in _config.FP32_PRECISION:
            _config.FP32_PRECISION[k] = None if k in (("cuda", "conv"), ("cuda", "rnn")) else "none"
        _config._SWITCHES.update(float32_matmul_precision="highest", cudnn_allow_tf32=True)
        _config._apply_matmul_precision()
    reset()
    yield
    reset()


BACKEND_READS = [
    "cudnn.is_available()", "cudnn.version()", "cudnn.enabled", "cudnn.benchmark", "cudnn.deterministic",
    "cudnn.allow_tf32", "cudnn.benchmark_limit", "cudnn.depthwise_kernel", "cudnn.fp32_precision",
    "cudnn.conv.fp32_precision", "cudnn.rnn.fp32_precision", "cuda.matmul.allow_tf32",
    "cuda.matmul.allow_fp16_reduced_precision_reduction", "cuda.matmul.allow_bf16_reduced_precision_reduction",
    "cuda.matmul.allow_fp16_accumulation", "cuda.matmul.fp32_precision", "fp32_precision", "cuda.is_built()",
    "mkldnn.is_available()", "mkl.is_available()", "openmp.is_available()", "mkldnn.enabled",
    "mkldnn.fp32_precision", "mkldnn.matmul.fp32_precision", "mps.is_available()", "mps.is_built()",
    "mps.is_macos13_or_newer()", "cuda.preferred_linalg_library().name", "cuda.cufft_plan_cache.max_size",
    "cuda.cufft_plan_cache.size", "cuda.cufft_plan_cache[0]", "cuda.cufft_plan_cache.clear()",
    "cuda.is_flash_attention_available()", "cuda.fp16_bf16_reduction_math_sdp_allowed()",
    "cpu.get_cpu_capability()", "cuda.matmul.nonexistent", "cudnn.conv.nonexistent", "opt_einsum.is_available()",
    "opt_einsum.enabled", "opt_einsum.strategy"]


@pytest.mark.parametrize("expr", BACKEND_READS)
def test_backend_read_as_torch_cpu_build(expr, fresh_switches):
    _same(lambda L: eval("L.backends." + expr, {"L": L}))


BACKEND_WRITES = [
    ("cuda", "foo", 1), ("cudnn", "foo", 1), ("mkldnn", "foo", 1), ("mps", "foo", 1), ("cuda.matmul", "foo", 1),
    ("cudnn.conv", "foo", 1), ("cuda.matmul", "allow_tf32", 1), ("cuda.matmul", "allow_tf32", "x"),
    ("cuda.matmul", "allow_fp16_reduced_precision_reduction", 1),
    ("cuda.matmul", "allow_fp16_reduced_precision_reduction", False),
    ("cuda.matmul", "allow_bf16_reduced_precision_reduction", (False,)),
    ("cuda.matmul", "allow_bf16_reduced_precision_reduction", ()), ("cuda.matmul", "fp32_precision", "bf16"),
    ("cuda.matmul", "fp32_precision", "foo"), ("cudnn", "benchmark", 1), ("cudnn", "enabled", 0),
    ("cudnn", "deterministic", "x"), ("cudnn", "allow_tf32", 1), ("cudnn.conv", "fp32_precision", "bf16"),
    ("cudnn", "benchmark", True), ("cuda.cufft_plan_cache", "max_size", 10), ("opt_einsum", "strategy", "fast"),
    ("opt_einsum", "strategy", "auto")]


@pytest.mark.parametrize("ns,name,value", BACKEND_WRITES)
def test_backend_write_as_torch(ns, name, value, fresh_switches):
    def write(L):
        obj = eval("L.backends." + ns, {"L": L})
        try:
            setattr(obj, name, value)
            return getattr(obj, name)
        finally:
            if name in ("benchmark", "enabled", "deterministic") and isinstance(value, bool):
                setattr(obj, name, {"enabled": True}.get(name, False))
            if name.startswith("allow_") and "reduction" in name:
                setattr(obj, name, True)
    _same(write)


# (the sequences and the state read, as source: torch runs them in a process that does not import
# functorch_lite)
_SEQUENCE_CODE = r'''
FP32_SEQUENCES = [
    "L.set_float32_matmul_precision('high')", "L.set_float32_matmul_precision('medium')",
    "b.cuda.matmul.allow_tf32 = True", "b.cuda.matmul.allow_tf32 = False", "b.cuda.matmul.fp32_precision = 'tf32'",
    "b.cuda.matmul.fp32_precision = 'ieee'", "b.fp32_precision = 'tf32'", "b.fp32_precision = 'ieee'",
    "b.fp32_precision = 'bf16'", "b.cudnn.fp32_precision = 'ieee'", "b.cudnn.conv.fp32_precision = 'ieee'",
    "b.cudnn.allow_tf32 = False", "b.mkldnn.matmul.fp32_precision = 'bf16'", "b.mkldnn.fp32_precision = 'bf16'",
    "L.set_float32_matmul_precision('high'); b.cuda.matmul.fp32_precision = 'ieee'",
    "b.cuda.matmul.fp32_precision = 'tf32'; L.set_float32_matmul_precision('high')",
    "b.cudnn.conv.fp32_precision = 'tf32'; b.cuda.matmul.fp32_precision = 'ieee'; b.fp32_precision = 'tf32'; "
    "b.fp32_precision = 'none'", "b.cudnn.conv.fp32_precision = 'tf32'; b.fp32_precision = 'ieee'",
    "b.cudnn.allow_tf32 = False; b.fp32_precision = 'tf32'",
    "L.set_float32_matmul_precision('medium'); b.cuda.matmul.fp32_precision = 'ieee'",
    "b.cudnn.conv.fp32_precision = 'none'", "b.cudnn.conv.fp32_precision = 'none'; b.fp32_precision = 'ieee'",
    "b.cudnn.fp32_precision = 'ieee'; b.cudnn.fp32_precision = 'none'",
    "b.cudnn.allow_tf32 = True; b.fp32_precision = 'ieee'",
    "with b.cudnn.flags(enabled=False, benchmark=True, deterministic=True, allow_tf32=False, fp32_precision='ieee'):"
    " inside.extend([b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.conv.fp32_precision,"
    " b.cuda.matmul.fp32_precision])",
    "with b.cudnn.flags(): inside.extend([b.cudnn.enabled, b.cudnn.benchmark])",
    "with b.flags(fp32_precision='tf32'): inside.extend(_fp32_state(L))"]


def _fp32_state(L):
    b = L.backends
    out = []
    for get in (L.get_float32_matmul_precision, lambda: b.cuda.matmul.allow_tf32, lambda: b.fp32_precision,
                lambda: b.cuda.matmul.fp32_precision, lambda: b.cudnn.fp32_precision,
                lambda: b.cudnn.conv.fp32_precision, lambda: b.cudnn.rnn.fp32_precision, lambda: b.cudnn.allow_tf32,
                lambda: b.mkldnn.fp32_precision, lambda: b.mkldnn.matmul.fp32_precision,
                lambda: b.mkldnn.conv.fp32_precision):
        try:
            out.append(get())
        except RuntimeError as e:
            out.append("RuntimeError: " + str(e).splitlines()[0])
    return out


def _run_sequence(L, seq):
    inside: list = []
    exec(seq, {"L": L, "b": L.backends, "inside": inside, "_fp32_state": _fp32_state})
    return [inside, _fp32_state(L), [L.backends.cudnn.enabled, L.backends.cudnn.benchmark]]
'''
_ns: dict = {}
exec(_SEQUENCE_CODE, _ns)
FP32_SEQUENCES, _fp32_state, _run_sequence = _ns["FP32_SEQUENCES"], _ns["_fp32_state"], _ns["_run_sequence"]


_TORCH_SEQUENCES = """
import json, os, sys
import torch
ns = {}
exec(sys.stdin.read(), ns)
for seq in ns["FP32_SEQUENCES"]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = ns["_run_sequence"](torch, seq)
        except Exception as e:
            out = type(e).__name__ + ": " + str(e).splitlines()[0]
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.waitpid(pid, 0)
    print(json.dumps([seq, json.loads(data)]))
"""


@pytest.fixture(scope="module")
def torch_sequences():
    """Each sequence's outcome in torch, each from torch's start state (a forked child of one fresh process)."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    r = subprocess.run([sys.executable, "-c", _TORCH_SEQUENCES], input=_SEQUENCE_CODE, capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return dict(json.loads(line) for line in r.stdout.splitlines())


@pytest.mark.parametrize("seq", FP32_SEQUENCES)
def test_fp32_precision_settings_and_their_legacy_spellings_as_torch(seq, torch_sequences, fresh_switches):
    try:
        got = _run_sequence(ft, seq)
    except Exception as e:  # noqa: BLE001  (compared)
        got = type(e).__name__ + ": " + str(e).splitlines()[0]
    assert got == torch_sequences[seq]


def test_fp32_precision_sets_jax_matmul_precision(fresh_switches):
    assert jax.config.jax_default_matmul_precision == "float32"
    ft.backends.cuda.matmul.fp32_precision = "tf32"
    assert jax.config.jax_default_matmul_precision == "tensorfloat32"
    assert _config._SWITCHES["matmul_precision"] == "high"  # (compile's guard key follows)
    ft.backends.cuda.matmul.fp32_precision = "ieee"
    assert jax.config.jax_default_matmul_precision == "float32"
    ft.set_float32_matmul_precision("medium")
    assert jax.config.jax_default_matmul_precision == "bfloat16"
    ft.backends.cuda.matmul.allow_tf32 = True
    assert jax.config.jax_default_matmul_precision == "tensorfloat32"
    ft.set_float32_matmul_precision("highest")
    assert jax.config.jax_default_matmul_precision == "float32" and ft.get_float32_matmul_precision() == "highest"


def test_cudnn_flags_context_values(torch_sequences):
    seq = [s for s in FP32_SEQUENCES if "allow_tf32=False, fp32_precision='ieee'" in s][0]
    assert torch_sequences[seq][0] == [False, True, True, "ieee", "ieee"]
    assert torch_sequences[seq][2] == [True, False]  # (restored after the block)


def test_preferred_linalg_library_as_torch():
    try:
        for arg in ("cusolver", "magma", "foo", 1, "default", None):
            _same(lambda L: getattr(L.backends.cuda.preferred_linalg_library(arg), "name", None))
    finally:
        torch.backends.cuda.preferred_linalg_library("default")
        ft.backends.cuda.preferred_linalg_library("default")


# ---- item 3: torch.mps / torch.xpu / get_device_module / torch.cpu / torch.__config__ ----------------------------
OTHER_CALLS = [
    "mps.is_available()", "mps.device_count()", "mps.synchronize()", "mps.manual_seed(0)", "mps.seed()",
    "mps.get_rng_state()", "mps.empty_cache()", "mps.current_allocated_memory()", "mps.driver_allocated_memory()",
    "mps.recommended_max_memory()", "mps.set_per_process_memory_fraction(0.5)",
    "xpu.is_available()", "xpu.device_count()", "xpu.is_initialized()", "xpu.current_device()", "xpu.synchronize()",
    "xpu.empty_cache()", "xpu.memory_allocated()", "xpu.memory_stats()", "xpu.get_device_name()", "xpu.init()",
    "xpu.is_bf16_supported()", "xpu.manual_seed(0)", "xpu.set_device(0)", "xpu.Stream()", "xpu.Event()",
    "xpu.device(0).__enter__()", "xpu.device(-1).__enter__()", "xpu.reset_peak_memory_stats()",
    "xpu.get_arch_list()", "xpu.is_current_stream_capturing()",
    "get_device_module('cuda').__name__.split('.')[-1]", "get_device_module('cpu').__name__.split('.')[-1]",
    "get_device_module('mps').__name__.split('.')[-1]", "get_device_module('xpu').__name__.split('.')[-1]",
    "get_device_module(None).__name__.split('.')[-1]", "get_device_module(L.device('cuda:1')).__name__[-4:]",
    "get_device_module('meta')", "get_device_module('foo')", "get_device_module(1)",
    "cpu.device_count()", "cpu.current_device()", "cpu.is_initialized()", "cpu.set_device('cpu')",
    "__config__.show().__class__.__name__", "__config__.parallel_info().__class__.__name__"]


@pytest.mark.parametrize("call", OTHER_CALLS)
def test_device_modules_as_torch_cpu_build(call):
    _same(lambda L: eval("L." + call, {"L": L}))


def test_xpu_assertion_is_torch_s():
    with pytest.raises(AssertionError, match="^Torch not compiled with XPU enabled$"):
        ft.xpu.current_device()


# ---- item 4: argument checks of the global switches; deterministic empty ------------------------------------------
@pytest.mark.parametrize("call", [
    "set_float32_matmul_precision(3)", "set_float32_matmul_precision(None)", "set_num_threads(True)",
    "set_num_threads(1.5)", "set_num_threads('2')", "set_num_threads(0)", "set_num_interop_threads(True)",
    "set_num_interop_threads(2.0)", "set_num_interop_threads(-1)", "use_deterministic_algorithms('yes')",
    "use_deterministic_algorithms(1)", "use_deterministic_algorithms(True, warn_only=1)",
    "use_deterministic_algorithms(None)"])
def test_switch_argument_errors_as_torch(call):
    assert isinstance(_same(lambda L: eval("L." + call, {"L": L})), (RuntimeError, TypeError))


def test_second_set_num_interop_threads_raises_as_torch():
    saved = dict(_config._SWITCHES)
    try:
        for L in (torch, ft):
            try:
                L.set_num_interop_threads(2)
            except RuntimeError:
                pass  # (torch: already refused once parallel work has run in this process)
        _same(lambda L: L.set_num_interop_threads(2))
        assert ft.get_num_interop_threads() == 2
    finally:
        _config._SWITCHES.update(interop_threads_set=saved["interop_threads_set"],
                                 num_interop_threads=saved["num_interop_threads"])


def test_fill_uninitialized_memory_flag_and_values_as_torch():
    for L in (torch, ft):
        assert L.utils.deterministic.fill_uninitialized_memory is True
    _same(lambda L: setattr(L.utils.deterministic, "fill_uninitialized_memory", 1))
    names = ["float32", "float16", "bfloat16", "float64", "complex64", "int8", "uint8", "int16", "int32", "int64",
             "bool"]
    assert all(_config.empty_fill_value(getattr(ft, n)) == 0 for n in names)  # (deterministic mode off)
    torch.use_deterministic_algorithms(True)
    ft.use_deterministic_algorithms(True)
    try:
        for n in names:
            want = torch.empty(1, dtype=getattr(torch, n))
            want = want.real if want.is_complex() else want
            got = _config.empty_fill_value(getattr(ft, n))
            assert (math.isnan(got) and want.isnan().item()) or got == want.item(), (n, got, want)
        ft.utils.deterministic.fill_uninitialized_memory = False
        assert _config.empty_fill_value(ft.int32) == 0
    finally:
        torch.use_deterministic_algorithms(False)
        ft.use_deterministic_algorithms(False)
        ft.utils.deterministic.fill_uninitialized_memory = True


# ---- item 5: device strings ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(" cuda",), ("cuda ",), ("cu da",), ("\tcuda",), (":0",), (" ",), ("cuda\n",),
                                  ("gpu",), ("CUDA",), ("cuda:",), (1.0,), (None,), ([0],), (True,),
                                  ("cuda", 1.0), ("cuda", True), ("cpu", "0"), (None, 0), ("cuda", -1)])
def test_device_parsing_errors_as_torch(args):
    _same(lambda L: L.device(*args))


def test_device_type_error_text_is_torch_s():
    for L in (torch, ft):
        with pytest.raises(TypeError) as e:
            L.device(1.0)
        assert str(e.value).splitlines()[:2] == ["device() received an invalid combination of arguments - got "
                                                 "(float), but expected one of:", " * (torch.device device)"]


# ---- the GPU paths, on JAX's two host devices standing in for GPUs ------------------------------------------------
@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setitem(_dev._JAX_PLATFORM, "cuda", "cpu")
    _dev.jax_devices.cache_clear()
    _dev._resolve.cache_clear()
    yield
    _dev.CURRENT_CUDA[0] = 0
    monkeypatch.undo()
    _dev.jax_devices.cache_clear()
    _dev._resolve.cache_clear()


def test_gpu_paths_use_the_jax_device(fake_cuda):
    c = ft.cuda
    x = ft.ones(8, device="cuda:1")
    c.synchronize()
    c.synchronize(1)
    assert c.initial_seed() == ft.initial_seed()
    free, total = c.mem_get_info()           # (host devices keep no allocator statistics: 0s)
    assert free == total == 0 and c.memory.memory_allocated() == 0
    c.reset_peak_memory_stats()
    c.reset_accumulated_memory_stats()
    c.set_device(1)
    assert c.current_device() == 1 and c.get_allocator_backend() == "native"
    assert c.get_arch_list() == ["sm_00"] and c.get_sync_debug_mode() == 0 and not c.is_current_stream_capturing()
    c.set_sync_debug_mode("default")
    with pytest.raises(RuntimeError, match="set_sync_debug_mode\\(1\\) is not supported"):
        c.set_sync_debug_mode("warn")
    for bad in (lambda: c.CUDAGraph(), lambda: c.memory_snapshot(), lambda: c.caching_allocator_alloc(8),
                lambda: c.set_per_process_memory_fraction(0.5)):
        with pytest.raises(RuntimeError, match="is not supported by functorch_lite"):
            bad()
    with pytest.raises(ValueError, match="^Invalid fraction value: 2.0. Allowed range: 0~1$"):
        c.set_per_process_memory_fraction(2.0)
    assert c.nvtx.range_push("outer") == 0 and c.nvtx.range_push("inner") == 1
    assert c.nvtx.range_pop() == 1 and c.nvtx.range_pop() == 0 and c.nvtx.range_pop() == -1
    with c.nvtx.range("step {}", 3):
        y = x * 2
    c.nvtx.range_end(c.nvtx.range_start("r"))
    c.nvtx.mark("m")
    assert y.device == ft.device("cuda:1")
    b = ft.backends
    assert b.cuda.is_built() and b.cudnn.is_available() and b.cudnn.benchmark_limit == 10
    assert b.cuda.cufft_plan_cache.size == 0 and b.cuda.cufft_plan_cache[0].max_size == 4096
    with pytest.raises(RuntimeError, match="^.size is a read-only property"):
        b.cuda.cufft_plan_cache.size = 3
    assert ft.get_device_module() is ft.cuda


def test_new_precision_api_is_a_compile_guard(fresh_switches):
    f = ft.compile(lambda a, b: a @ b)
    a, b = ft.ones(2, 3), ft.ones(3, 2)
    f(a, b)
    ft.backends.cuda.matmul.fp32_precision = "tf32"
    assert f(a, b).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    ft.backends.cuda.matmul.fp32_precision = "ieee"
    f(a, b)
    assert f.stats["traces"] == 2 and f.stats["recompiles"] == 1 and f.stats["cache_hits"] == 1


@pytest.mark.parametrize("name", ["float32", "float16", "int64", "int32", "bool", "complex64"])
def test_empty_under_deterministic_mode_is_filled_as_torch(name):
    """``use_deterministic_algorithms(True)`` (fill_uninitialized_memory on): empty / empty_like / new_empty hold
    torch's known values (NaN, the largest integer, True); off again: zeros here (uninitialised in torch)."""
    def run(L):
        L.use_deterministic_algorithms(True)
        try:
            dt = getattr(L, name)
            return [L.empty(3, dtype=dt).tolist(), L.empty_like(L.ones(2, dtype=dt)).tolist(),
                    L.ones(1, dtype=dt).new_empty(2).tolist()]
        finally:
            L.use_deterministic_algorithms(False)
    got, want = run(ft), run(torch)
    assert repr(got) == repr(want)
    assert ft.empty(2).tolist() == [0.0, 0.0]
