"""``func.rearrange`` (torch.func's einops-style rearrange) against torch 2.13's: values, shapes, gradients and
the errors of malformed patterns (it was the one name of ``torch.func.__all__`` missing)."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

A = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)

CASES = [
    ("b h w c -> b h w c", {}), ("b h w c -> (b h) w c", {}), ("b h w c -> h (b w) c", {}),
    ("b h w c -> b c h w", {}), ("b h w c -> b (c h w)", {}),
    ("b (h1 h) (w1 w) c -> (b h1 w1) h w c", {"h1": 2, "w1": 2}),
    ("b (h h1) (w w1) c -> b h w (c h1 w1)", {"h1": 2, "w1": 3}),
    ("b ... c -> c b ...", {}), ("... c -> (...) c", {}), ("b h ... -> b (h ...)", {}),
    ("b h w c -> b h w c 1", {}), ("b h w c -> b 1 h w () c", {}), ("b h w c -> (b h w c)", {}),
    ("... -> ...", {}), ("b (h2 h) w c -> h2 b h w c", {"h": 2}),
]


@pytest.mark.parametrize("pattern,lengths", CASES)
def test_values(pattern, lengths):
    t = torch.func.rearrange(torch.tensor(A), pattern, **lengths)
    f = ft.func.rearrange(ft.tensor(A), pattern, **lengths)
    assert tuple(f.shape) == tuple(t.shape)
    np.testing.assert_array_equal(f.numpy(), t.numpy())


def test_list_is_stacked_and_grad_flows():
    xs = [np.full((2, 3), i, np.float32) for i in range(4)]
    t_in = [torch.tensor(x, requires_grad=True) for x in xs]
    f_in = [ft.tensor(x, requires_grad=True) for x in xs]
    w = np.arange(24, dtype=np.float32).reshape(3, 8)
    t = torch.func.rearrange(t_in, "n a b -> b (n a)")
    f = ft.func.rearrange(f_in, "n a b -> b (n a)")
    np.testing.assert_array_equal(f.detach().numpy(), t.detach().numpy())
    (t * torch.tensor(w)).sum().backward()
    (f * ft.tensor(w)).sum().backward()
    for a, b in zip(t_in, f_in):
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())


ERRORS = [
    ("b h w c", {}), ("b h w c -> b h -> w c", {}), ("b h w -> b h w", {}), ("b h w c d -> b h w c d", {}),
    ("b h w c -> b h w", {}), ("b h w c -> b h w c e", {}), ("b h w c -> b h w c", {"e": 2}),
    ("b (h (w c)) -> b h w c", {}), ("b h w c) -> b h w c", {}), ("b (h w c -> b h w c", {}),
    ("b h w c -> b h w c 2", {}), ("b h w . -> b h w", {}), ("b h w c -> b ... h w c", {}),
    ("b (...) -> b ...", {}), ("b b w c -> b w c", {}), ("b h w c! -> b h w c", {}),
    ("b (h1 h) w c -> b h1 h w c", {"h1": 5}), ("b (h1 h) w c -> b h1 h w c", {}),
    ("b (h1 h) w c -> b h1 h w c", {"h1": 2, "h": 3}), ("b (h1 h) w c -> b h1 h w c", {"h1": 0}),
]


@pytest.mark.parametrize("pattern,lengths", ERRORS)
def test_errors(pattern, lengths):
    with pytest.raises(Exception) as te:
        torch.func.rearrange(torch.tensor(A), pattern, **lengths)
    with pytest.raises(Exception) as fe:
        ft.func.rearrange(ft.tensor(A), pattern, **lengths)
    assert type(fe.value).__name__ == type(te.value).__name__
    if "{" not in str(te.value) and "pack" not in str(te.value) and "at once" not in str(te.value):
        assert str(fe.value) == str(te.value)  # (torch names first-class dims d0, d1...; a set prints unordered)
