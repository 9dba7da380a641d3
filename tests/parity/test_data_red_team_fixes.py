"""Parity with PyTorch 2.13 for utils.data differences a red team found: random_split with float32 (and
float16 / bfloat16) fractions, ConcatDataset.cummulative_sizes, WorkerInfo as a frozen dataclass, timeout with
num_workers=0, Subset subclasses without __getitems__, generator= that is not a Generator, default_collate on
mixed Python numbers / NumPy uint64, WeightedRandomSampler over no weights, TensorDataset of non-tensors.

Every case runs the same code under real torch (``torch.utils.data``) and functorch_lite and compares results,
or exception types and messages.
"""
import dataclasses
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.utils import data as fud

tud = torch.utils.data
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
LIBS = ((torch, tud), (ft, fud))


def outcome(fn):
    """``fn()``'s result, or (exception type name, message); with the warnings it raised."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001
            r = (type(e).__name__, str(e))
    return r, [(x.category.__name__, str(x.message)) for x in w]


def both(fn):
    """``fn(L, D)`` under torch and under functorch_lite (L: the library, D: its utils.data)."""
    return [outcome(lambda: fn(L, D)) for L, D in LIBS]


def assert_same(fn):
    theirs, ours = both(fn)
    assert ours == theirs
    return theirs


# ---- 1. random_split: fractions are summed and multiplied in their own dtype ----------------------------
def split_sizes(D, n, lengths, **kw):
    return [len(s) for s in D.random_split(range(n), lengths, **kw)]


@pytest.mark.parametrize("n, fracs, dtype", [
    (10, [0.3, 0.7], "float32"), (100, [0.1, 0.2, 0.7], "float32"), (7, [0.1, 0.9], "float32"),
    (33, [1 / 3, 1 / 3, 1 / 3], "float32"), (10, [0.3, 0.7], "float16"), (10, [0.3, 0.7], "bfloat16"),
    (10, [0.3, 0.7], "float64"), (70000, [0.3, 0.7], "float16"), (3, [0.0, 1.0], "float32"),
    (10, [0.5, 0.6], "float32"), (10, [-0.5, 1.5], "float32"), (2, [1.0, 0.0, 0.0], "float32"),
])
def test_random_split_tensor_fractions(n, fracs, dtype):
    r = assert_same(lambda L, D: split_sizes(D, n, L.tensor(fracs, dtype=getattr(L, dtype))))
    if (n, fracs, dtype) == (10, [0.3, 0.7], "float32"):
        assert r[0] == [3, 7]
    if (n, dtype) == (100, "float32"):
        assert r[0] == [10, 20, 70]


@pytest.mark.parametrize("n, make", [
    (10, lambda L: [np.float32(0.3), np.float32(0.7)]),
    (7, lambda L: np.array([0.1, 0.9], dtype=np.float32)),
    (100, lambda L: [np.float32(0.1), np.float32(0.2), np.float32(0.7)]),
    (10, lambda L: [L.tensor(0.3), 0.7]),
    (10, lambda L: [0.3, L.tensor(0.7)]),
    (10, lambda L: [np.float16(0.3), np.float16(0.7)]),
    (10, lambda L: [np.float32(0.3), 0.7]),
    (10, lambda L: L.tensor([3, 7])),
    (10, lambda L: np.array([3, 7])),
    (10, lambda L: [True, 9]),
])
def test_random_split_float32_values(n, make):
    assert_same(lambda L, D: split_sizes(D, n, make(L)))


def test_random_split_random_fractions_all_dtypes():
    rng = np.random.default_rng(0)
    cases = []
    for k in range(12):
        m, n = int(rng.integers(2, 6)), int(rng.integers(1, 3000))
        p = rng.dirichlet(np.ones(m)).tolist()
        cases.append((n, p, ("float32", "float16", "bfloat16", "float64")[k % 4]))
    for n, p, dtype in cases:
        assert_same(lambda L, D: split_sizes(D, n, L.tensor(p, dtype=getattr(L, dtype))))
        assert_same(lambda L, D: split_sizes(D, n, np.array(p, dtype=np.float32)))
        # a NumPy float32 beside float16 tensors: the sum rounds each addend to float16 first
        assert_same(lambda L, D: split_sizes(D, n, [np.float32(p[0])] + [L.tensor(x, dtype=L.float16)
                                                                        for x in p[1:]]))


def test_random_split_non_integer_lengths_error():
    assert_same(lambda L, D: split_sizes(D, 10, [3.0, 7.0], generator=L.Generator()))
    assert_same(lambda L, D: split_sizes(D, 10, [4, 6.0]))  # (default generator: "generator=torch._C.Generator")
    assert_same(lambda L, D: split_sizes(D, 10, [4, 6.0], generator=None))  # ("generator=NoneType")
    assert_same(lambda L, D: split_sizes(D, 10, [np.float64(3), 7]))
    assert_same(lambda L, D: split_sizes(D, 10, L.tensor([3.0, 7.0]), generator=L.Generator()))


# ---- 2. ConcatDataset.cummulative_sizes ---------------------------------------------------------------
def test_concat_cummulative_sizes_deprecated_alias():
    r = assert_same(lambda L, D: D.ConcatDataset([range(2), range(3)]).cummulative_sizes)
    assert r == ([2, 5], [("FutureWarning", "`cummulative_sizes` attribute is renamed to `cumulative_sizes`")])


# ---- 3. WorkerInfo --------------------------------------------------------------------------------------
class WorkerInfoProbe:
    """Map-style dataset (plain class, picklable) reporting its worker's WorkerInfo."""

    def __init__(self, D):
        self.D = D

    def __len__(self):
        return 2

    def __getitem__(self, i):
        wi = self.D.get_worker_info()
        out = [wi.id, wi.num_workers, wi.rng, wi.worker_method, type(wi).__name__, dataclasses.is_dataclass(wi),
               [f.name for f in dataclasses.fields(wi)],
               repr(wi).replace(repr(wi.dataset), "DS").replace(str(wi.seed), "SEED")]
        try:
            wi.id = 3
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e), isinstance(e, dataclasses.FrozenInstanceError)))
        return str(out)


