"""``torch.signal.windows``: torch's Python window functions (torch/signal/windows/windows.py), the same
composition of tensor ops (``linspace``, ``exp``, ``cos``...) so values, dtypes and autograd follow theirs.

Unlike the ``torch.*_window`` factories these take ``M`` and keyword-only options, accept float32 / float64 only
and raise ``ValueError`` for a bad argument, as torch's do."""
from __future__ import annotations

from collections.abc import Iterable
from math import sqrt

import functorch_lite as torch
from functorch_lite._tensor.tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _window_function_checks(function_name: str, M: int, dtype, layout) -> None:
    """torch's checks common to every window: ``M >= 0``, a strided layout, a float32 / float64 dtype."""
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout is not torch.strided:
        raise ValueError(f"{function_name} is implemented for strided tensors only, got: {layout}")
    if dtype not in [torch.float32, torch.float64]:
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: {dtype}")


def _empty(dtype, layout, device, requires_grad) -> Tensor:
    return torch.empty((0,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=torch.strided, device=None, requires_grad: bool = False) -> Tensor:
    """Exponential (Poisson) window ``exp(-|n - center| / tau)``."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    _window_function_checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = torch.linspace(start=-center * constant, end=(-center + (M - 1)) * constant, steps=M, dtype=dtype,
                       layout=layout, device=device, requires_grad=requires_grad)
    return torch.exp(-torch.abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """Cosine (sine) window ``sin(pi (n + 0.5) / M)``."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    _window_function_checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    start = 0.5
    constant = torch.pi / (M + 1 if not sym and M > 1 else M)
    k = torch.linspace(start=start * constant, end=(start + (M - 1)) * constant, steps=M, dtype=dtype,
                       layout=layout, device=device, requires_grad=requires_grad)
    return torch.sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=torch.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """Gaussian window of standard deviation ``std``."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    _window_function_checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * sqrt(2))
    k = torch.linspace(start=start * constant, end=(start + (M - 1)) * constant, steps=M, dtype=dtype,
                       layout=layout, device=device, requires_grad=requires_grad)
    return torch.exp(-k ** 2)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=torch.strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """Kaiser window ``I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)``, ``N = M - 1 if sym else M``."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    _window_function_checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return torch.ones((1,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    beta = torch.tensor(beta, dtype=dtype, device=device)  # (in the window's dtype: no NaN from a rounded end)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = torch.minimum(beta, start + (M - 1) * constant)
    k = torch.linspace(start=start, end=end, steps=M, dtype=dtype, layout=layout, device=device,
                       requires_grad=requires_grad)
    return torch.i0(torch.sqrt(beta * beta - torch.pow(k, 2))) / torch.i0(beta)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """Hamming window: ``general_hamming`` with ``alpha = 0.54``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
         requires_grad: bool = False) -> Tensor:
    """Hann window: ``general_hamming`` with ``alpha = 0.5``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """Blackman window: ``general_cosine`` with ``a = [0.42, 0.5, 0.08]``."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    _window_function_checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """Bartlett (triangular, zero at both ends) window ``1 - |2n / (M - 1) - 1|``."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    _window_function_checks("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return torch.ones((1,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = torch.linspace(start=start, end=start + (M - 1) * constant, steps=M, dtype=dtype, layout=layout,
                       device=device, requires_grad=requires_grad)
    return 1 - torch.abs(k)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=torch.strided, device=None,
                   requires_grad: bool = False) -> Tensor:
    """Generic weighted sum of cosines ``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    _window_function_checks("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return torch.ones((1,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * torch.pi / (M if not sym else M - 1)
    k = torch.linspace(start=0, end=(M - 1) * constant, steps=M, dtype=dtype, layout=layout, device=device,
                       requires_grad=requires_grad)
    a_i = torch.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                       requires_grad=requires_grad)
    i = torch.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * torch.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=torch.strided, device=None,
                    requires_grad: bool = False) -> Tensor:
    """Generalized Hamming window ``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """Minimum 4-term Blackman-Harris window (Nuttall's)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad)
