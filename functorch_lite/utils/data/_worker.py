"""What runs inside a DataLoader worker process: NumPy and the user's Python, never JAX.

The main process sends ``(task_idx, indices)`` on each worker's index queue; the worker fetches the
samples, collates them with the NumPy collate path and puts ``(task_idx, result)`` on the shared
data queue. Facade tensors in the dataset, ``collate_fn`` and ``worker_init_fn`` are replaced by
NumPy-backed worker tensors (``_worker_tensor.TensorArray``) when they are pickled for the workers
(:func:`pack`), and :func:`worker_loop` installs the JAX guard first thing (``_worker_mode``) and the
worker-side creation functions (``torch.tensor`` & co., ``_worker_tensor.install``).
"""
from __future__ import annotations

import io
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _worker_mode, _worker_tensor
from .collate import stand_in

MP_STATUS_CHECK_INTERVAL = 0.2  # seconds between liveness checks (main process and workers)


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """``get_worker_info()`` in a worker, as PyTorch 2.13's frozen dataclass: ``id``, ``num_workers``, ``seed``,
    this worker's ``dataset`` copy, ``rng`` (``None``) and ``worker_method`` (``"multiprocessing"``). Assigning a
    field raises ``dataclasses.FrozenInstanceError``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's :class:`WorkerInfo`; ``None`` in the main process (DATA-38)."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: int | None = None


class KeyErrorMessage(str):
    """A str whose repr is itself, so a re-raised KeyError shows the traceback readably."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, sent from a worker and re-raised in the main process."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        """Raise ``exc_type("Caught X in DataLoader worker process i.\\nOriginal Traceback...")``."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


# ---- sending the dataset to workers --------------------------------------------------------------
class _WorkerPickler(pickle.Pickler):
    """Pickles facade tensors as NumPy stand-ins (their values, their dtype), so workers never see JAX."""

    def reducer_override(self, obj):
        from ..._tensor.tensor import Tensor
        if isinstance(obj, Tensor):
            return stand_in, (np.array(obj.detach()._host()),)
        return NotImplemented


def pack(objs: Any) -> bytes:
    """Pickle ``objs`` for a worker, tensors turned into NumPy stand-ins."""
    buf = io.BytesIO()
    _WorkerPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(objs)
    return buf.getvalue()


# ---- fetchers (shared with the single-process iterator) ----------------------------------------------
class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, \
            drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            fast = _tensor_dataset_batch(self.dataset, self.collate_fn, possibly_batched_index)
            if fast is not None:
                return fast
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


def _tensor_dataset_batch(dataset, collate_fn, indices):
    """A TensorDataset of facade tensors with the default collate: one index op per tensor gives exactly
    ``default_collate([dataset[i] for i in indices])`` (a list of stacked rows) without a dispatch per sample.
    None when the fast path does not apply (other datasets, custom collate, workers' NumPy stand-ins)."""
    from .collate import collate_tensor_fn, default_collate, default_collate_fn_map, fn_for
    from .dataset import TensorDataset
    from ..._tensor.tensor import Tensor
    if type(dataset) is not TensorDataset or collate_fn is not default_collate or not indices:
        return None
    if not all(isinstance(t, Tensor) and not t.requires_grad for t in dataset.tensors):
        return None
    # (a function registered in default_collate_fn_map for their type collates them instead)
    if not all(fn_for(t, default_collate_fn_map) is collate_tensor_fn for t in dataset.tensors):
        return None
    from ... import tensor as _tensor
    idx = _tensor([int(i) for i in indices], device=dataset.tensors[0].device)
    return [t[idx.to(t.device)] for t in dataset.tensors]


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, \
            drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(iterable: bool, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# ---- the worker process ---------------------------------------------------------------------------
def _seed_worker(base_seed: int, worker_id: int) -> int:
    seed = base_seed + worker_id
    random.seed(seed)
    np.random.seed([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32])
    mod = sys.modules.get("functorch_lite.random")
    if mod is not None:  # stores the seed only (the key is made lazily, never in a worker)
        mod.default_generator._seed = seed % (2 ** 64)
        mod.default_generator._key = None
    return seed


def _send(data_queue, idx: Any, data: Any, worker_id: int) -> None:
    """Pickle here (not in the queue's feeder thread) so that an unpicklable result is reported."""
    try:
        blob = pickle.dumps((idx, data), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        if not isinstance(data, ExceptionWrapper):
            data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        try:
            blob = pickle.dumps((idx, data))
        except Exception:  # the exception class itself cannot be pickled (a local class)
            data.exc_type = RuntimeError
            blob = pickle.dumps((idx, data))
    data_queue.put(blob)


def worker_loop(iterable: bool, payload: list, forked: bool, index_queue, data_queue, done_event,
                auto_collation: bool, drop_last: bool, base_seed: int, worker_id: int, num_workers: int,
                parent_pid: int) -> None:
    """Serve index batches until ``None`` arrives, ``done_event`` is set or the parent process dies.

    ``payload``: (packed, object) for the dataset, collate_fn and worker_init_fn — packed ones are
    :func:`pack` bytes. A forked worker is guarded against JAX before anything else runs; a spawned
    one after unpickling (which may import the user's modules, and functorch_lite with them)."""
    global _worker_info
    _worker_mode.set_in_worker(True)
    if forked:
        _worker_mode.install_guard()
        _worker_tensor.install()
    init_exception = None
    fetcher = None
    try:
        dataset, collate_fn, init_fn = (pickle.loads(obj) if packed else obj for packed, obj in payload)
        _worker_mode.install_guard()
        _worker_tensor.install()
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    iteration_end = False
    while True:
        try:
            r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
        except queue.Empty:
            if os.getppid() != parent_pid or done_event.is_set():
                break
            continue
        except KeyboardInterrupt:
            continue
        if isinstance(r, _ResumeIteration):
            _send(data_queue, r, None, worker_id)
            iteration_end = False
            if init_exception is None:
                try:
                    fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                except Exception:
                    init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            continue
        if r is None:
            break
        if iteration_end:
            continue
        idx, index = r
        if init_exception is not None:
            data: Any = init_exception
            init_exception = None
        else:
            try:
                data = fetcher.fetch(index)
            except Exception as e:
                if isinstance(e, StopIteration) and iterable:
                    data = _IterableDatasetStopIteration(worker_id)
                    iteration_end = True
                else:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        _send(data_queue, idx, data, worker_id)
        del data
    if done_event.is_set():  # shutting down: nothing more is read, so exiting must not wait on the queue
        data_queue.cancel_join_thread()
    # else (an IterableDataset's end, then None) the exit waits for the queue's feeder thread to finish its
    # last write: the queue's write lock is shared by every worker, and a process that died holding it would
    # stall the others' results forever (the main process then waits with no error)
    data_queue.close()
