"""Guard values of what a compiled program bakes in (state.Discovery): Python scalars, NumPy values, and what the
walked code reads and calls by name (which attributes' scalars are guards)."""
from __future__ import annotations

import decimal
import dis
import enum
import fractions
import types

import numpy as np


# Python scalars and other immutable values (an Enum member, a range, a Fraction, bytes): guarded by value
# wherever a program reads them (``x * mode.value``, ``len(r)``)
SCALARS = (bool, int, float, complex, str, bytes, range, fractions.Fraction, decimal.Decimal, enum.Enum)


def scalar_guard(v) -> tuple:
    """A Python scalar as a guard value: its type and repr (1, 1.0 and True differ; nan equals nan); an Enum
    member itself (two classes' members may print alike)."""
    if isinstance(v, enum.Enum):
        return ("enum", v)
    if type(v) in (str, bytes) and len(v) > 64:
        return (type(v).__name__, len(v), hash(v))
    return (type(v).__name__, repr(v))


_NUMPY_CHECKED = 1 << 20  # a closure's / global's NumPy array: contents re-checked on each call up to 1 MB


def numpy_guard(v) -> tuple:
    """A NumPy array or scalar as a guard value: dtype, shape and a hash of its bytes (an object array: its
    identity)."""
    if isinstance(v, np.generic):
        return ("np", str(v.dtype), repr(v.item()))
    if v.dtype.hasobject:
        return ("ndarray", "object", v.shape, id(v))
    return ("ndarray", str(v.dtype), v.shape, hash(v.tobytes()))


_NONE = (frozenset(), frozenset())
ANY_ATTR = "<getattr>"  # among a code's reads where it calls ``getattr``: every attribute of an object it reaches
_READS: dict = {}


def _code_names(code) -> tuple:
    """(reads, calls) of ``code`` and the code nested in it: the attribute names it loads as values, with its
    string constants (``getattr(obj, "name")``) and ANY_ATTR if it calls ``getattr``; the method names it calls
    (``obj.name(...)``)."""
    if code is None:
        return _NONE
    hit = _READS.get(code)
    if hit is None:
        reads, calls = set(), set()
        for ins in dis.get_instructions(code):
            if ins.opname == "LOAD_METHOD" or (ins.opname == "LOAD_ATTR" and str(ins.argrepr).startswith("NULL|")):
                calls.add(ins.argval)
            elif ins.opname == "LOAD_ATTR":
                reads.add(ins.argval)
            elif ins.argval == "getattr" and ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                reads.add(ANY_ATTR)  # (``getattr(o, f"w{i}")``: any attribute)
        for c in code.co_consts:
            if isinstance(c, str):
                reads.add(c)
            elif isinstance(c, types.CodeType):
                r, k = _code_names(c)
                reads |= r
                calls |= k
        hit = _READS[code] = (frozenset(reads), frozenset(calls))
    return hit


_METHODS: dict = {}


def _class_methods(cls) -> dict:
    """{name: (reads, calls)} of the methods and properties ``cls`` defines or inherits (not ``object``'s)."""
    hit = _METHODS.get(cls)
    if hit is None:
        hit = {}
        for k in reversed(cls.__mro__[:-1]):
            for n, v in vars(k).items():
                if isinstance(v, (staticmethod, classmethod)):
                    v = v.__func__
                elif isinstance(v, property):
                    v = v.fget
                code = getattr(v, "__code__", None)
                if isinstance(code, types.CodeType):
                    hit[n] = _code_names(code)
                else:
                    hit.pop(n, None)  # a subclass's data attribute hides a base's method
        _METHODS[cls] = hit
    return hit
