"""functorch_lite.compile on realistic training scripts: each scenario runs the same PyTorch-style code three
times -- eagerly here, compiled here, and in real torch -- from the same initial weights and data, and
compares parameters, .grad fields, optimizer state (``state_dict()``), buffers, learning rates and returned
values; and the compiled function's ``stats`` (a steady-state step is a cache hit; no eager fallback unless a
graph break is expected).

Tolerances: compiled vs eager 1e-6 (conv / attention 1e-5), vs torch 1e-5 (1e-4 for conv / attention).
Adam-family optimizers are kept away from parameters whose true gradient is 0 (a bias in front of a norm
layer, the key bias of attention): Adam turns the rounding noise there into full-size steps.

The bugs these scenarios found are fixed; each has a test that compares with eager and torch."""
import copy
import io
import warnings

import jax
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _scenario import same_init

RNG = np.random.default_rng(2024)
XS = [RNG.standard_normal((8, 6)).astype(np.float32) for _ in range(10)]
YS = [RNG.integers(0, 3, 8) for _ in range(10)]
ZS = [RNG.standard_normal((8, 4)).astype(np.float32) for _ in range(10)]
IMGS = [RNG.standard_normal((4, 3, 8, 8)).astype(np.float32) for _ in range(6)]
IMG_YS = [RNG.integers(0, 3, 4) for _ in range(6)]
TOKS = [RNG.integers(0, 10, (4, 5)) for _ in range(6)]
SEQS = [RNG.standard_normal((4, 5, 8)).astype(np.float32) for _ in range(6)]
LIBS = (("eager", ft, False), ("compiled", ft, True), ("torch", torch, False))


# ---- helpers ---------------------------------------------------------------------------------------------------
_init = same_init


def _mlp(lib, seed=0, norm=None, drop=None):
    layers = [lib.nn.Linear(6, 16)]
    if norm == "bn":
        layers = [lib.nn.Linear(6, 16, bias=False), lib.nn.BatchNorm1d(16)]
    elif norm == "ln":
        layers.append(lib.nn.LayerNorm(16))
    layers.append(lib.nn.ReLU())
    if drop is not None:
        layers.append(lib.nn.Dropout(drop))
    layers.append(lib.nn.Linear(16, 3))
    return _init(lib.nn.Sequential(*layers), seed)


def _np(t):
    if t is None:
        return None
    if isinstance(t, (int, float, bool)):
        return np.asarray(t)
    return t.detach().numpy().copy()


def _snap(model, opt=None, prefix=""):
    """Parameters, grads, buffers, and the optimizer's state_dict (state tensors and each group's lr)."""
    out = {}
    for n, p in model.named_parameters():
        out[f"{prefix}p:{n}"] = _np(p)
        out[f"{prefix}g:{n}"] = _np(p.grad)
    for n, b in model.named_buffers():
        out[f"{prefix}b:{n}"] = _np(b)
    if opt is not None:
        sd = opt.state_dict()
        for k, st in sd["state"].items():
            for name, v in st.items():
                out[f"{prefix}s:{k}:{name}"] = _np(v)
        for i, group in enumerate(sd["param_groups"]):
            out[f"{prefix}lr:{i}"] = _np(group["lr"])
    return out


def _assert_same(a, b, tol, what):
    assert sorted(a) == sorted(b), f"{what}: different keys {sorted(set(a) ^ set(b))}"
    for k in sorted(a):
        x, y = a[k], b[k]
        if x is None or y is None:
            assert x is None and y is None, f"{what}: {k} is None on one side only"
            continue
        np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(y, np.float64), rtol=tol, atol=tol,
                                   err_msg=f"{what}: {k}")


def _three(scenario, tol_eager=1e-6, tol_torch=1e-5, torch_too=True, eager=True):
    """Runs ``scenario(lib, compiled) -> (snapshot, fn)`` eagerly, compiled and in torch; compares; returns the
    compiled function (for its stats). ``eager=False`` (to keep this file fast): compiled vs torch only, for
    scenarios whose pieces the eager comparison already covers elsewhere in this file."""
    runs = {}
    for name, lib, compiled in LIBS:
        if (name == "torch" and not torch_too) or (name == "eager" and not eager):
            continue
        runs[name] = scenario(lib, compiled)
    if eager:
        _assert_same(runs["compiled"][0], runs["eager"][0], tol_eager, "compiled vs eager")
    if torch_too:
        _assert_same(runs["compiled"][0], runs["torch"][0], tol_torch, "compiled vs torch")
    return runs["compiled"][1]


def _steady(f, traces=1, calls=None):
    """One program for a plain training step: the first call, which has no .grad fields and no optimizer state
    yet, runs the later calls' program (its state made first, as step() would make it: CompiledFunction._primed);
    every later call is a cache hit and nothing runs eagerly."""
    assert f.stats["traces"] == traces, f.stats
    assert f.stats["eager_calls"] == 0, f.stats
    if calls is not None:
        assert f.stats["calls"] == calls and f.stats["cache_hits"] == calls - traces, f.stats


def _train(lib, compiled, model, opt, *, n=5, loss_fn=None, sched=None, sched_inside=True, clip=None,
           set_to_none=True, data=None):
    """The canonical step (zero_grad, forward, backward, [clip], step, [scheduler]) over ``n`` batches."""
    loss_fn = loss_fn or lib.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad(set_to_none=set_to_none)
        loss = loss_fn(model(x), y)
        loss.backward()
        if clip == "norm":
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.3)
        elif clip == "inf":
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.1, norm_type=float("inf"))
        elif clip == "value":
            lib.nn.utils.clip_grad_value_(model.parameters(), 0.02)
        opt.step()
        if sched is not None and sched_inside:
            sched.step()
        return loss
    f = ft.compile(step) if compiled else step
    data = data or list(zip(XS, YS))
    losses, lrs = [], []
    for x, y in data[:n]:
        losses.append(f(lib.tensor(x), lib.tensor(y)).item())
        if sched is not None and not sched_inside:
            sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    s = _snap(model, opt)
    s["losses"] = np.array(losses)
    s["lrs"] = np.array(lrs, np.float64)
    return s, f


# ---- optimizers ------------------------------------------------------------------------------------------------
OPTIMIZERS = {  # (optimizer, zero_grad(set_to_none=))
    "sgd_momentum_dampening": (lambda L, p: L.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.3,
                                                        weight_decay=1e-2), False),
    # (nesterov + maximize also passes)
    "adam_amsgrad_wd": (lambda L, p: L.optim.Adam(p, lr=1e-2, amsgrad=True, weight_decay=1e-2), False),
    "rmsprop_centered_momentum": (lambda L, p: L.optim.RMSprop(p, lr=1e-2, centered=True, momentum=0.9,
                                                               weight_decay=1e-2), True),
    "adagrad_lr_decay_two_groups": (lambda L, p: L.optim.Adagrad(
        [{"params": p[:2]}, {"params": p[2:], "lr": 0.03, "weight_decay": 0.1}], lr=0.1, lr_decay=0.01,
        weight_decay=1e-2, initial_accumulator_value=0.1), True),
}


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_optimizer_step_compiled_equals_eager_and_torch(kind):
    """Each optimizer's options, multiple param groups, zero_grad(set_to_none=False) on two of them. (AdamW runs
    in the scheduler tests; plain SGD-momentum and AdamW for 50 steps in test_compile.py.)"""
    make, set_to_none = OPTIMIZERS[kind]

    def scenario(L, compiled):
        m = _mlp(L)
        return _train(L, compiled, m, make(L, list(m.parameters())), set_to_none=set_to_none)
    # (zero_grad(set_to_none=False) zeroes the .grad fields in place from the second call on: a write the first
    # call does not make, so it keeps its own program, CompiledFunction._primed)
    _steady(_three(scenario), traces=1 if set_to_none else 2, calls=5)


# ---- LR schedulers ---------------------------------------------------------------------------------------------
def _S(L):
    return L.optim.lr_scheduler


