"""A tiny character-level transformer language model, trained on Shakespeare's sonnets (public domain,
examples/data/sonnets.txt), then asked to write a few lines.

Token + position embeddings, pre-LayerNorm blocks with causal self-attention
(F.scaled_dot_product_attention, is_causal=True) and a 4x GELU MLP, AdamW with weight decay on matrices
only, linear warm-up then cosine decay (LambdaLR), gradient clipping. Plain PyTorch code: replace the import
lines with ``import torch`` / ``from torch ...`` and it runs unchanged under PyTorch.

    .venv/bin/python examples/char_transformer.py --steps 300 [--compile]
"""
import argparse
import math
import pathlib
import time

import functorch_lite as torch
from functorch_lite import nn
from functorch_lite.nn import functional as F


# ---- model ------------------------------------------------------------------------------------------------
class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharLM(nn.Module):
    def __init__(self, vocab, d, heads, layers, block):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(block, d)
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        logits = self.head(self.ln_f(self.blocks(x)))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block", type=int, default=64, help="context length in characters")
    parser.add_argument("--d-model", type=int, default=96)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--sample", type=int, default=240, help="characters to generate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compile", action="store_true",
                        help="compile the whole training step (forward, backward, clipping, AdamW, LR schedule)")
    args = parser.parse_args()

    _tpu = getattr(torch, "tpu", None)
    device = "cuda" if torch.cuda.is_available() else (
        "tpu" if _tpu is not None and _tpu.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu"))
    print(f"Using device: {device}")
    torch.manual_seed(args.seed)

    # ---- data: characters -> integer ids; 90% train / 10% validation --------------------------------------
    text = (pathlib.Path(__file__).parent / "data" / "sonnets.txt").read_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n_val = len(data) // 10
    train_data, val_data = data[:-n_val], data[-n_val:]
    print(f"{len(text)} characters, vocabulary of {len(chars)}")


    def get_batch(split):
        src = train_data if split == "train" else val_data
        starts = torch.randint(len(src) - args.block - 1, (args.batch_size,))
        x = torch.stack([src[i:i + args.block] for i in starts.tolist()])
        y = torch.stack([src[i + 1:i + 1 + args.block] for i in starts.tolist()])
        return x.to(device), y.to(device)




    model = CharLM(len(chars), args.d_model, args.heads, args.layers, args.block).to(device)
    print(f"parameters: {sum(p.numel() for p in model.parameters()):,}")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.95))
    warmup = max(1, args.steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warmup if s < warmup else
        0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (s - warmup) / max(1, args.steps - warmup))))


    @torch.no_grad()
    def estimate_val_loss(batches=4):
        model.eval()
        losses = [model(*get_batch("val"))[1].item() for _ in range(batches)]
        model.train()
        return sum(losses) / len(losses)


    # ---- training -----------------------------------------------------------------------------------------
    def train_step(x, y):
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        return loss

    if args.compile:
        train_step = torch.compile(train_step)
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        loss = train_step(*get_batch("train"))
        if step == 1 or step % 50 == 0 or step == args.steps:
            print(f"step {step:4d}  train loss {loss.item():.3f}  val loss {estimate_val_loss():.3f}  "
                  f"lr {scheduler.get_last_lr()[0]:.2e}  ({time.perf_counter() - start:.1f} s)")

    # ---- sampling: prompt with the first `block` characters, then extend one character at a time ----------
    # (the context is always exactly `block` long, so every forward pass has the same shapes)
    model.eval()
    idx = data[:args.block].unsqueeze(0).to(device)
    with torch.no_grad():
        for _ in range(args.sample):
            logits, _ = model(idx[:, -args.block:])
            probs = F.softmax(logits[:, -1, :] / 0.8, dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, num_samples=1)], dim=1)
    print("---- sample ----")
    print("".join(chars[i] for i in idx[0].tolist()))


if __name__ == "__main__":
    main()
