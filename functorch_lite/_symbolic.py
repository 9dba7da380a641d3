"""Python numbers the compiled program takes as inputs: torch.compile's automatic dynamic ints and floats.

torch.compile specializes an int or float argument on the first call; when a later call changes its value it
compiles once more with the argument dynamic (a SymInt, a float traced as a tensor), and that program serves every
later value (``torch._dynamo.config.automatic_dynamic_shapes``; ``compile(dynamic=True)``: dynamic from the first
call, ``dynamic=False``: never). Here the traced function gets a ``SymNumber`` in the argument's place: a Python
number whose value is a traced 0-d array (int64 or float64, Python's precision), so arithmetic on it, and tensor
ops taking it as a scalar operand (``x * step``, ``lr * (1 - i / n)`` against a tensor), are part of the program.

Anything that needs its concrete value -- a branch (``if i % 10 == 0``), ``range(i)``, a shape, ``math.cos(i)``,
``float(i)``, printing it, a hash (a static argument of an op), a division by it -- raises ``Concrete``; the
runner then specializes that argument again (one program per value, as before), so the result is eager's either
way. A SymNumber the function returns, or leaves in a variable, comes back as a Python number of its type.
"""
from __future__ import annotations

import numbers
import operator

import jax.numpy as jnp
from jax import lax


class Concrete(BaseException):
    """A traced Python-number argument was used where its value is needed (the runner specializes it). A
    BaseException, as KeyboardInterrupt is: the function's own ``except Exception:`` (``try: n = int(i) except
    Exception: n = 0``) must not catch it and go on tracing with a wrong value baked in. ``src``: the arguments
    (positions, keyword names) the value came from: only those are specialized again."""

    def __init__(self, msg, src=frozenset()):
        super().__init__(msg)
        self.src = src


_ORDER = {bool: 0, int: 1, float: 2}
_DTYPE = {bool: jnp.bool_, int: jnp.int64, float: jnp.float64}


def _sources(a, b) -> frozenset:
    return a._src | b._src if type(b) is SymNumber else a._src


def _parts(x):
    """(value, Python type) of an operand: a SymNumber, or a Python bool/int/float; None for anything else."""
    t = type(x)
    if t is SymNumber:
        return x._v, x._t
    if t in _ORDER:
        return x, t
    return None


