"""``Muon`` (torch 2.9+'s ``torch.optim.Muon``) on an optax transform: SGD momentum whose update is
orthogonalised by a quintic Newton-Schulz iteration, computed in bfloat16 as torch's ``_zeropower_via_newtonschulz``
(each matmul and ``addmm`` rounded to bfloat16), for 2-D parameters."""
from __future__ import annotations

import math
from typing import Iterable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .optimizer import Optimizer, check_lr, delta, hyper_arrays, t_add, t_lerp, t_mul

_BF16, _F32 = jnp.bfloat16, jnp.float32
DEFAULT_NS = (3.4445, -4.7750, 2.0315)


class MuonState(NamedTuple):
    step: jax.Array             # float32 scalar (Muon's state holds no step: internal)
    momentum_buffer: jax.Array  # like the parameter


def _mm(a, b):
    """A bfloat16 matmul, accumulated in float32 and rounded once (torch's CPU bfloat16 gemm)."""
    return jnp.matmul(a, b, preferred_element_type=_F32)


def zeropower_newtonschulz(g, coefficients: tuple, steps: int, eps):
    """torch's ``_zeropower_via_newtonschulz``: ``g`` in bfloat16 (transposed when taller than wide), divided by
    its Frobenius norm (at least ``eps``), then ``steps`` iterations of ``X = a X + (b A + c A A) X`` with
    ``A = X X^T``."""
    a, b, c = (jnp.asarray(v, _F32) for v in coefficients)
    x = g.astype(_BF16)
    tall = g.shape[0] > g.shape[1]
    if tall:
        x = x.T
    n = jnp.sqrt(jnp.sum(jnp.square(x.astype(_F32)))).astype(_BF16)
    n = jnp.maximum(n, jnp.asarray(eps, _F32).astype(_BF16))
    x = (x.astype(_F32) / n.astype(_F32)).astype(_BF16)
    for _ in range(steps):
        gram = _mm(x, x.T).astype(_BF16)
        upd = (b * gram.astype(_F32) + c * _mm(gram, gram)).astype(_BF16)  # addmm(gram, gram, gram, beta=b, alpha=c)
        x = (a * x.astype(_F32) + _mm(upd, x)).astype(_BF16)  # addmm(x, upd, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    """torch's ``_adjust_lr``: the learning rate scaled for the matrix's shape."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


def muon_transform(lr, weight_decay, momentum, eps, *, nesterov: bool, coefficients: tuple, steps: int,
                   adjust_lr_fn) -> optax.GradientTransformation:
    """torch's ``_single_tensor_muon``: ``buf.lerp_(grad, 1 - momentum)``; the update ``grad.lerp(buf, momentum)``
    (nesterov) or ``buf``, orthogonalised; ``param.mul_(1 - lr * weight_decay)``; ``param.add_(update,
    alpha=-adjusted_lr)``."""

    def init(params):
        return MuonState(jnp.zeros((), jnp.float32), jnp.zeros_like(params))

    def update(g, state, p):
        buf = t_lerp(state.momentum_buffer, g, 1 - momentum)
        u = t_lerp(g, buf, momentum) if nesterov else buf
        u = zeropower_newtonschulz(u, coefficients, steps, eps)
        new_p = t_add(t_mul(p, 1 - lr * weight_decay), u, -_adjust_lr(lr, adjust_lr_fn, p.shape))
        return delta(new_p, p), MuonState(state.step + 1, buf)

    return optax.GradientTransformation(init, update)


class Muon(Optimizer):
    """Muon (``torch.optim.Muon``): momentum orthogonalised by Newton-Schulz, for 2-D parameters.

    >>> import functorch_lite as torch
    >>> w = torch.ones(3, 2, requires_grad=True)
    >>> opt = torch.optim.Muon([w], lr=1e-2)
    >>> (w * w).sum().backward(); opt.step()
    """

    _real_only = True
    _hidden_state = ("step",)  # (torch's Muon state holds no step: a user's ``state[p]['step']`` is theirs)

    def _missing_entry(self, name, inner):
        """``del state[p]['momentum_buffer']``: torch's step (``if "momentum_buffer" not in state``) starts it
        again from zeros."""
        return {"momentum_buffer": jnp.zeros_like(inner.momentum_buffer)}

    def __init__(self, params: Iterable, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple = DEFAULT_NS, eps: float = 1e-7, ns_steps: int = 5,
                 adjust_lr_fn: str | None = None):
        check_lr(lr, "Learning rate should be >= 0 but is: {}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _hyper(self, group):
        return hyper_arrays({k: group[k] for k in ("lr", "weight_decay", "momentum", "eps")})

    def _static_key(self, group):
        steps = group["ns_steps"]
        if steps >= 100:
            raise ValueError("Number of steps must be less than 100 for computational efficiency")
        if len(group["ns_coefficients"]) != 3:
            raise ValueError("Coefficients must be a tuple of exactly 3 values")
        return (bool(group["nesterov"]), tuple(float(c) for c in group["ns_coefficients"]), int(steps),
                group["adjust_lr_fn"])

    def _make_tx(self, key):
        _, nesterov, coefficients, steps, adjust_lr_fn, _ = key
        return optax.inject_hyperparams(
            lambda lr, weight_decay, momentum, eps: muon_transform(
                lr, weight_decay, momentum, eps, nesterov=nesterov, coefficients=coefficients, steps=steps,
                adjust_lr_fn=adjust_lr_fn),
            hyperparam_dtype=jnp.float64)(lr=0.0, weight_decay=0.0, momentum=0.0, eps=0.0)

    def _state_fields(self, group):
        return ("momentum_buffer",)
