"""``torch.cuda``'s device selection, properties, RNG state, events and streams.

Without a GPU (this machine) each call is compared with real torch's CPU-only build: the same result or the same
exception type and message (``set_device(0)``: the CPU build's AttributeError).

The GPU behaviour runs against JAX's two host devices standing in for two GPUs (``fake_cuda``): ``cuda``'s device
list is the CPU devices, so ``set_device``, ``with cuda.device(i)``, events, streams and properties take their GPU
paths."""
import time
import warnings

import jax
import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite import _device as _dev

from _parity import same


@pytest.mark.parametrize("call", [
    "set_device(-1)", "set_device('cuda')", "set_device('cpu')", "set_device(1.5)", "get_device_properties(0)",
    "get_device_capability()", "get_device_name(0)", "Event(enable_timing=True)", "Stream()", "current_stream()",
    "default_stream()", "stream(None).__enter__()", "device(0).__enter__()", "device(-1).__enter__()",
    "device('cpu')", "device('cuda:1').idx", "is_initialized()", "init()", "get_rng_state()", "get_rng_state_all()",
    "set_rng_state(L.zeros(16, dtype=L.uint8))", "set_rng_state_all([])", "memory_summary()", "ipc_collect()",
    "is_tf32_supported()", "memory_allocated()", "memory_stats()"])
def test_without_a_gpu_as_torch_cpu_build(call):
    def run(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = eval("L.cuda." + call, {"L": L})
        return dict(r) if type(r).__name__ == "OrderedDict" else r
    try:
        run(torch)
    except AssertionError as e:
        # torch's bare "Torch not compiled with CUDA enabled"; the facade's goes on to say which devices JAX has
        assert str(e) == "Torch not compiled with CUDA enabled"
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled: JAX has no GPU backend "
                                                 "here. Available devices: cpu"):
            run(ft)
        return
    except Exception:  # noqa: BLE001  (compared below)
        pass
    same(run)


def test_set_device_without_a_gpu_names_the_missing_backend():
    with pytest.raises(AttributeError, match="^module 'torch._C' has no attribute '_cuda_setDevice'$"):
        ft.cuda.set_device(0)
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        ft.cuda.current_device()


@pytest.mark.parametrize("name,msg", [("memory_cached", "`torch.cuda.memory_cached` has been renamed to "
                                                         "`torch.cuda.memory_reserved`"),
                                      ("max_memory_cached", "`torch.cuda.max_memory_cached` has been renamed to "
                                                            "`torch.cuda.max_memory_reserved`")])
def test_deprecated_names_warn_as_torch(name, msg):
    for L in (torch, ft):
        with pytest.warns(FutureWarning, match="^" + msg.replace("(", r"\(")):
            assert getattr(L.cuda, name)() == 0
    with pytest.warns(FutureWarning, match="reset_max_memory_allocated now calls"), \
            pytest.raises(AttributeError, match="_cuda_resetPeakMemoryStats"):  # (torch's CPU build: the same)
        ft.cuda.reset_max_memory_allocated()


@pytest.fixture
def fake_cuda(monkeypatch):
    cpus = tuple(jax.devices("cpu"))
    assert len(cpus) == 2  # (tests/conftest.py's two host devices)
    monkeypatch.setitem(_dev._JAX_PLATFORM, "cuda", "cpu")
    _dev.jax_devices.cache_clear()
    _dev._resolve.cache_clear()
    yield cpus
    _dev.CURRENT_CUDA[0] = 0
    monkeypatch.undo()
    _dev.jax_devices.cache_clear()
    _dev._resolve.cache_clear()


def test_set_device_moves_bare_cuda(fake_cuda):
    assert ft.cuda.is_available() and ft.cuda.device_count() == 2 and ft.cuda.is_initialized()
    assert ft.cuda.current_device() == 0 and ft.ones(2, device="cuda").device == ft.device("cuda:0")
    ft.cuda.set_device(1)
    assert ft.cuda.current_device() == 1
    t = ft.ones(2, device="cuda")
    assert t.device == ft.device("cuda:1") and t.get_device() == 1
    assert next(iter(t._storage.array.devices())) == fake_cuda[1]
    assert ft.zeros(3).cuda().device == ft.device("cuda:1") and ft.zeros(3).to("cuda").device.index == 1
    assert ft.zeros(3).cuda(0).device == ft.device("cuda:0")      # an explicit index is kept
    ft.cuda.set_device("cuda:0")
    assert ft.ones(1, device="cuda").device.index == 0
    ft.cuda.set_device(ft.device("cuda", 1))
    ft.cuda.set_device(-1)                                          # ignored
    assert ft.cuda.current_device() == 1
    with pytest.raises(RuntimeError, match="^CUDA error: invalid device ordinal$"):
        ft.cuda.set_device(2)
    assert ft.cuda.current_device() == 1


