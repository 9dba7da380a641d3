"""Parity of anomaly mode (``autograd.detect_anomaly`` / ``set_detect_anomaly``, ``torch.is_anomaly_enabled``...)
with torch: the flags, the warning on entry, the NaN error naming the backward node and output, the forward
traceback warning; ``autograd.gradgradcheck``; ``autograd.Variable``."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

LIBS = (torch, ft)
ENTER = ("Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for "
         "debugging.")


def _nan_errors(lib):
    """(error message, message of the 'Error detected' warning) of three backward passes producing NaN."""
    out = []
    progs = [lambda: lib.tensor([-1.0, 2.0], requires_grad=True).sqrt().sum(),
             lambda: (lib.zeros(2, requires_grad=True) / lib.zeros(2, requires_grad=True)).sum(),  # 1th output
             lambda: ((lib.ones(2, requires_grad=True) * 2).sqrt() * float("nan")).sum()]
    for prog in progs:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                loss = prog()  # (the forward traceback names this line)
                with pytest.raises(RuntimeError) as e:
                    loss.backward()
        msgs = [str(r.message) for r in w]
        assert msgs[0] == ENTER and all(r.category is UserWarning for r in w)
        detected = msgs[1]
        assert "loss = prog()  # (the forward traceback names this line)" in detected
        out.append((str(e.value), detected.split(".")[0]))
    return out


def test_nan_in_backward_raises_torch_error_with_forward_traceback():
    theirs, ours = _nan_errors(torch), _nan_errors(ft)
    assert ours == theirs
    assert ours[0] == ("Function 'SqrtBackward0' returned nan values in its 0th output.", "Error detected in "
                                                                                            "SqrtBackward0")
    assert ours[1][0] == "Function 'DivBackward0' returned nan values in its 1th output."
    assert not ft.is_anomaly_enabled()
    # recorded in anomaly mode: the node keeps the forward traceback (PyTorch's metadata key)
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = lib.ones(2, requires_grad=True) * 2
        assert list(y.grad_fn.metadata) == ["traceback_"]


def test_flags_check_nan_off_and_function_forms_match_torch():
    res = []
    for lib in LIBS:
        r = [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            r += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
            x = lib.tensor([-1.0, 4.0], requires_grad=True)
            x.sqrt().sum().backward()  # NaN gradient, no error
            r.append(x.grad.numpy().tolist())
        r += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        lib.autograd.set_detect_anomaly(True)  # the function form acts at once
        r.append(lib.is_anomaly_enabled())
        lib.autograd.set_detect_anomaly(False)
        r += [lib.set_anomaly_enabled(True, check_nan=False), lib.is_anomaly_enabled(),
              lib.is_anomaly_check_nan_enabled()]
        lib.set_anomaly_enabled(False)
        r += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        r.append(callable(lib.autograd.set_detect_anomaly(False)))  # (not a decorator, as torch's)
        res.append(r)
    np.testing.assert_equal(res[1], res[0])


def test_gradgradcheck_matches_torch():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(2), rng.standard_normal((2, 1))
    for lib in LIBS:
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        w = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(lambda x, w: (x.sin() @ w).tanh(), (x, w))
        assert lib.autograd.gradgradcheck(lambda x: (x * x * x).sum(), (x,),
                                          (lib.tensor(1.5, dtype=lib.float64, requires_grad=True),))

        class Bad(lib.autograd.Function):  # a backward whose own derivative is wrong (x detached in it)
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 2 * x.detach()
        assert lib.autograd.gradcheck(Bad.apply, (x,))
        assert not lib.autograd.gradgradcheck(Bad.apply, (x,), raise_exception=False)


def test_variable_is_the_deprecated_tensor_alias():
    res = []
    for lib in LIBS:
        V = lib.autograd.Variable
        t = lib.ones(2)
        v = V(t, requires_grad=True)
        u = lib.ones(2, requires_grad=True) * 2
        w = V(u)
        with lib.no_grad():
            v.mul_(3)  # shares the values
        res.append((type(v) is type(t), v is t, v.requires_grad, t.requires_grad, t.numpy().tolist(),
                    isinstance(t, V), w.requires_grad, w.grad_fn, V().shape == (0,)))
        with pytest.raises(TypeError, match=re.escape("Variable data has to be a tensor, but got list")):
            V([1, 2])
    assert res[1] == res[0]


def _inplace_error(lib):
    """(error message, the warnings' first lines) of a backward through a saved tensor modified in place, in
    anomaly mode."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            x = lib.randn(3, requires_grad=True)
            y = x.sigmoid()  # (the forward traceback names this line)
            y.mul_(2)
            with pytest.raises(RuntimeError) as e:
                y.sum().backward()
    assert "y = x.sigmoid()  # (the forward traceback names this line)" in str(w[-1].message)
    return str(e.value), [str(r.message).splitlines()[0] for r in w]


def test_inplace_error_in_anomaly_mode_warns_with_the_forward_and_gives_torchs_hint():
    """torch's engine meets the modified saved tensor when the node runs: in anomaly mode it warns with the
    node's forward traceback, and the error's hint points at it (the facade kept the hint to enable anomaly mode,
    with no warning)."""
    ours, theirs = _inplace_error(ft), _inplace_error(torch)
    assert ours == theirs
    assert ours[0].endswith("Hint: the backtrace further above shows the operation that failed to compute its "
                            "gradient. The variable in question was changed in there or anywhere later. Good luck!")
    assert ours[1][-1] == "Error detected in SigmoidBackward0. Traceback of forward call that caused the error:"
