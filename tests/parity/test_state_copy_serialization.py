"""RNG state tensors, ``with torch.device(...)``, pickle / copy / deepcopy of tensors and Parameters, the
``weights_only`` allow-list API, meta tensors and dtype-view conflicts in ``save``, load errors and
``torch.utils.data._utils.collate``: the same program in torch and in functorch_lite."""
import collections
import copy
import importlib
import io
import pickle
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import run

LIBS = (torch, ft)


def _outcome(fn, lib):
    """``fn(lib)``'s value, or its exception as (type name, message)."""
    out, err = run(fn, lib)
    return ("raised", type(err).__name__, str(err)) if err is not None else out


def _same(fn):
    """``fn`` gives the same plain value (or raises the same error) with both libraries; returns it."""
    t, f = _outcome(fn, torch), _outcome(fn, ft)
    assert t == f, (t, f)
    return t


def _desc(t):
    """A tensor of either library as plain data (class name, dtype, layout, autograd flags, values)."""
    vals = None if t.device.type == "meta" else t.detach().tolist()
    return (type(t).__name__, str(t.dtype).split(".")[-1], tuple(t.shape), t.stride(), t.storage_offset(),
            t.device.type, t.requires_grad, t.is_leaf, vals)


# ---- 1. RNG state ------------------------------------------------------------------------------------------------
def test_rng_state_is_a_byte_tensor():
    def f(L):
        s = L.get_rng_state()
        g = L.Generator().get_state()
        return (type(s).__name__, str(s.dtype), s.dim(), str(g.dtype), str(L.random.get_rng_state().dtype))
    assert _same(f) == ("Tensor", "torch.uint8", 1, "torch.uint8", "torch.uint8")


CONVERSIONS = {
    "to_uint8": lambda L, s: s.to(L.uint8),
    "clone": lambda L, s: s.clone(),
    "ByteTensor_of_tolist": lambda L, s: L.ByteTensor(s.tolist()),
    "from_numpy": lambda L, s: L.from_numpy(s.numpy()),
    "contiguous_view": lambda L, s: s.view(-1)[:].contiguous(),
}


@pytest.mark.parametrize("conv", list(CONVERSIONS))
def test_rng_state_round_trips_restore_the_stream(conv):
    def f(L):
        L.manual_seed(12345)
        st = L.get_rng_state()
        a, b = L.rand(3), L.randn(2, 2)
        L.manual_seed(7)  # somewhere else entirely
        L.set_rng_state(CONVERSIONS[conv](L, st))
        return L.equal(a, L.rand(3)), L.equal(b, L.randn(2, 2)), L.initial_seed()
    assert _same(f) == (True, True, 12345)


def test_rng_state_survives_save_and_load():
    def f(L):
        L.manual_seed(3)
        buf = io.BytesIO()
        L.save({"rng": L.get_rng_state()}, buf)
        a = L.rand(4)
        buf.seek(0)
        L.set_rng_state(L.load(buf)["rng"])
        return L.equal(a, L.rand(4))
    assert _same(f) is True


def test_generator_state_round_trip_and_initial_seed():
    def f(L):
        g = L.Generator().manual_seed(77)
        L.randn(3, generator=g)
        st = g.get_state()
        x = L.randn(5, generator=g)
        g.manual_seed(1)
        g.set_state(st.clone())
        return L.equal(x, L.randn(5, generator=g)), g.initial_seed()
    assert _same(f) == (True, 77)


@pytest.mark.parametrize("bad", ["long", "float", "list"])
def test_set_rng_state_of_a_non_byte_tensor_is_torchs_type_error(bad):
    def f(L):
        st = L.get_rng_state()
        arg = {"long": lambda: st.long(), "float": lambda: st.float(), "list": lambda: [1, 2]}[bad]()
        L.set_rng_state(arg)
    assert _same(f)[:2] == ("raised", "TypeError")
    g = _same(lambda L: L.Generator().set_state(L.get_rng_state().int()))
    assert g == ("raised", "TypeError", "RNG state must be a torch.ByteTensor")


