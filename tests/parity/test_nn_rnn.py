"""nn.RNN / nn.LSTM / nn.GRU, the cells and nn.utils.rnn against real PyTorch 2.13 (CPU): outputs, final
states, input/state/parameter gradients, grad_fn names, state_dict keys, packed sequences, errors, dropout,
one dispatch per forward, and a compiled LSTM training step equal to eager."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite._stats import COUNTS

from _parity import run, assert_same_error

RNG = np.random.default_rng(7)
TU = torch.nn.utils.rnn
FU = ft.nn.utils.rnn


def rnd(*s):
    return RNG.standard_normal(s)


def _np(t):
    return t.detach().numpy()


def _close(ours, theirs, tol):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=tol, atol=tol)


def _pair(cls, *args, **kwargs):
    """The same module in torch and here, our parameters copied from torch's state_dict."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = getattr(torch.nn, cls)(*args, **kwargs)
        fm = getattr(ft.nn, cls)(*args, **kwargs)
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    res = fm.load_state_dict({k: ft.tensor(_np(v)) for k, v in tm.state_dict().items()})
    assert not res.missing_keys and not res.unexpected_keys
    return tm, fm


def _leaf(mod, a, dtype):
    return mod.tensor(a, dtype=getattr(mod, dtype), requires_grad=True)


def _states(h, lstm):
    return list(h) if lstm else [h]


def _compare_grads(tm, fm, tleaves, fleaves, tol):
    for a, b in zip(fleaves, tleaves):
        _close(a.grad, b.grad, tol)
    for (n, p), (_, q) in zip(tm.named_parameters(), fm.named_parameters()):
        assert q.grad is not None, n
        _close(q.grad, p.grad, tol)


# ---- whole stacks: outputs, states, gradients, grad_fn ------------------------------------------------------------
STACKS = {
    # name: (class, ctor kwargs, input shape, hx given, dtype)
    "rnn_tanh_unbatched_hx": ("RNN", dict(), (5, 4), True, "float32"),
    "rnn_relu_2l_bi_bf": ("RNN", dict(nonlinearity="relu", num_layers=2, bidirectional=True, batch_first=True),
                          (3, 5, 4), False, "float32"),
    "lstm_2l_bi_hx": ("LSTM", dict(num_layers=2, bidirectional=True), (5, 3, 4), True, "float32"),
    "lstm_proj_2l_bf_hx": ("LSTM", dict(num_layers=2, proj_size=3, batch_first=True), (2, 5, 4), True, "float32"),
    "lstm_f64_bf_nobias": ("LSTM", dict(batch_first=True, bias=False), (3, 4, 4), False, "float64"),
    "lstm_unbatched_bf_bi": ("LSTM", dict(batch_first=True, bidirectional=True), (6, 4), False, "float32"),
    "gru_2l_bi_bf_hx": ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True), (3, 5, 4), True,
                        "float32"),
}


@pytest.mark.parametrize("name", list(STACKS))
def test_stack_outputs_states_and_gradients(name):
    cls, kw, shape, with_hx, dtype = STACKS[name]
    tm, fm = _pair(cls, 4, 6, **kw)
    if dtype == "float64":
        tm, fm = tm.double(), fm.double()
    lstm = cls == "LSTM"
    nd = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    batched = len(shape) == 3
    B = (shape[0] if kw.get("batch_first") else shape[1]) if batched else None
    hsz = kw.get("proj_size", 0) or 6
    hshapes = [(nd, B, hsz), (nd, B, 6)][:2 if lstm else 1]
    if not batched:
        hshapes = [(s[0], s[2]) for s in hshapes]
    x = rnd(*shape)
    hs = [rnd(*s) for s in hshapes] if with_hx else []
    outs = []
    for mod, m in ((torch, tm), (ft, fm)):
        leaves = [_leaf(mod, a, dtype) for a in [x] + hs]
        hx = None if not with_hx else (tuple(leaves[1:]) if lstm else leaves[1])
        out, h = m(leaves[0], hx)
        states = _states(h, lstm)
        loss = (out * mod.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)).sum()
        for i, s in enumerate(states):
            loss = loss + (s * s).sum() * (i + 1)
        loss.backward()
        outs.append((out, states, leaves))
    (to, ts, tl), (fo, fs, fl) = outs
    tol = 1e-10 if dtype == "float64" else 2e-5
    _close(fo, to, tol)
    assert fo.is_contiguous() == to.is_contiguous()
    assert len(fs) == len(ts)
    for a, b in zip(fs, ts):
        _close(a, b, tol)
    _compare_grads(tm, fm, tl, fl, tol)
    want = type(to.grad_fn).__name__
    assert type(fo.grad_fn).__name__ == want


