"""functorch_lite.distributions against torch.distributions 2.13: values and parameter gradients of log_prob /
entropy / mean / mode / variance / cdf / icdf / kl_divergence on the same inputs; shapes, flags, supports,
reprs and validation errors; samples (shapes, dtypes, reproducibility, statistics: the random streams differ);
rsample gradients through fixed-noise identities; a compiled REINFORCE step equal to eager."""
import math
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


@pytest.fixture(autouse=True)
def _validation_on():
    """Argument validation on in both libraries, as by default: importing torch.compile's machinery (any earlier
    test in the process that calls ``torch.compile``) turns torch's off for the whole process."""
    for L in (torch, ft):
        L.distributions.Distribution.set_default_validate_args(True)
    yield

RNG = np.random.default_rng(0)
TOL = dict(rtol=2e-5, atol=2e-5)


def _f32(*shape, lo=None, hi=None):
    x = RNG.standard_normal(shape) if lo is None else RNG.uniform(lo, hi, shape)
    return x.astype(np.float32)


def _spd(*batch, n=3):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def _tril(*batch, n=3):
    a = np.tril(RNG.standard_normal(batch + (n, n)) * 0.5)
    idx = np.arange(n)
    a[..., idx, idx] = np.abs(a[..., idx, idx]) + 0.5
    return a.astype(np.float32)


def _np(t):
    return t.detach().double().numpy() if t.dtype.is_floating_point else t.detach().numpy()


