"""``torch.utils.data``: datasets, samplers, collation and the DataLoader (spec §13).

Worker processes (``num_workers > 0``) never run JAX: they produce NumPy batches that the main
process turns into tensors (see ``dataloader.py`` and ``_worker_mode.py``).
"""
from ._worker import WorkerInfo, get_worker_info
from ._worker_mode import in_worker
from .collate import default_collate, default_convert
from . import _utils  # noqa: F401  (torch.utils.data._utils.collate / .worker)
from .dataloader import DataLoader
from .distributed import DistributedSampler
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate",
    "default_convert", "get_worker_info", "in_worker", "random_split",
]
