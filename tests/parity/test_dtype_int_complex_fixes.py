"""Integer and complex corners where the facade followed JAX, against torch 2.13:
- integer ``**`` with an exponent of 64 or more (XLA's integer power reads the exponent's low 6 bits: ``2 ** 64``
  was 1);
- complex ``**`` of a zero base (torch's exp(y log 0): 0, inf+nan*j or nan+nan*j by Re(y); XLA gave NaN or 1);
- ``linspace`` / ``logspace`` with complex endpoints (the imaginary part was dropped, the dtype real);
- a Python float ``//`` or ``%`` an integer tensor holding 0 (a float result: no ZeroDivisionError);
- the ordering, rounding and clamping ops torch refuses complex inputs to (JAX computed them);
- the uint16 / uint32 / uint64 kernels torch 2.13 has (eq, mul, div, bitwise ops, cat, the floating unary ops)
  raised;
- Python ints past int64 (torch takes them up to 2**64 - 1: a float or uint64 tensor, or an operand with uint64's
  bits; JAX's argument parsing overflowed) and float exponents past float32 (``x ** 1e40``);
- isclose's dtype and tolerance checks, and torch.tensor of Python complex numbers into a real dtype (TypeError)."""
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__, str(e))
    rs = r if isinstance(r, (tuple, list)) else [r]
    return [(str(x.dtype).split(".")[-1], np.asarray(x.numpy()).tolist()) for x in rs]


def _same(fn):
    got, want = _outcome(lambda: fn(ft)), _outcome(lambda: fn(torch))
    assert repr(got) == repr(want), (got, want)  # (repr: NaNs and signed zeros compare)


INT_POW = {
    "int64 ** 64": lambda L: L.tensor([2, 3, -1]) ** 64,
    "int8 ** tensor 100": lambda L: L.tensor([2], dtype=L.int8) ** L.tensor([100]),
    "int16 ** 300": lambda L: L.tensor([-3, 1, 7, 2], dtype=L.int16) ** 300,
    "int32 ** mixed": lambda L: L.tensor([5, -7, 0, 1], dtype=L.int32) ** L.tensor([0, 3, 0, 70]),
    "uint8 ** 7": lambda L: L.tensor([200, 3], dtype=L.uint8) ** 7,
    "scalar ** int tensor": lambda L: 3 ** L.tensor([40, 63, 64]),
    "negative exponents": lambda L: L.tensor([2, -2, 1, -1]) ** L.tensor([-1, -3, -5, -5]),
    "in place": lambda L: L.tensor([3, 5]).pow_(65),
}

COMPLEX_POW = {
    "zero ** (1+2j)": lambda L: L.tensor([0.0, 1.0]) ** (1 + 2j),
    "zero ** 0j tensor": lambda L: L.tensor([0.0]) ** L.tensor(0j),
    "zero ** -1": lambda L: L.tensor([0j]) ** (-1 + 0j),
    "zero ** 2j": lambda L: L.tensor([0j, 2j]) ** L.tensor([2j, 0.5]),
    "bool ** complex": lambda L: L.tensor([True, False]) ** (1 + 2j),
    "complex128 zero ** real": lambda L: L.tensor([0j, 1j], dtype=L.complex128) ** L.tensor([1.5, 2.0]),
}

SPACES = {
    "linspace 0..1j": lambda L: L.linspace(0, 1j, 5),
    "logspace 0..1j": lambda L: L.logspace(0, 1j, 3),
    "linspace complex128": lambda L: L.linspace(1 + 1j, 2, 4, dtype=L.complex128),
    "logspace base 2": lambda L: L.logspace(0, 1j, 3, base=2),
    "linspace one step": lambda L: L.linspace(2j, 2j, 1),
    "linspace complex tensor end": lambda L: L.linspace(0, L.tensor(1j), 3),
    "linspace real dtype": lambda L: L.linspace(0, 1j, 3, dtype=L.float64),
    "linspace int dtype": lambda L: L.linspace(0, 1j, 3, dtype=L.int64),
    "logspace real dtype": lambda L: L.logspace(0, 1j, 3, dtype=L.float32),
    "linspace real into complex": lambda L: L.linspace(0, 1, 3, dtype=L.complex64),
}

FLOOR_DIV = {
    "2.5 // int with 0": lambda L: 2.5 // L.tensor([1, 0]),
    "2.5 % bool": lambda L: 2.5 % L.tensor([True, False]),
    "floor_divide(2.5, bool)": lambda L: L.floor_divide(2.5, L.tensor([False])),
    "remainder(2.5, int)": lambda L: L.remainder(2.5, L.tensor([3, 0])),
    "int // int 0 still raises": lambda L: 2 // L.tensor([1, 0]),
    "int tensor // 0 still raises": lambda L: L.tensor([1, 0]) // 0,
}


def _c(L):
    return L.tensor([1 + 2j, 3j])


