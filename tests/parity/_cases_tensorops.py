"""Op-table sweep cases for the tensorops ops (functorch_lite/ops/math_extra.py); merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))`` for differentiable ops, ``FORWARD_ONLY``
likewise for ops without a gradient; ``mod`` is torch or functorch_lite.
"""
import numpy as np

R = np.random.default_rng(17)


def _rnd(*s):
    return R.standard_normal(s)


_X0 = np.array([[-1.5, 0.0, 2.0, 0.7], [0.0, -0.3, 1.2, -2.2], [0.4, 0.0, -0.9, 1.1]])

CASES = {
    "logaddexp": ([_rnd(3, 4), _rnd(4)], lambda m, a, b: m.logaddexp(a, b)),
    "logaddexp2": ([_rnd(3, 4), _rnd(3, 1)], lambda m, a, b: a.logaddexp2(b)),
    "deg2rad": ([_rnd(3, 4) * 90], lambda m, a: m.deg2rad(a)),
    "rad2deg": ([_rnd(3, 4)], lambda m, a: a.rad2deg()),
    # heaviside has no derivative (its grad_fn raises, as PyTorch's): its values reach the gradient of x
    "heaviside": ([_X0, _rnd(3, 4)], lambda m, x, y: x * m.heaviside(x.detach(), y.detach())),
    "_mul_scalar": ([_rnd(3, 5)], lambda m, y: m.trapezoid(y, dx=0.5)),
    "_div_scalar": ([_rnd(3, 5), np.sort(_rnd(5))], lambda m, y, x: m.trapezoid(y, x)),
    "nansum": ([_rnd(3, 4)], lambda m, a: m.nansum(a, 1)),
    "nanmedian": ([_rnd(3, 5)], lambda m, a: m.nanmedian(a)),
    "nanmedian_dim": ([_rnd(3, 5)], lambda m, a: m.nanmedian(a, 1)[0]),
    "cummax": ([_rnd(3, 5)], lambda m, a: m.cummax(a, 1)[0]),
    "cummin": ([_rnd(3, 5)], lambda m, a: a.cummin(0).values),
    "logcumsumexp": ([_rnd(3, 5)], lambda m, a: m.logcumsumexp(a, 1)),
    "kthvalue": ([_rnd(3, 5)], lambda m, a: m.kthvalue(a, 2, 1)[0]),
    "mode": ([_rnd(3, 5)], lambda m, a: a.mode(1).values),
    "dist": ([_rnd(3, 4), _rnd(4)], lambda m, a, b: m.dist(a, b, 3)),
    "vdot": ([_rnd(5), _rnd(5)], lambda m, a, b: m.vdot(a, b)),
    "addmv": ([_rnd(3), _rnd(3, 4), _rnd(4)], lambda m, i, a, v: m.addmv(i, a, v, beta=2, alpha=3)),
    "addr": ([_rnd(3, 4), _rnd(3), _rnd(4)], lambda m, i, a, b: m.addr(i, a, b, beta=2, alpha=3)),
    "addbmm": ([_rnd(3, 5), _rnd(2, 3, 4), _rnd(2, 4, 5)], lambda m, i, a, b: m.addbmm(i, a, b, beta=2, alpha=3)),
}

FORWARD_ONLY = {
    "gcd": ([_rnd(3, 4) * 4, _rnd(4) * 4], lambda m, a, b: m.gcd(a, b)),
    "lcm": ([_rnd(3, 4) * 4, _rnd(3, 4) * 4], lambda m, a, b: m.lcm(a, b)),
}