def _close(a, b, what):
    assert str(a.dtype) == str(b.dtype), (what, a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (what, a.shape, b.shape)
    np.testing.assert_allclose(_np(a), _np(b), err_msg=what, equal_nan=True, **TOL)


P = {  # parameters shared by the cases below
    "loc": _f32(2, 3), "scale": _f32(2, 3, lo=0.5, hi=2.0), "probs": _f32(2, 3, lo=0.05, hi=0.95),
    "logits": _f32(2, 3), "cprobs": _f32(2, 4, lo=0.1, hi=1.0), "clogits": _f32(2, 4),
    "low": _f32(3, lo=-2, hi=-1), "high": _f32(3, lo=1, hi=2), "c1": _f32(3, lo=0.5, hi=3), "c0": _f32(3, lo=0.5, hi=3),
    "conc": _f32(2, 4, lo=0.5, hi=3), "rate": _f32(3, lo=0.5, hi=3), "count": np.array([3.0, 5.0, 5.0], np.float32),
    "mloc": _f32(2, 3), "cov": _spd(2), "prec": _spd(2), "tril": _tril(2), "tril1": _tril(),
    "v3": _f32(3, lo=0.05, hi=0.95), "v23": _f32(2, 3), "pos3": _f32(3, lo=0.1, hi=3.0),
}

# name -> (builder(L, p) -> distribution, parameter names, outputs: name -> fn(L, d))
CASES = {
    "normal": (lambda L, p: L.distributions.Normal(p["loc"], p["scale"]), ["loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["v23"])), "icdf": lambda L, d: d.icdf(L.tensor(P["probs"])),
        "mean": lambda L, d: d.mean, "mode": lambda L, d: d.mode, "var": lambda L, d: d.variance,
        "std": lambda L, d: d.stddev, "perplexity": lambda L, d: d.perplexity()}),
    "normal_scalar_f64": (lambda L, p: L.distributions.Normal(p["loc"].double()[0, 0], 2.0), ["loc"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"], dtype=L.float64)),
        "entropy": lambda L, d: d.entropy()}),
    "bernoulli_probs": (lambda L, p: L.distributions.Bernoulli(probs=p["probs"]), ["probs"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([1.0, 0.0, 1.0])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "logits": lambda L, d: d.logits}),
    "bernoulli_logits": (lambda L, p: L.distributions.Bernoulli(logits=p["logits"]), ["logits"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])),
        "entropy": lambda L, d: d.entropy(), "probs": lambda L, d: d.probs, "mode": lambda L, d: d.mode}),
    "categorical_probs": (lambda L, p: L.distributions.Categorical(probs=p["cprobs"]), ["cprobs"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([[3, 0], [1, 1], [2, 0]])), "entropy": lambda L, d: d.entropy(),
        "probs": lambda L, d: d.probs, "logits": lambda L, d: d.logits, "mean": lambda L, d: d.mean,
        "mode": lambda L, d: d.mode}),
    "categorical_logits": (lambda L, p: L.distributions.Categorical(logits=p["clogits"]), ["clogits"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([3, 1])), "entropy": lambda L, d: d.entropy(),
        "probs": lambda L, d: d.probs, "var": lambda L, d: d.variance}),
    "onehot": (lambda L, p: L.distributions.OneHotCategorical(logits=p["clogits"]), ["clogits"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([[0.0, 0, 1, 0], [1, 0, 0, 0]])),
        "entropy": lambda L, d: d.entropy(), "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance,
        "mode": lambda L, d: d.mode}),
    "uniform": (lambda L, p: L.distributions.Uniform(p["low"], p["high"]), ["low", "high"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v3"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["v3"])), "icdf": lambda L, d: d.icdf(L.tensor(P["v3"])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "std": lambda L, d: d.stddev,
        "mode": lambda L, d: d.mode}),
    "beta": (lambda L, p: L.distributions.Beta(p["c1"], p["c0"]), ["c1", "c0"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v3"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode}),
    "gamma": (lambda L, p: L.distributions.Gamma(p["c1"], p["rate"]), ["c1", "rate"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos3"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode,
        "cdf": lambda L, d: L.distributions.Gamma(d.concentration.detach(), d.rate).cdf(L.tensor(P["pos3"]))}),
    "dirichlet": (lambda L, p: L.distributions.Dirichlet(p["conc"]), ["conc"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.4, 0.1]])),
        "entropy": lambda L, d: d.entropy(), "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance}),
    "dirichlet_mode": (lambda L, p: L.distributions.Dirichlet(p["conc"] * L.tensor([[1.0], [0.1]])), ["conc"], {
        "mode": lambda L, d: d.mode}),
    "exponential": (lambda L, p: L.distributions.Exponential(p["rate"]), ["rate"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos3"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["pos3"])), "icdf": lambda L, d: d.icdf(L.tensor(P["v3"])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "std": lambda L, d: d.stddev,
        "mode": lambda L, d: d.mode}),
    "laplace": (lambda L, p: L.distributions.Laplace(p["loc"], p["scale"]), ["loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["v23"])), "icdf": lambda L, d: d.icdf(L.tensor(P["probs"])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "std": lambda L, d: d.stddev}),
    "poisson": (lambda L, p: L.distributions.Poisson(p["rate"]), ["rate"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([0.0, 2.0, 5.0])), "mean": lambda L, d: d.mean,
        "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode}),
    "binomial_probs": (lambda L, p: L.distributions.Binomial(p["count"], probs=p["v3"]), ["v3"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([0.0, 2.0, 5.0])), "mean": lambda L, d: d.mean,
        "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode, "logits": lambda L, d: d.logits}),
    "binomial_logits": (lambda L, p: L.distributions.Binomial(4, logits=p["logits"]), ["logits"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([0.0, 3.0, 4.0])), "entropy": lambda L, d: d.entropy(),
        "support": lambda L, d: d.enumerate_support()}),
    "mvn_cov": (lambda L, p: L.distributions.MultivariateNormal(p["mloc"], covariance_matrix=p["cov"]),
                ["mloc", "cov"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "var": lambda L, d: d.variance, "scale_tril": lambda L, d: d.scale_tril,
        "precision": lambda L, d: d.precision_matrix}),
    "mvn_prec": (lambda L, p: L.distributions.MultivariateNormal(p["mloc"], precision_matrix=p["prec"]),
                 ["mloc", "prec"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "cov": lambda L, d: d.covariance_matrix,
        "mean": lambda L, d: d.mean}),
    "mvn_tril": (lambda L, p: L.distributions.MultivariateNormal(p["mloc"], scale_tril=p["tril1"]),
                 ["mloc", "tril1"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "cov": lambda L, d: d.covariance_matrix, "mode": lambda L, d: d.mode}),
    "lognormal": (lambda L, p: L.distributions.LogNormal(p["loc"][0], p["scale"][0]), ["loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos3"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode,
        "cdf": lambda L, d: d.cdf(L.tensor(P["pos3"])), "icdf": lambda L, d: d.icdf(L.tensor(P["v3"]))}),
    "independent": (lambda L, p: L.distributions.Independent(L.distributions.Normal(p["loc"], p["scale"]), 1),
                    ["loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance}),
    "tanh_normal": (lambda L, p: L.distributions.TransformedDistribution(
        L.distributions.Normal(p["loc"], p["scale"]), [L.distributions.transforms.TanhTransform()]),
        ["loc", "scale"], {"log_prob": lambda L, d: d.log_prob(L.tensor(P["probs"] * 2 - 1))}),
    "affine_sigmoid": (lambda L, p: L.distributions.TransformedDistribution(
        L.distributions.Normal(p["loc"], p["scale"]),
        [L.distributions.transforms.AffineTransform(0.5, -2.0), L.distributions.transforms.SigmoidTransform()]),
        ["loc", "scale"], {"log_prob": lambda L, d: d.log_prob(L.tensor(P["probs"])),
                           "cdf": lambda L, d: d.cdf(L.tensor(P["probs"])),
                           "icdf": lambda L, d: d.icdf(L.tensor(P["probs"]))}),
}


def _run_case(L, name):
    build, pnames, outs = CASES[name]
    params = {k: L.tensor(v) for k, v in P.items()}
    for k in pnames:
        params[k].requires_grad_(True)
    d = build(L, params)
    res = {k: fn(L, d) for k, fn in outs.items()}
    w = np.random.default_rng(1)
    total = 0
    for v in res.values():
        if v.dtype.is_floating_point and v.requires_grad:
            wt = L.tensor(w.standard_normal(tuple(v.shape)), dtype=v.dtype)
            total = total + (v.nan_to_num(0.0) * wt).sum()
    total.backward()
    return res, {k: params[k].grad for k in pnames}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_parameter_gradients(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_res, t_grads = _run_case(torch, name)
        f_res, f_grads = _run_case(ft, name)
    for k in t_res:
        _close(f_res[k], t_res[k], f"{name}.{k}")
    for k in t_grads:
        _close(f_grads[k], t_grads[k], f"{name} grad {k}")


# ---- shapes, flags, supports, reprs, expand -----------------------------------------------------------------------
def test_metadata_and_expand():
    """Shapes, flags, support and distribution reprs, and the shapes of an expanded copy, for every case."""
    out = {}
    for L in (torch, ft):
        out[L] = []
        params = {k: L.tensor(v) for k, v in P.items()}
        for name, (build, _, _) in CASES.items():
            d = build(L, params)
            e = d.expand((5,) + tuple(d.batch_shape))
            out[L].append((name, str(d.batch_shape), str(d.event_shape), d.has_rsample, d.has_enumerate_support,
                           repr(d), repr(d.support), str(e.batch_shape), str(e.event_shape),
                           str(e._extended_shape((2,))), type(e).__name__))
    for f, t in zip(out[ft], out[torch]):
        assert f == t


def test_enumerate_support_and_misc():
    for L in (torch, ft):
        D = L.distributions
        c = D.Categorical(logits=L.zeros(2, 3))
        b = D.Bernoulli(probs=L.tensor([0.3, 0.5]))
        o = D.OneHotCategorical(probs=L.ones(2, 3))
        res = [c.enumerate_support(), c.enumerate_support(expand=False), b.enumerate_support(), o.enumerate_support(),
               o.enumerate_support(False), D.Binomial(3, L.tensor([0.2])).enumerate_support(), b.mode,
               D.Normal(L.zeros(2), 1.0).expand((3, 2)).log_prob(L.zeros(3, 2))]
        if L is torch:
            want = res
        else:
            for a, t in zip(res, want):
                _close(a, t, "enumerate")


# ---- kl_divergence ----------------------------------------------------------------------------------------------
def _kl_pairs(L, p):
    D = L.distributions
    n1, n2 = D.Normal(p["loc"], p["scale"]), D.Normal(p["v23"], p["scale"] * 1.5)
    return {
        "normal": (n1, n2),
        "categorical": (D.Categorical(logits=p["clogits"]), D.Categorical(probs=p["cprobs"])),
        "categorical_zero": (D.Categorical(probs=p["cprobs"] * L.tensor([1.0, 0, 1, 1])),
                             D.Categorical(probs=p["cprobs"] * L.tensor([1.0, 1, 1, 0]))),
        "bernoulli": (D.Bernoulli(probs=p["probs"]), D.Bernoulli(logits=p["logits"])),
        "mvn": (D.MultivariateNormal(p["mloc"], covariance_matrix=p["cov"]),
                D.MultivariateNormal(p["v23"], scale_tril=p["tril1"])),
        "independent": (D.Independent(n1, 1), D.Independent(n2, 1)),
        "uniform": (D.Uniform(p["low"], p["high"]), D.Uniform(p["low"] - 0.5, p["high"] + L.tensor([1.0, -2.0, 1.0]))),
        "beta": (D.Beta(p["c1"], p["c0"]), D.Beta(p["c0"], p["rate"])),
        "gamma": (D.Gamma(p["c1"], p["rate"]), D.Gamma(p["c0"], p["pos3"])),
        "dirichlet": (D.Dirichlet(p["conc"]), D.Dirichlet(p["conc"].flip(-1))),
        "exponential": (D.Exponential(p["rate"]), D.Exponential(p["pos3"])),
        "laplace": (D.Laplace(p["loc"], p["scale"]), D.Laplace(p["v23"], p["scale"] + 1)),
        "poisson": (D.Poisson(p["rate"]), D.Poisson(p["pos3"])),
        "binomial": (D.Binomial(p["count"], probs=p["v3"]), D.Binomial(L.tensor([3.0, 5.0, 2.0]), logits=p["rate"])),
        "onehot": (D.OneHotCategorical(logits=p["clogits"]), D.OneHotCategorical(probs=p["cprobs"])),
        "lognormal": (D.LogNormal(p["loc"], p["scale"]), D.LogNormal(p["v23"], p["scale"])),
        "normal_laplace": (n1, D.Laplace(p["v23"], p["scale"])),
        "uniform_normal": (D.Uniform(p["low"], p["high"]), D.Normal(p["v3"], p["rate"])),
        "gamma_normal": (D.Gamma(p["c1"], p["rate"]), D.Normal(p["v3"], p["pos3"])),
        "beta_gamma": (D.Beta(p["c1"], p["c0"]), D.Gamma(p["rate"], p["pos3"])),
        "exponential_gamma": (D.Exponential(p["rate"]), D.Gamma(p["c1"], p["pos3"])),
        "uniform_beta": (D.Uniform(p["v3"] * 0.5, p["v3"] * 0.5 + 0.3), D.Beta(p["c1"], p["c0"])),
        "normal_uniform": (n1, D.Uniform(p["low"], p["high"])),
    }


def test_kl_divergence_values_and_gradients():
    out = {}
    for L in (torch, ft):
        params = {k: L.tensor(v).requires_grad_(True) for k, v in P.items()}
        kls = {k: L.distributions.kl_divergence(p, q) for k, (p, q) in _kl_pairs(L, params).items()}
        total = sum((v.nan_to_num(0.0, posinf=0.0) * (i + 1)).sum() for i, v in enumerate(kls.values())
                    if v.requires_grad)
        total.backward()
        out[L] = kls, {k: v.grad for k, v in params.items()}
    for k in out[torch][0]:
        _close(out[ft][0][k], out[torch][0][k], f"kl {k}")
    for k, g in out[torch][1].items():
        if g is None:
            assert out[ft][1][k] is None, k
        else:
            _close(out[ft][1][k], g, f"kl grad {k}")


def test_module_paths_of_torch():
    from functorch_lite.distributions.normal import Normal
    from functorch_lite.distributions.categorical import Categorical
    from functorch_lite.distributions.transformed_distribution import TransformedDistribution
    assert Normal is ft.distributions.Normal and Categorical is ft.distributions.Categorical
    assert TransformedDistribution is ft.distributions.TransformedDistribution
    assert ft.distributions.kl.kl_divergence is ft.distributions.kl_divergence
    assert ft.distributions.constraints.positive.check(ft.tensor([1.0, -1.0])).tolist() == [True, False]


def test_register_kl_and_missing_pair():
    for L in (torch, ft):
        D = L.distributions

        class MyNormal(D.Normal):
            pass

        @D.register_kl(MyNormal, D.Normal)
        def _kl(p, q):
            return p.loc * 0 + 7.0

        assert D.kl_divergence(MyNormal(L.zeros(2), 1.0), D.Normal(L.zeros(2), 1.0)).tolist() == [7.0, 7.0]
        assert D.kl_divergence(D.Normal(L.zeros(2), 1.0), D.Normal(L.zeros(2), 1.0)).tolist() == [0.0, 0.0]
        del D.kl._KL_REGISTRY[(MyNormal, D.Normal)]
        D.kl._KL_MEMOIZE.clear()
    _same_error(lambda L: L.distributions.kl_divergence(L.distributions.Normal(0.0, 1.0),
                                                         L.distributions.Categorical(logits=L.zeros(2))))


# ---- validation -------------------------------------------------------------------------------------------------
def _same_error(call, exact_type=True):
    errs = []
    for L in (torch, ft):
        with pytest.raises(Exception) as e:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call(L)
        errs.append(e.value)
    t, f = errs
    assert str(f) == str(t), (str(t), str(f))
    if exact_type:
        assert type(f) is type(t), (t, f)
    else:
        assert isinstance(f, RuntimeError) and isinstance(t, RuntimeError)


ERRORS = [
    lambda L: L.distributions.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: L.distributions.Normal(L.zeros(2), L.tensor([[1.0, 0.0]], requires_grad=True)),
    lambda L: L.distributions.Normal(L.zeros(2), 1.0).log_prob(L.zeros(3)),
    lambda L: L.distributions.Normal(0.0, 1.0).log_prob(0.5),
    lambda L: L.distributions.Normal([0.0], 1.0),
    lambda L: L.distributions.Categorical(logits=L.zeros(2, 3)).log_prob(L.tensor([3, 1])),
    lambda L: L.distributions.Categorical(probs=L.tensor([0.5, -0.5, 1.0])),
    lambda L: L.distributions.Categorical(probs=L.ones(3), logits=L.ones(3)),
    lambda L: L.distributions.Categorical(logits=L.tensor(1.0)),
    lambda L: L.distributions.Categorical(logits=L.zeros(3)).cdf(L.tensor(1)),
    lambda L: L.distributions.Bernoulli(probs=L.tensor([0.5, 1.5])),
    lambda L: L.distributions.Bernoulli(logits=L.zeros(2)).log_prob(L.tensor([0.5, 1.0])),
    lambda L: L.distributions.OneHotCategorical(logits=L.zeros(3)).log_prob(L.tensor([1.0, 1.0, 0.0])),
    lambda L: L.distributions.Uniform(L.tensor([0.0, 2.0]), L.tensor([1.0, 1.0])),
    lambda L: L.distributions.Uniform(0.0, 1.0).log_prob(L.tensor([1.5])),
    lambda L: L.distributions.Beta(L.tensor([1.0, -1.0]), L.tensor([1.0, 1.0])),
    lambda L: L.distributions.Gamma(L.tensor([1.0]), L.tensor([0.0])),
    lambda L: L.distributions.Gamma(1.0, 1.0).log_prob(L.tensor([-1.0])),
    lambda L: L.distributions.Dirichlet(L.ones(3)).log_prob(L.tensor([0.5, 0.5, 0.5])),
    lambda L: L.distributions.Dirichlet(L.tensor(1.0)),
    lambda L: L.distributions.Exponential(L.tensor([-1.0])),
    lambda L: L.distributions.Poisson(L.tensor([1.0])).log_prob(L.tensor([0.5])),
    lambda L: L.distributions.Poisson(L.tensor([1.0])).entropy(),
    lambda L: L.distributions.Binomial(L.tensor([2.5]), probs=L.tensor([0.5])),
    lambda L: L.distributions.Binomial(L.tensor([2.0]), probs=L.tensor([0.5])).log_prob(L.tensor([3.0])),
    lambda L: L.distributions.Binomial(L.tensor([2.0, 3.0]), probs=L.tensor([0.5, 0.5])).entropy(),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 0.5], [0.0, 1.0]])),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), scale_tril=L.tensor([[1.0, 0.5], [0.0, 1.0]])),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.eye(2), scale_tril=L.eye(2)),
    lambda L: L.distributions.MultivariateNormal(L.tensor(0.0), L.eye(2)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.eye(2)).log_prob(L.zeros(3)),
    lambda L: L.distributions.kl_divergence(L.distributions.MultivariateNormal(L.zeros(2), L.eye(2)),
                                            L.distributions.MultivariateNormal(L.zeros(3), L.eye(3))),
    lambda L: L.distributions.Independent(L.distributions.Normal(L.zeros(2), 1.0), 2),
    lambda L: L.distributions.Independent(L.distributions.Normal(L.zeros(2), 1.0), 1).enumerate_support(),
    lambda L: L.distributions.LogNormal(0.0, 1.0).log_prob(L.tensor([-1.0])),
    lambda L: L.distributions.TransformedDistribution(L.distributions.Normal(0.0, 1.0), "exp"),
    lambda L: L.distributions.Distribution.set_default_validate_args("yes"),
    lambda L: L.distributions.transforms.ExpTransform(cache_size=2),
    lambda L: L.distributions.constraints.dependent.check(L.zeros(1)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_validation_errors_match_torch(i):
    _same_error(ERRORS[i])


def test_cholesky_failure_without_validation_and_validation_switches():
    bad = [[1.0, 2.0], [2.0, 1.0]]
    _same_error(lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.tensor(bad), validate_args=False),
                exact_type=False)
    _same_error(lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.tensor([bad, bad]), validate_args=False),
                exact_type=False)
    for L in (torch, ft):
        D = L.distributions
        assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
        D.Distribution.set_default_validate_args(False)
        try:
            d = D.Normal(L.zeros(2), -L.ones(2))
            assert not d._validate_args and d.log_prob(L.zeros(3, 2)).shape == (3, 2)
        finally:
            D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            D.Normal(L.zeros(2), -L.ones(2))


