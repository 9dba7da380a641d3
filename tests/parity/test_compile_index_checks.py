"""Out-of-range indices inside a compiled function raise eager's error, against real torch.

Before, XLA clamped them (an Embedding id 7 of 5 read row 4, a cross-entropy target 9 of 4 classes gave nan, a
one-hot of class 5 of 4 was all zeros) and a compiled training step trained on them, where torch eager raises and
torch.compile's kernels assert. Now the program returns its data-dependent checks' flags (``ops/_deferred``); the
call raises eager's error for the first that failed and writes nothing back: the parameters and optimizer state it
was given (donated) keep their values, and the training goes on from them.
"""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import close


def _err(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = f()
        except Exception as e:  # noqa: BLE001  (the error is the result compared)
            return type(e).__name__, str(e).splitlines()[0]
    return "value", float(r.detach()) if hasattr(r, "detach") else r


def _cases(T):
    T.manual_seed(0)
    emb = T.nn.Embedding(5, 3)
    lin = T.nn.Linear(3, 4)
    F = T.nn.functional
    x = T.ones(2, 3)
    return {
        "embedding": (lambda i: emb(i).sum(), T.tensor([1, 7])),
        "embedding_negative": (lambda i: emb(i).sum(), T.tensor([-1, 2])),
        "cross_entropy": (lambda t: F.cross_entropy(lin(x), t), T.tensor([1, 9])),
        "nll_loss": (lambda t: F.nll_loss(lin(x).log_softmax(1), t), T.tensor([-3, 1])),
        "nll_ignore_index_ok": (lambda t: F.nll_loss(lin(x).log_softmax(1), t, ignore_index=-3), T.tensor([-3, 1])),
        "gather": (lambda i: lin(x).gather(1, i).sum(), T.tensor([[0], [6]])),
        "one_hot": (lambda i: F.one_hot(i, 4).float().sum(), T.tensor([0, 5])),
        "index": (lambda i: lin(x)[i].sum(), T.tensor([0, 3])),
        "index_2d": (lambda i: lin(x)[i, i].sum(), T.tensor([0, 1, 1])),
        "index_select": (lambda i: lin(x).index_select(0, i).sum(), T.tensor([2])),
        "scatter": (lambda i: T.zeros(2, 3).scatter(1, i, 1.0).sum(), T.tensor([[5], [0]])),
        "index_put": (lambda i: T.zeros(3).index_put_((i,), T.tensor(1.0)).sum(), T.tensor([1, 4])),
        "multi_margin": (lambda t: F.multi_margin_loss(lin(x), t), T.tensor([1, 4])),
        "max_unpool1d": (lambda i: F.max_unpool1d(T.ones(1, 1, 2), i.reshape(1, 1, 2), 2, output_size=[4]).sum(),
                         T.tensor([0, 4])),
        "max_unpool2d": (lambda i: F.max_unpool2d(T.ones(1, 1, 1, 2), i.reshape(1, 1, 1, 2), 2).sum(),
                         T.tensor([0, 9])),
        "embedding_bag_offsets_first": (lambda o: F.embedding_bag(T.tensor([0, 1, 2]), emb.weight, o,
                                                                  mode="sum").sum(), T.tensor([1, 2])),
        "embedding_bag_offsets_last": (lambda o: F.embedding_bag(T.tensor([0, 1, 2]), emb.weight, o,
                                                                 mode="sum").sum(), T.tensor([0, 4])),
        "embedding_bag_offsets_decreasing": (lambda o: F.embedding_bag(T.tensor([0, 1, 2]), emb.weight, o,
                                                                       mode="sum").sum(), T.tensor([0, 2, 1])),
        "searchsorted_sorter": (lambda s: T.searchsorted(T.tensor([3., 1., 2.]), T.tensor([1.5]), sorter=s).sum(),
                                T.tensor([1, 2, 3])),
        "quantile_q": (lambda q: T.quantile(T.tensor([1., 2., 3.]), q).sum(), T.tensor([0.5, 1.5])),
        "index_add_1d": (lambda i: T.zeros(3).index_add_(0, i, T.ones(1)).sum(), T.tensor([5])),
        "index_add_2d": (lambda i: T.zeros(3, 2).index_add_(0, i, T.ones(1, 2)).sum(), T.tensor([-1])),
        "one_hot_negative_after_large": (lambda i: F.one_hot(i, 4).float().sum(), T.tensor([5, -1])),
        "inside_func_grad": (lambda i: T.func.grad(lambda w: (w[i] ** 2).sum())(T.arange(10.)).sum(),
                             T.tensor([1, 12])),
        "unbatched_inside_vmap": (lambda i: T.func.vmap(lambda row: row[i].sum())(T.ones(3, 5)).sum(),
                                  T.tensor([1, 12])),
    }


@pytest.mark.parametrize("name", list(_cases(torch)))
def test_out_of_range_raises_as_eager(name):
    """Each op with an index out of range (and one in range: an ignore_index target) inside a compiled function:
    the error torch eager raises, with its message and the offending value, where the compiled program ran."""
    fn, bad = _cases(torch)[name]
    want = _err(lambda: fn(bad))
    ffn, fbad = _cases(ft)[name]
    compiled = ft.compile(ffn)
    got = _err(lambda: compiled(fbad))
    assert got[0] == want[0], (got, want)
    if want[0] == "value":  # (the two libraries' random weights differ: the facade's eager value)
        assert close(got[1], _err(lambda: ffn(fbad))[1])
    else:
        assert got[1] == want[1]
    assert compiled.stats["traces"] == 1  # (the program ran: no graph break, no eager fallback)


def test_embedding_bag_as_facade_eager():
    """embedding_bag's max mode: the compiled call raises what the facade's eager call does."""
    emb = ft.nn.Embedding(5, 3)

    def f(i):
        return ft.nn.functional.embedding_bag(i, emb.weight, ft.tensor([0, 1]), mode="max").sum()
    want = _err(lambda: f(ft.tensor([1, 5])))
    assert want == ("RuntimeError", "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 5")
    assert _err(lambda: ft.compile(f)(ft.tensor([1, 5]))) == want


def _same_init(T, *mods):
    """The same weights in both libraries (their random streams differ)."""
    rng = np.random.default_rng(0)
    with T.no_grad():
        for m in mods:
            for p in m.parameters():
                p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))


