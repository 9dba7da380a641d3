"""``torch.nn.utils.prune`` against real PyTorch, with identical weights (copied from torch through numpy): masks,
pruned weights, forward outputs and the gradients reaching ``<name>_orig``, parameter / buffer / state_dict names
and values, the forward pre-hooks (the pruning method objects, and the PruningContainer of iterative pruning),
``amount`` as int or float, importance scores, global pruning, custom masks, remove / is_pruned, every error
(type and message), the random methods' structure and reproducibility, and a compiled training step of a pruned
model against the same steps eager."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (torch does not import it with torch.nn.utils)

import functorch_lite as ft
from _parity import assert_same_error, assert_same_outcome, run

P = {torch: torch.nn.utils.prune, ft: ft.nn.utils.prune}
X = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32)
XC = np.random.default_rng(4).standard_normal((2, 3, 6, 6)).astype(np.float32)


def _np(t):
    return t.detach().numpy()


def _pair(build):
    """``build(lib)`` in both libraries, the facade's module given torch's (random, tie-free) state."""
    torch.manual_seed(0)
    mt, mf = build(torch), build(ft)
    mf.load_state_dict({k: ft.tensor(_np(v)) for k, v in mt.state_dict().items()})
    return mt, mf


def _hooks(m):
    """Every pruning hook of ``m`` and its submodules as plain data (class names, tensor names, children)."""
    out = []
    for name, sub in m.named_modules():
        for h in sub._forward_pre_hooks.values():
            kids = [(type(c).__name__, c._tensor_name) for c in h] if type(h).__name__ == "PruningContainer" else None
            out.append((name, type(h).__name__, h._tensor_name, kids))
    return out


def _assert_same_module(mt, mf, pruned=("weight",)):
    """Same parameter / buffer / state_dict names in the same order, the same values (exactly: masks, and the
    pruned tensors are products of equal floats with 0/1), the same hooks, the same plain pruned attributes."""
    assert [n for n, _ in mf.named_parameters()] == [n for n, _ in mt.named_parameters()]
    assert [n for n, _ in mf.named_buffers()] == [n for n, _ in mt.named_buffers()]
    sd_t, sd_f = mt.state_dict(), mf.state_dict()
    assert list(sd_f) == list(sd_t)
    for k in sd_t:
        assert str(sd_f[k].dtype) == str(sd_t[k].dtype), k
        np.testing.assert_array_equal(_np(sd_f[k]), _np(sd_t[k]), err_msg=k)
    assert _hooks(mf) == _hooks(mt)
    for name in pruned:
        assert name not in mf._parameters and name not in mf._buffers and name in mf.__dict__
        np.testing.assert_array_equal(_np(getattr(mf, name)), _np(getattr(mt, name)))
    assert P[ft].is_pruned(mf) is P[torch].is_pruned(mt)


def _forward_backward(mt, mf, x=X, tol=1e-5):
    """Forward + backward of sum(y**2) in both: outputs and every parameter's gradient, compared by name."""
    grads = []
    for lib, m in ((torch, mt), (ft, mf)):
        y = m(lib.tensor(x))
        (y * y).sum().backward()
        grads.append((y, {k: p.grad for k, p in m.named_parameters()}))
    np.testing.assert_allclose(_np(grads[1][0]), _np(grads[0][0]), rtol=tol, atol=tol)
    assert list(grads[1][1]) == list(grads[0][1])
    for k, g in grads[0][1].items():
        np.testing.assert_allclose(_np(grads[1][1][k]), _np(g), rtol=tol, atol=tol, err_msg=k)
    return grads


def _lin(lib):
    return lib.nn.Linear(5, 4)


def _conv(lib):
    return lib.nn.Conv2d(3, 6, 3)


