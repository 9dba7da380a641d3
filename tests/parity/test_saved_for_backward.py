"""What an op saves for its backward, as torch's generated code decides it: a value one input's gradient formula
alone uses is saved only when that input needs a gradient, one that several formulas use whenever the node is made,
and a Python number operand that a formula uses (``x * 2``, ``x / 2``) as a wrapped tensor. Two observable effects,
against torch eager: an in-place write (under no_grad) to an input between the forward and the backward raises
"one of the variables needed for gradient computation has been modified by an inplace operation" exactly where
torch's does, and a second backward through the graph raises "Trying to backward through the graph a second time"
exactly where torch's does (a node that saved nothing can be run again)."""
import warnings

import pytest
import torch

import functorch_lite as ft

OPS = {
    "mul": lambda T, x, t: x * t, "mul scalar": lambda T, x, t: x * 2, "rmul scalar": lambda T, x, t: 2.5 * x,
    "mul bool": lambda T, x, t: x * True, "div": lambda T, x, t: x / t, "div scalar": lambda T, x, t: x / 2,
    "rdiv": lambda T, x, t: 2 / x, "div rounding None": lambda T, x, t: x.div(t, rounding_mode=None),
    "add": lambda T, x, t: x + t, "sub alpha": lambda T, x, t: x.sub(2, alpha=2),
    "remainder": lambda T, x, t: x.remainder(t), "remainder scalar": lambda T, x, t: x.remainder(2),
    "fmod": lambda T, x, t: x.fmod(t), "fmod scalar": lambda T, x, t: x.fmod(2),
    "atan2": lambda T, x, t: T.atan2(x, t), "hypot": lambda T, x, t: T.hypot(x, t),
    "maximum": lambda T, x, t: T.maximum(x, t), "pow tensor": lambda T, x, t: x.pow(t),
    "pow base": lambda T, x, t: t.pow(x), "where": lambda T, x, t: T.where(t > 2, x, t),
    "addcmul self": lambda T, x, t: T.addcmul(x, t, t, value=2), "addcmul tensor1": lambda T, x, t: T.addcmul(t, x, t),
    "addcdiv self": lambda T, x, t: T.addcdiv(x, t, t + 1, value=2), "addcdiv tensor1": lambda T, x, t: T.addcdiv(t, x, t),
    "addcdiv tensor2": lambda T, x, t: T.addcdiv(t, t, x),
    "lerp scalar weight": lambda T, x, t: T.lerp(x, t, 0.3), "lerp tensor weight": lambda T, x, t: T.lerp(x, t, t / 10),
    "lerp weight needs grad": lambda T, x, t: T.lerp(t, t * 2, x),
    "dot": lambda T, x, t: T.dot(x, t), "outer": lambda T, x, t: T.outer(x, t), "copysign": lambda T, x, t: T.copysign(x, t),
    "masked_fill": lambda T, x, t: x.masked_fill(t > 2, 0.0), "clamp tensor": lambda T, x, t: x.clamp(min=t),
    "mse_loss": lambda T, x, t: T.nn.functional.mse_loss(x, t), "l1_loss": lambda T, x, t: T.nn.functional.l1_loss(x, t),
    "cosine_similarity": lambda T, x, t: T.cosine_similarity(x, t, 0), "exp": lambda T, x, t: x.exp(),
    "sum": lambda T, x, t: x.sum(), "neg": lambda T, x, t: -x,
}


def _modified(T, f, which):
    x = T.tensor([1.5, 2.5], requires_grad=True) * 1
    t = T.tensor([3.0, 4.0])
    y = f(T, x, t)
    with T.no_grad():
        (t if which == "t" else x).add_(1)
    try:
        y.sum().backward()
        return "ok"
    except RuntimeError as e:
        return "modified" if "inplace operation" in str(e) else str(e)


def _twice(T, f):
    x = T.tensor([1.5, 2.5], requires_grad=True)
    z = f(T, x, T.tensor([3.0, 4.0])).sum()
    z.backward()
    try:
        z.backward()
        return "ok", x.grad.tolist()
    except RuntimeError as e:
        return ("freed" if "a second time" in str(e) else str(e)), x.grad.tolist()


@pytest.mark.parametrize("name", list(OPS))
def test_against_torch(name):
    f = OPS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for which in ("x", "t"):
            assert _modified(ft, f, which) == _modified(torch, f, which), which
        (fo, fg), (to, tg) = _twice(ft, f), _twice(torch, f)
        assert fo == to and fg == pytest.approx(tg, rel=1e-5)


def test_fmod_by_a_tensor_is_fmod_backward1():
    x = ft.ones(2, requires_grad=True)
    assert x.fmod(ft.full((2,), 3.0)).grad_fn.name() == "FmodBackward1"
    assert x.fmod(2).grad_fn.name() == "FmodBackward0"