SCHEDULERS = {
    "step": lambda L, o: _S(L).StepLR(o, step_size=2, gamma=0.5),
    "multistep": lambda L, o: _S(L).MultiStepLR(o, milestones=[1, 3], gamma=0.3),
    "cosine": lambda L, o: _S(L).CosineAnnealingLR(o, T_max=4, eta_min=1e-3),
    "onecycle": lambda L, o: _S(L).OneCycleLR(o, max_lr=0.05, total_steps=6),
    "lambda": lambda L, o: _S(L).LambdaLR(o, lambda e: 1.0 / (1 + e)),
    "linear": lambda L, o: _S(L).LinearLR(o, start_factor=0.1, total_iters=3),
    "sequential": lambda L, o: _S(L).SequentialLR(o, [_S(L).LinearLR(o, start_factor=0.1, total_iters=2),
                                                      _S(L).ExponentialLR(o, gamma=0.9)], milestones=[2]),
}


@pytest.mark.parametrize("name,inside", [("multistep", False), ("onecycle", True), ("sequential", True)])
# (cosine inside: test_compile.py; step, lambda, linear, in and outside, also pass)
def test_lr_scheduler_in_or_after_the_compiled_step(name, inside):
    """scheduler.step() inside the compiled step (deferred after the program, its LR an input of the next call:
    no recompile) or in the loop after it; AdamW (OneCycleLR cycles its betas, traced values too)."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.AdamW(m.parameters(), lr=0.01, weight_decay=0.01)
        return _train(L, compiled, m, opt, sched=SCHEDULERS[name](L, opt), sched_inside=inside)
    _steady(_three(scenario), calls=5)


def test_two_schedulers_and_plateau_inside_the_step():
    """Two chained schedulers, and ReduceLROnPlateau.step(loss) (the loss tensor is passed to the deferred call)."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        s1, s2 = _S(L).LinearLR(opt, start_factor=0.5, total_iters=3), _S(L).ExponentialLR(opt, 0.9)
        plateau = _S(L).ReduceLROnPlateau(opt, patience=0, factor=0.5)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            s1.step()
            s2.step()
            plateau.step(loss.detach())
            return loss
        f = ft.compile(step) if compiled else step
        losses, lrs = [], []
        for i in range(6):
            losses.append(f(L.tensor(XS[i % 2]), L.tensor(YS[i % 2])).item())
            lrs.append(opt.param_groups[0]["lr"])
        s = _snap(m, opt)
        s["losses"], s["lrs"] = np.array(losses), np.array(lrs)
        return s, f
    _steady(_three(scenario))


# ---- gradient clipping, accumulation ---------------------------------------------------------------------------
def test_clip_grad_value_and_inf_norm_inside_the_step_norm_returned():
    """clip_grad_value_ then clip_grad_norm_(inf); a dict returned: the loss, the total norm, the logits, an
    accuracy and a Python value. (The 2-norm: test_compile.py; error_if_nonfinite=True checks the norm's value, a
    graph break: test_compile.py's test_clip_grad_norm_error_if_nonfinite_inside_a_compiled_step_raises.)"""
    def scenario(L, compiled):
        m = _mlp(L, norm="ln")
        opt = L.optim.SGD(m.parameters(), lr=0.3)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            logits = m(x)
            loss = lf(logits, y)
            loss.backward()
            L.nn.utils.clip_grad_value_(m.parameters(), 0.05)
            gn = L.nn.utils.clip_grad_norm_(m.parameters(), 0.02, norm_type=float("inf"))
            opt.step()
            return {"loss": loss.detach(), "grad_norm": gn, "logits": logits.detach(),
                    "acc": (logits.argmax(1) == y).float().mean(), "n": 3}
        f = ft.compile(step) if compiled else step
        s = {}
        for i in range(4):
            r = f(L.tensor(XS[i]), L.tensor(YS[i]))
            assert r["n"] == 3
            for k in ("loss", "grad_norm", "logits", "acc"):
                s[f"{k}{i}"] = _np(r[k])
        s.update(_snap(m, opt))
        return s, f
    _steady(_three(scenario))


def test_gradient_accumulation_two_backwards_in_one_step():
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            l1 = lf(m(x[:4]), y[:4]) / 2
            l1.backward()
            l2 = lf(m(x[4:]), y[4:]) / 2
            l2.backward()
            opt.step()
            return l1 + l2
        f = ft.compile(step) if compiled else step
        s = {"losses": np.array([f(L.tensor(x), L.tensor(y)).item() for x, y in zip(XS[:5], YS[:5])])}
        s.update(_snap(m, opt))
        return s, f
    _steady(_three(scenario))


def test_gradient_accumulation_compiled_forward_backward_eager_step():
    """A compiled forward+backward called twice, then an eager optimizer.step(): .grad accumulates across calls."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)
        lf = L.nn.CrossEntropyLoss()

        def fb(x, y):
            loss = lf(m(x), y) / 2
            loss.backward()
            return loss.detach()
        f = ft.compile(fb) if compiled else fb
        losses = []
        for i in range(0, 8, 2):
            losses += [f(L.tensor(XS[i]), L.tensor(YS[i])).item(), f(L.tensor(XS[i + 1]), L.tensor(YS[i + 1])).item()]
            opt.step()
            opt.zero_grad()
        s = _snap(m, opt)
        s["losses"] = np.array(losses)
        return s, f
    _steady(_three(scenario), traces=2)  # (no step inside: the first call, then the one with .grad fields)


def test_step_every_other_call_selected_by_a_python_flag():
    """The flag is a static argument: one program per (flag, first-call) signature, then cache hits."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y, do_step):
            loss = lf(m(x), y) / 2
            loss.backward()
            if do_step:
                opt.step()
                opt.zero_grad()
            return loss
        f = ft.compile(step) if compiled else step
        s = {"losses": np.array([f(L.tensor(XS[i]), L.tensor(YS[i]), i % 2 == 1).item() for i in range(8)])}
        s.update(_snap(m, opt))
        return s, f
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX's "Some donated buffers were not usable" (see the report)
        f = _three(scenario)
    _steady(f, traces=3, calls=8)


