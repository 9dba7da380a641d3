"""functorch_lite.save / load against torch.save / torch.load (PyTorch's zip format, both directions)."""
import collections
import io
import pathlib
import pickle
import struct
import warnings
import zipfile

import numpy as np
import pytest
import torch

import functorch_lite as ft

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
          "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "uint16", "uint32", "uint64"]
RNG = np.random.default_rng(0)


def _ours_to_bytes(obj) -> bytes:
    buf = io.BytesIO()
    ft.save(obj, buf)
    return buf.getvalue()


def _torch_to_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _raw(t) -> bytes:
    """A tensor's values as bytes in logical (row-major) order, for either library."""
    if isinstance(t, torch.Tensor):
        t = t.detach().contiguous()
        return t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
    return np.ascontiguousarray(np.asarray(t._array)).tobytes()


def _values(dtype: str, shape=(2, 3)) -> np.ndarray:
    """Random values representable in ``dtype`` (as float64/complex/int/bool numpy)."""
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if dtype.startswith("complex"):
        return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    if dtype.startswith(("int", "uint")):
        lo = 0 if dtype.startswith("u") else -100
        return RNG.integers(lo, 100, shape)
    return np.round(RNG.standard_normal(shape) * 4) / 4


def _same_tensor(ours, theirs) -> None:
    assert repr(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _raw(ours) == _raw(theirs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ours_to_torch_every_dtype(dtype):
    v = _values(dtype)
    ours = ft.tensor(v.astype(np.float32) if dtype.startswith(("bfloat16", "float8")) else v,
                     dtype=getattr(ft, dtype))
    got = torch.load(io.BytesIO(_ours_to_bytes({"x": ours})), weights_only=True)["x"]
    _same_tensor(ours, got)


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_ours_every_dtype(dtype):
    v = _values(dtype)
    theirs = torch.tensor(v).to(getattr(torch, dtype))
    got = ft.load(io.BytesIO(_torch_to_bytes([theirs])))[0]
    _same_tensor(got, theirs)


def test_pickle_bytes_identical_to_torch():
    """A state dict of plain tensors: data.pkl, record names and order are exactly torch's."""
    arrays = {"w": RNG.standard_normal((3, 4)).astype(np.float32), "b": np.arange(3, dtype=np.int64),
              "h": np.ones(2, np.float16)}
    ours = collections.OrderedDict((k, ft.tensor(a)) for k, a in arrays.items())
    theirs = collections.OrderedDict((k, torch.tensor(a)) for k, a in arrays.items())
    zo = zipfile.ZipFile(io.BytesIO(_ours_to_bytes(ours)))
    zt = zipfile.ZipFile(io.BytesIO(_torch_to_bytes(theirs)))
    assert zo.namelist() == zt.namelist()
    for name in zt.namelist():
        if not name.endswith("serialization_id"):
            assert zo.read(name) == zt.read(name), name
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zo.infolist())


def test_records_are_64_byte_aligned():
    raw = _ours_to_bytes({"a": ft.ones(5), "b": ft.zeros(3, dtype=ft.int8), "c": ft.ones(7, dtype=ft.float64)})
    z = zipfile.ZipFile(io.BytesIO(raw))
    for info in z.infolist():
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename


def test_shared_storage_ours_to_torch():
    a = ft.arange(12, dtype=ft.float32).reshape(3, 4)
    views = {"a": a, "t": a.t(), "row": a[1], "cols": a[:, 1:3], "same": a}
    raw = _ours_to_bytes(views)
    assert len([n for n in zipfile.ZipFile(io.BytesIO(raw)).namelist() if "/data/" in n]) == 1
    got = torch.load(io.BytesIO(raw))
    ptr = got["a"].untyped_storage().data_ptr()
    for k, v in views.items():
        assert got[k].untyped_storage().data_ptr() == ptr
        assert got[k].stride() == v.stride() and got[k].storage_offset() == v.storage_offset()
        np.testing.assert_array_equal(got[k].numpy(), v.numpy())
    assert got["same"] is got["a"]
    got["a"][1, 1] = 100.0  # torch sees one storage: the views see the write
    assert got["t"][1, 1].item() == 100.0 and got["row"][1].item() == 100.0


def test_shared_storage_torch_to_ours():
    a = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    views = {"t": a.t(), "a": a, "row": a[1], "cols": a[:, 1:3], "step": a.reshape(-1)[::5]}
    got = ft.load(io.BytesIO(_torch_to_bytes(views)))
    for k, v in views.items():
        np.testing.assert_array_equal(got[k].numpy(), v.numpy())
        assert got[k].stride() == v.stride() and got[k].storage_offset() == v.storage_offset()
        assert got[k].is_contiguous() == v.is_contiguous()
    assert len({got[k].untyped_storage().data_ptr() for k in views}) == 1
    got["a"][1, 1] = 100.0  # one facade storage: writes through one tensor reach the others
    assert got["t"][1, 1].item() == 100.0 and got["row"][1].item() == 100.0 and got["cols"][1, 0].item() == 100.0


def test_views_round_trip_in_ours():
    a = ft.arange(24, dtype=ft.int32).reshape(2, 3, 4)
    views = [a.permute(2, 0, 1), a[:, 1], a[..., ::2], a]
    got = ft.load(io.BytesIO(_ours_to_bytes(views)))
    for g, v in zip(got, views):
        np.testing.assert_array_equal(g.numpy(), v.numpy())
        assert g.stride() == v.stride() and g.storage_offset() == v.storage_offset()


@pytest.mark.parametrize("make", [lambda lib: lib.arange(10.0)[2:7:2], lambda lib: lib.ones(3, 4).t(),
                                  lambda lib: lib.arange(6).reshape(2, 3)[:, 1:]])
def test_non_contiguous_alone(make):
    ours, theirs = make(ft), make(torch)
    got_t = torch.load(io.BytesIO(_ours_to_bytes(ours)))
    got_o = ft.load(io.BytesIO(_torch_to_bytes(theirs)))
    for g, ref in ((got_t, theirs), (got_o, ours)):
        np.testing.assert_array_equal(np.asarray(g.numpy()), np.asarray(ref.numpy()))
        assert g.stride() == ref.stride() and g.storage_offset() == ref.storage_offset()


@pytest.mark.parametrize("make", [lambda lib: lib.tensor(3.5), lambda lib: lib.tensor(7),
                                  lambda lib: lib.zeros(0), lambda lib: lib.zeros(2, 0, 3, dtype=lib.int64)])
def test_zero_dim_and_empty(make):
    ours, theirs = make(ft), make(torch)
    got_t = torch.load(io.BytesIO(_ours_to_bytes(ours)))
    got_o = ft.load(io.BytesIO(_torch_to_bytes(theirs)))
    _same_tensor(ours, got_t)
    _same_tensor(got_o, theirs)
    assert got_o.stride() == theirs.stride() and got_t.stride() == ours.stride()


def _nested(lib):
    return {"ints": [1, -2, 3], "float": 2.5, "str": "hé", "none": None, "flag": True, "tuple": (1, "a", (2.0,)),
            "od": collections.OrderedDict([("z", 1), ("a", lib.ones(2))]), "set": {1, 2}, "complex": 1 + 2j,
            "bytes": b"\x00\xff", "deep": [{"t": lib.arange(3)}, [lib.tensor(1.5)]], "big": 2 ** 70}


def _assert_nested_equal(x, y):
    if isinstance(x, (ft.Tensor, torch.Tensor)):
        assert isinstance(y, (ft.Tensor, torch.Tensor))
        assert _raw(x) == _raw(y) and tuple(x.shape) == tuple(y.shape)
        return
    assert type(x) is type(y), (x, y)
    if isinstance(x, dict):
        assert list(x) == list(y)
        for k in x:
            _assert_nested_equal(x[k], y[k])
    elif isinstance(x, (list, tuple)):
        assert len(x) == len(y)
        for a, b in zip(x, y):
            _assert_nested_equal(a, b)
    else:
        assert x == y


def test_nested_containers_all_directions():
    ours, theirs = _nested(ft), _nested(torch)
    _assert_nested_equal(torch.load(io.BytesIO(_ours_to_bytes(ours))), theirs)
    _assert_nested_equal(ft.load(io.BytesIO(_torch_to_bytes(theirs))), ours)
    _assert_nested_equal(ft.load(io.BytesIO(_ours_to_bytes(ours))), ours)


def test_dtype_device_size_objects():
    obj = {"dt": ft.bfloat16, "dev": ft.device("cuda", 1), "cpu": ft.device("cpu"), "size": ft.Size([2, 3])}
    got = torch.load(io.BytesIO(_ours_to_bytes(obj)))
    assert got == {"dt": torch.bfloat16, "dev": torch.device("cuda", 1), "cpu": torch.device("cpu"),
                   "size": torch.Size([2, 3])}
    back = ft.load(io.BytesIO(_torch_to_bytes(got)))
    assert back["dt"] is ft.bfloat16 and back["dev"] == ft.device("cuda:1") and back["cpu"] == ft.device("cpu")
    assert type(back["size"]) is ft.Size and back["size"] == (2, 3)


def test_parameters_ours_and_torch():
    ours = {"p": ft.nn.Parameter(ft.ones(2, 2)), "frozen": ft.nn.Parameter(ft.zeros(3), requires_grad=False),
            "leaf": ft.ones(2, requires_grad=True)}
    got = torch.load(io.BytesIO(_ours_to_bytes(ours)))
    assert type(got["p"]) is torch.nn.Parameter and got["p"].requires_grad
    assert type(got["frozen"]) is torch.nn.Parameter and not got["frozen"].requires_grad
    assert type(got["leaf"]) is torch.Tensor and got["leaf"].requires_grad
    back = ft.load(io.BytesIO(_torch_to_bytes(got)))
    assert type(back["p"]) is ft.nn.Parameter and back["p"].requires_grad
    assert type(back["frozen"]) is ft.nn.Parameter and not back["frozen"].requires_grad
    assert type(back["leaf"]) is ft.Tensor and back["leaf"].requires_grad and back["leaf"].is_leaf


def test_linear_state_dict_ours_to_torch_and_back():
    ft.manual_seed(0)
    lin = ft.nn.Linear(4, 3)
    sd = lin.state_dict()
    tlin = torch.nn.Linear(4, 3)
    tlin.load_state_dict(torch.load(io.BytesIO(_ours_to_bytes(sd)), weights_only=True))
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(tlin(torch.tensor(x)).detach().numpy(), lin(ft.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    lin2 = ft.nn.Linear(4, 3)
    lin2.load_state_dict(ft.load(io.BytesIO(_torch_to_bytes(tlin.state_dict()))))
    np.testing.assert_allclose(lin2(ft.tensor(x)).detach().numpy(), lin(ft.tensor(x)).detach().numpy(), rtol=1e-6)


def test_torch_model_state_dict_with_conv_and_bf16():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 6 * 6, 2))
    sd = model.state_dict()
    sd["half"] = model[3].weight.detach().to(torch.bfloat16)
    got = ft.load(io.BytesIO(_torch_to_bytes(sd)), weights_only=True)
    assert list(got) == list(sd)
    for k in sd:
        _same_tensor(got[k], sd[k])
    assert got["1.num_batches_tracked"].dtype is ft.int64 and got["1.num_batches_tracked"].dim() == 0


def _adam_run(lib, params, opt, steps, start=0):
    for i in range(start, start + steps):
        x = lib.tensor(np.full((2, 3), 0.1 * (i + 1), np.float32))
        opt.zero_grad()
        loss = ((x @ params[0] + params[1]) ** 2).sum()
        loss.backward()
        opt.step()


def _adam_params(lib):
    init = [np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), np.ones(4, np.float32)]
    return [lib.tensor(a.copy(), requires_grad=True) for a in init]


