"""``functorch_lite.func``: ``torch.func``'s composable transforms on facade tensors, run by JAX.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``, ``hessian``, ``vmap``,
``functional_call``, ``stack_module_state``, ``replace_all_batch_norm_modules_``, ``functionalize`` and
``debug_unwrap``. Each transform turns the facade function into a pure JAX function over arrays (wrapping
JAX's arrays/tracers as facade Tensors with the inputs' PyTorch dtypes, autograd recording off) and applies the
matching ``jax`` transform; transforms nest freely (``vmap(grad(f))``, ``jacfwd(jacrev(f))``).

Differences from torch.func (by design or JAX limits):

- the results of ``vmap``, ``grad``, ``grad_and_value``, ``vjp`` (and ``vjp_fn``'s), ``jvp``, ``jacrev``,
  ``jacfwd`` and ``hessian`` are on the facade's tape when an input or a captured tensor (module parameters,
  closure tensors: found by a walk from the function) requires grad: one node for the whole call
  (``VmapBackward0``, ``GradBackward0``, ...; torch's grad_fn is the last op's; ``jacrev``/``jacfwd``/``hessian``
  show torch's ``ViewBackward0``), its backward the call's ``jax.vjp`` pullback (``_tape``): ``.backward()``
  through them works as torch's (a gradient penalty, MAML's second-order term). Only the results that depend
  differentiably on such a tensor get the node (read from the pullback's program: JAX's symbolic zeros), as
  torch's graph reaches them only through the ops applied to the outer tensors: ``grad`` of a linear function is
  a constant (``requires_grad=False``, no grad_fn). Where torch's derivative formulas keep a primal whose
  contribution is zero, torch's result requires grad and ours does not (``jvp``/``jacfwd`` of ``a * 2``: torch's
  mul tangent ``other_t * self`` with a zero ``other_t``; ``hessian`` of ``a @ a``). Inside
  ``grad``/``vjp``/``jvp``/``jac*`` the facade's autograd recording is off (JAX differentiates) but the function
  sees grad mode on, as in torch.func, and what it cuts from the graph JAX does not differentiate: ``no_grad``
  blocks, ``detach()`` and ``.data`` (under a transform these give a copy, not a view sharing storage). A custom
  ``autograd.Function`` (with ``setup_context``) is a ``jax.custom_vjp`` there: its ``backward`` gives the
  gradient (forward mode, ``jvp``/``jacfwd``, is refused by JAX). The inputs report ``requires_grad=False``
  (torch: True);
- an in-place write to a vmapped input reaches the caller's tensor, as torch's (a BatchNorm's stacked running
  statistics under ``vmap(functional_call)`` are updated);
- a value read on the host inside a transform (``.item()``, ``if t > 0``) is an error (JAX traces), where
  torch's grad allows it;
- an in-place write to a tensor captured from outside (a BatchNorm running statistic under
  ``functional_call``) is carried out of ``grad``/``vjp``/``jvp``/``jac*`` and stored, where torch raises
  "mutate a captured Tensor"; under ``vmap`` a batched write into an unbatched tensor is a RuntimeError;
- ``jvp`` casts each tangent to its primal's dtype; ``vjp_fn`` casts cotangents to the output dtype;
- ``vmap(chunk_size=k)`` runs one ``jax.vmap`` per chunk and concatenates, each chunk drawing what the
  unchunked call would (torch rewinds only the default generator between chunks, so a ``generator=`` draw
  under ``'same'`` differs per chunk there, and under ``'different'`` two draws per call interleave across
  chunks); ``randomness`` works by wrapping ``Generator.next_key`` while the function is traced (process-wide
  for that time, not thread-safe).

>>> import functorch_lite as torch
>>> from functorch_lite.func import grad, vmap
>>> per_sample = vmap(grad(lambda w, x: (x @ w).sin().sum()), in_dims=(None, 0))
"""
from ._autodiff import grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, linearize
from ._vmap import vmap
from ._functional_call import functional_call, stack_module_state
from ._extra import replace_all_batch_norm_modules_, functionalize, debug_unwrap
from ._rearrange import rearrange

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize", "vmap",
           "functional_call", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize", "rearrange",
           "debug_unwrap"]
