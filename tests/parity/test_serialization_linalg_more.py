"""Serialization and linalg details found by a red-team pass against torch 2.13, each compared with torch:

- a conjugate view (``x.conj()``, ``A.mH``, ``A.adjoint()``) saves its storage's values with torch's ``conj``
  metadata, and ``load`` applies torch's conj / neg metadata (both were dropped: the values came back
  unconjugated, silently, in every direction);
- ``load(f, pickle_module=pickle)`` defaults to ``weights_only=False`` as torch's does (it raised);
- a class in ``safe_globals`` that the pickle builds without naming it (numpy's dtype classes) may have its state
  set under ``weights_only=True``;
- ``linalg.qr(mode='complete')`` of a tall matrix gives R (m, n) (it gave (n, n));
- svd / svdvals / pinv / matrix_rank / cond / the 2- and nuclear norms of a matrix holding a NaN raise torch's
  LinAlgError (they gave NaN, and matrix_rank 0).
"""
import io
import pickle

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _round_trip(saver, loader, obj):
    b = io.BytesIO()
    saver.save(obj, b)
    return loader.load(io.BytesIO(b.getvalue()))


def _conj_objects(L):
    a = L.tensor([[1 + 2j, 3j], [4.0 + 0j, 5 - 1j]])
    x = L.tensor([1 + 1j, 2 - 3j])
    return {"conj": x.conj(), "mH": a.mH, "adjoint": a.adjoint(), "base": x,
            "grad": L.tensor([1 + 1j, -2j]).conj().requires_grad_()}


def _describe(d):
    return {k: (v.detach().resolve_conj().resolve_neg().numpy().tolist(), v.is_conj(), v.requires_grad,
                str(v.dtype), tuple(v.shape)) for k, v in d.items()}


DIRECTIONS = pytest.mark.parametrize("saver, loader", [(torch, ft), (ft, torch), (ft, ft)],
                                     ids=["torch->ft", "ft->torch", "ft->ft"])


@DIRECTIONS
def test_conjugate_views_round_trip(saver, loader):
    got = _describe(_round_trip(saver, loader, _conj_objects(saver)))
    want = _describe(_round_trip(torch, torch, _conj_objects(torch)))
    assert got == want


@DIRECTIONS
def test_the_negative_bit_round_trips(saver, loader):
    """``x.conj().imag`` (torch's negative bit; saved alone: beside ``x`` torch refuses two dtypes of one storage)."""
    def make(L):
        return {"i": L.tensor([1 + 1j, 2 - 3j]).conj().imag}
    got = _describe(_round_trip(saver, loader, make(saver)))
    assert got == _describe(_round_trip(torch, torch, make(torch)))


def test_a_loaded_conjugate_shares_its_storage():
    d = _round_trip(torch, ft, (lambda x: {"x": x, "c": x.conj()})(torch.tensor([1 + 1j, 2 - 3j])))
    d["x"].add_(1)
    assert d["c"].tolist() == [2 - 1j, 3 + 3j]


def test_pickle_module_means_weights_only_false():
    b = io.BytesIO()
    torch.save({"w": torch.ones(2), "step": 3}, b)
    for lib in (torch, ft):
        d = lib.load(io.BytesIO(b.getvalue()), pickle_module=pickle)
        assert d["step"] == 3 and d["w"].tolist() == [1.0, 1.0]
    for lib in (torch, ft):
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module"):
            lib.load(io.BytesIO(b.getvalue()), pickle_module=pickle, weights_only=True)


def test_safe_globals_numpy_array():
    b = io.BytesIO()
    torch.save({"np": np.arange(3)}, b)
    dtype_cls = type(np.dtype(np.int64))
    allowed = [np._core.multiarray._reconstruct, np.ndarray, np.dtype, dtype_cls]
    out = {}
    for lib in (torch, ft):
        with lib.serialization.safe_globals(allowed):
            out[lib] = lib.load(io.BytesIO(b.getvalue()))["np"]
    np.testing.assert_array_equal(out[ft], out[torch])
    with pytest.raises(pickle.UnpicklingError):
        ft.load(io.BytesIO(b.getvalue()))


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 2), (3, 3), (2, 5)])
def test_qr_complete(shape):
    a = np.random.RandomState(0).randn(*shape)
    for mode in ("complete", "reduced", "r"):
        Qt, Rt = torch.linalg.qr(torch.tensor(a), mode=mode)
        Qf, Rf = ft.linalg.qr(ft.tensor(a), mode=mode)
        assert tuple(Qf.shape) == tuple(Qt.shape) and tuple(Rf.shape) == tuple(Rt.shape)
        np.testing.assert_allclose(np.abs(Rf.numpy()), np.abs(Rt.numpy()), atol=1e-10)
        if mode != "r":
            np.testing.assert_allclose((Qf @ Rf).numpy(), a, atol=1e-10)


def _outcome(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the outcome compared)
        return (type(e).__name__, str(e))
    return "ok"


