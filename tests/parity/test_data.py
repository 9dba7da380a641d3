"""Parity of functorch_lite.utils.data with torch.utils.data (spec §13, DATA-01..45), main process.

Each test runs the same program against real torch and the facade and compares structure, values,
dtypes, shapes, exception types and messages. Random orders are compared by contract (a
permutation, reproducible under a seed, new per epoch), since the RNGs differ by design.
"""
import collections
import inspect
import os
import re
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import functorch_lite as ft
import functorch_lite.utils.data as fud

P = collections.namedtuple("P", "a b")


def same(ours, theirs):
    """Structure, container types, tensor values / dtypes / shapes equal."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ft.Tensor), type(ours)
        assert str(ours.dtype) == str(theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(np.asarray(ours.tolist()), np.asarray(theirs.tolist()))
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__ and list(ours) == list(theirs)
        for k in theirs:
            same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
    else:
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)


def both(fn):
    """Run ``fn(lib, data_module)`` for torch and the facade; return (ours, theirs)."""
    return fn(ft, fud), fn(torch, tud)


def same_error(fn, exc=None):
    """The facade raises the same exception type with the same message as torch."""
    with pytest.raises(Exception) as theirs:
        fn(torch, tud)
    if exc is not None:
        assert theirs.type is exc
    with pytest.raises(theirs.type, match=re.escape(str(theirs.value)) + "$"):
        fn(ft, fud)


def pairs_ds(L, n=10):
    return [(L.tensor([float(i), float(i)]), i) for i in range(n)]


# ---- DataLoader basics -----------------------------------------------------------------------------
def test_DATA_01_signature():
    ours = inspect.signature(fud.DataLoader.__init__)
    theirs = inspect.signature(tud.DataLoader.__init__)
    assert list(ours.parameters) == list(theirs.parameters)
    for name, p in theirs.parameters.items():
        assert ours.parameters[name].default == p.default and ours.parameters[name].kind == p.kind


@pytest.mark.parametrize("kw", [dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(), dict(batch_size=3),
                                dict(batch_size=None), dict(batch_size=20)])
def test_DATA_02_03_04_05_06_batches_len(kw):
    ours, theirs = both(lambda L, D: D.DataLoader(pairs_ds(L), **kw))
    assert len(ours) == len(theirs)
    same(list(ours), list(theirs))
    same(list(ours), list(theirs))  # a second epoch


def test_DATA_45_python_list_dataset():
    ours, theirs = both(lambda L, D: list(D.DataLoader([1, 2, 3], batch_size=2)))
    same(ours, theirs)


def test_DATA_21_tensor_dataset_loader():
    ours, theirs = both(lambda L, D: list(D.DataLoader(
        D.TensorDataset(L.arange(10, dtype=L.float32).reshape(5, 2), L.arange(5)), batch_size=2)))
    same(ours, theirs)


def test_DATA_44_custom_collate_fn_receives_list():
    seen = []

    def collate(batch):
        seen.append((type(batch).__name__, len(batch)))
        return len(batch)
    ours, theirs = both(lambda L, D: list(D.DataLoader(list(range(5)), batch_size=2, collate_fn=collate)))
    assert ours == theirs == [2, 2, 1]
    assert seen[:3] == seen[3:] == [("list", 2), ("list", 2), ("list", 1)]


def test_sampler_and_batch_sampler_options():
    def run(L, D):
        ds = list(range(10, 20))
        a = list(D.DataLoader(ds, sampler=[3, 1, 2], batch_size=2))
        b = list(D.DataLoader(ds, batch_sampler=[[0, 9], [4]]))
        c = list(D.DataLoader(ds, batch_sampler=D.BatchSampler(D.SequentialSampler(ds), 4, True)))
        d = len(D.DataLoader(ds, batch_sampler=D.BatchSampler(D.SequentialSampler(ds), 4, False)))
        return a, b, c, d
    ours, theirs = both(run)
    same(ours, theirs)


# ---- default_collate / default_convert [DATA-07..18] ----------------------------------------------
COLLATE_CASES = {
    "ints": lambda L: [1, 2, 3],
    "floats": lambda L: [1.0, 2.0],
    "bools": lambda L: [True, False],
    "int_then_float": lambda L: [1, 2.5],
    "float_then_int": lambda L: [2.5, 1],
    "np_float32_scalars": lambda L: [np.float32(1.5), np.float32(2)],
    "np_int32_scalars": lambda L: [np.int32(1), np.int32(2)],
    "np_bool_scalars": lambda L: [np.bool_(True), np.bool_(False)],
    "np_float64_arrays": lambda L: [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    "np_uint8_arrays": lambda L: [np.zeros((2, 3), np.uint8), np.ones((2, 3), np.uint8)],
    "strings": lambda L: ["a", "b"],
    "bytes": lambda L: [b"a", b"b"],
    "dicts_tensor_int": lambda L: [{"x": L.tensor([1, 2]), "y": 1}, {"x": L.tensor([3, 4]), "y": 2}],
    "tuples": lambda L: [(1, 2.0), (3, 4.0)],
    "lists": lambda L: [[1, 2], [3, 4]],
    "namedtuples": lambda L: [P(a=1, b=2.0), P(a=1, b=2.0)],
    "zero_d_tensors": lambda L: [L.tensor(1.0), L.tensor(2.0)],
    "int32_tensors": lambda L: [L.tensor([1], dtype=L.int32), L.tensor([2], dtype=L.int32)],
    "dict_mixed": lambda L: [{"a": 1, "b": 1.5, "c": True}] * 2,
    "nested": lambda L: [{"p": (L.ones(2, 3), [1, "s"]), "q": P(a=np.float64(1), b={"z": 0.5})}] * 3,
    "bf16_tensors": lambda L: [L.ones(2, dtype=L.bfloat16), L.zeros(2, dtype=L.bfloat16)],
    "ordered_dict": lambda L: [collections.OrderedDict(a=1, b=2)] * 2,
    "bool_then_int": lambda L: [True, 2],
    "huge_int_in_floats": lambda L: [1.0, 2 ** 400],
}


@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_DATA_07_18_default_collate(case):
    ours, theirs = both(lambda L, D: D.default_collate(COLLATE_CASES[case](L)))
    same(ours, theirs)


ERROR_CASES = {
    "unequal_tensors": lambda L: [L.zeros(2), L.zeros(3)],
    "unequal_2d_tensors": lambda L: [L.zeros(2, 2), L.zeros(2, 2), L.zeros(2, 3)],
    "unequal_np_arrays": lambda L: [np.zeros(2), np.zeros(3)],
    "unequal_lists": lambda L: [[1, 2], [3]],
    "none": lambda L: [None, None],
    "np_string_array": lambda L: [np.array(["a"]), np.array(["b"])],
    "object": lambda L: [object(), object()],
    "complex": lambda L: [1 + 2j, 1],
    "int_overflow": lambda L: [1, 2 ** 63],
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_DATA_07_18_default_collate_errors(case):
    same_error(lambda L, D: D.default_collate(ERROR_CASES[case](L)))


CONVERT_CASES = {
    "int": lambda L: 0,
    "np_array": lambda L: np.array([0, 1]),
    "np_scalar": lambda L: np.float32(1.5),
    "tuple": lambda L: (np.array([1.0]), 2, "s"),
    "namedtuple": lambda L: P(a=np.int32(0), b=np.array([1, 2])),
    "dict_list": lambda L: {"a": [np.array([0, 1]), np.array([2, 3])], "b": L.tensor([1.0])},
    "np_str_array": lambda L: [np.array(["x"])],
}


@pytest.mark.parametrize("case", sorted(CONVERT_CASES))
def test_default_convert(case):
    ours, theirs = both(lambda L, D: D.default_convert(CONVERT_CASES[case](L)))
    if case == "np_str_array":
        assert ours[0] is not None and ours[0].tolist() == theirs[0].tolist() == ["x"]
    else:
        same(ours, theirs)


def test_default_collate_keeps_autograd_and_main_process_stack():
    w = ft.ones(2, requires_grad=True)
    out = fud.default_collate([w * 2, w * 3])
    out.sum().backward()
    assert w.grad.tolist() == [5.0, 5.0]


# ---- TensorDataset, datasets [DATA-19, 20, 39..43] ----------------------------------------------
def test_DATA_19_tensor_dataset_index_and_slice():
    def run(L, D):
        td = D.TensorDataset(L.arange(10, dtype=L.float32).reshape(5, 2), L.arange(5))
        return len(td), td[0], td[1:3], td[-1]
    ours, theirs = both(run)
    same(ours, theirs)


def test_DATA_20_tensor_dataset_size_mismatch():
    same_error(lambda L, D: D.TensorDataset(L.zeros(3), L.zeros(4)), AssertionError)


class Range5(tud.IterableDataset):
    def __iter__(self):
        return iter(range(5))


class FRange5(fud.IterableDataset):
    def __iter__(self):
        return iter(range(5))


class FRange5Len(FRange5):
    def __len__(self):
        return 3


class Range5Len(Range5):
    def __len__(self):
        return 3


def _iterable(D, with_len=False):
    if D is tud:
        return Range5Len() if with_len else Range5()
    return FRange5Len() if with_len else FRange5()


def test_DATA_39_40_iterable_dataset():
    ours, theirs = both(lambda L, D: list(D.DataLoader(_iterable(D), batch_size=2)))
    same(ours, theirs)
    ours, theirs = both(lambda L, D: list(D.DataLoader(_iterable(D), batch_size=2, drop_last=True)))
    same(ours, theirs)
    ours, theirs = both(lambda L, D: list(D.DataLoader(_iterable(D), batch_size=None)))
    same(ours, theirs)
    with pytest.raises(TypeError, match=re.escape("object of type 'FRange5' has no len()")):
        len(fud.DataLoader(FRange5(), batch_size=2))


def test_iterable_dataset_len_and_overrun_warning():
    for D in (tud, fud):
        assert len(D.DataLoader(_iterable(D, True), batch_size=2)) == 2
        dl = D.DataLoader(_iterable(D, True), batch_size=None)
        assert len(dl) == 3
        with pytest.warns(UserWarning, match=r"was reported to be 3\(when accessing len\(dataloader\)\), but 4 "):
            assert len(list(dl)) == 5


def test_DATA_41_42_dataset_errors():
    same_error(lambda L, D: D.Dataset()[0], NotImplementedError)

    class NoLen(fud.Dataset):
        def __getitem__(self, i):
            return i
    with pytest.raises(TypeError, match=re.escape("object of type 'NoLen' has no len()")):
        len(fud.DataLoader(NoLen()))


class Sq:
    """A minimal map-style dataset usable by both libraries."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


