"""``optimizer.state[p]`` edited by hand, as PyTorch reads it (functorch_lite/optim/_edits.py): state written for a
parameter that has none yet (moved from another parameter, or set before the first step) is the step's state;
entries of the user's own (timm's Lookahead keeps its slow buffer there) are kept through steps, ``state_dict()``
and ``load_state_dict``; ``momentum_buffer = None`` restarts SGD's momentum; reading ``state[p]`` before any step
leaves the empty entry torch's defaultdict leaves. Each test runs the same code in torch and here and compares
values and keys (in order). Before, the hand-written state was ignored (a fresh start), a user's entry or a None
crashed the next step (AttributeError in ``_sync_from_views``) and ``load_state_dict`` dropped the user's entries.
SGD with momentum, Adam and RMSprop (centered, with momentum: four state entries), and Adagrad (state made by its
constructor)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

OPTS = {
    "SGD momentum": lambda L, ps: L.optim.SGD(ps, lr=0.1, momentum=0.9),
    "Adam": lambda L, ps: L.optim.Adam(ps, lr=0.1),
    "RMSprop": lambda L, ps: L.optim.RMSprop(ps, lr=0.01, momentum=0.9, centered=True),
    "Adagrad": lambda L, ps: L.optim.Adagrad(ps, lr=0.1),
}
# a whole state written by hand for a 2-element parameter, in each optimizer's layout
HAND = {
    "SGD momentum": lambda L: {"momentum_buffer": L.full((2,), 5.0)},
    "Adam": lambda L: {"step": L.tensor(5.0), "exp_avg": L.full((2,), 0.5), "exp_avg_sq": L.full((2,), 0.25)},
    "RMSprop": lambda L: {"step": L.tensor(2.0), "square_avg": L.full((2,), 0.5),
                          "momentum_buffer": L.full((2,), 0.1), "grad_avg": L.full((2,), 0.2)},
    "Adagrad": lambda L: {"step": L.tensor(4.0), "sum": L.full((2,), 3.0)},
}


def _val(v):
    if hasattr(v, "detach"):
        return ("tensor", str(v.dtype).replace("torch.", ""), v.detach().numpy().copy())
    if isinstance(v, dict):
        return {k: _val(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_val(x) for x in v)
    return v


def _state(opt, p) -> list:
    """``opt.state[p]`` as (key, value) pairs in the dict's order."""
    return [(k, _val(v)) for k, v in opt.state[p].items()]


def _same(a, b, path="out"):
    if isinstance(a, tuple) and len(a) == 3 and a[0] == "tensor":
        assert isinstance(b, tuple) and b[0] == "tensor" and a[1] == b[1], (path, a, b)
        np.testing.assert_allclose(a[2], b[2], rtol=1e-6, atol=1e-7, err_msg=path)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), (path, a, b)
        for k in a:
            _same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=path)
    else:
        assert a == b, (path, a, b)


def _parity(fn, *args):
    """``fn(L, *args)`` in torch and here: the same results."""
    _same(fn(torch, *args), fn(ft, *args))


def _w(L):
    return L.tensor([1.0, 2.0], requires_grad=True)


def _grad(L, w, scale=1.0):
    w.grad = L.tensor([1.0, -0.5]) * scale


# ---- state written for a parameter without state ----------------------------------------------------------------
@pytest.mark.parametrize("name", list(OPTS))
def test_state_moved_to_a_new_parameter(name):
    """The first report's script: the parameter replaced in its group, its state moved over (``state[b] =
    state.pop(a)``): the step continues from that state (here: a fresh start, 0.9 / [1.0] for SGD)."""
    def run(L):
        a = _w(L)
        opt = OPTS[name](L, [a])
        for i in range(2):
            _grad(L, a, i + 1)
            opt.step()
        b = L.tensor([3.0, -1.0], requires_grad=True)
        opt.param_groups[0]["params"][0] = b
        opt.state[b] = opt.state.pop(a)
        out = []
        for i in range(2):
            _grad(L, b, 0.5 * i + 1)
            opt.step()
            out.append((_val(b), _state(opt, b)))
        return out, a in opt.state, list(opt.state_dict()["state"][0])
    _parity(run)


