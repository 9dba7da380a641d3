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


# a complex -> real cast warns once (torch's TORCH_WARN_ONCE, repeated under set_warn_always): a reduction's real
# dtype= and bincount's real weights of complex values warn; a cast to bool does not
def _z(m):
    return m.tensor([1 + 1j, 2 - 1j])


DISCARDS_IMAG = {
    "bool": lambda m: _z(m).bool(),
    "to_bool": lambda m: _z(m).to(m.bool),
    "copy_bool": lambda m: m.zeros(2, dtype=m.bool).copy_(_z(m)),
    "sum": lambda m: _z(m).sum(dtype=m.float32),
    "mean": lambda m: _z(m).mean(dtype=m.float32),
    "prod": lambda m: _z(m).prod(dtype=m.float64),
    "cumsum": lambda m: _z(m).cumsum(0, dtype=m.float32),
    "bincount": lambda m: m.bincount(m.tensor([0, 1]), weights=_z(m)),
    "int": lambda m: _z(m).int(),
    "copy": lambda m: m.zeros(2).copy_(_z(m)),
}


@pytest.mark.parametrize("name", sorted(DISCARDS_IMAG))
def test_complex_to_real_warning_as_torch(name):
    from functorch_lite.ops._registry import OPS
    from _parity import warnings_of
    for op in ("sum", "mean", "prod", "cumsum", "bincount"):
        OPS[op].cache.clear()  # (the warning comes from the dtype rule: once per signature, as torch's once)
    fn = DISCARDS_IMAG[name]
    assert warnings_of(ft, fn) == warnings_of(torch, fn)
    assert_same_outcome(fn, torch, ft)


@pytest.mark.parametrize("case", [
    lambda m: m.nn.functional.mish(m.tensor([1 + 1j])),
    lambda m: m.nn.functional.mish(m.tensor([1 + 1j]), inplace=True),
    lambda m: m.nn.functional.mish(m.tensor([1])),
    lambda m: m.nn.functional.gelu(m.tensor([1 + 1j]), approximate="tanh"),
])
def test_mish_refuses_complex_as_torch(case):
    assert_same_outcome(case, torch, ft)


def _zc(m):
    return m.tensor([1 + 1j], dtype=m.complex128)


def _rc(m):
    return m.tensor([1.], dtype=m.float64)


# complex clamps: the Tensor overloads name their kernel, clamp of a complex input and the Scalar overloads refuse
CLAMPS = [
    lambda m: m.clamp_min(_zc(m), _zc(m)), lambda m: m.clamp_min(_zc(m), 1.), lambda m: m.clamp_min(_rc(m), _zc(m)),
    lambda m: m.clamp_max(_zc(m), _zc(m)), lambda m: m.clamp_max(_zc(m), 1), lambda m: m.clamp_max(_rc(m), _zc(m)),
    lambda m: m.clamp(_zc(m), min=_zc(m)), lambda m: m.clamp(_zc(m), 1.), lambda m: m.clamp(_rc(m), min=_zc(m)),
    lambda m: m.clamp(_rc(m), max=_zc(m)), lambda m: m.clamp(_rc(m), min=_rc(m), max=_zc(m)),
    lambda m: _zc(m).clamp_(min=_zc(m)), lambda m: m.clamp_min(_rc(m), 1j), lambda m: m.relu(_zc(m)),
]


@pytest.mark.parametrize("i", range(len(CLAMPS)))
def test_complex_clamp_errors_as_torch(i):
    assert_same_outcome(CLAMPS[i], torch, ft)


def test_new_tensor_copy_construct_warning_names_new_tensor():
    from _parity import warnings_of
    for fn in (lambda m: m.ones(2).new_tensor(m.ones(2)), lambda m: m.tensor(m.ones(2))):
        assert warnings_of(ft, fn) == warnings_of(torch, fn)


def test_deepcopy_of_views_on_a_grown_storage():
    import copy

    def fn(m):
        y = m.arange(4.)
        v = y[1:3]
        y.resize_(2, 4)
        a, b = copy.deepcopy((y, v))
        b.add_(10)
        return a[0]
    assert_same_outcome(fn, torch, ft)


def test_every_hook_handle_is_torch_utils_hooks_removable_handle():
    def fn(m):
        x = m.tensor([1., 2.], requires_grad=True)
        y = x * 2
        handles = [y.grad_fn.register_hook(lambda gi, go: None), y.grad_fn.register_prehook(lambda go: None),
                   x.register_hook(lambda g: g * 3), m.nn.Linear(2, 2).register_forward_hook(lambda *a: None)]
        y.sum().backward()
        handles[2].remove()
        x.grad = None
        (x * 2).sum().backward()
        return [type(h).__name__ for h in handles], [isinstance(h, m.utils.hooks.RemovableHandle) for h in handles], \
            m.autograd.graph.RemovableHandle is m.utils.hooks.RemovableHandle, x.grad.tolist()
    assert fn(ft) == fn(torch)


def test_a_leafs_first_gradient_has_its_layout():
    """torch's gradient layout contract: a dense non-contiguous leaf (channels_last weight, transposed matrix) gets a
    gradient of its strides; a non-dense one a contiguous gradient; accumulation keeps the layout."""
    def fn(m):
        c = m.nn.Conv2d(3, 4, 3).to(memory_format=m.channels_last)
        c(m.ones(2, 3, 5, 5)).sum().backward()
        first = (c.weight.grad.stride(), c.bias.grad.stride())
        c(m.ones(2, 3, 5, 5)).sum().backward()
        w = m.zeros(2, 3).t().requires_grad_()
        (w * m.arange(6.).view(3, 2)).sum().backward()
        x = m.zeros(4, 3)[::2].requires_grad_()
        (x * 2).sum().backward()
        return first, c.weight.grad.stride(), round(c.weight.grad.sum().item(), 3), w.grad.stride(), \
            w.grad.tolist(), x.grad.stride()
    assert fn(ft) == fn(torch)


@pytest.mark.parametrize("case", [
    lambda m: m.zeros(2).resize_(3, 0).stride(),
    lambda m: m.zeros(2).resize_(2, 0, 2, 2, memory_format=m.channels_last).stride(),
    lambda m: m.zeros(2, 3, 0, 2).to(memory_format=m.channels_last).stride(),
    lambda m: m.zeros(2, 0, 2, 2).clone(memory_format=m.channels_last).stride(),
    lambda m: m.zeros(2).resize_(3, memory_format=m.channels_last),
])
def test_memory_format_strides_of_empty_tensors(case):
    """One place for a format's strides (memory_format._strides): contiguous counts a 0 size as 1, channels-last
    multiplies the sizes as they are (torch's get_channels_last_strides)."""
    assert_same_outcome(case, torch, ft)
