"""Shared by the scenario parity files (the same code run eagerly here, compiled here and in real torch)."""
from __future__ import annotations

import numpy as np
import torch

import functorch_lite as ft


def same_init(model, seed: int = 0, scale: float = 0.3, buffers: bool = False):
    """The same weights in ft and torch: every parameter from one numpy stream, in ``named_parameters`` order
    (``buffers``: then every float32 buffer, a running variance kept positive)."""
    g = np.random.default_rng(seed)
    lib = ft if isinstance(model, ft.nn.Module) else torch
    with lib.no_grad():
        for _, p in model.named_parameters():
            p.copy_(lib.tensor((g.standard_normal(tuple(p.shape)) * scale).astype(np.float32)))
        if buffers:
            for n, b in model.named_buffers():
                if b.dtype == lib.float32:
                    v = g.standard_normal(tuple(b.shape)) * 0.2
                    if n.endswith("running_var"):
                        v = np.abs(v) + 0.5
                    b.copy_(lib.tensor(v.astype(np.float32)))
    return model