# ---- the reparametrization ----------------------------------------------------------------------------------
def test_l1_unstructured_reparametrizes_forward_and_gradients():
    mt, mf = _pair(_lin)
    for lib, m in ((torch, mt), (ft, mf)):
        assert P[lib].l1_unstructured(m, "weight", amount=0.3) is m
        assert P[lib].l1_unstructured(m, name="bias", amount=1) is m
    _assert_same_module(mt, mf, pruned=("weight", "bias"))
    assert list(mf.state_dict()) == ["weight_orig", "bias_orig", "weight_mask", "bias_mask"]
    assert int((mf.weight_mask == 0).sum()) == 6 and int((mf.bias_mask == 0).sum()) == 1
    assert type(mf.weight_orig) is ft.nn.Parameter and type(mf.weight) is ft.Tensor
    assert type(mf.weight.grad_fn).__name__ == type(mt.weight.grad_fn).__name__ == "MulBackward0"
    hook = list(mf._forward_pre_hooks.values())[0]
    assert isinstance(hook, P[ft].L1Unstructured) and hook.amount == 0.3 and hook._tensor_name == "weight"
    grads = _forward_backward(mt, mf)
    g = _np(grads[1][1]["weight_orig"])
    assert np.all(g[_np(mf.weight_mask) == 0] == 0) and np.any(g != 0)


def test_hook_recomputes_the_weight_from_orig_before_every_call():
    mt, mf = _pair(_lin)
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].l1_unstructured(m, "weight", amount=8)
        with lib.no_grad():
            m.weight_orig.mul_(-2.0)
            m.weight_orig[0, 0] = 7.0
        m(lib.tensor(X))  # the hook reads the new weight_orig; the mask stays
    _assert_same_module(mt, mf)
    assert float(mf.weight[0, 0].detach()) == 7.0 * float(mf.weight_mask[0, 0])
    _forward_backward(mt, mf)


@pytest.mark.parametrize("amount", [0.0, 0.125, 0.55, 1.0, 7, 20])
def test_l1_amount_int_and_float(amount):
    """A float is a fraction rounded as PyTorch rounds (Python's round of amount * 20), an int a count."""
    mt, mf = _pair(_lin)
    P[torch].l1_unstructured(mt, "weight", amount)
    P[ft].l1_unstructured(mf, "weight", amount)
    _assert_same_module(mt, mf)


@pytest.mark.parametrize("n,dim", [(1, 0), (2, 1), (float("inf"), -1), (float("-inf"), 0), (0.5, 2),
                                   (3, -3)])
def test_ln_structured_conv_channels(n, dim):
    mt, mf = _pair(_conv)
    P[torch].ln_structured(mt, "weight", amount=0.5, n=n, dim=dim)
    P[ft].ln_structured(mf, "weight", amount=0.5, n=n, dim=dim)
    _assert_same_module(mt, mf)
    m = _np(mf.weight_mask)
    per_channel = np.moveaxis(m, dim, 0).reshape(m.shape[dim], -1)
    assert all(len(set(row)) == 1 for row in per_channel)  # whole channels
    assert (per_channel[:, 0] == 0).sum() == round(0.5 * m.shape[dim])


@pytest.mark.parametrize("n", ["nuc", "fro"])
def test_ln_structured_matrix_norms_and_int_amount(n):
    mt, mf = _pair(lambda lib: lib.nn.Conv1d(2, 5, 3))
    P[torch].ln_structured(mt, "weight", amount=2, n=n, dim=0)
    P[ft].ln_structured(mf, "weight", amount=2, n=n, dim=0)
    _assert_same_module(mt, mf)


def test_importance_scores():
    mt, mf = _pair(_conv)
    scores = np.random.default_rng(9).standard_normal((6, 3, 3, 3)).astype(np.float32)
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].l1_unstructured(m, "weight", amount=0.4, importance_scores=lib.tensor(scores))
        P[lib].ln_structured(m, "weight", amount=2, n=1, dim=0, importance_scores=lib.tensor(scores))
        P[lib].l1_unstructured(m, "bias", amount=2, importance_scores=lib.tensor(scores[:, 0, 0, 0]))
    _assert_same_module(mt, mf, pruned=("weight", "bias"))
    np.testing.assert_array_equal(_np(mf.weight_orig), _np(mt.weight_orig))  # the scores are not the weights
    _forward_backward(mt, mf, XC)


