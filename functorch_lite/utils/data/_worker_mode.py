"""Worker-mode flag and the guard that keeps JAX out of DataLoader worker processes.

JAX is not fork-safe: a forked worker that runs a jitted function or a ``device_put`` can deadlock
on thread pools that did not survive the fork. Workers therefore only run NumPy code. This module
is pure Python (no JAX import) so that checking the flag costs nothing:

- :func:`in_worker` is True inside a DataLoader worker process (set by the worker loop).
- :func:`install_guard` (called once in each worker) makes every facade-tensor read or creation
  raise :data:`WORKER_TENSOR_ERROR` instead of reaching JAX: it replaces ``Storage.array`` (the one
  place a tensor's values live) with a raising property, blocks ``jax.device_put``/``jax.jit``,
  random keys and the cached creation kernels, in the worker's copy of the interpreter only.
  The main process is never touched. (A check of :func:`in_worker` at the top of the facade's
  dispatch and creation paths would make this airtight; see the report to the lead.)
- ``_worker_tensor.install`` (called right after it) then makes ``torch.tensor`` & co. return NumPy-backed
  worker tensors, and the other public functions handle a worker tensor with its method or a clear error.
"""
from __future__ import annotations

_IN_WORKER = False

WORKER_TENSOR_ERROR = (
    "functorch_lite tensors cannot be created or used inside a DataLoader worker process: workers never "
    "run JAX (it is not fork-safe). Return NumPy arrays or Python numbers from Dataset.__getitem__ / "
    "collate_fn / worker_init_fn instead; the DataLoader turns them into tensors in the main process. "
    "(Tensors held by a picklable dataset reach workers as NumPy-backed worker tensors, and torch.tensor / "
    "as_tensor / from_numpy / zeros / ones / empty / full / arange / *_like / stack / cat called through the "
    "module (torch.tensor(...)) make them there; random functions and other ops do not.)")


def in_worker() -> bool:
    """True inside a DataLoader worker process."""
    return _IN_WORKER


def set_in_worker(flag: bool) -> None:
    """Mark this process as a DataLoader worker (worker loop only)."""
    global _IN_WORKER
    _IN_WORKER = bool(flag)


def _blocked(*args, **kwargs):
    raise RuntimeError(WORKER_TENSOR_ERROR)


# What the guard replaced, kept alive: in a forked child, dropping the last reference to a jitted function
# runs its destructor, which frees compiled programs through the parent's GPU client -- and that aborts the
# child (seen on an H200: "Fatal Python error: Aborted" at the replacing line). CPU clients do not mind.
_REPLACED: list = []


def _replace(obj, name: str, new) -> None:
    _REPLACED.append(getattr(obj, name))
    setattr(obj, name, new)


def install_guard() -> None:
    """In a worker: make facade tensor creation/reads and new JAX dispatches raise a clear error."""
    import sys
    set_in_worker(True)
    storage_mod = sys.modules.get("functorch_lite._tensor.storage")
    if storage_mod is not None:
        _replace(storage_mod.Storage, "array", property(_blocked, _blocked))
    jax = sys.modules.get("jax")
    if jax is not None:
        _replace(jax, "device_put", _blocked)
        _replace(jax, "jit", _blocked)
    # cached jitted kernels that creation calls before a Storage exists (best effort: private names)
    creation = sys.modules.get("functorch_lite.ops.creation")
    for name in ("_full_jit", "_rand_jit"):
        if creation is not None and hasattr(creation, name):
            _replace(creation, name, _blocked)
    rng = sys.modules.get("functorch_lite.random")
    if rng is not None:
        _replace(rng.Generator, "next_key", _blocked)
        if hasattr(rng, "_split"):
            _replace(rng, "_split", _blocked)
