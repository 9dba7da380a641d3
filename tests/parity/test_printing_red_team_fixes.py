"""Fixes from the printing / dtypes / NumPy-interop red team (2026-12): NumPy scalars as torch's argument parser
reads them, ``dtype.to_real`` / ``to_complex``, big-endian arrays, ``torch.testing.make_tensor`` /
``assert_allclose``, ``torch._tensor_str``'s options, ``Tensor.__format__`` of subclasses, ``optimizer.state`` as a
``defaultdict`` and the " (Triggered internally at ...)" of some warnings: each against real torch 2.13."""
import collections
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same, warnings_of


def _quiet(fn):
    def run(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(L)
    return run


# ---- 1. NumPy scalars: np.bool_ and np.complex64 (not a Python complex, unlike np.complex128) are floats -----------
_NP_SCALARS = {
    "int*bool_": lambda L: (L.tensor([1, 2]) * np.bool_(True), np.bool_(False) * L.tensor([1, 2])),
    "bool*bool_": lambda L: L.tensor([True, False]) * np.bool_(True),
    "bool&bool_": lambda L: L.tensor([True, False]) & np.bool_(True),
    "full_bool_": lambda L: L.full((2,), np.bool_(True)),
    "result_type": lambda L: [str(L.result_type(L.tensor([1]), s)) for s in (np.bool_(True), np.complex64(1j),
                                                                               np.complex128(1j), np.float16(1))],
    "clamp_pow": lambda L: (L.clamp(L.tensor([1, 2]), min=np.bool_(True)), L.pow(L.tensor([1, 2]), np.bool_(True))),
    "int*complex64": lambda L: L.tensor([1, 2]) * np.complex64(2 + 1j),
    "float+complex64": lambda L: (L.tensor([1., 2.]) + np.complex64(1j), L.tensor([1., 2.]) < np.complex64(2j)),
    "half*complex64": lambda L: L.tensor([1., 2.], dtype=L.float16) * np.complex64(3 + 1j),
    "alpha_complex64": lambda L: L.tensor([1., 2.]).add(1, alpha=np.complex64(2 + 1j)),
    "fill_complex64": lambda L: (L.full((2,), np.complex64(2 + 1j)), L.tensor([1, 2]).fill_(np.complex64(3 + 1j))),
    "complex128_stays": lambda L: L.tensor([1, 2]) * np.complex128(1j),
    "tensor_of_np": lambda L: (L.tensor(np.bool_(True)), L.tensor([np.bool_(True)]), L.tensor(np.float16(2))),
    "complex*complex64": lambda L: L.tensor([1 + 1j, 2]) * np.complex64(1j),  # (the real part: 0)
    "long double": lambda L: (L.tensor([1., 2.]) + np.longdouble(1.5), L.tensor([1., 2.]) * np.clongdouble(2 + 1j)),
}


@pytest.mark.parametrize("case", sorted(_NP_SCALARS))
def test_numpy_scalar_reading(case):
    """torch reads np.bool_ and np.complex64 with PyFloat_AsDouble: a float wrapped number (the complex one's real
    part); np.complex128 subclasses complex and stays complex; ``torch.tensor`` keeps the NumPy types."""
    same(_quiet(_NP_SCALARS[case]))


# ---- 2. dtype.to_real / to_complex ---------------------------------------------------------------------------------
def test_dtype_to_real_to_complex():
    names = ["float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "int8",
             "uint8", "int32", "int64", "uint16", "bool", "complex32", "complex64", "complex128"]

    def outcomes(L):
        out = []
        for n in names:
            for f in ("to_real", "to_complex"):
                try:
                    out.append(str(getattr(getattr(L, n), f)()).split(".")[-1])
                except RuntimeError as e:
                    out.append(str(e))
        return out
    assert outcomes(ft) == outcomes(torch)


# ---- 3. big-endian arrays ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda L: L.from_numpy(np.array([1.5, 2], dtype=">f8")), lambda L: L.tensor(np.array([1, 2], dtype=">i4")),
    lambda L: L.as_tensor(np.array([1.5, 2], dtype=">f4"), dtype=L.float64),
    lambda L: L.from_numpy(np.array([1], dtype=">i1")), lambda L: L.from_numpy(np.array(["a"], dtype=">U1")),
])
def test_big_endian_arrays(make):
    """A non-native byte order: torch's ValueError (a one-byte dtype has none; an unsupported type's TypeError
    first)."""
    same(make)