def test_DATA_43_concat_subset():
    def run(L, D):
        class DS(D.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                return i * 10
        c = DS() + DS()
        return (type(c).__name__, len(c), [c[i] for i in range(8)], c[-1], c.cumulative_sizes,
                D.Subset(Sq(10), [1, 3])[1], len(D.Subset(Sq(10), [1, 3])))
    ours, theirs = both(run)
    assert ours == theirs
    same_error(lambda L, D: D.ConcatDataset([Sq(2)])[-3], ValueError)
    same_error(lambda L, D: D.ConcatDataset([]), AssertionError)
    same_error(lambda L, D: D.ConcatDataset([_iterable(D)]), AssertionError)


def test_chain_and_stack_datasets():
    ours, theirs = both(lambda L, D: (list(_iterable(D) + _iterable(D)),
                                      D.StackDataset(Sq(3), Sq(3))[2], D.StackDataset(a=Sq(2), b=Sq(2))[1]))
    assert ours == theirs
    same_error(lambda L, D: D.StackDataset(Sq(2), Sq(3)), ValueError)
    same_error(lambda L, D: D.StackDataset(), ValueError)
    same_error(lambda L, D: D.StackDataset(Sq(2), a=Sq(2)), ValueError)


def test_DATA_43_random_split():
    for lengths in ([7, 3], [0.7, 0.3], [0.5, 0.25, 0.25], [0.33, 0.33, 0.34]):
        ours, theirs = both(lambda L, D: [len(s) for s in D.random_split(Sq(10), lengths)])
        assert ours == theirs
    parts = fud.random_split(Sq(10), [7, 3], generator=ft.Generator().manual_seed(1))
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = fud.random_split(Sq(10), [7, 3], generator=ft.Generator().manual_seed(1))
    assert again[0].indices == parts[0].indices
    same_error(lambda L, D: D.random_split(Sq(10), [5, 4]), ValueError)
    same_error(lambda L, D: D.random_split(Sq(10), [1.5, -0.5]), ValueError)
    for D in (tud, fud):
        with pytest.warns(UserWarning, match=re.escape("Length of split at index 1 is 0. This might result in an "
                                                       "empty dataset.")):
            D.random_split(Sq(1), [0.9, 0.1])


# ---- errors of bad DataLoader combinations [DATA-26..31] ------------------------------------------
BAD_KWARGS = {
    "DATA_26_sampler_shuffle": dict(sampler=[0, 1], shuffle=True),
    "DATA_27_batch_sampler_batch_size": dict(batch_sampler=[[0]], batch_size=2),
    "batch_sampler_shuffle": dict(batch_sampler=[[0]], shuffle=True),
    "batch_sampler_sampler": dict(batch_sampler=[[0]], sampler=[0]),
    "batch_sampler_drop_last": dict(batch_sampler=[[0]], drop_last=True),
    "DATA_28_persistent_without_workers": dict(persistent_workers=True),
    "DATA_29_prefetch_without_workers": dict(prefetch_factor=2),
    "DATA_30_negative_workers": dict(num_workers=-1),
    "negative_timeout": dict(timeout=-1),
    "negative_prefetch": dict(num_workers=1, prefetch_factor=-1),
    "batch_size_none_drop_last": dict(batch_size=None, drop_last=True),
    "mp_context_without_workers": dict(multiprocessing_context="spawn"),
    "mp_context_bad_name": dict(num_workers=1, multiprocessing_context="nope"),
    "mp_context_bad_type": dict(num_workers=1, multiprocessing_context=3),
    "batch_size_zero": dict(batch_size=0),
}


@pytest.mark.parametrize("case", sorted(BAD_KWARGS))
def test_DATA_26_30_bad_combinations(case):
    same_error(lambda L, D: D.DataLoader(Sq(4), **BAD_KWARGS[case]))


@pytest.mark.parametrize("kw", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])])
def test_iterable_dataset_option_errors(kw):
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(Range5(), **kw)
    msg = str(theirs.value).replace("Range5", "FRange5")
    if "sampler=" in msg:  # the message shows the sampler object's repr; compare up to it
        msg = msg.split("but got")[0]
        with pytest.raises(ValueError, match=re.escape(msg)):
            fud.DataLoader(FRange5(), **kw)
    else:
        with pytest.raises(ValueError, match=re.escape(msg) + "$"):
            fud.DataLoader(FRange5(), **kw)


