"""A compiled step's index checks answered on the host (``_compile/hostcheck.py``), against real torch.

The steady call of a step with checks (a cross-entropy's target range) used to read the program's flags after
it, so every call waited for its program. Where the flags are integer comparisons of the inputs, they are now
computed with NumPy before the program runs, and the call does not wait. These tests pin that the host's answer is
the program's: the same errors at the same calls, the same state after them, as torch eager.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite._compile import hostcheck, runner
from _parity import close


def _mlp_step(T, seed=0):
    rng = np.random.default_rng(seed)
    model = T.nn.Sequential(T.nn.Linear(6, 8), T.nn.ReLU(), T.nn.Linear(8, 4))
    with T.no_grad():
        for p in model.parameters():
            p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    opt = T.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = T.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, model


def _batches():
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((5, 6)).astype(np.float32) for _ in range(8)]
    ys = [rng.integers(0, 4, 5) for _ in range(8)]
    ys[5] = np.array([0, 1, 7, 2, 3])       # a label past the classes
    ys[6] = np.array([0, -100, 3, 1, 2])    # the default ignore_index: valid
    return xs, ys


def _run(T, step, model, batches, same=False):
    log = []
    xs, ys = batches
    keep = [(T.tensor(x), T.tensor(y)) for x, y in zip(xs, ys)]
    for k in range(len(xs)):
        x, y = keep[0] if same and k < 4 else keep[k]
        before = [p.detach().clone() for p in model.parameters()]
        try:
            log.append(float(step(x, y)))
        except IndexError as e:
            log.append(str(e))
            assert all(bool((a == b.detach()).all()) for a, b in zip(before, model.parameters()))
    return log, [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("same", [False, True])
def test_steady_step_checks_on_host(monkeypatch, same):
    """A compiled Adam + CrossEntropyLoss step over new batches (``same``: the first four calls over one batch,
    the host's answer reused for its unchanged arrays): its steady calls never read the program's flags, the bad
    label raises torch's IndexError at the same call with the parameters unchanged, and every loss and the final
    parameters equal torch eager's."""
    batches = _batches()
    tstep, tmodel = _mlp_step(torch)
    tlog, tparams = _run(torch, tstep, tmodel, batches, same)
    fstep, fmodel = _mlp_step(ft)
    cstep = ft.compile(fstep)
    reads = []
    real = runner._flagged
    monkeypatch.setattr(runner, "_flagged", lambda spec, outs: reads.append(cstep.stats["calls"]) or real(spec, outs))
    flog, fparams = _run(ft, cstep, fmodel, batches, same)
    assert [v for v in flog if isinstance(v, str)] == [v for v in tlog if isinstance(v, str)] == \
        ["Target 7 is out of bounds."]
    assert flog.index("Target 7 is out of bounds.") == tlog.index("Target 7 is out of bounds.") == 5
    assert close([v for v in flog if not isinstance(v, str)], [v for v in tlog if not isinstance(v, str)])
    for a, b in zip(fparams, tparams):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # the program's flags were read only for the failing call (the 6th); the first call and the two after the
    # failure (its .grad fields left None, as eager's: another signature) are answered on the host too
    assert sorted(set(reads)) == [6], reads
    assert cstep._steady is not None and cstep._steady.host is not None


def test_compiled_forward_checks_on_host(monkeypatch):
    """``compile(model)`` with an Embedding, trained eagerly around it (its program saves the backward's
    residuals, no steady state): the ids are checked on the host, no call waits for the program's flags, and a bad
    id still raises torch's IndexError; the gradients equal torch's."""
    res = {}
    reads = []
    real = runner._flagged
    monkeypatch.setattr(runner, "_flagged", lambda spec, outs: reads.append(1) or real(spec, outs))
    for T, comp in ((torch, lambda m: m), (ft, ft.compile)):
        model = T.nn.Sequential(T.nn.Embedding(7, 3), T.nn.Linear(3, 2))
        with T.no_grad():
            rng = np.random.default_rng(0)
            for p in model.parameters():
                p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
        cm = comp(model)
        log = []
        for ids in ([1, 2], [3, 6], [0, 7], [5, 5], [4, 0]):
            try:
                cm(T.tensor(ids)).pow(2).sum().backward()
                log.append(None)
            except IndexError as e:
                log.append(str(e))
        res[T] = log, [p.grad.numpy().copy() for p in model.parameters()]
    assert res[ft][0] == res[torch][0] == [None, None, "index out of range in self", None, None]
    for a, b in zip(res[ft][1], res[torch][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert len(reads) == 1  # (the failing call's)


def test_float_check_has_no_host_check():
    """A check on a floating-point value (binary_cross_entropy's input range) is left to the program's flags:
    no host check, and the bad call still raises torch's error, leaving the weight as it was."""
    res = {}
    for T, comp in ((torch, lambda f: f), (ft, ft.compile)):
        w = T.tensor([0.5, 0.4, 0.6], requires_grad=True)
        opt = T.optim.SGD([w], lr=0.1)

        def step(p, t):
            opt.zero_grad()
            loss = T.nn.functional.binary_cross_entropy(w * p, t)
            loss.backward()
            opt.step()
            return loss
        c = comp(step)
        log = []
        for scale in (1.0, 1.0, 1.0, 3.0, 1.0, 1.0, 1.0):
            try:
                log.append(float(c(T.tensor([scale, 1.0, 1.0]), T.tensor([0.4, 0.6, 0.5]))))
            except RuntimeError as e:
                log.append(str(e).splitlines()[0])
        res[T] = log, w.detach().numpy().copy(), c
    assert res[ft][0][3] == res[torch][0][3] and isinstance(res[ft][0][3], str)
    assert close([v for v in res[ft][0] if not isinstance(v, str)],
                 [v for v in res[torch][0] if not isinstance(v, str)])
    np.testing.assert_allclose(res[ft][1], res[torch][1], rtol=1e-6)
    steady = res[ft][2]._steady
    assert steady is not None and steady.host is None


_INT_CASES = {
    "range": lambda a, b: (a < 0) | (a >= 10),
    "ignore": lambda a, b: (a != -100) & ((a < 0) | (a >= 4)),
    "broadcast": lambda a, b: (a[:, None] + b[None, :]) > 7,
    "where": lambda a, b: jnp.where(a > 2, a, b) == 3,
    "convert": lambda a, b: (a.astype(jnp.int8) == 0) ^ (b.astype(bool)),
    "wrap_int32": lambda a, b: (a.astype(jnp.int32) * 1_000_000_007 + 5) < 0,
    "concat_reshape": lambda a, b: jnp.concatenate([a, b]).reshape(2, -1)[1] >= jnp.max(a),
    "reduce_all": lambda a, b: jnp.all(a.reshape(2, -1) > -3, axis=1),
    "min_neg_squeeze": lambda a, b: jnp.squeeze(jnp.minimum(-a, b)[None], 0) < -4,
    "sum_wrap_int8": lambda a, b: jnp.sum(a.astype(jnp.int8) * 40, dtype=jnp.int8) < 0,
    "strided_slice": lambda a, b: a[1::2] > b[:3],
    "scalar_wrap": lambda a, b: (a[0].astype(jnp.int32) * 2_000_000_000) > 0,
}


@pytest.mark.parametrize("name", sorted(_INT_CASES))
@pytest.mark.filterwarnings("error")
def test_numpy_form_equals_the_program(name):
    """The NumPy form of integer flag computations (broadcasts, selects, conversions, int32 wrap-around,
    concatenation, reductions) answers as XLA's program does on random inputs."""
    fn = _INT_CASES[name]
    prog = jax.jit(lambda a, b: [(jnp.atleast_1d(fn(a, b)),)])
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = jnp.asarray(rng.integers(-8, 12, 6))
        b = jnp.asarray(rng.integers(-8, 12, 6))
        host = hostcheck.build(prog, [a, b], True, 0)
        assert host is not None
        want = not bool(np.asarray(prog(a, b)[0][0]).any())
        assert host([a, b]) is want
        assert host([a, b]) is want  # (again: the unchanged arrays' answer reused)


def test_tracer_or_float_flags_are_not_answered_on_host():
    """Flags computed from a float, or a call whose input is not a concrete array: no host answer."""
    prog = jax.jit(lambda a: [((a * 0.5 > 1.0).reshape(-1),)])
    assert hostcheck.build(prog, [jnp.ones(3)], True, 0) is None
    iprog = jax.jit(lambda a: [((a > 1).reshape(-1),)])
    host = hostcheck.build(iprog, [jnp.arange(3)], True, 0)
    seen = []
    jax.vmap(lambda a: seen.append(host([a])) or a)(jnp.arange(6).reshape(2, 3))
    assert seen == [None]