def test_stack_forward_is_one_dispatch_and_backward_one_node():
    m = ft.nn.LSTM(4, 6, num_layers=2, bidirectional=True)
    x = ft.tensor(rnd(5, 3, 4), dtype=ft.float32, requires_grad=True)
    m(x)
    before = COUNTS["calls"]
    out, (h, c) = m(x)
    assert COUNTS["calls"] - before == 1
    assert out.grad_fn is h.grad_fn is c.grad_fn
    assert len(out.grad_fn.next_functions) == 1 + len(list(m.parameters()))


# ---- packed sequences through the modules -------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kw,sorted_,with_hx", [
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True), False, True),
    ("GRU", dict(bidirectional=True), True, False),
    ("RNN", dict(), False, False),
])
def test_packed_sequence_through_module(cls, kw, sorted_, with_hx):
    lstm = cls == "LSTM"
    bf = kw.get("batch_first", False)
    tm, fm = _pair(cls, 3, 4, **kw)
    lens = [6, 4, 4, 1] if sorted_ else [3, 6, 1, 4]
    T, B = 6, len(lens)
    x = rnd(*((B, T, 3) if bf else (T, B, 3)))
    nd = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    hs = [rnd(nd, B, kw.get("proj_size", 0) or 4), rnd(nd, B, 4)][:2 if lstm else 1] if with_hx else []
    res = []
    for mod, m, U in ((torch, tm, TU), (ft, fm, FU)):
        leaves = [_leaf(mod, a, "float32") for a in [x] + hs]
        hx = None if not with_hx else (tuple(leaves[1:]) if lstm else leaves[1])
        packed = U.pack_padded_sequence(leaves[0], mod.tensor(lens), batch_first=bf, enforce_sorted=sorted_)
        out, h = m(packed, hx)
        assert isinstance(out, U.PackedSequence)
        padded, out_lens = U.pad_packed_sequence(out, batch_first=bf, padding_value=0.0, total_length=T + 1)
        states = _states(h, lstm)
        loss = (padded * mod.tensor(np.linspace(-1, 1, padded.numel()).reshape(tuple(padded.shape)),
                                    dtype=padded.dtype)).sum()
        for s in states:
            loss = loss + (s * s).sum()
        loss.backward()
        res.append((packed, out, padded, out_lens, states, leaves))
    (tp, to, tpad, tlen, ts, tl), (fp, fo, fpad, flen, fs, fl) = res
    for a, b in zip(fp, tp):  # data, batch_sizes, sorted_indices, unsorted_indices
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b, 1e-6)
    _close(fo.data, to.data, 2e-5)
    _close(fpad, tpad, 2e-5)
    assert flen.tolist() == tlen.tolist() and str(flen.dtype) == str(tlen.dtype)
    for a, b in zip(fs, ts):
        _close(a, b, 2e-5)
    _compare_grads(tm, fm, tl, fl, 2e-5)


