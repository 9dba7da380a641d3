"""Eager latency: functorch_lite vs hand-written pure JAX vs real PyTorch, interleaved in one run.

    python comparisons/bench_eager.py [--rounds N] [--quick]

Per-op workloads (issue 2): add (32,128), matmul (64,64), sum(dim=1) on (32,128), in-place add
through a transposed view. Autograd workloads (issue 3): W1 = the seed loop (X (64,2), W (2,1),
b (1,), MSE, manual SGD under no_grad, grad.zero_()) per epoch; W2 = MLP 784-256-256-10 ReLU,
batch 128, cross-entropy via log_softmax + gather, forward+backward per step. Pure JAX runs
``jax.numpy`` op by op for the per-op rows and ``jax.jit(jax.value_and_grad(...))`` for W1/W2.
Medians in microseconds; ratios facade/jax and facade/torch.
"""
from __future__ import annotations

import argparse
import statistics

import jax
import jax.numpy as jnp
import numpy as np

import functorch_lite as ft
from _bench import interleave

try:
    import torch
except ImportError:  # still runs facade vs jax
    torch = None


def per_op():
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((32, 128)).astype(np.float32) for _ in range(2))
    m1, m2 = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    fa, fb, fm1, fm2 = (ft.tensor(x) for x in (a, b, m1, m2))
    ja, jb, jm1, jm2 = (jnp.asarray(x) for x in (a, b, m1, m2))
    fview = ft.tensor(m1).t()
    jbase = [jnp.asarray(m1)]

    def j_inplace_t():  # what an immutable-array program writes for base.t().add_(1)
        jbase[0] = jnp.swapaxes(jnp.swapaxes(jbase[0], 0, 1) + 1.0, 0, 1)
        return jbase[0]
    rows = {"add (32,128)": [lambda: fa + fb, lambda: ja + jb, None],
            "matmul (64,64)": [lambda: fm1 @ fm2, lambda: jm1 @ jm2, None],
            "sum(dim=1) (32,128)": [lambda: fa.sum(dim=1), lambda: ja.sum(axis=1), None],
            "t().add_(1) (64,64)": [lambda: fview.add_(1.0), j_inplace_t, None]}
    if torch is not None:
        ta, tb, tm1, tm2 = (torch.from_numpy(x.copy()) for x in (a, b, m1, m2))
        tview = torch.from_numpy(m1.copy()).t()
        rows["add (32,128)"][2] = lambda: ta + tb
        rows["matmul (64,64)"][2] = lambda: tm1 @ tm2
        rows["sum(dim=1) (32,128)"][2] = lambda: ta.sum(dim=1)
        rows["t().add_(1) (64,64)"][2] = lambda: tview.add_(1.0)
    return rows


def w1():
    rng = np.random.default_rng(0)
    X0 = rng.standard_normal((64, 2)).astype(np.float32)
    W0 = rng.standard_normal((2, 1)).astype(np.float32)

    def make(mod):
        X = mod.tensor(X0)
        Y = X @ mod.tensor([[3.0], [-2.0]]) + mod.tensor([5.0])
        W = mod.tensor(W0.copy(), requires_grad=True)
        b = mod.zeros(1, requires_grad=True)

        def epoch():
            nonlocal W, b
            loss = mod.mean((X @ W + b - Y) ** 2)
            loss.backward()
            with mod.no_grad():
                W -= 0.1 * W.grad
                b -= 0.1 * b.grad
                W.grad.zero_()
                b.grad.zero_()
            return W
        return epoch
    jX = jnp.asarray(X0)
    jY = jX @ jnp.asarray([[3.0], [-2.0]], jnp.float32) + jnp.asarray([5.0], jnp.float32)

    @jax.jit
    def jstep(p):
        def loss(p):
            return jnp.mean((jX @ p[0] + p[1] - jY) ** 2)
        l, g = jax.value_and_grad(loss)(p)
        return (p[0] - 0.1 * g[0], p[1] - 0.1 * g[1])
    state = [(jnp.asarray(W0), jnp.zeros(1, jnp.float32))]

    def jepoch():
        state[0] = jstep(state[0])
        return state[0]
    return make(ft), jepoch, make(torch) if torch is not None else None


def w2():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((128, 784)).astype(np.float32)
    y0 = rng.integers(0, 10, 128)
    shapes = [(784, 256), (256,), (256, 256), (256,), (256, 10), (10,)]
    p0 = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in shapes]

    def make(mod):
        x = mod.tensor(x0)
        y = mod.tensor(y0).unsqueeze(1)
        ps = [mod.tensor(p.copy(), requires_grad=True) for p in p0]

        def step():
            for p in ps:
                p.grad = None
            h = (x @ ps[0] + ps[1]).relu()
            h = (h @ ps[2] + ps[3]).relu()
            logits = h @ ps[4] + ps[5]
            loss = -logits.log_softmax(dim=1).gather(1, y).mean()
            loss.backward()
            return ps[0].grad
        return step
    jx, jy = jnp.asarray(x0), jnp.asarray(y0)

    @jax.jit
    def jgrad(ps):
        def loss(ps):
            h = jax.nn.relu(jx @ ps[0] + ps[1])
            h = jax.nn.relu(h @ ps[2] + ps[3])
            logits = h @ ps[4] + ps[5]
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits, axis=1), jy[:, None], axis=1))
        return jax.value_and_grad(loss)(ps)
    jps = [jnp.asarray(p) for p in p0]
    return make(ft), lambda: jgrad(jps), make(torch) if torch is not None else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    scale = 0.2 if args.quick else 1.0
    rows = per_op()
    f1, j1, t1 = w1()
    rows["W1 seed loop /epoch"] = [f1, j1, t1]
    f2, j2, t2 = w2()
    rows["W2 MLP fwd+bwd /step"] = [f2, j2, t2]
    budget = {"W1 seed loop /epoch": (int(600 * scale), 10), "W2 MLP fwd+bwd /step": (int(60 * scale), 2)}

    def per_round(name):
        n, batch = budget.get(name, (int(2000 * scale), 20))
        return n // args.rounds, batch
    res = interleave(rows, args.rounds, per_round)
    print(f"jax {jax.__version__}, torch {torch.__version__ if torch else 'absent'} "
          f"(threads {torch.get_num_threads() if torch else '-'}), device {jax.devices()[0].platform}")
    print(f"{'workload':24s} {'facade us':>10s} {'jax us':>10s} {'torch us':>10s} {'fac/jax':>8s} {'fac/torch':>9s}")
    for name, (f, j, t) in res.items():
        mf, mj = statistics.median(f) * 1e6, statistics.median(j) * 1e6
        mt = statistics.median(t) * 1e6 if t else float("nan")
        print(f"{name:24s} {mf:10.1f} {mj:10.1f} {mt:10.1f} {mf / mj:8.2f} {mf / mt:9.2f}")


if __name__ == "__main__":
    main()
