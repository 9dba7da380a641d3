"""``torch.asarray`` (its own function now, no longer ``as_tensor``): aliasing, ``copy=``, ``dtype=``/``device=``
conversions and refusals, ``requires_grad=`` (set on ``obj`` itself where it is returned, the once-warning where it
is left unspecified), NumPy arrays and scalars, the buffer protocol, sequences and the argument checks, each
against real torch 2.13 (values, dtype, strides, requires_grad, grad_fn, ``is``, error, warnings)."""
import array
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import close, describe


def _leaf(t, rg=True):
    return t.tensor([1.0, 2.0], requires_grad=rg)


def _readonly(a):
    a.setflags(write=False)
    return a


class _DLPackOnly:
    """An array of another library: ``__dlpack__`` only (no buffer protocol)."""

    def __init__(self):
        self.a = np.array([1.0, 2.0], dtype=np.float32)

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class _ArrayInterface:
    @property
    def __array_interface__(self):
        return np.array([1.0, 2.0]).__array_interface__


def _default_meta(t):
    """Under ``set_default_device("meta")`` the default device is asarray's ``device`` (PyTorch's device mode): a
    CPU tensor or NumPy array is moved (refused with copy=False), unless ``device=`` says otherwise."""
    x = t.ones(2)
    t.set_default_device("meta")
    out = []
    try:
        for f in (lambda: t.asarray(np.array([1.0])).device, lambda: t.asarray(np.array([1]), dtype=t.float32).device,
                  lambda: t.asarray([1.0]).device, lambda: t.asarray(bytearray(4)).device, lambda: t.asarray(x) is x,
                  lambda: t.asarray(x, copy=False), lambda: t.asarray(x, device="cpu") is x):
            try:
                out.append(str(f()))
            except ValueError as e:
                out.append(str(e))
    finally:
        t.set_default_device(None)
    with t.device("meta"):
        out.append(str(t.asarray(x).device))
    return out + [t.asarray(x) is x]


