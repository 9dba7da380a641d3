"""utils.checkpoint (spec §12.1, CKPT-xx) against torch.utils.checkpoint; checkpoint inside a compiled step;
a compiled step's XLA memory analysis; cuda memory functions without a GPU."""
import re
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tck

import functorch_lite as ft
from functorch_lite.utils import checkpoint as fck

RNG = np.random.default_rng(0)
X0, W0 = RNG.standard_normal((4, 5)), RNG.standard_normal((5, 5))


def _block_run(lib, ck, **kw):
    x = lib.tensor(X0, requires_grad=True)
    w1 = lib.tensor(W0, requires_grad=True)

    def block(x):
        return lib.tanh(x @ w1).sin()
    out = ck(block, x, **kw) if ck is not None else block(x)
    name = out.grad_fn.name()
    out.sum().backward()
    return name, out.detach().numpy(), x.grad.numpy(), w1.grad.numpy()


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_CKPT_02_03_05_same_gradients_and_grad_fn(use_reentrant):
    plain = _block_run(ft, None)
    theirs = _block_run(torch, tck.checkpoint, use_reentrant=use_reentrant)
    ours = _block_run(ft, fck.checkpoint, use_reentrant=use_reentrant)
    if not use_reentrant:
        assert ours[0] == theirs[0] == "SinBackward0"  # CKPT-03
    for a, b, c in zip(ours[1:], plain[1:], theirs[1:]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-14)


def test_CKPT_04_warns_without_use_reentrant():
    with pytest.warns(UserWarning) as theirs:
        tck.checkpoint(lambda x: x.sin(), torch.ones(2, requires_grad=True))
    with pytest.warns(UserWarning, match=re.escape(str(theirs[0].message))):
        fck.checkpoint(lambda x: x.sin(), ft.ones(2, requires_grad=True))


def test_CKPT_06_07_params_only():
    for lib, ck in ((torch, tck.checkpoint), (ft, fck.checkpoint)):
        lin = lib.nn.Linear(3, 2)
        x = lib.ones(4, 3)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            out = ck(lin, x, use_reentrant=True)
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
            out.sum().backward()
        ck(lin, x, use_reentrant=False).sum().backward()  # CKPT-07: parameters get gradients
        assert lin.weight.grad is not None and float(lin.weight.grad.abs().sum()) > 0


def test_CKPT_08_09_kwargs():
    def fn(a, b, scale=1.0):
        return ((a * b).sin() * scale).sum()
    x0 = RNG.standard_normal(5)
    outs = []
    for lib, ck in ((torch, tck.checkpoint), (ft, fck.checkpoint)):
        x = lib.tensor(x0, requires_grad=True)
        outs.append(ck(fn, x, x, scale=2.0, use_reentrant=False).item())
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            ck(fn, x, x, scale=2.0, use_reentrant=True)
    assert outs[0] == pytest.approx(outs[1], rel=1e-12)


def test_CKPT_10_dropout_mask_recomputed_identically():
    m = ft.nn.Sequential(ft.nn.Linear(5, 5), ft.nn.Dropout(0.5), ft.nn.Linear(5, 2))
    x = ft.tensor(X0.astype(np.float32), requires_grad=True)
    ft.manual_seed(0)
    o1 = fck.checkpoint(m, x, use_reentrant=False)
    o1.sum().backward()
    g1 = m[0].weight.grad.numpy().copy()
    m.zero_grad()
    ft.manual_seed(0)
    o2 = m(x)
    o2.sum().backward()
    np.testing.assert_array_equal(o1.detach().numpy(), o2.detach().numpy())
    np.testing.assert_array_equal(g1, m[0].weight.grad.numpy())


