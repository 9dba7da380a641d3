"""Shared by the scenario parity files (the same code run eagerly here, compiled here and in real torch)."""
from __future__ import annotations

import warnings

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


# ---- the scenario files' comparison: a script run with L = functorch_lite and L = torch -------------------------
def is_tensor(x):
    return isinstance(x, (torch.Tensor, ft.Tensor))


def to_np(x):
    x = x.detach()
    if x.dtype in (torch.bfloat16, ft.bfloat16) or str(x.dtype) == "torch.bfloat16":
        x = x.float()
    return x.numpy().copy()


def flat(obj, prefix=""):
    """Nested dicts / lists / tuples of tensors and Python values -> {path: value} (tensors as numpy)."""
    out = {}
    if isinstance(obj, dict):
        out[prefix + "#keys"] = sorted(map(str, obj))
        for k, v in obj.items():
            out.update(flat(v, f"{prefix}/{k}"))
    elif isinstance(obj, (list, tuple)):
        out[prefix + "#len"] = len(obj)
        for i, v in enumerate(obj):
            out.update(flat(v, f"{prefix}[{i}]"))
    elif is_tensor(obj):
        out[prefix + "#dtype"] = str(obj.dtype)
        out[prefix] = to_np(obj)
    else:
        out[prefix] = obj
    return out


def cmp(a, b, rtol=1e-5, atol=1e-6):
    """``a`` (functorch_lite's run) equals ``b`` (torch's): same structure, same dtypes, close values."""
    fa, fb = flat(a), flat(b)
    assert sorted(fa) == sorted(fb), f"different structure: {sorted(set(fa) ^ set(fb))}"
    for k in fa:
        x, y = fa[k], fb[k]
        if isinstance(y, np.ndarray) or (isinstance(y, float) and not isinstance(y, bool)):
            np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(y, np.float64), rtol=rtol, atol=atol,
                                       err_msg=k)
        else:
            assert x == y, f"{k}: {x!r} != {y!r}"


def both(script, rtol=1e-5, atol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = script(ft), script(torch)
    cmp(got, want, rtol, atol)
    return got, want
