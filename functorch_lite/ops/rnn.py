"""Recurrent ops: whole RNN / LSTM / GRU stacks, single cells, and the packed-sequence layout ops.

A recurrent stack (every layer and direction) is ONE op whose jax body runs each layer as one
``lax.scan`` (both directions of a bidirectional layer step together, the reverse one on time-reversed
input, with batched matmuls): eager forward is one dispatch and one autograd Node, backward one cached
jitted vjp, and under ``compile`` the scans inline into the program (never one facade op per time step).
The input projections ``x @ W_ih^T + b_ih`` of all time steps are computed before the scan; the scan only
does the recurrent matmul and the gates (PyTorch's gate orders: LSTM i,f,g,o; GRU r,z,n with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``).

Precision: PyTorch's CPU runs the cells and the RNN / GRU / projected-LSTM stacks as a decomposition (linears, then
elementwise gate ops), each op storing its result in its dtype; float16/bfloat16 values are computed here in
float32 and rounded after each of those ops (``_rounder``), so they match PyTorch's. Its LSTM without projections
on a padded float32/bfloat16 input runs on oneDNN: opmath here, rounded once at the end.

CPU autocast: none of these ops is on PyTorch's CPU autocast lists, but the linears inside its decomposition are;
the op gets the autocast dtype as its static ``low`` and runs its linears and gates in it, while the GRU hidden /
LSTM cell state keep their own dtype (``(h - n) * z + n`` with a float32 ``h`` is float32). The oneDNN LSTM is on
the list (``mkldnn_rnn_layer``: every input cast). CUDA's lists have every recurrent op (inputs cast).

Packed sequences: ``batch_sizes`` is a static argument (a tuple of Python ints), so the packed data is
gathered into a time-first padded block by constant indices inside the kernel, and a mask keeps each
sequence's state frozen past its length (its final hidden state is the one at its own last step; the
reverse direction starts there), then the output is gathered back into packed order.

grad_fn names: the stack op's one node is named after what PyTorch (CPU) shows on the output:
``CatBackward0`` (bidirectional or packed), ``MkldnnRnnLayerBackward0`` (float32/bfloat16 LSTM without
projections), ``StackBackward0`` (the others); ``h_n``/``c_n`` share that node (PyTorch shows
``StackBackward0`` there). Cells: ``TanhBackward0`` / ``ReluBackward0`` (RNNCell), ``AddBackward0``
(GRUCell); LSTMCell is its cell-state op (c': ``AddBackward0``) and then h' = o * tanh(c') (``MulBackward0``).
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import dtypes as D
from .._promotion import no_kernel, promote_types
from ..amp import autocast_mode as _amp
from ..backends import _FLAGS as _BACKENDS
from .._warn import warn_once
from . import _rounding
from ._registry import defop

__all__: list = []


def _dtype_error(got, want):
    return RuntimeError(f"mat1 and mat2 must have the same dtype, but got {got.short} and {want.short}")


def _rnn_rule(ref, kind):
    """Dtype rule: every tensor has the dtype of tensor ``ref`` (the first weight; a function of the static args
    for the stacks), else PyTorch's matmul error; outputs have it too. A uint32 dropout key passes untouched.

    Other dtypes as PyTorch's CPU composites: bool and float8 have no kernel (``addmm_impl_cpu_`` /
    ``add_stub``); integers run where every step stays integral (relu; a tanh cell's output is a float of the
    default dtype), else the in-place sigmoid/tanh refuse to cast back (``kind``: "stack" | "rnn_cell" |
    "cell"). Under CPU autocast (the static ``low``, last) floating tensors may differ: see ``_low_outs``."""
    def rule(op, sig, sargs):
        low = sargs[-1]
        if low is not None:
            outs = _low_outs(op, sig, sargs, kind, low)
            if outs is not None:
                return (None,) * len(sig), outs
        want = sig[ref(sargs) if callable(ref) else ref][1]
        for s in sig:
            if s is None or not isinstance(s, tuple) or s[1] is D.uint32:
                continue
            if s[1] is not want:
                raise _dtype_error(s[1], want)
        outs = (want,) * op.nout
        if want is D.bool:
            raise no_kernel("addmm_impl_cpu_", want)
        if want in D.FLOAT8:
            raise no_kernel("add_stub", want)
        if want.category == D.INT:
            act = sargs[0] if kind != "cell" else None
            if kind == "rnn_cell" and act == "tanh":
                outs = (D.get_default_dtype(),)
            elif kind == "stack" and act == "RNN_TANH":
                raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {D.get_default_dtype().short} "
                                   f"and {want.short}")
            elif not (act == "relu" or act == "RNN_RELU"):
                raise RuntimeError(f"result type {D.get_default_dtype().short} can't be cast to the desired output "
                                   f"type {want.short}")
        elif want.category != D.FLOAT:
            raise no_kernel("addmm_impl_cpu_", want)
        return (None,) * len(sig), outs
    return rule


def _low_outs(op, sig, sargs, kind, low):
    """Output dtypes under CPU autocast to ``low`` (None: the plain rule applies, all tensors float64 or some not
    floating). The linears run in ``low``, so do the gates; a GRU's hidden state and an LSTM's cell state keep
    the dtype of their initial value (the input's when none is given) promoted with ``low``; an LSTM's projected
    hidden state comes from a matmul (``low``)."""
    dts = [s[1] for s in sig if type(s) is tuple and s[1] is not D.uint32]
    if any(not d.is_floating_point for d in dts) or all(d is D.float64 for d in dts):
        return None
    if D.float64 in dts:  # (autocast leaves float64 as it is: its linear meets a low-precision operand)
        raise _dtype_error(D.float64, low)
    if kind == "rnn_cell":
        return (low,)
    if kind == "cell":  # GRUCell: (h',); LSTM cell state: (c', o)
        st = promote_types(sig[1 if op.nout == 1 else 2][1], low)  # (hx: tensor 1, cx: tensor 2)
        return (st,) if op.nout == 1 else (st, low)
    mode, proj, has_hx = sargs[0], sargs[4], sargs[5]
    if mode.startswith("RNN"):
        return (low, low)
    st = promote_types(sig[(2 if mode == "LSTM" else 1) if has_hx else 0][1], low)
    if mode == "GRU":
        return (st, st)
    return (low, low, st) if proj else (st, st, st)


def _autocast(sargs, targs=()):
    """Autocast policy: on CPU (``low`` set) the op casts nothing itself (its body runs the linears in ``low``);
    otherwise every floating input is cast (CUDA's lists; CPU's oneDNN LSTM, which gets ``low`` None)."""
    return _CUDA_LOWER if sargs[-1] is not None else "lower"


_CUDA_LOWER = {"cuda": "lower"}


# ---- the cell arithmetic (shared by the stack scan and the cell ops) ------------------------------------
def _same(v):
    return v


def _rounder(dt, acc):
    """``v -> v`` rounded to ``dt`` (kept in ``acc``): where PyTorch's decomposed cell stores a float16/bfloat16
    result; the identity when ``dt`` is ``acc`` (float32, float64, integers)."""
    if np.dtype(dt) == np.dtype(acc):
        return _same
    return lambda v: _rounding.stored(v, dt, acc)


def _dtypes(x, state, w, low):
    """(gate dtype, state dtype, compute dtype) of a cell or stack with input ``x``, initial state ``state`` (a
    GRU's h, an LSTM's c; None: the input's dtype) and first weight ``w``: without autocast all are the input's
    (float32 compute for float16/bfloat16); under CPU autocast (``low``) the gates are ``low`` (float64 stays) and
    the state promotes with them."""
    dt = x.dtype
    if low is None or w.dtype == jnp.float64:
        return dt, dt, D.opmath(dt)
    st = promote_types(D.from_numpy_dtype(dt if state is None else state.dtype), low)
    return low.jnp, st.jnp, jnp.float32


def _lin(x, w, b):
    """``x @ w^T + b``; with a leading direction axis (w (D, G, F), x (D, B, F)) one product per direction."""
    if w.ndim == 3:
        r = jnp.einsum("dbf,dgf->dbg", x, w)
        return r if b is None else r + b[:, None, :]
    r = jnp.matmul(x, w.T)
    return r if b is None else r + b


def _lstm_state(gx, gh, c, rg, rc):
    """An LSTM step's new cell state and output gate from its input and hidden projections: (c' = f * c + i * g,
    o), PyTorch's ``(forgetgate * cx).add_(ingate * cellgate)``."""
    i, f, g, o = jnp.split(rg(gh + gx), 4, axis=-1)
    i, f, g, o = rg(jax.nn.sigmoid(i)), rg(jax.nn.sigmoid(f)), rg(jnp.tanh(g)), rg(jax.nn.sigmoid(o))
    return rc(rc(f * c) + rg(i * g)), o


def _step(mode, gx, h, c, w_hh, b_hh, w_hr, rg=_same, rc=_same):
    """One time step from the precomputed input projection ``gx``: (h', c'). ``rg`` / ``rc`` round to the gates'
    / the state's dtype after each op PyTorch's CPU cell runs (``_rounder``)."""
    gh = rg(_lin(rg(h), w_hh, b_hh))
    if mode == "LSTM":
        c2, o = _lstm_state(gx, gh, c, rg, rc)
        h2 = rc(o * rc(jnp.tanh(c2)))
        if w_hr is not None:
            h2 = rg(_lin(rg(h2), w_hr, None))
        return h2, c2
    if mode == "GRU":
        xr, xz, xn = jnp.split(gx, 3, axis=-1)
        hr, hz, hn = jnp.split(gh, 3, axis=-1)
        r = rg(jax.nn.sigmoid(rg(hr + xr)))
        z = rg(jax.nn.sigmoid(rg(hz + xz)))
        n = rg(jnp.tanh(rg(xn + rg(hn * r))))
        return rc(rc(rc(h - n) * z) + n), None  # PyTorch's (h - n).mul_(z).add_(n), in the state's dtype
    pre = rg(gh + gx)
    return (rg(jnp.tanh(pre)) if mode == "RNN_TANH" else jax.nn.relu(pre)), None


def _flip_dir(a, nd):
    """Time-reverse the second direction of a (T, D, ...) array."""
    return a if nd == 1 else jnp.stack([a[:, 0], jnp.flip(a[:, 1], 0)], axis=1)


def _layer(mode, x, h0, c0, ws, bias, proj, mask, rg=_same, rc=_same, split=False):
    """One layer, all its directions in ONE scan, over a time-first block ``x`` (T, B, F).

    ``ws``: per direction (w_ih, w_hh[, b_ih, b_hh][, w_hr]); ``h0``/``c0`` (D, B, H). The reverse direction
    runs on the time-reversed input, so one loop steps both directions with batched matmuls. ``mask`` (T, B)
    or None: steps past a sequence's length keep its state and output zeros (reversed, a sequence starts at
    its own last step). ``split``: the input projection rounds before its bias is added (PyTorch's linear of a
    non-contiguous input: matmul, then ``add_``). Returns (outputs (T, B, D*H'), h_T (D, B, H'), c_T)."""
    nd = len(ws)
    stack = [jnp.stack(p) for p in zip(*ws)]
    w_ih, w_hh = stack[0], stack[1]
    b_ih, b_hh = (stack[2], stack[3]) if bias else (None, None)
    w_hr = stack[-1] if proj else None
    gx = jnp.einsum("tbf,dgf->tdbg", rg(x), w_ih)
    if b_ih is not None:
        gx = (rg(gx) if split else gx) + b_ih[None, :, None, :]
    gx = _flip_dir(rg(gx), nd)
    lstm = mode == "LSTM"

    def body(carry, inp):
        h, c = carry
        h2, c2 = _step(mode, inp[0], h, c, w_hh, b_hh, w_hr, rg, rc)
        if mask is not None:
            m = inp[1][:, :, None]
            h2 = jnp.where(m, h2, h)
            if lstm:
                c2 = jnp.where(m, c2, c)
            return (h2, c2), jnp.where(m, h2, jnp.zeros_like(h2))
        return (h2, c2), h2

    xs = (gx,)
    if mask is not None:
        xs = (gx, _flip_dir(jnp.broadcast_to(mask[:, None], (mask.shape[0], nd) + mask.shape[1:]), nd))
    (h, c), ys = lax.scan(body, (h0, c0), xs)
    ys = _flip_dir(ys, nd)  # (T, D, B, H')
    out = ys[:, 0] if nd == 1 else jnp.concatenate([ys[:, 0], ys[:, 1]], axis=-1)
    return out, h, c


@functools.lru_cache(maxsize=256)
def _pack_index(batch_sizes: tuple):
    """Constant indices of a packed layout: (gather index (T, B) into data + one pad row, mask (T, B),
    positions of the packed rows in a flattened (T*B) block)."""
    bs = np.asarray(batch_sizes, np.int64)
    T, B = len(bs), int(bs[0])
    n = int(bs.sum())
    offs = np.concatenate([[0], np.cumsum(bs)[:-1]])
    cols = np.arange(B)[None, :]
    mask = cols < bs[:, None]
    idx = np.where(mask, offs[:, None] + cols, n)
    flat = (np.arange(T)[:, None] * B + cols)[mask]
    return idx, mask, flat


def _unpack(data, batch_sizes, fill):
    """Packed rows (N, *) -> time-first padded block (T, B, *) with ``fill`` past each length."""
    idx, _, _ = _pack_index(batch_sizes)
    pad = jnp.full((1,) + data.shape[1:], fill, data.dtype)
    return jnp.concatenate([data, pad])[idx]


def _repack(block, batch_sizes):
    """Time-first block (T, B, *) -> packed rows (N, *)."""
    _, _, flat = _pack_index(batch_sizes)
    T, B = block.shape[:2]
    return block.reshape((T * B,) + block.shape[2:])[flat]


# ---- whole stacks ----------------------------------------------------------------------------------------
def _stack_name(targs, sargs):
    mode, bidirectional, proj, batch_sizes = sargs[0], sargs[2], sargs[4], sargs[7]
    if bidirectional or batch_sizes is not None:
        return "CatBackward0"
    if mode == "LSTM" and not proj and targs[0].dtype in (D.float32, D.bfloat16):
        return "MkldnnRnnLayerBackward0"  # PyTorch's CPU LSTM runs on oneDNN for these
    return "StackBackward0"


def _stack(tensors, mode, num_layers, bidirectional, bias, proj, has_hx, batch_first, batch_sizes, dropout, low):
    """The stack's body: ``tensors`` = (input, [h0, [c0]], *flat weights, [dropout key])."""
    lstm = mode == "LSTM"
    x = tensors[0]
    i = 1
    h0 = c0 = None
    if has_hx:
        h0 = tensors[1]
        i = 2
        if lstm:
            c0 = tensors[2]
            i = 3
    key = tensors[-1] if dropout > 0 else None
    ws = tensors[i:len(tensors) - (key is not None)]
    # gate / state (GRU h, LSTM c) / compute dtypes; the oneDNN LSTM (no projections, float32/bfloat16) is one
    # kernel: opmath throughout, one rounding at the end
    g, st, acc = _dtypes(x, c0 if lstm else h0, ws[0], low)
    onednn = lstm and not proj and low is None and batch_sizes is None and x.dtype in (jnp.float32, jnp.bfloat16)
    rg, rc = (_same, _same) if onednn else (_rounder(g, acc), _rounder(st, acc))
    ws = tuple(w.astype(g).astype(acc) for w in ws)
    nd = 2 if bidirectional else 1
    per = 2 + 2 * bias + proj
    mask = None
    if batch_sizes is not None:
        x = _unpack(x, batch_sizes, 0)
        mask = jnp.asarray(_pack_index(batch_sizes)[1])
    elif batch_first:
        x = jnp.swapaxes(x, 0, 1)
    x = x.astype(acc)
    B = x.shape[1]
    hn, cn = [], []
    for layer in range(num_layers):
        ks = range(layer * nd, (layer + 1) * nd)
        w = [ws[k * per:(k + 1) * per] for k in ks]
        h = h0[layer * nd:(layer + 1) * nd].astype(acc) if has_hx else jnp.zeros((nd, B, w[0][1].shape[1]), acc)
        c = None
        if lstm:  # W_hh: (4 * hidden, H_out)
            c = c0[layer * nd:(layer + 1) * nd].astype(acc) if has_hx else \
                jnp.zeros((nd, B, w[0][1].shape[0] // 4), acc)
        # (PyTorch's batch_first input is a transposed view: its layer-0 linear is a matmul, then the bias added)
        x, h, c = _layer(mode, x, h, c, w, bias, proj, mask, rg, rc, split=batch_first and layer == 0)
        hn.append(h)
        cn.append(c)
        if dropout > 0 and layer < num_layers - 1:
            if dropout >= 1:
                x = x * jnp.asarray(0, acc)
            else:
                k = jax.random.fold_in(jax.random.wrap_key_data(key), layer)
                keep = jax.random.bernoulli(k, 1.0 - dropout, x.shape)
                x = jnp.where(keep, x * jnp.asarray(1.0 / (1.0 - dropout), acc), jnp.zeros_like(x))
    out = _repack(x, batch_sizes) if batch_sizes is not None else x
    # outputs: an RNN's and a projected LSTM's hidden states are in the gates' dtype, a GRU's and an LSTM's cell
    # states in the state's (all the input's without autocast)
    ht = g if mode.startswith("RNN") or proj else st
    res = (out.astype(ht), jnp.concatenate(hn).astype(ht))
    return res + (jnp.concatenate(cn).astype(st),) if lstm else res


def _first_weight(sargs):
    mode, has_hx = sargs[0], sargs[5]
    return 1 + ((2 if mode == "LSTM" else 1) if has_hx else 0)


@defop("_rnn_stack", promote=_rnn_rule(_first_weight, "stack"), grad_fn=_stack_name, tensors="list", method=False,
       function=False, nout=2, broadcast=False, kernel="rnn", autocast=_autocast)
def _rnn_stack(tensors, mode, num_layers, bidirectional, bias, proj, has_hx, batch_first, batch_sizes, dropout, low):
    """RNN (tanh/relu) or GRU stack -> (output, h_n); output is time-first (packed rows for packed input)."""
    return _stack(tensors, mode, num_layers, bidirectional, bias, proj, has_hx, batch_first, batch_sizes, dropout,
                  low)


@defop("_lstm_stack", promote=_rnn_rule(_first_weight, "stack"), grad_fn=_stack_name, tensors="list", method=False,
       function=False, nout=3, broadcast=False, kernel="lstm", autocast=_autocast)
def _lstm_stack(tensors, mode, num_layers, bidirectional, bias, proj, has_hx, batch_first, batch_sizes, dropout,
                low):
    """LSTM stack (optional projections ``weight_hr``) -> (output, h_n, c_n)."""
    return _stack(tensors, mode, num_layers, bidirectional, bias, proj, has_hx, batch_first, batch_sizes, dropout,
                  low)


_ONEDNN_PROJ = ("LSTM with projections is not supported with oneDNN. Using default implementation. (Triggered "
                "internally at /__w/pytorch/pytorch/aten/src/ATen/native/RNN.cpp:1512.)")


def rnn_stack(mode: str, input, hx, weights, *, num_layers: int, bidirectional: bool, bias: bool, proj: bool,
              batch_first: bool, batch_sizes, dropout: float, key=None):
    """Run a whole recurrent stack as one op. ``hx``: None, a tensor (RNN/GRU) or (h0, c0) (LSTM);
    ``weights``: PyTorch's flat weight list; ``key``: a uint32 key tensor when dropout is applied."""
    ts = [input]
    if hx is not None:
        ts.extend(hx if mode == "LSTM" else (hx,))
    ts.extend(weights)
    p = float(dropout) if key is not None else 0.0
    if key is not None:
        ts.append(key)
    lstm = mode == "LSTM"
    # (PyTorch's use_mkldnn: its padded-input LSTM on float32/bfloat16; packed sequences never)
    onednn = lstm and batch_sizes is None and input.dtype in (D.float32, D.bfloat16)
    if onednn and proj and input._storage.device.type == "cpu" and 0 not in input._shape and \
            _BACKENDS["mkldnn_enabled"]:
        warn_once(_ONEDNN_PROJ, _ONEDNN_PROJ)
    # (CPU autocast: PyTorch's oneDNN LSTM is on its list, its inputs cast; the other stacks decompose)
    low = None if onednn and not proj else _amp.cpu_lower_dtype(input)
    op = _lstm_stack if lstm else _rnn_stack
    return op(ts, mode, int(num_layers), bool(bidirectional), bool(bias), bool(proj), hx is not None,
              bool(batch_first), batch_sizes, p, low)


# ---- cells -----------------------------------------------------------------------------------------------
def _cell_prep(x, state, ws, low):
    """A cell's arrays in its compute dtype (weights rounded to the gates' dtype, as autocast casts them) and
    its dtypes and rounders: (x, ws, gate dtype, state dtype, acc, rg, rc)."""
    g, st, acc = _dtypes(x, state, ws[0], low)
    ws = tuple(None if w is None else w.astype(g).astype(acc) for w in ws)
    return x.astype(acc), ws, g, st, acc, _rounder(g, acc), _rounder(st, acc)


@defop("_rnn_cell", promote=_rnn_rule(2, "rnn_cell"), grad_fn=lambda t, s: "TanhBackward0" if s[0] == "tanh"
       else "ReluBackward0", tensors=6, method=False, function=False, broadcast=False, kernel="rnn_cell",
       autocast=_autocast)
def _rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, nonlinearity, low):
    """One Elman step: act(h W_hh^T + b_hh + x W_ih^T + b_ih)."""
    dt = input.dtype
    x, (w_ih, w_hh, b_ih, b_hh), g, _, acc, rg, _ = _cell_prep(input, None, (w_ih, w_hh, b_ih, b_hh), low)
    h = hx.astype(acc)
    if nonlinearity == "tanh" and not jnp.issubdtype(dt, jnp.floating):  # integer sums, a float tanh (rule)
        return jnp.tanh((_lin(x, w_ih, b_ih) + _lin(h, w_hh, b_hh)).astype(D.get_default_dtype().jnp))
    mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
    return _step(mode, rg(_lin(rg(x), w_ih, b_ih)), h, None, w_hh, b_hh, None, rg)[0].astype(g)


@defop("_gru_cell", promote=_rnn_rule(2, "cell"), grad_fn="AddBackward0", tensors=6, method=False, function=False,
       broadcast=False, kernel="gru_cell", autocast=_autocast)
def _gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh, low):
    """One GRU step (gates r, z, n)."""
    x, (w_ih, w_hh, b_ih, b_hh), g, st, acc, rg, rc = _cell_prep(input, hx, (w_ih, w_hh, b_ih, b_hh), low)
    gx = rg(_lin(rg(x), w_ih, b_ih))
    return _step("GRU", gx, hx.astype(acc), None, w_hh, b_hh, None, rg, rc)[0].astype(st)


@defop("_lstm_cell_state", promote=_rnn_rule(3, "cell"), grad_fn="AddBackward0", tensors=7, method=False,
       function=False, nout=2, broadcast=False, kernel="lstm_cell", autocast=_autocast)
def _lstm_cell_state(input, hx, cx, w_ih, w_hh, b_ih, b_hh, low):
    """One LSTM step (gates i, f, g, o) up to its new cell state: (c' = f * c + i * g, the output gate o)."""
    x, (w_ih, w_hh, b_ih, b_hh), g, st, acc, rg, rc = _cell_prep(input, cx, (w_ih, w_hh, b_ih, b_hh), low)
    gx, gh = rg(_lin(rg(x), w_ih, b_ih)), rg(_lin(rg(hx.astype(acc)), w_hh, b_hh))
    c2, o = _lstm_state(gx, gh, cx.astype(acc), rg, rc)
    return c2.astype(st), o.astype(g)


def rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, nonlinearity):
    """One RNNCell step (the static ``low`` read from the autocast state)."""
    return _rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, nonlinearity, _amp.cpu_lower_dtype(input))


def gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh):
    """One GRUCell step."""
    return _gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh, _amp.cpu_lower_dtype(input))


def lstm_cell(input, hx, cx, w_ih, w_hh, b_ih, b_hh):
    """One LSTM step -> (h', c'): the cell state op (c': AddBackward0), then h' = o * tanh(c') as PyTorch's CPU
    cell computes it (h': MulBackward0; under CPU autocast o is in the low dtype, c' in the cell state's)."""
    c2, o = _lstm_cell_state(input, hx, cx, w_ih, w_hh, b_ih, b_hh, _amp.cpu_lower_dtype(input))
    return o * c2.tanh(), c2


# ---- packed-sequence layout ------------------------------------------------------------------------------
@defop("_pack_padded_sequence", promote="same", grad_fn="PackPaddedSequenceBackward0", method=False,
       function=False, float8=True)
def _pack_padded_sequence(input, batch_sizes, batch_first):
    """Padded (T, B, *) (or (B, T, *)) -> packed rows (N, *) for static ``batch_sizes``."""
    x = jnp.swapaxes(input, 0, 1) if batch_first else input
    return _repack(x[:len(batch_sizes)], batch_sizes)


@defop("_pad_packed_sequence", promote="same", grad_fn="CopySlices", method=False, function=False, float8=True)
def _pad_packed_sequence(data, batch_sizes, padding_value, total_length):
    """Packed rows (N, *) -> time-first padded (total_length, B, *) filled with ``padding_value``."""
    block = _unpack(data, batch_sizes, padding_value)
    extra = total_length - block.shape[0]
    if extra > 0:
        fill = jnp.full((extra,) + block.shape[1:], padding_value, block.dtype)
        block = jnp.concatenate([block, fill])
    return block


def _pad_rule(op, sig, sargs):
    """pad_sequence: every sequence is copied into a tensor of the first one's dtype."""
    dt = sig[0][1]
    return tuple(None if s[1] is dt else dt for s in sig), (dt,)


@defop("_pad_sequence", promote=_pad_rule, grad_fn="CopySlices", tensors="list", method=False, function=False,
       broadcast=False, float8=True)
def _pad_sequence(sequences, batch_first, padding_value, padding_side):
    """Stack sequences of different lengths (dim 0) into (T, n, *) or (n, T, *), padded with ``padding_value``."""
    first = sequences[0]
    T = max(s.shape[0] for s in sequences)
    trailing = first.shape[1:]
    rows = []
    for s in sequences:
        s = jnp.broadcast_to(s, (s.shape[0],) + trailing)
        widths = [(0, T - s.shape[0]) if padding_side == "right" else (T - s.shape[0], 0)]
        widths += [(0, 0)] * len(trailing)
        rows.append(jnp.pad(s, widths, constant_values=jnp.asarray(padding_value).astype(first.dtype)))
    return jnp.stack(rows, axis=0 if batch_first else 1)
