"""``save``/``load`` in PyTorch's own file format (``torch.save``'s zip format, torch >= 1.6).

The zip is uncompressed, its records under ``archive/`` in torch 2.13's order and 64-byte aligned:
``data.pkl`` (pickle protocol 2; a tensor is ``torch._utils._rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, OrderedDict())``, a storage the persistent id ``('storage',
torch.FloatStorage, key, location, numel)``; float8/uint16+ use ``_rebuild_tensor_v3`` with
``torch.storage.UntypedStorage``), ``.format_version``, ``.storage_alignment``, ``byteorder``,
``data/<key>`` (raw little-endian bytes), ``version``, ``.data/serialization_id``. torch is never
imported: its globals are written by name and read back as their functorch_lite equivalents.
``load(weights_only=True)`` (the default) accepts only torch's default allow-list of globals and the ones
``add_safe_globals`` / ``safe_globals`` add, with torch's restricted set of pickle opcodes. torch's legacy
format (``_use_new_zipfile_serialization=False``, torch < 1.6) is written and read too (``_write_legacy``,
``_load_not_zip``). A storage record loads as torch's: a ``TypedStorage`` over the record's bytes (an
``UntypedStorage`` on the CPU, which ``map_location`` and the deserializers of ``register_package``'s registry place:
``default_restore_location``); a big-endian record is byteswapped. ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` /
``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` are read at every ``load``, as torch reads them (not flags of ``_config``: a
script may set them between loads). The rest of ``torch.serialization``'s API is here: ``skip_data``, the load
endianness, CRC-32 and mmap options, ``location_tag``, ``StorageType``...
"""
from __future__ import annotations

import collections
import contextlib
import enum
import functools
import io
import mmap as _mmap
import os
import pickle
import shutil
import struct
import tempfile
import threading
import types
import uuid
import warnings
import zipfile
from typing import Any, Callable, Dict, Optional, Union

import jax
import numpy as np

from . import _device as _dev
from . import dtypes as D
from ._tensor import views as V
from ._tensor.tensor import Size, Tensor, TypedStorage, UntypedStorage
from ._tensor.storage import META_NO_DATA

__all__ = ["save", "load"]  # (what ``functorch_lite`` re-exports; the allow-list API stays in this module, as torch's)

DEFAULT_PROTOCOL = 2

MAP_LOCATION = Optional[Union[Callable[[Any, str], Any], _dev.device, str, Dict[str, str]]]


class SourceChangeWarning(Warning):
    pass


@contextlib.contextmanager
def mkdtemp():
    """A temporary folder for the block, removed after it."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


# ---- options (torch.utils.serialization.config's, set through torch.serialization's functions) --------------------
class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


# endianness: the byte order of a checkpoint without a ``byteorder`` record (None: little, as torch's default);
# crc32: whether ``save`` writes each record's CRC-32; mmap_flags: ``load(mmap=True)``'s mapping (MAP_SHARED's
# write-through has no effect here: a tensor's values are immutable arrays, a write replaces them)
_CONFIG: dict = {"endianness": None, "crc32": True, "mmap_flags": _mmap.MAP_PRIVATE}


def get_default_load_endianness() -> LoadEndianness | None:
    """The byte order ``load`` assumes for a checkpoint that has no ``byteorder`` record (None: little-endian)."""
    return _CONFIG["endianness"]


def set_default_load_endianness(endianness) -> None:
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _CONFIG["endianness"] = endianness


def get_crc32_options() -> bool:
    """Whether ``save`` computes and writes each record's CRC-32 (default True; ``load`` does not check them)."""
    return _CONFIG["crc32"]


def set_crc32_options(compute_crc32: bool) -> None:
    _CONFIG["crc32"] = compute_crc32


def get_default_mmap_options() -> int | None:
    """``load(mmap=True)``'s mmap flags (``mmap.MAP_PRIVATE`` by default)."""
    return _CONFIG["mmap_flags"]


class set_default_mmap_options:
    """Set ``load(mmap=True)``'s flags to ``mmap.MAP_PRIVATE`` or ``mmap.MAP_SHARED`` (a call, or a ``with`` block
    that restores the previous ones)."""

    def __init__(self, flags: int) -> None:
        if flags != _mmap.MAP_PRIVATE and flags != _mmap.MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected mmap.MAP_PRIVATE or "
                             f"mmap.MAP_SHARED, but got {flags}")
        self.prev = _CONFIG["mmap_flags"]
        _CONFIG["mmap_flags"] = flags

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        _CONFIG["mmap_flags"] = self.prev


class _SerializationLocal(threading.local):
    def __init__(self):
        super().__init__()
        self.skip_data = False
        self.materialize_fake_tensors = False


_TLS = _SerializationLocal()


class skip_data:
    """``with skip_data(): save(obj, f)`` writes each storage's record without its values (zeros, CRC-32 0: the
    values can be written into it later); ``load`` inside the block reads no values (the tensors are zeros here,
    uninitialised memory in torch). The zip format only, as torch."""

    def __init__(self, materialize_fake_tensors: bool = False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old_skip_data, self._old_materialize_fake_tensors = _TLS.skip_data, _TLS.materialize_fake_tensors
        _TLS.skip_data, _TLS.materialize_fake_tensors = True, self.materialize_fake_tensors

    def __exit__(self, type, value, tb):  # noqa: A002
        _TLS.skip_data, _TLS.materialize_fake_tensors = self._old_skip_data, self._old_materialize_fake_tensors


# ---- legacy helpers torch.serialization still has ----------------------------------------------------------------
def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed: bool = True) -> bool:
    """Whether ``module.__version__`` ('x.y.z') is at least ``req_version_tuple`` (a malformed one: an error, or a
    warning and True)."""
    try:
        version_strs = module.__version__.split(".")
        module_version = tuple(type(req)(version_strs[i]) for i, req in enumerate(req_version_tuple))
        return module_version >= req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed '{module.__version__}' and cannot be "
                   f"compared with tuple {str(req_version_tuple)}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met", stacklevel=2)
        return True


class StorageType:
    """A legacy storage class named in a checkpoint (``StorageType('FloatStorage').dtype``: float32)."""

    def __init__(self, name: str):
        dtype = _STORAGE_DTYPE.get(name)
        if dtype is None:
            raise KeyError(f'pickle storage type "{name}" is not recognized')
        self._dtype = dtype

    @property
    def dtype(self):
        return self._dtype

    def __str__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


def normalize_storage_type(storage_type):
    """The ``functorch_lite`` attribute of a storage class's name (torch's)."""
    import functorch_lite
    return getattr(functorch_lite, storage_type.__name__)


def storage_to_tensor_type(storage):
    """The legacy tensor class of a legacy storage (``FloatStorage`` -> ``FloatTensor``); none for the
    ``TypedStorage`` / ``UntypedStorage`` classes, as torch's."""
    name = type(storage).__name__.replace("Storage", "Tensor")
    if isinstance(storage, (TypedStorage, UntypedStorage)):
        raise AttributeError(f"module 'torch.storage' has no attribute '{name}'")
    import functorch_lite
    return getattr(functorch_lite, name)

# ---- torch's names ------------------------------------------------------------------------------
_LEGACY_STORAGE = {  # torch.storage._dtype_to_storage_type_map()
    D.float64: "DoubleStorage", D.float32: "FloatStorage", D.float16: "HalfStorage", D.int64: "LongStorage",
    D.int32: "IntStorage", D.int16: "ShortStorage", D.int8: "CharStorage", D.uint8: "ByteStorage",
    D.bool: "BoolStorage", D.bfloat16: "BFloat16Storage", D.complex128: "ComplexDoubleStorage",
    D.complex64: "ComplexFloatStorage",
}
_STORAGE_DTYPE = {name: d for d, name in _LEGACY_STORAGE.items()}
# torch.storage._new_dtypes() that the facade has: written as UntypedStorage + a torch dtype
_NEW_DTYPES = (D.float8_e4m3fn, D.float8_e5m2, D.float8_e4m3fnuz, D.float8_e5m2fnuz, D.float8_e8m0fnu,
               D.uint16, D.uint32, D.uint64)
