"""``torch.nn.modules.utils``: the argument helpers custom layers import (``_pair``, ``_triple``, ...) and
``consume_prefix_in_state_dict_if_present``, as PyTorch defines them; the facade's conv and pooling modules use
them too."""
from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A parser: an iterable as a tuple, anything else repeated ``n`` times."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``t`` reversed, each element ``n`` times (a conv/pool padding as ``F.pad`` takes it)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys (and the ``_metadata`` keys) of ``state_dict`` in place: a DataParallel/DDP
    checkpoint's "module." for a plain model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    if hasattr(state_dict, "_metadata"):
        for key in list(state_dict._metadata.keys()):
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                state_dict._metadata[key[len(prefix):]] = state_dict._metadata.pop(key)
