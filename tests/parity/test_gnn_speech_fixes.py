"""Parity fixes: CTC double backward, bincount with weights that require grad, float lengths / minlength,
scatter_reduce with a 0-d src, embedding_bag's float16 / bfloat16 / float32 rounding, repeat_interleave's message,
torch.spmm, torch.segment_reduce."""
import numpy as np
import pytest
import torch

import functorch_lite as ft


def _raises_like(fn_t, fn_f, exc=None):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ef:
        fn_f()
    assert type(ef.value) is type(et.value) and str(ef.value) == str(et.value)
    if exc is not None:
        assert type(et.value) is exc


def test_ctc_double_backward_raises():
    x = np.random.default_rng(0).standard_normal((6, 1, 4)).astype(np.float32)
    msgs = []
    for lib in (torch, ft):
        lp = lib.tensor(x).log_softmax(-1).detach().requires_grad_()
        loss = lib.nn.functional.ctc_loss(lp, lib.tensor([[1, 2]]), [6], [2])
        g, = lib.autograd.grad(loss, lp, create_graph=True)
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad(g.sum(), lp)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "derivative for aten::_ctc_loss_backward is not implemented"


@pytest.mark.parametrize("il,tl", [([6.0], [2]), ([6], [2.0]), ((6.0,), (2,)), ([6, 6.0], [2]), ([6], [2, 2.0]),
                                   ([True], [2]), ([6], 2.0)])
def test_ctc_non_int_lengths_type_error(il, tl):
    x = np.random.default_rng(0).standard_normal((6, 1, 4)).astype(np.float32)

    def run(lib):
        return lambda: lib.nn.functional.ctc_loss(lib.tensor(x).log_softmax(-1), lib.tensor([[1, 2]]), il, tl)
    _raises_like(run(torch), run(ft), TypeError)


def test_ctc_mixed_tensor_list_message():
    x = np.random.default_rng(0).standard_normal((6, 1, 4)).astype(np.float32)

    def run(lib):
        return lambda: lib.nn.functional.ctc_loss(lib.tensor(x).log_softmax(-1), lib.tensor([[1, 2]]),
                                                  lib.tensor([6]), [2])
    _raises_like(run(torch), run(ft), TypeError)


@pytest.mark.parametrize("dt", ["float32", "float64", "float16"])
def test_bincount_weights_requires_grad(dt):
    outs = []
    for lib in (torch, ft):
        w = lib.tensor([1., 2., 3.], dtype=getattr(lib, dt), requires_grad=True)
        b = lib.bincount(lib.tensor([0, 1, 1]), weights=w)
        assert b.requires_grad and b.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError) as e:
            b.sum().backward()
        outs.append((b.detach().numpy(), str(b.dtype).split(".")[-1], str(e.value)))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1:] == outs[1][1:]
    assert outs[1][2] == "derivative for aten::bincount is not implemented"


@pytest.mark.parametrize("m", [2.0, True, None])
def test_bincount_minlength_type(m):
    _raises_like(lambda: torch.bincount(torch.tensor([0, 1]), minlength=m),
                 lambda: ft.bincount(ft.tensor([0, 1]), minlength=m), TypeError)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_0d_src(reduce):
    _raises_like(lambda: torch.zeros(3).scatter_reduce(0, torch.tensor([0, 1]), torch.tensor(1.), reduce),
                 lambda: ft.zeros(3).scatter_reduce(0, ft.tensor([0, 1]), ft.tensor(1.), reduce), RuntimeError)
    _raises_like(lambda: torch.zeros(3).scatter_add(0, torch.tensor([0, 1]), torch.tensor(1.)),
                 lambda: ft.zeros(3).scatter_add(0, ft.tensor([0, 1]), ft.tensor(1.)), RuntimeError)


