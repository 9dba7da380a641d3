"""The distributions and transforms added after the first set (StudentT, Cauchy, HalfNormal, ..., Wishart; Cat /
Stack / Softmax / StickBreaking / LowerCholesky / PositiveDefinite / CorrCholesky / CumulativeDistribution
transforms) against torch.distributions 2.13: values and parameter gradients of log_prob / entropy / moments /
cdf / icdf / kl_divergence on the same inputs; shapes, flags, supports, reprs, expand; validation errors; sample
shapes, dtypes and statistics (the random streams differ); rsample gradients through fixed-noise identities."""
import math
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


@pytest.fixture(autouse=True)
def _validation_on():
    for L in (torch, ft):
        L.distributions.Distribution.set_default_validate_args(True)
    yield


RNG = np.random.default_rng(5)
TOL = dict(rtol=2e-5, atol=2e-5)


def _f32(*shape, lo=None, hi=None):
    x = RNG.standard_normal(shape) if lo is None else RNG.uniform(lo, hi, shape)
    return x.astype(np.float32)


def _np(t):
    return t.detach().double().numpy() if t.dtype.is_floating_point else t.detach().numpy()


def _close(a, b, what, tol=TOL):
    assert str(a.dtype) == str(b.dtype), (what, a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (what, a.shape, b.shape)
    np.testing.assert_allclose(_np(a), _np(b), err_msg=what, equal_nan=True, **tol)


_corr = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.36, 0.48, 0.8]], np.float32)  # a correlation Cholesky
P = {
    "loc": _f32(2, 3), "scale": _f32(2, 3, lo=0.5, hi=2.0), "df": np.array([[0.7, 1.5, 3.0], [4.5, 6.0, 2.0]],
                                                                          np.float32),
    "pos": _f32(2, 3, lo=0.2, hi=3.0), "v23": _f32(2, 3), "u23": _f32(2, 3, lo=0.05, hi=0.95),
    "probs": _f32(2, 3, lo=0.1, hi=0.9), "logits": _f32(2, 3), "c1": _f32(3, lo=0.5, hi=3), "c0": _f32(3, lo=0.5, hi=3),
    "conc": np.array([0.5, 2.0, 5.0], np.float32), "big": _f32(3, lo=4.5, hi=8), "cprobs": _f32(2, 4, lo=0.1, hi=1),
    "clogits": _f32(2, 4), "mloc": _f32(2, 3), "W": _f32(2, 3, 2), "Dg": _f32(2, 3, lo=0.5, hi=2),
    "cov": (lambda a: (a @ a.T + 3 * np.eye(3)).astype(np.float32))(RNG.standard_normal((3, 3))),
    "temp": np.array(0.7, np.float32), "corr": _corr, "gpc": np.array([[-0.3, 0.0, 0.4]], np.float32),
    "counts": np.array([[2.0, 0.0, 1.0, 3.0], [0.0, 4.0, 1.0, 1.0]], np.float32),
    "kprobs": np.array([0.3, 0.4995, 0.8], np.float32),
    # away from 0.5, where the continuous Bernoulli's normaliser is ill-conditioned in float32 (outside its Taylor
    # window the gradients of both libraries carry cancellation errors)
    "cbp": np.array([[0.3, 0.1, 0.7], [0.2, 0.8, 0.65]], np.float32), "wdf": np.array([4.0, 6.5], np.float32),
}


def _d(L):
    return L.distributions