# ---- iterative pruning --------------------------------------------------------------------------------------
def test_iterative_pruning_builds_one_container_and_prunes_only_unpruned_entries():
    mt, mf = _pair(_conv)
    steps = [lambda lib, m: P[lib].l1_unstructured(m, "weight", amount=0.3),
             lambda lib, m: P[lib].ln_structured(m, "weight", amount=0.5, n=2, dim=0),
             lambda lib, m: P[lib].l1_unstructured(m, "weight", amount=10),
             lambda lib, m: P[lib].ln_structured(m, "weight", amount=1, n=1, dim=1),
             lambda lib, m: P[lib].identity(m, "weight")]
    for step in steps:
        step(torch, mt)
        step(ft, mf)
        _assert_same_module(mt, mf)
        assert len(mf._forward_pre_hooks) == 1
    (container,) = mf._forward_pre_hooks.values()
    assert isinstance(container, P[ft].PruningContainer) and len(container) == 5
    assert [type(c).__name__ for c in container] == ["L1Unstructured", "LnStructured", "L1Unstructured",
                                                     "LnStructured", "Identity"]
    assert isinstance(container[1], P[ft].LnStructured) and container[-1] is list(container)[-1]
    # 3 of 6 output channels gone, then 10 more entries among the rest, then 1 of the 3 input channels
    assert list(mf.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    _forward_backward(mt, mf, XC)


def test_structured_then_structured_only_sees_kept_channels():
    mt, mf = _pair(_lin)
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].ln_structured(m, "weight", amount=1, n=2, dim=0)
        P[lib].ln_structured(m, "weight", amount=2, n=2, dim=0)  # 2 of the 3 remaining rows
        P[lib].l1_unstructured(m, "weight", amount=0.5)  # half of the 5 remaining entries: 2
    _assert_same_module(mt, mf)
    assert int((mf.weight_mask.sum(1) == 0).sum()) == 3 and int(mf.weight_mask.sum()) == 3


def test_custom_from_mask_and_identity():
    mt, mf = _pair(_lin)
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].custom_from_mask(m, "bias", mask=lib.tensor([0, 1, 0, 1]))
        P[lib].custom_from_mask(m, "bias", mask=lib.tensor([True, False, True, True]))
        P[lib].identity(m, "weight")
    _assert_same_module(mt, mf, pruned=("weight", "bias"))
    assert _np(mf.bias_mask).tolist() == [0.0, 0.0, 0.0, 1.0] and str(mf.bias_mask.dtype) == "torch.float32"
    assert np.all(_np(mf.weight_mask) == 1)
    _forward_backward(mt, mf)


def test_float64_module_masks_follow_the_parameter_dtype():
    mt, mf = _pair(lambda lib: lib.nn.Linear(5, 4).double())
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].l1_unstructured(m, "weight", amount=5)
        P[lib].custom_from_mask(m, "weight", mask=lib.tensor(np.eye(4, 5, dtype=bool)))
    _assert_same_module(mt, mf)
    assert str(mf.weight_mask.dtype) == "torch.float64"
    _forward_backward(mt, mf, X.astype(np.float64))


# ---- global pruning -----------------------------------------------------------------------------------------
def _net(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.Flatten(), lib.nn.Linear(64, 5), lib.nn.ReLU(),
                             lib.nn.Linear(5, 2))


@pytest.mark.parametrize("amount", [30, 0.4])
def test_global_unstructured_over_several_modules(amount):
    mt, mf = _pair(_net)
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].global_unstructured([(m[0], "weight"), (m[2], "weight"), (m[4], "bias")],
                                   pruning_method=P[lib].L1Unstructured, amount=amount)
    for i, pruned in ((0, ("weight",)), (2, ("weight",)), (4, ("bias",))):
        _assert_same_module(mt[i], mf[i], pruned)
    zeros = sum(int((b == 0).sum()) for b in mf.buffers())
    assert zeros == (amount if isinstance(amount, int) else round(amount * (108 + 320 + 2)))
    assert [h[1] for h in _hooks(mf)] == ["CustomFromMask"] * 3
    _forward_backward(mt, mf, XC)


