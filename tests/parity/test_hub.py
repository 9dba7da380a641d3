"""``hub.load_state_dict_from_url`` / ``download_url_to_file`` / ``get_dir`` against real torch's, with ``file://``
URLs (urllib fetches them as it fetches http ones; no network here): weights real torch saved load into a facade
model, the cache's file naming, ``check_hash``'s digest check and message, ``file_name``, the pre-1.6 single-file
zip fallback, ``TORCH_HOME``, and the refused ``hub.load``."""
import hashlib
import zipfile

import numpy as np
import pytest
import torch

import functorch_lite as ft


@pytest.fixture
def published(tmp_path):
    """A ResNet-style published checkpoint: real torch's state dict saved as <name>-<sha256 prefix>.pth."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                                torch.nn.Linear(16, 2))
    raw = tmp_path / "raw.pth"
    torch.save(model.state_dict(), raw)
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    src = tmp_path / "site" / f"tiny-{digest[:8]}.pth"
    src.parent.mkdir()
    raw.rename(src)
    return model, src, digest


def _facade_model():
    nn = ft.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten(), nn.Linear(16, 2))


def test_pretrained_weights_load_into_a_facade_model(published, tmp_path, capsys):
    model, src, _ = published
    url = src.as_uri()
    results = []
    for L in (torch, ft):
        model_dir = tmp_path / f"cache_{L.__name__}"
        sd = L.hub.load_state_dict_from_url(url, model_dir=str(model_dir), progress=False, check_hash=True)
        out = capsys.readouterr().out
        assert out == f'Downloading: "{url}" to {model_dir / src.name}\n'
        assert sorted(p.name for p in model_dir.iterdir()) == [src.name]          # no .partial file left
        results.append(sd)
        again = L.hub.load_state_dict_from_url(url, model_dir=str(model_dir), progress=False)  # cached: no download
        assert capsys.readouterr().out == "" and list(again) == list(sd)
    theirs, ours = results
    assert list(ours) == list(theirs)
    for k in theirs:
        assert str(ours[k].dtype) == str(theirs[k].dtype)
        np.testing.assert_array_equal(ours[k].numpy(), theirs[k].numpy())
    fm = _facade_model()
    assert str(fm.load_state_dict(ours)) == "<All keys matched successfully>"
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 4)).astype(np.float32)
    model.eval()
    fm.eval()
    np.testing.assert_allclose(fm(ft.tensor(x)).detach().numpy(), model(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_hash_mismatch_and_file_name(published, tmp_path):
    _, src, digest = published
    bad = src.with_name("tiny-0123abcd.pth")
    src.rename(bad)
    for L in (torch, ft):
        d = tmp_path / f"h_{L.__name__}"
        with pytest.raises(RuntimeError) as e:
            L.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(d), progress=False, check_hash=True)
        assert str(e.value) == f'invalid hash value (expected "0123abcd", got "{digest}")'
        assert not any(d.iterdir())                                                # nothing kept
        sd = L.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(d), progress=False, file_name="w.pth")
        assert [p.name for p in d.iterdir()] == ["w.pth"] and "3.weight" in sd


def test_download_url_to_file_and_dirs(published, tmp_path, monkeypatch):
    _, src, digest = published
    for L in (torch, ft):
        dst = tmp_path / f"dl_{L.__name__}.bin"
        L.hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:10], progress=False)
        assert dst.read_bytes() == src.read_bytes()
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert ft.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "home" / "hub")
    sd = ft.hub.load_state_dict_from_url(src.as_uri(), progress=False)           # default: get_dir()/checkpoints
    assert (tmp_path / "home" / "hub" / "checkpoints" / src.name).exists() and "0.weight" in sd
    monkeypatch.setattr(ft.hub, "_hub_dir", None)  # (restored after the test)
    ft.hub.set_dir(str(tmp_path / "mine"))
    assert ft.hub.get_dir() == str(tmp_path / "mine")


def test_legacy_single_file_zip(published, tmp_path):
    _, src, _ = published
    old = tmp_path / "site" / "old.zip"
    with zipfile.ZipFile(old, "w") as z:
        z.write(src, "inner.pth")
    got = []
    for L in (torch, ft):
        d = tmp_path / f"z_{L.__name__}"
        with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
            got.append(L.hub.load_state_dict_from_url(old.as_uri(), model_dir=str(d), progress=False))
        assert sorted(p.name for p in d.iterdir()) == ["inner.pth", "old.zip"]
    assert list(got[0]) == list(got[1])


@pytest.mark.parametrize("name", ["load", "list", "help"])
def test_hubconf_entry_points_refused(name):
    with pytest.raises(RuntimeError, match=f"^functorch_lite.hub.{name} is not supported: it runs a repository's "
                                           "hubconf.py"):
        getattr(ft.hub, name)("pytorch/vision", "resnet18")