def _train(T, compile_):
    emb = T.nn.Embedding(5, 3)
    head = T.nn.Linear(3, 4)
    _same_init(T, emb, head)
    opt = T.optim.AdamW(list(emb.parameters()) + list(head.parameters()), lr=0.05)

    def step(tokens, labels):
        opt.zero_grad()
        loss = T.nn.functional.cross_entropy(head(emb(tokens).mean(1)), labels)
        loss.backward()
        opt.step()
        return loss.detach()
    return compile_(step), [emb.weight, head.weight, head.bias], opt


def _state(T, params, opt):
    out = [p.detach().numpy().copy() for p in params]
    for p in params:
        st = opt.state.get(p, {})
        out += [st[k].detach().numpy().copy() for k in ("exp_avg", "exp_avg_sq") if k in st]
    return out


@pytest.mark.parametrize("bad_first", [False, True])
def test_training_step_raises_and_changes_nothing(bad_first):
    """A compiled AdamW step fed a token id past the vocabulary, or a label past the classes (after three steps:
    the steady, donating program; or as its first call): IndexError as torch eager's; the parameters and AdamW's
    moments are the ones before the call (the donated buffers too: still readable), and the steps after it give
    torch's values."""
    good = [([[0, 1], [2, 3]], [0, 3]), ([[4, 1], [0, 0]], [1, 2]), ([[3, 3], [1, 2]], [2, 0])]
    bad = [([[0, 7], [2, 3]], [0, 3]), ([[0, 1], [2, 3]], [0, 9])]
    runs = {}
    for T, comp in ((torch, lambda f: f), (ft, ft.compile)):
        step, params, opt = _train(T, comp)
        log = []
        seq = (bad + good + good) if bad_first else (good + bad + good)
        for k, (tok, lab) in enumerate(seq):
            before = _state(T, params, opt)
            try:
                log.append(float(step(T.tensor(tok), T.tensor(lab))))
            except IndexError as e:
                log.append(str(e))
                after = _state(T, params, opt)
                assert len(after) == len(before) and all(np.array_equal(a, b) for a, b in zip(after, before)), k
                assert all(p.grad is None for p in params)  # (zero_grad() ran before the forward raised)
        runs[T] = (log, _state(T, params, opt))
    (tlog, tstate), (flog, fstate) = runs[torch], runs[ft]
    assert [x for x in flog if isinstance(x, str)] == [x for x in tlog if isinstance(x, str)] == \
        ["index out of range in self", "Target 9 is out of bounds."]
    assert close([x for x in flog if not isinstance(x, str)], [x for x in tlog if not isinstance(x, str)])
    assert len(fstate) == len(tstate)
    for a, b in zip(fstate, tstate):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_compiled_module_forward_with_grad():
    """``compile(model)`` called with grad enabled (the program that saves its backward's residuals): a bad id
    raises as eager; good ids then train as eager."""
    res = {}
    for T, comp in ((torch, lambda m: m), (ft, ft.compile)):
        model = T.nn.Sequential(T.nn.Embedding(6, 4), T.nn.Linear(4, 2))
        _same_init(T, model)
        cm = comp(model)
        errs = []
        for ids in ([1, 2, 3], [1, 6, 0], [5, 0, 4]):
            try:
                cm(T.tensor(ids)).sum().backward()
            except IndexError as e:
                errs.append(str(e))
        res[T] = errs, model[0].weight.grad.numpy(), model[1].weight.grad.numpy()
    assert res[ft][0] == res[torch][0] == ["index out of range in self"]
    np.testing.assert_allclose(res[ft][1], res[torch][1], rtol=1e-6)
    np.testing.assert_allclose(res[ft][2], res[torch][2], rtol=1e-6)


