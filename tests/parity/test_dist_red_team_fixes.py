"""Random sampling and ``torch.distributions`` parity against real PyTorch 2.13 (red-team findings):
``torch.normal``'s tensor overloads (NormalBackward1/2/3 with zero gradients, the draw in mean's dtype, its
argument-parser and ``out=`` errors), ``bernoulli`` / ``multinomial`` / ``poisson`` argument and value errors,
Dirichlet / Beta draws clamped as PyTorch's ``_sample_dirichlet`` kernel (never exactly 0 or 1),
``torch._standard_gamma`` / ``torch._sample_dirichlet``, and the ``torch.distributions`` module layout.

Random values cannot match PyTorch's generator: the tests compare dtypes, shapes, grad_fn names, gradients that do
not depend on the draw, statistics and errors."""
import pickle

import pytest
import torch

import functorch_lite as ft
from _parity import same_rounded


def same(fn):
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same values or raise the same error type and message."""
    return same_rounded(fn, torch, ft)


def meta(t):
    return (str(t.dtype), tuple(t.shape), t.requires_grad, type(t.grad_fn).__name__ if t.grad_fn else None)


# ---- 1a. torch.normal's tensor overloads -------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["tt", "tf", "ft", "t"])
def test_normal_grad_fn_and_zero_gradients(form):
    def f(lib):
        m = lib.zeros(3, 1, requires_grad=True)
        s = lib.ones(3, requires_grad=True)
        r = {"tt": lambda: lib.normal(m, s), "tf": lambda: lib.normal(m, 2.),
             "ft": lambda: lib.normal(1., s), "t": lambda: lib.normal(m)}[form]()
        (r * 3).sum().backward()
        return meta(r), m.grad, s.grad
    same(f)


@pytest.mark.parametrize("a,b", [("float32", "float64"), ("float16", "float32"), ("float64", "float32"),
                                 ("bfloat16", "float64"), ("float32", "int64"), ("complex64", "float32")])
def test_normal_result_dtype(a, b):
    def f(lib):
        m, s = lib.zeros(2, dtype=getattr(lib, a)), lib.ones(2, dtype=getattr(lib, b))
        out = [meta(lib.normal(m, s)), meta(lib.normal(m, 1.))]
        if not s.dtype.is_complex:
            try:
                out.append(meta(lib.normal(0., s)))
            except NotImplementedError as e:
                out.append(str(e))
        return out
    same(f)


def test_normal_statistics():
    def f(lib):
        lib.manual_seed(0)
        r = lib.normal(lib.full((20000,), 2.), lib.full((20000,), 3.))
        r2 = lib.normal(-1., lib.full((20000,), 0.5))
        return round(float(r.mean())), round(float(r.std())), round(float(r2.mean()), 1), round(float(r2.std()), 1)
    same(f)


@pytest.mark.parametrize("call", [
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.long), lib.ones(2)),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.long), 1.),
    lambda lib: lib.normal(0., lib.ones(2, dtype=lib.long)),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.bool), 1.),
    lambda lib: lib.normal(0., lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.normal(lib.zeros(2), 1., size=(2,)),
    lambda lib: lib.normal(0., lib.ones(2), size=(2,)),
    lambda lib: lib.normal(lib.zeros(2), lib.ones(2), size=(2,)),
    lambda lib: lib.normal(lib.zeros(2), 1., (3,)),
    lambda lib: lib.normal(0., 1., 3),
    lambda lib: lib.normal(0., 1., size=3),
    lambda lib: lib.normal(0., 1.),
    lambda lib: lib.normal(0., size=(3,)),
    lambda lib: lib.normal(size=(3,)),
    lambda lib: lib.normal(std=lib.ones(2)),
    lambda lib: lib.normal(lib.zeros(2), 1., dtype=lib.float64),
    lambda lib: lib.normal(lib.zeros(2), "a"),
    lambda lib: lib.normal(lib.zeros(2), 1., generator=3),
    lambda lib: lib.normal(lib.zeros(2), float("nan")),
    lambda lib: lib.normal(lib.zeros(2), lib.tensor([1., float("nan")])),
    lambda lib: lib.normal(lib.zeros(3), lib.ones(2)),
    lambda lib: lib.normal(lib.zeros(3), 1., out=lib.empty(2)),
    lambda lib: lib.normal(lib.zeros(3), 1., out=lib.empty(3, dtype=lib.long)),
    lambda lib: lib.normal(lib.zeros(3), lib.ones(3), out=lib.empty(3, dtype=lib.long)),
    lambda lib: lib.normal(lib.zeros(3, requires_grad=True), 1., out=lib.empty(3)),
])
def test_normal_errors(call):
    same(lambda lib: meta(call(lib)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.normal(lib.zeros(3), 1., out=lib.empty(2, 1)),  # (out's shape broadcast with mean's)
    lambda lib: lib.normal(lib.zeros(3), lib.ones(3), out=lib.empty(2)),
    lambda lib: lib.normal(0., lib.ones(3), out=lib.empty(3, dtype=lib.float64)),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.long), 1., out=lib.empty(2)),
    lambda lib: lib.normal(2, lib.ones(2)),
    lambda lib: lib.normal(True, lib.ones(2)),
    lambda lib: lib.normal(0., 1., [3]),
])
def test_normal_accepted_forms(call):
    same(lambda lib: meta(call(lib)))


# ---- 3. bernoulli / multinomial / poisson argument and value errors -------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.bernoulli(lib.zeros(3), p=lib.ones(3)),
    lambda lib: lib.bernoulli(lib.zeros(3), lib.ones(3)),
    lambda lib: lib.bernoulli(lib.zeros(3), 0.5, out=lib.empty(3)),
    lambda lib: lib.bernoulli(lib.zeros(3), "a"),
    lambda lib: lib.bernoulli(lib.zeros(3), p=None),
    lambda lib: lib.bernoulli(lib.zeros(3), 0.5),
    lambda lib: lib.bernoulli(lib.zeros(3), lib.tensor(0.3)),
    lambda lib: lib.bernoulli(input=lib.zeros(2), p=1),
    lambda lib: lib.bernoulli(lib.full((2,), 0.5), out=lib.empty(2)),
])
def test_bernoulli_arguments(call):
    same(lambda lib: meta(call(lib)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.multinomial(lib.ones(3), 2, 1),
    lambda lib: lib.multinomial(lib.ones(3), 2.0),
    lambda lib: lib.multinomial(lib.ones(3), 2, replacement=1),
    lambda lib: lib.multinomial(lib.ones(3), num_samples=2.0),
    lambda lib: lib.multinomial(lib.ones(3), True),
    lambda lib: lib.multinomial(lib.ones(3), 2, None),
    lambda lib: lib.multinomial(lib.ones(3), 2, True),
    lambda lib: lib.multinomial(lib.ones(3), lib.tensor(2)),
    lambda lib: lib.multinomial(lib.ones(3), num_samples=2, replacement=True),
    lambda lib: lib.multinomial(lib.ones(3), 2, out=lib.empty(2)),
    lambda lib: lib.multinomial(lib.ones(2 ** 24 + 1), 1),
    lambda lib: lib.multinomial(lib.ones(1, 2 ** 24 + 1), 1),
    lambda lib: lib.multinomial(lib.ones(3), 0),
])
def test_multinomial_arguments(call):
    same(lambda lib: meta(call(lib)))


def test_multinomial_num_samples_not_cached_by_equal_float():
    """A float ``num_samples`` once refused must not leave a draw cached under an equal int's key."""
    same(lambda lib: [meta(lib.multinomial(lib.ones(3), 2)), meta(lib.multinomial(lib.ones(2, 3), 2, True))])


@pytest.mark.parametrize("rate", [[float("nan")], [1., float("nan")], [-float("inf")], [float("inf")]])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_poisson_invalid_rate(rate, dtype):
    same(lambda lib: meta(lib.poisson(lib.tensor(rate, dtype=getattr(lib, dtype)))))


# ---- 1b. Dirichlet / Beta draws: clamped to [tiny, nexttoward(1, 0)] -------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_and_beta_never_exactly_zero_or_one(dtype):
    def f(lib):
        lib.manual_seed(0)
        dt = getattr(lib, dtype)
        c = lib.tensor([1e-3, 1e3], dtype=dt, requires_grad=True)
        s = lib.distributions.Dirichlet(c).rsample((2000,))
        b = lib.distributions.Beta(lib.tensor(1e3, dtype=dt), lib.tensor(1e-3, dtype=dt)).sample((2000,))
        x = lib._sample_dirichlet(lib.tensor([[1e-3, 1e3]] * 500, dtype=dt))
        fi = lib.finfo(dt)
        return (meta(s), float(s.min()) == fi.tiny, float(s.max()) == 1 - fi.eps / 2, float(b.max()) == 1 - fi.eps / 2,
                bool((b < 1).all()), float(x.min()) == fi.tiny, float(x.max()) == 1 - fi.eps / 2, meta(x))
    same(f)


def test_dirichlet_rsample_gradient_expectation():
    def f(lib):
        lib.manual_seed(0)
        c = lib.tensor([0.5, 1.0, 4.0], requires_grad=True)
        s = lib.distributions.Dirichlet(c).rsample((20000,))
        (s.mean(0) * lib.tensor([1., 2., 3.])).sum().backward()
        b = lib.distributions.Beta(c[:1], c[2:]).rsample((4,))
        return c.grad.numpy().round(1).tolist(), meta(b)
    same(f)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("make", [
    lambda lib, dt: lib.distributions.Beta(lib.ones(2, dtype=dt), lib.ones(2, dtype=dt)).sample(),
    lambda lib, dt: lib.distributions.Dirichlet(lib.ones(2, dtype=dt)).sample(),
    lambda lib, dt: lib.distributions.Dirichlet(lib.ones(2, dtype=dt)).rsample(),
    lambda lib, dt: lib.distributions.Gamma(lib.ones(2, dtype=dt), 1.).sample(),
])
def test_half_dirichlet_has_no_kernel(make, dtype):
    same(lambda lib: meta(make(lib, getattr(lib, dtype))))


@pytest.mark.parametrize("call", [
    lambda lib: lib._standard_gamma(lib.ones(3, requires_grad=True)),
    lambda lib: lib._sample_dirichlet(lib.ones(2, 3, requires_grad=True)),
    lambda lib: lib._standard_gamma(lib.ones(3, dtype=lib.half)),
    lambda lib: lib._sample_dirichlet(lib.ones(3, dtype=lib.half)),
    lambda lib: lib._standard_gamma(lib.ones(3, dtype=lib.long)),
    lambda lib: lib._sample_dirichlet(lib.ones(3, dtype=lib.long)),
    lambda lib: lib._sample_dirichlet(lib.ones(3, dtype=lib.float64), generator=lib.Generator().manual_seed(1)),
    lambda lib: lib._standard_gamma(lib.full((3,), 1e-3)).min() >= lib.finfo(lib.float32).tiny,
])
def test_private_samplers(call):
    same(lambda lib: (lambda r: meta(r) if r.dtype != lib.bool else bool(r))(call(lib)))


def test_sample_dirichlet_backward_raises():
    def f(lib):
        x = lib._sample_dirichlet(lib.ones(3, requires_grad=True))
        x.sum().backward()
    same(f)


def test_standard_gamma_statistics():
    def f(lib):
        lib.manual_seed(0)
        g = lib._standard_gamma(lib.full((20000,), 3.))
        s = lib._sample_dirichlet(lib.tensor([[1., 2., 3.]]).expand(20000, 3).contiguous())
        return round(float(g.mean()), 1), s.mean(0).numpy().round(2).tolist()
    same(f)