_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.")
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")  # torch's _blocklisted_modules
_NOT_ZIP = ("PytorchStreamReader failed reading zip archive: failed finding central directory. This is an internal "
            "miniz error. If you are seeing this error, there is a high likelihood that your checkpoint file is "
            "corrupted. This can happen if the checkpoint was not saved properly, was transferred incorrectly, or the "
            "file was modified after saving.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # the first pickle of torch's legacy (non-zip) format


class _Global:
    """Stand-in for a torch global (``torch.FloatStorage``...): pickled as ``GLOBAL module name``."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):  # callable so that save_reduce accepts it; never called here
        raise TypeError(f"{self.module}.{self.name} is a placeholder for a torch global")


_GLOBALS: dict = {}


def _glob(module: str, name: str) -> _Global:
    g = _GLOBALS.get((module, name))
    if g is None:
        g = _GLOBALS[(module, name)] = _Global(module, name)
    return g


# ---- writing -------------------------------------------------------------------------------------
class _Boxed:
    """``kind`` 'pid': a storage, pickled as the persistent id ``value``; 'data': a Parameter's data."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value):
        self.kind, self.value = kind, value


class _Pickler(pickle._Pickler):
    """Pure-Python pickler (so torch globals can be written by name) with torch's tensor reduction."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol: int):
        super().__init__(file, protocol=protocol)
        self.records: list = []      # (key, numpy bytes) in key order
        self.numels: dict = {}       # key -> the storage's numel as its persistent id gives it
        self.legacy = False          # the legacy format's persistent ids: a sixth element (view metadata, None)
        self._by_storage: dict = {}  # root storage uid (never reused) -> (key, dtype, location, numel)
        self._viewed_as: dict = {}   # root storage uid -> the dtype its tensors were saved as

    def persistent_id(self, obj):
        if type(obj) is _Boxed:
            return obj.value if obj.kind == "pid" else None
        if isinstance(obj, UntypedStorage):
            return self._storage_pid(obj, D.uint8)
        if isinstance(obj, TypedStorage):
            return self._storage_pid(obj._untyped_storage, obj.dtype)
        return None

    def _storage_pid(self, storage: UntypedStorage, dt: D.dtype) -> tuple:
        """torch's persistent id of a saved storage: an untyped one (``t.untyped_storage()``, ``dt`` uint8) as
        ``('storage', torch.storage.UntypedStorage, key, location, nbytes)``, a typed one (``t.storage()``) as
        ``('storage', torch.FloatStorage, key, location, numel)``, the record shared with the tensors saved from it
        (as ``dt``: torch's rule that one storage is saved as one dtype)."""
        root = storage._s.root()
        base = root.array
        if type(base) is jax.ShapeDtypeStruct:
            raise NotImplementedError(META_NO_DATA)
        if isinstance(base, jax.core.Tracer):
            from .ops._dispatch import data_dependent_error
            raise data_dependent_error("saving a storage")
        if self._viewed_as.setdefault(root.uid, dt) is not dt:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        return self._storage_ref(root, base, dt, root.device, untyped=dt is D.uint8).value

    def _save_torch_global(self, obj, module: str, name: str) -> None:
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[_Global] = lambda self, obj: self._save_torch_global(obj, obj.module, obj.name)
    dispatch[D.dtype] = lambda self, obj: self._save_torch_global(obj, "torch", obj.name)
    dispatch[types.FunctionType] = lambda self, obj: self.save_global(obj)

    def save_global(self, obj, name=None):
        """A class or function by name; the facade's ``Tensor`` and ``nn.Parameter`` classes and its
        ``nn.functional`` functions by torch's name (what ``load(weights_only=True)`` allows, and torch reads)."""
        torch_name = _torch_name_of(obj) if name is None else None
        if torch_name is not None:
            self._save_torch_global(obj, *torch_name)
        else:
            super().save_global(obj, name)

    def reducer_override(self, obj):
        t = type(obj)
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if t is _sparse_type():  # (torch's Tensor.__reduce_ex__ of a sparse COO tensor)
            return _glob("torch._utils", "_rebuild_sparse_tensor"), (obj.layout, (obj._i, obj._v.detach(), obj.shape,
                                                                                  obj._coalesced))
        special = _special_types().get(t)
        if special == "layout":  # (torch's copyreg entry for torch.layout: _get_layout('torch.strided'))
            return _glob("torch.serialization", "_get_layout"), (repr(obj),)
        if special is not None:  # (what torch raises for a memory_format, finfo, iinfo)
            raise TypeError(f"cannot pickle {special!r} object")
        if t is _Boxed:
            return self._reduce_plain(obj.value, False)
        if t is _dev.device:
            return _glob("torch", "device"), ((obj.type,) if obj.index is None else (obj.type, obj.index))
        if t is Size:
            return _glob("torch", "Size"), (tuple(obj),)
        return NotImplemented

    def _reduce_tensor(self, t: Tensor):
        from .nn.parameter import Parameter
        from ._tensor._copy import attrs
        if t._hooks:  # (a leaf's register_hook hooks, torch's _backward_hooks: not saved, as torch warns)
            from .utils.hooks import warn_if_has_hooks
            warn_if_has_hooks(types.SimpleNamespace(_backward_hooks=t._hooks))
        state = attrs(t)
        if isinstance(t, Parameter):
            args = (_Boxed("data", t), t.requires_grad, collections.OrderedDict())
            if state:
                return _glob("torch._utils", "_rebuild_parameter_with_state"), args + (state,)
            return _glob("torch._utils", "_rebuild_parameter"), args
        func, args = self._reduce_plain(t, t.requires_grad)
        if state or type(t) is not Tensor:
            return _glob("torch._tensor", "_rebuild_from_type_v2"), (func, _glob("torch", "Tensor"), args, state)
        return func, args

    def _reduce_plain(self, t: Tensor, requires_grad: bool):
        """``_rebuild_tensor_v2``/``v3`` call of ``t`` (its storage recorded once per facade storage)."""
        dt = t.dtype
        root = t._storage.root()
        base = root.array
        if type(base) is jax.ShapeDtypeStruct:  # a meta tensor: no storage, as torch's (sharing is not kept)
            if _TLS.skip_data:
                warnings.warn("Serializing tensors on the meta device under skip_data context manager is a no-op",
                              stacklevel=2)
            return (_glob("torch._utils", "_rebuild_meta_tensor_no_storage"),
                    (dt, tuple(t._shape), tuple(t.stride()), bool(requires_grad)))
        if dt not in _LEGACY_STORAGE and dt not in _NEW_DTYPES:
            raise RuntimeError(f"functorch_lite.save: torch cannot store tensors of dtype {dt!r}")
        if isinstance(base, jax.core.Tracer):
            from .ops._dispatch import data_dependent_error
            raise data_dependent_error("saving a tensor")
        if self._viewed_as.setdefault(root.uid, dt) is not dt:  # (torch's storages are untyped: one dtype each)
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        meta = None
        if np.dtype(base.dtype) == dt.np:
            ref, offset, stride = self._storage_ref(root, base, dt, root.device), t._offset, tuple(t.stride())
            if V.view_sign(t._chain):  # (the storage's values, and torch's conj / neg bit: get_tensor_metadata)
                meta = collections.OrderedDict([("conj" if dt.is_complex else "neg", True)])
        else:  # a view(dtype) reinterpreting its base: saved as its own storage (its values, any sign applied)
            vals = np.ascontiguousarray(np.asarray(t._array))
            ref, offset, stride = self._storage_ref(None, vals, dt, None), 0, V.contiguous_strides(t._shape)
        args = (ref, offset, tuple(t._shape), stride, bool(requires_grad), collections.OrderedDict())
        if meta is not None and dt not in _NEW_DTYPES:
            args += (meta,)
        if dt in _NEW_DTYPES:
            return _glob("torch._utils", "_rebuild_tensor_v3"), args + (dt,)
        return _glob("torch._utils", "_rebuild_tensor_v2"), args

    def _storage_ref(self, owner, array, dt: D.dtype, dev, untyped: bool = False) -> _Boxed:
        """The persistent id of ``owner``'s values (``array``) saved as ``dt`` (the record written once per
        storage); ``untyped``: as an UntypedStorage of ``array``'s bytes (``dt`` uint8)."""
        uid = None if owner is None else owner.uid
        entry = self._by_storage.get(uid) if uid is not None else None
        if entry is None:
            key = str(len(self.records))
            flat = np.asarray(array).reshape(-1)  # host byte order: little-endian on every JAX platform
            loc = "cpu" if dev is None or dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"
            numel = flat.nbytes // dt.itemsize if dt in _LEGACY_STORAGE else flat.nbytes
            entry = (key, dt, loc, numel)
            self.records.append((key, flat))
            self.numels[key] = numel
            if uid is not None:
                self._by_storage[uid] = entry
        elif entry[1] is not dt:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        key, _, loc, numel = entry
        stype = (_glob("torch", _LEGACY_STORAGE[dt]) if dt in _LEGACY_STORAGE and not untyped
                 else _glob("torch.storage", "UntypedStorage"))
        return _Boxed("pid", ("storage", stype, key, loc, numel) + ((None,) if self.legacy else ()))


def _torch_name_of(obj):
    """(module, name) of the torch global that facade class or function ``obj`` is, or None."""
    if obj is Tensor:
        return "torch", "Tensor"
    mod = getattr(obj, "__module__", None)
    if mod == "functorch_lite.nn.parameter" and getattr(obj, "__name__", None) == "Parameter":
        return "torch.nn.parameter", "Parameter"
    if mod == "functorch_lite.nn.functional" and isinstance(obj, types.FunctionType):
        from .nn import functional as F
        if getattr(F, obj.__name__, None) is obj:
            return "torch.nn.functional", obj.__name__
    return None


_SPECIAL: dict = {}


def _special_types() -> dict:
    """type -> 'layout' (pickled as torch pickles a torch.layout) or the name in torch's "cannot pickle" error."""
    if not _SPECIAL:
        import functorch_lite
        _SPECIAL.update({functorch_lite.layout: "layout", V.memory_format: "module",  # (torch's text for these)
                         D.finfo: "torch.finfo", D.iinfo: "torch.iinfo"})
    return _SPECIAL


def _archive_name(path: str) -> str:
    """The zip's top folder for a save to ``path``, as torch's PyTorchStreamWriter names it: the file's name up to
    its last '.' ('/tmp/z.pt' -> 'z', 'a.b.c' -> 'a.b'; '/' and '\\' both separate folders); 'archive' for a
    non-ASCII path (torch writes those through a Python file object) and for file objects."""
    try:
        path.encode("ascii")
    except UnicodeEncodeError:
        return "archive"
    stem = path[max(path.rfind("/"), path.rfind("\\")) + 1:]
    if "." in stem:
        stem = stem[:stem.rfind(".")]
    if not stem:  # ('.pt', '/tmp/.hidden': torch refuses them, before creating the file)
        raise RuntimeError(f"invalid file name: {path}")
    return stem


class _Forward:
    """The target stream as zipfile sees it: written forward only. zipfile then counts its offsets from the
    archive's first byte and follows each record with a data descriptor, as torch's writer (miniz) does: several
    archives saved into one stream are each a zip of its own, and a load leaves the stream on a descriptor
    ('PK\\x07\\x08'), which the next load refuses as torch's does."""

    def __init__(self, fh):
        self.fh = fh

    def write(self, data):
        return self.fh.write(data)

    def flush(self) -> None:
        flush = getattr(self.fh, "flush", None)
        if flush is not None:
            flush()


class _ZipWriter:
    """Records written as torch does: stored (no compression), data 64-byte aligned via an 'FB' extra field, offsets
    from the archive's first byte, a data descriptor after each record."""

    def __init__(self, f, archive: str = "archive"):
        self.zf = zipfile.ZipFile(_Forward(f), "w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self.start = self._tell()
        self.archive = archive

    def _tell(self) -> int:
        try:
            return self.zf.fp.tell()
        except (OSError, AttributeError):
            return 0

    def write(self, name: str, data, crc: bool = True) -> None:
        """Record ``name`` holding ``data``; its CRC-32 written as 0 where not ``crc`` or ``set_crc32_options(False)``,
        as torch's."""
        full = f"{self.archive}/{name}"
        info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        size = len(data)
        header = 30 + len(full.encode("utf-8")) + 4 + (20 if size * 1.05 > zipfile.ZIP64_LIMIT else 0)
        pad = (-(self._tell() - self.start + header)) % 64
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        info.file_size = size  # (what writestr does, with the CRC left to the option)
        with self.zf.open(info, mode="w") as dest:
            dest.write(data)
            if not (crc and _CONFIG["crc32"]):
                dest._crc = 0

    def close(self) -> None:
        self.zf.close()

    def abort(self) -> None:
        """After a failed write: nothing more is written (no central directory from ``ZipFile.__del__``, whose
        own failure would print an "Exception ignored" traceback)."""
        self.zf.fp = None


def save(obj: Any, f, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to ``f`` (a path or a binary file object) in ``torch.save``'s zip format.

    >>> import functorch_lite as torch, io
    >>> buf = io.BytesIO(); torch.save({"w": torch.ones(2)}, buf)
    >>> torch.load(io.BytesIO(buf.getvalue()))["w"]
    tensor([1., 1.])
    """
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):  # (torch's _check_save_filelike, first)
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    if pickle_module is not pickle:
        raise NotImplementedError("functorch_lite.save supports only pickle_module=pickle")
    buf = io.BytesIO()
    if not _use_new_zipfile_serialization and _TLS.skip_data:
        raise RuntimeError("Cannot use skip_data=True with _use_new_zipfile_serialization=False")
    p = _Pickler(buf, pickle_protocol)
    p.legacy = not _use_new_zipfile_serialization
    p.dump(obj)
    own = isinstance(f, (str, os.PathLike))
    archive = "archive"
    if own:
        parent = os.path.dirname(os.fsdecode(f))
        if parent and not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        if not p.legacy:
            archive = _archive_name(os.fsdecode(f))
    elif not p.legacy and isinstance(f, io.TextIOBase):
        f.write(memoryview(b""))  # (a text-mode file: the TypeError torch's first write gets)
    fh = open(f, "wb") if own else f
    try:
        if p.legacy:
            _write_legacy(fh, p, buf, pickle_protocol)
            return
        w = _ZipWriter(fh, archive)
        try:
            w.write("data.pkl", buf.getbuffer())
            w.write(".format_version", b"1")
            w.write(".storage_alignment", b"64")
            if not _disable_byteorder_record:
                w.write("byteorder", b"little")
            skip = _TLS.skip_data
            for key, flat in p.records:
                if skip:  # (torch's write_record_metadata: the record's room, no values, CRC-32 0)
                    w.write(f"data/{key}", bytes(flat.nbytes), crc=False)
                    continue
                w.write(f"data/{key}", memoryview(np.ascontiguousarray(flat).view(np.uint8)).cast("B"))
            w.write("version", b"3\n")
            if _disable_byteorder_record:  # (torch 2.13's writer adds the record at its end all the same)
                w.write("byteorder", b"little")
            w.write(".data/serialization_id", str(uuid.uuid4().int).rjust(40, "0")[:40].encode())
            w.close()
        except BaseException:
            w.abort()
            raise
    finally:
        if own:
            fh.close()


_LEGACY_PROTOCOL = 1001  # torch's legacy format version (PROTOCOL_VERSION)


def _write_legacy(fh, p: "_Pickler", buf: io.BytesIO, protocol: int) -> None:
    """torch's ``_legacy_save`` (``_use_new_zipfile_serialization=False``): the magic number, the format version
    and the platform's sizes as pickles, the object's pickle, the sorted storage keys, then each storage as its
    numel (int64, little-endian) and its bytes."""
    pickle.dump(_MAGIC_NUMBER, fh, protocol=protocol)
    pickle.dump(_LEGACY_PROTOCOL, fh, protocol=protocol)
    pickle.dump({"protocol_version": _LEGACY_PROTOCOL, "little_endian": True,
                 "type_sizes": {"short": 2, "int": 4, "long": 4}}, fh, protocol=protocol)
    fh.write(buf.getbuffer())
    keys = sorted(p.numels)
    pickle.dump(keys, fh, protocol=protocol)
    flats = dict(p.records)
    for key in keys:
        fh.write(struct.pack("<q", int(p.numels[key])))
        fh.write(memoryview(np.ascontiguousarray(flats[key]).view(np.uint8)).cast("B"))


# ---- reading -------------------------------------------------------------------------------------
class _StorageType(collections.namedtuple("_StorageType", "dtype name")):
    """What a ``torch.<X>Storage`` / ``torch.storage.UntypedStorage`` global loads as."""


class _RawStorage(UntypedStorage):
    """A loaded storage record: its raw bytes, on the device they go to. This is the ``storage`` a ``map_location``
    callable receives (a ``torch.storage.UntypedStorage`` there: ``.cpu()``, ``.cuda(i)``, ``.to(device=...)``
    return it placed elsewhere); the record's tensors are made over it (``_facade_tensor``: one facade Storage per
    dtype read), and ``load`` gives it as a ``TypedStorage`` where a storage itself was saved, as torch."""

    def __init__(self, raw: np.ndarray, device):
        self.raw, self._device = raw, device
        self._shared: dict = {}  # facade dtype -> the facade Storage holding these bytes

    @property
    def device(self):
        return self._device

    def nbytes(self) -> int:
        return int(self.raw.size)

    def _bytes(self) -> np.ndarray:
        if self._device.type == "meta":
            raise NotImplementedError(META_NO_DATA)
        return np.asarray(self.raw)

    @property
    def _s(self):
        """The facade Storage of these bytes (made on first use, as a uint8 tensor of them would be)."""
        n = int(self.raw.size)
        return _facade_tensor(self, 0, (n,), (1,), D.uint8)._storage

    def to(self, device=None, non_blocking: bool = False) -> "_RawStorage":
        """This storage placed on ``device`` (positional too: torch's takes keywords only)."""
        return _RawStorage(self.raw, _dev.canonical(device))

    def cpu(self) -> "_RawStorage":
        return self.to(device="cpu")

    def cuda(self, device=None, non_blocking: bool = False) -> "_RawStorage":
        return self.to(device=_dev.device("cuda", device) if isinstance(device, int) or device is None else device)

    def mps(self) -> "_RawStorage":
        return self.to(device="mps")


_RawStorage.__name__ = _RawStorage.__qualname__ = "UntypedStorage"  # (the type name torch's callables see)


def _typed(raw: _RawStorage, dtype) -> TypedStorage:
    """What ``persistent_load`` gives: the record as a ``TypedStorage`` (uint8 for an untyped one, as torch)."""
    return TypedStorage(wrap_storage=raw, dtype=D.uint8 if dtype is None else dtype, _internal=True)


# ---- storage locations: torch's registry of (priority, tagger, deserializer) ----------------------------------
_package_registry: list = []


def register_package(priority: int, tagger: Callable, deserializer: Callable) -> None:
    """Register ``tagger(storage) -> location or None`` and ``deserializer(storage, location) -> storage or None``
    (run by ascending ``priority`` until one answers): ``location_tag`` asks the taggers, ``load`` (through
    ``default_restore_location``) the deserializers, as torch's. A deserializer gets the record's storage on the
    CPU and may return it placed (``storage.to(device=...)``)."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort()


def _validate_device(location: str, backend: str):
    """torch's ``_validate_device``: the facade device ``location`` names, or torch's error for a backend that is not
    here (no device module, not available, an index past the count)."""
    if backend in ("hpu", "privateuseone"):  # (torch has no device module of these)
        raise RuntimeError(f"The {backend.upper()} device module is not registered. If you are running on a CPU-only "
                           "machine, please use torch.load with map_location=torch.device('cpu') to map your storages "
                           "to the CPU.")
    dev = _dev.device(location)
    count = len(_dev.jax_devices(backend))
    if not count:
        raise RuntimeError(f"Attempting to deserialize object on a {backend.upper()} device but torch.{backend}."
                           "is_available() is False. If you are running on a CPU-only machine, please use torch.load "
                           "with map_location=torch.device('cpu') to map your storages to the CPU.")
    dev = _dev.canonical(dev) if dev.index is None else dev
    if dev.index >= count:
        raise RuntimeError(f"Attempting to deserialize object on {backend.upper()} device {dev.index} but "
                           f"torch.{backend}.device_count() is {count}. Please use torch.load with map_location to map "
                           "your storages to an existing device.")
    return dev


def validate_cuda_device(location: str) -> int:
    """The CUDA device index ``location`` ('cuda', 'cuda:1') names, or torch's error where it is not here."""
    return _validate_device(location, "cuda").index


def _cpu_tag(obj):
    return "cpu" if obj.device.type == "cpu" else None


def _mps_tag(obj):
    return "mps" if obj.device.type == "mps" else None


def _meta_tag(obj):
    return "meta" if obj.device.type == "meta" else None


def _backend_tag(backend: str, obj):
    if obj.device.type == backend:
        return backend if obj.device.index is None else f"{backend}:{obj.device.index}"
    return None


def _cpu_deserialize(obj, location):
    if location == "cpu":
        return obj
    if isinstance(location, str) and location.startswith("cpu:"):  # (the facade's numbered CPU devices: torch has not)
        return obj.to(device=location)
    return None


def _mps_deserialize(obj, location):
    if not location.startswith("mps"):
        return None
    if not _dev.jax_devices("mps"):  # (torch's error without an MPS device: its storage constructor's)
        raise RuntimeError("torch.UntypedStorage(): Storage device not recognized: mps")
    return obj.mps()


def _meta_deserialize(obj, location):
    return obj.to(device="meta") if location == "meta" else None


def _deserialize(backend: str, obj, location):
    import re
    if location == backend or re.match(f"{backend}(:|[0-9]+)", location):
        return obj.to(device=_validate_device(location, backend))
    return None


for _entry in ((10, _cpu_tag, _cpu_deserialize), (21, _mps_tag, _mps_deserialize), (22, _meta_tag, _meta_deserialize)):
    register_package(*_entry)
# torch's backends (privateuse1 as torch names it by default); 'tpu': the facade's own (a file it saved on a TPU)
for _prio, _backend in ((20, "cuda"), (23, "privateuseone"), (24, "hpu"), (25, "xpu"), (26, "mtia"), (27, "tpu")):
    register_package(_prio, functools.partial(_backend_tag, _backend), functools.partial(_deserialize, _backend))
del _entry, _prio, _backend


def location_tag(storage) -> str:
    """The location a storage (or tensor) is saved with: the first registered tagger's answer."""
    for _, tagger, _ in _package_registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError(f"don't know how to determine data location of {_typename(storage)}")


def default_restore_location(storage, location: str):
    """``storage`` restored to ``location`` by the first registered deserializer that answers (torch's error when
    none does): what ``load`` does without a ``map_location``, and what a ``map_location`` callable may call."""
    for _, _, fn in _package_registry:
        result = fn(storage, location)
        if result is not None:
            return result
    raise RuntimeError(f"don't know how to restore data location of {_typename(storage)} (tagged with {location})")


def _typename(obj) -> str:
    if isinstance(obj, UntypedStorage):
        return "torch.storage.UntypedStorage"
    if isinstance(obj, TypedStorage):
        return "torch.storage.TypedStorage"
    from ._tensor.legacy import typename
    return typename(obj)


def _byteswap(raw: np.ndarray, dtype) -> np.ndarray:
    """A big-endian record's bytes in the host's (little-endian) order: each element (a complex one's two parts)
    reversed, as torch's ``storage.byteswap(dtype)``."""
    size = dtype.itemsize // 2 if dtype.is_complex else dtype.itemsize
    if size == 1:
        return raw
    return np.frombuffer(raw, dtype=f">u{size}").astype(f"<u{size}").view(np.uint8)


def _loc(location):
    return str(location) if isinstance(location, _dev.device) else location


def _decode(location) -> str:
    """A persistent id's location (bytes in a Python 2 pickle), as torch's ``_maybe_decode_ascii``."""
    return location.decode("ascii") if isinstance(location, bytes) else str(location)


def _get_restore_location(map_location) -> Callable:
    """torch's ``_get_restore_location``: ``(storage, location) -> storage`` for a ``map_location``."""
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):  # (a device among its values is read as its string: torch's fails on it)
        return lambda storage, location: default_restore_location(storage, _loc(map_location.get(location, location)))
    if isinstance(map_location, (str, bytes)):
        return lambda storage, location: default_restore_location(storage, map_location)
    if isinstance(map_location, _dev.device):
        return lambda storage, location: default_restore_location(storage, str(map_location))

    def restore(storage, location):
        result = map_location(storage, location)
        return default_restore_location(storage, location) if result is None else result
    return restore


def _facade_tensor(storage: _RawStorage, offset: int, size, stride, dtype) -> Tensor:
    """A facade tensor over ``storage`` read as ``dtype`` (one facade Storage per record and dtype)."""
    size, stride = tuple(size), tuple(stride)
    root = storage._shared.get(dtype)
    contiguous = V.is_contiguous(size, stride) if size else True
    if root is None:
        n = storage.raw.size // dtype.itemsize
        whole = offset == 0 and contiguous and int(np.prod(size, dtype=np.int64)) == n
        if storage.device.type == "meta":  # (a meta tensor: shape and dtype, no data, as torch.empty(device='meta'))
            from ._tensor.storage import meta_array
            arr = meta_array(size if whole else (n,), dtype.jnp)
        else:
            vals = np.frombuffer(storage.raw, dtype=dtype.np, count=n)
            arr = jax.device_put(vals.reshape(size) if whole else vals, _dev.to_jax(storage.device))
        t = Tensor._from_array(arr, dtype, storage.device)
        storage._shared[dtype] = t._storage
        if whole:
            if stride != V.contiguous_strides(size):
                t._strides = stride
            return t
        root = t._storage
    base_shape = tuple(root.array.shape)
    if offset == 0 and contiguous and size == base_shape:
        t = Tensor._header(root, size, dtype, None, None, 0, None)
    else:
        t = Tensor._header(root, size, dtype, ((V.STRIDED, (size, stride, offset)),), stride, offset, None)
    if stride != V.contiguous_strides(size):
        t._strides = stride
    return t


def _with_metadata(t: Tensor, metadata) -> Tensor:
    """torch's ``set_tensor_metadata``: a saved conjugate (``x.conj()``, ``A.mH``) is its storage's values with
    the conj bit: a conjugate view of them here, sharing the storage; a saved negative-bit tensor (``x.conj().imag``)
    is its values negated (a new tensor: the facade has no negative view of a real tensor)."""
    if not metadata:
        return t
    if not isinstance(metadata, dict) or set(metadata) - {"conj", "neg"}:
        raise pickle.UnpicklingError(f"functorch_lite.load: unsupported tensor metadata {metadata!r}")
    if metadata.get("conj") and t.dtype.is_complex:
        t = t.conj()
    if metadata.get("neg"):
        t = t.neg()
    return t


def _loaded(storage, what: str) -> _RawStorage:
    """The record a rebuild function's storage argument (``persistent_load``'s TypedStorage) holds."""
    if not isinstance(storage, TypedStorage) or not isinstance(storage._untyped_storage, _RawStorage):
        raise pickle.UnpicklingError(f"{what} expects a storage")
    return storage._untyped_storage


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """Facade version of ``torch._utils._rebuild_tensor_v2``."""
    t = _facade_tensor(_loaded(storage, "_rebuild_tensor_v2"), storage_offset, size, stride, storage.dtype)
    return _with_metadata(t, metadata).requires_grad_(bool(requires_grad))


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                       metadata=None):
    """Facade version of ``torch._utils._rebuild_tensor_v3`` (untyped storage + explicit dtype)."""
    if not isinstance(dtype, D.dtype):
        raise pickle.UnpicklingError("_rebuild_tensor_v3 expects a storage and a dtype")
    t = _facade_tensor(_loaded(storage, "_rebuild_tensor_v3"), storage_offset, size, stride, dtype)
    return _with_metadata(t, metadata).requires_grad_(bool(requires_grad))


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """Facade version of ``torch._utils._rebuild_meta_tensor_no_storage`` (a meta tensor: no data; any strides)."""
    from ._tensor.storage import meta_array
    if not isinstance(dtype, D.dtype):
        raise pickle.UnpicklingError("_rebuild_meta_tensor_no_storage expects a dtype")
    size, stride = tuple(int(n) for n in size), tuple(int(n) for n in stride)
    meta = _dev.canonical("meta")
    if 0 in size or stride == V.contiguous_strides(size):
        t = Tensor._from_array(meta_array(size, dtype.jnp), dtype, meta)
    else:
        extent = 1 + sum((n - 1) * st for n, st in zip(size, stride))
        root = Tensor._from_array(meta_array((extent,), dtype.jnp), dtype, meta)._storage
        t = Tensor._header(root, size, dtype, ((V.STRIDED, (size, stride, 0)),), stride, 0, None)
    return t.requires_grad_(bool(requires_grad))


def _set_state(obj, state) -> None:
    """torch's ``_set_obj_state``: ``state`` is a dict of attributes or (dict, slot dict)."""
    state, slots = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
    for k, v in {**dict(state or {}), **dict(slots or {})}.items():
        if isinstance(obj, Tensor) and (not isinstance(k, str) or hasattr(type(obj), k)):
            raise pickle.UnpicklingError(f"refusing to overwrite the tensor attribute {k!r} from a pickle")
        setattr(obj, k, v)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """Facade version of ``torch._utils._rebuild_parameter``."""
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """Facade version of ``torch._utils._rebuild_parameter_with_state`` (a Parameter with attributes)."""
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    _set_state(p, state)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    """Facade version of ``torch._tensor._rebuild_from_type_v2`` (Tensor/Parameter with attributes)."""
    if func not in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter, _rebuild_parameter_with_state,
                    _rebuild_meta_tensor_no_storage):
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2: unsupported rebuild function {func!r}")
    ret = func(*args)
    if new_type is not type(ret):
        from .nn.parameter import Parameter
        if new_type is Parameter:
            ret = Parameter(ret, ret.requires_grad)
        elif new_type is not Tensor:
            raise pickle.UnpicklingError(f"_rebuild_from_type_v2: unsupported tensor type {new_type!r}")
    _set_state(ret, state)
    return ret


def _get_layout(name: str):
    import functorch_lite
    if name in ("torch.strided", "torch.sparse_coo"):
        return getattr(functorch_lite, name[6:])
    raise pickle.UnpicklingError(f"functorch_lite supports only the strided and sparse COO layouts, not {name}")


def _sparse_type():
    from .sparse import SparseTensor
    return SparseTensor


def _rebuild_sparse_tensor(layout, data):
    """Facade version of ``torch._utils._rebuild_sparse_tensor`` (sparse COO only)."""
    import functorch_lite
    if layout is not functorch_lite.sparse_coo:
        raise pickle.UnpicklingError(f"functorch_lite supports only the sparse COO layout, not {layout}")
    indices, values, size = data[:3]
    return functorch_lite.sparse_coo_tensor(indices, values, size, check_invariants=False,
                                            is_coalesced=data[3] if len(data) > 3 else None)


def _torch_globals() -> dict:
    """'module.name' of a torch global -> its functorch_lite equivalent."""
    from .nn.parameter import Parameter
    g: dict = {
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch.serialization._get_layout": _get_layout,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch.Size": Size,
        "torch.device": _dev.device,
        "torch.storage.UntypedStorage": _StorageType(None, "UntypedStorage"),
        "torch.UntypedStorage": _StorageType(None, "UntypedStorage"),
    }
    for d in D.ALL:
        if d is not D.complex32:
            g[f"torch.{d.name}"] = d
    for d, name in _LEGACY_STORAGE.items():
        g[f"torch.{name}"] = g[f"torch.cuda.{name}"] = _StorageType(d, name)
    return g


_TORCH: dict = {}
_SAFE_BUILTINS = {"collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
                  "builtins.set": set, "builtins.complex": complex, "builtins.bytearray": bytearray}


def _torch_table() -> dict:
    if not _TORCH:
        _TORCH.update(_torch_globals())
    return _TORCH


def _resolve_torch(module: str, name: str):
    full = f"{module}.{name}"
    if full not in _torch_table() and module.startswith("torch.nn.modules."):
        cls = _facade_module_class(name)
        if cls is not None:
            return cls
    if full not in _torch_table() and module == "torch.nn.functional":  # (an activation a module holds)
        from .nn import functional as F
        fn = getattr(F, name, None)
        if callable(fn):
            return fn
    if full not in _torch_table():
        raise pickle.UnpicklingError(f"functorch_lite.load: the torch global {full} has no functorch_lite "
                                     "equivalent (unsupported tensor type or dtype)")
    return _TORCH[full]


def _fix_name(module: str, name: str) -> tuple:
    """Python 2 names (protocol 2 pickles) -> Python 3 names, as pickle's fix_imports does."""
    import _compat_pickle as cp
    if (module, name) in cp.NAME_MAPPING:
        return cp.NAME_MAPPING[(module, name)]
    return cp.IMPORT_MAPPING.get(module, module), name


def _is_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


class _Loader:
    """Shared state of one ``load``: the zip, the storages read so far, map_location."""

    def __init__(self, reader: "_ZipReader", map_location):
        self.reader, self.restore = reader, _get_restore_location(map_location)
        self.storages: dict = {}  # key -> the TypedStorage of the record
        # torch's _is_meta_location: no storage data is read for a load to 'meta' (a dict or callable reads it)
        self.meta = (isinstance(map_location, (str, _dev.device)) and isinstance(reader, _ZipReader)
                     and (map_location == "meta" if isinstance(map_location, str) else map_location.type == "meta"))

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise pickle.UnpicklingError(f"Unknown typename for persistent_load, expected 'storage' but got {pid!r}")
        _, stype, key, location, numel = pid[:5]
        if not isinstance(stype, _StorageType):
            raise pickle.UnpicklingError(f"persistent_load: {stype!r} is not a storage class")
        key = str(key)
        hit = self.storages.get(key)
        if hit is not None:
            return hit
        nbytes = int(numel) * (stype.dtype.itemsize if stype.dtype is not None else 1)
        if self.meta:  # (torch only finds the record: the first one's local header, the others' by arithmetic)
            if not self.storages or f"{self.reader.prefix}/.format_version" not in self.reader.names:
                self.reader.locate(f"data/{key}")
            raw = np.broadcast_to(np.zeros(1, np.uint8), (nbytes,))  # (its size only: no memory, nothing read)
        elif _TLS.skip_data and isinstance(self.reader, _ZipReader):  # (torch's values: uninitialised memory)
            raw = np.zeros(nbytes, np.uint8)
        else:
            raw = self.reader.record(f"data/{key}")
            if raw.size >= nbytes and self.reader.big and stype.dtype is not None:
                raw = _byteswap(raw[:nbytes], stype.dtype)
        if raw.size < nbytes:
            raise RuntimeError(f"PytorchStreamReader failed reading file data/{key}: file read failed "
                               f"(expected {nbytes} bytes, got {raw.size}); the file is truncated or corrupt")
        placed = self.restore(_RawStorage(raw[:nbytes], _dev.canonical("cpu")), _decode(location))
        if not isinstance(placed, _RawStorage):
            raise TypeError(f"map_location callable must return a storage or None, got {type(placed).__name__}")
        self.storages[key] = _typed(placed, stype.dtype)
        return self.storages[key]


# ---- the weights_only allow-list (torch.serialization.add_safe_globals & co.) -------------------------------------
_marked_safe_globals: set = set()


def add_safe_globals(safe_globals: list) -> None:
    """Mark globals (classes, functions, or ``(global, "module.qualname")`` pairs) as safe for
    ``load(weights_only=True)``: they may then be called, instantiated and have their state set (a global is
    named ``{__module__}.{__qualname__}`` in a checkpoint)."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals.union(set(safe_globals))


def get_safe_globals() -> list:
    """The globals ``add_safe_globals`` (or an active ``safe_globals`` block) marked safe."""
    return list(_marked_safe_globals)


def clear_safe_globals() -> None:
    """Forget every global ``add_safe_globals`` marked safe."""
    global _marked_safe_globals
    _marked_safe_globals = set()


class safe_globals:
    """``with torch.serialization.safe_globals([MyClass]): torch.load(f)``: the globals are safe inside the block."""

    def __init__(self, safe_globals: list):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):  # noqa: A002
        global _marked_safe_globals
        _marked_safe_globals = _marked_safe_globals - set(self.safe_globals)


def _user_allowed_globals() -> dict:
    """'module.qualname' -> global, for the globals marked safe (torch's ``_get_user_allowed_globals``)."""
    rc: dict = {}
    for f in _marked_safe_globals:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(f[1])}")
            f, name = f
            rc[name] = f
        else:
            rc[f"{f.__module__}.{f.__qualname__}"] = f
    return rc


def _allowed_as_torch(module: str, name: str, user: dict):
    """The facade equivalent of torch global ``module.name`` where the user allow-listed it (``safe_globals(
    [nn.Sequential, nn.Linear])`` allows a torch-written file's ``torch.nn.modules.container.Sequential``), else
    None."""
    if not user or not _is_torch(module):
        return None
    try:
        obj = _resolve_torch(module, name)
    except pickle.UnpicklingError:
        return None
    return obj if any(obj is g for g in user.values()) else None


def _default_allowed_names() -> set:
    return set(_SAFE_BUILTINS) | {"_codecs.encode"} | {k for k, v in _torch_table().items() if v is not None}


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The ``module.name`` of every global in a ``save`` checkpoint that ``load(weights_only=True)`` would refuse
    (neither on torch's default allow-list nor marked safe), read without unpickling anything."""
    import pickletools
    fh, mm, own = _open(f, False)
    try:
        head = fh.read(4)
        fh.seek(-len(head), io.SEEK_CUR)
        if head != b"PK\x03\x04":
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        pkl = bytes(_ZipReader(fh).record("data.pkl"))
    finally:
        if own:
            fh.close()
    found = set()
    user = _user_allowed_globals()
    for op, arg, _ in pickletools.genops(pkl):
        if op.name == "GLOBAL":
            module, name = _fix_name(*arg.split(" ", 1))
            if _allowed_as_torch(module, name, user) is None:
                found.add(f"{module}.{name}")
    return list(found - _default_allowed_names() - set(user))


def _wo_message(message: str) -> str:
    """torch's ``_get_wo_message``: the text ``load(weights_only=True)`` wraps an unpickling error in."""
    import re
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
                + message + _DOCS_MESSAGE)
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {_UNSAFE_MESSAGE}\n"
    out = f"Weights only load failed. {_UNSAFE_MESSAGE}\n"
    if re.search(r"whose module (\S+) is blocked", message) is None:
        out += ("Please file an issue with the following so that we can make `weights_only=True` compatible with "
                "your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + _DOCS_MESSAGE


class _Dispatch(dict):
    """The opcode table of the weights-only unpickler: an opcode outside torch's set is refused, with its text."""

    def __missing__(self, key):
        def refuse(unpickler):
            raise pickle.UnpicklingError(f"Unsupported operand {key}")
        return refuse


_WEIGHTS_OPCODES = (  # what torch's _weights_only_unpickler reads
    "GLOBAL", "NEWOBJ", "REDUCE", "BUILD", "APPEND", "APPENDS", "SETITEM", "SETITEMS", "MARK", "TUPLE", "TUPLE1",
    "TUPLE2", "TUPLE3", "NONE", "NEWFALSE", "NEWTRUE", "EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT", "EMPTY_SET",
    "BININT", "BININT1", "BININT2", "BINFLOAT", "BINUNICODE", "SHORT_BINSTRING", "BINPERSID", "BINGET",
    "LONG_BINGET", "BINPUT", "LONG_BINPUT", "LONG1", "PROTO", "STOP")


class _WeightsUnpickler(pickle._Unpickler):
    """torch's ``weights_only`` unpickler: allow-listed globals only (torch's defaults and ``add_safe_globals``),
    torch's opcodes only. Its errors are torch's inner messages; ``load`` wraps them as torch does."""

    def __init__(self, file, persistent_load: Callable):
        super().__init__(file, encoding="utf-8")
        self.persistent_load = persistent_load
        self._allowed: dict = {}  # id -> the globals find_class handed out (the only callables / classes)
        self.user = _user_allowed_globals()

    def find_class(self, module, name):
        module, name = _fix_name(module, name)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module {module} is "
                                         "blocked.")
        if full in _SAFE_BUILTINS:
            obj = _SAFE_BUILTINS[full]
        elif full == "_codecs.encode":
            obj = _codecs_encode
        elif _is_torch(module) and _torch_table().get(full) is not None:
            obj = _torch_table()[full]
        elif full in self.user:
            obj = self.user[full]
        elif _allowed_as_torch(module, name, self.user) is not None:
            obj = _allowed_as_torch(module, name, self.user)
        else:
            if full.startswith("builtins"):
                rest = full[len("builtins"):]
                full = rest[1:] if rest[:1] == "." else "builtins" + rest
            raise pickle.UnpicklingError(
                f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
                f"`torch.serialization.add_safe_globals([{full}])` or the "
                f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this global if you "
                "trust this class/function.")
        self._allowed[id(obj)] = obj
        return obj

    def load_proto(self):
        proto = self.read(1)[0]
        if proto != 2:
            warnings.warn(f"Detected pickle protocol {proto} in the checkpoint, which was not the default pickle "
                          "protocol used by `torch.load` (2). The weights_only Unpickler might not support all "
                          "instructions implemented by this protocol, please file an issue for adding support if "
                          "you encounter this.", stacklevel=2)
        self.proto = proto

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in self._allowed:
            msg = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise pickle.UnpicklingError(msg)
        self.stack[-1] = func(*args)

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        from .nn.parameter import Parameter
        if cls is Parameter:
            self.append(Parameter(*args))
        elif id(cls) in self._allowed and isinstance(cls, type):
            self.append(cls.__new__(cls, *args))
        else:
            raise pickle.UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted via "
                                         f"`add_safe_globals` but got {cls}")

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if isinstance(inst, Tensor):
            _set_state(inst, state)
        elif type(inst) is collections.OrderedDict:
            inst.__dict__.update(state or {})
        elif id(type(inst)) in self._allowed or any(type(inst) is g for g in self.user.values()):
            # (any allow-listed type, handed out by find_class or not: numpy's dtype classes are instantiated by
            # np.dtype, not named in the pickle)
            if _torch_module_state(inst, state):  # (a module torch pickled: as weights_only=False reads it)
                return
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                for k, v in (slotstate or {}).items():
                    setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                         f"`add_safe_globals`, but got {type(inst)}")

    def load_binget(self):  # (a missing memo entry: torch's KeyError, as its unpickler indexes a dict)
        self.append(self.memo[self.read(1)[0]])

    def load_long_binget(self):
        self.append(self.memo[struct.unpack("<I", self.read(4))[0]])

    def load_binpersid(self):
        pid = self.stack.pop()  # (torch's checks: only a storage's persistent id)
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0 and _decode(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        self.append(self.persistent_load(pid))

    def load_append(self):
        item = self.stack.pop()
        if type(self.stack[-1]) is not list:
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(self.stack[-1])}")
        self.stack[-1].append(item)

    def load_appends(self):
        items = self.pop_mark()
        if type(self.stack[-1]) is not list:
            raise pickle.UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
        self.stack[-1].extend(items)

    def _check_set_item_target(self, opcode: str) -> None:
        if type(self.stack[-1]) not in _DICTS:
            raise pickle.UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                                         f"but got {type(self.stack[-1])}")

    def load_setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._check_set_item_target("SETITEM")
        self.stack[-1][key] = value

    def load_setitems(self):
        items = self.pop_mark()
        self._check_set_item_target("SETITEMS")
        _set_pairs(self.stack[-1], items)

    dispatch = _Dispatch({getattr(pickle, n)[0]: pickle._Unpickler.dispatch[getattr(pickle, n)[0]]
                          for n in _WEIGHTS_OPCODES})
    dispatch[pickle.PROTO[0]] = load_proto
    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.BUILD[0]] = load_build
    dispatch[pickle.BINGET[0]] = load_binget
    dispatch[pickle.LONG_BINGET[0]] = load_long_binget
    dispatch[pickle.BINPERSID[0]] = load_binpersid
    dispatch[pickle.APPEND[0]] = load_append
    dispatch[pickle.APPENDS[0]] = load_appends
    dispatch[pickle.SETITEM[0]] = load_setitem
    dispatch[pickle.SETITEMS[0]] = load_setitems


