"""Editing containers against real torch 2.13: ``Sequential`` / ``ModuleList`` deletion (renumbering), insert,
pop, extend, ``+``/``+=``/``*``/``*=``; ``ModuleDict`` del/pop/update/clear; ``ParameterList`` item assignment,
extend, ``+=``; ``ParameterDict``'s dict methods. Compared: submodule names and types, parameter names,
state_dict keys and values, repr, forward output, return values, and errors (type and message)."""
from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.nn.modules import module as ft_module

X = np.random.default_rng(0).standard_normal((2, 3))


class _Mk:
    """Deterministic layers: the k-th ``lin()`` of a run has the same weights in both libraries."""

    def __init__(self, L):
        self.L, self.k = L, 0

    def lin(self):
        self.k += 1
        r = np.random.default_rng(self.k)
        m = self.L.nn.Linear(3, 3)
        with self.L.no_grad():
            m.weight.copy_(self.L.tensor(r.standard_normal((3, 3)), dtype=self.L.float32))
            m.bias.copy_(self.L.tensor(r.standard_normal(3), dtype=self.L.float32))
        return m

    def layers(self, n=5):
        nn = self.L.nn
        return [self.lin(), nn.ReLU(), self.lin(), nn.Tanh(), self.lin(), nn.Sigmoid(), self.lin()][:n]

    def seq(self, n=5):
        return self.L.nn.Sequential(*self.layers(n))

    def oseq(self):
        nn = self.L.nn
        return nn.Sequential(OrderedDict([("a", self.lin()), ("b", nn.ReLU()), ("c", self.lin())]))

    def mlist(self, n=5):
        return self.L.nn.ModuleList(self.layers(n))

    def mdict(self):
        return self.L.nn.ModuleDict({"b": self.lin(), "a": self.L.nn.ReLU()})

    def param(self, *shape):
        self.k += 1
        return self.L.nn.Parameter(self.L.tensor(np.random.default_rng(self.k).standard_normal(shape),
                                                 dtype=self.L.float32))

    def plist(self):
        return self.L.nn.ParameterList([self.param(2), self.param(3)])

    def pdict(self):
        return self.L.nn.ParameterDict({"w": self.param(2), "b": self.param(1)})


def _snap(L, obj):
    """``obj`` as (exact plain data, list of float arrays): a module by its named modules with type names,
    named parameters, state_dict keys, repr, state_dict values and (for a Sequential) its forward output."""
    if isinstance(obj, L.nn.Module):
        sd = obj.state_dict()
        exact = ("module", [(n, type(m).__name__) for n, m in obj.named_modules()],
                 [n for n, _ in obj.named_parameters()], list(sd), repr(obj))
        arrays = [v.detach().double().numpy() for v in sd.values()]
        if isinstance(obj, L.nn.Sequential) and len(obj):
            arrays.append(obj(L.tensor(X, dtype=L.float32)).detach().double().numpy())
        return exact, arrays
    if isinstance(obj, L.Tensor):
        return ("tensor", type(obj).__name__, tuple(obj.shape), str(obj.dtype).split(".")[-1]), \
            [obj.detach().double().numpy()]
    if isinstance(obj, (list, tuple)):
        parts = [_snap(L, o) for o in obj]
        return (type(obj).__name__, [p[0] for p in parts]), [a for p in parts for a in p[1]]
    return ("value", repr(obj)), []


def _outcome(fn, L):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exact, arrays = _snap(L, fn(L, _Mk(L)))
            return ("ok", exact), arrays
    except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
        return (type(e).__name__, str(e)), []


def check(fn):
    """``fn(L, mk)`` gives the same result in torch and functorch_lite (or raises the same error)."""
    (t_exact, t_arr), (f_exact, f_arr) = _outcome(fn, torch), _outcome(fn, ft)
    assert f_exact == t_exact, (f_exact, t_exact)
    assert len(f_arr) == len(t_arr)
    for a, b in zip(f_arr, t_arr):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    return t_exact


def _do(stmt):
    """A case that edits ``c`` (the container built by the expression before ';') and returns it."""
    build, _, edit = stmt.partition(";")

    def fn(L, mk):
        c = eval(build, {"L": L, "mk": mk, "OrderedDict": OrderedDict})
        ret = None
        env = {"c": c, "L": L, "mk": mk, "OrderedDict": OrderedDict}
        for s in edit.split(";"):
            s = s.strip()
            if s.startswith("del ") or "=" in s.replace("==", ""):
                exec(s, env)
            elif s:
                ret = eval(s, env)
        return env["c"], ret
    fn.__name__ = stmt
    return fn


