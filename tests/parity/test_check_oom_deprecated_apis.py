"""Small torch.* names real scripts use: ``torch._check`` and its family (exception types, torch's default text,
a callable message, the TypeErrors for a non-bool condition), ``torch.OutOfMemoryError`` (``torch.cuda``'s is the
same class, a RuntimeError, so ``except torch.cuda.OutOfMemoryError`` works), top-level ``torch.GradScaler``, the
deprecated per-device autocast spellings (their DeprecationWarning and values) and ``nn.NLLLoss2d`` (its
FutureWarning and NLLLoss's loss). Against torch eager."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

CHECKS = {
    "check": lambda L: L._check(False),
    "check message": lambda L: L._check(False, lambda: "boom"),
    "check true": lambda L: L._check(True),
    "check_index": lambda L: L._check_index(False),
    "check_value": lambda L: L._check_value(False, lambda: "bad value"),
    "check_type": lambda L: L._check_type(False, lambda: "bad type"),
    "check_not_implemented": lambda L: L._check_not_implemented(False),
    "check_with": lambda L: L._check_with(ValueError, False, lambda: "w"),
    "check tensor cond": lambda L: L._check(L.tensor(False)),
    "check int cond": lambda L: L._check(1),
    "check str message": lambda L: L._check(False, "text"),
    "check_tensor_all": lambda L: L._check_tensor_all(L.tensor([True, False])),
    "check_tensor_all true": lambda L: L._check_tensor_all(L.tensor([True])),
    "check_tensor_all int": lambda L: L._check_tensor_all(L.tensor([1, 0])),
}


def _outcome(fn, L):
    try:
        return "returned", fn(L)
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", list(CHECKS))
def test_check_family(name):
    assert _outcome(CHECKS[name], ft) == _outcome(CHECKS[name], torch)


def test_out_of_memory_error():
    for L in (ft, torch):
        assert L.cuda.OutOfMemoryError is L.OutOfMemoryError and issubclass(L.OutOfMemoryError, RuntimeError)
        with pytest.raises(ValueError, match="original"):  # (the except clause is evaluated: the name must exist)
            try:
                raise ValueError("original")
            except L.cuda.OutOfMemoryError:
                pass


def test_grad_scaler_and_deprecated_autocast_spellings():
    def run(L):
        out = [L.GradScaler is L.amp.GradScaler]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out += [L.is_autocast_cpu_enabled(), str(L.get_autocast_cpu_dtype()), str(L.get_autocast_gpu_dtype())]
            with L.autocast("cpu"):
                out.append(L.is_autocast_cpu_enabled())
            L.set_autocast_cpu_dtype(L.float16)
            out.append(str(L.get_autocast_dtype("cpu")))
            L.set_autocast_cpu_dtype(L.bfloat16)
            L.set_autocast_cpu_enabled(False)
            L.set_autocast_gpu_dtype(L.float16)
        out.append([(x.category.__name__, str(x.message).split(" (Triggered")[0]) for x in w])
        return out
    assert run(ft) == run(torch)


def test_nll_loss_2d():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 3, (2, 4, 4))

    def run(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = L.nn.NLLLoss2d(ignore_index=1)
        loss = m(L.tensor(x).log_softmax(1), L.tensor(y))
        return isinstance(m, L.nn.NLLLoss), [(x.category.__name__, str(x.message)) for x in w], loss.item()
    f, t = run(ft), run(torch)
    assert f[:2] == t[:2] and f[2] == pytest.approx(t[2], rel=1e-6)


@pytest.mark.parametrize("call", ["linear", "stack", "cat"])
def test_a_real_torch_tensor_is_named_as_such(call):
    """A real torch tensor where a facade tensor goes: the TypeError names torch.Tensor and how to convert it (it
    said "expected Tensor ..., but got Tensor")."""
    rt = torch.ones(3)
    fn = {"linear": lambda: ft.nn.Linear(3, 1)(rt), "stack": lambda: ft.stack([ft.ones(3), rt]),
          "cat": lambda: ft.cat([ft.ones(3), rt])}[call]
    with pytest.raises(TypeError, match=r"torch\.Tensor \(another library's array: convert it with "
                                        r"functorch_lite\.tensor\(\.\.\.\) or from_dlpack\)"):
        fn()
