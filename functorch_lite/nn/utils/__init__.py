"""``torch.nn.utils``."""
from .clip_grad import *  # noqa: F401,F403
from .convert_parameters import *  # noqa: F401,F403
from . import rnn  # noqa: F401
from . import parametrize, parametrizations, stateless  # noqa: F401,E402
from . import prune  # noqa: F401
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: F401
from .init import skip_init  # noqa: F401
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