SEQUENTIAL = [
    "mk.seq(); del c[1]",
    "mk.seq(); del c[-1]",
    "mk.seq(); del c[0]; del c[0]",
    "mk.seq(7); del c[1:4]",
    "mk.seq(7); del c[::2]",
    "mk.seq(); del c[10:]",
    "mk.oseq(); del c[1]",
    "mk.oseq(); del c[-2:]",
    "mk.seq(); c.insert(0, mk.lin())",
    "mk.seq(); c.insert(2, L.nn.Tanh())",
    "mk.seq(); c.insert(5, mk.lin())",
    "mk.seq(); c.insert(-1, L.nn.ReLU())",
    "mk.seq(); c.insert(-5, mk.lin())",
    "mk.oseq(); c.insert(3, L.nn.ReLU())",
    "mk.seq(); c.pop(1)",
    "mk.seq(); c.pop(-1)",
    "mk.seq(); c.pop(slice(1, 3))",
    "mk.oseq(); c.pop(0)",
    "mk.seq(3); c.extend([L.nn.ReLU(), mk.lin()])",
    "mk.seq(3); c.extend(mk.seq(2))",
    "mk.seq(3); c.append(mk.lin())",
    "mk.seq(3); c = c + mk.seq(2)",
    "mk.oseq(); c = c + mk.oseq()",
    "mk.seq(3); c += mk.seq(2)",
    "mk.oseq(); c += mk.oseq()",
    "mk.seq(3); c = c * 2",
    "mk.seq(3); c = 3 * c",
    "mk.oseq(); c = c * 2",
    "mk.seq(3); c *= 2",
    "mk.seq(3); c *= 1",
    "mk.seq(3); c = c * True",
    "mk.seq(3); c = c[1:]",
    "mk.seq(3); d = c * 2; d[0] is c[0] and d[3] is c[0]",
    "mk.seq(); del c[1]; c.insert(1, mk.lin()); c.pop(0); c.append(L.nn.ReLU()); c *= 2; del c[2:5]",
]

SEQUENTIAL_ERRORS = [
    "mk.seq(3); del c[3]",
    "mk.seq(3); del c[-4]",
    "mk.seq(3); del c['a']",
    "mk.seq(3); del c[1.0]",
    "mk.seq(3); c.insert(4, mk.lin())",
    "mk.seq(3); c.insert(-4, mk.lin())",
    "mk.seq(3); c.insert(0, 'x')",
    "mk.seq(3); c.insert('a', mk.lin())",
    "mk.seq(3); c.insert(1.0, mk.lin())",
    "mk.oseq(); c.insert(1, mk.lin())",
    "mk.seq(3); c.pop(7)",
    "mk.seq(3); c.pop('a')",
    "mk.seq(3); c + [L.nn.ReLU()]",
    "mk.seq(3); c += 3",
    "mk.seq(3); c * 0",
    "mk.seq(3); c * 1.5",
    "mk.seq(3); 'a' * c",
    "mk.seq(3); c *= -1",
    "mk.seq(3); c *= 'a'",
    "mk.oseq(); c *= 2",
    "mk.seq(3); c.extend(5)",
    "mk.seq(3); c.extend([5])",
    "mk.seq(3); c.append(5)",
    "mk.seq(3); c[3]",
    "mk.seq(3); c['a']",
    "mk.seq(3); c[3] = mk.lin()",
    "mk.seq(3); L.nn.Sequential({'a': mk.lin()})",
]

MODULELIST = [
    "mk.mlist(); del c[1]",
    "mk.mlist(); del c[-2]",
    "mk.mlist(7); del c[1:5:2]",
    "mk.mlist(); del c[:]",
    "mk.mlist(); c.insert(0, mk.lin())",
    "mk.mlist(); c.insert(3, L.nn.Tanh())",
    "mk.mlist(); c.insert(5, mk.lin())",
    "mk.mlist(3); c.insert(5, mk.lin())",
    "mk.mlist(); c.pop(0)",
    "mk.mlist(); c.pop(-1)",
    "mk.mlist(); c.pop(slice(0, 2))",
    "mk.mlist(3); c = c + [L.nn.ReLU(), mk.lin()]",
    "mk.mlist(3); c = c + mk.mlist(2)",
    "mk.mlist(3); c += [mk.lin()]",
    "mk.mlist(3); c += (m for m in [mk.lin(), L.nn.ReLU()])",
    "mk.mlist(3); c.extend(mk.mlist(2))",
    "mk.mlist(3); c.append(mk.lin())",
    "mk.mlist(); c = c[1:4]",
    "mk.mlist(); len(c)",
    "mk.mlist(); del c[1]; c.insert(1, mk.lin()); c.pop(2); c += [L.nn.ReLU()]",
]

