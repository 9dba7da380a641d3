"""Devices (spec §4, DEV-01..27): ``torch.device`` parsing, equality and repr; tensor placement;
unavailable accelerators; two host CPU devices (conftest sets
``--xla_force_host_platform_device_count=2``) for mixed-device errors, moves and gradients.

Expected values are PyTorch 2.13's, copied from the spec (no torch import: this is a unit test).
"""
from __future__ import annotations

import pickle
import re
from typing import Any, Callable

import jax
import numpy as np
import pytest

import functorch_lite as ft
from functorch_lite import DeviceUnavailableError


def _jax_has(platform: str) -> bool:
    """Whether this JAX install has a backend for ``platform``."""
    try:
        return bool(jax.devices(platform))
    except RuntimeError:
        return False


HAS_GPU = _jax_has("gpu")
CPU0, CPU1 = jax.devices("cpu")[:2]

# ---- parsing (DEV-01..08) -------------------------------------------------------------------------
# spec -> (repr, type, index, str)
PARSE: dict[str, tuple[str, str, Any, str]] = {
    "cpu": ("device(type='cpu')", "cpu", None, "cpu"),
    "cuda": ("device(type='cuda')", "cuda", None, "cuda"),
    "cuda:0": ("device(type='cuda', index=0)", "cuda", 0, "cuda:0"),
    "cuda:1": ("device(type='cuda', index=1)", "cuda", 1, "cuda:1"),
    "mps": ("device(type='mps')", "mps", None, "mps"),
    "mps:0": ("device(type='mps', index=0)", "mps", 0, "mps:0"),
    "cpu:0": ("device(type='cpu', index=0)", "cpu", 0, "cpu:0"),
    "meta": ("device(type='meta')", "meta", None, "meta"),
    "cuda:12": ("device(type='cuda', index=12)", "cuda", 12, "cuda:12"),
}


@pytest.mark.parametrize("spec", list(PARSE))
def test_DEV_01_parse_string(spec: str) -> None:
    """DEV-01: repr, ``.type``, ``.index`` and ``str()`` of parsed device strings."""
    d = ft.device(spec)
    assert (repr(d), d.type, d.index, str(d)) == PARSE[spec]


def test_DEV_03_other_constructors() -> None:
    """DEV-03: (type, index), keywords, and a device argument."""
    assert repr(ft.device("cuda", 1)) == "device(type='cuda', index=1)"
    assert repr(ft.device(type="cuda", index=0)) == "device(type='cuda', index=0)"
    assert repr(ft.device(ft.device("cpu"))) == "device(type='cpu')"
    assert repr(ft.device("cpu", 0)) == "device(type='cpu', index=0)"


_EXPECTED_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, "
                   "mps, meta, hpu, mtia, privateuseone")
PARSE_ERRORS: dict[str, tuple[Callable[[], Any], str]] = {
    "gpu": (lambda: ft.device("gpu"),
            f"Expected one of {_EXPECTED_TYPES} device type at start of device string: gpu"),
    "CUDA_case": (lambda: ft.device("CUDA"),
                  f"Expected one of {_EXPECTED_TYPES} device type at start of device string: CUDA"),
    "negative": (lambda: ft.device("cuda:-1"), "Invalid device string: 'cuda:-1'"),
    "letters": (lambda: ft.device("cuda:a"), "Invalid device string: 'cuda:a'"),
    "space": (lambda: ft.device("cuda: 1"), "Invalid device string: 'cuda: 1'"),
    "two_colons": (lambda: ft.device("cuda:1:2"), "Invalid device string: 'cuda:1:2'"),
    "empty": (lambda: ft.device(""), "Device string must not be empty"),
    "double_index": (lambda: ft.device("cuda:1", 1),
                     "type (string) must not include an index because index was passed explicitly: cuda:1"),
    "int_without_accelerator": (lambda: ft.device(1), "Cannot access accelerator device when none is available."),
    "negative_index_arg": (lambda: ft.device("cuda", -1), "Device index must not be negative"),
    "DEV-14_to_gpu": (lambda: ft.ones(2).to("gpu"),
                      f"Expected one of {_EXPECTED_TYPES} device type at start of device string: gpu"),
}


@pytest.mark.parametrize("name", list(PARSE_ERRORS))
def test_DEV_02_parse_errors(name: str) -> None:
    """DEV-02/04/05/14: RuntimeError with PyTorch's exact message."""
    fn, msg = PARSE_ERRORS[name]
    if name == "int_without_accelerator" and HAS_GPU:
        assert ft.device(1) == ft.device("cuda:1")
        return
    with pytest.raises(RuntimeError, match="^" + re.escape(msg) + "$"):
        fn()


