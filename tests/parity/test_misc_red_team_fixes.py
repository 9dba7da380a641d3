"""Fixes from the 2026-12-06 red teams (NLP, indexing, GAN scripts) that live outside the op families with their
own test files: each against real torch 2.13."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same_rounded, warnings_of

_OUT_CASES = {
    "cat": lambda t, o: t.cat([t.ones(2), t.ones(2)], out=o),
    "concat": lambda t, o: t.concat([t.ones(2), t.ones(2)], out=o),
    "concatenate": lambda t, o: t.concatenate([t.ones(2), t.ones(2)], out=o),
    "cat_bool": lambda t, o: t.cat([t.ones(2, dtype=t.long), t.ones(2, dtype=t.long)], out=o.to(t.bool)),
    "cat_half": lambda t, o: t.cat([t.ones(2), t.ones(2)], out=o.to(t.float16)),
    "stack": lambda t, o: t.stack([t.ones(2), t.ones(2)], out=o.view(2, 2)),
    "vstack": lambda t, o: t.vstack([t.ones(2), t.ones(2)], out=o.view(2, 2)),
    "hstack": lambda t, o: t.hstack([t.ones(2), t.ones(2)], out=o),
    "dstack": lambda t, o: t.dstack([t.ones(2), t.ones(2)], out=o.view(1, 2, 2)),
    "column_stack": lambda t, o: t.column_stack([t.ones(2), t.ones(2)], out=o.view(2, 2)),
    "add": lambda t, o: t.add(t.ones(4), 1, out=o),
}


@pytest.mark.parametrize("case", sorted(_OUT_CASES))
def test_out_dtype_cast_refusal(case):
    """cat / stack refuse an out= of a dtype the result can't be cast to with cat's own TypeError; other ops keep
    the RuntimeError of the out= rule."""
    fn = _OUT_CASES[case]
    kind, _ = same_rounded(lambda t: fn(t, t.empty(4, dtype=t.long)), torch, ft)
    assert (kind != "ok") == (case != "cat_half")


def _nonzero_layouts(t):
    m = t.tensor([[1, 0, 1], [1, 1, 0], [0, 0, 1]]).bool()
    n = m.nonzero()
    out = [n, n.stride(), n.is_contiguous(), t.argwhere(m).stride(), n.T.is_contiguous(), n[:, 0].is_contiguous()]
    out += [(x.stride(), x.storage_offset()) for x in m.nonzero(as_tuple=True) + t.where(m)]
    out += [t.nonzero(x).stride() for x in (t.tensor([1, 0, 2]), t.tensor(3), t.zeros(2, 3))]
    out += [t.nonzero_static(m, size=6).stride(), t.ones(3, 3)[n.unbind(1)]]
    for o in (t.empty(5, 2, dtype=t.long), t.empty(2, 5, dtype=t.long).t(), t.empty(0, dtype=t.long)):
        out += [t.nonzero(m, out=o) is o, o, o.stride()]
    return out


def test_nonzero_result_layout():
    """nonzero / argwhere / where(cond) coordinates laid out as torch's CPU kernel writes them (strides (1, n));
    an out= resized by the call is laid out so too."""
    same_rounded(_nonzero_layouts, torch, ft)
    same_rounded(lambda t: t.tensor([[1, 0], [1, 1]]).nonzero().view(-1), torch, ft)  # (torch: not viewable)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_round_decimals_bits(dtype):
    """round(decimals=d) as torch's round_decimals: x * 10**d rounded, divided by 10**d (XLA's reciprocal
    multiply was one ulp off: 0.78237 -> 0.7823999524 where torch gives 0.7824000120)."""
    import numpy as np
    rng = np.random.default_rng(0)
    a = rng.standard_normal(500) * 10.0 ** rng.integers(-3, 4, 500)
    for d in (-2, -1, 1, 2, 4, 6):
        t = torch.tensor(a).to(getattr(torch, dtype)).round(decimals=d)
        f = ft.tensor(a).to(getattr(ft, dtype)).round(decimals=d)
        assert str(f.dtype) == str(t.dtype)
        np.testing.assert_array_equal(f.double().numpy(), t.double().numpy(), err_msg=f"decimals={d}")


_MATMUL_MIXED = {
    "3x2": lambda t: t.matmul(t.ones(2, 3, 8), t.ones(8, 4, dtype=t.bfloat16)),
    "3x2_transposed": lambda t: t.matmul(t.ones(3, 2, 8).transpose(0, 1), t.ones(8, 4, dtype=t.bfloat16)),
    "3x2_transposed_b_grad": lambda t: t.matmul(t.ones(3, 2, 8).transpose(0, 1),
                                                t.ones(8, 4, dtype=t.bfloat16, requires_grad=True)),
    "3x2_empty": lambda t: t.matmul(t.ones(0, 2, 8).transpose(0, 1), t.ones(8, 4, dtype=t.bfloat16)),
    "4x2": lambda t: t.ones(2, 2, 3, 8) @ t.ones(8, 4, dtype=t.bfloat16),
    "4x2_transposed": lambda t: t.matmul(t.ones(2, 3, 2, 8).transpose(1, 2), t.ones(8, 4, dtype=t.bfloat16)),
    "3x1": lambda t: t.matmul(t.ones(2, 3, 8), t.ones(8, dtype=t.bfloat16)),
    "3x1_transposed": lambda t: t.matmul(t.ones(3, 2, 8).transpose(0, 1), t.ones(8, dtype=t.bfloat16)),
    "3x2_double": lambda t: t.matmul(t.ones(2, 3, 8, dtype=t.float64), t.ones(8, 4)),
    "2x3": lambda t: t.matmul(t.ones(3, 8), t.ones(2, 8, 4, dtype=t.bfloat16)),
    "3x3": lambda t: t.matmul(t.ones(2, 3, 8), t.ones(2, 8, 4, dtype=t.bfloat16)),
}


@pytest.mark.parametrize("case", sorted(_MATMUL_MIXED))
def test_matmul_mixed_dtype_messages(case):
    """A batch @ matrix / vector of two dtypes: torch's folded mm / mv message, or the bmm one when its strides
    don't fold (linalg.folds_into_mm)."""
    kind, _ = same_rounded(_MATMUL_MIXED[case], torch, ft)
    assert kind == "RuntimeError"


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_linspace_bits(dtype):
    """linspace as torch's CPU kernel computes it (one fused multiply-add per element from the nearer end; half
    types rounding every operation): linspace(-1, 1, 11)[5] is -1.49e-08 in torch, it was 0 here."""
    import numpy as np
    rng = np.random.default_rng(5)
    for k in range(60):
        s, e = rng.standard_normal(2) * 10.0 ** rng.integers(-3, 4, 2)
        n = int(rng.choice([1, 2, 3, 8, 11, 33, 257, 1000, 5001]))
        t = torch.linspace(float(s), float(e), n, dtype=getattr(torch, dtype)).tolist()
        f = ft.linspace(float(s), float(e), n, dtype=getattr(ft, dtype)).tolist()
        assert f == t, (s, e, n)
    assert ft.linspace(-1, 1, 11)[5].item() == torch.linspace(-1, 1, 11)[5].item() != 0


