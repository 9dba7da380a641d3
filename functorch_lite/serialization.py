"""``save``/``load`` in PyTorch's own file format (``torch.save``'s zip format, torch >= 1.6).

The zip is uncompressed, its records under ``archive/`` in torch 2.13's order and 64-byte aligned:
``data.pkl`` (pickle protocol 2; a tensor is ``torch._utils._rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, OrderedDict())``, a storage the persistent id ``('storage',
torch.FloatStorage, key, location, numel)``; float8/uint16+ use ``_rebuild_tensor_v3`` with
``torch.storage.UntypedStorage``), ``.format_version``, ``.storage_alignment``, ``byteorder``,
``data/<key>`` (raw little-endian bytes), ``version``, ``.data/serialization_id``. torch is never
imported: its globals are written by name and read back as their functorch_lite equivalents.
``load(weights_only=True)`` (the default) accepts only torch's default allow-list of globals.
"""
from __future__ import annotations

import collections
import io
import mmap as _mmap
import os
import pickle
import struct
import uuid
import zipfile
from typing import Any, Callable

import jax
import numpy as np

from . import _device as _dev
from . import dtypes as D
from ._tensor import views as V
from ._tensor.tensor import Size, Tensor

__all__ = ["save", "load"]

# ---- torch's names ------------------------------------------------------------------------------
_LEGACY_STORAGE = {  # torch.storage._dtype_to_storage_type_map()
    D.float64: "DoubleStorage", D.float32: "FloatStorage", D.float16: "HalfStorage", D.int64: "LongStorage",
    D.int32: "IntStorage", D.int16: "ShortStorage", D.int8: "CharStorage", D.uint8: "ByteStorage",
    D.bool: "BoolStorage", D.bfloat16: "BFloat16Storage", D.complex128: "ComplexDoubleStorage",
    D.complex64: "ComplexFloatStorage",
}
# torch.storage._new_dtypes() that the facade has: written as UntypedStorage + a torch dtype
_NEW_DTYPES = (D.float8_e4m3fn, D.float8_e5m2, D.float8_e4m3fnuz, D.float8_e5m2fnuz, D.float8_e8m0fnu,
               D.uint16, D.uint32, D.uint64)
_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.")
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")  # torch's _blocklisted_modules
_NOT_ZIP = "PytorchStreamReader failed reading zip archive: failed finding central directory"


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
        self._by_storage: dict = {}  # root storage uid (never reused) -> (key, dtype, location, numel)

    def persistent_id(self, obj):
        return obj.value if type(obj) is _Boxed and obj.kind == "pid" else None

    def _save_torch_global(self, obj, module: str, name: str) -> None:
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[_Global] = lambda self, obj: self._save_torch_global(obj, obj.module, obj.name)
    dispatch[D.dtype] = lambda self, obj: self._save_torch_global(obj, "torch", obj.name)

    def reducer_override(self, obj):
        t = type(obj)
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if t is _Boxed:
            return self._reduce_plain(obj.value, False)
        if t is _dev.device:
            return _glob("torch", "device"), ((obj.type,) if obj.index is None else (obj.type, obj.index))
        if t is Size:
            return _glob("torch", "Size"), (tuple(obj),)
        return NotImplemented

    def _reduce_tensor(self, t: Tensor):
        from .nn.parameter import Parameter
        state = dict(t.__dict__)
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
        if dt not in _LEGACY_STORAGE and dt not in _NEW_DTYPES:
            raise RuntimeError(f"functorch_lite.save: torch cannot store tensors of dtype {dt!r}")
        root = t._storage.root()
        base = root.array
        if isinstance(base, jax.core.Tracer):
            from .ops._dispatch import data_dependent_error
            raise data_dependent_error("saving a tensor")
        if np.dtype(base.dtype) == dt.np:
            ref, offset, stride = self._storage_ref(root, base, dt, root.device), t._offset, tuple(t.stride())
        else:  # a view(dtype) reinterpreting its base: saved as its own storage
            vals = np.ascontiguousarray(np.asarray(t._array))
            ref, offset, stride = self._storage_ref(None, vals, dt, None), 0, V.contiguous_strides(t._shape)
        args = (ref, offset, tuple(t._shape), stride, bool(requires_grad), collections.OrderedDict())
        if dt in _NEW_DTYPES:
            return _glob("torch._utils", "_rebuild_tensor_v3"), args + (dt,)
        return _glob("torch._utils", "_rebuild_tensor_v2"), args

    def _storage_ref(self, owner, array, dt: D.dtype, dev) -> _Boxed:
        uid = None if owner is None else owner.uid
        entry = self._by_storage.get(uid) if uid is not None else None
        if entry is None:
            key = str(len(self.records))
            flat = np.asarray(array).reshape(-1)  # host byte order: little-endian on every JAX platform
            loc = "cpu" if dev is None or dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"
            numel = flat.size if dt in _LEGACY_STORAGE else flat.size * dt.itemsize
            entry = (key, dt, loc, numel)
            self.records.append((key, flat))
            if uid is not None:
                self._by_storage[uid] = entry
        elif entry[1] is not dt:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        key, _, loc, numel = entry
        stype = (_glob("torch", _LEGACY_STORAGE[dt]) if dt in _LEGACY_STORAGE
                 else _glob("torch.storage", "UntypedStorage"))
        return _Boxed("pid", ("storage", stype, key, loc, numel))


