"""nn modules."""
from .module import Module, _IncompatibleKeys, RemovableHandle  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList  # noqa: F401
from .container import ParameterDict  # noqa: F401
from .layers import (  # noqa: F401
    Identity, Linear, ReLU, Tanh, Sigmoid, SiLU, GELU, Softmax, LogSoftmax, Flatten, Dropout,
    MSELoss, NLLLoss, NLLLoss2d, CrossEntropyLoss,
)
from .layers import Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout  # noqa: F401
from .conv import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .extra import *  # noqa: F401,F403,E402  (PixelShuffle, InstanceNorm*, the margin losses, ...)
from .pool_more import *  # noqa: F401,F403,E402  (AdaptiveMaxPool3d, MaxUnpool*, RReLU, Softmax2d, ChannelShuffle)
from .lazy import *  # noqa: F401,F403,E402  (LazyLinear, LazyConv*, LazyBatchNorm*, LazyInstanceNorm*)
from .sampling import *  # noqa: F401,F403,E402  (EmbeddingBag, CTCLoss)
from .adaptive import *  # noqa: F401,F403,E402  (AdaptiveLogSoftmaxWithLoss)

from . import _torch_layout  # noqa: E402

_torch_layout.install(__import__("sys").modules[__name__])  # (torch's submodule paths: _torch_layout.py)
