"""The legacy spellings real scripts still use, against real torch: ``torch.Tensor(2, 3)``/``torch.Tensor(data)``,
``torch.FloatTensor`` & co (construct, ``isinstance``, ``t.type(...)``, ``set_default_tensor_type``),
``torch.pi/e/inf/nan/newaxis``, ``torch.typename``, ``torch.get_device``, ``nn.init``'s un-underscored names and
``nn.DataParallel`` without an accelerator. Values, dtypes, shapes, and exception types and messages."""
from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import same


CTOR = {
    "sizes": lambda L: L.Tensor(2, 3).shape,
    "one size": lambda L: L.Tensor(4).shape,
    "zero size": lambda L: L.Tensor(0),
    "numpy int size": lambda L: L.Tensor(np.int64(3)).shape,
    "Size": lambda L: L.Tensor(L.Size([2, 1])).shape,
    "empty Size": lambda L: L.Tensor(L.Size([])).shape,
    "size kw": lambda L: L.Tensor(size=(2, 3)).shape,
    "nothing": lambda L: L.Tensor(),
    "float list": lambda L: L.Tensor([1.5, -2.0]),
    "int list": lambda L: L.Tensor([[1, 2], [3, 4]]),
    "bool list": lambda L: L.Tensor([True, False]),
    "tuple is data": lambda L: L.Tensor((2, 3)),
    "empty list": lambda L: L.Tensor([]),
    "numpy int64": lambda L: L.Tensor(np.arange(3)),
    "numpy float64": lambda L: L.Tensor(np.ones(2)),
    "device kw": lambda L: L.Tensor([1, 2], device="cpu"),
    "tensor alias": lambda L: L.Tensor(L.arange(3)),
    "alias of a leaf": lambda L: L.Tensor(L.ones(2, requires_grad=True)),
    "dtype kw": lambda L: L.Tensor([1, 2], dtype=L.float64),
    "unknown kw": lambda L: L.Tensor(2, foo=1),
    "float arg": lambda L: L.Tensor(2.5),
    "str arg": lambda L: L.Tensor("a"),
    "float size": lambda L: L.Tensor(2, 3.0),
    "list size": lambda L: L.Tensor(2, [1]),
    "negative": lambda L: L.Tensor(-1),
    "ragged": lambda L: L.Tensor([[1], [2, 3]]),
    "typed list": lambda L: L.FloatTensor([1, 2]),
    "typed sizes": lambda L: (L.LongTensor(2, 3).shape, L.LongTensor(2, 3).dtype == L.int64),
    "long truncates": lambda L: L.LongTensor([1.7, -2.7]),
    "every type": lambda L: [t([1, 0]) for t in (L.FloatTensor, L.DoubleTensor, L.HalfTensor, L.ByteTensor,
                                                  L.CharTensor, L.ShortTensor, L.IntTensor, L.LongTensor,
                                                  L.BoolTensor)],
    "bfloat16 type": lambda L: (L.BFloat16Tensor([1.5]).dtype == L.bfloat16, L.BFloat16Tensor([1.5]).float()),
    "typed empty": lambda L: L.DoubleTensor(),
    "typed same dtype alias": lambda L: L.FloatTensor(L.ones(2)),
    "typed other dtype": lambda L: L.FloatTensor(L.ones(2, dtype=L.int64)),
    "typed numpy": lambda L: L.LongTensor(np.ones(2)),
    "typed byte overflow": lambda L: L.ByteTensor([300]),
    "typed float arg": lambda L: L.FloatTensor(2.5),
    "typed dtype kw": lambda L: L.FloatTensor([1], dtype=L.float64),
    "typed device cpu": lambda L: L.FloatTensor([1], device="cpu"),
    "typed device meta": lambda L: L.FloatTensor(2, device="meta"),
    "typed zero_": lambda L: L.FloatTensor(3).zero_(),
}


@pytest.mark.parametrize("case", sorted(CTOR))
def test_legacy_constructor(case):
    same(CTOR[case])


