"""``optimizer.state_dict()['state'][i]`` is the live ``optimizer.state[p]`` dict, as torch's: a state dict taken
early and read (or saved) later holds the current values, and an in-place edit of its tensors reaches the
optimizer. Before, it was a snapshot (step 1.0 and the first exp_avg after three steps). Eager and compiled steps,
against real torch."""
import copy

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _run(L, C, opt_cls, **kw):
    p = L.nn.Parameter(L.tensor([1.0, -2.0]))
    opt = opt_cls(L)([p], lr=0.1, **kw)

    def step():
        opt.zero_grad()
        (p ** 2).sum().backward()
        opt.step()
    s = C(step)
    s()
    sd = opt.state_dict()
    snap = copy.deepcopy(sd)
    s()
    s()
    out = [sd["state"][0] is opt.state[p], {k: np.asarray(v.tolist()) for k, v in sd["state"][0].items()},
           {k: np.asarray(v.tolist()) for k, v in snap["state"][0].items()}]
    name = next(k for k in sd["state"][0] if k != "step")
    with L.no_grad():
        sd["state"][0][name].zero_()  # (an edit of the live tensor: the next step reads it)
    s()
    out.append(p.tolist())
    # a fresh optimizer loaded from the live dict continues as this one would
    q = L.nn.Parameter(p.detach().clone())
    opt2 = opt_cls(L)([q], lr=0.1, **kw)
    opt2.load_state_dict(opt.state_dict())
    opt2.zero_grad()
    (q ** 2).sum().backward()
    opt2.step()  # (torch's load keeps the dict's tensors, shared with opt: only one of the two steps here)
    out.append(q.tolist())
    return out


OPTS = {"Adam": lambda L: L.optim.Adam, "SGD momentum": lambda L: L.optim.SGD,
        "AdamW amsgrad": lambda L: L.optim.AdamW}
KW = {"Adam": {}, "SGD momentum": {"momentum": 0.9}, "AdamW amsgrad": {"amsgrad": True}}


@pytest.mark.parametrize("name", list(OPTS))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_state_dict_state_is_the_live_state(name, compiled):
    ref = _run(torch, lambda f: f, OPTS[name], **KW[name])
    got = _run(ft, ft.compile if compiled else (lambda f: f), OPTS[name], **KW[name])
    assert got[0] is ref[0] is True
    for a, b in zip(got[1:3], ref[1:3]):
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[3], ref[3], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[4], ref[4], rtol=1e-5, atol=1e-7)
