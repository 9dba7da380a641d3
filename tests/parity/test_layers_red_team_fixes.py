"""Parity with torch 2.13 for layer discrepancies found by a red team: embedding max_norm with inf / -inf / 0 norms,
embedding_bag's include_last_offset with indices past the last offset, uninitialized parameters and buffers
refusing Tensor methods (and lazy norm modules converted before their first forward), GroupNorm on an empty batch,
cosine_similarity in half precision, argument errors of MultiheadAttention / LSTMCell / interpolate / prelu, and
rms_norm's grad_fn name on half inputs. Each case runs the same code on both libraries."""
import re
import warnings

import pytest
import torch

import functorch_lite as ftl

LIBS = (torch, ftl)


def _outcome(fn, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn(lib))
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return (type(e).__name__, re.sub(r" at 0x[0-9a-f]+", "", str(e)))


def _same(fn):
    a, b = (_outcome(fn, lib) for lib in LIBS)
    assert a == b, (a, b)
    return a


def _r(t, n=4):
    return [round(v, n) if v == v else "nan" for v in t.reshape(-1).tolist()]


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# ---- 1a. max_norm with the inf / -inf / 0 norms -----------------------------------------------------------------
@pytest.mark.parametrize("p", [float("inf"), float("-inf"), 0.0, -1.0, 1.0, 3.0])
def test_embedding_max_norm_special_norms(p):
    def case(L):
        w = L.tensor([[3., -4.], [0.5, 0.2], [0., 2.]])
        e = L.nn.Embedding.from_pretrained(w.clone(), max_norm=1.0, norm_type=p)
        out = e(L.tensor([0, 1, 2]))
        eb = L.nn.EmbeddingBag.from_pretrained(w.clone(), max_norm=1.0, norm_type=p)
        return _r(out), _r(e.weight), _r(eb(L.tensor([[0, 1]])))
    _same(case)


# ---- 1b. include_last_offset with indices past offsets[-1] ------------------------------------------------------
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets", [[0, 2, 3], [0, 2, 2], [0, 1, 5]])
def test_embedding_bag_include_last_offset_tail(mode, offsets):
    def case(L):
        w = L.arange(12.).reshape(6, 2)
        out = L.nn.functional.embedding_bag(L.tensor([0, 1, 2, 3, 4]), w, L.tensor(offsets), mode=mode,
                                            include_last_offset=True)
        return _r(out)
    _same(case)


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("pad", [None, 5, 1])
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_include_last_offset_tail_paths(dt, pad, mode):
    def case(L):  # (only ATen's fast path (float / half types, no padding_idx) ends the last bag at offsets[-1])
        w = L.arange(12.).reshape(6, 2).to(getattr(L, dt))
        out = L.nn.functional.embedding_bag(L.tensor([0, 1, 2, 3, 4]), w, L.tensor([0, 2, 3]), mode=mode,
                                            include_last_offset=True, padding_idx=pad)
        return _r(out.float(), 3)
    _same(case)


def test_embedding_bag_include_last_offset_tail_grad():
    def case(L):  # (mean: the entries past the last offset take their share of the gradient, as ATen's backward)
        w = L.arange(12.).reshape(6, 2).requires_grad_()
        out = L.nn.functional.embedding_bag(L.tensor([0, 1, 2, 3, 4]), w, L.tensor([0, 2, 3]), mode="mean",
                                            include_last_offset=True)
        out.sum().backward()
        return _r(out), _r(w.grad)
    _same(case)


def test_embedding_bag_include_last_offset_per_sample_weights():
    def case(L):
        w = L.arange(12.).reshape(6, 2)
        out = L.nn.functional.embedding_bag(L.tensor([0, 1, 2, 3, 4]), w, L.tensor([0, 2, 3]), mode="sum",
                                            include_last_offset=True, per_sample_weights=L.full((5,), 2.))
        return _r(out)
    _same(case)