_DICTS = (dict, collections.OrderedDict, collections.Counter)


def _set_pairs(d: dict, items: list) -> None:
    for i in range(0, len(items), 2):
        d[items[i]] = items[i + 1]


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    """``_codecs.encode`` restricted to str -> bytes (protocol 2 writes bytes this way)."""
    import codecs
    if not isinstance(obj, str):
        raise pickle.UnpicklingError("_codecs.encode: expected a str")
    return codecs.encode(obj, encoding, errors)


class _TorchGlobals:
    """``weights_only=False`` unpicklers' common part: ordinary unpickling, with torch globals resolved to
    functorch_lite and storages read through ``persistent_load``."""

    def __init__(self, file, persistent_load: Callable | None, **kwargs):
        super().__init__(file, **kwargs)
        if persistent_load is not None:  # (None: pickle's own error for a persistent id, as torch's plain loads)
            self.persistent_load = persistent_load

    def find_class(self, module, name):
        m, n = _fix_name(module, name)
        if _is_torch(m):
            return _resolve_torch(m, n)
        return super().find_class(module, name)


class _FullUnpickler(_TorchGlobals, pickle.Unpickler):
    """``weights_only=False`` (the C unpickler)."""


class _FullZipUnpickler(_TorchGlobals, pickle._Unpickler):
    """``weights_only=False`` for a checkpoint's ``data.pkl``: as :class:`_FullUnpickler`, and a module pickled by
    torch (``torch.save(model)``: a ``torch.nn`` class, or the user's class, whose state is torch's
    ``Module.__dict__``) is rebuilt as the facade module of the same name (:func:`_torch_module_state`)."""

    dispatch = pickle._Unpickler.dispatch.copy()

    def load_build(self):
        if _torch_module_state(self.stack[-2], self.stack[-1]):
            self.stack.pop()
            return
        pickle._Unpickler.load_build(self)

    dispatch[pickle.BUILD[0]] = load_build


