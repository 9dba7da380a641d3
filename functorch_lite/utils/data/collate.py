"""``collate`` / ``default_collate`` / ``default_convert`` (spec §13.1, DATA-07..18) with one NumPy core; also
``torch.utils.data._utils.collate`` (the same objects): ``default_collate`` is ``collate`` with
``default_collate_fn_map``, and a type registered in that map changes how ``default_collate`` batches it.

Collation runs on NumPy in both places it happens: in a worker process (where it must never touch
JAX) the leaves it produces are :class:`TensorArray` stand-ins (NumPy-backed tensors with PyTorch's semantics
for the methods they support, ``_worker_tensor.py``); in the main process the same code turns each leaf into a facade Tensor at once.
Facade tensors met in the main process are stacked with ``functorch_lite.stack`` (device and
autograd kept, as PyTorch). :func:`to_facade` turns a worker's result (any structure) into tensors.
"""
from __future__ import annotations

import collections.abc as cabc
import copy
import re
from typing import Any, Callable

import numpy as np

from ..._tensor.tensor import Tensor as _Tensor
from . import _worker_mode
from ._worker_tensor import TensorArray, _check_same_sizes, stand_in  # noqa: F401  (the worker-side tensor)

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _tensor_cls():
    from ..._tensor.tensor import Tensor
    return Tensor


def numpy_to_tensor(arr: np.ndarray):
    """Main process only: a facade Tensor holding a copy of ``arr`` (dtype from NumPy's dtype)."""
    from ... import dtypes as D
    from ..._tensor.tensor import tensor_from_numpy
    arr = np.asarray(arr)
    if not arr.flags.writeable or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr).copy()
    return tensor_from_numpy(arr, D.from_numpy_dtype(arr.dtype))


def _leaf() -> Callable[[np.ndarray], Any]:
    return stand_in if _worker_mode.in_worker() else numpy_to_tensor


_PY_NUMBERS = (int, bool, float, complex)


def _check_store(batch, dt) -> None:
    """The errors ``torch.tensor(batch)`` / ``torch.as_tensor(batch)`` raise writing each element of a 1-d batch
    into a ``dt`` slot: a NumPy uint64 scalar ("an integer is required": PyTorch reads uint64 from Python ints
    only), a sequence where the first element gave a number."""
    from ... import dtypes as D
    from ...ops.creation import other_sequence
    from ...ops.view_ops import _tname as _type_name
    integral = not (dt.is_floating_point or dt.is_complex)
    for x in batch:
        if dt is D.uint64 and not isinstance(x, int):
            raise TypeError("an integer is required")
        if isinstance(x, (list, tuple, range)) or other_sequence(x):
            raise TypeError(f"'{_type_name(x)}' object cannot be interpreted as an integer" if integral
                            else f"must be real number, not {_type_name(x)}")


def _python_numbers(batch: list) -> np.ndarray:
    """``torch.tensor(batch)`` for Python numbers: bool / int64 / default float / complex (and PyTorch's errors
    for what is not a number: "new(): invalid data type 'str'", "Could not infer dtype of NoneType", ...)."""
    from ... import dtypes as D
    if not all(type(x) in _PY_NUMBERS for x in batch):
        from ...ops.creation import _infer_dtype
        _check_store(batch, _infer_dtype(list(batch)))
    if any(isinstance(x, (complex, np.complexfloating)) for x in batch):
        dt = np.complex128 if D.get_default_dtype() is D.float64 else np.complex64
    elif any(isinstance(x, (float, np.floating)) for x in batch):
        dt = np.dtype(D.get_default_dtype().jnp)
    elif all(isinstance(x, (bool, np.bool_)) for x in batch):
        dt = np.bool_
    else:
        dt = np.int64
    try:
        return np.array(batch, dtype=dt)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None


def fn_for(elem, collate_fn_map: dict | None) -> Callable | None:
    """The function ``collate_fn_map`` gives ``elem``: its type's, else the first key it is an instance of."""
    if collate_fn_map is None:
        return None
    fn = collate_fn_map.get(type(elem))
    if fn is not None:
        return fn
    for collate_type in collate_fn_map:
        if isinstance(elem, collate_type):
            return collate_fn_map[collate_type]
    return None


def collate(batch, *, collate_fn_map: dict | None = None) -> Any:
    """Collate a batch, dispatching on the type of its first element through ``collate_fn_map`` (its exact type,
    then the first key it is an instance of, in insertion order), then through mappings, namedtuples and
    sequences, recursively (``torch.utils.data._utils.collate.collate``). Each function of the map is called as
    ``fn(batch, collate_fn_map=collate_fn_map)``.

    >>> collate([(1, "a"), (2, "b")], collate_fn_map=default_collate_fn_map)
    [tensor([1, 2]), ('a', 'b')]
    """
    elem = batch[0]
    elem_type = type(elem)
    fn = fn_for(elem, collate_fn_map)
    if fn is not None:
        return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, cabc.Mapping):
        try:
            if isinstance(elem, cabc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, cabc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))  # tuples, as PyTorch (strings come back as tuples)
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, cabc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