def test_setattr_after_init_error():
    same_error(lambda L, D: setattr(D.DataLoader(Sq(4)), "batch_size", 3), ValueError)
    for D in (tud, fud):
        dl = D.DataLoader(Sq(4))
        dl.num_workers = 0  # allowed


def test_DATA_31_prefetch_factor_attribute():
    ours, theirs = both(lambda L, D: (D.DataLoader(Sq(4)).prefetch_factor,
                                      D.DataLoader(Sq(4), num_workers=2).prefetch_factor,
                                      D.DataLoader(Sq(4), num_workers=1, prefetch_factor=5).prefetch_factor))
    assert ours == theirs == (None, 2, 5)


def _warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w if issubclass(x.category, UserWarning)]


def test_DATA_32_pin_memory_warning_on_cpu():
    ours = _warnings(lambda: list(fud.DataLoader(Sq(4), batch_size=2, pin_memory=True)))
    theirs = _warnings(lambda: list(tud.DataLoader(Sq(4), batch_size=2, pin_memory=True)))
    assert ours == theirs and len(theirs) == 1
    ours = _warnings(lambda: list(fud.DataLoader(Sq(4), pin_memory=True, pin_memory_device="cuda")))
    theirs = _warnings(lambda: list(tud.DataLoader(Sq(4), pin_memory=True, pin_memory_device="cuda")))
    assert ours == theirs and len(theirs) == 2
    batch = next(iter(fud.DataLoader(Sq(4), batch_size=2, pin_memory=True)))
    assert not batch.is_pinned()


