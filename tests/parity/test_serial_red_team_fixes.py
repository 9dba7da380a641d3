"""Parity with torch 2.13 for serialization findings of a red team: ``Optimizer.load_state_dict`` keeps a saved state
tensor that needs no cast (two optimizers loaded from one ``state_dict()`` share it, eager and compiled);
``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD``; a whole module loaded with
``weights_only=True`` inside ``safe_globals([...])`` (the facade's pickle holds torch's plain dict fields, an
allow-listed facade class stands for a torch-written file's ``torch.nn.modules...`` global, the ``Tensor`` /
``Parameter`` classes and ``nn.functional`` functions are written by torch's names); ``Tensor.storage()``'s
``TypedStorage`` (and a loaded storage's); the rest of ``torch.serialization``'s API (``skip_data``, the load
endianness, CRC-32 and mmap options, ``register_package``, ``location_tag``, ``StorageType``...); a copy out of a
meta tensor; torch's error texts for what ``load`` / ``save`` are given; the warning for a tensor's hooks on save."""
import copy
import io
import os
import pickle
import pickletools
import types
import warnings
import zipfile

import pytest
import torch

import functorch_lite as ft
from _parity import warnings_of

LIBS = (torch, ft)


def _rt(m, obj, **kw):
    b = io.BytesIO()
    m.save(obj, b)
    b.seek(0)
    return m.load(b, **kw)


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn())
    except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
        return (type(e).__name__, str(e))


def _both(fn):
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same outcome (value, or exception type and message)."""
    t, f = _outcome(lambda: fn(torch)), _outcome(lambda: fn(ft))
    assert f == t, (t, f)
    return t


def _vals(t):
    return [round(x, 5) for x in t.detach().reshape(-1).tolist()]


# ---- 1. Optimizer.load_state_dict aliases what it need not cast -----------------------------------------------
_OPTS = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": dict(lr=0.1), "AdamW": dict(lr=0.1, amsgrad=True),
         "RMSprop": dict(lr=0.01, momentum=0.5, centered=True), "Adagrad": {}, "ASGD": {}, "NAdam": {}, "Rprop": {},
         "Adamax": {}, "RAdam": {}, "Adadelta": {}}


@pytest.mark.parametrize("name", list(_OPTS))
def test_loaded_state_is_shared_with_the_saved_optimizer(name):
    def case(m):
        mk = lambda ps: getattr(m.optim, name)(ps, **_OPTS[name])  # noqa: E731
        p = m.nn.Parameter(m.ones(3))
        opt = mk([p])
        p.grad = m.tensor([1., -2., 3.])
        opt.step()
        q = m.nn.Parameter(m.ones(3))
        opt2 = mk([q])
        opt2.load_state_dict(opt.state_dict())
        shared = {k: opt2.state[q][k] is v for k, v in opt.state[p].items()}
        q.grad = m.full((3,), 5.)
        opt2.step()
        seen = {k: _vals(v) for k, v in opt.state[p].items()}  # (opt2's step updated them in place)
        p.grad = m.ones(3)
        opt.step()
        return shared, seen, _vals(p), {k: _vals(v) for k, v in opt2.state[q].items()}
    assert case(ft) == case(torch)


def test_loaded_state_aliasing_follows_torchs_cast_rule():
    """A float64 parameter gets new float64 moments but the same ``step``; a fused group the same float32 ``step``;
    a float64 ``step`` is kept (aliased) unless the saved group is fused; the user's own entries are cast as torch."""
    def case(m):
        p = m.nn.Parameter(m.ones(3))
        opt = m.optim.Adam([p])
        p.grad = m.ones(3)
        opt.step()
        out = []
        for dt, kw in ((m.float64, {}), (m.float32, dict(fused=True))):
            q = m.nn.Parameter(m.ones(3, dtype=dt))
            o2 = m.optim.Adam([q], **kw)
            o2.load_state_dict(opt.state_dict())
            out.append({k: (o2.state[q][k] is v, str(o2.state[q][k].dtype)) for k, v in opt.state[p].items()})
        sd = opt.state_dict()
        sd["state"][0]["step"] = m.tensor(3.0, dtype=m.float64)
        sd["state"][0]["mine"] = m.ones(2, dtype=m.float64)
        sd["state"][0]["lst"] = [m.ones(1), m.ones(1, dtype=m.int64)]
        q = m.nn.Parameter(m.ones(3))
        o2 = m.optim.Adam([q])
        o2.load_state_dict(sd)
        st = o2.state[q]
        out.append({k: (st[k] is v, str(getattr(st[k], "dtype", None))) for k, v in sd["state"][0].items()})
        out.append([(a is b, str(a.dtype)) for a, b in zip(st["lst"], sd["state"][0]["lst"])])
        return out
    assert case(ft) == case(torch)


