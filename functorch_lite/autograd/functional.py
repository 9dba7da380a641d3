"""``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``.

A port of PyTorch's own implementation onto the facade's autograd engine (``autograd.grad``), so the results,
their structure (Tensor vs tuple, nested tuples), ``create_graph`` (results carry a ``grad_fn`` and are
differentiable further), ``strict`` checks, the inputs' untouched ``requires_grad`` state, and the error
messages are PyTorch's. Functions that close over other tensors or use ``no_grad`` inside behave as in PyTorch,
because the function runs eagerly on facade tensors and the engine differentiates the recorded graph.

Differences from PyTorch, by design:

- ``vectorize=True`` (reverse mode) runs ONE ``autograd.grad`` under ``functorch_lite.func.vmap`` over the
  standard basis, as PyTorch's ``is_grads_batched``; with ``create_graph=True`` it takes the rows one by one
  instead (same values, a ``grad_fn`` on the result as PyTorch's).
- ``strategy="forward-mode"`` (and ``hessian(outer_jacobian_strategy="forward-mode")``) computes the
  Jacobian-vector products with the double-backward trick on the engine (the facade has no forward-mode
  engine), vectorised over the basis, so the result's dtype is the output's as in PyTorch. The result keeps a
  graph (a ``grad_fn``) only when an input requires grad and grad mode is on (then it is differentiable
  further, e.g. third derivatives through a forward-mode Hessian); PyTorch's forward-mode Hessian has a
  ``grad_fn`` (``ReshapeAliasBackward0``) even when no input requires grad, a graph that leads to no leaf.

>>> import functorch_lite as torch
>>> from functorch_lite.autograd.functional import jacobian, hessian
>>> jacobian(lambda x: x.exp().sum(dim=1), torch.rand(2, 2)).shape
torch.Size([2, 2, 2])
>>> hessian(lambda x: x.pow(3).sum(), torch.rand(2)).shape
torch.Size([2, 2])
"""
from __future__ import annotations

from typing import Any, Callable

from . import grad_mode as _gm
from .engine import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _torch():
    import functorch_lite
    return functorch_lite


def _Tensor():
    from .._tensor.tensor import Tensor
    return Tensor


# ---- utilities (PyTorch's, same names and messages) -----------------------------------------------------------
def _as_tuple_nocheck(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _as_tuple(inp, arg_name=None, fn_name=None):
    """``(was it a tuple, the tuple of Tensors)``; PyTorch's TypeError for anything else."""
    if arg_name is None and fn_name is None:
        return _as_tuple_nocheck(inp)
    Tensor = _Tensor()
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_inp_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                                f"the value at index {i} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"given {arg_name} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: ``to_unpack`` is one flag or (outer, inner) flags for a nested tuple."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Always new Tensor objects (so the function's own captures of the same tensors are told apart): a
    differentiable alias with ``create_graph`` for inputs that require grad, else a detached copy."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    """Detach the results unless ``create_graph`` (nested tuples too)."""
    if isinstance(inputs[0], _Tensor()):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    """strict mode: every output / gradient must depend on the inputs in a differentiable way."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i} is independent of the "
                    "input. This is not allowed in strict mode. You should ensure that your function is thrice "
                    "differentiable and that the hessian depends on the inputs.")
            if input_type == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided function with respect "
                    f"to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                    "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                    "would be violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """``autograd.grad`` that skips outputs which are None or do not require grad (None for every input when
    none is left), with ``allow_unused=True``. ``is_grads_batched``: every grad_output has a leading batch
    dimension; one vmapped ``autograd.grad`` (rows one by one with ``create_graph``), every result batched
    (an unused input gives zeros)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = (), ()
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs += (out,)
            new_grad_outputs += (grad_out,)
    if len(new_outputs) == 0:
        return (None,) * len(inputs)
    if not is_grads_batched:
        return _grad(new_outputs, inputs, new_grad_outputs, allow_unused=True, create_graph=create_graph,
                     retain_graph=retain_graph)
    torch = _torch()
    if create_graph:
        rows = [go.unbind(0) for go in new_grad_outputs]
        per_row = [_grad(new_outputs, inputs, tuple(r[b] for r in rows), allow_unused=True, create_graph=True,
                         retain_graph=True) for b in range(new_grad_outputs[0].shape[0])]
        return tuple(None if any(r[k] is None for r in per_row) else torch.stack([r[k] for r in per_row], 0)
                     for k in range(len(inputs)))

    def one(*gos):
        res = _grad(new_outputs, inputs, gos, allow_unused=True, retain_graph=retain_graph)
        return tuple(torch.zeros_like(inp) if r is None else r for r, inp in zip(res, inputs))
    from ..func import vmap
    with torch.no_grad():  # (no graph to keep: off the tape, so the call is not run again to record it)
        return vmap(one)(*new_grad_outputs)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """None gradients -> zeros like ``refs`` (strict mode: PyTorch's error for the ``stage``)."""
    torch = _torch()
    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                if stage == "back":
                    raise RuntimeError("The output of the user-provided function is independent of "
                                       f"input {i}. This is not allowed in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is independent of entry {i} in the "
                                       "grad_outputs when using the double backward trick to compute forward mode "
                                       "gradients. This is not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError("The jacobian of the user-provided function is independent of "
                                       f"input {i}. This is not allowed in strict mode.")
                raise RuntimeError("The hessian of the user-provided function is independent of "
                                   f"entry {i} in the grad_jacobian. This is not allowed in strict mode as it prevents "
                                   "from using the double backward trick to replace forward mode AD.")
            grads_i = torch.zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            if "double" not in stage:
                raise RuntimeError("The jacobian of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode when create_graph=True.")
            raise RuntimeError("The hessian of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when create_graph=True.")
        res += (grads_i,)
    return res


