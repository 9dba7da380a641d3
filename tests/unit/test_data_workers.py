"""DataLoader worker processes (spec §13.3, DATA-28..38): NumPy-only workers, JAX only in the main process.

Datasets are tiny; every test checks that no worker process is left behind.
"""
import dataclasses
import gc
import multiprocessing
import os
import random
import re
import signal
import time

import numpy as np
import pytest

import functorch_lite as ft
from functorch_lite.utils import data as fud
from functorch_lite.utils.data import DataLoader, TensorDataset


@pytest.fixture(autouse=True)
def no_leaked_workers():
    before = set(p.pid for p in multiprocessing.active_children())
    yield
    # an iterator held by a cycle (a traceback's frames) shuts its workers down when collected: the young
    # generations first (a full collection of this process's heap takes ~2 s per test), then everything
    for collect in (lambda: None, lambda: gc.collect(1), gc.collect):
        collect()
        deadline = time.time() + (5 if collect is gc.collect else 0.2)
        while True:
            left = [p for p in multiprocessing.active_children() if p.pid not in before]
            if not left or time.time() > deadline:
                break
            time.sleep(0.02)
        if not left:
            break
    assert not left, f"leaked worker processes: {left}"


def as_py(batches):
    """Batches -> nested Python values with dtype names, for exact comparison."""
    if isinstance(batches, ft.Tensor):
        return ("T", str(batches.dtype), tuple(batches.shape), batches.tolist())
    if isinstance(batches, dict):
        return {k: as_py(v) for k, v in batches.items()}
    if isinstance(batches, (list, tuple)):
        return type(batches).__name__, [as_py(x) for x in batches]
    if isinstance(batches, np.ndarray):
        return ("np", str(batches.dtype), batches.tolist())
    return batches


class Items(fud.Dataset):
    """Structured samples: dict of numpy array, Python int/float/str, nested tuple."""

    def __init__(self, n=7, delay=0.0):
        self.n, self.delay = n, delay

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay * ((i * 7) % 3))  # later items may finish first
        return {"x": np.full((2,), i, np.float32), "y": i, "z": i / 2, "s": f"s{i}", "t": (np.int16(i), [i, -i])}


def td():
    return TensorDataset(ft.arange(20, dtype=ft.float32).reshape(10, 2), ft.arange(10),
                         ft.ones(10, 3, dtype=ft.bfloat16))


@pytest.mark.parametrize("make,kw", [(Items, dict(batch_size=3)), (td, dict(batch_size=4)),
                                     (td, dict(batch_size=None)), (Items, dict(batch_size=2, drop_last=True))])
def test_DATA_34_workers_give_same_batches_as_main_process(make, kw):
    ref = as_py(list(DataLoader(make(), **kw)))
    assert as_py(list(DataLoader(make(), num_workers=2, **kw))) == ref


def test_DATA_34_order_preserved_with_uneven_work():
    ref = as_py(list(DataLoader(Items(9), batch_size=1)))
    assert as_py(list(DataLoader(Items(9, delay=0.03), batch_size=1, num_workers=2, prefetch_factor=3))) == ref
    unordered = list(DataLoader(Items(9, delay=0.03), batch_size=1, num_workers=2, in_order=False))
    assert sorted(b["y"].item() for b in unordered) == list(range(9))


def test_workers_return_facade_tensors_and_numpy_from_custom_collate():
    dl = DataLoader(td(), batch_size=5, num_workers=2, collate_fn=lambda b: [np.stack([s[1] for s in b]), len(b)])
    out = list(dl)
    # the dataset's tensors are NumPy inside workers; a custom collate_fn's NumPy result stays NumPy
    assert [type(o[0]) for o in out] == [np.ndarray, np.ndarray] and out[1][0].tolist() == [5, 6, 7, 8, 9]
    dl = DataLoader(td(), batch_size=5, num_workers=2, collate_fn=lambda b: fud.default_collate(b)[:2])
    x, y = next(iter(dl))
    assert isinstance(y, ft.Tensor) and str(y.dtype) == "torch.int64" and y.tolist() == [0, 1, 2, 3, 4]


class Boom(fud.Dataset):
    def __init__(self, exc=ValueError):
        self.exc = exc

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise self.exc(f"boom at {i}")
        return i


def test_DATA_36_worker_exception_reraised_with_traceback():
    it = iter(DataLoader(Boom(), batch_size=1, num_workers=1))
    assert next(it).tolist() == [0] and next(it).tolist() == [1]
    with pytest.raises(ValueError) as e:
        next(it)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent call "
                          "last):\n")
    assert 'raise self.exc(f"boom at {i}")' in msg and msg.rstrip().endswith("ValueError: boom at 2")
    assert next(it).tolist() == [3]  # the iterator goes on, as PyTorch's
    with pytest.raises(StopIteration):
        next(it)


def test_DATA_37_main_process_exception_is_original():
    with pytest.raises(ValueError, match="^boom at 2$"):
        list(DataLoader(Boom(), batch_size=1))