def test_global_unstructured_on_pruned_params_with_importance_scores():
    mt, mf = _pair(_net)
    s = np.random.default_rng(1).standard_normal((5, 64)).astype(np.float32)
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].ln_structured(m[2], "weight", amount=2, n=2, dim=0)
        params = ((m[0], "weight"), (m[2], "weight"))
        P[lib].global_unstructured(params, P[lib].L1Unstructured, importance_scores={(m[2], "weight"): lib.tensor(s)},
                                   amount=50)
        P[lib].global_unstructured(params, P[lib].RandomUnstructured, amount=0)
    for i in (0, 2):
        _assert_same_module(mt[i], mf[i])
    assert [h[3] for h in _hooks(mf)] == [[("CustomFromMask", "weight")] * 2, [("LnStructured", "weight"),
                                          ("CustomFromMask", "weight"), ("CustomFromMask", "weight")]]
    _forward_backward(mt, mf, XC)


# ---- random methods: torch's counts and structure, the facade's generator -----------------------------------
def _random_masks(seed, build, prune):
    ft.manual_seed(seed)
    m = build(ft)
    prune(ft, m)
    return _np(m.weight_mask)


@pytest.mark.parametrize("amount", [0.3, 17, 0])
def test_random_unstructured_count_and_reproducibility(amount):
    def prune(lib, m):
        P[lib].random_unstructured(m, "weight", amount=amount)
        P[lib].random_unstructured(m, "weight", amount=0.5)  # half of what is left
    torch.manual_seed(0)
    mt = _conv(torch)
    prune(torch, mt)
    a, b, c = (_random_masks(s, _conv, prune) for s in (1, 1, 2))
    assert set(np.unique(a)) <= {0.0, 1.0} and a.dtype == np.float32
    assert (a == 0).sum() == int((mt.weight_mask == 0).sum()) == {0.3: 105, 17: 89, 0: 81}[amount]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("dim", [0, -1])
def test_random_structured_prunes_whole_channels(dim):
    def prune(lib, m):
        P[lib].random_structured(m, "weight", amount=0.34, dim=dim)
        P[lib].random_structured(m, "weight", amount=1, dim=dim)
    torch.manual_seed(0)
    mt = _conv(torch)
    prune(torch, mt)
    masks = [_random_masks(s, _conv, prune) for s in (5, 5, 6, 7)]
    chans, t_chans = (np.moveaxis(m, dim, 0).reshape(m.shape[dim], -1) for m in (masks[0], _np(mt.weight_mask)))
    assert all(len(set(row)) == 1 for row in chans)  # every channel all kept or all pruned
    assert (chans[:, 0] == 0).sum() == (t_chans[:, 0] == 0).sum() == {6: 3, 3: 2}[chans.shape[0]]
    np.testing.assert_array_equal(masks[0], masks[1])
    assert not all(np.array_equal(masks[0], m) for m in masks[2:])


def test_random_after_l1_keeps_earlier_masks():
    """Random structured / unstructured pruning on top of an L1 mask: the earlier zeros stay, the structured step
    zeroes exactly ``amount`` more whole channels among the live ones, the unstructured step prunes
    round(0.25 * live entries) more entries (PyTorch's count); the hooks are torch's."""
    mt, mf = _pair(_conv)
    ft.manual_seed(3)
    masks = []
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].l1_unstructured(m, "weight", amount=40)
        masks.append(_np(m.weight_mask))
        P[lib].ln_structured(m, "weight", amount=1, n=1, dim=0)
        P[lib].random_structured(m, "weight", amount=2, dim=0)
        masks.append(_np(m.weight_mask))
        P[lib].random_unstructured(m, "weight", amount=0.25)
        masks.append(_np(m.weight_mask))
    l1, structured, final = masks[3:]
    np.testing.assert_array_equal(l1, masks[0])
    assert np.all(structured[l1 == 0] == 0) and np.all(final[structured == 0] == 0)
    dead = structured.reshape(6, -1).sum(1) == 0
    assert dead.sum() == 3 and np.all(structured[~dead] == l1[~dead])
    live = int(structured.sum())
    assert int(final.sum()) == live - round(0.25 * live)
    assert _hooks(mf) == _hooks(mt)


