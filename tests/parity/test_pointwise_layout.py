"""Pointwise ops lay out their result as ATen's TensorIterator does (views.iter_strides, _dispatch._lay_pointwise):
the strides of a permuted, sliced, expanded or channels-last operand carry over, so ``(x.transpose(1, 2) * 2)
.transpose(1, 2).view(...)`` works as in PyTorch. Each case against real torch 2.13: strides, values, and what
a later ``view`` does."""
import random

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite._tensor import views as V


def _base(m, shape, seed=0):
    g = np.random.default_rng(seed)
    return m.tensor(g.uniform(0.5, 1.5, shape).astype(np.float32))


# operands as (shape of the base, how to make the operand from it)
_LAYOUTS = {
    "transposed": ((2, 3, 4), lambda x: x.transpose(1, 2)),
    "permuted": ((2, 3, 4), lambda x: x.permute(2, 0, 1)),
    "t2d": ((3, 5), lambda x: x.t()),
    "sliced": ((2, 3, 6), lambda x: x[:, :, ::2]),
    "sliced_t": ((4, 3, 2), lambda x: x[:, ::2].transpose(0, 2)),
    "expanded_t": ((3, 1), lambda x: x.expand(3, 4).t()),
    "size1_t": ((1, 3, 1), lambda x: x.transpose(0, 2)),
    "channels_last": ((2, 3, 4, 5), lambda x: x.contiguous(memory_format=_fmt(x))),
    "channels_last_c1": ((2, 1, 4, 5), lambda x: x.contiguous(memory_format=_fmt(x))),
    "empty_t": ((0, 3), lambda x: x.t()),
    "contiguous": ((2, 3), lambda x: x),
}


def _fmt(x):
    return (ft if isinstance(x, ft.Tensor) else torch).channels_last


_UNARY = {
    "exp": lambda m, a: a.exp(), "neg": lambda m, a: -a, "abs": lambda m, a: a.abs(),
    "relu": lambda m, a: m.nn.functional.relu(a), "gelu": lambda m, a: m.nn.functional.gelu(a),
    "silu": lambda m, a: m.nn.functional.silu(a), "sigmoid": lambda m, a: m.sigmoid(a),
    "gt": lambda m, a: a > 1.0, "isnan": lambda m, a: a.isnan(), "clamp": lambda m, a: a.clamp(0.6, 1.2),
    "pow2": lambda m, a: a ** 2, "rpow": lambda m, a: 2 ** a, "mul_scalar": lambda m, a: a * 2,
    "rsub": lambda m, a: 1 - a, "where": lambda m, a: m.where(a > 1.0, a, 0.0),
    "nan_to_num": lambda m, a: a.nan_to_num(), "leaky_relu": lambda m, a: m.nn.functional.leaky_relu(a, 0.1),
    "hardtanh": lambda m, a: m.nn.functional.hardtanh(a), "softplus": lambda m, a: m.nn.functional.softplus(a),
    "elu": lambda m, a: m.nn.functional.elu(a), "threshold": lambda m, a: m.nn.functional.threshold(a, 1.0, 0.0),
    "normalize": lambda m, a: m.nn.functional.normalize(a, dim=0),
    "prelu": lambda m, a: m.nn.functional.prelu(a, m.tensor([0.25])),
    "to_int_and_back": lambda m, a: (a * 3).long() & 3, "lerp": lambda m, a: m.lerp(a, a * 2, 0.25),
    "addcmul": lambda m, a: m.addcmul(a, a, a, value=0.5), "mse_none": lambda m, a: m.nn.functional.mse_loss(
        a, a * 0.5, reduction="none"),
    "mse_mean": lambda m, a: m.nn.functional.mse_loss(a, a * 0.5),
    "bce_logits_none": lambda m, a: m.nn.functional.binary_cross_entropy_with_logits(a, a * 0.5, reduction="none"),
    "softmax": lambda m, a: a.softmax(-1),  # (not an iterator op: contiguous in torch)
}


