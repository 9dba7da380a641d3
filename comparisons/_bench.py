"""Timing helpers shared by the benchmark scripts (JAX dispatches asynchronously: every timing ends in a sync)."""
from __future__ import annotations

import functools
import time

import jax

import functorch_lite as ft


def sync(x) -> None:
    """Wait for ``x``'s values: a facade tensor, a jax array, a pytree of them; a torch CUDA tensor (torch's CPU
    results are ready)."""
    if isinstance(x, ft.Tensor):
        x._array.block_until_ready()
    elif isinstance(x, (tuple, list)):
        for y in x:
            sync(y)
    elif isinstance(x, jax.Array):
        x.block_until_ready()
    elif getattr(x, "is_cuda", False):
        import torch
        torch.cuda.synchronize()


def time_calls(fn, n: int, batch: int = 1) -> list:
    """Seconds per call of ``fn``: ``n // batch`` samples, each ``batch`` calls then one sync."""
    out = []
    for _ in range(max(1, n // batch)):
        t0 = time.perf_counter()
        r = None
        for _ in range(batch):
            r = fn()
        sync(r)
        out.append((time.perf_counter() - t0) / batch)
    return out


# PyTorch's OpenMP workers spin for a while after each parallel region; on a 2-core machine they steal the CPU
# from whatever is timed next (measured: the facade's W1 epoch 40 us right after torch, 27 us otherwise).
IDLE_S = 0.3


def interleave(rows: dict, rounds: int, budget, paired: int = 2) -> dict:
    """Warm every callable up (3 calls: compiles), then time the rows interleaved, ``rounds`` times over, each
    timing block after ``IDLE_S`` of idle time. A row's first ``paired`` callables (the facade and pure JAX,
    whose ratio is the target) are timed in one block, sample by sample in turn (the order flipping each time):
    this host's speed drifts by 10-30% within seconds, which timed one block after the other put into their
    ratio (the same pure JAX step measured 1.32 and 1.82 ms in two rows of one run).

    ``rows``: name -> list of callables (None = absent); ``budget(name) -> (calls per round, batch)``.
    Returns name -> one list of per-call seconds per callable."""
    for fns in rows.values():
        for fn in fns:
            if fn is not None:
                for _ in range(3):
                    sync(fn())
    res = {k: tuple([] for _ in fns) for k, fns in rows.items()}
    for _ in range(rounds):
        for name, fns in rows.items():
            n, batch = budget(name)
            pair = [(i, fn) for i, fn in enumerate(fns[:paired]) if fn is not None]
            time.sleep(IDLE_S)
            for k in range(max(1, n // batch)):
                for i, fn in (pair if k % 2 == 0 else pair[::-1]):
                    res[name][i].extend(time_calls(fn, batch, batch))
            for i, fn in enumerate(fns):
                if fn is not None and i >= paired:
                    time.sleep(IDLE_S)
                    res[name][i].extend(time_calls(fn, n, batch))
    return res


def jit_step(loss, params, tx, data=()):
    """The hand-written JAX training step: ``jax.jit`` of value_and_grad + an optax update, params and state
    donated, the batch ``data`` passed as arguments (as a JAX user writes a training loop: ``loss(params,
    *data)``); returns the loss. (Closed over, the batch would be a constant of the program -- not what a loop
    over batches gets, nor what the facade's step does: it reads its batch tensors as inputs, since they may
    change. Measured on W2 here, calls alternating: 1-2% faster as constants.)"""
    import optax
    state = [params, tx.init(params)]

    @functools.partial(jax.jit, donate_argnums=(0, 1))  # params and optimizer state updated in place
    def update(ps, s, *data):
        v, g = jax.value_and_grad(loss)(ps, *data)
        u, s = tx.update(g, s, ps)
        return optax.apply_updates(ps, u), s, v

    def step():
        state[0], state[1], v = update(*state, *data)
        return v
    return step