def test_step_counter_in_a_closure_list_is_a_graph_break_with_correct_results():
    """``count[0] += 1`` changes a list the function reaches: a graph break (eager, correct results)."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()
        count = [0]

        def step(x, y):
            loss = lf(m(x), y) / 2
            loss.backward()
            count[0] += 1
            if count[0] % 2 == 0:
                opt.step()
                opt.zero_grad()
            return loss
        f = ft.compile(step) if compiled else step
        s = {"losses": np.array([f(L.tensor(XS[i]), L.tensor(YS[i])).item() for i in range(4)])}
        s.update(_snap(m, opt))
        s["count"] = np.array(count[0])
        return s, f
    with pytest.warns(UserWarning, match="graph break in step: changing the list count"):
        f = _three(scenario)
    assert f.stats["eager_calls"] == 4


# ---- models ----------------------------------------------------------------------------------------------------
def _conv_bn(L):
    return L.nn.Sequential(L.nn.Conv2d(3, 4, 3, padding=1, bias=False), L.nn.BatchNorm2d(4), L.nn.ReLU(),
                           L.nn.MaxPool2d(2), L.nn.Dropout(0.0), L.nn.Flatten(), L.nn.Linear(4 * 4 * 4, 3))


def _emb_ln(L, tied=False):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = L.nn.Embedding(10, 8, padding_idx=0)
            self.ln = L.nn.LayerNorm(8)
            self.head = L.nn.Linear(8, 10, bias=False)
            if tied:
                self.head.weight = self.emb.weight

        def forward(self, x):
            return self.head(self.ln(self.emb(x))).mean(1)
    return M()


def _mha(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = L.nn.MultiheadAttention(8, 2, batch_first=True)
            self.ln = L.nn.LayerNorm(8)
            self.fc = L.nn.Linear(8, 3)

        def forward(self, x):
            T = x.shape[1]
            causal = L.triu(L.ones(T, T, dtype=L.bool), diagonal=1)
            pad = L.zeros(x.shape[0], T, dtype=L.bool)
            pad[:, -1] = True
            a, w = self.mha(x, x, x, attn_mask=causal, key_padding_mask=pad)
            return self.fc(self.ln(x + a).mean(1)) + w.sum(-1)[:, :1]
    return M()


def _buffers(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = L.nn.Linear(6, 3)
            self.register_buffer("scale", L.ones(6) * 2)
            self.register_buffer("count", L.zeros((), dtype=L.int64))
            self.register_buffer("ema", L.zeros(3))
            self.mask = L.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])  # a plain tensor attribute, not a buffer

        def forward(self, x):
            out = self.fc(x * self.scale * self.mask)
            if self.training:
                with L.no_grad():
                    self.count += 1
                    self.ema.mul_(0.9).add_(out.mean(0), alpha=0.1)
            return out
    return M()


def _img_data():
    return list(zip(IMGS, IMG_YS))


def _tok_data():
    return [(t, t[:, 0]) for t in TOKS]


def _seq_data():
    return [(s, y[:4]) for s, y in zip(SEQS, YS)]


MODELS = {  # build, data, tolerance vs eager, tolerance vs torch
    "conv_bn_maxpool": (_conv_bn, _img_data, 1e-5, 1e-4),
    "weight_tying": (lambda L: _emb_ln(L, tied=True), _tok_data, 1e-6, 1e-5),
    "multihead_attention_masks": (_mha, _seq_data, 1e-5, 1e-4),
    "buffers_and_tensor_attribute": (_buffers, lambda: list(zip(XS, YS)), 1e-6, 1e-5),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_model_training_step_then_eval(name):
    """5 SGD-momentum steps compiled == eager == torch (params, grads, momentum, buffers incl. BatchNorm running
    stats and num_batches_tracked), then eval mode through compile(model) under no_grad."""
    build, data, tol_e, tol_t = MODELS[name]
    batches = data()

    def scenario(L, compiled):
        m = _init(build(L))
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
        s, f = _train(L, compiled, m, opt, data=batches)
        m.eval()
        ev = ft.compile(m) if compiled else m
        with L.no_grad():
            s["eval_no_grad"] = _np(ev(L.tensor(batches[0][0])))
        return s, f
    _steady(_three(scenario, tol_e, tol_t, eager=name == "buffers_and_tensor_attribute"), calls=5)


def test_embedding_max_norm_with_an_adaptive_optimizer():
    """Embedding(max_norm=) renormalises rows of its weight in place during the forward."""
    def scenario(L, compiled):
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.e = L.nn.Embedding(10, 8, max_norm=1.0)
                self.fc = L.nn.Linear(8, 10)

            def forward(self, x):
                return self.fc(self.e(x).mean(1))
        m = _init(M(), scale=0.6)
        return _train(L, compiled, m, L.optim.RMSprop(m.parameters(), lr=1e-2), data=_tok_data())
    _steady(_three(scenario))


def test_unused_parameters_and_branches_selected_by_an_argument():
    """A branch picks one of two sub-modules (the other's .grad stays None / zero), plus a never-used module."""
    def scenario(L, compiled):
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b, self.unused = L.nn.Linear(6, 3), L.nn.Linear(6, 3), L.nn.Linear(3, 3)

            def forward(self, x, use_b):
                return self.b(x) if use_b else self.a(x)
        m = _init(M())
        opt = L.optim.Adam(m.parameters(), lr=1e-2, weight_decay=0.1)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y, use_b):
            opt.zero_grad()
            loss = lf(m(x, use_b), y)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        s = {"losses": np.array([f(L.tensor(XS[i]), L.tensor(YS[i]), i % 3 == 1).item() for i in range(7)])}
        s.update(_snap(m, opt))
        return s, f
    f = _three(scenario, eager=False)
    # (6: each first call of a branch runs with that branch's .grad fields made, and the branches' calls drop the
    # other's, so one of those signatures recurs with a field missing; 5 before CompiledFunction._primed)
    assert f.stats["eager_calls"] == 0 and f.stats["traces"] == 6


# ---- data ------------------------------------------------------------------------------------------------------
def test_new_batches_each_call_and_a_smaller_last_batch_recompiles_once():
    def scenario(L, compiled):
        m = _mlp(L)
        data = [(XS[i], YS[i]) for i in range(5)] + [(XS[5][:3], YS[5][:3]), (XS[6], YS[6])]
        return _train(L, compiled, m, L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9), n=7, data=data)
    f = _three(scenario)
    assert f.stats["traces"] == 2 and f.stats["recompiles"] == 1 and f.stats["eager_calls"] == 0


def test_batch_rebound_in_the_enclosing_scope_before_each_call():
    """No arguments: the step reads ``xb, yb`` from its closure, rebound to new tensors before each call (a
    notebook loop). (A fixed closure batch: test_optimizing_the_input_with_a_frozen_model.)"""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.AdamW(m.parameters(), lr=1e-2)

        def rebound():
            opt.zero_grad()
            loss = L.nn.functional.cross_entropy(m(xb), yb)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(rebound) if compiled else rebound
        losses = []
        for i in range(4):
            xb, yb = L.tensor(XS[i]), L.tensor(YS[i])  # noqa: F841  (read by rebound's closure)
            losses.append(f().item())
        s = _snap(m, opt)
        s["losses"] = np.array(losses)
        return s, f
    _steady(_three(scenario), calls=4)


# ---- compiled modules in an eager loop -------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["compile(model)"])  # ("model.compile()", "compiled loss fn" also pass)
def test_compiled_forward_in_an_eager_training_loop_with_eval_toggles(how):
    """backward through a compiled forward (BatchNorm: running stats updated once per forward); eval in the middle
    of training under no_grad; the optimizer steps eagerly."""
    def scenario(L, compiled):
        m = _mlp(L, norm="bn")
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()
        fwd, loss_of = m, (lambda model, x, y: lf(model(x), y))
        if compiled and how == "compile(model)":
            fwd = ft.compile(m)
        elif compiled and how == "model.compile()":
            m.compile()
        elif compiled:
            loss_of = ft.compile(loss_of)
        s, losses = {}, []
        for i in range(6):
            if i == 3:
                fwd.eval()
                with L.no_grad():
                    s["eval"] = _np(fwd(L.tensor(XS[9])))
                fwd.train()
            opt.zero_grad()
            loss = loss_of(fwd, L.tensor(XS[i]), L.tensor(YS[i]))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        s.update(_snap(m, opt))
        s["losses"] = np.array(losses)
        return s, None
    _three(scenario)


def test_siamese_two_compiled_forwards_one_backward_and_input_grad():
    """Two calls of one compiled module feed one loss (two nodes, BatchNorm stats updated twice); the first input
    requires grad (x.grad through the compiled forward)."""
    def scenario(L, compiled):
        m = _mlp(L, norm="bn")
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        fwd = ft.compile(m) if compiled else m
        s = {}
        for i in range(4):
            opt.zero_grad()
            x = L.tensor(XS[i], requires_grad=True)
            a, b = fwd(x), fwd(L.tensor(XS[i + 1]))
            (((a - b) ** 2).mean() + a.pow(2).mean() * 0.1).backward()
            opt.step()
            s[f"x.grad{i}"] = _np(x.grad)
        s.update(_snap(m, opt))
        return s, None
    _three(scenario)