COMPLEX_REFUSED = {
    "lt": lambda L: _c(L) < _c(L), "ge scalar": lambda L: _c(L) >= 1j, "gt real scalar": lambda L: _c(L) > 1,
    "le": lambda L: L.le(_c(L), _c(L)), "real < complex scalar": lambda L: L.tensor([1.0, 2.0]) < 1j,
    "maximum": lambda L: L.maximum(_c(L), _c(L)), "minimum": lambda L: L.minimum(_c(L), _c(L)),
    "fmax": lambda L: L.fmax(_c(L), _c(L)), "fmin": lambda L: L.fmin(_c(L), _c(L)),
    "max(a, b)": lambda L: L.max(_c(L), _c(L)),
    "sort": lambda L: L.sort(_c(L)), "sort stable": lambda L: L.sort(_c(L), stable=True),
    "argsort": lambda L: _c(L).argsort(), "msort": lambda L: L.msort(_c(L)), "topk": lambda L: L.topk(_c(L), 1),
    "max": lambda L: _c(L).max(), "max dim": lambda L: _c(L).max(0), "min": lambda L: _c(L).min(),
    "min dim": lambda L: _c(L).min(0), "amax": lambda L: _c(L).amax(), "amin": lambda L: _c(L).amin(),
    "aminmax": lambda L: L.aminmax(_c(L)), "argmax": lambda L: _c(L).argmax(), "argmin": lambda L: _c(L).argmin(),
    "cummax": lambda L: L.cummax(_c(L), 0), "cummin": lambda L: L.cummin(_c(L), 0),
    "kthvalue": lambda L: _c(L).kthvalue(1), "median": lambda L: _c(L).median(),
    "median dim": lambda L: _c(L).median(0), "nanmedian": lambda L: _c(L).nanmedian(), "mode": lambda L: _c(L).mode(),
    "clamp": lambda L: L.clamp(_c(L), 0, 1), "clamp_": lambda L: _c(L).clamp_(0, 1),
    "clamp tensor": lambda L: L.clamp(_c(L), min=_c(L)), "clamp_min": lambda L: _c(L).clamp_min(0),
    "clamp_max": lambda L: _c(L).clamp_max(1), "relu": lambda L: L.relu(_c(L)),
    "hardtanh": lambda L: L.nn.functional.hardtanh(_c(L)), "relu6": lambda L: L.nn.functional.relu6(_c(L)),
    "atan2": lambda L: L.atan2(_c(L), _c(L)), "xlogy": lambda L: L.xlogy(_c(L), _c(L)),
    "floor": lambda L: _c(L).floor(), "ceil": lambda L: _c(L).ceil(), "trunc": lambda L: _c(L).trunc(),
    "round": lambda L: _c(L).round(), "frac": lambda L: _c(L).frac(), "fmod": lambda L: L.fmod(_c(L), _c(L)),
    "remainder": lambda L: _c(L) % _c(L), "floor_divide": lambda L: _c(L) // _c(L),
    "copysign": lambda L: L.copysign(_c(L), _c(L)), "signbit": lambda L: L.signbit(_c(L)),
    "isposinf": lambda L: L.isposinf(_c(L)), "isneginf": lambda L: L.isneginf(_c(L)),
    "searchsorted": lambda L: L.searchsorted(_c(L), _c(L)), "bucketize": lambda L: L.bucketize(_c(L), _c(L)),
    "eq is fine": lambda L: _c(L) == _c(L), "abs is fine": lambda L: _c(L).abs(),
}


@pytest.mark.parametrize("name", sorted(INT_POW))
def test_integer_pow_as_torch(name):
    _same(INT_POW[name])


@pytest.mark.parametrize("name", sorted(COMPLEX_POW))
def test_complex_pow_of_zero_as_torch(name):
    _same(COMPLEX_POW[name])


def _raised_or(fn, check):
    """torch's error where torch raises, else ``check(got, want)`` on the (dtype, values) outcomes."""
    got, want = _outcome(lambda: fn(ft)), _outcome(lambda: fn(torch))
    if want[0] == "raised":
        assert got == want
    else:
        check(got, want)


def _close_values(got, want):
    assert got[0][0] == want[0][0]
    np.testing.assert_allclose(np.asarray(got[0][1], dtype=complex), np.asarray(want[0][1], dtype=complex),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(SPACES))
def test_complex_spaces_as_torch(name):
    _raised_or(SPACES[name], _close_values)


def test_complex_linspace_under_a_float64_default():
    for L in (ft, torch):
        prev = L.get_default_dtype()
        L.set_default_dtype(L.float64)
        try:
            x = L.linspace(0, 1j, 3)
            assert x.dtype == L.complex128 and x.numpy().tolist() == [0j, 0.5j, 1j]
            with pytest.raises(RuntimeError, match=r"inferred dtype c10::complex<double> can't be safely cast to "
                                                   "passed dtype Float"):
                L.linspace(0, 1j, 3, dtype=L.float32)
        finally:
            L.set_default_dtype(prev)


@pytest.mark.parametrize("name", sorted(FLOOR_DIV))
def test_float_scalar_floor_divide_by_an_int_zero(name):
    _same(FLOOR_DIV[name])


