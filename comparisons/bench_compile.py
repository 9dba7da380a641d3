"""Compiled training steps: functorch_lite.compile vs hand-written pure JAX vs torch eager vs torch.compile.

    python comparisons/bench_compile.py [--rounds N] [--quick] [--no-torch-compile]

W1: the seed loop (X (64,2), W (2,1), b (1,), MSE, manual SGD under no_grad, grad.zero_()), per epoch.
W2: MLP 784-256-256-10, batch 128, nn.CrossEntropyLoss, optim.Adam(lr=1e-3): one step.
W3: transformer block (B=8, T=128, d=256, 4 heads, causal attention, 4x GELU MLP, LayerNorm), AdamW: one step.
W4: MLP 784-256-256-10 inference, batch 1024, no_grad.
W2x10: W2's same callables timed 10 steps per wait (a training loop that reads no value each step: a call's
host work overlaps the steps before it); W2 waits for every step (its latency).
W2m: W2 with only the model compiled (``compile(model)``; loss, backward and Adam step eager), torch's with
``torch.compile(model)``: the usual torch.compile usage. Its pure JAX column is W2's whole jitted step.
The facade compiles the plain PyTorch-style step (zero_grad, forward, backward, step) with
``functorch_lite.compile``; pure JAX is ``jax.jit(value_and_grad + optax)``; torch.compile uses its default
backend. First-call times (trace + XLA compile here; Dynamo + Inductor for torch) are printed beside.
"""
from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import os
os.environ.setdefault("FUNCTORCH_LITE_COMPILATION_CACHE", "0")  # (first-call figures: XLA's compile, not a read of the
# persistent cache that functorch_lite turns on by default; its effect: tests/unit/test_compilation_cache.py)
import functorch_lite as ft
import bench_training as BT
from _bench import interleave, sync

try:
    import torch
except ImportError:
    torch = None


# ---- W1 ---------------------------------------------------------------------------------------------------
def w1(lib, dev=None):
    lib.manual_seed(42)
    X = lib.randn(64, 2, device=dev)
    Y = X @ lib.tensor([[3.0], [-2.0]], device=dev) + lib.tensor([5.0], device=dev)
    W = lib.randn(2, 1, requires_grad=True, device=dev)
    b = lib.zeros(1, requires_grad=True, device=dev)

    def epoch():
        loss = lib.mean((X @ W + b - Y) ** 2)
        loss.backward()
        with lib.no_grad():
            W.sub_(0.1 * W.grad)
            b.sub_(0.1 * b.grad)
            W.grad.zero_()
            b.grad.zero_()
        return loss
    return epoch


def w1_jax():
    k1, k2 = jax.random.split(jax.random.key(0))
    X = jax.random.normal(k1, (64, 2), jnp.float32)
    Y = X @ jnp.array([[3.0], [-2.0]], jnp.float32) + 5.0
    state = [(jax.random.normal(k2, (2, 1), jnp.float32), jnp.zeros(1, jnp.float32))]

    @jax.jit
    def update(p, X, Y):  # (the data as arguments, as in _bench.jit_step)
        loss, g = jax.value_and_grad(lambda p: jnp.mean((X @ p[0] + p[1] - Y) ** 2))(p)
        return (p[0] - 0.1 * g[0], p[1] - 0.1 * g[1]), loss

    def step():
        state[0], loss = update(state[0], X, Y)
        return loss
    return step


# ---- W4 ---------------------------------------------------------------------------------------------------
def w4(lib, x0, p0, dev=None):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    BT._load(model, p0, lib, dev)
    model.eval()
    x = lib.tensor(x0, device=dev)

    def infer():
        with lib.no_grad():
            return model(x)
    return infer


def w4_jax(x0, p0):
    x = jnp.asarray(x0)
    ps = [jnp.asarray(a) for a in p0]

    @jax.jit
    def f(ps, x):
        h = jax.nn.relu(x @ ps[0].T + ps[1])
        h = jax.nn.relu(h @ ps[2].T + ps[3])
        return h @ ps[4].T + ps[5]
    return lambda: f(ps, x)


def mlp_data(rng):
    """W2's batch (x0, y0), W4's batch x4 and the MLP's parameters p2, drawn from ``rng`` in this order (the
    benchmark scripts that run W2/W4 share them)."""
    x0 = rng.standard_normal((128, 784)).astype(np.float32)
    y0 = rng.integers(0, 10, 128)
    x4 = rng.standard_normal((1024, 784)).astype(np.float32)
    p2 = [(rng.standard_normal(s) * 0.05).astype(np.float32)
          for s in [(256, 784), (256,), (256, 256), (256,), (10, 256), (10,)]]
    return x0, y0, x4, p2