def test_worker_info_frozen_dataclass_in_workers():
    # (results only: forking after JAX started warns under either library)
    theirs, ours = both(lambda L, D: list(D.DataLoader(WorkerInfoProbe(D), num_workers=2, batch_size=None)))
    assert ours[0] == theirs[0]
    assert "FrozenInstanceError" in theirs[0][0] and "worker_method='multiprocessing'" in theirs[0][0]


def test_worker_info_class():
    theirs = tud._utils.worker.WorkerInfo
    ours = fud._utils.worker.WorkerInfo
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(theirs)]
    for cls in (theirs, ours):
        assert cls.__dataclass_params__.frozen
    assert repr(ours(id=0, num_workers=1, seed=2, dataset=None)) == \
        repr(theirs(id=0, num_workers=1, seed=2, dataset=None))
    a, b = (outcome(lambda: cls(id=0)) for cls in (theirs, ours))
    assert a == b
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'seed'"):
        ours(id=0, num_workers=1, seed=2, dataset=None).seed = 5


# ---- 4. timeout with num_workers=0 ----------------------------------------------------------------------
def test_timeout_without_workers():
    r = assert_same(lambda L, D: list(D.DataLoader(range(2), timeout=1)))
    assert r[0] == ("AssertionError", "_SingleProcessDataLoaderIter requires timeout == 0")
    assert_same(lambda L, D: iter(D.DataLoader(range(2), timeout=0.5)) and None)
    assert_same(lambda L, D: len(D.DataLoader(range(2), timeout=1)))


# ---- 5. Subset subclasses -------------------------------------------------------------------------------
def test_subset_subclass_overriding_only_getitem():
    def run(L, D):
        class S(D.Subset):
            def __getitem__(self, i):
                return 0

        return S(range(3), [0])

    r = assert_same(run)
    assert r[0][0] == "NotImplementedError" and r[0][1].startswith("S overrides __getitem__ but not __getitems__.")

    def ok(L, D):
        class S2(D.Subset):
            def __getitem__(self, i):
                return 0

            def __getitems__(self, indices):
                return [0 for _ in indices]

        class S3(S2):
            def __getitem__(self, i):
                return 1

        return len(S2(range(3), [0])), len(S3(range(3), [0, 1]))

    assert assert_same(ok)[0] == (1, 2)


# ---- 6. generator= that is not a Generator --------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda L, D: D.random_split(range(4), [2, 2], generator=1),
    lambda L, D: D.random_split(range(4), [0.5, 0.5], generator="g"),
    lambda L, D: list(D.RandomSampler(range(3), generator=3)),
    lambda L, D: list(D.RandomSampler(range(3), num_samples=2, generator=3.5)),
    lambda L, D: list(D.RandomSampler(range(3), replacement=True, generator=3)),
    lambda L, D: list(D.SubsetRandomSampler([1, 2], generator=np.int64(3))),
    lambda L, D: list(D.WeightedRandomSampler([1.0, 2.0], 2, generator=3)),
    lambda L, D: list(D.WeightedRandomSampler([1.0, 2.0], 1, replacement=False, generator="x")),
    lambda L, D: list(D.DataLoader(range(3), generator=5)),
    lambda L, D: list(D.DataLoader(range(3), shuffle=True, generator=5)),
    lambda L, D: list(D.DataLoader(range(3), generator=L.tensor(1))),
])
def test_generator_not_a_generator(fn):
    r = assert_same(fn)
    assert r[0][0] == "TypeError"