@pytest.mark.parametrize("how", ["entries", "dict"])
@pytest.mark.parametrize("name", list(OPTS))
def test_state_written_before_the_first_step(name, how):
    """The whole state written before the first step (entry by entry into the defaultdict's empty dict, or as a new
    dict): the step reads it (Adam continues from step 5 to 6) and updates the user's tensors in place."""
    def run(L):
        w = _w(L)
        opt = OPTS[name](L, [w])
        hand = HAND[name](L)
        if how == "dict":
            opt.state[w] = dict(hand)
        else:
            for k, v in hand.items():
                opt.state[w][k] = v
        out = []
        for i in range(2):
            _grad(L, w, i + 1)
            opt.step()
            out.append((_val(w), _state(opt, w)))
        return out, [opt.state[w][k] is v for k, v in hand.items()]
    _parity(run)


# ---- the user's own entries -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(OPTS))
def test_user_entries_are_kept_through_steps(name):
    """A tensor, an int and a name the transform uses internally ('step' in SGD's state is the user's) added after
    a step: the next steps neither read nor write them; they stay in ``state[p]`` and ``state_dict()`` (in the
    dict's order), a Lookahead-style in-place update of the slow buffer included; removed, the state is as
    before."""
    def run(L):
        w = _w(L)
        opt = OPTS[name](L, [w])
        _grad(L, w)
        opt.step()
        slow = w.detach().clone()
        opt.state[w]["slow_buffer"] = slow
        opt.state[w]["count"] = 3
        opt.state[w]["step" if name == "SGD momentum" else "index"] = L.tensor(7.0)
        out = []
        for i in range(3):
            _grad(L, w, i + 2)
            opt.step()
            with L.no_grad():  # (Lookahead: slow += alpha * (fast - slow); fast = slow)
                slow.add_(w - slow, alpha=0.5)
                w.copy_(slow)
            out.append((_val(w), _state(opt, w), list(opt.state_dict()["state"][0])))
        same = opt.state[w]["slow_buffer"] is slow
        for k in ("slow_buffer", "count", "step" if name == "SGD momentum" else "index"):
            del opt.state[w][k]
        _grad(L, w)
        opt.step()
        return out, same, _val(w), _state(opt, w)
    _parity(run)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_adamw_with_a_user_entry(name):
    def run(L):
        w = _w(L)
        opt = getattr(L.optim, name)([w], lr=0.1)
        _grad(L, w)
        opt.step()
        opt.state[w]["slow_buffer"] = w.detach().clone()
        _grad(L, w, 2)
        opt.step()
        return _val(w), _state(opt, w)
    _parity(run)


# ---- None ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"nesterov": True}, {"dampening": 0.5, "weight_decay": 0.1}],
                         ids=["plain", "nesterov", "dampening+decay"])
def test_momentum_buffer_none_restarts_from_the_gradient(kw):
    """``state[p]['momentum_buffer'] = None``: torch's step starts the buffer again from the gradient, a new tensor
    in the dict; before that step ``state_dict()`` shows the None."""
    def run(L):
        w = _w(L)
        opt = L.optim.SGD([w], lr=0.1, momentum=0.9, **kw)
        for i in range(2):
            _grad(L, w, i + 1)
            opt.step()
        old = opt.state[w]["momentum_buffer"]
        opt.state[w]["momentum_buffer"] = None
        out = [_val(opt.state_dict()["state"])]
        for i in range(2):
            _grad(L, w, 0.5 * i + 1)
            opt.step()
            out.append((_val(w), _state(opt, w)))
        return out, opt.state[w]["momentum_buffer"] is old, _val(old)
    _parity(run)


