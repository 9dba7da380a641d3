"""PyTorch-compatible tensor ``repr``/``str`` formatting, in pure numpy.

:func:`format_tensor` reproduces ``torch/_tensor_str.py`` (torch 2.13) for dense, strided
tensors: the shared per-tensor element width, the choice between integer (``1.``), fixed
(``1.0000``) and scientific (``1.0000e-08``) notation for floating values, summarisation with
``...`` above ``threshold`` elements, wrapping at ``linewidth`` with continuation lines indented
under the opening bracket, complex numbers (separate real and imaginary formatters), empty and
0-d tensors, and the ``device=``/``size=``/``dtype=`` suffixes followed by caller-supplied
suffixes such as ``requires_grad=True`` or ``grad_fn=<MulBackward0>``.

All element text is produced by Python's own ``format`` on Python scalars, exactly as PyTorch
does it (``Tensor.__format__`` of a 0-d tensor formats ``tensor.item()``), so rounding matches.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["format_tensor"]

_PREFIX = "tensor("
_NATIVE_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True)
class _Options:
    precision: int
    threshold: float
    edgeitems: int
    linewidth: int
    sci_mode: bool | None


class _Formatter:
    """Fixed-width formatter for every element of one (real-valued) tensor.

    Mirrors ``torch._tensor_str._Formatter``: ``values`` are the (possibly summarised) elements
    that decide the mode and the column width.
    """

    def __init__(self, values: np.ndarray, floating: bool, opts: _Options) -> None:
        self.floating = floating
        self.precision = opts.precision
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return
        magnitudes = np.abs(nonzero_finite).astype(np.float64)
        lo, hi = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        if opts.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(opts.sci_mode)
        for v in nonzero_finite.tolist():
            if self.sci_mode:
                width = len(f"{v:.{self.precision}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1  # room for the trailing '.'
            else:
                width = len(f"{v:.{self.precision}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value: Any) -> str:
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = f"{value:.{self.precision}f}"
        return text.rjust(self.max_width)


class _Printer:
    """Renders the bracketed body of a non-empty tensor (``_tensor_str`` in PyTorch)."""

    def __init__(self, values: np.ndarray, is_complex: bool, floating: bool,
                 opts: _Options, indent: int) -> None:
        self.opts = opts
        self.summarize = values.size > opts.threshold
        self.real_fmt: _Formatter
        self.imag_fmt: _Formatter | None = None
        if is_complex:
            self.real_fmt = _Formatter(self._formatter_data(values.real), True, opts)
            self.imag_fmt = _Formatter(self._formatter_data(values.imag), True, opts)
        else:
            self.real_fmt = _Formatter(self._formatter_data(values), floating, opts)
        self.text = self._render(values, indent)

    def _formatter_data(self, a: np.ndarray) -> np.ndarray:
        return _summarized(a, self.opts.edgeitems) if self.summarize else a

    def _element(self, value: Any) -> str:
        if self.imag_fmt is None:
            return self.real_fmt.format(value)
        real = self.real_fmt.format(value.real)
        imag = (self.imag_fmt.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag

    def _render(self, a: np.ndarray, indent: int) -> str:
        if a.ndim == 0:
            return self._element(a.item())
        if a.ndim == 1:
            return self._vector(a, indent)
        edge = self.opts.edgeitems
        n = a.shape[0]
        if self.summarize and n > 2 * edge:
            slices = ([self._render(a[i], indent + 1) for i in range(edge)] + ["..."]
                      + [self._render(a[i], indent + 1) for i in range(n - edge, n)])
        else:
            slices = [self._render(a[i], indent + 1) for i in range(n)]
        sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
        return "[" + sep.join(slices) + "]"

    def _vector(self, a: np.ndarray, indent: int) -> str:
        element_length = self.real_fmt.max_width + 2  # ", " between elements
        if self.imag_fmt is not None:
            element_length += self.imag_fmt.max_width + 1  # the 'j'
        per_line = max(1, math.floor((self.opts.linewidth - indent) / element_length))
        edge = self.opts.edgeitems
        if self.summarize and not edge:
            data = ["..."]
        elif self.summarize and a.shape[0] > 2 * edge:
            data = ([self._element(v) for v in a[:edge].tolist()] + [" ..."]
                    + [self._element(v) for v in a[-edge:].tolist()])
        else:
            data = [self._element(v) for v in a.tolist()]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _summarized(a: np.ndarray, edge: int) -> np.ndarray:
    """Flattened elements that survive summarisation (``get_summarized_data``)."""
    if a.ndim == 0:
        return a.reshape(-1)
    if a.ndim == 1:
        # NB: with edge == 0 PyTorch keeps everything, since ``a[-0:]`` is the whole vector.
        return np.concatenate((a[:edge], a[-edge:])) if a.shape[0] > 2 * edge else a
    if not edge:
        return a.reshape(-1)[:0]
    n = a.shape[0]
    rows = list(range(edge)) + list(range(n - edge, n)) if n > 2 * edge else range(n)
    return np.concatenate([_summarized(a[i], edge) for i in rows])


def _add_suffixes(text: str, suffixes: Sequence[str], indent: int, linewidth: int,
                  force_newline: bool = False) -> str:
    """Append ``, suffix`` pieces, starting a new indented line when one would overflow (``force_newline``: the
    first piece on a line of its own, as a sparse tensor's)."""
    parts = [text]
    # Same arithmetic as PyTorch (which over-counts by two when there is no newline).
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _as_printable(values: Any, floating: bool) -> np.ndarray:
    arr = np.asarray(values)
    if floating and arr.dtype not in _NATIVE_FLOATS:
        arr = arr.astype(np.float32)  # e.g. ml_dtypes bfloat16/float8 arrays: exact upcast
    return arr


def format_tensor(values: Any, dtype_name: str, *, default_dtype_name: str = "float32",
                  device_str: str | None = None, suffixes: Sequence[str] = (),
                  precision: int = 4, threshold: float = 1000, edgeitems: int = 3,
                  linewidth: int = 80, sci_mode: bool | None = None) -> str:
    """Return what ``repr(torch_tensor)`` prints for a dense tensor.

    Args:
        values: numpy array of the tensor's values (its shape is the tensor's shape).
            Reduced-precision floats (bfloat16, float8) may be passed upcast to float32.
        dtype_name: torch dtype name without the ``torch.`` prefix, e.g. ``"int32"``.
        default_dtype_name: the current ``torch.get_default_dtype()`` name.
        device_str: device to show as ``device='...'``, or None when it is the default (cpu).
        suffixes: extra ``key=value`` pieces (``requires_grad=True``, ``grad_fn=<...>``),
            appended after the device/size/dtype ones, in order.
        precision, threshold, edgeitems, linewidth, sci_mode: as in
            ``torch.set_printoptions``.
    """
    opts = _Options(precision, threshold, edgeitems, linewidth, sci_mode)
    is_complex = dtype_name.startswith("complex")
    floating = dtype_name.startswith(("float", "bfloat"))
    arr = _as_printable(values, floating)
    indent = len(_PREFIX)

    head: list[str] = []
    if device_str is not None:
        head.append(f"device='{device_str}'")
    if arr.size == 0:
        if arr.ndim != 1:
            head.append(f"size={tuple(arr.shape)}")
        if dtype_name != default_dtype_name:
            head.append(f"dtype=torch.{dtype_name}")
        body = "[]"
    else:
        if not edgeitems:
            head.append(f"size={tuple(arr.shape)}")
        default_complex = "complex128" if default_dtype_name == "float64" else "complex64"
        if dtype_name not in (default_dtype_name, default_complex, "int64", "bool"):
            head.append(f"dtype=torch.{dtype_name}")
        body = _Printer(arr, is_complex, floating, opts, indent).text
    return _add_suffixes(_PREFIX + body, [*head, *suffixes], indent, linewidth)


def format_sparse(indices: Any, values: Any, dtype_name: str, *, size: tuple, nnz: int,
                  default_dtype_name: str = "float32", device_str: str | None = None, suffixes: Sequence[str] = (),
                  precision: int = 4, threshold: float = 1000, edgeitems: int = 3, linewidth: int = 80,
                  sci_mode: bool | None = None) -> str:
    """What ``repr`` prints for a sparse COO tensor (torch's ``_str_intern``: its indices and values, then the
    device, size, nnz, dtype and layout on lines of their own)."""
    opts = _Options(precision, threshold, edgeitems, linewidth, sci_mode)
    indent = len(_PREFIX)

    def body(a, name, at):
        floating = name.startswith(("float", "bfloat"))
        arr = _as_printable(a, floating)
        if arr.size == 0:
            return f"[], size={tuple(arr.shape)}"
        return _Printer(arr, name.startswith("complex"), floating, opts, at).text

    ip, vp = "indices=tensor(", "values=tensor("
    text = (_PREFIX + ip + body(indices, "int64", indent + len(ip)) + "),\n" + " " * indent + vp
            + body(values, dtype_name, indent + len(vp)) + ")")
    head = [f"device='{device_str}'"] if device_str is not None else []
    head += [f"size={tuple(size)}", f"nnz={nnz}"]
    default_complex = "complex128" if default_dtype_name == "float64" else "complex64"
    if dtype_name not in (default_dtype_name, default_complex, "int64", "bool"):
        head.append(f"dtype=torch.{dtype_name}")
    return _add_suffixes(text, [*head, "layout=torch.sparse_coo", *suffixes], indent, linewidth, True)