def test_negative_stride_ndarray_and_new_type_names():
    """tensor / Tensor / FloatTensor refuse a negative-stride ndarray as torch (they copied it); new()'s
    non-sequence error names numpy's type as torch does."""
    import numpy as np
    for a in (np.arange(4)[::-1], np.arange(6).reshape(2, 3)[:, ::-1]):
        for name in ("tensor", "as_tensor", "Tensor", "FloatTensor"):
            kind, _ = same_rounded(lambda t: getattr(t, name)(a), torch, ft)
            assert kind == "ValueError"
    same_rounded(lambda t: t.tensor([np.arange(3)[::-1]]), torch, ft)  # (a list of them: element by element)
    same_rounded(lambda t: t.ones(2).new(np.float32(3)), torch, ft)
    same_rounded(lambda t: t.Tensor(np.float32(3)), torch, ft)


def test_scalar_conversion_warns_before_the_element_count_check():
    """float() of a multi-element tensor requiring grad: torch's requires_grad warning comes first, then the
    ValueError (set_warn_always makes the once-per-process warning observable here)."""
    import warnings

    def run(t):
        y = t.ones(2, requires_grad=True) * 2
        t.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    float(y)
                except ValueError as e:
                    err = str(e)
            return err, [str(x.message) for x in w]
        finally:
            t.set_warn_always(False)
    assert run(ft) == run(torch)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_logsumexp_rounds_as_torch(dtype):
    """float16 / bfloat16 logsumexp and its gradient round every op of torch's decomposition to the type."""
    import numpy as np
    rng = np.random.default_rng(0)
    for k in range(12):
        shape = tuple(int(x) for x in rng.integers(1, 7, int(rng.integers(1, 4))))
        a = rng.standard_normal(shape) * 10.0 ** rng.integers(-1, 2)
        d = int(rng.integers(0, len(shape)))

        def f(t, keep=bool(k % 2)):
            x = t.tensor(a, dtype=getattr(t, dtype), requires_grad=True)
            r = t.logsumexp(x, d, keepdim=keep)
            r.sum().backward()
            return r.float(), x.grad.float()
        same_rounded(f, torch, ft)
        t_out, f_out = (f(m) for m in (torch, ft))
        assert all(u.tolist() == v.tolist() for u, v in zip(t_out, f_out))
    same_rounded(lambda t: t.logsumexp(t.tensor([[float("-inf")] * 2, [float("inf"), 1.]], dtype=getattr(t, dtype)),
                                       1).float(), torch, ft)


