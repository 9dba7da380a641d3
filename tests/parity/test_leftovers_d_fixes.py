"""Fixes of this file's session, each against real torch 2.13."""
import torch

import functorch_lite as ft


def test_top_level_inplace_functions_are_torchs():
    # torch has torch.exp_ / torch.relu_ / torch.clamp_ ... but no torch.add_ / torch.mul_ / torch.masked_fill_:
    # the op table's in-place forms are methods everywhere, top-level functions only where torch's are
    ours = {n for n in dir(ft) if n.endswith("_") and not n.startswith("_")}
    theirs = {n for n in dir(torch) if n.endswith("_") and not n.startswith("_")}
    assert ours - theirs == set()
    assert {"exp_", "relu_", "clamp_", "sigmoid_", "zero_", "fill_", "gcd_", "xlogy_"} <= ours
    for name in ("add_", "mul_", "sub_", "div_", "pow_", "masked_fill_", "tril_", "cumsum_", "lerp_"):
        assert not hasattr(torch, name) and not hasattr(ft, name)
        assert hasattr(ft.Tensor, name) and hasattr(torch.Tensor, name)
    x, y = ft.tensor([0.0, 1.0]), torch.tensor([0.0, 1.0])
    assert ft.exp_(x) is x and torch.exp_(y) is y
    assert x.tolist() == y.tolist()


def test_avg_pool_divides_once_as_torch():
    # the window sums divided by the window sizes: XLA turns a division by a constant into a multiply by its
    # rounded reciprocal (a third of the quotients one ulp away); _rounding.true_div rounds once, as torch
    import numpy as np
    x = (np.random.default_rng(0).standard_normal((2, 3, 17, 19)) * 10 + 100).astype(np.float32)

    def pools(m):
        t, F = m.tensor(x), m.nn.functional
        return [F.avg_pool2d(t, 3), F.avg_pool2d(t, 3, 2, 1), F.avg_pool2d(t, 3, 2, 1, count_include_pad=False),
                F.avg_pool1d(t[0], 5), F.avg_pool2d(t, 3, divisor_override=7), F.avg_pool2d(t.half(), 3)]
    for a, b in zip(pools(torch), pools(ft)):
        assert str(a.dtype) == str(b.dtype)
        assert np.array_equal(a.float().numpy(), b.float().numpy())


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 (the outcome compared is the exception)
        return type(e).__name__, str(e)
    return r


def test_randperm_requires_grad_and_factory_out_requires_grad():
    cases = [
        lambda m: m.randperm(3, requires_grad=True),
        lambda m: m.randperm(3, dtype=m.float32, requires_grad=True).requires_grad,
        lambda m: m.randperm(3, device="meta").device.type,
        lambda m: sorted(m.randperm(5).tolist()),
        lambda m: m.randperm(3, out=m.empty(3, dtype=m.float32), requires_grad=True).requires_grad,
        lambda m: m.randperm(3, out=m.empty(3, dtype=m.int64), requires_grad=True),
        lambda m: m.zeros(2, out=m.empty(2, dtype=m.int64), requires_grad=True),
        lambda m: m.arange(2, out=m.empty(2, dtype=m.int64), requires_grad=True),
    ]
    for c in cases:
        assert _outcome(lambda: c(torch)) == _outcome(lambda: c(ft))


