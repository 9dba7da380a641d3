"""Eager training steps: functorch_lite vs hand-written pure JAX (jit) vs real PyTorch eager, interleaved.

    python comparisons/bench_training.py [--rounds N] [--quick]

W2 (issue 4): MLP 784-256-256-10 (nn.Linear, ReLU), batch 128, nn.CrossEntropyLoss, optim.Adam(lr=1e-3):
    zero_grad, forward, backward, step. Target: facade eager <= 1.0x torch eager.
W3 (issue 4): one transformer block, B=8, T=128, d=256, 4 heads: LayerNorm, causal attention written with
    matmul + masked_fill + softmax, 4x GELU MLP, LayerNorm, linear head + cross-entropy, optim.AdamW.
    Target: facade eager <= 1.2x pure JAX jit.
The same code builds the facade and the torch models (``lib`` is ``functorch_lite`` or ``torch``); weights
are copied from one numpy draw. Pure JAX: ``jax.jit(value_and_grad + optax update)``, donated state.
Medians in milliseconds; ratios facade/jax and facade/torch.
"""
from __future__ import annotations

import argparse
import math
import statistics
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

import functorch_lite as ft
from _bench import interleave, jit_step

try:
    import torch
except ImportError:  # still runs facade vs jax
    torch = None


def _load(model, arrays, lib, dev=None):
    with lib.no_grad():
        for p, a in zip(model.parameters(), arrays):
            p.copy_(lib.tensor(a))
    if dev is not None:
        model.to(dev)


# ---- W2 ---------------------------------------------------------------------------------------------------
def w2(lib, x0, y0, p0, dev=None, wrap=None):
    """W2's step; ``wrap``: what the forward runs (``compile(model)``: the model compiled, the rest eager)."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    _load(model, p0, lib, dev)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    x, y = lib.tensor(x0, device=dev), lib.tensor(y0, device=dev)
    fwd = model if wrap is None else wrap(model)

    def step():
        opt.zero_grad()
        loss = loss_fn(fwd(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def w2_jax(x0, y0, p0):
    x, y = jnp.asarray(x0), jnp.asarray(y0)
    params = [jnp.asarray(a) for a in p0]
    tx = optax.adam(1e-3)

    def loss(ps, x, y):
        h = jax.nn.relu(x @ ps[0].T + ps[1])
        h = jax.nn.relu(h @ ps[2].T + ps[3])
        logits = h @ ps[4].T + ps[5]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    return jit_step(loss, params, tx, (x, y))


# ---- W3 ---------------------------------------------------------------------------------------------------
class Dims(NamedTuple):
    B: int
    T: int
    D: int
    H: int
    V: int


W3 = Dims(8, 128, 256, 4, 256)       # this file's W3; comparisons/gpu_report.py also runs a larger one
B, T, D, H, V = W3


def shapes3(d: Dims = W3) -> list:
    """The block's parameter shapes, in its parameter order."""
    D, V = d.D, d.V
    return [(V, D), (D,), (D,), (D,), (D,), (3 * D, D), (3 * D,), (D, D), (D,), (4 * D, D), (4 * D,), (D, 4 * D),
            (D,), (V, D), (V,)]


SHAPES3 = shapes3()


def w3(lib, idx0, tgt0, p0, dims: Dims = W3, dev=None):
    nn, F = lib.nn, lib.nn.functional
    B, T, D, H, V = dims

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, D)
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
            self.head = nn.Linear(D, V)
            self.register_buffer("mask", lib.ones(T, T, dtype=lib.bool).triu(1))

        def forward(self, idx):
            x = self.emb(idx)
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
            q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D // H))
            att = att.masked_fill(self.mask, float("-inf")).softmax(dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, D))
            x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
            return self.head(x)

    model = Block()
    _load(model, p0, lib, dev)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    idx, tgt = lib.tensor(idx0, device=dev), lib.tensor(tgt0, device=dev)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(idx).view(-1, V), tgt.view(-1))
        loss.backward()
        opt.step()
        return loss
    return step, [n for n, _ in model.named_parameters()]