_PY_TYPES = {
    "to_float": lambda t: t.ones(2).to(float), "to_complex": lambda t: t.ones(2).to(complex),
    "to_int": lambda t: t.ones(2).to(int), "to_bool": lambda t: t.ones(2).to(bool),
    "zeros_float": lambda t: t.zeros(2, dtype=float), "tensor_float": lambda t: t.tensor([1, 2], dtype=float),
    "ones_complex": lambda t: t.ones(2, dtype=complex), "arange_float": lambda t: t.arange(3, dtype=float),
    "full_float": lambda t: t.full((2,), 1, dtype=float), "sum_float": lambda t: t.ones(2).sum(dtype=float),
    "linspace_float": lambda t: t.linspace(0, 1, 3, dtype=float), "new_zeros": lambda t: t.ones(2).new_zeros(2, dtype=float),
    "finfo_float": lambda t: t.finfo(float).eps,
    "set_default_float": lambda t: t.set_default_dtype(float),
    "set_default_str": lambda t: t.set_default_dtype("float64"),
}


@pytest.mark.parametrize("case", sorted(_PY_TYPES))
def test_python_types_as_dtypes(case):
    """Python's float / complex as a dtype are float64 / complex128 (the C types behind them), whatever the default
    dtype, as torch's argument parser reads them (they were the default dtype here); set_default_dtype takes only a
    dtype object."""
    def f(t):
        r = _PY_TYPES[case](t)
        return str(r.dtype).split(".")[-1] if hasattr(r, "dtype") else r
    same_rounded(f, torch, ft)


VIEW_COMPLEX = {
    "float32 as complex64": lambda L: L.arange(8.).view(L.complex64),
    "float64 as complex128": lambda L: L.arange(4, dtype=L.float64).view(L.complex128),
    "2-D float32 as complex64": lambda L: L.arange(6.).reshape(3, 2).view(L.complex64),
    "int8 as complex64": lambda L: L.arange(8, dtype=L.int8).view(L.complex64),
    "complex64 as float32": lambda L: L.tensor([1 + 2j, 3 + 4j, -0.5 - 1.5j]).view(L.float32),
    "complex64 as int32": lambda L: L.tensor([1 + 2j, -0.5 - 1.5j]).view(L.int32),
    "complex64 as float64": lambda L: L.tensor([1 + 2j, -0.5 - 1.5j]).view(L.float64),
    "complex64 as uint8": lambda L: L.tensor([1 + 2j]).view(L.uint8),
    "complex64 as float16": lambda L: L.tensor([1 + 2j, 3 + 4j]).view(L.float16),
    "complex128 as complex64": lambda L: L.tensor([1 + 2j, 3 + 4j], dtype=L.complex128).view(L.complex64),
    "complex64 as complex128, odd size": lambda L: L.tensor([1 + 2j, 3 + 4j, 5j]).view(L.complex128),
    "a write through the view": lambda L: _write_complex_view(L),
}