@pytest.mark.parametrize("name", ["Adam", "RMSprop"])
def test_none_state_tensor_fails_as_in_torch(name):
    """Torch's other optimizers fail on a None state tensor (AttributeError): so does this."""
    entry = {"Adam": "exp_avg", "RMSprop": "momentum_buffer"}[name]
    for L in (torch, ft):
        w = _w(L)
        opt = OPTS[name](L, [w])
        _grad(L, w)
        opt.step()
        opt.state[w][entry] = None
        with pytest.raises(AttributeError):
            opt.step()


# ---- load_state_dict ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(OPTS))
def test_load_state_dict_keeps_the_users_entries(name):
    """A saved state with entries of the user's own (a float64 tensor, cast to the parameter's dtype as torch casts
    it; an int; a list): loaded, kept through a step, in ``state_dict()`` again and in a second load."""
    def run(L):
        w = _w(L)
        opt = OPTS[name](L, [w])
        _grad(L, w)
        opt.step()
        sd = opt.state_dict()
        sd["state"][0]["ema"] = L.ones(2, dtype=L.float64)
        sd["state"][0]["count"] = 7
        sd["state"][0]["hist"] = [1, L.tensor([2.0])]
        opt2 = OPTS[name](L, [w])
        opt2.load_state_dict(sd)
        out = [_state(opt2, w)]
        _grad(L, w, 2)
        opt2.step()
        out.append((_val(w), _state(opt2, w), _val(opt2.state_dict()["state"])))
        opt3 = OPTS[name](L, [w])
        opt3.load_state_dict(opt2.state_dict())
        _grad(L, w, 3)
        opt3.step()
        out.append((_val(w), _state(opt3, w)))
        return out
    _parity(run)


def test_load_state_dict_with_a_none_momentum_buffer():
    def run(L):
        w = _w(L)
        opt = L.optim.SGD([w], lr=0.1, momentum=0.9)
        _grad(L, w)
        opt.step()
        opt.state[w]["momentum_buffer"] = None
        sd = opt.state_dict()
        opt2 = L.optim.SGD([w], lr=0.1, momentum=0.9)
        opt2.load_state_dict(sd)
        out = [_state(opt2, w)]
        _grad(L, w, 2)
        opt2.step()
        return out, _val(w), _state(opt2, w)
    _parity(run)


# ---- reading state[p] before any step --------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(OPTS))
def test_state_read_before_any_step(name):
    """``opt.state[w]`` before any step leaves an empty entry (torch's defaultdict): ``state_dict()['state']`` is
    ``{0: {}}`` (Adagrad's constructor made its state already); the step then fills that same dict."""
    def run(L):
        w = _w(L)
        opt = OPTS[name](L, [w])
        d = opt.state[w]
        out = [_val(opt.state_dict()["state"]), len(opt.state)]
        _grad(L, w)
        opt.step()
        return out, opt.state[w] is d, _state(opt, w), list(opt.state_dict()["state"])
    _parity(run)


# ---- compiled training steps -------------------------------------------------------------------------------------
RNG = np.random.default_rng(7)
XS = [RNG.standard_normal((8, 6)).astype(np.float32) for _ in range(10)]
YS = [RNG.integers(0, 3, 8) for _ in range(10)]


def _mlp(L):
    g = torch.Generator().manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    m = L.nn.Sequential(L.nn.Linear(6, 16), L.nn.ReLU(), L.nn.Linear(16, 3))
    with L.no_grad():
        for p, q in zip(m.parameters(), tm.parameters()):
            p.copy_(L.tensor(torch.randn(q.shape, generator=g).numpy() * 0.3))
    return m


