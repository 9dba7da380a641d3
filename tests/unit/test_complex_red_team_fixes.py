"""Parity with torch 2.13 for the complex red-team findings: complex numbers written into real tensors, branch
cuts at a signed-zero imaginary part, the exact special exponents of complex pow, in-place abs, softmax and the
real-only unary kernels on complex inputs, kernel names in dtype errors."""
import math

import pytest
import torch

import functorch_lite as fl


def _run(lib, fn):
    try:
        return ("ok", fn(lib))
    except Exception as e:  # noqa: BLE001
        return ("err", type(e).__name__, str(e))


def _same_error(fn):
    a, b = _run(torch, fn), _run(fl, fn)
    assert a[0] == "err", a
    assert b[:3] == a[:3], (b, a)


def _bits(v):
    """A complex number as (real, imag) with the signs of zeros kept (repr tells -0.0 from 0.0)."""
    return repr(v.real), repr(v.imag)


def _same_values(fn, exact=True):
    a, b = fn(torch), fn(fl)
    if exact:
        assert [_bits(complex(v)) for v in b] == [_bits(complex(v)) for v in a], (b, a)
    else:
        for x, y in zip(b, a):
            assert math.isclose(x.real, y.real, rel_tol=1e-5, abs_tol=1e-6) and \
                math.isclose(x.imag, y.imag, rel_tol=1e-5, abs_tol=1e-6), (b, a)


# ---- 1. a complex number into a real / integer tensor ----------------------------------------------
REAL_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int8", "uint8", "bool"]


def _setitem(idx, value, dt):
    def f(t):
        x = t.zeros(2, dtype=getattr(t, dt))
        i = idx(t)
        x[i] = value
        return x.tolist()
    return f


@pytest.mark.parametrize("dt", REAL_DTYPES)
@pytest.mark.parametrize("value", [1 + 2j, 1j, 1 + 0j])
def test_setitem_complex_value(dt, value):
    for idx in (lambda t: 0, lambda t: slice(None), lambda t: t.tensor([True, False]), lambda t: t.tensor([0])):
        f = _setitem(idx, value, dt)
        a = _run(torch, f)
        assert _run(fl, f)[:3] == a[:3]


@pytest.mark.parametrize("dt", REAL_DTYPES)
@pytest.mark.parametrize("value", [1 + 2j, 1 + 0j])
def test_masked_fill_scatter_complex_value(dt, value):
    for f in (lambda t: t.zeros(2, dtype=getattr(t, dt)).masked_fill(t.tensor([True, False]), value).tolist(),
              lambda t: t.zeros(2, dtype=getattr(t, dt)).masked_fill(t.tensor([True, False]),
                                                                     t.tensor(value)).tolist(),
              lambda t: t.zeros(2, dtype=getattr(t, dt)).scatter(0, t.tensor([0]), value).tolist(),
              lambda t: t.zeros(2, dtype=getattr(t, dt)).scatter_(0, t.tensor([0]), value,
                                                                  reduce="add").tolist()):
        a = _run(torch, f)
        assert _run(fl, f)[:3] == a[:3]


@pytest.mark.parametrize("dt", REAL_DTYPES)
@pytest.mark.parametrize("value", [1 + 2j, 1 + 0j])
def test_index_fill_complex_value(dt, value):
    _same_error(lambda t: t.zeros(2, dtype=getattr(t, dt)).index_fill(0, t.tensor([0]), value))
    _same_error(lambda t: t.zeros(2, dtype=getattr(t, dt)).index_fill_(0, t.tensor([0]), value))
    _same_error(lambda t: t.zeros(2, dtype=getattr(t, dt)).index_fill(0, t.tensor([0]), t.tensor(value)))


def test_index_fill_complex_into_complex_still_works():
    f = lambda t: t.zeros(2, dtype=t.complex64).index_fill(0, t.tensor([0]), 1 + 2j).tolist()  # noqa: E731
    assert f(fl) == f(torch)


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_clamp_complex_bound_on_float(dt):
    _same_error(lambda t: t.zeros(2, dtype=getattr(t, dt)).clamp(min=1j))
    _same_error(lambda t: t.zeros(2, dtype=getattr(t, dt)).clamp(min=-1, max=1 + 1j))


# (bool tensors left out: torch's in-place cast / bool-subtraction errors come before its alpha check, ours after)
@pytest.mark.parametrize("dt", [d for d in REAL_DTYPES if d != "bool"])
@pytest.mark.parametrize("alpha", [1j, 1 + 0j, 2 + 3j])
def test_add_sub_complex_alpha(dt, alpha):
    for f in (lambda t: t.zeros(2, dtype=getattr(t, dt)).add(1, alpha=alpha),
              lambda t: t.zeros(2, dtype=getattr(t, dt)).add_(1, alpha=alpha),
              lambda t: t.zeros(2, dtype=getattr(t, dt)).add(t.ones(2, dtype=getattr(t, dt)), alpha=alpha),
              lambda t: t.zeros(2, dtype=getattr(t, dt)).sub(1, alpha=alpha)):
        _same_error(f)