def test_a_torch_cpu_generator_state_is_refused_clearly():
    torch_state = ft.tensor(torch.get_rng_state().numpy())  # what Lightning / HF checkpoints store
    assert torch_state.dtype is ft.uint8 and torch_state.numel() == 5056
    for setter in (ft.set_rng_state, ft.Generator().set_state, ft.random.set_rng_state):
        with pytest.raises(RuntimeError, match="PyTorch CPU generator state.*JAX PRNG keys"):
            setter(torch_state)
    # a wrong size: RuntimeError in both, as torch's "Expected a CPUGeneratorImplState of size ..."
    outs = [_outcome(lambda L: L.set_rng_state(L.zeros(10, dtype=L.uint8)), L)[:2] for L in LIBS]
    assert outs == [("raised", "RuntimeError")] * 2
    with pytest.raises(RuntimeError, match="found the input RNG state size to be 10"):
        ft.set_rng_state(ft.zeros(10, dtype=ft.uint8))


def test_from_numpy_of_the_state_does_not_warn():
    for L in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert L.from_numpy(L.get_rng_state().numpy()).dtype == L.uint8
            assert L.from_numpy(L.arange(3).numpy()).tolist() == [0, 1, 2]


def test_seed_overflow_is_a_value_error():
    for seed in (2 ** 64, -(2 ** 63) - 1):
        assert _same(lambda L: L.Generator().manual_seed(seed)) == (
            "raised", "ValueError", "Overflow when unpacking long long")
        assert _same(lambda L: L.manual_seed(seed))[:2] == ("raised", "ValueError")
    assert _same(lambda L: L.Generator().manual_seed(2 ** 64 - 1).initial_seed()) == 2 ** 64 - 1


def test_fork_rng_still_restores():
    def f(L):
        L.manual_seed(5)
        with L.random.fork_rng():
            L.rand(3)
        a = L.rand(2)
        L.manual_seed(5)
        return L.equal(a, L.rand(2))
    assert _same(f) is True


# ---- 2. with torch.device(...) -------------------------------------------------------------------------------------
def test_device_context_manager_sets_and_restores_the_default_device():
    def f(L):
        out = []
        with L.device("meta") as d:
            out.append(str(d))
            m = L.nn.Linear(2, 2)
            out += [str(L.get_default_device()), m.weight.device.type, L.ones(1).device.type,
                    L.ones(1, device="cpu").device.type]
            with L.device("cpu"):
                out += [str(L.get_default_device()), L.zeros(2).device.type]
            out.append(L.arange(3).device.type)
        out.append(str(L.get_default_device()))
        m.load_state_dict({"weight": L.ones(2, 2), "bias": L.zeros(2)}, assign=True)
        out += [m.weight.device.type, type(m.weight).__name__, m.weight.requires_grad, m(L.ones(1, 2)).tolist()]
        return out
    assert _same(f) == ["meta", "meta", "meta", "meta", "cpu", "cpu", "cpu", "meta", "cpu", "cpu", "Parameter",
                        True, [[2.0, 2.0]]]


def test_device_context_restores_on_error_and_after_set_default_device():
    def f(L):
        try:
            with L.device("meta"):
                raise KeyError("x")
        except KeyError:
            pass
        out = [str(L.get_default_device())]
        # (set_default_device inside a ``with device`` block is left out: torch's mode stack gets out of step there)
        L.set_default_device("meta")
        try:
            with L.device("cpu"):
                out.append(L.ones(1).device.type)
            out.append(L.ones(1).device.type)
        finally:
            L.set_default_device(None)
        return out
    assert _same(f) == ["cpu", "cpu", "meta"]
    assert _same(lambda L: (str(L.get_default_device()), L.ones(1).device.type)) == ("cpu", "cpu")