def test_custom_optimizer_state_is_shared():
    def case(m):
        class My(m.optim.Optimizer):
            def __init__(self, ps):
                super().__init__(ps, {"lr": 0.1})

            def step(self, closure=None):
                for g in self.param_groups:
                    for p in g["params"]:
                        st = self.state[p]
                        if "buf" not in st:
                            st["buf"] = m.zeros_like(p)
                        st["buf"].add_(p.grad)
        p = m.nn.Parameter(m.ones(3))
        o = My([p])
        p.grad = m.ones(3)
        o.step()
        q = m.nn.Parameter(m.ones(3))
        o2 = My([q])
        o2.load_state_dict(o.state_dict())
        q.grad = m.full((3,), 2.)
        o2.step()
        return o2.state[q]["buf"] is o.state[p]["buf"], _vals(o.state[p]["buf"])
    assert case(ft) == case(torch)


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_compiled_step_updates_the_shared_state_in_place(name):
    """Ours compiled (torch's eager, which compiling does not change): a compiled step of the loaded optimizer
    writes into the tensors it shares with the saved one."""
    def case(m, compiled):
        p = m.nn.Parameter(m.ones(3))
        opt = getattr(m.optim, name)([p], **_OPTS[name])
        p.grad = m.tensor([1., -2., 3.])
        opt.step()
        q = m.nn.Parameter(m.ones(3))
        opt2 = getattr(m.optim, name)([q], **_OPTS[name])
        opt2.load_state_dict(opt.state_dict())
        ref = dict(opt.state[p])
        step = m.compile(opt2.step) if compiled else opt2.step
        out = []
        for _ in range(3):
            q.grad = m.full((3,), 5.)
            step()
            out.append(({k: _vals(v) for k, v in opt.state[p].items()},
                        all(opt2.state[q][k] is v for k, v in ref.items())))
        p.grad = m.ones(3)
        opt.step()
        q.grad = m.full((3,), 5.)
        step()
        return out, _vals(p), _vals(q)
    assert case(ft, True) == case(torch, False)


# ---- 2. TORCH_FORCE_(NO_)WEIGHTS_ONLY_LOAD ---------------------------------------------------------------------
class _Plain:
    pass


def _plain_file(m):
    b = io.BytesIO()
    m.save(_Plain(), b)
    return b.getvalue()


@pytest.mark.parametrize("env,kw", [
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "true"}, dict(weights_only=True)),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "0"}, {}),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "YES"}, dict(weights_only=False)),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "y"}, dict(pickle_module=pickle)),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
], ids=["no_wo", "no_wo_explicit", "no_wo_off", "wo_over_false", "wo_pickle_module", "both"])
def test_force_weights_only_environment_variables(monkeypatch, env, kw):
    for k, v in env.items():
        monkeypatch.setenv(k, v)

    def case(m):
        w, r = None, None
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            try:
                r = type(m.load(io.BytesIO(_plain_file(m)), **kw)).__name__
            except Exception as e:  # noqa: BLE001
                r = (type(e).__name__, str(e))
        w = [str(x.message) for x in rec if "TORCH_FORCE" in str(x.message)]
        return r, w
    assert case(ft) == case(torch)


# ---- 3. whole modules with weights_only=True ------------------------------------------------------------------
def _globals_of(raw: bytes) -> list:
    z = zipfile.ZipFile(io.BytesIO(raw))
    pkl = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    return sorted(a for op, a, _ in pickletools.genops(pkl) if op.name == "GLOBAL")


