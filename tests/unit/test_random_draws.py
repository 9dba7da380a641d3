"""Random draws of small and middling size run a flat program of a bucketed size and take its prefix
(``ops/creation.py``: ``_rand_jit``), so that a new shape compiles a slice, not a new threefry program. That is
only sound while the prefix of a longer draw is the shorter draw bit for bit: checked here against the
exact-shape program for every kind, the dtypes each kind takes, and shapes across bucket edges. (One exception,
asserted as such: XLA compiles a one-element float32 normal draw differently, and its value is one ulp off that
of the same element of any longer draw -- the old exact-shape draws differed from each other so.)"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import functorch_lite as torch
from functorch_lite import dtypes as D
from functorch_lite.ops import creation as C

SHAPES = [(), (0,), (1,), (7, 9), (65,), (3, 4, 5), (1000,)]  # (edges: empty, one value, 64/65, past 2**k)
KINDS = {  # (16-, 32- and 64-bit draws, complex pairs, integer ranges)
    "uniform": [D.float16, D.bfloat16, D.float32, D.float64, D.complex64],
    "normal": [D.bfloat16, D.float32, D.float64, D.complex64],
    "randint": [D.int64, D.uint8],
}
ARGS = {"uniform": (-2.0, 3.0), "normal": (0.5, 2.0), "randint": (-7, 50)}


def test_bucket_sizes():
    assert [C._rand_size(n) for n in (0, 1, 64, 65, 96, 97, 128, 129, 1000, 1025, 1537)] == \
        [64, 64, 64, 96, 96, 128, 128, 192, 1024, 1536, 2048]
    for n in range(1, 5000, 7):
        m = C._rand_size(n)
        assert n <= m and (n <= 64 or 2 * m < 3 * n)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bucketed_draw_equals_the_exact_shape_draw(kind):
    jdev = jax.devices("cpu")[0]
    a, b = ARGS[kind]
    for dt in KINDS[kind]:
        for i, shape in enumerate(SHAPES):
            key = jax.random.PRNGKey(1000 * i + 7)
            got = np.asarray(C._rand_jit(kind, shape, dt, jdev)(key, a, b))
            want = np.asarray(jax.jit(C._draw(kind, shape, dt))(key, a, b))
            assert got.shape == want.shape == shape and got.dtype == want.dtype, (kind, dt, shape)
            if kind == "normal" and dt is D.float32 and shape == (1,):
                np.testing.assert_array_max_ulp(got, want, 1)
                continue
            assert got.tobytes() == want.tobytes(), (kind, dt, shape)


def test_seeded_draws_repeat_and_differ_between_calls():
    torch.manual_seed(3)
    x1, y1 = torch.rand(7, 9), torch.randn(7, 9)
    torch.manual_seed(3)
    x2, y2 = torch.rand(7, 9), torch.randn(7, 9)
    assert torch.equal(x1, x2) and torch.equal(y1, y2)
    assert not torch.equal(torch.rand(7, 9), x1)
    # the flat draws behind two shapes of one bucket are not shared between calls: different keys, different values
    a, b = torch.rand(70), torch.rand(80)
    assert not np.array_equal(a.numpy(), b.numpy()[:70])