@pytest.mark.parametrize("pad", [None, 3])
@pytest.mark.parametrize("last", [False, True])
def test_embedding_bag_half_mean_bitwise(pad, last):
    g = torch.Generator().manual_seed(1)
    w = torch.randn(20, 16, generator=g).half()
    idx = torch.randint(0, 20, (60,), generator=g)
    off = torch.tensor([0, 7, 7, 20, 33, 59])
    r = torch.nn.functional.embedding_bag(idx, w, off, mode="mean", padding_idx=pad, include_last_offset=last)
    o = ft.nn.functional.embedding_bag(ft.tensor(idx.numpy()), ft.tensor(w.float().numpy()).half(),
                                       ft.tensor(off.numpy()), mode="mean", padding_idx=pad, include_last_offset=last)
    assert o.dtype == ft.float16
    np.testing.assert_array_equal(r.float().numpy(), o.float().numpy())


@pytest.mark.parametrize("r", [[[2]], 3, [[1, 2]]])
def test_repeat_interleave_index_form_message(r):
    _raises_like(lambda: torch.repeat_interleave(torch.tensor(r)), lambda: ft.repeat_interleave(ft.tensor(r)),
                 RuntimeError)


def test_spmm_dense():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    res = []
    for lib in (torch, ft):
        x = lib.tensor(a, requires_grad=True)
        y = lib.spmm(x, lib.tensor(b))
        assert type(y.grad_fn).__name__ == "MmBackward0"
        y.sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5)
    _raises_like(lambda: torch.spmm(torch.randn(3), torch.randn(3, 4)), lambda: ft.spmm(ft.randn(3), ft.randn(3, 4)),
                 RuntimeError)
    _raises_like(lambda: torch.spmm(torch.randn(2, 3), torch.randn(4, 4)),
                 lambda: ft.spmm(ft.randn(2, 3), ft.randn(4, 4)), RuntimeError)


def _seg_case(lib, data, red, kw, gout):
    conv = (lambda t: t) if lib is torch else (
        lambda t: ft.tensor(t.float().numpy()).to(getattr(ft, str(t.dtype).split(".")[-1])) if t.is_floating_point()
        else ft.tensor(t.numpy()))
    d = conv(data).detach().requires_grad_()
    r = lib.segment_reduce(d, red, **{k: conv(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()})
    r.backward(conv(gout))
    return r.detach().float().numpy(), d.grad.float().numpy(), str(r.dtype), type(r.grad_fn).__name__


_SEG_KW = [dict(lengths=torch.tensor([3, 0, 4, 3])), dict(offsets=torch.tensor([0, 3, 3, 7, 10])),
           dict(offsets=torch.tensor([1, 4, 6]), initial=0.5), dict(lengths=torch.tensor([3, 0, 4, 3]), initial=2),
           dict(lengths=torch.tensor([2, 2, 2]), unsafe=True)]


@pytest.mark.parametrize("dt,red", [("float32", r) for r in ("sum", "mean", "max", "min", "prod", "amax")]
                         + [("float64", "prod"), ("float16", "sum"), ("float16", "prod"), ("float16", "max"),
                            ("bfloat16", "mean"), ("bfloat16", "min")])
def test_segment_reduce_values_and_grads(dt, red):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(10, 3, generator=g).to(getattr(torch, dt))
    x[2, 1] = x[5, 0] = x[6, 0] = 0  # (prod: one and two zeros in a segment)
    x[8, 2] = x[9, 2]  # (max / min: a tie)
    x[4, 1] = float("nan")
    for kw in _SEG_KW:
        idx = kw.get("lengths", kw.get("offsets"))
        gout = torch.randn(idx.shape[-1] - ("offsets" in kw), 3, generator=g).to(x.dtype)
        a, b = _seg_case(torch, x, red, kw, gout), _seg_case(ft, x, red, kw, gout)
        for u, v in zip(a, b):
            assert np.array_equal(u, v, equal_nan=True) if isinstance(u, np.ndarray) else u == v, (kw, u, v)


@pytest.mark.parametrize("red", ["mean", "prod"])
def test_segment_reduce_batched_axis(red):
    g = torch.Generator().manual_seed(3)
    y = torch.randn(2, 6, 2, generator=g)
    for kw in (dict(lengths=torch.tensor([[2, 4], [0, 6]]), axis=1),
               dict(lengths=torch.tensor([[1, 5], [3, 3]], dtype=torch.int32), axis=-2)):
        gout = torch.randn(2, 2, 2, generator=g)
        a, b = _seg_case(torch, y, red, kw, gout), _seg_case(ft, y, red, kw, gout)
        for u, v in zip(a, b):
            assert np.array_equal(u, v, equal_nan=True) if isinstance(u, np.ndarray) else u == v


def test_segment_reduce_half_accumulates_in_half():
    h = (torch.ones(3000) * 0.1).half()
    for red, lengths in (("sum", [3000]), ("mean", [1000, 2000])):
        r = torch.segment_reduce(h, red, lengths=torch.tensor(lengths))
        o = ft.segment_reduce(ft.tensor(h.float().numpy()).half(), red, lengths=ft.tensor(lengths))
        np.testing.assert_array_equal(r.float().numpy(), o.float().numpy())


_SEG_ERRORS = [
    ("sum", dict(lengths=[1, 1])), ("sum", dict()), ("sum", dict(lengths=[2, 1], axis=1)),
    ("sum", dict(lengths=[-1, 4])), ("sum", dict(lengths=[-1, 4], unsafe=True)), ("sum", dict(lengths=[2., 1])),
    ("sum", dict(offsets=[0., 3])), ("sum", dict(offsets=[0, 3, 2])), ("sum", dict(lengths=[[3]])),
    ("foo", dict(lengths=[3])), ("sum", dict(lengths=[3], axis=0.0)), ("sum", dict(lengths=[3], indices=[0])),
]


@pytest.mark.parametrize("red,kw", _SEG_ERRORS)
def test_segment_reduce_errors(red, kw):
    def run(lib):
        args = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kw.items()}
        return lambda: lib.segment_reduce(lib.tensor([1., 2., 3.]), red, **args)
    _raises_like(run(torch), run(ft))