# ---- sampling: shapes, reproducibility, statistics --------------------------------------------------------------
N = 20000


_TORCH_DTYPES = {  # what torch's sample() returns for float32 parameters
    "Categorical": torch.int64, **{n: torch.float32 for n in (
        "Normal", "Uniform", "Exponential", "Laplace", "Gamma", "Beta", "Dirichlet", "Bernoulli", "OneHotCategorical",
        "Poisson", "Binomial", "MultivariateNormal", "LogNormal", "TransformedDistribution")}}
assert torch.distributions.Categorical(logits=torch.zeros(2)).sample().dtype == torch.int64
assert torch.distributions.Poisson(torch.ones(2)).sample().dtype == torch.float32


def _stats_cases():
    D = ft.distributions
    t = ft.tensor
    return [  # (distribution, mean, variance) per element
        (D.Normal(t([0.5, -1.0]), t([2.0, 0.5])), [0.5, -1.0], [4.0, 0.25]),
        (D.Uniform(t([-1.0]), t([3.0])), [1.0], [16 / 12]),
        (D.Exponential(t([2.0])), [0.5], [0.25]),
        (D.Laplace(t([1.0]), t([0.5])), [1.0], [0.5]),
        (D.Gamma(t([0.5, 3.0, 1.0]), t([1.0, 2.0, 1.0])), [0.5, 1.5, 1.0], [0.5, 0.75, 1.0]),  # Dirichlet's shape
        (D.Beta(t(2.0), t(5.0)), [2 / 7], [10 / (49 * 8)]),  # 0-dim: shares Gamma's compiled sampler
        (D.Dirichlet(t([1.0, 2.0, 3.0])), [1 / 6, 2 / 6, 3 / 6], [5 / 252, 8 / 252, 9 / 252]),
        (D.Bernoulli(probs=t([0.3])), [0.3], [0.21]),
        (D.Categorical(probs=t([0.2, 0.3, 0.5])), [1.3], [0.61]),
        (D.Categorical(logits=t([[0.0, -math.inf, 0.0]])), [1.0], [1.0]),
        (D.OneHotCategorical(probs=t([0.2, 0.8])), [0.2, 0.8], [0.16, 0.16]),
        (D.Poisson(t([0.5, 7.0])), [0.5, 7.0], [0.5, 7.0]),
        (D.Binomial(t([10.0]), probs=t([0.3])), [3.0], [2.1]),
        (D.MultivariateNormal(t([1.0, -1.0]), t([[2.0, 0.6], [0.6, 1.0]])), [1.0, -1.0], [2.0, 1.0]),
        (D.LogNormal(t([0.0]), t([0.25])), [math.exp(0.03125)], [math.expm1(0.0625) * math.exp(0.0625)]),
        (D.TransformedDistribution(D.Normal(t([0.0]), t([1.0])), [D.transforms.AffineTransform(1.0, 2.0)]),
         [1.0], [4.0]),
    ]