def _layout(t):
    """Shape, strides and dtype; the strides of size-1 dims and of empty tensors left out: they order no elements
    (ATen's kernels differ among themselves there: ``clamp`` of a transposed (1, 3, 1) is (3, 1, 1)-strided and
    ``hardtanh``'s (1, 1, 3), as a kernel takes a number as an operand or not), so only what a ``view`` or the
    memory order depends on is compared."""
    shape = tuple(t.shape)
    st = None if 0 in shape else tuple(s if n != 1 else None for n, s in zip(shape, t.stride()))
    return shape, st, str(t.dtype).split(".")[-1]


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("op", sorted(_UNARY))
def test_one_operand_layouts_as_torch(layout, op):
    shape, make = _LAYOUTS[layout]
    got = []
    for m in (ft, torch):
        r = _UNARY[op](m, make(_base(m, shape)))
        got.append((_layout(r), np.asarray(r.tolist(), dtype=np.float64)))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6, atol=1e-7)


_BINARY_ORDERS = [
    ("transposed", "contiguous_like"), ("contiguous_like", "transposed"), ("transposed", "row"),
    ("row", "transposed"), ("transposed", "transposed"), ("transposed", "permuted_other"),
    ("channels_last", "contiguous_like"), ("contiguous_like", "channels_last"), ("channels_last", "bias"),
    ("transposed", "scalar_tensor"),
]


def _operand(m, kind, ref_shape, seed):
    if kind == "contiguous_like":
        return _base(m, ref_shape, seed)
    if kind == "row":
        return _base(m, ref_shape[-1:], seed)
    if kind == "bias":
        return _base(m, (ref_shape[1], 1, 1), seed)
    if kind == "scalar_tensor":
        return m.tensor(2.5)
    if kind == "permuted_other":  # (2, 4, 3) read from a (3, 2, 4) base: another memory order than transposed's
        return _base(m, (3, 2, 4), seed).permute(1, 2, 0)
    shape, make = _LAYOUTS[kind]
    return make(_base(m, shape, seed))


@pytest.mark.parametrize("opname", ["add", "mul", "maximum", "ne", "atan2"])
@pytest.mark.parametrize("kinds", _BINARY_ORDERS, ids=["-".join(k) for k in _BINARY_ORDERS])
def test_two_operand_layouts_as_torch(kinds, opname):
    # the first operand with a strict stride order decides (ATen's reorder_dimensions)
    got = []
    for m in (ft, torch):
        ref = tuple((_LAYOUTS["channels_last"][0] if "channels_last" in kinds else (2, 4, 3)))
        a, b = (_operand(m, k, ref, i) for i, k in enumerate(kinds))
        r = getattr(m, opname)(a, b)
        got.append((_layout(r), np.asarray(r.tolist(), dtype=np.float64)))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6)


def test_transposed_result_views_back_as_torch():
    # the case three red teams met: torch's result keeps the transposed strides, so transposing back is contiguous
    for m in (ft, torch):
        x = m.arange(24.).reshape(2, 3, 4)
        y = x.transpose(1, 2) * 2
        z = y.transpose(1, 2).view(2, -1)
        assert z.tolist() == (torch.arange(24.).reshape(2, -1) * 2).tolist()
        assert z.stride() == (12, 1)
        # and what torch refuses, refused here too
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            y.view(2, -1)
    # a channels-last activation stays channels-last through the elementwise ops that follow
    x = ft.randn(2, 3, 4, 5).contiguous(memory_format=ft.channels_last)
    y = ft.nn.functional.relu(x * 2 + 1)
    assert y.is_contiguous(memory_format=ft.channels_last) and not y.is_contiguous()