def _write_complex_view(L):
    x = L.zeros(4)
    y = x.view(L.complex64)
    y[0] = 5 + 6j
    return x, y


@pytest.mark.parametrize("case", list(VIEW_COMPLEX))
def test_view_between_real_and_complex_dtypes(case):
    """view(dtype) to or from a complex dtype reinterprets the (real, imag) pairs' bytes, as torch (lax casts
    complex only to itself: it raised when the view was read)."""
    same_rounded(VIEW_COMPLEX[case], torch, ft)


_I = np.int64
NUMPY_INT_ARGS = {  # (a size from np.arange / a grid search: torch reads any integer through __index__)
    "unfold": lambda L: L.arange(10.).unfold(0, _I(3), _I(1)),
    "unflatten": lambda L: L.arange(10.).unflatten(0, (_I(2), _I(5))),
    "diagonal": lambda L: L.ones(3, 3).diagonal(_I(1)),
    "chunk": lambda L: L.arange(10.).chunk(_I(3)),
    "tensor_split": lambda L: L.arange(10.).tensor_split(_I(3)),
    "movedim": lambda L: L.ones(2, 3, 4).movedim(_I(0), _I(2)),
    "split (torch's parser refuses it)": lambda L: L.arange(10.).split(_I(3)),
    "LayerNorm": lambda L: L.nn.LayerNorm(_I(4))(L.ones(2, 4)),
    "RMSNorm": lambda L: L.nn.RMSNorm(_I(4))(L.ones(2, 4)),
    "Size (torch keeps NumPy integers there)": lambda L: L.Size([_I(2), 3]),
}


@pytest.mark.parametrize("case", list(NUMPY_INT_ARGS))
def test_numpy_integer_sizes(case):
    """NumPy integers as sizes, counts and dims: accepted, and the result's sizes are Python ints (they were
    np.int64 inside torch.Size: json.dumps(list(x.shape)) raised) or refused where torch's parser refuses them."""
    def shapes(L):
        r = NUMPY_INT_ARGS[case](L)
        pieces = r if type(r) is tuple else [r]  # (chunk / tensor_split: a tuple of tensors; Size: itself)
        return [[(type(n).__name__, n) for n in (p if isinstance(p, L.Size) else p.shape)] for p in pieces]
    same_rounded(shapes, torch, ft)


ALPHA = {  # (torch checks alpha's type against the result's whatever its value: 1.0 and True included)
    "float alpha 1.0, integer result": lambda L: L.tensor([1, 2]).add(1, alpha=1.0),
    "np.float32 alpha, integer result": lambda L: L.tensor([1, 2]).sub(1, alpha=np.float32(1)),
    "bool alpha, integer result": lambda L: L.tensor([1, 2]).add(1, alpha=True),
    "bool alpha, float result": lambda L: L.tensor([1., 2.]).add(1, alpha=True),
    "bool alpha, bool result": lambda L: L.tensor([True, False]).add(L.tensor([True, True]), alpha=True),
    "rsub": lambda L: L.rsub(L.tensor([1, 2]), 1, alpha=1.0),
}


@pytest.mark.parametrize("case", list(ALPHA))
def test_alpha_checked_whatever_its_value(case):
    same_rounded(ALPHA[case], torch, ft)