def test_DATA_33_too_many_workers_warning():
    n = len(os.sched_getaffinity(0)) + 1
    ours = _warnings(lambda: fud.DataLoader(Sq(4), num_workers=n))
    theirs = _warnings(lambda: tud.DataLoader(Sq(4), num_workers=n))
    assert ours == theirs and len(theirs) == 1


# ---- samplers ----------------------------------------------------------------------------------------
def test_samplers_deterministic_parity():
    ours, theirs = both(lambda L, D: (
        list(D.SequentialSampler(range(5))), len(D.SequentialSampler(range(5))),
        list(D.BatchSampler(range(10), 3, False)), list(D.BatchSampler(range(10), 3, True)),
        len(D.BatchSampler(range(10), 3, False)), len(D.BatchSampler(range(10), 3, True)),
        len(D.RandomSampler(range(7))), len(D.RandomSampler(range(7), replacement=True, num_samples=40)),
        len(D.WeightedRandomSampler([1.0, 2.0], 5)), len(D.SubsetRandomSampler([4, 5, 6]))))
    assert ours == theirs


SAMPLER_ERRORS = {
    "random_replacement_type": lambda L, D: D.RandomSampler(range(3), replacement=1),
    "random_num_samples": lambda L, D: D.RandomSampler(range(3), num_samples=0),
    "random_empty": lambda L, D: D.RandomSampler(range(0)),
    "weighted_num_samples": lambda L, D: D.WeightedRandomSampler([1.0], 0),
    "weighted_bool_num_samples": lambda L, D: D.WeightedRandomSampler([1.0], True),
    "weighted_replacement": lambda L, D: D.WeightedRandomSampler([1.0], 1, replacement=1),
    "weighted_2d": lambda L, D: D.WeightedRandomSampler([[1.0, 2.0]], 2),
    "batch_size": lambda L, D: D.BatchSampler(range(3), 0, False),
    "drop_last": lambda L, D: D.BatchSampler(range(3), 2, 1),
    "multinomial_zero_sum": lambda L, D: list(D.WeightedRandomSampler([0.0, 0.0], 2)),
    "multinomial_negative": lambda L, D: list(D.WeightedRandomSampler([-1.0, 2.0], 2)),
    "multinomial_too_many": lambda L, D: list(D.WeightedRandomSampler([1.0, 2.0], 3, replacement=False)),
}


