"""``torch.cuda.CUDAGraph`` / ``graph`` / ``graph_pool_handle`` / ``is_current_stream_capturing``.

JAX has no CUDA-graph capture API of its own to hand a script (XLA builds and replays its GPU programs itself; wrap the
step in ``torch.compile`` for the same effect), so nothing is ever being captured: ``is_current_stream_capturing()``
is False on a GPU. Capturing raises a clear error there. Without a GPU each raises torch's CPU-build error."""
from __future__ import annotations

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"]

_WHY = ("CUDA graph capture is not supported by functorch_lite (JAX exposes no capture API); "
        "torch.compile the step instead: XLA compiles it into one program")


def _dummy(name):
    from . import is_available
    if not is_available():
        raise RuntimeError(f"Tried to instantiate dummy base class {name}")


def is_current_stream_capturing() -> bool:
    _dummy("_cuda_isCurrentStreamCapturing")
    return False


class CUDAGraph:
    def __new__(cls, *args, **kwargs):
        _dummy("CUDAGraph")
        raise RuntimeError(_WHY)


def graph_pool_handle():
    _dummy("_graph_pool_handle")
    raise RuntimeError(_WHY)


class graph:
    """``with torch.cuda.graph(g):``. Never reached with a working ``CUDAGraph``; raises as torch's CPU build
    (``torch.cuda.Stream requires CUDA support``) or the capture error on a GPU."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode: str = "global", **kwargs):
        from . import is_available
        if not is_available():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        raise RuntimeError(_WHY)


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    _dummy("CUDAGraph")
    raise RuntimeError(_WHY)
