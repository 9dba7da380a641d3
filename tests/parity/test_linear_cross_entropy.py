"""``F.linear_cross_entropy`` / ``nn.LinearCrossEntropyLoss`` / ``nn.LinearCrossEntropyOptions`` (torch 2.13):
the reference path (linear + cross_entropy, K-dimensional weights, probability targets, smoothing) and the chunked
path (options: the batch in chunks, the logits never whole), values and gradients against torch on the same data,
torch's errors and fallback warning, the module's parameters / repr, and the chunked path's memory inside a
compiled step (XLA's temp bytes against the reference's)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

R = np.random.default_rng(3)
X, W, B = R.standard_normal((6, 4)), R.standard_normal((9, 4)), R.standard_normal(9)
CW = R.uniform(0.2, 1.5, 9)
T = np.array([0, 3, 8, -100, 2, 2])
T2 = np.array([0, 3, 8, 1, 2, 2])  # (for an ignore_index of 2 or 3: -100 would be out of range)
WK, BK = R.standard_normal((5, 2, 3, 4)), R.standard_normal((5, 2, 3))
TK = R.integers(0, 5, (6, 2, 3))
P = R.uniform(0, 1, (6, 9))
P = P / P.sum(1, keepdims=True)


def _f(L, a, dt="float32", grad=True):
    t = L.tensor(np.asarray(a, dtype=dt))
    return t.requires_grad_() if grad else t


def _opts(L, **kw):
    return L.nn.LinearCrossEntropyOptions(**kw)


CASES = {
    "reference mean": lambda L: dict(target=L.tensor(T)),
    "reference bias + class weight, sum": lambda L: dict(target=L.tensor(T), bias=True, weight=True, reduction="sum"),
    "reference none ignore 3": lambda L: dict(target=L.tensor(T2), reduction="none", ignore_index=3),
    "reference smoothing": lambda L: dict(target=L.tensor(T), label_smoothing=0.2, weight=True),
    "reference probabilities": lambda L: dict(target=_f(L, P, grad=False)),
    "reference K-dimensional": lambda L: dict(target=L.tensor(TK), kdim=True, bias=True),
    "reference unbatched": lambda L: dict(target=L.tensor(T[1]), unbatched=True),
    "chunked 2 mean": lambda L: dict(target=L.tensor(T), options=_opts(L, batch_chunk_size=2, chunking_method=None)),
    "chunked 4 sum bias weight": lambda L: dict(target=L.tensor(T), bias=True, weight=True, reduction="sum",
                                                options=_opts(L, batch_chunk_size=4, chunking_method=None)),
    "chunked 1 none": lambda L: dict(target=L.tensor(T), reduction="none",
                                     options=_opts(L, batch_chunk_size=1, chunking_method=None)),
    "chunked auto weight mean": lambda L: dict(target=L.tensor(T), weight=True, options=_opts(L)),
    "chunked aspect_ratio ignore 2": lambda L: dict(target=L.tensor(T2), ignore_index=2, bias=True,
                                                    options=_opts(L, chunking_method="aspect_ratio")),
    "chunked unbatched": lambda L: dict(target=L.tensor(T[2]), unbatched=True, options=_opts(L)),
    "chunked unbatched none": lambda L: dict(target=L.tensor(T[2]), unbatched=True, reduction="none",
                                             options=_opts(L)),
    "chunked all ignored": lambda L: dict(target=L.tensor([-100] * 6), options=_opts(L, batch_chunk_size=4,
                                                                                       chunking_method=None)),
}


def _run(L, case, dt="float32"):
    c = CASES[case](L)
    x = _f(L, X[1] if c.pop("unbatched", False) else X, dt)
    w = _f(L, WK if c.pop("kdim", False) else W, dt)
    b = _f(L, BK if w.dim() == 4 else B, dt) if c.pop("bias", False) else None
    cw = _f(L, CW, grad=False) if c.pop("weight", False) else None
    target = c.pop("target")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = L.nn.functional.linear_cross_entropy(x, w, target, linear_bias=b, weight=cw, **c)
    out.sum().backward()
    grads = [t.grad.float().numpy() for t in (x, w, b) if t is not None]
    return out.detach().float().numpy(), grads, type(out.grad_fn).__name__


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_gradients_as_torch(case):
    (v, g, name), (tv, tg, tname) = _run(ft, case), _run(torch, case)
    np.testing.assert_allclose(v, tv, rtol=2e-6, atol=1e-6)
    for a, b in zip(g, tg):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
    if "chunked" in case and "reference" not in case:  # (the reference's node is cross_entropy's own)
        assert name == tname


def test_chunked_bfloat16_is_close_to_torchs():
    tv = _run(torch, "chunked 2 mean", "float32")[0]
    c = {"target": ft.tensor(T), "options": _opts(ft, batch_chunk_size=2, chunking_method=None)}
    x, w = _f(ft, X, "float32").bfloat16(), _f(ft, W, "float32").bfloat16()
    out = ft.nn.functional.linear_cross_entropy(x, w, **c)
    assert out.dtype == ft.bfloat16
    np.testing.assert_allclose(float(out), tv, rtol=1e-2)


ERRORS = {
    "3-d input": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 2, 4), L.ones(3, 4), L.tensor([0, 1])),
    "1-d weight": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(4), L.tensor([0, 1])),
    "in_features": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(3, 5), L.tensor([0, 1])),
    "bias shape": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(3, 4), L.tensor([0, 1]),
                                                                 linear_bias=L.ones(4)),
    "K-dim unbatched": lambda L: L.nn.functional.linear_cross_entropy(L.ones(4), L.ones(3, 2, 4), L.tensor([0, 1])),
    "ignore_index with probabilities": lambda L: L.nn.functional.linear_cross_entropy(
        L.ones(2, 4), L.ones(3, 4), L.ones(2, 3) / 3, ignore_index=1),
    "target out of range, chunked": lambda L: L.nn.functional.linear_cross_entropy(
        L.ones(2, 4), L.ones(3, 4), L.tensor([0, 3]), options=_opts(L)),
    "target out of range": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(3, 4),
                                                                          L.tensor([0, 3])),
    "acc_policy": lambda L: _opts(L, acc_policy="fast"),
    "chunking_method": lambda L: _opts(L, chunking_method="square"),
    "chunking_method factor": lambda L: _opts(L, chunking_method="aspect_ratio:0"),
    "batch_chunk_size": lambda L: _opts(L, batch_chunk_size=0),
    "acc_dtype": lambda L: _opts(L, acc_dtype=L.int32),
    "chunk size and method disagree": lambda L: _opts(L, batch_chunk_size=4, chunking_method="aspect_ratio")._adjust(
        6, 4, 9, L.float32, L.device("cpu")),
    "module class weight shape": lambda L: L.nn.LinearCrossEntropyLoss(4, 3, weight=L.ones(4)),
    "module smoothing range": lambda L: L.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_torch(case):
    def outcome(L):
        try:
            ERRORS[case](L)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return None
    want = outcome(torch)
    assert want is not None and outcome(ft) == want


def test_options_resolve_as_torchs():
    for kw in ({}, {"batch_chunk_size": 4}, {"chunking_method": "aspect_ratio:2"}, {"acc_policy": "balanced"},
               {"chunking_method": None}, {"acc_dtype": "float64"}):
        for shape in ((6, 4, 9), (300, 16, 1000), (1, 8, 3)):
            for dt in ("float32", "bfloat16"):
                got = {k: v for k, v in kw.items()}
                if "acc_dtype" in got:
                    got["acc_dtype"] = ft.float64
                want = dict(kw)
                if "acc_dtype" in want:
                    want["acc_dtype"] = torch.float64
                a = ft.nn.LinearCrossEntropyOptions(**got)._adjust(*shape, getattr(ft, dt), ft.device("cpu"))
                b = torch.nn.LinearCrossEntropyOptions(**want)._adjust(*shape, getattr(torch, dt),
                                                                         torch.device("cpu"))
                assert repr(a) == repr(b)
    assert repr(ft.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())


def test_fallback_warns_as_torch():
    def msgs(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.nn.functional.linear_cross_entropy(L.tensor(X, dtype=L.float32), L.tensor(W, dtype=L.float32),
                                                 L.tensor(T), label_smoothing=0.1, options=_opts(L))
        return [str(c.message) for c in caught]
    assert msgs(ft) == msgs(torch)


def test_module_as_torch():
    kw = dict(out_features=(2, 3), bias=True, reduction="sum", label_smoothing=0.1)
    m, tm = ft.nn.LinearCrossEntropyLoss(4, 5, **kw), torch.nn.LinearCrossEntropyLoss(4, 5, **kw)
    assert repr(m) == repr(tm)
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in tm.state_dict().items()}
    m.load_state_dict({k: ft.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = R.standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_allclose(float(m(ft.tensor(x), ft.tensor(TK))), float(tm(torch.tensor(x), torch.tensor(TK))),
                               rtol=1e-6)
    m2 = ft.nn.LinearCrossEntropyLoss(4, 9, options=ft.nn.LinearCrossEntropyOptions(batch_chunk_size=2,
                                                                                      chunking_method=None))
    tm2 = torch.nn.LinearCrossEntropyLoss(4, 9, options=torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2,
                                                                                            chunking_method=None))
    assert repr(m2) == repr(tm2)
    m2.load_state_dict({k: ft.tensor(v.numpy()) for k, v in tm2.state_dict().items()})
    np.testing.assert_allclose(float(m2(ft.tensor(x), ft.tensor(T))), float(tm2(torch.tensor(x), torch.tensor(T))),
                               rtol=1e-6)


def test_chunked_path_keeps_the_logits_out_of_a_compiled_steps_memory():
    n, d, c = 512, 16, 4096
    x = ft.tensor(R.standard_normal((n, d)), dtype=ft.float32)
    t = ft.tensor(R.integers(0, c, n))

    def step_for(options):
        head = ft.nn.LinearCrossEntropyLoss(d, c, options=options)
        opt = ft.optim.SGD(head.parameters(), lr=0.1)

        def step(x, t):
            opt.zero_grad()
            loss = head(x, t)
            loss.backward()
            opt.step()
            return loss
        return ft.compile(step), head
    ref, h1 = step_for(None)
    chunked, h2 = step_for(ft.nn.LinearCrossEntropyOptions(batch_chunk_size=32, chunking_method=None))
    h2.load_state_dict(h1.state_dict())
    logits_bytes = n * c * 4
    a, b = ref.memory_analysis(x, t), chunked.memory_analysis(x, t)
    assert a["temp_bytes"] >= logits_bytes
    assert b["temp_bytes"] < logits_bytes / 4
    for _ in range(3):
        la, lb = ref(x, t), chunked(x, t)
        np.testing.assert_allclose(float(la), float(lb), rtol=1e-5)
    np.testing.assert_allclose(h1.linear.weight.detach().numpy(), h2.linear.weight.detach().numpy(), atol=1e-6)


def test_chunked_mixed_precision_input_as_torch():
    def run(L):
        x = L.tensor(X, dtype=L.float32).bfloat16()
        O = _opts(L, batch_chunk_size=2, chunking_method=None)
        out = L.nn.functional.linear_cross_entropy(x, L.tensor(W, dtype=L.float32), L.tensor(T), reduction="none",
                                                   options=O)
        return out.dtype, out.float().numpy()
    (dt, v), (tdt, tv) = run(ft), run(torch)
    assert str(dt) == str(tdt) == "torch.bfloat16"
    np.testing.assert_allclose(v, tv, rtol=1e-2, atol=1e-2)