def test_legacy_constructor_alias_shares_data_and_gradient():
    def f(L):
        x = L.ones(3, requires_grad=True)
        a = L.Tensor(x)
        (a * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        d = L.Tensor(x.detach())
        d[0] = 5.0  # an alias: the write is seen through x
        return a.is_leaf, x.grad, x
    same(f)


def test_legacy_constructor_follows_the_default_dtype():
    def f(L):
        L.set_default_dtype(L.float64)
        try:
            return L.Tensor(2).dtype == L.float64, L.Tensor([1]), L.Tensor(2).type()
        finally:
            L.set_default_dtype(L.float32)
    same(f)


def test_uninitialized_parameter_then_reset_parameters():
    """The custom-layer idiom: ``Parameter(torch.Tensor(out, in))`` filled by an initialiser."""
    def f(L):
        L.manual_seed(0)
        w = L.nn.Parameter(L.Tensor(4, 3))
        L.nn.init.kaiming_uniform_(w, a=math.sqrt(5))
        bound = 1 / math.sqrt(3)
        return w.shape, w.requires_grad, bool((w.abs() <= bound).all())
    same(f)


TYPES = {
    "isinstance": lambda L: (isinstance(L.ones(2), L.FloatTensor), isinstance(L.ones(2), L.DoubleTensor),
                             isinstance(L.ones(2, dtype=L.int64), L.LongTensor), isinstance(3, L.FloatTensor),
                             isinstance(L.nn.Parameter(L.ones(1)), L.FloatTensor),
                             isinstance(L.ones(2), L.cuda.FloatTensor), isinstance(L.ones(2), L.Tensor)),
    "not a Tensor subclass": lambda L: (issubclass(L.FloatTensor, L.Tensor), L.FloatTensor == L.FloatTensor),
    "class attributes": lambda L: (repr(L.FloatTensor), repr(L.cuda.LongTensor), L.FloatTensor.__name__,
                                   L.FloatTensor.is_cuda, L.cuda.FloatTensor.is_cuda,
                                   L.DoubleTensor.dtype == L.float64),
    "type(cls)": lambda L: L.ones(2, dtype=L.int64).type(L.FloatTensor),
    "type(str)": lambda L: L.ones(2, dtype=L.int64).type("torch.DoubleTensor"),
    "type(Tensor)": lambda L: L.ones(1, dtype=L.int64).type(L.Tensor),
    "type(dtype)": lambda L: L.ones(1).type(L.int32),
    "type()": lambda L: (L.ones(1).type(), L.ones(1, dtype=L.uint8).type(), L.ones(1, dtype=L.bool).type()),
    "type unknown": lambda L: L.ones(1).type("torch.FooTensor"),
    "Module.type": lambda L: [p.dtype == L.float64 for p in L.nn.Linear(2, 2).type(L.DoubleTensor).parameters()],
    "pickle": lambda L: (pickle.loads(pickle.dumps(L.FloatTensor)) is L.FloatTensor,
                         pickle.loads(pickle.dumps(L.cuda.IntTensor)) is L.cuda.IntTensor),
}


@pytest.mark.parametrize("case", sorted(TYPES))
def test_legacy_types(case):
    same(TYPES[case])


@pytest.mark.parametrize("spec", ["DoubleTensor", "torch.DoubleTensor", "LongTensor", "torch.Foo"])
def test_set_default_tensor_type(spec):
    def f(L):
        t = getattr(L, spec) if "." not in spec else spec
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                L.set_default_tensor_type(t)
                return L.get_default_dtype() == L.float64, L.ones(1), L.Tensor(1).type(), \
                    [(x.category.__name__, str(x.message)[:120]) for x in w]
            finally:
                L.set_default_dtype(L.float32)
    same(f)


def test_constants_typename_get_device():
    def f(L):
        nan = L.nan
        return (L.pi, L.e, L.inf, math.isnan(nan), L.newaxis, L.ones(3)[L.newaxis].shape,
                L.typename(L.ones(1)), L.typename(L.ones(1, dtype=L.int64)), L.typename(3), L.typename("s"),
                L.typename(L.FloatTensor), L.typename(L.nn.Parameter(L.ones(1))),
                L.get_device(L.ones(1)), L.ones(1).get_device(),
                L.full((2,), -L.inf).tolist(), L.tensor([1.0]).masked_fill(L.tensor([True]), L.nan).isnan().item())
    out = same(f)
    assert out[1][0] == math.pi and out[1][2] == math.inf


def test_typename_of_modules_names_their_classes():
    # torch's names its own module path; the facade's its own: both 'package.path.Class'
    assert ft.typename(ft.nn.Linear(1, 1)).endswith(".Linear")
    assert torch.typename(torch.nn.Linear(1, 1)) == "torch.nn.modules.linear.Linear"
    assert ft.typename(ft.nn.Linear(1, 1)).startswith("functorch_lite.nn.")


def test_module_and_optimizer_errors_name_the_object_by_typename():
    def f(L):
        m = L.nn.Linear(1, 1)
        msgs = []
        for bad in (lambda: setattr(m, "weight", L.ones(1)), lambda: m.register_buffer("b", 3),
                    lambda: L.optim.SGD(L.ones(1), lr=0.1), lambda: L.optim.SGD([3], lr=0.1)):
            try:
                bad()
            except TypeError as e:
                msgs.append(str(e))
        return msgs
    same(f)


@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform",
                                  "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_init_names(name):
    shapes = {"dirac": (2, 2, 3), "sparse": (4, 3)}
    args = {"constant": (0.5,), "sparse": (0.5,)}

    def f(L):
        L.manual_seed(0)
        t = L.ones(shapes.get(name, (3, 3)))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = getattr(L.nn.init, name)(t, *args.get(name, ()))
        out = [(x.category.__name__, str(x.message)) for x in w], r is t, getattr(L.nn.init, name).__name__
        if name in ("constant", "eye", "dirac"):
            out += (t,)  # deterministic fills: the values too
        return out
    same(f)


def test_data_parallel_without_an_accelerator():
    def f(L):
        L.manual_seed(0)
        inner = L.nn.Linear(2, 3)
        with L.no_grad():
            inner.weight.copy_(L.tensor([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]]))
            inner.bias.copy_(L.tensor([0.1, -0.2, 0.3]))
        m = L.nn.DataParallel(inner)
        x = L.arange(8.0).reshape(4, 2)
        y = m(x)
        y.sum().backward()
        sd = m.state_dict()
        plain = L.nn.Linear(2, 3)
        plain.load_state_dict({k[len("module."):]: v for k, v in sd.items()})
        return (m.device_ids, m.module is inner, list(sd), y, inner.weight.grad, repr(m), plain(x),
                isinstance(m, L.nn.Module), hasattr(m, "output_device"))
    same(f)
    same(lambda L: L.nn.parallel.DataParallel is L.nn.DataParallel)