CASES = {  # name -> (builder(L, p), parameter names, outputs: name -> fn(L, d))
    "studentt": (lambda L, p: _d(L).StudentT(p["df"], p["loc"], p["scale"]), ["df", "loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "mode": lambda L, d: d.mode, "var": lambda L, d: d.variance}),
    "cauchy": (lambda L, p: _d(L).Cauchy(p["loc"], p["scale"]), ["loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["v23"])), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode}),
    "halfnormal": (lambda L, p: _d(L).HalfNormal(p["scale"]), ["scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["pos"])), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode}),
    "halfcauchy": (lambda L, p: _d(L).HalfCauchy(p["scale"]), ["scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["pos"])), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"])),
        "mean": lambda L, d: d.mean, "mode": lambda L, d: d.mode}),
    "gumbel": (lambda L, p: _d(L).Gumbel(p["loc"], p["scale"]), ["loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["v23"])), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "std": lambda L, d: d.stddev}),
    "chi2": (lambda L, p: _d(L).Chi2(p["pos"]), ["pos"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["scale"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "df": lambda L, d: d.df}),
    "geometric_probs": (lambda L, p: _d(L).Geometric(probs=p["probs"]), ["probs"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([[0.0, 2.0, 5.0], [1.0, 0.0, 3.0]])),
        "entropy": lambda L, d: d.entropy(), "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance,
        "mode": lambda L, d: d.mode, "logits": lambda L, d: d.logits}),
    "geometric_logits": (lambda L, p: _d(L).Geometric(logits=p["logits"]), ["logits"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([0.0, 2.0, 5.0])), "entropy": lambda L, d: d.entropy()}),
    "multinomial": (lambda L, p: _d(L).Multinomial(6, probs=p["cprobs"]), ["cprobs"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["counts"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "logits": lambda L, d: d.logits}),
    "multinomial_logits": (lambda L, p: _d(L).Multinomial(6, logits=p["clogits"] + L.tensor([0.0, 0, -math.inf, 0])),
                           ["clogits"], {"log_prob": lambda L, d: d.log_prob(L.tensor([[2.0, 4, 0, 0],
                                                                                       [1, 1, 0, 4]]))}),
    "negbinomial": (lambda L, p: _d(L).NegativeBinomial(p["pos"], probs=p["probs"]), ["pos", "probs"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([[0.0, 2.0, 5.0], [1.0, 0.0, 3.0]])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode}),
    "negbinomial_logits": (lambda L, p: _d(L).NegativeBinomial(L.tensor([0.0, 2.0, 3.5]), logits=p["logits"]),
                           ["logits"], {"log_prob": lambda L, d: d.log_prob(L.tensor([0.0, 2.0, 5.0]))}),
    "weibull": (lambda L, p: _d(L).Weibull(p["scale"], p["pos"]), ["scale", "pos"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos"])), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["pos"])), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode}),
    "pareto": (lambda L, p: _d(L).Pareto(p["scale"] * 0.1, p["pos"]), ["scale", "pos"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos"]) + 0.2), "entropy": lambda L, d: d.entropy(),
        "cdf": lambda L, d: d.cdf(L.tensor(P["pos"]) + 0.2), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode}),
    "mixture": (lambda L, p: _d(L).MixtureSameFamily(_d(L).Categorical(logits=p["clogits"][:, :3]),
                                                    _d(L).Normal(p["loc"], p["scale"])), ["clogits", "loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([[0.3, -1.0], [2.0, 0.1]])), "mean": lambda L, d: d.mean,
        "var": lambda L, d: d.variance, "cdf": lambda L, d: d.cdf(L.tensor([0.3, -1.0]))}),
    "mixture_mvn": (lambda L, p: _d(L).MixtureSameFamily(
        _d(L).Categorical(probs=p["cprobs"][0, :2]), _d(L).Independent(_d(L).Normal(p["loc"], p["scale"]), 1)),
        ["cprobs", "loc", "scale"], {"log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])),
                                     "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance}),
    "inversegamma": (lambda L, p: _d(L).InverseGamma(p["pos"], p["scale"]), ["pos", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode}),
    "kumaraswamy": (lambda L, p: _d(L).Kumaraswamy(p["c1"], p["c0"]), ["c1", "c0"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["u23"][0])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "mode": lambda L, d: d.mode,
        "cdf": lambda L, d: d.cdf(L.tensor(P["u23"][0])), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"][1]))}),
    "lowrank_mvn": (lambda L, p: _d(L).LowRankMultivariateNormal(p["mloc"], p["W"], p["Dg"]), ["mloc", "W", "Dg"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "entropy": lambda L, d: d.entropy(),
        "var": lambda L, d: d.variance, "scale_tril": lambda L, d: d.scale_tril, "cov": lambda L, d: d.covariance_matrix,
        "precision": lambda L, d: d.precision_matrix, "mean": lambda L, d: d.mean}),
    "cont_bernoulli": (lambda L, p: _d(L).ContinuousBernoulli(probs=p["kprobs"]), ["kprobs"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["u23"][0])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "std": lambda L, d: d.stddev,
        "cdf": lambda L, d: d.cdf(L.tensor(P["u23"][0])), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"][1])),
        "logits": lambda L, d: d.logits}),
    "cont_bernoulli_logits": (lambda L, p: _d(L).ContinuousBernoulli(logits=p["logits"]), ["logits"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["u23"])), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean}),
    "relaxed_bernoulli": (lambda L, p: _d(L).RelaxedBernoulli(p["temp"], probs=p["probs"]), ["temp", "probs"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["u23"]))}),
    "relaxed_onehot": (lambda L, p: _d(L).RelaxedOneHotCategorical(p["temp"], logits=p["clogits"]),
                       ["temp", "clogits"], {"log_prob": lambda L, d: d.log_prob(
                           L.tensor([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]))}),
    "logistic_normal": (lambda L, p: _d(L).LogisticNormal(p["loc"], p["scale"]), ["loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]))}),
    "fisher": (lambda L, p: _d(L).FisherSnedecor(p["df"], p["df"].flip(-1) * 2), ["df"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["pos"])), "mean": lambda L, d: d.mean,
        "mode": lambda L, d: d.mode, "var": lambda L, d: d.variance}),
    "vonmises": (lambda L, p: _d(L).VonMises(p["loc"], p["pos"] * 2), ["loc", "pos"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["v23"])), "mean": lambda L, d: d.mean,
        "var": lambda L, d: d.variance}),
    "gen_pareto": (lambda L, p: _d(L).GeneralizedPareto(p["loc"][0], p["scale"][0], p["gpc"]), ["loc", "scale"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["loc"][0]) + L.tensor([0.2, 0.5, 0.7])),
        "cdf": lambda L, d: d.cdf(L.tensor(P["loc"][0]) + 0.2), "icdf": lambda L, d: d.icdf(L.tensor(P["u23"][0])),
        "mean": lambda L, d: d.mean, "var": lambda L, d: d.variance, "entropy": lambda L, d: d.entropy()}),
    "lkj": (lambda L, p: _d(L).LKJCholesky(3, p["conc"]), ["conc"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["corr"]))}),
    "wishart": (lambda L, p: _d(L).Wishart(p["wdf"], covariance_matrix=p["cov"]), ["wdf", "cov"], {
        "log_prob": lambda L, d: d.log_prob(L.tensor(P["cov"]) * 1.5), "entropy": lambda L, d: d.entropy(),
        "mean": lambda L, d: d.mean, "mode": lambda L, d: d.mode, "var": lambda L, d: d.variance,
        "precision": lambda L, d: d.precision_matrix}),
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
            total = total + (v.nan_to_num(0.0, posinf=0.0, neginf=0.0) * wt).sum()
    total.backward()
    return d, res, {k: params[k].grad for k in pnames}