def test_gradients_through_laid_out_results_as_torch():
    got = []
    for m in (ft, torch):
        w = _base(m, (3, 4)).requires_grad_()
        y = (w.t() * 3).exp()  # (4, 3), strides (1, 4)
        loss = (y.t().reshape(-1) * m.arange(12.)).sum()
        loss.backward()
        got.append((y.stride(), loss.item(), w.grad.stride(), np.asarray(w.grad.tolist())))
    assert got[0][:1] == got[1][:1] and got[0][2] == got[1][2]
    assert got[0][1] == pytest.approx(got[1][1], rel=1e-6)
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-5)


def test_compiled_function_with_laid_out_results_equals_eager():
    def f(x):
        y = ft.nn.functional.gelu(x.transpose(1, 2) * 2)
        return y.transpose(1, 2).reshape(x.shape[0], -1).sum(1), y

    x = _base(ft, (2, 3, 4))
    eager = f(x)
    cf = ft.compile(f)
    for _ in range(2):
        got = cf(x)
        assert got[1].stride() == eager[1].stride() == (12, 1, 4)
        np.testing.assert_allclose(np.asarray(got[0].tolist()), np.asarray(eager[0].tolist()), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(got[1].tolist()), np.asarray(eager[1].tolist()), rtol=1e-6)


def test_meta_tensors_lay_out_as_torch():
    for m in (ft, torch):
        x = m.empty(2, 3, 4, device="meta").transpose(1, 2)
        assert (x + 1).stride() == (12, 1, 4)


def _random_operand(rng, out_shape):
    """A random operand broadcastable to ``out_shape``: dims maybe dropped / set to 1, then laid out by a random
    permutation of a base, a random step slice, or an expand."""
    nd = len(out_shape)
    lead = rng.randint(0, nd)
    shape = [n if rng.random() < 0.75 else 1 for n in out_shape[lead:]]
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    steps = [rng.choice((1, 1, 2)) for _ in shape]
    base_shape = [shape[p] * steps[p] for p in perm]
    return shape, perm, steps, base_shape


def _build(m, spec, seed):
    shape, perm, steps, base_shape = spec
    t = _base(m, tuple(base_shape), seed)
    if not shape:  # (a 0-dim operand)
        return t
    t = t.permute(*[perm.index(i) for i in range(len(perm))])
    return t[tuple(slice(None, None, s) for s in steps)]


def test_random_operand_layouts_as_torch():
    # ATen's layout rule on random permutations, slices, size-1 dims and broadcasts of one to three operands, with
    # Python numbers among them (a number is a 0-dim operand: it sends a single-tensor op off the fast setup)
    rng = random.Random(1234)
    checked = 0
    for trial in range(150):
        out_shape = tuple(rng.choice((1, 2, 3, 4)) for _ in range(rng.randint(1, 4)))
        specs = [_random_operand(rng, out_shape) for _ in range(rng.randint(1, 3))]
        with_number = rng.random() < 0.3
        got = []
        for m in (ft, torch):
            ops = [_build(m, s, i) for i, s in enumerate(specs)]
            ops[0] = ops[0] + m.zeros(out_shape) * 0 if ops[0].shape != out_shape and len(ops) == 1 else ops[0]
            if len(ops) == 1:
                r = ops[0] * 2.5 if with_number else ops[0].exp()
            elif len(ops) == 2:
                r = m.add(ops[0], ops[1], alpha=2) if not with_number else m.where(ops[0] > 1, ops[1], 0.5)
            else:
                r = m.addcmul(ops[0], ops[1], ops[2])
            got.append(_layout(r) + (np.asarray(r.tolist()).round(5).tolist(),))
        assert got[0] == got[1], (trial, out_shape, specs, with_number)
        checked += 1
    assert checked == 150


@pytest.mark.parametrize("shape,strides", [((2, 3, 4), (12, 1, 3)), ((2, 3, 4, 5), (60, 1, 15, 3)),
                                           ((4, 1, 3), (1, 1, 4)), ((3, 0, 2), (1, 3, 0))])