# ---- 3. pickle and copy.copy -------------------------------------------------------------------------------------
def _pickled(o):
    return pickle.loads(pickle.dumps(o))


@pytest.mark.parametrize("how", ["pickle", "copy"])
def test_pickle_and_copy_keep_parameter_class_flags_and_attributes(how):
    fn = _pickled if how == "pickle" else copy.copy

    def f(L):
        p = L.nn.Parameter(L.ones(2))
        p.tag = 1
        x = L.ones(3, requires_grad=True)
        x.grad = L.full((3,), 2.0)
        x.foo = "bar"
        y = x * 2  # a non-leaf: its copy is a leaf that requires grad
        out = [_desc(fn(p)), fn(p).__dict__, _desc(fn(L.nn.Parameter(L.ones(2), requires_grad=False))),
               _desc(fn(x)), fn(x).grad, fn(x).__dict__, _desc(fn(y)), fn(y).grad_fn]
        for t in (L.empty(2, 3, device="meta"), L.ones(2, dtype=L.bfloat16), L.ones(2, 3).t().contiguous().t(),
                  L.ones(2, 2, 2, 2).to(memory_format=L.channels_last), L.arange(6.).reshape(2, 3)[:, 1:]):
            out.append(_desc(fn(t)))
        return out
    _same(f)


def test_pickled_module_keeps_parameters_and_buffers():
    def f(L):
        L.manual_seed(0)
        seq = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2))
        s2 = _pickled(seq)
        return ([(n, type(v).__name__, v.requires_grad) for n, v in s2.named_parameters()],
                [(n, type(v).__name__) for n, v in s2.named_buffers()],
                all(L.equal(a, b) for a, b in zip(seq.state_dict().values(), s2.state_dict().values())))
    out = _same(f)
    assert out[0][0] == ("0.weight", "Parameter", True) and out[2] is True


def test_pickle_keeps_layout_but_not_sharing_copy_shares_storage():
    def f(L):
        t = L.arange(6.).reshape(2, 3)
        d = _pickled({"t": t, "v": t[:, 1:], "tt": t.t(), "s": t[1]})
        d["t"][0, 1] = 99.0  # the views were pickled with their own copy of the storage (as torch's pickle)
        c = copy.copy(t)
        c[0, 0] = -1.0       # copy.copy shares the storage ...
        c.add_(0)            # ... but not the version counter
        v = copy.copy(t[1])
        v[0] = 7.0
        return ([_desc(d[k]) for k in ("v", "tt", "s")], d["v"]._base is None, t.tolist(), t._version,
                v._base is None)
    _same(f)


# ---- 4. deepcopy ---------------------------------------------------------------------------------------------------
def test_deepcopy_keeps_views_of_one_storage_together():
    def f(L):
        t = L.arange(4.)
        d = copy.deepcopy({"t": t, "v": t.view(2, 2)})
        d["t"][0] = 9
        z = L.zeros(3)
        z2 = copy.deepcopy([z, z[1:]])
        z2[1].fill_(4)
        g = copy.deepcopy([t, t])
        return (d["v"][0].tolist(), d["v"]._base is None, z2[0].tolist(), z.tolist(), t.tolist(), g[0] is g[1],
                _desc(copy.deepcopy(L.ones(2, 3)[:, 1])))
    assert _same(f)[0] == [9.0, 1.0]


def test_deepcopy_of_a_module_with_a_view_buffer():
    def f(L):
        m = L.nn.Module()
        m.register_buffer("a", L.arange(4.))
        m.register_buffer("b", m.a[:2])
        m2 = copy.deepcopy(m)
        m2.a[0] = 9
        return m2.b.tolist(), m.b.tolist(), m2.b.storage_offset()
    assert _same(f) == ([9.0, 1.0], [0.0, 1.0], 0)