def test_worker_keyerror_and_unconstructible_exception():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(DataLoader(Boom(KeyError), num_workers=1))

    with pytest.raises(RuntimeError, match="^Caught TwoArgs in DataLoader worker process 0"):
        list(DataLoader(Boom(lambda m: TwoArgs(m, 1)), num_workers=1))


class TwoArgs(Exception):
    """Cannot be rebuilt from one message: re-raised as RuntimeError, as PyTorch."""

    def __init__(self, a, b):
        super().__init__(a, b)


class Exit(fud.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


def test_killed_worker_os_exit_raises_instead_of_hanging():
    with pytest.raises(RuntimeError, match=r"^DataLoader worker \(pid\(s\) \d+\) exited unexpectedly$"):
        list(DataLoader(Exit(), batch_size=1, num_workers=2))


class Slow(fud.Dataset):
    def __init__(self, delay):
        self.delay = delay

    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(self.delay)
        return i


def test_sigkilled_workers_raise():
    it = iter(DataLoader(Slow(30), batch_size=1, num_workers=2))
    pids = [w.pid for w in it._workers]
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    for w in it._workers:  # both dead before the next batch is asked for (a loaded machine delivers late)
        w.join(timeout=30)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) .*\) exited unexpectedly") as e:
        next(it)
    assert all(str(p) in str(e.value) for p in pids)


def test_timeout_raises():
    t0 = time.time()
    with pytest.raises(RuntimeError, match=re.escape("DataLoader timed out after 0.2 seconds")):
        next(iter(DataLoader(Slow(0.6), num_workers=1, timeout=0.2)))
    assert next(iter(DataLoader(Slow(0.01), num_workers=1, timeout=5))).tolist() == [0]
    assert time.time() - t0 < 5


def test_early_break_and_del_shut_workers_down():
    dl = DataLoader(Items(50), batch_size=1, num_workers=2)
    it = iter(dl)
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    del it
    gc.collect()
    assert not any(w.is_alive() for w in workers)
    for b in dl:
        break
    gc.collect()  # the no_leaked_workers fixture checks the loop's workers are gone


def test_workers_end_after_full_epoch():
    it = iter(DataLoader(Items(4), batch_size=2, num_workers=2))
    workers = list(it._workers)
    assert len(list(it)) == 2
    assert not any(w.is_alive() for w in workers)


class WhoAmI(fud.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = fud.get_worker_info()
        return np.array([info.id, info.num_workers, info.seed, getattr(info.dataset, "tag", -1),
                         random.randrange(10 ** 9), np.random.randint(10 ** 9)])


def _init(worker_id):
    fud.get_worker_info().dataset.tag = 100 + worker_id


def test_DATA_38_get_worker_info_init_fn_and_seeds():
    assert fud.get_worker_info() is None
    ft.manual_seed(5)
    rows = [b[0].tolist() for b in DataLoader(WhoAmI(), num_workers=2, worker_init_fn=_init)]
    assert [r[0] for r in rows] == [0, 1, 0, 1] and {r[1] for r in rows} == {2}
    assert [r[3] for r in rows] == [100, 101, 100, 101]
    assert rows[1][2] == rows[0][2] + 1  # seed = base_seed + worker_id
    assert rows[0][4:] != rows[1][4:]  # per-worker Python / NumPy RNG streams
    ft.manual_seed(5)
    assert [b[0].tolist() for b in DataLoader(WhoAmI(), num_workers=2, worker_init_fn=_init)] == rows
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'id'"):  # (torch 2.13's)
        fud.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None).id = 1


def test_DATA_35_persistent_workers_across_epochs():
    dl = DataLoader(WhoAmI(), batch_size=2, num_workers=2, persistent_workers=True, worker_init_fn=_init)
    it1 = iter(dl)
    e1 = [b.tolist() for b in it1]
    pids = [w.pid for w in it1._workers]
    it2 = iter(dl)
    e2 = [b.tolist() for b in it2]
    assert it2 is it1 and [w.pid for w in it2._workers] == pids and all(w.is_alive() for w in it2._workers)
    assert [r[:4] for b in e1 for r in b] == [r[:4] for b in e2 for r in b]  # ids, seeds, init_fn state kept
    assert len(e1) == 2
    dl._iterator._shutdown_workers()
    assert not any(w.is_alive() for w in it1._workers)