# ---- remove / is_pruned --------------------------------------------------------------------------------------
def test_remove_makes_pruning_permanent():
    mt, mf = _pair(_lin)
    for lib, m in ((torch, mt), (ft, mf)):
        assert P[lib].is_pruned(m) is False
        P[lib].l1_unstructured(m, "weight", amount=0.5)
        P[lib].ln_structured(m, "weight", amount=1, n=1, dim=1)
        P[lib].random_unstructured(m, "bias", amount=0)
        assert P[lib].is_pruned(lib.nn.Sequential(lib.nn.ReLU(), m)) is True
        orig = m.weight_orig
        assert P[lib].remove(m, "weight") is m
        assert m.weight is orig and type(m.weight) is lib.nn.Parameter and m.weight.requires_grad
        assert P[lib].is_pruned(m) is True  # the bias still is
        P[lib].remove(m, "bias")
        assert P[lib].is_pruned(m) is False and not m._forward_pre_hooks
    _assert_same_module(mt, mf, pruned=())
    assert [n for n, _ in mf.named_parameters()] == ["weight", "bias"]
    assert int((mf.weight == 0).sum()) == int((mt.weight == 0).sum()) >= 10
    _forward_backward(mt, mf)


def test_pruning_method_prune_and_container_api():
    t = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    s = np.abs(t[::-1].copy())
    dm = np.ones((4, 6), np.float32)
    dm[1] = 0
    for fn in (lambda lib: P[lib].L1Unstructured(amount=5).prune(lib.tensor(t)),
               lambda lib: P[lib].L1Unstructured(amount=0.5).prune(lib.tensor(t), importance_scores=lib.tensor(s)),
               lambda lib: P[lib].LnStructured(2, n=1, dim=1).prune(lib.tensor(t), default_mask=lib.tensor(dm)),
               lambda lib: P[lib].CustomFromMask(lib.tensor(dm)).prune(lib.tensor(t)),
               lambda lib: P[lib].Identity().prune(lib.tensor(t)),
               lambda lib: P[lib].L1Unstructured(amount=1).prune(lib.tensor(t), importance_scores=lib.tensor(s[0])),
               lambda lib: P[lib].L1Unstructured(amount=25).prune(lib.tensor(t))):
        assert_same_outcome(fn, torch, ft)

    def container(lib):
        a, b = P[lib].L1Unstructured(3), P[lib].LnStructured(1, 2, dim=0)
        a._tensor_name = b._tensor_name = "w"
        c = P[lib].PruningContainer(a)
        c.add_pruning_method(b)
        c.add_pruning_method(None)
        return (len(c), c[0] is a, c[1] is b, c[2], [type(x).__name__ for x in c], c._tensor_name,
                c.PRUNING_TYPE if hasattr(c, "PRUNING_TYPE") else "-")
    assert_same_outcome(container, torch, ft)
    assert issubclass(P[ft].PruningContainer, P[ft].BasePruningMethod)
    for name in ("Identity", "RandomUnstructured", "L1Unstructured", "RandomStructured", "LnStructured",
                 "CustomFromMask"):
        assert getattr(P[ft], name).PRUNING_TYPE == getattr(P[torch], name).PRUNING_TYPE


def test_state_dict_round_trip_from_torch():
    mt, mf = _pair(_lin)
    P[torch].l1_unstructured(mt, "weight", amount=0.5)
    fresh = P[ft].identity(_lin(ft), "weight")  # a pruned facade module takes torch's pruned state_dict
    fresh.load_state_dict({k: ft.tensor(_np(v)) for k, v in mt.state_dict().items()})
    np.testing.assert_array_equal(_np(fresh.weight_mask), _np(mt.weight_mask))
    np.testing.assert_allclose(_np(fresh(ft.tensor(X))), _np(mt(torch.tensor(X))), rtol=1e-6, atol=1e-6)


# ---- errors --------------------------------------------------------------------------------------------------
def _prune_call(call):
    def fn(lib):
        torch.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        return call(P[lib], m, lib)
    return fn


