"""The seed tutorial's ``pytorch_autograd_loop.py``, unchanged but for the import line.

Trains y = 3*x1 - 2*x2 + 5 with a hand-written SGD loop: leaf tensors with requires_grad,
loss.backward(), updates inside no_grad, grad.zero_(). Run under real PyTorch by replacing the
import with ``import torch``.
"""
import functorch_lite as torch

# 1. Hardware-Agnostic Device Setup (CUDA GPU -> Apple MPS -> CPU)
device = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
torch.manual_seed(42)

# 2. Create Synthetic Dataset on Device: True Formula y = 3x1 - 2x2 + 5
X = torch.randn(64, 2, device=device)
trueW = torch.tensor([[3.0], [-2.0]], device=device)
trueB = torch.tensor([5.0], device=device)
Y = X @ trueW + trueB

# 3. Initialize Learnable Leaf Tensors with requires_grad=True
W = torch.randn(2, 1, device=device, requires_grad=True)
b = torch.zeros(1, device=device, requires_grad=True)
lr = 0.1

# 4. Training Loop Powered by PyTorch Autograd
for epoch in range(1, 61):
    # Forward Pass (Builds dynamic computational graph automatically)
    yPred = X @ W + b
    loss = torch.mean((yPred - Y) ** 2)

    # Backward Pass (Computes dL/dW and dL/db via Reverse-Mode Autodiff)
    loss.backward()

    # Update Weights inside torch.no_grad() and Reset Gradients to Zero!
    with torch.no_grad():
        W -= lr * W.grad
        b -= lr * b.grad
        W.grad.zero_()
        b.grad.zero_()

print("Learned W:", W.detach().cpu().numpy().round(3).flatten())  # [3.0, -2.0]
print("Learned b:", round(float(b.item()), 3))                    # 5.0
