"""Sweep cases (test_grad_sweep.py, test_op_table_sweep.py) of the complex ops (ops/complex_ops.py).

Inputs are real arrays; complex values are built in float64 (``cx``) so every input dtype of the sweep
reaches the op, and every case returns a real tensor. Detailed parity: test_complex.py."""
import numpy as np

R = np.random.default_rng(11)


def rnd(*s):
    return R.standard_normal(s)


def cx(m, a, b):
    return m.complex(a.double(), b.double())


CASES = {
    "real": ([rnd(3, 4), rnd(3, 4)], lambda m, a, b: m.real(cx(m, a, b))),
    "imag": ([rnd(3, 4), rnd(3, 4)], lambda m, a, b: m.imag(cx(m, a, b))),
    "view_as_real": ([rnd(3), rnd(3)], lambda m, a, b: m.view_as_real(cx(m, a, b))),
    "view_as_complex": ([rnd(3, 2)], lambda m, a: m.view_as_complex(a.double()).abs()),
    "conj": ([rnd(4), rnd(4)], lambda m, a, b: (cx(m, a, b).conj() * cx(m, b, a)).imag),
    "conj_physical": ([rnd(4), rnd(4)], lambda m, a, b: (m.conj_physical(cx(m, a, b)) * cx(m, b, a)).imag),
    "resolve_conj": ([rnd(4), rnd(4)], lambda m, a, b: m.view_as_real(cx(m, a, b).conj().resolve_conj())),
    "resolve_neg": ([rnd(4), rnd(4)], lambda m, a, b: cx(m, a, b).conj().imag.resolve_neg()),
    "angle": ([rnd(4), rnd(4)], lambda m, a, b: m.angle(cx(m, a, b)) + m.angle(a)),
    "polar": ([rnd(4), rnd(4)], lambda m, a, b: m.view_as_real(m.polar(a.double().abs() + 0.1, b.double()))),
    "complex": ([rnd(4), rnd(4)], lambda m, a, b: m.view_as_real(m.complex(a.double(), b.double()) * 2)),
    "_complex_convolution": ([rnd(2, 2, 5), rnd(2, 2, 5), rnd(3, 2, 2), rnd(3, 2, 2)],
                             lambda m, xr, xi, wr, wi: m.view_as_real(m.nn.functional.conv1d(cx(m, xr, xi),
                                                                                              cx(m, wr, wi)))),
}
FORWARD_ONLY = {}
