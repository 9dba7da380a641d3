"""In-place sampling (Tensor.uniform_/normal_/bernoulli_) and torch.multinomial: statistics (the RNGs differ
from torch's), reproducibility under manual_seed, and PyTorch's errors."""
import re

import numpy as np
import pytest
import torch

import functorch_lite as ft


def test_tensor_sampling_methods():
    ft.manual_seed(1)
    u = ft.empty(2000).uniform_(-2, 3).numpy()
    assert u.min() >= -2 and u.max() < 3 and np.mean(u) == pytest.approx(0.5, abs=0.1)
    n = ft.empty(4000, dtype=ft.float64).normal_(1.0, 0.5).numpy()
    assert np.mean(n) == pytest.approx(1.0, abs=0.05) and np.std(n) == pytest.approx(0.5, rel=0.05)
    b = ft.empty(4000, dtype=ft.int64).bernoulli_(0.25).numpy()
    assert set(np.unique(b)) <= {0, 1} and np.mean(b) == pytest.approx(0.25, abs=0.04)
    for call in (lambda m: m.zeros(3, dtype=m.int64).uniform_(), lambda m: m.zeros(3).uniform_(2, 1),
                 lambda m: m.zeros(3, requires_grad=True).normal_()):
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
            call(ft)


def test_multinomial_statistics_and_shapes():
    ft.manual_seed(0)
    p = ft.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    draws = ft.multinomial(p, 4000, replacement=True).numpy()
    assert draws.shape == (2, 4000) and str(ft.multinomial(p, 1).dtype) == "torch.int64"
    np.testing.assert_allclose(np.bincount(draws[0], minlength=3) / 4000, [0.1, 0.2, 0.7], atol=0.03)
    assert (draws[1] != 2).all()
    w = p.multinomial(2).numpy()  # without replacement: distinct indices, zero-weight never drawn
    assert (w[:, 0] != w[:, 1]).all() and (w[1] != 2).all()
    assert ft.multinomial(ft.ones(5), 5).sort().values.tolist() == [0, 1, 2, 3, 4]
    ft.manual_seed(3)
    a = ft.multinomial(ft.ones(10), 3).tolist()
    ft.manual_seed(3)
    assert ft.multinomial(ft.ones(10), 3).tolist() == a


@pytest.mark.parametrize("call", [
    lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3),
    lambda m: m.multinomial(m.tensor([-1.0, 2.0]), 1),
    lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
    lambda m: m.multinomial(m.tensor([1, 2]), 1),
    lambda m: m.multinomial(m.ones(2, 2, 2), 1),
])
def test_multinomial_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
        call(ft)