def test_sample_statistics_reproducibility_and_dtypes():
    for d, mean, var in _stats_cases():
        ft.manual_seed(7)
        x = d.sample((N,))
        ft.manual_seed(7)
        np.testing.assert_array_equal(d.sample((N,)).numpy(), x.numpy())
        assert str(x.dtype) == str(_TORCH_DTYPES[type(d).__name__]), d
        assert tuple(x.shape) == (N,) + tuple(d.batch_shape) + tuple(d.event_shape)
        x = x.double().numpy().reshape(N, -1)
        m, v = x.mean(0), x.var(0)
        m4 = ((x - m) ** 4).mean(0)
        se_m, se_v = np.sqrt(v / N), np.sqrt((m4 - v ** 2) / N)
        assert (np.abs(m - mean) < 5 * se_m + 1e-9).all(), (d, m, mean)
        assert (np.abs(v - var) < 5 * se_v + 1e-9).all(), (d, v, var)
    for d in (ft.distributions.Categorical(probs=ft.tensor([0.0, 1.0, 0.0])),):
        assert (d.sample((500,)) == 1).all()
    m = ft.distributions.Normal(ft.zeros(2, dtype=ft.float64), 1.0)
    assert m.sample().dtype == ft.float64 and m.rsample((4,)).dtype == ft.float64


