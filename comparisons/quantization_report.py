"""Post-training quantization report (issue 6): output error and weight memory of int8 / NF4 models.

Trains the digits MLP of examples/digits_classifier.py and the tiny character LM of
examples/char_transformer.py briefly, quantizes copies with ``functorch_lite.quantization.quantize_``
("int8"; "nf4"; "nf4" with double quantization) and prints, per model and method: the max and mean absolute
difference of the outputs (logits) from the float32 model, the agreement of the argmax predictions, the
accuracy (digits) or loss (LM) before/after, and the bytes of the linear weights before/after.

    .venv/bin/python comparisons/quantization_report.py [--digits-steps 300] [--lm-steps 150]

The builders and ``measure`` are importable (tests/unit/test_quantization.py uses them).
"""
from __future__ import annotations

import argparse
import pathlib
import time
from typing import Callable

import numpy as np

import functorch_lite as torch
from functorch_lite import nn
from functorch_lite.nn import functional as F
from functorch_lite.quantization import quantize_, weight_bytes

ROOT = pathlib.Path(__file__).resolve().parent.parent
METHODS = (("int8", {}), ("nf4", {}), ("nf4", {"double_quant": True}))


def _example(name: str):
    """One of examples/*.py as a module (their models are module-level; the scripts run under ``__main__``)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


DigitsMLP = _example("digits_classifier").MLP  # the example's MLP: Flatten, 64 -> 128 -> 128 -> 10


def digits_data(seed: int = 0):
    """(X_train, y_train, X_test, y_test): the example's 80/20 split, images (N, 1, 8, 8) in [0, 1]."""
    from sklearn.datasets import load_digits
    d = load_digits()
    images = (d.images / 16.0).astype(np.float32)[:, None]
    labels = d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = len(labels) // 5
    te, tr = order[:n_test], order[n_test:]
    return (torch.from_numpy(images[tr]), torch.from_numpy(labels[tr]), torch.from_numpy(images[te]),
            torch.from_numpy(labels[te]))


def train_digits(steps: int = 300, seed: int = 0):
    """A briefly trained DigitsMLP (AdamW, batch 64) and the test split: (model, X_test, y_test)."""
    torch.manual_seed(seed)
    X, y, X_test, y_test = digits_data(seed)
    model = DigitsMLP()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        i = torch.from_numpy(rng.integers(0, len(y), 64))
        loss = F.cross_entropy(model(X[i]), y[i], label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval(), X_test, y_test


# ---- char LM (examples/char_transformer.py) ---------------------------------------------------------------
class CharLM(_example("char_transformer").CharLM):
    """The example's model at its default size; ``forward(idx)`` returns the logits alone."""

    def __init__(self, vocab: int, d: int = 96, heads: int = 4, layers: int = 2, block: int = 64) -> None:
        super().__init__(vocab, d, heads, layers, block)

    def forward(self, idx):
        return super().forward(idx)[0]


def sonnets():
    """(data int64 tensor, vocab size) of examples/data/sonnets.txt."""
    text = (ROOT / "examples" / "data" / "sonnets.txt").read_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    return torch.tensor([stoi[c] for c in text], dtype=torch.long), len(chars)


def lm_batch(data, rng, batch: int = 16, block: int = 64):
    starts = rng.integers(0, len(data) - block - 1, batch).tolist()
    x = torch.stack([data[i:i + block] for i in starts])
    y = torch.stack([data[i + 1:i + 1 + block] for i in starts])
    return x, y


def train_char_lm(steps: int = 150, seed: int = 0):
    """A briefly trained CharLM and a fixed evaluation batch: (model, x_eval, y_eval)."""
    torch.manual_seed(seed)
    data, vocab = sonnets()
    model = CharLM(vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x, y = lm_batch(data, rng, 32)
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    x_eval, y_eval = lm_batch(data, np.random.default_rng(seed + 1), 16)
    return model.eval(), x_eval, y_eval


# ---- measurement ------------------------------------------------------------------------------------------
def measure(build: Callable[[], nn.Module], trained: nn.Module, inputs, targets, method: str, **kw) -> dict:
    """Quantize a copy of ``trained`` (built fresh by ``build``, then ``load_state_dict``) and compare outputs.

    Returns max/mean absolute output error, argmax agreement, the float and quantized loss (cross-entropy
    against ``targets``) and accuracy, weight bytes before/after and their ratio.
    """
    q = build()
    q.load_state_dict(trained.state_dict())
    q.eval()
    before = weight_bytes(q)
    quantize_(q, method, **kw)
    after = weight_bytes(q)
    with torch.no_grad():
        ref, out = trained(inputs), q(inputs)
    err = (out - ref).abs()
    flat = lambda t: t.reshape(-1, t.shape[-1])  # noqa: E731
    return {
        "max_abs_err": err.max().item(), "mean_abs_err": err.mean().item(),
        "ref_abs_mean": ref.abs().mean().item(),
        "argmax_agree": (out.argmax(-1) == ref.argmax(-1)).float().mean().item(),
        "loss_fp32": F.cross_entropy(flat(ref), targets.reshape(-1)).item(),
        "loss_quant": F.cross_entropy(flat(out), targets.reshape(-1)).item(),
        "acc_fp32": (ref.argmax(-1) == targets).float().mean().item(),
        "acc_quant": (out.argmax(-1) == targets).float().mean().item(),
        "bytes_fp32": before, "bytes_quant": after, "ratio": before / after,
    }


def _label(method: str, kw: dict) -> str:
    return method + ("+dq" if kw.get("double_quant") else "")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--digits-steps", type=int, default=300)
    p.add_argument("--lm-steps", type=int, default=150)
    args = p.parse_args()
    t0 = time.perf_counter()
    mlp, Xt, yt = train_digits(args.digits_steps)
    lm, xe, ye = train_char_lm(args.lm_steps)
    vocab = lm.head.out_features
    print(f"trained in {time.perf_counter() - t0:.1f} s (digits {args.digits_steps} steps, LM {args.lm_steps} steps)")
    hdr = (f"{'model':<10} {'method':<8} {'max|err|':>9} {'mean|err|':>9} {'mean|y|':>8} {'argmax=':>8} "
           f"{'loss fp32':>9} {'loss q':>8} {'acc fp32':>8} {'acc q':>7} {'bytes fp32':>10} {'bytes q':>8} "
           f"{'ratio':>6}")
    print(hdr)
    print("-" * len(hdr))
    for name, build, model, x, y in (("digits", DigitsMLP, mlp, Xt, yt),
                                     ("char-LM", lambda: CharLM(vocab), lm, xe, ye)):
        for method, kw in METHODS:
            r = measure(build, model, x, y, method, **kw)
            print(f"{name:<10} {_label(method, kw):<8} {r['max_abs_err']:>9.4f} {r['mean_abs_err']:>9.4f} "
                  f"{r['ref_abs_mean']:>8.3f} {r['argmax_agree']:>8.3f} {r['loss_fp32']:>9.4f} "
                  f"{r['loss_quant']:>8.4f} {r['acc_fp32']:>8.3f} {r['acc_quant']:>7.3f} {r['bytes_fp32']:>10,} "
                  f"{r['bytes_quant']:>8,} {r['ratio']:>5.2f}x")
    print("bytes: weights of the linear layers (int8: + float32 per-row scales; NF4: + absmax per 64-block, "
          "double-quantized: int8 absmax + float32 per 256); biases and embeddings stay float32.")


if __name__ == "__main__":
    main()
