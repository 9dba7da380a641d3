"""Arguments PyTorch's argument parser refuses: None where a tensor is required (counted without ``self`` in a
method; a matrix product's every operand), a bool or float ``k``, ``*_like`` of a non-tensor, an empty ``cat``, and ``deepcopy`` of a tensor that
is not a graph leaf. Each case runs under torch and functorch_lite: the same exception type and message (or the
same result). (Where PyTorch's parser has several overloads for an op, ``eq(x, None)``, it words the error as
"received an invalid combination of arguments"; the facade's TypeError names the argument as above.)"""
import copy
import inspect

import pytest

import functorch_lite as ft
from functorch_lite.ops._registry import OPS, _required

from _parity import same

CASES = {
    "add-none-other": lambda m: m.add(m.ones(3), None),
    "add-none-input": lambda m: m.add(None, m.ones(3)),
    "add-method-none": lambda m: m.ones(3).add(None),
    "mul_-method-none": lambda m: m.ones(3).mul_(None),
    "sub-method-none": lambda m: m.ones(3).sub(None),
    "matmul-none-input": lambda m: m.matmul(None, m.ones(3)),
    "linear-none-input": lambda m: m.nn.functional.linear(None, m.ones(2, 3)),
    "linear-none-bias-ok": lambda m: m.nn.functional.linear(m.ones(1, 3), m.ones(2, 3), None),
    # the matrix products' other operands (declared ``required``): PyTorch's parser names each
    "matmul-none-other": lambda m: m.matmul(m.ones(2, 2), None),
    "matmul-method-none": lambda m: m.ones(2, 2).matmul(None),
    "mm-none": lambda m: m.mm(m.ones(2, 2), None),
    "mm-method-none": lambda m: m.ones(2, 2).mm(None),
    "bmm-none": lambda m: m.bmm(m.ones(1, 2, 2), None),
    "mv-none": lambda m: m.mv(m.ones(2, 2), None),
    "dot-none": lambda m: m.dot(m.ones(2), None),
    "vdot-none": lambda m: m.vdot(m.ones(2), None),
    "outer-none": lambda m: m.outer(m.ones(2), None),
    "kron-none": lambda m: m.kron(m.ones(2), None),
    "addmm-none-mat1": lambda m: m.addmm(m.ones(2, 2), None, m.ones(2, 2)),
    "addmm-none-mat2": lambda m: m.addmm(m.ones(2, 2), m.ones(2, 2), None),
    "addmm-method-none": lambda m: m.ones(2, 2).addmm(None, m.ones(2, 2)),
    "baddbmm-none": lambda m: m.baddbmm(m.ones(1, 2, 2), m.ones(1, 2, 2), None),
    "addbmm-none": lambda m: m.addbmm(m.ones(2, 2), None, m.ones(1, 2, 2)),
    "addmv-none": lambda m: m.addmv(m.ones(2), m.ones(2, 2), None),
    "addr-none": lambda m: m.addr(m.ones(2, 2), None, m.ones(2)),
    "linear-none-weight": lambda m: m.nn.functional.linear(m.ones(2, 2), None),
    "take-none": lambda m: m.take(m.ones(2, 2), None),
    "take_along_dim-none": lambda m: m.take_along_dim(m.ones(2, 2), None, 0),
    "cdist-none": lambda m: m.cdist(m.ones(2, 2), None),
    "prelu-none": lambda m: m.nn.functional.prelu(m.ones(2, 2), None),
    "exp-none": lambda m: m.exp(None),
    "ones_like-none": lambda m: m.ones_like(None),
    "zeros_like-int": lambda m: m.zeros_like(3),
    "full_like-none": lambda m: m.full_like(None, 2),
    "rand_like-list": lambda m: m.rand_like([1.0, 2.0]),
    "empty_like-none": lambda m: m.empty_like(None),
    "cat-empty-list": lambda m: m.cat([]),
    "cat-empty-tuple": lambda m: m.cat(()),
    "stack-empty": lambda m: m.stack([]),
    "topk-k-bool": lambda m: m.topk(m.ones(3), True),
    "topk-k-float": lambda m: m.topk(m.ones(3), 2.0),
    "topk-k-tensor": lambda m: tuple(m.topk(m.arange(4.0), m.tensor(2))),
    "kthvalue-k-bool": lambda m: m.kthvalue(m.ones(3), True),
    "deepcopy-non-leaf": lambda m: copy.deepcopy(m.ones(3, requires_grad=True) * 2),
    "deepcopy-leaf": lambda m: copy.deepcopy(m.ones(3, requires_grad=True)),
    "deepcopy-detached": lambda m: copy.deepcopy((m.ones(3, requires_grad=True) * 2).detach()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_outcome_as_torch(name):
    same(CASES[name])


def test_deepcopy_of_a_weight_norm_module_refused_as_in_torch():
    def fn(m):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lin = m.nn.utils.weight_norm(m.nn.Linear(2, 2))
        return copy.deepcopy(lin)
    kind, msg = same(fn)
    assert kind == "RuntimeError" and "graph leaves" in msg


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.function and _required(op)))
def test_every_op_names_a_none_tensor_argument(name):
    """Every op's generated function refuses None as its first tensor with PyTorch's TypeError (not an
    AttributeError from deep inside); a broadcasting op's method form numbers its next operand without
    ``self``."""
    op = OPS[name]
    req = _required(op)
    positional = [p for p in op.params if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
    with pytest.raises(TypeError) as e:
        op.fn(*[None] * len(positional))
    assert str(e.value) == f"{name}(): argument '{req[0]}' (position 1) must be Tensor, not NoneType"
    if op.method and len(req) > 1:
        meth = op.fn_method
        second = [p.name for p in op.params].index(req[1])
        args = [ft.ones(2)] + [None] * (len(positional) - 1)
        with pytest.raises(TypeError) as e:
            meth(*args)
        assert str(e.value) == f"{name}(): argument '{req[1]}' (position {second}) must be Tensor, not NoneType"
        # (the call's signature without out=: torch's Tensor methods take none)
        call = inspect.signature(op.fn)
        assert inspect.signature(meth) == call.replace(parameters=[p for p in call.parameters.values()
                                                                   if p.name != "out"])
