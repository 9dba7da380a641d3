"""``torch.nn.utils``."""
from .clip_grad import *  # noqa: F401,F403
from .convert_parameters import *  # noqa: F401,F403
from . import rnn  # noqa: F401
