"""Python numbers the compiled program takes as inputs: torch.compile's automatic dynamic ints and floats.

torch.compile specializes an int or float argument on the first call; when a later call changes its value it
compiles once more with the argument dynamic (a SymInt, a float traced as a tensor), and that program serves every
later value (``torch._dynamo.config.automatic_dynamic_shapes``; ``compile(dynamic=True)``: dynamic from the first
call, ``dynamic=False``: never). Here the traced function gets a ``SymNumber`` in the argument's place: a Python
number whose value is a traced 0-d array (int64 or float64, Python's precision), so arithmetic on it, and tensor
ops taking it as a scalar operand (``x * step``, ``lr * (1 - i / n)`` against a tensor), are part of the program.

A float one as an op's static argument (``add_(p, alpha=1 - decay)``, ``leaky_relu(x, slope)``) is an input of the
op's kernel (``ops._dispatch._dynamic_key``), and ``math.cos(i)`` and its kin are computed in the program
(``math_on``). Anything else that needs its concrete value -- a branch (``if i % 10 == 0``), ``range(i)``, a shape,
``float(i)``, printing it, a hash (an int static argument of an op), a division by it -- raises ``Concrete``; the
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


# While a compiled function is traced with dynamic arguments: (their values this call {position: value}, the log
# of the branches taken [(expression, outcome)]). A truth value asked for then is the branch this call takes,
# computed in Python from the expression (``_eval``), and the program is kept for the calls whose values take the
# same branches (the runner adds the outcomes to its key): torch's guards on a SymBool (``if step % k == 0``).
GUARD: list = [None]

_ORDER = {bool: 0, int: 1, float: 2}
_DTYPE = {bool: jnp.bool_, int: jnp.int64, float: jnp.float64}


def _sources(a, b) -> frozenset:
    return a._src | b._src if type(b) is SymNumber else a._src


def _const(x):
    """A constant as an expression leaf: its type and repr (hashable and equal to itself for nan too)."""
    return ("c", type(x).__name__, repr(x))


_FROM = {"int": int, "float": float, "bool": lambda r: r == "True"}


def _expr(a, b, name, reflected=False):
    """The expression of ``a <name> b`` (``a`` a SymNumber, ``b`` one or a Python number), None where ``a``'s is
    unknown."""
    ea = a._e
    eb = b._e if type(b) is SymNumber else _const(b)
    if ea is None or eb is None:
        return None
    return ("o", name, eb, ea) if reflected else ("o", name, ea, eb)


def _eval(e, env):
    """An expression's value in Python, the arguments' values ``env`` {position: value} in its leaves."""
    k = e[0]
    if k == "a":
        return env[e[1]]
    if k == "c":
        return _FROM[e[1]](e[2])
    if k == "u":
        return getattr(operator, e[1])(_eval(e[2], env))
    if k == "m":  # (a math function: math_on's, which gives a Python float to the real one)
        import math
        return getattr(math, e[1])(_eval(e[2], env))
    return getattr(operator, e[1])(_eval(e[2], env), _eval(e[3], env))


def _parts(x):
    """(value, Python type) of an operand: a SymNumber, or a Python bool/int/float; None for anything else."""
    t = type(x)
    if t is SymNumber:
        return x._v, x._t
    if t in _ORDER:
        return x, t
    return None


# a source of a SymNumber that is a tensor's value read by ``.item()`` inside a compiled function (``item``)
ITEM = "<a tensor's .item()>"


def item(array, t) -> "SymNumber":
    """``t.item()`` while a compiled function is traced: the value as a traced Python number of type ``t``, which
    arithmetic, a result (``return loss.item()``), a list append or a rebinding carry through the program (a Python
    number after each call); a use that needs its value (a branch, ``float()``, formatting) is a graph break."""
    return SymNumber(jnp.reshape(array, ()).astype(_DTYPE[t]), t, frozenset((ITEM,)))


class SymNumber:
    """A Python int/float/bool argument traced as a 0-d array (see the module docstring). ``_t``: its Python type."""
    __slots__ = ("_v", "_t", "_src", "_e")

    def __init__(self, v, t, src=frozenset(), e=None):
        # src: the arguments it was computed from; e: how, as an expression of them (``_eval``)
        self._v, self._t, self._src, self._e = v, t, src, e

    @classmethod
    def of(cls, v, t, src=frozenset(), e=None):
        return cls(jnp.asarray(v, _DTYPE[t]), t, src, e)

    # ---- what needs the value --------------------------------------------------------------------------------
    def _need(self, what):
        if ITEM in self._src:  # (a tensor's value: no argument to specialize, a graph break as any host read)
            from .ops._dispatch import data_dependent_error
            raise data_dependent_error("reading tensor values", self._v)
        raise Concrete(f"{what} of a dynamic {self._t.__name__} argument", self._src)

    def __bool__(self):
        g = GUARD[0]
        if g is not None and self._e is not None:  # (a branch: this call's, kept as a guard of the program)
            try:
                out = bool(_eval(self._e, g[0]))
            except Exception:  # noqa: BLE001  (Python raises on these values: no branch to take)
                self._need("the truth value")
            g[1].append((self._e, out))
            return out
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
    def _bin(self, other, f, kind, reflected=False, name=None):
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
        e = _expr(self, other, name, reflected)
        if kind == "pow" and work is float:  # (C's pow, as Python: a constant int exponent is integer_pow otherwise)
            return SymNumber(lax.pow(a, lax.optimization_barrier(b)), t, _sources(self, other), e)
        return SymNumber(f(a, b), t, _sources(self, other), e)

    def _divide(self, other, f, py, reflected=False, name=None):
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
                         t, self._src, _expr(self, other, name))

    def _unary(self, f, name):
        t = int if self._t is bool else self._t
        return SymNumber(f(self._v.astype(_DTYPE[t])), t, self._src, None if self._e is None else ("u", name, self._e))

    def __neg__(self):
        return self._unary(jnp.negative, "neg")

    def __pos__(self):
        return self._unary(jnp.positive, "pos")

    def __abs__(self):
        return self._unary(jnp.abs, "abs")


def _operators():
    """SymNumber's binary operators, each with its reflected form: ``_bin`` for + - * ** and the comparisons,
    ``_divide`` for / // %."""
    def make(method, f, how, reflected, name):
        return lambda self, o: getattr(self, method)(o, f, how, reflected, name)
    for name, f, how in (("add", jnp.add, "arith"), ("sub", jnp.subtract, "arith"), ("mul", jnp.multiply, "arith"),
                         ("pow", jnp.power, "pow")):
        setattr(SymNumber, f"__{name}__", make("_bin", f, how, False, name))
        setattr(SymNumber, f"__r{name}__", make("_bin", f, how, True, name))
    for name, f in (("lt", jnp.less), ("le", jnp.less_equal), ("gt", jnp.greater), ("ge", jnp.greater_equal),
                    ("eq", jnp.equal), ("ne", jnp.not_equal)):
        setattr(SymNumber, f"__{name}__", make("_bin", f, "cmp", False, name))
    for name, f, py in (("truediv", jnp.true_divide, operator.truediv), ("floordiv", jnp.floor_divide,
                                                                         operator.floordiv), ("mod", jnp.mod, operator.mod)):
        setattr(SymNumber, f"__{name}__", make("_divide", f, py, False, name))
        setattr(SymNumber, f"__r{name}__", make("_divide", f, py, True, name))


