"""``differentiable=True``: the step as facade ops under grad mode, so a backward through it reaches what the
update read (the parameters' history, a tensor ``lr``, the gradients made with ``create_graph=True``).

The optax programs (optimizer.py) compute on raw arrays, outside autograd: the differentiable step is
torch's ``_single_tensor_*`` update written with facade ops instead (the formulas torch runs with
``differentiable=True``, their ``clone()``s included, since those decide which saved values a backward reads). It
runs only when the optimizer was built with ``differentiable=True`` (torch's ``_use_grad_for_differentiable``
reads ``defaults['differentiable']``): the default path is untouched. Its per-parameter state lives in
``optimizer.state[p]`` as plain tensors (torch's own layout), never in the optax state. As in torch, an in-place
update of a leaf that requires grad raises the leaf in-place error.
"""
from __future__ import annotations

from .._tensor.tensor import Tensor


def _to_scalar(x):
    """torch.optim.optimizer._to_scalar: a 1-element tensor hyperparameter as a 0-d one."""
    return x.squeeze() if isinstance(x, Tensor) and x.dim() != 0 else x


def _grad_of(p, maximize):
    return -p._grad if maximize else p._grad


def _decayed(grad, param, weight_decay):
    """``grad + weight_decay * param`` as torch's differentiable path forms it (a tensor decay that requires grad
    multiplies a clone of the parameter)."""
    if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
        return grad.addcmul_(param.clone(), weight_decay)
    return grad.add(param, alpha=weight_decay)


def sgd_step(opt, group, params) -> None:
    """torch.optim.sgd._single_tensor_sgd (and SGD.step's keeping of the momentum buffers)."""
    lr = _to_scalar(group["lr"])
    momentum, dampening, weight_decay = group["momentum"], group["dampening"], group["weight_decay"]
    for param in params:
        grad = _grad_of(param, group["maximize"])
        if weight_decay != 0:
            grad = _decayed(grad, param, weight_decay)
        if momentum != 0:
            state = opt.state[param]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            state["momentum_buffer"] = buf
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        if isinstance(lr, Tensor) and lr.requires_grad:
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-lr)


def _new_step():
    """A fresh ``state['step']``: torch's ``_get_scalar_dtype()`` 0-d tensor."""
    from .. import float32, float64, get_default_dtype, tensor
    return tensor(0.0, dtype=float64 if get_default_dtype() is float64 else float32)


def rmsprop_step(opt, group, params) -> None:
    """torch.optim.rmsprop._single_tensor_rmsprop's ``differentiable`` branch, with RMSprop._init_group's lazy
    state."""
    from .. import is_complex, view_as_real
    lr = _to_scalar(group["lr"])
    alpha, eps, weight_decay = group["alpha"], group["eps"], group["weight_decay"]
    momentum, centered = group["momentum"], group["centered"]
    for param in params:
        state = _lazy_state(opt, param, "RMSprop", ("square_avg",) + ("momentum_buffer",) * (momentum > 0)
                            + ("grad_avg",) * bool(centered))
        grad = _grad_of(param, group["maximize"])
        square_avg = state["square_avg"]
        state["step"] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        complex_param = is_complex(param)
        if complex_param:
            param, grad, square_avg = view_as_real(param), view_as_real(grad), view_as_real(square_avg)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = view_as_real(state["grad_avg"]) if complex_param else state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps)
        if momentum > 0:
            buf = view_as_real(state["momentum_buffer"]) if complex_param else state["momentum_buffer"]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


def _lazy_state(opt, param, name, fields, sparse_msg=None):
    """``opt.state[param]``, made on the parameter's first step as torch's ``_init_group``: ``step`` and zero
    tensors named ``fields``; torch's error for a sparse gradient (``sparse_msg``, else the common wording)."""
    from .. import zeros_like
    if param._grad.is_sparse:
        raise RuntimeError(sparse_msg or f"{name} does not support sparse gradients")
    state = opt.state[param]
    if len(state) == 0:
        state["step"] = _new_step()
        for f in fields:
            state[f] = zeros_like(param)
    return state


def adadelta_step(opt, group, params) -> None:
    """torch.optim.adadelta._single_tensor_adadelta's ``differentiable`` branch."""
    from .. import is_complex, view_as_complex, view_as_real
    lr = _to_scalar(group["lr"])
    rho, eps, weight_decay = group["rho"], group["eps"], group["weight_decay"]
    for param in params:
        state = _lazy_state(opt, param, "Adadelta", ("square_avg", "acc_delta"))
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        state["step"] += 1
        grad = _grad_of(param, group["maximize"])
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        complex_param = is_complex(param)
        if complex_param:
            square_avg, acc_delta, grad = view_as_real(square_avg), view_as_real(acc_delta), view_as_real(grad)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        if complex_param:
            delta = view_as_complex(delta)
        param.add_(delta, alpha=-lr)


