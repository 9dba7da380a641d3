"""``torch.hub``'s weight downloads: ``load_state_dict_from_url``, ``download_url_to_file``, ``get_dir``/``set_dir``.

Pretrained weights published for PyTorch are ``torch.save`` files, which ``functorch_lite.load`` reads, so
``model.load_state_dict(torch.hub.load_state_dict_from_url(url))`` works as in PyTorch, with PyTorch's cache
directory (``$TORCH_HOME/hub/checkpoints``, by default ``~/.cache/torch/hub/checkpoints``: a file either library
downloaded is found by the other), its file naming, its hash check (``check_hash``: the hex digits after the last
``-`` of the file name prefix its SHA-256) and its fallback for the pre-1.6 zip format.

``hub.load``/``list``/``help`` are not offered: they run a repository's ``hubconf.py``, which builds its models
with ``import torch``, so they would be PyTorch modules, not the facade's. They raise and say so.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from urllib.parse import urlparse
from urllib.request import Request, urlopen
from ._warn import user_stacklevel as _user_stacklevel

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
READ_DATA_CHUNK = 128 * 1024
_hub_dir: str | None = None


def _get_torch_home() -> str:
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME,
                                        os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir() -> str:
    """Where downloads are cached: ``set_dir``'s directory, else ``$TORCH_HOME/hub``."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=_user_stacklevel())
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d) -> None:
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None, progress: bool = True) -> None:
    """Download ``url`` to ``dst`` through a temporary file next to it, checking that the content's SHA-256 starts
    with ``hash_prefix`` (PyTorch's message when not). ``progress``: a tqdm bar when tqdm is installed."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "w+b")  # noqa: SIM115
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(17, "No usable temporary file name found")
    req = Request(url, headers={"User-Agent": "torch.hub"})
    try:
        with urlopen(req) as u:
            sizes = u.info().get_all("Content-Length")
            total = int(sizes[0]) if sizes else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            bar = _progress(total, progress)
            try:
                while True:
                    buffer = u.read(READ_DATA_CHUNK)
                    if len(buffer) == 0:
                        break
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    if bar is not None:
                        bar.update(len(buffer))
            finally:
                if bar is not None:
                    bar.close()
            f.close()
            if sha256 is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _progress(total, progress):
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024)


def _is_legacy_zip_format(filename: str) -> bool:
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                  "zipfile format introduced in 1.6. Please redo torch.save() to save it in the new zipfile format.",
                  FutureWarning, stacklevel=_user_stacklevel())
    from .serialization import load
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        target = os.path.realpath(model_dir)
        if not os.path.realpath(os.path.join(model_dir, members[0].filename)).startswith(target + os.sep):
            raise ValueError(f"Extracted path {members[0].filename!r} is outside of the model directory")
        f.extractall(model_dir)
        extracted_file = os.path.join(model_dir, members[0].filename)
    return load(extracted_file, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None, progress: bool = True,
                             check_hash: bool = False, file_name: str | None = None, weights_only: bool = False):
    """The object ``torch.save``d at ``url`` (a state dict, usually), downloaded once into ``model_dir`` (default
    ``get_dir()/checkpoints``) as ``file_name`` or the URL's file name, then loaded with ``functorch_lite.load``."""
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=_user_stacklevel())
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    from .serialization import load
    return load(cached_file, map_location=map_location, weights_only=weights_only)


def _refuse(name):
    def refused(*args, **kwargs):
        raise RuntimeError(f"functorch_lite.hub.{name} is not supported: it runs a repository's hubconf.py, which "
                           "builds PyTorch modules with `import torch`, not facade ones. Build the model with "
                           "functorch_lite and load its published weights with hub.load_state_dict_from_url(url).")
    refused.__name__ = refused.__qualname__ = name
    return refused


load = _refuse("load")
list = _refuse("list")  # noqa: A001  (torch.hub's name)
help = _refuse("help")  # noqa: A001