def w3_jax(idx0, tgt0, p0, names, bf16=False, dims: Dims = W3):
    """The W3 step hand-written in JAX (on JAX's default device). ``bf16``: the casts of CPU autocast(bfloat16) —
    matmul/linear inputs in bfloat16; softmax and the loss in float32, as autocast's fp32 list has them
    (bench_autocast.py)."""
    B, T, D, H, V = dims
    idx, tgt = jnp.asarray(idx0), jnp.asarray(tgt0)
    params = {n: jnp.asarray(a) for n, a in zip(names, p0)}
    tx = optax.adamw(1e-3, weight_decay=1e-2)
    mask = jnp.triu(jnp.ones((T, T), bool), 1)
    lo = (lambda a: a.astype(jnp.bfloat16)) if bf16 else (lambda a: a)

    def lin(x, w, b):
        return lo(x) @ lo(w).T + lo(b)

    def ln(x, w, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / jnp.sqrt(v + 1e-5) * w + b

    def loss(p, idx, tgt):
        x = p["emb.weight"][idx]
        qkv = lin(ln(x, p["ln1.weight"], p["ln1.bias"]), p["qkv.weight"], p["qkv.bias"])
        q, k, v = (t.reshape(B, T, H, D // H).transpose(0, 2, 1, 3) for t in jnp.split(qkv, 3, axis=2))
        att = (lo(q) @ lo(k).transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(D // H))
        att = jax.nn.softmax(jnp.where(mask, -jnp.inf, att).astype(jnp.float32), axis=-1)
        x = x + lin((lo(att) @ lo(v)).transpose(0, 2, 1, 3).reshape(B, T, D), p["proj.weight"], p["proj.bias"])
        h = jax.nn.gelu(lin(ln(x, p["ln2.weight"], p["ln2.bias"]), p["fc1.weight"], p["fc1.bias"]),
                        approximate=False)
        x = x + lin(h, p["fc2.weight"], p["fc2.bias"])
        logits = lin(x, p["head.weight"], p["head.bias"]).reshape(-1, V).astype(jnp.float32)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), tgt.reshape(-1, 1), axis=1))

    return jit_step(loss, params, tx, (idx, tgt))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((128, 784)).astype(np.float32)
    y0 = rng.integers(0, 10, 128)
    p2 = [(rng.standard_normal(s) * 0.05).astype(np.float32)
          for s in [(256, 784), (256,), (256, 256), (256,), (10, 256), (10,)]]
    idx0, tgt0 = rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))
    p3 = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in SHAPES3]
    f3, names = w3(ft, idx0, tgt0, p3)
    rows = {"W2 MLP Adam step": [w2(ft, x0, y0, p2), w2_jax(x0, y0, p2),
                                 w2(torch, x0, y0, p2) if torch else None],
            "W3 block AdamW step": [f3, w3_jax(idx0, tgt0, p3, names),
                                    w3(torch, idx0, tgt0, p3)[0] if torch else None]}
    n = {"W2 MLP Adam step": 60, "W3 block AdamW step": 6}
    scale = 0.3 if args.quick else 1.0
    res = interleave(rows, args.rounds, lambda name: (max(2, int(n[name] * scale)), 1))
    print(f"jax {jax.__version__}, torch {torch.__version__ if torch else 'absent'} "
          f"(threads {torch.get_num_threads() if torch else '-'}), device {jax.devices()[0].platform}")
    print(f"{'workload':22s} {'facade ms':>10s} {'jax ms':>10s} {'torch ms':>10s} {'fac/jax':>8s} {'fac/torch':>9s}")
    for name, (f, j, t) in res.items():
        mf, mj = statistics.median(f) * 1e3, statistics.median(j) * 1e3
        mt = statistics.median(t) * 1e3 if t else float("nan")
        print(f"{name:22s} {mf:10.2f} {mj:10.2f} {mt:10.2f} {mf / mj:8.2f} {mf / mt:9.2f}")


if __name__ == "__main__":
    main()
