"""W3 (transformer block AdamW step) in float32 and under autocast(bfloat16): facade eager, facade compiled,
and pure JAX (jit) with the same casts (matmul/linear inputs in bfloat16, the loss in float32), interleaved.

    python comparisons/bench_autocast.py [--rounds N]

The facade step is plain PyTorch AMP style: ``with autocast('cpu', dtype=bfloat16): loss = ...`` then
``loss.backward(); opt.step()`` outside the region. On this CPU bfloat16 matmuls are not faster than float32
(no AMX/bf16 units are used by XLA:CPU here); the figure to watch is facade compiled / pure JAX.
"""
from __future__ import annotations

import argparse
import statistics

import jax
import numpy as np

import bench_training as BT
from _bench import interleave
import functorch_lite as ft

B, T, D, H, V = BT.B, BT.T, BT.D, BT.H, BT.V


def facade_step(idx0, tgt0, p3, bf16):
    step, _ = BT.w3(ft, idx0, tgt0, p3)
    if not bf16:
        return step
    cl = {n: c.cell_contents for n, c in zip(step.__code__.co_freevars, step.__closure__)}
    model, opt, idx, tgt = cl["model"], cl["opt"], cl["idx"], cl["tgt"]
    F = ft.nn.functional

    def amp_step():
        opt.zero_grad()
        with ft.autocast("cpu", dtype=ft.bfloat16):
            loss = F.cross_entropy(model(idx).view(-1, V), tgt.view(-1))
        loss.backward()
        opt.step()
        return loss
    return amp_step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    idx0, tgt0 = rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))
    p3 = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in BT.SHAPES3]
    names = BT.w3(ft, idx0, tgt0, p3)[1]
    rows = {}
    for label, bf16 in (("W3 float32", False), ("W3 autocast bf16", True)):
        rows[label] = [facade_step(idx0, tgt0, p3, bf16), ft.compile(facade_step(idx0, tgt0, p3, bf16)),
                       BT.w3_jax(idx0, tgt0, p3, names, bf16)]
    res = interleave(rows, args.rounds, lambda name: (4, 1))
    print(f"jax {jax.__version__}, device {jax.devices()[0].platform}")
    print(f"{'workload':18s} {'eager ms':>9s} {'compiled ms':>12s} {'pure JAX ms':>12s} {'compiled/JAX':>13s}")
    for k, (e, c, j) in res.items():
        me, mc, mj = (statistics.median(x) * 1e3 for x in (e, c, j))
        print(f"{k:18s} {me:9.2f} {mc:12.2f} {mj:12.2f} {mc / mj:13.2f}")


if __name__ == "__main__":
    main()