def test_DEV_07_08_equality_and_hash() -> None:
    """DEV-07/08: equal by (type, index); no string comparison; hashable."""
    assert ft.device("cpu") == ft.device("cpu")
    assert ft.device("cuda") != ft.device("cuda:0")
    assert (ft.device("cpu") == "cpu") is False
    assert ft.device("cuda", 1) == ft.device("cuda:1")
    assert len({ft.device("cuda:0"), ft.device("cuda:0"), ft.device("cuda:1")}) == 2
    assert hash(ft.device("cuda:1")) == hash(ft.device("cuda", 1))


def test_device_pickles() -> None:
    for s in ("cpu", "cuda:1", "mps"):
        assert pickle.loads(pickle.dumps(ft.device(s))) == ft.device(s)


# ---- tensor attributes (DEV-09, DEV-15..23) ------------------------------------------------------------
def test_DEV_09_tensor_device_attributes() -> None:
    x = ft.ones(2)
    assert repr(x.device) == "device(type='cpu')" and str(x.device) == "cpu"
    assert x.device.index is None and x.is_cuda is False and x.is_cpu is True and x.get_device() == -1
    assert x._array.devices() == {CPU0}


def test_DEV_09_cpu0_is_reported_as_cpu() -> None:
    """PyTorch reports every CPU tensor's device as ``device(type='cpu')``."""
    assert ft.zeros(2, device="cpu:0").device == ft.device("cpu")
    assert ft.zeros(2, device=ft.device("cpu", 0)).device == ft.device("cpu")


def test_DEV_15_to_same_device_returns_self() -> None:
    """DEV-15: ``x.to('cpu') is x``, ``x.cpu() is x``."""
    x = ft.ones(2)
    assert x.to("cpu") is x and x.cpu() is x and x.to(ft.device("cpu")) is x and x.to("cpu:0") is x


def test_DEV_16_17_availability() -> None:
    """DEV-16/17/18/20: no CUDA (unless JAX has a GPU), no MPS; seed 001's selection gives 'cpu'."""
    assert ft.cuda.is_available() is HAS_GPU
    assert ft.cuda.device_count() == (len(jax.devices("gpu")) if HAS_GPU else 0)
    assert ft.backends.mps.is_available() is False and ft.backends.mps.is_built() is False
    sel = "cuda" if ft.cuda.is_available() else ("mps" if ft.backends.mps.is_available() else "cpu")
    assert sel == ("cuda" if HAS_GPU else "cpu")
    assert ft.get_default_device() == ft.device("cpu")


def test_DeviceUnavailableError_is_assertion_and_runtime_error() -> None:
    assert issubclass(DeviceUnavailableError, AssertionError)
    assert issubclass(DeviceUnavailableError, RuntimeError)


UNAVAILABLE: dict[str, tuple[Callable[[], Any], str]] = {
    "DEV-10_to_cuda": (lambda: ft.ones(2).to("cuda"), "Torch not compiled with CUDA enabled"),
    "DEV-11_to_cuda1": (lambda: ft.ones(2).to("cuda:1"), "Torch not compiled with CUDA enabled"),
    "DEV-12_cuda_method": (lambda: ft.ones(2).cuda(), "Torch not compiled with CUDA enabled"),
    "DEV-19_zeros_cuda1": (lambda: ft.zeros(1, device="cuda:1"), "Torch not compiled with CUDA enabled"),
    "CRE-50_randn_cuda": (lambda: ft.randn(2, device="cuda"), "Torch not compiled with CUDA enabled"),
    "DEV-23_current_device": (lambda: ft.cuda.current_device(), "Torch not compiled with CUDA enabled"),
    "DEV-13_to_mps": (lambda: ft.ones(2).to("mps"), "PyTorch is not linked with support for mps devices"),
    "CRE-49_zeros_mps": (lambda: ft.zeros(2, device="mps"), "PyTorch is not linked with support for mps devices"),
    "tensor_mps": (lambda: ft.tensor([1.], device="mps"), "PyTorch is not linked with support for mps devices"),
}