def test_nn_modules_paths_and_class_relations_are_torchs():
    # model code imports layers by torch's module paths and tests them with isinstance against torch's private bases
    # (``from torch.nn.modules.batchnorm import _BatchNorm``): every class _torch_layout lists is importable from
    # torch's path, and issubclass between any two of them is torch's (a CELU is no ELU, a Dropout is a _DropoutNd)
    import importlib
    from functorch_lite.nn.modules import _torch_layout
    from functorch_lite.nn.modules.batchnorm import _BatchNorm
    from functorch_lite.nn.modules.loss import CrossEntropyLoss, _WeightedLoss
    import functorch_lite.nn.modules.pooling as pooling
    assert isinstance(ft.nn.BatchNorm2d(3), _BatchNorm) and not isinstance(ft.nn.LayerNorm(3), _BatchNorm)
    assert CrossEntropyLoss is ft.nn.CrossEntropyLoss and issubclass(CrossEntropyLoss, _WeightedLoss)
    assert ft.nn.modules.conv._ConvNd is importlib.import_module("functorch_lite.nn.modules.conv")._ConvNd
    assert pooling.MaxPool2d is ft.nn.MaxPool2d
    pairs = [(m, n) for m, names in _torch_layout.LAYOUT.items() for n in names.split()]
    theirs = {p: getattr(importlib.import_module("torch.nn.modules." + p[0]), p[1]) for p in pairs}
    ours = {p: getattr(importlib.import_module("functorch_lite.nn.modules." + p[0]), p[1]) for p in pairs}
    lazy = ("LazyBatchNorm", "LazyInstanceNorm")  # (ours subclass their materialised class: known)
    wrong = [(a[1], b[1]) for a in pairs for b in pairs if a != b and not a[1].startswith(lazy)
             and issubclass(theirs[a], theirs[b]) != issubclass(ours[a], ours[b])]
    assert wrong == []
    assert all(theirs[p].__name__ == ours[p].__name__ for p in pairs)


def test_refactored_module_classes_keep_torchs_reprs_and_values():
    import numpy as np
    cases = [("CosineEmbeddingLoss", (0.5,)), ("MultiLabelMarginLoss", ()), ("MarginRankingLoss", (0.5,)),
             ("SoftMarginLoss", ()), ("LogSoftmax", (1,)), ("Softmax", (0,)), ("Hardshrink", (0.3,)),
             ("Softshrink", ()), ("CELU", (2.0, True)), ("ELU", ()), ("Mish", (True,)), ("Hardswish", (True,)),
             ("Hardsigmoid", ()), ("SELU", (True,)), ("Dropout", (0.2,)), ("MaxPool2d", (3,)), ("AvgPool2d", (3,)),
             ("AvgPool1d", (3,)), ("AvgPool3d", (2,)), ("ConvTranspose2d", (2, 3, 3)), ("AdaptiveMaxPool3d", (2,))]
    for name, args in cases:
        assert repr(getattr(torch.nn, name)(*args)) == repr(getattr(ft.nn, name)(*args))
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    m1 = torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    m2 = ft.nn.ConvTranspose2d(2, 3, 3, stride=2)
    m2.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in m1.state_dict().items()})
    a = m1(torch.tensor(x), output_size=(12, 11)).detach().numpy()
    b = m2(ft.tensor(x), output_size=(12, 11)).detach().numpy()
    assert a.shape == b.shape and np.allclose(a, b, atol=1e-6)
    for size in [(20, 20), [20, 20], (1, 3, 20, 20)]:
        assert _outcome(lambda: m1(torch.tensor(x), output_size=size)) == \
            _outcome(lambda: m2(ft.tensor(x), output_size=size))
    vals = [m.nn.CosineEmbeddingLoss(0.5)(m.ones(2, 3), m.tensor([[1., 0, 0], [0, 1, 0]]), m.tensor([1, -1])).item()
            for m in (torch, ft)]
    assert abs(vals[0] - vals[1]) < 1e-6