MODULELIST_ERRORS = [
    "mk.mlist(3); del c[5]",
    "mk.mlist(3); del c['a']",
    "mk.mlist(3); del c[1.0]",
    "mk.mlist(3); c.insert(-1, mk.lin())",
    "mk.mlist(3); c.insert('a', mk.lin())",
    "mk.mlist(3); c.pop(5)",
    "mk.mlist(3); c.pop('a')",
    "mk.mlist(3); c + 5",
    "mk.mlist(3); c += 5",
    "mk.mlist(3); c.extend(5)",
    "mk.mlist(3); c.extend([5])",
    "mk.mlist(3); L.nn.ModuleList(5)",
    "mk.mlist(3); c[5]",
    "mk.mlist(3); c['a']",
    "mk.mlist(3); c[-4] = mk.lin()",
]

MODULEDICT = [
    "mk.mdict(); del c['b']",
    "mk.mdict(); c.pop('b')",
    "mk.mdict(); c.clear()",
    "mk.mdict(); c.update({'z': mk.lin(), 'c': L.nn.ReLU()})",
    "mk.mdict(); c.update(OrderedDict([('z', mk.lin()), ('c', L.nn.ReLU())]))",
    "mk.mdict(); c.update([('z', mk.lin()), ['c', L.nn.ReLU()]])",
    "mk.mdict(); c.update(L.nn.ModuleDict([('z', mk.lin()), ('c', L.nn.ReLU())]))",
    "mk.mdict(); c.update({'b': L.nn.Tanh()})",
    "mk.mdict(); c['b'] = None",
    "mk.mdict(); L.nn.ModuleDict([('z', mk.lin()), ('a', mk.lin())])",
    "mk.mdict(); (list(c.keys()), [type(v).__name__ for v in c.values()], [k for k, _ in c.items()])",
    "mk.mdict(); ('a' in c, 'q' in c, len(c), list(c))",
    "mk.mdict(); c.pop('a'); c.update([('a', mk.lin())]); del c['b']; c['q'] = L.nn.ReLU()",
]

MODULEDICT_ERRORS = [
    "mk.mdict(); c.update(5)",
    "mk.mdict(); c.update([5])",
    "mk.mdict(); c.update([('a',)])",
    "mk.mdict(); c.update(['ab', 'cd'])",
    "mk.mdict(); c.update([(1, mk.lin())])",
    "mk.mdict(); c.update({'x': 5})",
    "mk.mdict(); c.update({'training': mk.lin()})",
    "mk.mdict(); c.update({'a.b': mk.lin()})",
    "mk.mdict(); c.update({'': mk.lin()})",
    "mk.mdict(); c.pop('zz')",
    "mk.mdict(); del c['zz']",
    "mk.mdict(); c['zz']",
    "mk.mdict(); L.nn.ModuleDict(5)",
]

PARAMETERLIST = [
    "mk.plist(); c[0] = L.ones(4)",
    "mk.plist(); c[-1] = mk.param(5)",
    "mk.plist(); c[1] = None",
    "mk.plist(); c.append(L.zeros(2, 2))",
    "mk.plist(); c.append(mk.param(1))",
    "mk.plist(); c.append('s')",
    "mk.plist(); c.extend([L.ones(3), mk.param(2)])",
    "mk.plist(); c.extend((p for p in [mk.param(2)]))",
    "mk.plist(); c += [mk.param(4)]",
    "mk.plist(); c += mk.plist()",
    "mk.plist(); c = c[1:]",
    "mk.plist(); (len(c), [type(p).__name__ for p in c], c[-1])",
    "mk.plist(); c.append(L.ones(2)); c[0] = mk.param(1); c += [L.zeros(1)]",
    "mk.plist(); L.nn.ParameterList([mk.param(2), 'x', 3])",
    "mk.plist(); L.nn.ParameterList()",
]

PARAMETERLIST_ERRORS = [
    "mk.plist(); c[2] = mk.param(1)",
    "mk.plist(); c['a'] = mk.param(1)",
    "mk.plist(); c[0] = 3",
    "mk.plist(); c.extend(5)",
    "mk.plist(); c.extend(L.ones(3))",
    "mk.plist(); c += 3",
    "mk.plist(); c[5]",
    "mk.plist(); c['a']",
    "mk.plist(); c(1)",
    "mk.plist(); L.nn.ParameterList(5)",
]

