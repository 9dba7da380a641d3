"""``functorch_lite.autograd``: backward, grad, grad modes, graph nodes, Function, gradcheck."""
from .engine import backward  # noqa: F401
from ._saved_hooks import grad  # noqa: F401  (engine.grad, also taking GradientEdges)
from .grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled,
    set_multithreading_enabled, _is_multithreading_enabled as is_multithreading_enabled,
)
from .graph import Node  # noqa: F401
from .function import Function, FunctionCtx, NestedIOFunction, once_differentiable  # noqa: F401
from .gradcheck import gradcheck, GradcheckError  # noqa: F401
from . import graph  # noqa: F401
from . import functional  # noqa: F401
from . import forward_ad, anomaly_mode  # noqa: F401
from . import profiler  # noqa: F401  (torch.autograd.profiler)
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .gradcheck import gradgradcheck  # noqa: F401
from .variable import Variable  # noqa: F401


def is_view_replay_enabled() -> bool:
    """torch's flag for regenerating a view's grad_fn from its view chain rather than as_strided: always False here
    (torch's default; nothing here turns it on)."""
    return False


def is_tensor_like(inp) -> bool:
    """``torch.overrides.is_tensor_like``: a tensor, or an object with ``__torch_function__``."""
    from .._tensor.tensor import Tensor
    return isinstance(inp, Tensor) or hasattr(inp, "__torch_function__")
