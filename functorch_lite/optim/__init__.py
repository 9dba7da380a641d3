"""``functorch_lite.optim``: PyTorch's optimizers on optax (design.md §3)."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