def test_dense_tensor_flags():
    def f(L):
        t = L.ones(2, 3)
        x = L.ones(3, requires_grad=True) * 2
        flags = [getattr(t, n) for n in ("is_sparse", "is_sparse_csr", "is_quantized", "is_nested", "is_mkldnn",
                                          "is_mps", "is_xla", "is_vulkan", "is_ipu", "is_xpu", "is_maia", "is_mtia")]
        return (flags, t.is_shared(), t.is_distributed(), t.is_set_to(t[:]), t.is_set_to(t.view(2, 3)),
                t.is_set_to(t.clone()), t.is_set_to(t[1:]), t.is_set_to(t.t()), t.to_dense() is t,
                t.to_dense(L.float64).dtype == L.float64, t.dense_dim(), t.sparse_dim(), t.output_nr,
                [u.output_nr for u in x.unbind()])
    same(f)
    same(lambda L: L.ones(2).is_coalesced())


HOST_MAPS = {
    "apply_": lambda L: L.arange(4.0).apply_(lambda v: v * 2 + 1),
    "apply_ on int truncates": lambda L: L.arange(4).apply_(lambda v: v * 2.7),
    "apply_ returns self": lambda L: (lambda t: t.apply_(lambda v: v) is t)(L.ones(2)),
    "apply_ through a view": lambda L: (lambda t: (t[::2].apply_(lambda v: -v), t)[1])(L.arange(4.0)),
    "apply_ bool": lambda L: L.tensor([True, False]).apply_(lambda v: not v),
    "apply_ complex": lambda L: L.tensor([1 + 1j]).apply_(lambda v: v * 1j),
    "apply_ gets Python scalars": lambda L: (lambda seen: (L.tensor([1.5]).apply_(lambda v: seen.append(type(v)) or v),
                                                           L.tensor([1]).apply_(lambda v: seen.append(type(v)) or v),
                                                           seen)[2])([]),
    "apply_ requires grad": lambda L: L.ones(2, requires_grad=True).apply_(lambda v: v),
    "apply_ bad result": lambda L: L.ones(2).apply_(lambda v: "x"),
    "map_": lambda L: L.arange(3.0).map_(L.ones(3), lambda a, b: a + b * 10),
    "map_ broadcasts other": lambda L: L.zeros(2, 3).map_(L.arange(3.0), lambda a, b: b),
    "map_ other dtype": lambda L: L.zeros(2).map_(L.ones(2, dtype=L.int64), lambda a, b: a + b),
    "map_ other requires grad": lambda L: L.zeros(3).map_(L.ones(3, requires_grad=True), lambda a, b: a + b),
    "map2_": lambda L: L.zeros(3).map2_(L.ones(3), L.arange(3.0), lambda a, b, c: a + b + c),
    "map2_ x dtype": lambda L: L.zeros(3).map2_(L.ones(3, dtype=L.int64), L.ones(3), lambda a, b, c: a),
    "map2_ y dtype": lambda L: L.zeros(3).map2_(L.ones(3), L.ones(3, dtype=L.int64), lambda a, b, c: a),
}


@pytest.mark.parametrize("case", sorted(HOST_MAPS))
def test_host_callables(case):
    same(HOST_MAPS[case])


def test_apply_bumps_the_version_counter():
    t = ft.ones(3)
    v = t._version
    t.apply_(lambda x: x + 1)
    assert t._version > v and t.tolist() == [2.0, 2.0, 2.0]