def test_adam_state_dict_round_trip_continues_identically():
    ps = _adam_params(ft)
    opt = ft.optim.Adam(ps, lr=0.05, betas=(0.8, 0.99))
    _adam_run(ft, ps, opt, 3)
    raw = _ours_to_bytes({"opt": opt.state_dict(), "params": ps})
    ck = ft.load(io.BytesIO(raw), weights_only=True)
    ps2 = [p.detach().clone().requires_grad_(True) for p in ck["params"]]
    opt2 = ft.optim.Adam(ps2, lr=0.5)
    opt2.load_state_dict(ck["opt"])
    assert opt2.param_groups[0]["lr"] == 0.05 and opt2.param_groups[0]["betas"] == (0.8, 0.99)
    _adam_run(ft, ps, opt, 3, start=3)
    _adam_run(ft, ps2, opt2, 3, start=3)
    for a, b in zip(ps, ps2):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    # torch reads the same optimizer checkpoint and continues like ours
    tps = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in ck["params"]]
    topt = torch.optim.Adam(tps, lr=0.5)
    topt.load_state_dict(torch.load(io.BytesIO(raw), weights_only=True)["opt"])
    _adam_run(torch, tps, topt, 3, start=3)
    for a, b in zip(ps, tps):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_torch_adam_state_dict_loads_into_ours():
    tps = _adam_params(torch)
    topt = torch.optim.Adam(tps, lr=0.05)
    _adam_run(torch, tps, topt, 2)
    sd = ft.load(io.BytesIO(_torch_to_bytes(topt.state_dict())))
    assert sd["param_groups"][0]["lr"] == 0.05 and sd["state"][0]["step"].item() == 2.0
    ps = [ft.tensor(p.detach().numpy(), requires_grad=True) for p in tps]
    opt = ft.optim.Adam(ps, lr=0.05)
    opt.load_state_dict(sd)
    _adam_run(torch, tps, topt, 2, start=2)
    _adam_run(ft, ps, opt, 2, start=2)
    for a, b in zip(ps, tps):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def _zip_with_pickle(pkl: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def _make_marker(path):  # a global a pickle may call: creates a file
    pathlib.Path(path).write_text("ran")
    return "ran"


def test_weights_only_refuses_os_system(tmp_path):
    marker = tmp_path / "pwned"
    pkl = b"\x80\x02cos\nsystem\nX" + struct.pack("<I", len(f"touch {marker}")) + f"touch {marker}".encode() + b"\x85R."
    raw = _zip_with_pickle(pkl)
    for lib in (ft, torch):
        with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed(.|\n)*GLOBAL os\.system whose "
                                                         r"module os is blocked"):
            lib.load(io.BytesIO(raw), weights_only=True)
    assert not marker.exists()