def test_compiled_train_step_and_compiled_no_grad_eval_share_a_model():
    def scenario(L, compiled):
        m = _mlp(L, norm="bn")
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()

        def train(x, y):
            m.train()
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss

        def evaluate(x, y):
            m.eval()
            with L.no_grad():
                logits = m(x)
                return lf(logits, y), logits.argmax(1)
        if compiled:
            train, evaluate = ft.compile(train), ft.compile(evaluate)
        s = {}
        for i in range(5):
            s[f"train{i}"] = _np(train(L.tensor(XS[i]), L.tensor(YS[i])))
            loss, pred = evaluate(L.tensor(XS[9]), L.tensor(YS[9]))
            s[f"eval{i}"], s[f"pred{i}"] = _np(loss), _np(pred)
        s.update(_snap(m, opt))
        return s, (train, evaluate)
    train, evaluate = _three(scenario)
    # train: the first call (run with the later calls' state) / later calls start in eval mode (evaluate left it)
    assert train.stats["traces"] == 2 and train.stats["eager_calls"] == 0
    assert evaluate.stats["traces"] == 1 and evaluate.stats["cache_hits"] == 4


# ---- randomness ------------------------------------------------------------------------------------------------
def test_dropout_step_reproducible_under_manual_seed_and_equal_to_eager():
    """The same compiled step run twice from the same seed and weights gives identical results, equal to eager's
    (the compiled program draws from the same RNG stream)."""
    ft.manual_seed(123)
    m = _mlp(ft, drop=0.5)
    opt = ft.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    start = (copy.deepcopy(m.state_dict()), copy.deepcopy(opt.state_dict()))
    lf = ft.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = lf(m(x), y)
        loss.backward()
        opt.step()
        return loss
    f = ft.compile(step)
    runs = []
    for fn in (f, f, step):
        m.load_state_dict(start[0])
        opt.load_state_dict(start[1])
        m.zero_grad()
        ft.manual_seed(7)
        losses = [fn(ft.tensor(x), ft.tensor(y)).item() for x, y in zip(XS[:4], YS[:4])]
        runs.append(dict(_snap(m, opt), losses=np.array(losses)))
    _assert_same(runs[0], runs[1], 0.0, "two compiled runs")
    _assert_same(runs[0], runs[2], 1e-6, "compiled vs eager (same RNG stream)")
    assert f.stats["traces"] == 2 and f.stats["cache_hits"] == 6 and f.stats["eager_calls"] == 0


def test_dropout_masks_differ_across_calls_and_backward_uses_the_forward_mask():
    """compile(model) with dropout: a fresh mask each call; the gradient (taken by re-running the forward at
    backward time) uses the same mask as the forward -- equal to eager under the same seed."""
    def run(compiled):
        ft.manual_seed(0)
        m = _mlp(ft, drop=0.5)
        fwd = ft.compile(m) if compiled else m
        outs, grads = [], []
        for i in range(3):
            m.zero_grad()
            out = fwd(ft.tensor(XS[0]))
            out.pow(2).sum().backward()
            outs.append(_np(out))
            grads.append(_np(m[0].weight.grad))
        return outs, grads
    (oc, gc), (oe, ge) = run(True), run(False)
    assert not np.allclose(oc[0], oc[1])
    for a, b in zip(oc + gc, oe + ge):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


# ---- AMP -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,opt_name", [("float16", "adam")])  # (bfloat16 + SGD also passes)
def test_autocast_grad_scaler_unscale_and_clip_in_one_program(dtype, opt_name):
    """autocast forward, scaler.scale(loss).backward(), unscale_, clip_grad_norm_, scaler.step, scaler.update:
    one program; the scale grows every 2 steps as in eager/torch (losses to low precision)."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = (L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) if opt_name == "sgd"
               else L.optim.Adam(m.parameters(), lr=1e-2))
        scaler = L.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=2)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            with L.autocast("cpu", dtype=getattr(L, dtype)):
                loss = lf(m(x).float(), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            L.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            scaler.step(opt)
            scaler.update()
            return loss
        f = ft.compile(step) if compiled else step
        losses, scales = [], []
        for x, y in zip(XS[:5], YS[:5]):
            losses.append(f(L.tensor(x), L.tensor(y)).item())
            scales.append(scaler.get_scale())
        s = _snap(m, opt)
        s["losses"], s["scales"] = np.array(losses), np.array(scales)
        return s, f
    _steady(_three(scenario, 1e-2, 2e-2), traces=2)  # (a scaler step that may skip creating the state: not primed)


# ---- results, graph breaks -------------------------------------------------------------------------------------
def test_returning_loss_item_is_one_program_with_correct_results():
    # (it was a graph break: the whole step ran eagerly on every call; item() is now a traced Python number)
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss.item()
        f = ft.compile(step) if compiled else step
        s = {"losses": np.array([f(L.tensor(x), L.tensor(y)) for x, y in zip(XS[:4], YS[:4])])}
        s.update(_snap(m, opt))
        return s, f
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = _three(scenario)
    assert f.stats["eager_calls"] == 0 and f.stats["traces"] == 1


def test_boolean_mask_indexing_is_a_graph_break_and_masked_mean_is_not():
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        lf, lfn = L.nn.CrossEntropyLoss(), L.nn.CrossEntropyLoss(reduction="none")

        def masked_index(x, y):
            opt.zero_grad()
            keep = y != 0
            loss = lf(m(x)[keep], y[keep])
            loss.backward()
            opt.step()
            return loss

        def masked_mean(x, y):
            opt.zero_grad()
            w = (y != 0).float()
            loss = (lfn(m(x), y) * w).sum() / w.sum().clamp(min=1)
            loss.backward()
            opt.step()
            return loss
        f, g = (ft.compile(masked_index), ft.compile(masked_mean)) if compiled else (masked_index, masked_mean)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            losses = [f(L.tensor(XS[i]), L.tensor(YS[i])).item() for i in range(3)]
        losses += [g(L.tensor(XS[i]), L.tensor(YS[i])).item() for i in range(3)]
        s = _snap(m, opt)
        s["losses"] = np.array(losses)
        return s, (f, g)
    f, g = _three(scenario)
    assert f.stats["eager_calls"] == 3
    assert g.stats["eager_calls"] == 0 and g.stats["traces"] == 1


# ---- save / load -----------------------------------------------------------------------------------------------
def test_state_dicts_after_compiled_steps_load_and_continue_eagerly():
    """model/optimizer/scheduler state_dicts after compiled steps -> save -> load into fresh objects -> eager
    steps: the same trajectory as continuing the compiled run."""
    def scenario(L, compiled):
        m = _mlp(L, norm="bn")
        opt = L.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)
        sch = L.optim.lr_scheduler.StepLR(opt, 2, 0.5)
        s, f = _train(L, compiled, m, opt, n=4, sched=sch)
        buf = io.BytesIO()
        L.save({"m": m.state_dict(), "o": opt.state_dict(), "s": sch.state_dict()}, buf)
        buf.seek(0)
        ck = L.load(buf, weights_only=False) if L is torch else L.load(buf)
        m2 = _init(_mlp(L, norm="bn"), seed=9)
        opt2 = L.optim.AdamW(m2.parameters(), lr=1e-2, weight_decay=0.1)
        sch2 = L.optim.lr_scheduler.StepLR(opt2, 2, 0.5)
        m2.load_state_dict(ck["m"])
        opt2.load_state_dict(ck["o"])
        sch2.load_state_dict(ck["s"])
        loaded, _ = _train(L, False, m2, opt2, n=4, sched=sch2, data=list(zip(XS[4:], YS[4:])))
        cont, _ = _train(L, compiled, m, opt, n=4, sched=sch, data=list(zip(XS[4:], YS[4:])))
        _assert_same(loaded, cont, 1e-6, "loaded-eager vs continued")
        return loaded, f
    _three(scenario)


def test_rewinding_model_and_optimizer_with_load_state_dict_between_compiled_calls():
    def scenario(L, compiled):
        m = _mlp(L, norm="bn")
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        losses = [f(L.tensor(XS[i]), L.tensor(YS[i])).item() for i in range(3)]
        msd = {k: v.clone() for k, v in m.state_dict().items()}
        osd = copy.deepcopy(opt.state_dict())
        losses += [f(L.tensor(XS[i]), L.tensor(YS[i])).item() for i in range(3, 6)]
        m.load_state_dict(msd)
        opt.load_state_dict(osd)
        losses += [f(L.tensor(XS[i]), L.tensor(YS[i])).item() for i in range(3, 6)]
        s = _snap(m, opt)
        s["losses"] = np.array(losses)
        return s, f
    _steady(_three(scenario))


# ---- changes between calls -------------------------------------------------------------------------------------
def test_eager_changes_between_compiled_calls_are_seen():
    """An in-place edit of a weight, a new lr for every group, a `.data` swap, a new momentum (a traced input,
    like the lr: no recompile), an eager optimizer step and an in-place edit of optimizer state, between
    compiled calls."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        losses = []
        for i in range(9):
            losses.append((step if i == 6 else f)(L.tensor(XS[i]), L.tensor(YS[i])).item())
            if i == 1:
                with L.no_grad():
                    m[0].weight.mul_(0.5)
            elif i == 2:
                for g in opt.param_groups:
                    g["lr"] = 0.02
            elif i == 3:
                m[2].weight.data = m[2].weight.data * 2
            elif i == 4:
                opt.param_groups[0]["momentum"] = 0.5
            elif i == 7:
                opt.state[m[0].weight]["momentum_buffer"].mul_(0.5)
        s = _snap(m, opt)
        s["losses"] = np.array(losses)
        return s, f
    f = _three(scenario)
    assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0


