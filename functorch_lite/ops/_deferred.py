"""Data-dependent checks inside a compiled program: an index out of range, a class target >= C.

Eagerly such a check reads the values on the host and raises PyTorch's error. While a compiled function is traced
the values are tracers, and XLA does not raise: an out-of-range gather clamps (an Embedding id 7 of 5 reads row 4),
a one-hot of class 5 of 4 is all zeros, and a compiled training step trained on it. So the check is recorded
instead (``check``): the program returns one flag per check and the offending value, and the compiled call raises
eager's error for the first flag set, in program order, after the program ran; what it rewrote (donated buffers
included) is left as it was when that check was made (the program returns those values when the flag is set:
the state before the call for a check in the forward, a BatchNorm's statistics updated before it, the optimizer's
step for a check after it), as eager's raised there. One small host read per call, only for programs that index with tensors; torch.compile's
counterpart, a bounds assert in the generated kernel, is switched off by
``torch._inductor.config.assert_indirect_indexing = False``, and so are these (read when a program is traced).

Outside compiled code, inside a ``func`` transform (grad, vjp, jvp, jacrev, vmap: JAX traces them eagerly, so the
values exist under the tracers, ``concrete``), the check is made at once and raises eager's error, as torch's
transforms do (a vmapped label out of range, a distribution's invalid parameter under ``func.grad``). A check whose
values belong to an inner JAX transformation inside the compiled function (a batched index in a vmapped body, an
argument of a checkpointed one) cannot leave it (its tracers belong there) and is skipped there, as under a
``jax.jit`` of the user's own; an index the inner function reads from outside (``func.grad(lambda w:
w[i].sum())``, an unbatched index under ``vmap``) is checked."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax.core import Tracer as _Tracer

try:  # (the current trace: where a check's tracers can be returned from)
    from jax._src.core import trace_ctx as _trace_ctx
except ImportError:  # pragma: no cover - a JAX without it: checks inside compiled code are skipped, as before
    _trace_ctx = None

# while a compiled function's program is traced: (its trace, [(flag, value, position, make)]); else None
PENDING: list = [None]


def check(bad, values, make, last=False) -> None:
    """Record a check whose operands are traced: ``bad`` a boolean array, True where a value fails, ``values`` the
    array of the same shape it reports from; ``make(value, position)`` the exception eager raises for the first
    failing element in row-major order (``last``: the last one; ``position``: its flat index)."""
    p = PENDING[0]
    if p is None or _trace_ctx is None or _outer(bad, p[0]) is None:
        _check_now(bad, values, make, last)
        return
    flat = bad.reshape(-1)
    if flat.size == 0:
        return
    pos = flat.size - 1 - jnp.argmax(flat[::-1]) if last else jnp.argmax(flat)
    got = (jnp.any(flat), values.reshape(-1)[pos], pos)
    if all(_outer(x, p[0]) is not None for x in got):
        p[1].append(got + (make, p[2]() if p[2] is not None else None))


def concrete(x, batched=False):
    """``x``'s values as a NumPy array where they exist under its tracers, else None: a ``func`` transform traces
    eagerly (``jax.vjp`` / ``jvp`` / ``linearize``: a tracer's primal is a concrete array), where a compiled trace
    (``jax.jit``) has none. ``batched``: also through ``vmap``'s tracers (the batch dims first, outermost first);
    else a batched value gives None (reading one is torch's vmap error)."""
    return concrete_batched(x, batched)[0]


def concrete_batched(x, batched=True):
    """``concrete``'s array (or None) and how many vmap batch dims lead it."""
    dims = []
    while isinstance(x, _Tracer):
        if hasattr(x, "batch_dim"):
            if not batched:
                return None, 0
            dims.append(x.batch_dim)
            x = x.val
        elif hasattr(x, "primal"):
            x = x.primal
        else:
            return None, 0
    a = np.asarray(x)
    k = 0
    for d in reversed(dims):
        if isinstance(d, int):
            a = np.moveaxis(a, d + k, k)
            k += 1
    return a, k


def _check_now(bad, values, make, last):
    """``check`` where no compiled program collects: inside a ``func`` transform, whose values exist under the
    tracers (``concrete``), eager's error now, as torch's transforms (which run eagerly) raise it; a check of an
    inner JAX trace inside a compiled one (no values) is skipped."""
    b = concrete(bad, batched=True)
    if b is None or not b.any():
        return
    v = concrete(values, batched=True)
    if v is None:
        return
    flat = b.reshape(-1)
    pos = flat.size - 1 - int(np.argmax(flat[::-1])) if last else int(np.argmax(flat))
    v = np.broadcast_to(v, b.shape) if v.shape != b.shape and v.size != b.size else v
    raise make(v.reshape(-1)[pos].item(), pos)


def _outer(x, trace):
    """``x`` where it is a value of the compiled function's own trace (not one of an inner transformation's:
    an index read inside ``func.grad`` or an unbatched one inside ``vmap`` is still the compiled trace's)."""
    return x if getattr(x, "_trace", None) is trace else None


def begin(snap=None):
    """Start collecting for the program being traced now; returns the previous collector (for ``end``).
    ``snap()``: the state as each check is made (what a failed call leaves: eager's raised there)."""
    prev = PENDING[0]
    PENDING[0] = (None if _trace_ctx is None else _trace_ctx.trace, [], snap)
    return prev


def end(prev) -> list:
    """Stop collecting; returns the checks recorded since ``begin``."""
    cur = PENDING[0]
    PENDING[0] = prev
    return [] if cur is None else cur[1]


def pause():
    """No collecting (a trace whose outputs carry no checks: a node's backward run again); ``end`` undoes it."""
    prev = PENDING[0]
    PENDING[0] = None
    return prev
