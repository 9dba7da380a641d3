"""Module full backward hooks (``register_full_backward_hook`` / ``register_full_backward_pre_hook``), the way
PyTorch's ``torch.utils.hooks.BackwardHook`` builds them: the module's tensor inputs and outputs pass through an
identity ``autograd.Function`` whose backward sees their gradients. The output side runs the pre-hooks on
``grad_output`` (and keeps it); the input side runs the hooks on ``(grad_input, grad_output)`` once the gradients
of the module's inputs are complete. With no input requiring grad, the hooks fire on the output side with
``grad_input`` all None (and a warning), as PyTorch."""
from __future__ import annotations

import warnings

from ..._tensor.tensor import Tensor
from ...autograd.function import Function

_NO_INPUT_GRAD = ("Full backward hook is firing when gradients are computed with respect to module outputs since no "
                  "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                  "#torch.nn.Module.register_full_backward_hook for more details.")


class _HookIdentity(Function):
    """Identity on ``tensors``; its backward hands their gradients to ``on_grads`` (which may replace them)."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


class BackwardHook:
    def __init__(self, module, hooks: list, pre_hooks: list):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_idx = self.output_idx = None
        self.input_rg: tuple = ()

    @staticmethod
    def _pack(idx, values, size) -> tuple:
        out = [None] * size
        for i, v in zip(idx, values):
            out[i] = v
        return tuple(out)

    def _apply(self, args: tuple, on_grads):
        """``args`` with its tensors through the identity Function; (new args, tensor positions or None)."""
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not any(args[i].requires_grad for i in idx):
            return args, None
        new = _HookIdentity.apply(on_grads, *[args[i] for i in idx])
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return tuple(out), idx

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        self.input_rg = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        args, self.input_idx = self._apply(args, self._input_grads)
        return args

    def _input_grads(self, grads):
        if self.grad_outputs is None:  # the gradient reached the inputs without passing the outputs
            return grads
        res = self._pack(self.input_idx, [g if self.input_rg[i] else None for i, g in zip(self.input_idx, grads)],
                         self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(res)}")
            res = out
        self.grad_outputs = None
        return [res[i] for i in self.input_idx]

    def setup_output_hook(self, out):
        is_tuple = isinstance(out, tuple)
        args = out if is_tuple else (out,)
        self.n_outputs = len(args)
        args, self.output_idx = self._apply(args, self._output_grads)
        return args if is_tuple else args[0]

    def _output_grads(self, grads):
        self.grad_outputs = self._pack(self.output_idx, grads, self.n_outputs)
        for hook in self.pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(new)}, "
                                   f"but expected {len(self.grad_outputs)}")
            self.grad_outputs = tuple(new)
        local = self.grad_outputs
        if self.input_idx is None:
            warnings.warn(_NO_INPUT_GRAD, stacklevel=5)
            none = (None,) * self.n_inputs
            for hook in self.hooks:
                r = hook(self.module, none, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(x is None for x in r)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return [local[i] for i in self.output_idx]
