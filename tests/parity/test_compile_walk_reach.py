"""What a compiled function reads through code and data the guard walk did not reach, changed between calls, against
real torch (each case: torch eager, and ``functorch_lite.compile`` of the same code; torch.compile recompiles and
gives torch eager's values in each). Before, every one of these ran the first call's program again (a stale
constant, silently wrong), found by a helper's red-team of the guards:

- a method of a plain (non-Module) class, a helper object's method inside a module's forward, a static or class
  method, reading a global that is rebound; a global tensor read there (rebound, ``.data`` replaced) — and a global
  parameter read there got no ``.grad`` at all (it was a constant of the program);
- an Enum member, a range, a Fraction, a Decimal or bytes passed as an argument, or a global Enum read as
  ``.value`` (an object's attributes were guards only by name: ``.value`` is a property);
- what lies past the walk's limits: a config dict nested five deep, a chain of five helpers, an argparse
  Namespace or module with over 64 attributes, a dict with over 256 entries, ``getattr(o, f"w{i}")``;
- a method patched on its class, an object's ``__class__`` reassigned, a function's ``__code__`` replaced;
- a method whose name the walk learns only after the object (``settle``).
"""
import argparse
import decimal
import enum
import fractions
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import close

G = {}  # the cases' globals, set afresh by each case (its torch run, then its functorch_lite run)