def test_freezing_unfreezing_and_add_param_group_between_calls():
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.Adam(m[0].parameters(), lr=1e-2)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        losses = []
        for i in range(8):
            if i == 2:
                opt.add_param_group({"params": list(m[2].parameters()), "lr": 5e-3})
            if i == 4:
                m[0].requires_grad_(False)
            if i == 6:
                m[0].requires_grad_(True)
            losses.append(f(L.tensor(XS[i]), L.tensor(YS[i])).item())
        s = _snap(m, opt)
        s["losses"] = np.array(losses)
        return s, f
    f = _three(scenario)
    assert f.stats["eager_calls"] == 0


# ---- other training patterns -----------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["two compiled steps"])  # ("one step" also passes)
def test_gan_two_models_two_optimizers(layout):
    def scenario(L, compiled):
        G = _init(L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 6)), 1)
        D = _init(L.nn.Sequential(L.nn.Linear(6, 8), L.nn.LeakyReLU(0.2), L.nn.Linear(8, 1)), 2)
        og = L.optim.Adam(G.parameters(), lr=1e-2, betas=(0.5, 0.999))
        od = L.optim.Adam(D.parameters(), lr=1e-2, betas=(0.5, 0.999))
        bce = L.nn.BCEWithLogitsLoss()

        def d_step(real, z):
            od.zero_grad()
            fake = G(z)
            ld = bce(D(real), L.ones(8, 1)) + bce(D(fake.detach()), L.zeros(8, 1))
            ld.backward()
            od.step()
            return ld, fake

        def g_step(z, fake=None):
            og.zero_grad()
            lg = bce(D(G(z) if fake is None else fake), L.ones(8, 1))
            lg.backward()
            og.step()
            return lg

        def both(real, z):
            ld, fake = d_step(real, z)
            return ld, g_step(z, fake)
        losses = []
        if layout == "one step":
            f = ft.compile(both) if compiled else both
            for i in range(5):
                losses += [t.item() for t in f(L.tensor(XS[i]), L.tensor(ZS[i]))]
        else:
            fd, f = (ft.compile(d_step), ft.compile(g_step)) if compiled else (d_step, g_step)
            for i in range(5):
                losses += [fd(L.tensor(XS[i]), L.tensor(ZS[i]))[0].item(), f(L.tensor(ZS[i + 1])).item()]
        s = _snap(G, og, "G.")
        s.update(_snap(D, od, "D."))
        s["losses"] = np.array(losses)
        return s, f
    _steady(_three(scenario, eager=False))


def test_wgan_clipping_gradient_edits_and_ema_inside_the_step():
    """Grad edits before the step (in place, .data, rebinding .grad, one element); p.data.clamp_ after it; an EMA
    copy of the weights updated under no_grad (mul_/add_ and lerp_)."""
    def scenario(L, compiled):
        m, ema = _mlp(L), _mlp(L, seed=1)
        ema.requires_grad_(False)
        opt = L.optim.RMSprop(m.parameters(), lr=5e-3)

        def step(x, y):
            opt.zero_grad()
            loss = L.nn.functional.mse_loss(m(x), y)
            loss.backward()
            m[0].weight.grad.mul_(0.5)
            m[2].bias.grad = m[2].bias.grad * 3
            m[2].weight.grad.data.clamp_(-0.01, 0.01)
            m[0].bias.grad[0] = 0.0
            opt.step()
            for p in m.parameters():
                p.data.clamp_(-0.3, 0.3)
            with L.no_grad():
                for i, (pe, p) in enumerate(zip(ema.parameters(), m.parameters())):
                    if i % 2:
                        pe.lerp_(p, 0.1)
                    else:
                        pe.mul_(0.9).add_(p, alpha=0.1)
            return loss
        f = ft.compile(step) if compiled else step
        s = {"losses": np.array([f(L.tensor(XS[i]), L.tensor(XS[i + 1][:, :3])).item() for i in range(5)])}
        s.update(_snap(m, opt))
        s.update(_snap(ema, prefix="ema."))
        return s, f
    _steady(_three(scenario))