@pytest.mark.parametrize("name", list(UNAVAILABLE))
def test_DEV_10_unavailable_device_raises(name: str) -> None:
    """DEV-10..13/19/23, CRE-49/50: DeviceUnavailableError starting with PyTorch's text and naming
    the devices that exist. (PyTorch raises NotImplementedError for CRE-49; we raise this error.)"""
    fn, prefix = UNAVAILABLE[name]
    if HAS_GPU and "CUDA" in prefix:
        try:  # where JAX has a GPU, cuda works (or names the GPUs that exist)
            fn()
        except DeviceUnavailableError as e:
            assert "Available devices:" in str(e) and "cuda (" in str(e)
        return
    with pytest.raises(DeviceUnavailableError) as e:
        fn()
    assert str(e.value).startswith(prefix)
    assert "Available devices: cpu (2 devices)" in str(e.value)


def test_missing_host_device_index() -> None:
    """A CPU index past the host devices is a DeviceUnavailableError naming what exists."""
    with pytest.raises(DeviceUnavailableError, match=re.escape("Available devices: cpu (2 devices)")):
        ft.ones(2).to("cpu:2")


def test_DEV_21_22_pin_memory() -> None:
    """DEV-21/22: without an accelerator ``pin_memory()`` raises; ``is_pinned()`` is False."""
    x = ft.ones(2)
    assert x.is_pinned() is False
    if not HAS_GPU:
        with pytest.raises(RuntimeError, match=re.escape("Cannot access accelerator device when none is available.")):
            x.pin_memory()


# ---- two host devices ----------------------------------------------------------------------------------
def test_second_cpu_device_placement() -> None:
    """``zeros(device='cpu:1')`` lives on the second jax device and says so."""
    y = ft.zeros(2, device="cpu:1")
    assert y._array.devices() == {CPU1}
    assert y.device == ft.device("cpu:1") and str(y.device) == "cpu:1" and y.device.index == 1
    assert y.is_cpu and not y.is_cuda and y.get_device() == -1
    assert repr(y) == "tensor([0., 0.], device='cpu:1')"
    for t in (ft.ones(2, 2, device="cpu:1"), ft.arange(3, device="cpu:1"), ft.tensor([1.], device="cpu:1"),
              ft.full((2,), 3., device="cpu:1"), ft.zeros_like(y), ft.eye(2, device="cpu:1")):
        assert t.device == ft.device("cpu:1") and t._array.devices() == {CPU1}


def test_random_on_second_device() -> None:
    ft.manual_seed(0)
    for t in (ft.rand(3, device="cpu:1"), ft.randn(3, device="cpu:1"), ft.randint(0, 5, (3,), device="cpu:1")):
        assert t.device == ft.device("cpu:1") and t._array.devices() == {CPU1}


def test_results_stay_on_input_device() -> None:
    y = ft.arange(6., device="cpu:1").view(2, 3)
    outs = [y * 2, y + y, -y, y.exp(), y.sum(), y.t(), y.view(6), y.clone(), y @ y.t(), y > 1, y.to(ft.float64)]
    for r in outs:
        assert r.device == ft.device("cpu:1"), r
        assert r._array.devices() == {CPU1}
    y.add_(1)
    assert y._array.devices() == {CPU1} and y.device == ft.device("cpu:1")
    v = y.t()
    v.mul_(2)
    assert y._array.devices() == {CPU1}
    np.testing.assert_array_equal(y.numpy(), (np.arange(6.).reshape(2, 3) + 1) * 2)


ELEMENTWISE_MIX: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub_method": lambda a, b: a.sub(b),
    "eq": lambda a, b: a == b,
    "maximum": lambda a, b: ft.maximum(a, b),
    "where": lambda a, b: ft.where(a > 0, a, b),
    "iadd": lambda a, b: a.__iadd__(b),
}


@pytest.mark.parametrize("name", list(ELEMENTWISE_MIX))
def test_mixed_devices_elementwise_error(name: str) -> None:
    """Seed 001 knowledge check: TensorIterator's message names both devices (first operand first)."""
    fn = ELEMENTWISE_MIX[name]
    a, b = ft.ones(2), ft.ones(2, device="cpu:1")
    with pytest.raises(RuntimeError, match="^" + re.escape(
            "Expected all tensors to be on the same device, but found at least two devices, cpu and cpu:1!") + "$"):
        fn(a, b)
    with pytest.raises(RuntimeError, match=re.escape("at least two devices, cpu:1 and cpu!")):
        fn(ft.ones(2, device="cpu:1"), ft.ones(2))