def test_packed_final_state_is_at_each_sequence_own_last_step():
    m = ft.nn.GRU(2, 3, bidirectional=True)
    x = ft.tensor(rnd(5, 3, 2), dtype=ft.float32)
    lens = [2, 5, 2]
    out, h = m(FU.pack_padded_sequence(x, lens, enforce_sorted=False))
    padded, _ = FU.pad_packed_sequence(out)
    for b, n in enumerate(lens):
        o1, h1 = m(x[:n, b])  # the sequence alone, unbatched
        np.testing.assert_allclose(_np(padded[:n, b]), _np(o1), rtol=1e-5, atol=1e-6)
        assert np.all(_np(padded[n:, b]) == 0)
        np.testing.assert_allclose(_np(h[:, b]), _np(h1), rtol=1e-5, atol=1e-6)


# ---- nn.utils.rnn helpers -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True, padding_value=-1.5),
                                dict(batch_first=True, padding_side="left"), dict(padding_side="left")])
def test_pad_sequence_values_and_grads(kw):
    outs = []
    data = [rnd(*s) for s in [(3, 2), (5, 2), (1, 2)]]
    for mod, U in ((torch, TU), (ft, FU)):
        seqs = [_leaf(mod, a, "float32") for a in data]
        y = U.pad_sequence(seqs, **kw)
        (y * mod.tensor(np.arange(y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)).sum().backward()
        outs.append((y, seqs))
    (ty, ts), (fy, fs) = outs
    _close(fy, ty, 0)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__ == "CopySlices"
    for a, b in zip(fs, ts):
        _close(a.grad, b.grad, 0)


def test_pad_sequence_mixed_dtypes_trailing_broadcast_and_tensor_input():
    t = TU.pad_sequence([torch.ones(2, 3), torch.full((3, 1), 2.0, dtype=torch.float64), torch.arange(3)])
    f = FU.pad_sequence([ft.ones(2, 3), ft.full((3, 1), 2.0, dtype=ft.float64), ft.arange(3)])
    _close(f, t, 0)
    t = TU.pad_sequence([torch.ones(2, dtype=torch.int64), torch.ones(3, dtype=torch.int64)], padding_value=7.9)
    f = FU.pad_sequence([ft.ones(2, dtype=ft.int64), ft.ones(3, dtype=ft.int64)], padding_value=7.9)
    _close(f, t, 0)
    a = rnd(2, 3)
    _close(FU.pad_sequence(ft.tensor(a), batch_first=True), TU.pad_sequence(torch.tensor(a), batch_first=True), 0)


def test_pack_sequence_unpack_and_unpad_roundtrip():
    shapes = [(2, 3), (4, 3), (1, 3)]
    data = [rnd(*s) for s in shapes]
    tp = TU.pack_sequence([torch.tensor(d) for d in data], enforce_sorted=False)
    fp = FU.pack_sequence([ft.tensor(d) for d in data], enforce_sorted=False)
    for a, b in zip(fp, tp):
        _close(a, b, 0)
    for a, d in zip(FU.unpack_sequence(fp), data):
        np.testing.assert_array_equal(_np(a), d)
    padded = rnd(5, 3, 2)
    tl = torch.tensor([5, 2, 3])
    tu = TU.unpad_sequence(torch.tensor(padded), tl)
    fu = FU.unpad_sequence(ft.tensor(padded), ft.tensor([5, 2, 3]))
    for a, b in zip(fu, tu):
        _close(a, b, 0)
    x = torch.tensor(padded, requires_grad=True)
    fx = ft.tensor(padded, requires_grad=True)
    assert type(FU.pack_padded_sequence(fx, [5, 3, 1]).data.grad_fn).__name__ == \
        type(TU.pack_padded_sequence(x, [5, 3, 1]).data.grad_fn).__name__ == "PackPaddedSequenceBackward0"
    fo, _ = FU.pad_packed_sequence(FU.pack_padded_sequence(fx, [5, 3, 1]), batch_first=True)
    to, _ = TU.pad_packed_sequence(TU.pack_padded_sequence(x, [5, 3, 1]), batch_first=True)
    assert fo.is_contiguous() == to.is_contiguous() and type(fo.grad_fn).__name__ == type(to.grad_fn).__name__


UTIL_ERRORS = {
    "unsorted_enforced": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(5, 3, 2), [3, 5, 2]),
    "zero_length": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(5, 3, 2), [5, 3, 0]),
    "zero_length_unsorted": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(5, 3, 2), [0, 3, 5],
                                                                          enforce_sorted=False),
    "len_mismatch": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(5, 3, 2), [5, 3]),
    "lengths_2d": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(5, 3, 2), L.tensor([[5, 3, 1]])),
    "empty_input": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(0, 3, 2), [1, 1, 1]),
    "pack_sequence_unsorted": lambda L: L.nn.utils.rnn.pack_sequence([L.ones(2), L.ones(3)]),
    "pad_empty": lambda L: L.nn.utils.rnn.pad_sequence([]),
    "pad_not_iterable": lambda L: L.nn.utils.rnn.pad_sequence(3),
    "pad_side": lambda L: L.nn.utils.rnn.pad_sequence([L.ones(2)], padding_side="middle"),
    "pad_trailing": lambda L: L.nn.utils.rnn.pad_sequence([L.ones(2, 3, 4), L.ones(3, 5, 4)]),
    "pad_extra_dim": lambda L: L.nn.utils.rnn.pad_sequence([L.ones(2, 3), L.ones(3, 2, 3)]),
    "total_length": lambda L: L.nn.utils.rnn.pad_packed_sequence(
        L.nn.utils.rnn.pack_padded_sequence(L.zeros(5, 3, 2), [5, 3, 1]), total_length=3),
}


