"""NLP-model corners found different from torch 2.13 (red team), each against real torch: recurrent modules under
CPU autocast (the linears of PyTorch's decomposed cells run in bfloat16, the GRU hidden / LSTM cell state keep their
dtype, every bfloat16 op rounds), the layout of SDPA's flash output and of a batch_first MultiheadAttention's output,
``MultiheadAttention.merge_masks``, ``F.linear``'s dtype messages, grad_fn names (batch_first RNN/GRU, averaged
attention weights) and the LSTM-with-projections oneDNN warning."""
import warnings

import pytest
import torch

import functorch_lite as ft
from _parity import close, describe, run


def _near(fn):
    """``_parity.same`` with floats to 1e-6 absolute: float32 ulps of the kernels differ (XLA may contract a GRU's
    ``(h - n) * z + n`` into one FMA, torch rounds twice; softmax kernels), the bfloat16 values do not."""
    (t_out, t_err), (f_out, f_err) = run(fn, torch), run(fn, ft)
    assert (t_err is None) == (f_err is None), (t_err, f_err)
    if t_err is not None:
        assert (type(f_err), str(f_err)) == (type(t_err), str(t_err))
        return
    a, b = describe(f_out), describe(t_out)
    assert close(a, b, rel=1e-6, abs=1e-6), (a, b)


def _det(T, m):
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.sin(T.arange(p.numel()) * 0.73 + i).reshape(p.shape) * 0.3)
    return m


def _seq(T, *shape):
    n = 1
    for s in shape:
        n *= s
    return T.cos(T.arange(float(n)) * 0.377).reshape(shape)


def _flat(r):
    out = []
    for t in (r if isinstance(r, tuple) else (r,)):
        out.extend(t if isinstance(t, tuple) else (t,))
    return out


def _stack_outs(r):
    """A stack's output, then its final states detached (their grad_fn, StackBackward0 in torch, shares the
    output's node here)."""
    out = _flat(r)
    return out[:1] + [t.detach() for t in out[1:]]


