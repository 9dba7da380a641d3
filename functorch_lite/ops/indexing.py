"""Indexing: ``__getitem__`` / ``__setitem__`` (basic indexing as views; advanced as gathers)."""
from __future__ import annotations

METHODS = {}
FUNCTIONS = {}
