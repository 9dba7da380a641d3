"""torch.func's refusals at the edges of its inputs and outputs, against real torch: a None inside an input
pytree, a function with no output (or a None among its outputs), keyword arguments to jacrev / jacfwd / hessian,
and vmap over ops whose output shape depends on values (torch's own vmap messages). And the message of a host
read inside a transform, which torch runs eagerly and functorch_lite traces: it names the transform, not
compile."""
import warnings

import pytest
import torch

import functorch_lite as ft

CASES = {
    "grad None leaf": lambda L, x: L.func.grad(lambda d: d[0].sum())((x, None)),
    "vjp None leaf": lambda L, x: L.func.vjp(lambda d: d[0], (x, None)),
    "jacrev None leaf": lambda L, x: L.func.jacrev(lambda d: d[0])((x, None)),
    "jvp None primal": lambda L, x: L.func.jvp(lambda a, b: a, (x, None), (x, None)),
    "vmap None leaf in_dims 0": lambda L, x: L.func.vmap(lambda d: d[0])((x.reshape(1, 3), None)),
    "vmap None leaf in_dims None": lambda L, x: L.func.vmap(lambda d: d[0], in_dims=((0, None),))(
        (x.reshape(1, 3), None)),
    "vmap None argument": lambda L, x: L.func.vmap(lambda a, b: a)(x.reshape(1, 3), None),
    "vjp no output": lambda L, x: L.func.vjp(lambda a: None, x),
    "jvp empty output": lambda L, x: L.func.jvp(lambda a: (), (x,), (x,)),
    "jacrev no output": lambda L, x: L.func.jacrev(lambda a: None)(x),
    "jacfwd empty dict output": lambda L, x: L.func.jacfwd(lambda a: {})(x),
    "vjp None among outputs": lambda L, x: L.func.vjp(lambda a: (None, a), x)[0],
    "jvp None among outputs": lambda L, x: L.func.jvp(lambda a: (None, a), (x,), (x,))[0],
    "jacrev None among outputs": lambda L, x: L.func.jacrev(lambda a: (a, None))(x),
    "linearize None output": lambda L, x: L.func.linearize(lambda a: None, x)[0],
    "jacrev kwargs": lambda L, x: L.func.jacrev(lambda a, s=1.0: a * s)(x, s=2.0),
    "jacfwd kwargs": lambda L, x: L.func.jacfwd(lambda a, s=1.0: a * s)(x, s=2.0),
    "hessian kwargs": lambda L, x: L.func.hessian(lambda a, s=1.0: (a * s).sum())(x, s=2.0),
    "vmap nonzero": lambda L, x: L.func.vmap(lambda a: a.nonzero())(L.ones(2, 2)),
    "vmap boolean mask": lambda L, x: L.func.vmap(lambda a: a[a > 0])(L.ones(2, 2)),
    "vmap unique": lambda L, x: L.func.vmap(lambda a: a.unique())(L.ones(2, 2)),
}


def _outcome(fn, L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(L, L.ones(3))
        except Exception as e:  # noqa: BLE001 (the error itself is compared)
            return "raised", isinstance(e, RuntimeError), isinstance(e, ValueError), isinstance(e, TypeError), \
                str(e)
    return "ok", repr(r)


@pytest.mark.parametrize("name", sorted(CASES))
def test_edge(name):
    assert _outcome(CASES[name], ft) == _outcome(CASES[name], torch)


def test_host_read_inside_a_transform_names_the_transform():
    with pytest.raises(RuntimeError, match=r"^functorch_lite\.func: reading tensor values inside a function "
                                           r"transform \(grad, .*trace the function with JAX"):
        ft.func.grad(lambda a: a.sum() * float(a.sum().numpy()))(ft.ones(2))  # (.item() reads it, as torch's)