def test_deepcopy_copies_grad_and_attributes():
    def f(L):
        x = L.ones(2, requires_grad=True)
        x.grad = L.full((2,), 3.)
        x.foo = "bar"
        y = copy.deepcopy(x)
        y.grad[0] = 7  # its own .grad
        p = L.nn.Parameter(L.ones(2))
        p.tag = 1
        p.grad = L.ones(2)
        q = copy.deepcopy(p)  # Parameter.__deepcopy__: a clone, no attributes and no .grad (as torch's)
        return (_desc(y), y.grad.tolist(), y.foo, x.grad.tolist(), _desc(q), q.__dict__, q.grad,
                _desc(copy.deepcopy(L.empty(2, 3, device="meta"))),
                _desc(copy.deepcopy(L.ones(2, dtype=L.bfloat16))))
    assert _same(f)[1:4] == ([7.0, 3.0], "bar", [3.0, 3.0])


def test_deepcopy_of_a_non_leaf_is_torchs_error():
    for make in (lambda L: L.ones(2, requires_grad=True) * 2, lambda L: L.ones(3, requires_grad=True)[:2]):
        out = _same(lambda L: copy.deepcopy(make(L)))
        assert out[:2] == ("raised", "RuntimeError") and "graph leaves" in out[2]


def test_deepcopied_module_trains_independently():
    def f(L):
        L.manual_seed(0)
        m = L.nn.Linear(2, 1)
        m2 = copy.deepcopy(m)
        opt = L.optim.SGD(m.parameters(), lr=0.5)
        m(L.ones(1, 2)).sum().backward()
        opt.step()
        return (L.equal(m.weight, m2.weight), m2.weight.grad, type(m2.weight).__name__,
                abs(m2(L.ones(1, 2)).sum().item() - (m2.bias.item() + m2.weight.sum().item())) < 1e-6)
    assert _same(f) == (False, None, "Parameter", True)


# ---- 7. the weights_only allow-list --------------------------------------------------------------------------------
class Point:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return type(other) is Point and other.x == self.x


PointNT = collections.namedtuple("PointNT", "a b")


def _saved(L, obj) -> bytes:
    buf = io.BytesIO()
    L.save(obj, buf)
    return buf.getvalue()


@pytest.fixture
def keep_torch_safe_globals():
    """(torch registers some safe globals of its own: clear_safe_globals() drops them; put them back after)"""
    saved = torch.serialization.get_safe_globals()
    yield
    torch.serialization.clear_safe_globals()
    torch.serialization.add_safe_globals(saved)
    ft.serialization.clear_safe_globals()


def test_safe_globals_api(keep_torch_safe_globals):
    def f(L):
        S = L.serialization
        raw = _saved(L, {"p": Point(3), "t": L.ones(2)})
        out = [S.DEFAULT_PROTOCOL, _outcome(lambda L: L.load(io.BytesIO(raw)), L),
               S.get_unsafe_globals_in_checkpoint(io.BytesIO(raw))]
        with S.safe_globals([Point]):
            out += [L.load(io.BytesIO(raw))["p"].x, Point in S.get_safe_globals(),
                    S.get_unsafe_globals_in_checkpoint(io.BytesIO(raw))]
        out.append(Point in S.get_safe_globals())
        S.add_safe_globals([Point])
        try:
            out += [L.load(io.BytesIO(raw))["p"].x, Point in S.get_safe_globals()]
        finally:
            S.clear_safe_globals()
        out.append(S.get_safe_globals())
        S.add_safe_globals([(Point, f"{Point.__module__}.Point")])
        try:
            out.append(L.load(io.BytesIO(raw), weights_only=True)["p"].x)
        finally:
            S.clear_safe_globals()
        nt = _saved(L, PointNT(1, L.ones(1)))
        out.append(_outcome(lambda L: L.load(io.BytesIO(nt)), L))
        with S.safe_globals([PointNT]):
            got = L.load(io.BytesIO(nt))
            out.append((type(got).__name__, got.a, got.b.tolist()))
        out.append(_outcome(lambda L: S.get_unsafe_globals_in_checkpoint(io.BytesIO(b"abc")), L))
        return out
    out = _same(f)
    assert out[1][:2] == ("raised", "UnpicklingError") and "add_safe_globals" in out[1][2]
    assert out[3] == 3 and out[5] == []


