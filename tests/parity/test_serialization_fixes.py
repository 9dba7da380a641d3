"""save / load fixes against torch 2.13: several saves into one stream, layouts, map_location='meta', text-mode
targets, the zip's top folder. Cross-library round trips: each library reads what the other wrote."""
import io
import pickle
import sys
import zipfile

import pytest
import torch

import functorch_lite as ft

LIBS = {"torch": torch, "ft": ft}
PAIRS = [(w, r) for w in LIBS for r in LIBS]  # (writer, reader)


def _two_saves(lib, f, second_big=False):
    lib.save({"epoch": 1, "w": lib.tensor([1.0])}, f)
    lib.save({"epoch": 2, "w": lib.arange(50.0) if second_big else lib.tensor([2.0])}, f)


def _check_first(out):
    assert out["epoch"] == 1 and out["w"].tolist() == [1.0]


# ---- 1. several saves into one file / stream ---------------------------------------------------------------------
@pytest.mark.parametrize("writer,reader", PAIRS)
def test_two_saves_into_one_file_load_the_first(tmp_path, writer, reader):
    p = tmp_path / "two.pt"
    with open(p, "wb") as f:
        _two_saves(LIBS[writer], f)
    _check_first(LIBS[reader].load(p))
    _check_first(LIBS[reader].load(str(p), weights_only=False))
    if reader == "ft":
        _check_first(ft.load(p, mmap=True))


@pytest.mark.parametrize("writer,reader", PAIRS)
def test_two_saves_into_one_bytesio_load_the_first(writer, reader):
    b = io.BytesIO()
    _two_saves(LIBS[writer], b)
    b.seek(0)
    _check_first(LIBS[reader].load(b))


@pytest.mark.parametrize("writer", LIBS)
def test_two_saves_of_different_sizes_load_the_first(writer):
    # (torch's miniz then fails: it takes the last archive's directory, read from the first archive's start)
    b = io.BytesIO()
    _two_saves(LIBS[writer], b, second_big=True)
    b.seek(0)
    _check_first(ft.load(b))


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("writer", LIBS)
def test_second_load_from_the_same_stream_fails_as_torch(writer, weights_only):
    raw = io.BytesIO()
    _two_saves(LIBS[writer], raw)
    outcomes = {}
    for name, lib in LIBS.items():
        b = io.BytesIO(raw.getvalue())
        _check_first(lib.load(b, weights_only=weights_only))
        pos = b.tell()
        with pytest.raises(pickle.UnpicklingError) as e:
            lib.load(b, weights_only=weights_only)
        outcomes[name] = (pos, str(e.value))
    assert outcomes["ft"] == outcomes["torch"]


@pytest.mark.parametrize("writer", LIBS)
def test_load_leaves_the_stream_where_torch_does(writer):
    x = LIBS[writer].ones(5)
    for obj, kw in [({"a": 1}, {}), ([LIBS[writer].ones(2), x, x[1:]], {}), ([x, x[2:]], {"map_location": "meta"})]:
        raw = io.BytesIO()
        LIBS[writer].save(obj, raw)
        raw.write(b"\0" * 40)
        pos = {}
        for name, lib in LIBS.items():
            b = io.BytesIO(raw.getvalue())
            lib.load(b, **kw)
            pos[name] = b.tell()
        assert pos["ft"] == pos["torch"]


@pytest.mark.parametrize("junk", [b"junk" * 10, b"PK\x05\x06" + b"\0" * 18, b"\0" * 1000])
@pytest.mark.parametrize("writer", LIBS)
def test_trailing_bytes_after_one_save(tmp_path, writer, junk):
    b = io.BytesIO()
    LIBS[writer].save(LIBS[writer].tensor([5.0]), b)
    b.write(junk)
    p = tmp_path / "junk.pt"
    p.write_bytes(b.getvalue())
    b.seek(0)
    assert ft.load(b).tolist() == [5.0]
    assert ft.load(p).tolist() == [5.0]
    assert ft.load(p, mmap=True).tolist() == [5.0]


@pytest.mark.parametrize("writer,reader", PAIRS)
def test_save_after_other_bytes_of_a_stream(writer, reader):
    b = io.BytesIO(b"HEADER")
    b.seek(6)
    LIBS[writer].save(LIBS[writer].tensor([7.0]), b)
    b.seek(6)
    assert LIBS[reader].load(b).tolist() == [7.0]


# ---- 2. layouts; what torch refuses to pickle -----------------------------------------------------------------
@pytest.mark.parametrize("writer,reader", PAIRS)
def test_layout_round_trip_weights_only(writer, reader):
    w, r = LIBS[writer], LIBS[reader]
    b = io.BytesIO()
    w.save({"layout": w.strided, "t": w.ones(2), "more": [w.strided]}, b)
    b.seek(0)
    out = r.load(b)  # (weights_only=True: torch.serialization._get_layout is allowed)
    assert out["layout"] is r.strided and out["more"][0] is r.strided
    assert out["t"].tolist() == [1.0, 1.0]


def test_layout_pickled_as_torch_pickles_it():
    ours, theirs = io.BytesIO(), io.BytesIO()
    ft.save(ft.strided, ours)
    torch.save(torch.strided, theirs)
    assert zipfile.ZipFile(ours).read("archive/data.pkl") == zipfile.ZipFile(theirs).read("archive/data.pkl")


