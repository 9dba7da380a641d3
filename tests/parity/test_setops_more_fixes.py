"""Parity with torch 2.13 for a second round of sort / reduction / set-op findings: ``torch.argsort`` takes
``out=`` only with ``stable=`` and ``torch.count_nonzero`` never (torch's invalid-combination TypeErrors); a bool or
None where sort's ``dim`` goes and ``topk(dim=None)`` are torch's TypeErrors; the ops torch has no uint16 / uint32 /
uint64 CPU kernel for (topk, median, nanmedian, kthvalue, mode, cummax/cummin, max/min, amax/amin, argmax/argmin,
aminmax, count_nonzero, searchsorted/bucketize, histc) raise its NotImplementedError; Python's three-argument
``pow`` of a tensor is its TypeError."""
import pytest
import torch  # noqa: F401  (a parity test: torch is required, never skipped)

import functorch_lite as ft  # noqa: F401
from _parity import same


def _y(m):
    return m.tensor([3., 1., 2.])


def _o(m):
    return m.empty(3, dtype=m.int64)


# ---- argsort / count_nonzero out= --------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.argsort(_y(m), out=_o(m)),
    lambda m: m.argsort(_y(m), 0, out=_o(m)),
    lambda m: m.argsort(_y(m), dim=0, out=_o(m)),
    lambda m: m.argsort(_y(m), descending=True, out=_o(m)),
    lambda m: m.argsort(input=_y(m), out=_o(m)),
    lambda m: m.count_nonzero(_y(m), out=_o(m)),
    lambda m: m.count_nonzero(_y(m), 0, out=_o(m)),
    lambda m: m.count_nonzero(_y(m), (0,), out=_o(m)),
    lambda m: m.count_nonzero(_y(m), dim=(0,), out=_o(m)),
], ids=["argsort", "argsort_dim", "argsort_dim_kw", "argsort_desc", "argsort_input_kw", "cnz", "cnz_dim",
        "cnz_tuple", "cnz_dim_kw"])
def test_out_refused_by_overloads(case):
    assert same(case)[0] == "TypeError"


@pytest.mark.parametrize("case", [
    lambda m: m.argsort(_y(m), stable=True, out=_o(m)),
    lambda m: (lambda o: (m.argsort(_y(m), dim=0, descending=True, stable=True, out=o), o))(_o(m)),
    lambda m: m.argsort(_y(m), stable=False, out=_o(m)),
    lambda m: m.argsort(_y(m), 0, True),
    lambda m: m.count_nonzero(_y(m), 0),
    lambda m: m.count_nonzero(_y(m)),
], ids=["stable_out", "stable_out_written", "stable_false_out", "plain", "cnz_plain", "cnz_all"])
def test_accepted_forms_still_work(case):
    assert same(case)[0] == "ok"


# ---- sort / topk dim ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.sort(_y(m), True),
    lambda m: m.sort(_y(m), False, 0),
    lambda m: m.argsort(_y(m), True),
    lambda m: _y(m).sort(dim=None),
    lambda m: _y(m).argsort(dim=None),
    lambda m: _y(m).topk(1, dim=None),
    lambda m: m.topk(_y(m), 1, dim=None),
], ids=["sort_bool", "sort_bool_int", "argsort_bool", "sort_none", "argsort_none", "topk_none", "topk_fn_none"])
def test_bad_dim_is_torch_type_error(case):
    assert same(case)[0] == "TypeError"


def test_sort_int_dim_descending_still_works():
    same(lambda m: tuple(m.sort(_y(m), 0, True)))


# ---- no uint16/32/64 kernel --------------------------------------------------------------------------------
_NO_WIDE = {
    "topk": lambda m, y: m.topk(y, 1),
    "median": lambda m, y: m.median(y),
    "median_dim": lambda m, y: m.median(y, 1),
    "nanmedian": lambda m, y: m.nanmedian(y),
    "nanmedian_dim": lambda m, y: m.nanmedian(y, 1),
    "kthvalue": lambda m, y: m.kthvalue(y, 1),
    "mode": lambda m, y: m.mode(y),
    "cummax": lambda m, y: m.cummax(y, 1),
    "cummin": lambda m, y: m.cummin(y, 1),
    "max": lambda m, y: m.max(y),
    "max_dim": lambda m, y: m.max(y, 1),
    "min": lambda m, y: y.min(),
    "min_dim": lambda m, y: y.min(0),
    "amax": lambda m, y: m.amax(y),
    "amin": lambda m, y: m.amin(y, 0),
    "argmax": lambda m, y: m.argmax(y),
    "argmin": lambda m, y: y.argmin(1),
    "aminmax": lambda m, y: m.aminmax(y),
    "count_nonzero": lambda m, y: m.count_nonzero(y),
    "searchsorted_scalar": lambda m, y: m.searchsorted(y[0], 2),
    "bucketize": lambda m, y: m.bucketize(y[0], y[0]),
    "histc_range": lambda m, y: m.histc(y, 4, 0, 5),
    "histc": lambda m, y: m.histc(y, 4),
}


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("name", list(_NO_WIDE))
def test_wide_unsigned_has_no_kernel(name, dt):
    def case(m):
        return _NO_WIDE[name](m, m.tensor([[3, 1, 2], [4, 0, 5]], dtype=getattr(m, dt)))
    assert same(case)[0] == "NotImplementedError"


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
def test_wide_unsigned_sort_still_works(dt):
    def case(m):
        y = m.tensor([[3, 1, 2], [4, 0, 5]], dtype=getattr(m, dt))
        return tuple(m.sort(y)) + (m.argsort(y, stable=True), m.sum(y))
    same(case)


# ---- pow with a modulus ------------------------------------------------------------------------------------
def test_three_argument_pow_is_type_error():
    assert same(lambda m: pow(m.tensor(2), 3, 5))[0] == "TypeError"
    assert same(lambda m: str(m.tensor(2).__pow__(3, 5)))[0] == "ok"
    same(lambda m: pow(m.tensor(2), 3))
    same(lambda m: m.tensor([2., 3.]) ** m.tensor(2.))


# ---- unique(dim=...) of slices holding NaN -----------------------------------------------------------------
@pytest.mark.parametrize("n,w", [(4, 2), (5, 1), (17, 2), (40, 2), (300, 1)])
def test_unique_dim_nan_rows_in_torch_order(n, w):
    import numpy as np
    rng = np.random.RandomState(n)
    a = rng.randint(0, 3, size=(n, w)).astype(np.float32)
    a[rng.rand(n, w) < 0.2] = float("nan")
    same(lambda m: tuple(m.unique(m.tensor(a), dim=0, return_inverse=True, return_counts=True)))
    # (values only: torch's dim=1 result is a transposed layout, a separate difference)
    same(lambda m: tuple(str(r.tolist()) for r in m.unique(m.tensor(a.T.copy()), dim=1, return_inverse=True,
                                                           return_counts=True)))


def test_unique_dim_without_nan_unchanged():
    same(lambda m: tuple(m.unique(m.tensor([[1., 2.], [1., 2.], [0., 1.]]), dim=0, return_inverse=True,
                                  return_counts=True)))
    same(lambda m: m.unique(m.tensor([[1., float("nan")], [0., 2.]], dtype=m.bfloat16), dim=0))
