"""device='meta' (shape-only tensors, no memory) and the seed's memory arithmetic per dtype policy (issue 6
item 5): "A 7B model in fp16: 14GB params + 14GB grads + 28GB AdamW = 56GB before activations"."""
import re

import jax
import numpy as np
import pytest

import functorch_lite as ft
from functorch_lite import nn
from functorch_lite.utils import memory


def _llama_like(d=4096, ffn=11008, layers=32, vocab=32000):
    """A 7B-class decoder's weight shapes, built on the meta device (nothing allocated)."""
    blocks = []
    for _ in range(layers):
        blocks += [nn.Linear(d, d, bias=False, device="meta") for _ in range(4)]          # q, k, v, o
        blocks += [nn.Linear(d, ffn, bias=False, device="meta"), nn.Linear(d, ffn, bias=False, device="meta"),
                   nn.Linear(ffn, d, bias=False, device="meta")]                           # gate, up, down
    return nn.ModuleList([nn.Embedding(vocab, d, device="meta"), *blocks, nn.Linear(d, vocab, bias=False,
                                                                                      device="meta")])


def test_seed_7b_fp16_adamw_is_56gb_before_activations():
    model = _llama_like().half()
    n = sum(p.numel() for p in model.parameters())
    assert 6.5e9 < n < 7.0e9
    assert all(p.is_meta and p.dtype is ft.float16 for p in model.parameters())
    assert all(type(p._storage.array) is jax.ShapeDtypeStruct for p in model.parameters())  # no memory
    opt = ft.optim.AdamW(model.parameters(), lr=1e-4)
    m = memory.training_memory(model, opt, policy="fp16")
    assert m == {"params": 2 * n, "grads": 2 * n, "optimizer_state": 4 * n, "activations": 0, "total": 8 * n}
    per_7b = {k: v / n * 7e9 / 1e9 for k, v in m.items()}  # the seed's round numbers, for a 7.0e9 model
    assert per_7b["params"] == pytest.approx(14) and per_7b["grads"] == pytest.approx(14)
    assert per_7b["optimizer_state"] == pytest.approx(28) and per_7b["total"] == pytest.approx(56)
    # mixed precision keeps fp32 master weights, grads and Adam moments: 16 bytes per parameter
    for policy in ("fp32", "bf16-autocast", "fp16-gradscaler"):
        assert memory.training_memory(model, opt, policy=policy)["total"] == 16 * n


def test_measured_bytes_follow_the_tensors_dtypes_on_meta():
    model = nn.Sequential(nn.Linear(8, 16, device="meta"), nn.Linear(16, 4, device="meta"))
    n = sum(p.numel() for p in model.parameters())
    m = memory.training_memory(model, ft.optim.Adam(model.parameters()))
    assert m["params"] == 4 * n and m["optimizer_state"] == 8 * n
    with pytest.raises(ValueError, match="unknown policy"):
        memory.training_memory(model, policy="int3")


def test_meta_tensors_behave_like_torch():
    import torch
    x = ft.empty(2, 3, device="meta")
    assert repr(x) == repr(torch.empty(2, 3, device="meta"))
    assert repr(ft.ones(2, dtype=ft.float64, device="meta")) == repr(torch.ones(2, dtype=torch.float64,
                                                                               device="meta"))
    assert x.is_meta and str(x.device) == "meta"
    assert (x @ ft.empty(3, 4, device="meta")).shape == (2, 4)
    assert x.sum(1).shape == (2,) and x.t().shape == (3, 2) and x[0].shape == (3,)
    assert repr(nn.Linear(4, 5, device="meta").weight).endswith("size=(5, 4), requires_grad=True)")
    for call in (lambda m: m.empty(2, 3, device="meta").cpu(), lambda m: m.empty(2, 3, device="meta").tolist(),
                 lambda m: m.empty(2, 3, device="meta").numpy(),
                 lambda m: m.empty(2, 3, device="meta") + m.ones(2, 3)):
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
            call(ft)
    assert ft.ones(3).to("meta").is_meta
