"""``autograd.gradcheck``: compare analytic gradients with central finite differences."""
from __future__ import annotations

import numpy as np


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored) -> bool:
    """True when every Jacobian column computed by backward matches finite differences.

    ``inputs``: a tensor or tuple; those with ``requires_grad`` are checked (use float64).
    """
    from .._tensor.tensor import Tensor
    from ..ops.creation import tensor as _tensor
    from .engine import grad as _grad
    from .grad_mode import no_grad
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.requires_grad]
    for oi, out in enumerate(outs):
        n_out = out.numel()
        for i in diff:
            x = inputs[i]
            base = np.array(x.detach()._host(), dtype=np.float64)
            numeric = np.zeros((base.size, n_out))
            for k in range(base.size):
                vals = []
                for sgn in (1.0, -1.0):
                    pert = base.copy().reshape(-1)
                    pert[k] += sgn * eps
                    xs = list(inputs)
                    xs[i] = _tensor(pert.reshape(base.shape), dtype=x.dtype, device=x.device)
                    with no_grad():
                        o = [q for q in _as_tuple(func(*xs)) if isinstance(q, Tensor)][oi]
                    vals.append(np.array(o._host(), dtype=np.float64).reshape(-1))
                numeric[k] = (vals[0] - vals[1]) / (2 * eps)
            analytic = np.zeros((base.size, n_out))
            for j in range(n_out):
                go = np.zeros(n_out)
                go[j] = 1.0
                o = [q for q in _as_tuple(func(*inputs)) if isinstance(q, Tensor) and q.requires_grad][oi]
                (g,) = _grad(o, x, _tensor(go.reshape(o._shape), dtype=o.dtype, device=o.device),
                             allow_unused=True)
                if g is not None:
                    analytic[:, j] = np.array(g._host(), dtype=np.float64).reshape(-1)
            if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
                if raise_exception:
                    raise GradcheckError(f"Jacobian mismatch for output {oi} with respect to input {i},\n"
                                         f"numerical:{numeric}\nanalytical:{analytic}\n")
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **_ignored) -> bool:
    """True when the second derivatives (backward of the ``create_graph=True`` backward) match finite differences
    of the first derivatives (``torch.autograd.gradgradcheck``).

    ``grad_outputs``: the cotangents of ``func``'s outputs (random in [-1, 1), requiring grad, when omitted).
    """
    from .._tensor.tensor import Tensor
    from ..ops.creation import tensor as _tensor
    from .engine import grad as _grad
    from .grad_mode import enable_grad
    inputs = _as_tuple(inputs)
    req = [isinstance(x, Tensor) and x.requires_grad for x in inputs]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.requires_grad]
        grad_outputs = tuple(_tensor(rng.uniform(-1, 1, o._shape), dtype=o.dtype, device=o.device, requires_grad=True)
                             for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)

    def first_grads(*args):
        with enable_grad():  # (gradcheck evaluates its finite differences under no_grad)
            ins = tuple(a.detach().requires_grad_() if r and not a.requires_grad else a
                        for a, r in zip(args[:len(args) - n], req))
            outs = [o for o in _as_tuple(func(*ins)) if isinstance(o, Tensor) and o.requires_grad]
            diff = [a for a, r in zip(ins, req) if r]
            gs = _grad(outs, diff, args[len(args) - n:], create_graph=True, allow_unused=True)
            return tuple(g for g in gs if g is not None)
    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
