"""Datasets (spec §13.2): ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``StackDataset``,
``ConcatDataset``, ``ChainDataset``, ``Subset``, ``random_split`` — PyTorch's behaviour and errors.

Inside a DataLoader worker the tensors a dataset holds are NumPy-backed worker tensors (``TensorArray``, see
``dataloader.py``): ``TensorDataset`` only indexes them and reads ``size(0)``, so it works unchanged on either.
"""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import Any, Generic, Iterable, Iterator, Sequence, TypeVar

from ..._warn import user_stacklevel as _user_stacklevel

_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map-style dataset: subclasses implement ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A stream of samples: subclasses implement ``__iter__`` (abstract, as PyTorch's: ``typing.Iterable``'s
    ``__iter__`` is left undefined, so a subclass without one cannot be instantiated). In workers, shard with
    :func:`get_worker_info`."""

    def __add__(self, other: Dataset) -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[index] for t in tensors)``; all tensors share their first dimension.

    >>> import functorch_lite as torch
    >>> TensorDataset(torch.zeros(3, 2), torch.arange(3))[1]
    (tensor([0., 0.]), tensor(1))
    """

    def __init__(self, *tensors) -> None:
        # ``t.size(0)`` as PyTorch: a NumPy array fails ('int' object is not callable), a list has no ``size``
        if any(_size0(tensors[0]) != _size0(t) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return _size0(self.tensors[0])


def _size0(t) -> int:
    """``t.size(0)`` — a NumPy array's ``size`` is an int ('int' object is not callable), a list has none — with
    PyTorch's error for a 0-d tensor."""
    size = t.size
    if callable(size) and getattr(t, "ndim", None) == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return size(0)


class StackDataset(Dataset):
    """Zip datasets: samples are tuples (positional) or dicts (keywords)."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                                 "input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets: Any = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(d) for d in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """A batch of samples, through each child's ``__getitems__`` where it has one (as PyTorch)."""
        def column(dataset) -> list:
            if callable(getattr(dataset, "__getitems__", None)):
                items = dataset.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch."
                                     f" Expected {len(indices)}, got {len(items)}")
                return list(items)
            return [dataset[idx] for idx in indices]

        if isinstance(self.datasets, dict):
            dict_batch: list = [{} for _ in indices]
            for k, dataset in self.datasets.items():
                for data, d_sample in zip(column(dataset), dict_batch):
                    d_sample[k] = data
            return dict_batch
        list_batch: list = [[] for _ in indices]
        for dataset in self.datasets:
            for data, t_sample in zip(column(dataset), list_batch):
                t_sample.append(data)
        return [tuple(sample) for sample in list_batch]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Datasets one after the other (``ds1 + ds2``)."""

    @staticmethod
    def cumsum(sequence: Iterable) -> list:
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    @property
    def cummulative_sizes(self) -> list:
        """Deprecated alias of ``cumulative_sizes`` (FutureWarning, as PyTorch)."""
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`", FutureWarning, stacklevel=2)
        return self.cumulative_sizes

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Iterable datasets chained one after the other."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _length_value(x):
    """An element of ``lengths``: a 0-d floating tensor stays one (the fractions are summed and multiplied as
    tensors, in their dtype, as PyTorch's are), an integral one is its Python number; Python and NumPy numbers are
    kept (NumPy scalars keep NumPy's float32 arithmetic, which PyTorch sees too)."""
    from ..._tensor.tensor import Tensor
    if isinstance(x, Tensor) and x.dim() == 0:
        return x.detach() if x.is_floating_point() else x.item()
    return x


class _DefaultGenerator:
    """``random_split``'s default ``generator`` (PyTorch's is ``torch.default_generator``): the global one."""

    def __repr__(self) -> str:
        return "default_generator"


_DEFAULT_GENERATOR = _DefaultGenerator()


def random_split(dataset: Dataset, lengths: Sequence, generator=_DEFAULT_GENERATOR) -> list:
    """Split into non-overlapping random ``Subset`` s of the given lengths, or fractions summing to 1
    (remainders go round-robin), using ``generator`` (default: the global one). The fractions are summed and
    multiplied in their own type, as PyTorch: float32 fractions (a float32 tensor, NumPy float32 values) in
    float32 — ``random_split(range(10), torch.tensor([0.3, 0.7]))`` splits 3 / 7.

    >>> [len(s) for s in random_split(range(10), [0.7, 0.3])]
    [7, 3]
    """
    from ... import randperm
    from .sampler import check_generator
    lengths = [_length_value(x) for x in lengths]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=_user_stacklevel())
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    n = sum(lengths)
    explicit_none = generator is None
    if generator is _DEFAULT_GENERATOR:
        generator = None
    check_generator(generator, "randperm", n, none_name="NoneType" if explicit_none else "torch._C.Generator")
    indices = randperm(n, generator=generator).tolist()
    return [Subset(dataset, indices[offset - length: offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
