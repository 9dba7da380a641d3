"""``functorch_lite.optim``: PyTorch's optimizers on optax (design.md §3), ``lr_scheduler`` and ``swa_utils``."""
import importlib

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .adadelta import Adadelta
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .radam import RAdam
from .rprop import Rprop
from .adafactor import Adafactor
from .sparse_adam import SparseAdam
from .muon import Muon

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler", "swa_utils",
           "RAdam", "NAdam", "Adamax", "Adadelta", "ASGD", "LBFGS", "Rprop", "Adafactor", "SparseAdam", "Muon"]


def __getattr__(name):
    """``swa_utils`` loads on first access: it needs ``nn`` (AveragedModel is a Module), and ``optim`` is
    imported while the package is still initialising (amp's GradScaler imports the optimizer base)."""
    if name == "swa_utils":
        return importlib.import_module(f"{__name__}.swa_utils")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