def test_default_restore_location_as_map_location():
    def f(L):
        raw = _saved(L, {"w": L.arange(3.)})
        got = L.load(io.BytesIO(raw), map_location=lambda s, loc: L.serialization.default_restore_location(s, "cpu"))
        return got["w"].tolist(), got["w"].device.type
    assert _same(f) == ([0.0, 1.0, 2.0], "cpu")


# ---- 9. meta tensors, 10. dtype views --------------------------------------------------------------------------------
def test_save_and_load_meta_tensors_both_ways():
    def make(L):
        m = L.empty(3, 4, device="meta").t()
        m.foo = 1
        return [L.empty(2, device="meta"), L.empty(2, 3, device="meta", requires_grad=True), m,
                L.nn.Parameter(L.empty(2, 2, device="meta")), L.empty(4, 5, device="meta")[:, 1:3]]

    def f(L):
        got = L.load(io.BytesIO(_saved(L, make(L))))
        return [_desc(t) for t in got] + [got[2].foo]
    out = _same(f)
    for saver, loader in ((torch, ft), (ft, torch)):
        got = loader.load(io.BytesIO(_saved(saver, make(saver))))
        assert [_desc(t) for t in got] + [got[2].foo] == out


def test_saving_views_of_one_storage_as_different_types_fails():
    msg = ("raised", "RuntimeError", "Cannot save multiple tensors or storages that view the same data as different "
                                     "types")
    x_of = {}
    for case in ("float_then_int", "int_then_float", "complex_and_real"):
        def f(L, case=case):
            x = L.ones(2, dtype=L.complex64 if case == "complex_and_real" else L.float32)
            objs = {"float_then_int": [x, x.view(L.int32)], "int_then_float": [x.view(L.int32), x],
                    "complex_and_real": [x, x.real]}[case]
            _saved(L, objs)
        x_of[case] = _same(f)
        assert x_of[case] == msg
    assert _same(lambda L: L.load(io.BytesIO(_saved(L, [L.ones(2).view(L.int32)] * 2)))[0].tolist()) == [
        1065353216, 1065353216]


# ---- 12. errors ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [b"", b"garbage", b"not a torch file at all"])
@pytest.mark.parametrize("weights_only", [True, False])
def test_loading_something_that_is_not_a_checkpoint(data, weights_only):
    out = _same(lambda L: L.load(io.BytesIO(data), weights_only=weights_only))
    assert out[0] == "raised"


def test_loading_a_plain_pickle_is_an_invalid_magic_number():
    for wo in (True, False):
        assert _same(lambda L: L.load(io.BytesIO(pickle.dumps([1, 2], protocol=2)), weights_only=wo)) == (
            "raised", "RuntimeError", "Invalid magic number; corrupt file?")


def test_weights_only_refuses_opcodes_torch_does_not_read():
    out = _same(lambda L: L.load(io.BytesIO(b"\x80\x02N\x94.")))  # MEMOIZE (148): not in torch's set
    assert out[:2] == ("raised", "UnpicklingError") and "Unsupported operand 148" in out[2]


def test_save_into_a_missing_directory(tmp_path):
    for target in ("/nonexist_dir_fl/x.pt", str(tmp_path / "no" / "sub" / "x.pt"), tmp_path / "nope" / "x.pt"):
        out = _same(lambda L: L.save(1, target))
        assert out[:2] == ("raised", "RuntimeError") and out[2].startswith("Parent directory ")