_TORCH_MODULE_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                       "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs", "_forward_hooks_always_called",
                       "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                       "_load_state_dict_post_hooks")


def _torch_module_state(inst, state) -> bool:
    """Set a facade module from torch's ``Module.__dict__`` (a state without the facade's mark, which its own pickle
    carries), through its ``__setstate__`` (which makes torch's plain dicts its tables); False where ``inst`` and
    ``state`` are not that. Hooks cannot be carried over (their ids are torch's): a module pickled with hooks
    registered is refused (re-register them after loading a hook-free module)."""
    from .nn.modules.module import _FACADE_STATE, Module
    if not (isinstance(inst, Module) and type(state) is dict and "_parameters" in state
            and _FACADE_STATE not in state):
        return False
    for k in _TORCH_MODULE_HOOKS:
        if state.get(k):
            raise pickle.UnpicklingError(
                f"functorch_lite.load: the pickled torch module {type(inst).__name__} has {k} registered, which "
                "cannot be carried over to functorch_lite; save it without hooks (or save its state_dict()).")
    inst.__setstate__(state)
    return True


def _facade_module_class(name: str):
    """The ``functorch_lite.nn`` module class named ``name`` (for ``torch.nn.modules.<file>.<name>``), or None."""
    import sys
    from . import nn
    from .nn.modules.module import Module
    cls = getattr(nn, name, None)
    if cls is None:  # (classes nn does not re-export: MultiheadAttention's NonDynamicallyQuantizableLinear)
        for mod_name, mod in list(sys.modules.items()):
            if mod_name.startswith("functorch_lite.nn.modules.") and isinstance(getattr(mod, name, None), type):
                cls = getattr(mod, name)
                break
    return cls if isinstance(cls, type) and issubclass(cls, Module) else None