_XI = [[1, 5, 2], [7, 0, 3]]
REDUCTION_OUT = {  # (dtype= and out= of another dtype: torch's exact-dtype error; out= alone: its dtype is the result's)
    "cumsum dtype and out": lambda L: L.cumsum(L.tensor(_XI), 1, dtype=L.int64, out=L.empty(2, 3, dtype=L.int32)),
    "cumsum out alone": lambda L: L.cumsum(L.tensor(_XI), 1, out=L.empty(2, 3, dtype=L.int32)),
    "cumprod dtype and out": lambda L: L.cumprod(L.tensor(_XI).float(), 1, dtype=L.float64, out=L.empty(2, 3)),
    "sum dtype and out": lambda L: L.sum(L.tensor(_XI), 1, dtype=L.int64, out=L.empty(2, dtype=L.int32)),
    "sum out alone": lambda L: L.sum(L.tensor(_XI), 1, out=L.empty(2, dtype=L.float64)),
    "prod dtype and out": lambda L: L.prod(L.tensor(_XI), 1, dtype=L.int64, out=L.empty(2, dtype=L.int16)),
}


@pytest.mark.parametrize("case", list(REDUCTION_OUT))
def test_reduction_dtype_and_out(case):
    same_rounded(REDUCTION_OUT[case], torch, ft)


_INF = float("inf")
COMPLEX_ADD = {  # (torch's complex kernel is ``a + alpha * b`` with a complex alpha, 1 included: an inf part of b
    # makes a nan part; sub is ``a + (-alpha) * b``, which fixes the signs of zeros)
    "add": lambda L: L.add(L.tensor([1 + 0j, 2 - 1j, 0j]), L.tensor([complex(_INF, 0), complex(0, _INF), -0j])),
    "sub": lambda L: L.tensor([1 + 0j, 0j, complex(0, -0.0)]) - L.tensor([complex(-_INF, 2), 1j, 0j]),
    "add alpha": lambda L: L.add(L.tensor([1j]), L.tensor([complex(_INF, 0)]), alpha=2),
    "rsub": lambda L: L.rsub(L.tensor([complex(0, _INF), 0j]), L.tensor([1 + 1j, complex(0, -0.0)])),
    "float + complex": lambda L: L.tensor([1.0, -0.0]) + L.tensor([complex(_INF, 0), 0j]),
    "complex + inf scalar": lambda L: L.tensor([1 + 1j]) + complex(_INF, 0),
    "in-place": lambda L: L.tensor([2j, 1 + 0j]).sub_(L.tensor([complex(_INF, 1), 0j]), alpha=-1.5),
}


@pytest.mark.parametrize("case", list(COMPLEX_ADD))
def test_complex_add_sub_as_torch_forms_them(case):
    same_rounded(lambda L: [(repr(z.real), repr(z.imag)) for z in COMPLEX_ADD[case](L).tolist()], torch, ft)  # (nan
    # and the signs of zeros compared as text)


SOFTMAX_DTYPE = {  # (the input is cast to dtype= first: an integral, bool or complex dtype has no kernel)
    "softmax int64": lambda L: L.softmax(L.tensor([1.0, 2.0]), 0, dtype=L.int64),
    "log_softmax int32": lambda L: L.log_softmax(L.tensor([[1.0, 2.0]]), 0, dtype=L.int32),
    "F.softmax bool": lambda L: L.nn.functional.softmax(L.tensor([[1.0, 2.0]]), 1, dtype=L.bool),
    "softmin uint8": lambda L: L.nn.functional.softmin(L.tensor([1.0, 2.0]), 0, dtype=L.uint8),
    "method complex": lambda L: L.tensor([1.0, 2.0]).softmax(0, dtype=L.complex64),
    "float64 still works": lambda L: L.tensor([1, 2]).log_softmax(0, dtype=L.float64),
}


@pytest.mark.parametrize("case", list(SOFTMAX_DTYPE))
def test_softmax_with_a_non_float_dtype(case):
    same_rounded(SOFTMAX_DTYPE[case], torch, ft)


