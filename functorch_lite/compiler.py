"""``torch.compiler``: ``compile``, ``reset``, ``disable``, ``is_compiling``/``is_dynamo_compiling``,
``list_backends``, ``set_stance``, ``allow_in_graph``, ``assume_constant_result``, ``substitute_in_graph`` (the
same functions as ``functorch_lite._dynamo``), ``cudagraph_mark_step_begin``, ``is_exporting``, and ``config``
(torch's ``torch.compiler.config`` knobs with torch's defaults: readable, settable, patchable, no effect here)."""
from __future__ import annotations

from ._compile import _knobs as _knobs_mod
from ._compile.config import make as _make

from ._compile import compile  # noqa: F401
from ._dynamo import (allow_in_graph, assume_constant_result, disable, is_compiling, list_backends,  # noqa: F401
                      reset, set_stance, substitute_in_graph)

config = _make(__name__ + ".config", _knobs_mod.COMPILER, {}, "torch.compiler.config: torch 2.13's knobs (job_id, "
               "cache_key_tag, force_disable_caches, dynamic_sources...); stored and patchable, no effect here.")


def cudagraph_mark_step_begin() -> None:
    """torch's marker between iterations for CUDA graphs (``mode="reduce-overhead"``), whose outputs a later replay
    overwrites; XLA programs here return fresh buffers each call, so there is nothing to mark."""


def is_exporting() -> bool:
    """Whether ``torch.export`` is tracing: never here (``torch.export`` is not part of the facade)."""
    return False

is_dynamo_compiling = is_compiling

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling", "list_backends", "set_stance",
           "allow_in_graph", "assume_constant_result", "substitute_in_graph", "cudagraph_mark_step_begin",
           "is_exporting", "config"]