class Shard(fud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = fud.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


def test_iterable_dataset_sharded_in_workers():
    assert [b.tolist() for b in DataLoader(Shard(9), batch_size=2)] == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
    out = [b.tolist() for b in DataLoader(Shard(9), batch_size=2, num_workers=2)]
    assert out == [[0, 2], [1, 3], [4, 6], [5, 7], [8]]  # workers alternate; each ends once
    assert list(DataLoader(Shard(5), batch_size=None, num_workers=2)) == [0, 1, 2, 3, 4]  # no batching: ints
    assert [b.tolist() for b in DataLoader(Shard(9), batch_size=2, num_workers=2, drop_last=True)] == out[:4]
    dl = DataLoader(Shard(9), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in dl] == out and [b.tolist() for b in dl] == out
    dl._iterator._shutdown_workers()


def test_a_worker_ending_mid_write_does_not_stall_the_others(monkeypatch):
    # a worker whose iterable ended exited without waiting for its queue's feeder thread: when that thread was
    # still inside a write, the queue's write lock (shared by all workers) stayed taken and the other worker's
    # results never came (a silent hang, in about one epoch of 50 here). Here the workers' writes hold the lock
    # a while after the result is readable, so the main process ends the first worker mid-write every time.
    from multiprocessing import connection
    send, parent = connection.Connection.send_bytes, os.getpid()

    def slow(self, *a, **k):
        send(self, *a, **k)
        if os.getpid() != parent:
            time.sleep(0.15)
    monkeypatch.setattr(connection.Connection, "send_bytes", slow)
    out = [b.tolist() for b in DataLoader(Shard(9), batch_size=2, num_workers=2, timeout=10)]
    assert out == [[0, 2], [1, 3], [4, 6], [5, 7], [8]]


class MakesTensor(fud.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return ft.tensor([i])


class Calls(fud.Dataset):
    def __init__(self, fn):
        self.fn = fn

    def __len__(self):
        return 1

    def __getitem__(self, i):
        return self.fn()


# creation functions work in a worker (NumPy-backed worker tensors, PyTorch's dtypes); random ones raise
CREATORS = {"tensor": (lambda: ft.tensor([1]), [[1]], "int64"), "zeros": (lambda: ft.zeros(3), [[0.0] * 3], "float32"),
            "full": (lambda: ft.full((2,), 1.0), [[1.0, 1.0]], "float32"),
            "arange": (lambda: ft.arange(3), [[0, 1, 2]], "int64"),
            "from_numpy": (lambda: ft.from_numpy(np.ones(2)), [[1.0, 1.0]], "float64")}
RANDOM = {"randn": lambda: ft.randn(3), "randperm": lambda: ft.randperm(4)}


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_creating_facade_tensors_in_worker(name):
    fn, want, dtype = CREATORS[name]
    fn()  # warm: its jitted kernel is cached in the parent, and inherited by the forked worker
    (batch,) = list(DataLoader(Calls(fn), num_workers=1, timeout=30))
    assert isinstance(batch, ft.Tensor) and batch.tolist() == want and str(batch.dtype) == f"torch.{dtype}"


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_facade_tensors_in_worker_raise(name):
    fn = RANDOM[name]
    fn()
    with pytest.raises(RuntimeError, match="functorch_lite tensors cannot be created or used inside a DataLoader "
                                           "worker process"):
        list(DataLoader(Calls(fn), num_workers=1, timeout=30))


def test_facade_tensor_in_worker_is_a_clear_error():
    got = list(DataLoader(MakesTensor(), num_workers=1))  # (torch.tensor in __getitem__: a worker tensor)
    assert [b.tolist() for b in got] == [[[0]], [[1]]] and got[0].dtype == ft.int64
    x = ft.arange(4)

    class Local(fud.Dataset):  # unpicklable: reaches the forked worker as is, holding a real tensor
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return x[i] + 1
    with pytest.raises(RuntimeError, match="Return NumPy arrays or Python numbers"):
        list(DataLoader(Local(), num_workers=1))

    class LocalNumpy(fud.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i * 2
    assert [b.tolist() for b in DataLoader(LocalNumpy(), batch_size=2, num_workers=1)] == [[0, 2], [4]]
    assert not fud.in_worker()


def test_worker_init_fn_exception_reported():
    def bad_init(worker_id):
        raise ValueError(f"init {worker_id}")
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 0"):
        list(DataLoader(Items(2), num_workers=1, worker_init_fn=bad_init))


def test_prefetch_factor_bounds_in_flight_tasks():
    it = iter(DataLoader(Items(20), batch_size=1, num_workers=2, prefetch_factor=1))
    assert it._send_idx == 2 and it._tasks_outstanding == 2
    next(it)
    assert it._tasks_outstanding <= 2
    del it


def test_spawn_context_and_pin_memory():
    """PyTorch warns that pin_memory does nothing without an accelerator (and is silent on a GPU machine)."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = list(DataLoader(td(), batch_size=5, num_workers=2, multiprocessing_context="spawn", pin_memory=True))
    msgs = [str(w.message) for w in caught if "'pin_memory' argument is set as true" in str(w.message)]
    assert len(msgs) == (0 if ft.cuda.is_available() else 1), msgs
    assert as_py(out) == as_py(list(DataLoader(td(), batch_size=5)))


def test_shuffle_with_workers_reproducible():
    def run():
        return [b.tolist() for b in DataLoader(Items(6), batch_size=3, shuffle=True, num_workers=2,
                                               generator=ft.Generator().manual_seed(3), collate_fn=_ys)]
    a = run()
    assert a == run() and sorted(sum(a, [])) == list(range(6))


def _ys(batch):
    return np.array([s["y"] for s in batch])