def test_adversarial_input_gradient_and_gradient_penalty():
    """autograd.grad w.r.t. the input (FGSM) and a create_graph=True gradient penalty, inside the step."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = L.optim.Adam(m.parameters(), lr=1e-3)
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            x = x.clone().requires_grad_(True)
            loss = lf(m(x), y)
            gx, = L.autograd.grad(loss, x, create_graph=True)
            penalty = ((gx.norm(2, dim=1) - 1) ** 2).mean()
            x_adv = (x + 0.1 * gx.sign()).detach()
            opt.zero_grad()
            total = lf(m(x_adv), y) + penalty
            total.backward()
            opt.step()
            return total, gx.detach()
        f = ft.compile(step) if compiled else step
        s = {}
        for i in range(4):
            loss, gx = f(L.tensor(XS[i]), L.tensor(YS[i]))
            s[f"loss{i}"], s[f"gx{i}"] = _np(loss), _np(gx)
        s.update(_snap(m, opt))
        return s, f
    _steady(_three(scenario, eager=False))


def test_optimizing_the_input_with_a_frozen_model():
    def scenario(L, compiled):
        m = _mlp(L)
        m.requires_grad_(False)
        img = L.zeros(2, 6, requires_grad=True)
        opt = L.optim.Adam([img], lr=0.1)
        target = L.tensor([1, 2])

        def step():
            opt.zero_grad()
            loss = L.nn.functional.cross_entropy(m(img), target) + 0.01 * img.pow(2).sum()
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        s = {"losses": np.array([f().item() for _ in range(5)])}
        s.update(_snap(m, opt))
        s["img"] = _np(img)
        return s, f
    _steady(_three(scenario))


def test_closure_step_checkpoint_hooks_and_functional_call():
    """optimizer.step(closure); utils.checkpoint on a sub-network; a forward pre-hook and a tensor grad hook;
    func.functional_call with a separate parameter dict."""
    def scenario(L, compiled):
        m = _mlp(L, norm="ln")
        m[3].register_forward_pre_hook(lambda mod, inp: (inp[0] * 0.5,))
        m[0].weight.register_hook(lambda g: g * 2)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        lf = L.nn.CrossEntropyLoss()
        ck = ft.utils.checkpoint.checkpoint if L is ft else torch.utils.checkpoint.checkpoint
        fc = ft.func.functional_call if L is ft else torch.func.functional_call
        aux = _mlp(L, seed=3)
        aux_params = {k: v.detach().clone().requires_grad_(True) for k, v in aux.named_parameters()}
        aux_opt = L.optim.SGD(list(aux_params.values()), lr=0.1)

        def step(x, y):
            def closure():
                opt.zero_grad()
                aux_opt.zero_grad()
                h = ck(m[0:3], x, use_reentrant=False)
                loss = lf(m[3](h), y) + lf(fc(aux, aux_params, (x,)), y)
                loss.backward()
                return loss
            loss = opt.step(closure)
            aux_opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        s = {"losses": np.array([f(L.tensor(XS[i]), L.tensor(YS[i])).item() for i in range(5)])}
        s.update(_snap(m, opt))
        s.update({f"aux.{k}": _np(v) for k, v in aux_params.items()})
        return s, f
    _steady(_three(scenario, eager=False))


def test_bound_method_of_a_trainer_object_and_models_in_a_dict():
    def scenario(L, compiled):
        class Trainer:
            def __init__(self):
                self.models = {"enc": _mlp(L, seed=1), "head": _init(L.nn.Linear(3, 2), 2)}
                params = [p for mm in self.models.values() for p in mm.parameters()]
                self.opt = L.optim.AdamW(params, lr=1e-2)
                self.sched = L.optim.lr_scheduler.CosineAnnealingLR(self.opt, 5)
                self.loss_fn = L.nn.CrossEntropyLoss()

            def train_step(self, x, y):
                self.opt.zero_grad()
                loss = self.loss_fn(self.models["head"](self.models["enc"](x)), y % 2)
                loss.backward()
                L.nn.utils.clip_grad_norm_(self.opt.param_groups[0]["params"], 1.0)
                self.opt.step()
                self.sched.step()
                return loss
        tr = Trainer()
        f = ft.compile(tr.train_step) if compiled else tr.train_step
        s = {"losses": np.array([f(L.tensor(XS[i]), L.tensor(YS[i])).item() for i in range(5)])}
        s.update(_snap(tr.models["enc"], tr.opt))
        s.update(_snap(tr.models["head"], prefix="head."))
        return s, f
    _steady(_three(scenario, eager=False))


def test_set_grad_enabled_float64_model_and_nested_compiled_module_fullgraph():
    def scenario(L, compiled):
        m = _mlp(L, norm="bn").double()
        opt = L.optim.Adam(m.parameters(), lr=1e-2)
        lf = L.nn.CrossEntropyLoss()
        if compiled:
            m.compile()

        def step(x, y, train):
            with L.set_grad_enabled(train):
                loss = lf(m(x), y)
                if train:
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            return loss
        f = ft.compile(step, fullgraph=True) if compiled else step
        s = {"losses": np.array([f(L.tensor(XS[i].astype(np.float64)), L.tensor(YS[i]), i % 3 != 2).item()
                                 for i in range(7)])}
        s.update(_snap(m, opt))
        return s, f
    f = _three(scenario, eager=False)
    assert f.stats["traces"] == 2 and f.stats["eager_calls"] == 0


def _lin_opt(opt_cls=None, **kw):
    ft.manual_seed(0)
    m = ft.nn.Linear(4, 2)
    return m, (opt_cls or ft.optim.SGD)(m.parameters(), **(kw or {"lr": 0.1}))


# ---- what the discovery reads, what it cannot see ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["train_step", "step"])
def test_a_global_named_like_a_method_the_step_calls_is_not_a_guard(name):
    # `for step in range(n): train_step(x)` at module level, or the compiled step itself named `step`: `step` is
    # also the attribute of `opt.step()`; it was walked as a global (the loop counter, or the compiled function's
    # own cache) and retraced every call
    m, opt = _lin_opt()
    ns = {"ft": ft, "m": m, "opt": opt}
    exec(f"def {name}(x):\n    opt.zero_grad()\n    m(x).pow(2).sum().backward()\n    opt.step()\n", ns)
    f = ns[name] = ft.compile(ns[name])
    for i in range(5):
        if name == "train_step":
            ns["step"] = i
        f(ft.ones(3, 4))
    assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0  # (the first call runs the later ones' program)


def test_assigning_data_inside_the_step_runs_eagerly_and_correctly():
    # `p.data = p.data - lr * p.grad` swaps the parameter's storage: not replayed by a program, so the call runs
    # eagerly (it left a tracer in the parameter before)
    def run(compiled):
        m, _ = _lin_opt()

        def manual(x):
            m.zero_grad()
            m(x).pow(2).sum().backward()
            for p in m.parameters():
                p.data = p.data - 0.1 * p.grad
        f = ft.compile(manual) if compiled else manual
        for i in range(3):
            f(ft.tensor(XS[i][:, :4]))
        return [p.detach().numpy().copy() for p in m.parameters()] + [m.weight.grad.numpy().copy()], f
    eager, _ = run(False)
    with pytest.warns(UserWarning, match=r"assigning \.data of a tensor"):
        compiled, f = run(True)
    for a, b in zip(compiled, eager):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert f.stats["eager_calls"] == 3


@pytest.mark.parametrize("with_optimizer", [True, False])
def test_state_the_discovery_cannot_reach_is_a_graph_break_not_a_leak(with_optimizer):
    # a model and optimizer twenty attribute levels deep: the discovery does not reach them (it follows named
    # attributes 16 levels down). The optimizer's state and the .grad fields the trace assigned were left holding
    # tracers (the eager fallback then crashed; without an optimizer there was no graph break at all and .grad
    # stayed a tracer)
    class NS:
        pass

    def down(o):
        for _ in range(20):
            o = o.inner
        return o

    def run(compiled):
        st = top = NS()
        for _ in range(20):
            st.inner = NS()
            st = st.inner
        st.model, st.opt = _lin_opt(lr=0.1, momentum=0.9)
        st = top

        def deep(x):
            m, o = down(st).model, down(st).opt
            o.zero_grad()
            loss = m(x).pow(2).sum()
            loss.backward()
            if with_optimizer:
                o.step()
            return loss
        f = ft.compile(deep) if compiled else deep
        losses = [f(ft.tensor(XS[i][:, :4])).item() for i in range(3)]
        m, o = down(st).model, down(st).opt
        return losses + [m.weight.detach().numpy().copy(), m.weight.grad.numpy().copy()], o, f
    eager, _, _ = run(False)
    with pytest.warns(UserWarning, match="cannot see"):
        compiled, opt, f = run(True)
    for a, b in zip(compiled, eager):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert f.stats["eager_calls"] == 3
    leaves = [x for v in opt._ostate.values() for x in jax.tree_util.tree_leaves(v)]
    assert bool(leaves) is with_optimizer
    assert all(isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer) for x in leaves)


def test_lr_written_inside_the_compiled_step_is_kept():
    # `group['lr'] *= 0.5` inside the step: the traced value was dropped (the LR never changed)
    def run(compiled):
        m, opt = _lin_opt(momentum=0.9, lr=0.1)

        def decay(x):
            opt.zero_grad()
            m(x).pow(2).sum().backward()
            opt.step()
            for g in opt.param_groups:
                g["lr"] *= 0.5
        f = ft.compile(decay) if compiled else decay
        for i in range(4):
            f(ft.tensor(XS[i][:, :4]))
        return opt.param_groups[0], m.weight.detach().numpy().copy(), f
    (ge, we, _), (gc, wc, f) = run(False), run(True)
    assert type(gc["lr"]) is float and gc["lr"] == ge["lr"] == 0.1 / 16
    assert gc["momentum"] == 0.9 and type(gc["weight_decay"]) is type(ge["weight_decay"])
    np.testing.assert_allclose(wc, we, rtol=1e-6)
    assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0


@pytest.mark.parametrize("order", ["scheduler first", "get_last_lr returned"])
def test_scheduler_steps_the_program_cannot_defer_run_eagerly(order):
    # a scheduler's step() runs after the program: an optimizer.step() after it in the same function would use
    # the old LR, and get_last_lr() read inside would be a stale constant. Both are graph breaks (they were
    # silently wrong); the results equal eager and torch
    def run(L, compiled):
        ft.manual_seed(0)
        m = _init(L.nn.Linear(4, 2), 5)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        sch = L.optim.lr_scheduler.LambdaLR(opt, lambda it: (it + 1) / 4)

        def warm(x):
            opt.zero_grad()
            m(x).pow(2).sum().backward()
            if order == "scheduler first":
                sch.step()
                opt.step()
                return None
            opt.step()
            sch.step()
            return sch.get_last_lr()[0]
        f = ft.compile(warm) if compiled else warm
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = [f(L.tensor(XS[i][:, :4])) for i in range(4)]
        breaks = [str(x.message) for x in w if "graph break" in str(x.message)]
        return out, m.weight.detach().numpy().copy(), breaks
    (oe, we, _), (oc, wc, breaks), (ot, wt, _) = run(ft, False), run(ft, True), run(torch, False)
    assert oc == oe == ot
    np.testing.assert_allclose(wc, we, rtol=1e-6)
    np.testing.assert_allclose(wc, wt, rtol=1e-5)
    assert breaks and ("get_last_lr" if order != "scheduler first" else "after scheduler.step()") in breaks[0]


@pytest.mark.parametrize("opt_name", ["SGD", "RMSprop"])
def test_onecycle_cycling_momentum_is_an_input_not_a_recompile(opt_name):
    # OneCycleLR cycles SGD's / RMSprop's momentum every step: momentum is a traced input (only momentum != 0
    # selects the program); it was guarded by value, a retrace every step and eager after 8
    def run(L, compiled):
        m = _init(L.nn.Linear(4, 2), 6)
        opt = getattr(L.optim, opt_name)(m.parameters(), lr=0.05, momentum=0.9)
        sch = L.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=8)

        def one(x):
            opt.zero_grad()
            m(x).pow(2).sum().backward()
            opt.step()
            sch.step()
        f = ft.compile(one) if compiled else one
        for i in range(7):
            f(L.tensor(XS[i][:, :4]))
        return m.weight.detach().numpy().copy(), opt.param_groups[0]["momentum"], f
    (we, me, _), (wc, mc, f), (wt, mt, _) = run(ft, False), run(ft, True), run(torch, False)
    np.testing.assert_allclose(wc, we, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(wc, wt, rtol=1e-5, atol=1e-6)
    assert mc == me == pytest.approx(mt) and mc != 0.9
    assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0


def test_a_tensor_lr_is_an_input_of_the_program():
    # torch's way to change the LR without recompiling: lr given as a tensor, changed in place (and by a
    # scheduler). It was baked in, guarded by its repr (4 decimals): a change below that kept the old LR
    def run(L, compiled):
        m = _init(L.nn.Linear(4, 2), 7)
        opt = L.optim.Adam(m.parameters(), lr=L.tensor(0.01))
        sch = L.optim.lr_scheduler.ExponentialLR(opt, 0.8)

        def plain(x):
            opt.zero_grad()
            m(x).pow(2).sum().backward()
            opt.step()
            sch.step()
        f = ft.compile(plain) if compiled else plain
        for i in range(6):
            if i == 3:
                opt.param_groups[0]["lr"].fill_(0.0100001)  # below the printed precision
            f(L.tensor(XS[i][:, :4]))
        return m.weight.detach().numpy().copy(), float(opt.param_groups[0]["lr"]), f
    (we, le, _), (wc, lc, f), (wt, lt, _) = run(ft, False), run(ft, True), run(torch, False)
    np.testing.assert_allclose(wc, we, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(wc, wt, rtol=1e-5, atol=1e-6)
    assert lc == le == pytest.approx(lt)
    assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0


@pytest.mark.parametrize("mode", ["in place", "rebound"])
def test_a_tensor_lr_changed_inside_the_step(mode):
    # `group['lr'].mul_(0.5)` / `group['lr'] = group['lr'] * 0.5` inside: the new value is written back into
    # the group's tensor (equal values; torch and eager rebind to a new tensor in the second form)
    def run(L, compiled):
        m = _init(L.nn.Linear(4, 2), 9)
        opt = L.optim.SGD(m.parameters(), lr=L.tensor(0.1))

        def step(x):
            opt.zero_grad()
            m(x).pow(2).sum().backward()
            opt.step()
            if mode == "in place":
                opt.param_groups[0]["lr"].mul_(0.5)
            else:
                opt.param_groups[0]["lr"] = opt.param_groups[0]["lr"] * 0.5
        f = ft.compile(step) if compiled else step
        for i in range(4):
            f(L.tensor(XS[i][:, :4]))
        lr = opt.param_groups[0]["lr"]
        return m.weight.detach().numpy().copy(), float(lr), str(lr.dtype), f
    (we, le, de, _), (wc, lc, dc, f), (wt, lt, dt, _) = run(ft, False), run(ft, True), run(torch, False)
    np.testing.assert_allclose(wc, we, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(wc, wt, rtol=1e-5, atol=1e-6)
    assert lc == le == lt == pytest.approx(0.1 / 16) and dc == de == dt
    assert f.stats["traces"] == 1 and f.stats["eager_calls"] == 0


def test_an_optimizer_option_used_as_a_number_inside_the_step():
    # inside the program param_groups[i]['lr'] is a traced input: returned, it comes back a float; where Python
    # needs a number (tensor * lr, an f-string) the call runs eagerly (a TypeError before; a tracer returned)
    m, opt = _lin_opt()

    def ret(x):
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
        return opt.param_groups[0]["lr"]
    f = ft.compile(ret)
    assert [f(ft.ones(3, 4)) for _ in range(3)] == [0.1] * 3 and f.stats["eager_calls"] == 0

    def run(compiled):
        m, opt = _lin_opt()

        def reg(x):
            opt.zero_grad()
            loss = m(x).pow(2).sum() + m.weight.pow(2).sum() * opt.param_groups[0]["lr"]
            loss.backward()
            opt.step()
            return loss, f"lr={opt.param_groups[0]['lr']:.4f}"
        g = ft.compile(reg) if compiled else reg
        out = [g(ft.tensor(XS[i][:, :4])) for i in range(3)]
        return [(a.item(), b) for a, b in out], m.weight.detach().numpy().copy()
    eager = run(False)
    with pytest.warns(UserWarning, match="a traced value used where Python needs a number"):
        compiled = run(True)
    assert compiled[0] == eager[0]
    np.testing.assert_allclose(compiled[1], eager[1], rtol=1e-6)


@pytest.mark.parametrize("steps_inside", [True, False])
def test_a_scheduler_attribute_read_inside_is_its_current_value(steps_inside):
    # `return sched.last_epoch`: read while tracing it was a constant, one step behind when the function also
    # steps the scheduler (its step runs after the program). Read there: a graph break (eager, correct); read
    # in a function that does not step it: a guard (a new value recompiles)
    def run(L, compiled):
        m = _init(L.nn.Linear(4, 2), 10)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        sch = L.optim.lr_scheduler.StepLR(opt, 1, 0.5)

        def ret(x):
            opt.zero_grad()
            m(x).pow(2).sum().backward()
            opt.step()
            if steps_inside:
                sch.step()
            return sch.last_epoch
        f = ft.compile(ret) if compiled else ret
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: the step-order warning; the facade: the graph break's
            for i in range(4):
                out.append(f(L.tensor(XS[i][:, :4])))
                if not steps_inside and i % 2:
                    sch.step()
        return out, m.weight.detach().numpy().copy(), f
    (oe, we, _), (oc, wc, f), (ot, wt, _) = run(ft, False), run(ft, True), run(torch, False)
    assert oc == oe == ot
    np.testing.assert_allclose(wc, we, rtol=1e-6)
    np.testing.assert_allclose(wc, wt, rtol=1e-5)
    if steps_inside:
        assert f.stats["eager_calls"] == 4
    else:
        assert f.stats["eager_calls"] == 0 and f.stats["traces"] == 2  # (a new epoch)


@pytest.mark.parametrize("wrap", ["compile", "checkpoint"])
def test_backward_outside_a_compiled_forward_run_under_autocast(wrap):
    # the backward runs the forward again: under the autocast state it ran under (it ran in float32 and
    # failed: "got bfloat16[8,3], but expected float32[8,3]")
    def run(L, compiled):
        m = _init(L.nn.Linear(6, 3), 3)
        if compiled and wrap == "compile":
            fwd = ft.compile(m)
        elif wrap == "checkpoint":
            def fwd(x):
                return L.utils.checkpoint.checkpoint(m, x, use_reentrant=False)
        else:
            fwd = m
        x = L.tensor(XS[0])
        with L.autocast("cpu", dtype=L.bfloat16):
            out = fwd(x)
        out.float().pow(2).mean().backward()
        return out.dtype, m.weight.grad.float().numpy().copy()
    (dt_e, g_e), (dt_c, g_c), (dt_t, g_t) = run(ft, False), run(ft, True), run(torch, False)
    assert dt_e is ft.bfloat16 and dt_c is ft.bfloat16 and dt_t is torch.bfloat16
    np.testing.assert_allclose(g_c, g_e, rtol=1e-6)
    np.testing.assert_allclose(g_c, g_t, rtol=2e-2, atol=1e-2)  # bfloat16 forward


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_a_skipped_first_grad_scaler_step_leaves_no_optimizer_state(opt_name):
    # float16 gradients overflow at a huge initial scale: GradScaler skips the first step, and eagerly (and in
    # torch) the optimizer then has no state. The compiled step created it anyway (values selected back), so
    # state_dict() differed and a round trip through a fresh SGD(dampening) diverged
    def run(L, compiled):
        m = _init(L.nn.Linear(6, 3), 8)
        opt = (L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, dampening=0.5) if opt_name == "SGD"
               else L.optim.Adam(m.parameters(), lr=1e-2))
        scaler = L.amp.GradScaler("cpu", init_scale=2.0 ** 40, backoff_factor=2.0 ** -30)

        def amp(x):
            opt.zero_grad()
            with L.autocast("cpu", dtype=L.float16):
                loss = m(x).float().pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        f = ft.compile(amp) if compiled else amp
        f(L.tensor(XS[0]))
        first = opt.state_dict()["state"]
        for i in range(1, 4):
            f(L.tensor(XS[i]))
        return first, m.weight.detach().numpy().copy(), sorted(opt.state_dict()["state"][0]), scaler.get_scale()
    (fe, we, ke, se), (fc, wc, kc, sc), (ft_, wt, kt, st) = run(ft, False), run(ft, True), run(torch, False)
    assert fe == fc == ft_ == {}
    np.testing.assert_allclose(wc, we, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(wc, wt, rtol=1e-3, atol=1e-4)  # float16 forward
    assert kc == ke == kt and sc == se == st


@pytest.mark.parametrize("graph_break", [False, True])
def test_an_attribute_of_a_plain_object_set_inside_the_step_is_set_once_per_call(graph_break):
    # a Trainer counting its micro-steps (``self.micro += 1; if self.micro % 2 == 0: step``): the trace set the
    # attribute, then the replay (or, after a graph break, the eager run) set it again -- the counter ran two
    # ahead after the first call and the optimizer stepped on the wrong calls
    class Trainer:
        def __init__(self, L, model, opt):
            self.L, self.model, self.opt, self.micro, self.log = L, model, opt, 0, []

        def step(self, x, y):
            loss = self.L.nn.functional.cross_entropy(self.model(x), y) / 2
            loss.backward()
            self.micro += 1
            if self.micro % 2 == 0:
                self.opt.step()
                self.opt.zero_grad()
            if graph_break:
                self.last = float(loss.item())  # (a graph break: the call runs eagerly)
            return loss

    def scenario(L, compiled):
        m = _mlp(L, 3)
        tr = Trainer(L, m, L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9))
        f = ft.compile(tr.step) if compiled else tr.step
        micros = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the graph break's warning; the cache limit's)
            for i in range(6):
                f(L.tensor(XS[i]), L.tensor(YS[i]))
                micros.append(tr.micro)
        assert micros == [1, 2, 3, 4, 5, 6], micros
        return _snap(m, tr.opt), f
    f = _three(scenario)
    assert f.stats["calls"] == 6, f.stats
    if graph_break:
        assert f.stats["eager_calls"] == 6, f.stats


def test_model_eval_inside_a_compiled_function_is_replayed_on_every_call():
    # ``m.eval()`` inside the function: the trace's change of the flag stayed, but a cached call (no Python run)
    # left the module in train mode, so the eager code after it ran with dropout on and BatchNorm updating
    def run(L, compiled):
        m = _mlp(L, 4, norm="bn", drop=0.5)

        def evaluate(x):
            m.eval()
            return m(x)
        f = ft.compile(evaluate) if compiled else evaluate
        flags, outs = [], []
        for i in range(3):
            m.train()
            outs.append(_np(f(L.tensor(XS[i]))))
            flags.append([mod.training for mod in m.modules()])
        return flags, outs, _np(m[1].running_mean)
    (fe, oe, re), (fc, oc, rc), (ft_, ot, rt) = run(ft, False), run(ft, True), run(torch, False)
    assert fc == fe == ft_ == [[False] * 6] * 3
    np.testing.assert_allclose(np.stack(oc), np.stack(oe), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.stack(oc), np.stack(ot), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rc, rt, rtol=1e-6)


@pytest.mark.parametrize("batches", ["slices", "split", "select_kw"])
def test_batches_sliced_from_a_dataset_tensor_run_one_program(batches):
    # ``step(X[i:i + b])``: a view argument was read through the dataset's storage with its offsets baked in,
    # a recompile per batch until the cache limit sent every call to eager. Its values are now the input
    X0, Y0 = np.concatenate(XS[:4]), np.concatenate(YS[:4])

    def scenario(L, compiled):
        m = _mlp(L, 5)
        opt = L.optim.Adam(m.parameters(), lr=1e-2)
        X, Y = L.tensor(X0), L.tensor(Y0)

        def step(x, y):
            opt.zero_grad()
            loss = L.nn.functional.cross_entropy(m(x.reshape(-1, 6)), y.reshape(-1))
            loss.backward()
            opt.step()
            return loss, x
        f = ft.compile(step) if compiled else step
        if batches == "slices":
            pairs = [(X[8 * i:8 * i + 8], Y[8 * i:8 * i + 8]) for i in range(4)]
        elif batches == "split":
            pairs = list(zip(X.split(8), Y.split(8)))
        else:
            pairs = [(X[i], Y[i]) for i in range(8)]
        losses = []
        for x, y in pairs * 2:
            loss, back = f(x, y=y) if batches == "select_kw" else f(x, y)
            assert back is x  # (the argument itself comes back, as eagerly)
            losses.append(loss.item())
        return dict(_snap(m, opt), losses=np.array(losses)), f
    f = _three(scenario)
    _steady(f, calls=8 if batches != "select_kw" else 16)


def test_a_function_that_writes_to_its_view_argument_reads_it_through_its_storage():
    def run(L, compiled):
        Y = L.ones(10, 2)

        def f(x):
            x.mul_(2)
            return x.sum()
        g = ft.compile(f) if compiled else f
        outs = [g(Y[2 * i:2 * i + 2]).item() for i in range(3)] + [g(Y[2:4]).item()]
        return outs, Y.numpy().copy(), g
    (oe, ye, _), (oc, yc, g), (ot, yt, _) = run(ft, False), run(ft, True), run(torch, False)
    assert oc == oe == ot == [8.0, 8.0, 8.0, 16.0]
    np.testing.assert_array_equal(yc, yt)
    np.testing.assert_array_equal(ye, yt)
    assert g.stats["eager_calls"] == 0 and g.stats["traces"] == 4, g.stats  # (the first trace, then 3 offsets)
