"""nn modules."""
from .module import Module, _IncompatibleKeys, RemovableHandle  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList  # noqa: F401
from .layers import (  # noqa: F401
    Identity, Linear, ReLU, Tanh, Sigmoid, SiLU, GELU, Softmax, LogSoftmax, Flatten, Dropout,
    MSELoss, NLLLoss, CrossEntropyLoss,
)
