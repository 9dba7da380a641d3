"""``vmap(randomness=..., chunk_size=k)``: chunking must not change what the random ops draw.

functorch_lite's streams come from JAX's PRNG, so its values differ from torch's by design; values and the
generator's advancement are compared between functorch_lite chunked and unchunked, and against torch only the
structure (which elements are equal, that the next draw after a chunked call is the unchunked call's, errors).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import functorch_lite as ft
import functorch_lite.func  # noqa: F401  (the submodule; ft.func once imported)


def _run(L, mode, chunk, fn, x, **kw):
    """Seed, run ``vmap(fn)`` on ``x``, then draw one more number: (output as numpy, the next draw)."""
    L.manual_seed(0)
    out = L.func.vmap(fn, randomness=mode, chunk_size=chunk, **kw)(x)
    after = L.rand(()).item()
    if isinstance(out, tuple):
        return tuple(o.numpy() for o in out), after
    return out.numpy(), after


def _rand_scalar(L):
    return lambda a: a + L.rand(())


def _two_draws(L):
    return lambda a: a + L.rand(()) + 10 * L.rand(2)


def _dropout(L):
    return lambda a: L.nn.functional.dropout(a, 0.5)


FNS = {"rand_scalar": (_rand_scalar, (5,)), "two_draws": (_two_draws, (5, 2)), "dropout": (_dropout, (7, 16))}


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("chunk", [2, 3])
def test_same_chunked_matches_unchunked_and_advances_like_it(name, chunk):
    make, shape = FNS[name]
    x = np.ones(shape, np.float32) if name == "dropout" else np.zeros(shape, np.float32)
    for L in (ft, torch):
        got, after = _run(L, "same", chunk, make(L), L.tensor(x))
        ref, ref_after = _run(L, "same", None, make(L), L.tensor(x))
        # one value / one mask for the whole batch
        assert (got == got[:1]).all(), (L.__name__, got)
        if name == "dropout":
            assert (got == 0).any() and (got == 2).any()
        # the chunks draw what the unchunked call draws, and the generator ends where it would
        np.testing.assert_array_equal(got, ref, err_msg=L.__name__)
        assert after == ref_after, L.__name__


def test_same_chunked_reported_example():
    ft.manual_seed(0)
    out = ft.func.vmap(lambda a: a + ft.rand(()), randomness="same", chunk_size=2)(ft.zeros(4)).numpy()
    ft.manual_seed(0)
    ref = ft.func.vmap(lambda a: a + ft.rand(()), randomness="same")(ft.zeros(4)).numpy()
    ft.manual_seed(0)
    assert np.unique(out).size == 1 and out[0] == ref[0] == ft.rand(()).item()


@pytest.mark.parametrize("chunk", [2])
def test_different_chunked(chunk):
    x = np.zeros((5,), np.float32)
    for L in (ft, torch):
        got, after = _run(L, "different", chunk, _rand_scalar(L), L.tensor(x))
        ref, ref_after = _run(L, "different", None, _rand_scalar(L), L.tensor(x))
        assert np.unique(got).size == 5, (L.__name__, got)
        np.testing.assert_array_equal(got, ref, err_msg=L.__name__)   # torch: one op, its stream continues
        assert after == ref_after, L.__name__
    # several draws per call: functorch_lite's chunks still draw the unchunked call's values (torch's interleave)
    got, after = _run(ft, "different", 2, _two_draws(ft), ft.zeros(5, 2))
    ref, ref_after = _run(ft, "different", None, _two_draws(ft), ft.zeros(5, 2))
    np.testing.assert_array_equal(got, ref)
    assert after == ref_after and np.unique(got[:, 0]).size == 5
    for L in (ft, torch):   # the generator advances as the unchunked call's in both
        assert _run(L, "different", 2, _two_draws(L), L.zeros(5, 2))[1] == \
            _run(L, "different", None, _two_draws(L), L.zeros(5, 2))[1]


def test_error_mode_chunked_raises_and_leaves_no_patch():
    for L in (ft, torch):
        with pytest.raises(RuntimeError, match="randomness error mode"):
            L.func.vmap(lambda a: a + L.rand(()), chunk_size=2)(L.zeros(4))
    from functorch_lite.random import Generator
    orig = Generator.__dict__["next_key"]
    # a failure inside a chunk under 'same' restores Generator.next_key too
    with pytest.raises(ValueError):
        ft.func.vmap(lambda a: (ft.rand(()), 1), randomness="same", chunk_size=2)(ft.zeros(4))
    assert Generator.__dict__["next_key"] is orig


def test_same_chunked_in_dims_out_dims_tuples():
    x = np.zeros((3, 5), np.float32)
    c = np.zeros((2,), np.float32)

    def make(L):
        return lambda a, b: (a + L.rand(()), a[:2] + b + L.rand(2), L.rand(4))

    # torch's chunked vmap can't take out_dims=None (it concatenates the chunks along dim None): ft only
    for L, last in ((ft, None), (torch, 0)):
        kw = dict(in_dims=(1, None), out_dims=(0, 1, last))
        runs = {}
        for chunk in (3, None):
            L.manual_seed(0)
            outs = L.func.vmap(make(L), randomness="same", chunk_size=chunk, **kw)(L.tensor(x), L.tensor(c))
            runs[chunk] = [o.numpy() for o in outs], L.rand(()).item()
        (a, b, u), after = runs[None]
        assert a.shape == (5, 3) and b.shape == (2, 5) and u.shape == ((4,) if last is None else (5, 4))
        assert (a == a[0, 0]).all() and (b == b[:, :1]).all() and (last is None or (u == u[:1]).all())
        for chunk in (3,):
            for g, r in zip(runs[chunk][0], runs[None][0]):
                np.testing.assert_array_equal(g, r, err_msg=f"{L.__name__} chunk={chunk}")
            assert runs[chunk][1] == after


def test_same_chunked_explicit_generator():
    # torch resets only the default generator between chunks (a generator= draw differs per chunk there);
    # functorch_lite rewinds every generator drawn from, so chunking never changes the result
    def go(chunk):
        g = ft.Generator().manual_seed(3)
        out = ft.func.vmap(lambda a: a + ft.rand((), generator=g), randomness="same", chunk_size=chunk)(ft.zeros(5))
        return out.numpy(), ft.rand((), generator=g).item()
    (got, after), (ref, ref_after) = go(2), go(None)
    assert np.unique(got).size == 1
    np.testing.assert_array_equal(got, ref)
    assert after == ref_after


@pytest.mark.parametrize("outer,inner", [("same", "same"), ("different", "same"), ("same", "different")])
def test_nested_chunked(outer, inner):
    x = np.zeros((3, 4), np.float32)
    for L in (ft, torch):
        res = {}
        for ci, co in ((3, 2), (None, None)):
            L.manual_seed(0)
            f = L.func.vmap(lambda a: a + L.rand(()), randomness=inner, chunk_size=ci)
            out = L.func.vmap(f, randomness=outer, chunk_size=co)(L.tensor(x)).numpy()
            res[(ci, co)] = out, L.rand(()).item()
            rows_same, cols_same = (out == out[:1]).all(), (out == out[:, :1]).all()
            assert rows_same == (outer == "same") and cols_same == (inner == "same"), (L.__name__, out)
        if L is ft or outer == inner == "same":
            for key in ((3, 2),):
                np.testing.assert_array_equal(res[key][0], res[(None, None)][0], err_msg=f"{L.__name__} {key}")
        for key in ((3, 2),):
            assert res[key][1] == res[(None, None)][1], (L.__name__, key)
