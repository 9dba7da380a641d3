"""Value checks eager makes on the host that a compiled function makes as deferred checks (``ops/_deferred``: the
program returns a flag, the call raises eager's error after it): multinomial's probabilities (negative, inf/nan, a
row summing to zero), bernoulli's tensor p outside [0, 1], binary_cross_entropy's input and target outside [0, 1],
repeat_interleave's negative repeats and wrong output_size, and a distribution's argument and sample validation
(eager prints the whole tensor; compiled, the first offending value). Against torch eager; a valid call of the
same program still runs."""
import warnings

import pytest
import torch

import functorch_lite as ft

CASES = {
    "multinomial negative": (lambda L: (L.tensor([0.5, -1.0]),), lambda L, p: L.multinomial(p, 1)),
    "multinomial nan": (lambda L: (L.tensor([[0.5, float("nan")]]),), lambda L, p: L.multinomial(p, 1)),
    "multinomial zero row": (lambda L: (L.tensor([[0.5, 0.5], [0.0, 0.0]]),), lambda L, p: L.multinomial(p, 1)),
    "bernoulli tensor p": (lambda L: (L.tensor([0.5, 1.5]),), lambda L, p: L.bernoulli(p)),
    "bce input": (lambda L: (L.tensor([1.5, 0.5]), L.tensor([1.0, 0.0])),
                  lambda L, x, t: L.nn.functional.binary_cross_entropy(x, t)),
    "bce target": (lambda L: (L.tensor([0.5, 0.5]), L.tensor([1.0, -2.0])),
                   lambda L, x, t: L.nn.functional.binary_cross_entropy(x, t)),
}

VALID = {
    "multinomial negative": (lambda L: (L.tensor([0.5, 1.0]),)),
    "multinomial nan": (lambda L: (L.tensor([[0.5, 0.25]]),)),
    "multinomial zero row": (lambda L: (L.tensor([[0.5, 0.5], [0.0, 1.0]]),)),
    "bernoulli tensor p": (lambda L: (L.tensor([0.5, 1.0]),)),
    "bce input": (lambda L: (L.tensor([0.25, 0.5]), L.tensor([1.0, 0.0]))),
    "bce target": (lambda L: (L.tensor([0.5, 0.5]), L.tensor([1.0, 0.0]))),
}


def _error(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_raises_eagers_error(name):
    make, body = CASES[name]
    f = ft.compile(lambda *a: body(ft, *a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f(*VALID[name](ft))  # (the program, on valid values: no error)
    want = _error(lambda: body(torch, *make(torch)))
    assert want is not None and _error(lambda: f(*make(ft))) == want
    assert f.stats["eager_calls"] == 0 and f.stats["traces"] == 1


def test_repeat_interleave_repeats():
    f = ft.compile(lambda r: ft.repeat_interleave(r, output_size=3))
    assert f(ft.tensor([1, 2])).tolist() == [0, 1, 1]
    assert _error(lambda: f(ft.tensor([-1, 4]))) == ("RuntimeError", "repeats can not be negative")
    assert _error(lambda: f(ft.tensor([1, 1]))) == ("RuntimeError", "allocated size does not match required size")
    assert _error(lambda: ft.repeat_interleave(ft.tensor([1, 1]), output_size=3)) == \
        ("RuntimeError", "allocated size does not match required size")


def test_distribution_validation():
    def arg(L, s):  # (validate_args given: another test may have changed the default)
        return L.distributions.Normal(L.zeros(2), s, validate_args=True).log_prob(L.zeros(2))

    def sample(L, v):
        return L.distributions.Bernoulli(probs=L.tensor([0.5, 0.5]), validate_args=True).log_prob(v)
    for body, bad, ok in ((arg, [1.0, -1.0], [1.0, 2.0]), (sample, [1.0, 0.5], [1.0, 0.0])):
        f = ft.compile(lambda x, body=body: body(ft, x))
        assert f(ft.tensor(ok)).shape == (2,)
        t_type, t_msg = _error(lambda: body(torch, torch.tensor(bad)))
        f_type, f_msg = _error(lambda: f(ft.tensor(bad)))
        head = t_msg.split("found invalid values:")[0]
        assert f_type == t_type == "ValueError" and f_msg.startswith(head + "found invalid values:\n")
        assert "flat index 1" in f_msg


NORMAL = {
    "tensor std": lambda L: L.normal(L.zeros(2), L.tensor([1.0, -1.0])),
    "float mean tensor std": lambda L: L.normal(0.0, L.tensor([1.0, -1.0])),
    "nan std": lambda L: L.normal(L.zeros(2), L.tensor([1.0, float("nan")])),
    "float std with tensor mean": lambda L: L.normal(L.zeros(2), -1.0),
    "float std size": lambda L: L.normal(0.0, -0.5, (2,)),
    "tiny std": lambda L: L.normal(L.zeros(2), -1e-7),
    "normal_": lambda L: L.zeros(2).normal_(0, -2.5),
}


@pytest.mark.parametrize("name", list(NORMAL))
def test_normal_std_errors(name):
    want = _error(lambda: NORMAL[name](torch))
    assert want is not None and _error(lambda: NORMAL[name](ft)) == want


def test_normal_std_checked_in_a_compiled_function():
    f = ft.compile(lambda s: ft.normal(ft.zeros(2), s))
    assert f(ft.ones(2)).shape == (2,)
    assert _error(lambda: f(ft.tensor([1.0, -1.0]))) == ("RuntimeError", "normal expects all elements of std >= 0.0")
