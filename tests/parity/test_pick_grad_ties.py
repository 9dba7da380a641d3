"""max / min / amax / amin spread their gradient over tied elements as torch's: grad / count (not grad * (1 /
count), 1 ulp apart for a count of 3, which a min-max normalisation of a constant map blows up), against torch."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

NAN = float("nan")


def _grads(m, f, x, dtype):
    x = m.tensor(x, dtype=getattr(m, dtype), requires_grad=True)
    y = f(x)
    return m.autograd.grad(y, x, grad_outputs=m.full(y.shape, 7.0, dtype=y.dtype))[0].float().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name,f", [
    ("amax", lambda x: x.amax()), ("max", lambda x: x.max()), ("min", lambda x: x.min()), ("amin", lambda x: x.amin()),
    ("amax_dim", lambda x: x.amax(1)), ("amax_keepdim", lambda x: x.amax(1, keepdim=True)),
    ("amin_dim0", lambda x: x.amin(0)), ("amax_dims", lambda x: x.amax((0, 1))), ("max_dim", lambda x: x.max(1).values),
])
def test_tie_gradients_as_torch(name, f, dtype):
    x = [[1., 3., 3.], [2., 2., 2.], [NAN, 1., 0.]] if dtype != "float16" or name != "max" else [[0., 0., 0.]] * 3
    np.testing.assert_array_equal(_grads(ft, f, x, dtype), _grads(torch, f, x, dtype))
    z = [0., 0., 0.]
    np.testing.assert_array_equal(_grads(ft, lambda v: v.amax(), z, dtype), _grads(torch, lambda v: v.amax(), z, dtype))


def test_min_max_normalisation_of_a_constant_map():
    res = {}
    for m in (torch, ft):
        z = m.zeros(3, requires_grad=True)
        res[m] = m.autograd.grad(((z - z.min()) / (z.max() - z.min() + 1e-8)).sum(), z)[0].numpy()
    np.testing.assert_array_equal(res[ft], res[torch])
    assert (res[ft] == 0).all()


def test_transforms_and_double_backward():
    for m in (torch, ft):
        z = m.ones(3, requires_grad=True)
        g, = m.autograd.grad(z.amax() * 7, z, create_graph=True)
        assert g.tolist() == [np.float32(7 / 3).item()] * 3
        assert m.func.jvp(lambda v: v.amax(), (m.zeros(3),), (m.tensor([1., 2., 4.]),))[1].item() == \
            np.float32(np.float32(7) / np.float32(3)).item()
        assert m.func.vmap(m.func.grad(lambda v: v.amax() * 7))(m.zeros(2, 3)).tolist() == \
            [[np.float32(7 / 3).item()] * 3] * 2


@pytest.mark.parametrize("x", [[[0., 0.], [1., 1.]], [[0., 0.], [1., -2.], [3., 1.]], [[0., 5.], [1., 1.], [2., 5.5]]])
def test_pdist_inf_ties_get_the_full_gradient(x):
    """torch's _pdist_backward for p=inf: sign(diff) * (|diff| == dist) * grad, every tied coordinate in full."""
    res = []
    for m in (torch, ft):
        t = m.tensor(x, dtype=m.float64, requires_grad=True)
        d = m.pdist(t, p=float("inf"))
        (d * m.arange(1., d.numel() + 1, dtype=m.float64)).sum().backward()
        res.append((d.tolist(), t.grad.numpy()))
    assert res[1][0] == res[0][0]
    np.testing.assert_array_equal(res[1][1], res[0][1])