# ---- the default element functions (a worker makes TensorArray stand-ins where the main process makes tensors) ----
def collate_tensor_fn(batch, *, collate_fn_map: dict | None = None):
    """Tensors: ``stack(batch, 0)`` (device and autograd kept)."""
    from ... import stack
    Tensor = _tensor_cls()
    if all(isinstance(t, Tensor) for t in batch):  # (else stack raises PyTorch's "expected Tensor as element i")
        _check_same_sizes([t.shape for t in batch])
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map: dict | None = None):
    """NumPy arrays: stacked (in NumPy), then one tensor; string and object arrays are refused."""
    elem = np.asarray(batch[0])  # (a worker tensor's .dtype is a torch dtype)
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    _check_same_sizes([np.shape(b) for b in batch])
    arrays = [np.asarray(b) for b in batch]
    dt = arrays[0].dtype
    if any(a.dtype != dt for a in arrays):  # (torch stacks them as tensors: its promotion, not NumPy's)
        from ... import dtypes as D
        from ..._promotion import promote_types
        common = D.from_numpy_dtype(dt)
        for a in arrays[1:]:
            common = promote_types(common, D.from_numpy_dtype(a.dtype))
        arrays = [a.astype(common.jnp) for a in arrays]
    return _leaf()(np.stack(arrays))


def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict | None = None):
    """NumPy scalars (with any Python numbers beside them): one tensor, ``torch.as_tensor(batch)``'s dtype (the
    scalars' own, promoted as torch's tensor inference does: an int64 beside a float is the default float)."""
    from ...ops.creation import _infer_dtype
    dt = _infer_dtype(list(batch))
    _check_store(batch, dt)
    return _leaf()(np.array(batch, dtype=dt.jnp))


def collate_float_fn(batch, *, collate_fn_map: dict | None = None):
    """Python floats: a float64 tensor, ``torch.tensor(batch, dtype=torch.float64)`` — whose TypeError for an
    element that is not a real number ("must be real number, not str") comes first."""
    if not all(type(x) is float for x in batch):
        from ...ops.view_ops import _tname as _type_name
        for x in batch:
            if isinstance(x, (str, bytes)) or (isinstance(x, complex) and not isinstance(x, np.generic)) or not (
                    isinstance(x, (np.ndarray, np.generic, _Tensor, TensorArray))
                    or hasattr(type(x), "__float__") or hasattr(type(x), "__index__")):
                raise TypeError(f"must be real number, not {_type_name(x)}")
    return _leaf()(np.array(batch, dtype=np.float64))


def collate_int_fn(batch, *, collate_fn_map: dict | None = None):
    """Python ints (and bools): ``torch.tensor(batch)``."""
    return _leaf()(_python_numbers(batch))


def collate_str_fn(batch, *, collate_fn_map: dict | None = None):
    """Strings and bytes: the batch as it is."""
    return batch


default_collate_fn_map: dict = {
    _Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch, as ``torch.utils.data.default_collate``: ``collate`` with
    ``default_collate_fn_map`` (register a type there to change how it is collated).

    >>> default_collate([(1, 2.0), (3, 4.0)])
    [tensor([1, 3]), tensor([2., 4.], dtype=torch.float64)]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def _convert(data, leaf: Callable) -> Any:
    elem_type = type(data)
    if isinstance(data, (_tensor_cls(), TensorArray)):
        return data if isinstance(data, _tensor_cls()) or _worker_mode.in_worker() else leaf(data)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return leaf(np.asarray(data))
    if isinstance(data, cabc.Mapping):
        try:
            if isinstance(data, cabc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: _convert(data[key], leaf) for key in data})
                return clone
            return elem_type({key: _convert(data[key], leaf) for key in data})
        except TypeError:
            return {key: _convert(data[key], leaf) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(_convert(d, leaf) for d in data))
    if isinstance(data, tuple):
        return [_convert(d, leaf) for d in data]
    if isinstance(data, cabc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, cabc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = _convert(d, leaf)
                return clone
            return elem_type([_convert(d, leaf) for d in data])
        except TypeError:
            return [_convert(d, leaf) for d in data]
    return data


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays/scalars (also inside dicts, lists, namedtuples) into tensors; other values are
    kept (tuples become lists), as ``torch.utils.data.default_convert``.

    >>> default_convert(np.array([0, 1]))
    tensor([0, 1])
    """
    return _convert(data, _leaf())


def to_facade(obj: Any) -> Any:
    """Main process: replace every :class:`TensorArray` in a worker's result by a facade Tensor."""
    if isinstance(obj, TensorArray):
        return numpy_to_tensor(obj)
    if isinstance(obj, (str, bytes, np.ndarray)):
        return obj
    if type(obj) is list:
        return [to_facade(x) for x in obj]
    if type(obj) is dict:
        return {k: to_facade(v) for k, v in obj.items()}
    if isinstance(obj, tuple):
        if hasattr(obj, "_fields"):
            return type(obj)(*(to_facade(x) for x in obj))
        if type(obj) is tuple:
            return tuple(to_facade(x) for x in obj)
        if hasattr(type(obj), "n_fields"):  # torch.return_types.max & co. (a worker's x.max(dim))
            return type(obj)(tuple(to_facade(x) for x in obj))
        return obj
    if isinstance(obj, cabc.MutableMapping):
        clone = copy.copy(obj)
        clone.update({k: to_facade(v) for k, v in obj.items()})
        return clone
    if isinstance(obj, cabc.MutableSequence):
        clone = copy.copy(obj)
        for i, x in enumerate(obj):
            clone[i] = to_facade(x)
        return clone
    return obj