def test_repeat_negative_sizes_and_masked_scatter_uint8_warning():
    import warnings
    cases = [lambda m: m.tensor([1, 2, 3]).repeat(-1), lambda m: tuple(m.ones(0).repeat(-1).shape),
             lambda m: tuple(m.ones(2, 0).repeat(2, -3).shape), lambda m: m.tensor([1, 2]).repeat(2, 2).tolist(),
             lambda m: m.ones(2, 3).repeat(-1, 0), lambda m: m.tensor([1, 2, 3]).tile((-1,))]
    for c in cases:
        assert _outcome(lambda: c(torch)) == _outcome(lambda: c(ft))

    def scatter(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = _outcome(lambda: m.zeros(3).masked_scatter_(m.tensor([1, 0, 1], dtype=m.uint8), m.ones(3)))
        return r, [str(x.message) for x in w]
    assert scatter(torch) == scatter(ft)


def test_half_logsumexp_over_an_empty_dim():
    def run(m):
        out = []
        for dt in (m.float16, m.bfloat16):
            x = m.zeros(2, 0, dtype=dt, requires_grad=True)
            r = m.logsumexp(x, 1)
            r.sum().backward()
            out += [r.tolist(), str(r.dtype), tuple(x.grad.shape),
                    tuple(m.logsumexp(m.zeros(2, 0, 3, dtype=dt), 1, keepdim=True).shape),
                    m.logsumexp(m.tensor([[1., 2.], [float("-inf"), float("-inf")]], dtype=dt), 1).tolist()]
        return out
    assert run(torch) == run(ft)


def test_unfold_input_rank_errors():
    cases = [lambda m: m.nn.functional.unfold(m.zeros(1, 2, 3, 9, 11), 3),
             lambda m: m.nn.functional.unfold(m.zeros(9), 3), lambda m: m.nn.functional.unfold(m.zeros(2, 3), 3),
             lambda m: m.nn.functional.unfold(m.zeros(0, 2, 3), 3),
             lambda m: m.nn.functional.unfold(m.zeros(2, 0, 3, 3), 3),
             lambda m: tuple(m.nn.functional.unfold(m.zeros(0, 1, 3, 3), 3).shape),
             lambda m: tuple(m.nn.functional.unfold(m.zeros(2, 1, 3, 3), 3).shape)]
    for c in cases:
        assert _outcome(lambda: c(torch)) == _outcome(lambda: c(ft))


def test_half_log_softmax_last_dim_rounds_as_torch():
    # torch's float16 / bfloat16 last-dim kernel stores the sum of exps and its log in the type; its backward reads the
    # stored result: both bit-equal here (the confident token's log-prob was 2x off in bf16)
    import numpy as np
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((40, 50)) * 3).astype(np.float32)
    g = rng.standard_normal((40, 50)).astype(np.float32)

    def run(m, dt):
        x = m.tensor(a).to(dt).requires_grad_()
        y = m.nn.functional.log_softmax(x, -1)
        y.backward(m.tensor(g).to(dt))
        z = m.nn.functional.log_softmax(m.tensor([[5.0, -1.0, -1.5]]).to(dt), -1)
        return [y.detach().float().numpy(), x.grad.float().numpy(), z.float().numpy(), type(y.grad_fn).__name__]
    for dt in ("bfloat16", "float16"):
        a_, b_ = run(torch, getattr(torch, dt)), run(ft, getattr(ft, dt))
        assert a_[3] == b_[3]
        for u, v in zip(a_[:3], b_[:3]):
            assert np.array_equal(u, v), dt


def test_parameter_of_an_inference_tensor_and_split_message():
    def inf(m):
        with m.inference_mode():
            return m.ones(2), m.ones(2, dtype=m.int64)
    for c in [lambda m: m.nn.Parameter(inf(m)[0]), lambda m: m.nn.Parameter(inf(m)[0], requires_grad=False).is_inference(),
              lambda m: m.nn.Parameter(inf(m)[1]), lambda m: m.ones(2, 3, 8).split([3, 3], dim=-1),
              lambda m: m.ones(2, 3, 8).split([3, 3], dim=2)]:
        assert _outcome(lambda: c(torch)) == _outcome(lambda: c(ft))


def test_abs_of_complex_casts_into_out():
    # abs of a complex input is computed real and cast into out= (torch's complex abs); a real input's out= must
    # have its dtype ("Found dtype ..."), as the other unary kernels'
    for c in [lambda m: m.abs(m.tensor([3 + 4j, -1j]), out=m.empty(2, dtype=m.float64)).tolist(),
              lambda m: m.abs(m.tensor([3 + 4j, -1j]), out=m.empty(2, dtype=m.complex64)).tolist(),
              lambda m: m.abs(m.tensor([3 + 4j, -1j]), out=m.empty(2, dtype=m.int64)),
              lambda m: m.absolute(m.tensor([3 + 4j, -1j]), out=m.empty(2, dtype=m.float64)).dtype == m.float64,
              lambda m: m.abs(m.ones(2), out=m.empty(2, dtype=m.float64)),
              lambda m: m.abs(m.tensor([-3, 2]), out=m.empty(2, dtype=m.int8))]:
        assert _outcome(lambda: c(torch)) == _outcome(lambda: c(ft))