_EOCD, _EOCD64, _EOCD64_LOCATOR = b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07"


def _read_at(src, pos: int, n: int) -> bytes:
    src.seek(pos)
    return src.read(n)


def _archive_end(src, start: int, size: int, eocd: int):
    """Where the archive that begins at ``start`` ends, if the end-of-central-directory record at ``eocd`` is its
    own: its central directory (offsets count from the archive's first byte) ends right where the record (or the
    zip64 record that precedes it, which torch always writes) begins. None if it belongs to another archive."""
    rec = _read_at(src, eocd, 22)
    if len(rec) < 22 or rec[:4] != _EOCD:
        return None
    _, _, _, _, _, cd_size, cd_offset, comment = struct.unpack("<4s4H2LH", rec)
    end = min(eocd + 22 + comment, size)
    loc = _read_at(src, eocd - 20, 20) if eocd - 20 >= start else b""
    if len(loc) == 20 and loc[:4] == _EOCD64_LOCATOR:
        z64 = struct.unpack("<Q", loc[8:16])[0]
        hdr = _read_at(src, start + z64, 56)
        if len(hdr) < 56 or hdr[:4] != _EOCD64 or start + z64 + 12 + struct.unpack("<Q", hdr[4:12])[0] != eocd - 20:
            return None
        cd_size, cd_offset = struct.unpack("<QQ", hdr[40:56])
        if cd_offset + cd_size != z64:
            return None
    elif cd_offset + cd_size != eocd - start:
        return None
    # its first entry is the archive's first record (a zip written from a stream's middle by Python's zipfile has
    # offsets from the stream's first byte: its end record alone does not tell)
    entry = _read_at(src, start + cd_offset, 46) if cd_size else b""
    if cd_size and (len(entry) < 46 or entry[:4] != b"PK\x01\x02" or struct.unpack("<L", entry[42:46])[0] != 0):
        return None
    return end


