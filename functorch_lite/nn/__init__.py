"""``functorch_lite.nn``: PyTorch's module API (``torch.nn``)."""
from ..ops import nn_ops as _nn_ops  # noqa: F401  (registers the composite nn ops)
from . import functional  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .parameter import Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, Linear  # noqa: F401
from . import init, utils  # noqa: F401,E402
from . import parallel, common_types  # noqa: F401,E402
# torch.nn.attention (sdpa_kernel); imported by its dotted name, as the star import above has bound ``attention`` to
# the modules' attention.py
from .attention import SDPBackend as _SDPBackend  # noqa: F401,E402
from .parallel import DataParallel  # noqa: F401,E402