def _model(m):
    net = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU(), m.nn.Linear(3, 1))
    with m.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(m.arange(p.numel(), dtype=m.float32).reshape(p.shape) * 0.1 - 0.2 * i)
    return net


def test_facade_module_pickle_holds_only_torchs_types():
    b = io.BytesIO()
    ft.save(_model(ft), b)
    names = _globals_of(b.getvalue())
    assert not [n for n in names if "_Registry" in n or "_Buffers" in n or "_Hooks" in n], names
    assert {n for n in names if not n.startswith("functorch_lite.nn.modules.")} == {
        "__builtin__ set", "collections OrderedDict", "torch FloatStorage", "torch._utils _rebuild_parameter",
        "torch._utils _rebuild_tensor_v2"}
    b = io.BytesIO()
    torch.save(_model(torch), b)
    assert {n for n in _globals_of(b.getvalue()) if not n.startswith("torch.nn.modules.")} == {
        "__builtin__ set", "collections OrderedDict", "torch FloatStorage", "torch._utils _rebuild_parameter",
        "torch._utils _rebuild_tensor_v2"}


@pytest.mark.parametrize("writer", ["own", "torch"])
def test_module_loads_weights_only_inside_safe_globals(writer):
    """torch 2.6+'s flow: a whole module saved, loaded with weights_only=True inside ``safe_globals`` of its
    classes; a torch-written file's ``torch.nn.modules...`` globals are the allow-listed facade classes."""
    def case(m):
        src = torch if writer == "torch" else m
        b = io.BytesIO()
        src.save(_model(src), b)
        allowed = [m.nn.Sequential, m.nn.Linear, m.nn.ReLU]
        out = []
        for sg in (allowed, allowed[:2]):
            b.seek(0)
            try:
                with m.serialization.safe_globals(sg):
                    net = m.load(b)
                    b.seek(0)
                    unsafe = m.serialization.get_unsafe_globals_in_checkpoint(b)
                out.append(([type(x).__name__ for x in net.modules()], _vals(net(m.ones(2, 2))), unsafe))
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, "ReLU was not an allowed global" in str(e)))
        return out
    assert case(ft) == case(torch)


def _double(mod, args, out):
    return out * 2


def test_loaded_modules_are_the_facades_own():
    """Deep copies, pickles and weights-only loads make the facade's tables again (its registries, its hooks)."""
    net = _model(ft)
    net[0].register_forward_hook(_double)
    reg = type(net._parameters)
    with ft.serialization.safe_globals([ft.nn.Sequential, ft.nn.Linear, ft.nn.ReLU]):
        plain = _rt(ft, _model(ft))
    for got in (copy.deepcopy(net), pickle.loads(pickle.dumps(net)), plain):
        assert type(got._modules) is reg and type(got[0]._parameters) is reg
        assert type(got[0]._buffers).__name__ == "_Buffers" and type(got[0]._forward_hooks).__name__ == "_Hooks"
    assert _vals(copy.deepcopy(net)(ft.ones(1, 2))) == _vals(net(ft.ones(1, 2)))
    assert len(copy.deepcopy(net)[0]._forward_hooks) == 1


@pytest.mark.parametrize("obj", ["Tensor", "Parameter", "relu", "dtype", "Size"])
def test_classes_and_functions_by_torchs_names(obj):
    def case(m):
        o = {"Tensor": m.Tensor, "Parameter": m.nn.Parameter, "relu": m.nn.functional.relu, "dtype": m.float16,
             "Size": m.Size([2])}[obj]
        b = io.BytesIO()
        m.save(o, b)
        names = _globals_of(b.getvalue())
        b.seek(0)
        r = _outcome(lambda: m.load(b))
        r = r if r[0] != "ok" else ("ok", getattr(r[1], "__name__", str(r[1])))
        return names, r[0], r[1] if r[0] == "ok" else r[1].split("WeightsUnpickler error:")[-1].strip()[:60]
    assert case(ft) == case(torch)


