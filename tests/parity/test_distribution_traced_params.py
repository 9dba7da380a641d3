"""A distribution with one-element parameters built inside torch.func transforms and compile, against torch.

Its argument validation built the error message first, and the message's repr of the distribution reads the value
of each one-element parameter: inside ``func.grad`` / ``vmap`` that raised DataDependentError (torch gives the
result), and inside ``compile`` it was a graph break on every call. The message is now made only when a check fails.
"""
import warnings

import pytest
import torch

import functorch_lite as ft
from _parity import close


def _cases(T):
    D, t = T.distributions, T.tensor
    return {
        "grad_loc": lambda: T.func.grad(lambda m: D.Normal(m, 1.).log_prob(t(0.5)))(t(2.)),
        "grad_rate": lambda: T.func.grad(lambda r: D.Exponential(r).log_prob(t(0.5)))(t(2.)),
        "vmap_loc": lambda: T.func.vmap(lambda m: D.Normal(m, 1.).log_prob(t(0.5)))(t([0., 1.])),
        "vmap_bernoulli": lambda: T.func.vmap(lambda p: D.Bernoulli(p).log_prob(t(1.)))(t([0.2, 0.5])),
        "hessian_scale": lambda: T.func.hessian(lambda s: D.Normal(0., s).log_prob(t(0.5)))(t(2.)),
        "jacrev_gamma": lambda: T.func.jacrev(lambda c: D.Gamma(c, t(1.5)).log_prob(t(0.7)))(t(2.)),
    }


@pytest.mark.parametrize("name", sorted(_cases(torch)))
def test_transform_over_one_element_parameters(name):
    want = _cases(torch)[name]()
    got = _cases(ft)[name]()
    assert close(got.tolist(), want.tolist(), rel=1e-5)  # (digamma: float32 ulps)


def test_compiled_distribution_no_graph_break_and_still_checked():
    """Compiled, the valid call is one program (no graph-break warning) with eager's value; an invalid scale
    still raises eager's ValueError (torch.compile skips the check and returns nan)."""
    # (validate_args=True: the first compile of a process turns the default off, as torch's Dynamo; this test runs
    # alone as in the suite)
    f = ft.compile(lambda s: ft.distributions.Normal(0., s, validate_args=True).log_prob(ft.tensor(0.5)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = f(ft.tensor(2.))
    assert close(float(r), float(torch.distributions.Normal(0., torch.tensor(2.)).log_prob(torch.tensor(0.5))))
    assert f.stats["eager_calls"] == 0
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(\)\) of distribution Normal"):
        f(ft.tensor(-2.))


def test_eager_message_unchanged():
    """Eagerly the message still names the distribution by its values, as torch's."""
    msgs = []
    for T in (torch, ft):
        try:
            T.distributions.Normal(T.tensor(0.), T.tensor(-1.), validate_args=True)
        except ValueError as e:
            msgs.append(str(e))
    assert msgs[0] == msgs[1] and "Normal(loc: 0.0, scale: -1.0)" in msgs[0]