@pytest.mark.parametrize("case", sorted(SAMPLER_ERRORS))
def test_sampler_errors(case):
    same_error(SAMPLER_ERRORS[case])


def test_random_samplers_contract():
    g = ft.Generator().manual_seed(0)
    s = fud.RandomSampler(range(10), generator=g)
    e1, e2 = list(s), list(s)
    assert sorted(e1) == sorted(e2) == list(range(10)) and e1 != e2
    assert list(fud.RandomSampler(range(10), generator=ft.Generator().manual_seed(0))) == e1
    # the sampler alone is plain randperm on the same generator (DATA-24b)
    assert e1 == ft.randperm(10, generator=ft.Generator().manual_seed(0)).tolist()
    r = list(fud.RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(r) == 70 and set(r) == {0, 1, 2}
    r = list(fud.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(r) == 10 and sorted(r[:4]) == sorted(r[4:8]) == [0, 1, 2, 3]
    sub = list(fud.SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(sub) == [10, 20, 30]
    w = list(fud.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=g))
    assert set(w) <= {1, 3} and w.count(3) > w.count(1)
    wn = list(fud.WeightedRandomSampler([0.0, 1.0, 5.0], 3, replacement=False, generator=g))
    assert sorted(wn) == [0, 1, 2] and wn[2] == 0
    assert list(fud.WeightedRandomSampler([1.0, 2.0, 3.0], 6, generator=ft.Generator().manual_seed(3))) == \
        list(fud.WeightedRandomSampler([1.0, 2.0, 3.0], 6, generator=ft.Generator().manual_seed(3)))


# ---- shuffling reproducibility [DATA-22..25] ----------------------------------------------------
def _epochs(**kw):
    dl = fud.DataLoader(Sq(10), batch_size=10, shuffle=True, **kw)
    return [next(iter(dl)).tolist() for _ in range(2)]


def test_DATA_22_23_shuffle_generator_reproducible_and_new_per_epoch():
    e = _epochs(generator=ft.Generator().manual_seed(0))
    assert sorted(e[0]) == sorted(x * x for x in range(10)) and e[0] != e[1]
    assert _epochs(generator=ft.Generator().manual_seed(0)) == e
    assert _epochs(generator=ft.Generator().manual_seed(1)) != e
    # DATA-24b: the loader's iterator draws its base seed first, then the sampler permutes
    g = ft.Generator().manual_seed(0)
    fud.sampler.draw_seed(g)
    assert [Sq(10)[i] for i in ft.randperm(10, generator=g).tolist()] == e[0]


def test_DATA_25_shuffle_under_manual_seed():
    ft.manual_seed(0)
    a = _epochs()
    ft.manual_seed(0)
    assert _epochs() == a and a[0] != a[1]


def test_shuffle_false_is_sequential_and_none_default():
    ours, theirs = both(lambda L, D: [b.tolist() for b in D.DataLoader(Sq(5), batch_size=2, shuffle=False)])
    assert ours == theirs


# ---- workers against torch's workers [DATA-34, 36, 38] ---------------------------------------------
class BoomAt2:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise ValueError(f"boom at {i}")
        return i


class WorkerIds:
    def __init__(self, D):
        self.D = D

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return self.D.get_worker_info().id


def test_DATA_34_38_workers_parity():
    ours, theirs = both(lambda L, D: list(D.DataLoader(
        D.TensorDataset(L.arange(20, dtype=L.float32).reshape(10, 2), L.arange(10)), batch_size=3, num_workers=2)))
    same(ours, theirs)
    ours, theirs = both(lambda L, D: [b.tolist() for b in D.DataLoader(WorkerIds(D), num_workers=2)])
    assert ours == theirs == [[0], [1], [0], [1]]
    assert fud.get_worker_info() is tud.get_worker_info() is None


def test_DATA_36_37_worker_exception_message_parity():
    msgs = []
    for D in (tud, fud):
        it = iter(D.DataLoader(BoomAt2(), num_workers=1))
        with pytest.raises(ValueError) as e:
            list(it)
        msgs.append(str(e.value).splitlines())
        it._shutdown_workers()  # now, not when a reference cycle through the traceback is collected
        del e
        same_error(lambda L, D: list(D.DataLoader(BoomAt2())), ValueError)
    ours, theirs = msgs
    assert ours[:2] == theirs[:2] == ["Caught ValueError in DataLoader worker process 0.",
                                      "Original Traceback (most recent call last):"]
    assert ours[-2:] == theirs[-2:] and theirs[-1] == "ValueError: boom at 2"


@pytest.mark.parametrize("batch", [
    [np.array([1.0], np.float32), np.array([3])],
    [np.int64(1), 2.5],
    [np.int32(1), np.float32(2)],
    [np.array([1, 2], np.uint8), np.array([1, 2], np.int8)],
    [np.float16(1), np.float16(2)],
    [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
], ids=["f32-array-int-array", "int64-scalar-float", "int32-float32", "uint8-int8", "float16", "float64"])
def test_default_collate_promotes_mixed_numpy_as_torch(batch):
    """Mixed NumPy dtypes collate to torch's promotion of them (as tensors stacked), not NumPy's float64."""
    t, f = tud.default_collate(batch), fud.default_collate(batch)
    assert str(f.dtype) == str(t.dtype) and f.tolist() == t.tolist()


@pytest.mark.parametrize("arg", [{"a": 1}, "s", object()], ids=["dict", "str", "object"])
def test_an_op_given_a_non_tensor_names_it(arg):
    """A dict (a batch given to a module whole) or other object where a tensor goes: TypeError naming it."""
    for lib in (torch, ft):
        with pytest.raises(TypeError, match=rf"linear\(\): argument 'input' .*must be Tensor, not {type(arg).__name__}"):
            lib.nn.Linear(3, 4)(arg)
