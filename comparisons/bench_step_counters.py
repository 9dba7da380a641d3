"""Does a `step` counter per parameter cost a compiled Adam step anything? Pure JAX only, two forms of W2's step.

    python comparisons/bench_step_counters.py [--calls N]

torch keeps `state[p]['step']` per parameter, so the facade's compiled W2 program has six float32 step inputs and
outputs, each with its own bias-correction scalars (separate tiny XLA kernels: 67 fusions against pure JAX's 48),
and its hyperparameters (lr, betas, eps) as float64 inputs. Both steps here are hand-written JAX in the facade's
arithmetic (PyTorch's operation order, float64 step size), hyperparameters as inputs, parameters and state
donated; "shared" has one counter for the group (as optax's adam), "per-param" one per parameter (as the facade's
program). Calls alternate one by one; prints the medians and per-param / shared.
"""
from __future__ import annotations

import argparse
import functools
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import functorch_lite  # noqa: F401  (x64 on, as the facade's programs run)
from bench_compile import mlp_data


def _loss(ps, x, y):
    h = jax.nn.relu(x @ ps[0].T + ps[1])
    h = jax.nn.relu(h @ ps[2].T + ps[3])
    logits = h @ ps[4].T + ps[5]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


def _adam(g, m, v, p, step, lr, b1, b2, eps):
    step = step + 1
    m = m + (g - m) * (1 - b1).astype(jnp.float32)
    v = v * b2.astype(jnp.float32) + (1 - b2).astype(jnp.float32) * g * g
    s = step.astype(jnp.float64)
    step_size = lr / (1 - b1 ** s)
    bc2 = jnp.sqrt(1 - b2 ** s).astype(jnp.float32)
    denom = jnp.sqrt(v) / bc2 + eps.astype(jnp.float32)
    return p - step_size.astype(jnp.float32) * m / denom, m, v, step


def make(per_param: bool, p0, x, y):
    params = [jnp.asarray(a) for a in p0]
    state = [params, [jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params],
             [jnp.zeros((), jnp.float32) for _ in params] if per_param else jnp.zeros((), jnp.float32)]
    hyper = [jnp.float64(1e-3), jnp.float64(0.9), jnp.float64(0.999), jnp.float64(1e-8)]

    @functools.partial(jax.jit, donate_argnums=(0, 1, 2, 3))
    def update(ps, ms, vs, steps, hyper, x, y):
        val, g = jax.value_and_grad(_loss)(ps, x, y)
        out = [_adam(g[i], ms[i], vs[i], ps[i], steps[i] if per_param else steps, *hyper) for i in range(len(ps))]
        new_steps = [o[3] for o in out] if per_param else out[0][3]
        return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out], new_steps, val

    def step():
        *new, val = update(*state, hyper, x, y)
        state[:] = new
        return val
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=600)
    args = ap.parse_args()
    x0, y0, _, p2 = mlp_data(np.random.default_rng(0))
    x, y = jnp.asarray(x0), jnp.asarray(y0)
    fns = {"shared": make(False, p2, x, y), "per-param": make(True, p2, x, y)}
    for f in fns.values():
        for _ in range(3):
            jax.block_until_ready(f())
    times = {k: [] for k in fns}
    for k in range(args.calls):
        for name in (list(fns) if k % 2 else list(fns)[::-1]):
            t0 = time.perf_counter()
            jax.block_until_ready(fns[name]())
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
    print(f"W2 Adam step, pure JAX, medians of {args.calls}: shared counter {med['shared']:.1f} us, "
          f"per-parameter counters {med['per-param']:.1f} us, per-param / shared {med['per-param'] / med['shared']:.3f}")


if __name__ == "__main__":
    main()