@pytest.mark.parametrize("call", [
    lambda p, m, lib: p.l1_unstructured(m[0], "weight", amount=-1),
    lambda p, m, lib: p.l1_unstructured(m[0], "weight", amount=1.5),
    lambda p, m, lib: p.random_unstructured(m[0], "weight", amount=-0.1),
    lambda p, m, lib: p.ln_structured(m[0], "weight", amount="0.3", n=2, dim=0),
    lambda p, m, lib: p.random_structured(m[0], "weight", amount=None, dim=0),
    lambda p, m, lib: p.l1_unstructured(m[0], "weight", amount=13),
    lambda p, m, lib: p.ln_structured(m[0], "weight", amount=5, n=2, dim=0),
    lambda p, m, lib: p.l1_unstructured(m[0], "foo", amount=1),
    lambda p, m, lib: p.l1_unstructured(m[1], "running_mean", amount=1),
    lambda p, m, lib: p.remove(m[0], "weight"),
    lambda p, m, lib: p.remove(p.l1_unstructured(m[0], "bias", 1), "weight"),
    lambda p, m, lib: p.random_structured(m[0], "bias", amount=1, dim=0),
    lambda p, m, lib: p.ln_structured(m[0], "bias", amount=1, n=1, dim=0),
    lambda p, m, lib: p.ln_structured(m[0], "weight", amount=1, n=1, dim=2),
    lambda p, m, lib: p.random_structured(m[0], "weight", amount=1, dim=5),
    lambda p, m, lib: p.ln_structured(m[0], "weight", amount=1, n=1, dim=-3),
    lambda p, m, lib: p.random_structured(m[0], "weight", amount=1, dim=-3),
    lambda p, m, lib: p.ln_structured(m[0], "weight", amount=1, n="nuc", dim=0),
    lambda p, m, lib: p.ln_structured(lib.nn.Conv2d(1, 2, 2), "weight", amount=1, n="fro", dim=0),
    lambda p, m, lib: p.l1_unstructured(m[0], "weight", 1, importance_scores=lib.ones(4)),
    lambda p, m, lib: p.custom_from_mask(m[0], "bias", mask=lib.tensor([1, 0])),
    lambda p, m, lib: p.global_unstructured(5, p.L1Unstructured, amount=1),
    lambda p, m, lib: p.global_unstructured([(m[0], "weight")], p.L1Unstructured, importance_scores=[], amount=1),
    lambda p, m, lib: p.global_unstructured([(m[0], "weight")], p.L1Unstructured, amount=13),
    lambda p, m, lib: p.PruningContainer(p.Identity(), p.Identity()),
    lambda p, m, lib: p.PruningContainer(p.l1_unstructured(m[0], "bias", 1)._forward_pre_hooks[
        list(m[0]._forward_pre_hooks)[0]]).add_pruning_method(5),
    lambda p, m, lib: p.BasePruningMethod(),
    lambda p, m, lib: p.Identity().apply_mask(m[0]),
    lambda p, m, lib: (p.l1_unstructured(m[0], "weight", 1), p.remove(m[0], "weight"), p.remove(m[0], "weight")),
    lambda p, m, lib: p.l1_unstructured(lib.nn.Linear(3, 4, bias=False), "bias", 1),  # ones_like(None)
    lambda p, m, lib: p.global_unstructured([], p.L1Unstructured, amount=1),  # cat([]): ValueError
    lambda p, m, lib: p.global_unstructured(iter([(m[0], "weight")]), p.L1Unstructured, amount=1),  # consumed
])
def test_errors_match_torch(call):
    fn = _prune_call(call)
    (_, t_err), (f_out, f_err) = run(fn, torch), run(fn, ft)
    assert t_err is not None, "every case here is an error in torch"
    assert_same_error(t_err, f_err, f_out)


def _same_error_modulo_names(fn):
    """The same exception type and message once object addresses and the two libraries' module paths agree."""
    import re
    msgs = []
    for lib in (torch, ft):
        out, err = run(fn, lib)
        assert err is not None, (lib.__name__, out)
        msg = re.sub(r" at 0x[0-9a-f]+", "", str(err)).replace("functorch_lite.nn.utils.prune", "torch.nn.utils.prune")
        msgs.append((type(err), msg))
    assert msgs[0] == msgs[1], msgs


