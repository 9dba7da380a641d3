"""``autograd.gradcheck``: compare analytic gradients with central finite differences."""
from __future__ import annotations

import numpy as np


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _host(t):
    return np.asarray(t._host())


def _real_parts(a):
    """An array's real components: (re,) or (re, im) for a complex one (flattened, float64)."""
    a = np.asarray(a).reshape(-1)
    if np.iscomplexobj(a):
        return np.concatenate([a.real, a.imag]).astype(np.float64)
    return a.astype(np.float64)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored) -> bool:
    """True when every Jacobian column computed by backward matches central finite differences.

    ``inputs``: a tensor or tuple; those with ``requires_grad`` are checked (use float64 / complex128). A complex
    input or output is checked as its real and imaginary parts (the real Jacobian, which fixes both Wirtinger
    derivatives PyTorch compares): for a real loss ``L``, the gradient of a complex ``z`` is
    ``dL/dRe(z) + i dL/dIm(z)``, and a complex output's imaginary part is reached with a grad_output of ``1j``.
    """
    from .. import dtypes as _dt
    from .._tensor.tensor import Tensor
    from ..ops.creation import tensor as _tensor
    from .engine import grad as _grad
    from .grad_mode import no_grad
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    for i in diff:
        if inputs[i].dtype not in (_dt.float64, _dt.complex128):  # (torch's _check_inputs)
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=2)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    all_outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]
    outs = [(k, o) for k, o in enumerate(all_outs) if o.requires_grad]

    def numerical(i, oi):
        """Rows: the input's real components; columns: the output's (d out / d in, central differences)."""
        x = inputs[i]
        base = _host(x.detach()).reshape(-1)
        cplx = np.iscomplexobj(base)
        rows = []
        for part in ((1.0, 1j) if cplx else (1.0,)):
            for k in range(base.size):
                vals = []
                for sgn in (1.0, -1.0):
                    pert = base.copy()
                    pert[k] += sgn * eps * part
                    xs = list(inputs)
                    xs[i] = _tensor(pert.reshape(x.shape), dtype=x.dtype, device=x.device)
                    with no_grad():
                        o = [q for q in _as_tuple(func(*xs)) if isinstance(q, Tensor)][oi]
                    vals.append(_real_parts(_host(o)))
                rows.append((vals[0] - vals[1]) / (2 * eps))
        return np.stack(rows)

    def fail(msg):
        if raise_exception:
            raise GradcheckError(msg)
        return False

    if not outs:  # (no output requires grad: every numerical gradient must be zero, as PyTorch checks)
        for i in diff:
            for oi in range(len(all_outs)):
                if not np.allclose(numerical(i, oi), 0, atol=atol, rtol=rtol):
                    return fail("Numerical gradient for function expected to be zero")
        return True
    for oi, out in outs:
        n_out = out.numel()
        out_cplx = out.dtype.is_complex
        for i in diff:
            x = inputs[i]
            numeric = numerical(i, oi)
            cols = []
            for part in ((1.0, 1j) if out_cplx else (1.0,)):
                for j in range(n_out):
                    go = np.zeros(n_out, dtype=np.complex128 if out_cplx else np.float64)
                    go[j] = part
                    o = [q for q in _as_tuple(func(*inputs)) if isinstance(q, Tensor)][oi]
                    (g,) = _grad(o, x, _tensor(go.reshape(o._shape), dtype=o.dtype, device=o.device),
                                 allow_unused=True)
                    if g is None:
                        cols.append(np.zeros(numeric.shape[0]))
                    else:
                        cols.append(_real_parts(_host(g)) if x.dtype.is_complex else
                                    _host(g).reshape(-1).real.astype(np.float64))
            analytic = np.stack(cols, axis=1)
            if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
                shown = [_tensor(m, dtype=x.dtype.to_real()) for m in (numeric, analytic)]  # (torch prints tensors)
                return fail(f"Jacobian mismatch for output {oi} with respect to input {i},\n"
                            f"numerical:{shown[0]}\nanalytical:{shown[1]}\n")
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
