"""torch.compile's automatic dynamic ints and floats: the first call specializes a Python number argument, a call
with another value compiles once more with it as an input, and that program serves every later value
(``dynamic=True``: an input from the first call; ``dynamic=False``: a program per value). Before, each value
compiled its own program until ``cache_size_limit`` (8), and every later call ran eagerly with a warning: a
training step given its step number ran eagerly from step 9 on.

Where the function needs the value (a branch, ``range(i)``, a shape, ``math.cos``, printing it) the argument is
specialized again (a program per value, as before): the results are eager's either way. Values, dtypes and
Python result types against torch 2.13 on the same calls; program counts against torch's where they agree."""
import math
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _counting(lib):
    """``compile`` for ``lib``, and a list whose length is the programs compiled (torch: graphs its backend got)."""
    made = []
    if lib is torch:
        def backend(gm, example_inputs):
            made.append(1)
            return gm.forward
        return (lambda fn, **kw: torch.compile(fn, backend=backend, **kw)), made

    def comp(fn, **kw):
        cf = ft.compile(fn, **kw)
        made.append(cf)
        return cf
    return comp, made


def _programs(lib, made):
    return len(made) if lib is torch else sum(cf.stats["traces"] for cf in made)


def _value(r):
    if isinstance(r, (tuple, list)):
        return [_value(x) for x in r]
    if isinstance(r, (torch.Tensor, ft.Tensor)):
        return (str(r.dtype), r.tolist())
    return (type(r).__name__, r)


# name -> (function of lib, the calls' arguments of lib); the programs compiled are as many as torch's
def _arith(L):
    return lambda x, i: x * i + 1


def _mixed(L):
    return lambda x, i: (x * (0.9 ** i) - i / 4, i + 1, i * 0.5, -i, abs(i - 3), i // 2, i % 3)


def _float(L):
    return lambda x, s: x * s + s * s


def _dtypes(L):
    def f(a, b, c, d, i, s):
        return a * i, b + i, c * s, d + i, a * s, b * s
    return f


def _dtype_args(L):
    return lambda v: (L.tensor([1, 2, 3]), L.tensor([1, 2], dtype=L.int32), L.tensor([1.5, 2.0], dtype=L.float16),
                      L.tensor([True, False]), v, v + 0.25)


def _kw(L):
    return lambda x, *, scale, shift=0: x * scale + shift


def _tensor_ops(L):
    return lambda x, i: (x.add(i), L.add(x, i), L.mul(x, i), x.sub(i), x.pow(2) * i, L.where(x > 1, x, i))


CASES = {
    "x * i + 1": (_arith, lambda L: [(L.ones(3), i) for i in range(12)]),
    "mixed Python arithmetic and results": (_mixed, lambda L: [(L.arange(3.0), i) for i in range(6)]),
    "float argument": (_float, lambda L: [(L.ones(2), s) for s in (0.5, 1.5, 2.5, -3.25)]),
    "promotion with int / float32 / float16 / bool tensors": (
        _dtypes, lambda L: [_dtype_args(L)(v) for v in (2, 3, 5, 7)]),
    # (scale changes at the second call, shift at the third: each becomes an input then, as torch's)
    "keyword arguments": (_kw, lambda L: [((L.ones(2),), {"scale": s, "shift": t}) for s, t in
                                          ((2, 1), (3, 1), (4, 2), (5, 2))]),
    "scalar operand of tensor ops": (_tensor_ops, lambda L: [(L.arange(3.0), i) for i in (1, 2, 3, 4)]),
}


def _run(lib, name):
    make, calls = CASES[name]
    comp, made = _counting(lib)
    cf = comp(make(lib))
    out = []
    for c in calls(lib):
        args, kwargs = c if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], dict) else (c, {})
        out.append(_value(cf(*args, **kwargs)))
    return out, _programs(lib, made)


@pytest.mark.parametrize("name", list(CASES))
def test_dynamic_scalars_match_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no graph break, no cache-limit warning)
        got, n_ours = _run(ft, name)
    want, n_torch = _run(torch, name)
    assert got == want
    assert n_ours == n_torch