def _sample_seq(L):
    L.manual_seed(3)
    return L.distributions.Normal(L.zeros(3), 1.0).sample((2,)), L.distributions.Categorical(
        logits=L.zeros(4)).sample((5,))


def test_generator_state_advances_and_is_reseedable():
    a = _sample_seq(ft)
    b = _sample_seq(ft)
    assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    assert a[1].dtype == ft.int64 and tuple(a[1].shape) == (5,)


# ---- rsample gradients through fixed-noise identities -----------------------------------------------------------
def test_rsample_gradients():
    D = ft.distributions
    loc = ft.tensor([0.5, -1.0], requires_grad=True)
    scale = ft.tensor([2.0, 0.5], requires_grad=True)
    x = D.Normal(loc, scale).rsample((4,))
    x.sum().backward()
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(loc.grad.numpy(), [4.0, 4.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-5, atol=1e-6)
    assert x.grad_fn is not None and D.Normal(loc, scale).sample().grad_fn is None

    low, high = ft.tensor([-1.0], requires_grad=True), ft.tensor([3.0], requires_grad=True)
    u = D.Uniform(low, high).rsample((5,))
    u.sum().backward()
    frac = ((u.detach() - low.detach()) / 4.0).sum(0)
    np.testing.assert_allclose(high.grad.numpy(), frac.numpy(), rtol=1e-5)
    np.testing.assert_allclose(low.grad.numpy(), (5 - frac).numpy(), rtol=1e-5)

    for cls in (D.Exponential, D.Gamma):
        rate = ft.tensor([2.0, 0.5], requires_grad=True)
        conc = ft.tensor([0.7, 3.0], requires_grad=True)
        d = D.Exponential(rate) if cls is D.Exponential else D.Gamma(conc, rate)
        e = d.rsample((N,))  # the shape of the Dirichlet test below: one compiled gamma gradient
        e.sum().backward()
        np.testing.assert_allclose(rate.grad.numpy(), (-e.detach() / rate.detach()).sum(0).numpy(), rtol=1e-5)
    # Gamma's concentration gradient is the implicit reparameterisation gradient: PyTorch's own formula
    x1 = (e.detach() * rate.detach()).double()
    x1 = torch.tensor(x1.numpy())
    want = torch._standard_gamma_grad(torch.tensor([0.7, 3.0], dtype=torch.float64).expand_as(x1), x1)
    np.testing.assert_allclose(conc.grad.numpy(), (want / torch.tensor([2.0, 0.5])).sum(0).numpy(), rtol=1e-4)

    mloc = ft.tensor([1.0, -1.0], requires_grad=True)
    tril = ft.tensor([[1.0, 0.0], [0.5, 2.0]], requires_grad=True)
    z = D.MultivariateNormal(mloc, scale_tril=tril).rsample((3,))
    z.sum().backward()
    zeps = np.linalg.solve(tril.detach().numpy(), (z.detach() - mloc.detach()).numpy().T).T  # the noise
    np.testing.assert_allclose(mloc.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(tril.grad.numpy(), np.tile(zeps.sum(0), (2, 1)), rtol=1e-4, atol=1e-5)

    loc = ft.tensor([0.3], requires_grad=True)
    y = D.TransformedDistribution(D.Normal(loc, 1.0), [D.transforms.TanhTransform()]).rsample((4,))
    y.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), (1 - y.detach() ** 2).sum(0).numpy(), rtol=1e-5)

    probs = ft.tensor([0.2, 0.8], requires_grad=True)
    s = D.OneHotCategoricalStraightThrough(probs=probs).rsample()
    (s * ft.tensor([1.0, 3.0])).sum().backward()
    np.testing.assert_allclose(probs.grad.numpy(), [-1.6, 0.4], rtol=1e-5, atol=1e-6)  # through the normalisation