def _find_archive(src, start: int) -> int:
    """The end of the zip archive that begins at ``start`` in ``src``: the stream may go on past it (trailing bytes,
    or more ``save`` calls into the same file), so, unlike zipfile (which takes the last end-of-central-directory
    record in the stream), the record taken is the first one whose offsets point back at ``start``. torch's miniz
    reads the last one with offsets from ``start``: the first archive when the archives are the same size, a
    corrupt-archive error otherwise (loading the first archive is what it means). No such record: the whole rest of
    the stream, for zipfile to read as it can."""
    src.seek(0, io.SEEK_END)
    size = src.tell()
    tail_start = max(start, size - 22 - 0xFFFF)
    tail = _read_at(src, tail_start, size - tail_start)
    last = tail.rfind(_EOCD)
    if last < 0:
        return size  # (no archive end at all: zipfile's error, torch's 'failed finding central directory')
    end = _archive_end(src, start, size, tail_start + last)
    if end is not None:
        return end
    chunk = 1 << 20
    for base in range(start, size, chunk):
        block = _read_at(src, base, chunk + 3)
        i = block.find(_EOCD)
        while 0 <= i < chunk:
            end = _archive_end(src, start, size, base + i)
            if end is not None:
                return end
            i = block.find(_EOCD, i + 1)
    return size


