"""What a compiled function does to a list, dict, object or module it is given as an argument is replayed onto the
object of each call, as torch.compile replays its side effects: the replay acted on the traced call's object, so
``f(x, out)`` with a fresh ``out`` per call left every later ``out`` empty (and kept appending to the first), an
attribute set on a passed object landed on the first call's object."""
import warnings

import torch

import functorch_lite as ft


class Box:
    pass


def _calls(lib):
    def fn(x, out, table, box, model):
        y = model(x) * 2
        out.append(y)
        table["last"] = y.sum()
        box.seen = getattr(box, "seen", 0) + 1
        model.note = "ran"
        return y

    cf = lib.compile(fn, backend="eager") if lib is torch else lib.compile(fn)
    lib.manual_seed(0)
    res = []
    for k in range(3):
        model = lib.nn.Linear(2, 2)
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]) * (k + 1))
            model.bias.zero_()
        out, table, box = [], {}, Box()
        with lib.no_grad():
            y = cf(lib.ones(1, 2), out, table, box, model)
        res.append((y.tolist(), [t.tolist() for t in out], float(table["last"]), box.seen,
                    getattr(model, "note", None)))
    return res, cf


def test_effects_on_arguments_land_on_each_calls_objects():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, cf = _calls(ft)
    want, _ = _calls(torch)
    assert got == want
    assert cf.stats["eager_calls"] == 0 and cf.stats["cache_hits"] >= 1


def test_closure_list_still_grows():
    hist = []

    def fn(x):
        hist.append(x * 2)
        return x + 1

    cf = ft.compile(fn)
    for k in range(3):
        cf(ft.ones(1) * k)
    assert [t.tolist() for t in hist] == [[0.0], [2.0], [4.0]]


def test_an_attribute_of_an_unhashable_object():
    """A dataclass (eq=True: unhashable) given as an argument, its attribute set inside: the attribute log hashed
    the object (TypeError), raised again in the trace's clean-up, which then left the recorder patching print and
    every later compiled call of any function running inline."""
    import builtins
    import dataclasses

    from functorch_lite._compile import runner

    @dataclasses.dataclass
    class State:
        step: int = 0

    def fn(x, st, i):
        st.step = i
        return x * 2

    cf = ft.compile(fn)
    for i in (1, 2, 3):
        st = State()
        assert cf(ft.ones(2), st, i).tolist() == [2.0, 2.0] and st == State(i)
    assert runner.TRACING == [0] and builtins.print.__module__ == "builtins"
    assert cf.stats["eager_calls"] == 0 and cf.stats["traces"] == 2