def adamax_step(opt, group, params) -> None:
    """torch.optim.adamax._single_tensor_adamax's ``differentiable`` branch."""
    from .. import amax, cat, is_complex, view_as_real
    lr = _to_scalar(group["lr"])
    beta1, beta2 = group["betas"]
    eps, weight_decay = group["eps"], group["weight_decay"]
    for param in params:
        state = _lazy_state(opt, param, "Adamax", ("exp_avg", "exp_inf"))
        exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
        step_t += 1
        grad = _grad_of(param, group["maximize"])
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if is_complex(param):
            param, grad = view_as_real(param), view_as_real(grad)
            exp_avg, exp_inf = view_as_real(exp_avg), view_as_real(exp_inf)
        exp_avg.lerp_(grad, 1 - beta1)
        norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
        exp_inf.copy_(amax(norm_buf, 0, keepdim=False))
        clr = lr / (1 - beta1 ** step_t.item())
        param.addcdiv_(exp_avg, exp_inf, value=-clr)


def radam_step(opt, group, params) -> None:
    """torch.optim.radam._single_tensor_radam's ``differentiable`` branch (not capturable)."""
    from .. import is_complex, view_as_real
    lr = _to_scalar(group["lr"])
    beta1, beta2 = group["betas"]
    eps, weight_decay = group["eps"], group["weight_decay"]
    for param in params:
        state = _lazy_state(opt, param, "RAdam", ("exp_avg", "exp_avg_sq"))
        exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        grad = _grad_of(param, group["maximize"])
        if is_complex(param):
            param, grad = view_as_real(param), view_as_real(grad)
            exp_avg, exp_avg_sq = view_as_real(exp_avg), view_as_real(exp_avg_sq)
        step_t += 1
        step = step_t.item()
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def adam_step(opt, group, params) -> None:
    """torch.optim.adam._single_tensor_adam's ``differentiable`` branch (AdamW: ``decoupled_weight_decay``), with
    Adam._init_group's lazy state."""
    from .. import is_complex, maximum, square, view_as_real
    lr = _to_scalar(group["lr"])
    beta1, beta2 = (_to_scalar(b) for b in group["betas"])
    eps, weight_decay, amsgrad = group["eps"], group["weight_decay"], group["amsgrad"]
    for param in params:
        state = _lazy_state(opt, param, "Adam", ("exp_avg", "exp_avg_sq") + ("max_exp_avg_sq",) * bool(amsgrad),
                            "Adam does not support sparse gradients, please consider SparseAdam instead")
        if state["step"].requires_grad:
            raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")
        grad = _grad_of(param, group["maximize"])
        exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        step_t += 1
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = _decayed(grad, param, weight_decay)
        max_sq = state.get("max_exp_avg_sq") if amsgrad else None
        if is_complex(param):
            grad, exp_avg, exp_avg_sq = view_as_real(grad), view_as_real(exp_avg), view_as_real(exp_avg_sq)
            if amsgrad:
                max_sq = view_as_real(max_sq)
            param = view_as_real(param)
        if isinstance(beta1, Tensor) and beta1.dtype is not param.dtype:
            beta1 = beta1.to(dtype=param.dtype)
        exp_avg.lerp_(grad, 1 - beta1)
        if isinstance(beta2, Tensor) and beta2.requires_grad:
            exp_avg_sq.lerp_(square(grad), weight=1 - beta2)
        else:
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step = step_t
        bias_correction1 = 1 - (beta1 ** step.clone() if isinstance(beta1, Tensor) and beta1.requires_grad
                                else beta1 ** step)
        bias_correction2 = 1 - (beta2 ** step.clone() if isinstance(beta2, Tensor) and beta2.requires_grad
                                else beta2 ** step)
        step_size_neg = (lr / bias_correction1).neg()
        bias_correction2_sqrt = bias_correction2.sqrt()
        if amsgrad:
            max_sq.copy_(maximum(max_sq.clone(), exp_avg_sq))
            sq = max_sq
        else:
            sq = exp_avg_sq
        denom = (sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
        param.addcdiv_(exp_avg.clone(), denom)