def test_values_and_parameter_gradients():
    """Every case: outputs and parameter gradients equal torch's; then shapes, flags, support and repr of the
    distribution and of an expanded copy."""
    for name in CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_d, t_res, t_grads = _run_case(torch, name)
            f_d, f_res, f_grads = _run_case(ft, name)
        for k in t_res:
            _close(f_res[k], t_res[k], f"{name}.{k}", dict(rtol=2e-4, atol=2e-5))
        for k in t_grads:
            _close(f_grads[k], t_grads[k], f"{name} grad {k}", dict(rtol=2e-4, atol=2e-5))
        meta = []
        for d in (t_d, f_d):
            e = d.expand((5,) + tuple(d.batch_shape))
            meta.append((str(d.batch_shape), str(d.event_shape), d.has_rsample, d.has_enumerate_support,
                         repr(d), repr(d.support), str(e.batch_shape), str(e.event_shape),
                         str(e._extended_shape((2,))), type(e).__name__))
        assert meta[1] == meta[0], name


# ---- kl_divergence ----------------------------------------------------------------------------------------------
def _kl_pairs(L, p):
    D = _d(L)
    g = D.Gumbel(p["loc"], p["scale"])
    par = D.Pareto(p["scale"], p["pos"] + 2.5)
    cb = D.ContinuousBernoulli(probs=p["cbp"])
    n = D.Normal(p["v23"], p["scale"])
    u = D.Uniform(p["u23"] * 0.5, p["u23"] * 0.5 + 0.3)
    lr = D.LowRankMultivariateNormal(p["mloc"], p["W"], p["Dg"])
    return {
        "cauchy": (D.Cauchy(p["loc"], p["scale"]), D.Cauchy(p["v23"], p["pos"])),
        "gumbel": (g, D.Gumbel(p["v23"], p["pos"])),
        "geometric": (D.Geometric(probs=p["probs"]), D.Geometric(logits=p["logits"])),
        "halfnormal": (D.HalfNormal(p["scale"]), D.HalfNormal(p["pos"])),
        "pareto": (par, D.Pareto(p["pos"], p["scale"])),
        "cont_bernoulli": (cb, D.ContinuousBernoulli(logits=p["logits"] * 2)),
        "lowrank": (lr, D.LowRankMultivariateNormal(p["v23"], p["W"].flip(-1), p["Dg"] + 1)),
        "mvn_lowrank": (D.MultivariateNormal(p["v23"], p["cov"]), lr),
        "lowrank_mvn": (lr, D.MultivariateNormal(p["v23"], p["cov"])),
        "beta_cb": (D.Beta(p["c1"], p["c0"]), D.ContinuousBernoulli(probs=p["cbp"][0])),
        "cb_exponential": (cb, D.Exponential(p["pos"])),
        "cb_normal": (cb, n),
        "cb_uniform": (cb, D.Uniform(p["u23"] - 1, p["u23"] + 0.2)),
        "exponential_gumbel": (D.Exponential(p["pos"]), g),
        "gamma_gumbel": (D.Gamma(p["pos"], p["scale"]), g),
        "gumbel_normal": (g, n),
        "normal_gumbel": (n, g),
        "pareto_exponential": (D.Pareto(p["scale"], p["pos"] + 0.5), D.Exponential(p["pos"])),
        "pareto_gamma": (D.Pareto(p["scale"], p["pos"] + 0.5), D.Gamma(p["pos"], p["scale"])),
        "pareto_normal": (D.Pareto(p["scale"], p["pos"] + 1.5), n),
        "uniform_cb": (u, D.ContinuousBernoulli(probs=p["cbp"])),
        "uniform_gumbel": (u, g),
        "uniform_pareto": (D.Uniform(p["scale"] * 0.5 + 1, p["scale"] + 2), D.Pareto(p["scale"], p["pos"])),
        "gumbel_inf": (g, D.Exponential(p["pos"])),
        "normal_pareto": (n, par),
    }