class _ZipWriter:
    """Records written as torch does: stored (no compression), data 64-byte aligned via an 'FB' extra field."""

    def __init__(self, f, archive: str = "archive"):
        self.zf = zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self.start = self._tell()
        self.archive = archive

    def _tell(self) -> int:
        try:
            return self.zf.fp.tell()
        except (OSError, AttributeError):
            return 0

    def write(self, name: str, data) -> None:
        full = f"{self.archive}/{name}"
        info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        size = len(data)
        header = 30 + len(full.encode("utf-8")) + 4 + (20 if size * 1.05 > zipfile.ZIP64_LIMIT else 0)
        pad = (-(self._tell() - self.start + header)) % 64
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        self.zf.writestr(info, data)

    def close(self) -> None:
        self.zf.close()


def save(obj: Any, f, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to ``f`` (a path or a binary file object) in ``torch.save``'s zip format.

    >>> import functorch_lite as torch, io
    >>> buf = io.BytesIO(); torch.save({"w": torch.ones(2)}, buf)
    >>> torch.load(io.BytesIO(buf.getvalue()))["w"]
    tensor([1., 1.])
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("functorch_lite.save writes only the zip format "
                                  "(_use_new_zipfile_serialization=True)")
    if pickle_module is not pickle:
        raise NotImplementedError("functorch_lite.save supports only pickle_module=pickle")
    buf = io.BytesIO()
    p = _Pickler(buf, pickle_protocol)
    p.dump(obj)
    own = isinstance(f, (str, os.PathLike))
    fh = open(f, "wb") if own else f
    try:
        w = _ZipWriter(fh)
        w.write("data.pkl", buf.getbuffer())
        w.write(".format_version", b"1")
        w.write(".storage_alignment", b"64")
        if not _disable_byteorder_record:
            w.write("byteorder", b"little")
        for key, flat in p.records:
            w.write(f"data/{key}", memoryview(np.ascontiguousarray(flat).view(np.uint8)).cast("B"))
        w.write("version", b"3\n")
        w.write(".data/serialization_id", str(uuid.uuid4().int).rjust(40, "0")[:40].encode())
        w.close()
    finally:
        if own:
            fh.close()


# ---- reading -------------------------------------------------------------------------------------
class _StorageType(collections.namedtuple("_StorageType", "dtype name")):
    """What a ``torch.<X>Storage`` / ``torch.storage.UntypedStorage`` global loads as."""


class _RawStorage:
    """A loaded storage record: raw bytes, the element dtype of its class, the device it goes to.

    This is the ``storage`` a ``map_location`` callable receives (``.cpu()``, ``.cuda(i)``,
    ``.to(device)`` return it placed elsewhere)."""

    def __init__(self, raw: np.ndarray, dtype, device):
        self.raw, self.dtype, self.device = raw, dtype, device
        self._shared: dict = {}  # facade dtype -> the facade Storage holding these bytes

    def nbytes(self) -> int:
        return int(self.raw.size)

    size = nbytes

    def to(self, device=None, non_blocking: bool = False) -> "_RawStorage":
        """This storage placed on ``device``."""
        return _RawStorage(self.raw, self.dtype, _dev.device(device))

    def cpu(self) -> "_RawStorage":
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False) -> "_RawStorage":
        return self.to(_dev.device("cuda", device) if isinstance(device, int) or device is None else device)