# ---- 4. Tensor.storage() -----------------------------------------------------------------------------------------
def _reset_storage_warning():
    torch.storage._reset_warn_typed_storage_removal()
    ft._tensor.tensor._TYPED_STORAGE_WARNED[0] = False


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_typed_storage():
    def case(m):
        t = m.arange(4.)
        v = t[1:]
        s = v.storage()
        return (type(s).__name__, s.size(), len(s), str(s.dtype), s.element_size(), s.nbytes(), s.tolist(),
                s.data_ptr() == t.storage().data_ptr() == t.untyped_storage().data_ptr(), str(s.device), str(s),
                type(s.untyped()).__name__, s[1], m.ones(2, dtype=m.bool).storage().tolist(),
                m.tensor([1, 2], dtype=m.int16).storage().tolist(), str(m.tensor([1 + 2j]).storage()))
    _reset_storage_warning()
    assert case(ft) == case(torch)


def test_untyped_storage_values():
    def case(m):
        s = m.arange(3, dtype=m.int16)[1:].untyped_storage()
        return (type(s).__name__, len(s), s.size(), s.nbytes(), s.tolist(), s.element_size(), str(s), s[2],
                str(s.device), str(m.empty(2, device="meta").untyped_storage()))
    assert case(ft) == case(torch)


def test_typed_storage_warns_once():
    def case(m):
        _reset_storage_warning()
        t = m.ones(2)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            s = t.storage()
            s.size()
            t.storage().tolist()
        return [(x.category.__name__, str(x.message)) for x in rec]
    assert case(ft) == case(torch)
    assert len(case(torch)) == 1


@pytest.mark.parametrize("what", ["typed", "untyped", "both_typed", "with_tensor"])
def test_loaded_storage_is_a_typed_storage(what):
    def case(m):
        t = m.arange(4.)
        obj = {"typed": lambda: t.storage(), "untyped": lambda: t.untyped_storage(),
               "both_typed": lambda: [t.storage(), t], "with_tensor": lambda: [t, t.untyped_storage()]}[what]()
        r = _rt(m, obj)
        r = r if isinstance(r, list) else [r]
        return [(type(x).__name__, str(x)) for x in r]
    _reset_storage_warning()
    _both(case)


# ---- 5. the rest of torch.serialization's API ----------------------------------------------------------------
def test_skip_data():
    def case(m):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            return _skip_data_case(m), [str(x.message) for x in rec]
    assert case(ft) == case(torch)


def _skip_data_case(m):
    """A save and a load inside ``skip_data``; the saved file read outside it."""
    S = m.serialization
    with S.skip_data():
        b = io.BytesIO()
        m.save({"a": m.ones(3), "m": m.empty(2, device="meta")}, b)
        c = io.BytesIO()
        m.save(m.arange(3.), c)
        c.seek(0)
        inside = tuple(m.load(c).shape)
        legacy = _outcome(lambda: m.save(m.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False))
    z = zipfile.ZipFile(io.BytesIO(b.getvalue()))
    crc = [(i.filename.split("/", 1)[1], i.CRC == 0, i.file_size) for i in z.infolist()
           if "/data/" in i.filename]
    b.seek(0)
    r = m.load(b)
    return crc, _vals(r["a"]), str(r["m"].device), inside, legacy


def test_crc32_mmap_and_endianness_options():
    def case(m):
        S = m.serialization
        out = [S.get_crc32_options(), S.get_default_mmap_options(), S.get_default_load_endianness(),
               [e.name for e in S.LoadEndianness]]
        S.set_crc32_options(False)
        try:
            b = io.BytesIO()
            m.save(m.ones(3), b)
        finally:
            S.set_crc32_options(True)
        out.append([i.CRC for i in zipfile.ZipFile(io.BytesIO(b.getvalue())).infolist()])
        b.seek(0)
        out.append(_vals(m.load(b)))
        out.append(_outcome(lambda: S.set_default_load_endianness("big")))
        out.append(_outcome(lambda: S.set_default_mmap_options(5)))
        import mmap
        with S.set_default_mmap_options(mmap.MAP_SHARED):
            out.append(S.get_default_mmap_options() == mmap.MAP_SHARED)
        out.append(S.get_default_mmap_options() == mmap.MAP_PRIVATE)
        return out
    assert case(ft) == case(torch)