def _first_calls(fn):
    """Seconds of the first and the second call: a second call that compiles again (a new signature once the
    .grad fields and optimizer state exist) shows here."""
    out = []
    for _ in range(2):
        t0 = time.perf_counter()
        sync(fn())
        out.append(time.perf_counter() - t0)
    return tuple(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch-compile", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x0, y0, x4, p2 = mlp_data(rng)
    idx0, tgt0 = rng.integers(0, BT.V, (BT.B, BT.T)), rng.integers(0, BT.V, (BT.B, BT.T))
    p3 = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in BT.SHAPES3]
    f3, names = BT.w3(ft, idx0, tgt0, p3)

    def tc(fn):
        return torch.compile(fn) if torch is not None and not args.no_torch_compile else None
    rows = {
        "W1 seed loop /epoch": [ft.compile(w1(ft)), w1_jax(), w1(torch) if torch else None,
                                tc(w1(torch)) if torch else None],
        "W2 MLP Adam step": [ft.compile(BT.w2(ft, x0, y0, p2)), BT.w2_jax(x0, y0, p2),
                             BT.w2(torch, x0, y0, p2) if torch else None, tc(BT.w2(torch, x0, y0, p2))
                             if torch else None],
        "W3 block AdamW step": [ft.compile(f3), BT.w3_jax(idx0, tgt0, p3, names),
                                BT.w3(torch, idx0, tgt0, p3)[0] if torch else None,
                                tc(BT.w3(torch, idx0, tgt0, p3)[0]) if torch else None],
        "W4 MLP infer b1024": [ft.compile(w4(ft, x4, p2)), w4_jax(x4, p2), w4(torch, x4, p2) if torch else None,
                               tc(w4(torch, x4, p2)) if torch else None],
        "W2x10 per wait": None,
        "W2m compile(model)": [BT.w2(ft, x0, y0, p2, wrap=ft.compile), BT.w2_jax(x0, y0, p2),
                               BT.w2(torch, x0, y0, p2) if torch else None,
                               BT.w2(torch, x0, y0, p2, wrap=torch.compile)
                               if torch is not None and not args.no_torch_compile else None],
    }
    first = {k: [(_first_calls(f) if f is not None else (float("nan"),) * 2) for f in fns] for k, fns in rows.items()
             if fns is not None}
    rows["W2x10 per wait"], first["W2x10 per wait"] = rows["W2 MLP Adam step"], first["W2 MLP Adam step"]
    scale = 0.3 if args.quick else 1.0
    n = {"W1 seed loop /epoch": 400, "W2 MLP Adam step": 60, "W3 block AdamW step": 6, "W4 MLP infer b1024": 60,
         "W2x10 per wait": 100, "W2m compile(model)": 60}
    per_wait = {"W1 seed loop /epoch": 20, "W2x10 per wait": 10}
    # (the warm-up inside also covers the facade's second trace: .grad and optimizer state exist from then on)
    res = interleave(rows, args.rounds, lambda name: (max(2, int(n[name] * scale)), per_wait.get(name, 1)))
    print(f"jax {jax.__version__}, torch {torch.__version__ if torch else 'absent'} "
          f"(threads {torch.get_num_threads() if torch else '-'}), device {jax.devices()[0].platform}")
    print(f"{'workload':22s} {'facade':>10s} {'jax':>10s} {'torch':>10s} {'t.compile':>10s} {'fac/jax':>8s} "
          f"{'fac/torch':>9s} {'fac/t.comp':>10s}   first + second call: facade / jax / torch.compile (s)")
    for name, cols in res.items():
        med = [statistics.median(c) * 1e6 if c else float("nan") for c in cols]
        unit = "us" if name.startswith("W1") else "ms"
        shown = med if unit == "us" else [m / 1e3 for m in med]
        f = first[name]
        print(f"{name:22s} " + " ".join(f"{v:8.2f}{unit}" for v in shown)
              + f" {med[0] / med[1]:8.2f} {med[0] / med[2]:9.2f} {med[0] / med[3]:10.2f}"
              + "   " + " / ".join(f"{f[i][0]:.2f}+{f[i][1]:.2f}" for i in (0, 1, 3)))
    c = {k: v[0].stats if hasattr(v[0], "stats") else v[0]._compiled.stats for k, v in rows.items()
         if hasattr(v[0], "stats") or hasattr(v[0], "_compiled")}
    print("facade compile stats:", {k: (s["traces"], s["eager_calls"]) for k, s in c.items()},
          "(traces, eager calls)")


if __name__ == "__main__":
    main()