def test_errors_naming_classes_and_objects():
    _same_error_modulo_names(lambda lib: P[lib].global_unstructured(
        [(lib.nn.Linear(2, 2), "weight")], P[lib].LnStructured, amount=1, n=2, dim=0))

    def wrong_tensor(lib):
        a, b = P[lib].Identity(), P[lib].Identity()
        a._tensor_name, b._tensor_name = "weight", "bias"
        P[lib].PruningContainer(a).add_pruning_method(b)
    _same_error_modulo_names(wrong_tensor)

    def not_a_method(lib):
        a = P[lib].Identity()
        a._tensor_name = "weight"
        P[lib].PruningContainer(a).add_pruning_method(P[lib].identity)
    _same_error_modulo_names(not_a_method)


def test_container_rejects_bad_custom_methods():
    def custom(lib, kind, with_dim):
        class Half(P[lib].BasePruningMethod):
            PRUNING_TYPE = kind

            def compute_mask(self, t, default_mask):
                return default_mask * 0.5
        if with_dim:
            Half.dim = -4
        m = P[lib].identity(lib.nn.Linear(3, 4), "weight")
        Half.apply(m, "weight")
        return m.weight_mask
    for kind, with_dim in (("structured", False), ("structured", True), ("weird", False), ("global", False)):
        assert_same_outcome(lambda lib: custom(lib, kind, with_dim), torch, ft)


def test_failed_prune_rolls_back_like_torch():
    """A first prune that fails puts the parameter back (last among the parameters, as PyTorch re-registers it);
    a failed re-prune loses the earlier hook (PyTorch unregisters it before validating), also as PyTorch."""
    mt, mf = _pair(_lin)
    for lib, m in ((torch, mt), (ft, mf)):
        with pytest.raises(ValueError):
            P[lib].l1_unstructured(m, "weight", amount=30)
    _assert_same_module(mt, mf, pruned=())
    assert [n for n, _ in mf.named_parameters()] == ["bias", "weight"]
    for lib, m in ((torch, mt), (ft, mf)):
        P[lib].l1_unstructured(m, "weight", amount=3)
        with pytest.raises(ValueError):
            P[lib].l1_unstructured(m, "weight", amount=-3)
    _assert_same_module(mt, mf)
    assert P[ft].is_pruned(mf) is False


# ---- compile ---------------------------------------------------------------------------------------------------
def test_pruned_model_trains_compiled_like_eager():
    def build(lib):
        m = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
        P[lib].l1_unstructured(m[0], "weight", amount=0.4)
        P[lib].l1_unstructured(m[2], "weight", amount=7)
        return m
    torch.manual_seed(0)
    mt = build(torch)
    mc, me = build(ft), build(ft)
    for m in (mc, me):
        m.load_state_dict({k: ft.tensor(_np(v)) for k, v in mt.state_dict().items()})

    def step_of(lib, m):
        opt = lib.optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return step
    compiled, eager, ref = ft.compile(step_of(ft, mc)), step_of(ft, me), step_of(torch, mt)
    for _ in range(5):
        lc, le, lt = compiled(ft.tensor(X)), eager(ft.tensor(X)), ref(torch.tensor(X))
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(lc.item(), lt.item(), rtol=1e-5, atol=1e-6)
    assert compiled.stats["eager_calls"] == 0 and compiled.stats["traces"] <= 2
    sd_c, sd_e, sd_t = mc.state_dict(), me.state_dict(), mt.state_dict()
    assert list(sd_c) == list(sd_e) == list(sd_t)
    for k in sd_t:
        np.testing.assert_allclose(_np(sd_c[k]), _np(sd_e[k]), rtol=1e-6, atol=1e-6, err_msg=k)
        np.testing.assert_allclose(_np(sd_c[k]), _np(sd_t[k]), rtol=1e-5, atol=1e-6, err_msg=k)
    for i in (0, 2):  # the masked entries stay zero in the weight the forward uses, and got no gradient
        mask = _np(mc[i].weight_mask)
        assert np.all(_np(mc[i].weight)[mask == 0] == 0) and np.all(_np(mc[i].weight_orig.grad)[mask == 0] == 0)
        np.testing.assert_allclose(_np(mc[i].weight), _np(mt[i].weight), rtol=1e-5, atol=1e-6)