def test_mmap_of_a_non_zip_file(tmp_path):
    p = tmp_path / "x.pt"
    p.write_bytes(pickle.dumps(1))
    out = _same(lambda L: L.load(str(p), mmap=True))
    assert out[:2] == ("raised", "RuntimeError") and "mmap can only be used" in out[2]


def test_default_collate_of_a_tensor_and_a_list():
    assert _same(lambda L: L.utils.data.default_collate([L.tensor([1]), [1]])) == (
        "raised", "TypeError", "expected Tensor as element 1 in argument 0, but got list")


# ---- 11. torch.utils.data._utils.collate -----------------------------------------------------------------------------
def _collate_mod(L):
    return importlib.import_module(L.__name__ + ".utils.data._utils.collate")


def test_collate_module_objects():
    def f(L):
        C = _collate_mod(L)
        W = importlib.import_module(L.__name__ + ".utils.data._utils.worker")
        D = L.utils.data
        keys = sorted(k.__name__ if isinstance(k, type) else "+".join(x.__name__ for x in k)
                      for k in C.default_collate_fn_map)
        return (C.default_collate is D.default_collate, C.default_convert is D.default_convert,
                W.get_worker_info is D.get_worker_info, W.get_worker_info(), keys, C.default_collate_err_msg_format,
                str(C.collate([(1, "a"), (2, "b")], collate_fn_map=C.default_collate_fn_map)),
                C.collate([{"x": 1.5}, {"x": 2.5}], collate_fn_map={float: lambda b, collate_fn_map: sum(b)}),
                str([C.collate_tensor_fn([L.ones(1), L.zeros(1)]), C.collate_int_fn([1, 2]),
                     C.collate_float_fn([1., 2.]), C.collate_str_fn(["a"])]),
                _outcome(lambda L: C.collate([object()]), L)[:2])
    _same(f)


def test_a_type_registered_in_default_collate_fn_map_changes_default_collate():
    class Tag:
        def __init__(self, x):
            self.x = x

    def coll_tag(batch, *, collate_fn_map=None):
        return ("TAG", [b.x for b in batch])

    def f(L):
        C = _collate_mod(L)
        D = L.utils.data
        out = [_outcome(lambda L: D.default_collate([Tag(1), Tag(2)]), L)[:2]]
        C.default_collate_fn_map[Tag] = coll_tag
        try:
            out.append(str(D.default_collate([{"a": Tag(1), "b": 1}, {"a": Tag(2), "b": 2}])))
            out.append(str(list(D.DataLoader([Tag(i) for i in range(4)], batch_size=2))))
        finally:
            del C.default_collate_fn_map[Tag]
        old = C.default_collate_fn_map[L.Tensor]
        C.default_collate_fn_map[L.Tensor] = lambda batch, *, collate_fn_map=None: L.stack(batch) * 2
        try:
            ds = D.TensorDataset(L.arange(4.))
            out.append(str(list(D.DataLoader(ds, batch_size=2))))
        finally:
            C.default_collate_fn_map[L.Tensor] = old
        out.append(str(list(D.DataLoader(D.TensorDataset(L.arange(4.)), batch_size=2))))
        return out
    out = _same(f)
    assert out[1] == "{'a': ('TAG', [1, 2]), 'b': tensor([1, 2])}"
    assert out[3] == "[[tensor([0., 2.])], [tensor([4., 6.])]]"


# ---- 8. a whole module pickled by torch, loaded here -----------------------------------------------------------------
def _torch_models():
    torch.manual_seed(0)
    seq = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.BatchNorm1d(3), torch.nn.Dropout(0.1),
                              torch.nn.LayerNorm(3), torch.nn.Linear(3, 2))
    seq[2].running_mean.fill_(0.5)
    seq.eval()
    return {"seq": seq, "conv": torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.MaxPool2d(2)),
            "emb": torch.nn.Embedding(10, 4), "lstm": torch.nn.LSTM(4, 3, batch_first=True),
            "mha": torch.nn.MultiheadAttention(4, 2, batch_first=True),
            "tel": torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True),
            "ml": torch.nn.ModuleList([torch.nn.Linear(2, 2)])}