CASES = {
    # a tensor: itself, a clone, a conversion, or the alias refusals
    "same": lambda t: (lambda x: (t.asarray(x) is x, x))(t.tensor([1.0, 2.0])),
    "same_copy_false": lambda t: (lambda x: t.asarray(x, copy=False) is x)(t.tensor([1.0, 2.0])),
    "same_dtype_copy_false": lambda t: (lambda x: t.asarray(x, dtype=t.float32, copy=False) is x)(t.ones(2)),
    "same_device_copy_false": lambda t: (lambda x: t.asarray(x, device="cpu", copy=False) is x)(t.ones(2)),
    "device_object": lambda t: (lambda x: t.asarray(x, device=t.device("cpu")) is x)(t.ones(2)),
    "copy_true": lambda t: (lambda x: (lambda r: (r is x, r))(t.asarray(x, copy=True)))(t.tensor([1.0, 2.0])),
    "copy_true_grad": lambda t: (lambda x: (t.asarray(x, copy=True), x))(_leaf(t)),
    "copy_true_grad_rg_false": lambda t: (lambda x: (t.asarray(x, copy=True, requires_grad=False), x))(_leaf(t)),
    "copy_true_transposed": lambda t: t.asarray(t.arange(6.0).reshape(2, 3).t(), copy=True),
    "dtype": lambda t: t.asarray(t.tensor([1.0, 2.5]), dtype=t.float64),
    "dtype_grad": lambda t: t.asarray(_leaf(t), dtype=t.float64),
    "dtype_copy_true": lambda t: t.asarray(_leaf(t), dtype=t.float64, copy=True),
    "dtype_rg_false": lambda t: t.asarray(_leaf(t), dtype=t.float64, requires_grad=False),
    "dtype_transposed": lambda t: t.asarray(t.arange(6.0).reshape(2, 3).t(), dtype=t.float64),
    "dtype_copy_false": lambda t: t.asarray(t.ones(2), dtype=t.float64, copy=False),
    "long_float_copy_false": lambda t: t.asarray(t.tensor([1, 2]), dtype=t.float32, copy=False),
    "half_copy_false": lambda t: t.asarray(t.ones(2), dtype=t.half, copy=False),
    "bf16_copy_false": lambda t: t.asarray(t.ones(2), dtype=t.bfloat16, copy=False),
    "int8_copy_false": lambda t: t.asarray(t.ones(2), dtype=t.int8, copy=False),
    "uint8_copy_false": lambda t: t.asarray(t.ones(2), dtype=t.uint8, copy=False),
    "bool_copy_false": lambda t: t.asarray(t.ones(2), dtype=t.bool, copy=False),
    "cfloat_copy_false": lambda t: t.asarray(t.ones(2), dtype=t.complex64, copy=False),
    "meta_copy_false": lambda t: t.asarray(t.ones(2), device="meta", copy=False),
    "meta": lambda t: (lambda r: (r.device.type, r.shape, str(r.dtype)))(t.asarray(t.ones(2), device="meta")),
    "meta_tensor": lambda t: (lambda x: t.asarray(x) is x)(t.ones(2, device="meta")),
    "default_device": _default_meta,
    "parameter": lambda t: (lambda p: t.asarray(p) is p)(t.nn.Parameter(t.ones(2))),
    # requires_grad: kept, set (on obj itself), cleared (obj too), a non-leaf kept or detached
    "grad_unspecified": lambda t: (lambda x: (t.asarray(x) is x, x))(_leaf(t)),
    "grad_rg_false": lambda t: (lambda x: (t.asarray(x, requires_grad=False) is x, x))(_leaf(t)),
    "leaf_rg_true": lambda t: (lambda x: (t.asarray(x, requires_grad=True) is x, x))(_leaf(t, False)),
    "nonleaf": lambda t: (lambda x: (t.asarray(x * 2), x))(_leaf(t)),
    "nonleaf_rg_false": lambda t: (lambda x: (lambda y: (t.asarray(y, requires_grad=False), y))(x * 2))(_leaf(t)),
    "nonleaf_rg_true": lambda t: t.asarray(_leaf(t) * 2, requires_grad=True),
    "view_of_leaf": lambda t: t.asarray(_leaf(t)[1:]),
    "int_rg_true": lambda t: t.asarray(t.tensor([1, 2]), requires_grad=True),
    "int_to_float_rg_true": lambda t: t.asarray(t.tensor([1, 2]), dtype=t.float32, requires_grad=True),
    "alias_refusal_warns": lambda t: t.asarray(_leaf(t), dtype=t.float64, copy=False),
    # sequences and scalars: torch.tensor's inference, never aliased
    "list_int": lambda t: t.asarray([1, 2]),
    "list_float": lambda t: t.asarray([1, 2.5]),
    "list_dtype": lambda t: t.asarray([1, 2], dtype=t.float64),
    "list_copy_true": lambda t: t.asarray([[1, 2], [3, 4]], copy=True),
    "list_copy_false": lambda t: t.asarray([1, 2], copy=False),
    "list_rg_true": lambda t: t.asarray([1.0, 2.0], requires_grad=True),
    "list_int_rg_true": lambda t: t.asarray([1, 2], requires_grad=True),
    "list_of_tensors": lambda t: t.asarray([t.tensor(1.0), t.tensor(2.0)]),
    "list_nested_tensor": lambda t: t.asarray([[t.tensor(1.0), 2.0]]),
    "tuple_nested": lambda t: t.asarray(((1, 2), (3, 4))),
    "range": lambda t: t.asarray(range(3)),
    "empty_list": lambda t: t.asarray([]),
    "ragged": lambda t: t.asarray([[1, 2], [3]]),
    "scalar_int": lambda t: t.asarray(3),
    "scalar_float": lambda t: t.asarray(3.5),
    "scalar_bool": lambda t: t.asarray(True),
    "scalar_complex": lambda t: t.asarray(1 + 2j),
    "scalar_copy_false": lambda t: t.asarray(3.5, copy=False),
    "big_int": lambda t: t.asarray([2 ** 63]),
    "big_int_float": lambda t: t.asarray([2 ** 63], dtype=t.float32),
    "int8_overflow": lambda t: t.asarray([300], dtype=t.int8),
    "float_to_long": lambda t: t.asarray([1.5], dtype=t.int64),
    "str": lambda t: t.asarray("ab"),
    "none": lambda t: t.asarray(None),
    "array_interface_only": lambda t: t.asarray(_ArrayInterface()),
    "dlpack_object": lambda t: t.asarray(_DLPackOnly()),
    "dlpack_object_dtype": lambda t: t.asarray(_DLPackOnly(), dtype=t.float64),
    "dlpack_object_copy_false": lambda t: t.asarray(_DLPackOnly(), copy=False),
    "default_dtype": lambda t: (t.set_default_dtype(t.float64), t.asarray([1.5]), t.asarray(bytearray(8)),
                                t.set_default_dtype(t.float32))[1:3],
    # NumPy arrays and scalars
    "np_int": lambda t: t.asarray(np.array([1, 2])),
    "np_float32": lambda t: t.asarray(np.array([1.0, 2.0], dtype=np.float32)),
    "np_uint16": lambda t: t.asarray(np.array([1, 2], dtype=np.uint16)),
    "np_bool": lambda t: t.asarray(np.array([True, False])),
    "np_dtype": lambda t: t.asarray(np.array([1, 2]), dtype=t.float32),
    "np_f16_to_bf16": lambda t: t.asarray(np.array([1.5], dtype=np.float16), dtype=t.bfloat16),
    "np_dtype_copy_false": lambda t: t.asarray(np.array([1, 2]), dtype=t.float32, copy=False),
    "np_copy_false": lambda t: t.asarray(np.array([1, 2]), copy=False),
    "np_copy_true_rg_true": lambda t: t.asarray(np.array([1.0, 2.0]), copy=True, requires_grad=True),
    "np_rg_true": lambda t: t.asarray(np.array([1.0, 2.0]), requires_grad=True),
    "np_int_rg_true": lambda t: t.asarray(np.array([1, 2]), requires_grad=True),
    "np_transposed": lambda t: t.asarray(np.arange(6.0).reshape(2, 3).T),
    "np_transposed_copy": lambda t: t.asarray(np.arange(6.0).reshape(2, 3).T, copy=True),
    "np_transposed_dtype": lambda t: t.asarray(np.arange(6.0).reshape(2, 3).T, dtype=t.float32),
    "np_strided": lambda t: t.asarray(np.arange(6.0)[::2]),
    "np_strided_copy": lambda t: t.asarray(np.arange(6.0)[::2], copy=True),
    "np_negative_stride": lambda t: t.asarray(np.arange(4)[::-1]),
    "np_negative_stride_dtype": lambda t: t.asarray(np.arange(4)[::-1], dtype=t.float32),
    "np_negative_stride_copy": lambda t: t.asarray(np.arange(4)[::-1], copy=True),
    "np_object": lambda t: t.asarray(np.array(["a"], dtype=object)),
    "np_str": lambda t: t.asarray(np.array(["a"])),
    "np_0d": lambda t: t.asarray(np.array(2.5)),
    "np_0d_copy_false": lambda t: t.asarray(np.array(2.5), copy=False),
    "np_scalar": lambda t: t.asarray(np.float64(2.5)),
    "np_scalar_int32": lambda t: t.asarray(np.int32(2)),
    "np_scalar_bool": lambda t: t.asarray(np.bool_(True)),
    "np_scalar_rg_true": lambda t: t.asarray(np.float32(1.0), requires_grad=True),
    "np_scalar_dtype": lambda t: t.asarray(np.float64(2.5), dtype=t.float32),
    "np_scalar_copy_false": lambda t: t.asarray(np.float64(2.5), copy=False),
    "np_readonly": lambda t: t.asarray(_readonly(np.array([1.0, 2.0]))),
    "np_readonly_copy": lambda t: t.asarray(_readonly(np.array([1.0, 2.0])), copy=True),
    "np_readonly_dtype": lambda t: t.asarray(_readonly(np.array([1.0, 2.0])), dtype=t.float32),
    "np_readonly_meta": lambda t: t.asarray(_readonly(np.array([1.0, 2.0])), device="meta").shape,
    "np_list": lambda t: t.asarray([np.array([1, 2]), np.array([3, 4])]),
    # the buffer protocol: bytes reinterpreted in dtype (the default float dtype when none)
    "bytearray": lambda t: t.asarray(bytearray(b"\x00\x00\x80\x3f")),
    "bytearray_uint8": lambda t: t.asarray(bytearray(b"\x01\x02"), dtype=t.uint8),
    "bytearray_bad_length": lambda t: t.asarray(bytearray(b"\x01\x02")),
    "bytearray_empty": lambda t: t.asarray(bytearray()),
    "bytearray_rg_true": lambda t: t.asarray(bytearray(4), requires_grad=True),
    "bytearray_int_rg_true": lambda t: t.asarray(bytearray(8), dtype=t.int32, requires_grad=True),
    "bytearray_copy_true": lambda t: t.asarray(bytearray(4), copy=True),
    "bytearray_copy_false": lambda t: t.asarray(bytearray(4), copy=False),
    "array_int": lambda t: t.asarray(array.array("i", [1, 2])),
    "array_int_dtype": lambda t: t.asarray(array.array("i", [1, 2]), dtype=t.int32),
    "array_double": lambda t: t.asarray(array.array("d", [1.0, 2.0])),
    "memoryview": lambda t: t.asarray(memoryview(bytearray(8))),
    # the argument parser
    "positional_dtype": lambda t: t.asarray([1], t.float32),
    "bad_keyword": lambda t: t.asarray([1], foo=1),
    "dtype_str": lambda t: t.asarray([1], dtype="float32"),
    "dtype_numpy": lambda t: t.asarray([1], dtype=np.float32),
    "copy_int": lambda t: t.asarray([1], copy=1),
    "copy_numpy_bool": lambda t: t.asarray([1.0], copy=np.bool_(True)),
    "requires_grad_int": lambda t: t.asarray([1.0], requires_grad=1),
}


