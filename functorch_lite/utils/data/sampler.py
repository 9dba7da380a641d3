"""Samplers (torch.utils.data.sampler): index orders for map-style datasets, main process only.

Random samplers draw from a facade ``Generator`` (JAX PRNG), so the orders differ from PyTorch's,
but the contract is PyTorch's: a seeded generator (or ``functorch_lite.manual_seed``) makes them
reproducible, each ``__iter__`` advances the state (a new order per epoch), and
``list(RandomSampler(ds, generator=g))`` equals ``randperm(len(ds), generator=g')`` for ``g'``
seeded like ``g`` (DATA-24b).
"""
from __future__ import annotations

import itertools
from typing import Any, Generic, Iterable, Iterator, Sequence, Sized, TypeVar

import numpy as np


def _generator(generator):
    from ... import random as _rng
    return generator if generator is not None else _rng.default_generator


# (how PyTorch's samplers call these ops: the argument parser's "got (...)" for a generator of the wrong type;
# the signatures it lists are the ops' own, ``ops.creation._SIGS``)
_GOT = {"randperm": "({n}, generator={})", "randint": "(generator={}, dtype=torch.dtype, size=tuple, high=int, )",
        "random_": "(generator={}, )"}


def check_generator(generator, op: str, n: Any = 0, none_name: str = "torch._C.Generator") -> None:
    """PyTorch's TypeError for a ``generator=`` that is not a ``torch.Generator`` (``None`` is accepted), as the
    op that receives it (``randperm``, ``randint``, ``random_`` or ``multinomial``) reports it; for ``randperm``
    also for an ``n`` that is not an integer (``random_split`` with lengths like ``[3.0, 7.0]``). ``none_name``:
    how a ``None`` generator is named then (``NoneType`` where the caller passed None in place of PyTorch's
    ``default_generator``)."""
    from ... import Generator
    from ...ops.view_ops import _tname as _type_name  # (the argument parser's type names)
    gen_ok = generator is None or isinstance(generator, Generator)
    n_ok = isinstance(n, (int, np.integer))
    if gen_ok and n_ok:
        return
    if op == "multinomial":
        raise TypeError(f"multinomial(): argument 'generator' must be torch.Generator, not {_type_name(generator)}")
    from ...ops.creation import _SIGS
    gen_name = _type_name(generator) if not gen_ok else none_name if generator is None else "torch._C.Generator"
    raise TypeError(f"{op}() received an invalid combination of arguments - got "
                    f"{_GOT[op].format(gen_name, n=_type_name(n))}, but expected one of:"
                    + "".join(f"\n * ({sig}" for sig in _SIGS[op]) + "\n")


def draw_seed(generator=None) -> int:
    """One 63-bit seed drawn from ``generator`` (default: the global generator); advances it.

    Plays the part of PyTorch's ``torch.empty((), dtype=torch.int64).random_(generator=g).item()`` (and raises
    its TypeError for a ``generator`` that is not a Generator)."""
    check_generator(generator, "random_")
    import jax
    import jax.numpy as jnp
    bits = jax.random.bits(_generator(generator).next_key(), (), jnp.uint64)
    return int(np.asarray(bits)) >> 1


_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Base class: subclasses yield indices (or lists of indices) from ``__iter__``. As in PyTorch 2.13 it has
    no ``__init__`` of its own: ``Sampler(data_source)`` and ``super().__init__(data_source)`` raise TypeError."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation per epoch, or ``num_samples`` draws with replacement.

    >>> import functorch_lite as torch
    >>> sorted(RandomSampler(range(4), generator=torch.Generator().manual_seed(0)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        from ... import Generator, randint, randperm, int64
        n = len(self.data_source)
        check_generator(self.generator, "randint" if self.replacement else "randperm")
        if self.generator is None:
            generator = Generator().manual_seed(draw_seed(None))
        else:
            generator = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), dtype=int64, generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), dtype=int64, generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a new one per epoch)."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        from ... import randperm
        check_generator(self.generator, "randperm")
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (``torch.multinomial``)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        from ... import as_tensor, float64
        weights_tensor = as_tensor(weights, dtype=float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        yield from _multinomial(self.weights.numpy(), self.num_samples, self.replacement, self.generator)

    def __len__(self) -> int:
        return self.num_samples


def _multinomial(w: np.ndarray, n: int, replacement: bool, generator) -> list:
    """``torch.multinomial`` on a 1-d weight vector, with its errors in its order; NumPy draws seeded from
    ``generator``."""
    check_generator(generator, "multinomial")
    if not replacement and n > w.shape[0]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if not replacement or n == 1:  # PyTorch's fast path checks the whole vector at once
        if w.shape[0] == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if not (w.max() < np.inf and w.min() >= 0):  # (NaN fails both)
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    else:  # the with-replacement kernel checks entry by entry: `>= 0` (NaN fails it), then finiteness
        neg, inf = ~(w >= 0), ~np.isfinite(w)
        first_neg = int(np.argmax(neg)) if neg.any() else w.shape[0]
        first_inf = int(np.argmax(inf)) if inf.any() else w.shape[0]
        if first_neg < w.shape[0] and first_neg <= first_inf:
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if first_inf < w.shape[0]:
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    if w.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = np.random.default_rng(draw_seed(generator))
    if replacement:
        return rng.choice(w.shape[0], size=n, replace=True, p=w / w.sum()).tolist()
    # Efraimidis-Spirakis: key u^(1/w), largest first; zero weights come last (as PyTorch)
    with np.errstate(divide="ignore"):
        keys = rng.random(w.shape[0]) ** (1.0 / w)
    return np.argsort(-keys, kind="stable")[:n].tolist()


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*([sampler_iter] * self.batch_size)):
                yield [*batch]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the index stream for an IterableDataset."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None
