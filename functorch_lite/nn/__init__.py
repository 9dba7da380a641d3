"""``functorch_lite.nn``: PyTorch's module API (``torch.nn``)."""
from ..ops import nn_ops as _nn_ops  # noqa: F401  (registers the composite nn ops)
from . import functional  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .parameter import Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, Linear  # noqa: F401
from . import init  # noqa: F401,E402
from . import parallel, common_types  # noqa: F401,E402
from . import _reduction  # noqa: F401,E402  (torch.nn._reduction)
from importlib import import_module as _import_module  # noqa: E402

# torch.nn.utils and torch.nn.attention by their dotted names: the star import above binds ``utils`` and ``attention``
# to nn.modules' own submodules of those names (modules/utils.py's _pair, modules/attention.py's MultiheadAttention)
utils = _import_module(f"{__name__}.utils")
attention = _import_module(f"{__name__}.attention")
from .parallel import DataParallel  # noqa: F401,E402