@pytest.mark.parametrize("name", list(UTIL_ERRORS))
def test_rnn_utils_errors(name):
    (_, t_err), (f_out, f_err) = run(UTIL_ERRORS[name], torch), run(UTIL_ERRORS[name], ft)
    assert t_err is not None
    assert_same_error(t_err, f_err, f_out)


def test_pack_lengths_beyond_the_input_raise():
    with pytest.raises(RuntimeError, match="larger than the padded sequence length"):
        FU.pack_padded_sequence(ft.zeros(5, 3, 2), [6, 3, 1])


# ---- cells --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kw,batched,with_hx", [
    ("RNNCell", dict(), True, True), ("RNNCell", dict(nonlinearity="relu", bias=False), False, True),
    ("LSTMCell", dict(), True, True), ("LSTMCell", dict(), False, False),
    ("GRUCell", dict(), True, False), ("GRUCell", dict(bias=False), False, True),
])
def test_cells(cls, kw, batched, with_hx):
    tm, fm = _pair(cls, 3, 5, **kw)
    lstm = cls == "LSTMCell"
    x = rnd(4, 3) if batched else rnd(3)
    hs = [rnd(*((4, 5) if batched else (5,))) for _ in range(2 if lstm else 1)] if with_hx else []
    res = []
    for mod, m in ((torch, tm), (ft, fm)):
        leaves = [_leaf(mod, a, "float32") for a in [x] + hs]
        hx = None if not with_hx else (tuple(leaves[1:]) if lstm else leaves[1])
        r = m(leaves[0], hx)
        outs = list(r) if lstm else [r]
        loss = sum((o * o).sum() * (i + 2) for i, o in enumerate(outs))
        loss.backward()
        res.append((outs, leaves))
    (to, tl), (fo, fl) = res
    for a, b in zip(fo, to):
        _close(a, b, 2e-5)
    assert type(fo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__
    _compare_grads(tm, fm, tl, fl, 2e-5)


# ---- construction, state_dict, repr, init, errors ------------------------------------------------------------------
def test_construction_state_dict_repr_and_init():
    for cls, args, kw in (("LSTM", (3, 4), dict(num_layers=2, bidirectional=True, proj_size=2)),
                          ("GRU", (3, 4, 2), dict(bias=False, batch_first=True, dropout=0.2, bidirectional=True)),
                          ("RNN", (3, 4, 2, "relu"), dict()), ("LSTMCell", (3, 4), dict(bias=False)),
                          ("RNNCell", (3, 4), dict(nonlinearity="relu")), ("GRUCell", (3, 4), dict())):
        tm, fm = _pair(cls, *args, **kw)
        assert repr(fm) == repr(tm)
        for (n, p), (_, q) in zip(tm.named_parameters(), fm.named_parameters()):
            assert tuple(q.shape) == tuple(p.shape) and str(q.dtype) == str(p.dtype), n
    fm = ft.nn.LSTM(3, 16, num_layers=2)
    for p in fm.parameters():
        assert float(p.abs().max()) <= 0.25 and float(p.std()) > 0.05  # U(-1/sqrt(16), 1/sqrt(16))
    assert [len(ws) for ws in fm.all_weights] == [4, 4]
    fm.flatten_parameters()


def _module_error(ctor, call=None):
    def fn(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = ctor(L)
        return m if call is None else call(L, m)
    return fn


MODULE_ERRORS = {
    "bad_nonlinearity": _module_error(lambda L: L.nn.RNN(3, 4, nonlinearity="foo")),
    "gru_proj": _module_error(lambda L: L.nn.GRU(3, 4, proj_size=2)),
    "proj_too_big": _module_error(lambda L: L.nn.LSTM(3, 4, proj_size=4)),
    "dropout_range": _module_error(lambda L: L.nn.LSTM(3, 4, dropout=1.5)),
    "hidden_zero": _module_error(lambda L: L.nn.GRU(3, 0)),
    "input_4d": _module_error(lambda L: L.nn.LSTM(3, 4), lambda L, m: m(L.zeros(1, 2, 3, 3))),
    "rnn_input_1d": _module_error(lambda L: L.nn.RNN(3, 4), lambda L, m: m(L.zeros(3))),
    "input_size": _module_error(lambda L: L.nn.GRU(3, 4), lambda L, m: m(L.zeros(5, 2, 4))),
    "input_dtype": _module_error(lambda L: L.nn.GRU(3, 4), lambda L, m: m(L.zeros(5, 2, 3, dtype=L.float64))),
    "input_int": _module_error(lambda L: L.nn.LSTM(3, 4), lambda L, m: m(L.zeros(5, 2, 3, dtype=L.int64))),
    "hx_shape": _module_error(lambda L: L.nn.GRU(3, 4), lambda L, m: m(L.zeros(5, 2, 3), L.zeros(2, 2, 4))),
    "hx_2d": _module_error(lambda L: L.nn.GRU(3, 4), lambda L, m: m(L.zeros(5, 2, 3), L.zeros(2, 4))),
    "hx_unbatched_3d": _module_error(lambda L: L.nn.RNN(3, 4), lambda L, m: m(L.zeros(5, 3), L.zeros(1, 1, 4))),
    "lstm_cx_shape": _module_error(lambda L: L.nn.LSTM(3, 4),
                                   lambda L, m: m(L.zeros(5, 2, 3), (L.zeros(1, 2, 4), L.zeros(1, 2, 5)))),
    "lstm_hx_dims": _module_error(lambda L: L.nn.LSTM(3, 4),
                                  lambda L, m: m(L.zeros(5, 2, 3), (L.zeros(2, 4), L.zeros(1, 2, 4)))),
    "lstm_one_state": _module_error(lambda L: L.nn.LSTM(3, 4), lambda L, m: m(L.zeros(5, 2, 3), (L.zeros(1, 2, 4),))),
    "empty_sequence": _module_error(lambda L: L.nn.GRU(3, 4), lambda L, m: m(L.zeros(0, 2, 3))),
    "gru_hx_dtype": _module_error(lambda L: L.nn.GRU(3, 4),
                                  lambda L, m: m(L.zeros(5, 2, 3), L.zeros(1, 2, 4, dtype=L.float64))),
    "cell_input_size": _module_error(lambda L: L.nn.LSTMCell(3, 4), lambda L, m: m(L.zeros(2, 4))),
    "cell_hx_batch": _module_error(lambda L: L.nn.LSTMCell(3, 4),
                                   lambda L, m: m(L.zeros(2, 3), (L.zeros(2, 4), L.zeros(3, 4)))),
    "cell_hidden_size": _module_error(lambda L: L.nn.GRUCell(3, 4), lambda L, m: m(L.zeros(2, 3), L.zeros(2, 5))),
    "cell_3d": _module_error(lambda L: L.nn.LSTMCell(3, 4), lambda L, m: m(L.zeros(2, 3, 1))),
    "cell_one_state": _module_error(lambda L: L.nn.LSTMCell(3, 4), lambda L, m: m(L.zeros(2, 3), (L.zeros(2, 4),))),
    "cell_dtype": _module_error(lambda L: L.nn.GRUCell(3, 4), lambda L, m: m(L.zeros(2, 3, dtype=L.float64))),
    "cell_bad_nonlinearity": _module_error(lambda L: L.nn.RNNCell(3, 4, nonlinearity="foo"),
                                           lambda L, m: m(L.zeros(2, 3))),
}


@pytest.mark.parametrize("name", list(MODULE_ERRORS))
def test_module_errors(name):
    (_, t_err), (f_out, f_err) = run(MODULE_ERRORS[name], torch), run(MODULE_ERRORS[name], ft)
    assert t_err is not None
    assert_same_error(t_err, f_err, f_out)


def test_zero_batch_and_single_layer_dropout_warning():
    tm, fm = _pair("LSTM", 3, 4)
    to, (th, _) = tm(torch.zeros(5, 0, 3))
    fo, (fh, _) = fm(ft.zeros(5, 0, 3))
    assert tuple(fo.shape) == tuple(to.shape) and tuple(fh.shape) == tuple(th.shape)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ft.nn.GRU(3, 4, dropout=0.5)


# ---- dropout between layers -----------------------------------------------------------------------------------------
def test_dropout_between_layers_train_only_and_seeded():
    tm, fm = _pair("LSTM", 3, 8, num_layers=2, dropout=0.5)
    x = rnd(6, 2, 3)
    tm.eval()
    fm.eval()
    _close(fm(ft.tensor(x, dtype=ft.float32))[0], tm(torch.tensor(x, dtype=torch.float32))[0], 2e-5)
    fm.train()
    fx = ft.tensor(x, dtype=ft.float32, requires_grad=True)
    ft.manual_seed(0)
    a, _ = fm(fx)
    ft.manual_seed(0)
    b, _ = fm(fx)
    c, _ = fm(fx)
    np.testing.assert_array_equal(_np(a), _np(b))
    assert not np.allclose(_np(a), _np(c))
    assert not np.allclose(_np(a), _np(fm.eval()(fx)[0]))
    a.sum().backward()
    assert all(p.grad is not None and np.isfinite(_np(p.grad)).all() for p in fm.parameters())
    # p = 1: the layers after the first see zeros (their output is bias-only, the same for every input)
    m1 = ft.nn.RNN(3, 4, num_layers=2, dropout=1.0)
    o1, _ = m1(ft.tensor(rnd(4, 2, 3), dtype=ft.float32))
    o2, _ = m1(ft.tensor(rnd(4, 2, 3), dtype=ft.float32))
    np.testing.assert_allclose(_np(o1), _np(o2))


# ---- compile: a whole LSTM training step -------------------------------------------------------------------------
def _lstm_model(L):
    class Tagger(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = L.nn.LSTM(3, 5, num_layers=2, batch_first=True)
            self.head = L.nn.Linear(5, 2)

        def forward(self, x):
            out, (h, c) = self.rnn(x)
            return self.head(out[:, -1]) + h.sum(0).sum(-1, keepdim=True) * 0.1 + c.mean()
    return Tagger()


def test_compiled_lstm_training_step_equals_eager():
    xs = [rnd(4, 6, 3) for _ in range(3)]
    ys = [rnd(4, 2) for _ in range(3)]
    runs = []
    ref = _lstm_model(torch)
    for lib, compiled in ((ft, False), (ft, True), (torch, False)):
        model = _lstm_model(lib)
        model.load_state_dict({k: lib.tensor(_np(v)) for k, v in ref.state_dict().items()})
        opt = lib.optim.Adam(model.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        fn = ft.compile(step) if compiled else step
        losses = [fn(lib.tensor(x, dtype=lib.float32), lib.tensor(y, dtype=lib.float32)).item()
                  for x, y in zip(xs, ys)]
        runs.append((losses, [_np(p).copy() for p in model.parameters()], fn))
    (le, pe, _), (lc, pc, fn), (lt, pt, _) = runs
    np.testing.assert_allclose(lc, le, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(lc, lt, rtol=1e-5, atol=1e-5)
    for a, b, c in zip(pc, pe, pt):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-5)
    assert fn.stats["eager_calls"] == 0


def test_compiled_packed_forward_with_python_lengths():
    m = ft.nn.GRU(3, 4, bidirectional=True)
    x = ft.tensor(rnd(5, 3, 3), dtype=ft.float32)

    def f(x):
        out, h = m(FU.pack_padded_sequence(x, [2, 5, 3], enforce_sorted=False))
        return FU.pad_packed_sequence(out)[0], h
    cf = ft.compile(f, fullgraph=True)  # Python lengths: no host read, one program
    (a, ha), (b, hb) = f(x), cf(x)
    np.testing.assert_allclose(_np(b), _np(a), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_np(hb), _np(ha), rtol=1e-6, atol=1e-6)
    assert cf.stats["eager_calls"] == 0


def test_tensor_lengths_inside_compile_fall_back_to_eager():
    """A traced ``lengths`` tensor is a host read (the packed layout depends on its values): a graph break, the
    call runs eagerly with the right result (``fullgraph=True``: an error), as the other data-dependent ops."""
    m = ft.nn.LSTM(2, 3)
    x = ft.tensor(rnd(4, 2, 2), dtype=ft.float32)
    lens = ft.tensor([4, 2])

    def f(x, lens):
        out, _ = m(FU.pack_padded_sequence(x, lens))
        return FU.pad_packed_sequence(out)[0]
    with pytest.warns(UserWarning, match="graph break"):
        got = ft.compile(f)(x, lens)
    np.testing.assert_allclose(_np(got), _np(f(x, lens)), rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="cannot be one program: a tensor.s value read on the host"):
        ft.compile(f, fullgraph=True)(x, lens)


def test_autocast_dtypes_as_torch_cpu():
    """CPU autocast: LSTM, RNN and RNNCell run in bfloat16 (PyTorch's oneDNN / linear paths), GRU and the
    LSTM/GRU cells stay float32."""
    x = rnd(3, 2, 3)
    got = []
    for L, ac in ((torch, torch.autocast), (ft, ft.autocast)):
        ms = [L.nn.LSTM(3, 4), L.nn.GRU(3, 4), L.nn.RNN(3, 4), L.nn.LSTMCell(3, 4), L.nn.RNNCell(3, 4)]
        xt = L.tensor(x, dtype=L.float32)
        with ac("cpu"):
            got.append([str(m(xt[0] if "Cell" in type(m).__name__ else xt)[0].dtype) for m in ms])
    assert got[0] == got[1] == [f"torch.{d}" for d in ("bfloat16", "float32", "bfloat16", "float32", "bfloat16")]