def test_device_context_restores(fake_cuda):
    with ft.cuda.device(1):
        assert ft.cuda.current_device() == 1 and ft.ones(1, device="cuda").device.index == 1
        with ft.cuda.device(0):
            assert ft.cuda.current_device() == 0
        with ft.cuda.device(-1):                                    # no change
            assert ft.cuda.current_device() == 1
        assert ft.cuda.current_device() == 1
    assert ft.cuda.current_device() == 0
    with pytest.raises(KeyError):
        with ft.cuda.device("cuda:1"):
            raise KeyError("x")
    assert ft.cuda.current_device() == 0
    t = ft.ones(2, device="cuda:1")
    with ft.cuda.device_of(t):
        assert ft.cuda.current_device() == 1
    with ft.cuda.device_of(ft.ones(2)):                             # a CPU tensor: no change
        assert ft.cuda.current_device() == 0


def test_event_timing(fake_cuda):
    start, end = ft.cuda.Event(enable_timing=True), ft.cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="^Both events must be recorded before calculating elapsed time.$"):
        start.elapsed_time(end)
    x = ft.randn(64, 64, device="cuda")
    start.record()
    y = x @ x
    time.sleep(0.05)
    end.record()
    ft.cuda.synchronize()
    ms = start.elapsed_time(end)
    assert 50 <= ms < 5000 and start.query() and end.query()
    np.testing.assert_allclose(y.cpu().numpy(), x.cpu().numpy() @ x.cpu().numpy(), rtol=1e-4, atol=1e-4)
    untimed = ft.cuda.Event()
    untimed.record()
    with pytest.raises(RuntimeError, match="^Both events must be created with argument 'enable_timing=True'.$"):
        start.elapsed_time(untimed)


def test_streams(fake_cuda):
    s = ft.cuda.Stream()
    assert s.device == ft.device("cuda:0") and s == ft.cuda.current_stream() == ft.cuda.default_stream()
    side = ft.cuda.Stream(device=1)
    assert side.device == ft.device("cuda:1") and side != s and side == ft.cuda.current_stream(1)
    with ft.cuda.stream(side) as entered:
        assert entered is side and ft.cuda.current_device() == 1
        side.wait_stream(ft.cuda.default_stream(1))
        y = ft.ones(3, device="cuda") * 2
        ev = side.record_event()
    assert ft.cuda.current_device() == 0 and y.device.index == 1 and y.tolist() == [2.0, 2.0, 2.0]
    assert isinstance(ev, ft.cuda.Event) and ev.query() and side.query()
    s.wait_event(ev)
    s.synchronize()
    with ft.cuda.stream(None) as entered:
        assert entered is None and ft.cuda.current_device() == 0


def test_properties_rng_and_summary(fake_cuda):
    p = ft.cuda.get_device_properties(1)
    assert p.name == fake_cuda[1].device_kind == ft.cuda.get_device_name(1) == ft.cuda.get_device_name()
    assert (p.major, p.minor) == ft.cuda.get_device_capability(1) == (0, 0)   # (CPU devices have no capability)
    assert repr(p).startswith(f"_CudaDeviceProperties(name='{p.name}', major=0, minor=0, total_memory=")
    with pytest.raises(AssertionError, match="^Invalid device id$"):
        ft.cuda.get_device_properties(2)
    assert not ft.cuda.is_tf32_supported()
    state = ft.cuda.get_rng_state()
    assert ft.equal(state, ft.get_rng_state()) and len(ft.cuda.get_rng_state_all()) == 2
    a = ft.randn(4, device="cuda")
    ft.cuda.set_rng_state(state)
    assert ft.equal(ft.randn(4, device="cuda"), a)
    ft.cuda.set_rng_state_all([state, state])
    assert ft.equal(ft.randn(4, device="cuda"), a)
    summary = ft.cuda.memory_summary()
    assert "device ID 0" in summary and "Allocated memory" in summary and "Reserved memory" in summary
    ft.cuda.init()
    ft.cuda.ipc_collect()



def test_compiled_function_follows_the_current_device(fake_cuda):
    @ft.compile
    def make(scale):
        return ft.ones(3, device="cuda") * scale   # (a bare "cuda": the current device, a guard of the program)

    assert make(2.0).device == ft.device("cuda:0") and make(2.0).device == ft.device("cuda:0")
    ft.cuda.set_device(1)
    out = make(2.0)
    assert out.device == ft.device("cuda:1") and out.tolist() == [2.0, 2.0, 2.0]
    assert make.stats["recompiles"] == 1