@pytest.mark.parametrize("make", [lambda m: m.channels_last, lambda m: m.contiguous_format,
                                  lambda m: m.preserve_format, lambda m: m.channels_last_3d,
                                  lambda m: m.finfo(m.float16), lambda m: m.finfo(), lambda m: m.iinfo(m.uint8),
                                  lambda m: {"fmt": m.channels_last}])
def test_unpicklable_torch_objects_refused_as_torch(make):
    with pytest.raises(TypeError) as theirs:
        torch.save(make(torch), io.BytesIO())
    with pytest.raises(TypeError) as ours:
        ft.save(make(ft), io.BytesIO())
    assert str(ours.value) == str(theirs.value)


# ---- 3. map_location='meta' ---------------------------------------------------------------------------------
def _meta_obj(lib):
    x = lib.arange(24, dtype=lib.float64).reshape(2, 3, 4)
    return {"t": x.transpose(0, 2), "v": x[1, 1:], "e": lib.empty(0, 3), "s": lib.tensor(2.5),
            "i": lib.arange(3, dtype=lib.int16), "p": lib.nn.Parameter(lib.ones(2, 2)),
            "g": lib.ones(3, requires_grad=True), "f8": lib.ones(3).to(lib.float8_e4m3fn)}


def _describe(v):
    return (type(v).__name__, str(v.device), str(v.dtype), tuple(v.shape), v.stride(), v.storage_offset(),
            v.requires_grad, v.is_meta, repr(v))


@pytest.mark.parametrize("where", ["meta", "device", "dict"])
@pytest.mark.parametrize("writer", LIBS)
def test_load_to_meta_gives_meta_tensors(writer, where):
    raw = io.BytesIO()
    LIBS[writer].save(_meta_obj(LIBS[writer]), raw)
    got = {}
    for name, lib in LIBS.items():
        ml = {"meta": "meta", "device": lib.device("meta"), "dict": {"cpu": "meta"}}[where]
        out = lib.load(io.BytesIO(raw.getvalue()), map_location=ml)
        got[name] = {k: _describe(v) for k, v in out.items()}
        assert isinstance(out["p"], lib.nn.Parameter)
        for k in ("t", "v", "p"):
            with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
                out[k].tolist()
        assert (out["t"] + 1).is_meta
    assert got["ft"] == got["torch"]


def test_meta_tensor_from_load_matches_empty_meta():
    b = io.BytesIO()
    ft.save(ft.ones(2), b)
    b.seek(0)
    t = ft.load(b, map_location="meta")
    assert repr(t) == repr(ft.empty(2, device="meta")) == "tensor(..., device='meta', size=(2,))"


# ---- 4. a text-mode target -------------------------------------------------------------------------------------
def test_save_to_text_mode_file_raises_quietly(tmp_path):
    unraisable = []
    old = sys.unraisablehook
    sys.unraisablehook = unraisable.append
    try:
        errors = {}
        for name, lib in LIBS.items():
            p = tmp_path / f"{name}.txt"
            with open(p, "w") as f:
                with pytest.raises(TypeError) as e:
                    lib.save({"a": lib.ones(2)}, f)
            errors[name] = str(e.value)
            del e
            assert p.read_bytes() == b""
        with pytest.raises(TypeError) as e:
            ft.save(ft.ones(2), io.StringIO())
        with pytest.raises(TypeError) as e2:
            torch.save(torch.ones(2), io.StringIO())
        assert str(e.value) == str(e2.value)
        del e, e2
        import gc
        gc.collect()
    finally:
        sys.unraisablehook = old
    assert errors["ft"] == errors["torch"]
    assert unraisable == []


# ---- 5. the zip's top folder -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fname", ["z.pt", "a.b.c", "noext", "end.", "sp ace.pt", "ckpt.tar.gz", "\u00fc.pt"])
def test_archive_folder_named_after_the_file(tmp_path, fname):
    tops = {}
    for name, lib in LIBS.items():
        d = tmp_path / name
        d.mkdir()
        lib.save({"w": lib.tensor([1.0, 2.0])}, str(d / fname))
        tops[name] = sorted(zipfile.ZipFile(d / fname).namelist())
        other = LIBS["ft" if name == "torch" else "torch"]
        assert other.load(str(d / fname))["w"].tolist() == [1.0, 2.0]
    assert tops["ft"] == tops["torch"]


def test_archive_folder_for_pathlike_and_file_objects(tmp_path):
    for name, lib in LIBS.items():
        lib.save(1, tmp_path / f"{name}_path.pt")
        assert zipfile.ZipFile(tmp_path / f"{name}_path.pt").namelist()[0] == f"{name}_path/data.pkl"
        with open(tmp_path / f"{name}_fo.pt", "wb") as f:
            lib.save(1, f)
        assert zipfile.ZipFile(tmp_path / f"{name}_fo.pt").namelist()[0] == "archive/data.pkl"
        b = io.BytesIO()
        lib.save(1, b)
        assert zipfile.ZipFile(b).namelist()[0] == "archive/data.pkl"


@pytest.mark.parametrize("fname", [".hidden", ".pt"])
def test_file_name_without_stem_refused_as_torch(tmp_path, fname):
    for name, lib in LIBS.items():
        d = tmp_path / name
        d.mkdir()
        with pytest.raises(RuntimeError, match="invalid file name: " + str(d / fname)):
            lib.save(1, str(d / fname))
        assert not (d / fname).exists()
