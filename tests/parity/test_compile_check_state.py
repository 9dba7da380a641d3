"""A compiled call whose index check fails leaves the state as eager's, which raised at that check, left it: what
ran before the check stays done (a BatchNorm's statistics, an optimizer step before a check after it, a dropout's
draw, a .grad the step had not emptied yet), what comes after is not. Before, every rewritten buffer went back
to its value before the call, and .grad fields were emptied as if zero_grad() came first (a helper's red-team:
each case failed). Against torch eager (the dropout case: against the facade's eager, whose generator is JAX's)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import close


def _init(L, *mods):
    rng = np.random.default_rng(0)
    with L.no_grad():
        for m in mods:
            for p in m.parameters():
                p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))


def _run(L, comp, case, bad_at):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return case(L, comp, bad_at)


def _bn(L, comp, bad_at):
    emb, bn, head = L.nn.Embedding(5, 4), L.nn.BatchNorm1d(4), L.nn.Linear(4, 3)
    _init(L, emb, head)
    opt = L.optim.SGD(list(emb.parameters()) + list(bn.parameters()) + list(head.parameters()), lr=0.1)

    def step(tok, lab):
        opt.zero_grad()
        loss = L.nn.functional.cross_entropy(head(bn(emb(tok).mean(1))), lab)
        loss.backward()
        opt.step()
        return loss.detach()
    step = comp(step)
    tok, out = L.tensor([[0, 1], [2, 3]]), []
    for k in range(6):
        try:
            out.append(float(step(tok, L.tensor([0, 4]) if k == bad_at else L.tensor([0, 2]))))
        except IndexError as e:
            out.append(str(e))
    return out, int(bn.num_batches_tracked), bn.running_mean.numpy().tolist(), head.weight.detach().numpy().tolist()


def _after_step(L, comp, bad_at):
    emb, head = L.nn.Embedding(5, 3), L.nn.Linear(3, 4)
    _init(L, emb, head)
    opt = L.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.1, momentum=0.9)

    def step(tok, lab, j):
        opt.zero_grad()
        loss = L.nn.functional.cross_entropy(head(emb(tok).mean(1)), lab)
        loss.backward()
        opt.step()
        with L.no_grad():
            extra = head.weight.gather(1, j).sum()
        return loss.detach(), extra
    step = comp(step)
    tok, lab, out = L.tensor([[0, 1], [2, 3]]), L.tensor([0, 2]), []
    for k in range(6):
        j = L.tensor([[0], [2], [3], [1]]) if k == bad_at else L.tensor([[0], [2], [1], [1]])
        try:
            out.append(float(step(tok, lab, j)[0]))
        except RuntimeError as e:
            out.append(str(e).splitlines()[0])
    st = opt.state[head.weight]["momentum_buffer"]
    return out, head.weight.detach().numpy().tolist(), st.numpy().tolist()


def _lin_adam(L):
    lin = L.nn.Linear(3, 4)
    with L.no_grad():
        lin.weight.copy_(L.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10))
        lin.bias.zero_()
    return lin, L.optim.Adam(lin.parameters(), lr=0.05), L.ones(2, 3)


def _late_zero_grad(L, comp, bad_at, set_to_none=True):
    lin, opt, x = _lin_adam(L)

    def step(lab):
        loss = L.nn.functional.cross_entropy(lin(x), lab)
        if set_to_none:
            opt.zero_grad()
            loss.backward()
            opt.step()
        else:
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=False)
        return loss.detach()
    step = comp(step)
    for k in range(bad_at + 1):
        try:
            step(L.tensor([0, 9]) if k == bad_at else L.tensor([0, 2]))
        except IndexError:
            pass
    g = lin.weight.grad
    return None if g is None else g.numpy().tolist(), lin.weight.detach().numpy().tolist()


CASES = {"batchnorm before the check": _bn, "check after the step": _after_step,
         "zero_grad after the forward": _late_zero_grad,
         "zero_grad(set_to_none=False) at the end": lambda L, c, b: _late_zero_grad(L, c, b, False)}


@pytest.mark.parametrize("bad_at", [0, 1, 3])
@pytest.mark.parametrize("name", list(CASES))
def test_state_after_a_failed_check(name, bad_at):
    t = _run(torch, lambda f: f, CASES[name], bad_at)
    f = _run(ft, ft.compile, CASES[name], bad_at)
    assert close(f, t, rel=1e-5)


def test_a_draw_before_the_check_stays_made():
    """A dropout draw before the failing check: the generator advanced, as eagerly; the masks after match."""
    def run(comp):
        ft.manual_seed(0)
        lin = ft.nn.Linear(4, 3)
        drop = ft.nn.Dropout(0.5)
        opt = ft.optim.SGD(lin.parameters(), lr=0.1)
        x = ft.ones(8, 4)

        def step(lab):
            opt.zero_grad()
            loss = ft.nn.functional.cross_entropy(lin(drop(x)), lab)
            loss.backward()
            opt.step()
            return loss.detach()
        step = comp(step)
        out = []
        for k in range(7):
            try:
                out.append(float(step(ft.tensor([0, 1, 2, 0, 1, 2, 0, 3 if k == 3 else 1]))))
            except IndexError:
                out.append("IndexError")
        return out
    assert close(run(ft.compile), run(lambda f: f), rel=1e-6)


def _two_checks(L, comp, bad_at):
    """A check before zero_grad() (the first loss) and one after it (the second): the .grad fields as the failing
    one found them (kept by the first, None by the second)."""
    lin, opt, x = _lin_adam(L)

    def step(a, b):
        first = L.nn.functional.cross_entropy(lin(x), a)
        opt.zero_grad()
        loss = L.nn.functional.cross_entropy(lin(x * 2), b) + first
        loss.backward()
        opt.step()
        return loss.detach()
    step = comp(step)
    out = []
    for k in range(5):
        a = L.tensor([0, 9]) if k == bad_at else L.tensor([0, 2])
        b = L.tensor([1, 7]) if k == bad_at + 1 else L.tensor([1, 2])
        try:
            out.append(float(step(a, b)))
        except IndexError as e:
            out.append(str(e))
        g = lin.weight.grad
        out.append(None if g is None else g.numpy().tolist())
    return out, lin.weight.detach().numpy().tolist()


@pytest.mark.parametrize("bad_at", [0, 1, 3])
def test_checks_before_and_after_zero_grad(bad_at):
    t = _run(torch, lambda f: f, _two_checks, bad_at)
    f = _run(ft, ft.compile, _two_checks, bad_at)
    assert close(f, t, rel=1e-5)
