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