def test_segment_reduce_dtype_and_arg_errors():
    _raises_like(lambda: torch.segment_reduce(torch.tensor([1, 2, 3]), "sum", lengths=torch.tensor([3])),
                 lambda: ft.segment_reduce(ft.tensor([1, 2, 3]), "sum", lengths=ft.tensor([3])), NotImplementedError)
    _raises_like(lambda: torch.segment_reduce(torch.zeros(3), "sum", lengths=[3]),
                 lambda: ft.segment_reduce(ft.zeros(3), "sum", lengths=[3]), TypeError)
    with pytest.raises(RuntimeError, match="out of bounds"):  # (PyTorch reads past the data)
        ft.segment_reduce(ft.zeros(2, 3), "sum", offsets=ft.tensor([0, 3]))


def test_segment_reduce_double_backward_raises():
    msgs = []
    for lib in (torch, ft):
        d = lib.tensor([1., 2., 3.], requires_grad=True)
        r = lib.segment_reduce(d, "max", lengths=lib.tensor([2, 1]))
        g, = lib.autograd.grad(r.sum(), d, create_graph=True)
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad(g.sum(), d)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "derivative for aten::_segment_reduce_backward is not implemented"


@pytest.mark.parametrize("mode,dt", [("mean", "bfloat16"), ("sum", "bfloat16"), ("mean", "float32")])
def test_embedding_bag_forward_bitwise(mode, dt):
    g = torch.Generator().manual_seed(1)
    w = torch.randn(20, 16, generator=g).to(getattr(torch, dt))
    idx = torch.randint(0, 20, (60,), generator=g)
    off = torch.tensor([0, 7, 7, 20, 33, 59])
    for pad, last in ((None, False), (None, True), (3, False)):
        r = torch.nn.functional.embedding_bag(idx, w, off, mode=mode, padding_idx=pad, include_last_offset=last)
        o = ft.nn.functional.embedding_bag(ft.tensor(idx.numpy()), ft.tensor(w.float().numpy()).to(getattr(ft, dt)),
                                           ft.tensor(off.numpy()), mode=mode, padding_idx=pad,
                                           include_last_offset=last)
        np.testing.assert_array_equal(r.float().numpy(), o.float().numpy())
