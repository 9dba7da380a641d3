"""``functional_call``: run a module with given tensors in place of its parameters and buffers.

Mechanism (as ``torch.nn.utils.stateless``): the module's ``_parameters`` / ``_buffers`` entries are *rebound*
to the given tensors for the call and the originals put back in a ``finally``. Rebinding (rather than swapping
the parameter's storage array, as ``compile`` does) is what torch does and what is correct here:

- the given tensor may differ in shape or dtype from the parameter it replaces (a storage swap could not);
- autograd (and the ``func`` transforms) see the given tensor itself as the input, so gradients flow to it;
- tied weights: with ``tie_weights=True`` every name that shares one tensor with a given name gets the given
  value (two different values for one tied tensor is torch's ValueError);
- views of a parameter taken *before* the call (e.g. cached in ``__init__``) keep seeing the original
  parameter, exactly as in torch; views taken inside ``forward`` see the given tensor.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._tensor.tensor import Tensor

_MISSING = object()


def _untie(module: Any, given: dict) -> dict:
    named: dict = {}
    named.update(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    by_tensor: dict = {}
    for n, t in named.items():
        by_tensor.setdefault(id(t), set()).add(n)
    tied = {n: names for names in by_tensor.values() if len(names) > 1 for n in names}
    given_tied = {n for n in given if n in tied}
    for n in given_tied:
        names = tied[n]
        if len(names & given_tied) > 1 and len({id(given[m]) for m in names if m in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    out = dict(given)
    for n in given_tied:
        for m in tied[n]:
            out[m] = given[n]
    return out


def _submodule(module: Any, path: str) -> Any:
    m = module
    if path:
        for part in path.split("."):
            m = getattr(m, part)
    return m


def _swap(module: Any, name: str, value: Any) -> Any:
    """Put ``value`` (or remove it, for ``_MISSING``) at ``name``; return what was there."""
    prefix, _, attr = name.rpartition(".")
    m = _submodule(module, prefix)
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    for table in ("_parameters", "_buffers"):
        d = m.__dict__[table]
        if attr in d:
            orig = d[attr]
            if value is _MISSING:
                del d[attr]
            else:
                d[attr] = value
            return orig
    orig = getattr(m, attr, _MISSING)
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of torch.Tensor")
    from ..nn.parameter import Parameter
    if isinstance(orig, Parameter) and isinstance(value, Tensor) and not isinstance(value, Parameter):
        # a parameter another module holds, reached through this one's attribute lookup (``compile(model)``'s
        # wrapper: its keys are ``_orig_mod.<name>``); set here, the value would be ignored (zero gradients)
        raise TypeError(f"cannot assign '{value.type()}' as parameter '{attr}' (torch.nn.Parameter or None "
                        "expected)")
    if value is not _MISSING:
        object.__setattr__(m, attr, value)
    elif orig is not _MISSING:
        object.__delattr__(m, attr)
    return orig


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``torch.func.functional_call``: ``module(*args, **kwargs)`` with the named parameters/buffers replaced.

    >>> params = {k: v.detach() for k, v in model.named_parameters()}
    >>> grads = grad(lambda p: loss_fn(functional_call(model, p, (x,)), y))(params)
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    values = _untie(module, given) if tie_weights else given
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(msgs)))
    origs: list = []
    try:
        for n, v in values.items():
            origs.append((n, _swap(module, n, v)))
        return module(*args, **kwargs)
    finally:
        for n, o in reversed(origs):
            _swap(module, n, o)


def stack_module_state(models: Any) -> tuple:
    """``torch.func.stack_module_state``: ``(params, buffers)`` dicts whose tensors stack the models' ones
    along a new dim 0 (for ``vmap(functional_call)`` model ensembling); params requiring grad are new leaves.

    >>> params, buffers = stack_module_state([Net() for _ in range(4)])
    """
    from ..ops.movement import stack
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def leaf(tensors: tuple, name: str) -> Tensor:
        req = [t.requires_grad for t in tensors]
        if any(req) and not all(req):
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        out = stack([t.detach() for t in tensors])
        return out.requires_grad_() if all(req) else out

    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    buffers = {k: leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers
