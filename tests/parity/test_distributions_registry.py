"""torch.distributions.constraint_registry (``biject_to`` / ``transform_to`` / ``ConstraintRegistry``) against
torch 2.13: for every registered constraint class, the transform classes chosen (and their composed parts), and
on the same float64 unconstrained input the forward values, the inverse and (where bijective) the
log_abs_det_jacobian; the error for an unregistered constraint; user registrations."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

RNG = np.random.default_rng(11)
TOL = dict(rtol=1e-9, atol=1e-9)


def _np(t):
    return t.detach().double().numpy()


def _structure(t):
    """Class names of a transform and its parts, with Affine parameters, as nested tuples."""
    name = type(t).__name__
    if name == "ComposeTransform":
        return (name, tuple(_structure(p) for p in t.parts))
    if name == "IndependentTransform":
        return (name, _structure(t.base_transform), t.reinterpreted_batch_ndims)
    if name == "CatTransform":
        return (name, tuple(_structure(p) for p in t.transforms), t.dim, tuple(t.lengths))
    if name == "StackTransform":
        return (name, tuple(_structure(p) for p in t.transforms), t.dim)
    if name == "AffineTransform":
        loc, scale = (v if isinstance(v, (int, float)) else tuple(_np(v).ravel()) for v in (t.loc, t.scale))
        return (name, loc, scale)
    return (name,)


def _t(L, a):
    return L.tensor(np.asarray(a, dtype=np.float64), dtype=L.float64)


# (id, constraint builder taking the framework module, unconstrained input shape, registries to test)
BOTH = ("biject_to", "transform_to")
CASES = [
    ("real", lambda L: L.distributions.constraints.real, (3,), BOTH),
    ("real_vector", lambda L: L.distributions.constraints.real_vector, (2, 3), BOTH),
    ("independent_positive", lambda L: L.distributions.constraints.independent(
        L.distributions.constraints.positive, 1), (2, 3), BOTH),
    ("independent_interval", lambda L: L.distributions.constraints.independent(
        L.distributions.constraints.interval(-1.0, 2.0), 2), (2, 3), BOTH),
    ("positive", lambda L: L.distributions.constraints.positive, (3,), BOTH),
    ("nonnegative", lambda L: L.distributions.constraints.nonnegative, (3,), BOTH),
    ("greater_than", lambda L: L.distributions.constraints.greater_than(-2.0), (3,), BOTH),
    ("greater_than_eq", lambda L: L.distributions.constraints.greater_than_eq(1.5), (3,), BOTH),
    ("greater_than_tensor", lambda L: L.distributions.constraints.greater_than(_t(L, [0.5, -1.0, 2.0])), (2, 3),
     BOTH),
    ("less_than", lambda L: L.distributions.constraints.less_than(3.0), (3,), BOTH),
    ("unit_interval", lambda L: L.distributions.constraints.unit_interval, (3,), BOTH),
    ("interval_0_1_int", lambda L: L.distributions.constraints.interval(0, 1), (3,), BOTH),
    ("interval", lambda L: L.distributions.constraints.interval(-1.0, 2.0), (3,), BOTH),
    ("interval_tensor", lambda L: L.distributions.constraints.interval(_t(L, [0.0, -1.0, 2.0]),
                                                                        _t(L, [1.0, 3.0, 2.5])), (2, 3), BOTH),
    ("interval_tensor_01", lambda L: L.distributions.constraints.interval(_t(L, 0.0), _t(L, 1.0)), (3,), BOTH),
    ("half_open_interval", lambda L: L.distributions.constraints.half_open_interval(-1.0, 2.0), (3,), BOTH),
    ("simplex_biject", lambda L: L.distributions.constraints.simplex, (2, 3), ("biject_to",)),
    ("simplex_transform", lambda L: L.distributions.constraints.simplex, (2, 4), ("transform_to",)),
    ("lower_cholesky", lambda L: L.distributions.constraints.lower_cholesky, (2, 3, 3), ("transform_to",)),
    ("positive_definite", lambda L: L.distributions.constraints.positive_definite, (3, 3), ("transform_to",)),
    ("positive_semidefinite", lambda L: L.distributions.constraints.positive_semidefinite, (2, 3, 3),
     ("transform_to",)),
    ("corr_cholesky", lambda L: L.distributions.constraints.corr_cholesky, (2, 3), BOTH),
    ("cat", lambda L: L.distributions.constraints.cat(
        [L.distributions.constraints.positive, L.distributions.constraints.real,
         L.distributions.constraints.interval(0.0, 1.0)], 1, [1, 2, 1]), (2, 4), BOTH),
    ("stack", lambda L: L.distributions.constraints.stack(
        [L.distributions.constraints.positive, L.distributions.constraints.less_than(1.0)], 1), (3, 2), BOTH),
]


# simplex is registered in both, with different transforms: its "missing" combinations are not errors
PARAMS = [pytest.param(n, b, s, r, reg, id=f"{n}-{reg}") for n, b, s, r in CASES for reg in BOTH
          if reg in r or not n.startswith("simplex")]


@pytest.mark.parametrize("name,build,shape,registries,registry", PARAMS)
def test_registry_matches_torch(name, build, shape, registries, registry):
    if registry not in registries:
        c = build(ft)
        with pytest.raises(NotImplementedError, match=f"Cannot transform {type(c).__name__} constraints"):
            getattr(ft.distributions, registry)(c)
        with pytest.raises(NotImplementedError, match=f"Cannot transform {type(c).__name__} constraints"):
            getattr(torch.distributions, registry)(build(torch))
        return
    tt = getattr(torch.distributions, registry)(build(torch))
    tf = getattr(ft.distributions, registry)(build(ft))
    assert _structure(tf) == _structure(tt)
    assert tf.bijective == tt.bijective
    assert (tf.domain.event_dim, tf.codomain.event_dim) == (tt.domain.event_dim, tt.codomain.event_dim)

    x = RNG.standard_normal(shape)
    xt, xf = torch.tensor(x), _t(ft, x)
    yt, yf = tt(xt), tf(xf)
    assert tuple(yf.shape) == tuple(yt.shape)
    assert str(yf.dtype) == str(yt.dtype)
    np.testing.assert_allclose(_np(yf), _np(yt), **TOL)
    if tt.bijective:
        np.testing.assert_allclose(_np(tf.inv(yf)), _np(tt.inv(yt)), rtol=1e-7, atol=1e-7)
        lt, lf = tt.log_abs_det_jacobian(xt, yt), tf.log_abs_det_jacobian(xf, yf)
        assert tuple(lf.shape) == tuple(lt.shape)
        np.testing.assert_allclose(_np(lf), _np(lt), **TOL)


class _Unregistered(ft.distributions.constraints.Constraint):
    pass


def test_unregistered_constraint_errors():
    for reg in (ft.distributions.biject_to, ft.distributions.transform_to):
        with pytest.raises(NotImplementedError, match="^Cannot transform _Unregistered constraints$"):
            reg(_Unregistered())


def test_unregistered_messages_match_torch():
    # discrete / dependent / matrix-shape constraints have no transforms in torch either
    for name in ("boolean", "nonnegative_integer", "dependent", "lower_triangular", "square", "symmetric",
                 "one_hot"):
        msgs = []
        for mod in (torch, ft):
            for reg in ("biject_to", "transform_to"):
                with pytest.raises(NotImplementedError) as e:
                    getattr(mod.distributions, reg)(getattr(mod.distributions.constraints, name))
                msgs.append(str(e.value))
        assert msgs[:2] == msgs[2:], name


def test_register_type_error():
    reg = ft.distributions.constraint_registry.ConstraintRegistry()
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        reg.register(int, lambda c: None)


def test_user_registration():
    C = ft.distributions.constraints
    T = ft.distributions.transforms

    class _Between(C.Constraint):
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi
            super().__init__()

        def check(self, value):
            return (value > self.lo) & (value < self.hi)

    reg = ft.distributions.constraint_registry.ConstraintRegistry()
    with pytest.raises(NotImplementedError, match="Cannot transform _Between constraints"):
        reg(_Between(0.0, 1.0))

    @reg.register(_Between)
    def _factory(c):
        assert isinstance(c, _Between)
        return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(c.lo, c.hi - c.lo)])

    t = reg(_Between(-1.0, 3.0))
    y = t(_t(ft, [-2.0, 0.0, 5.0]))
    assert bool(_Between(-1.0, 3.0).check(y).all())
    np.testing.assert_allclose(_np(y), -1.0 + 4.0 / (1.0 + np.exp(-np.array([-2.0, 0.0, 5.0]))), **TOL)

    # registering on a singleton instance registers its class; the global registries accept user classes
    reg2 = ft.distributions.constraint_registry.ConstraintRegistry()
    reg2.register(_Between(0.0, 1.0), lambda c: T.ExpTransform())
    assert isinstance(reg2(_Between(5.0, 6.0)), T.ExpTransform)
    try:
        ft.distributions.biject_to.register(_Between, _factory)
        assert type(ft.distributions.biject_to(_Between(0.0, 1.0))).__name__ == "ComposeTransform"
        with pytest.raises(NotImplementedError):
            ft.distributions.transform_to(_Between(0.0, 1.0))
    finally:
        ft.distributions.biject_to._registry.pop(_Between, None)


def test_module_exports():
    assert ft.distributions.constraint_registry.biject_to is ft.distributions.biject_to
    assert ft.distributions.constraint_registry.transform_to is ft.distributions.transform_to
    assert set(ft.distributions.constraint_registry.__all__) == set(torch.distributions.constraint_registry.__all__)
    from functorch_lite.distributions.constraint_registry import ConstraintRegistry, biject_to
    assert isinstance(biject_to, ConstraintRegistry)
