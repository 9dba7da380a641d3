"""Fixes of this file's session, each against real torch 2.13."""
import pytest
import torch

import functorch_lite as ft

from _parity import assert_same_outcome


def _x(m):
    return m.tensor([1., 2.])


def _i(m):
    return m.tensor([4, 6])


# ops whose schema takes only tensors: a Python number raises the argument parser's TypeError, named as torch names
# the call (method, keyword, in-place form, hand-written in-place form) -- one dtype rule, elementwise._tensors_only
TENSORS_ONLY = {
    "logaddexp": lambda m: m.logaddexp(_x(m), 1.0),
    "logaddexp_kw": lambda m: m.logaddexp(_x(m), other=1.0),
    "logaddexp_method": lambda m: _x(m).logaddexp(1.0),
    "logaddexp_input": lambda m: m.logaddexp(1.0, _x(m)),
    "logaddexp_input_kw": lambda m: m.logaddexp(input=1.0, other=_x(m)),
    "logaddexp2_kw": lambda m: _x(m).logaddexp2(other=2),
    "gcd": lambda m: m.gcd(_i(m), 2),
    "gcd_method": lambda m: _i(m).gcd(2),
    "gcd_inplace": lambda m: _i(m).gcd_(2),
    "gcd_kw": lambda m: m.gcd(_i(m), other=2),
    "lcm_inplace_kw": lambda m: _i(m).lcm_(other=2),
    "heaviside_method": lambda m: _x(m).heaviside(1.0),
    "heaviside_inplace_kw": lambda m: _x(m).heaviside_(values=1.0),
    "heaviside_input": lambda m: m.heaviside(1.0, _x(m)),
    "dist_method": lambda m: _x(m).dist(1.0),
    "dist_kw": lambda m: m.dist(_x(m), other=1.0, p=1),
    "dist_input": lambda m: m.dist(1.0, _x(m)),
    "addmv_input": lambda m: m.addmv(1.0, m.ones(2, 2), _x(m)),
    "addmv_vec_kw": lambda m: _x(m).addmv(m.ones(2, 2), vec=1.0),
    "addmv_inplace": lambda m: _x(m).addmv_(1.0, _x(m)),
    "addr_kw": lambda m: m.ones(2, 2).addr(_x(m), vec2=2),
    "addr_inplace": lambda m: m.ones(2, 2).addr_(1.0, _x(m)),
    "addbmm_kw": lambda m: m.ones(2, 2).addbmm(m.ones(2, 2, 2), batch2=1.0),
    "addbmm_inplace": lambda m: m.ones(2, 2).addbmm_(1.0, m.ones(2, 2, 2)),
    "ldexp_method": lambda m: _x(m).ldexp(2),
    "ldexp_inplace_kw": lambda m: _x(m).ldexp_(other=2),
    "ldexp_input": lambda m: m.ldexp(2.0, _x(m)),
    "nextafter_method": lambda m: _x(m).nextafter(2.0),
    "nextafter_inplace_kw": lambda m: _x(m).nextafter_(other=2.0),
    "igamma_method": lambda m: _x(m).igamma(2.0),
    "igammac_inplace_kw": lambda m: _x(m).igammac_(other=2.0),
    "igammac_kw": lambda m: m.igammac(_x(m), other=1.0),
    "gammainc": lambda m: m.special.gammainc(_x(m), 2.0),
    # and the tensors' values where they are tensors
    "igamma_inplace": lambda m: _x(m).igamma_(m.tensor([2., 3.])).mul(1e4).round(),
    "heaviside_inplace": lambda m: _x(m).sub(1).heaviside_(m.tensor([5., 5.])),
}
_F8 = lambda m: _x(m).to(m.float8_e4m3fn)  # noqa: E731
# float8 ldexp fails where torch's input * pow(2, other) does: pow first, then promotion or ldexp_cpu
for _i_, (_a, _b) in enumerate([(_F8, _F8), (_F8, _x), (_x, _F8), (_F8, _i), (_i, _F8)]):
    TENSORS_ONLY[f"ldexp_f8_{_i_}"] = lambda m, a=_a, b=_b: m.ldexp(a(m), b(m))
TENSORS_ONLY["ldexp_f8_inplace"] = lambda m: _F8(m).ldexp_(_i(m))
TENSORS_ONLY["ldexp_inplace_f8"] = lambda m: _x(m).ldexp_(_F8(m))


@pytest.mark.parametrize("name", sorted(TENSORS_ONLY))
def test_tensors_only_ops_refuse_numbers_as_torch(name):
    assert_same_outcome(TENSORS_ONLY[name], torch, ft)
