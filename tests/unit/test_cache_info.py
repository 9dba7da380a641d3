"""Kernel caches are keyed on (op, static args, signature), bounded, and counted (issue 3)."""
import functorch_lite as ft
from functorch_lite import _config
from functorch_lite.ops._registry import OPS


def test_repeated_training_step_hits_caches():
    w = ft.ones(4, requires_grad=True)
    x = ft.arange(4.0)

    def step():
        loss = ((w * x - 1.0) ** 2).mean()
        loss.backward()
        with ft.no_grad():
            w.sub_(0.1 * w.grad)
            w.grad.zero_()
    step()  # first backward: .grad is None
    step()  # second: accumulates into the existing .grad (a second program signature)
    ft.reset_cache_info()
    for _ in range(5):
        step()
    info = ft.cache_info()
    assert info["misses"] == 0 and info["hits"] == info["calls"] > 0
    assert info["backward_runs"] == 5 and info["backward_programs"] == 0
    assert info["compiles"] == 0


def test_an_eager_training_loop_compiles_nothing_after_its_first_step():
    """The first step's backward and optimizer update are the programs of every later step: the backward's key does
    not depend on where the parameters' AccumulateGrad nodes (made during the first forward) fall in the engine's
    order, and the optimizer's first state is committed to the parameters' device as its updates are (jit keys on
    commitment). Each was compiled twice before, the loop's two largest programs. A loaded optimizer state too."""
    import numpy as np
    nn = ft.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = ft.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
    for make in (lambda ps: ft.optim.AdamW(ps, lr=1e-2), lambda ps: ft.optim.SGD(ps, lr=0.1, momentum=0.9),
                 lambda ps: ft.optim.NAdam(ps, lr=1e-2)):
        opt = make(model.parameters())

        def step():
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()
        first = step()
        ft.reset_cache_info()
        losses = [step() for _ in range(4)]
        info = ft.cache_info()
        assert info["compiles"] == 0 and info["backward_programs"] == 0, info
        assert losses[-1] < first
        opt2 = make(model.parameters())
        opt2.load_state_dict(opt.state_dict())
        opt = opt2
        ft.reset_cache_info()
        step()
        assert ft.cache_info()["compiles"] == 0, ft.cache_info()


def test_new_shape_is_a_jax_recompile_not_a_new_entry():
    a = ft.ones(3)
    a + a
    ft.reset_cache_info()
    b = ft.ones(1237)  # (a shape no other test adds: compiled here, whatever ran before in this process)
    b + b
    info = ft.cache_info()
    assert info["misses"] == 0 and info["compiles"] >= 1  # same entry, jax.jit compiles the new shape


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(_config, "JIT_CACHE_SIZE", 4)
    op = OPS["roll"]
    op.cache.clear()
    ft.reset_cache_info()
    t = ft.arange(10.0)
    for k in range(1, 9):
        ft.roll(t, k)
    assert len(op.cache) == 4
    assert ft.cache_info()["evictions"] == 4
    assert ft.roll(t, 8).tolist() == ft.roll(t, -2).tolist()


def test_indexing_each_row_reuses_one_view_program():
    """select/slice/narrow pass their position as a traced offset: x[i] for every i (a DataLoader over a
    TensorDataset) compiles one view program, not one per index."""
    import numpy as np
    x = ft.tensor(np.arange(40.0).reshape(10, 4))
    [x[i]._array for i in range(2)]
    [x[i:i + 3]._array for i in range(2)]
    [x.narrow(0, i, 2)._array for i in range(2)]
    ft.reset_cache_info()
    rows = [x[i] for i in range(10)]
    sl = [x[i:i + 3, 1:] for i in range(7)]
    nar = [x.narrow(0, i, 2) for i in range(8)]
    assert [r.tolist() for r in rows] == np.arange(40.0).reshape(10, 4).tolist()
    assert sl[5].tolist() == np.arange(40.0).reshape(10, 4)[5:8, 1:].tolist()
    assert nar[7].tolist() == np.arange(40.0).reshape(10, 4)[7:9].tolist()
    assert ft.cache_info()["compiles"] <= 1  # the 2-D slice chain [i:i+3, 1:] is new


def test_backward_through_each_row_reuses_one_program():
    """The backward of x[i] / x[i:i+k] takes the position as an input: one backward program for all i."""
    import numpy as np
    w = ft.tensor(np.arange(40.0).reshape(10, 4), requires_grad=True)
    for i in range(2):
        (w[i] * w[i + 1:i + 3].sum(0)).sum().backward()
    w.grad = None
    ft.reset_cache_info()
    for i in range(7):
        (w[i] * w[i + 1:i + 3].sum(0)).sum().backward()
    info = ft.cache_info()
    assert info["backward_programs"] == 0 and info["compiles"] == 0, info
    W = np.arange(40.0).reshape(10, 4)
    g = np.zeros_like(W)
    for i in range(7):
        g[i] += W[i + 1:i + 3].sum(0)
        g[i + 1:i + 3] += W[i]
    np.testing.assert_allclose(w.grad.numpy(), g)


def test_a_scheduled_float_alpha_or_value_reuses_one_kernel():
    """``p.add_(g, alpha=-lr)`` / ``addcdiv_(m, v, value=-lr)`` with a new LR every step: the float is an input
    of the kernel, not part of its key (before: one XLA compile, ~20 ms, per value). Values as PyTorch's."""
    p = ft.ones(5, requires_grad=True)
    g, m, v = ft.full((5,), 0.5), ft.full((5,), 2.0), ft.full((5,), 4.0)
    with ft.no_grad():
        p.add_(g, alpha=-0.5)
        p.addcdiv_(m, v, value=-0.5)
        p.sub_(g, alpha=0.25)
    ft.reset_cache_info()
    lrs = [0.1 * 0.9 ** i for i in range(6)]
    with ft.no_grad():
        for lr in lrs:
            p.add_(g, alpha=-lr)
            p.addcdiv_(m, v, value=-lr)
            p.sub_(g, alpha=lr / 2)
    info = ft.cache_info()
    assert info["misses"] == 0 and info["compiles"] == 0
    want = 1.0 - 0.25 - 0.25 - 0.125 - sum(lrs) * (0.5 + 0.5 + 0.25)
    assert abs(p.detach()[0].item() - want) < 1e-6
    q = ft.tensor([1.5, 2.0], requires_grad=True)
    r = ft.add(q, ft.tensor([0.25, 4.0]), alpha=0.3)
    r.sum().backward()
    assert r.grad_fn.name() == "AddBackward0" and q.grad.tolist() == [1.0, 1.0]
    assert [round(x, 6) for x in r.tolist()] == [1.575, 3.2]