def _byteorder_edited(raw: bytes, mark) -> bytes:
    """``raw`` (a saved zip) with its ``byteorder`` record set to ``mark`` (None: removed)."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in src.namelist():
            if name.endswith("/byteorder"):
                if mark is not None:
                    z.writestr(name, mark)
            else:
                z.writestr(name, src.read(name))
    return out.getvalue()


def test_big_endian_checkpoints_are_byteswapped():
    """A ``byteorder`` record of "big" (or, without one, a BIG default) swaps every element's bytes (a complex
    one's parts each), as torch; an unknown mark is torch's ValueError."""
    def case(m):
        S = m.serialization
        # (values whose swapped bytes are normal numbers: XLA flushes subnormal floats to zero)
        vals = {"f": m.tensor([1.1, 3.3]), "i": m.tensor([1, 256], dtype=m.int32), "c": m.tensor([1.1 + 3.3j]),
                "b": m.tensor([3, 4], dtype=m.uint8), "h": m.tensor([1.1, 3.], dtype=m.bfloat16),
                "d": m.tensor([1.1], dtype=m.float64)}
        raw = _saved(m, vals)
        out = []
        for mark in (None, b"big", b"little", b"middle"):
            for e in (None, S.LoadEndianness.LITTLE, S.LoadEndianness.BIG, S.LoadEndianness.NATIVE):
                S.set_default_load_endianness(e)
                try:
                    r = _outcome(lambda: m.load(io.BytesIO(_byteorder_edited(raw, mark))))
                    out.append(r if r[0] != "ok" else {k: [str(x) for x in (v if v.is_complex() else v.double())
                                                                      .tolist()] for k, v in r[1].items()})
                finally:
                    S.set_default_load_endianness(None)
        return out
    assert case(ft) == case(torch)


def test_legacy_helpers():
    def case(m):
        S = m.serialization
        mod = types.ModuleType("x")
        mod.__version__ = "1.2.3"
        bad = types.ModuleType("y")
        bad.__version__ = "abc"
        with S.mkdtemp() as d:
            made = os.path.isdir(d)
        return (S.check_module_version_greater_or_equal(mod, (1, 2)),
                S.check_module_version_greater_or_equal(mod, (1, 3)),
                _outcome(lambda: S.check_module_version_greater_or_equal(bad, (1, 0))),
                _outcome(lambda: S.check_module_version_greater_or_equal(bad, (1, 0), False)),
                str(S.StorageType("FloatStorage")), str(S.StorageType("HalfStorage").dtype),
                _outcome(lambda: S.StorageType("NopeStorage")),
                _outcome(lambda: S.storage_to_tensor_type(m.ones(2).storage())),
                S.location_tag(m.ones(2).untyped_storage()), S.location_tag(m.ones(2)),
                _outcome(lambda: S.location_tag(object())),
                made, not os.path.exists(d), issubclass(S.SourceChangeWarning, Warning), S.DEFAULT_PROTOCOL)
    assert case(ft) == case(torch)
    if not ft.cuda.is_available():
        _both(lambda m: m.serialization.validate_cuda_device("cuda:0"))


def test_register_package_deserializer():
    tagged = []

    def deserialize(obj, location):
        if location == "serialtest":
            tagged.append(type(obj).__name__)
            return obj
        return None

    for m in LIBS:
        m.serialization.register_package(5, lambda obj: None, deserialize)
    _both(lambda m: _vals(m.load(io.BytesIO(_saved(m, m.arange(3.))), map_location="serialtest")))
    assert tagged == ["UntypedStorage", "UntypedStorage"]


def _saved(m, obj, **kw) -> bytes:
    b = io.BytesIO()
    m.save(obj, b, **kw)
    return b.getvalue()


@pytest.mark.parametrize("ml", ["xla", "cpu:0", "foo", "xpu", "xpu:1", "hpu", "privateuseone", b"cpu", 1, "meta",
                                {"cpu": "xla"}, "mps", "cuda1", {"cpu": "cpu"}],
                         ids=["xla", "cpu0", "foo", "xpu", "xpu1", "hpu", "pu1", "bytes", "int", "meta", "dict_xla",
                              "mps", "cuda1", "dict_cpu"])
def test_map_location_errors(ml):
    if ml == "cpu:0":  # (the facade's numbered CPU devices: a load there is a load to the CPU)
        assert str(ft.load(io.BytesIO(_saved(ft, ft.ones(2))), map_location=ml).device) == "cpu"
        return
    _both(lambda m: str(m.load(io.BytesIO(_saved(m, m.ones(2))), map_location=ml)))


# ---- 6. a copy out of a meta tensor -------------------------------------------------------------------------------
def test_copy_out_of_a_meta_tensor():
    _both(lambda m: m.ones(2).copy_(m.empty(2, device="meta")))
    _both(lambda m: m.nn.Linear(2, 2).load_state_dict(m.nn.Linear(2, 2, device="meta").state_dict()))


def _meta_shape(t):
    return (str(t.device), tuple(t.shape), str(t.dtype), type(t.grad_fn).__name__)


@pytest.mark.parametrize("case", ["copy", "copy_broadcast", "copy_grad", "copy_bad_shape", "add", "add_rev", "where",
                                  "cat"])
def test_copy_into_a_meta_tensor_and_meta_device_messages(case):
    """A copy into a meta tensor is a no-op (its shape and dtype rules checked); other ops mixing meta and CPU tensors
    name the first tensor's device as the expected one."""
    fns = {"copy": lambda m, x, c: _meta_shape(x.copy_(c)),
           "copy_broadcast": lambda m, x, c: _meta_shape(x.copy_(c[0].double())),
           "copy_grad": lambda m, x, c: _meta_shape(x.copy_(c.requires_grad_())),
           "copy_bad_shape": lambda m, x, c: x.copy_(m.ones(4)),
           "add": lambda m, x, c: x + c, "add_rev": lambda m, x, c: c + x,
           "where": lambda m, x, c: m.where(c > 0, x, c), "cat": lambda m, x, c: m.cat([x, c])}
    _both(lambda m: fns[case](m, m.empty(2, 3, device="meta"), m.ones(2, 3)))


