"""``nn.SyncBatchNorm`` against real torch without a process group (the facade never has one; torch's falls back to
``F.batch_norm`` then): outputs, running statistics and gradients over 2-d to 5-d input in train and eval mode, the
constructor's options, ``convert_sync_batchnorm`` on a nested model (types, shared parameters and buffers, training
flags, state_dict keys, repr) and the input checks."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import same
from _scenario import both


def _x(L, shape):
    return L.tensor(np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32), requires_grad=True)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 4), (2, 3, 2, 3, 2)])
@pytest.mark.parametrize("kw", [{}, dict(momentum=None), dict(affine=False), dict(track_running_stats=False),
                                dict(bias=False, eps=1e-3)])
def test_train_then_eval(shape, kw):
    def run(L):
        bn = L.nn.SyncBatchNorm(3, **kw)
        if bn.weight is not None:
            with L.no_grad():
                bn.weight.copy_(L.tensor([0.5, 1.5, -1.0]))
        x = _x(L, shape)
        outs = []
        for _ in range(2):
            y = bn(x)
            (y * L.arange(float(y.numel())).view(y.shape)).sum().backward()
            outs.append(y)
        bn.eval()
        outs.append(bn(x))
        return outs, x.grad, bn.weight.grad if bn.weight is not None else None, \
            [b for _, b in bn.named_buffers()], list(bn.state_dict()), repr(bn), type(outs[0].grad_fn).__name__
    both(run, rtol=1e-5, atol=1e-5)  # (float32 sums in another order: last-bit differences)


def test_convert_sync_batchnorm():
    def run(L):
        nn = L.nn
        model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4),
                              nn.Sequential(nn.Flatten(), nn.BatchNorm1d(16, affine=False, momentum=0.3)),
                              nn.Linear(16, 2))
        model[2][1].eval()
        weight, running_mean = model[1].weight, model[1].running_mean
        keys = list(model.state_dict())
        converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        return (converted is model, [type(m).__name__ for m in converted.modules()],
                converted[1].weight is weight, converted[1].running_mean is running_mean,
                [m.training for m in converted.modules()], list(converted.state_dict()) == keys, repr(converted),
                converted[2][1].momentum, converted[1].process_group)
    same(run)
    same(lambda L: type(L.nn.SyncBatchNorm.convert_sync_batchnorm(L.nn.BatchNorm1d(2))).__name__)


def test_converted_model_trains_as_before():
    def run(L):
        g = np.random.default_rng(0)
        model = L.nn.Sequential(L.nn.Linear(4, 6), L.nn.BatchNorm1d(6), L.nn.ReLU(), L.nn.Linear(6, 1))
        with L.no_grad():
            for p in model.parameters():
                p.copy_(L.tensor(g.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
        model = L.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        x = L.tensor(g.standard_normal((8, 4)).astype(np.float32))
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(round(loss.item(), 5))
        return losses, [round(v, 5) for v in model[1].running_var.tolist()]
    same(run)


@pytest.mark.parametrize("shape", [(3,), (2, 0, 4)])
def test_input_checks(shape):
    same(lambda L: L.nn.SyncBatchNorm(shape[1] if len(shape) > 1 else 3)(L.zeros(shape)))