UINT64_LEAVES = {  # (a uint64 tensor stores Python leaves through PyLong_AsUnsignedLongLong: Python ints only)
    "np.uint64 scalar": lambda L: L.tensor(np.uint64(3)),
    "np.uint64 in a list": lambda L: L.tensor([[np.uint64(3)]]),
    "np.uint32 as uint64": lambda L: L.tensor(np.uint32(7), dtype=L.uint64),
    "float as uint64": lambda L: L.tensor([3.0, 1], dtype=L.uint64),
    "tensor leaf as uint64": lambda L: L.tensor([L.tensor(3), 1], dtype=L.uint64),
    "negative int as uint64": lambda L: L.tensor([-1], dtype=L.uint64),
    "as_tensor": lambda L: L.as_tensor([np.uint64(3)]),
    "Python ints and bools": lambda L: L.tensor([True, 2 ** 64 - 1], dtype=L.uint64),
    "np.uint64 as int64": lambda L: L.tensor(np.uint64(3), dtype=L.int64),
    "ndarray": lambda L: L.tensor(np.array([3], np.uint64)),
}


@pytest.mark.parametrize("case", list(UINT64_LEAVES))
def test_uint64_tensor_from_python_leaves(case):
    same_rounded(lambda L: (lambda t: (str(t.dtype), t.tolist()))(UINT64_LEAVES[case](L)), torch, ft)


def test_the_first_compile_turns_distribution_validation_off():
    """torch's Dynamo patches the process at its first compile: Distribution's default validate_args is False from
    then on (a later set_default_validate_args(True) stays; compile(disable=True) patches nothing)."""
    def states(L):
        D = L.distributions
        seen = [D.Distribution._validate_args]
        L.compile(lambda x: x + 1, disable=True)
        seen.append(D.Distribution._validate_args)
        L.compile(lambda x: x + 1)
        seen += [D.Distribution._validate_args, float(D.Normal(0.0, -1.0).scale)]
        D.Distribution.set_default_validate_args(True)
        L.compile(lambda x: x + 2)
        return seen + [D.Distribution._validate_args]
    # (each library patches once per process: an earlier test's compile must not count as the first)
    torch._dynamo.eval_frame.TorchPatcher.patch.cache_clear()
    ft._compile._PATCHED.clear()
    assert states(torch) == states(ft) == [True, True, False, -1.0, True]


_XF = [[1.0, 3.0, 2.0], [0.0, -1.0, 5.0]]
CUM_OUT = {  # (logcumsumexp / cummax / cummin check out='s dtype with their own message; cumsum_ / cumprod_ refuse
    # a dtype= other than self's)
    "logcumsumexp out double": lambda L: L.logcumsumexp(L.tensor(_XF), 1, out=L.empty(2, 3, dtype=L.float64)),
    "cummax values out": lambda L: L.cummax(L.tensor(_XF), 1, out=(L.empty(2, 3, dtype=L.float64),
                                                                   L.empty(2, 3, dtype=L.long))),
    "cummin indices out": lambda L: L.cummin(L.tensor(_XF), 1, out=(L.empty(2, 3), L.empty(2, 3, dtype=L.int32))),
    "cummax out requires grad": lambda L: L.cummax(L.tensor(_XF, requires_grad=True), 1,
                                                   out=(L.empty(2, 3), L.empty(2, 3, dtype=L.long))),
    "cummin out": lambda L: L.cummin(L.tensor(_XF), 1, out=(L.empty(2, 3), L.empty(2, 3, dtype=L.long))),
    "cumsum_ dtype": lambda L: L.tensor(_XF).cumsum_(1, dtype=L.float64),
    "cumprod_ int dtype": lambda L: L.tensor([[1, 2]]).cumprod_(1, dtype=L.int32),
    "cumsum_ same dtype": lambda L: L.tensor(_XF).cumsum_(1, dtype=L.float32),
    "abs_ complex": lambda L: L.tensor([1j]).abs_(),
}


@pytest.mark.parametrize("case", list(CUM_OUT))
def test_cumulative_out_and_in_place_dtype(case):
    same_rounded(CUM_OUT[case], torch, ft)


VMAP_READS = {  # (a tensor vmap batches has no storage in torch; its reads raise plain RuntimeErrors)
    "tolist": lambda a: a.tolist(),
    "numpy": lambda a: a.numpy(),
    "data_ptr": lambda a: a.data_ptr(),
    "untyped_storage": lambda a: a.untyped_storage(),
    "item": lambda a: a.sum().item(),
    "bool": lambda a: bool(a.sum()),
}


