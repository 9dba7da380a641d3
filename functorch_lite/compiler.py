"""``torch.compiler``: ``compile``, ``reset``, ``disable``, ``is_compiling``/``is_dynamo_compiling``,
``list_backends``, ``set_stance``, ``allow_in_graph``, ``assume_constant_result`` (the same functions as
``functorch_lite._dynamo``), ``cudagraph_mark_step_begin``, ``is_exporting``."""
from __future__ import annotations

from ._compile import compile  # noqa: F401
from ._dynamo import (allow_in_graph, assume_constant_result, disable, is_compiling, list_backends,  # noqa: F401
                      reset, set_stance)


def cudagraph_mark_step_begin() -> None:
    """torch's marker between iterations for CUDA graphs (``mode="reduce-overhead"``), whose outputs a later replay
    overwrites; XLA programs here return fresh buffers each call, so there is nothing to mark."""


def is_exporting() -> bool:
    """Whether ``torch.export`` is tracing: never here (``torch.export`` is not part of the facade)."""
    return False

is_dynamo_compiling = is_compiling

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling", "list_backends", "set_stance",
           "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "is_exporting"]
