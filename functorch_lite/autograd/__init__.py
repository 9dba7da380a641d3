"""``functorch_lite.autograd``: backward, grad, grad modes, graph nodes, Function, gradcheck."""
from .engine import backward  # noqa: F401
from ._saved_hooks import grad  # noqa: F401  (engine.grad, also taking GradientEdges)
from .grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled,
    set_multithreading_enabled,
)
from .graph import Node  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .gradcheck import gradcheck, GradcheckError  # noqa: F401
from . import graph  # noqa: F401
from . import functional  # noqa: F401
from . import forward_ad, anomaly_mode  # noqa: F401
from . import profiler  # noqa: F401  (torch.autograd.profiler)
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .gradcheck import gradgradcheck  # noqa: F401
from .variable import Variable  # noqa: F401