NONFINITE = {
    "svd": lambda L, a: L.linalg.svd(a),
    "svdvals": lambda L, a: L.linalg.svdvals(a),
    "torch.svd": lambda L, a: L.svd(a),
    "pinv": lambda L, a: L.linalg.pinv(a),
    "matrix_rank": lambda L, a: L.linalg.matrix_rank(a),
    "cond": lambda L, a: L.linalg.cond(a),
    "matrix_norm 2": lambda L, a: L.linalg.matrix_norm(a, 2),
    "matrix_norm -2 dims": lambda L, a: L.linalg.matrix_norm(a.unsqueeze(-1), -2, dim=(-3, -2)),
    "matrix_norm nuc": lambda L, a: L.linalg.matrix_norm(a, "nuc"),
    "norm nuc": lambda L, a: L.norm(a, "nuc", dim=(-2, -1)),
    "matrix_norm fro (no SVD)": lambda L, a: L.linalg.matrix_norm(a),
    "pinv hermitian (no SVD)": lambda L, a: L.linalg.pinv(a, hermitian=True),
}


@pytest.mark.parametrize("name", list(NONFINITE))
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_matrix_raises_linalg_error(name, bad):
    for batched in (False, True):
        def run(L):
            a = L.tensor([[bad, 0.0], [0.0, 1.0]])
            return NONFINITE[name](L, L.stack([L.eye(2), a]) if batched else a)
        assert _outcome(lambda: run(ft)) == _outcome(lambda: run(torch))
    if "no SVD" not in name and bad != bad:  # (a NaN: an inf gives NaN values, no error, in torch too)
        assert issubclass(ft.linalg.LinAlgError, RuntimeError)
        with pytest.raises(ft.linalg.LinAlgError):
            NONFINITE[name](ft, ft.tensor([[bad, 0.0], [0.0, 1.0]]))


def test_non_finite_svd_in_a_compiled_function_raises():
    f = ft.compile(lambda a: ft.linalg.svdvals(a) * 2)
    assert f(ft.eye(2)).tolist() == [2.0, 2.0]
    with pytest.raises(ft.linalg.LinAlgError, match="non-finite values"):
        f(ft.tensor([[float("nan"), 0.0], [0.0, 1.0]]))


def _legacy_objects(L):
    m = L.nn.Linear(3, 2)
    with L.no_grad():
        m.weight.copy_(L.arange(6.0).reshape(2, 3))
        m.bias.copy_(L.tensor([0.5, -1.0]))
    x = L.arange(12.0).reshape(3, 4)
    return {"sd": m.state_dict(), "x": x, "xt": x.t(), "row": x[1], "bf16": L.ones(3, dtype=L.bfloat16),
            "i8": L.tensor([1, -2], dtype=L.int8), "bool": L.tensor([True, False]), "c64": L.tensor([1 + 2j]),
            "epoch": 3, "name": "run", "p": L.nn.Parameter(L.ones(2)), "empty": L.zeros(0, 3)}


def _describe_tree(d):
    if isinstance(d, dict):
        return {k: _describe_tree(v) for k, v in d.items()}
    if hasattr(d, "dtype"):
        v = d.detach()
        return (str(v.dtype), tuple(v.shape), tuple(v.stride()), type(d).__name__,
                (v.to(torch.float32) if isinstance(v, torch.Tensor) and not v.is_complex() else
                 v.float() if not v.is_complex() else v).tolist())
    return d


@DIRECTIONS
@pytest.mark.parametrize("weights_only", [True, False])
def test_legacy_format_round_trips(saver, loader, weights_only):
    """torch's legacy (non-zip) format, ``_use_new_zipfile_serialization=False`` (and every torch < 1.6 file):
    written and read (load raised, save raised NotImplementedError)."""
    b = io.BytesIO()
    saver.save(_legacy_objects(saver), b, _use_new_zipfile_serialization=False)
    got = loader.load(io.BytesIO(b.getvalue()), weights_only=weights_only)
    w = io.BytesIO()
    torch.save(_legacy_objects(torch), w, _use_new_zipfile_serialization=False)
    want = torch.load(io.BytesIO(w.getvalue()), weights_only=weights_only)
    assert _describe_tree(got) == _describe_tree(want)
    got["x"].add_(1)  # (views share their storage after the load, as torch's)
    assert got["row"].tolist() == [5.0, 6.0, 7.0, 8.0]


def test_legacy_format_whole_module():
    m = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    b = io.BytesIO()
    torch.save(m, b, _use_new_zipfile_serialization=False)
    mf = ft.load(io.BytesIO(b.getvalue()), weights_only=False)
    assert isinstance(mf, ft.nn.Sequential)
    np.testing.assert_allclose(mf(ft.ones(1, 2)).detach().numpy(), m(torch.ones(1, 2)).detach().numpy(), rtol=1e-6)
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        ft.load(io.BytesIO(b.getvalue()))


def test_legacy_format_map_location_and_errors(tmp_path):
    b = io.BytesIO()
    torch.save({"w": torch.ones(2)}, b, _use_new_zipfile_serialization=False)
    assert ft.load(io.BytesIO(b.getvalue()), map_location="cpu")["w"].device.type == "cpu"
    with pytest.raises(RuntimeError, match="truncated"):
        ft.load(io.BytesIO(b.getvalue()[:-2]))
    import tarfile
    path = tmp_path / "old.tar"
    with tarfile.open(path, "w") as tar:
        (tmp_path / "storages").write_bytes(b"x")
        tar.add(tmp_path / "storages", arcname="storages")
    with pytest.raises(RuntimeError, match=r"\.tar format"):
        ft.load(path)