def _both(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return case(torch, lambda f: f), case(ft, ft.compile)


def _vals(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).tolist()


# ---- methods of plain classes reading globals -----------------------------------------------------------------
SCALE = 1.0
W_GLOBAL = None
P_GLOBAL = None


class _Trainer:
    def step(self, x):
        return self.helper(x)

    def helper(self, x):
        return x * SCALE + W_GLOBAL


class _Helper:
    def apply(self, x):
        return x * SCALE


class _Static:
    @staticmethod
    def sm(x):
        return x * SCALE

    @classmethod
    def cm(cls, x):
        return x - SCALE


def _plain_methods(L, C):
    global SCALE, W_GLOBAL
    SCALE, W_GLOBAL = 1.0, L.ones(3)

    class M(L.nn.Module):
        def __init__(s):
            super().__init__()
            s.h = _Helper()

        def forward(s, x):
            return s.h.apply(x)

    t, m = _Trainer(), M()
    fs = [C(t.step), C(m), C(lambda x: _Static.sm(x) + _Static.cm(x))]
    x = L.tensor([1., 2., 3.])
    out = [[_vals(f(x)) for f in fs]]
    SCALE = 3.0
    out.append([_vals(f(x)) for f in fs])
    W_GLOBAL = L.full((3,), 7.)
    out.append([_vals(f(x)) for f in fs])
    W_GLOBAL.data = L.full((3,), 9.)
    out.append([_vals(f(x)) for f in fs])
    return out


class _Scaler:
    def __call__(self, x):
        return (x * P_GLOBAL).sum()


def _global_parameter_grad(L, C):
    global P_GLOBAL
    P_GLOBAL = L.nn.Parameter(L.tensor([1., 2., 3.]))
    sc = _Scaler()
    f = C(lambda x: sc(x))
    out = []
    for k in range(3):
        P_GLOBAL.grad = None
        x = L.tensor([1., -1., 2.]) * (k + 1)
        f(x).backward()
        out.append(_vals(P_GLOBAL.grad))
    return out


# ---- immutable values as arguments ------------------------------------------------------------------------------
class Mode(enum.Enum):
    SMALL = 1
    BIG = 10


MODE = Mode.SMALL


def _values(L, C):
    global MODE
    MODE = Mode.SMALL
    x = L.ones(3)
    f = C(lambda x, m: x * m.value)
    g = C(lambda x, r: x * len(r) + r[-1])
    h = C(lambda x, q: x * float(q))
    k = C(lambda x, b: x * len(b) + b[0])
    gm = C(lambda x: x * MODE.value)
    out = [_vals(f(x, m)) for m in (Mode.SMALL, Mode.BIG)]
    out += [_vals(g(x, r)) for r in (range(2), range(5))]
    out += [_vals(h(x, q)) for q in (fractions.Fraction(1, 2), fractions.Fraction(3, 2), decimal.Decimal("2.5"))]
    out += [_vals(k(x, b)) for b in (b"ab", b"xyz")]
    out.append(_vals(gm(x)))
    MODE = Mode.BIG
    out.append(_vals(gm(x)))
    return out


# ---- past the walk's limits ------------------------------------------------------------------------------------
CFG = {}
CHAIN_G = 1.0
ARGS = None
TABLE = {}


def _d(x):
    return x * CHAIN_G


def _c(x):
    return _d(x)


def _b(x):
    return _c(x)


def _a(x):
    return _b(x)


def _limits(L, C):
    global CFG, CHAIN_G, ARGS, TABLE
    CFG = {"model": {"attn": {"rope": {"scale": {"v": 1.0}}}}}
    CHAIN_G = 1.0
    p = argparse.ArgumentParser()
    for i in range(69):
        p.add_argument(f"--opt{i}", type=int, default=0)
    p.add_argument("--temperature", type=float, default=1.0)
    ARGS = p.parse_args([])
    TABLE = {f"k{i}": 1.0 for i in range(300)}

    class O:
        pass
    o = O()
    o.w1 = 1.0
    layer = 1

    class Net(L.nn.Module):
        def __init__(s):
            super().__init__()
            for i in range(60):
                setattr(s, f"hp{i}", 0)
            s.temperature = 1.0

        def forward(s, x):
            return x / s.temperature

    net = Net()
    fs = [C(lambda x: x * CFG["model"]["attn"]["rope"]["scale"]["v"]), C(lambda x: _a(x)),
          C(lambda x: x / ARGS.temperature), C(lambda x: x * TABLE["k299"]),
          C(lambda x: x * getattr(o, f"w{layer}")), C(net)]
    x = L.ones(2)
    out = [[_vals(f(x)) for f in fs]]
    CFG["model"]["attn"]["rope"]["scale"]["v"] = 7.0
    CHAIN_G = 2.0
    ARGS.temperature = 4.0
    TABLE["k299"] = 5.0
    o.w1 = 8.0
    net.temperature = 10.0
    out.append([_vals(f(x)) for f in fs])
    return out


# ---- code replaced ---------------------------------------------------------------------------------------------
def _hh(x):
    return x * 2


def _code_replaced(L, C):
    _hh.__code__ = (lambda x: x * 2).__code__

    class P:
        def go(s, x):
            return x * 2

    class Q1:
        def go(s, x):
            return x * 2

    class Q2:
        def go(s, x):
            return x * 3
    p, q = P(), Q1()
    fs = [C(lambda x: p.go(x)), C(lambda x: q.go(x)), C(lambda x: _hh(x))]
    x = L.tensor([-1., .5, 2.])
    out = [[_vals(f(x)) for f in fs]]
    P.go = lambda s, x: x * 9
    q.__class__ = Q2
    _hh.__code__ = (lambda x: x * 11).__code__
    out.append([_vals(f(x)) for f in fs])
    return out


# ---- a method named after its object is walked --------------------------------------------------------------
RUNNER = None


def _run_it(o, x):
    return o.run(x)


class _Runner:
    def run(self, x):
        return x * SCALE


def _late_method(L, C):
    global RUNNER, SCALE
    SCALE, RUNNER = 1.0, _Runner()

    def f(x):
        o = RUNNER  # (the object's global first, then the function that calls its method)
        return _run_it(o, x)
    cf = C(f)
    x = L.ones(2)
    out = [_vals(cf(x))]
    SCALE = 6.0
    out.append(_vals(cf(x)))
    return out


@pytest.mark.parametrize("case", [_plain_methods, _global_parameter_grad, _values, _limits, _code_replaced,
                                  _late_method], ids=lambda c: c.__name__.strip("_"))
def test_compiled_matches_torch_after_change(case):
    t, f = _both(case)
    assert close(t, f), (t, f)
