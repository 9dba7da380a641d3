"""A small classifier on scikit-learn's 8x8 handwritten digits (1,797 images, shipped inside scikit-learn).

Plain PyTorch code: nn.Module, DataLoader, CrossEntropyLoss, AdamW, a cosine LR schedule, train/eval modes,
held-out accuracy, a progress bar, and a loss curve saved as PNG when matplotlib is installed. Replace the
import line with ``import torch`` and it runs unchanged under PyTorch.

    make demo                                   # creates .venv, installs, runs this script
    .venv/bin/python examples/digits_classifier.py --model cnn --epochs 10
"""
import argparse
import sys
import time

import numpy as np

import functorch_lite as torch
from functorch_lite import nn
from functorch_lite.utils.data import DataLoader, TensorDataset


# ---- model ------------------------------------------------------------------------------------------------
class MLP(nn.Module):
    def __init__(self, hidden=128, classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, hidden), nn.ReLU(), nn.Dropout(0.1),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


class SmallCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2))   # 32 x 4 x 4
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(32 * 4 * 4, classes))

    def forward(self, x):
        return self.head(self.features(x))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default="digits_loss.png", help="where to save the loss curve ('' to skip)")
    args = parser.parse_args()

    # ---- device: CUDA GPU -> TPU -> Apple MPS -> CPU (PyTorch has no torch.tpu, so that probe is guarded) 
    _tpu = getattr(torch, "tpu", None)
    device = "cuda" if torch.cuda.is_available() else (
        "tpu" if _tpu is not None and _tpu.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu"))
    print(f"Using device: {device}")
    torch.manual_seed(args.seed)

    # ---- data: scikit-learn ships the digits; a fixed 80/20 split; pixels scaled to [0, 1] ------------------
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("This example needs scikit-learn: pip install -e '.[examples]'")
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)          # (1797, 8, 8)
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(args.seed).permutation(len(labels))
    n_test = len(labels) // 5
    test_idx, train_idx = order[:n_test], order[n_test:]

    X_train = torch.from_numpy(images[train_idx]).unsqueeze(1)   # (N, 1, 8, 8)
    y_train = torch.from_numpy(labels[train_idx])
    X_test = torch.from_numpy(images[test_idx]).unsqueeze(1).to(device)
    y_test = torch.from_numpy(labels[test_idx]).to(device)
    train_loader = DataLoader(TensorDataset(X_train, y_train), batch_size=args.batch_size, shuffle=True,
                              drop_last=True)




    model = (MLP() if args.model == "mlp" else SmallCNN()).to(device)
    print(model)
    print(f"parameters: {sum(p.numel() for p in model.parameters()):,}")
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)


    def progress(it, total, desc):
        """tqdm when installed, else a minimal text bar (the example needs no extra package to run)."""
        try:
            from tqdm import tqdm
            return tqdm(it, total=total, desc=desc, leave=False, file=sys.stdout)
        except ImportError:
            def gen():
                for i, item in enumerate(it, 1):
                    bar = "#" * (20 * i // total)
                    print(f"\r{desc} [{bar:<20}] {i}/{total}", end="", flush=True)
                    yield item
                print("\r" + " " * (len(desc) + 30) + "\r", end="")
            return gen()


    def evaluate():
        model.eval()
        with torch.no_grad():
            logits = model(X_test)
            test_loss = loss_fn(logits, y_test).item()
            acc = (logits.argmax(dim=1) == y_test).float().mean().item()
        model.train()
        return test_loss, acc


    # ---- training -----------------------------------------------------------------------------------------
    history = []
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        running, seen = 0.0, 0
        for xb, yb in progress(train_loader, len(train_loader), f"epoch {epoch:2d}"):
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
            history.append(loss.item())
            running += history[-1] * len(yb)
            seen += len(yb)
        test_loss, acc = evaluate()
        print(f"epoch {epoch:2d}  train loss {running / seen:.4f}  test loss {test_loss:.4f}  "
              f"test accuracy {acc:.3f}  lr {scheduler.get_last_lr()[0]:.2e}")

    print(f"held-out accuracy: {acc:.4f} on {n_test} images ({time.perf_counter() - start:.1f} s training)")

    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib not installed: no loss curve saved")
        else:
            fig, ax = plt.subplots(figsize=(6, 3.5))
            ax.plot(history, lw=0.8)
            ax.set(xlabel="step", ylabel="training loss", title=f"digits {args.model}: loss per step")
            fig.tight_layout()
            fig.savefig(args.plot, dpi=120)
            print(f"loss curve saved to {args.plot}")


if __name__ == "__main__":
    main()