# ---- 1c. uninitialized parameters and buffers refuse Tensor methods --------------------------------------------
_REFUSED = {
    "numel": lambda L, w: w.numel(), "nelement": lambda L, w: w.nelement(), "dim": lambda L, w: w.dim(),
    "zero_": lambda L, w: w.zero_(), "clone": lambda L, w: w.clone(), "detach": lambda L, w: w.detach(),
    "tolist": lambda L, w: w.tolist(), "add": lambda L, w: w + 1, "radd": lambda L, w: 1 + w,
    "mul": lambda L, w: w * w, "sub": lambda L, w: w - 1, "div": lambda L, w: w / 2, "neg": lambda L, w: -w,
    "eq": lambda L, w: w == w, "lt": lambda L, w: w < 1, "bool": lambda L, w: bool(w), "float_": lambda L, w: float(w),
    "getitem": lambda L, w: w[0], "iter": lambda L, w: list(w), "sum": lambda L, w: w.sum(),
    "item": lambda L, w: w.item(), "view": lambda L, w: w.view(-1), "stride": lambda L, w: w.stride(),
    "is_contiguous": lambda L, w: w.is_contiguous(), "requires_grad_": lambda L, w: w.requires_grad_(False),
    "bfloat16": lambda L, w: w.bfloat16(), "new_zeros": lambda L, w: w.new_zeros(2),
    "parameters_to_vector": lambda L, w: L.nn.utils.parameters_to_vector([w]),
    "xavier_uniform_": lambda L, w: L.nn.init.xavier_uniform_(w),
    "len": lambda L, w: len(w),
}


@pytest.mark.parametrize("what", sorted(_REFUSED))
@pytest.mark.parametrize("kind", ["param", "buffer"])
def test_uninitialized_refuses_methods(what, kind):
    def case(L):
        t = L.nn.LazyLinear(4).weight if kind == "param" else L.nn.LazyBatchNorm1d().running_mean
        return _REFUSED[what](L, t)
    out = _same(case)
    assert out[0] == "ValueError"


def test_uninitialized_allowed():
    def case(L):
        w = L.nn.LazyLinear(4).weight
        b = L.nn.LazyBatchNorm1d().running_mean
        return (tuple(w.size()), str(w.dtype), w.requires_grad, w.is_leaf, w.ndim, str(w.device), w.grad, repr(w),
                w.is_floating_point(), w.is_complex(), type(w.float()).__name__, type(w.double()).__name__,
                type(w.data).__name__, type(b.double()).__name__, type(b.to(L.float64)).__name__,
                type(b.cpu()).__name__, str(b.half().dtype), isinstance(hash(w), int), L.nn.parameter.is_lazy(w))
    _same(case)


# ---- 2a. lazy norm modules converted before their first forward -------------------------------------------------
def _out(t):
    return tuple(t.shape), str(t.dtype), _name(t)


@pytest.mark.parametrize("make", [
    lambda L: (L.nn.LazyBatchNorm1d().double(), L.ones(4, 3, dtype=L.float64)),
    lambda L: (L.nn.LazyBatchNorm2d().to(L.float64), L.ones(2, 3, 2, 2, dtype=L.float64)),
    lambda L: (L.nn.LazyInstanceNorm1d(track_running_stats=True).double(), L.ones(2, 3, 4, dtype=L.float64)),
    lambda L: (L.nn.LazyBatchNorm1d().half().float(), L.ones(4, 3)),
    lambda L: (L.nn.Sequential(L.nn.LazyLinear(3), L.nn.LazyBatchNorm1d()).double(), L.ones(4, 2, dtype=L.float64)),
    lambda L: (L.nn.LazyConv2d(3, 2).to(L.float64), L.ones(1, 2, 4, 4, dtype=L.float64)),
])
def test_lazy_converted_before_forward(make):
    def case(L):
        m, x = make(L)
        before = sorted((k, type(v).__name__, str(v.dtype)) for k, v in m.state_dict(keep_vars=True).items())
        y = m(x)
        after = sorted((k, type(v).__name__, str(v.dtype), tuple(v.shape)) for k, v in m.state_dict().items())
        return _out(y), before, after
    _same(case)


# ---- 2b. GroupNorm on an empty batch -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,groups", [((0, 4, 3), 2), ((0, 4, 3, 2), 2), ((0, 4), 4), ((2, 4, 0), 2)])
def test_group_norm_empty(shape, groups):
    def case(L):
        x = L.ones(*shape, requires_grad=True)
        y = L.nn.GroupNorm(groups, shape[1])(x)
        y.sum().backward()
        z = L.nn.functional.group_norm(x, groups)
        return _out(y), tuple(x.grad.shape), _out(z)
    _same(case)


# ---- 3. cosine_similarity in half precision ------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32"])
def test_cosine_similarity_half(dt):
    def case(L):
        u = L.tensor([[300., 400.], [1e-5, 0.], [0., 0.], [1e-3, 3e-3], [65000., 1.]]).to(getattr(L, dt))
        r = L.nn.functional.cosine_similarity(u, u * 2, dim=1)
        a = L.tensor([[0.1, 0.7, -0.3], [5., 2., 1.], [1e-4, -2e-4, 3e-4]]).to(getattr(L, dt))
        b = L.tensor([[0.2, -0.1, 0.9], [1., 1., 1.], [7., 8., 9.]]).to(getattr(L, dt))
        s = L.nn.functional.cosine_similarity(a, b, dim=1)
        return _r(r, 5 if dt == "float32" else 8), _r(s, 5 if dt == "float32" else 8), str(r.dtype)
    _same(case)