def _deep(ck, compiled):
    ft.manual_seed(0)
    model = ft.nn.Sequential(*[m for _ in range(8) for m in (ft.nn.Linear(32, 32), ft.nn.Tanh())])
    opt = ft.optim.SGD(model.parameters(), lr=0.05)
    x = ft.randn(64, 32)

    def step(x):
        opt.zero_grad()
        y = fck.checkpoint_sequential(model, 4, x, use_reentrant=False) if ck else model(x)
        loss = (y ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    fn = ft.compile(step) if compiled else step
    losses = [fn(x).item() for _ in range(5)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()], fn


def test_checkpoint_sequential_inside_a_compiled_step_equals_plain():
    plain, ck, ck_c = _deep(False, False), _deep(True, False), _deep(True, True)
    np.testing.assert_allclose(ck[0], plain[0], rtol=1e-6)
    np.testing.assert_allclose(ck_c[0], plain[0], rtol=1e-6)
    for a, b in zip(ck_c[1], plain[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert ck_c[2].stats["eager_calls"] == 0
    theirs = torch.nn.Sequential(*[torch.nn.Linear(3, 3) for _ in range(4)])
    x = torch.ones(2, 3, requires_grad=True)
    assert tck.checkpoint_sequential(theirs, 2, x, use_reentrant=False).grad_fn.name() == "AddmmBackward0"


def test_memory_analysis_of_a_compiled_step():
    _, _, fn = _deep(False, True)
    ma = fn.memory_analysis(ft.randn(64, 32))
    params = 8 * (32 * 32 + 32) * 4
    # parameters and the batch go in (the old .grad fields are dropped: zero_grad() sets them to None first)
    assert params + 64 * 32 * 4 <= ma["argument_bytes"]  # (the running program takes the old .grads too, donated)
    assert ma["alias_bytes"] >= params
    assert ma["output_bytes"] >= 2 * params  # new parameters and new .grad fields come back
    assert ma["peak_bytes"] == ma["argument_bytes"] + ma["output_bytes"] + ma["temp_bytes"] - ma["alias_bytes"]
    assert ma["temp_bytes"] > 0


def test_cuda_memory_functions_without_a_gpu():
    assert not ft.cuda.is_available()
    assert ft.cuda.memory_allocated() == 0 and ft.cuda.max_memory_allocated() == 0
    with pytest.raises(AttributeError, match="_cuda_resetPeakMemoryStats"):   # (as torch's CPU build)
        ft.cuda.reset_peak_memory_stats()
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        ft.cuda.mem_get_info()
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        ft.cuda.synchronize()


def test_memory_rule_of_thumb_beside_xla():
    """params + grads + Adam's two moments = 4x the parameter bytes (exactly, from the tensors themselves);
    XLA's peak for the compiled step covers that plus the activations."""
    from functorch_lite.utils import memory
    ft.manual_seed(0)
    model = ft.nn.Sequential(ft.nn.Linear(64, 128), ft.nn.ReLU(), ft.nn.Linear(128, 10))
    opt = ft.optim.Adam(model.parameters())
    n_bytes = sum(p.numel() for p in model.parameters()) * 4
    before = memory.training_memory(model, opt)
    assert before == {"params": n_bytes, "grads": n_bytes, "optimizer_state": 2 * n_bytes, "activations": 0,
                      "total": 4 * n_bytes}
    x, y = ft.randn(256, 64), ft.randint(0, 10, (256,))

    @ft.compile
    def step(x, y):
        opt.zero_grad()
        loss = ft.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    step(x, y)
    step(x, y)
    after = memory.training_memory(model, opt)  # measured: moments + the 0-dim step counters
    assert after["optimizer_state"] == 2 * n_bytes + 4 * 4
    cmp = memory.compare(step, x, y, model=model, optimizer=opt)
    assert cmp["xla"]["peak_bytes"] >= after["params"] + after["optimizer_state"]
    assert cmp["activations_estimate"] == max(0, cmp["xla"]["peak_bytes"] - after["total"])
    sgd = ft.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    assert memory.training_memory(model, sgd)["optimizer_state"] == n_bytes


def _deep_step_temp(segments, n_layers=12, width=128, batch=2048):
    """A compiled SGD step over a deep ReLU MLP: XLA's temp bytes and three losses."""
    ft.manual_seed(0)
    layers = []
    for _ in range(n_layers):
        layers += [ft.nn.Linear(width, width), ft.nn.ReLU()]
    model = ft.nn.Sequential(*layers)
    opt = ft.optim.SGD(model.parameters(), lr=0.01)

    def step(x):
        opt.zero_grad()
        y = fck.checkpoint_sequential(model, segments, x, use_reentrant=False) if segments > 1 else model(x)
        loss = (y ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    fn = ft.compile(step)
    x = ft.randn(batch, width)
    temp = fn.memory_analysis(x)["temp_bytes"]
    return temp, [fn(x).item() for _ in range(3)]


def test_checkpoint_lowers_a_compiled_steps_peak():
    """Item 7: XLA's own memory report of the whole compiled step shows the smaller peak (on XLA:CPU too,
    whose pipeline drops jax.checkpoint's optimization barriers: the recomputation is tied to the cotangent)."""
    act = 2048 * 128 * 4  # one layer's activation
    plain, plain_losses = _deep_step_temp(1)
    assert plain >= 20 * act  # every layer keeps its activations for the backward
    for segments in (3, 4):
        temp, losses = _deep_step_temp(segments)
        np.testing.assert_array_equal(losses, plain_losses)  # the recomputation is bit-for-bit the forward
        assert temp <= plain / 2, (segments, temp, plain)