PARAMETERDICT = [
    "mk.pdict(); c.update({'z': mk.param(1), 'c': L.ones(2)})",
    "mk.pdict(); c.update(OrderedDict([('z', mk.param(1)), ('c', mk.param(2))]))",
    "mk.pdict(); c.update([('z', mk.param(1)), ('c', L.ones(2))])",
    "mk.pdict(); c.update(mk.pdict())",
    "mk.pdict(); c.pop('w')",
    "mk.pdict(); del c['b']",
    "mk.pdict(); c.clear()",
    "mk.pdict(); c.setdefault('w', mk.param(4))",
    "mk.pdict(); c.setdefault('n', L.ones(4))",
    "mk.pdict(); c.setdefault('n')",
    "mk.pdict(); (c.get('w'), c.get('zz'), c.get('zz', 3))",
    "mk.pdict(); (list(c.keys()), list(c.values()), [k for k, _ in c.items()], len(c), 'w' in c)",
    "mk.pdict(); c.popitem()",
    "mk.pdict(); c = c.copy()",
    "mk.pdict(); c = c | L.nn.ParameterDict({'q': mk.param(1)})",
    "mk.pdict(); c |= L.nn.ParameterDict({'q': mk.param(1)})",
    "mk.pdict(); c = c.fromkeys(['x', 'y'], mk.param(1))",
    "mk.pdict(); c['s'] = 'text'",
]

PARAMETERDICT_ERRORS = [
    "mk.pdict(); c.update(5)",
    "mk.pdict(); c.update([5])",
    "mk.pdict(); c.update([('a',)])",
    "mk.pdict(); c.pop('zz')",
    "mk.pdict(); del c['zz']",
    "mk.pdict(); c[1]",
    "mk.pdict(); c['zz']",
    "mk.pdict(); c(1)",
]


@pytest.mark.parametrize("stmt", SEQUENTIAL + MODULELIST + MODULEDICT + PARAMETERLIST + PARAMETERDICT)
def test_edit(stmt):
    assert check(_do(stmt))[0] == "ok"


@pytest.mark.parametrize("stmt", SEQUENTIAL_ERRORS + MODULELIST_ERRORS + MODULEDICT_ERRORS + PARAMETERLIST_ERRORS
                         + PARAMETERDICT_ERRORS)
def test_edit_error(stmt):
    assert check(_do(stmt))[0] != "ok"


def test_state_dict_round_trip_after_delete():
    """The renumbered state_dict of an edited torch model loads into the same edit of a functorch_lite model."""
    t, f = _Mk(torch).seq(), _Mk(ft).seq()
    del t[1], f[1]
    t.insert(0, torch.nn.Linear(3, 3))
    f.insert(0, ft.nn.Linear(3, 3))
    f.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = X.astype(np.float32)
    np.testing.assert_allclose(f(ft.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("edit", ["del c[1]", "c.insert(1, L.nn.Tanh())", "c.pop(0)", "c.extend([L.nn.ReLU()])",
                                  "c += L.nn.Sequential(L.nn.Tanh())", "c *= 2"])
def test_edits_keep_the_tracked_registry(edit):
    """Every edit goes through the module registry: the table stays the tracked kind and the structure epoch moves
    (what compiled functions watch to notice a changed module tree)."""
    c = _Mk(ft).seq(3)
    table = c._modules
    before = ft_module.STRUCTURE_EPOCH[0]
    exec(edit, {"c": c, "L": ft})
    assert type(c._modules) is ft_module._Registry and c._modules is table
    assert ft_module.STRUCTURE_EPOCH[0] > before


def test_compiled_forward_sees_the_edits():
    """A compiled model called again after ``del`` / ``insert`` runs the edited model (as eager torch does)."""
    t, f = _Mk(torch).seq(), _Mk(ft).seq()
    cf = ft.compile(f)
    x = X.astype(np.float32)

    def same():
        np.testing.assert_allclose(cf(ft.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    same()
    del t[1], f[1]
    same()
    t.insert(0, torch.nn.ReLU())
    f.insert(0, ft.nn.ReLU())
    same()


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "complex64"])
def test_a_parameter_requiring_grad_must_be_floating_point_or_complex(dtype):
    def run(L):
        data = L.zeros(2, dtype=getattr(L, dtype))
        out = []
        for rg in (True, False):
            try:
                p = L.nn.Parameter(data, requires_grad=rg)
                out.append(("ok", p.requires_grad, str(p.dtype).split(".")[-1]))
            except RuntimeError as e:
                out.append(("RuntimeError", str(e)))
        return out
    assert run(ft) == run(torch)