def test_generator_none_and_real_generators_still_work():
    assert_same(lambda L, D: sorted(D.RandomSampler(range(3), generator=L.Generator().manual_seed(1))))
    assert_same(lambda L, D: sorted(D.RandomSampler(range(3), generator=None)))
    assert_same(lambda L, D: [len(s) for s in D.random_split(range(4), [1, 3], generator=None)])
    assert_same(lambda L, D: len(list(D.DataLoader(range(3), shuffle=True, generator=L.Generator()))))


# ---- 7. default_collate on mixed Python numbers / NumPy uint64 -----------------------------------------
def collated(L, D, batch):
    out = D.default_collate(batch)
    if isinstance(out, L.Tensor):
        return str(out.dtype), str(out.tolist())  # (as text: nan == nan)
    return out


@pytest.mark.parametrize("batch", [
    [1, "a"], [1, None], [None, "a"], [1, b"a"], [1, "7"], [1.0, "a"], [1.0, "7"], [1.0, 2j], [1.0, None],
    [1.0, [2]], [1, [2]], [1, (2,)], [1.5, (2,)], [1.0, range(2)], [1, range(2)], [1.0, np.str_("a")],
    [np.uint64(1), np.uint64(2)], [np.uint64(1)], [np.uint64(2 ** 63), np.uint64(2)], [np.int64(1), np.uint64(2)],
    [np.uint64(1), 1], [np.int64(1), [2]], [np.float32(1), None],
    # still collated
    [1, 2], [1, 2.5], [1.0, 2], [True, 2], [1, 2j], [1.0, True], [1.0, np.int64(3)], [1, np.float32(2)],
    [np.uint32(1), np.uint32(2)], [np.uint8(1), np.uint8(2)], [1.0, np.float64(2)], [1.0, float("nan")],
])
def test_default_collate_mixed_numbers(batch):
    assert_same(lambda L, D: collated(L, D, batch))


def test_default_collate_nested_and_in_workers():
    assert_same(lambda L, D: D.default_collate([{"a": 1.0}, {"a": "x"}]))
    for ds in ([1, "a"], [1.0, "a"], [np.uint64(1), np.uint64(2)]):
        theirs, ours = both(lambda L, D: list(D.DataLoader(ds, batch_size=2, num_workers=1)))
        assert ours[0][0] == theirs[0][0] == "TypeError"
        assert ours[0][1].splitlines()[-1] == theirs[0][1].splitlines()[-1]


# ---- 8. WeightedRandomSampler over no weights -----------------------------------------------------------
@pytest.mark.parametrize("n, replacement", [(1, True), (1, False), (2, True), (3, False)])
def test_weighted_random_sampler_empty(n, replacement):
    r = assert_same(lambda L, D: list(D.WeightedRandomSampler([], n, replacement=replacement)))
    assert r[0][0] == "RuntimeError"


# ---- 9. TensorDataset of non-tensors: ``t.size(0)`` -----------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda L: (np.zeros((3, 2)),),
    lambda L: ([1, 2, 3],),
    lambda L: (L.zeros(3), [1, 2, 3]),
    lambda L: (L.zeros(3), np.zeros(3)),
    lambda L: (L.zeros(3), 5),
    lambda L: (L.tensor(1.0),),
    lambda L: (L.zeros(3), L.zeros(2)),
    lambda L: (L.zeros(3, 2), L.arange(3)),
])
def test_tensor_dataset_size(make):
    def run(L, D):
        ds = D.TensorDataset(*make(L))
        return len(ds)

    assert_same(run)
    assert_same(lambda L, D: type(D.TensorDataset()).__name__)


@pytest.mark.parametrize("call", [lambda T: T.randperm(4, generator=1), lambda T: T.randint(3, (2,), generator=1),
                                  lambda T: T.rand(2, generator=1), lambda T: T.randn(2, 3, generator="a")])
def test_random_factories_refuse_a_generator_of_the_wrong_type(call):
    """(the facade's own ops: an AttributeError on the int before)"""
    def outcome(T):
        try:
            call(T)
        except TypeError as e:
            return str(e).split("\n")[0]
    assert outcome(ft) == outcome(torch)