def _construct_standard_basis_for(tensors, tensor_numels):
    """The ``N x N`` identity (``N = sum(numels)``) split by columns into one chunk per tensor (its dtype and
    device): chunk ``k`` has shape ``(N, numels[k])``."""
    torch = _torch()
    total = sum(tensor_numels)
    chunks, start = [], 0
    for t, n in zip(tensors, tensor_numels):
        chunks.append(torch.eye(total, dtype=t.dtype, device=t.device)[:, start:start + n])
        start += n
    return tuple(chunks)


# ---- public API -------------------------------------------------------------------------------------------------
def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``torch.autograd.functional.vjp``: ``(func_output, v^T J)``, the vjp shaped like the inputs.

    >>> out, g = vjp(lambda x: x.exp().sum(dim=1), torch.rand(4, 4), torch.ones(4))
    """
    torch = _torch()
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
    enable = True if create_graph else _gm.is_grad_enabled()
    with torch.set_grad_enabled(enable):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``torch.autograd.functional.jvp``: ``(func_output, J v)``, by the double-backward trick (as PyTorch).

    >>> out, t = jvp(lambda x: x.exp().sum(dim=1), torch.rand(4, 4), torch.ones(4, 4))
    """
    torch = _torch()
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # the backward is linear in grad_outputs: their value does not matter (zeros, never inf/nan)
        grad_outputs = tuple(torch.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with torch.set_grad_enabled(True if create_graph else _gm.is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_outputs_tuple)


def _jacfwd(func, inputs, strict=False, vectorize=False):
    """Forward-mode Jacobian: ``J e_k`` for every basis vector ``e_k`` of the inputs, each a JVP by the
    double-backward trick, all in one vmapped ``autograd.grad`` (rows one by one when the result keeps a graph).
    Shape ``output.shape + input.shape``, the output's dtype."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    torch = _torch()
    keep_graph = _gm.is_grad_enabled() and any(inp.requires_grad for inp in inputs)
    with torch.enable_grad():
        primals = tuple(inp.view_as(inp) if inp.requires_grad else inp.detach().requires_grad_(True)
                        for inp in inputs)
        is_outputs_tuple, outputs = _as_tuple(func(*primals), "outputs")
        grad_outputs = tuple(torch.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, primals, grad_outputs, create_graph=True)
    input_numels = tuple(inp.numel() for inp in inputs)
    tangents = _construct_standard_basis_for(inputs, input_numels)
    tangents = tuple(t.reshape((t.shape[0],) + tuple(inp.shape)) for t, inp in zip(tangents, inputs))
    with torch.set_grad_enabled(keep_graph):
        jv = _autograd_grad(grad_inputs, grad_outputs, tangents, create_graph=keep_graph, is_grads_batched=True)
    total = sum(input_numels)
    jacobian_output_input = []
    for jac_output_i, output_i in zip(jv, outputs):
        if jac_output_i is None:
            jac_output_i = torch.zeros((total,) + tuple(output_i.shape), dtype=output_i.dtype, device=output_i.device)
        row = []
        for jac, input_j in zip(jac_output_i.split(input_numels, dim=0), inputs):
            # the batch dimension runs over the input: move it last
            row.append(jac.permute(*range(1, jac.ndim), 0).reshape(tuple(output_i.shape) + tuple(input_j.shape)))
        jacobian_output_input.append(row)
    return _tuple_postprocess(jacobian_output_input, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """``torch.autograd.functional.jacobian``: ``J[i][j]`` of output ``i`` w.r.t. input ``j``, shape
    ``output_i.shape + input_j.shape`` (a Tensor, a tuple or a tuple of tuples, as the function's arguments and
    results are Tensors or tuples).

    >>> jacobian(lambda x, y: 2 * x.exp() + 3 * y, (torch.rand(2), torch.rand(2)))   # (diag(2e^x), 3I)
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    torch = _torch()
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                                   "supported together. Please either set `strict=False` or `vectorize=False`.")
            output_numels = tuple(output.numel() for output in outputs)
            grad_outputs = _construct_standard_basis_for(outputs, output_numels)
            flat_outputs = tuple(output.reshape(-1) for output in outputs)
            vj = list(_autograd_grad(flat_outputs, inputs, grad_outputs, create_graph=create_graph,
                                     is_grads_batched=True))
            for k, el in enumerate(vj):
                if el is None:
                    vj[k] = torch.zeros_like(inputs[k]).expand((sum(output_numels),) + tuple(inputs[k].shape))
            jacobian_input_output = []
            for jac_input_i, input_i in zip(vj, inputs):
                jacobian_input_output.append([
                    jac.view(tuple(output_j.shape) + tuple(input_i.shape))
                    for jac, output_j in zip(jac_input_i.split(output_numels, dim=0), outputs)])
            jacobian_output_input = tuple(zip(*jacobian_input_output))
            jacobian_output_input = _grad_postprocess(jacobian_output_input, create_graph)
            return _tuple_postprocess(jacobian_output_input, (is_outputs_tuple, is_inputs_tuple))

        result = ()
        for i, out in enumerate(outputs):
            jac_i = tuple([] for _ in range(len(inputs)))
            n = out.nelement()
            # row j of the Jacobian: the gradient for the one-hot cotangent e_j (PyTorch: of out.reshape(-1)[j])
            basis = torch.eye(n, dtype=out.dtype, device=out.device).reshape((n,) + tuple(out.shape)).unbind(0) \
                if out.requires_grad else (None,) * n
            for j in range(n):
                vj = _autograd_grad((out,), inputs, (basis[j],), retain_graph=True, create_graph=create_graph)
                for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError("The jacobian of the user-provided function is independent of "
                                               f"input {i}. This is not allowed in strict mode when create_graph=True.")
                        jac_i_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{el_idx}. This is not allowed in strict mode.")
                        jac_i_el.append(torch.zeros_like(inp_el))
            result += (tuple(torch.stack(jac_i_el, dim=0).view(tuple(out.size()) + tuple(inputs[el_idx].size()))
                             for el_idx, jac_i_el in enumerate(jac_i)),)
        result = _grad_postprocess(result, create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """``torch.autograd.functional.hessian`` of a single-element function: the Jacobian of its (reverse-mode)
    Jacobian; ``H[i][j]`` has shape ``input_i.shape + input_j.shape``.

    >>> hessian(lambda x: x.pow(3).sum(), torch.rand(2, 2)).shape
    torch.Size([2, 2, 2, 2])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    Tensor = _Tensor()

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``torch.autograd.functional.vhp``: ``(func_output, v^T H)`` of a single-element function.

    >>> out, r = vhp(lambda x: x.pow(3).sum(), torch.rand(2, 2), torch.ones(2, 2))
    """
    return _vhp_hvp("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``torch.autograd.functional.hvp``: ``(func_output, H v)`` of a single-element function (by the
    double-backward trick, as PyTorch).

    >>> out, r = hvp(lambda x: x.pow(3).sum(), torch.rand(2, 2), torch.ones(2, 2))
    """
    return _vhp_hvp("hvp", func, inputs, v, create_graph, strict)


def _vhp_hvp(name, func, inputs, v, create_graph, strict):
    torch = _torch()
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", name)
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
        _check_requires_grad(outputs, "outputs", strict=strict)
        if is_outputs_tuple or not isinstance(outputs[0], _Tensor()):
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outputs[0].nelement() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        if name == "hvp":
            grad_jac = tuple(torch.zeros_like(inp, requires_grad=True) for inp in inputs)
            double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
            _check_requires_grad(jac, "hessian", strict=strict)
    with torch.set_grad_enabled(True if create_graph else _gm.is_grad_enabled()):
        if name == "vhp":
            grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
            res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
        else:
            grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
            res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)