class _Window:
    """Bytes ``[start, end)`` of a seekable stream (a file object or an mmap), read as a file of their own."""

    def __init__(self, src, start: int, end: int):
        self.src, self.start, self.size, self.pos = src, start, end - start, 0

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        pos = (0, self.pos, self.size)[whence] + offset
        if pos < 0:
            raise OSError(22, "Invalid argument")
        self.pos = pos
        return pos

    def read(self, n: int = -1) -> bytes:
        n = self.size - self.pos if n is None or n < 0 else min(n, self.size - self.pos)
        if n <= 0:
            return b""
        data = _read_at(self.src, self.start + self.pos, n)
        self.pos += len(data)
        return data


class _ZipReader:
    """The records of a torch zip file (``archive/data.pkl``...), read through zipfile or an mmap: the archive that
    begins at the stream's position (:func:`_find_archive`). ``end`` is where torch leaves a file object's position
    after a load: the end of the last record it read."""

    def __init__(self, fh, mm=None):
        self.mm = mm
        src = fh if mm is None else mm
        try:
            self.start = src.tell()
            self.win = _Window(src, self.start, _find_archive(src, self.start))
            self.zf = zipfile.ZipFile(self.win)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error) as e:
            raise RuntimeError(_NOT_ZIP) from e
        self.end = self.start
        names = self.zf.namelist()
        if not names or "/" not in names[0]:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: file in archive is not in a "
                               "subdirectory")
        self.prefix = names[0].split("/")[0]
        self.names = set(names)
        # the byte order of the records' values: the file's mark, else the default (torch's rule; NATIVE: little)
        self.big = _CONFIG["endianness"] is LoadEndianness.BIG
        if f"{self.prefix}/byteorder" in self.names:
            mark = bytes(self.record("byteorder"))
            if mark not in (b"little", b"big"):
                raise ValueError("Unknown endianness type: " + mark.decode())
            self.big = mark == b"big"

    def _info(self, name: str):
        full = f"{self.prefix}/{name}"
        if full not in self.names:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        return self.zf.getinfo(full)

    def locate(self, name: str) -> None:
        """Where torch's ``get_record_offset`` leaves the stream: past ``name``'s fixed-size local header."""
        self.end = self.start + self._info(name).header_offset + 30

    def record(self, name: str) -> np.ndarray:
        info = self._info(name)
        try:
            head = _read_at(self.win, info.header_offset, 30)
            if len(head) < 30 or head[:4] != b"PK\x03\x04":
                raise zipfile.BadZipFile("bad local file header")
            nl, el = struct.unpack("<HH", head[26:30])
            start = info.header_offset + 30 + nl + el
            if start + info.file_size > self.win.size:
                raise zipfile.BadZipFile("record extends past the end of the file")
            if self.mm is not None:
                out = np.frombuffer(self.mm, dtype=np.uint8, count=info.file_size, offset=self.start + start)
            elif info.compress_type == zipfile.ZIP_STORED:  # (its bytes as they are: no CRC-32 check, as torch's)
                out = np.frombuffer(_read_at(self.win, start, info.file_size), dtype=np.uint8)
                if out.size < info.file_size:
                    raise EOFError("the record is cut short")
            else:
                out = np.frombuffer(self.zf.read(info), dtype=np.uint8)
            self.end = self.start + start + info.file_size
            return out
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e} (truncated or corrupt "
                               "file)") from e


def _open(f, use_mmap: bool):
    """(file handle, mmap or None, close-needed) for a path or a binary file object."""
    if isinstance(f, (str, os.PathLike)):
        fh = open(f, "rb")
        if use_mmap:
            try:
                return fh, _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ), True
            except ValueError:  # an empty file cannot be mapped
                return fh, None, True
        return fh, None, True
    try:  # (torch's _check_seekable)
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" in str(e) or "tell" in str(e):
            raise type(e)(f"{e}. You can only torch.load from a file that is seekable. Please pre-load the data into "
                          "a buffer like io.BytesIO and try to load from it instead.") from None
        raise
    return f, None, False