_operators()
numbers.Number.register(SymNumber)  # (taken as a scalar operand where the facade takes a Python number)


# ---- torch.SymInt / SymFloat / SymBool and the sym_* helpers ---------------------------------------------------
class _SymMeta(type):
    def __instancecheck__(cls, obj):
        return type(obj) is SymNumber and obj._t is cls._t


class SymInt(metaclass=_SymMeta):
    """``torch.SymInt``: what a dynamic int argument is while a compiled function is traced (a ``SymNumber`` of type
    int); ``isinstance(n, torch.SymInt)`` is False for a plain int, as torch's."""
    _t = int


class SymFloat(metaclass=_SymMeta):
    """``torch.SymFloat``: a dynamic float argument while traced."""
    _t = float


class SymBool(metaclass=_SymMeta):
    """``torch.SymBool``: a comparison of dynamic arguments while traced."""
    _t = bool


def _number_types():
    import numpy as np
    return (np.integer, np.floating, int, float), (np.floating, float)


def sym_int(a):
    """``torch.sym_int``: ``int(a)``; a dynamic float is truncated in the program (a dynamic bool needs its value)."""
    if type(a) is SymNumber and a._t is not bool:
        return a if a._t is int else SymNumber(jnp.trunc(a._v).astype(jnp.int64), int, a._src)
    return int(a)


def sym_float(a):
    """``torch.sym_float``: ``float(a)``; a dynamic int becomes a dynamic float."""
    if type(a) is SymNumber:
        return a if a._t is float else SymNumber(a._v.astype(jnp.float64), float, a._src)
    return float(a)


def _sym_extreme(a, b, f, py):
    if type(a) is SymNumber or type(b) is SymNumber:
        (va, ta), (vb, tb) = _parts(a) or (None, None), _parts(b) or (None, None)
        if va is None or vb is None:
            all_types, _ = _number_types()
            raise AssertionError(f"expected {all_types}, got {type(b if va is not None else a)}")
        t = float if float in (ta, tb) else int
        return SymNumber(f(jnp.asarray(va).astype(_DTYPE[t]), jnp.asarray(vb).astype(_DTYPE[t])), t,
                         (a._src if type(a) is SymNumber else frozenset()) | (b._src if type(b) is SymNumber
                                                                               else frozenset()))
    all_types, float_types = _number_types()
    for x in (a, b):
        if not isinstance(x, all_types):
            raise AssertionError(f"expected {all_types}, got {type(x)}")
    if isinstance(a, float_types) or isinstance(b, float_types):
        return float(py(a, b))
    return py(a, b)