# ---- 4. argument errors ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [(1, 5, 8), (3, 5, 8)])
def test_mha_key_batch_mismatch(k):
    def case(L):
        m = L.nn.MultiheadAttention(8, 2, batch_first=True)
        return m(L.ones(2, 5, 8), L.ones(*k), L.ones(*k))
    assert _same(case)[0] == "RuntimeError"


def test_mha_key_batch_mismatch_kdim_and_bias():
    def case(L):
        m = L.nn.MultiheadAttention(8, 2, batch_first=True, kdim=4, vdim=4, add_bias_kv=True)
        return m(L.ones(2, 5, 8), L.ones(1, 5, 4), L.ones(1, 5, 4))
    assert _same(case)[0] == "RuntimeError"
    assert _same(lambda L: L.nn.MultiheadAttention(8, 2, batch_first=True, kdim=4, vdim=4)(
        L.ones(2, 5, 8), L.ones(1, 5, 4), L.ones(1, 5, 4)))[0] == "RuntimeError"


@pytest.mark.parametrize("hx", [
    lambda L: L.zeros(3, 5), lambda L: [L.zeros(3, 5), L.zeros(3, 5)], lambda L: (L.zeros(3, 5),),
    lambda L: (L.zeros(3, 5),) * 3, lambda L: (L.zeros(3, 5), 1)])
def test_lstm_cell_hx(hx):
    def case(L):
        L.manual_seed(0)
        h, c = L.nn.LSTMCell(4, 5)(L.ones(3, 4), hx(L))
        return tuple(h.shape), tuple(c.shape)
    _same(case)


def test_lstm_cell_unbatched_hx():
    def case(L):
        L.manual_seed(0)
        out = [L.nn.LSTMCell(4, 5)(L.ones(4), h)[0].shape for h in (L.zeros(2, 5), (L.zeros(5),) * 3)]
        return [tuple(s) for s in out]
    _same(case)


@pytest.mark.parametrize("kw", [
    dict(scale_factor="t2"), dict(scale_factor="t2", mode="bilinear"), dict(scale_factor="t2", mode="bicubic"),
    dict(scale_factor="t2", mode="nearest-exact"), dict(scale_factor="t2", mode="area"),
    dict(scale_factor="t2", recompute_scale_factor=True), dict(scale_factor="t2", mode="bilinear", antialias=True),
    dict(scale_factor="pair"), dict(size="t33"), dict(size="t3"), dict(size="pair3"), dict(size="t33", dim=3),
    dict(size="t33", dim=5, mode="trilinear"), dict(size="t3", dim=3), dict(scale_factor="t2", dim=3, mode="linear"),
])
def test_interpolate_tensor_arguments(kw):
    def case(L):
        kw2 = dict(kw)
        dim = kw2.pop("dim", 4)
        vals = {"t2": L.tensor(2.0), "pair": (L.tensor(2.0), 2.0), "t33": L.tensor([3, 3]), "t3": L.tensor(3),
                "pair3": (L.tensor(3), 3)}
        for k in ("size", "scale_factor"):
            if k in kw2:
                kw2[k] = vals[kw2[k]]
        return tuple(L.nn.functional.interpolate(L.ones(*(1, 1) + (2,) * (dim - 2)), **kw2).shape)
    _same(case)


@pytest.mark.parametrize("x,w", [("arange3", "f"), ("f", "l"), ("d", "f"), ("h", "f"), ("b", "b"), ("arange3", "l")])
def test_prelu_dtypes(x, w):
    def case(L):
        xs = {"arange3": L.arange(3), "f": L.arange(3.), "d": L.arange(3, dtype=L.float64),
              "h": L.arange(3, dtype=L.float16), "b": L.tensor([True])}
        ws = {"f": L.tensor([0.25]), "l": L.tensor([1]), "b": L.tensor([True])}
        return _r(L.nn.functional.prelu(xs[x], ws[w]))
    _same(case)


def test_prelu_module_long():
    assert _same(lambda L: L.nn.PReLU()(L.arange(3)))[0] == "RuntimeError"


# ---- 5. rms_norm's grad_fn on half inputs ------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32"])
def test_rms_norm_grad_fn(dt):
    def case(L):
        x = L.ones(2, 3, dtype=getattr(L, dt), requires_grad=True)
        return (_name(L.nn.RMSNorm(3).to(getattr(L, dt))(x)), _name(L.nn.functional.rms_norm(x, (3,))),
                _name(L.nn.RMSNorm(3)(x)))
    _same(case)