def test_mixed_devices_zero_dim_cpu_tensor_is_not_exempt_between_cpus() -> None:
    """The CPU 0-dim exception applies only to accelerator kernels; two host devices still mismatch."""
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ft.tensor(2.) * ft.ones(2, device="cpu:1")


MM_MIX: dict[str, Callable[[Any, Any], Any]] = {
    "mm": lambda a, b: ft.mm(a, b),
    "matmul_2d": lambda a, b: a @ b,
    "matmul_1d_2d": lambda a, b: a.select(0, 0) @ b,
}


@pytest.mark.parametrize("name", list(MM_MIX))
def test_mixed_devices_mm_error(name: str) -> None:
    """Spec §4.3 rule 2/3: mm's generated check (``x @ W`` lowers to mm for 1-d @ 2-d)."""
    a, b = ft.ones(2, 2), ft.ones(2, 2, device="cpu:1")
    msg = ("Expected all tensors to be on the same device, but got mat2 is on cpu:1, different from other tensors on "
           "cpu (when checking argument in method wrapper_CPU_mm)")
    with pytest.raises(RuntimeError, match="^" + re.escape(msg) + "$"):
        MM_MIX[name](a, b)


def test_move_round_trip() -> None:
    """``.to('cpu:1')`` then ``.to('cpu')`` keeps values and dtype; each move is a new tensor."""
    x = ft.tensor([[1.5, -2.], [3., 4.]], dtype=ft.float64)
    y = x.to("cpu:1")
    assert y is not x and y.device == ft.device("cpu:1") and y._array.devices() == {CPU1}
    assert y.dtype is ft.float64 and not y._is_view()
    z = y.to("cpu")
    assert z.device == ft.device("cpu") and z._array.devices() == {CPU0}
    np.testing.assert_array_equal(z.numpy(), x.numpy())
    w = x.to("cpu:1", ft.float32)
    assert w.dtype is ft.float32 and w.device == ft.device("cpu:1")
    assert x.to(y).device == ft.device("cpu:1")  # DTY-18: to(other) takes other's device
    y.add_(1)  # a move is a copy: the source is unchanged
    assert x.tolist() == [[1.5, -2.], [3., 4.]]


def test_move_of_a_view() -> None:
    x = ft.arange(6.).view(2, 3)
    y = x.t().to("cpu:1")
    assert y.device == ft.device("cpu:1") and y.tolist() == [[0., 3.], [1., 4.], [2., 5.]]


def test_gradient_flows_back_across_move() -> None:
    """``(x.to('cpu:1') * 2).sum().backward()``: x.grad is on x's device; grad_fn is ToCopyBackward0."""
    x = ft.tensor([1., 2., 3.], requires_grad=True)
    y = x.to("cpu:1")
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "ToCopyBackward0"
    (y * 2).sum().backward()
    assert x.grad is not None and x.grad.device == ft.device("cpu")
    assert x.grad._array.devices() == {CPU0}
    assert x.grad.tolist() == [2., 2., 2.]
    # and back the other way, with a second move in the chain
    w = ft.tensor([1., 2.], device="cpu:1", requires_grad=True)
    (w.to("cpu") ** 2).to("cpu:1").sum().backward()
    assert w.grad.device == ft.device("cpu:1") and w.grad._array.devices() == {CPU1}
    assert w.grad.tolist() == [2., 4.]


def test_leaf_created_on_second_device_accumulates_there() -> None:
    w = ft.ones(2, device="cpu:1", requires_grad=True)
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    assert w.grad.device == ft.device("cpu:1") and w.grad.tolist() == [6., 6.]


# ---- float32 matmul precision and synchronize --------------------------------------------------------------
def test_float32_matmuls_default_to_full_precision_as_pytorch():
    """JAX's own default lets a GPU use TF32 (a TPU bfloat16 passes) for float32 matmuls; PyTorch's is "highest".
    The facade sets JAX's default at import, and allow_tf32 is the same switch (PyTorch: True <-> "high")."""
    assert ft.get_float32_matmul_precision() == "highest"
    assert jax.config.jax_default_matmul_precision == "float32"
    assert ft.backends.cuda.matmul.allow_tf32 is False
    try:
        ft.backends.cuda.matmul.allow_tf32 = True
        assert ft.get_float32_matmul_precision() == "high"
        assert jax.config.jax_default_matmul_precision == "tensorfloat32"
        ft.set_float32_matmul_precision("medium")
        assert ft.backends.cuda.matmul.allow_tf32 is True          # torch: "medium" also reads True
        assert jax.config.jax_default_matmul_precision == "bfloat16"
    finally:
        # (allow_tf32 = False alone leaves "medium"'s bf16 CPU setting: torch then refuses to name one precision)
        ft.set_float32_matmul_precision("highest")
    assert ft.get_float32_matmul_precision() == "highest" and ft.backends.cuda.matmul.allow_tf32 is False
    assert jax.config.jax_default_matmul_precision == "float32"