def _place(location: str):
    """Facade device for a storage location; torch's message when CUDA is asked for and absent."""
    try:
        return _dev.canonical(_dev.device(location) if isinstance(location, str) else location)
    except _dev.DeviceUnavailableError as e:
        if str(location).startswith("cuda"):
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
                "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
                "to map your storages to the CPU.") from e
        raise RuntimeError(f"Attempting to deserialize object on device '{location}': {e}") from e


def _restore_device(raw_storage: _RawStorage, location: str, map_location):
    if map_location is None:
        return _place(location)
    if isinstance(map_location, (str, _dev.device)):
        return _place(str(map_location))
    if isinstance(map_location, dict):
        return _place(str(map_location.get(location, location)))
    if callable(map_location):
        res = map_location(raw_storage, location)
        if res is None:
            return _place(location)
        if isinstance(res, _RawStorage):
            return _place(str(res.device))
        raise TypeError(f"map_location callable must return a storage or None, got {type(res).__name__}")
    raise TypeError(f"Unsupported map_location type: {type(map_location).__name__}")


def _facade_tensor(storage: _RawStorage, offset: int, size, stride, dtype) -> Tensor:
    """A facade tensor over ``storage`` read as ``dtype`` (one facade Storage per record and dtype)."""
    size, stride = tuple(size), tuple(stride)
    root = storage._shared.get(dtype)
    contiguous = V.is_contiguous(size, stride) if size else True
    if root is None:
        n = storage.raw.size // dtype.itemsize
        vals = np.frombuffer(storage.raw, dtype=dtype.np, count=n)
        whole = offset == 0 and contiguous and int(np.prod(size, dtype=np.int64)) == n
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


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """Facade version of ``torch._utils._rebuild_tensor_v2``."""
    if not isinstance(storage, _RawStorage) or storage.dtype is None:
        raise pickle.UnpicklingError("_rebuild_tensor_v2 expects a typed storage")
    return _facade_tensor(storage, storage_offset, size, stride, storage.dtype).requires_grad_(bool(requires_grad))


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                       metadata=None):
    """Facade version of ``torch._utils._rebuild_tensor_v3`` (untyped storage + explicit dtype)."""
    if not isinstance(storage, _RawStorage) or not isinstance(dtype, D.dtype):
        raise pickle.UnpicklingError("_rebuild_tensor_v3 expects a storage and a dtype")
    return _facade_tensor(storage, storage_offset, size, stride, dtype).requires_grad_(bool(requires_grad))


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
    if func not in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter, _rebuild_parameter_with_state):
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
    if name == "torch.strided":
        return functorch_lite.strided
    raise pickle.UnpicklingError(f"functorch_lite supports only the strided layout, not {name}")