# ---- 4. torch.testing.make_tensor / assert_allclose ----------------------------------------------------------------
def _made(L, *shape, **kw):
    t = L.testing.make_tensor(*shape, device="cpu", **kw)
    v = L.view_as_real(t.detach()) if t.dtype.is_complex else t.detach()
    lo, hi = kw.get("low", -9), kw.get("high", 10)
    inside = bool(((v.double() >= lo) & (v.double() < hi)).all())
    return (tuple(t.shape), t.stride(), t.storage_offset(), str(t.dtype), t.requires_grad, inside,
            bool((t != 0).all()) if kw.get("exclude_zero") else None)


@pytest.mark.parametrize("kw", [
    dict(dtype="float32"), dict(dtype="complex64", low=-1, high=1), dict(dtype="int8", low=-1.5, high=1.5),
    dict(dtype="uint8"), dict(dtype="bool", requires_grad=False), dict(dtype="float64", requires_grad=True),
    dict(dtype="float32", noncontiguous=True), dict(dtype="int64", exclude_zero=True, low=0, high=2),
    dict(dtype="float16", low=-1e30, high=1e30), dict(dtype="bfloat16", shape=()), dict(dtype="float32", shape=[2, 3]),
    dict(dtype="float32", shape=(2, 3, 4, 5), memory_format="channels_last"),
    # refused
    dict(dtype="float32", low=2, high=1), dict(dtype="float32", low=float("nan")), dict(dtype="int32", low=1, high=1),
    dict(dtype="int64", requires_grad=True), dict(dtype="int4"), dict(dtype="float8_e4m3fn", low=1e10, high=1e11),
    dict(dtype="float32", noncontiguous=True, memory_format="channels_last"),
])
def test_make_tensor(kw):
    """Values are random: the shape, layout, dtype, flags and range are compared, and the errors."""
    kw = dict(kw)
    shape = kw.pop("shape", (3, 4))

    def made(L):
        args = {k: getattr(L, v) if k in ("dtype", "memory_format") else v for k, v in kw.items()}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = _made(L, shape, **args) if isinstance(shape, list) else _made(L, *shape, **args)
        return r, [(x.category.__name__, str(x.message)) for x in w]
    same(made)


