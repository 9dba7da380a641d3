"""``SparseAdam``: PyTorch's constructor (its checks and defaults) and its step's refusal of dense gradients.

torch's SparseAdam updates only the entries a *sparse* gradient holds (``nn.Embedding(sparse=True)``'s); the
facade's tensors are dense, so every gradient it meets is dense and ``step()`` raises torch's own error for that
case ("please consider Adam instead"), after the closure and at the first parameter that has a gradient, as
torch's step does. A step over parameters without gradients does nothing, as torch's.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from .optimizer import Optimizer, check_lr

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """``torch.optim.SparseAdam`` (its step needs sparse gradients, which the facade does not make: see above)."""

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        check_lr(lr)
        if lr == 0:  # (torch: lr > 0)
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        sparse_params, complex_params = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse_params.append([index, d_index])
                if p.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    def step(self, closure: Callable[[], Any] | None = None):
        """Run ``closure`` (if given), then refuse the dense gradients (torch's RuntimeError)."""
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
