"""``utils.data.DistributedSampler`` against real torch: the same indices per rank without shuffling (padding,
``drop_last``), the same lengths and errors; with shuffling, the contract (every replica the same permutation for
an epoch, the replicas together cover the dataset, a new order per ``set_epoch``, reproducible per seed), since
the random streams differ by design."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

from _parity import same

SIZES = [(10, 3), (9, 3), (2, 5), (7, 1), (1, 4)]


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n,replicas", SIZES)
def test_unshuffled_indices_per_rank(n, replicas, drop_last):
    def run(L):
        ds = L.utils.data.TensorDataset(L.arange(n))
        out = []
        for rank in range(replicas):
            s = L.utils.data.DistributedSampler(ds, num_replicas=replicas, rank=rank, shuffle=False,
                                                drop_last=drop_last)
            out.append((list(s), len(s), s.num_samples, s.total_size))
        return out
    assert same(run)[0] == "ok"


def test_dataloader_batches_of_a_rank():
    def run(L):
        ds = L.utils.data.TensorDataset(L.arange(11.0), L.arange(11))
        s = L.utils.data.DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
        return [(x.tolist(), y.tolist()) for x, y in L.utils.data.DataLoader(ds, batch_size=4, sampler=s)]
    assert same(run) == ("ok", [([1.0, 3.0, 5.0, 7.0], [1, 3, 5, 7]), ([9.0, 0.0], [9, 0])])


@pytest.mark.parametrize("rank,replicas", [(3, 3), (-1, 2), (5, 1)])
def test_invalid_rank(rank, replicas):
    assert same(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=replicas, rank=rank))[0] == \
        "ValueError"


def test_shuffle_contract():
    ds = list(range(23))

    def epoch(seed, e, replicas=4):
        per_rank = []
        for rank in range(replicas):
            s = ft.utils.data.DistributedSampler(ds, num_replicas=replicas, rank=rank, seed=seed)
            s.set_epoch(e)
            per_rank.append(list(s))
        return per_rank

    first = epoch(0, 0)
    assert all(len(r) == 6 for r in first)
    # rank r takes positions r, r + 4, ... of one permutation padded with its own first indices
    merged = [first[i % 4][i // 4] for i in range(24)]
    assert sorted(merged[:23]) == ds and merged[23] == merged[0]
    assert merged[:23] != ds                                     # shuffled
    assert epoch(0, 0) == first                                  # the same for the same seed and epoch
    second = epoch(0, 1)
    assert second != first                                       # set_epoch: a new order
    assert sorted([second[i % 4][i // 4] for i in range(24)][:23]) == ds
    assert epoch(5, 0) != first                                  # another seed, another order
    s = ft.utils.data.DistributedSampler(ds, num_replicas=4, rank=0)
    assert list(s) == list(s)                                    # no set_epoch: the same order each time


def test_shuffle_is_the_facade_randperm_of_seed_plus_epoch():
    s = ft.utils.data.DistributedSampler(list(range(9)), num_replicas=1, rank=0, seed=3)
    s.set_epoch(4)
    g = ft.Generator()
    g.manual_seed(7)
    assert list(s) == ft.randperm(9, generator=g).tolist()
    assert np.array_equal(sorted(s), np.arange(9))


def test_without_rank_asks_the_process_group():
    # the facade's torch.distributed is a build without it (is_available() False): PyTorch's own check then
    with pytest.raises(RuntimeError, match="^Requires distributed package to be available$"):
        ft.utils.data.DistributedSampler(range(4))
    with pytest.raises(RuntimeError, match="^Requires distributed package to be available$"):
        ft.utils.data.DistributedSampler(range(4), num_replicas=2)
    assert ft.utils.data.distributed.DistributedSampler is ft.utils.data.DistributedSampler
    assert torch.utils.data.distributed.DistributedSampler is torch.utils.data.DistributedSampler