def test_iter_strides_fast_setup_cases(shape, strides):
    # the fast setup: one dense operand keeps its exact strides (size-1 dims included); with a number beside it,
    # the general order (size-1 dims placed by the sort)
    t = torch.empty_strided(shape, strides)
    assert V.iter_strides(shape, [(shape, strides)]) in (None, (t.exp()).stride())
    assert (V.iter_strides(shape, [(shape, strides)]) or V.contiguous_strides(shape)) == t.exp().stride()
    assert (V.iter_strides(shape, [(shape, strides), ((), ())]) or V.contiguous_strides(shape)) == \
        (t * 2).stride()


_LIKE_SELF = {
    "sort_values": lambda m, x: x.sort(1)[0], "sort_indices": lambda m, x: x.sort(1, descending=True)[1],
    "argsort": lambda m, x: x.argsort(1), "flip": lambda m, x: x.flip(1), "msort": lambda m, x: m.msort(x),
    "index_fill": lambda m, x: x.index_fill(1, m.tensor([0, 1]), 0.0),
    "select_scatter": lambda m, x: x.select_scatter(m.zeros(x.shape[0], *x.shape[2:]), 1, 0),
    "slice_scatter": lambda m, x: x.slice_scatter(m.zeros(x.shape[0], 1, *x.shape[2:]), 1, 0, 1),
    "put": lambda m, x: x.put(m.tensor([0, 1]), m.tensor([5.0, 6.0])),
    "index_put": lambda m, x: x.index_put((m.tensor([0]),), m.tensor(1.0)), "fill": lambda m, x: m.fill(x, 1.0),
    # (torch writes these into a contiguous result: unchanged)
    "topk": lambda m, x: x.topk(1, 1)[0], "cummax": lambda m, x: x.cummax(1)[0],
    "index_add": lambda m, x: x.index_add(1, m.tensor([0]), m.ones(x.shape[0], 1, *x.shape[2:])),
}
_SELF_LAYOUTS = {
    "transposed": ((4, 6, 5), lambda x: x.transpose(0, 2)), "permuted": ((4, 6, 5), lambda x: x.permute(1, 2, 0)),
    "sliced": ((4, 6, 5), lambda x: x[:, ::2]), "sliced_t": ((4, 6, 5), lambda x: x[:, ::2].transpose(1, 2)),
    "expanded": ((3, 1), lambda x: x.expand(3, 4)),
    "channels_last": ((2, 3, 4, 5), lambda x: x.contiguous(memory_format=_fmt(x))),
}


# (not compared: torch's select/slice_scatter copy a non-dense self with its exact strides, clone_preserve_strides, a
# non-dense result; here it gets the dense strides of its memory order, as clone's)
_SELF_CASES = [(op, lay) for op in sorted(_LIKE_SELF) for lay in sorted(_SELF_LAYOUTS)
               if not (op.endswith("_scatter") and lay.startswith("sliced"))]


@pytest.mark.parametrize("op,layout", _SELF_CASES)
def test_results_allocated_like_self_as_torch(op, layout):
    # sort / argsort / flip / the out-of-place scatters allocate like their input (empty_like, clone), not as the
    # iterator: a permuted input keeps its strides, a non-dense one gets the dense strides of its memory order
    shape, make = _SELF_LAYOUTS[layout]
    got = []
    for m in (ft, torch):
        r = _LIKE_SELF[op](m, make(_base(m, shape)))
        got.append((_layout(r), np.asarray(r.tolist(), dtype=np.float64)))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6)


def _cl(m, shape, seed=0):
    return _base(m, shape, seed).contiguous(memory_format=m.channels_last)