def _flat(o):
    if isinstance(o, (tuple, list)):
        return [x for i in o for x in _flat(i)]
    return [] if o is None else [o]


def test_whole_module_checkpoint_pickled_by_torch():
    models = _torch_models()
    raw = _saved(torch, {"models": models, "epoch": 3})
    # weights_only=True refuses a pickled module in both, with the same message
    assert _same(lambda L: L.load(io.BytesIO(raw)))[:2] == ("raised", "UnpicklingError")
    ck = ft.load(io.BytesIO(raw), weights_only=False)
    assert ck["epoch"] == 3
    torch.manual_seed(1)
    inputs = {"seq": [torch.randn(5, 4)], "conv": [torch.randn(1, 2, 4, 4)], "emb": [torch.tensor([1, 2, 9])],
              "lstm": [torch.randn(2, 3, 4)], "mha": [torch.randn(2, 3, 4)] * 3, "tel": [torch.randn(2, 3, 4)]}
    for k, mt in models.items():
        m = ck["models"][k]
        assert type(m).__name__ == type(mt).__name__ and isinstance(m, ft.nn.Module), k
        assert m.training == mt.training
        assert [(n, type(p).__name__, p.requires_grad) for n, p in m.named_parameters()] == [
            (n, type(p).__name__, p.requires_grad) for n, p in mt.named_parameters()]
        assert list(m.state_dict()) == list(mt.state_dict())
        for a, b in zip(m.state_dict().values(), mt.state_dict().values()):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert repr(m) == repr(mt)
        if k in inputs:
            with torch.no_grad():
                want = _flat(mt(*inputs[k]))
            got = _flat(m(*[ft.tensor(x.numpy()) for x in inputs[k]]))
            assert len(got) == len(want)
            for a, b in zip(got, want):
                np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    # the loaded model trains like a facade model
    seq = ck["models"]["seq"]
    seq.train()
    opt = ft.optim.SGD(seq.parameters(), lr=0.1)
    before = seq[0].weight.detach().clone()
    seq(ft.randn(5, 4)).pow(2).sum().backward()
    opt.step()
    assert not ft.equal(before, seq[0].weight) and seq[0].weight.grad.shape == (3, 4)


class UserNet(torch.nn.Module):
    def __init__(self, L=torch):
        super().__init__()
        self.fc = L.nn.Linear(2, 2)
        self.register_buffer("scale", L.ones(2) * 2)
        self.k = 3

    def forward(self, x):
        return self.fc(x) * self.scale + self.k


class _FacadeUserNet(ft.nn.Module):  # the same class written against functorch_lite (what a user's code has)
    __init__ = UserNet.__init__
    forward = UserNet.forward


def _hook(module, args, out):
    return out


def test_a_users_module_class_pickled_by_torch(monkeypatch):
    torch.manual_seed(0)
    net = UserNet()
    raw = _saved(torch, net)
    monkeypatch.setitem(globals(), "UserNet", _FacadeUserNet)  # the name the checkpoint refers to, as the facade's
    got = ft.load(io.BytesIO(raw), weights_only=False)
    assert type(got) is _FacadeUserNet and got.k == 3 and [n for n, _ in got.named_buffers()] == ["scale"]
    x = np.ones((3, 2), np.float32)
    np.testing.assert_allclose(got(ft.tensor(x)).detach().numpy(), net(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6)


def test_a_torch_module_pickled_with_hooks_is_refused_clearly():
    m = torch.nn.Linear(2, 2)
    m.register_forward_hook(_hook)
    with pytest.raises(pickle.UnpicklingError, match="has _forward_hooks registered"):
        ft.load(io.BytesIO(_saved(torch, m)), weights_only=False)
