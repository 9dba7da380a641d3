"""Eager per-op latency: functorch_lite vs raw jax.numpy vs real PyTorch, interleaved in one run.

    python comparisons/bench_eager.py [--reps N]

Prints the median latency (microseconds) of each workload for each framework and the ratios
facade/jnp and facade/torch. Workloads (issue 2): add on (32,128), matmul (64,64), sum(dim=1) on
(32,128), in-place add through a transposed view. Issue 3 adds W1 (the seed's autograd loop, per
epoch) and W2 (MLP 784-256-256-10 forward+backward with plain tensors).
"""
from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import functorch_lite as ft

try:
    import torch
except ImportError:  # the benchmark still runs facade vs jnp
    torch = None


def _time(fn, reps, sync, batch=20):
    """Per-call time: batches of ``batch`` calls followed by one sync (JAX dispatches asynchronously,
    so this measures the sustained per-op cost the way a training loop sees it)."""
    fn()
    sync()
    out = []
    for _ in range(max(1, reps // batch)):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / batch)
    return out



def workloads():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 128)).astype(np.float32)
    b = rng.standard_normal((32, 128)).astype(np.float32)
    m1 = rng.standard_normal((64, 64)).astype(np.float32)
    m2 = rng.standard_normal((64, 64)).astype(np.float32)

    fa, fb, fm1, fm2 = (ft.tensor(x) for x in (a, b, m1, m2))
    ja, jb, jm1, jm2 = (jnp.asarray(x) for x in (a, b, m1, m2))
    fbase = ft.tensor(m1.copy())
    fview = fbase.t()
    jbase = [jnp.asarray(m1.copy())]

    def j_inplace_t():
        # what the facade does for base.t().add_(1): out-of-place update of the base's array
        jbase[0] = jnp.swapaxes(jnp.swapaxes(jbase[0], 0, 1) + 1.0, 0, 1)
        return jbase[0]

    w = {
        "add (32,128)": (lambda: fa + fb, lambda: ja + jb, None),
        "matmul (64,64)": (lambda: fm1 @ fm2, lambda: jm1 @ jm2, None),
        "sum(dim=1) (32,128)": (lambda: fa.sum(dim=1), lambda: ja.sum(axis=1), None),
        "t().add_(1) (64,64)": (lambda: fview.add_(1.0), j_inplace_t, None),
    }
    if torch is not None:
        ta, tb, tm1, tm2 = (torch.from_numpy(x) for x in (a, b, m1, m2))
        tbase = torch.from_numpy(m1.copy())
        tview = tbase.t()
        w["add (32,128)"] = w["add (32,128)"][:2] + (lambda: ta + tb,)
        w["matmul (64,64)"] = w["matmul (64,64)"][:2] + (lambda: tm1 @ tm2,)
        w["sum(dim=1) (32,128)"] = w["sum(dim=1) (32,128)"][:2] + (lambda: ta.sum(dim=1),)
        w["t().add_(1) (64,64)"] = w["t().add_(1) (64,64)"][:2] + (lambda: tview.add_(1.0),)
    return w


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    if torch is not None:
        torch.set_num_threads(1)
    results = {}
    w = workloads()
    last = {}

    def runner(fn, kind):
        def run():
            last[kind] = fn()
        return run

    def sync_ft():
        r = last.get("ft")
        if r is not None:
            r._array.block_until_ready()

    def sync_j():
        r = last.get("j")
        if r is not None:
            r.block_until_ready()

    for _ in range(args.rounds):  # interleave frameworks round by round
        for name, (f_ft, f_j, f_t) in w.items():
            res = results.setdefault(name, {"facade": [], "jnp": [], "torch": []})
            res["facade"] += _time(runner(f_ft, "ft"), args.reps // args.rounds, sync_ft)
            res["jnp"] += _time(runner(f_j, "j"), args.reps // args.rounds, sync_j)
            if f_t is not None:
                res["torch"] += _time(f_t, args.reps // args.rounds, lambda: None)
    print(f"{'workload':24s} {'facade us':>10s} {'jnp us':>10s} {'torch us':>10s} {'fac/jnp':>8s} {'fac/torch':>9s}")
    for name, res in results.items():
        f = statistics.median(res["facade"]) * 1e6
        j = statistics.median(res["jnp"]) * 1e6
        t = statistics.median(res["torch"]) * 1e6 if res["torch"] else float("nan")
        print(f"{name:24s} {f:10.2f} {j:10.2f} {t:10.2f} {f / j:8.2f} {f / t:9.2f}")


if __name__ == "__main__":
    main()