_FORMAT_CASES = {
    "conv_cl_input": lambda m, F: F.conv2d(_cl(m, (2, 3, 6, 6)), _base(m, (4, 3, 3, 3), 1)),
    "conv_cl_weight": lambda m, F: F.conv2d(_base(m, (2, 3, 6, 6)), _cl(m, (4, 3, 3, 3), 1), _base(m, (4,), 2)),
    "conv_depthwise": lambda m, F: F.conv2d(_cl(m, (2, 3, 6, 6)), _base(m, (3, 1, 3, 3), 1), groups=3, padding=1),
    "conv_transpose": lambda m, F: F.conv_transpose2d(_cl(m, (2, 3, 6, 6)), _base(m, (3, 2, 2, 2), 1), stride=2),
    "conv3d": lambda m, F: F.conv3d(_base(m, (1, 2, 4, 4, 4)).contiguous(memory_format=m.channels_last_3d),
                                    _base(m, (3, 2, 2, 2, 2), 1)),
    "max_pool": lambda m, F: F.max_pool2d(_cl(m, (2, 3, 6, 6)), 2),
    "max_pool_indices": lambda m, F: F.max_pool2d(_cl(m, (2, 3, 6, 6)), 2, return_indices=True)[1],
    "avg_pool": lambda m, F: F.avg_pool2d(_cl(m, (2, 3, 6, 6)), 2),
    "adaptive_avg_pool": lambda m, F: F.adaptive_avg_pool2d(_cl(m, (2, 3, 6, 6)), 2),
    "adaptive_avg_pool_1": lambda m, F: F.adaptive_avg_pool2d(_cl(m, (2, 3, 6, 6)), 1),
    "adaptive_max_pool": lambda m, F: F.adaptive_max_pool2d(_cl(m, (2, 3, 6, 6)), 2),
    "batch_norm_train": lambda m, F: F.batch_norm(_cl(m, (2, 3, 6, 6)), m.zeros(3), m.ones(3), training=True),
    "batch_norm_eval": lambda m, F: F.batch_norm(_cl(m, (2, 3, 6, 6)), m.zeros(3), m.ones(3)),
    "group_norm": lambda m, F: F.group_norm(_cl(m, (2, 3, 6, 6)), 3),
    "layer_norm": lambda m, F: F.layer_norm(_cl(m, (2, 3, 6, 6)), (6,)),
    "nearest": lambda m, F: F.interpolate(_cl(m, (2, 3, 6, 6)), scale_factor=2),
    "bilinear": lambda m, F: F.interpolate(_cl(m, (2, 3, 6, 6)), scale_factor=2, mode="bilinear"),
    "bicubic": lambda m, F: F.interpolate(_cl(m, (2, 3, 6, 6)), size=(5, 5), mode="bicubic"),
    "pad_constant": lambda m, F: F.pad(_cl(m, (2, 3, 6, 6)), (1, 1, 1, 1)),
    "pad_reflect": lambda m, F: F.pad(_cl(m, (2, 3, 6, 6)), (1, 1, 1, 1), mode="reflect"),
    "cat_all_cl": lambda m, F: m.cat([_cl(m, (2, 3, 6, 6)), _cl(m, (2, 3, 6, 6), 1)], 1),
    "cat_mixed": lambda m, F: m.cat([_cl(m, (2, 3, 6, 6)), _base(m, (2, 3, 6, 6), 1)], 1),
    "conv_block": lambda m, F: F.max_pool2d(F.relu(F.batch_norm(F.conv2d(_cl(m, (2, 3, 6, 6)), _cl(m, (4, 3, 3, 3), 1)),
                                                                m.zeros(4), m.ones(4), training=True)), 2),
}


@pytest.mark.parametrize("case", sorted(_FORMAT_CASES))
def test_channels_last_through_conv_pool_norm_as_torch(case):
    # conv (its input's or its weight's format), pooling, batch / group norm, interpolate, pad and cat of inputs all
    # in one format give channels-last results as torch's (they came back contiguous); layer_norm stays contiguous
    got = []
    for m in (ft, torch):
        r = _FORMAT_CASES[case](m, m.nn.functional)
        got.append((_layout(r), np.asarray(r.tolist(), dtype=np.float64)))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-4, atol=1e-5)