@pytest.mark.parametrize("case", list(VMAP_READS))
def test_reading_a_batched_tensor_under_vmap(case):
    def run(L):
        L.func.vmap(lambda a: (VMAP_READS[case](a), a)[1])(L.arange(6.0).view(2, 3))
    t, f = _raised(run, torch), _raised(run, ft)
    assert (type(f).__name__, str(f)) == (type(t).__name__, str(t))


def _raised(fn, L):
    try:
        fn(L)
    except Exception as e:  # noqa: BLE001
        return e


@pytest.mark.parametrize("name", ["T", "mT", "H", "mH"])
def test_0d_transpose_warnings_carry_torchs_suffix(name):
    assert warnings_of(torch, lambda L: getattr(L.tensor(2.0), name)) == \
        warnings_of(ft, lambda L: getattr(L.tensor(2.0), name))


_Y = [[3.0, 0.0], [0.0, 5.0]]
OUT_FORMS = {  # (out= dtype errors with each kernel's own message; out= calls return torch's ``<name>_out`` types)
    "searchsorted int32 out": lambda L: L.searchsorted(L.tensor([1.0, 3.0]), L.tensor([2.0]),
                                                       out=L.empty(1, dtype=L.int32)),
    "searchsorted out_int32, long out": lambda L: L.searchsorted(L.tensor([1.0, 3.0]), L.tensor([2.0]), out_int32=True,
                                                                 out=L.empty(1, dtype=L.int64)),
    "nonzero float out": lambda L: L.nonzero(L.tensor(_Y), out=L.empty(2, 2)),
    "masked_select double out": lambda L: L.masked_select(L.tensor(_Y), L.tensor(_Y) > 0,
                                                          out=L.empty(2, dtype=L.float64)),
    "frexp out": lambda L: L.frexp(L.tensor(_Y), out=(L.empty(2, 2), L.empty(2, 2, dtype=L.int32))),
    "frexp mantissa out": lambda L: L.frexp(L.tensor(_Y), out=(L.empty(2, 2, dtype=L.float64),
                                                              L.empty(2, 2, dtype=L.int32))),
    "frexp exponent out": lambda L: L.frexp(L.tensor(_Y), out=(L.empty(2, 2), L.empty(2, 2, dtype=L.int64))),
    **{f"{n} out type": (lambda n: lambda L: getattr(L, n)(L.tensor(_Y), 0, out=(L.empty(2), L.empty(
        2, dtype=L.long))))(n) for n in ("mode", "nanmedian")},
    "kthvalue out type": lambda L: L.kthvalue(L.tensor(_Y), 1, 0, out=(L.empty(2), L.empty(2, dtype=L.long))),
    "cummax out type": lambda L: L.cummax(L.tensor(_Y), 0, out=(L.empty(2, 2), L.empty(2, 2, dtype=L.long))),
}


@pytest.mark.parametrize("case", list(OUT_FORMS))
def test_out_forms(case):
    same_rounded(lambda L: (lambda r: (type(r).__name__, r))(OUT_FORMS[case](L)), torch, ft)


TO_FORMS = {
    "dtype, non_blocking, copy": lambda L, x: x.to(L.float32, False, True) is x,
    "dtype, non_blocking": lambda L, x: x.to(L.float32, True) is x,
    "device, dtype, non_blocking, copy": lambda L, x: x.to("cpu", L.float32, False, True) is x,
    "other, non_blocking, copy": lambda L, x: x.to(x, False, True) is x,
    "None, dtype": lambda L, x: str(x.to(None, L.float64).dtype),
    "too many": lambda L, x: x.to(L.float32, False, True, 1),
    "device, bool": lambda L, x: x.to("cpu", False, True),
    "dtype, str": lambda L, x: x.to(L.float32, "a"),
}


@pytest.mark.parametrize("case", list(TO_FORMS))
def test_to_positional_flags(case):
    """``Tensor.to``'s positional non_blocking / copy (a copy=True one is a new tensor) and its overload errors."""
    same_rounded(lambda L: TO_FORMS[case](L, L.ones(2)), torch, ft)