def test_make_tensor_low_equals_high_warns():
    def made(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = L.testing.make_tensor(2, dtype=L.float32, device="cpu", low=1, high=1)
        return t, [(x.category.__name__, str(x.message), x.filename == __file__) for x in w]
    same(made)


@pytest.mark.parametrize("args", [
    ([1.], [2.], {}), ([1.], [1.00005], {}), ([1., 2.], [1., 2.5], {}), ([float("nan")], [float("nan")], {}),
    ([1.], [1.1], {"rtol": 0.2}), ([1.], [1.1], {"msg": "boom"}), (2, 3, {}), ([1.], 1.00005, {}),
])
def test_assert_allclose(args):
    """The deprecated wrapper: its FutureWarning (at the caller's line), its own tolerances, NaNs equal, no dtype
    check, numbers made tensors."""
    a, e, kw = args

    def check(L):
        a_ = L.tensor(a, dtype=L.float64 if kw.get("msg") else L.float32) if isinstance(a, list) else a
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                L.testing.assert_allclose(a_, e, **kw)
                r = "ok"
            except Exception as err:  # noqa: BLE001  (compared)
                r = (type(err).__name__, str(err))
        return r, [(x.category.__name__, str(x.message), x.filename == __file__) for x in w]
    same(check)


# ---- 5. torch._tensor_str ------------------------------------------------------------------------------------------
def test_tensor_str_print_options():
    """``vars(PRINT_OPTS)`` (a live dict), ``get_printoptions`` and the ``printoptions`` context manager."""
    def run(L):
        S = L._tensor_str
        out = [vars(S.PRINT_OPTS)]
        try:
            L.set_printoptions(profile="full", precision=2)
            out += [dict(vars(S.PRINT_OPTS)), S.get_printoptions()]
            with S.printoptions(precision=1, sci_mode=True):
                out += [str(L.tensor([1.2345])), S.PRINT_OPTS.precision]
            out += [str(L.tensor([1.2345])), repr(S.PRINT_OPTS)]
        finally:
            L.set_printoptions(profile="default")
        return out
    same(run)


# ---- 6. Tensor.__format__ ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", [
    lambda L: f"{L.nn.Parameter(L.tensor(2.5)):.2f}", lambda L: f"{L.nn.Parameter(L.tensor(2.5))}",
    lambda L: f"{L.nn.Parameter(L.ones(2)):.1f}", lambda L: f"{L.ones(2):.1f}",
    lambda L: (f"{L.tensor(2.5, requires_grad=True):.3f}", f"{L.tensor(3):>4}", f"{L.ones(2)}"),
    lambda L: (f"{L.empty((), device='meta')}", f"{L.empty((), device='meta'):.2f}"),
])
def test_format(fmt):
    """Only a plain 0-d (non-meta) Tensor formats its value; else ``object.__format__``: its str, or Python's
    TypeError naming the type."""
    same(fmt)


# ---- 7. optimizer.state is a defaultdict(dict) ---------------------------------------------------------------------
def test_optimizer_state_is_a_defaultdict():
    def run(L):
        L.manual_seed(0)
        m = L.nn.Linear(2, 1)
        o = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        out = [repr(o.state), isinstance(o.state, collections.defaultdict), o.state.default_factory]
        m(L.ones(1, 2)).sum().backward()
        o.step()
        out += [str(o.state).count("momentum_buffer"), repr(o.state).startswith("defaultdict(<class 'dict'>, {")]
        for c in (copy.copy(o.state), copy.deepcopy(o).state, pickle.loads(pickle.dumps(o)).state):
            out += [isinstance(c, collections.defaultdict), c.default_factory, len(c),
                    [v["momentum_buffer"] for v in c.values()]]
        o.step()  # (the state still steps after the copies)
        out += [o.state[m.weight]["momentum_buffer"], o.state[L.zeros(1)], len(o.state)]
        return out
    same(run)


# ---- 8. warnings with torch's " (Triggered internally at ...)" -----------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, 3, 4).T, lambda L: L.meshgrid(L.ones(2), L.ones(3)),
    lambda L: L.chain_matmul(L.eye(2), L.eye(2)), lambda L: L.triangular_solve(L.eye(2), L.eye(2)),
])
def test_warning_texts(call):
    """The texts word for word (torch's TORCH_WARN_ONCEs: compared with set_warn_always on, so that a warning an
    earlier test already showed shows again)."""
    assert same(lambda L: warnings_of(L, call))[1]


def test_t_and_meshgrid_warn_once():
    """Without warn_always: once per process (the keys discarded to see them again)."""
    from functorch_lite._warn import WARNED
    for key, call in (("T_not_2d", lambda: (ft.ones(2, 3, 4).T, ft.ones(2).T)),
                      ("meshgrid_indexing", lambda: (ft.meshgrid(ft.ones(2)), ft.meshgrid(ft.ones(2))))):
        WARNED.discard(key)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        assert len(w) == 1, (key, w)


@pytest.mark.parametrize("L", [torch, ft], ids=["torch", "functorch_lite"])
def test_complex64_scalar_in_an_op_warns_as_numpy_does(L):
    """The op reads the np.complex64 as a float, which NumPy warns about (ComplexWarning), at the user's call."""
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        r = L.tensor([1., 2.]) * np.complex64(3 + 1j)
    assert r.tolist() == [3.0, 6.0]