# the value is needed: specialized again, results eager's
NEEDS_VALUE = {
    "branch": lambda L: (lambda x, i: x + i if i % 2 == 0 else x - i),
    "range": lambda L: (lambda x, i: sum(x * k for k in range(i))),
    "shape": lambda L: (lambda x, i: x.reshape(i, -1).sum(0)),
    "math.cos": lambda L: (lambda x, i: x * math.cos(i)),
    "index": lambda L: (lambda x, i: x[i]),
    "creation": lambda L: (lambda x, i: L.full((2,), i) + x[:2]),
    "min with a float": lambda L: (lambda x, i: x * min(1.0, (i + 1) / 3)),
    "division by it": lambda L: (lambda x, i: x * (6 / i)),
    "int power by it": lambda L: (lambda x, i: x * 2 ** i),
    "a static op argument": lambda L: (lambda x, i: x.add(x, alpha=i)),
}


@pytest.mark.parametrize("name", list(NEEDS_VALUE))
def test_a_use_that_needs_the_value_specializes_again(name):
    outs = {}
    for lib in (torch, ft):
        fn = NEEDS_VALUE[name](lib)
        cf = lib.compile(fn, backend="eager") if lib is torch else lib.compile(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore" if lib is torch else "error")
            outs[lib] = [_value(cf(lib.arange(6.0), i)) for i in (1, 2, 3, 2, 1)]
    assert outs[ft] == outs[torch]


def test_specialized_again_runs_the_later_calls_from_cache():
    cf = ft.compile(lambda x, i: x.reshape(i, -1).sum(0))
    for i in (1, 2, 3, 1, 2, 3):
        cf(ft.arange(6.0), i)
    # 1 (first value), 1 (the dynamic trace that needed the shape), 2 (values 2, 3); then cache hits
    assert cf.stats["traces"] == 4 and cf.stats["cache_hits"] == 3 and cf.stats["eager_calls"] == 0


def _linear_sgd(lib, out, batch, lr):
    """A Linear(4, out) with fixed weights, SGD with momentum, and a fixed batch of ``batch`` rows, in ``lib``."""
    lib.manual_seed(0)
    model = lib.nn.Linear(4, out)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(np.linspace(-1, 1, 4 * out, dtype=np.float32).reshape(out, 4)))
        model.bias.fill_(0.1)
    opt = lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return model, opt, lib.tensor(np.linspace(0, 1, 4 * batch, dtype=np.float32).reshape(batch, 4))