def test_kl_divergence_values_and_gradients():
    out = {}
    for L in (torch, ft):
        params = {k: L.tensor(v).requires_grad_(True) for k, v in P.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kls = {k: L.distributions.kl_divergence(p, q) for k, (p, q) in _kl_pairs(L, params).items()}
        total = sum((v.nan_to_num(0.0, posinf=0.0) * (i + 1)).sum() for i, v in enumerate(kls.values())
                    if v.requires_grad)
        total.backward()
        out[L] = kls, {k: v.grad for k, v in params.items()}
    for k in out[torch][0]:
        _close(out[ft][0][k], out[torch][0][k], f"kl {k}", dict(rtol=1e-4, atol=2e-5))
    for k, g in out[torch][1].items():
        if g is None:
            assert out[ft][1][k] is None, k
        else:
            _close(out[ft][1][k], g, f"kl grad {k}", dict(rtol=1e-4, atol=5e-5))


# ---- validation -------------------------------------------------------------------------------------------------
def _same_error(call):
    errs = []
    for L in (torch, ft):
        with pytest.raises(Exception) as e:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call(L)
        errs.append(e.value)
    t, f = errs
    assert str(f) == str(t), (str(t), str(f))
    assert type(f) is type(t), (t, f)


ERRORS = [
    lambda L: _d(L).StudentT(L.tensor([1.0, -1.0])),
    lambda L: _d(L).Cauchy(0.0, 1.0).log_prob(L.tensor([math.nan])),
    lambda L: _d(L).HalfNormal(L.tensor([1.0])).log_prob(L.tensor([-1.0])),
    lambda L: _d(L).Chi2(L.tensor([0.0])),
    lambda L: _d(L).Geometric(probs=L.tensor([0.0, 0.5])),
    lambda L: _d(L).Geometric(probs=L.tensor([0.5]), logits=L.tensor([0.5])),
    lambda L: _d(L).Geometric(probs=L.tensor([0.5])).log_prob(L.tensor([1.5])),
    lambda L: _d(L).Multinomial(L.tensor(3), probs=L.ones(3)),
    lambda L: _d(L).Multinomial(3, probs=L.ones(3) / 3).log_prob(L.tensor([2.0, 2.0, 0.0])),
    lambda L: _d(L).NegativeBinomial(L.tensor([2.0]), probs=L.tensor([1.0])),
    lambda L: _d(L).Pareto(L.tensor([1.0]), L.tensor([1.0])).log_prob(L.tensor([0.5])),
    lambda L: _d(L).MixtureSameFamily(_d(L).Normal(0.0, 1.0), _d(L).Normal(L.zeros(2), 1.0)),
    lambda L: _d(L).MixtureSameFamily(_d(L).Categorical(logits=L.zeros(3)), _d(L).Normal(L.zeros(2), 1.0)),
    lambda L: _d(L).MixtureSameFamily(_d(L).Categorical(logits=L.zeros(2, 2)), _d(L).Normal(L.zeros(3, 2), 1.0)),
    lambda L: _d(L).LowRankMultivariateNormal(L.zeros(3), L.zeros(2, 1), L.ones(3)),
    lambda L: _d(L).LowRankMultivariateNormal(L.zeros(3), L.zeros(3, 1), L.ones(2)),
    lambda L: _d(L).LowRankMultivariateNormal(L.zeros(2, 3), L.zeros(3, 3, 1), L.ones(3)),
    lambda L: _d(L).ContinuousBernoulli(probs=L.tensor([1.5]), validate_args=True),
    lambda L: _d(L).Kumaraswamy(L.tensor([1.0]), L.tensor([-1.0])),
    lambda L: _d(L).LKJCholesky(1),
    lambda L: _d(L).LKJCholesky(2).log_prob(L.eye(2) * 2),
    lambda L: _d(L).Wishart(L.tensor(1.0), L.eye(3)),
    lambda L: _d(L).Wishart(4.0, L.eye(3), scale_tril=L.eye(3)),
    lambda L: _d(L).GeneralizedPareto(L.zeros(1, dtype=L.float64), 1.0, 0.5).log_prob(L.tensor([1.0],
                                                                                              dtype=L.float64)),
    lambda L: _d(L).RelaxedBernoulli(L.tensor(0.5), probs=L.tensor([1.5])),
    lambda L: _d(L).VonMises(L.zeros(2), L.tensor([1.0, 0.0])),
    lambda L: _d(L).transforms.CatTransform([_d(L).transforms.ExpTransform()], lengths=[1, 2]),
    lambda L: _d(L).transforms.StackTransform([_d(L).transforms.ExpTransform()])(L.zeros(2, 2)),
    lambda L: _d(L).transforms.CorrCholeskyTransform().forward_shape((4,)),
    lambda L: _d(L).utils.vec_to_tril_matrix(L.zeros(4)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_validation_errors_match_torch(i):
    _same_error(ERRORS[i])


def test_module_paths_and_exports():
    from functorch_lite.distributions.studentT import StudentT
    from functorch_lite.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
    from functorch_lite.distributions.transforms import StickBreakingTransform
    assert StudentT is ft.distributions.StudentT
    assert LowRankMultivariateNormal is ft.distributions.LowRankMultivariateNormal
    assert StickBreakingTransform is ft.distributions.StickBreakingTransform
    missing = [n for n in torch.distributions.__all__ if not hasattr(ft.distributions, n)]
    assert missing == [], missing  # (every name of torch.distributions.__all__, constraint_registry too)


# ---- sampling -----------------------------------------------------------------------------------------------------
N = 10000


def _stats_cases():
    D = ft.distributions
    t = ft.tensor
    g = math.gamma
    kum_m1 = 3 * g(1 + 1 / 2) * g(3) / g(1 + 1 / 2 + 3)
    kum_m2 = 3 * g(1 + 2 / 2) * g(3) / g(1 + 2 / 2 + 3)
    return [  # (distribution, mean, variance) per element of one draw (flattened); None: support check only
        # (ContinuousBernoulli, VonMises, LKJCholesky, RelaxedOneHotCategorical: against torch's samples below)
        (D.StudentT(t([5.0]), t([1.0]), t([2.0])), [1.0], [4 * 5 / 3]),
        (D.Chi2(t([3.0, 0.5])), [3.0, 0.5], [6.0, 1.0]),
        (D.HalfNormal(t([2.0])), [2 * math.sqrt(2 / math.pi)], [4 * (1 - 2 / math.pi)]),
        (D.Gumbel(t([1.0]), t([2.0])), [1 + 2 * 0.5772156649], [math.pi ** 2 / 6 * 4]),
        (D.Geometric(probs=t([0.3])), [0.7 / 0.3], [0.7 / 0.09]),
        (D.Multinomial(5, probs=t([0.2, 0.3, 0.5])), [1.0, 1.5, 2.5], [0.8, 1.05, 1.25]),
        (D.NegativeBinomial(t([3.0]), probs=t([0.4])), [2.0], [2.0 / 0.6]),
        (D.Weibull(t([2.0]), t([1.5])), [2 * g(1 + 1 / 1.5)], [4 * (g(1 + 2 / 1.5) - g(1 + 1 / 1.5) ** 2)]),
        (D.Pareto(t([1.0]), t([5.0])), [1.25], [5 / (16 * 3)]),
        (D.MixtureSameFamily(D.Categorical(probs=t([0.3, 0.7])), D.Normal(t([-2.0, 1.0]), t([0.5, 1.0]))),
         [0.1], [0.3 * 4.25 + 0.7 * 2 - 0.01]),
        (D.InverseGamma(t([5.0]), t([2.0])), [0.5], [4 / (16 * 3)]),
        (D.Kumaraswamy(t([2.0]), t([3.0])), [kum_m1], [kum_m2 - kum_m1 ** 2]),
        (D.LowRankMultivariateNormal(t([1.0, -1.0]), t([[1.0], [0.5]]), t([0.5, 2.0])), [1.0, -1.0], [1.5, 2.25]),
        (D.FisherSnedecor(t([5.0]), t([10.0])), [10 / 8], [2 * 100 * 13 / (5 * 64 * 6)]),
        (D.GeneralizedPareto(t([0.0]), t([1.0]), t([0.2])), [1.25], [1 / (0.64 * 0.6)]),
        (D.Wishart(t(5.0), t([[1.0, 0.3], [0.3, 2.0]])), [5.0, 1.5, 1.5, 10.0],
         [5 * 2, 5 * (0.09 + 2), 5 * (0.09 + 2), 5 * 8]),
        (D.RelaxedBernoulli(t(0.5), probs=t([0.3])), None, None),
        (D.LogisticNormal(t([0.0, 0.5]), t([1.0, 0.5])), None, None),
        (D.Cauchy(t([0.0]), t([1.0])), None, None),
        (D.HalfCauchy(t([1.0])), None, None),
    ]


def test_sample_shapes_dtypes_reproducibility_and_statistics():
    for d, mean, var in _stats_cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ft.manual_seed(7)
            x = d.sample((N,))
            ft.manual_seed(7)
            np.testing.assert_array_equal(d.sample((N,)).numpy(), x.numpy())
        assert x.dtype == ft.float32, d
        assert tuple(x.shape) == (N,) + tuple(d.batch_shape) + tuple(d.event_shape), d
        assert bool(d.support.check(x).all()), d
        if mean is None:
            continue
        x = x.double().numpy().reshape(N, -1)
        m, v = x.mean(0), x.var(0)
        m4 = ((x - m) ** 4).mean(0)
        se_m, se_v = np.sqrt(v / N), np.sqrt((m4 - v ** 2) / N)
        assert (np.abs(m - mean) < 5 * se_m + 1e-9).all(), (d, m, mean)
        assert (np.abs(v - var) < 5 * se_v + 1e-9).all(), (d, v, var)


def test_sample_statistics_against_torch_moments():
    """Distributions whose moments have no closed form here: the sample mean / variance against torch's
    ``mean`` / ``variance`` (or torch's own large sample)."""
    ft.manual_seed(3)
    torch.manual_seed(3)
    cb = (ft.distributions.ContinuousBernoulli(probs=ft.tensor([0.2])),
          torch.distributions.ContinuousBernoulli(probs=torch.tensor([0.2])))
    vm = (ft.distributions.VonMises(ft.tensor([0.5]), ft.tensor([2.0])),
          torch.distributions.VonMises(torch.tensor([0.5]), torch.tensor([2.0])))
    lkj = (ft.distributions.LKJCholesky(3, ft.tensor(2.0)), torch.distributions.LKJCholesky(3, torch.tensor(2.0)))
    rb = (ft.distributions.RelaxedOneHotCategorical(ft.tensor(0.5), probs=ft.tensor([0.2, 0.8])),
          torch.distributions.RelaxedOneHotCategorical(torch.tensor(0.5), probs=torch.tensor([0.2, 0.8])))
    for f, t in (cb, vm, lkj, rb):
        fx = f.sample((N,))
        assert fx.dtype == ft.float32 and tuple(fx.shape[1:]) == tuple(t.sample((2,)).shape[1:])
        assert tuple(fx.shape) == (N,) + tuple(f.batch_shape) + tuple(f.event_shape)
        assert bool(f.support.check(fx).all()), f
        x = fx.double().numpy().reshape(N, -1)
        y = t.sample((N,)).double().numpy().reshape(N, -1)
        se = np.sqrt((x.var(0) + y.var(0)) / N)
        assert (np.abs(x.mean(0) - y.mean(0)) < 5 * se + 1e-9).all(), (f, x.mean(0), y.mean(0))
        if f is vm[0]:  # the circular variance 1 - E[cos(x - loc)]
            np.testing.assert_allclose(1 - np.cos(x - 0.5).mean(), vm[1].variance.item(), atol=0.01)


# ---- rsample gradients through fixed-noise identities -----------------------------------------------------------
def test_rsample_gradients():
    D = ft.distributions
    loc = ft.tensor([0.5, -1.0], requires_grad=True)
    scale = ft.tensor([2.0, 0.5], requires_grad=True)
    x = D.Cauchy(loc, scale).rsample((4,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [4.0, 4.0])
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-5)

    s = ft.tensor([1.5], requires_grad=True)
    h = D.HalfNormal(s).rsample((6,))
    h.sum().backward()
    np.testing.assert_allclose(s.grad.numpy(), (h.detach() / 1.5).sum(0).numpy(), rtol=1e-5)

    sc, k = ft.tensor([2.0], requires_grad=True), ft.tensor([1.5], requires_grad=True)
    w = D.Weibull(sc, k).rsample((5,))
    w.sum().backward()
    e = (w.detach() / 2.0) ** 1.5  # the Exponential(1) noise
    np.testing.assert_allclose(sc.grad.numpy(), (w.detach() / 2.0).sum(0).numpy(), rtol=1e-5)
    np.testing.assert_allclose(k.grad.numpy(), (-w.detach() * e.log() / 1.5 ** 2).sum(0).numpy(), rtol=1e-4)

    Wf = ft.tensor([[1.0], [0.5]], requires_grad=True)
    dg = ft.tensor([0.5, 2.0], requires_grad=True)
    ml = ft.tensor([0.0, 0.0], requires_grad=True)
    ft.manual_seed(1)
    z = D.LowRankMultivariateNormal(ml, Wf, dg).rsample((3,))
    ft.manual_seed(1)
    epsW, epsD = ft.randn(3, 1), ft.randn(3, 2)  # the same draws, in rsample's order
    np.testing.assert_allclose(z.detach().numpy(), (epsW.numpy() @ Wf.detach().numpy().T
                                                    + np.sqrt([0.5, 2.0]) * epsD.numpy()), rtol=1e-5, atol=1e-6)
    z.sum().backward()
    np.testing.assert_allclose(Wf.grad.numpy(), np.tile(epsW.numpy().sum(0), (2, 1)), rtol=1e-5)
    np.testing.assert_allclose(dg.grad.numpy(), (epsD.numpy() * 0.5 / np.sqrt([0.5, 2.0])).sum(0), rtol=1e-5)

    temp = ft.tensor(0.5, requires_grad=True)
    logits = ft.tensor([0.3, -0.2, 0.1], requires_grad=True)
    r = D.RelaxedOneHotCategorical(temp, logits=logits).rsample()
    # gradient of sum(r * c) via the softmax identity r = softmax((logits + g) / temp)
    c = ft.tensor([1.0, 2.0, 3.0])
    (r * c).sum().backward()
    rv = r.detach().numpy()
    jac = (np.diag(rv) - np.outer(rv, rv)) / 0.5
    np.testing.assert_allclose(logits.grad.numpy(), jac @ c.numpy(), rtol=1e-4, atol=1e-6)
    assert np.isclose(rv.sum(), 1.0, atol=1e-6)

    df = ft.tensor([3.0], requires_grad=True)
    tl = ft.tensor([1.0], requires_grad=True)
    st = D.StudentT(df, tl, 2.0).rsample((4,))
    st.sum().backward()
    np.testing.assert_allclose(tl.grad.numpy(), [4.0])
    assert df.grad is not None and np.isfinite(df.grad.numpy()).all()

    wdf = ft.tensor(5.0, requires_grad=True)
    cov = ft.tensor([[1.0, 0.3], [0.3, 2.0]], requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ws = D.Wishart(wdf, cov).rsample((2,))
    assert any("Singular sample detected." in str(r.message) for r in rec)  # PyTorch 2.13's warning (see rsample)
    ws.sum().backward()
    assert cov.grad is not None and wdf.grad is not None
    assert np.isfinite(cov.grad.numpy()).all() and np.isfinite(wdf.grad.numpy()).all()


def test_gumbel_and_relaxed_bernoulli_rsample_identities():
    D = ft.distributions
    loc, scale = ft.tensor([0.5], requires_grad=True), ft.tensor([2.0], requires_grad=True)
    g = D.Gumbel(loc, scale).rsample((5,))
    g.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [5.0])
    np.testing.assert_allclose(scale.grad.numpy(), ((g.detach() - 0.5) / 2.0).sum(0).numpy(), rtol=1e-4)
    probs = ft.tensor([0.3], requires_grad=True)
    y = D.RelaxedBernoulli(ft.tensor(0.5), probs=probs).rsample((5,))
    y.sum().backward()
    yd = y.detach().numpy()
    np.testing.assert_allclose(probs.grad.numpy(), (yd * (1 - yd) / 0.5 / (0.3 * 0.7)).sum(0), rtol=1e-4)


# ---- transforms -------------------------------------------------------------------------------------------------
def test_transforms_match_torch():
    vec3 = _f32(2, 3)
    mat = _f32(2, 3, 3)
    res = {}
    for L in (torch, ft):
        T = L.distributions.transforms
        x3 = L.tensor(vec3, requires_grad=True)
        xm = L.tensor(mat, requires_grad=True)
        cdf = T.CumulativeDistributionTransform(L.distributions.Normal(L.zeros(3), L.ones(3)))
        cases = [(T.StickBreakingTransform(), x3), (T.SoftmaxTransform(), x3), (T.CorrCholeskyTransform(), x3),
                 (T.LowerCholeskyTransform(), xm), (T.PositiveDefiniteTransform(), xm * 0.5),
                 (T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=-1, lengths=[1, 2]), x3),
                 (T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0), x3),
                 (T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1), T.AffineTransform(0.0, 2.0, event_dim=1)],
                                 dim=0, lengths=[1, 1]), x3),
                 (cdf, x3)]
        out, meta = [], []
        for t, x in cases:
            y = t(x)
            out.append(y)
            xi = t.inv(y)
            if t.bijective or isinstance(t, (T.SoftmaxTransform, T.LowerCholeskyTransform,
                                             T.PositiveDefiniteTransform)):
                out.append(xi)
            if not isinstance(t, (T.SoftmaxTransform, T.LowerCholeskyTransform, T.PositiveDefiniteTransform)):
                out.append(t.log_abs_det_jacobian(x, y))
            meta.append((repr(t.domain), repr(t.codomain), t.bijective, t.forward_shape((4, 3)) if isinstance(t, (T.StickBreakingTransform, T.CorrCholeskyTransform))
                         else None, bool(t.codomain.check(y).all())))
        sum((o.nan_to_num(0.0) * (i + 1)).sum() for i, o in enumerate(out)).backward()
        res[L] = out, (x3.grad, xm.grad), meta
    for a, b in zip(res[ft][0], res[torch][0]):
        _close(a, b, "transform", dict(rtol=1e-4, atol=1e-5))
    for a, b in zip(res[ft][1], res[torch][1]):
        _close(a, b, "transform grad", dict(rtol=1e-4, atol=1e-5))
    assert str(res[ft][2]) == str(res[torch][2])


def test_compiled_relaxed_and_lowrank_equal_eager():
    D = ft.distributions

    def f(logits, w):
        r = D.RelaxedOneHotCategorical(ft.tensor(0.5), logits=logits).rsample()
        lr = D.LowRankMultivariateNormal(ft.zeros(3), w, ft.ones(3))
        v = D.VonMises(ft.zeros(3), ft.ones(3)).sample()
        return r, lr.log_prob(r), v
    lg, w = ft.tensor(_f32(2, 3)), ft.tensor(_f32(3, 2))
    ft.manual_seed(4)
    eager = [f(lg, w) for _ in range(2)]
    cf = ft.compile(f)
    ft.manual_seed(4)
    comp = [cf(lg, w) for _ in range(2)]
    for e, c in zip(eager, comp):
        for a, b in zip(e, c):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5)
    assert not np.allclose(comp[0][0].numpy(), comp[1][0].numpy())
