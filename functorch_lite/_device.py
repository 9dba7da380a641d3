"""``torch.device`` parsing and the mapping to jax devices (spec §4).

A facade device is ``(type, index)``. ``cpu`` maps to ``jax.devices('cpu')``, ``cuda`` to JAX's GPU
devices, ``tpu`` to TPU devices; ``mps`` has no JAX backend. Asking for a device JAX does not have
raises :class:`DeviceUnavailableError` (an ``AssertionError``, like PyTorch's "Torch not compiled
with CUDA enabled", and a ``RuntimeError``) naming the devices that exist.
"""
from __future__ import annotations

import functools
import re

import jax

_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
          "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone", "tpu")
_TORCH_TYPES_MSG = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, "
                    "mps, meta, hpu, mtia, privateuseone")
_INDEX_RE = re.compile(r"^(0|[1-9][0-9]*)$")
_DEVICE_STRING_RE = re.compile(r"[a-zA-Z_]+(:(0|[1-9][0-9]*))?")
_JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}


class DeviceUnavailableError(AssertionError, RuntimeError):
    """Raised when a tensor is asked to live on a device that this JAX install does not have."""


class device:
    """``torch.device('cuda:1')``, ``torch.device('cuda', 1)``, ``torch.device(type='cpu')``."""

    __slots__ = ("type", "index", "_hash")

    def __new__(cls, type=None, index=None):  # noqa: A002
        if isinstance(type, device):
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was passed explicitly: "
                                   + str(type))
            return type
        return _parse(type, index)

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and other.type == self.type and other.index == self.index

    def __hash__(self):
        return self._hash

    def __reduce__(self):
        return (device, (str(self),))

    def __setattr__(self, name, value):
        # immutable, as torch's (the objects are cached and shared by every tensor on the device); _make sets the
        # slots through object.__setattr__
        if name in ("type", "index"):
            raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")
        raise AttributeError(f"'torch.device' object has no attribute '{name}'")

    def __delattr__(self, name):
        self.__setattr__(name, None)

    def __enter__(self):
        """``with torch.device('meta'):`` factory calls without a ``device=`` inside go to this device (as
        ``set_default_device``); the default before it comes back on exit (nested blocks restore in order)."""
        _context_stack.append(_default[0])
        set_default_device(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        _default[0] = _context_stack.pop()
        return None


@functools.lru_cache(maxsize=None)
def _make(type_, index):
    d = object.__new__(device)
    object.__setattr__(d, "type", type_)
    object.__setattr__(d, "index", index)
    object.__setattr__(d, "_hash", hash((type_, index)))
    return d


def _parse(spec, index=None) -> device:
    if isinstance(spec, int) and not isinstance(spec, bool):
        # torch.device(1): the current accelerator
        acc = accelerator_type()
        if acc is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return _make(acc, spec)
    if not isinstance(spec, str):
        if index is not None:
            raise TypeError(f"device(): argument 'type' (position 1) must be str, not {type(spec).__name__}")
        t = type(spec).__name__
        raise TypeError(f"device() received an invalid combination of arguments - got ({t}), but expected one of:\n"
                        f" * (torch.device device)\n      didn't match because some of the arguments have invalid "
                        f"types: (!{t}!)\n * (str type, int index = -1)\n")
    if spec == "":
        raise RuntimeError("Device string must not be empty")
    head, sep, tail = spec.partition(":")
    if head not in _TYPES:
        if not _DEVICE_STRING_RE.fullmatch(spec):  # (torch's form check comes before the type name's)
            raise RuntimeError(f"Invalid device string: '{spec}'")
        raise RuntimeError(f"Expected one of {_TORCH_TYPES_MSG} device type at start of device string: {spec}")
    idx = None
    if sep:
        if not _INDEX_RE.match(tail):
            raise RuntimeError(f"Invalid device string: '{spec}'")
        idx = int(tail)
        if index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {spec}")
    elif index is not None:
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not {type(index).__name__}")
        if index < 0:
            raise RuntimeError("Device index must not be negative")
        idx = index
    return _make(head, idx)


# ---- jax side ----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def jax_devices(type_: str) -> tuple:
    platform = _JAX_PLATFORM.get(type_)
    if platform is None:
        return ()
    try:
        return tuple(jax.devices(platform))
    except RuntimeError:
        return ()


def available() -> str:
    parts = []
    for t in ("cpu", "cuda", "tpu"):
        ds = jax_devices(t)
        if ds:
            parts.append(f"{t} ({len(ds)} device{'s' if len(ds) > 1 else ''})")
    return ", ".join(parts)


def accelerator_type():
    for t in ("cuda", "tpu"):
        if jax_devices(t):
            return t
    return None


@functools.lru_cache(maxsize=None)
def _resolve(dev: device):
    """facade device -> (canonical facade device, jax device); ``meta`` has no jax device (shape-only tensors)."""
    t = dev.type
    if t == "meta":
        return _make("meta", None), None
    ds = jax_devices(t)
    if not ds:
        if t == "cuda":
            msg = "Torch not compiled with CUDA enabled"
        elif t == "mps":
            msg = "PyTorch is not linked with support for mps devices"
        else:
            msg = f"no '{t}' device"
        raise DeviceUnavailableError(
            f"{msg}: JAX has no '{t}' backend here. Available devices: {available()}. "
            "Pick one with e.g. \"cuda\" if torch.cuda.is_available() else \"cpu\".")
    i = dev.index or 0
    if i >= len(ds):
        raise DeviceUnavailableError(
            f"Invalid device '{dev}': only {len(ds)} {t} device(s) exist. Available devices: {available()}.")
    # canonical facade device: cpu:0 reports as plain 'cpu' (as PyTorch); accelerators carry an index
    canon = _make("cpu", None) if (t == "cpu" and i == 0) else _make(t, i)
    return canon, ds[i]


# the current CUDA device (``torch.cuda.set_device`` / ``with torch.cuda.device(i)``): where a bare "cuda" goes
CURRENT_CUDA = [0]


def canonical(dev) -> device:
    """Facade device a tensor created with ``device=dev`` reports as ``.device``."""
    if dev is None:
        return _default[0]
    if not isinstance(dev, device):
        dev = device(dev)
    if dev.index is None and CURRENT_CUDA[0] and dev.type == "cuda":
        dev = _make("cuda", CURRENT_CUDA[0])
    return _resolve(dev)[0]


def to_jax(dev: device):
    if dev.index is None and CURRENT_CUDA[0] and dev.type == "cuda":
        dev = _make("cuda", CURRENT_CUDA[0])
    return _resolve(dev)[1]


def from_jax(jdev) -> device:
    t = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}[jdev.platform]
    ds = jax_devices(t)
    i = ds.index(jdev)
    return _resolve(_make(t, i))[0]