def test_synchronize_waits_for_queued_work():
    """JAX dispatches asynchronously: after synchronize every array on the device is computed."""
    x = ft.randn(600, 600)
    ys = [x @ x for _ in range(4)]
    ft.cpu.synchronize()
    assert all(y._array.is_ready() for y in ys)
    if ft.cuda.is_available():
        ft.cuda.synchronize()  # (without a GPU torch's CPU build raises "Torch not compiled with CUDA enabled")


# ---- results land where the facade says they are, also when a program has no input to place it ---------------
def test_a_backward_that_reads_no_values_places_the_grad_on_the_tensors_device():
    """d(2w)/dw reads nothing: the backward program's only input is the seed gradient. Made inside the program, it
    ran on JAX's default device (on a GPU machine a CPU model's .grad landed on the GPU, seen on an H200)."""
    for make in (lambda f: f, ft.compile):
        w = ft.ones(3, requires_grad=True, device="cpu:1")
        step = make(lambda: (w * 2).sum().backward())
        for _ in range(3):
            step()
        assert w.grad.device == ft.device("cpu:1") and w.grad._array.devices() == {CPU1}
        assert w.grad.tolist() == [6.0, 6.0, 6.0]


def test_compiled_results_are_placed_on_their_facade_device():
    """A program places its outputs with its inputs: a result moved with .to() inside, or made by a function that
    reads no tensor, is moved to the device the facade reports."""
    f = ft.compile(lambda x: (x * 2).to("cpu:1") + 1)
    for _ in range(2):
        r = f(ft.ones(3))
        assert r.device == ft.device("cpu:1") and r._array.devices() == {CPU1} and r.tolist() == [3.0] * 3
    ft.set_default_device("cpu:1")
    try:
        g = ft.compile(lambda n: ft.arange(n) + 1)
        for _ in range(2):
            r = g(3)
            assert r.device == ft.device("cpu:1") and r._array.devices() == {CPU1} and r.tolist() == [1, 2, 3]
    finally:
        ft.set_default_device("cpu")


def test_nothing_lands_on_jaxs_default_device_when_it_is_not_the_facades():
    """On a GPU machine JAX's default device is the GPU while the facade's is the CPU (PyTorch's): kernels that
    read only their inputs' shapes (zero_, zeros_like), eager value-dependent ops (nonzero), a backward that
    reads no values, and a compiled step must all stay on the tensors' device. Here JAX's default is cpu:1."""
    with jax.default_device(CPU1):
        ft.manual_seed(0)
        model = ft.nn.Sequential(ft.nn.Linear(4, 3), ft.nn.ReLU(), ft.nn.Linear(3, 1))
        opt = ft.optim.Adam(model.parameters(), lr=0.1)
        x = ft.randn(8, 4)

        def step():
            opt.zero_grad()
            loss = (model(x) * 2).mean()
            loss.backward()
            opt.step()
            return loss
        made = [step(), ft.compile(step)(), ft.compile(step)()]
        w = ft.ones(3, requires_grad=True)
        (w * 3).sum().backward()
        made += [w.grad, w.grad.zero_(), ft.zeros_like(x), ft.ones_like(x), ft.full_like(x, 2.0), x.new_zeros(2),
                 ft.nonzero(ft.tensor(1.0)), ft.nonzero(x > 0), ft.unique(ft.tensor([3, 1, 3])), x.sum(), x[x > 0]]
        made += list(model.parameters()) + [p.grad for p in model.parameters()]

        class Scale(ft.autograd.Function):  # func.grad seeds its cotangent itself
            @staticmethod
            def forward(t):
                return t * 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                (t,) = ctx.saved_tensors
                made.append(g * t)
                return g * 3
        made.append(ft.func.grad(lambda t: Scale.apply(t).sum())(ft.ones(2)))
        made += [v for st in opt.state.values() for v in st.values() if isinstance(v, ft.Tensor)]
    off = [i for i, t in enumerate(made) if t.device.type != "cpu" or t._array.devices() != {CPU0}]
    assert not off, [(i, made[i]._array.devices()) for i in off]
