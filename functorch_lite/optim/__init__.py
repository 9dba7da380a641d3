"""``functorch_lite.optim``: PyTorch's optimizers on optax (design.md §3) and ``lr_scheduler``."""
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

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler",
           "RAdam", "NAdam", "Adamax", "Adadelta", "ASGD", "LBFGS"]