def sym_max(a, b):
    """``torch.sym_max``: max of two ints/floats without a branch; a float result if either is a float."""
    return _sym_extreme(a, b, jnp.maximum, max)


def sym_min(a, b):
    """``torch.sym_min``: min of two ints/floats without a branch; a float result if either is a float."""
    return _sym_extreme(a, b, jnp.minimum, min)


def sym_not(a):
    """``torch.sym_not``: ``not a``, without a branch on a dynamic bool."""
    if type(a) is SymNumber:
        return SymNumber(jnp.logical_not(a._v), bool, a._src)
    return not a


def sym_sqrt(a):
    """``torch.sym_sqrt``: ``math.sqrt(a)``, in the program for a dynamic number."""
    if type(a) is SymNumber:
        return SymNumber(jnp.sqrt(a._v.astype(jnp.float64)), float, a._src)
    import math
    return math.sqrt(a)


def sym_sum(*args):
    """``torch.sym_sum``: the sum of ``sym_sum([a, b, c])`` or ``sym_sum(a, b, c)``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return sum(args)


def sym_ite(b, t, f):
    """``torch.sym_ite``: ``t if b else f`` (a dynamic bool is a branch: the program is kept for the calls that take
    the same one)."""
    if not (type(b) is bool or isinstance(b, SymBool)):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


# ---- math.* on a dynamic number ----------------------------------------------------------------------------------
# ``math.cos(math.pi * step / total)`` in a compiled step: torch's tracer computes it in the graph (a SymFloat), so a
# cosine schedule inside the step makes 2 graphs. Here, while a function with dynamic arguments is traced, these
# ``math`` functions take a SymNumber and give one (a float, computed in the program in float64); any other argument
# goes to the real function. Where Python raises for some values (sqrt and log of negatives, exp's overflow), the
# domain is a branch (``GUARD``): a value outside it needs the constant, and the real function raises as eagerly.
# (``from math import cos`` bound before the trace is the real one: the argument is specialized, as before.)
_INF = float("inf")
_MATH = {  # name: (jnp function, the open/closed domain (lo, lo_ok, hi, hi_ok) where Python gives a value)
    "cos": (jnp.cos, None), "sin": (jnp.sin, None), "tan": (jnp.tan, None), "atan": (jnp.arctan, None),
    "tanh": (jnp.tanh, None), "erf": (lax.erf, None), "erfc": (lax.erfc, None), "fabs": (jnp.abs, None),
    "sinh": (jnp.sinh, (-710.0, False, 710.0, False)), "cosh": (jnp.cosh, (-710.0, False, 710.0, False)),
    "exp": (jnp.exp, (-_INF, False, 709.0, True)), "expm1": (jnp.expm1, (-_INF, False, 709.0, True)),
    "sqrt": (jnp.sqrt, (0.0, True, _INF, False)), "log": (jnp.log, (0.0, False, _INF, False)),
    "log2": (jnp.log2, (0.0, False, _INF, False)), "log10": (jnp.log10, (0.0, False, _INF, False)),
    "log1p": (jnp.log1p, (-1.0, False, _INF, False)), "asin": (jnp.arcsin, (-1.0, True, 1.0, True)),
    "acos": (jnp.arccos, (-1.0, True, 1.0, True)),
}


def _math_fn(name, real):
    f, dom = _MATH[name]

    def fn(x, *rest):
        if type(x) is not SymNumber or rest or x._t is bool:
            return real(x, *rest)
        if dom is not None:
            lo, lo_ok, hi, hi_ok = dom
            # (each bound a branch of the program's key; outside, the real function needs the value: specialized)
            if not ((x >= lo if lo_ok else x > lo) and (x <= hi if hi_ok else x < hi)):
                return real(x)
        return SymNumber(f(x._v.astype(jnp.float64)), float, x._src, None if x._e is None else ("m", name, x._e))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = real.__doc__
    return fn


def math_on():
    """Put the SymNumber-aware ``math`` functions in place (while a function with dynamic arguments is traced, on
    the tracing thread's behalf: any other caller's arguments are not SymNumbers and go to the real ones); the
    function that puts the real ones back."""
    import math
    real = {n: getattr(math, n) for n in _MATH}
    for n, r in real.items():
        setattr(math, n, _math_fn(n, r))

    def off():
        for n, r in real.items():
            setattr(math, n, r)
    return off