def test_dirichlet_rsample_gradient_is_unbiased():
    """E[d x / d alpha] = d E[x] / d alpha (the per-sample reparameterisation differs from PyTorch's)."""
    D = ft.distributions
    ft.manual_seed(0)
    conc = ft.tensor([2.0, 5.0], requires_grad=True)
    D.Dirichlet(conc).rsample((N,))[:, 0].mean().backward()
    np.testing.assert_allclose(conc.grad.numpy(), [5 / 49, -2 / 49], atol=0.005)


# ---- transforms ---------------------------------------------------------------------------------------------------
def test_transforms_match_torch():
    x = P["v23"]
    res = {}
    for L in (torch, ft):
        T = L.distributions.transforms
        ts = [T.ExpTransform(), T.AffineTransform(L.tensor([1.0, 2.0, 3.0]), 2.0), T.SigmoidTransform(),
              T.TanhTransform(), T.SoftplusTransform(), T.AffineTransform(0.0, L.ones(3) * 3, event_dim=1),
              T.ComposeTransform([T.AffineTransform(0.0, -1.0), T.ExpTransform()]), T.AbsTransform(),
              T.PowerTransform(L.tensor(2.0)).inv, T.IndependentTransform(T.ExpTransform(), 1),
              T.ReshapeTransform((3,), (3, 1))]
        xt = L.tensor(x, requires_grad=True)
        out = []
        for t in ts:
            y = t(xt.abs() + 0.1 if isinstance(t, (T._InverseTransform, T.ComposeTransform)) else xt)
            out.append(y)
            if t.bijective:
                out.append(t.inv(y))
                out.append(t.log_abs_det_jacobian(t.inv(y), y))
        sum((o * (i + 1)).sum() for i, o in enumerate(out)).backward()
        meta = [(repr(t), repr(t.domain), repr(t.codomain), t.bijective, t.forward_shape((2, 3))) for t in ts]
        res[L] = out, xt.grad, meta, repr(T.identity_transform), T.ExpTransform() == T.ExpTransform()
    for a, b in zip(res[ft][0], res[torch][0]):
        _close(a, b, "transform")
    _close(res[ft][1], res[torch][1], "transform grad")
    assert str(res[ft][2:]) == str(res[torch][2:])
    # cache_size=1: the inverse of the last output is the cached input itself (no atanh at saturation)
    t = ft.distributions.transforms.TanhTransform(cache_size=1)
    xs = ft.tensor([30.0])
    assert t.inv(t(xs)) is xs


