"""``torch.torch_version``: ``TorchVersion``, the ``str`` that ``torch.__version__`` is, which also compares as a
version (PEP 440 order) against version strings, tuples of ints (``(2, 1)`` is ``"2.1"``) and version objects, as
PyTorch's: ``torch.__version__ >= "2.0"``, ``torch.__version__ >= (2, 1)``. A value that is not a valid version is
compared as a plain ``str`` compares it. (PyTorch compares with a vendored ``packaging``; the PEP 440 order is
written out here, so the library needs no ``packaging``.)"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .version import __version__ as internal_version

__all__ = ["TorchVersion"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


_PATTERN = re.compile(r"""
    ^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""", re.VERBOSE | re.IGNORECASE)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "pre": 2, "preview": 2, "rc": 2}


class Version:
    """A parsed PEP 440 version, ordered as ``packaging.version.Version``: epoch, release (trailing zeros
    dropped), then dev < pre < final < post, and a local label (``+cpu``) after the same public version."""

    __slots__ = ("_text", "_key")

    def __init__(self, text: str) -> None:
        m = _PATTERN.match(text)
        if m is None:
            raise InvalidVersion(f"Invalid version: {text!r}")
        release = [int(p) for p in m["release"].split(".")]
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        post = m["post_n1"] or m["post_n2"] or ("0" if m["post"] else None)
        if m["pre"]:
            pre = (1, _PRE[m["pre_l"].lower()], int(m["pre_n"] or 0))
        else:
            pre = (-1,) if m["dev"] and post is None else (2,)  # a bare .devN sorts before the pre-releases
        local = () if m["local"] is None else (1,) + tuple(
            (1, int(p), "") if p.isdigit() else (0, 0, p.lower()) for p in re.split(r"[-_.]", m["local"]))
        self._text = text
        self._key = (int(m["epoch"] or 0), tuple(release), pre, (-1,) if post is None else (0, int(post)),
                     (1,) if not m["dev"] else (0, int(m["dev_n"] or 0)), local)

    def __repr__(self) -> str:
        return f"<Version({self._text!r})>"

    def __hash__(self) -> int:
        return hash(self._key)

    def _cmp(self, other, op):
        if not isinstance(other, Version):
            return NotImplemented
        return op(self._key, other._key)

    def __lt__(self, other): return self._cmp(other, tuple.__lt__)  # noqa: E704
    def __le__(self, other): return self._cmp(other, tuple.__le__)  # noqa: E704
    def __eq__(self, other): return self._cmp(other, tuple.__eq__)  # noqa: E704
    def __ne__(self, other): return self._cmp(other, tuple.__ne__)  # noqa: E704
    def __gt__(self, other): return self._cmp(other, tuple.__gt__)  # noqa: E704
    def __ge__(self, other): return self._cmp(other, tuple.__ge__)  # noqa: E704


class TorchVersion(str):
    """A ``str`` that compares (``<``, ``<=``, ``==``, ``>=``, ``>``) as a version against a ``Version``, a version
    string or an iterable of release numbers; ``!=`` and hashing stay ``str``'s, as PyTorch's."""

    __slots__ = ()

    def _convert_to_version(self, inp: Any) -> Version:
        if isinstance(inp, Version):
            return inp
        if isinstance(inp, str):
            return Version(inp)
        if isinstance(inp, Iterable):
            return Version(".".join(str(item) for item in inp))
        raise InvalidVersion(inp)

    def _cmp_wrapper(self, cmp: Any, method: str) -> bool:
        try:
            return getattr(Version(self), method)(self._convert_to_version(cmp))
        except InvalidVersion:
            return getattr(super(), method)(cmp)  # (not a version, e.g. 'parrot': str's comparison)


for _method in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__"):  # (set after the class: str's __hash__ stays)
    setattr(TorchVersion, _method, lambda x, y, method=_method: x._cmp_wrapper(y, method))
del _method

__version__ = TorchVersion(internal_version)