def _torch_globals() -> dict:
    """'module.name' of a torch global -> its functorch_lite equivalent."""
    from .nn.parameter import Parameter
    g: dict = {
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
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
        self.reader, self.map_location = reader, map_location
        self.storages: dict = {}

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
        raw = self.reader.record(f"data/{key}")
        nbytes = int(numel) * (stype.dtype.itemsize if stype.dtype is not None else 1)
        if raw.size < nbytes:
            raise RuntimeError(f"PytorchStreamReader failed reading file data/{key}: file read failed "
                               f"(expected {nbytes} bytes, got {raw.size}); the file is truncated or corrupt")
        cpu = _RawStorage(raw[:nbytes], stype.dtype, _dev.canonical("cpu"))
        dev = _restore_device(cpu, str(location), self.map_location)
        self.storages[key] = _RawStorage(cpu.raw, stype.dtype, dev)
        return self.storages[key]


class _WeightsUnpickler(pickle._Unpickler):
    """torch's ``weights_only`` unpickler: allow-listed globals only, opcodes restricted like torch's."""

    dispatch = pickle._Unpickler.dispatch.copy()

    def __init__(self, file, persistent_load: Callable):
        super().__init__(file, encoding="utf-8")
        self.persistent_load = persistent_load
        self._allowed: set = set()  # ids of the globals find_class handed out (the only callables)

    def find_class(self, module, name):
        module, name = _fix_name(module, name)
        full = f"{module}.{name}"
        if full in _SAFE_BUILTINS:
            obj = _SAFE_BUILTINS[full]
        elif full == "_codecs.encode":
            obj = _codecs_encode
        elif _is_torch(module) and _torch_table().get(full) is not None:
            obj = _torch_table()[full]
        elif module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Weights only load failed. {_UNSAFE_MESSAGE}\n\n\nTrying to load unsupported GLOBAL {full} whose "
                f"module {module} is blocked.")
        else:
            shown = name if module == "builtins" else full
            raise pickle.UnpicklingError(
                "Weights only load failed. This file can still be loaded, to do so you have two options, do those "
                f"steps only if you trust the source of the checkpoint. \n\t(1) {_UNSAFE_MESSAGE}\n\t(2) "
                "Alternatively, to load with `weights_only=True` please check the recommended steps in the "
                f"following error message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL {shown} was not "
                "an allowed global by default. (functorch_lite.load has no add_safe_globals: load with "
                "weights_only=False if you trust this file.)")
        self._allowed.add(id(obj))
        return obj

    def _refuse(self, msg: str):
        raise pickle.UnpicklingError(f"Weights only load failed. {_UNSAFE_MESSAGE}\n\n{msg}")

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in self._allowed:
            self._refuse(f"Trying to call reduce for unrecognized function {func!r}")
        self.stack[-1] = func(*args)

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        from .nn.parameter import Parameter
        if cls is Parameter:
            self.append(Parameter(*args))
        elif id(cls) in self._allowed and cls in (collections.OrderedDict, collections.Counter, set, Size):
            self.append(cls.__new__(cls, *args))
        else:
            self._refuse(f"Can only create new object for nn.Parameter or allowlisted classes but got {cls!r}")

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if isinstance(inst, Tensor) or type(inst) in (collections.OrderedDict, collections.Counter):
            _set_state(inst, state) if isinstance(inst, Tensor) else inst.__dict__.update(state or {})
        else:
            self._refuse(f"Can only build Tensor, Parameter, OrderedDict, but got {type(inst)}")

    def _into(self, types: tuple, items: list, add: Callable) -> None:
        """APPEND(S)/SETITEM(S)/ADDITEMS only into the built-in containers (as torch's unpickler)."""
        obj = self.stack[-1]
        if type(obj) not in types:
            self._refuse(f"Can only add items to {', '.join(t.__name__ for t in types)}, but got {type(obj)}")
        add(obj, items)

    def load_append(self):
        self._into((list,), [self.stack.pop()], list.extend)

    def load_appends(self):
        self._into((list,), self.pop_mark(), list.extend)

    def load_setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._into(_DICTS, [key, value], _set_pairs)

    def load_setitems(self):
        self._into(_DICTS, self.pop_mark(), _set_pairs)

    def load_additems(self):
        self._into((set,), self.pop_mark(), set.update)

    def _unsupported(self):
        self._refuse("Unsupported operand for weights_only unpickling (INST/OBJ/EXT opcodes)")

    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.BUILD[0]] = load_build
    dispatch[pickle.APPEND[0]] = load_append
    dispatch[pickle.APPENDS[0]] = load_appends
    dispatch[pickle.SETITEM[0]] = load_setitem
    dispatch[pickle.SETITEMS[0]] = load_setitems
    dispatch[pickle.ADDITEMS[0]] = load_additems
    for _op in (pickle.INST, pickle.OBJ, pickle.NEWOBJ_EX, pickle.EXT1, pickle.EXT2, pickle.EXT4):
        dispatch[_op[0]] = _unsupported
    del _op


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


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: ordinary unpickling, with torch globals resolved to functorch_lite."""

    def __init__(self, file, persistent_load: Callable, **kwargs):
        super().__init__(file, **kwargs)
        self.persistent_load = persistent_load

    def find_class(self, module, name):
        m, n = _fix_name(module, name)
        if _is_torch(m):
            return _resolve_torch(m, n)
        return super().find_class(module, name)


class _ZipReader:
    """The records of a torch zip file (``archive/data.pkl``...), read through zipfile or an mmap."""

    def __init__(self, fh, mm=None):
        self.mm = mm
        try:
            self.zf = zipfile.ZipFile(fh if mm is None else mm)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error) as e:
            raise RuntimeError(f"{_NOT_ZIP} (not a valid zip file: {e})") from e
        names = self.zf.namelist()
        if not names or "/" not in names[0]:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: file in archive is not in a "
                               "subdirectory")
        self.prefix = names[0].split("/")[0]
        self.names = set(names)
        if f"{self.prefix}/byteorder" in self.names and bytes(self.record("byteorder")) != b"little":
            raise RuntimeError("functorch_lite.load: big-endian torch files are not supported")

    def record(self, name: str) -> np.ndarray:
        full = f"{self.prefix}/{name}"
        if full not in self.names:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        try:
            if self.mm is not None:
                info = self.zf.getinfo(full)
                nl, el = struct.unpack("<HH", self.mm[info.header_offset + 26:info.header_offset + 30])
                start = info.header_offset + 30 + nl + el
                if start + info.file_size > len(self.mm):
                    raise zipfile.BadZipFile("record extends past the end of the file")
                return np.frombuffer(self.mm, dtype=np.uint8, count=info.file_size, offset=start)
            return np.frombuffer(self.zf.read(full), dtype=np.uint8)
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
    if use_mmap:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if not (hasattr(f, "read") and hasattr(f, "seek")):
        raise TypeError(f"load expects a path or a binary file object with read() and seek(), got "
                        f"{type(f).__name__}")
    return f, None, False


def load(f, map_location: str | _dev.device | dict | Callable | None = None, pickle_module: Any = None, *,
         weights_only: bool = True, mmap: bool | None = None, **pickle_load_args) -> Any:
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
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    fh, mm, own = _open(f, bool(mmap))
    try:
        head = bytes(mm[:4]) if mm is not None else fh.read(4)
        if mm is None:
            fh.seek(-len(head), io.SEEK_CUR)
        if head[:1] == b"\x80" or head[:2] == b"\x8a\x0a":
            raise RuntimeError("functorch_lite.load: this is torch's legacy (pre-1.6, non-zip) format, which is "
                               "not supported; re-save it with torch.save(obj, f) from torch >= 1.6")
        if head != b"PK\x03\x04":
            raise RuntimeError(f"{_NOT_ZIP} (the file is not a torch.save zip archive, or it is empty)")
        reader = _ZipReader(fh, mm)
        loader = _Loader(reader, map_location)
        data = io.BytesIO(bytes(reader.record("data.pkl")))
        if weights_only:
            up = _WeightsUnpickler(data, loader.persistent_load)
        else:
            pickle_load_args.setdefault("encoding", "utf-8")
            up = _FullUnpickler(data, loader.persistent_load, **pickle_load_args)
        try:
            return up.load()
        except (EOFError, struct.error, IndexError, KeyError) as e:  # what a cut or garbled pickle raises
            raise RuntimeError(f"functorch_lite.load: data.pkl is truncated or corrupt ({e!r})") from e
    finally:
        if own:
            if mm is not None:
                try:
                    mm.close()
                except BufferError:  # tensors may still alias the map (zero-copy on CPU)
                    pass
            fh.close()