def _outcome(lib, fn):
    """``describe``d result (or error type and message) and the warnings' categories and messages, every
    once-warning shown (``set_warn_always``)."""
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                res = ("ok", describe(fn(lib)))
            except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
                res = (type(e).__name__, str(e))
    finally:
        lib.set_warn_always(False)
    return res, [(x.category.__name__, str(x.message).split(" (Triggered internally")[0]) for x in w]


# torch.tensor's own path warns twice for these under set_warn_always (once otherwise): compared once each
_TWICE = {"np_list"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_asarray(case):
    got, want = _outcome(ft, CASES[case]), _outcome(torch, CASES[case])
    if case in _TWICE:
        got, want = [(r, sorted(set(w))) for r, w in (got, want)]
    assert close(got, want), (got, want)


def test_requires_grad_warning_once():
    """Without ``set_warn_always``: the unspecified-requires_grad warning once per process (TORCH_WARN_ONCE)."""
    from functorch_lite import _warn
    from functorch_lite.ops.creation import _ASARRAY_RG
    _warn.WARNED.discard(_ASARRAY_RG)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x = ft.ones(2, requires_grad=True)
        ft.asarray(x)
        ft.asarray(x * 2)
        ft.asarray(x, copy=True)
    assert [str(a.message) for a in w] == [_ASARRAY_RG]
    assert w[0].filename == __file__


def test_bytes_values():
    """A read-only buffer (bytes): its values as torch reads them (frombuffer's not-writable warning aside)."""
    def fn(t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return t.asarray(b"\x00\x00\x80\x3f\x00\x00\x00\x40")
    assert describe(fn(ft)) == describe(fn(torch))


def test_aliased_tensor_tracks_obj():
    """The returned tensor is ``obj`` itself: an in-place update shows in both, and its gradient flows to ``obj``."""
    for lib in (ft, torch):
        x = lib.tensor([1.0, 2.0])
        lib.asarray(x).add_(1)
        assert x.tolist() == [2.0, 3.0]
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.asarray(w * 3, requires_grad=True)
        y.sum().backward()
        assert w.grad.tolist() == [3.0, 3.0]