def test_add_complex_alpha_on_complex_tensor():
    f = lambda t: t.ones(2, dtype=t.complex64).add(1, alpha=1j).tolist()  # noqa: E731
    assert f(fl) == f(torch)


@pytest.mark.parametrize("dt", ["float32", "float16", "float64", "int64", "int8"])
def test_addcmul_addcdiv_complex_value(dt):
    for op in ("addcmul", "addcdiv"):
        f = lambda t: getattr(t.zeros(2, dtype=getattr(t, dt)), op)(  # noqa: E731
            t.ones(2, dtype=getattr(t, dt)), t.ones(2, dtype=getattr(t, dt)), value=1j)
        _same_error(f)
    g = lambda t: t.zeros(2).addcmul(t.ones(2), t.full((2,), 3.), value=2 + 0j).tolist()  # noqa: E731
    assert g(fl) == g(torch)


# ---- 2. branch cuts -------------------------------------------------------------------------------
NZ = -0.0
CUT_VALUES = [complex(-4, 0.0), complex(-4, NZ), complex(2, 0.0), complex(2, NZ), complex(-2, 0.0), complex(-2, NZ),
              complex(0.0, 2), complex(NZ, 2), complex(0.0, -2), complex(NZ, -2), complex(0.5, 0.0),
              complex(0.5, NZ), complex(-1, 0.0), complex(-1, NZ), complex(1, 0.0), complex(1, NZ),
              complex(0.0, 0.0), complex(NZ, NZ), complex(3, 4), complex(-3, -4), complex(NZ, -0.5)]


@pytest.mark.parametrize("name", ["sqrt", "log", "acos", "asin", "atan", "acosh", "asinh", "atanh", "exp", "tanh"])
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_branch_cuts_signed_zero(name, dt):
    def f(t):
        return [complex(round(v.real, 4), round(v.imag, 4)) if v == v else v
                for v in getattr(t, name)(t.tensor(CUT_VALUES, dtype=getattr(t, dt))).tolist()]
    a, b = f(torch), f(fl)
    assert [_bits(v) for v in b] == [_bits(v) for v in a]


def test_branch_cut_examples():
    _same_values(lambda t: t.tensor([-4 + 0j]).conj().sqrt().tolist())
    _same_values(lambda t: t.acos(t.tensor([complex(2, -0.0)])).tolist(), exact=False)
    assert fl.acos(fl.tensor([complex(2, -0.0)])).tolist()[0].imag > 0
    assert fl.acosh(fl.tensor([complex(-1, -0.0)])).tolist()[0].imag == pytest.approx(-math.pi)


@pytest.mark.parametrize("name", ["sqrt", "acos", "asin", "atan", "acosh", "asinh", "atanh", "exp", "tanh", "log"])
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_branch_cut_grads(name, dt):
    vals = [complex(0.3, 0.4), complex(-1.5, 0.7), complex(2.5, -0.3), complex(-0.2, -1.7), complex(-4, -0.0),
            complex(0.5, 0.0)]

    def f(t):
        z = t.tensor(vals, dtype=getattr(t, dt), requires_grad=True)
        c = t.tensor([complex(1, 2)] * len(vals), dtype=getattr(t, dt))
        (getattr(t, name)(z) * c).real.sum().backward()
        return z.grad.tolist()
    _same_values(f, exact=False)


def test_branch_cut_real_inputs_unchanged():
    for name in ("sqrt", "acos", "asin", "atan", "asinh", "atanh", "exp"):
        f = lambda t: getattr(t, name)(t.tensor([0.25, 0.5, 0.75])).tolist()  # noqa: E731
        assert f(fl) == pytest.approx(f(torch))


# ---- 3. complex pow with special exponents -------------------------------------------------------
POW_BASES = [1 + 2j, 3 - 4j, -4 + 0j, complex(-4, -0.0), 0.5 - 0.25j, 0j, complex(-2.5, 1e-3)]


@pytest.mark.parametrize("e", [0, 1, 2, 3, -1, 0.5, -0.5, 1.0, 2.0, 3.0, -1.0])
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_pow_special_exponents_exact(e, dt):
    # (exact on bases whose powers are representable; the last one, within rounding: XLA may fuse z * z * z)
    _same_values(lambda t: (t.tensor(POW_BASES[:-1], dtype=getattr(t, dt)) ** e).tolist())
    _same_values(lambda t: t.tensor(POW_BASES[:-1], dtype=getattr(t, dt)).pow_(e).tolist())
    _same_values(lambda t: (t.tensor(POW_BASES[-1:], dtype=getattr(t, dt)) ** e).tolist(), exact=False)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_pow_other_exponents_close(dt):
    for e in (-2, 4, 1.5, 3.5):
        _same_values(lambda t: (t.tensor(POW_BASES[:5], dtype=getattr(t, dt)) ** e).tolist(), exact=False)
    _same_values(lambda t: (t.tensor(POW_BASES[:5], dtype=getattr(t, dt)) ** t.tensor(2)).tolist(), exact=False)