@pytest.mark.parametrize("name", sorted(COMPLEX_REFUSED))
def test_complex_inputs_refused_as_torch(name):
    def computed(got, want):
        assert got[0] != "raised"
    _raised_or(COMPLEX_REFUSED[name], computed)


def _u(L, name):
    return L.tensor([1, 2, 3], dtype=getattr(L, name))


WIDE_UNSIGNED = {
    "eq": lambda L, n: _u(L, n) == _u(L, n), "ne scalar": lambda L, n: _u(L, n) != 2,
    "mul": lambda L, n: _u(L, n) * _u(L, n), "mul scalar": lambda L, n: _u(L, n) * 2,
    "div": lambda L, n: _u(L, n) / _u(L, n), "and": lambda L, n: _u(L, n) & _u(L, n),
    "or": lambda L, n: _u(L, n) | _u(L, n), "xor": lambda L, n: _u(L, n) ^ _u(L, n),
    "cat": lambda L, n: L.cat([_u(L, n), _u(L, n)]), "stack": lambda L, n: L.stack([_u(L, n), _u(L, n)]),
    "sqrt": lambda L, n: _u(L, n).sqrt(), "sin": lambda L, n: _u(L, n).sin(), "exp": lambda L, n: _u(L, n).exp(),
    "log1p": lambda L, n: _u(L, n).log1p(),
    "add still refused": lambda L, n: _u(L, n) + _u(L, n), "lt still refused": lambda L, n: _u(L, n) < _u(L, n),
}


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("name", sorted(WIDE_UNSIGNED))
def test_wide_unsigned_kernels_as_torch(name, dt):
    _raised_or(lambda L: WIDE_UNSIGNED[name](L, dt), _close_values)


BIG_NUMBERS = {
    "float32 tensor of 2**63": lambda L: L.tensor([2 ** 63], dtype=L.float32),
    "float list with 2**64": lambda L: L.tensor([1.0, 2 ** 64]),
    "uint64 max": lambda L: L.tensor([2 ** 64 - 1], dtype=L.uint64),
    "float64 of 2**100": lambda L: L.tensor(2 ** 100, dtype=L.float64),
    "int64 of 2**63 still raises": lambda L: L.tensor(2 ** 63),
    "int list of 2**64 still raises": lambda L: L.tensor([2 ** 64]),
    "int32 == 2**63": lambda L: L.tensor([1], dtype=L.int32) == 2 ** 63,
    "int8 + 2**63": lambda L: L.tensor([1], dtype=L.int8) + 2 ** 63,
    "int64 + 2**63 wraps": lambda L: L.tensor([1]) + 2 ** 63,
    "int64 < 2**63": lambda L: L.tensor([1]) < 2 ** 63,
    "float32 * 2**63": lambda L: L.ones(1) * 2 ** 63,
    "fill_ 2**63": lambda L: L.zeros(1).fill_(2 ** 63),
    "int64 == 2**64 raises": lambda L: L.tensor([1]) == 2 ** 64,
    "float32 + 2**70 raises": lambda L: L.tensor([1.0]) + 2 ** 70,
    "pow 1e40": lambda L: L.tensor([0.5, 2.0]) ** 1e40,
    "pow_ 3.5e38": lambda L: L.tensor([0.5, 2.0]).pow_(3.5e38),
    "pow -1e40": lambda L: L.tensor([0.5, 2.0]) ** -1e40,
}


@pytest.mark.parametrize("name", sorted(BIG_NUMBERS))
def test_python_numbers_past_int64_or_float32_as_torch(name):
    _same(BIG_NUMBERS[name])


CHECKS = {
    "isclose int / float": lambda L: L.isclose(L.tensor([1]), L.tensor([1.0])),
    "isclose float32 / float64": lambda L: L.isclose(L.ones(1), L.ones(1, dtype=L.float64)),
    "isclose rtol < 0": lambda L: L.isclose(L.ones(1), L.ones(1), rtol=-1),
    "isclose atol < 0": lambda L: L.isclose(L.ones(1), L.ones(1), atol=-0.5),
    "isclose fine": lambda L: L.isclose(L.ones(2), L.tensor([1.0, 1.1])),
    "allclose int / float": lambda L: L.allclose(L.tensor([1]), L.tensor([1.0])),
    "tensor of complex as int64": lambda L: L.tensor([2.9 + 1j], dtype=L.int64),
    "tensor of complex as float32": lambda L: L.tensor([2.9 + 1j], dtype=L.float32),
    "tensor of a complex scalar as float32": lambda L: L.tensor(2.9 + 1j, dtype=L.float32),
    "tensor of complex as complex64": lambda L: L.tensor([2.9 + 1j, 2], dtype=L.complex64),
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_argument_checks_as_torch(name):
    got, want = _outcome(lambda: CHECKS[name](ft)), _outcome(lambda: CHECKS[name](torch))
    if isinstance(want, tuple) or isinstance(got, tuple):  # (allclose: a Python bool)
        assert got == want
    else:
        _same(CHECKS[name])
