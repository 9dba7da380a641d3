"""``torch.func.rearrange``: einops-style reordering of a tensor's axes (transpose, reshape, squeeze, unsqueeze,
stack) from a pattern such as ``"b (h h1) (w w1) c -> b h w (c h1 w1)"``, as one reshape, one permute and one
reshape of the facade's own ops (so it differentiates and compiles as they do).

>>> rearrange(images, "b h w c -> b c h w")
"""
from __future__ import annotations

import math

_ELL = "\u2026"  # "..." in a parsed expression


class _Side:
    """One side of a pattern: ``items``, each the ellipsis or a group (a list of names, ``"1"`` for a unit axis)
    with whether it was bracketed."""

    def __init__(self, text: str):
        if "." in text.replace("...", ""):
            raise ValueError("Expression may contain dots only inside ellipsis (...)")
        if text.count("...") > 1:
            raise ValueError("Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor ")
        self.items: list = []
        self.names: set = set()
        self.ellipsis = self.ellipsis_grouped = False
        group, word = None, ""
        for ch in text.replace("...", _ELL) + " ":
            if ch.isalnum() or ch in "_" + _ELL:
                word += ch
                continue
            if word:
                self._add(word, group)
                word = ""
            if ch == "(":
                if group is not None:
                    raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
                group = []
            elif ch == ")":
                if group is None:
                    raise ValueError("Brackets are not balanced")
                self.items.append((group, True))
                group = None
            elif not ch.isspace():
                raise ValueError(f"Unknown character '{ch}'")
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{text}'")

    def _add(self, word: str, group) -> None:
        if word == _ELL:
            self.ellipsis = True
            self.ellipsis_grouped = group is not None
        elif word.isdecimal():
            if int(word) != 1:
                raise ValueError("rearrange only supports unnamed axes of size 1")
            word = "1"
        else:
            if not word.isidentifier() or word[0] == "_" or word[-1] == "_":
                raise ValueError(f"Invalid axis identifier: {word}\nnot a valid python identifier, nor starts or "
                                 "ends with an underscore")
            if word in self.names:
                raise ValueError(f"Indexing expression contains duplicate dimension '{word}'")
            self.names.add(word)
        if group is not None:
            group.append(word)
        else:
            self.items.append(([word], False))

    def flat(self, ell: list) -> list:
        """The elementary axes in order: names, the ellipsis' axes (``ell``), unit axes as ``"1"``."""
        return [a for g, _ in self.items for w in g for a in (ell if w == _ELL else [w])]


class DimensionBindError(Exception):
    """A pattern's axis lengths that do not fit the tensor's (torch: ``functorch.dim.DimensionBindError``)."""


def rearrange(tensor, pattern: str, **axes_lengths: int):
    """``torch.func.rearrange(tensor, pattern, **axes_lengths)`` (a list or tuple of tensors is stacked first).

    >>> rearrange(x, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=2)
    """
    from .._tensor.tensor import Tensor
    if not isinstance(tensor, Tensor):
        import functorch_lite
        tensor = functorch_lite.stack(list(tensor))
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    if "..." in axes_lengths:
        raise ValueError(f"'{_ELL}' is not an allowed axis identifier")
    lt, rt = pattern.split("->")
    left, right = _Side(lt), _Side(rt)
    if not left.ellipsis and right.ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.ellipsis and left.ellipsis_grouped:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for v in axes_lengths.values():
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(v)}")
    diff = left.names ^ right.names
    if left.ellipsis != right.ellipsis:
        diff.add(_ELL)
    if diff:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {diff}")
    unmatched = set(axes_lengths) - left.names
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    shape = tuple(tensor.shape)
    n = len(left.items)
    if left.ellipsis:
        n_ell = len(shape) - (n - 1)
        if n_ell < 0:
            raise ValueError(f"Number of dimensions in pattern ({n - 1}) must be less than or equal to the number of "
                             f"dimensions in the tensor ({len(shape)})")
    elif n != len(shape):
        raise ValueError(f"Number of dimensions in pattern ({n}) must be equal to the number of dimensions in the "
                         f"tensor ({len(shape)})")
    else:
        n_ell = 0
    ell = [f"{_ELL}{i}" for i in range(n_ell)]
    sizes = dict(axes_lengths)
    dim = 0
    for group, _ in left.items:
        if group == [_ELL]:
            sizes.update(zip(ell, shape[dim:dim + n_ell]))
            dim += n_ell
            continue
        size = shape[dim]
        dim += 1
        unknown = [w for w in group if w != "1" and w not in sizes]
        known = math.prod(sizes[w] for w in group if w != "1" and w in sizes)
        if len(unknown) > 1:
            raise DimensionBindError(f"cannot infer the sizes of two dimensions at once {unknown[0]} and {unknown[1]}")
        if unknown:
            if size % known:  # (a length 0: ZeroDivisionError, as torch's)
                parts = tuple("?" if w in unknown else sizes[w] for w in group if w != "1")
                raise DimensionBindError(f"inferred dimension does not evenly fit into larger dimension: {size} vs "
                                         f"{parts!r}")
            sizes[unknown[0]] = size // known
        elif known != size:
            raise DimensionBindError(f"Dimension sizes to do not match ({size} != {known}) when matching dimension "
                                     f"pack ({', '.join(w for w in group if w != '1')})")
    src = [a for a in left.flat(ell) if a != "1"]
    dst = [a for a in right.flat(ell) if a != "1"]
    out = tensor.reshape(tuple(sizes[a] for a in src))
    perm = tuple(src.index(a) for a in dst)
    if perm != tuple(range(len(perm))):
        out = out.permute(perm)
    final = []
    for group, bracketed in right.items:
        if group == [_ELL] and not bracketed:
            final.extend(sizes[a] for a in ell)
        else:
            final.append(math.prod(sizes[a] for w in group for a in (ell if w == _ELL else [w]) if a != "1"))
    return out.reshape(tuple(final))
