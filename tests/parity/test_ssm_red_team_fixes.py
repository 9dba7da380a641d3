"""State-space-model red team's findings (conv on an empty spatial dim, keyword-only arguments, complex clipping,
half polar), against real torch: the same result or the same exception type and message."""
import pytest
import torch

import functorch_lite as ft


def _outcome(m, f):
    try:
        r = f(m)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", tuple(r.shape) if hasattr(r, "shape") else r


CASES = {
    "conv1d_empty_length": lambda m: m.nn.functional.conv1d(m.zeros(1, 3, 0), m.ones(3, 1, 4), groups=3, padding=3),
    "conv1d_module_empty_length": lambda m: m.nn.Conv1d(3, 3, 4, groups=3, padding=3)(m.zeros(2, 3, 0)),
    "conv2d_empty_height": lambda m: m.nn.functional.conv2d(m.zeros(1, 3, 0, 4), m.ones(2, 3, 1, 1), padding=1),
    "conv3d_empty_depth": lambda m: m.nn.functional.conv3d(m.zeros(1, 3, 0, 2, 2), m.ones(2, 3, 1, 1, 1), padding=1),
    "conv_transpose1d_empty": lambda m: m.nn.functional.conv_transpose1d(m.zeros(1, 3, 0), m.ones(3, 1, 2), groups=3),
    "conv_transpose2d_empty": lambda m: m.nn.functional.conv_transpose2d(m.zeros(1, 3, 0, 2), m.ones(3, 1, 2, 2)),
    "conv1d_empty_batch_ok": lambda m: m.nn.functional.conv1d(m.zeros(0, 3, 0), m.ones(3, 1, 4), groups=3, padding=3),
    "conv1d_no_padding": lambda m: m.nn.functional.conv1d(m.zeros(1, 3, 0), m.ones(3, 1, 4), groups=3),
    "sdpa_scale_positional": lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(1, 2, 2), m.ones(1, 2, 2), m.ones(1, 2, 2), None, 0.0, False, 0.5),
    "sdpa_scale_keyword": lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(1, 2, 2), m.ones(1, 2, 2), m.ones(1, 2, 2), None, 0.0, False, scale=0.5),
    "polar_half": lambda m: m.polar(m.ones(2).half(), m.zeros(2).half()),
    "gelu_approximate_positional": lambda m: m.nn.functional.gelu(m.ones(2, 3), "tanh"),
    "gelu_approximate_keyword": lambda m: m.nn.functional.gelu(m.ones(2, 3), approximate="tanh"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_torch(name):
    assert _outcome(ft, CASES[name]) == _outcome(torch, CASES[name])


@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_value_of_a_complex_gradient(foreach):
    for m in (torch, ft):
        p = m.nn.Parameter(m.tensor([3 + 4j]))
        p.grad = m.tensor([1 + 1j])
        with pytest.raises(NotImplementedError, match="clamp is not supported for complex types"):
            m.nn.utils.clip_grad_value_([p], 0.5, foreach=foreach)
