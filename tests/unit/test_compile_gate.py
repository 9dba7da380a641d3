"""compile's gate.py: the donating program of a step with index checks selects each rewritten buffer where it is
made (not at the end, where XLA copies the buffers the update reads again), with the same values."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from functorch_lite._compile.gate import gated

SHAPE = (64, 96)


def _adam(p, m, v, g):
    m2 = 0.9 * m + 0.1 * g
    v2 = 0.999 * v + 0.001 * g * g
    return p - 1e-3 * m2 / (jnp.sqrt(v2) + 1e-8), m2, v2


def _step(p, m, v, x, y):
    """The shape runner._with_checks gives a training step: a flag from the forward's labels, the update in a jit
    call, each rewritten buffer selected at the end against its input."""
    ok = jnp.logical_not(jnp.any((y < 0) | (y >= 10)))
    g = jax.grad(lambda p: ((x @ p) ** 2).sum())(p)
    p2, m2, v2 = jax.jit(_adam)(p, m, v, g)
    return [jax.lax.select_n(ok, a, b) for a, b in ((p, p2), (m, m2), (v, v2))], ok


def _args(bad=False):
    r = np.random.default_rng(0)
    p, m, v = (jnp.asarray(r.standard_normal(SHAPE), jnp.float32) for _ in range(3))
    x = jnp.asarray(r.standard_normal((8, SHAPE[0])), jnp.float32)
    y = jnp.arange(8) % 10 + (10 if bad else 0)
    return p, jnp.abs(m), jnp.abs(v), x, y


def _flat(fn):
    return lambda *a: fn(*a)


@pytest.mark.parametrize("bad", [False, True])
def test_same_values(bad):
    closed = jax.jit(_step).trace(*_args()).jaxpr
    plain = jax.jit(_flat(jax.extend.core.jaxpr_as_fun(closed)))(*_args(bad))
    got = jax.jit(_flat(gated(closed)))(*_args(bad))
    for a, b in zip(plain, got):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    if bad:  # (the old buffers back)
        for a, b in zip(got[:3], _args()[:3]):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _copies(fn):
    txt = jax.jit(fn, donate_argnums=(0, 1, 2)).lower(*_args()).compile().as_text()
    shape = f"f32[{SHAPE[0]},{SHAPE[1]}]"
    return sum(1 for line in txt.splitlines() if " copy(" in line and shape in line.split(" copy(")[0])


def test_no_copies_of_the_rewritten_buffers():
    """Selected at the end, the parameter update reads the old moments after their in-place write, and XLA copies
    them first; selected where they are made, nothing is copied."""
    closed = jax.jit(_step).trace(*_args()).jaxpr
    assert _copies(_flat(gated(closed))) == 0
    # (the jaxpr evaluated as it is: the final selects stay, as a plan-less program's would)
    assert _copies(_flat(jax.extend.core.jaxpr_as_fun(closed))) >= _copies(_flat(gated(closed)))


def test_flag_after_the_update_keeps_the_final_selects():
    """A check made after the values (the flag's inputs come later): nothing can be selected early; the program is
    the plain one's, values equal."""
    def step(p, m, v, x, y):
        p2, m2, v2 = jax.jit(_adam)(p, m, v, x.sum() * jnp.ones_like(p))
        ok = jnp.logical_not(jnp.any(p2.sum() + y.astype(jnp.float32) > 1e9))
        return [jax.lax.select_n(ok, a, b) for a, b in ((p, p2), (m, m2), (v, v2))]
    closed = jax.jit(step).trace(*_args()).jaxpr
    for bad in (False, True):
        a = jax.jit(jax.extend.core.jaxpr_as_fun(closed))(*_args(bad))
        b = jax.jit(gated(closed))(*_args(bad))
        for u, w in zip(a, b):
            np.testing.assert_array_equal(np.asarray(u), np.asarray(w))


def test_one_value_for_two_buffers():
    """One new array returned for two buffers (selected against each one's old value): kept at the end."""
    def step(p, m, v, x, y):
        ok = jnp.logical_not(jnp.any(y >= 10))
        n = p * 2.0
        return [jax.lax.select_n(ok, p, n), jax.lax.select_n(ok, m, n)]
    closed = jax.jit(step).trace(*_args()).jaxpr
    for bad in (False, True):
        out = jax.jit(gated(closed))(*_args(bad))
        p, m = _args()[:2]
        np.testing.assert_array_equal(np.asarray(out[0]), np.asarray(p if bad else p * 2.0))
        np.testing.assert_array_equal(np.asarray(out[1]), np.asarray(m if bad else p * 2.0))
