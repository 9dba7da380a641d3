"""Module full backward hooks (``register_full_backward_hook`` / ``register_full_backward_pre_hook``), the way
PyTorch's ``torch.utils.hooks.BackwardHook`` builds them: the module's tensor inputs and outputs pass through an
identity ``autograd.Function`` whose backward sees their gradients. The output side runs the pre-hooks on
``grad_output`` (and keeps it); the input side runs the hooks on ``(grad_input, grad_output)`` once the gradients
of the module's inputs are complete. With no input requiring grad, the hooks fire on the output side with
``grad_input`` all None (and a warning), as PyTorch. What each side hands on is checked as torch checks the result
of its inner node post-hook (named ``hook``): same count, and each gradient of the same type and size."""
from __future__ import annotations

import warnings

from ..._tensor.tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from ...autograd.tensor_hooks import check_hook_results
from ..._warn import user_stacklevel as _user_stacklevel

_NO_INPUT_GRAD = ("Full backward hook is firing when gradients are computed with respect to module outputs since no "
                  "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                  "#torch.nn.Module.register_full_backward_hook for more details.")


class BackwardHookFunction(Function):
    """Identity on ``tensors``; its backward hands their gradients to ``on_grads`` (which may replace them). Named
    as torch's (its node is ``BackwardHookFunctionBackward``; errors name it)."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        # (an output no gradient reached is None in the hooks' grad_output, as torch's; an input that needs none
        # gets zeros in grad_input: ``BackwardHook._input_grads``)
        ctx.set_materialize_grads(False)
        ctx.metas = [(t.shape, t.dtype, t.device) for t in tensors]
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads, ctx.metas))


class BackwardHook:
    """torch's ``torch.utils.hooks.BackwardHook`` (its constructor and attribute names): ``setup_input_hook(args)``
    before the module's forward, ``setup_output_hook(result)`` after it."""

    def __init__(self, module, user_hooks: list, user_pre_hooks: list):
        self.module, self.user_hooks, self.user_pre_hooks = module, user_hooks, user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_tensors_index = self.output_tensors_index = None

    @staticmethod
    def _pack(idx, values, size) -> tuple:
        out = [None] * size
        for i, v in zip(idx, values):
            out[i] = v
        return tuple(out)

    def _apply(self, args: tuple, on_grads):
        """``args`` with its tensors through the identity Function; (new args, tensor positions or None)."""
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (any(args[i].requires_grad for i in idx) and is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(on_grads, *[args[i] for i in idx])
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return tuple(out), idx

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, self.input_tensors_index = self._apply(args, self._input_grads)
        return args

    def _input_grads(self, grads, metas):
        if self.grad_outputs is None:  # the gradient reached the inputs without passing the outputs
            return grads
        from ... import zeros
        # (torch's grad_input: its identity node's outputs, materialized: zeros for an input no gradient reached)
        res = prev = self._pack(self.input_tensors_index, [zeros(m[0], dtype=m[1], device=m[2]) if g is None else g
                                                 for g, m in zip(grads, metas)], self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(res)}")
            res = out
        self.grad_outputs = None
        out = tuple(res[i] for i in self.input_tensors_index)
        check_hook_results("hook", tuple(prev[i] for i in self.input_tensors_index), out)
        return out

    def setup_output_hook(self, out):
        is_tuple = isinstance(out, tuple)
        if not is_tuple and not isinstance(out, Tensor):  # (a dict or list: no hook will fire, as torch's)
            warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of Tensors "
                          f"but received {type(out)}", stacklevel=_user_stacklevel())
        args = out if is_tuple else (out,)
        self.n_outputs = len(args)
        args, self.output_tensors_index = self._apply(args, self._output_grads)
        return args if is_tuple else args[0]

    def _output_grads(self, grads, metas):
        self.grad_outputs = self._pack(self.output_tensors_index, grads, self.n_outputs)
        for hook in self.user_pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(new)}, "
                                   f"but expected {len(self.grad_outputs)}")
            self.grad_outputs = tuple(new)
        local = self.grad_outputs
        if self.input_tensors_index is None:
            warnings.warn(_NO_INPUT_GRAD, stacklevel=_user_stacklevel())
            none = (None,) * self.n_inputs
            for hook in self.user_hooks:
                r = hook(self.module, none, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(x is None for x in r)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        out = tuple(local[i] for i in self.output_tensors_index)
        check_hook_results("hook", tuple(grads), out)
        return out


# ---- register_backward_hook (deprecated non-full hooks): on the grad_fn of the module's output ------------------
_NON_FULL_DEPRECATED = "is deprecated and will be removed in future versions. This hook will be missing some"
_USE_FULL = "Please use register_full_backward_hook to get the documented behavior."
_MIXED_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only "
                "one of them.")


def attach_non_full(module, hooks: list, args: tuple, result) -> None:
    """PyTorch's ``_call_impl`` for non-full backward hooks: each runs as ``hook(module, grad_input, grad_output)``
    on the autograd node that made the module's (first tensor) output, so ``grad_input`` is that node's input
    gradients (a non-None result replaces them), with PyTorch's FutureWarnings where that misses gradients."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(lambda gi, go, hook=hook: hook(module, gi, go))
    _warn_non_full(args, result, grad_fn)


def _warn_non_full(inputs, result, grad_fn) -> None:
    def warn(msg):
        warnings.warn(msg, FutureWarning, stacklevel=_user_stacklevel())
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            return warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                        f"Tensors {_NON_FULL_DEPRECATED} of the grad_output. {_USE_FULL}")
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            return warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                        f"tuple of Tensors {_NON_FULL_DEPRECATED} of the grad_input. {_USE_FULL}")
    else:
        inputs = (inputs,)
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warn(f"Using a non-full backward hook when outputs are nested in python data structure {_NON_FULL_DEPRECATED} "
             "grad_output.")
    elif len(out_grad_fn) > 1:
        warn(f"Using a non-full backward hook when outputs are generated by different autograd Nodes "
             f"{_NON_FULL_DEPRECATED} grad_output. {_USE_FULL}")
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
        warn(f"Using a non-full backward hook when the forward contains multiple autograd Nodes "
             f"{_NON_FULL_DEPRECATED} grad_input. {_USE_FULL}")