@pytest.mark.parametrize("name", ["SGD momentum", "Adam"])
def test_compiled_step_sees_state_edits_between_calls(name):
    """A compiled zero_grad/forward/backward/step called ten times, the optimizer state edited between calls: a
    hand-written state before the first call, Lookahead-style slow buffers added (and updated in place) at call 2
    and removed at call 5, a state tensor replaced by a new one at call 7. The compiled step notices each edit
    (its steps run eagerly while the state holds the user's entries, a graph break, then compiled again): the
    same losses, parameters and state as eagerly and in torch."""
    def scenario(L, compiled):
        m = _mlp(L)
        opt = OPTS[name](L, m.parameters())
        lf = L.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = lf(m(x), y)
            loss.backward()
            opt.step()
            return loss
        f = ft.compile(step) if compiled else step
        w0 = m[0].weight
        if name == "SGD momentum":
            opt.state[w0]["momentum_buffer"] = L.full_like(w0, 0.01)
        else:
            opt.state[w0].update(step=L.tensor(3.0), exp_avg=L.full_like(w0, 0.01), exp_avg_sq=L.full_like(w0, 1e-3))
        losses, eager_calls = [], []
        for i in range(10):
            losses.append(f(L.tensor(XS[i]), L.tensor(YS[i])).item())
            eager_calls.append(f.stats["eager_calls"] if compiled else 0)
            if i == 2:
                for p in m.parameters():
                    opt.state[p]["slow_buffer"] = p.detach().clone()
            elif i in (3, 4):
                with L.no_grad():
                    for p in m.parameters():
                        slow = opt.state[p]["slow_buffer"]
                        slow.add_(p - slow, alpha=0.5)
                        p.copy_(slow)
            elif i == 5:
                for p in m.parameters():
                    del opt.state[p]["slow_buffer"]
            elif i == 7:
                k = "momentum_buffer" if name == "SGD momentum" else "exp_avg"
                opt.state[m[2].weight][k] = opt.state[m[2].weight][k] * 0.5
        out = [np.array(losses), [_val(p) for p in m.parameters()],
               [_state(opt, p) for p in m.parameters()], list(opt.state_dict()["state"])]
        return out, eager_calls

    results = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for label, L, compiled in (("torch", torch, False), ("eager", ft, False), ("compiled", ft, True)):
            results[label] = scenario(L, compiled)
    _same(results["torch"][0], results["eager"][0])
    _same(results["eager"][0], results["compiled"][0])
    calls = results["compiled"][1]
    # eager: call 0 (the hand-written state); calls 4-6: the call after the slow buffers came (3) finds them as it
    # reads the state back, its program then right (it leaves them alone), and marks the optimizer; call 6 (the
    # first without them) lifts the mark. Compiled again from call 7 on, the replaced tensor read by that call.
    assert calls == [1, 1, 1, 1, 2, 3, 4, 4, 4, 4], str(calls)
    assert any("written by hand" in str(w.message) for w in caught)


def test_compiled_step_after_state_set_to_none_between_calls():
    """``state[p]['momentum_buffer'] = None`` (and then a key of the user's own) between two compiled calls, with
    no eager step in between: the compiled call's steady-state check saw a None where it reads a tensor's
    storage and raised AttributeError; now the call takes the full path (eager steps while the state is edited)
    and matches torch."""
    def run(T, comp):
        w = T.tensor([1., 2.], requires_grad=True)
        opt = T.optim.SGD([w], lr=0.1, momentum=0.9)

        def step():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            opt.step()
            return loss
        c = comp(step)
        out = []
        for i in range(6):
            if i == 3:
                opt.state[w]['momentum_buffer'] = None
            if i == 4:
                opt.state[w]['slow'] = w.detach().clone()
            out.append((float(c()), w.tolist()))
        return out, sorted(opt.state[w])
    want = run(torch, lambda f: f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run(ft, ft.compile)
    assert got[1] == want[1]
    for (a, wa), (b, wb) in zip(got[0], want[0]):
        assert abs(a - b) <= 1e-6 * max(1.0, abs(b)) and np.allclose(wa, wb, rtol=1e-6, atol=1e-7)