def _no_persistent_load(pid):
    raise pickle.UnpicklingError("A load persistent id instruction was encountered,\nbut no persistent_load "
                                 "function was specified.")  # (the C unpickler's text, as torch's)


class _Records:
    """The legacy format's storages by key, as ``_Loader`` reads a zip's ``data/<key>`` records."""

    big = False  # (its values' byte order: the host's, little-endian)

    def __init__(self, raw: dict):
        self.raw = raw

    def record(self, name: str) -> np.ndarray:
        return self.raw[name[len("data/"):]]


class _Stub:
    """Whatever a legacy checkpoint's pickle names, while its storages' element sizes are read from it (no code of
    the checkpoint's runs: every global is this, called or built with anything)."""

    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return _Stub()

    def __setstate__(self, state):
        pass

    def append(self, x):
        pass

    def extend(self, xs):
        pass

    def __setitem__(self, k, v):
        pass


class _PidScan(pickle._Unpickler):
    """Reads a pickle for its persistent ids only (key -> storage dtype), every global a ``_Stub``."""

    def __init__(self, file):
        super().__init__(file, encoding="utf-8")
        self.found: dict = {}

    def find_class(self, module, name):
        full = ".".join(_fix_name(module, name))
        st = _torch_table().get(full) if _is_torch(module) else None
        return st if isinstance(st, _StorageType) else _Stub

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage" and isinstance(pid[1], _StorageType):
            self.found.setdefault(str(pid[2]), pid[1].dtype)
        return _Stub  # (a class: a module pid's class is built with NEWOBJ)


def _load_not_zip(fh, weights_only: bool, pickle_load_args: dict, map_location=None):
    """A file that is not a zip archive: as torch, its first pickle must be the legacy format's magic number (an
    empty file: EOFError; not a pickle: torch's UnpicklingError). torch's legacy format (``torch < 1.6``, or
    ``_use_new_zipfile_serialization=False``): the version and the platform's sizes as pickles, the object's pickle
    (persistent ids ``('storage', type, key, location, numel, view)``), the storage keys, then each storage (int64
    numel, bytes). The object's pickle is read twice: once for the storages' element sizes (``_PidScan``, nothing
    of it built), and once for real, the storages read by then. (The older .tar format, torch < 0.4, is not read.)"""
    import tarfile
    start = fh.tell()
    try:
        if start == 0 and tarfile.is_tarfile(fh):  # (torch tries its .tar reader only at offset 0)
            raise RuntimeError("functorch_lite.load: this is torch's legacy .tar format (torch < 0.4), which is not "
                               "supported; re-save it with torch.save(obj, f) from a newer torch")
    finally:
        fh.seek(start)
    if weights_only:
        def unpickler(persistent_load):
            return _WeightsUnpickler(fh, persistent_load)
    else:
        pickle_load_args.setdefault("encoding", "utf-8")

        def unpickler(persistent_load):
            if persistent_load is _no_persistent_load:
                persistent_load = None  # (torch reads these pickles with pickle_module.load: no persistent_load)
            return (_FullUnpickler if persistent_load is None else _FullZipUnpickler)(fh, persistent_load,
                                                                                      **pickle_load_args)
    try:
        magic = unpickler(_no_persistent_load).load()
        if magic != _MAGIC_NUMBER:
            raise RuntimeError("Invalid magic number; corrupt file?")
        version = unpickler(_no_persistent_load).load()
        if version != _LEGACY_PROTOCOL:
            raise RuntimeError(f"Invalid protocol version: {version}")
        unpickler(_no_persistent_load).load()  # (sys_info: little-endian platforms only, as JAX's)
        body = fh.tell()
        scan = _PidScan(fh)
        scan.load()
        keys = unpickler(_no_persistent_load).load()
    except pickle.UnpicklingError as e:
        if weights_only:
            raise pickle.UnpicklingError(_wo_message(str(e))) from None
        raise
    raw = {}
    for key in keys:
        (numel,) = struct.unpack("<q", fh.read(8))
        dt = scan.found.get(str(key))
        nbytes = numel * (dt.itemsize if dt is not None else 1)
        data = np.frombuffer(fh.read(nbytes), dtype=np.uint8)
        if data.size < nbytes:
            raise RuntimeError(f"functorch_lite.load: storage {key} is truncated (expected {nbytes} bytes, got "
                               f"{data.size})")
        raw[str(key)] = data
    end = fh.tell()
    loader = _Loader(_Records(raw), map_location)

    def persistent_load(pid):
        if isinstance(pid, tuple) and pid and pid[0] == "module" and not weights_only:
            return pid[1]  # (a pickled module's class: torch checks its source, then uses it)
        if isinstance(pid, tuple) and len(pid) == 6 and pid[5] is not None:  # a storage view (torch < 1.0)
            view_key, offset, size = pid[5]
            root = loader.persistent_load(pid[:5])
            es, raw = root.dtype.itemsize, root._untyped_storage
            hit = loader.storages.get(("view", str(view_key)))
            if hit is None:
                hit = loader.storages[("view", str(view_key))] = _typed(
                    _RawStorage(raw.raw[offset * es:(offset + size) * es], raw.device), root.dtype)
            return hit
        return loader.persistent_load(pid)
    fh.seek(body)
    try:
        result = unpickler(persistent_load).load()
    except pickle.UnpicklingError as e:
        if weights_only:
            raise pickle.UnpicklingError(_wo_message(str(e))) from None
        raise
    fh.seek(end)
    return result


def load(f, map_location: str | _dev.device | dict | Callable | None = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args) -> Any:
    """Load an object saved by ``torch.save`` or :func:`save` (zip format).

    ``map_location``: None (the saved device), a device or string, a dict of location strings
    (``{'cuda:0': 'cpu'}``) or a callable ``(storage, location) -> storage | None``, as torch.
    ``weights_only=True`` (the default) refuses every global outside torch's allow-list with
    ``pickle.UnpicklingError``; ``False`` unpickles anything (only for trusted files).

    >>> import functorch_lite as torch, io
    >>> buf = io.BytesIO(); torch.save([torch.arange(3)], buf); buf.seek(0)
    0
    >>> torch.load(buf, map_location="cpu")
    [tensor([0, 1, 2])]
    """
    weights_only_not_set = weights_only is None
    if weights_only_not_set:  # (torch's default: True, unless a pickle_module is given)
        weights_only = pickle_module is None
    # torch reads these two at every load (not an import-time flag: a script may set them between loads)
    true_values = ("1", "y", "yes", "true")
    force_wo = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    force_no_wo = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    if force_wo and force_no_wo:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should "
                           "be set, but both were set.")
    if force_wo:
        weights_only = True
    elif force_no_wo and weights_only_not_set:  # (it overrides only a default, never an explicit weights_only)
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=2)
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if weights_only and pickle_load_args:  # (torch's weights-only Unpickler takes ``encoding`` only)
        warnings.warn("pickle_load_args only works if `weights_only=False`.", UserWarning)  # (torch's: no stacklevel)
        bad = next((k for k in pickle_load_args if k != "encoding"), None)
        if bad is not None:
            raise TypeError(f"Unpickler.__init__() got an unexpected keyword argument '{bad}'")
    fh, mm, own = _open(f, bool(mmap))
    try:
        head = bytes(mm[:4]) if mm is not None else fh.read(4)
        if mm is None:
            fh.seek(-len(head), io.SEEK_CUR)
        if head == b"PK\x03\x04" and mmap and not own:
            raise ValueError("f must be a file path in order to use the mmap argument")
        if head != b"PK\x03\x04":
            if mmap:
                f_name = f"{f}, " if isinstance(f, str) else ""
                raise RuntimeError("mmap can only be used with files saved with "
                                   f"`torch.save({f_name}_use_new_zipfile_serialization=True), please torch.save "
                                   "your checkpoint with this option in order to use mmap.")
            return _load_not_zip(fh, weights_only, pickle_load_args, map_location)
        reader = _ZipReader(fh, mm)
        loader = _Loader(reader, map_location)
        data = io.BytesIO(bytes(reader.record("data.pkl")))
        if weights_only:
            up = _WeightsUnpickler(data, loader.persistent_load)
        else:
            pickle_load_args.setdefault("encoding", "utf-8")
            up = _FullZipUnpickler(data, loader.persistent_load, **pickle_load_args)
        try:
            result = up.load()
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
            raise
        except (EOFError, struct.error, IndexError, KeyError) as e:  # what a cut or garbled pickle raises
            raise RuntimeError(f"functorch_lite.load: data.pkl is truncated or corrupt ({e!r})") from e
        if not own:  # (a file object is left where torch leaves it: after the last record read, not the archive)
            fh.seek(reader.end)
        return result
    finally:
        if own:
            if mm is not None:
                try:
                    mm.close()
                except BufferError:  # tensors may still alias the map (zero-copy on CPU)
                    pass
            fh.close()