# ---- compile: REINFORCE ------------------------------------------------------------------------------------------
def _reinforce(compiled):
    ft.manual_seed(0)
    policy = ft.nn.Linear(4, 3)
    with ft.no_grad():
        policy.weight.copy_(ft.tensor(_REINFORCE_W))
        policy.bias.zero_()
    opt = ft.optim.Adam(policy.parameters(), lr=0.05)

    def step(x, adv):
        dist = ft.distributions.Categorical(logits=policy(x))
        action = dist.sample()
        loss = -(dist.log_prob(action) * adv).mean() - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, action
    fn = ft.compile(step) if compiled else step
    ft.manual_seed(11)
    x, adv = ft.tensor(_REINFORCE_X), ft.tensor(_REINFORCE_ADV)
    out = [fn(x, adv) for _ in range(3)]
    return [(loss.item(), a.tolist()) for loss, a in out], policy.weight.detach().numpy()


_REINFORCE_X = _f32(64, 4)
_REINFORCE_ADV = _f32(64)
_REINFORCE_W = _f32(3, 4) * 0.5


def test_compiled_reinforce_step_equals_eager():
    eager, w_eager = _reinforce(False)
    comp, w_comp = _reinforce(True)
    assert [a for _, a in comp] == [a for _, a in eager]  # the same draws under the same seed
    np.testing.assert_allclose([v for v, _ in comp], [v for v, _ in eager], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_comp, w_eager, rtol=1e-5, atol=1e-6)
    assert len({tuple(a) for _, a in comp}) == 3  # fresh draws per call
    assert all(set(a) <= {0, 1, 2} for _, a in comp)


def test_compiled_sac_style_tanh_gaussian_equals_eager():
    D = ft.distributions

    def f(mu, log_std):
        d = D.TransformedDistribution(D.Normal(mu, log_std.exp()), [D.transforms.TanhTransform(cache_size=1)])
        a = d.rsample()
        return a, d.log_prob(a).sum(-1), D.kl_divergence(D.Normal(mu, log_std.exp()), D.Normal(0.0, 1.0)).sum()
    mu, ls = ft.tensor(_f32(5, 2)), ft.tensor(_f32(5, 2) * 0.1)
    ft.manual_seed(4)
    eager = [f(mu, ls) for _ in range(2)]
    cf = ft.compile(f)
    ft.manual_seed(4)
    comp = [cf(mu, ls) for _ in range(2)]
    for e, c in zip(eager, comp):
        for a, b in zip(e, c):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5)
    assert not np.allclose(comp[0][0].numpy(), comp[1][0].numpy())
