"""Quickstart: the first snippets of the tensor tutorial, run on functorch_lite.

Run it with ``make demo`` (or ``.venv/bin/python examples/quickstart.py``). The script is plain
PyTorch code: replace the import line with ``import torch`` and it runs unchanged under PyTorch.
"""
import functorch_lite as torch

# ---- 1. Device selection (CUDA GPU -> TPU -> Apple MPS -> CPU) ---------------------------------
# PyTorch has no ``torch.tpu`` module, so TPU detection is guarded: under PyTorch it is skipped.
_tpu = getattr(torch, "tpu", None)
tpu_available = _tpu is not None and _tpu.is_available()
device = "cuda" if torch.cuda.is_available() else (
    "tpu" if tpu_available else ("mps" if torch.backends.mps.is_available() else "cpu"))
print(f"Using device: {device}")

torch.manual_seed(0)

# ---- 2. Creating tensors and their three properties: shape, dtype, device ----------------------
x = torch.tensor([1., 2., 3.])            # CPU, float32
x = x.to(device)                          # move to the chosen device (a no-op on CPU)
print("x:", x, x.shape, x.dtype, x.device)

ids = torch.tensor([101, 2023, 2003, 102])  # token ids / labels are int64 (torch.long)
print("ids:", ids.dtype, ids.dtype == torch.long)

h = torch.randn(64, 128, device=device)   # activations: float32 by default
print("h:", h.shape, h.dtype, h.device)
print("h.shape == (64, 128):", h.shape == (64, 128))

hb = h.to(torch.bfloat16)                 # casting: bf16 halves the memory
print("bf16:", hb.dtype, "bytes per element:", hb.element_size(), "vs", h.element_size())
print("half:", torch.tensor([1.5, -2.7, 3.9]).half())

# ---- 3. Reshaping, permuting, squeezing ------------------------------------------------------------
imgs = torch.randn(32, 3, 28, 28)
flat = imgs.view(32, -1)                  # (32, 3, 28, 28) -> (32, 2352)
print("view:", tuple(imgs.shape), "->", tuple(flat.shape))
assert flat.shape == (32, 2352)

img = torch.randn(3, 224, 224)
batch = img.unsqueeze(0)                  # add a batch dimension
print("unsqueeze:", tuple(img.shape), "->", tuple(batch.shape))
assert batch.shape == (1, 3, 224, 224)

preds = torch.randn(64, 1)
print("squeeze:", tuple(preds.shape), "->", tuple(preds.squeeze(-1).shape))
assert preds.squeeze(-1).shape == (64,)

B, T, H, D = 2, 5, 4, 8                   # (batch, seq, heads, head_dim)
qkv = torch.randn(B, T, H, D, device=device)
heads = qkv.permute(0, 2, 1, 3)           # (B, Seq, Heads, Dim) -> (B, Heads, Seq, Dim)
print("permute:", tuple(qkv.shape), "->", tuple(heads.shape))
assert heads.shape == qkv.transpose(1, 2).shape == (B, H, T, D)
print("transpose is a view, not contiguous:", qkv.transpose(1, 2).is_contiguous())
merged = heads.transpose(1, 2).contiguous().view(B, T, H * D)  # or .reshape(B, T, -1)
assert merged.shape == (B, T, H * D)

# ---- 4. Batched matmul: attention scores -------------------------------------------------------------
Q = torch.randn(B, H, T, D, device=device)
K = torch.randn(B, H, T, D, device=device)
scores = Q @ K.transpose(-2, -1) / D ** 0.5   # (B, H, T, d) @ (B, H, d, T) -> (B, H, T, T)
print("scores:", tuple(scores.shape), scores.dtype)
assert scores.shape == (B, H, T, T)

# ---- 5. Broadcasting and reductions with dim / keepdim ---------------------------------------------
feats = torch.randn(32, 10, device=device)    # (batch, features)
mu = feats.mean(dim=-1, keepdim=True)         # (32, 1): per-sample feature mean
centered = feats - mu                         # (32, 10) - (32, 1) broadcasts
print("mean(dim=-1, keepdim=True):", tuple(mu.shape), "centered:", tuple(centered.shape))
print("column sums:", tuple(feats.sum(dim=0).shape), "row sums:", tuple(feats.sum(dim=1).shape))
print("centered rows have mean ~0:", centered.mean(dim=-1).abs().max().item() < 1e-5)

probs = feats.softmax(dim=-1)                 # (32, 10): a distribution per sample
print("softmax rows sum to 1:", (probs.sum(dim=-1) - 1).abs().max().item() < 1e-5)

top = feats.topk(k=3, dim=-1)                 # top-3 per sample, with indices
print("topk:", tuple(top.values.shape), top.values.dtype, tuple(top.indices.shape), top.indices.dtype)
print("first row top-3:", top.values[0], top.indices[0])

attn = scores.softmax(dim=-1) @ torch.randn(B, H, T, D, device=device)
print("attention output:", tuple(attn.shape))

# ---- 6. einsum ------------------------------------------------------------------------------------------
a = torch.randn(4, 3)
b = torch.randn(4, 5)
outer = torch.einsum('bi,bj->bij', a, b)     # batched outer product: (B, I, J)
print("einsum outer:", tuple(outer.shape))
assert outer.shape == (4, 3, 5)
s2 = torch.einsum('bhid,bhjd->bhij', Q, K)   # multi-head attention scores: (B, H, T, T)
print("einsum scores match Q @ K^T:", (s2 / D ** 0.5 - scores).abs().max().item() < 1e-5)

print("done")