def test_weights_only_refuses_other_globals_and_false_allows(tmp_path):
    marker = tmp_path / "made"
    pkl = pickle.dumps((_make_marker, (str(marker),)), protocol=2)  # a tuple holding a function global
    obj = type("R", (), {"__reduce__": lambda self: (_make_marker, (str(marker),))})()
    call = pickle.dumps(obj, protocol=2)
    for data in (pkl, call, pickle.dumps(np.ones(2), protocol=2), pickle.dumps(frozenset([1]), protocol=2)):
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            ft.load(io.BytesIO(_zip_with_pickle(data)))
    assert not marker.exists()
    assert ft.load(io.BytesIO(_zip_with_pickle(call)), weights_only=False) == "ran"
    assert marker.read_text() == "ran"
    # weights_only=False still resolves torch globals to facade objects
    got = ft.load(io.BytesIO(_torch_to_bytes({"t": torch.ones(2), "dt": torch.int8})), weights_only=False)
    assert type(got["t"]) is ft.Tensor and got["dt"] is ft.int8


def _rezip(raw: bytes, edit_pkl) -> bytes:
    """``raw`` with its data.pkl replaced by ``edit_pkl(data.pkl)``."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in src.namelist():
            data = src.read(name)
            z.writestr(name, edit_pkl(data) if name.endswith("data.pkl") else data)
    return out.getvalue()


def _cuda_tagged() -> bytes:
    """One of our files with its storage location rewritten to 'cuda:0' (as a GPU torch writes)."""
    raw = _ours_to_bytes({"w": ft.arange(4.0)})
    assert raw.count(b"X\x03\x00\x00\x00cpu") == 1
    return _rezip(raw, lambda pkl: pkl.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"))


def test_map_location_variants():
    raw = _cuda_tagged()
    np.testing.assert_array_equal(torch.load(io.BytesIO(raw), map_location="cpu")["w"].numpy(), np.arange(4.0))
    if not ft.cuda.is_available():
        for lib in (ft, torch):
            with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
                lib.load(io.BytesIO(raw))
    seen = []
    variants = ["cpu", ft.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: seen.append(loc) or s,
                lambda s, loc: s.cpu(), lambda s, loc: None if loc == "cpu" else s.to("cpu")]
    for ml in variants:
        t = ft.load(io.BytesIO(raw), map_location=ml)["w"]
        assert t.device == ft.device("cpu")
        np.testing.assert_array_equal(t.numpy(), np.arange(4.0))
    assert seen == ["cuda:0"]
    t = ft.load(io.BytesIO(_ours_to_bytes(ft.ones(2))), map_location="cpu:1")
    assert t.device == ft.device("cpu", 1) and t.sum().item() == 2.0
    t = ft.load(io.BytesIO(_ours_to_bytes(ft.ones(2))), map_location=None)
    assert t.device == ft.device("cpu")


def test_truncated_and_corrupt_files(tmp_path):
    raw = _ours_to_bytes({"w": ft.arange(100.0), "n": 3})
    for bad in (raw[: len(raw) // 2], raw[:-30]):
        with pytest.raises(RuntimeError, match="PytorchStreamReader failed"):
            ft.load(io.BytesIO(bad))
    # not a zip: read as torch's legacy format, whose first pickle is a magic number (as torch)
    with pytest.raises(EOFError):
        ft.load(io.BytesIO(b""))
    with pytest.raises(pickle.UnpicklingError, match="Unsupported operand 110"):
        ft.load(io.BytesIO(b"not a torch file at all"))
    # a data record shorter than its storage
    z = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as w:
        for name in z.namelist():
            w.writestr(name, z.read(name)[:10] if name.endswith("data/0") else z.read(name))
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        ft.load(io.BytesIO(out.getvalue()))
    # a truncated pickle inside a valid zip
    with pytest.raises(RuntimeError, match="data.pkl is truncated or corrupt"):
        ft.load(io.BytesIO(_zip_with_pickle(pickle.dumps([1, 2, 3], protocol=2)[:-3])))
    # torch's legacy (non-zip) format with a storage cut short
    legacy = io.BytesIO()
    torch.save(torch.ones(2), legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="truncated"):
        ft.load(io.BytesIO(legacy.getvalue()[:-3]))


def test_paths_file_objects_and_mmap(tmp_path):
    obj = {"w": ft.arange(6.0).reshape(2, 3), "s": "x"}
    for target in (tmp_path / "a.pt", str(tmp_path / "b.pt")):
        ft.save(obj, target)
        for mm in (None, True):
            got = ft.load(target, mmap=mm)
            np.testing.assert_array_equal(got["w"].numpy(), obj["w"].numpy())
        for mm in (False, True):  # torch's mmap needs the 64-byte aligned records
            np.testing.assert_array_equal(torch.load(target, mmap=mm)["w"].numpy(), obj["w"].numpy())
    with open(tmp_path / "c.pt", "wb") as fh:
        ft.save(obj, fh)
    with open(tmp_path / "c.pt", "rb") as fh:
        assert ft.load(fh)["s"] == "x"
    torch.save({"t": torch.ones(3)}, tmp_path / "d.pt")
    assert ft.load(tmp_path / "d.pt", mmap=True)["t"].sum().item() == 3.0
    with pytest.raises(ValueError, match="mmap"):
        ft.load(io.BytesIO(_ours_to_bytes(obj)), mmap=True)


def test_unsupported_dtype_and_reinterpreted_view():
    with pytest.raises(RuntimeError, match="cannot store"):
        ft.save(ft.zeros(2, dtype=ft.int4), io.BytesIO())
    a = ft.arange(4, dtype=ft.int32)
    f = a.view(ft.float32)
    got = torch.load(io.BytesIO(_ours_to_bytes([f])))[0]
    assert got.dtype == torch.float32 and _raw(got) == _raw(f)


def test_tensor_and_parameter_attributes_both_directions():
    t, p = torch.ones(2), torch.nn.Parameter(torch.ones(2))
    t.foo, p.bar = 3, "x"
    got = ft.load(io.BytesIO(_torch_to_bytes({"t": t, "p": p})))
    assert type(got["t"]) is ft.Tensor and got["t"].foo == 3
    assert type(got["p"]) is ft.nn.Parameter and got["p"].bar == "x"
    o, q = ft.ones(2), ft.nn.Parameter(ft.ones(2))
    o.foo, q.bar = 4, "y"
    back = torch.load(io.BytesIO(_ours_to_bytes({"t": o, "p": q})))
    assert type(back["t"]) is torch.Tensor and back["t"].foo == 4
    assert type(back["p"]) is torch.nn.Parameter and back["p"].bar == "y"


def test_identity_and_whole_module_with_weights_only_false():
    a = ft.arange(3.0)
    got = ft.load(io.BytesIO(_ours_to_bytes([a, a, {"again": a}])))
    assert got[0] is got[1] is got[2]["again"]
    ft.manual_seed(1)
    lin = ft.nn.Linear(2, 3)
    raw = _ours_to_bytes(lin)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ft.load(io.BytesIO(raw))
    lin2 = ft.load(io.BytesIO(raw), weights_only=False)
    assert type(lin2) is ft.nn.Linear and type(lin2.weight) is ft.nn.Parameter
    x = ft.ones(4, 2)
    np.testing.assert_array_equal(lin2(x).detach().numpy(), lin(x).detach().numpy())


def test_pickled_state_cannot_overwrite_tensor_internals():
    t = ft.ones(2)
    t._storage_hack = 1  # an ordinary attribute is kept ...
    raw = _ours_to_bytes(t)
    assert ft.load(io.BytesIO(raw))._storage_hack == 1
    bad = _rezip(raw, lambda pkl: pkl.replace(b"\x0d\x00\x00\x00_storage_hack", b"\x08\x00\x00\x00_storage"))
    with pytest.raises(pickle.UnpicklingError, match="refusing to overwrite the tensor attribute '_storage'"):
        ft.load(io.BytesIO(bad))  # ... a slot of the header is not


@pytest.mark.parametrize("kw", [{"foo": 1}, {"encoding": "latin1"}, {"errors": "strict"}, {"fix_imports": True}])
def test_load_keyword_arguments_of_the_weights_only_unpickler(kw):
    """torch's weights-only Unpickler takes ``encoding`` only: another keyword is its TypeError (was ignored); any
    such keyword warns, as torch's."""
    def run(L):
        buf = io.BytesIO()
        L.save(L.ones(2), buf)
        buf.seek(0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out = L.load(buf, **kw).tolist()
            except TypeError as e:
                out = str(e)
        return out, [str(x.message) for x in w]
    assert run(ft) == run(torch)