_default = [_make("cpu", None)]
_context_stack: list = []  # defaults that ``with device(...)`` blocks replaced, innermost last


def get_default_device() -> device:
    return _default[0]


def set_default_device(dev) -> None:
    _default[0] = canonical(dev if dev is not None else "cpu")


def synchronize(type_: str, index=None) -> None:
    """Wait until every array on the ``type_`` device(s) is computed (``torch.cuda.synchronize``): JAX dispatches
    asynchronously and has no device-wide barrier, so this blocks on the live arrays that sit there (a no-op
    where JAX has no such device)."""
    ds = jax_devices(type_)
    if not ds:
        return
    if index is not None:
        ds = ds[index:index + 1]
    want = set(ds)
    # (live_arrays() alone lists the default backend's: on a GPU machine, not the CPU's)
    live = jax.live_arrays(_JAX_PLATFORM[type_])
    jax.block_until_ready([a for a in live if not a.is_deleted() and want & a.devices()])


def misplaced(arr, dev):
    """The jax device ``arr`` should move to for facade device ``dev``, or None when it is already there (or is a
    tracer, or ``dev`` is meta). JAX puts an array made without a committed input on its own default device,
    which on a GPU machine is not the facade's CPU."""
    if dev.type == "meta" or isinstance(arr, jax.core.Tracer):
        return None
    jd = to_jax(dev)
    return None if arr.devices() == {jd} else jd
