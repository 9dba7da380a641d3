"""Parity with torch 2.13 for discrepancies a meta-learning red team found: non-reentrant checkpointing under
``create_graph=True`` with inputs that require no grad, optimizers built with ``differentiable=True`` (a backward
through ``step()``), non-tensor ``inputs`` of ``autograd.grad`` / ``backward``, and a MultivariateNormal over an
empty event. Each case runs the same code on both libraries."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

LIBS = (torch, ft)


def _np(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=np.float64)


def _outcome(fn, lib):
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return type(e).__name__, str(e)


def _same(a, b, tol=1e-5):
    if isinstance(a, tuple) and a and isinstance(a[0], str):
        assert a == b
        return
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, (bool, str, int)):
            assert x == y
        else:
            np.testing.assert_allclose(_np(y), _np(x), rtol=tol, atol=tol)


def _check(fn, tol=1e-5, error=False):
    """``fn(lib)``'s results (or error) alike; ``error``: torch's is an error (else it must not be one)."""
    want = _outcome(fn, torch)
    assert (isinstance(want, tuple) and isinstance(want[0], str)) == error
    _same(want, _outcome(fn, ft), tol)


# ---- checkpoint(use_reentrant=False) under create_graph -----------------------------------------------------------
_W = [[0.3, -0.2], [0.1, 0.4]]
_X = [[1.0, 2.0], [0.5, -1.0]]


def _second_order(lib, region, args):
    w = lib.tensor(_W, requires_grad=True)
    h = lib.utils.checkpoint.checkpoint(region(lib, w), *args(lib, w), use_reentrant=False)
    g, = lib.autograd.grad(h.pow(2).sum(), w, create_graph=True)
    return g, lib.autograd.grad(g.sum(), w)[0]


def test_checkpoint_create_graph_input_without_grad():
    _check(lambda lib: _second_order(lib, lambda lib, w: lambda a, ww: lib.tanh(a @ ww),
                                     lambda lib, w: (lib.tensor(_X), w)))


def test_checkpoint_create_graph_closed_over_constant():
    def region(lib, w):
        x = lib.tensor(_X)
        return lambda ww: lib.tanh(x @ ww)
    _check(lambda lib: _second_order(lib, region, lambda lib, w: (w,)))


def test_checkpoint_create_graph_integer_index():
    _check(lambda lib: _second_order(lib, lambda lib, w: lambda b, idx: lib.tanh(b[idx]),
                                     lambda lib, w: (w, lib.tensor([1, 0]))))


def test_checkpoint_create_graph_module_gradient_penalty():
    def run(lib):
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
        with lib.no_grad():
            for p in net.parameters():
                p.copy_(lib.linspace(-1, 1, p.numel()).view_as(p))
        x = lib.tensor([[0.1, 0.2, 0.3], [-0.5, 0.4, 1.0]])
        out = lib.utils.checkpoint.checkpoint(net, x, use_reentrant=False)
        gs = lib.autograd.grad(out.pow(2).sum(), list(net.parameters()), create_graph=True)
        sum(g.pow(2).sum() for g in gs).backward()
        return [p.grad for p in net.parameters()]
    _check(run, 1e-4)


def test_checkpoint_create_graph_dropout_recomputes_the_same_mask():
    """(a random key the region read is an input of its differentiable backward: the mask stays the forward's)"""
    ft.manual_seed(0)
    F = ft.nn.functional
    w = ft.randn(50, requires_grad=True)
    x = ft.randn(50)
    h = ft.utils.checkpoint.checkpoint(lambda ww: F.dropout(ww * x, 0.5), w, use_reentrant=False)
    g, = ft.autograd.grad(h.pow(2).sum(), w, create_graph=True)
    m = (h != 0).float()
    np.testing.assert_allclose(_np(g), _np(4 * h * x * m), rtol=1e-5, atol=1e-6)
    g2, = ft.autograd.grad(g.sum(), w)
    np.testing.assert_allclose(_np(g2), _np(2 * (2 * x * m) ** 2), rtol=1e-5, atol=1e-6)


# ---- optimizers with differentiable=True ----------------------------------------------------------------------------
def _through_step(cls_name, steps=2, **kw):
    def run(lib):
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w1 = w.clone()
        opt = getattr(lib.optim, cls_name)([w1], differentiable=True, **kw)
        for _ in range(steps):
            loss = ((w1 - 1) ** 2 * lib.tensor([1.0, 3.0, 0.5])).sum()
            w1.grad, = lib.autograd.grad(loss, w1, create_graph=True)
            opt.step()
        ((w1 - 2) ** 2).sum().backward()
        state = sorted((k, v.requires_grad) for k, v in opt.state[w1].items())
        return [w1, w1.requires_grad, w.grad] + [x for kv in state for x in kv]
    return run


@pytest.mark.parametrize("cls_name,kw", [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, steps=1, momentum=0.9, centered=True, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.01, rho=0.5, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, steps=1, weight_decay=0.1, maximize=True)),
    ("RAdam", dict(steps=8, weight_decay=0.1)),  # (its rectified update from step 6)
    ("RAdam", dict(steps=7, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
])
def test_differentiable_step(cls_name, kw):
    _check(_through_step(cls_name, **kw), 1e-4)


def test_differentiable_step_torch_version_error():
    """(torch's formulas modify a tensor their backward saved: its version error, in both; Adamax's names another
    of the modified tensors than torch's, so only its type is compared)"""
    _check(_through_step("RMSprop", steps=3, lr=0.01, centered=True), error=True)
    want = _outcome(_through_step("Adamax", steps=3, lr=0.01), torch)
    got = _outcome(_through_step("Adamax", steps=3, lr=0.01), ft)
    assert want[0] == got[0] == "RuntimeError"
    assert "modified by an inplace operation" in want[1] and "modified by an inplace operation" in got[1]


def test_differentiable_step_amsgrad_one_step():
    _check(_through_step("Adam", steps=1, lr=0.1, amsgrad=True), 1e-4)


@pytest.mark.parametrize("cls_name,kw", [("SGD", {}), ("SGD", dict(momentum=0.5)), ("Adam", {}), ("AdamW", {})])
def test_differentiable_step_learned_lr(cls_name, kw):
    """The meta-learning pattern: the gradient reaches a tensor learning rate through ``step()`` (torch's own
    in-place version error where its formulas modify a saved tensor, SGD with momentum's second step)."""
    def run(lib):
        w = lib.tensor([0.5, -1.0], requires_grad=True)
        lr = lib.tensor(0.1, requires_grad=True)
        w1 = w.clone()
        opt = getattr(lib.optim, cls_name)([w1], lr=lr, differentiable=True, **kw)
        for _ in range(2):
            w1.grad, = lib.autograd.grad(((w1 - 1) ** 2).sum(), w1, create_graph=True)
            opt.step()
        ((w1 - 2) ** 2).sum().backward()
        return [w1, w.grad, lr.grad]
    _check(run, 1e-4, error=cls_name == "SGD" and bool(kw))


@pytest.mark.parametrize("cls_name", ["SGD", "Adam", "AdamW"])
def test_differentiable_step_of_a_leaf_parameter(cls_name):
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = getattr(lib.optim, cls_name)([p], lr=0.1, differentiable=True)
        p.grad = lib.tensor([1.0, 1.0])
        opt.step()
        return [p]
    _check(run, error=True)
    # (a non-leaf parameter is refused without differentiable=True)
    _check(lambda lib: getattr(lib.optim, cls_name)([lib.tensor([1.0], requires_grad=True).clone()]), error=True)


def test_differentiable_state_dict():
    def run(lib):
        w1 = lib.tensor([0.5, -1.0], requires_grad=True).clone()
        opt = lib.optim.Adam([w1], differentiable=True)
        w1.grad = lib.ones(2)
        opt.step()
        sd = opt.state_dict()
        return sorted(sd["state"][0]) + [sd["state"][0]["step"], sd["param_groups"][0]["differentiable"]]
    _check(run)


# ---- autograd.grad / backward(inputs=) with non-tensor inputs -------------------------------------------------------
@pytest.mark.parametrize("inputs", [[None], [1.0], [3], ("a", "x"), ("a", None), "s"])
def test_grad_inputs_not_tensors(inputs):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        ins = [a if i == "a" else i for i in inputs] if isinstance(inputs, list | tuple) else inputs
        return list(lib.autograd.grad((a * 2).sum(), ins))
    _check(run, error=True)
    _check(lambda lib: list(lib.autograd.grad(lib.tensor(1.0), inputs)), error=True)  # (outputs checked first)


@pytest.mark.parametrize("inputs", [[None], [1.0], ("a", "x")])
def test_backward_inputs_not_tensors(inputs):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        (a * 2).sum().backward(inputs=[a if i == "a" else i for i in inputs])
        return [a.grad]
    _check(run, error=True)


def test_backward_inputs_gradient_edges():
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 3
        (b * 2).sum().backward(inputs=[lib.autograd.graph.get_gradient_edge(b)])  # (captured: nothing written)
        first = a.grad
        b = a * 3
        (b * 2).sum().backward(inputs=[lib.autograd.graph.get_gradient_edge(a)])
        return [first is None, a.grad]
    _check(run)


# ---- MultivariateNormal over an empty event -------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix"])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_mvn_empty_event_log_prob(kind, batch):
    def run(lib):
        d = lib.distributions.MultivariateNormal(lib.zeros(*batch, 0), **{kind: lib.eye(0)})
        return [d.entropy(), d.log_prob(lib.zeros(0))]
    _check(run, error=True)