_CELLS = [("GRUCell", {}), ("LSTMCell", {}), ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"})]


@pytest.mark.parametrize("cls,kw", _CELLS)
@pytest.mark.parametrize("xdt", ["float32", "bfloat16"])
@pytest.mark.parametrize("hdt", [None, "float32", "bfloat16"])
def test_cells_under_cpu_autocast(cls, kw, xdt, hdt):
    def f(T):
        m = _det(T, getattr(T.nn, cls)(8, 4, **kw))
        x = _seq(T, 3, 8).to(getattr(T, xdt))
        hx = None
        if hdt is not None:
            h = T.sin(T.arange(12.) * 0.5).reshape(3, 4).to(getattr(T, hdt))
            hx = (h, h * 0.5) if cls == "LSTMCell" else h
        with T.autocast("cpu", dtype=T.bfloat16):
            return _flat(m(x, hx))
    _near(f)


_STACKS = [("GRU", {}), ("GRU", {"num_layers": 2, "bidirectional": True}), ("GRU", {"batch_first": True}),
           ("RNN", {}), ("RNN", {"batch_first": True, "num_layers": 2}), ("LSTM", {"proj_size": 2}),
           ("LSTM", {"proj_size": 2, "bidirectional": True, "batch_first": True})]


@pytest.mark.parametrize("cls,kw", _STACKS)
@pytest.mark.parametrize("xdt", ["float32", "bfloat16"])
def test_stacks_under_cpu_autocast(cls, kw, xdt):
    def f(T):
        m = _det(T, getattr(T.nn, cls)(8, 4, **kw))
        with warnings.catch_warnings(), T.autocast("cpu", dtype=T.bfloat16):
            warnings.simplefilter("ignore")  # (the oneDNN projections warning)
            return _stack_outs(m(_seq(T, 2, 3, 8).to(getattr(T, xdt))))
    _near(f)


def test_gru_under_cpu_autocast_given_a_float32_hidden_state():
    def f(T):
        m = _det(T, T.nn.GRU(8, 4, num_layers=2))
        with T.autocast("cpu", dtype=T.bfloat16):
            return _stack_outs(m(_seq(T, 3, 2, 8).bfloat16(), T.sin(T.arange(16.)).reshape(2, 2, 4)))
    _near(f)


@pytest.mark.parametrize("cls", ["GRUCell", "RNNCell", "LSTMCell", "GRU", "RNN"])
def test_plain_bfloat16_recurrent_modules_round_like_torch(cls):
    def f(T):
        m = _det(T, getattr(T.nn, cls)(8, 4)).bfloat16()
        x = _seq(T, 3, 8) if "Cell" in cls else _seq(T, 4, 3, 8)
        return _stack_outs(m(x.bfloat16()))
    _near(f)


def test_lstm_under_cpu_autocast_keeps_its_onednn_dtype():
    def f(T):
        m = _det(T, T.nn.LSTM(8, 4))
        with T.autocast("cpu", dtype=T.bfloat16):
            out, (h, c) = m(_seq(T, 2, 3, 8))
        return [str(out.dtype), str(h.dtype), str(c.dtype), type(out.grad_fn).__name__]
    _near(f)


@pytest.mark.parametrize("dt,ac", [("float32", True), ("bfloat16", False), ("bfloat16", True)])
def test_packed_lstm_is_decomposed_not_onednn(dt, ac):
    def f(T):
        m = _det(T, T.nn.LSTM(8, 4))
        if not ac:
            m = m.to(getattr(T, dt))
        p = T.nn.utils.rnn.pack_padded_sequence(_seq(T, 2, 3, 8).to(getattr(T, dt)), [2, 1, 1])
        with T.autocast("cpu", enabled=ac):
            o, (h, c) = m(p)
        return [o.data, h.detach(), c.detach()]
    _near(f)


def test_autocast_gradients_reach_float32_weights():
    for T in (torch, ft):
        m = _det(T, T.nn.GRU(8, 4, batch_first=True))
        x = _seq(T, 2, 3, 8).requires_grad_(True)
        with T.autocast("cpu", dtype=T.bfloat16):
            y = m(x)[0]
        (y * T.linspace(-1, 1, y.numel()).reshape(y.shape)).sum().backward()
        if T is torch:
            want = [x.grad.clone()] + [p.grad.clone() for p in m.parameters()]
        else:
            got = [x.grad] + [p.grad for p in m.parameters()]
    for a, b in zip(got, want):
        assert str(a.dtype) == str(b.dtype) == "torch.float32"
        torch.testing.assert_close(torch.tensor(a.numpy()), b, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("cls,kw", [("GRU", {}), ("RNN", {}), ("LSTM", {}), ("GRU", {"bidirectional": True}),
                                    ("LSTM", {"proj_size": 2})])
def test_batch_first_output_is_transposed_like_torch(cls, kw):
    def f(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = getattr(T.nn, cls)(8, 4, batch_first=True, **kw)(T.ones(2, 3, 8))[0]
        return [out.stride(), out.is_contiguous(), out._base is not None, type(out.grad_fn).__name__]
    _near(f)


_WARN_CASES = """
import sys, warnings
T = __import__(sys.argv[1])
cases = [lambda: T.nn.LSTM(8, 4, proj_size=2).double()(T.ones(3, 2, 8, dtype=T.float64)),
         lambda: T.nn.LSTM(8, 4, proj_size=2)(T.nn.utils.rnn.pack_padded_sequence(T.ones(3, 2, 8), [3, 2])),
         lambda: T.nn.LSTM(8, 4, proj_size=2)(T.ones(3, 2, 8)),
         lambda: T.nn.LSTM(8, 4, proj_size=2)(T.ones(3, 2, 8)),
         lambda: T.nn.LSTM(8, 4, proj_size=2).bfloat16()(T.ones(3, 2, 8, dtype=T.bfloat16))]
for case in cases:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        case()
    print([(x.category.__name__, str(x.message)) for x in w])
"""


def test_lstm_projections_warn_once_about_onednn():
    """torch's TORCH_WARN_ONCE (float32/bfloat16 padded input): each library in a fresh process."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    outs = [subprocess.run([sys.executable, "-c", _WARN_CASES, lib], capture_output=True, text=True, env=env,
                           timeout=300, check=True).stdout for lib in ("torch", "functorch_lite")]
    assert outs[0].count("LSTM with projections is not supported with oneDNN") == 1
    assert outs[1] == outs[0]


# ---- scaled_dot_product_attention's output layout ---------------------------------------------------------
@pytest.mark.parametrize("q_of,kw", [
    (lambda T: _seq(T, 2, 3, 5, 4), lambda T: {}),
    (lambda T: _seq(T, 2, 5, 3, 4).transpose(1, 2), lambda T: {}),
    (lambda T: _seq(T, 2, 5, 3, 4).transpose(1, 2), lambda T: {"is_causal": True}),
    (lambda T: _seq(T, 2, 5, 3, 4).transpose(1, 2), lambda T: {"attn_mask": T.zeros(5, 4)}),
    (lambda T: _seq(T, 2, 5, 3, 4).transpose(1, 2), lambda T: {"dropout_p": 0.3}),  # (the math path: contiguous)
    (lambda T: _seq(T, 5, 2, 3, 4).permute(1, 2, 0, 3), lambda T: {}),
    (lambda T: _seq(T, 3, 2, 5, 4).permute(1, 0, 2, 3), lambda T: {}),
    (lambda T: _seq(T, 2, 1, 3, 4).transpose(1, 2), lambda T: {}),
    (lambda T: _seq(T, 1, 5, 3, 4).expand(2, 5, 3, 4).transpose(1, 2), lambda T: {}),
    (lambda T: _seq(T, 2, 5, 6, 4)[:, :, ::2].transpose(1, 2), lambda T: {}),
    (lambda T: _seq(T, 2, 5, 3, 8)[..., :4].transpose(1, 2), lambda T: {}),
    (lambda T: _seq(T, 2, 5, 3, 4).transpose(1, 2).bfloat16(), lambda T: {})])
def test_sdpa_flash_output_is_laid_out_like_the_query(q_of, kw):
    def f(T):
        q = q_of(T)
        k = v = _seq(T, 2, 3, 4, 4).to(q.dtype)
        y = T.nn.functional.scaled_dot_product_attention(q, k, v, **kw(T))
        return [tuple(y.shape), y.stride(), y.is_contiguous(), y._base is not None, str(y.dtype)]
    _near(f)


def test_sdpa_nanogpt_view_without_contiguous_and_its_gradient():
    def f(T):
        B, L, H, D = 2, 5, 2, 4
        w = T.cos(T.arange(float(B * L * 3 * H * D)) * 0.3).reshape(B, L, 3 * H * D).requires_grad_(True)
        q, k, v = [t.view(B, L, H, D).transpose(1, 2) for t in w.split(H * D, dim=2)]
        y = T.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        z = y.transpose(1, 2).view(B, L, H * D)
        (z * T.linspace(-1, 1, z.numel()).reshape(z.shape)).sum().backward()
        return [y, z, w.grad]
    _near(f)


def test_sdpa_autocast_keeps_the_query_layout():
    def f(T):
        q = _seq(T, 2, 5, 3, 4).transpose(1, 2)
        with T.autocast("cpu", dtype=T.bfloat16):
            y = T.nn.functional.scaled_dot_product_attention(q, _seq(T, 2, 3, 4, 4), _seq(T, 2, 3, 4, 4))
        return [y.stride(), str(y.dtype)]
    _near(f)


# ---- MultiheadAttention -------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("batched", [True, False])
def test_mha_output_layout_and_grad_fn_names(batch_first, need_weights, average, batched):
    def f(T):
        T.manual_seed(0)
        m = _det(T, T.nn.MultiheadAttention(8, 2, batch_first=batch_first))
        x = _seq(T, 2, 3, 8) if batched else _seq(T, 3, 8)
        o, w = m(x, x, x, need_weights=need_weights, average_attn_weights=average)
        return [o, o.is_contiguous(), w]
    _near(f)


def test_mha_batch_first_fast_path_output_is_contiguous():
    def f(T):
        m = _det(T, T.nn.MultiheadAttention(8, 2, batch_first=True)).eval()
        x = _seq(T, 2, 3, 8)
        with T.no_grad():
            o, w = m(x, x, x)
        return [o, o.is_contiguous(), w]
    _near(f)


def test_functional_mha_averaged_weights_come_from_a_mean():
    def f(T):
        m = _det(T, T.nn.MultiheadAttention(8, 2))
        x = _seq(T, 3, 2, 8)
        return list(T.nn.functional.multi_head_attention_forward(
            x, x, x, 8, 2, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0, m.out_proj.weight,
            m.out_proj.bias))
    _near(f)


@pytest.mark.parametrize("masks", [
    lambda T: (T.zeros(3, 3), T.zeros(2, 3, dtype=T.bool)),
    lambda T: (None, None),
    lambda T: (T.zeros(3, 3), None),
    lambda T: (None, T.tensor([[False, True, False], [False, False, False]])),
    lambda T: (T.tensor([[False, True, False]] * 3), T.tensor([[False, True, False], [True, False, False]])),
    lambda T: (T.arange(36.).reshape(4, 3, 3), None),
    lambda T: (T.zeros(3, 3), T.zeros(2, 3)),
    lambda T: (T.zeros(3, 3), T.zeros(2, 3, dtype=T.bool), "unbatched")])
def test_mha_merge_masks(masks):
    def f(T):
        m = T.nn.MultiheadAttention(8, 2)
        am, kpm, *rest = masks(T)
        query = T.ones(3, 8) if rest else T.ones(2, 3, 8)
        return list(m.merge_masks(am, kpm, query))
    _near(f)


# ---- F.linear / MHA dtype messages ---------------------------------------------------------------------------
@pytest.mark.parametrize("xdt,wdt", [("float32", "bfloat16"), ("bfloat16", "float32"), ("float32", "float64"),
                                     ("int64", "float32"), ("float32", "float16"), ("int32", "int64")])
@pytest.mark.parametrize("x_of", [lambda T, d: T.ones(2, 8, dtype=d), lambda T, d: T.ones(2, 3, 8, dtype=d),
                                  lambda T, d: T.ones(3, 2, 8, dtype=d).transpose(0, 1),
                                  lambda T, d: T.ones(8, dtype=d), lambda T, d: T.ones(8, 2, dtype=d).t(),
                                  lambda T, d: T.ones(2, 3, 16, dtype=d)[..., :8],
                                  lambda T, d: T.ones(2, 3, 5, 8, dtype=d).transpose(0, 1)])
@pytest.mark.parametrize("bias", [None, "w", "x"])
@pytest.mark.parametrize("w_grad", [False, True])
def test_linear_dtype_messages(xdt, wdt, x_of, bias, w_grad):
    def f(T):
        x = x_of(T, getattr(T, xdt))
        w = T.ones(4, 8, dtype=getattr(T, wdt))
        if w_grad and w.dtype.is_floating_point:
            w.requires_grad_(True)
        b = None if bias is None else T.ones(4, dtype=w.dtype if bias == "w" else x.dtype)
        return T.nn.functional.linear(x, w, b)
    _near(f)


@pytest.mark.parametrize("bdt", ["bfloat16", "float64"])
def test_linear_of_a_non_contiguous_input_adds_a_bias_of_another_dtype(bdt):
    def f(T):
        x = _seq(T, 3, 2, 8).transpose(0, 1)
        w = T.cos(T.arange(32.)).reshape(4, 8).requires_grad_(True)
        b = T.ones(4, dtype=getattr(T, bdt), requires_grad=True)
        y = T.nn.functional.linear(x, w, b)
        y.sum().backward()
        return [y, b.grad]
    _near(f)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("mdt,xdt", [("bfloat16", "float32"), ("float32", "bfloat16")])
@pytest.mark.parametrize("batched", [True, False])
def test_mha_projection_dtype_messages(batch_first, bias, mdt, xdt, batched):
    def f(T):
        m = T.nn.MultiheadAttention(8, 2, batch_first=batch_first, bias=bias, dtype=getattr(T, mdt))
        x = T.ones(2, 3, 8, dtype=getattr(T, xdt)) if batched else T.ones(3, 8, dtype=getattr(T, xdt))
        return m(x, x, x)[0]
    _near(f)