def test_pow_examples():
    assert (fl.tensor([1 + 2j]) ** 1).tolist() == [(1 + 2j)]
    assert (fl.tensor([3 - 4j]) ** 2).tolist() == [(-7 - 24j)]
    assert (fl.tensor([-4 + 0j]) ** 0.5).tolist() == [2j]


@pytest.mark.parametrize("e", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 1.5])
def test_pow_special_exponent_grads(e):
    def f(t):
        z = t.tensor([0.3 + 0.4j, -1.5 + 0.7j, 2.5 - 0.3j], dtype=t.complex128, requires_grad=True)
        ((z ** e) * t.tensor(1 + 2j, dtype=t.complex128)).real.sum().backward()
        return z.grad.tolist()
    _same_values(f, exact=False)


def test_pow_tensor_exponent_grad():
    def f(t):
        z = t.tensor([0.3 + 0.4j, -1.5 + 0.7j], dtype=t.complex128, requires_grad=True)
        y = t.tensor(2.0 + 0j, dtype=t.complex128, requires_grad=True)
        (z ** y).abs().sum().backward()
        return z.grad.tolist() + [y.grad.item()]
    _same_values(f, exact=False)


# ---- 4. in-place abs of a complex tensor ------------------------------------------------------------
def test_abs_inplace_complex():
    _same_error(lambda t: t.tensor([3 + 4j]).abs_())
    _same_error(lambda t: t.tensor([3 + 4j]).absolute_())
    _same_error(lambda t: t.abs_(t.tensor([3 + 4j])))
    f = lambda t: t.tensor([-3.0, 2.0]).abs_().tolist()  # noqa: E731
    assert f(fl) == f(torch)
    g = lambda t: t.abs(t.tensor([3 + 4j])).tolist()  # noqa: E731
    assert g(fl) == g(torch)


# ---- 5. softmax / log_softmax of complex ---------------------------------------------------------------
def test_softmax_complex():
    _same_error(lambda t: t.log_softmax(t.tensor([1j, 2 + 0j]), 0))
    _same_error(lambda t: t.softmax(t.tensor([1j, 2 + 0j]), 0))
    _same_error(lambda t: t.softmax(t.ones(2, 2, dtype=t.complex128), 0))
    _same_error(lambda t: t.log_softmax(t.ones(2, 2, dtype=t.complex64), 0))
    _same_error(lambda t: t.softmax(t.ones(2, 2, dtype=t.complex64), 1))
    _same_error(lambda t: t.nn.functional.softmax(t.tensor([1j, 2 + 0j]), 0))
    _same_error(lambda t: t.nn.functional.log_softmax(t.tensor([1j, 2 + 0j]), -1))
    _same_error(lambda t: t.softmax(t.ones(2), 0, dtype=t.complex64))


# ---- 6. real-only unary kernels -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "lgamma", "digamma"])
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_real_only_unary_on_complex(name, dt):
    _same_error(lambda t: getattr(t, name)(t.tensor([0.5 + 0.5j, 1 + 0j], dtype=getattr(t, dt))))
    _same_error(lambda t: getattr(t.tensor([0.5 + 0.5j], dtype=getattr(t, dt)).clone(), name + "_")())


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "gammaln", "digamma", "psi"])
def test_special_real_only_on_complex(name):
    _same_error(lambda t: getattr(t.special, name)(t.tensor([0.5 + 0.5j])))


# ---- 7. kernel names --------------------------------------------------------------------------------
def test_round_decimals_complex_kernel_name():
    _same_error(lambda t: t.tensor([1j]).round(decimals=2))
    _same_error(lambda t: t.tensor([1j]).round())
    f = lambda t: t.tensor([1.2345]).round(decimals=2).tolist()  # noqa: E731
    assert f(fl) == f(torch)


# the special functions with real-only kernels: complex input raises torch's error naming the kernel (these
# computed a complex value, or leaked JAX's TypeError)
_REAL_SPECIAL = ["logit", "i0", "special.i0e", "special.i1", "special.i1e", "special.erfcx", "special.ndtr",
                 "special.ndtri", "special.log_ndtr", "special.entr", "special.xlog1py:1", "special.zeta:1",
                 "special.polygamma:n0", "special.polygamma:n1", "special.polygamma:n3", "mvlgamma:m",
                 "special.bessel_j0", "special.bessel_j1", "special.modified_bessel_i0", "special.airy_ai",
                 "special.spherical_bessel_j0", "special.multigammaln:m", "igamma:z", "igammac:z"]


@pytest.mark.parametrize("spec", _REAL_SPECIAL)
def test_real_only_special_functions_refuse_complex(spec):
    name, _, extra = spec.partition(":")

    def call(T):
        f = T
        for part in name.split("."):
            f = getattr(f, part)
        z = T.tensor([0.5 + 0.5j, 1 + 1j])
        if extra == "m":
            return f(z, 1)
        if extra == "z":
            return f(z, z)
        if extra == "1":
            return f(z, 1.0)
        if extra:  # ("n<k>": polygamma's order)
            return f(int(extra[1:]), z)
        return f(z)
    _same_error(call)