# ---- 7. what load / save are given ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.load(_saved(m, m.ones(1))),
    lambda m: m.load(123),
    lambda m: m.load(object()),
    lambda m: m.save(m.ones(1), 123),
    lambda m: m.save(lambda: 0, 123),  # (the file is checked first)
    lambda m: m.load(io.BytesIO(_saved(m, m.ones(1))), map_location=1),
], ids=["bytes", "int", "object", "save_int", "save_first", "map_location_int"])
def test_load_save_argument_errors(case):
    _both(case)


_GOOD = None


def _good_bytes() -> bytes:
    global _GOOD
    if _GOOD is None:
        _GOOD = _saved(torch, {"w": torch.arange(100.0), "n": 3})
    return _GOOD


@pytest.mark.parametrize("cut", [
    lambda raw: raw[: len(raw) // 2], lambda raw: raw[:-30], lambda raw: raw[:200], lambda raw: raw[:-1],
    lambda raw: b"PK\x03\x04" + b"x" * 100, lambda raw: b"hello world", lambda raw: b"\x80\x02K\x05.",
    lambda raw: b"\x80\x02h\x05.", lambda raw: b"\x80\x02]q\x00(K\x01e.", lambda raw: b"\x80\x02.",
    lambda raw: b"\x80", lambda raw: b"\x80\x02", lambda raw: b"",
], ids=["half", "tail", "200", "last", "pk_garbage", "hello", "int_pickle", "binget", "list", "stop", "proto",
        "proto2", "empty"])
@pytest.mark.parametrize("weights_only", [True, False])
def test_corrupt_files(cut, weights_only):
    raw = cut(_good_bytes())
    _both(lambda m: m.load(io.BytesIO(raw), weights_only=weights_only))


# ---- 8. a tensor's hooks are not saved ----------------------------------------------------------------------------
def _hook(g):
    return g


def test_saving_a_tensor_with_hooks_warns():
    def case(m):
        h = m.ones(2, requires_grad=True)
        h.register_hook(_hook)
        quiet = m.ones(2, requires_grad=True)
        quiet.register_hook(m.utils.hooks.unserializable_hook(lambda g: g))
        return [_saved(m, h) and None, _saved(m, quiet) and None, _saved(m, m.nn.Parameter(m.ones(1))) and None]
    assert warnings_of(ft, case) == warnings_of(torch, case)
    assert len(warnings_of(torch, case)) == 1
