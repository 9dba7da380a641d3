"""``torch.compiler``: ``compile``, ``reset``, ``disable``, ``is_compiling``/``is_dynamo_compiling``,
``list_backends`` (the same functions as ``functorch_lite._dynamo``)."""
from __future__ import annotations

from ._compile import compile  # noqa: F401
from ._dynamo import disable, is_compiling, list_backends, reset  # noqa: F401

is_dynamo_compiling = is_compiling

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling", "list_backends"]
