"""``torch.utils.dlpack`` and ``torch.from_dlpack``; ``Tensor.__dlpack__``/``__dlpack_device__``: tensors to and
from any DLPack library (JAX, NumPy, real PyTorch, CuPy ...).

* Export (``np.from_dlpack(t)``, ``jnp.from_dlpack(t)``, real ``torch.from_dlpack(t)``, ``to_dlpack(t)``): the
  tensor's jax buffer, zero-copy where the consumer allows, with PyTorch's refusals (a tensor that requires grad,
  a conjugate view).
* Import (``from_dlpack(x)``): **a copy taken now**, as ``from_numpy`` (README, "NumPy bridge"): jax arrays are
  immutable, so a buffer its producer may still write to cannot back a tensor; PyTorch shares it. A NumPy array
  keeps its layout (``stride()``), others arrive contiguous. A bare DLPack capsule cannot be imported (JAX
  consumes only objects with ``__dlpack__``): pass the producer's array itself.
"""
from __future__ import annotations

import jax
import numpy as np

from .. import _device as _dev
from .. import dtypes as D
from .._tensor.tensor import Tensor


def _exportable(t: Tensor):
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if t.is_conj():
        raise BufferError("Can't export tensors with the conjugate bit set")
    if t.is_neg():
        raise BufferError("Can't export tensors with the negative bit set")
    arr = t._array
    if not isinstance(arr, jax.Array):
        raise BufferError(f"Can't export a tensor on the '{t.device.type}' device (it holds no data)")
    return arr


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
    return _exportable(self).__dlpack__(**kwargs)


def __dlpack_device__(self):
    return _exportable(self).__dlpack_device__()


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of the tensor's buffer (for consumers that still take capsules)."""
    return tensor.__dlpack__()


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor holding a copy of ``ext_tensor``'s values (any object with ``__dlpack__``)."""
    if isinstance(ext_tensor, np.ndarray):
        from .. import from_numpy
        return from_numpy(ext_tensor)
    if type(ext_tensor).__name__ == "PyCapsule":
        raise RuntimeError("from_dlpack of a DLPack capsule is not supported by functorch_lite (JAX imports only "
                           "objects with __dlpack__ and __dlpack_device__): pass the producer's array itself")
    if not (hasattr(ext_tensor, "__dlpack__") and hasattr(ext_tensor, "__dlpack_device__")):
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                           "only once, so you might have already constructed a tensor from it once.")
    arr = jax.dlpack.from_dlpack(ext_tensor).copy()  # (the import may alias the producer's buffer)
    return Tensor._from_array(arr, D.from_numpy_dtype(arr.dtype), _dev.from_jax(next(iter(arr.devices()))))


def is_foreign_array(obj) -> bool:
    """An array of another DLPack library (real torch, JAX, CuPy ...): not a facade tensor, not NumPy."""
    return (hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")
            and not isinstance(obj, (Tensor, np.ndarray, np.generic)))


def import_foreign(obj) -> Tensor:
    """``from_dlpack`` of another library's array, detached first where it tracks gradients (a real torch
    ``nn.Parameter`` in a state dict)."""
    if getattr(obj, "requires_grad", False) and callable(getattr(obj, "detach", None)):
        obj = obj.detach()
    return from_dlpack(obj)


METHODS = {"__dlpack__": __dlpack__, "__dlpack_device__": __dlpack_device__}