def test_step_outside_after_a_failed_call():
    """``zero_grad(); backward()`` compiled, ``opt.step()`` outside: after the call that raised, the .grad fields
    are None as eager's (its zero_grad() ran before the forward raised), so the step outside moves nothing (it
    applied the previous batch's gradients again)."""
    res = {}
    for T, comp in ((torch, lambda f: f), (ft, ft.compile)):
        emb, lin = T.nn.Embedding(5, 3), T.nn.Linear(3, 2)
        _same_init(T, emb, lin)
        opt = T.optim.SGD(list(emb.parameters()) + list(lin.parameters()), lr=0.1)

        def fwd_bwd(i):
            opt.zero_grad()
            lin(emb(i)).sum().backward()
        c = comp(fwd_bwd)
        log = []
        for v in ([1, 2], [1, 2], [1, 2], [1, 7]):
            try:
                c(T.tensor(v))
            except IndexError as e:
                log.append(str(e))
            log.append(None if lin.weight.grad is None else lin.weight.grad.sum().item())
            opt.step()
        res[T] = log, lin.weight.detach().numpy()
    assert close(res[ft][0], res[torch][0]) and res[ft][0][-2:] == ["index out of range in self", None]
    np.testing.assert_allclose(res[ft][1], res[torch][1], rtol=1e-6)


def test_knob_off_no_check():
    """``torch._inductor.config.assert_indirect_indexing = False`` switches the program's checks off, as it does
    torch.compile's asserts: the program returns what XLA computes (a clamped read), with no host read."""
    ft.manual_seed(0)
    emb = ft.nn.Embedding(5, 3)
    with ft._inductor.config.patch(assert_indirect_indexing=False):
        f = ft.compile(lambda i: emb(i).sum())
        r = f(ft.tensor([1, 7]))
    assert close(float(r.detach()), float(emb.weight.detach()[[1, 4]].sum()))
    g = ft.compile(lambda i: emb(i).sum())
    with pytest.raises(IndexError, match="index out of range in self"):
        g(ft.tensor([1, 7]))


def test_check_inside_checkpoint_and_vmap_does_not_leak():
    """A checked op under an inner transformation inside a compiled function (a checkpointed body, a vmapped
    function): its tracers cannot leave it, so the check is not collected there (as outside compiled code), and
    in-range calls give eager's values."""
    from functorch_lite.utils.checkpoint import checkpoint
    ft.manual_seed(0)
    emb = ft.nn.Embedding(5, 3)

    def f(i):
        a = checkpoint(lambda j: emb(j).sum(), i, use_reentrant=False)
        b = ft.func.vmap(lambda j: emb.weight.index_select(0, j).sum())(i.reshape(2, 1))
        return a + b.sum()
    cf = ft.compile(f)
    i = ft.tensor([1, 3])
    assert close(float(cf(i)), float(f(i)))
    assert close(float(cf(ft.tensor([0, 4]))), float(f(ft.tensor([0, 4]))))


@pytest.mark.parametrize("pad", [None, 1])
@pytest.mark.parametrize("mode,ids", [("sum", [0, 7]), ("mean", [0, -2]), ("sum", [0, 9, 8]), ("max", [0, 9])])
def test_embedding_bag_out_of_range_message_is_torchs(mode, ids, pad):
    """torch's sum / mean kernels name the id's position ("Index 1 of input takes value 7 ..."), its max kernel
    and any with a padding_idx do not (the facade gave the latter message everywhere); compiled, the same."""
    def run(L, compiled=False):
        w = L.zeros(6, 4)

        def f(i):
            return L.nn.functional.embedding_bag(i, w, L.tensor([0]), mode=mode, padding_idx=pad)
        return _err(lambda: (ft.compile(f) if compiled else f)(L.tensor(ids)))
    want = run(torch)
    assert want[0] == "RuntimeError" and run(ft) == want and run(ft, True) == want


@pytest.mark.parametrize("shape", [(2, 2), (1, 2, 2), (2, 1, 2, 2)])
@pytest.mark.parametrize("dt", ["int64", "int32", "bool"])
def test_sdpa_of_non_float_inputs_gives_torchs_message(dt, shape):
    """(torch's math path: its mm of 2-D inputs names both dtypes, its bmm only the integer one)"""
    def run(L):
        t = L.ones(*shape, dtype=getattr(L, dt))
        return _err(lambda: L.nn.functional.scaled_dot_product_attention(t, t, t))
    assert run(ft) == run(torch) and run(ft)[0] == "RuntimeError"


@pytest.mark.parametrize("shape,dim,ids", [((1, 2, 4), 1, [0, 2, 1]), ((2, 3), 1, [-1]), ((2, 3), 0, [5]),
                                           ((2, 2, 4), 2, [5])])
def test_index_select_out_of_range_error_is_torchs(shape, dim, ids):
    """torch's index_select raises a RuntimeError naming the id and the size along dim 1 (its dim-1 kernel), an
    IndexError along any other (the facade raised the IndexError along every dim; a packed RNN's hx of the wrong
    batch size met it); compiled, the same."""
    def run(L, compiled=False):
        x = L.zeros(*shape)

        def f(i):
            return x.index_select(dim, i)
        return _err(lambda: (ft.compile(f) if compiled else f)(L.tensor(ids)))
    want = run(torch)
    assert run(ft) == want and run(ft, True) == want