# ---- 4. the torch.distributions namespace ---------------------------------------------------------------------
def test_relaxed_classes_only_in_their_modules():
    def f(lib):
        D = lib.distributions
        a = D.relaxed_bernoulli.LogitRelaxedBernoulli(lib.tensor(1.), probs=lib.tensor(0.3))
        b = D.relaxed_categorical.ExpRelaxedCategorical(lib.tensor(1.), probs=lib.tensor([0.3, 0.7]))
        return (hasattr(D, "LogitRelaxedBernoulli"), hasattr(D, "ExpRelaxedCategorical"),
                "LogitRelaxedBernoulli" in D.__all__, "ExpRelaxedCategorical" in D.__all__,
                tuple(a.batch_shape), tuple(b.event_shape), hasattr(D.relaxed_bernoulli, "RelaxedBernoulli"))
    same(f)


def _short(lib, text):
    return text.replace(lib.__name__, "T")


def test_class_module_paths():
    def f(lib):
        D = lib.distributions
        classes = [D.Normal, D.Multinomial, D.OneHotCategoricalStraightThrough, D.ExponentialFamily, D.StudentT,
                   D.MultivariateNormal, D.Independent, D.LowRankMultivariateNormal, D.RelaxedOneHotCategorical,
                   D.relaxed_bernoulli.LogitRelaxedBernoulli, D.transforms.StickBreakingTransform,
                   D.transforms.CorrCholeskyTransform, D.ExpTransform]
        return [_short(lib, repr(c)) for c in classes]
    same(f)


def test_multinomial_mode_message_and_pickle():
    def f(lib):
        d = lib.distributions.Multinomial(3, lib.tensor([0.2, 0.8]))
        back = pickle.loads(pickle.dumps(d))
        try:
            d.mode
        except NotImplementedError as e:
            return _short(lib, str(e)), back.total_count
    same(f)


def test_multivariate_and_transform_pickles():
    def f(lib):
        D = lib.distributions
        t = pickle.loads(pickle.dumps(D.transforms.StickBreakingTransform()))
        n = pickle.loads(pickle.dumps(D.Normal(lib.zeros(2), 1.)))
        return repr(t), n.log_prob(lib.zeros(2))
    same(f)


def test_normal_cdf_and_student_t_entropy_ordinary_values():
    """(The float32 tails -- Normal.cdf(-5), StudentT(1000).entropy(), Geometric(1e-6).entropy() -- differ in the
    elementwise kernels (erf, digamma, binary_cross_entropy_with_logits), not in the distributions' formulas,
    which are PyTorch's.)"""
    same(lambda lib: [lib.distributions.Normal(0., 1.).cdf(lib.tensor([-3., -1., 0., 2.])),
                      lib.distributions.StudentT(lib.tensor([3., 30.])).entropy(),
                      lib.distributions.Geometric(lib.tensor([0.3, 0.5])).entropy()])


@pytest.mark.parametrize("call", [
    lambda lib: lib.normal(lib.zeros(2, device="meta"), 1.),
    lambda lib: lib.normal(lib.zeros(2, device="meta"), lib.ones(2, device="meta")),
    lambda lib: lib.normal(0., lib.ones(3, 1, device="meta", requires_grad=True)),
    lambda lib: lib.bernoulli(lib.zeros(2, device="meta")),
])
def test_meta_draws(call):
    same(lambda lib: (meta(call(lib)), str(call(lib).device)))


@pytest.mark.parametrize("call", ["_standard_gamma", "_sample_dirichlet", "Gamma.sample"])
def test_vmap_same_randomness_refuses_batched_gamma_draws(call):
    """vmap(randomness='same') refuses a gamma / Dirichlet draw for a batched concentration, as torch's
    batching rule does; randomness='different' draws one per row."""
    def f(lib):
        x = lib.rand(3, 4) + 0.5
        fns = {"_standard_gamma": lambda c: lib._standard_gamma(c),
               "_sample_dirichlet": lambda c: lib._sample_dirichlet(c),
               "Gamma.sample": lambda c: lib.distributions.Gamma(c, lib.ones_like(c)).sample()}
        out = lib.func.vmap(fns[call], randomness="different")(x)
        res = [tuple(out.shape), bool((out > 0).all())]
        try:
            lib.func.vmap(fns[call], randomness="same")(x)
        except RuntimeError as e:
            res.append(str(e))
        return res
    same(f)
