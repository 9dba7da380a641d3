"""``torch.distributed`` without process groups: the guards training code writes take their single-process branch,
and the uninitialized calls raise real torch's errors (type and message)."""
from __future__ import annotations

import pytest

import functorch_lite as ft

from _parity import same


@pytest.mark.parametrize("name", ["get_rank", "get_world_size", "barrier", "get_backend", "new_group"])
def test_uninitialized_calls_raise_torchs_error(name):
    same(lambda L: getattr(L.distributed, name)())


def test_all_reduce_before_init():
    same(lambda L: L.distributed.all_reduce(L.ones(1)))


def test_guards():
    same(lambda L: (L.distributed.is_initialized(), L.distributed.is_torchelastic_launched()))
    assert ft.distributed.is_available() is False  # (a build without distributed support; torch's CPU wheel has it)
    assert not (ft.distributed.is_nccl_available() or ft.distributed.is_gloo_available())


def test_rank_zero_logging_idiom():
    def is_main_process(L):
        d = L.distributed
        return not (d.is_available() and d.is_initialized()) or d.get_rank() == 0
    assert is_main_process(ft)


def test_init_process_group_is_refused_by_name():
    with pytest.raises(RuntimeError, match="init_process_group: functorch_lite has no process groups"):
        ft.distributed.init_process_group("gloo", rank=0, world_size=1)
