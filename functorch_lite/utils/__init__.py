"""``torch.utils``."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401,E402
from . import memory  # noqa: F401,E402
from . import dlpack  # noqa: F401,E402
from . import hooks  # noqa: F401,E402
from . import model_zoo  # noqa: F401,E402
from ._swap import swap_tensors  # noqa: F401,E402