def test_a_training_step_given_its_step_number_compiles_twice():
    """The loop that hit the cache limit: 20 steps, a step-dependent loss scale, SGD; equal to eager and torch."""
    def run(lib, compiled):
        model, opt, x = _linear_sgd(lib, 3, 5, lr=0.05)

        def step(i):
            opt.zero_grad()
            loss = model(x).pow(2).mean() * (1.0 + 0.05 * i)
            loss.backward()
            opt.step()
            return loss
        f = (lib.compile(step, backend="eager") if lib is torch else lib.compile(step)) if compiled else step
        losses = [f(i).item() for i in range(20)]
        return losses, model.weight.detach().numpy().copy(), f
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, w, f = run(ft, True)
    eager, w_eager, _ = run(ft, False)
    want, w_torch, _ = run(torch, True)
    assert f.stats["traces"] == 2 and f.stats["eager_calls"] == 0 and f.stats["cache_hits"] == 18
    np.testing.assert_allclose(got, eager, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(w, w_eager, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w, w_torch, rtol=1e-5, atol=1e-6)


def test_a_learning_rate_computed_from_the_step_number_is_an_input():
    """``g['lr'] = base * 0.5 ** i`` inside the step: the LR a dynamic int makes goes to the optimizer's program
    as a traced value (the optimizer read it with float(): a program per step)."""
    def run(lib, compiled):
        model = lib.nn.Linear(2, 1)
        with lib.no_grad():
            model.weight.fill_(0.5)
            model.bias.fill_(0.1)
        opt = lib.optim.Adam(model.parameters(), lr=0.1)
        x = lib.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])

        def step(i):
            for g in opt.param_groups:
                g["lr"] = 0.1 * 0.5 ** i
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss
        f = (lib.compile(step, backend="eager") if lib is torch else lib.compile(step)) if compiled else step
        losses = [f(i).item() for i in range(6)]
        lr = opt.param_groups[0]["lr"]
        return losses, model.weight.detach().numpy().copy(), (type(lr), lr), f
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, w, lr, f = run(ft, True)
    eager, w_eager, lr_eager, _ = run(ft, False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, w_torch, lr_torch, _ = run(torch, True)
    assert f.stats["traces"] == 2 and f.stats["cache_hits"] == 4
    assert lr == lr_eager == lr_torch == (float, 0.1 * 0.5 ** 5)
    np.testing.assert_allclose(got, eager, rtol=1e-6)
    np.testing.assert_allclose(w, w_eager, rtol=1e-6)
    # (eager's own distance from torch: Adam's normalized steps carry float32 ulps into the loss)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    np.testing.assert_allclose(w, w_torch, rtol=1e-4)


def test_dynamic_true_and_false():
    counts = {}
    for dyn in (True, False):
        comp, made = _counting(torch)
        tf = comp(lambda x, i: x * i, dynamic=dyn)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cf = ft.compile(lambda x, i: x * i, dynamic=dyn)
        for i in (2, 3, 4):
            assert cf(ft.ones(2), i).tolist() == tf(torch.ones(2), i).tolist()
        counts[dyn] = (cf.stats["traces"], len(made))
    assert counts[True] == (1, 1) and counts[False] == (3, 3)


def test_automatic_dynamic_shapes_off_specializes_every_value():
    cf = ft.compile(lambda x, i: x * i)
    with ft._dynamo.config.patch(automatic_dynamic_shapes=False):
        for i in (2, 3, 4):
            assert cf(ft.ones(2), i).tolist() == [i, i]
    assert cf.stats["traces"] == 3


def test_bools_and_huge_ints_stay_constants():
    cf = ft.compile(lambda x, flag: x + 1 if flag else x - 1)
    for flag in (True, False, True):
        assert cf(ft.ones(1), flag).tolist() == [2.0 if flag else 0.0]
    assert cf.stats["traces"] == 2 and cf.stats["cache_hits"] == 1
    big = ft.compile(lambda x, n: x * (n * n % 7))
    for n in (1 << 70, 1 << 32, 3, 4, 5):  # (n * n at 2**32 wraps to 0 in int64)
        assert big(ft.ones(1), n).tolist() == [float(n * n % 7)]
    # two huge values (constants), then 3 (an input: the value changed; reused for 4 and 5): 3 programs
    assert big.stats["traces"] == 3 and big.stats["cache_hits"] == 2


def test_side_effects_and_results_carry_each_calls_value():
    class Box:
        pass
    box = Box()

    def fn(x, i, out):
        box.last = i * 2
        out.append(i + 1)  # (a fresh list each call: a list the function reaches grows a guard per call, as torch's)
        return x * i, i

    cf = ft.compile(fn)
    for i in (3, 4, 5):
        seen = []
        r, back = cf(ft.ones(2), i, seen)
        assert r.tolist() == [i, i] and back == i and type(back) is int and box.last == 2 * i and seen == [i + 1]
        assert type(box.last) is int and type(seen[0]) is int
    assert cf.stats["traces"] == 2 and cf.stats["cache_hits"] == 1


def test_zero_divisor_raises_as_python_does():
    cf = ft.compile(lambda x, i: x * (i // 0))
    for i in (1, 2):
        with pytest.raises(ZeroDivisionError, match="integer division or modulo by zero"):
            cf(ft.ones(1), i)


# a check that needs the value (an overflow, a zero divisor, a negative integer power): specialized again, so the
# call raises as eager (and as torch eager) does, where the traced value went through unchecked
CHECKED = {
    "int8 clamp overflow": (lambda L: (lambda x, i: x.clamp(max=i)), lambda L: L.tensor([1, 2], dtype=L.int8),
                            (5, 7, 300)),
    "masked_fill overflow": (lambda L: (lambda x, i: x.masked_fill(x > 1, i)),
                             lambda L: L.tensor([1, 2], dtype=L.int16), (5, 7, 70000)),
    "integer // 0": (lambda L: (lambda x, i: x // i), lambda L: L.tensor([7, -7]), (2, 3, 0)),
    "integer % 0": (lambda L: (lambda x, i: x % i), lambda L: L.tensor([7, -7]), (2, 3, 0)),
    "integer ** negative": (lambda L: (lambda x, i: x ** i), lambda L: L.tensor([2, 3]), (2, 3, -1)),
    "float32 fill overflow": (lambda L: (lambda x, s: x.masked_fill(x > 1, s)), lambda L: L.tensor([1.0, 2.0]),
                              (0.5, 1.5, 1e300)),
}


@pytest.mark.parametrize("name", list(CHECKED))
def test_value_checks_still_raise(name):
    make, data, values = CHECKED[name]
    cf = ft.compile(make(ft))
    for v in values:
        want = _outcome(lambda: make(torch)(data(torch), v))
        assert _outcome(lambda: cf(data(ft), v)) == want
    assert cf.stats["eager_calls"] <= 1  # (only the raising call: run again eagerly for its error)


def _outcome(fn):
    try:
        return _value(fn())
    except RuntimeError as e:
        return ("raised", str(e))


def test_the_functions_own_except_does_not_hide_a_needed_value():
    """``try: k = int(i) except Exception: k = 0``: had the stand-in's refusal been an Exception, the trace would
    go on with k = 0 baked into the program that serves every later value."""
    def fn(x, i):
        try:
            k = int(i)
        except Exception:  # noqa: BLE001
            k = 0
        return x * k

    cf = ft.compile(fn)
    for i in (1, 2, 3, 4):
        assert cf(ft.ones(2), i).tolist() == [float(i)] * 2


def test_a_type_check_on_the_argument_specializes_it_again():
    """``isinstance(n, int)`` is False for the stand-in (torch's tracer says True): the first program with the
    argument as an input is checked against the call traced with it as a constant, and specialized again on a
    difference, where it ran the other branch for every later value."""
    def fn(x, n):
        if isinstance(n, int):
            return x * n
        return x * 1.0

    for values in ((1, 2, 3, 4, 3), (0, 1, 2, 3)):  # (the second: both branches give x at n = 1)
        cf = ft.compile(fn)
        for n in values:
            assert cf(ft.ones(2), n).tolist() == [float(n)] * 2
        assert cf.stats["eager_calls"] == 0


def test_the_check_passes_a_function_that_does_not_use_the_value():
    cf = ft.compile(lambda x, epoch: x + 1)  # (an argument passed for logging: one program for every value)
    for n in range(5):
        assert cf(ft.ones(2), n).tolist() == [2.0, 2.0]
    assert cf.stats["traces"] == 2 and cf.stats["cache_hits"] == 3


def test_an_adam_step_with_a_target_check_and_a_step_argument():
    """cross_entropy's target check (its rollback selects read the optimizer's inputs after the jitted group step
    inside donated them when the check ran the program op by op) and Adam: two programs, eager's values."""
    def run(compiled):
        ft.manual_seed(0)
        model = ft.nn.Sequential(ft.nn.Linear(6, 8), ft.nn.ReLU(), ft.nn.Linear(8, 3))
        opt = ft.optim.Adam(model.parameters(), lr=1e-2)
        x, y = ft.randn(5, 6), ft.tensor([0, 2, 1, 1, 0])

        def step(i):
            opt.zero_grad()
            loss = ft.nn.functional.cross_entropy(model(x), y) * (1 + 0.1 * i)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        return [f(i).item() for i in range(5)], f
    got, f = run(True)
    want, _ = run(False)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert f.stats["traces"] == 2 and f.stats["cache_hits"] == 3


def test_only_the_argument_whose_value_is_needed_is_specialized_again():
    """A step counter (traced) beside an int option used as an op's static argument (``roll``'s shift): the option
    goes back to a program per value, the counter stays an input (both were specialized again: a program per step
    until the cache limit). (A float option, ``add(alpha=)``, is an input of the op's kernel:
    test_compile_dynamic_floats.py.)"""
    cf = ft.compile(lambda x, step, k: x.roll(k) * step)
    for step in range(12):
        k = (1, 2)[step % 2]
        assert cf(ft.arange(2.0), step, k).tolist() == [[1.0 * step, 0.0], [0.0, 1.0 * step]][k - 1]
    # the first call; both changed: one trace that needed k, then step an input with k 2, and with 1
    assert cf.stats["eager_calls"] == 0 and cf.stats["traces"] == 4 and cf.stats["cache_hits"] == 9


def test_gradient_accumulation_branches_on_the_step_and_keeps_its_programs():
    """``if step % 2 == 1: opt.step(); opt.zero_grad()``: the branch this call takes is computed from the step (a
    guard on the outcome, as torch's on a SymBool), and each program serves every step that takes its branches.
    The branch specialized the step: a program per step until the cache limit, then eager."""
    def run(lib, compiled):
        model, opt, x = _linear_sgd(lib, 2, 3, lr=0.1)

        def step(i):
            loss = model(x).pow(2).mean() / 2
            loss.backward()
            if i % 2 == 1:
                opt.step()
                opt.zero_grad()
            return loss
        f = (lib.compile(step, backend="eager") if lib is torch else lib.compile(step)) if compiled else step
        return [f(i).item() for i in range(20)], model.weight.detach().numpy().copy(), f
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, w, f = run(ft, True)
    eager, w_eager, _ = run(ft, False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, w_torch, _ = run(torch, True)
    np.testing.assert_allclose(got, eager, rtol=1e-6)
    np.testing.assert_allclose(w, w_eager, rtol=1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(w, w_torch, rtol=1e-5)
    # the first step; the one whose trace found the branch (traced again with it in the key); then one program per
    # (branch, .grad present or not): 17 calls from the cache
    assert f.stats["eager_calls"] == 0 and f.stats["traces"] == 4 and f.stats["cache_hits"] == 17


def test_several_branches_and_too_many():
    def fn(x, i):
        if i % 3 == 0:
            x = x * 2
        elif i < 5:
            x = x + i
        return x - 3.0 * (i > 7)

    cf = ft.compile(fn)
    for i in list(range(12)) * 2:
        assert cf(ft.ones(2), i).tolist() == fn(ft.ones(2), i).tolist()
    assert cf.stats["eager_calls"] == 0 and cf.stats["traces"] <= 8

    def many(x, i):  # (more branches than _MAX_GUARDS: the argument is specialized again, eager's values)
        for k in range(20):
            if i > k:
                x = x + 1
        return x

    cm = ft.compile(many)
    for i in (0, 5, 17, 25, 5):
        assert cm(ft.zeros(1), i).tolist() == [float(min(i, 20))]


def test_a_branch_in_a_compiled_forward_with_backward_outside():
    """A compiled forward whose graph the caller's backward runs through: the node's backward runs the function
    again on the call's values and takes its branches (it specialized the argument: a program per call)."""
    def make(L):
        def f(x, i):
            if i % 2 == 1:
                return (x * i).sin()
            return (x * 3).cos()
        return f
    cf, tf = ft.compile(make(ft)), torch.compile(make(torch), backend="eager")
    for i in range(6):
        x, xt = ft.tensor([0.5, 1.0], requires_grad=True), torch.tensor([0.5, 1.0], requires_grad=True)
        cf(x, i).sum().backward()
        tf(xt, i).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    assert cf.stats["traces"] == 4 and cf.stats["cache_hits"] == 3


def test_a_value_check_is_a_branch_and_the_program_stays():
    """``masked_fill`` of a dynamic float into float32 (it may overflow) and ``//`` by a dynamic int (it may be 0):
    the checks are branches on the value (the value that fails raises, as eagerly: its call runs eagerly, an op's
    error), and the calls after it still run the dynamic program (the failure specialized the argument: a program
    per value after it)."""
    cases = ((lambda L: (lambda x, s: x.masked_fill(x > 1, s)), lambda L: L.tensor([1.0, 2.0]),
              (0.5, 1.5, 2.5, 1e300, 3.5, 4.5)),
             (lambda L: (lambda x, i: x // i), lambda L: L.tensor([7, -7]), (2, 3, 4, 0, 5, 6)))
    for make, data, values in cases:
        cf = ft.compile(make(ft))
        for v in values:
            assert _outcome(lambda: cf(data(ft), v)) == _outcome(lambda: make(torch)(data(torch), v))
        assert cf.stats["cache_hits"] >= 3 and cf.stats["eager_calls"] <= 1  # (at most the failing value's call)


@pytest.mark.parametrize("dynamic", [None, True])
def test_step_number_beside_a_random_draw_stays_one_program(dynamic):
    """A step given its step number (unused, or used) with dropout inside: the dynamic-int check compares the two
    programs' outputs, the generator's new key among them (a key array NumPy cannot read: the check failed, the
    argument was specialized again and every step compiled its own program)."""
    drop = ft.nn.Dropout(0.5)
    w = ft.ones(8, requires_grad=True)

    def step(x, it):
        return (drop(x * w) * (1 + 0 * it)).sum()
    cf = ft.compile(step, dynamic=dynamic)
    ft.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outs = [cf(ft.ones(8), i).item() for i in range(10)]
    assert cf.stats["traces"] <= 2 and cf.stats["eager_calls"] == 0
    assert len(set(outs)) > 1  # (fresh draws each call)
    ft.manual_seed(0)
    assert [cf(ft.ones(8), i).item() for i in range(10)] == outs  # (reproducible under manual_seed)