class SymNumber:
    """A Python int/float/bool argument traced as a 0-d array (see the module docstring). ``_t``: its Python type."""
    __slots__ = ("_v", "_t", "_src")

    def __init__(self, v, t, src=frozenset()):
        self._v, self._t, self._src = v, t, src  # (src: the arguments it was computed from)

    @classmethod
    def of(cls, v, t, src=frozenset()):
        return cls(jnp.asarray(v, _DTYPE[t]), t, src)

    # ---- what needs the value --------------------------------------------------------------------------------
    def _need(self, what):
        raise Concrete(f"{what} of a dynamic {self._t.__name__} argument", self._src)

    def __bool__(self):
        self._need("the truth value")

    def __index__(self):
        self._need("an index / size use")

    def __int__(self):
        self._need("int()")

    def __float__(self):
        self._need("float()")

    def __complex__(self):
        self._need("complex()")

    def __hash__(self):
        self._need("a hash")

    def __repr__(self):
        self._need("the text")

    __str__ = __repr__

    def __format__(self, spec):
        self._need("the text")

    def __round__(self, n=None):
        self._need("round()")

    def __trunc__(self):
        self._need("math.trunc()")

    def __floor__(self):
        self._need("math.floor()")

    def __ceil__(self):
        self._need("math.ceil()")

    def __array__(self, *a, **k):
        self._need("a NumPy conversion")

    def __jax_array__(self):
        return self._v

    # ---- arithmetic: Python's result types --------------------------------------------------------------------
    def _bin(self, other, f, kind, reflected=False):
        p = _parts(other)
        if p is None:
            return NotImplemented  # (a tensor: its reflected op takes this as a scalar operand)
        (a, ta), (b, tb) = (self._v, self._t), p
        if reflected:
            a, ta, b, tb = b, tb, a, ta
        wide = max(ta, tb, key=_ORDER.__getitem__)
        if kind == "cmp":
            t, work = bool, wide
        elif kind == "pow":
            # Python: int ** negative int is a float, a negative float ** a fraction complex, 0.0 ** -1 raises;
            # a traced exponent is fine on a constant positive base (``gamma ** step``), a traced base under a
            # constant int exponent >= 0 (``i ** 2``)
            if not ((type(b) is int and b >= 0) or (type(a) in (int, float) and a > 0 and wide is float)):
                self._need("a power")
            t = work = int if wide is bool else wide
        else:
            t = work = int if wide is bool else wide
        a, b = jnp.asarray(a).astype(_DTYPE[work]), jnp.asarray(b).astype(_DTYPE[work])
        if kind == "pow" and work is float:  # (C's pow, as Python: a constant int exponent is integer_pow otherwise)
            return SymNumber(lax.pow(a, lax.optimization_barrier(b)), t, _sources(self, other))
        return SymNumber(f(a, b), t, _sources(self, other))

    def _divide(self, other, f, py, reflected=False):
        """``/``, ``//``, ``%`` by a constant: Python raises ZeroDivisionError at 0 (XLA gives inf or garbage), so
        a traced divisor needs the value; a constant one is checked here, with Python's own message."""
        p = _parts(other)
        if p is None:
            return NotImplemented
        if reflected or type(other) is SymNumber:
            self._need("a division by it")
        if other == 0:
            py(self._t(1), other)  # (Python's ZeroDivisionError, its message for these types)
        t = float if py is operator.truediv else max(self._t, p[1], key=_ORDER.__getitem__)
        t = int if t is bool else t
        # (the divisor behind a barrier: XLA turns a division by a constant into a product with its reciprocal,
        # an ulp off Python's correctly rounded quotient: ``i / 10`` at 3 gave 0.30000000000000004)
        return SymNumber(f(self._v.astype(_DTYPE[t]), lax.optimization_barrier(jnp.asarray(other).astype(_DTYPE[t]))),
                         t, self._src)

    def _unary(self, f):
        t = int if self._t is bool else self._t
        return SymNumber(f(self._v.astype(_DTYPE[t])), t, self._src)

    def __neg__(self):
        return self._unary(jnp.negative)

    def __pos__(self):
        return self._unary(jnp.positive)

    def __abs__(self):
        return self._unary(jnp.abs)


def _operators():
    """SymNumber's binary operators, each with its reflected form: ``_bin`` for + - * ** and the comparisons,
    ``_divide`` for / // %."""
    def make(method, f, how, reflected):
        return lambda self, o: getattr(self, method)(o, f, how, reflected)
    for name, f, how in (("add", jnp.add, "arith"), ("sub", jnp.subtract, "arith"), ("mul", jnp.multiply, "arith"),
                         ("pow", jnp.power, "pow")):
        setattr(SymNumber, f"__{name}__", make("_bin", f, how, False))
        setattr(SymNumber, f"__r{name}__", make("_bin", f, how, True))
    for name, f in (("lt", jnp.less), ("le", jnp.less_equal), ("gt", jnp.greater), ("ge", jnp.greater_equal),
                    ("eq", jnp.equal), ("ne", jnp.not_equal)):
        setattr(SymNumber, f"__{name}__", make("_bin", f, "cmp", False))
    for name, f, py in (("truediv", jnp.true_divide, operator.truediv), ("floordiv", jnp.floor_divide,
                                                                         operator.floordiv), ("mod", jnp.mod, operator.mod)):
        setattr(SymNumber, f"__{name}__", make("_divide", f, py, False))
        setattr(SymNumber, f"__r{name}__", make("_divide", f, py, True))


_operators()
numbers.Number.register(SymNumber)  # (taken as a scalar operand where the facade takes a Python number)
