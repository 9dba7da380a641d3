"""Anomaly detection (``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``).

While enabled, the forward records the Python stack of every graph node (``node.metadata['traceback_']``), and
backward runs node by node (``engine.run_backward``): a node whose backward raises gets PyTorch's warning with the
forward traceback, and with ``check_nan`` one whose gradients contain NaN raises PyTorch's
``Function 'XBackward0' returned nan values in its 0th output.``. Disabled (the default), the engine and the graph
recording read one flag: nothing else runs.

>>> import functorch_lite as torch
>>> x = torch.tensor([-1.0], requires_grad=True)
>>> with torch.autograd.detect_anomaly():
...     x.sqrt().sum().backward()   # RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
"""
from __future__ import annotations

import traceback
import warnings

import jax.numpy as jnp

from .. import _config

ENABLED = [False]  # anomaly mode on (read by graph.record and engine.run_backward)
CHECK_NAN = [True]
_config._SWITCH_TABLES.append(lambda: (ENABLED[0], CHECK_NAN[0]))  # (compile's guard key: _config.SWITCH_STATE)
_config.refresh_switches()

_WARN = ("Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for "
         "debugging.")


def is_anomaly_enabled() -> bool:
    return ENABLED[0]


def is_anomaly_check_nan_enabled() -> bool:
    return CHECK_NAN[0]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``: switch anomaly mode (and its NaN check) on or off."""
    ENABLED[0] = bool(enabled)
    CHECK_NAN[0] = bool(check_nan)
    _config.refresh_switches()  # (compile's guard key holds anomaly mode: _config.SWITCH_STATE)


class detect_anomaly:
    """Context manager enabling anomaly detection for the autograd engine; warns on entry that it
    slows the program down, as PyTorch does."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = ENABLED[0]
        self.check_nan = check_nan
        self.prev_check_nan = CHECK_NAN[0]
        warnings.warn(_WARN, stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Set anomaly detection on or off: at once (function form), restored on ``__exit__`` (context form)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = ENABLED[0]
        self.prev_check_nan = CHECK_NAN[0]
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


# ---- the graph's and the engine's hooks ------------------------------------------------------------------------
def record_traceback(node) -> None:
    """Keep the forward call's stack on the node (PyTorch's ``metadata['traceback_']``), without this library's
    frames."""
    import os
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frames = [f for f in traceback.extract_stack()[:-1]
              if not (f.filename.startswith("<functorch_lite") or os.path.abspath(f.filename).startswith(pkg))]
    node.metadata["traceback_"] = traceback.format_list(frames)


def run_node(apply, node, cts, *args):
    """``apply(node, cts, *args)`` for the engine in anomaly mode: PyTorch's forward-traceback warning when it
    raises, and its error when ``check_nan`` finds NaN in a gradient it returns."""
    try:
        out = apply(node, cts, *args)
        if CHECK_NAN[0]:
            _check_nan(node, out)
    except Exception:
        warn_error(node)
        raise
    return out


def warn_error(node) -> None:
    """PyTorch's warning for a node whose backward raised in anomaly mode: the forward call's traceback."""
    tb = node._metadata.get("traceback_") if node._metadata else None
    if tb:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                      + "".join(tb), stacklevel=3)
    else:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect "
                      "anomaly during forward pass for more information.", stacklevel=3)


def _check_nan(node, out) -> None:
    from .._tensor.tensor import Tensor
    # the output number PyTorch reports: the input's position among the op's tensor inputs (next_functions)
    inputs, diff = getattr(node, "_inputs", None), getattr(node, "_diff_idx", None)
    for k, g in enumerate(out):
        if g is None:
            continue
        arr = g._array if isinstance(g, Tensor) else g
        if not hasattr(arr, "dtype") or not jnp.issubdtype(arr.dtype, jnp.inexact):
            continue
        if bool(jnp.isnan(arr).any()):
            i = k
            if inputs is not None and diff is not None and k < len(diff):
                i = sum(1 for a in inputs[:diff[k]] if isinstance(a, Tensor))
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
